"""The photo review page in a real browser: a photo's reading drawn as the game's board,
corrected by tap, scored again by the rules, kept across a reload and a server restart;
plus the state route's refusals over plain HTTP."""
import io
import json
import re
import sys
import threading
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from companion_app.server import create_app
from rules import gemblo
from rules.records import setup_of
from tests.test_pages import BROWSER_ACCEPT, LANDSCAPE, PORTRAIT, photo_of, shot
from tests.test_pages import browser, server  # noqa: F401 (fixtures)
from tests.test_session import MISSED, boards, gemblo_boards, gemblo_script
from vision.synth import CONDITIONS
from vision.synth.gemblo import render_photo as render_gemblo

DOUBTED = (10, 10)  # an empty cell the reader is made to doubt as well


@pytest.fixture
def doubting_reader(monkeypatch):
    """The real Blokus reader, made unsure of the cell its photo misses (Yellow's I5 lacks its
    fifth square there) and of one empty cell: a read with doubts, its photo and truth known."""
    import vision.blokus

    real = vision.blokus.read_blokus

    def read(image, calibration=None, profile=None):
        reading = real(image, calibration, profile)
        reading.uncertain = sorted(set(reading.uncertain) | {MISSED, DOUBTED})
        return reading

    monkeypatch.setattr(vision.blokus, "read_blokus", read)


def open_page(browser, viewport: dict, timeout_ms: int):
    """A new tab, and the list its script errors go to (none is the goal)."""
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(timeout_ms)
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    return page, errors


def upload(page, base, png: bytes, game: str, variant: str) -> None:
    page.goto(base + "/review")
    page.select_option("#review-game", game)
    page.select_option("#review-variant", variant)
    page.set_input_files("#photo", {"name": "board.png", "mimeType": "image/png", "buffer": png})
    page.click("#review-go")
    page.wait_for_selector("#review-result:not([hidden])")


def score_of(page, name: str) -> str:
    return page.locator(f'#review-scores tr[data-player="{name}"] .score').inner_text()


def wait_score(page, name: str, score: int) -> None:
    page.wait_for_function(f"document.querySelector('#review-scores tr[data-player=\"{name}\"] .score')"
                           f".textContent === '{score}'")


def tap(page, cell: str, colour: str) -> None:
    page.click(f'#board .cell[data-cell="{cell}"]')
    page.wait_for_selector("#picker[open]")
    page.click(f'#picker .choice[data-colour="{colour}"]')


def test_blokus_review_tap_an_uncertain_cell_score_again_reload_and_restart(server, browser, doubting_reader):
    page, errors = open_page(browser, LANDSCAPE, 20000)
    upload(page, server.base, photo_of(boards()[-1]), "blokus", "classic")
    assert page.locator("#board polygon.cell").count() == 400
    assert page.locator("#board polygon.unsure").count() == 2  # the doubted cells marked as on the live page
    assert page.locator(f'#board .cell[data-cell="{MISSED[0]},{MISSED[1]}"]').get_attribute("data-colour") == "."
    assert score_of(page, "Yellow") == "-85"
    assert "2 cell(s) could not be read" in page.locator("#review-notes").inner_text()
    assert page.locator(".shot img").count() == 2  # the overlay beside the board
    review_id = page.url.rsplit("/", 1)[1]
    assert page.url.endswith(f"/review/{review_id}") and len(review_id) == 16
    shot(page, "review-board", full_page=True)

    # one tap: the missed square is Yellow's; it is no longer in doubt, the score follows the rules
    page.click(f'#board .cell[data-cell="{MISSED[0]},{MISSED[1]}"]')
    page.wait_for_selector("#picker[open]")
    assert page.locator("#picker .choice").count() == 5  # four colours and empty
    shot(page, "review-picker")
    page.click('#picker .choice[data-colour="Y"]')
    page.click("#review-again")
    wait_score(page, "Yellow", -84)
    assert page.locator("#board polygon.unsure").count() == 1
    page.wait_for_function("document.querySelector('#review-saved').textContent === '1 correction saved'")
    assert "1 cell(s) could not be read" in page.locator("#review-notes").inner_text()

    # the corrected state downloads as a file `tableref score` reads, to the same scores
    state = page.request.get(server.base + page.locator("#review-download").get_attribute("href")).json()
    assert state["game"] == "blokus" and state["board"][MISSED[0]][MISSED[1]] == "Y"

    # a reload, then a server restart: the correction is still there
    page.reload()
    page.wait_for_selector("#review-result:not([hidden])")
    assert page.locator(f'#board .cell[data-cell="{MISSED[0]},{MISSED[1]}"]').get_attribute("data-colour") == "Y"
    assert score_of(page, "Yellow") == "-84" and page.locator("#board polygon.unsure").count() == 1
    server.stop()
    server.start()
    page.goto(server.base + "/review")
    link = page.locator(f'#recent a[data-review="{review_id}"]')
    assert "1 corrected" in link.inner_text() and "1 unsure" in link.inner_text()
    link.click()
    page.wait_for_selector("#review-result:not([hidden])")
    assert page.locator(f'#board .cell[data-cell="{MISSED[0]},{MISSED[1]}"]').get_attribute("data-colour") == "Y"
    assert score_of(page, "Yellow") == "-84"

    # the other doubt confirmed as read (empty) while the server cannot be reached: the tap is
    # kept on the tablet and sent on the next visit; then no doubt is left, nothing else changes
    page.route("**/state", lambda route: route.abort())
    tap(page, f"{DOUBTED[0]},{DOUBTED[1]}", ".")
    page.wait_for_selector("#review-saved[data-state=failed]")
    assert "could not be reached" in page.locator("#review-saved").inner_text()
    page.unroute("**/state")
    page.reload()
    page.wait_for_function("document.querySelector('#review-saved').textContent === '2 corrections saved'")
    assert page.locator("#board polygon.unsure").count() == 0
    assert "could not be read" not in page.locator("#review-notes").inner_text()
    assert score_of(page, "Yellow") == "-84"
    shot(page, "review-corrected", full_page=True)
    assert errors == []
    page.close()


