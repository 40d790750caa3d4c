"""Where a board lies in a photo: :class:`BoardPose`, its lens model, and the top-down view.

Generic over boards: a pose maps photo pixels to *board units* (for a square grid, one unit
per cell, x = column, y = row, the grid spanning ``0..extent``). Hex and round boards pick
their own units; everything here is plain projective geometry.

Phone lenses keep some barrel distortion, so a homography alone misplaces the board's far
corners by up to a cell. The pose therefore carries one radial coefficient (the *division
model*, about the image centre, radius in units of half the image diagonal): undistorting a
pixel is ``p_u = c + (p - c) / (1 + k r^2)``, and its inverse has a closed form, so both
directions stay cheap enough for the live referee.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import cv2
import numpy as np

from .errors import ReadError

MAX_VIEW_ANGLE_DEG = 65.0  # beyond this the far cells are slivers and pieces hide each other


def apply_h(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to N x 2 points."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    q = pts @ H[:, :2].T + H[:, 2]
    return q[:, :2] / q[:, 2:3]


@dataclass(frozen=True)
class Lens:
    """Radial distortion (division model) of one image size."""

    size: tuple[int, int]  # (width, height)
    k: float = 0.0

    @property
    def centre(self) -> np.ndarray:
        return np.array([(self.size[0] - 1) / 2, (self.size[1] - 1) / 2])

    @property
    def radius(self) -> float:
        return 0.5 * float(np.hypot(*self.size))

    def undistort(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float64).reshape(-1, 2)
        if self.k == 0.0:
            return pts
        d = (pts - self.centre) / self.radius
        return self.centre + d * self.radius / (1.0 + self.k * (d * d).sum(1, keepdims=True))

    def distort(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float64).reshape(-1, 2)
        if self.k == 0.0:
            return pts
        u = (pts - self.centre) / self.radius
        ru = np.linalg.norm(u, axis=1, keepdims=True)
        # Solve r_u = r_d / (1 + k r_d^2) for r_d: the root that tends to r_u as k -> 0.
        disc = np.maximum(1.0 - 4.0 * self.k * ru * ru, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rd = np.where(ru > 1e-12, 2.0 * ru / (1.0 + np.sqrt(disc)), 0.0)
            scale = np.where(ru > 1e-12, rd / ru, 1.0)
        return self.centre + u * scale * self.radius


@dataclass(frozen=True)
class BoardPose:
    """A board located in one photo.

    ``homography`` maps *undistorted* photo pixels to board units; use :meth:`to_board` and
    :meth:`to_photo` for real (distorted) pixels. ``corners`` are the grid's outer corners in
    photo pixels, ordered TL, TR, BR, BL as seen in the photo (row 0 is the edge nearest the
    top of the photo, column 0 its left end). ``quality`` (0-1) is how clearly the grid's
    lines show at the pose: the live referee compares it with later frames.
    """

    homography: np.ndarray
    corners: np.ndarray
    quality: float
    image_size: tuple[int, int]  # (width, height) of the photo this pose refers to
    extent: tuple[float, float]  # board units spanned by the grid (width, height)
    distortion: float = 0.0
    residual: float = 0.0  # RMS fit error of the grid lines, board units
    contrast: float = 0.0  # border/centre contrast when located; later frames are checked against it

    @property
    def lens(self) -> Lens:
        return Lens(self.image_size, self.distortion)

    def to_board(self, pts: np.ndarray) -> np.ndarray:
        return apply_h(self.homography, self.lens.undistort(pts))

    def to_photo(self, pts: np.ndarray) -> np.ndarray:
        return self.lens.distort(apply_h(np.linalg.inv(self.homography), pts))

    def scaled(self, factor: float) -> "BoardPose":
        """The same pose for the photo resized by ``factor`` (pixel centres kept aligned)."""
        w, h = self.image_size
        size = (int(round(w * factor)), int(round(h * factor)))
        to_small = np.array([[factor, 0, 0.5 * factor - 0.5], [0, factor, 0.5 * factor - 0.5], [0, 0, 1]])
        # The lens model is relative to the image diagonal, so k is unchanged by scaling.
        return replace(self, homography=self.homography @ np.linalg.inv(to_small),
                       corners=apply_h(to_small, self.corners), image_size=size)

    def for_frame(self, frame: np.ndarray) -> "BoardPose":
        """The same pose for ``frame``'s size: a pose may have been found on another size (the
        live referee may locate on a different size; a calibration was taken on another photo)."""
        h, w = frame.shape[:2]
        return self.for_size((w, h))

    def for_size(self, size: tuple[int, int]) -> "BoardPose":
        """The same pose for an image of ``size`` (width, height) of the same view."""
        return self if self.image_size == tuple(size) else self.scaled(size[0] / self.image_size[0])

    def to_json(self) -> dict:
        """Plain JSON (for a calibration file: a fixed camera keeps its board pose)."""
        return {"homography": self.homography.tolist(), "corners": self.corners.tolist(),
                "quality": self.quality, "image_size": list(self.image_size), "extent": list(self.extent),
                "distortion": self.distortion, "residual": self.residual, "contrast": self.contrast}

    @classmethod
    def from_json(cls, data: Mapping) -> "BoardPose":
        """The pose :meth:`to_json` wrote. A file may have been damaged or edited by hand, so what
        no pose could be is refused here, once for every reader of one (ValueError, or KeyError
        and TypeError for a missing or misshapen entry): a pose that only fails later, deep in a
        reading, is a traceback instead of a reason."""
        pose = cls(np.array(data["homography"], np.float64), np.array(data["corners"], np.float64),
                   float(data["quality"]), tuple(int(v) for v in data["image_size"]),
                   tuple(float(v) for v in data["extent"]), float(data.get("distortion", 0.0)),
                   float(data.get("residual", 0.0)), float(data.get("contrast", 0.0)))
        if pose.homography.shape != (3, 3) or pose.corners.ndim != 2 or pose.corners.shape[1] != 2 \
                or len(pose.image_size) != 2 or len(pose.extent) != 2:
            raise ValueError("a 3x3 homography, corner points (x, y), an image size and an extent expected")
        if not (np.isfinite(pose.homography).all() and np.isfinite(pose.corners).all()
                and np.isfinite(pose.extent).all()):
            raise ValueError("the pose holds non-numbers")
        if min(pose.image_size) <= 0 or min(pose.extent) <= 0 or np.linalg.matrix_rank(pose.homography) < 3:
            raise ValueError("the pose maps no photo onto a board (an empty image size or extent, or a "
                             "homography that flattens the board)")
        return pose

    def cell_size_px(self) -> float:
        """The smallest side of a board unit in photo pixels (the far end of a tilted board)."""
        return float(min(local_scales(self, pt)[0] for pt in corner_points(self.extent)))

    def view_angle_deg(self) -> float:
        """Angle between the line of sight and the board's normal at its centre.

        A plane tilted by t from the line of sight shrinks by cos t across the tilt: the
        ratio of the local singular values. Needs no camera intrinsics.
        """
        centre = np.array([[self.extent[0] / 2, self.extent[1] / 2]])
        smin, smax = local_scales(self, centre[0])
        return float(np.degrees(np.arccos(np.clip(smin / smax, 0.0, 1.0))))


def calibrated_pose(calibration: BoardPose | Mapping | None, frame: np.ndarray, extent: tuple[float, float],
                    game: str) -> BoardPose | None:
    """The board pose a reader is handed for a fixed camera, for ``frame``'s size; None when it
    is handed none. ``calibration``: a BoardPose or its JSON, alone or under "pose" (what
    ``calibration.board.BoardLock.to_json`` writes). Every reader parses it here, so each
    refuses the same bad calibration in the same words: one that holds no readable pose is
    ReadError("calibration_corrupt") (it was a KeyError or ValueError traceback in some
    readers, ignored in another), and another board's pose, whose ``extent`` is not this
    board's (the calibration page locks only Blokus's grid), is ("calibration_mismatch"):
    read through a Blokus lock laid over the board, an Equilibrix photo had 8 fields read
    wrong surely (of 35 sure), through a Gemblo pose every field black and in doubt, and a
    Gemblo photo through an Equilibrix pose every cell in doubt, with no word why. ``game``
    names the board in the refusal."""
    if calibration is None:
        return None
    if isinstance(calibration, BoardPose):
        pose = calibration
    else:
        data = calibration.get("pose", calibration) if isinstance(calibration, Mapping) else calibration
        try:
            if not isinstance(data, Mapping):
                raise TypeError(f"a {type(data).__name__}, not a pose's JSON")
            pose = BoardPose.from_json(data)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            why = f"no {e}" if isinstance(e, KeyError) else str(e)
            raise ReadError("calibration_corrupt", f"the calibration handed to the {game} reader holds no "
                            f"readable board pose ({why})") from None
    if not np.allclose(pose.extent, extent):
        raise ReadError("calibration_mismatch", f"the calibration's board pose is of another board "
                        f"({pose.extent[0]:g} x {pose.extent[1]:g} units, {game}'s is {extent[0]:g} x "
                        f"{extent[1]:g}): read {game} photos with a calibration that holds no board pose")
    return pose.for_frame(frame)


def corner_points(extent: tuple[float, float]) -> np.ndarray:
    w, h = extent
    return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])


def local_scales(pose: BoardPose, board_pt: np.ndarray, eps: float = 0.05) -> tuple[float, float]:
    """Singular values (min, max) of the board->photo Jacobian at a board point."""
    pts = np.array([board_pt, board_pt + [eps, 0], board_pt + [0, eps]], np.float64)
    q = pose.to_photo(pts)
    jac = np.column_stack([(q[1] - q[0]) / eps, (q[2] - q[0]) / eps])
    s = np.linalg.svd(jac, compute_uv=False)
    return float(s[1]), float(s[0])


def orient(board_to_photo: np.ndarray, extent: float) -> np.ndarray:
    """Re-label a square board's axes so that (0, 0) is the photo's top-left corner.

    The grid finder's axes are arbitrary (any of 8 rotations/reflections). The contract wants
    row 0 on the edge nearest the top of the photo, column 0 at its left end, and no
    mirroring: so the corners must run clockwise on screen starting from that edge's left end.
    Returns the corrected board->photo homography.
    """
    square = corner_points((extent, extent))
    q = apply_h(board_to_photo, square)
    area = sum(q[i, 0] * q[(i + 1) % 4, 1] - q[(i + 1) % 4, 0] * q[i, 1] for i in range(4))
    order = [0, 1, 2, 3] if area > 0 else [0, 3, 2, 1]  # clockwise on screen (y down)
    mids = [(q[order[i], 1] + q[order[(i + 1) % 4], 1]) for i in range(4)]
    top = int(np.argmin(mids))
    old = square[[order[(top + i) % 4] for i in range(4)]]
    relabel = cv2.getPerspectiveTransform(square.astype(np.float32), old.astype(np.float32))
    return board_to_photo @ relabel


def make_pose(board_to_photo: np.ndarray, image_size: tuple[int, int], extent: float, quality: float,
              distortion: float = 0.0, residual: float = 0.0) -> BoardPose:
    """A pose from an (undistorted-pixel) board->photo homography; axes put in contract order."""
    h = orient(board_to_photo, extent)
    h /= h[2, 2] if abs(h[2, 2]) > 1e-12 else 1.0
    lens = Lens(image_size, distortion)
    corners = lens.distort(apply_h(h, corner_points((extent, extent))))
    return BoardPose(np.linalg.inv(h), corners, float(quality), image_size, (extent, extent),
                     distortion, residual)


def check_angle(pose: BoardPose) -> None:
    """Refuse a board seen so obliquely that its far cells cannot be told apart."""
    angle = pose.view_angle_deg()
    if angle > MAX_VIEW_ANGLE_DEG:
        raise angle_refusal(angle)


def angle_refusal(angle: float, seen: str = "the board is seen") -> ReadError:
    """The refusal of a board seen ``angle`` degrees from straight above, beyond
    :data:`MAX_VIEW_ANGLE_DEG` (``seen``: what is seen so, and how surely). The angle is stated
    rounded *up* to a tenth of a degree: rounded to the nearest, a board seen at 65.4 degrees
    read "seen 65 degrees ...; at most 65 degrees", a refusal that contradicts itself."""
    return ReadError("impossible_angle", f"{seen} {math.ceil(angle * 10) / 10:.1f} degrees from straight above; "
                     f"take the photo from higher up (at most {MAX_VIEW_ANGLE_DEG:.0f} degrees)")


def rectify(image: np.ndarray, pose: BoardPose, px_per_unit: float, margin: float = 0.0) -> np.ndarray:
    """Top-down view: board point (x, y) lands at ((x + margin) * px, (y + margin) * px).

    Only the board's bounding box is used, shrunk first (area averaging) so a board unit
    spans about 1.5 output units' worth of pixels: bilinear sampling straight from a 12 MP
    photo would alias, and shrinking the whole photo would waste the time budget.
    """
    w_units, h_units = pose.extent
    out_w = int(round((w_units + 2 * margin) * px_per_unit))
    out_h = int(round((h_units + 2 * margin) * px_per_unit))
    maps = _photo_maps(pose, px_per_unit, margin, out_w, out_h)
    h, w = image.shape[:2]
    (left, top), (right, bottom) = _span(maps)
    x0, y0 = max(0, int(np.floor(left)) - 2), max(0, int(np.floor(top)) - 2)
    x1, y1 = min(w, int(np.ceil(right)) + 3), min(h, int(np.ceil(bottom)) + 3)
    if x1 <= x0 or y1 <= y0:  # the board lies entirely outside this image
        return np.zeros((out_h, out_w) + image.shape[2:], image.dtype)
    crop = image[y0:y1, x0:x1]
    factor = min(1.0, 1.5 * px_per_unit / max(pose.cell_size_px(), 1e-6))
    if factor < 0.8:
        size = (max(1, round(crop.shape[1] * factor)), max(1, round(crop.shape[0] * factor)))
        crop = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
        fx, fy = size[0] / (x1 - x0), size[1] / (y1 - y0)
    else:
        fx = fy = 1.0
    mx = (maps[..., 0] - x0 + 0.5) * fx - 0.5  # pixel centres stay aligned when shrinking
    my = (maps[..., 1] - y0 + 0.5) * fy - 0.5
    return cv2.remap(crop, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _span(maps: np.ndarray) -> tuple[tuple[float, float], tuple[float, float]]:
    """The least and the greatest photo (x, y) in ``maps`` (rows x columns x 2), NaNs skipped.

    Every candidate grid's top-down view asks for it: numpy's NaN-skipping reductions take
    about four times as long as the plain ones over these interleaved maps, and a NaN (a point
    on the horizon) is rare, so they run only when the plain ones meet one (their result is
    then NaN): no pass over the maps looks for NaNs first."""
    x, y = maps[..., 0], maps[..., 1]
    span = (float(x.min()), float(y.min())), (float(x.max()), float(y.max()))
    if np.isnan(span).any():
        span = (float(np.nanmin(x)), float(np.nanmin(y))), (float(np.nanmax(x)), float(np.nanmax(y)))
    return span


def _photo_maps(pose: BoardPose, px_per_unit: float, margin: float, out_w: int, out_h: int) -> np.ndarray:
    """Photo coordinates (out_h x out_w x 2, float32) of every top-down output pixel.

    The maps are smooth, so they are solved exactly on a coarse lattice and interpolated.
    """
    step = 8
    gx, gy = np.meshgrid(np.arange(0, out_w + step, step, dtype=np.float64),
                         np.arange(0, out_h + step, step, dtype=np.float64))
    board = np.column_stack([gx.ravel(), gy.ravel()]) / px_per_unit - margin
    photo = pose.to_photo(board).astype(np.float32).reshape(gx.shape + (2,))
    qx, qy = np.meshgrid(np.arange(out_w, dtype=np.float32) / step, np.arange(out_h, dtype=np.float32) / step)
    return cv2.remap(photo, qx, qy, cv2.INTER_LINEAR)  # bilinear lookup in the coarse lattice


def in_photo(pose: BoardPose, px_per_unit: float, view_shape: tuple[int, int], margin: float = 0.0,
             inset: float = 0.0) -> np.ndarray:
    """Which pixels of the top-down view ``rectify(image, pose, px_per_unit, margin)`` (of
    ``view_shape``: rows, columns) show the photo: their photo point lies at least ``inset``
    pixels inside it. Beyond the photo rectify repeats its edge pixels, which a reader must
    not take for the board (a board cut by the photo's edge)."""
    maps = _photo_maps(pose, px_per_unit, margin, view_shape[1], view_shape[0])
    w, h = pose.image_size
    x, y = maps[..., 0], maps[..., 1]
    return (x >= inset) & (x <= w - 1 - inset) & (y >= inset) & (y <= h - 1 - inset)
