"""Live Equilibrix: fields the camera sees covered become judged tile placements; every
reason code reaches the page; taps (ring tile, 5+1 token), corrections and take-backs
re-judge the game; a restart resumes it."""
from companion_app.session import Session, SessionError
from companion_app.store import Store
from rules import flower
from rules.records import parse_record

import pytest

DUO = {"P 0 0 0": "B", "T 0 0 +": "B"}  # the shape "duo": the first ring tile offered


def start(tmp_path, variant="autonomie", **doc):
    return Session.start(Store.open(tmp_path), {"variant": variant, **doc}, "equilibrix")


def see(session, *steps):
    """Show the camera each board in turn (each step adds fields to the last)."""
    board = {}
    for t, step in enumerate(steps):
        board.update(step)
        session.observe(dict(board), [], float(t))
    return board


def replayed(record):
    """The verdicts ``tableref check`` gives an exported record."""
    rec = parse_record(record)
    return [[v.code for v in t.violations] for t in rec.module.play_all(rec.setup, rec.moves).turns]


def history(session):
    return [(h["colour"], h["piece"], h["reasons"]) for h in session.snapshot()["history"]]


def codes(session):
    return sorted({a["code"] for a in session.snapshot()["alerts"]})


def around_origin(n):
    """``n`` fields in a row round node (0, 0), each sharing an arc with the next."""
    import math

    ring = sorted(flower.fields_at((0, 0)), key=lambda f: math.atan2(*flower.centroid(f)[::-1]))
    return {flower.field_id(f): "B" for f in ring[:n]}


def test_covered_fields_become_the_offered_ring_tile_of_that_shape(tmp_path):
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "W"})
    snap = s.snapshot()
    assert history(s) == [("B", "duo-1", []), ("W", "mini:petal", [])]
    assert snap["cells"] == {"P 0 0 0": "B", "T 0 0 +": "B", "P 2 0 0": "W"}
    assert snap["last"] == {"index": 1, "colour": "W", "cells": ["P 2 0 0"]}
    assert snap["to_move"] == "B"
    eq = snap["equilibrix"]
    assert eq["ring"][0] is None and eq["origin"] == 0  # the Origin moved to duo-1's slot
    assert eq["offered"] == ["fan-1", "bow-1", "star-1", "chain-1"]
    assert eq["mini_turns_left"] == {"B": 2, "W": 1}
    assert snap["layout"]["shape"] == "flower" and len(snap["layout"]["fields"]) == 144


def test_the_ring_seen_by_the_camera_names_the_tile(tmp_path):
    s = start(tmp_path)
    ring = [{"shape": t.rsplit("-", 1)[0], "side": "B"} for t in s.setup.ring]  # as the reader sees it
    ring[1] = None  # a fan left the ring ... but the fields are a duo: E1, the tile's shape differs
    s.observe({"fields": DUO, "ring": ring, "origin": 1}, [], 0.0)
    assert history(s) == [("B", "fan-1", ["tile_not_offered"])]


def test_a_ring_the_camera_no_longer_sees_names_no_tile(tmp_path):
    s = start(tmp_path)
    ring = [{"shape": t.rsplit("-", 1)[0], "side": "B"} for t in s.setup.ring]
    ring[1] = None  # a fan lifted out of the ring ...
    s.observe({"fields": {}, "ring": ring, "origin": 1}, [], 0.0)
    s.observe(DUO, [], 1.0)  # ... then the ring is hidden (a hand): the fan's gap is no longer known
    assert history(s) == [("B", "duo-1", [])]


def test_every_reason_a_table_can_break_reaches_the_page(tmp_path):
    s = start(tmp_path, variant="zdrzovacka")
    see(s, around_origin(6),                         # no tile has this shape (E1); 6 dots at (0, 0) (E5)
        {"P 2 0 0": "W"}, {"P 2 -2 0": "W"},          # White twice in a row
        {"P -3 3 0": "B"},                            # far from Black's fields (E4)
        {"P 3 -1 2": "W"}, {"P 3 -2 2": "W"})         # White's third mini-tile turn (E2)
    s.declare_pass()                                  # ZDRŽOVAČKA: no passing while a move is left
    assert codes(s) == ["illegal_pass", "no_mini_tile_left", "not_connected", "tile_not_offered",
                        "too_many_dots", "wrong_turn"]
    alert = next(a for a in s.snapshot()["alerts"] if a["code"] == "too_many_dots")
    assert alert["rule"] == "E5" and sorted(alert["piece_cells"]) == sorted(around_origin(6))


