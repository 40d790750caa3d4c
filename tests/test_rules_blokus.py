"""Blokus Classic: the rules file's figures, every reason code, every variant, scoring."""
import pytest

from rules import blokus
from rules.blokus import Setup
from rules.placement import Move, check_placement, legal_placements, play_all


def codes(turn):
    return [v.code for v in turn.violations]


def test_piece_set_figures():
    ps = blokus.pieces()
    assert len(ps.pieces) == 21
    assert ps.total_cells == 89
    assert sum(len(p.orientations) for p in ps.pieces) == 91


def test_placements_on_empty_board():
    assert len(blokus.rules().table.masks) == 30_433


def test_placements_on_duo_board():
    from rules.placement import PlacementTable

    duo = blokus.board(14)
    assert len(PlacementTable.build(duo, duo.full, blokus.pieces()).masks) == 13_729


def test_58_first_moves_per_corner():
    r = blokus.rules(Setup(fixed_corners=True))
    m = blokus.new_match(Setup(fixed_corners=True))
    assert [len(legal_placements(r, m.position, c)) for c in blokus.COLOURS] == [58] * 4


@pytest.mark.parametrize("pid", list(blokus.SHAPES))
def test_identify_every_orientation_anywhere(pid):
    ps = blokus.pieces()
    for form in ps[pid].orientations:
        moved = [(r + 7, c + 11) for r, c in form]
        assert ps.identify(moved) == pid
    assert ps.identify([(0, 0), (0, 1), (0, 2), (1, 0), (1, 2)]) == "U"


# --- every reason code ----------------------------------------------------------------

def play(moves, setup=Setup()):
    return play_all(blokus.rules(setup), [Move(c, tuple(map(tuple, cells))) if cells != "pass"
                                          else Move(c, passed=True) for c, cells in moves])


OPENING = [("B", [(0, 0)]), ("Y", [(0, 19)]), ("R", [(19, 19)]), ("G", [(19, 0)])]


def test_legal_opening():
    m = play(OPENING)
    assert all(t.legal for t in m.turns)
    assert m.colour_to_move == "B"


def test_off_board():
    m = play(OPENING + [("B", [(1, 1), (1, 2), (1, 3), (1, 20)])])
    assert "off_board" in codes(m.turns[-1])
    assert m.turns[-1].violations[0].rule == "B1"


def test_overlap():
    m = play(OPENING + [("B", [(1, 1), (0, 19)])])
    assert "overlap" in codes(m.turns[-1])


def test_not_a_piece():
    m = play(OPENING + [("B", [(1, 1), (2, 2)])])
    assert "not_a_piece" in codes(m.turns[-1])
    m = play(OPENING + [("B", [(1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)])])
    assert "not_a_piece" in codes(m.turns[-1])


def test_piece_already_used():
    m = play(OPENING + [("B", [(1, 1)])])
    assert codes(m.turns[-1]) == ["piece_already_used"]


def test_first_not_in_corner():
    m = play([("B", [(5, 5), (5, 6)])])
    assert codes(m.turns[0]) == ["first_not_in_corner"]
    assert m.turns[0].violations[0].rule == "B3"


def test_no_corner_contact():
    m = play(OPENING + [("B", [(5, 5), (5, 6)])])
    assert codes(m.turns[-1]) == ["no_corner_contact"]
    assert m.turns[-1].violations[0].rule == "B4"


def test_edge_contact_same_colour():
    m = play(OPENING + [("B", [(0, 1), (0, 2)])])
    # Both rules broken, listed in the rules file's order: B4 before B5.
    assert codes(m.turns[-1]) == ["no_corner_contact", "edge_contact_same_colour"]
    m = play(OPENING + [("B", [(1, 1), (1, 0), (2, 1)])])  # V3 touching at a corner and along an edge
    assert codes(m.turns[-1]) == ["edge_contact_same_colour"]
    assert m.turns[-1].violations[0].cells == ((1, 0),)


def test_edge_contact_counts_a_square_laid_on_its_own_colour():
    """B5: "no square of the piece shares an edge with a square of its own colour". A square
    laid on top of its own colour (B1 overlap) still shares edges with the own squares beside it."""
    opening = [("B", [(0, 0), (0, 1)])] + OPENING[1:]
    m = play(opening + [("B", [(0, 1), (1, 2)])])  # (0,1) lies on blue and touches blue (0,0)
    assert codes(m.turns[-1]) == ["overlap", "not_a_piece", "edge_contact_same_colour"]
    assert m.turns[-1].violations[-1].cells == ((0, 1),)
    m = play(opening + [("B", [(0, 1)])])
    assert codes(m.turns[-1]) == ["overlap", "no_corner_contact", "edge_contact_same_colour"]
    m = play(OPENING + [("B", [(0, 0)])])  # the blue monomino alone: no other blue beside it
    assert codes(m.turns[-1]) == ["overlap", "piece_already_used", "no_corner_contact"]


