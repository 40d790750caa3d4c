"""Find a square grid of n x n cells in a photo, without markers, to sub-pixel accuracy.

How, and why this way:

1. *Vanishing points* of the photo's line segments (:mod:`vision.lines`). A hand, a cup or
   loose pieces hide a few grid lines; hundreds of others still vote.
2. *Affine rectification*: sending the line through two vanishing points to infinity makes
   both line families parallel, so the board is only scaled and shifted per axis. Grid lines
   are then evenly spaced numbers on each axis.
3. *Comb fit* per axis: the spacing from the autocorrelation of line positions, then the
   window of n + 1 evenly spaced lines with the most support, plus its neighbours one cell
   either way (a board frame or a row of loose pieces can look like one more grid line).
4. *Grid evidence* decides between candidates and rejects photos without a board: in the
   top-down view every border between two cells must show an edge or groove stronger than
   the cell interiors next to it.
5. *Refinement*: the position of every cell border is measured in the top-down view, taken
   back to the photo, and one homography plus one radial lens coefficient is fitted to all of
   them (robust least squares). Iterated, so a lens-bent grid converges from a straight guess.
6. *Settling*: a board's grooves stop at its rim. A grid whose lines run on past one of its
   edges, or whose own outermost row shows none (it lies on the rim), is a cell or more off
   the board; it is moved by whole cells while that shows the grid more clearly, and refused
   if it still runs on (never read a cell off).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .errors import ReadError
from .lines import (Normaliser, Segments, detect_segments, family_of, lens_from_segments, refine_vp,
                    undistort, vanishing_points)
from .pose import MAX_VIEW_ANGLE_DEG, BoardPose, Lens, angle_refusal, apply_h, corner_points, rectify

WORK_SIDE = 1024  # localisation runs on the photo shrunk to this long side
MIN_SPACING_PX = 7.0  # cells smaller than this (at WORK_SIDE) are not worth finding
MIN_EVIDENCE = 0.3  # grid evidence below this: no board
CLEAR_EVIDENCE = 0.5  # a refined grid this clear is taken without refining other candidates
REFINED = 3  # at most this many candidates are refined
PHONE_FOCAL = 1.2  # a phone main camera's focal length in half-diagonals (about 80 degrees diagonal)
MIN_CROSSED = 25  # crossing segments per family before their tilt is believed
COARSER = (2,)  # multiples of the lines' strongest period tried when it shows no grid
# Line families told apart this finely (tolerance and removal width of a vanishing point, degrees;
# the usual are 1.5 and 4) when no coarser search shows a grid: a cloth's stripes lying a degree
# or two off the board's grooves merge with them into one family, whose vanishing point then
# serves neither, and the cloth's period wins the comb fit.
FINE_FAMILIES = {"tol_deg": 0.75, "remove_deg": 1.5}
RUNS_ON = 0.5  # a grid whose lines run on past an edge at this share of their contrast inside is off
ON_RIM = 0.45  # a grid whose own edge row shows its lines at under this share of their contrast inside lies on the rim
MAX_SETTLE = 10  # whole-cell moves tried on a grid whose edge lies on the board or on its rim (each must show
# the grid more clearly or put it on the board; a steep photo cutting the board off left the comb fit 5 rows off)
LENS_SEARCH = 0.1  # refinement searches the lens coefficient this far around the line-based guess


@dataclass(frozen=True)
class GridCandidate:
    """A board->photo homography (undistorted pixels), its lens, and how well a grid shows."""

    to_photo: np.ndarray
    k: float
    evidence: float


def working_image(image: np.ndarray, side: int = WORK_SIDE) -> tuple[np.ndarray, float]:
    """Grey image shrunk so the long side is ``side`` (never enlarged), and the factor.

    Its contrast is stretched (1st..99th percentile to 0..255): in a dim evening photo the
    grooves of empty cells are a few grey levels deep, below LSD's fixed gradient threshold.
    """
    h, w = image.shape[:2]
    factor = min(1.0, side / max(h, w))
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if factor < 1.0:
        gray = cv2.resize(gray, (round(w * factor), round(h * factor)), interpolation=cv2.INTER_AREA)
    lo, hi = np.percentile(gray[::4, ::4], [1, 99])
    if hi - lo < 1:
        return gray, factor
    lut = np.clip((np.arange(256, dtype=np.float32) - lo) * (255.0 / (hi - lo)), 0, 255).astype(np.uint8)
    return cv2.LUT(gray, lut), factor


def _pose(to_photo: np.ndarray, size: tuple[int, int], cells: int, k: float = 0.0) -> BoardPose:
    """A provisional pose (axes not yet in contract order) for measuring."""
    return BoardPose(np.linalg.inv(to_photo), apply_h(to_photo, corner_points((cells, cells))), 0.0,
                     size, (float(cells), float(cells)), k)


# --- candidates from vanishing points -------------------------------------------------------

def _affine_frame(v1: np.ndarray, v2: np.ndarray, scale: float) -> np.ndarray | None:
    """Normalised photo -> a frame where family 1 is horizontal and family 2 vertical."""
    horizon = np.cross(v1, v2)
    if abs(horizon[2]) < 1e-9 * np.linalg.norm(horizon):
        return None  # the horizon through the image centre: not a board in front of us
    hp = np.eye(3)
    hp[2] = horizon / horizon[2]
    d1, d2 = (hp @ v1)[:2], (hp @ v2)[:2]
    basis = np.column_stack([d1 / np.linalg.norm(d1), d2 / np.linalg.norm(d2)])
    if abs(np.linalg.det(basis)) < np.sin(np.deg2rad(20)):
        return None  # the families are nearly parallel: not two sides of a square
    a = np.eye(3)
    a[:2, :2] = np.linalg.inv(basis) * scale
    return a @ hp


def _in_frame(seg: Segments, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment ends in the frame (N x 2 each); NaN behind the horizon (not on the table)."""
    ha = np.column_stack([seg.a, np.ones(len(seg))]) @ frame.T
    hb = np.column_stack([seg.b, np.ones(len(seg))]) @ frame.T
    ok = ((ha[:, 2] > 0) & (hb[:, 2] > 0))[:, None]
    with np.errstate(all="ignore"):
        return np.where(ok, ha[:, :2] / ha[:, 2:], np.nan), np.where(ok, hb[:, :2] / hb[:, 2:], np.nan)


