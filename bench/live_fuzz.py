"""The live referee under random play: seeded streams (:mod:`bench.fuzz_stream`) against the
session's promises.

Each seed draws a legal Blokus, Gemblo or Equilibrix game and the noise a webcam and its
players lay over it (misread cells doubted or not, hands, shadows, stray pieces lifted or
taken back by tap (not in Equilibrix), late taps, declared passes, server restarts), and
feeds the stream to a session on a fresh SQLite file. The promises checked (a broken one is
a failure, named by the promise):

- ``exception``: no step raises anything but a refusal in words (a SessionError);
- ``refused``: no tap the stream makes is refused (each is one a player may make then);
- ``restart``: a restart keeps the history, scores, alerts, acknowledgements and the hold;
- ``twice``: no move is in the history twice;
- ``flagged``: a move of the true game, in its place (the history agrees with the game up
  to it), is judged as the rules engine judges it there;
- ``history`` / ``scores``: once every misread was tapped or read right by a later board
  (the stream ends so), the history is the true game's, and the scores the engine's.

``FUZZ_SEEDS=N`` (default 200) seeds per game, ``FUZZ_FIRST`` the first seed (default 0).
The first ``FUZZ_SHRINK`` (default 5) failing seeds are shrunk (:func:`shrink`) to the fewest
placements and noise events that still break the same promise, and printed.
"""
from __future__ import annotations

import os
import tempfile
import traceback
from collections import Counter
from itertools import count
from pathlib import Path
from typing import Any, Iterable

from companion_app.session import Session, SessionError
from companion_app.store import Store
from rules import flower
from rules.records import GAME_RULES

from .fuzz_stream import GAMES, Plan, Step, covered, draw, render, true_match, truncated

RESTART_KEYS = ("cells", "history", "scores", "alerts", "to_move")


def judged(snapshot: dict) -> list[tuple]:
    """The history as (colour, pass, cells) (an Equilibrix field named by its id)."""
    return [(h["colour"], h["pass"], sorted(flower.parse_field(c) if isinstance(c, str) else tuple(c)
                                            for c in h["cells"])) for h in snapshot["history"]]


def verdicts(match: Any) -> list[tuple]:
    """The true game's turns as (colour, pass, cells) with their rule codes, as the session
    shows a judged turn (the passes the board forces included)."""
    return [((t.move.colour, t.move.passed, sorted(map(tuple, covered(t.move)))), sorted(v.code for v in t.violations))
            for t in match.turns]


def restarted(s: Session, folder: Path) -> Session:
    """The server restarted: the session resumed from its data folder."""
    s.store.close()
    return Session.resume(Store.open(folder))


def apply(s: Session, step: Step, t: float) -> None:
    """Hand ``step`` to the session (a board seen at source time ``t``)."""
    if step.kind == "board":
        s.observe(dict(step.board), list(step.doubted), t)
    elif step.kind == "tap":
        s.correct_cell(step.cell, step.colour)
    elif step.kind == "pass":
        s.declare_pass(step.colour)
    elif step.kind == "take_back":  # the player taps the stray's move in the history, if listed
        want = (step.move.colour, False, sorted(step.move.cells))
        snap = s.snapshot()
        index = next((i for i, turn in enumerate(judged(snap)) if turn == want), None)
        if index is not None:  # not listed while a hold keeps it back: the player lifts it alone
            s.take_back(index, snap["history"][index]["event"])


