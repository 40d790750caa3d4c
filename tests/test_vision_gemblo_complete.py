"""Gemblo's hidden cells completed from the rules (``vision.gemblo_complete``, the search of
``vision.completion`` that Blokus shares): reading-level cases and a generated photo."""
from __future__ import annotations

import numpy as np

from rules.gemblo import decompose
from vision.gemblo import LABELS, read_gemblo
from vision.gemblo_complete import complete_hidden
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
    # is P11 again with the two hidden cells red. Nothing in the photo tells them apart: the
    # hidden cells are guessed empty, in doubt.
    state = dict.fromkeys(P11, "R")
    labels, conf, post, hidden, walls = reading(state, P11[3:])
    complete_hidden(labels, conf, post, hidden, walls, LABELS, np.ones(len(labels), bool))
    assert [labels[INDEX[c]] for c in P11] == ["R", "R", "R", ".", "."]
    assert (conf[[INDEX[c] for c in P11[3:]]] < UNCERTAIN_BELOW).all()


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


def test_cells_under_a_cup_are_guessed_from_the_board_not_the_cup_s_colour() -> None:
    # Bench photo (seed 2, cup 5): a cup over two empty cells, read as its blue. They are now
    # guessed empty, in doubt; the board is read exactly.
    from bench.gemblo_bench import BENCH
    image, truth = BENCH.render(np.random.default_rng([2, 16, 5]), "cup", (1600, 1200))
    read = read_gemblo(image)
    wrong = [n for n, label in truth.labels.items() if read.cells.get(n, ".") != label]
    assert truth.occluded and wrong == []
    assert set(truth.occluded) <= set(read.uncertain)
