"""The table under the board, drawn procedurally in world millimetres: plain, wood or a
patterned cloth, with the dim floor of the room beyond its edge, anti-aliased for the pixel
footprint at which each point is seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .camera import Camera, _plane_coords
from .draw import _lerp_into, _mix, _rep3, _tint, smoothstep



_PLAIN_COLOURS = [(0.92, 0.91, 0.88), (0.78, 0.78, 0.76), (0.84, 0.78, 0.68), (0.27, 0.27, 0.28),
                  (0.12, 0.12, 0.13), (0.16, 0.36, 0.23), (0.45, 0.52, 0.60), (0.72, 0.60, 0.45),
                  (0.60, 0.32, 0.22), (0.95, 0.95, 0.95)]
_WOODS = [((0.78, 0.60, 0.40), (0.55, 0.36, 0.20)),  # oak
          ((0.45, 0.30, 0.20), (0.26, 0.16, 0.10)),  # walnut
          ((0.86, 0.70, 0.50), (0.68, 0.46, 0.26)),  # pine
          ((0.68, 0.64, 0.58), (0.46, 0.42, 0.37)),  # grey-washed
          ((0.62, 0.35, 0.22), (0.40, 0.20, 0.12))]  # cherry
_CLOTH_INKS = [(0.75, 0.12, 0.15), (0.12, 0.28, 0.65), (0.12, 0.45, 0.25), (0.92, 0.76, 0.18),
               (0.10, 0.14, 0.32), (0.45, 0.28, 0.16), (0.10, 0.10, 0.10), (0.90, 0.45, 0.12),
               (0.50, 0.20, 0.45)]
_CLOTH_GROUNDS = [(0.95, 0.94, 0.90), (0.93, 0.88, 0.78), (0.85, 0.88, 0.92)]
CLOTH_PATTERNS = ("gingham", "stripes", "dots", "floral", "tartan", "tiles")


@dataclass(frozen=True)
class TableStyle:
    """A table surface drawn procedurally in world millimetres, plus the room beyond its edge."""

    kind: str  # "plain", "wood" or "cloth"
    pattern: str  # cloth pattern (see CLOTH_PATTERNS); "" otherwise
    colours: tuple[tuple[float, float, float], ...]
    period_mm: float  # plank width, check size, dot spacing...
    angle_deg: float  # direction of planks / weave relative to the board
    gloss: float
    half_size_mm: tuple[float, float]  # table half extent; beyond it the floor shows
    centre_mm: tuple[float, float]
    room_rgb: tuple[float, float, float]
    seed: int

    @staticmethod
    def random(rng: np.random.Generator, kind: str) -> TableStyle:
        def jitter(c):
            return tuple(float(np.clip(v + rng.normal(0, 0.03), 0, 1)) for v in c)

        pattern = ""
        if kind == "plain":
            colours = (jitter(_PLAIN_COLOURS[rng.integers(len(_PLAIN_COLOURS))]),)
            period, gloss = 0.0, rng.uniform(0.05, 0.45)
        elif kind == "wood":
            light, dark = _WOODS[rng.integers(len(_WOODS))]
            colours = (jitter(light), jitter(dark))
            period, gloss = rng.uniform(90, 190), rng.uniform(0.2, 0.6)
        elif kind == "cloth":
            pattern = CLOTH_PATTERNS[rng.integers(len(CLOTH_PATTERNS))]
            inks = rng.choice(len(_CLOTH_INKS), 3, replace=False)
            colours = (jitter(_CLOTH_GROUNDS[rng.integers(len(_CLOTH_GROUNDS))]),
                       *(jitter(_CLOTH_INKS[i]) for i in inks))
            period, gloss = rng.uniform(12, 45), rng.uniform(0.0, 0.08)
        else:
            raise ValueError(f"unknown table {kind!r}")
        half = (float(rng.uniform(450, 900)), float(rng.uniform(380, 650)))
        centre = (float(rng.uniform(-0.3, 0.3) * (half[0] - 250)), float(rng.uniform(-0.3, 0.3) * (half[1] - 250)))
        room = tuple(float(v) for v in rng.uniform(0.08, 0.4) * rng.uniform(0.8, 1.2, 3))
        return TableStyle(kind, pattern, colours, float(period), float(rng.uniform(0, 180)),
                          float(gloss), half, centre, room, int(rng.integers(2**31)))


class _Noise:
    """Smooth value noise anchored to world coordinates (a random grid sampled by remap)."""

    def __init__(self, rng: np.random.Generator, n: int = 256):
        self.grid = rng.random((n, n), dtype=np.float32)
        self.n = n

    def __call__(self, x: np.ndarray, y: np.ndarray, scale: float, footprint: np.ndarray) -> np.ndarray:
        """Noise with feature size `scale` mm, faded to its mean where finer than a pixel.

        Features many pixels wide are sampled on a 4x coarser grid and interpolated."""
        if scale / float(np.median(footprint[::16, ::16])) > 32:
            h, w = x.shape
            coarse = self._sample(x[1::4, 1::4], y[1::4, 1::4], scale, footprint[1::4, 1::4], cv2.INTER_CUBIC)
            return cv2.resize(coarse, (w, h), interpolation=cv2.INTER_LINEAR)
        return self._sample(x, y, scale, footprint, cv2.INTER_LINEAR)

    def _sample(self, x, y, scale, footprint, interpolation) -> np.ndarray:
        u = np.mod(x * np.float32(1.0 / scale), self.n).astype(np.float32)
        v = np.mod(y * np.float32(1.0 / scale), self.n).astype(np.float32)
        val = cv2.remap(self.grid, u, v, interpolation, borderMode=cv2.BORDER_WRAP)
        return 0.5 + (val - 0.5) * _resolvable(scale, footprint)

    def fbm(self, x, y, scale, footprint, octaves: int = 3) -> np.ndarray:
        total = sum(0.5**k * (self(x, y, scale / 2**k, footprint) - 0.5) for k in range(octaves))
        return 0.5 + total / (2 - 0.5 ** (octaves - 1))


def _resolvable(period_mm: float | np.ndarray, footprint: np.ndarray) -> np.ndarray:
    """1 where a pattern of this period spans >= 3 pixels, fading to 0 below ~1.5 (anti-aliasing)."""
    return np.clip(period_mm / footprint / 1.5 - 1.0, 0.0, 1.0)


def _stripe(coord: np.ndarray, period: float, duty: float, footprint: np.ndarray) -> np.ndarray:
    """Anti-aliased stripes: 1 on a `duty` fraction of each period, soft over one pixel."""
    d = np.abs(np.mod(coord / period, 1.0) - 0.5) * period  # distance from stripe centre, mm
    half = duty * period / 2
    return 1 - smoothstep(half - footprint / 2, half + footprint / 2, d)


def _table_albedo(style: TableStyle, x: np.ndarray, y: np.ndarray,
                  footprint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Table colour (H x W x 3) and gloss (H x W) at world points (x, y) mm."""
    rng = np.random.default_rng(style.seed)
    noise = _Noise(rng)
    ang = math.radians(style.angle_deg)
    a = x * math.cos(ang) + y * math.sin(ang)  # along the planks / weave
    b = -x * math.sin(ang) + y * math.cos(ang)
    c = [np.array(col, np.float32) for col in style.colours]
    gloss = np.full(x.shape, style.gloss, np.float32)
    if style.kind == "plain":
        tone = 1 + 0.10 * (noise.fbm(x, y, 260, footprint) - 0.5) + 0.06 * (noise(x, y, 1.2, footprint) - 0.5)
        rgb = _tint(tone.astype(np.float32), c[0])
    elif style.kind == "wood":
        plank = np.floor(b / style.period_mm)
        per_plank = rng.random((4, 97)).astype(np.float32)  # offset, ring size, tone, joint spacing
        idx = np.mod(plank, 97).astype(np.int32)
        along = a + per_plank[0][idx] * 2000
        warp = 22 * (noise.fbm(along, b * 4, 300, footprint) - 0.5) + 3 * (noise(along, b, 40, footprint) - 0.5)
        ring_period = 5 + 6 * per_plank[1][idx]
        rings = (0.5 + 0.5 * np.sin((b + warp) * (2 * math.pi) / ring_period)) ** 5
        rings = 0.5 + (rings - 0.5) * _resolvable(ring_period, footprint)
        fibre = noise(along * 0.05, b * 2.5, 1.0, footprint)  # fine streaks along the grain
        mix = np.clip(0.15 + 0.55 * rings + 0.25 * fibre + 0.35 * (per_plank[2][idx] - 0.5), 0, 1)
        rgb = _mix(c[0], c[1], mix)
        joint_len = 700 + 900 * per_plank[3][idx]
        seam = np.maximum(_stripe(b, style.period_mm, 1.2 / style.period_mm, footprint),
                          _stripe(along, joint_len, 1.5 / joint_len, footprint))
        rgb *= _rep3(1 - 0.55 * seam)
        gloss *= 1 - 0.8 * seam
    else:
        rgb = _cloth(style, a, b, x, y, c, noise, footprint)
        weave = _stripe(a, 0.9, 0.5, footprint) * _stripe(b, 0.9, 0.5, footprint)
        folds = noise.fbm(x * 0.6, y, 180, footprint)
        rgb *= _rep3(((1 + 0.05 * (weave - 0.25)) * (0.88 + 0.24 * folds)).astype(np.float32))
    return _with_room(style, rgb, gloss, x, y, footprint, noise)


