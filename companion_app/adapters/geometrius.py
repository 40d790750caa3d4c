"""Geometrius live: the camera sees tokens and stacks change; the table taps the cards played.

A stable change of the field is one turn: a token new to the field is a push (G7; the line
and end are the ones that turn the old field into the new one), chips that grew stacks are
placements by the colour on top. A second change of the same colour that still fits one turn
(two chips, one push) continues that turn: players put chips down one at a time. Chips are
logged by the token they lie on (each token exists once), not by place, so a later push
that moves the token cannot detach them. The cards are tapped on the page per token; until
then a placement is judged with a card that fits anything, and the page asks for it.

The 4 × 4 starting field is the first board the camera reads with sixteen empty tokens in a
square (or the setup's). The camera's rows and columns may be offset from the game's (a
push can grow the field up or left); they are matched by moving the field onto itself.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any, Mapping, Sequence

from rules import geometrius
from rules.geometrius import Catalogue, Place, Push, Token
from rules.polygon import Card, Predicate

from ..store import KeptBoard
from .base import Derived, Entry, GameAdapter, Item, SessionError

Pos = tuple[int, int]
PENDING = "?"  # a card not tapped yet
NO_CHIP = "."
WILDCARD = Card(PENDING, Predicate("sides", ">=", 3), "a card not entered yet", "")


@dataclass(frozen=True)
class Slot:
    """Chips one turn put on one token, and the cards tapped for them."""

    token: str
    chips: int = 1  # as logged: seen by the camera, or tapped
    cards: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """The chips the turn put there: the cards tapped where they are more than the chips
        logged. Two cards are a block (G5), whose second chip the camera may never have logged
        (read as another colour and doubted, then read right only after the cards put it on
        the field); a chip that later joins the slot (a continuation, or a tap taking it out
        of another turn) is that second chip, already counted by the cards."""
        return max(self.chips, len(self.cards))


@dataclass(frozen=True)
class Turned:
    """A logged turn: a push (token, line, index, end) and/or chips, or nothing (a pass)."""

    colour: str
    push: tuple | None = None
    slots: tuple[Slot, ...] = ()
    events: tuple[int, ...] = ()  # every event the turn was seen in (continuations)
    pushed_with: tuple[str, ...] = ()  # the tokens of the chips the camera saw with the push
    push_after: int = 0  # how many of ``slots`` (the first) went down before the push
    tapped: bool = False  # made by a tap: its chip was read on a board no turn explained


@dataclass(frozen=True)
class StackFix:
    """A corrected stack: while the camera reads ``misread`` on the token (or, where it sees
    the whole stack, ``misread`` with chips put on it since), it means ``meant`` there.

    Without it the next camera field brings the misread straight back: a chip under the top
    that differs from the game's cannot be play, so no turn would be recognised again, and
    where only the top is seen the misread colour would be logged as a new chip. Once the
    camera reads anything else there the table changed, and the camera is believed again.
    """

    misread: tuple[str, ...]
    meant: tuple[str, ...]

    def apply(self, token: Token) -> Token | None:
        """The token as meant, or None when the camera no longer shows the misread."""
        if token.stack == self.misread:
            return replace(token, stack=self.meant)
        if not self.misread:
            return None
        if not token.height_known:  # only the top seen this time: it is the misread top still
            return replace(token, stack=self.meant[-1:]) if token.stack == self.misread[-1:] else None
        grown = token.stack[:len(self.misread)] == self.misread and len(token.stack) > len(self.misread)
        return replace(token, stack=self.meant + token.stack[len(self.misread):]) if grown else None


def _renaming(renames: Mapping[str, str], was: str, now: str) -> dict[str, str]:
    """The camera's names for tokens after the token the game calls ``was`` is named ``now``:
    whatever the camera reads that meant ``was`` (an earlier correction) means ``now``, and so
    does ``was`` itself when the camera reads that."""
    out = {k: now if v == was else v for k, v in renames.items()}
    out.setdefault(was, now)
    return {k: v for k, v in out.items() if k != v}


def _slots(payload: dict) -> tuple[Slot, ...]:
    return tuple(Slot(s["token"], s.get("count", 1)) for s in payload.get("chips", ()))


def _joined(slots: tuple[Slot, ...], more: tuple[Slot, ...]) -> tuple[Slot, ...]:
    """A turn's slots with the chips a continuation of it put down. Chips on a token the turn
    already put chips on join that slot: the two chips of a block, put down one after the
    other with a stable board between them, are one block (G5), not an occupation followed
    by a capture of the player's own chip (G3)."""
    out = list(slots)
    for slot in more:
        i = next((i for i, s in enumerate(out) if s.token == slot.token), None)
        if i is None:
            out.append(slot)
        else:
            out[i] = replace(out[i], chips=out[i].chips + slot.chips)
    return tuple(out)


def _seen_with_push(payload: dict) -> tuple[str, ...]:
    """The tokens of the chips a camera turn saw on the board with its push (none without; a
    push that joins a tapped chip, the tapped chip's token: see with_tapped_push)."""
    return tuple(payload.get("with", ())) + tuple(s.token for s in _slots(payload)) if payload.get("push") else ()


def _push(payload: dict) -> tuple | None:
    p = payload.get("push")
    return None if p is None else (p["token"], p["line"], p["index"], p["end"])


def _shift(before: Mapping[Pos, Token], seen: Mapping[Pos, Token]) -> tuple[int, int] | None:
    """The shift taking most of the camera's tokens to the game's places of the same shape."""
    at = {t.shape: p for p, t in before.items()}
    shifts = Counter((at[t.shape][0] - p[0], at[t.shape][1] - p[1]) for p, t in seen.items() if t.shape in at)
    return shifts.most_common(1)[0][0] if shifts else None


def _laid_by_push(tokens: Mapping[Pos, Token], seen: Mapping[Pos, Token],
                  places: set[Pos]) -> dict[Pos, Token]:
    """The game's ``tokens`` by the camera's ``places`` on a board that shows one token more,
    some unreadable: the field after the one push (of the token read new, or of an unreadable
    one) that lies on exactly those places with every shape ``seen`` in its place, less the
    token the push brings; {} when no push or more than one does (a guess would give a tap
    another token's chips). A push moves the tokens of its line, so the shift that places an
    unreadable token on a board without one is one step off there."""
    shapes = {t.shape for t in tokens.values()}
    new = {t.shape for t in seen.values()} - shapes
    if len(places) != len(tokens) + 1 or len(new) > 1:
        return {}
    token = next(iter(new), "")  # "": the token pushed in is one the camera could not read
    found = []
    for line, axis, ends in (("row", 0, ("left", "right")), ("col", 1, ("top", "bottom"))):
        for index in sorted({p[axis] for p in tokens}):
            for end in ends:
                field = geometrius.pushed(tokens, Push(token, line, index, end))[0]
                shift = _shift(field, seen)
                if shift is None:
                    continue
                laid = {(r - shift[0], c - shift[1]): t for (r, c), t in field.items()}
                if set(laid) == places and all(laid[p].shape == t.shape for p, t in seen.items()) \
                        and laid not in found:
                    found.append(laid)
    if len(found) != 1:
        return {}
    return {p: t for p, t in found[0].items() if t.shape in shapes}


