"""The tablet pages in a real browser (Debian's chromium driven by Playwright), plus the
HTTP guards a browser cannot easily reach (oversize upload, cross-site POST)."""
import argparse
import io
import json
import os
import socket
import sqlite3
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest
from werkzeug.serving import make_server

from companion_app.server import MAX_UPLOAD_MB, create_app
from companion_app.store import FILENAME, ReviewRow
from tests.test_session import MISSED, _put, boards, gemblo_boards, gemblo_held_back, gemblo_script
from vision.synth import CONDITIONS, render_photo

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path("/tmp/tableref-shots")
LANDSCAPE = {"width": 1280, "height": 800}
PORTRAIT = {"width": 800, "height": 1280}


def chromium_or_skip() -> None:
    if Path(CHROMIUM).exists():
        return
    reason = f"{CHROMIUM} not found: install Debian's chromium (make browser) to run the page tests"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def photo_of(rows: list[str]) -> bytes:
    """A phone photo of the board, rendered with exact ground truth, PNG-encoded."""
    image = render_photo(rows, CONDITIONS["clean"], np.random.default_rng(3)).image
    return cv2.imencode(".png", image)[1].tobytes()


# --- the app in a thread --------------------------------------------------------------------

class Running:
    """The app on 127.0.0.1 in a thread; stop and start again on the same port = a restart."""

    def __init__(self, data_dir: Path):
        self.data_dir, self.port, self.httpd, self.app = data_dir, 0, None, None

    def start(self) -> "Running":
        self.app = create_app(self.data_dir)
        self.httpd = make_server("127.0.0.1", self.port, self.app, threaded=True)
        self.port = self.httpd.server_port
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.app.extensions["tableref"].stop()

    @property
    def session(self):
        return self.app.extensions["tableref"].session

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def server(tmp_path):
    running = Running(tmp_path / "data").start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser():
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def shot(page, name: str, full_page: bool = False) -> None:
    """A screenshot to look at (the page must read well on a 10-inch tablet)."""
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), animations="disabled", full_page=full_page)


def shoot_portrait(browser, base, name):
    """A screenshot of the live page, alert showing, on a tablet held upright."""
    portrait = browser.new_page(viewport=PORTRAIT)
    portrait.goto(base + "/live")
    portrait.wait_for_selector(".alert")
    shot(portrait, name)
    portrait.close()


def score_cell(page, name: str):
    return page.locator(f'#scores tr[data-player="{name}"] .score')


# --- the flow -----------------------------------------------------------------------------

def test_setup_live_alert_correction_takeback(server, browser):
    base = server.base
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(20000)  # generous: the suite may run beside a busy machine
    page.goto(base + "/")
    assert page.url.endswith("/review")  # no camera, no game: the photo review page
    page.goto(base + "/setup")
    page.wait_for_selector("#players input")
    inputs = page.locator("#players input")
    assert inputs.count() == 4
    for i, name in enumerate(["Ann", "Bo", "Cy", "Di"]):
        inputs.nth(i).fill(name)
    shot(page, "setup")
    start_game(page)

    session = server.session
    assert [p["name"] for p in session.snapshot()["players"]] == ["Ann", "Bo", "Cy", "Di"]
    session.set_camera("ok", "camera 0: watching the board")
    for t, rows in enumerate(boards()):
        session.observe(rows, [], float(t))
        page.wait_for_selector(f"#history li[data-index='{t}']")
    assert page.locator('.cell[data-cell="2,2"]').get_attribute("data-colour") == "B"

    alert = page.locator(".alert")
    alert.wait_for()
    assert "B5" in alert.inner_text() and "edge with its own colour" in alert.inner_text()
    assert page.locator("#board path.illegal").count() == 1
    assert score_cell(page, "Bo").inner_text() == "-85"
    shot(page, "live-landscape")

    shoot_portrait(browser, base, "live-portrait")

    page.click(".alert .ack")
    page.wait_for_selector(".alert", state="detached")
    assert page.locator("#board path.illegal").count() == 0

    # one-tap correction: the camera missed the fifth square of yellow's I5
    page.click(f'.cell[data-cell="{MISSED[0]},{MISSED[1]}"]')
    page.wait_for_selector("#picker[open]")
    shot(page, "picker")
    page.click('#picker .choice[data-colour="Y"]')
    page.wait_for_function("document.querySelector('#scores tr[data-player=\"Bo\"] .score').textContent === '-84'")
    assert page.locator('.cell[data-cell="0,15"]').get_attribute("data-colour") == "Y"
    # the correction is ringed on the board (the camera still reads the cell empty), and the
    # legend says what the ring means; set back to the camera's reading, the ring goes
    ring = f'#board .corrected[data-of="{MISSED[0]},{MISSED[1]}"]'
    page.wait_for_selector(ring)
    assert page.locator("#board .corrected").count() == 1 and page.locator("#live-legend").is_visible()
    shot(page, "live-corrected")
    for colour, score, rings in ((".", "-85", 0), ("Y", "-84", 1)):
        page.click(f'.cell[data-cell="{MISSED[0]},{MISSED[1]}"]')  # through the ring, onto the cell
        page.wait_for_selector("#picker[open]")
        page.click(f'#picker .choice[data-colour="{colour}"]')
        page.wait_for_function("document.querySelector('#scores tr[data-player=\"Bo\"] .score').textContent"
                               f" === '{score}'")
        assert page.locator("#board .corrected").count() == rings

    # tap the illegal move in the history: take it back
    page.click("#history li[data-index='4']")
    page.wait_for_selector("#takeback[open]")
    page.click("#takeback button[value=yes]")
    page.wait_for_selector("#history li[data-index='4']", state="detached")
    assert page.locator("#turn").inner_text().strip() == "Blue to play"
    shot(page, "live-after")

    # exports
    record = page.request.get(base + "/export/record.json").json()
    assert record["game"] == "blokus" and len(record["moves"]) == 4
    assert page.request.get(base + "/export/game.blksgf").text().startswith("(;FF[4]")
    page.close()


SCREENS = {"tablet-landscape": LANDSCAPE, "tablet-portrait": PORTRAIT,
           "small-tablet-portrait": {"width": 768, "height": 1024}, "phone": {"width": 390, "height": 844}}
PAGES = ("/live", "/setup", "/review", "/calibrate", "/tokens")
SIDEWAYS = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def test_no_page_scrolls_sideways_and_the_live_panel_fits_every_screen(server, browser):
    """A tablet either way round, a smaller one and a phone: no page is wider than the screen
    (the bar's links once pushed the live page's connection badge off a tablet held upright),
    upright the moves stand beside the scores, and on a phone the board takes the width."""
    page = setup_page(browser, server.base, "blokus")
    start_game(page)
    session = server.session
    session.set_camera("ok", "camera 0: watching the board")
    for t, rows in enumerate(boards()):
        session.observe(rows, [], float(t))
    page.wait_for_selector(".alert")
    page.close()
    for screen, viewport in SCREENS.items():
        page = browser.new_page(viewport=viewport)
        page.set_default_timeout(20000)
        for path in PAGES:
            page.goto(server.base + path)
            page.wait_for_load_state("load")
            if path == "/live":
                page.wait_for_selector(".alert")
                page.wait_for_selector("#conn[data-state=live]")
            assert page.evaluate(SIDEWAYS) <= 0, f"{path} scrolls sideways on a {screen}"
        page.goto(server.base + "/live")
        page.wait_for_selector("#history li")
        shot(page, f"live-{screen}")
        badge = page.locator("#conn").bounding_box()
        assert badge["x"] + badge["width"] <= viewport["width"], f"the connection badge is cut on a {screen}"
        scores, moves = page.locator("#scores").bounding_box(), page.locator(".moves").bounding_box()
        if screen in ("tablet-portrait", "small-tablet-portrait"):
            assert abs(moves["y"] - scores["y"]) < 40 and moves["x"] > scores["x"] + scores["width"] / 2
        if screen == "phone":
            assert page.locator("#board").bounding_box()["width"] >= 0.9 * viewport["width"]
            dismiss = page.locator(".alert .ack").bounding_box()
            assert dismiss["x"] + dismiss["width"] <= viewport["width"]
        page.close()


NAV_ON_SCREEN = """(width) => [...document.querySelectorAll(".bar nav a")].filter((a) => {
  const r = a.getBoundingClientRect();
  const top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  return r.left < 0 || r.right > width || !(top && a.contains(top));
}).map((a) => a.textContent)"""


