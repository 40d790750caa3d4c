"""Geometrius: polygon features against the catalogue's card oracle, matching camera
polygons, every reason code, the three ways to put chips down, G6a, pushes, the end of the
game, scoring and the star-count tiebreak, states and records."""
import json
import math
from dataclasses import replace
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import geometrius as geo
from rules.geometrius import Game, Hand, Move, Place, Push, Setup, Token
from rules.polygon import CAMERA, EXACT, Card, Predicate, Tolerance, card_matches, features, match_token
from rules.records import InvalidInput

CATALOGUE_DOC = json.loads(resources.files("rules").joinpath("data/geometrius-catalogue.json").read_text("utf-8"))
TOKENS = {t["id"]: t for t in CATALOGUE_DOC["tokens"]}
CATALOGUE = geo.load_catalogue()


def codes(turn):
    return [v.code for v in turn.violations]


# --- polygons and the card oracle ------------------------------------------------------------

def test_catalogue_size():
    assert len(CATALOGUE.shapes) == 40 and len(CATALOGUE.cards) == 30
    assert sum(s.star for s in CATALOGUE.shapes.values()) == 12


@pytest.mark.parametrize("card", CATALOGUE_DOC["cards"], ids=lambda c: c["id"])
def test_card_oracle(card):
    """For every card and every token, the predicate on the vertices is the oracle."""
    c = Card(card["id"], Predicate(**card["predicate"]))
    accepted = [t["id"] for t in CATALOGUE_DOC["tokens"] if card_matches(c, t["vertices"])]
    assert accepted == card["matches"]
    assert [s for s in CATALOGUE.shapes if CATALOGUE.accepts(card["id"], s)] == card["matches"]


def test_features_of_known_shapes():
    square = features(TOKENS["Q01"]["vertices"])
    assert square == {"sides": 4, "sides_odd": False, "max_equal_sides": 4, "equal_side_pairs": 2,
                      "all_sides_equal": True, "right_angles": 4, "acute_angles": 0, "obtuse_angles": 0,
                      "reflex_angles": 0, "convex": True, "max_equal_angles": 4, "all_angles_equal": True,
                      "parallel_side_pairs": 2, "symmetry_axes": 4, "point_symmetric": True}
    star = features(TOKENS["X04"]["vertices"])
    assert (star["sides"], star["acute_angles"], star["reflex_angles"], star["symmetry_axes"]) == (10, 5, 5, 5)
    cross = features(TOKENS["X03"]["vertices"])
    assert (cross["right_angles"], cross["reflex_angles"], cross["parallel_side_pairs"]) == (8, 4, 30)


def moved(vertices, turn, scale, shift, start, backwards):
    """The same polygon rotated, scaled, moved, listed from another vertex, maybe clockwise."""
    c, s = math.cos(turn), math.sin(turn)
    out = [(scale * (c * x - s * y) + shift[0], scale * (s * x + c * y) + shift[1]) for x, y in vertices]
    out = out[start % len(out):] + out[:start % len(out)]
    return out[::-1] if backwards else out


@settings(max_examples=40, deadline=None)
@given(turn=st.floats(0, 2 * math.pi), scale=st.floats(0.05, 200),
       shift=st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), start=st.integers(0, 11), backwards=st.booleans())
def test_features_stable_under_rotation_and_scale(turn, scale, shift, start, backwards):
    for shape in CATALOGUE.shapes.values():
        assert features(moved(shape.vertices, turn, scale, shift, start, backwards)) == shape.features, shape.id


def noisy(vertices, rng, noise=0.001):
    """A camera's view: rotated, scaled, moved, started elsewhere, each vertex off by
    ``noise`` times the polygon's RMS radius."""
    v = np.array(moved(vertices, rng.uniform(0, 2 * math.pi), rng.uniform(0.5, 300), rng.uniform(-500, 500, 2),
                       int(rng.integers(12)), False))
    radius = np.sqrt(((v - v.mean(0)) ** 2).sum(1).mean())
    return (v + rng.normal(0, noise * radius, v.shape)).tolist()


def test_features_with_camera_tolerance():
    rng = np.random.default_rng(7)
    for shape in CATALOGUE.shapes.values():
        assert features(shape.vertices, CAMERA) == shape.features, shape.id  # no false equalities
        for _ in range(5):
            assert features(noisy(shape.vertices, rng), CAMERA) == shape.features, shape.id


def test_tolerance_decides_equal():
    kite = [(0, 0), (1, 0), (1.015, 1.0), (0, 1)]  # sides 1, 1.0001, 1.015, 1 and angles near 90
    assert not features(kite, EXACT)["all_sides_equal"] and features(kite, EXACT)["right_angles"] == 2
    assert features(kite, CAMERA)["all_sides_equal"] and features(kite, CAMERA)["right_angles"] == 4
    assert Tolerance(0.02, 2).same_length(100, 98) and not Tolerance(0.02, 2).same_length(100, 97.9)