def _translation(before: Mapping[Pos, Token], seen: Mapping[Pos, Token]) -> tuple[int, int] | None:
    """The shift taking the camera's places to the game's, if the shapes then all agree."""
    shift = _shift(before, seen)
    if shift is None:
        return None
    moved = {(p[0] + shift[0], p[1] + shift[1]): t.shape for p, t in seen.items()}
    return shift if moved == {p: t.shape for p, t in before.items()} else None


class GeometriusAdapter(GameAdapter):
    game = "geometrius"
    # the readings are the camera's, not the record: its next board brings them again
    lost_hold = ("the camera's last readings of the tokens", "nothing needs lifting, the camera's next board "
                 "reads the tokens again")

    def __init__(self, setup: geometrius.Setup):
        super().__init__(setup)
        cards = {**setup.catalogue.cards, PENDING: WILDCARD}
        self.judging = Catalogue(setup.catalogue.shapes, cards, setup.catalogue.about)
        # Each token's last reading by the camera, by its shape as the game names it: a token a
        # hand or glare made unreadable keeps the reading before, which a tap on it corrects.
        self.camera: dict[str, Token] = {}
        self.renames: dict[str, str] = {}  # camera misreads corrected: shape read -> shape meant
        self.stack_fixes: dict[str, StackFix] = {}  # camera misreads of chips corrected, by token
        # By token: whether the board on which the camera first read its stack as it reads it
        # now showed a token more than the game's field (held or not: a push seen with that chip),
        # and so has every board since (each held, or one no turn explains: the push is not
        # logged yet); a board without a token more, or one the log explains, clears it.
        # Kept over a restart with the camera's readings (see held_boards).
        self.grew_with: dict[str, bool] = {}
        # The colour and token of a chip tapped on such a board, first seen with the push: the
        # push the camera reads on the next board it reads is theirs (see with_tapped_push).
        # Kept over a restart with the camera's readings.
        self.pushed_by: tuple[str, str] | None = None
        # By token: the number of the board on which the camera first read its stack as it
        # reads it now (boards counted since the game began; kept over a restart with the
        # camera's readings: a restart between a held board and its tap once reordered an own
        # chip read after the tapped capture, and its flag went).
        self.read_at: dict[str, int] = {}
        self.boards = 0
        # Before the game: the 4 × 4 square the camera sees (None where it cannot tell the
        # shape), and the shapes the user entered for those places.
        self.start: dict[Pos, str | None] = {}
        self.start_fixes: dict[Pos, str] = {}

    # --- the log -------------------------------------------------------------------------

    def derive(self, events: Sequence, before: Derived | None = None, new: Sequence = ()) -> Derived:
        layout = self.setup.layout
        entries: list[Entry] = []
        for event in events:
            p, kind = event.payload, event.kind
            if kind == "layout":
                layout = tuple(tuple(row) for row in p["field"])
            elif kind == "turn":
                last = entries[-1] if entries else None
                if p.get("continues") and last is not None and last.move.colour == p["colour"]:
                    m = last.move
                    slots = _joined(_slots(p), m.slots) if p.get("first") else _joined(m.slots, _slots(p))
                    entries[-1] = Entry(last.event_id, Turned(m.colour, m.push or _push(p), slots,
                                                              m.events + (event.id,),
                                                              m.pushed_with if m.push else _seen_with_push(p),
                                                              _push_after_joined(m, p)))
                else:
                    entries.append(Entry(event.id, Turned(p["colour"], _push(p), _slots(p), (event.id,),
                                                          _seen_with_push(p), int(p.get("push_after", 0)))))
            elif kind == "pass":
                entries.append(Entry(event.id, Turned(p["colour"], events=(event.id,))))
            elif kind == "take_back":
                gone = set(p["events"])
                entries = [e for e in entries if e.event_id not in gone]
            elif kind == "amend":  # the cards tapped for a turn's chips on one token
                entries = [_with_cards(e, p) if e.event_id == p["event"] else e for e in entries]
            elif kind == "correction" and p.get("start"):
                layout = tuple(tuple(row) for row in p["field"]) if "field" in p else layout
            elif kind == "correction" and "shape" in p:
                layout, entries = _renamed(layout, entries, p["shape_was"], p["shape"])
            elif kind == "correction":
                entries = _top_corrected(entries, p["token"], p["top"], int(p.get("unlogged", 0)), event.id)
        return self.play(layout, entries)

    def play(self, layout: Any, entries: Sequence[Entry]) -> Derived:
        if layout is None:
            return Derived(None, (), tuple(entries), None)
        setup = replace(self.setup, catalogue=self.judging, layout=layout)
        game = geometrius.Game.start(setup)
        for entry in entries:
            game = game.play(self.move(game, entry.move))
        return Derived(game, tuple(e.event_id for e in entries), tuple(entries), layout)

    def move(self, game: geometrius.Game, turned: Turned) -> geometrius.Move:
        """The logged turn as the rules engine's move, on the field as it now lies: the chips
        put down before the push (``push_after``) on the field before it, the rest after it. A
        chip logged before the push on the token the push brings went down after it (a chip
        lies on a token of the field)."""
        if turned.push is None:
            return geometrius.Move(turned.colour, _places(game.tokens, turned.slots)[0])
        push = Push(*turned.push)
        first, late = _places(game.tokens, turned.slots[:turned.push_after])
        rest = _places(geometrius.pushed(game.tokens, push)[0], late + turned.slots[turned.push_after:])[0]
        return geometrius.Move(turned.colour, first + (push,) + rest)

    def restore(self, events: Sequence, derived: Derived) -> None:
        """After a restart: shapes corrected still rename what the camera reads (or name what
        it could not read in the starting field); chips corrected still stand against the
        camera's misread while the game has them as corrected."""
        for event in events:
            p = event.payload
            if event.kind == "correction" and p.get("start"):
                self.start_fixes[tuple(p["at"])] = p["shape"]
            elif event.kind == "correction" and "shape" in p:
                self.renamed(p["shape_was"], p["shape"])
            elif event.kind == "correction" and "misread" in p:
                self.stack_fixes.pop(p["token"], None)
                if p["misread"] != p["meant"]:
                    self.stack_fixes[p["token"]] = StackFix(tuple(p["misread"]), tuple(p["meant"]))
        stacks = {t.shape: t.stack for t in derived.game.tokens.values()} if derived.game is not None else {}
        self.stack_fixes = {k: f for k, f in self.stack_fixes.items()
                            if stacks.get(k, ())[:len(f.meant)] == f.meant}

    def held_boards(self) -> list[KeptBoard]:
        """The camera's last readings, saved as one kept board: ``board`` holds each token's
        reading as ``[shape, stack, height_known, grew, pushed_by, read_at]`` (``grew``: see
        ``grew_with``; ``pushed_by``: the colour tapped on this token whose push the next board
        brings, see ``pushed_by``, or None; ``read_at``: see ``read_at``, or None), ``uncertain`` the places it could not read. A tap
        reads them (chips the camera saw that the log lacks were never logged, and whether a
        push came with them: see :meth:`correction`), and so does the board after a tap, so a
        restart between a doubted board, its tap and the next board must keep them.
        Before the game starts, ``board`` holds the starting field as seen, ``[[row, col],
        shape]`` for each place (shape None where neither the camera nor the user has named
        it): a restart forgot it, so the page drew no field and refused the tap naming a shape
        the camera could not read until the camera's next board."""
        if self.camera:
            tapped = {self.pushed_by[1]: self.pushed_by[0]} if self.pushed_by else {}
            readings = [[shape, list(tok.stack), tok.height_known, self.grew_with.get(shape, False),
                         tapped.get(shape), self.read_at.get(shape)] for shape, tok in sorted(self.camera.items())]
        elif self.start_field() is None:  # the game has not started: the field it waits on
            readings = [[list(p), shape] for p, shape in sorted(self.start.items())]
        else:
            readings = []
        if not readings and not self.uncertain:
            return []
        # no time: nothing reads it back, and a board that changes no reading then writes nothing
        return [KeptBoard(readings, [list(p) for p in self.uncertain], 0.0)]

    def resume_hold(self, boards: Sequence[KeptBoard]) -> None:
        """After a restart: the camera's last readings (or the starting field as seen) as
        :meth:`held_boards` saved them (an older data folder has none saved: the camera's next
        board brings them)."""
        for saved in boards:  # all read before any is kept: a damaged row brings back nothing
            uncertain = tuple(self.place(p) for p in saved.uncertain)
            if saved.board and all(isinstance(r, list) and len(r) == 2 for r in saved.board):
                self.start = dict(self.start_place(r) for r in saved.board)
            else:
                readings = [self.reading(r) for r in saved.board]
                tapped = [(colour, shape) for shape, _, _, colour, _ in readings if colour is not None]
                if len(tapped) > 1:
                    raise SessionError("the camera's last token readings are damaged: more than one token "
                                       "waits for its push")
                self.camera = {shape: tok for shape, tok, _, _, _ in readings}
                self.grew_with = {shape: grew for shape, _, grew, _, _ in readings}
                self.pushed_by = tapped[0] if tapped else None
                self.read_at = {shape: at for shape, _, _, _, at in readings if at is not None}
                self.boards = max(self.read_at.values(), default=0)
                # a chip fix the camera's last reading no longer shows was ended by it, as live
                self.stack_fixes = {k: f for k, f in self.stack_fixes.items()
                                    if k not in self.camera or f.apply(self.camera[k]) is not None}
            self.uncertain = uncertain

    def start_place(self, saved: list) -> tuple[Pos, str | None]:
        """A saved place of the starting field with its shape (None: not named yet);
        SessionError when the place is no row and column or the shape not the catalogue's."""
        shape = saved[1]
        if shape is not None and not self.is_shape(shape):
            raise SessionError("the camera's last token readings are damaged: a token of the starting field is "
                               "not this game's")
        return self.place(saved[0]), shape

    def reading(self, saved: Any) -> tuple[str, Token, bool, str | None, int | None]:
        """A saved token reading with its ``grew_with`` flag, its ``pushed_by`` colour and its
        ``read_at`` board (a row saved before session 22 has four items, one of session 22's
        rounds five: none); SessionError when it is not a token of the catalogue with chips of
        this table (a damaged row: the readings are not resumed on a guess)."""
        colours = set(self.setup.colour_names)
        if not (isinstance(saved, list) and len(saved) in (4, 5, 6) and self.is_shape(saved[0])
                and isinstance(saved[1], list) and all(isinstance(c, str) and c in colours for c in saved[1])
                and isinstance(saved[2], bool) and isinstance(saved[3], bool)
                and (len(saved) == 4 or saved[4] is None or saved[4] in self.setup.turn_order)
                and (len(saved) < 6 or saved[5] is None or (type(saved[5]) is int and saved[5] > 0))):
            raise SessionError("the camera's last token readings are damaged: a token or a chip in them is "
                               "not this game's")
        pushed_by = saved[4] if len(saved) >= 5 else None
        read_at = saved[5] if len(saved) == 6 else None
        return saved[0], Token(saved[0], tuple(saved[1]), height_known=saved[2]), saved[3], pushed_by, read_at

    @staticmethod
    def place(saved: Any) -> Pos:
        """A saved place the camera could not read; SessionError when it is no [row, col]."""
        if not (isinstance(saved, list) and len(saved) == 2 and all(type(x) is int for x in saved)):
            raise SessionError("the camera's last token readings are damaged: a place it could not read is "
                               "no row and column")
        return saved[0], saved[1]

    def renamed(self, was: str, now: str) -> None:
        """The token the game calls ``was`` is ``now``: so are the camera's names for it."""
        self.renames = _renaming(self.renames, was, now)
        if was in self.stack_fixes:
            self.stack_fixes[now] = self.stack_fixes.pop(was)
        if was in self.camera:  # its last reading, which a tap before the next board reads
            self.camera[now] = replace(self.camera.pop(was), shape=now)
        if was in self.grew_with:
            self.grew_with[now] = self.grew_with.pop(was)
        if was in self.read_at:
            self.read_at[now] = self.read_at.pop(was)
        if self.pushed_by is not None and self.pushed_by[1] == was:
            self.pushed_by = (self.pushed_by[0], now)

    def corrected_shapes(self) -> set[str]:
        """The tokens (by the game's names) the user's word stands for against the camera."""
        return set(self.stack_fixes) | set(self.renames.values()) | set(self.start_fixes.values())

    def turn_events(self, derived: Derived, index: int) -> list[int]:
        return list(derived.entries[index].move.events)

    # --- input ---------------------------------------------------------------------------

    def observe(self, derived: Derived, board: Any, uncertain: Sequence, t: float) -> list[Item]:
        seen, unsure, shapeless = self.read(board)
        unsure += self.unsure_places(uncertain)
        game = derived.game
        if game is None:
            self.uncertain = tuple(unsure)
            return self.observe_start(seen, t)
        seen = {p: replace(tok, shape=self.renames.get(tok.shape, tok.shape)) for p, tok in seen.items()}
        fresh = [tok.shape for tok in seen.values()
                 if tok.shape not in self.camera or self.camera[tok.shape].stack != tok.stack]
        self.camera.update((tok.shape, tok) for tok in seen.values())
        read_before, self.boards = dict(self.read_at), self.boards + 1
        self.read_at.update((shape, self.boards) for shape in fresh)
        seen = self.with_stack_fixes(seen)
        playing = set(self.setup.turn_order)
        unsure += [p for p, tok in seen.items() if not set(tok.stack) <= playing]  # a chip no player has
        # The page draws the game's rows and columns: the camera's may be shifted (a push
        # grew the field up or left, or the camera counts from another corner token).
        dr, dc = _shift(game.tokens, seen) or (0, 0)
        places = set(seen) | set(unsure)
        grown = len(places) > len(game.tokens)
        self.grew_with.update((shape, grown) for shape in fresh)
        if grown:  # the tokens where the one push that lays them as read puts them, if one does
            laid = _laid_by_push(game.tokens, seen, places)
        else:  # no push moved a token: an unreadable one is the game's token at its place
            self.no_push_waits()
            laid = {(r - dr, c - dc): tok for (r, c), tok in game.tokens.items()}
        self.read_shapeless(laid, shapeless, {tok.shape for tok in seen.values()}, grown)
        # Ringed where the page draws the token (on a pushed line the shift is one step off).
        at = {tok.shape: p for p, tok in game.tokens.items()}
        self.uncertain = tuple(sorted({at[laid[p].shape] if p in laid else (p[0] + dr, p[1] + dc) for p in unsure}))
        if self.uncertain:
            return []  # a token or stack the camera could not make out: wait for a clearer board
        pushed_by, self.pushed_by = self.pushed_by, None
        turn = self.explain(game, seen)
        if turn is not None:
            self.no_push_waits()
            if turn == "same" or _shows_refused_turn(derived, game, turn):
                return []
            if self.went_first(derived, turn, fresh, read_before):
                turn["first"] = True
            return [("turn", {**self.with_tapped_push(derived, turn, pushed_by, read_before), "source": "camera",
                              "t": t})]
        for k in (1, 2):  # tokens or chips gone: a turn or two taken back
            if len(derived.entries) >= k:
                earlier = self.play(derived.core, derived.entries[:-k]).game
                if self.explain(earlier, seen) == "same":
                    self.no_push_waits()
                    events = [e for entry in derived.entries[-k:] for e in entry.move.events]
                    return [("take_back", {"events": events, "source": "camera", "t": t})]
        return []  # a board no turn explains, with a push not logged, waits as a held one does

    def went_first(self, derived: Derived, turn: dict, fresh: Sequence[str], read_at: Mapping[str, int]) -> bool:
        """Whether the chips of a camera turn that continues a turn made by a tap went down
        before the tapped chip: they were read before this board, not after the tapped chip
        (``read_at``: the board each token's reading was first read on; on the held board the
        tap was made on, the camera saw no order), and the rules find that order less wrong
        (an own chip beside a capture, G3, put down first). Pushes keep their own order."""
        last = derived.entries[-1].move if derived.entries else None
        if not turn.get("continues") or last is None or not last.tapped or last.push is not None \
                or "push" in turn or any(c["token"] in fresh for c in turn["chips"]):
            return False
        tapped = [read_at.get(s.token) for s in last.slots]
        if None not in tapped and any(read_at.get(c["token"], 0) > max(tapped) for c in turn["chips"]):
            return False  # read on a board after the tapped chip: the camera saw it go down later
        before = self.play(derived.core, derived.entries[:-1]).game
        chips = _slots(turn)

        return self.least_wrong(before, [replace(last, slots=_joined(last.slots, chips)),
                                         replace(last, slots=_joined(chips, last.slots))]) == 1

    def with_tapped_push(self, derived: Derived, turn: dict, pushed_by: tuple[str, str] | None,
                         read_at: Mapping[str, int]) -> dict:
        """A push the camera reads with no chips, on the first board it reads after
        ``pushed_by``'s chips were tapped on a held board that showed a token new to the field,
        continues that turn: the push was on the board with those chips, and the camera never
        sees a push's colour (the colour to move is by then the next one). After a board read
        in between without the push, or a turn logged since, it is the colour to move's, as
        before.

        The held board showed the push and the tapped chips together, in no order: the push
        goes before them (the camera's order) unless the rules find it less wrong after them
        (``tapped_first``), as for a push and chips seen together on a board read (see
        likeliest_order): a block beside its own chip, say, whose token the push then moved.
        Not where the camera read the pushed token on a board before the tapped chips
        (``read_at``: the board each reading was first read on; that board held too): it saw
        the push go first, and a block that breaks a rule after it is flagged."""
        last = derived.entries[-1].move if derived.entries else None
        if pushed_by is None or last is None or last.colour != pushed_by[0] or last.push is not None \
                or "push" not in turn or turn["chips"]:
            return turn
        doc = {**turn, "colour": pushed_by[0], "continues": True, "with": [pushed_by[1]]}
        tapped = next((i for i, s in enumerate(last.slots) if s.token == pushed_by[1]), None)
        push_read, tapped_read = read_at.get(turn["push"]["token"]), read_at.get(pushed_by[1])
        if tapped is not None and (push_read is None or tapped_read is None or push_read >= tapped_read):
            before = self.play(derived.core, derived.entries[:-1]).game
            push = _push(turn)
            if self.least_wrong(before, [replace(last, push=push, push_after=tapped),
                                         replace(last, push=push, push_after=tapped + 1)]) == 1:
                doc["tapped_first"] = True
        return doc

    def least_wrong(self, game: geometrius.Game, orders: Sequence[Turned]) -> int:
        """Which of ``orders`` (one turn's actions in the orders they may have gone down,
        the camera's first) breaks the fewest rules played on ``game``: the measure by which
        actions the camera saw in no order are put in the least wrong one. On a tie the
        earlier order stands, so the camera's is left only for one the rules find better."""
        return min(range(len(orders)),
                   key=lambda i: len(game.play(self.move(game, orders[i])).turns[-1].violations))

    def no_push_waits(self) -> None:
        """The board the camera read shows no push that waits to be logged (no token more than
        the field, or the log explains it): no chip read so far came with one (``grew_with``)."""
        self.grew_with = dict.fromkeys(self.grew_with, False)

    def with_stack_fixes(self, seen: dict[Pos, Token]) -> dict[Pos, Token]:
        """The camera's field with the corrected chips as meant (a fix the camera no longer
        bears out is dropped: the table changed)."""
        out = dict(seen)
        for p, tok in seen.items():
            fix = self.stack_fixes.get(tok.shape)
            if fix is None:
                continue
            meant = fix.apply(tok)
            if meant is None:
                del self.stack_fixes[tok.shape]
            else:
                out[p] = meant
        return out

    def observe_start(self, seen: dict[Pos, Token], t: float) -> list[Item]:
        """The starting field: sixteen empty tokens in a square. Places the camera cannot read
        wait for the user to name their shape (or for a clearer board)."""
        places = set(seen) | set(self.uncertain)
        self.start = _start_square(places)
        if not self.start or any(seen[p].stack for p in seen if p in places):
            self.start = {}
            return []
        r0, c0 = min(p[0] for p in places), min(p[1] for p in places)
        unsure = set(self.uncertain)
        for p in places:
            at = (p[0] - r0, p[1] - c0)
            self.start[at] = seen[p].shape if p in seen and p not in unsure else self.start_fixes.get(at)
        self.uncertain = tuple(p for p, shape in self.start.items() if shape is None)
        field = self.start_field()
        return [("layout", {"field": field, "source": "camera", "t": t})] if field else []

    def start_field(self) -> list[list[str]] | None:
        """The starting field's rows once every shape in it is known (and each once)."""
        shapes = list(self.start.values())
        if len(shapes) != geometrius.FIELD_SIZE ** 2 or None in shapes or len(set(shapes)) != len(shapes):
            return None
        size = geometrius.FIELD_SIZE
        return [[self.start[(r, c)] for c in range(size)] for r in range(size)]

    def read(self, board: Any) -> tuple[dict[Pos, Token], list[Pos], dict[Pos, Token]]:
        """The camera's tokens by place, the places it could not read (unknown shape or
        chips), and of those the ones whose chips it read (a token with no shape yet)."""
        seen: dict[Pos, Token] = {}
        unsure: list[Pos] = []
        shapeless: dict[Pos, Token] = {}
        for raw in board or ():
            pos = (int(raw["row"]), int(raw["col"]))
            try:  # the camera names the physical chips; the table may call them otherwise
                stack = self.setup.table_colours(raw.get("stack") or ())
            except ValueError:
                stack = None
            known = raw.get("stack_height_known", True) is not False
            if raw.get("shape") not in self.setup.catalogue.shapes or stack is None:
                unsure.append(pos)
                if stack is not None:
                    shapeless[pos] = Token("", stack, height_known=known)
                continue
            seen[pos] = Token(raw["shape"], stack, height_known=known)
        return seen, unsure, shapeless

    def read_shapeless(self, laid: Mapping[Pos, Token], shapeless: Mapping[Pos, Token], read: set[str],
                       grown: bool) -> None:
        """The chips read on tokens whose shape the camera could not make out (``shapeless``,
        by the camera's places) as the last readings of the game's tokens there (``laid``: the
        game's tokens by the camera's places, those a push brings included; {} when the board
        does not tell), unless read elsewhere on the board. ``grown``: the board shows a token
        more than the field (a push not logged: see ``grew_with``).

        A tap on such a token (the board is held) reads the chips the log lacks from its
        last reading: the one before the hand or glare would lack the chip just put there,
        and the tap would take a logged chip for the misread one (or, on a board with a push,
        would not know that the chip came with the push)."""
        for pos, tok in shapeless.items():
            token = laid.get(pos)
            if token is not None and token.shape not in read:
                if token.shape not in self.camera or self.camera[token.shape].stack != tok.stack:
                    self.read_at[token.shape] = self.boards
                    self.grew_with[token.shape] = grown
                self.camera[token.shape] = replace(tok, shape=token.shape)

    def unsure_places(self, uncertain: Sequence) -> list[Pos]:
        out = []
        for u in uncertain:
            if isinstance(u, Mapping):
                out.append((int(u["row"]), int(u["col"])))
            else:
                out.append((int(u[0]), int(u[1])))
        return out

    def explain(self, game: geometrius.Game, seen: dict[Pos, Token]) -> dict | str | None:
        """The turn that makes ``game``'s field the field ``seen``: "same" for none, None when
        no turn does (tokens gone, stacks shrunk, a new token no push explains)."""
        shapes = {t.shape for t in game.tokens.values()}
        new = [t.shape for t in seen.values() if t.shape not in shapes]
        if len(new) > 1 or len(seen) != len(game.tokens) + len(new):
            return None
        after, push = game.tokens, None
        if new:
            (pos,) = [p for p, t in seen.items() if t.shape == new[0]]
            rough = _shift(game.tokens, seen)
            if rough is None:
                return None
            row, col = pos[0] + rough[0], pos[1] + rough[1]  # the game's line numbers
            for candidate in (Push(new[0], "row", row, "left"), Push(new[0], "row", row, "right"),
                              Push(new[0], "col", col, "top"), Push(new[0], "col", col, "bottom")):
                pushed_field = geometrius.pushed(game.tokens, candidate)[0]
                if _translation(pushed_field, seen) is not None:
                    push, after = candidate, pushed_field
                    break
            if push is None:
                return None
        shift = _translation(after, seen)
        if shift is None:
            return None
        chips: list[dict] = []
        colours = set()
        for p, tok in seen.items():
            had = after[(p[0] + shift[0], p[1] + shift[1])].stack
            added = _added(had, tok)
            if added is None:
                return None
            if added:
                colours.add(added[0])
                chips.append({"token": tok.shape, "count": added[1]})
        if len(colours) > 1:
            return None
        if push is None and not chips:
            return "same"
        colour = colours.pop() if colours else game.colour_to_move
        pushing = None if push is None else (push.token, push.line, push.index, push.end)
        ordered, push_after = self.likeliest_order(game, colour, pushing, chips)
        doc: dict = {"colour": colour, "chips": ordered}
        if push is not None:
            doc["push"] = dict(zip(("token", "line", "index", "end"), pushing))
        if push_after:  # no key: the push went down first (every turn logged before session 22)
            doc["push_after"] = push_after
        last = game.turns[-1].move if game.turns else None
        # a declared pass is a whole turn (G10): chips after it are a turn of their own
        if last is not None and not last.passed and last.colour == colour and chips \
                and _fits_one_turn(last, push, chips):
            doc["continues"] = True
        return doc

    def likeliest_order(self, game: geometrius.Game, colour: str, push: tuple | None,
                        chips: list[dict]) -> tuple[list[dict], int]:
        """The chips one board shows put down, in the order the rules find least wrong, and
        how many of them went down before the board's push.

        The camera does not see in which order the chips and the push seen together went
        down, and the order matters: a chip on an empty token can be the own chip beside a
        capture (G3, G5) made after it, and a push moves the tokens the chips are judged
        beside (G7: in any order). The camera's order (the push first, the chips by place) is
        kept where no other is better, and where the board shows more tokens chipped than a
        turn may chip (G6: it is flagged whatever the order, and the orders grow as a factorial).
        """
        actions = ([None] if push is not None else []) + chips  # None: the push
        if len(actions) < 2 or len(chips) > geometrius.CHIPS_PER_TURN:
            return chips, 0
        orders = list(permutations(actions))
        order = orders[self.least_wrong(game, [
            Turned(colour, push, tuple(Slot(c["token"], c["count"]) for c in way if c is not None),
                   push_after=_before_push(way)) for way in orders])]
        return [c for c in order if c is not None], _before_push(order)

    def correction(self, derived: Derived, doc: dict) -> dict:
        """``{"at": [r, c], "top": colour or "."}``: the top chip there is really that (or
        no chip was put there); ``{"at": [r, c], "shape": id}``: the token shows that shape."""
        game = derived.game
        at = doc.get("at")
        pos = tuple(at) if isinstance(at, list) and len(at) == 2 and all(type(x) is int for x in at) else None
        if game is None:
            return self.start_correction(pos, doc.get("shape"))
        if pos not in game.tokens:
            raise SessionError(f"no token lies at {at!r}")
        token = game.tokens[pos]
        if "shape" in doc:
            shape = doc["shape"]
            if not self.is_shape(shape):
                raise SessionError(f"the catalogue has no token {shape!r}")
            if shape != token.shape and any(t.shape == shape for t in game.tokens.values()):
                raise SessionError(f"{shape} already lies elsewhere on the field (each token exists once)")
            self.renamed(token.shape, shape)
            self.uncertain = tuple(p for p in self.uncertain if p != pos)  # the user has read it
            return {"at": list(pos), "shape_was": token.shape, "shape": shape}
        top = doc.get("top")
        playing = self.setup.turn_order
        if top not in playing + (NO_CHIP,):  # a colour no player has would be a turn nobody can make
            raise SessionError(f"a chip of this game is {', '.join(playing)} (or . for none), not {top!r}")
        payload: dict = {"at": list(pos), "token": token.shape, "top": top}
        self.uncertain = tuple(p for p in self.uncertain if p != pos)  # the user has read it
        seen = self.camera.get(token.shape)
        if seen is None:
            return payload
        # The camera shows more chips there than the log has: they were never logged (they
        # could not be read), so they are added rather than put in place of the logged top;
        # all of them when those under the top read as the tapped colour on the game's stack
        # (a block's two chips, the top one misread), else the top one. The log, not the
        # field: a chip misread as a colour with no turns left is logged, and not on the field.
        logged = _logged(derived.entries, token.shape)
        unlogged = 0
        if seen.height_known and len(seen.stack) > logged:
            under = seen.stack[logged:-1]
            whole = seen.stack[:len(token.stack)] == token.stack and all(c == top for c in under)
            unlogged = payload["unlogged"] = len(seen.stack) - logged if whole else 1
            if self.grew_with.get(token.shape) and top != NO_CHIP:
                self.pushed_by = (top, token.shape)  # first read on a held board with a push not logged
        elif self.pushed_by is not None and self.pushed_by[1] == token.shape:  # tapped again
            self.pushed_by = (top, token.shape) if top != NO_CHIP else None
        entries = _top_corrected(list(derived.entries), token.shape, top, unlogged, None)
        meant = next(t.stack for t in self.play(derived.core, entries).game.tokens.values()
                     if t.shape == token.shape)
        payload.update(misread=list(seen.stack), meant=list(meant))
        self.stack_fixes.pop(token.shape, None)
        if seen.stack != meant:
            self.stack_fixes[token.shape] = StackFix(seen.stack, meant)
        return payload

    def is_shape(self, shape: Any) -> bool:
        """Whether the page named a token of the catalogue (a JSON list or object is none)."""
        return isinstance(shape, str) and shape in self.setup.catalogue.shapes

    def start_correction(self, pos: Pos | None, shape: Any) -> dict:
        """A shape named for a place of the starting field the camera could not read; with the
        last one named, the field is complete and the game starts."""
        if pos not in self.start:
            raise SessionError("the starting field has not been seen yet: lay out the 4 × 4 tokens")
        if not self.is_shape(shape):
            raise SessionError(f"the catalogue has no token {shape!r}")
        if any(s == shape for p, s in self.start.items() if p != pos):
            raise SessionError(f"{shape} already lies elsewhere on the field (each token exists once)")
        self.start[pos] = self.start_fixes[pos] = shape
        self.uncertain = tuple(p for p, s in self.start.items() if s is None)
        payload: dict = {"at": list(pos), "shape": shape, "start": True}
        field = self.start_field()
        if field:
            payload["field"] = field
        return payload

    def amendment(self, derived: Derived, doc: dict) -> dict:
        """The cards tapped for the chips a turn put on one token."""
        event, token, cards = doc.get("event"), doc.get("token"), doc.get("cards")
        entry = next((e for e in derived.entries if e.event_id == event), None)
        if entry is None:
            raise SessionError(f"there is no logged turn {event!r}")
        slot = next((s for s in entry.move.slots if s.token == token), None)
        if slot is None:
            raise SessionError(f"that turn put no chip on {token!r}")
        if not isinstance(cards, list) or not 1 <= len(cards) <= 2 or not all(isinstance(c, str) for c in cards):
            raise SessionError("tap one card (two for a block)")
        unknown = [c for c in cards if c not in self.setup.catalogue.cards]
        if unknown:
            raise SessionError(f"the catalogue has no card {', '.join(unknown)}")
        # Cards for more chips than the log has there: the user's word that a chip the camera
        # could not read is there (a block's second chip, read as another colour and doubted),
        # as a top tapped there is; read first on a held board with a push not logged, the
        # push came with it (see correction).
        seen = self.camera.get(token)
        if len(cards) > slot.count and seen is not None and seen.height_known \
                and len(seen.stack) > _logged(derived.entries, token) and self.grew_with.get(token):
            self.pushed_by = (entry.move.colour, token)
        return {"event": event, "token": token, "cards": cards}

    def pass_payload(self, derived: Derived) -> dict:
        if derived.game is None:
            raise SessionError("the starting field has not been seen yet")
        return super().pass_payload(derived)

    # --- output --------------------------------------------------------------------------

    def move_cells(self, move: geometrius.Move) -> tuple:
        """Where the turn's chips lie once it is made: a chip put down before the turn's push
        on the pushed line moved one step with it (G7)."""
        cells: list[Pos] = []
        for a in move.actions:
            if isinstance(a, Push):
                cells = [geometrius.along(p, a) for p in cells]
            elif isinstance(a, Place):
                cells.extend(a.at)
        return tuple(cells)

    def layout(self, derived: Derived) -> dict:
        catalogue = self.setup.catalogue
        return {
            "shape": "tokens",
            "shapes": {s.id: {"vertices": _unit(s.vertices), "star": s.star} for s in catalogue.shapes.values()},
            "cards": [{"id": c.id, "text": c.text_en or str(c.predicate),
                       "matches": [s for s in catalogue.shapes if catalogue.accepts(c.id, s)]}
                      for c in catalogue.cards.values()],
            "pickable": list(self.setup.colour_names),
            "paint": dict(zip(self.setup.colour_names, geometrius.COLOURS)),  # each name's chip, as drawn
        }

    def scores(self, derived: Derived) -> dict:
        if derived.game is None:
            return geometrius.score_field({}, self.setup.player_list, self.setup.catalogue, over=False).to_json()
        return geometrius.score_field(derived.game.tokens, self.setup.player_list, self.setup.catalogue,
                                      over=derived.game.over).to_json()

    def view(self, derived: Derived) -> dict:
        game = derived.game
        if game is None:
            tokens = [{"row": r, "col": c, "shape": shape, "stack": [], "blocked": False}
                      for (r, c), shape in sorted(self.start.items())]
            return {"cells": {}, "last": None, "uncertain": [list(p) for p in self.uncertain],
                    "geometrius": {"waiting": True, "tokens": tokens, "turns": []}}
        last = next((t for t in reversed(game.turns) if not t.move.passed), None)
        at = {t.shape: p for p, t in game.tokens.items()}
        catalogue = self.setup.catalogue
        turns = []
        for index, (entry, turn) in enumerate(zip(derived.entries, game.turns)):
            slots = [{"token": s.token, "at": list(at[s.token]) if s.token in at else None, "chips": s.count,
                      "cards": list(s.cards),
                      "fits": [catalogue.accepts(c, s.token) for c in s.cards]} for s in entry.move.slots]
            turns.append({"index": index, "event": entry.event_id, "colour": entry.move.colour,
                          "push": entry.move.push[0] if entry.move.push else None, "slots": slots})
        return {
            "cells": {},
            "last": {"index": last.index, "colour": last.move.colour,
                     "cells": [list(p) for p in self.move_cells(last.move)]} if last else None,
            "uncertain": [list(p) for p in self.uncertain],
            # the tokens the user corrected while the camera still shows the misread: their chips,
            # their shape (renamed, or named where the starting field could not be read)
            "corrected": sorted(list(at[shape]) for shape in self.corrected_shapes() if shape in at),
            "geometrius": {
                "waiting": False,
                "tokens": [{"row": r, "col": c, "shape": t.shape, "stack": list(t.stack), "blocked": t.blocked}
                           for (r, c), t in sorted(game.tokens.items())],
                "turns": turns,
                "turns_left": {c: geometrius.TURNS - game.turns_made(c) for c in self.setup.turn_order},
            },
        }

    def record(self, derived: Derived) -> dict:
        if derived.game is None:
            raise SessionError("nothing to export: the starting field has not been seen yet")
        setup = replace(self.setup, layout=derived.core)
        return geometrius.record_json(replace(derived.game, setup=setup))