def _cloth(style: TableStyle, a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray,
           c: list[np.ndarray], noise: _Noise, footprint: np.ndarray) -> np.ndarray:
    """The printed pattern of a tablecloth (a, b: coordinates along and across the weave)."""
    p = style.period_mm
    ground, ink, ink2, ink3 = c
    if style.pattern == "gingham":
        t = (_stripe(a, p, 0.5, footprint) + _stripe(b, p, 0.5, footprint)) / 2
        return _mix(ground, ink, t)
    if style.pattern == "stripes":
        s1 = _stripe(b, p * 1.5, 0.35, footprint)
        s2 = _stripe(b + p * 0.5, p * 1.5, 0.08, footprint)
        return _mix(_mix(ground, ink, s1), ink2, s2)
    if style.pattern == "dots":
        da = np.mod(a / p + 0.5 * np.mod(np.floor(b / p), 2), 1.0) - 0.5
        db = np.mod(b / p, 1.0) - 0.5
        d = np.sqrt(da * da + db * db) * p
        dot = 1 - smoothstep(0.22 * p - footprint / 2, 0.22 * p + footprint / 2, d)
        return _mix(ground, ink, dot)
    if style.pattern == "floral":
        f1 = smoothstep(0.60, 0.62, noise.fbm(x, y, p * 1.4, footprint))
        f2 = smoothstep(0.66, 0.68, noise.fbm(y + 977, x, p * 0.9, footprint))
        f3 = smoothstep(0.75, 0.77, noise(x + 311, y, p * 0.25, footprint))
        return _mix(_mix(_mix(ground, ink, f1), ink2, f2), ink3, f3)
    if style.pattern == "tartan":  # woven: the colour is the mean of the warp and weft threads
        warp = weft = ground
        for col, period, duty in ((ink, p * 2.0, 0.45), (ink2, p * 2.0, 0.12), (ink3, p * 0.67, 0.06)):
            warp = _mix(warp, col, _stripe(a, period, duty, footprint))
            weft = _mix(weft, col, _stripe(b, period, duty, footprint))
        return (warp + weft) / 2
    if style.pattern == "tiles":  # grid lines that look a lot like a game board's
        line = np.maximum(_stripe(a, p * 1.6, 2.5 / (p * 1.6), footprint),
                          _stripe(b, p * 1.6, 2.5 / (p * 1.6), footprint))
        return _mix(ground, ink, line)
    raise ValueError(f"unknown cloth pattern {style.pattern!r}")


