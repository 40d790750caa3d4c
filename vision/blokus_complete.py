"""Best guesses for the Blokus cells a photo could not show, completed from the rules.

A patch of doubtful cells (under a hand, a cup or a blown-out glare spot) is relabelled as a
whole: every labelling of the patch that keeps the pieces at it legal is weighed by the
photo's odds, and the likeliest wins. Legal means what any board must be: each one-colour
region touching the patch is one of the 21 pieces, one its colour has not laid elsewhere,
chained corner to corner to one of its colour's start corners (the rules' own, per variant)
through any of its colour's pieces. The one- and two-cell fixes of
:func:`vision.blokus.apply_rules` cannot complete a piece cut short by three hidden cells,
nor redo a patch where two pieces meet.

Where the photo cannot tell legal labellings apart (a cell wholly hidden has no colour
evidence), the board wins the tie: in random games a visible piece runs on into a hidden
cell beside it about as often as it stops there (43 % against 57 %), and a whole piece no
cell of which was seen costs more still. Only the turn order (B7) can ask for such a piece:
colours lay one piece each in turn, so one that can still move and has laid fewer pieces
than the turn order allows has a piece hidden. The cells stay doubtful: this is the best guess
that "boards exact" counts and the score sheet lists as undecided, never a reading.

The search walks the patch's cells depth first, cheapest label first, and drops a labelling
as soon as a region it closes is not a piece (or one its colour has laid) or grows past the
largest piece; a node budget bounds a photo half under a hand.
"""
from __future__ import annotations

import time
from dataclasses import replace
from functools import lru_cache
from typing import Callable

import cv2
import numpy as np

from rules.blokus import EMPTY, SIZE, Setup, board, decompose, pieces, rules
from rules.placement import has_legal_placement

MAX_PATCH = 24  # larger doubtful patches are left to the one- and two-cell fixes
MAX_PIECE = 5  # cells of Blokus's largest piece
OPTION_COST = float(np.log(5.0))  # labels the colour evidence finds 5x less likely are not tried
CONFLICT_COST = float(np.log(20.0))  # ... 20x less likely, at cells the rules already find wrong
HIDDEN_PIECE_CELL = 0.05  # prior cost of a doubtful cell being part of a piece: ties go to the board
UNSEEN_PIECE = 1.0  # prior cost (log odds) of a piece lying wholly in the doubtful patch
TURN_COST = float(np.log(20.0))  # prior cost per piece a labelling puts a colour off the turn order (B7)
NODE_BUDGET = 4000  # search nodes per patch (some 40 ms)
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))


@lru_cache(maxsize=None)
def _piece(shape: frozenset) -> str | None:
    return pieces().identify(shape)


def _starts(setup: Setup) -> dict[str, frozenset[tuple[int, int]]]:
    """Per colour, the cells its chain starts from, as the rules of ``setup`` set them (any
    board corner, or the colour's own one)."""
    squares = board()
    return {colour: frozenset(squares.cells_of(mask)) for colour, mask in rules(setup).starts.items()}


def _region(grid: list[list[str]], start: tuple[int, int]) -> set[tuple[int, int]]:
    """The edge-connected cells of ``start``'s colour, cut off past a piece's size (a bigger
    region is illegal whatever it is).

    The search's own flood fill: it runs at every node on the grid being labelled, and stops
    at six cells; the rules' :meth:`Board.components` splits a whole colour at once."""
    colour = grid[start[0]][start[1]]
    seen, todo = {start}, [start]
    while todo and len(seen) <= MAX_PIECE:
        r, c = todo.pop()
        for dr, dc in NEIGHBOURS:
            nr, nc = r + dr, c + dc
            if 0 <= nr < SIZE and 0 <= nc < SIZE and (nr, nc) not in seen and grid[nr][nc] == colour:
                seen.add((nr, nc))
                todo.append((nr, nc))
    return seen


def _inventory(grid: list[list[str]], skip: set[tuple[int, int]]) -> dict[str, list[str | None]]:
    """Per colour, the pieces of its regions clear of ``skip`` (the patch and the cells beside
    it, whose regions the patch's labelling may still change)."""
    squares = board()
    laid: dict[str, list[str | None]] = {}
    for colour in sorted({label for row in grid for label in row} - {EMPTY}):
        mask = squares.mask((r, c) for r in range(SIZE) for c in range(SIZE) if grid[r][c] == colour)
        for part in squares.components(mask):
            region = squares.cells_of(part)
            if skip.isdisjoint(region):
                laid.setdefault(colour, []).append(_piece(_normal(region)))
    return laid


def _normal(cells) -> frozenset:
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return frozenset((r - r0, c - c0) for r, c in cells)


