"""The live page for every player at the table, in a real browser: a board big enough to tap
on a tablet held upright and on a phone, seats told apart by more than hue, the keyboard's
place always seen, and a finished game's tiebreak said in words (session 19's walk through
the pages as players would use them)."""
from tests.test_pages import boards, browser, geometrius_live, server, setup_page, shot, start_game  # noqa: F401 (fixtures)

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
