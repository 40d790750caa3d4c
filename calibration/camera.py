"""A camera's intrinsics and lens distortion, measured from views of the printed target.

Why: a cheap webcam's barrel distortion bends the board's straight grooves. The reader fits
one radial coefficient per photo itself, which is enough for a phone, but not for a wide
webcam with the board filling its frame: there the grid it fits can miss the corner cells
by most of a cell (0.9 of a cell on the synthetic webcam shot of ``tests/test_calibration.py``
when this was written), the very cells a Blokus game starts from. A fixed camera can be measured once, properly (OpenCV's k1, k2, p1, p2 from many
views of a printed ChArUco target), and every frame undistorted before it is read.

The undistorted frame keeps the camera's matrix and frame size: the middle is not
resampled to a coarser scale, and the board keeps its size in pixels for the grid search
(which works on a fixed-size copy of the frame). The price is a thin strip at the edges,
where the barrel had squeezed the most, which falls outside the frame; a board reaching into
it would be cut, and the calibration page shows that. Growing the canvas to keep the strip
made the search find fewer boards (on the scenes of ``bench/calibration_bench.py``: 22 of 30
boards exactly right at the same size, 15 with 10 % more width per side, 12 with 25 %).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import cv2
import numpy as np

from .errors import CalibrationError
from .target import Detection, corner_count, detect

MIN_CORNERS = 10  # corners a view needs to pin its own pose and add to the lens
MIN_VIEWS = 5  # fewer views leave focal length and distortion trading off against each other
MIN_TILT_DEG = 15.0  # views all facing the camera squarely cannot tell focal length from distance
GOOD_RMS_PX = 1.0
COVERAGE_CELLS = 6  # the frame is split into this many cells each way to judge coverage
GOOD_COVERAGE = 0.6
ASPECT_TOLERANCE = 0.01


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Pinhole intrinsics ``matrix`` (K) and OpenCV ``distortion`` for frames of ``size``.

    Frames of another size with the same aspect ratio (the camera set to a lower
    resolution) are handled by scaling K; any other size is refused as a mismatch.
    """

    size: tuple[int, int]  # (width, height) of the calibration frames
    matrix: np.ndarray  # 3 x 3
    distortion: np.ndarray  # k1, k2, p1, p2, k3
    rms: float = 0.0  # reprojection error of the calibration, pixels
    views: int = 0
    _maps: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def focal(self) -> float:
        return float(0.5 * (self.matrix[0, 0] + self.matrix[1, 1]))

    def undistort(self, image: np.ndarray) -> np.ndarray:
        """The frame as a distortion-free pinhole camera would see it (remap tables cached per size)."""
        size = image.shape[1::-1]
        if size not in self._maps:
            matrix = self.scaled_matrix(size)
            self._maps[size] = cv2.initUndistortRectifyMap(matrix, self.distortion, None, matrix, size, cv2.CV_16SC2)
        return cv2.remap(image, *self._maps[size], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)

    def undistort_points(self, pts: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """Pixels (N x 2) of a frame of ``size`` -> where :meth:`undistort` puts them."""
        matrix = self.scaled_matrix(size)
        pts = np.asarray(pts, np.float64).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-10)
        return cv2.undistortPointsIter(pts, matrix, self.distortion, None, matrix, criteria).reshape(-1, 2)

    def fits(self, size: tuple[int, int]) -> bool:
        """Whether frames of ``size`` come from this calibration (same shape, any resolution)."""
        (w, h), (cw, ch) = size, self.size
        return abs(w / h - cw / ch) <= ASPECT_TOLERANCE * cw / ch

    def scaled_matrix(self, size: tuple[int, int]) -> np.ndarray:
        """K for frames of ``size``; refuses another aspect ratio (another sensor crop)."""
        if not self.fits(size):
            cw, ch = self.size
            w, h = size
            raise CalibrationError("calibration_mismatch", f"the camera was calibrated at {cw}x{ch}, "
                                   f"this frame is {w}x{h} (another shape): calibrate the camera again "
                                   "at this resolution")
        s = size[0] / self.size[0]
        to_new = np.array([[s, 0, 0.5 * s - 0.5], [0, s, 0.5 * s - 0.5], [0, 0, 1]])  # pixel centres kept
        return to_new @ self.matrix

    def to_json(self) -> dict:
        return {"image_size": list(self.size), "matrix": self.matrix.tolist(),
                "distortion": self.distortion.ravel().tolist(), "rms_px": self.rms, "views": self.views}

    @classmethod
    def from_json(cls, data: dict) -> "CameraModel":
        """Raises KeyError / TypeError / ValueError on a malformed part (the store words it)."""
        size = tuple(int(v) for v in data["image_size"])
        matrix = np.array(data["matrix"], np.float64)
        dist = np.array(data["distortion"], np.float64).ravel()
        if len(size) != 2 or min(size) <= 0 or matrix.shape != (3, 3) or len(dist) not in (4, 5, 8):
            raise ValueError("camera: image_size, a 3x3 matrix and 4, 5 or 8 distortion coefficients expected")
        if not (np.isfinite(matrix).all() and np.isfinite(dist).all()) or matrix[0, 0] <= 0 or matrix[1, 1] <= 0:
            raise ValueError("camera: the matrix must be finite with positive focal lengths")
        return cls(size, matrix, dist, float(data.get("rms_px", 0.0)), int(data.get("views", 0)))