class _Patch:
    """One patch of doubtful cells and the search for its likeliest legal labelling."""

    def __init__(self, grid, cells, options, laid, anchors, starts, turns):
        self.grid, self.cells, self.options, self.laid, self.turns = grid, cells, options, laid, turns
        # colour -> the cells a chain may start from: its start corners, and the cells chained
        # to one without the patch (:func:`_anchors`)
        self.roots: dict[str, list[tuple[int, int]]] = {colour: list(at) for colour, at in starts.items()}
        for cell, colour in anchors.items():
            self.roots.setdefault(colour, []).append(cell)
        self.open = set(cells)  # patch cells not labelled yet
        self.inside = set(cells)
        self.nodes = 0
        self.best: tuple[float, list[str]] | None = None

    def run(self) -> tuple[float, list[str]] | None:
        self._walk(0, 0.0, [])
        return self.best

    def _walk(self, k: int, cost: float, chosen: list[str]) -> None:
        self.nodes += 1
        if self.nodes > NODE_BUDGET or (self.best is not None and cost >= self.best[0]):
            return
        if k == len(self.cells):
            total = self._finish(cost)
            if total is not None and (self.best is None or total < self.best[0]):
                self.best = (total, list(chosen))
            return
        r, c = self.cells[k]
        self.open.discard((r, c))
        for label, label_cost in self.options[k]:
            self.grid[r][c] = label
            if self._closed_ok((r, c)):
                chosen.append(label)
                self._walk(k + 1, cost + label_cost, chosen)
                chosen.pop()
        self.grid[r][c] = EMPTY
        self.open.add((r, c))

    def _closed_ok(self, cell: tuple[int, int]) -> bool:
        """No region at ``cell`` has grown past a piece, and those it closed are pieces."""
        r, c = cell
        starts = [cell] + [(r + dr, c + dc) for dr, dc in NEIGHBOURS]
        checked: set[tuple[int, int]] = set()
        for s in starts:
            if not (0 <= s[0] < SIZE and 0 <= s[1] < SIZE) or s in checked or s in self.open:
                continue
            if self.grid[s[0]][s[1]] == EMPTY:
                continue
            region = _region(self.grid, s)
            checked |= region
            if len(region) > MAX_PIECE:
                return False
            growing = any((rr + dr, cc + dc) in self.open for rr, cc in region for dr, dc in NEIGHBOURS)
            if growing:
                continue
            piece = _piece(_normal(region))
            colour = self.grid[s[0]][s[1]]
            if piece is None or piece in self.laid.get(colour, ()):
                return False
        return True

    def _finish(self, cost: float) -> float | None:
        """The labelling's full cost, or None when a region at the patch breaks the rules."""
        done: set[tuple[int, int]] = set()
        new: dict[str, list[str]] = {}
        regions: list[tuple[str, set[tuple[int, int]]]] = []
        for r, c in self.cells:
            for s in [(r, c)] + [(r + dr, c + dc) for dr, dc in NEIGHBOURS]:
                if not (0 <= s[0] < SIZE and 0 <= s[1] < SIZE) or s in done or self.grid[s[0]][s[1]] == EMPTY:
                    continue
                region = _region(self.grid, s)
                done |= region
                colour = self.grid[s[0]][s[1]]
                piece = _piece(_normal(region)) if len(region) <= MAX_PIECE else None
                if piece is None or piece in self.laid.get(colour, ()) or piece in new.get(colour, ()):
                    return None
                new.setdefault(colour, []).append(piece)
                regions.append((colour, region))
                cost += UNSEEN_PIECE * (region <= self.inside)
        if not self._chained(regions):
            return None
        counts = {colour: len(self.laid.get(colour, ())) + len(new.get(colour, ()))
                  for colour in self.laid.keys() | new.keys()}  # the whole board's pieces
        return cost + TURN_COST * self.turns(counts)

    def _chained(self, regions: list[tuple[str, set[tuple[int, int]]]]) -> bool:
        """Does every region at the patch reach its colour's corner, corner to corner, through
        any of its colour's pieces (those round the patch, each other, or pieces further off
        that only the patch's labelling links)?"""
        held = np.array(self.grid)
        for colour in {colour for colour, _ in regions}:
            _, parts = cv2.connectedComponents((held == colour).astype(np.uint8), connectivity=8)
            rooted = {parts[cell] for cell in self.roots.get(colour, ())} - {0}
            if any(parts[next(iter(region))] not in rooted for held_colour, region in regions if held_colour == colour):
                return False
        return True

    def cost_of(self, labelling: list[str]) -> float | None:
        """The cost of one labelling of the patch (its current one), or None if it breaks the
        rules there or the evidence rules a label out."""
        prices = [dict(options).get(label) for options, label in zip(self.options, labelling)]
        if None in prices:
            return None
        for (r, c), label in zip(self.cells, labelling):
            self.grid[r][c] = label
        self.open.clear()
        total = self._finish(sum(prices))
        for r, c in self.cells:
            self.grid[r][c] = EMPTY
        self.open = set(self.cells)
        return total


