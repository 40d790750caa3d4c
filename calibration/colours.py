"""A table's colour profile: what empty board and each plastic look like under its light.

Why: the reader's colour classes start from nominal hues and adapt to each photo, which
works while every colour shows on enough cells. Early in a game a colour may have one or
two cells, and a given set of plastic under a given lamp may sit far from the nominal hue.
A profile learned at this table (from a calibration shot with one piece of each colour, or
from the first accepted placements) gives the reader each class's real colour to start from.

Two kinds of centre per class, both CIE L*a*b* (L 0-100):

- ``lab``: as photographed under the light at the time. The lamp, the curtains and the
  camera's white balance drift through an evening, so :func:`renormalise` re-reads the
  light from the cells that are empty now (the board's grey plastic is the one neutral
  reference on the table) and moves every centre with it (a per-channel gain, as a change
  of light or white balance acts on a camera's pixels).
- ``neutral``: with the light divided out (:func:`light_free`), the board's grey mapped to
  ``vision.colour.NEUTRAL`` as the classifier maps it. This is the plastic's identity; it
  does not drift, and it is what :meth:`ColourProfile.prior` hands the classifier.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import cv2
import numpy as np

from vision.blokus import MARGIN, PALETTE, PX_PER_CELL
from vision.colour import CLIP, NEUTRAL, CellColours, Palette, classify
from vision.pose import BoardPose, rectify
from vision.sampling import cell_samples

from .errors import CalibrationError

MIN_CONFIDENCE = 0.5  # cells the reader is less sure of do not teach the profile
MIN_EMPTY = 8  # empty cells needed to re-read the light
MIN_SPREAD = 3.0  # a*b* spread floor: one or two cells say little about a class's spread
MAX_WEIGHT = 200  # cells remembered per class: later placements keep moving the centre


@dataclass(frozen=True)
class ClassColour:
    """One class's centres (L*, a*, b*), how widely its cells scatter in a*b*, and from how many cells."""

    lab: tuple[float, float, float]  # as photographed under the current light
    neutral: tuple[float, float, float]  # light divided out (the reader's feature space)
    spread: float  # standard deviation in a*b* of ``neutral``, >= MIN_SPREAD
    cells: int

    def to_json(self) -> dict:
        return {"lab": [round(v, 3) for v in self.lab], "neutral": [round(v, 3) for v in self.neutral],
                "spread": round(self.spread, 3), "cells": self.cells}

    @classmethod
    def from_json(cls, data: Mapping) -> "ClassColour":
        lab, neutral = (tuple(float(v) for v in data[key]) for key in ("lab", "neutral"))
        spread = float(data["spread"])
        if len(lab) != 3 or len(neutral) != 3 or not np.isfinite(lab + neutral + (spread,)).all():
            raise ValueError("colours: each class needs three-number lab and neutral centres")
        return cls(lab, neutral, max(spread, MIN_SPREAD), int(data.get("cells", 0)))


@dataclass(frozen=True)
class ColourPrior:
    """What the colour classifier can take from a profile, in its own terms.

    ``means_ab`` / ``spreads`` are in the classifier's a*b* feature space (light divided
    out), one row per label, empty first, as ``classify`` orders its classes: start values
    for each class's Gaussian, and the fallback for a class with too few cells in a frame.
    ``board_grey`` is the empty board's BGR (0-1) under the latest light: the first guess
    of the light that ``classify`` now makes from the least saturated cells.
    """

    labels: tuple[str, ...]
    means_ab: np.ndarray  # K x 2
    spreads: np.ndarray  # K
    lightness: np.ndarray  # K, L* in the feature space
    board_grey: np.ndarray  # 3, BGR 0-1


@dataclass(frozen=True)
class ColourProfile:
    """Per-class colour centres for one table; ``empty`` is the label of an empty cell."""

    classes: Mapping[str, ClassColour]
    empty: str = "."

    @property
    def labels(self) -> tuple[str, ...]:
        return (self.empty, *(k for k in self.classes if k != self.empty))

    def prior(self) -> ColourPrior:
        """The profile as start values for ``vision.colour.classify`` (see :class:`ColourPrior`)."""
        labels = self.labels
        neutral = np.array([self.classes[k].neutral for k in labels])
        grey = _lab_to_bgr(np.array(self.classes[self.empty].lab))
        return ColourPrior(labels, neutral[:, 1:], np.array([self.classes[k].spread for k in labels]),
                           neutral[:, 0], grey)

    def palette(self) -> Palette:
        """A drop-in for the reader's nominal palette, with this table's hues.

        ``classify`` takes only the hue of each colour, as its starting point and as the
        anchor its classes may not drift far from; these are the hues the plastic really
        has here, in the classifier's light-free space.
        """
        colours = {}
        for label in self.labels[1:]:
            bgr = np.clip(_lab_to_bgr(np.array(self.classes[label].neutral)), 0.0, 1.0)
            colours[label] = tuple(int(round(v * 255)) for v in bgr[::-1])
        return Palette(self.empty, colours)

    def to_json(self) -> dict:
        return {"empty": self.empty, "classes": {k: self.classes[k].to_json() for k in self.labels}}

    @classmethod
    def from_json(cls, data: Mapping) -> "ColourProfile":
        empty = str(data.get("empty", "."))
        classes = {str(k): ClassColour.from_json(v) for k, v in data["classes"].items()}
        if empty not in classes or len(classes) < 2:
            raise ValueError("colours: the empty class and at least one colour are needed")
        return cls(classes, empty)


