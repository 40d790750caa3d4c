"""Round outlines on a busy table: the board's edge broken out of the table's pattern.

On a patterned cloth or a striped table the board's edge touches the pattern's edges all
round, so the edge detector's curves run from the board's edge into the pattern and back; no
curve is the edge alone and no ellipse fitted through one is the board
(:func:`vision.equilibrix_edges.round_outlines` then finds only the pattern's blobs, and the photo
of a plainly visible board is refused). Where a curve leaves the board's edge for the pattern
it turns sharply, while the edge itself bends slowly: cut at those turns, the curves fall into
smooth arcs, and an ellipse through two arcs of the board's edge, far apart, is the edge,
which the edges then cover all round.

This search runs on every photo, and on every live frame, in which the whole-curve search
finds no board: above all on every frame without a board, while the live referee waits for
one. So it is kept cheap: all curves are cut in one pass of array operations, pairs of arcs
that cannot lie on one round outline are dropped before any fit (:func:`one_outline`), the
rest are fitted all at once (:func:`fit_ellipses`), scored all at once
(:meth:`OrientedEdges.cover_all`), and snapping looks only at the edge pixels in a band
round the ellipse (:meth:`OrientedEdges.snap`).
"""
from __future__ import annotations

import math

import cv2
import numpy as np

TURN_STEP = 4  # px: a curve's direction is taken over this many of its points
SHARP_TURN_DEG = 35.0  # a curve turning faster than this within TURN_STEP points leaves the outline
MIN_ARC = 0.06  # shortest arc kept, as a share of the photo's short side
ARCS_PAIRED = 40  # the longest arcs, paired with one another
SNAPPED = 24  # the best covered of their ellipses are snapped to the edges along them
MIN_SAGITTA = 1.0  # px: an arc bulging less off its chord is a straight edge (a stripe), not a board's
BULGE_SURE = 2.0  # px: an arc bulging this much off its chord shows on which side its outline lies
ACROSS_PX = 3.0  # px: how far past an arc's chord (on its bulge side) another arc of its outline may reach
PROBES = 32  # points per arc that say how far it reaches