def _crossed(ends: tuple[np.ndarray, np.ndarray], other: tuple[np.ndarray, np.ndarray], axis: int) -> np.ndarray:
    """Whether each segment of one family meets (or nearly meets) one of the other family.

    A grid line is crossed by the perpendicular grid lines; wood grain, plank seams and the
    stripes of a cloth in one direction are not, and must not outvote the board.
    """
    (a, b), (c, d) = ends, other
    along, across = 1 - axis, axis  # a horizontal line (axis 1) runs along x
    lo, hi = np.minimum(a[:, along], b[:, along]), np.maximum(a[:, along], b[:, along])
    pos = 0.5 * (a[:, across] + b[:, across])
    olo, ohi = np.minimum(c[:, across], d[:, across]), np.maximum(c[:, across], d[:, across])
    opos = 0.5 * (c[:, along] + d[:, along])
    slack = 0.15 * (hi - lo) + 2.0
    oslack = 0.15 * (ohi - olo) + 2.0
    meet = ((opos[None] >= (lo - slack)[:, None]) & (opos[None] <= (hi + slack)[:, None])
            & (pos[:, None] >= (olo - oslack)[None]) & (pos[:, None] <= (ohi + oslack)[None]))
    return meet.any(1)


def _positions(ends: tuple[np.ndarray, np.ndarray], crossed: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Frame coordinate across a family's lines (axis 1: y of horizontals) and weights."""
    a, b = ends
    ok = np.isfinite(a).all(1) & np.isfinite(b).all(1)
    weight = np.abs(b[:, 1 - axis] - a[:, 1 - axis]) * np.where(crossed, 1.0, 0.1)
    return 0.5 * (a[ok, axis] + b[ok, axis]), weight[ok]


def _comb_fit(pos: np.ndarray, weight: np.ndarray, lines: int,
              multiple: int = 1) -> list[tuple[float, float]]:
    """(first line, spacing) of the best ``lines`` evenly spaced lines, and +-1 shifts.

    ``multiple``: the spacing is this many times the lines' strongest period. A pale board's
    faint grooves can lose to the edges of its pieces, whose lines may repeat most strongly
    every half cell.
    """
    if len(pos) < lines:
        return []
    lo, hi = np.percentile(pos, [0.5, 99.5])
    if not np.isfinite(hi - lo) or hi - lo < MIN_SPACING_PX * (lines - 1):
        return []
    step = max(0.5, (hi - lo) / 8000.0)
    lo -= 4 * step
    n = int((hi - lo) / step) + 8
    keep = (pos >= lo) & (pos < lo + n * step)
    hist = np.bincount(((pos[keep] - lo) / step).astype(int), weights=weight[keep], minlength=n)[:n]
    hist = cv2.GaussianBlur(hist.reshape(1, -1), (0, 0), sigmaX=max(1.0, 1.0 / step)).ravel()
    spec = np.fft.rfft(hist - hist.mean(), 2 * n)
    ac = np.fft.irfft(spec * np.conj(spec))[:n]
    lags = np.arange(MIN_SPACING_PX / step, n / (lines - 1.5), 0.25)
    if not len(lags):
        return []
    harmonics = np.arange(1, 9)
    score = sum(np.interp(lags * h, np.arange(n), ac, right=0.0) for h in harmonics)
    spacing = float(lags[int(np.argmax(score))]) * multiple
    teeth = np.arange(lines) * spacing
    slack = n - teeth[-1]  # negative when the comb is longer than the lines seen
    starts = np.arange(min(0.0, slack) - spacing, max(0.0, slack) + spacing, 0.5)
    comb = np.interp(starts[:, None] + teeth[None], np.arange(n), hist, left=0.0, right=0.0).sum(1)
    best = float(starts[int(np.argmax(comb))])
    # Fine-tune spacing and start together (the vanishing points are only approximate).
    sp = spacing * np.linspace(0.97, 1.03, 25)[:, None, None]
    s0 = best + spacing * np.linspace(-0.5, 0.5, 21)[None, :, None]
    fine = np.interp(s0 + sp * np.arange(lines), np.arange(n), hist, left=0.0, right=0.0).sum(2)
    i, j = np.unravel_index(int(np.argmax(fine)), fine.shape)
    sp, s0 = float(sp[i, 0, 0]), float(s0[0, j, 0])
    return [(lo + (s0 + d * sp) * step, sp * step) for d in (0, -1, 1)]


def _camera_tilt(v1: np.ndarray, v2: np.ndarray) -> float:
    """Angle (degrees) between the optical axis and the normal of the plane whose two line
    families meet at ``v1`` and ``v2``, for a typical phone lens.

    The horizon v1 x v2 of a plane seen by a camera of focal f is (n1, n2, n3 f) for the
    plane normal n; without the photo's focal length, a phone's main camera is assumed.
    """
    horizon = np.cross(v1, v2)
    normal = np.array([horizon[0], horizon[1], horizon[2] / PHONE_FOCAL])
    return float(np.degrees(np.arccos(min(1.0, abs(normal[2]) / np.linalg.norm(normal)))))


def candidates(gray: np.ndarray, cells: int, rng: np.random.Generator,
               multiple: int = 1, fine: bool = False) -> tuple[list[GridCandidate], float | None]:
    """Grid hypotheses in ``gray``'s pixels, best evidence first, and the camera tilt implied
    by the best-supported pair of crossing line families (None without one).

    ``multiple`` > 1: only the hypotheses where one or both axes have that multiple of the
    strongest period of their lines (see ``_comb_fit``), for when the usual ones show no grid.
    ``fine``: line families told apart by ``FINE_FAMILIES``, for the same case (a cloth whose
    stripes run nearly along the board's grooves).

    The lens is estimated first from the segments themselves (plumb lines), so the comb fit
    sees straight, evenly spaced lines even through a wide phone lens.
    """
    h, w = gray.shape
    seg, norm = detect_segments(gray, min_length=max(8.0, 0.01 * max(h, w)))
    families = FINE_FAMILIES if fine else {}
    vps = vanishing_points(seg, rng, count=4, **families)
    k = lens_from_segments(seg, [mask for _, mask in vps[:3]]) if len(vps) >= 2 else 0.0
    if k != 0.0:  # find the families again on straightened segments
        seg = undistort(seg, k)
        vps = vanishing_points(seg, rng, count=4, **families)
    to_pixels = np.linalg.inv(norm.matrix())

    def candidate(frame: np.ndarray, x0: float, sx: float, y0: float, sy: float) -> GridCandidate:
        to_photo = to_pixels @ np.linalg.inv(frame) @ np.array([[sx, 0, x0], [0, sy, y0], [0, 0, 1.0]])
        return GridCandidate(to_photo, k, evidence(gray, _pose(to_photo, (w, h), cells, k)))

    combs = []  # per pair of families: the frame and the row/column combs
    periods = ((multiple, 1), (1, multiple), (multiple, multiple)) if multiple > 1 else ((1, 1),)
    tilt, support = None, 0
    for i in range(len(vps)):
        for j in range(i + 1, len(vps)):
            frame = _affine_frame(vps[i][0], vps[j][0], norm.scale)
            if frame is None:
                continue
            fam_h, fam_v = seg.subset(vps[i][1]), seg.subset(vps[j][1])
            hor, ver = _in_frame(fam_h, frame), _in_frame(fam_v, frame)
            cross_h, cross_v = _crossed(hor, ver, 1), _crossed(ver, hor, 0)
            if cross_h.sum() >= 8 and cross_v.sum() >= 8:
                # Re-aim both vanishing points at the grid's own segments: a family may
                # have merged with wood grain or cloth stripes running the same way.
                # Then gather each family afresh around its new vanishing point.
                v1 = refine_vp(fam_h.subset(cross_h), fam_h.length[cross_h])
                v2 = refine_vp(fam_v.subset(cross_v), fam_v.length[cross_v])
                frame = _affine_frame(v1, v2, norm.scale)
                if frame is None:
                    continue
                fam_h, fam_v = seg.subset(family_of(seg, v1)), seg.subset(family_of(seg, v2))
                hor, ver = _in_frame(fam_h, frame), _in_frame(fam_v, frame)
                cross_h, cross_v = _crossed(hor, ver, 1), _crossed(ver, hor, 0)
                if min(cross_h.sum(), cross_v.sum()) > support:
                    tilt, support = _camera_tilt(v1, v2), min(cross_h.sum(), cross_v.sum())
            at_rows, at_cols = _positions(hor, cross_h, 1), _positions(ver, cross_v, 0)
            for row_multiple, col_multiple in periods:
                rows = _comb_fit(*at_rows, cells + 1, row_multiple)
                cols = _comb_fit(*at_cols, cells + 1, col_multiple)
                if rows and cols:
                    combs.append((frame, rows, cols, candidate(frame, *cols[0], *rows[0])))
    # The one-cell shifts only for the two most promising pairs: evidence is the costly part.
    combs.sort(key=lambda c: -c[3].evidence)
    found = [c[3] for c in combs]
    for frame, rows, cols, _ in combs[:2]:
        found += [candidate(frame, *col, *row) for row in rows for col in cols if (row, col) != (rows[0], cols[0])]
    return sorted(found, key=lambda c: -c.evidence), (tilt if support >= MIN_CROSSED else None)


# --- evidence -------------------------------------------------------------------------------

def _border_contrast(rect: np.ndarray, px: int, cells: int) -> np.ndarray:
    """Contrast of every cell border in a top-down view with a margin of one cell.

    Returns (2, cells + 1, cells + 2): family (0: borders x = k, 1: y = k), line k, and the
    band across it (-1 .. cells: the bands just outside the grid come first and last). The
    contrast compares the mean |gradient| on the line with that half a cell to either side,
    i.e. in the cells' interiors; 0 when the line is not there.
    """
    img = cv2.GaussianBlur(rect.astype(np.float32), (0, 0), 0.06 * px)
    grads = (np.abs(cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)), np.abs(cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)))
    at = np.round((np.arange(2 * cells + 3) * 0.5 + 0.5) * px).astype(int)  # -0.5, 0, 0.5 .. cells + 0.5
    at = np.clip(at, 1, rect.shape[0] - 2)
    starts = np.array([int((b + 1.2) * px) for b in range(-1, cells + 1)])
    stops = np.array([int((b + 1.8) * px) for b in range(-1, cells + 1)])
    out = []
    for family, g in enumerate(grads):
        g = g if family == 0 else g.T  # lines x = k run down the columns
        acc = np.vstack([np.zeros((1, g.shape[1]), np.float32), np.cumsum(g, axis=0)])
        band = (acc[stops] - acc[starts]) / (stops - starts)[:, None]  # bands x columns
        prof = (band[:, at - 1] + band[:, at] + band[:, at + 1]).T  # positions x bands
        on, mid = prof[1::2], prof[0::2]
        beside = 0.5 * (mid[:-1] + mid[1:])
        out.append(np.clip((on - beside) / (on + beside + 4.0), 0, 1))
    return np.stack(out)


