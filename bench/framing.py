"""Boards cut by the photo's edge: what each cell reader makes of a tightly framed photo.

Players frame a phone photo on the board, and a strip of it often falls outside the picture.
No named condition draws that (the renderer always shows the whole board), so this bench
takes generated photos and cuts 5 % or 12 % of the board's extent off the left, top, right or
bottom (8 crops a photo). A cell outside the photo cannot be read: the reader must mark it
uncertain (or refuse the photo), never guess it silently. Counted as in
:mod:`bench.photo_accuracy`, against the whole board's truth.

``python -m bench framing``; ``FRAMING_PHOTOS=N`` photos per condition and seed (default 2:
2 x 3 conditions x 2 seeds x 8 crops = 96 crops a game); ``BENCH_SEED=N`` one other seed.
"""
from __future__ import annotations

import os
import sys

import cv2
import numpy as np

from vision.synth.conditions import CONDITIONS

from . import equilibrix_bench, gemblo_bench, vision_bench
from .photo_accuracy import PhotoBench, new_stats, percent, score_photo

CUTS = (0.05, 0.12)  # share of the board's width or height cut off
SIDES = ("left", "top", "right", "bottom")
FRAMED = ("clean", "perspective", "rotation")  # conditions whose whole board is in sight before the cut
GAMES: dict[str, tuple[PhotoBench, tuple[int, ...]]] = {  # each game's bench and the seeds session 6 measured
    "blokus": (vision_bench.BENCH, (1, 11)),
    "gemblo": (gemblo_bench.BENCH, (2, 17)),
    "equilibrix": (equilibrix_bench.BENCH, (3, 11)),
}


def cut(image: np.ndarray, corners: np.ndarray, side: str, share: float) -> np.ndarray:
    """``image`` without the strip beyond ``share`` of the board's extent (the box round its
    ``corners``) on ``side``. The corners are each game's truth (Gemblo's are its corner
    cells' centres, so its plate's rim reaches a little beyond the box); a box reaching past
    the photo is cut at the photo's edge."""
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    at = {"left": x0 + share * (x1 - x0), "right": x1 - share * (x1 - x0),
          "top": y0 + share * (y1 - y0), "bottom": y1 - share * (y1 - y0)}[side]
    at = max(0, int(at))
    kept = {"left": np.s_[:, at:], "right": np.s_[:, :at],
            "top": np.s_[at:], "bottom": np.s_[:at]}[side]
    return np.ascontiguousarray(image[kept])


def sweep(bench: PhotoBench, photos: int, seeds: tuple[int, ...]) -> dict:
    """Counts over every crop of ``photos`` photos per framed condition and seed, plus
    ``broken``: crops with any cell silently wrong."""
    total = new_stats("crops") | {"broken": 0}
    for seed in seeds:
        for condition in FRAMED:
            k = list(CONDITIONS).index(condition)
            for i in range(photos):
                image, truth = bench.render(np.random.default_rng([seed, k, i]), condition, (1600, 1200))
                for side in SIDES:
                    for share in CUTS:
                        crop = new_stats("crop")
                        score_photo(crop, bench, cut(image, truth.corners, side, share), truth)
                        total["broken"] += crop["silent"] > 0
                        for key, value in crop.items():
                            if key != "condition":
                                total[key] += value
            print(f"  seed {seed} {condition}: done", file=sys.stderr, flush=True)
    return total


def main() -> None:
    cv2.setNumThreads(1)
    photos = int(os.environ.get("FRAMING_PHOTOS", "2"))
    print("| game | seeds | crops | cell error (silent) | crops with a cell silently wrong | uncertain | refused |\n"
          "|---|---|---|---|---|---|---|")
    for name, (bench, seeds) in GAMES.items():
        seeds = (int(os.environ["BENCH_SEED"]),) if os.environ.get("BENCH_SEED") else seeds
        t = sweep(bench, photos, seeds)
        n = (t["photos"] - t["refused"]) * bench.cells  # cells of the crops read
        print(f"| {name} | {', '.join(map(str, seeds))} | {t['photos']} | {percent(t['silent'], n)} | {t['broken']} | "
              f"{percent(t['uncertain'], n, 1)} | {t['refused']} |", flush=True)


if __name__ == "__main__":
    main()
