"""Optics and sensor: lens defocus, motion blur, read and shot noise, 8-bit quantisation and
the phone's sharpening, turning scene radiance into the BGR photo.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from .conditions import Conditions
from .draw import _rep3



def _motion_kernel(length: float, angle: float) -> np.ndarray:
    """A normalised anti-aliased line: the path of a shaking phone during the exposure."""
    n = int(math.ceil(length)) | 1
    line = np.zeros((n, n), np.float32)
    c = n // 2
    dx, dy = math.cos(angle) * length / 2, math.sin(angle) * length / 2
    cv2.line(line, (round((c - dx) * 16), round((c - dy) * 16)), (round((c + dx) * 16), round((c + dy) * 16)),
             1.0, 1, cv2.LINE_AA, 4)
    return line / line.sum()


def _blur(img: np.ndarray, defocus: float, motion: float, angle: float) -> np.ndarray:
    """Lens defocus (a Gaussian: separable, and at these radii indistinguishable from a disc)
    and motion blur. Long streaks run on a downscaled image: what they blur away is exactly
    the detail the downscale loses, and a 12 MP photo stays fast."""
    if defocus >= 0.5:
        img = cv2.GaussianBlur(img, (0, 0), 0.6 * defocus, borderType=cv2.BORDER_REFLECT)
    if motion >= 1.0:
        f = max(1, int(motion // 3))
        h, w = img.shape[:2]
        small = img if f == 1 else cv2.resize(img, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
        small = cv2.filter2D(small, -1, _motion_kernel(motion / f, angle), borderType=cv2.BORDER_REFLECT)
        img = small if f == 1 else cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    return img


_NOISE_TILE = 1031  # noise is drawn once per view and tiled: a prime period shows no pattern


def _expose(radiance: np.ndarray, c: Conditions, rng: np.random.Generator, bank: np.ndarray,
            scale: float) -> np.ndarray:
    """Optics and sensor: blur, noise, 8-bit quantisation, the phone's sharpening -> BGR.

    `radiance` is consumed (modified in place)."""
    img = _blur(radiance, c.defocus_px * scale, c.motion_px * scale, float(rng.uniform(0, math.pi)))
    h, w = img.shape[:2]
    # Read noise plus shot noise growing with the local signal (taken at 1/8 resolution).
    q = 8
    grey = cv2.cvtColor(cv2.resize(img, (max(1, w // q), max(1, h // q)), interpolation=cv2.INTER_AREA),
                        cv2.COLOR_RGB2GRAY)
    sigma = (0.35 + 0.65 * np.sqrt(2 * np.clip(grey, 0, 1))) * (c.noise / 255)
    sigma = cv2.resize(sigma.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    # A random window of the noise bank, tiled over the frame.
    th, tw = bank.shape[0] - 32, bank.shape[1] - 32
    oy, ox = (int(v) for v in rng.integers(0, 33, 2))
    for by in range(0, h, th):
        for bx in range(0, w, tw):
            block = img[by:by + th, bx:bx + tw]
            bh, bw = block.shape[:2]
            block += bank[oy:oy + bh, ox:ox + bw] * _rep3(np.ascontiguousarray(sigma[by:by + bh, bx:bx + bw]))
    out = cv2.addWeighted(img, 255.0, img, 0.0, 0.0, dtype=cv2.CV_8U)  # scale, round, saturate
    if c.sharpen > 0:
        soft = cv2.GaussianBlur(out, (0, 0), max(1.0, math.sqrt(scale)))
        out = cv2.addWeighted(out, 1 + c.sharpen, soft, -c.sharpen, 0)
    return cv2.cvtColor(out, cv2.COLOR_RGB2BGR)
