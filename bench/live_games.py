"""What a player sees refereeing a filmed Gemblo game live, move by move.

A scripted 3-player game (clear, red, yellow: the clear pieces are the reader's hardest),
with one placement that breaks M4 laid and taken back, is filmed at 1280 x 720 as the demo
films Blokus (:mod:`companion_app.demo`): a hand brings each piece in, the board then holds
still. The live referee reads the film; its boards go to a Gemblo session as the server
hands them on. At the end of each step's still period the page is looked at:

- ``camera``: the log holds exactly the game so far, from the camera alone;
- ``waiting``: the log is still the game before this step, or further behind (no move
  wrong, some missing); the cells the camera marked unsure on or next to the piece are listed;
- ``wrong``: the log holds anything else.

A second session gets the same boards and, where a step ends waiting, the player's taps:
the page's unsure cells, those at the new piece first, each said to be what it really is (the
session's correction API) until the log is right; ``taps`` counts them, ``after taps`` says
what the log then holds and ``flagged`` the rule codes the page then shows for the move.
A third session models a player who taps late: where a step ends waiting they do not tap
then, but two moves later (the game goes on at the table meanwhile), the same way; ``late``
says what its log holds at each step's end (``camera`` once caught up) and ``late taps``
counts the taps.
Rendered frames are kept in ``$BENCH_FILM_CACHE`` when set (a film renders in about 30 s).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from companion_app import demo
from companion_app.live import LiveReferee
from companion_app.session import Session
from companion_app.store import Store
from rules import gemblo
from rules.lattice import Cell

SEED = 7  # the game's self-play; $LIVE_GAMES_SEED="game,camera" films another (a held-out check)
SETUP = {"variant": "3p"}
ILLEGAL_AFTER = 6  # clear's second piece is down by then: the M4 mistake is a clear monohex
PLACEMENTS = 9


PACES = {"brisk (the demo's 1.75 s)": demo.HOLD_SECONDS, "thinking (8 s)": 8.0}  # the board still between moves


def script(hold: float = demo.HOLD_SECONDS, seed: int = SEED) -> tuple[demo.DemoStep, ...]:
    """The scripted game, the board left still for at least ``hold`` seconds after each step."""
    steps = demo.demo_script(seed, ILLEGAL_AFTER, gemblo.rules(gemblo.Setup(**SETUP)), PLACEMENTS)
    return tuple(replace(s, hold=max(s.hold, hold)) for s in steps)


FIRST_SECONDS = 8.0  # the empty board while the players sit down, before the first piece


def film(steps=None) -> list[demo.Shot]:
    return demo.film(steps or script(), game=demo.GEMBLO, first=FIRST_SECONDS, last=3.0)


def source(shots: list[demo.Shot], cache: Path | None, camera_seed: int = demo.DEMO_SEED) -> demo.FilmSource:
    return demo.FilmSource(shots, demo.cameras(camera_seed), cache=cache, game=demo.GEMBLO)


@dataclass
class Step:
    """What the page shows at the end of one step's still period."""

    number: int
    what: str  # "C lays 5", "C takes back"
    outcome: str = ""
    unsure: list[Cell] = field(default_factory=list)  # unsure cells on or next to the piece
    flagged: list[str] = field(default_factory=list)  # the newest move's violation codes
    taps: int = 0
    after_taps: str = ""
    late: str = ""  # the late tapper's log at the step's end
    late_taps: int = 0


def expected_logs(steps) -> list[list[tuple[str, frozenset]]]:
    """The moves the log should hold after each step."""
    out, log = [], []
    for step in steps:
        log = log[:-1] if step.take_back else log + [(step.move.colour, frozenset(step.move.cells))]
        out.append(list(log))
    return out


def logged(session: Session) -> list[tuple[str, frozenset]]:
    return [(h["colour"], frozenset(tuple(c) for c in h["cells"])) for h in session.snapshot()["history"]
            if not h["auto"] and h["cells"]]


def outcome(now, expected, before) -> str:
    """``camera``: the log is the game so far; ``waiting``: it is the game before this step,
    or further behind (moves missing, none wrong); ``wrong``: it holds a move not played."""
    if now == expected:
        return "camera"
    return "waiting" if now == before or now == expected[:len(now)] else "wrong"


