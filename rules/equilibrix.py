"""Equilibrix Combact as the referee applies it (``shared/rules/equilibrix.md``): E1-E5 and
the variants ZDRŽOVAČKA, AUTONOMIE, TŘI METY and KOMBO.

Fields are cells of the Flower-of-Life lattice (:mod:`rules.flower`), so a tile is a
piece, a tile's placements come from the shared placement table, and colours are bit sets.
What the publisher does not state (the tiles, the markers, how territory grows) is data.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from itertools import chain
from importlib import resources
from typing import ClassVar, Iterable, Mapping, Sequence

from . import flower
from .board import bits
from .lattice import Cell
from .pieces import PieceSet
from .placement import PlacementTable, Reason, Turn, Violation
from .scoring import ColourScore, OneColourEach, ScoreSheet, Tiebreak, Undecided, rank_players

COLOURS = ("B", "W")
COLOUR_NAMES = {"B": "Black", "W": "White"}
VARIANTS = ("zdrzovacka", "autonomie", "tri-mety")
VARIANT_NAMES = {"zdrzovacka": "ZDRŽOVAČKA", "autonomie": "AUTONOMIE", "tri-mety": "TŘI METY"}
MINI = ("petal", "triangle")  # each player's two mini-tiles
MAX_MINI_TURNS = 2
DOTS = 5

REASONS: Mapping[str, Reason] = {
    "tile_not_offered": Reason("tile_not_offered", "E1", "that tile is not one of the ring tiles offered next to the Origin"),
    "no_mini_tile_left": Reason("no_mini_tile_left", "E2", "{colour} has no such mini-tile left (at most two mini-tile turns)"),
    "off_board": Reason("off_board", "E3", "a field lies off the board"),
    "overlap": Reason("overlap", "E3", "a field is already covered"),
    "not_connected": Reason("not_connected", "E4", "the tile shares no node with a field of its colour"),
    "too_many_dots": Reason("too_many_dots", "E5", "node {node} would hold {count} fields of {colour} (five at most)"),
    "wrong_turn": Reason("wrong_turn", "turn", "{colour} moved out of turn: it was {expected}'s turn"),
    "illegal_pass": Reason("illegal_pass", "turn", "{colour} passed while it still had a legal move"),
}


def violation(step: str, cells: Iterable[Cell] = (), warning: bool = False, **fmt) -> Violation:
    r = REASONS[step]
    return Violation(r.code, r.rule, r.text.format(**fmt), tuple(cells), warning)


@lru_cache(maxsize=None)
def default_catalogue() -> dict:
    return json.loads(resources.files("rules").joinpath("data/equilibrix-tiles.json").read_text("utf-8"))


def tile_shape(tile: str) -> str:
    """A physical ring tile ``shape-copy`` names its shape."""
    return tile.rsplit("-", 1)[0]


def mini_kind(cell: Cell) -> str:
    """The mini-tile (E2) that covers this one field: a petal or a triangle."""
    return "petal" if cell[2] < flower.PLUS else "triangle"


def minis_cover(cells: Iterable[Cell]) -> bool:
    """Whether one colour's mini-tiles alone (E2: one petal, one triangle, a field each) could
    have laid these fields; more need a ring tile (E1)."""
    kinds = [mini_kind(c) for c in cells]
    return len(kinds) == len(set(kinds))


def networks(own: int) -> list[int]:
    """The node-connected parts of one colour's fields (a bit set). E4 as a property of any
    board: every tile of a colour after its first shares a node with a field of that colour,
    so a legal board's colour is one network; more parts than one mean a misread field."""
    b = flower.board()
    return b.components(own, b.contact_mask)


@lru_cache(maxsize=None)
def _nodes_mask() -> dict[flower.Node, int]:
    b = flower.board()
    return {n: b.mask(f for f in flower.fields_at(n) if f in b.index) for n in flower.NODES}


