"""The live loop: frame sources keep their own clock and survive a camera dropping out; the
referee reads only still boards with nothing over them, after the same seconds at any frame
rate, finds a bumped board again, and turns a filmed game into exactly its moves."""
import dataclasses
import sys
import threading
import time
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from companion_app import demo
from companion_app.live import BoardVision, LiveReferee
from companion_app.session import Session
from companion_app.sources import CameraSource, FolderSource, SourceError, VideoSource
from companion_app.store import Store
from rules import blokus, gemblo
from rules.observe import Observed, as_cell, observe, take_back


def frame(value: int, size=(64, 48)) -> np.ndarray:
    return np.full((size[1], size[0], 3), value, np.uint8)


# --- sources ---------------------------------------------------------------------------

class FlakyCapture:
    """A camera that works for a few frames, then drops out (cable pulled)."""

    def __init__(self, opened: bool, frames: int):
        self.opened, self.left = opened, frames

    def isOpened(self):
        return self.opened

    def read(self):
        if not self.opened or self.left == 0:
            return False, None
        self.left -= 1
        return True, frame(self.left)

    def release(self):
        self.opened = False


def test_camera_dropping_out_is_reported_and_reopened_with_backoff():
    plan = [FlakyCapture(True, 2), FlakyCapture(False, 0), FlakyCapture(False, 0), FlakyCapture(True, 3)]
    opened = []

    def open_capture(index):
        opened.append(time.monotonic())
        return plan[len(opened) - 1] if len(opened) <= len(plan) else FlakyCapture(True, 10**6)

    camera = CameraSource(0, backoff=(0.02, 0.05), open_capture=open_capture)
    reports = []
    got = []
    for t, image in camera.frames(lambda status, message: reports.append(status)):
        got.append(t)
        if len(got) == 5:
            break
    assert reports == ["camera_disconnected"] * 3
    assert len(opened) == 4
    gaps = np.diff(opened)
    assert gaps[1] >= 0.02 and gaps[2] >= 0.04  # the pause doubles (0.02, 0.04, capped at 0.05)
    assert got == sorted(got)  # wall-clock timestamps, in order


def test_closing_a_camera_interrupts_its_backoff():
    camera = CameraSource(0, backoff=(60.0, 60.0), open_capture=lambda i: FlakyCapture(False, 0))
    done = threading.Event()

    def consume():
        for _ in camera.frames():
            pass
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    time.sleep(0.1)
    camera.close()
    assert done.wait(10.0)  # long before the 60 s pause would end


def test_folder_frames_in_name_order_with_fps_timestamps(tmp_path):
    for name, value in (("b.png", 20), ("a.png", 10), ("c.jpg", 30)):
        cv2.imwrite(str(tmp_path / name), frame(value, (320, 240)))
    (tmp_path / "notes.txt").write_text("not a frame")
    (tmp_path / "d.png").write_bytes(b"broken")
    reports = []
    got = list(FolderSource(tmp_path, fps=4.0).frames(lambda s, m: reports.append(s)))
    assert [t for t, _ in got] == [0.0, 0.25, 0.5]
    assert [int(f[0, 0, 0]) for _, f in got[:2]] == [10, 20]
    assert reports == ["unreadable_frame"]


def test_folder_and_video_refuse_what_they_cannot_use(tmp_path):
    with pytest.raises(SourceError):
        FolderSource(tmp_path)
    with pytest.raises(SourceError):
        VideoSource(tmp_path / "missing.avi")


def test_video_timestamps_come_from_its_fps(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (64, 48))
    for k in range(6):
        writer.write(frame(40 * k))
    writer.release()
    got = list(VideoSource(path).frames())
    assert [round(t, 6) for t, _ in got] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_realtime_playback_is_paced_by_source_time(tmp_path):
    for k in range(3):
        cv2.imwrite(str(tmp_path / f"{k}.png"), frame(k, (320, 240)))
    start = time.monotonic()
    list(FolderSource(tmp_path, fps=10.0, realtime=True).frames())
    assert time.monotonic() - start >= 0.18


