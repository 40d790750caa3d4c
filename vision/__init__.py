"""tableref: vision.

OpenCV's Intel IPP paths are switched off for every reader: with them, the same photo read twice
in one process could come out differently (float rounding that depends on where a buffer lies in
memory; an Equilibrix pose 0.67 on one read, 0.71 on the next), so a tie between two poses or two
labels fell either way. Without them every read of a photo is the same, at no cost in time
(12 MP, one core: Blokus 0.32 s either way, Gemblo 0.49 -> 0.32 s, Equilibrix 0.41 -> 0.28 s).
"""
import cv2


def reproducible() -> None:
    """Switch IPP off in the calling thread. OpenCV keeps this switch per thread, so every thread
    that reads photos calls this first: the live referee's thread, each request of the tablet's
    server; importing ``vision`` does it for the importing thread (the command line, the benches)."""
    cv2.ipp.setUseIPP(False)


reproducible()
