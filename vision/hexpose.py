"""Locate a hexagonal board and fit its cell lattice: photo -> `BoardPose` in hexgrid's frame.

Why not the square-grid finder (`vision.grid`): a hex board has no straight grid lines
crossing the whole board to vote for vanishing points. What it does have is a lattice of
ridges everywhere on the plate (they show through translucent pieces too), so:

1. *Find the plate*: band-pass energy at the cell scale marks the ridged region; the largest
   textured blob near the photo's middle, its convex hull simplified to six vertices, gives a
   first homography (the lattice's outer hexagon). Up is the side nearest the photo's top.
2. *Snap to the ridges*: in a top-down view, the gradient magnitude is matched against a
   drawn ridge map of the whole lattice (unique: the lattice's edge breaks the periodicity),
   then patch by patch; the patch shifts give point pairs for a homography plus one radial
   lens term (golden search), twice.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .errors import ReadError
from .hexgrid import EXTENT, LATTICE_RADIUS, NEIGHBOURS, axial_round, cells, centres, corner_points, edge_distance, hexagon
from .pose import BoardPose, Lens, apply_h, rectify

WORK_SIDE = 720  # the plate is found on a copy this large (long side)
FIT_PPU = 7.0  # top-down pixels per R while snapping to the ridges
ENERGY_SHARE = 0.35  # share of the Otsu cut that still counts as ridged
MIN_MATCH = 0.25  # normalised correlation with the ridge map below which there is no board
PATCH_R = 3.5  # half-size of a matching patch (R units)
SEARCH_R = 0.7  # how far a patch may move (R units)
RIM_WEIGHT = 1.5  # weight of 'no ridges on the rim' against 'ridges on the cells'
SHIFT_R = 0.8  # the outline puts the lattice within this much (R units): less than half a cell
SCALES = (0.94, 0.97, 1.0, 1.03, 1.06)  # board sizes tried against the outline's
RIDGE_ALONG = (-0.25, 0.0, 0.25)  # where each shared cell side is sampled along it (R units)
FLAT_OFF = 0.38  # off-ridge samples sit this far from the side, inside each cell (R units)


def _working(image: np.ndarray) -> tuple[np.ndarray, float]:
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    s = min(1.0, WORK_SIDE / max(gray.shape))
    if s < 1.0:
        gray = cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    return gray, s


def _plate_hexagon(gray: np.ndarray) -> np.ndarray:
    """Six photo points (clockwise, top-left first) around the ridged region, or ReadError."""
    g = gray.astype(np.float32)
    band = np.abs(cv2.GaussianBlur(g, (0, 0), 1.0) - cv2.GaussianBlur(g, (0, 0), 3.0))
    energy = cv2.GaussianBlur(band, (0, 0), 6.0)
    e8 = np.clip(energy * (255.0 / max(energy.max(), 1e-6)), 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(e8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # Otsu splits pieces' strong bevels from the rest; bare ridges are fainter but still far
    # above a plain table, so the cut is set well below it.
    mask = (e8 > max(ENERGY_SHARE * otsu, 3)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((9, 9), np.uint8))
    n, labels, stats, cent = cv2.connectedComponentsWithStats(mask)
    if n < 2:
        raise ReadError("no_board", "nothing with a board's ridged surface was found")
    h, w = gray.shape
    area = stats[1:, cv2.CC_STAT_AREA].astype(np.float64)
    off = np.hypot(cent[1:, 0] - w / 2, cent[1:, 1] - h / 2) / np.hypot(w, h)
    best = 1 + int(np.argmax(area * (1 - off)))
    if area[best - 1] < 0.08 * w * h:
        raise ReadError("no_board", "no region large enough to be a Gemblo board was found")
    pts = cv2.findContours((labels == best).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0]
    hull = cv2.convexHull(max(pts, key=cv2.contourArea))
    poly = _six_sides(hull[:, 0].astype(np.float64), gray.shape)
    if poly is None:
        raise ReadError("no_board", "the board's outline is not a hexagon")
    area_signed = np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
    if area_signed < 0:
        poly = poly[::-1]
    mids = (poly + np.roll(poly, -1, 0)) / 2
    return np.roll(poly, -int(np.argmin(mids[:, 1])), axis=0)


def _six_sides(hull: np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """A hexagon through a convex outline: its boundary points are grouped by tangent
    direction into six sides (circular k-means), a line is fitted to each and neighbouring
    lines are intersected. Rounded or clipped corners and small bumps do not move it much."""
    canvas = np.zeros(shape, np.uint8)
    cv2.fillPoly(canvas, [np.round(hull).astype(np.int32)], 1)
    contour = cv2.findContours(canvas, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0][:, 0].astype(np.float64)
    if len(contour) < 60:
        return None
    w = max(3, len(contour) // 120)
    tangent = np.roll(contour, -w, 0) - np.roll(contour, w, 0)
    angle = np.arctan2(tangent[:, 1], tangent[:, 0])
    centre = angle[0] + np.radians(np.arange(6) * 60.0)
    for _ in range(12):
        gap = np.angle(np.exp(1j * (angle[:, None] - centre[None])))
        side = np.argmin(np.abs(gap), 1)
        for k in range(6):
            if np.any(side == k):
                centre[k] += np.angle(np.mean(np.exp(1j * gap[side == k, k])))
    order = np.argsort(np.mod(centre - centre[0], 2 * np.pi))
    lines = []
    for k in order:
        mine = contour[side == k]
        if len(mine) < 5:
            return None
        lines.append(cv2.fitLine(mine.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel())
    verts = []
    for a, b in zip(lines, lines[1:] + lines[:1]):
        va, vb = np.array(a[:2]), np.array(b[:2])
        den = va[0] * vb[1] - va[1] * vb[0]
        if abs(den) < 1e-6:
            return None
        t = ((b[2] - a[2]) * vb[1] - (b[3] - a[3]) * vb[0]) / den
        verts.append(np.array(a[2:]) + t * va)
    return np.array(verts)


@lru_cache(maxsize=4)
def ridge_map(ppu: float) -> np.ndarray:
    """Drawn ridges of the 463-cell lattice in the top-down frame, negative where a lattice
    shifted by one cell would put ridges on the flat rim: that makes the match unique."""
    w, h = (int(round(e * ppu)) for e in EXTENT)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    x = (xs + 0.5) / ppu - EXTENT[0] / 2
    y = (ys + 0.5) / ppu - EXTENT[1] / 2
    q, r = axial_round(x, y)
    e, _ = edge_distance(x - 1.5 * q, y - np.sqrt(3) / 2 * (q + 2 * r))
    s = np.abs(q + 2 * r)
    on = (s <= 21) & (3 * np.abs(q) + s <= 42)
    # The notches of the zig-zag outline: flat rim that a lattice shifted by a cell would
    # cover with ridges (not further out: the plate's own edge is no evidence either way).
    rho = LATTICE_RADIUS + 1 - edge_distance(x / (LATTICE_RADIUS + 1), y / (LATTICE_RADIUS + 1))[0] \
        * (LATTICE_RADIUS + 1) / (np.sqrt(3) / 2)
    beyond = ~on & (s <= 23) & (3 * np.abs(q) + s <= 46) & (rho <= LATTICE_RADIUS + 1.3)
    return (np.exp(-(e / 0.2) ** 2) * (on - RIM_WEIGHT * beyond)).astype(np.float32)


def _edges(rect: np.ndarray) -> np.ndarray:
    g = rect.astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3))
    return np.sqrt(mag)  # compresses the plate's outer edge and piece bevels against the ridges


def _peak(score: np.ndarray) -> tuple[float, float, float]:
    """Sub-pixel (x, y) of a correlation maximum, and its value."""
    _, top, _, (x, y) = cv2.minMaxLoc(score)
    dx = dy = 0.0
    if 0 < x < score.shape[1] - 1:
        a, b, c = score[y, x - 1], score[y, x], score[y, x + 1]
        dx = 0.5 * (a - c) / min(a - 2 * b + c, -1e-9)
    if 0 < y < score.shape[0] - 1:
        a, b, c = score[y - 1, x], score[y, x], score[y + 1, x]
        dy = 0.5 * (a - c) / min(a - 2 * b + c, -1e-9)
    return x + dx, y + dy, float(top)


def _pose(board_to_undist: np.ndarray, size: tuple[int, int], k: float, quality: float, rms: float) -> BoardPose:
    h = board_to_undist / board_to_undist[2, 2]
    corners = Lens(size, k).distort(apply_h(h, corner_points()))
    return BoardPose(np.linalg.inv(h), corners, quality, size, EXTENT, k, rms)


def _global_shift(gray: np.ndarray, pose: BoardPose) -> tuple[BoardPose, float]:
    """Scale and move the lattice to lay the ridge map best on the photo's edges (the plate's
    rim width is not known exactly, so its outline only gives the size to a few per cent)."""
    pad = int(np.ceil(SHIFT_R * FIT_PPU))
    cx, cy = EXTENT[0] / 2, EXTENT[1] / 2
    best = None
    for scale in SCALES:
        zoom = np.array([[scale, 0, cx * (1 - scale)], [0, scale, cy * (1 - scale)], [0, 0, 1.0]])
        trial = BoardPose(zoom @ pose.homography, pose.corners, 0.0, pose.image_size, EXTENT, pose.distortion)
        rect = rectify(gray, trial, FIT_PPU, pad / FIT_PPU)
        x, y, top = _peak(cv2.matchTemplate(_edges(rect), ridge_map(FIT_PPU), cv2.TM_CCOEFF_NORMED))
        if best is None or top > best[0]:
            shift = np.array([x - pad, y - pad]) / FIT_PPU  # board units the lattice sits further on
            move = np.array([[1, 0, -shift[0]], [0, 1, -shift[1]], [0, 0, 1.0]])
            best = (top, BoardPose(move @ trial.homography, pose.corners, top, pose.image_size, EXTENT,
                                   pose.distortion))
    return best[1], best[0]


def _patch_pairs(gray: np.ndarray, pose: BoardPose) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(board points, photo points, weights) from matching lattice patches one by one."""
    pad = SEARCH_R + PATCH_R
    rect = _edges(rectify(gray, pose, FIT_PPU, pad))
    ridges = ridge_map(FIT_PPU)
    c = centres()
    anchors = c[np.hypot(*(c - np.array(EXTENT) / 2).T) <= LATTICE_RADIUS - 1.5]
    anchors = anchors[::7]
    board_pts, weights = [], []
    half, search = int(PATCH_R * FIT_PPU), int(SEARCH_R * FIT_PPU)
    for bx, by in anchors:
        tx, ty = int(round(bx * FIT_PPU)), int(round(by * FIT_PPU))
        tmpl = ridges[ty - half:ty + half, tx - half:tx + half]
        ox, oy = tx + int(pad * FIT_PPU), ty + int(pad * FIT_PPU)
        win = rect[oy - half - search:oy + half + search, ox - half - search:ox + half + search]
        if tmpl.shape != (2 * half, 2 * half) or win.shape != (2 * half + 2 * search,) * 2:
            continue
        x, y, top = _peak(cv2.matchTemplate(win, tmpl, cv2.TM_CCOEFF_NORMED))
        if top < 0.2:
            continue
        board_pts.append((bx + (x - search) / FIT_PPU, by + (y - search) / FIT_PPU, bx, by))
        weights.append(top)
    if len(board_pts) < 8:
        raise ReadError("no_board", "the board's cells could not be traced")
    arr = np.array(board_pts)
    # Where the ridges were seen (shifted board point) is the photo point of the lattice point.
    photo = pose.to_photo(arr[:, :2])
    return arr[:, 2:], photo, np.array(weights)


