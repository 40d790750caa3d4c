"""The live session: its log survives restarts and kills, corrections and take-backs re-judge
the game, alerts stay until acknowledged, and a damaged database is reported, not lost."""
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from companion_app.server import open_store
from companion_app.session import Broadcast, Session, SessionError
from companion_app.store import FILENAME, CorruptDatabase, Store, StoreError
from rules import blokus
from rules.placement import Match, Move, random_playout
from rules.records import parse_record

ROOT = Path(__file__).resolve().parent.parent

# A scripted opening: four legal first pieces, then blue lays a domino along its own edge (B5).
# Yellow's piece is really an I5 whose fifth square (0, 15) the camera misses.
SCRIPT = (
    Move("B", ((0, 0), (1, 0), (1, 1))),
    Move("Y", ((0, 19), (0, 18), (0, 17), (0, 16))),
    Move("R", ((19, 19), (18, 19))),
    Move("G", ((18, 0), (19, 0), (19, 1), (19, 2))),
    Move("B", ((2, 1), (2, 2))),
)
MISSED = (0, 15)


def boards(moves=SCRIPT) -> list[list[str]]:
    """The stable board after each move, as the camera would report it."""
    grid = [["."] * blokus.SIZE for _ in range(blokus.SIZE)]
    out = []
    for move in moves:
        for r, c in move.cells:
            grid[r][c] = move.colour
        out.append(["".join(row) for row in grid])
    return out


def score_of(snapshot, colour):
    return next(p["score"] for p in snapshot["scores"]["players"] if colour in p["colours"])


def new_session(tmp_path, **setup) -> Session:
    return Session.start(Store.open(tmp_path), {"variant": "classic", **setup})


def play(session, rows_list):
    for t, rows in enumerate(rows_list):
        session.observe(rows, [], float(t))


def test_observed_boards_become_judged_moves(tmp_path):
    s = new_session(tmp_path)
    play(s, boards())
    snap = s.snapshot()
    assert snap["board"] == boards()[-1]
    assert [h["colour"] for h in snap["history"]] == ["B", "Y", "R", "G", "B"]
    assert [h["legal"] for h in snap["history"]] == [True, True, True, True, False]
    assert snap["last"] == {"index": 4, "colour": "B", "cells": [[2, 1], [2, 2]]}
    assert snap["to_move"] == "Y"
    assert score_of(snap, "Y") == -(89 - 4)


def test_restart_resumes_exactly(tmp_path):
    s = new_session(tmp_path, players=[{"name": "Ann", "colours": ["B"]}, {"name": "Bo", "colours": ["Y"]},
                                       {"name": "Cy", "colours": ["R"]}, {"name": "Di", "colours": ["G"]}])
    play(s, boards()[:3])
    before = s.snapshot()
    s.store.close()

    again = Session.resume(Store.open(tmp_path))
    after = again.snapshot()
    for key in ("board", "history", "scores", "to_move", "last", "players", "session"):
        assert after[key] == before[key], key
    assert again.export_record() == s.export_record()
    # and play goes on from there
    play(again, boards()[3:4])
    assert again.snapshot()["to_move"] == "B"


