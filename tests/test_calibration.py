"""Calibration: camera from the printed target, board lock, colour profile, the file, the CLI, the page.

The camera tests photograph the ChArUco target through a pinhole camera whose K and lens
distortion are known exactly (a small renderer below: every photo pixel is undistorted,
cast onto the sheet's plane and looked up in the target image, at 2x supersampling), so
the recovered intrinsics can be checked against the truth. Board and colour tests use the
project's synthetic Blokus photos.
"""
import argparse
import json
from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration import Calibration, CalibrationError, load_calibration, save_calibration
from calibration import cli
from calibration.board import board_moved, lock_board
from calibration.camera import CameraModel, collect_views, solve_camera
from calibration.colours import learn_profile, observe, renormalise, require_classes
from calibration.target import SQUARE_MM, SQUARES, charuco_board, detect
from companion_app.calibration_page import CalibrationHooks, install
from companion_app.server import create_app
from rules.blokus import COLOUR_NAMES, COLOURS
from vision.blokus import PALETTE, read_blokus
from vision.equilibrix import read_equilibrix
from vision.errors import ReadError
from vision.flowergrid import EXTENT as FLOWER_EXTENT
from vision.gemblo import read_gemblo
from vision.hexgrid import EXTENT as HEX_EXTENT
from vision.pose import BoardPose
from vision.synth import CONDITIONS, render_photo

SIZE = (960, 720)
FOCAL = 600.0
K_TRUE = np.array([[FOCAL, 0.0, (SIZE[0] - 1) / 2], [0.0, FOCAL, (SIZE[1] - 1) / 2], [0.0, 0.0, 1.0]])
DIST_TRUE = np.array([-0.28, 0.07, 0.0, 0.0, 0.0])  # a cheap wide webcam's barrel
# The same webcam for the synthetic Blokus photos (the renderer puts the principal point mid-frame).
LENS = {"k1": DIST_TRUE[0], "k2": DIST_TRUE[1], "fov_deg": float(np.degrees(2 * np.arctan(SIZE[0] / 2 / FOCAL)))}


# --- a pinhole photo of the target -------------------------------------------------------------

