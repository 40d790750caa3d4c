"""Board changes explained as moves: one placement, two quick ones, a take-back, a nudge,
and changes that are no play at all (reported, never guessed); plus the passes that are due."""
import numpy as np
from hypothesis import given, settings, strategies as st

from rules import blokus, gemblo
from rules.observe import MOST_PER_STEP, Observed, laid_cells, observe, passes_due, take_back
from rules.placement import Match, Move, legal_placements, random_playout

RULES = blokus.rules()
BOARD = RULES.board


def playout(seed: int, placements: int | None = None) -> Match:
    return random_playout(RULES, np.random.default_rng(seed), placements)


def placements(match: Match) -> list[Move]:
    return [t.move for t in match.turns if not t.move.passed]


def replay(moves) -> Match:
    match = Match(RULES)
    for move in moves:
        match = match.play(move)
    return match


def rows_after(moves) -> list[str]:
    return blokus.board_rows(replay(moves).position)


def same(a: Move, b: Move) -> bool:
    return a.colour == b.colour and sorted(a.cells) == sorted(b.cells)


def with_cells(rows: list[str], cells, colour: str) -> list[str]:
    grid = [list(r) for r in rows]
    for r, c in cells:
        grid[r][c] = colour
    return ["".join(r) for r in grid]


def test_unchanged_board_is_nothing():
    match = playout(1, 10)
    assert observe(match, blokus.board_rows(match.position)) == Observed()
    assert not Observed().changed


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 40))
def test_one_placement_is_that_move(seed, k):
    moves = placements(playout(seed))
    k = min(k, len(moves) - 1)
    seen = observe(replay(moves[:k]), rows_after(moves[:k + 1]))
    assert seen.taken_back == 0 and not seen.unexplained_cells
    assert len(seen.moves) == 1 and same(seen.moves[0], moves[k])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 40))
def test_two_quick_placements_come_in_turn_order(seed, k):
    moves = placements(playout(seed))
    k = min(k, len(moves) - 2)
    if moves[k].colour == moves[k + 1].colour:
        return  # the same-colour case has its own test
    match = replay(moves[:k])
    seen = observe(match, rows_after(moves[:k + 2]))
    assert [m.colour for m in seen.moves] == [moves[k].colour, moves[k + 1].colour]
    assert all(same(a, b) for a, b in zip(seen.moves, moves[k:k + 2]))
    after = match.play(seen.moves[0]).play(seen.moves[1])
    assert all(t.legal for t in after.turns)


def test_one_colour_twice_is_split_into_two_legal_moves():
    # Late in a game the other colours pass and one colour places twice in a row.
    for seed in range(200):
        moves = placements(playout(seed))
        k = next((i for i in range(len(moves) - 1) if moves[i].colour == moves[i + 1].colour), None)
        if k is not None:
            break
    match = replay(moves[:k])
    seen = observe(match, rows_after(moves[:k + 2]))
    assert len(seen.moves) == 2 and seen.taken_back == 0
    assert {tuple(sorted(m.cells)) for m in seen.moves} == {tuple(sorted(m.cells)) for m in moves[k:k + 2]}
    after = match.play(seen.moves[0]).play(seen.moves[1])
    assert all(t.legal for t in after.turns)


def test_take_back_of_the_last_piece():
    moves = placements(playout(3, 12))
    match = replay(moves)
    seen = observe(match, rows_after(moves[:-1]))
    assert seen == Observed(taken_back=1)
    assert blokus.board_rows(take_back(match, 1).position) == rows_after(moves[:-1])
    assert take_back(match, 1).colour_to_move == moves[-1].colour


def test_nudged_piece_is_a_take_back_and_a_new_placement():
    moves = placements(playout(4, 9))
    before = replay(moves[:-1])
    options = [m for _, m in legal_placements(RULES, before.position, moves[-1].colour)
               if sorted(BOARD.cells_of(m)) != sorted(moves[-1].cells)]
    nudged = Move(moves[-1].colour, tuple(BOARD.cells_of(options[0])))
    seen = observe(replay(moves), rows_after(moves[:-1] + [nudged]))
    assert seen.taken_back == 1 and len(seen.moves) == 1 and same(seen.moves[0], nudged)