def test_match_token_recovers_every_token():
    rng = np.random.default_rng(3)
    shapes = list(CATALOGUE.shapes.values())
    for shape in shapes:
        for _ in range(3):
            m = match_token(noisy(shape.vertices, rng), shapes)
            assert m is not None and m.shape.id == shape.id
            assert m.distance < 0.01


def test_match_token_rejects_mirror_images_and_strangers():
    shapes = list(CATALOGUE.shapes.values())
    chiral = [s for s in shapes if s.features["symmetry_axes"] == 0]
    for shape in chiral:  # a token is never turned over
        m = match_token([(x, -y) for x, y in shape.vertices], shapes)
        assert m is None or m.shape.id != shape.id
    assert match_token([(0, 0), (5, 0), (6, 2), (4, 5), (1, 6), (-1, 4), (-1.5, 1)], shapes) is None


@pytest.mark.parametrize("vertices, words", [
    ([(0, 0), (1, 0)], "at least 3 vertices"),
    ([(0, 0), (2, 2), (2, 0), (0, 2)], "cross"),
    ([(0, 0), (1, 0), (1, 0), (0, 1)], "length zero"),
    ([(0, 0), (1, 0), (2, 0)], "no area"),
    ([(0, 0), (1, 0), (2, 0), (2, 1), (0, 1)], "straight angle"),
    ([(0, 0), ("a", 0), (0, 1)], "pairs of numbers"),
])
def test_not_a_polygon(vertices, words):
    with pytest.raises(ValueError, match=words):
        features(vertices)


# --- the catalogue file ----------------------------------------------------------------------

def write(tmp_path, doc):
    path = tmp_path / "catalogue.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def edited(**changes):
    doc = json.loads(json.dumps(CATALOGUE_DOC))
    for key, change in changes.items():
        change(doc)
    return doc


@pytest.mark.parametrize("doc, words", [
    ("{not json", "not valid JSON"),
    ({"tokens": []}, "'tokens' and 'cards'"),
    (edited(a=lambda d: d["cards"][6]["matches"].remove("Q01")), "card C07 .* omits Q01"),
    (edited(a=lambda d: d["cards"][6]["matches"].append("Q02")), "card C07 .* lists Q02"),
    (edited(a=lambda d: d["cards"][6]["matches"].append("Z99")), "unknown token"),
    (edited(a=lambda d: d["tokens"][0].update(star=True)), "token T01: 'star' is true but the polygon is convex"),
    (edited(a=lambda d: d["tokens"][1].update(id="T01")), "token T01 is listed twice"),
    (edited(a=lambda d: d["tokens"][0].update(vertices=[[0, 0], [1, 1]])), "token T01: a polygon needs"),
    (edited(a=lambda d: d["cards"][0]["predicate"].update(feature="colour")), "card C01: unknown feature"),
    (edited(a=lambda d: d["cards"][0]["predicate"].update(value=True)), "card C01: sides is compared with a whole"),
    (edited(a=lambda d: d["cards"][0]["predicate"].update(op="~")), "unknown comparison"),
])
def test_bad_catalogue(tmp_path, doc, words):
    with pytest.raises(ValueError, match=words) as e:
        geo.load_catalogue(write(tmp_path, doc))
    assert "\n" not in str(e.value)


def test_unreadable_catalogue(tmp_path):
    with pytest.raises(ValueError, match="cannot read the catalogue"):
        geo.load_catalogue(tmp_path / "missing.json")


def test_extended_catalogue_with_a_measured_token(tmp_path):
    doc = edited(a=lambda d: d["tokens"].append({"id": "M01", "measured": True,
                                                 "vertices": [[0, 0], [1.01, 0], [1.0, 0.995], [0.005, 1.0]]}))
    for card in doc["cards"]:
        card.pop("matches")
    cat = geo.load_catalogue(write(tmp_path, doc))
    assert cat.shapes["M01"].star is False  # derived: the polygon is convex
    assert cat.accepts("C07", "M01") and cat.accepts("C23", "M01")  # equal within the camera's 2 % / 2°
    assert geo.parse_catalogue(cat.to_json()) == cat


# --- the game --------------------------------------------------------------------------------

LAYOUT = (("T01", "Q03", "P02", "H01"),  # C01 = 3 sides, C02 = 4 sides, C03 = 5+ sides
          ("T05", "Q01", "P06", "H03"),
          ("T02", "Q10", "P01", "X01"),
          ("T08", "Q05", "H08", "X03"))
PLAYERS = (("Ann", ("red",)), ("Bob", ("blue",)), ("Cy", ("green",)))
SETUP = Setup(players=PLAYERS, layout=LAYOUT)


def P(cards, *at):
    return Place(tuple(cards.split("+")), at)


def T(colour, *actions, hand=None):
    return Move(colour, actions, hand)


