"""Gemblo photo reading: accuracy over generated photos per named condition, and latency.

Goals: per-cell error <= 0.1 % with clear pieces, >= 95 % of boards read exactly right,
median <= 0.7 s per 12 MP photo. Photos come from ``vision.synth.gemblo`` with exact ground
truth; each condition draws its own camera, light and game (random legal 6-colour playouts,
clear pieces included). The figures are those of :mod:`bench.photo_accuracy`.

``python -m bench gemblo_bench``; ``BENCH_PHOTOS=N`` sets the photos per condition (default 6).
"""
from __future__ import annotations

import os

from rules import gemblo
from rules.placement import random_playout
from vision.gemblo import read_gemblo
from vision.hexgrid import cells, key
from vision.synth.conditions import sample_conditions
from vision.synth.gemblo import render_photo

from .photo_accuracy import PhotoBench, Truth, report, upright

NAMES = [key(c) for c in cells()]


def _render(rng, condition, size):
    game = random_playout(gemblo.rules(gemblo.Setup()), rng, int(rng.integers(10, 90)))
    photo = render_photo(gemblo.cells_json(game.position), sample_conditions(condition, rng), rng, size=size)
    return upright(photo), Truth({n: photo.cells.get(n, ".") for n in NAMES}, set(photo.occluded))


def _read(image):
    reading = read_gemblo(image)
    return {n: reading.cells.get(n, ".") for n in NAMES}, set(reading.uncertain)


BENCH = PhotoBench(len(NAMES), _render, _read)


def main() -> None:
    report(BENCH, int(os.environ.get("BENCH_PHOTOS", "6")), seed=2, goal_12mp="<= 0.7 s")


if __name__ == "__main__":
    main()
