"""Gemblo: board geometry, piece set, every reason code, the bridge rule, tiebreaks."""
from collections import Counter

import numpy as np
import pytest

from rules import gemblo
from rules.gemblo import Setup
from rules.lattice import HEX
from rules.placement import Match, Move, Position, check_placement, legal_placements, play_all, random_playout


def codes(violations):
    return [v.code for v in violations]


def test_board_figures():
    b = gemblo.board()
    assert len(b.cells) == 463
    columns = Counter(q for q, _ in b.cells)
    assert [columns[q] for q in sorted(columns)] == [1, 4, 7, 10, 13, 16, 19, 22] + [21, 22] * 6 + \
        [21] + [22, 19, 16, 13, 10, 7, 4, 1]
    assert all(b.index.get(c) is not None for c in gemblo.CORNERS)
    # each corner is a single cell: it has only two or three neighbours on the board
    assert all(bin(b.edge[b.index[c]]).count("1") <= 3 for c in gemblo.CORNERS)


def test_zones():
    assert len(gemblo.zone_cells("4p")) == 295
    assert len(gemblo.zone_cells("4p", rotated_4p=True)) == 295
    assert len(gemblo.zone_cells("3p")) == 241
    assert set(gemblo.FOUR_STARTS) <= set(gemblo.zone_cells("4p"))
    assert set(gemblo.FOUR_STARTS_ROTATED) <= set(gemblo.zone_cells("4p", True))


def test_piece_set():
    ps = gemblo.pieces()
    assert len(ps.pieces) == 18 and ps.total_cells == 72
    assert ps.identify([(0, 0), (0, 1), (0, 2), (1, 0)]) is None  # a tetrahex not in the set
    assert ps.identify([(0, 0), (0, 1), (0, 2), (1, 2)]) is None
    for piece in ps.pieces:
        for form in piece.orientations:
            assert ps.identify([(q + 3, r - 2) for q, r in form]) == piece.id


def test_five_player_starts_are_off_the_rim_and_distinct():
    starts = gemblo.five_player_starts()
    b = gemblo.board()
    assert len(set(starts)) == 5
    assert all(bin(b.edge[b.index[c]]).count("1") == 6 for c in starts)


def lay(*pieces):
    """A position from (colour, piece id, cells) triples, laid without turn checks."""
    b, pos = gemblo.board(), Position()
    for colour, pid, cells in pieces:
        pos = pos.add(b, colour, pid, b.mask(cells))
    return pos


R6 = gemblo.rules(Setup())


# Bridge from A=(0,0) to B=(1,1); C=(1,0) and D=(0,1) lie between.
def test_bridge_open_when_between_cells_empty():
    pos = lay(("C", "P01", [(0, 0)]))
    piece, problems = check_placement(R6, pos, "C", [(1, 1), (2, 1)])
    assert piece == "P02" and problems == []


def test_bridge_blocked_by_one_piece_covering_both():
    pos = lay(("C", "P01", [(0, 0)]), ("R", "P02", [(1, 0), (0, 1)]))
    _, problems = check_placement(R6, pos, "C", [(1, 1), (2, 1)])
    assert codes(problems) == ["connection_blocked"]
    assert problems[0].rule == "M6"


def test_bridge_stands_between_two_different_pieces():
    pos = lay(("C", "P01", [(0, 0)]), ("R", "P01", [(1, 0)]), ("Y", "P01", [(0, 1)]))
    assert check_placement(R6, pos, "C", [(1, 1), (2, 1)])[1] == []
    pos = lay(("C", "P01", [(0, 0)]), ("R", "P01", [(1, 0)]), ("R", "P02", [(0, 1), (-1, 2)]))
    assert check_placement(R6, pos, "C", [(1, 1), (2, 1)])[1] == []  # same colour, different pieces


def test_bridge_stands_with_one_side_covered():
    pos = lay(("C", "P01", [(0, 0)]), ("R", "P01", [(1, 0)]))
    assert check_placement(R6, pos, "C", [(1, 1), (2, 1)])[1] == []


def test_bridge_open_at_the_rim():
    # A at corner (14,-7); B = A + (-1,-1); between cells (13,-7) and (14,-8): (14,-8) is off the board.
    a, b_ = (14, -7), (13, -8)
    assert not gemblo.on_board((14, -8)) and gemblo.on_board(b_)
    pos = lay(("C", "P01", [a]), ("R", "P01", [(13, -7)]))
    assert check_placement(R6, pos, "C", [b_, (12, -8)])[1] == []


def test_no_connection():
    pos = lay(("C", "P01", [(0, 0)]))
    _, problems = check_placement(R6, pos, "C", [(5, 5), (5, 6)])
    assert codes(problems) == ["no_connection"] and problems[0].rule == "M5"


def test_edge_contact_same_colour():
    pos = lay(("C", "P01", [(0, 0)]))
    _, problems = check_placement(R6, pos, "C", [(1, 0), (1, 1)])
    assert codes(problems) == ["edge_contact_same_colour"]