def test_corrected_state_scores_the_same_on_the_command_line(tmp_path, doubting_reader, capsys):
    from tableref.cli import main

    client = create_app(tmp_path).test_client()
    doc = client.post("/api/review", data={"photo": (io.BytesIO(photo_of(boards()[-1])), "board.png"),
                                           "game": "blokus", "variant": "classic"},
                      content_type="multipart/form-data").get_json()
    review = doc["review"]
    rows = list(review["state"]["board"])
    rows[MISSED[0]] = rows[MISSED[0]][:MISSED[1]] + "Y" + rows[MISSED[0]][MISSED[1] + 1:]
    answer = client.post(f"/api/review/{review['id']}/state", json={"game": "blokus", "board": rows}).get_json()
    assert answer["corrections"] == [f"{MISSED[0]},{MISSED[1]}"]
    assert answer["uncertain"] == [list(DOUBTED)]
    path = tmp_path / "state.json"
    path.write_bytes(client.get(answer["download"]).data)
    capsys.readouterr()
    assert main(["score", str(path), "--game", "blokus", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    scores = {p["name"]: p["score"] for p in cli["players"]}
    assert scores == {p["name"]: p["score"] for p in answer["scores"]["players"]} and scores["Yellow"] == -84


def gemblo_photo() -> tuple[bytes, dict[str, str]]:
    """A phone photo of a finished 3-player Gemblo board, and the board's truth."""
    truth = gemblo_boards(gemblo_script())[-1]
    image = render_gemblo(truth, CONDITIONS["clean"], np.random.default_rng(3), size=(960, 720)).image
    return cv2.imencode(".png", image)[1].tobytes(), truth


def test_gemblo_review_corrected_by_tap(server, browser):
    png, truth = gemblo_photo()
    page, errors = open_page(browser, LANDSCAPE, 20000)
    upload(page, server.base, png, "gemblo", "3p")
    assert page.locator("#board polygon.cell").count() == 463
    review = page.request.get(server.base + "/api/review/" + page.url.rsplit("/", 1)[1]).json()
    read, doubts = review["state"]["cells"], review["uncertain"]
    assert doubts and page.locator("#board polygon.unsure").count() == len(doubts)
    # a doubted cell read wrong, set to what is there (any doubted cell when none is wrong)
    cell = next((c for c in doubts if read.get(c, ".") != truth.get(c, ".")), doubts[0])
    colour = truth.get(cell, ".")
    tap(page, cell, colour)
    page.wait_for_function("document.querySelector('#review-saved').textContent === '1 correction saved'")
    corrected = {k: v for k, v in read.items() if k != cell} | ({cell: colour} if colour != "." else {})
    sheet = gemblo.score_state({"game": "gemblo", "cells": corrected}, setup_of("gemblo", {}, "3p"))
    for p in sheet.players:
        assert score_of(page, p.name) == str(p.score)
    assert page.locator("#board polygon.unsure").count() == len(doubts) - 1
    assert page.locator(f'#board .cell[data-cell="{cell}"]').get_attribute("data-colour") == colour
    shot(page, "review-gemblo", full_page=True)
    page.reload()
    page.wait_for_selector("#review-result:not([hidden])")
    assert page.locator(f'#board .cell[data-cell="{cell}"]').get_attribute("data-colour") == colour
    assert errors == []
    page.close()


# --- the other boards: Equilibrix' fields and Geometrius' tokens (stand-in readers) -----------

def fake_reader(monkeypatch, game: str, state: dict, uncertain: list) -> None:
    """A stand-in photo reader for ``game`` that reads ``state`` and doubts ``uncertain``."""
    reading = SimpleNamespace(uncertain=uncertain,
                              to_state_json=lambda: {"state": json.loads(json.dumps(state)), "uncertain": uncertain})
    monkeypatch.setitem(sys.modules, f"vision.{game}", SimpleNamespace(
        **{f"read_{game}": lambda image, calibration=None: reading},
        debug_images=lambda r: {"overlay": np.full((40, 40, 3), 90, np.uint8)}))


def blank_png() -> bytes:
    """A stand-in photo for the stand-in readers: plain, but in colour (grey ones are refused)."""
    return cv2.imencode(".png", np.full((240, 320, 3), (40, 110, 170), np.uint8))[1].tobytes()


def test_equilibrix_and_geometrius_reviews_draw_their_boards_and_take_taps(server, browser, monkeypatch):
    from tests.test_session_geometrius import START, camera, chips

    page, errors = open_page(browser, PORTRAIT, 10000)

    # Equilibrix: the flower's fields; a doubted petal tapped to White
    fake_reader(monkeypatch, "equilibrix", {"game": "equilibrix", "fields": {"P 0 0 0": "B", "T 0 0 +": "B"}},
                ["P 2 0 0"])
    upload(page, server.base, blank_png(), "equilibrix", "tri-mety")
    assert page.locator("#board path.field").count() == 144
    assert page.locator("#board path.unsure").count() == 1
    assert score_of(page, "White") == "0"
    tap(page, "P 2 0 0", "W")
    wait_score(page, "White", 1)  # the petal joins White's corner marker (3, 0)
    assert page.locator("#board path.unsure").count() == 0
    shot(page, "review-equilibrix", full_page=True)

    # Geometrius: the token field; a doubted stack's top chip set from its sheet
    field = camera(chips(START, Q01="red"))
    at = next([t["row"], t["col"]] for t in field if t["shape"] == "Q01")
    fake_reader(monkeypatch, "geometrius", {"game": "geometrius", "tokens": field}, [at])
    upload(page, server.base, blank_png(), "geometrius", "standard")
    assert page.locator("#board rect.token-face").count() == 16
    assert page.locator("#board rect.unsure").count() == 1
    before = score_of(page, "Red")
    page.click(f'#board rect.token-face[data-cell="{at[0]},{at[1]}"]')
    page.wait_for_selector("#tokenfix[open]")
    page.click('#tokenfix [data-top="blue"]')
    page.wait_for_function("document.querySelector('#review-saved').textContent === '1 correction saved'")
    assert page.locator("#board circle.stone[data-colour=blue]").count() == 1
    assert page.locator("#board rect.unsure").count() == 0
    assert page.locator('#review-scores tr[data-player="Blue"]').count() == 1
    assert page.locator('#review-scores tr[data-player="Red"]').count() == 0 or score_of(page, "Red") != before
    shot(page, "review-geometrius", full_page=True)
    assert errors == []
    page.close()


# --- the state route's guards, over plain HTTP --------------------------------------------------

def test_state_route_refuses_bad_states_with_one_line_json(tmp_path, monkeypatch):
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": {"0,0": "R", "0,1": "R"}}, ["1,0"])
    client = create_app(tmp_path).test_client()
    review = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "gemblo",
                                              "variant": "3p"}, content_type="multipart/form-data").get_json()["review"]
    url = f"/api/review/{review['id']}/state"

    def refused(status: int, code: str, **kw) -> str:
        r = client.post(url, **kw)
        assert r.status_code == status and r.is_json, r.data
        error = r.get_json()["error"]
        assert error["code"] == code and "\n" not in error["message"]
        return error["message"]

    assert "JSON object" in refused(400, "bad_state", data="{not json", content_type="application/json")
    assert "JSON object" in refused(400, "bad_state", json=[1, 2])
    assert refused(400, "wrong_game", json={"game": "blokus", "board": ["." * 20] * 20}) == \
        "this is a blokus file, not gemblo"
    assert refused(400, "unknown_game", json={"game": "chess"}).startswith("unknown game 'chess'")
    assert "off the 463-cell board" in refused(400, "bad_state", json={"game": "gemblo", "cells": {"40,40": "R"}})
    assert "unknown colour letter 'X'" in refused(400, "bad_state", json={"game": "gemblo", "cells": {"0,0": "X"}})
    assert "is not 'q,r'" in refused(400, "bad_state", json={"game": "gemblo", "cells": {"here": "R"}})
    assert "needs 'cells'" in refused(400, "bad_state", json={"game": "gemblo", "cells": ["0,0"]})
    assert "99,99 is not a cell" in refused(400, "bad_state", json={"set": {"99,99": "R"}})
    assert "must map cells" in refused(400, "bad_state", json={"set": ["1,0"]})
    assert "colour letter" in refused(400, "bad_state", json={"set": {"1,0": 5}})
    assert "unknown colour letter 'X'" in refused(400, "bad_state", json={"set": {"1,0": "X"}})
    refused(413, "too_large", data=json.dumps({"game": "gemblo", "cells": {}, "pad": "x" * 300_000}),
            content_type="application/json")
    refused(403, "cross_origin", json={"game": "gemblo", "cells": {}}, headers={"Origin": "http://evil.example"})
    unchanged = client.get(f"/api/review/{review['id']}").get_json()
    assert unchanged["state"]["cells"] == {"0,0": "R", "0,1": "R"} and unchanged["corrections"] == []

    # ids are ours: anything else is no review (never a path)
    for bad in ("0123456789abcdef", "..%2F..%2Fetc", "A" * 16):
        assert client.post(f"/api/review/{bad}/state", json={"game": "gemblo", "cells": {}}).status_code == 404
        assert client.get(f"/review/{bad}").status_code == 404
    assert client.get(f"/api/review/{review['id']}/images/photo.jpg").status_code == 404

    ok = client.post(url, json={"set": {"1,0": "R"}}).get_json()
    assert ok["state"]["cells"] == {"0,0": "R", "0,1": "R", "1,0": "R"}
    assert ok["corrections"] == ["1,0"] and ok["uncertain"] == []
    assert client.get(f"/api/review/{review['id']}").get_json()["corrections"] == ["1,0"]