def _added(had: tuple[str, ...], seen: Token) -> tuple[str, int] | None:
    """(colour, chips) put on a stack that held ``had`` and now shows ``seen``: () for none,
    None when it cannot be play (chips gone, a chip under the top changed)."""
    if seen.height_known:
        if seen.stack == had:
            return ()
        extra = seen.stack[len(had):]
        if seen.stack[:len(had)] != had or not extra or len(set(extra)) != 1:
            return None
        return extra[0], len(extra)
    top = seen.stack[-1] if seen.stack else None
    if top == (had[-1] if had else None):
        return ()
    return (top, 1) if top is not None else None


def _logged(entries: Sequence[Entry], token: str) -> int:
    """How many chips the log puts on ``token`` (a turn refused for no turns left included:
    the camera shows its chip, the field lacks it)."""
    return sum(s.count for e in entries for s in e.move.slots if s.token == token)


def _fits_one_turn(last: geometrius.Move, push: Push | None, chips: list[dict]) -> bool:
    pushes = sum(isinstance(a, Push) for a in last.actions) + (push is not None)
    placed = sum(a.chips for a in last.actions if isinstance(a, Place))
    return pushes <= 1 and placed + sum(c["count"] for c in chips) <= geometrius.CHIPS_PER_TURN


def _before_push(order: Sequence[dict | None]) -> int:
    """How many chips come before the push (None) in ``order``; 0 without a push."""
    return order.index(None) if None in order else 0