def _with_room(style: TableStyle, rgb: np.ndarray, gloss: np.ndarray, x: np.ndarray, y: np.ndarray,
               footprint: np.ndarray, noise: _Noise) -> tuple[np.ndarray, np.ndarray]:
    """Beyond the table's edge: the floor of the room, dim and out of focus."""
    hx, hy = style.half_size_mm
    dx = np.abs(x - style.centre_mm[0]) - hx
    dy = np.abs(y - style.centre_mm[1]) - hy
    edge = np.maximum(dx, dy)
    outside = smoothstep(-footprint, footprint, edge)
    if not np.any(outside > 0):
        return rgb, gloss
    room = _tint((0.7 + 0.6 * noise.fbm(x, y, 700, footprint)).astype(np.float32), style.room_rgb)
    rim = smoothstep(-25 - footprint, -25 + footprint, edge) * (1 - outside)  # the table's rounded lip
    rgb = rgb * _rep3((1 - 0.35 * rim).astype(np.float32))
    _lerp_into(rgb, room, outside.astype(np.float32))
    return rgb, gloss * (1 - outside)


def table_layer(style: TableStyle, camera: Camera, undist: np.ndarray, board_depth: float,
                scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Table (and floor beyond it) at up to ~2 MP, far parts out of focus.

    `undist` is the camera's undistorted-coordinate map, `board_depth` the distance the phone
    focused at, `scale` the photo width over `REFERENCE_WIDTH`."""
    w, h = camera.size
    f = min(1.0, math.sqrt(2.0e6 / (w * h)))
    undist = undist if f == 1.0 else cv2.resize(undist, (round(w * f), round(h * f)))
    xy = _plane_coords(undist, camera.plane_homography(0.0))
    x, y = xy[..., 0], xy[..., 1]
    cx, cy, cz = camera.centre
    dist2 = (x - cx) ** 2 + (y - cy) ** 2 + cz * cz
    footprint = dist2 / (camera.focal * abs(cz) * f)  # mm per (table-resolution) pixel
    rgb, gloss = _table_albedo(style, x, y, footprint.astype(np.float32))
    rgb = rgb.astype(np.float32)
    r = camera.R[2]
    depth = (x - cx) * r[0] + (y - cy) * r[1] - cz * r[2]
    defocus = np.clip((np.abs(depth / board_depth - 1) - 0.3) * 2.0, 0, 1)
    if defocus.max() > 0.01:  # a phone focused on the board blurs the far table and floor
        blurred = cv2.GaussianBlur(rgb, (0, 0), 3.0 * scale * f)
        _lerp_into(rgb, blurred, defocus.astype(np.float32))
    if f < 1.0:
        rgb = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_LINEAR)
        gloss = cv2.resize(gloss, (w, h), interpolation=cv2.INTER_LINEAR)
    return rgb, gloss.astype(np.float32)