# --- corrections: set back, and two tabs saving at once ------------------------------------------

READ = {"0,0": "R", "0,1": "R"}  # two cells read with confidence; "1,0" (empty) doubted


def gemblo_review(client) -> dict:
    return client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "gemblo",
                                            "variant": "3p"}, content_type="multipart/form-data").get_json()["review"]


def test_a_cell_set_back_to_its_reading_is_no_correction_and_a_confirmed_doubt_stays_one(tmp_path, monkeypatch):
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    client = create_app(tmp_path).test_client()
    url = f"/api/review/{gemblo_review(client)['id']}/state"

    def tap(cell: str, colour: str) -> dict:
        return client.post(url, json={"set": {cell: colour}}).get_json()

    assert tap("0,1", "C")["corrections"] == ["0,1"]
    back = tap("0,1", "R")  # the camera was right after all
    assert back["corrections"] == [] and back["uncertain"] == ["1,0"] and back["state"]["cells"] == READ
    assert client.get("/api/reviews").get_json()["reviews"][0]["fixed"] == 0
    confirmed = tap("1,0", ".")  # the doubted cell is empty, as read: the doubt is settled
    assert confirmed["corrections"] == ["1,0"] and confirmed["uncertain"] == []
    assert tap("0,0", ".")["corrections"] == ["0,0", "1,0"]
    whole = client.post(url, json={"game": "gemblo", "cells": READ}).get_json()  # a whole state as read
    assert whole["corrections"] == ["1,0"] and whole["uncertain"] == []
    listed = client.get("/api/reviews").get_json()["reviews"][0]
    assert listed["fixed"] == 1 and listed["doubts"] == 0 and listed["game"] == "gemblo"


