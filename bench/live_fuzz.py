"""The live referee under random play: seeded streams (:mod:`bench.fuzz_stream`, Geometrius's
:mod:`bench.geometrius_stream`) against the session's promises.

Each seed draws a legal Blokus, Gemblo or Equilibrix game and the noise a webcam and its
players lay over it (misread cells doubted or not, hands, shadows, stray pieces lifted or
taken back by tap, late taps, declared passes, server restarts; in Equilibrix the ring tile
and the 5+1 token tapped on a tile's sheet, a stray left under the next tile), or a
legal Geometrius game and its noise (top chips misread, doubted or not, tokens unreadable,
a block's chips seen one at a time, late card taps, passes, restarts), and feeds the stream
to a session on a fresh SQLite file. The promises checked (a broken one is
a failure, named by the promise):

- ``exception``: no step raises anything but a refusal in words (a SessionError);
- ``refused``: no tap the stream makes is refused (each is one a player may make then);
- ``restart``: a restart keeps the history, scores, alerts, acknowledgements, the hold and the
  rings (corrected, uncertain, holding), and resumes with no notice (nothing saved is lost);
- ``twice``: no move is in the history twice (Geometrius, whose rows name no height in a
  stack: a row shown more often than the game has it, where it is a push or the history puts
  more chips on one of its tokens than lie there, or gives its colour more there than that
  colour laid and the camera read as it);
- ``flagged``: a move of the true game, in its place (the history agrees with the game up
  to it), is judged as the rules engine judges it there (an Equilibrix move is its ring tile
  and 5+1 token too, as :func:`judged_tiles` shows it);
- ``history`` / ``scores``: once every misread was tapped or read right by a later board
  (the stream ends so), the history is the true game's, and the scores the engine's.

``FUZZ_SEEDS=N`` (default 200) seeds per game, ``FUZZ_FIRST`` the first seed (default 0),
``FUZZ_GAMES`` the games, comma-separated (default all of ``FUZZED``).
``FUZZ_RESTART_EVERY_STEP=1`` checks ``restart`` after every step as well, not only where the
stream draws a restart: the data folder as a server killed right after the step leaves it (the
SQLite file and its write-ahead log, every write being committed when the step returns) is
copied aside and a session resumed from the copy is compared with the live one, which plays
on. It pins the promise that what is saved equals the live state at every commit (two to four
times the CPU time).
The first ``FUZZ_SHRINK`` (default 5) failing seeds are shrunk (:func:`shrink`) to the fewest
placements and noise events that still break the same promise, and printed.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, replace
from itertools import count
from pathlib import Path
from typing import Any, Callable, Iterable

from companion_app.session import Session, SessionError
from companion_app.store import FILENAME, Store
from rules import flower
from rules.records import GAME_RULES

from . import fuzz_stream, geometrius_stream
from .fuzz_stream import GAMES, Step, covered, truncated

RESTART_KEYS = ("cells", "history", "scores", "alerts", "to_move")
# the rings too (a restart once brought back corrections the camera had ended: rev_relaid22 in the
# cell games, rev_end22 in Geometrius, whose page has no ``holding``)
RESTART_RINGS = ("corrected", "uncertain", "holding")


def judged(snapshot: dict) -> list[tuple]:
    """The history as (colour, pass, cells) (an Equilibrix field named by its id)."""
    return [(h["colour"], h["pass"], sorted(flower.parse_field(c) if isinstance(c, str) else tuple(c)
                                            for c in h["cells"])) for h in snapshot["history"]]


def verdicts(match: Any) -> list[tuple]:
    """The true game's turns as (colour, pass, cells) with their rule codes, as the session
    shows a judged turn (the passes the board forces included)."""
    return [((t.move.colour, t.move.passed, sorted(map(tuple, covered(t.move)))), sorted(v.code for v in t.violations))
            for t in match.turns]


def judged_tiles(snapshot: dict) -> list[tuple]:
    """An Equilibrix history as (colour, pass, fields, tile, token): the tile and the 5+1
    token the player taps are the move's too."""
    return [(*turn, h["piece"], h.get("token", False)) for turn, h in zip(judged(snapshot), snapshot["history"])]


def verdicts_tiles(match: Any) -> list[tuple]:
    """The true Equilibrix game's turns as :func:`judged_tiles` shows them, with their rule codes."""
    return [((*turn, t.piece, t.move.token), codes) for (turn, codes), t in zip(verdicts(match), match.turns)]


