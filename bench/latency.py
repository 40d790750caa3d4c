"""Referee latency: from a placement becoming stable to its alert on the tablet.

Measures the part of the live loop after the camera has settled: ``Session.observe`` is
called with a board holding an illegal piece (mid-game, 40 pieces down), and the clock
stops when a Server-Sent Events client, reading ``/events`` over HTTP on localhost as the
tablet's browser does, receives the snapshot carrying the new alert. Goal: <= 1 s.
Each trial lifts the piece again (the camera sees it gone), so every alert is a new one.
"""
from __future__ import annotations

import http.client
import json
import logging
import queue
import statistics
import tempfile
import threading
import time

import numpy as np
from werkzeug.serving import make_server

from companion_app.server import Table, create_app
from rules import blokus
from rules.placement import Match, Move, random_playout

GOAL_MS = 1000.0
TRIALS = 40
PIECES_DOWN = 40


def _listen(port: int, out: "queue.Queue[tuple[float, dict]]", ready: threading.Event) -> None:
    """An SSE client: every snapshot with its arrival time."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    ready.set()
    data = []
    while True:
        line = response.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("data: "):
            data.append(line[6:])
        elif not line and data:
            out.put((time.perf_counter(), json.loads("".join(data))))
            data = []


def _game() -> tuple[list[list[str]], list[tuple[int, int]]]:
    """Boards of a game up to PIECES_DOWN pieces, and empty cells where a piece is illegal."""
    rules = blokus.rules()
    game = random_playout(rules, np.random.default_rng(11), PIECES_DOWN)
    match, stream = Match(rules), []
    for turn in game.turns:
        match = match.play(turn.move)
        if not turn.move.passed:
            stream.append(blokus.board_rows(match.position))
    rows = stream[-1]
    colour = match.colour_to_move
    illegal = [(r, c) for r in range(blokus.SIZE) for c in range(blokus.SIZE)
               if rows[r][c] == blokus.EMPTY and not match.play(Move(colour, ((r, c),))).turns[-1].legal]
    return stream, illegal[:: max(1, len(illegal) // TRIALS)][:TRIALS]


def _with(rows: list[str], cell: tuple[int, int], colour: str) -> list[str]:
    grid = [list(r) for r in rows]
    grid[cell[0]][cell[1]] = colour
    return ["".join(r) for r in grid]


def _wait(snapshots: "queue.Queue[tuple[float, dict]]", test) -> tuple[float, dict]:
    while True:
        arrived, snap = snapshots.get(timeout=10)
        if test(snap):
            return arrived, snap


def run() -> dict[str, list[float]]:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as data:
        app = create_app(data)
        table: Table = app.extensions["tableref"]
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            session = table.start_session({"game": "blokus", "variant": "classic"})
            stream, cells = _game()
            for t, rows in enumerate(stream):
                session.observe(rows, [], float(t))
            snapshots: queue.Queue = queue.Queue()
            ready = threading.Event()
            threading.Thread(target=_listen, args=(server.server_port, snapshots, ready), daemon=True).start()
            ready.wait(10)
            _wait(snapshots, lambda s: s["version"] == session.snapshot()["version"])
            board, colour = stream[-1], session.snapshot()["to_move"]
            seen: set[int] = set()
            observe_ms, alert_ms = [], []
            for cell in cells:
                started = time.perf_counter()
                session.observe(_with(board, cell, colour), [], 0.0)
                returned = time.perf_counter()
                arrived, snap = _wait(snapshots, lambda s: any(a["id"] not in seen for a in s["alerts"]))
                seen.update(a["id"] for a in snap["alerts"])
                observe_ms.append((returned - started) * 1000)
                alert_ms.append((arrived - started) * 1000)
                session.observe(board, [], 0.0)  # the piece is lifted again
                _wait(snapshots, lambda s: not s["alerts"])
        finally:
            server.shutdown()
            table.stop()
    return {"observe() returns": observe_ms, "alert reaches the SSE client": alert_ms}


def main() -> None:
    results = run()
    n = len(next(iter(results.values())))
    print(f"placement stable -> alert on the tablet: {n} illegal placements after {PIECES_DOWN} pieces, "
          f"SSE over HTTP on localhost")
    print(f"{'step':<32}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}")
    for name, samples in results.items():
        p95 = statistics.quantiles(samples, n=20)[-1]
        print(f"{name:<32}{statistics.median(samples):>11.1f}{p95:>9.1f}{max(samples):>9.1f}")
    worst = statistics.quantiles(results["alert reaches the SSE client"], n=20)[-1]
    print(f"goal: p95 <= {GOAL_MS:.0f} ms: {'met' if worst <= GOAL_MS else 'NOT MET'}")


if __name__ == "__main__":
    main()