def test_tabs_saving_one_review_at_the_same_moment_keep_every_correction(tmp_path, monkeypatch):
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    app = create_app(tmp_path)
    url = f"/api/review/{gemblo_review(app.test_client())['id']}/state"
    cells = [f"{q},2" for q in range(-4, 4)]
    start = threading.Barrier(len(cells))
    answers = {}

    def tab(cell: str) -> None:
        client = app.test_client()  # a tab of its own, saving the moment all the others do
        start.wait()
        answers[cell] = client.post(url, json={"set": {cell: "Y"}}).status_code

    threads = [threading.Thread(target=tab, args=(cell,)) for cell in cells]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(answers.values()) == {200}
    review = app.test_client().get(url.rsplit("/", 1)[0]).get_json()
    assert review["state"]["cells"] == READ | dict.fromkeys(cells, "Y")
    assert review["corrections"] == sorted(cells)


def test_two_tabs_correct_one_review_and_the_list_follows(server, browser, monkeypatch):
    """Tab A scores a photo (the recent list shows it at once), tab B opens the same review;
    each taps a different cell from its own copy and both corrections are kept and shown; a
    cell set back to what was read is no correction any more."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    a, errors = open_page(browser, LANDSCAPE, 20000)
    upload(a, server.base, blank_png(), "gemblo", "3p")
    review_id = a.url.rsplit("/", 1)[1]
    link = a.locator(f'#recent a[data-review="{review_id}"]')
    link.wait_for()  # listed without a reload
    assert "Gemblo (3p)" in link.inner_text() and "1 unsure" in link.inner_text()
    b, errors_b = open_page(browser, LANDSCAPE, 20000)
    b.goto(f"{server.base}/review/{review_id}")
    b.wait_for_selector("#review-result:not([hidden])")

    def saved(page, text: str) -> None:
        page.wait_for_function(f"document.querySelector('#review-saved').textContent === '{text}'")

    def colour(page, cell: str) -> str:
        return page.locator(f'#board .cell[data-cell="{cell}"]').get_attribute("data-colour")

    tap(a, "0,1", "C")
    saved(a, "1 correction saved")
    tap(b, "1,0", "Y")  # B's board still has 0,1 as read
    saved(b, "2 corrections saved")
    assert colour(b, "0,1") == "C" and colour(b, "1,0") == "Y"  # A's correction came back with B's save
    tap(a, "0,1", "R")  # set back to what the camera read
    a.wait_for_selector('#board .cell[data-cell="1,0"][data-colour="Y"]')  # B's correction, with A's answer
    saved(a, "1 correction saved")
    assert colour(a, "0,1") == "R"
    a.wait_for_function(f"document.querySelector('#recent a[data-review=\"{review_id}\"]')"
                        ".textContent.includes('1 corrected')")
    assert "unsure" not in link.inner_text()
    review = a.request.get(f"{server.base}/api/review/{review_id}").json()
    assert review["state"]["cells"] == READ | {"1,0": "Y"} and review["corrections"] == ["1,0"]
    assert errors == [] and errors_b == []
    a.close()
    b.close()


def test_a_photo_that_does_not_fit_the_variant_is_refused_in_one_line(tmp_path, monkeypatch):
    """Purple and yellow pieces on a board scored as a 2-player game: the form's variant was
    the wrong one. One line and a 400, never a server error."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": {"0,0": "P", "3,3": "Y"}}, [])
    client = create_app(tmp_path).test_client()
    r = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "gemblo",
                                         "variant": "2p"}, content_type="multipart/form-data")
    assert r.status_code == 400 and r.is_json
    message = r.get_json()["error"]["message"]
    assert "not in play in 2p" in message and "\n" not in message
    wrapped = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "gemblo",
                                               "variant": "6p"}, content_type="multipart/form-data").get_json()
    assert set(wrapped) == {"result", "review"}
    # a state that carries a "set" key of its own is still a state, not the page's wrapper
    url = f"/api/review/{wrapped['review']['id']}/state"
    ok = client.post(url, json={"game": "gemblo", "cells": {"0,0": "P"}, "set": 1})
    assert ok.status_code == 200, ok.data


def test_fields_and_tokens_set_back_to_their_reading_are_no_correction(tmp_path, monkeypatch):
    """The same rule on the other boards: an Equilibrix field by its id, a Geometrius token by
    its place (the whole token is sent: shape and stack)."""
    from tests.test_session_geometrius import START, camera, chips

    client = create_app(tmp_path).test_client()

    def review(game: str, variant: str) -> str:
        doc = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": game,
                                               "variant": variant}, content_type="multipart/form-data").get_json()
        return f"/api/review/{doc['review']['id']}/state"

    def corrections(url: str, changes: dict) -> list:
        answer = client.post(url, json={"set": changes})
        assert answer.status_code == 200, answer.data
        return answer.get_json()["corrections"]

    fake_reader(monkeypatch, "equilibrix", {"game": "equilibrix", "fields": {"P 0 0 0": "B", "T 0 0 +": "B"}},
                ["P 2 0 0"])
    url = review("equilibrix", "tri-mety")
    assert corrections(url, {"P 0 0 0": "W"}) == ["P 0 0 0"]
    assert corrections(url, {"P 0 0 0": "B"}) == []
    assert corrections(url, {"P 2 0 0": "."}) == ["P 2 0 0"]

    field = camera(chips(START, Q01="red"))
    token = next(t for t in field if t["shape"] == "Q01")
    place = f"{token['row']},{token['col']}"
    fake_reader(monkeypatch, "geometrius", {"game": "geometrius", "tokens": field}, [])
    url = review("geometrius", "standard")
    assert corrections(url, {place: {**token, "stack": ["blue"]}}) == [place]
    assert corrections(url, {place: token}) == []
    assert "must be given as an object" in client.post(url, json={"set": {place: "red"}}).get_json()["error"]["message"]


# --- keys in another form, the older body, tokens of the wrong kind ----------------------------

