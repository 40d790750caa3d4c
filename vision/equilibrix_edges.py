"""The photo's edges, found once per photo, and the round outlines in them: step 1 of the
Equilibrix pose search (``vision.equilibrix_pose`` puts the steps together).

*Round outlines*: long edge curves whose ellipse is covered by edges nearly all round: the
board's edge, the printed circle round the flower, sometimes a cup's rim. A hand or a cup
that joins an outline to its own is cut away by fitting stretches of each curve too. When
that finds no board, a busy table's pattern may touch the board's edge all round: the
curves are cut where they turn sharply, and ellipses through pairs of the smooth arcs left,
covered all round by edges running along them, are tried (``vision.equilibrix_outlines``).
When that finds none either, a bold pattern's steps may have set the edges' cut above the
printed circle's thin line: the whole curves are looked for again in the fainter edges.

Apart because the searches share one set of edges (:class:`PhotoEdges`), which also says,
when no board was placed, why: an outline cut by the photo's edge, a round outline seen too
steeply.
"""

from __future__ import annotations

import copy
from functools import cached_property, partial

import cv2
import numpy as np

from .equilibrix_drawing import ellipse_pose, pose_from
from .equilibrix_outlines import OrientedEdges, ellipse_points, paired_ellipses, smooth_arcs
from .errors import ReadError
from .pose import BoardPose

WORK_SIDE = 720  # the board is found on a copy this large (long side)
EDGE_CUT = 90  # percentile of the photo's gradient above which a step is surely an edge (Canny's high cut)
BUSY_CUT = 70  # ... on a busy table, whose pattern holds the strongest steps: the printed circle's line is fainter
EDGE_COVER = 0.45  # share of a board edge's ellipse that edges must cover
CUT_SHOWN, CUT_COVER = (0.25, 0.95), 0.8  # an outline this much in the photo, covered so in it: cut by its edge
ROUND_COVER = 0.9  # share of a round outline that edges running along it cover: the board's rim, however steep
FLATTEST_VIEW = 0.17  # an ellipse's short axis over its long one below which it is a line (cos 80 degrees)
MAX_CURVES = 60  # the longest edge curves tried as the board's edge
MIN_CURVE = 0.3  # the shortest curve tried, as a share of the photo's short side
MIN_DISC = 0.2  # the board (or its printed circle) spans at least this share of the photo's short side


def working(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A small copy to locate on: grey, CIE Lab (0-1 input), and its scale."""
    s = min(1.0, WORK_SIDE / max(image.shape[:2]))
    small = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1.0 else image
    lab = cv2.GaussianBlur(cv2.cvtColor(small.astype(np.float32) / 255, cv2.COLOR_BGR2Lab), (0, 0), 1.5)
    return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), lab, s


class PhotoEdges:
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
        self.outlines: dict[bool, list[tuple[float, tuple]]] = {}  # per ``arcs``: see round_outlines
        # Outlines a search looked for a printed circle in, each with its search (``arcs``, cut).
        self.looked: list[tuple[tuple[bool, float], tuple]] = []
        # The first frames of the printed circles the searches found, for the last one
        # (:func:`vision.equilibrix_guesses.centred_guesses`).
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

    def fainter(self) -> PhotoEdges:
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
        """:func:`thin_dark` of the working copy (float32), for every printed circle looked for in it."""
        return thin_dark(self.gray).astype(np.float32)

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
        along it cover nearly all round (ROUND_COVER), as an affine pose
        (:func:`vision.equilibrix_drawing.ellipse_pose`);
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
        return pose_from(ellipse_pose(rims[int(np.argmax(cover))], size, 1.0), size)


def round_outlines(edges: PhotoEdges, arcs: bool = False) -> list[tuple[float, tuple]]:
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


def _find_outlines(edges: PhotoEdges, arcs: bool) -> list[tuple[float, tuple]]:
    """:func:`round_outlines`, scored and sorted (empty when there are none)."""
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


def thin_dark(gray: np.ndarray) -> np.ndarray:
    """Thin dark lines (a black-hat filter): the printed circle among them."""
    return cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
