"""The board's edge and the printed circle round the flower, found along rays: step 2 of the
Equilibrix pose search (``vision.equilibrix_pose`` puts the steps together).

*The printed circle*: in the view that makes a candidate disc round, a ring template (a
thin dark line with bare wood on both sides) over radii and shifts; then, along rays, the
thin line nearest it. It must have the same wood on both sides (the board's edge has the
table outside, and its shadowed side wall passes for a thin line).

Apart because the first guesses (``vision.equilibrix_guesses``), the perspective frames
(``vision.equilibrix_perspective``) and the pose's last check (a pose few of the drawing's
pieces confirm, held against the circle) all look for the same two ellipses.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from . import flowergrid as fg
from .equilibrix_drawing import ellipse_pose, pose_from
from .equilibrix_edges import thin_dark
from .equilibrix_outlines import ellipse_points, ellipse_radius
from .pose import BoardPose, in_photo, rectify

EDGE_RAYS = 120  # rays searched for the board's edge
RAY_ANGLES = np.linspace(0, 2 * np.pi, EDGE_RAYS, endpoint=False)  # their directions, radians
RAY_ANGLES.setflags(write=False)  # shared by every search: never changed in place
EDGE_RANGE = (0.94, 1.06)  # where on a ray (share of the first ellipse's radius) the edge may lie
SAME_OUTLINE = 0.02  # ellipses this close (share of their radius) all round are one outline
MIN_CIRCLE = 0.1  # correlation of the printed circle's template below which there is none
CIRCLE_PPU = 8.0  # the printed circle is looked for in a view this fine
CIRCLE_SCALES = tuple(np.linspace(0.85, 1.15, 7))  # its radius in the disc's view, relative to the true one
CIRCLE_SHOWN = 0.6  # share of the printed circle that must show for its match to count in full
CIRCLE_SHIFT = 2.0  # how far off the disc's middle perspective may put it (r units)


def disc_ellipse(gray: np.ndarray, guess) -> tuple[tuple[float, float], tuple[float, float], float]:
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


def circle_ellipse(gray: np.ndarray, disc, size: tuple[int, int], thin: np.ndarray):
    """The printed circle round the flower, as an ellipse in the photo. In the view that makes
    the disc round it is nearly a circle, but off-centre under perspective: a ring template
    over radii and shifts finds it in the thin dark lines; then, on rays from its middle, the
    thin line nearest the found ring gives the points an ellipse is fitted through.
    ``thin``: the photo's :func:`vision.equilibrix_edges.thin_dark` (as float32), found once for all its outlines."""
    frame = ellipse_pose(disc, size, 1.0)
    pose = pose_from(frame, size)
    m = CIRCLE_SHIFT + 0.5  # margin: the ring template may reach beyond the disc's view
    hat = thin_dark(rectify(gray, pose, CIRCLE_PPU, m)).astype(np.float32)
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


def sides_differ(lab: np.ndarray, ellipse) -> float:
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


def same_ellipse(a, b) -> bool:
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


def printed_circle(gray: np.ndarray, pose: BoardPose, thin: np.ndarray
                   ) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The printed circle found in the photo (:func:`circle_ellipse`) inside the board's edge
    nearest where ``pose`` puts it; None when none matches (MIN_CIRCLE)."""
    a = RAY_ANGLES
    edge = fg.DISC + fg.DISC * np.column_stack([np.cos(a), np.sin(a)])
    guess = cv2.fitEllipse(pose.to_photo(edge).astype(np.float32))
    circle, score = circle_ellipse(gray, disc_ellipse(gray, guess), pose.image_size, thin)
    return circle if circle is not None and score >= MIN_CIRCLE else None
