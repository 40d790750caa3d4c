"""Placement slop in the synthetic photos (`vision.synth.slop`): a nudged piece lies off its
cells by no more than the slop, its truth is still those cells, and without slop (every
default bench) nothing is drawn or moved.

Renders are small top-down textures or 640 x 480 photos so the file stays fast.
"""
from __future__ import annotations

import math
from dataclasses import fields, replace

import numpy as np
import pytest

from bench import gemblo_bench, vision_bench
from vision.synth import CONDITIONS, Conditions, sample_conditions
from vision.synth import blokus, gemblo
from vision.synth.slop import Nudge, Slop

SLOP = Slop(0.2, 3.0, seed=5)


def test_no_default_photo_has_slop() -> None:
    nudge_fields = {"nudge_cells", "nudge_deg"}
    assert nudge_fields <= {f.name for f in fields(Conditions)}
    for name, conditions in CONDITIONS.items():
        assert Slop.of(conditions, 1) is None, name
        assert Slop.of(sample_conditions(name, np.random.default_rng(3)), 1) is None, name
    assert Slop.of(sample_conditions("nudged", np.random.default_rng(3)), 1) == Slop(0.2, 3.0, 1)


def test_nudges_stay_within_the_slop_and_never_push_into_a_neighbour() -> None:
    free = SLOP.nudges(1.0, [[]] * 200)
    shifts = np.array([n.shift for n in free])
    turns = np.array([n.turn_deg for n in free])
    assert np.all(np.hypot(*shifts.T) <= 0.2 + 1e-12) and np.all(np.abs(turns) <= 3.0)
    assert np.hypot(*shifts.T).max() > 0.15 and np.abs(turns).max() > 2.5  # the limits are reached
    east_north = [(1.0, 0.0), (0.0, -1.0)]
    hexes = [(0.5, math.sqrt(3) / 2), (-0.5, math.sqrt(3) / 2), (-1.0, 0.0)]  # sides 60 and 120 degrees apart
    apart_120 = [(math.sqrt(3) / 2, 0.5), (-math.sqrt(3) / 2, 0.5)]  # a Gemblo piece in a V of two neighbours
    for sides in (east_north, hexes, apart_120):
        blocked = SLOP.nudges(1.0, [sides] * 200)
        # a neighbour takes away the shift towards it, never the turn nor the other draws
        assert [n.turn_deg for n in blocked] == [n.turn_deg for n in free]
        for nudge in blocked:
            assert all(np.dot(nudge.shift, d) <= 1e-9 for d in sides)


def test_a_nudge_turns_about_the_pieces_centre_then_shifts_it() -> None:
    m = Nudge((0.1, -0.2), 90.0).affine((10.0, 20.0), scale=30.0)
    assert np.allclose(m @ [10, 20, 1], [13, 14])  # the centre only shifts (0.1, -0.2) x 30 px
    assert np.allclose(m @ [11, 20, 1], [13, 15])  # a point right of it turns to below it (y down)


def _colour_centre(image: np.ndarray, bgr: tuple[int, int, int]) -> np.ndarray:
    ys, xs = np.nonzero(np.abs(image.astype(int) - bgr).sum(axis=2) < 60)
    return np.array([xs.mean(), ys.mean()])


def test_a_nudged_blokus_piece_lies_by_its_nudge_over_the_board() -> None:
    # One X pentomino alone in the middle: its plastic's centre moves by exactly its nudge.
    state = ["." * 20] * 20
    state = state[:8] + ["." * 9 + "B" + "." * 10, "." * 8 + "BBB" + "." * 9, "." * 9 + "B" + "." * 10] + state[11:]
    style = blokus.BlokusStyle.default()
    laid = blokus.board_texture(state, 32, style).flattened()
    slop = Slop(0.2, 3.0, seed=11)
    nudged = blokus.board_texture(state, 32, style, slop).flattened()
    (nudge,) = slop.nudges(1.0, [[]])
    blue = (200, 90, 0)
    moved = _colour_centre(nudged, blue) - _colour_centre(laid, blue)
    assert np.hypot(*nudge.shift) > 0.1 and np.allclose(moved, np.array(nudge.shift) * 32, atol=0.5)
    assert np.array_equal(nudged[:40], laid[:40])  # the board away from the piece is untouched


def test_a_blokus_piece_at_the_rim_is_not_pushed_over_it() -> None:
    state = ["B" + "." * 19] + ["." * 20] * 19
    codes = blokus._codes(state)
    (piece,) = blokus._pieces(codes)
    assert sorted(blokus._blocked(piece, codes)) == [(-1.0, 0.0), (0.0, -1.0)]  # the rim: west and north


def test_a_gemblo_piece_blocks_only_towards_a_touching_piece() -> None:
    grid = gemblo._code_grid({"0,0": "R", "1,0": "R", "2,0": "B", "-5,5": "G"})
    pieces = gemblo._pieces(grid)
    assert sorted(map(sorted, pieces)) == [[(-5, 5)], [(0, 0), (1, 0)], [(2, 0)]]
    red = next(p for p in pieces if (0, 0) in p)
    (side,) = gemblo._blocked(red, grid)
    assert np.allclose(side, (math.sqrt(3) / 2, 0.5))  # towards the blue piece at (2, 0): one cell (1, 0) away
    assert gemblo._blocked([(-5, 5)], grid) == []


@pytest.mark.parametrize("bench", [vision_bench.BENCH, gemblo_bench.BENCH], ids=["Blokus", "Gemblo"])
def test_a_nudged_photo_is_its_twin_but_for_the_pieces(bench) -> None:
    # bench.nudged compares these pairs: the same game, camera, light and sensor noise.
    laid, truth = bench.render(np.random.default_rng([24, 777, 0]), "clean", (640, 480))
    nudged, nudged_truth = bench.render(np.random.default_rng([24, 777, 0]), "nudged", (640, 480))
    assert nudged_truth.labels == truth.labels and nudged_truth.occluded == truth.occluded
    changed = np.abs(laid.astype(int) - nudged).max(axis=2) > 0
    assert changed.mean() > 0.02
    lo, hi = truth.corners.min(axis=0) - 40, truth.corners.max(axis=0) + 40  # the board, with its rim
    outside = np.ones_like(changed)
    outside[int(max(lo[1], 0)):int(hi[1]), int(max(lo[0], 0)):int(hi[0])] = False
    assert not changed[outside].any()


def test_the_nudged_presets_are_their_twins_conditions_with_slop() -> None:
    for laid, nudged in (("clean", "nudged"), ("perspective", "nudged_perspective")):
        for seed in range(5):
            got = sample_conditions(nudged, np.random.default_rng(seed))
            assert got == replace(sample_conditions(laid, np.random.default_rng(seed)), nudge_cells=0.2, nudge_deg=3.0)
