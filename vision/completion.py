"""Best guesses for the cells a photo could not show, completed from a placement game's rules.

One search for every game whose pieces are laid on a lattice (Blokus's squares, Gemblo's
hexes): the game gives its board (which cells share an edge, which touch at a corner or across
a bridge), its pieces, where each colour's chain may start, and a prior on the piece counts;
the search walks cell indices and knows nothing else of the game.

A patch of doubtful cells (under a hand, a cup or a blown-out glare spot) is relabelled as a
whole: every labelling of the patch that keeps the pieces at it legal is weighed by the
photo's odds, and the likeliest wins. Legal means what any board must be: each one-colour
region touching the patch is one of the game's pieces, one its colour has not laid elsewhere,
chained (corner to corner, or across a bridge) to one of its colour's start cells through any
of its colour's pieces. One- and two-cell fixes cannot complete a piece cut short by three
hidden cells, nor redo a patch where two pieces meet.

Where the photo cannot tell legal labellings apart (a cell wholly hidden has no colour
evidence), the board wins the tie: in random Blokus games a visible piece runs on into a hidden
cell beside it about as often as it stops there (43 % against 57 %), and a whole piece no cell
of which was seen costs more still. A game's turn order may ask for such a piece (``turns``:
pieces per colour -> how far they stray from what the turns allow), and so may its first-piece
rule: a colour none of whose pieces covers a start cell has its first piece hidden over one
(``unstarted``). The cells stay doubtful:
this is the best guess that "boards exact" counts and the score sheet lists as undecided,
never a reading.

The search walks the patch's cells depth first, cheapest label first, and drops a labelling
as soon as a region it closes is not a piece (or one its colour has laid) or grows past the
largest piece; a node budget bounds a photo half under a hand. The budget counts search
nodes, not seconds: a reading must not depend on the machine's speed or load. The games' other
rules steps (Blokus's one- and two-cell fixes, Gemblo's region fixes) count their work likewise
(:class:`Trials`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from rules.board import Board
from rules.lattice import Cell
from rules.pieces import PieceSet

MAX_PATCH = 24  # larger doubtful patches are left to the game's smaller fixes
OPTION_COST = float(np.log(5.0))  # labels the colour evidence finds 5x less likely are not tried
CONFLICT_COST = float(np.log(20.0))  # ... 20x less likely, at cells the rules already find wrong
HIDDEN_PIECE_CELL = 0.05  # prior cost of a doubtful cell being part of a piece: ties go to the board
UNSEEN_PIECE = 1.0  # prior cost (log odds) of a piece lying wholly in the doubtful patch
NODE_BUDGET = 4000  # search nodes per patch (some 40 ms)
PHOTO_NODES = 8000  # search nodes per photo, all its patches together (Blokus some 0.06 s, Gemblo 0.15 s)
DOUBTFUL_EVIDENCE = 0.5  # least weight a doubtful cell's colour keeps in the rules' costs (glare lowers a
# cell's confidence, not the direction its few usable pixels point in)

Turns = Callable[[dict[str, int]], float]  # pieces per colour -> prior cost (log odds) of those counts


def weighed(prob: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The colour evidence ``prob`` (... x classes) as the rules weigh it: drawn towards a flat
    guess as far as its cell's ``weight`` (...) falls short of 1, so a reading counts as far
    as it is trusted."""
    weight = weight[..., None]
    return weight * prob + (1.0 - weight) / prob.shape[-1]


class Trials:
    """The boards (or labellings) a game's rules prior may still check against the rules.

    Counted rather than timed: a budget of CPU time stopped the search at a different board
    on a busy or slower machine, so the same photo read differently from run to run."""

    def __init__(self, left: int):
        self.left = left

    def take(self) -> bool:
        """One more board checked, if any are left."""
        if self.left <= 0:
            return False
        self.left -= 1
        return True


