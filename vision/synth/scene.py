"""Board-agnostic photo synthesis: puts a top-down board texture on a table and photographs it.

Why this module exists: the board reader must be tested on photos whose ground truth is exact,
so every photo is *rendered* from a known board state. Board modules (Blokus now, later Gemblo's
hex board and Equilibrix's round board) only draw their board top-down as a `BoardTexture`;
everything about the photo — camera pose and lens, table, light, glare, shadows, clutter, blur,
sensor noise, file format — lives here and works for any board outline.

Conventions
- World coordinates are millimetres: X to the right of the board texture, Y towards the
  texture's bottom, Z *into* the table. The table top is Z = 0, so things above it have Z < 0.
  The board texture's centre sits over the world origin.
- Pixel coordinates (texture and photo) put pixel centres at integers, as OpenCV does.
- Images are float32 RGB in [0, 1] while rendering; the finished photo is BGR uint8.

Rendering is split in two so that a live-referee demo can render hundreds of frames quickly:
`CameraSetup` draws every random choice of a photo session (pose, lens, light, table, clutter);
`View` turns a setup into everything static for one image size (camera matrices, coordinate
maps, the rendered table, light fields); `View.render` then only adds the board, a hand, a cup
and sensor noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import cv2
import numpy as np

from .conditions import Conditions

REFERENCE_WIDTH = 1600.0  # Conditions' pixel lengths refer to a photo this wide
_STRIP = 128  # rows composited at a time
_COARSE_STEP = 8  # coordinate maps are solved on this grid and interpolated (error << 0.01 px)


# --------------------------------------------------------------------------- inputs from boards


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


# --------------------------------------------------------------------------- camera


def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _apply_h(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a homography to N x 2 points."""
    q = np.asarray(pts, np.float64) @ H[:, :2].T + H[:, 2]
    return q[:, :2] / q[:, 2:3]


@dataclass(frozen=True, eq=False)
class Camera:
    """Pinhole camera with Brown radial distortion (OpenCV's k1, k2) for one image size."""

    size: tuple[int, int]  # (width, height)
    K: np.ndarray
    R: np.ndarray  # world -> camera rotation
    centre: np.ndarray  # camera position, world mm
    k1: float = 0.0
    k2: float = 0.0

    @property
    def focal(self) -> float:
        return float(self.K[0, 0])

    @property
    def principal(self) -> np.ndarray:
        return self.K[:2, 2]

    def plane_homography(self, z: float) -> np.ndarray:
        """World (X, Y) on the plane Z = z -> undistorted photo pixels."""
        t = self.R @ (np.array([0.0, 0.0, z]) - self.centre)
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], t])

    def depth(self, pts: np.ndarray) -> np.ndarray:
        """Distance along the optical axis of world points (N x 3)."""
        return (np.asarray(pts, np.float64) - self.centre) @ self.R[2]

    def pinhole(self, pts: np.ndarray) -> np.ndarray:
        """World points (N x 3, in front of the camera) -> undistorted pixels."""
        cam = (np.asarray(pts, np.float64) - self.centre) @ self.R.T
        return cam[:, :2] / cam[:, 2:3] * self.focal + self.principal

    def project(self, pts: np.ndarray) -> np.ndarray:
        """World points (N x 3, in front of the camera) -> photo pixels, lens distortion applied."""
        return self.distort(self.pinhole(pts))

    @cached_property
    def _r2_limit(self) -> float:
        """Squared radius up to which the lens model is trusted: where the radial curve stops
        rising, and at most twice the frame's corner (beyond, nothing is seen anyway)."""
        corner = math.hypot(*self.size) / 2 / self.focal
        r = np.linspace(0.0, 2 * corner, 2001)
        slope = 1 + 3 * self.k1 * r**2 + 5 * self.k2 * r**4
        last = int(np.argmax(slope <= 0)) - 1 if np.any(slope <= 0) else len(r) - 1
        return float(r[max(last, 1)] ** 2)

    def distort(self, px: np.ndarray) -> np.ndarray:
        """Undistorted -> distorted pixels. Far outside the frame the radial scale is held
        constant, so off-screen geometry (shadows, an arm) stays off-screen."""
        px = np.asarray(px, np.float64)
        if self.k1 == 0.0 and self.k2 == 0.0:
            return px
        n = (px - self.principal) / self.focal
        r2 = np.minimum(np.sum(n * n, axis=-1, keepdims=True), self._r2_limit)
        return self.principal + self.focal * n * (1 + self.k1 * r2 + self.k2 * r2 * r2)

    def undistort(self, px: np.ndarray) -> np.ndarray:
        """Distorted -> undistorted pixels (Newton on the radius; `_check_lens` keeps it monotonic)."""
        px = np.asarray(px, np.float64)
        if self.k1 == 0.0 and self.k2 == 0.0:
            return px
        n = (px - self.principal) / self.focal
        rd = np.sqrt(np.sum(n * n, axis=-1, keepdims=True))
        ru = rd.copy()
        for _ in range(12):
            r2 = ru * ru
            f = ru * (1 + self.k1 * r2 + self.k2 * r2 * r2) - rd
            ru -= f / (1 + 3 * self.k1 * r2 + 5 * self.k2 * r2 * r2)
        return self.principal + self.focal * n * np.where(rd > 1e-12, ru / np.maximum(rd, 1e-12), 1.0)


def _check_lens(c: Conditions, size: tuple[int, int]) -> None:
    """Refuse a distortion that folds over inside the frame: unphysical, and not invertible."""
    r = np.linspace(0.0, 3.0, 3001)
    slope = 1 + 3 * c.k1 * r**2 + 5 * c.k2 * r**4
    rising = r[: int(np.argmax(slope <= 0))] if np.any(slope <= 0) else r
    reach = float(np.max(rising * (1 + c.k1 * rising**2 + c.k2 * rising**4)))
    r_corner = math.tan(math.radians(c.fov_deg) / 2) * math.hypot(*size) / max(size)
    if r_corner >= reach:
        raise ValueError(f"lens k1={c.k1}, k2={c.k2} folds over inside a {c.fov_deg} degree view")