def test_illegal_placement_is_observed_as_played():
    moves = placements(playout(5, 8))
    match = replay(moves)
    colour = match.colour_to_move
    own = [c for c, col in blokus.parse_board(blokus.board_rows(match.position)).items() if col == colour]
    r, c = own[0]
    # A monomino right beside its own colour: B5, whatever the rest of the board.
    cell = next((r + dr, c + dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))
                if (r + dr, c + dc) in BOARD.index
                and blokus.board_rows(match.position)[r + dr][c + dc] == blokus.EMPTY)
    seen = observe(match, with_cells(blokus.board_rows(match.position), [cell], colour))
    assert seen.moves == (Move(colour, (cell,)),)
    codes = [v.code for v in match.play(seen.moves[0]).turns[-1].violations]
    assert "edge_contact_same_colour" in codes


def test_take_back_replays_passes_before_the_piece():
    match = playout(6)  # a whole game: it ends with passes
    last = max(i for i, t in enumerate(match.turns) if not t.move.passed)
    undone = take_back(match, 1)
    assert undone.turns == match.turns[:last]


def test_recoloured_cells_are_unexplained():
    moves = placements(playout(7, 6))
    match = replay(moves)
    rows = blokus.board_rows(match.position)
    cells = moves[-1].cells
    other = next(c for c in blokus.COLOURS if c != moves[-1].colour)
    seen = observe(match, with_cells(rows, cells, other))
    assert seen == Observed(unexplained_cells=tuple(sorted(cells)))


def test_an_old_piece_gone_is_unexplained():
    moves = placements(playout(8, 12))
    match = replay(moves)
    gone = moves[-(MOST_PER_STEP + 1)].cells
    seen = observe(match, with_cells(blokus.board_rows(match.position), gone, blokus.EMPTY))
    assert seen == Observed(unexplained_cells=tuple(sorted(gone)))


def test_too_many_new_pieces_are_unexplained():
    moves = placements(playout(9, 12))
    seen = observe(replay(moves[:-(MOST_PER_STEP + 1)]), rows_after(moves))
    assert not seen.moves and not seen.taken_back
    assert sorted(seen.unexplained_cells) == sorted(c for m in moves[-(MOST_PER_STEP + 1):] for c in m.cells)


def test_passes_due():
    assert passes_due(Match(RULES)) == []
    assert sorted(passes_due(playout(10))) == sorted(RULES.rotation)  # game over: nobody can place
    # Somewhere in a game a colour to move has no placement while another still has one.
    for seed in range(50):
        match = Match(RULES)
        for turn in playout(seed).turns:
            due = passes_due(match)
            if due and not match.over:
                assert due[0] == match.colour_to_move
                assert not any(match.can_place(c) for c in due)
                nxt = RULES.rotation[(match.to_move + len(due)) % len(RULES.rotation)]
                assert match.can_place(nxt)
                return
            match = match.play(turn.move)
    raise AssertionError("no game had a colour passing before the end")


# --- Gemblo: the same diff on hexes, boards given as {cell: colour} or the state's "q,r" keys ---

GEMBLO = gemblo.rules(gemblo.Setup("3p"))


def gemblo_game(seed: int, count: int | None = None) -> list[Move]:
    return placements(random_playout(GEMBLO, np.random.default_rng(seed), count))


def gemblo_match(moves) -> Match:
    match = Match(GEMBLO)
    for move in moves:
        match = match.play(move)
    return match


def gemblo_after(moves) -> dict[str, str]:
    """The board as a Gemblo state's ``cells`` ({"q,r": colour}) after ``moves``."""
    return gemblo.cells_json(gemblo_match(moves).position)


def test_gemblo_placements_one_and_two_at_a_time():
    moves = gemblo_game(11)
    for k in range(len(moves)):
        seen = observe(gemblo_match(moves[:k]), gemblo_after(moves[:k + 1]))
        assert seen.taken_back == 0 and len(seen.moves) == 1 and same(seen.moves[0], moves[k]), k
    for k in range(0, len(moves) - 1, 5):
        pair = moves[k:k + 2]
        seen = observe(gemblo_match(moves[:k]), gemblo.parse_cells(gemblo_after(moves[:k + 2])))  # {(q, r): colour}
        assert len(seen.moves) == 2 and all(same(a, b) for a, b in zip(seen.moves, pair)), k


def test_gemblo_take_back_and_nudge():
    moves = gemblo_game(12, 10)
    match = gemblo_match(moves)
    assert observe(match, gemblo_after(moves[:-1])) == Observed(taken_back=1)
    before = gemblo_match(moves[:-1])
    board = GEMBLO.board
    other = next(m for _, m in legal_placements(GEMBLO, before.position, moves[-1].colour)
                 if sorted(board.cells_of(m)) != sorted(moves[-1].cells))
    nudged = Move(moves[-1].colour, tuple(board.cells_of(other)))
    seen = observe(match, gemblo_after(moves[:-1] + [nudged]))
    assert seen.taken_back == 1 and len(seen.moves) == 1 and same(seen.moves[0], nudged)


