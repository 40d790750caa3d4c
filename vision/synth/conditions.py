"""Named photo conditions for the synthetic renderer.

A `Conditions` value describes *how* a photo is taken (camera pose, lens, light, table,
clutter, sensor, file format); it says nothing about the game on the board. Every field has a
default, and the defaults together are the "clean" photo: a phone held roughly level above a
board on a plain table under even light.

Each preset is a set of ranges. `CONDITIONS[name]` is one representative value of the preset
(what a reader of a test report pictures when it says "glare"); `sample_conditions` draws a
fresh value within the ranges so benchmarks see the whole spread, not one point. All presets
share a base of mild everyday variation (a few degrees of tilt, framing, white balance, noise)
so that no preset degenerates into a pixel-perfect, centred, frontal shot.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

TABLES = ("plain", "wood", "cloth")


@dataclass(frozen=True)
class Conditions:
    """How one photo is taken. Lengths in pixels refer to a 1600 px wide photo and scale with it."""

    # Camera pose. Tilt is the angle between the optical axis and the table normal; the
    # azimuth is where the photographer stands: 0 = at the photo's bottom edge (the far side
    # of the board looks smaller), 90 = at its left edge, 180 = at its top edge.
    tilt_deg: float = 6.0
    tilt_azimuth_deg: float = 0.0
    rotation_deg: float = 0.0  # board yaw as seen in the photo, counter-clockwise
    board_fill: float = 0.82  # board bounding box / frame, in the tighter direction
    offset_x: float = 0.0  # board shift within the free margin, -1 (left) .. 1 (right)
    offset_y: float = 0.0  # -1 (top) .. 1 (bottom)
    fov_deg: float = 68.0  # field of view across the long side of the photo
    # Radial lens distortion, Brown/OpenCV convention on focal-normalised radius (k1 < 0: barrel).
    k1: float = 0.0
    k2: float = 0.0
    # Surroundings.
    table: str = "plain"  # one of TABLES
    stray_pieces: int = 0  # unplaced pieces lying beside the board
    hand: bool = False  # a hand/arm reaching in from a frame edge
    cup: bool = False  # a mug standing at (or on) the board's edge
    cup_on_board: bool = False  # the mug stands wholly on the board instead
    # Placement slop (`slop`): each piece shifted up to this share of the cell pitch off its
    # cells and turned up to `nudge_deg` either way; 0 lays every piece exactly.
    nudge_cells: float = 0.0
    nudge_deg: float = 0.0
    # Light.
    exposure: float = 1.0  # overall brightness after the phone's auto exposure
    white_balance: float = 0.0  # residual colour cast, -1 cool (blue) .. +1 warm (orange)
    gradient: float = 0.15  # strength of the low-frequency illumination fall-off
    vignette: float = 0.15  # corner darkening of the lens
    glare: float = 0.0  # peak specular highlight added to glossy surfaces; >= 1 saturates
    glare_spots: int = 1  # number of lamp/window reflections (used when glare > 0)
    shadow: float = 0.0  # darkness of soft shadows cast by off-frame objects (0..1)
    # Optics and sensor.
    defocus_px: float = 0.0  # defocus disc radius
    motion_px: float = 0.0  # motion blur streak length
    noise: float = 1.5  # sensor noise std in 8-bit levels at mid grey
    sharpen: float = 0.3  # the phone's unsharp-mask amount
    # Saved file.
    jpeg_quality: int | None = None  # set: the photo is saved as JPEG and round-tripped
    exif_orientation: int = 1  # 6 or 8: sideways sensor pixels plus an EXIF tag to turn them


@dataclass(frozen=True)
class _Range:
    """A uniformly drawn number; `typical` is the preset's representative value."""

    lo: float
    hi: float
    typical: float
    integer: bool = False

    def draw(self, rng: np.random.Generator) -> float | int:
        if self.integer:
            return int(rng.integers(int(self.lo), int(self.hi) + 1))
        return float(rng.uniform(self.lo, self.hi))


@dataclass(frozen=True)
class _Choice:
    """One of a few discrete options; `typical` is the preset's representative value."""

    options: tuple[Any, ...]
    typical: Any

    def draw(self, rng: np.random.Generator) -> Any:
        return self.options[int(rng.integers(len(self.options)))]


def _r(lo: float, hi: float, typical: float) -> _Range:
    return _Range(lo, hi, typical)


def _i(lo: int, hi: int, typical: int) -> _Range:
    return _Range(lo, hi, typical, integer=True)


# Everyday variation present in every photo.
_BASE: dict[str, _Range | _Choice] = {
    "tilt_deg": _r(0.0, 12.0, 6.0),
    "tilt_azimuth_deg": _r(-30.0, 30.0, 0.0),
    "rotation_deg": _r(-8.0, 8.0, 0.0),
    "board_fill": _r(0.68, 0.92, 0.82),
    "offset_x": _r(-0.7, 0.7, 0.0),
    "offset_y": _r(-0.7, 0.7, 0.0),
    "fov_deg": _r(62.0, 76.0, 68.0),
    "exposure": _r(0.88, 1.08, 1.0),
    "white_balance": _r(-0.15, 0.15, 0.0),
    "gradient": _r(0.05, 0.25, 0.15),
    "vignette": _r(0.05, 0.25, 0.15),
    "glare": _r(0.0, 0.35, 0.0),
    "noise": _r(0.8, 2.5, 1.5),
    "sharpen": _r(0.1, 0.5, 0.3),
}