def play(*moves, setup=SETUP, game=None):
    game = game or Game.start(setup)
    for move in moves:
        game = game.play(move)
    return game


def stacked(game, **stacks):
    """The game with chips laid out by hand: ``r0c1="blue red"``."""
    tokens = dict(game.tokens)
    for key, chips in stacks.items():
        pos = (int(key[1]), int(key[3]))
        stack = tuple(chips.split())
        tokens[pos] = Token(tokens[pos].shape, stack, len(stack) >= geo.BLOCKING_HEIGHT)
    return replace(game, tokens=tokens)


def test_occupy_any_empty_token():
    g = play(T("red", P("C01", (3, 0))), T("blue", P("C02", (0, 1))), T("green", P("C03", (0, 3)), P("C03", (3, 3))))
    assert all(t.legal for t in g.turns)  # no neighbour needed on an empty token (G2)
    assert g.tokens[(3, 0)].stack == ("red",) and g.tokens[(3, 3)].stack == ("green",)


def test_card_does_not_match():
    g = play(T("red", P("C01", (0, 1))))
    (v,) = g.turns[0].violations
    assert (v.code, v.rule, v.cells) == ("card_does_not_match", "G1", ((0, 1),))
    assert "C01 (exactly 3 sides) does not fit Q03 at (0, 1)" in v.message
    assert g.tokens[(0, 1)].stack == ("red",)  # the record says it happened


def test_one_card_two_empty_tokens():
    g = play(T("red", P("C01", (0, 0), (1, 0))))
    assert g.turns[0].legal and g.tokens[(0, 0)].stack == g.tokens[(1, 0)].stack == ("red",)
    g = play(T("blue", P("C01", (2, 0), (0, 0))), game=g)
    assert codes(g.turns[1]) == ["shared_card_not_empty"]
    g = play(T("red", P("C01", (0, 0), (0, 1))))
    assert [(v.code, v.cells) for v in g.turns[0].violations] == [("card_does_not_match", ((0, 1),))]


def test_capture_next_to_own_top():
    g = play(T("red", P("C01", (0, 0))), T("blue", P("C02", (0, 1))), T("green"), T("red", P("C02", (0, 1))))
    assert g.turns[3].legal
    assert g.tokens[(0, 1)].stack == ("blue", "red")


def test_capture_conditions():
    g = play(T("red", P("C01", (0, 0), (1, 0))), T("blue", P("C03", (3, 3))), T("green"))
    far = play(T("red", P("C03", (3, 3))), game=g)
    (v,) = far.turns[-1].violations
    assert (v.code, v.rule) == ("no_adjacent_own_top", "G3")
    own = play(T("red", P("C01", (0, 0))), game=g)
    assert codes(own.turns[-1]) == ["top_is_own"]


def test_fourth_chip_blocks():
    g = stacked(Game.start(SETUP), r0c0="red", r0c1="blue red blue", r1c1="blue")
    g = play(T("red", P("C02", (0, 1))), game=g)
    assert g.turns[0].legal
    assert g.tokens[(0, 1)].stack == ("blue", "red", "blue", "red") and g.tokens[(0, 1)].blocked  # G4
    g = play(T("blue", P("C02", (0, 1))), game=g)
    assert sorted(codes(g.turns[1])) == ["stack_too_high", "token_blocked"]
    assert {v.rule for v in g.turns[1].violations} == {"G3"}


def test_block_with_two_chips():
    g = play(T("red", P("C01", (0, 0))), T("blue", P("C02", (0, 1))), T("green"),
             T("red", P("C02+C07", (0, 1))))  # Q03, a rhombus: four sides, all equal
    assert g.turns[3].legal
    token = g.tokens[(0, 1)]
    assert token.stack == ("blue", "red", "red") and token.blocked
    g = play(T("blue", P("C02", (1, 1))), T("green"), T("red"), T("blue", P("C02", (0, 1))), game=g)
    assert "token_blocked" in codes(g.turns[-1])


def test_block_on_an_empty_token_and_on_three_chips():
    g = stacked(Game.start(SETUP), r0c0="red", r1c0="blue green blue")
    g = play(T("red", P("C01+C20", (1, 0))), game=g)  # T05: three sides, two equal angles
    assert g.turns[0].legal and g.tokens[(1, 0)].stack == ("blue", "green", "blue", "red", "red")
    g = play(T("blue"), T("green"), T("red", P("C03+C20", (0, 1))), game=g)
    assert [v.code for v in g.turns[-1].violations] == ["card_does_not_match"]  # Q03 has four sides
    g = play(T("blue"), T("green"), T("red", P("C02+C07", (1, 1))), game=g)
    assert g.turns[-1].legal and g.tokens[(1, 1)].blocked  # empty, next to red's block


