"""The phone's camera: a pinhole with radial lens distortion, posed so the board shows with the
requested tilt, yaw, size and offset, plus the coordinate maps from photo pixels to planes.

World coordinates are millimetres, Z into the table (see `scene`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from .board import BoardGeometry
from .conditions import Conditions

_COARSE_STEP = 8  # coordinate maps are solved on this grid and interpolated (error << 0.01 px)


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

