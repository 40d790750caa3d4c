"""Lock the board's pose for a fixed camera, and notice when the board has been moved.

Why lock it: finding the grid from scratch costs a few hundred milliseconds and can fail on
a board covered in pieces under a dim lamp, while a webcam on a stand sees the board in the
same place all evening. So the pose is found once (automatically, or from four corners a
person taps when the automatic search fails), stored, and every frame is only *checked*
against it (``vision.blokus.verify_pose``, a few milliseconds). When the check fails the
board was bumped: the live referee warns and locates it again.

A pose refers to frames exactly as the reader sees them: undistorted by the calibration's
camera when it has one (``undistorted``), raw otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from rules.blokus import SIZE
from vision.blokus import locate_board, verify_pose
from vision.errors import ReadError
from vision.grid import evidence, quick_contrast, refine, working_image
from vision.pose import BoardPose, check_angle, corner_points, make_pose

from .errors import CalibrationError

MIN_CONTRAST = 0.6  # below this the grid does not show at the pose (verify_pose's own floor)


@dataclass(frozen=True)
class BoardLock:
    """A stored board pose: how it was found, and for which frames."""

    pose: BoardPose
    method: str  # "auto" (grid search) or "corners" (four points from a person)
    undistorted: bool = False  # the pose is in the coordinates of undistorted frames

    def to_json(self) -> dict:
        """``{"pose": ...}`` is also what ``vision.blokus.read_blokus(calibration=...)`` takes."""
        return {"pose": self.pose.to_json(), "method": self.method, "undistorted": self.undistorted}

    @classmethod
    def from_json(cls, data: dict) -> "BoardLock":
        method = str(data.get("method", "auto"))
        if method not in ("auto", "corners"):
            raise ValueError(f"board: unknown method {method!r}")
        pose = BoardPose.from_json(data["pose"])  # refuses what is no pose at all
        if pose.corners.shape != (4, 2):
            raise ValueError("board: a square grid's pose (four corners) expected")
        return cls(pose, method, bool(data.get("undistorted", False)))


def lock_board(frame: np.ndarray, corners: np.ndarray | None = None, undistorted: bool = False) -> BoardLock:
    """The board's pose in ``frame``: searched for, or from the grid's four outer corners.

    Raises ReadError (no_board, impossible_angle) from the search, CalibrationError
    (bad_corners) when the given corners do not sit on a grid.
    """
    if corners is None:
        return BoardLock(locate_board(frame), "auto", undistorted)
    return BoardLock(pose_from_corners(frame, corners), "corners", undistorted)


def pose_from_corners(frame: np.ndarray, corners: np.ndarray, cells: int = SIZE) -> BoardPose:
    """A pose from the grid's four outer corners, in any order, snapped onto the grooves.

    People tap to within a few pixels; the grid fit then pulls the pose onto the cell
    borders (and measures the lens bend) when that shows the grid more clearly than the
    taps alone. Points that do not frame a grid are refused, since a lock that fails its
    own check on every frame would only make the referee search again.
    """
    pts = _convex_order(corners)
    size = (frame.shape[1], frame.shape[0])
    to_photo = cv2.getPerspectiveTransform(corner_points((cells, cells)).astype(np.float32), pts.astype(np.float32))
    gray, factor = working_image(frame)
    to_small = np.array([[factor, 0, 0.5 * factor - 0.5], [0, factor, 0.5 * factor - 0.5], [0, 0, 1]])
    small = to_small @ to_photo
    small_size = (gray.shape[1], gray.shape[0])
    as_tapped = evidence(gray, make_pose(small, small_size, cells, 0.0))
    refined, k, rms = refine(gray, small, cells)
    snapped = evidence(gray, make_pose(refined, small_size, cells, 0.0, k))
    if snapped > as_tapped:
        small, quality, residual = refined, snapped, rms
    else:
        k, quality, residual = 0.0, as_tapped, 0.0
    pose = make_pose(np.linalg.inv(to_small) @ small, size, cells, quality, k, residual)
    try:
        check_angle(pose)
    except ReadError as e:
        raise CalibrationError("bad_corners", e.message) from None
    gray_full = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    contrast = quick_contrast(gray_full, pose)
    if contrast < MIN_CONTRAST:
        raise CalibrationError("bad_corners", "the grid's lines do not show between those four points: tap "
                               "the outer corners of the 20 x 20 grid (where the outermost cells meet the rim)")
    return replace(pose, contrast=contrast)


def _convex_order(corners: np.ndarray) -> np.ndarray:
    """Four points sorted around their centre, refused if they do not make a proper quadrilateral."""
    pts = np.asarray(corners, np.float64).reshape(-1, 2)
    # a million pixels off is no photo's corner (and would overflow the float32 geometry below)
    if pts.shape != (4, 2) or not np.isfinite(pts).all() or np.abs(pts).max() > 1e6:
        raise CalibrationError("bad_corners", "four corner points (x, y) in the photo's pixels are needed")
    centre = pts.mean(0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
    area = 0.5 * abs(sum(pts[i, 0] * pts[(i + 1) % 4, 1] - pts[(i + 1) % 4, 0] * pts[i, 1] for i in range(4)))
    hull = cv2.convexHull(pts.astype(np.float32))
    if len(hull) != 4 or area < 400.0:
        raise CalibrationError("bad_corners", "the four points must be the corners of the board's grid, "
                               "not three in a line or all close together")
    return pts


def board_moved(frame: np.ndarray, locked: BoardLock) -> bool:
    """Whether the board no longer lies where ``locked`` says (it was bumped or the camera moved)."""
    return not verify_pose(frame, locked.pose)
