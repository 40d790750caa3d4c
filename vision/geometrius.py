"""Read a Geometrius field from a photo: the tokens, their polygons and the chip stacks.

There is no board. Square card tokens lie on the table on an integer grid that pushes make
irregular, each with a thin printed frame, a polygon in its middle and chip spots at its
corners. Reading goes frame -> pose -> tokens -> polygons and stacks -> state:

1. *Tokens*: the inside of an unbroken frame is a light four-sided region of the dark-line
   mask holding a drawing. The reference frame is the one that puts most others on integer
   grid steps (a tablecloth's checks, a polygon that happens to be four-sided do not). The
   field then grows one pitch at a time from each placed token's own frame (so a distorting
   lens does not bend the steps): a neighbour is a token when a frame was found there, or
   when its frame shows along most of its length (a chip, a hand or glare broke it). A
   place next to the field whose frame shows only in part, yet holds plain card of the
   tokens' grey level with a drawing on it, may hold a token (dropped, it would number
   every token beyond it a place off); so may a place across a hidden one whose frame
   shows in full (a cup over its neighbour). Such a place is read as a token in doubt
   when a polygon is measured on it, and is the tablecloth when none is. An underexposed
   photo is first stretched to a normal light (the search's contrasts are in grey levels),
   and a noisy one searched smoothed.
2. *Local frame*: each token's frame is fitted again in a top-down view of it (the first
   dark line going outwards from the card, four lines through most of their points): its
   own homography carries the polygon's measurement. Where the search's quad cannot be
   refined (a chip or blur bent it), the frame is sought again where the field's homography
   puts the token; a token whose frame never shows is centred on its polygon.
3. *Polygon*: the ink is the red channel's darkness against the card nearby (red
   right-angle marks vanish; shadows and fall-off cancel). The outline's outside is flooded
   from the rim (ink over a share of the stroke's own core darkness, which blur lightens;
   fainter thresholds when the flood leaks through a washed-out stretch and leaves a scrap
   smaller than any printed polygon); what is left, opened a little to shave the tick
   marks, gives the corners' first guess (Douglas-Peucker). Each side is then fitted to its ink clear of the angle
   arcs at its corners (right angles carry no arc), refitted round the line found until the
   corners settle; nearly straight corners are dropped and the sides refitted. Last, each
   side is fitted again on the photo itself through the token's homography: profiles across
   it give the stroke's two edges to a fraction of a pixel, wherever no other stroke, arc,
   mark, tick or stack can reach them (near a corner, where the other side's blurred ink
   darkens the core, half way at the side's usual contrast); consecutive lines meet at the
   corners. A side that is not straight there, or a polygon not at its printed size, may
   have lost a corner.
4. *Catalogue*: the nearest catalogue shape with as many corners, over every pairing of the
   corners that keeps the walking direction (tokens are never turned over), in units of the
   camera tolerance (2 degrees, 2 % of a side); beyond ``MATCH_LIMIT`` it is ``unknown``,
   beyond ``SURE_MATCH`` (or with another shape nearly as near, a side bent, or a stack over
   enough of the outline to hide a short side) it is reported uncertain. A side lying
   mostly too near a stack to be fitted leans: when the shape is not sure, its corners are
   compared at LOOSE times the tolerance, as a guess.
   Each token exists once, so two tokens read as one shape are told apart by distance: the
   farther one takes its next nearest shape, and both stay uncertain.
5. *Stacks*: a stack stands on one of the token's chip spots. Seen at an angle its top rises
   away from the camera's nadir, by an amount the camera fixes (its position follows from
   the field's homography; its focal length too, unless the camera looks nearly straight
   down, when the stacks fix it, each being a whole number of chips high): the chip's
   dark-rimmed top is searched along that line, and its distance from the spot gives the
   height where one chip's side is tall enough in the photo to tell heights apart;
   otherwise the height is reported unknown. The top stone's colour (and, where the height
   is read, each chip's side) is compared with the token's card as the white reference; a
   top read white but far more colourful than the card is a coloured chip under glare, its
   colour (what the glare left of it) a guess.

Positions follow the contract: row 0 is the topmost row of tokens in the photo, column 0
the leftmost, the grid turned by the quarter turn whose +col points nearest the photo's right
at the field's centre, both of the grid's axes weighed (at a slant they need not be square in
the photo): the axis nearer level runs along the rows. When a token in doubt lies beyond
the others' top row or left column, the numbering rests on it: every token's position is
then in doubt ("position"), whether it is a token or not. Read live at a kept pose, rows and
columns count from the pose's first ones (a push never empties a place), or from a token
pushed beyond them; when no token shows in the pose's first row or column (a hand, a cup
over it), every position is in doubt.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from rules.geometrius import UNKNOWN_SHAPE, load_catalogue
from rules.polygon import CAMERA, Polygon, Shape

from .errors import ReadError
from .exposure import DARK, brightest, too_dark
from .geometrius_blur import heavy_blur, photo_blur, unblurred
from .geometrius_frame import frame_line
from .image_io import as_bgr
from .matching import sample_at
from .pose import BoardPose, apply_h

# The token's printed geometry (millimetres from the token's centre): shared with the
# synthetic generator, which draws what a physical token shows.
PITCH_MM = 53.0
FRAME_MM = 23.6
FRAME_WIDTH_MM = 0.9
POLY_RADIUS_MM = 14.5
SPOT_MM = 16.0
CHIP_RADIUS_MM = 6.3
CHIP_MM = 3.0
STONE_RADIUS_MM = 3.8
SPOTS = np.array([[-SPOT_MM, -SPOT_MM], [SPOT_MM, -SPOT_MM], [SPOT_MM, SPOT_MM], [-SPOT_MM, SPOT_MM]])
CHIP_COLOURS = {  # nominal chip tops relative to the card (card = white)
    "red": (0.88, 0.12, 0.13), "blue": (0.12, 0.27, 0.85), "green": (0.11, 0.6, 0.22),
    "yellow": (1.0, 0.86, 0.1), "purple": (0.54, 0.15, 0.66), "white": (1.0, 1.02, 1.07)}
SIDE_SHADE = 0.62  # a chip's side is this much darker than its top
ARC_MM = 3.2  # the angle arcs' largest radius (within a quarter of the shorter side at their corner)

MAX_TOKENS = 40  # the game has 40 tokens
SURE_FIELD = 12  # a grid growing to this many tokens is taken without trying others
FIELD_REACH = 8  # no token lies farther than this many places from another (lines hold 5 at most)
INK_INSIDE = (0.01, 0.22)  # share of a token's middle that is drawing
FRAME_SHIFT_MM = 5.0  # how far the grid may misplace a token's frame
FRAME_SHOWS = 0.65  # share of a frame that must show for a token found by the grid alone
FRAME_PART = 0.3  # ... and that shows in part where a token may lie hidden (blur, a hand, the dark)
FRAME_HINT = 0.15  # ... through the pose's grid beyond it, where the own frame may show it in part (round 15)
CARD_LIKE = 0.12  # such a token's card is within this share of the field's cards' grey level
CARD_PLAIN = 0.05  # ... and plain: its spread within this share of it
_ALONG = np.linspace(-8.0, 8.0, 9)  # mm along each side's middle, clear of the chip spots
CARD_RING = np.vstack(  # card beside each side's middle, inside the frame, outside the polygon (token mm)
    [np.column_stack([_ALONG, np.full_like(_ALONG, s * d)]) for s in (-1, 1) for d in (19.0, 20.5)]
    + [np.column_stack([np.full_like(_ALONG, s * d), _ALONG]) for s in (-1, 1) for d in (19.0, 20.5)])
REFERENCES = 120  # frames tried as the grid's reference, the most token-like first
WORK_WIDTH = 1400  # token search runs on the photo shrunk to this width
PPM = 6.0  # top-down pixels per millimetre for the polygon
FRAME_PPM = 4.0  # for fitting the frame
FRAME_VIEW_MM = 6.0  # the frame's view reaches this far past the frame line
FRAME_PROFILE_MM = 5.0  # a frame line's profile reaches this far either way (past the gap to the next token)
TOKEN_HALF_MM = 25.0  # the card's edge (tokens are 50 mm squares)
GAP_MM = PITCH_MM - 2 * TOKEN_HALF_MM  # the gap between neighbouring tokens
# The printed strips across a frame line, from its centre outwards: the line's two edges, the card's edge, the gap's.
FRAME_EDGES_MM = (-FRAME_WIDTH_MM / 2, FRAME_WIDTH_MM / 2, TOKEN_HALF_MM - FRAME_MM, TOKEN_HALF_MM - FRAME_MM + GAP_MM)
MATCH_LIMIT = 12.0  # nearest catalogue shape within this many camera tolerances, else "unknown"
SURE_MATCH = 2.0  # beyond this (or with a close runner-up) the shape is reported uncertain
RUNNER_UP_GAP = 1.5
HEIGHT_PX = 4.0  # one chip's side must be this tall in the photo to count chips
SPOT_CARD_TOLERANCE = 0.15  # a bare chip spot is the card's colour within this (relative)
CHIP_FOUND = 0.22  # rim contrast (card = 1) above which a chip top is there
FAINT_CHIP = 0.3  # on a spot that is not bare card, a top this faint (share of CHIP_FOUND) is a guess
# (defocus smears a chip's dark rim into its face: a lone chip under heavy blur scored 0.35 of CHIP_FOUND)
ARC_CLEAR_MM = 0.8  # past an arc's end the side's ink is the side's alone
CORNER_CLEAR_MM = 0.9  # past a corner's own stroke (a right angle's mark is red: no ink)
CARD_NEAR_MM = 3.0  # the card's brightness is taken this near each pixel
HIDE_CLEAR_MM = 1.2  # sides are fitted this far clear of a stack
# A corner this close to 180 degrees is no corner: the catalogue's are 27 degrees or more off,
# and blur running a sharp corner's strokes together bends its neighbour's lines by up to 3.
STRAIGHT_DEG = 22.0
ROUGH_STRAIGHT_DEG = 15.0  # nor is an outline's rough corner this close (its angle is a few degrees out at most)
FOCAL_RANGE = (0.6, 0.9)  # plausible phone focal lengths, in photo lengths (fields of view 58-80 degrees)
FOCAL_TYPICAL = 0.72
TILT_FOR_FOCAL_DEG = 12.0  # below this the homography hardly shows the focal length: use the typical one

Pos = tuple[int, int]


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

    def measured(self) -> dict:
        """The polygon's measured properties (sides in millimetres, angles in degrees)."""
        doc: dict[str, Any] = {"row": self.row, "col": self.col, "centre_px": [round(v, 1) for v in self.centre_px],
                               "vertices": [[round(x, 2), round(y, 2)] for x, y in self.vertices],
                               "match_distance": None if self.distance is None else round(self.distance, 3),
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


# --- geometry helpers ---------------------------------------------------------------------

def _square(half: float) -> np.ndarray:
    return np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float64)


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return cv2.getPerspectiveTransform(np.float32(src), np.float32(dst)).astype(np.float64)


def _view_to_photo(H: np.ndarray, half_mm: float, ppm: float) -> np.ndarray:
    """The homography from a top-down view's pixels (``_warp``'s) to photo pixels."""
    return H @ np.array([[1 / ppm, 0, 0.5 / ppm - half_mm], [0, 1 / ppm, 0.5 / ppm - half_mm], [0, 0, 1]])


def _warp(image: np.ndarray, H: np.ndarray, half_mm: float, ppm: float) -> np.ndarray:
    """Top-down view of the token plane around the origin: ``half_mm`` each way, ``ppm``.
    ``H`` maps token millimetres to photo pixels."""
    n = int(round(2 * half_mm * ppm))
    return cv2.warpPerspective(image, _view_to_photo(H, half_mm, ppm), (n, n),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)


# --- 0. light -----------------------------------------------------------------------------

EXPOSED_LIGHT = 200.0  # grey level an underexposed photo's lightest part is brought to


def _exposed(image: np.ndarray) -> np.ndarray:
    """The photo, its grey levels stretched when it is underexposed (its lightest part under
    ``exposure.DARK``) so that its lightest part reaches EXPOSED_LIGHT, as in a normally exposed
    photo. The contrasts the reader tests in grey levels (the dark-line mask's offset, a
    frame's depth, a frame line against its card) were set on such photos; in a photo whose
    card reaches 20 grey levels, a frame line shows only some 18 darker, and frames failing
    those tests stopped the field's growth: the tokens beyond were missed and, a column or
    row of them gone, the rest were silently numbered a place off. Stretched, every such
    test is one on contrast relative to the photo's own light. (Colours are read against the
    token's card, so the stretch leaves them as they were.)"""
    level = brightest(image)
    if level >= DARK:
        return image
    return cv2.convertScaleAbs(image, alpha=EXPOSED_LIGHT / max(level, 1.0))


NOISY = 8.0  # grey levels of noise above which the token search runs on a smoothed photo
_FINEST = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)  # sees noise, not a smooth picture


NOISE_SCALE = 2  # noise is measured on the photo shrunk this many times (its finest detail JPEG drops)


def _noise(gray: np.ndarray) -> float:
    """The photo's noise (standard deviation, grey levels): the median response to a kernel
    that cancels any locally planar picture, so edges, few among the pixels, hardly count.
    Measured on the photo shrunk NOISE_SCALE times, and scaled back (a mean of n x n pixels
    of independent noise has an n-th of its spread): JPEG drops a photo's finest detail,
    the pixel-to-pixel noise with it, and a dark noisy phone photo (noise some 14 grey
    levels once stretched) measured 2-4 levels saved at quality 85; its blotches a few
    pixels wide, which JPEG keeps, still break the token frames. Noise that is not
    independent from pixel to pixel (a phone's, demosaiced) measures more than its
    pixel-to-pixel spread there, as it does harm. Every third pixel each way is plenty
    for a median (and a ninth of its time)."""
    small = cv2.resize(gray, None, fx=1 / NOISE_SCALE, fy=1 / NOISE_SCALE, interpolation=cv2.INTER_AREA)
    response = cv2.filter2D(small, cv2.CV_32F, _FINEST)[::3, ::3]
    return NOISE_SCALE * 1.4826 * float(np.median(np.abs(response))) / 6.0


# --- 1. tokens ---------------------------------------------------------------------------

def _dark_mask(gray: np.ndarray, block: int, offset: int = 12) -> np.ndarray:
    return cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block | 1, offset)