@pytest.mark.parametrize("finger", [False, True])
def test_every_page_bar_link_is_on_the_screen_of_a_phone_and_a_tablet(server, browser, finger):
    """On a 390 px phone the bar's last link ("Tokens") lay past the right edge, in a row that
    scrolled sideways with nothing to say so. Every link is now on the screen, uncovered, on a
    phone, a narrower one (the links wrap) and a tablet, with a finger's taller links or not."""
    for viewport in ({"width": 390, "height": 844}, {"width": 320, "height": 640}, {"width": 1024, "height": 768}):
        context = browser.new_context(viewport=viewport, has_touch=finger)
        page = context.new_page()
        for path in ("/setup", "/review"):
            page.goto(server.base + path)
            page.wait_for_load_state("load")
            assert page.locator(".bar nav a").count() == 5
            assert page.evaluate(NAV_ON_SCREEN, viewport["width"]) == [], f"{path} at {viewport}"
        context.close()


def live_page_after_the_first_piece(server, browser):
    """A classic game started from the page, the live page open and the camera's first piece
    in its history."""
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(8000)
    page.request.post(server.base + "/api/session", data=json.dumps({"variant": "classic"}),
                      headers={"Content-Type": "application/json"})
    page.goto(server.base + "/live")
    page.wait_for_selector("#conn[data-state=live]")
    server.session.observe(boards()[0], [], 0.0)
    page.wait_for_selector("#history li[data-index='0']")
    return page


def test_the_game_record_downloads_and_with_no_game_left_its_link_says_so(server, browser):
    """The live page's export link saves the record; once the server came back without the
    game (its saved record damaged), the same link shows a page saying no game is running,
    where before chromium's download silently failed (other browsers saved the error JSON)."""
    page = live_page_after_the_first_piece(server, browser)
    with page.expect_download() as saved:
        page.click("text=Game record (JSON)")
    record = saved.value
    assert record.suggested_filename == f"tableref-game-{server.session.id}.json"
    assert json.loads(Path(record.path()).read_text()) == server.session.export_record()
    server.session.observe(boards()[1], [], 1.0)  # the page was not left: it still streams
    page.wait_for_selector("#history li[data-index='1']")

    server.stop()
    damage(server.data_dir, "UPDATE events SET payload = '{\"colour\": ' WHERE id = 1")
    server.start()
    assert server.session is None
    page.click("text=Game record (JSON)")
    page.wait_for_url("**/export/record.json")
    assert page.locator("#page-error").inner_text() == "No game is running: start one on the setup page"
    page.click(".bar >> text=New game")
    page.wait_for_url("**/setup")
    page.close()


def setup_page(browser, base, game):
    """The setup page in landscape with ``game`` chosen."""
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(20000)  # generous: the suite may run beside a busy machine
    page.goto(base + "/setup")
    page.select_option("#game", game)
    return page


def start_game(page):
    """Start the game set up on ``page`` and wait until the live page streams its state."""
    page.click("text=Start the game")
    page.wait_for_url("**/live")
    page.wait_for_selector("#conn[data-state=live]")


def test_gemblo_setup_live_alert_correction(server, browser):
    base = server.base
    page = setup_page(browser, base, "gemblo")
    page.select_option("#variant", "4p")
    page.wait_for_selector("#players .player:nth-child(4)")
    assert page.locator("[data-setting=rotated_4p]").is_visible()  # the turned rectangle: 4 players only
    page.select_option("#variant", "3p")
    page.wait_for_selector("#players .player:nth-child(4)", state="detached")
    assert not page.locator("[data-setting=rotated_4p]").is_visible()
    names = ["Ann", "Bo", "Cy"]
    for i, name in enumerate(names):
        page.locator("#players input").nth(i).fill(name)
    page.locator("#players select.colour").nth(2).select_option("B")  # Cy plays blue, not yellow
    shot(page, "gemblo-setup")
    start_game(page)

    session = server.session
    assert session.row.game == "gemblo" and session.setup.variant == "3p"
    assert [(p["name"], p["colours"]) for p in session.snapshot()["players"]] == [
        ("Ann", ["C"]), ("Bo", ["R"]), ("Cy", ["B"])]
    moves = gemblo_script(session.setup)
    assert page.locator("#board polygon.cell").count() == 463
    session.set_camera("ok", "camera 0: watching the board")
    for t, cells in enumerate(gemblo_boards(moves)):
        session.observe(cells, [], float(t))
        page.wait_for_selector(f"#history li[data-index='{t}']")
    q, r = moves[0].cells[0]
    assert page.locator(f'.cell[data-cell="{q},{r}"]').get_attribute("data-colour") == moves[0].colour

    illegal = moves[-1]
    player = next(p["name"] for p in session.snapshot()["players"] if illegal.colour in p["colours"])
    alert = page.locator(".alert")
    alert.wait_for()
    assert "M4" in alert.inner_text() and "edge with its own colour" in alert.inner_text()
    assert page.locator("#board path.illegal").count() == 1
    assert page.locator("#board path.last").count() == 1
    assert page.locator("a[data-games=blokus]").is_hidden()  # no Pentobi file for Gemblo
    before = int(score_cell(page, player).inner_text())
    shot(page, "gemblo-live-landscape")

    shoot_portrait(browser, base, "gemblo-live-portrait")

    page.click(".alert .ack")
    page.wait_for_selector(".alert", state="detached")
    # the monohex was a reflection: the cell is really empty
    q, r = illegal.cells[0]
    page.click(f'.cell[data-cell="{q},{r}"]')
    page.wait_for_selector("#picker[open]")
    assert page.locator("#picker .choice").count() == 7  # six colours and empty
    shot(page, "gemblo-picker")
    page.click('#picker .choice[data-colour="."]')
    page.wait_for_function(f"document.querySelector('#scores tr[data-player=\"{player}\"] .score').textContent"
                           f" === '{before - 1}'")
    assert page.locator(f'.cell[data-cell="{q},{r}"]').get_attribute("data-colour") == "."
    record = page.request.get(base + "/export/record.json").json()
    assert record["game"] == "gemblo" and record["variant"] == "3p" and len(record["moves"]) == len(moves) - 1
    page.close()


def test_the_live_page_rings_strongly_only_the_doubts_a_move_waits_on(server, browser):
    """The filmed sparse Gemblo board: a piece held back by one doubted hex beside it, and 40
    doubted hexes far away that change nothing. The piece's hexes and the doubt beside it are
    ringed strongly and counted on the status line; the others faintly (no "?"); the picker
    opens on a faint ring too, and a tap on the doubt beside the piece logs it."""
    page = setup_page(browser, server.base, "gemblo")
    page.select_option("#variant", "3p")
    start_game(page)
    first, seen, beside, far, doubts = gemblo_held_back(server.session.setup)
    server.session.set_camera("ok", "camera 0: watching the board")
    server.session.observe(seen, doubts, 1.0)
    hint = page.locator("#holding-hint")
    hint.wait_for()
    holding = sorted(f"{q},{r}" for q, r in [*first.cells, beside])
    strong = page.locator("#marks .unsure.holding")
    assert sorted(strong.evaluate_all("ns => ns.map((n) => n.dataset.of)")) == holding
    faint = page.locator("#marks .unsure.faint")
    assert sorted(faint.evaluate_all("ns => ns.map((n) => n.dataset.of)")) == sorted(f"{q},{r}" for q, r in far)
    assert page.locator("#marks .unsure-text").count() == len(holding)
    assert hint.inner_text() == "A move waits on the strong rings: tap a doubtful one to say what it holds"
    assert hint.get_attribute("data-count") == str(len(holding))
    assert page.locator("#live-legend .unsure.faint").is_visible()  # the legend names both rings
    shot(page, "gemblo-live-holding")
    for screen, viewport in SCREENS.items():  # the line fits every screen the live page does
        other = browser.new_page(viewport=viewport)
        other.goto(server.base + "/live")
        other.locator("#holding-hint").wait_for()
        box = other.locator("#holding-hint").bounding_box()
        assert other.evaluate(SIDEWAYS) <= 0 and box["x"] + box["width"] <= viewport["width"], screen
        other.close()

    q, r = far[0]
    page.click(f'.cell[data-cell="{q},{r}"]')  # a faint ring still opens the picker
    page.wait_for_selector("#picker[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#picker[open]", state="detached")
    q, r = beside
    page.click(f'.cell[data-cell="{q},{r}"]')
    page.wait_for_selector("#picker[open]")
    page.click('#picker .choice[data-colour="."]')
    page.wait_for_selector("#history li[data-index='0']")
    hint.wait_for(state="hidden")
    assert strong.count() == 0 and faint.count() == len(far)
    page.close()


