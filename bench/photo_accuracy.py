"""The accuracy sweep every photo reader is measured by, whatever its board.

A game plugs in a :class:`PhotoBench`: how to render a photo of a random game under given
conditions (with its truth per cell) and how to read one. The sweep then reports, per
named condition of ``vision.synth.conditions``:

- *cell error*: cells read as the wrong class and NOT marked uncertain (silent misreads);
- *visible cell error*: the same among cells not hidden by a hand, cup or blinding glare;
- *misread*: cells whose best label is wrong, marked uncertain or not;
- *uncertain*: cells the reader marked uncertain;
- *exact*: boards whose every best label equals the truth;
- *right or marked*: boards with no silent misread (every wrong cell is marked uncertain):
  what a user can trust, since the reader says which cells to check;
- *no board*: photos the reader refused (all their cells count as misread, none as silent);
- *exact with every cell in sight*: the exact boards among photos where no hand, cup or
  blinding glare hides a cell (what the reader does with what a camera can see).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable

import cv2
import numpy as np

from vision.errors import ReadError
from vision.image_io import load_image, load_photo
from vision.synth.conditions import CONDITIONS

Cell = Hashable


@dataclass(frozen=True)
class Truth:
    labels: dict[Cell, str]  # every cell of the board
    occluded: set[Cell]
    # other truths equally right: a square board whose two upper sides lie level in the photo
    # may be read either way up (the contract's "row 0 nearest the top" is then a coin toss);
    # the reading is scored against whichever of them it matches best
    alternatives: tuple["Truth", ...] = ()
    # the board's corners in the photo (a benchmark that crops the photo cuts by them)
    corners: np.ndarray | None = None


@dataclass(frozen=True)
class PhotoBench:
    cells: int
    # (rng, condition name, size) -> (the photo as its file gives it, the truth); draws the
    # game first, then the condition's camera and light (sample_conditions)
    render: Callable[[np.random.Generator, str, tuple[int, int]], tuple[np.ndarray, Truth]]
    # image -> (best label per cell, uncertain cells)
    read: Callable[[np.ndarray], tuple[dict[Cell, str], set[Cell]]]
    # the short side a photo file is decoded for (``vision.photo.DECODE_SHORT_SIDE``): the
    # latency is that of the photo path, a 12 MP JPEG decoded reduced; None: decoded whole
    short_side: int | None = None


def upright(photo) -> np.ndarray:
    """The image a user's file gives: through our loader when the photo was saved as a file."""
    return load_image(photo.encoded) if photo.encoded is not None else photo.image


KEYS = ("photos", "silent", "visible", "misread", "uncertain", "exact", "refused", "marked", "unhidden",
        "unhidden_exact")


def bench_seed(default: int) -> int:
    """The sweep's seed: ``BENCH_SEED=N`` draws another set of photos, so a change tuned on the
    usual photos can be checked on ones it has never seen."""
    return int(os.environ.get("BENCH_SEED", default))


def new_stats(label: str) -> dict:
    """Zero counts of :data:`KEYS` for one row of a table (``label``: its condition or effect)."""
    return dict.fromkeys(KEYS, 0) | {"condition": label}


def score_photo(stats: dict, bench: PhotoBench, image: np.ndarray, truth: Truth) -> None:
    """Read one photo with ``bench`` and add what it got right and wrong to ``stats``."""
    stats["photos"] += 1
    stats["unhidden"] += int(not truth.occluded)
    try:
        labels, uncertain = bench.read(image)
    except ReadError:
        stats["refused"] += 1
        stats["misread"] += bench.cells
        return
    truth = min((truth, *truth.alternatives), key=lambda t: sum(labels.get(c) != lab for c, lab in t.labels.items()))
    wrong = {c for c, label in truth.labels.items() if labels.get(c) != label}
    silent = wrong - uncertain
    stats["silent"] += len(silent)
    stats["visible"] += len(silent - truth.occluded)
    stats["misread"] += len(wrong)
    stats["uncertain"] += len(uncertain)
    stats["exact"] += int(not wrong)
    stats["unhidden_exact"] += int(not wrong and not truth.occluded)
    stats["marked"] += int(not silent)


