"""Round outlines on a busy table: the board's edge broken out of the table's pattern.

On a patterned cloth or a striped table the board's edge touches the pattern's edges all
round, so the edge detector's curves run from the board's edge into the pattern and back; no
curve is the edge alone and no ellipse fitted through one is the board
(:func:`vision.equilibrix._round_outlines` then finds only the pattern's blobs, and the photo
of a plainly visible board is refused). Where a curve leaves the board's edge for the pattern
it turns sharply, while the edge itself bends slowly: cut at those turns, the curves fall into
smooth arcs, and an ellipse through two arcs of the board's edge, far apart, is the edge,
which the edges then cover all round.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

TURN_STEP = 4  # px: a curve's direction is taken over this many of its points
SHARP_TURN_DEG = 35.0  # a curve turning faster than this within TURN_STEP points leaves the outline
MIN_ARC = 0.06  # shortest arc kept, as a share of the photo's short side
ARCS_PAIRED = 40  # the longest arcs, paired with one another
SNAPPED = 24  # the best covered of their ellipses are snapped to the edges along them
MIN_SAGITTA = 1.0  # px: an arc bulging less off its chord is a straight edge (a stripe), not a board's


def smooth_arcs(contours, short_side: int) -> list[np.ndarray]:
    """The curves cut where they turn sharply: the slowly bending stretches (N x 2 points each)
    at least ``MIN_ARC`` of the short side long, and bent (no stripe's straight edge), longest first."""
    shortest = max(2 * TURN_STEP + 1, int(MIN_ARC * short_side))
    arcs = []
    for contour in contours:
        pts = contour.reshape(-1, 2).astype(np.float64)
        if len(pts) < shortest:
            continue
        ahead = np.roll(pts, -TURN_STEP, 0) - pts
        behind = pts - np.roll(pts, TURN_STEP, 0)
        turn = np.degrees(np.abs(np.arctan2(ahead[:, 0] * behind[:, 1] - ahead[:, 1] * behind[:, 0],
                                            (ahead * behind).sum(1))))
        sharp = turn > SHARP_TURN_DEG
        if not sharp.any():
            runs = [pts]
        else:
            # Start at a cut so that no run wraps round the contour's start.
            first = int(np.argmax(sharp))
            pts, sharp = np.roll(pts, -first, 0), np.roll(sharp, -first)
            cuts = np.flatnonzero(np.diff(sharp.astype(np.int8)) != 0) + 1
            runs = [run for run, bad in zip(np.split(pts, cuts), np.split(sharp, cuts)) if not bad[0]]
        for run in runs:
            if len(run) >= shortest and _sagitta(run) >= MIN_SAGITTA:
                arcs.append(run)
    return sorted(arcs, key=len, reverse=True)


def _sagitta(run: np.ndarray) -> float:
    """How far an arc bulges off the chord between its ends (px)."""
    chord = run[-1] - run[0]
    length = math.hypot(*chord)
    if length < 1e-9:
        return 0.0
    d = run - run[0]
    return float(np.abs(chord[0] * d[:, 1] - chord[1] * d[:, 0]).max() / length)


def paired_ellipses(arcs: list[np.ndarray]) -> list[tuple]:
    """OpenCV ellipses through each of the longest arcs alone and through each pair of them
    (two stretches of one outline, apart, fix its ellipse): candidates, to be judged by how
    well the photo's edges cover them."""
    arcs = arcs[:ARCS_PAIRED]
    out = []
    for i, a in enumerate(arcs):
        for b in arcs[i:]:
            pts = a if b is a else np.vstack([a, b])
            if len(pts) >= 5:
                out.append(cv2.fitEllipse(pts.astype(np.float32)))
    return out


ORIENT_BINS = 8  # edge directions (mod 180 degrees) in bins of 22.5: a bin and its two neighbours agree
SNAP_PX = 3.0  # edge pixels this close to a candidate ellipse (and along it) refit it
SNAP_ROUNDS = 2


class OrientedEdges:
    """The edge pixels with their direction: an outline is covered only by edges running along
    it. A stripe that an ellipse crosses is an edge near it but across it, and a busy table
    puts such edges under almost any big ellipse."""

    def __init__(self, gx: np.ndarray, gy: np.ndarray, edges: np.ndarray):
        """``gx``, ``gy``: the photo's gradient; ``edges``: its edge pixels (non-zero)."""
        self.shape = edges.shape
        ys, xs = np.nonzero(edges)
        self.points = np.column_stack([xs, ys]).astype(np.float64)
        self.bins = _bin(np.arctan2(gy[ys, xs], gx[ys, xs]))
        kernel = np.ones((5, 5), np.uint8)
        near = []
        for b in range(ORIENT_BINS):
            mask = np.zeros(self.shape, np.uint8)
            agree = (self.bins - b) % ORIENT_BINS
            keep = (agree <= 1) | (agree == ORIENT_BINS - 1)
            mask[ys[keep], xs[keep]] = 1
            near.append(cv2.dilate(mask, kernel) > 0)
        self.near = np.stack(near)  # per direction bin: an edge running that way within 2 px

    def cover(self, ellipse, t: np.ndarray) -> float:
        """Share of the ellipse (points at parameters ``t``) that edges running along it cover;
        points outside the photo count as uncovered."""
        pts, normal = _points_normals(ellipse, t)
        xs, ys = np.round(pts).astype(int).T
        h, w = self.shape
        inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        return float(self.near[_bin(normal)[inside], ys[inside], xs[inside]].sum()) / len(t)

    def snap(self, ellipse):
        """The ellipse refitted through the edge pixels along it (within SNAP_PX, running its
        way), without those that lie off the refit: an ellipse through two short arcs is only
        roughly the outline they belong to."""
        for _ in range(SNAP_ROUNDS):
            _, (d1, d2), _ = ellipse
            if min(d1, d2) < 4 * SNAP_PX:
                return ellipse
            u, v = ellipse_frame(ellipse, self.points)
            close = np.abs(np.hypot(u, v) - 1) * min(d1, d2) / 2 < SNAP_PX
            if close.sum() < 12:
                return ellipse
            _, normal = _points_normals(ellipse, np.arctan2(v[close], u[close]))
            agree = (self.bins[close] - _bin(normal)) % ORIENT_BINS
            along = (agree <= 1) | (agree == ORIENT_BINS - 1)
            if along.sum() < 12:
                return ellipse
            ellipse = cv2.fitEllipse(self.points[close][along].astype(np.float32))
        return ellipse


def _bin(direction: np.ndarray) -> np.ndarray:
    """Direction bins of angles (radians), modulo 180 degrees (an edge's two sides alike)."""
    return (np.round(np.asarray(direction) / (np.pi / ORIENT_BINS)).astype(int)) % ORIENT_BINS


def ellipse_points(ellipse, t: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Points (N x 2) of an OpenCV ellipse, scaled about its centre, at parameter angles ``t``."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    ex, ey = scale * d1 / 2 * np.cos(t), scale * d2 / 2 * np.sin(t)
    return np.column_stack([cx + ex * math.cos(a) - ey * math.sin(a), cy + ex * math.sin(a) + ey * math.cos(a)])


def ellipse_frame(ellipse, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points (N x 2) in the ellipse's own unit frame (u, v): ``hypot(u, v)`` is 1 on the
    ellipse and ``arctan2(v, u)`` the parameter angle there."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    x, y = pts[:, 0] - cx, pts[:, 1] - cy
    return (x * math.cos(a) + y * math.sin(a)) / (d1 / 2), (-x * math.sin(a) + y * math.cos(a)) / (d2 / 2)


def ellipse_radius(ellipse, pts: np.ndarray) -> np.ndarray:
    """How far out points lie relative to the ellipse (1 on it)."""
    return np.hypot(*ellipse_frame(ellipse, pts))


def _points_normals(ellipse, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points of an OpenCV ellipse at parameters ``t`` and the direction of its normal there."""
    _, (d1, d2), angle = ellipse
    a = math.radians(angle)
    ca, sa = math.cos(a), math.sin(a)
    # The normal of (x/a)^2 + (y/b)^2 = 1 at (a cos t, b sin t) is (cos t / a, sin t / b).
    nx, ny = np.cos(t) / (d1 / 2), np.sin(t) / (d2 / 2)
    return ellipse_points(ellipse, t), np.arctan2(nx * sa + ny * ca, nx * ca - ny * sa)
