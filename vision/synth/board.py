"""What a board module hands the scene: the board's physical shape, its top-down texture, and
small loose-piece sprites.

A board module (Blokus, Gemblo, ...) only draws its board as seen from straight above; these
types carry that picture, with the board outline and thickness the camera framing, side walls
and clutter placement need. Units are millimetres; see `scene` for the world conventions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BoardGeometry:
    """Physical shape of a board: what the camera framing, side walls and clutter placement need.

    `outline_mm` is the closed outer outline in texture millimetres (origin at the texture's
    top-left corner), dense enough that straight segments follow curves. Frozen and hashable
    so views can be cached per board shape.
    """

    size_mm: tuple[float, float]  # texture extent (width, height)
    outline_mm: tuple[tuple[float, float], ...]
    thickness_mm: float
    side_rgb: tuple[float, float, float]  # colour of the board's vertical edge

    def outline_world(self, z: float) -> np.ndarray:
        """The outline as world points (N x 3) at height `z`."""
        pts = np.asarray(self.outline_mm, np.float64)
        w, h = self.size_mm
        return np.column_stack([pts[:, 0] - w / 2, pts[:, 1] - h / 2, np.full(len(pts), z)])

    @property
    def top_z(self) -> float:
        return -self.thickness_mm


@dataclass
class BoardTexture:
    """A top-down picture of the board: RGB, opacity (outline) and specular strength (gloss).

    The layers are one H x W x 5 float32 array (R, G, B, alpha, gloss) so a frame costs a
    single remap. The texture spans exactly `geometry.size_mm`; its resolution is free, so
    the scene can ask for the resolution that matches the photo.
    """

    layers: np.ndarray
    geometry: BoardGeometry

    @property
    def rgb(self) -> np.ndarray:
        return self.layers[..., :3]

    @property
    def alpha(self) -> np.ndarray:
        return self.layers[..., 3]

    @property
    def gloss(self) -> np.ndarray:
        return self.layers[..., 4]

    @property
    def px_per_mm(self) -> float:
        return self.layers.shape[1] / self.geometry.size_mm[0]

    def flattened(self, background: float = 1.0) -> np.ndarray:
        """The board over a plain grey level as BGR uint8, with no camera or light: a quick
        look at what a board module draws, and a reference picture for tests."""
        a = self.alpha[..., None]
        rgb = np.clip(self.rgb * a + (1 - a) * np.float32(background), 0, 1)
        return np.ascontiguousarray((rgb[..., ::-1] * 255 + 0.5).astype(np.uint8))

    def px_to_mm(self) -> np.ndarray:
        """3x3 affine from texture pixels (centre convention) to world X, Y on the board top."""
        s = 1.0 / self.px_per_mm
        w, h = self.geometry.size_mm
        return np.array([[s, 0, 0.5 * s - w / 2], [0, s, 0.5 * s - h / 2], [0, 0, 1]])


@dataclass
class Sprite:
    """A small flat object seen from above (a loose game piece): layers as in `BoardTexture`."""

    layers: np.ndarray  # H x W x 5 float32: R, G, B, alpha, gloss
    size_mm: tuple[float, float]

    @property
    def radius_mm(self) -> float:
        return 0.5 * math.hypot(*self.size_mm)
