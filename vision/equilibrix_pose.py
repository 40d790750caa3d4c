"""Find an Equilibrix board in a photo and fit its pose: the round outlines, the printed circle,
the Flower-of-Life drawing matched and aligned, the lens, and the upright labelling.

Reading goes pose -> fields and ring -> state; this module does the pose (``vision.equilibrix``
puts the steps together). ``locate`` gives the pose.

Geometry (``locate_board``), on a copy about 720 px wide:

1. *Round outlines*: long edge curves whose ellipse is covered by edges nearly all round: the
   board's edge, the printed circle round the flower, sometimes a cup's rim. A hand or a cup
   that joins an outline to its own is cut away by fitting stretches of each curve too. When
   that finds no board, a busy table's pattern may touch the board's edge all round: the
   curves are cut where they turn sharply, and ellipses through pairs of the smooth arcs left,
   covered all round by edges running along them, are tried (``vision.equilibrix_outlines``).
   When that finds none either, a bold pattern's steps may have set the edges' cut above the
   printed circle's thin line: the whole curves are looked for again in the fainter edges.
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
   the board's edge frames matched less well. When no guess's fit is confirmed (step 5), the
   circles' frames are tried once more with the drawing laid about their own middle, each turn
   judged by how many of its pieces agree: a hand, glare and a mug can pull the whole drawing's
   best match off by the most it may move, and to a wrong turn.
5. *Refinement*: a homography aligning the drawn lines with the photo's edges (ECC, two
   passes), then the drawing matched piece by piece round every node and along the board's
   edge, with RANSAC, which a hand or a glare spot cannot pull; of the two, the pose more
   pieces agree with wins, and when few agree the pieces are matched once more where it puts
   them. Of the guesses' fits, the pose more of the drawing's pieces agree with wins; on a tie,
   the one more of the board's edge agrees with (a blurred drawing agrees as well with a pose
   too large by about half).
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
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from functools import cached_property, lru_cache, partial

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rules import flower

from . import flowergrid as fg
from .equilibrix_outlines import OrientedEdges, ellipse_points, ellipse_radius, paired_ellipses, smooth_arcs
from .errors import ReadError
from .matching import correlation_peak, fit_with_lens
from .pose import BoardPose, apply_h, check_angle, in_photo, rectify

WORK_SIDE = 720  # the board is found on a copy this large (long side)
FIT_PPU = 10.0  # top-down pixels per r while matching the drawing
DRAW_RADIUS = fg.OUTER_LINE + 0.15  # the matched template spans the drawing
EDGE_RAYS = 120  # rays searched for the board's edge
RAY_ANGLES = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)  # their directions, radians
RAY_ANGLES.setflags(write=False)  # shared by every search: never changed in place
EDGE_RANGE = (0.94, 1.06)  # where on a ray (share of the first ellipse's radius) the edge may lie
EDGE_CUT = 90  # percentile of the photo's gradient above which a step is surely an edge (Canny's high cut)
BUSY_CUT = 70  # ... on a busy table, whose pattern holds the strongest steps: the printed circle's line is fainter
EDGE_COVER = 0.45  # share of a board edge's ellipse that edges must cover
CUT_SHOWN, CUT_COVER = (0.25, 0.95), 0.8  # an outline this much in the photo, covered so in it: cut by its edge
ROUND_COVER = 0.9  # share of a round outline that edges running along it cover: the board's rim, however steep
FLATTEST_VIEW = 0.17  # an ellipse's short axis over its long one below which it is a line (cos 80 degrees)
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
PROBE_TURN_DEG = 6.0  # ... the centred guesses' step (_centred_guesses): a fit converges from 6 degrees off
RIDGE_R = 0.15  # width of a drawn line in the matched template (r units): wide enough to lock on
SHIFT_R = 0.5  # how far the global match may move the drawing (r units)
SURE_MATCH = 0.45  # a turn matched this well needs no runner-up
TURNS_TRIED = 3  # turns aligned when the best match is not sure
SURE_VOTES = 0.8  # share of the drawing's pieces agreeing with the alignment that needs no second opinion
MIN_MATCH = 0.3  # normalised correlation with the drawing below which there is no board
MIN_TRY = 0.2  # ... and below which a first guess is not fitted (one between counts when its pieces agree)
LIGHT_R = 0.4  # r: the light a shadowed photo's edges are divided by is blurred over this (_edges_in_light)
CIRCLES_TRIED = 3  # printed circles whose guesses are fitted when none matches surely
GUESSES_FITTED = 8  # at most this many first guesses (frames and turns) are fitted, best matched first
REFINE_PPU = (12.0, 20.0)  # the alignment's passes, coarse to fine
ECC_STEPS = 40  # iterations of each alignment pass
PATCH_PPU = 16.0  # the last fit: neighbourhoods of the drawing matched one by one
PATCH_R, SEARCH_R = 1.0, 0.35  # their half-size and how far each may move (r units)
PATCH_MIN = 0.3  # a neighbourhood matched worse than this is not used
MIN_PIECES = 12  # matched pieces a homography is fitted through at the least
POSE_TRUST = 0.3  # share of the drawing's pieces that must agree with a pose for its fields to be read
PATCH_TOLERANCE = 0.05  # r: matches further off the common homography are outliers
CIRCLE_ROUNDS = 12  # a pose few pieces confirm: rounds of fitting to the printed circle and matching again
CIRCLE_STEPS = 3  # ... each round this many steps of moving the circle's points onto it (see _circle_fit)
CIRCLE_KEEP = 3.0  # ... keeping the pieces within this many PATCH_TOLERANCE of the pose so far
CIRCLE_HOLDS = 0.15  # r: the printed circle found this near where a pose puts it, all round, vouches for its geometry
PIECE_WEIGHT = 4  # ... each piece weighing as this many of the circle's EDGE_RAYS points
SIDE_PIECES = 2  # agreeing pieces in a sixth of the drawing below which that sixth is bare
LENS_ROUNDS = 2  # the lens term is fitted, the drawing matched again where it puts it, and refitted
LENS_RANGE = (-0.34, 0.14)  # inside the lens search's ends (-0.35, 0.15): a fit at an end is no lens
LENS_MIN = 0.08  # a weaker lens term is within what the fit finds on lens-free photos (up to 0.06)
LENS_GAIN = 1  # a lens term must bring more than this many more of the drawing's pieces into agreement
TIE_DEG = 4.0  # degrees off a tie of the top side within which a reference pose keeps the labelling
NO_DRAWING = "no board with the Flower-of-Life drawing inside a printed circle was found"  # the refusal's words
CORNER_NODES = ((0, -3), (3, -3), (3, 0), (0, 3), (-3, 3), (-3, 0))  # clockwise from the top side's left end


# --- the drawing -----------------------------------------------------------------------------

@lru_cache(maxsize=4)
def raster(ppu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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


# --- locating ----------------------------------------------------------------------------------

def _edges(gray: np.ndarray) -> np.ndarray:
    g = gray.astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3))
    return np.sqrt(mag)  # compresses the tiles' strong edges against the thin drawn lines


def _edges_in_light(view: np.ndarray, ppu: float) -> np.ndarray:
    """:func:`_edges` of a top-down ``view`` (``ppu`` pixels per r) divided by its light there
    (blurred over LIGHT_R): a shadow darkens the wood and its drawn lines alike, so a line in
    the shade is as strong a step against the light round it as one in the sun, while its
    plain gradient drops with the light (seed 5 ``shadow`` #1: half the flower in a hard
    shadow, the drawing's best turn matched 0.19-0.20 on the plain edges, 0.37-0.48 on these)."""
    g = view.astype(np.float32) + 1.0
    return _edges(g / cv2.GaussianBlur(g, (0, 0), LIGHT_R * ppu) * 128.0)


def _working(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A small copy to locate on: grey, CIE Lab (0-1 input), and its scale."""
    s = min(1.0, WORK_SIDE / max(image.shape[:2]))
    small = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1.0 else image
    lab = cv2.GaussianBlur(cv2.cvtColor(small.astype(np.float32) / 255, cv2.COLOR_BGR2Lab), (0, 0), 1.5)
    return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), lab, s


class _Edges:
    """The working copy's edges, found once per photo. The search for whole round outlines and,
    when it finds no board, the busy-table search through the curves' smooth arcs share them
    (the live referee pays both on every frame in which no board is in sight), and a later
    search does not look again inside the outlines an earlier one already tried. When both
    find no board, the whole curves are searched once more in the photo's fainter edges
    (:meth:`fainter`)."""

    def __init__(self, gray: np.ndarray):
        self.gray, self.shape = gray, gray.shape
        self.blur = cv2.GaussianBlur(gray, (0, 0), 1.5)
        self.gx, self.gy = cv2.Sobel(self.blur, cv2.CV_32F, 1, 0), cv2.Sobel(self.blur, cv2.CV_32F, 0, 1)
        self.grad = cv2.magnitude(self.gx, self.gy)
        self.outlines: dict[bool, list[tuple[float, tuple]]] = {}  # per ``arcs``: see _round_outlines
        # Outlines a search looked for a printed circle in, each with its search (``arcs``, cut).
        self.looked: list[tuple[tuple[bool, float], tuple]] = []
        # The first frames of the printed circles the searches found, for the last one (:func:`_centred_guesses`).
        self.frames: list[np.ndarray] = []
        self._trace(EDGE_CUT)

    def _trace(self, cut: float) -> None:
        """The edges above the ``cut`` percentile of the photo's gradient (the photo's own
        contrast sets it), the curves they form and those curves' plausible ellipses."""
        self.cut = cut
        high = max(float(np.percentile(self.grad, cut)), 8.0)
        self.edges = cv2.Canny(self.blur, 0.4 * high, high)
        self.near = cv2.dilate(self.edges, np.ones((5, 5), np.uint8)) > 0
        self.contours = cv2.findContours(self.edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)[0]
        self.fitted = [cv2.fitEllipse(curve) for curve in self._long_curves()]
        self.curve_ellipses = [e for e in self.fitted if self.plausible(e)]

    def fainter(self) -> _Edges:
        """The same photo's edges above BUSY_CUT. On a busy table (stripes, a bold print) the
        pattern holds the photo's strongest steps, and the cut they set is above the printed
        circle's thin line, which then leaves no curve at all: a lower cut finds it whole, on
        the bare wood between the ring and the flower, where the pattern does not reach. The
        outlines looked inside already are shared, and not looked inside again."""
        faint = copy.copy(self)
        faint.outlines = {}
        faint._trace(BUSY_CUT)
        return faint

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
        _, (d1, d2), _ = ellipse
        return self.board_sized(ellipse) and min(d1, d2) >= 0.35 * max(d1, d2)

    def board_sized(self, ellipse) -> bool:
        """Is the ellipse as large as the board's edge or its printed circle can be in the photo?"""
        h, w = self.shape
        return MIN_DISC * min(h, w) <= max(ellipse[1]) <= 1.6 * max(h, w)

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

    def round_view(self) -> BoardPose | None:
        """The view of a round outline of a board's size, whatever its shape, that edges running
        along it cover nearly all round (ROUND_COVER), as an affine pose (:func:`_ellipse_pose`);
        None when none shows. A circle seen at a tilt t from straight above is an ellipse whose
        axes differ by cos t: a board seen steeper than about 70 degrees has an outline too flat
        to be looked inside (:meth:`plausible`), and one seen nearly so has its drawing crushed
        past matching. A board's rim is one smooth closed outline; a hexagon's sides, a shadow's
        edge or a table's grain give flat ellipses that edges near them cover (another game's
        board is edges all over) but edges running along them do not: on 130 photos of other
        games' boards the best so covered were flatter than FLATTEST_VIEW (beyond which an
        outline is a line) or seen under 65 degrees (a Gemblo plate's rim). Asked when no board
        was placed, to say why (:func:`vision.pose.check_angle`)."""
        t = np.linspace(0, 2 * np.pi, 180, endpoint=False)
        rims = [e for e in self.fitted if self.board_sized(e) and min(e[1]) >= FLATTEST_VIEW * max(e[1])]
        if not rims:
            return None
        cover = OrientedEdges(self.gx, self.gy, self.edges).cover_all(rims, t)
        if cover.max() < ROUND_COVER:
            return None
        size = (self.shape[1], self.shape[0])
        return _pose_from(_ellipse_pose(rims[int(np.argmax(cover))], size, 1.0), size)


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


def _turns(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int], in_light: bool = False
           ) -> list[tuple[float, float, np.ndarray]]:
    """How well the drawing, turned, lies on the photo's edges in the top-down view of
    ``frame1`` (right but for the turn and a small shift): (correlation, turn, shift) per turn.
    ``in_light``: the edges taken against the light round them (:func:`_edges_in_light`)."""
    margin = 1.0
    view = rectify(gray, _pose_from(frame1, size), FIT_PPU, margin)
    rect = cv2.GaussianBlur(_edges_in_light(view, FIT_PPU) if in_light else _edges(view), (0, 0), 0.6)
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


