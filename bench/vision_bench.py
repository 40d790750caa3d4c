"""Blokus photo reading: accuracy over generated photos per named condition, and latency.

Goals (issue 3): per-cell error <= 0.05 %, >= 98 % of boards read exactly right, median
<= 0.5 s per 12 MP photo. Photos come from our own generator (``vision.synth``) with exact
ground truth; each condition draws its own random camera, light and game. The figures are
those of :mod:`bench.photo_accuracy`.

``python -m bench vision_bench``; ``BENCH_PHOTOS=N`` sets the photos per condition
(default 12 x 20 conditions = 240).
"""
from __future__ import annotations

import os

import numpy as np

from rules.blokus import random_game_state
from vision.blokus import read_blokus
from vision.photo import DECODE_SHORT_SIDE
from vision.synth.blokus import render_photo
from vision.synth.conditions import sample_conditions

from .photo_accuracy import PhotoBench, Truth, report, upright

SIZE = 20
LEVEL_SIDES = 1e-3  # two sides whose midpoints lie this close in height (share of the photo's width) tie for "top"


def _render(rng, condition, size):
    state = random_game_state(rng, int(rng.integers(8, 85)))
    photo = render_photo(state, sample_conditions(condition, rng), rng, size=size)
    grid = np.array([list(row) for row in photo.state])
    return upright(photo), _truth(grid, photo.occluded, [
        _truth(np.rot90(grid, turn), np.rot90(photo.occluded, turn)) for turn in _tied_turns(photo.corners, size[0])],
        photo.corners)


def _truth(grid: np.ndarray, occluded: np.ndarray, alternatives=(), corners: np.ndarray | None = None) -> Truth:
    labels = {(r, c): str(ch) for (r, c), ch in np.ndenumerate(grid)}
    return Truth(labels, {tuple(int(v) for v in c) for c in np.argwhere(occluded)}, tuple(alternatives), corners)


def _tied_turns(corners: np.ndarray, width: int) -> list[int]:
    """Quarter turns (``np.rot90``'s k) that put a side level with the top one at the top.

    ``corners``: TL, TR, BR, BL of the grid in the photo. At 45 degrees the top and the left
    (or right) side's midpoints may lie a fraction of a pixel apart: either is the top."""
    mids = [(corners[k, 1] + corners[(k + 1) % 4, 1]) / 2 for k in range(4)]  # top, right, bottom, left
    level = LEVEL_SIDES * width
    return [turn for side, turn in ((3, -1), (1, 1)) if mids[side] - mids[0] < level]


def _read(image):
    reading = read_blokus(image)
    labels = {(r, c): ch for r, row in enumerate(reading.board) for c, ch in enumerate(row)}
    return labels, {tuple(c) for c in reading.uncertain}


BENCH = PhotoBench(SIZE * SIZE, _render, _read, DECODE_SHORT_SIDE.get("blokus"))


def main() -> None:
    report(BENCH, int(os.environ.get("BENCH_PHOTOS", "12")), seed=1, goal_12mp="<= 0.5 s")


if __name__ == "__main__":
    main()
