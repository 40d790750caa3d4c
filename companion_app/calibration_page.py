"""The calibration page: see at a glance that the grid sits on the board, fix it, save it.

The camera's view is refreshed as a JPEG a couple of times a second with the fitted grid
drawn over it: green while the board still shows where the grid says, orange when it does
not (the board moved). When the automatic search fails (a dark table, a board half covered)
four taps on the grid's corners set it by hand. Saving writes the board pose into the
calibration file that the live referee and ``tableref read --calibration`` use. A learned
colour profile can be taken from the same view (one piece of each colour on the board).

Frames come from a hook (the app's latest camera frame) so the page works with any source;
a damaged calibration file is reported on the page and otherwise ignored.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import cv2
import numpy as np
from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from calibration import Calibration, CalibrationError, load_calibration, save_calibration
from calibration.board import BoardLock, lock_board
from calibration.colours import learn_profile, observe, require_classes
from rules.blokus import COLOUR_NAMES, COLOURS
from vision.blokus import verify_pose
from vision.errors import ReadError
from vision.pose import BoardPose

bp = Blueprint("calibration", __name__)
EXTENSION = "tableref.calibration"
JPEG_QUALITY = 80
GRID_OK = (90, 230, 90)  # BGR
GRID_MOVED = (0, 140, 255)


@dataclass(frozen=True)
class CalibrationHooks:
    """What the page needs from the app: the latest camera frame, the file, who to tell on save."""

    latest_frame: Callable[[], np.ndarray | None]  # BGR frame as the camera gives it, or None
    path: Path  # the calibration file (the data folder's calibration.json)
    on_saved: Callable[[Calibration], None] = lambda cal: None


@dataclass
class _Page:
    """Per-app state: the pose being tried (not yet saved) and the loaded file."""

    hooks: CalibrationHooks
    candidate: BoardLock | None = None
    _file: tuple[float, Calibration, str | None] | None = None  # (mtime, calibration, problem)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def calibration(self) -> tuple[Calibration, str | None]:
        """The file's calibration (reloaded when it changes), or an empty one and why."""
        path = self.hooks.path
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return Calibration(), None
        with self._lock:
            if self._file is None or self._file[0] != mtime:
                try:
                    self._file = (mtime, load_calibration(path), None)
                except CalibrationError as e:
                    self._file = (mtime, Calibration(), e.message)
            return self._file[1], self._file[2]

    def frame(self) -> tuple[np.ndarray, Calibration]:
        """The latest frame as the reader sees it (undistorted), and the calibration used."""
        raw = self.hooks.latest_frame()
        if raw is None:
            raise CalibrationError("no_camera", "no camera frame yet: start the referee with a camera "
                                   "('tableref serve --camera 0')")
        cal, _ = self.calibration()
        try:
            return cal.undistort(raw), cal
        except CalibrationError:  # a camera file for another resolution: show the frame as it is
            return raw, Calibration(None, None, cal.colours)

    def shown_pose(self) -> BoardPose | None:
        if self.candidate is not None:
            return self.candidate.pose
        return self.calibration()[0].pose


def install(app: Flask, hooks: CalibrationHooks) -> None:
    """Add the page to the app (``/calibrate``); installing again replaces the hooks."""
    app.extensions[EXTENSION] = _Page(hooks)
    if bp.name not in app.blueprints:
        app.register_blueprint(bp)


def _page() -> _Page:
    return current_app.extensions[EXTENSION]


@bp.errorhandler(CalibrationError)
@bp.errorhandler(ReadError)
def _refused(e: CalibrationError | ReadError) -> Response:
    status = 503 if e.code == "no_camera" else 422
    response = jsonify({"error": {"code": e.code, "message": e.message}})
    response.status_code = status
    return response


@bp.get("/calibrate")
def calibrate_page() -> str:
    page = _page()
    _, problem = page.calibration()
    table = current_app.extensions.get("tableref")
    return render_template("calibrate.html", notice=problem or getattr(table, "notice", None),
                           session=getattr(table, "session", None), status=_status(page))


