"""How much light a photo caught, so that a board not found in a very dark photo is refused
for what the user can change.

Every reader measures contrast against the photo's own light, so a dim photo is read (doubtful
cells marked). In a photo so dark that no reader finds the board, "no board was found" sends
the user looking for a framing fault; the fault is the light. The refusal then says so, under
its own code (as ``overexposed`` does for the opposite fault).
"""
from __future__ import annotations

import cv2
import numpy as np

from .errors import ReadError

DARK = 64  # grey level that the brightest part of a very dark photo stays under (of 255); a dim but
# usable photo's brightest part reaches 80 and more (a white board, a lit piece)
BRIGHT_SHARE = 0.01  # ... its brightest part: the lightest 1 % of it (one lamp or glint is less)
PREVIEW_SIDE = 320  # long side (px) of the copy it is measured on: light is not a fine detail


def brightest(image: np.ndarray) -> float:
    """The grey level the lightest BRIGHT_SHARE of the photo reaches (a grey frame may come as
    one plane or as one channel; a colour one as BGR or BGRA)."""
    gray = image if image.ndim == 2 else image[..., 0] if image.shape[2] == 1 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    s = min(1.0, PREVIEW_SIDE / max(gray.shape))
    small = cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1.0 else gray
    counts = np.cumsum(cv2.calcHist([small], [0], None, [256], [0, 256]).ravel())
    return float(np.searchsorted(counts, (1.0 - BRIGHT_SHARE) * counts[-1]))


def refusal(image: np.ndarray, error: ReadError) -> ReadError:
    """``error`` as the user should see it: a board not found (``no_board``) in a very dark
    photo becomes ``underexposed``, with the reader's own reason kept; so does a very dark
    photo without colour (``no_colour``: a lens cap, a black frame), where light is what lacks."""
    if error.code not in ("no_board", "no_colour") or (level := brightest(image)) >= DARK:
        return error
    return too_dark(level, error.message)


def too_dark(level: float, why: str) -> ReadError:
    """The ``underexposed`` refusal, one wording for every reader: the fault and its remedy
    first (what the user can change), the reader's own finding in brackets after the light
    measured, so that a "no board" finding does not read as the cause."""
    return ReadError("underexposed", f"the photo is too dark to read the board in (its lightest part reaches "
                     f"{level:.0f} of 255; {why}); light the board or let the camera take in more light")
