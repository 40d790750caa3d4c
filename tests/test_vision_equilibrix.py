"""Reading Equilibrix boards from generated phone photos: the drawing's fit, the fields, the
ring and the Origin, the command line and the live referee's calls.

The renders only measure the reader; the full sweep is ``bench/equilibrix_bench.py``'s job.
"""
from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np
import pytest

from rules import equilibrix
from tableref.cli import main
from vision import flowergrid as fg
from vision import equilibrix_fields as eq_fields
from vision import equilibrix_circle as eq_circle
from vision import equilibrix_edges as eq_edges
from vision import equilibrix_fit as eq_fit
from vision import equilibrix_guesses as eq_guesses
from vision import equilibrix_pose as eq_pose
from vision import equilibrix_ring as eq_ring
from vision.equilibrix import debug_images, locate_board, read_equilibrix, read_with_pose, verify_pose
from vision.equilibrix_complete import complete
from vision.equilibrix_fields import _covered_samples, light_terms, fit_light
from vision.equilibrix_drawing import CORNER_NODES, pose_from
from vision.equilibrix_edges import working
from vision.equilibrix_pose import _locate_in
from vision.equilibrix_outlines import (ellipse_points, ellipse_radius, fit_ellipses, one_outline, paired_ellipses,
                                       smooth_arcs)
from vision.errors import ReadError
from vision.image_io import load_image
from vision.synth.conditions import CONDITIONS, sample_conditions
from vision.synth.equilibrix import EquilibrixPhoto, random_position, render_board_topdown, render_photo
from vision.synth.phone import develop

SIZE = (960, 720)


@lru_cache(maxsize=None)
def photo(condition: str, seed: int) -> EquilibrixPhoto:
    rng = np.random.default_rng(seed)
    return render_photo(rng, sample_conditions(condition, rng), SIZE, random_position(rng, 14))


def upright(p: EquilibrixPhoto) -> np.ndarray:
    return load_image(p.encoded) if p.encoded is not None else p.image


def wrong(p: EquilibrixPhoto, reading) -> list[str]:
    return [n for n in fg.names() if p.fields.get(n, ".") != reading.fields.get(n, ".")]


def silent_errors(p: EquilibrixPhoto, reading) -> list[str]:
    """Visible fields read wrong without being marked uncertain: what must never happen."""
    return [n for n in wrong(p, reading) if n not in p.occluded and n not in reading.uncertain]


def test_the_generator_states_a_legal_position() -> None:
    p = photo("clean", 7)
    assert p.fields and set(p.fields.values()) <= {"B", "W"}
    assert len(p.ring) == fg.SLOTS and 0 <= p.origin < fg.SLOTS
    # The fields are a reachable position: scoring accepts them.
    equilibrix.score_state({"fields": p.fields}, equilibrix.Setup())
    # Every taken ring tile lies on the board: the ring's holes match the tiles laid.
    assert sum(t is None for t in p.ring) >= 1


def test_the_board_from_above_shows_tiles_on_their_fields() -> None:
    position = random_position(np.random.default_rng(4), 10)
    image = render_board_topdown(position, px_per_r=24)
    assert image.shape == (int(np.ceil(2 * fg.DISC * 24)),) * 2 + (3,)
    for name, colour in position.fields.items():
        x, y = (fg.centroids()[fg.names().index(name)] * 24).astype(int)
        assert (image[y, x].mean() < 60) == (colour == "B") and (image[y, x].min() > 200) == (colour == "W")


@pytest.mark.parametrize("condition", ["clean", "rotation"])
def test_fields_ring_and_origin_are_read(condition: str) -> None:
    p = photo(condition, 7)
    reading = read_equilibrix(upright(p))
    assert wrong(p, reading) == []
    # The drawing lands on the fields: the corner nodes within a tenth of r (r is ~55 px here).
    assert np.abs(reading.pose.corners - p.corners).max() < 6
    assert [t["side"] if t else None for t in reading.ring] == p.ring_sides
    assert [t["shape"] if t else None for t in reading.ring] == p.ring
    assert reading.origin == p.origin


@pytest.mark.parametrize("condition", ["perspective", "hand", "cup", "patterned_table"])
def test_hard_photos_are_read_right_or_marked_uncertain(condition: str) -> None:
    """Steep tilt, a hand or a cup over the board, a busy tablecloth: never a silent misread."""
    p = photo(condition, 7)
    assert silent_errors(p, read_equilibrix(upright(p))) == []


def test_a_steep_busy_view_is_confirmed_by_the_drawing() -> None:
    """A "hard" photo (steep, lens, glare, shadow, a cup): the board's edge is not among the
    round outlines, so the frame comes from the printed circle and the vanishing line; the
    drawing confirms the pose, and the fields are read, not all left uncertain."""
    p = photo("hard", 3)
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality >= 0.3
    assert np.abs(reading.pose.corners - p.corners).max() < 8
    assert silent_errors(p, reading) == []
    assert len(reading.uncertain) < len(fg.names()) / 2


@pytest.mark.parametrize("seed", [7, 8])
def test_glared_fields_are_read_right_or_marked_uncertain(seed: int) -> None:
    p = photo("glare", seed)
    assert silent_errors(p, read_equilibrix(upright(p))) == []


