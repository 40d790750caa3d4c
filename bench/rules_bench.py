"""Rules engine timings: one placement check, a full legal-move enumeration, a whole game.

Goals (issue 2, this 2-core machine): <= 20 us median per check, <= 5 ms per enumeration of
one colour's legal moves with 40 pieces on the board, <= 0.5 s to self-play and check a game.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from rules import blokus
from rules.placement import check_placement, legal_placements, play_all, random_playout


def _median_us(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e6)
    return statistics.median(samples)


def run() -> list[tuple[str, str, str]]:
    r = blokus.rules()
    r.table  # built once per process, outside the timings
    positions = [random_playout(r, np.random.default_rng(s), 40) for s in range(20)]
    checks, enums = [], []
    for m in positions:
        colour = m.colour_to_move
        options = legal_placements(r, m.position, colour)
        cells = r.board.cells_of(options[0][1]) if options else [(0, 0)]
        checks.append(_median_us(lambda: check_placement(r, m.position, colour, cells), 200))
        enums.append(_median_us(lambda: legal_placements(r, m.position, colour), 20))
    games = []
    for seed in range(10):
        t = time.perf_counter()
        played = random_playout(r, np.random.default_rng(100 + seed))
        play_all(r, [turn.move for turn in played.turns])
        games.append(time.perf_counter() - t)
    return [
        ("placement check (median)", f"{statistics.median(checks):.1f} us", "<= 20 us"),
        ("legal moves of one colour, 40 pieces down", f"{statistics.median(enums) / 1000:.2f} ms", "<= 5 ms"),
        ("self-play + check a 4-colour game", f"{statistics.median(games):.3f} s", "<= 0.5 s"),
    ]


def main() -> None:
    rows = run()
    print("| rules engine | measured | goal |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