@dataclass(frozen=True)
class CameraFit:
    """A solved camera, with what a person needs to judge and improve it."""

    model: CameraModel
    used: int  # views that took part
    rejected: int  # views with too few corners
    view_errors: tuple[float, ...]  # RMS reprojection error per used view, pixels
    coverage: float  # share of the frame where corners were seen
    max_tilt_deg: float  # the most oblique view
    warnings: tuple[str, ...]

    def to_json(self) -> dict:
        return {"camera": self.model.to_json(), "views_used": self.used, "views_rejected": self.rejected,
                "view_errors_px": [round(e, 3) for e in self.view_errors], "coverage": round(self.coverage, 3),
                "max_tilt_deg": round(self.max_tilt_deg, 1), "warnings": list(self.warnings)}


def solve_camera(detections: Sequence[Detection]) -> CameraFit:
    """Intrinsics and distortion from views of the target (``cv2.calibrateCamera``).

    k3 is held at zero: a flat sheet seen a dozen times pins k1 and k2, while k3 trades
    off against them and then extrapolates wildly into the frame's corners where the sheet
    rarely reaches.
    """
    if not detections:
        raise CalibrationError("too_few_views", "no calibration images were given")
    sizes = {d.image_size for d in detections}
    if len(sizes) > 1:
        listed = ", ".join(f"{w}x{h}" for w, h in sorted(sizes))
        raise CalibrationError("calibration_mismatch", f"the images differ in size ({listed}): take every "
                               "calibration shot with the same camera at the same resolution")
    size = sizes.pop()
    usable = [d for d in detections if len(d) >= MIN_CORNERS]
    if len(usable) < MIN_VIEWS:
        raise CalibrationError("too_few_views", f"only {len(usable)} of {len(detections)} images show the "
                               f"calibration target clearly (at least {MIN_CORNERS} of its {corner_count()} "
                               f"corners); at least {MIN_VIEWS} are needed, from different angles. Print it "
                               "with 'tableref calibrate camera --write-board board.pdf' and keep it flat, "
                               "sharp and well lit")
    obj, img = zip(*(d.object_points() for d in usable))
    rms, matrix, dist, rvecs, tvecs = cv2.calibrateCamera(list(obj), list(img), size, None, None,
                                                          flags=cv2.CALIB_FIX_K3)
    dist = dist.ravel()[:5]
    errors = []
    tilts = []
    for o, i, r, t in zip(obj, img, rvecs, tvecs):
        proj = cv2.projectPoints(o, r, t, matrix, dist)[0].reshape(-1, 2)
        errors.append(float(np.sqrt(np.mean(np.sum((proj - i) ** 2, axis=1)))))
        tilts.append(float(np.degrees(np.arccos(min(1.0, abs(cv2.Rodrigues(r)[0][2, 2]))))))
    coverage = _coverage(np.vstack(img), size)
    model = CameraModel(size, matrix, dist, float(rms), len(usable))
    warnings = []
    if rms > GOOD_RMS_PX:
        worst = int(np.argmax(errors))
        warnings.append(f"reprojection error {rms:.2f} px is high (aim below {GOOD_RMS_PX:g}): view "
                        f"{worst + 1} fits worst ({errors[worst]:.2f} px); retake blurred or bent shots")
    if max(tilts) < MIN_TILT_DEG:
        warnings.append(f"every view faces the camera squarely (most oblique {max(tilts):.0f} degrees): "
                        f"add shots tilted by {MIN_TILT_DEG:.0f}-45 degrees, or the focal length is a guess")
    if coverage < GOOD_COVERAGE:
        warnings.append(f"the target was seen over only {coverage:.0%} of the frame: add shots with it "
                        "near the edges and corners, where the lens bends most")
    return CameraFit(model, len(usable), len(detections) - len(usable), tuple(errors), coverage,
                     max(tilts), tuple(warnings))


def _coverage(points: np.ndarray, size: tuple[int, int]) -> float:
    cells = np.floor(points / np.array(size) * COVERAGE_CELLS).astype(int)
    cells = np.clip(cells, 0, COVERAGE_CELLS - 1)
    return len({(int(x), int(y)) for x, y in cells}) / COVERAGE_CELLS ** 2


def is_new_view(candidate: Detection, kept: Sequence[Detection], min_change: float = 0.05) -> bool:
    """Whether a live view adds information: the target moved, turned or changed size enough.

    Compares where each shared corner lies, as a share of the frame diagonal, so a camera
    grabbing 30 frames a second keeps a shot only after the person has moved the sheet.
    """
    if len(candidate) < MIN_CORNERS:
        return False
    diagonal = float(np.hypot(*candidate.image_size))
    for other in kept:
        shared, a, b = np.intersect1d(candidate.ids, other.ids, return_indices=True)
        if len(shared) < MIN_CORNERS // 2:
            continue
        if np.median(np.linalg.norm(candidate.corners[a] - other.corners[b], axis=1)) / diagonal < min_change:
            return False
    return True


def collect_views(frames: Iterable[np.ndarray], shots: int, timeout_s: float,
                  on_view: Callable[[int, Detection], None] | None = None) -> list[Detection]:
    """Keep up to ``shots`` distinct views of the target from a live stream, for ``timeout_s`` at most.

    The person moves the sheet around the frame (and tilts it); each new pose that shows
    enough corners is kept, repeats of the last pose are not.
    """
    kept: list[Detection] = []
    deadline = time.monotonic() + timeout_s
    for frame in frames:
        found = detect(frame)
        if is_new_view(found, kept):
            kept.append(found)
            if on_view is not None:
                on_view(len(kept), found)
        if len(kept) >= shots or time.monotonic() > deadline:
            break
    return kept
