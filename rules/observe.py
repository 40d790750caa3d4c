"""What happened on the table between two stable boards seen by the camera.

The live referee only sees board states, not moves: a hand comes in, the hand leaves, the
board holds still and is read. This module turns "the match so far" plus "the board now" into
moves the session can judge with :meth:`Match.play`. Usually one colour has a few new cells:
one placement. Players are quick, so two placements may fall between two stable boards; a
player may take a piece back (often right after the referee flags it) or nudge it (a take-back
and a new placement). Anything else -- a piece recoloured, an old piece gone, more than two
pieces at once -- is reported as unexplained with its cells: the referee asks the table instead
of guessing. Pieces of a colour that takes no turns (Gemblo's five-player obstacles, Blokus'
freely laid neutral) are the table's, not a player's: any number of them may come at once (the
15 obstacles laid before the start), and they are logged before the turn's pieces. Pure:
nothing here does I/O or changes its inputs.

Boards come in one game-neutral form, ``{cell: colour}`` of the occupied cells, so the same
diff serves Blokus' squares and Gemblo's hexes; Blokus' 20 rows are still taken as they are.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Mapping, Sequence

from .blokus import parse_board
from .board import Board
from .lattice import Cell
from .placement import Match, Move

EMPTY = "."  # the colour of an empty cell, when a cell must be named one (a correction)

# Occupied cells (``"q,r"`` keys as in a Gemblo state are accepted too), or Blokus' 20 rows.
BoardLike = Mapping[Cell, str] | Mapping[str, str] | Sequence[str]

# At most this many placements, and this many take-backs, between two stable boards.
# More than that is far likelier a misread or a bumped table than play. Pieces of a colour
# that takes no turns are not counted: the table lays those, as many as it likes.
MOST_PER_STEP = 2


@dataclass(frozen=True)
class Observed:
    """The explanation of a board change: undo ``taken_back`` placements, then play ``moves``.

    When ``unexplained_cells`` is not empty the change is not explained at all (no moves, no
    take-back): those are the cells that differ from the match. ``joined_cells`` are those of
    them that are pieces of a colour taking no turns laid touching along an edge where the rules
    block bridges: one region that is no piece, and which pieces lie there decides the bridges
    beside it (M6), so the table is asked to lay them apart. A touching region that makes a
    piece's shape (a monohex against a dihex: a trihex) cannot be told from that one piece on
    the board: it is logged as that piece, and M6 then blocks a bridge between the two.
    """

    moves: tuple[Move, ...] = ()
    taken_back: int = 0
    unexplained_cells: tuple[Cell, ...] = ()
    joined_cells: tuple[Cell, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.moves or self.taken_back or self.unexplained_cells)


def as_cell(value: Cell | Sequence[int] | str) -> Cell:
    """A cell from a tuple, a JSON list or a state's ``"q,r"`` key."""
    if isinstance(value, str):
        return tuple(int(x) for x in value.split(","))
    return tuple(int(x) for x in value)


def occupied(board: BoardLike) -> dict[Cell, str]:
    """The game-neutral board: ``{cell: colour}`` of the occupied cells only."""
    if isinstance(board, Mapping):
        return {as_cell(c): colour for c, colour in board.items() if colour != EMPTY}
    return parse_board(board)


def laid_cells(match: Match) -> dict[Cell, str]:
    """What the match has on the board, in the game-neutral form."""
    cells_of = match.rules.board.cells_of
    return {c: p.colour for p in match.position.placed for c in cells_of(p.mask)}


