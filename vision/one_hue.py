"""Doubt for a photo whose pieces show only as light: a sepia, warm-mono or duotone filter.

Such a filter maps every pixel's brightness to one colour, so the pieces keep only their
brightness and the readers, which tell a piece from the board by colour, read them as empty
cells or as the filter's tint, mostly with confidence. No photo-level colour measure refuses
it: a real empty board under warm light is one hue too (bench/ROUNDS.md, "Round sepia17").
What the filter cannot fake is a board whose pieces show their colours; and what it cannot hide
is the pieces' light. So, per reader:

1. *Is colour shown?* In a one-hue photo each cell's chroma is a function of its brightness
   (a tint scales with it, a duotone runs along a straight line between its two ends). A cell
   whose chroma lies off the photo's brightness-to-colour curve (:func:`off_curve`) shows a
   colour of its own; a photo of pieces in colour has dozens of them (every piece cell; 10 %
   or more of a Blokus board on the bench's photos), a one-hue photo a few at most (JPEG
   rounding). With :data:`COLOUR_SHOWN` such cells nothing is doubted.
2. *Otherwise* (a one-hue photo, or a real board with almost nothing on it), a cell is read
   only by its light: one whose brightness stands out from its neighbours' (the board's,
   mostly; :data:`STANDS_OUT`) while its colour keeps to the curve is uncertain, and so is a
   cell read as a piece colour that keeps to the curve (its "colour" is the filter's tint at
   that brightness). A real empty board departs less: a soft sheen of the light brightens a
   patch of 4-8 cells by 10-20 %, a shadow's edge darkens a few by as much.
3. *Pieces shown only as light*: when that many cells depart (:data:`PIECES_SHOWN`), there are
   pieces on the board whose colours cannot be seen, and a piece as bright as the board cannot be
   told from it at all: every cell keeping to the curve is uncertain. A real empty board under a
   shadow's edge, a warm lamp or a dim room departs at fewer (none of 50 in 15 conditions
   reached it; a glare spot's cells, ``shone``, are not counted).

Phone photos only (``read_blokus`` and ``read_gemblo``; not the live referee's ``read_with_pose``):
a webcam has no such filter, and early in a Gemblo game the clear pieces show only as light, so
the doubt held live moves back (``python -m bench live_games``: 7 of 11 steps logged by the
camera alone -> 6, the player's taps 30 -> 36).

Generic over the grid: cells are given as flat arrays with their centres in cell units (a
square or a hexagonal lattice alike).
"""
from __future__ import annotations

import numpy as np

OFF_CURVE = 0.1  # chroma (0-1 channel units) off the brightness-to-colour curve: the cell's own colour
COLOUR_SHOWN = 12  # cells this far off the curve: the photo shows colours (the bench's colour photos: dozens)
CURVE_SHARE = 50  # the curve is fitted to this percentage of cells nearest it (the board, mostly)
LIGHT_DEPARTS = 0.1  # log brightness off the neighbours' median: a cell's own light (a piece's)
STANDS_OUT = 0.2  # ... this far off, a cell is doubted even where few depart (a board's soft sheen: 0.1-0.2)
NEAR_CELLS = 2.5  # the neighbours a cell's light is compared with lie this close (cell units)
PIECES_SHOWN = 16  # departing cells that show pieces on the board (a real empty board: fewer)


def _brightness(cell_bgr: np.ndarray) -> np.ndarray:
    """(n) luma of each cell's colour (BGR, 0-1), the brightness a one-hue filter keeps."""
    return cell_bgr @ np.array([0.114, 0.587, 0.299])


def off_curve(cell_bgr: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """(n) how far each cell's chroma lies from the photo's brightness-to-colour curve.

    ``cell_bgr``: (n x 3) each cell's typical colour, BGR 0-1; the curve is the ``seen`` cells'.
    Chroma as two opponent differences (red-green, yellow-blue) in channel units, not divided by
    the brightness: a tint and a duotone alike make them linear in the brightness (a line, not a
    bent curve: fitted to the board's narrow band of brightness, a quadratic swung off at the
    pieces' brighter cells). Fitted to the half of the cells nearest it, round by round, so the
    pieces' colours in a colour photo do not pull it.
    """
    b, g, r = cell_bgr[:, 0], cell_bgr[:, 1], cell_bgr[:, 2]
    y = _brightness(cell_bgr)
    chroma = np.stack([r - g, 0.5 * (r + g) - b], 1)
    terms = np.stack([np.ones_like(y), y], 1)
    near = seen.copy()
    for _ in range(3):
        coef = np.linalg.lstsq(terms[near], chroma[near], rcond=None)[0]
        gap = np.linalg.norm(chroma - terms @ coef, axis=1)
        near = seen & (gap <= np.percentile(gap[seen], CURVE_SHARE))
    return gap


def light_departure(cell_bgr: np.ndarray, centres: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """(n) how far each cell's brightness departs from its seen neighbours' median (log; 0 for a
    cell without seen neighbours): smooth light (a gradient, a lamp's fall-off) moves a cell with
    its neighbours; a piece lying among bare cells stands out. ``centres``: (n x 2) in cell units;
    ``seen``: the cells whose light may teach the neighbourhood (not cut off by the photo's edge,
    not under a hand)."""
    light = np.log(np.maximum(_brightness(cell_bgr), 1e-3))
    gap = np.linalg.norm(centres[:, None] - centres[None], axis=-1)
    near = (gap <= NEAR_CELLS) & seen[None]
    count = near.sum(1)
    ranked = np.sort(np.where(near, light[None], np.inf), axis=1)  # each cell's neighbours first
    local = ranked[np.arange(len(light)), np.maximum(count - 1, 0) // 2]  # their (lower) median
    return np.where(count > 0, np.abs(light - local), 0.0)


def light_only_doubts(cell_bgr: np.ndarray, centres: np.ndarray, seen: np.ndarray, read_empty: np.ndarray,
                      shone: np.ndarray) -> np.ndarray:
    """(n) the cells a one-hue photo leaves in doubt (module notes); none where colour shows.

    ``read_empty``: the cells the colour reading calls empty; ``shone``: cells under a glare spot
    or at its rim, whose light is a reflection's (doubted for that already): they do not count
    as pieces shown. Cells the colour reading merely doubts do count: under a one-hue filter it
    doubts the pieces that are far from the board's grey in lightness, the very evidence sought.
    """
    if seen.sum() < 4:
        return np.zeros(len(seen), bool)
    plain = off_curve(cell_bgr, seen) <= OFF_CURVE
    if (~plain & seen).sum() >= COLOUR_SHOWN:
        return np.zeros(len(plain), bool)
    departure = np.where(plain & seen & ~shone, light_departure(cell_bgr, centres, seen), 0.0)
    if (departure > LIGHT_DEPARTS).sum() >= PIECES_SHOWN:
        return plain
    return (departure > STANDS_OUT) | (plain & ~read_empty)