def test_the_hint_says_a_move_waits_on_a_doubt_only_when_one_holds_it(server, browser):
    """A square of blue's logged piece read clearly as red is no move and no doubt: the change
    is ringed strongly, and the hint said "A move waits on the strong rings: tap a doubtful
    one", with no doubtful one to tap. It now says what is true; with yellow's next piece held
    by a doubted square beside it, the hint points at the doubt again."""
    page = setup_page(browser, server.base, "blokus")
    start_game(page)
    session = server.session
    session.observe(boards()[0], [], 0.0)
    page.wait_for_selector("#history li[data-index='0']")
    hint = page.locator("#holding-hint")
    session.observe(_put(boards()[0], [(1, 1)], "R"), [], 1.0)
    hint.wait_for()
    assert page.locator("#marks .unsure.holding").evaluate_all("ns => ns.map((n) => n.dataset.of)") == ["1,1"]
    no_move = "The ringed change is no move the camera can log: tap a ring to say what it holds, or set the pieces right"
    assert hint.inner_text() == no_move
    session.observe(boards()[1], [MISSED], 2.0)
    page.wait_for_function("document.getElementById('holding-hint').textContent.startsWith('A move waits')")
    assert hint.inner_text() == "A move waits on the strong rings: tap a doubtful one to say what it holds"
    page.close()


def test_live_page_reconnects_to_a_restarted_server(server, browser):
    page = live_page_after_the_first_piece(server, browser)

    server.stop()
    page.wait_for_selector("#conn[data-state=down]")
    server.start()  # same port, same data folder: the game resumes
    page.wait_for_selector("#conn[data-state=live]")
    server.session.observe(boards()[1], [], 1.0)
    page.wait_for_selector("#history li[data-index='1']")
    assert page.locator("#history li").count() == 2
    page.close()


# The answer to the page's own action held back in the browser until the test lets it go.
HOLD_CORRECTIONS = """
window.heldAnswers = [];
const realFetch = window.fetch;
window.fetch = async (url, init) => {
  const response = await realFetch(url, init);
  if (String(url).endsWith("/api/correct")) await new Promise((go) => window.heldAnswers.push(go));
  return response;
};
"""


def test_a_late_answer_never_draws_over_a_newer_streamed_state(server, browser):
    """On a busy machine the answer to a tap can reach the page after the stream brought a
    newer state (a camera turn made meanwhile): the page keeps the newer one, or it would
    show the stale board until the next change (a Geometrius turn's card button never came)."""
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(20000)
    page.add_init_script(HOLD_CORRECTIONS)
    page.request.post(server.base + "/api/session", data=json.dumps({"variant": "classic"}),
                      headers={"Content-Type": "application/json"})
    page.goto(server.base + "/live")
    page.wait_for_selector("#conn[data-state=live]")
    session = server.session
    for t, rows in enumerate(boards()[:2]):
        session.observe(rows, [], float(t))
    page.wait_for_selector("#history li[data-index='1']")

    page.click(f'.cell[data-cell="{MISSED[0]},{MISSED[1]}"]')
    page.wait_for_selector("#picker[open]")
    page.click('#picker .choice[data-colour="Y"]')
    page.wait_for_function(f"document.querySelector('.cell[data-cell=\"{MISSED[0]},{MISSED[1]}\"]').dataset.colour === 'Y'")
    page.wait_for_function("window.heldAnswers.length === 1")  # streamed; the answer waits
    session.observe(boards()[2], [], 2.0)  # red's turn, streamed
    page.wait_for_selector("#history li[data-index='2']")
    newest = session.snapshot()["version"]
    page.evaluate("window.heldAnswers.forEach((go) => go())")
    page.wait_for_selector("#toast:not([hidden])")
    assert "Corrected" in page.locator("#toast").inner_text()
    assert page.evaluate("state.version") == newest
    assert page.locator("#history li").count() == 3

    session.set_camera("ok", "camera 0: watching the board")  # and the next state still shows
    page.wait_for_selector("#camera[data-status=ok]")
    page.close()


def test_review_scores_a_photo_and_refuses_a_non_image(server, browser):
    base = server.base
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(20000)
    page.goto(base + "/review")
    page.set_input_files("#photo", {"name": "board.png", "mimeType": "image/png",
                                    "buffer": photo_of(boards()[-1])})
    page.click("#review-go")
    page.wait_for_selector("#review-result:not([hidden])")
    assert page.locator("#review-scores tbody tr").count() == 4
    assert page.locator('#review-scores tr[data-player="Yellow"] .score').inner_text() == "-85"
    assert page.locator(".shot img").count() >= 1
    shot(page, "review", full_page=True)

    page.set_input_files("#photo", {"name": "board.jpg", "mimeType": "image/jpeg",
                                    "buffer": b"#!/bin/sh\necho this is no photo\n"})
    page.click("#review-go")
    error = page.locator("#review-error")
    error.wait_for()
    assert "not a photo" in error.inner_text()
    assert page.locator("#review-result").is_hidden()
    shot(page, "review-refused")

    # a file over the limit (made in the page: sending 25 MB through the driver is slow)
    page.evaluate("""mb => {
        const files = new DataTransfer();
        files.items.add(new File([new Uint8Array(mb * 1024 * 1024 + 1)], "huge.jpg", { type: "image/jpeg" }));
        document.getElementById("photo").files = files.files;
    }""", MAX_UPLOAD_MB)
    page.click("#review-go")
    page.wait_for_function("document.querySelector('#review-error').textContent.includes('larger than')")
    page.close()


# --- guards, over plain HTTP --------------------------------------------------------------

def test_oversize_upload_is_refused_with_a_message(tmp_path):
    client = create_app(tmp_path).test_client()
    big = b"\xff\xd8\xff" + b"\0" * (MAX_UPLOAD_MB * 1024 * 1024 + 10)
    response = client.post("/api/review", data={"photo": (io.BytesIO(big), "huge.jpg")},
                           content_type="multipart/form-data")
    assert response.status_code == 413
    assert f"larger than {MAX_UPLOAD_MB} MB" in response.get_json()["error"]["message"]


def test_camera_source_feeds_the_session(tmp_path, monkeypatch):
    """serve's wiring: the live loop's boards go to the active session, its status to the page."""
    from companion_app import live

    started = []

    class FakeReferee:
        def __init__(self, source, on_board, on_status, calibration=None, game="blokus"):
            self.on_board, self.on_status = on_board, on_status
            started.append(self)

        def start(self):
            self.on_status("ok", "watching the board")

        def stop(self):
            started.remove(self)

    monkeypatch.setattr(live, "LiveReferee", FakeReferee)
    app = create_app(tmp_path, source=object())
    client = app.test_client()
    assert client.get("/").headers["Location"].endswith("/live")  # a game was started for the camera
    started[0].on_board(boards()[0], [], 0.0)
    state = client.get("/api/state").get_json()
    assert state["camera"] == {"status": "ok", "message": "watching the board"}
    assert [h["colour"] for h in state["history"]] == ["B"]
    client.post("/api/session", json={"variant": "two-player"})  # a new game: the camera feeds it
    started[0].on_board(boards()[1], [], 1.0)
    state = client.get("/api/state").get_json()
    assert state["session"]["variant"] == "two-player" and state["camera"]["status"] == "ok"
    app.extensions["tableref"].stop()
    assert not started


def test_a_gemblo_game_turns_the_camera_to_the_gemblo_reader(tmp_path, monkeypatch):
    from companion_app import live
    from rules import gemblo

    watched = []

    class FakeReferee:
        def __init__(self, source, on_board, on_status, calibration=None, game="blokus"):
            self.on_board = on_board
            watched.append(game)

        def start(self):
            pass

        def stop(self):
            pass

        def watch_game(self, game):
            watched.append(game)

    monkeypatch.setattr(live, "LiveReferee", FakeReferee)
    app = create_app(tmp_path, source=object())
    client = app.test_client()
    seats = client.post("/api/seats", json={"game": "gemblo", "variant": "2p-double"}).get_json()["seats"]
    assert [s["colours"] for s in seats] == [["C", "Y"], ["R", "G"]]
    client.post("/api/session", json={"game": "gemblo", "variant": "3p"})
    assert watched == ["blokus", "gemblo"]
    board = gemblo.parse_cells(gemblo_boards(gemblo_script())[0])
    app.extensions["tableref"].referee.on_board(board, [], 0.0)
    state = client.get("/api/state").get_json()
    assert state["session"]["game"] == "gemblo" and len(state["history"]) == 1
    assert client.get("/export/game.blksgf").status_code == 400  # Pentobi files hold Blokus only
    app.extensions["tableref"].stop()
    create_app(tmp_path, source=object()).extensions["tableref"].stop()  # a restart resumes Gemblo
    assert watched[-1] == "gemblo"