# --- the referee on a filmed game ------------------------------------------------------

STEPS = demo.demo_script()[:demo.ILLEGAL_AFTER + 3]  # legal moves, the B5 mistake, its take-back, one more
BUMP_AT = 4  # the board is knocked before this step
REST_AFTER = 2  # after this step a hand rests still over the board for a while
REST_SECONDS = 3.0


def shots():
    out = demo.film(STEPS, cameras_at=(BUMP_AT,), last=2.0)
    still = [i for i, shot in enumerate(out) if shot.hand_at is None][REST_AFTER + 1]  # after the empty board
    resting = demo.Shot(out[still].board, REST_SECONDS, hand_at=(9.5, 9.5), camera=out[still].camera)
    return out[:still + 1] + [resting] + out[still + 1:]


SHOTS = shots()


def shots_between(t0: float, t1: float) -> list[demo.Shot]:
    """The shots on screen at some time in [t0, t1]."""
    out, start = [], 0.0
    for shot in SHOTS:
        if start <= t1 + 1e-9 and start + shot.seconds > t0 + 1e-9:
            out.append(shot)
        start += shot.seconds
    return out


class Run:
    """Everything a referee did over the film at one frame rate."""

    def __init__(self, cache, fps: float):
        real = BoardVision.of("blokus")
        self.reads: list[float] = []
        self.boards: list[tuple[dict, list, float]] = []
        self.statuses: list[str] = []
        self.t = 0.0

        def read(frame, pose):
            self.reads.append(self.t)
            return real.read(frame, pose)

        referee = LiveReferee(on_board=lambda rows, uncertain, t: self.boards.append((rows, uncertain, t)),
                              on_status=lambda status, message: self.statuses.append(status),
                              vision=dataclasses.replace(real, read=read))
        for t, image in demo.FilmSource(SHOTS, demo.cameras(bumps=1), fps=fps, cache=cache).frames():
            self.t = t
            referee.process(t, image)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cache = tmp_path_factory.mktemp("film")
    source = demo.FilmSource(SHOTS, demo.cameras(bumps=1), cache=cache)
    for number in range(len(SHOTS)):
        source.image(number)  # render once; both runs then see the same (cached) pictures
    return {fps: Run(cache, fps) for fps in (4.0, 10.0)}


def referee_log(boards):
    """What a session makes of the accepted boards: observations and the match they build."""
    match, seen = blokus.new_match(), []
    for board, _, _ in boards:
        observed = observe(match, board)
        match = take_back(match, observed.taken_back)
        for move in observed.moves:
            match = match.play(move)
        if observed.changed:
            seen.append((observed, match))
    return seen


def test_a_filmed_game_gives_exactly_its_moves(runs):
    log = referee_log(runs[4.0].boards)
    expected = [Observed(taken_back=1) if s.take_back else Observed(moves=(s.move,)) for s in STEPS]
    assert [o for o, _ in log] == expected
    flagged = [(o.moves[0], [v.code for v in m.turns[-1].violations]) for o, m in log
               if o.moves and not m.turns[-1].legal]
    # Exactly one false move, the B5 mistake, and the rules say so with its reason code.
    assert flagged == [(STEPS[demo.ILLEGAL_AFTER].move, ["edge_contact_same_colour"])]
    assert all(not uncertain for _, uncertain, _ in runs[4.0].boards)


# --- a filmed Gemblo game ----------------------------------------------------------------

# Three players (clear, red, yellow); clear's second piece breaks M4 and is taken back. The
# moves follow one another as quickly as in the demo, once the empty board has stood while
# the players sat down.
GEMBLO_STEPS = demo.demo_script(7, 3, gemblo.rules(gemblo.Setup("3p")), 4)


