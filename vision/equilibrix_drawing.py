"""The Flower-of-Life drawing as the Equilibrix pose search sees it, and the board frame's maps.

The drawing's lines are rastered top-down (``raster``, which the field reader shares) and drawn
as a template at any turn (``drawing``); the photo's edges they are matched on are its edge
strength (``vision.matching.edge_strength``), or, under a hard shadow, that strength against
the light round it (``edge_strength_in_light``). ``pose_from``, ``ellipse_pose`` and
``about_centre`` make and move the board -> photo maps every step works in.

Apart because every step of the search (``vision.equilibrix_edges``, ``equilibrix_circle``,
``equilibrix_perspective``, ``equilibrix_guesses``, ``equilibrix_fit``, ``equilibrix_pose``) and
the field reader use them: below all of them, none of those imports another in a circle.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np

from . import flowergrid as fg
from .matching import edge_strength
from .pose import BoardPose

DRAW_RADIUS = fg.OUTER_LINE + 0.15  # the matched template spans the drawing
RIDGE_R = 0.15  # width of a drawn line in the matched template (r units): wide enough to lock on
LIGHT_R = 0.4  # r: the light a shadowed photo's edges are divided by is blurred over this (edge_strength_in_light)
CORNER_NODES = ((0, -3), (3, -3), (3, 0), (0, 3), (-3, 3), (-3, 0))  # clockwise from the top side's left end


def drawn_lines(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Field index, distance to the nearest drawn line, distance to a node and radius at board
    points (``x``, ``y``: r units from the board's centre). The printed circle round the flower
    counts as a drawn line: every view of the drawing is matched on it as on the flower's."""
    f, line, node = fg.locate_fields(x, y)
    radius = np.hypot(x, y)
    return f, np.minimum(line, np.abs(radius - fg.OUTER_LINE)), node, radius


def drawn_ridges(line: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """The drawn lines as ridges (1 on a line, RIDGE_R wide) out to DRAW_RADIUS, from
    :func:`drawn_lines`' distances: the template the photo's edge strength is matched with."""
    return np.exp(-(line / RIDGE_R) ** 2) * (radius <= DRAW_RADIUS)


@lru_cache(maxsize=4)
def raster(ppu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`drawn_lines` per top-down pixel."""
    n = int(round(fg.EXTENT[0] * ppu))
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    x = xs / np.float32(ppu) - np.float32(fg.DISC)  # rectify's convention: pixel i is at i / ppu
    y = ys / np.float32(ppu) - np.float32(fg.DISC)
    return drawn_lines(x, y)


@lru_cache(maxsize=1024)
def drawing(ppu: float, turn_deg: float = 0.0) -> np.ndarray:
    """The drawn lines as a template: odd-sized, the board's centre in the middle pixel, the
    drawing turned clockwise on screen by ``turn_deg``."""
    half = int(math.ceil(DRAW_RADIUS * ppu))
    d = (np.mgrid[0:2 * half + 1, 0:2 * half + 1].astype(np.float32) - half) / np.float32(ppu)
    a = math.radians(turn_deg)
    x = math.cos(a) * d[1] + math.sin(a) * d[0]  # undo the turn
    y = -math.sin(a) * d[1] + math.cos(a) * d[0]
    _, line, _, radius = drawn_lines(x, y)
    return drawn_ridges(line, radius).astype(np.float32)


def edge_strength_in_light(view: np.ndarray, ppu: float) -> np.ndarray:
    """:func:`vision.matching.edge_strength` of a top-down ``view`` (``ppu`` pixels per r) divided by its light there
    (blurred over LIGHT_R): a shadow darkens the wood and its drawn lines alike, so a line in
    the shade is as strong a step against the light round it as one in the sun, while its
    plain gradient drops with the light (seed 5 ``shadow`` #1: half the flower in a hard
    shadow, the drawing's best turn matched 0.19-0.20 on the plain edges, 0.37-0.48 on these)."""
    g = view.astype(np.float32) + 1.0
    return edge_strength(g / cv2.GaussianBlur(g, (0, 0), LIGHT_R * ppu) * 128.0)


def pose_from(board_to_photo: np.ndarray, size: tuple[int, int], k: float = 0.0, quality: float = 0.0,
               residual: float = 0.0) -> BoardPose:
    h = board_to_photo / board_to_photo[2, 2]
    pose = BoardPose(np.linalg.inv(h), np.zeros((6, 2)), quality, size, fg.EXTENT, k, residual)
    corners = pose.to_photo(np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC)
    return replace(pose, corners=corners)


def ellipse_pose(ellipse, size: tuple[int, int], scale: float) -> np.ndarray:
    """Board -> photo affine putting the board's edge, times ``scale``, on the ellipse."""
    (cx, cy), (d1, d2), angle = ellipse
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    lin = rot @ np.diag([d1 / 2, d2 / 2]) / (scale * fg.DISC)
    m = np.eye(3)
    m[:2, :2] = lin
    m[:2, 2] = np.array([cx, cy]) - lin @ np.array([fg.DISC, fg.DISC])
    return m


def about_centre(turn_deg: float, shift: np.ndarray = np.zeros(2)) -> np.ndarray:
    """Board-frame map: turn by ``turn_deg`` (clockwise on screen) about the centre, then shift."""
    a = math.radians(turn_deg)
    c = np.array([fg.DISC, fg.DISC])
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    m = np.eye(3)
    m[:2, :2] = rot
    m[:2, 2] = c - rot @ c + shift
    return m
