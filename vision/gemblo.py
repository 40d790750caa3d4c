"""Read a Gemblo board from a photo: fit the hex lattice, read each cell, ask the rules.

Geometry lives in `vision.hexpose`, colour in `vision.colour` (shared with Blokus): the
colour classifier wants cells on a 2-D grid whose neighbours are neighbours on the board
(its light field is smoothed over that grid), so the 463 hexes are laid out in offset
columns (29 x 22); the slots outside the hexagon repeat their nearest real cell.

Clear pieces are nearly colourless on a light board: the colour classifier calls them
empty. What gives them away is their rim: the bevel of a clear piece is brighter than the
floor beside an empty cell's ridge. So among the cells read as empty, the rim-minus-middle
brightness is compared with the empty cells' own spread; far above it is clear, in between
is uncertain. The embossed marks sit in the cell's middle and touch neither measure much.

Rules prior: one colour's edge-connected region is one piece (M4), so a region that is not
one of the 18 shapes is re-examined at its least confident cells (their second-best
labels); what cannot be explained is flagged and its weakest cells reported uncertain.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations
from typing import Mapping

import cv2
import numpy as np

from rules.gemblo import pieces, row2

from .colour import Palette, classify
from .errors import ReadError
from .hexgrid import EXTENT, NEIGHBOURS, cells, centres, edge_distance, key
from .hexpose import locate, ridge_contrast
from .image_io import as_bgr
from .pose import BoardPose, rectify
from .reading import UNCERTAIN_BELOW

EMPTY = "."
PALETTE = Palette(EMPTY, {"R": (200, 30, 40), "Y": (240, 200, 20), "G": (20, 150, 70), "B": (30, 80, 200),
                          "P": (120, 50, 160)})
LABELS = (*PALETTE.labels, "C")
DRAW_BGR = {".": (210, 210, 210), "C": (255, 255, 255), "R": (70, 70, 255), "Y": (0, 235, 255),
            "G": (90, 230, 90), "B": (255, 140, 40), "P": (200, 60, 160)}
PPU = 10.0  # top-down pixels per R for reading
INNER_R = 0.42  # the trusted middle of a cell (R units)
RING_R = (0.45, 0.6)  # colour fallback ring
RIM_E = (0.1, 0.22)  # edge-distance band where a clear piece's rim shines
CLEAR_CUT = 5.0  # clear-piece evidence this many empty-cell spreads above their median: clear
CLEAR_SURE_EMPTY = 2.0  # within this many spreads of it a cell is surely empty (confidence band)
RULES_BUDGET_S = 0.1
CHANGED_CONF = 0.45  # a cell the rules relabelled stays uncertain: the photo did not show it
VERIFY_SHARE = 0.6  # a frame whose ridges show less than this share of the located frame's: moved
VERIFY_FLOOR = 1.3  # ridge contrast (ridge over off-ridge gradient) below which no lattice is where the pose says
VERIFY_DEFAULT = 3.0  # the reference for a pose that carries none (located elsewhere)


@dataclass
class GembloReading:
    """One photo read. ``cells`` holds the best label of each occupied cell; ``uncertain``
    lists cells ("q,r") whose label is a guess, which callers must not take as read."""

    cells: dict[str, str]
    confidence: dict[str, float]  # every board cell
    uncertain: list[str]
    timing_ms: float
    pose: BoardPose
    rectified: np.ndarray
    flags: list[str] = field(default_factory=list)  # rule conflicts left, in words
    changed_by_rules: list[str] = field(default_factory=list)

    @property
    def overall_confidence(self) -> float:
        conf = float(np.mean(list(self.confidence.values())))
        return conf * (0.5 if self.flags else 1.0)

    def to_state_json(self) -> dict:
        return {
            "state": {"game": "gemblo", "cells": dict(sorted(self.cells.items()))},
            "confidence": round(self.overall_confidence, 4),
            "uncertain": sorted(self.uncertain),
            "timing_ms": round(self.timing_ms, 1),
            "cell_confidence": {k: round(v, 3) for k, v in self.confidence.items()},
            "flags": list(self.flags),
            "changed_by_rules": list(self.changed_by_rules),
            "corners": np.round(self.pose.corners, 2).tolist(),
        }


# --- sampling ----------------------------------------------------------------------------

@lru_cache(maxsize=2)
def _offsets(ppu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel offsets (dy, dx) around a cell centre: middle, colour ring, rim band."""
    n = int(np.ceil(ppu))
    dy, dx = np.mgrid[-n:n + 1, -n:n + 1]
    rad = np.hypot(dx, dy) / ppu
    e, _ = edge_distance(dx / ppu, dy / ppu)
    pick = lambda m: np.column_stack([dy[m], dx[m]])  # noqa: E731
    return (pick(rad <= INNER_R), pick((rad > RING_R[0]) & (rad <= RING_R[1])),
            pick((e >= RIM_E[0]) & (e <= RIM_E[1])))