def test_the_5_plus_1_token_entered_by_tap_allows_six_dots_once(tmp_path):
    s = start(tmp_path)
    see(s, around_origin(6))
    event = s.snapshot()["history"][0]["event"]
    s.amend({"event": event, "token": True, "tile": None})
    assert codes(s) == ["tile_not_offered"]
    snap = s.snapshot()
    assert snap["history"][0]["token"] is True
    assert snap["equilibrix"]["tokens"] == {"B": 0, "W": 2}  # the token went to White
    with pytest.raises(SessionError):
        s.amend({"event": event, "tile": "no-such-tile"})


def test_a_correction_rejudges_later_moves_and_a_restart_resumes(tmp_path):
    s = start(tmp_path)
    board = see(s, DUO, {"P 2 0 0": "W"}, {"P 1 0 1": "B"})
    assert history(s)[2] == ("B", "mini:petal", [])
    # The camera misread White's petal: it is really empty, so Black moved twice in a row.
    s.correct_cell("P 2 0 0", ".")
    assert [h[2] for h in history(s)] == [[], ["wrong_turn"]]
    assert "P 2 0 0" not in s.snapshot()["cells"]
    s.observe(board, [], 9.0)  # the camera still reads the misread: the correction stands
    assert "P 2 0 0" not in s.snapshot()["cells"]
    again = Session.resume(Store.open(tmp_path))
    assert again.snapshot()["history"] == s.snapshot()["history"]
    again.observe(board, [], 10.0)
    assert len(again.snapshot()["history"]) == 2
    record = again.export_record()
    assert record["game"] == "equilibrix" and record["moves"][0] == {"colour": "B", "fields": list(DUO),
                                                                      "tile": "duo-1"}
    assert replayed(record) == [h["reasons"] for h in again.snapshot()["history"]]  # `check` agrees


def test_a_tile_lifted_off_is_taken_back_and_an_unsure_field_waits(tmp_path):
    s = start(tmp_path)
    see(s, DUO)
    s.observe({"P 2 0 0": "W", **DUO}, ["P 2 0 2"], 1.0)  # a field beside the new one unread: wait
    assert len(history(s)) == 1 and "P 2 0 2" in s.snapshot()["uncertain"]
    s.observe({}, [], 2.0)  # Black's tile lifted off
    assert history(s) == []
    see(s, DUO)  # put back, then taken back on the page
    s.take_back(0)
    assert history(s) == []


def test_kombo_the_loser_picks_the_next_variant_and_chooses_from_five_tiles(tmp_path):
    store = Store.open(tmp_path)
    s = Session.start(store, {"variant": "tri-mety", "settings": {"kombo": True}}, "equilibrix")
    see(s, DUO, {"P 2 0 0": "W"})  # White's petal joins its marker at (3, 0)
    with pytest.raises(SessionError):
        s.next_kombo_doc("autonomie")  # no winner yet
    s.declare_pass()
    s.declare_pass()
    snap = s.snapshot()
    assert snap["game_over"] and snap["kombo"]["winner_now"] == "W" and snap["kombo"]["wins"] == {"B": 0, "W": 1}
    with pytest.raises(SessionError):
        s.next_kombo_doc("tri-mety")  # the loser must pick another variant
    doc = s.next_kombo_doc("autonomie")
    nxt = Session.start(store, doc, "equilibrix")
    assert nxt.setup.variant == "autonomie" and dict(nxt.setup.offered) == {"B": 5, "W": 3}
    snap = nxt.snapshot()
    assert snap["kombo"]["games"] == [{"variant": "tri-mety", "winner": "W"}]
    assert snap["equilibrix"]["offered"] == ["duo-1", "fan-1", "bow-1", "star-1", "chain-1"]
    assert Session.resume(store).snapshot()["kombo"] == snap["kombo"]


