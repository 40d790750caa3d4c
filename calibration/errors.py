"""The one exception of the calibration package.

A calibration is an aid, never a requirement: a reader or the live referee handed a broken,
stale or mismatched calibration file must say why in one line and carry on without it. So
every refusal is a :class:`CalibrationError` with a stable machine code (the command line's
``{"error": {"code", "message"}}``) and a human message, never a bare traceback.
"""
from __future__ import annotations

from rules.errors import InputError

CODES = {
    "calibration_missing": "the calibration file does not exist",
    "calibration_unreadable": "the calibration file could not be read",
    "calibration_corrupt": "the calibration file is damaged",
    "calibration_format": "the file is not a tableref calibration",
    "calibration_version": "the calibration file was written by another version of tableref",
    "calibration_mismatch": "the parts of the calibration do not fit together or this camera",
    "unwritable_file": "a file could not be written",
    "unreadable_image": "an image could not be read",
    "too_few_views": "too few images show the calibration board clearly",
    "no_camera": "the camera sends no frames",
    "bad_corners": "the corner points do not describe the board",
    "colour_missing": "a piece colour was not found on the board",
    "no_token": "no single Geometrius token with a readable polygon shows in the image",
    "bad_token": "the token cannot be added to the catalogue under that id",
    "catalogue_invalid": "the token catalogue file is unreadable or inconsistent",
}


class CalibrationError(InputError):
    """A calibration that cannot be made or used."""

    CODES = CODES
