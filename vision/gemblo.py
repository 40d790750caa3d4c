"""Read a Gemblo board from a photo: fit the hex lattice, read each cell, ask the rules.

Geometry lives in `vision.hexpose`, colour in `vision.colour` (shared with Blokus). The reader's
parts: :mod:`vision.gemblo_walls` says which cells show their walls (the others lie under a hand,
a cup or a glare), :mod:`vision.gemblo_clear` what the photo says of each cell (a colour, and among
the cells read empty a clear piece or the bare board, weighed with the photo's own clusters of
clear scores, :mod:`vision.gemblo_clusters`), :mod:`vision.gemblo_prior` what the rules say of the
cells left in doubt, and :mod:`vision.gemblo_complete` the best guesses under an occluder. This
module puts them together: it decides each cell's label and how sure it is, and what the photo
leaves a guess.

Over-exposure (a phone metering on a dark table clips the light board at white): a clipped
channel says only "at least this bright". Cells whose light clipped do not set what a plain
empty cell looks like (unless they are most of the bare board: the few a lamp spares are then
mostly clear pieces), and a cell read empty or clear there is uncertain (the glints and sheen
that tell them apart are cut off). A photo whose board is plain white in all three channels, or
whose lattice cannot be seen in a photo largely white, is refused as over-exposed.

A colour read on more cells than its 18 pieces hold is not that colour alone: the colour
classifier took the bare board for it (a warm lamp reddening the board), and its empty class
then holds some colour's pieces. Every cell read empty, clear or that colour is then a guess.

Under-exposure: a clear piece shows only as a few per cent more light than an empty cell. Where
the board is so dim that this spans about a grey level, rounding hides it, so a cell that looks
empty there is uncertain (best guess kept), never surely empty.

A phone's sepia or duotone filter leaves the pieces only the light they take away: where no cell
shows a colour of its own, cells are doubted by their light instead (:mod:`vision.one_hue`, as for
Blokus), and every cell once the light shows pieces whose colours the photo does not.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Mapping

import cv2
import numpy as np

from rules.gemblo import pieces

from .errors import ReadError
from .gemblo_cells import CLEAR_PPU, EMPTY, LABELS, PPU, clear_odds, gather, offsets
from .gemblo_clear import (WHITE, beyond_the_score, cell_pixels, grey_and_lab, in_a_reflection, lean_guesses,
                           middle_level, probabilities, shadow_lights, too_dark_for_clear, weigh_likeness,
                           white_shares)
from .gemblo_complete import complete_hidden, hex_ground
from .gemblo_prior import apply_rules, bare_beside_bad, clear_pieces, clear_start, clear_tree
from .gemblo_walls import WALLS_HIDDEN, lent_by_occluder, walls_seen
from .hexgrid import EXTENT, cells, centres, key
from .hexpose import locate, ridge_contrast
from .image_io import as_bgr
from .one_hue import light_only_doubts
from .pose import BoardPose, calibrated_pose, check_angle, rectify
from .reading import UNCERTAIN_BELOW

DRAW_BGR = {".": (210, 210, 210), "C": (255, 255, 255), "R": (70, 70, 255), "Y": (0, 235, 255),
            "G": (90, 230, 90), "B": (255, 140, 40), "P": (200, 60, 160)}
TREE_MIN_ODDS = 1.0  # how plainly (log-odds) a cell the tree cannot reach must already look empty
OVEREXPOSED = 0.3  # share of the seen cells white in all three channels: the board's own colour is lost
# The clear evidence (glints, sheen, the board's hue fading) is cut off in a cell read empty when
# this share of its pixels is white in all three channels, or this share in two of them.
GLINT_LOST, SHEEN_LOST = 0.06, 0.5
WHITE_PHOTO = 0.1  # share of a photo plain white: enough to be the washed-out board
VERIFY_SHARE = 0.6  # a frame whose ridges show less than this share of the located frame's: moved
VERIFY_FLOOR = 1.3  # ridge contrast (ridge over off-ridge gradient) below which no lattice is where the pose says
VERIFY_DEFAULT = 3.0  # the reference for a pose that carries none (located elsewhere)


@dataclass
class GembloReading:
    """One photo read. ``cells`` holds the best label of each occupied cell; ``uncertain``
    lists cells ("q,r") whose label is a guess, which callers must not take as read."""

    cells: dict[str, str]
    confidence: dict[str, float]  # every board cell
    uncertain: list[str]
    timing_ms: float
    pose: BoardPose
    rectified: np.ndarray
    flags: list[str] = field(default_factory=list)  # rule conflicts left, in words
    changed_by_rules: list[str] = field(default_factory=list)

    @property
    def overall_confidence(self) -> float:
        conf = float(np.mean(list(self.confidence.values())))
        return conf * (0.5 if self.flags else 1.0)

    def text(self) -> str:
        """The board as read, one text line per screen row (q + 2r), the flat-topped columns
        staggered as on the board: '.' empty, a colour letter, '?' uncertain."""
        doubt = set(self.uncertain)
        lines = []
        for y in range(-21, 22):
            row = [" "] * 29
            for q in range(-14, 15):
                if (q + y) % 2 == 0 and (q, (y - q) // 2) in hex_ground().index:
                    name = key((q, (y - q) // 2))
                    row[q + 14] = "?" if name in doubt else self.cells.get(name, EMPTY)
            lines.append("".join(row).rstrip())
        doc = self.to_state_json()
        lines.append(f"confidence {doc['confidence']:.3f}, {len(self.uncertain)} uncertain cell(s), "
                     f"{doc['timing_ms']:.0f} ms")
        return "\n".join(lines)

    def to_state_json(self) -> dict:
        return {
            "state": {"game": "gemblo", "cells": dict(sorted(self.cells.items()))},
            "confidence": round(self.overall_confidence, 4),
            "uncertain": sorted(self.uncertain),
            "timing_ms": round(self.timing_ms, 1),
            "cell_confidence": {k: round(v, 3) for k, v in self.confidence.items()},
            "flags": list(self.flags),
            "changed_by_rules": list(self.changed_by_rules),
            "corners": np.round(self.pose.corners, 2).tolist(),
        }


def _in_photo(pose: BoardPose) -> np.ndarray:
    """Whether each cell's middle lies inside the photo (cells beyond were never seen)."""
    pts = pose.to_photo(centres())
    w, h = pose.image_size
    return (pts[:, 0] >= 0) & (pts[:, 0] <= w - 1) & (pts[:, 1] >= 0) & (pts[:, 1] <= h - 1)


