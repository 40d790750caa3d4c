"""Measure a Geometrius token's polygon (corners, sides, angles) and match it to the catalogue.

3. *Polygon*: the ink is the red channel's darkness against the card nearby (red
   right-angle marks vanish; shadows and fall-off cancel). The outline's outside is flooded
   from the rim (ink over a share of the stroke's own core darkness, which blur lightens;
   fainter thresholds when the flood leaks through a washed-out stretch and leaves a scrap
   smaller than any printed polygon); what is left, opened a little to shave the tick
   marks, gives the corners' first guess (Douglas-Peucker). Each side is then fitted to its ink clear of the angle
   arcs at its corners (right angles carry no arc), refitted round the line found until the
   corners settle; nearly straight corners, and a reflex corner split in two by blur, are
   dropped and the sides refitted. A polygon with a rough corner well inside lost a dent
   (a notch whose short walls were fitted as one side) and is not measured. Last, each
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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping, Sequence

import cv2
import numpy as np

from rules.geometrius import UNKNOWN_SHAPE
from rules.polygon import CAMERA, Polygon, Shape

from .geometrius_lines import parallel_edges, quantile, robust_line
from .geometrius_token import ARC_MM, FRAME_MM, FRAME_SHIFT_MM, POLY_RADIUS_MM, PPM, warp
from .matching import sample_at


MATCH_LIMIT = 12.0  # nearest catalogue shape within this many camera tolerances, else "unknown"
SURE_MATCH = 2.0  # beyond this (or with a close runner-up) the shape is reported uncertain
RUNNER_UP_GAP = 1.5
ARC_CLEAR_MM = 0.8  # past an arc's end the side's ink is the side's alone
CORNER_CLEAR_MM = 0.9  # past a corner's own stroke (a right angle's mark is red: no ink)
CARD_NEAR_MM = 3.0  # the card's brightness is taken this near each pixel
HIDE_CLEAR_MM = 1.2  # sides are fitted this far clear of a stack
# A corner this close to 180 degrees is no corner: the catalogue's are 27 degrees or more off,
# and blur running a sharp corner's strokes together bends its neighbour's lines by up to 3.
STRAIGHT_DEG = 22.0
ROUGH_STRAIGHT_DEG = 15.0  # nor is an outline's rough corner this close (its angle is a few degrees out at most)
SETTLED_PX = 0.25  # a refinement's corners moving less than this (top-down pixels) have settled
# ... and moving less than this, but no less than the pass before, wobble round the ink's
# pixels (a sixth of a millimetre; a polygon still finding its shape moves more)
WOBBLE_PX = 1.0
# Blur splits a reflex corner into a wide convex corner and a reflex one a few millimetres
# apart (an X04's under a 7.9 px streak: 111-155 degrees, 2.5-4.7 mm, traced pass by pass). No
# shape of the packaged catalogue has a convex corner wider than a right angle beside a reflex
# one (X02's, H06's and X03's are right angles; X02's side between them is 6.8 mm, P08's 5.4 mm
# side lies between a reflex corner and a 45-degree one): the angle, not the side, sets them
# apart. A user's own token (``tableref calibrate tokens``) may have one, a V notch with
# walls under about 6-7 mm: merged, a convex token's notch leaves no reflex corner and no
# polygon (``_star_kept``); a notch lost otherwise (its walls fitted as one straight side with
# the square's) leaves the outline's rough corner at its tip inside the polygon (``_dent_mm``).
# A notch whose mouth corners alone are dropped (its tip, a reflex corner, kept) is still unseen.
SPLIT_SIDE_MM = 6.0
SPLIT_CONVEX_DEG = 105.0
# A rough corner of the outline (on its silhouette, 0.45 mm or more outside each side) this far
# inside the refined polygon follows a dent the refinement lost (``_dent_mm``). Measured on the
# default bench (BENCH_PHOTOS=5, 2 495 polygons, 1 495 with a stack): under the bound, 0.35 mm
# at the most, but three polygons of the darkest, noisiest photos at 0.44-0.51 mm. Past it lie
# only polygons that are no token's right reading (the accuracy tables are the same with the test
# and without it): 3-5 corners of tokens whose polygon a stack hides (0.66-2.9 mm), degenerate
# 5-corner ones (2.9 mm), the darkest photos' (up to 4.1 mm); on seed 21, 3-4 corners behind a
# hand or on ``hard`` photos, 1-3 mm. On 30-degree notches 6-9 mm wide, whose walls the
# refinement fits as one side with the square's, 0.69 mm or more; a notch under about 1.8 mm
# deep stays under the bound (the reduction's 0.6 mm and the silhouette's 0.45 mm eat the rest).
DENT_MM = 0.6
# ... counted only on rough corners this far clear of a stack: the flood through a stack's cut
# in the stroke runs in beside the stack. With a chip at each of four spots, no catalogue
# token's rough corner so clear lies past 0.3 mm inside; a notch's tip clear of it shows.
STACK_LEAK_MM = 3.0


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
    return min(OUTLINE_INK, OUTLINE_SHARE * quantile(ink, STROKE_CORE_QUANTILE))


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


def centred_on_polygon(red: np.ndarray, H: np.ndarray) -> np.ndarray:
    """``H`` (token mm -> photo px) moved so that the token's origin is the middle of its
    polygon's bounding box, where every polygon is printed. For a token whose own frame was
    not found: the grid alone may misplace it by up to FRAME_SHIFT_MM, which would put part
    of the polygon outside the view it is measured in. The polygon is the largest inked
    region that does not reach the view's rim (a neighbour's frame or a stack may)."""
    half = POLY_RADIUS_MM + FRAME_SHIFT_MM
    ink = _ink(warp(red, H, half, PPM))
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
    much on each side. ``trim``: how much of each end to leave out (arcs in the corners).
    Each side looks only at the ink of the rows its band reaches (the points come in row
    order): a side's band holds a small share of the view's ink, and the refinement fits
    every side three times a pass."""
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.maximum(length, 1e-12)[:, None]
    normal = np.column_stack([-u[:, 1], u[:, 0]])
    rows = np.searchsorted(ink.y, [np.minimum(a[:, 1], b[:, 1]) - band, np.maximum(a[:, 1], b[:, 1]) + band])
    fits: list[tuple[np.ndarray, np.ndarray] | None] = []
    for i in range(len(a)):
        near = slice(rows[0, i], rows[1, i])
        rx, ry = ink.x[near] - a[i, 0], ink.y[near] - a[i, 1]
        t = rx * u[i, 0] + ry * u[i, 1]
        s = rx * normal[i, 0] + ry * normal[i, 1]
        pick = (t > trim[i, 0]) & (t < length[i] - trim[i, 1]) & (np.abs(s) < band)
        t, s, w = t[pick], s[pick], ink.w[near][pick]
        wt = w * t
        sw, st, ss, stt, sts = w.sum(), wt.sum(), w @ s, wt @ t, wt @ s
        det = sw * stt - st * st
        if length[i] < 1e-6 or len(t) < 6 or sw < 3 or det <= 1e-9:
            fits.append(None)
            continue
        c1 = (sw * sts - st * ss) / det
        c0 = (ss - c1 * st) / sw
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