def listed(s: Session, move: Any) -> tuple[int, Any] | None:
    """Where the page lists ``move`` (a placement, by its colour and cells) and its event; None
    while it is not listed (a hold keeps it back)."""
    want = (move.colour, False, sorted(covered(move)))
    snap = s.snapshot()
    index = next((i for i, turn in enumerate(judged(snap)) if turn == want), None)
    return None if index is None else (index, snap["history"][index]["event"])


def restarted(s: Session, folder: Path) -> Session:
    """The server restarted: the session resumed from its data folder."""
    s.store.close()
    return Session.resume(Store.open(folder))


def kept_over_restart(s: Session) -> tuple[dict, list]:
    """What a restart must keep of ``s``: what the page shows of the game and its rings, and
    the boards the adapter holds (with a cell game's corrections standing)."""
    snap = s.snapshot()
    return {key: snap[key] for key in RESTART_KEYS + RESTART_RINGS if key in snap}, s.adapter.held_boards()


def restart_differs(before: tuple[dict, list], after: Session) -> str | None:
    """How the session ``after`` a restart differs from what it kept (``before``:
    :func:`kept_over_restart` just before the restart); None when it does not."""
    page, held = kept_over_restart(after)
    key = next((key for key, value in before[0].items() if page.get(key) != value), None)
    if key is not None:
        return f"{key} differs"
    if held != before[1]:
        return "the hold differs"
    return None if after.notice is None else f"resumed with a notice ({after.notice})"


def killed_now(folder: Path) -> Session:
    """The session a server killed now would resume: the data folder's SQLite file and its
    write-ahead log as they are on disk, copied to ``folder/killed`` (the live session's folder
    untouched), resumed from there. The caller closes its store."""
    copy = folder / "killed"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir()
    for name in (FILENAME, f"{FILENAME}-wal"):  # not the shared-memory index: SQLite rebuilds it
        if (folder / name).exists():
            shutil.copyfile(folder / name, copy / name)
    return Session.resume(Store.open(copy))


def apply(s: Session, step: Step, t: float) -> None:
    """Hand ``step`` to the session (a board seen at source time ``t``)."""
    if step.kind == "board":
        s.observe(dict(step.board), list(step.doubted), t)
    elif step.kind == "tap":
        s.correct_cell(step.cell, step.colour)
    elif step.kind == "pass":
        s.declare_pass(step.colour)
    elif step.kind == "take_back":  # the player taps the stray's move in the history, if listed
        at = listed(s, step.move)
        if at is not None:  # not listed while a hold keeps it back: the player lifts it alone
            s.take_back(*at)
    elif step.kind == "amend":  # an Equilibrix tile's sheet, on the page's move (listed once the rings settle)
        at = listed(s, step.move)
        if at is not None:
            s.amend({"event": at[1], **dict(step.detail)})


def apply_geometrius(s: Session, step: geometrius_stream.Step, t: float) -> None:
    """Hand a Geometrius ``step`` to the session. The player taps a token where the page
    draws it, and a turn's cards on the page's turn (the true game's turn there) if the page
    lists it; ``asked`` cards only where the page still asks for them (the stream ends with
    them: a tap that found its turn not listed yet is made then). Not on another turn of its
    colour with chips on the token: one colour may chip one token in two turns."""
    if step.kind == "tokens":
        s.observe(list(step.field), [list(p) for p in step.doubted], t)
    elif step.kind == "pass":
        s.declare_pass(step.colour)
    elif step.kind == "top":
        tokens = s.snapshot()["geometrius"]["tokens"]
        at = next(([k["row"], k["col"]] for k in tokens if k["shape"] == step.token), None)
        if at is not None:
            s.correct({"at": at, "top": step.colour})
    else:  # "cards" or "asked"
        turns = s.snapshot()["geometrius"]["turns"]
        mine = [turn for turn in turns if turn["colour"] == step.colour
                and any(slot["token"] == step.token for slot in turn["slots"])]
        # not listed yet (a doubt holds its board back): the player taps it once it is
        if step.turn >= len(turns) or turns[step.turn] not in mine:
            return
        turn = turns[step.turn]
        slot = next(slot for slot in turn["slots"] if slot["token"] == step.token)
        if step.kind == "cards" or not slot["cards"]:
            s.amend({"event": turn["event"], "token": step.token, "cards": list(step.cards)})


