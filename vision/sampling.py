"""Cut a top-down board view into per-cell pixel samples.

Only the middle of each cell is trusted: the outer band holds the grooves between cells, the
bevel of a piece, the shadow a neighbour casts, and (on a tilted photo) the side face of a
neighbouring piece standing a few millimetres proud of the board. The ring just inside that
band is kept apart as a fallback for cells whose middle is lost to glare.
"""
from __future__ import annotations

import cv2
import numpy as np

from .pose import BoardPose

INNER = (0.24, 0.76)  # the trusted middle of a cell, as fractions of its side
RING = (0.12, 0.88)  # the fallback ring lies between RING and INNER


def cell_blocks(rect: np.ndarray, cells: tuple[int, int], px: int, margin: float) -> np.ndarray:
    """(rows, cols, px, px, channels) blocks of a rectified view made by ``pose.rectify``."""
    off = int(round(margin * px))
    rows, cols = cells
    grid = rect[off:off + rows * px, off:off + cols * px]
    ch = grid.shape[2] if grid.ndim == 3 else 1
    return grid.reshape(rows, px, cols, px, ch).transpose(0, 2, 1, 3, 4)


def window_masks(px: int, ring: tuple[float, float] = RING) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (px, px) masks of a cell's trusted middle and of its fallback ring."""
    t = (np.arange(px) + 0.5) / px
    inside = lambda lo, hi: ((t >= lo) & (t <= hi))  # noqa: E731 - tiny local helper
    inner = inside(*INNER)[:, None] & inside(*INNER)[None, :]
    outer = inside(*ring)[:, None] & inside(*ring)[None, :]
    return inner, outer & ~inner


def cell_samples(rect: np.ndarray, cells: tuple[int, int], px: int, margin: float,
                 ring: tuple[float, float] = RING) -> tuple[np.ndarray, np.ndarray]:
    """Pixels of each cell's middle (rows, cols, n, 3) and ring (rows, cols, m, 3), as float32 0-1.

    ``ring``: the fallback ring's outer bounds; a board whose pieces keep their colour at
    their bevels under glare may reach further out than the default."""
    blocks = cell_blocks(rect, cells, px, margin).astype(np.float32) / 255.0
    inner, ring = window_masks(px, ring)
    return blocks[:, :, inner], blocks[:, :, ring]


def cells_in_photo(pose: BoardPose, cells: int) -> np.ndarray:
    """(cells x cells) whether each cell's middle lies inside the photo.

    A board cut by the frame still rectifies (edge pixels are repeated), so the cells beyond
    the photo must be known as unseen rather than read from smeared pixels.
    """
    t = np.array([INNER[0], 0.5, INNER[1]])
    col, row, dy, dx = np.meshgrid(np.arange(cells), np.arange(cells), t, t, indexing="ij")
    photo = pose.to_photo(np.stack([(col + dx).ravel(), (row + dy).ravel()], 1))
    w, h = pose.image_size
    inside = (photo[:, 0] >= 0) & (photo[:, 0] <= w - 1) & (photo[:, 1] >= 0) & (photo[:, 1] <= h - 1)
    return inside.reshape(cells, cells, -1).all(-1).T


HIDDEN_BORDERS = 0.3  # cell borders this faint (share of a typical cell's): nothing of the grid shows
PARTLY_HIDDEN = 0.5  # borders this faint, in one region with hidden cells: partly under the same thing
CLEAR_BORDERS = 0.9  # a cell beside a hidden one is seen whole only with borders this clear
MUG_FOOT_MM = 70.0  # across a mug's foot: the least a mug standing on a board hides


def mug_cells(cell_area_mm2: float) -> int:
    """The fewest cells of ``cell_area_mm2`` a mug standing on a board hides (``under_occluder``'s
    ``smallest``): its foot's area, :data:`MUG_FOOT_MM` across, in cells.

    Its foot is the least of a mug a photo shows over the board: seen from a tilt, its side hides
    more, and the cells at the foot's rim lose their grooves too, so the faint patch a mug leaves
    was 1.7-2.5 times its foot on the bench's photos (Blokus: 27-64 cells of 16 mm, feet of 16-26;
    Gemblo: 72-119 hexagons, feet of 35-57). What else leaves a faint patch inside a board is
    mostly smaller than a foot: a window's reflection veils 1-7 Blokus cells, a lamp's 24-32
    Gemblo hexagons; a lamp's larger ones are mostly blown out (``glare``: here a patch mostly
    blown out is no mug whatever its size; Gemblo's ``vision.gemblo_walls.lent_by_occluder`` has
    no such test). The bar holds for a patch wholly inside the board: both readers take a patch
    reaching the board's edge, a hand or a cup reaching in, at any size."""
    return round(np.pi * (MUG_FOOT_MM / 2) ** 2 / cell_area_mm2)


def with_neighbours(cells: np.ndarray) -> np.ndarray:
    """The ``cells`` (a board-shaped mask) and every cell touching one, corners included."""
    return cv2.dilate(cells.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)


def under_occluder(borders: np.ndarray, glare: np.ndarray | None = None, *, smallest: int) -> np.ndarray:
    """(cells x cells) cells hidden under something held or standing over the board.

    ``borders`` is ``grid.cell_borders``. Nothing lying on the board erases its grid (an
    empty cell shows its grooves best, a piece's bevels draw them), so a region of
    faint-bordered cells holding cells where no border shows at all is under something
    standing over it (its rim, a finger's outline, may still draw a few edges elsewhere), or
    under light that veils it. A hand or a cup reaching in over the board's edge is one,
    whatever shines on it. A region wholly inside the board is a mug standing on it if it
    covers at least ``smallest`` cells (a mug's foot: :func:`mug_cells`) and glare did not blow
    out most of it (``glare``: the cells a lamp's reflection blew out; ``None``: not known, so any patch
    inside may be a reflection and none is taken). A reflection washes out its whole spot but
    for its faint rim, a window's veils a few cells' grooves and leaves their colour; a white
    mug's lit side may blow out too, but not its shaded side or what it holds. What is not a
    mug is left to the colour reading, which has its own glare test.
    """
    _, regions = cv2.connectedComponents((borders < PARTLY_HIDDEN).astype(np.uint8), connectivity=8)
    edge = np.unique(np.concatenate([regions[0], regions[-1], regions[:, 0], regions[:, -1]]))
    blind = np.unique(regions[borders < HIDDEN_BORDERS])
    size = np.bincount(regions.ravel())
    shone = size if glare is None else np.bincount(regions[glare], minlength=size.size)
    mugs = np.flatnonzero((size >= smallest) & (2 * shone < size))
    standing = np.union1d(edge, mugs)
    hidden = np.isin(regions, np.intersect1d(standing[standing > 0], blind))
    # A fingertip or a mug's handle over part of a cell next to it leaves most of its borders.
    near = with_neighbours(hidden)
    return hidden | (near & (borders < CLEAR_BORDERS))