def _frame_quads(gray: np.ndarray, offset: int = 12) -> list[np.ndarray]:
    """Four-sided light regions enclosed by dark lines: token frames' insides (photo pixels,
    clockwise on screen from the top-left corner). A frame notched by a chip or a hand is
    left out here: the grid finds it again."""
    h, w = gray.shape
    light = cv2.bitwise_not(_dark_mask(gray, max(15, w // 60), offset))
    light = cv2.morphologyEx(light, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(light, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    min_area = (w / 45) ** 2
    quads = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < min_area or area > 0.25 * w * h:
            continue
        approx = cv2.approxPolyDP(c, 0.03 * cv2.arcLength(c, True), True)
        if len(approx) != 4 or not cv2.isContourConvex(approx):
            continue
        q = approx[:, 0, :].astype(np.float64)
        if abs(cv2.contourArea(np.float32(q)) - area) > 0.04 * area:
            continue
        sides = np.linalg.norm(q - np.roll(q, -1, 0), axis=1)
        if sides.min() < 0.5 * sides.max():
            continue
        quads.append(_clockwise(q))
    return quads


def _clockwise(q: np.ndarray) -> np.ndarray:
    """Corners clockwise on screen (y down), starting nearest the top-left."""
    centre = q.mean(0)
    order = np.argsort(np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0]))
    q = q[order]
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, 0)


INNER_MM = FRAME_MM - FRAME_WIDTH_MM / 2  # the frame's inside edge


def _inside(image: np.ndarray, q: np.ndarray, n: int) -> np.ndarray:
    """Samples on an n x n lattice over the middle of a quad (a fifth in from each side)."""
    u = np.linspace(0.2, 0.8, n)
    a, b = np.meshgrid(u, u)
    a, b = a.ravel()[:, None], b.ravel()[:, None]
    pts = (1 - a) * (1 - b) * q[0] + a * (1 - b) * q[1] + a * b * q[2] + (1 - a) * b * q[3]
    return sample_at(image, pts)[:, 0]


def _token_like(gray: np.ndarray, dark: np.ndarray, q: np.ndarray) -> float:
    """How much a quad looks like a token's inside: light card with a drawing on it (a check
    of the tablecloth is light or dark, but plain). 0 when it holds no ink at all."""
    ink = float((_inside(dark, q, 15) > 127).mean())
    return _inside(gray, q, 5).mean() if INK_INSIDE[0] <= ink <= INK_INSIDE[1] else 0.0


def _on_grid(to_grid: np.ndarray, q: np.ndarray, slack: float) -> tuple[Pos, np.ndarray] | None:
    """The grid place of quad ``q`` in the frame of homography ``to_grid`` (pixels -> grid
    mm), if it is a token-sized square sitting on a grid step (within ``slack`` of a pitch);
    with its corners in grid mm."""
    local = apply_h(to_grid, q)
    c = local.mean(0) / PITCH_MM
    if np.abs(c - np.round(c)).max() > slack:
        return None
    sides = np.linalg.norm(local - np.roll(local, -1, 0), axis=1)
    if np.abs(sides / (2 * INNER_MM) - 1).max() > 0.15:
        return None
    return (int(round(c[1])), int(round(c[0]))), local


def _grids(quads: list[np.ndarray], count: int = 3) -> list[dict[Pos, np.ndarray]]:
    """Candidate token grids, best first: the quads that are token frames, at their grid
    places relative to a reference frame at (0, 0). A reference is good when it puts many
    of the others on grid steps (a polygon that happens to be four-sided does not, a check
    of the tablecloth rarely) and is big (checks are smaller than tokens); the most
    token-like quads are tried first. A homography
    through all of them then places the farther ones."""
    sq = _square(INNER_MM)
    corners = np.vstack(quads)
    scored = []
    for ref in quads[:REFERENCES]:
        H = _homography(sq, ref)
        local = apply_h(np.linalg.inv(H), corners).reshape(-1, 4, 2)
        c = local.mean(1) / PITCH_MM
        sides = np.linalg.norm(local - np.roll(local, -1, 1), axis=2)
        on = (np.abs(c - np.round(c)).max(1) <= 0.25) & (np.abs(c).max(1) <= FIELD_REACH) \
            & (np.abs(sides / (2 * INNER_MM) - 1).max(1) <= 0.15)
        # Many frames on the grid, and big ones: a tablecloth's checks are smaller than tokens.
        size = math.sqrt(cv2.contourArea(np.float32(ref)))
        scored.append((int(on.sum()) * size, len(scored), H, frozenset(np.flatnonzero(on))))
    scored.sort(key=lambda x: (-x[0], x[1]))
    grids, seen = [], []
    for _, _, H, members in scored:
        if any(members == m for m in seen):
            continue  # the same grid from another of its frames
        seen.append(members)
        grids.append(_placed(quads, H))
        if len(grids) == count:
            break
    return grids


def _placed(quads: list[np.ndarray], H: np.ndarray) -> dict[Pos, np.ndarray]:
    sq = _square(INNER_MM)
    places: dict[Pos, np.ndarray] = {}
    for _ in range(3):
        places = {}
        src, dst = [], []
        to_grid = np.linalg.inv(H)
        for q in quads:
            found = _on_grid(to_grid, q, 0.2)
            if found is None:
                continue
            rc, local = found
            if rc in places or max(abs(rc[0]), abs(rc[1])) > FIELD_REACH:
                continue
            ideal = sq + np.array([rc[1], rc[0]]) * PITCH_MM  # pair each corner with the nearest ideal one
            src += [ideal[int(np.argmin(np.linalg.norm(ideal - p, axis=1)))] for p in local]
            dst += list(q)
            places[rc] = q
        if len(src) >= 8:
            H, _ = cv2.findHomography(np.float64(src), np.float64(dst), 0)
    return places


def _frame_evidence(gray: np.ndarray, H: np.ndarray) -> float:
    """Share of a token frame's length that shows as a dark line with lighter card inside it
    (``H``: token millimetres -> pixels of ``gray``). The line is looked for a little either
    side of where ``H`` puts it: a grid fitted across a distorting lens is a pixel or two off.
    The four sides' samples are taken in one go."""
    t = np.linspace(-FRAME_MM + 3, FRAME_MM - 3, 24)
    offsets = np.arange(-1.5, 1.51, 0.5)
    pts = []
    for axis in range(2):
        for sign in (-1, 1):
            line = np.zeros((len(t), 2))
            line[:, axis] = t
            normal = np.zeros(2)
            normal[1 - axis] = sign
            across = [line + (sign * FRAME_MM + o * sign) * normal * sign for o in offsets]
            inner = line + sign * (FRAME_MM - 3.2) * normal * sign
            pts += across + [inner]
    values = sample_at(gray, apply_h(H, np.vstack(pts)))[:, 0].reshape(4, len(offsets) + 1, len(t))
    on, inside = values[:, :-1].min(1), values[:, -1]
    return int(np.sum(inside - on > 20)) / (4 * len(t))


def _turned_like(quad: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """A found frame's corners (clockwise) in the order of the corners where a step from its
    neighbour expects them. A square's corners say nothing of which way its grid runs, and
    at 45 degrees "the corner nearest the top-left" is a tie: taken as found, a token's
    grid could be turned a quarter from its neighbour's, and stepping round the field would
    then give one token many places (until the search gave up: "more than 40 squares")."""
    shifts = [np.roll(quad, -k, 0) for k in range(4)]
    return min(shifts, key=lambda q: float(np.linalg.norm(q - expected, axis=1).sum()))


def _card_level(gray: np.ndarray, H: np.ndarray) -> tuple[float, float]:
    """The card's grey level inside a token's frame, beside the middle of each side (clear of
    the polygon and the chip spots), and its spread (median absolute deviation)."""
    v = sample_at(gray, apply_h(H, CARD_RING))[:, 0]
    level = float(np.median(v))
    return level, float(np.median(np.abs(v - level)))


def _drawn_card(gray: np.ndarray, dark: np.ndarray, H: np.ndarray, card: float) -> bool:
    """Plain card inside a place's frame (its spread within CARD_PLAIN of the field's card
    level ``card``) holding a drawing, as a token's inside does. A tablecloth's check may
    show a frame and be light, but is plain."""
    if _card_level(gray, H)[1] > CARD_PLAIN * card:
        return False
    ink = float((_inside(dark, apply_h(H, _square(INNER_MM)), 15) > 127).mean())
    return INK_INSIDE[0] <= ink <= INK_INSIDE[1]


def _looks_like_token(gray: np.ndarray, dark: np.ndarray, H: np.ndarray, card: float) -> bool:
    """A place whose frame showed too little to count may still hold a token that blur, a
    hand or the dark hid: its frame shows in part, the inside of its frame is card of the
    field's tokens' level (``card``) with a drawing on it (``_drawn_card``); the table
    beside a field is no card."""
    return abs(_card_level(gray, H)[0] / max(card, 1.0) - 1) <= CARD_LIKE and _drawn_card(gray, dark, H, card)


def _neighbours(p: Pos) -> tuple[Pos, ...]:
    """The four places beside ``p``: tokens touch by a side, never by a corner alone."""
    r, c = p
    return (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)


def _stepped(gray: np.ndarray, H: np.ndarray, dr: int, dc: int) -> np.ndarray | None:
    """The homography of the place ``dr`` rows and ``dc`` columns from the token of ``H``
    (token mm -> pixels of ``gray``); None when that place's centre lies outside the photo."""
    moved = H @ np.array([[1, 0, dc * PITCH_MM], [0, 1, dr * PITCH_MM], [0, 0, 1]])
    centre = apply_h(moved, np.zeros((1, 2)))[0]
    return moved if 0 <= centre[0] < gray.shape[1] and 0 <= centre[1] < gray.shape[0] else None


BEYOND_HIDDEN = ((-2, 0), (2, 0), (0, -2), (0, 2), (-1, -1), (-1, 1), (1, -1), (1, 1))  # steps across one place


def _unreached(gray: np.ndarray, dark: np.ndarray, local: Mapping[Pos, np.ndarray], card: float
               ) -> dict[Pos, np.ndarray]:
    """Tokens the field's growth could not reach, at the homography a step put them: places
    across one place from a token (two steps straight or one diagonal), next to none, whose
    frame shows as much as a grown neighbour's must (FRAME_SHOWS) and holds plain card with
    a drawing (``_drawn_card``). The field is connected, so the place between lies hidden
    (a cup, a hand over it); missed, such a token beyond the top row or left column numbers
    every token read a place off, silently (a cup over a field's top-left corner did).
    Its card's level is not compared with the field's: a strong frame is asked of it, as of
    any grown neighbour, and the light beside a cup or a hand differs."""
    out: dict[Pos, np.ndarray] = {}
    for (r, c), H in local.items():
        for dr, dc in BEYOND_HIDDEN:
            n = (r + dr, c + dc)
            if n in local or n in out or any(m in local for m in _neighbours(n)):
                continue
            Hn = _stepped(gray, H, dr, dc)
            if Hn is not None and _frame_evidence(gray, Hn) >= FRAME_SHOWS and _drawn_card(gray, dark, Hn, card):
                out[n] = Hn
    return out


def _token_places(gray: np.ndarray, dark: np.ndarray, found: Mapping[Pos, np.ndarray]
                  ) -> tuple[dict[Pos, np.ndarray], dict[Pos, np.ndarray]]:
    """Each token's place and its own homography (token mm -> pixels of ``gray``), grown
    outwards one pitch at a time from the reference token: a neighbour is a token when a
    frame found there lines up with the step, or its frame shows along most of its length.
    Stepping from each token's own frame, rather than from one grid for the whole field,
    keeps every step right under a distorting lens.
    Also the places that may hold a token all the same, at the homography the step put
    them: next to the field, its frame showing in part (``_looks_like_token``), or across a
    hidden place (``_unreached``). Missed, such a token would go unreported and, beyond the
    field's top row or left column, move every other token's contract position by one,
    silently; taken, the tablecloth could do the same (``_numbered``)."""
    if len(found) > MAX_TOKENS:
        raise ReadError("no_board", f"more than {MAX_TOKENS} squares line up in the photo: that is not a "
                                    "Geometrius field")
    quads = list(found.values())
    centres = np.array([q.mean(0) for q in quads])
    start = (0, 0) if (0, 0) in found else next(iter(found))
    local = {(0, 0): _own_frame(gray, _homography(_square(INNER_MM), found[start]), once=True)}
    partial: dict[Pos, np.ndarray] = {}  # places whose frame shows in part
    frontier = [(0, 0)]
    while frontier:
        r, c = frontier.pop(0)
        for n in _neighbours((r, c)):
            if n in local:  # (a place missed from one side may still show from another)
                continue
            H = _stepped(gray, local[(r, c)], n[0] - r, n[1] - c)
            if H is None:
                continue
            near = np.linalg.norm(apply_h(np.linalg.inv(H), centres), axis=1)
            if near.min() < 0.3 * PITCH_MM:
                quad = _turned_like(quads[int(np.argmin(near))], apply_h(H, _square(INNER_MM)))
                local[n] = _own_frame(gray, _homography(_square(INNER_MM), quad), once=True)
            elif (shows := _frame_evidence(gray, H)) >= FRAME_SHOWS:
                local[n] = _own_frame(gray, H)
            else:
                if shows >= FRAME_PART:
                    partial[n] = H
                continue
            frontier.append(n)
        if len(local) > MAX_TOKENS:
            raise ReadError("no_board", f"more than {MAX_TOKENS} squares line up in the photo: that is not a "
                                        "Geometrius field")
    return local, _doubtful_places(gray, dark, local, partial)


def _doubtful_places(gray: np.ndarray, dark: np.ndarray, local: Mapping[Pos, np.ndarray],
                     partial: Mapping[Pos, np.ndarray]) -> dict[Pos, np.ndarray]:
    """The places that may hold a token besides the tokens of ``local`` (place -> token mm
    -> pixels of ``gray``), at their homographies: of the places ``partial`` whose frame
    shows in part, those that look like a token (``_looks_like_token``), and the places
    across a hidden one (``_unreached``). The photo's search and the live read at a pose
    ask the same of them."""
    card = float(np.median([_card_level(gray, H)[0] for H in local.values()]))
    doubtful = {n: H for n, H in partial.items() if n not in local and _looks_like_token(gray, dark, H, card)}
    return doubtful | _unreached(gray, dark, local, card)


def _own_frame(gray: np.ndarray, H: np.ndarray, once: bool = False) -> np.ndarray:
    """The token's frame refitted from ``H`` (once when ``H`` came from the frame itself)."""
    refined = _fit_frame(gray, H) if once else _token_frame(gray, H)
    return H if refined is None else refined


def _field_homography(local: Mapping[Pos, np.ndarray]) -> np.ndarray:
    """One homography (grid mm -> pixels) through every token's frame corners."""
    src, dst = [], []
    for (r, c), H in local.items():
        src.append(_square(FRAME_MM) + [c * PITCH_MM, r * PITCH_MM])
        dst.append(apply_h(H, _square(FRAME_MM)))
    H, _ = cv2.findHomography(np.vstack(src), np.vstack(dst), 0)
    return H


# --- 2. the local frame -------------------------------------------------------------------

@lru_cache(maxsize=1024)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """60 random pairs of n points, the same every time for the same n (reproducible reads)."""
    rng = np.random.default_rng(n)
    return rng.integers(0, n, 60), rng.integers(0, n, 60)


def _robust_line(a: np.ndarray, p: np.ndarray, tol: float = 0.7) -> tuple[float, float] | None:
    """p = m a + b through most points: the pair of points with most others within ``tol``
    (a stack leaning over the frame, a hand, glare spoil part of it), then least squares."""
    n = len(a)
    if n < 8:
        return None
    i, j = _pairs(n)
    good = np.abs(a[i] - a[j]) > 0.25 * (a.max() - a.min())
    if not good.any():
        return None
    i, j = i[good], j[good]
    m = (p[j] - p[i]) / (a[j] - a[i])
    b = p[i] - m * a[i]
    counts = (np.abs(p[None, :] - (m[:, None] * a[None, :] + b[:, None])) < tol).sum(1)
    k = int(np.argmax(counts))
    keep = np.abs(p - (m[k] * a + b[k])) < tol
    if keep.sum() < max(8, n // 3):
        return None
    x, y = a[keep], p[keep]
    dx = x - x.mean()
    m_ = float((dx * (y - y.mean())).sum() / (dx * dx).sum())
    return m_, float(y.mean() - m_ * x.mean())


def _parallel_edges(t: np.ndarray, c: np.ndarray, outer: np.ndarray, tol: float
                    ) -> tuple[float, float] | None:
    """A side's centre line c = m t + b from its stroke's edges at ``t`` along it, ``c``
    across it, each moved by half the stroke's width towards the centre (``outer``: the
    outer edge's points, else the inner's): (m, b), or None. Each edge keeps its own offset because the width is
    only an estimate: motion blur widens a stroke by how far the streak runs across it, and
    a side with few profiles showing both edges takes its width from the token's other
    sides, so its two edges' points lie on two parallel lines. One line through both leaned
    wherever one edge showed at the side's ends and the other only in its middle (a hexagon's
    short sides read 3 degrees out). The direction, and so every angle, rests on each edge's
    own run of points; the offset is the two edges' mean (the width then cancels). RANSAC
    over pairs of points on one edge, then least squares. (The single line through all the
    points still says whether the side is straight: a bent side shows as one edge's points
    leaving it.)
    None too when either edge has fewer than PARALLEL_EDGE_OWN points, given or kept on the
    line RANSAC finds: with its own offset free, a few points on a short stretch add next to
    nothing to the direction, which would then rest on the other edge alone, and on a short
    side that edge's profiles all lie near a corner, where the next side's blurred ink shifts
    them (a P08's 5 mm side beside its reflex corner, 2.8 px/mm: outwards by 0.05 mm at one
    end, inwards by 0.07 at the other, its inner edge's 7 points only in its middle). Tied
    to that edge by the stroke's width, the few points pull the single line less far (that
    corner read 1.8 degrees out, not 2.0)."""
    n = len(t)
    if n < 8 or min(outer.sum(), (~outer).sum()) < PARALLEL_EDGE_OWN:
        return None
    i, j = _pairs(n)
    good = (outer[i] == outer[j]) & (np.abs(t[i] - t[j]) > 0.25 * (t.max() - t.min()))
    if not good.any():
        return None
    i, j = i[good], j[good]
    m = (c[j] - c[i]) / (t[j] - t[i])
    rest = c[None, :] - m[:, None] * t[None, :]  # each hypothesis's offsets
    counts = np.zeros(len(m), np.intp)
    offset = {}
    for edge in (True, False):  # each edge's offset: the median of its own points'
        own = rest[:, outer == edge]
        offset[edge] = _median(own, axis=1)
        counts += (np.abs(own - offset[edge][:, None]) < tol).sum(1)
    best = int(np.argmax(counts))
    keep = np.abs(rest[best] - np.where(outer, offset[True][best], offset[False][best])) < tol
    if keep.sum() < max(8, n // 3) or min((keep & outer).sum(), (keep & ~outer).sum()) < PARALLEL_EDGE_OWN:
        return None  # the guard above holds for the points each edge keeps on its line too
    design = np.column_stack([t[keep], outer[keep], ~outer[keep]]).astype(np.float64)
    (slope, outer_offset, inner_offset), *_ = np.linalg.lstsq(design, c[keep], rcond=None)
    return float(slope), float((outer_offset + inner_offset) / 2)


def _fit_frame(gray: np.ndarray, H: np.ndarray, blurred: bool = False) -> np.ndarray | None:
    """Refit one token's frame in its top-down view; the token's own homography, or None.
    ``blurred``: each line placed by the blurred printed frame's profile (the polygon is
    measured through this homography; finding the field's tokens needs no such care)."""
    half = FRAME_MM + FRAME_VIEW_MM
    view = _warp(gray, H, half, FRAME_PPM).astype(np.float32)
    view = cv2.GaussianBlur(view, (0, 0), 0.6)
    to_photo = _view_to_photo(H, half, FRAME_PPM)
    n = view.shape[0]
    to_px = lambda mm: (mm + half) * FRAME_PPM - 0.5  # noqa: E731
    lines = []
    along = np.arange(to_px(-FRAME_MM + 3), to_px(FRAME_MM - 3), 1.0).astype(int)
    for axis in range(2):
        for sign in (-1, 1):
            expect = to_px(sign * FRAME_MM)
            lo, hi = int(expect - 3.5 * FRAME_PPM), int(expect + 3.5 * FRAME_PPM) + 1
            lo, hi = max(lo, 1), min(hi, n - 1)
            band = view[lo:hi, along] if axis == 0 else view[along, lo:hi].T  # rows: across the line
            # The frame is the first dark line met going outwards from the card; the gap
            # between tokens beyond it may be darker still (a dark table, a shadow).
            inward = band[::-1] if sign < 0 else band
            card = inward[:3].mean(0)
            dark = inward < 0.5 * (card + inward.min(0))
            first = np.argmax(dark, axis=0)
            window = np.arange(int(1.2 * FRAME_PPM) + 1)
            rows_ = np.clip(first[None, :] + window[:, None], 0, inward.shape[0] - 1)
            k_in = rows_[np.argmin(np.take_along_axis(inward, rows_, 0), axis=0), np.arange(inward.shape[1])]
            k = (inward.shape[0] - 1 - k_in) if sign < 0 else k_in
            ok = (k > 0) & (k < band.shape[0] - 1) & dark.any(0)
            cols = np.arange(band.shape[1])
            y0, y1 = band[np.maximum(k - 1, 0), cols], band[k, cols]
            y2 = band[np.minimum(k + 1, band.shape[0] - 1), cols]
            denom = y0 - 2 * y1 + y2
            off = np.where(np.abs(denom) > 1e-6, 0.5 * (y0 - y2) / np.where(np.abs(denom) > 1e-6, denom, 1), 0)
            depth = np.maximum(_median(band, axis=0), card) - y1  # blur may merge the line with a dark gap
            ok &= depth > 15
            pos = lo + k + np.clip(off, -1, 1)
            if ok.sum() < 8:
                return None
            fitted = _robust_line(along[ok].astype(np.float64), pos[ok])
            if fitted is None:
                return None
            if blurred:
                fitted = _blurred_frame_line(view, (to_photo, gray.shape), axis, sign, along[ok], *fitted)
            lines.append((axis, *fitted))
    # Corners: intersect x-lines (axis 1: x = m y + b) with y-lines (axis 0: y = m x + b).
    (_, mt, bt), (_, mb, bb), (_, ml, bl), (_, mr, br) = lines

    def meet(my, by, mx, bx):
        # y = my x + by ; x = mx y + bx
        y = (my * bx + by) / (1 - my * mx)
        return np.array([mx * y + bx, y])

    corners_px = np.array([meet(mt, bt, ml, bl), meet(mt, bt, mr, br), meet(mb, bb, mr, br), meet(mb, bb, ml, bl)])
    corners_mm = (corners_px + 0.5) / FRAME_PPM - half
    if np.abs(corners_mm - _square(FRAME_MM)).max() > FRAME_SHIFT_MM:
        return None
    return H @ _homography(_square(FRAME_MM), corners_mm)


def _blurred_frame_line(view: np.ndarray, photo: tuple[np.ndarray, tuple[int, ...]], axis: int, sign: int,
                        along: np.ndarray, m: float, b: float) -> tuple[float, float]:
    """A frame line (``axis`` 0: y = m x + b, 1: x = m y + b, pixels of the frame's top-down
    ``view``; ``sign``: which way is outwards) moved to where the printed frame, blurred,
    fits the profile across it best (``geometrius_frame``): blur running the line, the card
    beyond it and the dark gap together moves the darkest point outwards, up to the gap.
    ``photo``: the view's pixels -> photo pixels homography and the photo's shape. A profile
    the photo's edge cuts keeps the line as found: the view repeats the photo's last pixels
    past its edge, a flat run no printed profile fits (the line moved by over a millimetre,
    the token's frame sheared, its angles a degree off)."""
    s = np.arange(-FRAME_PROFILE_MM, FRAME_PROFILE_MM + 1e-9, 1 / FRAME_PPM)
    across = m * along[None, :] + b + sign * s[:, None] * FRAME_PPM
    n = view.shape[0]
    if (across < 0).any() or (across > n - 1).any():  # the line is far from where the view expected it
        return m, b
    to_photo, shape = photo
    cols = np.broadcast_to(along[None, :], across.shape)
    # The samples fill a parallelogram of the view, which the homography carries to a convex
    # quadrilateral: all of them lie in the photo when its four corners do.
    ends = np.ix_([0, -1], [0, -1])
    corners = [cols[ends], across[ends]]
    at_px = apply_h(to_photo, np.stack(corners if axis == 0 else corners[::-1], axis=-1))
    if (at_px < 0).any() or (at_px > [shape[1] - 1, shape[0] - 1]).any():
        return m, b
    lo = np.clip(np.floor(across).astype(int), 0, n - 2)
    frac = np.clip(across - lo, 0, 1)
    if axis == 0:
        values = view[lo, cols] * (1 - frac) + view[lo + 1, cols] * frac
    else:
        values = view[cols, lo] * (1 - frac) + view[cols, lo + 1] * frac
    profile = _median(values, axis=1)  # a chip or a hand over part of the line is outvoted
    at = frame_line(profile, s, FRAME_PROFILE_MM - FRAME_EDGES_MM[-1] / 2, FRAME_EDGES_MM)
    return (m, b) if at is None else (m, b + sign * at * FRAME_PPM)


def _token_frame(gray: np.ndarray, H: np.ndarray, blurred: bool = False) -> np.ndarray | None:
    """A token's own homography: its frame fitted where the grid puts it, then fitted again
    where the first fit found it (the grid may be millimetres off at a far corner).
    ``blurred``: the second fit places each line by the blurred printed frame's profile
    (``_blurred_frame_line``), for a token whose polygon is to be measured; the first
    only needs to land near the frame."""
    first = _fit_frame(gray, H)
    if first is None:
        return None
    second = _fit_frame(gray, first, blurred)
    return first if second is None else second


# --- 3. the polygon -----------------------------------------------------------------------

def _ink(view_red: np.ndarray) -> np.ndarray:
    """Darkness of the ink (0 card .. 1 black) in the red channel of a token's top-down view,
    against the card's brightness nearby (the brightest within a few millimetres), so a
    shadow's edge or a light fall-off across the token is not taken for ink."""
    v = view_red.astype(np.float32)
    k = int(round(CARD_NEAR_MM * PPM)) | 1
    # The brightest nearby is the same taken on the view's own levels (quicker than on floats).
    card = cv2.dilate(view_red, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))).astype(np.float32)
    card = cv2.GaussianBlur(card, (0, 0), k / 3)
    return np.clip((card - v) / np.maximum(card * 0.75, 1.0), 0, 1)


@lru_cache(maxsize=2)
def _beyond(n: int, half: float) -> np.ndarray:
    """Pixels of an n x n top-down view farther from the middle than the polygon reaches."""
    yy, xx = np.mgrid[0:n, 0:n]
    return np.hypot((xx + 0.5) / PPM - half, (yy + 0.5) / PPM - half) > POLY_RADIUS_MM + 0.9


OUTLINE_INK = 0.55  # a sharp stroke's ink is darker than this all along the outline
OUTLINE_SHARE = 0.6  # ... a blurred one's, this share of its core's darkness
STROKE_CORE_QUANTILE = 0.97  # the stroke's core darkness: the darkest few percent of the polygon's circle
OUTLINE_RETRIES = (0.7, 0.5)  # fainter thresholds (shares of the first) for an outline broken somewhere
BROKEN_REACH_MM = 3.0  # a silhouette reaching this much less than the printed polygon leaked
# ... and one this narrow on average (2 area / perimeter) is a stretch of the stroke itself, left
# by the opening where a blurred stroke is thick: the thinnest catalogue polygon (Q11) is 2.9 mm
# wide on average (more with the stroke's outer half); a stroke, even blurred, under 2 mm.
LEAKED_WIDTH_MM = 2.4


def _ink_threshold(ink: np.ndarray) -> float:
    """The darkness above which ``ink`` (the pixels where the polygon may be) is the outline's
    stroke. Blur spreads a stroke's ink and lightens its core (a defocused 0.9 mm stroke peaks
    at two thirds of its printed darkness): the outline is what is over the stroke's own core
    darkness times OUTLINE_SHARE, but never fainter than a sharp stroke's threshold."""
    return min(OUTLINE_INK, OUTLINE_SHARE * _quantile(ink, STROKE_CORE_QUANTILE))


def _silhouette(ink: np.ndarray, threshold: float, beyond: np.ndarray) -> np.ndarray | None:
    """The largest solid region inside the ink's outline (darker than ``threshold``): the
    outside flooded from the rim, what is left opened a little to shave the tick marks."""
    n = ink.shape[0]
    mask = (ink > threshold).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    mask[beyond] = 0
    flood = mask.copy()
    outside = np.zeros((n + 2, n + 2), np.uint8)
    cv2.floodFill(flood, outside, (0, 0), 2)
    solid = (flood != 2).astype(np.uint8)
    k = max(3, int(round(1.3 * PPM)) | 1)
    solid = cv2.morphologyEx(solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    contours, _ = cv2.findContours(solid, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    c = max(contours, key=cv2.contourArea)
    return c if cv2.contourArea(c) >= (3 * PPM) ** 2 else None


def _outline(ink: np.ndarray, half: float) -> np.ndarray | None:
    """The polygon's rough corners (top-down pixels) from the silhouette of its outline (the
    polygon with its outline, ticks shaved off)."""
    beyond = _beyond(ink.shape[0], half)
    threshold = _ink_threshold(ink[~beyond])
    # A stretch of the stroke washed out by glare (or lost in a shadow's edge) breaks the
    # outline: the flood then leaks inside and leaves a scrap. Every polygon is printed
    # reaching POLY_RADIUS_MM from its middle, so a scrap is known (too short, or too narrow:
    # a stretch of the stroke itself) and a fainter threshold tried.
    first = None
    for share in (1.0,) + OUTLINE_RETRIES:
        c = _silhouette(ink, threshold * share, beyond)
        first = c if first is None else first
        if c is not None:
            pts = c[:, 0, :].astype(np.float64)
            if np.linalg.norm(pts - (pts.min(0) + pts.max(0)) / 2, axis=1).max() / PPM >= \
                    POLY_RADIUS_MM - BROKEN_REACH_MM and \
                    2 * cv2.contourArea(c) / cv2.arcLength(c, True) / PPM >= LEAKED_WIDTH_MM:
                break
    else:
        c = first  # none looked whole: the first found, as a sharp outline gives it
    if c is None:
        return None
    approx = cv2.approxPolyDP(c, 0.6 * PPM, True)[:, 0, :].astype(np.float64)
    return approx if len(approx) >= 3 else None


def _centred_on_polygon(red: np.ndarray, H: np.ndarray) -> np.ndarray:
    """``H`` (token mm -> photo px) moved so that the token's origin is the middle of its
    polygon's bounding box, where every polygon is printed. For a token whose own frame was
    not found: the grid alone may misplace it by up to FRAME_SHIFT_MM, which would put part
    of the polygon outside the view it is measured in. The polygon is the largest inked
    region that does not reach the view's rim (a neighbour's frame or a stack may)."""
    half = POLY_RADIUS_MM + FRAME_SHIFT_MM
    ink = _ink(_warp(red, H, half, PPM))
    mask = (ink > _ink_threshold(ink.ravel())).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    n = ink.shape[0]
    x, y, w, h, area = (stats[1:, k] for k in range(5))
    inner = (x > 0) & (y > 0) & (x + w < n) & (y + h < n) & (np.maximum(w, h) >= POLY_RADIUS_MM * PPM)
    if count < 2 or not inner.any():
        return H
    k = int(np.argmax(np.where(inner, area, -1)))
    middle = (np.array([x[k] + w[k] / 2, y[k] + h[k] / 2]) / PPM) - half
    return H @ np.array([[1, 0, middle[0]], [0, 1, middle[1]], [0, 0, 1]])


@dataclass(frozen=True)
class _InkPoints:
    """The inked pixels of a top-down view (x, y, darkness), gathered once for all fits."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray

    @staticmethod
    def of(ink: np.ndarray) -> "_InkPoints":
        ys, xs = np.nonzero(ink > 0.3)
        return _InkPoints(xs.astype(np.float64), ys.astype(np.float64), ink[ys, xs].astype(np.float64))


def _fit_sides(ink: _InkPoints, a: np.ndarray, b: np.ndarray, trim: np.ndarray,
               band: float) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """A straight line through the ink along each segment a[k]-b[k] (pixels): (point, unit
    direction), or None. The ink's offset from the segment is fitted as a straight function
    of the position along it, weighted by darkness: marks crossing the side (ticks) add as
    much on each side. ``trim``: how much of each end to leave out (arcs in the corners)."""
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.maximum(length, 1e-12)[:, None]
    normal = np.column_stack([-u[:, 1], u[:, 0]])
    rx, ry = ink.x[None, :] - a[:, 0, None], ink.y[None, :] - a[:, 1, None]
    t = rx * u[:, 0, None] + ry * u[:, 1, None]
    s = rx * normal[:, 0, None] + ry * normal[:, 1, None]
    pick = (t > trim[:, 0, None]) & (t < (length - trim[:, 1])[:, None]) & (np.abs(s) < band)
    w = pick * ink.w[None, :]
    wt = w * t
    sw, st, ss = w.sum(1), wt.sum(1), (w * s).sum(1)
    stt, sts = (wt * t).sum(1), (wt * s).sum(1)
    det = sw * stt - st * st
    valid = (length >= 1e-6) & (pick.sum(1) >= 6) & (sw >= 3) & (det > 1e-9)
    fits: list[tuple[np.ndarray, np.ndarray] | None] = []
    for i in range(len(a)):
        if not valid[i]:
            fits.append(None)
            continue
        c1 = (sw[i] * sts[i] - st[i] * ss[i]) / det[i]
        c0 = (ss[i] - c1 * st[i]) / sw[i]
        direction = u[i] + normal[i] * c1
        fits.append((a[i] + normal[i] * c0, direction / np.linalg.norm(direction)))
    return fits


def _meet(p1, d1, p2, d2) -> np.ndarray | None:
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    t = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / den
    return p1 + t * d1


def _next(x: np.ndarray) -> np.ndarray:
    """``np.roll(x, -1, 0)``: each corner's (or side's) successor round a polygon, without
    ``np.roll``'s overhead (the corner fits call it thousands of times a photo)."""
    return np.concatenate((x[1:], x[:1]))


def _prev(x: np.ndarray) -> np.ndarray:
    """``np.roll(x, 1, 0)``: each corner's (or side's) predecessor round a polygon."""
    return np.concatenate((x[-1:], x[:-1]))


def _simple(v: np.ndarray) -> bool:
    """Whether the polygon's sides that are not neighbours share no point (the rules'
    polygon check, for every pair of sides at once)."""
    n = len(v)
    p, q = v, _next(v)
    i, j = np.triu_indices(n, 2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    if not len(i):
        return True
    eps = 1e-12 * float((np.hypot(*(v - v[0]).T)).max()) ** 2
    def cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # (a - o) x (b - o), row by row
        return (a[:, 0] - o[:, 0]) * (b[:, 1] - o[:, 1]) - (a[:, 1] - o[:, 1]) * (b[:, 0] - o[:, 0])

    d1, d2 = cross(p[j], q[j], p[i]), cross(p[j], q[j], q[i])
    d3, d4 = cross(p[i], q[i], p[j]), cross(p[i], q[i], q[j])
    crossing = (((d1 > eps) & (d2 < -eps)) | ((d1 < -eps) & (d2 > eps))) & \
        (((d3 > eps) & (d4 < -eps)) | ((d3 < -eps) & (d4 > eps)))
    between = lambda x, a, b: ((x - a) * (x - b)).sum(1) <= 0  # noqa: E731
    touching = ((np.abs(d1) <= eps) & between(p[i], p[j], q[j])) | ((np.abs(d2) <= eps) & between(q[i], p[j], q[j])) \
        | ((np.abs(d3) <= eps) & between(p[j], p[i], q[i])) | ((np.abs(d4) <= eps) & between(q[j], p[i], q[i]))
    return not (crossing | touching).any()


def _interior_angles(v: np.ndarray) -> np.ndarray:
    """Interior angles (degrees) at the vertices of a polygon given in y-down pixels, in the
    vertices' own order whichever way they walk; none for a polygon that is not simple."""
    up = np.asarray(v, np.float64) * [1, -1]
    if len(up) < 3 or not np.isfinite(up).all():
        return np.array([])
    after = _next(up)
    edges = after - up
    if (np.abs(edges).sum(1) == 0).any():
        return np.array([])
    before = _prev(edges)
    turn = np.degrees(np.arctan2(before[:, 0] * edges[:, 1] - before[:, 1] * edges[:, 0], (before * edges).sum(1)))
    # Turning one way all round, once: convex, so simple; anything else is checked side by side.
    convex = ((turn > 0).all() or (turn < 0).all()) and abs(abs(turn.sum()) - 360) < 1e-6
    if not convex and not _simple(up):
        return np.array([])
    area = float(np.sum(up[:, 0] * after[:, 1] - after[:, 0] * up[:, 1]))
    if area == 0:
        return np.array([])
    angles = 180 - turn if area > 0 else 180 + turn  # walking clockwise, each turn is the other way
    if ((angles <= 0) | (angles >= 360)).any():
        return np.array([])
    return angles


def _merge_short(v: np.ndarray, shortest: float) -> np.ndarray:
    """Replace the two ends of every side shorter than ``shortest`` by their midpoint."""
    pts = list(v)
    while len(pts) > 3:
        n = len(pts)
        sides = [float(np.linalg.norm(pts[(i + 1) % n] - pts[i])) for i in range(n)]
        i = int(np.argmin(sides))
        if sides[i] >= shortest:
            break
        j = (i + 1) % n
        pts[i] = (pts[i] + pts[j]) / 2
        del pts[j]
    return np.array(pts)


def _merge_side(v: np.ndarray, angles: np.ndarray, i: int) -> np.ndarray:
    """The polygon with side i (v[i] -> v[i+1]) merged into a corner: of its two ends the one
    that turns more is kept (a tick, a stack's clearing or a split tip makes up the nearly
    straight one; the other is the polygon's corner)."""
    j = (i + 1) % len(v)
    if len(angles) == len(v) and abs(angles[i] - 180) < abs(angles[j] - 180):
        j = i
    return np.delete(v, j, axis=0)


def _refine(ink: _InkPoints, corners: np.ndarray) -> np.ndarray | None:
    """Corners from lines fitted to each side's ink. A side too short to fit (or whose line
    meets its neighbours in no simple polygon), a corner that is nearly straight or a side
    that shrinks to nothing is merged away and the rest refitted."""
    v = _merge_short(corners.copy(), 2.0 * PPM)
    angles = _interior_angles(v)
    # A rough corner this nearly straight is a tick's or an arc's bump on one side: fitting the
    # side as two short halves (less ink, a stack's clearing nearby) could turn the polygon's
    # real corner next to it into the straight one.
    while len(angles) == len(v) > 3 and np.abs(angles - 180).min() < ROUGH_STRAIGHT_DEG:
        v = np.delete(v, int(np.argmin(np.abs(angles - 180))), axis=0)
        angles = _interior_angles(v)
    last = None
    for _ in range(12):
        n = len(v)
        if n < 3:
            return None
        if len(angles) != n:
            angles = np.full(n, 180.0)
        # Right angles carry a red mark (no ink in the red channel): their sides are clean
        # almost to the corner. Other corners carry arcs, which the trim must clear.
        marked = np.abs(angles - 90) > 8
        ends = _next(v)
        lengths = np.linalg.norm(ends - v, axis=1)
        # An arc is drawn within a quarter of the shorter side at its corner, and within ARC_MM.
        arc = np.minimum(ARC_MM * PPM, 0.25 * np.minimum(lengths, _prev(lengths))) + ARC_CLEAR_MM * PPM
        clear = np.where(marked, arc, CORNER_CLEAR_MM * PPM)
        trim = np.minimum(np.column_stack([clear, _next(clear)]), 0.4 * lengths[:, None])
        fits = _fit_sides(ink, v, ends, trim, 1.3 * PPM)
        for band in (0.9, 0.75):  # narrow the band round the line found
            found = [i for i, f in enumerate(fits) if f is not None]
            if not found:
                break
            on_line = lambda q, f: f[0] + f[1] * ((q - f[0]) @ f[1])  # noqa: E731
            again = _fit_sides(ink, np.array([on_line(v[i], fits[i]) for i in found]),
                               np.array([on_line(ends[i], fits[i]) for i in found]), trim[found], band * PPM)
            for i, f in zip(found, again):
                fits[i] = f or fits[i]
        failed = [i for i, f in enumerate(fits) if f is None]
        if failed:
            v = _merge_side(v, angles, failed[0])
            angles = _interior_angles(v)
            continue
        turns = [abs(math.degrees(math.atan2(fits[i - 1][1][0] * fits[i][1][1] - fits[i - 1][1][1] * fits[i][1][0],
                                              fits[i - 1][1] @ fits[i][1]))) for i in range(n)]
        if min(turns) < STRAIGHT_DEG:  # sides walk on nearly straight through this corner: none
            v = np.delete(v, int(np.argmin(turns)), axis=0)
            angles = _interior_angles(v)
            continue
        new = [_meet(*fits[i - 1], *fits[i]) for i in range(n)]
        met = None if any(p is None for p in new) else np.array(new)
        if met is None or len(_interior_angles(met)) != n:
            # Lines that meet in no simple polygon: the shortest side's fit strayed (a sharp
            # corner's tip, split in two by the rough outline, gives it too little ink).
            v = _merge_side(v, angles, int(np.argmin(lengths)))
            angles = _interior_angles(v)
            continue
        new = met
        angles = _interior_angles(new)
        sides = np.linalg.norm(new - _next(new), axis=1)
        straight = np.abs(angles - 180) < STRAIGHT_DEG
        short = sides < 1.5 * PPM
        if not straight.any() and not short.any():
            if np.array_equal(np.abs(angles - 90) > 8, marked) and len(v) == n and \
                    float(np.abs(new - v).max()) < 0.25:
                return new  # the corners stay put (the photo then gives the sides' last fit)
            v = last = new  # refit round the lines found (and with the corners' kinds as now seen)
            continue
        if straight.any():
            v = np.delete(new, int(np.argmin(np.abs(angles - 180))), axis=0)
        else:
            v = np.delete(new, int(np.argmin(sides)), axis=0)
        angles = _interior_angles(v)
    return last


# --- 3b. the sides again, in the photo itself ------------------------------------------------
#
# The top-down view is resampled once already, at a fixed scale; the last fit samples the
# photo itself through the token's homography instead, across each side, at a twentieth of a
# millimetre. Each profile gives the stroke's two edges (where the darkness crosses half way
# from the stroke's core to the card beside it), so blur, which widens a stroke evenly, moves
# neither its middle nor its direction. A profile counts only where no other stroke can reach
# it: not the neighbouring sides near a corner (whatever the corner's angle, reflex ones too),
# not the angle arcs or right-angle marks inside a corner, not a stack. Ticks crossing a side
# stand out by a stroke's width and are dropped as outliers; the stroke's width that turns an
# edge into the side's centre line is taken away from the side's middle, where the ticks are
# (the token's own, printed the same all round, when a short side shows too little of it).
# Near a corner the other side's blurred ink darkens a profile's core: there "half way" is
# taken at the side's usual contrast, else the edge would be pulled in towards the corner.
# Every side's profiles are measured in one table (a row per profile), and the fit is done
# a second time only when the first moved a corner enough to change what is clear.

SIDE_STEP_MM = 0.15  # profiles across a side, this far apart
PROFILE_MM = 1.6  # each profile reaches this far either side of the stroke's centre line
PROFILE_STEP_MM = 0.05
STROKE_HALF_MM = 0.45  # half the outline's printed width
STROKE_CLEAR_MM = 0.5  # beyond its half width, another stroke's blur must leave a profile this much room
EDGE_SEEN_MM = 1.0  # a profile's edge lies within this of the centre line: only that far must be clear
EDGE_TOLERANCE_MM = 0.12  # an edge point this far off its side's line is an outlier (a tick, a speck)
TICK_FLANK_MM = (0.75, 0.95)  # a tick (1.1 mm each way) still inks this far out, where the stroke's blur fades
TICK_WIDER_MM = 0.35  # a profile this much wider than the stroke crosses a tick
EDGE_CONTRAST = 0.2  # the stroke's core must be this much darker than the card beside it (relative)
CORNER_NEAR_MM = 2.0  # a profile this near a corner may see the other side's ink in its core
PHOTO_FIT_MOVE_MM = 2.0  # a corner moving farther than this was not refined but lost
PARALLEL_EDGE_OWN = 8  # each edge needs this many points for the side's direction to rest on its own line
PHOTO_FIT_SETTLED_MM = 0.05  # corners moving less than this leave every profile's clearance as it was
HIDDEN_STRETCH_MM = 3.0  # a stack hiding this much of the outline may hide a short side and its corners
CROWDED_SHARE = 0.5  # a side this much of which lies too near a stack to be fitted is crowded
LOOSE = 4.0  # a crowded side's corners and lengths are compared with this many times the tolerance
SIZE_TOLERANCE_MM = 1.0  # the polygon's printed reach, as measured through the token's frame
STRAIGHT_SHARE = 0.6  # a side with fewer of its edge points on its line bends: a corner may be missing


def _near_other_side(pts: np.ndarray, own: np.ndarray, a: np.ndarray, b: np.ndarray, reach: float) -> np.ndarray:
    """Whether each point lies within ``reach`` of a segment a[k]-b[k] other than its ``own``.
    Only the points within ``reach`` of a segment's bounding box can be: a side's profiles
    are near few of the others (its neighbours at the corners), so each segment measures
    the distance to those alone."""
    near = np.zeros(len(pts), bool)
    lo, hi = np.minimum(a, b) - reach, np.maximum(a, b) + reach
    x, y = pts[:, 0], pts[:, 1]
    for k, (dx, dy) in enumerate(b - a):
        boxed = (x >= lo[k, 0]) & (x <= hi[k, 0]) & (y >= lo[k, 1]) & (y <= hi[k, 1])
        cand = np.flatnonzero(boxed & (own != k) & ~near)
        if not len(cand):
            continue
        rx, ry = x[cand] - a[k, 0], y[cand] - a[k, 1]
        t = np.clip((rx * dx + ry * dy) / max(dx * dx + dy * dy, 1e-12), 0, 1)
        near[cand] = np.hypot(rx - t * dx, ry - t * dy) < reach
    return near


def _in_hidden(pts: np.ndarray, hide: np.ndarray | None, margin: float) -> np.ndarray:
    """Points within ``margin`` of a convex region (a stack's outline, token mm), or inside it."""
    out = np.zeros(len(pts), bool)
    if hide is None:
        return out
    middle = hide.mean(0)
    near = np.hypot(*(pts - middle).T) <= np.hypot(*(hide - middle).T).max() + margin
    if not near.any():
        return out
    pts = pts[near]
    a, b = hide, _next(hide)
    d = b - a
    normal = np.column_stack([d[:, 1], -d[:, 0]]) / np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-12)[:, None]
    inward = np.sign(((hide.mean(0) - a) * normal).sum(1))  # the outline may walk either way
    signed = ((pts[:, None, :] - a[None]) * (normal * inward[:, None])[None]).sum(2)  # > 0 inside
    out[near] = signed.min(1) > -margin
    return out


def _median(x: np.ndarray, axis: int) -> np.ndarray:
    """``np.median(x, axis)``, the same values, without its overhead (it is taken per side of
    every frame and every side's RANSAC hypotheses, many times a photo). ``x`` must not be
    empty along ``axis`` (every caller keeps at least 8 points)."""
    n = x.shape[axis]
    mid = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    return np.take(np.partition(x, mid, axis=axis), mid, axis=axis).mean(axis)


def _quantile(x: np.ndarray, q: float) -> float:
    """``np.percentile(x, 100 q)`` (linear between order statistics), without its overhead:
    only the two order statistics it lies between are placed (no whole sort)."""
    at = q * (len(x) - 1)
    lo = int(at)
    hi = min(lo + 1, len(x) - 1)
    x = np.partition(x, [lo, hi])
    return float(x[lo] + (at - lo) * (x[hi] - x[lo]))


def _per_side(x: np.ndarray, side: np.ndarray, n: int, among: np.ndarray, q: float, least: int) -> np.ndarray:
    """Each of the ``n`` sides' ``q`` quantile of ``x`` over its profiles ``among`` (over all
    its profiles when fewer than ``least`` of them are)."""
    out = np.empty(n)
    for i in range(n):
        own = side == i
        out[i] = _quantile(x[own & among] if (own & among).sum() >= least else x[own], q)
    return out


def _ticks(values: np.ndarray, offs: np.ndarray, plain: np.ndarray, side: np.ndarray, n: int) -> np.ndarray:
    """Profiles across a tick mark: ink on both sides of the stroke, past its edges (a tick
    crosses the side, 1.1 mm each way), and their neighbours (the tick's blurred edges).
    Each edge there lies a tick's length out, both the same way for the centre line: a run
    of them could outvote the stroke on a short side. ``plain``: the profiles no other
    stroke reaches, whose flanks show how far blur spreads the side's own ink; ``side``:
    which of the ``n`` sides each profile crosses."""
    core = np.abs(offs) <= STROKE_HALF_MM + 0.15
    ink = values[:, core].min(1)
    k = int(0.9 * (values.shape[1] - 1))
    card = np.partition(values, k, axis=1)[:, k]
    dark = (card[:, None] - values) / np.maximum(card - ink, 1.0)[:, None]
    flank = (np.abs(offs) >= TICK_FLANK_MM[0]) & (np.abs(offs) <= TICK_FLANK_MM[1])
    # Against the side's own plain flanks: blur spreads the stroke's ink into them all along.
    tick = np.ones(len(values), bool)
    for way in (offs > 0, offs < 0):
        shade = dark[:, flank & way].mean(1)
        tick &= shade > _per_side(shade, side, n, plain, 0.3, 4)[side] + 0.3
    spread = tick.copy()
    same = side[1:] == side[:-1]
    spread[1:] |= tick[:-1] & same
    spread[:-1] |= tick[1:] & same
    return spread


def _edges(values: np.ndarray, offs: np.ndarray, sign: int, side: np.ndarray, n: int, cornered: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each profile's stroke edge on one side (``sign`` +1 outwards, -1 inwards), in mm from
    the centre line, where the darkness crosses half way to the card; and whether it was seen.
    ``side``: which of the ``n`` sides each profile crosses; ``cornered``: the profiles near
    a corner, where the other side's blurred ink darkens the core: half way to that would
    pull the edge in, so half way at the side's usual contrast counts there."""
    core = np.flatnonzero(np.abs(offs) <= STROKE_HALF_MM + 0.15)  # one run of samples round the centre line
    stroke = values[:, core[0]:core[-1] + 1]
    ink = stroke.min(1)
    centre = core[0] + np.argmin(stroke, axis=1)
    beyond = (sign * offs >= 2 * STROKE_HALF_MM) & (sign * offs <= PROFILE_MM)
    flank = values[:, beyond]
    card = np.partition(flank, int(0.8 * (flank.shape[1] - 1)), axis=1)[:, int(0.8 * (flank.shape[1] - 1))]
    contrast = (card - ink) / np.maximum(card, 1.0)
    usual = _per_side(contrast, side, n, ~cornered, 0.5, 3)
    half = card * (1 - 0.5 * np.where(cornered, np.minimum(contrast, usual[side]), contrast))
    idx = np.arange(len(offs))
    ahead = (sign * (idx[None] - centre[:, None]) > 0) & (values >= half[:, None])
    # the first sample past half way going from the core in the edge's direction
    order = idx if sign > 0 else idx[::-1]
    hit = ahead if sign > 0 else ahead[:, ::-1]
    j = order[np.argmax(hit, axis=1)]
    seen = hit.any(1) & (card - ink > EDGE_CONTRAST * np.maximum(card, 1.0))
    prev = np.clip(j - sign, 0, len(offs) - 1)
    rows = np.arange(len(values))
    v0, v1 = values[rows, prev], values[rows, j]
    frac = np.clip((half - v0) / np.where(np.abs(v1 - v0) > 1e-6, v1 - v0, 1e-6), 0, 1)
    edge = offs[prev] + frac * (offs[j] - offs[prev])
    return edge, seen & (sign * edge > 0)


def _photo_sides(red: np.ndarray, H: np.ndarray, v: np.ndarray, hide: np.ndarray | None
                 ) -> tuple[np.ndarray, float] | None:
    """The polygon's corners (token mm, y down) refitted side by side on the photo's red
    channel (``H``: token mm -> photo px), starting from corners ``v``, and the share of the
    edge points on their side's line on the least straight side (a corner merged away
    bends a side); None when a side cannot be fitted so (the corners found before stand)."""
    n = len(v)
    a, b = v, _next(v)
    lengths = np.linalg.norm(b - a, axis=1)
    if lengths.min() < 1e-6:
        return None
    u = (b - a) / lengths[:, None]
    normal = np.column_stack([-u[:, 1], u[:, 0]])
    walk = float(np.sum(a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]))
    normal *= -1.0 if walk > 0 else 1.0  # outwards (y down: a positive walk turns clockwise on screen)
    # Inside each corner, an arc or a right-angle mark within a quarter of the shorter side.
    mark = np.minimum(ARC_MM, 0.25 * np.minimum(lengths, _prev(lengths))) + ARC_CLEAR_MM
    offs = np.arange(-PROFILE_MM, PROFILE_MM + 1e-9, PROFILE_STEP_MM)
    check = np.linspace(0.0, EDGE_SEEN_MM, 6)
    signs = np.array([1.0, -1.0])
    h, w = red.shape[:2]
    # Every side's profiles in one table, a row per profile: ``side`` says whose, ``t`` where.
    steps = [np.arange(0.0, length + 1e-9, SIDE_STEP_MM) for length in lengths]
    if min(len(ts) for ts in steps) < 4:
        return None
    side = np.repeat(np.arange(n), [len(ts) for ts in steps])
    t_all = np.concatenate(steps)
    base = a[side] + t_all[:, None] * u[side]
    # Both ways out (outwards, then inwards): how near any other side, or a stack, comes.
    across = signs[:, None, None, None] * check[None, None, :, None] * normal[side][None, :, None, :]
    probe = (base[None, :, None, :] + across).reshape(-1, 2)
    near = _near_other_side(probe, np.tile(np.repeat(side, len(check)), 2), a, b, STROKE_HALF_MM + STROKE_CLEAR_MM)
    near |= _in_hidden(probe, hide, HIDE_CLEAR_MM)
    ok = ~near.reshape(2, len(t_all), -1).any(2)
    ok[1] &= (t_all > mark[side]) & (t_all < lengths[side] - mark[(side + 1) % n])  # the marks inside the corners
    # The profiles form a lattice along and across each side: in the photo's homogeneous
    # coordinates each point is the side's start plus multiples of two projected steps.
    start_h = np.column_stack([a, np.ones(n)]) @ H.T
    along_h = start_h[side] + t_all[:, None] * (u @ H[:, :2].T)[side]  # each profile's middle
    across_h = (normal @ H[:, :2].T)[side]
    x, y, z = (along_h[:, k, None] + offs[None, :] * across_h[:, k, None] for k in range(3))
    x, y = x / z, y / z  # a profile per row
    view_all = ((x >= 0) & (x <= w - 1) & (y >= 0) & (y <= h - 1)).all(1)
    prof_all = sample_at(red, np.stack([x, y], axis=-1)).reshape(x.shape)
    cornered = (t_all < CORNER_NEAR_MM) | (t_all > lengths[side] - CORNER_NEAR_MM)
    out_all, out_seen = _edges(prof_all, offs, 1, side, n, cornered)
    in_all, in_seen = _edges(prof_all, offs, -1, side, n, cornered)
    plain_all = view_all & ~_ticks(prof_all, offs, ok[0] & view_all, side, n)
    # The stroke's width: printed the same all round, so the token's where a side shows too
    # little of it away from its middle (where ticks cross it).
    middle = np.abs(t_all - lengths[side] / 2) < lengths[side] / 6
    both_all = out_seen & in_seen & ok[0] & ok[1] & plain_all & ~middle
    if both_all.sum() < 8:
        # Too few profiles clear of everything on both flanks (a star's short sides: marks
        # inside the tips, the other side outside the reflex corners). The printed width
        # would not do: blur widens every stroke, and a side seen by its outer edge at one
        # end and its inner edge at the other would turn by the difference. The sides'
        # middles count too: a tick there is told by its flanks.
        both_all = out_seen & in_seen & ok[0] & ok[1] & plain_all
    token_width = _quantile((out_all - in_all)[both_all], 0.5) if both_all.sum() >= 8 else 2 * STROKE_HALF_MM
    lines = []
    straight = 1.0
    for i, ts in enumerate(steps):
        rows = side == i
        out_e, in_e, plain = out_all[rows], in_all[rows], plain_all[rows]
        out_ok = out_seen[rows] & ok[0][rows] & plain
        in_ok = in_seen[rows] & ok[1][rows] & plain
        both = out_ok & in_ok
        clean = both & ~middle[rows]
        width = _quantile(out_e[clean] - in_e[clean], 0.5) if clean.sum() >= 10 else token_width
        wide = both & (out_e - in_e > width + TICK_WIDER_MM)  # a tick the flanks missed
        out_ok &= ~wide
        in_ok &= ~wide
        t = np.concatenate([ts[out_ok], ts[in_ok]])
        c = np.concatenate([out_e[out_ok] - width / 2, in_e[in_ok] + width / 2])
        fitted = _robust_line(t, c, EDGE_TOLERANCE_MM) if len(t) >= 8 else None
        if fitted is None:
            return None
        slope, offset = fitted
        residual = c - (slope * t + offset)
        on_line = float(np.mean(np.abs(residual) < 2 * EDGE_TOLERANCE_MM))
        # A side bent at a missed corner leaves one end off the line, both edges the same way
        # (a tick pushes the two edges apart instead, in the side's middle).
        span = t.max() - t.min()
        for end in (t <= t.min() + 0.25 * span, t >= t.max() - 0.25 * span):
            if end.sum() >= 3 and abs(_quantile(residual[end], 0.5)) > EDGE_TOLERANCE_MM:
                on_line = 0.0
        straight = min(straight, on_line)
        # The side's direction from its two edges' own lines (``_parallel_edges``); the
        # single line above says whether the side is straight, and gives the direction
        # only where an edge shows at too few points to have a line of its own.
        parallel = _parallel_edges(t, c, np.arange(len(t)) < out_ok.sum(), EDGE_TOLERANCE_MM)
        if parallel is not None:
            slope, offset = parallel
        direction = u[i] + slope * normal[i]
        lines.append((a[i] + offset * normal[i], direction / np.linalg.norm(direction)))
    corners = [_meet(*lines[i - 1], *lines[i]) for i in range(n)]
    if any(p is None for p in corners):
        return None
    return np.array(corners), straight


def _covers_polygon(outline: np.ndarray, vertices: np.ndarray | None) -> bool:
    """Whether a stack's outline (token mm, y down) hides enough of the measured polygon
    (``vertices``: token mm, y up) to hide a corner: a stack beside the polygon, or over a
    short stretch of one side, leaves every corner where its sides' lines meet. Without a
    polygon, whether it reaches into the polygon's circle."""
    if vertices is None:
        d = cv2.pointPolygonTest(np.float32(outline), (0.0, 0.0), True)
        return d > -(POLY_RADIUS_MM + 0.5)
    v = np.asarray(vertices, np.float64) * [1, -1]
    ends = np.roll(v, -1, 0)
    lengths = np.linalg.norm(ends - v, axis=1)
    steps = np.linspace(0, 1, 50, endpoint=False)
    boundary = (v[:, None, :] + steps[None, :, None] * (ends - v)[:, None, :]).reshape(-1, 2)
    under = _in_hidden(boundary, outline, STROKE_HALF_MM).reshape(len(v), -1)
    return float((under.mean(1) * lengths).sum()) >= HIDDEN_STRETCH_MM


@dataclass(frozen=True)
class PolygonFit:
    """A measured polygon: vertices in token millimetres (x right, y up), and whether each
    side's stroke was seen straight along its length and the polygon at its printed size
    (else a corner may have been missed)."""

    vertices: np.ndarray
    straight: bool = True
    loose: tuple[bool, ...] = ()  # per corner: an end of a side a stack crowds (its fit had little to go on)


def _measure_polygon(view_red: np.ndarray, half: float, photo: tuple[np.ndarray, np.ndarray],
                     hide: np.ndarray | None = None) -> PolygonFit | None:
    """The polygon, or None, from the token's top-down view (its red channel, ``half`` mm each
    way) and, for the sides' last fit, ``photo``: the photo's red channel and the token's
    homography; ``hide``: a region (token millimetres, y down) whose ink is not the
    polygon's (a stack standing there)."""
    ink = _ink(view_red)
    fit_ink = ink
    if hide is not None:
        region = np.zeros(ink.shape, np.uint8)
        cv2.fillPoly(region, [np.round(((hide + half) * PPM - 0.5) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        ink = np.where(region > 0, 0, ink).astype(np.float32)
        # Sides are fitted only clear of the stack: a stroke cut along its length would lean.
        k = int(round(2 * HIDE_CLEAR_MM * PPM)) | 1
        near = cv2.dilate(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        fit_ink = np.where(near > 0, 0, ink).astype(np.float32)
    found = _outline(ink, half)
    if found is None:
        return None
    fine = _refine(_InkPoints.of(fit_ink), found)
    if fine is None:
        return None
    return _photo_fit((fine + 0.5) / PPM - half, photo, hide)


def _photo_fit(mm: np.ndarray, photo: tuple[np.ndarray, np.ndarray], hide: np.ndarray | None) -> PolygonFit:
    """The polygon whose corners ``mm`` (token millimetres, y down) the top-down view gave,
    with its sides fitted again on the photo itself (``_photo_sides``)."""
    # A side the photo shows no straight stroke along (bent at a corner merged away, or
    # spoilt) leaves the polygon in doubt; the corners found so far then stand.
    straight = 0.0
    for _ in range(2):  # the second time with the clear stretches the first fit shows
        again = _photo_sides(*photo, mm, hide)
        if again is None or np.abs(again[0] - mm).max() > PHOTO_FIT_MOVE_MM or \
                (np.abs(_interior_angles(again[0]) - 180) < STRAIGHT_DEG).any():
            break
        moved = float(np.abs(again[0] - mm).max())
        mm, straight = again
        if moved < PHOTO_FIT_SETTLED_MM:  # the clear stretches are as they were: done
            break
    # Every polygon is printed with its farthest corner POLY_RADIUS_MM from its bounding
    # box's middle: one that comes out smaller (or larger) lost (or gained) a corner.
    reach = float(np.linalg.norm(mm - (mm.min(0) + mm.max(0)) / 2, axis=1).max())
    full_size = abs(reach - POLY_RADIUS_MM) <= SIZE_TOLERANCE_MM
    return PolygonFit(mm * [1, -1], straight >= STRAIGHT_SHARE and full_size, _crowded_corners(mm, hide))


def _shortest_side_dropped(polygon: PolygonFit, photo: tuple[np.ndarray, np.ndarray],
                           hide: np.ndarray | None) -> PolygonFit | None:
    """For a polygon like no catalogue shape: the same polygon with its shortest side dropped
    and the lines of the two sides beside it met in one corner, fitted again on the photo; or
    None. A gained corner makes such a short side: a tick's bump on the rough outline (its
    shorter half then fitted to the next corner's arc), a sharp tip split in two by blur, or
    a corner chamfered by a stack's clearing. The result is always in doubt (not straight)."""
    v = polygon.vertices * [1, -1]
    n = len(v)
    if n < 4:
        return None
    i = int(np.argmin(np.linalg.norm(np.roll(v, -1, 0) - v, axis=1)))
    before, after = v[i] - v[i - 1], v[(i + 2) % n] - v[(i + 1) % n]
    corner = _meet(v[i], before, v[(i + 1) % n], after)
    if corner is None:
        return None
    merged = np.delete(v, (i + 1) % n, axis=0)
    merged[i if i + 1 < n else i - 1] = corner
    if len(_interior_angles(merged)) != n - 1:
        return None
    return replace(_photo_fit(merged, photo, hide), straight=False)


def _crowded_corners(v: np.ndarray, hide: np.ndarray | None) -> tuple[bool, ...]:
    """Per corner (``v``: token mm, y down) whether it ends a side a stack crowds: most of the
    side lies so near the stack (``hide``) that neither fit had clear ink along it (the
    clearance the fits keep, plus how far a profile looks), so its line rests on a short
    stretch and may lean, moving both its corners (an octagon beside a stack read 9.6 degrees
    out at two corners; an L-hexagon's short side under a chip, 30)."""
    if hide is None:
        return ()
    ends = np.roll(v, -1, 0)
    steps = np.linspace(0, 1, 24)
    points = (v[:, None, :] + steps[None, :, None] * (ends - v)[:, None, :]).reshape(-1, 2)
    near = _in_hidden(points, hide, HIDE_CLEAR_MM + EDGE_SEEN_MM).reshape(len(v), -1).mean(1) >= CROWDED_SHARE
    return tuple(bool(x) for x in near | np.roll(near, 1))


# --- 4. the catalogue ---------------------------------------------------------------------

@dataclass(frozen=True)
class ShapeMatch:
    shape: str  # catalogue id or "unknown"
    distance: float  # of the nearest shape, in camera tolerances
    runner_up: float  # of the next nearest other shape
    ranked: tuple[tuple[float, str], ...] = ()  # (distance, id) of the nearest few, nearest first
    loose: bool = False  # measured with a crowded side's corners at LOOSE times the tolerance

    @property
    def sure(self) -> bool:
        """Near one shape and clearly nearer it than to any other, at the camera's tolerance."""
        return not self.loose and self.distance <= SURE_MATCH and self.runner_up >= self.distance + RUNNER_UP_GAP


@lru_cache(maxsize=4)
def _catalogue_table(shapes_key: tuple) -> dict[int, tuple[list[str], np.ndarray, np.ndarray]]:
    """Per corner count: shape ids, and every cyclic shift of their relative sides and angles."""
    table: dict[int, tuple[list[str], list, list]] = {}
    for sid, shape in shapes_key:
        p = shape.polygon
        n = len(p.sides)
        sides = np.array(p.sides) / p.perimeter
        angles = np.array(p.angles)
        ids, ss, aa = table.setdefault(n, ([], [], []))
        for shift in range(n):
            ids.append(sid)
            ss.append(np.roll(sides, -shift))
            aa.append(np.roll(angles, -shift))
    return {n: (ids, np.array(ss), np.array(aa)) for n, (ids, ss, aa) in table.items()}


def match_shape(vertices: Sequence[Sequence[float]], shapes: Mapping[str, Shape],
                loose: Sequence[bool] = ()) -> ShapeMatch:
    """The nearest catalogue shape: largest angle or side difference over the best corner
    pairing, in units of the camera tolerance (2 degrees, 2 % of the side); scale and
    rotation free, mirror images excluded. ``loose``: per vertex, corners whose measurement
    a stack spoils (``PolygonFit.loose``); when the shape is not sure without them, their
    angles and the lengths of the sides they end count at LOOSE times the tolerance, and
    the match is a guess (never sure)."""
    strict = _match(vertices, shapes, ())
    if strict.sure or not any(loose):
        return strict
    return _match(vertices, shapes, loose)


def _match(vertices: Sequence[Sequence[float]], shapes: Mapping[str, Shape], loose: Sequence[bool]) -> ShapeMatch:
    seen = Polygon.of(vertices)
    n = len(seen.sides)
    table = _catalogue_table(tuple(shapes.items())).get(n)
    if table is None:
        return ShapeMatch(UNKNOWN_SHAPE, math.inf, math.inf)
    ids, ks, ka = table
    sides = np.array(seen.sides) / seen.perimeter
    da = np.abs(np.array(seen.angles) - ka) / CAMERA.angle
    ds = np.abs(sides - ks) / ks / CAMERA.length
    if any(loose):
        corner = np.array(loose, bool)
        v = np.asarray(vertices, np.float64)
        if np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1]) < 0:
            corner = corner[::-1]  # Polygon.of walks it the other way round
        da = da / np.where(corner, LOOSE, 1.0)
        ds = ds / np.where(corner | np.roll(corner, -1), LOOSE, 1.0)  # side i runs from corner i to i + 1
    score = np.maximum(da.max(1), ds.max(1))
    best: dict[str, float] = {}
    for sid, v in zip(ids, score):
        best[sid] = min(best.get(sid, math.inf), float(v))
    ranked = sorted((v, sid) for sid, v in best.items())
    distance, sid = ranked[0]
    runner = ranked[1][0] if len(ranked) > 1 else math.inf
    return ShapeMatch(sid if distance <= MATCH_LIMIT else UNKNOWN_SHAPE, distance, runner, tuple(ranked[:4]),
                      any(loose))


# --- 5. stacks ----------------------------------------------------------------------------

@dataclass(frozen=True)
class FieldCamera:
    """The camera over the token plane, in grid millimetres: its nadir and height; the focal
    length (pixels) it was solved with, and whether the homography itself showed it."""

    nadir: np.ndarray
    height: float
    focal: float = 0.0
    focal_seen: bool = False

    def lift(self, xy: np.ndarray, h: float) -> np.ndarray:
        """Where a point ``h`` mm above the token plane is seen on that plane."""
        return self.nadir + (np.asarray(xy, np.float64) - self.nadir) * self.height / (self.height - h)


def _tilt_deg(G: np.ndarray, f: float) -> float:
    """Angle between the optical axis and the plane's normal for focal length ``f``."""
    M = np.diag([1 / f, 1 / f, 1.0]) @ G
    normal = np.cross(M[:, 0], M[:, 1])
    return math.degrees(math.acos(min(1.0, abs(normal[2]) / max(np.linalg.norm(normal), 1e-12))))


def field_camera(H: np.ndarray, image_size: tuple[int, int], focal: float | None = None) -> FieldCamera:
    """Camera centre from the plane's homography (grid mm -> pixels), with square pixels and
    the principal point at the photo's centre; the focal length is solved from the two
    rotation constraints and kept within a phone's range (a camera looking straight down
    does not reveal it, but then no stack's side shows either)."""
    w, h = image_size
    T = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(h - 1) / 2], [0, 0, 1]])
    G = T @ H
    G = G / np.linalg.norm(G[:, 0])
    g1, g2 = G[:, 0], G[:, 1]
    a = np.array([g1[0] * g2[0] + g1[1] * g2[1], g1[0] ** 2 + g1[1] ** 2 - g2[0] ** 2 - g2[1] ** 2])
    b = np.array([g1[2] * g2[2], g1[2] ** 2 - g2[2] ** 2])
    inv_f2 = -float(a @ b) / float(a @ a) if float(a @ a) > 1e-30 else 0.0
    long = max(w, h)
    f = FOCAL_TYPICAL * long
    seen = inv_f2 > 0 and _tilt_deg(G, f) > TILT_FOR_FOCAL_DEG
    if focal is not None:
        f = focal
    elif seen:
        f = float(np.clip(1 / math.sqrt(inv_f2), FOCAL_RANGE[0] * long, FOCAL_RANGE[1] * long))
    M = np.diag([1 / f, 1 / f, 1.0]) @ G
    scale = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    M *= scale
    if M[2, 2] < 0:  # the plane lies in front of the camera
        M = -M
    r1, r2, t = M[:, 0], M[:, 1], M[:, 2]
    r3 = np.cross(r1, r2)
    R = np.column_stack([r1, r2, r3])
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    centre = -R.T @ t
    return FieldCamera(centre[:2], float(abs(centre[2])), f, bool(seen))


def _to_lab(rgb: np.ndarray) -> np.ndarray:
    rgb = np.clip(np.asarray(rgb, np.float32).reshape(-1, 1, 3), 0, 1)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab).reshape(-1, 3)


@lru_cache(maxsize=1)
def _palette() -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    names = tuple(CHIP_COLOURS)
    tops = _to_lab(np.array([CHIP_COLOURS[c] for c in names]) / CHIP_SCALE)
    sides = _to_lab(np.array([CHIP_COLOURS[c] for c in names]) * SIDE_SHADE / CHIP_SCALE)
    return names, tops, sides


CHIP_SCALE = 1.07  # the brightest chip channel (white's blue, card-relative): colours are divided by it for Lab


def _top_lab(rgb_rel: np.ndarray) -> np.ndarray:
    """Lab of a card-relative RGB sample, on the palette's scale (CHIP_SCALE)."""
    return _to_lab(np.asarray(rgb_rel) / CHIP_SCALE)[0]


def classify_chip(rgb_rel: np.ndarray, side: bool = False) -> tuple[str, float]:
    """Chip colour of a card-relative RGB sample; and the margin to the runner-up (Lab units)."""
    names, tops, sides = _palette()
    lab = _top_lab(rgb_rel)
    ref = sides if side else tops
    weights = np.array([0.35, 1.0, 1.0])
    d = np.sqrt((((ref - lab) * weights) ** 2).sum(1))
    order = np.argsort(d)
    return names[order[0]], float(d[order[1]] - d[order[0]])


WHITE_CHROMA = 20.0  # a white top's colour lies this near the white chip's in Lab a*, b* (card-relative)


def washed_top(rgb_rel: np.ndarray) -> str | None:
    """For a top read as white (a card-relative RGB sample): the coloured chip it is when a
    glare spot washed it out, or None when it is white. A white chip's top has the card's
    colour whatever the light, since the card is the white reference; a top far more
    colourful than that is a coloured chip under a specular highlight (a blue one under a
    window's reflection read pale blue, classified white by its lightness). Glare adds white
    light to the chip's own colour: the chip whose colour, dimmed or not, plus some white
    comes nearest the sample (both amounts at least 0) is the guess."""
    names, tops, _ = _palette()
    rel = np.asarray(rgb_rel, np.float64)
    lab = _top_lab(rel)
    white = tops[names.index("white")]
    if math.hypot(*(lab[1:] - white[1:])) <= WHITE_CHROMA:
        return None
    best = (math.inf, None)
    for name in names:
        if name == "white":
            continue
        chip = np.array(CHIP_COLOURS[name])
        (s, g), *_ = np.linalg.lstsq(np.column_stack([chip, np.ones(3)]), rel, rcond=None)
        # Both amounts at least 0: the free fit, else the better of each amount alone.
        fits = [(s, g)] if s >= 0 and g >= 0 else []
        fits += [(max(float(chip @ rel / (chip @ chip)), 0.0), 0.0), (0.0, float(rel.mean()))]
        miss = min(float(np.linalg.norm(rel - s * chip - g)) for s, g in fits)
        best = min(best, (miss, name))
    return best[1]


@dataclass(frozen=True)
class StackReading:
    stack: list[str]
    height_known: bool
    sure: bool
    outline: np.ndarray | None = None  # token millimetres: what the stack covers, seen from the camera


@dataclass(frozen=True)
class _Sighting:
    """A chip top found on a token: the spot its stack stands on and where its top is seen
    (grid mm), with its colour."""

    base: np.ndarray
    top: np.ndarray
    score: float
    colour: str
    margin: float
    outline: np.ndarray  # token mm: what the stack covers in the photo


_RING = np.linspace(0, 2 * np.pi, 32, endpoint=False)
_CIRCLE = np.column_stack([np.cos(_RING), np.sin(_RING)])
_FACE = np.vstack([_CIRCLE * 0.5, _CIRCLE[::2] * 0.25, [[0.0, 0.0]]])  # where a top's colour is sampled (x stone radius)


def _find_stack(image: np.ndarray, value: np.ndarray, H: np.ndarray, centre_mm: np.ndarray, cam: FieldCamera,
                card_rgb: np.ndarray, card_v: float) -> tuple[_Sighting | None, float]:
    """The chip top on a token, searched from each chip spot away from the camera's nadir
    (``H``: token mm -> photo px; ``centre_mm``: the token's centre in grid mm, where
    ``cam`` lives); and the best score found (for the doubt when none is there: 0 when
    every spot is bare card, and a spot that does not look like bare card counts as a chip
    top only just missed)."""
    r = CHIP_RADIUS_MM
    inner = np.vstack([_CIRCLE * (r - 1.6), _CIRCLE[::2] * (r - 3.2), [[0.0, 0.0]]])
    best: tuple = (-1.0, None, None, r)
    feet = (centre_mm + SPOTS)[:, None, :] + np.vstack([_CIRCLE[::2] * (r - 1.5), [[0.0, 0.0]],
                                                        _CIRCLE * (r - 0.3)])[None]
    foot_rgb = sample_at(image, apply_h(H, feet.reshape(-1, 2) - centre_mm)).reshape(len(SPOTS), -1, 3)[..., ::-1]
    rel = foot_rgb / card_rgb
    # A chip (or anything) on a spot: its colour off the card's, or its dark rim. The card
    # under a chip never shows, so a spot that is bare card holds no stack: no search there.
    unlike = np.maximum(np.abs(rel[:, :17].mean(1) - 1).max(1), (1 - rel[:, 17:].min(2)).max(1))
    if unlike.max() < SPOT_CARD_TOLERANCE:
        return None, 0.0
    for spot in SPOTS[unlike >= SPOT_CARD_TOLERANCE]:
        base = centre_mm + spot
        away = base - cam.nadir
        dist = np.linalg.norm(away)
        u = away / dist if dist > 1e-6 else np.array([1.0, 0.0])
        far = cam.lift(base, 5.6 * CHIP_MM) - base
        reach = 1.4 * float(np.linalg.norm(far)) + 1.5
        ts = np.arange(-0.8, reach + 0.01, 0.4)
        lat = np.array([-0.8, 0.0, 0.8])
        cands = (base[None, None] + ts[:, None, None] * u + lat[None, :, None] * np.array([-u[1], u[0]]))
        cands = cands.reshape(-1, 2)
        grow = 1.0 + float(np.linalg.norm(far)) / max(dist, 1e-6) * 0.5  # a raised top looks a little larger
        radii = (r * grow) + np.array([-0.9, -0.45, 0.0, 0.45])
        rim_pts = (cands[:, None, None, :] + _CIRCLE[None, None] * radii[None, :, None, None]).reshape(-1, 2)
        in_pts = (cands[:, None, :] + inner[None]).reshape(-1, 2)
        v_rim = sample_at(value, apply_h(H, rim_pts - centre_mm))[:, 0].reshape(len(cands), len(radii), -1).min(1)
        v_in = sample_at(value, apply_h(H, in_pts - centre_mm))[:, 0].reshape(len(cands), -1)
        # A chip's top: a dark rim all round (wherever it lies in the band), a lighter face inside.
        k_in, k_rim = int(0.3 * v_in.shape[1]), int(0.8 * v_rim.shape[1])
        score = (np.partition(v_in, k_in, axis=1)[:, k_in] - np.partition(v_rim, k_rim, axis=1)[:, k_rim]) / card_v
        k = int(np.argmax(score))
        if score[k] > best[0]:
            best = (float(score[k]), base, cands[k], r * grow)
    score, base, top, radius = best if best[1] is not None else (best[0], None, None, r)
    if base is None or score < CHIP_FOUND:
        # No clear chip top on a spot that is not bare card: a faint top there (blur) gives
        # that top, in doubt; none at all leaves the token's stack in doubt.
        if base is None or score < FAINT_CHIP * CHIP_FOUND:
            return None, CHIP_FOUND
    top = _centre_top(value, H, centre_mm, top, radius, card_v)
    cover = np.vstack([base + _CIRCLE * (r + 0.6), top + _CIRCLE * (r + 0.8)]) - centre_mm
    outline = cv2.convexHull(np.float32(cover))[:, 0, :].astype(np.float64)
    # The face's darker half: a glint of glare on part of the top washes its colour towards
    # white, and a shadow's edge crossing it only darkens (the hue stays).
    face = sample_at(image, apply_h(H, top + _FACE * STONE_RADIUS_MM - centre_mm))
    stone = face[np.argsort(face.sum(1))[: len(face) // 2]].mean(0)
    rel = stone[::-1] / card_rgb
    colour, margin = classify_chip(rel)
    washed = washed_top(rel) if colour == "white" else None
    if washed is not None:  # a coloured top under glare: its colour a guess, with no margin
        colour, margin = washed, 0.0
    return _Sighting(base, top, score, colour, margin, outline), score


def _centre_top(value: np.ndarray, H: np.ndarray, centre_mm: np.ndarray, top: np.ndarray, radius: float,
                card_v: float) -> np.ndarray:
    """The chip top's centre to a tenth of a millimetre: the place where the dark rim runs
    round at the top's radius, darkest against the face inside and the band just outside."""
    g = np.arange(-0.8, 0.81, 0.1)
    cands = (top + np.stack(np.meshgrid(g, g), -1).reshape(-1, 2))
    rim = (cands[:, None, :] + _CIRCLE[None] * (radius - 0.3)).reshape(-1, 2)
    inside = (cands[:, None, :] + _CIRCLE[None] * (radius - 1.3)).reshape(-1, 2)
    v_rim = sample_at(value, apply_h(H, rim - centre_mm))[:, 0].reshape(len(cands), -1)
    v_in = sample_at(value, apply_h(H, inside - centre_mm))[:, 0].reshape(len(cands), -1)
    score = (v_in - v_rim).mean(1) / card_v
    return cands[int(np.argmax(score))]


def _height(sight: _Sighting, H: np.ndarray, centre_mm: np.ndarray, cam: FieldCamera) -> tuple[int, float, float]:
    """Best height for a sighting at this camera: (chips, miss in chip steps, one chip's side in photo px)."""
    grow = cam.height / (cam.height - np.arange(7) * CHIP_MM)
    levels = cam.nadir + (sight.base - cam.nadir) * grow[:, None]
    steps = np.hypot(*np.diff(levels, axis=0).T)
    errors = np.hypot(*(levels[1:6] - sight.top).T) / steps[:5]
    n = int(np.argmin(errors)) + 1
    toward = cam.nadir - sight.base
    foot = sight.base + CHIP_RADIUS_MM * toward / max(float(np.hypot(*toward)), 1e-6)
    side_px = apply_h(H, cam.nadir + (foot - cam.nadir) * grow[:, None] - centre_mm)
    return n, float(errors[n - 1]), float(np.hypot(*np.diff(side_px, axis=0).T).min())


def _read_stack(sight: _Sighting | None, best_score: float, image: np.ndarray, H: np.ndarray,
                centre_mm: np.ndarray, cam: FieldCamera, card_rgb: np.ndarray) -> StackReading:
    """The stack on a token: top colour always, height and lower colours where one chip's
    side is tall enough in the photo and the top sits where a whole number of chips puts it."""
    if sight is None:
        return StackReading([], True, best_score < 0.6 * CHIP_FOUND)
    sure = sight.margin > 8 and sight.score > 1.3 * CHIP_FOUND
    n, miss, step_px = _height(sight, H, centre_mm, cam)
    if step_px < HEIGHT_PX or miss > 0.25 or sight.score < CHIP_FOUND:
        return StackReading([sight.colour], False, sure, sight.outline)
    r = CHIP_RADIUS_MM
    foot = sight.base + r * (cam.nadir - sight.base) / max(np.linalg.norm(cam.nadir - sight.base), 1e-6)
    stack = []
    tangent = np.array([-(foot - sight.base)[1], (foot - sight.base)[0]]) / r
    for i in range(n - 1):  # each lower chip's side, where it faces the camera
        at = np.array([cam.lift(foot, (i + f) * CHIP_MM) for f in (0.35, 0.5, 0.65)])
        pts = (at[:, None, :] + np.array([-1.2, 0.0, 1.2])[None, :, None] * tangent).reshape(-1, 2) - centre_mm
        rgb = np.median(sample_at(image, apply_h(H, pts)), axis=0)[::-1] / card_rgb
        colour, m = classify_chip(rgb, side=True)
        stack.append(colour)
        sure = sure and m > 5
    return StackReading(stack + [sight.colour], True, sure, sight.outline)


def _focal_from_stacks(H: np.ndarray, size: tuple[int, int], cam: FieldCamera,
                       sights: Sequence[tuple[_Sighting, np.ndarray, np.ndarray]]) -> FieldCamera:
    """A camera looking nearly straight down hides its focal length from the homography;
    the stacks show it, since each must be a whole number of chips high. The focal length
    (within a phone's range, near the typical one) that puts the tops nearest whole heights."""
    if cam.focal_seen or not sights:
        return cam
    long = max(size)
    best = (math.inf, cam)
    for f in np.linspace(FOCAL_RANGE[0], FOCAL_RANGE[1], 16) * long:
        trial = field_camera(H, size, float(f))
        cost = 0.05 * ((f / (FOCAL_TYPICAL * long) - 1) / 0.1) ** 2
        for sight, Ht, centre_mm in sights:
            _, miss, step_px = _height(sight, Ht, centre_mm, trial)
            if step_px >= HEIGHT_PX:
                cost += min(miss * miss, 0.25)
        if cost < best[0]:
            best = (cost, trial)
    return best[1]


# --- the read -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Field:
    """The located field: grid homography (grid mm -> photo px), the token places, and the
    tokens' own homographies where their frames were fitted (token mm -> photo px)."""

    H: np.ndarray
    places: tuple[Pos, ...]
    local: Mapping[Pos, np.ndarray] = field(default_factory=dict)
    doubtful: frozenset[Pos] = frozenset()  # places that may hold a token (or be the tablecloth)
    origin: Pos | None = None  # a live pose's (0, 0): see ``_orient``


def _locate(image: np.ndarray, full_gray: np.ndarray | None = None) -> _Field:
    h, w = image.shape[:2]
    if min(h, w) < 200:
        raise ReadError("image_too_small", f"the image is {w}x{h}; a photo of the field needs at least 200 pixels")
    f = min(1.0, WORK_WIDTH / max(w, h))
    # grey before shrinking: a third of the work
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if full_gray is None else full_gray
    if f < 0.5:  # an exact halving first: its own quick path, and the same pixels to a grey level
        gray = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        gray = cv2.resize(gray, None, fx=2 * f, fy=2 * f, interpolation=cv2.INTER_AREA)
    elif f < 1:
        gray = cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    if _noise(gray) > NOISY:
        gray = cv2.GaussianBlur(gray, (0, 0), 1.0)
    quads = _frame_quads(gray)
    if not quads:  # a blurred photo: the thin frames only just stand out
        quads = _frame_quads(gray, 5)
    if not quads:
        raise ReadError("no_board", "no Geometrius tokens were found in the photo (no square token frames)")
    if len(quads) > 10 * MAX_TOKENS:
        raise ReadError("no_board", f"{len(quads)} squares show in the photo: that is not a Geometrius field")
    dark = _dark_mask(gray, max(15, gray.shape[1] // 60))
    likeness = [_token_like(gray, dark, q) for q in quads]
    quads = [q for q, v in sorted(zip(quads, likeness), key=lambda x: -x[1]) if v > 0] or quads
    local: dict[Pos, np.ndarray] = {}
    doubtful: dict[Pos, np.ndarray] = {}
    for found in _grids(quads):  # a small field may be the tablecloth's: try the next grid
        if found:
            grown, maybe = _token_places(gray, dark, found)
            local, doubtful = (grown, maybe) if len(grown) > len(local) else (local, doubtful)
            if len(local) >= SURE_FIELD:
                break
    if not local:
        raise ReadError("no_board", "no Geometrius tokens were found in the photo")
    up = np.array([[1 / f, 0, 0.5 / f - 0.5], [0, 1 / f, 0.5 / f - 0.5], [0, 0, 1]])
    return _Field(up @ _field_homography(local), tuple(sorted(local | doubtful)), {p: up @ H for p, H in local.items()},
                  frozenset(doubtful))


def _orient(H: np.ndarray, places: Sequence[Pos], origin: Pos | None = None) -> tuple[dict[Pos, Pos], np.ndarray]:
    """Contract labels: the grid turned so +col points right in the photo, shifted to 0.
    Also the homography from contract grid units (cell (r, c) spans [c, c+1] x [r, r+1]) to pixels.

    ``origin``: read at a live pose (``H`` its contract frame), the pose's (0, 0). Its turn is
    kept, and rows and columns count from its first row and column unless a token lies above
    or left of them (a push grew the field): they held tokens when the pose was located, and
    a push never empties a place, so a hand or a cup over them now moves no token's number.

    Of the four quarter turns, the one whose +col points nearest the photo's right at the
    field's centre (the mean of its tokens) is taken, both axes being weighed: seen at a slant
    the two axes need not be square in the photo, and rounding one axis's angle alone would
    give either answer when both lie some 40 degrees from level (then the grid's own axis
    names, an accident of which frame was the reference, would decide). An exact tie goes
    to the fewest turns."""
    centre = np.mean([[c * PITCH_MM, r * PITCH_MM] for r, c in places], axis=0)
    q = apply_h(H, np.array([centre, centre + [10.0, 0.0], centre + [0.0, 10.0]]))
    x_dir, y_dir = q[1] - q[0], q[2] - q[0]
    # +col after k turns of (r, c) -> (c, -r): the grid's +x, -y, -x, +y.
    cols = (x_dir, -y_dir, -x_dir, y_dir)
    k = 0 if origin is not None else int(np.argmin([abs(math.atan2(d[1], d[0])) for d in cols]))
    turned = {}
    for p in places:
        r, c = p
        for _ in range(k):
            r, c = c, -r
        turned[p] = (r, c)
    counted = [*turned.values(), *([origin] if origin is not None else [])]
    r0, c0 = min(r for r, _ in counted), min(c for _, c in counted)
    labels = {p: (r - r0, c - c0) for p, (r, c) in turned.items()}
    # Contract grid (x = col, y = row, units of a pitch, cell corners at integers) -> grid mm.
    to_mm = np.diag([PITCH_MM, PITCH_MM, 1.0]) @ np.array([[1, 0, c0 - 0.5], [0, 1, r0 - 0.5], [0, 0, 1]])
    M = _contract_to_grid(k) @ to_mm
    return labels, H @ M


def _numbered(H: np.ndarray, places: Sequence[Pos], doubtful: frozenset[Pos], origin: Pos | None = None
              ) -> tuple[dict[Pos, Pos], np.ndarray, bool]:
    """``_orient``'s labels and homography for the places read, and whether the numbering
    rests on a doubtful place: whether any token not in doubt would be numbered otherwise
    without the doubtful ones. Rows and columns count from the topmost and leftmost token
    read, so a doubtful place beyond the others' top row or left column (a real token half
    hidden, or the tablecloth) decides every token's position: whichever it is, no token's
    position is then sure.

    Live (``origin``: the pose's (0, 0)), the numbering also rests on what is not seen when
    the pose's first row or column shows no token now: most likely a hand or a cup over it
    (the numbering from the pose is then right), but a push taken back also empties a
    place. The numbering is then kept from the pose, every position in doubt: the live
    referee waits for the hand to lift rather than count from the tokens it sees."""
    labels, contract_H = _orient(H, places, origin)
    sure = [p for p in places if p not in doubtful]
    own = _orient(H, sure, None if origin is None else (min(r for r, _ in sure), min(c for _, c in sure)))[0]
    return labels, contract_H, any(labels[p] != at for p, at in own.items())


def _contract_to_grid(k: int) -> np.ndarray:
    """Turned grid coordinates (x = col, y = row) -> the field's own grid coordinates, undoing
    k quarter turns of (r, c) -> (c, -r): one undoes as (c', r') -> (c, r) = (r', -c')."""
    M = np.eye(3)
    step = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], np.float64)
    for _ in range(k):
        M = M @ step
    return M


def _read_field(image: np.ndarray, located: _Field, start: float,
                gray: np.ndarray | None = None) -> GeometriusReading:
    catalogue = load_catalogue()
    H = located.H
    h, w = image.shape[:2]
    cam = field_camera(H, (w, h))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if gray is None else gray
    b, g, red = (cv2.extractChannel(image, k) for k in range(3))  # three times quicker than split
    value = cv2.max(cv2.max(b, g), red)
    seen = []
    for pos in located.places:
        centre_mm = np.array([pos[1] * PITCH_MM, pos[0] * PITCH_MM])
        on_grid = H @ np.array([[1, 0, centre_mm[0]], [0, 1, centre_mm[1]], [0, 0, 1]])
        H0 = located.local.get(pos)
        Ht = _token_frame(gray, on_grid, blurred=True) if H0 is None else _fit_frame(gray, H0, blurred=True)
        if Ht is None and H0 is not None:
            # The search's own quad was not refined into a frame: a chip or blur had bent it,
            # so it may be sheared. The field's homography, fitted through every other
            # token's frame, places it, and the frame is sought again from there.
            Ht = _token_frame(gray, on_grid, blurred=True)
        if Ht is None:
            H0 = _centred_on_polygon(red, on_grid)
        card_patch = _warp(image, Ht if Ht is not None else H0, FRAME_MM - 2, 1.0).reshape(-1, 3).astype(np.float32)
        bright = card_patch.sum(1)
        card_rgb = np.median(card_patch[bright >= np.percentile(bright, 60)], axis=0)[::-1]
        card_v = float(max(card_rgb.max(), 1.0))
        sight, score = _find_stack(image, value, Ht if Ht is not None else H0, centre_mm, cam, card_rgb, card_v)
        seen.append((pos, centre_mm, H0, Ht, card_rgb, sight, score))
    # A place that may be no token (the tablecloth) is no witness of the camera.
    cam = _focal_from_stacks(H, (w, h), cam, [(s_, Ht if Ht is not None else H0, c_)
                                              for p_, c_, H0, Ht, _, s_, _ in seen
                                              if s_ is not None and p_ not in located.doubtful])
    read = []
    for pos, centre_mm, H0, Ht, card_rgb, sight, score in seen:
        uncertain = [] if Ht is not None and pos not in located.doubtful else ["frame"]
        Ht = Ht if Ht is not None else H0
        stack = _read_stack(sight, score, image, Ht, centre_mm, cam, card_rgb)
        if not stack.sure or (uncertain and not stack.stack):  # no chip seen where the frame was not
            uncertain.append("stack")
        read.append((pos, Ht, stack, uncertain, *_token_polygon(red, Ht, stack.outline, catalogue.shapes)))
    blur = photo_blur(red, [(Ht, polygon.vertices) for pos, Ht, _, _, polygon, _ in read
                            if polygon is not None and pos not in located.doubtful])
    if heavy_blur(blur):
        # Heavy blur leans short sides into their neighbours' ink; undone, the polygons are
        # measured again on the sharper channel (the frames and stacks stand as read). Where
        # the filter loses a polygon the first pass measured (held-out blur photo: a top-row
        # token whose frame the streak hid, kept only because it measures one), that one stands.
        sharp = unblurred(red, blur, [Ht for _, Ht, _, _, _, _ in read])
        for k, (pos, Ht, stack, uncertain, _, _) in enumerate(read):
            again = _token_polygon(sharp, Ht, stack.outline, catalogue.shapes)
            if again[0] is not None:
                read[k] = (pos, Ht, stack, uncertain, *again)
    tokens: list[TokenReading] = []
    matches: list[ShapeMatch | None] = []
    places: list[Pos] = []
    for pos, Ht, stack, uncertain, polygon, match in read:
        vertices = None if polygon is None else polygon.vertices
        if pos in located.doubtful and vertices is None:
            # No polygon where a token may lie: the tablecloth (on 24 patterned-table photos
            # 14 such places of 16 measured none, every real token 3-9 corners). Kept, it
            # numbered every token beside it a place off; one that does measure a polygon
            # stays in doubt, and so does every position it decides (``_numbered``).
            continue
        hidden = stack.outline is not None and _covers_polygon(stack.outline, vertices)
        if match is None or not match.sure or hidden or not polygon.straight or pos in located.doubtful:
            uncertain.append("shape")
        vert_list = [] if vertices is None else [(float(x), float(y)) for x, y in vertices]
        cpx = apply_h(Ht, np.zeros((1, 2)))[0]
        places.append(pos)
        tokens.append(TokenReading(*pos, UNKNOWN_SHAPE, stack.stack, stack.height_known, vert_list, None, uncertain,
                                   (float(cpx[0]), float(cpx[1])), Ht))
        matches.append(match)
    labels, contract_H, resting = _numbered(H, places, located.doubtful, located.origin)
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


def _token_polygon(red: np.ndarray, H: np.ndarray, hide: np.ndarray | None, shapes: Mapping[str, Shape]
                   ) -> tuple[PolygonFit | None, ShapeMatch | None]:
    """One token's polygon measured on the photo's red channel (``H``: token mm -> photo px;
    ``hide``: a stack's outline) and its nearest catalogue shape; a polygon like no shape is
    tried again with its shortest side dropped (a corner gained, always in doubt)."""
    half = POLY_RADIUS_MM + 2.0
    polygon = _measure_polygon(_warp(red, H, half, PPM), half, (red, H), hide)
    if polygon is None:
        return None, None
    match = match_shape(polygon.vertices, shapes, polygon.loose)
    if match.shape == UNKNOWN_SHAPE:
        regained = _shortest_side_dropped(polygon, (red, H), hide)
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
    token shows, ("underexposed") when a photo too dark to read (brightened by ``_exposed``)
    leaves every token's shape in doubt."""
    start = time.perf_counter()
    photo = as_bgr(image)
    image = _exposed(photo)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)  # once, for the search and the frames
    reading = _read_field(image, _locate(image, gray), start, gray)
    if not any(t.vertices for t in reading.read):
        raise ReadError("no_board", "no Geometrius tokens were found in the photo (squares, but none shows a polygon)")
    if image is not photo and all("shape" in t.uncertain for t in reading.read):
        # Brightened, the photo's noise spoils every polygon; it may have hidden whole tokens
        # too (a field found as one or two of them, numbered from there): nothing to go on.
        raise too_dark(brightest(photo), "brightened, its noise leaves no token's polygon readable")
    return reading


def locate_board(frame: np.ndarray) -> BoardPose:
    """The field's pose in a frame: board units are grid places (cell (r, c) spans
    [c, c+1] x [r, r+1] in the contract's numbering); ``contrast`` holds how clearly the
    token frames show there, for :func:`verify_pose`. Only the tokens whose frames show
    place it: :func:`read_with_pose` counts rows and columns from the pose's first ones, and
    a doubtful place (the tablecloth, perhaps) there would number every token a place off
    for as long as the pose is kept; a real token there is read beyond the pose."""
    frame = _exposed(as_bgr(frame))
    located = _locate(frame)
    labels, contract_H = _orient(located.H, [p for p in located.places if p not in located.doubtful])
    rows = max(r for r, _ in labels.values()) + 1
    cols = max(c for _, c in labels.values()) + 1
    pose = _pose(contract_H, frame.shape[1::-1], (cols, rows))
    return replace(pose, contrast=_pose_evidence(frame, pose))


def _cell_homography(pose: BoardPose, r: int, c: int) -> np.ndarray:
    """Token millimetres of the cell (r, c) -> photo pixels, at a pose."""
    to_units = np.array([[1 / PITCH_MM, 0, c + 0.5], [0, 1 / PITCH_MM, r + 0.5], [0, 0, 1]])
    return np.linalg.inv(pose.homography) @ to_units


def _pose_evidence(frame: np.ndarray, pose: BoardPose) -> float:
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    w, h = (int(round(v)) for v in pose.extent)
    shares = [_frame_evidence(gray, _cell_homography(pose, r, c)) for r in range(h) for c in range(w)]
    return float(np.mean(shares)) if shares else 0.0


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Do the token frames still show where ``pose`` put them (at least 60 % as clearly)?"""
    frame = _exposed(as_bgr(frame))
    h, w = frame.shape[:2]
    if pose.image_size != (w, h):
        pose = pose.scaled(w / pose.image_size[0])
    reference = pose.contrast or 0.5
    return _pose_evidence(frame, pose) >= 0.6 * reference


def _pose_places(gray: np.ndarray, pose: BoardPose) -> tuple[dict[Pos, np.ndarray], dict[Pos, np.ndarray]]:
    """The places at a pose whose frame shows (tokens) and those where it shows in part, with
    their homographies (token mm -> pixels of ``gray``): the pose's own places, and places
    beyond it beside a token: a push grows the field by one at a line's end, and a token
    pushed above or left of the pose renumbers every other. A place beyond is stepped to
    from its neighbour's own frame: the pose's grid, fitted on the field it was located on,
    bends away from the tokens beyond it under a distorting lens."""
    ew, eh = (int(round(v)) for v in pose.extent)
    todo = {(r, c): _cell_homography(pose, r, c) for r in range(eh) for c in range(ew)}
    looked = set(todo)
    tokens: dict[Pos, np.ndarray] = {}
    partial: dict[Pos, np.ndarray] = {}
    while todo:
        p, H = todo.popitem()
        shows = _frame_evidence(gray, H)
        if shows < FRAME_SHOWS:
            if shows >= FRAME_PART:
                partial[p] = H
            continue
        tokens[p] = H
        beyond = [n for n in _neighbours(p) if n not in looked]
        if beyond and len(tokens) <= MAX_TOKENS:
            looked.update(beyond)
            if _frame_beyond(gray, H, p, beyond):
                own = _own_frame(gray, H, once=True)
                todo |= {n: Hn for n in beyond if (Hn := _stepped(gray, own, n[0] - p[0], n[1] - p[1])) is not None}
    return tokens, partial


def _frame_beyond(gray: np.ndarray, H: np.ndarray, p: Pos, beyond: Sequence[Pos]) -> bool:
    """Whether a frame may show at any place ``beyond`` the token at ``p`` (``H``: the pose's
    homography there), looked at through the pose's grid: the token's own frame (a fit per
    token, on every live read) is needed to step there only then. A place outside the photo
    through the grid may lie inside it through the own frame: it is looked at."""
    for n in beyond:
        Hg = _stepped(gray, H, n[0] - p[0], n[1] - p[1])
        if Hg is None or _frame_evidence(gray, Hg) >= FRAME_HINT:
            return True
    return False


def read_with_pose(frame: np.ndarray, pose: BoardPose) -> GeometriusReading:
    """Read the tokens at a known pose (no search for frames): every place of the pose (or
    beside a token beyond it) whose frame shows holds a token; a place whose frame shows
    in part, or one across a hidden place, may (``_doubtful_places``), as in a photo. Rows
    and columns count from the pose's first ones, unless a token lies beyond them; where
    none shows there now (a hand over the top row's one token) the numbering is kept, every
    position in doubt (``_numbered``)."""
    start = time.perf_counter()
    frame = _exposed(as_bgr(frame))
    h, w = frame.shape[:2]
    if pose.image_size != (w, h):
        pose = pose.scaled(w / pose.image_size[0])
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    tokens, partial = _pose_places(gray, pose)
    if not tokens:
        raise ReadError("no_board", "no Geometrius token shows where the field was")
    doubtful = _doubtful_places(gray, _dark_mask(gray, max(15, w // 60)), tokens, partial)
    # Grid mm with token (0, 0) at the origin, rows down: the contract frame itself.
    H = np.linalg.inv(pose.homography) @ np.array([[1 / PITCH_MM, 0, 0.5], [0, 1 / PITCH_MM, 0.5], [0, 0, 1]])
    located = _Field(H, tuple(sorted(tokens | doubtful)), doubtful=frozenset(doubtful), origin=(0, 0))
    return _read_field(frame, located, start, gray)


def read_single_token(image: np.ndarray) -> TokenReading:
    """The one token shown to the camera (``tableref calibrate tokens``): ReadError
    ("no_board") when no token, or more than one, shows."""
    start = time.perf_counter()
    image = _exposed(as_bgr(image))
    reading = _read_field(image, _locate(image), start)
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