def test_a_state_posted_with_keys_in_another_form_is_kept_in_the_usual_form(tmp_path, monkeypatch):
    """The rules read "0, 0" and "P 0 0  0" as the usual "0,0" and "P 0 0 0": a whole state
    posted so is stored keyed as the page keys its taps, so a later tap sets that cell (not a
    second key beside it, nor nothing)."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    client = create_app(tmp_path).test_client()
    url = f"/api/review/{gemblo_review(client)['id']}/state"

    def post(doc: dict) -> dict:
        answer = client.post(url, json=doc)
        assert answer.status_code == 200, answer.data
        return answer.get_json()

    assert post({"game": "gemblo", "cells": {"0, 0": "R", "0,1": "R"}})["state"]["cells"] == READ
    emptied = post({"set": {"0,0": "."}})
    assert emptied["state"]["cells"] == {"0,1": "R"} and emptied["corrections"] == ["0,0"]
    post({"game": "gemblo", "cells": {" 0, 0": "R", "0,1": "R"}})
    assert post({"set": {"0,0": "Y"}})["state"]["cells"] == {"0,0": "Y", "0,1": "R"}
    assert post({"set": {"1, 0": "C"}})["state"]["cells"] == {"0,0": "Y", "0,1": "R", "1,0": "C"}  # a tap's key too

    def refused(doc: dict) -> str:
        answer = client.post(url, json=doc)
        assert answer.status_code == 400 and answer.get_json()["error"]["code"] == "bad_state"
        return answer.get_json()["error"]["message"]

    assert "are one cell" in refused({"game": "gemblo", "cells": {"0,0": "R", "0, 0": "Y"}})
    assert "name one cell" in refused({"set": {"0,0": "R", "0, 0": "Y"}})

    fake_reader(monkeypatch, "equilibrix", {"game": "equilibrix", "fields": {"T 0 0 +": "B"}}, [])
    doc = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "equilibrix",
                                           "variant": "tri-mety"}, content_type="multipart/form-data").get_json()
    url = f"/api/review/{doc['review']['id']}/state"
    assert post({"game": "equilibrix", "fields": {"P 0 0  0": "B", "T 0 0 +": "B"}})["state"]["fields"] == \
        {"P 0 0 0": "B", "T 0 0 +": "B"}
    assert post({"set": {"P 0 0 0": "."}})["state"]["fields"] == {"T 0 0 +": "B"}
    assert "are one field" in refused({"game": "equilibrix", "fields": {"P 0 0 0": "B", "P 0 0  0": "W"}})
    # an empty field is no colour of a state file: refused as `tableref score` refuses it
    assert "left out of 'fields'" in refused({"game": "equilibrix", "fields": {"P 0 0 0": "."}})


def test_the_older_state_and_confirmed_body_is_still_taken_and_an_empty_change_is_refused(tmp_path, monkeypatch):
    """``{"state": ..., "confirmed": [cells]}`` (the README's body before taps were sent one by
    one) replaces the board, its confirmed cells counting as tapped doubts; a body with neither
    a state nor a ``set`` gets one line saying what is expected."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    client = create_app(tmp_path).test_client()
    url = f"/api/review/{gemblo_review(client)['id']}/state"
    answer = client.post(url, json={"state": {"game": "gemblo", "cells": {**READ, "0,1": "C"}}, "confirmed": ["1,0"]})
    assert answer.status_code == 200, answer.data
    doc = answer.get_json()
    assert doc["state"]["cells"] == {**READ, "0,1": "C"}
    assert doc["corrections"] == ["0,1", "1,0"] and doc["uncertain"] == []
    assert client.post(url, json={"state": {"game": "gemblo", "cells": READ}}).get_json()["corrections"] == ["1,0"]

    for body, words in (({}, 'expected {"set": {cell'), ({"set": None}, 'expected {"set": {cell'),
                        ({"state": {"game": "gemblo", "cells": READ}, "confirmed": "1,0"}, "must list cells"),
                        ({"state": {"game": "gemblo", "cells": READ}, "confirmed": ["9,99"]}, "9,99 is not a cell"),
                        ({"state": {"game": "blokus"}}, "this is a blokus file")):
        r = client.post(url, json=body)
        assert r.status_code == 400, body
        assert words in r.get_json()["error"]["message"] and "None" not in r.get_json()["error"]["message"]


def test_a_token_of_the_wrong_kind_is_refused_in_words(tmp_path, monkeypatch):
    """A shape or a stack of the wrong JSON kind is named in plain words, never in Python's."""
    from tests.test_session_geometrius import START, camera, chips

    field = camera(chips(START, Q01="red"))
    token = next(t for t in field if t["shape"] == "Q01")
    place = f"{token['row']},{token['col']}"
    fake_reader(monkeypatch, "geometrius", {"game": "geometrius", "tokens": field}, [])
    client = create_app(tmp_path).test_client()
    doc = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "geometrius",
                                           "variant": "standard"}, content_type="multipart/form-data").get_json()
    url = f"/api/review/{doc['review']['id']}/state"

    def message(body: dict) -> str:
        r = client.post(url, json=body)
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_state", r.data
        return r.get_json()["error"]["message"]

    for bad, words in (({"shape": ["Q01"]}, "shape as a name"), ({**token, "stack": "red"}, "stack lists chip"),
                       ({**token, "stack": [["red"]]}, "stack lists chip")):
        said = message({"set": {place: bad}})
        assert words in said and "unhashable" not in said and "type" not in said
    whole = [{**t, "shape": [t["shape"]]} if t is token else t for t in field]
    assert "shape as a name" in message({"game": "geometrius", "tokens": whole})


# --- saves on the page: a refused tap, a save still waiting when another review opens ------------

