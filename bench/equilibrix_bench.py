"""Equilibrix photo reading: accuracy over generated photos per named condition, and latency.

Goals: per-field error <= 0.1 %, >= 95 % of boards read exactly right, <= 0.5 s per photo.
Photos come from ``vision.synth.equilibrix`` with exact ground truth; each condition draws its
own camera, light and game (random legal turns of ``rules.equilibrix`` from a shuffled ring).
The figures are those of :mod:`bench.photo_accuracy` over the 144 fields (the ring is not
counted there).

``python -m bench equilibrix_bench``; ``BENCH_PHOTOS=N`` sets the photos per condition (default 6),
``BENCH_SEED=N`` draws another set of photos (a held-out check for changes tuned on the usual ones).
"""
from __future__ import annotations

import os

import numpy as np

from vision.equilibrix import read_equilibrix
from vision.errors import ReadError
from vision.flowergrid import names
from vision.photo import DECODE_SHORT_SIDE
from vision.synth.conditions import sample_conditions
from vision.synth.equilibrix import random_position, render_photo

from .photo_accuracy import PhotoBench, Truth, bench_seed, percent, report, upright

NAMES = names()


def _render(rng, condition, size):
    position = random_position(rng)
    photo = render_photo(rng, sample_conditions(condition, rng), size, position)
    return upright(photo), Truth({n: photo.fields.get(n, ".") for n in NAMES}, set(photo.occluded),
                                 corners=np.asarray(photo.corners, float))  # the corner nodes: bench.framing cuts by them


def _read(image):
    reading = read_equilibrix(image)
    return {n: reading.fields.get(n, ".") for n in NAMES}, set(reading.uncertain)


BENCH = PhotoBench(len(NAMES), _render, _read, DECODE_SHORT_SIDE.get("equilibrix"))
RING_CONDITIONS = ("clean", "perspective", "rotation", "glare", "hand", "hard")


def ring_accuracy(per_condition: int, seed: int = 5, size=(1600, 1200)) -> None:
    """The ring, not part of the field figures: slots whose tile (shape and side up, or empty)
    is read right, and photos whose Origin is placed right."""
    print("\n| ring (18 slots) | photos | slots right | sides right | Origin right |\n|---|---|---|---|---|")
    for k, name in enumerate(RING_CONDITIONS):
        slots = sides = origins = photos = 0
        for i in range(per_condition):
            rng = np.random.default_rng([seed, k, i])
            photo = render_photo(rng, sample_conditions(name, rng), size, random_position(rng))
            photos += 1
            try:
                reading = read_equilibrix(upright(photo))
            except ReadError:
                continue
            slots += sum((t["shape"] if t else None) == s for t, s in zip(reading.ring, photo.ring))
            sides += sum((t["side"] if t else None) == s for t, s in zip(reading.ring, photo.ring_sides))
            origins += reading.origin == photo.origin
        print(f"| {name} | {photos} | {percent(slots, 18 * photos, 1)} | {percent(sides, 18 * photos, 1)} "
              f"| {origins}/{photos} |")


def main() -> None:
    photos = int(os.environ.get("BENCH_PHOTOS", "6"))
    report(BENCH, photos, seed=3, goal_12mp="<= 0.5 s")
    ring_accuracy(photos, bench_seed(5))


if __name__ == "__main__":
    main()
