"""Geometry of Gemblo's hexagonal board shared by the photo renderer and the photo reader.

Why one module: the renderer states the truth and the reader finds the cells with the same
lattice, so the cell order, the board-unit frame and the 60 degree turn must agree exactly.

Units: the cell circumradius R is 1 ("R units"). Screen position of cell (q, r) with y down is
``rules.gemblo.screen``; the *board frame* used for poses shifts it so the board's bounding
box starts at (0, 0): ``u = x + EXTENT[0] / 2``, ``v = y + EXTENT[1] / 2``.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rules.gemblo import board, screen

SQRT3 = math.sqrt(3.0)
LATTICE_RADIUS = 21.0  # corner-cell centres lie on a hexagon of this circumradius (R units)
PLATE_RADIUS = 23.0  # circumradius of the plastic plate's outline (R units)
EXTENT = (2 * PLATE_RADIUS, SQRT3 * PLATE_RADIUS)  # board-frame bounding box of the plate
# Corner cells clockwise on screen from the top side's left end (the order of `corners`).
CORNERS_CW = ((-7, -7), (7, -14), (14, -7), (7, 7), (-7, 14), (-14, 7))
# The six neighbours in the order of the edge normals used by `edge_distance`.
NEIGHBOURS = ((0, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1))


@lru_cache(maxsize=None)
def cells() -> tuple[tuple[int, int], ...]:
    """The 463 board cells in the rules' order."""
    return tuple(board().cells)


@lru_cache(maxsize=None)
def centres() -> np.ndarray:
    """(463, 2) cell centres in the board frame (R units)."""
    xy = np.array([screen(c) for c in cells()], np.float64)
    return xy + np.array(EXTENT) / 2


def key(cell: tuple[int, int]) -> str:
    return f"{cell[0]},{cell[1]}"


def turn(cell: tuple[int, int], k: int) -> tuple[int, int]:
    """The cell turned by k x 60 degrees about the centre, clockwise on screen (y down)."""
    q, r = cell
    for _ in range(k % 6):
        q, r = -r, q + r
    return q, r


def hexagon(radius: float, centre: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """(6, 2) vertices of a flat-topped hexagon, clockwise on screen from the top-left one."""
    ang = np.radians([-120, -60, 0, 60, 120, 180])
    return np.column_stack([centre[0] + radius * np.cos(ang), centre[1] + radius * np.sin(ang)])


def corner_points() -> np.ndarray:
    """(6, 2) corner-cell centres in the board frame, in `CORNERS_CW` order."""
    return hexagon(LATTICE_RADIUS, (EXTENT[0] / 2, EXTENT[1] / 2))


def axial_round(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest cell (q, r) of screen points (R units, centre origin), elementwise."""
    qf = x * (2.0 / 3.0)
    rf = y / SQRT3 - qf / 2
    sf = -qf - rf
    q, r, s = np.rint(qf), np.rint(rf), np.rint(sf)
    dq, dr, ds = np.abs(q - qf), np.abs(r - rf), np.abs(s - sf)
    fix_q = (dq > dr) & (dq > ds)
    fix_r = ~fix_q & (dr > ds)
    q = np.where(fix_q, -r - s, q)
    r = np.where(fix_r, -q - s, r)
    return q.astype(np.int32), r.astype(np.int32)


def edge_distance(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance to the nearest side of a unit flat-topped hexagon from offsets off its centre,
    and which side (an index into `NEIGHBOURS`)."""
    p = np.stack([dy, SQRT3 / 2 * dx + dy / 2, SQRT3 / 2 * dx - dy / 2])
    p = np.concatenate([p, -p])
    side = np.argmax(p, axis=0)
    return (SQRT3 / 2 - np.take_along_axis(p, side[None], 0)[0]).astype(np.float32), side
