"""The live page for every player at the table, in a real browser: a board big enough to tap
on a tablet held upright and on a phone, seats told apart by more than hue, the keyboard's
place always seen, and a finished game's tiebreak said in words (session 19's walk through
the pages as players would use them); and what that walk left open, mended in session 20: a
magnifier for squares too small for a finger, taps at least 44 px tall for a finger, the board
reached by keyboard, alerts that never push the turn line away, and variants named short."""
from rules.placement import Move
from tests.test_pages import (  # noqa: F401 (fixtures)
    LANDSCAPE, PAGES, boards, browser, geometrius_live, server, setup_page, shot, start_game)
from tests.test_session import SCRIPT

PHONE = {"width": 390, "height": 844}
UPRIGHT_TABLET = {"width": 768, "height": 1024}
PAGE_HEIGHT = "[document.documentElement.scrollHeight, document.documentElement.clientHeight]"


def blokus_game(browser, base, names=()):
    """A Blokus game started on the setup page (``names`` typed into its first seats)."""
    page = setup_page(browser, base, "blokus")
    for i, name in enumerate(names):
        page.locator("#players input").nth(i).fill(name)
    start_game(page)
    return page


def test_upright_the_board_fills_its_square_and_the_legend_goes_under_it(server, browser):
    """Upright, the width limits the board: the legend under it once took its lines out of the
    board's square, drawing the 20 x 20 board a fifth to a third smaller (12 px squares on a
    phone, 14 px on a 768-wide tablet). The board now fills its square, and the upright tablet
    still shows the whole page without scrolling."""
    blokus_game(browser, server.base).close()
    for screen, viewport in (("phone", PHONE), ("upright-tablet", UPRIGHT_TABLET)):
        page = browser.new_page(viewport=viewport)
        page.set_default_timeout(20000)
        page.goto(server.base + "/live")
        page.wait_for_selector("#conn[data-state=live]")
        drawn, square = page.locator("#board .frame").bounding_box(), page.locator("#board").bounding_box()
        assert drawn["width"] >= 0.95 * square["width"], f"the board is drawn smaller than its square on a {screen}"
        assert abs(square["height"] - square["width"]) < 2
        legend = page.locator("#live-legend").bounding_box()
        assert legend["y"] >= square["y"] + square["height"]  # under the board, not over it
        if screen == "phone":
            assert drawn["width"] >= 0.9 * viewport["width"]
        else:
            scroll_height, height = page.evaluate(PAGE_HEIGHT)
            assert scroll_height <= height, "the upright tablet's page scrolls"
        shot(page, f"players-live-{screen}")
        page.close()


def test_each_seat_s_chips_carry_the_colour_s_letter(server, browser):
    """Players named "Ann" and "Bo" in a two-player game: which colours are whose was shown by
    hue alone in the scores (red and green are one colour to many eyes). Each chip now carries
    its colour's letter, in the scores, the turn and the history, as generated content: the
    words beside it read as before."""
    page = blokus_game(browser, server.base, ["Ann", "Bo"])
    page.close()
    page = browser.new_page(viewport=PHONE)
    page.set_default_timeout(20000)
    page.goto(server.base + "/live")
    page.wait_for_selector("#conn[data-state=live]")
    server.session.observe(boards()[0], [], 0.0)
    page.wait_for_selector("#history li[data-index='0']")
    letters = "els => els.map((e) => getComputedStyle(e, '::before').content.replaceAll('\"', ''))"
    for player in server.session.snapshot()["players"]:
        row = page.locator(f'#scores tr[data-player="{player["name"]}"]')
        assert row.locator(".chip").evaluate_all(letters) == player["colours"]
    assert page.locator("#turn .chip").evaluate_all(letters) == ["Y"]
    assert page.locator("#turn").inner_text().strip() == "Yellow to play"
    assert page.locator("#history li .chip").evaluate_all(letters) == ["B"]
    shot(page, "players-chip-letters")
    page.close()


def test_a_geometrius_chip_shows_its_name_s_initial_unless_another_name_shares_it(server, browser):
    """A table calling its chips by its own names: a chip's letter is its name's initial, and
    none where two names start alike (a shared letter would tell two seats apart wrongly)."""
    names = ["rose", "blue", "green", "yellow", "ruby", "white"]
    players = [{"name": "Ann", "colours": ["rose"]}, {"name": "Bo", "colours": ["ruby"]},
               {"name": "Cy", "colours": ["green"]}]
    page = geometrius_live(server, browser, names, players, PHONE)
    page.wait_for_selector("#scores tbody tr")
    letters = {p: page.locator(f'#scores tr[data-player="{p}"] .chip').get_attribute("data-letter")
               for p in ("Ann", "Bo", "Cy")}
    assert letters == {"Ann": None, "Bo": None, "Cy": "G"}
    page.close()


