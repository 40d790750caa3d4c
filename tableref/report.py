"""Verdicts and score sheets as contract JSON and as text a person reads at the table."""
from __future__ import annotations

from typing import Callable, Mapping

from rules.placement import Match, Turn
from rules.scoring import ScoreSheet


def turn_json(turn: Turn, cell_json: Callable[[tuple], object] = list) -> dict:
    """A judged move as ``check`` prints it; ``cell_json`` writes a cell as the game's records do."""
    doc = {
        "index": turn.index,
        "legal": turn.legal,
        "reasons": [v.code for v in turn.violations],
        "colour": turn.move.colour,
        "piece": turn.piece,
        "pass": turn.move.passed,
    }
    if turn.violations:
        doc["details"] = [{"code": v.code, "rule": v.rule, "message": v.message, "warning": v.warning,
                           "cells": [cell_json(c) for c in v.cells]} for v in turn.violations]
    return doc


def check_json(match: Match, sheet: ScoreSheet, cell_json: Callable[[tuple], object] = list) -> dict:
    return {"moves": [turn_json(t, cell_json) for t in match.turns], "scores": sheet.to_json(),
            "game_over": match.over}


def turn_text(turn: Turn, names: Mapping[str, str]) -> str:
    who = names.get(turn.move.colour, turn.move.colour)
    what = "passes" if turn.move.passed else (turn.piece or "?")
    line = f"{turn.index:4d}  {who:<7} {what:<7} "
    if turn.legal:
        return line + "ok"
    return line + "; ".join(f"{'warning' if v.warning else 'ILLEGAL'} {v.code} ({v.rule}): {v.message}"
                            for v in turn.violations)


def check_text(match: Match, sheet: ScoreSheet, names: Mapping[str, str]) -> str:
    illegal = sum(not t.legal for t in match.turns)
    lines = [turn_text(t, names) for t in match.turns]
    lines.append("")
    lines.append(f"{len(match.turns)} moves, {illegal} flagged; game {'over' if match.over else 'not over'}")
    return "\n".join(lines) + "\n\n" + score_text(sheet)


def score_text(sheet: ScoreSheet) -> str:
    lines = ["place  player            score  penalty  bonus  remaining"]
    for p in sheet.players:
        lines.append(f"{p.place:>5}  {p.name:<16} {p.score:>6} {p.penalty:>8} {p.bonus:>6}  "
                     + (" ".join(p.remaining) or "-"))
    for words in sheet.tiebreak:
        lines.append(f"tiebreak: {words}")
    for flag in sheet.flags:
        lines.append(f"flag {flag.code} ({flag.rule}): {flag.message}")
    for u in sheet.undecided:
        lines.append(f"undecided ({u.rule}): {u.message}")
    return "\n".join(lines)


def reading_text(reading) -> str:
    """The board as read, uncertain cells shown as '?', with confidence and time."""
    if hasattr(reading, "text"):  # a board that is not a grid (Equilibrix) says itself how it was read
        return reading.text()
    rows = [list(r) for r in reading.board]
    for r, c in reading.uncertain:
        rows[r][c] = "?"
    doc = reading.to_state_json()
    lines = ["".join(r) for r in rows]
    lines.append(f"confidence {doc['confidence']:.3f}, {len(reading.uncertain)} uncertain cell(s), "
                 f"{doc['timing_ms']:.0f} ms")
    return "\n".join(lines)


def photo_text(result) -> str:
    return reading_text(result.reading) + "\n\n" + score_text(result.sheet)
