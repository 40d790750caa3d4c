"""Small raster helpers shared by the synthetic-photo modules: easing, anti-aliased polygon
fills, soft masks, per-pixel colour blends and region-of-interest bookkeeping.

Images are float32 RGB in [0, 1]; pixel centres sit at integers (OpenCV's convention).
"""

from __future__ import annotations

import math
from typing import Sequence

import cv2
import numpy as np


def smoothstep(e0: float | np.ndarray, e1: float | np.ndarray, x: np.ndarray) -> np.ndarray:
    """Hermite easing from 0 at `e0` to 1 at `e1` (either order), in `x`'s precision."""
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def _roi(pts: np.ndarray, size: tuple[int, int], pad: int) -> tuple[int, int, int, int] | None:
    """Clipped integer bounding box (x0, y0, x1, y1) of points, or None if off-frame."""
    lo = np.floor(pts.min(0)).astype(int) - pad
    hi = np.ceil(pts.max(0)).astype(int) + pad + 1
    x0, y0 = max(lo[0], 0), max(lo[1], 0)
    x1, y1 = min(hi[0], size[0]), min(hi[1], size[1])
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _fixed4(polys: Sequence[np.ndarray], origin=(0, 0)) -> list[np.ndarray]:
    """Float pixel polygons, relative to `origin`, in OpenCV's 4-bit fixed point (shift=4)."""
    return [np.round(np.clip(np.asarray(p) - origin, -1e6, 1e6) * 16).astype(np.int32) for p in polys]


def _fill(canvas: np.ndarray, polys: Sequence[np.ndarray], value, origin=(0, 0), aa: bool = True) -> None:
    """Fill polygons given in float pixel coordinates (sub-pixel accurate, anti-aliased)."""
    cv2.fillPoly(canvas, _fixed4(polys, origin), value, cv2.LINE_AA if aa else cv2.LINE_8, shift=4)


def _densify(poly: np.ndarray, step: float) -> np.ndarray:
    """Insert points along a closed polygon's edges so lens distortion can bend them."""
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        n = max(1, int(math.ceil(np.linalg.norm(b - a) / step)))
        out.append(a + (b - a) * np.arange(n)[:, None] / n)
    return np.concatenate(out)


def _ray_exit(outline_xy: np.ndarray, direction: np.ndarray) -> float:
    """Distance from the origin to where a ray leaves a closed outline (the board's edge)."""
    a = outline_xy
    b = np.roll(outline_xy, -1, axis=0)
    e = b - a
    den = direction[0] * e[:, 1] - direction[1] * e[:, 0]
    ok = np.abs(den) > 1e-12
    t = np.where(ok, (a[:, 0] * e[:, 1] - a[:, 1] * e[:, 0]) / np.where(ok, den, 1), -1)
    u = np.where(ok, (a[:, 0] * direction[1] - a[:, 1] * direction[0]) / np.where(ok, den, 1), -1)
    hit = ok & (u >= 0) & (u <= 1) & (t > 0)
    return float(t[hit].max()) if np.any(hit) else 0.0


def _rep3(m: np.ndarray) -> np.ndarray:
    """H x W -> H x W x 3. (numpy broadcasting over a trailing axis of 3 is ~10x slower than
    an elementwise product with this copy, so per-pixel factors go through it.)"""
    return cv2.merge((m, m, m))


def _tint(m: np.ndarray, rgb) -> np.ndarray:
    """An H x W map times a colour: H x W x 3."""
    return cv2.merge((m * np.float32(rgb[0]), m * np.float32(rgb[1]), m * np.float32(rgb[2])))


def _mix(c0, c1, t: np.ndarray) -> np.ndarray:
    """Per-pixel blend from colour (or image) c0 to colour c1 by t (H x W)."""
    c0 = np.asarray(c0, np.float32)
    if c0.ndim == 1:
        return cv2.merge(tuple(np.float32(c0[k]) + np.float32(c1[k] - c0[k]) * t for k in range(3)))
    out = _tint(np.ones_like(t), c1)
    return cv2.blendLinear(out, c0, t.astype(np.float32), (1 - t).astype(np.float32))


def _lerp_into(dst: np.ndarray, src: np.ndarray, alpha: np.ndarray) -> None:
    """dst <- dst + (src - dst) * alpha, in place; alpha is H x W float32."""
    cv2.blendLinear(src, dst, alpha, 1 - alpha, dst=dst)


def _chroma(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Colourfulness (max - min channel) and darkest channel, as the sensor clips them at 1."""
    r, g, b = (np.minimum(rgb[..., k], 1) for k in range(3))
    darkest = np.minimum(np.minimum(r, g), b)
    return np.maximum(np.maximum(r, g), b) - darkest, darkest


def _blur_mask(mask: np.ndarray, sigma: float) -> np.ndarray:
    if sigma < 0.3:
        return mask
    return cv2.GaussianBlur(mask, (0, 0), sigma, borderType=cv2.BORDER_REPLICATE)


def _to_small(px: np.ndarray, q: int) -> np.ndarray:
    """Photo pixel coordinates -> coordinates on a grid q times coarser (centres aligned)."""
    return (np.asarray(px) + 0.5) / q - 0.5


def _from_small(small: np.ndarray, size: tuple[int, int], q: int) -> np.ndarray:
    """Upsample a q-times coarser layer (from `_to_small` coordinates) to the full frame."""
    to_small = np.float32([[1 / q, 0, 0.5 / q - 0.5], [0, 1 / q, 0.5 / q - 0.5]])
    return cv2.warpAffine(small, to_small, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _soft_mask(size: tuple[int, int], polys_px: Sequence[np.ndarray], sigma_px: float, q: int = 4) -> np.ndarray:
    """Polygons filled and blurred by `sigma_px`, drawn at 1/q resolution (soft things are cheap)."""
    canvas = np.zeros((size[1] // q + 1, size[0] // q + 1), np.uint8)
    _fill(canvas, [_to_small(p, q) for p in polys_px], 255)
    return _from_small(_blur_mask(canvas.astype(np.float32) / 255, sigma_px / q), size, q)