def test_block_conditions_quote_g5():
    g = stacked(Game.start(SETUP), r0c0="red", r0c1="red", r1c1="blue red blue green", r3c3="blue")
    g = play(T("red", P("C02+C07", (0, 1))), T("blue"), T("green"), T("red", P("C02+C07", (1, 1))),
             T("blue"), T("green"), T("red", P("C03+C07", (3, 3))), game=g)
    assert [(v.code, v.rule) for v in g.turns[0].violations] == [("top_is_own", "G5")]
    assert sorted(codes(g.turns[3])) == ["stack_too_high", "token_blocked"]
    assert {v.rule for v in g.turns[3].violations} == {"G5"}
    assert codes(g.turns[6]) == ["no_adjacent_own_top"]


def test_at_most_two_chips_per_turn():
    g = play(T("red", P("C01", (0, 0)), P("C02+C07", (0, 1))))
    (v,) = g.turns[0].violations
    assert (v.code, v.rule) == ("too_many_chips", "G6") and "3 chips" in v.message
    g = play(T("red", P("C01", (0, 0), (1, 0)), P("C02", (0, 1))))
    assert codes(g.turns[0]) == ["too_many_chips"]


def full_field_without(colour):
    stacks = {f"r{r}c{c}": "blue" for r in range(4) for c in range(4)}
    stacks["r3c3"] = "green"
    return stacked(Game.start(SETUP), **stacks)


def test_a_fault_before_the_turn_s_push_is_placed_where_its_token_lies_after_the_turn():
    g = play(T("red", P("C01", (0, 0), (1, 0))), T("blue", P("C03", (3, 3))), T("green"))
    before = play(T("red", P("C03", (3, 3)), Push("X02", "row", 3, "left")), game=g)
    (v,) = before.turns[-1].violations
    assert (v.code, v.cells) == ("no_adjacent_own_top", ((3, 4),))  # the chip rode the push
    assert before.tokens[(3, 4)].stack == ("blue", "red")
    assert "(3, 3)" in v.message  # the place at the moment of the fault
    after = play(T("red", Push("X02", "row", 3, "left"), P("C03", (3, 4))), game=g)
    (v,) = after.turns[-1].violations
    assert (v.code, v.cells) == ("no_adjacent_own_top", ((3, 4),))


def test_g6a_no_adjacency_when_no_top_and_no_empty_token():
    g = play(T("red", P("C03", (3, 3)), P("C02", (0, 1))), game=full_field_without("red"))
    assert g.turns[0].legal  # neither (3, 3) nor (0, 1) has a red neighbour
    g = play(T("red", P("C02+C07", (0, 1))), game=full_field_without("red"))
    assert g.turns[0].legal  # blocks too


def test_g6a_needs_a_full_field_and_no_own_top():
    with_gap = full_field_without("red")
    with_gap = replace(with_gap, tokens={**with_gap.tokens, (0, 0): Token("T01")})
    g = play(T("red", P("C03", (3, 3))), game=with_gap)
    assert codes(g.turns[0]) == ["no_adjacent_own_top"]
    own_top = stacked(full_field_without("red"), r0c0="blue red")
    g = play(T("red", P("C03", (3, 3))), game=own_top)
    assert codes(g.turns[0]) == ["no_adjacent_own_top"]


def test_push_a_row_and_a_column():
    g = play(T("red", P("C01", (1, 0)), Push("X02", "row", 1, "left")))
    assert g.turns[0].legal
    assert g.tokens[(1, 0)] == Token("X02") and g.tokens[(1, 1)].shape == "T05"
    assert g.tokens[(1, 1)].stack == ("red",) and g.tokens[(1, 4)].shape == "H03"  # chips travel
    g = play(T("blue", Push("Q02", "col", 0, "bottom")), game=g)
    assert g.turns[1].legal
    assert [g.tokens[(r, 0)].shape for r in range(-1, 4)] == ["T01", "X02", "T02", "T08", "Q02"]
    g = play(T("green", Push("T03", "row", 0, "right"), P("C01", (0, 3))), game=g)
    assert g.turns[2].legal  # (0, 3) is judged after the push: T03 took the right end's place
    assert [g.tokens[(0, c)].shape for c in range(-1, 4)] == ["X02", "Q03", "P02", "H01", "T03"]


def test_push_changes_neighbours_within_a_turn():
    g = stacked(Game.start(SETUP), r0c0="red", r1c1="blue")
    g = play(T("red", P("C02", (1, 1))), game=g)
    assert codes(g.turns[0]) == ["no_adjacent_own_top"]
    g = stacked(Game.start(SETUP), r0c0="red", r1c1="blue")
    g = play(T("red", Push("X02", "row", 1, "right"), P("C02", (1, 0))), game=g)  # Q01 now under T01
    assert g.turns[0].legal and g.tokens[(1, 0)].stack == ("blue", "red")


