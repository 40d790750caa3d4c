"""Read an Equilibrix board from a photo: fit the Flower-of-Life drawing, read each field, the
ring of tiles round it and where the Origin stands.

Geometry (``locate_board``), on a copy about 720 px wide:

1. *Round outlines*: long edge curves whose ellipse is covered by edges nearly all round: the
   board's edge, the printed circle round the flower, sometimes a cup's rim. A hand or a cup
   that joins an outline to its own is cut away by fitting stretches of each curve too. When
   that finds no board, a busy table's pattern may touch the board's edge all round: the
   curves are cut where they turn sharply, and ellipses through pairs of the smooth arcs left,
   covered all round by edges running along them, are tried (``vision.equilibrix_outlines``).
2. *The printed circle*: in the view that makes a candidate disc round, a ring template (a
   thin dark line with bare wood on both sides) over radii and shifts; then, along rays, the
   thin line nearest it. It must have the same wood on both sides (the board's edge has the
   table outside, and its shadowed side wall passes for a thin line).
3. *Perspective*: the board's edge and the printed circle are concentric circles, so their two
   ellipses give the table's vanishing line (the double line of their pencil); sending it to
   infinity leaves an affine view, which the disc's ellipse makes round. When the edge is not
   among the outlines (a busy cloth, a cup against it, a steep view), the circle alone gives
   an affine guess, and a guess from the vanishing line, searched on a grid, whose board's
   edge (the circle's concentric twin) runs along the strongest brightness steps: scaling the
   circle's ellipse misses a steep view's edge by far more than the edge's search allows.
4. *Turn*: the drawing repeats every 60 degrees; it is matched turned in 3 degree steps with
   a small shift. When the best match is weak (glare, shadow, a steep view), the runners-up,
   the other frames and the next circles are tried too: how well the whole drawing correlates
   does not tell a steep view's guesses apart, how many of its pieces agree (step 5) does.
   So too when a circle nothing frames (a ring of dark tiles) matches surely after the circle
   the board's edge frames matched less well.
5. *Refinement*: a homography aligning the drawn lines with the photo's edges (ECC, two
   passes), then the drawing matched piece by piece round every node and along the board's
   edge, with RANSAC, which a hand or a glare spot cannot pull; of the two, the pose more
   pieces agree with wins, and when few agree the pieces are matched once more where it puts
   them.
6. *Lens*: one radial lens term (``vision.pose.Lens``, fitted as for Gemblo) through the same
   pieces, matched again where it puts them; kept when more pieces agree with it. The board's
   edge holds it beyond the drawing, where the ring lies.
7. *Upright*: the frame is turned by a multiple of 60 degrees so the node hexagon's side
   nearest the photo's top is up (the labelling ``vision.synth.equilibrix`` documents): the
   board cannot tell its sides apart, the photo can. Near a tie (the board turned by about 30
   degrees, two sides within TIE_DEG of equally near) a small pose error could pick either;
   any labelling that follows the board's turn must switch somewhere, so a lone photo keeps
   the nearest side, but ``locate_board(frame, reference=earlier_pose)`` keeps the side the
   camera's earlier pose had on top (:func:`_upright`). The ring and the Origin do not fix it:
   the Origin moves every turn and the ring empties.

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

Colour (no palette of plastics here): every photo carries its own reference, the bare wood
between the flower and the ring, which no tile covers. Its colour over the board gives the
light field (a smooth quadratic, refitted with the fields read as empty; a hand over part of
that wood, darker and redder than the light the rest agrees on, is left out, not averaged in).
A field's colour divided by the light there is then near 1 for bare wood, far darker for
black, brighter and bluer (as blue as the wood is red) for white, whatever the lamp's colour. Each field is
sampled in its middle, away from the perforated tip dots and the drawn lines. The ring's
white tiles, recognised by their shapes, anchor the white class (a glare spot on bare wood is
brighter and a little bluer, but it is no tile's shape).

Glare: a highlight adds white light, so a black tile under it can look white or like wood in
its mean; the darkest quarter of its middle, which the highlight misses, stays black, and the
field is read black (not surely; for a field read white a less dark quarter will do, since
white plastic is brighter than the wood even there). Added light moves the wood's colour towards the
lamp's, never beyond, so where a highlight partly clips a doubtful white field whose darkest
quarter keeps the wood's red hue and about its brightness, the best guess is empty; so too where
a doubtful white field's middle (its blue channel not clipped) is clearly redder than plastic and
a highlight shows there (it clips part of the middle, or the wood's grain shows), since plastic
keeps its hue under the lamp's light. Wood under a highlight turns as bright
and neutral as white plastic but keeps its grain: a white field whose darkest tenth lies well
below its middle is not sure, nor is one several times rougher than the smoothest white
fields (flat plastic) and a fair share as rough as the bare wood (a phone's tone map lifts the
wood beside black tiles until it is as bright and grey as white plastic). A soft reflection
adds more light to the glossy tiles than to the wood, so a black tile under one turns grey and
neutral, and may be read white; white plastic is brighter than the wood in any light the two
share, so a doubtful neutral field read white but darker than the bare wood round it (the
fields read empty among its neighbours and theirs, which share a shadow the smooth light field
does not follow) is best guessed black; so too one a highlight partly clips whose darkest part
(which the highlight misses) is neutral and no brighter than the darkest part of the wood round it.

Covered fields' best guess: skin and a sleeve are read black or white by their brightness,
but plastic is neutral (bluer over the wood's light than wood or skin). A covered field (see
Doubt) as red as the wood is guessed empty, as most fields are, and stays uncertain; for black
only where this photo's sure black fields are clearly bluer than the wood.

Doubt: a field is uncertain when its colour sits between the classes or far from its own
class, when its middle is rough (a hand's creases, a sleeve), when it is washed out by glare
or only partly bluer than white (glared wood), when read white it is much brighter or less
blue than the ring's white tiles (a highlight: many glared fields would otherwise widen the
white class towards themselves), when it is black only in part or white but grained (above),
when read white it is far rougher than the bare wood round the flower (plastic is flat: a drawn
line crosses its middle where the pose, fitted through the pieces of one corner, is off),
or, read as empty, when its drawn outline does not show or most of its neighbours are covered
(rough, outline hidden, or far from every class: a hand or a cup lies over them, and skin can
look like wood; doubt of other kinds does not spread). The five-dot rule is a prior: no node
holds more than six fields of one colour (five, six with the 5+1 token), so where more are
read round a node, all of that colour there are uncertain. Every field is uncertain when too
few pieces of the drawing agree with the pose (its ``quality``, their share).

Shadow: a hard shadow darkens bare wood more than the smooth light field follows, so by colour
a shadowed field can look black. A black tile is the darkest thing in its field (the gap round
it is lighter than its middle); a field read black whose outline is not lighter is not surely
black, and one whose drawn outline shows as bare wood's does is re-read, not surely: empty when
as red as the wood; plastic, white only when its outline shows at least half as much as bare
wood's (a shadow's edge across a black tile darkens part of its gap, never that much). The
five-dot rule counts the colour reading too.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial
from typing import Mapping

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rules import equilibrix, flower

from . import flowergrid as fg
from .equilibrix_outlines import OrientedEdges, ellipse_points, ellipse_radius, paired_ellipses, smooth_arcs
from .errors import ReadError
from .image_io import as_bgr
from .matching import correlation_peak, fit_with_lens, gradient_at
from .pose import BoardPose, apply_h, in_photo, rectify
from .reading import UNCERTAIN_BELOW

EMPTY = "."
LABELS = (EMPTY, "B", "W")
COLOUR_WORDS = {"B": "black", "W": "white"}
PPU = 32.0  # top-down pixels per r for reading
WORK_SIDE = 720  # the board is found on a copy this large (long side)
FIT_PPU = 10.0  # top-down pixels per r while matching the drawing
DRAW_RADIUS = fg.OUTER_LINE + 0.15  # the matched template spans the drawing
EDGE_RAYS = 120  # rays searched for the board's edge
EDGE_RANGE = (0.94, 1.06)  # where on a ray (share of the first ellipse's radius) the edge may lie
EDGE_COVER = 0.45  # share of a board edge's ellipse that edges must cover
CUT_SHOWN, CUT_COVER = (0.25, 0.95), 0.8  # an outline this much in the photo, covered so in it: cut by its edge
MAX_CURVES = 60  # the longest edge curves tried as the board's edge
MIN_CURVE = 0.3  # the shortest curve tried, as a share of the photo's short side
MIN_DISC = 0.2  # the board (or its printed circle) spans at least this share of the photo's short side
OUTLINES_TRIED = 3  # distinct round outlines tried as the board's edge or its printed circle
SAME_OUTLINE = 0.02  # ellipses this close (share of their radius) all round are one outline
SIDES_MAX = 3.0  # Lab difference across the printed circle above which it is the board's edge
SURE_CIRCLE = 0.15  # a printed circle matched this well ends the search
MIN_CIRCLE = 0.1  # correlation of the printed circle's template below which there is none
CIRCLE_PPU = 8.0  # the printed circle is looked for in a view this fine
CIRCLE_SCALES = tuple(np.linspace(0.85, 1.15, 7))  # its radius in the disc's view, relative to the true one
CIRCLE_SHOWN = 0.6  # share of the printed circle that must show for its match to count in full
CIRCLE_SHIFT = 2.0  # how far off the disc's middle perspective may put it (r units)
HORIZON_MAX = 0.8  # the table's vanishing lines searched (1 / distance in half photo widths): up to ~50 degrees of tilt
HORIZON_STEPS = 8  # grid steps from no tilt to HORIZON_MAX
TURN_STEP_DEG = 3.0  # the turn search's step; the alignment takes out what is left
RIDGE_R = 0.15  # width of a drawn line in the matched template (r units): wide enough to lock on
SHIFT_R = 0.5  # how far the global match may move the drawing (r units)
SURE_MATCH = 0.45  # a turn matched this well needs no runner-up
TURNS_TRIED = 3  # turns aligned when the best match is not sure
SURE_VOTES = 0.8  # share of the drawing's pieces agreeing with the alignment that needs no second opinion
MIN_MATCH = 0.3  # normalised correlation with the drawing below which there is no board
MIN_TRY = 0.2  # ... and below which a first guess is not fitted (one between counts when its pieces agree)
CIRCLES_TRIED = 3  # printed circles whose guesses are fitted when none matches surely
GUESSES_FITTED = 8  # at most this many first guesses (frames and turns) are fitted, best matched first
REFINE_PPU = (12.0, 20.0)  # the alignment's passes, coarse to fine
ECC_STEPS = 40  # iterations of each alignment pass
PATCH_PPU = 16.0  # the last fit: neighbourhoods of the drawing matched one by one
PATCH_R, SEARCH_R = 1.0, 0.35  # their half-size and how far each may move (r units)
PATCH_MIN = 0.3  # a neighbourhood matched worse than this is not used
POSE_TRUST = 0.3  # share of the drawing's pieces that must agree with a pose for its fields to be read
PATCH_TOLERANCE = 0.05  # r: matches further off the common homography are outliers
CIRCLE_ROUNDS = 12  # a pose few pieces confirm: rounds of fitting to the printed circle and matching again
CIRCLE_STEPS = 3  # ... each round this many steps of moving the circle's points onto it (see _circle_fit)
CIRCLE_KEEP = 3.0  # ... keeping the pieces within this many PATCH_TOLERANCE of the pose so far
PIECE_WEIGHT = 4  # ... each piece weighing as this many of the circle's EDGE_RAYS points
SIDE_PIECES = 2  # agreeing pieces in a sixth of the drawing below which that sixth is bare
LENS_ROUNDS = 2  # the lens term is fitted, the drawing matched again where it puts it, and refitted
LENS_RANGE = (-0.34, 0.14)  # inside the lens search's ends (-0.35, 0.15): a fit at an end is no lens
LENS_MIN = 0.08  # a weaker lens term is within what the fit finds on lens-free photos (up to 0.06)
LENS_GAIN = 1  # a lens term must bring more than this many more of the drawing's pieces into agreement
CORE_LINE = 0.07  # sampled pixels keep this far from a drawn line (r units)
CORE_NODE = 0.3  # ... and from every tip (the dots sit within 0.24 of it)
BAND_LINE = 0.045  # the outline band of a field: within this of its drawn boundary
WOOD_BAND = (3.08, 3.22, 3.42, 3.62)  # bare wood: inside the printed circle, and outside it
LIGHT_TRIES, LIGHT_SET = 300, 8  # random sets of wood samples a light field is fitted through first
LIGHT_AGREE = 0.08  # log units: a wood sample this close to a light field agrees with it
LIGHT_MAJORITY = 2 / 3  # share of the samples a consensus must hold to leave any out (see _covered_samples)
# Class centres in (brightness, blueness) of colour / light: log units, adapted per photo.
CENTRES = {EMPTY: (0.0, 0.0), "B": (-1.8, 0.7), "W": (0.45, 0.6)}
SPREAD = {EMPTY: (0.06, 0.03), "B": (0.2, 0.2), "W": (0.1, 0.08)}  # smallest spreads (noise, plastic)
MAX_SPREAD = {EMPTY: (0.15, 0.08), "B": (0.4, 0.35), "W": (0.2, 0.08)}  # a hand must not widen a class
# How far a class may move from its nominal centre: glare moves wood along "more white light"
# (brighter, a little bluer), which must never become the white class.
DRIFT = np.array([0.3, 0.12])
WHITE_NEIGHBOURHOOD = np.array([0.1, 0.06])  # how close white tiles' colours lie in one photo
WHITE_DRIFT = np.array([0.35, 0.5])
OUTLIER = 3.0  # spreads from its class beyond which a field's colour is not that class's
TEXTURE_RATIO, TEXTURE_FLOOR = 3.0, 6.0  # a field's middle this much rougher than the usual: not a tile or wood
CLIPPED = 250  # a raw channel this high is clipped
GLARE_PART = 0.3  # share of a field's middle with a clipped channel from which a highlight lies across it
DARK_PART = 0.25  # share of a field's middle, its darkest, that a highlight is judged to have missed
PARTLY_BLACK = -1.0  # log brightness over the wood's below which that part is a black tile's
PARTLY_BLACK_WHITE = -0.5  # ... in a field read white (white plastic lies about 0.45 above the wood)
WHITE_GRAIN = 0.015  # least margin below white tiles' usual darkest tenth (share of the middle)
NEIGHBOUR_R = 0.62  # r: a field's neighbours (5 or 6) have their centroids this close
HIDDEN_AROUND = 0.5  # share of doubtful neighbours that makes an empty-looking field doubtful
WOOD_ROUND = 3  # fields read empty round a field (neighbours and theirs) that show the light there
OUTLINE_SHARE = 0.45  # an empty field whose outline shows less than this share of the usual: hidden
DRAWN_OUTLINE = 0.25  # a field whose outline shows more than this share of an empty one's is no black tile when
# as red as the wood (neutral in a shadow: see WHITE_OUTLINE)
BLACK_OUTLINE = -0.05  # a black tile's outline is lighter than its middle by more than this share
WHITE_OUTLINE = 0.5  # a shadowed neutral field whose outline shows this share of an empty one's is white
SKIN_SHARE = 0.25  # a covered field read black but bluer than the wood by less than this share of black's: not plastic
BLACK_HUE_GAP = 0.3  # ... where the sure black fields are at least this much bluer than the wood
PLASTIC_ROUGH, ROUGH_FLOOR = 2.0, 1.0  # a white field rougher than this many times white plastic's (+ grey levels) ...
WOOD_ROUGH = 0.3  # ... and than this share of the bare wood's is not surely plastic
EDGE_INSET = 2.0  # photo pixels: a field's middle within this of the photo's edge (or beyond) is not seen
VERIFY_SHARE = 0.6  # a frame whose drawing shows less than this share of the located one's: moved
VERIFY_FLOOR = 1.2  # line contrast below which no drawing is where the pose says
VERIFY_DEFAULT = 2.0  # the reference for a pose that carries none
SLOT_R = 0.8  # a ring slot's search radius (r units)
SHAPE_WINDOW = 1.0  # half-size of the window a ring tile's silhouette is compared in (r units)
SHAPE_TURNS = (-8.0, -4.0, 0.0, 4.0, 8.0)  # degrees a ring tile may lie off the lattice's directions
MIN_OVERLAP = 0.7  # a silhouette overlapping every shape less (IoU) is not a tile
SHAPE_MARGIN = 0.1  # overlap (IoU) by which the best shape must beat the next to be sure
MIN_TILE_AREA = 0.15  # r^2: smaller blobs in a slot are not a tile
RED = 0.7  # redness (log R over the mean of G and B, light divided out) of the tetrahedron
TIE_DEG = 4.0  # degrees off a tie of the top side within which a reference pose keeps the labelling
CORNER_NODES = ((0, -3), (3, -3), (3, 0), (0, 3), (-3, 3), (-3, 0))  # clockwise from the top side's left end


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


# --- the drawing -----------------------------------------------------------------------------

@lru_cache(maxsize=4)
def _raster(ppu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Field index, distance to a drawn line, distance to a node and radius, per top-down pixel."""
    n = int(round(fg.EXTENT[0] * ppu))
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    x = xs / np.float32(ppu) - np.float32(fg.DISC)  # rectify's convention: pixel i is at i / ppu
    y = ys / np.float32(ppu) - np.float32(fg.DISC)
    f, line, node = fg.locate_fields(x, y)
    radius = np.hypot(x, y)
    line = np.minimum(line, np.abs(radius - fg.OUTER_LINE))
    return f, line, node, radius


