"""The room's light: exposure, colour cast, fall-off and vignette, soft shadows of off-frame
objects, and specular glare of lamps and windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .board import BoardGeometry
from .camera import Camera
from .conditions import Conditions
from .draw import _blur_mask, _densify, _fill, _from_small, _rep3, _roi, _soft_mask, _to_small, smoothstep



@dataclass(frozen=True)
class GlareSpot:
    """A specular reflection of a lamp or a window, placed relative to the board so it hits it."""

    u: float  # centre, as fractions of the board texture's width and height
    v: float
    size: float  # radius as a fraction of the board's on-screen size
    aspect: float
    angle_deg: float
    window: bool  # a window pane with mullions rather than a round lamp
    strength: float


@dataclass(frozen=True)
class CastShadow:
    """Soft shadow of an off-frame object (the photographer, a lamp shade) on the board plane."""

    polygon: tuple[tuple[float, float], ...]  # board-texture fractions; may reach beyond 0..1
    softness: float  # penumbra as a fraction of the board size
    darkness: float


def white_balance_gains(cast: float) -> np.ndarray:
    """RGB gains of a residual colour cast (-1 cool .. +1 warm), luminance kept at 1."""
    warm, cool = max(cast, 0.0), max(-cast, 0.0)
    g = np.array([1 - 0.30 * cool, 1 - 0.13 * warm - 0.07 * cool, 1 - 0.48 * warm])
    return g / (0.30 * g[0] + 0.59 * g[1] + 0.11 * g[2])


@dataclass(frozen=True)
class Light:
    """The room's light: a main source (for cast shadows), colour, fall-off, glare, shadows."""

    azimuth_deg: float
    elevation_deg: float
    penumbra_deg: float  # apparent size of the source: how soft cast shadows are
    cast: float  # white balance, see Conditions.white_balance
    exposure: float
    gradient: float
    gradient_angle_deg: float
    gradient_gamma: float
    vignette: float
    glare: tuple[GlareSpot, ...]
    shadows: tuple[CastShadow, ...]

    @staticmethod
    def random(rng: np.random.Generator, c: Conditions) -> Light:
        glare = tuple(
            GlareSpot(u=float(rng.uniform(0.12, 0.88)), v=float(rng.uniform(0.12, 0.88)),
                      size=float(rng.uniform(0.025, 0.09)), aspect=float(rng.uniform(1.0, 2.6)),
                      angle_deg=float(rng.uniform(0, 180)), window=bool(rng.random() < 0.35),
                      strength=float(c.glare * rng.uniform(0.75, 1.15)))
            for _ in range(c.glare_spots if c.glare > 0 else 0))
        n_shadows = 0 if c.shadow <= 0 else 1 + int(rng.random() < 0.3)
        shadows = tuple(_random_shadow(rng, c.shadow) for _ in range(n_shadows))
        return Light(float(rng.uniform(0, 360)), float(rng.uniform(50, 78)), float(rng.uniform(2, 8)),
                     c.white_balance, c.exposure, c.gradient, float(rng.uniform(0, 360)),
                     float(rng.uniform(0.7, 1.6)), c.vignette, glare, shadows)

    @property
    def gains(self) -> np.ndarray:
        return white_balance_gains(self.cast)

    def shadow_shift(self, height_mm: float | np.ndarray) -> np.ndarray:
        """World XY displacement from a point `height_mm` above a surface to its shadow."""
        az, el = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        return -np.multiply.outer(np.asarray(height_mm, np.float64) / math.tan(el),
                                  np.array([math.cos(az), math.sin(az)]))


def _random_shadow(rng: np.random.Generator, darkness: float) -> CastShadow:
    if rng.random() < 0.55:  # a straight-ish soft edge (a wall, a person beside the table)
        a = rng.uniform(0, 2 * math.pi)
        n = np.array([math.cos(a), math.sin(a)])
        along = np.array([-n[1], n[0]])
        p0 = 0.5 + n * rng.uniform(-0.22, 0.25)
        t = np.linspace(-2.5, 2.5, 25)
        wave = 0.04 * np.sin(t * rng.uniform(1.5, 4) + rng.uniform(0, 6))
        edge = p0 + np.outer(t, along) + np.outer(wave, n)
        poly = np.vstack([edge, edge[::-1] + 4 * n])
    else:  # a blob (head and shoulders, a lamp shade)
        centre = rng.uniform(-0.05, 1.05, 2)
        r = rng.uniform(0.2, 0.45) * np.array([1.0, rng.uniform(0.6, 1.4)])
        t = np.linspace(0, 2 * math.pi, 40, endpoint=False)
        rot = rng.uniform(0, math.pi)
        pts = np.column_stack([r[0] * np.cos(t), r[1] * np.sin(t)])
        poly = centre + pts @ np.array([[math.cos(rot), math.sin(rot)], [-math.sin(rot), math.cos(rot)]])
    return CastShadow(tuple(map(tuple, poly.tolist())), float(rng.uniform(0.02, 0.07)),
                      float(np.clip(darkness * rng.uniform(0.85, 1.1), 0, 0.9)))