def test_line_too_long_at_five_to_six():
    g = play(T("red", Push("X02", "row", 0, "left")), T("blue", Push("Q02", "row", 0, "right")))
    assert g.turns[0].legal and g.turns[1].violations[0].code == "line_too_long"
    assert g.turns[1].violations[0].rule == "G7" and "row 0" in g.turns[1].violations[0].message
    assert sum(p[0] == 0 for p in g.tokens) == 6  # laid down anyway


def test_disconnected_field():
    g = play(T("red", Push("X02", "row", 0, "left")), T("blue", Push("Q02", "row", 3, "left")),
             T("green", Push("T03", "col", 4, "top")))
    assert g.turns[1].legal
    (v,) = g.turns[2].violations  # column 4 held (0, 4) and (3, 4); the latter moves to (4, 4), alone
    assert (v.code, v.cells) == ("disconnected_field", ((4, 4),))


def test_second_modification_and_other_push_faults():
    g = play(T("red", Push("X02", "row", 0, "left"), Push("Q02", "row", 1, "left")))
    assert codes(g.turns[0]) == ["second_modification"]
    g = play(T("red", Push("X02", "row", 9, "left")), T("blue", Push("T01", "row", 1, "left")),
             T("green", Push("Z99", "col", 1, "top")))
    assert codes(g.turns[0]) == ["empty_line"]
    assert codes(g.turns[1]) == ["token_not_in_hand"]
    assert "already lies on the field" in g.turns[1].violations[0].message
    assert codes(g.turns[2]) == ["unknown_token"]


def test_hands_when_known():
    hands = {"red": Hand(cards=("C01", "C02", "C20", "C20"), tokens=("X02", "Q02", "T03", "P04"))}
    setup = replace(SETUP, hands=hands)
    g = play(T("red", P("C03", (0, 3)), Push("H02", "row", 0, "left")), setup=setup)
    assert sorted(codes(g.turns[0])) == ["card_not_in_hand", "token_not_in_hand"]
    g = play(T("red", P("C20", (0, 0)), Push("X02", "row", 0, "left")), T("blue"), T("green"), setup=setup)
    assert g.turns[0].legal and g.hands["red"] == Hand(None, ("Q02", "T03", "P04"))
    g = play(T("red", P("C07", (1, 1)), Push("X02", "row", 1, "left")), game=g)
    assert codes(g.turns[-1]) == ["token_not_in_hand", "token_not_in_hand"]  # on the field, and not held
    assert g.tokens[(1, 0)].shape == "T05"  # a token that is already down cannot come in again
    g = play(T("blue"), T("green"), T("red", P("C20+C20", (1, 2)), hand=Hand(cards=("C20", "C11"))), game=g)
    assert codes(g.turns[-1]) == ["card_not_in_hand"]  # the stated hand has one C20
    g = play(T("red", P("C99", (0, 0)), P("C01", (7, 7))))  # no hands: only the cards themselves
    assert codes(g.turns[0]) == ["unknown_card", "no_token"]


def test_four_turns_each_then_the_end():
    setup = replace(SETUP, players=PLAYERS[:2])
    g = play(*[T(c) for c in ["red", "blue"] * 3], T("red"), setup=setup)
    assert not g.over and g.colour_to_move == "blue"
    g = play(T("blue"), game=g)
    assert g.over and all(t.legal for t in g.turns)
    g = play(T("red", P("C01", (0, 0))), game=g)
    assert codes(g.turns[-1]) == ["no_turns_left"] and g.turns[-1].violations[0].rule == "G10"
    assert g.tokens[(0, 0)].stack == ()  # nothing happens after the end


def test_wrong_turn():
    g = play(T("blue"))
    assert codes(g.turns[0]) == ["wrong_turn"] and g.colour_to_move == "green"
    with pytest.raises(ValueError, match="does not play"):
        play(T("white"))


def test_a_colour_that_has_made_its_four_turns_is_passed_over():
    """G10: each player makes exactly four turns. Once Red has made its four (three of them out
    of turn, each flagged once), only Blue has turns left: Blue's four turns are its own, in
    turn, not out of turn behind a Red that can no longer move."""
    setup = replace(SETUP, players=PLAYERS[:2])
    g = play(*[T("red")] * 4, *[T("blue")] * 4, setup=setup)
    assert [codes(t) for t in g.turns] == [[]] + [["wrong_turn"]] * 3 + [[]] * 4 and g.over


def test_a_move_by_a_colour_without_turns_leaves_the_turn_where_it_was():
    """G10: a fifth turn is no turn at all (``no_turns_left``): the colour that was to move still
    is. Red has made its four, Green is to move; Red's extra move does not hand the turn to Blue."""
    g = play(*[T(c) for c in ["red", "blue", "green"] * 3], T("red"), T("blue"))
    assert g.colour_to_move == "green"
    g = play(T("red"), T("green"), game=g)
    assert [codes(t) for t in g.turns[-2:]] == [["no_turns_left"], []] and g.over


# --- scoring ---------------------------------------------------------------------------------