def _seen(pose: BoardPose, size: tuple[int, int], cells: int) -> np.ndarray:
    """Which samples of :func:`_border_contrast` (family, line, band) lie in the photo (``size``:
    width, height). Beyond it the top-down view repeats the photo's last pixels: smears that
    neither show nor deny a groove."""
    line, band = np.meshgrid(np.arange(cells + 1, dtype=np.float64), np.arange(-1, cells + 1) + 0.5, indexing="ij")
    at = np.stack([line.ravel(), band.ravel()], 1)
    w, h = size
    seen = []
    for family in (0, 1):  # family 0: the lines x = k; family 1: y = k
        photo = pose.to_photo(at if family == 0 else at[:, ::-1])
        seen.append((photo[:, 0] >= 0) & (photo[:, 0] <= w - 1) & (photo[:, 1] >= 0) & (photo[:, 1] <= h - 1))
    return np.stack(seen).reshape(2, cells + 1, cells + 2)


def _mean_seen(contrast: np.ndarray, seen: np.ndarray) -> float:
    """The mean contrast of the samples in the photo (0 with none)."""
    return float(contrast[seen].mean()) if seen.any() else 0.0


def _band_means(contrast: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """(2 x bands) the mean contrast of each family's lines across each band, over those in the
    photo; NaN for a band with fewer than half its lines in the photo (it says nothing)."""
    shown = seen.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(seen, contrast, 0.0).sum(1) / shown
    return np.where(shown >= 0.5 * seen.shape[1], means, np.nan)


def edge_bands(gray: np.ndarray, pose: BoardPose, px: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """How strongly the grid's lines show just past each of its four edges, and across its own
    outermost rows and columns, each as a share of their mean contrast inside: two (2 x 2)
    arrays [family, end] (family 0: the lines x = k, at y < 0 and y > n; family 1: the lines
    y = k, at x < 0 and x > n).

    A board's grooves stop at its rim. A grid placed a cell off has one edge on the board's
    last row of cells, where every groove runs on past it (the first array high), and the
    other edge on the rim or the table, where no groove crosses its own last row (the second
    low). Where the board's far edge is cut off by the photo's (a tightly framed photo),
    nothing can run on past it and the second is the only sign. Bands beyond the photo are
    not counted (:func:`_seen`): an edge with fewer than half its lines in the photo says
    nothing (0 past it, 1 on it).
    """
    cells = int(round(pose.extent[0]))
    contrast = _border_contrast(rectify(gray, pose, px, margin=1.0), px, cells)
    seen = _seen(pose, gray.shape[1::-1], cells)
    inside = max(_mean_seen(contrast[:, :, 1:-1], seen[:, :, 1:-1]), 1e-6)
    bands = _band_means(contrast, seen) / inside
    return np.nan_to_num(bands[:, [0, -1]], nan=0.0), np.nan_to_num(bands[:, [1, -2]], nan=1.0)


def evidence(gray: np.ndarray, pose: BoardPose, px: int = 16) -> float:
    """How clearly a board's grid of cells shows at ``pose``, 0-1.

    The mean contrast of all cell borders, averaged with that of the weakest row or column:
    a hand over a few cells lowers the mean a little, while a grid one cell off (one row of
    "cells" on the board's rim or the table, with no borders across it) has a row near zero.
    A grid whose lines run on past its edges is a pattern (graph paper, a tiled cloth), not a
    board, and scores zero.

    Only what the photo shows counts (:func:`_seen`). Where the photo cuts the board off, the
    rows beyond it are smears of its edge: counted, they were the weakest row of the right grid
    and of one a cell off alike, and diluted the mean, so that a grid with its own edge row on
    the rim could score as well as the board's (a steep photo, 69 cells silently wrong).
    """
    cells = int(round(pose.extent[0]))
    contrast = _border_contrast(rectify(gray, pose, px, margin=1.0), px, cells)
    seen = _seen(pose, gray.shape[1::-1], cells)
    mean = _mean_seen(contrast[:, :, 1:-1], seen[:, :, 1:-1])
    if _mean_seen(contrast[:, :, [0, -1]], seen[:, :, [0, -1]]) > 0.5 * mean:
        return 0.0
    rows = _band_means(contrast, seen)[:, 1:-1]
    return 0.5 * (mean + (float(np.nanmin(rows)) if np.isfinite(rows).any() else 0.0))


def cell_borders(rect: np.ndarray, px: int, margin: float, cells: int) -> np.ndarray:
    """(cells x cells) how clearly each cell's four borders show, relative to a typical cell.

    ``rect``: a top-down view (``pose.rectify``, ``px`` per cell, ``margin`` cells of rim).
    Anything lying *on* the board (its own empty cells, the pieces with their bevels) shows
    the grid's grooves and edges at every cell border; a hand or a cup held *above* it hides
    them. Each cell gets the mean contrast of its four borders, divided by the median over
    the board (so a dim or blurred photo is measured against itself): about 1 for a cell
    seen clearly, near 0 for one whose borders are hidden.
    """
    gray = rect if rect.ndim == 2 else cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY)
    pad = max(0, int(round((1.0 - margin) * px)))  # the contrast wants one cell around the grid
    gray = cv2.copyMakeBorder(gray, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    contrast = _border_contrast(gray, px, cells)
    vertical, horizontal = contrast[0][:, 1:-1].T, contrast[1][:, 1:-1]  # [row, line] and [line, col]
    mean = 0.25 * (vertical[:, :-1] + vertical[:, 1:] + horizontal[:-1] + horizontal[1:])
    return mean / max(float(np.median(mean)), 1e-3)


# --- refinement -----------------------------------------------------------------------------

def _border_points(rect: np.ndarray, px: int, margin: float, cells: int) -> tuple[np.ndarray, ...]:
    """Sub-pixel position of every cell border in a top-down view.

    Returns board points (N x 2), line family (0: x = const, 1: y = const), line index and
    weight (peak height above the profile's floor).
    """
    img = cv2.GaussianBlur(rect.astype(np.float32), (0, 0), 0.05 * px)
    grads = (np.abs(cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)), np.abs(cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)))
    half = int(0.35 * px)
    offs = np.arange(-half, half + 1)
    pts, fam, idx, wts = [], [], [], []
    for family, g in enumerate(grads):
        # Average along each cell's middle (away from crossings), then profile across borders.
        g = g if family == 1 else g.T
        bands = np.stack([g[:, int((margin + c + 0.25) * px):int((margin + c + 0.75) * px)].mean(1)
                          for c in range(cells)], 1)  # (length across borders) x cells
        centres = np.round((np.arange(cells + 1) + margin) * px).astype(int)
        prof = bands[np.clip(centres[:, None] + offs[None], 0, len(bands) - 1)]  # lines x offs x cells
        peak = np.argmax(prof[:, 1:-1], axis=1) + 1
        li, ci = np.meshgrid(np.arange(cells + 1), np.arange(cells), indexing="ij")
        y0, y1, y2 = prof[li, peak - 1, ci], prof[li, peak, ci], prof[li, peak + 1, ci]
        den = y0 - 2 * y1 + y2
        sub = np.where(den < -1e-6, 0.5 * (y0 - y2) / np.where(den < -1e-6, den, -1.0), 0.0)
        across = (centres[li] + offs[peak] + sub) / px - margin
        along = ci + 0.5
        weight = np.maximum(y1 - np.median(prof, axis=1), 0.0)
        xy = np.stack([along, across], -1) if family == 1 else np.stack([across, along], -1)
        pts.append(xy.reshape(-1, 2))
        fam.append(np.full(li.size, family))
        idx.append(li.ravel())
        wts.append(weight.ravel())
    return np.concatenate(pts), np.concatenate(fam), np.concatenate(idx), np.concatenate(wts)


