"""Reading Gemblo boards from generated phone photos: lattice fit, colours, clear pieces.

The renders only measure the reader; the full sweep is ``bench/gemblo_bench.py``'s job.
Clear pieces are not yet read reliably (see the xfail below): the other tests use boards
whose clear pieces were taken off, so they pin what does work.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from rules import gemblo
from rules.placement import random_playout
from vision.errors import ReadError
from vision.gemblo import debug_images, read_gemblo
from vision.hexgrid import cells, corner_points, key
from vision.image_io import load_image
from vision.synth.conditions import sample_conditions
from vision.synth.gemblo import GembloPhoto, render_photo

SIZE = (960, 720)


def game(rng: np.random.Generator, clear: bool) -> dict[str, str]:
    match = random_playout(gemblo.rules(gemblo.Setup()), rng, int(rng.integers(20, 90)))
    state = gemblo.cells_json(match.position)
    return state if clear else {k: c for k, c in state.items() if c != "C"}


@lru_cache(maxsize=None)
def photo(condition: str, seed: int, clear: bool = False) -> GembloPhoto:
    rng = np.random.default_rng(seed)
    return render_photo(game(rng, clear), sample_conditions(condition, rng), rng, size=SIZE)


def upright(p: GembloPhoto) -> np.ndarray:
    return load_image(p.encoded) if p.encoded is not None else p.image


def silent_errors(p: GembloPhoto, reading) -> list[str]:
    """Visible cells read wrong without being marked uncertain: what must never happen."""
    doubt = set(reading.uncertain)
    return [key(c) for c in cells() if p.cells.get(key(c), ".") != reading.cells.get(key(c), ".")
            and key(c) not in p.occluded and key(c) not in doubt]


@pytest.mark.parametrize("condition", ["clean", "rotation", "perspective", "dim", "glare", "lens_distortion"])
def test_coloured_pieces_are_read_right_or_marked_uncertain(condition: str) -> None:
    p = photo(condition, 7)
    reading = read_gemblo(upright(p))
    assert silent_errors(p, reading) == []
    # The lattice lands on the cells: the corner cells within a fifth of a cell's pitch.
    assert np.abs(reading.pose.to_board(p.corners) - corner_points()).max() < 0.35


def test_state_json_follows_the_contract() -> None:
    p = photo("clean", 7)
    reading = read_gemblo(upright(p))
    out = reading.to_state_json()
    assert out["state"]["game"] == "gemblo"
    assert all(c != "." for c in out["state"]["cells"].values())
    assert set(out["state"]["cells"]) <= {key(c) for c in cells()}
    assert 0.0 <= out["confidence"] <= 1.0 and out["timing_ms"] > 0
    images = debug_images(reading)
    assert set(images) == {"rectified", "overlay"}


def test_photo_without_a_board_is_refused() -> None:
    rng = np.random.default_rng(3)
    table = np.clip(rng.normal(120, 6, (720, 960, 3)), 0, 255).astype(np.uint8)
    with pytest.raises(ReadError) as err:
        read_gemblo(table)
    assert err.value.code == "no_board"


@pytest.mark.xfail(reason="clear pieces on a light board are not yet told from empty cells reliably",
                   strict=False)
def test_clear_pieces_are_read_right_or_marked_uncertain() -> None:
    p = photo("clean", 11, clear=True)
    assert silent_errors(p, read_gemblo(upright(p))) == []
