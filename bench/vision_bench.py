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
from vision.synth.blokus import render_photo
from vision.synth.conditions import sample_conditions

from .photo_accuracy import PhotoBench, Truth, report, upright

SIZE = 20


def _render(rng, condition, size):
    state = random_game_state(rng, int(rng.integers(8, 85)))
    photo = render_photo(state, sample_conditions(condition, rng), rng, size=size)
    labels = {(r, c): ch for r, row in enumerate(photo.state) for c, ch in enumerate(row)}
    return upright(photo), Truth(labels, {tuple(c) for c in np.argwhere(photo.occluded)})


def _read(image):
    reading = read_blokus(image)
    labels = {(r, c): ch for r, row in enumerate(reading.board) for c, ch in enumerate(row)}
    return labels, {tuple(c) for c in reading.uncertain}


BENCH = PhotoBench(SIZE * SIZE, _render, _read)


def main() -> None:
    report(BENCH, int(os.environ.get("BENCH_PHOTOS", "12")), seed=1, goal_12mp="<= 0.5 s")


if __name__ == "__main__":
    main()