def _fit_homography(photo: np.ndarray, family: np.ndarray, index: np.ndarray, weight: np.ndarray,
                    norm: Normaliser) -> tuple[np.ndarray, np.ndarray]:
    """Photo->board homography putting each point on its line; returns (H, residuals).

    Linear in H: a point p on line x = j satisfies (h1 . p) - j (h3 . p) = 0. Three rounds of
    Tukey re-weighting drop borders mis-measured under a hand, a glare spot or a loose piece.
    """
    m = norm.matrix()
    p = np.column_stack([apply_h(m, photo), np.ones(len(photo))])
    rows = np.zeros((len(p), 9))
    on_x = family == 0
    rows[on_x, 0:3] = p[on_x]
    rows[~on_x, 3:6] = p[~on_x]
    rows[:, 6:9] = -index[:, None] * p
    w = weight.copy()
    g = np.eye(3)
    res = np.zeros(len(p))
    for _ in range(4):
        _, _, vt = np.linalg.svd(rows * np.sqrt(w)[:, None], full_matrices=False)
        g = vt[-1].reshape(3, 3) @ m
        board = apply_h(g, photo)
        res = np.where(on_x, board[:, 0], board[:, 1]) - index
        scale = max(1.4826 * np.median(np.abs(res[weight > 0])), 0.02)
        u = res / (4.685 * scale)
        w = weight * np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0)
    return g, res


