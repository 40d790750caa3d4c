"""The live referee's eye: frames in, newly stable board states out.

Reading 400 cells is the expensive step and a board under a moving hand is meaningless, so
most frames are never read. The board is located once and its pose kept (a cheap check on
every still frame says whether it still fits; when not, the board was bumped and is located
again). Each frame is shrunk to a small image of the board's area and compared with the
frame that started the current still period; any change bigger than a fraction of a cell is
motion and restarts the period. Only when the board has held still for ``steady_seconds`` of
source time (seconds, not frames: a 4 fps recording and a 30 fps webcam must agree) is it
read, once. A still hand resting over the board is caught before reading by the size of what
differs from the last accepted board (a hand is far bigger than two pieces), and, before any
board was accepted, after reading by the number of cells the reader could not make out. Once
there is one, that number says nothing of a hand: a reader may doubt many cells where nothing
lies over the board (Gemblo's clear pieces on a light board, an empty board's every cell),
and putting off such a read for a hand that is not there misses the move when the next
player is quick; the session holds back any change beside a doubted cell instead.

The loop knows no game: the game's reader (``vision.<game>``, imported when first used) is
behind :class:`BoardVision`, and boards leave in the game's neutral form: ``{cell: colour}``
for Blokus, Gemblo and Equilibrix (whose cells are fields), Geometrius' list of tokens.
"""
from __future__ import annotations

import importlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

import cv2
import numpy as np

from calibration import CALIBRATED_GAME, Calibration
from calibration.colours import ColourProfile, empty_samples, renormalise
from rules import blokus, flower, gemblo
from rules.observe import as_cell
from vision import reproducible
from vision.errors import ReadError
from vision.exposure import refusal
from vision.image_io import require_colour
from vision.pose import BoardPose

from .cells import cells_of
from .sources import FrameSource

log = logging.getLogger(__name__)

OnBoard = Callable[[Any, list, float], None]  # (the board in the game's neutral form, uncertain cells, t)
OnStatus = Callable[[str, str], None]  # (status, message)


def _ignore(*_) -> None:
    """Default callback: a referee nobody listens to (a bench) still runs."""


@dataclass(frozen=True)
class Reader:
    """Where a game's photo reader lives, and how its reading becomes ``{cell: colour}``.

    Every reader module offers ``locate_board(frame)``, ``verify_pose(frame, pose)`` and
    ``read_with_pose(frame, pose)``; only the reading's board form differs. A calibration's
    locked pose and colour profile serve one game's reader (``calibration.CALIBRATED_GAME``:
    the calibration page locks Blokus' square grid and profiles its colours). ``remembers``: ``locate_board(frame, reference=pose)`` keeps the labelling of the pose the
    board had before it was lost (a round board turned near a tie between two sides would
    otherwise come back relabelled after a bump, and every field would look changed).
    """

    module: str
    cells: Callable[[Any], Any]
    cell_count: int  # cells on the board: the live loop's thresholds are in cells
    remembers: bool = False
    unsure: Callable[[Any], list] = lambda reading: [as_cell(c) for c in reading.uncertain]


def equilibrix_board(reading: Any) -> dict:
    """``{field: colour}`` of the covered fields; with the ring when the reader saw all of it
    (``{"fields": ..., "ring": [...], "origin": n}``), so the session knows which tile went."""
    fields = cells_of("equilibrix", {"fields": reading.fields})
    ring = getattr(reading, "ring", None)
    if not ring or getattr(reading, "ring_uncertain", None):
        return fields
    # Shapes only: the reader's confidences differ from frame to frame, and a board that
    # differs from the last one goes to the session again.
    shapes = [{"shape": slot["shape"]} if isinstance(slot, dict) else slot for slot in ring]
    return {"fields": fields, "ring": shapes, "origin": getattr(reading, "origin", None)}


def geometrius_unsure(reading: Any) -> list:
    """The places of tokens or stacks the reader could not make out, as ``(row, col)``."""
    return [(u["row"], u["col"]) if isinstance(u, dict) else tuple(u) for u in reading.uncertain]


READERS = {
    "blokus": Reader("vision.blokus", lambda reading: cells_of("blokus", {"board": reading.board}),
                     len(blokus.board().cells)),
    "gemblo": Reader("vision.gemblo", lambda reading: cells_of("gemblo", {"cells": reading.cells}),
                     len(gemblo.board().cells)),
    "equilibrix": Reader("vision.equilibrix", equilibrix_board, len(flower.board().cells), remembers=True,
                         unsure=lambda reading: [flower.parse_field(f) if isinstance(f, str) else tuple(f)
                                                 for f in reading.uncertain]),
    # The token field's outline holds the 16 tokens it starts with (it grows by pushes).
    "geometrius": Reader("vision.geometrius", lambda reading: reading.tokens, 16,  # the contract's token dicts
                         unsure=geometrius_unsure),
}