class TargetCamera:
    """Photographs the flat target with K_TRUE and DIST_TRUE at any pose."""

    px_per_square = 60
    margin = 40  # white paper around the squares, texture pixels
    supersample = 2

    def __init__(self, size=SIZE, K=K_TRUE, dist=DIST_TRUE):
        self.size, self.K, self.dist = size, K, dist
        w, h = SQUARES[0] * self.px_per_square + 2 * self.margin, SQUARES[1] * self.px_per_square + 2 * self.margin
        self.texture = charuco_board().generateImage((w, h), marginSize=self.margin, borderBits=1)
        s = self.supersample
        xs = (np.arange(size[0] * s) + 0.5) / s - 0.5
        ys = (np.arange(size[1] * s) + 0.5) / s - 0.5
        pix = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
        rays = cv2.undistortPointsIter(pix, K, dist, None, None, criteria).reshape(-1, 2)
        self.rays = np.column_stack([rays, np.ones(len(rays))])  # normalised image coordinates

    def photo(self, rvec, tvec, noise: float = 1.5, seed: int = 0) -> np.ndarray:
        R = cv2.Rodrigues(np.asarray(rvec, np.float64))[0]
        to_plane = np.linalg.inv(np.column_stack([R[:, 0], R[:, 1], tvec]))
        q = self.rays @ to_plane.T
        mm = q[:, :2] / q[:, 2:3]
        tex = (mm / SQUARE_MM * self.px_per_square + self.margin - 0.5).astype(np.float32)
        s = self.supersample
        shape = (self.size[1] * s, self.size[0] * s)
        big = cv2.remap(self.texture, tex[:, 0].reshape(shape), tex[:, 1].reshape(shape), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=110)
        img = cv2.resize(big, self.size, interpolation=cv2.INTER_AREA).astype(np.float32)
        img += np.random.default_rng(seed).normal(0.0, noise, img.shape)
        return cv2.cvtColor(np.clip(img, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)


def random_pose(rng: np.random.Generator, tilt_deg: float = 40.0) -> tuple[np.ndarray, np.ndarray]:
    """The sheet somewhere in view, tilted up to ``tilt_deg`` about both axes."""
    ax, ay = np.radians(rng.uniform(-tilt_deg, tilt_deg, 2))
    az = np.radians(rng.uniform(-30, 30))
    R = cv2.Rodrigues(np.array([ax, 0, 0.0]))[0] @ cv2.Rodrigues(np.array([0, ay, 0.0]))[0] \
        @ cv2.Rodrigues(np.array([0, 0, az]))[0]
    centre = np.array([SQUARES[0] * SQUARE_MM / 2, SQUARES[1] * SQUARE_MM / 2, 0.0])
    t = np.array([*(rng.uniform(-1, 1, 2) * [110, 80]), rng.uniform(280, 400)]) - R @ centre
    return cv2.Rodrigues(R)[0].ravel(), t


@pytest.fixture(scope="module")
def target_camera():
    return TargetCamera()


@pytest.fixture(scope="module")
def views(target_camera):
    rng = np.random.default_rng(0)
    return [target_camera.photo(*random_pose(rng), seed=i) for i in range(10)]


@pytest.fixture(scope="module")
def fit(views):
    return solve_camera([detect(v) for v in views])


def row_straightness(found) -> float:
    """Worst RMS distance (px) of a row of target corners from its best straight line."""
    worst = 0.0
    for row in range(SQUARES[1] - 1):
        pts = found.corners[found.ids // (SQUARES[0] - 1) == row]
        if len(pts) >= 4:
            worst = max(worst, float(np.linalg.svd(pts - pts.mean(0), compute_uv=False)[1] / np.sqrt(len(pts))))
    return worst


# --- camera ----------------------------------------------------------------------------------

def test_camera_intrinsics_recovered(fit):
    m = fit.model
    assert fit.used == 10 and fit.rejected == 0
    assert abs(m.matrix[0, 0] / FOCAL - 1) < 0.02 and abs(m.matrix[1, 1] / FOCAL - 1) < 0.02
    assert np.allclose(m.matrix[:2, 2], K_TRUE[:2, 2], atol=4.0)
    assert abs(m.distortion[0] - DIST_TRUE[0]) < 0.03
    assert m.rms < 0.5 and max(fit.view_errors) < 0.5
    assert fit.max_tilt_deg > 20 and not any("squarely" in w for w in fit.warnings)


def test_undistortion_straightens_lines(fit, target_camera):
    rng = np.random.default_rng(5)
    rvec, tvec = random_pose(rng, tilt_deg=10)
    tvec[:2] += [60, 40]  # towards a corner of the frame, where the barrel bends most
    raw = target_camera.photo(rvec, tvec, seed=99)
    flat = fit.model.undistort(raw)
    assert flat.shape == raw.shape
    before, after = detect(raw), detect(flat)
    assert len(before) >= 40 and len(after) >= 40
    assert row_straightness(before) > 1.0 and row_straightness(after) < min(0.25, row_straightness(before) / 5)
    # undistort_points sends each raw corner where the undistorted image shows it.
    shared, a, b = np.intersect1d(before.ids, after.ids, return_indices=True)
    moved = fit.model.undistort_points(before.corners[a], SIZE)
    assert np.abs(moved - after.corners[b]).max() < 0.3


def test_undistort_at_another_resolution(fit, views):
    half = cv2.resize(views[0], (480, 360), interpolation=cv2.INTER_AREA)
    full = fit.model.undistort(views[0])
    small = fit.model.undistort(half)
    assert small.shape == half.shape
    assert np.abs(cv2.resize(full, (480, 360), interpolation=cv2.INTER_AREA).astype(int) - small).mean() < 6
    with pytest.raises(CalibrationError) as e:
        fit.model.undistort(np.zeros((720, 720, 3), np.uint8))
    assert e.value.code == "calibration_mismatch"


def test_too_few_views_or_corners_refused(views):
    blank = np.full((SIZE[1], SIZE[0], 3), 128, np.uint8)
    with pytest.raises(CalibrationError) as e:
        solve_camera([detect(v) for v in views[:3]] + [detect(blank)] * 4)
    assert e.value.code == "too_few_views" and "only 3 of 7 images" in e.value.message
    assert "\n" not in e.value.message
    with pytest.raises(CalibrationError) as e:
        solve_camera([detect(views[0]), detect(cv2.resize(views[1], (480, 360)))])
    assert e.value.code == "calibration_mismatch"


def test_square_views_warn_about_focal_length(target_camera):
    rng = np.random.default_rng(3)
    flat_on = [target_camera.photo(*random_pose(rng, tilt_deg=3), seed=i) for i in range(6)]
    fit = solve_camera([detect(v) for v in flat_on])
    assert any("squarely" in w for w in fit.warnings)


def test_live_capture_keeps_only_new_views(views):
    stream = [views[0]] * 5 + [views[1]] * 5 + [views[0]] + [views[5]]
    seen = []
    kept = collect_views(iter(stream), shots=10, timeout_s=60, on_view=lambda n, d: seen.append(n))
    assert len(kept) == 3 and seen == [1, 2, 3]
    assert len(collect_views(iter(views), shots=2, timeout_s=60)) == 2


# --- board and colours on synthetic Blokus photos ------------------------------------------------

def one_of_each() -> list[str]:
    """An empty board with one piece of each colour at its corner: the colour calibration shot."""
    grid = np.full((20, 20), ".")
    grid[0, 0:3], grid[0:4, 19], grid[19, 17:20], grid[17:20, 0] = "B", "Y", "R", "G"
    grid[1, 0] = "B"
    return ["".join(r) for r in grid]


@pytest.fixture(scope="module")
def shot():
    """The colour calibration shot from a phone-like camera (little lens distortion)."""
    conditions = replace(CONDITIONS["perspective"], tilt_deg=25.0)
    return render_photo(one_of_each(), conditions, np.random.default_rng(8), size=SIZE)


@pytest.fixture(scope="module")
def webcam_shot():
    """The same board seen by the webcam calibrated above: strong barrel, board filling the frame."""
    conditions = replace(CONDITIONS["perspective"], tilt_deg=25.0, board_fill=0.9, **LENS)
    return render_photo(one_of_each(), conditions, np.random.default_rng(8), size=SIZE)


def test_camera_calibration_puts_the_grid_on_the_board(fit, webcam_shot):
    flat = fit.model.undistort(webcam_shot.image)
    truth = fit.model.undistort_points(webcam_shot.corners, SIZE)
    lock = lock_board(flat, undistorted=True)
    cell = np.linalg.norm(truth[1] - truth[0]) / 20
    assert np.abs(lock.pose.corners - truth).max() < 0.3 * cell
    assert abs(lock.pose.distortion) < 0.05  # nothing left for the reader's own lens guess
    assert read_blokus(flat, calibration=lock.to_json()).board == webcam_shot.state


def test_board_locked_automatically_and_from_corners(shot):
    auto = lock_board(shot.image)
    cell = np.linalg.norm(shot.corners[1] - shot.corners[0]) / 20
    assert auto.method == "auto" and np.abs(auto.pose.corners - shot.corners).max() < 0.3 * cell
    rng = np.random.default_rng(1)
    taps = (shot.corners + rng.normal(0, 2.0, (4, 2)))[[2, 0, 3, 1]]  # any order, a little off
    tapped = lock_board(shot.image, taps)
    assert tapped.method == "corners" and np.abs(tapped.pose.corners - shot.corners).max() < 0.3 * cell
    assert read_blokus(shot.image, calibration=tapped.to_json()).board == shot.state
    assert not board_moved(shot.image, tapped)
    assert board_moved(np.roll(shot.image, int(cell * 0.5), axis=1), tapped)


@pytest.mark.parametrize("taps", [
    [[100, 100], [300, 100], [300, 300], [100, 300]],  # not on the grid
    [[100, 100], [200, 200], [300, 300], [400, 400]],  # in a line
    [[100, 100], [300, 100], [300, 300]],  # three
])
def test_bad_corners_refused(shot, taps):
    with pytest.raises(CalibrationError) as e:
        lock_board(shot.image, np.array(taps, float))
    assert e.value.code == "bad_corners"


def test_corners_far_off_the_photo_are_refused_in_one_line(shot):
    """``--corners 1e308,...``: refused as corners, with no numeric warning spilled on stderr."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(CalibrationError) as e:
            lock_board(shot.image, np.array([[1e308, 0], [1, 1e308], [2, 2], [3, 3]]))
    assert e.value.code == "bad_corners" and "pixels" in e.value.message


def test_colour_profile_learned_renormalised_and_usable(shot):
    pose = lock_board(shot.image).pose
    profile = learn_profile(observe(shot.image, pose))
    require_classes(profile, COLOURS, COLOUR_NAMES)
    assert profile.labels == (".", "B", "Y", "R", "G")
    hues = {k: np.degrees(np.arctan2(c.neutral[2], c.neutral[1])) for k, c in profile.classes.items() if k != "."}
    nominal = dict(zip("BYRG", np.degrees(PALETTE.hues())))
    assert all(abs((hues[k] - nominal[k] + 180) % 360 - 180) < 25 for k in "BYRG")
    assert np.hypot(*profile.classes["."].neutral[1:]) < 5  # the board is grey once the light is out

    # The lamp dims and warms up: the gain is read off the empty cells alone.
    gain = np.array([0.6, 0.8, 1.0])  # B, G, R
    evening = np.clip(shot.image * gain, 0, 255).astype(np.uint8)
    later = observe(evening, pose)
    empty = np.array([list(r) for r in shot.state]) == "."
    moved = renormalise(profile, later.raw[empty])
    direct = learn_profile(later, shot.state)
    for k in profile.labels:
        stale = np.linalg.norm(np.subtract(profile.classes[k].lab, direct.classes[k].lab))
        fresh = np.linalg.norm(np.subtract(moved.classes[k].lab, direct.classes[k].lab))
        assert fresh < 2.5 and fresh < stale / 4, k
        assert moved.classes[k].neutral == profile.classes[k].neutral
    assert renormalise(profile, later.raw[empty][:3]) is profile  # too few cells: unchanged

    # The prior, in the classifier's terms, and the palette reading the shot right.
    prior = profile.prior()
    assert prior.labels == profile.labels and prior.means_ab.shape == (5, 2)
    assert np.allclose(prior.board_grey, later.raw[empty].mean(0) / gain, atol=0.08)
    assert observe(shot.image, pose, profile.palette()).board() == shot.state


def test_profile_learns_from_placements_and_refuses_missing_colours(shot):
    pose = lock_board(shot.image).pose
    obs = observe(shot.image, pose)
    no_red = [r.replace("R", ".") for r in shot.state]
    first = learn_profile(obs, no_red)
    assert "R" not in first.classes
    with pytest.raises(CalibrationError) as e:
        require_classes(first, COLOURS, COLOUR_NAMES)
    assert e.value.code == "colour_missing" and "Red" in e.value.message
    merged = learn_profile(obs, shot.state, previous=first)
    assert "R" in merged.classes and merged.classes["B"].cells == 2 * first.classes["B"].cells


# --- the file ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full(fit, webcam_shot):
    flat = fit.model.undistort(webcam_shot.image)
    board = lock_board(flat, undistorted=True)
    return Calibration(fit.model, board, learn_profile(observe(flat, board.pose)))


def test_file_round_trip(tmp_path, full):
    path = tmp_path / "sub" / "calibration.json"
    save_calibration(full, path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "tableref-calibration" and doc["version"] == 1
    assert set(doc) == {"format", "version", "camera", "board", "colours"}
    back = load_calibration(path)
    assert np.allclose(back.camera.matrix, full.camera.matrix) and back.camera.size == full.camera.size
    assert np.allclose(back.pose.homography, full.pose.homography) and back.board.undistorted
    assert back.colours.labels == full.colours.labels
    frame = np.random.default_rng(0).integers(0, 255, (SIZE[1], SIZE[0], 3), dtype=np.uint8)
    assert np.array_equal(back.undistort(frame), full.undistort(frame))
    only_colours = Calibration(colours=full.colours)
    save_calibration(only_colours, path)
    assert set(json.loads(path.read_text())) == {"format", "version", "colours"}
    assert load_calibration(path).undistort(frame) is frame  # no camera: frames as they are
    assert not list(path.parent.glob(".*.tmp"))


def _damage(doc: dict, kind: str) -> str:
    doc = json.loads(json.dumps(doc))
    if kind == "format":
        doc["format"] = "something-else"
    elif kind == "version":
        doc["version"] = 2
    elif kind == "camera":
        doc["camera"]["matrix"] = [[1, 2], [3, 4]]
    elif kind == "board":
        del doc["board"]["pose"]["homography"]
    elif kind == "flat board":  # a homography that maps the whole photo onto one line of the board
        doc["board"]["pose"]["homography"] = [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    elif kind == "colours":
        doc["colours"]["classes"]["B"]["lab"] = ["x", 1, 2]
    elif kind == "no camera":
        del doc["camera"]
    elif kind == "other size":
        doc["board"]["pose"]["image_size"] = [720, 720]
    elif kind == "raw pose":
        doc["board"]["undistorted"] = False
    return json.dumps(doc)


@pytest.mark.parametrize("kind, code", [
    ("format", "calibration_format"), ("version", "calibration_version"), ("camera", "calibration_corrupt"),
    ("board", "calibration_corrupt"), ("flat board", "calibration_corrupt"), ("colours", "calibration_corrupt"),
    ("no camera", "calibration_mismatch"),
    ("other size", "calibration_mismatch"), ("raw pose", "calibration_mismatch"),
])
def test_damaged_or_mismatched_file_reported(tmp_path, full, kind, code):
    path = tmp_path / "calibration.json"
    path.write_text(_damage(full.to_json(), kind))
    with pytest.raises(CalibrationError) as e:
        load_calibration(path)
    assert e.value.code == code and "\n" not in e.value.message and str(path) in e.value.message


@pytest.mark.parametrize("content, code", [
    (None, "calibration_missing"), (b"{not json", "calibration_corrupt"), (b"\xff\xfe\x00binary", "calibration_corrupt"),
    (b"[1, 2]", "calibration_format"), (b"", "calibration_corrupt"),
])
def test_unreadable_file_reported(tmp_path, content, code):
    path = tmp_path / "calibration.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CalibrationError) as e:
        load_calibration(path)
    assert e.value.code == code and e.value.to_json()["error"]["code"] == code


# --- a board pose handed to a reader ----------------------------------------------------------

def _pose_of(game: str) -> BoardPose:
    """A plausible pose of ``game``'s board in a 640 x 480 photo (its extent is what tells the boards apart)."""
    extent = {"blokus": (20.0, 20.0), "gemblo": HEX_EXTENT, "equilibrix": FLOWER_EXTENT}[game]
    to_photo = np.array([[400 / extent[0], 0, 120], [0, 400 / extent[0], 40], [0, 0, 1.0]])
    return BoardPose(np.linalg.inv(to_photo), np.zeros((4 if game == "blokus" else 6, 2)), 1.0, (640, 480), extent)


READ = {"blokus": read_blokus, "gemblo": read_gemblo, "equilibrix": read_equilibrix}
BLANK = np.full((480, 640, 3), 128, np.uint8)


@pytest.mark.parametrize("game", sorted(READ))
@pytest.mark.parametrize("damage", ["no pose", "no homography", "not numbers", "a 2x2 homography", "a list"])
def test_a_reader_refuses_a_damaged_pose_in_one_line(game, damage):
    """Every reader parses its calibration the same way (``vision.pose.calibrated_pose``): a
    pose that cannot be read is refused as such. Before, Gemblo and Equilibrix raised KeyError,
    ValueError or AttributeError tracebacks, and Blokus ignored a pose it could not find."""
    doc = {"pose": _pose_of(game).to_json()}
    if damage == "no pose":
        doc = {"method": "auto"}
    elif damage == "no homography":
        del doc["pose"]["homography"]
    elif damage == "not numbers":
        doc["pose"]["homography"] = [["x", 0, 0], [0, 1, 0], [0, 0, 1]]
    elif damage == "a 2x2 homography":
        doc["pose"]["homography"] = [[1, 0], [0, 1]]
    else:
        doc = [1, 2]
    with pytest.raises(ReadError) as e:
        READ[game](BLANK, calibration=doc)
    assert e.value.code == "calibration_corrupt" and "\n" not in e.value.message
    assert game.capitalize() in e.value.message


@pytest.mark.parametrize("game, other", [(g, o) for g in sorted(READ) for o in sorted(READ) if o != g])
def test_a_reader_refuses_another_boards_pose(game, other):
    """Handed another game's board pose, as a pose or as its JSON, a reader refuses it, naming
    both boards' sizes. Before, Equilibrix read a photo through a Gemblo pose with every field
    black and in doubt, Gemblo through an Equilibrix pose with every cell in doubt, and Blokus
    searched for its grid as if it had been handed none."""
    for calibration in (_pose_of(other), {"pose": _pose_of(other).to_json()}):
        with pytest.raises(ReadError) as e:
            READ[game](BLANK, calibration=calibration)
        assert e.value.code == "calibration_mismatch" and game.capitalize() in e.value.message


@pytest.mark.parametrize("game", ["gemblo", "equilibrix"])
def test_a_reader_handed_its_own_boards_pose_reads_at_it(game):
    """The hex and round readers' calibration path, through the one parse: the pose located in
    a photo, handed back as its JSON under "pose", reads the photo as locating did."""
    from vision.synth import equilibrix as synth_equilibrix
    from vision.synth import gemblo as synth_gemblo

    rng = np.random.default_rng(4)
    if game == "gemblo":
        image = synth_gemblo.render_photo({}, CONDITIONS["clean"], rng, (960, 720)).image
    else:
        image = synth_equilibrix.render_photo(rng, CONDITIONS["clean"], (960, 720)).image
    located = READ[game](image)
    again = READ[game](image, calibration={"pose": located.pose.to_json()})
    assert np.allclose(again.pose.homography, located.pose.homography)
    assert again.to_state_json()["state"] == located.to_state_json()["state"]


def test_a_blokus_board_lock_named_for_another_games_photo_gives_it_the_lens_only(tmp_path, shot):
    """``tableref read --game equilibrix --calibration FILE``: the calibration page and
    ``tableref calibrate board`` lock only Blokus's grid (and profile its colours). That pose
    was handed to the Gemblo and Equilibrix readers as their own (an Equilibrix board under a
    Blokus lock had 8 fields read wrong surely); the other board lies elsewhere on the table, so
    its photo is read with the calibration's lens alone, as without a lock. A calibration with
    no lens then holds nothing for it, and is refused (reading without it would pass an
    uncalibrated reading off as a calibrated one)."""
    from vision.photo import read_photo
    from vision.synth import equilibrix as synth_equilibrix

    image = synth_equilibrix.render_photo(np.random.default_rng(4), CONDITIONS["clean"], (960, 720)).image
    photo = tmp_path / "flower.png"
    cv2.imwrite(str(photo), image)
    lock_only, with_lens = tmp_path / "lock.json", tmp_path / "lens.json"
    save_calibration(Calibration(board=lock_board(shot.image)), lock_only)
    lens = CameraModel((960, 720), np.array([[900.0, 0, 479.5], [0, 900.0, 359.5], [0, 0, 1]]), np.zeros(5))
    save_calibration(Calibration(camera=lens, board=lock_board(lens.undistort(shot.image), undistorted=True)), with_lens)
    calibrated = read_photo(str(photo), "equilibrix", calibration=str(with_lens)).to_state_json()
    plain = read_photo(str(photo), "equilibrix").to_state_json()
    assert [calibrated[k] for k in ("state", "uncertain")] == [plain[k] for k in ("state", "uncertain")]
    for game in ("gemblo", "equilibrix"):
        with pytest.raises(CalibrationError) as e:
            read_photo(str(photo), game, calibration=str(lock_only))
        assert e.value.code == "calibration_mismatch" and "Blokus" in e.value.message
    blokus = tmp_path / "board.png"
    cv2.imwrite(str(blokus), shot.image)
    assert read_photo(str(blokus), "blokus", calibration=str(lock_only)).board == shot.state


# --- the command line ----------------------------------------------------------------------------

def calibrate(*argv: str) -> tuple[dict, str]:
    parser = argparse.ArgumentParser(prog="tableref")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["calibrate", *argv])
    return args.run(args)


def test_cli_writes_printable_target(tmp_path):
    doc, text = calibrate("camera", "--write-board", str(tmp_path / "board.pdf"))
    assert (tmp_path / "board.pdf").read_bytes().startswith(b"%PDF-1.4") and "100 %" in text
    assert doc["board_image"]["squares"] == list(SQUARES)
    calibrate("camera", "--write-board", str(tmp_path / "board.png"))
    page = cv2.imread(str(tmp_path / "board.png"), cv2.IMREAD_GRAYSCALE)
    assert page.shape == (2480, 3508)  # A4 landscape at 300 dpi
    assert len(detect(cv2.resize(page, (1754, 1240), interpolation=cv2.INTER_AREA))) == 54


def test_cli_calibrates_each_part_into_one_file(tmp_path, views, webcam_shot):
    out = str(tmp_path / "cal.json")
    names = []
    for i, view in enumerate(views[:6]):
        names.append(str(tmp_path / f"view{i}.png"))
        cv2.imwrite(names[-1], view)
    photo = str(tmp_path / "table.png")
    cv2.imwrite(photo, webcam_shot.image)
    doc, text = calibrate("colours", photo, "--out", out)
    assert set(doc["colours"]["classes"]) == {".", "B", "Y", "R", "G"} and "saved to" in text
    doc, _ = calibrate("board", photo, "--out", out)
    assert doc["board"]["method"] == "auto" and not doc["board"]["undistorted"]
    doc, text = calibrate("camera", *names, "--out", out)
    assert doc["views_used"] == 6 and doc["camera"]["rms_px"] < 0.5
    assert any("board pose was dropped" in n for n in doc["notes"])
    cal = load_calibration(out)
    assert cal.camera is not None and cal.board is None and cal.colours is not None
    corners = ",".join(f"{v:.1f}" for v in webcam_shot.corners.ravel())  # as seen in the raw shot
    doc, _ = calibrate("board", photo, "--corners", corners, "--out", out)
    assert doc["board"]["method"] == "corners" and doc["board"]["undistorted"]
    cal = load_calibration(out)
    assert read_blokus(cal.undistort(webcam_shot.image), calibration=cal.pose).board == webcam_shot.state


def test_cli_refusals(tmp_path, views):
    out = tmp_path / "cal.json"
    names = []
    for i, view in enumerate(views[:2]):
        names.append(str(tmp_path / f"view{i}.png"))
        cv2.imwrite(names[-1], view)
    with pytest.raises(CalibrationError) as e:
        calibrate("camera", *names, "--out", str(out))
    assert e.value.code == "too_few_views" and not out.exists()
    with pytest.raises(SystemExit) as usage:
        calibrate("board", names[0], "--corners", "1,2,3")
    assert usage.value.code == 2
    out.write_text("{damaged")
    doc, _ = calibrate("camera", "--write-board", str(tmp_path / "b.png"), "--out", str(out))
    assert out.read_text() == "{damaged"  # only writing the target: the file is not touched
    photo = tmp_path / "board.png"
    cv2.imwrite(str(photo), render_photo(one_of_each(), CONDITIONS["clean"], np.random.default_rng(2), size=SIZE).image)
    doc, _ = calibrate("board", str(photo), "--out", str(out))
    assert "moved to" in doc["notes"][0] and len(list(tmp_path.glob("cal.json.damaged-*"))) == 1
    assert load_calibration(out).board is not None
    folder = tmp_path / "photos"  # --out naming a folder: no damaged file, never moved aside
    (folder / "keep.jpg").parent.mkdir()
    (folder / "keep.jpg").write_bytes(b"photo")
    with pytest.raises(CalibrationError) as e:
        calibrate("board", str(photo), "--out", str(folder))
    assert e.value.code == "unwritable_file" and "folder" in e.value.message
    assert (folder / "keep.jpg").read_bytes() == b"photo" and not list(tmp_path.glob("photos.damaged-*"))
    grey = tmp_path / "grey.png"  # a grey camera would learn every colour as some grey
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.imread(str(photo)), cv2.COLOR_BGR2GRAY))
    with pytest.raises(ReadError) as e:
        calibrate("colours", str(grey), "--out", str(out))
    assert e.value.code == "no_colour"