def _solve_camera(c: Conditions, size: tuple[int, int], geometry: BoardGeometry) -> Camera:
    """Place the camera so the board shows with the requested tilt, yaw, size and offset."""
    _check_lens(c, size)
    w, h = size
    f = (max(size) / 2) / math.tan(math.radians(c.fov_deg) / 2)
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
    psi = math.radians(c.tilt_azimuth_deg)
    # Yaw turns the board counter-clockwise on screen; the tilt moves the camera towards the
    # photographer, who stands at the photo's bottom edge for azimuth 0 (far side looks smaller).
    R = (_rot_z(psi) @ _rot_x(-math.radians(c.tilt_deg)) @ _rot_z(-psi)
         @ _rot_z(-math.radians(c.rotation_deg)))
    axis = R.T @ np.array([0.0, 0.0, 1.0])
    z = geometry.top_z
    outline = geometry.outline_world(z)
    target = np.array([0.0, 0.0, z])
    dist = max(geometry.size_mm) * f / (c.board_fill * min(size))

    def camera() -> Camera:
        return Camera(size, K, R, target - dist * axis, c.k1, c.k2)

    for _ in range(8):  # projected size ~ 1/distance; a few rounds absorb perspective effects
        pts = camera().pinhole(outline)
        extent = pts.max(0) - pts.min(0)
        dist *= max(extent[0] / w, extent[1] / h) / c.board_fill
    for _ in range(4):  # slide the camera along the table to put the board off-centre
        cam = camera()
        pts = cam.pinhole(outline)
        lo, hi = pts.min(0), pts.max(0)
        free = np.array([w, h]) - (hi - lo)
        want = np.array([w / 2 + c.offset_x * free[0] * 0.45, h / 2 + c.offset_y * free[1] * 0.45])
        jac = _jacobian(cam.plane_homography(z), np.zeros(2))
        target = target - np.append(np.linalg.solve(jac, want - (lo + hi) / 2), 0.0)
    return camera()