def _global_match(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int], in_light: bool = False
                  ) -> list[tuple[np.ndarray, float]]:
    """Board -> photo maps that lay the drawing on the photo's edges, starting from ``frame1``
    (right but for the turn): the turns (within 60 degrees) whose match is a local best, best
    first, each with its correlation. ``in_light``: see :func:`_turns`."""
    scores = _turns(gray, frame1, size, in_light)
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
    t = RAY_ANGLES
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
    t = RAY_ANGLES
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
    t = RAY_ANGLES
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
    _, line, _, radius = raster(ppu)
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
        if len(board) < MIN_PIECES:
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
    if len(board_pts) < MIN_PIECES:
        return pose, (0, 0), (board_pts, photo)
    px_per_r = math.sqrt(abs(np.linalg.det(np.linalg.inv(pose.homography)[:2, :2])))
    H, inliers = cv2.findHomography(board_pts, pose.lens.undistort(photo), cv2.RANSAC,
                                    PATCH_TOLERANCE * px_per_r)
    if H is not None and inliers.sum() >= MIN_PIECES:
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


def _printed_circle(gray: np.ndarray, pose: BoardPose, thin: np.ndarray
                   ) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The printed circle found in the photo (:func:`_circle_ellipse`) inside the board's edge
    nearest where ``pose`` puts it; None when none matches (MIN_CIRCLE)."""
    a = RAY_ANGLES
    edge = fg.DISC + fg.DISC * np.column_stack([np.cos(a), np.sin(a)])
    guess = cv2.fitEllipse(pose.to_photo(edge).astype(np.float32))
    circle, score = _circle_ellipse(gray, _disc_ellipse(gray, guess), pose.image_size, thin)
    return circle if circle is not None and score >= MIN_CIRCLE else None


def _circle_holds(gray: np.ndarray, pose: BoardPose, thin: np.ndarray) -> bool:
    """Does the printed circle the photo shows lie where ``pose`` puts it, all round (within
    CIRCLE_HOLDS)? Found whole from the parts that show (a mug standing on the flower hides
    some of it, not its ellipse), it fixes the view's tilt, scale and middle; a pose fitted
    through the drawing's pieces on one side of the mug, tilted off on the far side, puts it
    elsewhere there (seed 8 mug photo 34's first pose: 0.33 r; photo 8's, 0.47 r off the true
    circle, finds none near it)."""
    circle = _printed_circle(gray, pose, thin)
    if circle is None:
        return False
    on = pose.to_board(ellipse_points(circle, RAY_ANGLES))
    return bool(np.abs(np.hypot(*(on - fg.DISC).T) - fg.OUTER_LINE).max() < CIRCLE_HOLDS)


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
    circle = _printed_circle(gray, pose, thin)
    if circle is None:
        return pose, votes, found
    points = ellipse_points(circle, RAY_ANGLES)
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
            before = reference.for_size(pose.image_size).to_photo(sides[:1])[0]
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
    (:func:`locate`). A clear find ends the search only where the board's edge frames it
    (:func:`_framing`). When no frame's drawing matches at all, those of framed circles are
    matched once more against the light round the lines (a hard shadow, :func:`_edges_in_light`),
    as guesses the drawing's pieces must confirm. ``every``: gather every guess, even after a
    sure match (which the drawing's pieces then did not confirm). ``arcs``: outlines from
    smooth arcs too (a busy table, see :func:`_round_outlines`); those an earlier search looked
    inside are not tried again (``edges``: the photo's, shared with that search, or its fainter
    edges)."""
    outlines = _round_outlines(edges, arcs)
    ratio = fg.DISC / fg.OUTER_LINE
    tries, distinct = [], []
    for _, first in outlines:
        (cx, cy), (d1, d2), angle = first
        if any(math.hypot(cx - x, cy - y) < 0.05 * max(d1, d2) and abs(max(d1, d2) / max(e1, e2) - 1) < 0.05
               for (x, y), (e1, e2), _ in distinct):
            continue  # the same outline again (both sides of a line give a curve each)
        search = (arcs, edges.cut)
        if any(_same_ellipse(first, seen) for by, seen in edges.looked if by != search):
            continue  # looked inside already, by an earlier search
        distinct.append(first)
        if len(distinct) > OUTLINES_TRIED:
            break
        if (search, first) not in edges.looked:
            edges.looked.append((search, first))
        for disc in (first, ((cx, cy), (d1 * ratio, d2 * ratio), angle)):
            circle, score = _circle_ellipse(gray, disc, size, edges.thin)
            # The board's edge can pass for a thin line (its shadowed side wall): the printed
            # circle has the same wood on both sides.
            if circle is not None and _sides_differ(lab, circle) < SIDES_MAX:
                tries.append((score, disc, circle))
        if any(score >= SURE_CIRCLE and _framing(circle, outlines) for score, _, circle in tries):
            break  # a clear find the board's edge frames: the other outlines need not be tried
    # A circle framed by the board's edge (an outline round it, about as much larger as on the
    # board) first, then the best matched: a ring of tiles can match the template better than
    # the printed circle, but nothing frames it so.
    framed = []
    for score, disc, circle in tries:
        edge = _framing(circle, outlines)
        framed.append((edge is not None, score, edge or disc, circle))
    guesses: list[list[tuple[np.ndarray, float]]] = []
    circles, framed_guessed, framed_frames = 0, False, []
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
            edges.frames.append(frame)
            if is_framed:
                framed_frames.append(frame)
            found = [(b2p, top) for b2p, top in _global_match(gray, frame, size) if top >= MIN_TRY]
            # A sure match from a circle nothing frames (a ring of tiles) does not end the search
            # when a framed circle's guesses matched too: the drawing's pieces decide (:func:`locate`).
            if found and found[0][1] >= SURE_MATCH and not every and (is_framed or not framed_guessed):
                return [found]
            if found:
                guesses.append(found)
                framed_guessed |= is_framed
    if not guesses:
        # A hard shadow over part of the drawing: its lines there are faint in the plain edges,
        # not against the light round them. The frames of circles the board's edge frames are
        # matched so. Such a match vouches for nothing by itself (against the light, a busy
        # cloth's pattern and the noise in the dark grow strong too: a Gemblo board on a cloth
        # matched above MIN_MATCH): it is fitted as a guess just good enough to try, and the
        # drawing's pieces, on the plain edges, must confirm it (POSE_TRUST, :func:`_locate_in`).
        guesses = [found for found in ([(b2p, MIN_TRY) for b2p, top in _global_match(gray, frame, size, in_light=True)
                                        if top >= MIN_TRY] for frame in framed_frames) if found]
    if not guesses:
        raise ReadError("no_board", NO_DRAWING)
    return sorted(guesses, key=lambda g: -g[0][1])