def refine(image_gray: np.ndarray, to_photo: np.ndarray, cells: int, k: float = 0.0,
           reach: tuple[float, ...] = (0.6, 0.8, 1.0, 1.0), px: int = 24) -> tuple[np.ndarray, float, float]:
    """Refined (board->undistorted photo homography, lens k, RMS residual in cells).

    Grown from the middle: each round uses the borders within ``reach`` (share of the half
    board) of the centre, where a rough start is closest to the truth; a guess half a cell
    off at a lens-bent edge would otherwise pull the fit onto the wrong grooves there. The
    lens coefficient is only refitted once the whole board takes part.
    """
    h, w = image_gray.shape
    norm = Normaliser.for_size(w, h)
    rms = 1.0
    search = LENS_SEARCH
    for share in reach:
        pose = _pose(to_photo, (w, h), cells, k)
        rect = rectify(image_gray, pose, px, margin=0.5)
        board, family, index, weight = _border_points(rect, px, 0.5, cells)
        photo = pose.to_photo(board)
        ok = (weight > 0) & (np.abs(board - cells / 2).max(1) <= share * cells / 2 + 1e-6)
        photo, family, index, weight = photo[ok], family[ok], index[ok], weight[ok]

        def fit(k_try: float) -> tuple[float, np.ndarray]:
            g, res = _fit_homography(Lens((w, h), k_try).undistort(photo), family, index, weight, norm)
            inl = np.abs(res) < 0.25
            return float(np.sqrt(np.average(res[inl] ** 2, weights=weight[inl])) if inl.any() else 1.0), g

        if share >= 1.0:  # the lens shows at the edges: the middle alone would fit noise
            k = _golden(lambda kk: fit(kk)[0], k - search, k + search)
            search /= 3.0  # later rounds only polish
        rms, g = fit(k)
        to_photo = np.linalg.inv(g)
    return to_photo, k, rms