def _push_after_joined(m: Turned, payload: dict) -> int:
    """``push_after`` of turn ``m`` continued by a camera event: a push it had stays where it
    was; a push the event brings goes after the turn's chips so far and the event's chips
    before it. A push joined to tapped chips (``with``: seen with them on a held board) went
    down after the chips seen on the boards before and, in no order the camera saw, with the
    tapped ones: before them, as the camera's order has it, or after them where the rules
    find that less wrong (``tapped_first``: see GeometriusAdapter.with_tapped_push)."""
    if m.push is not None:
        return m.push_after
    if _push(payload) is None:
        return 0
    if payload.get("with"):
        tapped = next((i for i, s in enumerate(m.slots) if s.token in payload["with"]), len(m.slots))
        return tapped + bool(payload.get("tapped_first"))
    return len(_joined(m.slots, _slots(payload)[:int(payload.get("push_after", 0))]))


def _places(tokens: Mapping[Pos, Token], slots: Sequence[Slot]) -> tuple[tuple[Place, ...], tuple[Slot, ...]]:
    """The chips of ``slots`` as placements on ``tokens``, and the slots on tokens not there
    (a token a push brings later)."""
    at = {t.shape: p for p, t in tokens.items()}
    actions: list[Place] = []
    for slot in slots:
        if slot.token not in at:
            continue
        cards = list(slot.cards) + [PENDING] * (slot.count - len(slot.cards))
        while cards:
            take, cards = cards[:2], cards[2:]
            actions.append(Place(tuple(take), (at[slot.token],)))
    return tuple(actions), tuple(s for s in slots if s.token not in at)