@dataclass(frozen=True)
class Setup(OneColourEach):
    default_players: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = (("Black", ("B",)), ("White", ("W",)))

    variant: str = "autonomie"
    players: tuple[tuple[str, tuple[str, ...]], ...] = ()
    shapes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: default_catalogue()["shapes"])
    ring: tuple[str, ...] = field(default_factory=lambda: tuple(default_catalogue()["ring"]))
    origin: int = 0  # the Origin stands just before this ring slot (clockwise)
    offered: Mapping[str, int] = field(default_factory=lambda: {"B": 4, "W": 4})
    markers: Mapping[flower.Node, str] = field(default_factory=lambda: dict(DEFAULT_MARKERS))
    territory: str = "arc"  # empty regions grow through arc-sharing ("arc") or node-sharing ("node")

    def after(self, colour: str) -> str:
        """The colour to move after ``colour``'s turn, a turn out of turn too (:meth:`Game.play`)."""
        return self.turn_order[(self.turn_order.index(colour) + 1) % len(self.turn_order)]

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown Equilibrix variant {self.variant!r} (one of {', '.join(VARIANTS)})")
        if sorted(c for _, cs in self.player_list for c in cs) != sorted(COLOURS) or \
                any(len(cs) != 1 for _, cs in self.player_list):  # one seat with both would move alone
            raise ValueError("Equilibrix is played by black (B) and white (W), one colour each")
        unknown = [t for t in self.ring if tile_shape(t) not in self.shapes]
        if unknown:
            raise ValueError(f"ring tile(s) {', '.join(unknown)} have no shape in the catalogue")
        if len(set(self.ring)) != len(self.ring):
            raise ValueError("ring tiles must be named uniquely")
        if not 0 <= self.origin < max(len(self.ring), 1):
            raise ValueError("the Origin must stand at a ring slot")
        if sorted(self.offered) != sorted(COLOURS) or not all(n > 0 for n in self.offered.values()):
            raise ValueError("'offered' gives B and W each a positive number of ring tiles")
        if self.territory not in ("arc", "node"):
            raise ValueError("territory grows through 'arc' or 'node'")
        for node, colour in self.markers.items():
            if not flower.on_board(tuple(node)) or colour not in COLOURS:
                raise ValueError(f"marker {node}: not a board node with colour B or W")

    def settings_json(self) -> dict:
        out: dict = {}
        if dict(self.offered) != {"B": 4, "W": 4}:
            out["offered"] = dict(self.offered)
        if dict(self.markers) != DEFAULT_MARKERS:
            out["markers"] = [[q, s, c] for (q, s), c in self.markers.items()]
        if self.territory != "arc":
            out["territory"] = self.territory
        if dict(self.shapes) != default_catalogue()["shapes"]:
            out["shapes"] = {k: list(v) for k, v in self.shapes.items()}
        return out

    @cached_property
    def tiles(self) -> PieceSet:
        shapes = {k: [flower.parse_field(f) for f in v] for k, v in self.shapes.items()}
        return PieceSet.build(flower.FLOWER, shapes)

    @cached_property
    def table(self) -> PlacementTable:
        b = flower.board()
        return PlacementTable.build(b, b.full, self.tiles)


# TŘI METY: the 6 corner nodes, white and black alternating (a setting).
DEFAULT_MARKERS: dict[flower.Node, str] = {
    (3, 0): "W", (0, 3): "B", (-3, 3): "W", (-3, 0): "B", (0, -3): "W", (3, -3): "B",
}


@dataclass(frozen=True)
class Move:
    colour: str
    fields: tuple[Cell, ...] = ()
    tile: str | None = None  # a ring tile; None with fields = a mini-tile turn
    token: bool = False  # the 5+1 token is played with this tile
    passed: bool = False