def illumination(light: Light, camera: Camera, geometry: BoardGeometry, board_depth: float,
                 board_onscreen: float) -> np.ndarray:
    """Light reaching each pixel: exposure, fall-off, vignette, soft shadows, colour cast.

    `board_onscreen` is the board's size in photo pixels (sqrt of its area)."""
    w, h = camera.size
    q = 8
    sw, sh = w // q + 2, h // q + 2
    ys, xs = (np.mgrid[0:sh, 0:sw].astype(np.float32) + 0.5) * q - 0.5
    xn = (xs - w / 2) / (max(w, h) / 2)
    yn = (ys - h / 2) / (max(w, h) / 2)
    a = math.radians(light.gradient_angle_deg)
    ramp = np.clip(0.5 + 0.5 * (xn * math.cos(a) + yn * math.sin(a)) / 1.2, 0, 1) ** light.gradient_gamma
    rr = (xn * xn + yn * yn) / ((w * w + h * h) / max(w, h) ** 2)
    level = light.exposure * (1 - light.gradient * ramp) * (1 - light.vignette * rr ** 1.2)
    shade = np.ones((sh, sw), np.float32)
    gw, gh = geometry.size_mm
    for s in light.shadows:
        poly = (np.asarray(s.polygon) - 0.5) * [gw, gh]
        poly = _densify(poly, max(gw, gh) / 40)
        canvas = np.zeros((sh, sw), np.uint8)
        world = np.column_stack([poly, np.full(len(poly), geometry.top_z)])
        ok = camera.depth(world) > 0.05 * board_depth
        _fill(canvas, [_to_small(camera.project(world[ok]), q)], 255)
        soft = _blur_mask(canvas.astype(np.float32) / 255, s.softness * board_onscreen / q)
        shade *= 1 - s.darkness * soft
    tint = np.array([1.0, 0.97, 0.87], np.float32)  # shadows are lit by bluish ambient light
    gains = light.gains
    small = cv2.merge(tuple((level * (1 - (1 - shade) * tint[k]) * gains[k]).astype(np.float32) for k in range(3)))
    return _from_small(small.astype(np.float32), camera.size, q)


def glare_field(light: Light, camera: Camera, geometry: BoardGeometry,
                board_onscreen: float) -> tuple[np.ndarray, tuple[int, int, int, int] | None]:
    """Specular reflections of lamps and windows (scaled by surface gloss when composited).

    Returns the field over the region (x0, y0, x1, y1) the spots cover, or an empty array and
    None."""
    w, h = camera.size
    field_ = np.zeros((h, w), np.float32)
    union = None
    gw, gh = geometry.size_mm
    for g in light.glare:
        world = np.array([[(g.u - 0.5) * gw, (g.v - 0.5) * gh, geometry.top_z]])
        centre = camera.project(world)[0]
        r = g.size * board_onscreen
        ext = 5.0 * r * g.aspect  # where even the haze has faded (no visible box edge)
        roi = _roi(np.array([centre - ext, centre + ext]), camera.size, 0)
        if roi is None:
            continue
        x0, y0, x1, y1 = roi
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        a = math.radians(g.angle_deg)
        u = ((xs - centre[0]) * math.cos(a) + (ys - centre[1]) * math.sin(a)) / (r * g.aspect)
        v = (-(xs - centre[0]) * math.sin(a) + (ys - centre[1]) * math.cos(a)) / r
        d2 = u * u + v * v
        haze = 0.18 * np.exp(-d2 / 6)
        if g.window:
            pane = 1 - smoothstep(0.6, 1.4, np.abs(u) ** 6 + np.abs(v) ** 6)
            bars = np.maximum(smoothstep(0.09, 0.04, np.abs(u)), smoothstep(0.09, 0.04, np.abs(v)))
            value = pane * (1 - 0.85 * bars) * (0.85 + 0.3 * np.clip(u, -1, 1)) * 1.3 + haze
        else:
            value = np.exp(-d2 * 2.5) * 1.2 + np.exp(-d2 * 0.5) * 0.35 + haze
        field_[y0:y1, x0:x1] += g.strength * value
        union = roi if union is None else (min(union[0], x0), min(union[1], y0),
                                           max(union[2], x1), max(union[3], y1))
    if union is None:
        return field_[:0, :0], None
    return field_[union[1]:union[3], union[0]:union[2]].copy(), union


def cast_shadow(radiance: np.ndarray, polys_px: list[np.ndarray], blur_mm: float, darkness: float,
                px_per_mm: float) -> None:
    """Darken the photo under soft-edged polygons (given in photo pixels); the penumbra is
    `blur_mm` wide on a surface seen at `px_per_mm`."""
    sigma = 1.0 + blur_mm * px_per_mm
    roi = _roi(np.vstack(polys_px), (radiance.shape[1], radiance.shape[0]), int(3 * sigma) + 4)
    if roi is None:
        return
    x0, y0, x1, y1 = roi
    mask = _soft_mask((x1 - x0, y1 - y0), [p - [x0, y0] for p in polys_px], sigma)
    radiance[y0:y1, x0:x1] *= _rep3(1 - darkness * mask)
