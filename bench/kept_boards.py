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

The same game seen without the misread is measured too: each board logs its placement at once,
no change waits, and the camera's last board alone is saved, replaced by each (session 22: a
restart judges the corrections the log brings back on it), with the corrections standing on it
(session 23): so a tap that makes one (the last piece's first square missed, tapped) rewrites
it, measured apart.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from companion_app.session import Session
from companion_app.store import FILENAME, Store
from rules import blokus
from rules.placement import Match, random_playout

PLACEMENTS = int(os.environ.get("KEPT_PLACEMENTS", "60"))
SEED = 5


def game_boards(placements: int) -> tuple[list[list[str]], Any]:
    """The camera's stable boards of a random game, one per placement, read right; and the game."""
    game = random_playout(blokus.rules(), np.random.default_rng(SEED), placements)
    match, boards = Match(blokus.rules()), []
    for turn in game.turns:
        match = match.play(turn.move)
        if not turn.move.passed:
            boards.append(blokus.board_rows(match.position))
    return boards, game


def stream(placements: int) -> tuple[list[list[str]], tuple[int, int], str]:
    """The camera's stable boards of a random game, one per placement but none between the
    second and third, with one square of the second misread in the third's colour from then
    on; and that square and its true colour."""
    boards, game = game_boards(placements)
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


def observed(folder: Path, boards: list[list[str]]) -> tuple[Session, dict[str, list]]:
    """A new game in ``folder`` that the camera sees as ``boards``; per board: rows written,
    write-ahead log bytes written, ``observe``'s wall and CPU seconds, boards kept."""
    store = Store.open(folder)
    # measuring only: the connection's row-change counter and no automatic checkpoint, so the
    # write-ahead log's size is every byte the commits wrote
    conn = store._conn
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    s = Session.start(store, {"variant": "classic"})
    per_board: dict[str, list] = {"rows": [], "wal": [], "seconds": [], "cpu": [], "kept": []}
    for t, board in enumerate(boards):
        changes, wal = conn.total_changes, _wal_bytes(folder)
        start, start_cpu = time.perf_counter(), time.process_time()
        s.observe(board, [], float(t))
        per_board["seconds"].append(time.perf_counter() - start)
        per_board["cpu"].append(time.process_time() - start_cpu)
        per_board["rows"].append(conn.total_changes - changes)
        per_board["wal"].append(_wal_bytes(folder) - wal)
        per_board["kept"].append(len(s.adapter.kept))
    return s, per_board


def run(folder: Path, placements: int) -> list[tuple[str, str]]:
    boards, square, colour = stream(placements)
    s, per_board = observed(folder, boards)
    rows_written, wal_written, seconds, cpu, kept = (per_board[k] for k in ("rows", "wal", "seconds", "cpu", "kept"))
    store = s.store
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


def without_hold(folder: Path, placements: int) -> list[tuple[str, str]]:
    """The same game read right: each board logs its placement at once, no change waits."""
    boards, _ = game_boards(placements)
    s, per_board = observed(folder, boards)
    logged = len(s.snapshot()["history"])
    saved = s.store.kept_boards(s.id)
    s.store.close()
    rows, wal = per_board["rows"], per_board["wal"]
    return [
        ("boards seen / turns logged / boards saved at the end (held)",
         f"{len(boards)} / {logged} / {len(saved)} ({sum(k.held for k in saved)})"),
        ("rows written, whole game (inserted + deleted, every table) / by the last board",
         f"{sum(rows)} / {rows[-1]}"),
        ("write-ahead log written, whole game / by the last board",
         f"{sum(wal) / 1024:.0f} KB / {wal[-1] / 1024:.1f} KB"),
    ]


def tap(folder: Path, placements: int) -> list[tuple[str, str]]:
    """The same game read right but for the last piece's first square, missed; then the tap that
    says the square is the piece's colour: what it writes (its event, and the camera's board
    saved again with the correction standing on it)."""
    boards, game = game_boards(placements)
    last = [t.move for t in game.turns if not t.move.passed][-1]
    (r, c), colour = last.cells[0], last.colour
    missed = [list(row) for row in boards[-1]]
    missed[r][c] = "."
    s, _ = observed(folder, [*boards[:-1], ["".join(row) for row in missed]])
    conn = s.store._conn
    changes, wal = conn.total_changes, _wal_bytes(folder)
    s.correct_cell((r, c), colour)
    rows, written = conn.total_changes - changes, _wal_bytes(folder) - wal
    s.store.close()
    return [("a tap on the last piece's missed square: rows / write-ahead log written",
             f"{rows} / {written / 1024:.1f} KB")]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        rows = run(Path(folder), PLACEMENTS)
    print(f"| a no-play hold never cleared, Blokus, {PLACEMENTS} placements (seed {SEED}) | measured |\n|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        rows = without_hold(Path(folder), PLACEMENTS)
    with tempfile.TemporaryDirectory() as folder:
        rows += tap(Path(folder), PLACEMENTS)
    print(f"\n| the same game read right, no hold | measured |\n|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