@dataclass(frozen=True)
class Game:
    """An Equilibrix game in progress; ``play`` returns the game after a judged move."""

    setup: Setup
    own: Mapping[str, int] = field(default_factory=dict)
    ring: tuple[str | None, ...] = ()
    origin: int = 0
    minis: Mapping[str, frozenset[str]] = field(default_factory=dict)
    tokens: Mapping[str, int] = field(default_factory=dict)
    to_move: int = 0
    turns: tuple[Turn, ...] = ()
    loser: str | None = None  # ZDRŽOVAČKA: a colour that passed for want of a legal move (see defeated)

    @classmethod
    def start(cls, setup: Setup) -> "Game":
        return cls(setup, own={c: 0 for c in COLOURS}, ring=tuple(setup.ring), origin=setup.origin,
                   minis={c: frozenset(MINI) for c in COLOURS}, tokens={c: 1 for c in COLOURS})

    @property
    def colour_to_move(self) -> str:
        return self.setup.turn_order[self.to_move]

    @property
    def occupied(self) -> int:
        return self.own["B"] | self.own["W"]

    def offered(self, colour: str) -> list[str]:
        """The ring tiles lying clockwise next to the Origin that ``colour`` may take."""
        n, out = len(self.ring), []
        for k in range(n):
            tile = self.ring[(self.origin + k) % n]
            if tile is not None:
                out.append(tile)
            if len(out) == self.setup.offered.get(colour, 4):
                break
        return out

    def mini_turns(self, colour: str) -> int:
        return len(MINI) - len(self.minis[colour])

    @cached_property  # a search for a legal move: asked by over and score, several times a snapshot
    def defeated(self) -> str | None:
        """ZDRŽOVAČKA's loser: the first colour that could not make a legal move, whether it
        passed for want of one or the record stops at its turn with none left (the rule
        ends the game there; no pass need be written)."""
        if self.loser or self.setup.variant != "zdrzovacka":
            return self.loser
        colour = self.colour_to_move
        return None if self.can_move(colour) else colour

    @property
    def over(self) -> bool:
        """ZDRŽOVAČKA: a player could not move; AUTONOMIE and TŘI METY: both players passed,
        one right after the other."""
        if self.setup.variant == "zdrzovacka":  # no passing: only a player who cannot move ends it
            return self.defeated is not None
        last = self.turns[-2:]  # AUTONOMIE, TŘI METY: both players pass, one right after the other
        return len(last) == 2 and all(t.move.passed for t in last) and {t.move.colour for t in last} == set(COLOURS)

    # --- judging -----------------------------------------------------------------------

    def check(self, move: Move) -> tuple[str | None, list[Violation]]:
        """Which tile the move plays and every rule it breaks (E1-E5)."""
        b, out = flower.board(), []
        fields = [tuple(f) for f in move.fields]
        off = [f for f in fields if f not in b.index]
        if off:
            out.append(violation("off_board", off))
        mask = b.mask(f for f in fields if f in b.index)
        if mask & self.occupied:
            out.append(violation("overlap", b.cells_of(mask & self.occupied)))
        tile = self._identify(move, fields, out)
        own = self.own[move.colour]
        if own and not mask & (own | b.grow(own, b.contact_mask)):  # a field laid over its own shares its nodes
            out.append(violation("not_connected", fields))
        out.extend(self._dots(move, mask))
        return tile, out

    def _identify(self, move: Move, fields: list[Cell], out: list[Violation]) -> str | None:
        shape = self.setup.tiles.identify(fields) if len(set(fields)) == len(fields) else None
        if move.tile is None:  # a mini-tile: one petal or one triangle
            if len(fields) != 1:
                out.append(violation("tile_not_offered", fields))
                return None
            kind = mini_kind(fields[0])
            if kind not in self.minis[move.colour] or self.mini_turns(move.colour) >= MAX_MINI_TURNS:
                out.append(violation("no_mini_tile_left", fields, colour=COLOUR_NAMES[move.colour]))
            return f"mini:{kind}"
        if move.tile not in self.offered(move.colour) or shape != tile_shape(move.tile):
            out.append(violation("tile_not_offered", fields))
        return move.tile

    def _dots(self, move: Move, mask: int) -> list[Violation]:
        after = self.own[move.colour] | mask
        crowded = []
        for node, node_mask in _nodes_mask().items():
            if node_mask & mask:
                count = bin(after & node_mask).count("1")
                if count > DOTS:
                    crowded.append((node, count))
        token_ok = (move.token and self.tokens[move.colour] > 0 and len(crowded) == 1
                    and crowded[0][1] == DOTS + 1)
        if not crowded or token_ok:
            return []
        return [violation("too_many_dots", node=list(n), count=c, colour=COLOUR_NAMES[move.colour])
                for n, c in crowded]

    def legal_moves(self, colour: str) -> Iterable[Move]:
        """Every legal tile or mini-tile turn for ``colour`` (with the token only if needed)."""
        b = flower.board()
        shapes = {tile_shape(t): t for t in self.offered(colour)}
        tiles = ((tuple(b.cells_of(mask)), shapes[piece]) for piece, mask in self.setup.table.masks if piece in shapes)
        minis = (((cell,), None) for cell in b.cells) if self.mini_turns(colour) < MAX_MINI_TURNS else ()
        for fields, tile in chain(tiles, minis):  # a mini-tile may bring the token too
            for token in (False, True):
                move = Move(colour, fields, tile, token)
                if not self.check(move)[1]:
                    yield move
                    break

    def can_move(self, colour: str) -> bool:
        return next(iter(self.legal_moves(colour)), None) is not None

    def play(self, move: Move) -> "Game":
        out: list[Violation] = []
        if move.colour not in COLOURS:
            raise ValueError(f"unknown colour {move.colour!r}")
        if move.colour != self.colour_to_move:
            out.append(violation("wrong_turn", colour=COLOUR_NAMES[move.colour],
                                 expected=COLOUR_NAMES[self.colour_to_move]))
        game, tile = self, None
        if move.passed:
            stuck = not self.can_move(move.colour)
            if self.setup.variant == "zdrzovacka":
                if stuck:
                    game = replace(game, loser=game.loser or move.colour)
                else:
                    out.append(violation("illegal_pass", colour=COLOUR_NAMES[move.colour]))
        else:
            tile, problems = self.check(move)
            out.extend(problems)
            game = game._lay(move, tile)
        to_move = self.setup.turn_order.index(self.setup.after(move.colour))
        return replace(game, to_move=to_move, turns=self.turns + (Turn(len(self.turns), move, tile, tuple(out)),))

    def _lay(self, move: Move, tile: str | None) -> "Game":
        """Put the tile down when it physically can be (on the board, on empty fields)."""
        b = flower.board()
        fields = [tuple(f) for f in move.fields]
        if not all(f in b.index for f in fields) or b.mask(fields) & self.occupied:
            return self
        game = replace(self, own={**self.own, move.colour: self.own[move.colour] | b.mask(fields)})
        if tile and tile.startswith("mini:"):
            game = replace(game, minis={**game.minis, move.colour: game.minis[move.colour] - {tile[5:]}})
        elif tile in self.ring:
            slot = self.ring.index(tile)
            game = replace(game, ring=self.ring[:slot] + (None,) + self.ring[slot + 1:], origin=slot)
        if move.token and self.tokens[move.colour] > 0:
            other = next(c for c in COLOURS if c != move.colour)
            game = replace(game, tokens={move.colour: self.tokens[move.colour] - 1, other: self.tokens[other] + 1})
        return game


