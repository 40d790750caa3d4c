"""The placement engine shared by the polyomino-like games (Blokus, Gemblo).

Both games are "place one piece of your colour per turn; never touch your own colour along
an edge; touch it at a corner (Blokus) or across a bridge (Gemblo); start on a start cell".
This module implements that once, on any :class:`~rules.board.Board`, and reports every
rule a placement breaks with the game's own reason codes. Everything here is pure: a
:class:`Position` or :class:`Match` is never changed, moves return new ones.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Iterable, Mapping, Sequence

from .board import Board, bits
from .lattice import Cell
from .pieces import PieceSet
from .scoring import Flag


@dataclass(frozen=True)
class Reason:
    """A reason code as the rules file names it, with the rule id it quotes."""

    code: str
    rule: str
    text: str


@dataclass(frozen=True)
class Violation:
    code: str
    rule: str
    message: str
    cells: tuple[Cell, ...] = ()
    warning: bool = False


# The steps of a check; each game maps them to its own codes and rule ids.
STEPS = (
    "off_board", "outside_zone", "overlap", "not_a_piece", "piece_already_used", "first",
    "edge_contact", "connect", "blocked", "wrong_turn", "illegal_pass",
)


@dataclass(frozen=True)
class PlacementTable:
    """Every placement of every piece inside a zone, indexed by the cells it covers.

    ``by_cell[i][piece]`` lists the masks of that piece's placements covering cell ``i``:
    legal-move generation only looks at placements through the few cells where a colour
    may connect, instead of scanning all of them.
    """

    masks: tuple[tuple[str, int], ...]
    by_cell: tuple[Mapping[str, tuple[int, ...]], ...]

    @classmethod
    def build(cls, board: Board, zone: int, pieces: PieceSet) -> "PlacementTable":
        masks: list[tuple[str, int]] = []
        by_cell: list[dict[str, list[int]]] = [dict() for _ in board.cells]
        anchors = board.cells_of(zone)
        for piece in pieces.pieces:
            seen: set[int] = set()
            for form in piece.orientations:
                first = min(form)
                for anchor in anchors:
                    da, db = anchor[0] - first[0], anchor[1] - first[1]
                    try:
                        m = board.mask((c[0] + da, c[1] + db) + tuple(c[2:]) for c in form)
                    except KeyError:
                        continue
                    if m & ~zone or m in seen:
                        continue
                    seen.add(m)
                    masks.append((piece.id, m))
                    for i in bits(m):
                        by_cell[i].setdefault(piece.id, []).append(m)
        return cls(tuple(masks), tuple({k: tuple(v) for k, v in d.items()} for d in by_cell))


@dataclass(frozen=True)
class PlacementRules:
    """One game's placement rules on one board, as data."""

    game: str
    board: Board
    zone: int  # active cells (a Gemblo player count uses part of the board)
    pieces: PieceSet
    colours: tuple[str, ...]  # turn order
    starts: Mapping[str, int]  # per colour: cells one of which the first piece must cover
    reasons: Mapping[str, Reason]
    names: Mapping[str, str] = field(default_factory=dict)  # colour letter -> name, for messages
    blockable: bool = False  # a contact is cut when one piece covers both cells between
    unchecked: frozenset[str] = frozenset()  # colours laid out freely (Blokus neutral_free)

    @cached_property
    def table(self) -> PlacementTable:
        return PlacementTable.build(self.board, self.zone, self.pieces)

    @property
    def rotation(self) -> tuple[str, ...]:
        """The colours that take turns."""
        return tuple(c for c in self.colours if c not in self.unchecked)

    def name(self, colour: str) -> str:
        return self.names.get(colour, colour)

    def violation(self, step: str, cells: Iterable[Cell] = (), warning: bool = False, **fmt) -> Violation:
        r = self.reasons[step]
        return Violation(r.code, r.rule, r.text.format(**fmt), tuple(cells), warning)


def shared_start(starts: Mapping[str, Sequence[int]]) -> tuple[str, str, list[int]] | None:
    """Two starts the table put on one cell, as (first, second, cell), else None. The first
    piece placed there takes the cell, so the other colour's first piece could never cover its
    start and all its moves would be flagged: such a table is a typing slip, not a game."""
    seen: dict[tuple[int, ...], str] = {}
    for name, cell in starts.items():
        first = seen.setdefault(tuple(cell), name)
        if first != name:
            return first, name, list(cell)
    return None


def start_taken(pinned: Mapping[str, Sequence[int]], starts: Mapping[str, Sequence[int]]
                ) -> tuple[str, str, list[int]] | None:
    """A start the table pinned on the cell another colour starts from by default, as (pinned,
    other, cell), else None; ``starts`` holds every colour's start, pinned or default. Two
    pinned on one cell are :func:`shared_start`'s to name."""
    if (shared := shared_start(starts)) and {shared[0], shared[1]} & set(pinned):
        first, second, cell = shared
        return (first, second, cell) if first in pinned else (second, first, cell)
    return None