_PRESETS: dict[str, dict[str, _Range | _Choice]] = {
    "clean": {},
    "perspective": {"tilt_deg": _r(20.0, 45.0, 40.0), "tilt_azimuth_deg": _r(-60.0, 60.0, 15.0)},
    "rotation": {"rotation_deg": _r(-180.0, 180.0, 135.0)},
    "warm_light": {"white_balance": _r(0.6, 1.0, 0.85), "exposure": _r(0.75, 1.0, 0.9)},
    "cool_light": {"white_balance": _r(-1.0, -0.6, -0.85)},
    "dim": {"exposure": _r(0.28, 0.5, 0.38), "noise": _r(4.0, 9.0, 6.0)},
    "gradient": {"gradient": _r(0.45, 0.75, 0.6), "vignette": _r(0.3, 0.5, 0.4)},
    "glare": {"glare": _r(1.0, 2.5, 1.6), "glare_spots": _i(1, 3, 2)},
    "shadow": {"shadow": _r(0.35, 0.65, 0.5)},
    "blur": {"defocus_px": _r(1.5, 4.5, 3.0), "motion_px": _r(0.0, 8.0, 3.0)},
    "noise": {"noise": _r(6.0, 14.0, 10.0)},
    "jpeg": {"jpeg_quality": _i(30, 70, 50)},
    "wood_table": {"table": _Choice(("wood",), "wood")},
    "patterned_table": {"table": _Choice(("cloth",), "cloth")},
    "stray_pieces": {"stray_pieces": _i(4, 14, 8)},
    "hand": {"hand": _Choice((True,), True)},
    "cup": {"cup": _Choice((True,), True)},
    # Strong barrel of a cheap wide lens; k2 >= 0.45 k1^2 keeps the radial curve monotonic
    # (real lenses do not fold their image over) for every k1 in range.
    "lens_distortion": {
        "k1": _r(-0.25, -0.08, -0.18),
        "k2": _r(0.03, 0.05, 0.03),
        "fov_deg": _r(66.0, 78.0, 74.0),
    },
    "exif_rotated": {"exif_orientation": _Choice((6, 8), 6), "jpeg_quality": _i(88, 95, 92)},
    "hard": {
        "tilt_deg": _r(18.0, 40.0, 32.0),
        "tilt_azimuth_deg": _r(-60.0, 60.0, 20.0),
        "rotation_deg": _r(-180.0, 180.0, -120.0),
        "white_balance": _r(-0.8, 0.8, 0.6),
        "exposure": _r(0.55, 0.95, 0.75),
        "gradient": _r(0.3, 0.6, 0.45),
        "glare": _r(0.8, 2.0, 1.3),
        "glare_spots": _i(1, 3, 2),
        "shadow": _r(0.2, 0.5, 0.35),
        "defocus_px": _r(0.5, 2.0, 1.2),
        "motion_px": _r(0.0, 3.0, 1.0),
        "noise": _r(3.0, 7.0, 4.5),
        "jpeg_quality": _i(60, 85, 75),
        "table": _Choice(("wood", "cloth"), "wood"),
        "stray_pieces": _i(3, 10, 6),
        "k1": _r(-0.15, 0.0, -0.08),
        "k2": _r(0.005, 0.02, 0.01),
        "hand": _Choice((False, True), True),
        "cup": _Choice((False, True), False),
    },
}

# Pieces as a player's hand leaves them (see `slop`): the shift and turn limits of bench.nudged.
_NUDGED: dict[str, _Range | _Choice] = {"nudge_cells": _Choice((0.2,), 0.2), "nudge_deg": _Choice((3.0,), 3.0)}

# Presets the default sweep (CONDITIONS) leaves out: a bench of their own draws them.
_OWN_BENCH_PRESETS: dict[str, dict[str, _Range | _Choice]] = {
    # bench.standing_mug: the `cup` photo with the mug standing wholly on the board. A one-option
    # choice draws nothing, so a photo has the `cup` photo's conditions, camera, light and mug (of
    # the same rng), the mug set in; setting it in takes one more draw, so every draw after it
    # (a hand's place, the sensor's noise) differs.
    "standing_mug": {**_PRESETS["cup"], "cup_on_board": _Choice((True,), True)},
    # bench.nudged: the `clean` and `perspective` photos with every piece off its cells by up to
    # a fifth of the pitch and 3 degrees (vision.synth.slop says why these figures). The one-option
    # choices draw nothing and the slop has an rng of its own, so a photo is its un-nudged twin
    # but for where the pieces lie.
    "nudged": {**_PRESETS["clean"], **_NUDGED},
    "nudged_perspective": {**_PRESETS["perspective"], **_NUDGED},
}


def _spec(name: str) -> dict[str, _Range | _Choice]:
    presets = _PRESETS | _OWN_BENCH_PRESETS
    if name not in presets:
        raise KeyError(f"unknown condition preset {name!r}; known: {sorted(presets)}")
    return {**_BASE, **presets[name]}


def _typical(name: str) -> Conditions:
    return replace(Conditions(), **{k: v.typical for k, v in _spec(name).items()})


CONDITIONS: dict[str, Conditions] = {name: _typical(name) for name in _PRESETS}


def sample_conditions(name: str, rng: np.random.Generator) -> Conditions:
    """Draw a `Conditions` uniformly within preset `name`'s ranges (base variation included)."""
    spec = _spec(name)
    # Draw in field order so a seed gives the same result whatever the dict order above.
    values = {f.name: spec[f.name].draw(rng) for f in fields(Conditions) if f.name in spec}
    return replace(Conditions(), **values)