def _gather(rect: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(463, n, channels) pixels at the offsets around each cell centre."""
    c = np.rint(centres() * PPU - 0.5).astype(int)
    ys = np.clip(c[:, 1:2] + offsets[None, :, 0], 0, rect.shape[0] - 1)
    xs = np.clip(c[:, 0:1] + offsets[None, :, 1], 0, rect.shape[1] - 1)
    return rect[ys, xs]


@lru_cache(maxsize=1)
def _layout() -> np.ndarray:
    """(22, 29) index into `cells()` per offset-grid slot (outside slots: the nearest cell)."""
    cs = cells()
    slot = {((row2(c) + 21 + (c[0] % 2 == 0)) // 2, c[0] + 14): i for i, c in enumerate(cs)}
    xy = centres()
    grid = np.zeros((22, 29), int)
    for row in range(22):
        for col in range(29):
            if (row, col) in slot:
                grid[row, col] = slot[(row, col)]
            else:
                q = col - 14
                y = (2 * row - 21 - (q % 2 == 0)) * np.sqrt(3) / 2 + EXTENT[1] / 2
                grid[row, col] = int(np.argmin(np.hypot(xy[:, 0] - (1.5 * q + EXTENT[0] / 2), xy[:, 1] - y)))
    return grid


def _in_photo(pose: BoardPose) -> np.ndarray:
    """Whether each cell's middle lies inside the photo (cells beyond were never seen)."""
    pts = pose.to_photo(centres())
    w, h = pose.image_size
    return (pts[:, 0] >= 0) & (pts[:, 0] <= w - 1) & (pts[:, 1] >= 0) & (pts[:, 1] <= h - 1)


# --- classification ----------------------------------------------------------------------

def _clear(rim: np.ndarray, mid: np.ndarray, empty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(clear) and confidence for cells the colour classifier read as empty.

    Evidence: a bright rim (rim band minus middle, relative to the cell's level). The rim
    band lies outside every embossed mark; highlights inside the cell are not used, since
    the marks' raised lines glint just as much. The empty cells' own spread sets the scale;
    between "like an empty cell" and "clearly brighter" the cell is uncertain.
    """
    level = np.median(mid, axis=1) + 1e-3
    score = (np.mean(rim, axis=1) - level) / level
    ref = score[empty]
    if len(ref) < 10:
        return np.zeros(len(score)), np.full(len(score), 0.5)
    # The empty cells' centre and spread from their lower half (clear pieces, if any, sit above).
    centre = np.median(ref)
    spread = max(1.4826 * np.median(centre - ref[ref <= centre]), 0.004)
    z = (score - centre) / spread
    p = 1 / (1 + np.exp(-2.0 * (z - CLEAR_CUT)))
    conf = np.clip(np.maximum(CLEAR_SURE_EMPTY - z, z - 2 * CLEAR_CUT + CLEAR_SURE_EMPTY) / CLEAR_SURE_EMPTY, 0, 1)
    return p, conf


def _probabilities(rect: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(463, 7) class probabilities in LABELS order and (463,) confidence."""
    inner_o, ring_o, rim_o = _offsets(PPU)
    inner = _gather(rect, inner_o).astype(np.float32) / 255
    ring = _gather(rect, ring_o).astype(np.float32) / 255
    grid = _layout()
    colours = classify(inner[grid], ring[grid], PALETTE)
    post = np.zeros((len(cells()), len(LABELS)))
    conf = np.zeros(len(cells()))
    rows, cols = np.indices(grid.shape)
    real = grid[rows, cols]
    post[real.ravel(), :len(PALETTE.labels)] = colours.posterior.reshape(-1, len(PALETTE.labels))
    conf[real.ravel()] = colours.confidence.ravel()
    gray = cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32)
    p_clear, c_clear = _clear(_gather(gray, rim_o), _gather(gray, inner_o), np.argmax(post, 1) == 0)
    empty = np.argmax(post, 1) == 0
    post[empty, -1] = post[empty, 0] * p_clear[empty]
    post[empty, 0] *= 1 - p_clear[empty]
    conf[empty] = np.minimum(conf[empty], c_clear[empty])
    return post, conf


# --- the rules as a prior ----------------------------------------------------------------

def _regions(labels: list[str]) -> list[list[int]]:
    """Edge-connected one-colour regions (cell indices)."""
    index = {c: i for i, c in enumerate(cells())}
    seen, out = set(), []
    for i, lab in enumerate(labels):
        if lab == EMPTY or i in seen:
            continue
        stack, region = [i], []
        seen.add(i)
        while stack:
            j = stack.pop()
            region.append(j)
            q, r = cells()[j]
            for dq, dr in NEIGHBOURS:
                n = index.get((q + dq, r + dr))
                if n is not None and n not in seen and labels[n] == lab:
                    seen.add(n)
                    stack.append(n)
        out.append(region)
    return out


def _bad(labels: list[str]) -> list[list[int]]:
    ps = pieces()
    return [reg for reg in _regions(labels) if ps.identify([cells()[i] for i in reg]) is None]


def _apply_rules(labels: list[str], post: np.ndarray, conf: np.ndarray) -> tuple[list[str], list[int], list[str]]:
    """Fix regions that are not pieces by relabelling their least confident cells."""
    deadline = time.perf_counter() + RULES_BUDGET_S
    changed: list[int] = []
    bad = _bad(labels)
    index = {c: i for i, c in enumerate(cells())}
    for region in bad:
        if time.perf_counter() > deadline:
            break
        near = set(region)
        for i in region:
            q, r = cells()[i]
            near |= {index[n] for dq, dr in NEIGHBOURS if (n := (q + dq, r + dr)) in index}
        options = []
        for i in near:
            for j in np.argsort(-post[i])[1:3]:
                cost = float(np.log(post[i].max() + 1e-9) - np.log(post[i, j] + 1e-9))
                options.append((cost + 2 * conf[i], i, LABELS[j]))
        options = sorted(options)[:8]
        before = len(_bad(labels))
        best = None
        for size in (1, 2):
            for combo in combinations(options, size):
                if len({i for _, i, _ in combo}) < size:
                    continue
                trial = list(labels)
                for _, i, lab in combo:
                    trial[i] = lab
                if len(_bad(trial)) < before:
                    best = combo
                    break
            if best:
                break
        if best:
            for _, i, lab in best:
                labels[i] = lab
                conf[i] = min(conf[i], CHANGED_CONF)
                changed.append(i)
    flags = []
    for region in _bad(labels):
        weakest = sorted(region, key=lambda i: conf[i])[:max(1, len(region) // 2)]
        for i in weakest:
            conf[i] = min(conf[i], UNCERTAIN_BELOW - 0.01)
        flags.append(f"not_a_piece: {' '.join(key(cells()[i]) for i in sorted(region))}")
    return labels, changed, flags


# --- reading ----------------------------------------------------------------------------

def locate_board(frame: np.ndarray) -> BoardPose:
    """The board's pose in a frame (upright BGR); ReadError("no_board") when there is none.

    The pose carries, in ``contrast``, how strongly the lattice's ridges show at it: later
    frames are checked against it by :func:`verify_pose`."""
    frame = as_bgr(frame)
    pose = locate(frame)
    return replace(pose, contrast=ridge_contrast(frame, pose))


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Is the board still where ``pose`` says? Cheap: a few thousand pixels sampled across the
    lattice's ridges (no rectification, no filtering of the frame)."""
    pose = _fit_to(frame, pose)
    score = ridge_contrast(as_bgr(frame), pose)
    reference = pose.contrast or VERIFY_DEFAULT
    return score >= max(VERIFY_FLOOR, VERIFY_SHARE * reference)


def read_with_pose(frame: np.ndarray, pose: BoardPose, *, rules: bool = True) -> GembloReading:
    """Read every cell at a known pose (no localisation). ``rules``: apply the rules prior
    (one colour's region is one piece; what cannot be explained is reported uncertain), as
    :func:`read_gemblo` does; it is budgeted to RULES_BUDGET_S."""
    start = time.perf_counter()
    frame = as_bgr(frame)
    return _read(frame, _fit_to(frame, pose), start, rules)


def read_gemblo(image: np.ndarray, calibration: BoardPose | Mapping | None = None) -> GembloReading:
    """Photo (upright BGR) -> Gemblo reading. ``calibration`` may hold a known board pose
    (a BoardPose or its JSON, alone or under "pose") for a fixed camera."""
    start = time.perf_counter()
    image = as_bgr(image)
    pose = _calibrated(calibration, image) or locate_board(image)
    return _read(image, pose, start, rules=True)


def _read(image: np.ndarray, pose: BoardPose, start: float, rules: bool) -> GembloReading:
    rect = rectify(image, pose, PPU, 0.0)
    post, conf = _probabilities(rect)
    conf = np.where(_in_photo(pose), conf, 0.0)
    labels = [LABELS[j] for j in np.argmax(post, 1)]
    changed: list[int] = []
    flags: list[str] = []
    if rules:
        labels, changed, flags = _apply_rules(labels, post, conf)
    names = [key(c) for c in cells()]
    return GembloReading(
        cells={names[i]: lab for i, lab in enumerate(labels) if lab != EMPTY},
        confidence={names[i]: float(conf[i]) for i in range(len(names))},
        uncertain=[names[i] for i in np.flatnonzero(conf < UNCERTAIN_BELOW)],
        timing_ms=(time.perf_counter() - start) * 1000.0, pose=pose, rectified=rect, flags=flags,
        changed_by_rules=[names[i] for i in changed])


def _fit_to(frame: np.ndarray, pose: BoardPose) -> BoardPose:
    """The pose for this frame's size (a pose may have been found on another size)."""
    h, w = frame.shape[:2]
    return pose if pose.image_size == (w, h) else pose.scaled(w / pose.image_size[0])


def _calibrated(calibration, image: np.ndarray) -> BoardPose | None:
    if calibration is None:
        return None
    pose = calibration if isinstance(calibration, BoardPose) else BoardPose.from_json(calibration.get("pose", calibration))
    return _fit_to(image, pose)


def debug_images(reading: GembloReading, scale: int = 2) -> dict[str, np.ndarray]:
    """"rectified" (the top-down view read) and "overlay" (labels; uncertain in magenta)."""
    img = cv2.resize(reading.rectified, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    overlay = (0.65 * img).astype(np.uint8)
    doubt = set(reading.uncertain)
    for c, (x, y) in zip(cells(), centres() * PPU * scale):
        name = key(c)
        label = reading.cells.get(name, EMPTY)
        centre = (int(x), int(y))
        cv2.circle(overlay, centre, int(0.75 * PPU * scale), DRAW_BGR[label], 1 if label == EMPTY else 2)
        if name in doubt:
            cv2.circle(overlay, centre, int(0.35 * PPU * scale), (255, 0, 255), 2)
    return {"rectified": reading.rectified.copy(), "overlay": overlay}


__all__ = ["GembloReading", "ReadError", "debug_images", "locate_board", "read_gemblo", "read_with_pose",
           "verify_pose"]