def state(*tokens, **extra):
    return {"game": "geometrius", "tokens": [dict(zip(("row", "col", "shape", "stack"), t)) | extra.get(str(i), {})
                                             for i, t in enumerate(tokens)]}


def test_scoring_mixed_stacks():
    doc = state((0, 0, "T01", ["red", "blue", "red"]), (0, 1, "Q03", ["blue"]), (1, 0, "Q01", ["red", "blue"]),
                (1, 1, "P06", ["green", "red", "blue", "green"]), (0, 2, "X04", []))
    sheet = geo.score_state(doc, Setup())
    assert {p.name: p.score for p in sheet.players} == {"Green": 4, "Red": 3, "Blue": 3}
    assert sheet.ranking[0] == "Green" and not any("star" in w for w in sheet.tiebreak)
    assert sheet.tiebreak == ("Red and Blue tie on 3 points", "Red and Blue remain tied and share a place")


def test_tie_for_first_names_the_star_count():
    doc = state((0, 0, "X04", ["red", "blue"]), (0, 1, "Q10", ["blue", "red"]), (1, 0, "Q01", []),
                (1, 1, "H06", []), (0, 2, "T01", []))
    setup = Setup(players=(("Ann", ("red",)), ("Bob", ("blue",))))
    sheet = geo.score_state(doc, setup)
    assert [p.place for p in sheet.players] == [1, 1]
    words = sheet.tiebreak[-1]
    assert words.startswith("G12 Ann and Bob") and "play again" in words and words.endswith("there are 3")


def test_game_scores_and_unfinished_game():
    g = play(T("red", P("C01", (0, 0))), T("blue", P("C02", (0, 1))), T("green"), T("red", P("C02", (0, 1))))
    sheet = geo.score(g)
    assert {p.name: p.score for p in sheet.players} == {"Ann": 3, "Bob": 0, "Cy": 0}
    assert [u.rule for u in sheet.undecided] == ["G10"]


# --- states and records ----------------------------------------------------------------------

def test_state_round_trip_and_unknown_heights():
    doc = state((-1, 1, "H02", []), (0, 0, "T01", ["red", "blue"]), (0, 1, "Q03", ["blue", "red", "blue", "red"]),
                (1, 0, "Q01", ["green", "green"]), (1, 1, "P06", ["red"]),
                **{"3": {"blocked": True}, "4": {"stack_height_known": False}})
    tokens = geo.parse_state(doc, CATALOGUE)
    assert tokens[(1, 0)].blocked and tokens[(0, 1)].blocked and not tokens[(0, 0)].blocked
    assert geo.state_json(tokens) == doc
    sheet = geo.score_state(doc, Setup())
    (u,) = sheet.undecided
    assert (u.colour, u.rule) == ("red", "G11") and "(1, 1)" in u.message


def test_tokens_the_camera_could_not_name_still_score():
    doc = state((0, 0, "unknown", ["red", "blue"]), (0, 1, "unknown", ["red"]), (1, 0, "X04", []))
    sheet = geo.score_state(doc, Setup())
    assert {p.name: p.score for p in sheet.players} == {"Red": 1, "Blue": 2}
    assert [(u.rule, "(0, 1)" in u.message) for u in sheet.undecided] == [("G12", False), ("G12", True)]


@pytest.mark.parametrize("doc, words", [
    ({"game": "geometrius"}, "needs 'tokens'"),
    (state((0, 0, "Z99", [])), "'Z99', which is not in the catalogue"),
    (state((0, 0, "T01", []), (0, 0, "Q01", [])), r"two tokens lie at \(0, 0\)"),
    (state((0, 0, "T01", []), (0, 1, "T01", [])), "T01 lie on the field twice"),
    (state((0, 0, "T01", ["pink"])), "must list chip colours"),
    (state((0, 0, "T01", ["red"] * 6)), "no token holds more than five"),
    (state((0, 0, "T01", ["red"] * 4), **{"0": {"blocked": False}}), "so it is blocked"),
    (state((0, 0, "T01", ["red"]), **{"0": {"blocked": True}}), "two chips or more"),
    ({"game": "geometrius", "tokens": [{"row": "0", "col": 0, "shape": "T01"}]}, "integer 'row' and 'col'"),
])
def test_bad_states(doc, words):
    with pytest.raises(ValueError, match=words) as e:
        geo.score_state(doc, Setup())
    assert "\n" not in str(e.value)


def test_state_chips_of_a_colour_nobody_plays():
    with pytest.raises(ValueError, match="no player plays green"):
        geo.score_state(state((0, 0, "T01", ["green"])), Setup(players=PLAYERS[:2]))


def test_field_flags():
    row = [(0, c, s, []) for c, s in enumerate(["T01", "T02", "T03", "T04", "T05", "T06"])]
    sheet = geo.score_state(state(*row, (5, 5, "Q01", ["red"])), Setup())
    assert [(f.code, f.rule) for f in sheet.flags] == [("line_too_long", "G7"), ("disconnected_field", "G7")]
    assert sheet.flags[1].cells == ((5, 5),)