@dataclass(frozen=True)
class Kit:
    """What the fuzz needs of a game's streams: the stream, the true game, its turns as the
    page shows them (``verdicts``; ``judged`` the session's), the part of a turn the camera
    sees (``seen``: the Geometrius cards are tapped later), how a step reaches the session
    and a placement in a few words (``label``, for shrunk streams), the part of a turn that
    names the move when it is counted for ``twice`` (``placed``: an Equilibrix tile logged
    again is the same move whatever tile it is judged), and whether the turns the history
    shows more often than the game has them are a move twice (``twice``: given those rows,
    every row, and the last board step)."""

    render: Callable[..., list]
    true_match: Callable[..., Any]
    verdicts: Callable[[Any], list[tuple]]
    judged: Callable[[dict], list[tuple]]
    seen: Callable[[tuple], tuple]
    apply: Callable[[Session, Any, float], None]
    label: Callable[[Any], str]
    placed: Callable[[tuple], tuple]
    twice: Callable[[list[tuple], list[tuple], Any], bool]


CELLS = Kit(fuzz_stream.render, fuzz_stream.true_match, verdicts, judged, lambda turn: turn, apply,
            lambda move: str(len(covered(move))), lambda turn: turn, lambda repeated, shown, board: bool(repeated))
TILES = replace(CELLS, verdicts=verdicts_tiles, judged=judged_tiles, placed=lambda turn: turn[:3],
                label=lambda move: f"{move.tile or len(move.fields)}{'+token' if move.token else ''}")
TOKENS = Kit(geometrius_stream.render, geometrius_stream.true_match, geometrius_stream.verdicts,
             geometrius_stream.judged, lambda turn: turn[:4], apply_geometrius, lambda move: f"({move.describe()})",
             lambda turn: turn, geometrius_stream.twice)
FUZZED = (*GAMES, geometrius_stream.GAME)


def kit(game: str) -> Kit:
    return {geometrius_stream.GAME: TOKENS, "equilibrix": TILES}.get(game, CELLS)


def draw(seed: int, game: str) -> Any:
    """The plan of ``seed`` for ``game`` (one of ``FUZZED``)."""
    return geometrius_stream.draw(seed) if game == geometrius_stream.GAME else fuzz_stream.draw(seed, game)


def run(plan: Any, folder: Path, keep: Iterable[int] | None = None, placements: int | None = None,
        every_step: bool = False) -> list[tuple[str, int, str]]:
    """The promises ``plan``'s stream breaks, as (promise, step, what), the first of each promise
    (``every_step``: ``restart`` checked after every step, see ``FUZZ_RESTART_EVERY_STEP``)."""
    game = kit(plan.game)
    steps = game.render(plan, keep, placements)
    truth = game.true_match(plan, placements)
    expected = game.verdicts(truth)
    once = Counter(repr(game.placed(turn)) for turn, _ in expected if not turn[1])  # Geometrius may repeat a turn
    broken: dict[str, tuple[str, int, str]] = {}

    def fail(promise: str, i: int, what: str) -> None:
        broken.setdefault(promise, (promise, i, what))

    s = Session.start(Store.open(folder), plan.setup_doc, game=plan.game)
    board = None  # the last board step
    for i, step in enumerate(steps):
        board = step if step.kind in ("board", "tokens") else board
        try:
            if step.kind == "restart":
                before = kept_over_restart(s)
                s = restarted(s, folder)
                differs = restart_differs(before, s)
                if differs is not None:
                    fail("restart", i, differs)
                continue
            game.apply(s, step, float(i))
            if every_step:
                resumed = killed_now(folder)
                differs = restart_differs(kept_over_restart(s), resumed)
                resumed.store.close()
                if differs is not None:
                    fail("restart", i, f"killed after this {step.kind} step: {differs}")
        except SessionError as e:
            fail("refused", i, f"{step.kind}: {e.message}")
            continue
        except Exception:  # the promise is that nothing else escapes, whatever it is
            fail("exception", i, traceback.format_exc(limit=-3))
            break
        snap = s.snapshot()
        shown = game.judged(snap)
        times = Counter(repr(game.placed(turn)) for turn in shown if not turn[1])
        if game.twice([turn for turn in shown if not turn[1]
                       and times[repr(game.placed(turn))] > max(1, once[repr(game.placed(turn))])], shown, board):
            fail("twice", i, "a move is in the history twice")
        for j, (turn, h) in enumerate(zip(shown, snap["history"])):
            if j >= len(expected) or game.seen(turn) != game.seen(expected[j][0]):
                break
            if sorted(h["reasons"]) != expected[j][1]:
                fail("flagged", i, f"turn {j} {turn[0]} judged {h['reasons']}, the rules say {expected[j][1]}")
    else:
        snap = s.snapshot()
        if [(turn, sorted(h["reasons"])) for turn, h in zip(game.judged(snap), snap["history"])] != expected:
            fail("history", len(steps), f"logged {len(snap['history'])} turns, the game has {len(expected)}")
        if snap["scores"] != GAME_RULES[plan.game].score_match(truth, s.setup).to_json():
            fail("scores", len(steps), "scores differ from the engine's on the true board")
    s.store.close()
    return list(broken.values())