@bp.get("/calibrate/frame.jpg")
def frame_jpeg() -> Response:
    page = _page()
    frame, _ = page.frame()
    pose = page.shown_pose()
    view = frame.copy()
    if pose is not None:
        draw_grid(view, pose, GRID_OK if verify_pose(frame, pose) else GRID_MOVED)
    ok, data = cv2.imencode(".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise CalibrationError("unreadable_image", "the camera frame could not be encoded")
    return Response(data.tobytes(), mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/calibrate/api/status")
def status() -> Response:
    return jsonify(_status(_page()))


@bp.post("/calibrate/api/locate")
def locate() -> Response:
    page = _page()
    frame, cal = page.frame()
    page.candidate = lock_board(frame, undistorted=cal.camera is not None)
    return jsonify(_status(page))


@bp.post("/calibrate/api/corners")
def corners() -> Response:
    """Four taps, as shares (0-1) of the shown image's width and height."""
    page = _page()
    doc = request.get_json(silent=True)
    taps = doc.get("corners") if isinstance(doc, dict) else None
    try:
        taps = np.array(taps, np.float64).reshape(4, 2)
    except (TypeError, ValueError):
        raise CalibrationError("bad_corners", "send four corners as [[x, y], ...] shares of the image") from None
    frame, cal = page.frame()
    h, w = frame.shape[:2]
    page.candidate = lock_board(frame, taps * [w, h], undistorted=cal.camera is not None)
    return jsonify(_status(page))


@bp.post("/calibrate/api/save")
def save() -> Response:
    page = _page()
    if page.candidate is None:
        raise CalibrationError("bad_corners", "find the board or tap its corners before saving")
    cal, _ = page.calibration()
    if page.candidate.undistorted != (cal.camera is not None):
        page.candidate = None
        raise CalibrationError("calibration_mismatch", "the camera calibration changed meanwhile: find the "
                               "board again")
    cal = Calibration(cal.camera, page.candidate, cal.colours)
    save_calibration(cal, page.hooks.path)
    page.candidate = None
    page.hooks.on_saved(cal)
    return jsonify(_status(page))


@bp.post("/calibrate/api/colours")
def colours() -> Response:
    """Learn the colour profile from the current view (one piece of each colour on the board)."""
    page = _page()
    frame, cal = page.frame()
    pose = page.shown_pose()
    if pose is None or not verify_pose(frame, pose):
        raise CalibrationError("bad_corners", "the grid does not sit on the board: find the board first")
    profile = learn_profile(observe(frame, pose))
    require_classes(profile, COLOURS, COLOUR_NAMES)
    cal = Calibration(cal.camera, cal.board, profile)
    save_calibration(cal, page.hooks.path)
    page.hooks.on_saved(cal)
    return jsonify(_status(page))


def _status(page: _Page) -> dict:
    cal, problem = page.calibration()
    camera = None
    if cal.camera is not None:
        m = cal.camera
        camera = {"size": list(m.size), "focal_px": round(m.focal, 1), "rms_px": round(m.rms, 3), "views": m.views}
    return {"file": str(page.hooks.path), "problem": problem, "camera": camera,
            "board": _pose_json(cal.board), "candidate": _pose_json(page.candidate),
            "colours": None if cal.colours is None else [k for k in cal.colours.labels if k != cal.colours.empty]}


def _pose_json(lock: BoardLock | None) -> dict | None:
    if lock is None:
        return None
    pose = lock.pose
    return {"method": lock.method, "corners": np.round(pose.corners, 1).tolist(),
            "image_size": list(pose.image_size), "view_angle_deg": round(pose.view_angle_deg(), 1),
            "contrast": round(pose.contrast, 3)}


def draw_grid(image: np.ndarray, pose: BoardPose, colour: tuple[int, int, int]) -> None:
    """Draw the pose's cell grid on ``image`` (curved where the pose models lens bend)."""
    w_units, h_units = pose.extent
    thick = max(1, round(image.shape[1] / 800))
    t = np.linspace(0.0, 1.0, 25)
    lines = []
    for x in range(int(round(w_units)) + 1):
        lines.append(np.column_stack([np.full_like(t, x), t * h_units]))
    for y in range(int(round(h_units)) + 1):
        lines.append(np.column_stack([t * w_units, np.full_like(t, y)]))
    photo = [np.round(pose.to_photo(line)).astype(np.int32) for line in lines]
    cv2.polylines(image, photo, False, colour, thick, cv2.LINE_AA)
    cv2.polylines(image, [np.round(pose.corners).astype(np.int32)], True, colour, 3 * thick, cv2.LINE_AA)
    for x, y in pose.corners:
        cv2.circle(image, (int(round(x)), int(round(y))), 6 * thick, colour, -1, cv2.LINE_AA)