def _centred_guesses(gray: np.ndarray, size: tuple[int, int], frames: list[np.ndarray]
                     ) -> list[list[tuple[np.ndarray, float]]]:
    """First guesses from the frames the earlier searches made (:func:`_first_frame`), when no
    fit of theirs was confirmed: the drawing laid about each frame's own middle, turned in
    PROBE_TURN_DEG steps, each turn judged by how many of the drawing's pieces agree with it
    (:func:`_patches`); per distinct frame, the turn most agree with, if a homography was
    fitted through them (MIN_PIECES), those most agree with first. The whole-drawing match
    (:func:`_global_match`) moves the drawing up to SHIFT_R to where it correlates best, and a
    hand over the flower, glare and a mug at the rim can pull it to the end of that reach and
    a wrong turn (held-out seed 97 ``hard`` 2: the guesses 0.5-1.3 r off at the corners, 0-2
    agreeing pieces); the printed circle they came from had been found right, and about its
    frame's own middle 12-17 of the drawing's 49 pieces agree at the turns within 6 degrees of
    the right one, 0-2 at the others. Each guess is just good enough to try (MIN_TRY): the drawing's pieces must
    confirm its fit (:func:`_locate_in`). A frame whose board's edge lies where an earlier
    one's does (SAME_OUTLINE) is the same frame. ReadError("no_board") when there is none."""
    t = RAY_ANGLES
    edge = fg.DISC + fg.DISC * np.column_stack([np.cos(t), np.sin(t)])
    distinct: list[tuple[np.ndarray, tuple]] = []
    for frame in frames:
        seen = cv2.fitEllipse(apply_h(frame, edge).astype(np.float32))
        if not any(_same_ellipse(seen, other) for _, other in distinct):
            distinct.append((frame, seen))
    voted = []
    for frame, _ in distinct:
        turns = [_patches(gray, _pose_from(frame @ _about_centre(turn), size))
                 for turn in np.arange(0.0, 60.0, PROBE_TURN_DEG)]
        pose, votes, _ = max(turns, key=lambda fit: fit[1])
        if votes[0] >= MIN_PIECES:
            voted.append((votes, np.linalg.inv(pose.homography)))
    if not voted:
        raise ReadError("no_board", NO_DRAWING)
    return [[(board_to_photo, MIN_TRY)] for _, board_to_photo in sorted(voted, key=lambda v: v[0], reverse=True)]