def play_all(setup: Setup, moves: Iterable[Move]) -> Game:
    game = Game.start(setup)
    for move in moves:
        game = game.play(move)
    return game


# --- scoring -------------------------------------------------------------------------------

def territory(own: Mapping[str, int], growth: str = "arc") -> dict[str, int]:
    """AUTONOMIE: fields in empty regions bounded only by one colour (or the board's edge)."""
    b = flower.board()
    relation = b.edge if growth == "arc" else b.contact_mask
    empty = b.full & ~(own["B"] | own["W"])
    scores = {c: 0 for c in COLOURS}
    while empty:
        region = frontier = empty & -empty
        while frontier:
            frontier = b.grow(frontier, relation) & empty & ~region
            region |= frontier
        empty &= ~region
        border = b.grow(region, relation) & ~region
        for colour in COLOURS:
            if border and not border & ~own[colour]:
                scores[colour] += bin(region).count("1")
    return scores


def markers_joined(own: Mapping[str, int], markers: Mapping[flower.Node, str]) -> dict[str, dict[str, int]]:
    """TŘI METY: per colour, how many markers of each colour its fields touch."""
    nodes = _nodes_mask()
    return {c: {m: sum(1 for n, mc in markers.items() if mc == m and own[c] & nodes[tuple(n)]) for m in COLOURS}
            for c in COLOURS}


def score(game: Game) -> ScoreSheet:
    """ZDRŽOVAČKA: 1 for the winner; AUTONOMIE: territory; TŘI METY: own markers joined,
    then the opponent's markers joined."""
    return score_fields(game.own, game.setup, game.defeated, game.over)


