"""Equilibrix Combact: the Flower-of-Life counts, every reason code, the five-dot principle
with and without the 5+1 token, territory and marker scoring, KOMBO."""
import json
from collections import Counter

import numpy as np
import pytest

from rules import equilibrix as eq
from rules import flower
from rules.board import bits
from rules.equilibrix import Game, Move, Setup


def F(*ids):
    return tuple(flower.parse_field(i) for i in ids)


def codes(turn):
    return [v.code for v in turn.violations]


def test_lattice_counts():
    b = flower.board()
    assert len(flower.NODES) == 37
    assert len(b.cells) == 144
    assert sum(c[2] < 3 for c in b.cells) == 90 and sum(c[2] >= 3 for c in b.cells) == 54
    per_node = Counter(n for f in b.cells for n in flower.field_nodes(f))
    assert sorted(Counter(per_node.values()).items()) == [(5, 6), (7, 12), (12, 19)]
    assert sum(per_node.values()) == 342


def test_one_sixth_and_symmetry():
    b = flower.board()
    for turn in flower.FLOWER.rotations:
        assert {turn(f) for f in b.cells} == set(b.cells)
    # the six 60-degree sectors hold 9 triangles and 15 petals each (centroid angle)
    import math

    sector = [f for f in b.cells if 0 <= math.atan2(-flower.centroid(f)[1], flower.centroid(f)[0]) < math.pi / 3 - 1e-9]
    assert Counter(f[2] >= 3 for f in sector) == {True: 9, False: 15}


def test_arc_sharing_is_petal_triangle_on_the_same_edge():
    b = flower.board()
    petal = flower.parse_field("P 0 0 0")
    near = set(b.cells_of(b.edge[b.index[petal]]))
    assert near == set(F("T 0 0 +", "T 0 -1 -"))
    tri = flower.parse_field("T 0 0 +")
    assert set(b.cells_of(b.edge[b.index[tri]])) == set(F("P 0 0 0", "P 0 0 1", "P 1 0 2"))


def test_field_ids_round_trip():
    for f in flower.board().cells:
        assert flower.parse_field(flower.field_id(f)) == f
    with pytest.raises(ValueError):
        flower.parse_field("Q 0 0 0")


SETUP = Setup(ring=("duo-1", "fan-1", "bow-1", "star-1", "chain-1", "kite-1", "duo-2", "fan-2"))


def test_legal_opening_moves_origin():
    g = Game.start(SETUP)
    assert g.offered("B") == ["duo-1", "fan-1", "bow-1", "star-1"]
    g = g.play(Move("B", F("T 0 0 +", "P 1 0 2", "T 0 0 -"), "bow-1"))
    assert g.turns[0].legal
    assert g.offered("W") == ["star-1", "chain-1", "kite-1", "duo-2"]


def test_tile_not_offered():
    g = Game.start(SETUP).play(Move("B", F("P 0 0 0", "T 0 0 +"), "kite-1"))
    assert codes(g.turns[0]) == ["tile_not_offered"]
    g = Game.start(SETUP).play(Move("B", F("P 0 0 0", "T 0 0 +"), "fan-1"))  # wrong shape
    assert codes(g.turns[0]) == ["tile_not_offered"]


def test_mini_tiles_at_most_twice():
    g = Game.start(SETUP)
    g = g.play(Move("B", F("P 0 0 0")))  # petal mini, Origin stays
    assert g.turns[-1].legal and g.offered("W")[0] == "duo-1"
    g = g.play(Move("W", F("P 2 0 0")))
    g = g.play(Move("B", F("P 0 0 1")))  # B's petal mini is gone
    assert codes(g.turns[-1]) == ["no_mini_tile_left"]
    g = g.play(Move("W", F("T 2 0 +")))
    g = g.play(Move("B", F("T -1 0 +")))
    assert g.turns[-1].legal  # second mini-tile turn: the triangle


def test_off_board_overlap_not_connected():
    g = Game.start(SETUP).play(Move("B", F("P 3 0 0", "T 3 0 +"), "duo-1"))
    assert "off_board" in codes(g.turns[0])
    g = Game.start(SETUP).play(Move("B", F("P 0 0 0", "T 0 0 +"), "duo-1"))
    g = g.play(Move("W", F("T 0 0 +", "P 0 0 1", "P 0 0 0"), "fan-1"))
    assert "overlap" in codes(g.turns[-1])
    g = Game.start(SETUP).play(Move("B", F("P 0 0 0", "T 0 0 +"), "duo-1"))
    g = g.play(Move("W", passed=True))
    g = g.play(Move("B", F("T -3 2 +", "P -3 2 1", "P -3 2 0"), "bow-1"))
    assert "not_connected" in codes(g.turns[-1])


