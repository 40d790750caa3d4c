"""Game records and state files (contract JSON) read into plain data, with clear errors.

Pure: takes already-parsed JSON values. Every problem raises :class:`InvalidInput` with a
code and a one-line message, which the command line turns into exit status 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import blokus
from .placement import Match, Move

GAMES = ("blokus", "gemblo", "geometrius", "equilibrix")


class InvalidInput(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Record:
    game: str
    setup: blokus.Setup
    moves: tuple[Move, ...]


def _expect(cond: bool, code: str, message: str) -> None:
    if not cond:
        raise InvalidInput(code, message)


def game_of(doc: Any, expected: str | None = None) -> str:
    _expect(isinstance(doc, dict), "bad_format", "expected a JSON object")
    game = doc.get("game")
    _expect(game in GAMES, "unknown_game", f"unknown game {game!r} (one of {', '.join(GAMES)})")
    if expected is not None:
        _expect(game == expected, "wrong_game", f"this is a {game} file, not {expected}")
    _expect(game == "blokus", "unsupported_game", f"{game} is not supported yet")
    return game


def blokus_setup(doc: dict, variant: str | None = None) -> blokus.Setup:
    """The table's setup from a record or state document (CLI options override)."""
    variant = variant or doc.get("variant") or "classic"
    settings = doc.get("settings") or {}
    _expect(isinstance(settings, dict), "bad_format", "'settings' must be an object")
    players = doc.get("players") or ()
    _expect(isinstance(players, list) or players == (), "bad_format", "'players' must be a list")
    parsed_players = []
    for i, p in enumerate(players):
        _expect(isinstance(p, dict) and isinstance(p.get("colours"), list), "bad_format",
                f"player {i} needs a 'colours' list")
        for c in p["colours"]:
            _expect(c in blokus.COLOURS, "unknown_colour", f"player {i}: unknown colour {c!r} (use B Y R G)")
        parsed_players.append((str(p.get("name") or f"Player {i + 1}"), tuple(p["colours"])))
    starts = doc.get("starts") or {}
    _expect(isinstance(starts, dict), "bad_format", "'starts' must be an object of colour: [row, col]")
    for colour, corner in starts.items():
        _expect(isinstance(corner, list) and len(corner) == 2 and all(type(x) is int for x in corner),
                "bad_format", f"start of {colour!r} must be [row, col]")
    try:
        return blokus.Setup(
            variant=variant,
            players=tuple(parsed_players),
            fixed_corners=bool(settings.get("fixed_corners", False)),
            starts={c: tuple(v) for c, v in starts.items()},
            neutral=settings.get("neutral", "G"),
        )
    except ValueError as e:
        raise InvalidInput("bad_setup", str(e)) from None


def parse_move(raw: Any, index: int, colours: tuple[str, ...]) -> Move:
    _expect(isinstance(raw, dict), "bad_move", f"move {index} must be an object")
    colour = raw.get("colour")
    _expect(colour in colours, "unknown_colour", f"move {index}: unknown colour {colour!r}")
    if raw.get("pass") is True:
        return Move(colour, passed=True)
    cells = raw.get("cells")
    _expect(isinstance(cells, list) and len(cells) > 0, "bad_move",
            f"move {index} needs a non-empty 'cells' list or \"pass\": true")
    for cell in cells:
        _expect(isinstance(cell, list) and len(cell) == 2 and all(type(x) is int for x in cell),
                "bad_move", f"move {index}: each cell must be [row, col] integers")
    return Move(colour, tuple(tuple(c) for c in cells))


def parse_record(doc: Any, expected_game: str | None = None) -> Record:
    game = game_of(doc, expected_game)
    setup = blokus_setup(doc)
    moves = doc.get("moves")
    _expect(isinstance(moves, list), "bad_format", "a record needs a 'moves' list")
    return Record(game, setup, tuple(parse_move(m, i, blokus.COLOURS) for i, m in enumerate(moves)))


def record_json(match: Match, setup: blokus.Setup) -> dict:
    """A match as the contract's game record (the live session's export)."""
    return {
        "game": match.rules.game,
        "variant": setup.variant,
        "players": [{"name": n, "colours": list(c)} for n, c in setup.player_list],
        "moves": [
            {"colour": t.move.colour, "pass": True} if t.move.passed
            else {"colour": t.move.colour, "cells": [list(c) for c in t.move.cells]}
            for t in match.turns
        ],
        **({"starts": {c: list(v) for c, v in setup.starts.items()}} if setup.starts else {}),
        **({"settings": {"fixed_corners": True}} if setup.fixed_corners else {}),
    }