@dataclass(frozen=True)
class Placed:
    colour: str
    piece: str | None  # None for a shape that is not a piece of the set
    mask: int


@dataclass(frozen=True)
class Position:
    """What lies on the board, with per-colour masks kept up to date for fast checks."""

    occupied: int = 0
    own: Mapping[str, int] = field(default_factory=dict)
    near: Mapping[str, int] = field(default_factory=dict)  # own cells and their edge neighbours
    reach: Mapping[str, int] = field(default_factory=dict)  # contact neighbours of own cells
    used: Mapping[str, frozenset[str]] = field(default_factory=dict)
    placed: tuple[Placed, ...] = ()
    cover: Mapping[int, int] = field(default_factory=dict)  # cell -> index into placed

    def add(self, board: Board, colour: str, piece: str | None, mask: int) -> "Position":
        number = len(self.placed)
        cover = dict(self.cover)
        for i in bits(mask):
            cover[i] = number
        own = self.own.get(colour, 0) | mask
        used = self.used.get(colour, frozenset())
        return Position(
            occupied=self.occupied | mask,
            own={**self.own, colour: own},
            near={**self.near, colour: self.near.get(colour, 0) | mask | board.grow(mask, board.edge)},
            reach={**self.reach, colour: self.reach.get(colour, 0) | board.grow(mask, board.contact_mask)},
            used={**self.used, colour: used | {piece} if piece else used},
            placed=self.placed + (Placed(colour, piece, mask),),
            cover=cover,
        )

    def pieces_of(self, colour: str) -> list[Placed]:
        return [p for p in self.placed if p.colour == colour]


def _open_contact(rules: PlacementRules, pos: Position, colour: str, cell: int) -> tuple[bool, bool]:
    """(touches own colour at a corner/bridge, and at least one such contact is open)."""
    own = pos.own.get(colour, 0)
    touches = False
    for t in rules.board.contact[cell]:
        if not own >> t.cell & 1:
            continue
        touches = True
        if not rules.blockable:
            return True, True
        c, d = t.between
        if c < 0 or d < 0 or pos.cover.get(c, -1) != pos.cover.get(d, -2):
            return True, True
    return touches, False


def check_placement(rules: PlacementRules, pos: Position, colour: str,
                    cells: Sequence[Cell]) -> tuple[str | None, list[Violation]]:
    """The piece these cells form and every rule the placement breaks (empty when legal)."""
    board, out = rules.board, []
    cells = [tuple(c) for c in cells]
    off = [c for c in cells if c not in board.index]
    if off:
        out.append(rules.violation("off_board", off))
    on = [c for c in cells if c in board.index]
    mask = board.mask(on)
    outside = mask & ~rules.zone
    if outside:
        out.append(rules.violation("outside_zone", board.cells_of(outside)))
    if mask & pos.occupied:
        out.append(rules.violation("overlap", board.cells_of(mask & pos.occupied)))
    piece = rules.pieces.identify(cells) if len(set(cells)) == len(cells) else None
    if piece is None:
        out.append(rules.violation("not_a_piece", cells))
    if colour in rules.unchecked:
        return piece, [v for v in out if v.code in (rules.reasons["off_board"].code,
                                                      rules.reasons["overlap"].code)]
    if piece is not None and piece in pos.used.get(colour, ()):
        out.append(rules.violation("piece_already_used", cells, piece=piece))
    if not pos.own.get(colour, 0):
        if not mask & rules.starts[colour]:
            out.append(rules.violation("first", cells))
        return piece, out
    own = pos.own[colour]
    # Each square beside its own colour, also one laid on top of its own colour (an overlap).
    touching = [board.cells[i] for i in bits(mask) if board.edge[i] & own]
    if touching:
        out.append(rules.violation("edge_contact", touching))
    if not mask & pos.reach[colour]:
        out.append(rules.violation("connect", cells))
    elif rules.blockable:
        contacts = [_open_contact(rules, pos, colour, i) for i in bits(mask & pos.reach[colour])]
        if not any(open_ for _, open_ in contacts):
            out.append(rules.violation("blocked", cells))
    return piece, out


def legal_placements(rules: PlacementRules, pos: Position, colour: str) -> list[tuple[str, int]]:
    """Every legal (piece, mask) for ``colour``, each placement once."""
    return list(_generate(rules, pos, colour))


def has_legal_placement(rules: PlacementRules, pos: Position, colour: str) -> bool:
    return next(_generate(rules, pos, colour), None) is not None