def test_gemblo_illegal_placements_are_observed_and_judged():
    moves = gemblo_game(13, 6)
    match = gemblo_match(moves)
    colour = match.colour_to_move
    board = GEMBLO.board
    laid = gemblo_after(moves)
    own = [tuple(map(int, k.split(","))) for k, v in laid.items() if v == colour]
    # A monohex beside its own colour: M4.
    cell = next(n for c in own for n in board.cells_of(board.edge[board.index[c]]) if f"{n[0]},{n[1]}" not in laid)
    seen = observe(match, {**laid, f"{cell[0]},{cell[1]}": colour})
    assert seen.moves == (Move(colour, (cell,)),)
    assert "edge_contact_same_colour" in [v.code for v in match.play(seen.moves[0]).turns[-1].violations]


def test_gemblo_colour_not_in_play_or_off_board_is_unexplained():
    moves = gemblo_game(14, 3)
    match = gemblo_match(moves)
    stray = {**gemblo_after(moves), "0,0": "P"}  # purple sits out of a three-player game
    assert observe(match, stray) == Observed(unexplained_cells=((0, 0),))
    assert observe(match, {**gemblo_after(moves), "20,20": "C"}) == Observed(unexplained_cells=((20, 20),))


# --- pieces of a colour that takes no turns: the table lays them, any number at once ---------

FIVE = gemblo.rules(gemblo.Setup("5p"))  # purple's pieces lie round the rim as obstacles


def rim_obstacles(count: int = 15) -> list[Move]:
    """``count`` different obstacle pieces (the last ``count`` of the first 15, largest
    first) in the board's three outer rings, none touching another along an edge and none near a start: a table's
    layout round the rim."""
    board = FIVE.board
    rim = board.mask(c for i, c in enumerate(board.cells) if board.edge[i].bit_count() < 6)
    rings = board.grow(board.grow(rim, board.edge), board.edge)
    starts = board.grow(board.grow(sum(FIVE.starts.values()), board.edge), board.edge)
    taken, out = 0, []
    for piece in [p.id for p in FIVE.pieces.pieces][15 - count:15][::-1]:
        mask = next(m for pid, m in FIVE.table.masks if pid == piece and not m & ~rings and not m & starts
                    and not board.grow(m, board.edge) & taken)
        taken |= mask
        out.append(Move("P", tuple(board.cells_of(mask))))
    return out


def five_after(moves) -> dict:
    match = Match(FIVE)
    for move in moves:
        match = match.play(move)
    return laid_cells(match)


def test_obstacles_laid_before_the_start_all_at_once_are_logged_and_keep_the_turn():
    obstacles = rim_obstacles()
    seen = observe(Match(FIVE), five_after(obstacles))
    assert seen.taken_back == 0 and not seen.unexplained_cells
    assert [sorted(m.cells) for m in seen.moves] == sorted(sorted(m.cells) for m in obstacles)
    match = Match(FIVE)
    for move in seen.moves:
        match = match.play(move)
    assert all(t.legal for t in match.turns) and {t.piece for t in match.turns} == {f"P{i:02}" for i in range(1, 16)}
    assert match.colour_to_move == "C"
    # The first colour's piece seen with them comes after them, as its turn.
    first = Move("C", (gemblo.five_player_starts()[0],))
    seen = observe(Match(FIVE), five_after(obstacles + [first]))
    assert len(seen.moves) == 16 and seen.moves[-1] == first


def test_obstacles_laid_between_turns_come_before_two_quick_placements():
    obstacles = rim_obstacles(4)
    match = Match(FIVE).play(obstacles[0])
    first, second = (Move(c, (gemblo.five_player_starts()[i],)) for i, c in enumerate("CR"))
    seen = observe(match, five_after([obstacles[0], second, *obstacles[1:], first]))
    assert seen.taken_back == 0 and not seen.unexplained_cells
    assert [m.colour for m in seen.moves] == ["P", "P", "P", "C", "R"]
    after = match
    for move in seen.moves:
        after = after.play(move)
    assert all(t.legal for t in after.turns) and after.colour_to_move == "Y"
    # A take-back of the last turn's piece is still one take-back, the obstacles stay.
    assert observe(after, five_after([*obstacles, first])) == Observed(taken_back=1)
    # Red nudges its piece, laid before three obstacles: they are taken back with it (they
    # count for nothing) and logged again, then red's piece where it lies now.
    laid = Match(FIVE)
    for move in [obstacles[0], first, second, *obstacles[1:]]:
        laid = laid.play(move)
    nudged = Move("R", (next(c for c in FIVE.board.cells_of(FIVE.board.edge[FIVE.board.index[second.cells[0]]])),))
    seen = observe(laid, five_after([obstacles[0], first, nudged, *obstacles[1:]]))
    assert seen.taken_back == 4 and [m.colour for m in seen.moves] == ["P", "P", "P", "R"]
    assert seen.moves[-1] == nudged


