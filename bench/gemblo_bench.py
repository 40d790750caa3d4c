"""Gemblo photo reading: accuracy over generated photos per named condition, and latency.

Goals: per-cell error <= 0.1 % with clear pieces, >= 95 % of boards read exactly right,
median <= 0.7 s per 12 MP photo. Photos come from ``vision.synth.gemblo`` with exact ground
truth; each condition draws its own camera, light and game (random legal 6-colour playouts,
clear pieces included).

Figures per condition (as ``bench/vision_bench.py``): *cell error* = wrong and not marked
uncertain (silent); *misread* = best label wrong; *uncertain* = marked uncertain; *exact* =
boards whose every label is right; *no board* = refused photos (all cells misread, none silent).
Occluded cells (hand, cup, glare) count like any other.

``python -m bench.gemblo_bench`` (not yet listed in ``bench.__main__.BENCHES``);
``BENCH_PHOTOS=N`` sets the photos per condition (default 6).
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import cv2
import numpy as np

from rules import gemblo
from rules.placement import random_playout
from vision.errors import ReadError
from vision.gemblo import read_gemblo
from vision.hexgrid import cells, key
from vision.image_io import load_image
from vision.synth.conditions import CONDITIONS, sample_conditions
from vision.synth.gemblo import render_photo

CELLS = 463


def _game(rng: np.random.Generator, placements: int) -> dict[str, str]:
    return gemblo.cells_json(random_playout(gemblo.rules(gemblo.Setup()), rng, placements).position)


def accuracy(per_condition: int, size=(1600, 1200)) -> list[dict]:
    rows = []
    names = [key(c) for c in cells()]
    for k, name in enumerate(CONDITIONS):
        stats = {"condition": name, "photos": 0, "silent": 0, "misread": 0, "uncertain": 0,
                 "exact": 0, "refused": 0}
        for i in range(per_condition):
            rng = np.random.default_rng(20_000 * k + i)
            photo = render_photo(_game(rng, int(rng.integers(10, 90))), sample_conditions(name, rng), rng, size=size)
            image = load_image(photo.encoded) if photo.encoded is not None else photo.image
            stats["photos"] += 1
            try:
                reading = read_gemblo(image)
            except ReadError:
                stats["refused"] += 1
                stats["misread"] += CELLS
                continue
            doubt = set(reading.uncertain)
            wrong = [n for n in names if photo.cells.get(n, ".") != reading.cells.get(n, ".")]
            stats["silent"] += sum(n not in doubt for n in wrong)
            stats["misread"] += len(wrong)
            stats["uncertain"] += len(doubt)
            stats["exact"] += int(not wrong)
        rows.append(stats)
        print(f"  {name}: done", file=sys.stderr, flush=True)
    return rows


def latency(size: tuple[int, int], photos: int) -> float:
    times = []
    for i in range(photos):
        rng = np.random.default_rng(700 + i)
        photo = render_photo(_game(rng, 60), sample_conditions("clean", rng), rng, size=size)
        _, jpeg = cv2.imencode(".jpg", photo.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        start = time.perf_counter()
        read_gemblo(load_image(jpeg.tobytes()))  # decoding the file is part of a user's wait
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.3f} %" if total else "-"


def main() -> None:
    per_condition = int(os.environ.get("BENCH_PHOTOS", "6"))
    cv2.setNumThreads(1)
    rows = accuracy(per_condition)
    print("| condition | photos | cell error (silent) | misread | uncertain | boards exact | no board |")
    print("|---|---|---|---|---|---|---|")
    total = {"photos": 0, "silent": 0, "misread": 0, "uncertain": 0, "exact": 0, "refused": 0}
    for s in rows:
        n = s["photos"] * CELLS
        print(f"| {s['condition']} | {s['photos']} | {_pct(s['silent'], n)} | {_pct(s['misread'], n)} | "
              f"{_pct(s['uncertain'], n)} | {s['exact']}/{s['photos']} | {s['refused']} |")
        for k in total:
            total[k] += s[k]
    n = total["photos"] * CELLS
    print(f"| **all** | {total['photos']} | {_pct(total['silent'], n)} | {_pct(total['misread'], n)} | "
          f"{_pct(total['uncertain'], n)} | {100.0 * total['exact'] / total['photos']:.1f} % | {total['refused']} |")
    print()
    print("| latency (one core, file decode included) | median | goal |\n|---|---|---|")
    print(f"| 12 MP photo (4000x3000) | {latency((4000, 3000), 3):.2f} s | <= 0.7 s |")
    print(f"| 1280x720 photo | {latency((1280, 720), 5):.2f} s | |")


if __name__ == "__main__":
    main()
