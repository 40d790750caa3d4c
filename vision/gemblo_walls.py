"""How plainly each Gemblo cell's walls show, and what something standing over the board may lend
the cells where they do not.

A cell whose walls do not show at all lies under a hand, a cup or a blinding glare: it is
uncertain whatever colour shows there. A wall at the board's rim (a step up to the flat plate,
not a ridge) shows less than one between two cells, and is weighed on its own scale.

Kept apart from the colour and the clear evidence: the walls say only whether a cell is in sight,
never what lies on it.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from rules.gemblo import screen

from .gemblo_cells import CLEAR_PPU, EMPTY, LABELS, edge_matrix, gather
from .gemblo_complete import hex_ground
from .hexgrid import NEIGHBOURS, cells
from .sampling import PARTLY_HIDDEN, mug_cells

WALLS_HIDDEN = 0.3  # walls this much fainter than the board's typical: the cell is hidden
PITCH_MM = 11.6  # between hexagon centres, as on the original edition
MUG_CELLS = mug_cells(np.sqrt(3) / 2 * PITCH_MM ** 2)  # the fewest cells a mug on the board hides (a hexagon's area)
RIM_SCALE = (1.0, 2.5)  # a rim step shows 0.4-0.8 as plainly as a ridge: the scale that evens them, bounded
WALL_ACROSS = (-0.15, -0.08, 0.0, 0.08, 0.15)  # R: where a wall is looked for, across it
WALL_ALONG = (-0.25, 0.0, 0.25)  # R: where along it
WALL_SHIFT = 0.12  # R: a lone hidden cell's walls are sought this far off, too, along each wall's normal: the
# pose's one radial lens term leaves the lattice up to 0.25 R off at a far corner of a strongly bent photo
WALL_PATCH = 3  # steps: the patch of cells round a cell whose walls say how far the lattice sits off there


@lru_cache(maxsize=1)
def _side_normals() -> np.ndarray:
    """(6, 2) unit normals of a cell's walls, each towards the neighbour beyond it, in the
    lattice's NEIGHBOURS order (so a wall and the cell across it are one index)."""
    steps = np.array([screen(n) for n in NEIGHBOURS])
    return steps / np.linalg.norm(steps, axis=1, keepdims=True)


@lru_cache(maxsize=2)
def _wall_offsets(ppu: float) -> np.ndarray:
    """(7, 6, along, across, 2) pixel offsets (dy, dx) on each of a cell's six walls (NEIGHBOURS'
    order): where the lattice puts them, then shifted by WALL_SHIFT along each wall's normal."""
    normal = _side_normals()
    tangent = np.column_stack([-normal[:, 1], normal[:, 0]])
    pts = ((np.sqrt(3) / 2 + np.array(WALL_ACROSS)[None, None, :, None]) * normal[:, None, None]
           + np.array(WALL_ALONG)[None, :, None, None] * tangent[:, None, None])
    shifts = np.vstack([np.zeros((1, 2)), WALL_SHIFT * normal])  # unshifted first: it wins a tie
    pts = (pts[None] + shifts[:, None, None, None]) * ppu
    return np.rint(pts[..., ::-1]).astype(int)


@lru_cache(maxsize=1)
def _wall_patches() -> np.ndarray:
    """(463, 463) 1 where a cell lies within WALL_PATCH edge steps of the other: the patch whose
    walls together say how far the lattice sits off a cell (:func:`walls_seen`)."""
    step = np.eye(len(cells())) + edge_matrix()
    return (np.linalg.matrix_power(step, WALL_PATCH) > 0).astype(float)


@lru_cache(maxsize=1)
def _shared_walls() -> np.ndarray:
    """(463, 6) whether each of a cell's walls (NEIGHBOURS' order, as :func:`_wall_offsets`) lies
    between it and another board cell, rather than at the board's rim."""
    index = hex_ground().index
    return np.array([[(q + dq, r + dr) in index for dq, dr in NEIGHBOURS] for q, r in cells()])


