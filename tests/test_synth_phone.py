"""The phone pipeline effects (vision.synth.phone) and the held-out bench that uses them.

An effect may change colours and textures as much as a phone does, but it must not move the
board: the renderer's truth per cell has to stay valid after it. Blobs on a test chart give
positions to compare before and after.
"""
import numpy as np
import pytest

from bench import heldout
from vision.synth.phone import PHONE_EFFECTS, develop, one_hue, sepia_matrix

# (centre x, centre y, BGR): near every corner and edge of a 1600 x 1200 photo, and the centre
NEUTRAL = (60, 60, 60)
SQUARES = [(x, y, colour) for x, y, colour in [
    (70, 70, NEUTRAL), (1530, 70, NEUTRAL), (70, 1130, NEUTRAL), (1530, 1130, NEUTRAL), (800, 600, NEUTRAL),
    (400, 300, (40, 40, 200)), (1200, 300, (40, 170, 60)), (400, 900, (190, 90, 30)), (1200, 900, (30, 200, 220)),
    (800, 100, (120, 60, 140)), (800, 1100, NEUTRAL), (100, 600, NEUTRAL), (1500, 600, NEUTRAL),
]]
HALF = 22  # half the side of a square
WINDOW = 40  # half the side of the window a square's centroid is measured in


def chart(width=1600, height=1200) -> np.ndarray:
    """A light board-coloured chart with coloured squares, a soft light fall-off and fine
    texture (something for noise reduction and sharpening to act on)."""
    s = width / 1600
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    light = 1.0 - 0.15 * (xx / width) - 0.1 * (yy / height)
    texture = 4.0 * np.sin(xx * 0.9) * np.sin(yy * 0.7)
    image = np.empty((height, width, 3), np.float32)
    for k, level in enumerate((200, 208, 214)):
        image[:, :, k] = level * light + texture
    for x, y, colour in SQUARES:
        x0, x1, y0, y1 = (round(v * s) for v in (x - HALF, x + HALF, y - HALF, y + HALF))
        image[y0:y1, x0:x1] = np.array(colour, np.float32) * light[y0:y1, x0:x1, None]
    return np.clip(image + 0.5, 0, 255).astype(np.uint8)


def centroid(plane: np.ndarray, x: int, y: int) -> np.ndarray:
    """Darkness-weighted centre of the square at (x, y): darkness against the median of the
    window's rim, so a change of brightness or contrast does not move it."""
    win = plane[y - WINDOW:y + WINDOW, x - WINDOW:x + WINDOW].astype(np.float64)
    rim = np.concatenate([win[:4].ravel(), win[-4:].ravel(), win[:, :4].ravel(), win[:, -4:].ravel()])
    dark = np.clip(np.median(rim) - win, 0, None)
    dark[dark < 0.25 * dark.max()] = 0  # the rim's noise and halos carry no position
    ys, xs = np.mgrid[0:win.shape[0], 0:win.shape[1]]
    return np.array([(xs * dark).sum(), (ys * dark).sum()]) / dark.sum()


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    return chart()


@pytest.fixture(scope="module")
def small() -> np.ndarray:
    return chart(400, 300)


@pytest.mark.parametrize("effect", PHONE_EFFECTS)
def test_effect_keeps_the_board_where_it_was(photo, effect):
    out = develop(photo, effect, np.random.default_rng(3))
    assert out.shape == photo.shape and out.dtype == np.uint8
    assert np.abs(out.astype(int) - photo).mean() > 0.3, "the effect should change the photo"
    grey_before, grey_after = photo.mean(axis=2), out.mean(axis=2)
    for x, y, colour in SQUARES:
        moved = np.abs(centroid(grey_after, x, y) - centroid(grey_before, x, y)).max()
        assert moved <= 1.0, f"{effect}: square at ({x}, {y}) moved {moved:.2f} px"
        if colour == NEUTRAL:  # each channel on its own: chromatic aberration's budget
            for k in range(3):
                moved = np.abs(centroid(out[:, :, k], x, y) - centroid(photo[:, :, k], x, y)).max()
                assert moved <= 1.6, f"{effect}: channel {k} of square at ({x}, {y}) moved {moved:.2f} px"


