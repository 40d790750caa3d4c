"""The Gemblo reader's shared ground: the labels a cell may take, the two top-down views' scales,
where each cell's pixels lie in them, and the scale of a cell's clear-or-empty odds.

The walls (:mod:`vision.gemblo_walls`), the clear evidence (:mod:`vision.gemblo_clear`), the rules
prior (:mod:`vision.gemblo_prior`) and the reader (:mod:`vision.gemblo`) sample the same 463 cells in
the same views and weigh the same odds; held here, below all of them, each does so one way and none
reaches into another's internals.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .colour import Palette
from .gemblo_complete import hex_ground
from .hexgrid import cells, centres

EMPTY = "."
PALETTE = Palette(EMPTY, {"R": (200, 30, 40), "Y": (240, 200, 20), "G": (20, 150, 70), "B": (30, 80, 200),
                          "P": (120, 50, 160)})
LABELS = (*PALETTE.labels, "C")
PPU = 10.0  # top-down pixels per R for reading
INNER_R = 0.42  # the trusted middle of a cell (R units)
RING_R = (0.45, 0.6)  # colour fallback ring
CLEAR_PPU = 16.0  # top-down pixels per R for the clear-piece evidence (rims and glints are thin)
CLEAR_SURE = 10.0  # |score| at which the clear/empty call is fully trusted (half of it: uncertain)


@lru_cache(maxsize=2)
def offsets(ppu: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel offsets (dy, dx) around a cell centre: middle and colour ring."""
    n = int(np.ceil(ppu))
    dy, dx = np.mgrid[-n:n + 1, -n:n + 1]
    rad = np.hypot(dx, dy) / ppu
    pick = lambda m: np.column_stack([dy[m], dx[m]])  # noqa: E731
    return pick(rad <= INNER_R), pick((rad > RING_R[0]) & (rad <= RING_R[1]))


def gather(rect: np.ndarray, offsets: np.ndarray, ppu: float = PPU, at: np.ndarray | None = None) -> np.ndarray:
    """(463, n, channels) pixels at the offsets around each cell centre (only the cells ``at``, if given)."""
    c = np.rint((centres() if at is None else centres()[at]) * ppu).astype(int)  # board x at pixel x * ppu
    ys = np.clip(c[:, 1:2] + offsets[None, :, 0], 0, rect.shape[0] - 1)
    xs = np.clip(c[:, 0:1] + offsets[None, :, 1], 0, rect.shape[1] - 1)
    return rect[ys, xs]


@lru_cache(maxsize=1)
def edge_matrix() -> np.ndarray:
    """(463, 463) 1 where two cells share an edge (the edges of
    :func:`vision.gemblo_complete.hex_ground` as a matrix): a count over each cell's neighbours
    is one product, not a Python loop per cell (it runs on every live frame)."""
    adjacent = np.zeros((len(cells()), len(cells())))
    for i, near in enumerate(hex_ground().edges):
        adjacent[i, list(near)] = 1.0
    return adjacent


def clear_odds(post: np.ndarray) -> np.ndarray:
    """(463,) the photo's log-odds of clear against empty."""
    with np.errstate(divide="ignore"):
        return np.log(post[:, -1] + 1e-12) - np.log(post[:, 0] + 1e-12)