def test_the_keyboard_s_place_is_ringed_on_a_move_and_a_button(server, browser):
    """Tabbing to a move in the history (Enter takes it back) showed only a faint change of
    background; a button only the dark page's thin default ring. Both now get a clear ring."""
    page = blokus_game(browser, server.base)
    server.session.observe(boards()[0], [], 0.0)
    page.wait_for_selector("#history li[data-index='0']")
    ring = "e => [getComputedStyle(e).outlineStyle, parseFloat(getComputedStyle(e).outlineWidth)]"
    for target in ("#pass", "#history li[data-index='0']"):
        for _ in range(40):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement === document.querySelector(\"{target}\")"):
                break
        else:
            raise AssertionError(f"{target} is not reached by the keyboard")
        style, width = page.locator(target).evaluate(ring)
        assert style != "none" and width >= 2, f"{target} focused shows no ring"
    shot(page, "players-focus")
    page.close()


def test_a_finished_game_won_on_a_tiebreak_says_why_under_the_scores(server, browser):
    """TŘI METY: each colour joins two markers of its own (2 points each), White one of Black's
    too. The page said only "Game over: White wins" over two scores of 2; the scores' tiebreak
    now stands under them once the game is over, and not during it."""
    from rules import equilibrix, flower

    page = setup_page(browser, server.base, "equilibrix")
    page.select_option("#variant", "tri-mety")
    start_game(page)
    board = flower.board()
    field = lambda node, skip=None: next(flower.field_id(f) for f in flower.fields_at(node)
                                         if f in board.index and flower.field_id(f) != skip)
    own = {c: [n for n, m in equilibrix.DEFAULT_MARKERS.items() if m == c][:2] for c in "BW"}
    session, seen = server.session, {}
    for t, (colour, node) in enumerate([("B", 0), ("W", 0), ("B", 1), ("W", 1)]):
        seen[field(own[colour][node])] = colour
        session.observe(dict(seen), [], float(t))
    session.declare_pass()  # Black
    seen[field(own["B"][1], skip=field(own["B"][1]))] = "W"  # White beside Black's second marker
    session.observe(dict(seen), [], 5.0)
    page.wait_for_selector("#history li[data-index='5']")
    assert page.locator("#tiebreak").is_hidden()  # a tie during the game decides nothing yet
    session.declare_pass()
    session.declare_pass()
    page.wait_for_selector("#turn:has-text('Game over')")
    assert page.locator("#turn").inner_text().strip() == "Game over: White wins"
    assert [page.locator(f'#scores tr[data-player="{p}"] .score').inner_text() for p in ("White", "Black")] == ["2", "2"]
    words = " ".join(page.locator("#tiebreak li").all_inner_texts())
    assert "White and Black tie on 2 points" in words and "TŘI METY" in words
    shot(page, "players-tiebreak")
    page.close()


def test_taking_back_a_pass_does_not_ask_to_lift_a_piece(server, browser):
    """The take-back sheet told the table to lift the piece off the board for a pass too, which
    laid none; a move's sheet still says it."""
    page = blokus_game(browser, server.base)
    server.session.observe(boards()[0], [], 0.0)
    page.wait_for_selector("#history li[data-index='0']")
    page.click("#pass")
    page.wait_for_selector("#history li[data-index='1']")
    for index, lift in ((1, False), (0, True)):
        page.click(f"#history li[data-index='{index}']")
        page.wait_for_selector("#takeback[open]")
        hint = page.locator("#takeback form > p").inner_text()
        assert ("Lift the piece" in hint) is lift and "judged again" in hint
        if not lift:
            assert "Nothing to lift" in hint and "Yellow passes" in page.locator("#takeback h2").inner_text()
        page.click("#takeback button[value='']")
        page.wait_for_selector("#takeback[open]", state="detached")
    page.close()


# Whether each element is the one a tap on its middle reaches (brought into view first: what
# lies above it on the page, a saved game's panel, may push it below a phone's screen).
ON_TOP = """els => els.map((e) => { e.scrollIntoView({ block: "center" }); const r = e.getBoundingClientRect();
    return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === e; })"""