def complete(rows: list[str], labels: tuple[str, ...], smooth: np.ndarray, doubtful: np.ndarray,
             conflicted: np.ndarray, budget_s: float, badness: Callable[[list[str]], int],
             setup: Setup = Setup()) -> tuple[list[str], list[tuple[int, int]]]:
    """Relabel each patch of ``doubtful`` cells with its likeliest legal labelling.

    ``smooth``: (rows x cols x labels) the colour evidence as the rules weigh it (a covered
    cell's is flat). ``conflicted``: cells of the board's conflicts and next to them, where
    less likely labels are tried too. Returns the new rows and the cells that changed. A
    patch whose current labelling is already the likeliest legal one, or that has none, is
    left as it is; so is one whose new labelling makes the board's conflicts (``badness``)
    grow: the search sees only the pieces at the patch. ``budget_s``: CPU time the search
    may spend. ``setup``: the table's rules (which corners each colour starts from).
    """
    grid = [list(row) for row in rows]
    starts = _starts(setup)
    turns = _turn_order(rows, doubtful, setup)  # the first one builds the rules' placement table
    deadline = time.thread_time() + budget_s
    changed: list[tuple[int, int]] = []
    bad = None
    cost = -np.log(np.maximum(smooth, 1e-300))
    cost -= cost.min(-1, keepdims=True)
    # a doubtful cell whose evidence leaves it one label, the one it holds, is as good as
    # read: not searched, unless the rules say the board is wrong there (``conflicted``); one
    # the fixes relabelled against its evidence is searched with both
    reach = np.where(conflicted, CONFLICT_COST, OPTION_COST)[..., None]
    held = np.array([[labels.index(label) for label in row] for row in rows])
    tried = (cost <= reach) | (np.arange(len(labels)) == held[..., None])  # its current label too
    free = doubtful & (tried.sum(-1) > 1)
    count, patches = cv2.connectedComponents(free.astype(np.uint8), connectivity=8)
    for k in range(1, count):
        if time.thread_time() > deadline:
            break
        cells = [(int(r), int(c)) for r, c in np.argwhere(patches == k)]
        if len(cells) > MAX_PATCH:
            continue
        rim = {(r + dr, c + dc) for r, c in cells for dr in (-1, 0, 1) for dc in (-1, 0, 1)}
        near = {grid[r][c] for r, c in rim if 0 <= r < SIZE and 0 <= c < SIZE} - {EMPTY}
        options = []
        for r, c in cells:
            opts = [(label, float(cost[r, c, j]) + HIDDEN_PIECE_CELL * (label != EMPTY))
                    for j, label in enumerate(labels)
                    if tried[r, c, j] and (label == EMPTY or label in near or j == held[r, c])]
            options.append(sorted(opts, key=lambda o: o[1]))
        current = [grid[r][c] for r, c in cells]
        laid = _inventory(grid, {(r + dr, c + dc) for r, c in cells for dr, dc in NEIGHBOURS + ((0, 0),)})
        for r, c in cells:
            grid[r][c] = EMPTY
        patch = _Patch(grid, cells, options, laid, _anchors(grid, starts), starts, turns)
        now = patch.cost_of(current)
        best = patch.run()
        keep = current if best is None or (now is not None and now <= best[0] + 1e-9) else best[1]
        for (r, c), label in zip(cells, keep):
            grid[r][c] = label
        if keep == current:
            continue
        bad = badness(rows) if bad is None else bad
        trial = badness(["".join(row) for row in grid])
        if trial > bad:
            for (r, c), label in zip(cells, current):
                grid[r][c] = label
            continue
        bad = trial
        changed.extend(cell for cell, label, before in zip(cells, keep, current) if label != before)
    return ["".join(row) for row in grid], changed


def _anchors(grid: list[list[str]], starts: dict[str, frozenset[tuple[int, int]]]) -> dict[tuple[int, int], str]:
    """Cells whose colour reaches one of its start corners corner to corner (8-connected) without the
    patch (its cells are blank while this runs): a piece touching one is chained.

    A colour none of whose cells reaches a corner has its corner piece hidden (under the
    same hand, say): its chain cannot be followed, so any of its cells anchors."""
    held = np.array(grid)
    anchors: dict[tuple[int, int], str] = {}
    for colour in set(held.ravel()) - {EMPTY}:
        _, parts = cv2.connectedComponents((held == colour).astype(np.uint8), connectivity=8)
        rooted = {parts[r, c] for r, c in starts.get(colour, ()) if held[r, c] == colour} or set(np.unique(parts)) - {0}
        for r, c in np.argwhere(np.isin(parts, list(rooted))):
            anchors[(int(r), int(c))] = colour
    return anchors


def _turn_order(rows: list[str], doubtful: np.ndarray, setup: Setup) -> Callable[[dict[str, int]], int]:
    """Pieces per colour -> how many pieces they stray from what the turn order allows (B7).

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

    def stray(counts: dict[str, int]) -> int:
        total = 0
        for i, first in enumerate(order):
            for second in order[i + 1:]:
                a, b = counts.get(first, 0), counts.get(second, 0)
                if first in moving:  # the second has at most as many as the first
                    total += max(0, b - a)
                if second in moving:  # the first has at most one more than the second
                    total += max(0, a - b - 1)
        return total
    return stray