def _start_square(places: set[Pos]) -> dict[Pos, None]:
    """The places as a 4 × 4 square (row 0 first, from 0), or {} when they are not one."""
    size = geometrius.FIELD_SIZE
    if len(places) != size * size:
        return {}
    r0, c0 = min(p[0] for p in places), min(p[1] for p in places)
    square = {(r0 + r, c0 + c) for r in range(size) for c in range(size)}
    return {(r, c): None for r in range(size) for c in range(size)} if places == square else {}


def _with_cards(entry: Entry, payload: dict) -> Entry:
    m = entry.move
    slots = tuple(replace(s, cards=tuple(payload["cards"])) if s.token == payload["token"] else s for s in m.slots)
    return Entry(entry.event_id, replace(m, slots=slots))


def _renamed(layout: Any, entries: list[Entry], was: str, now: str) -> tuple[Any, list[Entry]]:
    """A token's shape corrected everywhere the log names it."""
    def name(shape: str) -> str:
        return now if shape == was else shape

    if layout is not None:
        layout = tuple(tuple(name(s) for s in row) for row in layout)
    out = []
    for e in entries:
        m = e.move
        push = None if m.push is None else (name(m.push[0]),) + tuple(m.push[1:])
        out.append(Entry(e.event_id, replace(m, push=push, pushed_with=tuple(map(name, m.pushed_with)),
                                             slots=tuple(replace(s, token=name(s.token)) for s in m.slots))))
    return layout, out


