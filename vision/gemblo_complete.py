"""Best guesses for the Gemblo cells a photo could not show, completed from the rules.

A hand, a cup or a blinding glare spot hides cells: their walls do not show, and the colour
there is often the occluder's (a purple mug, a hand's pink, the lamp's tint), no evidence of
what lies on the board. Read as it is, it makes regions the rules find no piece (a region
larger than any piece, one chained to nothing), which they can only doubt whole. So a hidden
cell read in a colour that makes no piece there, and the partly hidden rim joined to it in
that colour, carries no evidence (:func:`_lent`): its best guess is empty (the board wins
ties), until the rules find a piece that must continue under it. A hidden cell whose colour
does make a piece there keeps its evidence, at half weight as any doubt (glare often leaves
a piece's colour); so does a short run of it that continues a piece read surely beside the
occluder (:func:`_continuing`). A cell outside the photo, or like no class at all, carries
none either, and is emptied before the rules judge the regions: its label is no colour the
photo showed, and a real piece it happens to join must not lose its hidden cells for it.

Then each patch of those cells is relabelled as a whole by :mod:`vision.completion`'s search
on the hex board: the likeliest labelling that keeps the pieces at it legal (M2: each
one-colour region one of the 18 pieces its colour shows nowhere else; M4: one region, one
piece; M3/M5: chained across bridges or edges to a start cell through its colour's pieces).
The chain ignores M6: a bridge whose two common cells one piece covers is blocked, yet the
search follows it (the ground's ``touch`` is the lattice's, not the position's); a labelling
that leans on such a bridge is kept only if the board's conflicts, M6's among them, do not
grow. A piece cut short by hidden cells is completed; where the rules allow two completions
the board wins the tie. The cells stay doubtful: best guesses, never readings.

What the photo does not say, the search does not assume: the player count (a colour's chain
may start at any cell some variant starts a colour at, turned as a state allows), the seating
(so no turn order weighs the piece counts: which colour plays after which is the table's
choice, and a five-player game's obstacle colour never moves). Clear is a label like the
others at a hidden cell: it shows neither a colour nor glints there (measured on seed 2:
forbidding clear there read one cell worse). The doubts between clear and empty in sight are
the clear pieces' logic's (:func:`vision.gemblo_prior.clear_pieces`), not searched here.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from rules.gemblo import VARIANTS, board, decompose, default_starts, five_player_starts, pieces
from rules.lattice import HEX

from . import completion
from .completion import Ground
from .hexgrid import key
from .reading import UNCERTAIN_BELOW

EMPTY = "."
CLEAR = "C"
WALLS_PARTLY = 0.8  # walls this much fainter than the board's typical: partly hidden (a fifth of the cells in sight are)
REGION_CONFLICTS = ("not_a_piece", "piece_already_used", "no_connection")  # a region that is no piece there
NO_EVIDENCE = 1.5  # no class this many times likelier than a flat guess: the photo says nothing of the cell


@lru_cache(maxsize=1)
def hex_ground() -> Ground:
    """Gemblo's board as the search walks it (and the reader's own cell graph: cells in
    :func:`vision.hexgrid.cells`' order, each one's edge neighbours and bridge partners)."""
    return Ground.of(board(), pieces(), EMPTY)


@lru_cache(maxsize=1)
def _start_cells() -> tuple[int, ...]:
    """Every cell some variant starts a colour at, turned by any multiple of 60 degrees (a
    photo's "up" is wherever the board lay: :func:`rules.gemblo.state_rules`)."""
    b = board()
    cells = {c for v in VARIANTS for rotated in (False, True) for c in default_starts(v, rotated)}
    cells |= set(five_player_starts())
    return tuple(sorted(b.index[turn(c)] for c in cells for turn in HEX.rotations))


def _badness(labels: list[str]) -> int:
    """How much of the board the rules' conflicts cover (distinct flagged cells)."""
    return len(_conflicts(labels))


def _conflicts(labels: list[str], codes: tuple[str, ...] | None = None) -> set[tuple[int, int]]:
    """The cells the rules' conflicts name (only those of ``codes``, if given)."""
    cells = board().cells
    state = {key(cells[i]): label for i, label in enumerate(labels) if label != EMPTY}
    return {tuple(c) for f in decompose(state).flags if codes is None or f.code in codes for c in f.cells}


def _lent(labels: list[str], conf: np.ndarray, hidden: np.ndarray, partly: np.ndarray) -> np.ndarray:
    """The doubtful cells whose colour is an occluder's (a mug, a sleeve, a glare's tint), no
    evidence of what lies there: hidden cells read in a piece colour whose region the rules
    find no piece there (no piece of the set, one its colour shows elsewhere, chained to
    nothing), and the ``partly`` hidden cells joined to those in the same colour (the
    occluder's rim) unless they continue a surely read cell of their colour (a piece beside
    the occluder, its colour seen). A hidden cell read clear counts too (a glare's or a hand's
    sheen reads as glints: on the bench's seed 2, keeping such cells' evidence read 39 more
    cells wrong, though it kept a few real clear cells with faint walls), unless its run
    continues a surely clear cell (:func:`_continuing`); the rim read clear does not: there the
    walls show, and the glints are the clear logic's."""
    ground = hex_ground()
    sure = conf >= UNCERTAIN_BELOW
    lent = np.zeros(len(labels), bool)
    for cell in _conflicts(labels, REGION_CONFLICTS):
        lent[ground.index[cell]] = True
    lent &= hidden
    lent &= np.array([label != EMPTY for label in labels])
    rim = [i for i, label in enumerate(labels) if partly[i] and not hidden[i] and not sure[i]
           and label not in (EMPTY, CLEAR) and not any(sure[n] and labels[n] == label for n in ground.edges[i])]
    grew = True
    while grew:
        grew = False
        for i in rim:
            if not lent[i] and any(lent[n] and labels[n] == labels[i] for n in ground.edges[i]):
                lent[i] = grew = True
    return lent & ~_continuing(labels, lent, sure)


def _continuing(labels: list[str], lent: np.ndarray, sure: np.ndarray) -> np.ndarray:
    """The ``lent`` cells that are a piece running on under the occluder: a run of one colour (edge-joined
    lent cells) beside a surely read cell of that colour whose region in sight leaves that cell's
    piece room to run on (fewer cells than the largest piece: a whole pentahex in sight has no rest,
    and M4 keeps its colour off every cell beside it), the run itself fewer cells than the largest
    piece (the rest of that piece, and the tint cells beyond it the search drops: so the run and the
    region together may exceed a piece). A run read clear is spared too, though a hidden cell read
    clear alone counts as the occluder's sheen (:func:`_lent`): beside a surely clear cell it is
    most often clear's piece running on (the bench's seed 2: lending such runs too read 5 truly
    clear cells empty, on 3 photos, and set none right; seed 5: no change). A glare hides a piece's
    walls yet leaves its tint, and the hand's or the glare's edge falls across pieces: the colour
    seen surely beside the run is the piece's own, not the occluder's. A longer run, or one beside
    no sure cell of its colour, is the occluder's colour (a mug, a sleeve). (The rim's own exception
    in :func:`_lent`, a rim cell beside a sure one, is this rule for a run of one cell; here the run
    may reach into the hidden cells.) Measured on the bench's seed 2, its 27 photos with cells out
    of sight: a glare's hidden cells read in their piece's colour were emptied with the one tint
    cell that made the region no piece; sparing the runs read 7 cells fewer wrong, none more, on top
    of the blank cells set aside first."""
    ground = hex_ground()
    runs = [label if lent[i] else EMPTY for i, label in enumerate(labels)]
    spared = np.zeros(len(labels), bool)
    for start in np.flatnonzero(lent):
        if runs[start] == EMPTY:  # in a run already weighed
            continue
        run = ground.flood(runs, int(start), ground.edges)
        beside = {n for i in run for n in ground.edges[i]} - run
        others = [EMPTY if i in run else label for i, label in enumerate(labels)]  # the region beside, run aside
        spared[list(run)] = len(run) < ground.largest and any(
            sure[n] and labels[n] == labels[start]
            and len(ground.flood(others, n, ground.edges, ground.largest)) < ground.largest for n in beside)
        for i in run:
            runs[i] = EMPTY
    return spared


def complete_hidden(labels: list[str], conf: np.ndarray, post: np.ndarray, hidden: np.ndarray, walls: np.ndarray,
                    classes: tuple[str, ...], in_photo: np.ndarray) -> list[int]:
    """Relabel (in place) the cells the photo could not show as a whole, each patch with its
    likeliest legal labelling; returns the cells that changed.

    ``hidden``: the cells whose walls do not show (``walls``: how plainly they show, for the
    occluder's rim); ``post``: (cells x ``classes``) the photo's class probabilities;
    ``in_photo``: the cells the photo frames. Only doubtful cells change, and no confidence: a
    completed cell stays doubtful."""
    doubtful = conf < UNCERTAIN_BELOW
    # no evidence at all: outside the photo, or like no class (a die, a coin the walls do not betray)
    blank = (~in_photo | (post.max(1) < NO_EVIDENCE / len(classes))) & doubtful
    hidden = (hidden | blank) & doubtful
    if not hidden.any():
        return []
    before = list(labels)
    for i in np.flatnonzero(blank):  # its label is no colour the photo showed: the rules judge the regions without it
        labels[i] = EMPTY
    covered = (_lent(labels, conf, hidden, walls < WALLS_PARTLY) | blank) & doubtful
    for i in np.flatnonzero(covered):
        labels[i] = EMPTY
    free = hidden | covered
    ground = hex_ground()
    smooth = completion.weighed(post, np.where(covered, 0.0, np.maximum(conf, completion.DOUBTFUL_EVIDENCE)))
    conflicted = np.zeros(len(labels), bool)
    for cell in _conflicts(labels):
        i = ground.index[cell]
        conflicted[[i, *ground.touch[i]]] = True
    starts = dict.fromkeys(set(classes) - {EMPTY}, _start_cells())
    labels[:], _ = completion.complete(ground, labels, classes, smooth, free, conflicted, _badness, starts,
                                       lambda counts: 0.0)
    return [i for i, (old, new) in enumerate(zip(before, labels)) if old != new]