@dataclass(frozen=True)
class BoardVision:
    """The reader calls the loop makes; tests wrap them to count calls or to fail on purpose."""

    locate: Callable[[np.ndarray, BoardPose | None], BoardPose]  # (frame, the pose before the board was lost)
    verify: Callable[[np.ndarray, BoardPose], bool]
    read: Callable[[np.ndarray, BoardPose], Any]  # a reading with the cells and ``uncertain``
    cells: Callable[[Any], Any]  # a reading's board in the game's neutral form
    cell_count: int  # cells on the board (the thresholds of Gate are in cells)
    unsure: Callable[[Any], list] = lambda reading: [as_cell(c) for c in reading.uncertain]

    @classmethod
    def of(cls, game: str, locked: BoardPose | None = None,
           profile: Callable[[], ColourProfile | None] | None = None) -> "BoardVision":
        """The game's reader; with a ``locked`` pose (calibration) it is used while it fits.

        ``profile``: where to get the table's colour profile at each read (the referee keeps
        it following the light); a reader that takes none, or no profile, reads without.
        """
        reader = READERS[game]
        locked = locked if game == CALIBRATED_GAME else None
        profile = profile if game == CALIBRATED_GAME else None

        def vision() -> Any:
            # Imported when a frame needs it: only the game on the table is loaded, and a
            # reader that cannot be used fails frames (reported on the page), not the server.
            return importlib.import_module(reader.module)

        def locate(frame: np.ndarray, earlier: BoardPose | None = None) -> BoardPose:
            if locked is not None and vision().verify_pose(frame, locked):
                return locked
            if reader.remembers and earlier is not None:
                return vision().locate_board(frame, reference=earlier)
            return vision().locate_board(frame)

        def read(frame: np.ndarray, pose: BoardPose) -> Any:
            colours = profile() if profile is not None else None
            if colours is None:
                return vision().read_with_pose(frame, pose)
            return vision().read_with_pose(frame, pose, colours)

        return cls(locate, lambda frame, pose: vision().verify_pose(frame, pose), read, reader.cells,
                   reader.cell_count, reader.unsure)


@dataclass(frozen=True)
class Gate:
    """When a frame is worth reading. Areas are in board cells, so they hold at any resolution."""

    steady_seconds: float = 1.0
    motion_level: int = 24  # a pixel of the small image changed by more than this (any of B, G, R)
    motion_cells: float = 0.3  # this much changed area within a still period is motion
    hand_cells: float = 15.0  # a changed blob this big since the last accepted board is a hand
    max_uncertain: int = 6  # with no board accepted yet, a reading this unsure has something over it
    hand_patience_seconds: float = 4.0  # how long to wait for a hand to go before reading anyway
    relocate_seconds: float = 0.5  # how often to look for a board that is not found
    small_side: int = 160  # the board area's longer side on the motion image, in pixels
    margin_cells: float = 1.0  # the watched area reaches this far beyond the grid (hands come over the rim)


@dataclass(frozen=True)
class Watch:
    """Where to look in a frame for a given pose: a crop, its size when shrunk, a mask."""

    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in frame pixels
    size: tuple[int, int]  # (width, height) of the small image
    mask: np.ndarray  # small image pixels over the board (and its margin)
    cell_px: float  # pixels of the small image per board cell, on average

    @classmethod
    def of(cls, pose: BoardPose, gate: Gate, cell_count: int) -> "Watch":
        """Watch the board's outline (``pose.corners``, any polygon) grown by ``margin_cells``.

        Any board works: the outline is grown in board units about its centre, and a cell's
        size is the outline's area shared among the board's ``cell_count`` cells.
        """
        corners = pose.to_board(pose.corners)
        centre = corners.mean(axis=0)
        cell = np.sqrt(cv2.contourArea(corners.astype(np.float32)) / cell_count)
        sides = np.roll(corners, -1, axis=0) - corners
        to_centre = centre - corners
        cross = sides[:, 0] * to_centre[:, 1] - sides[:, 1] * to_centre[:, 0]
        apothem = np.mean(np.abs(cross) / np.linalg.norm(sides, axis=1))
        outline = pose.to_photo(centre + (corners - centre) * (1 + gate.margin_cells * cell / apothem))
        width, height = pose.image_size
        x0, y0 = np.clip(np.floor(outline.min(0)).astype(int), 0, [width - 1, height - 1])
        x1, y1 = np.clip(np.ceil(outline.max(0)).astype(int) + 1, 1, [width, height])
        scale = gate.small_side / max(x1 - x0, y1 - y0)
        size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
        mask = np.zeros(size[::-1], np.uint8)
        cv2.fillConvexPoly(mask, np.round((outline - [x0, y0]) * scale).astype(np.int32), 1)
        grid = (pose.corners - [x0, y0]) * scale
        cell_px = cv2.contourArea(grid.astype(np.float32)) / cell_count
        return cls((int(x0), int(y0), int(x1), int(y1)), size, mask.astype(bool), cell_px)

    def small(self, frame: np.ndarray) -> np.ndarray:
        x0, y0, x1, y1 = self.box
        return cv2.resize(frame[y0:y1, x0:x1], self.size, interpolation=cv2.INTER_AREA)

    def changed(self, a: np.ndarray, b: np.ndarray, level: int) -> np.ndarray:
        """Pixels over the board where the two small images differ by more than ``level``."""
        return (cv2.absdiff(a, b).max(axis=2) > level) & self.mask