def test_obstacles_laid_touching_along_an_edge_are_no_piece_and_held():
    # A trihex laid against a five-hex obstacle along the rim: one region of 8 purple cells,
    # larger than any piece. Which pieces made it decides whether a bridge beside it is blocked
    # (M6: blocked only when ONE piece covers both cells), and that is not on the board: held,
    # also among other obstacles laid apart on the same board.
    board = FIVE.board
    five = board.mask(rim_obstacles(1)[0].cells)
    touching, apart = (next(m for pid, m in FIVE.table.masks if pid == "P03" and not m & five
                            and bool(board.grow(m, board.edge) & five) == joined) for joined in (True, False))
    region = tuple(board.cells_of(five | touching))
    assert observe(Match(FIVE), {c: "P" for c in region}) == Observed(unexplained_cells=region, joined_cells=region)
    others = [board.mask(m.cells) for m in rim_obstacles(3)[1:]]
    assert not any(board.grow(m, board.edge) & (five | touching) for m in others)
    seen = observe(Match(FIVE), {c: "P" for c in board.cells_of(five | touching | others[0] | others[1])})
    assert seen.joined_cells == region and not seen.moves
    # Apart, they are two obstacles; laid one after the other, each is seen alone and logged.
    seen = observe(Match(FIVE), {c: "P" for c in board.cells_of(five | apart)})
    assert sorted(board.mask(m.cells) for m in seen.moves) == sorted([five, apart])
    first = Match(FIVE).play(Move("P", tuple(board.cells_of(five))))
    assert observe(first, {c: "P" for c in region}) == Observed((Move("P", tuple(board.cells_of(touching))),))


def test_blokus_neutral_laid_freely_touching_is_logged_as_the_region_it_makes():
    # Blokus V4 neutral_free: the neutral is "laid out in any arrangement" and Blokus has no
    # bridges, so two neutral pieces laid touching are logged as the region they make, the
    # turn unmoved, among three other pieces laid at once.
    free = blokus.rules(blokus.Setup(variant="three-player-free"))
    rows = with_cells(["." * 20] * 20, [(9, 2), (9, 3), (10, 3), (10, 4), (10, 5)], "G")  # a pentomino
    rows = with_cells(rows, [(9, 9), (9, 10), (9, 11), (10, 11), (11, 11), (11, 12)], "G")  # six squares: two pieces
    rows = with_cells(rows, [(0, 0)], "B")
    seen = observe(Match(free), rows)
    assert not seen.unexplained_cells and not seen.joined_cells
    assert [(m.colour, len(m.cells)) for m in seen.moves] == [("G", 5), ("G", 6), ("B", 1)]
    assert all(t.legal for t in Match(free).play(seen.moves[0]).turns)


def test_a_colour_that_takes_turns_still_counts_towards_the_limit():
    # Blokus three players sharing the neutral (V4 neutral_shared): green takes turns, so blue's,
    # yellow's and green's two new pieces are too many at once as ever; laid freely
    # (neutral_free), green's are not counted.
    shared, free = (blokus.rules(blokus.Setup(variant=v)) for v in ("three-player-shared", "three-player-free"))
    assert "G" in shared.rotation and "G" not in free.rotation
    corners = {"B": (0, 0), "Y": (0, 19), "R": (19, 19), "G": (19, 0)}
    rows = with_cells(["." * 20] * 20, [corners["B"]], "B")
    rows = with_cells(with_cells(rows, [corners["Y"]], "Y"), [corners["G"], (18, 0), (17, 0)], "G")
    rows = with_cells(rows, [(10, 10)], "G")
    assert observe(Match(shared), rows).unexplained_cells
    seen = observe(Match(free), rows)
    assert not seen.unexplained_cells and [m.colour for m in seen.moves] == ["G", "G", "B", "Y"]
