"""Geometrius as the referee applies it (``shared/rules/geometrius.md``): G1-G12.

## Geometrius

Shape tokens lie on a field, a sparse grid of positions ``(row, col)`` (the 4 × 4 start is
rows 0-3, cols 0-3, row 0 on top; pushes can take positions below 0 or past 3). Players put
chips of their colour on tokens by playing condition cards the token's polygon satisfies,
and push their own tokens into the field. Colours: red, blue, green, yellow, purple, white,
unless ``"settings": {"colour_names": [six names]}`` names the six chips otherwise (a setting
of the rules file): one name per physical chip colour, in that order, and states, records and
scores then use the table's names.
The shapes and cards come from a catalogue (``rules/data/geometrius-catalogue.json`` unless
a record brings its own), where every card is a condition on a polygon's vertices.

State (``read`` / ``score``)::

    {"game": "geometrius",
     "tokens": [{"row": 0, "col": 1, "shape": "Q03", "stack": ["red", "blue"]}, ...]}

``stack`` runs bottom to top (omitted or ``[]`` when empty). Optional per token:
``"stack_height_known": false`` when only the top chip was seen (the score counts the chips
listed and says so) and ``"blocked": true`` for a token blocked by two chips at once (G5)
that holds fewer than four; four or more chips always block (G4).

Record (``check``)::

    {"game": "geometrius",
     "players": [{"name": "Ann", "colours": ["red"]}, {"name": "Bob", "colours": ["blue"]}],
     "field": [["T01", "Q03", "P02", "H01"], ["T05", "Q01", "P06", "H03"],
               ["T02", "Q10", "P01", "X01"], ["T08", "Q05", "H08", "X03"]],
     "hands": {"red": {"tokens": ["X02", "Q02", "T03", "P04"], "cards": ["C08", "C20", "C13", "C03"]}},
     "moves": [
       {"colour": "red", "actions": [
          {"cards": ["C08"], "at": [[1, 1]]},
          {"push": "X02", "row": 3, "from": "left"}]},
       {"colour": "blue", "hand": {"cards": ["C20", "C12", "C11", "C20"]}, "actions": [
          {"cards": ["C20"], "at": [[0, 2], [2, 3]]}]},
       {"colour": "red", "actions": [{"cards": ["C20", "C11"], "at": [[1, 2]]}]},
       {"colour": "blue", "actions": []}]}

- ``field``: the starting 4 × 4 field, row 0 first, as catalogue token ids (required in a record).
- A move is one turn (G10: four each, in the order of ``players``). Its ``actions`` are
  judged in the order listed, each against the field as it is at that moment:
  - ``{"cards": [card], "at": [[r, c]]}``: one chip; occupies an empty token (G2) or
    captures a stack (G3);
  - ``{"cards": [card], "at": [[r, c], [r2, c2]]}``: one card covering two empty tokens, a
    chip on each (G1);
  - ``{"cards": [card, card2], "at": [[r, c]]}``: two chips at once, blocking the token (G5);
  - ``{"push": token, "row": r, "from": "left" | "right"}`` or
    ``{"push": token, "col": c, "from": "top" | "bottom"}``: the token enters that line at
    that end, taking the end token's place, and every token of the line (gaps included)
    moves one step away from it with its chips (G7).
  An empty ``actions`` list is a turn that does nothing; it still counts.
- Hands are optional. ``hands`` gives starting hands; a move's ``hand`` gives the mover's
  hand at the start of that turn (``cards`` and/or ``tokens``). Where a hand is known, the
  cards played and the token pushed must come from it. Tokens are tracked through pushes (a
  hand is never refilled with tokens); cards are refilled from an unseen pile, so a hand's
  cards are unknown after a turn that played any, until a move states them again.
- ``"settings": {"catalogue": {...}}`` replaces the default catalogue (same format), and
  ``"colour_names": ["red", "blue", "green", "yellow", "orange", "white"]`` renames the chips
  (here the purple ones): every colour in the players, hands, moves and stacks is then one of
  these names.

Reason codes: those of the rules file, and ``unknown_card``, ``card_not_in_hand``,
``shared_card_not_empty`` (G1), ``no_token`` (G2), ``empty_line``, ``token_not_in_hand``,
``unknown_token`` (G7), ``no_turns_left`` (G10) and ``wrong_turn``. A move is judged and
then carried out as far as it physically can be (the record says it happened), so one
mistake is flagged once. The score (G11, G12) names the number of star tokens on the final
field when the leaders tie: the rulebook's last tiebreak is a race to name it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import parse_json
from .placement import Reason, Turn, Violation
from .polygon import Card, Predicate, Shape
from .scoring import ColourScore, Flag, OneColourEach, ScoreSheet, Tiebreak, Undecided, rank_players

# The six physical chip colours by their default names: vision reads chips into these, and a
# setup's ``colour_names`` renames them, one for one, in this order.
COLOURS = ("red", "blue", "green", "yellow", "purple", "white")


def colour_name(colour: str) -> str:
    """A colour as messages and default players name it: the word, capitalised."""
    return colour[:1].upper() + colour[1:]


COLOUR_NAMES = {c: colour_name(c) for c in COLOURS}
COLOUR_NAME_MAX = 20  # characters in a table's name for a chip colour (check_colour_names)
VARIANTS = ("standard",)
FIELD_SIZE = 4
HAND_SIZE = 4
TURNS = 4  # G10
CHIPS_PER_TURN = 2  # G6
BLOCKING_HEIGHT = 4  # G4: the fourth chip blocks
HIGHEST_STACK = BLOCKING_HEIGHT + 1  # G5: two chips on three
UNKNOWN_SHAPE = "unknown"  # a token the camera saw but whose polygon it could not make out
LONGEST_LINE = 5  # G7: a push never makes a line of six
SIDES = ((-1, 0), (1, 0), (0, -1), (0, 1))
ENDS = {"left": "row", "right": "row", "top": "col", "bottom": "col"}
LINE_NAMES = {"row": "row", "col": "column"}

Pos = tuple[int, int]

REASONS: Mapping[str, Reason] = {
    "card_does_not_match": Reason("card_does_not_match", "G1", "card {card} ({text}) does not fit {shape} at {pos}"),
    "unknown_card": Reason("unknown_card", "G1", "the catalogue has no card {card}"),
    "card_not_in_hand": Reason("card_not_in_hand", "G1", "{colour} does not hold {cards}"),
    "shared_card_not_empty": Reason("shared_card_not_empty", "G1",
                                    "one card covers two tokens only when both are empty; {pos} holds chips"),
    "no_token": Reason("no_token", "G2", "no token lies at {pos}"),
    "no_adjacent_own_top": Reason("no_adjacent_own_top", "G3", "no token beside {pos} has {colour}'s chip on top"),
    "stack_too_high": Reason("stack_too_high", "G3", "{pos} holds {height} chips; a new chip goes on three at most"),
    "top_is_own": Reason("top_is_own", "G3", "{colour}'s own chip is on top at {pos}"),
    "token_blocked": Reason("token_blocked", "G3", "the token at {pos} is blocked"),
    "too_many_chips": Reason("too_many_chips", "G6", "{colour} put down {count} chips; two at most per turn"),
    "line_too_long": Reason("line_too_long", "G7", "{lines} reached six tokens; only a line of four or fewer "
                                                   "may be pushed"),
    "disconnected_field": Reason("disconnected_field", "G7", "shifted token(s) at {places} touch no other token"),
    "second_modification": Reason("second_modification", "G7", "the field may be modified once per turn"),
    "empty_line": Reason("empty_line", "G7", "{line} holds no token to push"),
    "token_not_in_hand": Reason("token_not_in_hand", "G7", "{colour} cannot push {shape}: {why}"),
    "unknown_token": Reason("unknown_token", "G7", "the catalogue has no token {shape}"),
    "wrong_turn": Reason("wrong_turn", "turn", "{colour} moved out of turn: it was {expected}'s turn"),
    "no_turns_left": Reason("no_turns_left", "G10", "{colour} has already made its four turns"),
}


def violation(code: str, cells: Iterable[Pos] = (), rule: str | None = None, **fmt) -> Violation:
    """A violation with the rules file's code; ``rule`` names the rule quoted when a
    condition is shared (a block checks G3's conditions under G5)."""
    r = REASONS[code]
    return Violation(r.code, rule or r.rule, r.text.format(**fmt), tuple(cells))


def where(pos: Pos) -> str:
    return f"({pos[0]}, {pos[1]})"


# --- the catalogue ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Catalogue:
    """The shapes the tokens show and the condition cards, by id."""

    shapes: Mapping[str, Shape]
    cards: Mapping[str, Card]
    about: str = ""

    def accepts(self, card: str, shape: str) -> bool:
        """G1: the card's condition holds for the shape (an unknown id never does)."""
        return card in self.cards and shape in self.shapes and self.shapes[shape].satisfies(self.cards[card])

    def to_json(self) -> dict:
        return {
            "about": self.about,
            "tokens": [{"id": s.id, "star": s.star, "name_ru": s.name_ru, "vertices": [list(v) for v in s.vertices]}
                       | ({"measured": True} if s.measured else {}) for s in self.shapes.values()],
            "cards": [{"id": c.id, "text_ru": c.text_ru, "text_en": c.text_en,
                       "predicate": {"feature": c.predicate.feature, "op": c.predicate.op, "value": c.predicate.value},
                       "matches": [s for s in self.shapes if self.accepts(c.id, s)]} for c in self.cards.values()],
        }


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    """The packaged default catalogue, or a user's edited or extended copy at ``path``.

    Raises ValueError with a one-line reason when the file is unreadable, not JSON, or
    inconsistent (see :func:`parse_catalogue`).
    """
    if path is None:
        return _default_catalogue()
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the catalogue {path}: {getattr(e, 'strerror', None) or e}") from None
    return _catalogue_from_text(text, str(path))


@lru_cache(maxsize=None)
def _default_catalogue() -> Catalogue:
    text = resources.files("rules").joinpath("data/geometrius-catalogue.json").read_text("utf-8")
    return _catalogue_from_text(text, "the default catalogue")


def _catalogue_from_text(text: str, name: str) -> Catalogue:
    doc = parse_json(text, name)
    try:
        return parse_catalogue(doc)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def parse_catalogue(doc: Any) -> Catalogue:
    """A catalogue document checked against its own geometry.

    Every token must be a simple polygon whose ``star`` (optional) says it is not convex;
    every card a known feature compared with a value of the right kind; and where a card
    lists the tokens it ``matches``, the list must be exactly those its condition accepts,
    so an edit that breaks a card or a shape is caught when the file is loaded.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("tokens"), list) or not isinstance(doc.get("cards"), list):
        raise ValueError("a catalogue is an object with 'tokens' and 'cards' lists")
    shapes = _by_id(doc["tokens"], _catalogue_shape, "token")
    cards = _by_id(doc["cards"], _catalogue_card, "card")
    for raw, card in zip(doc["cards"], cards.values()):
        if "matches" in raw:
            _check_matches(card, raw["matches"], shapes)
    return Catalogue(shapes, cards, str(doc.get("about", "")))


def _by_id(raws: list, parse: Callable[[Any, int], Any], what: str) -> dict[str, Any]:
    """Catalogue entries parsed in file order and keyed by id; an id listed twice is an error."""
    out: dict[str, Any] = {}
    for i, raw in enumerate(raws):
        entry = parse(raw, i)
        if entry.id in out:
            raise ValueError(f"{what} {entry.id} is listed twice")
        out[entry.id] = entry
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _catalogue_shape(raw: Any, i: int) -> Shape:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValueError(f"token {i} needs an 'id'")
    name, vertices = raw["id"], raw.get("vertices")
    if not isinstance(vertices, list) or not all(isinstance(v, list) and len(v) == 2 and all(map(_number, v))
                                                 for v in vertices):
        raise ValueError(f"token {name}: 'vertices' must list [x, y] pairs of numbers")
    star = raw.get("star")
    if star is not None and not isinstance(star, bool):
        raise ValueError(f"token {name}: 'star' must be true or false")
    shape = Shape(name, tuple((x, y) for x, y in vertices), bool(star), str(raw.get("name_ru", "")),
                  raw.get("measured") is True)
    try:
        convex = shape.features["convex"]
    except ValueError as e:
        raise ValueError(f"token {name}: {e}") from None
    if star is None:
        return replace(shape, star=not convex)
    if star == convex:
        raise ValueError(f"token {name}: 'star' is {str(star).lower()} but the polygon is "
                         f"{'' if convex else 'not '}convex (a star marks a non-convex polygon)")
    return shape


def _catalogue_card(raw: Any, i: int) -> Card:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValueError(f"card {i} needs an 'id'")
    p = raw.get("predicate")
    if not isinstance(p, dict) or set(p) != {"feature", "op", "value"}:
        raise ValueError(f"card {raw['id']}: 'predicate' must be {{\"feature\", \"op\", \"value\"}}")
    try:
        predicate = Predicate(p["feature"], p["op"], p["value"])
    except ValueError as e:
        raise ValueError(f"card {raw['id']}: {e}") from None
    return Card(raw["id"], predicate, str(raw.get("text_en", "")), str(raw.get("text_ru", "")))


def _check_matches(card: Card, matches: Any, shapes: Mapping[str, Shape]) -> None:
    if not isinstance(matches, list) or not all(isinstance(m, str) for m in matches):
        raise ValueError(f"card {card.id}: 'matches' must list token ids")
    unknown = [m for m in matches if m not in shapes]
    if unknown:
        raise ValueError(f"card {card.id}: 'matches' names unknown token(s) {', '.join(unknown)}")
    fits = {s for s, shape in shapes.items() if shape.satisfies(card)}
    wrong, missed = sorted(set(matches) - fits), sorted(fits - set(matches))
    if wrong or missed:
        parts = ([f"lists {', '.join(wrong)}, which fail(s) it"] if wrong else []) + \
                ([f"omits {', '.join(missed)}, which meet(s) it"] if missed else [])
        raise ValueError(f"card {card.id} ({card.predicate}): 'matches' " + " and ".join(parts))


# --- setup -----------------------------------------------------------------------------------

def check_colour_names(names: Sequence[Any]) -> None:
    """ValueError unless ``names`` are six names, one per chip, that no reader can confuse: a
    name without a letter or digit ("", " ", ".") or two names differing only in case would
    make a stack a guess, and " red" beside "red" looks the same on every page. A name labels
    a chip, a seat and a score row on a tablet: a word or two, so at most
    ``COLOUR_NAME_MAX`` characters."""
    if len(names) != len(COLOURS):
        raise ValueError(f"'colour_names' names the {len(COLOURS)} chip colours ({', '.join(COLOURS)}, "
                         f"in that order), not {len(names)}")
    bad = [n for n in names if not isinstance(n, str) or not any(ch.isalnum() for ch in n)]
    if bad:
        raise ValueError(f"'colour_names': {bad[0]!r} is no colour name (a name needs a letter or digit)")
    long = [n for n in names if len(n) > COLOUR_NAME_MAX]
    if long:
        raise ValueError(f"'colour_names': {long[0][:COLOUR_NAME_MAX]!r}... is longer than "
                         f"{COLOUR_NAME_MAX} characters")
    padded = [n for n in names if n != n.strip()]
    if padded:
        raise ValueError(f"'colour_names': {padded[0]!r} starts or ends with a space")
    twice = sorted(n for n, k in Counter(n.casefold() for n in names).items() if k > 1)
    if twice:
        raise ValueError(f"'colour_names' gives two chip colours the name {twice[0]!r}: each name must differ")


@dataclass(frozen=True)
class Hand:
    """What a player holds, as far as the record tells: None where it does not say."""

    cards: tuple[str, ...] | None = None
    tokens: tuple[str, ...] | None = None

    def to_json(self) -> dict:
        return {k: list(v) for k, v in (("cards", self.cards), ("tokens", self.tokens)) if v is not None}


@dataclass(frozen=True)
class Setup(OneColourEach):
    variant: str = "standard"
    players: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, (colour,)) in turn order
    catalogue: Catalogue = field(default_factory=load_catalogue)
    layout: tuple[tuple[str, ...], ...] | None = None  # the starting 4 × 4 field, row 0 first
    hands: Mapping[str, Hand] = field(default_factory=dict)  # starting hands, by colour
    colour_names: tuple[str, ...] = COLOURS  # the table's names of the six chips, in COLOURS' order

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown Geometrius variant {self.variant!r} (one of {', '.join(VARIANTS)})")
        check_colour_names(self.colour_names)
        colours = [c for _, cs in self.player_list for c in cs]
        if not all(len(cs) == 1 for _, cs in self.player_list):
            raise ValueError("each Geometrius player plays one colour")
        if not 2 <= len(colours) <= len(COLOURS) or len(set(colours)) != len(colours) \
                or not set(colours) <= set(self.colour_names):
            raise ValueError(f"Geometrius is played by 2-6 players, each a different colour of "
                             f"{', '.join(self.colour_names)}")
        dealt = self._check_layout()
        for colour, hand in self.hands.items():
            if colour not in colours:
                raise ValueError(f"a hand is given for {colour!r}, which no player plays")
            self._check_hand(colour, hand, dealt)

    @property
    def default_players(self) -> tuple[tuple[str, tuple[str, ...]], ...]:  # type: ignore[override]
        """The first two colours, as a table that names no players plays."""
        return tuple((colour_name(c), (c,)) for c in self.colour_names[:2])

    @property
    def names(self) -> dict[str, str]:
        """Each colour of this table as messages and default players name it."""
        return {c: colour_name(c) for c in self.colour_names}

    def table_colours(self, chips: Iterable[str]) -> tuple[str, ...]:
        """Chips as vision reads them (the physical colours by their default names, ``COLOURS``)
        as this table names them; ValueError for a chip that is none of the six. The one place
        a reading meets the table's names."""
        chips = tuple(chips)
        unknown = [c for c in chips if c not in COLOURS]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not a chip colour the camera reads ({', '.join(COLOURS)})")
        return tuple(self.colour_names[COLOURS.index(c)] for c in chips)

    def _check_layout(self) -> list[str]:
        if self.layout is None:
            return []
        if len(self.layout) != FIELD_SIZE or any(len(row) != FIELD_SIZE for row in self.layout):
            raise ValueError("the starting field is 4 rows of 4 tokens")
        shapes = [s for row in self.layout for s in row]
        self._check_shapes(shapes, "on the starting field")
        return shapes

    def _check_hand(self, colour: str, hand: Hand, dealt: list[str]) -> None:
        if hand.tokens is not None:
            self._check_shapes(hand.tokens, f"in {colour}'s hand")
            twice = sorted(set(hand.tokens) & set(dealt))
            if twice:
                raise ValueError(f"token(s) {', '.join(twice)} dealt twice (each token exists once)")
            dealt.extend(hand.tokens)
        unknown = [c for c in hand.cards or () if c not in self.catalogue.cards]
        if unknown:
            raise ValueError(f"card(s) {', '.join(unknown)} in {colour}'s hand are not in the catalogue")
        if max(len(hand.tokens or ()), len(hand.cards or ())) > HAND_SIZE:
            raise ValueError(f"{colour}'s hand holds more than {HAND_SIZE} tokens or cards")

    def _check_shapes(self, shapes: Sequence[str], place: str) -> None:
        unknown = [s for s in shapes if s not in self.catalogue.shapes]
        if unknown:
            raise ValueError(f"token(s) {', '.join(unknown)} {place} are not in the catalogue")
        twice = sorted(s for s, n in Counter(shapes).items() if n > 1)
        if twice:
            raise ValueError(f"token(s) {', '.join(twice)} appear twice {place} (each token exists once)")

    def settings_json(self) -> dict:
        """The settings that differ from the defaults (a record of a default table has none)."""
        out: dict[str, Any] = {}
        if self.catalogue != load_catalogue():
            out["catalogue"] = self.catalogue.to_json()
        if self.colour_names != COLOURS:
            out["colour_names"] = list(self.colour_names)
        return out


# --- the field -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    """A shape token on the field and the chips on it, bottom to top."""

    shape: str
    stack: tuple[str, ...] = ()
    blocked: bool = False
    height_known: bool = True  # False when the camera saw the top chip but not the height

    @property
    def top(self) -> str | None:
        return self.stack[-1] if self.stack else None

    def with_chips(self, colour: str, count: int) -> "Token":
        """``count`` chips more; two at once (G5) or a fourth (G4) block the token."""
        stack = self.stack + (colour,) * count
        return replace(self, stack=stack, blocked=self.blocked or count == 2 or len(stack) >= BLOCKING_HEIGHT)


Field = Mapping[Pos, Token]


def starting_field(layout: Sequence[Sequence[str]]) -> dict[Pos, Token]:
    return {(r, c): Token(shape) for r, row in enumerate(layout) for c, shape in enumerate(row)}


def beside(tokens: Field, pos: Pos) -> list[Pos]:
    """The positions left, right, above and below ``pos`` that hold a token."""
    return [(pos[0] + dr, pos[1] + dc) for dr, dc in SIDES if (pos[0] + dr, pos[1] + dc) in tokens]


def line_of(tokens: Field, line: str, index: int) -> list[Pos]:
    """The positions of every token in row or column ``index``, gaps and all."""
    axis = 0 if line == "row" else 1
    return sorted(p for p in tokens if p[axis] == index)


def star_count(tokens: Field, catalogue: Catalogue) -> int:
    """Tokens showing a star (a non-convex polygon): the rulebook's last tiebreak (G12)."""
    return sum(t.shape in catalogue.shapes and catalogue.shapes[t.shape].star for t in tokens.values())


def adjacency_waived(tokens: Field, colour: str) -> bool:
    """G6a: no empty token is left and none of ``colour``'s chips is on top anywhere, so
    this turn its captures and blocks need no neighbour with its chip on top."""
    return all(t.stack for t in tokens.values()) and not any(t.top == colour for t in tokens.values())


def _components(tokens: Field) -> list[set[Pos]]:
    left, parts = set(tokens), []
    while left:
        part, frontier = set(), [left.pop()]
        while frontier:
            pos = frontier.pop()
            part.add(pos)
            for n in beside(tokens, pos):
                if n in left:
                    left.discard(n)
                    frontier.append(n)
        parts.append(part)
    return parts


def _long_lines(tokens: Field) -> dict[str, list[Pos]]:
    """Rows and columns holding more tokens than a push can ever make (G7)."""
    lines: dict[str, list[Pos]] = {}
    for axis, line in ((0, "row"), (1, "col")):
        for index, n in Counter(p[axis] for p in tokens).items():
            if n > LONGEST_LINE:
                lines[f"{LINE_NAMES[line]} {index}"] = line_of(tokens, line, index)
    return lines


# --- moves -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Place:
    """Chips put down with cards: one card on one token (occupy G2, or capture G3), one card
    on two empty tokens (G1), or two cards on one token (block, G5)."""

    cards: tuple[str, ...]
    at: tuple[Pos, ...]

    def __post_init__(self) -> None:
        if (len(self.cards), len(self.at)) not in ((1, 1), (1, 2), (2, 1)):
            raise ValueError("chips go down as one card on one or two tokens, or two cards on one token")
        if len(set(self.at)) != len(self.at):
            raise ValueError("one card covers two different tokens")

    @property
    def chips(self) -> int:
        return max(len(self.cards), len(self.at))

    @property
    def block(self) -> bool:
        return len(self.cards) == 2


@dataclass(frozen=True)
class Push:
    """G7: ``token`` enters row or column ``index`` at its ``end`` (left/right of a row,
    top/bottom of a column) and every token of the line moves one step away from it."""

    token: str
    line: str  # "row" or "col"
    index: int
    end: str

    def __post_init__(self) -> None:
        if ENDS.get(self.end) != self.line:
            raise ValueError("a row is pushed from the left or right, a column from the top or bottom")

    @property
    def name(self) -> str:
        return f"{LINE_NAMES[self.line]} {self.index}"


@dataclass(frozen=True)
class Move:
    """One turn: chips and at most one push, in the order they were made."""

    colour: str
    actions: tuple[Place | Push, ...] = ()
    hand: Hand | None = None  # the mover's hand at the start of the turn, where the record says

    @property
    def passed(self) -> bool:
        return not self.actions

    def describe(self) -> str | None:
        """The turn in a few words, for verdict lists."""
        words = []
        for a in self.actions:
            if isinstance(a, Push):
                words.append(f"{a.token} into {a.name} from the {a.end}")
            else:
                words.append(f"{'+'.join(a.cards)} {'block' if a.block else 'on'} "
                             + " and ".join(where(p) for p in a.at))
        return "; ".join(words) or None


def pushed(tokens: Field, push: Push) -> tuple[dict[Pos, Token], tuple[Pos, ...]]:
    """The field after ``push`` (G7) and where the shifted tokens now lie.

    The new token takes the place of the token at the end it enters, and every token of
    the line moves one step further along, chips and all.
    """
    members = line_of(tokens, push.line, push.index)
    if not members:
        return dict(tokens), ()
    out = {p: t for p, t in tokens.items() if p not in members}
    shifted = {along(p, push): tokens[p] for p in members}
    out.update(shifted)
    out[members[0] if push.end in ("left", "top") else members[-1]] = Token(push.token)
    return out, tuple(shifted)


def along(pos: Pos, push: Push) -> Pos:
    """Where a token at ``pos`` lies after ``push``: one step on if it is in the pushed line,
    where it was if not (G7)."""
    step = 1 if push.end in ("left", "top") else -1
    if push.line == "row":
        return (pos[0], pos[1] + step) if pos[0] == push.index else pos
    return (pos[0] + step, pos[1]) if pos[1] == push.index else pos


@dataclass(frozen=True)
class Game:
    """A Geometrius game in progress; ``play`` returns the game after a judged turn."""

    setup: Setup
    tokens: Mapping[Pos, Token]
    hands: Mapping[str, Hand]
    to_move: int = 0
    turns: tuple[Turn, ...] = ()

    @classmethod
    def start(cls, setup: Setup) -> "Game":
        if setup.layout is None:
            raise ValueError("a Geometrius game starts from a 4 × 4 field, and the setup names none")
        return cls(setup, starting_field(setup.layout), {c: setup.hands.get(c, Hand()) for c in setup.turn_order})

    @property
    def colour_to_move(self) -> str:
        """The next colour in turn order that still has turns to make: one that has made its
        four (G10) can no longer be the one to move, so it is passed over."""
        order = self.setup.turn_order
        for k in range(len(order)):
            colour = order[(self.to_move + k) % len(order)]
            if self.turns_made(colour) < TURNS:
                return colour
        return order[self.to_move]

    def turns_made(self, colour: str) -> int:
        return sum(t.move.colour == colour for t in self.turns)

    @property
    def over(self) -> bool:
        """G10: every player has made four turns."""
        return all(self.turns_made(c) >= TURNS for c in self.setup.turn_order)

    def play(self, move: Move) -> "Game":
        order = self.setup.turn_order
        if move.colour not in order:
            raise ValueError(f"{move.colour!r} does not play in this game (colours: {', '.join(order)})")
        name, out = colour_name(move.colour), []
        tokens, hands, to_move = self.tokens, self.hands, self.to_move
        if self.turns_made(move.colour) >= TURNS:  # no turn at all: whoever was to move still is
            out.append(violation("no_turns_left", colour=name))
        else:
            to_move = (order.index(move.colour) + 1) % len(order)
            if move.colour != self.colour_to_move:
                out.append(violation("wrong_turn", colour=name, expected=colour_name(self.colour_to_move)))
            hand = _known_hand(self.hands[move.colour], move.hand)
            tokens, problems = _carry_out(self.tokens, move, self.setup.catalogue)
            out.extend(problems)
            out.extend(_hand_problems(move, hand))
            hands = {**self.hands, move.colour: _hand_after(hand, move)}
        turn = Turn(len(self.turns), move, move.describe(), tuple(out))
        return replace(self, tokens=tokens, hands=hands, to_move=to_move,
                       turns=self.turns + (turn,))


def _carry_out(tokens: Field, move: Move, catalogue: Catalogue) -> tuple[Field, list[Violation]]:
    """Each action in turn on the field as the earlier ones left it (G1-G7).

    A fault's cells are where its tokens lie once the turn is made, the field a player sees
    (its message names the place at the moment of the fault): a push moves the cells of the
    faults found before it along its line."""
    out: list[Violation] = []
    waived = adjacency_waived(tokens, move.colour)  # G6a holds for the whole turn
    chips = modifications = 0
    for action in move.actions:
        if isinstance(action, Push):
            modifications += 1
            if modifications == 2:
                out.append(violation("second_modification"))
            out = [replace(v, cells=tuple(along(c, action) for c in v.cells)) for v in out]
            tokens, problems = _push(tokens, action, move.colour, catalogue)
        else:
            chips += action.chips
            tokens, problems = _place(tokens, action, move.colour, catalogue, waived)
        out.extend(problems)
    if chips > CHIPS_PER_TURN:
        out.append(violation("too_many_chips", colour=colour_name(move.colour), count=chips))
    return tokens, out


def _place(tokens: Field, place: Place, colour: str, catalogue: Catalogue,
           waived: bool) -> tuple[Field, list[Violation]]:
    out = [violation("unknown_card", card=c) for c in place.cards if c not in catalogue.cards]
    out += [violation("no_token", [p], pos=where(p)) for p in place.at if p not in tokens]
    targets = [p for p in place.at if p in tokens]
    for pos in targets:
        token = tokens[pos]
        for card in place.cards:
            if card in catalogue.cards and not catalogue.accepts(card, token.shape):
                out.append(violation("card_does_not_match", [pos], card=card, text=catalogue.cards[card].text_en,
                                     shape=token.shape, pos=where(pos)))
        if len(place.at) == 2 and token.stack:
            out.append(violation("shared_card_not_empty", [pos], pos=where(pos)))
        elif place.block or token.stack:
            out.extend(_contest(tokens, pos, colour, waived, "G5" if place.block else "G3"))
    after = dict(tokens)
    for pos in targets:
        after[pos] = tokens[pos].with_chips(colour, 2 if place.block else 1)
    return after, out


def _contest(tokens: Field, pos: Pos, colour: str, waived: bool, rule: str) -> list[Violation]:
    """The conditions shared by a capture (G3) and a block (G5)."""
    token, name, out = tokens[pos], colour_name(colour), []
    if token.blocked:
        out.append(violation("token_blocked", [pos], rule, pos=where(pos)))
    if len(token.stack) >= BLOCKING_HEIGHT:
        out.append(violation("stack_too_high", [pos], rule, pos=where(pos), height=len(token.stack)))
    if token.top == colour:
        out.append(violation("top_is_own", [pos], rule, colour=name, pos=where(pos)))
    if not waived and not any(tokens[n].top == colour for n in beside(tokens, pos)):
        out.append(violation("no_adjacent_own_top", [pos], rule, colour=name, pos=where(pos)))
    return out


def _push(tokens: Field, push: Push, colour: str, catalogue: Catalogue) -> tuple[Field, list[Violation]]:
    out = []
    if push.token not in catalogue.shapes:
        out.append(violation("unknown_token", shape=push.token))
    if any(t.shape == push.token for t in tokens.values()):  # a misreading: each token exists once
        return tokens, out + [violation("token_not_in_hand", colour=colour_name(colour), shape=push.token,
                                        why="it already lies on the field")]
    if not line_of(tokens, push.line, push.index):
        return tokens, out + [violation("empty_line", line=push.name)]
    after, shifted = pushed(tokens, push)
    before = _long_lines(tokens)
    grown = {name: cells for name, cells in _long_lines(after).items() if len(cells) > len(before.get(name, ()))}
    if grown:
        out.append(violation("line_too_long", [p for cells in grown.values() for p in cells],
                             lines=" and ".join(grown)))
    lonely = [p for p in shifted if not beside(after, p)]
    if lonely:
        out.append(violation("disconnected_field", lonely, places=", ".join(map(where, lonely))))
    return after, out


def _known_hand(tracked: Hand, stated: Hand | None) -> Hand:
    if stated is None:
        return tracked
    return Hand(tracked.cards if stated.cards is None else stated.cards,
                tracked.tokens if stated.tokens is None else stated.tokens)


def _hand_problems(move: Move, hand: Hand) -> list[Violation]:
    name, out = colour_name(move.colour), []
    if hand.cards is not None:
        played = Counter(c for a in move.actions if isinstance(a, Place) for c in a.cards)
        missing = played - Counter(hand.cards)
        if missing:
            out.append(violation("card_not_in_hand", colour=name, cards=", ".join(sorted(missing.elements()))))
    if hand.tokens is not None:
        out += [violation("token_not_in_hand", colour=name, shape=a.token, why=f"{name} does not hold it")
                for a in move.actions if isinstance(a, Push) and a.token not in hand.tokens]
    return out


def _hand_after(hand: Hand, move: Move) -> Hand:
    """Pushed tokens leave the hand for good; played cards are replaced by unseen ones."""
    pushed_tokens = {a.token for a in move.actions if isinstance(a, Push)}
    played = any(isinstance(a, Place) for a in move.actions)
    return Hand(None if played else hand.cards,
                None if hand.tokens is None else tuple(t for t in hand.tokens if t not in pushed_tokens))


def play_all(setup: Setup, moves: Iterable[Move]) -> Game:
    game = Game.start(setup)
    for move in moves:
        game = game.play(move)
    return game


# --- scoring ---------------------------------------------------------------------------------

def points(tokens: Field) -> dict[str, int]:
    """G11: a token's owner has the top chip and scores every chip on it, any colour."""
    out: dict[str, int] = {}
    for token in tokens.values():
        if token.top is not None:
            out[token.top] = out.get(token.top, 0) + len(token.stack)
    return out


def score(game: Game) -> ScoreSheet:
    return score_field(game.tokens, game.setup.player_list, game.setup.catalogue, over=game.over)


def score_field(tokens: Field, players: Sequence[tuple[str, Sequence[str]]], catalogue: Catalogue,
                over: bool = True, flags: Sequence[Flag] = ()) -> ScoreSheet:
    """G11 points per player, ranked by G12; a tie for first names the number of star tokens."""
    playing = [c for _, cs in players for c in cs]
    won = points(tokens)
    strangers = sorted(set(won) - set(playing))
    if strangers:
        raise ValueError(f"{', '.join(strangers)} chips lie on top but no player plays {'/'.join(strangers)}")
    undecided = [Undecided(t.top, "G11", f"the stack at {where(p)} was not seen whole: "
                                         f"{len(t.stack)} chip(s) counted")
                 for p, t in sorted(tokens.items()) if t.top and not t.height_known]
    undecided += [Undecided("", "G12", f"the token at {where(p)} was not recognised: the star count may be off by one")
                  for p, t in sorted(tokens.items()) if t.shape == UNKNOWN_SHAPE]
    if not over and playing:
        undecided.append(Undecided(playing[0], "G10", "the game is not over: these are the scores so far"))
    stars = star_count(tokens, catalogue)
    colours = {c: ColourScore(c, won.get(c, 0), 0, 0, ()) for c in playing}
    sheet = rank_players(players, colours, flags, undecided, (_star_race(stars),))
    leaders = [p.name for p in sheet.players if p.place == 1]
    if len(leaders) < 2:
        return sheet
    return replace(sheet, tiebreak=sheet.tiebreak + (
        f"G12 {' and '.join(leaders)}: the rulebook has them play again; if that ties too, the first to name "
        f"the number of star (non-convex) tokens on the final field wins: there are {stars}",))


def _star_race(stars: int) -> Tiebreak:
    """G12's last step is a race at the table, not a property of a player: its key never
    separates anyone, and the table is told the answer."""
    return Tiebreak("G12", f"the first to name the number of star tokens ({stars}) wins", lambda parts: 0)


# --- states and records ----------------------------------------------------------------------

def parse_state(state: Any, catalogue: Catalogue, colours: Sequence[str] = COLOURS) -> dict[Pos, Token]:
    """A state document's ``tokens`` as a field, its chips named by ``colours`` (a setup's
    ``colour_names``); ValueError (one line) for a state that
    cannot be: shapes not in the catalogue, unknown colours, two tokens in one place, one
    token twice, impossible stacks. A camera that saw a token but could not make out its
    polygon says ``"unknown"``: the chips still score, only the star count stays open."""
    items = state.get("tokens") if isinstance(state, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("a Geometrius state needs 'tokens': [{\"row\", \"col\", \"shape\", \"stack\"}, ...]")
    tokens: dict[Pos, Token] = {}
    for i, raw in enumerate(items):
        pos, token = _state_token(raw, i, catalogue, colours)
        if pos in tokens:
            raise ValueError(f"two tokens lie at {where(pos)}")
        tokens[pos] = token
    twice = sorted(s for s, n in Counter(t.shape for t in tokens.values()).items() if n > 1 and s != UNKNOWN_SHAPE)
    if twice:
        raise ValueError(f"token(s) {', '.join(twice)} lie on the field twice (each token exists once)")
    return tokens


def _state_token(raw: Any, i: int, catalogue: Catalogue, colours: Sequence[str]) -> tuple[Pos, Token]:
    if not isinstance(raw, dict) or type(raw.get("row")) is not int or type(raw.get("col")) is not int:
        raise ValueError(f"token {i} needs integer 'row' and 'col'")
    pos = (raw["row"], raw["col"])
    shape, stack = raw.get("shape"), raw.get("stack", [])
    if not isinstance(shape, str):  # a list or an object is no name (and cannot be looked up)
        raise ValueError(f"the token at {where(pos)} needs its shape as a name, e.g. \"Q01\"")
    if shape not in catalogue.shapes and shape != UNKNOWN_SHAPE:
        raise ValueError(f"the token at {where(pos)} shows {shape!r}, which is not in the catalogue")
    if not isinstance(stack, list) or not all(isinstance(c, str) and c in colours for c in stack):
        raise ValueError(f"the stack at {where(pos)} must list chip colours bottom to top ({', '.join(colours)})")
    if len(stack) > HIGHEST_STACK:
        raise ValueError(f"{where(pos)} holds {len(stack)} chips; no token holds more than five (G5)")
    known, blocked = raw.get("stack_height_known", True), raw.get("blocked", len(stack) >= BLOCKING_HEIGHT)
    if not isinstance(known, bool) or not isinstance(blocked, bool):
        raise ValueError(f"token {i}: 'stack_height_known' and 'blocked' are true or false")
    if len(stack) >= BLOCKING_HEIGHT and not blocked:
        raise ValueError(f"{where(pos)} holds {len(stack)} chips, so it is blocked (G4)")
    if blocked and len(stack) < 2:
        raise ValueError(f"{where(pos)} is marked blocked but a blocked token holds two chips or more (G4, G5)")
    return pos, Token(shape, tuple(stack), blocked, known)


def state_json(tokens: Field) -> dict:
    """The contract's state document; the inverse of :func:`parse_state`."""
    out = []
    for (r, c), t in sorted(tokens.items()):
        doc: dict[str, Any] = {"row": r, "col": c, "shape": t.shape, "stack": list(t.stack)}
        if not t.height_known:
            doc["stack_height_known"] = False
        if t.blocked != (len(t.stack) >= BLOCKING_HEIGHT):
            doc["blocked"] = t.blocked
        out.append(doc)
    return {"game": "geometrius", "tokens": out}


def field_flags(tokens: Field) -> tuple[Flag, ...]:
    """What a field proves against G7 whatever the moves were: a line of six or more, or
    tokens cut off from the rest."""
    flags = [Flag("G7", "line_too_long", tuple(cells), f"{name} holds {len(cells)} tokens; a push never makes six")
             for name, cells in _long_lines(tokens).items()]
    parts = sorted(_components(tokens), key=len, reverse=True)
    if len(parts) > 1:
        cut = tuple(sorted(p for part in parts[1:] for p in part))
        flags.append(Flag("G7", "disconnected_field", cut, f"{len(cut)} token(s) touch no other part of the field"))
    return tuple(flags)


def score_state(state: Mapping, setup: Setup, last_piece=None) -> ScoreSheet:
    """Scores of a state document. Without players in the setup, every colour with a chip
    on the field is a player."""
    tokens = parse_state(state, setup.catalogue, setup.colour_names)
    players = setup.players
    if not players:
        seen = {c for t in tokens.values() for c in t.stack}
        players = tuple((setup.names[c], (c,)) for c in setup.colour_names if c in seen) or setup.player_list
    return score_field(tokens, players, setup.catalogue, flags=field_flags(tokens))


def score_match(game: Game, setup: Setup) -> ScoreSheet:
    return score(game)


def new_match(setup: Setup) -> Game:
    return Game.start(setup)


def _invalid(code: str, message: str) -> Exception:
    """``rules.records.InvalidInput``, imported late: records imports every game module."""
    from .records import InvalidInput

    return InvalidInput(code, message)


def _is_pos(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(x) is int for x in value)


def _hand_from(raw: Any, what: str) -> Hand:
    if not isinstance(raw, dict) or not all(
            isinstance(raw.get(k, []), list) and all(isinstance(x, str) for x in raw.get(k, []))
            for k in ("cards", "tokens")):
        raise _invalid("bad_format", f"{what} must be {{\"cards\": [ids], \"tokens\": [ids]}}")
    return Hand(*(tuple(raw[k]) if k in raw else None for k in ("cards", "tokens")))


def parse_move(raw: Any, index: int, colours: Sequence[str] = COLOURS) -> Move:
    """A record's move (format in the module docstring), its colour one of ``colours`` (a
    setup's ``colour_names``); InvalidInput when malformed."""
    if not isinstance(raw, dict):
        raise _invalid("bad_move", f"move {index} must be an object")
    colour = raw.get("colour")
    if not isinstance(colour, str) or colour not in colours:
        raise _invalid("unknown_colour", f"move {index}: unknown colour {colour!r} (use {', '.join(colours)})")
    actions = raw.get("actions", [])
    if not isinstance(actions, list):
        raise _invalid("bad_move", f"move {index}: 'actions' must be a list")
    hand = _hand_from(raw["hand"], f"move {index}: 'hand'") if "hand" in raw else None
    return Move(colour, tuple(_action(a, f"move {index}, action {j}") for j, a in enumerate(actions)), hand)


def _action(raw: Any, what: str) -> Place | Push:
    try:
        if isinstance(raw, dict) and isinstance(raw.get("push"), str):
            lines = [k for k in ("row", "col") if k in raw]
            if len(lines) != 1 or type(raw[lines[0]]) is not int:
                raise ValueError("a push names one 'row' or 'col' by number")
            return Push(raw["push"], lines[0], raw[lines[0]], raw.get("from"))
        if isinstance(raw, dict) and isinstance(raw.get("cards"), list) and isinstance(raw.get("at"), list):
            if not all(isinstance(c, str) for c in raw["cards"]) or not all(map(_is_pos, raw["at"])):
                raise ValueError("'cards' lists card ids and 'at' lists [row, col] positions")
            return Place(tuple(raw["cards"]), tuple(tuple(p) for p in raw["at"]))
    except ValueError as e:
        raise _invalid("bad_move", f"{what}: {e}") from None
    raise _invalid("bad_move", f"{what} must be {{\"cards\": [...], \"at\": [[row, col]]}} "
                               "or {\"push\": token, \"row\" | \"col\": n, \"from\": end}")


def setup_from(doc: dict, variant: str | None = None) -> Setup:
    """The table's setup from a record or state document (a CLI option overrides the variant)."""
    settings = doc.get("settings") or {}
    if not isinstance(settings, dict):
        raise _invalid("bad_format", "'settings' must be an object")
    names = _colour_names(settings)
    players = doc.get("players") or []
    if not isinstance(players, list):
        raise _invalid("bad_format", "'players' must be a list")
    table = []
    for i, p in enumerate(players):
        if not isinstance(p, dict) or not isinstance(p.get("colours"), list) or len(p["colours"]) != 1:
            raise _invalid("bad_format", f"player {i} needs 'colours': [one colour]")
        if not isinstance(p["colours"][0], str) or p["colours"][0] not in names:
            raise _invalid("unknown_colour", f"player {i}: unknown colour {p['colours'][0]!r} "
                                             f"(use {', '.join(names)})")
        table.append((str(p.get("name") or f"Player {i + 1}"), (p["colours"][0],)))
    layout = doc.get("field")
    if layout is None and "moves" in doc:
        raise _invalid("bad_setup", "a Geometrius record needs the starting 'field': 4 rows of 4 token ids")
    if layout is not None and not (isinstance(layout, list) and all(
            isinstance(row, list) and all(isinstance(s, str) for s in row) for row in layout)):
        raise _invalid("bad_format", "'field' must list rows of token ids")
    hands = doc.get("hands") or {}
    if not isinstance(hands, dict):
        raise _invalid("bad_format", "'hands' must map a colour to {\"cards\": [...], \"tokens\": [...]}")
    options: dict[str, Any] = {"hands": {c: _hand_from(h, f"the hand of {c}") for c, h in hands.items()},
                               "colour_names": names}
    try:
        if "catalogue" in settings:
            options["catalogue"] = parse_catalogue(settings["catalogue"])
    except ValueError as e:
        raise _invalid("bad_setup", f"the record's catalogue: {e}") from None
    try:
        return Setup(variant=variant or doc.get("variant") or VARIANTS[0], players=tuple(table),
                     layout=None if layout is None else tuple(tuple(row) for row in layout), **options)
    except ValueError as e:
        raise _invalid("bad_setup", str(e)) from None


def _colour_names(settings: dict) -> tuple[str, ...]:
    """The settings' ``colour_names`` as given, or the default names; bad_format for a value
    that is not a list of strings, bad_setup for one that does not name the six chips."""
    if "colour_names" not in settings:
        return COLOURS
    names = settings["colour_names"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _invalid("bad_format", "'colour_names' must list the six chip colours' names as strings "
                                     f"(in the order {', '.join(COLOURS)})")
    try:
        check_colour_names(names)
    except ValueError as e:
        raise _invalid("bad_setup", str(e)) from None
    return tuple(names)


def record_json(game: Game) -> dict:
    """A game as the record ``check`` reads (a live session's export)."""
    setup = game.setup
    doc: dict[str, Any] = {
        "game": "geometrius", "variant": setup.variant,
        "players": [{"name": n, "colours": list(c)} for n, c in setup.player_list],
        "field": [list(row) for row in setup.layout or ()],
    }
    if setup.hands:
        doc["hands"] = {c: h.to_json() for c, h in setup.hands.items()}
    if setup.settings_json():
        doc["settings"] = setup.settings_json()
    doc["moves"] = [_move_json(t.move) for t in game.turns]
    return doc


def _move_json(move: Move) -> dict:
    actions = [{"push": a.token, a.line: a.index, "from": a.end} if isinstance(a, Push)
               else {"cards": list(a.cards), "at": [list(p) for p in a.at]} for a in move.actions]
    doc: dict[str, Any] = {"colour": move.colour, "actions": actions}
    if move.hand is not None:
        doc["hand"] = move.hand.to_json()
    return doc