@dataclass(frozen=True)
class CellObservation:
    """Per-cell colour of one frame at a known pose, and how the reader labelled each cell."""

    raw: np.ndarray  # rows x cols x 3, median BGR 0-1 of each cell's middle, clipped pixels left out
    colours: CellColours  # the reader's classification (labels, confidence)

    def board(self) -> list[str]:
        return self.colours.letters()


def observe(frame: np.ndarray, pose: BoardPose, palette: Palette = PALETTE) -> CellObservation:
    """Sample and classify every cell of ``frame`` at ``pose`` (as ``read_with_pose`` does)."""
    w, h = pose.extent
    rect = rectify(frame, pose, PX_PER_CELL, MARGIN)
    inner, ring = cell_samples(rect, (int(round(h)), int(round(w))), PX_PER_CELL, MARGIN)
    return CellObservation(_cell_raw(inner), classify(inner, ring, palette))


def _cell_raw(inner: np.ndarray) -> np.ndarray:
    """Median BGR of each cell's middle (rows x cols x n x 3), clipped pixels left out."""
    unclipped = np.where((inner.max(-1) < CLIP)[..., None], inner, np.nan)
    with np.errstate(all="ignore"):
        raw = np.nanmedian(unclipped, axis=2)
    return np.where(np.isnan(raw), np.median(inner, axis=2), raw)


def empty_samples(reading, empty: str = ".", min_confidence: float = MIN_CONFIDENCE) -> np.ndarray:
    """BGR (0-1) of each cell a reading (``vision.reading.BoardReading``) found empty with
    confidence, as :func:`observe` measures cells: what :func:`renormalise` needs to follow
    the light from an accepted board (N x 3; empty when there is none)."""
    rows, cols = len(reading.board), len(reading.board[0]) if reading.board else 0
    if not rows or not cols:
        return np.zeros((0, 3))
    inner, _ = cell_samples(reading.rectified, (rows, cols), reading.px_per_cell, reading.margin)
    labels = np.array([list(r) for r in reading.board])
    sure = (labels == empty) & (np.asarray(reading.confidence) >= min_confidence)
    return _cell_raw(inner)[sure]


