"""Fitting a drawn board to a photo point by point: what the hex and round readers share.

Boards without straight grid lines (Gemblo's ridges, Equilibrix's circles) are located by
matching small patches of their drawing one by one and fitting the pose through the matched
points. Four steps recur: the edge strength a drawing's patches are matched on, the
sub-pixel peak of a patch's correlation, a homography with one radial lens term through the
matched points, and the drawing's edge strength sampled at points (the live loop's cheap
check that a pose still fits a frame).
"""
from __future__ import annotations

import cv2
import numpy as np

from .pose import Lens, apply_h

TYPICAL_K = -0.05  # a phone lens' barrel, where mismatched patches are told from the lens' own bending
K_SEARCH = (-0.35, 0.15)  # the radial terms searched: strong barrel to mild pincushion
_GOLDEN = (np.sqrt(5) - 1) / 2

SAMPLE_ROW = 4096  # points per row of the maps handed to cv2.remap (its limit: 32767)


def edge_strength(gray: np.ndarray) -> np.ndarray:
    """The square root of a grey image's Sobel gradient magnitude (float32): what a drawing's
    patches are matched on. The root compresses the strong edges (Equilibrix's ring tiles, a
    Gemblo plate's outer edge and its pieces' bevels) against the thin drawn lines and ridges,
    as :func:`gradient_at` does at points."""
    g = gray.astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3))
    return np.sqrt(mag)


def correlation_peak(score: np.ndarray) -> tuple[float, float, float]:
    """Sub-pixel (x, y) of a correlation maximum (a parabola through it and its neighbours on
    each axis), and its value."""
    _, top, _, (x, y) = cv2.minMaxLoc(score)
    dx = dy = 0.0
    if 0 < x < score.shape[1] - 1:
        a, b, c = score[y, x - 1], score[y, x], score[y, x + 1]
        dx = 0.5 * (a - c) / min(a - 2 * b + c, -1e-9)
    if 0 < y < score.shape[0] - 1:
        a, b, c = score[y - 1, x], score[y, x], score[y + 1, x]
        dy = 0.5 * (a - c) / min(a - 2 * b + c, -1e-9)
    return x + dx, y + dy, float(top)


def fit_with_lens(board_pts: np.ndarray, photo: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, float, float]:
    """(board → undistorted photo homography, radial lens term k, median residual in px)
    through matched point pairs.

    The mismatched pairs are dropped once (least median of squares at a typical phone lens),
    then a golden-section search on k costs one least-squares homography per step, so a
    barrel lens is measured from the drawing itself rather than assumed."""
    _, keep = cv2.findHomography(board_pts, Lens(size, TYPICAL_K).undistort(photo), cv2.LMEDS)
    if keep is not None and keep.sum() >= 8:
        board_pts, photo = board_pts[keep.ravel() > 0], photo[keep.ravel() > 0]

    def fit(k: float) -> tuple[float, np.ndarray]:
        und = Lens(size, k).undistort(photo)
        H, _ = cv2.findHomography(board_pts, und, 0)
        if H is None:
            return np.inf, np.eye(3)
        err = np.linalg.norm(apply_h(H, board_pts) - und, axis=1)
        return float(np.median(err)), H

    lo, hi = K_SEARCH
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa, fb = fit(a)[0], fit(b)[0]
    for _ in range(14):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = fit(a)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = fit(b)[0]
    k = (lo + hi) / 2
    rms, H = fit(k)
    return H, k, rms


def sample_at(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Bilinear samples (N x channels, float32) of ``image`` at N photo points (any array of
    x, y pairs), the photo's edge pixels repeated beyond it. ``cv2.remap`` wants maps under
    32767 on a side, so the points are laid out in rows of SAMPLE_ROW; the samples do not
    depend on the layout."""
    pts = np.asarray(pts, np.float32).reshape(-1, 2)
    n = len(pts)
    rows = max(1, -(-n // SAMPLE_ROW))
    grid = np.zeros((rows * SAMPLE_ROW, 2), np.float32)
    grid[:n] = pts
    grid = grid.reshape(rows, SAMPLE_ROW, 2)
    out = cv2.remap(image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(rows * SAMPLE_ROW, -1)[:n].astype(np.float32)


def gradient_at(image: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sqrt of the brightness gradient's magnitude at photo points (bilinear, 1 px central
    differences over the summed channels), and whether each point lies inside the photo."""
    h, w = image.shape[:2]
    inside = (pts[:, 0] >= 1) & (pts[:, 0] <= w - 2) & (pts[:, 1] >= 1) & (pts[:, 1] <= h - 2)
    d = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.float32)
    probe = pts[None].astype(np.float32) + d[:, None]
    vals = sample_at(image, probe).reshape(4, len(pts), -1).sum(axis=2)
    return np.sqrt(np.hypot(vals[0] - vals[1], vals[2] - vals[3])), inside