@dataclass(frozen=True)
class Ground:
    """A game's board as the search walks it: cells by index, each one's edge neighbours (one
    colour's cells sharing an edge are one piece), its touching ones (edge, and corner or
    bridge: what chains a colour's pieces), and the game's pieces."""

    cells: tuple[Cell, ...]
    index: Mapping[Cell, int]
    edges: tuple[tuple[int, ...], ...]
    touch: tuple[tuple[int, ...], ...]
    pieces: PieceSet
    largest: int
    empty: str

    @classmethod
    def of(cls, board: Board, pieces: PieceSet, empty: str) -> "Ground":
        """The search's board; each cell's neighbours in the lattice's order (a reader that
        walks them, Gemblo's clear logic, sees its own graph)."""
        index = board.index
        edges = tuple(tuple(index[n] for n in board.lattice.edge(c) if n in index) for c in board.cells)
        touch = tuple(e + tuple(t.cell for t in contacts) for e, contacts in zip(edges, board.contact))
        return cls(board.cells, board.index, edges, touch, pieces, max(p.size for p in pieces.pieces), empty)

    def piece(self, region: Iterable[int]) -> str | None:
        """The piece a one-colour region is, or None."""
        return self.pieces.identify(self.cells[i] for i in region)

    def flood(self, labels: Sequence[object], start: int, links: tuple[tuple[int, ...], ...],
              limit: int | None = None) -> set[int]:
        """The cells of ``start``'s label reached from it step by step along ``links`` (each
        cell's :attr:`edges` or :attr:`touch`), cut off once past ``limit`` cells. A label is
        anything compared for equality: a colour, or a mask's truth (a patch of faint cells)."""
        colour, limit = labels[start], len(labels) if limit is None else limit
        seen, todo = {start}, [start]
        while todo and len(seen) <= limit:
            for n in links[todo.pop()]:
                if n not in seen and labels[n] == colour:
                    seen.add(n)
                    todo.append(n)
        return seen

    def region(self, labels: list[str], start: int) -> set[int]:
        """The edge-connected cells of ``start``'s label, cut off past the largest piece's size
        (a bigger region is illegal whatever it is): the search runs it at every node."""
        return self.flood(labels, start, self.edges, self.largest)

    def chain(self, labels: list[str], start: int) -> set[int]:
        """The cells of ``start``'s colour that touch it, edge or corner (or bridge), step by step."""
        return self.flood(labels, start, self.touch)


def inventory(ground: Ground, labels: list[str], skip: set[int]) -> dict[str, list[str | None]]:
    """Per colour, the pieces of its regions clear of ``skip`` (the patch and the cells beside
    it, whose regions the patch's labelling may still change)."""
    laid: dict[str, list[str | None]] = {}
    seen: set[int] = set()
    for i, colour in enumerate(labels):
        if colour == ground.empty or i in seen:
            continue
        region = ground.flood(labels, i, ground.edges)
        seen |= region
        if skip.isdisjoint(region):
            laid.setdefault(colour, []).append(ground.piece(region))
    return laid


def anchors(ground: Ground, labels: list[str], starts: Mapping[str, Iterable[int]]) -> dict[int, str]:
    """Cells whose colour reaches one of its start cells, edge or corner, without the patch
    (its cells are empty while this runs): a piece touching one is chained.

    A colour none of whose cells reaches a start has its start piece hidden (under the same
    hand, say): its chain cannot be followed, so any of its cells anchors."""
    out: dict[int, str] = {}
    for colour in set(labels) - {ground.empty}:
        rooted: set[int] = set()
        for s in starts.get(colour, ()):
            if labels[s] == colour and s not in rooted:
                rooted |= ground.chain(labels, s)
        for i in rooted or (i for i, label in enumerate(labels) if label == colour):
            out[i] = colour
    return out


def owed_starts(ground: Ground, labels: list[str], cells: Iterable[int],
                starts: Mapping[str, Iterable[int]]) -> dict[str, list[int]]:
    """Per colour whose first piece must lie in the patch ``cells``, its start cells there.

    Away from the patch the colour shows pieces but covers none of its start cells, and some
    of them lie in the patch: every colour's first piece covers a start cell, so it is hidden
    there, under the hand, cup or glare that hides the start."""
    inside = set(cells)
    shown = {label for i, label in enumerate(labels) if i not in inside} - {ground.empty}
    owed = {}
    for colour, at in starts.items():
        there = [i for i in at if i in inside]
        if colour in shown and there and not any(labels[i] == colour for i in at if i not in inside):
            owed[colour] = there
    return owed


