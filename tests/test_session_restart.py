"""A server restart at any moment of a game resumes it exactly, in every game: before the
start, while a change waits on a doubt, after corrections, taps, take-backs and passes, and
after the end. The same game is played once without a restart and once with a restart after
each of its steps; the page (and the record) must be what it was, and the rest of the game
must end the same."""
from typing import Any, Callable

import numpy as np
import pytest

from companion_app.session import Session, SessionError
from companion_app.store import Store
from rules import blokus, gemblo
from rules.placement import PlacementRules, random_playout
from tests.test_session_equilibrix import DUO
from tests.test_session_geometrius import PLAYERS, START, camera, chips

Step = Callable[[Session], None]


def page(s: Session) -> dict:
    """What a restart must bring back: the page but for what belongs to the server's run
    (the broadcast's numbering, the live loop's camera status; the session's creation time
    differs between the games played here), the exported record and the boards held."""
    snap = {k: v for k, v in s.snapshot().items() if k not in ("version", "run", "camera")}
    snap["session"] = {k: v for k, v in snap["session"].items() if k != "created"}
    try:
        record = s.export_record()
    except SessionError:  # nothing to export yet: the Geometrius field not seen
        record = None
    return {"page": snap, "record": record, "held": s.adapter.held_boards()}


def until_over(s: Session) -> None:
    """Every colour passes in turn until the game is over (at most a round of each)."""
    for _ in range(8):
        if s.snapshot()["game_over"]:
            return
        s.declare_pass()


def placement_steps(rules: PlacementRules, board_of: Callable[[dict], Any]) -> list[Step]:
    """A whole self-played game of a placement game, as the camera sees it (``board_of``: the
    camera's board of the occupied cells), with what a table does on the way: a piece waiting
    on a doubted square while the next is laid, the tap that releases both, a square corrected
    and corrected back, a pass declared by mistake and taken back, a piece taken back by tap,
    lifted and laid again, then the rest of the game to its end (one step)."""
    game = random_playout(rules, np.random.default_rng(5))
    moves = [t.move for t in game.turns if not t.move.passed]
    laid, cells = [], {}
    for move in moves:
        cells = {**cells, **{c: move.colour for c in move.cells}}
        laid.append(cells)
    doubted, square = moves[1].cells[0], moves[0].cells[0]

    def seen(i: int, t: float, unread: tuple = ()) -> Step:
        return lambda s: s.observe(board_of({c: col for c, col in laid[i].items() if c not in unread}),
                                   list(unread), t)

    def the_rest(s: Session) -> None:
        for i in range(4, len(moves)):
            seen(i, float(i + 2))(s)

    return [
        seen(0, 0.0),
        seen(1, 1.0, (doubted,)),  # the second piece waits on a doubted square
        seen(2, 2.0, (doubted,)),  # the third is laid meanwhile
        lambda s: s.correct_cell(doubted, moves[1].colour),  # the tap releases both
        lambda s: s.correct_cell(square, "."),  # a square of the first piece said empty ...
        lambda s: s.correct_cell(square, moves[0].colour),  # ... and back
        seen(3, 3.0),  # the doubted square read as tapped: that correction ends
        lambda s: s.declare_pass(),  # by mistake: flagged
        lambda s: s.take_back(4),  # the pass taken back
        lambda s: s.take_back(3),  # the fourth piece taken back by tap, left on the table ...
        seen(2, 4.0),  # ... lifted ...
        seen(3, 5.0),  # ... and laid again
        the_rest,
    ]


def blokus_steps() -> list[Step]:
    return placement_steps(blokus.rules(), lambda cells: [
        "".join(cells.get((r, c), ".") for c in range(blokus.SIZE)) for r in range(blokus.SIZE)])


def gemblo_steps() -> list[Step]:
    return placement_steps(gemblo.rules(gemblo.Setup("3p")),
                           lambda cells: {f"{q},{r}": colour for (q, r), colour in cells.items()})