def test_on_a_phone_a_two_colour_seat_shows_both_its_colours(server, browser):
    """Blokus for two and Gemblo's two players with two colours each, set up on a phone: the
    name field drew over each seat's second colour, which could be neither seen nor changed
    (the game then started with a colour the player never saw). The name now goes under the
    colours."""
    page = browser.new_page(viewport=PHONE)
    page.set_default_timeout(20000)
    page.goto(server.base + "/setup")
    for game, variant in (("blokus", "two-player"), ("gemblo", "2p-double")):
        page.select_option("#game", game)
        page.select_option("#variant", variant)
        # two seats of two colours each (the game's default seats, drawn first, may have 4 of one)
        page.wait_for_function("document.querySelectorAll('#players select.colour').length === 4"
                               " && document.querySelectorAll('#players input').length === 2")
        colours = page.locator("#players select.colour")
        assert colours.evaluate_all(ON_TOP) == [True] * 4, f"a colour of a {game} seat is covered"
        assert page.locator("#players input").evaluate_all(ON_TOP) == [True] * 2
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    colours.nth(1).click()  # a tap reaches the second colour of the first seat
    shot(page, "players-setup-two-colours-phone")
    page.close()


# --- session 20: the walk's open list ---------------------------------------------------------

def finger_page(browser, base, viewport, path="/live"):
    """A page on a touch screen (the browser then says ``pointer: coarse``, as a phone does)."""
    context = browser.new_context(viewport=viewport, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(base + path)
    return page


# The cells drawn wholly inside the magnifier's view, with their drawn size (the shorter side).
IN_VIEW = """() => { const v = document.getElementById("magnified").getBoundingClientRect();
    return [...document.querySelectorAll("#magnified .cell")].map((e) => [e.dataset.cell, e.getBoundingClientRect()])
      .filter(([, r]) => r.x >= v.x - 1 && r.right <= v.right + 1 && r.y >= v.y - 1 && r.bottom <= v.bottom + 1)
      .map(([k, r]) => [k, Math.min(r.width, r.height)]); }"""


def magnified_on_a_phone(server, browser):
    """A Blokus game's first board on a phone's live page, square 5,5 tapped: the magnifier open."""
    blokus_game(browser, server.base).close()
    server.session.observe(boards()[0], [], 0.0)
    page = finger_page(browser, server.base, PHONE)
    page.wait_for_selector('#board .cell[data-cell="1,1"][data-colour="B"]')
    page.tap('#board .cell[data-cell="5,5"]')
    page.wait_for_selector("#magnifier[open]")
    return page


def test_a_finger_on_squares_too_small_to_tap_gets_a_magnifier_first(server, browser):
    """A 20 x 20 board on a phone draws 16 px squares, and a fingertip covers two or three: the
    first tap opens the squares round it at 44 px and more, and a tap there corrects that
    square; Close goes back to the board. Where a finger has 28 px and more (a large tablet),
    one tap still opens the correction."""
    page = magnified_on_a_phone(server, browser)
    assert not page.locator("#picker").evaluate("e => e.open")
    assert page.locator("#magnifier h2").inner_text() == "Tap the cell to correct"
    cells = dict(page.evaluate(IN_VIEW))
    assert "5,5" in cells and len(cells) >= 25 and min(cells.values()) >= 44, cells
    # the board's own drawing: the blue piece in the corner shows in a corner's magnifier
    page.click("#magnifier button[value='']")
    page.wait_for_selector("#magnifier[open]", state="detached")
    page.tap('#board .cell[data-cell="0,0"]')
    page.wait_for_selector("#magnifier[open]")
    assert page.locator('#magnified .cell[data-cell="1,1"]').get_attribute("data-colour") == "B"
    assert "0,0" in dict(page.evaluate(IN_VIEW))  # kept inside the board: the corner is in view
    shot(page, "players-magnifier-phone")
    page.tap('#magnified .cell[data-cell="2,3"]')
    page.wait_for_selector("#picker[open]")
    assert page.locator("#picker-cell").inner_text() == "row 3, column 4"
    assert not page.locator("#magnifier").evaluate("e => e.open")
    page.click('#picker .choice[data-colour="R"]')
    page.wait_for_selector('#board .cell[data-cell="2,3"][data-colour="R"]')
    page.context.close()

    page = finger_page(browser, server.base, {"width": 1920, "height": 1080})
    page.wait_for_selector("#conn[data-state=live]")
    assert page.locator('#board .cell[data-cell="5,5"]').bounding_box()["width"] >= 28
    page.tap('#board .cell[data-cell="5,5"]')
    page.wait_for_selector("#picker[open]")
    assert not page.locator("#magnifier").evaluate("e => e.open")
    page.context.close()


def test_a_camera_move_after_a_tap_leaves_a_phone_s_page_where_it_was_scrolled(server, browser):
    """A tap focused the board's svg, and the next snapshot then moved the focus to the board's
    tab stop, scrolling a phone's page back up to the board under the player's eyes (session
    20's review: scrollY 297 -> 0)."""
    page = magnified_on_a_phone(server, browser)
    page.click("#magnifier button[value='']")
    page.wait_for_selector("#magnifier[open]", state="detached")
    scrolled = page.evaluate("() => { window.scrollTo(0, document.documentElement.scrollHeight); return window.scrollY; }")
    assert scrolled > 100
    server.session.observe(boards()[1], [], 1.0)
    page.wait_for_selector('#board .cell[data-cell="0,18"][data-colour="Y"]')
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") >= scrolled - 60  # the page may end a little higher, never at the board
    page.context.close()


def test_a_mouse_click_on_the_board_leaves_the_space_bar_and_arrows_to_the_page(server, browser):
    """The board's keys answered whenever its svg had the focus, so a mouse user who clicked a
    cell lost the page's scrolling to the arrows and had the space bar open the sheet again."""
    page = blokus_game(browser, server.base)
    server.session.observe(boards()[0], [], 0.0)
    page.wait_for_selector('#board .cell[data-cell="1,1"][data-colour="B"]')
    page.click('#board .cell[data-cell="10,10"]')
    page.wait_for_selector("#picker[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#picker[open]", state="detached")
    page.keyboard.press(" ")
    page.wait_for_timeout(300)
    assert not page.locator("#picker").evaluate("e => e.open"), "the space bar reopened the sheet"
    page.close()


def test_on_a_phone_the_flower_s_fields_are_magnified_and_geometrius_tokens_are_not(server, browser):
    """The flower's curved triangles are drawn 14 px wide on a phone, a petal twice that: its
    fields are magnified as the squares are. A Geometrius token is some 60 px: one tap opens its
    sheet."""
    from tests.test_session_geometrius import START, camera

    server.app.extensions["tableref"].start_session({"game": "equilibrix", "variant": "zdrzovacka"})
    page = finger_page(browser, server.base, PHONE)
    page.wait_for_selector("#board .cell.field")
    page.locator("#board .cell.field").nth(40).tap()
    page.wait_for_selector("#magnifier[open]")
    assert page.locator("#magnifier h2").inner_text() == "Tap the field to correct"
    fields = dict(page.evaluate(IN_VIEW))
    assert fields and min(fields.values()) >= 44, fields
    field = max(fields, key=fields.get)  # the largest in view: a tap on its middle is on it
    page.tap(f'#magnified .cell[data-cell="{field}"]')
    page.wait_for_selector("#picker[open]")
    assert page.locator("#picker-cell").inner_text() == f"field {field}"
    page.context.close()

    geometrius_live(server, browser, ["red", "blue", "green", "yellow", "purple", "white"],
                    [{"name": "Ann", "colours": ["red"]}, {"name": "Bo", "colours": ["blue"]}], PHONE).close()
    server.session.observe(camera(START), [], 0.0)
    page = finger_page(browser, server.base, PHONE)
    page.tap('#board rect.token-face[data-cell="1,1"]')
    page.wait_for_selector("#tokenfix[open]")
    assert not page.locator("#magnifier").evaluate("e => e.open")
    page.context.close()


# Each link and button shown (not in a closed sheet) with its height as laid out (offsetHeight:
# an alert's arrival animation scales it for a moment, which a drawn box would count).
TAPPED = """() => [...document.querySelectorAll("a[href], button")]
    .filter((e) => e.getClientRects().length && !e.closest("dialog"))
    .map((e) => [e.textContent.trim().slice(0, 30), e.offsetHeight])"""


def test_every_link_and_button_is_44_px_tall_for_a_finger_and_24_for_a_mouse(server, browser):
    """The top bar's links were 27 px tall on a phone and the exports 21: a finger needs 44 px,
    a mouse 24 (WCAG 2.2 2.5.8). The bar gives up its own padding for it, so the upright
    tablet's board keeps its size and the page, an alert showing, still fits the screen."""
    blokus_game(browser, server.base).close()
    for t, rows in enumerate(boards()):
        server.session.observe(rows, [], float(t))
    for viewport in (PHONE, UPRIGHT_TABLET):
        for finger, least in ((True, 44), (False, 24)):
            context = browser.new_context(viewport=viewport, has_touch=finger)
            page = context.new_page()
            page.set_default_timeout(20000)
            for path in PAGES:
                page.goto(server.base + path)
                page.wait_for_load_state()
                if path == "/live":
                    page.wait_for_selector("#history li[data-index='0']")
                    moves = page.locator("#history li").evaluate_all("els => els.map((e) => e.offsetHeight)")
                    assert min(moves) >= least
                small = [(text, round(h)) for text, h in page.evaluate(TAPPED) if h < least - 0.5]
                assert not small, f"{path} at {viewport['width']} px ({'finger' if finger else 'mouse'}): {small}"
            if viewport == UPRIGHT_TABLET:
                page.goto(server.base + "/live")
                page.wait_for_selector("#conn[data-state=live]")
                scroll_height, height = page.evaluate(PAGE_HEIGHT)
                assert scroll_height <= height, "the upright tablet's page scrolls"
                square = page.locator("#board").bounding_box()["width"]
                assert square >= 380 - 1, f"the upright board shrank to {square} px"  # session 19's size
            context.close()


def test_the_board_is_one_tab_stop_and_its_cells_are_reached_by_the_arrows(server, browser):
    """A keyboard could not reach a cell to correct it. The board is one tab stop: the arrows
    move a ringed cell, named with what it holds; Enter or Space opens the correction a tap
    opens, and Escape closes it with the focus back on the cell."""
    page = blokus_game(browser, server.base)
    server.session.observe(boards()[0], [], 0.0)
    server.session.observe(boards()[0], [(3, 3)], 1.0)  # the camera doubts an empty square
    page.wait_for_selector('#board .cell[data-cell="1,1"][data-colour="B"]')
    focused = "document.activeElement.dataset.cell || null"
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate(focused):
            break
    else:
        raise AssertionError("no cell of the board is reached by the keyboard")
    assert page.evaluate(focused) == "0,0"
    page.keyboard.press("Tab")
    assert page.evaluate(focused) is None, "the board is more than one tab stop"
    page.keyboard.press("Shift+Tab")
    for key in ("ArrowDown", "ArrowRight", "ArrowRight", "ArrowDown", "ArrowDown", "ArrowRight"):
        page.keyboard.press(key)
    assert page.evaluate(focused) == "3,3"
    label = "document.activeElement.getAttribute('aria-label')"
    assert page.evaluate(label) == "Row 4, column 4: empty, uncertain"
    for key in ("ArrowUp", "ArrowUp", "ArrowLeft", "ArrowLeft"):
        page.keyboard.press(key)
    assert page.evaluate(label) == "Row 2, column 2: blue"
    assert page.locator("#board .focus-ring").count() == 1
    shot(page, "players-keyboard-cell")
    page.keyboard.press("Enter")
    page.wait_for_selector("#picker[open]")
    assert page.locator("#picker-cell").inner_text() == "row 2, column 2"
    page.keyboard.press("Escape")
    page.wait_for_selector("#picker[open]", state="detached")
    assert page.evaluate(focused) == "1,1"
    page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")
    page.wait_for_selector("#picker[open]")
    page.click('#picker .choice[data-colour="B"]')
    page.wait_for_selector('#board .cell[data-cell="1,2"][data-colour="B"]')
    assert page.evaluate(focused) == "1,2"
    page.close()


def test_on_the_hex_board_up_and_down_go_straight_and_left_and_right_zigzag_along_the_row(server, browser):
    """Gemblo's hexes have six neighbours and four arrows: Up and Down go to the hex straight
    above or below, Left and Right to the upper and lower neighbour in turn, so the keyboard's
    cell keeps to its row instead of drifting up or down the board."""
    page = setup_page(browser, server.base, "gemblo")
    start_game(page)
    page.wait_for_selector("#board .cell")
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('#board .cell')"):
            break
    centre = """(() => { const r = document.activeElement.getBoundingClientRect();
        return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)]; })()"""
    x0, y0 = page.evaluate(centre)
    rise = []
    for _ in range(4):
        page.keyboard.press("ArrowRight")
        x, y = page.evaluate(centre)
        assert x > x0
        x0 = x
        rise.append(y - y0)
    assert rise[0] == rise[2] != 0 and rise[1] == rise[3] == 0, rise  # a zigzag along the row
    for arrow, way in (("ArrowDown", 1), ("ArrowUp", -1)):
        page.keyboard.press(arrow)
        x, y = page.evaluate(centre)
        assert x == x0 and (y - y0) * way > 0, arrow
        y0 = y
    page.close()


def test_a_geometrius_token_is_reached_and_corrected_by_keyboard(server, browser):
    """The tokens are the Geometrius board's cells: the arrows reach them, Enter opens the
    token's own sheet, Escape gives the focus back."""
    from tests.test_session_geometrius import START, camera

    page = geometrius_live(server, browser, ["red", "blue", "green", "yellow", "purple", "white"],
                           [{"name": "Ann", "colours": ["red"]}, {"name": "Bo", "colours": ["blue"]}], UPRIGHT_TABLET)
    server.session.observe(camera(START), [], 0.0)
    page.wait_for_selector('#board rect.token-face[data-cell="1,1"]')
    page.locator('#board rect.token-face[data-cell="0,0"]').focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')").startswith("Row 1, column 1: Q01 with")
    page.keyboard.press("Enter")
    page.wait_for_selector("#tokenfix[open]")
    assert page.locator("#fix-where").inner_text() == "Q01 (row 1, column 1)"
    page.keyboard.press("Escape")
    page.wait_for_selector("#tokenfix[open]", state="detached")
    assert page.evaluate("document.activeElement.dataset.cell") == "1,1"
    page.close()


# Whether an element lies wholly in the live panel's visible box.
IN_PANEL = """(sel) => { const p = document.querySelector(".panel").getBoundingClientRect();
    const r = document.querySelector(sel).getBoundingClientRect();
    return r.top >= p.top - 1 && r.bottom <= p.bottom + 1; }"""


def test_three_alerts_keep_to_their_own_height_and_the_turn_line_stays_in_sight(server, browser):
    """On a landscape tablet three alerts pushed the turn line, "Game over" and the scores out
    of the panel. The alerts now scroll in a box of their own, newest first under their
    count, and the turn line is in sight whether the panel is scrolled to its top or its end."""
    page = blokus_game(browser, server.base)
    page.close()
    more = SCRIPT + (Move("Y", ((10, 10),)), Move("R", ((12, 12),)))
    for t, rows in enumerate(boards(more)):
        server.session.observe(rows, [], float(t))
    assert len(server.session.snapshot()["alerts"]) == 3
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.set_default_timeout(20000)
    page.goto(server.base + "/live")
    page.wait_for_selector(".alert")
    ids = page.locator(".alert").evaluate_all("els => els.map((e) => Number(e.dataset.alert))")
    assert ids == sorted(ids, reverse=True) and len(ids) == 3
    assert page.locator(".alerts-count").inner_text() == "3 alerts, newest first"
    box = page.locator("#alerts").evaluate("e => [e.scrollHeight, e.clientHeight]")
    assert box[0] > box[1], "the alerts do not scroll inside their own box"
    assert page.evaluate(IN_PANEL, "#turn"), "the turn line is pushed out of the panel"
    assert page.evaluate(IN_PANEL, "#scores thead")
    page.locator(".panel").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    assert page.evaluate(IN_PANEL, "#turn"), "the turn line scrolls away with the panel"
    assert page.evaluate(IN_PANEL, ".moves h2")
    shot(page, "players-three-alerts-landscape")
    page.close()


# How wide the chosen option's words are against the room the select has for them (its box less
# its padding and the arrow): a select's scrollWidth does not see its own label cut.
LABEL_FITS = """(e) => { const s = getComputedStyle(e); const probe = document.createElement("span");
    probe.style.cssText = `position: absolute; white-space: pre; font: ${s.font}`; probe.textContent = e.options[e.selectedIndex].text;
    document.body.append(probe); const words = probe.getBoundingClientRect().width; probe.remove();
    return [words, e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - 20,
            e.scrollWidth, e.clientWidth]; }"""


def test_on_a_phone_the_variant_shows_its_short_name_and_its_description_under_it(server, browser):
    """"Classic: four players" showed as "Classic: four p…" in a phone's select. The select shows
    the variant's short name, whole; its description stands in words under it and follows
    the choice."""
    page = browser.new_page(viewport=PHONE)
    page.set_default_timeout(20000)
    for path, game, variant, about in (("/setup", "#game", "#variant", "#variant-about"),
                                       ("/review", "#review-game", "#review-variant", "#review-variant-about")):
        page.goto(server.base + path)
        for name in ("blokus", "gemblo", "equilibrix", "geometrius"):
            page.select_option(game, name)
            for code in page.locator(f"{variant} option").evaluate_all("os => os.map((o) => o.value)"):
                page.select_option(variant, code)
                words, room, scroll_width, width = page.locator(variant).evaluate(LABEL_FITS)
                assert words <= room and scroll_width <= width, f"{path}: the {name} {code} label is cut"
                assert page.locator(about).is_visible() and len(page.locator(about).inner_text()) > 5
        page.select_option(game, "blokus")
        page.select_option(variant, "classic")
        assert page.locator(about).inner_text() == "Four players, one colour each"
        page.select_option(variant, "team")
        assert page.locator(about).inner_text() == "Blue + red against yellow + green"
    shot(page, "players-variant-phone")
    page.close()


# --- session 24: the four games' setups walked -------------------------------------------------

# The turn line's words against the panel's right edge and the page's width: [words' right,
# panel's right, page's sideways scroll].
TURN_FITS = """() => [document.querySelector("#turn span:last-child").getBoundingClientRect().right,
    document.querySelector(".panel").getBoundingClientRect().right,
    document.documentElement.scrollWidth - document.documentElement.clientWidth]"""


def test_a_long_turn_line_wraps_inside_the_panel_and_never_runs_off_it(server, browser):
    """A table calling a chip by a name of 20 letters (the most allowed): "<name> to play" ran
    past the panel's right edge, cut off on a landscape tablet ("to play" unseen) and scrolling
    a phone's page sideways; so did "Game over: White wins" on a phone, and a verdict with a long
    player's name on any screen. The turn line now wraps inside the panel."""
    long_chip = "Abcdefghijklmnopqrst"  # geometrius.COLOUR_NAME_MAX letters
    names = [long_chip, "blue", "green", "yellow", "purple", "white"]
    page = geometrius_live(server, browser, names, [{"name": "Ann", "colours": [long_chip]},
                                                    {"name": "Bo", "colours": ["blue"]}], LANDSCAPE)
    page.close()
    for viewport in (LANDSCAPE, PHONE):
        page = browser.new_page(viewport=viewport)
        page.set_default_timeout(20000)
        page.goto(server.base + "/live")
        page.wait_for_selector("#turn:has-text('to play')")
        words, panel, sideways = page.evaluate(TURN_FITS)
        assert words <= panel + 1 and sideways <= 0, f"the turn line runs off the panel at {viewport}"
        page.close()
    long_name = "Bartholomew Featherstonehaugh-Smythe"
    server.app.extensions["tableref"].start_session(
        {"game": "equilibrix", "variant": "tri-mety",
         "players": [{"name": "Bo", "colours": ["B"]}, {"name": long_name, "colours": ["W"]}]})
    duo = {"P 0 0 0": "B", "T 0 0 +": "B"}
    server.session.observe(duo, [], 0.0)
    server.session.observe({**duo, "P 2 0 0": "W"}, [], 1.0)  # White's petal joins its marker
    server.session.declare_pass()
    server.session.declare_pass()
    for viewport in (LANDSCAPE, PHONE):
        page = browser.new_page(viewport=viewport)
        page.set_default_timeout(20000)
        page.goto(server.base + "/live")
        page.wait_for_selector("#turn:has-text('Game over')")
        assert page.locator("#turn").inner_text().strip() == f"Game over: {long_name} wins"
        words, panel, sideways = page.evaluate(TURN_FITS)
        assert words <= panel + 1 and sideways <= 0, f"the verdict runs off the panel at {viewport}"
        shot(page, f"players-long-verdict-{viewport['width']}")
        page.close()


def test_five_player_gemblo_obstacles_laid_all_at_once_before_the_start_are_logged(server, browser):
    """Five-player Gemblo: the table lays the sixth colour's 15 pieces round the rim as
    obstacles. Laid before the start (as the rulebook's setup reads), the camera's first board
    held them all, more pieces than a turn lays: the page ringed every obstacle's cells as "no
    move the camera can log", and no later move was logged either (a setup hint told the table
    to lay them one at a time once the game ran). Pieces of a colour that takes no turns are now
    not counted: all 15 at once are logged as obstacles, listed without a move number, the turn
    stays with the first colour, and its move is logged after them."""
    from rules import gemblo
    from tests.test_observe import rim_obstacles

    page = setup_page(browser, server.base, "gemblo")
    hint = page.locator("p.hint[data-variants='5p']")
    page.select_option("#variant", "6p")
    assert hint.is_hidden()
    page.select_option("#variant", "5p")
    assert hint.is_visible() and "before the start" in hint.inner_text()
    start_game(page)
    setup = server.session.setup
    assert setup.start_cells == gemblo.Setup("5p").start_cells  # the starts rim_obstacles keeps clear of
    first = setup.turn_order[0]
    board = {f"{q},{r}": setup.obstacle_colour for move in rim_obstacles() for q, r in move.cells}
    server.session.observe(board, [], 0.0)  # all 15 at once, as laid before the start
    snapshot = server.session.snapshot()
    assert not snapshot["holding"] and snapshot["to_move"] == first
    assert [(h["colour"], h["legal"], h.get("obstacle")) for h in snapshot["history"]] == \
        [(setup.obstacle_colour, True, True)] * 15
    q, r = setup.start_cells[first]
    server.session.observe({**board, f"{q},{r}": first}, [], 1.0)  # the first colour's monohex on its start
    snapshot = server.session.snapshot()
    assert [(h["colour"], h["piece"], h.get("obstacle")) for h in snapshot["history"][15:]] == [(first, "P01", None)]
    assert snapshot["to_move"] == setup.turn_order[1]
    page.wait_for_selector("#history li[data-index='15']")
    obstacle = page.locator("#history li[data-index='0']")
    assert obstacle.get_attribute("value") is None and "obstacle" in obstacle.inner_text()
    assert page.locator("#history li[data-index='15']").get_attribute("value") == "16"
    page.close()



def test_obstacles_laid_touching_along_an_edge_are_held_with_words_that_say_so(server, browser):
    """Two obstacles laid at once touching along an edge are one region of one colour that is
    no piece: which pieces lie there is not on the board, so the change is held (ringed), and
    the page says why and what to do, not only that it is no move."""
    from tests.test_observe import FIVE, rim_obstacles

    page = setup_page(browser, server.base, "gemblo")
    page.select_option("#variant", "5p")
    start_game(page)
    setup, cells = server.session.setup, FIVE.board
    five = cells.mask(rim_obstacles(1)[0].cells)
    touching = next(m for pid, m in FIVE.table.masks if pid == "P03" and not m & five
                    and cells.grow(m, cells.edge) & five)
    server.session.observe({f"{q},{r}": setup.obstacle_colour for q, r in cells.cells_of(five | touching)}, [], 0.0)
    snapshot = server.session.snapshot()
    assert snapshot["history"] == [] and len(snapshot["holding_joined"]) == 8
    page.wait_for_selector("#holding-hint:not([hidden])")
    assert "touch along an edge" in page.locator("#holding-hint").inner_text()
    page.close()


def second_move_focused(server, browser):
    """A Blokus game two moves in, its second move in the history focused (as Tab reaches it)."""
    page = blokus_game(browser, server.base)
    for t, rows in enumerate(boards()[:2]):
        server.session.observe(rows, [], float(t))
    page.wait_for_selector("#history li[data-index='1']")
    page.locator("#history li[data-index='1']").focus()
    return page


def test_enter_on_a_move_in_the_history_asks_before_taking_it_back(server, browser):
    """A move in the history is reached by Tab and Enter opens its take-back sheet. The Enter's
    own press then reached the sheet's first button, "Take it back": the move was taken back at
    once, the sheet never seen. Enter now opens the sheet and nothing more; Escape keeps the move."""
    page = second_move_focused(server, browser)
    page.keyboard.press("Enter")
    page.wait_for_selector("#takeback[open]")
    assert "move 2" in page.locator("#takeback h2").inner_text()
    assert len(server.session.snapshot()["history"]) == 2
    page.keyboard.press("Escape")
    page.wait_for_selector("#takeback[open]", state="detached")
    assert page.locator("#history li").count() == 2 and len(server.session.snapshot()["history"]) == 2
    page.close()


def test_the_loser_s_pick_of_the_next_kombo_variant_survives_a_new_state(server, browser):
    """KOMBO: White wins the first game (TŘI METY) and Black picks AUTONOMIE for the next. The
    panel is drawn again for every new state, and one came before the tap on "Start the next
    KOMBO game" (here the camera's status, as the table is cleared): the pick went back to the
    first variant listed and the next game started as ZDRŽOVAČKA. The pick now stays."""
    page = setup_page(browser, server.base, "equilibrix")
    page.select_option("#variant", "tri-mety")
    page.check("#kombo")
    start_game(page)
    duo = {"P 0 0 0": "B", "T 0 0 +": "B"}
    server.session.observe(duo, [], 0.0)
    server.session.observe({**duo, "P 2 0 0": "W"}, [], 1.0)  # White's petal joins its marker
    server.session.declare_pass()
    server.session.declare_pass()
    page.wait_for_selector("#kombo-variant")
    page.select_option("#kombo-variant", "autonomie")
    server.session.set_camera("ok", "camera 0: the table is being cleared")
    page.wait_for_selector("#camera:has-text('being cleared')")
    assert page.locator("#kombo-variant").input_value() == "autonomie"
    page.click("#kombo-next")
    page.wait_for_selector("#extra h2:has-text('KOMBO game 2')")
    assert server.session.setup.variant == "autonomie"
    page.close()


def test_a_held_enter_or_space_never_presses_the_opened_sheet_s_first_button(server, browser):
    """Enter on a move, Enter or Space on a board cell, opens a sheet with its first button
    focused. Held a moment, the key repeats, and the repeat pressed that button: the move was
    taken back, the cell corrected to the first colour, unasked. The repeat now does nothing."""
    page = second_move_focused(server, browser)
    page.keyboard.down("Enter")
    page.keyboard.down("Enter")  # the key's repeat
    page.keyboard.up("Enter")
    page.wait_for_selector("#takeback[open]")
    page.keyboard.press("Escape")
    assert len(server.session.snapshot()["history"]) == 2
    for key in ("Enter", " "):
        page.locator("#board .cell[tabindex='0']").first.focus()
        page.keyboard.down(key)
        page.keyboard.down(key)
        page.keyboard.up(key)
        page.wait_for_selector("#picker[open]")
        page.keyboard.press("Escape")
        page.wait_for_selector("#picker[open]", state="detached")
    assert server.session.snapshot()["corrected"] == [] and len(server.session.snapshot()["history"]) == 2
    page.close()
