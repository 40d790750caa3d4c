"""Gemblo's hidden cells completed from the rules (``vision.gemblo_complete``, the search of
``vision.completion`` that Blokus shares): reading-level cases and a generated photo."""
from __future__ import annotations

import numpy as np
import pytest

from rules.gemblo import decompose
from vision.completion import complete, patches
from vision.gemblo import read_gemblo
from vision.gemblo_cells import LABELS
from vision.gemblo_complete import WALLS_PARTLY, _continuing, _lent, complete_hidden, hex_ground
from vision.hexgrid import cells, key
from vision.reading import UNCERTAIN_BELOW

INDEX = {c: i for i, c in enumerate(cells())}
# P11, (0,0) (0,1) (0,2) (1,0) (2,0), laid over the corner (-7,-7): a legal first piece. Without
# its last cell its four others are the tetrahex the set leaves out: no piece.
P11 = [(-7, -7), (-7, -6), (-7, -5), (-6, -7), (-5, -7)]


def reading(state: dict[tuple[int, int], str], hidden: list[tuple[int, int]], read_as: str = "."):
    """A reading of ``state`` (cell -> colour) surely read but for the ``hidden`` cells: walls
    unseen, read ``read_as`` (an occluder's colour, or empty) with no better evidence than that."""
    labels = [state.get(c, ".") for c in cells()]
    post = np.zeros((len(labels), len(LABELS)))
    post[np.arange(len(labels)), [LABELS.index(label) for label in labels]] = 1.0
    conf = np.full(len(labels), 0.95)
    mask = np.zeros(len(labels), bool)
    for c in hidden:
        i = INDEX[c]
        labels[i], mask[i], conf[i] = read_as, True, 0.0
        post[i] = 1.0 / len(LABELS) if read_as == "." else np.eye(len(LABELS))[LABELS.index(read_as)]
    walls = np.where(mask, 0.0, 1.0)
    return labels, conf, post, mask, walls


def test_a_piece_cut_short_by_a_hidden_cell_is_completed_and_stays_in_doubt() -> None:
    # A hand over P11's last cell: its four cells in sight are no piece, and only red there
    # makes them one. Whatever the hand's colour reads as, the cell's best guess is red, in doubt.
    state = dict.fromkeys(P11, "R")
    assert decompose({key(c): v for c, v in state.items()}).flags == ()
    for read_as in (".", "B"):
        labels, conf, post, hidden, walls = reading(state, [P11[-1]], read_as)
        before = conf.copy()
        changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
        assert labels == [state.get(c, ".") for c in cells()]
        assert changed == [INDEX[P11[-1]]]
        assert (conf == before).all() and conf[INDEX[P11[-1]]] < UNCERTAIN_BELOW


def test_where_the_rules_allow_two_completions_the_board_wins_the_tie() -> None:
    # P11 cut to its first three cells, (0,0) (0,1) (0,2): the straight trihex is a piece, and so
    # is P11 again with the two hidden cells red. The hidden cells read as a sleeve's blue, a
    # blue domino chained to none of blue's pieces (its monohex on a far corner): no evidence.
    # Nothing in the photo tells the two completions apart: the hidden cells are guessed
    # empty, in doubt.
    state = dict.fromkeys(P11, "R") | {(7, 7): "B"}
    assert decompose({key(c): v for c, v in state.items()}).flags == ()
    labels, conf, post, hidden, walls = reading(state, P11[3:], "B")
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert [labels[INDEX[c]] for c in P11] == ["R", "R", "R", ".", "."]
    assert sorted(changed) == sorted(INDEX[c] for c in P11[3:])
    assert (conf[changed] < UNCERTAIN_BELOW).all()


def test_an_occluder_s_colour_that_makes_no_piece_is_no_evidence() -> None:
    # A purple mug over eight empty cells beside red's P11: read purple, they are one region
    # larger than any piece. The mug's colour says nothing of the board there: empty, in doubt.
    state = dict.fromkeys(P11, "R")
    mug = [(-4, -7), (-4, -6), (-3, -7), (-3, -6), (-2, -7), (-2, -6), (-4, -5), (-3, -5)]
    labels, conf, post, hidden, walls = reading(state, mug, "P")
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [state.get(c, ".") for c in cells()]
    assert sorted(changed) == sorted(INDEX[c] for c in mug)
    assert (conf[changed] < UNCERTAIN_BELOW).all()


# A purple mug over six empty cells, and (6,7) at its rim: walls half seen, read purple, in doubt.
MUG = [(5, 7), (5, 8), (4, 7), (4, 8), (3, 8), (3, 9)]
RIM = (6, 7)