def first_reach(ground: Ground, cells: list[int], owed: Mapping[str, Sequence[int]]) -> list[int]:
    """The cells of the patch ``cells`` an owed first piece may cover (:func:`owed_starts`):
    those fewer edge steps from its start cell than the largest piece has cells, in index order
    (none when nothing is owed). The rest of a patch too large to search keeps its reading."""
    inside = set(cells)
    reach = {i for at in owed.values() for i in at}
    rim = set(reach)
    for _ in range(ground.largest - 1):
        rim = {n for i in rim for n in ground.edges[i] if n in inside} - reach
        reach |= rim
    return sorted(reach)


class Patch:
    """One patch of doubtful cells and the search for its likeliest legal labelling.

    ``labels``: the board's labels by cell index, the patch's cells empty; ``options``: per
    patch cell, (label, cost) cheapest first; ``laid``: per colour, the pieces it shows away
    from the patch (:func:`inventory`); ``anchors``: the cells chained to a start without the
    patch (:func:`anchors`); ``starts``: per colour, the cells its chain may start from;
    ``budget``: the search nodes it may spend; ``owed``: per colour whose first piece the
    patch must hold (:func:`owed_starts`), its start cells in the patch, and ``unstarted``
    the prior cost of a labelling that lays no such piece there."""

    def __init__(self, ground: Ground, labels: list[str], cells: list[int], options, laid, anchors,
                 starts: Mapping[str, Iterable[int]], turns: Turns, budget: int = NODE_BUDGET,
                 owed: Mapping[str, Sequence[int]] | None = None, unstarted: float = 0.0):
        self.ground, self.labels, self.cells, self.options, self.laid, self.turns = \
            ground, labels, cells, options, laid, turns
        self.owed, self.unstarted = owed or {}, unstarted
        # the walk's step at which each owed colour's last start cell is labelled: from there
        # on a labelling that laid it on none of them pays ``unstarted`` (a bound, not the price)
        self.decided: dict[int, list[str]] = {}
        for colour, at in self.owed.items():
            self.decided.setdefault(max(cells.index(i) for i in at), []).append(colour)
        self.roots: dict[str, set[int]] = {}
        for cell, colour in anchors.items():
            self.roots.setdefault(colour, set()).add(cell)
        for colour, at in starts.items():
            # a colour starts once (B3, M3): chained to a start away from the patch, it may
            # start no second chain at another start cell in it (the rules flag that board)
            own = self.roots.setdefault(colour, set())
            if own.isdisjoint(at):
                own |= set(at)
        self.open = set(cells)  # patch cells not labelled yet
        self.inside = set(cells)
        self.nodes, self.budget = 0, budget
        self.best: tuple[float, list[str]] | None = None

    def run(self) -> tuple[float, list[str]] | None:
        self._walk(0, 0.0, [], 0.0)
        return self.best

    def _walk(self, k: int, cost: float, chosen: list[str], debt: float) -> None:
        """``debt``: the first pieces the labelling so far surely leaves owing (a bound)."""
        self.nodes += 1
        if self.nodes > self.budget or (self.best is not None and cost + debt >= self.best[0]):
            return
        if k == len(self.cells):
            total = self._finish(cost)
            if total is not None and (self.best is None or total < self.best[0]):
                self.best = (total, list(chosen))
            return
        cell = self.cells[k]
        self.open.discard(cell)
        for label, label_cost in self.options[k]:
            self.labels[cell] = label
            if self._closed_ok(cell):
                chosen.append(label)
                missed = sum(all(self.labels[i] != colour for i in self.owed[colour])
                             for colour in self.decided.get(k, ()))
                self._walk(k + 1, cost + label_cost, chosen, debt + self.unstarted * missed)
                chosen.pop()
        self.labels[cell] = self.ground.empty
        self.open.add(cell)

    def _closed_ok(self, cell: int) -> bool:
        """No region at ``cell`` has grown past a piece, and those it closed are pieces."""
        ground, labels = self.ground, self.labels
        checked: set[int] = set()
        for s in (cell, *ground.edges[cell]):
            if s in checked or s in self.open or labels[s] == ground.empty:
                continue
            region = ground.region(labels, s)
            checked |= region
            if len(region) > ground.largest:
                return False
            if any(n in self.open for i in region for n in ground.edges[i]):  # still growing
                continue
            piece = ground.piece(region)
            if piece is None or piece in self.laid.get(labels[s], ()):
                return False
        return True

    def _finish(self, cost: float) -> float | None:
        """The labelling's full cost, or None when a region at the patch breaks the rules."""
        ground, labels = self.ground, self.labels
        done: set[int] = set()
        new: dict[str, list[str]] = {}
        regions: list[tuple[str, set[int]]] = []
        for cell in self.cells:
            for s in (cell, *ground.edges[cell]):
                if s in done or labels[s] == ground.empty:
                    continue
                region = ground.region(labels, s)
                done |= region
                colour = labels[s]
                piece = ground.piece(region) if len(region) <= ground.largest else None
                if piece is None or piece in self.laid.get(colour, ()) or piece in new.get(colour, ()):
                    return None
                new.setdefault(colour, []).append(piece)
                regions.append((colour, region))
                # a piece no cell of which shows is unlikely, unless it is a first piece owed here
                cost += UNSEEN_PIECE * (region <= self.inside and region.isdisjoint(self.owed.get(colour, ())))
        if not self._chained(regions):
            return None
        counts = {colour: len(self.laid.get(colour, ())) + len(new.get(colour, ()))
                  for colour in self.laid.keys() | new.keys()}  # the whole board's pieces
        return cost + self.turns(counts) + self.unstarted * sum(map(self._still_owes, self.owed))

    def _still_owes(self, colour: str) -> bool:
        """Does the labelling leave ``colour`` without its first piece? It lays one when a piece
        of its colour covers one of its owed start cells and is chained, corner to corner, to
        its pieces round the patch: every later piece of a colour hangs on its first."""
        labels = self.labels
        for s in self.owed[colour]:
            if labels[s] == colour and any(i not in self.inside for i in self.ground.chain(labels, s)):
                return False
        return True

    def _chained(self, regions: list[tuple[str, set[int]]]) -> bool:
        """Does every region at the patch reach a root of its colour (a start cell it covers, or
        a cell chained to one without the patch), edge or corner, through any of its colour's
        pieces (those round the patch, each other, or pieces further off that only the patch's
        labelling links)?"""
        reached: set[int] = set()
        for colour, region in regions:
            if region & reached:
                continue
            chain = self.ground.chain(self.labels, next(iter(region)))
            if chain.isdisjoint(self.roots.get(colour, ())):
                return False
            reached |= chain
        return True

    def cost_of(self, labelling: list[str]) -> float | None:
        """The cost of one labelling of the patch (its current one), or None if it breaks the
        rules there or the evidence rules a label out."""
        prices = [dict(options).get(label) for options, label in zip(self.options, labelling)]
        if None in prices:
            return None
        for cell, label in zip(self.cells, labelling):
            self.labels[cell] = label
        self.open.clear()
        total = self._finish(sum(prices))
        for cell in self.cells:
            self.labels[cell] = self.ground.empty
        self.open = set(self.cells)
        return total


