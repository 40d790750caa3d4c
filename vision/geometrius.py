"""Read a Geometrius field from a photo: the tokens, their polygons and the chip stacks.

There is no board. Square card tokens lie on the table on an integer grid that pushes make
irregular, each with a thin printed frame, a polygon in its middle and chip spots at its
corners. Reading goes frame -> pose -> tokens -> polygons and stacks -> state:

1. *Tokens* and 2. *local frame*: ``vision.geometrius_field`` finds the tokens and their
   places on the field's grid (and numbers them), each token's own frame fitted again
   (``vision.geometrius_frame``).
3. *Polygon* and 4. *catalogue*: ``vision.geometrius_polygon`` measures each token's polygon
   and names its shape; where the polygons show heavy blur, the photo is sharpened and
   they are measured again (``vision.geometrius_blur``; photos only: a live frame waits for a
   steady one).
5. *Stacks*: ``vision.geometrius_stack`` reads each chip stack's top colour and height.

This module puts the steps together and holds the public reading API: ``read_geometrius``
(a photo), ``locate_board``, ``verify_pose`` and ``read_with_pose`` (live, at a kept pose),
``read_single_token`` (calibration) and the reading dataclasses.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from rules.geometrius import UNKNOWN_SHAPE, load_catalogue
from rules.polygon import Polygon, Shape

from .errors import ReadError
from .exposure import brightest, too_dark
from .geometrius_blur import heavy_blur, photo_blur, px_per_mm, unblurred
from .geometrius_field import (Field, doubtful_places, exposed, fit_frame, locate_field, not_a_field,
                               numbered, orient, pose_evidence, pose_places, search_mask, token_frame)
from .geometrius_polygon import (MATCH_LIMIT, PolygonFit, ShapeMatch, centred_on_polygon, covers_polygon,
                                 measure_polygon, shortest_side_dropped, match_shape)
from .geometrius_stack import (CARD_HALF_MM, CARD_PPM, classify_chip, field_camera, find_stack, focal_from_stacks,
                               read_stack, tokens_show_colour, washed_top)
from .geometrius_token import PITCH_MM, POLY_RADIUS_MM, PPM, Pos, warp
from .image_io import as_bgr
from .pose import BoardPose, apply_h


# --- what a read returns ----------------------------------------------------------------

@dataclass
class TokenReading:
    """One token as read: contract fields plus what was measured."""

    row: int
    col: int
    shape: str  # catalogue id, or "unknown"
    stack: list[str]
    height_known: bool
    vertices: list[tuple[float, float]]  # token millimetres, x right, y up, centre at 0
    distance: float | None  # to the nearest catalogue shape, in camera tolerances
    uncertain: list[str]  # what could not be read with confidence: "shape", "stack", "frame", "position"
    centre_px: tuple[float, float]
    homography: np.ndarray  # token millimetres (y down) -> photo pixels

    def state(self) -> dict:
        doc: dict[str, Any] = {"row": self.row, "col": self.col, "shape": self.shape, "stack": list(self.stack)}
        if not self.height_known:
            doc["stack_height_known"] = False
        return doc

    def match_distance(self) -> float | None:
        """The distance for JSON: none when no catalogue shape has as many sides (infinite),
        which JSON cannot carry (``Infinity`` broke every strict reader: the review page, a
        ``read --json`` piped to another program)."""
        if self.distance is None or not math.isfinite(self.distance):
            return None
        return round(self.distance, 3)

    def measured(self) -> dict:
        """The polygon's measured properties (sides in millimetres, angles in degrees)."""
        doc: dict[str, Any] = {"row": self.row, "col": self.col, "centre_px": [round(v, 1) for v in self.centre_px],
                               "vertices": [[round(x, 2), round(y, 2)] for x, y in self.vertices],
                               "match_distance": self.match_distance(),
                               "uncertain": list(self.uncertain)}
        try:
            poly = Polygon.of(self.vertices)
            doc |= {"sides": [round(s, 2) for s in poly.sides], "angles": [round(a, 2) for a in poly.angles],
                    "convex": all(a < 180 for a in poly.angles)}
        except ValueError:
            doc |= {"sides": [], "angles": [], "convex": None}
        return doc