class LiveReferee:
    """Watches a frame source; calls ``on_board`` for every newly stable board state.

    ``process(t, frame)`` is the whole per-frame step (tests and benches call it directly);
    ``start()`` runs it over ``source`` on a background thread until ``stop()`` or the end of
    a recording. Callbacks run on that thread. Statuses are reported when they change:
    ``ok``, ``board_moved``, ``camera_disconnected``, ``unreadable_frame``, ``ended`` (a
    recording ran out), ``error`` (a frame failed; the loop goes on), ``no_colour`` while the
    camera gives black-and-white frames, and, while no board is found, the refusal's own code
    (``no_board``, ``underexposed``, ``overexposed``, ``impossible_angle``:
    :data:`vision.errors.CODES`).
    """

    def __init__(self, source: FrameSource | None = None, on_board: OnBoard = _ignore,
                 on_status: OnStatus = _ignore, gate: Gate = Gate(), vision: BoardVision | None = None,
                 calibration: Calibration | None = None, game: str = "blokus") -> None:
        self.source, self.on_board, self.on_status, self.gate = source, on_board, on_status, gate
        self.calibration, self.game = calibration, game
        # The table's colour profile, re-normalised on the empty cells of every accepted board
        # so it follows the light through the evening (in memory only; the file keeps the
        # calibration's own).
        self.profile: ColourProfile | None = calibration.colours if calibration is not None else None
        self.vision = vision or self._vision()
        self.latest_frame: np.ndarray | None = None  # as the camera gave it (the calibration page shows it)
        self.status: str | None = None
        self.board: Any = None  # the last accepted state
        self.pose: BoardPose | None = None
        self._earlier: BoardPose | None = None  # the pose before the board was lost (see Reader.remembers)
        self._watch: Watch | None = None
        self._last_locate: float | None = None
        self._anchor: np.ndarray | None = None  # small image that began the still period
        self._read_at: float | None = None  # source time of the next read (None: read done)
        self._waited = False  # the read of this still period was put off once for a hand
        self._colour_at: float | None = None  # source time colour was last checked (see _in_colour)
        self._colourless: ReadError | None = None  # the refusal while the camera gives no colour
        self._reference: np.ndarray | None = None  # small image of the last accepted board
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the per-frame step --------------------------------------------------------------

    def process(self, t: float, frame: np.ndarray) -> None:
        """Take one frame at source time ``t`` (seconds)."""
        self.latest_frame = frame
        if self.calibration is not None:
            frame = self.calibration.undistort(frame)
        if not self._in_colour(t, frame):
            return
        if self.pose is None and not self._locate(t, frame):
            return
        self._report("ok", "watching the board")
        small = self._watch.small(frame)
        gate = self.gate
        moving = np.count_nonzero(self._watch.changed(small, self._anchor, gate.motion_level))
        if moving > gate.motion_cells * self._watch.cell_px:
            self._anchor, self._read_at, self._waited = small, t + gate.steady_seconds, False
            return
        # The pose is checked on still frames only: a hand passing over the grid's border
        # fails the check without the board having moved; a bump is motion, then stillness.
        if not self._fits(frame):
            self._report("board_moved", "the board moved; looking for it again")
            self._lose_board()
            self._locate(t, frame)
            return
        if self._read_at is None or t < self._read_at - 1e-6:
            return
        # Something over the board (a big blob since the last board seen at this pose, or,
        # before any board was accepted, many cells the reader cannot make out) gets
        # hand_patience_seconds to go away; then the board is read as it is: a change of light
        # or a lasting glare must not blind the referee. Once a board was accepted, a reading's
        # doubts are left to the session, which holds back any change beside a doubted cell.
        if not self._waited and self._reference is not None and self._hand_over_board(small):
            self._read_at, self._waited = t + gate.hand_patience_seconds, True
            return
        reading = self.vision.read(frame, self.pose)
        if not self._waited and self.board is None and len(reading.uncertain) > gate.max_uncertain:
            self._read_at, self._waited = t + gate.hand_patience_seconds, True
            return
        self._read_at, self._reference = None, small
        self._follow_light(reading)
        board = self.vision.cells(reading)
        if board != self.board:
            self.board = board
            self.on_board(board, self.vision.unsure(reading), t)

    def _follow_light(self, reading: Any) -> None:
        """Move the colour profile to the light the accepted reading's empty cells show now."""
        if self.profile is None or self.game != CALIBRATED_GAME or not hasattr(reading, "rectified"):
            return
        samples = empty_samples(reading, self.profile.empty)
        self.profile = renormalise(self.profile, samples)

    def _in_colour(self, t: float, frame: np.ndarray) -> bool:
        """Whether the camera gives colour, checked every ``relocate_seconds`` of source time.

        A cheap webcam switches to black-and-white (its infrared night mode) when the room
        gets dark: every piece would then read as some other colour or as empty, and a game
        in progress would lose its pieces to a confident misreading. Nothing is located or
        read until colour is back; the pose is kept, and the first colour frame is compared
        with the last one seen in colour, so a piece laid meanwhile is motion and waits out a
        still period. Checked on a cadence, not per frame: the measure costs a few
        milliseconds, and a switch that falls between two checks is itself motion over the
        pieces, which puts off the next read by ``steady_seconds``, longer than the cadence.
        """
        if self._colour_at is None or t - self._colour_at >= self.gate.relocate_seconds:
            self._colour_at = t
            try:
                require_colour(frame)
                self._colourless = None
            except ReadError:
                grey = ReadError("no_colour", "the camera gives black-and-white pictures (a webcam's night mode "
                                 "in a dim room): light the board or turn the camera's night mode off")
                self._colourless = refusal(frame, grey)
        if self._colourless is not None:
            self._report(self._colourless.code, self._colourless.message)
            return False
        return True

    def _fits(self, frame: np.ndarray) -> bool:
        return frame.shape[1::-1] == tuple(self.pose.image_size) and self.vision.verify(frame, self.pose)

    def _locate(self, t: float, frame: np.ndarray) -> bool:
        """Find the board (at most every ``relocate_seconds``) and start watching it."""
        if self._last_locate is not None and t - self._last_locate < self.gate.relocate_seconds:
            return False
        self._last_locate = t
        try:
            self.pose = self.vision.locate(frame, self._earlier)
        except ReadError as e:
            # under the refusal's own code: a dark room (``underexposed``) lit up is then a change
            # of status the page hears, not a repeat of ``no_board`` it would drop
            refused = refusal(frame, e)
            self._report(refused.code, refused.message)
            return False
        self._last_locate = None
        self._watch = Watch.of(self.pose, self.gate, self.vision.cell_count)
        self._anchor, self._reference = self._watch.small(frame), None
        self._read_at, self._waited = t + self.gate.steady_seconds, False
        return True

    def calibrate(self, calibration: Calibration) -> None:
        """Use a new calibration from the next frame on (the board is found again with it)."""
        self.calibration = calibration
        self.profile = calibration.colours if calibration is not None else None
        self.vision = self._vision()
        self._lose_board()
        self._earlier = None  # a new calibration may undistort the frame: the old pose is in another image

    def watch_game(self, game: str) -> None:
        """Another game is set up on the table: read its board from the next frame on."""
        self.game, self.board = game, None
        self.vision = self._vision()
        self._lose_board()
        self._earlier = None  # another game's board: nothing to keep

    def _vision(self) -> BoardVision:
        return BoardVision.of(self.game, self.calibration.pose if self.calibration else None,
                              lambda: self.profile)

    def _lose_board(self) -> None:
        self._earlier = self.pose or self._earlier
        self.pose = self._watch = self._anchor = self._reference = None

    def _hand_over_board(self, small: np.ndarray) -> bool:
        """Whether one connected change since the last accepted board is bigger than two pieces."""
        changed = self._watch.changed(small, self._reference, self.gate.motion_level).astype(np.uint8)
        _, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        biggest = stats[1:, cv2.CC_STAT_AREA].max(initial=0)
        return biggest > self.gate.hand_cells * self._watch.cell_px

    def _report(self, status: str, message: str) -> bool:
        if status == self.status:
            return False
        self.status = status
        self.on_status(status, message)
        return True

    # --- the background loop -------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this referee is already running")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="live-referee", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self.source is not None:
            self.source.close()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        reproducible()  # this thread reads the frames
        for t, frame in self.source.frames(self._report):
            if self._stop.is_set():
                return
            try:
                self.process(t, frame)
            except Exception as e:  # one bad frame (or callback) must not end the game
                if self._report("error", f"a frame could not be processed: {e}"):
                    log.exception("live referee: frame at t=%.2f s failed", t)
        if not self._stop.is_set():
            self._report("ended", "the recording has ended")