def _generate(rules: PlacementRules, pos: Position, colour: str):
    used = pos.used.get(colour, frozenset())
    if not pos.own.get(colour, 0):
        forbidden = pos.occupied
        anchors = rules.starts[colour] & ~forbidden
    else:
        forbidden = pos.occupied | pos.near[colour]
        anchors = pos.reach[colour] & ~forbidden
        if rules.blockable:
            anchors = sum(1 << i for i in bits(anchors) if _open_contact(rules, pos, colour, i)[1])
    seen: set[int] = set()
    by_cell = rules.table.by_cell
    for i in bits(anchors):
        for piece, masks in by_cell[i].items():
            if piece in used:
                continue
            for m in masks:
                if not m & forbidden and m not in seen:
                    seen.add(m)
                    yield piece, m


# --- reading a board as pieces -----------------------------------------------------------

@dataclass(frozen=True)
class Decomposition:
    """A board state read as pieces, with what it proves against the rules."""

    position: Position
    flags: tuple[Flag, ...]


def decompose(rules: PlacementRules, cells: Mapping[Cell, str], names: Mapping[str, str]) -> Decomposition:
    """Split a board (cell -> colour) into pieces per colour.

    Pieces of one colour never share an edge, so each edge-connected region of one colour
    is one piece. Regions that are not a piece or repeat one are flagged, and so is a
    colour whose pieces are not chained (corner or bridge) to a piece on a start cell.
    """
    board, placed, flags = rules.board, [], []
    for colour in rules.colours:
        parts = board.components(board.mask(c for c, col in cells.items() if col == colour))
        seen: set[str] = set()
        for part in parts:
            shape = board.cells_of(part)
            pid = rules.pieces.identify(shape)
            checked = colour not in rules.unchecked  # a freely laid colour may lie any way
            if checked and pid is None:
                flags.append(_flag(rules, "not_a_piece", shape, f"{len(shape)} {names[colour].lower()} cells "
                                   "joined along edges are not one piece (a shape outside the set, or pieces "
                                   "of one colour touching along an edge)"))
            elif checked and pid in seen:
                flags.append(_flag(rules, "piece_already_used", shape, f"{names[colour]} piece {pid} appears twice"))
                pid = None
            seen.add(pid)
            placed.append(Placed(colour, pid, part))
        if colour not in rules.unchecked:
            flags.extend(_chain_flags(rules, colour, parts, names[colour]))
    pos = Position()
    for p in placed:
        pos = pos.add(board, p.colour, p.piece, p.mask)
    return Decomposition(pos, tuple(flags))


def _flag(rules: PlacementRules, step: str, cells, message: str) -> Flag:
    reason = rules.reasons[step]
    return Flag(reason.rule, reason.code, tuple(cells), message)


def _chain_flags(rules: PlacementRules, colour: str, parts: list[int], name: str) -> list[Flag]:
    """A colour's pieces must form one chain grown from one start piece.

    A colour starts once (B3, M3): two chains each covering a start (blue on two corners with no
    corner contact between them, where corners are not fixed) prove one of them grew from a
    second first piece. The largest started chain is taken as the colour's; the rest are loose."""
    board = rules.board
    if not parts:
        return []
    chains = _chains(board, parts)
    started = [chain for chain in chains if any(parts[j] & rules.starts[colour] for j in chain)]
    if not started:
        every = [c for m in parts for c in board.cells_of(m)]
        return [_flag(rules, "first", every, f"no {name.lower()} piece covers its start")]
    kept = max(started, key=lambda chain: sum(parts[j].bit_count() for j in chain))
    loose = [m for j, m in enumerate(parts) if j not in kept]
    if not loose:
        return []
    return [_flag(rules, "connect", [c for m in loose for c in board.cells_of(m)],
                  f"{len(loose)} {name.lower()} piece(s) not connected to the colour's start piece")]


def _chains(board: Board, parts: list[int]) -> list[set[int]]:
    """``parts`` (indices) grouped by the contact a later piece needs (corner, or bridge)."""
    left, chains = set(range(len(parts))), []
    while left:
        frontier = [min(left)]
        chain = set(frontier)
        while frontier:
            touch = board.grow(parts[frontier.pop()], board.contact_mask)
            joined = {j for j in left - chain if touch & parts[j]}
            chain |= joined
            frontier.extend(joined)
        left -= chain
        chains.append(chain)
    return chains


# --- turns -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Move:
    colour: str
    cells: tuple[Cell, ...] = ()
    passed: bool = False


def rule_order(rule: str) -> tuple[int, str]:
    """Where rule id ``rule`` stands in its rules file: B4 before B5, G6 before G6a before
    G7; a turn rule without a number (Equilibrix's and Geometrius' ``turn``) comes last."""
    match = re.fullmatch(r"[A-Z]+(\d+)([a-z]*)", rule)
    return (int(match[1]), match[2]) if match else (sys.maxsize, rule)


