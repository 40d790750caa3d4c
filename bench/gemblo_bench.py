"""Gemblo photo reading: accuracy over generated photos per named condition, and latency.

Goals: per-cell error <= 0.1 % with clear pieces, >= 95 % of boards read exactly right,
median <= 0.7 s per 12 MP photo. Photos come from ``vision.synth.gemblo`` with exact ground
truth; each condition draws its own camera, light and game (random legal 6-colour playouts,
clear pieces included). The figures are those of :mod:`bench.photo_accuracy`.

``python -m bench gemblo_bench``; ``BENCH_PHOTOS=N`` sets the photos per condition (default 6).
``python -m bench.gemblo_bench fit`` refits the clear-piece weights of ``vision.gemblo_clear``
(``FIT_PHOTOS=N`` per condition, default 6) on photos whose seeds the sweep never draws.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from rules import gemblo
from rules.placement import random_playout
from vision import gemblo_cells, gemblo_clear
from vision.errors import ReadError
from vision.gemblo import locate_board, read_gemblo
from vision.hexgrid import cells, key
from vision.photo import DECODE_SHORT_SIDE
from vision.pose import rectify
from vision.synth.conditions import CONDITIONS, sample_conditions
from vision.synth.gemblo import render_photo

from .photo_accuracy import PhotoBench, Truth, report, upright

NAMES = [key(c) for c in cells()]


def _render(rng, condition, size):
    game = random_playout(gemblo.rules(gemblo.Setup()), rng, int(rng.integers(10, 90)))
    photo = render_photo(gemblo.cells_json(game.position), sample_conditions(condition, rng), rng, size=size)
    return upright(photo), Truth({n: photo.cells.get(n, ".") for n in NAMES}, set(photo.occluded),
                                 corners=np.asarray(photo.corners, float))  # corner cells: bench.framing cuts by them


def _read(image):
    reading = read_gemblo(image)
    return {n: reading.cells.get(n, ".") for n in NAMES}, set(reading.uncertain)


BENCH = PhotoBench(len(NAMES), _render, _read, DECODE_SHORT_SIDE.get("gemblo"))


def main() -> None:
    report(BENCH, int(os.environ.get("BENCH_PHOTOS", "6")), seed=2, goal_12mp="<= 0.7 s")


def _clear_examples(per_condition: int) -> tuple[np.ndarray, np.ndarray]:
    """The clear-piece evidence (z-scores and their squared positive parts) of every visible
    cell read as empty by colour, and whether it holds a clear piece."""
    xs, ys = [], []
    for k, name in enumerate(CONDITIONS):
        for i in range(per_condition):
            rng = np.random.default_rng([99, k, i])  # seed 99: no sweep draws it (BENCH_SEED != 99)
            game = random_playout(gemblo.rules(gemblo.Setup()), rng, int(rng.integers(10, 90)))
            photo = render_photo(gemblo.cells_json(game.position), sample_conditions(name, rng), rng,
                                 size=(1600, 1200))
            image = upright(photo)
            try:
                pose = locate_board(image)
            except ReadError:
                continue
            gray, lab = gemblo_clear.grey_and_lab(rectify(image, pose, gemblo_cells.CLEAR_PPU, 0.0))
            post = gemblo_clear.probabilities(rectify(image, pose, gemblo_cells.PPU, 0.0), gray, lab)[0]
            empty = post[:, 0] + post[:, -1] >= post.max(axis=1)  # read as empty by colour
            z = gemblo_clear.clear_zscores(gemblo_clear.clear_features(gray, lab), empty)
            truth = np.array([photo.cells.get(n, ".") for n in NAMES])
            keep = empty & np.isin(truth, [".", "C"]) & ~np.isin(NAMES, list(photo.occluded))
            xs.append(np.column_stack([z, np.clip(z, 0, None) ** 2 / gemblo_clear.CLIP_Z])[keep])
            ys.append(truth[keep] == "C")
        print(f"  {name}: done", file=sys.stderr, flush=True)
    return np.vstack(xs), np.concatenate(ys).astype(float)


def fit_clear_weights(per_condition: int, ridge: float = 3.0) -> np.ndarray:
    """Logistic regression (Newton's method, L2 ``ridge``) of clear against empty; the last
    weight is the bias."""
    x, y = _clear_examples(per_condition)
    a = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(a.shape[1])
    penalty = ridge * np.r_[np.ones(len(w) - 1), 0.0]
    for _ in range(40):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -30, 30)))
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        w -= np.linalg.solve(hessian, a.T @ (p - y) + penalty * w)
    return w


if __name__ == "__main__":
    if sys.argv[1:] == ["fit"]:
        np.set_printoptions(precision=3, suppress=True, linewidth=110)
        print(repr(fit_clear_weights(int(os.environ.get("FIT_PHOTOS", "6")))))
    else:
        main()