def test_record_round_trip():
    setup = replace(SETUP, hands={"red": Hand(("C01", "C02", "C20", "C11"), ("X02", "Q02", "T03", "P04"))})
    g = play(T("red", P("C01", (0, 0)), Push("X02", "row", 3, "left")),
             T("blue", P("C20", (0, 2), (2, 3)), hand=Hand(cards=("C20", "C12"))),
             T("green", P("C03", (3, 4))), T("red", P("C02+C07", (0, 1))), setup=setup)
    doc = json.loads(json.dumps(geo.record_json(g)))
    again = geo.play_all(geo.setup_from(doc, None), [geo.parse_move(m, i) for i, m in enumerate(doc["moves"])])
    assert again.turns == g.turns and again.tokens == g.tokens
    custom = replace(setup, catalogue=geo.parse_catalogue(edited(a=lambda d: d["cards"].pop())))
    doc = geo.record_json(Game.start(custom))
    assert geo.setup_from(json.loads(json.dumps(doc))).catalogue == custom.catalogue


@pytest.mark.parametrize("raw, code, words", [
    ([], "bad_move", "must be an object"),
    ({"colour": "pink"}, "unknown_colour", "unknown colour"),
    ({"colour": "red", "actions": {}}, "bad_move", "'actions' must be a list"),
    ({"colour": "red", "actions": [{"cards": ["C01", "C02"], "at": [[0, 0], [0, 1]]}]}, "bad_move", "one card on one"),
    ({"colour": "red", "actions": [{"cards": ["C01"], "at": [[0, 0], [0, 0]]}]}, "bad_move", "two different"),
    ({"colour": "red", "actions": [{"cards": ["C01"], "at": [[0, True]]}]}, "bad_move", "positions"),
    ({"colour": "red", "actions": [{"push": "X02", "row": 1, "from": "top"}]}, "bad_move", "from the left or right"),
    ({"colour": "red", "actions": [{"push": "X02", "row": 1, "col": 1, "from": "top"}]}, "bad_move", "one 'row' or"),
    ({"colour": "red", "actions": [{"jump": 1}]}, "bad_move", "action 0 must be"),
    ({"colour": "red", "hand": {"cards": "C01"}}, "bad_format", "'hand' must be"),
])
def test_bad_moves(raw, code, words):
    with pytest.raises(InvalidInput, match=words) as e:
        geo.parse_move(raw, 3)
    assert e.value.code == code


@pytest.mark.parametrize("doc, code, words", [
    ({"moves": []}, "bad_setup", "needs the starting 'field'"),
    ({"field": [["T01"]]}, "bad_setup", "4 rows of 4"),
    ({"field": [list(r) for r in LAYOUT[:3]] + [["T01", "Q05", "H08", "X03"]]}, "bad_setup", "T01 appear twice"),
    ({"players": [{"name": "A", "colours": ["red", "blue"]}]}, "bad_format", "one colour"),
    ({"players": [{"colours": ["pink"]}, {"colours": ["red"]}]}, "unknown_colour", "pink"),
    ({"players": [{"colours": ["red"]}]}, "bad_setup", "2-6 players"),
    ({"hands": {"white": {"cards": ["C01"]}}}, "bad_setup", "which no player plays"),
    ({"field": [list(r) for r in LAYOUT], "hands": {"red": {"tokens": ["T01"]}}}, "bad_setup", "dealt twice"),
    ({"settings": {"catalogue": {"tokens": []}}}, "bad_setup", "the record's catalogue"),
    ({"variant": "speed"}, "bad_setup", "unknown Geometrius variant"),
])
def test_bad_setups(doc, code, words):
    with pytest.raises(InvalidInput, match=words) as e:
        geo.setup_from(doc)
    assert e.value.code == code


def test_a_shape_that_is_no_name_is_refused_in_words():
    """A list where the shape's name belongs is refused in one line, not with Python's words."""
    doc = {"game": "geometrius", "tokens": [{"row": 0, "col": 0, "shape": ["Q01"], "stack": []}]}
    with pytest.raises(ValueError, match="needs its shape as a name"):
        geo.parse_state(doc, geo.load_catalogue())


# --- the chip colours' names (a setting) ------------------------------------------------------

ORANGE = ["red", "blue", "green", "yellow", "orange", "white"]  # the purple chips called orange


def renamed_record(**changes):
    """A record of a table that calls its purple chips orange: Ann plays them, Bob red."""
    doc = {"game": "geometrius", "settings": {"colour_names": ORANGE},
           "players": [{"name": "Ann", "colours": ["orange"]}, {"name": "Bob", "colours": ["red"]}],
           "field": [list(r) for r in LAYOUT],
           "moves": [{"colour": "orange", "actions": [{"cards": ["C01"], "at": [[0, 0]]}]},
                     {"colour": "red", "actions": [{"cards": ["C02"], "at": [[0, 1]]}]},
                     {"colour": "red", "actions": []}]}
    return {**doc, **changes}