def patches(ground: Ground, free: np.ndarray) -> list[list[int]]:
    """The ``free`` cells in patches that touch (edge or corner), each in index order, the
    patches in the index order of their first cell (Blokus: row by row): the order
    :func:`complete` takes them in."""
    seen = np.zeros(len(free), bool)
    out = []
    for start in np.flatnonzero(free):
        if seen[start]:
            continue
        seen[start] = True
        patch, todo = [int(start)], [int(start)]
        while todo:
            for n in ground.touch[todo.pop()]:
                if free[n] and not seen[n]:
                    seen[n] = True
                    patch.append(n)
                    todo.append(n)
        out.append(sorted(patch))
    return out


def complete(ground: Ground, board: list[str], classes: tuple[str, ...], smooth: np.ndarray, doubtful: np.ndarray,
             conflicted: np.ndarray, badness: Callable[[list[str]], int], starts: Mapping[str, Iterable[int]],
             turns: Turns, unstarted: float = 0.0) -> tuple[list[str], list[int]]:
    """Relabel each patch of ``doubtful`` cells with its likeliest legal labelling.

    ``board``: a label per cell index; ``smooth``: (cells x ``classes``) the colour evidence as
    the rules weigh it (a covered cell's is flat). ``conflicted``: cells of the board's conflicts
    and next to them, where less likely labels are tried too. Returns the new labels and the
    cells that changed. A patch whose current labelling is already the likeliest legal one, or
    that has none, is left as it is; so is one whose new labelling makes the board's conflicts
    (``badness``) grow: the search sees only the pieces at the patch. ``starts``: per colour,
    the cells its chain may start from. The patches share PHOTO_NODES search nodes, each at
    most NODE_BUDGET; the patch during which they run out keeps the best labelling found so far
    (if it beats the reading), and the patches after it keep their reading.

    ``unstarted``: the prior cost of leaving a colour without its first piece where the rules
    say it lies: a colour whose pieces away from the patch cover none of its start cells, while
    the patch hides one (:func:`owed_starts`; a game whose first piece must cover a start cell,
    as Blokus's B3; 0: no such prior). Such a piece is no unseen piece (``UNSEEN_PIECE``): the
    rules ask for it. A patch too large to search whole is searched where that piece may lie
    (:func:`first_reach`), the rest of it keeping its reading.

    The patches are taken one by one in :func:`patches`' order, and each sees the board as the
    ones before it left it (the pieces laid, the anchors, the conflicts): where two patches
    vie for one piece of a colour, the first in index order takes it. Searching every patch
    against the board as read instead would let both take it, and the second would then be
    undone by ``badness``; searching all at once is a search over the whole photo.
    """
    grid = list(board)
    left = PHOTO_NODES
    changed: list[int] = []
    bad = None
    cost = -np.log(np.maximum(smooth, 1e-300))
    cost -= cost.min(-1, keepdims=True)
    # a doubtful cell whose evidence leaves it one label, the one it holds, is as good as
    # read: not searched, unless the rules say the board is wrong there (``conflicted``); one
    # the fixes relabelled against its evidence is searched with both
    reach = np.where(conflicted, CONFLICT_COST, OPTION_COST)[..., None]
    held = np.array([classes.index(label) for label in grid])
    tried = (cost <= reach) | (np.arange(len(classes)) == held[..., None])  # its current label too
    free = doubtful & (tried.sum(-1) > 1)
    for cells in patches(ground, free):
        if left <= 0:
            break
        owed = owed_starts(ground, grid, cells, starts) if unstarted else {}
        if len(cells) > MAX_PATCH:  # too large to search whole; an owed first piece lies near its start
            cells = first_reach(ground, cells, owed)
            if not cells or len(cells) > MAX_PATCH:
                continue
            owed = owed_starts(ground, grid, cells, starts)
        # an owed start cell is walked first, its owed colour first: the search settles at once
        # where the hidden first piece lies, and bounds the rest by it
        owing = {i: [colour for colour, at in owed.items() if i in at] for at in owed.values() for i in at}
        cells = [*owing, *(i for i in cells if i not in owing)]
        near = {grid[n] for i in cells for n in (i, *ground.touch[i])} - {ground.empty}
        options = []
        for i in cells:
            opts = [(label, float(cost[i, j]) + HIDDEN_PIECE_CELL * (label != ground.empty))
                    for j, label in enumerate(classes)
                    if tried[i, j] and (label == ground.empty or label in near or j == held[i])]
            debt = {label: unstarted * sum(label != colour for colour in owing.get(i, ())) for label in classes}
            options.append(sorted(opts, key=lambda o: o[1] + debt[o[0]]))
        current = [grid[i] for i in cells]
        laid = inventory(ground, grid, {n for i in cells for n in (i, *ground.edges[i])})
        for i in cells:
            grid[i] = ground.empty
        patch = Patch(ground, grid, cells, options, laid, anchors(ground, grid, starts), starts, turns,
                      min(NODE_BUDGET, left), owed, unstarted)
        now = patch.cost_of(current)
        best = patch.run()
        left -= patch.nodes
        keep = current if best is None or (now is not None and now <= best[0] + 1e-9) else best[1]
        for i, label in zip(cells, keep):
            grid[i] = label
        if keep == current:
            continue
        bad = badness(list(board)) if bad is None else bad
        trial = badness(grid)
        if trial > bad:
            for i, label in zip(cells, current):
                grid[i] = label
            continue
        bad = trial
        changed.extend(i for i, label, before in zip(cells, keep, current) if label != before)
    return grid, changed
