"""The one exception the photo readers raise for bad input.

Callers (the CLI, the live referee, the review page) must be able to tell the user *why* a
photo could not be read, in one line, and map it to the contract's ``{"error": {"code",
"message"}}``. So every refusal is a :class:`ReadError` with a stable machine code and a
human message, never a bare traceback and never a silent guess.
"""
from __future__ import annotations

from rules.errors import InputError

CODES = {
    "unreadable_image": "the file could not be opened or decoded",
    "not_an_image": "the data is not an image format we can decode",
    "image_too_small": "the image is too small to read a board from",
    "image_too_large": "the image has too many pixels to decode safely",
    "no_board": "no board was found in the image",
    "impossible_angle": "the board is seen at too steep an angle to read",
    "unsupported_game": "reading this game's board from photos is not supported yet",
    # the word `check --sgf` and `calibrate` use for an output they cannot write
    "unwritable_file": "a file could not be written (the debug images)",
    "overexposed": "the photo is over-exposed: the board shows as plain white",
    "underexposed": "the photo is too dark to read the board in",
    "no_colour": "the photo is black and white: the pieces' colours cannot be told apart",
    # the words of calibration.CalibrationError, for a board pose handed to a reader (vision.pose.calibrated_pose)
    "calibration_corrupt": "the calibration's board pose is damaged",
    "calibration_mismatch": "the calibration's board pose is another board's",
}


class ReadError(InputError):
    """A photo that cannot be read."""

    CODES = CODES
