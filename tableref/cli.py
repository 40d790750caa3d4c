"""The ``tableref`` command line (``shared/contract.md``).

Every command prints readable text, or one JSON object with ``--json``; exit status 0 on
success, 1 for unreadable or invalid input (one line on stderr, ``{"error": ...}`` on
stdout under ``--json``), 2 for bad usage. A user never sees a traceback.
"""
from __future__ import annotations

import argparse
import codecs
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from calibration import cli as calibrate_cli
from rules import blokus
from rules.errors import InputError, parse_json
from rules.records import GAMES, GAME_RULES, colour_names, game_of, parse_record, setup_of
from rules.scoring import ScoreSheet
from rules.sgf import to_sgf

from . import report


# What a state document tells of the table as the camera saw it, not of the game's setup: an
# Equilibrix reading's "ring" (the tiles left, by shape; a taken tile's slot null) and "origin"
# are not a record's ring of tile names, and no score depends on them.
SEEN_NOT_SETUP = {"equilibrix": ("ring", "origin")}


def _read_json(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors) is no fault
    except OSError as e:
        raise InputError("unreadable_file", f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise InputError("bad_json", f"{path} is not a UTF-8 JSON file") from None
    try:
        return parse_json(text, path)
    except ValueError as e:
        raise InputError("bad_json", str(e)) from None


def _is_json_file(path: str) -> bool:
    """Whether ``score``'s input is a state document (else a photo). A file that cannot be
    opened is judged by its name, so that its refusal is the one ``check`` (a .json file,
    ``unreadable_file``) or ``read`` (a photo, ``unreadable_image``) gives for it."""
    named_json = path.lower().endswith(".json")
    try:
        with open(path, "rb") as f:
            head = f.read(64).removeprefix(codecs.BOM_UTF8).lstrip()  # a byte-order mark (Windows editors)
    except OSError:
        return named_json
    return head[:1] in (b"{", b"[") or named_json


def _state_document(doc: Any) -> tuple[Any, list]:
    """The state to score, and the cells read without confidence.

    ``tableref read --json`` prints the state under "state" beside its "uncertain" cells, and a
    user saves that output to score it later: its state is scored and those cells are named in
    ``undecided``, as scoring the photo itself does.
    """
    if not (isinstance(doc, dict) and "game" not in doc and isinstance(doc.get("state"), dict)):
        return doc, []
    unread = doc.get("uncertain", [])
    if not isinstance(unread, list) or not all(isinstance(c, str) or (isinstance(c, list) and all(
            type(v) is int for v in c)) for c in unread):
        raise InputError("bad_state", "'uncertain' must list the cells read without confidence, as 'read' names them")
    return doc["state"], unread


def _last_pieces(values: list[str], game: str) -> dict[str, str]:
    if values and game != "blokus":  # silently ignored, it would promise a bonus no rule gives
        raise InputError("bad_usage", f"--last-piece is for Blokus (its S3 bonus), not {game}")
    out = {}
    for value in values or ():
        colour, sep, piece = value.replace(":", "=").partition("=")
        if not sep or colour not in blokus.COLOURS or piece not in blokus.SHAPES:
            raise InputError("bad_last_piece", f"--last-piece {value!r}: expected COLOUR=PIECE, e.g. B=1 "
                                            f"(colours {' '.join(blokus.COLOURS)}, pieces {' '.join(blokus.SHAPES)})")
        out[colour] = piece
    return out


# --- commands --------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> tuple[dict, str]:
    record = parse_record(_read_json(args.record))
    match = record.module.new_match(record.setup)
    for move in record.moves:
        match = match.play(move)
    sheet = record.module.score_match(match, record.setup)
    if args.sgf:
        if record.game != "blokus":
            raise InputError("bad_usage", "--sgf writes Blokus games only (Pentobi's .blksgf)")
        try:
            Path(args.sgf).write_text(to_sgf(match, record.setup), encoding="utf-8")
        except OSError as e:
            raise InputError("unwritable_file", f"cannot write {args.sgf}: {e.strerror or e}") from None
    names = colour_names(record.game, record.setup)
    cell_json = getattr(record.module, "cell_json", list)
    return report.check_json(match, sheet, cell_json), report.check_text(match, sheet, names)


def cmd_score(args: argparse.Namespace) -> tuple[dict, str]:
    if _is_json_file(args.input):
        doc, unread = _state_document(_read_json(args.input))
        game = game_of(doc, args.game)  # without --game, the state names its game
        last = _last_pieces(args.last_piece, game)
        module = GAME_RULES[game]
        seen = SEEN_NOT_SETUP.get(game, ())
        # An unknown --variant is the rules' ``bad_setup``, as in a record (``check``) or for a photo.
        setup = setup_of(game, {k: v for k, v in doc.items() if k not in seen}, args.variant)
        try:
            sheet = module.score_state(doc, setup, last).with_unread(unread, "in the photo")
        except ValueError as e:
            raise InputError("bad_state", str(e)) from None
        return sheet.to_json(), report.score_text(sheet)
    from vision.photo import score_photo

    game = args.game or "blokus"
    last = _last_pieces(args.last_piece, game)
    result = score_photo(args.input, game, args.variant, last, args.debug_dir, args.calibration)
    return result.to_json(), report.photo_text(result)


def cmd_read(args: argparse.Namespace) -> tuple[dict, str]:
    from vision.photo import read_photo

    reading = read_photo(args.image, args.game, args.debug_dir, args.calibration)
    return reading.to_state_json(), report.reading_text(reading)


def _whole(low: int, high: int | None, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, else a usage error (exit 2)
    naming what it is, not a socket's or OpenCV's own complaint later."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{what} is a whole number from {low}" +
                                             (f" to {high}" if high is not None else " up") + f", not {text!r}")
        return value
    return parse


def cmd_serve(args: argparse.Namespace) -> tuple[dict, str] | None:
    from companion_app.server import serve

    serve(args)
    return None


# --- parsing and dispatch --------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tableref", description="Referee and scorekeeper for board games seen by a camera.")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, run: Callable, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.set_defaults(run=run)
        return p

    p = add("check", cmd_check, "replay a game record JSON: a verdict for every move, final scores")
    p.add_argument("record")
    p.add_argument("--sgf", metavar="FILE", help="also write the game as a Pentobi .blksgf file")

    p = add("score", cmd_score, "score a finished board from a photo or a state JSON")
    p.add_argument("input")
    p.add_argument("--game", choices=GAMES, help="default: the state file's game; blokus for a photo")
    p.add_argument("--variant", help="; ".join(f"{g}: {', '.join(m.VARIANTS)}" for g, m in GAME_RULES.items()))
    p.add_argument("--last-piece", action="append", metavar="COLOUR=PIECE",
                   help="the piece a colour placed last (S3), e.g. B=1; repeatable")
    p.add_argument("--calibration", metavar="FILE")
    p.add_argument("--debug-dir", metavar="DIR")

    p = add("read", cmd_read, "read a board state from a photo")
    p.add_argument("image")
    p.add_argument("--game", choices=GAMES, required=True)
    p.add_argument("--calibration", metavar="FILE")
    p.add_argument("--debug-dir", metavar="DIR")

    calibrate_cli.add_parser(sub, camera_number=_whole(0, None, "a camera's number"))

    p = add("serve", cmd_serve, "live referee and the tablet page")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--camera", type=_whole(0, None, "a camera's number"), metavar="N")
    source.add_argument("--video", metavar="FILE")
    source.add_argument("--frames", metavar="DIR")
    source.add_argument("--demo", action="store_true", help="a bundled demo game, no camera needed")
    p.add_argument("--game", choices=GAMES, default="blokus")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this computer only)")
    p.add_argument("--port", type=_whole(0, 65535, "a port"), default=8000, help="0: any free port")
    p.add_argument("--data", metavar="DIR", help="data folder for game sessions")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        out = args.run(args)
    except InputError as e:
        return _fail(args, e.code, e.message)
    except Exception as e:  # a reader error or a bug: one line, never a traceback
        if os.environ.get("TABLEREF_DEBUG"):
            raise
        code = getattr(e, "code", "internal_error")
        return _fail(args, code, getattr(e, "message", None) or f"internal error: {e}")
    if out is not None:
        doc, text = out
        _emit(json.dumps(doc) if args.json else text)
    return 0


def _fail(args: argparse.Namespace, code: str, message: str) -> int:
    """Report a refusal in the contract's form: exit 2 for flags that do not go together (bad
    usage, as argparse's own refusals), 1 for input that is unreadable or invalid."""
    print(f"tableref: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        _emit(json.dumps({"error": {"code": code, "message": message}}))
    return 2 if code == "bad_usage" else 1


def _emit(text: str) -> None:
    """Print the answer; a reader that stopped listening (``tableref read ... | head``) is no
    error to report, and never a traceback."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit, flushing stdout


if __name__ == "__main__":
    sys.exit(main())
