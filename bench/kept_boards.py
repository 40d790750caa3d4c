"""What saving a long hold costs: disk written and time per camera board while a change waits.

A Blokus game of ``KEPT_PLACEMENTS`` (default 60) random placements, seen one stable board
each, except that the second and third pieces are first seen together, a square of the second
read in the third's colour, unnoticed (no doubt): that is no play (three pieces), so the change
is held back and, the square never tapped, never clears: every later board is kept for the
late tap and saved (``kept_boards``), the longest hold a table can make. Per board: rows
written (inserted or deleted), bytes appended to the database's write-ahead log (every page a
commit writes goes there first; automatic checkpoints are off, so it only grows), and the time
of ``Session.observe`` (wall clock, with the commits' syncs to disk, and CPU). At the end the
server restarts, the resumed session must hold the same boards, and the player's tap on the
square must log the whole game.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

from companion_app.session import Session
from companion_app.store import FILENAME, Store
from rules import blokus
from rules.placement import Match, random_playout

PLACEMENTS = int(os.environ.get("KEPT_PLACEMENTS", "60"))
SEED = 5


def stream(placements: int) -> tuple[list[list[str]], tuple[int, int], str]:
    """The camera's stable boards of a random game, one per placement but none between the
    second and third, with one square of the second misread in the third's colour from then
    on; and that square and its true colour."""
    game = random_playout(blokus.rules(), np.random.default_rng(SEED), placements)
    match, boards = Match(blokus.rules()), []
    for turn in game.turns:
        match = match.play(turn.move)
        if not turn.move.passed:
            boards.append(blokus.board_rows(match.position))
    second, third = (t.move for t in game.turns[1:3])
    square = second.cells[0]
    seen = [boards[0]]
    for rows in boards[2:]:
        grid = [list(r) for r in rows]
        grid[square[0]][square[1]] = third.colour
        seen.append(["".join(r) for r in grid])
    return seen, square, second.colour


def _wal_bytes(folder: Path) -> int:
    wal = folder / (FILENAME + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def _ms(samples: list[float], q: float) -> str:
    return f"{np.percentile(samples, q) * 1000:.2f} ms"


def run(folder: Path, placements: int) -> list[tuple[str, str]]:
    boards, square, colour = stream(placements)
    store = Store.open(folder)
    # measuring only: the connection's row-change counter and no automatic checkpoint, so the
    # write-ahead log's size is every byte the commits wrote
    conn = store._conn
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    s = Session.start(store, {"variant": "classic"})
    rows_written, wal_written, seconds, cpu, kept = [], [], [], [], []
    for t, board in enumerate(boards):
        changes, wal = conn.total_changes, _wal_bytes(folder)
        start, start_cpu = time.perf_counter(), time.process_time()
        s.observe(board, [], float(t))
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        rows_written.append(conn.total_changes - changes)
        wal_written.append(_wal_bytes(folder) - wal)
        kept.append(len(s.adapter.kept))
    held = store.kept_boards(s.id)
    logged = len(s.snapshot()["history"])
    store.close()
    again = Session.resume(Store.open(folder))
    resumed = again.store.kept_boards(again.id) == held and again.adapter.held_boards() == held
    start = time.perf_counter()
    again.correct_cell(square, colour)
    tap = time.perf_counter() - start
    history = again.snapshot()["history"]
    again.store.close()
    last = len(boards) - 1
    return [
        ("boards seen / placements logged before the tap / boards kept at the end",
         f"{len(boards)} / {logged} / {kept[-1]}"),
        ("rows written, whole hold (inserted + deleted, every table)", f"{sum(rows_written)}"),
        ("rows written by the last board", f"{rows_written[last]}"),
        ("write-ahead log written, whole hold", f"{sum(wal_written) / 1024:.0f} KB"),
        ("write-ahead log written by the last board", f"{wal_written[last] / 1024:.1f} KB"),
        ("observe, wall clock: median / p95 / last 10 boards' median",
         f"{_ms(seconds, 50)} / {_ms(seconds, 95)} / {_ms(seconds[-10:], 50)}"),
        ("observe, CPU time: median / last 10 boards' median", f"{_ms(cpu, 50)} / {_ms(cpu[-10:], 50)}"),
        ("restart resumes the same boards", "yes" if resumed else "NO"),
        ("the late tap: turns logged (each placement, and the passes the board made due) / its time",
         f"{len(history)} / {tap * 1000:.0f} ms"),
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        rows = run(Path(folder), PLACEMENTS)
    print(f"| a no-play hold never cleared, Blokus, {PLACEMENTS} placements (seed {SEED}) | measured |\n|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