def test_a_record_with_renamed_colours_checks_and_scores_with_the_tables_names():
    from rules.records import colour_names, parse_record

    record = parse_record(renamed_record())
    game = geo.play_all(record.setup, record.moves)
    assert [codes(t) for t in game.turns] == [[], [], ["wrong_turn"]]
    assert game.turns[2].violations[0].message == "Red moved out of turn: it was Orange's turn"
    assert {p.name: (p.colours, p.score) for p in geo.score(game).players} == {"Ann": (("orange",), 1),
                                                                                "Bob": (("red",), 1)}
    assert colour_names("geometrius", record.setup)["orange"] == "Orange"
    doc = geo.record_json(game)
    assert doc["settings"] == {"colour_names": ORANGE} and doc["moves"][0]["colour"] == "orange"
    assert geo.setup_from(json.loads(json.dumps(doc))).colour_names == tuple(ORANGE)


def test_a_state_with_renamed_colours_scores_with_the_tables_names():
    doc = {**state((0, 0, "T01", ["orange", "red"]), (0, 1, "Q03", ["orange"])), "settings": {"colour_names": ORANGE}}
    setup = geo.setup_from(doc)
    assert geo.parse_state(doc, CATALOGUE, setup.colour_names)[(0, 0)].stack == ("orange", "red")
    assert {p.name: p.score for p in geo.score_state(doc, setup).players} == {"Red": 2, "Orange": 1}
    assert setup.default_players == (("Red", ("red",)), ("Blue", ("blue",)))


def test_the_default_name_of_a_renamed_colour_is_unknown():
    from rules.records import parse_record

    with pytest.raises(InvalidInput, match="unknown colour 'purple'") as e:
        parse_record(renamed_record(players=[{"colours": ["purple"]}, {"colours": ["red"]}]))
    assert e.value.code == "unknown_colour"
    with pytest.raises(InvalidInput, match="unknown colour 'purple'.*orange") as e:
        parse_record(renamed_record(moves=[{"colour": "purple", "actions": []}]))
    assert e.value.code == "unknown_colour"
    with pytest.raises(ValueError, match="must list chip colours.*orange"):
        geo.score_state({**state((0, 0, "T01", ["purple"])), "settings": {"colour_names": ORANGE}},
                        geo.setup_from({"settings": {"colour_names": ORANGE}}))


@pytest.mark.parametrize("names, code, words", [
    (ORANGE[:5], "bad_setup", "names the 6 chip colours .* not 5"),
    (ORANGE + ["black"], "bad_setup", "not 7"),
    (["red", "blue", "green", "yellow", "Red", "white"], "bad_setup", "two chip colours the name 'red'"),
    (["red", "blue", "green", "yellow", "", "white"], "bad_setup", "'' is no colour name"),
    (["red", "blue", "green", "yellow", ".", "white"], "bad_setup", "'.' is no colour name"),
    (["red", "blue", "green", "yellow", "p" * 21, "white"], "bad_setup", "'p{20}'... is longer than 20 characters"),
    (["red", "blue", "green", "yellow", " purple", "white"], "bad_setup", "' purple' starts or ends with a space"),
    (["red", "blue", "green", "yellow", "purple", "white\t"], "bad_setup", "starts or ends with a space"),
    (["red", "blue", "green", "yellow", 5, "white"], "bad_format", "as strings"),
    ("red blue green yellow orange white", "bad_format", "must list"),
])
def test_bad_colour_names(names, code, words):
    with pytest.raises(InvalidInput, match=words) as e:
        geo.setup_from({"settings": {"colour_names": names}})
    assert e.value.code == code and "\n" not in e.value.message


def test_a_colour_name_may_be_twenty_characters_and_any_text():
    """The bound is on length, not on what the name says: markup is a name like any other
    (the pages show it as text)."""
    names = ("red", "blue", "green", "yellow", "p" * 20, "<b>white</b>")
    assert geo.setup_from({"settings": {"colour_names": list(names)}}).colour_names == names


def test_default_colour_names_change_nothing():
    assert SETUP.colour_names == geo.COLOURS and SETUP.settings_json() == {}
    assert geo.setup_from({"settings": {"colour_names": list(geo.COLOURS)}}) == Setup()
    assert Setup().names == geo.COLOUR_NAMES


def test_the_camera_s_chips_are_named_by_the_table():
    setup = Setup(colour_names=tuple(ORANGE))
    assert setup.table_colours(["purple", "red", "purple"]) == ("orange", "red", "orange")
    assert Setup().table_colours(["purple"]) == ("purple",)
    with pytest.raises(ValueError, match="'orange' is not a chip colour the camera reads"):
        setup.table_colours(["orange"])