def test_a_refused_tap_is_dropped_and_a_late_save_stays_with_its_own_review(server, browser, monkeypatch):
    """A tap the server refuses (4xx) is undone and never sent again, while one the server failed
    on (5xx) waits for the next save; a save still waiting when another photo is scored goes to
    its own review, and its answer is not drawn over the new one; an older page's stored board
    is dropped with a note."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    page, errors = open_page(browser, LANDSCAPE, 10000)
    upload(page, server.base, blank_png(), "gemblo", "3p")
    first = page.url.rsplit("/", 1)[1]
    stored = f"localStorage.getItem('tableref-review-cells-{first}')"

    def saved(text: str) -> None:
        page.wait_for_function(f"document.querySelector('#review-saved').textContent.includes('{text}')")

    def colour(cell: str) -> str:
        return page.locator(f'#board .cell[data-cell="{cell}"]').get_attribute("data-colour")

    def on_server(review_id: str) -> dict:
        return page.request.get(f"{server.base}/api/review/{review_id}").json()["state"]["cells"]

    # an older page's whole board under the old name: dropped once, with a note
    page.evaluate(f"localStorage.setItem('tableref-review-{first}', JSON.stringify({{game: 'gemblo', cells: {{}}}}))")
    page.reload()
    page.wait_for_selector("#toast:not([hidden])")
    assert "older version of the page" in page.locator("#toast").inner_text()
    assert page.evaluate(f"localStorage.getItem('tableref-review-{first}')") is None

    # refused: undone on the board, gone from the tablet's storage, not sent again
    page.route("**/state", lambda route: route.fulfill(status=400, content_type="application/json", body=json.dumps(
        {"error": {"code": "bad_state", "message": "refused by the test"}})))
    tap(page, "0,1", "C")
    saved("the tap is undone: refused by the test")
    assert colour("0,1") == "R" and page.evaluate(stored) is None
    # failed on the server's side: kept for the next save
    page.unroute("**/state")
    page.route("**/state", lambda route: route.fulfill(status=500, body="boom"))
    tap(page, "1,0", "Y")
    saved("Not saved: the server answered 500")
    assert colour("1,0") == "Y" and json.loads(page.evaluate(stored)) == {"1,0": "Y"}
    page.unroute("**/state")
    page.click("#review-again")
    saved("1 correction saved")
    assert on_server(first) == {**READ, "1,0": "Y"} and page.evaluate(stored) is None

    # a save held back while another photo is scored on the same page
    held = []
    page.route(f"**/api/review/{first}/state", lambda route: held.append(route))
    tap(page, "0,1", "C")
    page.wait_for_function("document.querySelector('#review-saved').dataset.state === 'saving'")
    page.select_option("#review-game", "gemblo")
    page.select_option("#review-variant", "3p")
    page.set_input_files("#photo", {"name": "board.png", "mimeType": "image/png", "buffer": blank_png()})
    page.click("#review-go")
    page.wait_for_function(f"!location.pathname.endsWith('{first}')")  # the new review's URL
    second = page.url.rsplit("/", 1)[1]
    page.wait_for_selector('#board .cell[data-cell="1,0"][data-colour="."]')  # the new review, as read
    tap(page, "1,0", "C")  # waits behind the first review's save
    assert len(held) == 1
    held[0].continue_()
    saved("1 correction saved")
    assert on_server(first) == {**READ, "1,0": "Y", "0,1": "C"}  # the held tap, and only it
    assert on_server(second) == {**READ, "1,0": "C"}
    assert colour("0,1") == "R" and colour("1,0") == "C"  # the first review's answer was not drawn
    assert page.url.endswith(second)
    page.unroute(f"**/api/review/{first}/state")
    assert errors == []
    page.close()


# --- one cell set in two tabs: refused with what is there now, nothing lost --------------------

def test_a_tap_on_a_cell_changed_since_the_tab_showed_it_is_refused_with_what_is_there(tmp_path, monkeypatch):
    """A tap may say what the tab showed (``"was"``); when the stored cell holds something else
    by now, the whole change is refused (409, one line naming the cell and what is there) and
    nothing of it is applied. A body without ``"was"`` keeps the older last-write-wins."""
    from tests.test_session_geometrius import START, camera, chips

    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    client = create_app(tmp_path).test_client()
    url = f"/api/review/{gemblo_review(client)['id']}/state"
    first = client.post(url, json={"set": {"0,1": "C"}, "was": {"0,1": "R"}})  # tab A: 0,1 showed R, as stored
    assert first.status_code == 200 and first.get_json()["state"]["cells"]["0,1"] == "C"

    # tab B still showed R on 0,1; its save also sets 1,0
    late = client.post(url, json={"set": {"0,1": "Y", "1,0": "Y"}, "was": {"0, 1": "R", "1,0": "."}})
    assert late.status_code == 409 and late.is_json
    error = late.get_json()["error"]
    assert error["code"] == "changed_elsewhere" and error["current"] == {"0,1": "C"}
    assert "cell 0,1" in error["message"] and "now C" in error["message"] and "\n" not in error["message"]
    stored = client.get(url.rsplit("/", 1)[0]).get_json()
    assert stored["state"]["cells"] == {**READ, "0,1": "C"} and stored["corrections"] == ["0,1"]  # 1,0 not set either

    # sent again with what is there now: taken; and without "was", the later save wins as before
    again = client.post(url, json={"set": {"0,1": "Y", "1,0": "Y"}, "was": {"0,1": "C", "1,0": "."}})
    assert again.status_code == 200 and again.get_json()["state"]["cells"] == {"0,0": "R", "0,1": "Y", "1,0": "Y"}
    assert client.post(url, json={"set": {"0,1": "C"}}).get_json()["state"]["cells"]["0,1"] == "C"
    # a save sent again after its answer was lost finds its own value there: no conflict
    assert client.post(url, json={"set": {"0,1": "C"}, "was": {"0,1": "Y"}}).status_code == 200

    for body, words in (({"set": {"0,1": "R"}, "was": ["0,1"]}, "'was' must map cells"),
                        ({"set": {"0,1": "R"}, "was": {"1,0": "."}}, "'was' names 1,0, a cell the change does not set"),
                        ({"set": {"0,1": "R"}, "was": {"0,1": 3}}, "colour letter as shown"),
                        ({"set": {"0,1": "R"}, "was": {"0,1": "X"}}, "unknown colour letter 'X'")):
        r = client.post(url, json=body)
        assert r.status_code == 400 and words in r.get_json()["error"]["message"], r.data

    # a Geometrius token is compared by its shape and stack, an Equilibrix field by its id in any form
    field = camera(chips(START, Q01="red"))
    token = next(t for t in field if t["shape"] == "Q01")
    place = f"{token['row']},{token['col']}"
    fake_reader(monkeypatch, "geometrius", {"game": "geometrius", "tokens": field}, [])
    doc = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "geometrius",
                                           "variant": "standard"}, content_type="multipart/form-data").get_json()
    url = f"/api/review/{doc['review']['id']}/state"
    blue = {**token, "stack": ["blue"]}
    assert client.post(url, json={"set": {place: blue}, "was": {place: token}}).status_code == 200
    late = client.post(url, json={"set": {place: {**token, "stack": []}}, "was": {place: token}})
    assert late.status_code == 409
    assert late.get_json()["error"]["current"] == {place: {"shape": "Q01", "stack": ["blue"]}}
    assert "token Q01 with blue" in late.get_json()["error"]["message"]

    fake_reader(monkeypatch, "equilibrix", {"game": "equilibrix", "fields": {"P 0 0 0": "B"}}, [])
    doc = client.post("/api/review", data={"photo": (io.BytesIO(blank_png()), "board.png"), "game": "equilibrix",
                                           "variant": "tri-mety"}, content_type="multipart/form-data").get_json()
    url = f"/api/review/{doc['review']['id']}/state"
    assert client.post(url, json={"set": {"P 0 0 0": "W"}, "was": {"P 0 0  0": "B"}}).status_code == 200
    late = client.post(url, json={"set": {"P 0 0 0": "."}, "was": {"P 0 0 0": "B"}})
    assert late.status_code == 409 and late.get_json()["error"]["current"] == {"P 0 0 0": "W"}


def test_corrected_cells_are_ringed_and_a_second_tab_is_told_when_a_cell_was_set_first(server, browser, monkeypatch):
    """The cells the user set are ringed on the board (a tap set back to the reading loses its
    ring; a doubt confirmed keeps one). Tab B, still showing the reading, taps a cell tab A set
    meanwhile: B's tap is refused, B shows A's value with a one-line note, and the other tap
    B made in the same save is kept."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": READ}, ["1,0"])
    a, errors = open_page(browser, LANDSCAPE, 20000)
    upload(a, server.base, blank_png(), "gemblo", "3p")
    review_id = a.url.rsplit("/", 1)[1]
    b, errors_b = open_page(browser, LANDSCAPE, 20000)
    b.goto(f"{server.base}/review/{review_id}")
    b.wait_for_selector("#review-result:not([hidden])")

    def ringed(page) -> list[str]:
        return sorted(page.eval_on_selector_all("#board .corrected", "rings => rings.map((r) => r.dataset.of)"))

    def saved(page, text: str) -> None:
        page.wait_for_function(f"document.querySelector('#review-saved').textContent === '{text}'")

    assert ringed(a) == [] and a.locator("#review-legend").is_visible()
    held = []
    a.route("**/state", lambda route: held.append(route))
    tap(a, "0,1", "C")
    a.wait_for_selector('#board .corrected[data-of="0,1"]', state="attached")  # at once, before the answer
    for _ in range(200):  # the route's callback reaches Python on its own event
        if held:
            break
        a.wait_for_timeout(100)
    assert ringed(a) == ["0,1"] and len(held) == 1
    held[0].continue_()
    a.unroute("**/state")
    saved(a, "1 correction saved")
    tap(a, "1,0", ".")  # the doubt confirmed: the user's word, so ringed too
    saved(a, "2 corrections saved")
    assert ringed(a) == ["0,1", "1,0"]
    shot(a, "review-corrected-rings")
    tap(a, "0,1", "R")  # back to what was read: no correction, no ring
    saved(a, "1 correction saved")
    assert ringed(a) == ["1,0"]
    tap(a, "0,1", "C")  # a tap on a ringed cell reaches the cell under the ring
    saved(a, "2 corrections saved")

    # B still shows 0,1 as read (R) and 0,0 as R; its two taps wait on the tablet (server away)
    b.route("**/state", lambda route: route.abort())
    tap(b, "0,1", "Y")
    tap(b, "0,0", "Y")
    b.wait_for_selector("#review-saved[data-state=failed]")
    b.unroute("**/state")
    b.click("#review-again")
    note = b.locator("#review-conflict")
    note.wait_for()
    assert "was set on another screen meanwhile: it is clear now, your yellow was not saved" in note.inner_text()
    saved(b, "3 corrections saved")  # B's other tap, sent again
    assert b.locator('#board .cell[data-cell="0,1"]').get_attribute("data-colour") == "C"
    assert b.locator('#board .cell[data-cell="0,0"]').get_attribute("data-colour") == "Y"
    assert ringed(b) == ["0,0", "0,1", "1,0"]
    review = b.request.get(f"{server.base}/api/review/{review_id}").json()
    assert review["state"]["cells"] == {"0,0": "Y", "0,1": "C"}
    assert b.evaluate(f"localStorage.getItem('tableref-review-was-{review_id}')") is None
    shot(b, "review-conflict", full_page=True)

    # B now taps the cell again, having seen A's value: taken; the note goes
    with b.expect_response("**/state") as answer:
        tap(b, "0,1", "Y")
    assert answer.value.status == 200 and note.is_hidden()
    assert b.request.get(f"{server.base}/api/review/{review_id}").json()["state"]["cells"]["0,1"] == "Y"
    assert errors == [] and errors_b == []
    a.close()
    b.close()