def _framing(circle, outlines: list[tuple[float, tuple]]) -> tuple | None:
    """The round outline round a printed circle found, about as much larger as the board's edge
    is than the circle and about as centred (the board's edge framing it), or None. A circle
    nothing frames may be the ring of tiles, or a circle looked for inside an outline taken
    for the printed circle that was the board's edge (seed 5 ``lens_distortion`` #4: matched
    0.16, midway between the ring and the printed circle, and the printed circle's own outline
    was never looked inside)."""
    ratio = fg.DISC / fg.OUTER_LINE
    (cx, cy), (c1, c2), _ = circle
    return next((outline for _, outline in outlines
                 if abs(math.sqrt(outline[1][0] * outline[1][1] / (c1 * c2)) / ratio - 1) < 0.15
                 and math.hypot(outline[0][0] - cx, outline[0][1] - cy) < 0.3 * max(c1, c2)), None)


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
    # On a busy table (a patterned cloth, stripes) the pattern's edges run into the board's
    # edge all round, and no whole curve gives its ellipse: the curves' smooth arcs do. Its
    # strong steps may also set the edges' cut above the printed circle's thin line: the whole
    # curves of the photo's fainter edges then hold the circle (:meth:`_Edges.fainter`).
    # When none of those guesses' fits is confirmed, the printed circles they came from are
    # tried once more, the drawing laid about each frame's own middle (:func:`_centred_guesses`).
    # Not for the live referee looking for a board it lost (``reference``): every half second
    # while a hand covers the board it would cost 0.5-2.5 s. Nor with no circle found: the
    # earlier search's refusal says more (no round edge, the board cut by the photo's edge).
    for arcs, faint, centred in ((False, False, False), (True, False, False), (False, True, False),
                                 (False, False, True)):
        if centred and (reference is not None or not edges.frames):
            continue
        try:
            pose = _locate_in(gray, lab, size, arcs=arcs, edges=edges.fainter() if faint else edges,
                              centred=centred)
            break
        except ReadError as error:
            missed = error
    else:
        if edges.outline_cut():
            raise ReadError("no_board", "the board runs out of the photo and too little of it shows to place "
                            "it for sure; take the photo with the whole board in it") from missed
        seen = edges.round_view()
        if seen is not None:
            check_angle(seen)  # a round board seen too steeply: "impossible_angle", as for the other games
        raise missed
    full = (image.shape[1], image.shape[0])
    pose = _upright(pose.scaled(full[0] / size[0]) if s < 1.0 else pose, reference)
    check_angle(pose)  # beyond it the far fields are slivers the drawing's pieces barely fix
    return pose


