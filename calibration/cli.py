"""``tableref calibrate camera|board|colours``: make or update a calibration file.

Each command measures one part and rewrites only that part of the file (``--out``, by
default ``calibration.json`` in the data folder), so the parts can be made in any order and
redone one at a time. A new camera calibration drops the stored board pose (it was taken on
frames undistorted differently). A damaged file in the way is moved aside, never deleted.
``tableref calibrate tokens`` instead extends a Geometrius token catalogue (``tokens``).

``run`` returns ``(JSON document, text for people)`` and raises errors with ``.code`` and
``.message``, as ``tableref.cli`` expects of every command.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from companion_app.sources import quiet_capture
from rules.blokus import COLOUR_NAMES, COLOURS
from vision.blokus import locate_board, verify_pose
from vision.image_io import load_image, require_colour

from .board import lock_board
from .camera import collect_views, solve_camera
from .colours import learn_profile, observe, require_classes
from .errors import CalibrationError
from .store import Calibration, default_path, load_calibration, save_calibration
from .target import detect, write_page

DEFAULT_SHOTS = 15
DEFAULT_TIMEOUT_S = 180.0
WARMUP_FRAMES = 15  # a webcam's first frames are dark while its exposure settles


def add_parser(subparsers: argparse._SubParsersAction,
               camera_number: Callable[[str], int] = int) -> argparse.ArgumentParser:
    """Add ``calibrate`` and its three commands to the ``tableref`` parser; ``camera_number``
    parses ``--camera N`` as ``tableref serve`` does, so both refuse the same numbers."""
    text = "measure this table's camera, board pose or colours into a calibration file"
    p = subparsers.add_parser("calibrate", help=text, description=text)
    p.set_defaults(run=run)
    what = p.add_subparsers(dest="what", required=True)

    def command(name: str, help_: str) -> argparse.ArgumentParser:
        c = what.add_parser(name, help=help_, description=help_)
        c.add_argument("--json", action="store_true", help="print one JSON object")
        c.add_argument("--out", metavar="FILE", help=f"calibration file to update (default: {default_path()})")
        return c

    c = command("camera", "lens distortion and intrinsics from photos of the printed target")
    c.add_argument("images", nargs="*", metavar="IMAGE", help="photos of the target from this camera")
    c.add_argument("--write-board", metavar="FILE", help="write the printable target (.pdf or .png) and stop "
                                                         "unless images or --camera are given")
    c.add_argument("--camera", type=camera_number, metavar="N", help="grab the views from webcam N instead")
    c.add_argument("--shots", type=int, default=DEFAULT_SHOTS, help=f"views to grab (default {DEFAULT_SHOTS})")
    c.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop grabbing after this long (default {DEFAULT_TIMEOUT_S:g})")

    for name, help_ in (("board", "lock the board's pose for a fixed camera"),
                        ("colours", "learn the pieces' colours from a shot with one piece of each colour")):
        c = command(name, help_)
        source = c.add_mutually_exclusive_group(required=True)
        source.add_argument("image", nargs="?", metavar="IMAGE")
        source.add_argument("--camera", type=camera_number, metavar="N", help="take the shot from webcam N")
        if name == "board":
            c.add_argument("--corners", type=_corners, metavar="x1,y1,x2,y2,x3,y3,x4,y4",
                           help="the grid's four outer corners in the shot's pixels, when the board is not found")

    text = "add a Geometrius token to a catalogue by showing it (alone) to the camera"
    c = what.add_parser("tokens", help=text, description=text)
    c.add_argument("--json", action="store_true", help="print one JSON object")
    source = c.add_mutually_exclusive_group(required=True)
    source.add_argument("image", nargs="?", metavar="IMAGE")
    source.add_argument("--camera", type=camera_number, metavar="N", help="take the shot from webcam N")
    c.add_argument("--id", required=True, dest="token_id", metavar="ID", help="the new token's id, e.g. T41")
    c.add_argument("--catalogue", required=True, metavar="FILE",
                   help="catalogue to extend (a copy of the default is started when it does not exist)")
    return p


def _corners(text: str) -> np.ndarray:
    try:
        values = [float(v) for v in text.replace(";", ",").split(",")]
    except ValueError:
        values = []
    if len(values) != 8:
        raise argparse.ArgumentTypeError("expected eight numbers x1,y1,x2,y2,x3,y3,x4,y4 (pixels)")
    return np.array(values).reshape(4, 2)


def run(args: argparse.Namespace) -> tuple[dict, str]:
    return {"camera": _camera, "board": _board, "colours": _colours, "tokens": _tokens}[args.what](args)


# --- the three commands -------------------------------------------------------------------

def _camera(args: argparse.Namespace) -> tuple[dict, str]:
    doc: dict = {}
    lines: list[str] = []
    if args.write_board:
        page = write_page(args.write_board)
        doc["board_image"] = page
        lines.append(f"wrote the calibration target to {page['file']}: print it at 100 % on A4 (squares "
                     f"{page['square_mm']:g} mm), tape it flat, then photograph it 10-20 times with the camera "
                     "to calibrate, from different angles and reaching into every corner of the frame")
        if not args.images and args.camera is None:
            return doc, "\n".join(lines)
    if args.camera is not None:
        if args.shots < 1:
            raise CalibrationError("too_few_views", "--shots must be at least 1")
        print(f"tableref: show the printed target to camera {args.camera}, moving and tilting it; "
              f"{args.shots} views are kept", file=sys.stderr)
        frames = _camera_frames(args.camera)
        try:
            detections = collect_views(frames, args.shots, args.timeout, _progress(args.shots))
        finally:
            frames.close()
        sources = [f"camera {args.camera} view {i + 1}" for i in range(len(detections))]
    elif args.images:
        detections = [detect(load_image(path)) for path in args.images]
        sources = list(args.images)
    else:
        raise CalibrationError("too_few_views", "no calibration images were given: list photos of the printed "
                               "target, or grab views with --camera N")
    fit = solve_camera(detections)
    path, old, notes = _existing(args.out)
    if old.board is not None:
        notes.append("the stored board pose was dropped (it was taken on differently undistorted frames): "
                     "run 'tableref calibrate board' again")
    save_calibration(Calibration(fit.model, None, old.colours), path)
    m = fit.model
    doc.update({"file": str(path), **fit.to_json(), "notes": notes,
                "images": [{"source": s, "corners": len(d)} for s, d in zip(sources, detections)]})
    k1, k2, p1, p2 = m.distortion[:4]
    lines.append(f"camera {m.size[0]}x{m.size[1]} calibrated from {fit.used} view(s) ({fit.rejected} without "
                 f"enough of the target): focal {m.matrix[0, 0]:.1f} x {m.matrix[1, 1]:.1f} px, centre "
                 f"({m.matrix[0, 2]:.1f}, {m.matrix[1, 2]:.1f}), k1 {k1:+.4f} k2 {k2:+.4f} p1 {p1:+.5f} "
                 f"p2 {p2:+.5f}")
    lines.append(f"reprojection error {m.rms:.3f} px; target seen over {fit.coverage:.0%} of the frame; most "
                 f"oblique view {fit.max_tilt_deg:.0f} degrees")
    lines += [f"warning: {w}" for w in fit.warnings] + [f"note: {n}" for n in notes]
    lines.append(f"saved to {path}")
    return doc, "\n".join(lines)


def _board(args: argparse.Namespace) -> tuple[dict, str]:
    path, cal, notes = _existing(args.out)
    raw = _shot(args)
    frame = cal.undistort(raw)
    corners = args.corners
    if corners is not None and cal.camera is not None:
        corners = cal.camera.undistort_points(corners, raw.shape[1::-1])
    lock = lock_board(frame, corners, undistorted=cal.camera is not None)
    save_calibration(Calibration(cal.camera, lock, cal.colours), path)
    pose = lock.pose
    doc = {"file": str(path), "board": {"method": lock.method, "undistorted": lock.undistorted,
                                        "corners": np.round(pose.corners, 2).tolist(),
                                        "image_size": list(pose.image_size), "quality": round(pose.quality, 4),
                                        "contrast": round(pose.contrast, 4),
                                        "view_angle_deg": round(pose.view_angle_deg(), 1)},
           "notes": notes}
    how = "found automatically" if lock.method == "auto" else "set from the four corners"
    lines = [f"board {how}: corners " + ", ".join(f"({x:.0f}, {y:.0f})" for x, y in pose.corners)
             + (" in the undistorted frame" if lock.undistorted else ""),
             f"seen {pose.view_angle_deg():.0f} degrees from straight above; grid contrast {pose.contrast:.2f}"]
    lines += [f"note: {n}" for n in notes] + [f"saved to {path}"]
    return doc, "\n".join(lines)


def _colours(args: argparse.Namespace) -> tuple[dict, str]:
    path, cal, notes = _existing(args.out)
    frame = cal.undistort(require_colour(_shot(args)))  # a grey camera would learn every colour as a grey
    pose = cal.pose
    if pose is None or not verify_pose(frame, pose):
        pose = locate_board(frame)
    profile = learn_profile(observe(frame, pose))
    require_classes(profile, COLOURS, COLOUR_NAMES)
    save_calibration(Calibration(cal.camera, cal.board, profile), path)
    doc = {"file": str(path), "colours": profile.to_json(), "notes": notes}
    lines = [f"{COLOUR_NAMES.get(k, 'empty'):<7} L*a*b* {c.lab[0]:5.1f} {c.lab[1]:+6.1f} {c.lab[2]:+6.1f}  "
             f"(light removed {c.neutral[0]:5.1f} {c.neutral[1]:+6.1f} {c.neutral[2]:+6.1f}) from {c.cells} cell(s)"
             for k, c in profile.classes.items()]
    lines += [f"note: {n}" for n in notes] + [f"saved to {path}"]
    return doc, "\n".join(lines)


def _tokens(args: argparse.Namespace) -> tuple[dict, str]:
    from rules.geometrius import load_catalogue

    from .tokens import add_token

    entry = add_token(_shot(args), args.token_id, args.catalogue)
    catalogue = load_catalogue(args.catalogue)
    shape = catalogue.shapes[entry["id"]]
    cards = [c for c in catalogue.cards if catalogue.accepts(c, entry["id"])]
    poly = shape.polygon
    doc = {"file": str(args.catalogue), "token": entry, "sides": [round(v, 2) for v in poly.sides],
           "angles": [round(a, 2) for a in poly.angles], "convex": not entry["star"], "cards": cards}
    lines = [f"token {entry['id']} added to {args.catalogue}: {len(poly.sides)} sides, "
             f"{'convex' if not entry['star'] else 'not convex (star)'}",
             "angles " + " ".join(f"{a:.1f}" for a in poly.angles),
             "sides (mm) " + " ".join(f"{v:.1f}" for v in poly.sides),
             f"matches cards {' '.join(cards) or '(none)'}"]
    return doc, "\n".join(lines)


# --- files and frames ---------------------------------------------------------------------

def _existing(out: str | None) -> tuple[Path, Calibration, list[str]]:
    """The file to update and what it holds; a damaged one is moved aside (and said so).

    A folder is no damaged file: moved aside, the user's folder would vanish under a new name."""
    path = Path(out) if out else default_path()
    if path.is_dir():
        raise CalibrationError("unwritable_file", f"{path} is a folder: name the calibration file to write, "
                               f"e.g. --out {path / 'calibration.json'}")
    try:
        return path, load_calibration(path), []
    except CalibrationError as e:
        if e.code == "calibration_missing":
            return path, Calibration(), []
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            path.rename(aside)
        except OSError as err:
            raise CalibrationError("unwritable_file", f"{e.message}; and it could not be moved aside: "
                                   f"{err.strerror or err}") from None
        return path, Calibration(), [f"{e.message}; it was moved to {aside} and a new file started"]


def _shot(args: argparse.Namespace) -> np.ndarray:
    if args.image is not None:
        return load_image(args.image)
    frames = _camera_frames(args.camera)
    try:
        for _, frame in zip(range(WARMUP_FRAMES), frames):
            pass
        return frame
    finally:
        frames.close()


def _camera_frames(index: int) -> Iterator[np.ndarray]:
    capture = quiet_capture(index)  # its own one-line reason, not OpenCV's log lines
    try:
        if not capture.isOpened():
            raise CalibrationError("no_camera", f"camera {index} could not be opened: is it plugged in and not "
                                   "used by another program?")
        while True:
            ok, frame = capture.read()
            if not ok:
                raise CalibrationError("no_camera", f"camera {index} stopped sending frames")
            yield frame
    finally:
        capture.release()


def _progress(shots: int):
    def report(count: int, found) -> None:
        print(f"tableref: view {count}/{shots} kept ({len(found)} corners)", file=sys.stderr)
    return report