@dataclass
class GeometriusReading:
    """One photo read. ``tokens`` are the contract's token documents; ``read`` holds what
    was measured on each; ``uncertain`` lists [row, col] of tokens with anything in doubt."""

    read: list[TokenReading]
    timing_ms: float
    pose: BoardPose
    rectified: np.ndarray  # the field from above (debug)
    camera: dict = field(default_factory=dict)

    @property
    def tokens(self) -> list[dict]:
        return [t.state() for t in self.read]

    @property
    def uncertain(self) -> list[list[int]]:
        return [[t.row, t.col] for t in self.read if t.uncertain]

    @property
    def state(self) -> dict:
        return {"game": "geometrius", "tokens": self.tokens}

    @property
    def confidence(self) -> float:
        if not self.read:
            return 0.0
        return round(1.0 - len(self.uncertain) / len(self.read), 4)

    def to_state_json(self) -> dict:
        return {"state": self.state, "confidence": self.confidence, "uncertain": self.uncertain,
                "timing_ms": round(self.timing_ms, 1), "tokens": [t.measured() for t in self.read],
                "corners": np.round(self.pose.corners, 2).tolist(), "camera": self.camera}

    def text(self) -> str:
        """The field for people: one line per token, doubts marked."""
        lines = []
        for t in self.read:
            stack = " ".join(t.stack) or "-"
            height = "" if t.height_known else " (height unknown)"
            doubt = f"  ? {', '.join(t.uncertain)}" if t.uncertain else ""
            lines.append(f"({t.row}, {t.col})  {t.shape:<7} {stack}{height}{doubt}")
        lines.append(f"{len(self.read)} token(s), {len(self.uncertain)} uncertain, {self.timing_ms:.0f} ms")
        return "\n".join(lines)


# --- the read -------------------------------------------------------------------------------

def _read_field(image: np.ndarray, located: Field, start: float, gray: np.ndarray | None = None,
                undo_blur: bool = True, one_hue: bool = False) -> GeometriusReading:
    """The tokens at ``located``'s places. ``undo_blur``: where the polygons show heavy blur,
    measure them again on the sharpened photo (a photo is all there is; a blurred live
    frame is not worth a second pass: a steady one follows). ``one_hue``: where the tokens
    show no colour (a phone's sepia, duotone or tritone filter), every top is in doubt
    (``tokens_show_colour``; photos only: a webcam has no such filter)."""
    catalogue = load_catalogue()
    H = located.H
    h, w = image.shape[:2]
    cam = field_camera(H, (w, h))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if gray is None else gray
    red = cv2.extractChannel(image, 2)
    seen = []
    cards = []  # each token's card from above, for the photo's colours (``one_hue``)
    for pos in located.places:
        centre_mm = np.array([pos[1] * PITCH_MM, pos[0] * PITCH_MM])
        on_grid = H @ np.array([[1, 0, centre_mm[0]], [0, 1, centre_mm[1]], [0, 0, 1]])
        H0 = located.local.get(pos)
        Ht = token_frame(gray, on_grid, blurred=True) if H0 is None else fit_frame(gray, H0, blurred=True)
        if Ht is None and H0 is not None:
            # The search's own quad was not refined into a frame: a chip or blur had bent it,
            # so it may be sheared. The field's homography, fitted through every other
            # token's frame, places it, and the frame is sought again from there.
            Ht = token_frame(gray, on_grid, blurred=True)
        if Ht is None:
            H0 = centred_on_polygon(red, on_grid)
        card_patch = warp(image, Ht if Ht is not None else H0, CARD_HALF_MM, 1.0).reshape(-1, 3).astype(np.float32)
        if one_hue:
            cards.append(warp(image, Ht if Ht is not None else H0, CARD_HALF_MM, CARD_PPM).astype(np.float32) / 255)
        bright = card_patch.sum(1)
        card_rgb = np.median(card_patch[bright >= np.percentile(bright, 60)], axis=0)[::-1]
        card_v = float(max(card_rgb.max(), 1.0))
        sight, score = find_stack(image, Ht if Ht is not None else H0, centre_mm, cam, card_rgb, card_v)
        seen.append((pos, centre_mm, H0, Ht, card_rgb, sight, score))
    # A place that may be no token (the tablecloth) is no witness of the camera.
    cam = focal_from_stacks(H, (w, h), cam, [(s_, Ht if Ht is not None else H0, c_)
                                              for p_, c_, H0, Ht, _, s_, _ in seen
                                              if s_ is not None and p_ not in located.doubtful])
    read = []
    for pos, centre_mm, H0, Ht, card_rgb, sight, score in seen:
        uncertain = [] if Ht is not None and pos not in located.doubtful else ["frame"]
        Ht = Ht if Ht is not None else H0
        stack = read_stack(sight, score, image, Ht, centre_mm, cam, card_rgb)
        if not stack.sure or (uncertain and not stack.stack):  # no chip seen where the frame was not
            uncertain.append("stack")
        read.append((pos, Ht, stack, uncertain, *_token_polygon(red, Ht, stack.outline, catalogue.shapes)))
    undoubted_tops = [uncertain for _, _, stack, uncertain, _, _ in read if stack.stack and "stack" not in uncertain]
    covers = [stack.outline for _, _, stack, _, _, _ in read]
    if one_hue and undoubted_tops and not tokens_show_colour(cards, covers):  # a one-hue photo: every top a guess
        for uncertain in undoubted_tops:
            uncertain.append("stack")
    if undo_blur:
        _measured_unblurred(red, read, located.doubtful, catalogue.shapes)
    tokens: list[TokenReading] = []
    matches: list[ShapeMatch | None] = []
    places: list[Pos] = []
    for pos, Ht, stack, uncertain, polygon, match in read:
        vertices = None if polygon is None else polygon.vertices
        if pos in located.doubtful and vertices is None:
            # No polygon where a token may lie: the tablecloth (on 24 patterned-table photos
            # 14 such places of 16 measured none, every real token 3-9 corners). Kept, it
            # numbered every token beside it a place off; one that does measure a polygon
            # stays in doubt, and so does every position it decides (``numbered``).
            continue
        hidden = stack.outline is not None and covers_polygon(stack.outline, vertices)
        if match is None or not match.sure or hidden or not polygon.straight or pos in located.doubtful:
            uncertain.append("shape")
        vert_list = [] if vertices is None else [(float(x), float(y)) for x, y in vertices]
        cpx = apply_h(Ht, np.zeros((1, 2)))[0]
        places.append(pos)
        tokens.append(TokenReading(*pos, UNKNOWN_SHAPE, stack.stack, stack.height_known, vert_list, None, uncertain,
                                   (float(cpx[0]), float(cpx[1])), Ht))
        matches.append(match)
    labels, contract_H, resting = numbered(H, places, located.doubtful, located.origin)
    for pos, token in zip(places, tokens):  # numbered once the doubtful places are settled
        token.row, token.col = labels[pos]
        if resting:
            token.uncertain.append("position")
    _name_shapes(tokens, matches)
    tokens.sort(key=lambda t: (t.row, t.col))
    rows = max(t.row for t in tokens) + 1
    cols = max(t.col for t in tokens) + 1
    pose = _pose(contract_H, (w, h), (cols, rows))
    rect = _overview(image, pose)
    return GeometriusReading(tokens, (time.perf_counter() - start) * 1000.0, pose, rect,
                             {"nadir_mm": [round(float(v), 1) for v in cam.nadir], "height_mm": round(cam.height, 1),
                              "focal_px": round(cam.focal, 1),
                              "focal_from": "homography" if cam.focal_seen else "stacks"})