@lru_cache(maxsize=1024)
def drawing(ppu: float, turn_deg: float = 0.0) -> np.ndarray:
    """The drawn lines as a template: odd-sized, the board's centre in the middle pixel, the
    drawing turned clockwise on screen by ``turn_deg``."""
    half = int(math.ceil(DRAW_RADIUS * ppu))
    d = (np.mgrid[0:2 * half + 1, 0:2 * half + 1].astype(np.float32) - half) / np.float32(ppu)
    a = math.radians(turn_deg)
    x = math.cos(a) * d[1] + math.sin(a) * d[0]  # undo the turn
    y = -math.sin(a) * d[1] + math.cos(a) * d[0]
    _, line, _ = fg.locate_fields(x, y)
    radius = np.hypot(x, y)
    line = np.minimum(line, np.abs(radius - fg.OUTER_LINE))
    return (np.exp(-(line / RIDGE_R) ** 2) * (radius <= DRAW_RADIUS)).astype(np.float32)


def _edges(gray: np.ndarray) -> np.ndarray:
    g = gray.astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3))
    return np.sqrt(mag)  # compresses the tiles' strong edges against the thin drawn lines


# --- locating ----------------------------------------------------------------------------------

def _working(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A small copy to locate on: grey, CIE Lab (0-1 input), and its scale."""
    s = min(1.0, WORK_SIDE / max(image.shape[:2]))
    small = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1.0 else image
    lab = cv2.GaussianBlur(cv2.cvtColor(small.astype(np.float32) / 255, cv2.COLOR_BGR2Lab), (0, 0), 1.5)
    return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), lab, s


class _Edges:
    """The working copy's edges, found once per photo. The search for whole round outlines and,
    when it finds no board, the busy-table search through the curves' smooth arcs share them
    (the live referee pays both on every frame in which no board is in sight), and that
    second search does not look again inside the outlines the first one already tried."""

    def __init__(self, gray: np.ndarray):
        self.gray, self.shape = gray, gray.shape
        blur = cv2.GaussianBlur(gray, (0, 0), 1.5)
        self.gx, self.gy = cv2.Sobel(blur, cv2.CV_32F, 1, 0), cv2.Sobel(blur, cv2.CV_32F, 0, 1)
        grad = cv2.magnitude(self.gx, self.gy)
        high = max(float(np.percentile(grad, 90)), 8.0)  # the photo's own contrast sets the cut
        self.edges = cv2.Canny(blur, 0.4 * high, high)
        self.near = cv2.dilate(self.edges, np.ones((5, 5), np.uint8)) > 0
        self.contours = cv2.findContours(self.edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)[0]
        self.outlines: dict[bool, list[tuple[float, tuple]]] = {}  # per ``arcs``: see _round_outlines
        self.tried: list[tuple] = []  # outlines the whole-curve search looked for a printed circle in
        self.curve_ellipses = [e for e in map(cv2.fitEllipse, self._long_curves()) if self.plausible(e)]

    @cached_property
    def thin(self) -> np.ndarray:
        """:func:`_thin_dark` of the working copy (float32), for every printed circle looked for in it."""
        return _thin_dark(self.gray).astype(np.float32)

    def _long_curves(self) -> list[np.ndarray]:
        """The longest edge curves, and stretches of the very long ones: a hand or a cup joins
        an outline to its own, and the outline's stretches alone still fit."""
        h, w = self.shape
        shortest = int(MIN_CURVE * min(h, w))
        pieces = []
        for contour in sorted(self.contours, key=len, reverse=True)[:MAX_CURVES]:
            if len(contour) < shortest:
                break
            pieces.append(contour)
            if len(contour) >= 3 * shortest:
                step = len(contour) // max(2, len(contour) // (2 * shortest))
                pieces += [contour[k:k + 2 * step] for k in range(0, len(contour) - step, step)]
        return pieces

    def plausible(self, ellipse) -> bool:
        """Could the ellipse be the board's edge or its printed circle, by its size and shape?"""
        h, w = self.shape
        _, (d1, d2), _ = ellipse
        return MIN_DISC * min(h, w) <= max(d1, d2) <= 1.6 * max(h, w) and min(d1, d2) >= 0.35 * max(d1, d2)

    def cover(self, ellipse, t: np.ndarray) -> float:
        """Share of the ellipse (points at parameters ``t``) with an edge within 2 px; none
        when less than 60 % of it lies in the photo."""
        h, w = self.shape
        xs, ys = np.round(ellipse_points(ellipse, t)).astype(int).T
        inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        return self.near[ys[inside], xs[inside]].mean() if inside.mean() >= 0.6 else 0.0

    def outline_cut(self) -> bool:
        """Does a round outline run out of the photo: an ellipse through one of the long
        curves whose part in the photo edges cover nearly all along, while a fair part of it
        lies beyond the photo's edge? Asked when no board was placed, to say why."""
        h, w = self.shape
        t = np.linspace(0, 2 * np.pi, 180, endpoint=False)
        for ellipse in self.curve_ellipses:
            xs, ys = np.round(ellipse_points(ellipse, t)).astype(int).T
            inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            if CUT_SHOWN[0] <= inside.mean() <= CUT_SHOWN[1] and self.near[ys[inside], xs[inside]].mean() >= CUT_COVER:
                return True
        return False


def _round_outlines(edges: _Edges, arcs: bool = False) -> list[tuple[float, tuple]]:
    """Ellipses that may be the board's edge or its printed circle, best first: of the long
    edge curves in the photo, those whose ellipse is well covered by edges all round (a cup or
    a hand breaks an outline into pieces, each of which still gives its ellipse; a patterned
    table gives short curves). ``arcs``: also the ellipses through the curves' smooth arcs,
    alone and in pairs (:mod:`vision.equilibrix_outlines`: a busy table's pattern runs into
    the board's edge all round, so no curve is the edge alone). Found once per ``arcs``."""
    if arcs not in edges.outlines:
        edges.outlines[arcs] = _find_outlines(edges, arcs)
    if not edges.outlines[arcs]:
        raise ReadError("no_board", "no round board's edge was found")
    return edges.outlines[arcs]


def _find_outlines(edges: _Edges, arcs: bool) -> list[tuple[float, tuple]]:
    """:func:`_round_outlines`, scored and sorted (empty when there are none)."""
    h, w = edges.shape
    t = np.linspace(0, 2 * np.pi, 180, endpoint=False)
    ellipses = list(edges.curve_ellipses)
    if arcs:
        pieces = smooth_arcs(edges.contours, min(h, w))
        if not pieces and not ellipses:
            return []  # a plain table: nothing to pair, nothing to score
        # Edges across an ellipse (a stripe it crosses) do not cover it: every ellipse, the
        # whole curves' too, is scored by the edges running along it.
        oriented = OrientedEdges(edges.gx, edges.gy, edges.edges)
        score = partial(oriented.cover_all, t=t)
        rough = paired_ellipses(pieces, score, edges.plausible)
        ellipses += [e for e in map(oriented.snap, rough) if edges.plausible(e)]
        scores = score(ellipses)
    else:
        scores = [edges.cover(e, t) for e in ellipses]
    outlines = [(float(score), ellipse) for score, ellipse in zip(scores, ellipses) if score >= EDGE_COVER]
    return sorted(outlines, key=lambda f: -f[0])


def _pose_from(board_to_photo: np.ndarray, size: tuple[int, int], k: float = 0.0, quality: float = 0.0,
               residual: float = 0.0) -> BoardPose:
    h = board_to_photo / board_to_photo[2, 2]
    pose = BoardPose(np.linalg.inv(h), np.zeros((6, 2)), quality, size, fg.EXTENT, k, residual)
    corners = pose.to_photo(np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC)
    return replace(pose, corners=corners)


def _ellipse_pose(ellipse, size: tuple[int, int], scale: float) -> np.ndarray:
    """Board -> photo affine putting the board's edge, times ``scale``, on the ellipse."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    lin = rot @ np.diag([d1 / 2, d2 / 2]) / (scale * fg.DISC)
    m = np.eye(3)
    m[:2, :2] = lin
    m[:2, 2] = np.array([cx, cy]) - lin @ np.array([fg.DISC, fg.DISC])
    return m


def _about_centre(turn_deg: float, shift: np.ndarray = np.zeros(2)) -> np.ndarray:
    """Board-frame map: turn by ``turn_deg`` (clockwise on screen) about the centre, then shift."""
    a = math.radians(turn_deg)
    c = np.array([fg.DISC, fg.DISC])
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    m = np.eye(3)
    m[:2, :2] = rot
    m[:2, 2] = c - rot @ c + shift
    return m


def _turns(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int]) -> list[tuple[float, float, np.ndarray]]:
    """How well the drawing, turned, lies on the photo's edges in the top-down view of
    ``frame1`` (right but for the turn and a small shift): (correlation, turn, shift) per turn."""
    margin = 1.0
    rect = cv2.GaussianBlur(_edges(rectify(gray, _pose_from(frame1, size), FIT_PPU, margin)), (0, 0), 0.6)
    c = (fg.DISC + margin) * FIT_PPU
    pad = int(math.ceil(SHIFT_R * FIT_PPU))
    out = []
    for turn in np.arange(0.0, 60.0, TURN_STEP_DEG):
        tmpl = drawing(FIT_PPU, float(turn))
        h0 = (tmpl.shape[0] - 1) // 2
        x0, x1 = int(round(c - h0)) - pad, int(round(c - h0)) + tmpl.shape[0] + pad
        score = cv2.matchTemplate(rect[x0:x1, x0:x1], tmpl, cv2.TM_CCOEFF_NORMED)
        _, top, _, (x, y) = cv2.minMaxLoc(score)
        out.append((float(top), float(turn), (np.array([x, y]) + x0 + h0 - c) / FIT_PPU))
    return out


def _global_match(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int]) -> list[tuple[np.ndarray, float]]:
    """Board -> photo maps that lay the drawing on the photo's edges, starting from ``frame1``
    (right but for the turn): the turns (within 60 degrees) whose match is a local best, best
    first, each with its correlation."""
    scores = _turns(gray, frame1, size)
    n = len(scores)
    peaks = [scores[k] for k in range(n) if scores[k][0] >= max(scores[(k - 1) % n][0], scores[(k + 1) % n][0])]
    out = []
    for top, turn, shift in sorted(peaks, key=lambda p: -p[0]):
        # Board point b lies at centre + shift + turn(b - centre) in the frame's view.
        out.append((frame1 @ _about_centre(turn, shift), top))
    return out


def _disc_ellipse(gray: np.ndarray, guess) -> tuple[tuple[float, float], tuple[float, float], float]:
    """The board's edge near the ellipse ``guess``: on rays from its middle, the strongest
    brightness step close to it; an ellipse through those steps, refitted without the ones that
    lie off it (a ring tile, a hand, a cup)."""
    t = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)
    k = np.linspace(EDGE_RANGE[0], EDGE_RANGE[1], 64)
    centre = np.array(guess[0])
    rays = centre + k[None, :, None] * (ellipse_points(guess, t) - centre)[:, None, :]
    xs, ys = rays[..., 0].astype(np.float32), rays[..., 1].astype(np.float32)
    blur = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.5)
    prof = cv2.remap(blur, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    j = np.argmax(np.abs(prof[:, 2:] - prof[:, :-2]), axis=1) + 1
    return _robust_ellipse(rays[np.arange(EDGE_RAYS), j][_rays_in(rays, gray.shape)]) or guess


def _rays_in(rays: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Which rays (rays x samples x 2, photo pixels) lie wholly in the photo: on one that runs
    out of it (a board cut by the photo's edge) the step found is no outline's."""
    h, w = shape[:2]
    return ((rays[..., 0] >= 0) & (rays[..., 0] <= w - 1) & (rays[..., 1] >= 0) & (rays[..., 1] <= h - 1)).all(1)


@lru_cache(maxsize=None)
def _ring_template(rho: float) -> tuple[float, int, np.ndarray]:
    """The printed circle's template at ``rho`` times its radius, in the disc's view at
    CIRCLE_PPU: (radius, half size, template). A thin line with bare wood on both sides: the
    drawing's scallops and the ring do not fit."""
    radius = fg.OUTER_LINE * rho
    half = int(math.ceil((radius + 0.3) * CIRCLE_PPU))
    d = (np.mgrid[0:2 * half + 1, 0:2 * half + 1].astype(np.float32) - half) / np.float32(CIRCLE_PPU)
    gap = np.abs(np.hypot(d[0], d[1]) - radius)
    return radius, half, (np.exp(-(gap / 0.08) ** 2) - 0.5 * ((gap > 0.12) & (gap < 0.3))).astype(np.float32)


def _thin_dark(gray: np.ndarray) -> np.ndarray:
    """Thin dark lines (a black-hat filter): the printed circle among them."""
    return cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))