def test_table_calibration_reaches_the_referee_and_a_broken_one_is_ignored(tmp_path, monkeypatch, capsys):
    from calibration import Calibration, save_calibration
    from calibration.board import lock_board
    from companion_app import live
    from rules.blokus import random_game_state
    from vision.synth.blokus import render_photo
    from vision.synth.conditions import CONDITIONS

    given = []

    class FakeReferee:
        def __init__(self, source, on_board, on_status, calibration=None, game="blokus"):
            given.append(calibration)

        def start(self):
            pass

        def stop(self):
            pass

    monkeypatch.setattr(live, "LiveReferee", FakeReferee)
    (tmp_path / "calibration.json").write_text("{not json")
    create_app(tmp_path, source=object()).extensions["tableref"].stop()
    assert given == [None] and "calibration ignored" in capsys.readouterr().err
    photo = render_photo(random_game_state(np.random.default_rng(1), 8), CONDITIONS["clean"],
                         np.random.default_rng(1), size=(1280, 720))
    save_calibration(Calibration(board=lock_board(photo.image)), tmp_path / "calibration.json")
    create_app(tmp_path, source=object()).extensions["tableref"].stop()
    assert given[-1] is not None and given[-1].pose is not None


def test_cross_site_post_is_refused(tmp_path):
    client = create_app(tmp_path).test_client()
    doc = {"variant": "classic"}
    refused = client.post("/api/session", json=doc, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and "another site" in refused.get_json()["error"]["message"]
    assert client.get("/api/state").status_code == 400  # nothing was started
    ok = client.post("/api/session", json=doc, headers={"Origin": "http://localhost"})
    assert ok.status_code == 200 and ok.get_json()["to_move"] == "B"


def test_actions_report_errors_as_json(tmp_path):
    client = create_app(tmp_path).test_client()
    assert client.post("/api/correct", json={"cell": [0, 0], "colour": "B"}).status_code == 400
    client.post("/api/session", json={"variant": "classic"})
    bad = client.post("/api/correct", json={"cell": [0, 99], "colour": "B"})
    assert bad.status_code == 400 and "not on the" in bad.get_json()["error"]["message"]
    assert client.post("/api/take-back", json={"index": 3}).status_code == 400
    assert client.post("/api/session", json={"variant": "nine"}).get_json()["error"]["code"] == "bad_setup"
    assert client.post("/api/correct", data="not json").status_code == 400


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # what a tab asks for


def test_a_wrong_address_or_a_failed_page_is_a_page_with_a_way_back_not_raw_json(tmp_path):
    """A tablet opening a mistyped or old address was shown the raw JSON meant for the pages'
    scripts, with no link on; the scripts' calls still get JSON (a page that failed: below)."""
    app = create_app(tmp_path)
    client = app.test_client()
    missing = client.get("/scores", headers={"Accept": BROWSER_ACCEPT})
    assert missing.status_code == 404 and missing.mimetype == "text/html"
    text = missing.get_data(as_text=True)
    assert "There is no page at /scores: choose one of the pages above" in text
    assert 'href="/"' in text and "Photo review" in text  # the way back, and the page bar
    assert client.get("/scores?<b>", headers={"Accept": BROWSER_ACCEPT}).status_code == 404
    assert "<script>" not in client.get("/<script>x", headers={"Accept": BROWSER_ACCEPT}).get_data(as_text=True)
    api = client.get("/api/nothing")  # fetch() asks for */*: the one-line JSON as before
    assert api.status_code == 404 and api.get_json()["error"]["code"] == "not_found"


def test_a_failed_page_says_what_to_do_and_leaves_the_fault_to_the_log(tmp_path, monkeypatch, caplog):
    """A page that failed said "Internal error: RuntimeError: the disk is gone": words for
    whoever mends the code, and nothing a player can do. It now says the game is saved, to
    reload, and where the log is; the fault itself is in that log. Scripts keep the code."""
    app = create_app(tmp_path)
    client = app.test_client()

    def broken() -> str:
        raise RuntimeError("the disk is gone")

    monkeypatch.setitem(app.view_functions, "setup_page", broken)
    failed = client.get("/setup", headers={"Accept": BROWSER_ACCEPT})
    assert failed.status_code == 500 and failed.mimetype == "text/html"
    text = failed.get_data(as_text=True)
    assert "all you entered so far are saved: reload the page to carry on" in text
    assert "The details are in the server&#39;s log, in the window where tableref serve runs" in text
    assert "RuntimeError" not in text and "the disk is gone" not in text
    assert "RuntimeError: the disk is gone" in caplog.text  # the traceback, for whoever mends it
    script = client.get("/setup").get_json()["error"]
    assert script["code"] == "internal_error" and "reload the page" in script["message"]
    assert "the disk is gone" not in script["message"]


def test_an_export_with_no_game_running_is_a_page_saying_so_never_a_file(tmp_path):
    """The live page's export links carried ``download``: with no game left to export (the
    server came back without it), the browser was handed the error JSON as the record (or,
    in chromium, a download that silently failed). A tab now gets a page saying so; a script
    still gets the JSON."""
    client = create_app(tmp_path).test_client()
    for url in ("/export/record.json", "/export/game.blksgf"):
        tab = client.get(url, headers={"Accept": BROWSER_ACCEPT})
        assert tab.status_code == 400 and tab.mimetype == "text/html", url
        assert "Content-Disposition" not in tab.headers
        text = tab.get_data(as_text=True)
        assert "No game is running: start one on the setup page" in text and "New game" in text
        script = client.get(url)
        assert script.status_code == 400 and "no game is running" in script.get_json()["error"]["message"]
    live = create_app(tmp_path / "live").test_client()
    live.post("/api/session", json={"variant": "classic"})
    assert " download" not in live.get("/live").get_data(as_text=True)  # the server's answer says file or page


# --- Equilibrix and Geometrius ------------------------------------------------------------

def test_equilibrix_setup_flower_board_alert_correction_and_tile_sheet(server, browser):
    from tests.test_session_equilibrix import DUO, around_origin

    base = server.base
    page = setup_page(browser, base, "equilibrix")
    page.select_option("#variant", "tri-mety")
    page.wait_for_selector("#players .player:nth-child(2)")
    assert page.locator("#kombo").is_visible()
    page.check("#kombo")
    assert page.locator("#players select.colour").nth(0).input_value() == "B"
    start_game(page)
    session = server.session
    assert session.row.game == "equilibrix" and session.setup.variant == "tri-mety"
    assert page.locator("#board path.field").count() == 144  # 90 petals and 54 curved triangles
    assert page.locator("#board circle.marker").count() == 6  # TŘI METY's corner markers
    assert page.locator("#ring .tile.offered").count() == 4
    assert "KOMBO game 1" in page.locator("#extra h2").inner_text()

    board = {}
    for t, step in enumerate((DUO, {"P 2 0 0": "W"}, around_origin(6) | {"P -3 3 0": "B"})):
        board.update(step)
        session.observe(dict(board), [], float(t))
    page.wait_for_selector("#history li[data-index='2']")
    assert page.locator('.field[data-cell="T 0 0 +"]').get_attribute("data-colour") == "B"
    assert page.locator("#turn").inner_text().strip() == "White to play"
    rules = {page.locator(".alert .rule").nth(i).inner_text() for i in range(page.locator(".alert").count())}
    assert {"E1", "E5"} <= rules
    shot(page, "equilibrix-live-landscape")
    shoot_portrait(browser, base, "equilibrix-live-portrait")

    # one-tap correction: White's petal was a reflection
    page.click('.field[data-cell="P 2 0 0"]')
    page.wait_for_selector("#picker[open]")
    assert [page.locator("#picker .choice").nth(i).inner_text() for i in range(3)] == ["Black", "White", "Empty"]
    page.click('#picker .choice[data-colour="."]')
    page.wait_for_function("document.querySelector('.field[data-cell=\"P 2 0 0\"]').dataset.colour === '.'")

    # a move's sheet: the ring tile and the 5+1 token
    page.click("#history li[data-index='0']")
    page.wait_for_selector("#takeback[open]")
    assert page.locator("#amend-tile").input_value() == "duo-1"
    events, version = len(session.store.events(session.id)), session.snapshot()["version"]
    page.click("#amend-apply")  # the tile untouched: it stays the guess from the shape, not entered
    page.wait_for_function(f"state && state.version > {version}")
    amend = session.store.events(session.id)[events:]
    assert [(e.kind, "tile" in e.payload) for e in amend] == [("amend", False)]
    page.click("#history li[data-index='0']")
    page.wait_for_selector("#takeback[open]")
    page.select_option("#amend-tile", "duo-2")
    page.click("#amend-apply")
    page.wait_for_function("document.querySelector(\"#history li[data-index='0'] .what\").textContent.includes('duo-2')")
    assert session.snapshot()["history"][0]["reasons"] == ["tile_not_offered"]
    page.close()


def test_equilibrix_doubts_a_move_waits_on_carry_a_question_mark_as_on_the_cell_boards(server, browser):
    """Black's first tile held back by a doubted field beside it, and a doubted field far off:
    the strong rings (the tile's fields and the doubt beside) carry a "?" as Blokus' and
    Gemblo's do (the flower's had none), the faint one none, each inside its field."""
    from rules import flower
    from tests.test_session_equilibrix import DUO

    page = setup_page(browser, server.base, "equilibrix")
    start_game(page)
    b = flower.board()
    tile = [flower.parse_field(f) for f in DUO]
    beside = next(flower.field_id(c) for c in sorted(b.around(tile)) if flower.field_id(c) not in DUO)
    far = next(flower.field_id(c) for c in b.cells if c not in b.around(b.around(tile)))
    server.session.observe(dict(DUO), [beside, far], 1.0)
    page.locator("#holding-hint").wait_for()
    holding = sorted([*DUO, beside])
    assert sorted(page.locator("#marks .unsure.holding").evaluate_all("ns => ns.map((n) => n.dataset.of)")) == holding
    marks = page.locator("#marks .unsure-text")
    assert marks.evaluate_all("ns => ns.map((n) => n.textContent)") == ["?"] * len(holding)
    inside = """([x, y]) => [...document.querySelectorAll('#board .field')].find((f) =>
        f.isPointInFill(new DOMPoint(x, y)))?.dataset.cell"""
    at = sorted(page.evaluate(inside, [float(m.get_attribute("x")), float(m.get_attribute("y"))])
                for m in marks.all())
    assert at == holding
    shot(page, "equilibrix-live-doubts")
    page.close()


def test_geometrius_token_field_and_card_verdict_at_once(server, browser):
    from tests.test_session_geometrius import START, camera, chips

    base = server.base
    page = setup_page(browser, base, "geometrius")
    page.select_option("#count", "3")
    page.wait_for_selector("#players .player:nth-child(3)")
    page.locator("#players input").nth(0).fill("Ann")
    start_game(page)
    session = server.session
    assert [(p["name"], p["colours"]) for p in session.snapshot()["players"]] == [
        ("Ann", ["red"]), ("Blue", ["blue"]), ("Green", ["green"])]
    page.wait_for_selector("#board .waiting-text")

    # the camera cannot read one starting token: the page asks for its shape
    board = camera(START)
    board[5]["shape"] = "unknown"
    session.observe(board, [], 0.0)
    # the hint of a field seen (not the one shown while waiting for any token: a busy machine
    # drew the state before this board's, and no token was on the page yet)
    page.wait_for_selector("#waiting-hint:has-text('tap each')")
    assert page.locator("#board rect.token-face").count() == 16
    page.click('#board rect.token-face[data-cell="1,1"]')
    page.wait_for_selector("#tokenfix[open]")
    assert page.locator("#fix-top-part").is_hidden()
    page.select_option("#fix-shape", "Q01")
    page.click("#fix-shape-save")
    page.wait_for_selector("#waiting-hint", state="detached")
    session.observe(camera(START), [], 0.5)
    assert page.locator("#board rect.token-face").count() == 16
    session.observe(camera(chips(START, Q01="red")), [], 1.0)
    page.wait_for_selector("#history li[data-index='0']")
    assert page.locator("#board circle.stone").count() == 1
    # the shape the user named for the unread starting token is the user's word: ringed
    page.wait_for_selector("#board .corrected", state="attached")
    assert page.locator("#board .corrected").count() == 1

    # the player taps the card played: the verdict shows at once, then the turn is judged
    page.click(".tap-card")
    page.wait_for_selector("#cardpicker[open]")
    page.click('#cardpicker [data-card="C01"]')  # exactly 3 sides: not the square Q01
    assert "does not fit Q01" in page.locator("#card-verdict").inner_text()
    shot(page, "geometrius-card-picker")
    page.wait_for_selector(".alert")
    assert "G1" in page.locator(".alert .rule").inner_text()
    assert page.locator("#board rect.offending").count() == 1
    shot(page, "geometrius-live-landscape")
    shoot_portrait(browser, base, "geometrius-live-portrait")
    page.click(".tap-card")
    page.wait_for_selector("#cardpicker[open]")
    page.click('#cardpicker [data-card="C02"]')  # exactly 4 sides
    assert "✓ fits Q01" in page.locator("#card-verdict").inner_text()
    page.wait_for_selector(".alert", state="detached")
    assert page.locator(".slot .fit.ok").count() == 1

    # one-tap correction of a token: no chip was put on it after all
    page.click('#board rect.token-face[data-shape="Q01"]')
    page.wait_for_selector("#tokenfix[open]")
    page.click('#tokenfix [data-top="."]')
    page.wait_for_selector("#history li[data-index='0']", state="detached")
    assert page.locator("#board circle.stone").count() == 0
    q01 = page.locator('#board rect.token-face[data-shape="Q01"]').get_attribute("data-cell")
    assert page.locator("#board .corrected").count() == 1  # the camera still shows the chip: ringed
    assert page.locator(f'#board .corrected[data-of="{q01}"]').count() == 1
    page.close()


def test_geometrius_card_picker_takes_two_cards_for_a_block_the_camera_saw_half(server, browser):
    """A block whose second chip the camera does not see shows as one chip: the picker lets the
    player say it was a block and tap its two cards, which the turn then counts; and, said by
    mistake (rev_end22: the field then had a chip the table lacks, the next board explained
    nothing and the page could not undo it), one chip again with one card."""
    from tests.test_session_geometrius import START, camera, chips

    page = setup_page(browser, server.base, "geometrius")
    start_game(page)
    session = server.session
    session.observe(camera(START), [], 0.0)
    session.observe(camera(chips(START, Q03="red")), [], 1.0)  # the block's second chip hidden
    page.wait_for_selector("#history li[data-index='0']")
    page.click(".tap-card")
    page.wait_for_selector("#cardpicker[open]")
    page.click("#card-block")
    assert page.locator("#card-block").is_hidden()
    page.click('#cardpicker [data-card="C02"]')
    assert page.locator("#cardpicker").get_attribute("open") is not None  # one more card to tap
    page.click('#cardpicker [data-card="C05"]')
    page.wait_for_selector(".slot .fit.ok >> nth=1")
    (slot,) = session.snapshot()["geometrius"]["turns"][0]["slots"]
    assert (slot["chips"], slot["cards"]) == (2, ["C02", "C05"])
    page.click(".tap-card")  # a block said by mistake: one card makes it one chip again
    page.wait_for_selector("#cardpicker[open]")
    assert page.locator("#card-block").inner_text() == "It was one chip: one card"
    page.click("#card-block")
    page.click('#cardpicker [data-card="C02"]')
    page.wait_for_function("document.querySelectorAll('.slot .fit.ok').length === 1")
    (slot,) = session.snapshot()["geometrius"]["turns"][0]["slots"]
    assert (slot["chips"], slot["cards"]) == (1, ["C02"])
    page.close()


def test_review_offers_every_game_and_says_when_a_reader_is_missing(tmp_path, monkeypatch, browser):
    """The review page lets the user choose the game; a reader not installed yet is a clear
    error, and a reader that exists (here a stand-in) is scored by the game's rules."""
    import sys
    from types import SimpleNamespace

    client = create_app(tmp_path).test_client()
    png = cv2.imencode(".png", np.full((240, 320, 3), (40, 110, 170), np.uint8))[1].tobytes()  # plain, in colour

    def upload(game, variant):
        return client.post("/api/review", data={"photo": (io.BytesIO(png), "board.png"), "game": game,
                                                "variant": variant}, content_type="multipart/form-data")

    monkeypatch.setitem(sys.modules, "vision.geometrius", None)  # not installed: import fails
    missing = upload("geometrius", "standard")
    assert missing.status_code == 400
    assert missing.get_json()["error"]["message"] == "reading geometrius photos is not available in this installation yet"
    assert missing.get_json()["error"]["code"] == "unsupported_game"
    unknown = upload("equilibrix", "classic").get_json()["error"]  # the rules' words, as `tableref score` says
    assert unknown == {"code": "bad_setup",
                       "message": "unknown Equilibrix variant 'classic' (one of zdrzovacka, autonomie, tri-mety)"}

    fields = {"P 0 0 0": "B", "T 0 0 +": "B", "P 2 0 0": "W"}
    reading = SimpleNamespace(uncertain=[], to_state_json=lambda: {"state": {"game": "equilibrix", "fields": fields}})
    fake = SimpleNamespace(read_equilibrix=lambda image, calibration=None: reading,
                           debug_images=lambda r: {"overlay": np.zeros((4, 4, 3), np.uint8)})
    monkeypatch.setitem(sys.modules, "vision.equilibrix", fake)
    scored = upload("equilibrix", "tri-mety").get_json()["result"]
    assert {p["name"]: p["score"] for p in scored["players"]} == {"Black": 0, "White": 1}  # P 2 0 0 joins (3, 0)
    assert scored["reading"]["state"]["fields"] == fields

    running = Running(tmp_path / "pages").start()
    try:
        page = browser.new_page(viewport=LANDSCAPE)
        page.goto(running.base + "/review")
        assert page.locator("#review-game option").count() == 4
        page.select_option("#review-game", "equilibrix")
        assert page.locator("#review-variant option").all_inner_texts()[0].startswith("ZDRŽOVAČKA")
        page.close()
    finally:
        running.stop()


def test_serve_on_a_taken_port_is_one_line_and_a_json_error(tmp_path, capsys):
    from tableref.cli import main

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--data", str(tmp_path), "--json"]) == 1
        out, err = capsys.readouterr()
        assert json.loads(out)["error"]["code"] == "cannot_listen"
        assert err.count("\n") == 1 and "in use by another program" in err


def test_tokens_page_adds_a_token_and_new_geometrius_games_use_the_catalogue(tmp_path, monkeypatch):
    import sys
    from types import SimpleNamespace

    from rules.geometrius import load_catalogue

    client = create_app(tmp_path).test_client()
    assert "Add a Geometrius token" in client.get("/calibrate/tokens").get_data(as_text=True)
    png = cv2.imencode(".png", np.full((240, 320, 3), 255, np.uint8))[1].tobytes()

    def add(**form):
        return client.post("/api/calibrate/tokens", data=form, content_type="multipart/form-data")

    assert "name the token" in add(photo=(io.BytesIO(png), "t.png")).get_json()["error"]["message"]
    assert "no camera frame" in add(token_id="T09").get_json()["error"]["message"]
    monkeypatch.setitem(sys.modules, "calibration.tokens", None)
    assert add(token_id="T09", photo=(io.BytesIO(png), "t.png")).get_json()["error"]["message"] == \
        "adding tokens is not available in this installation yet"

    catalogue = load_catalogue().to_json()
    added = []

    def add_token(image, token_id, catalogue_path):
        added.append((image.shape, token_id))
        doc = {"tokens": catalogue["tokens"] + [{"id": token_id, "vertices": [[0, 0], [3, 0], [0, 1]]}],
               "cards": [{k: v for k, v in c.items() if k != "matches"} for c in catalogue["cards"]]}
        catalogue_path.write_text(json.dumps(doc))
        return {"id": token_id, "sides": 3}

    monkeypatch.setitem(sys.modules, "calibration.tokens", SimpleNamespace(add_token=add_token))
    answer = add(token_id="T99", photo=(io.BytesIO(png), "t.png")).get_json()
    assert answer == {"id": "T99", "sides": 3} and added == [((240, 320, 3), "T99")]
    assert client.post("/api/session", json={"game": "geometrius"}).status_code == 200
    session = client.application.extensions["tableref"].session
    assert "T99" in session.setup.catalogue.shapes


def test_a_malformed_setup_is_refused_when_the_table_has_its_own_token_catalogue(tmp_path):
    from companion_app import tokens_page

    (tmp_path / tokens_page.CATALOGUE).write_text("{}")
    client = create_app(tmp_path).test_client()
    for settings in (5, ["catalogue"]):
        bad = client.post("/api/session", json={"game": "geometrius", "settings": settings})
        assert bad.status_code == 400 and bad.get_json()["error"]["message"] == "'settings' must be an object"


def test_serve_listens_on_an_ipv6_address():
    from companion_app.server import listen

    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError as e:
        pytest.skip(f"no IPv6 loopback on this machine: {e}")
    with listen("::1", 0) as listener:
        assert listener.family == socket.AF_INET6 and listener.getsockname()[0] == "::1"


def test_a_new_game_is_the_newest_state_whatever_the_old_one_still_hears(tmp_path):
    """Versions grow across a server's sessions, so a late tap or camera frame reaching the
    game just replaced would take a later version than the new game's, and every page would
    draw the closed game over it: a replaced game publishes nothing more."""
    client = create_app(tmp_path).test_client()
    table = client.application.extensions["tableref"]
    inbox = table.broadcast.subscribe()
    assert client.post("/api/session", json={"game": "blokus", "variant": "classic"}).status_code == 200
    old = table.session
    assert client.post("/api/session", json={"game": "blokus", "variant": "classic"}).status_code == 200
    new = table.session
    newest = json.loads(inbox.get(0))
    assert newest["session"]["id"] == new.id != old.id
    old.set_camera("ok", "a frame of the old game")  # in flight when the game changed
    old.correct_cell((0, 0), "B")
    last = json.loads(inbox.get(0) or "null") or newest
    assert last["session"]["id"] == new.id and last["version"] == table.broadcast.version
    assert old.snapshot()["session"]["id"] == old.id  # its state is still there to read


# --- odd input and a damaged data folder (session 14 audit) ---------------------------------

def test_odd_bodies_and_ids_are_refused_in_words_never_as_internal_errors(tmp_path):
    client = create_app(tmp_path).test_client()
    client.post("/api/session", json={"variant": "classic"})
    nested = "[" * 100_000 + "]" * 100_000  # 200 kB: within the upload limit, past Python's recursion
    for url in ("/api/correct", "/api/session", "/calibrate/api/corners"):
        answer = client.post(url, data=nested, content_type="application/json")
        assert answer.status_code in (400, 422), url
        assert answer.get_json()["error"]["code"] != "internal_error", url
    past_sqlite = client.post(f"/api/alerts/{2 ** 70}/ack")
    assert past_sqlite.status_code == 400 and "there is no alert" in past_sqlite.get_json()["error"]["message"]


def test_a_form_with_two_photos_is_refused(tmp_path):
    client = create_app(tmp_path).test_client()
    good = photo_of(["." * 20] * 20)
    for url in ("/api/review", "/api/calibrate/tokens"):
        answer = client.post(url, data={"token_id": "T50", "photo": [(io.BytesIO(good), "a.png"),
                                                                    (io.BytesIO(b"#!/bin/sh\n"), "b.png")]},
                             content_type="multipart/form-data")
        assert answer.get_json()["error"]["message"] == "2 files were sent: send one photo at a time", url
    assert client.get("/api/reviews").get_json()["reviews"] == []


def test_a_double_tap_on_pass_or_take_back_through_the_api_acts_once(tmp_path):
    client = create_app(tmp_path).test_client()
    client.post("/api/session", json={"variant": "classic"})
    shown = client.post("/api/pass", json={"to_move": "B"}).get_json()
    assert shown["to_move"] == "Y"
    second = client.post("/api/pass", json={"to_move": "B"})
    assert second.status_code == 400 and "Blue has passed already" in second.get_json()["error"]["message"]
    assert client.get("/api/state").get_json()["to_move"] == "Y"
    assert client.post("/api/pass").get_json()["to_move"] == "R"  # a page of an older release: no colour sent
    event = shown["history"][0]["event"]
    assert client.post("/api/take-back", json={"index": 0, "event": event}).status_code == 200
    again = client.post("/api/take-back", json={"index": 0, "event": event})
    assert again.status_code == 400 and len(client.get("/api/state").get_json()["history"]) == 1


def damage(data_dir: Path, sql: str) -> None:
    """Change the saved-games file behind the app's back (a disk error, a hand-edit)."""
    with sqlite3.connect(data_dir / FILENAME) as conn:
        conn.execute(sql)


def test_a_damaged_open_game_is_reported_and_the_server_still_starts(tmp_path, capsys):
    app = create_app(tmp_path)
    client = app.test_client()
    client.post("/api/session", json={"variant": "classic"})
    client.post("/api/pass", json={"to_move": "B"})
    app.extensions["tableref"].stop()
    damage(tmp_path, "UPDATE events SET payload = '{\"colour\": ' WHERE id = 1")

    restarted = create_app(tmp_path)  # before: a JSONDecodeError, and no server at all
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the open game could not be resumed" in err and "event 1 of game 1" in err
    table = restarted.extensions["tableref"]
    assert table.session is None and "could not be resumed" in table.notice
    page = restarted.test_client().get("/setup")
    assert page.status_code == 200 and "could not be resumed" in page.get_data(as_text=True)
    assert restarted.test_client().get("/api/reviews").status_code == 200
    with sqlite3.connect(tmp_path / FILENAME) as conn:  # the record is still there, as it was
        assert conn.execute("SELECT status, (SELECT count(*) FROM events) FROM sessions").fetchone() == ("open", 1)
    restarted.extensions["tableref"].stop()

    class Idle:  # a camera that sends nothing yet
        def frames(self, report):
            return iter(())

        def close(self):
            pass

    watched = create_app(tmp_path, source=Idle())  # a camera starts no game over the one kept
    assert watched.extensions["tableref"].session is None
    watched.extensions["tableref"].stop()
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        assert conn.execute("SELECT id, status FROM sessions").fetchall() == [(1, "open")]


def test_a_damaged_review_is_named_and_the_others_stay_listed(tmp_path):
    app = create_app(tmp_path)
    store = app.extensions["tableref"].store
    for i in range(3):
        store.create_review(ReviewRow(f"{i:016x}", "blokus", None, i, i, {}, [], {}, [], {}), {})
    damage(tmp_path, "UPDATE reviews SET state = '{\"board\": [' WHERE id = '0000000000000001'")
    damage(tmp_path, "UPDATE reviews SET game = 'chess' WHERE id = '0000000000000002'")
    client = app.test_client()
    listed = client.get("/api/reviews")
    assert listed.status_code == 200 and [r["id"] for r in listed.get_json()["reviews"]][-1] == "0000000000000000"
    # the damaged one is listed as such, not dropped from the user's list unexplained
    assert [(r["id"], r["damaged"]) for r in listed.get_json()["reviews"]][1:] == [
        ("0000000000000001", True), ("0000000000000000", False)]
    assert client.get("/review").status_code == 200
    for review_id, words in (("0000000000000001", "is damaged"), ("0000000000000002", "does not know")):
        answer = client.get(f"/api/review/{review_id}")
        assert answer.status_code == 500 and answer.get_json()["error"]["code"] == "data_damaged"
        assert words in answer.get_json()["error"]["message"]


def test_serve_usage_errors_exit_2_and_a_missing_camera_is_one_line(tmp_path, capfd):
    from tableref.cli import main

    for args in (["--port", "99999"], ["--port", "-1"], ["--camera", "-1"], ["--camera", "one"]):
        with pytest.raises(SystemExit) as stopped:
            main(["serve", "--data", str(tmp_path), *args])
        assert stopped.value.code == 2, args
    capfd.readouterr()
    with socket.create_server(("127.0.0.1", 0)) as free:
        port = free.getsockname()[1]
    # before: the server started and tried camera 99 every few seconds, two OpenCV lines each time
    assert main(["serve", "--camera", "99", "--port", str(port), "--data", str(tmp_path), "--json"]) == 1
    out, err = capfd.readouterr()  # fd-level: OpenCV writes past Python's sys.stderr
    assert json.loads(out)["error"]["code"] == "unreadable_camera"
    assert err.count("\n") == 1 and "camera 99 sends no frames" in err


def test_a_second_server_on_one_data_folder_is_refused(tmp_path, capsys):
    from companion_app.server import claim_data_folder
    from tableref.cli import main

    with claim_data_folder(tmp_path):  # the first server
        assert main(["serve", "--port", "0", "--data", str(tmp_path), "--json"]) == 1
        out, err = capsys.readouterr()
        assert json.loads(out)["error"]["code"] == "data_folder"
        assert err.count("\n") == 1 and "in use by another tableref serve" in err
    assert not (tmp_path / FILENAME).exists()  # refused before the saved games were touched


def test_serve_names_the_port_it_got_and_answers_only_its_own_name(tmp_path):
    """``--port 0`` printed ":0" (the system's choice unknown to the user); and the server on
    127.0.0.1 answered any Host, so a page elsewhere that rebinds its name to 127.0.0.1 could
    drive it past the same-origin check (it sends its own name as Origin too)."""
    import http.client
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    child = subprocess.Popen([sys.executable, "-c", "import sys; from tableref.cli import main; sys.exit(main())",
                              "serve", "--port", "0", "--data", str(tmp_path)],
                             cwd=root, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stderr.readline()
        assert "http://127.0.0.1:" in line and ":0/" not in line, line
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])

        def status(host: str, method: str = "GET", url: str = "/api/reviews") -> int:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            body = json.dumps({"variant": "classic"}) if method == "POST" else None
            connection.request(method, url, body=body, headers={
                "Host": host, "Origin": f"http://{host}", "Content-Type": "application/json"})
            answer = connection.getresponse().status
            connection.close()
            return answer

        assert status(f"127.0.0.1:{port}") == 200 and status(f"localhost:{port}") == 200
        assert status(f"rebound.example:{port}") == 400
        assert status(f"rebound.example:{port}", "POST", "/api/session") == 400
        assert status(f"127.0.0.1:{port}", "GET", "/api/state") == 400  # no game was started
    finally:
        child.terminate()
        child.wait(20)