def _measured_unblurred(red: np.ndarray, read: list, doubtful: frozenset[Pos], shapes: Mapping[str, Shape]) -> None:
    """Heavy blur leans short sides into their neighbours' ink: where the sure places'
    polygons show it, they are measured again on ``red`` with it undone, in ``read``
    (pos, H, stack, uncertain, polygon, match per place; the frames and stacks stand as read).
    Where the filter loses a polygon the first pass measured (held-out blur photo: a top-row
    token whose frame the streak hid, kept only because it measures one), that one stands;
    and it gives none to a doubtful place that measured none (the tablecloth: no token)."""
    sure = [(Ht, polygon.vertices) for pos, Ht, _, _, polygon, _ in read if polygon is not None and pos not in doubtful]
    blur = photo_blur(red, sure)
    if not sure or not heavy_blur(blur, px_per_mm([Ht for Ht, _ in sure])):
        return
    sharp = unblurred(red, blur, [Ht for _, Ht, _, _, _, _ in read])
    for k, (pos, Ht, stack, uncertain, polygon, _) in enumerate(read):
        if polygon is None and pos in doubtful:
            continue
        again = _token_polygon(sharp, Ht, stack.outline, shapes, blurred=True)
        if again[0] is not None:
            read[k] = (pos, Ht, stack, uncertain, *again)


def _token_polygon(red: np.ndarray, H: np.ndarray, hide: np.ndarray | None, shapes: Mapping[str, Shape],
                   blurred: bool = False) -> tuple[PolygonFit | None, ShapeMatch | None]:
    """One token's polygon measured on the photo's red channel (``H``: token mm -> photo px;
    ``hide``: a stack's outline) and its nearest catalogue shape; a polygon like no shape is
    tried again with its shortest side dropped (a corner gained, always in doubt).
    ``blurred``: the photo was measured heavily blurred (``red`` then has the blur undone,
    which leaves the strokes narrower but their neighbours' ink still near the corners)."""
    half = POLY_RADIUS_MM + 2.0
    polygon = measure_polygon(warp(red, H, half, PPM), half, (red, H), hide, blurred)
    if polygon is None:
        return None, None
    match = match_shape(polygon.vertices, shapes, polygon.loose)
    if match.shape == UNKNOWN_SHAPE:
        regained = shortest_side_dropped(polygon, (red, H), hide, blurred)
        again = None if regained is None else match_shape(regained.vertices, shapes, regained.loose)
        if again is not None and again.shape != UNKNOWN_SHAPE:
            return regained, again
    return polygon, match


