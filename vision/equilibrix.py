"""Read an Equilibrix board from a photo: fit the Flower-of-Life drawing, read each field, the
ring of tiles round it and where the Origin stands.

Reading goes pose -> fields and ring -> rules -> state:

1. *Pose*: ``vision.equilibrix_pose`` finds the board (its round outlines, the printed circle,
   the drawing matched and aligned, the lens) and labels it upright.
2. *Ring*: ``vision.equilibrix_ring`` reads the tiles round the flower, the Origin, and the
   white tiles' colour, this photo's reference for white plastic.
3. *Fields*: ``vision.equilibrix_fields`` reads each field against the light of the bare wood,
   and says which are uncertain.
4. *Rules*: ``vision.equilibrix_complete`` sets right the best guesses of uncertain fields that
   no legal board could hold (a colour is one network; the ring's empty slots count the tiles
   laid).

A board cut by the photo's edge (players frame tightly): what shows places it, what does not
is not guessed. An outline is judged by the edges along its part in the photo (the rest is
not missing, only unseen); the printed circle's match counts as much of its template as lies
in the photo, and rays that run out of the photo give no point to the ellipses fitted along
the edge and the circle (``rectify`` smears the photo's last pixels beyond it, into streaks
a template or a step search would take for lines); a piece of the drawing mostly beyond the
edge is not matched, so it cannot vouch for a pose. The pose is trusted as before: by the
share of all the drawing's pieces that agree with it, so a cut board needs as many agreeing
pieces as a whole one. Fields whose middle the photo does not show whole (or shows within
EDGE_INSET pixels of its edge) are unseen: uncertain, best guess empty, and left out of the
light field and of every figure the photo's classes are judged by; ring slots partly beyond
the edge are doubtful and read empty. When no board is placed and a well-covered round
outline runs out of the photo, the refusal says so.

This module puts the steps together and holds the public reading API: ``read_equilibrix`` (a
photo), ``locate``/``locate_board``, ``verify_pose`` and ``read_with_pose`` (live, at a kept
pose), ``line_contrast``, the reading dataclass and ``debug_images``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Mapping

import cv2
import numpy as np

from . import flowergrid as fg
from .equilibrix_complete import complete
from .equilibrix_fields import EMPTY, LABELS, PPU, fit_light, read_fields, wood_samples
from .equilibrix_drawing import raster
from .equilibrix_pose import POSE_TRUST, locate
from .equilibrix_ring import read_ring
from .errors import ReadError
from .image_io import as_bgr
from .matching import gradient_at
from .pose import BoardPose, calibrated_pose, in_photo, rectify
from .reading import UNCERTAIN_BELOW

COLOUR_WORDS = {"B": "black", "W": "white"}
EDGE_INSET = 2.0  # photo pixels: a field's middle within this of the photo's edge (or beyond) is not seen
VERIFY_SHARE = 0.6  # a frame whose drawing shows less than this share of the located one's: moved
VERIFY_FLOOR = 1.2  # line contrast below which no drawing is where the pose says
VERIFY_DEFAULT = 2.0  # the reference for a pose that carries none


@dataclass
class EquilibrixReading:
    """One photo read. ``fields`` holds the best label of each occupied field (contract ids);
    ``uncertain`` lists fields whose label is a guess, which callers must not take as read.
    ``ring`` has one entry per slot clockwise from slot 0: {"shape", "side", "confidence"} or
    None for an empty slot; ``origin`` is the slot the Origin stands before (None: not seen)."""

    fields: dict[str, str]
    confidence: dict[str, float]  # every field
    uncertain: list[str]
    ring: list[dict | None]
    origin: int | None
    timing_ms: float
    pose: BoardPose
    rectified: np.ndarray
    ring_uncertain: list[int] = field(default_factory=list)

    @property
    def overall_confidence(self) -> float:
        return float(np.mean(list(self.confidence.values())))

    def text(self) -> str:
        """Occupied fields by colour, uncertain fields, the ring and the Origin, in words."""
        doc = self.to_state_json()
        lines = [f"{COLOUR_WORDS[c]}: {' | '.join(sorted(k for k, v in self.fields.items() if v == c)) or '-'}"
                 for c in ("B", "W")]
        lines.append(f"uncertain: {' | '.join(sorted(self.uncertain)) or '-'}")
        ring = " ".join(f"{t['shape']}/{t['side']}" if t else "-" for t in self.ring)
        lines.append(f"ring (clockwise from the top): {ring}; Origin before slot {self.origin}")
        lines.append(f"confidence {doc['confidence']:.3f}, {len(self.uncertain)} uncertain field(s), "
                     f"{doc['timing_ms']:.0f} ms")
        return "\n".join(lines)

    def to_state_json(self) -> dict:
        return {
            "state": {"game": "equilibrix", "fields": dict(sorted(self.fields.items())),
                      "ring": [t["shape"] if t else None for t in self.ring], "origin": self.origin},
            "confidence": round(self.overall_confidence, 4),
            "uncertain": sorted(self.uncertain),
            "timing_ms": round(self.timing_ms, 1),
            "field_confidence": {k: round(v, 3) for k, v in self.confidence.items()},
            "ring_detail": [dict(t, confidence=round(t["confidence"], 3)) if t else None for t in self.ring],
            "ring_uncertain": list(self.ring_uncertain),
            "corners": np.round(self.pose.corners, 2).tolist(),
        }


# --- the public calls ----------------------------------------------------------------------

def locate_board(frame: np.ndarray, reference: BoardPose | None = None) -> BoardPose:
    """The board's pose in a frame (upright BGR); ReadError("no_board") when there is none.
    The pose carries, in ``contrast``, how strongly the drawing shows at it. ``reference``: the
    pose this camera had before (a bump, a restart): near a tie of the top side its labelling
    is kept (:func:`vision.equilibrix_pose._upright`)."""
    frame = as_bgr(frame)
    pose = locate(frame, reference)
    return replace(pose, contrast=line_contrast(frame, pose))


@lru_cache(maxsize=1)
def _line_samples() -> tuple[np.ndarray, np.ndarray]:
    """Board points on drawn lines, and in the fields' middles (off every line)."""
    _, line, _, radius = raster(PPU)
    on = np.argwhere((line < 0.01) & (radius < fg.OUTER_LINE + 0.05))[::7]
    return on[:, ::-1] / PPU, fg.centroids()


