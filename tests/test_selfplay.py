"""Self-played games replay with zero false alarms; a random illegal change is always
flagged at the move that was changed, with the reason code the change guarantees.

The expected codes come from how each change is built (on a plain grid, not from the
engine), so the engine is checked against an independent oracle.
"""
import numpy as np
from hypothesis import given, settings, strategies as st

from rules import blokus
from rules.placement import Move, check_placement, legal_placements, play_all, random_playout

RULES = blokus.rules()
N, DIAG, EDGE = 20, ((1, 1), (1, -1), (-1, 1), (-1, -1)), ((1, 0), (-1, 0), (0, 1), (0, -1))


def game(seed: int):
    return random_playout(RULES, np.random.default_rng(seed))


def test_random_games_have_no_false_alarms():
    for seed in range(40):
        played = game(seed)
        replayed = play_all(RULES, [t.move for t in played.turns])
        assert all(t.legal for t in replayed.turns), seed
        assert replayed.over


def grid_before(moves, k):
    g = {}
    for m in moves[:k]:
        for cell in m.cells:
            g[tuple(cell)] = m.colour
    return g


def on(cell):
    return 0 <= cell[0] < N and 0 <= cell[1] < N


def near(cell, offsets):
    return [(cell[0] + a, cell[1] + b) for a, b in offsets if on((cell[0] + a, cell[1] + b))]


def mutate(moves, k, kind, rng):
    """Replace move k by an illegal one of ``kind``; return (moves, expected code) or None."""
    move = moves[k]
    g = grid_before(moves, k)
    colour = move.colour
    own = [c for c, col in g.items() if col == colour]
    empty = [(r, c) for r in range(N) for c in range(N) if (r, c) not in g]
    used_mono = any(m.colour == colour and len(m.cells) == 1 for m in moves[:k])
    if kind == "overlap":
        taken = list(g)
        if not taken:
            return None
        new = Move(colour, (taken[rng.integers(len(taken))],) + move.cells[1:])
        return new, "overlap"
    if kind == "off_board":
        dr = N - min(c[0] for c in move.cells)  # shift the whole piece down off the board
        return Move(colour, tuple((r + dr, c) for r, c in move.cells)), "off_board"
    if kind == "not_a_piece":
        return Move(colour, ((0, 0), (5, 5))), "not_a_piece"
    if kind == "illegal_pass":
        return Move(colour, passed=True), "illegal_pass"
    if kind == "wrong_turn":
        nxt = {"B": "Y", "Y": "R", "R": "G", "G": "B"}[colour]
        return Move(nxt, move.cells), "wrong_turn"
    if used_mono or not own:
        return None
    if kind == "edge_contact_same_colour":
        spots = [e for c in own for e in near(c, EDGE) if e not in g]
        if not spots:
            return None
        return Move(colour, (spots[rng.integers(len(spots))],)), "edge_contact_same_colour"
    if kind == "no_corner_contact":
        spots = [e for e in empty
                 if not any(g.get(d) == colour for d in near(e, DIAG) + near(e, EDGE))]
        if not spots:
            return None
        return Move(colour, (spots[rng.integers(len(spots))],)), "no_corner_contact"
    if kind == "piece_already_used":
        earlier = [m for m in moves[:k] if m.colour == colour and not m.passed]
        # An earlier piece of this colour laid again, where this move's cells were.
        same = [m for m in earlier if len(m.cells) == len(move.cells)]
        if not same:
            return None
        ps = blokus.pieces()
        target = ps.identify(same[0].cells)
        for form in ps[target].orientations:
            for anchor in move.cells:
                first = min(form)
                cells = tuple((anchor[0] + r - first[0], anchor[1] + c - first[1]) for r, c in form)
                if all(on(c) and c not in g for c in cells):
                    return Move(colour, cells), "piece_already_used"
        return None
    raise AssertionError(kind)


KINDS = ["overlap", "off_board", "not_a_piece", "illegal_pass", "wrong_turn",
         "edge_contact_same_colour", "no_corner_contact", "piece_already_used"]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), at=st.floats(0, 1), kind=st.sampled_from(KINDS))
def test_random_illegal_change_is_flagged_at_that_move(seed, at, kind):
    played = game(seed % 25)
    moves = [t.move for t in played.turns if not t.move.passed]
    k = int(at * (min(len(moves), 40) - 1))  # all colours still have moves early on
    rng = np.random.default_rng(seed)
    changed = mutate(moves, k, kind, rng)
    if changed is None:
        return
    new, expected = changed
    judged = play_all(RULES, moves[:k] + [new])
    assert all(t.legal for t in judged.turns[:k])
    assert expected in [v.code for v in judged.turns[k].violations]


def test_generation_matches_brute_force_checking():
    """Every placement the generator offers is legal, and it misses none."""
    for seed, n in [(1, 0), (2, 10), (3, 40), (4, 70)]:
        m = random_playout(RULES, np.random.default_rng(seed), n)
        for colour in blokus.COLOURS:
            fast = {mask for _, mask in legal_placements(RULES, m.position, colour)}
            slow = {mask for piece, mask in RULES.table.masks
                    if not check_placement(RULES, m.position, colour, RULES.board.cells_of(mask))[1]}
            assert fast == slow, (seed, colour)