def _along_sides(v: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Points along each side of the polygon ``v`` (side i from v[i] to v[i + 1]) at the
    fractions ``steps`` of its length: a row per point, side by side."""
    return (v[:, None, :] + steps[None, :, None] * (_next(v) - v)[:, None, :]).reshape(-1, 2)


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
    that shrinks to nothing is merged away and the rest refitted.

    The passes end when the corners stay put. Each fit takes the ink between its corners'
    trims, so a corner's move adds or drops whole pixels at a side's ends, and the corners
    may wobble round where the ink puts them without ever staying within SETTLED_PX: a move
    no smaller than the pass before, under WOBBLE_PX, halves the step taken towards each
    new fit from then on (a later move of WOBBLE_PX or more too: only a corner merged away
    restores the whole step), so the passes end where the wobble's corners average out. Without
    that, such a wobble ran to the passes' cap, and which of its positions the cap stopped
    at was arbitrary (a cheaper fit's last bits could shift it).

    A short side between a reflex corner and a convex one wider than SPLIT_CONVEX_DEG is a
    reflex corner split by blur (no catalogue shape has one): merged at once, the rest of the
    passes fit the star's ten sides. Left, the split corners moved 2-8 px a pass through
    every pass, and whether the last pass happened to drop one turned on the fits' last
    bits (a nudge of 1e-9 to the ink's weights: ten corners or eleven)."""
    v = _merge_short(corners.copy(), 2.0 * PPM)
    angles = _interior_angles(v)
    split_merged = False  # a reflex corner was taken as split by blur: the polygon must stay a star
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
        if last is None or len(last) != n:  # a polygon not fitted before (or with a corner merged away)
            previous: float | None = None  # how far the last pass moved its corners (of the same kinds)
            weight = 1.0  # the share of a new fit's move taken: halved at each wobble
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
        wide = (angles > SPLIT_CONVEX_DEG) & (angles < 180)
        reflex = angles > 180
        split = (sides < SPLIT_SIDE_MM * PPM) & ((wide & _next(reflex)) | (reflex & _next(wide)))
        if not straight.any() and not short.any() and not split.any():
            if not np.array_equal(np.abs(angles - 90) > 8, marked):
                previous = None
                v = last = new  # refit with the corners' kinds as now seen
                continue
            moved = float(np.abs(new - v).max())
            if previous is not None and previous <= moved < WOBBLE_PX:
                weight /= 2
            previous = moved
            step = new if weight == 1.0 else v + weight * (new - v)
            if weight * moved < SETTLED_PX:
                return _star_kept(step, split_merged)  # the corners stay put (the photo gives the sides' last fit)
            v = last = step  # refit round the lines found
            continue
        if straight.any():
            v = np.delete(new, int(np.argmin(np.abs(angles - 180))), axis=0)
        elif short.any():
            v = np.delete(new, int(np.argmin(sides)), axis=0)
        else:
            v = _merge_side(new, angles, int(np.argmin(np.where(split, sides, np.inf))))
            split_merged = True
        angles = _interior_angles(v)
    return _star_kept(last, split_merged)


def _star_kept(corners: np.ndarray | None, split_merged: bool) -> np.ndarray | None:
    """The refinement's ``corners``, or None when a short side was merged as a reflex corner
    split by blur and no reflex corner is left: a split reflex corner belongs to a star, so the
    pair was the polygon's own (a user's token with a V notch, no catalogue shape), and the
    polygon without it would be read, or measured by ``tableref calibrate tokens``, as another
    shape for sure."""
    if corners is None or not split_merged:
        return corners
    return corners if (_interior_angles(corners) > 180).any() else None


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
# ... and this near under blur: a shaking phone's streak and defocus carry the other side's ink
# 2-3 mm out along a side from a 36-45 degree tip (round 18: a side whose profiles there crossed
# half way at their own darkened contrast leaned 2-8 degrees). Told by the token's own stroke,
# which blur widens: printed 0.9 mm, a sharp photo's measures 1.1-1.35 mm at half contrast.
BLURRED_CORNER_NEAR_MM = 3.0
BLURRED_WIDTH_MM = 1.45  # above a sharp photo's strokes (p95 1.34 mm), below a blurred one's median (1.59)
# A side with fewer profiles than this clear of its corners (1.5 mm: a short side under blur, whose
# middle is its tick's stretch) takes its usual contrast from the sides parallel to it (within
# PARALLEL_DEG): round 19, an X02's or H06's 7 mm side between right angles leaned 2-5 degrees.
FEW_CLEAR_PROFILES = 10
PARALLEL_DEG = 15.0
PHOTO_FIT_MOVE_MM = 2.0  # a corner moving farther than this was not refined but lost
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


def _per_side(x: np.ndarray, side: np.ndarray, n: int, among: np.ndarray, q: float, least: int) -> np.ndarray:
    """Each of the ``n`` sides' ``q`` quantile of ``x`` over its profiles ``among`` (over all
    its profiles when fewer than ``least`` of them are)."""
    out = np.empty(n)
    for i in range(n):
        own = side == i
        out[i] = quantile(x[own & among] if (own & among).sum() >= least else x[own], q)
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


def _usual_contrast(contrast: np.ndarray, side: np.ndarray, n: int, cornered: np.ndarray,
                    parallel_sides: np.ndarray) -> np.ndarray:
    """Each of the ``n`` sides' usual contrast: the median over its profiles clear of its corners
    (not ``cornered``). A short side under blur has few or none: every profile of it sees a
    neighbour's ink, which darkens its core, so its own median is that darkened contrast and
    the edges near its corners are pulled in, one end more than the other (the side leans).
    Such a side takes the usual contrast of the sides parallel to it (``parallel_sides``: n x n,
    itself included): blur lightens a stroke by its direction alone (a shaking phone's streak
    lightens the strokes across it, hardly those along it; defocus all alike), so a parallel
    side's clear profiles show how dark this side's own ink is."""
    usual = _per_side(contrast, side, n, ~cornered, 0.5, 3)
    for i in np.flatnonzero(np.bincount(side[~cornered], minlength=n) < FEW_CLEAR_PROFILES):
        among = ~cornered & parallel_sides[i][side]
        if among.sum() >= 3:
            usual[i] = quantile(contrast[among], 0.5)
    return usual


def _edges(values: np.ndarray, offs: np.ndarray, sign: int, side: np.ndarray, n: int, cornered: np.ndarray,
           parallel_sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each profile's stroke edge on one side (``sign`` +1 outwards, -1 inwards), in mm from
    the centre line, where the darkness crosses half way to the card; and whether it was seen.
    ``side``: which of the ``n`` sides each profile crosses; ``cornered``: the profiles near
    a corner, where the other side's blurred ink darkens the core: half way to that would
    pull the edge in, so half way at the side's usual contrast counts there
    (``_usual_contrast``; ``parallel_sides``: which sides are parallel)."""
    core = np.flatnonzero(np.abs(offs) <= STROKE_HALF_MM + 0.15)  # one run of samples round the centre line
    stroke = values[:, core[0]:core[-1] + 1]
    ink = stroke.min(1)
    centre = core[0] + np.argmin(stroke, axis=1)
    beyond = (sign * offs >= 2 * STROKE_HALF_MM) & (sign * offs <= PROFILE_MM)
    flank = values[:, beyond]
    card = np.partition(flank, int(0.8 * (flank.shape[1] - 1)), axis=1)[:, int(0.8 * (flank.shape[1] - 1))]
    contrast = (card - ink) / np.maximum(card, 1.0)
    usual = _usual_contrast(contrast, side, n, cornered, parallel_sides)
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


def _photo_sides(red: np.ndarray, H: np.ndarray, v: np.ndarray, hide: np.ndarray | None, blurred: bool = False
                 ) -> tuple[np.ndarray, float] | None:
    """The polygon's corners (token mm, y down) refitted side by side on the photo's red
    channel (``H``: token mm -> photo px), starting from corners ``v``, and the share of the
    edge points on their side's line on the least straight side (a corner merged away
    bends a side); None when a side cannot be fitted so (the corners found before stand).
    Near a corner the edges are found at the side's usual contrast, over
    BLURRED_CORNER_NEAR_MM when the photo is ``blurred`` or the token's stroke measures
    wider than BLURRED_WIDTH_MM (blur carries the other side's ink farther along)."""
    n = len(v)
    a, b = v, _next(v)
    lengths = np.linalg.norm(b - a, axis=1)
    if lengths.min() < 1e-6:
        return None
    u = (b - a) / lengths[:, None]
    normal = np.column_stack([-u[:, 1], u[:, 0]])
    turn = np.abs(u[:, None, 0] * u[None, :, 1] - u[:, None, 1] * u[None, :, 0])  # |sin| between two sides
    parallel_sides = turn < math.sin(math.radians(PARALLEL_DEG))
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
    plain_all = view_all & ~_ticks(prof_all, offs, ok[0] & view_all, side, n)
    # The stroke's width: printed the same all round, so the token's where a side shows too
    # little of it away from its middle (where ticks cross it).
    middle = np.abs(t_all - lengths[side] / 2) < lengths[side] / 6
    clear = ok[0] & ok[1] & plain_all

    def stroke(reach: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """Each profile's outer and inner edge (and whether seen), half way at the side's
        usual contrast within ``reach`` of a corner; and the token's stroke width."""
        cornered = (t_all < reach) | (t_all > lengths[side] - reach)
        out_e, out_s = _edges(prof_all, offs, 1, side, n, cornered, parallel_sides)
        in_e, in_s = _edges(prof_all, offs, -1, side, n, cornered, parallel_sides)
        both = out_s & in_s & clear & ~middle
        if both.sum() < 8:
            # Too few profiles clear of everything on both flanks (a star's short sides: marks
            # inside the tips, the other side outside the reflex corners). The printed width
            # would not do: blur widens every stroke, and a side seen by its outer edge at one
            # end and its inner edge at the other would turn by the difference. The sides'
            # middles count too: a tick there is told by its flanks.
            both = out_s & in_s & clear
        width = quantile((out_e - in_e)[both], 0.5) if both.sum() >= 8 else 2 * STROKE_HALF_MM
        return out_e, out_s, in_e, in_s, width

    out_all, out_seen, in_all, in_seen, token_width = stroke(BLURRED_CORNER_NEAR_MM if blurred else CORNER_NEAR_MM)
    if not blurred and token_width > BLURRED_WIDTH_MM:  # a blurred stroke: the other side's ink reaches farther
        out_all, out_seen, in_all, in_seen, token_width = stroke(BLURRED_CORNER_NEAR_MM)
    lines = []
    straight = 1.0
    for i, ts in enumerate(steps):
        rows = side == i
        out_e, in_e, plain = out_all[rows], in_all[rows], plain_all[rows]
        out_ok = out_seen[rows] & ok[0][rows] & plain
        in_ok = in_seen[rows] & ok[1][rows] & plain
        both = out_ok & in_ok
        clean = both & ~middle[rows]
        width = quantile(out_e[clean] - in_e[clean], 0.5) if clean.sum() >= 10 else token_width
        wide = both & (out_e - in_e > width + TICK_WIDER_MM)  # a tick the flanks missed
        out_ok &= ~wide
        in_ok &= ~wide
        t = np.concatenate([ts[out_ok], ts[in_ok]])
        c = np.concatenate([out_e[out_ok] - width / 2, in_e[in_ok] + width / 2])
        fitted = robust_line(t, c, EDGE_TOLERANCE_MM) if len(t) >= 8 else None
        if fitted is None:
            return None
        slope, offset = fitted
        residual = c - (slope * t + offset)
        on_line = float(np.mean(np.abs(residual) < 2 * EDGE_TOLERANCE_MM))
        # A side bent at a missed corner leaves one end off the line, both edges the same way
        # (a tick pushes the two edges apart instead, in the side's middle).
        span = t.max() - t.min()
        for end in (t <= t.min() + 0.25 * span, t >= t.max() - 0.25 * span):
            if end.sum() >= 3 and abs(quantile(residual[end], 0.5)) > EDGE_TOLERANCE_MM:
                on_line = 0.0
        straight = min(straight, on_line)
        # The side's direction from its two edges' own lines (``parallel_edges``); the
        # single line above says whether the side is straight, and gives the direction
        # only where an edge shows at too few points to have a line of its own.
        parallel = parallel_edges(t, c, np.arange(len(t)) < out_ok.sum(), EDGE_TOLERANCE_MM)
        if parallel is not None:
            slope, offset = parallel
        direction = u[i] + slope * normal[i]
        lines.append((a[i] + offset * normal[i], direction / np.linalg.norm(direction)))
    corners = [_meet(*lines[i - 1], *lines[i]) for i in range(n)]
    if any(p is None for p in corners):
        return None
    return np.array(corners), straight


def covers_polygon(outline: np.ndarray, vertices: np.ndarray | None) -> bool:
    """Whether a stack's outline (token mm, y down) hides enough of the measured polygon
    (``vertices``: token mm, y up) to hide a corner: a stack beside the polygon, or over a
    short stretch of one side, leaves every corner where its sides' lines meet. Without a
    polygon, whether it reaches into the polygon's circle."""
    if vertices is None:
        d = cv2.pointPolygonTest(np.float32(outline), (0.0, 0.0), True)
        return d > -(POLY_RADIUS_MM + 0.5)
    v = np.asarray(vertices, np.float64) * [1, -1]
    lengths = np.linalg.norm(_next(v) - v, axis=1)
    boundary = _along_sides(v, np.linspace(0, 1, 50, endpoint=False))
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


def measure_polygon(view_red: np.ndarray, half: float, photo: tuple[np.ndarray, np.ndarray],
                     hide: np.ndarray | None = None, blurred: bool = False) -> PolygonFit | None:
    """The polygon, or None, from the token's top-down view (its red channel, ``half`` mm each
    way) and, for the sides' last fit, ``photo``: the photo's red channel and the token's
    homography; ``hide``: a region (token millimetres, y down) whose ink is not the
    polygon's (a stack standing there); ``blurred``: the photo was measured heavily blurred
    (``_photo_sides``)."""
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
    if fine is None or _dent_mm(found, fine, hide, half) > DENT_MM:
        return None
    corners = (fine + 0.5) / PPM - half
    return _photo_fit(corners, photo, hide, blurred) if _on_token(corners) else None


def _dent_mm(rough: np.ndarray, corners: np.ndarray, hide: np.ndarray | None, half: float) -> float:
    """How far (mm) the outline's rough corners (``_outline``, pixels) lie inside the refined
    polygon (``corners``, pixels). They lie on the outline's silhouette, the polygon with its
    stroke's outer half: outside every side, or on a sharp tip the opening that shaves the
    ticks rounds. The reduction (Douglas-Peucker) keeps a corner at the point of a dent
    farthest from the chord across its mouth when that is farther than its tolerance (0.6
    mm), so a rough corner deep inside follows a dent the refinement lost (a user's token's
    V notch whose short walls were fitted as one straight side). Rough corners near a stack
    (``hide``, token mm) are not counted: where it comes near a side, its clearing cuts the
    stroke and the flood runs inside through the cut, but only there; the rest of the outline
    still shows a dent (a chip on a notched token's face does not hide its notch)."""
    if hide is not None:
        rough = rough[~_in_hidden((rough + 0.5) / PPM - half, hide, STACK_LEAK_MM)]
    polygon = corners.astype(np.float32)
    return max(0.0, *(cv2.pointPolygonTest(polygon, (float(x), float(y)), True) for x, y in rough)) / PPM


def _on_token(corners: np.ndarray) -> bool:
    """Whether every corner (token mm) lies on the token, inside its frame. Sides fitted
    nearly parallel meet far off (a sliver of the outline, a field seen at 70 degrees: a
    corner 2.6 km away); no polygon's corner lies there, and the photo's fit along sides
    that long took gigabytes."""
    return bool(np.abs(corners).max() <= FRAME_MM)


def _photo_fit(mm: np.ndarray, photo: tuple[np.ndarray, np.ndarray], hide: np.ndarray | None,
               blurred: bool = False) -> PolygonFit:
    """The polygon whose corners ``mm`` (token millimetres, y down) the top-down view gave,
    with its sides fitted again on the photo itself (``_photo_sides``)."""
    # A side the photo shows no straight stroke along (bent at a corner merged away, or
    # spoilt) leaves the polygon in doubt; the corners found so far then stand.
    straight = 0.0
    for _ in range(2):  # the second time with the clear stretches the first fit shows
        again = _photo_sides(*photo, mm, hide, blurred)
        if again is None or np.abs(again[0] - mm).max() > PHOTO_FIT_MOVE_MM:
            break
        angles = _interior_angles(again[0])  # none when the refit crosses itself (a field seen at 70 degrees)
        if len(angles) != len(mm) or (np.abs(angles - 180) < STRAIGHT_DEG).any():
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


def shortest_side_dropped(polygon: PolygonFit, photo: tuple[np.ndarray, np.ndarray],
                           hide: np.ndarray | None, blurred: bool = False) -> PolygonFit | None:
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
    if corner is None or not _on_token(corner):
        return None
    merged = np.delete(v, (i + 1) % n, axis=0)
    merged[i if i + 1 < n else i - 1] = corner
    if len(_interior_angles(merged)) != n - 1:
        return None
    return replace(_photo_fit(merged, photo, hide, blurred), straight=False)


def _crowded_corners(v: np.ndarray, hide: np.ndarray | None) -> tuple[bool, ...]:
    """Per corner (``v``: token mm, y down) whether it ends a side a stack crowds: most of the
    side lies so near the stack (``hide``) that neither fit had clear ink along it (the
    clearance the fits keep, plus how far a profile looks), so its line rests on a short
    stretch and may lean, moving both its corners (an octagon beside a stack read 9.6 degrees
    out at two corners; an L-hexagon's short side under a chip, 30)."""
    if hide is None:
        return ()
    points = _along_sides(v, np.linspace(0, 1, 24))
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
