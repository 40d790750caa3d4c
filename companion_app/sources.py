"""Where the live referee's frames come from: a webcam, a video file, a folder of frames.

Every source yields ``(t, frame)``: ``t`` in seconds of *source* time, ``frame`` a BGR image.
The referee's steadiness rule is in seconds, so a recording must carry its own clock (frame
index over fps) whatever speed it is processed at; only a live camera uses the wall clock.
A camera that drops out is reported and reopened with backoff, and the stream goes on: a
loose USB cable must not end a game. ``close()`` interrupts any wait, from another thread.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import cv2
import numpy as np

from rules.errors import InputError
from vision.errors import ReadError
from vision.image_io import load_image

# FFmpeg's own lines ("moov atom not found") would come before the one-line error that says
# the video cannot be used; read by OpenCV when it first opens a file, so set before that.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
OPENCV_SILENT = 0  # cv2.setLogLevel: a missing camera otherwise logs two lines at every try

Frame = tuple[float, np.ndarray]
Report = Callable[[str, str], None]  # (status, message)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


def ignore(status: str, message: str) -> None:
    """The default report: a source used outside the live loop has nobody to tell."""


class SourceError(InputError):
    """A source that cannot be used at all (missing file, empty folder)."""


class FrameSource:
    """A stream of frames that another thread can stop at any moment."""

    def __init__(self) -> None:
        self._closed = threading.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        self._closed.set()

    def frames(self, report: Report = ignore) -> Iterator[Frame]:
        raise NotImplementedError


class RecordedSource(FrameSource):
    """Frames with their own timestamps; ``realtime`` plays them at the pace they were taken.

    Tests and benches read as fast as they can; the tablet demo and ``serve --video`` pace
    the frames so that people see the game at its own speed.
    """

    def __init__(self, realtime: bool = False) -> None:
        super().__init__()
        self.realtime = realtime

    def recorded(self, report: Report) -> Iterable[Frame]:
        raise NotImplementedError

    def frames(self, report: Report = ignore) -> Iterator[Frame]:
        started = None
        for t, frame in self.recorded(report):
            if self.closed:
                return
            if self.realtime:
                now = time.monotonic()
                started = now - t if started is None else started
                if self._closed.wait(max(0.0, started + t - now)):
                    return
            yield t, frame


def quiet_capture(target: int | str) -> cv2.VideoCapture:
    """``cv2.VideoCapture`` without OpenCV's log lines: the source reports what went wrong itself."""
    previous = cv2.setLogLevel(OPENCV_SILENT)
    try:
        return cv2.VideoCapture(target)
    finally:
        cv2.setLogLevel(previous)


class CameraSource(FrameSource):
    """A webcam by index, reopened with growing pauses while it is unplugged or busy."""

    def __init__(self, index: int, backoff: tuple[float, float] = (0.5, 8.0),
                 open_capture: Callable[[int], cv2.VideoCapture] = quiet_capture) -> None:
        super().__init__()
        self.index, self.backoff, self.open_capture = index, backoff, open_capture

    def check(self, reads: int = 12, pause_s: float = 0.25) -> None:
        """SourceError unless the camera opens and sends a frame within ``reads`` tries
        ``pause_s`` apart (a cheap webcam may open and fail its first reads while its exposure
        settles). Asked once, when the server starts: a camera number with no camera behind it
        is a typo to tell the user then, not a dropped cable to wait for (a camera lost later
        is waited for, see :meth:`frames`)."""
        capture = self.open_capture(self.index)
        try:
            for _ in range(reads if capture.isOpened() else 0):
                if capture.read()[0]:
                    return
                time.sleep(pause_s)
            raise SourceError("unreadable_camera", f"camera {self.index} sends no frames: there is no such "
                                                   "camera, or another program is using it")
        finally:
            capture.release()

    def frames(self, report: Report = ignore) -> Iterator[Frame]:
        pause = self.backoff[0]
        while not self.closed:
            capture = self.open_capture(self.index)
            try:
                ok, frame = capture.read() if capture.isOpened() else (False, None)
                while ok and not self.closed:
                    pause = self.backoff[0]
                    yield time.monotonic(), frame
                    ok, frame = capture.read()
            finally:
                capture.release()
            if self.closed:
                return
            report("camera_disconnected", f"camera {self.index} is not sending frames; "
                                          f"trying again in {pause:g} s")
            self._closed.wait(pause)
            pause = min(pause * 2, self.backoff[1])


class VideoSource(RecordedSource):
    """A video file; frame ``i`` is at ``i / fps`` (the container's fps, 30 when it has none)."""

    def __init__(self, path: str | Path, realtime: bool = False) -> None:
        super().__init__(realtime)
        self.path = Path(path)
        capture = quiet_capture(str(self.path))
        try:
            if not capture.isOpened():
                raise SourceError("unreadable_video", f"cannot open video {self.path}")
            if not capture.read()[0]:  # an empty recording would only ever say "ended"
                raise SourceError("unreadable_video", f"video {self.path} has no frame that can be decoded")
            self.fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
        finally:
            capture.release()

    def recorded(self, report: Report) -> Iterator[Frame]:
        capture = quiet_capture(str(self.path))
        try:
            index = 0
            while True:
                ok, frame = capture.read()
                if not ok:
                    return
                yield index / self.fps, frame
                index += 1
        finally:
            capture.release()


class FolderSource(RecordedSource):
    """Image files of a folder in name order, taken ``fps`` times a second."""

    def __init__(self, path: str | Path, fps: float = 5.0, realtime: bool = False) -> None:
        super().__init__(realtime)
        folder = Path(path)
        if not folder.is_dir():
            raise SourceError("unreadable_frames", f"{folder} is not a folder")
        self.files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise SourceError("unreadable_frames", f"no image files ({' '.join(IMAGE_SUFFIXES)}) in {folder}")
        self.fps = fps
        self._check_one_loads(folder)

    def _check_one_loads(self, folder: Path) -> None:
        """SourceError when no file loads (a folder of damaged or mislabelled files would only
        report each and end); one unreadable frame among good ones is reported as it comes."""
        first = None
        for path in self.files:
            try:
                load_image(path)
                return
            except ReadError as e:
                first = first or f"{path.name}: {e.message}"
        raise SourceError("unreadable_frames", f"none of the {len(self.files)} image files in {folder} can be "
                                               f"read (first: {first})")

    def recorded(self, report: Report) -> Iterator[Frame]:
        for index, path in enumerate(self.files):
            try:
                yield index / self.fps, load_image(path)
            except ReadError as e:
                report("unreadable_frame", f"{path.name}: {e.message}")