def _top_corrected(entries: list[Entry], token: str, top: str, unlogged: int,
                   event_id: int | None) -> list[Entry]:
    """The chip on top of ``token`` is really ``top``'s (or there is none).

    The logged chip leaves the turn of another colour that put it (one chip: a block keeps
    its other one), or, where that turn was a push seen with this chip alone, the turn is
    ``top``'s. Where the turn in progress (the last) had chips before, a push seen with
    this chip alone leaves it with the chip: the camera never sees a push's colour, the
    push had the chip's. Chips the camera could not read were never logged (``unlogged``, how many: a
    record before session 21 says true, one), so none leaves. The ``top`` chips
    then join the last turn if that is ``top``'s (the turn in progress), or else are a turn
    of their own, made now: an earlier turn of that colour is over and cannot grow. A chip
    that leaves a turn logged before the one it joins went down before that turn's chips and
    push (the camera saw it first); one never logged, or from the turn it joins, goes last.
    """
    out = list(entries)
    carried = None  # the push that leaves with the chip
    chip_first = False  # that chip went down before the push
    older = False  # the chip leaves a turn logged before the last one
    for i in ([] if unlogged else range(len(out) - 1, -1, -1)):
        m = out[i].move
        slot = next((s for s in reversed(m.slots) if s.token == token), None)
        if slot is None:
            continue
        if m.colour == top:
            return out
        with_push = top != NO_CHIP and m.push is not None and m.pushed_with == (token,) and slot.count == 1
        if with_push and m.slots == (slot,):
            # A push seen on one board with this chip only: the push's colour is never seen,
            # the turn had the chip's, so it is ``top``'s turn: the rest of ``top``'s turn in
            # progress where the turn before is that (a colour never moves twice running).
            # The turn before fits it when their chips together are no more than a turn's: a
            # block's second chip its two cards already count adds none (seed 414, session 23).
            before = out[i - 1].move if i else None
            slots = _joined(before.slots, m.slots) if before is not None else ()
            if before is not None and before.colour == top and before.push is None \
                    and sum(s.count for s in slots) <= geometrius.CHIPS_PER_TURN:
                out[i - 1] = Entry(out[i - 1].event_id, replace(before, push=m.push, slots=slots,
                                                                events=before.events + m.events,
                                                                pushed_with=m.pushed_with,
                                                                push_after=len(_joined(before.slots,
                                                                                       m.slots[:m.push_after]))))
                del out[i]
            else:
                out[i] = Entry(out[i].event_id, replace(m, colour=top))
            return out
        fewer = replace(slot, chips=slot.count - 1, cards=slot.cards[:slot.count - 1])
        older = i < len(out) - 1
        carried = m.push if with_push and not older else None
        chip_first = m.slots.index(slot) < m.push_after
        left = replace(m, slots=tuple((fewer if s is slot else s) for s in m.slots if s is not slot or fewer.chips),
                       push=None if carried else m.push, pushed_with=() if carried else m.pushed_with,
                       push_after=0 if carried else m.push_after - (chip_first and not fewer.chips))
        if left.slots or left.push is not None:
            out[i] = Entry(out[i].event_id, left)
        else:
            del out[i]  # that turn was only this chip: it was never made
        break
    if top == NO_CHIP:
        return out
    chips = (Slot(token, max(unlogged, 1)),)
    if out and out[-1].move.colour == top:
        m = out[-1].move
        if older and all(s.token != token for s in m.slots):  # seen first: it went down first
            turned = replace(m, slots=chips + m.slots,
                             push_after=m.push_after + 1 if m.push else 0)
        else:
            turned = replace(m, slots=_joined(m.slots, chips))
        out[-1] = Entry(out[-1].event_id, turned)
        return out
    return out + [Entry(event_id, Turned(top, carried, chips, (event_id,), (token,) if carried else (),
                                         int(bool(carried) and chip_first), tapped=True))]


def _shows_refused_turn(derived: Derived, game: geometrius.Game, turn: dict) -> bool:
    """Whether the camera's turn is the last logged one again: a turn by a colour with no
    turns left (G10) is logged, not carried out, so the field lacks its chips (and push), and
    every board the camera reads after shows them on it as new (until a tap corrects them)."""
    if not game.turns or "no_turns_left" not in {v.code for v in game.turns[-1].violations}:
        return False
    last = derived.entries[-1].move
    return (turn["colour"], _push(turn), Counter((c["token"], c["count"]) for c in turn["chips"])) == \
        (last.colour, last.push, Counter((s.token, s.count) for s in last.slots))


def _unit(vertices: Sequence[Sequence[float]]) -> list[list[float]]:
    """A polygon fitted into the unit square (y down, as drawn on a token)."""
    xs, ys = [v[0] for v in vertices], [v[1] for v in vertices]
    size = max(max(xs) - min(xs), max(ys) - min(ys)) or 1
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    return [[round((x - cx) / size + .5, 4), round(.5 - (y - cy) / size, 4)] for x, y in vertices]