def run(plan: Plan, folder: Path, keep: Iterable[int] | None = None, placements: int | None = None) -> list[tuple[str, int, str]]:
    """The promises ``plan``'s stream breaks, as (promise, step, what), the first of each promise."""
    steps = render(plan, keep, placements)
    truth = true_match(plan, placements)
    expected = verdicts(truth)
    broken: dict[str, tuple[str, int, str]] = {}

    def fail(promise: str, i: int, what: str) -> None:
        broken.setdefault(promise, (promise, i, what))

    s = Session.start(Store.open(folder), plan.setup_doc, game=plan.game)
    for i, step in enumerate(steps):
        try:
            if step.kind == "restart":
                before, held = s.snapshot(), s.adapter.held_boards()
                s = restarted(s, folder)
                after = s.snapshot()
                for key in RESTART_KEYS:
                    if after[key] != before[key]:
                        fail("restart", i, f"{key} differs")
                if s.adapter.held_boards() != held:
                    fail("restart", i, "the hold differs")
                continue
            apply(s, step, float(i))
        except SessionError as e:
            fail("refused", i, f"{step.kind}: {e.message}")
            continue
        except Exception:  # the promise is that nothing else escapes, whatever it is
            fail("exception", i, traceback.format_exc(limit=-3))
            break
        snap = s.snapshot()
        shown = judged(snap)
        placed = [repr(turn) for turn in shown if not turn[1]]
        if len(set(placed)) < len(placed):
            fail("twice", i, "a move is in the history twice")
        for j, (turn, h) in enumerate(zip(shown, snap["history"])):
            if j >= len(expected) or turn != expected[j][0]:
                break
            if sorted(h["reasons"]) != expected[j][1]:
                fail("flagged", i, f"turn {j} {turn[0]} judged {h['reasons']}, the rules say {expected[j][1]}")
    else:
        snap = s.snapshot()
        if [(turn, sorted(h["reasons"])) for turn, h in zip(judged(snap), snap["history"])] != expected:
            fail("history", len(steps), f"logged {len(snap['history'])} turns, the game has {len(expected)}")
        if snap["scores"] != GAME_RULES[plan.game].score_match(truth, s.setup).to_json():
            fail("scores", len(steps), "scores differ from the engine's on the true board")
    s.store.close()
    return list(broken.values())


def shrink(plan: Plan, promise: str, scratch: Path) -> tuple[list[int], int]:
    """The fewest placements, then noise events, with which ``plan`` still breaks ``promise``."""
    tries = count()

    def breaks(keep: list[int], placements: int) -> bool:
        folder = scratch / f"try{next(tries)}"
        folder.mkdir()
        return any(p == promise for p, _, _ in run(plan, folder, keep, placements))

    placed = len([m for m in plan.moves if not m.passed])
    keep = list(range(len(plan.noise)))
    placements = next((n for n in range(1, placed + 1) if breaks(keep, n)), placed)
    keep = [i for i in keep if getattr(plan.noise[i], "placement", 0) < placements]
    for i in list(keep):
        fewer = [k for k in keep if k != i]
        if breaks(fewer, placements):
            keep = fewer
    return keep, placements


def describe(plan: Plan, keep: list[int], placements: int) -> str:
    moves = truncated(plan.moves, placements)
    lines = [f"  {plan.game} {plan.setup_doc} seed {plan.seed}: "
             + " ".join(m.colour + ("-" if m.passed else str(len(covered(m)))) for m in moves)]
    lines += [f"    {plan.noise[i]}" for i in keep]
    return "\n".join(lines)


def main() -> None:
    seeds = int(os.environ.get("FUZZ_SEEDS", "200"))
    first = int(os.environ.get("FUZZ_FIRST", "0"))
    print("| game | seeds | steps | failing seeds | by promise |")
    print("|---|---|---|---|---|")
    failing = []
    with tempfile.TemporaryDirectory() as tmp:
        for game in GAMES:
            failed, steps, by = 0, 0, Counter()
            for seed in range(first, first + seeds):
                plan = draw(seed, game)
                folder = Path(tmp) / f"{game}{seed}"
                folder.mkdir()
                broken = run(plan, folder)
                steps += len(render(plan))
                by.update(p for p, _, _ in broken)
                if broken:
                    failed += 1
                    failing.append((plan, broken))
            print(f"| {game} | {seeds} | {steps} | {failed} | "
                  f"{', '.join(f'{p} {n}' for p, n in sorted(by.items())) or '-'} |", flush=True)
        for game in GAMES:
            print(f"\nfailing {game} seeds: {[plan.seed for plan, _ in failing if plan.game == game]}")
        for plan, broken in failing[:int(os.environ.get("FUZZ_SHRINK", "5"))]:
            promise, step, what = broken[0]
            scratch = Path(tmp) / f"shrink{plan.game}{plan.seed}"
            scratch.mkdir()
            keep, placements = shrink(plan, promise, scratch)
            print(f"\n{promise} (step {step}: {what.strip().splitlines()[-1]}); shrunk:")
            print(describe(plan, keep, placements))
