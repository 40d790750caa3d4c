"""Pieces as a player's hand leaves them: what the Blokus and Gemblo readers make of slop.

Every default bench lays each piece exactly on its cells; a real piece sits shifted within
its cells and turned by a degree or two (``vision.synth.slop``). This bench reads each game's
bench photo (its own game, camera and light) twice: as the default benches draw it (``clean``,
``perspective``) and with every piece nudged up to a fifth of the cell pitch and 3 degrees
(``nudged``, ``nudged_perspective``: the same photo but for where the pieces lie), and counts
as :mod:`bench.photo_accuracy` does.

``python -m bench nudged``; ``BENCH_PHOTOS=N`` photos per game and condition (default 15),
``BENCH_SEED=N`` another set of photos (default 24). Photo i draws from ``[seed, STREAM, i]``.
"""
from __future__ import annotations

import os

import cv2
import numpy as np

from . import gemblo_bench, vision_bench
from .photo_accuracy import PhotoBench, Truth, bench_seed, sweep, table_head, table_row

GAMES: dict[str, PhotoBench] = {"Blokus": vision_bench.BENCH, "Gemblo": gemblo_bench.BENCH}
# (as laid, nudged): the nudged condition is the laid one's photo with the pieces nudged
PAIRS = (("clean", "nudged"), ("perspective", "nudged_perspective"))
STREAM = 777  # the photos' rng [seed, STREAM, i]: no default sweep draws it (theirs: a condition's index)
SIZE = (1600, 1200)


def photo(bench: PhotoBench, condition: str, seed: int, i: int) -> tuple[np.ndarray, Truth]:
    """``bench``'s photo i of the set ``seed`` under ``condition`` and its truth; a pair's two
    conditions give the same game, camera and light."""
    return bench.render(np.random.default_rng([seed, STREAM, i]), condition, SIZE)


def main() -> None:
    cv2.setNumThreads(1)
    photos, seed = int(os.environ.get("BENCH_PHOTOS", "15")), bench_seed(24)
    print(f"Seed {seed}, {photos} photos per game and condition, {SIZE[0]}x{SIZE[1]}.\n")
    print(table_head("game, condition"))
    for name, bench in GAMES.items():
        for pair in PAIRS:
            for condition in pair:
                row = sweep(bench, f"{name}, {condition}", (photo(bench, condition, seed, i) for i in range(photos)))
                print(table_row(row, bench.cells), flush=True)


if __name__ == "__main__":
    main()