def test_other_colours_may_touch():
    from rules.placement import Position

    b, r = blokus.board(), blokus.rules()
    pos = Position().add(b, "B", "1", b.mask([(0, 0)])).add(b, "Y", "2", b.mask([(1, 2), (1, 3)]))
    piece, problems = check_placement(r, pos, "B", [(1, 1), (2, 1), (2, 2)])
    assert (piece, problems) == ("V3", [])


def test_wrong_turn():
    m = play([("Y", [(0, 19)])])
    assert codes(m.turns[0]) == ["wrong_turn"]
    assert m.turns[0].violations[0].rule == "B7"
    assert m.colour_to_move == "R"  # the turn passes on from the mover


def test_illegal_pass_is_a_warning():
    m = play([("B", "pass")])
    assert codes(m.turns[0]) == ["illegal_pass"]
    assert m.turns[0].violations[0].warning
    assert not m.turns[0].legal


def test_reasons_are_listed_in_the_rules_file_s_order_whichever_check_finds_them():
    """A verdict's reasons in rule-id order (B1 ... B7), as any referee following the rules
    file would list them: yellow out of turn, off its corner, is B3 then B7."""
    m = play([("Y", [(5, 5)])])
    assert codes(m.turns[0]) == ["first_not_in_corner", "wrong_turn"]
    assert [v.rule for v in m.turns[0].violations] == ["B3", "B7"]


def test_skipping_a_colour_with_no_move_is_not_wrong_turn():
    from rules.placement import Match, Position

    b, r = blokus.board(), blokus.rules()
    walled = (Position().add(b, "B", "1", b.mask([(0, 0)]))
              .add(b, "Y", "2", b.mask([(0, 19), (1, 19)])).add(b, "Y", "1", b.mask([(1, 1)])))
    m = Match(r, walled, to_move=0).play(Move("Y", ((2, 18), (2, 17), (2, 16))))
    assert m.turns[-1].legal  # blue has no legal placement: an implicit pass
    free = Position().add(b, "B", "1", b.mask([(0, 0)])).add(b, "Y", "2", b.mask([(0, 19), (1, 19)]))
    m = Match(r, free, to_move=0).play(Move("Y", ((2, 18), (2, 17), (2, 16))))
    assert codes(m.turns[-1]) == ["wrong_turn"]


def test_every_violation_reported_at_once():
    m = play(OPENING + [("B", [(0, 19), (0, 20), (5, 5)])])
    assert {"off_board", "overlap", "not_a_piece"} <= set(codes(m.turns[-1]))


def test_fixed_corners_setting():
    m = play([("B", [(19, 19)])], Setup(fixed_corners=True))
    assert codes(m.turns[0]) == ["first_not_in_corner"]
    m = play([("B", [(19, 19)])], Setup(fixed_corners=False))
    assert m.turns[0].legal


def test_pinned_start():
    m = play([("B", [(0, 0)])], Setup(starts={"B": (0, 19)}))
    assert codes(m.turns[0]) == ["first_not_in_corner"]


def test_game_ends_when_no_colour_can_place():
    import numpy as np
    from rules.placement import random_playout

    m = random_playout(blokus.rules(), np.random.default_rng(7))
    assert m.over
    assert all(t.legal for t in m.turns)


# --- variants ---------------------------------------------------------------------------

def test_team_variant_sums_partners():
    m = play(OPENING)
    sheet = blokus.score(m.position, Setup(variant="team"))
    by_name = {p.name: p for p in sheet.players}
    assert by_name["Blue & Red"].score == -88 * 2
    assert by_name["Blue & Red"].colours == ("B", "R")


def test_two_player_variant():
    setup = Setup(variant="two-player")
    m = play(OPENING + [("B", [(1, 1), (1, 2)])], setup)
    sheet = blokus.score(m.position, setup)
    assert sheet.ranking == ["Player 1", "Player 2"]
    assert sheet.players[0].score == -(86 + 88)


def test_three_player_shared_neutral_follows_rules_unscored():
    setup = Setup(variant="three-player-shared")
    m = play(OPENING + [("B", [(1, 1)])], setup)
    assert all(t.legal for t in m.turns[:4])
    m = play([("B", [(0, 0)]), ("Y", [(0, 19)]), ("R", [(19, 19)]), ("G", [(5, 5)])], setup)
    assert codes(m.turns[-1]) == ["first_not_in_corner"]
    sheet = blokus.score(m.position, setup)
    assert [p.name for p in sheet.players] == ["Blue", "Yellow", "Red"]