def line_contrast(image: np.ndarray, pose: BoardPose) -> float:
    """How much stronger the brightness gradient is on the drawing's lines, where ``pose``
    puts them, than in the fields' middles (about 1 where the drawing is not)."""
    on, off = _line_samples()
    g_on, in_on = gradient_at(image, pose.to_photo(on))
    g_off, in_off = gradient_at(image, pose.to_photo(off))
    if in_on.mean() < 0.25:
        return 0.0
    return float(np.median(g_on[in_on]) / max(np.median(g_off[in_off]), 1e-3))


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Is the board still where ``pose`` says? Cheap: a few thousand pixels on and off the drawing."""
    frame = as_bgr(frame)
    pose = pose.for_frame(frame)
    reference = pose.contrast or VERIFY_DEFAULT
    return line_contrast(frame, pose) >= max(VERIFY_FLOOR, VERIFY_SHARE * reference)


def read_with_pose(frame: np.ndarray, pose: BoardPose) -> EquilibrixReading:
    """Read every field and the ring at a known pose (no localisation)."""
    start = time.perf_counter()
    frame = as_bgr(frame)
    return _read(frame, pose.for_frame(frame), start)


def read_equilibrix(image: np.ndarray, calibration: BoardPose | Mapping | None = None, **_) -> EquilibrixReading:
    """Photo (upright BGR) -> Equilibrix reading. ``calibration`` may hold a known board pose
    (a BoardPose or its JSON, alone or under "pose") for a fixed camera; a damaged one or
    another board's is refused (:func:`vision.pose.calibrated_pose`)."""
    start = time.perf_counter()
    image = as_bgr(image)
    pose = calibrated_pose(calibration, image, fg.EXTENT, "Equilibrix")
    return _read(image, locate(image) if pose is None else pose, start)


def _read(image: np.ndarray, pose: BoardPose, start: float) -> EquilibrixReading:
    rect = rectify(image, pose, PPU)
    # A board cut by the photo's edge: what lies beyond (or at) the edge is not read, and the
    # fields there are reported unseen (uncertain, best guess empty).
    shown = in_photo(pose, PPU, rect.shape[:2], inset=EDGE_INSET).ravel()
    wood = wood_samples(rect, shown)
    if len(wood[0]) < 12:
        raise ReadError("no_board", "the board's bare wood could not be seen")
    ring, ring_doubt, origin, white, white_rough = read_ring(rect, fit_light(*wood[:2]), shown)
    label, conf, coef = read_fields(rect, wood, white, shown, white_rough)
    if pose.quality < POSE_TRUST:  # the drawing did not confirm where the fields are
        conf = np.minimum(conf, 0.3)
    label = complete(label, conf < UNCERTAIN_BELOW, sum(tile is None for tile in ring))
    names = fg.names()
    return EquilibrixReading(
        fields={names[i]: LABELS[j] for i, j in enumerate(label) if j != 0},
        confidence={names[i]: float(conf[i]) for i in range(len(names))},
        uncertain=[names[i] for i in np.flatnonzero(conf < UNCERTAIN_BELOW)],
        ring=ring, origin=origin, timing_ms=(time.perf_counter() - start) * 1000.0, pose=pose, rectified=rect,
        ring_uncertain=ring_doubt)


DRAW_BGR = {"B": (40, 40, 40), "W": (250, 250, 250), EMPTY: (0, 200, 0)}


def debug_images(reading: EquilibrixReading, scale: int = 2) -> dict[str, np.ndarray]:
    """"rectified" (the top-down view read) and "overlay" (labels; uncertain in magenta)."""
    img = cv2.resize(reading.rectified, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    overlay = (0.65 * img).astype(np.uint8)
    doubt = set(reading.uncertain)
    for name, (x, y) in zip(fg.names(), fg.centroids() * PPU * scale):
        label = reading.fields.get(name, EMPTY)
        centre = (int(round(x)), int(round(y)))
        cv2.circle(overlay, centre, max(2, int(0.08 * PPU * scale)), DRAW_BGR[label], -1, cv2.LINE_AA)
        if name in doubt:
            cv2.circle(overlay, centre, max(4, int(0.14 * PPU * scale)), (255, 0, 255), 2, cv2.LINE_AA)
    for j, (x, y) in enumerate(fg.slot_centres() * PPU * scale):
        tile = reading.ring[j]
        text = f"{j}:{tile['shape']}/{tile['side']}" if tile else f"{j}:-"
        cv2.putText(overlay, text, (int(x) - 30, int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 255, 255), 1, cv2.LINE_AA)
    if reading.origin is not None:
        a = fg.origin_angle(reading.origin)
        centre = (fg.DISC + fg.RING_RADIUS * np.array([math.cos(a), math.sin(a)])) * PPU * scale
        cv2.drawMarker(overlay, tuple(int(v) for v in centre), (0, 0, 255), cv2.MARKER_TRIANGLE_UP, 20, 2)
    return {"rectified": reading.rectified.copy(), "overlay": overlay}