@pytest.fixture(scope="module")
def gemblo_run(tmp_path_factory):
    """The boards the referee sends over the film, and the board the table holds at each."""
    shots = demo.film(GEMBLO_STEPS, game=demo.GEMBLO, first=8.0, last=3.0)
    boards = []
    referee = LiveReferee(on_board=lambda board, unsure, t: boards.append((board, unsure, t)), game="gemblo")
    source = demo.FilmSource(shots, demo.cameras(), cache=tmp_path_factory.mktemp("gemblo_film"), game=demo.GEMBLO)
    for t, image in source.frames():
        referee.process(t, image)
    return boards, [dict(shot.board) for shot in shots if shot.hand_at is None]


def test_every_still_gemblo_board_reaches_the_session_though_the_reader_doubts_many_hexes(gemblo_run):
    """The reader doubts dozens of hexes of a sparse board (no clear piece to tell clear from
    empty by) and a hex or two of a clear piece; no hand is over the board, and once a board
    was accepted the motion check says so. Each still board is sent, right where it is sure
    (a doubt taken for a hand put each read off past the next player's reach: three moves
    came at once, more than a board change explains, and the game stalled)."""
    boards, tables = gemblo_run
    assert len(boards) == len(tables)  # the empty board, then one after each step
    for (board, unsure, _), table in zip(boards, tables):
        truth = {as_cell(k): colour for k, colour in table.items()}
        assert {c: v for c, v in board.items() if c not in unsure} == {
            c: v for c, v in truth.items() if c not in unsure}


def test_taps_on_the_hexes_that_hold_a_gemblo_move_back_log_it(gemblo_run, tmp_path):
    """A change beside a doubted hex waits; the page rings the hex; the player taps it to what
    it is, and the move the camera saw is logged whole (a tap used to log the tapped hex as a
    piece of its own and the rest of the piece never). Over the film the log is the game, the
    M4 mistake flagged, from the camera's boards and the player's taps on ringed hexes alone."""
    boards, tables = gemblo_run
    session = Session.start(Store.open(tmp_path), {"variant": "3p"}, game="gemblo")
    flagged = []
    for board, table in zip(boards, tables):
        session.observe(*board)
        tapped: set = set()
        while session.snapshot()["cells"] != table:
            snap = session.snapshot()
            changed = {as_cell(k) for k in table.keys() | snap["cells"].keys() if table.get(k) != snap["cells"].get(k)}
            near = gemblo.board().around(changed)  # the rings at the new piece first, then the others
            ringed = sorted((tuple(c) for c in snap["uncertain"]), key=lambda c: (c not in near, c))
            cell = next((c for c in ringed if c not in tapped), None)
            assert cell is not None, f"every ringed hex tapped, yet the log is not the table at t={board[2]}"
            tapped.add(cell)
            session.correct_cell(cell, table.get(f"{cell[0]},{cell[1]}", "."))
        flagged += [a["code"] for a in session.snapshot()["alerts"]]
    moves = [s.move for s in GEMBLO_STEPS if not s.take_back]
    del moves[3]  # the M4 piece, taken back
    history = [(h["colour"], sorted(map(tuple, h["cells"]))) for h in session.snapshot()["history"] if not h["auto"]]
    assert history == [(m.colour, sorted(m.cells)) for m in moves]
    assert "edge_contact_same_colour" in flagged


def test_steadiness_is_in_seconds_not_frames(runs):
    slow, fast = runs[4.0], runs[10.0]
    assert [rows for rows, _, _ in slow.boards] == [rows for rows, _, _ in fast.boards]
    # The same moments, up to one frame of the slower rate.
    assert [t for _, _, t in slow.boards] == pytest.approx([t for _, _, t in fast.boards], abs=1 / 4.0 + 1e-6)


def test_only_still_boards_with_nothing_over_them_are_read(runs):
    for run in runs.values():
        assert run.reads
        for t in run.reads:
            assert shots_between(t, t)[-1].hand_at is None, t
            # The board had not changed for a full steady_seconds (a hand beside it may move).
            assert len({shot.board for shot in shots_between(t - 1.0, t)}) == 1, t


def test_a_bumped_board_is_found_again(runs):
    statuses = runs[4.0].statuses
    assert statuses == ["ok", "board_moved", "ok"]


