"""The one-hue doubt (vision.one_hue) on plain cell colours: what a filter leaves, what colour shows."""
from __future__ import annotations

import numpy as np

from vision.one_hue import COLOUR_SHOWN, PIECES_SHOWN, light_only_doubts, off_curve

N = 20
SQUARES = np.indices((N, N)).reshape(2, -1).T.astype(float)
EVERY = np.ones(N * N, bool)
NONE = np.zeros(N * N, bool)


def _board(light: np.ndarray, dark_bgr=(0.05, 0.1, 0.2), light_bgr=(0.8, 0.9, 0.95)) -> np.ndarray:
    """(cells x 3) a duotone's colours for the cells' brightness ``light`` (0-1)."""
    dark, bright = np.array(dark_bgr), np.array(light_bgr)
    return dark + light.reshape(-1, 1) * (bright - dark)


def _pieces(count: int) -> np.ndarray:
    """(cells) the first ``count`` cells of every other row: pieces apart from one another."""
    at = np.zeros((N, N), bool)
    rows = np.arange(0, N, 2)
    for k in range(count):
        at[rows[k % len(rows)], 2 * (k // len(rows))] = True
    return at.ravel()


def test_a_duotone_keeps_every_cell_on_its_brightness_to_colour_line() -> None:
    rng = np.random.default_rng(1)
    cells = _board(rng.uniform(0.2, 0.9, N * N)) + rng.normal(0, 0.003, (N * N, 3))
    assert off_curve(cells, EVERY).max() < 0.03


def test_coloured_pieces_lie_off_the_line_and_silence_the_doubt() -> None:
    light = np.full(N * N, 0.5)
    pieces = _pieces(COLOUR_SHOWN)
    cells = _board(light)
    cells[pieces] = (0.7, 0.3, 0.05)  # blue plastic, darker than the board
    assert (off_curve(cells, EVERY) > 0.1).sum() == COLOUR_SHOWN
    assert not light_only_doubts(cells, SQUARES, EVERY, ~pieces, NONE).any()


def test_a_few_pieces_shown_only_by_light_are_doubted_where_they_stand_out() -> None:
    light = np.full(N * N, 0.5)
    pieces = _pieces(4)
    light[pieces] = 0.75  # half as bright again as the board
    doubted = light_only_doubts(_board(light), SQUARES, EVERY, EVERY, NONE)
    assert (doubted == pieces).all()


def test_many_pieces_shown_only_by_light_leave_every_cell_in_doubt() -> None:
    # A piece as bright as the board cannot be told from it: once the light shows pieces on the
    # board, no cell is read.
    light = np.full(N * N, 0.5)
    light[_pieces(PIECES_SHOWN)] = 0.75
    assert light_only_doubts(_board(light), SQUARES, EVERY, EVERY, NONE).all()


def test_a_glare_spot_is_no_piece_shown() -> None:
    light = np.full((N, N), 0.5)
    light[4:10, 4:10] = 0.95  # one reflection over 36 cells
    shone = np.zeros((N, N), bool)
    shone[3:11, 3:11] = True
    doubted = light_only_doubts(_board(light.ravel()), SQUARES, EVERY, EVERY, shone.ravel())
    assert not doubted[~shone.ravel()].any()


def _tritone(light: np.ndarray) -> np.ndarray:
    """(cells x 3) a blue-magenta-yellow tritone's colours for the cells' brightness ``light`` (0-1):
    straight from dark to middle and from middle to light, bent at the middle tone."""
    tones = np.array([(0.43, 0.08, 0.08), (0.55, 0.24, 0.86), (0.47, 0.94, 1.0)])
    return np.stack([np.interp(light, (0.0, 0.5, 1.0), tones[:, k]) for k in range(3)], 1)


def test_a_tritone_bends_the_line_and_its_pieces_shown_by_light_are_all_doubted() -> None:
    # The board's light 0.25-0.45 (a lamp's fall-off), pieces past the tritone's middle tone:
    # off a straight line they passed for colour shown (base: nothing doubted).
    rng = np.random.default_rng(2)
    light = rng.uniform(0.25, 0.45, N * N)
    pieces = _pieces(PIECES_SHOWN)
    light[pieces] = rng.uniform(0.6, 0.75, PIECES_SHOWN)
    cells = _tritone(light) + rng.normal(0, 0.003, (N * N, 3))
    assert (off_curve(cells, EVERY) > 0.1).sum() >= COLOUR_SHOWN
    assert light_only_doubts(cells, SQUARES, EVERY, EVERY, NONE).all()


def test_the_sepia_matrix_clipping_to_white_is_no_colour_shown() -> None:
    # The classic sepia matrix: a grey's channels at (0.94, 1.20, 1.35) x grey (BGR), each clipped at 1:
    # red clips from a grey of 0.74, green from 0.83, and the light end runs to white.
    grey = np.full(N * N, 0.5)
    pieces = _pieces(PIECES_SHOWN)
    grey[pieces] = np.linspace(0.8, 1.0, PIECES_SHOWN)  # light pieces, some whiter than the clip
    cells = np.minimum(grey[:, None] * np.array([0.94, 1.20, 1.35]), 1.0)
    assert light_only_doubts(cells, SQUARES, EVERY, EVERY, NONE).all()


def test_a_bend_through_one_piece_colour_of_a_colour_photo_doubts_none_of_its_cells() -> None:
    # A few yellow pieces, brighter than the grey board: a broken line could pass through them,
    # but a cell's own doubt keeps to the straight line, which they lie off (guard: as on base).
    light = np.full(N * N, 0.5)
    pieces = _pieces(8)
    cells = _board(light)
    cells[pieces] = (0.1, 0.85, 0.95)
    assert not light_only_doubts(cells, SQUARES, EVERY, ~pieces, NONE).any()


def test_the_pixel_checks_lengths_and_brightest_channels_are_numpys_to_the_bit() -> None:
    """The card pixels' check measures chroma lengths and brightest channels without numpy's
    slow reduction over a short last axis; the values must be numpy's own to the bit, or the
    one-hue verdicts (set at thresholds) could move: float32 pixels and float64 fits alike."""
    from vision.one_hue import _brightest_channel, _lengths

    rng = np.random.default_rng(21)
    for dtype in (np.float32, np.float64):
        v = rng.normal(0, 0.3, (7, 500, 2)).astype(dtype)
        assert np.array_equal(_lengths(v), np.linalg.norm(v, axis=-1))
        assert _lengths(v).dtype == np.linalg.norm(v, axis=-1).dtype
        bgr = rng.random((900, 3)).astype(dtype)
        assert np.array_equal(_brightest_channel(bgr), bgr.max(axis=1))


def test_the_pixel_curves_band_pixels_are_each_bands_own_in_their_order() -> None:
    """``pixel_curve`` fits at most BAND_PIXELS of each brightness band's flat pixels, spread
    evenly over the band's pixels in their own order (one stable sort for all bands: an
    unstable one picks other pixels and bends the curve elsewhere)."""
    import cv2

    from vision.one_hue import BAND_PIXELS, BANDS, FLAT, _brightness, bent_curve, pixel_curve

    rng = np.random.default_rng(21)
    card = np.repeat(np.repeat(rng.random((30, 30, 3)).astype(np.float32), 5, 0), 5, 1)  # flat blocks
    light = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY)
    square = np.ones((3, 3), np.uint8)
    cells = card[cv2.dilate(light, square) - cv2.erode(light, square) < FLAT].astype(np.float64)
    band = np.minimum((_brightness(cells) * BANDS).astype(int), BANDS - 1)
    assert np.bincount(band).max() > BAND_PIXELS  # some band is thinned out
    kept = [m[np.linspace(0, len(m) - 1, min(len(m), BAND_PIXELS)).astype(int)]
            for m in (np.flatnonzero(band == k) for k in range(BANDS))]
    want = bent_curve(cells[np.concatenate(kept)], np.ones(sum(map(len, kept)), bool))
    got = pixel_curve([card])
    assert all(np.array_equal(getattr(got, k), getattr(want, k)) for k in vars(want))