def _golden(f, lo: float, hi: float, iters: int = 10) -> float:
    """Minimum of a unimodal function on [lo, hi] (golden-section search)."""
    r = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = f(d)
    return (a + b) / 2


@dataclass(frozen=True)
class GridFit:
    """A located grid: board->undistorted photo homography, lens, evidence (0-1), RMS (cells)."""

    to_photo: np.ndarray
    k: float
    evidence: float
    rms: float


def find_grid(image: np.ndarray, cells: int, rng: np.random.Generator | None = None) -> GridFit:
    """Locate an n x n grid in a photo (any size; searched at WORK_SIDE, returned full size).

    Raises ReadError("no_board") when no candidate shows a grid.
    """
    rng = rng or np.random.default_rng(0)  # fixed: the same photo always reads the same
    gray, factor = working_image(image)
    h, w = gray.shape
    best = None
    # Refinement can rescue a rough candidate (vanishing points blurred by table texture),
    # so the few best are refined until one clearly shows the grid.
    # No grid at the lines' strongest period: try multiples of it, then finer line families.
    found, tilt = candidates(gray, cells, rng)
    for multiple, fine in ((1, False), *((m, False) for m in COARSER), (1, True)):
        if (multiple, fine) != (1, False):
            if best is not None and best[2] >= MIN_EVIDENCE:
                break
            found = candidates(gray, cells, rng, multiple, fine)[0]
        for cand in [c for c in found if c.evidence >= 0.5 * MIN_EVIDENCE][:REFINED]:
            to_photo, k, rms = refine(gray, cand.to_photo, cells, cand.k)
            ev = evidence(gray, _pose(to_photo, (w, h), cells, k))
            if best is None or ev > best[2]:
                best = (to_photo, k, ev, rms)
            if ev >= CLEAR_EVIDENCE:
                break
    if best is not None and best[2] >= MIN_EVIDENCE:
        best, runs_on = _settle(gray, best, cells)
        if runs_on > RUNS_ON:  # no whole-cell move lines it up with the board: not located
            raise ReadError("no_board", "the grid's lines run on past its edge: the board's outline is not "
                            "clear; take the photo again from above with the whole board and its rim in the frame")
    if (best is None or best[2] < MIN_EVIDENCE) and tilt is not None and tilt > MAX_VIEW_ANGLE_DEG:
        # A crossing grid of lines is there, too oblique to resolve into cells.
        raise angle_refusal(tilt, "the board seems to be seen about")
    if best is None or best[2] < MIN_EVIDENCE:
        raise ReadError("no_board", "no board was found in the photo; take it from above with "
                        "the whole board in the frame")
    to_photo, k, ev, rms = best
    to_full = np.array([[1 / factor, 0, 0.5 / factor - 0.5], [0, 1 / factor, 0.5 / factor - 0.5], [0, 0, 1]])
    return GridFit(to_full @ to_photo, k, ev, rms)