def equilibrix_steps() -> list[Step]:
    return [
        lambda s: s.observe({"P 0 0 0": "B"}, ["T 0 0 +"], 0.0),  # black's duo waits on its triangle
        lambda s: s.correct_cell("T 0 0 +", "B"),
        lambda s: s.observe(dict(DUO), [], 1.0),
        lambda s: s.observe({**DUO, "P 2 0 0": "W"}, [], 2.0),
        lambda s: s.observe({**DUO, "P 2 0 0": "W", "P 1 0 1": "B"}, [], 3.0),
        lambda s: s.correct_cell("P 2 0 0", "."),  # white's petal was a misread: black twice
        lambda s: s.amend({"event": s.snapshot()["history"][0]["event"], "token": True, "tile": None}),
        lambda s: s.take_back(1),
        lambda s: s.declare_pass(),
        until_over,
    ]


def geometrius_steps() -> list[Step]:
    field = camera(START, offset=(3, 3))
    field[5]["shape"] = field[10]["shape"] = "unknown"  # two starting tokens the camera cannot read
    return [
        lambda s: s.observe(field, [[4, 4]], 0.0),
        lambda s: s.correct({"at": [1, 1], "shape": "Q01"}),
        lambda s: s.correct({"at": [2, 2], "shape": "P01"}),  # the field is whole: the game starts
        lambda s: s.observe(camera(chips(START, Q03="red")), [], 1.0),
        lambda s: s.observe(camera(chips(START, Q03="red", H01="blue")), [], 2.0),
        lambda s: s.observe(camera(chips(START, Q03="red", H01="blue", T01="red blue")), [[0, 0]], 3.0),
        lambda s: s.correct({"at": [0, 0], "top": "red"}),  # the doubted top of red's block
        lambda s: s.amend({"event": s.snapshot()["geometrius"]["turns"][0]["event"], "token": "Q03",
                           "cards": ["C02"]}),
        lambda s: s.take_back(1),
        lambda s: s.declare_pass(),
        until_over,
    ]


GAMES = {
    "blokus": ({"variant": "classic"}, blokus_steps),
    "gemblo": ({"variant": "3p"}, gemblo_steps),
    "equilibrix": ({"variant": "autonomie"}, equilibrix_steps),
    "geometrius": ({"players": PLAYERS}, geometrius_steps),
}


MOMENTS = [pytest.param(game, k, id=f"{game}-{k}") for game, (_, steps_of) in GAMES.items()
           for k in range(len(steps_of()) + 1)]


@pytest.fixture(scope="module")
def never_restarted(tmp_path_factory) -> Callable[[str], list[dict]]:
    """The page after each step of each game played without a restart, played once per game."""
    played: dict[str, list[dict]] = {}

    def pages(game: str) -> list[dict]:
        if game not in played:
            setup, steps_of = GAMES[game]
            s = Session.start(Store.open(tmp_path_factory.mktemp(game)), dict(setup), game)
            played[game] = [page(s)]
            for step in steps_of():
                step(s)
                played[game].append(page(s))
            assert played[game][-1]["page"]["game_over"], "the script plays the game to its end"
        return played[game]

    return pages


@pytest.mark.parametrize("game, k", MOMENTS)
def test_a_restart_at_any_moment_of_a_game_resumes_it_exactly(tmp_path, never_restarted, game, k):
    """The game restarted after its first ``k`` steps shows what it showed (Geometrius before its
    start: the field the camera saw and its rings, session 22) and goes on to the same end.
    The cells ringed as corrected too: a tap whose cell the camera since read as tapped, or a
    piece taken back and since lifted, stands no more after a restart (session 22: before,
    the camera's last board was not saved outside a hold, and the log brought them back; the
    piece laid again before the camera's next board read empty and was never logged)."""
    setup, steps_of = GAMES[game]
    steps = steps_of()
    pages = never_restarted(game)
    s = Session.start(Store.open(tmp_path), dict(setup), game)
    for step in steps[:k]:
        step(s)
    s.store.close()
    s = Session.resume(Store.open(tmp_path))
    assert s.notice is None and page(s) == pages[k]
    for step in steps[k:]:
        step(s)
    assert page(s) == pages[-1], "the game went on differently after the restart"