def observe(match: Match, stable: BoardLike) -> Observed:
    """Explain the ``stable`` board (see :func:`occupied`) as moves after ``match``."""
    board = match.rules.board
    seen = occupied(stable)
    laid = laid_cells(match)
    changed = sorted(c for c in seen.keys() | laid.keys() if seen.get(c) != laid.get(c))
    if not changed:
        return Observed()
    unexplained = Observed(unexplained_cells=tuple(changed))
    if any(c in seen and c in laid for c in changed):
        return unexplained  # a colour turned into another: a misread or a swap, not play
    if any(c not in board.index or seen[c] not in match.rules.colours for c in changed if c in seen):
        return unexplained  # off the board, or a colour not in this game: not play either
    gone = board.mask(c for c in changed if c in laid)
    count = _placements_covering(match, gone)
    free = match.rules.unchecked
    undone = match.position.placed[len(match.position.placed) - count:]
    if sum(p.colour not in free for p in undone) > MOST_PER_STEP:
        return unexplained  # obstacles laid since are taken back too, and logged again below
    before = take_back(match, count)
    still = laid_cells(before)
    new = {c: colour for c, colour in seen.items() if c not in still}
    # Laid freely, pieces of one colour may touch (Blokus V4 neutral_free: "any arrangement"):
    # such a region is logged as it lies, one unchecked move, never split by a guess. Where
    # bridges can be blocked (Gemblo's M6), which pieces make it decides whether a bridge beside
    # it is open, and the board cannot say: held, so the table lays them apart.
    laid_freely = tuple(Move(colour, cells) for colour, cells in regions(board, new, sorted(free)))
    if match.rules.blockable:
        joined = tuple(sorted(c for m in laid_freely if match.rules.pieces.identify(m.cells) is None for c in m.cells))
        if joined:
            return Observed(unexplained_cells=tuple(changed), joined_cells=joined)
    pieces = regions(board, new, match.rules.rotation)
    if len(pieces) > MOST_PER_STEP:
        return unexplained
    for move in laid_freely:
        before = before.play(move)
    return Observed(laid_freely + in_play_order(before, pieces), count)


def regions(board: Board, cells: Mapping[Cell, str], colours: Sequence[str]) -> list[tuple[str, tuple[Cell, ...]]]:
    """Each edge-connected region of one colour among ``cells``, colour by colour: in Blokus and
    Gemblo one piece each of a colour taking turns, since its pieces never share an edge (B5,
    M4); of a colour laid freely, or in Equilibrix (whose tiles of a colour may touch: its
    adapter logs at most two new regions a board), the region as it lies."""
    return [(colour, tuple(board.cells_of(part)))
            for colour in colours
            for part in board.components(board.mask(c for c, col in cells.items() if col == colour))]


def _placements_covering(match: Match, gone: int) -> int:
    """How many of the last placements must be undone so that every cell in ``gone`` is free."""
    count = 0
    for placed in reversed(match.position.placed):
        if not gone:
            break
        gone &= ~placed.mask
        count += 1
    return count


def in_play_order(match: Match, pieces: Sequence[tuple[str, tuple[Cell, ...]]]) -> tuple[Move, ...]:
    """The pieces as moves, in the order that breaks the fewest rules.

    Two quick placements leave no trace of their order; the kindest reading is the one a
    referee would accept, and among equally good ones the turn order from the colour to move.
    Only for pieces first seen together: a piece the live referee logs again after a lift keeps
    the place its log gives it (``CellAdapter.in_play_order``).
    """
    colours = match.rules.colours
    first = colours.index(match.colour_to_move)

    def cost(order: tuple[tuple[str, tuple[Cell, ...]], ...]) -> tuple[int, tuple[int, ...]]:
        m, broken = match, 0
        for colour, cells in order:
            m = m.play(Move(colour, cells))
            broken += sum(not v.warning for v in m.turns[-1].violations)
        return broken, tuple((colours.index(colour) - first) % len(colours) for colour, _ in order)

    best = min(permutations(pieces), key=cost)
    return tuple(Move(colour, cells) for colour, cells in best)


def take_back(match: Match, placements: int) -> Match:
    """The match as it was before its last ``placements`` pieces were laid.

    Turns after the first removed piece go too (a pass recorded after it may no longer be
    due); the rest is replayed, so every verdict is the one the match gave the first time.
    """
    if placements <= 0:
        return match
    keep = len(match.position.placed) - placements
    out = Match(match.rules)
    for turn in match.turns:
        after = out.play(turn.move)
        if len(after.position.placed) > keep:
            break
        out = after
    return out


def passes_due(match: Match) -> list[str]:
    """Colours, from the one to move on, that have no legal placement and so pass.

    The engine lets a colour without a legal placement be skipped; this names them so the
    page can say "Yellow passes". Every colour of the rotation when the game is over.
    """
    rotation = match.rules.rotation
    out = []
    for step in range(len(rotation)):
        colour = rotation[(match.to_move + step) % len(rotation)]
        if match.can_place(colour):
            break
        out.append(colour)
    return out