def score_fields(own: Mapping[str, int], setup: Setup, loser: str | None = None, over: bool = True) -> ScoreSheet:
    undecided, tiebreaks = [], ()
    if setup.variant == "zdrzovacka":
        values = {c: int(loser is not None and loser != c) for c in COLOURS}
        if loser is None:
            undecided.append(Undecided("B", "ZDRŽOVAČKA", "the game goes on until a player cannot move"))
    elif setup.variant == "autonomie":
        values = territory(own, setup.territory)
    else:
        joined = markers_joined(own, setup.markers)
        values = {c: joined[c][c] for c in COLOURS}
        tiebreaks = (Tiebreak("TŘI METY", "more of the opponent's markers joined wins",
                              lambda parts: sum(joined[p.colour][o] for p in parts for o in COLOURS if o != p.colour)),)
    if not over and setup.variant != "zdrzovacka":
        undecided.append(Undecided("B", "end", "the game is not over: these are the scores so far"))
    colours = {c: ColourScore(c, v, 0, 0, ()) for c, v in values.items()}
    return rank_players(setup.player_list, colours, (), undecided, tiebreaks)


# --- KOMBO ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class KomboGame:
    setup: Setup
    winner: str | None  # colour, or None for a draw or an unfinished game


def kombo_problems(games: Sequence[KomboGame]) -> list[str]:
    """What breaks KOMBO's rules: each later game's variant differs from the one before and
    was picked by the loser, who chooses from 5 ring tiles while the winner chooses from 3."""
    problems = []
    for before, after in zip(games, games[1:]):
        if before.winner is None:
            continue
        loser = next(c for c in COLOURS if c != before.winner)
        if after.setup.variant == before.setup.variant:
            problems.append(f"the loser must pick a different variant than {VARIANT_NAMES[before.setup.variant]}")
        if dict(after.setup.offered) != {loser: 5, before.winner: 3}:
            problems.append(f"after {COLOUR_NAMES[before.winner]} won, {COLOUR_NAMES[loser]} chooses from 5 tiles "
                            f"and {COLOUR_NAMES[before.winner]} from 3")
    return problems


def kombo_winner(games: Sequence[KomboGame]) -> str | None:
    """KOMBO is played to two wins."""
    wins = {c: 0 for c in COLOURS}
    for g in games:
        if g.winner:
            wins[g.winner] += 1
            if wins[g.winner] == 2:
                return g.winner
    return None


# --- states and records ------------------------------------------------------------------

def parse_fields(fields: Mapping[str, str]) -> dict[str, int]:
    """``{"P q s d": "B", ...}`` -> a bit set of fields per colour."""
    if not isinstance(fields, dict):
        raise ValueError("an Equilibrix state needs 'fields': {\"P q s d\": \"B\"}")
    b, own, named = flower.board(), {c: 0 for c in COLOURS}, {}
    for key, colour in fields.items():
        cell = flower.parse_field(key)
        if cell not in b.index:
            raise ValueError(f"field {key!r} lies off the board")
        if colour not in COLOURS:
            raise ValueError(f"unknown colour {colour!r} at {key} (use B or W)")
        if cell in named:  # "P 0 0 0" and "P 0 0  0": which colour is there would be a guess
            raise ValueError(f"fields {named[cell]!r} and {key!r} are one field")
        own[colour] |= 1 << b.index[cell]
        named[cell] = key
    return own


def cell_json(cell: Cell) -> str:
    """A field as records and states name it (``"P q s d"`` / ``"T q s +"``)."""
    return flower.field_id(cell)


def fields_json(own: Mapping[str, int]) -> dict[str, str]:
    b = flower.board()
    return {flower.field_id(b.cells[i]): c for c in COLOURS for i in bits(own[c])}


def score_state(state: Mapping, setup: Setup, last_piece=None) -> ScoreSheet:
    """Scores of a board state document (``{"game": "equilibrix", "fields": {...}}``)."""
    return score_fields(parse_fields(state.get("fields")), setup)


def score_match(game: Game, setup: Setup) -> ScoreSheet:
    return score(game)


def new_match(setup: Setup) -> Game:
    return Game.start(setup)