def _shifted(to_photo: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """The same grid moved by whole cells: board point (x, y) lands where (x + dx, y + dy) did."""
    return to_photo @ np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1.0]])


def _settle(gray: np.ndarray, fit: tuple, cells: int) -> tuple[tuple, float]:
    """A refined grid moved by whole cells until it lies on the board, and how strongly its
    lines still run on past its edges (:func:`edge_bands`, the largest).

    The comb fit may put its window of n + 1 lines a cell or two along the lines it saw
    (a rim, a row of loose pieces, a lens-bent edge look like more grid lines), and only
    its one-cell neighbours are tried. A grid off by a cell still scores well on the rows it
    shares with the board; what gives it away is one edge lying on the board's last cells,
    where the grooves run on (RUNS_ON), or its own last row lying on the rim (ON_RIM: the only
    sign where the photo's edge cuts the board's far edge off). Only such a grid is moved, a
    cell the way those signs point (:func:`_toward_board`), to the neighbour whose evidence is
    highest (the board's missing row shows borders, the rim row does not), refined there.

    The move is kept when it shows the grid more clearly, or when the moved grid lies on the
    board (:func:`_on_board`) and shows a grid at all. Where the photo cuts the board off,
    evidence is blind to the side cut off: a grid moved a row out that way loses nothing it
    can see, and the rows shown in part weigh on it as much as a cell's move (60 degrees of
    tilt: a grid a row off scored 0.863; moved a row further off, out the side cut off, 0.855;
    moved onto the board, 0.837 before refining). A grid whose lines still run on is refused
    whatever its evidence.
    """
    to_photo, k, ev, rms = fit
    h, w = gray.shape
    past, own = edge_bands(gray, _pose(to_photo, (w, h), cells, k))
    for _ in range(MAX_SETTLE):
        if _on_board(past, own):
            break
        moves = [(evidence(gray, _pose(_shifted(to_photo, dx, dy), (w, h), cells, k)), dx, dy)
                 for dx, dy in _toward_board(past, own)]
        top, dx, dy = max(moves)
        if top <= ev and not _on_board(*edge_bands(gray, _pose(_shifted(to_photo, dx, dy), (w, h), cells, k))):
            break  # no better, nor on the board: not worth refining
        moved, k_moved, rms_moved = refine(gray, _shifted(to_photo, dx, dy), cells, k)
        ev_moved = evidence(gray, _pose(moved, (w, h), cells, k_moved))
        past_moved, own_moved = edge_bands(gray, _pose(moved, (w, h), cells, k_moved))
        if ev_moved <= ev and not (_on_board(past_moved, own_moved) and ev_moved >= MIN_EVIDENCE):
            break
        to_photo, k, ev, rms, past, own = moved, k_moved, ev_moved, rms_moved, past_moved, own_moved
    return (to_photo, k, ev, rms), float(past.max())


