"""What calibration buys: the Blokus reader on a cheap webcam in a dim, warm room, with and without it.

One camera, as a person would set it up: a wide webcam with strong barrel distortion
(k1 = -0.28, k2 = 0.06, 78 degree field of view, 1280 x 720), calibrated once from photos
of the printed ChArUco target in ordinary light. Then several tables (each a fixed camera
pose, a dim warm lamp, a board filling most of the frame, off-centre so its edges reach
where the lens bends most) and a few frames of a game on each. Every frame is read:

- **none**: the reader alone (it guesses one lens coefficient per frame itself);
- **board (no camera)**: the board pose locked once per table from four corners tapped on
  the first frame (a few pixels off, as a person taps), as the calibration page does;
- **camera**: the frame undistorted with the measured camera first;
- **camera + board**: both;
- **+ colours**: also with the table's colour profile (learned from the first frame's
  accepted state) as the classifier's palette; this is the read the reader does once the
  profile is wired in (``ColourProfile.palette``).

All photos come from our own renderer (``vision.synth``) with exact ground truth.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import replace

import cv2
import numpy as np

from calibration.board import pose_from_corners
from calibration.camera import CameraModel, solve_camera
from calibration.colours import ColourProfile, learn_profile, observe
from calibration.errors import CalibrationError
from calibration.target import PAGE_MM, detect, page_image
from rules.blokus import random_game_state
from vision.blokus import apply_rules, read_blokus, verify_pose
from vision.errors import ReadError
from vision.pose import BoardPose
from vision.synth import CameraSetup, Conditions, render_frame, sample_conditions
from vision.synth.scene import BoardGeometry, BoardTexture

from .photo_accuracy import percent

SIZE = (1280, 720)
LENS = {"k1": -0.28, "k2": 0.06, "fov_deg": 78.0}
TARGET_SHOTS = 15
TABLES = 8
FRAMES = 5  # per table, at growing numbers of pieces
MOVES = (6, 16, 28, 40, 52)
TAP_ERROR_PX = 2.0
SEED = 2024


# --- the printed target, photographed by the synthetic camera --------------------------------

def _sheet() -> BoardGeometry:
    """A flat A4 sheet: outline densified so the lens bends its edges."""
    w, h = PAGE_MM
    t = np.arange(40) / 40
    edges = [((0, 0), (w, 0)), ((w, 0), (w, h)), ((w, h), (0, h)), ((0, h), (0, 0))]
    outline = tuple((float(a[0] + (b[0] - a[0]) * s), float(a[1] + (b[1] - a[1]) * s)) for a, b in edges for s in t)
    return BoardGeometry((w, h), outline, 0.5, (0.9, 0.9, 0.9))


def _target_texture(px_per_mm: float) -> BoardTexture:
    page = page_image(dpi=max(60, round(px_per_mm * 25.4)))
    size = (round(PAGE_MM[0] * px_per_mm), round(PAGE_MM[1] * px_per_mm))
    grey = cv2.resize(page, size, interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0 * 0.92  # matt paper
    return BoardTexture(np.dstack([grey, grey, grey, np.ones_like(grey), np.full_like(grey, 0.05)]), _sheet())


def target_shot(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One photo of the sheet held somewhere in the frame, tilted; and the true camera matrix."""
    c = replace(sample_conditions("clean", rng), **LENS, tilt_deg=float(rng.uniform(0, 40)),
                tilt_azimuth_deg=float(rng.uniform(-180, 180)), rotation_deg=float(rng.uniform(-30, 30)),
                board_fill=float(rng.uniform(0.45, 0.75)), offset_x=float(rng.uniform(-1, 1)),
                offset_y=float(rng.uniform(-1, 1)))
    view = CameraSetup.random(rng, c).view(SIZE, _sheet())
    return view.render(_target_texture(view.px_per_mm), rng).image, view.camera.K


def calibrate(rng: np.random.Generator) -> tuple[CameraModel, list[tuple[str, str]]]:
    shots = [target_shot(rng) for _ in range(TARGET_SHOTS)]
    fit = solve_camera([detect(image) for image, _ in shots])
    true_focal = shots[0][1][0, 0]
    m = fit.model
    rows = [("views used", f"{fit.used} of {TARGET_SHOTS}"),
            ("focal length", f"{m.focal:.1f} px (true {true_focal:.1f}, {100 * (m.focal / true_focal - 1):+.2f} %)"),
            ("k1, k2", f"{m.distortion[0]:+.3f}, {m.distortion[1]:+.3f} (true {LENS['k1']:+.3f}, {LENS['k2']:+.3f})"),
            ("reprojection error", f"{m.rms:.3f} px")]
    return m, rows