def test_the_review_refuses_a_photo_with_the_code_tableref_score_gives_it(tmp_path, capsys):
    """The same photo, game and variant refused by ``POST /api/review`` and by ``tableref
    score``: the same code (the review said ``bad_request`` for all of these), the rules' words
    for an unknown variant, and an unknown game is ``unknown_game`` as in a state file."""
    from tableref.cli import main

    client = create_app(tmp_path / "data").test_client()
    photo = tmp_path / "board.png"
    photo.write_bytes(blank_png())  # no board in it
    for game, variant in (("blokus", "classic"), ("gemblo", "6p"), ("blokus", "seven"), ("geometrius", "seven")):
        answer = client.post("/api/review", data={"photo": (io.BytesIO(photo.read_bytes()), "board.png"),
                                                  "game": game, "variant": variant},
                             content_type="multipart/form-data")
        main(["score", str(photo), "--game", game, "--variant", variant, "--json"])
        said = json.loads(capsys.readouterr().out)["error"]
        error = answer.get_json()["error"]
        assert answer.status_code == 400 and error["code"] == said["code"] != "bad_request", (game, variant)
        assert said["message"] in error["message"]
        assert (error["code"] == "bad_setup") == (variant == "seven")
    answer = client.post("/api/review", data={"photo": (io.BytesIO(photo.read_bytes()), "board.png"),
                                              "game": "chess"}, content_type="multipart/form-data")
    assert answer.status_code == 400 and answer.get_json()["error"]["code"] == "unknown_game"
    assert "unknown game 'chess'" in answer.get_json()["error"]["message"]