def locate_board(frame: np.ndarray) -> BoardPose:
    """The board's pose in a frame (upright BGR); ReadError("no_board") when there is none,
    ("impossible_angle") when it is seen beyond :data:`vision.pose.MAX_VIEW_ANGLE_DEG`, as a
    Blokus board is: seen at 70 degrees a board was read with 294 cells silently wrong.

    The pose carries, in ``contrast``, how strongly the lattice's ridges show at it: later
    frames are checked against it by :func:`verify_pose`."""
    frame = as_bgr(frame)
    pose = locate(frame)
    check_angle(pose)
    return replace(pose, contrast=ridge_contrast(frame, pose))


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Is the board still where ``pose`` says? Cheap: a few thousand pixels sampled across the
    lattice's ridges (no rectification, no filtering of the frame)."""
    pose = pose.for_frame(frame)
    score = ridge_contrast(as_bgr(frame), pose)
    reference = pose.contrast or VERIFY_DEFAULT
    return score >= max(VERIFY_FLOOR, VERIFY_SHARE * reference)


def read_with_pose(frame: np.ndarray, pose: BoardPose, *, rules: bool = True) -> GembloReading:
    """Read every cell at a known pose (no localisation). ``rules``: apply the rules prior
    (one colour's region is one piece; what cannot be explained is reported uncertain), as
    :func:`read_gemblo` does; it is budgeted to :data:`vision.gemblo_prior.RULES_TRIALS`."""
    start = time.perf_counter()
    frame = as_bgr(frame)
    return _read(frame, pose.for_frame(frame), start, rules, photo=False)


def read_gemblo(image: np.ndarray, calibration: BoardPose | Mapping | None = None) -> GembloReading:
    """Photo (upright BGR) -> Gemblo reading. ``calibration`` may hold a known board pose
    (a BoardPose or its JSON, alone or under "pose") for a fixed camera; a damaged one or
    another board's is refused (:func:`vision.pose.calibrated_pose`)."""
    start = time.perf_counter()
    image = as_bgr(image)
    pose = calibrated_pose(calibration, image, EXTENT, "Gemblo")
    if pose is None:
        try:
            pose = locate_board(image)
        except ReadError as e:
            _refuse_washed_out(image, e.code == "no_board")
            raise
        _refuse_washed_out(image, pose.contrast < VERIFY_FLOOR)
    return _read(image, pose, start, rules=True, photo=True)