def test_loopback_answers_its_own_names_ipv6_and_any_loopback_address_included(tmp_path):
    from companion_app.server import guard_hosts

    for host, own in (("127.0.0.1", "127.0.0.1:8000"), ("::1", "[::1]:8000"), ("127.0.0.2", "127.0.0.2:8000"),
                      ("localhost", "localhost:8000")):
        app = create_app(tmp_path / host.replace(":", "_"))
        guard_hosts(app, host)
        client = app.test_client()
        assert client.get("/api/reviews", headers={"Host": own}).status_code == 200, host
        assert client.get("/api/reviews", headers={"Host": "[::1]"}).status_code == 200, host
        assert client.get("/api/reviews", headers={"Host": "rebound.example:8000"}).status_code == 400, host
        app.extensions["tableref"].stop()
    wide = create_app(tmp_path / "wide")
    guard_hosts(wide, "0.0.0.0")  # the tablet names the server by its address on the network
    assert wide.test_client().get("/api/reviews", headers={"Host": "192.168.1.20:8000"}).status_code == 200
    wide.extensions["tableref"].stop()


def test_the_demo_plays_in_a_folder_of_its_own(tmp_path, monkeypatch):
    from companion_app.server import data_folder_of

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_folder_of(argparse.Namespace(data=None, demo=True)) == tmp_path / "tableref" / "demo"
    assert data_folder_of(argparse.Namespace(data=None, demo=False)) == tmp_path / "tableref"
    assert data_folder_of(argparse.Namespace(data=str(tmp_path / "x"), demo=True)) == tmp_path / "x"