def shrink(plan: Any, promise: str, scratch: Path, every_step: bool = False) -> tuple[list[int], int]:
    """The fewest placements, then noise events, with which ``plan`` still breaks ``promise``
    (checked as :func:`run` checks it with ``every_step``)."""
    tries = count()

    def breaks(keep: list[int], placements: int) -> bool:
        folder = scratch / f"try{next(tries)}"
        folder.mkdir()
        return any(p == promise for p, _, _ in run(plan, folder, keep, placements, every_step))

    placed = len([m for m in plan.moves if not m.passed])
    keep = list(range(len(plan.noise)))
    placements = next((n for n in range(1, placed + 1) if breaks(keep, n)), placed)
    keep = [i for i in keep if getattr(plan.noise[i], "placement", 0) < placements]
    for i in list(keep):
        fewer = [k for k in keep if k != i]
        if breaks(fewer, placements):
            keep = fewer
    return keep, placements


def describe(plan: Any, keep: list[int], placements: int) -> str:
    moves = truncated(plan.moves, placements)
    label = kit(plan.game).label
    lines = [f"  {plan.game} {plan.setup_doc} seed {plan.seed}: "
             + " ".join(m.colour + ("-" if m.passed else label(m)) for m in moves)]
    lines += [f"    {plan.noise[i]}" for i in keep]
    return "\n".join(lines)


def main() -> None:
    seeds = int(os.environ.get("FUZZ_SEEDS", "200"))
    first = int(os.environ.get("FUZZ_FIRST", "0"))
    games = os.environ.get("FUZZ_GAMES", ",".join(FUZZED)).split(",")
    every_step = os.environ.get("FUZZ_RESTART_EVERY_STEP", "0")
    if every_step not in ("0", "1"):
        raise SystemExit(f"FUZZ_RESTART_EVERY_STEP: 1 (a restart checked after every step) or 0, not {every_step!r}")
    unknown = sorted(set(games) - set(FUZZED))
    if unknown:
        raise SystemExit(f"FUZZ_GAMES: no fuzz for {', '.join(unknown)} (games: {', '.join(FUZZED)})")
    print("| game | seeds | steps | failing seeds | by promise |")
    print("|---|---|---|---|---|")
    failing = []
    with tempfile.TemporaryDirectory() as tmp:
        for game in games:
            failed, steps, by = 0, 0, Counter()
            for seed in range(first, first + seeds):
                plan = draw(seed, game)
                folder = Path(tmp) / f"{game}{seed}"
                folder.mkdir()
                broken = run(plan, folder, every_step=every_step == "1")
                steps += len(kit(game).render(plan))
                by.update(p for p, _, _ in broken)
                if broken:
                    failed += 1
                    failing.append((plan, broken))
            print(f"| {game} | {seeds} | {steps} | {failed} | "
                  f"{', '.join(f'{p} {n}' for p, n in sorted(by.items())) or '-'} |", flush=True)
        for game in games:
            print(f"\nfailing {game} seeds: {[plan.seed for plan, _ in failing if plan.game == game]}")
        for plan, broken in failing[:int(os.environ.get("FUZZ_SHRINK", "5"))]:
            promise, step, what = broken[0]
            scratch = Path(tmp) / f"shrink{plan.game}{plan.seed}"
            scratch.mkdir()
            keep, placements = shrink(plan, promise, scratch, every_step == "1")
            print(f"\n{promise} (step {step}: {what.strip().splitlines()[-1]}); shrunk:")
            print(describe(plan, keep, placements))
