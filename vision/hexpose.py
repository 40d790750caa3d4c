"""Locate a hexagonal board and fit its cell lattice: photo -> `BoardPose` in hexgrid's frame.

Why not the square-grid finder (`vision.grid`): a hex board has no straight grid lines
crossing the whole board to vote for vanishing points. What it does have is a lattice of
ridges everywhere on the plate (they show through translucent pieces too), so:

1. *Find the plate*: band-pass energy at the cell scale, in units of the photo's noise and
   where gradients point every way (wood grain and stripes point one way), marks the ridged
   region; its outline simplified to six vertices gives a first homography. It may be a cell
   or two off at the rim (a shadow, a glare spot or a hand bends the outline).
2. *Trace the lattice*: from the middle outwards, patches of an endless drawn lattice are
   matched to the photo's edges in a top-down view and the pose refitted at each step
   (homography, then one radial lens term). The lattice repeats, so this fixes size, turn,
   perspective and lens, but not which cell is which. A hand over a corner skews the
   outline's homography until the tracing goes astray; then it starts again from a robust
   affine fit of the vertices that agree. A mug standing over the middle hides the first
   patches: the tracing then starts from the ring of cells round it.
3. *Register*: the lattice step at which the plate's straight edges lie all round at one
   distance beyond the cells (the lattice sits in its plate's middle), each side voting with
   its strongest edge only; when they do not agree, the step whose outer cells show walls
   and whose rim beyond does not.
4. *Refine*: the board's own ridge map, patch by patch, once more, and registered again by
   the plate. Where the plate does not place it and the board ends only faintly at its rim,
   the outline may have been far off and the step is sought again, further out.
5. *Check*: a lattice the plate's edges do not place and at whose rim the board does not end
   is placed by nothing: refused, never read cells off. A photo refused at the working size
   is searched once more, whole, on a larger copy (a board small in the frame).

Up is the plate side nearest the photo's top.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from itertools import combinations

import cv2
import numpy as np

from .errors import ReadError
from .hexgrid import (EXTENT, LATTICE_RADIUS, NEIGHBOURS, PLATE_RADIUS, axial_round, cells, centres, corner_points,
                      edge_distance, hexagon)
from .matching import correlation_peak, edge_strength, fit_with_lens, gradient_at, sample_at
from .pose import BoardPose, Lens, apply_h, rectify

WORK_SIDE = 720  # the plate is found on a copy this large (long side)
FAR_SIDE = 1080  # ... or this large, when no board is found at WORK_SIDE (a board far off, its cells small)
FIT_PPU = 7.0  # top-down pixels per R while snapping to the ridges
ENERGY_SHARE = 0.6  # share of the Otsu cut that still counts as ridged
BAND_SIGMA = (1.2, 3.0)  # band-pass at the ridges' scale (working pixels)
TEXTURE_SIGMA = 6.0  # neighbourhood over which ridge texture is pooled (working pixels)
OPEN_PX = 21  # blobs and lines thinner than this (working pixels) are not the lattice
MIN_MATCH = 0.4  # median correlation of the lattice patches below which there is no board
PATCH_R = 3.5  # half-size of a matching patch (R units)
SEARCH_R = 0.7  # how far a patch may move (R units)
RIM_WEIGHT = 1.5  # weight of 'no ridges on the rim' against 'ridges on the cells'
GROW_RADII = (6.0, 11.0, 16.0, LATTICE_RADIUS + 0.5)  # R: the lattice is traced out from the middle in these steps
GROW_PATCHES = 30  # patches matched at each step
WALL_ACROSS = (-0.2, -0.1, 0.0, 0.1, 0.2)  # R: where each wall is looked for, across it
PLATE_SEARCH = (19.3, 25.0)  # R: apothems where the plate's edge is looked for (the cells end at 19.05)
PLATE_APOTHEMS = np.arange(13.0, 31.0, 0.1)  # R: where plate edges are measured, steps included
PLATE_OFF = 0.5  # R: a plate middle this far off the lattice's at the best step is no evidence
PLATE_MISFIT = 0.3  # R: RMS misfit of the plate's edges beyond which they are not trusted
PLATE_SIDES = 4  # sides whose edges must place the lattice (three fix the middle and the rim, a fourth checks)
EDGE_SEEN = 0.15  # a side whose strongest edge is below this share of the strongest side's shows none
EDGE_FLOOR = 0.06  # share of the light on the board's cells: an edge weaker than this is no plate's edge (a
# plate's edge steps by 14 % of it or more; a side under a hand by about 1 %). A share, not grey levels: the step
# falls with the light, so a dim photo's edges (10-18 grey levels) are as plain as a bright one's
SIDE_OFF = 0.4  # R: a side's edge this far off the distance the others agree on is something beside the plate
PLATE_INSIDE = 1.0  # R: a side's strongest edge this far inside PLATE_SEARCH lies over the lattice's outer cells
REGISTER_STEPS = 3  # the traced lattice may be off by up to this many cells
WIDE_STEPS = 8  # ... and by this many when the plate's outline was far off
RIM_SUSPECT = 0.35  # the board's outer cells' walls over the ring beyond's (share of the cells'), below which
# the registration is sought again further out ...
RIM_GAIN = 0.0  # ... and the wider step taken unless the board ends there less plainly
RIDGES_FAINT = 2.0  # ridge contrast (:func:`ridge_contrast`) below which the ridges hardly show where the
# lattice puts them (good photos: mostly 2.1 and up, 1.9 over-sharpened; a lattice traced astray: about 1.3)
RIDGE_ALONG = (-0.25, 0.0, 0.25)  # where each shared cell side is sampled along it (R units)
FLAT_OFF = 0.38  # off-ridge samples sit this far from the side, inside each cell (R units)


def _working(image: np.ndarray, side: int = WORK_SIDE) -> tuple[np.ndarray, float]:
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    s = min(1.0, side / max(gray.shape))
    if s < 1.0:
        gray = cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    return gray, s


def _lattice_score(gray: np.ndarray) -> np.ndarray:
    """Where the photo looks like a lattice of ridges: band-pass energy at the cell scale, in
    units of the photo's own pixel noise, times how evenly the gradients point every way.

    A hex lattice has edges in three directions, so its smoothed structure tensor is nearly
    isotropic; wood grain, a striped cloth or a table's edge have one dominant direction, and
    a checked cloth's two directions have no six-fold order.
    Dividing by the noise keeps a dim, noisy photo's table from looking ridged."""
    g = gray.astype(np.float32)
    fine = cv2.GaussianBlur(g, (0, 0), BAND_SIGMA[0])
    band = fine - cv2.GaussianBlur(g, (0, 0), BAND_SIGMA[1])
    gx = cv2.Sobel(fine, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(fine, cv2.CV_32F, 0, 1)
    jxx, jyy, jxy = (cv2.GaussianBlur(v, (0, 0), TEXTURE_SIGMA) for v in (gx * gx, gy * gy, gx * gy))
    power = jxx + jyy + 1e-6
    coherence = np.sqrt((jxx - jyy) ** 2 + 4 * jxy ** 2) / power
    # Six-fold order: gradients at three directions 60 degrees apart agree in 6 x angle; a
    # checked cloth's two square directions cancel there, as an isotropic texture does.
    z = (gx + 1j * gy).astype(np.complex64)
    six = z ** 6 / (np.abs(z) ** 4 + 1e-6)
    sixfold = np.hypot(cv2.GaussianBlur(six.real.astype(np.float32), (0, 0), TEXTURE_SIGMA),
                       cv2.GaussianBlur(six.imag.astype(np.float32), (0, 0), TEXTURE_SIGMA)) / power
    noise = float(np.median(np.abs(g - cv2.GaussianBlur(g, (0, 0), 1.0)))) + 1e-3
    return cv2.GaussianBlur(np.abs(band), (0, 0), TEXTURE_SIGMA) / noise * (1 - coherence) * np.sqrt(sixfold)


def _plate_hexagon(gray: np.ndarray) -> np.ndarray:
    """Six photo points (clockwise, top-left first) around the ridged region, or ReadError."""
    score = _lattice_score(gray)
    s8 = np.clip(score * (255.0 / max(float(np.percentile(score, 99.5)), 1e-6)), 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(s8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # Otsu splits pieces' strong bevels from the rest; bare ridges are fainter but still far
    # above a table, so the cut is set below it.
    mask = (s8 > max(ENERGY_SHARE * otsu, 3)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((OPEN_PX, OPEN_PX), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((15, 15), np.uint8))
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
    """A hexagon through a convex outline: the outline is simplified until six vertices are
    left (any perspective keeps a hexagon's six sides straight, not their angles), then a
    line is fitted to the middle of each side and neighbouring lines are intersected, so
    rounded or clipped corners do not move the vertices."""
    canvas = np.zeros(shape, np.uint8)
    cv2.fillPoly(canvas, [np.round(hull).astype(np.int32)], 1)
    contour = cv2.findContours(canvas, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0][:, 0]
    if len(contour) < 60:
        return None
    perimeter = cv2.arcLength(contour.reshape(-1, 1, 2), True)
    lo, hi, six = 0.0, 0.2 * perimeter, None
    for _ in range(30):  # bisect the tolerance for exactly six vertices
        eps = (lo + hi) / 2
        approx = cv2.approxPolyDP(contour.reshape(-1, 1, 2), eps, True)[:, 0]
        if len(approx) > 6:
            lo = eps
        elif len(approx) < 6:
            hi = eps
        else:
            six = approx
            break
    if six is None:
        return None
    pts = contour.astype(np.float64)
    at = [int(np.argmin(np.hypot(*(pts - v).T))) for v in six]
    lines = []
    for a, b in zip(at, at[1:] + at[:1]):
        idx = np.arange(a, b if b > a else b + len(pts)) % len(pts)
        m = len(idx)
        mine = pts[idx[int(0.15 * m):max(int(0.85 * m), int(0.15 * m) + 2)]]
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
    x, y, q, r, e = _top_down_lattice(ppu)
    s = np.abs(q + 2 * r)
    on = (s <= 21) & (3 * np.abs(q) + s <= 42)
    # The notches of the zig-zag outline: flat rim that a lattice shifted by a cell would
    # cover with ridges (not further out: the plate's own edge is no evidence either way).
    rho = LATTICE_RADIUS + 1 - edge_distance(x / (LATTICE_RADIUS + 1), y / (LATTICE_RADIUS + 1))[0] \
        * (LATTICE_RADIUS + 1) / (np.sqrt(3) / 2)
    beyond = ~on & (s <= 23) & (3 * np.abs(q) + s <= 46) & (rho <= LATTICE_RADIUS + 1.3)
    return (np.exp(-(e / 0.2) ** 2) * (on - RIM_WEIGHT * beyond)).astype(np.float32)


@lru_cache(maxsize=2)
def lattice_map(ppu: float) -> np.ndarray:
    """Drawn ridges of an endless lattice in the top-down frame (as :func:`ridge_map`, with no
    outline): a patch of it fits the board wherever the lattice repeats, near the rim too."""
    return np.exp(-(_top_down_lattice(ppu)[4] / 0.2) ** 2).astype(np.float32)


def _top_down_lattice(ppu: float) -> tuple[np.ndarray, ...]:
    """Every pixel of the top-down frame at ``ppu`` pixels per unit: its board (x, y), the
    lattice cell (q, r) it lies in, and its distance from that cell's ridge."""
    w, h = (int(round(e * ppu)) for e in EXTENT)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    x = (xs + 0.5) / ppu - EXTENT[0] / 2
    y = (ys + 0.5) / ppu - EXTENT[1] / 2
    q, r = axial_round(x, y)
    e, _ = edge_distance(x - 1.5 * q, y - np.sqrt(3) / 2 * (q + 2 * r))
    return x, y, q, r, e


def _pose(board_to_undist: np.ndarray, size: tuple[int, int], k: float, quality: float, rms: float) -> BoardPose:
    h = board_to_undist / board_to_undist[2, 2]
    corners = Lens(size, k).distort(apply_h(h, corner_points()))
    return BoardPose(np.linalg.inv(h), corners, quality, size, EXTENT, k, rms)


@lru_cache(maxsize=4)
def _lattice_ext(rings: int) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, int], int]]:
    """Lattice positions out to ``rings`` beyond the board: (n, 2) axial cells, whether each
    is a board cell, and each cell's index."""
    ext = [(q, r) for q in range(-40, 41) for r in range(-40, 41)
           if abs(q + 2 * r) <= 21 + 2 * rings and 3 * abs(q) + abs(q + 2 * r) <= 42 + 4 * rings]
    arr = np.array(ext)
    on = (np.abs(arr[:, 0] + 2 * arr[:, 1]) <= 21) & (3 * np.abs(arr[:, 0]) + np.abs(arr[:, 0] + 2 * arr[:, 1]) <= 42)
    return arr, on, {c: i for i, c in enumerate(ext)}


def _cellness(gray: np.ndarray, pose: BoardPose, lattice: np.ndarray) -> np.ndarray:
    """How much each lattice position looks like a recessed cell: the gradient on the second
    weakest of its six walls. A flat rim or a table has no closed ring of walls; the plate's
    straight edge can fake one wall only."""
    xy = np.column_stack([1.5 * lattice[:, 0], np.sqrt(3) / 2 * (lattice[:, 0] + 2 * lattice[:, 1])])
    xy = xy + np.array(EXTENT) / 2
    ang = np.radians(np.arange(6) * 60.0 + 30.0)
    normal = np.column_stack([np.cos(ang), np.sin(ang)])
    along = np.column_stack([-normal[:, 1], normal[:, 0]])
    across = np.array(WALL_ACROSS)
    pts = (xy[:, None, None, None] + (np.sqrt(3) / 2 + across[None, None, None, :, None]) * normal[None, :, None, None]
           + np.array(RIDGE_ALONG)[None, None, :, None, None] * along[None, :, None, None])
    g, inside = gradient_at(gray, pose.to_photo(pts.reshape(-1, 2)))
    # the strongest across each wall (the traced lattice may be a little off), then along it
    walls = np.where(inside, g, 0.0).reshape(len(lattice), 6, len(RIDGE_ALONG), -1).max(axis=3).mean(axis=2)
    return np.sort(walls, axis=1)[:, 1]


def _steps(reach: int) -> list[tuple[int, int]]:
    """Lattice steps (dq, dr) of at most ``reach`` cells."""
    return [(dq, dr) for dq in range(-reach, reach + 1) for dr in range(-reach, reach + 1)
            if max(abs(dq), abs(dr), abs(dq + dr)) <= reach]


def _shift(step: tuple[int, int]) -> np.ndarray:
    """A lattice step in board units (R)."""
    return np.array([1.5 * step[0], np.sqrt(3) / 2 * (step[0] + 2 * step[1])])


def _moved(pose: BoardPose, step: tuple[int, int]) -> BoardPose:
    """The pose whose board cell (q, r) lies where ``pose`` has (q + dq, r + dr)."""
    x, y = _shift(step)
    return replace(pose, homography=np.array([[1, 0, -x], [0, 1, -y], [0, 0, 1.0]]) @ pose.homography)


class _Cellness:
    """Cellness (see :func:`_cellness`) of every lattice position out to ``rings`` beyond the
    board at a traced pose, over the board's median, and how each step of that lattice
    scores: the board's cells minus the ring just beyond them."""

    def __init__(self, gray: np.ndarray, pose: BoardPose, rings: int):
        self.lattice, self.on, self.index = _lattice_ext(rings)
        self.raw = _cellness(gray, pose, self.lattice)
        self.cell = np.clip(self.raw / max(float(np.median(self.raw[self.on])), 1e-6), 0, 1.5)

    def _at(self, values: np.ndarray, cells: np.ndarray, step: tuple[int, int]) -> np.ndarray:
        return values[[self.index[(q + step[0], r + step[1])] for q, r in cells]]

    def score(self, step: tuple[int, int]) -> float:
        rim = _rim_cells()[0]
        return float(self._at(self.cell, self.lattice[self.on], step).sum() - self._at(self.cell, rim, step).sum())

    def rim_contrast(self, step: tuple[int, int]) -> float:
        """How much more the board's outermost cells show walls than the ring just beyond them
        (medians per side, over the median of the board's cells at this step; the mean over
        the six sides). At the right step that is real cells against the plate's flat rim on
        every side; a step wrong by whole cells puts rim or table inside the board on one side
        and real cells beyond it on the other."""
        rim, rim_side, outer, outer_side = _rim_cells()
        board = max(float(np.median(self._at(self.raw, self.lattice[self.on], step))), 1e-6)
        inside, beyond = self._at(self.raw, outer, step) / board, self._at(self.raw, rim, step) / board
        return float(np.mean([np.median(inside[outer_side == k]) - np.median(beyond[rim_side == k])
                              for k in range(6)]))


@lru_cache(maxsize=1)
def _rim_cells() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lattice positions in the ring just beyond the board and the board's outermost
    cells, each with the side (0-5, clockwise from the top) it lies along."""
    lattice, on, index = _lattice_ext(1)

    def side(c: np.ndarray) -> np.ndarray:
        ang = np.degrees(np.arctan2(np.sqrt(3) / 2 * (c[:, 0] + 2 * c[:, 1]), 1.5 * c[:, 0]))
        return np.round((ang + 90.0) / 60.0).astype(int) % 6
    rim = lattice[~on]
    outer = np.array([c for c in lattice[on] if any(not on[index[(c[0] + dq, c[1] + dr)]] for dq, dr in NEIGHBOURS)])
    return rim, side(rim), outer, side(outer)


def _register(gray: np.ndarray, pose: BoardPose) -> BoardPose:
    """Which lattice step puts the board's cells where they are: the traced lattice may be
    off by whole cells (up to REGISTER_STEPS). At the right step the plate's edges lie all
    round at one distance beyond the cells (:class:`_Plate`). Where no step makes them agree
    (a hand or a cup over them), each step is scored by the cellness of the board's cells
    minus that of the ring just beyond them (flat rim in the right place); the interior is
    the same for every step."""
    steps = _steps(REGISTER_STEPS)
    plate = _Plate.seen(gray, pose)
    best = plate.best(steps)
    if not plate.agrees(best):
        best = max(steps, key=_Cellness(gray, pose, REGISTER_STEPS + 1).score)
    return _moved(pose, best)


def _rim_contrast(gray: np.ndarray, pose: BoardPose) -> float:
    """How plainly the board ends where this pose says (see _Cellness.rim_contrast)."""
    return _Cellness(gray, pose, 1).rim_contrast((0, 0))


def _refit(gray: np.ndarray, pose: BoardPose) -> BoardPose:
    """The pose fitted once more to the board's own ridge map, patch by patch (lens included)."""
    board_pts, photo, weights = _patch_pairs(gray, pose)
    return _fit(board_pts, photo, pose.image_size, float(np.median(weights)))


def _registered(gray: np.ndarray, grown: BoardPose) -> BoardPose:
    """The traced lattice registered (:func:`_register`) and refitted, and registered once more
    by the plate's edges around the refitted lattice (fitted to the board's own ridge map, it
    puts the plate's edges more sharply on its sides than the traced one). Where the plate's edges
    do not place it and the board ends only faintly at its rim (RIM_SUSPECT), the plate's
    outline may have been far off (a white board on a light table, a tilted photo whose bare
    half hardly shows its ridges) and the step more than REGISTER_STEPS cells: it is sought
    again by cellness alone out to WIDE_STEPS, refitted there, registered once more from that
    closer lattice, and taken when the plate's edges place it or the board ends there more
    plainly (RIM_GAIN; it is the same step when the first was right). A board read whole
    cells off would be wrong everywhere, silently."""
    pose = _refit(gray, _register(gray, grown))
    plate = _Plate.seen(gray, pose)
    if plate.agrees():
        return pose
    step = plate.best(_steps(REGISTER_STEPS))  # the refitted lattice's plate edges are sharper
    if plate.agrees(step):
        return _refit(gray, _moved(pose, step))
    contrast = _rim_contrast(gray, pose)
    if contrast < RIM_SUSPECT:
        step = max(_steps(WIDE_STEPS), key=_Cellness(gray, grown, WIDE_STEPS + 1).score)
        other = _refit(gray, _register(gray, _refit(gray, _moved(grown, step))))
        if _Plate.seen(gray, other).agrees() or _rim_contrast(gray, other) > contrast + RIM_GAIN:
            return other
    return pose


_NORMALS = np.column_stack([np.cos(np.radians(np.arange(6) * 60.0 - 90.0)),
                            np.sin(np.radians(np.arange(6) * 60.0 - 90.0))])  # outward, side 0 at the top


def _plate_edges(gray: np.ndarray, pose: BoardPose) -> np.ndarray:
    """(6, n) brightness step across each side's normal at the apothems PLATE_APOTHEMS of the
    pose's board frame (the median along the side's middle: the plate's edge is straight and
    steps the same way all along, a table's pattern or a ridge's zig-zag does not)."""
    along = np.linspace(-0.4, 0.4, 33) * LATTICE_RADIUS
    tangents = np.column_stack([-_NORMALS[:, 1], _NORMALS[:, 0]])
    pts = (np.array(EXTENT) / 2 + PLATE_APOTHEMS[None, :, None, None] * _NORMALS[:, None, None]
           + along[None, None, :, None] * tangents[:, None, None])
    probe = np.stack([pts - 0.12 * _NORMALS[:, None, None], pts + 0.12 * _NORMALS[:, None, None]])
    vals = sample_at(gray, pose.to_photo(probe.reshape(-1, 2))).reshape(2, 6, len(PLATE_APOTHEMS), len(along))
    return np.abs(np.median(vals[1] - vals[0], axis=2))


class _Plate:
    """Where the plate's edges lie around a traced lattice (:func:`_plate_edges`), and which
    lattice steps they agree with. A side *shows* the plate's edge when its strongest step
    is at least EDGE_SEEN of the strongest side's and EDGE_FLOOR of the light on the board's
    cells (a side under a hand, or where the plate matches the table, shows none and is left out). At a step, a
    side's edge is its strongest step within PLATE_SEARCH beyond the moved lattice's cells;
    it is *placed* when that is the side's strongest step anywhere. The placed sides must put
    the plate's middle on the lattice's (PLATE_OFF) at one distance all round (PLATE_MISFIT);
    a side or two off that distance by more than SIDE_OFF (a straight box or phone lying beside
    it, a patterned table's lines beyond two opposite sides) are dropped, whichever leave the most
    sides fitting, and count as not placed. The step agrees when at least PLATE_SIDES sides are
    placed and fit. Of the steps that agree, the one with the fewest sides showing their edge
    over the lattice's cells is taken (:meth:`inside`): four sides may agree by chance at a wrong
    step (a table's lines on two sides, the plate's own edges on two others), but there the
    plate's edge on the remaining sides lies where the board still has cells. The rim's width
    is not needed, only that the lattice sits in the middle of its plate. A lattice whole cells
    off moves the edge out of some sides' search (those are then not placed) and the middle off
    the lattice's, by the whole cells, on the others; a side whose strongest edge is something
    else (a hand's, a box's) is not placed at any step and simply does not count."""

    def __init__(self, edges: np.ndarray, light: float):
        """``edges``: :func:`_plate_edges`; ``light``: the median brightness at the lattice's
        cell centres, pieces included (the light on the board: a board half covered with dark
        pieces lowers it, and so lowers the floor, which only lets fainter edges count)."""
        self.edges = edges
        self.strongest = self.edges.max(axis=1)
        self.shows = (self.strongest >= EDGE_SEEN * self.strongest.max()) & (self.strongest >= EDGE_FLOOR * light)
        self._centres: dict[tuple[int, int], tuple[np.ndarray, float, int]] = {}

    @classmethod
    def seen(cls, gray: np.ndarray, pose: BoardPose) -> "_Plate":
        """The plate round the lattice ``pose`` puts in the photo ``gray``."""
        return cls(_plate_edges(gray, pose), float(np.median(sample_at(gray, pose.to_photo(centres())))))

    def centre(self, step: tuple[int, int]) -> tuple[np.ndarray, float, int]:
        """The plate's middle (R units from the lattice moved by ``step``), the RMS misfit of
        the placed sides' edges, and how many sides are placed."""
        if step not in self._centres:
            self._centres[step] = self._fit(step)
        return self._centres[step]

    def _fit(self, step: tuple[int, int]) -> tuple[np.ndarray, float, int]:
        offset = _shift(step)
        d, placed = np.zeros(6), np.zeros(6, bool)
        for k, n in enumerate(_NORMALS):
            rel = PLATE_APOTHEMS - float(offset @ n)  # apothems seen from the moved lattice
            window = (rel >= PLATE_SEARCH[0]) & (rel <= PLATE_SEARCH[1])
            if not window.any():  # a step so far off that this side's search leaves the samples
                continue
            j = int(np.argmax(self.edges[k][window]))
            d[k] = rel[window][j]
            placed[k] = self.shows[k] and self.edges[k][window][j] >= self.strongest[k]
        sides = np.flatnonzero(placed)
        if len(sides) < 3:
            return np.full(2, np.inf), np.inf, len(sides)
        # The most sides at one distance all round (each within SIDE_OFF), down to PLATE_SIDES:
        # a side or two whose strongest edge is a box's or a table's line beside the plate are
        # dropped, whichever they are. None such: all of them, misfit and all.
        fits = [_plate_fit(d, list(subset)) for size in range(len(sides), min(PLATE_SIDES, len(sides)) - 1, -1)
                for subset in combinations(sides, size)]
        fitting = [f for f in fits if f[3] <= SIDE_OFF]
        middle, misfit, count, _ = max(fitting, key=lambda f: (f[2], -f[1])) if fitting else fits[0]
        return middle, misfit, count

    def inside(self, step: tuple[int, int]) -> int:
        """How many sides that show the plate's edge have it (their strongest edge) over the
        outer cells of the lattice moved by ``step`` (PLATE_INSIDE within the cells' end): the
        plate cannot end where the board still has cells, so such a step is wrong by whole
        cells, unless that edge is a hand's or a cast shadow's."""
        offset = _shift(step)
        strongest = PLATE_APOTHEMS[np.argmax(self.edges, axis=1)] - _NORMALS @ offset
        return int((self.shows & (strongest < PLATE_SEARCH[0] - PLATE_INSIDE)).sum())

    def best(self, steps: list[tuple[int, int]]) -> tuple[int, int]:
        """A step that agrees, with the fewest sides whose edge lies over its cells
        (:meth:`inside`); else the one with the most sides placed; then the plate's middle
        nearest and fitting best."""
        def rank(step: tuple[int, int]) -> tuple[bool, int, int, float]:
            middle, misfit, placed = self.centre(step)
            agrees = self.agrees(step)
            return not agrees, self.inside(step) if agrees else 0, -placed, float(np.hypot(*middle)) + misfit
        return min(steps, key=rank)

    def agrees(self, step: tuple[int, int] = (0, 0)) -> bool:
        """Do the plate's edges place the lattice moved by ``step``?"""
        middle, misfit, placed = self.centre(step)
        return placed >= PLATE_SIDES and misfit <= PLATE_MISFIT and float(np.hypot(*middle)) <= PLATE_OFF


def _plate_fit(apothems: np.ndarray, sides: list[int]) -> tuple[np.ndarray, float, int, float]:
    """The plate's middle and distance through these sides' edges (least squares): the middle,
    the RMS misfit, how many sides and the largest misfit of one."""
    A = np.column_stack([np.ones(6), _NORMALS])[sides]
    sol, *_ = np.linalg.lstsq(A, apothems[sides], rcond=None)
    res = np.abs(A @ sol - apothems[sides])
    return sol[1:], float(np.sqrt(np.mean(res ** 2))), len(sides), float(res.max())


def _patch_pairs(gray: np.ndarray, pose: BoardPose, radius: float = LATTICE_RADIUS - 1.5,
                 patches: int = 66, endless: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(board points, photo points, weights) from matching lattice patches one by one: about
    ``patches`` of them, centred on cells within ``radius`` of the board's centre; drawn from
    the board's ridge map, or from an ``endless`` lattice's (blind to the outline)."""
    pad = SEARCH_R + PATCH_R
    rect = edge_strength(rectify(gray, pose, FIT_PPU, pad))
    ridges = lattice_map(FIT_PPU) if endless else ridge_map(FIT_PPU)
    c = centres()
    anchors = c[np.hypot(*(c - np.array(EXTENT) / 2).T) <= radius]
    anchors = anchors[::max(1, len(anchors) // patches)]
    board_pts, weights = [], []
    half, search = int(PATCH_R * FIT_PPU), int(SEARCH_R * FIT_PPU)
    for bx, by in anchors:
        tx, ty = int(round(bx * FIT_PPU)), int(round(by * FIT_PPU))
        tmpl = ridges[ty - half:ty + half, tx - half:tx + half]
        ox, oy = tx + int(pad * FIT_PPU), ty + int(pad * FIT_PPU)
        win = rect[oy - half - search:oy + half + search, ox - half - search:ox + half + search]
        if tmpl.shape != (2 * half, 2 * half) or win.shape != (2 * half + 2 * search,) * 2:
            continue
        x, y, top = correlation_peak(cv2.matchTemplate(win, tmpl, cv2.TM_CCOEFF_NORMED))
        if top < 0.2:
            continue
        # the ridge map draws its pixel j at board (j + 0.5) / FIT_PPU, the top-down view at j / FIT_PPU
        board_pts.append((bx + (x - search - 0.5) / FIT_PPU, by + (y - search - 0.5) / FIT_PPU, bx, by))
        weights.append(top)
    if len(board_pts) < 8:
        raise ReadError("no_board", "the board's cells could not be traced")
    arr = np.array(board_pts)
    # Where the ridges were seen (shifted board point) is the photo point of the lattice point.
    photo = pose.to_photo(arr[:, :2])
    return arr[:, 2:], photo, np.array(weights)


def _grow(gray: np.ndarray, pose: BoardPose) -> BoardPose:
    """Trace the lattice from the board's middle outwards (GROW_RADII), refitting the pose at
    each step, the lens at the last. The outline's pose may be a cell or two off at the rim
    (a shadow, a glare spot or a hand bends the outline), but in the middle it is close; and
    the patches are cut from an endless lattice, so this fixes the lattice's size, turn,
    perspective and lens, not which cell is which: :func:`_register` settles that.

    A mug set down in the board's middle hides the whole first disc (6 R: its 7 cm foot alone
    reaches 5 R from its centre, its rim and side further), and nothing of the lattice shows
    there to match. The plate's outline round it is whole, so the outline's pose is as close
    over the next disc, and the tracing starts there, from the ring of cells that shows round
    the mug (a homography: LMEDS sets aside patches matched on the mug's rim). Only the first
    disc may be passed over: a lattice that does not show beyond it either is no lattice."""
    size = pose.image_size
    for k, radius in enumerate(GROW_RADII):
        try:
            board_pts, photo, weights = _patch_pairs(gray, pose, radius, GROW_PATCHES, endless=True)
        except ReadError:
            if k > 0 or len(GROW_RADII) == 1:
                raise
            continue  # the middle hidden (a mug standing on it): traced from the next disc, round it
        if k == len(GROW_RADII) - 1:
            return _fit(board_pts, photo, size, float(np.median(weights)))
        if k == 0:  # a small patch of lattice: an affine map, its perspective not yet known
            A, _ = cv2.estimateAffine2D(board_pts.astype(np.float32), photo.astype(np.float32), method=cv2.LMEDS)
            H = None if A is None else np.vstack([A, [0.0, 0.0, 1.0]])
        else:
            H, _ = cv2.findHomography(board_pts, photo, cv2.LMEDS)
        if H is None:
            raise ReadError("no_board", "the board's cells could not be traced")
        pose = _pose(H, size, 0.0, float(np.median(weights)), 0.0)
    return pose


def _fit(board_pts: np.ndarray, photo: np.ndarray, size: tuple[int, int], quality: float) -> BoardPose:
    """The board's pose with one radial lens term through the matched patches."""
    H, k, rms = fit_with_lens(board_pts, photo, size)
    return _pose(H, size, k, quality, rms)


def _upright(pose: BoardPose) -> BoardPose:
    """The pose turned by the multiple of 60 degrees that puts the plate side nearest the
    photo's top at the top of the board frame (the lattice is six-fold symmetric, so tracing
    it may have settled on any of its turns). Judged at the plate's own sides (PLATE_RADIUS),
    as the synthetic truth is: seen steeply with a corner up, the two top sides lie within a
    pixel of level, and the midpoints of a smaller hexagon (the lattice's rim, a cell further
    in) put the other one higher (56 and 58 degrees of tilt: the board read turned 60 degrees)."""
    sides = hexagon(PLATE_RADIUS, (EXTENT[0] / 2, EXTENT[1] / 2))
    mids = pose.to_photo((sides + np.roll(sides, -1, axis=0)) / 2)
    k = int(np.argmin(mids[:, 1]))
    if k == 0:
        return pose
    a = np.radians(-60.0 * k)  # side k of the old frame becomes side 0
    c, s = np.cos(a), np.sin(a)
    cx, cy = EXTENT[0] / 2, EXTENT[1] / 2
    turn = np.array([[c, -s, cx - c * cx + s * cy], [s, c, cy - s * cx - c * cy], [0.0, 0.0, 1.0]])
    return _pose(np.linalg.inv(turn @ pose.homography), pose.image_size, pose.distortion, pose.quality,
                 pose.residual)


def locate(image: np.ndarray) -> BoardPose:
    """The hex board's pose in a BGR photo; ReadError("no_board") when there is none.

    A board far from the camera has cells so small at WORK_SIDE that its bare ridges fall
    below the cut the pieces' bevels set (no plate shows), or a busy table's pattern outdoes
    them (the outline found is the table's), or blur and JPEG leave too little of them to
    trace or place: any photo refused at WORK_SIDE is sought again, whole, on a larger copy
    (FAR_SIDE), which costs time on every photo it is tried on (a photo without a board)."""
    gray, s = _working(image)
    try:
        return _located(image, gray, s)
    except ReadError:
        near, t = _working(image, FAR_SIDE)
        if t <= s:
            raise
        return _located(image, near, t)


def _located(image: np.ndarray, gray: np.ndarray, s: float) -> BoardPose:
    """:func:`locate` on the working copy ``gray`` (``image`` at scale ``s``)."""
    pose = _upright(_traced(gray, _plate_hexagon(gray)))
    if pose.quality < MIN_MATCH:
        raise ReadError("no_board", "no hexagonal lattice of cells was found")
    _check_placed(gray, pose)
    return pose.scaled(image.shape[1] / gray.shape[1]) if s < 1.0 else pose


def _traced(gray: np.ndarray, hexa: np.ndarray) -> BoardPose:
    """The lattice traced and registered from the plate's outline. The outline's homography
    through all six vertices is right when the whole plate shows; a hand over a corner cuts
    that corner off the ridged region, one vertex lands far off and the homography is skewed
    enough in the middle that the tracing starts astray (its ridges then hardly show where it
    puts them, RIDGES_FAINT) or finds no cells. Only then is the lattice traced again from an
    affine map that a robust fit puts through the vertices that agree (LMEDS: a hexagon's six
    vertices are nearly affine in a phone photo), and the lattice the plate's edges place
    (:class:`_Plate`) is kept, else the one whose ridges show more. A start whose first disc finds
    no cells is not ended there (:func:`_grow` goes on from the next disc, as round a mug): it
    is the ranking that sets a skewed start aside then."""
    size = (gray.shape[1], gray.shape[0])
    model = hexagon(LATTICE_RADIUS + 2.0, (EXTENT[0] / 2, EXTENT[1] / 2))
    H, _ = cv2.findHomography(model, hexa, 0)  # all six vertices: least squares
    A, _ = cv2.estimateAffine2D(model.astype(np.float32), hexa.astype(np.float32), method=cv2.LMEDS)
    best, rank, failure = None, (False, -np.inf), None
    for start in (H, None if A is None else np.vstack([A, [0.0, 0.0, 1.0]])):
        if start is None or rank[1] >= RIDGES_FAINT:
            continue
        try:
            pose = _registered(gray, _grow(gray, _pose(start, size, 0.0, 0.0, 0.0)))
        except ReadError as e:
            failure = e
            continue
        if (r := (_Plate.seen(gray, pose).agrees(), ridge_contrast(gray, pose))) > rank:
            best, rank = pose, r
    if best is None:
        raise failure or ReadError("no_board", "the board's cells could not be traced")
    return best


def _check_placed(gray: np.ndarray, pose: BoardPose) -> None:
    """ReadError("no_board") when nothing tells which cell is which: the plate's edges do not
    place the lattice (:class:`_Plate`) and the board does not end plainly at its rim
    (RIM_SUSPECT). Such a lattice (a faint one under a shadow or a lens's colour fringes, or a
    board with a hand or a cup over its edges) may be registered whole cells off, where every
    cell would be read from another's place, silently."""
    if not _Plate.seen(gray, pose).agrees() and (contrast := _rim_contrast(gray, pose)) < RIM_SUSPECT:
        raise ReadError("no_board", "the board's edge does not show round enough of the board, nor do its outer "
                        f"cells end plainly at its rim (contrast {contrast:.2f}): which cell is which is unknown; "
                        "show the whole board, its edge clear of hands and things")


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


def ridge_contrast(image: np.ndarray, pose: BoardPose) -> float:
    """How much stronger the brightness gradient is on the lattice's ridges, where ``pose``
    puts them, than in the flat of the cells beside them (about 1 where there is no lattice,
    or it is elsewhere). Lighting cancels out; a few thousand pixels are read."""
    ridge, flat = _ridge_samples()
    g_r, in_r = gradient_at(image, pose.to_photo(ridge.reshape(-1, 2)))
    g_f, in_f = gradient_at(image, pose.to_photo(flat.reshape(-1, 2)))
    seen = in_r.reshape(len(ridge), -1).all(1) & in_f.reshape(len(flat), -1).all(1)
    if seen.sum() < 0.25 * len(seen):
        return 0.0
    on = g_r.reshape(len(ridge), -1).mean(1)[seen]
    off = g_f.reshape(len(flat), -1).mean(1)[seen]
    return float(np.median(on) / max(np.median(off), 1e-3))
