"""Read a Blokus board from a photo: find the grid, read each cell's colour, ask the rules.

The generic parts (grid finding, light-adaptive colour, sampling) live in their own modules;
this one knows only what is Blokus: a 20 x 20 grid, four plastic colours on a grey board,
and rules that make most misreadings visible. Pieces of one colour never share an edge
(B5), so every one-colour region must be one of the 21 pieces, each used once, chained
corner to corner from a board corner. A reading that breaks this is re-examined at its least
confident cells (second-best labels) before it is reported; what cannot be explained away
is reported as flags, and the pieces they name as uncertain, however clear their colour. A
patch of doubtful cells (under a hand, a cup, a glare spot) is then completed as a whole with
the likeliest labelling the rules allow. A doubtful cell whose colour is clear but faint
(glare) is confirmed when no other label would keep the board legal.

Glare adds the same white to every channel, so what it leaves unclipped keeps the plastic's
chroma, and where a channel clips, the chroma is only cut off at the pixel's headroom: cells
a glare spot touches are re-read from their white-free colour (out to the pieces' bevels,
where the gloss is lower), and a doubtful cell whose chroma confirms its colour reading is
read. A cell keeping pixels clipped in no channel is read from those (they hold the whole
chroma), and a reflection is taken to carry the light's own cast, the one the board's grey
shows. Where nothing but white is left, the rules complete the pieces. A phone's tone map may
pull a reflection below clipping, to any grey: it is still found, as a blob with less colour
than even the board's grey, and its cells stay doubtful.

Whatever lies on the board shows the grid's grooves and edges at every cell border; a hand or a
cup above it does not. Cells where no border shows, in a region reaching in from the board's
edge or one a mug's size standing on it (not a reflection), are under an occluder: they are
uncertain whatever their colour (a sleeve or a mug may have a piece's), and neither they nor
any other gridless cell teach the colour classes or the light field (a hand once became the
board's grey there). Cells wholly covered, and cells at its rim whose doubtful piece colour
continues no piece (a sleeve's, a mug's), are guessed empty until the rules show that a piece
seen beside them must continue beneath.

A phone's sepia or duotone filter leaves the pieces only their light: where no cell shows a colour
of its own, cells are doubted by their light instead (:mod:`vision.one_hue`), and the whole board
once the light shows pieces whose colours the photo does not.

For the live referee: :func:`locate_board` once, :func:`verify_pose` every frame (a few ms),
:func:`read_with_pose` when something changed (no localisation, no rules).
"""
from __future__ import annotations

import time
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING, Mapping, NamedTuple

import cv2
import numpy as np

from rules.blokus import CORNERS, EMPTY, SIZE, board, decompose, pieces

from .blokus_complete import complete
from .colour import CellColours, Palette, classify
from .completion import DOUBTFUL_EVIDENCE, Trials, weighed
from .grid import cell_borders, find_grid, quick_contrast
from .image_io import as_bgr
from .one_hue import light_only_doubts
from .pose import BoardPose, calibrated_pose, check_angle, make_pose, rectify
from .reading import UNCERTAIN_BELOW, BoardReading, uncertain_cells
from .reading import debug_images as _debug_images
from .sampling import (CLEAR_BORDERS, HIDDEN_BORDERS, PARTLY_HIDDEN, cell_samples, cells_in_photo, mug_cells,
                       under_occluder, with_neighbours)

if TYPE_CHECKING:  # calibration imports this module: no import at run time
    from calibration.colours import ColourProfile

# Nominal colours: only their hues seed the per-photo colour clusters.
PALETTE = Palette(EMPTY, {"B": (20, 80, 200), "Y": (240, 200, 20), "R": (200, 30, 40), "G": (20, 150, 70)})
DRAW_BGR = {".": (210, 210, 210), "B": (255, 140, 40), "Y": (0, 235, 255), "R": (70, 70, 255), "G": (90, 230, 90)}
PX_PER_CELL = 20  # ~140 pixels per cell middle: robust statistics, still ~20 ms per live frame
MARGIN = 0.5  # cells of rim kept around the grid in the top-down view (shows a grid that is off)
CELL_MM = 16.0  # the classic board's squares
MUG_CELLS = mug_cells(CELL_MM ** 2)  # the fewest cells a mug standing on the board hides
VERIFY_SHARE = 0.85  # a frame keeps the pose while its grid contrast is this share of the original
MAX_FIX_COST = float(np.log(20.0))  # a relabel the colour evidence finds 20x less likely is not tried
SINGLE_OPTIONS = 10  # cheapest single relabellings tried per conflict
PAIR_OPTIONS = 6  # pairs are drawn from this many cheapest relabellings
RULES_TRIALS = 150  # boards the rules prior may check against the rules re-examining a reading (some 0.1 s;
# the bench's seed 1 needs at most 121): a count, not a clock, so a photo reads the same however busy the machine
CONFIRM_PROB = 0.9  # a doubtful cell's colour favourite this clear may be confirmed by the rules
GLARE_RING = (0.04, 0.96)  # fallback for a cell whose middle is glare: out to the piece's bevel
BLOWN = 0.96  # all channels this bright (0-1): the sensor is clipped by glare
BLOWN_SHARE = 0.2  # a cell whose middle has lost this much of its colour is blown out
SHEEN = 1.5  # a dullest channel this many times the board grey's: added light (glare)
LIT_GREY_QUANTILE = 90  # the lit board grey: this quantile of its cells' dullest channel
GREY_NOISE_QUANTILE = 99  # the board grey pixels' chroma up to this quantile is noise and tint
WASHED = 0.25  # a pixel with this share of the board grey's saturation or less has lost its colour
FADED = 0.5  # a piece cell with this share of its colour's usual saturation or less has had white added
FADED_HALO = 0.7  # the same within two cells of a glare spot, where its halo thins the colour
GREY_WASHED_QUANTILE = 50  # the board's grey cells up to this quantile must keep their tint
LIT_QUANTILE = 10  # a washed pixel is at least as bright as this quantile of the grey cells
SPOT_SHARE = 0.5  # share of a cell's pixels washed out at a glare spot's core
GREY_TINT = 0.008  # the board grey's saturation below which glare's grey cannot be told from it
REFERENCE_CONF = 0.9  # cells read this surely give the photo's own white-free colour classes
GLARE_TOUCHED = 0.02  # share of a cell's pixels blown out: glare reaches the cell
CLIPPED_SHARE = 0.25  # share of a cell's pixels clipped in some channel: glare may have cut its chroma
DOUBTED = 0.3  # confidence of a glare-touched cell whose chroma names another label than its colour
LIGHT_STEPS = 9  # light levels tried across LIGHT_RANGE when matching a chroma
MIN_CHROMA_PIXELS = 5  # pixels with headroom needed to read a glare-touched cell's chroma
UNCLIPPED_PIXELS = 8  # pixels clipped in no channel enough to read a glare-touched cell's chroma from
LIGHT_RANGE = (0.4, 2.5)  # how much brighter or dimmer the light may be than at the class's cells
CHROMA_SPREAD = 0.2  # relative chroma mismatch at which a class becomes unlikely
WITNESS_UNCLIPPED = 0.6  # share of a doubtful cell's pixels with headroom for its chroma to confirm it
WITNESS_MATCH = 0.9  # share of the chroma's match its label must hold to confirm the reading
WITNESS_AGREES = 0.5  # share of the whole cell's chroma match a few unclipped pixels' label must hold
WITNESSED = 0.6  # confidence of a cell whose chroma confirms its colour reading
CONFIRMED = 0.6  # confidence of a cell the rules confirmed (above the "uncertain" line)
CONTESTED = 0.3  # confidence of a cell of a piece the rules reject, that no cheap relabelling explained
# conflicts that name the pieces in doubt (``first_not_in_corner`` names a whole colour)
CONTESTED_FLAGS = ("not_a_piece", "piece_already_used", "no_corner_contact")


