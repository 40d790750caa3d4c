"""A first guess of the Equilibrix board's pose fitted to the drawing, and the lens: steps 5
and 6 of the pose search (``vision.equilibrix_pose`` puts the steps together).

*Refinement*: a homography aligning the drawn lines with the photo's edges (ECC, two
passes), then the drawing matched piece by piece round every node and along the board's
edge, with RANSAC, which a hand or a glare spot cannot pull; of the two, the pose more
pieces agree with wins, and when few agree the pieces are matched once more where it puts
them. Of the guesses' fits, the pose more of the drawing's pieces agree with wins; on a tie,
the one more of the board's edge agrees with (a blurred drawing agrees as well with a pose
too large by about half).

*Lens*: one radial lens term (``vision.pose.Lens``, fitted as for Gemblo) through the same
pieces, matched again where it puts them; kept when more pieces agree with it. The board's
edge holds it beyond the drawing, where the ring lies.

Apart because how many of the drawing's pieces agree with a pose (:func:`agreeing`) is the
measure every later decision takes: which guess wins, whether a pose is trusted, whether
the lens is kept.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rules import flower

from . import flowergrid as fg
from .equilibrix_drawing import CORNER_NODES, DRAW_RADIUS, RIDGE_R, drawn_lines, drawn_ridges, pose_from, raster
from .matching import correlation_peak, edge_strength, fit_with_lens
from .pose import BoardPose, in_photo, rectify

SURE_VOTES = 0.8  # share of the drawing's pieces agreeing with the alignment that needs no second opinion
REFINE_PPU = (12.0, 20.0)  # the alignment's passes, coarse to fine
ECC_STEPS = 40  # iterations of each alignment pass
PATCH_PPU = 16.0  # the last fit: neighbourhoods of the drawing matched one by one
PATCH_R, SEARCH_R = 1.0, 0.35  # their half-size and how far each may move (r units)
PATCH_MIN = 0.3  # a neighbourhood matched worse than this is not used
MIN_PIECES = 12  # matched pieces a homography is fitted through at the least
PATCH_TOLERANCE = 0.05  # r: matches further off the common homography are outliers
SIDE_PIECES = 2  # agreeing pieces in a sixth of the drawing below which that sixth is bare
LENS_ROUNDS = 2  # the lens term is fitted, the drawing matched again where it puts it, and refitted
LENS_RANGE = (-0.34, 0.14)  # inside the lens search's ends (-0.35, 0.15): a fit at an end is no lens


def _align(gray: np.ndarray, board_to_photo: np.ndarray, size: tuple[int, int], ppu: float, margin: float,
           template: np.ndarray, blur: float) -> tuple[np.ndarray, float]:
    """Align ``template`` (drawn in the top-down frame at ``ppu`` with ``margin``) with the photo's
    edges by a homography (ECC) in the top-down view of ``board_to_photo``: small errors of
    scale, turn, shift and perspective are all taken out at once."""
    rect = cv2.GaussianBlur(edge_strength(rectify(gray, pose_from(board_to_photo, size), ppu, margin)), (0, 0), blur)
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
    tmpl = drawn_ridges(line, radius).astype(np.float32)
    b2p, cc = _align(gray, np.linalg.inv(pose.homography), pose.image_size, ppu, 0.0, tmpl, 0.8)
    return pose_from(b2p, pose.image_size, pose.distortion, cc) if cc > 0 else pose


@lru_cache(maxsize=1)
def anchors() -> np.ndarray:
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
    _, line, _, radius = drawn_lines(d[1], d[0])
    ridges = drawn_ridges(line, radius) + np.exp(-((radius - fg.DISC) / RIDGE_R) ** 2)
    return cv2.GaussianBlur(ridges.astype(np.float32), (0, 0), 0.8)


def matches(gray: np.ndarray, pose: BoardPose) -> tuple[np.ndarray, np.ndarray]:
    """The drawing's neighbourhoods and the board's edge matched piece by piece near where
    ``pose`` puts them: (board points, photo points) of those that match well."""
    pad = math.ceil((PATCH_R + SEARCH_R) * PATCH_PPU) / PATCH_PPU  # a whole number of pixels
    rect = cv2.GaussianBlur(edge_strength(rectify(gray, pose, PATCH_PPU, pad)), (0, 0), 0.8)
    shown = in_photo(pose, PATCH_PPU, rect.shape, pad)
    ridges = _ridge_view(PATCH_PPU, pad)
    half, search = int(PATCH_R * PATCH_PPU), int(SEARCH_R * PATCH_PPU)
    wins, tmpls, board = [], [], []
    for bx, by in np.vstack([anchors(), _edge_anchors()]):
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


def near_pose(pose: BoardPose, board: np.ndarray, photo: np.ndarray, tolerance: float = PATCH_TOLERANCE) -> np.ndarray:
    """Which matched pieces lie within ``tolerance`` of where ``pose`` puts them."""
    return np.linalg.norm(pose.to_board(photo) - board, axis=1) < tolerance


def drawn(board: np.ndarray) -> np.ndarray:
    """Which matched pieces are the drawing's (not the board's edge)."""
    return np.hypot(*(board - fg.DISC).T) < DRAW_RADIUS + 0.1


def agreeing(pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> tuple[int, int]:
    """How many matched pieces lie where ``pose`` puts them: of the drawing's, and in all."""
    if not len(board):
        return 0, 0
    near = near_pose(pose, board, photo)
    return int((near & drawn(board)).sum()), int(near.sum())