def run(cache: Path | None = None, steps=None, camera_seed: int = demo.DEMO_SEED) -> list[Step]:
    steps = steps or script()
    shots = film(steps)
    ends, start = [], 0.0
    for shot in shots:
        start += shot.seconds
        if shot.hand_at is None:
            ends.append(start)  # the end of a still period: the empty board, then each step's
    ends = ends[1:]
    boards: list[tuple[dict, list, float]] = []
    referee = LiveReferee(on_board=lambda board, unsure, t: boards.append((board, unsure, t)), game="gemblo")
    for t, image in source(shots, cache, camera_seed).frames():
        referee.process(t, image)
    with tempfile.TemporaryDirectory() as plain_dir, tempfile.TemporaryDirectory() as tapped_dir, \
            tempfile.TemporaryDirectory() as late_dir:
        plain = Session.start(Store.open(Path(plain_dir)), SETUP, game="gemblo")
        tapped = Session.start(Store.open(Path(tapped_dir)), SETUP, game="gemblo")
        late = Session.start(Store.open(Path(late_dir)), SETUP, game="gemblo")
        expected = expected_logs(steps)
        out, fed, pending = [], 0, None  # pending: the first step the late tapper's log waits on
        for number, (step, end) in enumerate(zip(steps, ends)):
            while fed < len(boards) and boards[fed][2] <= end:
                for session in (plain, tapped, late):
                    session.observe(*boards[fed])
                fed += 1
            before = expected[number - 1] if number else []
            verb = "takes back" if step.take_back else f"lays {len(step.move.cells)}"
            row = Step(number, f"{step.move.colour} {verb}", outcome(logged(plain), expected[number], before))
            row.unsure = sorted(gemblo.board().around(step.move.cells).intersection(plain.adapter.uncertain))
            row.taps, row.after_taps = tap(tapped, steps[:number + 1], step, expected[number], before)
            snap = tapped.snapshot()
            if snap["history"] and not step.take_back and row.after_taps == "camera":
                row.flagged = [a["code"] for a in snap["alerts"] if a["index"] == snap["history"][-1]["index"]]
            if logged(late) == expected[number]:
                pending = None
            else:
                pending = number if pending is None else pending
                if number - pending >= 2:  # two moves later: the player taps now
                    row.late_taps = tap_late(late, steps[:number + 1], expected[number])
            row.late = outcome(logged(late), expected[number], before)
            out.append(row)
        plain.store.close()
        tapped.store.close()
        late.store.close()
    return out


def tap(session: Session, done, step, expected, before) -> tuple[int, str]:
    """The player taps the page's unsure cells, those on or next to the new piece first, then
    the nearest, each to what it really is, until the log is right (or every one is tapped)."""
    if logged(session) == expected:
        return 0, "camera"
    truth = truth_after(done)
    centre = np.mean([gemblo.screen(c) for c in step.move.cells], axis=0)
    near = gemblo.board().around(step.move.cells)
    cells = sorted((tuple(c) for c in session.snapshot()["uncertain"]),
                   key=lambda c: (c not in near, float(np.hypot(*(np.array(gemblo.screen(c)) - centre)))))
    for taps, cell in enumerate(cells, start=1):
        session.correct_cell(cell, truth.get(cell, "."))
        if logged(session) == expected:
            return taps, "camera"
    return len(cells), outcome(logged(session), expected, before)


def truth_after(done) -> dict[Cell, str]:
    """What the table holds after the steps ``done``."""
    truth: dict[Cell, str] = {}
    for s in done:
        for c in s.move.cells:
            if s.take_back:
                truth.pop(c, None)
            else:
                truth[c] = s.move.colour
    return truth


def tap_late(session: Session, done, expected) -> int:
    """The late player taps the cells the page rings strongly (``holding``: what the log waits
    on), each to what it really is, the page looked at again after each tap, then any other
    unsure cell, until the log is right (or every one is tapped); returns the taps."""
    truth, tapped = truth_after(done), set()
    while logged(session) != expected:
        snap = session.snapshot()
        ring = [tuple(c) for c in snap["holding"] if tuple(c) not in tapped]
        cells = ring or [tuple(c) for c in snap["uncertain"] if tuple(c) not in tapped]
        if not cells:
            break
        tapped.add(cells[0])
        session.correct_cell(cells[0], truth.get(cells[0], "."))
    return len(tapped)


def main() -> None:
    cache = os.environ.get("BENCH_FILM_CACHE")
    seed, camera_seed = (int(v) for v in os.environ.get("LIVE_GAMES_SEED", f"{SEED},{demo.DEMO_SEED}").split(","))
    print(f"game seed {seed}, camera seed {camera_seed}")
    for pace, hold in PACES.items():
        rows = run(Path(cache) if cache else None, script(hold, seed), camera_seed)
        print(f"\n| {pace}: step | move | camera alone | unsure cells at the piece | flagged | taps | after taps "
              "| late tapper | late taps |\n|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            unsure = " ".join(f"{q},{c}" for q, c in r.unsure) or "-"
            print(f"| {r.number + 1} | {r.what} | {r.outcome} | {unsure} | {', '.join(r.flagged) or '-'} | "
                  f"{r.taps} | {r.after_taps} | {r.late} | {r.late_taps} |")
        counts = {k: sum(r.outcome == k for r in rows) for k in ("camera", "waiting", "wrong")}
        print(f"\n{pace}: steps {len(rows)}: by the camera alone {counts['camera']}, waiting {counts['waiting']}, "
              f"wrong {counts['wrong']}; with taps: logged with none {sum(r.after_taps == 'camera' and not r.taps for r in rows)}, "
              f"right after taps {sum(r.after_taps == 'camera' and r.taps > 0 for r in rows)}, "
              f"not right {sum(r.after_taps != 'camera' for r in rows)}; taps {sum(r.taps for r in rows)}", flush=True)
        late = {k: sum(r.late == k for r in rows) for k in ("camera", "waiting", "wrong")}
        print(f"{pace}: late taps (two moves after a step waits): log right at the step's end {late['camera']}, "
              f"waiting {late['waiting']}, wrong {late['wrong']}; right at the end "
              f"{'yes' if rows and rows[-1].late == 'camera' else 'no'}; taps {sum(r.late_taps for r in rows)}",
              flush=True)


if __name__ == "__main__":
    main()