@pytest.mark.parametrize("kombo", ["W won", [1, 2], [{"variant": "zzz", "winner": "W"}],
                                   [{"variant": "tri-mety"}],  # a game with no winner is no KOMBO game
                                   [{"variant": "tri-mety", "winner": "W"}, {"variant": "autonomie", "winner": "W"}]])
def test_a_malformed_kombo_series_is_refused_before_it_is_stored(tmp_path, kombo):
    """Stored, it broke the snapshot, so the table's session on every restart."""
    store = Store.open(tmp_path)
    with pytest.raises(SessionError):
        Session.start(store, {"variant": "autonomie", "kombo": kombo}, "equilibrix")
    assert Session.resume(store) is None


def test_a_move_number_must_be_a_number(tmp_path):
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "W"})
    with pytest.raises(SessionError):
        s.take_back(True)  # JSON true is not move 1
    assert len(history(s)) == 2


def test_the_fields_a_held_back_tile_waits_on_are_named_apart_from_idle_doubts(tmp_path):
    """Equilibrix shares the cell boards' ``holding``: the new field and the doubted field
    beside it, not a doubted field far from the change (the page rings that one faintly)."""
    s = start(tmp_path)
    see(s, DUO)
    board = s.adapter.board
    near = board.around(board.around([s.adapter.parse_cell("P 2 0 0")]))
    far = next(flower.field_id(f) for f in board.cells if f not in near)
    s.observe({"P 2 0 0": "W", **DUO}, ["P 2 0 2", far], 1.0)
    snap = s.snapshot()
    assert len(history(s)) == 1 and sorted(snap["holding"]) == ["P 2 0 0", "P 2 0 2"]
    assert far in snap["uncertain"] and far not in snap["holding"]


def test_a_tile_taken_back_by_tap_and_left_on_the_flower_is_not_logged_again(tmp_path):
    """Black's tile is taken back by tap and stays on the board; White lays a mini-tile: only
    White's is logged (Black's tile was logged again with it). Lifted and laid again, Black's
    tile is logged."""
    s = start(tmp_path)
    see(s, DUO)
    s.take_back(0)
    s.observe({**DUO, "P 2 0 0": "W"}, [], 5.0)
    assert [(c, p) for c, p, _ in history(s)] == [("W", "mini:petal")]
    assert sorted(s.snapshot()["corrected"]) == sorted(DUO)
    s.observe({"P 2 0 0": "W"}, [], 6.0)  # Black's tile lifted
    s.observe({**DUO, "P 2 0 0": "W"}, [], 7.0)  # and laid again
    assert [c for c, _, _ in history(s)] == ["W", "B"]


def test_a_field_tapped_into_a_tile_ends_when_the_tile_is_lifted(tmp_path):
    """The camera misses the triangle of Black's duo; the tap says it is black (the tile is
    the duo). When the tile is lifted, the triangle reads empty as it did: it was left behind
    as a black mini-tile."""
    s = start(tmp_path)
    see(s, {"P 0 0 0": "B"})
    s.correct_cell("T 0 0 +", "B")
    assert history(s) == [("B", "duo-1", [])]
    s.observe({}, [], 5.0)
    assert history(s) == [] and s.snapshot()["cells"] == {}


# --- found by the seeded fuzz of the live session (session 20, bench/live_fuzz.py) -------------

def restarted(session, tmp_path):
    session.store.close()
    return Session.resume(Store.open(tmp_path))


def test_a_tap_that_explains_a_change_held_as_no_play_logs_the_tiles(tmp_path):
    """Black lays the duo and White a mini petal between two boards, and the duo's triangle
    is read white, unnoticed: three pieces, no play (Equilibrix seed 4). The tap saying it is
    black was a plain correction, the triangle logged at once as a black mini-tile, then
    White's petal and the duo's petal as a second black mini-tile (Black's two mini-tiles
    spent, the duo left in the ring). Read into the camera's board it explains the table: the
    duo and the mini petal are logged."""
    s = start(tmp_path)
    s.observe({"P 0 0 0": "B", "T 0 0 +": "W", "P 2 0 0": "W"}, [], 0.0)
    assert history(s) == [] and "T 0 0 +" in s.snapshot()["holding"]
    s.correct_cell("T 0 0 +", "B")
    assert history(s) == [("B", "duo-1", []), ("W", "mini:petal", [])]
    s.observe({**DUO, "P 2 0 0": "W"}, [], 1.0)
    assert history(s) == [("B", "duo-1", []), ("W", "mini:petal", [])] and s.snapshot()["holding"] == []


