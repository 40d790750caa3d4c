"""Straight line segments and their vanishing points: where a board's grid hides in a photo.

Why vanishing points: a game board's grid is the one structure in a photo made of many long,
straight, evenly spaced lines in a few directions. Under any camera tilt each family of
parallel grid lines meets in one vanishing point, whatever the board's rotation, and a hand,
a cup or stray pieces hide only a few of the hundreds of grid segments that vote for it.
Square boards have two families, hex boards three; this module does not care which.

Coordinates here are *normalised*: photo pixels minus the image centre, divided by half the
image diagonal, so homogeneous arithmetic is well conditioned (Hartley normalisation).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

MAX_SEGMENTS = 4000  # vanishing-point search cost grows with the segment count
LSD_SCALE = 0.6  # LSD works on the image shrunk by this (its default 0.8 costs twice the time)


@dataclass(frozen=True)
class Segments:
    """Line segments in normalised coordinates (N x 2 endpoints ``a`` and ``b``)."""

    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    @property
    def mid(self) -> np.ndarray:
        return 0.5 * (self.a + self.b)

    @property
    def length(self) -> np.ndarray:
        return np.linalg.norm(self.b - self.a, axis=1)

    @property
    def direction(self) -> np.ndarray:
        d = self.b - self.a
        return d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)

    @property
    def lines(self) -> np.ndarray:
        """Homogeneous lines (N x 3) scaled so that (a, b) is a unit normal."""
        ha = np.column_stack([self.a, np.ones(len(self))])
        hb = np.column_stack([self.b, np.ones(len(self))])
        ln = np.cross(ha, hb)
        return ln / np.maximum(np.linalg.norm(ln[:, :2], axis=1, keepdims=True), 1e-12)

    def subset(self, keep: np.ndarray) -> "Segments":
        return Segments(self.a[keep], self.b[keep])


@dataclass(frozen=True)
class Normaliser:
    """Photo pixels <-> normalised coordinates for one image size."""

    centre: np.ndarray
    scale: float

    @classmethod
    def for_size(cls, width: int, height: int) -> "Normaliser":
        return cls(np.array([(width - 1) / 2, (height - 1) / 2]), 0.5 * float(np.hypot(width, height)))

    def matrix(self) -> np.ndarray:
        """3x3 taking photo pixels to normalised coordinates."""
        s = 1.0 / self.scale
        return np.array([[s, 0, -self.centre[0] * s], [0, s, -self.centre[1] * s], [0, 0, 1.0]])


def detect_segments(gray: np.ndarray, min_length: float) -> tuple[Segments, Normaliser]:
    """LSD segments at least ``min_length`` pixels long, normalised.

    LSD rather than Canny + Hough because it gives each straight stretch once, with sub-pixel
    ends and no tuning of vote thresholds, and finds the faint grooves of empty cells.
    """
    h, w = gray.shape
    norm = Normaliser.for_size(w, h)
    found = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD, LSD_SCALE).detect(gray)[0]
    if found is None:
        return Segments(np.zeros((0, 2)), np.zeros((0, 2))), norm
    ends = found.reshape(-1, 4).astype(np.float64)
    keep = np.hypot(ends[:, 2] - ends[:, 0], ends[:, 3] - ends[:, 1]) >= min_length
    ends = ends[keep]
    if len(ends) > MAX_SEGMENTS:  # a busy table: the longest segments carry the grid
        length = np.hypot(ends[:, 2] - ends[:, 0], ends[:, 3] - ends[:, 1])
        ends = ends[np.argsort(-length)[:MAX_SEGMENTS]]
    a = (ends[:, :2] - norm.centre) / norm.scale
    b = (ends[:, 2:] - norm.centre) / norm.scale
    return Segments(a, b), norm


def _sin_to_vp(seg: Segments, vp: np.ndarray) -> np.ndarray:
    """|sin| of the angle between each segment and the ray from its midpoint to ``vp``."""
    towards = vp[:2][None, :] - seg.mid * vp[2]  # works for points at infinity too
    norm = np.linalg.norm(towards, axis=1)
    d = seg.direction
    cross = np.abs(d[:, 0] * towards[:, 1] - d[:, 1] * towards[:, 0])
    return np.where(norm > 1e-9, cross / np.maximum(norm, 1e-12), 1.0)


def _support(seg: Segments, length: np.ndarray, hyps: np.ndarray, sin_tol: float) -> np.ndarray:
    """Total inlier length of each hypothesis (H x 3), vectorised over hypotheses."""
    towards = hyps[:, None, :2] - seg.mid[None] * hyps[:, None, 2:3]
    norm = np.linalg.norm(towards, axis=2)
    d = seg.direction
    cross = np.abs(d[None, :, 0] * towards[..., 1] - d[None, :, 1] * towards[..., 0])
    inlier = (cross < sin_tol * norm) & (norm > 1e-9)
    return inlier.astype(np.float64) @ length


def family_of(seg: Segments, vp: np.ndarray, tol_deg: float = 2.0) -> np.ndarray:
    """Mask of the segments pointing at ``vp`` within ``tol_deg``."""
    return _sin_to_vp(seg, vp) < np.sin(np.deg2rad(tol_deg))


def refine_vp(seg: Segments, weight: np.ndarray) -> np.ndarray:
    """The point closest (weighted least squares) to all lines: the smallest eigenvector."""
    ln = seg.lines
    m = (ln * weight[:, None]).T @ ln
    _, vecs = np.linalg.eigh(m)
    vp = vecs[:, 0]
    return vp / np.linalg.norm(vp)


def vanishing_points(seg: Segments, rng: np.random.Generator, count: int = 3, iterations: int = 300,
                     tol_deg: float = 1.5, remove_deg: float = 4.0,
                     min_segments: int = 12) -> list[tuple[np.ndarray, np.ndarray]]:
    """Up to ``count`` vanishing points, strongest first, each with its inlier mask.

    RANSAC on pairs of segments, scored by total inlier length, so a few long grid lines
    outweigh many short texture edges. Each found family is removed with a wider tolerance
    (``remove_deg``) before the next search: a lens-bent family must not come back as a
    second, nearly identical vanishing point.
    """
    sin_tol = np.sin(np.deg2rad(tol_deg))
    sin_remove = np.sin(np.deg2rad(remove_deg))
    free = np.ones(len(seg), bool)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    length = seg.length
    lines = seg.lines
    for _ in range(count):
        idx = np.flatnonzero(free)
        if len(idx) < min_segments:
            break
        p = length[idx] ** 2
        p /= p.sum()
        pairs = rng.choice(idx, size=(iterations, 2), p=p)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        hyps = np.cross(lines[pairs[:, 0]], lines[pairs[:, 1]])
        hyps /= np.maximum(np.linalg.norm(hyps, axis=1, keepdims=True), 1e-12)
        if not len(hyps):
            break
        sub = seg.subset(idx)
        scores = np.concatenate([_support(sub, length[idx], chunk, sin_tol)
                                 for chunk in np.array_split(hyps, max(1, len(hyps) // 64))])
        best = hyps[int(np.argmax(scores))]
        for _ in range(2):  # least squares on the inliers, then re-collect them
            inl = free & (_sin_to_vp(seg, best) < sin_tol)
            if inl.sum() < min_segments:
                break
            best = refine_vp(seg.subset(inl), length[inl])
        inl = free & (_sin_to_vp(seg, best) < sin_tol)
        if inl.sum() < min_segments:
            break
        found.append((best, inl))
        free &= _sin_to_vp(seg, best) >= sin_remove
    return found


def undistort(seg: Segments, k: float) -> Segments:
    """Segments under the division lens model (normalised coordinates, see ``pose.Lens``)."""
    if k == 0.0:
        return seg
    fix = lambda p: p / (1.0 + k * (p * p).sum(1, keepdims=True))  # noqa: E731
    return Segments(fix(seg.a), fix(seg.b))


def lens_from_segments(seg: Segments, families: list[np.ndarray], lo: float = -0.4, hi: float = 0.2,
                       tol_deg: float = 3.0) -> float:
    """The radial coefficient that makes each family of segments meet best in one point.

    Plumb-line principle: lines straight in the world are straight in an undistorted image,
    so their pieces share one vanishing point. Barrel distortion bends a board's outer grid
    lines by up to a cell; fitting the grid without undoing it first lands whole lines on
    the wrong groove.
    """
    sin_tol2 = np.sin(np.deg2rad(tol_deg)) ** 2

    def spread(k: float) -> float:
        und = undistort(seg, k)
        total = 0.0
        for mask in families:
            fam = und.subset(mask)
            vp = refine_vp(fam, fam.length)
            s2 = np.minimum(_sin_to_vp(fam, vp) ** 2, sin_tol2)  # truncated: outliers count once
            total += float((s2 * fam.length).sum())
        return total

    grid = np.linspace(lo, hi, 13)
    best = grid[int(np.argmin([spread(k) for k in grid]))]
    step = grid[1] - grid[0]
    fine = np.linspace(best - step, best + step, 9)
    return float(fine[int(np.argmin([spread(k) for k in fine]))])