def _circle_ellipse(gray: np.ndarray, disc, size: tuple[int, int], thin: np.ndarray):
    """The printed circle round the flower, as an ellipse in the photo. In the view that makes
    the disc round it is nearly a circle, but off-centre under perspective: a ring template
    over radii and shifts finds it in the thin dark lines; then, on rays from its middle, the
    thin line nearest the found ring gives the points an ellipse is fitted through.
    ``thin``: the photo's :func:`_thin_dark` (as float32), found once for all its outlines."""
    frame = _ellipse_pose(disc, size, 1.0)
    pose = _pose_from(frame, size)
    m = CIRCLE_SHIFT + 0.5  # margin: the ring template may reach beyond the disc's view
    hat = _thin_dark(rectify(gray, pose, CIRCLE_PPU, m)).astype(np.float32)
    ys, xs = np.mgrid[0:hat.shape[0], 0:hat.shape[1]] / CIRCLE_PPU - (fg.DISC + m)
    hat[np.hypot(xs, ys) > fg.RING_RADIUS] = 0  # the board's edge and side wall are thin and dark too
    shown = in_photo(pose, CIRCLE_PPU, hat.shape, m)
    hat[~shown] = 0  # beyond the photo's edge rectify smears its last pixels into streaks
    best = (-np.inf, 0.0, 0.0, 1.0)
    c = (fg.DISC + m) * CIRCLE_PPU
    for rho in CIRCLE_SCALES:
        radius, half, tmpl = _ring_template(rho)
        pad = int(CIRCLE_SHIFT * CIRCLE_PPU)
        x0 = int(round(c)) - half - pad
        if x0 < 0 or x0 + 2 * half + 1 + 2 * pad > hat.shape[0]:
            continue
        score = cv2.matchTemplate(hat[x0:x0 + 2 * half + 1 + 2 * pad, x0:x0 + 2 * half + 1 + 2 * pad], tmpl,
                                  cv2.TM_CCOEFF_NORMED)
        _, top, _, (x, y) = cv2.minMaxLoc(score)
        if top > best[0]:
            best = (top, (x0 + x + half) / CIRCLE_PPU - m, (x0 + y + half) / CIRCLE_PPU - m, radius)
    top, u, v, radius = best
    if not np.isfinite(top):
        return None, 0.0
    # A circle cut by the photo's edge matches only as much of the template as shows: its
    # score is that of the part in the photo.
    a = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    on = np.round((np.column_stack([u + radius * np.cos(a), v + radius * np.sin(a)]) + m) * CIRCLE_PPU).astype(int)
    on = np.clip(on, 0, np.array(hat.shape[::-1]) - 1)
    top /= max(float(shown[on[:, 1], on[:, 0]].mean()), CIRCLE_SHOWN)
    t = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)
    k = np.linspace(0.88, 1.12, 48)
    board = np.stack([u + radius * k[None, :] * np.cos(t)[:, None], v + radius * k[None, :] * np.sin(t)[:, None]], -1)
    photo = pose.to_photo(board.reshape(-1, 2)).reshape(EDGE_RAYS, len(k), 2).astype(np.float32)
    prof = cv2.remap(thin, photo[..., 0], photo[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    j = np.argmax(prof, axis=1)
    return _robust_ellipse(photo[np.arange(EDGE_RAYS), j][_rays_in(photo, gray.shape)]), float(top)


def _sides_differ(lab: np.ndarray, ellipse) -> float:
    """Median colour difference (CIE Lab) just inside and just outside an ellipse, over sectors
    all round: the printed circle has bare wood on both sides, the board's edge has the table
    (or the board's side wall) outside."""
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    pts = np.stack([ellipse_points(ellipse, t, k) for k in (0.95, 1.05)], 1).astype(np.float32)  # 72 x 2 x 2
    pts = pts[_rays_in(pts, lab.shape)]  # a pair beyond the photo's edge would read one smeared colour twice
    if not len(pts):
        return 0.0
    out = cv2.remap(lab, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return float(np.median(np.linalg.norm(out[:, 0] - out[:, 1], axis=1)))


def _same_ellipse(a, b) -> bool:
    """Do two ellipses lie within SAME_OUTLINE of each other all round? Then looking for the
    printed circle inside one finds what it finds inside the other."""
    pts = ellipse_points(a, np.linspace(0, 2 * np.pi, 36, endpoint=False))
    return bool(np.abs(ellipse_radius(b, pts) - 1).max() < SAME_OUTLINE)


def _robust_ellipse(pts: np.ndarray):
    """An ellipse through points, refitted without the ones that lie off it."""
    keep = np.ones(len(pts), bool)
    ellipse = None
    for _ in range(4):
        if keep.sum() < 12:
            return ellipse
        ellipse = cv2.fitEllipse(pts[keep].astype(np.float32))
        rad = ellipse_radius(ellipse, pts)
        keep = np.abs(rad - 1) < max(0.015, 2.5 * np.median(np.abs(rad[keep] - 1)))
    return ellipse


def _conic(ellipse, norm: np.ndarray) -> np.ndarray:
    """The ellipse as a 3 x 3 conic matrix in normalised coordinates (``norm`` maps pixels there)."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    m = r @ np.diag([4 / d1 ** 2, 4 / d2 ** 2]) @ r.T
    c = np.array([cx, cy])
    conic = np.block([[m, (-m @ c)[:, None]], [(-m @ c)[None, :], np.array([[c @ m @ c - 1]])]])
    inv = np.linalg.inv(norm)
    return inv.T @ conic @ inv


def _normaliser(size: tuple[int, int]) -> np.ndarray:
    """Pixels -> coordinates in which the photo's width spans -1..1 (well conditioned)."""
    w, h = size
    return np.array([[2 / w, 0, -1], [0, 2 / w, -h / w], [0, 0, 1.0]])


def _flattened_frame(to_flat: np.ndarray, ellipse, size: tuple[int, int], scale: float) -> np.ndarray:
    """Board -> photo map given ``to_flat`` (photo -> a view where the table is seen straight,
    up to an affine map): the ellipse, carried there, is made round as the circle at ``scale``
    times the board's edge."""
    flat = apply_h(to_flat, ellipse_points(ellipse, np.linspace(0, 2 * np.pi, 90, endpoint=False)))
    blow = 1000.0  # fitEllipse wants pixel-sized numbers
    affine = _ellipse_pose(cv2.fitEllipse((flat * blow).astype(np.float32)), size, scale)
    return np.linalg.inv(to_flat) @ np.diag([1 / blow, 1 / blow, 1.0]) @ affine


def _horizon_frame(gray: np.ndarray, circle, size: tuple[int, int]) -> np.ndarray | None:
    """Board -> photo map (right but for the turn) from the printed circle alone, when the
    board's edge is not among the round outlines (a busy cloth, a cup against it, a steep
    view): scaling the circle's ellipse by the board's proportions misses the edge by far more
    than its search allows once the view is steep. Every vanishing line of the table (within
    HORIZON_MAX) fixes, with the circle, where the edge must lie; the line whose edge runs
    along the strongest brightness steps wins, then the edge found there gives the exact frame."""
    norm = _normaliser(size)
    blur = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.5)
    gx, gy = cv2.Sobel(blur, cv2.CV_32F, 1, 0), cv2.Sobel(blur, cv2.CV_32F, 0, 1)
    t = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)
    ring = ellipse_points(circle, t)
    w, h = size

    def edge_at(line: np.ndarray) -> tuple[float, np.ndarray | None]:
        to_flat = np.array([[1, 0, 0], [0, 1, 0], [line[0], line[1], 1.0]]) @ norm
        if (to_flat[2] @ np.vstack([ring.T, np.ones(len(ring))])).min() < 0.3:
            return -1.0, None  # the circle would reach the horizon
        frame = _flattened_frame(to_flat, circle, size, fg.OUTER_LINE / fg.DISC)
        edge = apply_h(frame, np.column_stack([np.cos(t), np.sin(t)]) * fg.DISC + fg.DISC)
        inside = (edge[:, 0] >= 1) & (edge[:, 0] < w - 1) & (edge[:, 1] >= 1) & (edge[:, 1] < h - 1)
        if inside.mean() < 0.6:
            return -1.0, None
        tangent = np.roll(edge, -1, 0) - np.roll(edge, 1, 0)
        normal = np.column_stack([tangent[:, 1], -tangent[:, 0]]) / np.maximum(np.hypot(*tangent.T), 1e-9)[:, None]
        pts = edge[inside].astype(np.float32)[None]
        g = np.column_stack([cv2.remap(d, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR)[0] for d in (gx, gy)])
        return float(np.median(np.abs((g * normal[inside]).sum(1)))), edge

    step = HORIZON_MAX / HORIZON_STEPS
    grid = np.arange(-HORIZON_STEPS, HORIZON_STEPS + 1) * step
    lines = [np.array([a, b]) for a in grid for b in grid if math.hypot(a, b) <= HORIZON_MAX + 1e-9]
    best = max(lines, key=lambda line: edge_at(line)[0])
    fine = [best + np.array([a, b]) * step / 4 for a in range(-3, 4) for b in range(-3, 4)]
    edge = max((edge_at(line) for line in fine), key=lambda r: r[0])[1]
    if edge is None:
        return None
    return _perspective_frame(_disc_ellipse(gray, cv2.fitEllipse(edge.astype(np.float32))), circle, size)


def _perspective_frame(disc, circle, size: tuple[int, int]) -> np.ndarray | None:
    """Board -> photo map (right but for the turn) from the images of two concentric circles,
    the board's edge and the printed circle. Their pencil holds one degenerate conic, the
    vanishing line of the table counted twice; sending it to infinity leaves an affine view,
    where the disc's ellipse gives the rest."""
    norm = _normaliser(size)
    c1, c2 = _conic(disc, norm), _conic(circle, norm)
    vals, _ = np.linalg.eig(np.linalg.solve(c2, c1))
    vals = np.real(vals)
    pairs = [(abs(vals[i] - vals[j]), (vals[i] + vals[j]) / 2) for i in range(3) for j in range(i + 1, 3)]
    lam = min(pairs)[1]
    d = c1 - lam * c2
    ev, vec = np.linalg.eigh((d + d.T) / 2)
    line = vec[:, int(np.argmax(np.abs(ev)))]
    if abs(line[2]) < 1e-9:
        return None
    line = line / line[2]
    if np.hypot(line[0], line[1]) > 1.0:  # the vanishing line would cross the photo: not a table seen from above
        return None
    hp = np.array([[1, 0, 0], [0, 1, 0], [line[0], line[1], 1.0]])
    return _flattened_frame(hp @ norm, disc, size, 1.0)


def _align(gray: np.ndarray, board_to_photo: np.ndarray, size: tuple[int, int], ppu: float, margin: float,
           template: np.ndarray, blur: float) -> tuple[np.ndarray, float]:
    """Align ``template`` (drawn in the top-down frame at ``ppu`` with ``margin``) with the photo's
    edges by a homography (ECC) in the top-down view of ``board_to_photo``: small errors of
    scale, turn, shift and perspective are all taken out at once."""
    rect = cv2.GaussianBlur(_edges(rectify(gray, _pose_from(board_to_photo, size), ppu, margin)), (0, 0), blur)
    tmpl = cv2.GaussianBlur(template, (0, 0), blur)
    warp = np.eye(3, dtype=np.float32)
    try:
        cc, warp = cv2.findTransformECC(tmpl, rect, warp, cv2.MOTION_HOMOGRAPHY,
                                        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ECC_STEPS, 1e-5), None, 5)
    except cv2.error:
        return board_to_photo, 0.0
    to_px = np.array([[ppu, 0, margin * ppu], [0, ppu, margin * ppu], [0, 0, 1.0]])
    return board_to_photo @ np.linalg.inv(to_px) @ warp.astype(np.float64) @ to_px, float(cc)


