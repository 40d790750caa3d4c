"""The board -> photo frame from the board's round outlines, right but for the turn: step 3 of
the Equilibrix pose search (``vision.equilibrix_pose`` puts the steps together).

*Perspective*: the board's edge and the printed circle are concentric circles, so their two
ellipses give the table's vanishing line (the double line of their pencil); sending it to
infinity leaves an affine view, which the disc's ellipse makes round. When the edge is not
among the outlines (a busy cloth, a cup against it, a steep view), the circle alone gives
an affine guess, and a guess from the vanishing line, searched on a grid, whose board's
edge (the circle's concentric twin) runs along the strongest brightness steps: scaling the
circle's ellipse misses a steep view's edge by far more than the edge's search allows.

Apart because it is projective geometry alone: conics and lines, no template matched.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from . import flowergrid as fg
from .equilibrix_circle import RAY_ANGLES, disc_ellipse
from .equilibrix_drawing import ellipse_pose
from .equilibrix_outlines import ellipse_points
from .pose import apply_h

HORIZON_MAX = 0.8  # the table's vanishing lines searched (1 / distance in half photo widths): up to ~50 degrees of tilt
HORIZON_STEPS = 8  # grid steps from no tilt to HORIZON_MAX


def _conic(ellipse, norm: np.ndarray) -> np.ndarray:
    """The ellipse as a 3 x 3 conic matrix in normalised coordinates (``norm`` maps pixels there)."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    m = r @ np.diag([4 / d1 ** 2, 4 / d2 ** 2]) @ r.T
    c = np.array([cx, cy])
    conic = np.block([[m, (-m @ c)[:, None]], [(-m @ c)[None, :], np.array([[c @ m @ c - 1]])]])
    inv = np.linalg.inv(norm)
    return inv.T @ conic @ inv


def _normaliser(size: tuple[int, int]) -> np.ndarray:
    """Pixels -> coordinates in which the photo's width spans -1..1 (well conditioned)."""
    w, h = size
    return np.array([[2 / w, 0, -1], [0, 2 / w, -h / w], [0, 0, 1.0]])


def _flattened_frame(to_flat: np.ndarray, ellipse, size: tuple[int, int], scale: float) -> np.ndarray:
    """Board -> photo map given ``to_flat`` (photo -> a view where the table is seen straight,
    up to an affine map): the ellipse, carried there, is made round as the circle at ``scale``
    times the board's edge."""
    flat = apply_h(to_flat, ellipse_points(ellipse, np.linspace(0, 2 * np.pi, 90, endpoint=False)))
    blow = 1000.0  # fitEllipse wants pixel-sized numbers
    affine = ellipse_pose(cv2.fitEllipse((flat * blow).astype(np.float32)), size, scale)
    return np.linalg.inv(to_flat) @ np.diag([1 / blow, 1 / blow, 1.0]) @ affine


def horizon_frame(gray: np.ndarray, circle, size: tuple[int, int]) -> np.ndarray | None:
    """Board -> photo map (right but for the turn) from the printed circle alone, when the
    board's edge is not among the round outlines (a busy cloth, a cup against it, a steep
    view): scaling the circle's ellipse by the board's proportions misses the edge by far more
    than its search allows once the view is steep. Every vanishing line of the table (within
    HORIZON_MAX) fixes, with the circle, where the edge must lie; the line whose edge runs
    along the strongest brightness steps wins, then the edge found there gives the exact frame."""
    norm = _normaliser(size)
    blur = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.5)
    gx, gy = cv2.Sobel(blur, cv2.CV_32F, 1, 0), cv2.Sobel(blur, cv2.CV_32F, 0, 1)
    t = RAY_ANGLES
    ring = ellipse_points(circle, t)
    w, h = size

    def edge_at(line: np.ndarray) -> tuple[float, np.ndarray | None]:
        to_flat = np.array([[1, 0, 0], [0, 1, 0], [line[0], line[1], 1.0]]) @ norm
        if (to_flat[2] @ np.vstack([ring.T, np.ones(len(ring))])).min() < 0.3:
            return -1.0, None  # the circle would reach the horizon
        frame = _flattened_frame(to_flat, circle, size, fg.OUTER_LINE / fg.DISC)
        edge = apply_h(frame, np.column_stack([np.cos(t), np.sin(t)]) * fg.DISC + fg.DISC)
        inside = (edge[:, 0] >= 1) & (edge[:, 0] < w - 1) & (edge[:, 1] >= 1) & (edge[:, 1] < h - 1)
        if inside.mean() < 0.6:
            return -1.0, None
        tangent = np.roll(edge, -1, 0) - np.roll(edge, 1, 0)
        normal = np.column_stack([tangent[:, 1], -tangent[:, 0]]) / np.maximum(np.hypot(*tangent.T), 1e-9)[:, None]
        pts = edge[inside].astype(np.float32)[None]
        g = np.column_stack([cv2.remap(d, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR)[0] for d in (gx, gy)])
        return float(np.median(np.abs((g * normal[inside]).sum(1)))), edge

    step = HORIZON_MAX / HORIZON_STEPS
    grid = np.arange(-HORIZON_STEPS, HORIZON_STEPS + 1) * step
    lines = [np.array([a, b]) for a in grid for b in grid if math.hypot(a, b) <= HORIZON_MAX + 1e-9]
    best = max(lines, key=lambda line: edge_at(line)[0])
    fine = [best + np.array([a, b]) * step / 4 for a in range(-3, 4) for b in range(-3, 4)]
    edge = max((edge_at(line) for line in fine), key=lambda r: r[0])[1]
    if edge is None:
        return None
    return perspective_frame(disc_ellipse(gray, cv2.fitEllipse(edge.astype(np.float32))), circle, size)


def perspective_frame(disc, circle, size: tuple[int, int]) -> np.ndarray | None:
    """Board -> photo map (right but for the turn) from the images of two concentric circles,
    the board's edge and the printed circle. Their pencil holds one degenerate conic, the
    vanishing line of the table counted twice; sending it to infinity leaves an affine view,
    where the disc's ellipse gives the rest."""
    norm = _normaliser(size)
    c1, c2 = _conic(disc, norm), _conic(circle, norm)
    vals, _ = np.linalg.eig(np.linalg.solve(c2, c1))
    vals = np.real(vals)
    pairs = [(abs(vals[i] - vals[j]), (vals[i] + vals[j]) / 2) for i in range(3) for j in range(i + 1, 3)]
    lam = min(pairs)[1]
    d = c1 - lam * c2
    ev, vec = np.linalg.eigh((d + d.T) / 2)
    line = vec[:, int(np.argmax(np.abs(ev)))]
    if abs(line[2]) < 1e-9:
        return None
    line = line / line[2]
    if np.hypot(line[0], line[1]) > 1.0:  # the vanishing line would cross the photo: not a table seen from above
        return None
    hp = np.array([[1, 0, 0], [0, 1, 0], [line[0], line[1], 1.0]])
    return _flattened_frame(hp @ norm, disc, size, 1.0)