def around_node(colour_fields):
    """A game where black already holds ``colour_fields`` (laid directly)."""
    b = flower.board()
    g = Game.start(SETUP)
    return Game(**{**g.__dict__, "own": {"B": b.mask(colour_fields), "W": 0}})


def test_five_dots_and_the_token():
    ring = flower.fields_at((0, 0))  # the twelve fields round node (0,0)
    g = around_node(ring[:5])  # black holds five of them; one more makes six
    extra = next(f for f in ring[5:] if f[2] < 3)  # a petal at (0,0): a mini-tile
    without = g.play(Move("B", (extra,)))
    assert codes(without.turns[-1]) == ["too_many_dots"]
    assert without.turns[-1].violations[0].rule == "E5"
    with_token = g.play(Move("B", (extra,), token=True))
    assert with_token.turns[-1].legal
    assert with_token.tokens == {"B": 0, "W": 2}
    again = with_token.play(Move("W", passed=True))
    seven = next(f for f in ring if f[2] >= 3 and f not in ring[:5])
    again = again.play(Move("B", (seven,), token=True))
    assert "too_many_dots" in codes(again.turns[-1])  # no token left


def test_wrong_turn_and_passes():
    g = Game.start(SETUP).play(Move("W", passed=True))
    assert codes(g.turns[0]) == ["wrong_turn"]
    g = Game.start(Setup(variant="zdrzovacka", ring=SETUP.ring)).play(Move("B", passed=True))
    assert codes(g.turns[0]) == ["illegal_pass"]
    g = Game.start(SETUP).play(Move("B", passed=True)).play(Move("W", passed=True))
    assert g.over  # AUTONOMIE: two passes in a row end the game


def random_game(setup, seed):
    rng, g = np.random.default_rng(seed), Game.start(setup)
    while not g.over and len(g.turns) < 80:
        moves = list(g.legal_moves(g.colour_to_move))
        g = g.play(moves[rng.integers(len(moves))] if moves else Move(g.colour_to_move, passed=True))
    return g


@pytest.mark.parametrize("variant", eq.VARIANTS)
def test_self_play_no_false_alarms(variant):
    setup = Setup(variant=variant)
    g = random_game(setup, 4)
    assert g.over and all(t.legal for t in g.turns)
    again = eq.play_all(setup, [t.move for t in g.turns])
    assert all(t.legal for t in again.turns)
    for colour in eq.COLOURS:  # E5 holds at every node
        for node_mask in eq._nodes_mask().values():
            assert bin(g.own[colour] & node_mask).count("1") <= 6


def test_territory_example():
    # Black rings the empty triangle T 0 0 + with its three petals: 1 field of territory.
    b = flower.board()
    own = {"B": b.mask(F("P 0 0 0", "P 0 0 1", "P 1 0 2")), "W": 0}
    assert eq.territory(own)["B"] >= 1
    inside = eq.territory({"B": own["B"], "W": b.mask(F("P 3 -3 2"))})
    assert inside["B"] == 1 and inside["W"] == 0
    # White filling the ringed triangle: the rest of the board (140 fields) borders only black
    own_w = {"B": own["B"], "W": b.mask(F("T 0 0 +"))}
    assert eq.territory(own_w) == {"B": 140, "W": 0}


def test_markers_scoring_and_tiebreak():
    b = flower.board()
    markers = eq.DEFAULT_MARKERS
    black_own = [n for n, c in markers.items() if c == "B"][:2]
    white_own = [n for n, c in markers.items() if c == "W"][:2]
    pick = lambda node: next(f for f in flower.fields_at(node) if f in b.index)
    # Black joins two black markers; white joins two white markers and one black one.
    beside = next(f for f in flower.fields_at(black_own[1]) if f in b.index and f != pick(black_own[1]))
    own = {"B": b.mask([pick(n) for n in black_own]), "W": b.mask([pick(n) for n in white_own] + [beside])}
    sheet = eq.score_fields(own, Setup(variant="tri-mety"))
    assert [p.score for p in sheet.players] == [2, 2]
    assert sheet.ranking == ["White", "Black"]  # tie on own markers; white joined a black one
    assert sheet.tiebreak[-1].startswith("TŘI METY")


