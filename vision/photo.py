"""A photo in, a board state or a score sheet out: what `tableref read` and `score IMAGE` do.

Kept apart from the readers so the command line and the review page share one path:
load (EXIF-upright, validated) → read → optional debug images → decompose and score.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

import cv2
import numpy as np

from rules.records import GAME_RULES, InvalidInput, setup_of
from rules.scoring import ScoreSheet

from .errors import ReadError
from .exposure import refusal
from .image_io import load_photo, require_colour


READERS = {
    "blokus": ("vision.blokus", "read_blokus"),
    "gemblo": ("vision.gemblo", "read_gemblo"),
    "equilibrix": ("vision.equilibrix", "read_equilibrix"),
    "geometrius": ("vision.geometrius", "read_geometrius"),
}
# The fewest pixels on a photo's short side each game's reader is decoded for
# (:func:`vision.image_io.load_photo`): the Blokus reader's accuracy is measured at 1600x1200, so
# a JPEG twice that size (a phone's 12 MP) is decoded at half size, not below what was measured;
# on 60 photos of 12 MP (seeds 400-402), no cell was read silently wrong either way. A game
# absent is decoded whole: Gemblo's readings of 12 MP photos at half size changed in 36 of 40 and
# gained silent errors; Equilibrix's gained doubts on fresh photos (blurred 1 -> 32 fields,
# noisy 8 -> 26) for a read already inside its goal (session 22); Geometrius reads its tokens'
# polygon angles from fine edges, untried at a reduced decode.
DECODE_SHORT_SIDE = {"blokus": 1200}


def _reader(game: str):
    """The game's photo reader and its debug images (imported when first needed)."""
    if game not in READERS:
        raise ReadError("unsupported_game", f"reading {game} boards from photos is not supported yet")
    module_name, function = READERS[game]
    module = importlib.import_module(module_name)
    return getattr(module, function), module.debug_images


def read_photo(source: str | Path | bytes, game: str, debug_dir: str | None = None,
               calibration: str | None = None):
    """Read a photo into a board reading; write the debug PNGs when asked."""
    read, debug = _reader(game)
    reading = _read(read, source, calibration, game)
    if debug_dir:
        write_debug(debug(reading), debug_dir)
    return reading


def _read(read, source: str | Path | bytes, calibration: str | None, game: str):
    """Load (a black-and-white photo is refused: :func:`vision.image_io.require_colour`),
    undistort with the calibration, read; a board not found in a very dark photo is refused as
    such (:func:`vision.exposure.refusal`).

    A calibration file named on the command line that cannot be used is refused with its
    :class:`calibration.CalibrationError` (exit 1, as the contract has it for invalid input):
    the user asked for it, so reading without it would pass an uncalibrated reading off as a
    calibrated one. (The live referee, whose calibration is the table's own, carries on.)

    A JPEG larger than the reader needs is decoded reduced (:data:`DECODE_SHORT_SIDE`); the
    reading's pose is then scaled back, so its corners are the file's pixels whatever the decode.

    A calibration with a colour profile hands it to the reader as the colours' prior. The board
    lock and the profile are a Blokus board's (``calibration.CALIBRATED_GAME``): another game's photo is
    undistorted by the calibration's lens and read without them (its board lies elsewhere; a
    Blokus lock handed to the Equilibrix reader is refused there as another board's). A
    calibration with no lens holds nothing for another game's photo, and is refused as well.
    """
    (image, reduction), pose, extra = load_photo(source, DECODE_SHORT_SIDE.get(game)), None, {}
    try:
        require_colour(image)
    except ReadError as e:
        raise refusal(image, e) from None
    if calibration is not None:
        from calibration import CALIBRATED_GAME, CalibrationError, load_calibration

        cal = load_calibration(calibration)
        if game != CALIBRATED_GAME and cal.camera is None:
            raise CalibrationError("calibration_mismatch", f"the calibration holds nothing for a {game} photo: "
                                   f"no camera lens (a board lock and colours serve {CALIBRATED_GAME.capitalize()} only)")
        image = cal.undistort(image)
        if game == CALIBRATED_GAME:
            pose = cal.pose
            if cal.colours is not None:
                extra["profile"] = cal.colours
    try:
        reading = read(image, calibration=pose, **extra)
    except ReadError as e:
        raise refusal(image, e) from None
    return reading if reduction == 1 else replace(reading, pose=reading.pose.scaled(reduction))


def write_debug(images: Mapping[str, np.ndarray], folder: str) -> None:
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, image in images.items():
            if not cv2.imwrite(str(out / f"{name}.png"), image):
                raise OSError(f"could not write {name}.png")
    except OSError as e:
        raise ReadError("unwritable_file", f"cannot write debug images to {folder}: {e}") from None


@dataclass(frozen=True)
class PhotoScore:
    reading: object  # the game's board reading
    sheet: ScoreSheet
    debug_images: Mapping[str, np.ndarray]

    def to_json(self) -> dict:
        doc = self.sheet.to_json()
        doc["reading"] = self.reading.to_state_json()
        return doc


def score_photo(source: str | Path | bytes, game: str, variant: str | None = None,
                last_piece: Mapping[str, str] | None = None, debug_dir: str | None = None,
                calibration: str | None = None) -> PhotoScore:
    """Read a photo of a finished board and score it.

    Cells the reader could not read with confidence are scored as read but named in
    ``undecided``, since the remaining pieces (and so the score) may change with them. A board
    the variant cannot hold (a colour not in play) is refused as ``bad_state``, as a state
    file scored with that variant is.
    """
    setup = setup_of(game, {}, variant)  # a bad variant is refused before the photo is read
    read, debug = _reader(game)
    reading = _read(read, source, calibration, game)
    images = debug(reading)
    if debug_dir:
        write_debug(images, debug_dir)
    try:
        sheet = GAME_RULES[game].score_state(reading.to_state_json()["state"], setup, last_piece)
    except ValueError as e:  # the board read does not fit the variant asked for (a colour not in play)
        raise InvalidInput("bad_state", f"the photo does not fit {game} {setup.variant}: {e}") from None
    sheet = sheet.with_unread(list(reading.uncertain), "on the overlay")
    return PhotoScore(reading, sheet, images)
