"""Doubt for a photo whose pieces show only as light: a sepia, warm-mono, duotone or tritone filter.

Such a filter maps every pixel's brightness to one colour, so the pieces keep only their
brightness and the readers, which tell a piece from the board by colour, read them as empty
cells or as the filter's tint, mostly with confidence. No photo-level colour measure refuses
it: a real empty board under warm light is one hue too (bench/ROUNDS.md, "Round sepia17").
What the filter cannot fake is a board whose pieces show their colours; and what it cannot hide
is the pieces' light. So, per reader:

1. *Is colour shown?* In a one-hue photo each cell's chroma is a function of its brightness
   (a tint scales with it, a duotone runs along a straight line between its two ends, a
   tritone bends that line at its middle tone, the classic sepia matrix where its red clips).
   A cell whose chroma lies off the photo's brightness-to-colour curve, a line broken once
   (:func:`off_bent_curve`), shows a colour of its own; a photo of pieces in colour has dozens
   of them (every piece cell of the colours the bend does not pass through; 10 % or more of a
   Blokus board on the bench's photos), a one-hue photo a few at most (JPEG rounding, a cell
   straddling the bend). With :data:`COLOUR_SHOWN` such cells nothing is doubted.
2. *Otherwise* (a one-hue photo, or a real board with almost nothing on it), a cell is read
   only by its light: one whose brightness stands out from its neighbours' (the board's,
   mostly; :data:`STANDS_OUT`) while its colour keeps to the straight line (:func:`off_curve`)
   is uncertain, and so is a cell read as a piece colour that keeps to the line (its "colour"
   is the filter's tint at that brightness). The straight line here, not the bent one: on a
   board of a few pieces the bend may pass through one piece colour of a colour photo (a
   yellow piece brighter than the board), whose cells would then be doubted. A real empty
   board departs less: a soft sheen of the light brightens a patch of 4-8 cells by 10-20 %, a
   shadow's edge darkens a few by as much.
3. *Pieces shown only as light*: when that many cells keeping to the bent line depart
   (:data:`PIECES_SHOWN`), there are pieces on the board whose colours cannot be seen, and a
   piece as bright as the board cannot be told from it at all: every cell is uncertain (the few
   off the line too: so few show a bend's rounded corner, not a colour). A real empty board
   under a shadow's edge, a warm lamp or a dim room departs at fewer (none of 50 in 15
   conditions reached it; a glare spot's cells, ``shone``, are not counted).

Phone photos only (``read_blokus``, ``read_gemblo``, and ``read_geometrius``'s chip tops through
``geometrius_stack.tokens_show_colour``, on the cards' pixels: :func:`pixel_curve`,
:func:`off_curve_nearby`; not the live referee's ``read_with_pose``):
a webcam has no such filter, and early in a Gemblo game the clear pieces show only as light, so
the doubt held live moves back (``python -m bench live_games``: 7 of 11 steps logged by the
camera alone -> 6, the player's taps 30 -> 36).

Generic over the grid: cells are given as flat arrays with their centres in cell units (a
square or a hexagonal lattice alike).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

OFF_CURVE = 0.1  # chroma (0-1 channel units) off the brightness-to-colour curve: the cell's own colour
COLOUR_SHOWN = 12  # cells this far off the curve: the photo shows colours (the bench's colour photos: dozens)
CURVE_SHARE = 50  # the straight line is fitted to this percentage of cells nearest it (the board, mostly)
BENT_SHARE = 75  # the bent curve to this percentage: beyond its knee there may be only a tritone's brightest pieces
KNEES = np.arange(5, 100, 5)  # the percentiles of the cells' brightness where the bent curve may bend
CLIPPED = 0.97  # a cell whose brightest channel reaches this shows the clip's colour (white), not its own
LIGHT_DEPARTS = 0.1  # log brightness off the neighbours' median: a cell's own light (a piece's)
STANDS_OUT = 0.2  # ... this far off, a cell is doubted even where few depart (a board's soft sheen: 0.1-0.2)
NEAR_CELLS = 2.5  # the neighbours a cell's light is compared with lie this close (cell units)
PIECES_SHOWN = 16  # departing cells that show pieces on the board (a real empty board: fewer)
FLAT = 0.04  # a pixel whose 3 x 3 neighbours' brightness spans less lies on a surface, not across an edge
BANDS = 20  # the brightness bands a photo's pixel curve is fitted across ...
BAND_PIXELS = 200  # ... with at most this many flat pixels from each
NEARBY_PX = 5  # a pixel's chroma is compared with the curve over this square of its neighbours
_SQUARE3 = np.ones((3, 3), np.uint8)
_NEARBY = np.ones((NEARBY_PX, NEARBY_PX), np.uint8)


def _brightness(cell_bgr: np.ndarray) -> np.ndarray:
    """(n) luma of each cell's colour (BGR, 0-1), the brightness a one-hue filter keeps."""
    return cell_bgr @ np.array([0.114, 0.587, 0.299])