def test_kombo():
    g1 = eq.KomboGame(Setup(variant="autonomie"), "B")
    good = eq.KomboGame(Setup(variant="tri-mety", offered={"W": 5, "B": 3}), "W")
    bad = eq.KomboGame(Setup(variant="autonomie", offered={"W": 4, "B": 4}), "W")
    assert eq.kombo_problems([g1, good]) == []
    assert len(eq.kombo_problems([g1, bad])) == 2
    assert eq.kombo_winner([g1, good]) is None
    assert eq.kombo_winner([g1, good, eq.KomboGame(Setup(variant="zdrzovacka", offered={"B": 5, "W": 3}), "W")]) == "W"


def test_state_round_trip_and_bad_state():
    b = flower.board()
    own = {"B": b.mask(F("P 0 0 0")), "W": b.mask(F("T 1 0 -"))}
    assert eq.parse_fields(eq.fields_json(own)) == own
    with pytest.raises(ValueError, match="off the board"):
        eq.parse_fields({"P 3 0 0": "B"})
    with pytest.raises(ValueError, match="unknown colour"):
        eq.parse_fields({"P 0 0 0": "R"})


def test_check_command(tmp_path, capsys):
    from tableref.cli import main

    g = random_game(Setup(variant="tri-mety"), 9)
    record = {"game": "equilibrix", "variant": "tri-mety", "moves": [
        {"colour": t.move.colour, "pass": True} if t.move.passed else
        {"colour": t.move.colour, "fields": [flower.field_id(f) for f in t.move.fields],
         **({"tile": t.move.tile} if t.move.tile else {}), **({"token": True} if t.move.token else {})}
        for t in g.turns]}
    path = tmp_path / "eq.json"
    path.write_text(json.dumps(record))
    assert main(["check", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(m["legal"] for m in doc["moves"])
    assert doc["scores"] == eq.score(g).to_json()


@pytest.mark.parametrize("settings, code", [
    ({"offered": None}, "bad_format"),
    ({"offered": 0}, "bad_format"),
    ({"offered": "x"}, "bad_format"),
    ({"offered": [1]}, "bad_format"),
    ({"offered": {"B": 0, "W": 4}}, "bad_setup"),
    ({"offered": {"B": 4}}, "bad_setup"),
    ({"shapes": {"a": 1}}, "bad_format"),
    ({"markers": [["x", 0, "W"]]}, "bad_format"),
])
def test_bad_settings_are_refused_in_one_line(settings, code):
    from rules.records import InvalidInput, setup_of

    with pytest.raises(InvalidInput) as e:
        setup_of("equilibrix", {"game": "equilibrix", "settings": settings})
    assert e.value.code == code


def test_parse_fields_refuses_two_keys_naming_one_field():
    """"P 0 0 0" and "P 0 0  0" (two spaces) both read as one petal: its colour would be a guess."""
    own = eq.parse_fields({"P 0 0  0": "B"})
    assert own["B"] == eq.parse_fields({"P 0 0 0": "B"})["B"] and own["W"] == 0
    with pytest.raises(ValueError, match="fields 'P 0 0 0' and 'P 0 0  0' are one field"):
        eq.parse_fields({"P 0 0 0": "B", "P 0 0  0": "W"})


def test_a_legal_board_s_colours_are_each_one_network_and_a_lone_field_splits_one():
    """E4 as a property of any board (what a camera reading is checked against): after random
    legal games each colour's fields form one node-connected network; a field apart makes two."""
    for variant in eq.VARIANTS:
        g = random_game(Setup(variant=variant), 4)
        assert all(len(eq.networks(g.own[c])) == 1 for c in eq.COLOURS if g.own[c])
    b = flower.board()
    near, far = b.mask(F("P 0 0 0", "T 0 0 +")), b.mask(F("P 3 -3 1"))
    assert eq.networks(near) == [near]
    assert sorted(eq.networks(near | far)) == sorted([near, far])
    # Touching at a node is enough (E4's "shares a node"); arc-sharing parts need a shared side.
    corner = b.mask(F("P 0 0 0", "P 0 -1 1"))  # two petals meeting only at node (0, 0)
    assert len(eq.networks(corner)) == 1 and len(b.components(corner)) == 2


def test_mini_tiles_cover_one_petal_and_one_triangle_of_a_colour():
    """E2: each colour's two mini-tiles are one petal and one triangle; more needs a ring tile."""
    assert eq.minis_cover(F("P 0 0 0", "T 2 -3 +")) and eq.minis_cover(F("T 0 0 +")) and eq.minis_cover(())
    assert not eq.minis_cover(F("P 0 0 0", "P 1 0 0")) and not eq.minis_cover(F("P 0 0 0", "T 0 0 +", "T 0 0 -"))
    assert [eq.mini_kind(c) for c in F("P 1 -1 2", "T 0 0 -")] == ["petal", "triangle"]


def test_zdrzovacka_a_record_stopping_where_the_player_to_move_cannot_move_is_lost_by_that_player():
    """ZDRŽOVAČKA: "the first player who cannot make a legal move loses. No passing." The loss
    is the rule's, not the pass's: a record that stops at Black's turn, with the ring empty
    and Black's mini-tiles spent, is over and won by White, pass written or not."""
    setup = Setup(variant="zdrzovacka", ring=("duo-1", "duo-2"))
    moves = [Move("B", F("P 0 0 0", "T 0 0 +"), "duo-1"), Move("W", F("P 2 0 0", "T 2 0 +"), "duo-2"),
             Move("B", F("P 0 0 1")), Move("W", F("P 2 0 1")), Move("B", F("T -1 0 +")), Move("W", F("T 1 0 +"))]
    g = eq.play_all(setup, moves)
    assert all(t.legal for t in g.turns) and g.colour_to_move == "B" and not g.can_move("B")
    assert g.over
    sheet = eq.score(g)
    assert [(p.name, p.score, p.place) for p in sheet.players] == [("White", 1, 1), ("Black", 0, 2)]
    assert sheet.undecided == ()
    passed = g.play(Move("B", passed=True))  # the same end with the pass written
    assert passed.turns[-1].legal and passed.over and eq.score(passed).ranking == ["White", "Black"]
    assert not eq.play_all(setup, moves[:-1]).over  # White, to move, still has its triangle


def test_a_tile_laid_over_its_own_colour_shares_its_nodes_so_only_the_overlap_is_flagged():
    """E4: "every later one touches (shares a node with) a field of the same colour". A
    mini-tile put down on Black's own lone petal shares that petal's nodes: the verdict is
    E3's overlap alone, not E4's not_connected as well."""
    g = Game.start(SETUP).play(Move("B", F("P 0 0 0")))  # Black's first field, a petal mini
    g = g.play(Move("W", passed=True)).play(Move("B", F("P 0 0 0")))
    assert codes(g.turns[-1]) == ["no_mini_tile_left", "overlap"]  # in rule order: E2, E3


def test_autonomie_ends_when_both_players_pass_one_after_the_other_not_one_player_twice():
    """AUTONOMIE / TŘI METY: "the game ends after two passes in a row" -- the rule sheet: when
    both players pass right after each other. Black passing twice (the second out of turn) ends
    nothing; White's pass after it does."""
    g = Game.start(SETUP).play(Move("B", passed=True)).play(Move("B", passed=True))
    assert codes(g.turns[-1]) == ["wrong_turn"] and not g.over
    assert g.play(Move("W", passed=True)).over


def test_zdrzovacka_two_passes_in_a_row_do_not_end_the_game():
    """ZDRŽOVAČKA has no passing: it ends only when a player cannot move. Two passes made while
    moves were left are each flagged and end nothing (ending after two passes is AUTONOMIE's and
    TŘI METY's rule)."""
    g = Game.start(Setup(variant="zdrzovacka", ring=SETUP.ring))
    g = g.play(Move("B", passed=True)).play(Move("W", passed=True))
    assert [codes(t) for t in g.turns] == [["illegal_pass"], ["illegal_pass"]]
    assert not g.over and eq.score(g).undecided


def test_a_mini_tile_that_needs_the_5_plus_1_token_is_a_legal_move_left():
    """E2 + E5: a mini-tile may be played with the 5+1 token like any tile. Black's only move
    left is its petal mini-tile as the sixth field at node (0,0), with the token: Black can
    still move, so in ZDRŽOVAČKA the game is not over and a pass is illegal."""
    b = flower.board()
    ring = flower.fields_at((0, 0))
    black = [f for f in ring if f[2] >= 3][:5]  # five triangles round (0,0)
    last = next(f for f in ring if f[2] < 3)  # a petal there: Black's sixth dot
    white = b.full & ~b.mask(black + [last])
    setup = Setup(variant="zdrzovacka", ring=())
    g = Game(**{**Game.start(setup).__dict__, "own": {"B": b.mask(black), "W": white}})
    assert g.check(Move("B", (last,)))[1] and not g.check(Move("B", (last,), token=True))[1]
    assert list(g.legal_moves("B")) == [Move("B", (last,), token=True)]
    assert g.can_move("B") and not g.over
    assert codes(g.play(Move("B", passed=True)).turns[-1]) == ["illegal_pass"]