def _locate_in(gray: np.ndarray, lab: np.ndarray, size: tuple[int, int], arcs: bool = False,
               edges: _Edges | None = None, centred: bool = False) -> BoardPose:
    """The board's pose in the working copy (see :func:`locate`), its quality the share of the
    drawing's pieces that agree with it. ``arcs``, ``edges``: see :func:`_first_frame`;
    ``centred``: the first guesses from the frames earlier searches in ``edges`` made
    (:func:`_centred_guesses`)."""
    edges = edges or _Edges(gray)
    guesses = _centred_guesses(gray, size, edges.frames) if centred else _first_frame(gray, lab, size, edges, arcs=arcs)
    # Glare or shadow can favour a wrong turn by a little: then the runners-up are aligned
    # too, and the pose most of the drawing's pieces agree with wins.
    sure = len(guesses) == 1 and guesses[0][0][1] >= SURE_MATCH
    tried = guesses[0][:1] if sure else [g for found in guesses for g in found[:TURNS_TRIED]]
    best, agree, matched, top = None, (-1, -1), None, 0.0
    for attempt in range(2):
        for board_to_photo, match in sorted(tried, key=lambda g: -g[1])[:GUESSES_FITTED]:
            pose, votes, found = _fit_drawing(gray, _pose_from(board_to_photo, size, quality=match))
            # On a tie of the drawing's pieces the board's edge decides: as many of a blurred
            # drawing's pieces can agree with a pose too large by about half as with the right
            # one, and none of the edge's with it (held-out seed 97 `blur` 4: 16 of 49 each).
            if votes > agree:
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
    if agree[0] < POSE_TRUST * len(_anchors()) and not _vouched_for(gray, best, agree, matched, top, edges.thin):
        raise ReadError("no_board", NO_DRAWING)
    # The lens: kept when more of the drawing and the edge agree with it than without.
    bent, bent_votes = _lens_fit(gray, best, *matched)
    if bent_votes[1] > agree[1] + LENS_GAIN and abs(bent.distortion) >= LENS_MIN:
        best, agree = bent, bent_votes
    # How much of the drawing confirms the pose: a pose it does not confirm is not trusted.
    return replace(best, quality=agree[0] / len(_anchors()))


