"""Geometry of the round Equilibrix board shared by the photo renderer and the photo reader.

Why one module: the renderer states the truth and the reader finds the fields with the same
drawing, so the field order, the board frame and the 60 degree turn must agree exactly.

Units: the lattice spacing r is 1 ("r units"). A point's lattice position (x, y), y down, is
``rules.flower``'s Cartesian r·(q + s/2, s·√3/2) with the board's centre node at (0, 0); the
*board frame* used for poses shifts it so the round board's bounding box starts at (0, 0):
``u = x + DISC``, ``v = y + DISC``.

The physical board (all radii in r): the fields (the Flower of Life's faces, out to the
corner nodes at 3), a printed outer circle at OUTER_LINE, a plain wooden rim on which the
ring of tiles lies in SLOTS evenly spaced slots at RING_RADIUS, and the board's edge at DISC.
Ring slot j lies at screen angle ``SLOT0_DEG + j * SLOT_DEG`` (y down: angles grow
clockwise), so slot 0 is the first slot clockwise from straight up.

Which field a point lies in: the point lies in one lattice triangle A, B, C. The three
circles that cross that triangle are those round the reflections of its corners across the
opposite sides (C' = A + B - C, ...). A point within r of C' lies in the petal on edge AB;
otherwise in the curved triangle ABC. That is the whole arrangement of circles, drawn or
read, in a few array operations.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rules import flower

SQRT3 = math.sqrt(3.0)
OUTER_LINE = 3.3  # the printed circle round the flower
RING_RADIUS = 4.35  # where the ring tiles' middles lie
DISC = 5.2  # the board's edge
EXTENT = (2 * DISC, 2 * DISC)  # board-frame bounding box
SLOTS = 18
SLOT_DEG = 360.0 / SLOTS
SLOT0_DEG = -90.0 + SLOT_DEG / 2
_SPAN = 8  # lattice coordinates -_SPAN.._SPAN are tabulated


@lru_cache(maxsize=None)
def fields() -> tuple[tuple[int, int, int], ...]:
    """The 144 fields in the rules' order."""
    return tuple(flower.board().cells)


@lru_cache(maxsize=None)
def names() -> tuple[str, ...]:
    return tuple(flower.field_id(f) for f in fields())


@lru_cache(maxsize=None)
def centroids() -> np.ndarray:
    """(144, 2) field centroids in the board frame (r units)."""
    return np.array([flower.centroid(f) for f in fields()]) + DISC


def node_xy(node: tuple[int, int]) -> tuple[float, float]:
    q, s = node
    return q + s / 2, s * SQRT3 / 2


@lru_cache(maxsize=None)
def _table() -> np.ndarray:
    """Field index per (q + _SPAN, s + _SPAN, kind); -1 off the board."""
    t = np.full((2 * _SPAN + 1, 2 * _SPAN + 1, 5), -1, np.int32)
    for i, (q, s, k) in enumerate(fields()):
        t[q + _SPAN, s + _SPAN, k] = i
    return t


def locate_fields(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For points at lattice positions (x, y): the field index (-1 off the board), the
    distance to the nearest drawn field boundary, and the distance to the nearest node.

    A boundary arc is drawn where it bounds a field of the board (so the scalloped outline is
    drawn, and nothing beyond it)."""
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float32)
    sf = y * np.float32(2 / SQRT3)
    qf = x - sf / 2
    q0, s0 = np.floor(qf).astype(np.int32), np.floor(sf).astype(np.int32)
    down = (qf - q0) + (sf - s0) >= 1
    t = _table()
    lim = 2 * _SPAN

    def look(q, s, k):
        inside = (q + _SPAN >= 0) & (q + _SPAN <= lim) & (s + _SPAN >= 0) & (s + _SPAN <= lim)
        return np.where(inside, t[np.clip(q + _SPAN, 0, lim), np.clip(s + _SPAN, 0, lim), k], -1)

    # Per triangle: its field, and per side (reflected corner, petal on that side).
    tri = np.where(down, look(q0, s0, 4), look(q0, s0, 3))
    z = np.zeros_like(q0)
    sides = [  # (reflection dq, ds, petal q, s offsets, petal dir) for + and - triangles
        ((1, -1, 0, 0, 0), (0, 0, 1, 0, 2)),
        ((1, 1, 1, 0, 2), (0, 2, 0, 1, 0)),
        ((-1, 1, 0, 0, 1), (2, 0, 1, 0, 1)),
    ]
    field = tri.copy()
    line = np.full(x.shape, np.inf, np.float32)
    for up_side, down_side in sides:
        rq = q0 + np.where(down, down_side[0], up_side[0])
        rs = s0 + np.where(down, down_side[1], up_side[1])
        pq = q0 + np.where(down, down_side[2], up_side[2])
        ps = s0 + np.where(down, down_side[3], up_side[3])
        pk = np.where(down, down_side[4], up_side[4]) + z
        petal = look(pq, ps, pk)
        d = np.hypot(x - (rq + rs / 2), y - rs * np.float32(SQRT3 / 2))
        field = np.where((d <= 1) & (field == tri), petal, field)
        drawn = (petal >= 0) | (tri >= 0)
        line = np.minimum(line, np.where(drawn, np.abs(d - 1), np.inf))
    corners = [(q0 + 1, s0), (q0, s0 + 1), (q0 + down, s0 + down)]
    node = np.min([np.hypot(x - (cq + cs / 2), y - cs * np.float32(SQRT3 / 2)) for cq, cs in corners], axis=0)
    return field, line, node


@lru_cache(maxsize=None)
def turn_table(k: int) -> np.ndarray:
    """Index map: field i turned by k x 60 degrees clockwise on screen is field turn_table(k)[i]."""
    index = {f: i for i, f in enumerate(fields())}
    rotate = flower.FLOWER.rotations[k % 6]
    return np.array([index[rotate(f)] for f in fields()], np.int32)


def slot_angles() -> np.ndarray:
    """Screen angle (radians, y down) of each ring slot's middle."""
    return np.radians(SLOT0_DEG + SLOT_DEG * np.arange(SLOTS))


def slot_centres() -> np.ndarray:
    """(SLOTS, 2) ring slot middles in the board frame."""
    a = slot_angles()
    return np.column_stack([DISC + RING_RADIUS * np.cos(a), DISC + RING_RADIUS * np.sin(a)])


def origin_angle(origin: int) -> float:
    """Where the Origin's tetrahedron stands: between slot origin - 1 and slot origin."""
    return math.radians(SLOT0_DEG + SLOT_DEG * (origin - 0.5))