def _refine(gray: np.ndarray, pose: BoardPose, ppu: float) -> BoardPose:
    """The drawing aligned at ``ppu`` (see :func:`_align`)."""
    _, line, _, radius = _raster(ppu)
    tmpl = (np.exp(-(line / RIDGE_R) ** 2) * (radius <= DRAW_RADIUS)).astype(np.float32)
    b2p, cc = _align(gray, np.linalg.inv(pose.homography), pose.image_size, ppu, 0.0, tmpl, 0.8)
    return _pose_from(b2p, pose.image_size, pose.distortion, cc) if cc > 0 else pose


@lru_cache(maxsize=1)
def _anchors() -> np.ndarray:
    """Board points whose neighbourhoods are matched one by one: every node and points of the
    printed circle."""
    nodes = np.array([fg.node_xy(n) for n in flower.NODES])
    a = np.radians(np.arange(0, 360, 30) + 15)
    rim = np.column_stack([np.cos(a), np.sin(a)]) * fg.OUTER_LINE
    return np.vstack([nodes, rim]) + fg.DISC


@lru_cache(maxsize=1)
def _edge_anchors() -> np.ndarray:
    """Points of the board's edge, matched like the drawing's neighbourhoods: the ring lies
    beyond the drawing, and only the edge holds a lens term fitted to the drawing there."""
    a = np.radians(np.arange(0, 360, 15) + 7.5)
    return np.column_stack([np.cos(a), np.sin(a)]) * fg.DISC + fg.DISC


@lru_cache(maxsize=1)
def _ridge_view(ppu: float, pad: float) -> np.ndarray:
    """The drawn lines and the board's edge as ridges, top-down at ``ppu`` with margin ``pad``."""
    n = int(round((fg.EXTENT[0] + 2 * pad) * ppu))
    d = np.mgrid[0:n, 0:n].astype(np.float32) / np.float32(ppu) - np.float32(pad + fg.DISC)
    _, line, _ = fg.locate_fields(d[1], d[0])
    radius = np.hypot(d[1], d[0])
    line = np.minimum(line, np.abs(radius - fg.OUTER_LINE))
    ridges = np.exp(-(line / RIDGE_R) ** 2) * (radius <= DRAW_RADIUS) + np.exp(-((radius - fg.DISC) / RIDGE_R) ** 2)
    return cv2.GaussianBlur(ridges.astype(np.float32), (0, 0), 0.8)


def _matches(gray: np.ndarray, pose: BoardPose) -> tuple[np.ndarray, np.ndarray]:
    """The drawing's neighbourhoods and the board's edge matched piece by piece near where
    ``pose`` puts them: (board points, photo points) of those that match well."""
    pad = math.ceil((PATCH_R + SEARCH_R) * PATCH_PPU) / PATCH_PPU  # a whole number of pixels
    rect = cv2.GaussianBlur(_edges(rectify(gray, pose, PATCH_PPU, pad)), (0, 0), 0.8)
    shown = in_photo(pose, PATCH_PPU, rect.shape, pad)
    ridges = _ridge_view(PATCH_PPU, pad)
    half, search = int(PATCH_R * PATCH_PPU), int(SEARCH_R * PATCH_PPU)
    wins, tmpls, board = [], [], []
    for bx, by in np.vstack([_anchors(), _edge_anchors()]):
        ox, oy = int(round((bx + pad) * PATCH_PPU)), int(round((by + pad) * PATCH_PPU))
        tmpl = ridges[oy - half:oy + half + 1, ox - half:ox + half + 1]
        win = rect[oy - half - search:oy + half + search + 1, ox - half - search:ox + half + search + 1]
        # A piece mostly beyond the photo's edge (a board cut by it) is not matched: the smear
        # there is no drawing, and a piece matched in it must not vouch for a pose.
        if shown[oy - half:oy + half + 1, ox - half:ox + half + 1].mean() < 0.5:
            continue
        if tmpl.shape == (2 * half + 1,) * 2 and win.shape == (2 * half + 2 * search + 1,) * 2:
            wins.append(win)
            tmpls.append(tmpl)
            board.append((ox / PATCH_PPU - pad, oy / PATCH_PPU - pad))
    if not board:
        return np.zeros((0, 2)), np.zeros((0, 2))
    peaks = np.array([correlation_peak(score) for score in _correlate(np.array(wins), np.array(tmpls))])
    good = peaks[:, 2] >= PATCH_MIN
    seen = np.array(board)[good] + (peaks[good, :2] - search) / PATCH_PPU
    return np.array(board)[good], pose.to_photo(seen)


def _correlate(wins: np.ndarray, tmpls: np.ndarray) -> np.ndarray:
    """Normalised correlation (OpenCV's TM_CCOEFF_NORMED) of each template over its own window,
    all at once: one call instead of one per neighbourhood, several times faster."""
    t = tmpls.shape[1]
    tz = tmpls - tmpls.mean((1, 2), keepdims=True)
    num = np.einsum("aijxy,axy->aij", sliding_window_view(wins, (t, t), axis=(1, 2)), tz, optimize=True)
    w = wins.astype(np.float64)
    sums = [np.pad(v.cumsum(1).cumsum(2), ((0, 0), (1, 0), (1, 0))) for v in (w, w * w)]
    s1, s2 = (c[:, t:, t:] - c[:, :-t, t:] - c[:, t:, :-t] + c[:, :-t, :-t] for c in sums)
    den = np.sqrt(np.maximum(s2 - s1 * s1 / (t * t), 0.0) * (tz * tz).sum((1, 2))[:, None, None])
    return np.where(den > 1e-9, num / np.maximum(den, 1e-9), 0.0).astype(np.float32)


def _near(pose: BoardPose, board: np.ndarray, photo: np.ndarray, tolerance: float = PATCH_TOLERANCE) -> np.ndarray:
    """Which matched pieces lie within ``tolerance`` of where ``pose`` puts them."""
    return np.linalg.norm(pose.to_board(photo) - board, axis=1) < tolerance


def _drawn(board: np.ndarray) -> np.ndarray:
    """Which matched pieces are the drawing's (not the board's edge)."""
    return np.hypot(*(board - fg.DISC).T) < DRAW_RADIUS + 0.1


