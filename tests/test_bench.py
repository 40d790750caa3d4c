"""The benchmarks stay runnable: each imports and names a main()."""
import importlib

import pytest

from bench.__main__ import BENCHES


@pytest.mark.parametrize("name", BENCHES)
def test_bench_imports(name):
    assert callable(importlib.import_module(f"bench.{name}").main)


def test_every_table_prints_shares_one_way():
    """One formatter for the benches' percentages (3 decimals for cells, 1 for tokens and
    boards), and the held-out bench's Geometrius rows printed with it."""
    import contextlib
    import io

    from bench.heldout import _geometrius_table
    from bench.photo_accuracy import percent

    assert (percent(1, 8), percent(1, 8, 1), percent(0, 0), percent(3, 0, 1)) == ("12.500 %", "12.5 %", "-", "-")
    row = {"condition": "clean", "photos": 2, "found": 31, "tokens": 32, "right": 30, "visible": 31, "silent": 0,
           "uncertain": 1, "angles": [0.5, 2.5], "top_right": 9, "tops": 10, "top_silent": 0, "refused": 0}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _geometrius_table([row])
    assert out.getvalue().splitlines()[-1] == \
        "| clean | 2 | 96.9 % | 96.8 % | 0.0 % | 3.2 % | 50.0 % | 90.0 % | 0.0 % | 0 |"


def test_a_framing_crop_cuts_the_share_of_the_board_off_the_named_side():
    import numpy as np

    from bench.framing import cut

    image = np.zeros((600, 800, 3), np.uint8)
    corners = np.array([[100.0, 50.0], [700.0, 50.0], [700.0, 550.0], [100.0, 550.0]])  # 600 wide, 500 high
    assert cut(image, corners, "left", 0.05).shape == (600, 800 - 130, 3)
    assert cut(image, corners, "right", 0.12).shape == (600, 628, 3)
    assert cut(image, corners, "top", 0.12).shape == (600 - 110, 800, 3)
    assert cut(image, corners, "bottom", 0.05).shape == (525, 800, 3)