def sweep(bench: PhotoBench, label: str, photos: Iterable[tuple[np.ndarray, Truth]]) -> dict:
    """One row of counts (:func:`new_stats`, labelled ``label``): ``bench``'s reading of each of
    ``photos`` (a photo and its truth, rendered as it is read), said done on stderr."""
    stats = new_stats(label)
    for image, truth in photos:
        score_photo(stats, bench, image, truth)
    print(f"  {label}: done", file=sys.stderr, flush=True)
    return stats


def accuracy(bench: PhotoBench, per_condition: int, seed: int, size=(1600, 1200)) -> list[dict]:
    """A row per named condition: its photo i drawn from the rng ``[seed, k, i]`` (k: the
    condition's place in ``CONDITIONS``)."""
    return [sweep(bench, name, (bench.render(np.random.default_rng([seed, k, i]), name, size)
                                for i in range(per_condition)))
            for k, name in enumerate(CONDITIONS)]


def latency(bench: PhotoBench, size: tuple[int, int], photos: int) -> float:
    """Median seconds to read a JPEG file of a clean photo (decoding is part of the wait)."""
    return read_seconds(lambda rng: bench.render(rng, "clean", size)[0], bench.read, photos, bench.short_side)


def read_seconds(render: Callable[[np.random.Generator], np.ndarray], read: Callable[[np.ndarray], object],
                 photos: int, short_side: int | None = None) -> float:
    """Median seconds for ``read`` to take a JPEG file of each of ``photos`` rendered images,
    decoding included (a user's photo arrives as a file), decoded for ``short_side`` pixels
    (:func:`vision.image_io.load_photo`)."""
    times = []
    for i in range(photos):
        image = render(np.random.default_rng(500 + i))
        _, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        start = time.perf_counter()
        read(load_photo(jpeg.tobytes(), short_side)[0])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def percent(n: float, total: float, digits: int = 3) -> str:
    """``n`` as a share of ``total`` the way every bench table prints one ("1.250 %"), "-" when
    there was nothing to count."""
    return f"{100.0 * n / total:.{digits}f} %" if total else "-"


def table_head(first: str) -> str:
    """The Markdown head of a table of :func:`table_row` rows (``first``: what a row stands for)."""
    return (f"| {first} | photos | cell error (silent) | visible cell error | misread | uncertain | boards exact "
            "| no board | boards right or marked |\n|---|---|---|---|---|---|---|---|---|")


def table_row(row: dict, cells: int, shares: bool = False) -> str:
    """One row's counts (:func:`new_stats`) as a line of :func:`table_head`'s table, over boards
    of ``cells`` cells; ``shares``: its boards exact and right or marked as percentages (a total),
    not as counts."""
    n = row["photos"] * cells
    exact, marked = (percent(row[key], row["photos"], 1) if shares else f"{row[key]}/{row['photos']}"
                     for key in ("exact", "marked"))
    return (f"| {row['condition']} | {row['photos']} | {percent(row['silent'], n)} | {percent(row['visible'], n)} | "
            f"{percent(row['misread'], n)} | {percent(row['uncertain'], n)} | {exact} | {row['refused']} | {marked} |")


def report(bench: PhotoBench, per_condition: int, seed: int, goal_12mp: str) -> None:
    """Run the sweep and the latencies (one core) and print them as Markdown tables."""
    cv2.setNumThreads(1)
    rows = accuracy(bench, per_condition, bench_seed(seed))
    print(table_head("condition"))
    total = dict.fromkeys(KEYS, 0)
    for s in rows:
        print(table_row(s, bench.cells))
        for key in KEYS:
            total[key] += s[key]
    print(table_row(total | {"condition": "**all**"}, bench.cells, shares=True))
    print(f"\nBoards exact among the {total['unhidden']} photos with every cell in sight (no hand, cup or "
          f"blinding glare over a cell): {total['unhidden_exact']}/{total['unhidden']}")
    print("\n| latency (one core, file decode included) | median | goal |\n|---|---|---|")
    print(f"| 12 MP photo (4000x3000) | {latency(bench, (4000, 3000), 5):.2f} s | {goal_12mp} |")
    print(f"| 1280x720 photo | {latency(bench, (1280, 720), 10):.2f} s | |")
