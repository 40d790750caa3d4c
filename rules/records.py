"""Game records and state files (contract JSON) read into plain data, with clear errors.

Pure: takes already-parsed JSON values. Every problem raises :class:`InvalidInput` with a
code and a one-line message, which the command line turns into exit status 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import blokus, equilibrix, flower, gemblo, geometrius
from .errors import InputError
from .placement import Match, Move

GAMES = ("blokus", "gemblo", "geometrius", "equilibrix")
GAME_RULES: dict[str, ModuleType] = {"blokus": blokus, "gemblo": gemblo, "geometrius": geometrius,
                                     "equilibrix": equilibrix}


class InvalidInput(InputError):
    """A record or state document that breaks the contract."""


@dataclass(frozen=True)
class Record:
    game: str
    setup: Any  # the game module's Setup
    moves: tuple[Move, ...]

    @property
    def module(self) -> ModuleType:
        return GAME_RULES[self.game]


def _expect(cond: bool, code: str, message: str) -> None:
    if not cond:
        raise InvalidInput(code, message)


def _flag(doc: dict, key: str, code: str, where: str) -> bool:
    """A yes/no entry, false when absent. Only JSON ``true``/``false``: Python would take the
    string "no" or "false" for true, and play the 5+1 token or fix the corners unasked."""
    value = doc.get(key, False)
    _expect(type(value) is bool, code, f"{where}'{key}' must be true or false, not {value!r}")
    return value


def _cell(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(x) is int for x in value)


def game_of(doc: Any, expected: str | None = None) -> str:
    """The document's game, checked against the one asked for and what is supported."""
    _expect(isinstance(doc, dict), "bad_format", "expected a JSON object")
    game = doc.get("game")
    _expect(game in GAMES, "unknown_game", f"unknown game {game!r} (one of {', '.join(GAMES)})")
    if expected is not None:
        _expect(game == expected, "wrong_game", f"this is a {game} file, not {expected}")
    return game


def setup_of(game: str, doc: dict, variant: str | None = None) -> Any:
    """The table's setup from a record or state document (a CLI option overrides the variant)."""
    module = GAME_RULES[game]
    if game == "geometrius":
        return geometrius.setup_from(doc, variant)
    variant = variant or doc.get("variant") or module.VARIANTS[0]
    settings = doc.get("settings") or {}
    _expect(isinstance(settings, dict), "bad_format", "'settings' must be an object")
    players = doc.get("players") or []
    _expect(isinstance(players, list), "bad_format", "'players' must be a list")
    parsed_players = []
    for i, p in enumerate(players):
        _expect(isinstance(p, dict) and isinstance(p.get("colours"), list), "bad_format",
                f"player {i} needs a 'colours' list")
        for c in p["colours"]:
            _expect(c in module.COLOURS, "unknown_colour",
                    f"player {i}: unknown colour {c!r} (use {' '.join(module.COLOURS)})")
        parsed_players.append((str(p.get("name") or f"Player {i + 1}"), tuple(p["colours"])))
    starts = doc.get("starts") or {}
    _expect(isinstance(starts, dict) and all(_cell(v) for v in starts.values()), "bad_format",
            "'starts' must map a colour to a cell, e.g. {\"R\": [19, 19]}")
    options: dict[str, Any] = {"variant": variant, "players": tuple(parsed_players),
                               "starts": {c: tuple(v) for c, v in starts.items()}}
    if game == "equilibrix":
        return _equilibrix_setup(doc, options, settings)
    if game == "blokus":
        options["fixed_corners"] = _flag(settings, "fixed_corners", "bad_format", "")
        options["neutral"] = settings.get("neutral", "G")
    else:
        options["rotated_4p"] = _flag(settings, "rotated_4p", "bad_format", "")
        five = settings.get("five_player_starts")
        if five is not None:
            _expect(isinstance(five, list) and all(_cell(c) for c in five) and len(five) == 5, "bad_format",
                    "'five_player_starts' must list five [q, r] cells")
            options["five_player_starts"] = tuple(tuple(c) for c in five)
        if "costs" in settings:
            _expect(isinstance(settings["costs"], dict), "bad_format", "'costs' must map piece ids to numbers")
            options["costs"] = dict(settings["costs"])
    try:
        return module.Setup(**options)
    except (ValueError, TypeError) as e:
        raise InvalidInput("bad_setup", str(e)) from None