def _highlight(image: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
    """A lamp's reflection: white light added, saturating in its middle, fading out by ``radius``."""
    ys, xs = np.mgrid[0:image.shape[0], 0:image.shape[1]]
    spot = 320.0 * np.exp(-((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2) / (2 * (radius / 2) ** 2))
    return np.clip(image + spot[..., None], 0, 255).astype(np.uint8)


def test_a_black_tile_under_a_highlight_is_still_black() -> None:
    """The part of a black tile the highlight misses stays black: the field is not read white."""
    p = photo("clean", 7)
    reading = read_equilibrix(upright(p))
    black = sorted(n for n, c in p.fields.items() if c == "B")[0]
    centre = reading.pose.to_photo(fg.centroids()[[fg.names().index(black)]])[0]
    glared = read_with_pose(_highlight(upright(p), centre, 0.12 * 55), reading.pose)
    assert glared.fields.get(black) == "B"


def test_glared_wood_is_not_read_as_a_sure_white_tile() -> None:
    p = photo("clean", 7)
    reading = read_equilibrix(upright(p))
    empty = [n for n in fg.names() if n not in p.fields]
    centres = reading.pose.to_photo(fg.centroids()[[fg.names().index(n) for n in empty]])
    image = upright(p)
    for centre in centres[:6]:
        image = _highlight(image, centre, 0.5 * 55)
    glared = read_with_pose(image, reading.pose)
    for name in empty[:6]:
        assert glared.fields.get(name, ".") == "." or name in glared.uncertain


def test_a_barrel_lens_is_fitted() -> None:
    """A cheap wide lens bends the board: the pose's lens term straightens it, so the outer
    fields and the ring are read where they are."""
    p = photo("lens_distortion", 8)
    reading = read_equilibrix(upright(p))
    assert reading.pose.distortion < -0.05
    assert np.abs(reading.pose.corners - p.corners).max() < 6
    assert wrong(p, reading) == []
    assert [t["shape"] if t else None for t in reading.ring] == p.ring


def test_fields_under_an_occluder_are_reported_uncertain() -> None:
    p = photo("clean", 7)
    image = upright(p).copy()
    reading = read_equilibrix(image)
    # A skin-coloured patch (a finger tip) over three fields' middles: flat, no drawn lines.
    centre = reading.pose.to_photo(fg.centroids()[[fg.names().index("T 0 0 +")]])[0]
    cv2.circle(image, tuple(int(v) for v in centre), 22, (120, 150, 200), -1)
    covered = read_with_pose(image, reading.pose)
    assert "T 0 0 +" in covered.uncertain or covered.fields.get("T 0 0 +") == p.fields.get("T 0 0 +")


def test_state_json_follows_the_contract() -> None:
    p = photo("clean", 7)
    reading = read_equilibrix(upright(p))
    out = reading.to_state_json()
    assert out["state"]["game"] == "equilibrix"
    assert set(out["state"]["fields"]) <= set(fg.names())
    assert set(out["state"]["fields"].values()) <= {"B", "W"}
    assert len(out["state"]["ring"]) == fg.SLOTS and out["state"]["origin"] == p.origin
    assert 0.0 <= out["confidence"] <= 1.0 and out["timing_ms"] > 0 and isinstance(out["uncertain"], list)
    images = debug_images(reading)
    assert set(images) == {"rectified", "overlay"} and images["overlay"].ndim == 3


# --- the command line --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def photo_file(tmp_path_factory):
    p = photo("clean", 7)
    path = tmp_path_factory.mktemp("eq") / "board.jpg"
    cv2.imwrite(str(path), upright(p), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return str(path), p


def test_cli_read_and_score(capsys, photo_file, tmp_path) -> None:
    path, p = photo_file
    code = main(["read", path, "--game", "equilibrix", "--json", "--debug-dir", str(tmp_path / "dbg")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["state"]["fields"] == p.fields
    assert {f.name for f in (tmp_path / "dbg").iterdir()} == {"rectified.png", "overlay.png"}
    code = main(["score", path, "--game", "equilibrix", "--variant", "tri-mety", "--json"])
    doc = json.loads(capsys.readouterr().out)
    expected = equilibrix.score_state({"fields": p.fields}, equilibrix.Setup(variant="tri-mety")).to_json()
    assert code == 0 and doc["players"] == expected["players"]


def test_cli_refuses_a_photo_without_a_board(capsys, tmp_path) -> None:
    noise = tmp_path / "noise.png"
    cv2.imwrite(str(noise), np.random.default_rng(0).integers(0, 255, (600, 800, 3), dtype=np.uint8))
    code = main(["read", str(noise), "--game", "equilibrix", "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and json.loads(out)["error"]["code"] == "no_board"
    assert err.startswith("tableref: ") and err.count("\n") == 1


# --- the live referee's calls ------------------------------------------------------------------

def test_locate_verify_and_read_with_pose() -> None:
    image = upright(photo("clean", 7))
    pose = locate_board(image)
    assert verify_pose(image, pose)
    moved = replace(pose, homography=np.array([[1, 0, -0.5], [0, 1, 0], [0, 0, 1.0]]) @ pose.homography)
    assert not verify_pose(image, moved)
    assert read_with_pose(image, pose).fields == read_equilibrix(image, pose).fields


def test_a_pose_the_drawing_does_not_confirm_leaves_every_field_uncertain() -> None:
    image = upright(photo("clean", 7))
    pose = locate_board(image)
    assert pose.quality >= 0.3  # the share of the drawing's pieces that agree with it
    doubtful = read_with_pose(image, replace(pose, quality=0.0))
    assert sorted(doubtful.uncertain) == sorted(fg.names())


def _turned(image: np.ndarray, pose, top_deg: float) -> np.ndarray:
    """The photo turned about the board's centre so the top side's middle lies ``top_deg``
    clockwise from straight up."""
    centre = pose.to_photo(np.array([[fg.DISC, fg.DISC]]))[0]
    corners = pose.to_board(pose.corners)
    mid = pose.to_photo(((corners[0] + corners[1]) / 2)[None])[0]
    now = np.degrees(np.arctan2(mid[0] - centre[0], centre[1] - mid[1]))
    turn = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), float(now - top_deg), 1.0)
    return cv2.warpAffine(image, turn, image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)


def _top_deg(pose) -> float:
    centre = pose.to_photo(np.array([[fg.DISC, fg.DISC]]))[0]
    corners = pose.to_board(pose.corners)
    mid = pose.to_photo(((corners[0] + corners[1]) / 2)[None])[0]
    return float(np.degrees(np.arctan2(mid[0] - centre[0], centre[1] - mid[1])))


def test_near_a_tie_of_the_top_side_a_reference_pose_keeps_the_labelling() -> None:
    """Turned by about 30 degrees, two sides are about equally near the top: alone, the nearer
    is the top side; with the camera's earlier pose, the side that was on top stays on top, so
    re-locating does not relabel every field by 60 degrees. Away from a tie nothing changes."""
    image = upright(photo("clean", 7))
    pose = locate_board(image)
    near_tie = _turned(image, pose, 28.0)
    alone = locate_board(near_tie)
    assert abs(_top_deg(alone) - 28.0) < 1.5
    earlier = locate_board(_turned(image, pose, 32.0))  # just past the tie: the other side on top
    assert abs(_top_deg(earlier) + 28.0) < 1.5
    kept = locate_board(near_tie, reference=earlier)
    assert abs(_top_deg(kept) + 32.0) < 1.5
    # The same board, labelled 60 degrees on: every field read under one labelling is the
    # field turned back by 60 degrees under the other.
    a, b = read_with_pose(near_tie, alone).fields, read_with_pose(near_tie, kept).fields
    back, names = fg.turn_table(-1), fg.names()
    assert a and {names[back[names.index(n)]]: c for n, c in b.items()} == a
    far = locate_board(_turned(image, pose, 10.0), reference=earlier)
    assert abs(_top_deg(far) - 10.0) < 1.5


def test_empty_fields_in_a_hard_shadow_are_not_read_as_sure_black_tiles() -> None:
    """A deep shadow across the flower darkens bare wood more than the light field's smooth
    surface (fitted on the wood round the flower) follows, so by colour alone the shadowed
    fields look black. Their drawn outlines still show darker than their middles, which a
    black tile's never does: they are read empty (not surely), none is a silent black."""
    rng = np.random.default_rng(21)
    p = render_photo(rng, replace(sample_conditions("shadow", rng), shadow=0.65), SIZE, random_position(rng, 14))
    reading = read_equilibrix(upright(p))
    assert silent_errors(p, reading) == []
    assert len(wrong(p, reading)) <= 3


def test_wood_a_phone_tone_map_lifts_beside_black_tiles_is_not_a_sure_white() -> None:
    """A phone's local tone map brightens the wood round the black tiles until it is as bright
    and grey as white plastic (a halo). The wood keeps its grain, which flat plastic has not:
    those fields are marked, none is a silent white (three were before)."""
    p = photo("clean", 5)
    image = develop(upright(p), "local_tone_map", np.random.default_rng(5))
    assert silent_errors(p, read_equilibrix(image)) == []


def test_a_shadowed_hand_over_empty_fields_is_guessed_empty_not_black() -> None:
    """A hand's shadowed skin is dark enough to be read black by its brightness, but black
    plastic is neutral (as blue over the wood's light as this photo's black tiles) and skin is
    as red as the wood: the covered fields' best guess is empty, and they stay uncertain."""
    p = photo("clean", 7)
    image = upright(p)
    reading = read_equilibrix(image)
    for name in [n for n in fg.names() if n not in p.fields][:40:8]:
        covered = image.copy()
        centre = reading.pose.to_photo(fg.centroids()[[fg.names().index(name)]])[0]
        cv2.circle(covered, tuple(int(v) for v in centre), 22, (50, 70, 105), -1)
        guess = read_with_pose(covered, reading.pose)
        assert guess.fields.get(name, ".") == "." and name in guess.uncertain


def test_a_hand_over_the_rim_does_not_drag_the_light_down() -> None:
    """The light is fitted on the bare wood round the flower. A dark hand over a quarter of that
    wood pulled a least-squares fit through every sample far down beside it, so the bare wood
    there looked brighter and bluer than the light, as white plastic does: three empty fields
    beside the hand were silent whites on this photo (the bench's held-out seed 37, `hand`
    photo 3). The light now starts from the samples a consensus agrees with."""
    rng = np.random.default_rng([37, list(CONDITIONS).index("hand"), 3])
    p = render_photo(rng, sample_conditions("hand", rng), SIZE, random_position(rng))
    assert silent_errors(p, read_equilibrix(upright(p))) == []


@pytest.mark.parametrize("i", [11, 14])
def test_fields_beside_a_mug_standing_on_the_board_are_doubted_in_its_colour(i: int) -> None:
    """A dark mug standing on the flower (the bench's mugs reach in over the board's edge):
    its side covered bare fields at its edge, among fields it covers, and they were read black
    as surely as tiles (two fields on photo 11, one on 14, of Equilibrix round 19's mug
    photos, seed 8)."""
    from bench.equilibrix_bench import BENCH
    from bench.standing_mug import mug_on_board
    stats, truth = mug_on_board(BENCH, 8, i)
    assert len(truth.occluded) >= 50 and stats["refused"] == 0 and stats["silent"] == 0


@pytest.mark.parametrize("i", [6, 13])
def test_a_field_at_a_standing_mugs_rim_is_doubted_in_the_colour_the_mug_lends(i: int) -> None:
    """Held-out seed 10's mug photos: on photo 6 a pale mug's rim made a bare field under it a
    sure white (its neighbours: two covered, one a rough doubtful white); on photo 13 a dark
    mug's side made one a sure black tile, its outline lighter than its middle, while the
    fields beside it were black, smooth and outlineless (no tile's gap) and so not counted as
    covered. Each is now doubted, as the fields the mug lends its colour to are."""
    from bench.equilibrix_bench import BENCH
    from bench.standing_mug import mug_on_board
    stats, truth = mug_on_board(BENCH, 10, i)
    assert len(truth.occluded) >= 30 and stats["refused"] == 0 and stats["silent"] == 0


@pytest.mark.parametrize("i", [0, 34])
def test_a_board_with_a_mug_hiding_half_its_drawing_is_not_refused(i: int) -> None:
    """A mug standing on the flower hides half the drawing's pieces: too few agreed with the
    pose, and the photo was refused ("no board"), though the board's edge and the printed
    circle show all round the mug and place it (seed 8 mug photos 0 and 34). The board is
    read, and nothing read wrong is taken as sure."""
    from bench.equilibrix_bench import BENCH
    from bench.standing_mug import mug_on_board
    stats, truth = mug_on_board(BENCH, 8, i)
    assert len(truth.occluded) >= 50 and stats["refused"] == 0 and stats["silent"] == 0
    assert stats["misread"] < 72  # read, not lost: fewer than half the 144 fields wrong (a refusal: all)


def test_a_white_field_a_drawn_line_crosses_is_not_sure(monkeypatch) -> None:
    """A hand over the lower left of the drawing (the bench's seed 3, `hand` photo 5, at its
    1600×1200) leaves the pieces of one corner to fit the pose: 15 of 49 agree, and the far side
    is placed 0.14-0.44 r off. The drawn lines then run through most fields' middles:
    `P 0 -3 2`'s took half of the white tile beside it and was a sure white, 40 grey levels
    rough. White plastic is flat, smoother than the bare wood round the flower (5.5 here);
    the fields' own median roughness (22.7 here) is the lines' and could not tell.
    The printed circle now sets that pose right (the next test); left out here, the pose is the
    one fitted through the corner alone, as on any photo where the circle does not show."""
    monkeypatch.setattr(eq_pose, "_round_the_circle", lambda gray, pose, votes, found, thin: (pose, votes, found))
    rng = np.random.default_rng([3, list(CONDITIONS).index("hand"), 5])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("hand", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert p.fields.get("P 0 -3 2", ".") == "." and "P 0 -3 2" not in p.occluded
    assert "P 0 -3 2" in reading.uncertain
    assert [n for n in wrong(p, reading) if n not in reading.uncertain] == []


def test_a_pose_the_pieces_of_one_corner_fit_is_set_right_by_the_printed_circle() -> None:
    """The same photo: the 15 pieces that agree with the pose fitted through them lie mostly on
    the sides the hand leaves (three neighbouring sixths of the drawing hold one each), and that
    homography placed the far side 0.14-0.44 r off. The printed circle
    shows round the rest of the flower: fitted through it and the pieces, and the drawing
    matched again, the hexagon's corners lie where the renderer put them and `P 0 -3 2` (bare
    wood beside a white tile) is read empty, surely."""
    rng = np.random.default_rng([3, list(CONDITIONS).index("hand"), 5])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("hand", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    r_px = np.linalg.norm(p.corners - np.roll(p.corners, 1, 0), axis=1).mean() / 3  # corner nodes lie 3 r apart
    assert np.linalg.norm(reading.pose.corners - p.corners, axis=1).max() < 0.1 * r_px
    assert reading.fields.get("P 0 -3 2", ".") == "." and "P 0 -3 2" not in reading.uncertain
    assert silent_errors(p, reading) == []


def test_glared_wood_on_a_board_without_white_tiles_is_judged_by_the_ring_s_white_plastic() -> None:
    """The bench's seed 79, `glare` photo 2, at 1600×1200: no white tile lies on the board, and
    the three fields read white are all glared wood. `T 0 -3 +` (6.4 grey levels rough, the
    bare wood's 4.6) was a sure white: the plastic's roughness was taken from the smoothest
    quarter of the fields read white, wood here. The ring's white tiles (about 1.6) are plastic
    for sure: against them the field is wood's grain, and not sure."""
    rng = np.random.default_rng([79, list(CONDITIONS).index("glare"), 2])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("glare", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert p.fields.get("T 0 -3 +", ".") == "." and "T 0 -3 +" not in p.occluded
    assert reading.fields.get("T 0 -3 +", ".") == "." or "T 0 -3 +" in reading.uncertain
    assert silent_errors(p, reading) == []


def test_a_black_tile_under_a_soft_reflection_over_the_wood_round_it_is_not_a_sure_white() -> None:
    """The bench's seed 79, `hard` photo 3, at 1600×1200: a soft reflection, clipping nothing,
    lifts two black tiles (`T 2 -2 -`, `P 3 0 2`) to +0.15 and +0.35 over the light, as blue as
    white plastic, and they were sure whites. It lifts the wood round them as much: white
    plastic lies about 0.45 above the wood in any light the two share, and these are no
    brighter than the wood round them. They are read black (the grey-plastic rule), or at
    least not surely white."""
    rng = np.random.default_rng([79, list(CONDITIONS).index("hard"), 3])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("hard", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    for name in ("T 2 -2 -", "P 3 0 2"):
        assert p.fields[name] == "B" and name not in p.occluded
        assert reading.fields.get(name) == "B" or name in reading.uncertain
    assert silent_errors(p, reading) == []


def test_a_black_tile_a_highlight_clips_is_best_guessed_black_by_its_darkest_part() -> None:
    """A window's reflection clips half the middle of black tiles (the bench's seed 61, `glare`
    photo 0, at its 1600×1200): their mean is as white as plastic, and they were best guessed
    white. The darkest quarter, which the highlight misses, is neutral and darker than the
    darkest part of the bare wood round them; white plastic's stays brighter than the wood's:
    they are best guessed black, still uncertain."""
    rng = np.random.default_rng([61, list(CONDITIONS).index("glare"), 0])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("glare", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    for name in ("T -3 1 -", "T -2 1 +", "T -1 0 -"):
        assert p.fields[name] == "B" and name not in p.occluded
        assert reading.fields.get(name) == "B" and name in reading.uncertain
    assert silent_errors(p, reading) == []


def test_the_light_follows_the_wood_not_a_hand_over_a_quarter_of_it() -> None:
    # Wood samples on the two rings round the flower under a smooth light, a quarter of them
    # (one arc) under a dark hand (skin: darker and redder than the wood); the light is
    # recovered where the flower lies. A shadow there (darker but bluer) is light and is kept.
    angles = np.radians(np.arange(0, 360, 10))
    points = np.vstack([fg.DISC + radius * np.column_stack([np.cos(angles), np.sin(angles)])
                        for radius in (3.15, 3.5)])
    light = np.array([[5.0, 4.9, 4.6], [0.1, 0.08, 0.05], [-0.05, -0.04, -0.02], [-0.1, -0.1, -0.1],
                      [-0.05, -0.05, -0.05], [0.02, 0.02, 0.02]])
    logs = light_terms(points) @ light
    hand = np.tile((np.degrees(angles) > 215) & (np.degrees(angles) < 305), 2)
    wobble = 0.1 * np.sin(7 * np.arange(hand.sum()))[:, None]
    flower_fields = light_terms(fg.centroids())
    skin = logs.copy()
    skin[hand] += np.array([-0.9, -0.8, -0.6]) + wobble  # log B, G, R
    assert np.abs(flower_fields @ (fit_light(points, skin) - light)).max() < 0.02
    assert np.array_equal(_covered_samples(points, skin), hand)
    shadow = logs.copy()
    shadow[hand] += np.array([-0.5, -0.6, -0.7])
    assert np.array_equal(_covered_samples(points, shadow), np.zeros(len(points), bool))


def test_each_fields_figures_are_its_middles_own_when_computed_a_size_group_at_a_time() -> None:
    """The figures of the fields' middles (median colour, clipped and glared shares, the darkest
    quarter's colour, the tenth percentile, the roughness, whether the photo shows it) are
    computed for all fields of one pixel count at once (session 23: half the fields' reading
    time): each must be exactly what the field's middle alone gives, on a smooth view (close
    ranks, ties) and on noise with clipped channels."""
    cores, _, _ = eq_fields._sampling()
    assert min(len(c) for c in cores) > 0  # every field has a middle: no group is empty
    rng = np.random.default_rng(23)
    n = int(round(fg.EXTENT[0] * eq_fields.PPU))
    smooth = cv2.GaussianBlur(rng.integers(0, 256, (n, n, 3)).astype(np.uint8), (0, 0), 3)
    for view in (smooth, rng.integers(200, 256, (n, n, 3)).astype(np.uint8)):
        pix = view.reshape(-1, 3).astype(np.float64)
        gray = pix.mean(1)
        shown = rng.random(n * n) > 0.001
        per_field = eq_fields._per_field
        assert np.array_equal(per_field(pix, lambda m: np.median(m, 1)), [np.median(pix[c], 0) for c in cores])
        assert np.array_equal(per_field(pix, lambda m: np.mean(m.min(2) >= eq_fields.CLIPPED, 1)),
                              [np.mean(pix[c].min(1) >= eq_fields.CLIPPED) for c in cores])
        assert np.array_equal(per_field(gray, lambda m: np.percentile(m, 10, axis=1)),
                              [np.percentile(gray[c], 10) for c in cores])
        assert np.array_equal(per_field(gray, lambda m: np.std(m, 1)), [np.std(gray[c]) for c in cores])
        assert np.array_equal(per_field(shown, lambda m: m.all(1)), [shown[c].all() for c in cores])
        darkest = [np.mean(pix[c][gray[c] <= np.percentile(gray[c], 100 * eq_fields.DARK_PART)], 0) for c in cores]
        assert np.array_equal(per_field(pix, eq_fields._darkest_part), darkest)


def _tile_by_boolean_counts(blob: np.ndarray) -> tuple[str, float, bool]:
    """What ``_identify_tile`` said before session 23 (each mask's overlap and union counted
    with ``&`` and ``|`` per turn): the exact answer its one product must give."""
    names, masks = eq_ring._shape_masks()
    half = masks.shape[1] // 2
    ys, xs = np.nonzero(blob)
    cy, cx = int(round(ys.mean())), int(round(xs.mean()))
    window = np.zeros(masks.shape[1:], bool)
    y0, x0 = cy - half, cx - half
    crop = blob[max(0, y0):y0 + 2 * half + 1, max(0, x0):x0 + 2 * half + 1]
    window[max(0, -y0):max(0, -y0) + crop.shape[0], max(0, -x0):max(0, -x0) + crop.shape[1]] = crop
    iou = np.zeros(len(masks))
    for angle in eq_ring.SHAPE_TURNS:
        m = cv2.getRotationMatrix2D((float(half), float(half)), angle, 1.0)
        turned = cv2.warpAffine(window.astype(np.uint8), m, window.shape[::-1], flags=cv2.INTER_NEAREST) > 0
        iou = np.maximum(iou, (masks & turned).sum((1, 2)) / np.maximum((masks | turned).sum((1, 2)), 1))
    best: dict[str, float] = {}
    for name, score in zip(names, iou):
        best[name] = max(best.get(name, 0.0), float(score))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    if ranked[0][1] < eq_ring.MIN_OVERLAP:
        return ranked[0][0], 0.0, False
    return ranked[0][0], float(np.clip((ranked[0][1] - ranked[1][1]) / eq_ring.SHAPE_MARGIN, 0, 1)), True


def test_a_ring_tiles_overlap_with_every_shape_is_counted_exactly_by_one_product() -> None:
    """A ring tile's silhouette against every catalogue shape's mask (session 23: one product,
    not a pass over every mask per turn): the overlaps and unions are the masks' own pixel
    counts, and the tile named, its margin and whether it is a tile at all are what the
    boolean counts give: for every catalogue mask, whole, frayed, cut by the view's edge,
    and for a blob that is no tile."""
    _, masks = eq_ring._shape_masks()
    rows, areas = eq_ring._mask_rows()
    rng = np.random.default_rng(5)
    blob = rng.random(masks.shape[1:]) > 0.6
    blob[10:40, 20:50] = True
    inter = rows @ blob.ravel()
    assert np.array_equal(inter, (masks & blob).sum((1, 2)))
    assert np.array_equal(areas + blob.sum() - inter, (masks | blob).sum((1, 2)))
    side = masks.shape[1]
    silhouettes = [blob]
    for k, mask in enumerate(masks[::3]):
        view = np.zeros((2 * side, 2 * side), bool)
        y, x = rng.integers(0, side, 2) if k % 4 else (-side // 3, side // 2)  # some cut by the view's edge
        y0, x0 = max(0, y), max(0, x)
        view[y0:y + side, x0:x + side] = mask[y0 - y:, x0 - x:]
        frayed = view & (rng.random(view.shape) > 0.05)
        silhouettes += [view, frayed] if frayed.any() else [view]
    for silhouette in silhouettes:
        if silhouette.any():
            assert eq_ring._identify_tile(silhouette) == _tile_by_boolean_counts(silhouette)


def test_a_sure_match_on_a_ring_of_tiles_does_not_hide_the_framed_printed_circle() -> None:
    """On this photo (the bench's held-out seed 37, `cool_light` photo 0; only at its full
    1600×1200) the printed circle, framed by the board's edge, matched the drawing just under
    "sure", and the ring of dark tiles, which nothing frames, matched surely: that pose was ~1.55×
    too large and every field was read uncertain (138 of 144 wrong). A sure match on an unframed
    circle now ends nothing while a framed one's guesses matched: the drawing's pieces decide."""
    rng = np.random.default_rng([37, list(CONDITIONS).index("cool_light"), 0])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("cool_light", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality > 0.6
    assert wrong(p, reading) == []


def test_a_board_on_a_busy_cloth_is_found_from_its_edges_smooth_arcs() -> None:
    """On this photo (the bench's seed 43, `patterned_table` photo 0, at its 1600×1200) the
    cloth's blobs touch the board's edge all round: every edge curve along the board runs into
    the cloth, no curve's ellipse was the board, and the plainly visible board was refused
    (`no_board`). Cut where they turn sharply, the curves give the edge's smooth arcs, and an
    ellipse through two of them is the board's edge."""
    rng = np.random.default_rng([43, list(CONDITIONS).index("patterned_table"), 0])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("patterned_table", rng), (1600, 1200), position)
    gray, lab, _ = working(upright(p))
    with pytest.raises(ReadError):
        _locate_in(gray, lab, (gray.shape[1], gray.shape[0]))  # the whole curves alone
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality > 0.4
    assert wrong(p, reading) == []


@pytest.mark.parametrize("index", [3, 5, 17])
def test_a_board_on_a_boldly_patterned_cloth_is_found_by_the_printed_circle_in_the_fainter_edges(index: int) -> None:
    """The bench's seed 79, `patterned_table` photos 3 and 5 (bold stripes) and 17 (a bench
    photo beyond its six: a dark grid), at 1600×1200: a plainly visible board on a boldly
    patterned cloth. The pattern holds the photo's strongest steps, and the edge detector's cut
    they set lies above the printed circle's thin line, which left no edge at all; the board's
    edge, cut by every stripe into stretches shorter than an arc, gave no ellipse either, and
    the photo was refused (`no_board`) by both searches. The printed circle lies on bare wood,
    where the cloth does not reach: in the photo's fainter edges it is one whole curve, and the
    board is read."""
    rng = np.random.default_rng([79, list(CONDITIONS).index("patterned_table"), index])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("patterned_table", rng), (1600, 1200), position)
    gray, lab, _ = working(upright(p))
    edges = eq_edges.PhotoEdges(gray)
    for arcs in (False, True):  # the whole curves, and their smooth arcs, at the usual cut
        with pytest.raises(ReadError):
            _locate_in(gray, lab, (gray.shape[1], gray.shape[0]), arcs=arcs, edges=edges)
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality > 0.6
    assert wrong(p, reading) == []


def _bench_photo(seed: int, condition: str, index: int, size: tuple[int, int] = (1600, 1200)) -> EquilibrixPhoto:
    """Photo ``index`` of ``condition`` in the bench's sweep of ``seed``, at its 1600×1200 (the
    same scene at ``size``)."""
    rng = np.random.default_rng([seed, list(CONDITIONS).index(condition), index])
    position = random_position(rng)
    return render_photo(rng, sample_conditions(condition, rng), size, position)


def test_a_board_half_in_a_hard_shadow_is_found_by_its_lines_against_the_light() -> None:
    """Seed 5, `shadow` photo 1 (a development seed's bench photo): a hard shadow lies over half
    the flower. The board's edge and the printed circle were found, but the drawing's best turn
    matched the plain edges at 0.19-0.20, under MIN_TRY, and the plainly visible board was
    refused (`no_board`). A shadow darkens the wood and its lines alike: against the light round
    them the lines in the shade are as strong as in the sun, and the board is read."""
    p = _bench_photo(5, "shadow", 1)
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality > 0.5
    assert wrong(p, reading) == []


def test_a_circle_found_in_an_outline_taken_for_the_printed_one_does_not_end_the_search() -> None:
    """Seed 5, `lens_distortion` photo 4 (a development seed's bench photo): the board's edge,
    taken for the printed circle, had a circle matched at 0.16 inside its scaled-up disc, midway
    between the ring and the printed circle, which nothing frames; that find ended the search
    before the printed circle's own outline was looked inside, and the drawing matched "surely"
    on it at 1.5 times the board's size: every field was in doubt, 139 wrong. Only a find the
    board's edge frames ends the search now."""
    p = _bench_photo(5, "lens_distortion", 4)
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality > 0.6
    assert wrong(p, reading) == []


def test_smooth_arcs_are_cut_where_a_curve_turns_sharply() -> None:
    # A circle's outline joined to a straight stripe at a right angle, as one curve: the arc is
    # kept, the stripe (straight) is not, and the ellipse through the arc is the circle.
    t = np.linspace(0.0, np.pi, 400)
    arc = np.column_stack([300 + 150 * np.cos(t), 300 + 150 * np.sin(t)])
    stripe = np.column_stack([np.linspace(150, 10, 200), np.full(200, 300.0)])
    curve = np.round(np.vstack([arc, stripe, stripe[::-1], arc[::-1]])).astype(np.int32)[:, None, :]
    arcs = smooth_arcs([curve], 540)
    assert arcs and all(np.hypot(*(a - 300).T).min() > 145 for a in arcs)
    (cx, cy), (d1, d2), _ = paired_ellipses(arcs[:1], lambda found: np.ones(len(found)), lambda _: True)[0]
    assert abs(cx - 300) < 2 and abs(cy - 300) < 2 and abs(d1 - 300) < 3 and abs(d2 - 300) < 3


def test_wood_a_highlight_partly_clips_is_guessed_empty_by_its_darkest_part() -> None:
    """A window's reflection across two empty fields (the bench's seed 53, `glare` photo 0, at
    its 1600×1200) washes their middles to white, but the darkest quarter, which the highlight
    misses, keeps the wood's red hue: their best guess is empty (they were read white), and
    they stay uncertain."""
    rng = np.random.default_rng([53, list(CONDITIONS).index("glare"), 0])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("glare", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    for name in ("T 2 -1 -", "P 2 0 0"):
        assert p.fields.get(name, ".") == "."
        assert reading.fields.get(name, ".") == "." and name in reading.uncertain
    assert [n for n in wrong(p, reading) if n not in p.occluded] == []


@pytest.mark.parametrize("seed, condition, index, fields", [
    (3, "glare", 0, ("P -1 2 0", "P 1 1 2")),  # a lamp's reflection clips their red and green
    (3, "hard", 0, ("P 3 -2 1",)),  # a soft reflection, nothing clipped: the board is read exactly
])
def test_wood_a_highlight_pulls_towards_the_lamps_hue_is_guessed_empty(seed, condition, index, fields) -> None:
    """Wood under a highlight (the bench's photos at their 1600×1200) turns bright, and its hue
    moves towards the lamp's, that of plastic: these fields were read white, not surely. They
    stay clearly redder than the plastic, which added light leaves neutral, the highlight shows
    (it clips part of them, or their grain shows), and their blue channel is not clipped (only
    that could make them look redder than they are): their best guess is empty, and they stay
    uncertain."""
    rng = np.random.default_rng([seed, list(CONDITIONS).index(condition), index])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions(condition, rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    for name in fields:
        assert p.fields.get(name, ".") == "."
        assert reading.fields.get(name, ".") == "." and name in reading.uncertain
    assert silent_errors(p, reading) == []
    if condition == "hard":
        assert wrong(p, reading) == []


def test_white_tiles_a_shadow_makes_look_red_stay_white() -> None:
    """In a dim photo with a hand's shadow over part of the board (the bench's seed 79, `hard`
    photo 1, at its 1600×1200) the smooth light field misses the shadow, and white tiles in it
    look as much redder than plastic as glared wood does. Nothing clips them and they are as
    smooth as plastic: no highlight shows, and their best guess stays white."""
    rng = np.random.default_rng([79, list(CONDITIONS).index("hard"), 1])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("hard", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    whites = ("T -2 -2 -", "P -2 -1 0", "P -2 -1 2", "P -1 -2 1", "P 0 -2 0", "T 0 -2 +")
    assert [p.fields.get(n) for n in whites] == ["W"] * len(whites)
    assert [reading.fields.get(n) for n in whites] == ["W"] * len(whites)
    assert silent_errors(p, reading) == []


def test_white_tiles_whose_blue_a_highlight_clips_stay_white() -> None:
    """Under a cool lamp white plastic's blue channel is its brightest, so a highlight clips it
    first and the tile looks redder than it is: that is no sign of wood, and its best guess
    stays white."""
    p = photo("cool_light", 9)
    reading = read_equilibrix(upright(p))
    whites = sorted(n for n, c in p.fields.items() if c == "W")[:6]
    image = upright(p)
    for centre in reading.pose.to_photo(fg.centroids()[[fg.names().index(n) for n in whites]]):
        image = _highlight(image, centre, 0.5 * 55)
    glared = read_with_pose(image, reading.pose)
    assert [glared.fields.get(n) for n in whites] == ["W"] * len(whites)


def test_a_black_tile_under_a_shadows_edge_is_best_guessed_black() -> None:
    """A shadow's edge across a black tile (the bench's seed 43, `shadow` photo 1, at its
    1600×1200) darkens part of the gap round it, so its outline no longer shows lighter than
    its middle, and the shadow rule took it for a shadowed patch of plastic: white, not
    surely. White plastic shows the drawn line at least as well as bare wood; this outline
    shows far less: it stays black (still uncertain)."""
    rng = np.random.default_rng([43, list(CONDITIONS).index("shadow"), 1])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions("shadow", rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert p.fields["T -2 2 -"] == "B"
    assert reading.fields.get("T -2 2 -") == "B" and "T -2 2 -" in reading.uncertain
    assert wrong(p, reading) == []


@pytest.mark.parametrize("seed, condition, index, tiles", [
    (11, "dim", 2, ("P 0 -3 0", "P 1 -3 2")),  # by their colour alone nearer white than black
    (3, "stray_pieces", 1, ("T -2 -2 -", "P -1 -2 1")),  # their outline shows: "shadowed white"
])
def test_a_black_tile_a_soft_reflection_turns_grey_is_best_guessed_black(seed, condition, index, tiles) -> None:
    """A soft window reflection (the bench's photos at their 1600×1200) adds more light to the
    glossy tiles than to the wood: black tiles turn grey, neutral, and their gap no longer
    shows lighter than their middle. They were best guessed white. White plastic is brighter
    than the wood in the same light, and these are darker than the bare wood round them: they
    are best guessed black, still uncertain, and the boards are exact."""
    rng = np.random.default_rng([seed, list(CONDITIONS).index(condition), index])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions(condition, rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    for name in tiles:
        assert p.fields[name] == "B" and name not in p.occluded
        assert reading.fields.get(name) == "B" and name in reading.uncertain
    assert wrong(p, reading) == []


def test_the_wood_round_a_field_follows_a_local_shadow() -> None:
    """The wood round a field is the fields read empty among its neighbours and theirs: a
    shadow over them shows there, whatever the smooth light field says; too few: unknown."""
    bright = np.zeros(144)
    i = 70
    bright[eq_fields._round_about()[i]] = -0.5
    empty = np.ones(144, bool)
    which = np.zeros(144, bool)
    which[[i, 0]] = True
    round_ = eq_fields._wood_round(bright, empty, which)
    assert round_[i] == pytest.approx(-0.5) and np.isnan(round_[1])  # field 1 was not asked for
    few = empty & ~eq_fields._round_about()[i]
    few[np.flatnonzero(eq_fields._round_about()[i])[:2]] = True
    assert np.isnan(eq_fields._wood_round(bright, few, which)[i])


def test_the_shades_hue_is_measured_on_the_wood_darker_than_the_light() -> None:
    """A cast shadow takes the lamp's warm light away and leaves the room's: the bare wood in it
    is darker and bluer together. How much bluer per unit of darkness is the slope of the wood
    samples darker than the light field; with too few of them there is no shade to measure."""
    angles = np.linspace(0, 2 * np.pi, 36, endpoint=False)
    points = fg.DISC + 3.3 * np.column_stack([np.cos(angles), np.sin(angles)])
    coef = np.zeros((6, 3))
    coef[0] = 5.0  # an even light: log BGR 5 everywhere
    logs = np.full((36, 3), 5.0)
    depth = np.where(np.arange(36) < 12, 0.5, 0.0)  # a third of the wood in a shadow
    logs += np.column_stack([-0.8 * depth, -depth, -1.2 * depth])  # 0.4 bluer (B - R) per unit darker
    assert eq_fields._shade_hue(points, logs, coef) == pytest.approx(0.4)
    logs[2:12] = 5.0  # two shaded samples: too few
    assert eq_fields._shade_hue(points, logs, coef) == 0.0


def test_empty_fields_in_a_cast_shadow_are_best_guessed_empty() -> None:
    """A cast shadow over most of the flower (development seed 5, `shadow` photo 7, beyond the
    bench's six, at 1600×1200): the bare wood in it is darker than the light field (fitted on
    the wood round the flower) says, and bluer, the lamp's warm light gone; far from every
    class, its fields were best guessed black or white. The wood in the shade round the flower
    shows how much bluer the shade makes it: these fields are as red as the shaded wood, their
    drawn outlines show, and they are best guessed empty, still uncertain (the fields in the
    deepest shade, darker than half-way to black, are left as they were)."""
    p = _bench_photo(5, "shadow", 7)
    reading = read_equilibrix(upright(p))
    shaded = ("P -1 0 0", "P 0 2 0", "P 1 1 1", "P 2 -1 1", "P 2 0 2", "T -1 0 +", "T 0 1 -", "T 2 -2 +")
    assert all(p.fields.get(n, ".") == "." and n not in p.occluded for n in shaded)
    assert [reading.fields.get(n, ".") for n in shaded] == ["."] * len(shaded)
    assert all(n in reading.uncertain for n in shaded)
    assert silent_errors(p, reading) == []


def test_a_photo_read_twice_reads_the_same(tmp_path) -> None:
    """OpenCV's IPP paths (off for every reader, `vision/__init__.py`) made a read depend on
    where buffers lay in memory: a glared board's pose came out 0.67 on one read and 0.71 on
    the next. Every read of one photo must give the same pose, fields and doubts."""
    assert not cv2.ipp.useIPP()
    image = upright(photo("glare", 7))
    # OpenCV keeps the switch per thread: the tablet's server and the live referee read in threads of their own
    from companion_app.server import create_app
    from threading import Thread
    seen = []
    app = create_app(tmp_path)
    worker = Thread(target=lambda: (app.test_client().get("/setup"), seen.append(cv2.ipp.useIPP())))
    worker.start()
    worker.join()
    assert seen == [False]
    first, again = read_equilibrix(image), read_equilibrix(image.copy())
    assert first.pose.quality == again.pose.quality
    assert np.array_equal(first.pose.corners, again.pose.corners)
    assert first.fields == again.fields and first.uncertain == again.uncertain


@pytest.mark.parametrize("seed", [11, 13])
def test_a_busy_table_without_a_round_board_is_still_refused(seed: int) -> None:
    """The busy-cloth search (ellipses through smooth arcs) must not make a board of a cloth's
    blobs or another game's plate: a Gemblo board on a patterned table is no Equilibrix board."""
    from vision.synth.gemblo import render_photo as render_gemblo

    rng = np.random.default_rng(seed)
    image = render_gemblo({}, sample_conditions("patterned_table", rng), rng, SIZE).image
    with pytest.raises(ReadError) as refused:
        locate_board(image)
    assert refused.value.code == "no_board"


@pytest.mark.parametrize("seed", [103, 139])
def test_an_empty_gemblo_board_under_a_hard_shadow_is_no_equilibrix_board(seed: int) -> None:
    """Its hexagons match the flower's drawing as a whole above MIN_MATCH (0.40-0.47), while 3
    of its 49 pieces agree: the pose was taken, every field read in doubt. No printed circle
    lies where such a pose puts it, and an Equilibrix board always shows one: refused."""
    from vision.synth.gemblo import render_photo as render_gemblo

    rng = np.random.default_rng(seed)
    image = render_gemblo({}, sample_conditions("shadow", rng), rng, SIZE).image
    with pytest.raises(ReadError) as refused:
        read_equilibrix(image)
    assert refused.value.code == "no_board"


def _steep_photo(seed: int, tilt_deg: float) -> EquilibrixPhoto:
    rng = np.random.default_rng(seed)
    conditions = replace(CONDITIONS["clean"], tilt_deg=tilt_deg, board_fill=0.6)
    return render_photo(rng, conditions, (1280, 960))


@pytest.mark.parametrize("seed, tilt_deg", [(1, 66.0), (4, 70.0), (1, 75.0)])
def test_a_board_seen_too_steeply_is_refused_as_such(seed: int, tilt_deg: float) -> None:
    """Seen more than 65 degrees from straight above (:data:`vision.pose.MAX_VIEW_ANGLE_DEG`),
    as Blokus refuses it: a board found there (66: seen 68 degrees, 70: its pose few pieces
    confirm) or one whose outline is too flat to be looked inside (75) says
    `impossible_angle`, not `no_board` and not a reading."""
    with pytest.raises(ReadError) as refused:
        read_equilibrix(upright(_steep_photo(seed, tilt_deg)))
    assert refused.value.code == "impossible_angle"


def test_a_board_seen_steeply_within_the_limit_is_still_read() -> None:
    p = _steep_photo(1, 55.0)
    reading = read_equilibrix(upright(p))
    assert reading.pose.view_angle_deg() < 65.0 and silent_errors(p, reading) == []


def _circle_arc(centre, radius, start_deg, end_deg, n=120) -> np.ndarray:
    t = np.radians(np.linspace(start_deg, end_deg, n))
    return np.column_stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)])


def test_only_arcs_that_may_lie_on_one_outline_are_paired() -> None:
    """The line through an arc's ends crosses a round outline there only: the rest of it lies
    on the side away from the arc's bulge. A cloth's blob bulging beside the board's edge, or
    two stripes crossing, are not one outline, and no ellipse is fitted through them."""
    board = [_circle_arc((300, 300), 150, a, a + 40) for a in (0, 120, 240)]
    blob = _circle_arc((470, 360), 30, -60, 60, 40)  # just outside the first arc, on its bulge side
    across = np.column_stack([np.linspace(100, 160, 60), 500 + 1.5 * np.sin(np.linspace(0, np.pi, 60))])
    down = np.column_stack([130 + 1.5 * np.sin(np.linspace(0, np.pi, 60)), np.linspace(470, 530, 60)])
    together = one_outline(board + [blob, across, down])
    assert together[:3, :3].all()
    assert not together[0, 3] and not together[3, 0]
    assert not together[4, 5]


def test_the_ellipses_through_pairs_of_arcs_are_opencvs() -> None:
    """The pairs are fitted all at once from sums over each arc; the ellipses must be those
    OpenCV's ``fitEllipse`` gives through the same points: stretches of one outline, alone
    or in pairs, round or flattened by the view."""
    rng = np.random.default_rng(5)
    for _ in range(4):
        outline = ((rng.uniform(200, 500), rng.uniform(200, 400)), (rng.uniform(150, 400), rng.uniform(150, 400)),
                   rng.uniform(0, 180))
        starts = np.array([0, 2 * np.pi / 3, 4 * np.pi / 3]) + rng.uniform(0, 0.5, 3)
        arcs = [np.round(ellipse_points(outline, start + np.linspace(0, rng.uniform(0.3, 1.2), 60))
                         + rng.normal(0, 0.7, (60, 2))) for start in starts]
        pairs = [(i, j) for i in range(3) for j in range(i, 3)]
        for (i, j), mine in zip(pairs, fit_ellipses(arcs, pairs)):
            pts = arcs[i] if i == j else np.vstack([arcs[i], arcs[j]])
            theirs = cv2.fitEllipse(pts.astype(np.float32))
            if mine is None:  # a hyperbola fits a short arc's noise better: OpenCV's "ellipse" is no outline
                assert i == j
                continue
            along = ellipse_radius(mine, ellipse_points(theirs, np.linspace(0, 2 * np.pi, 36)))
            assert np.abs(along - 1).max() < 1e-4


def test_a_plain_frame_without_a_board_pairs_no_arcs_and_looks_for_no_circle(monkeypatch) -> None:
    """The live referee looks for the board every half second while none is in sight: on a
    plain table the busy-table search must cost next to nothing (no arcs: nothing is
    paired, scored or looked inside)."""
    def never(*_, **__):
        raise AssertionError("the busy-table search ran on a plain table")

    monkeypatch.setattr(eq_edges, "OrientedEdges", never)
    monkeypatch.setattr(eq_edges, "paired_ellipses", never)
    monkeypatch.setattr(eq_guesses, "circle_ellipse", never)
    monkeypatch.setattr(eq_circle, "circle_ellipse", never)
    rng = np.random.default_rng(3)
    shade = np.linspace(90, 150, SIZE[0])[None, :, None] + rng.normal(0, 2, (SIZE[1], SIZE[0], 3))
    with pytest.raises(ReadError) as refused:
        locate_board(np.clip(shade, 0, 255).astype(np.uint8))
    assert refused.value.code == "no_board"


def test_a_busy_frame_without_a_board_is_searched_on_one_set_of_edges_once_per_outline(monkeypatch) -> None:
    """On a busy table without the board both searches run: they share the photo's edges
    (found once), and the busy-table search does not look again for the printed circle inside
    an outline the whole-curve search already looked inside."""
    from vision.synth.gemblo import render_photo as render_gemblo

    built, searched = [], []

    class Counted(eq_edges.PhotoEdges):
        def __init__(self, gray):
            built.append(gray.shape)
            super().__init__(gray)

    real = eq_guesses.circle_ellipse
    monkeypatch.setattr(eq_pose, "PhotoEdges", Counted)
    def looked_inside(gray, disc, *rest):
        searched.append(disc)
        return real(gray, disc, *rest)

    monkeypatch.setattr(eq_guesses, "circle_ellipse", looked_inside)
    rng = np.random.default_rng(11)
    image = render_gemblo({}, sample_conditions("patterned_table", rng), rng, SIZE).image
    with pytest.raises(ReadError):
        locate_board(image)
    assert len(built) == 1 and searched
    assert not any(eq_circle.same_ellipse(a, b) for k, a in enumerate(searched) for b in searched[:k])


# --- a board cut by the photo's edge -----------------------------------------------------------

def _cut(p: EquilibrixPhoto, share: float) -> tuple[np.ndarray, np.ndarray]:
    """The photo with the top ``share`` of the node hexagon's height cut off (players frame
    tightly), and where the fields' centroids lie in it (the renderer's truth)."""
    image = upright(p)
    top = int(p.corners[:, 1].min() + share * np.ptp(p.corners[:, 1]))
    corners = np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC
    to_photo, _ = cv2.findHomography(corners, p.corners)
    centroids = cv2.perspectiveTransform(fg.centroids()[None], to_photo)[0] - (0, top)
    return np.ascontiguousarray(image[top:]), centroids


def test_a_board_cut_by_the_photos_edge_is_read_and_the_cut_off_fields_are_uncertain() -> None:
    """A strip of the board beyond the photo's top edge: the board is placed by what shows
    (the outlines' arcs, the drawing's pieces), the fields beyond the edge are reported
    uncertain (best guess empty), the ring's slots there unread, and no field is silently wrong."""
    p = photo("clean", 7)
    image, centroids = _cut(p, 0.12)
    reading = read_equilibrix(image)
    assert reading.pose.quality >= eq_pose.POSE_TRUST
    beyond = [n for n, (_, y) in zip(fg.names(), centroids) if y < 0]
    assert len(beyond) >= 5 and set(beyond) <= set(reading.uncertain)
    assert not set(beyond) & set(reading.fields)
    assert silent_errors(p, reading) == []
    assert len(reading.uncertain) <= 40  # the rest is read
    cut_slots = [j for j in range(fg.SLOTS) if j in reading.ring_uncertain and reading.ring[j] is None]
    assert {0, fg.SLOTS - 1} <= set(cut_slots)  # the slots at the top lie beyond the edge


def test_a_board_mostly_beyond_the_photos_edge_is_refused_with_the_reason() -> None:
    """Half the board cut off: too little shows to place it for sure. The refusal says why."""
    image, _ = _cut(photo("clean", 7), 0.5)
    with pytest.raises(ReadError) as refused:
        read_equilibrix(image)
    assert refused.value.code == "no_board" and "runs out of the photo" in str(refused.value)


def _labels(fields: dict[str, str]) -> np.ndarray:
    """Label indices per field (the reader's order) from ``{"P q s d": "B"}``."""
    names = fg.names()
    out = np.zeros(len(names), int)
    for name, colour in fields.items():
        out[names.index(name)] = eq_fields.LABELS.index(colour)
    return out


def _doubt(*names: str) -> np.ndarray:
    return np.isin(fg.names(), names)


def test_a_doubtful_part_cut_off_from_its_colour_s_sure_network_is_best_guessed_empty() -> None:
    """E4: a colour's fields are one node-connected network. White read surely round node
    (0, 0), a doubtful white beside it (it joins the network) and two doubtful whites at the
    far corner (a part of their own): only the far part could not be on a legal board unless
    yet another field were misread, and is best guessed empty. Black with no sure field keeps
    its guesses (E4 says nothing of where a colour's first tile lies)."""
    label = _labels({"P 0 0 0": "W", "T 0 0 +": "W", "P 1 0 0": "W", "P 3 -3 1": "W", "T 2 -3 +": "W",
                     "P -3 3 0": "B", "P -3 2 1": "B"})
    doubt = _doubt("P 1 0 0", "P 3 -3 1", "T 2 -3 +", "P -3 3 0", "P -3 2 1")
    guessed = complete(label, doubt, slots_empty=18)
    assert (guessed != label).tolist() == _doubt("P 3 -3 1", "T 2 -3 +").tolist()
    assert (guessed[_doubt("P 3 -3 1", "T 2 -3 +")] == eq_fields.LABELS.index(".")).all()
    # A far part holding one sure field is the colour's own: kept whole.
    assert (complete(label, doubt & ~_doubt("P 3 -3 1"), slots_empty=18) == label).all()


def test_a_doubtful_part_one_doubtful_field_could_join_to_its_network_is_kept() -> None:
    """A doubtful white `P 2 0 0` one field away from the sure white `P 0 0 0`: when `P 1 0 0`
    between them (it shares a node with each) is doubtful too, it may be the misread link (a
    shadow, a finger over one field), and the part is kept; when it is surely empty (and so are
    the fields that could link them), the part is cut off and best guessed empty."""
    label = _labels({"P 0 0 0": "W", "T 0 0 +": "W", "P 2 0 0": "W"})
    assert (complete(label, _doubt("P 2 0 0", "P 1 0 0"), slots_empty=18) == label).all()
    assert complete(label, _doubt("P 2 0 0"), slots_empty=18)[_doubt("P 2 0 0")].tolist() == [0]


@pytest.mark.parametrize("slots_empty, kept", [(1, False), (2, True), (0, True)])
def test_a_colour_the_rings_empty_slots_leave_no_tile_for_is_best_guessed_empty(slots_empty, kept) -> None:
    """E1, E2: a ring tile leaves its slot when laid; besides, a colour has one petal and one
    triangle mini-tile. Black's sure fields need a ring tile; white's three doubtful fields need
    one too. With one slot empty, white has laid nothing: best guessed empty. With two, both
    fit; with none, the ring is misread (black's sure fields need a tile gone): no change."""
    label = _labels({"P 0 0 0": "B", "P 0 0 1": "B", "T 0 0 +": "B",
                     "P 3 -3 1": "W", "P 3 -3 2": "W", "T 2 -3 +": "W"})
    doubt = _doubt("P 3 -3 1", "P 3 -3 2", "T 2 -3 +")
    guessed = complete(label, doubt, slots_empty)
    assert (guessed == label).all() == kept
    if not kept:
        assert not (guessed == eq_fields.LABELS.index("W")).any() and (guessed[~doubt] == label[~doubt]).all()
    # One petal and one triangle are white's own mini-tiles: no ring tile needed, kept.
    minis = np.where(_doubt("P 3 -3 2"), 0, label)
    assert (complete(minis, doubt, slots_empty) == minis).all()


@pytest.mark.parametrize("condition, index, doubtful", [
    ("hard", 5, ("T -1 -3 -", "P 0 -3 2")),  # a soft reflection: 12 empty fields read W, apart from W's sure ones
    ("glare", 0, ("P 0 1 0", "T 0 1 +")),  # a lamp's reflection: W's only fields; one ring slot empty, B's tile's
])
def test_doubtful_fields_no_legal_board_holds_are_best_guessed_empty(condition, index, doubtful) -> None:
    """The bench's default seed at 1600×1200. The fields reader leaves these fields in doubt and
    best-guesses them white; the rules say no legal board holds them (E4, or E1 and E2: see
    the two tests above), so their best guess is empty. The board is then read exactly, and
    they stay in doubt."""
    rng = np.random.default_rng([3, list(CONDITIONS).index(condition), index])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions(condition, rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert wrong(p, reading) == []
    assert set(doubtful) <= set(reading.uncertain)


@pytest.mark.parametrize("seed, condition, index, name, colour", [
    (3, "hand", 0, "T -3 2 +", "B"),  # a finger over most of a black tile: its darkest quarter is the tile
    (79, "hand", 0, "P 1 -3 1", "W"),  # a fingertip over a white tile: its darkest quarter is skin
    (3, "hand", 5, "P -1 1 0", "."),  # the hand's edge over bare wood: skin and wood, no plastic
])
def test_a_field_at_a_hands_edge_is_best_guessed_by_the_plastic_it_shows(seed, condition, index, name, colour) -> None:
    """The bench's photos at 1600×1200. A field a hand half covers is rough and in doubt; its
    darkest quarter is the darkest thing in it, skin or the tile. Black plastic is neutral, skin
    (and the wood beside it) as red as the wood: a darkest quarter as dark as a black tile and
    neutral is the tile the finger leaves in sight, and a red one is no black tile. The field is
    best guessed by that, and stays in doubt."""
    rng = np.random.default_rng([seed, list(CONDITIONS).index(condition), index])
    position = random_position(rng)
    p = render_photo(rng, sample_conditions(condition, rng), (1600, 1200), position)
    reading = read_equilibrix(upright(p))
    assert name not in p.occluded and p.fields.get(name, ".") == colour
    assert reading.fields.get(name, ".") == colour and name in reading.uncertain
    assert silent_errors(p, reading) == []


def test_on_a_tie_of_the_drawing_s_pieces_the_board_s_edge_picks_the_pose(monkeypatch) -> None:
    """A blurred photo (held-out seed 97 `blur` 4, defocus 3.5 px and motion 7.5 px) smears the
    drawing's lines so that as many of its pieces (16 of 49) agree with a pose about 1.5x the
    board's size as with the right one; the first fitted, the wrong one, was kept. The right one
    has the board's edge too. Here a development blur photo's right first guess is fitted after a
    guess 1.5x too large whose fit the same number of the drawing's pieces agree with, none of
    the edge's: the right pose is kept."""
    rng = np.random.default_rng([5, list(CONDITIONS).index("blur"), 18])
    p = render_photo(rng, sample_conditions("blur", rng), (1600, 1200), random_position(rng))
    gray, lab, s = working(upright(p))
    size = (gray.shape[1], gray.shape[0])
    right = eq_guesses.first_frame(gray, lab, size, eq_edges.PhotoEdges(gray))[0][0][0]
    grow = np.array([[1.5, 0, -0.5 * fg.DISC], [0, 1.5, -0.5 * fg.DISC], [0, 0, 1.0]])  # 1.5x about the middle
    too_large = right @ grow
    fit = eq_fit.fit_drawing
    _, (drawn, _), found = fit(gray, pose_from(right, size))

    def tied(gray: np.ndarray, start):
        if np.allclose(start.homography, pose_from(too_large, size).homography):
            return fit(gray, start)[0], (drawn, drawn), found
        return fit(gray, start)

    monkeypatch.setattr(eq_pose, "first_frame", lambda *a, **k: [[(too_large, 0.6)], [(right, 0.5)]])
    monkeypatch.setattr(eq_pose, "fit_drawing", tied)
    pose = _locate_in(gray, lab, size)
    truth = np.asarray(p.corners, float) * s
    r_px = np.linalg.norm(truth - np.roll(truth, 1, 0), axis=1).mean() / 3  # corner nodes lie 3 r apart
    off = np.linalg.norm(truth[:, None] - pose.corners[None], axis=2).min(1)  # labelling aside (_upright)
    assert off.max() < 0.1 * r_px


def test_a_drawing_pulled_off_by_a_hand_and_a_mug_is_laid_about_its_printed_circle() -> None:
    """Held-out seed 97 `hard` 2 (a striped cloth, a hand and glare over the flower, a mug at the
    rim, a 35 degree tilt; the same scene at 960x720 fails the same way): the printed circle is
    found right, but the whole-drawing match moved every first guess to the end of its reach
    and a wrong turn, no fit had more than 2 of the drawing's 49 pieces, and the board a person
    reads was refused. Laid about the circle's frame's own middle, turned step by step and
    judged by its pieces, the drawing is found: the board is read, every wrong field in doubt."""
    p = _bench_photo(97, "hard", 2, (960, 720))
    reading = read_equilibrix(upright(p))
    assert reading.pose.quality >= eq_pose.POSE_TRUST
    assert [n for n in wrong(p, reading) if n not in reading.uncertain] == []
    truth = np.asarray(p.corners, float)
    r_px = np.linalg.norm(truth - np.roll(truth, 1, 0), axis=1).mean() / 3  # corner nodes lie 3 r apart
    assert np.linalg.norm(truth[:, None] - reading.pose.corners[None], axis=2).min(1).max() < 0.1 * r_px