def light_free(raw: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """L*a*b* of every cell with the light divided out, the board's grey mapped to ``NEUTRAL``.

    The light over a board (a lamp to one side, a window) falls off smoothly, close to a
    plane in log brightness per channel: fitted to the empty cells, it gives each cell's
    own light, so a piece in the dim corner and one under the lamp get the same colour.
    """
    rows, cols = raw.shape[:2]
    r, c = np.mgrid[0:rows, 0:cols]
    design = np.column_stack([np.ones(rows * cols), r.ravel() / rows, c.ravel() / cols])
    logs = np.log(np.maximum(raw.reshape(-1, 3), 1e-3))
    use = empty.ravel()
    if use.sum() >= 3 * MIN_EMPTY:
        coef = np.linalg.lstsq(design[use], logs[use], rcond=None)[0]
    else:  # too few empty cells to see a slope: one light for the whole board
        coef = np.vstack([np.median(logs[use] if use.any() else logs, axis=0), np.zeros((2, 3))])
    light = np.exp(design @ coef)
    return _bgr_to_lab(np.clip(raw.reshape(-1, 3) / light * NEUTRAL, 0.0, 1.0)).reshape(rows, cols, 3)


def learn_profile(obs: CellObservation, board: Sequence[str] | None = None,
                  previous: ColourProfile | None = None) -> ColourProfile:
    """Centres of every class from one frame's cells; merged into ``previous`` if given.

    ``board`` gives the true labels (an accepted state: the live referee learning from
    the first placements); without it the reader's own confident labels are used (a
    calibration shot). Classes absent from this frame keep their previous centres.
    """
    labels = obs.colours.labels
    if board is None:
        truth = np.array([list(r) for r in obs.board()])
        trusted = obs.colours.confidence >= MIN_CONFIDENCE
    else:
        truth = np.array([list(r) for r in board])
        if truth.shape != obs.raw.shape[:2]:
            raise ValueError(f"board is {truth.shape}, the frame has {obs.raw.shape[:2]} cells")
        trusted = np.ones(truth.shape, bool)
    neutral = light_free(obs.raw, trusted & (truth == labels[0]))
    classes = dict(previous.classes) if previous is not None else {}
    for label in labels:
        mask = trusted & (truth == label)
        if not mask.any():
            continue
        fresh = _centre(obs.raw[mask], neutral[mask])
        old = classes.get(label)
        classes[label] = fresh if old is None else _merge(old, fresh)
    if labels[0] not in classes:
        raise CalibrationError("colour_missing", "no empty cell could be read: the profile needs some of the "
                               "board's grey showing")
    return ColourProfile({k: classes[k] for k in labels if k in classes}, labels[0])


def require_classes(profile: ColourProfile, labels: Sequence[str], names: Mapping[str, str]) -> None:
    """Refuse a calibration shot in which some colour was not seen."""
    missing = [names.get(k, k) for k in labels if k not in profile.classes]
    if missing:
        raise CalibrationError("colour_missing", f"no {' or '.join(missing)} piece was found on the board: lay "
                               "one piece of each colour on the board, in view and not in glare, and take the "
                               "shot again")


def _centre(raw: np.ndarray, neutral: np.ndarray) -> ClassColour:
    lab = _bgr_to_lab(raw.astype(np.float32))
    spread = float(np.sqrt(np.mean(np.sum((neutral[:, 1:] - neutral[:, 1:].mean(0)) ** 2, axis=1)) / 2))
    return ClassColour(tuple(float(v) for v in np.median(lab, axis=0)),
                       tuple(float(v) for v in np.median(neutral, axis=0)), max(spread, MIN_SPREAD), len(raw))


def _merge(old: ClassColour, new: ClassColour) -> ClassColour:
    """Count-weighted mean, with the old count capped so the profile keeps following the table."""
    a, b = min(old.cells, MAX_WEIGHT), new.cells
    mix = lambda x, y: tuple(float(v) for v in (np.array(x) * a + np.array(y) * b) / (a + b))  # noqa: E731
    return ClassColour(mix(old.lab, new.lab), mix(old.neutral, new.neutral),
                       max(MIN_SPREAD, (old.spread * a + new.spread * b) / (a + b)), a + b)


def renormalise(profile: ColourProfile, empty_samples: np.ndarray) -> ColourProfile:
    """The profile under the light that ``empty_samples`` (BGR 0-1, any shape ... x 3) show now.

    The board's grey, then and now, gives one gain per channel; every class's photographed
    centre is moved by it. Light-free centres stay as they are. With fewer than
    ``MIN_EMPTY`` usable samples (a full board, a hand over it) the profile is returned unchanged.
    """
    samples = np.asarray(empty_samples, np.float32).reshape(-1, 3)
    samples = samples[np.isfinite(samples).all(1) & (samples.max(1) < CLIP) & (samples.min(1) > 0.01)]
    if len(samples) < MIN_EMPTY:
        return profile
    now = np.median(samples, axis=0)
    then = np.maximum(_lab_to_bgr(np.array(profile.classes[profile.empty].lab)), 1e-3)
    gain = now / then
    classes = {}
    for label, cls in profile.classes.items():
        bgr = _lab_to_bgr(np.array(cls.lab)) * gain
        lab = _bgr_to_lab(np.clip(bgr, 0.0, 1.0)[None].astype(np.float32))[0]
        classes[label] = ClassColour(tuple(float(v) for v in lab), cls.neutral, cls.spread, cls.cells)
    return ColourProfile(classes, profile.empty)


def _bgr_to_lab(bgr: np.ndarray) -> np.ndarray:
    """N x 3 BGR 0-1 -> N x 3 L*a*b* (L 0-100)."""
    return cv2.cvtColor(bgr.reshape(-1, 1, 3).astype(np.float32), cv2.COLOR_BGR2Lab).reshape(-1, 3)


def _lab_to_bgr(lab: np.ndarray) -> np.ndarray:
    """One L*a*b* triple -> BGR 0-1 (unclipped: a gain may take it out of gamut)."""
    return cv2.cvtColor(np.asarray(lab, np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(3).astype(np.float64)
