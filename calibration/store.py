"""The calibration file: one versioned JSON document with any of camera, board and colours.

``{"format": "tableref-calibration", "version": 1, "camera": {...}, "board": {...},
"colours": {...}}``; every part is optional, so a phone user may keep only a colour profile
and a webcam user all three. Loading checks the parts against each other (a board pose
taken on undistorted frames needs the camera that undistorted them, at the same size), so a
stale or hand-edited file is refused with a :class:`CalibrationError` rather than silently
misplacing the grid. Callers report that one line and go on without calibration.

Saving writes a temporary file and renames it over the old one: a crash mid-write leaves the
previous calibration, never half of one.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rules.errors import parse_json
from vision.pose import BoardPose

from .board import BoardLock
from .camera import CameraModel
from .colours import ColourProfile
from .errors import CalibrationError

FORMAT = "tableref-calibration"
VERSION = 1
FILENAME = "calibration.json"
# The game whose board a calibration locks and whose colours it profiles: ``board`` locks a 20 x 20
# square grid and ``colours`` profiles Blokus's four colours. Another game takes only the lens.
CALIBRATED_GAME = "blokus"


@dataclass(frozen=True)
class Calibration:
    """What is known about this table's camera, board pose and colours (each may be None)."""

    camera: CameraModel | None = None
    board: BoardLock | None = None
    colours: ColourProfile | None = None

    def undistort(self, image: np.ndarray) -> np.ndarray:
        """The frame as the readers should see it: lens distortion removed when the camera is known.

        Raises CalibrationError (calibration_mismatch) for a frame of another shape than
        the camera was calibrated at.
        """
        return image if self.camera is None else self.camera.undistort(image)

    @property
    def pose(self) -> BoardPose | None:
        """The locked board pose (``vision.pose.BoardPose``) for frames after :meth:`undistort`, or None."""
        return None if self.board is None else self.board.pose

    def to_json(self) -> dict:
        doc: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        for name in ("camera", "board", "colours"):
            part = getattr(self, name)
            if part is not None:
                doc[name] = part.to_json()
        return doc

    @classmethod
    def from_json(cls, doc: Any, source: str = "the calibration") -> "Calibration":
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise CalibrationError("calibration_format", f"{source} is not a tableref calibration file "
                                   f"(no \"format\": \"{FORMAT}\")")
        version = doc.get("version")
        if version != VERSION:
            raise CalibrationError("calibration_version", f"{source} has version {version!r}; this tableref "
                                   f"reads version {VERSION}: run 'tableref calibrate' again")
        parts = {}
        for name, kind in (("camera", CameraModel), ("board", BoardLock), ("colours", ColourProfile)):
            if doc.get(name) is None:
                continue
            try:
                parts[name] = kind.from_json(doc[name])
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                detail = f"missing {e}" if isinstance(e, KeyError) else str(e)
                raise CalibrationError("calibration_corrupt", f"{source}: its {name} part is damaged "
                                       f"({detail}); run 'tableref calibrate {name}' again") from None
        cal = cls(**parts)
        cal.check(source)
        return cal

    def check(self, source: str = "the calibration") -> None:
        """Refuse parts that do not fit together (CalibrationError calibration_mismatch)."""
        if self.board is None:
            return
        pose_size = tuple(self.board.pose.image_size)
        if self.board.undistorted and self.camera is None:
            raise CalibrationError("calibration_mismatch", f"{source}: the board pose was taken on undistorted "
                                   "frames but the camera part is missing; run 'tableref calibrate board' again")
        if not self.board.undistorted and self.camera is not None:
            raise CalibrationError("calibration_mismatch", f"{source}: the board pose was taken before the camera "
                                   "was calibrated; run 'tableref calibrate board' again")
        if self.camera is not None and not self.camera.fits(pose_size):
            raise CalibrationError("calibration_mismatch", f"{source}: the board pose is for "
                                   f"{pose_size[0]}x{pose_size[1]} frames, the camera gives "
                                   f"{self.camera.size[0]}x{self.camera.size[1]}; run 'tableref calibrate board' "
                                   "again")


def default_path() -> Path:
    """Where a calibration lives when no file is named: the user's data folder."""
    from companion_app.store import default_data_dir

    return default_data_dir() / FILENAME


def load_calibration(path: str | os.PathLike) -> Calibration:
    """Read and check a calibration file; raises CalibrationError (one line) for any problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError("calibration_missing", f"no calibration file at {path}: make one with "
                               "'tableref calibrate camera|board|colours'") from None
    except OSError as e:
        raise CalibrationError("calibration_unreadable", f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CalibrationError("calibration_corrupt", f"{path} is not a text JSON file") from None
    try:
        doc = parse_json(text, str(path))
    except ValueError as e:
        raise CalibrationError("calibration_corrupt", str(e)) from None
    return Calibration.from_json(doc, str(path))


def save_calibration(cal: Calibration, path: str | os.PathLike) -> None:
    """Write atomically (temporary file, then rename); creates the folder."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(cal.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CalibrationError("unwritable_file", f"cannot write {path}: {e.strerror or e}") from None