def test_kill_mid_game_loses_no_recorded_move(tmp_path):
    """A real SIGKILL while the referee records: every move it reported recorded is on disk."""
    child = textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from companion_app.store import Store
        from companion_app.session import Session
        s = Session.start(Store.open({str(tmp_path)!r}), {{"variant": "classic"}})
        for t, rows in enumerate(json.loads(sys.stdin.readline())):
            s.observe(rows, [], float(t))
            print(t, flush=True)
        time.sleep(60)
    """)
    game = random_playout(blokus.rules(), np.random.default_rng(5), 30)
    match, stream = Match(blokus.rules()), []
    for turn in game.turns:
        match = match.play(turn.move)
        if not turn.move.passed:
            stream.append(blokus.board_rows(match.position))
    proc = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(stream) + "\n")
    proc.stdin.flush()
    reported = -1
    try:
        while reported < 11:
            line = proc.stdout.readline()
            assert line, "the recording process died early"
            reported = int(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    resumed = Session.resume(Store.open(tmp_path))
    placed = [h for h in resumed.snapshot()["history"] if not h["pass"]]
    assert len(placed) >= reported + 1
    assert resumed.snapshot()["board"] == stream[len(placed) - 1]


def test_a_change_next_to_an_unreadable_cell_waits(tmp_path):
    s = new_session(tmp_path)
    play(s, boards()[:1])
    half_seen = boards()[1]
    s.observe(half_seen, [(0, 15)], 1.0)  # the square beside yellow's piece is unreadable
    snap = s.snapshot()
    assert len(snap["history"]) == 1 and [0, 15] in snap["uncertain"] and [0, 16] in snap["uncertain"]
    s.observe(half_seen, [], 2.0)  # read clearly now
    assert [h["colour"] for h in s.snapshot()["history"]] == ["B", "Y"]


def test_correction_changes_scores_and_is_kept(tmp_path):
    s = new_session(tmp_path)
    play(s, boards())
    assert score_of(s.snapshot(), "Y") == -85
    s.correct_cell(*MISSED, "Y")  # the camera missed the I5's fifth square
    snap = s.snapshot()
    assert snap["board"][0][15] == "Y"
    yellow = next(h for h in snap["history"] if h["colour"] == "Y")
    assert yellow["piece"] == "I5" and yellow["legal"]
    assert score_of(snap, "Y") == -84
    # the next camera board still misses the square: the correction holds
    s.observe(boards()[-1], [], 10.0)
    assert s.snapshot()["board"][0][15] == "Y" and s.snapshot()["uncertain"] == []
    # and survives a restart
    s.store.close()
    assert score_of(Session.resume(Store.open(tmp_path)).snapshot(), "Y") == -84


def test_correction_to_empty_and_a_missed_monomino(tmp_path):
    s = new_session(tmp_path)
    play(s, boards()[:2])
    s.correct_cell(0, 16, ".")  # a shadow read as yellow: the I4 was an I3
    snap = s.snapshot()
    assert snap["history"][1]["piece"] == "I3" and snap["board"][0][16] == "."
    s.correct_cell(5, 5, "R")  # touches no red piece: a piece of its own, red's monomino
    snap = s.snapshot()
    assert snap["history"][-1]["colour"] == "R" and snap["history"][-1]["piece"] == "1"
    assert not snap["history"][-1]["legal"]  # not in a corner (B3)
    with pytest.raises(SessionError):
        s.correct_cell(0, 20, "R")
    with pytest.raises(SessionError):
        s.correct_cell(0, 0, "X")


def test_alert_stays_until_acknowledged(tmp_path):
    s = new_session(tmp_path)
    play(s, boards())
    alerts = s.snapshot()["alerts"]
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert["rule"] == "B5" and alert["code"] == "edge_contact_same_colour"
    assert alert["index"] == 4 and alert["colour"] == "B" and alert["message"]
    assert [2, 1] in alert["cells"]
    # unrelated updates keep it
    s.set_camera("ok", "watching")
    s.observe(boards()[-1], [], 9.0)
    assert s.snapshot()["alerts"] == alerts
    s.acknowledge(alert["id"])
    assert s.snapshot()["alerts"] == []
    with pytest.raises(SessionError):
        s.acknowledge(9999)
    # acknowledged stays acknowledged across a restart
    s.store.close()
    assert Session.resume(Store.open(tmp_path)).snapshot()["alerts"] == []


def test_take_back_by_tap_and_by_camera(tmp_path):
    s = new_session(tmp_path)
    play(s, boards())
    s.take_back(4)  # the illegal blue domino
    snap = s.snapshot()
    assert len(snap["history"]) == 4 and snap["alerts"] == [] and snap["to_move"] == "B"
    # the piece is still on the table until lifted: its squares show as unsure
    assert sorted(snap["uncertain"]) == [[2, 1], [2, 2]]
    s.observe(boards()[3], [], 20.0)  # lifted
    assert s.snapshot()["uncertain"] == []
    # the camera sees green's piece lifted off
    s.observe(boards()[2], [], 21.0)
    assert [h["colour"] for h in s.snapshot()["history"]] == ["B", "Y", "R"]
    with pytest.raises(SessionError):
        s.take_back(7)


def test_a_declared_pass_with_a_move_left_is_a_warning(tmp_path):
    s = new_session(tmp_path)
    play(s, boards()[:1])
    s.declare_pass()  # yellow says it passes, though it can still place
    snap = s.snapshot()
    assert snap["history"][-1]["pass"] and snap["to_move"] == "R"
    [alert] = snap["alerts"]
    assert alert["rule"] == "B7" and alert["code"] == "illegal_pass" and alert["warning"]


def test_game_over_passes_and_exports(tmp_path):
    game = random_playout(blokus.rules(), np.random.default_rng(8))
    s = new_session(tmp_path)
    match = Match(blokus.rules())
    for turn in game.turns:
        match = match.play(turn.move)
        if not turn.move.passed:
            s.observe(blokus.board_rows(match.position), [], 0.0)
    snap = s.snapshot()
    assert snap["game_over"] and snap["to_move"] is None
    assert all(h["legal"] for h in snap["history"])
    assert any(h["pass"] and h["auto"] for h in snap["history"])
    record = parse_record(s.export_record())
    replayed = blokus.new_match(record.setup)
    for move in record.moves:
        replayed = replayed.play(move)
    assert blokus.board_rows(replayed.position) == snap["board"]
    assert s.export_sgf().startswith("(;FF[4]")
    with pytest.raises(SessionError):
        s.take_back(len(snap["history"]) - 1)  # a pass the board made due


def test_slow_subscriber_never_blocks(tmp_path):
    broadcast = Broadcast()
    slow = broadcast.subscribe()
    s = Session.start(Store.open(tmp_path), {"variant": "classic"}, broadcast=broadcast)
    started = time.perf_counter()
    for i in range(200):
        s.set_camera("ok", f"frame {i}")
    assert time.perf_counter() - started < 2
    newest = json.loads(slow.get(0))
    assert newest["camera"]["message"] == "frame 199" and slow.get(0) is None


def test_bad_setup_is_refused(tmp_path):
    with pytest.raises(SessionError, match="variant"):
        new_session(tmp_path, variant="five-player")
    with pytest.raises(SessionError):
        Session.start(Store.open(tmp_path), {"variant": "classic"}, game="gemblo")


def test_corrupt_database_is_moved_aside_and_reported(tmp_path):
    damaged = b"this is not a database" * 100
    (tmp_path / FILENAME).write_bytes(damaged)
    with pytest.raises(CorruptDatabase) as caught:
        Store.open(tmp_path)
    assert caught.value.moved_to.read_bytes() == damaged
    assert "damaged" in caught.value.message and str(caught.value.moved_to) in caught.value.message
    store = Store.open(tmp_path)  # a fresh file now
    assert store.latest_open_session() is None


def test_server_reports_a_damaged_database(tmp_path, capsys):
    (tmp_path / FILENAME).write_bytes(b"\0garbage" * 512)
    store, notice = open_store(tmp_path)
    assert notice and "moved to" in notice
    assert "damaged" in capsys.readouterr().err
    assert len(list(tmp_path.glob(FILENAME + ".corrupt-*"))) == 1
    store.close()


def test_database_from_a_newer_version_is_refused(tmp_path):
    Store.open(tmp_path).close()
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer"):
        Store.open(tmp_path)
    assert (tmp_path / FILENAME).exists()


def test_every_write_is_committed(tmp_path):
    s = new_session(tmp_path)
    play(s, boards()[:2])
    # another connection (another process) sees the moves without any close or flush
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM events ORDER BY id")]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert kinds == ["move", "move"] and mode == "wal"