def test_edge_contact_counts_a_cell_laid_on_its_own_colour():
    """M4: "no cell of the piece shares an edge with a cell of its own colour", also a cell laid
    on top of its own colour (M1 overlap) beside another cell of it."""
    pos = lay(("C", "P02", [(0, 0), (0, 1)]))
    _, problems = check_placement(R6, pos, "C", [(0, 1), (1, 1), (2, 1)])  # (0,1) on clear, beside clear (0,0)
    assert codes(problems) == ["overlap", "edge_contact_same_colour"]
    assert problems[-1].cells == ((0, 1), (1, 1))


def test_off_board_outside_zone_overlap():
    r4 = gemblo.rules(Setup(variant="4p"))
    pos = lay(("C", "P01", [(-3, -9)]))
    _, problems = check_placement(r4, pos, "C", [(0, 10), (1, 10)])  # on the board, outside the zone
    assert "outside_zone" in codes(problems)
    _, problems = check_placement(R6, pos, "C", [(20, 0), (20, 1)])
    assert "off_board" in codes(problems)
    _, problems = check_placement(R6, pos, "R", [(-3, -9)])
    assert "overlap" in codes(problems)


def test_not_a_piece_and_repeat():
    pos = lay(("C", "P01", [(0, 0)]))
    _, problems = check_placement(R6, pos, "C", [(1, 1), (2, 1), (3, 1), (1, 2)])
    assert "not_a_piece" in codes(problems)
    _, problems = check_placement(R6, pos, "C", [(1, 1)])
    assert codes(problems) == ["piece_already_used"]


def test_first_piece_on_its_start():
    m = gemblo.new_match()
    assert m.rules.rotation == ("C", "R", "Y", "G", "B", "P")
    m = m.play(Move("C", ((7, 7),)))
    assert m.turns[0].legal
    m = m.play(Move("R", ((7, 7 - 1),)))
    assert codes(m.turns[1].violations) == ["first_not_on_start"]


def test_turns_and_pass():
    m = gemblo.new_match(Setup(variant="3p")).play(Move("R", ((-10, 5),)))
    assert codes(m.turns[0].violations) == ["wrong_turn"]
    m = gemblo.new_match(Setup(variant="3p")).play(Move("C", passed=True))
    assert codes(m.turns[0].violations) == ["illegal_pass"]


def test_self_play_all_variants_no_false_alarms():
    for variant in gemblo.VARIANTS:
        if variant == "5p":
            continue  # obstacles are laid by the table; covered below
        r = gemblo.rules(Setup(variant=variant))
        played = random_playout(r, np.random.default_rng(3))
        assert played.over
        again = play_all(r, [t.move for t in played.turns])
        assert all(t.legal for t in again.turns), variant
        d = gemblo.decompose(gemblo.cells_json(played.position), Setup(variant=variant))
        assert d.flags == ()


def test_five_players_with_obstacles():
    setup = Setup(variant="5p")
    assert setup.obstacle_colour == "P"
    r = gemblo.rules(setup)
    assert r.rotation == ("C", "R", "Y", "G", "B")
    m = Match(r).play(Move("P", ((0, -10), (0, -9))))  # obstacle laid anywhere, out of turn
    assert m.turns[0].legal
    start = gemblo.five_player_starts()[0]
    m = m.play(Move("C", (start,)))
    assert m.turns[-1].legal


def test_generation_matches_brute_force():
    r = gemblo.rules(Setup(variant="3p"))
    m = random_playout(r, np.random.default_rng(5), 12)
    for colour in r.rotation:
        fast = {mask for _, mask in legal_placements(r, m.position, colour)}
        slow = {mask for _, mask in r.table.masks
                if not check_placement(r, m.position, colour, r.board.cells_of(mask))[1]}
        assert fast == slow


def remaining_only(setup, left):
    """A position where each colour has placed all but the pieces in ``left``."""
    ids = gemblo.pieces().ids
    return Position(used={c: frozenset(p for p in ids if p not in left.get(c, ())) for c in setup.turn_order})


def test_rulebook_tiebreak_example_largest_piece():
    # Seryozha keeps a 3-cell and a 5-cell piece, Dima two 4-cell pieces: 8 each; Dima wins.
    setup = Setup(variant="2p", players=(("Seryozha", ("C",)), ("Dima", ("R",))))
    pos = remaining_only(setup, {"C": ("P05", "P11"), "R": ("P06", "P07")})
    sheet = gemblo.score(pos, setup)
    assert [p.penalty for p in sheet.players] == [8, 8]
    assert sheet.ranking == ["Dima", "Seryozha"]
    assert any(step.startswith("S2") for step in sheet.tiebreak)