def test_a_tap_after_a_restart_before_the_camera_s_next_board_reads_the_held_tile(tmp_path):
    """Black's duo waits on its triangle, doubted (read empty); the server restarts, and the
    player taps the triangle black before the camera's next board (Equilibrix seed 26). The
    camera's board was not saved: the tap was a plain correction, the triangle logged as a
    black mini-tile, then the petal as another (wrong_turn). The board the change waits with
    is saved as a hold's: the tap reads it, and the duo is logged whole."""
    s = start(tmp_path)
    s.observe({"P 0 0 0": "B"}, ["T 0 0 +"], 0.0)
    assert history(s) == []
    s = restarted(s, tmp_path)
    s.correct_cell("T 0 0 +", "B")
    assert history(s) == [("B", "duo-1", [])]
    s.observe(DUO, [], 1.0)
    assert history(s) == [("B", "duo-1", [])] and s.snapshot()["holding"] == []


# --- found by the seeded fuzz of the live session (session 21, bench/live_fuzz.py) -------------

@pytest.mark.parametrize("restart", [False, True])
def test_a_tap_on_the_missed_field_of_a_tile_held_by_a_hand_completes_the_tile(tmp_path, restart):
    """The camera misses the duo's triangle unnoticed (read empty, not doubted): the petal is
    logged as a black mini-tile. A hand then hides the petal (doubted, read empty): the change
    is held. The player taps the triangle black (Equilibrix seeds 234, 312, 324). The tap was
    held with the hand's change, and the next board logged the triangle as a second black
    mini-tile (wrong_turn). It names no new field (nothing the change shows is black): it
    completes the duo, as it would with no hand there."""
    s = start(tmp_path)
    see(s, {"P 0 0 0": "B"})
    assert history(s) == [("B", "mini:petal", [])]
    s.observe({}, ["P 0 0 0", "P 0 0 1"], 1.0)
    assert "P 0 0 0" in s.snapshot()["holding"]
    if restart:
        s = restarted(s, tmp_path)
    s.correct_cell("T 0 0 +", "B")
    assert history(s) == [("B", "duo-1", [])]
    s.observe(DUO, [], 2.0)
    assert history(s) == [("B", "duo-1", [])] and s.snapshot()["holding"] == []


def test_a_tap_beside_a_new_tile_of_its_colour_waits_with_the_tile(tmp_path):
    """Black lays a second duo against its first: the triangle is seen, its petal (which
    touches the first duo) is missed unnoticed, and a doubt beside the triangle holds the
    change. The tap on the petal may be the new tile's, laid against its own colour, as much
    as the first duo's missed field: it waits with the change, and the new duo is logged
    whole (a guard for the test above: a tap beside a logged tile of its colour completes
    that tile only when the held change shows no field of its colour beside the tap)."""
    s = start(tmp_path)
    s.observe(DUO, [], 0.0)
    s.observe({**DUO, "P 2 0 0": "W"}, [], 1.0)
    s.observe({**DUO, "P 2 0 0": "W", "T -1 0 -": "B"}, ["P -1 1 0"], 2.0)
    s.correct_cell("P 0 0 1", "B")
    assert [p for _, p, _ in history(s)] == ["duo-1", "mini:petal"]
    s.observe({**DUO, "P 2 0 0": "W", "T -1 0 -": "B", "P 0 0 1": "B"}, [], 3.0)
    assert [h["cells"] for h in s.snapshot()["history"]] == [["P 0 0 0", "T 0 0 +"], ["P 2 0 0"],
                                                              ["T -1 0 -", "P 0 0 1"]]


FAN = {"T -1 0 -": "B", "P 0 0 1": "B", "P 0 0 2": "B"}  # fan-1, laid against the duo: P 0 0 1 shares an arc with it