def test_a_take_back_confirmed_after_another_tablet_took_that_move_back_is_refused(server, browser):
    """The dialog names the move as it was when it opened; its confirmation carries that move's
    event, not the event of whichever move holds its number by then."""
    first = setup_page(browser, server.base, "blokus")
    start_game(first)
    session = server.session
    session.set_camera("ok", "camera 0: watching the board")
    for t, rows in enumerate(boards()[:3]):
        session.observe(rows, [], float(t))
    first.wait_for_selector("#history li[data-index='2']")
    second = browser.new_page(viewport=LANDSCAPE)
    second.set_default_timeout(20000)
    second.goto(server.base + "/live")
    second.wait_for_selector("#history li[data-index='2']")
    second.click("#history li[data-index='1']")
    second.wait_for_selector("#takeback[open]")
    first.click("#history li[data-index='1']")
    first.wait_for_selector("#takeback[open]")
    first.click("#takeback button[value=yes]")
    second.wait_for_selector("#history li[data-index='2']", state="detached")  # the first tablet's take-back arrived
    second.click("#takeback button[value=yes]")
    second.wait_for_selector("#toast[data-kind=error]")
    assert len(server.session.snapshot()["history"]) == 2
    first.close()
    second.close()


def test_a_double_tap_on_the_pass_button_passes_one_colour(server, browser):
    page = browser.new_page(viewport=LANDSCAPE)
    page.set_default_timeout(20000)
    page.goto(server.base + "/setup")
    page.wait_for_selector("#players input")
    start_game(page)
    page.dblclick("#pass")  # both taps leave before the first answer: both say Blue is to move
    page.wait_for_selector("#toast:has-text('has passed already')")
    assert [h["colour"] for h in server.session.snapshot()["history"]] == ["B"]
    assert server.session.snapshot()["to_move"] == "Y"
    page.close()