def _lengths(v: np.ndarray) -> np.ndarray:
    """(...) each chroma difference's length (``v``: ... x 2): ``np.linalg.norm(v, axis=-1)``
    to the bit (the same squares added in the same order), without numpy's slow reduction
    over a short last axis (over every pixel of a photo's token cards, a third of their check)."""
    x, y = v[..., 0], v[..., 1]
    return np.sqrt(x * x + y * y)


def _brightest_channel(bgr: np.ndarray) -> np.ndarray:
    """(...) each colour's brightest channel (``bgr``: ... x 3): ``bgr.max(axis=-1)`` to the
    bit, without numpy's slow reduction over a short last axis."""
    return np.maximum(np.maximum(bgr[..., 0], bgr[..., 1]), bgr[..., 2])


def _opponents(cell_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's brightness (n) and chroma (n x 2): two opponent differences, red-green and
    yellow-blue, in channel units, not divided by the brightness, so that a tint and a duotone
    make them linear in the brightness."""
    b, g, r = cell_bgr[:, 0], cell_bgr[:, 1], cell_bgr[:, 2]
    return _brightness(cell_bgr), np.stack([r - g, 0.5 * (r + g) - b], 1)


def _lines(brightness: np.ndarray, chroma: np.ndarray, fitted: np.ndarray, knees: np.ndarray,
           share: float) -> tuple[np.ndarray, np.ndarray]:
    """Lines in brightness broken at each of ``knees`` (another slope above it; a knee past every
    cell leaves it straight), fitted to the ``fitted`` cells: to them all, then to the ``share``
    percent of them nearest it, round by round, so that the pieces' colours in a colour photo do
    not pull it. Returns (knees x n) each cell's chroma distance from each line, and (knees x 3 x 2)
    the lines (:func:`_terms`)."""
    terms = _terms(brightness[None], knees[:, None])  # knees x n x 3
    weight = np.broadcast_to(fitted, terms.shape[:2]).astype(float)
    for _ in range(3):
        weighted = (terms * weight[..., None]).transpose(0, 2, 1)
        normal = weighted @ terms + 1e-9 * np.eye(3)  # a knee past every fitted cell: no slope above it
        lines = np.linalg.solve(normal, weighted @ chroma)
        gap = _lengths(chroma[None] - terms @ lines)
        weight = fitted & (gap <= np.percentile(gap[:, fitted], share, axis=1)[:, None])
    return gap, lines


def _terms(brightness: np.ndarray, knee: np.ndarray | float) -> np.ndarray:
    """(... x 3) a broken line's terms at ``brightness``: 1, the brightness, its part above the knee."""
    return np.stack(np.broadcast_arrays(1.0, brightness, np.maximum(brightness - knee, 0.0)), -1)


def off_curve(cell_bgr: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """(n) how far each cell's chroma lies from the photo's straight brightness-to-colour line.

    ``cell_bgr``: (n x 3) each cell's typical colour, BGR 0-1; the line is the ``seen`` cells',
    fitted to the :data:`CURVE_SHARE` of them nearest it (not a quadratic: fitted to the board's
    narrow band of brightness, it swung off at the pieces' brighter cells). A tint or a duotone
    keeps every cell on it.
    """
    brightness, chroma = _opponents(cell_bgr)
    return _lines(brightness, chroma, seen, np.array([np.inf]), CURVE_SHARE)[0][0]


@dataclass(frozen=True, eq=False)
class BentCurve:
    """A photo's brightness-to-colour curve, a line broken once (:func:`bent_curve`)."""

    knee: float  # the brightness where it bends
    line: np.ndarray  # 3 x 2: the chroma is line[0] + brightness line[1] + (brightness - knee, if above) line[2]

    def chroma_at(self, brightness: np.ndarray) -> np.ndarray:
        """(... x 2) the curve's chroma at ``brightness`` (any shape)."""
        return _terms(brightness, self.knee) @ self.line


def bent_curve(cell_bgr: np.ndarray, seen: np.ndarray) -> BentCurve | None:
    """The photo's brightness-to-colour line broken once, fitted to the ``seen`` cells (none when
    fewer than four are unclipped).

    A tritone (dark, middle and light tones) bends the line at its middle tone, and the classic
    sepia matrix where its red clips (the light end then runs to white). The knee is the one of
    :data:`KNEES` that leaves fewest ``seen`` cells off the line (the darkest of equals), fitted to
    :data:`BENT_SHARE` of them. Once broken, not freer: a free curve would follow a colour photo's
    pieces of each colour, which share a brightness too. A cell with a clipped channel
    (:data:`CLIPPED`) is left out of the fit: its chroma is the clip's.
    """
    brightness, chroma = _opponents(cell_bgr)
    fitted = _unclipped(cell_bgr, seen)
    if fitted.sum() < 4:
        return None
    knees = np.percentile(brightness[fitted], KNEES)
    gaps, lines = _lines(brightness, chroma, fitted, knees, BENT_SHARE)
    best = int(np.argmin((gaps[:, fitted] > OFF_CURVE).sum(axis=1)))
    return BentCurve(float(knees[best]), lines[best])


def off_bent_curve(cell_bgr: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """(n) how far each cell's chroma lies from the photo's brightness-to-colour line broken once
    (:func:`bent_curve`). A cell with a clipped channel keeps to the curve: its chroma is the
    clip's. (So does a bright piece colour clipped in a colour photo: an overexposed board of
    yellow pieces alone may be doubted whole. Its clipped channels' spread does not tell it from
    a tritone's clipped light end: 0.87 against 0.53, and such a photo read silently again.)
    """
    curve = bent_curve(cell_bgr, seen)
    if curve is None:
        return np.zeros(len(cell_bgr))
    brightness, chroma = _opponents(cell_bgr)
    gap = np.linalg.norm(chroma - curve.chroma_at(brightness), axis=-1)
    return np.where(_unclipped(cell_bgr, seen), gap, 0.0)


def _unclipped(cell_bgr: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """The ``seen`` cells no channel of which clips (:data:`CLIPPED`): a clipped cell's chroma is
    the clip's, neither fitted nor judged."""
    return seen & (_brightest_channel(cell_bgr) < CLIPPED)


def pixel_curve(patches: Sequence[np.ndarray], fitted: Sequence[np.ndarray] | None = None) -> BentCurve | None:
    """The bent curve (:func:`bent_curve`) of photo patches' pixels (at least one patch, each
    h x w x 3, BGR 0-1), fitted to their flat pixels (:data:`FLAT`), at most :data:`BAND_PIXELS`
    of each twentieth of the brightness. Flat: a JPEG keeps colour at half resolution, so an edge's pixels mix its two
    tones, and a tritone's mixture of its dark and light tones lies far off its bend (up to 0.6).
    Banded: the bright card outnumbers every other tone, and fitted to the pixels as they come a
    tritone's curve bent at the card (0.69), not at its middle tone (0.46), whose chips then lay
    0.35 off it (bench/ROUNDS.md, "Round chip20"). ``fitted``: each patch's pixels that may be
    fitted (h x w bool; default all), so that a caller can leave out what could be a colour of
    its own."""
    flat = []
    for k, patch in enumerate(patches):
        light = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
        spread = cv2.dilate(light, _SQUARE3) - cv2.erode(light, _SQUARE3)
        flat.append(patch[(spread < FLAT) if fitted is None else (spread < FLAT) & fitted[k]])
    cells = np.vstack(flat).astype(np.float64)
    band = np.minimum((_brightness(cells) * BANDS).astype(int), BANDS - 1)
    kept = []
    # Each band's pixels in their own order, all bands at one sort (a stable one).
    for members in np.split(np.argsort(band, kind="stable"), np.cumsum(np.bincount(band, minlength=BANDS))[:-1]):
        kept.append(members[np.linspace(0, len(members) - 1, min(len(members), BAND_PIXELS)).astype(int)])
    kept_cells = cells[np.concatenate(kept)]
    return bent_curve(kept_cells, np.ones(len(kept_cells), bool))


def off_curve_nearby(patch: np.ndarray, curve: BentCurve) -> np.ndarray:
    """(h x w) how far each pixel's chroma lies outside what the curve gives over its neighbourhood
    (:data:`NEARBY_PX` square; per chroma axis, between the least and the most of the curve at the
    neighbours' brightness). A one-hue photo's JPEG mixes neighbouring pixels' tones, which stay
    within that span; a colour of its own leaves it: a chip's face, and a thin printed mark (a
    right angle's red) beside the card and the ink, whose span in a colour photo is grey. A
    clipped pixel (:data:`CLIPPED`) keeps to it: its chroma is the clip's.
    ``patch``: h x w x 3, BGR 0-1 (float32)."""
    brightness, chroma = _opponents(patch.reshape(-1, 3))
    on_curve = curve.chroma_at(brightness).reshape(*patch.shape[:2], 2).astype(np.float32)
    least = np.dstack([cv2.erode(on_curve[..., k], _NEARBY) for k in range(2)]).reshape(-1, 2)
    most = np.dstack([cv2.dilate(on_curve[..., k], _NEARBY) for k in range(2)]).reshape(-1, 2)
    gap = _lengths(np.maximum(least - chroma, 0.0) + np.maximum(chroma - most, 0.0))
    return np.where(_brightest_channel(patch.reshape(-1, 3)) < CLIPPED, gap, 0.0).reshape(patch.shape[:2])


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
    on_bend = off_bent_curve(cell_bgr, seen) <= OFF_CURVE
    if (~on_bend & seen).sum() >= COLOUR_SHOWN:
        return np.zeros(len(seen), bool)
    departure = np.where(seen & ~shone, light_departure(cell_bgr, centres, seen), 0.0)
    if ((departure > LIGHT_DEPARTS) & on_bend).sum() >= PIECES_SHOWN:
        return np.ones(len(seen), bool)
    plain = off_curve(cell_bgr, seen) <= OFF_CURVE
    return plain & ((departure > STANDS_OUT) | ~read_empty)
