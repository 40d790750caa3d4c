"""Best guesses for the Blokus cells a photo could not show, completed from the rules.

The search is :mod:`vision.completion`'s, on Blokus's 20 x 20 squares: a patch of doubtful
cells (under a hand, a cup or a blown-out glare spot) is relabelled as a whole with its
likeliest labelling that keeps the pieces at it legal (each one-colour region one of the 21
pieces its colour has not laid elsewhere, chained corner to corner to one of its colour's start
corners, the rules' own per variant). The one- and two-cell fixes of
:func:`vision.blokus.apply_rules` cannot complete a piece cut short by three hidden cells, nor
redo a patch where two pieces meet. Blokus adds its turn order (B7): colours lay one piece each
in turn, so one that can still move and has laid fewer pieces than the turn order allows has a
piece hidden (:func:`_turn_order`); and its first-piece rule (B3): a colour none of whose
pieces covers a board corner has its first piece hidden at a corner under the patch,
chained to its other pieces (``FIRST_PIECE_COST``). The cells stay doubtful.

This module holds what is Blokus's own: its board and start corners, its turn order, and its
rows of labels (a string per row) turned into the search's cell indices and back.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Callable

import numpy as np

from rules.blokus import EMPTY, SIZE, Setup, board, decompose, pieces, rules
from rules.board import bits
from rules.placement import has_legal_placement

from . import completion
from .completion import Ground

TURN_COST = float(np.log(20.0))  # prior cost per piece a labelling puts a colour off the turn order (B7)
FIRST_PIECE_COST = float(np.log(20.0))  # prior cost of leaving out a first piece the patch hides (B3)


@lru_cache(maxsize=1)
def _ground() -> Ground:
    return Ground.of(board(), pieces(), EMPTY)


def _starts(setup: Setup) -> dict[str, tuple[int, ...]]:
    """Per colour, the cells (indices) its chain starts from, as the rules of ``setup`` set
    them (any board corner, or the colour's own one)."""
    return {colour: tuple(bits(mask)) for colour, mask in rules(setup).starts.items()}


def complete(rows: list[str], labels: tuple[str, ...], smooth: np.ndarray, doubtful: np.ndarray,
             conflicted: np.ndarray, badness: Callable[[list[str]], int],
             setup: Setup = Setup()) -> tuple[list[str], list[tuple[int, int]]]:
    """Relabel each patch of ``doubtful`` cells with its likeliest legal labelling
    (:func:`completion.complete`). ``rows``: the board, a string per row; ``smooth``: (rows x
    cols x labels) the colour evidence as the rules weigh it; ``conflicted``: cells of the
    board's conflicts and next to them. Returns the new rows and the cells that changed.
    ``setup``: the table's rules (which corners each colour starts from)."""
    ground = _ground()  # its cells numbered row by row
    turns = _turn_order(rows, doubtful, setup)  # the first one builds the rules' placement table
    to_rows = lambda flat: ["".join(flat[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE)]  # noqa: E731
    grid, changed = completion.complete(
        ground, list("".join(rows)), labels, smooth.reshape(SIZE * SIZE, -1), doubtful.ravel(), conflicted.ravel(),
        lambda flat: badness(to_rows(flat)), _starts(setup), turns, FIRST_PIECE_COST)
    return to_rows(grid), [ground.cells[i] for i in changed]


def _turn_order(rows: list[str], doubtful: np.ndarray, setup: Setup) -> completion.Turns:
    """Pieces per colour -> their prior cost: TURN_COST for each piece they stray from what the
    turn order allows (B7).

    Colours lay one piece each in turn, and one passes only when it has no legal placement
    left, which it never regains (the board only fills). So a colour that can still move
    has laid a piece in every round: no colour has more pieces than such a colour playing
    before it, nor more than one piece more than such a colour playing after it (so the
    counts of the colours that can move fall by at most one along the turn order). A colour
    is known to move only if it has a placement clear of the doubtful cells and their edge
    neighbours (what lies there is a guess). This asks for a piece hidden whole under a cup,
    or merges a "piece" too many, when the counts show it; once every colour has passed (a
    finished game) it says nothing.
    """
    placement_rules = rules(setup)
    squares = board()
    pos = decompose(rows, setup).position
    unsure = squares.mask((int(r), int(c)) for r, c in np.argwhere(doubtful))
    blocked = replace(pos, occupied=pos.occupied | unsure | squares.grow(unsure, squares.edge))
    order = placement_rules.rotation
    moving = [colour for colour in order if has_legal_placement(placement_rules, blocked, colour)]

    def stray(counts: dict[str, int]) -> float:
        total = 0
        for i, first in enumerate(order):
            for second in order[i + 1:]:
                a, b = counts.get(first, 0), counts.get(second, 0)
                if first in moving:  # the second has at most as many as the first
                    total += max(0, b - a)
                if second in moving:  # the first has at most one more than the second
                    total += max(0, a - b - 1)
        return TURN_COST * total
    return stray
