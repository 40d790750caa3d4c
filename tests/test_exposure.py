"""The light a photo caught, and the refusal that names it (vision/exposure.py)."""
import cv2
import numpy as np
import pytest

from vision.errors import ReadError
from vision.exposure import DARK, brightest, refusal


@pytest.fixture
def dim_photo() -> np.ndarray:
    """A dark room: a board-sized patch at ~30 grey levels on a ~10-level table."""
    image = np.full((480, 640, 3), 10, np.uint8)
    image[100:380, 150:490] = (28, 31, 34)
    return image


def test_a_grey_frame_in_any_layout_measures_as_its_colour_copy(dim_photo):
    gray = cv2.cvtColor(dim_photo, cv2.COLOR_BGR2GRAY)
    bgra = cv2.cvtColor(dim_photo, cv2.COLOR_BGR2BGRA)
    levels = {brightest(dim_photo), brightest(gray), brightest(gray[..., None]), brightest(bgra)}
    assert len(levels) == 1 and levels.pop() < DARK


def test_a_board_missed_in_a_dark_photo_is_refused_for_the_light_keeping_the_reader_s_reason(dim_photo):
    refused = refusal(dim_photo, ReadError("no_board", "no Blokus board outline was found"))
    assert refused.code == "underexposed"
    assert refused.message.startswith("the photo is too dark to read the board in")
    assert "no Blokus board outline was found" in refused.message
    assert refused.message.endswith("light the board or let the camera take in more light")


def test_a_lit_photo_or_another_fault_keeps_the_reader_s_refusal(dim_photo):
    missed = ReadError("no_board", "no Blokus board outline was found")
    assert refusal(np.clip(dim_photo.astype(int) * 5, 0, 255).astype(np.uint8), missed) is missed
    steep = ReadError("impossible_angle", "the board is seen too edge-on")
    assert refusal(dim_photo, steep) is steep