def test_a_setup_or_tap_body_far_past_any_game_is_refused_and_not_stored(tmp_path):
    client = create_app(tmp_path).test_client()
    seats = (("x" * 2_000_000, "B"), ("Bo", "Y"), ("Cy", "R"), ("Di", "G"))
    players = [{"name": name, "colours": [c]} for name, c in seats]
    answer = client.post("/api/session", json={"variant": "classic", "players": players})
    assert answer.status_code == 400 and "far larger than a setup" in answer.get_json()["error"]["message"]
    assert client.get("/api/state").status_code == 400  # no game was started
    assert (tmp_path / FILENAME).stat().st_size < 1_000_000
    catalogue = json.loads((Path(__file__).resolve().parent.parent / "rules/data/geometrius-catalogue.json")
                           .read_text())
    ok = client.post("/api/session", json={"game": "geometrius", "settings": {"catalogue": catalogue}, "players": [
        {"name": "Ann", "colours": ["red"]}, {"name": "Bo", "colours": ["blue"]}]})
    assert ok.status_code == 200  # a setup with a whole catalogue is far within


def test_geometrius_seats_and_session_take_the_colour_names_setting(tmp_path):
    """The session setup API takes a Geometrius table's names for its chips (the setup page
    has no field for them): default seats and the session's players use them."""
    client = create_app(tmp_path).test_client()
    names = ["red", "blue", "green", "yellow", "orange", "white"]
    doc = {"game": "geometrius", "count": 5, "settings": {"colour_names": names}}
    seats = client.post("/api/seats", json=doc).get_json()["seats"]
    assert seats[-1] == {"name": "Orange", "colours": ["orange"]}
    state = client.post("/api/session", json={**doc, "players": seats}).get_json()
    assert [p["colours"] for p in state["scores"]["players"]] == [[c] for c in names[:5]]
    bad = client.post("/api/seats", json={**doc, "settings": {"colour_names": names[:5]}})
    assert bad.status_code == 400 and "not 5" in bad.get_json()["error"]["message"]