@pytest.mark.parametrize("seen, doubted, taps", [
    ({"P 0 0 2": "B"}, ["T -1 0 -"], ["P 0 0 1"]),  # the hub doubted: the far petal shares only a node with the tap
    ({"T -1 0 -": "W", "P 0 0 2": "B"}, ["P -1 1 0"], ["P 0 0 1", "T -1 0 -"]),  # the hub read white, tapped after
])
def test_a_tap_on_a_new_tile_s_field_beside_an_older_tile_waits_when_the_tile_shows_at_a_node(
        tmp_path, seen, doubted, taps):
    """Black lays a fan against its duo; the petal touching the duo is missed unnoticed, and
    the fan's hub, the one field between it and the fan's far petal (seen black), is doubted
    or read white. The far petal touches the tapped one at a node only: the tap still waits
    with the change (it once made the duo a fan-1, unflagged, and the fan a duo flagged
    tile_not_offered)."""
    s = start(tmp_path)
    s.observe(DUO, [], 0.0)
    s.observe({**DUO, "P 2 0 0": "W"}, [], 1.0)
    s.observe({**DUO, "P 2 0 0": "W", **seen}, doubted, 2.0)
    for cell in taps:
        s.correct_cell(cell, "B")
    assert [p for _, p, _ in history(s)] == ["duo-1", "mini:petal"]
    s.observe({**DUO, "P 2 0 0": "W", **FAN}, [], 3.0)
    assert history(s) == [("B", "duo-1", []), ("W", "mini:petal", []), ("B", "fan-1", [])]


# --- session 23 (round eqrelog23) ---------------------------------------------------------------