def test_three_player_free_neutral_unchecked():
    setup = Setup(variant="three-player-free")
    m = play([("G", [(5, 5), (6, 6)]), ("B", [(0, 0)]), ("G", [(9, 9)]), ("Y", [(0, 19)]),
              ("R", [(19, 19)]), ("B", [(1, 1), (1, 2)])], setup)
    assert all(t.legal for t in m.turns), [codes(t) for t in m.turns]
    assert m.rules.rotation == ("B", "Y", "R")
    m = play([("G", [(0, 0)]), ("B", [(0, 0)])], setup)
    assert codes(m.turns[-1]) == ["overlap"]


def test_neutral_colour_holder_is_not_ranked():
    """V4: the fourth colour "is neutral and unscored": a record that seats it with a player of its
    own (every colour held by someone) ranks three players, not a neutral "player" on 0 in first place."""
    seats = (("Ann", ("B",)), ("Bob", ("Y",)), ("Cid", ("R",)), ("Neutral", ("G",)))
    for variant in ("three-player-shared", "three-player-free"):
        setup = Setup(variant=variant, players=seats)
        sheet = blokus.score(play(OPENING[:3]).position, setup)
        assert sheet.ranking == ["Ann", "Bob", "Cid"]
        assert [p.score for p in sheet.players] == [-88, -88, -88]


def test_a_player_without_colours_is_refused():
    """V1-V4 seat every player at one or two colours; a player holding none would score 0 and win."""
    with pytest.raises(ValueError, match="holds no colour"):
        Setup(players=(("Ann", ("B",)), ("Bob", ("Y",)), ("Cid", ("R",)), ("Dee", ("G",)), ("Eve", ())))


def test_three_player_free_neutral_has_no_turn_to_pass():
    """V4 neutral_free: the neutral is "laid out in any arrangement ... and is not checked"; it has
    no turn (B7), so a pass recorded for it is no `illegal_pass` although it could still be laid."""
    m = play([("G", "pass"), ("B", [(0, 0)])], Setup(variant="three-player-free"))
    assert [codes(t) for t in m.turns] == [[], []]


def test_unknown_variant_rejected():
    with pytest.raises(ValueError):
        Setup(variant="five-player")


# --- scoring ------------------------------------------------------------------------------

def full_board_for(colour: str):
    """A position where ``colour`` has placed all 21 pieces (laid directly, no turn order)."""
    from rules.placement import Position

    b, ps = blokus.board(), blokus.pieces()
    pos = Position()
    r = c = tallest = 0
    for piece in ps.pieces:
        left = min(y for _, y in piece.orientations[0])
        form = sorted((x, y - left) for x, y in piece.orientations[0])
        height = max(x for x, _ in form) + 1
        width = max(y for _, y in form) + 1
        if c + width > 20:
            r, c, tallest = r + tallest + 1, 0, 0
        pos = pos.add(b, colour, piece.id, b.mask((r + x, c + y) for x, y in form))
        c, tallest = c + width + 1, max(tallest, height)
    return pos


def test_all_pieces_placed_bonus_15_and_undecided_s3():
    pos = full_board_for("B")
    sheet = blokus.score(pos)
    blue = next(p for p in sheet.players if p.colours == ("B",))
    assert (blue.score, blue.bonus, blue.penalty, blue.remaining) == (15, 15, 0, ())
    assert [u.rule for u in sheet.undecided] == ["S3"]
    assert sheet.ranking[0] == "Blue"


def test_monomino_last_gives_20():
    pos = full_board_for("B")
    sheet = blokus.score(pos, last_piece={"B": "1"})
    assert sheet.players[0].score == 20 and not sheet.undecided
    sheet = blokus.score(pos, last_piece={"B": "X"})
    assert sheet.players[0].score == 15


def test_s3_counts_the_last_piece_laid_not_a_refused_attempt():
    """B/S3: +20 "when all 21 are placed and the last one placed was the monomino". A later
    move refused as overlapping (nothing laid) does not make another piece "the last placed"."""
    from rules.placement import Match, Position

    r, b = blokus.rules(), blokus.board()
    pos = Position()
    for placed in full_board_for("B").placed:
        if placed.piece != blokus.MONOMINO:
            pos = pos.add(b, "B", placed.piece, placed.mask)
    monomino = next(m for p, m in legal_placements(r, pos, "B") if p == blokus.MONOMINO)
    m = Match(r, pos).play(Move("B", tuple(b.cells_of(monomino))))
    assert blokus.score_match(m, Setup()).players[0].bonus == 20
    u_cells = next(b.cells_of(p.mask) for p in pos.placed if p.piece == "U")
    for colour in ("Y", "R", "G"):
        m = m.play(Move(colour, passed=True))
    m = m.play(Move("B", tuple(u_cells)))  # the U again, on top of itself: refused, not laid
    assert codes(m.turns[-1])[:2] == ["overlap", "piece_already_used"]
    sheet = blokus.score_match(m, Setup())
    assert (sheet.players[0].name, sheet.players[0].bonus, sheet.players[0].score) == ("Blue", 20, 20)