def _refuse_washed_out(image: np.ndarray, lattice_unseen: bool) -> None:
    """ReadError("overexposed") when no lattice shows (none found, or its ridges do not show
    where it was traced: on the table, the pieces' bevels) in a photo largely clipped to white:
    the light board itself washed out. Saying so tells the player what to fix."""
    if not lattice_unseen:
        return
    white = float((image >= WHITE).all(axis=-1).mean())
    if white >= WHITE_PHOTO:
        raise ReadError("overexposed", f"the photo is over-exposed: {white:.0%} of it is plain white and the "
                        "board's cells do not show; expose for the board")


def _read(image: np.ndarray, pose: BoardPose, start: float, rules: bool, photo: bool) -> GembloReading:
    top = rectify(image, pose, CLEAR_PPU, 0.0)
    # the colour view from the finer one (a second pass over a 12 MP photo costs more)
    rect = cv2.resize(top, (int(round(EXTENT[0] * PPU)), int(round(EXTENT[1] * PPU))), interpolation=cv2.INTER_AREA)
    labels, conf, changed, flags = _decide(top, rect, _in_photo(pose), rules, photo)
    names = [key(c) for c in cells()]
    return GembloReading(
        cells={names[i]: lab for i, lab in enumerate(labels) if lab != EMPTY},
        confidence={names[i]: float(conf[i]) for i in range(len(names))},
        uncertain=[names[i] for i in np.flatnonzero(conf < UNCERTAIN_BELOW)],
        timing_ms=(time.perf_counter() - start) * 1000.0, pose=pose, rectified=rect, flags=flags,
        changed_by_rules=[names[i] for i in changed])


def _decide(top: np.ndarray, rect: np.ndarray, in_photo: np.ndarray, rules: bool,
            photo: bool) -> tuple[list[str], np.ndarray, list[int], list[str]]:
    """Labels, confidences, cells the rules relabelled and flags from the top-down views.
    ``photo``: the view is a phone's photo, which may carry a one-hue filter (:func:`_light_only`);
    a webcam's frame carries none, and early in a game the clear pieces, which show only as
    light, would have the doubt hold live moves back."""
    white, two_white, white_middle = white_shares(top)
    if in_photo.any() and white_middle[in_photo].mean() >= OVEREXPOSED:
        raise ReadError("overexposed", f"the photo is over-exposed: {white_middle[in_photo].mean():.0%} of the "
                        "board's cells are plain white, so its colours cannot be told; expose for the board")
    clipped = (white >= GLINT_LOST) | (two_white >= SHEEN_LOST)
    # A cell whose walls do not show lies under something that is not a piece (a hand, a cup,
    # a blinding glare): what shows there is not the cell.
    gray, lab = grey_and_lab(top)
    walls = walls_seen(gray)
    hidden = walls < WALLS_HIDDEN
    post, conf, clear_only, faded, odd, guessed = probabilities(rect, gray, lab, ~hidden & in_photo, clipped)
    conf = np.where(in_photo, conf, 0.0)
    conf = np.where(hidden, np.minimum(conf, UNCERTAIN_BELOW - 0.01), conf)
    ok = clear_only & in_photo & ~hidden
    labels = [LABELS[j] for j in np.argmax(post, 1)]
    lent = lent_by_occluder(walls, labels)
    # a cast shadow's two lights, told by the bare cells' light as the clear score's were
    level = middle_level(gray)
    lights = shadow_lights(np.log(level + 1), ok & ~clipped & np.isin(labels, (EMPTY, "C")))
    conf, lean = weigh_likeness(cell_pixels(gray, lab), post, conf, labels, ok, ~clipped, lights)
    # odd cells that look clear: their score's 'empty' dropped, weighed as the faded ones
    faded = faded | beyond_the_score(post, odd & ok, lean)
    changed: list[int] = []
    flags: list[str] = []
    start = None
    completing = np.zeros(len(labels), bool)
    if rules:
        # Clear's start corner: clear is its best guess, after the regions and pieces are
        # weighed, and it stays in doubt. Deciding it (and completing its piece from it) gained
        # no board on the bench, and the photo only suggests a six-colour game, never proves one.
        start = clear_start(labels, conf, in_photo & ~hidden, ok)
        labels, more, flags = apply_rules(labels, post, conf, ok, hidden | ~in_photo)
        changed += more
        completing = bare_beside_bad(labels, conf, ok)
    relabelled = np.zeros(len(labels), bool)
    relabelled[changed] = True
    lean_guesses(labels, post, lean, ok & (conf < UNCERTAIN_BELOW) & ~relabelled)
    if rules:
        # the found cluster's odds are best guesses: they decide no cell by the pieces or the tree
        changed += clear_pieces(labels, conf, post, ok, lean, faded | guessed, hidden | ~in_photo)
        changed += clear_tree(labels, conf, ok, (-clear_odds(post) >= TREE_MIN_ODDS) & ~guessed)
        if start is not None and labels[start] != "C":
            labels[start], conf[start] = "C", min(conf[start], UNCERTAIN_BELOW - 0.01)
            changed.append(start)
        changed += complete_hidden(labels, conf, post, hidden & in_photo, walls, LABELS, in_photo)
    # A cell read empty or clear whose light clipped has lost the glints and sheen that tell a
    # clear piece from the bare board: its label is a guess, whatever the rules inferred (they
    # start from the surely clear cells, and clipping hides clear pieces from those too).
    lost = clipped & np.isin(labels, (EMPTY, "C"))
    # So too a cell read empty where the light is too dim for a clear piece to show at all.
    lost |= too_dark_for_clear(level) & (np.array(labels) == EMPTY)
    # And one read empty or clear in a reflection of the lamp or a window.
    bare = np.isin(labels, (EMPTY, "C"))
    reflected = in_a_reflection(level, bare & in_photo & ~hidden)
    lost |= reflected & bare
    overfull = _overfull(labels, in_photo & ~hidden)
    if overfull:
        lost |= np.isin(labels, (EMPTY, "C", *overfull))
    flags += [f"colour_overfull: {c} on {n} cells, more than its pieces hold" for c, n in overfull.items()]
    # And a cell the colour classifier doubted: the pieces weigh it as clear or empty, but the
    # photo never said it is either.
    lost |= faded
    # And one beside a coloured region the rules found no piece, which it would make one.
    lost |= completing & np.isin(labels, (EMPTY, "C"))
    # And a cell whose label the thing standing over the board may have lent it.
    lost |= lent[np.arange(len(labels)), [LABELS.index(label) for label in labels]]
    # And, in a photo whose pieces show only as light (a sepia or duotone filter), a cell read
    # by a colour it cannot show.
    if photo:
        lost |= _light_only(rect, in_photo & ~hidden, np.array(labels) == EMPTY, clipped | reflected)
    conf = np.where(lost, np.minimum(conf, UNCERTAIN_BELOW - 0.01), conf)
    return labels, conf, list(dict.fromkeys(changed)), flags