def mug_reading(state: dict[tuple[int, int], str]):
    labels, conf, post, hidden, walls = reading(state, MUG, "P")
    i = INDEX[RIM]
    labels[i], conf[i], post[i], walls[i] = "P", 0.3, np.eye(len(LABELS))[LABELS.index("P")], 0.5
    return labels, conf, post, hidden, walls


def test_the_occluder_s_rim_in_its_colour_is_no_evidence_either() -> None:
    # The mug's side, where the walls partly show, reads purple as its top does: one region of
    # seven cells, no piece. The rim's purple is the mug's too: empty, in doubt.
    labels, conf, post, hidden, walls = mug_reading({})
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == ["."] * len(labels)
    assert sorted(changed) == sorted(INDEX[c] for c in [*MUG, RIM])
    assert (conf[changed] < UNCERTAIN_BELOW).all()


def test_a_rim_cell_continuing_a_piece_read_surely_keeps_its_colour() -> None:
    # Purple's monohex read surely on the corner (7,7), beside the rim cell: there the purple
    # may be the piece's own (a domino the mug half covers), so the rim keeps its reading; the
    # mug's cells still carry none.
    state = {(7, 7): "P"}
    labels, conf, post, hidden, walls = mug_reading(state)
    complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [{**state, RIM: "P"}.get(c, ".") for c in cells()]


@pytest.mark.parametrize("blank", ["outside_the_photo", "like_no_class"])
def test_a_cell_the_photo_says_nothing_of_is_completed_from_the_rules(blank: str) -> None:
    # P11's last cell, its walls in sight and read blue in doubt, but outside the photo's frame
    # (a colour the reader made up at the edge), or like no class at all (a die on the board):
    # no evidence. The four red cells in sight are no piece, and only red there makes them one.
    state = dict.fromkeys(P11, "R")
    labels, conf, post, hidden, walls = reading(state, [])
    in_photo = np.ones(len(labels), bool)
    i = INDEX[P11[-1]]
    labels[i], conf[i] = "B", 0.3
    if blank == "outside_the_photo":
        in_photo[i] = False
        post[i] = np.eye(len(LABELS))[LABELS.index("B")]
    else:
        post[i] = (1.0 + 0.3 * np.eye(len(LABELS))[LABELS.index("B")]) / (len(LABELS) + 0.3)
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, in_photo)
    assert labels == [state.get(c, ".") for c in cells()]
    assert changed == [i] and conf[i] < UNCERTAIN_BELOW


def test_patches_vying_for_one_piece_are_completed_in_index_order() -> None:
    # Two hidden cells each bridged to red's P11, neither beside red, the photo finding red 4x
    # likelier than empty at both: either alone is red's monohex, not both (M2). The
    # completion takes its patches one by one in index order, each on the board the ones
    # before it left: the first takes the monohex, the second is left empty. Pinned, since
    # the order is part of the reading.
    ground = hex_ground()
    first, second = ground.index[(-8, -3)], ground.index[(-3, -8)]
    assert first < second and not {first, second} & {n for c in P11 for n in ground.edges[ground.index[c]]}
    labels, conf, post, hidden, walls = reading(dict.fromkeys(P11, "R"), [])
    smooth = post.copy()
    one = np.eye(len(LABELS))
    smooth[[first, second]] = 0.2 * one[LABELS.index(".")] + 0.8 * one[LABELS.index("R")]
    doubtful = np.zeros(len(labels), bool)
    doubtful[[first, second]] = True
    assert patches(ground, doubtful) == [[first], [second]]
    grid, changed = complete(ground, labels, LABELS, smooth, doubtful, np.zeros(len(labels), bool),
                             lambda board: 0, {"R": [ground.index[P11[0]]]}, lambda counts: 0.0)
    assert changed == [first] and grid[first] == "R" and grid[second] == "."


def test_cells_under_a_cup_are_guessed_from_the_board_not_the_cup_s_colour() -> None:
    # Bench photo (seed 2, cup 5): a cup over two empty cells, read as its blue. They are now
    # guessed empty, in doubt; the board is read exactly.
    from bench.gemblo_bench import BENCH
    image, truth = BENCH.render(np.random.default_rng([2, 16, 5]), "cup", (1600, 1200))
    read = read_gemblo(image)
    wrong = [n for n, label in truth.labels.items() if read.cells.get(n, ".") != label]
    assert truth.occluded and wrong == []
    assert set(truth.occluded) <= set(read.uncertain)


def test_once_the_photo_s_search_nodes_are_spent_the_patches_left_keep_their_reading(monkeypatch) -> None:
    # The budget is counted in search nodes, not seconds, so a reading does not hang on the
    # machine's load; once spent, the patches after it are left as read (here, cut short).
    import vision.completion as completion

    state = dict.fromkeys(P11, "R")
    labels, conf, post, hidden, walls = reading(state, [P11[-1]])
    monkeypatch.setattr(completion, "PHOTO_NODES", 0)
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert changed == [] and labels[INDEX[P11[-1]]] == "."