def test_ties_share_a_place_and_are_explained():
    m = play(OPENING)
    sheet = blokus.score(m.position)
    assert {p.place for p in sheet.players} == {1}
    assert "remain tied" in sheet.tiebreak[-1]


def test_scores_json_shape():
    doc = blokus.score(play(OPENING).position).to_json()
    assert set(doc) >= {"players", "ranking", "tiebreak", "flags", "undecided"}
    assert set(doc["players"][0]) >= {"name", "colours", "score", "penalty", "bonus", "remaining"}
    assert doc["players"][0]["penalty"] == 88


# --- decomposition of a board state ---------------------------------------------------------

def empty_rows():
    return [["."] * 20 for _ in range(20)]


def rows_of(grid):
    return ["".join(r) for r in grid]


def test_decompose_finished_game_matches_play():
    import numpy as np
    from rules.placement import random_playout

    m = random_playout(blokus.rules(), np.random.default_rng(11))
    d = blokus.decompose(blokus.board_rows(m.position))
    assert d.flags == ()
    for colour in blokus.COLOURS:
        assert d.position.used.get(colour) == m.position.used.get(colour)
    assert blokus.score(d.position).to_json()["players"] == blokus.score(m.position).to_json()["players"]


def test_decompose_flags_region_that_is_not_a_piece():
    g = empty_rows()
    for c in range(6):
        g[0][c] = "B"
    d = blokus.decompose(rows_of(g))
    assert [f.code for f in d.flags] == ["not_a_piece"]
    assert blokus.score(d.position, flags=d.flags).undecided[0].rule == "S1"


def test_decompose_flags_repeated_piece_and_loose_piece():
    g = empty_rows()
    g[0][0] = "B"
    g[1][1] = "B"  # monomino twice, chained
    g[10][10] = "B"
    g[10][11] = "B"  # a domino chained to nothing
    d = blokus.decompose(rows_of(g))
    assert [f.code for f in d.flags] == ["piece_already_used", "no_corner_contact"]
    assert d.flags[1].cells == ((10, 10), (10, 11))


def test_decompose_flags_colour_without_corner_piece():
    g = empty_rows()
    g[5][5] = "R"
    d = blokus.decompose(rows_of(g))
    assert [(f.rule, f.code) for f in d.flags] == [("B3", "first_not_in_corner")]


def test_decompose_flags_a_colour_started_twice():
    # Corners are not fixed: each blue chain covers a corner, but a colour has one first piece
    # (B3), so the smaller chain, touching the other at no corner, grew from a second one.
    g = empty_rows()
    g[0][0] = "B"
    g[1][1] = g[1][2] = "B"  # a domino chained to the monomino
    g[19][17] = g[19][18] = g[19][19] = "B"  # a tromino on the opposite corner
    d = blokus.decompose(rows_of(g))
    assert [(f.rule, f.code) for f in d.flags] == [("B4", "no_corner_contact")]
    assert d.flags[0].cells == ((19, 17), (19, 18), (19, 19))


@pytest.mark.parametrize("rows, message", [
    (["." * 20] * 19, "20 rows"),
    (["." * 19] * 20, "20 characters"),
    (["X" + "." * 19] + ["." * 20] * 19, "unknown colour letter"),
])
def test_bad_states(rows, message):
    with pytest.raises(ValueError, match=message):
        blokus.parse_board(rows)


def test_check_placement_is_pure():
    r = blokus.rules()
    m = play(OPENING)
    before = m.position
    check_placement(r, m.position, "B", [(1, 1)])
    assert m.position is before and m.position.placed == before.placed


def test_unread_cells_are_named_in_undecided_and_the_scores_kept():
    from rules import blokus as rb
    sheet = rb.score_state({"game": "blokus", "board": ["." * 20] * 20}, rb.Setup(), None)
    assert sheet.with_unread([], "on the overlay") is sheet
    named = sheet.with_unread([[0, 1]] * 13 + ["P 0 0 0"], "on the overlay")
    assert named.players == sheet.players and len(named.undecided) == len(sheet.undecided) + 1
    message = named.undecided[-1].message
    assert message.startswith("14 cell(s) could not be read with confidence: (0,1), (0,1)")
    assert message.endswith("and 2 more; check them on the overlay")