def _light_only(rect: np.ndarray, seen: np.ndarray, read_empty: np.ndarray, shone: np.ndarray) -> np.ndarray:
    """(463,) the cells a one-hue photo leaves in doubt (:func:`vision.one_hue.light_only_doubts`;
    none where colour shows): ``rect`` the top-down colour view at PPU, ``seen`` the cells in sight
    with no occluder over them, ``shone`` those whose light clipped or a reflection lies on. Cell
    centres are given one neighbour apart (R units: sqrt 3)."""
    middles = gather(rect, offsets(PPU)[0]).astype(np.float32) / 255
    return light_only_doubts(middles.mean(axis=1), centres() / np.sqrt(3), seen, read_empty, shone)


def _overfull(labels: list[str], seen: np.ndarray) -> dict[str, int]:
    """The colours read on more ``seen`` cells (in the photo, walls showing: not under a hand)
    than their 18 pieces hold: what the colour classifier took for that colour is the bare board
    (a warm lamp reddening it) or something else besides. Then the cells read empty are no sure
    sign of an empty cell either (the class that took the board's place may hold a colour's
    pieces), and every cell read empty, clear or that colour is a guess. Returns each such colour
    and how many seen cells it was read on."""
    most = sum(len(p.cells) for p in pieces().pieces)
    shown = [lab for lab, s in zip(labels, seen) if s]
    return {c: shown.count(c) for c in LABELS if c != EMPTY and shown.count(c) > most}


def debug_images(reading: GembloReading, scale: int = 2) -> dict[str, np.ndarray]:
    """"rectified" (the top-down view read) and "overlay" (labels; uncertain in magenta)."""
    img = cv2.resize(reading.rectified, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    overlay = (0.65 * img).astype(np.uint8)
    doubt = set(reading.uncertain)
    for c, (x, y) in zip(cells(), centres() * PPU * scale):
        name = key(c)
        label = reading.cells.get(name, EMPTY)
        centre = (int(x), int(y))
        cv2.circle(overlay, centre, int(0.75 * PPU * scale), DRAW_BGR[label], 1 if label == EMPTY else 2)
        if name in doubt:
            cv2.circle(overlay, centre, int(0.35 * PPU * scale), (255, 0, 255), 2)
    return {"rectified": reading.rectified.copy(), "overlay": overlay}


__all__ = ["GembloReading", "ReadError", "debug_images", "locate_board", "read_gemblo", "read_with_pose",
           "verify_pose"]
