"""The command line as outside tools use it: exit codes, JSON shapes, one-line errors."""
import json
import subprocess
import sys

import numpy as np
import pytest

from rules import blokus
from rules.placement import random_playout
from rules.records import record_json
from tableref.cli import main


@pytest.fixture(scope="module")
def played():
    return random_playout(blokus.rules(), np.random.default_rng(21))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def test_check_legal_game(tmp_path, capsys, played):
    record = write(tmp_path, "game.json", record_json(played, blokus.Setup()))
    code, out, err = run(capsys, "check", record, "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert len(doc["moves"]) == len(played.turns)
    assert all(m["legal"] and m["reasons"] == [] for m in doc["moves"])
    assert doc["moves"][0] == {"index": 0, "legal": True, "reasons": [], "colour": "B",
                               "piece": played.turns[0].piece, "pass": False}
    expected = blokus.score(played.position, last_piece=blokus.match_last_pieces(played)).to_json()
    assert doc["scores"] == expected
    assert doc["game_over"] is True


def test_check_flags_illegal_move_with_reason(tmp_path, capsys, played):
    rec = record_json(played, blokus.Setup())
    rec["moves"][6]["cells"] = rec["moves"][2]["cells"]  # overlap
    code, out, _ = run(capsys, "check", write(tmp_path, "bad.json", rec), "--json")
    doc = json.loads(out)
    assert code == 0
    first_bad = next(m for m in doc["moves"] if not m["legal"])
    assert first_bad["index"] == 6 and "overlap" in first_bad["reasons"]
    assert first_bad["details"][0]["rule"] == "B1"


def test_check_text_and_sgf(tmp_path, capsys, played):
    sgf = tmp_path / "game.blksgf"
    code, out, _ = run(capsys, "check", write(tmp_path, "g.json", record_json(played, blokus.Setup())),
                       "--sgf", str(sgf))
    assert code == 0
    assert "0 flagged" in out and "place  player" in out
    text = sgf.read_text()
    assert text.startswith("(;FF[4]") and "GM[Blokus]" in text
    first = played.turns[0].move
    from rules.sgf import point
    assert f";1[{','.join(point(c) for c in first.cells)}]" in text
    assert point((19, 0)) == "a1" and point((0, 19)) == "t20"


def test_sgf_game_names():
    from rules.sgf import to_sgf

    m = blokus.new_match(blokus.Setup(variant="two-player"))
    assert "GM[Blokus Two-Player]" in to_sgf(m, blokus.Setup(variant="two-player"))
    assert "GM[Blokus Three-Player]" in to_sgf(m, blokus.Setup(variant="three-player-shared"))


def test_score_state(tmp_path, capsys, played):
    state = write(tmp_path, "state.json", {"game": "blokus", "board": blokus.board_rows(played.position)})
    code, out, _ = run(capsys, "score", state, "--game", "blokus", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["players"] == blokus.score(played.position).to_json()["players"]
    code, out, _ = run(capsys, "score", state, "--game", "blokus", "--variant", "two-player")
    assert code == 0 and "Player 1" in out


def test_score_last_piece_option(tmp_path, capsys):
    from tests.test_rules_blokus import full_board_for

    rows = blokus.board_rows(full_board_for("B"))
    state = write(tmp_path, "s.json", {"game": "blokus", "board": rows})
    _, out, _ = run(capsys, "score", state, "--json")
    assert json.loads(out)["players"][0]["score"] == 15
    assert json.loads(out)["undecided"][0]["rule"] == "S3"
    _, out, _ = run(capsys, "score", state, "--json", "--last-piece", "B=1")
    assert json.loads(out)["players"][0]["score"] == 20


BAD = [
    ("malformed.json", "{not json", "bad_json"),
    ("short.json", {"game": "blokus", "board": ["." * 20] * 3}, "bad_state"),
    ("letters.json", {"game": "blokus", "board": ["Q" + "." * 19] + ["." * 20] * 19}, "bad_state"),
    ("other.json", {"game": "gemblo", "cells": {}}, "wrong_game"),
    ("nogame.json", {"board": []}, "unknown_game"),
    ("read.json", {"state": {"game": "blokus", "board": ["." * 20] * 20}, "uncertain": [5]}, "bad_state"),
]


@pytest.mark.parametrize("name, doc, code", BAD)
def test_score_bad_input(tmp_path, capsys, name, doc, code):
    status, out, err = run(capsys, "score", write(tmp_path, name, doc), "--game", "blokus", "--json")
    assert status == 1
    assert json.loads(out)["error"]["code"] == code
    assert err.startswith("tableref: ") and err.count("\n") == 1


@pytest.mark.parametrize("rec, code", [
    ({"game": "blokus", "moves": [{"colour": "X", "cells": [[0, 0]]}]}, "unknown_colour"),
    ({"game": "blokus", "moves": [{"colour": "B", "cells": "a1"}]}, "bad_move"),
    ({"game": "blokus", "moves": "none"}, "bad_format"),
    ({"game": "blokus", "variant": "seven", "moves": []}, "bad_setup"),
    ({"game": "geometrius", "moves": []}, "bad_setup"),
    ({"game": "gemblo", "variant": "3p", "moves": [{"colour": "P", "cells": [[0, 0]]}]}, "unknown_colour"),
    ({"game": "equilibrix", "moves": [{"colour": "B", "fields": ["P 0 0 0"], "token": "no"}]}, "bad_move"),
    ({"game": "gemblo", "variant": "4p", "settings": {"rotated_4p": "false"}, "moves": []}, "bad_format"),
    ({"game": "blokus", "settings": {"fixed_corners": "no"}, "moves": []}, "bad_format"),
    pytest.param('{"game": "blokus", "moves": ' + "[" * 100_000 + "]" * 100_000 + "}", "bad_json", id="nested"),
])
def test_check_bad_records(tmp_path, capsys, rec, code):
    status, out, err = run(capsys, "check", write(tmp_path, "r.json", rec), "--json")
    assert status == 1 and json.loads(out)["error"]["code"] == code and "Traceback" not in err


def test_off_board_cells_in_a_record_are_a_rule_violation(tmp_path, capsys):
    rec = {"game": "blokus", "moves": [{"colour": "B", "cells": [[0, 0], [0, -1]]}]}
    _, out, _ = run(capsys, "check", write(tmp_path, "r.json", rec), "--json")
    assert "off_board" in json.loads(out)["moves"][0]["reasons"]


def test_usage_error_exit_2():
    proc = subprocess.run([sys.executable, "-m", "tableref.cli", "check"], capture_output=True, text=True)
    assert proc.returncode == 2


def test_missing_file_is_one_line(capsys):
    status, out, err = run(capsys, "check", "/nonexistent/record.json")
    assert status == 1 and err.strip() == "tableref: cannot read /nonexistent/record.json: No such file or directory"


def test_gemblo_check_and_score(tmp_path, capsys):
    from rules import gemblo

    setup = gemblo.Setup(variant="3p")
    played = random_playout(gemblo.rules(setup), np.random.default_rng(2))
    rec = record_json(played, setup)
    code, out, _ = run(capsys, "check", write(tmp_path, "g.json", rec), "--json")
    doc = json.loads(out)
    assert code == 0 and all(m["legal"] for m in doc["moves"])
    assert doc["scores"] == gemblo.score(played.position, setup).to_json()
    rec["moves"][4]["cells"] = rec["moves"][1]["cells"]
    _, out, _ = run(capsys, "check", write(tmp_path, "bad.json", rec), "--json")
    assert "overlap" in json.loads(out)["moves"][4]["reasons"]
    state = {"game": "gemblo", "variant": "3p", "cells": gemblo.cells_json(played.position)}
    code, out, _ = run(capsys, "score", write(tmp_path, "s.json", state), "--game", "gemblo", "--json")
    assert code == 0 and json.loads(out)["players"] == doc["scores"]["players"]
    code, out, _ = run(capsys, "score", write(tmp_path, "s.json", state), "--game", "gemblo",
                       "--variant", "classic", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "bad_setup"
    state["cells"]["40,0"] = "C"
    code, out, _ = run(capsys, "score", write(tmp_path, "s.json", state), "--game", "gemblo", "--json")
    assert code == 1 and "off the 463-cell board" in json.loads(out)["error"]["message"]


@pytest.fixture(scope="module")
def board_photo(tmp_path_factory):
    """A generated phone photo of a mid-game Blokus board, saved as a JPEG file."""
    import cv2

    from vision.synth.blokus import render_photo
    from vision.synth.conditions import CONDITIONS

    rng = np.random.default_rng(5)
    shot = render_photo(blokus.random_game_state(rng, 30), CONDITIONS["clean"], rng, size=(1280, 960))
    path = tmp_path_factory.mktemp("photo") / "board.jpg"
    cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return str(path), shot.state


def test_read_photo_json(capsys, board_photo, tmp_path):
    path, truth = board_photo
    code, out, _ = run(capsys, "read", path, "--game", "blokus", "--json", "--debug-dir", str(tmp_path / "dbg"))
    doc = json.loads(out)
    assert code == 0 and doc["state"] == {"game": "blokus", "board": truth}
    assert 0 <= doc["confidence"] <= 1 and doc["uncertain"] == [] and doc["timing_ms"] > 0
    assert {p.name for p in (tmp_path / "dbg").iterdir()} == {"rectified.png", "overlay.png"}
    code, out, _ = run(capsys, "read", path, "--game", "blokus")
    assert code == 0 and out.splitlines()[:20] == truth


def test_score_photo_matches_scoring_its_state(capsys, board_photo):
    path, truth = board_photo
    code, out, _ = run(capsys, "score", path, "--game", "blokus", "--variant", "team", "--json")
    doc = json.loads(out)
    expected = blokus.score_state({"board": truth}, blokus.Setup(variant="team")).to_json()
    assert code == 0 and doc["players"] == expected["players"] and doc["reading"]["state"]["board"] == truth


@pytest.mark.parametrize("argv, code", [
    (["read", "{photo}", "--game", "geometrius", "--json"], "no_board"),
    (["score", "{photo}", "--game", "blokus", "--variant", "6p", "--json"], "bad_setup"),
    (["read", "{noise}", "--game", "blokus", "--json"], "no_board"),
    (["read", "{table}", "--game", "gemblo", "--json"], "no_board"),
    (["read", "{table}", "--game", "equilibrix", "--json"], "no_board"),
    (["read", "{dark}", "--game", "gemblo", "--json"], "underexposed"),
    (["score", "{dark}", "--game", "geometrius", "--json"], "underexposed"),
    (["read", "{text}", "--game", "blokus", "--json"], "not_an_image"),
    (["read", "{grey}", "--game", "blokus", "--json"], "no_colour"),
    (["read", "{black}", "--game", "gemblo", "--json"], "underexposed"),  # a lens cap: the light lacks
    (["score", "{grey}", "--game", "equilibrix", "--json"], "no_colour"),
    (["score", "{photo}", "--game", "equilibrix", "--last-piece", "B=1", "--json"], "bad_usage"),
    (["read", "{photo}", "--game", "blokus", "--json", "--debug-dir", "/proc/none/x"], "unwritable_file"),
    # a calibration the user names is wanted: one that cannot be used is refused, not skipped
    (["read", "{photo}", "--game", "blokus", "--calibration", "{text}.cal", "--json"], "calibration_missing"),
    (["score", "{photo}", "--game", "blokus", "--calibration", "{text}", "--json"], "calibration_corrupt"),
])
def test_photo_refusals_are_one_line(capsys, board_photo, tmp_path, argv, code):
    import cv2

    noise = tmp_path / "noise.png"
    cv2.imwrite(str(noise), np.random.default_rng(0).integers(0, 255, (600, 800, 3), dtype=np.uint8))
    table = tmp_path / "table.png"  # a bare grey table, a little grain
    cv2.imwrite(str(table), np.clip(np.random.default_rng(3).normal(120, 6, (720, 960, 3)), 0, 255).astype(np.uint8))
    dark = tmp_path / "dark.png"  # the same table in a nearly dark room: the refusal names the light
    cv2.imwrite(str(dark), np.clip(np.random.default_rng(3).normal(14, 3, (720, 960, 3)), 0, 255).astype(np.uint8))
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo")
    grey = tmp_path / "grey.jpg"  # the board photo in black and white: its pieces' colours are gone
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.imread(board_photo[0]), cv2.COLOR_BGR2GRAY))
    black = tmp_path / "black.png"
    cv2.imwrite(str(black), np.zeros((720, 960, 3), np.uint8))
    names = {"photo": board_photo[0], "noise": str(noise), "table": str(table), "dark": str(dark), "text": str(text),
             "grey": str(grey), "black": str(black)}
    status, out, err = run(capsys, *[a.format(**names) for a in argv])
    error = json.loads(out)["error"]
    assert status == (2 if code == "bad_usage" else 1) and error["code"] == code  # the contract's exit codes
    assert ("too dark" in error["message"]) == (code == "underexposed")
    assert err.startswith("tableref: ") and err.count("\n") == 1


def test_geometrius_check_and_score(tmp_path, capsys):
    """The record format documented in rules/geometrius.py, through the command line."""
    record = {
        "game": "geometrius",
        "players": [{"name": "Ann", "colours": ["red"]}, {"name": "Bob", "colours": ["blue"]}],
        "field": [["T01", "Q03", "P02", "H01"], ["T05", "Q01", "P06", "H03"],
                  ["T02", "Q10", "P01", "X01"], ["T08", "Q05", "H08", "X03"]],
        "hands": {"red": {"tokens": ["X02", "Q02", "T03", "P04"], "cards": ["C08", "C20", "C13", "C03"]}},
        "moves": [
            {"colour": "red", "actions": [{"cards": ["C08"], "at": [[1, 1]]},
                                          {"push": "X02", "row": 3, "from": "left"}]},
            {"colour": "blue", "hand": {"cards": ["C20", "C12", "C11", "C20"]},
             "actions": [{"cards": ["C20"], "at": [[0, 2], [2, 3]]}]},
            {"colour": "red", "actions": [{"cards": ["C20", "C11"], "at": [[1, 2]]}]},
            {"colour": "blue", "actions": []}],
    }
    code, out, _ = run(capsys, "check", write(tmp_path, "g.json", record), "--json")
    doc = json.loads(out)
    assert code == 0 and [m["legal"] for m in doc["moves"]] == [True] * 4
    assert {p["name"]: p["score"] for p in doc["scores"]["players"]} == {"Ann": 3, "Bob": 2}
    record["moves"][1]["actions"] = [{"cards": ["C12"], "at": [[0, 0]]}]  # C12 needs a right angle: T01 has none
    _, out, _ = run(capsys, "check", write(tmp_path, "bad.json", record), "--json")
    assert "card_does_not_match" in json.loads(out)["moves"][1]["reasons"]


def test_equilibrix_details_name_fields_as_records_do(tmp_path, capsys):
    rec = {"game": "equilibrix", "moves": [{"colour": "B", "fields": ["P 0 0 0"], "tile": "zz"}]}
    _, out, _ = run(capsys, "check", write(tmp_path, "e.json", rec), "--json")
    detail = json.loads(out)["moves"][0]["details"][0]
    assert detail["code"] == "tile_not_offered" and detail["cells"] == ["P 0 0 0"]


def _game_photo(game: str, rng: np.random.Generator) -> np.ndarray:
    """A clean generated photo of a game in progress (what a user's phone takes)."""
    from vision.synth.conditions import CONDITIONS

    clean = CONDITIONS["clean"]
    if game == "blokus":
        from vision.synth.blokus import render_photo
        return render_photo(blokus.random_game_state(rng, 30), clean, rng, size=(1280, 960)).image
    if game == "gemblo":
        from rules import gemblo
        from vision.synth.gemblo import render_photo
        match = random_playout(gemblo.rules(gemblo.Setup()), rng, 40)
        return render_photo(gemblo.cells_json(match.position), clean, rng, size=(1280, 960)).image
    module = __import__(f"vision.synth.{game}", fromlist=["render_photo"])
    return module.render_photo(rng, clean, (1600, 1200)).image


@pytest.mark.parametrize("game", ["blokus", "gemblo", "geometrius", "equilibrix"])
def test_read_output_scores_as_a_state_file(tmp_path, capsys, game):
    """The contract's round trip: ``read --json`` -> save its state -> ``score`` it. The
    whole ``read`` output scores the same, naming the cells read without confidence."""
    import cv2

    photo = tmp_path / "photo.jpg"
    cv2.imwrite(str(photo), _game_photo(game, np.random.default_rng(6)), [cv2.IMWRITE_JPEG_QUALITY, 92])
    code, out, _ = run(capsys, "read", str(photo), "--game", game, "--json")
    assert code == 0
    reading = json.loads(out)
    state = write(tmp_path, f"{game}.state", reading["state"])
    code, out, err = run(capsys, "score", state, "--game", game, "--json")
    assert code == 0 and err == ""
    scores = json.loads(out)
    assert set(scores) >= {"players", "ranking", "tiebreak", "flags", "undecided"}
    reading["uncertain"] = reading["uncertain"] or ["a cell"]  # as if one were unread
    code, out, _ = run(capsys, "score", write(tmp_path, "read.json", reading), "--json")  # its game: the state's
    doc = json.loads(out)
    assert code == 0 and doc["players"] == scores["players"]
    assert doc["undecided"][-1]["rule"] == "read" and doc["undecided"][:-1] == scores["undecided"]


def test_an_equilibrix_ring_as_read_is_no_setup(tmp_path, capsys):
    """The reader's ring (a taken tile's slot null, tiles by shape) is what lies on the table."""
    state = {"game": "equilibrix", "fields": {"P 0 0 0": "B"}, "ring": [None, "chain", "chain", "fan"], "origin": 7}
    code, out, _ = run(capsys, "score", write(tmp_path, "e.state", state), "--game", "equilibrix", "--json")
    assert code == 0 and [p["name"] for p in json.loads(out)["players"]] == ["Black", "White"]


def test_state_file_details(tmp_path, capsys):
    rows = ["." * 20] * 20
    bom = tmp_path / "bom.json"  # as Windows Notepad saves it
    bom.write_text("\ufeff" + json.dumps({"game": "blokus", "board": rows}), encoding="utf-8")
    code, out, _ = run(capsys, "score", str(bom), "--json")
    assert code == 0 and json.loads(out)["players"][0]["penalty"] == 89
    bom.rename(bom := tmp_path / "bom.state")  # named as nothing: its first character tells JSON
    code, out, _ = run(capsys, "score", str(bom), "--json")
    assert code == 0 and json.loads(out)["players"][0]["penalty"] == 89
    long_number = tmp_path / "n.json"
    long_number.write_text('{"game": "blokus", "board": ' + "9" * 5000 + "}")
    code, out, err = run(capsys, "score", str(long_number), "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "bad_json" and "n.json" in err and "too long" in err
    gemblo_state = write(tmp_path, "g.json", {"game": "gemblo", "cells": {"0,0": "R"}})
    code, out, _ = run(capsys, "score", gemblo_state, "--json")  # no --game: the file says
    assert code == 0 and len(json.loads(out)["players"]) == 6
    code, out, err = run(capsys, "score", gemblo_state, "--last-piece", "R=1", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "bad_usage" and "Blokus" in err


def test_deeply_nested_files_are_bad_json(tmp_path):
    """Python's recursion limit is no "internal error": such a file is malformed."""
    from calibration import CalibrationError, load_calibration
    from rules.geometrius import load_catalogue

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CalibrationError) as e:
        load_calibration(deep)
    assert e.value.code == "calibration_corrupt" and "too deeply" in e.value.message
    with pytest.raises(ValueError, match="too deeply"):
        load_catalogue(deep)


def test_a_reader_that_stops_listening_gets_no_traceback(tmp_path, played):
    """``tableref check game.json --json | head -c 1``: the pipe closes before the answer."""
    record = write(tmp_path, "g.json", record_json(played, blokus.Setup()))
    proc = subprocess.Popen([sys.executable, "-m", "tableref.cli", "check", record, "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and err == ""


def test_python_dash_m_tableref_is_the_command(tmp_path, played):
    """``python -m tableref`` runs the installed ``tableref`` command (a checkout without its script)."""
    usage = subprocess.run([sys.executable, "-m", "tableref", "check"], capture_output=True, text=True)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: tableref check")
    record = write(tmp_path, "g.json", record_json(played, blokus.Setup()))
    proc = subprocess.run([sys.executable, "-m", "tableref", "check", record, "--json"], capture_output=True, text=True)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["moves"]) == len(played.turns)


def test_a_photo_the_variant_cannot_hold_is_a_bad_state(tmp_path, capsys):
    """Six colours read from a Gemblo photo scored as a two-player game: exit 1 with ``bad_state``,
    as its state file scored with that variant is, never an "internal error"."""
    import cv2

    photo = tmp_path / "gemblo.jpg"
    cv2.imwrite(str(photo), _game_photo("gemblo", np.random.default_rng(6)), [cv2.IMWRITE_JPEG_QUALITY, 92])
    status, out, err = run(capsys, "score", str(photo), "--game", "gemblo", "--variant", "2p", "--json")
    error = json.loads(out)["error"]
    assert status == 1 and error["code"] == "bad_state" and "not in play in 2p" in error["message"]
    assert err.startswith("tableref: the photo does not fit gemblo 2p") and err.count("\n") == 1
    _, out, _ = run(capsys, "read", str(photo), "--game", "gemblo", "--json")
    state = write(tmp_path, "s.json", json.loads(out)["state"])
    status, out, _ = run(capsys, "score", state, "--variant", "2p", "--json")
    assert status == 1 and json.loads(out)["error"]["code"] == "bad_state"


@pytest.mark.parametrize("rec, words", [
    ({"game": "blokus", "starts": {"B": [0, 0], "Y": [0, 0]}, "moves": []}, "B and Y are both pinned to corner [0, 0]"),
    ({"game": "gemblo", "variant": "2p", "starts": {"C": [3, 3], "R": [3, 3]}, "moves": []}, "both pinned to [3, 3]"),
    ({"game": "gemblo", "starts": {"R": [7, -14]}, "moves": []}, "start R: [7, -14] is B's start in 6p"),
    ({"game": "blokus", "settings": {"fixed_corners": True}, "starts": {"R": [0, 0]}, "moves": []},
     "start R: [0, 0] is B's corner when corners are fixed"),
    ({"game": "gemblo", "variant": "3p", "starts": {"P": [0, 0]}, "moves": []}, "Purple does not play in 3p"),
    ({"game": "gemblo", "variant": "4p", "starts": {"C": [-14, 7]}, "moves": []}, "outside the 4p playing area"),
    ({"game": "gemblo", "variant": "5p", "settings": {"five_player_starts": [[0, 0]] * 5}, "moves": []},
     "five-player starts 1 and 2 are both [0, 0]"),
    ({"game": "equilibrix", "players": [{"name": "Ann", "colours": ["B", "W"]}], "moves": []}, "one colour each"),
    ({"game": "equilibrix", "settings": {"markers": [[3, 0, "B"], [3, 0, "W"]]}, "moves": []}, "names a node twice"),
])
def test_a_table_the_rules_make_impossible_is_a_bad_setup(tmp_path, capsys, rec, words):
    """A setup no game can be played on (two colours on one start, a start no piece of the
    variant reaches or for a colour not playing, one seat moving both Equilibrix colours, a
    marker given two colours) is refused in one line, not judged move by move or half ignored."""
    status, out, err = run(capsys, "check", write(tmp_path, "r.json", rec), "--json")
    error = json.loads(out)["error"]
    assert status == 1 and error["code"] == "bad_setup" and words in error["message"]
    assert err.startswith("tableref: ") and err.count("\n") == 1


@pytest.mark.parametrize("command, text, name", [
    ("score", '{"game": "gemblo", "cells": {"0,0": "R", "0,0": "Y"}}', "0,0"),
    ("score", '{"game": "equilibrix", "fields": {"P 0 0 0": "B", "P 0 0 0": "W"}}', "P 0 0 0"),
    ("check", '{"game": "blokus", "variant": "team", "variant": "classic", "moves": []}', "variant"),
])
def test_a_name_given_twice_in_a_file_is_bad_json(tmp_path, capsys, command, text, name):
    """JSON keeps the last of two equal keys without a word: which colour lies on a cell named
    twice, or which variant is meant, would be a guess."""
    status, out, err = run(capsys, command, write(tmp_path, "twice.json", text), "--json")
    error = json.loads(out)["error"]
    assert status == 1 and error["code"] == "bad_json" and f"names {name!r} twice" in error["message"]
    assert err.count("\n") == 1


def test_calibrate_takes_camera_numbers_as_serve_does(tmp_path, capfd):
    """``--camera -1`` is a usage error (exit 2) for ``calibrate`` as for ``serve``; a camera
    that is not there is one line on stderr, without OpenCV's own log lines."""
    for argv in (["serve", "--camera", "-1"], ["calibrate", "board", "--camera", "-1"]):
        with pytest.raises(SystemExit) as usage:
            main(argv)
        assert usage.value.code == 2
    capfd.readouterr()
    status = main(["calibrate", "board", "--camera", "63", "--json", "--out", str(tmp_path / "c.json")])
    out, err = capfd.readouterr()
    assert status == 1 and json.loads(out)["error"]["code"] == "no_camera"
    assert err.startswith("tableref: camera 63 could not be opened") and err.count("\n") == 1


@pytest.mark.parametrize("game", ["blokus", "gemblo", "geometrius", "equilibrix"])
def test_an_unknown_variant_is_one_refusal_whatever_the_input(tmp_path, capsys, board_photo, game):
    """A variant the game does not have is the rules' ``bad_setup`` (exit 1) wherever it is
    named: in a record (``check``), or as ``score --variant`` of a state file or of a photo
    (refused before the photo is read). The state file's was ``bad_variant``: a script had
    to know two codes for one fault."""
    field = {"field": [["T01", "Q03", "P02", "H01"], ["T05", "Q01", "P06", "H03"],
                       ["T02", "Q10", "P01", "X01"], ["T08", "Q05", "H08", "X03"]]} if game == "geometrius" else {}
    record = write(tmp_path, "r.json", {"game": game, "variant": "seven", "moves": [], **field})
    state = write(tmp_path, "s.json", {"game": game})
    for argv in (["check", record], ["score", state, "--variant", "seven"],
                 ["score", board_photo[0], "--game", game, "--variant", "seven"]):
        status, out, err = run(capsys, *argv, "--json")
        error = json.loads(out)["error"]
        assert status == 1 and error["code"] == "bad_setup" and "'seven'" in error["message"], argv
        assert err.startswith("tableref: ") and err.count("\n") == 1


@pytest.mark.parametrize("name, code", [("board.jpg", "unreadable_image"), ("state.json", "unreadable_file")])
def test_a_missing_input_is_refused_as_read_or_check_refuse_it(tmp_path, capsys, name, code):
    """``score`` takes a photo or a state file; one it cannot open gets the refusal of the
    command that takes only that kind: a photo's ``read``'s (``unreadable_image``), a JSON
    file's ``check``'s (``unreadable_file``), judged by its name. A missing photo was
    ``unreadable_file`` for ``score`` and ``unreadable_image`` for ``read``."""
    missing = str(tmp_path / name)
    other = ["read", missing, "--game", "blokus"] if code == "unreadable_image" else ["check", missing]
    answers = []
    for argv in (["score", missing, "--game", "blokus"], other):
        status, out, _ = run(capsys, *argv, "--json")
        answers.append((status, json.loads(out)["error"]["code"]))
    assert answers == [(1, code), (1, code)]


def test_geometrius_colour_names_are_a_setting_of_the_record_and_the_state(tmp_path, capsys):
    """A table that calls its purple chips orange: check and score speak its names, and the
    default name is then an unknown colour (exit 1, one line)."""
    names = ["red", "blue", "green", "yellow", "orange", "white"]
    record = {
        "game": "geometrius", "settings": {"colour_names": names},
        "players": [{"name": "Ann", "colours": ["orange"]}, {"name": "Bob", "colours": ["blue"]}],
        "field": [["T01", "Q03", "P02", "H01"], ["T05", "Q01", "P06", "H03"],
                  ["T02", "Q10", "P01", "X01"], ["T08", "Q05", "H08", "X03"]],
        "moves": [{"colour": "orange", "actions": [{"cards": ["C08"], "at": [[1, 1]]}]},
                  {"colour": "blue", "actions": [{"cards": ["C20"], "at": [[0, 2], [2, 3]]}]}],
    }
    code, out, _ = run(capsys, "check", write(tmp_path, "g.json", record), "--json")
    doc = json.loads(out)
    assert code == 0 and [m["colour"] for m in doc["moves"]] == ["orange", "blue"]
    assert {p["name"]: (p["colours"], p["score"]) for p in doc["scores"]["players"]} == \
        {"Ann": (["orange"], 1), "Bob": (["blue"], 2)}
    code, out, _ = run(capsys, "check", write(tmp_path, "g.json", record))
    assert code == 0 and out.splitlines()[0].split()[:2] == ["0", "Orange"]
    state = {"game": "geometrius", "settings": {"colour_names": names},
             "tokens": [{"row": 0, "col": 0, "shape": "T01", "stack": ["orange", "red"]}]}
    code, out, _ = run(capsys, "score", write(tmp_path, "s.json", state), "--json")
    assert code == 0 and json.loads(out)["ranking"] == ["Red", "Orange"]
    record["moves"][0]["colour"] = "purple"
    code, out, err = run(capsys, "check", write(tmp_path, "bad.json", record), "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "unknown_colour" and err.count("\n") == 1
    record["settings"]["colour_names"] = names[:5]
    code, out, _ = run(capsys, "check", write(tmp_path, "bad.json", record), "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "bad_setup"


def test_an_output_that_cannot_be_written_is_one_code_whatever_the_command(tmp_path, capsys, board_photo, played):
    """``read``/``score --debug-dir`` and ``check --sgf`` each name a place to write: one that
    cannot be written is ``unwritable_file`` for all of them, as for ``calibrate`` (exit 1, one
    line naming the place). The debug folder's was ``unwritable_debug_dir``: a script had to
    know two codes for one fault."""
    record = write(tmp_path, "g.json", record_json(played, blokus.Setup()))
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # a file where a folder would have to be
    for argv in (["read", board_photo[0], "--game", "blokus", "--debug-dir", str(blocked / "out")],
                 ["score", board_photo[0], "--game", "blokus", "--debug-dir", str(blocked / "out")],
                 ["check", record, "--sgf", str(blocked / "game.blksgf")]):
        status, out, err = run(capsys, *argv, "--json")
        error = json.loads(out)["error"]
        assert status == 1 and error["code"] == "unwritable_file" and str(blocked) in error["message"], argv
        assert err.startswith("tableref: ") and err.count("\n") == 1