def test_an_answer_the_page_cannot_read_is_said_in_words_not_as_a_script_error(server, browser, monkeypatch):
    """A reading carrying a number JSON has no word for (a Geometrius token's infinite
    distance, before the reader wrote it as null) made the server's answer no JSON: the page
    said "Cannot read properties of null (reading 'review')" and showed nothing. An answer the
    page cannot read is now said in the user's words, and the page runs on."""
    from tests.test_session_geometrius import START, camera

    field = camera(START)
    reading = SimpleNamespace(uncertain=[], to_state_json=lambda: {
        "state": {"game": "geometrius", "tokens": json.loads(json.dumps(field))}, "uncertain": [],
        "tokens": [{"row": 0, "col": 0, "match_distance": float("inf")}]})
    monkeypatch.setitem(sys.modules, "vision.geometrius", SimpleNamespace(
        read_geometrius=lambda image, calibration=None: reading,
        debug_images=lambda r: {"overlay": np.full((40, 40, 3), 90, np.uint8)}))
    page, errors = open_page(browser, LANDSCAPE, 10000)
    page.goto(server.base + "/review")
    page.select_option("#review-game", "geometrius")
    page.set_input_files("#photo", {"name": "field.png", "mimeType": "image/png", "buffer": blank_png()})
    page.click("#review-go")
    page.wait_for_function("!document.querySelector('#review-go').disabled")
    message = page.locator("#review-error").inner_text()
    assert "answer could not be read" in message and "Cannot read" not in message
    assert errors == []
    page.close()


def test_a_review_saved_with_a_number_json_has_no_word_for_opens_again(tmp_path):
    """Reviews saved before the Geometrius reader wrote an infinite match distance as null
    hold ``Infinity`` in their row (Python's json writes it); read back it is null, so the
    server's answer is JSON a browser can read and the review opens again."""
    from companion_app.store import ReviewRow, Store

    store = Store.open(tmp_path)
    token = {"row": 0, "col": 0, "match_distance": float("inf"), "angle": float("nan")}
    store.create_review(ReviewRow("00000000000000aa", "geometrius", None, 1.0, 1.0,
                                  {"tokens": [token]}, [], {}, [], {}), {})
    again = Store.open(tmp_path).review("00000000000000aa")
    assert again.read["tokens"] == [{"row": 0, "col": 0, "match_distance": None, "angle": None}]
    json.loads(json.dumps(again.read), parse_constant=lambda c: pytest.fail(f"{c} in the answer"))


def test_the_corrected_state_link_of_an_unknown_review_is_a_page_saying_so_never_a_file(tmp_path, monkeypatch):
    """The review's "Corrected state (JSON)" link carried ``download``, and its route refused a
    review no longer kept (or never kept here) with JSON: the browser cancelled the download
    without a word, or saved the error as the state. A tab now gets the app's error page, with
    the message and the way back; a script still gets the one-line JSON, and a kept review's
    state is still a file."""
    fake_reader(monkeypatch, "gemblo", {"game": "gemblo", "cells": {"0,0": "R"}}, [])
    client = create_app(tmp_path).test_client()
    review = gemblo_review(client)
    gone = "/api/review/0123456789abcdef/state.json"
    tab = client.get(gone, headers={"Accept": BROWSER_ACCEPT})
    assert tab.status_code == 404 and tab.mimetype == "text/html"
    assert "Content-Disposition" not in tab.headers
    text = tab.get_data(as_text=True)
    assert "There is no review &#39;0123456789abcdef&#39;: it may be from another table" in text
    assert "Back to the table" in text and "Photo review" in text
    script = client.get(gone, headers={"Accept": "application/json"})
    assert script.status_code == 404 and script.get_json()["error"] == {
        "code": "no_review", "message": "there is no review '0123456789abcdef': it may be from another table"}
    kept = client.get(review["download"], headers={"Accept": BROWSER_ACCEPT})
    assert kept.status_code == 200 and kept.get_json()["cells"] == {"0,0": "R"}
    assert kept.headers["Content-Disposition"] == f'attachment; filename="tableref-gemblo-review-{review["id"]}.json"'
    # the link is named a file by the server's answer, so an error shows as a page
    link = re.search(r'<a id="review-download"[^>]*>', client.get(f"/review/{review['id']}").get_data(as_text=True))
    assert link is not None and " download" not in link.group(0)