# --- the calibration page -------------------------------------------------------------------------

@pytest.fixture
def page_app(tmp_path, shot):
    frames = {"frame": shot.image}
    saved = []
    app = create_app(tmp_path)
    install(app, CalibrationHooks(lambda: frames["frame"], tmp_path / "calibration.json", saved.append))
    yield app, frames, saved
    app.extensions["tableref"].stop()


def test_calibration_page_locates_taps_and_saves(page_app, shot, tmp_path):
    app, frames, saved = page_app
    client = app.test_client()
    html = client.get("/calibrate").get_data(as_text=True)
    assert "Tap the four corners" in html and "calibrate.js" in html
    image = client.get("/calibrate/frame.jpg")
    assert image.status_code == 200 and image.mimetype == "image/jpeg"
    assert cv2.imdecode(np.frombuffer(image.data, np.uint8), cv2.IMREAD_COLOR).shape == shot.image.shape
    assert client.post("/calibrate/api/save").status_code == 422  # nothing found yet
    found = client.post("/calibrate/api/locate").get_json()
    assert found["candidate"]["method"] == "auto" and found["board"] is None
    taps = (shot.corners / SIZE).tolist()
    tapped = client.post("/calibrate/api/corners", json={"corners": taps}).get_json()
    assert tapped["candidate"]["method"] == "corners"
    assert np.abs(np.array(tapped["candidate"]["corners"]) - shot.corners).max() < 5
    status = client.post("/calibrate/api/save").get_json()
    assert status["board"]["method"] == "corners" and status["candidate"] is None
    assert load_calibration(tmp_path / "calibration.json").board.method == "corners"
    learned = client.post("/calibrate/api/colours").get_json()
    assert learned["colours"] == ["B", "Y", "R", "G"] and len(saved) == 2 and saved[-1].colours is not None