def walls_seen(gray: np.ndarray) -> np.ndarray:
    """(463,) how plainly each cell's walls show, over the board's median cell: the brightness
    gradient on the second weakest of its six walls (strongest across each wall: the lattice may
    sit a little off). Walls show through every piece, clear or coloured; a hand, a cup or a
    blinding glare hides them.

    Where the pose's one radial lens term misfits a strongly bent photo (a far corner), the
    lattice sits up to 0.25 R off, beyond the strongest-across search: a bare corner cell's walls
    read 0.22 of the typical (seed 5 `lens_distortion` #0), hidden, so clear's start was never
    asked. So a lone cell whose walls do not show where the pose puts them, amid cells whose walls
    do, has them sought also WALL_SHIFT off along each wall's normal, at the one shift under which
    the cells within WALL_PATCH steps show the most walls together (the pose's misfit moves a
    patch of cells as one), and the stronger of the two counts; the typical cell is measured where
    the pose puts it. A hand or a cup hides a patch of cells, and its outline lines up with walls
    sought off: so a hidden cell beside another is left as the pose places it (sought off too, a
    cell beside a cup's patch took the cup's rim for its walls and was read yellow, surely, on the
    held-out seed 37 `cup` #0; each wall sought on its own 0.22 R across, a cell under a hand was
    read wrong silently on seed 2). On the bench's seeds 2 and 5, cells in sight taken for hidden
    644 -> 426, cells under a hand or a cup taken for seen 244 -> 248.

    A wall at the board's rim is put on the scale of the walls between cells first (the ratio of
    their medians in this photo): there the recess meets the flat plate in one step, not a ridge
    between two recesses, and shows 0.4-0.8 as plainly (median 0.58 over 20 generated photos);
    judged on the ridges' scale, 1 in 16 bare cells of the outer ring passed for hidden, 1 in 270
    inner cells. ``gray``: the top-down view at CLEAR_PPU in grey levels (:func:`vision.gemblo_clear.grey_and_lab`)."""
    gray = gray.astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3))
    off = _wall_offsets(CLEAR_PPU)

    def walls_at(shifts: slice, at: np.ndarray | None = None) -> np.ndarray:  # (cells, shifts, 6)
        o = off[shifts]
        g = gather(grad[..., None], o.reshape(-1, 2), CLEAR_PPU, at)[..., 0].reshape(-1, *o.shape[:4])
        return g.max(axis=4).mean(axis=3)

    placed = walls_at(slice(0, 1))[:, 0]  # the walls where the pose puts them
    typical = float(np.median(np.sort(placed, axis=1)[:, 1]))  # the board's median cell, its walls as they show
    shared = _shared_walls()
    rim = np.median(placed[shared]) / max(float(np.median(placed[~shared])), 1e-6)  # a rim step, as plain as a ridge
    rim = float(np.clip(rim, *RIM_SCALE))  # a sleeve along the rim must not lift the rim's hidden cells into sight

    def seen(walls: np.ndarray, at: np.ndarray | slice = slice(None)) -> np.ndarray:
        return np.sort(np.where(shared[at], walls, rim * walls), axis=1)[:, 1] / max(typical, 1e-6)

    walls = seen(placed)
    # a lone hidden cell's walls also where its patch shows the most walls (see above)
    hidden = walls < WALLS_HIDDEN
    lone = np.flatnonzero(hidden & (edge_matrix() @ hidden == 0))
    if len(lone):
        patches = _wall_patches()[lone]
        near = np.flatnonzero(patches.any(axis=0))  # the cells of their patches
        every = walls_at(slice(None), near)
        best = np.argmax(patches[:, near] @ every.sum(axis=2), axis=1)
        at = np.searchsorted(near, lone)
        walls[lone] = seen(np.maximum(placed[lone], every[at, best]), lone)
    return walls


def lent_by_occluder(walls: np.ndarray, read: list[str]) -> np.ndarray:
    """(463, len(LABELS)) the labels something standing over the board (a mug on it, a hand or
    a cup reaching in) may have lent each cell, so that a cell finally read so is no sure
    reading. ``walls``: :func:`walls_seen`; ``read``: the colour classifier's labels.

    Nothing lying on the board hides its walls, so the faint-walled cells (PARTLY_HIDDEN, as
    :func:`vision.sampling.under_occluder` weighs a square grid's borders) joined on the hex
    lattice to cells whose walls do not show at all lie under one thing: a hand or a cup
    reaching in over the board's edge when the patch touches the board's outer ring (whatever
    its size, as ``under_occluder`` takes a region at a square board's edge), a mug standing on
    the board when a patch wholly inside is a mug's foot or more (MUG_CELLS: less is a glint's
    or a lamp's spot; no glare test here, unlike ``under_occluder``'s). What it shows where it hides
    the walls (a piece colour, or clear for its sheen) is its own colour, and it lends it to the
    cells at its edge: its rim and its side stand out over them and cross them with their own
    hard edges, which the walls' test takes for walls (a yellow rim across two bare cells beside
    the hidden ones gave them walls 1.1 as plain as the board's, and they were read yellow), or
    leave their walls only faint (0.37 of the board's, read in the mug's purple). A patch of a
    mug's foot or more, inside or at the rim, lends clear too, whatever it shows: a glazed rim
    or handle shines, and the highlights and hard edges it lays across a cell beside it are what
    the clear score reads as a clear piece's glints and bevels (a white rim over a bare cell
    beside the hidden ones, a yellow handle across another, both read clear and not doubted
    (0.52-0.54) where the mug's hidden cells read red; a mug standing by the edge, its patch touching
    the outer ring, the same). A smaller patch at the rim lends only what it shows: it is a
    hand's fingers or the edge of something reaching in, with no glazed rim over the board, and
    such patches come on photos with nothing over the board at all: lending them clear put
    right clear cells in doubt on 9 of the default bench's 120 photos (clean ones among them)
    and made no wrong cell doubted. So a cell of that patch or beside it read in one of those
    colours, or clear beside a mug, is in doubt. The bare board (empty) is never lent: a mug is
    read empty where it lends nothing; a cell read in another colour has a colour the mug does
    not show.
    """
    ground = hex_ground()
    faint = (walls < PARTLY_HIDDEN).tolist()
    lent = np.zeros((len(read), len(LABELS)), bool)
    weighed = np.zeros(len(read), bool)
    for start in np.flatnonzero(walls < WALLS_HIDDEN):
        if weighed[start]:
            continue
        patch = sorted(ground.flood(faint, int(start), ground.edges))
        weighed[patch] = True
        # A cell walled by the board's outline has fewer neighbours on the board.
        at_rim = any(len(ground.edges[i]) < len(NEIGHBOURS) for i in patch)
        if len(patch) < MUG_CELLS and not at_rim:
            continue
        shown = {LABELS.index(read[i]) for i in patch if walls[i] < WALLS_HIDDEN and read[i] != EMPTY}
        if len(patch) >= MUG_CELLS:  # a mug's foot or more: its glazed rim shines (see above)
            shown.add(LABELS.index("C"))
        reach = sorted({n for i in patch for n in (i, *ground.edges[i])})  # the patch and the cells beside it
        lent[np.ix_(reach, sorted(shown))] = True
    return lent
