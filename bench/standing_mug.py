"""A mug standing wholly on the board: what each board game's reader makes of it.

Every default bench's mugs reach in over the board's edge (the ``cup`` condition), where the
readers look for an occluder first. A mug set down on the board hides a patch of cells with
nothing of it touching the edge, and lends its colour to the cells at its rim. This bench reads
each game's bench photo (Blokus, Gemblo, Equilibrix: its own game, camera and light) with the
condition ``standing_mug`` (``vision.synth.conditions``: the ``cup`` photo's mug set 1.3-3
diameters in from the edge along its ray from the board's centre, its foot wholly on the board)
and counts as :mod:`bench.photo_accuracy` does.

``python -m bench standing_mug``; ``BENCH_PHOTOS=N`` photos per game (default 20),
``BENCH_SEED=N`` another set of photos (default 8, the seed sessions 12 and 13 measured on; 10
held out). Photo i of a seed draws from ``[seed, 999, i]``, as session 12's measurements did, so
their photos are these.
"""
from __future__ import annotations

import os

import cv2
import numpy as np

from . import equilibrix_bench, gemblo_bench, vision_bench
from .photo_accuracy import PhotoBench, Truth, bench_seed, sweep, table_head, table_row

GAMES: dict[str, PhotoBench] = {"Blokus": vision_bench.BENCH, "Gemblo": gemblo_bench.BENCH,
                                "Equilibrix": equilibrix_bench.BENCH}
STREAM = 999  # the photos' rng [seed, STREAM, i]: no default sweep draws it (theirs: a condition's index)
SIZE = (1600, 1200)


def photo(bench: PhotoBench, seed: int, i: int) -> tuple[np.ndarray, Truth]:
    """``bench``'s photo i of the set ``seed`` (``BENCH_SEED``) with a mug standing on the board,
    and its truth: what this bench reads, and what a test of one of its photos takes."""
    return bench.render(np.random.default_rng([seed, STREAM, i]), "standing_mug", SIZE)


def mug_on_board(bench: PhotoBench, seed: int, i: int) -> tuple[dict, Truth]:
    """``bench``'s reading of :func:`photo` i counted as this bench counts it (a row of one
    photo), with the photo's truth: a test's look at one of this bench's photos."""
    image, truth = photo(bench, seed, i)
    return sweep(bench, f"photo {i}", [(image, truth)]), truth


def main() -> None:
    cv2.setNumThreads(1)
    photos, seed = int(os.environ.get("BENCH_PHOTOS", "20")), bench_seed(8)
    print(f"Seed {seed}, {photos} photos per game, {SIZE[0]}x{SIZE[1]}.\n")
    print(table_head("game"))
    silent = []
    for name, bench in GAMES.items():
        row = sweep(bench, name, (photo(bench, seed, i) for i in range(photos)))
        print(table_row(row, bench.cells), flush=True)
        silent.append(f"{name} {row['silent']}")
    print(f"\nCells silently wrong: {', '.join(silent)}.")


if __name__ == "__main__":
    main()