# --- the tables -------------------------------------------------------------------------------

def dim_warm(rng: np.random.Generator) -> Conditions:
    """A lamp-lit evening table: dim, warm, uneven, noisy; the board large and off-centre."""
    return replace(sample_conditions("dim", rng), **LENS, white_balance=float(rng.uniform(0.6, 1.0)),
                   exposure=float(rng.uniform(0.4, 0.6)), gradient=float(rng.uniform(0.2, 0.45)),
                   tilt_deg=float(rng.uniform(5, 30)), board_fill=float(rng.uniform(0.85, 0.97)),
                   offset_x=float(rng.uniform(-0.9, 0.9)), offset_y=float(rng.uniform(-0.9, 0.9)))


def tapped_lock(frame: np.ndarray, taps: np.ndarray) -> BoardPose | None:
    """The pose a person sets on the calibration page from four taps; None when refused."""
    try:
        return pose_from_corners(frame, taps)
    except (CalibrationError, ReadError):  # a refused lock: the reader searches, as it would at the table
        return None


def read_with_profile(frame: np.ndarray, pose: BoardPose, profile: ColourProfile) -> list[str]:
    """``read_blokus`` at a locked pose with the profile's palette (what the wired reader will do)."""
    obs = observe(frame, pose, profile.palette())
    colours = obs.colours
    board, *_ = apply_rules(colours.letters(), colours.labels, colours.posterior, colours.confidence)
    return board


def run_tables(camera: CameraModel, rng: np.random.Generator) -> dict[str, list[tuple[int, float]]]:
    """(cells wrong, seconds) per frame and variant; 400 wrong when no board was found."""
    names = ("none", "board (no camera)", "camera", "camera + board", "+ colours")
    results: dict[str, list[tuple[int, float]]] = {k: [] for k in names}
    for _ in range(TABLES):
        setup = CameraSetup.random(rng, dim_warm(rng))
        raw_pose = pose = profile = None
        for number, moves in enumerate(MOVES[:FRAMES]):
            shot = render_frame(random_game_state(rng, moves), setup, rng, size=SIZE)
            flat = camera.undistort(shot.image)
            if number == 0:  # the person taps the corners once, on the first frame
                taps = shot.corners + rng.normal(0.0, TAP_ERROR_PX, shot.corners.shape)
                raw_pose = tapped_lock(shot.image, taps)
                pose = tapped_lock(flat, camera.undistort_points(taps, SIZE))
            reads = {"none": lambda: read_blokus(shot.image).board,
                     "board (no camera)": lambda: read_blokus(shot.image, calibration=raw_pose).board,
                     "camera": lambda: read_blokus(flat).board,
                     "camera + board": lambda: read_blokus(flat, calibration=pose).board,
                     "+ colours": lambda: read_blokus(flat, calibration=pose).board}
            if pose is not None and profile is not None and verify_pose(flat, pose):
                reads["+ colours"] = lambda: read_with_profile(flat, pose, profile)
            for name, read in reads.items():
                results[name].append(_score(read, shot.state))
            if pose is not None and profile is None:  # learned from the first accepted state
                profile = learn_profile(observe(flat, pose), shot.state)
    return results


def _score(read, truth: list[str]) -> tuple[int, float]:
    start = time.perf_counter()
    try:
        board = read()
    except ReadError:
        return 400, time.perf_counter() - start
    wrong = sum(a != b for row, want in zip(board, truth) for a, b in zip(row, want))
    return wrong, time.perf_counter() - start


def main() -> None:
    cv2.setNumThreads(1)
    rng = np.random.default_rng(SEED)
    camera, rows = calibrate(rng)
    print(f"| camera calibration ({TARGET_SHOTS} target shots, {SIZE[0]} x {SIZE[1]}) | measured |\n|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)
    results = run_tables(camera, rng)
    frames = TABLES * FRAMES
    print(f"\n| dim warm light, strong barrel: {frames} frames, {TABLES} tables | cells wrong | boards exactly "
          "right | boards not found | median read |\n|---|---|---|---|---|")
    for name, runs in results.items():
        wrong = [w for w, _ in runs]
        found = [w for w in wrong if w < 400]
        cells = percent(sum(found), 400 * len(found), 2)
        print(f"| {name} | {cells} | {sum(w == 0 for w in wrong)} / {frames} | {frames - len(found)} | "
              f"{statistics.median(s for _, s in runs) * 1000:.0f} ms |", flush=True)


if __name__ == "__main__":
    main()