def _jacobian(H: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """d(pixel) / d(plane X, Y) of a homography at one point."""
    e = 1e-2
    p = _apply_h(H, np.array([xy, xy + [e, 0], xy + [0, e]]))
    return np.column_stack([(p[1] - p[0]) / e, (p[2] - p[0]) / e])


def _undistorted_grid(cam: Camera) -> np.ndarray:
    """For every photo pixel, where it would be without lens distortion (H x W x 2 float32).

    Solved on a coarse grid (one pixel beyond the frame on each side, so the interpolation
    never extrapolates) and interpolated bilinearly: the map is smooth, the error is tiny.
    """
    w, h = cam.size
    if cam.k1 == 0.0 and cam.k2 == 0.0:
        xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
        return np.dstack([xs, ys])
    s = _COARSE_STEP
    nx, ny = -(-w // s) + 2, -(-h // s) + 2
    gx = (np.arange(nx) - 1) * s + (s - 1) / 2
    gy = (np.arange(ny) - 1) * s + (s - 1) / 2
    pts = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
    coarse = cam.undistort(pts).reshape(ny, nx, 2).astype(np.float32)
    fine = cv2.resize(coarse, (nx * s, ny * s), interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(fine[s:s + h, s:s + w])


def _plane_coords(undist: np.ndarray, H_plane: np.ndarray) -> np.ndarray:
    """Plane coordinates seen at each pixel of an undistorted-coordinate map."""
    shape = undist.shape
    flat = np.ascontiguousarray(undist).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(flat, np.linalg.inv(H_plane)).reshape(shape)


# --------------------------------------------------------------------------- small drawing helpers


def _smoothstep(e0: float | np.ndarray, e1: float | np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def _roi(pts: np.ndarray, size: tuple[int, int], pad: int) -> tuple[int, int, int, int] | None:
    """Clipped integer bounding box (x0, y0, x1, y1) of points, or None if off-frame."""
    lo = np.floor(pts.min(0)).astype(int) - pad
    hi = np.ceil(pts.max(0)).astype(int) + pad + 1
    x0, y0 = max(lo[0], 0), max(lo[1], 0)
    x1, y1 = min(hi[0], size[0]), min(hi[1], size[1])
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _fill(canvas: np.ndarray, polys: Sequence[np.ndarray], value, origin=(0, 0), aa: bool = True) -> None:
    """Fill polygons given in float pixel coordinates (sub-pixel accurate, anti-aliased)."""
    pts = [np.round(np.clip(np.asarray(p) - origin, -1e6, 1e6) * 16).astype(np.int32) for p in polys]
    cv2.fillPoly(canvas, pts, value, cv2.LINE_AA if aa else cv2.LINE_8, shift=4)


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


# --------------------------------------------------------------------------- table


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
    return 1 - _smoothstep(half - footprint / 2, half + footprint / 2, d)


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
        dot = 1 - _smoothstep(0.22 * p - footprint / 2, 0.22 * p + footprint / 2, d)
        return _mix(ground, ink, dot)
    if style.pattern == "floral":
        f1 = _smoothstep(0.60, 0.62, noise.fbm(x, y, p * 1.4, footprint))
        f2 = _smoothstep(0.66, 0.68, noise.fbm(y + 977, x, p * 0.9, footprint))
        f3 = _smoothstep(0.75, 0.77, noise(x + 311, y, p * 0.25, footprint))
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
    outside = _smoothstep(-footprint, footprint, edge)
    if not np.any(outside > 0):
        return rgb, gloss
    room = _tint((0.7 + 0.6 * noise.fbm(x, y, 700, footprint)).astype(np.float32), style.room_rgb)
    rim = _smoothstep(-25 - footprint, -25 + footprint, edge) * (1 - outside)  # the table's rounded lip
    rgb = rgb * _rep3((1 - 0.35 * rim).astype(np.float32))
    _lerp_into(rgb, room, outside.astype(np.float32))
    return rgb, gloss * (1 - outside)


# --------------------------------------------------------------------------- light


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


# --------------------------------------------------------------------------- occluders


@dataclass(frozen=True)
class HandStyle:
    """Whose hand it is (fixed for a photo session)."""

    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float] | None
    sleeve_from_mm: float  # sleeve starts this far behind the wrist
    left: bool
    size: float
    curl: float  # 1 = fingers stretched, 0.5 = curled (foreshortened from above)
    spread_deg: float
    height_mm: float  # grip height above the board
    skew_deg: float  # how far the arm deviates from pointing at the board centre

    @staticmethod
    def random(rng: np.random.Generator) -> HandStyle:
        tones = [(0.93, 0.75, 0.64), (0.86, 0.64, 0.52), (0.72, 0.52, 0.38), (0.55, 0.37, 0.26),
                 (0.36, 0.24, 0.17), (0.25, 0.17, 0.12)]
        skin = tuple(float(np.clip(v * rng.uniform(0.94, 1.06), 0, 1)) for v in tones[rng.integers(len(tones))])
        sleeve = None if rng.random() < 0.3 else tuple(float(v) for v in rng.uniform(0.05, 0.85, 3))
        return HandStyle(skin, sleeve, float(rng.uniform(60, 260)), bool(rng.random() < 0.25),
                         float(rng.uniform(0.88, 1.1)), float(rng.uniform(0.55, 1.0)),
                         float(rng.uniform(0, 12)), float(rng.uniform(35, 140)), float(rng.uniform(-25, 25)))


@dataclass(frozen=True)
class Hand:
    """A hand reaching over the table; `at_mm` is the world point under its grip (thumb-to-fingers)."""

    at_mm: tuple[float, float]
    direction_deg: float  # where the fingers point, world
    height_mm: float  # grip height above the board top
    style: HandStyle
    carrying: Sprite | None = None
    carry_angle_deg: float = 0.0


@dataclass(frozen=True)
class CupStyle:
    """A mug: its look and where it stands relative to the board's edge."""

    radius_mm: float
    height_mm: float
    rgb: tuple[float, float, float]
    liquid: tuple[float, float, float] | None
    direction_deg: float  # from the board centre
    inset: float  # how far the footprint reaches inside the board edge, in diameters
    handle_deg: float

    @staticmethod
    def random(rng: np.random.Generator) -> CupStyle:
        colours = [(0.92, 0.92, 0.9), (0.72, 0.1, 0.1), (0.15, 0.3, 0.68), (0.9, 0.75, 0.15),
                   (0.1, 0.1, 0.11), (0.2, 0.5, 0.3), (0.95, 0.6, 0.7)]
        liquids = [None, (0.22, 0.12, 0.06), (0.45, 0.25, 0.1), (0.75, 0.6, 0.45)]
        return CupStyle(float(rng.uniform(36, 46)), float(rng.uniform(85, 110)),
                        colours[rng.integers(len(colours))], liquids[rng.integers(len(liquids))],
                        float(rng.uniform(0, 360)), float(rng.uniform(-0.1, 0.55)), float(rng.uniform(0, 360)))


def _taper(a: np.ndarray, b: np.ndarray, ra: float, rb: float, n: int = 14) -> np.ndarray:
    """Outline of a limb segment: the convex hull of a disc at each end (2-D, mm)."""
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    ring = np.column_stack([np.cos(t), np.sin(t)])
    hull = cv2.convexHull(np.vstack([a + ra * ring, b + rb * ring]).astype(np.float32))
    return hull[:, 0, :].astype(np.float64)


def _hand_parts(hand: Hand, top_z: float) -> list[tuple[str, np.ndarray]]:
    """3-D outlines (world mm) of the arm, sleeve, palm, fingers and thumb in drawing order;
    "crease" parts are open polylines (knuckle folds)."""
    st = hand.style
    curl = st.curl
    # Hand frame: u towards the fingertips, v towards the little finger; palm centre at 0.
    fingers = []
    finger_specs = ((-26, 72, 18, -1.0), (-8, 79, 18.5, -0.2), (9, 74, 17.5, 0.4), (25, 58, 15.5, 1.0))
    for base_v, length, width, ang in finger_specs:  # index to little finger: v, mm long, mm wide, splay
        a = math.radians(ang * st.spread_deg)
        base = np.array([36.0 - abs(base_v) * 0.25, base_v])
        fingers.append((base, base + length * curl * np.array([math.cos(a), math.sin(a)]), width))
    thumb_base, thumb_joint = np.array([-22.0, -30.0]), np.array([8.0, -47.0])
    ta = math.radians(-25 - 30 * curl)
    thumb_tip = thumb_joint + 34 * np.array([math.cos(ta), math.sin(ta)])
    grip = (fingers[0][1] + thumb_tip) / 2
    t = np.linspace(0, 2 * math.pi, 36, endpoint=False)
    c, s = np.cos(t), np.sin(t)
    palm = np.column_stack([47 * np.sign(c) * np.abs(c) ** 0.7, 42 * np.sign(s) * np.abs(s) ** 0.7])
    palm[:, 1] *= 0.86 + 0.14 * (palm[:, 0] + 47) / 94  # narrower towards the wrist

    wrist_u = -42.0
    back = np.arange(0, 1300, 40.0)
    arm_u = wrist_u - back
    half = 29 + 12 * np.minimum(1.0, back / 260)
    lift = back * math.tan(math.radians(16))  # the forearm rises towards the shoulder

    def band(widths, keep):
        u, w, z = arm_u[keep], widths[keep], lift[keep]
        return (np.vstack([np.column_stack([u, 3 - w]), np.column_stack([u, 3 + w])[::-1]]),
                np.concatenate([z, z[::-1]]))

    parts = [("arm", *band(half, back >= 0))]
    if st.sleeve is not None and np.sum(back >= st.sleeve_from_mm) >= 2:
        parts.append(("sleeve", *band(half + 9, back >= st.sleeve_from_mm)))
    parts.append(("palm", palm, None))
    parts.append(("palm", _taper(thumb_base, np.array([-5.0, -20.0]), 24, 20), None))  # thumb's ball
    if hand.carrying is not None:
        parts.append(("piece", np.zeros((1, 2)), None))  # placeholder: drawn from the sprite
    for base, tip, width in fingers[::-1]:
        parts.append(("finger", _taper(base, tip, width / 2, width * 0.41), None))
        d = (tip - base) / np.linalg.norm(tip - base)
        side = np.array([-d[1], d[0]]) * width * 0.3
        for at in (0.42, 0.72):
            mid = base + (tip - base) * at
            parts.append(("crease", np.array([mid - side, mid + d * 1.5, mid + side]), None))
        if curl > 0.75:  # stretched fingers show their nails
            parts.append(("nail", _taper(tip - 12 * d, tip - 4 * d, width * 0.26, width * 0.24, 10), None))
    parts.append(("finger", _taper(thumb_base + [12, -6], thumb_joint, 14, 12), None))
    parts.append(("finger", _taper(thumb_joint, thumb_tip, 12, 10), None))

    phi = math.radians(hand.direction_deg)
    d = np.array([math.cos(phi), math.sin(phi)])
    n = np.array([-math.sin(phi), math.cos(phi)]) * (-1.0 if st.left else 1.0)
    z0 = top_z - hand.height_mm
    out = []
    for kind, uv, rise in parts:
        uv = (uv - grip) * st.size
        xy = np.asarray(hand.at_mm) + uv[:, :1] * d + uv[:, 1:2] * n
        out.append((kind, np.column_stack([xy, z0 - (np.zeros(len(xy)) if rise is None else rise)])))
    return out


def _cup_outline(centre: np.ndarray, r: float, z: float, n: int = 48) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([centre[0] + r * np.cos(t), centre[1] + r * np.sin(t), np.full(n, z)])


# --------------------------------------------------------------------------- the photo session


@dataclass(eq=False)
class CameraSetup:
    """Every random choice of a photo session: a fixed camera, light, table and clutter.

    Successive frames rendered from one setup differ only by what the caller changes (the
    pieces, a hand) and by sensor noise. `seed` derives the static choices made later
    (placement of clutter, the board module's colours), so a setup is reproducible.
    """

    conditions: Conditions
    seed: int
    light: Light
    table: TableStyle
    hand_style: HandStyle
    cup_style: CupStyle | None
    _views: dict = field(default_factory=dict, init=False, repr=False)

    @staticmethod
    def random(rng: np.random.Generator, conditions: Conditions) -> CameraSetup:
        return CameraSetup(conditions, int(rng.integers(2**62)), Light.random(rng, conditions),
                           TableStyle.random(rng, conditions.table), HandStyle.random(rng),
                           CupStyle.random(rng) if conditions.cup else None)

    def view(self, size: tuple[int, int], geometry: BoardGeometry,
             props: Callable[[np.random.Generator, int, float], list[Sprite]] | None = None) -> View:
        """The (cached) static rendering state for one image size and board shape.

        `props(rng, count, px_per_mm)` makes the loose pieces lying beside the board when the
        conditions ask for them; it is called once per view.
        """
        key = (tuple(size), geometry)
        if key not in self._views:
            if len(self._views) >= 2:  # a 12 MP view holds ~1 GB of maps and layers
                self._views.pop(next(iter(self._views)))
            self._views[key] = View(self, tuple(size), geometry, props)
        return self._views[key]


@dataclass
class SceneRender:
    """One rendered photo plus the geometry needed to state its ground truth."""

    image: np.ndarray  # BGR uint8, upright
    hidden: np.ndarray  # H x W bool: covered by a hand or cup, or glare left it white or colourless
    homography: np.ndarray  # board texture pixels -> undistorted photo pixels
    camera: Camera

    def texture_to_photo(self, pts: np.ndarray) -> np.ndarray:
        """Board texture pixels (N x 2) -> photo pixels, lens distortion included."""
        return self.camera.distort(_apply_h(self.homography, pts))


class View:
    """Everything static about one camera setup at one image size and board shape.

    Building it costs a few hundred milliseconds (table, light fields, coordinate maps);
    `render` then only remaps the board texture and adds a hand, a cup and noise.
    """

    def __init__(self, setup: CameraSetup, size: tuple[int, int], geometry: BoardGeometry,
                 props: Callable[[np.random.Generator, int, float], list[Sprite]] | None):
        self.setup, self.size, self.geometry = setup, size, geometry
        c = setup.conditions
        rng = np.random.default_rng(setup.seed)
        self.camera = cam = _solve_camera(c, size, geometry)
        self.scale = max(size) / REFERENCE_WIDTH
        self.undist = _undistorted_grid(cam)
        self.H_board = cam.plane_homography(geometry.top_z)
        self.board_scale = math.sqrt(abs(np.linalg.det(_jacobian(self.H_board, np.zeros(2)))))
        # Texture resolution a board module should draw at: a little finer than the photo.
        self.px_per_mm = min(1.15 * self.board_scale, 4096 / max(geometry.size_mm))
        outline = geometry.outline_world(geometry.top_z)
        self.outline_xy = outline[:, :2]
        outline_px = cam.project(outline)
        self.board_onscreen = math.sqrt(abs(cv2.contourArea(outline_px.astype(np.float32))))
        self.board_roi = _roi(outline_px, size, 2)
        x0, y0, x1, y1 = self.board_roi
        self.board_xy = _plane_coords(self.undist[y0:y1, x0:x1], self.H_board)
        self.board_depth = float(cam.depth(np.array([[0.0, 0.0, geometry.top_z]]))[0])

        albedo, gloss = self._table()
        self.cup_at = self._place_cup(rng) if setup.cup_style else None
        sprites = props(rng, c.stray_pieces, self.px_per_mm) if props and c.stray_pieces else []
        self._lay_props(albedo, gloss, sprites, rng)
        self._board_base(albedo)
        self.illum = self._illumination()
        self.glare, self.glare_roi = self._glare()  # the glare array covers glare_roi only
        self.glare_rgb = (setup.light.gains / setup.light.gains.max()).astype(np.float32)
        self.background = albedo * self.illum
        if self.glare_roi is not None:
            gx0, gy0, gx1, gy1 = self.glare_roi
            self.background[gy0:gy1, gx0:gx1] += _tint(self.glare * gloss[gy0:gy1, gx0:gx1], self.glare_rgb)
        self.cup_layer = self._cup_layer() if self.cup_at is not None else None
        bank_rng = np.random.default_rng([setup.seed, 7])
        tile = (min(size[1], _NOISE_TILE) + 32, min(size[0], _NOISE_TILE) + 32, 3)
        self.noise_bank = bank_rng.standard_normal(tile, dtype=np.float32)
        self.skin_mottle = bank_rng.standard_normal((6, 6), dtype=np.float32)

    # -- static layers ------------------------------------------------------------------

    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        """Table (and floor beyond it) at up to ~2 MP, far parts out of focus."""
        w, h = self.size
        f = min(1.0, math.sqrt(2.0e6 / (w * h)))
        undist = self.undist if f == 1.0 else cv2.resize(self.undist, (round(w * f), round(h * f)))
        xy = _plane_coords(undist, self.camera.plane_homography(0.0))
        x, y = xy[..., 0], xy[..., 1]
        cx, cy, cz = self.camera.centre
        dist2 = (x - cx) ** 2 + (y - cy) ** 2 + cz * cz
        footprint = dist2 / (self.camera.focal * abs(cz) * f)  # mm per (table-resolution) pixel
        rgb, gloss = _table_albedo(self.setup.table, x, y, footprint.astype(np.float32))
        rgb = rgb.astype(np.float32)
        r = self.camera.R[2]
        depth = (x - cx) * r[0] + (y - cy) * r[1] - cz * r[2]
        defocus = np.clip((np.abs(depth / self.board_depth - 1) - 0.3) * 2.0, 0, 1)
        if defocus.max() > 0.01:  # a phone focused on the board blurs the far table and floor
            blurred = cv2.GaussianBlur(rgb, (0, 0), 3.0 * self.scale * f)
            _lerp_into(rgb, blurred, defocus.astype(np.float32))
        if f < 1.0:
            rgb = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_LINEAR)
            gloss = cv2.resize(gloss, (w, h), interpolation=cv2.INTER_LINEAR)
        return rgb, gloss.astype(np.float32)

    def _place_cup(self, rng: np.random.Generator) -> tuple[np.ndarray, float] | None:
        """Stand the mug at the board's edge, where the camera sees it."""
        st = self.setup.cup_style
        for k in range(24):
            ang = math.radians(st.direction_deg + 47 * k)
            d = np.array([math.cos(ang), math.sin(ang)])
            edge = _ray_exit(self.outline_xy, d)
            centre = d * (edge + st.radius_mm - 2 * st.radius_mm * st.inset)
            z = self.geometry.top_z if np.linalg.norm(centre) < edge else 0.0
            top = self.camera.project(np.array([[*centre, z - st.height_mm]]))[0]
            w, h = self.size
            if 0.05 * w < top[0] < 0.95 * w and 0.05 * h < top[1] < 0.95 * h:
                return centre, z
        return None

    def _lay_props(self, albedo: np.ndarray, gloss: np.ndarray, sprites: list[Sprite],
                   rng: np.random.Generator) -> None:
        """Scatter loose pieces on the table around (never on) the board."""
        taken: list[tuple[np.ndarray, float]] = []
        if self.cup_at is not None:
            taken.append((self.cup_at[0], self.setup.cup_style.radius_mm + 10))
        t = self.setup.table
        for sp in sprites:
            for _ in range(60):
                ang = rng.uniform(0, 2 * math.pi)
                d = np.array([math.cos(ang), math.sin(ang)])
                centre = d * (_ray_exit(self.outline_xy, d) + sp.radius_mm + rng.uniform(2, 150))
                on_table = np.all(np.abs(centre - t.centre_mm) < np.array(t.half_size_mm) - sp.radius_mm)
                p = self.camera.project(np.array([[*centre, 0.0]]))[0]
                inside = -20 < p[0] < self.size[0] + 20 and -20 < p[1] < self.size[1] + 20
                free = all(np.linalg.norm(centre - q) > sp.radius_mm + r for q, r in taken)
                if on_table and inside and free:
                    taken.append((centre, sp.radius_mm))
                    self._draw_sprite(albedo, gloss, sp, centre, rng.uniform(0, 360), 0.0)
                    break

    def _sprite_samples(self, sp: Sprite, centre: np.ndarray, angle_deg: float,
                        z: float) -> tuple[tuple[int, int, int, int] | None, np.ndarray | None]:
        """Sprite pixels (remapped RGB, alpha, gloss) seen at each photo pixel of its ROI."""
        a = math.radians(angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        hw = np.array(sp.size_mm) / 2
        corners = (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * hw) @ rot.T + centre
        roi = _roi(self.camera.project(np.column_stack([corners, np.full(4, z)])), self.size, 2)
        if roi is None:
            return None, None
        x0, y0, x1, y1 = roi
        xy = _plane_coords(self.undist[y0:y1, x0:x1], self.camera.plane_homography(z))
        local = (xy - np.asarray(centre, np.float32)) @ rot.astype(np.float32)
        ppm = sp.layers.shape[1] / sp.size_mm[0]
        mx = (local[..., 0] + hw[0]) * ppm - 0.5
        my = (local[..., 1] + hw[1]) * ppm - 0.5
        out = cv2.remap(sp.layers, mx.astype(np.float32), my.astype(np.float32), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        return roi, out

    def _draw_sprite(self, albedo: np.ndarray, gloss: np.ndarray, sp: Sprite, centre: np.ndarray,
                     angle_deg: float, z: float) -> None:
        roi, s = self._sprite_samples(sp, centre, angle_deg, z)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        a = s[..., 3]
        # A piece is a few mm thick: a small soft shadow on the side away from the light.
        shift = _jacobian(self.camera.plane_homography(z), np.asarray(centre, np.float64)) @ \
            self.setup.light.shadow_shift(3.0)
        m = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        shade = cv2.warpAffine(a, m, (a.shape[1], a.shape[0]))
        shade = _blur_mask(shade, 1.5 * self.board_scale) * (1 - a)
        dst, g = albedo[y0:y1, x0:x1], gloss[y0:y1, x0:x1]
        dst *= _rep3(1 - 0.4 * shade)
        _lerp_into(dst, np.ascontiguousarray(s[..., :3]), np.ascontiguousarray(a))
        g += (s[..., 4] - g) * a

    def _board_base(self, albedo: np.ndarray) -> None:
        """The board's contact shadow on the table and its visible side walls."""
        g, cam, light = self.geometry, self.camera, self.setup.light
        foot = g.outline_world(0.0)
        top = g.outline_world(g.top_z)
        shifted = foot.copy()
        shifted[:, :2] += light.shadow_shift(g.thickness_mm)
        sigma = (3.0 + 0.6 * g.thickness_mm) * self.board_scale
        polys = [cam.project(foot), cam.project(shifted)]
        near = _roi(np.vstack(polys), self.size, int(3 * sigma) + 2)
        if near is not None:
            x0, y0, x1, y1 = near
            mask = _soft_mask((x1 - x0, y1 - y0), [p - [x0, y0] for p in polys], sigma)
            albedo[y0:y1, x0:x1] *= _rep3(1 - 0.5 * mask)

        pf, pt = cam.project(foot), cam.project(top)
        roi = _roi(np.vstack([pf, pt]), self.size, 2)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        shade = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cover = np.zeros_like(shade)
        az = math.radians(light.azimuth_deg)
        to_light = np.array([math.cos(az), math.sin(az)])
        n_pts = len(foot)
        for i in range(n_pts):
            j = (i + 1) % n_pts
            edge = foot[j, :2] - foot[i, :2]
            normal = np.array([edge[1], -edge[0]]) / max(np.linalg.norm(edge), 1e-9)
            if normal @ foot[i, :2] < 0:
                normal = -normal
            value = int(255 * (0.45 + 0.4 * max(0.0, float(normal @ to_light))))
            quad = np.array([pf[i], pf[j], pt[j], pt[i]])
            _fill(shade, [quad], value, (x0, y0), aa=False)
            _fill(cover, [quad], 255, (x0, y0))
        side = _tint(shade.astype(np.float32) / 255, g.side_rgb)
        _lerp_into(albedo[y0:y1, x0:x1], side, cover.astype(np.float32) / 255)

    def _illumination(self) -> np.ndarray:
        """Light reaching each pixel: exposure, fall-off, vignette, soft shadows, colour cast."""
        light, (w, h) = self.setup.light, self.size
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
        gw, gh = self.geometry.size_mm
        for s in light.shadows:
            poly = (np.asarray(s.polygon) - 0.5) * [gw, gh]
            poly = _densify(poly, max(gw, gh) / 40)
            canvas = np.zeros((sh, sw), np.uint8)
            world = np.column_stack([poly, np.full(len(poly), self.geometry.top_z)])
            ok = self.camera.depth(world) > 0.05 * self.board_depth
            _fill(canvas, [_to_small(self.camera.project(world[ok]), q)], 255)
            soft = _blur_mask(canvas.astype(np.float32) / 255, s.softness * self.board_onscreen / q)
            shade *= 1 - s.darkness * soft
        tint = np.array([1.0, 0.97, 0.87], np.float32)  # shadows are lit by bluish ambient light
        gains = light.gains
        small = cv2.merge(tuple((level * (1 - (1 - shade) * tint[k]) * gains[k]).astype(np.float32) for k in range(3)))
        return _from_small(small.astype(np.float32), self.size, q)

    def _glare(self) -> tuple[np.ndarray, tuple[int, int, int, int] | None]:
        """Specular reflections of lamps and windows (scaled by surface gloss when composited)."""
        w, h = self.size
        field_ = np.zeros((h, w), np.float32)
        union = None
        gw, gh = self.geometry.size_mm
        for g in self.setup.light.glare:
            world = np.array([[(g.u - 0.5) * gw, (g.v - 0.5) * gh, self.geometry.top_z]])
            centre = self.camera.project(world)[0]
            r = g.size * self.board_onscreen
            ext = 5.0 * r * g.aspect  # where even the haze has faded (no visible box edge)
            roi = _roi(np.array([centre - ext, centre + ext]), self.size, 0)
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
                pane = 1 - _smoothstep(0.6, 1.4, np.abs(u) ** 6 + np.abs(v) ** 6)
                bars = np.maximum(_smoothstep(0.09, 0.04, np.abs(u)), _smoothstep(0.09, 0.04, np.abs(v)))
                value = pane * (1 - 0.85 * bars) * (0.85 + 0.3 * np.clip(u, -1, 1)) * 1.3 + haze
            else:
                value = np.exp(-d2 * 2.5) * 1.2 + np.exp(-d2 * 0.5) * 0.35 + haze
            field_[y0:y1, x0:x1] += g.strength * value
            union = roi if union is None else (min(union[0], x0), min(union[1], y0),
                                               max(union[2], x1), max(union[3], y1))
        if union is None:
            return field_[:0, :0], None
        return field_[union[1]:union[3], union[0]:union[2]].copy(), union

    def _cup_layer(self):
        """The mug's radiance, opacity and shadow; static, so drawn once per view."""
        st, cam = self.setup.cup_style, self.camera
        centre, zb = self.cup_at
        r, height = st.radius_mm, st.height_mm
        bottom, top = _cup_outline(centre, r, zb), _cup_outline(centre, r, zb - height)
        pb, pt = cam.project(bottom), cam.project(top)
        hd = np.array([math.cos(math.radians(st.handle_deg)), math.sin(math.radians(st.handle_deg))])
        t = np.linspace(0, math.pi, 16)
        handle3 = np.column_stack([centre + np.outer(r + 26 * np.sin(t), hd),
                                   zb - height + 18 + (height - 45) * t / math.pi])
        ph = cam.project(handle3)
        roi = _roi(np.vstack([pb, pt, ph]), self.size, 12)
        if roi is None:
            return None
        x0, y0, x1, y1 = roi
        o = np.array([x0, y0])
        rgb = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
        alpha = np.zeros((y1 - y0, x1 - x0), np.float32)
        col = np.array(st.rgb, np.float32)
        px_per_mm = self.board_scale * self.board_depth / float(cam.depth(top[:1])[0])
        handle_behind = cam.depth(handle3[8:9])[0] > cam.depth(np.array([[*centre, zb - height / 2]]))[0]

        def paint(polys, colour, thickness: int = 0):
            m = np.zeros(alpha.shape, np.uint8)
            if thickness:
                pts = [np.round((p - o) * 16).astype(np.int32) for p in polys]
                cv2.polylines(m, pts, False, 255, thickness, cv2.LINE_AA, shift=4)
            else:
                _fill(m, polys, 255, o)
            mf = m.astype(np.float32) / 255
            _lerp_into(rgb, colour if np.ndim(colour) == 3 else _tint(np.ones_like(mf), colour), mf)
            np.maximum(alpha, mf, out=alpha)

        handle_w = max(2, int(round(9 * px_per_mm)))
        if handle_behind:
            paint([ph], col * 0.7, handle_w)
        # Body: a cylinder lit from one side, with a vertical specular streak.
        hull = cv2.convexHull(np.vstack([pb, pt]).astype(np.float32))[:, 0, :]
        cb, ct = cam.project(np.array([[*centre, zb], [*centre, zb - height]]))
        axis = (ct - cb) / max(np.linalg.norm(ct - cb), 1e-6)
        perp = np.array([-axis[1], axis[0]])
        rb = np.abs((pb - cb) @ perp).max()
        rt = np.abs((pt - ct) @ perp).max()
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        along = np.clip(((xs - cb[0]) * axis[0] + (ys - cb[1]) * axis[1]) / max(np.linalg.norm(ct - cb), 1e-6), 0, 1)
        s = np.clip(((xs - cb[0]) * perp[0] + (ys - cb[1]) * perp[1]) / (rb + (rt - rb) * along), -1, 1)
        beta = 0.7 if (self.setup.light.azimuth_deg % 360) < 180 else -0.7
        lam = 0.5 + 0.5 * np.cos(np.arcsin(s) - beta)
        body = _tint((0.3 + 0.7 * lam * (1 - 0.3 * s * s)).astype(np.float32), col)
        body += _rep3((0.8 * np.exp(-((s - math.sin(beta / 2)) / 0.07) ** 2)).astype(np.float32))
        paint([hull], body)
        paint([pt], np.clip(col * 1.08 + 0.05, 0, 1))
        inner = cam.project(_cup_outline(centre, r * 0.9, zb - height))
        paint([inner], col * 0.5)
        if st.liquid is not None:
            m_inner = np.zeros(alpha.shape, np.uint8)
            _fill(m_inner, [inner], 255, o)
            m_liq = np.zeros(alpha.shape, np.uint8)
            _fill(m_liq, [cam.project(_cup_outline(centre, r * 0.88, zb - height + 16))], 255, o)
            mf = np.minimum(m_inner, m_liq).astype(np.float32) / 255
            _lerp_into(rgb, _tint(np.ones_like(mf), np.array(st.liquid) * 0.85), mf)
        if not handle_behind:
            paint([ph], col * 0.8, handle_w)
        radiance = rgb * self.illum[y0:y1, x0:x1]
        # Soft shadow of the whole cylinder on the surface it stands on.
        light = self.setup.light
        shadow_pts = np.vstack([bottom[:, :2], top[:, :2] + light.shadow_shift(height)])
        world = np.column_stack([shadow_pts, np.full(len(shadow_pts), zb)])
        shadow = [cv2.convexHull(cam.project(world).astype(np.float32))[:, 0, :]]
        return roi, radiance, alpha, (shadow, math.tan(math.radians(light.penumbra_deg)) * height)

    def _cast_shadow(self, radiance: np.ndarray, polys_px: list[np.ndarray], blur_mm: float,
                     darkness: float) -> None:
        """Darken the photo under soft-edged polygons (given in photo pixels)."""
        sigma = 1.0 + blur_mm * self.board_scale
        roi = _roi(np.vstack(polys_px), self.size, int(3 * sigma) + 4)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        mask = _soft_mask((x1 - x0, y1 - y0), [p - [x0, y0] for p in polys_px], sigma)
        radiance[y0:y1, x0:x1] *= _rep3(1 - darkness * mask)

    # -- per frame ----------------------------------------------------------------------

    def hand_toward(self, at_mm: tuple[float, float], rng: np.random.Generator,
                    carrying: Sprite | None = None) -> Hand:
        """This session's hand with its grip over `at_mm`, the arm coming from the board's
        nearest side (players reach in from where they sit)."""
        st = self.setup.hand_style
        at = np.asarray(at_mm, np.float64)
        if np.linalg.norm(at) > 1.0:
            inward = math.degrees(math.atan2(-at[1], -at[0]))
        else:  # over the centre: reach from the photographer's side
            inward = math.degrees(math.atan2(-self.camera.centre[1], -self.camera.centre[0]))
        return Hand((float(at[0]), float(at[1])), inward + st.skew_deg + float(rng.normal(0, 6)),
                    st.height_mm * float(rng.uniform(0.85, 1.15)), st, carrying, float(rng.uniform(0, 360)))

    def render(self, board: BoardTexture, rng: np.random.Generator, hand: Hand | None = None) -> SceneRender:
        """Photograph the board (any texture resolution) with the optional hand."""
        w, h = self.size
        radiance = self.background.copy()
        occluder = np.zeros((h, w), np.float32)
        washout = np.zeros((h, w), bool)

        x0, y0, x1, y1 = self.board_roi
        for top in range(y0, y1, _STRIP):  # strips keep the temporaries small and in cache
            self._composite_board(radiance, washout, board, top, min(top + _STRIP, y1))

        if self.cup_layer is not None:
            roi, cup_rad, cup_alpha, (shadow, blur_mm) = self.cup_layer
            self._cast_shadow(radiance, shadow, blur_mm, 0.5)
            cx0, cy0, cx1, cy1 = roi
            _lerp_into(radiance[cy0:cy1, cx0:cx1], cup_rad, cup_alpha)
            occluder[cy0:cy1, cx0:cx1] = np.maximum(occluder[cy0:cy1, cx0:cx1], cup_alpha)
        if hand is not None:
            self._draw_hand(radiance, occluder, hand)

        image = _expose(radiance, self.setup.conditions, rng, self.noise_bank, self.scale)
        return SceneRender(image, (occluder > 0.5) | washout, self.H_board @ board.px_to_mm(), self.camera)

    def _composite_board(self, radiance: np.ndarray, washout: np.ndarray, board: BoardTexture,
                         top: int, bottom: int) -> None:
        """Lay the lit board texture over rows top..bottom of the board's region."""
        x0, y0, x1, _ = self.board_roi
        ppm = np.float32(board.px_per_mm)
        gw, gh = board.geometry.size_mm
        xy = self.board_xy[top - y0:bottom - y0]
        mx = xy[..., 0] * ppm + np.float32(gw / 2 * ppm - 0.5)
        my = xy[..., 1] * ppm + np.float32(gh / 2 * ppm - 0.5)
        s = cv2.remap(board.layers, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        lit = s[..., :3] * self.illum[top:bottom, x0:x1]
        a = np.ascontiguousarray(s[..., 3])
        if self.glare_roi is not None:
            # Specular light, and where it drowns the surface colour (no reader can see beneath).
            gx0, gy0 = max(self.glare_roi[0], x0), max(self.glare_roi[1], top)
            gx1, gy1 = min(self.glare_roi[2], x1), min(self.glare_roi[3], bottom)
            if gx1 > gx0 and gy1 > gy0:
                inner = (slice(gy0 - top, gy1 - top), slice(gx0 - x0, gx1 - x0))
                rx, ry = self.glare_roi[:2]
                spec = self.glare[gy0 - ry:gy1 - ry, gx0 - rx:gx1 - rx] * s[inner][..., 4]
                glared = lit[inner]
                chroma_before = _chroma(glared)[0]
                glared += _tint(spec, self.glare_rgb)
                chroma_after, darkest = _chroma(glared)
                washout[gy0:gy1, gx0:gx1] = (spec * a[inner] >= 0.25) & (
                    (darkest >= 0.88) | (chroma_after < 0.35 * chroma_before))
        _lerp_into(radiance[top:bottom, x0:x1], lit, a)

    def _draw_hand(self, radiance: np.ndarray, occluder: np.ndarray, hand: Hand) -> None:
        cam, light = self.camera, self.setup.light
        top_z = self.geometry.top_z
        grip_z = top_z - hand.height_mm
        parts = []
        for kind, pts in _hand_parts(hand, top_z):
            if kind in ("arm", "sleeve"):  # the arm rises towards the camera: stop short of it
                keep = cam.depth(pts) > 0.3 * self.board_depth
                n = len(pts) // 2  # one side from the wrist back, the other side returning
                keep = keep[:n] & keep[::-1][:n]
                pts = np.vstack([pts[:n][keep], pts[n:][keep[::-1]]])
            if kind == "piece":
                pts = self._carried_outline(hand, grip_z)
            parts.append((kind, pts))

        # Shadow first, so the hand does not darken itself.
        shadow_polys = []
        for kind, pts in parts:
            if kind in ("nail", "crease") or len(pts) < 3:
                continue
            flat = pts.copy()
            flat[:, :2] += light.shadow_shift(top_z - pts[:, 2])
            flat[:, 2] = top_z
            shadow_polys.append(cam.project(flat))
        blur_mm = 2.0 + math.tan(math.radians(light.penumbra_deg)) * hand.height_mm
        self._cast_shadow(radiance, shadow_polys, blur_mm, 0.55)

        projected = [(kind, cam.project(pts)) for kind, pts in parts if len(pts) >= 3]
        roi = _roi(np.vstack([p for _, p in projected]), self.size, 2)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        # Colours are painted without anti-aliasing onto a skin-coloured canvas; the coverage
        # (alpha) is anti-aliased, so only the silhouette needs smooth edges.
        skin = np.array(hand.style.skin, np.float32)
        rgb = _tint(np.ones((y1 - y0, x1 - x0), np.float32), skin)
        cover = np.zeros((y1 - y0, x1 - x0), np.uint8)
        lines = np.zeros_like(cover)  # finger edges and knuckle folds, darkened at the end
        colours = {"arm": skin, "palm": skin, "finger": skin,
                   "sleeve": np.array(hand.style.sleeve or skin, np.float32),
                   "nail": np.clip(skin * np.float32(1.1) + np.float32(0.08), 0, 1)}
        px_per_mm = self.board_scale * self.board_depth / float(cam.depth(np.array([[*hand.at_mm, grip_z]]))[0])
        line_w = max(1, int(round(0.6 * px_per_mm)))
        o = np.array([x0, y0])
        for kind, p in projected:
            pts16 = [np.round(np.clip(p - o, -1e6, 1e6) * 16).astype(np.int32)]
            if kind == "piece":
                self._paint_carried(rgb, cover, roi, hand, grip_z)
            elif kind == "crease":
                cv2.polylines(lines, pts16, False, 255, line_w, cv2.LINE_AA, 4)
            else:
                cv2.fillPoly(rgb, pts16, tuple(float(v) for v in colours[kind]), cv2.LINE_8, 4)
                cv2.fillPoly(cover, pts16, 255, cv2.LINE_AA, 4)
                if kind == "finger":  # the dark edge where a finger lies over its neighbour
                    cv2.polylines(lines, pts16, True, 255, line_w, cv2.LINE_AA, 4)
        alpha = cover.astype(np.float32) / 255
        # Rounded limbs: darker towards their silhouette, brighter on the side facing the lamp
        # (the silhouette's blurred slope stands in for the surface normal); skin is never even.
        dist = cv2.distanceTransform((cover > 127).astype(np.uint8), cv2.DIST_L2, 3)
        sigma = 5.0 * px_per_mm
        soft = cv2.GaussianBlur(alpha, (0, 0), sigma)
        lx, ly = self._light_on_screen()
        facing = (cv2.Sobel(soft, cv2.CV_32F, 1, 0, ksize=3) * lx + cv2.Sobel(soft, cv2.CV_32F, 0, 1, ksize=3) * ly)
        facing = np.clip(facing * np.float32(-sigma * 2.5), -1, 1)
        mottle = cv2.resize(self.skin_mottle, (x1 - x0, y1 - y0), interpolation=cv2.INTER_CUBIC)
        shade = (0.72 + 0.28 * (1 - np.exp(-dist / (7.0 * px_per_mm)))) * (1 + 0.22 * facing) * (1 + 0.05 * mottle)
        shade *= 1 - 0.3 * lines.astype(np.float32) / 255
        rgb *= _rep3(shade.astype(np.float32))
        rgb *= self.illum[y0:y1, x0:x1]
        _lerp_into(radiance[y0:y1, x0:x1], rgb, alpha)
        np.maximum(occluder[y0:y1, x0:x1], alpha, out=occluder[y0:y1, x0:x1])

    def _light_on_screen(self) -> tuple[float, float]:
        """Unit direction, in photo pixels, towards the main light along the board plane."""
        az = math.radians(self.setup.light.azimuth_deg)
        z = self.geometry.top_z
        a, b = self.camera.pinhole(np.array([[0.0, 0.0, z], [50 * math.cos(az), 50 * math.sin(az), z]]))
        d = b - a
        return tuple(d / max(np.linalg.norm(d), 1e-9))

    def _carried_outline(self, hand: Hand, z: float) -> np.ndarray:
        """The footprint of the carried piece's sprite (for its shadow and the hand's extent)."""
        a = math.radians(hand.carry_angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        corners = (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * np.array(hand.carrying.size_mm) / 2) @ rot.T
        return np.column_stack([corners + hand.at_mm, np.full(4, z)])

    def _paint_carried(self, rgb: np.ndarray, cover: np.ndarray, roi, hand: Hand, z: float) -> None:
        """A piece held between thumb and fingers, drawn under the fingers."""
        sroi, s = self._sprite_samples(hand.carrying, np.asarray(hand.at_mm), hand.carry_angle_deg, z)
        if sroi is None:
            return
        ix0, iy0 = max(sroi[0], roi[0]), max(sroi[1], roi[1])
        ix1, iy1 = min(sroi[2], roi[2]), min(sroi[3], roi[3])
        if ix1 <= ix0 or iy1 <= iy0:
            return
        part = s[iy0 - sroi[1]:iy1 - sroi[1], ix0 - sroi[0]:ix1 - sroi[0]]
        inside = (slice(iy0 - roi[1], iy1 - roi[1]), slice(ix0 - roi[0], ix1 - roi[0]))
        a = np.ascontiguousarray(part[..., 3])
        _lerp_into(rgb[inside], np.ascontiguousarray(part[..., :3]), a)
        np.maximum(cover[inside], (a * 255).astype(np.uint8), out=cover[inside])


# --------------------------------------------------------------------------- camera and file


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


def exif_app1(orientation: int) -> bytes:
    """A minimal EXIF APP1 segment holding only the Orientation tag (0x0112).

    Layout: marker, length, "Exif\\0\\0", a big-endian TIFF header, one IFD with one SHORT
    entry, and a zero link to the next IFD.
    """
    tiff = (b"MM\x00\x2a" + (8).to_bytes(4, "big") + (1).to_bytes(2, "big")
            + (0x0112).to_bytes(2, "big") + (3).to_bytes(2, "big") + (1).to_bytes(4, "big")
            + orientation.to_bytes(2, "big") + b"\x00\x00" + (0).to_bytes(4, "big"))
    payload = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload


def _with_exif(jpeg: bytes, orientation: int) -> bytes:
    """Put an EXIF orientation right after SOI, replacing the JFIF APP0 (as phones write it)."""
    rest = jpeg[2:]
    if rest[:2] == b"\xff\xe0":
        rest = rest[2 + int.from_bytes(rest[2:4], "big"):]
    return jpeg[:2] + exif_app1(orientation) + rest


# Pixel rotation a sideways sensor stores so that the EXIF orientation turns it upright.
_STORE_ROTATION = {6: cv2.ROTATE_90_COUNTERCLOCKWISE, 8: cv2.ROTATE_90_CLOCKWISE}


def save_photo(upright: np.ndarray, c: Conditions) -> tuple[np.ndarray, bytes | None]:
    """What the phone stores: (pixel data before EXIF rotation, file bytes or None)."""
    stored = upright if c.exif_orientation == 1 else cv2.rotate(upright, _STORE_ROTATION[c.exif_orientation])
    if c.jpeg_quality is None and c.exif_orientation == 1:
        return stored, None
    quality = 95 if c.jpeg_quality is None else int(c.jpeg_quality)
    ok, buf = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    data = buf.tobytes()
    if c.exif_orientation != 1:
        data = _with_exif(data, c.exif_orientation)
    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    return pixels, data


def upright_size(size: tuple[int, int], c: Conditions) -> tuple[int, int]:
    """The upright photo's size: a sideways sensor of `size` gives a portrait picture."""
    return size if c.exif_orientation == 1 else (size[1], size[0])