@dataclass(frozen=True)
class Turn:
    """A judged move of any game: what was played and every rule it broke.

    ``move`` is the game's own move; ``piece`` names what it laid (a piece, a ring tile, or
    for Geometrius the turn in words).
    """

    index: int
    move: Any
    piece: str | None
    violations: tuple[Violation, ...]

    def __post_init__(self) -> None:
        # Listed in the rules file's order, so a verdict reads the same whichever check ran
        # first, and compares equal to any referee's that follows the rules file.
        object.__setattr__(self, "violations", tuple(sorted(self.violations, key=lambda v: rule_order(v.rule))))

    @property
    def legal(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class Match:
    """A game in progress: the position, whose turn it is and every judged move."""

    rules: PlacementRules
    position: Position = field(default_factory=Position)
    to_move: int = 0  # index into rules.rotation
    turns: tuple[Turn, ...] = ()

    @property
    def colour_to_move(self) -> str:
        return self.rules.rotation[self.to_move]

    def can_place(self, colour: str) -> bool:
        return has_legal_placement(self.rules, self.position, colour)

    @property
    def over(self) -> bool:
        """No colour in the rotation can place any more (B8 / M7)."""
        return not any(self.can_place(c) for c in self.rules.rotation)

    def last_piece(self, colour: str) -> str | None:
        """The piece ``colour`` laid on the board last (Blokus S3: "the last one placed").

        Read from the board, not the move list: a move refused as off the board or
        overlapping laid nothing, so it does not displace the piece that was placed last.
        """
        laid = self.position.pieces_of(colour)
        return laid[-1].piece if laid else None

    def play(self, move: Move) -> "Match":
        """Judge ``move`` and return the match after it.

        An illegal placement is still laid on the board when it physically can be (the
        record says it happened; later moves are judged against the board as it is) and
        the turn passes to the colour after the mover, so one mistake is flagged once.
        """
        rules, out = self.rules, []
        rotation = rules.rotation
        if move.colour not in rules.colours:
            raise ValueError(f"unknown colour {move.colour!r}")
        in_turn = move.colour in rotation
        if in_turn:
            skipped = self._skipped(move.colour)
            if any(self.can_place(c) for c in skipped):
                out.append(rules.violation("wrong_turn", expected=rules.name(self.colour_to_move),
                                           colour=rules.name(move.colour)))
        position, piece = self.position, None
        if move.passed:
            if in_turn and self.can_place(move.colour):  # a freely laid colour has no turn to pass
                out.append(rules.violation("illegal_pass", warning=True, colour=rules.name(move.colour)))
        else:
            piece, problems = check_placement(rules, position, move.colour, move.cells)
            out.extend(problems)
            cells = [tuple(c) for c in move.cells]
            physical = (all(c in rules.board.index for c in cells)
                        and len(set(cells)) == len(cells)
                        and not rules.board.mask(cells) & position.occupied)
            if physical:
                position = position.add(rules.board, move.colour, piece, rules.board.mask(cells))
        to_move = (rotation.index(move.colour) + 1) % len(rotation) if in_turn else self.to_move
        turn = Turn(len(self.turns), move, piece, tuple(out))
        return replace(self, position=position, to_move=to_move, turns=self.turns + (turn,))

    def _skipped(self, colour: str) -> list[str]:
        """Colours whose turn would be passed over if ``colour`` moved now."""
        rotation = self.rules.rotation
        k = (rotation.index(colour) - self.to_move) % len(rotation)
        return [rotation[(self.to_move + j) % len(rotation)] for j in range(k)]


def play_all(rules: PlacementRules, moves: Iterable[Move]) -> Match:
    match = Match(rules)
    for move in moves:
        match = match.play(move)
    return match


def random_playout(rules: PlacementRules, rng, max_placements: int | None = None) -> Match:
    """Self-play: each colour in turn lays a random legal piece, passing when it has none.

    ``rng`` is a ``numpy.random.Generator``. Stops when every colour has passed in a row
    (the game is over) or after ``max_placements`` pieces. Used to make test games and
    synthetic boards; every move it makes is legal by construction.
    """
    match, passes, placed = Match(rules), 0, 0
    board = rules.board
    while passes < len(rules.rotation) and (max_placements is None or placed < max_placements):
        colour = match.colour_to_move
        options = legal_placements(rules, match.position, colour)
        if options:
            _, mask = options[int(rng.integers(len(options)))]
            match = match.play(Move(colour, tuple(board.cells_of(mask))))
            passes, placed = 0, placed + 1
        else:
            match = match.play(Move(colour, passed=True))
            passes += 1
    return match