def _on_board(past: np.ndarray, own: np.ndarray) -> bool:
    """Whether a grid with these :func:`edge_bands` lies on a board: no line runs on past an
    edge, and every edge row of its own shows its lines (none lies on the rim)."""
    return bool(past.max() <= RUNS_ON and own.min() >= ON_RIM)


def _toward_board(past: np.ndarray, own: np.ndarray) -> list[tuple[int, int]]:
    """The one-cell moves (dx, dy of :func:`_shifted`) a grid with these :func:`edge_bands` may
    need. Along an axis whose edges point one way (lines running on past an edge: the board
    goes on that way; an edge row of its own on the rim: the board lies the other way), that
    way; along one whose edges lie where a board's do, none: nothing says it is off, and where
    the photo cuts the board off, evidence cannot tell a move along it from none (it chose a
    diagonal move for 0.935 over the straight one's 0.934, and the grid ended a column off).
    Along one with signs both ways (a hand over an edge row), either way or none."""
    steps = []
    for family in (1, 0):  # the lines y = k end at x's edges (dx), the lines x = k at y's (dy)
        signs = {sign for sign, shows in ((-1, past[family, 0] > RUNS_ON), (1, past[family, 1] > RUNS_ON),
                                          (1, own[family, 0] < ON_RIM), (-1, own[family, 1] < ON_RIM)) if shows}
        steps.append([0] if not signs else sorted(signs) if len(signs) == 1 else [-1, 0, 1])
    return [(dx, dy) for dx in steps[0] for dy in steps[1] if dx or dy]


def quick_contrast(gray: np.ndarray, pose: BoardPose) -> float:
    """Cheap check that a grid still lies where ``pose`` says: about 0.5 if not, near 1 if so.

    Samples short profiles across every cell border and, as a control, across the middle of
    every cell (half a cell away). Grooves and piece edges make the borders stand out only
    while the pose is right; no rectification, so it costs a few milliseconds per frame.
    """
    cells = int(round(pose.extent[0]))
    index = np.arange(cells, dtype=np.float64)
    # Points on the borders x = i (three per cell side), and as the control x = i + 0.5.
    line, row, along = np.meshgrid(index, index, np.array([0.3, 0.5, 0.7]), indexing="ij")
    base = np.stack([line.ravel(), (row + along).ravel()], 1)
    scores = []
    for shift in (0.0, 0.5):
        values = []
        for swap in (False, True):  # both families: swap x and y
            pts = base + [shift, 0.0]
            profile = [pts + [d, 0.0] for d in (-0.3, 0.0, 0.3)]
            if swap:
                profile = [p[:, ::-1] for p in profile]
            photo = np.stack([pose.to_photo(p) for p in profile]).astype(np.float32)
            vals = cv2.remap(gray, photo[..., 0], photo[..., 1], cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REFLECT).astype(np.float32)
            left, mid, right = vals
            values.append(np.abs(2 * mid - left - right) + np.abs(right - left))
        scores.append(float(np.mean(values)))
    on, off = scores
    return on / (on + off + 1e-6)
