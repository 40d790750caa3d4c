"""A Geometrius token's printed geometry and the top-down views of it.

Square card tokens lie on the table on an integer grid, each with a thin printed frame, a
polygon in its middle and chip spots at its corners. Their measurements (millimetres from
the token's centre) are shared by every step of the reader and by the synthetic generator,
which draws what a physical token shows; a token's homography maps these millimetres to
photo pixels, and ``warp`` looks at the token plane from above through it.
"""
from __future__ import annotations

import cv2
import numpy as np


# The token's printed geometry (millimetres from the token's centre): shared with the
# synthetic generator, which draws what a physical token shows.
PITCH_MM = 53.0
FRAME_MM = 23.6
FRAME_WIDTH_MM = 0.9
POLY_RADIUS_MM = 14.5
SPOT_MM = 16.0
CHIP_RADIUS_MM = 6.3
CHIP_MM = 3.0
STONE_RADIUS_MM = 3.8
SPOTS = np.array([[-SPOT_MM, -SPOT_MM], [SPOT_MM, -SPOT_MM], [SPOT_MM, SPOT_MM], [-SPOT_MM, SPOT_MM]])
CHIP_COLOURS = {  # nominal chip tops relative to the card (card = white)
    "red": (0.88, 0.12, 0.13), "blue": (0.12, 0.27, 0.85), "green": (0.11, 0.6, 0.22),
    "yellow": (1.0, 0.86, 0.1), "purple": (0.54, 0.15, 0.66), "white": (1.0, 1.02, 1.07)}
SIDE_SHADE = 0.62  # a chip's side is this much darker than its top
ARC_MM = 3.2  # the angle arcs' largest radius (within a quarter of the shorter side at their corner)
FRAME_SHIFT_MM = 5.0  # how far the grid may misplace a token's frame
PPM = 6.0  # top-down pixels per millimetre for the polygon
TOKEN_HALF_MM = 25.0  # the card's edge (tokens are 50 mm squares)
GAP_MM = PITCH_MM - 2 * TOKEN_HALF_MM  # the gap between neighbouring tokens
# The printed strips across a frame line, from its centre outwards: the line's two edges, the card's edge, the gap's.
FRAME_EDGES_MM = (-FRAME_WIDTH_MM / 2, FRAME_WIDTH_MM / 2, TOKEN_HALF_MM - FRAME_MM, TOKEN_HALF_MM - FRAME_MM + GAP_MM)
INNER_MM = FRAME_MM - FRAME_WIDTH_MM / 2  # the frame's inside edge

Pos = tuple[int, int]


# --- geometry helpers ---------------------------------------------------------------------

def square(half: float) -> np.ndarray:
    return np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float64)


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return cv2.getPerspectiveTransform(np.float32(src), np.float32(dst)).astype(np.float64)


def view_to_photo(H: np.ndarray, half_mm: float, ppm: float) -> np.ndarray:
    """The homography from a top-down view's pixels (``warp``'s) to photo pixels."""
    return H @ np.array([[1 / ppm, 0, 0.5 / ppm - half_mm], [0, 1 / ppm, 0.5 / ppm - half_mm], [0, 0, 1]])


def warp(image: np.ndarray, H: np.ndarray, half_mm: float, ppm: float) -> np.ndarray:
    """Top-down view of the token plane around the origin: ``half_mm`` each way, ``ppm``.
    ``H`` maps token millimetres to photo pixels."""
    n = int(round(2 * half_mm * ppm))
    return cv2.warpPerspective(image, view_to_photo(H, half_mm, ppm), (n, n),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