def geometrius_live(server, browser, names: list[str], players: list[dict], viewport: dict):
    """The live page of a Geometrius game whose table names its chips ``names``."""
    server.app.extensions["tableref"].start_session(
        {"game": "geometrius", "players": players, "settings": {"colour_names": names}})
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(20000)
    page.goto(server.base + "/live")
    return page


def test_renamed_geometrius_chips_are_drawn_in_their_physical_colour(server, browser):
    """A table calling its purple chips orange: the live page names them Orange and draws
    them purple (the chip the camera saw), in the field and in the scores."""
    from tests.test_session_geometrius import START, camera, chips

    page = geometrius_live(server, browser, ["red", "blue", "green", "yellow", "orange", "white"],
                           [{"name": "Ann", "colours": ["orange"]}, {"name": "Bob", "colours": ["red"]}], LANDSCAPE)
    page.wait_for_selector("#conn[data-state=live]")
    server.session.observe(camera(START), [], 0.0)
    server.session.observe(camera(chips(START, Q01="purple")), [], 1.0)
    page.wait_for_selector("#history li[data-index='0']")
    assert page.locator('#board circle.stone[data-colour="purple"]').count() == 1
    ann = page.locator('#scores tr[data-player="Ann"] .chip')
    assert ann.get_attribute("data-colour") == "purple" and ann.get_attribute("title") == "Orange"
    page.close()


def test_the_setup_s_chip_names_are_checked_by_the_server_and_kept_with_the_game(tmp_path):
    """The setup page's six chip names, as ``POST /api/session`` gets them: names the rules
    refuse (a wrong count, an empty name, two alike, one too long or padded with a space) are
    refused in words with the code ``tableref check`` gives the same record (``bad_setup``) and
    nothing is stored; good names, markup or not, are stored as typed and a restart keeps them.
    ``/api/seats`` says what each seat's colour is called."""
    client = create_app(tmp_path).test_client()
    names = ["red", "blue", "green", "yellow", "<i>Mauve</i>", "white"]
    players = [{"name": "Ann", "colours": ["<i>Mauve</i>"]}, {"name": "Bob", "colours": ["red"]}]
    refused = [(names[:5], "not 5"), (names[:5] + [""], "'' is no colour name"),
               (names[:5] + ["RED"], "two chip colours the name 'red'"),
               (names[:5] + ["w" * 21], "longer than 20 characters"),
               (names[:5] + ["white "], "'white ' starts or ends with a space")]
    for bad, words in refused:
        answer = client.post("/api/session", json={"game": "geometrius", "players": players,
                                                   "settings": {"colour_names": bad}})
        error = answer.get_json()["error"]
        assert answer.status_code == 400 and error["code"] == "bad_setup" and words in error["message"], bad
        assert "\n" not in error["message"]
        seats = client.post("/api/seats", json={"game": "geometrius", "settings": {"colour_names": bad}})
        assert seats.status_code == 400 and seats.get_json()["error"] == error
    assert client.get("/api/state").status_code == 400  # no game was started
    with sqlite3.connect(tmp_path / FILENAME) as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (0,)

    seats = client.post("/api/seats", json={"game": "geometrius", "count": 5,
                                            "settings": {"colour_names": names}}).get_json()
    assert seats["colours"][4] == ["<i>Mauve</i>", "<i>Mauve</i>"] and seats["colours"][0] == ["red", "Red"]
    assert seats["seats"][4] == {"name": "<i>Mauve</i>", "colours": ["<i>Mauve</i>"]}
    assert client.post("/api/seats", json={"game": "blokus"}).get_json()["colours"][0] == ["B", "Blue"]
    started = client.post("/api/session", json={"game": "geometrius", "players": players,
                                                "settings": {"colour_names": names}})
    assert started.status_code == 200
    client.application.extensions["tableref"].stop()
    state = create_app(tmp_path).test_client().get("/api/state").get_json()  # a restart: the game resumed
    assert [p["colours"] for p in state["players"]] == [["<i>Mauve</i>"], ["red"]]
    assert state["layout"]["pickable"] == names and state["layout"]["paint"]["<i>Mauve</i>"] == "purple"


def test_the_setup_page_names_the_chips_and_the_live_page_uses_the_names(server, browser):
    """The New game page offers the six chip names, prefilled with the defaults. A name the
    rules refuse is said in words under the form and the game cannot start; the names typed
    become the seats' colours, and the live page's chip picker and scores show them as text
    (markup in a name is shown, never run), each chip drawn in its physical colour."""
    from rules import geometrius
    from tests.test_session_geometrius import START, camera, chips

    page = setup_page(browser, server.base, "geometrius")
    names = page.locator("input[data-chip]")
    assert [names.nth(i).input_value() for i in range(names.count())] == list(geometrius.COLOURS)

    def rename(i, name):
        names.nth(i).fill(name)
        names.nth(i).dispatch_event("change")

    rename(0, "Blue")
    page.wait_for_selector("#setup-error:has-text('two chip colours the name')")
    assert page.locator("button[type=submit]").is_disabled()
    rename(0, "Rouge")
    rename(4, " <i>Mauve</i> ")  # the page trims what a tablet keyboard adds
    page.wait_for_selector("#setup-error", state="hidden")
    page.select_option("#count", "5")
    page.wait_for_selector("#players .player:nth-child(5)")
    fifth = page.locator("#players .player").nth(4).locator("select.colour")
    assert fifth.locator("option:checked").inner_text() == "<i>Mauve</i>"
    assert fifth.get_attribute("data-colour") == "purple"
    start_game(page)
    assert [p["colours"] for p in server.session.snapshot()["players"]] == [
        ["Rouge"], ["blue"], ["green"], ["yellow"], ["<i>Mauve</i>"]]

    server.session.observe(camera(START), [], 0.0)
    server.session.observe(camera(chips(START, Q01="red")), [], 1.0)
    page.wait_for_selector("#history li[data-index='0']")
    mauve = page.locator('#scores tr[data-player="<i>Mauve</i>"] .chip')
    assert mauve.get_attribute("title") == "<i>Mauve</i>" and mauve.get_attribute("data-colour") == "purple"
    assert page.locator('#scores tr[data-player="Rouge"] .chip').get_attribute("data-colour") == "red"
    page.click('#board rect.token-face[data-shape="Q01"]')
    page.wait_for_selector("#tokenfix[open]")
    top = page.locator('#fix-tops [data-top="<i>Mauve</i>"]')
    assert top.inner_text() == "<i>Mauve</i>" and top.get_attribute("data-colour") == "purple"
    assert page.locator("#fix-tops i, #scores i").count() == 0  # the markup is text, not elements
    page.close()


@pytest.mark.parametrize("text", ["{not json", "{}"])
def test_a_broken_table_catalogue_is_refused_as_calibrate_tokens_refuses_it(tmp_path, text):
    """The table's token catalogue (the file the Tokens page and ``tableref calibrate tokens``
    extend) broken: a new Geometrius game is refused with ``catalogue_invalid``, the file named,
    as adding a token to that file is; before, a file that was not JSON was ``bad_request``
    and a JSON one that was no catalogue the setup's ``bad_setup`` ("the record's catalogue")."""
    from calibration import CalibrationError
    from calibration.tokens import add_token
    from companion_app import tokens_page

    path = tmp_path / tokens_page.CATALOGUE
    path.write_text(text)
    client = create_app(tmp_path).test_client()
    answer = client.post("/api/session", json={"game": "geometrius"})
    error = answer.get_json()["error"]
    assert answer.status_code == 400 and error["code"] == "catalogue_invalid" and str(path) in error["message"]
    assert client.get("/api/state").status_code == 400  # no game was started
    with pytest.raises(CalibrationError) as calibrate:
        add_token(np.zeros((8, 8, 3), np.uint8), "T99", path)
    assert calibrate.value.code == error["code"]