def _name_shapes(tokens: list[TokenReading], matches: Sequence[ShapeMatch | None]) -> None:
    """Give each token its nearest catalogue shape, each shape to one token only (the
    nearest); a token that loses its shape takes its next nearest free one, and both are
    uncertain."""
    taken: dict[str, int] = {}
    # A loose match (a stack spoilt some corners) chooses last: it must not take a shape from
    # a token measured at the camera's own tolerance.
    order = sorted((i for i, m in enumerate(matches) if m is not None), key=lambda i: (matches[i].loose,
                                                                                        matches[i].distance))
    for i in order:
        m = matches[i]
        free = [(d, sid) for d, sid in m.ranked if sid not in taken and d <= MATCH_LIMIT]
        if not free:
            tokens[i].distance = m.distance
            if "shape" not in tokens[i].uncertain:
                tokens[i].uncertain.append("shape")
            continue
        d, sid = free[0]
        if sid != m.ranked[0][1]:
            for j in (i, taken.get(m.ranked[0][1])):
                if j is not None and "shape" not in tokens[j].uncertain:
                    tokens[j].uncertain.append("shape")
        tokens[i].shape, tokens[i].distance = sid, d
        taken[sid] = i


def _pose(contract_H: np.ndarray, size: tuple[int, int], extent: tuple[int, int]) -> BoardPose:
    w, h = extent
    corners = apply_h(contract_H, np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]]))
    return BoardPose(np.linalg.inv(contract_H), corners, 1.0, size, (float(w), float(h)))


OVERVIEW_PX = 120  # per grid place in the debug overview


def _overview(image: np.ndarray, pose: BoardPose) -> np.ndarray:
    w, h = pose.extent
    H = np.linalg.inv(pose.homography) @ np.diag([1 / OVERVIEW_PX, 1 / OVERVIEW_PX, 1.0])
    return cv2.warpPerspective(image, H, (int(w * OVERVIEW_PX), int(h * OVERVIEW_PX)),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)


# --- public API ---------------------------------------------------------------------------

def read_geometrius(image: np.ndarray, calibration: BoardPose | Mapping | None = None, **_: Any) -> GeometriusReading:
    """Photo (upright BGR) -> Geometrius reading. A calibration pose is not used: pushes move
    the tokens, so the field is found afresh in every photo. ReadError("no_board") when no
    token shows, ("underexposed") when a photo too dark to read (brightened by ``exposed``)
    leaves every token's shape in doubt, and ("no_board") when a photo in good light does:
    every token carries a catalogue polygon and a field holds 16 tokens, so a real field
    shows one drawn clearly at least (a photo of each bench condition, two seeds: 11 or
    more), while another game's board cells or a tablecloth's blots, taken for frames, hold
    at most a stray quad that is no catalogue shape (3 of 122 such photos were read). Where
    no token is read and the token frames that show are seen too steeply to read, the
    refusal is ("impossible_angle"), not ("no_board"): the advice is to take the photo from
    higher up (``geometrius_field.not_a_field``)."""
    start = time.perf_counter()
    photo = as_bgr(image)
    gray = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)  # once, for the light, the search and the frames
    image = exposed(photo, gray)
    if image is not photo:  # brightened: its own grey
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    reading = _read_field(image, locate_field(image, gray), start, gray, one_hue=True)
    if reading.read and image is not photo and all("shape" in t.uncertain for t in reading.read):
        # Brightened, the photo's noise spoils every polygon (or leaves none measured); it may
        # have hidden whole tokens too (a field found as one or two of them, numbered from
        # there): nothing to go on.
        raise too_dark(brightest(photo), "brightened, its noise leaves no token's polygon readable")
    if not any(t.vertices for t in reading.read):
        raise not_a_field(image, gray, "no Geometrius tokens were found in the photo (squares, but none shows a "
                                       "polygon)")
    if all("shape" in t.uncertain for t in reading.read):
        raise not_a_field(image, gray, "no Geometrius tokens were found in the photo (squares, but no polygon in "
                                       "them is a catalogue shape)")
    return reading