def _agreeing(pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> tuple[int, int]:
    """How many matched pieces lie where ``pose`` puts them: of the drawing's, and in all."""
    if not len(board):
        return 0, 0
    near = _near(pose, board, photo)
    return int((near & _drawn(board)).sum()), int(near.sum())


def _one_sided(pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> bool:
    """Do the drawing's pieces that agree with ``pose`` leave a side of it bare (fewer than
    SIDE_PIECES in each of two neighbouring sixths round the middle, the middle itself aside)?
    A homography through them then holds only where they lie; a pose they confirm all round is
    left as it is (one sparse sixth is common on clean photos, whose poses are right)."""
    off = board[_near(pose, board, photo) & _drawn(board)] - fg.DISC
    off = off[np.hypot(*off.T) > 0.5]
    sectors = np.floor(np.degrees(np.arctan2(off[:, 1], off[:, 0])) % 360 / 60).astype(int)
    sparse = np.bincount(sectors, minlength=6)[:6] < SIDE_PIECES
    return bool((sparse & np.roll(sparse, 1)).any())


def _lens_fit(gray: np.ndarray, pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> tuple[BoardPose,
                                                                                                tuple[int, int]]:
    """The pose with one radial lens term, fitted through the matched pieces (:func:`vision.matching.fit_with_lens`:
    least median of squares, then a search on the lens term); between fits the pieces are
    matched again where it puts them (a barrel lens moves the outer ones furthest, past the
    first search). Also how many agree with it (:func:`_agreeing`)."""
    for round_ in range(LENS_ROUNDS):
        if len(board) < 12:
            return pose, (0, 0)
        if round_:
            board, photo = _matches(gray, pose)
        H, k, rms = fit_with_lens(board, photo, pose.image_size)
        if not LENS_RANGE[0] < k < LENS_RANGE[1]:  # the search's ends: bent to wrong matches
            return pose, (0, 0)
        pose = _pose_from(H, pose.image_size, k, pose.quality, rms)
    return pose, _agreeing(pose, board, photo)


def _patches(gray: np.ndarray, pose: BoardPose) -> tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """The pose refitted through the drawing's neighbourhoods (and the board's edge) matched
    one by one, keeping only the matches that agree (RANSAC): a hand or a cup over part of the
    board moves none of it. Also how many pieces agree with it (:func:`_agreeing`) and the
    matches."""
    board_pts, photo = _matches(gray, pose)
    if len(board_pts) < 12:
        return pose, (0, 0), (board_pts, photo)
    px_per_r = math.sqrt(abs(np.linalg.det(np.linalg.inv(pose.homography)[:2, :2])))
    H, inliers = cv2.findHomography(board_pts, pose.lens.undistort(photo), cv2.RANSAC,
                                    PATCH_TOLERANCE * px_per_r)
    if H is not None and inliers.sum() >= 12:
        fitted = _pose_from(H, pose.image_size, pose.distortion, pose.quality)
        # Where the whole-drawing alignment agrees with the inliers, it is the finer of the two.
        moved = np.abs(fitted.to_board(pose.corners) - (np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC))
        pose = pose if moved.max() < PATCH_TOLERANCE else fitted
    return pose, _agreeing(pose, board_pts, photo), (board_pts, photo)


def _circle_fit(pose: BoardPose, circle: np.ndarray, board: np.ndarray, photo: np.ndarray) -> BoardPose:
    """The pose fitted through matched pieces (``board`` -> ``photo``) and the printed circle's
    points in the photo (``circle``). A circle point's place on the circle is not known, only
    that it lies on it: it is paired with the circle's point in the same direction from the
    middle as the pose puts it, and the fit is repeated (iterative closest points)."""
    centre = np.full(2, fg.DISC)
    for _ in range(CIRCLE_STEPS):
        on = pose.to_board(circle) - centre
        on = centre + fg.OUTER_LINE * on / np.maximum(np.linalg.norm(on, axis=1), 1e-9)[:, None]
        H, _ = cv2.findHomography(np.vstack([board] * PIECE_WEIGHT + [on]),
                                  pose.lens.undistort(np.vstack([photo] * PIECE_WEIGHT + [circle])), 0)
        if H is None:
            return pose
        pose = _pose_from(H, pose.image_size, pose.distortion, pose.quality)
    return pose


def _round_the_circle(gray: np.ndarray, pose: BoardPose, votes: tuple[int, int], found: tuple[np.ndarray, np.ndarray],
                      thin: np.ndarray) -> tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """A pose few of the drawing's pieces confirm, and those on some sides only
    (:func:`_one_sided`), refitted with the printed circle round the whole flower. When a hand
    covers one side, the pieces that agree lie mostly on the sides it leaves; a homography
    through them alone can tilt the far side off by half a unit (seed 3 ``hand`` #5: 0.51 r).
    The printed circle shows all round but for the hand and is found as a whole
    (:func:`_circle_ellipse`, inside the board's edge the pose puts in the photo): it fixes the
    view's tilt and scale, the pieces the turn. Fitted through both, the drawing is matched
    again where that pose puts it, the pieces near it fitted with the circle again, and so on
    (pieces first found off come in). The board's edge itself is no such witness: its strongest
    step is often the ring tiles' or the hand's. The pose is kept when more of the drawing's
    pieces agree with it than with the one before. (pose, votes, matches) as :func:`_patches`."""
    board, photo = found
    centre = np.full(2, fg.DISC)
    a = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)
    guess = cv2.fitEllipse(pose.to_photo(centre + fg.DISC * np.column_stack([np.cos(a), np.sin(a)])).astype(np.float32))
    circle, score = _circle_ellipse(gray, _disc_ellipse(gray, guess), pose.image_size, thin)
    if circle is None or score < MIN_CIRCLE:
        return pose, votes, found
    points = ellipse_points(circle, a)
    best, fitted, keep = (pose, votes, found), pose, PATCH_TOLERANCE
    for _ in range(CIRCLE_ROUNDS):
        pieces = _near(fitted, board, photo, keep) & _drawn(board)
        if pieces.sum() < 4:
            break
        fitted = _circle_fit(fitted, points, board[pieces], photo[pieces])
        board, photo = _matches(gray, fitted)
        agree = _agreeing(fitted, board, photo)
        if agree[0] > best[1][0]:
            best = (fitted, agree, (board, photo))
        keep = CIRCLE_KEEP * PATCH_TOLERANCE
    return best


def _upright(pose: BoardPose, reference: BoardPose | None = None) -> BoardPose:
    """The same pose turned by 60 degree steps so the node hexagon's side nearest the photo's
    top is the top side (the labelling of the contract's field ids).

    When the board is turned by about 30 degrees two sides are about equally near the top, and
    a small pose error may pick either. A labelling that follows the board's turn in the photo
    must switch somewhere, so a lone photo cannot avoid that switch, only place it (here: at
    the exact tie). A fixed camera can: near a tie (within TIE_DEG) the side is taken that lies
    where the top side of ``reference`` (its earlier pose) lies, so re-locating the board does
    not relabel it. Away from a tie the reference is not used."""
    corners = np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC
    sides = (corners + np.roll(corners, -1, 0)) / 2
    mids = pose.to_photo(sides)
    order = np.argsort(mids[:, 1])
    k = int(order[0])
    if reference is not None:
        centre = pose.to_photo(np.array([[fg.DISC, fg.DISC]]))[0]
        reach = float(np.mean(np.linalg.norm(mids - centre, axis=1)))
        # Two sides' heights differ by about reach * (angle off the tie, radians).
        if mids[order[1], 1] - mids[k, 1] < reach * math.radians(TIE_DEG):
            ref = reference.scaled(pose.image_size[0] / reference.image_size[0]) \
                if reference.image_size != pose.image_size else reference
            before = ref.to_photo(sides[:1])[0]
            k = int(min(order[:2], key=lambda j: np.linalg.norm(mids[j] - before)))
    board_to_undist = np.linalg.inv(pose.homography) @ _about_centre(60.0 * k)
    return _pose_from(board_to_undist, pose.image_size, pose.distortion, pose.quality, pose.residual)


def _first_frame(gray: np.ndarray, lab: np.ndarray, size: tuple[int, int], edges: _Edges, every: bool = False,
                 arcs: bool = False) -> list[list[tuple[np.ndarray, float]]]:
    """Board -> photo maps and how well the drawing matches at each, from the board's round
    outlines and the drawing's turn (:func:`_global_match`): one list per first guess of the
    frame, best turn first; a single list when the drawing matched surely.

    The best-covered ellipse in the photo is either the board's edge or the printed circle
    (whichever shows better against the table): both are tried, the printed circle is looked
    for inside each, and the better find wins. With both outlines, perspective is solved
    exactly (:func:`_perspective_frame`); with the circle alone, as an affine map and from the
    vanishing line whose board's edge shows best (:func:`_horizon_frame`). When no guess is
    sure, the guesses of the next circles are gathered too: how well the whole drawing
    correlates does not tell a steep view's guesses apart, how many of its pieces agree does
    (:func:`locate`). ``every``: gather every guess, even after a sure match (which the
    drawing's pieces then did not confirm). ``arcs``: outlines from smooth arcs too (a busy table,
    see :func:`_round_outlines`); those the whole-curve search looked inside are not tried
    again (``edges``: the photo's, shared with that search)."""
    outlines = _round_outlines(edges, arcs)
    ratio = fg.DISC / fg.OUTER_LINE
    tries, distinct = [], []
    for _, first in outlines:
        (cx, cy), (d1, d2), angle = first
        if any(math.hypot(cx - x, cy - y) < 0.05 * max(d1, d2) and abs(max(d1, d2) / max(e1, e2) - 1) < 0.05
               for (x, y), (e1, e2), _ in distinct):
            continue  # the same outline again (both sides of a line give a curve each)
        if arcs and any(_same_ellipse(first, tried) for tried in edges.tried):
            continue  # looked inside already, by the whole-curve search
        distinct.append(first)
        if len(distinct) > OUTLINES_TRIED:
            break
        if not arcs and first not in edges.tried:
            edges.tried.append(first)
        for disc in (first, ((cx, cy), (d1 * ratio, d2 * ratio), angle)):
            circle, score = _circle_ellipse(gray, disc, size, edges.thin)
            # The board's edge can pass for a thin line (its shadowed side wall): the printed
            # circle has the same wood on both sides.
            if circle is not None and _sides_differ(lab, circle) < SIDES_MAX:
                tries.append((score, disc, circle))
        if tries and max(t[0] for t in tries) >= SURE_CIRCLE:
            break  # a clear find: the other outlines need not be tried
    # A circle framed by the board's edge (an outline round it, about as much larger as on the
    # board) first, then the best matched: a ring of tiles can match the template better than
    # the printed circle, but nothing frames it so.
    framed = []
    for score, disc, circle in tries:
        (cx, cy), (c1, c2), _ = circle
        edge = next((outline for _, outline in outlines
                     if abs(math.sqrt(outline[1][0] * outline[1][1] / (c1 * c2)) / ratio - 1) < 0.15
                     and math.hypot(outline[0][0] - cx, outline[0][1] - cy) < 0.3 * max(c1, c2)), None)
        framed.append((edge is not None, score, edge or disc, circle))
    guesses: list[list[tuple[np.ndarray, float]]] = []
    circles, framed_guessed = 0, False
    for is_framed, score, disc, circle in sorted(framed, key=lambda t: (not t[0], -t[1])):
        if score < MIN_CIRCLE or circles >= CIRCLES_TRIED:
            continue
        circles += 1
        # The edge found on a busy table can be off: the circle alone (affine) is the fallback.
        frames = (lambda: _perspective_frame(_disc_ellipse(gray, disc), circle, size),
                  lambda: _ellipse_pose(circle, size, fg.OUTER_LINE / fg.DISC),
                  lambda: _horizon_frame(gray, circle, size))
        for make in frames:
            frame = make()
            if frame is None:
                continue
            found = [(b2p, top) for b2p, top in _global_match(gray, frame, size) if top >= MIN_TRY]
            # A sure match from a circle nothing frames (a ring of tiles) does not end the search
            # when a framed circle's guesses matched too: the drawing's pieces decide (:func:`locate`).
            if found and found[0][1] >= SURE_MATCH and not every and (is_framed or not framed_guessed):
                return [found]
            if found:
                guesses.append(found)
                framed_guessed |= is_framed
    if not guesses:
        raise ReadError("no_board", "no board with the Flower-of-Life drawing inside a printed circle was found")
    return sorted(guesses, key=lambda g: -g[0][1])


def _fit_drawing(gray: np.ndarray, start: BoardPose) -> tuple[BoardPose, tuple[int, int],
                                                              tuple[np.ndarray, np.ndarray]]:
    """From a first guess, the pose the drawing's pieces agree with most, their count and the
    matches. The alignment (ECC) is fine but can be led off by glare or a hand; matching the
    drawing piece by piece is robust but coarser: of both, the pose more pieces agree with wins."""
    aligned = start
    for ppu in REFINE_PPU:
        aligned = _refine(gray, aligned, ppu)
    pose, votes, found = _patches(gray, aligned)
    if votes[0] < SURE_VOTES * len(_anchors()):
        other = _patches(gray, start)
        if other[1][0] > votes[0]:
            pose, votes, found = other
    return pose, votes, found


def locate(image: np.ndarray, reference: BoardPose | None = None) -> BoardPose:
    """The round board's pose in a BGR photo; ReadError("no_board") when there is none.
    ``reference``: the board's earlier pose from the same camera, which keeps its labelling
    when the board lies near a tie of the top side (:func:`_upright`)."""
    gray, lab, s = _working(image)
    size = (gray.shape[1], gray.shape[0])
    edges = _Edges(gray)
    try:
        pose = _locate_in(gray, lab, size, edges=edges)
    except ReadError:
        # On a busy table (a patterned cloth, stripes) the pattern's edges run into the board's
        # edge all round, and no whole curve gives its ellipse: the curves' smooth arcs do.
        try:
            pose = _locate_in(gray, lab, size, arcs=True, edges=edges)
        except ReadError as missed:
            if edges.outline_cut():
                raise ReadError("no_board", "the board runs out of the photo and too little of it shows to place "
                                "it for sure; take the photo with the whole board in it") from missed
            raise
    full = (image.shape[1], image.shape[0])
    return _upright(pose.scaled(full[0] / size[0]) if s < 1.0 else pose, reference)


def _locate_in(gray: np.ndarray, lab: np.ndarray, size: tuple[int, int], arcs: bool = False,
               edges: _Edges | None = None) -> BoardPose:
    """The board's pose in the working copy (see :func:`locate`), its quality the share of the
    drawing's pieces that agree with it. ``arcs``, ``edges``: see :func:`_first_frame`."""
    edges = edges or _Edges(gray)
    guesses = _first_frame(gray, lab, size, edges, arcs=arcs)
    # Glare or shadow can favour a wrong turn by a little: then the runners-up are aligned
    # too, and the pose most of the drawing's pieces agree with wins.
    sure = len(guesses) == 1 and guesses[0][0][1] >= SURE_MATCH
    tried = guesses[0][:1] if sure else [g for found in guesses for g in found[:TURNS_TRIED]]
    best, agree, matched, top = None, (-1, -1), None, 0.0
    for attempt in range(2):
        for board_to_photo, match in sorted(tried, key=lambda g: -g[1])[:GUESSES_FITTED]:
            pose, votes, found = _fit_drawing(gray, _pose_from(board_to_photo, size, quality=match))
            if votes[0] > agree[0]:
                best, agree, matched, top = pose, votes, found, match
            if agree[0] >= SURE_VOTES * len(_anchors()):
                break
        if not sure or attempt or agree[0] >= POSE_TRUST * len(_anchors()):
            break
        # A sure match the drawing's pieces do not confirm (a steep view's affine guess can
        # correlate well and still be off): every other guess is fitted too.
        tried = [g for found in _first_frame(gray, lab, size, edges, every=True, arcs=arcs)
                 for g in found[:TURNS_TRIED]]
    if agree[0] < SURE_VOTES * len(_anchors()):
        # A steep view's first guess is off by more than a piece may move: matched again
        # where the first fit puts them, more pieces are found.
        again = _patches(gray, best)
        if again[1][0] > agree[0]:
            best, agree, matched = again
    # A pose the drawing confirms (POSE_TRUST), but on some sides only: the printed circle sets
    # its far side right. One it does not confirm is not made so (its fields stay in doubt).
    if POSE_TRUST * len(_anchors()) <= agree[0] < SURE_VOTES * len(_anchors()) and _one_sided(best, *matched):
        best, agree, matched = _round_the_circle(gray, best, agree, matched, edges.thin)
    if top < MIN_MATCH and agree[0] < POSE_TRUST * len(_anchors()):
        raise ReadError("no_board", "no board with the Flower-of-Life drawing inside a printed circle was found")
    # The lens: kept when more of the drawing and the edge agree with it than without.
    bent, bent_votes = _lens_fit(gray, best, *matched)
    if bent_votes[1] > agree[1] + LENS_GAIN and abs(bent.distortion) >= LENS_MIN:
        best, agree = bent, bent_votes
    # How much of the drawing confirms the pose: a pose it does not confirm is not trusted.
    return replace(best, quality=agree[0] / len(_anchors()))


# --- reading the fields --------------------------------------------------------------------

@lru_cache(maxsize=1)
def _sampling() -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per field, the flat indices of its middle (away from lines and tip dots) and of its
    outline band in the PPU view; and the bare-wood pixels (never covered by a tile)."""
    f, line, node, radius = _raster(PPU)
    core = (line > CORE_LINE) & (node > CORE_NODE)
    band = line < BAND_LINE
    flat_f = f.ravel()
    order = np.argsort(flat_f, kind="stable")
    cores, bands = [], []
    for i in range(len(fg.fields())):
        mine = order[np.searchsorted(flat_f[order], i):np.searchsorted(flat_f[order], i, side="right")]
        cores.append(mine[core.ravel()[mine]])
        bands.append(mine[band.ravel()[mine]])
    r1, r2, r3, r4 = WOOD_BAND
    wood = (((radius > r1) & (radius < r2)) | ((radius > r3) & (radius < r4))) & (f < 0) & (line > CORE_LINE)
    return cores, bands, np.flatnonzero(wood.ravel())


def _design(uv: np.ndarray) -> np.ndarray:
    u, v = (uv[:, 0] - fg.DISC) / fg.DISC, (uv[:, 1] - fg.DISC) / fg.DISC
    return np.column_stack([np.ones_like(u), u, v, u * u, v * v, u * v])


def _covered_samples(points: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """The wood samples a hand or a sleeve lies over: those a consensus light field does not
    follow, when it is a clear majority's (LIGHT_MAJORITY) and they are darker and redder than
    it. A least-squares fit through every sample is pulled far down beside a dark hand (the
    residuals there then mix wood and skin), so bare wood next to it looks brighter and bluer
    than the light, as white plastic does. The consensus: among fields fitted through small
    random sets of samples (a fixed draw, so a photo always reads the same), the one most
    samples lie within LIGHT_AGREE of. What else it leaves out is the light itself and is kept:
    a highlight is brighter, and a shadow darker but bluer (the lamp's warm light is gone, the
    room's remains), which the fields under it share."""
    design = _design(points)
    none = np.zeros(len(points), bool)
    if len(points) < 2 * LIGHT_SET:
        return none
    picks = np.random.default_rng(0).random((LIGHT_TRIES, len(points))).argsort(1)[:, :LIGHT_SET]
    coefs = np.linalg.pinv(design[picks]) @ logs[picks]  # LIGHT_TRIES x 6 x 3
    res = np.abs(design[None] @ coefs - logs[None]).max(2)
    agree = res < LIGHT_AGREE
    agree = agree[int(np.argmax(agree.sum(1) - 1e-3 * np.minimum(res, 1.0).mean(1)))]
    if agree.sum() < max(12, LIGHT_MAJORITY * len(points)) or agree.all():
        return none
    coef, *_ = np.linalg.lstsq(design[agree], logs[agree], rcond=None)
    off = logs[~agree] - design[~agree] @ coef  # log BGR over the consensus light
    darker, redder = np.median(off.mean(1)) < 0, np.median(off[:, 0] - off[:, 2]) < 0
    return ~agree if darker and redder else none


def _light(points: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """Quadratic light field (log colour per channel) through the points, refitted without
    outliers (glare, a hand over the rim); returns its 6 x 3 coefficients. The first fit leaves
    out the samples a hand or a sleeve covers (:func:`_covered_samples`)."""
    keep = ~_covered_samples(points, logs)
    coef = np.zeros((6, 3))
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(_design(points[keep]), logs[keep], rcond=None)
        res = np.abs(_design(points) @ coef - logs).max(1)
        keep = res < max(LIGHT_AGREE, 2.5 * float(np.median(res)))
        if keep.sum() < 12:
            break
    return coef


def _wood_samples(rect: np.ndarray, shown: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sector medians of the bare wood the photo shows (``shown``: per pixel of ``rect``, see
    :func:`vision.pose.in_photo`): (points in the board frame, log BGR, roughness: the standard
    deviation of the grey level, the wood's grain and the photo's noise where no line lies)."""
    _, _, wood = _sampling()
    wood = wood[shown[wood]]
    n = rect.shape[1]
    ys, xs = np.divmod(wood, n)
    u, v = xs / PPU, ys / PPU
    sector = (np.degrees(np.arctan2(v - fg.DISC, u - fg.DISC)) // 10).astype(int) * 2 + \
        (np.hypot(u - fg.DISC, v - fg.DISC) > WOOD_BAND[2])
    pix = rect.reshape(-1, 3)[wood].astype(np.float64)
    pts, logs, rough = [], [], []
    for k in np.unique(sector):
        m = sector == k
        if m.sum() >= 5:
            pts.append((u[m].mean(), v[m].mean()))
            logs.append(np.log(np.median(pix[m], axis=0) + 1.0))
            rough.append(np.std(pix[m].mean(1)))
    return np.array(pts), np.array(logs), np.array(rough)


def _white_mode(feat: np.ndarray, mean: np.ndarray, spread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The white class from its densest cluster. White tiles are one plastic, so in one photo
    they nearly coincide; wood under a glare spot spreads along "more white light" and is
    never that tight, so it must not pull the class (or widen it) towards itself."""
    if len(feat) < 3:
        return mean, spread
    near = (np.abs((feat[:, None, :] - feat[None]) / WHITE_NEIGHBOURHOOD) <= 1).all(2).sum(1)
    if near.max() < 3:
        return mean, spread
    centre = feat[int(np.argmax(near))]
    members = feat[(np.abs((feat - centre) / WHITE_NEIGHBOURHOOD) <= 1).all(1)]
    centre = np.median(members, 0)
    mad = 1.4826 * np.median(np.abs(members - centre), 0)
    return centre, np.clip(mad, SPREAD["W"], MAX_SPREAD["W"])


def _wood_red(feat: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Fields whose blueness is nearer the wood's than white plastic's: the wood is red, the
    tiles neutral (far bluer than the wood), whatever the light's brightness."""
    return feat[:, 1] < 0.5 * (means[LABELS.index(EMPTY), 1] + means[LABELS.index("W"), 1])


def _redder_than_plastic(feat: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Fields whose blueness lies more than two of white's spreads below white plastic's (that
    spread is the same in every photo: its floor is its cap). Plastic, black or white, is
    neutral, and so is the lamp's light a highlight adds: under a highlight plastic keeps its
    hue, while the wood's moves towards it, never beyond."""
    return feat[:, 1] < means[LABELS.index("W"), 1] - 2 * MAX_SPREAD["W"][1]


def _classify(feat: np.ndarray, white_ref: np.ndarray | None = None, seen: np.ndarray | None = None) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(label index, confidence, far from every class, the classes' means, read white but less
    blue or brighter than white plastic) per field from (brightness, blueness) of colour / light:
    three Gaussians started at the nominal centres and re-estimated from this photo's ``seen``
    fields (default: all)."""
    seen = np.ones(len(feat), bool) if seen is None else seen
    means = np.array([CENTRES[k] for k in LABELS])
    white = LABELS.index("W")
    if white_ref is not None:
        means[white] = white_ref
    floor = np.array([SPREAD[k] for k in LABELS])
    cap = np.array([MAX_SPREAD[k] for k in LABELS])
    spreads = floor.copy()
    for _ in range(3):
        d = ((feat[:, None, :] - means[None]) / spreads[None]) ** 2
        logp = -0.5 * d.sum(2) - np.log(spreads).sum(1)[None]
        label = np.argmax(logp, 1)
        for j in range(3):
            m = (label == j) & seen
            if m.sum() >= 4:
                nominal = white_ref if j == white and white_ref is not None else np.array(CENTRES[LABELS[j]])
                drift = DRIFT if LABELS[j] != "W" else WHITE_DRIFT  # white's hue follows the wood's
                if j == white and white_ref is not None:
                    drift = WHITE_NEIGHBOURHOOD  # the ring's white tiles showed it
                means[j] = np.clip(0.5 * means[j] + 0.5 * np.median(feat[m], 0), nominal - drift, nominal + drift)
                mad = 1.4826 * np.median(np.abs(feat[m] - np.median(feat[m], 0)), 0)
                spreads[j] = np.clip(mad, floor[j], cap[j])
    if white_ref is None:
        means[white], spreads[white] = _white_mode(feat[(label == white) & seen], means[white], spreads[white])
    d = ((feat[:, None, :] - means[None]) / spreads[None]) ** 2
    logp = -0.5 * d.sum(2) - np.log(spreads).sum(1)[None]
    post = np.exp(logp - logp.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    label = np.argmax(post, 1)
    conf = post.max(1)
    # Far from every class (a hand, a cup, a shadow's edge): not a reading.
    far = np.sqrt(d.sum(2)[np.arange(len(feat)), label]) > OUTLIER
    conf = np.where(far, np.minimum(conf, 0.3), conf)
    # Wood under the lamp's reflection is brighter and a little bluer, but less blue than white.
    glared = (label == white) & _redder_than_plastic(feat, means)
    if white_ref is not None:
        # Many glared fields widen the white class towards themselves: the ring's white tiles,
        # where they show, keep the plastic's own colour (with the widest spread white allows);
        # a field much brighter than they are lies under a highlight.
        off = (feat - white_ref) / MAX_SPREAD["W"]
        glared |= (label == white) & ((np.hypot(*off.T) > OUTLIER) | (off[:, 0] > 2))
    conf = np.where(glared, np.minimum(conf, 0.3), conf)
    return label, conf, far, means, glared


def _read_fields(rect: np.ndarray, wood: tuple[np.ndarray, np.ndarray, np.ndarray], white: np.ndarray | None,
                 shown: np.ndarray, white_rough: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label index and confidence per field, and the light field's coefficients. ``wood``: the
    bare wood's samples (:func:`_wood_samples`, at least 12 sectors). ``white``,
    ``white_rough``: the ring's white tiles' colour over the wood and the roughness of their
    smoothest quarter, when the ring shows one (see :func:`_read_ring`). ``shown``: which
    pixels of ``rect`` the photo shows; a field whose middle it does not show whole is unseen:
    empty but uncertain, and left out of every figure the photo's classes are judged by."""
    cores, bands, _ = _sampling()
    seen = np.array([len(c) > 0 and bool(shown[c].all()) for c in cores])
    if not seen.any():
        raise ReadError("no_board", "the board's fields all lie beyond the photo's edge")
    pix = rect.reshape(-1, 3).astype(np.float64)
    gray = pix.mean(1)
    med = np.array([np.median(pix[c], 0) if len(c) else np.zeros(3) for c in cores])
    clipped = np.array([np.mean(pix[c].min(1) >= CLIPPED) if len(c) else 1.0 for c in cores])
    outline = np.array([1 - np.mean(gray[b]) / max(np.median(gray[c]), 1.0) if len(b) and len(c) else 0.0
                        for b, c in zip(bands, cores)])
    # The darker part of a field's middle, which a highlight leaves alone: its colour, and how
    # much darker than the middle's it is (plastic is flat; wood keeps its grain under glare).
    low = [np.flatnonzero(gray[c] <= np.percentile(gray[c], 100 * DARK_PART)) if len(c) else c for c in cores]
    dark = np.array([np.mean(pix[c][k], 0) if len(c) else np.zeros(3) for c, k in zip(cores, low)])
    grain = np.array([np.percentile(gray[c], 10) / max(np.median(gray[c]), 1.0) if len(c) else 1.0 for c in cores])
    pts, logs, wood_rough = wood
    centres = fg.centroids()
    label = np.zeros(len(cores), int)
    conf = np.zeros(len(cores))
    coef = np.zeros((6, 3))
    for _ in range(2):
        coef = _light(pts, logs)
        rel = np.log(med + 1.0) - _design(centres) @ coef  # log BGR over the wood's
        feat = np.column_stack([rel.mean(1), rel[:, 0] - rel[:, 2]])
        label, conf, far, means, glared = _classify(feat, white, seen)
        sure_empty = (label == 0) & (conf > 0.9) & seen
        pts = np.vstack([pts, centres[sure_empty]])
        logs = np.vstack([logs, np.log(med[sure_empty] + 1.0)])
    by_colour = label.copy()
    # Read white but as red as the wood (glared wood; shadowed wood, darker than the light field
    # says, is far from every class and may fall to white's wider spread): empty, not surely.
    label = np.where(glared & _wood_red(feat, means), 0, label)
    # A hand or a sleeve has shading and creases; wood and plastic are smooth in a field's middle.
    rough = np.array([np.std(gray[c]) if len(c) else 0.0 for c in cores])
    # The usual roughness is the board's (most fields are bare wood or plastic, whatever a hand
    # covers): a class's own median would be the hand's when the hand is most of that class.
    rough_mask = rough > max(TEXTURE_RATIO * np.median(rough[seen]), TEXTURE_FLOOR)
    conf = np.where(rough_mask, np.minimum(conf, 0.3), conf)
    # Glare: a washed-out middle may be wood under the lamp's reflection.
    conf = np.where((clipped > 0.3) & (label != 1), np.minimum(conf, 0.3), conf)
    # A black tile under a highlight: its middle's mean looks white or like wood, but the part
    # the highlight misses stays black. Black is the reading, not a sure one. White plastic is
    # brighter than the wood, even in its darkest part, so a field read white needs a less dark
    # part for that than one read empty (wood has dark grain).
    dark_log = np.log(dark + 1.0) - _design(centres) @ coef
    dark_rel = dark_log.mean(1)
    partly_black = (label != 1) & (dark_rel < np.where(label == 2, PARTLY_BLACK_WHITE, PARTLY_BLACK))
    label = np.where(partly_black, 1, label)
    conf = np.where(partly_black, np.minimum(conf, 0.3), conf)
    # Wood under a highlight turns as bright and neutral as white plastic but keeps its grain,
    # and a highlight across a black tile leaves a darker edge: a white field's middle whose
    # darkest tenth lies more than twice as far below it as white tiles' usually does (the
    # photo's noise) is not sure.
    white = (label == 2) & seen
    if white.sum() >= 3:
        usual = float(np.median(grain[white]))
        conf = np.where(white & (grain < usual - max(WHITE_GRAIN, 1.0 - usual)), np.minimum(conf, 0.3), conf)
    # White plastic is flat, smoother than the wood's grain. A field read white whose middle is
    # far rougher than the bare wood round the flower (where no tile or drawn line lies) holds
    # more than plastic: a drawn line, or the wood or a tile beside it, where the pose is off by
    # more than a middle's margin from the lines (fitted through the pieces of one corner a
    # hand left in sight). The fields' own roughness cannot tell: the lines then cross most
    # middles, and their median is the lines'.
    lined = white & (rough > max(TEXTURE_RATIO * float(np.median(wood_rough)), TEXTURE_FLOOR))
    conf = np.where(lined, np.minimum(conf, 0.3), conf)
    # White plastic is flat: in one photo its fields are about as rough as the photo's noise, and
    # the smoothest quarter of the fields read white are plastic, however many others are read
    # white. A field read white several times rougher than they are and at least a share of the
    # bare wood's grain is wood made bright and grey (a phone's tone map lifts the wood beside a
    # black tile, a highlight washes it) or plastic under an edge: not sure. When the board holds
    # no white tile, every field read white may be such wood: the ring's white tiles, where they
    # show, are white plastic for sure, and the smoother of both references is the plastic's.
    sure_empty = (label == 0) & (conf >= UNCERTAIN_BELOW) & seen
    grained = np.zeros(len(cores), bool)
    if (white.sum() >= 3 or (white_rough is not None and white.any())) and sure_empty.sum() >= 5:
        smooth = float(np.percentile(rough[white], 25))
        plastic = PLASTIC_ROUGH * (smooth if white_rough is None else min(smooth, white_rough)) + ROUGH_FLOOR
        grained = white & (rough > plastic) & (rough > WOOD_ROUGH * np.median(rough[sure_empty]))
        conf = np.where(grained, np.minimum(conf, 0.3), conf)
    # An empty field shows its drawn outline; one under a hand or a cup does not.
    empty = label == 0
    usual = np.median(outline[empty & seen]) if (empty & seen).sum() >= 5 else 0.2
    hidden = empty & (outline < OUTLINE_SHARE * usual)
    conf = np.where(hidden, np.minimum(conf, 0.3), conf)
    # A hand covers fields together: skin that looks like wood beside fields it covers (rough,
    # their outline hidden, or far from every class) is no sure empty field. Doubt of other
    # kinds (between two classes, glare) does not spread: it is not something lying there.
    covered = (rough_mask | hidden | far) & seen
    doubtful = (_neighbours() @ covered) >= HIDDEN_AROUND * _neighbours().sum(1)
    conf = np.where(empty & doubtful, np.minimum(conf, 0.3), conf)
    # A black tile is the darkest thing in its field: the gap round it and the line beside it
    # are lighter than its middle, whatever the light. A field read black by its colour whose
    # outline is not lighter is not surely black; one whose drawn outline shows as an empty
    # field's does (darker than its middle, as on bare wood and white plastic) is a darker patch
    # of the board (a hard shadow, which the light field's smooth surface cannot follow): empty
    # if its colour is as red as the wood's, and not surely. Neutral (plastic) in a shadow, it
    # is white only if its outline shows at least half as much as an empty field's: white
    # plastic, brighter than the wood, shows the drawn line at least as well, while a black
    # tile's outline is lighter than its middle (0 or less) but for a shadow's edge across it.
    read_black = by_colour == 1
    conf = np.where(read_black & (outline > BLACK_OUTLINE), np.minimum(conf, 0.3), conf)
    neutral_label = np.where(outline > WHITE_OUTLINE * usual, 2, 1)
    shadowed = read_black & (outline > DRAWN_OUTLINE * usual)
    label = np.where(shadowed, np.where(_wood_red(feat, means), 0, neutral_label), label)
    # What covers a field (a hand, a sleeve, a shadow's edge) is read by its brightness as black
    # or white, but white plastic is neutral, far bluer over the wood's light than wood or skin,
    # and so is black plastic where this photo's sure black fields show it (a phone's colour
    # processing can leave black as red as the wood). A covered field as red as the wood is best
    # guessed empty, as most fields are (still uncertain: covered fields are).
    skin = covered & (label == 2) & _wood_red(feat, means)
    sure_black = (label == 1) & (conf >= UNCERTAIN_BELOW) & seen
    if sure_black.sum() >= 3:
        wood_hue, black_hue = means[0, 1], float(np.median(feat[sure_black, 1]))
        if black_hue - wood_hue > BLACK_HUE_GAP:
            skin |= covered & (label == 1) & (feat[:, 1] < wood_hue + SKIN_SHARE * (black_hue - wood_hue))
    label = np.where(skin, 0, label)
    # A highlight across a field leaves its darkest part least changed, and added white light
    # moves the wood's colour towards the lamp's, never beyond: wood there stays redder than
    # white plastic, which (like a black tile under white light) is neutral. A doubtful field
    # read white whose middle a highlight partly clips, but whose darkest part is as red as the
    # wood and nearer the wood's brightness than white's, is best guessed empty (still doubtful).
    glared_part = np.array([np.mean(pix[c].max(1) >= CLIPPED) if len(c) else 0.0 for c in cores]) >= GLARE_PART
    dark_feat = np.column_stack([dark_rel, dark_log[:, 0] - dark_log[:, 2]])
    washed_wood = (glared_part & (label == 2) & (conf < UNCERTAIN_BELOW) & _wood_red(dark_feat, means)
                   & (dark_rel < 0.5 * (means[LABELS.index(EMPTY), 0] + means[LABELS.index("W"), 0])))
    label = np.where(washed_wood, 0, label)
    # Grey plastic. White plastic is brighter than the wood in any light the two share, and a
    # reflection adds more to it than to the wood (the tiles are glossier). A black tile under a
    # soft reflection turns grey: neutral, between black and the wood, and its gap no longer
    # shows lighter than its middle, so its colour alone may lie nearer white's than black's,
    # or the shadow rule above takes it for shadowed white plastic. A doubtful neutral field
    # read white yet darker than the bare wood round it is best guessed black (still doubtful).
    # The wood round it, not the light field, is the reference: a white tile in a shadow the
    # smooth light field does not follow is dimmer than the light field says, and so is the
    # wood beside it.
    # Under a highlight that clips part of the middle the mean is washed out, but the darkest
    # part, which the highlight misses, keeps the tile's own light: as neutral and no brighter
    # than the darkest part of the wood round it, it is no white plastic but a black tile.
    # A field read surely white but not brighter than the wood round it by half of what white
    # plastic lies above the wood is no sure white tile (a black tile under a soft reflection
    # that lifts the wood round it too): doubtful, and judged as grey plastic below.
    lift = 0.5 * (means[LABELS.index("W"), 0] - means[LABELS.index(EMPTY), 0])
    sure_white = (label == 2) & (conf >= UNCERTAIN_BELOW) & seen
    dim = sure_white & (feat[:, 0] < _wood_round(feat[:, 0], (label == 0) & seen, sure_white) + lift)
    conf = np.where(dim, np.minimum(conf, 0.3), conf)
    pale = (label == 2) & (conf < UNCERTAIN_BELOW) & seen & ~_wood_red(feat, means)
    grey = pale & (feat[:, 0] < _wood_round(feat[:, 0], (label == 0) & seen, pale))
    lit = pale & glared_part & ~_wood_red(dark_feat, means)
    grey |= lit & (dark_rel < _wood_round(dark_rel, (label == 0) & seen, lit))
    label = np.where(grey, 1, label)
    # The five-dot rule: a node never holds more than five fields of one colour, six with the
    # 5+1 token. More read round a node (a highlight across it, a shadow) means some of them are
    # misread, and which cannot be told: all of that colour there are doubtful.
    # Fields read so by colour alone count too: a shadow over a node is just what crowds it.
    for j in (1, 2):
        mine = (label == j) & seen
        crowded = (_node_fields() @ (mine | ((by_colour == j) & seen)).astype(np.float64)) > equilibrix.DOTS + 1
        conf = np.where(mine & (_node_fields()[crowded].sum(0) > 0), np.minimum(conf, 0.3), conf)
    # Wood under a highlight: its hue moves towards the lamp's, that of plastic, but stays
    # redder, and it keeps its grain. A doubtful field read white and clearly redder than
    # plastic, where a highlight shows (it clips part of the middle, or the field keeps the
    # wood's grain), is best guessed empty. The hue alone is not enough: white tiles in a
    # shadow the smooth light field misses can look as red over it. Only where the blue channel
    # is not clipped: a clipped red channel only makes a field look bluer than it is, a clipped
    # blue one redder (white plastic under a cool lamp). Last, so that no doubt above depends
    # on it.
    wood = glared & (glared_part | grained) & (label == 2) & (conf < UNCERTAIN_BELOW) & (med[:, 0] < CLIPPED)
    label = np.where(wood & _redder_than_plastic(feat, means), 0, label)
    return np.where(seen, label, 0), np.where(seen, conf, 0.0), coef


@lru_cache(maxsize=1)
def _node_fields() -> np.ndarray:
    """Which fields touch which node (37 x 144, 0/1): a field has a tip at each of its nodes."""
    index = {f: i for i, f in enumerate(fg.fields())}
    out = np.zeros((len(flower.NODES), len(index)))
    for n, node in enumerate(flower.NODES):
        out[n, [index[f] for f in flower.fields_at(node) if f in index]] = 1  # the board's, of the lattice's 12
    return out


@lru_cache(maxsize=1)
def _neighbours() -> np.ndarray:
    """Which fields lie next to which (144 x 144, 0/1): centroids within NEIGHBOUR_R."""
    c = fg.centroids()
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    return ((d < NEIGHBOUR_R) & (d > 0)).astype(np.float64)


@lru_cache(maxsize=1)
def _round_about() -> np.ndarray:
    """Which fields lie round which (144 x 144, bool): its neighbours and theirs, not itself."""
    near = _neighbours()
    out = (near @ near + near) > 0
    np.fill_diagonal(out, False)
    return out


def _wood_round(bright: np.ndarray, empty: np.ndarray, which: np.ndarray) -> np.ndarray:
    """For each field ``which`` selects, the brightness (over the light field) of the bare wood
    round it: the median over the fields read empty among its neighbours and theirs; NaN
    where fewer than WOOD_ROUND are. Unlike the light field's smooth surface, it follows a
    shadow or a reflection lying over a few fields."""
    out = np.full(len(bright), np.nan)
    for i in np.flatnonzero(which):
        wood = _round_about()[i] & empty
        if wood.sum() >= WOOD_ROUND:
            out[i] = np.median(bright[wood])
    return out


# --- reading the ring ----------------------------------------------------------------------

@lru_cache(maxsize=1)
def _shape_masks() -> tuple[tuple[str, ...], np.ndarray]:
    """Every catalogue shape in each of its 12 lattice orientations (6 turns, either side up),
    drawn at PPU in a window centred on its centroid: (shape per mask, masks)."""
    index = {name: i for i, name in enumerate(fg.names())}
    half = int(SHAPE_WINDOW * PPU)
    d = (np.mgrid[0:2 * half + 1, 0:2 * half + 1].astype(np.float32) - half) / np.float32(PPU)
    names, masks = [], []
    for shape, fields in equilibrix.default_catalogue()["shapes"].items():
        cells = [flower.parse_field(f) for f in fields]
        for flip in (False, True):
            for turn in range(6):
                turned = [flower.FLOWER.rotations[turn](flower.FLOWER.reflection(c) if flip else c) for c in cells]
                mid = np.mean([flower.centroid(c) for c in turned], axis=0)
                f, _, _ = fg.locate_fields(d[1] + np.float32(mid[0]), d[0] + np.float32(mid[1]))
                # Fields of a shape near the board's edge may fall off the tabulated board: shift it in.
                ids = [index.get(flower.field_id(c), -2) for c in turned]
                if min(ids) < 0:
                    continue
                names.append(shape)
                masks.append(np.isin(f, ids))
    return tuple(names), np.array(masks)


def _identify_tile(blob: np.ndarray) -> tuple[str, float, bool]:
    """The catalogue shape a ring tile's silhouette (holes filled) overlaps best, how clearly
    it beats the best other shape (0-1), and whether it is a tile's shape at all."""
    names, masks = _shape_masks()
    half = masks.shape[1] // 2
    ys, xs = np.nonzero(blob)
    cy, cx = int(round(ys.mean())), int(round(xs.mean()))
    window = np.zeros(masks.shape[1:], bool)
    y0, x0 = cy - half, cx - half
    sy, sx = max(0, -y0), max(0, -x0)
    crop = blob[max(0, y0):y0 + 2 * half + 1, max(0, x0):x0 + 2 * half + 1]
    window[sy:sy + crop.shape[0], sx:sx + crop.shape[1]] = crop
    iou = np.zeros(len(masks))
    centre = (float(half), float(half))
    for angle in SHAPE_TURNS:  # a tile lies only roughly along the lattice's directions
        m = cv2.getRotationMatrix2D(centre, angle, 1.0)
        turned = cv2.warpAffine(window.astype(np.uint8), m, window.shape[::-1], flags=cv2.INTER_NEAREST) > 0
        inter = (masks & turned).sum((1, 2))
        union = (masks | turned).sum((1, 2))
        iou = np.maximum(iou, inter / np.maximum(union, 1))
    best = {}
    for name, score in zip(names, iou):
        best[name] = max(best.get(name, 0.0), float(score))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    if ranked[0][1] < MIN_OVERLAP:  # no tile's shape: a hand or a cup on the rim
        return ranked[0][0], 0.0, False
    return ranked[0][0], float(np.clip((ranked[0][1] - ranked[1][1]) / SHAPE_MARGIN, 0, 1)), True


@lru_cache(maxsize=1)
def _ring_pixels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rim's pixels in the PPU view (flat indices), their board points and light-field rows."""
    n = int(round(fg.EXTENT[0] * PPU))
    ys, xs = np.mgrid[0:n, 0:n]
    uv = np.column_stack([xs.ravel() / PPU, ys.ravel() / PPU])
    radius = np.hypot(uv[:, 0] - fg.DISC, uv[:, 1] - fg.DISC)
    idx = np.flatnonzero((radius > fg.OUTER_LINE + 0.2) & (radius < fg.DISC - 0.1))
    return idx, uv[idx], _design(uv[idx])


def _read_ring(rect: np.ndarray, coef: np.ndarray, shown: np.ndarray) -> tuple[list[dict | None], list[int],
                                                                              int | None, np.ndarray | None,
                                                                              float | None]:
    """Per slot the tile lying there (shape, side up) or None; doubtful slots; the Origin; the
    white tiles' colour over the wood (brightness, blueness), the reference for the fields; and
    the roughness of the smoothest quarter of them (grey levels), white plastic's in this photo.
    ``shown``: which pixels of ``rect`` the photo shows; a slot it does not show whole is
    doubtful and read empty (a tile cut by the photo's edge is no shape)."""
    n = rect.shape[0]
    idx, uv, design = _ring_pixels()
    rel = np.log(rect.reshape(-1, 3)[idx].astype(np.float32) + 1.0) - (design @ coef).astype(np.float32)
    bright = rel.mean(1)
    red = (rel[:, 2] - 0.5 * (rel[:, 0] + rel[:, 1]) > RED) & shown[idx]
    black = (bright < -0.9) & ~red & shown[idx]
    white = (bright > 0.1) & (rel[:, 0] - rel[:, 2] > 0.15) & shown[idx]
    code = np.zeros(n * n, np.uint8)
    code[idx[black]] = 1
    code[idx[white]] = 2
    code = code.reshape(n, n)
    tiles = cv2.morphologyEx((code > 0).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, comp, stats, cents = cv2.connectedComponentsWithStats(tiles)
    ring: list[dict | None] = []
    doubt = []
    whites, white_rough = [], []
    gray = rect.astype(np.float32).mean(2)
    feat = np.zeros((n * n, 2), np.float32)
    feat[idx] = np.column_stack([bright, rel[:, 0] - rel[:, 2]])
    feat = feat.reshape(n, n, 2)
    area = stats[:, cv2.CC_STAT_AREA].astype(float)
    area[0] = 0
    unseen_slots = _slots_unseen(shown)
    for j, centre in enumerate(fg.slot_centres() * PPU):
        near = (np.hypot(*(cents - centre).T) < SLOT_R * PPU) & (area >= MIN_TILE_AREA * PPU ** 2)
        if unseen_slots[j] or not near.any():
            ring.append(None)
            if unseen_slots[j]:
                doubt.append(j)
            continue
        k = int(np.argmax(np.where(near, area, 0)))
        x, y, w, h = stats[k, :4]
        mask = comp[y:y + h, x:x + w] == k
        # The tip dots are holes in the silhouette: fill them.
        outline = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0]
        solid = cv2.drawContours(np.zeros(mask.shape, np.uint8), outline, -1, 1, -1)
        # Give back what the cut round the tile and the noise filter above took off its edge.
        solid = cv2.dilate(np.pad(solid, 2), np.ones((3, 3), np.uint8)) > 0
        shape, confidence, is_tile = _identify_tile(solid)
        side = "B" if np.mean(code[y:y + h, x:x + w][mask] == 1) > 0.5 else "W"
        ring.append({"shape": shape, "side": side, "confidence": confidence})
        if confidence < UNCERTAIN_BELOW:
            doubt.append(j)
        if is_tile and side == "W":  # a tile's shape, not a glare spot's or a hand's: white's colour
            whites.append(np.median(feat[y:y + h, x:x + w][cv2.erode(mask.astype(np.uint8), np.ones((3, 3))) > 0], 0))
            inner = cv2.erode(mask.astype(np.uint8), np.ones((5, 5))) > 0  # clear of the tile's shaded edge
            if inner.any():
                white_rough.append(float(np.std(gray[y:y + h, x:x + w][inner])))
    origin = None
    if red.sum() >= 0.05 * PPU ** 2:
        pts = uv[red]
        angle = math.degrees(math.atan2(np.mean(pts[:, 1]) - fg.DISC, np.mean(pts[:, 0]) - fg.DISC))
        origin = int(round((angle - fg.SLOT0_DEG) / fg.SLOT_DEG + 0.5)) % fg.SLOTS
    white_ref = np.median(whites, 0) if whites else None
    return ring, doubt, origin, white_ref, float(np.percentile(white_rough, 25)) if white_rough else None


def _slots_unseen(shown: np.ndarray) -> np.ndarray:
    """Per ring slot: does part of where its tile may lie (SHAPE_WINDOW round the slot) fall
    outside the photo (``shown``, per pixel of the PPU view)?"""
    idx, uv, _ = _ring_pixels()
    hidden = uv[~shown[idx]]
    if not len(hidden):
        return np.zeros(fg.SLOTS, bool)
    return (np.linalg.norm(hidden[:, None, :] - fg.slot_centres()[None], axis=2) < SHAPE_WINDOW).any(0)


# --- the public calls ----------------------------------------------------------------------

def locate_board(frame: np.ndarray, reference: BoardPose | None = None) -> BoardPose:
    """The board's pose in a frame (upright BGR); ReadError("no_board") when there is none.
    The pose carries, in ``contrast``, how strongly the drawing shows at it. ``reference``: the
    pose this camera had before (a bump, a restart): near a tie of the top side its labelling
    is kept (:func:`_upright`)."""
    frame = as_bgr(frame)
    pose = locate(frame, reference)
    return replace(pose, contrast=line_contrast(frame, pose))


@lru_cache(maxsize=1)
def _line_samples() -> tuple[np.ndarray, np.ndarray]:
    """Board points on drawn lines, and in the fields' middles (off every line)."""
    _, line, _, radius = _raster(PPU)
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
    pose = _fit_to(frame, pose)
    reference = pose.contrast or VERIFY_DEFAULT
    return line_contrast(frame, pose) >= max(VERIFY_FLOOR, VERIFY_SHARE * reference)


def read_with_pose(frame: np.ndarray, pose: BoardPose) -> EquilibrixReading:
    """Read every field and the ring at a known pose (no localisation)."""
    start = time.perf_counter()
    frame = as_bgr(frame)
    return _read(frame, _fit_to(frame, pose), start)


def read_equilibrix(image: np.ndarray, calibration: BoardPose | Mapping | None = None, **_) -> EquilibrixReading:
    """Photo (upright BGR) -> Equilibrix reading. ``calibration`` may hold a known board pose
    (a BoardPose or its JSON, alone or under "pose") for a fixed camera."""
    start = time.perf_counter()
    image = as_bgr(image)
    if calibration is not None:
        pose = calibration if isinstance(calibration, BoardPose) else \
            BoardPose.from_json(calibration.get("pose", calibration))
        pose = _fit_to(image, pose)
    else:
        pose = locate(image)
    return _read(image, pose, start)


def _read(image: np.ndarray, pose: BoardPose, start: float) -> EquilibrixReading:
    rect = rectify(image, pose, PPU)
    # A board cut by the photo's edge: what lies beyond (or at) the edge is not read, and the
    # fields there are reported unseen (uncertain, best guess empty).
    shown = in_photo(pose, PPU, rect.shape[:2], inset=EDGE_INSET).ravel()
    wood = _wood_samples(rect, shown)
    if len(wood[0]) < 12:
        raise ReadError("no_board", "the board's bare wood could not be seen")
    ring, ring_doubt, origin, white, white_rough = _read_ring(rect, _light(*wood[:2]), shown)
    label, conf, coef = _read_fields(rect, wood, white, shown, white_rough)
    if pose.quality < POSE_TRUST:  # the drawing did not confirm where the fields are
        conf = np.minimum(conf, 0.3)
    names = fg.names()
    return EquilibrixReading(
        fields={names[i]: LABELS[j] for i, j in enumerate(label) if j != 0},
        confidence={names[i]: float(conf[i]) for i in range(len(names))},
        uncertain=[names[i] for i in np.flatnonzero(conf < UNCERTAIN_BELOW)],
        ring=ring, origin=origin, timing_ms=(time.perf_counter() - start) * 1000.0, pose=pose, rectified=rect,
        ring_uncertain=ring_doubt)


def _fit_to(frame: np.ndarray, pose: BoardPose) -> BoardPose:
    h, w = frame.shape[:2]
    return pose if pose.image_size == (w, h) else pose.scaled(w / pose.image_size[0])


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