def smooth_arcs(contours, short_side: int) -> list[np.ndarray]:
    """The curves cut where they turn sharply: the slowly bending stretches (N x 2 points each)
    at least ``MIN_ARC`` of the short side long, and bent (no stripe's straight edge), longest first.

    All curves are handled in one pass of array operations: a busy cloth has hundreds of
    them, and this runs on every photo (and live frame) in which the usual search finds no board."""
    shortest = max(2 * TURN_STEP + 1, int(MIN_ARC * short_side))
    curves = [c.reshape(-1, 2) for c in contours if len(c) >= shortest]
    if not curves:
        return []
    lengths = np.array([len(c) for c in curves])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    owner = np.repeat(np.arange(len(curves)), lengths)
    local = np.arange(len(owner)) - starts[owner]
    pts = np.vstack(curves).astype(np.float64)
    n = lengths[owner]
    ahead = pts[starts[owner] + (local + TURN_STEP) % n] - pts
    behind = pts - pts[starts[owner] + (local - TURN_STEP) % n]
    # The turn between the two directions exceeds SHARP_TURN_DEG (an angle of 0..180 degrees
    # whose sine is |cross| and cosine dot, over the same length) when
    # |cross| cos(limit) - dot sin(limit) > 0.
    cross = np.abs(ahead[:, 0] * behind[:, 1] - ahead[:, 1] * behind[:, 0])
    limit = math.radians(SHARP_TURN_DEG)
    sharp = cross * math.cos(limit) - (ahead * behind).sum(1) * math.sin(limit) > 0
    # Each curve read from its first sharp turn, so that no stretch wraps round its start
    # (a curve that never turns sharply is one stretch, read from its own start).
    first = np.full(len(curves), -1)
    hits = np.flatnonzero(sharp)
    first[owner[hits][::-1]] = local[hits][::-1]
    order = starts[owner] + (local + np.maximum(first[owner], 0)) % n
    pts, sharp = pts[order], sharp[order]
    # Stretches: maximal runs of smooth points within one curve (a curve with a sharp turn
    # starts with one, so no run spans two of them; a curve without is its own run).
    boundary = np.zeros(len(owner), bool)
    boundary[starts] = True
    begins = np.flatnonzero(~sharp & (boundary | np.roll(sharp, 1)))
    ends = np.flatnonzero(~sharp & (np.roll(boundary, -1) | np.roll(sharp, -1)))
    long = ends - begins + 1 >= shortest
    begins, ends = begins[long], ends[long]
    if not len(begins):
        return []
    # How far each stretch bulges off the chord between its ends (its sagitta, px).
    sizes = ends - begins + 1
    run_of = np.repeat(np.arange(len(begins)), sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    along = pts[np.arange(len(run_of)) - offsets[run_of] + begins[run_of]] - pts[begins][run_of]
    chord = pts[ends] - pts[begins]
    bulge = np.abs(chord[run_of, 0] * along[:, 1] - chord[run_of, 1] * along[:, 0])
    length = np.hypot(chord[:, 0], chord[:, 1])
    sagitta = np.maximum.reduceat(bulge, offsets) / np.maximum(length, 1e-9)
    arcs = [pts[b:e + 1] for b, e, bent in zip(begins, ends, sagitta >= MIN_SAGITTA) if bent]
    return sorted(arcs, key=len, reverse=True)


def paired_ellipses(arcs: list[np.ndarray], score, plausible) -> list[tuple]:
    """The SNAPPED ellipses best covered (``score``: of a list of ellipses), of those
    ``plausible`` as the board, through each of the longest arcs alone and through each pair
    of them that may lie on one outline (:func:`one_outline`): two stretches of one outline,
    apart, fix its ellipse. A busy table gives hundreds of pairs, so they are fitted all at
    once (:func:`fit_ellipses`)."""
    arcs = arcs[:ARCS_PAIRED]
    together = one_outline(arcs)
    pairs = [(i, j) for i in range(len(arcs)) for j in range(i, len(arcs)) if together[i, j]]
    fits = [e for e in fit_ellipses(arcs, pairs) if e is not None and plausible(e)]
    if not fits:
        return []
    return [fits[k] for k in np.argsort(-score(fits), kind="stable")[:SNAPPED]]


_MONOMIALS = [(p, q) for p in range(5) for q in range(5 - p)]  # x^p y^q up to the fourth order


def fit_ellipses(arcs: list[np.ndarray], pairs: list[tuple[int, int]]) -> list[tuple | None]:
    """OpenCV's ``fitEllipse`` through the points of each pair of arcs (an arc with itself:
    the arc alone), for all pairs at once; None where the points fix no ellipse.

    The least squares is OpenCV's, and so is the way the ellipse is stated (the same
    ellipses to about 1e-4 px): a conic ``A x^2 + B y^2 + C xy - D x - E y + 1 = 0`` about the
    points' mean gives the centre, then ``A, B, C`` are fitted again about that centre, and
    the axes follow from the sizes of the quadratic form's eigenvalues. Where those differ in
    sign the points lie along a hyperbola, on no one round outline (OpenCV still returns an
    ellipse there; here None). Both fits need only sums of x^p y^q (p + q <= 4) over the
    points about a centre: summed once per arc and moved to each pair's centre by the
    binomial theorem, hundreds of pairs cost what a few fits cost one by one."""
    if not pairs:
        return []
    allpts = np.vstack(arcs).astype(np.float32).astype(np.float64)  # OpenCV fits float32 points
    mid, spread = allpts.mean(0), max(float(allpts.std()), 1.0)  # well-conditioned coordinates
    x, y = ((allpts - mid) / spread).T
    starts = np.cumsum([0] + [len(a) for a in arcs[:-1]])
    xs, ys = [np.ones_like(x)], [np.ones_like(y)]
    for _ in range(4):
        xs.append(xs[-1] * x)
        ys.append(ys[-1] * y)
    sums = np.zeros((len(arcs), 5, 5))
    for p, q in _MONOMIALS:
        sums[:, p, q] = np.add.reduceat(xs[p] * ys[q], starts)
    i, j = np.array(pairs).T
    sums = sums[i] + np.where((i == j)[:, None, None], 0.0, sums[j])
    cx, cy = sums[:, 1, 0] / sums[:, 0, 0], sums[:, 0, 1] / sums[:, 0, 0]
    # The general conic about the points' mean.
    a, b, c, d, e = _least_squares(_about(sums, cx, cy), [(2, 0, -1), (0, 2, -1), (1, 1, -1), (1, 0, 1), (0, 1, 1)])
    det = 4 * a * b - c * c
    ok = np.abs(det) > 1e-12
    det = np.where(ok, det, 1.0)
    cx, cy = cx + (2 * b * d - c * e) / det, cy + (2 * a * e - c * d) / det
    # Its quadratic part again, about its centre.
    a, b, c = _least_squares(_about(sums, cx, cy), [(2, 0, 1), (0, 2, 1), (1, 1, 1)])
    vals, vecs = np.linalg.eigh(np.stack([np.stack([a, c / 2], -1), np.stack([c / 2, b], -1)], -2))
    ok &= (vals[:, 0] * vals[:, 1] > 0) & np.isfinite(vals).all(1)  # a hyperbola through them: no outline
    vals = np.abs(vals)  # as OpenCV: a form of one sign gives the axes whatever the sign
    half = spread / np.sqrt(np.where(ok[:, None], vals, 1.0))
    angle = np.degrees(np.arctan2(vecs[:, 1, 0], vecs[:, 0, 0]))
    # OpenCV's way of stating it (what is built on an ellipse follows its axes): the first
    # axis the shorter, its direction in 0..180 degrees.
    swap = half[:, 0] > half[:, 1]
    half[swap] = half[swap][:, ::-1]
    angle = np.mod(angle + 90.0 * swap, 180.0)
    cx, cy = mid[0] + spread * cx, mid[1] + spread * cy
    return [((float(cx[k]), float(cy[k])), (float(2 * half[k, 0]), float(2 * half[k, 1])), float(angle[k]))
            if ok[k] else None for k in range(len(pairs))]


def _about(sums: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Sums of x^p y^q (pairs x 5 x 5) moved to be about per-pair centres (cx, cy)."""
    out = np.zeros_like(sums)
    for p, q in _MONOMIALS:
        for r in range(p + 1):
            for s in range(q + 1):
                out[:, p, q] += math.comb(p, r) * math.comb(q, s) * (-cx) ** (p - r) * (-cy) ** (q - s) * sums[:, r, s]
    return out


def _least_squares(sums: np.ndarray, terms: list[tuple[int, int, int]]) -> np.ndarray:
    """Per pair, the coefficients of ``sum(sign * x^p y^q) = 1`` (terms: (p, q, sign)) that fit
    its points best, from the sums of x^p y^q (the normal equations); one row per term."""
    n = len(terms)
    lhs, rhs = np.empty((len(sums), n, n)), np.empty((len(sums), n))
    for k, (p, q, sign) in enumerate(terms):
        rhs[:, k] = sign * sums[:, p, q]
        for m, (p2, q2, sign2) in enumerate(terms):
            lhs[:, k, m] = sign * sign2 * sums[:, p + p2, q + q2]
    with np.errstate(invalid="ignore"):  # degenerate points (all on a line, or too few) give NaN sums
        singular = ~(np.abs(np.linalg.det(lhs)) >= 1e-300)
    lhs[singular] = np.eye(n)  # no fit there (caught as no ellipse)
    coef = np.linalg.solve(lhs, rhs[..., None])[..., 0]
    coef[singular] = np.nan
    return coef.T


def one_outline(arcs: list[np.ndarray]) -> np.ndarray:
    """Which pairs of arcs may be stretches of one round outline (a symmetric boolean matrix).
    The line through an arc's ends crosses a convex outline there and nowhere else, so the
    rest of the outline lies wholly on one side of it, the side away from the arc's bulge:
    an arc reaching across another's chord line, or past it on its bulge side, is of another
    outline (a cloth's blob, a plaid's crossing stripe). Only an arc bulging surely
    (BULGE_SURE) tells its side. On a busy table this drops most pairs before any ellipse is
    fitted through them."""
    n = len(arcs)
    together = np.ones((n, n), bool)
    if n < 2:
        return together
    # A few points per arc say where it lies: ACROSS_PX is wider than their spacing's effect.
    probes = [a[::max(1, len(a) // PROBES)] for a in arcs]
    owner = np.repeat(np.arange(n), [len(p) for p in probes])
    pts = np.vstack(probes)
    for i, a in enumerate(arcs):
        chord = a[-1] - a[0]
        length = math.hypot(*chord)
        if length < 1e-9:
            continue
        normal = np.array([-chord[1], chord[0]]) / length
        off = (a - a[0]) @ normal
        bulge = off[np.argmax(np.abs(off))]
        side = (pts - a[0]) @ normal
        high, low = np.full(n, -np.inf), np.full(n, np.inf)
        np.maximum.at(high, owner, side)
        np.minimum.at(low, owner, side)
        if abs(bulge) >= BULGE_SURE:
            far = (high if bulge > 0 else -low) > ACROSS_PX
        else:
            far = (high > ACROSS_PX) & (low < -ACROSS_PX)
        far[i] = False
        together[i, far] = together[far, i] = False
    return together


ORIENT_BINS = 8  # edge directions (mod 180 degrees) in bins of 22.5: a bin and its two neighbours agree
SNAP_PX = 3.0  # edge pixels this close to a candidate ellipse (and along it) refit it
SNAP_ROUNDS = 2


class OrientedEdges:
    """The edge pixels with their direction: an outline is covered only by edges running along
    it. A stripe that an ellipse crosses is an edge near it but across it, and a busy table
    puts such edges under almost any big ellipse."""

    def __init__(self, gx: np.ndarray, gy: np.ndarray, edges: np.ndarray):
        """``gx``, ``gy``: the photo's gradient; ``edges``: its edge pixels (non-zero)."""
        self.shape = edges.shape
        ys, xs = np.nonzero(edges)
        self.points = np.column_stack([xs, ys]).astype(np.float64)
        self.keys = ys.astype(np.int64) * edges.shape[1] + xs  # row-major: ascending
        self.bins = _bin(np.arctan2(gy[ys, xs], gx[ys, xs]))
        # Per pixel, a bit per direction bin of the edges within 2 px (a 5 x 5 square round it):
        # one byte per pixel, where a map per bin would take eight.
        bits = np.zeros(self.shape, np.uint8)
        bits[ys, xs] = np.left_shift(1, self.bins).astype(np.uint8)
        self.near = _spread(_spread(bits, 1), 0)
        each = np.left_shift(1, np.arange(ORIENT_BINS))
        # Per direction bin, the bits of the bins that agree with it: itself and its two neighbours.
        self.agree = (each | np.roll(each, 1) | np.roll(each, -1)).astype(np.uint8)

    def cover_all(self, ellipses: list[tuple], t: np.ndarray) -> np.ndarray:
        """Per ellipse (points at parameters ``t``), the share that edges running along it cover;
        points outside the photo count as uncovered. All at once: a busy table gives hundreds."""
        if not ellipses:
            return np.zeros(0)
        pts, normal = _points_normals_all(ellipses, t)
        xs, ys = np.round(pts[..., 0]).astype(int), np.round(pts[..., 1]).astype(int)
        h, w = self.shape
        inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        hit = np.zeros(xs.shape, bool)
        hit[inside] = (self.near[ys[inside], xs[inside]] & self.agree[_bin(normal)[inside]]) != 0
        return hit.sum(1) / len(t)

    def snap(self, ellipse):
        """The ellipse refitted through the edge pixels along it (within SNAP_PX, running its
        way), without those that lie off the refit: an ellipse through two short arcs is only
        roughly the outline they belong to."""
        for _ in range(SNAP_ROUNDS):
            _, (d1, d2), _ = ellipse
            if min(d1, d2) < 4 * SNAP_PX:
                return ellipse
            points, bins = self._around(ellipse, SNAP_PX / (min(d1, d2) / 2))
            u, v = ellipse_frame(ellipse, points)
            close = np.abs(np.hypot(u, v) - 1) * min(d1, d2) / 2 < SNAP_PX
            if close.sum() < 12:
                return ellipse
            _, normal = _points_normals(ellipse, np.arctan2(v[close], u[close]))
            agree = (bins[close] - _bin(normal)) % ORIENT_BINS
            along = (agree <= 1) | (agree == ORIENT_BINS - 1)
            if along.sum() < 12:
                return ellipse
            ellipse = cv2.fitEllipse(points[close][along].astype(np.float32))
        return ellipse

    def _around(self, ellipse, reach: float) -> tuple[np.ndarray, np.ndarray]:
        """The edge pixels (in their order) and their direction bins that may lie within
        ``reach`` of the ellipse (|r - 1| < reach, r its radius there, 1 on it): per row of the
        photo, the stretches between the ellipse grown and shrunk by ``reach`` (a pixel more),
        found by binary search in the pixels' row-major order. A dense pattern's edges inside
        and outside that band are never touched."""
        (cx, cy), (d1, d2), angle = ellipse
        h, w = self.shape
        a = math.radians(angle)
        ca, sa = math.cos(a), math.sin(a)
        grown = (1 + reach) / 2
        half_h = math.hypot(grown * d1 * sa, grown * d2 * ca) + 1
        rows = np.arange(max(0, math.floor(cy - half_h)), min(h - 1, math.ceil(cy + half_h)) + 1)
        lo, hi = _row_span(ellipse, 1 + reach, rows)
        inner_lo, inner_hi = _row_span(ellipse, 1 - reach, rows) if reach < 1 else (lo * np.nan, hi * np.nan)
        lo, hi = np.floor(lo) - 1, np.ceil(hi) + 1
        left_end, right_start = np.floor(inner_lo) + 1, np.ceil(inner_hi) - 1
        hollow = np.isfinite(left_end) & (right_start > left_end)  # rows crossing the inside
        left_end, right_start = np.where(hollow, left_end, hi), np.where(hollow, right_start, hi + 1)
        first = rows * w
        bounds = np.column_stack([first + np.clip(lo, 0, w), first + np.clip(left_end, -1, w - 1),
                                  first + np.clip(right_start, 0, w), first + np.clip(hi, -1, w - 1)])
        bounds = bounds[np.isfinite(lo) & np.isfinite(hi)].reshape(-1, 2)
        starts = np.searchsorted(self.keys, bounds[:, 0], "left")
        sizes = np.maximum(np.searchsorted(self.keys, bounds[:, 1], "right") - starts, 0)
        keep = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        return self.points[keep], self.bins[keep]


def _row_span(ellipse, scale: float, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each row of pixels (y = ``rows``) enters and leaves the ellipse scaled by
    ``scale`` about its centre (x, NaN where the row misses it)."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    ca, sa = math.cos(a), math.sin(a)
    ia, ib = 1 / (scale * d1 / 2) ** 2, 1 / (scale * d2 / 2) ** 2
    dy = rows - cy
    # (dx ca + dy sa)^2 ia + (-dx sa + dy ca)^2 ib = 1, a quadratic in dx.
    qa = ca * ca * ia + sa * sa * ib
    qb = 2 * dy * sa * ca * (ia - ib)
    qc = dy * dy * (sa * sa * ia + ca * ca * ib) - 1
    disc = qb * qb - 4 * qa * qc
    root = np.sqrt(np.where(disc >= 0, disc, np.nan))
    return cx + (-qb - root) / (2 * qa), cx + (-qb + root) / (2 * qa)


def _spread(bits: np.ndarray, axis: int) -> np.ndarray:
    """Each pixel's bits ORed with those of its neighbours within 2 px along ``axis``."""
    out = bits.copy()
    n = bits.shape[axis]
    for shift in (1, 2):
        ahead = [slice(None)] * 2
        behind = [slice(None)] * 2
        ahead[axis], behind[axis] = slice(shift, n), slice(0, n - shift)
        out[tuple(ahead)] |= bits[tuple(behind)]
        out[tuple(behind)] |= bits[tuple(ahead)]
    return out


def _bin(direction: np.ndarray) -> np.ndarray:
    """Direction bins of angles (radians), modulo 180 degrees (an edge's two sides alike)."""
    return (np.round(np.asarray(direction) / (np.pi / ORIENT_BINS)).astype(int)) % ORIENT_BINS


def ellipse_points(ellipse, t: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Points (N x 2) of an OpenCV ellipse, scaled about its centre, at parameter angles ``t``."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    ex, ey = scale * d1 / 2 * np.cos(t), scale * d2 / 2 * np.sin(t)
    return np.column_stack([cx + ex * math.cos(a) - ey * math.sin(a), cy + ex * math.sin(a) + ey * math.cos(a)])


def ellipse_frame(ellipse, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points (N x 2) in the ellipse's own unit frame (u, v): ``hypot(u, v)`` is 1 on the
    ellipse and ``arctan2(v, u)`` the parameter angle there."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    x, y = pts[:, 0] - cx, pts[:, 1] - cy
    return (x * math.cos(a) + y * math.sin(a)) / (d1 / 2), (-x * math.sin(a) + y * math.cos(a)) / (d2 / 2)


def ellipse_radius(ellipse, pts: np.ndarray) -> np.ndarray:
    """How far out points lie relative to the ellipse (1 on it)."""
    return np.hypot(*ellipse_frame(ellipse, pts))


def _points_normals_all(ellipses: list[tuple], t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_points_normals` of many ellipses: points (N x T x 2) and normal directions (N x T),
    computed by the same operations (the same values to the last bit)."""
    cx, cy, d1, d2 = (np.array(v, np.float64)[:, None] for v in zip(*((c[0], c[1], d[0], d[1])
                                                                     for c, d, _ in ellipses)))
    a = [math.radians(angle) for _, _, angle in ellipses]
    ca = np.array([math.cos(x) for x in a])[:, None]
    sa = np.array([math.sin(x) for x in a])[:, None]
    ex, ey = 1.0 * d1 / 2 * np.cos(t), 1.0 * d2 / 2 * np.sin(t)
    pts = np.stack([cx + ex * ca - ey * sa, cy + ex * sa + ey * ca], -1)
    nx, ny = np.cos(t) / (d1 / 2), np.sin(t) / (d2 / 2)
    return pts, np.arctan2(nx * sa + ny * ca, nx * ca - ny * sa)


def _points_normals(ellipse, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points of an OpenCV ellipse at parameters ``t`` and the direction of its normal there.
    The normal of (x/a)^2 + (y/b)^2 = 1 at (a cos t, b sin t) is (cos t / a, sin t / b)."""
    pts, normals = _points_normals_all([ellipse], t)
    return pts[0], normals[0]