def _fit(board_pts: np.ndarray, photo: np.ndarray, size: tuple[int, int], quality: float) -> BoardPose:
    """Homography plus one radial lens term (golden search on k) through the point pairs."""
    def fit(k: float) -> tuple[float, np.ndarray]:
        und = Lens(size, k).undistort(photo)
        H, _ = cv2.findHomography(board_pts, und, cv2.LMEDS)
        if H is None:
            return np.inf, np.eye(3)
        err = np.linalg.norm(apply_h(H, board_pts) - und, axis=1)
        return float(np.median(err)), H

    lo, hi = -0.35, 0.15
    g = (np.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = fit(a)[0], fit(b)[0]
    for _ in range(14):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = fit(a)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = fit(b)[0]
    k = (lo + hi) / 2
    rms, H = fit(k)
    return _pose(H, size, k, quality, rms)


def locate(image: np.ndarray) -> BoardPose:
    """The hex board's pose in a BGR photo; ReadError("no_board") when there is none."""
    gray, s = _working(image)
    hexa = _plate_hexagon(gray)
    size = (gray.shape[1], gray.shape[0])
    model = hexagon(LATTICE_RADIUS + 2.0, (EXTENT[0] / 2, EXTENT[1] / 2))
    H = cv2.getPerspectiveTransform(model[[0, 1, 3, 4]].astype(np.float32), hexa[[0, 1, 3, 4]].astype(np.float32))
    pose = _pose(H, size, 0.0, 0.0, 0.0)
    pose, top = _global_shift(gray, pose)
    if top < MIN_MATCH:
        raise ReadError("no_board", "no hexagonal lattice of cells was found")
    for _ in range(2):
        board_pts, photo, weights = _patch_pairs(gray, pose)
        pose = _fit(board_pts, photo, size, float(np.median(weights)))
    full = (image.shape[1], image.shape[0])
    return pose.scaled(full[0] / size[0]) if s < 1.0 else pose


# --- a cheap check that a pose still fits a frame -------------------------------------------

@lru_cache(maxsize=1)
def _ridge_samples() -> tuple[np.ndarray, np.ndarray]:
    """Board points on the ridges between neighbouring cells, (edges, 3, 2), and beside them
    in the flat of each cell, (edges, 4, 2). Off-ridge points keep clear of the embossed marks (cell
    middle) and of a piece's bevel (next to the side)."""
    index = {c: i for i, c in enumerate(cells())}
    xy = centres()
    ridge, flat = [], []
    for (q, r), i in index.items():
        for dq, dr in NEIGHBOURS[:3]:
            j = index.get((q + dq, r + dr))
            if j is None:
                continue
            a, b = xy[i], xy[j]
            n = (b - a) / np.linalg.norm(b - a)
            t = np.array([-n[1], n[0]])
            mid = (a + b) / 2
            ridge.append([mid + s * t for s in RIDGE_ALONG])
            flat.append([mid + side * FLAT_OFF * n + s * t for side in (-1, 1) for s in (-0.2, 0.2)])
    return np.array(ridge), np.array(flat)


def _gradient_at(image: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sqrt of the brightness gradient's magnitude at photo points (bilinear, 1 px central
    differences over the summed channels), and whether each point lies inside the photo."""
    h, w = image.shape[:2]
    inside = (pts[:, 0] >= 1) & (pts[:, 0] <= w - 2) & (pts[:, 1] >= 1) & (pts[:, 1] <= h - 2)
    d = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.float32)
    probe = (pts[None].astype(np.float32) + d[:, None]).reshape(1, -1, 2)
    vals = cv2.remap(image, probe[..., 0], probe[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    vals = vals.reshape(4, len(pts), -1).astype(np.float32).sum(axis=2)
    return np.sqrt(np.hypot(vals[0] - vals[1], vals[2] - vals[3])), inside


def ridge_contrast(image: np.ndarray, pose: BoardPose) -> float:
    """How much stronger the brightness gradient is on the lattice's ridges, where ``pose``
    puts them, than in the flat of the cells beside them (about 1 where there is no lattice,
    or it is elsewhere). Lighting cancels out; a few thousand pixels are read."""
    ridge, flat = _ridge_samples()
    g_r, in_r = _gradient_at(image, pose.to_photo(ridge.reshape(-1, 2)))
    g_f, in_f = _gradient_at(image, pose.to_photo(flat.reshape(-1, 2)))
    seen = in_r.reshape(len(ridge), -1).all(1) & in_f.reshape(len(flat), -1).all(1)
    if seen.sum() < 0.25 * len(seen):
        return 0.0
    on = g_r.reshape(len(ridge), -1).mean(1)[seen]
    off = g_f.reshape(len(flat), -1).mean(1)[seen]
    return float(np.median(on) / max(np.median(off), 1e-3))