def locate_board(frame: np.ndarray) -> BoardPose:
    """The field's pose in a frame: board units are grid places (cell (r, c) spans
    [c, c+1] x [r, r+1] in the contract's numbering); ``contrast`` holds how clearly the
    token frames show there, for :func:`verify_pose`. Only the tokens whose frames show
    place it: :func:`read_with_pose` counts rows and columns from the pose's first ones, and
    a doubtful place (the tablecloth, perhaps) there would number every token a place off
    for as long as the pose is kept; a real token there is read beyond the pose."""
    frame = exposed(as_bgr(frame))
    located = locate_field(frame)
    labels, contract_H = orient(located.H, [p for p in located.places if p not in located.doubtful])
    rows = max(r for r, _ in labels.values()) + 1
    cols = max(c for _, c in labels.values()) + 1
    pose = _pose(contract_H, frame.shape[1::-1], (cols, rows))
    return replace(pose, contrast=pose_evidence(frame, pose))


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Do the token frames still show where ``pose`` put them (at least 60 % as clearly)?"""
    frame = exposed(as_bgr(frame))
    pose = pose.for_frame(frame)
    reference = pose.contrast or 0.5
    return pose_evidence(frame, pose) >= 0.6 * reference


def read_with_pose(frame: np.ndarray, pose: BoardPose) -> GeometriusReading:
    """Read the tokens at a known pose (no search for frames): every place of the pose (or
    beside a token beyond it) whose frame shows holds a token; a place whose frame shows
    in part, or one across a hidden place, may (``doubtful_places``), as in a photo. Rows
    and columns count from the pose's first ones, unless a token lies beyond them; where
    none shows there now (a hand over the top row's one token) the numbering is kept, every
    position in doubt (``numbered``)."""
    start = time.perf_counter()
    frame = exposed(as_bgr(frame))
    pose = pose.for_frame(frame)
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    tokens, partial = pose_places(gray, pose)
    if not tokens:
        raise ReadError("no_board", "no Geometrius token shows where the field was")
    doubtful = doubtful_places(gray, search_mask(gray), tokens, partial)
    # Grid mm with token (0, 0) at the origin, rows down: the contract frame itself.
    H = np.linalg.inv(pose.homography) @ np.array([[1 / PITCH_MM, 0, 0.5], [0, 1 / PITCH_MM, 0.5], [0, 0, 1]])
    located = Field(H, tuple(sorted(tokens | doubtful)), doubtful=frozenset(doubtful), origin=(0, 0))
    return _read_field(frame, located, start, gray, undo_blur=False)


def read_single_token(image: np.ndarray) -> TokenReading:
    """The one token shown to the camera (``tableref calibrate tokens``): ReadError
    ("no_board") when no token, or more than one, shows."""
    start = time.perf_counter()
    image = exposed(as_bgr(image))
    reading = _read_field(image, locate_field(image), start)
    if len(reading.read) != 1:
        raise ReadError("no_board", f"{len(reading.read)} tokens show in the photo; show exactly one")
    return reading.read[0]


def debug_images(reading: GeometriusReading) -> dict[str, np.ndarray]:
    """"rectified" (the field from above) and "overlay" (measured polygons, shapes, stacks;
    doubtful tokens outlined in magenta)."""
    img = reading.rectified.copy()
    overlay = (0.6 * img).astype(np.uint8)
    px = OVERVIEW_PX
    for t in reading.read:
        x0, y0 = t.col * px, t.row * px
        colour = (255, 0, 255) if t.uncertain else (255, 255, 255)
        cv2.rectangle(overlay, (x0 + 2, y0 + 2), (x0 + px - 3, y0 + px - 3), colour, 1)
        if t.vertices:
            # token mm (y up) -> overview px: through the photo
            pts = apply_h(t.homography, np.array(t.vertices) * [1, -1])
            grid = apply_h(reading.pose.homography, pts) * px
            cv2.polylines(overlay, [np.round(grid).astype(np.int32)], True, (0, 255, 0), 1, cv2.LINE_AA)
        cv2.putText(overlay, t.shape, (x0 + 5, y0 + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1)
        label = (t.stack[-1][:3] + f"x{len(t.stack)}" + ("" if t.height_known else "?")) if t.stack else ""
        cv2.putText(overlay, label, (x0 + 3, y0 + px - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1)
    return {"rectified": img, "overlay": overlay}


__all__ = ["GeometriusReading", "ReadError", "TokenReading", "classify_chip", "debug_images", "field_camera",
           "locate_board", "match_shape", "read_geometrius", "read_single_token", "read_with_pose", "verify_pose",
           "washed_top"]
