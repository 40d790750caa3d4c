"""How blurred a Geometrius photo is, measured on the tokens' printed polygon strokes, and
the blur undone before the polygons are measured again where it is heavy.

A shaking phone smears the photo along one direction (a streak), a lens out of focus evenly
(defocus). Heavily blurred (a streak of ~7 px and ~4 px of defocus at ~3.3 px per mm), a
short side's stroke runs into its neighbours' ink and the arcs inside the corners, and the
side's measured line leans: 11 % of the blurred tokens read right had an angle more than 2
degrees out (round 15). The blur is the same all over the photo, and every token prints its
polygon with a 0.9 mm stroke, so each long side's profile tells how far the blur spreads
across that side; sides of many directions (in the photo) give the blur's spread in every
direction: a 2 x 2 covariance, whose larger axis is the streak and whose smaller is the
defocus. Its kernel (a Gaussian for the defocus, a line for the streak) then undoes the
blur by a Wiener filter, token by token, on the channel the polygons are measured on.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import cv2
import numpy as np

from .geometrius_frame import normal_cdf
from .matching import sample_at
from .pose import apply_h

STROKE_MM = 0.9  # the polygon's printed stroke
ACROSS_MM = np.arange(-2.5, 2.5 + 1e-9, 0.1)  # each profile across a side, from its centre line
SPREADS_MM2 = np.linspace(0.0, 2.0, 81)  # blur variances tried across a side (mm^2)
LONG_SIDE_MM = 11.0  # only sides this long have a stretch clear of their corners and ticks
CORNER_CLEAR_MM = 5.0  # the arcs inside a corner and the other side's blurred ink stay this near it
TICKS_CLEAR_MM = 2.5  # the tick marks cross a side's middle
OTHER_SIDE_MM = 4.0  # a profile's middle this far from every other side
PROFILE_STEP_MM = 0.2  # places along a side looked at for a clear stretch
PROFILES = 8  # profiles per side, spread over its clear stretch (their median is fitted)
LEAST_SIDES = 6  # sides (over the whole photo) needed to measure the blur
LEAST_KEPT = 5  # sides the fit must keep after dropping the farthest: fewer measure no blur
TOLD_APART = 0.1  # C's three entries are told apart when the sides' unit rows' singular values span at most 10x
FIT_REACH = 2.0  # C's axes may reach this many times the widest spread a row can say (a fit extrapolates)
PSD_TOLERANCE_MM2 = 0.05  # a fitted spread this far below zero (mm^2, any direction) is noise; farther, no blur
SHARP_SPREAD_PX = 1.1  # a sharp photo's strokes measure this spread (pixels, printing, sharpening): not blur
HALF_WIDTH_VARIANCE = 5.5  # a streak L px long is fitted by a Gaussian of variance L^2 / 5.5 (same half width)
HEAVY_MM2 = 0.55  # blur whose larger axis spreads this much (token mm^2) is undone (round 15: 8 px^2 at 3.8 px per mm)
NOISE_TO_SIGNAL = 0.01  # the Wiener filter's: how much of the blur it dares undo
TOKEN_REACH_MM = 19.0  # a token's polygon and its profiles lie this near its centre


@lru_cache(maxsize=1)
def _blurred_strokes() -> np.ndarray:
    """Spreads x samples: the printed stroke's darkness across it, blurred by a Gaussian of
    each variance of SPREADS_MM2 (a table built once)."""
    sd = np.sqrt(np.maximum(SPREADS_MM2, 1e-4))[:, None]
    half = STROKE_MM / 2
    return normal_cdf((ACROSS_MM + half) / sd) - normal_cdf((ACROSS_MM - half) / sd)


def _stroke_spreads(profiles: np.ndarray) -> np.ndarray:
    """Per profile (a row each), the blur's variance (mm^2) across its side: the blurred
    printed stroke nearest it, its card level and ink depth free (least squares); NaN where
    no stroke darker than the card fits."""
    models = _blurred_strokes()
    m_mean = models.mean(1)
    m_var = np.maximum((models ** 2).mean(1) - m_mean ** 2, 1e-12)
    cov = profiles @ models.T / profiles.shape[1] - profiles.mean(1)[:, None] * m_mean  # profiles x spreads
    residual = profiles.var(1)[:, None] - cov ** 2 / m_var
    residual = np.where(cov < 0, residual, np.inf)  # the model is ink: the profile must darken with it
    best = np.argmin(residual, axis=1)
    found = np.isfinite(residual[np.arange(len(best)), best])
    return np.where(found, SPREADS_MM2[best], np.nan)


def _jacobian(H: np.ndarray, at: Sequence[float]) -> np.ndarray:
    """Homography ``H`` (token mm -> photo px) as a linear map near ``at`` (token mm)."""
    q = H @ np.array([at[0], at[1], 1.0])
    return (H[:2, :2] - np.outer(q[:2] / q[2], H[2, :2])) / q[2]


def _token_stretches(homographies: Sequence[np.ndarray]) -> np.ndarray:
    """Photo pixels per token millimetre along each token's most and least stretched
    directions at its centre (a row per token: H's local singular values)."""
    return np.array([np.linalg.svd(_jacobian(H, (0.0, 0.0)), compute_uv=False) for H in homographies])


def px_per_mm(homographies: Sequence[np.ndarray]) -> float:
    """Photo pixels per token millimetre (the median token's, over its area): a blur in
    photo px^2 over this squared is one in the tokens' mm^2, the same at every resolution."""
    return float(np.median(np.sqrt(_token_stretches(homographies).prod(1))))


def _across(H: np.ndarray, at: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The row [m0^2, 2 m0 m1, m1^2] whose product with a blur C's entries (xx, xy, yy; photo
    px^2) is C's variance (token mm^2) across a line through ``at`` (token mm, y down) of
    normal ``normal``, for one token's homography ``H``: m is the normal through the inverse
    of H's local Jacobian."""
    m = np.linalg.solve(_jacobian(H, at).T, normal)
    return np.array([m[0] ** 2, 2 * m[0] * m[1], m[1] ** 2])


def _told_apart(rows: np.ndarray) -> float:
    """How well the sides of ``rows`` (``_across``'s) tell C's three entries apart: the
    smallest over the largest singular value of the rows scaled to unit length. Sides of one
    or two directions fit any C along a line (0); sides of three clearly different directions
    pin it down. Conditioning, not a count of direction bins: two sides a degree apart across
    a bin's edge are one direction, not two."""
    if len(rows) < 3:
        return 0.0
    s = np.linalg.svd(rows / np.linalg.norm(rows, axis=1, keepdims=True), compute_uv=False)
    return float(s[-1] / s[0])


def _side_rows(red: np.ndarray, H: np.ndarray, vertices: Sequence[Sequence[float]]
               ) -> list[tuple[np.ndarray, float]]:
    """For each long side of one token's polygon (``vertices``: token mm, y up; ``H``: token mm,
    y down -> photo px): (a, spread) such that the blur's covariance C (photo px^2) gives
    a[0] C_xx + a[1] C_xy + a[2] C_yy = spread (mm^2) across the side."""
    v = np.asarray(vertices, np.float64) * [1, -1]
    d = np.roll(v, -1, axis=0) - v
    lengths = np.linalg.norm(d, axis=1)
    sides, middles = [], []
    for i in np.flatnonzero(lengths >= LONG_SIDE_MM):
        t = np.arange(CORNER_CLEAR_MM, lengths[i] - CORNER_CLEAR_MM + 1e-9, PROFILE_STEP_MM)
        t = t[np.abs(t - lengths[i] / 2) > TICKS_CLEAR_MM]
        middle = v[i] + t[:, None] * d[i] / lengths[i]
        # How near every other side comes (points x sides).
        s = np.clip(((middle[:, None, :] - v[None]) * d[None]).sum(2) / np.maximum(lengths ** 2, 1e-12), 0, 1)
        near = np.linalg.norm(middle[:, None, :] - (v[None] + s[..., None] * d[None]), axis=2)
        near[:, i] = np.inf
        middle = middle[near.min(1) > OTHER_SIDE_MM]
        if len(middle) >= PROFILES:
            sides.append(i)
            middles.append(middle[np.linspace(0, len(middle) - 1, PROFILES).round().astype(int)])
    if not sides:
        return []
    normals = np.column_stack([-d[sides, 1], d[sides, 0]]) / lengths[sides, None]
    pts = np.stack(middles)[:, :, None, :] + ACROSS_MM[None, None, :, None] * normals[:, None, None, :]
    profiles = sample_at(red, apply_h(H, pts.reshape(-1, 2))).reshape(len(sides), PROFILES, len(ACROSS_MM))
    spreads = _stroke_spreads(np.median(profiles, axis=1))
    return [(_across(H, (v[i] + v[(i + 1) % len(v)]) / 2, n), float(sp))
            for i, n, sp in zip(sides, normals, spreads) if np.isfinite(sp)]


def photo_blur(red: np.ndarray, polygons: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """The photo's blur beyond a sharp photo's, a 2 x 2 covariance in photo px^2, from the
    measured ``polygons`` ((token homography, vertices in token mm, y up) per token). Sides
    spoilt by a chip or a hand are outvoted: fitted three times, the rows farthest from the
    last fit dropped before the second and the third. None (no blur measured) when too few
    long sides show or survive, when they lie in too few directions, or when the fit spreads
    below zero in some direction (no blur does: the sides disagree). Capped at FIT_REACH
    times the widest spread the stroke table holds (SPREADS_MM2) along the most stretched
    token, so a wild fit cannot ask for a huge kernel."""
    rows = [r for H, v in polygons if len(v) >= 3 for r in _side_rows(red, H, v)]
    if len(rows) < LEAST_SIDES:
        return None
    A = np.array([a for a, _ in rows])
    y = np.array([s for _, s in rows])
    keep = np.ones(len(y), bool)
    x = np.linalg.lstsq(A, y, rcond=None)[0]
    for _ in range(2):
        off = np.abs(A @ x - y)
        keep = off <= max(3 * float(np.median(off[keep])), 1e-3)
        x = np.linalg.lstsq(A[keep], y[keep], rcond=None)[0]
    if keep.sum() < LEAST_KEPT or _told_apart(A[keep]) < TOLD_APART:
        return None
    C = np.array([[x[0], x[1]], [x[1], x[2]]])
    homographies = [H for H, v in polygons if len(v) >= 3]
    w, V = np.linalg.eigh(C)
    if w[0] < -PSD_TOLERANCE_MM2 * px_per_mm(homographies) ** 2:
        return None
    widest = FIT_REACH * SPREADS_MM2[-1] * float(_token_stretches(homographies).max()) ** 2
    if w[0] < 0 or w[1] > widest:
        C = V @ np.diag(np.clip(w, 0.0, widest)) @ V.T
    return C - SHARP_SPREAD_PX ** 2 * np.eye(2)


def blur_kernel(C: np.ndarray) -> np.ndarray:
    """The kernel of blur ``C`` (px^2): a streak along its larger axis, as long as the
    Gaussian fitted across it says (HALF_WIDTH_VARIANCE), blurred by the defocus of its
    smaller axis."""
    w, V = np.linalg.eigh(C)
    defocus = math.sqrt(max(float(w[0]), 0.0))
    streak = math.sqrt(max(HALF_WIDTH_VARIANCE * float(w[1] - w[0]), 0.0))
    size = (int(math.ceil(streak + 6 * defocus)) + 2) | 1  # the streak's ends spread a pixel on
    k = np.zeros((size, size), np.float32)
    c = size // 2
    direction = V[:, 1] * streak / 2
    for f in np.linspace(-1.0, 1.0, max(2, int(math.ceil(streak)) * 4)):
        x, y = c + f * direction[0], c + f * direction[1]
        x0, y0 = int(math.floor(x)), int(math.floor(y))
        fx, fy = x - x0, y - y0
        k[y0, x0] += (1 - fx) * (1 - fy)
        k[y0, x0 + 1] += fx * (1 - fy)
        k[y0 + 1, x0] += (1 - fx) * fy
        k[y0 + 1, x0 + 1] += fx * fy
    if defocus > 0.1:
        k = cv2.GaussianBlur(k, (size, size), defocus)
    return k / k.sum()


def heavy_blur(C: np.ndarray | None, px_per_token_mm: float) -> bool:
    """Whether blur ``C`` (photo px^2; ``px_per_token_mm``: ``px_per_mm``'s) spreads enough to
    be undone (a sharp photo's strokes never do). Weighed in token mm^2: a stroke runs into
    its neighbour's ink by millimetres, and a sharp photo's stroke spreads over more pixels
    the finer the photo (round 17: `hard` photos at 4000 x 3000 measured 8-15 px^2)."""
    return C is not None and float(np.linalg.eigvalsh(C)[1]) / px_per_token_mm ** 2 >= HEAVY_MM2


def _wiener(patch: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``patch`` (float32) with ``kernel``'s blur undone; its border mirrored past the edge so
    the filter wraps round no false edge."""
    pad = kernel.shape[0]
    big = cv2.copyMakeBorder(patch, pad, pad, pad, pad, cv2.BORDER_REFLECT)
    h, w = big.shape
    K = np.zeros((h, w), np.float32)
    K[:pad, :pad] = kernel
    K = np.roll(K, (-(pad // 2), -(pad // 2)), axis=(0, 1))
    F = np.fft.rfft2(K)
    out = np.fft.irfft2(np.fft.rfft2(big) * np.conj(F) / (np.abs(F) ** 2 + NOISE_TO_SIGNAL), s=(h, w))
    return out[pad:-pad, pad:-pad]


def unblurred(red: np.ndarray, C: np.ndarray, homographies: Sequence[np.ndarray]) -> np.ndarray:
    """``red`` with blur ``C`` undone round each token (``homographies``: token mm -> photo px).
    Each token's patch is filtered whole, but written back only inside its own square
    (TOKEN_REACH_MM, within half a pitch): in a turned field the patch's bounding box reaches
    into the next token's square and would overwrite its view."""
    kernel = blur_kernel(C)
    out = red.copy()
    h, w = red.shape[:2]
    reach = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) * TOKEN_REACH_MM
    for H in homographies:
        corners = apply_h(H, reach)
        x0, y0 = np.maximum(np.floor(corners.min(0)).astype(int), 0)
        x1, y1 = np.minimum(np.ceil(corners.max(0)).astype(int) + 1, [w, h])
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        sharp = _wiener(red[y0:y1, x0:x1].astype(np.float32), kernel)
        own = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(own, np.round((corners - [x0, y0]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        view = out[y0:y1, x0:x1]
        view[own > 0] = np.clip(np.rint(sharp[own > 0]), 0, 255).astype(red.dtype)
    return out