def _vouched_for(gray: np.ndarray, pose: BoardPose, votes: tuple[int, int], found: tuple[np.ndarray, np.ndarray],
                 top: float, thin: np.ndarray) -> bool:
    """Is there a board at a pose fewer than POSE_TRUST of the drawing's pieces agree with? Only
    where the printed circle the photo shows lies where the pose puts it all round
    (:func:`_circle_holds`): every Equilibrix board has it round the flower, found whole from
    the parts that show. A whole-drawing match above MIN_MATCH does not vouch alone: another
    game's lattice matches it too (an empty Gemblo board under a hard shadow, 960x720: its
    hexagons matched 0.36-0.47 while 1-10 of 49 pieces agreed; no printed circle lies where
    those poses put it, the nearest 0.69 r off). A board it vouches for is still read with
    every field in doubt (its quality is under POSE_TRUST).

    Where the drawing matched weakly as a whole too (below MIN_MATCH), the pieces that match
    anywhere near (``found``) must still agree (POSE_TRUST of them), if half or more match: a
    mug standing on the flower hides up to half the drawing, and a piece under it matches
    nothing (no line shows there), so it says nothing against a board the circle round the
    mug places (seed 8 mug photos 0, 9, 18: 13 of 49 pieces agree, of 30-32 that match, the
    pose within 0.15 r). More than half unseen is more than a mug hides. Counting only the
    pieces that show without the circle let a held-out ``hard`` photo (seed 83) read one
    visible field wrong surely."""
    if not _circle_holds(gray, pose, thin):
        return False
    if top >= MIN_MATCH:
        return True
    shown = int(_drawn(found[0]).sum())
    return shown >= len(_anchors()) / 2 and votes[0] >= POSE_TRUST * shown