def test_calibration_page_refusals(page_app, tmp_path):
    app, frames, _ = page_app
    client = app.test_client()
    bad = client.post("/calibrate/api/corners", json={"corners": [[0.1, 0.1]]})
    assert bad.status_code == 422 and bad.get_json()["error"]["code"] == "bad_corners"
    off = client.post("/calibrate/api/corners", json={"corners": [[.1, .1], [.3, .1], [.3, .3], [.1, .3]]})
    assert off.status_code == 422
    assert client.post("/calibrate/api/locate", headers={"Origin": "http://evil.example"}).status_code == 403
    (tmp_path / "calibration.json").write_text('{"format": "tableref-calibration", "version": 7}')
    page = client.get("/calibrate").get_data(as_text=True)
    assert "version 7" in page  # reported on the page, and otherwise ignored
    assert client.get("/calibrate/frame.jpg").status_code == 200
    frames["frame"] = None
    gone = client.get("/calibrate/frame.jpg")
    assert gone.status_code == 503 and gone.get_json()["error"]["code"] == "no_camera"


def test_a_calibration_file_with_colours_hands_its_profile_to_the_reader(tmp_path, shot, monkeypatch):
    import vision.blokus
    from vision.photo import read_photo

    pose = lock_board(shot.image).pose
    profile = learn_profile(observe(shot.image, pose))
    photo = tmp_path / "board.png"
    cv2.imwrite(str(photo), shot.image)
    seen, real = [], vision.blokus.read_blokus

    def spy(image, calibration=None, **kwargs):
        seen.append(kwargs.get("profile"))
        return real(image, calibration=calibration, **kwargs)

    monkeypatch.setattr(vision.blokus, "read_blokus", spy)
    path = tmp_path / "calibration.json"
    save_calibration(Calibration(colours=profile), path)
    assert read_photo(str(photo), "blokus", calibration=str(path)).board == shot.state
    assert seen[-1] is not None and seen[-1].labels == profile.labels
    save_calibration(Calibration(board=lock_board(shot.image)), path)  # no colours: none passed
    assert read_photo(str(photo), "blokus", calibration=str(path)).board == shot.state
    assert seen[-1] is None