def glared_p11(tint: tuple[int, int], tint_post: np.ndarray):
    """Red's P11 surely read but for its last two cells, under a glare that hides their walls
    and leaves their red; beside them, ``tint``, hidden too, read red with ``tint_post``."""
    state = dict.fromkeys(P11, "R")
    labels, conf, post, hidden, walls = reading(state, P11[3:], "R")
    i = INDEX[tint]
    labels[i], conf[i], post[i], hidden[i], walls[i] = "R", 0.0, tint_post, True, 0.0
    return state, labels, conf, post, hidden, walls


def test_a_hidden_cell_like_no_class_does_not_cost_a_piece_its_hidden_cells() -> None:
    # The glare blinds (-4,-7) outright: like no class, its best label (red) is no colour the
    # photo showed. Joined to P11 it made a six-cell red region, no piece, and the piece's two
    # hidden cells, red in the photo, were emptied with it. Now the blinded cell is set aside
    # first: P11 stands, its hidden cells keep their red, all three stay in doubt. (The glare's
    # halo leaves P11's cells in sight in doubt too, so no surely read red vouches for the run.)
    state, labels, conf, post, hidden, walls = glared_p11((-4, -7), np.full(len(LABELS), 1.0 / len(LABELS)))
    conf[[INDEX[c] for c in P11[:3]]] = 0.3
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [state.get(c, ".") for c in cells()]
    assert changed == [INDEX[(-4, -7)]]
    assert (conf[[INDEX[c] for c in [*P11[3:], (-4, -7)]]] < UNCERTAIN_BELOW).all()


def test_a_piece_running_on_under_a_glare_keeps_its_colour_beside_the_tint_cell() -> None:
    # The glare's edge tints (-4,-7), truly empty, a little red (0.6 against the board's 0.4):
    # read red, it makes P11 a six-cell region, no piece. The three hidden red cells run on from
    # P11's cells read surely red, and are fewer than a piece: the piece's own colour, not an
    # occluder's. The search keeps them as evidence and drops the weakest: P11 again, the tint
    # cell empty, all in doubt.
    tint = np.zeros(len(LABELS))
    tint[[LABELS.index("R"), LABELS.index(".")]] = 0.6, 0.4
    state, labels, conf, post, hidden, walls = glared_p11((-4, -7), tint)
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [state.get(c, ".") for c in cells()]
    assert changed == [INDEX[(-4, -7)]]
    assert (conf[[INDEX[c] for c in [*P11[3:], (-4, -7)]]] < UNCERTAIN_BELOW).all()


def test_a_hidden_run_read_clear_beside_a_sure_clear_piece_runs_on_as_that_piece() -> None:
    # P11 laid in clear, its three cells in sight read surely clear; under a glare its last two
    # cells read clear, and (-4,-7) beside them a little clear (0.6 against the board's 0.4). A
    # hidden cell read clear alone is the glare's sheen, but this run continues a surely clear
    # piece: clear's own piece running on (on the bench's seed 2, lending such runs read 5 truly
    # clear cells empty). The search keeps the piece and drops the tint cell, all in doubt.
    state = dict.fromkeys(P11, "C")
    labels, conf, post, hidden, walls = reading(state, P11[3:], "C")
    i = INDEX[(-4, -7)]
    labels[i], conf[i], hidden[i], walls[i] = "C", 0.0, True, 0.0
    post[i] = 0.0
    post[i, [LABELS.index("C"), LABELS.index(".")]] = 0.6, 0.4
    run = [INDEX[c] for c in [*P11[3:], (-4, -7)]]
    assert _continuing(labels, hidden, conf >= UNCERTAIN_BELOW)[run].all()
    changed = complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [state.get(c, ".") for c in cells()]
    assert changed == [i] and (conf[run] < UNCERTAIN_BELOW).all()


def test_a_run_beside_a_whole_piece_read_surely_is_not_that_piece_running_on() -> None:
    # Red's P11 read surely whole, five cells, the largest a piece has; beside its last cell a
    # glare hides (-4,-7) and (-3,-7), tinted red. No piece runs on from a whole pentahex (and
    # M4 keeps red off every cell beside it): the run is the glare's tint, no evidence.
    state = dict.fromkeys(P11, "R")
    run = [(-4, -7), (-3, -7)]
    labels, conf, post, hidden, walls = reading(state, run, "R")
    sure = conf >= UNCERTAIN_BELOW
    assert not _continuing(labels, hidden, sure).any()
    assert _lent(labels, conf, hidden, walls < WALLS_PARTLY)[[INDEX[c] for c in run]].all()
    complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert labels == [state.get(c, ".") for c in cells()]