def test_rulebook_tiebreak_costs():
    # Same penalty and same largest piece: the lower cost wins (28 against 25 in the rulebook).
    setup = Setup(variant="2p", players=(("Natasha", ("C",)), ("Katya", ("R",))))
    pos = remaining_only(setup, {"C": ("P10", "P18"), "R": ("P07", "P18")})  # 4+5 each; costs 28, 25
    sheet = gemblo.score(pos, setup)
    assert sheet.ranking == ["Katya", "Natasha"]
    assert any(step.startswith("S3") for step in sheet.tiebreak)
    swapped = dict(gemblo.DEFAULT_COSTS, P07=99)
    assert gemblo.score(pos, Setup(variant="2p", players=setup.players, costs=swapped)).ranking == \
        ["Natasha", "Katya"]


def test_two_colours_per_player_summed():
    setup = Setup(variant="2p-double")
    assert setup.turn_order == ("C", "R", "Y", "G")
    sheet = gemblo.score(Position(), setup)
    assert [p.penalty for p in sheet.players] == [144, 144]


@pytest.mark.parametrize("cells, message", [
    ({"30,0": "C"}, "off the 463-cell board"),
    ({"0,0": "X"}, "unknown colour"),
    ({"a": "C"}, "is not 'q,r'"),
])
def test_bad_states(cells, message):
    with pytest.raises(ValueError, match=message):
        gemblo.parse_cells(cells)


def test_state_turned_by_60_degrees_keeps_its_starts():
    """A photo of a board may come out turned by any multiple of 60 degrees, and a state says
    nothing of seating: each colour's first piece may lie on any start cell of the variant, turned."""
    for variant in ("6p", "4p", "3p"):
        played = random_playout(gemblo.rules(Setup(variant=variant)), np.random.default_rng(5))
        turned = {f"{q},{r}": colour for (q, r), colour in (
            (HEX.rotations[1]((int(k.split(",")[0]), int(k.split(",")[1]))), v)
            for k, v in gemblo.cells_json(played.position).items())}
        assert gemblo.decompose(turned, Setup(variant=variant)).flags == (), variant


def test_state_colour_off_every_start_is_flagged():
    cells = {"0,0": "R", "1,0": "R"}  # the centre: no start cell, however the board is turned
    flags = gemblo.decompose(cells).flags
    assert [f.code for f in flags] == ["first_not_on_start"]


def test_pinned_start_is_not_turned():
    corner = gemblo.CORNERS[0]
    other = gemblo.CORNERS[3]
    cells = {f"{other[0]},{other[1]}": "R"}
    assert gemblo.decompose(cells, Setup()).flags == ()
    pinned = Setup(starts={"R": corner, "C": gemblo.CORNERS[1]})  # R and C swap starts
    assert [f.code for f in gemblo.decompose(cells, pinned).flags] == ["first_not_on_start"]


def test_parse_cells_refuses_two_keys_naming_one_cell():
    """"0,0" and "0, 0" both read as (0, 0): which colour is there would be a guess."""
    assert gemblo.parse_cells({"0, 0": "R", "0,1": "Y"}) == {(0, 0): "R", (0, 1): "Y"}
    with pytest.raises(ValueError, match="cells '0,0' and '0, 0' are one cell"):
        gemblo.parse_cells({"0,0": "R", "0, 0": "R"})


@pytest.mark.parametrize("cost", ["x", True, None, [3]])
def test_cost_table_must_hold_numbers(cost):
    """S3 sums the costs of the remaining pieces: a table whose entry is not a number is a bad
    setup (exit 1, ``bad_setup``), not an internal error while ranking nor ``true`` read as 1."""
    from rules.records import InvalidInput, parse_record

    costs = dict(gemblo.DEFAULT_COSTS, P07=cost)
    with pytest.raises(ValueError, match="cost"):
        Setup(costs=costs)
    with pytest.raises(InvalidInput) as refused:
        parse_record({"game": "gemblo", "settings": {"costs": costs}, "moves": []})
    assert refused.value.code == "bad_setup"
    assert Setup(costs=dict(gemblo.DEFAULT_COSTS, P07=2.5)).costs["P07"] == 2.5


def test_a_player_without_colours_is_refused():
    """Each player plays one colour (two in 2p-double); a player holding none would score 0 and win."""
    seats = (("Ann", ("C",)), ("Bob", ("R",)), ("Cid", ("Y",)), ("Dee", ("G",)), ("Eve", ()))
    with pytest.raises(ValueError, match="holds no colour"):
        Setup(variant="4p", players=seats)


def test_five_player_starts_off_the_board_are_refused():
    """The 5-player starts are a setting (gemblo.md, Zones and starts); a start off the 463-cell
    board is a bad setup (exit 1, ``bad_setup``), not an internal error."""
    from rules.records import InvalidInput, parse_record

    starts = [[30, 0], [1, 1], [2, 2], [3, 3], [4, 4]]
    with pytest.raises(InvalidInput) as refused:
        parse_record({"game": "gemblo", "variant": "5p", "settings": {"five_player_starts": starts}, "moves": []})
    assert refused.value.code == "bad_setup" and "[30, 0]" in refused.value.message
