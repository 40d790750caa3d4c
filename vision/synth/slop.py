"""Placement slop: where a player's hand really leaves a piece, a little off its cells.

A rendered board lays each piece exactly on its cells; a real one does not. Blokus's grid has
only shallow grooves and Gemblo's plate is flat, so a piece sits shifted within its cells and
turned by a degree or two, and the gaps between neighbouring pieces vary. This module draws
that slop per piece (a shift and a turn about the piece's centre); the board modules draw
the piece where it lands. The truth does not change: a nudged piece still belongs to the cells
it was put on.

A piece does not slide into a piece that touches it along a side, nor over Blokus's raised
rim: the shift loses its component towards every such side (`blocked`). A turn still lets a long
piece's far end press a neighbour's bevel by a few hundredths of a cell, drawn over it, and two
Blokus pieces touching only at a corner may overlap there by up to a fifth of a cell (22 % of
such pairs at the `nudged` bound; the session's end review), drawn one over the other.

Slop is drawn from its own rng (seeded by the photo's setup) so the same photo with and
without it differs by the pieces alone, and a photo without it draws nothing. Only a photo
(`render_photo`) draws it: a live game's frames (`render_frame`) lay pieces exactly, since a
piece's nudge would have to stay put from frame to frame while others are added.

The limits the `nudged` conditions use (a fifth of the cell pitch, 3 degrees) are the brief's
bounds for what a real table shows, not measured on real photos. For scale: a fifth of Blokus's
pitch (16 mm in `blokus.CELL_MM`) is 3.2 mm, more than a piece seated in the grid's shallow
grooves can move, about what one resting on the ridges does; on Gemblo's flat plate (11.6 mm
between cell centres) it is 2.3 mm, a gap a finger's nudge opens between two pieces.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .conditions import Conditions

SLOP_STREAM = 19  # the slop's rng: [setup seed, SLOP_STREAM], a stream no other draw uses


@dataclass(frozen=True)
class Nudge:
    """Where one piece lands: `shift` (x, y) in board units, y down; `turn_deg` about its
    centre, positive clockwise on screen (y down)."""

    shift: tuple[float, float]
    turn_deg: float

    def affine(self, centre: tuple[float, float], scale: float) -> np.ndarray:
        """2 x 3 map from texture pixels of the piece laid exactly to where it lands;
        `centre` in texture pixels, `scale` texture pixels per board unit."""
        a = math.radians(self.turn_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        c = np.asarray(centre, np.float64)
        offset = c + np.asarray(self.shift) * scale - rot @ c
        return np.column_stack([rot, offset])


@dataclass(frozen=True)
class Slop:
    """The most a piece is off: `shift` as a share of the cell pitch, `turn_deg` either way."""

    shift: float
    turn_deg: float
    seed: int

    @staticmethod
    def of(conditions: Conditions, setup_seed: int) -> Slop | None:
        """The photo's slop, or None when its conditions lay every piece exactly."""
        if conditions.nudge_cells <= 0 and conditions.nudge_deg <= 0:
            return None
        return Slop(conditions.nudge_cells, conditions.nudge_deg, setup_seed)

    def nudges(self, pitch: float, blocked: Sequence[Sequence[tuple[float, float]]]) -> list[Nudge]:
        """One nudge per piece. `pitch`: the distance between neighbouring cell centres in
        board units; `blocked[i]`: unit directions (x, y) in which piece i touches another
        piece or the rim. Every piece draws the same three numbers, so one piece's
        neighbours never change another's draw."""
        rng = np.random.default_rng([self.seed, SLOP_STREAM])
        out = []
        for sides in blocked:
            length = rng.uniform(0, self.shift * pitch)
            heading = rng.uniform(0, 2 * math.pi)
            turn = rng.uniform(-self.turn_deg, self.turn_deg)
            shift = _off_blocked_sides(np.array([length * math.cos(heading), length * math.sin(heading)]), sides)
            out.append(Nudge((float(shift[0]), float(shift[1])), float(turn)))
        return out


def _off_blocked_sides(shift: np.ndarray, sides: Sequence[tuple[float, float]]) -> np.ndarray:
    """The shift nearest ``shift`` with no component towards any of ``sides`` (unit
    directions). Cutting the sides' components one after another is not enough where two
    sides are not orthogonal (a hex's, 60 or 120 degrees apart): a cut may bring back the
    other's component. The nearest allowed shift is the shift itself, its cut along one
    side, or no shift: the nearest of those that is allowed."""
    directions = [np.asarray(d, np.float64) for d in sides]
    candidates = [shift] + [shift - float(shift @ d) * d for d in directions] + [np.zeros(2)]
    allowed = [c for c in candidates if all(float(c @ d) <= 1e-12 for d in directions)]
    return min(allowed, key=lambda c: float(np.linalg.norm(shift - c)))