def test_a_change_of_light_does_not_blind_the_referee():
    # The light drops while a piece goes down: the whole board differs from the last accepted
    # one, like a hand would. After hand_patience_seconds of stillness the board is read.
    empty, one = demo.film(STEPS[:1])[0], demo.film(STEPS[:1])[-1]
    source = demo.FilmSource([empty, one], demo.cameras())
    before, after = source.image(0), (source.image(1) * 0.7).astype(np.uint8)
    boards = []
    referee = LiveReferee(on_board=lambda rows, uncertain, t: boards.append((rows, t)))
    for k in range(40):
        t = k / 4
        referee.process(t, before if t < 2 else after)
    gate = referee.gate
    assert [rows for rows, _ in boards] == [blokus.parse_board(empty.board), blokus.parse_board(one.board)]
    assert boards[1][1] == pytest.approx(2 + gate.steady_seconds + gate.hand_patience_seconds, abs=0.3)


def test_a_camera_gone_black_and_white_is_reported_and_nothing_is_read_until_colour_is_back():
    # A webcam's night mode: grey frames while a piece goes down. The piece is read once
    # colour is back, never from the grey frames (where its colour cannot be told).
    empty, one = demo.film(STEPS[:1])[0], demo.film(STEPS[:1])[-1]
    source = demo.FilmSource([empty, one], demo.cameras())
    before, after = source.image(0), source.image(1)
    grey = cv2.cvtColor(cv2.cvtColor(after, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    boards, statuses = [], []
    referee = LiveReferee(on_board=lambda rows, uncertain, t: boards.append((rows, t)),
                          on_status=lambda status, message: statuses.append(status))
    for k in range(48):
        t = k / 4
        referee.process(t, before if t < 2 else grey if t < 8 else after)
    assert statuses == ["ok", "no_colour", "ok"]
    assert [rows for rows, _ in boards] == [blokus.parse_board(empty.board), blokus.parse_board(one.board)]
    assert boards[1][1] >= 8
    # Before any board: a grey camera is named as such, not as a missing board.
    first = []
    LiveReferee(on_status=lambda status, message: first.append(status)).process(0.0, grey)
    assert first == ["no_colour"]


def test_a_dark_room_is_reported_as_too_dark_not_as_a_missing_board():
    messages = []
    referee = LiveReferee(on_status=lambda status, message: messages.append((status, message)))
    dark = np.clip(np.random.default_rng(1).normal(12, 3, (720, 1280, 3)), 0, 255).astype(np.uint8)
    referee.process(0.0, dark)
    assert messages and messages[-1][0] == "underexposed" and "too dark" in messages[-1][1]


def test_the_light_coming_on_over_a_table_without_a_board_is_a_new_status():
    # Both frames are refused; the page must hear the second reason, not keep "too dark".
    messages = []
    referee = LiveReferee(on_status=lambda status, message: messages.append((status, message)))
    noise = np.random.default_rng(1).normal(0, 3, (720, 1280, 3))
    referee.process(0.0, np.clip(noise + 12, 0, 255).astype(np.uint8))
    referee.process(10.0, np.clip(noise + 150, 0, 255).astype(np.uint8))
    assert [status for status, _ in messages] == ["underexposed", "no_board"]
    assert "too dark" not in messages[-1][1]


def test_demo_script_is_a_game_with_one_flagged_placement_taken_back():
    steps = demo.demo_script()
    match, flagged = blokus.new_match(), []
    for step in steps:
        if step.take_back:
            assert match.turns[-1].move == step.move
            match = take_back(match, 1)
            continue
        match = match.play(step.move)
        flagged += [(step.move, v.code) for v in match.turns[-1].violations]
    assert flagged == [(steps[demo.ILLEGAL_AFTER].move, "edge_contact_same_colour")]
    assert sum(s.take_back for s in steps) == 1
    assert match.over  # the whole game, to its end
    shots = demo.film(steps)
    frames_per_move = (sum(s.seconds for s in shots) - demo.FIRST_SECONDS - demo.LAST_SECONDS) * demo.FPS / len(steps)
    assert 8 <= frames_per_move <= 15


def test_start_and_stop_a_referee_on_a_camera_that_never_comes():
    statuses = []
    camera = CameraSource(0, backoff=(60.0, 60.0), open_capture=lambda i: FlakyCapture(False, 0))
    referee = LiveReferee(camera, on_status=lambda status, message: statuses.append(status))
    referee.start()
    deadline = time.monotonic() + 20  # generous: the suite may share the cores with other work
    while not statuses and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    referee.stop()
    assert time.monotonic() - started < 10.0 and not referee.running  # not the 60 s pause
    assert statuses == ["camera_disconnected"]


def test_a_recording_runs_to_its_end_on_the_background_thread():
    boards, statuses, ended = [], [], threading.Event()

    def on_status(status, message):
        statuses.append(status)
        if status == "ended":
            ended.set()

    source = demo.FilmSource(demo.film(STEPS[:1], last=1.5), demo.cameras())
    referee = LiveReferee(source, on_board=lambda rows, uncertain, t: boards.append(rows), on_status=on_status)
    referee.start()
    assert ended.wait(60)
    referee.stop()
    assert statuses == ["ok", "ended"]
    assert boards[-1] == blokus.parse_board(demo.film(STEPS[:1])[-1].board)


def test_a_gemblo_reader_is_wired_by_name_and_boards_leave_game_neutral(monkeypatch):
    """The loop is the same for Gemblo: ``vision.gemblo`` is looked up when a frame needs it,
    and its reading ({"q,r": colour}, uncertain "q,r") leaves as {(q, r): colour}."""
    still = demo.FilmSource(demo.film(STEPS[:1])[:1], demo.cameras()).image(0)
    pose = BoardVision.of("blokus").locate(still)  # any pose will do: the fake reader ignores it
    calls = []
    fake = SimpleNamespace(
        locate_board=lambda frame: calls.append("locate") or pose,
        verify_pose=lambda frame, p: True,
        read_with_pose=lambda frame, p: calls.append("read") or SimpleNamespace(cells={"0,0": "R", "5,5": "C"},
                                                                              uncertain=["1,0"]))
    monkeypatch.setitem(sys.modules, "vision.gemblo", fake)
    boards = []
    referee = LiveReferee(on_board=lambda board, uncertain, t: boards.append((board, uncertain)), game="gemblo")
    for k in range(12):
        referee.process(k / 4, still)
    assert calls == ["locate", "read"]
    assert boards == [({(0, 0): "R", (5, 5): "C"}, [(1, 0)])]


def test_the_colour_profile_follows_the_light_after_each_accepted_board():
    from calibration import Calibration
    from calibration.colours import learn_profile, observe as observe_cells
    from vision.blokus import locate_board

    empty, one = demo.film(STEPS[:1])[0], demo.film(STEPS[:1])[-1]
    source = demo.FilmSource([empty, one], demo.cameras())
    before, after = source.image(0), (source.image(1) * 0.7).astype(np.uint8)
    pose = locate_board(before)
    profile = learn_profile(observe_cells(source.image(1), pose), one.board)  # under the bright light
    boards = []
    referee = LiveReferee(on_board=lambda rows, uncertain, t: boards.append(rows),
                          calibration=Calibration(colours=profile))
    for k in range(40):
        t = k / 4
        referee.process(t, before if t < 2 else after)
        if k == 7:  # the empty board accepted under the same light: the profile hardly moves
            assert referee.profile is not profile
            assert np.allclose(referee.profile.classes["."].lab, profile.classes["."].lab, atol=2.0)
    assert boards == [blokus.parse_board(empty.board), blokus.parse_board(one.board)]
    # The light dropped: the empty board's colour now is the dark frame's, the light-free centres stay.
    dark = learn_profile(observe_cells(after, pose), one.board)
    moved, was = referee.profile.classes["."], profile.classes["."]
    assert moved.lab[0] < was.lab[0] - 10
    assert np.linalg.norm(np.subtract(moved.lab, dark.classes["."].lab)) < 2.5
    assert all(referee.profile.classes[k].neutral == profile.classes[k].neutral for k in profile.classes)
    # A new calibration replaces the followed profile; none means reading without one.
    referee.calibrate(Calibration())
    assert referee.profile is None


@pytest.mark.parametrize("game", ["blokus", "gemblo"])
def test_the_watched_area_covers_any_board_with_a_margin(game):
    """Motion is watched over the board's own outline (square or hexagon), cells sized by count."""
    import importlib

    from companion_app.live import READERS, Gate, Watch
    from rules import gemblo as gemblo_rules
    from rules.placement import random_playout

    rng = np.random.default_rng(4)
    synth = importlib.import_module(f"vision.synth.{game}")
    if game == "blokus":
        board = blokus.random_game_state(rng, 10)
    else:
        board = gemblo_rules.cells_json(random_playout(gemblo_rules.rules(gemblo_rules.Setup()), rng, 10).position)
    from vision.synth.conditions import CONDITIONS

    shot = synth.render_photo(board, CONDITIONS["clean"], rng, size=(1280, 960))
    pose = importlib.import_module(f"vision.{game}").locate_board(shot.image)
    count = READERS[game].cell_count
    watch = Watch.of(pose, Gate(), count)
    x0, y0, _, _ = watch.box
    scale = watch.size[0] / (watch.box[2] - x0)
    corners = np.round((pose.corners - [x0, y0]) * scale).astype(int)
    assert all(watch.mask[y, x] for x, y in corners)  # the whole board is inside the watched area
    board_px = cv2.contourArea(((pose.corners - [x0, y0]) * scale).astype(np.float32))
    assert watch.mask.sum() > board_px * 1.05  # with a margin beyond it
    assert watch.cell_px == pytest.approx(board_px / count)


def _fake_reader(monkeypatch, module: str, readings: list):
    """A stand-in ``vision.<game>`` module: any pose, and ``readings`` handed out in turn."""
    still = demo.FilmSource(demo.film(STEPS[:1])[:1], demo.cameras()).image(0)
    pose = BoardVision.of("blokus").locate(still)
    queue = list(readings)
    fake = SimpleNamespace(locate_board=lambda frame: pose, verify_pose=lambda frame, p: True,
                           read_with_pose=lambda frame, p: queue.pop(0) if len(queue) > 1 else queue[0])
    monkeypatch.setitem(sys.modules, module, fake)
    return still


def _run(referee, still, seconds=6):
    for k in range(seconds * 4):
        referee.process(k / 4, still)


def test_an_equilibrix_reading_reaches_the_session_as_fields(monkeypatch, tmp_path):
    """``vision.equilibrix`` reads ``fields`` {id: colour} (and maybe the ring); the loop hands
    them on as {field: colour}, with uncertain field ids as fields, and the session judges them."""
    from companion_app.live import READERS
    from companion_app.session import Session
    from companion_app.store import Store

    duo = {"P 0 0 0": "B", "T 0 0 +": "B"}
    still = _fake_reader(monkeypatch, "vision.equilibrix", [
        SimpleNamespace(fields={**duo, "P 1 1 1": "."}, uncertain=["P 2 0 0"]),
    ])
    seen = []
    referee = LiveReferee(on_board=lambda board, uncertain, t: seen.append((board, uncertain)), game="equilibrix")
    _run(referee, still)
    assert seen == [({(0, 0, 0): "B", (0, 0, 3): "B"}, [(2, 0, 0)])]
    session = Session.start(Store.open(tmp_path), {"variant": "autonomie"}, "equilibrix")
    session.observe(*seen[0], 1.0)
    assert [h["piece"] for h in session.snapshot()["history"]] == ["duo-1"]

    slots = [{"shape": "fan", "side": "B", "confidence": 0.9}, None]
    ring = SimpleNamespace(fields=duo, uncertain=[], ring=slots, origin=1, ring_uncertain=[])
    board = READERS["equilibrix"].cells(ring)
    assert board == {"fields": {(0, 0, 0): "B", (0, 0, 3): "B"}, "ring": [{"shape": "fan"}, None], "origin": 1}
    # The same ring read with another confidence is the same board (not a new one per frame).
    again = SimpleNamespace(fields=duo, uncertain=[], ring=[{**slots[0], "confidence": 0.8}, None], origin=1,
                            ring_uncertain=[])
    assert READERS["equilibrix"].cells(again) == board
    unsure_ring = SimpleNamespace(fields=duo, uncertain=[], ring=slots, origin=1, ring_uncertain=[0])
    assert READERS["equilibrix"].cells(unsure_ring) == {(0, 0, 0): "B", (0, 0, 3): "B"}


def test_a_geometrius_reading_reaches_the_session_as_tokens(monkeypatch, tmp_path):
    """``vision.geometrius`` reads ``tokens`` (contract dicts); they leave the loop as a list,
    uncertain places as (row, col), and the session takes the first 4 × 4 as its field."""
    from companion_app.live import READERS
    from companion_app.session import Session
    from companion_app.store import Store
    from tests.test_session_geometrius import FIELD, PLAYERS

    tokens = [{"row": r, "col": c, "shape": s, "stack": []} for r, row in enumerate(FIELD) for c, s in enumerate(row)]
    still = _fake_reader(monkeypatch, "vision.geometrius", [SimpleNamespace(tokens=tokens, uncertain=[])])
    seen = []
    referee = LiveReferee(on_board=lambda board, uncertain, t: seen.append((board, uncertain)), game="geometrius")
    _run(referee, still)
    assert seen == [(tokens, [])]
    session = Session.start(Store.open(tmp_path), {"players": PLAYERS}, "geometrius")
    session.observe(*seen[0], 1.0)
    assert session.snapshot()["geometrius"]["waiting"] is False
    unsure = SimpleNamespace(tokens=tokens, uncertain=[{"row": 0, "col": 1}, [2, 2]])
    assert READERS["geometrius"].unsure(unsure) == [(0, 1), (2, 2)]


def test_a_mug_on_the_geometrius_field_s_corner_token_never_shifts_the_board_read_live():
    """The real reader over generated frames: a field is read, then a mug is stood on its
    top-left token, alone in the top row and the left column. The board read under the mug
    has every other token at its own place, every place unsure (so the session waits for the
    mug to go): counted from the tokens in view, the field was a row and a column off."""
    from bench.geometrius_bench import live_frames
    from companion_app.live import Gate

    clean, mugs, truth = live_frames(0, (-1, -1))
    seen = []
    referee = LiveReferee(on_board=lambda board, uncertain, t: seen.append((board, uncertain)), game="geometrius",
                          gate=Gate(steady_seconds=0.5, hand_patience_seconds=1.0))
    for k in range(16):
        referee.process(0.25 * k, clean if k < 4 else mugs[(-1, -1)])
    places = {(t.row, t.col) for t in truth}
    assert [len(board) for board, _ in seen] == [len(truth), len(truth) - 1]
    assert {(d["row"], d["col"]) for d in seen[0][0]} == places
    under = {(d["row"], d["col"]) for d in seen[1][0]}
    assert under == places - {(0, 0)} and set(seen[1][1]) == under


def test_demo_cache_follows_the_renderer(tmp_path, monkeypatch):
    """Frames cached by an older renderer are never replayed: the cache folder's name
    changes with the renderer's source."""
    shots, cams = demo.film(STEPS[:1]), demo.cameras()
    fake = tmp_path / "synth"
    fake.mkdir()
    (fake / "__init__.py").write_text("LOOK = 1\n")
    monkeypatch.setattr(demo.synth, "__file__", str(fake / "__init__.py"))
    first = demo._digest(shots, cams, 1, (64, 48))
    assert demo._digest(shots, cams, 1, (64, 48)) == first
    (fake / "__init__.py").write_text("LOOK = 2\n")
    assert demo._digest(shots, cams, 1, (64, 48)) != first


def test_a_lost_round_board_is_found_again_with_its_earlier_pose(monkeypatch):
    """After a bump the Equilibrix board is located again with the pose it had, so a board
    turned near a tie between two sides keeps its labelling; another game starts afresh."""
    still = demo.FilmSource(demo.film(STEPS[:1])[:1], demo.cameras()).image(0)
    pose = BoardVision.of("blokus").locate(still)
    references, fits = [], iter([True] * 12 + [False] + [True] * 100)
    fake = SimpleNamespace(
        locate_board=lambda frame, reference=None: references.append(reference) or pose,
        verify_pose=lambda frame, p: next(fits),
        read_with_pose=lambda frame, p: SimpleNamespace(fields={"P 0 0 0": "B"}, uncertain=[]))
    monkeypatch.setitem(sys.modules, "vision.equilibrix", fake)
    referee = LiveReferee(game="equilibrix")
    _run(referee, still, seconds=8)
    assert references[0] is None and pose in references[1:]
    referee.watch_game("equilibrix")
    referee.process(100.0, still)
    assert references[-1] is None


@pytest.mark.parametrize("game", ["gemblo", "equilibrix"])
def test_the_real_reader_s_board_reaches_the_referee(game):
    """The real reader, not a stand-in, over a still generated photo: one board leaves the
    loop, in the session's cells, each cell not marked unsure as the photo holds it. (A
    stand-in modelled the Geometrius reading wrongly and hid that every live read failed.)"""
    from companion_app.cells import cells_of
    from companion_app.live import Gate

    if game == "gemblo":
        from tests.test_vision_gemblo import photo, upright
        truth_state = {"cells": photo("clean", 3).cells}
    else:
        from tests.test_vision_equilibrix import photo, upright
        truth_state = {"fields": photo("clean", 3).fields}
    frame = upright(photo("clean", 3))
    seen = []
    referee = LiveReferee(on_board=lambda board, uncertain, t: seen.append((board, uncertain)), game=game,
                          gate=Gate(steady_seconds=0.5, hand_patience_seconds=1.0))
    for k in range(12):
        referee.process(0.25 * k, frame)
    assert len(seen) == 1
    board, unsure = seen[0]
    cells = board["fields"] if game == "equilibrix" and "fields" in board else board
    truth = cells_of(game, truth_state)
    assert cells and {c: v for c, v in cells.items() if c not in unsure} == {
        c: v for c, v in truth.items() if c not in unsure}


def test_a_camera_that_sends_nothing_is_refused_when_asked_once(tmp_path):
    with pytest.raises(SourceError, match="camera 3 sends no frames"):
        CameraSource(3, open_capture=lambda i: FlakyCapture(False, 0)).check()
    with pytest.raises(SourceError):
        CameraSource(3, open_capture=lambda i: FlakyCapture(True, 0)).check()  # opens, never a frame
    CameraSource(3, open_capture=lambda i: FlakyCapture(True, 1)).check()
    slow = FlakyCapture(True, 1)
    slow.read = lambda reads=iter([(False, None), (False, None), (True, frame(0))]): next(reads)
    CameraSource(3, open_capture=lambda i: slow).check(pause_s=0.0)  # a webcam whose first reads fail


def test_a_video_without_frames_and_a_folder_of_broken_images_are_refused(tmp_path, capfd):
    empty = tmp_path / "empty.avi"
    cv2.VideoWriter(str(empty), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (64, 48)).release()
    with pytest.raises(SourceError, match="no frame that can be decoded"):
        VideoSource(empty)
    (tmp_path / "notes.mp4").write_text("not a video")
    capfd.readouterr()
    with pytest.raises(SourceError, match="cannot open video"):
        VideoSource(tmp_path / "notes.mp4")
    assert capfd.readouterr().err == ""  # FFmpeg's own "moov atom not found" stays out of the one-line error
    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "a.png").write_text("not a picture")
    (frames / "b.jpg").write_bytes(b"\xff\xd8\xff" + bytes(100))
    with pytest.raises(SourceError, match="none of the 2 image files"):
        FolderSource(frames)