@pytest.mark.parametrize("restart", [False, True])
def test_a_tile_logged_again_when_a_stray_is_lifted_from_under_it_keeps_what_was_tapped_for_it(tmp_path, restart):
    """Black lays a stray mini-tile out of turn, then White a fan; the player taps which ring
    tile the fan is and that the 5+1 token came with it. The stray is lifted: the camera takes
    back the stray and the fan, and logs the fan again, still on the table. Logged afresh, the
    fan lost the taps (the tile guessed again from its shape, the token with White again):
    the camera sees neither. With ``restart``, the server restarts before the lift and after."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}  # fan-shaped: guessed fan-1, the one offered
    stray = {"P 2 0 0": "B"}
    s = start(tmp_path)
    see(s, DUO, stray, fan)
    s.amend({"event": s.snapshot()["history"][2]["event"], "tile": "fan-2", "token": True})
    tapped = [("W", "fan-2", ["tile_not_offered"])]
    assert history(s)[2:] == tapped
    if restart:
        s = restarted(s, tmp_path)
    s.observe({**DUO, **fan}, [], 3.0)  # the stray lifted
    if restart:
        s = restarted(s, tmp_path)
    assert history(s) == [("B", "duo-1", [])] + tapped
    assert s.snapshot()["history"][1]["token"] is True and s.snapshot()["equilibrix"]["tokens"] == {"B": 2, "W": 0}
    assert s.export_record()["moves"][1] == {"colour": "W", "fields": list(fan),
                                             "tile": "fan-2", "token": True}


@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("tapped", ["before the lift", "on the page drawn before the lift"])
def test_an_acknowledged_tile_not_offered_stays_acknowledged_when_a_lift_logs_the_tile_again(
        tmp_path, tapped, restart):
    """White's fan, tapped as fan-2 (not the tile offered), and the player acknowledges the
    warning; a stray Black laid before it is lifted, and the fan, still on the table, is logged
    again with its taps: the same tile breaking the same rule, so nothing is raised, over
    restarts too. The acknowledgement may also come after the lift from a page drawn before it
    (naming the old move's alert): it reaches the fan logged again."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "B"}, fan)
    s.amend({"event": s.snapshot()["history"][2]["event"], "tile": "fan-2", "token": True})
    shown = next(a["id"] for a in s.snapshot()["alerts"] if a["code"] == "tile_not_offered")
    if tapped == "before the lift":
        s.acknowledge(shown)
    s = restarted(s, tmp_path) if restart else s
    s.observe({**DUO, **fan}, [], 3.0)  # the stray lifted
    assert history(s) == [("B", "duo-1", []), ("W", "fan-2", ["tile_not_offered"])]
    if tapped != "before the lift":
        assert codes(s) == ["tile_not_offered"]  # the fan logged again: its own alert, raised
        s.acknowledge(shown)
    assert codes(s) == [] and codes(restarted(s, tmp_path)) == []


def test_a_tile_logged_short_keeps_its_taps_when_the_lift_reads_it_whole(tmp_path):
    """As above, but the fan was logged with a field the camera missed (never tapped), and the
    board of the stray's lift reads it whole: the fan logged again is the one taken back, so
    the tile and the 5+1 token tapped for it stay. Matched by its fields as logged, they were
    dropped: fan-1 guessed, the token back with White (review of session 23)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    short = {f: c for f, c in fan.items() if f != "P 0 0 2"}
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "B"}, short)
    s.amend({"event": s.snapshot()["history"][2]["event"], "tile": "fan-2", "token": True})
    s.observe({**DUO, **fan}, [], 3.0)  # the stray lifted, the fan read whole
    assert history(s) == [("B", "duo-1", []), ("W", "fan-2", ["tile_not_offered"])]
    assert s.snapshot()["equilibrix"]["tokens"] == {"B": 2, "W": 0}


@pytest.mark.parametrize("stray", [False, True])
def test_a_tile_laid_where_a_tapped_tile_was_lifted_takes_none_of_its_taps(tmp_path, stray):
    """White's fan, tapped as fan-2 with the 5+1 token, is lifted and a mini-tile laid on its
    far petal instead (a change of mind; with ``stray``, as Black's stray is lifted too). The
    mini is another tile: it is logged as the mini it is, and the token goes back to White.
    Taken for the fan logged again (a White tile on one of its fields), it was logged as
    fan-2 with the token, flagged tile_not_offered (review of session 23's late commits)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    see(s, DUO, *([{"P 2 0 0": "B"}] if stray else []), fan)
    s.amend({"event": s.snapshot()["history"][-1]["event"], "tile": "fan-2", "token": True})
    s.observe({**DUO, "P 0 0 2": "W"}, [], 9.0)
    assert history(s) == [("B", "duo-1", []), ("W", "mini:petal", [])]
    assert s.snapshot()["equilibrix"]["tokens"] == {"B": 1, "W": 1}


def test_a_tile_logged_again_keeps_the_ring_tile_the_camera_saw_leave_the_ring(tmp_path):
    """The same lift, where no tap named the fan's tile but the camera saw a bow leave the
    ring as the fan-shaped fields were covered (flagged: the fields are no bow). The ring is
    hidden when the stray is lifted: logged afresh, the tile was guessed from the shape, a
    fan, unflagged, and the game's ring kept the bow the table had taken out of it."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    ring = [None] + [{"shape": t.rsplit("-", 1)[0], "side": "B"} for t in s.setup.ring[1:]]  # duo-1 laid
    s.observe({"fields": DUO, "ring": ring, "origin": 0}, [], 0.0)
    s.observe({"fields": {**DUO, "P 2 0 0": "B"}, "ring": ring, "origin": 0}, [], 1.0)  # the stray
    ring[2] = None  # bow-1's slot
    s.observe({"fields": {**DUO, "P 2 0 0": "B", **fan}, "ring": ring, "origin": 0}, [], 2.0)
    assert history(s)[2] == ("W", "bow-1", ["tile_not_offered"])
    s.observe({**DUO, **fan}, [], 3.0)  # the stray lifted, the ring hidden
    assert history(s) == [("B", "duo-1", []), ("W", "bow-1", ["tile_not_offered"])]


@pytest.mark.parametrize("reset", [False, True])
def test_a_tile_logged_again_takes_the_ring_seen_at_the_lift_unless_the_player_set_it_to_the_guess(tmp_path, reset):
    """The fan was logged while the ring was hidden: its tile guessed, fan-1. The lift's board
    reads the ring again, a bow gone and every fan there: nothing the fan's move said stands
    against that reading, so the fan logged again is the bow (flagged), as a tile logged with
    the ring seen is, and the game's ring lets the bow go. With ``reset`` the camera saw the
    bow leave as the fan was laid and the player set the tile back to the guess: that word
    wins over the same ring seen at the lift (review rev_eqrelog23)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    ring = [None] + [{"shape": t.rsplit("-", 1)[0], "side": "B"} for t in s.setup.ring[1:]]  # duo-1 laid
    s.observe({"fields": DUO, "ring": ring, "origin": 0}, [], 0.0)
    s.observe({"fields": {**DUO, "P 2 0 0": "B"}, "ring": ring, "origin": 0}, [], 1.0)  # the stray
    gone = list(ring)
    gone[2] = None  # bow-1's slot
    s.observe({"fields": {**DUO, "P 2 0 0": "B", **fan}, "ring": gone if reset else None, "origin": 0}, [], 2.0)
    if reset:
        s.amend({"event": s.snapshot()["history"][2]["event"], "tile": None})
    assert history(s)[2] == ("W", "fan-1", [])
    s.observe({"fields": {**DUO, **fan}, "ring": gone, "origin": 0}, [], 3.0)  # the stray lifted, the ring seen
    s = restarted(s, tmp_path)
    if reset:
        assert history(s) == [("B", "duo-1", []), ("W", "fan-1", [])]
    else:
        assert history(s) == [("B", "duo-1", []), ("W", "bow-1", ["tile_not_offered"])]
        assert "bow-1" not in s.snapshot()["equilibrix"]["ring"]


# --- session 24 (round eqfuzz24) ----------------------------------------------------------

def test_a_tile_laid_as_a_stray_is_lifted_goes_after_the_tile_logged_again(tmp_path):
    """Black's stray petal, laid out of turn, lies under White's fan; it is lifted as Black
    lays a petal of its own. The camera takes back the stray and the fan and logs the fan
    again with Black's new petal: the fan was laid first. Taken in turn order from the stray's
    colour, Black's petal went first, flagged out of turn, and the fan after it (live fuzz,
    session 24: 23 of Equilibrix seeds 0-199; in seed 79 the next colour's pass was then
    refused, the log having that colour moved already)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "B"}, fan)
    s.observe({**DUO, **fan, "P 1 0 1": "B"}, [], 3.0)  # the stray lifted, Black's petal laid
    assert history(s) == [("B", "duo-1", []), ("W", "fan-1", []), ("B", "mini:petal", [])]


def test_a_tile_laid_as_a_stray_is_lifted_goes_after_the_tile_logged_again_and_its_pass(tmp_path):
    """As above, but Black passed after White's fan and White lays the next tile, a triangle
    beside the fan: two White pieces are logged, the fan again and then the triangle, with
    Black's pass between them. Both White, they went in the board's order, the triangle first,
    and the fan after it out of turn (the fault above for two pieces of one colour, read in
    the code)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "B"}, fan)
    s.declare_pass("B")
    s.observe({**DUO, **fan, "T -2 0 -": "W"}, [], 3.0)  # the stray lifted, White's triangle laid
    assert history(s) == [("B", "duo-1", []), ("W", "fan-1", []), ("B", None, []), ("W", "mini:triangle", [])]


def test_two_tiles_laid_as_a_stray_is_lifted_go_in_turn_after_the_pass_that_stands(tmp_path):
    """Black's stray petal goes down out of turn and White passes (the stray gave White no
    turn: the pass stands); then one board shows the stray lifted, Black's petal and White's
    fan. The pass is logged again first, so Black is to move: the petal, then the fan. Ordered
    from the colour to move before the stray (White, the passer), the fan went first, flagged
    out of turn, and the petal after it (review of round eqfuzz24)."""
    fan = {"T -1 0 -": "W", "P 0 0 1": "W", "P 0 0 2": "W"}
    s = start(tmp_path)
    see(s, DUO, {"P 2 0 0": "B"})
    s.declare_pass("W")
    s.observe({**DUO, "P 1 0 1": "B", **fan}, [], 3.0)  # the stray lifted, Black's petal and White's fan laid
    assert history(s) == [("B", "duo-1", []), ("W", None, []), ("B", "mini:petal", []), ("W", "fan-1", [])]