def _equilibrix_setup(doc: dict, options: dict, settings: dict) -> Any:
    options.pop("starts")
    if "ring" in doc:
        _expect(isinstance(doc["ring"], list) and all(isinstance(t, str) for t in doc["ring"]), "bad_format",
                "'ring' must list the ring tiles clockwise")
        options["ring"] = tuple(doc["ring"])
    if "origin" in doc:
        _expect(type(doc["origin"]) is int, "bad_format", "'origin' must be a ring slot number")
        options["origin"] = doc["origin"]
    if "offered" in settings:
        offered = settings["offered"]
        _expect(isinstance(offered, dict) and all(type(n) is int for n in offered.values()), "bad_format",
                "'offered' must map each colour to the number of ring tiles offered")
        options["offered"] = dict(offered)
    if "markers" in settings:
        _expect(isinstance(settings["markers"], list) and all(isinstance(m, list) and len(m) == 3 and _cell(m[:2])
                                                               for m in settings["markers"]),
                "bad_format", "'markers' must list [q, s, colour] triples")
        options["markers"] = {(m[0], m[1]): m[2] for m in settings["markers"]}
        _expect(len(options["markers"]) == len(settings["markers"]), "bad_setup",
                "'markers' names a node twice: which colour its marker has would be a guess")
    if "territory" in settings:
        options["territory"] = settings["territory"]
    if "shapes" in settings:
        _expect(isinstance(settings["shapes"], dict) and all(
            isinstance(v, list) and all(isinstance(f, str) for f in v) for v in settings["shapes"].values()),
            "bad_format", "'shapes' must map names to field lists")
        options["shapes"] = {k: tuple(v) for k, v in settings["shapes"].items()}
    try:
        setup = equilibrix.Setup(**options)
        setup.tiles  # the shapes must parse and differ
    except (ValueError, TypeError) as e:
        raise InvalidInput("bad_setup", str(e)) from None
    return setup


def parse_equilibrix_move(raw: Any, index: int) -> equilibrix.Move:
    _expect(isinstance(raw, dict), "bad_move", f"move {index} must be an object")
    colour = raw.get("colour")
    _expect(colour in equilibrix.COLOURS, "unknown_colour", f"move {index}: unknown colour {colour!r} (B or W)")
    if raw.get("pass") is True:
        return equilibrix.Move(colour, passed=True)
    fields = raw.get("fields")
    _expect(isinstance(fields, list) and len(fields) > 0, "bad_move",
            f"move {index} needs a non-empty 'fields' list or \"pass\": true")
    try:
        cells = tuple(flower.parse_field(f) for f in fields)
    except ValueError as e:
        raise InvalidInput("bad_move", f"move {index}: {e}") from None
    tile = raw.get("tile")
    _expect(tile is None or isinstance(tile, str), "bad_move", f"move {index}: 'tile' must be a ring tile name")
    return equilibrix.Move(colour, cells, tile, _flag(raw, "token", "bad_move", f"move {index}: "))


def parse_move(raw: Any, index: int, colours: tuple[str, ...]) -> Move:
    _expect(isinstance(raw, dict), "bad_move", f"move {index} must be an object")
    colour = raw.get("colour")
    _expect(colour in colours, "unknown_colour", f"move {index}: unknown colour {colour!r}")
    if raw.get("pass") is True:
        return Move(colour, passed=True)
    cells = raw.get("cells")
    _expect(isinstance(cells, list) and len(cells) > 0, "bad_move",
            f"move {index} needs a non-empty 'cells' list or \"pass\": true")
    _expect(all(_cell(c) for c in cells), "bad_move", f"move {index}: each cell must be a pair of integers")
    return Move(colour, tuple(tuple(c) for c in cells))


def parse_record(doc: Any, expected_game: str | None = None) -> Record:
    game = game_of(doc, expected_game)
    setup = setup_of(game, doc)
    moves = doc.get("moves")
    _expect(isinstance(moves, list), "bad_format", "a record needs a 'moves' list")
    if game == "equilibrix":
        parsed = tuple(parse_equilibrix_move(m, i) for i, m in enumerate(moves))
    elif game == "geometrius":
        parsed = tuple(geometrius.parse_move(m, i, setup.colour_names) for i, m in enumerate(moves))
    else:
        parsed = tuple(parse_move(m, i, GAME_RULES[game].COLOURS) for i, m in enumerate(moves))
    in_play = colours_in_play(game, setup)
    for i, move in enumerate(parsed):
        _expect(move.colour in in_play, "unknown_colour",
                f"move {i}: colour {move.colour!r} is not in this game (playing: {' '.join(in_play)})")
    return Record(game, setup, parsed)


def colours_in_play(game: str, setup: Any) -> tuple[str, ...]:
    """The colours whose moves a game with this setup can hold."""
    if game == "gemblo":
        return gemblo.rules(setup).colours
    if game == "geometrius":
        return setup.turn_order
    return GAME_RULES[game].COLOURS


def colour_names(game: str, setup: Any) -> dict[str, str]:
    """How a game with this setup names its colours in words: Geometrius' names are a setting."""
    if game == "geometrius":
        return setup.names
    return dict(GAME_RULES[game].COLOUR_NAMES)


def record_json(match: Match, setup: Any) -> dict:
    """A match as the contract's game record (a live session's export)."""
    doc = {
        "game": match.rules.game,
        "variant": setup.variant,
        "players": [{"name": n, "colours": list(c)} for n, c in setup.player_list],
        "moves": [
            {"colour": t.move.colour, "pass": True} if t.move.passed
            else {"colour": t.move.colour, "cells": [list(c) for c in t.move.cells]}
            for t in match.turns
        ],
    }
    if setup.starts:
        doc["starts"] = {c: list(v) for c, v in setup.starts.items()}
    if setup.settings_json():
        doc["settings"] = setup.settings_json()
    return doc
