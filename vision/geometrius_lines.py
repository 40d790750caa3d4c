"""Straight lines fitted to a Geometrius token's edge points, outvoting what is not the edge.

A frame line or a polygon's side is found as points along its edges; a chip, a hand, a tick
mark or a speck puts some of them off the line. The lines are fitted robustly (the median
over pairs of points, then the points near it), and the two edges of one printed stroke
together, parallel, so that each edge's points check the other's.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


PARALLEL_EDGE_OWN = 8  # each edge needs this many points for the side's direction to rest on its own line


@lru_cache(maxsize=1024)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """60 random pairs of n points, the same every time for the same n (reproducible reads)."""
    rng = np.random.default_rng(n)
    return rng.integers(0, n, 60), rng.integers(0, n, 60)


def robust_line(a: np.ndarray, p: np.ndarray, tol: float = 0.7) -> tuple[float, float] | None:
    """p = m a + b through most points: the pair of points with most others within ``tol``
    (a stack leaning over the frame, a hand, glare spoil part of it), then least squares."""
    n = len(a)
    if n < 8:
        return None
    i, j = _pairs(n)
    good = np.abs(a[i] - a[j]) > 0.25 * (a.max() - a.min())
    if not good.any():
        return None
    i, j = i[good], j[good]
    m = (p[j] - p[i]) / (a[j] - a[i])
    b = p[i] - m * a[i]
    counts = np.count_nonzero(np.abs(p[None, :] - (m[:, None] * a[None, :] + b[:, None])) < tol, axis=1)
    k = int(np.argmax(counts))
    keep = np.abs(p - (m[k] * a + b[k])) < tol
    if np.count_nonzero(keep) < max(8, n // 3):
        return None
    x, y = a[keep], p[keep]
    x_mean, y_mean = x.mean(), y.mean()
    dx = x - x_mean
    m_ = float((dx * (y - y_mean)).sum() / (dx * dx).sum())
    return m_, float(y_mean - m_ * x_mean)


def parallel_edges(t: np.ndarray, c: np.ndarray, outer: np.ndarray, tol: float
                    ) -> tuple[float, float] | None:
    """A side's centre line c = m t + b from its stroke's edges at ``t`` along it, ``c``
    across it, each moved by half the stroke's width towards the centre (``outer``: the
    outer edge's points, else the inner's): (m, b), or None. Each edge keeps its own offset because the width is
    only an estimate: motion blur widens a stroke by how far the streak runs across it, and
    a side with few profiles showing both edges takes its width from the token's other
    sides, so its two edges' points lie on two parallel lines. One line through both leaned
    wherever one edge showed at the side's ends and the other only in its middle (a hexagon's
    short sides read 3 degrees out). The direction, and so every angle, rests on each edge's
    own run of points; the offset is the two edges' mean (the width then cancels). RANSAC
    over pairs of points on one edge, then least squares. (The single line through all the
    points still says whether the side is straight: a bent side shows as one edge's points
    leaving it.)
    None too when either edge has fewer than PARALLEL_EDGE_OWN points, given or kept on the
    line RANSAC finds: with its own offset free, a few points on a short stretch add next to
    nothing to the direction, which would then rest on the other edge alone, and on a short
    side that edge's profiles all lie near a corner, where the next side's blurred ink shifts
    them (a P08's 5 mm side beside its reflex corner, 2.8 px/mm: outwards by 0.05 mm at one
    end, inwards by 0.07 at the other, its inner edge's 7 points only in its middle). Tied
    to that edge by the stroke's width, the few points pull the single line less far (that
    corner read 1.8 degrees out, not 2.0)."""
    n = len(t)
    if n < 8 or min(outer.sum(), (~outer).sum()) < PARALLEL_EDGE_OWN:
        return None
    i, j = _pairs(n)
    good = (outer[i] == outer[j]) & (np.abs(t[i] - t[j]) > 0.25 * (t.max() - t.min()))
    if not good.any():
        return None
    i, j = i[good], j[good]
    m = (c[j] - c[i]) / (t[j] - t[i])
    rest = c[None, :] - m[:, None] * t[None, :]  # each hypothesis's offsets
    counts = np.zeros(len(m), np.intp)
    offset = {}
    for edge in (True, False):  # each edge's offset: the median of its own points'
        own = rest[:, outer == edge]
        offset[edge] = median(own, axis=1)
        counts += np.count_nonzero(np.abs(own - offset[edge][:, None]) < tol, axis=1)
    best = int(np.argmax(counts))
    keep = np.abs(rest[best] - np.where(outer, offset[True][best], offset[False][best])) < tol
    if keep.sum() < max(8, n // 3) or min((keep & outer).sum(), (keep & ~outer).sum()) < PARALLEL_EDGE_OWN:
        return None  # the guard above holds for the points each edge keeps on its line too
    design = np.column_stack([t[keep], outer[keep], ~outer[keep]]).astype(np.float64)
    (slope, outer_offset, inner_offset), *_ = np.linalg.lstsq(design, c[keep], rcond=None)
    return float(slope), float((outer_offset + inner_offset) / 2)


def median(x: np.ndarray, axis: int) -> np.ndarray:
    """``np.median(x, axis)``, the same values, without its overhead (it is taken per side of
    every frame and every side's RANSAC hypotheses, many times a photo). ``x`` must not be
    empty along ``axis`` (every caller keeps at least 8 points)."""
    n = x.shape[axis]
    mid = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    return np.take(np.partition(x, mid, axis=axis), mid, axis=axis).mean(axis)


def quantile(x: np.ndarray, q: float) -> float:
    """``np.percentile(x, 100 q)`` (linear between order statistics), without its overhead:
    only the two order statistics it lies between are placed (no whole sort)."""
    at = q * (len(x) - 1)
    lo = int(at)
    hi = min(lo + 1, len(x) - 1)
    x = np.partition(x, [lo, hi])
    return float(x[lo] + (at - lo) * (x[hi] - x[lo]))
