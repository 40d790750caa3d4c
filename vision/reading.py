"""What a photo reader returns for a square-grid board, its contract JSON and debug pictures.

Generic over games on a square grid of coloured cells: the game module fills in the labels,
the colours to draw them in, and any rule conflicts it could not explain away.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from .pose import BoardPose

UNCERTAIN_BELOW = 0.5  # cells with a lower confidence are reported as uncertain


@dataclass
class BoardReading:
    """One photo read: best labels, per-cell confidence, and how the board was seen.

    ``board`` always holds the best label of every cell; ``uncertain`` lists the cells whose
    label is a guess (low confidence, glare, an occluder), so callers never mistake a guess
    for a reading. ``flags`` are rule conflicts that remained after re-examining the least
    confident cells (objects with ``to_json()`` and ``cells``).
    """

    game: str
    board: list[str]
    confidence: np.ndarray  # rows x cols, 0-1
    uncertain: list[tuple[int, int]]
    pose: BoardPose
    rectified: np.ndarray  # top-down BGR, ``px_per_cell`` per cell, ``margin`` cells of rim
    timing_ms: float
    labels: tuple[str, ...] = ()  # class order of ``probabilities``
    probabilities: np.ndarray | None = None  # rows x cols x classes, from colour alone
    px_per_cell: int = 20
    margin: float = 0.5
    flags: list[Any] = field(default_factory=list)
    changed_by_rules: list[tuple[int, int]] = field(default_factory=list)
    confirmed_by_rules: list[tuple[int, int]] = field(default_factory=list)
    # rows x cols: cells under something held or standing over the board (a hand, a cup);
    # their colour is the occluder's, so it is no evidence for the rules either
    occluded: np.ndarray | None = None
    # rows x cols: gridless regions reaching in from the board's edge (a hand, a sleeve, a cup
    # at the rim), where a clearly read piece colour may be lent, not the plastic's
    gridless: np.ndarray | None = None

    @property
    def overall_confidence(self) -> float:
        """Mean cell confidence, halved while rule conflicts remain (the board is then wrong)."""
        conf = float(np.mean(self.confidence)) if self.confidence.size else 0.0
        return conf * (0.5 if self.flags else 1.0)

    def to_state_json(self) -> dict:
        """The contract's ``read`` output, plus per-cell detail and where the grid was seen."""
        return {
            "state": {"game": self.game, "board": list(self.board)},
            "confidence": round(self.overall_confidence, 4),
            "uncertain": [[int(r), int(c)] for r, c in self.uncertain],
            "timing_ms": round(float(self.timing_ms), 1),
            "cell_confidence": np.round(self.confidence, 3).tolist(),
            "flags": [f.to_json() for f in self.flags],
            "changed_by_rules": [[int(r), int(c)] for r, c in self.changed_by_rules],
            "confirmed_by_rules": [[int(r), int(c)] for r, c in self.confirmed_by_rules],
            "corners": np.round(self.pose.corners, 2).tolist(),
            "pose_quality": round(float(self.pose.quality), 4),
        }


def uncertain_cells(confidence: np.ndarray) -> list[tuple[int, int]]:
    return [(int(r), int(c)) for r, c in np.argwhere(confidence < UNCERTAIN_BELOW)]


def debug_images(reading: BoardReading, colours: Mapping[str, Sequence[int]] | None = None,
                 scale: int = 2) -> dict[str, np.ndarray]:
    """"rectified" (the top-down view read) and "overlay" (grid, labels, doubts) as BGR.

    In the overlay each cell shows its label in its class colour (``colours``: label -> BGR);
    uncertain cells are outlined in magenta and cells in rule conflicts in orange, so a
    wrong reading can be traced to geometry (grid off the grooves) or to colour.
    """
    px, m = reading.px_per_cell * scale, reading.margin
    img = cv2.resize(reading.rectified, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    overlay = (0.65 * img).astype(np.uint8)
    rows, cols = len(reading.board), len(reading.board[0]) if reading.board else 0
    off = int(round(m * px))
    for k in range(max(rows, cols) + 1):
        if k <= cols:
            cv2.line(overlay, (off + k * px, off), (off + k * px, off + rows * px), (255, 255, 255), 1)
        if k <= rows:
            cv2.line(overlay, (off, off + k * px), (off + cols * px, off + k * px), (255, 255, 255), 1)
    colours = colours or {}
    flagged = {tuple(c) for f in reading.flags for c in getattr(f, "cells", ())}
    doubtful = set(reading.uncertain)
    for r, row in enumerate(reading.board):
        for c, label in enumerate(row):
            x, y = off + c * px, off + r * px
            colour = tuple(int(v) for v in colours.get(label, (230, 230, 230)))
            cv2.putText(overlay, label, (x + px // 4, y + 3 * px // 4), cv2.FONT_HERSHEY_SIMPLEX,
                        px / 40.0, colour, max(1, px // 20), cv2.LINE_AA)
            if (r, c) in flagged:
                cv2.rectangle(overlay, (x + 1, y + 1), (x + px - 2, y + px - 2), (0, 140, 255), 2)
            if (r, c) in doubtful:
                cv2.rectangle(overlay, (x + 3, y + 3), (x + px - 4, y + px - 4), (255, 0, 255), 2)
    return {"rectified": reading.rectified.copy(), "overlay": overlay}