def one_sided(pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> bool:
    """Do the drawing's pieces that agree with ``pose`` leave a side of it bare (fewer than
    SIDE_PIECES in each of two neighbouring sixths round the middle, the middle itself aside)?
    A homography through them then holds only where they lie; a pose they confirm all round is
    left as it is (one sparse sixth is common on clean photos, whose poses are right)."""
    off = board[near_pose(pose, board, photo) & drawn(board)] - fg.DISC
    off = off[np.hypot(*off.T) > 0.5]
    sectors = np.floor(np.degrees(np.arctan2(off[:, 1], off[:, 0])) % 360 / 60).astype(int)
    sparse = np.bincount(sectors, minlength=6)[:6] < SIDE_PIECES
    return bool((sparse & np.roll(sparse, 1)).any())


def lens_fit(gray: np.ndarray, pose: BoardPose, board: np.ndarray, photo: np.ndarray) -> tuple[BoardPose,
                                                                                                tuple[int, int]]:
    """The pose with one radial lens term, fitted through the matched pieces (:func:`vision.matching.fit_with_lens`:
    least median of squares, then a search on the lens term); between fits the pieces are
    matched again where it puts them (a barrel lens moves the outer ones furthest, past the
    first search). Also how many agree with it (:func:`agreeing`)."""
    for round_ in range(LENS_ROUNDS):
        if len(board) < MIN_PIECES:
            return pose, (0, 0)
        if round_:
            board, photo = matches(gray, pose)
        H, k, rms = fit_with_lens(board, photo, pose.image_size)
        if not LENS_RANGE[0] < k < LENS_RANGE[1]:  # the search's ends: bent to wrong matches
            return pose, (0, 0)
        pose = pose_from(H, pose.image_size, k, pose.quality, rms)
    return pose, agreeing(pose, board, photo)


def patches(gray: np.ndarray, pose: BoardPose) -> tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """The pose refitted through the drawing's neighbourhoods (and the board's edge) matched
    one by one, keeping only the matches that agree (RANSAC): a hand or a cup over part of the
    board moves none of it. Also how many pieces agree with it (:func:`agreeing`) and the
    matches."""
    board_pts, photo = matches(gray, pose)
    if len(board_pts) < MIN_PIECES:
        return pose, (0, 0), (board_pts, photo)
    px_per_r = math.sqrt(abs(np.linalg.det(np.linalg.inv(pose.homography)[:2, :2])))
    H, inliers = cv2.findHomography(board_pts, pose.lens.undistort(photo), cv2.RANSAC,
                                    PATCH_TOLERANCE * px_per_r)
    if H is not None and inliers.sum() >= MIN_PIECES:
        fitted = pose_from(H, pose.image_size, pose.distortion, pose.quality)
        # Where the whole-drawing alignment agrees with the inliers, it is the finer of the two.
        moved = np.abs(fitted.to_board(pose.corners) - (np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC))
        pose = pose if moved.max() < PATCH_TOLERANCE else fitted
    return pose, agreeing(pose, board_pts, photo), (board_pts, photo)


def fit_drawing(gray: np.ndarray, start: BoardPose) -> tuple[BoardPose, tuple[int, int],
                                                              tuple[np.ndarray, np.ndarray]]:
    """From a first guess, the pose the drawing's pieces agree with most, their count and the
    matches. The alignment (ECC) is fine but can be led off by glare or a hand; matching the
    drawing piece by piece is robust but coarser: of both, the pose more pieces agree with wins."""
    aligned = start
    for ppu in REFINE_PPU:
        aligned = _refine(gray, aligned, ppu)
    return second_opinion(gray, patches(gray, aligned), start)


def second_opinion(gray: np.ndarray, fit: tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]],
                   at: BoardPose) -> tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """``fit`` (pose, votes, matches as :func:`patches`), or, when fewer than SURE_VOTES of the
    drawing's pieces agree with it, the drawing matched piece by piece again at ``at`` if more
    agree there (a fit led off by glare or a hand, a steep view's guess off by more than a
    piece may move)."""
    if fit[1][0] < SURE_VOTES * len(anchors()):
        other = patches(gray, at)
        if other[1][0] > fit[1][0]:
            return other
    return fit