@pytest.mark.parametrize("effect", PHONE_EFFECTS)
def test_effect_is_deterministic_for_a_seed_and_varies_with_it(small, effect):
    first = develop(small, effect, np.random.default_rng(7))
    assert first.shape == small.shape and first.dtype == np.uint8
    assert np.array_equal(first, develop(small, effect, np.random.default_rng(7)))
    assert not np.array_equal(first, develop(small, effect, np.random.default_rng(8)))
    assert not np.array_equal(first, small)


def test_chromatic_aberration_fringes_grow_toward_the_corners(photo):
    """The channel shift is a magnification: nothing at the centre, about the chosen pixels
    at the corner of a 1600 x 1200 photo."""
    from vision.synth.phone import chromatic_aberration
    out = chromatic_aberration(photo, red_px=1.5, blue_px=-1.5)
    red = [centroid(out[:, :, 2], x, y) - centroid(photo[:, :, 2], x, y) for x, y in ((800, 600), (1530, 1130))]
    assert np.abs(red[0]).max() < 0.1
    assert 0.9 < red[1][0] < 1.5 and 0.6 < red[1][1] < 1.2  # outward, along the diagonal
    blue = centroid(out[:, :, 0], 70, 70) - centroid(photo[:, :, 0], 70, 70)
    assert 0.9 < blue[0] < 1.5 and 0.6 < blue[1] < 1.2  # blue shrinks: toward the centre from the top left


def test_overexposure_clips_the_light_board_but_not_the_dark_squares(photo):
    from vision.synth.phone import exposure_error
    out = exposure_error(photo, 1.2, 0.0, np.random.default_rng(0))
    assert (out[580:620, 700:760] == 255).mean() > 0.5  # board beside the centre square
    assert out[590:610, 790:810].max() < 200  # the dark square itself


def test_unknown_effect_names_the_known_ones(small):
    with pytest.raises(KeyError, match="digital_zoom"):
        develop(small, "fisheye", np.random.default_rng(0))


def test_heldout_bench_runs_every_game_end_to_end(capsys):
    results = heldout.run(1, heldout.SEED, effects=("jpeg_420",), size=(640, 480))
    assert set(results) == {g.name for g in heldout.GAMES}
    for rows in results.values():
        assert [r["condition"] for r in rows] == [heldout.NONE, "jpeg_420"]
        assert all(r["photos"] == 1 for r in rows)
    out = capsys.readouterr().out
    assert out.count("| effect | photos |") == len(heldout.GAMES)
    assert "| blokus | jpeg_420 |" in out


def test_ranking_puts_silent_errors_before_lost_boards():
    game = heldout.GAMES[0]
    base, silent, refused = (game.new_row(name) for name in (heldout.NONE, "vivid", "overexposed"))
    for row in (base, silent, refused):
        row["photos"] = 2
    base["exact"] = 2
    silent.update(silent=3, exact=1)  # three cells wrong without a word
    refused.update(refused=2)  # nothing read, nothing claimed
    ranked = heldout.ranking({game.name: [base, silent, refused]})
    assert [effect for _, effect, *_ in ranked] == ["vivid", "overexposed"]
    assert ranked[1][3] == pytest.approx(1.0) and ranked[1][4] == 2  # every exact board lost: both refused


def test_a_tritone_maps_brightness_through_its_middle_tone():
    grey = np.array([[[0, 0, 0], [128, 128, 128], [255, 255, 255], [64, 64, 64]]], np.uint8)
    out = one_hue(grey, (10, 20, 30), (100, 100, 200), (250, 240, 230)).astype(int)
    ends_and_middle = np.array([[10, 20, 30], [100, 100, 200], [250, 240, 230]])
    assert np.abs(out[0, :3] - ends_and_middle).max() <= 1  # (grey 128 lies a hair past the middle)
    assert np.abs(out[0, 3] - (55, 60, 115)).max() <= 1  # halfway along its dark half


def test_a_one_hue_filter_needs_two_tones(small):
    with pytest.raises(ValueError, match="two tones"):
        one_hue(small, (0, 0, 0))


def test_the_sepia_matrix_clips_red_first():
    levels = np.array([[[g, g, g] for g in (100, 200, 255)]], np.uint8)
    out = sepia_matrix(levels).astype(int)[0].tolist()  # BGR
    assert out[0] == [94, 120, 135]  # a tint of the grey below the clip
    assert out[1] == [187, 241, 255]  # red clipped, green not yet: the tint turns yellower
    assert out[2] == [239, 255, 255]  # white: blue alone short of the clip
