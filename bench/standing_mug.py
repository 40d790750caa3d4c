"""A mug standing wholly on the board: what each board game's reader makes of it.

Every default bench's mugs reach in over the board's edge (the ``cup`` condition), where the
readers look for an occluder first. A mug set down on the board hides a patch of cells with
nothing of it touching the edge, and lends its colour to the cells at its rim. This bench reads
each game's bench photo (Blokus, Gemblo, Equilibrix: its own game, camera and light) with the
condition ``standing_mug`` (``vision.synth.conditions``: the ``cup`` photo's mug stood 1.3-3
diameters in from the edge) and counts as :mod:`bench.photo_accuracy` does.

``python -m bench standing_mug``; ``BENCH_PHOTOS=N`` photos per game (default 20),
``BENCH_SEED=N`` another set of photos (default 8, the seed sessions 12 and 13 measured on; 10
held out). Photo i of a seed draws from ``[seed, 999, i]``, as session 12's measurements did, so
their photos are these.
"""
from __future__ import annotations

import os
import sys

import cv2
import numpy as np

from . import equilibrix_bench, gemblo_bench, vision_bench
from .photo_accuracy import PhotoBench, bench_seed, new_stats, score_photo, table_head, table_row

GAMES: dict[str, PhotoBench] = {"Blokus": vision_bench.BENCH, "Gemblo": gemblo_bench.BENCH,
                                "Equilibrix": equilibrix_bench.BENCH}
STREAM = 999  # the photos' rng [seed, STREAM, i]: no default sweep draws it (theirs: a condition's index)
SIZE = (1600, 1200)


def sweep(name: str, bench: PhotoBench, photos: int, seed: int) -> dict:
    """Counts over ``photos`` of ``bench``'s photos with a mug standing on the board."""
    stats = new_stats(name)
    for i in range(photos):
        image, truth = bench.render(np.random.default_rng([seed, STREAM, i]), "standing_mug", SIZE)
        score_photo(stats, bench, image, truth)
    print(f"  {name}: done", file=sys.stderr, flush=True)
    return stats


def main() -> None:
    cv2.setNumThreads(1)
    photos, seed = int(os.environ.get("BENCH_PHOTOS", "20")), bench_seed(8)
    print(f"Seed {seed}, {photos} photos per game, {SIZE[0]}x{SIZE[1]}.\n")
    print(table_head("game"))
    silent = []
    for name, bench in GAMES.items():
        row = sweep(name, bench, photos, seed)
        print(table_row(row, bench.cells), flush=True)
        silent.append(f"{name} {row['silent']}")
    print(f"\nCells silently wrong: {', '.join(silent)}.")


if __name__ == "__main__":
    main()