class RulesOutcome(NamedTuple):
    """A reading after the rules prior: what changed, what was confirmed, what conflicts remain."""

    board: list[str]
    confidence: np.ndarray
    flags: list
    changed: list[tuple[int, int]]
    confirmed: list[tuple[int, int]]


def _gray(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def locate_board(frame: np.ndarray) -> BoardPose:
    """Full search for the board's grid; raises ReadError no_board / impossible_angle."""
    frame = as_bgr(frame)
    fit = find_grid(frame, SIZE)
    h, w = frame.shape[:2]
    pose = make_pose(fit.to_photo, (w, h), SIZE, fit.evidence, fit.k, fit.rms)
    check_angle(pose)
    return _with_contrast(frame, pose)


def _with_contrast(frame: np.ndarray, pose: BoardPose) -> BoardPose:
    return replace(pose, contrast=quick_contrast(_gray(frame), pose))


def verify_pose(frame: np.ndarray, pose: BoardPose) -> bool:
    """Is the board still where ``pose`` says? Cheap (samples borders, no rectification)."""
    pose = pose.for_frame(frame)
    reference = pose.contrast or 0.8
    return quick_contrast(_gray(frame), pose) >= max(0.6, VERIFY_SHARE * reference)


def read_with_pose(frame: np.ndarray, pose: BoardPose, profile: "ColourProfile | None" = None, *,
                   photo: bool = False) -> BoardReading:
    """Classify every cell at a known pose (no localisation, no rules prior).

    ``profile``: the table's colour profile (``calibration.colours``), used as the colour
    classes' prior; without it the classes start from the nominal palette. ``photo``: the
    frame is a phone's photo, which may carry a one-hue filter (:func:`_light_only`); a
    webcam's frame carries none, and the doubt would only hold live moves back.
    """
    start = time.perf_counter()
    frame = as_bgr(frame)
    pose = pose.for_frame(frame)
    rect = rectify(frame, pose, PX_PER_CELL, MARGIN)
    inner, ring = cell_samples(rect, (SIZE, SIZE), PX_PER_CELL, MARGIN, GLARE_RING)
    borders = cell_borders(rect, PX_PER_CELL, MARGIN, SIZE)
    prior = None if profile is None else profile.prior()
    colours = classify(inner, ring, PALETTE, prior=prior, shown=borders >= HIDDEN_BORDERS)
    window = np.concatenate([inner, ring], axis=2)
    lost = _chroma_lost(window, colours)
    blown = _blown_out(lost[..., :inner.shape[2]])
    hidden = under_occluder(borders, glare=blown, smallest=MUG_CELLS)
    occluded = _occluded(hidden, blown)
    colours = _glare_chroma(window, colours, occluded, lost)
    # blown-out cells and those touching them: where a piece's colour may be glare-thinned
    covered = _covered(occluded, hidden & ~with_neighbours(hidden & blown), borders, colours)
    seen = cells_in_photo(pose, SIZE) & ~hidden
    colours = _unseen(colours, covered)
    if photo:
        veiled = blown & (borders < CLEAR_BORDERS)  # a reflection veils the grooves; a bright piece keeps them
        colours = _light_only(colours, inner, seen, with_neighbours(veiled))
    return _reading(colours, seen, hidden, covered, pose, rect, start)


def _light_only(colours: CellColours, inner: np.ndarray, seen: np.ndarray, shone: np.ndarray) -> CellColours:
    """A photo whose pieces show only as light (a sepia or duotone filter): the cells it leaves in
    doubt (:func:`vision.one_hue.light_only_doubts`) carry no colour evidence and are uncertain, so
    the rules neither confirm them nor take them as read. ``inner``: the cells' middles; ``seen``:
    the cells the photo shows, no occluder over them; ``shone``: glare spots, blown-out cells whose
    grid the reflection veils, and their rims (under a one-hue filter a bright piece passes for
    blown out too, but its grooves show). Nothing changes where colour shows."""
    squares = np.indices((SIZE, SIZE)).reshape(2, -1).T.astype(float)
    doubted = light_only_doubts(inner.mean(axis=2).reshape(-1, 3), squares, seen.ravel(),
                                (colours.best() == 0).ravel(), shone.ravel())
    doubted = doubted.reshape(SIZE, SIZE)
    return _doubt(colours, doubted, doubted)


def _covered(occluded: np.ndarray, away: np.ndarray, borders: np.ndarray, colours: CellColours) -> np.ndarray:
    """The cells under an occluder whose colour is no evidence of what lies on the board.

    ``occluded``: the occluder's regions (:func:`_occluded`). Where not one border shows, the
    colour is the occluder's. Where some border shows, a piece's colour may be a fragment
    beside a fingertip. It counts when the cell is mostly seen (borders at least
    ``PARTLY_HIDDEN``) or read surely, and so does one that shares an edge with a cell of its
    colour that counts (a piece running on from under a fingertip; one cell deep only: a longer
    run beneath the rim is left to the rules to complete). A doubtful piece colour that
    continues nothing, at a cell whose borders are mostly hidden, is a sleeve's or a mug's far
    more often than a piece's.

    ``away``: every gridless cell away from a blown-out one. A mug's highlight or a shiny
    hand blows out a cell or two, and its whole region then passes for a glare spot; away
    from those cells, such a lent colour is still no evidence.
    """
    best = colours.best()
    counts = (colours.confidence >= UNCERTAIN_BELOW) | (borders >= PARTLY_HIDDEN)
    anchor = np.pad(np.where(counts & (best > 0), best, -1), 1, constant_values=-1)
    continues = np.zeros(best.shape, bool)
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        continues |= anchor[1 + dr:1 + dr + best.shape[0], 1 + dc:1 + dc + best.shape[1]] == best
    lent = (best > 0) & ~(counts | continues)
    return (occluded & (borders < HIDDEN_BORDERS)) | (away & lent)


def _unseen(colours: CellColours, covered: np.ndarray) -> CellColours:
    """Cells under a hand or a cup whose colour is the occluder's (:func:`_covered`) carry no
    colour evidence. Their best guess is empty (most of a board is), until the rules find a
    piece that must continue under it."""
    if not covered.any():
        return colours
    posterior = colours.posterior.copy()
    posterior[covered] = 1.0 / posterior.shape[-1]
    return replace(colours, posterior=posterior)


def _chroma_lost(window: np.ndarray, colours: CellColours) -> np.ndarray:
    """(cells x cells x pixels) pixels whose chroma glare has taken, whatever their level.

    Glare clips a pixel in every channel; a phone's tone mapping then pulls the clipped spot
    down to any grey, often no brighter than the board round it, so clipping alone misses it.
    What survives the tone map is that the spot has *no* colour at all: its pixels are as
    neutral as the light itself, far less saturated than even the board's grey (which takes
    a tint from the light, the table and the plastic round it). A pixel whose saturation is
    a small share of the board grey's, and no darker than the board's dimmer greys, is taken
    as glare-washed; so is one clipped in every channel. Under a perfectly neutral light the
    board's grey is as colourless as glare and only clipping counts.

    Clipping is judged against the photo's own light, not the encoding's white: a photo taken
    far too dark (or darkened after the sensor clipped) holds the spot as a dim grey plateau,
    and in a few dark levels a pixel's saturation is one level's rounding, so the saturation
    test cannot see it either. What stays true at any exposure is that the board's grey is the
    palest diffuse surface on it: no piece lit by the same light has a dullest channel well
    above the lit grey's, only added light does; and where that light has taken the chroma,
    the pixel is as neutral as the grey itself (:func:`_sheen`).
    """
    dullest, brightest = _channel_extremes(window)
    blown = dullest >= BLOWN
    saturation = (brightest - dullest) / np.maximum(brightest, 0.02)
    grey = (colours.best() == 0) & (colours.confidence >= REFERENCE_CONF) & ~blown.any(-1)
    if grey.sum() < 3:
        return blown
    blown |= _sheen(dullest, brightest, grey)
    # the tint of the grey's mean colour (a dark board's noise averages out, the light's tint
    # does not), where the board is lit: a shadow's own tint says nothing of the light's
    mean_grey = window[grey].mean(1)
    level = mean_grey.max(-1)
    tint = np.ptp(mean_grey, axis=-1) / np.maximum(level, 0.02)
    grey_saturation = float(np.median(tint[level >= np.median(level)]))
    if grey_saturation < GREY_TINT:
        return blown
    # a lamp's reflection never darkens: a colourless pixel below the board's dimmer greys is
    # a shadow's or a dark occluder's
    lit = brightest >= np.percentile(np.median(brightest[grey], axis=-1), LIT_QUANTILE)
    washed = (saturation < WASHED * grey_saturation) & lit
    # A glare spot covers a few of the board's grey cells, not most: where the grey itself is
    # washed out in many places (a coarse JPEG rounds a faint tint away), the test says nothing.
    if np.percentile(washed[grey].mean(-1), GREY_WASHED_QUANTILE) > BLOWN_SHARE:
        return blown
    return blown | washed


def _sheen(dullest: np.ndarray, brightest: np.ndarray, grey: np.ndarray) -> np.ndarray:
    """(cells x cells x pixels) pixels a dim glare spot has washed out, judged by the board's
    own light (``grey``: its confidently read grey cells): a dullest channel SHEEN times the
    lit grey's or more (or the sensor's clipping, whichever is lower), and no more chroma
    than the grey's noise and tint at that level. In a normally exposed photo the grey is so
    bright that only clipping counts; a piece's highlight keeps its colour and is not lost;
    a shadow's edge is judged against the lit grey, not the shaded."""
    lit = float(np.percentile(np.median(dullest[grey], axis=-1), LIT_GREY_QUANTILE))
    noise = float(np.percentile(brightest[grey] - dullest[grey], GREY_NOISE_QUANTILE))
    level = min(BLOWN, SHEEN * lit)
    return (dullest >= level) & (brightest - dullest <= noise * dullest / max(lit, 0.02))


def _glare_chroma(window: np.ndarray, colours: CellColours, occluded: np.ndarray, lost: np.ndarray) -> CellColours:
    """Re-read doubtful and glare-touched cells from what glare cannot change: their chroma.

    A specular reflection adds the light's own colour, the same amount to every channel, so
    a pixel minus its dullest channel (its white-free colour) keeps the plastic's colour
    however white the pixel looks; the board's grey keeps almost none. Where the glare is so
    strong that a channel clips, the white-free colour is cut off at the pixel's *headroom*
    (one minus its dullest channel) in that channel, and nowhere else: so a yellow piece whose
    red and green are clipped still shows as much yellow as the headroom lets it, more than
    the board's grey could have (:func:`_chroma_match`). Only pixels clipped in every channel
    say nothing at all. A cell is compared with the photo's own classes (the median
    white-free colour of its confidently read cells), allowing for brighter or dimmer light
    and for the cast a tinted reflection adds. A cell with enough pixels clipped in no
    channel (a spot's soft rim, a bevel) is read from those alone.

    - A cell touched by glare (blown-out pixels, a quarter of its pixels clipped in some
      channel, or no usable colour at all) that the colour reading doubts, or whose chroma
      clearly names another label, takes the chroma's label as its best label (weighed with
      the colour reading's when the chroma cannot tell the labels apart) and is kept
      doubtful. One whose chroma merely leans to another label keeps its label, doubted: the
      colour reading saw clipped pixels.
    - A doubtful cell with most of its pixels left some headroom is a second witness: when
      its chroma clearly names the label the colour reading chose, it is read (a piece there
      could not have lost its chroma without clipping everywhere). A chroma read from a few
      pixels clipped in no channel does not witness alone (those darkest pixels are often a
      groove or a neighbour's bevel): the match over all its usable pixels must favour the
      same label, unless the unclipped pixels are most of the cell.
    - A phone's tone map pulls a clipped spot below the clipping level (``lost`` also holds
      the pixels :func:`_chroma_lost` finds colourless): the cells of such a spot and its rim
      (:func:`_glare_spot`), and piece cells whose colour white has thinned
      (:func:`_faded`), are glare-touched, stay doubtful, and are never their own witness.
    """
    best = colours.best()
    dullest, brightest = _channel_extremes(window)
    usable = ~lost  # some headroom and colour left: the chroma is cut off, not gone
    glared = ((dullest >= BLOWN).mean(-1) > GLARE_TOUCHED) | ((brightest >= BLOWN).mean(-1) > CLIPPED_SHARE)
    glared |= np.ptp(colours.posterior, axis=-1) < 1e-6  # nothing usable: all glare
    # a cell largely washed out was read from the glare's grey, not from the plastic or the board
    washed = _glare_spot(lost, occluded)
    halo = with_neighbours(washed)
    faded = _faded(dullest, brightest, usable, colours, halo) & ~occluded
    glared |= washed | faded
    colours = _doubt(colours, washed | faded, usable.sum(-1) < MIN_CHROMA_PIXELS)
    doubtful = colours.confidence < UNCERTAIN_BELOW
    todo = (doubtful | glared) & ~occluded & (usable.sum(-1) >= MIN_CHROMA_PIXELS)
    if not todo.any():
        return colours
    clear = colours.confidence >= REFERENCE_CONF
    # per-cell medians over the pixels, channel by channel (channel-major: a fast sort)
    typical = np.median((window[clear] - dullest[clear][..., None]).transpose(0, 2, 1), axis=-1)
    refs = {j: np.median(typical[best[clear] == j], axis=0) for j in range(len(colours.labels))
            if (best[clear] == j).sum() >= 3}
    if len(refs) < 2:
        return colours
    levels = {j: float(np.median(np.median(dullest[clear][best[clear] == j], axis=-1))) for j in refs}
    cells = np.argwhere(todo)
    # a cell with enough pixels clipped in no channel (the glare spot's soft rim, the bevel) is
    # read from those alone: their white-free colour is the plastic's whole chroma, while a
    # pixel clipped in two channels shows blue, green and a cool-lit grey as the same cyan
    unclipped = usable & (brightest < BLOWN)
    rich = unclipped.sum(-1) >= UNCLIPPED_PIXELS
    pixels = np.where(rich[..., None], unclipped, usable)
    white_free, headroom = window[todo] - dullest[todo][..., None], 1.0 - dullest[todo]
    match = _chroma_match(white_free, pixels[todo], headroom, refs, len(colours.labels), levels)
    # The few darkest pixels of a glare cell may be a groove or a neighbour's bevel: read
    # alone they may relabel the cell, but confirm it only when the match over every usable
    # pixel favours the same label (clipping may leave it unable to tell two colours apart,
    # not to prefer the wrong one), or when they are most of the cell.
    whole = match.copy()
    few = rich[todo] & (unclipped[todo].mean(-1) < WITNESS_UNCLIPPED)
    if few.any():
        whole[few] = _chroma_match(white_free[few], usable[todo][few], headroom[few], refs, len(colours.labels),
                                   levels)
    posterior, confidence = colours.posterior.copy(), colours.confidence.copy()
    for (r, c), m, w in zip(cells, match, whole):
        if m.max() < 1e-3:
            continue
        named = int(np.argmax(m))
        clearly = m.max() >= WITNESS_MATCH * m.sum()
        witness = clearly and int(np.argmax(w)) == named and w.max() > WITNESS_AGREES * w.sum()
        if glared[r, c] and (doubtful[r, c] or (clearly and named != best[r, c])):
            # a chroma that cannot tell the labels apart leaves the colour reading its say
            weigh = 1.0 if clearly else 0.5 * posterior[r, c] + 0.5 / len(m)
            posterior[r, c] = m * weigh / (m * weigh).sum()
            confidence[r, c] = min(confidence[r, c], DOUBTED)
        elif glared[r, c] and named != best[r, c]:  # read from clipped pixels; the chroma leans elsewhere
            confidence[r, c] = min(confidence[r, c], DOUBTED)
        if doubtful[r, c] and not faded[r, c] and usable[r, c].mean() >= WITNESS_UNCLIPPED and named == best[r, c] \
                and witness:
            confidence[r, c] = max(confidence[r, c], WITNESSED)
    return replace(colours, posterior=posterior, confidence=confidence)


def _glare_spot(lost: np.ndarray, occluded: np.ndarray) -> np.ndarray:
    """(cells x cells) cells a glare spot washed out, and the cells at its rim it reaches.

    A reflection of a window or a lamp is a blob that crosses cell borders and grooves and
    washes out most of the cells it covers: a single washed-out cell is more likely a pale
    piece's highlight or the board's rim, and scattered colourless pixels are a dark board's
    noise rounded to whole levels, so only regions of two or more washed cells count, and
    only around a core cell that is mostly washed out. Their rim cells with any washed pixel
    were read from a colour the glare's halo has already thinned."""
    share = lost.mean(-1)
    out = (share > BLOWN_SHARE) & ~occluded
    count, regions = cv2.connectedComponents(out.astype(np.uint8), connectivity=8)
    sizes = np.bincount(regions.ravel(), minlength=count)
    cores = np.unique(regions[out & (share > SPOT_SHARE)])
    spot = out & (sizes[regions] >= 2) & np.isin(regions, cores)
    rim = with_neighbours(spot) & (share > 0) & ~occluded
    return spot | rim


def _faded(dullest: np.ndarray, brightest: np.ndarray, usable: np.ndarray, colours: CellColours,
           halo: np.ndarray) -> np.ndarray:
    """(cells x cells) cells read as a piece whose saturation is far below that piece colour's
    own in this photo: white light was added to them.

    Shade and a dimmer lamp scale every channel alike and leave the saturation be; only an
    added white lowers it. Without clipping (a phone's tone map pulls a reflection below it)
    the white-free colour is then no longer the plastic's: the encoding's curve bends it (a
    blue under a pale reflection turns green-cyan), so such a cell's own chroma cannot vouch
    for its label. Within two cells of a glare spot (``halo``) a smaller loss is taken for the
    spot's halo: a reflection fades out smoothly, well beyond the part it washes out."""
    best = colours.best()
    count = usable.sum(-1)
    seen = count >= MIN_CHROMA_PIXELS
    # the mean, not the median: this runs on every live frame, and a halo thins a whole cell
    chroma = np.where(usable, brightest - dullest, 0.0) / np.maximum(brightest, 0.02)
    saturation = chroma.sum(-1) / np.maximum(count, 1)
    clear = colours.confidence >= REFERENCE_CONF
    faded = np.zeros(best.shape, bool)
    for j in range(1, len(colours.labels)):
        typical = saturation[clear & seen & (best == j)]
        if len(typical) >= 3:
            faded |= seen & (best == j) & (saturation < np.where(halo, FADED_HALO, FADED) * np.median(typical))
    return faded


def _doubt(colours: CellColours, washed: np.ndarray, blind: np.ndarray) -> CellColours:
    """Washed-out cells keep at most a doubtful confidence; those without any pixel of colour
    left (``blind``) lose their colour reading altogether (the rules complete the pieces)."""
    if not washed.any():
        return colours
    posterior, confidence = colours.posterior.copy(), colours.confidence.copy()
    confidence[washed] = np.minimum(confidence[washed], DOUBTED)
    posterior[washed & blind] = 1.0 / posterior.shape[-1]
    return replace(colours, posterior=posterior, confidence=confidence)


def _channel_extremes(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's dullest and brightest channel (``min``/``max`` over a 3-long last axis is
    several times slower than two element-wise steps)."""
    b, g, r = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return np.minimum(np.minimum(b, g), r), np.maximum(np.maximum(b, g), r)


def _chroma_match(white_free: np.ndarray, usable: np.ndarray, headroom: np.ndarray,
                  refs: Mapping[int, np.ndarray], k: int, levels: Mapping[int, float] | None = None) -> np.ndarray:
    """(cells x k) how well each cell's white-free pixels fit each class's, under a brighter
    or dimmer light, once clipping has cut every pixel's chroma off at its headroom.

    ``white_free``, ``headroom``: (cells x pixels x 3) and (cells x pixels); ``usable``: the
    pixels with any headroom. A class predicts ``min(scale * ref, headroom)`` per pixel; the
    cell's median observed and predicted colours are compared, relative to their size.

    ``levels``: each class's typical dullest channel, given with the board's grey (class 0)
    among ``refs``. Glare is the light's own colour, not pure white: under a tinted lamp or a
    camera's white-balance error the board's grey shows a faint cast, and a reflection adds
    that cast in proportion to the light it adds (a cool-lit glare spot on the grey turns a
    dim blue, a warm one a dim yellow). The added light is what the cell's dullest channel
    rose above the class's own, and the prediction grows by the grey's cast per unit of it.
    """
    scales = np.geomspace(*LIGHT_RANGE, LIGHT_STEPS)
    q = _masked_median(white_free, usable)  # cells x 3
    room = np.nan_to_num(np.nanmedian(np.where(usable, headroom, np.nan), axis=1))  # cells
    cast = None
    if levels is not None and 0 in refs:
        cast = refs[0] / max(levels[0], 0.02)  # the grey's white-free colour per unit of light
    match = np.zeros((len(q), k))
    for j, ref in refs.items():
        # min(s * ref, headroom) per channel is monotone in the headroom: its median over the
        # pixels is min(s * ref, the median headroom)
        expected = scales[:, None, None] * ref  # scales x 1 x 3
        if cast is not None:
            added = np.maximum((1.0 - room)[None, :] - scales[:, None] * levels[j], 0.0)  # scales x cells
            expected = expected + added[..., None] * cast
        pm = np.minimum(expected, room[None, :, None])
        miss = np.linalg.norm(q[None] - pm, axis=-1) / np.maximum(
            np.maximum(np.linalg.norm(q, axis=-1)[None], np.linalg.norm(pm, axis=-1)), 0.02)
        match[:, j] = np.exp(-0.5 * (miss.min(0) / CHROMA_SPREAD) ** 2)
    return match


def _masked_median(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(cells x 3) per-cell median of the masked pixels (cells x pixels x 3)."""
    v = np.where(mask[..., None], values, np.nan)
    return np.nan_to_num(np.nanmedian(v, axis=1))


def _blown_out(lost: np.ndarray) -> np.ndarray:
    """(cells x cells) cells whose middle has largely lost its colour to glare (``lost``: the
    middle's pixels of :func:`_chroma_lost`): glare, not a hand.

    Both erase the grid, but the few coloured pixels at a glare spot's rim are the piece's
    own, while the colour under a hand or a mug is the occluder's.
    """
    return lost.mean(-1) > BLOWN_SHARE


def _occluded(hidden: np.ndarray, blown: np.ndarray) -> np.ndarray:
    """The occluders' regions (``hidden``: :func:`vision.sampling.under_occluder`) that are not
    glare spots: a region holding blown-out cells may be a lamp's reflection, its rim included.
    (A shiny hand or a white mug blows out a cell or two as well; their cells stay uncertain
    as ``hidden``, :func:`_covered` sets their lent colour aside.)"""
    _, regions = cv2.connectedComponents(hidden.astype(np.uint8), connectivity=8)
    glare = np.unique(regions[hidden & blown])
    return hidden & ~np.isin(regions, glare)


def _reading(colours: CellColours, seen: np.ndarray, hidden: np.ndarray, occluded: np.ndarray, pose: BoardPose,
             rect: np.ndarray, start: float) -> BoardReading:
    # A board cut off by the photo's edge: the cells beyond it were never seen (``seen``: the
    # others, no occluder over them); under a hand or a cup the colour may be the occluder's.
    # Their best label stays a guess. (A gridless region holding glare keeps this too: a hand
    # can shine as white as a lamp's reflection.)
    conf = np.where(seen, colours.confidence, 0.0)
    return BoardReading("blokus", colours.letters(), conf, uncertain_cells(conf), pose, rect,
                        (time.perf_counter() - start) * 1000.0, colours.labels, colours.posterior,
                        PX_PER_CELL, MARGIN, occluded=occluded, gridless=hidden)


def read_blokus(image: np.ndarray, calibration: BoardPose | Mapping | None = None,
                profile: "ColourProfile | None" = None) -> BoardReading:
    """Photo (upright BGR) -> board reading, with the rules as a prior.

    ``calibration`` may hold a board pose from ``tableref calibrate board`` (a fixed camera):
    a BoardPose or its JSON, alone or under a "pose" key (a damaged one or another board's is
    refused: :func:`vision.pose.calibrated_pose`). It is used when the photo still shows the
    grid there, otherwise the board is searched for as usual. ``profile``: the
    table's colour profile (``tableref calibrate colours``), a prior for the colour classes.
    """
    start = time.perf_counter()
    image = as_bgr(image)
    pose = calibrated_pose(calibration, image, (SIZE, SIZE), "Blokus")
    if pose is None or not verify_pose(image, pose):
        pose = locate_board(image)
    reading = read_with_pose(image, pose, profile, photo=True)
    rules = apply_rules(reading.board, reading.labels, reading.probabilities, reading.confidence,
                        occluded=reading.occluded, gridless=reading.gridless)
    reading.board, reading.confidence, reading.flags = rules.board, rules.confidence, rules.flags
    reading.changed_by_rules, reading.confirmed_by_rules = rules.changed, rules.confirmed
    reading.uncertain = uncertain_cells(rules.confidence)
    reading.timing_ms = (time.perf_counter() - start) * 1000.0
    return reading


def debug_images(reading: BoardReading) -> dict[str, np.ndarray]:
    """"rectified" and "overlay" PNG-ready images for ``tableref read --debug-dir``."""
    return _debug_images(reading, DRAW_BGR)


# --- the rules as a prior --------------------------------------------------------------------

def _badness(flags) -> int:
    """How much of the board the conflicts cover (distinct flagged cells)."""
    return len({tuple(c) for f in flags for c in f.cells})


def apply_rules(board: list[str], labels: tuple[str, ...], prob: np.ndarray, conf: np.ndarray,
                trials: int = RULES_TRIALS, occluded: np.ndarray | None = None,
                gridless: np.ndarray | None = None) -> RulesOutcome:
    """Re-examine a reading against the rules, at its least confident cells.

    1. *Fix*: conflict by conflict, try other labels for the cells of the conflict and its
       neighbours, cheapest first (by how much less likely the colour evidence finds them),
       one cell, then two, or a loose piece read only from doubtful cells as a whole; keep a
       change only if it shrinks the conflicts. Changed cells keep a low confidence: the
       rules chose their label, the photo did not show it.
    2. *Complete*: each patch of doubtful cells is relabelled as a whole with its likeliest
       legal labelling (:mod:`vision.blokus_complete`): a piece cut short by three hidden
       cells, two pieces meeting under a glare spot, a piece hidden whole that the turn
       order's piece counts ask for, or a colour's first piece hidden at a corner (B3). Its
       cells stay doubtful.
    3. *Confirm*: a doubtful cell whose colour clearly points to one label (a piece dulled by
       glare, say) is confirmed when every other label would break the rules.
    4. *Doubt*: the cells of a piece still in conflict are reported uncertain, however clear
       their colour (:func:`_contested`).
    Bounded by ``trials``, the boards the fixes and confirmations may check against the rules (a
    photo drowned in glare has more conflicts than are worth searching).
    A doubtful cell's colour keeps some weight in the costs (:func:`_evidence_floor`), except
    under an occluder (``occluded``), whose colour is a sleeve's or a mug's; ``gridless``: the
    gridless regions under a hand or a cup, reaching in from the board's edge or standing on it
    (``BoardReading.gridless``: :func:`vision.sampling.under_occluder`; a smaller gridless patch
    inside the board is a reflection's, whose chroma is the plastic's), whose clear piece colour
    may be one too; None when there are none.
    """
    budget = Trials(trials)
    rows = list(board)
    conf = conf.copy()
    flags = decompose(rows).flags
    changed: list[tuple[int, int]] = []
    smooth = weighed(prob, np.maximum(conf, _evidence_floor(prob, labels, occluded, gridless)))
    tried: set[tuple] = set()
    while flags and budget.left > 0:
        todo = [f for f in flags if (f.code, tuple(f.cells)) not in tried]
        if not todo:
            break
        flag = todo[0]
        tried.add((flag.code, tuple(flag.cells)))
        fix = _fix_one(rows, flags, flag, labels, smooth, conf < UNCERTAIN_BELOW, budget)
        if fix is None:
            continue
        rows, flags, cells = fix
        for r, c in cells:
            conf[r, c] = min(conf[r, c], float(smooth[r, c, labels.index(rows[r][c])]))
        changed.extend(cell for cell in cells if cell not in changed)
    rows, flags, filled = _complete(rows, flags, labels, smooth, conf)
    for r, c in filled:
        conf[r, c] = min(conf[r, c], float(smooth[r, c, labels.index(rows[r][c])]))
    changed.extend(cell for cell in filled if cell not in changed)
    # Confirmed first: a cell the rules confirm is no doubt that could excuse a loose piece
    # beside it (_chained_by_doubt), or the conflict would be reported as read.
    confirmed = _confirm(rows, flags, labels, prob, conf, changed, budget)
    doubtful = conf < UNCERTAIN_BELOW
    doubtful[tuple(np.array(confirmed, int).reshape(-1, 2).T)] = False
    contested = _contested(rows, flags, doubtful)
    confirmed = [cell for cell in confirmed if cell not in contested]
    for r, c in confirmed:
        conf[r, c] = max(conf[r, c], CONFIRMED)
    for r, c in contested:
        conf[r, c] = min(conf[r, c], CONTESTED)
    return RulesOutcome(rows, conf, list(flags), changed, confirmed)


def _evidence_floor(prob: np.ndarray, labels: tuple[str, ...], occluded: np.ndarray | None,
                    gridless: np.ndarray | None) -> np.ndarray:
    """(rows x cols) the least weight the rules give a cell's colour, however doubtful its reading.

    Glare lowers a cell's confidence, not the direction its few usable pixels point in (a cell
    without any has a flat ``prob``), so a doubtful colour keeps half its weight. A *piece*
    colour read clearly (``CONFIRM_PROB``) where the grid shows keeps all of it: glare adds
    white, which never makes a plastic's chroma, and the things that lend one (a sleeve, a
    mug) hide the grid where they reach in over the rim or stand (``gridless``; None: nowhere, so every
    clearly read piece colour weighs in full). Weighed at half, such a cell cost the fixes only a
    sixth to relabel, and they took it whenever that cleared a conflict that cells hidden
    beside it had caused. Not an empty favourite: whatever has no colour reads as the
    board's grey (a white mug, a blinded cell). Under an occluder (``occluded``) the colour
    is the occluder's and weighs nothing.
    """
    floor = np.full(prob.shape[:2], DOUBTFUL_EVIDENCE)
    clear = (prob.max(-1) >= CONFIRM_PROB) & (prob.argmax(-1) != labels.index(EMPTY))
    floor[clear if gridless is None else clear & ~gridless] = 1.0
    if occluded is not None:
        floor[occluded] = 0.0
    return floor


def _contested(rows: list[str], flags, doubtful: np.ndarray) -> set[tuple[int, int]]:
    """Cells of the pieces the conflicts left after the fixes name: no piece of the set, a
    piece repeated (both copies: the flag names one, the misread may be the other), pieces
    chained to nothing that no doubtful cell could chain (:func:`_chained_by_doubt`).

    A conflict the cheap relabellings could not explain is a misread the colour evidence is
    sure of (empty cells along a shadow's edge read as a dark red, a red mug over a corner
    cell) or a real foul; the photo cannot tell which, so the cells stay flagged and are
    reported uncertain for the user to check, never as read. A missing start piece names a
    whole colour, not where the misread lies, and is left to its flag.
    """
    contested: set[tuple[int, int]] = set()
    for flag in flags:
        if flag.code in CONTESTED_FLAGS:
            cells = {(int(r), int(c)) for r, c in flag.cells}
            if flag.code == "piece_already_used":
                cells |= _twins(rows, cells)
            elif flag.code == "no_corner_contact":
                cells -= _chained_by_doubt(cells, doubtful)
            contested |= cells
    return contested


def _chained_by_doubt(loose: set[tuple[int, int]], doubtful: np.ndarray) -> set[tuple[int, int]]:
    """The loose pieces (one colour's, chained to nothing) whose corner-to-corner group touches
    a doubtful cell. A hand or a glare spot over a link of the chain leaves the pieces beyond it
    loose yet read right; what lies at the link is reported uncertain already."""
    mask = np.zeros(doubtful.shape, np.uint8)
    for cell in loose:
        mask[cell] = 1
    _, groups = cv2.connectedComponents(mask, connectivity=8)  # pieces of one colour meet at corners
    near = with_neighbours(doubtful)
    linked = set(np.unique(groups[near & (mask > 0)]).tolist())
    return {cell for cell in loose if groups[cell] in linked}


def _complete(rows: list[str], flags, labels: tuple[str, ...], smooth: np.ndarray, conf: np.ndarray):
    """Each patch of doubtful cells relabelled as a whole with its likeliest legal labelling
    (:mod:`vision.blokus_complete`), where the board's conflicts do not grow."""
    doubtful = conf < UNCERTAIN_BELOW
    if not doubtful.any():
        return rows, flags, []
    conflicted = np.zeros(doubtful.shape, bool)
    for flag in flags:
        # a colour whose first piece covers no corner (B3) has it hidden at one: a corner
        # read as an occluder's colour may hold it
        at = (*flag.cells, *CORNERS) if flag.code == "first_not_in_corner" else flag.cells
        for r, c in at:
            conflicted[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2] = True
    trial, filled = complete(rows, labels, smooth, doubtful, conflicted,
                             lambda board: _badness(decompose(board).flags))
    return (trial, decompose(trial).flags, filled) if filled else (rows, flags, [])


def _confirm(rows: list[str], flags, labels: tuple[str, ...], prob: np.ndarray, conf: np.ndarray,
             changed: list[tuple[int, int]], budget: Trials) -> list[tuple[int, int]]:
    """Doubtful cells whose clear colour favourite is the only label the rules allow.

    Only cells that hold the photo's favourite and that the fixes and the completion left
    alone (``changed``): a cell the rules relabelled against its colour must stay doubtful,
    or the reading would report the rules' guess as seen. And only cells whose neighbours
    (two cells around) were all read with confidence: a deduction from guessed neighbours
    (under the same hand, cup or glare) proves nothing.
    """
    base = _badness(flags)
    doubt = conf < UNCERTAIN_BELOW
    padded = np.pad(doubt, 2)
    near = sum(padded[2 + dr:2 + dr + doubt.shape[0], 2 + dc:2 + dc + doubt.shape[1]]
               for dr in range(-2, 3) for dc in range(-2, 3)) - doubt  # doubtful neighbours
    relabelled = set(changed)
    doubtful = [(float(prob[r, c].max()), (r, c)) for r, c in np.argwhere(doubt & (near == 0))
                if prob[r, c].max() >= CONFIRM_PROB and (r, c) not in relabelled
                and labels[int(prob[r, c].argmax())] == rows[r][c]]
    confirmed = []
    for _, (r, c) in sorted(doubtful, reverse=True):
        if budget.left <= 0:
            break
        others = [lab for lab in labels if lab != rows[r][c]]
        if all(budget.take() and _badness(decompose(_relabel(rows, [((r, c), lab)])).flags) > base
               for lab in others):
            confirmed.append((int(r), int(c)))
    return confirmed


def _relabel(rows: list[str], changes) -> list[str]:
    grid = [list(r) for r in rows]
    for (r, c), label in changes:
        grid[r][c] = label
    return ["".join(r) for r in grid]


def _options(rows: list[str], flag, labels: tuple[str, ...], smooth: np.ndarray) -> list[tuple[float, tuple, str]]:
    """(cost, cell, label) relabellings in and around one conflict, cheapest first."""
    n = len(rows)
    region = {tuple(c) for c in flag.cells}
    colours = {rows[r][c] for r, c in region}
    if flag.code == "piece_already_used":  # the flag names one copy; the misread may be the other
        region |= _twins(rows, region)
    reach = 1 if flag.code in ("not_a_piece", "piece_already_used") else 2  # chains break diagonally
    around = {(r + dr, c + dc) for r, c in region for dr in range(-reach, reach + 1)
              for dc in range(-reach, reach + 1) if 0 <= r + dr < n and 0 <= c + dc < n}
    options = []
    for r, c in around:
        choices = labels if (r, c) in region else [lab for lab in labels if lab in colours]
        for label in choices:
            cost = _cost(rows, (r, c), label, labels, smooth)
            if label != rows[r][c] and cost <= MAX_FIX_COST:
                options.append((cost, (r, c), label))
    # equally cheap (no evidence either way, e.g. under a hand): nearest the conflict first
    near = {cell: min(max(abs(cell[0] - r), abs(cell[1] - c)) for r, c in region) for _, cell, _ in options}
    return sorted(options, key=lambda o: (o[0], near[o[1]], o[1], o[2]))


def _cost(rows: list[str], cell: tuple[int, int], label: str, labels: tuple[str, ...], smooth: np.ndarray) -> float:
    """How much less likely the colour evidence finds ``label`` at ``cell`` than its reading (log)."""
    r, c = cell
    now = smooth[r, c, labels.index(rows[r][c])]
    return float(np.log(now) - np.log(max(float(smooth[r, c, labels.index(label)]), 1e-300)))


def _doubtful_parts(rows: list[str], flag, doubtful: np.ndarray) -> list[list[tuple[int, int]]]:
    """The one-colour regions of a conflict of loose pieces read only from doubtful cells.

    A sleeve or a mug at the occluder's rim, read as a few loose cells of a piece colour, is
    one wrong piece: erasing it may take more relabellings than the one- and two-cell fixes
    try, the cheapest of which are often the blank cells under the hand beside it."""
    cells = {tuple(c) for c in flag.cells}
    # Only pieces chained to nothing: a piece that repeats another or is no piece may be a
    # real one whose rest lies hidden. And only when every loose cell is doubtful: pieces read
    # surely beyond a hidden link of the chain are unchained, not wrong.
    if flag.code != "no_corner_contact" or not all(doubtful[cell] for cell in cells):
        return []
    squares = board()  # the rules' own edge-connected parts: the regions decompose() names
    return [sorted(squares.cells_of(part)) for colour in sorted({rows[r][c] for r, c in cells})
            for part in squares.components(squares.mask(cell for cell in cells if rows[cell[0]][cell[1]] == colour))]


def _twins(rows: list[str], shape: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Cells of the other regions of ``shape``'s colour that form the same piece."""
    r0, c0 = next(iter(shape))
    mask = np.array([[ch == rows[r0][c0] for ch in row] for row in rows], np.uint8)
    _, regions = cv2.connectedComponents(mask, connectivity=4)
    piece = pieces().identify(shape)
    twins: set[tuple[int, int]] = set()
    for k in set(np.unique(regions)) - {0, regions[r0, c0]}:
        cells = {(int(r), int(c)) for r, c in np.argwhere(regions == k)}
        if len(cells) == len(shape) and pieces().identify(cells) == piece:
            twins |= cells
    return twins


def _fix_one(rows: list[str], flags, flag, labels: tuple[str, ...], smooth: np.ndarray, doubtful: np.ndarray,
             budget: Trials):
    """The cheapest one- or two-cell relabelling near ``flag`` that shrinks the conflicts, or
    the erasure of a flagged piece read only from doubtful cells (:func:`_doubtful_parts`).

    A pair is tried even when a single cell would do: two glare-blind cells completing a
    piece cost less than erasing a piece whose colour was seen."""
    options = _options(rows, flag, labels, smooth)
    base = _badness(flags)
    best = None
    for cells in _doubtful_parts(rows, flag, doubtful):
        if not budget.take():
            break
        cost = sum(_cost(rows, cell, EMPTY, labels, smooth) for cell in cells)
        trial = _relabel(rows, [(cell, EMPTY) for cell in cells])
        new_flags = decompose(trial).flags
        bad = _badness(new_flags)
        if bad < base and (best is None or (bad, cost) < (best[1], best[0])):
            best = (cost, bad, trial, new_flags, cells)
    for size, pool in ((1, options[:SINGLE_OPTIONS]), (2, options[:PAIR_OPTIONS])):
        for combo in combinations(pool, size):
            cost = sum(o[0] for o in combo)
            if len({cell for _, cell, _ in combo}) < size or (best is not None and cost >= best[0]):
                continue
            if not budget.take():
                break
            trial = _relabel(rows, [(cell, label) for _, cell, label in combo])
            new_flags = decompose(trial).flags
            bad = _badness(new_flags)
            if bad < base and (best is None or (bad, cost) < (best[1], best[0])):
                best = (cost, bad, trial, new_flags, [cell for _, cell, _ in combo])
    return None if best is None else (best[2], best[3], best[4])
