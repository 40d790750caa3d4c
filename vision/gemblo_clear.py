"""The evidence a Gemblo cell holds a colour, a clear piece or nothing: the colour classifier's
reading, and for the cells it reads empty, the clear-piece score, this photo's own clusters of
that score and each cell's likeness to the photo's surely clear and surely empty cells; and where
the light hides that evidence (clipped white, a board too dim, a reflection).

The colour classifier (`vision.colour`, shared with Blokus) wants cells on a 2-D grid whose
neighbours are neighbours on the board (its light field is smoothed over that grid), so the 463
hexes are laid out in offset columns (29 x 22); the slots outside the hexagon repeat their
nearest real cell.

Clear pieces are nearly colourless on a light board: the colour classifier calls them
empty. What gives them away is texture, not mean colour: a clear piece reflects the lamp
(its top glints, its bevel shines where an empty cell's recess is shaded, the board's hue
fades towards the lamp's white). So among the cells read as empty, a score over those
measures (each in spreads of this photo's empty cells, so light and board colour cancel)
says clear or empty, and near the cut the cell is uncertain. The weights were fitted
offline on generated photos (``CLEAR_WEIGHTS``); a cell unlike the photo's empty cells in many
measures at once lies beyond what they were fitted on, and is never surely empty. Nor is a cell
the colour classifier reads empty yet finds unlike the bare board and like no colour, when its
hue has faded far off the bare cells' (as under clear plastic): the score's 'empty' says nothing
there, the cell is weighed with the clear pieces as clear or empty, and it stays in doubt.

The clear score's scale is fitted over many photos, but in one photo the clear and empty cells
form two tight clusters whose gap moves with the light, the blur and the lens: the photo's own
clusters (:mod:`vision.gemblo_clusters`) decide many cells the fitted scale alone leaves in doubt.

Besides the fitted score, each cell is compared, pixel by pixel, with this photo's own surely clear
and surely empty cells (a matched filter: where its lamp's glint falls on a piece, where the bevel
shines, which way the hue fades). That likeness leans the best guesses of doubtful cells, and puts
in doubt a cell the score made only just sure against it; it makes no cell sure. A photo sure of
too few clear cells takes their look from its likeliest best guesses, to lean guesses only. A cell
unlike the photo's empty cells in many measures at once (a clear piece over an embossed mark) lies
beyond what the score was fitted on: where its likeness says clear, the score's 'empty' is dropped,
and the likeness and the pieces give its best guess, in doubt.

A cast shadow across the board (a person, a lamp's arm, a window's frame) lights the shade by the
room, not the lamp: darker, of another hue, without the lamp's glints. Where the bare cells' light
falls in two such groups, a cell's hue and light, and its pixels' likeness, are measured against
the bare cells under its own light, and a hue moved along the line between the two lights' hues
(the shadow's edge or a bar across the cell) is no sign of clear.

Kept apart from the reader: this is what the photo says of each cell, before the rules
(:mod:`vision.gemblo_prior`) weigh it and the reader (:mod:`vision.gemblo`) decides.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from rules.gemblo import row2

from .colour import classify
from .gemblo_cells import (CLEAR_PPU, CLEAR_SURE, EMPTY, INNER_R, LABELS, PALETTE, PPU, clear_odds, edge_matrix, gather,
                           offsets)
from .gemblo_clusters import (MIX_MIN_CLEAR, MIX_SEPARATION, cluster_log_lik, clusters_where_they_lie,
                              cut_into_pieces, score_clusters, separation)
from .hexgrid import EXTENT, cells, centres, edge_distance
from .reading import UNCERTAIN_BELOW

# Clear-piece evidence, each measured against the cells read as empty in the same photo (their
# median and spread), so light, white balance and the board's own colour cancel out. Every
# measure is over the cell's middle brightness (gray) unless said otherwise.
CLEAR_FEATURES = (
    "tint", "tint_middle",  # a*b* distance from the empty cells' colour (whole cell; middle):
    # a clear piece reflects the lamp's white, so the board's hue fades, whichever way it lies
    "glint", "glint_peak",  # the 95th and 99th percentile: a piece's top reflects the lamp
    "roughness",  # spread of the cell's pixels: a piece smooths over the recess' shading
    "level",  # log brightness of the middle
    # the radial profile, from the walls inwards (edge distance bands, CLEAR_BANDS): a clear
    # piece's bevel shines where an empty cell's recess is shaded
    *(f"band{k}" for k in range(7)),
    # the six side bands, weakest to brightest: light leaks out of a piece's outer bevels
    *(f"side{k}" for k in range(6)),
)
CLEAR_BANDS = ((0.0, 0.05), (0.05, 0.1), (0.1, 0.15), (0.15, 0.22), (0.22, 0.35), (0.35, 0.55), (0.55, 0.9))
# Logistic weights over the features' clipped z-scores and their squared positive parts (/ CLIP_Z),
# fitted offline on generated photos of every named condition (seeds disjoint from the bench's
# and the tests'): score > 0 is clear.
CLEAR_WEIGHTS = np.array([0.974, 0.140, 0.899, -0.006, -0.032, 0.515, 0.199, 0.110, -0.357, 0.587, 0.137, 0.244, -0.401, 0.180, 0.115, 0.254, 0.024, 0.060, 0.410])
CLEAR_WEIGHTS_SQ = np.array([-0.522, 0.081, -0.742, 0.151, 0.146, -1.344, -1.083, 0.028, 0.165, -0.458, -0.158, -0.724, 0.194, -0.031, 0.154, -0.337, 0.170, -0.210, -0.171])
CLEAR_BIAS = -7.433
LEVEL_COLUMN = 7  # clear_features' column of the log middle light
SHADE_SEPARATION = 5.0  # spreads between the bare cells' lights of a board a cast shadow crosses (shadow_lights)
PENUMBRA = 2.0  # spreads off its bare cells' median light within which a cell lies under one light
CLIP_Z = 12.0  # a feature's z-score counts at most this much (one glint must not decide)
# The spreads of light above the bare cells' at which the fitted light term, w z + v z^2 / CLIP_Z,
# is back to nothing: z = -w CLIP_Z / v (4.6 spreads; w > 0 and v < 0 as fitted). Beyond it the
# light says nothing either way (clear_score).
LIGHT_SAYS_NOTHING = float(-CLEAR_WEIGHTS[CLEAR_FEATURES.index("level")] * CLIP_Z
                           / CLEAR_WEIGHTS_SQ[CLEAR_FEATURES.index("level")])
ODD_Z, ODD_MEASURES = 8.0, 4  # a cell this many spreads off the empty cells' in this many measures is no plain empty cell
FADED_Z = 8.0  # a doubted cell whose hue lies this many spreads off the bare cells' has faded as under clear plastic (_clear)
MIX_AGREE = 1.0  # |score| a cell needs for the clusters to decide it (the score's own side)
# This photo's own look of clear and of empty cells (see clear_likeness): a pixel counts at most
# LIKENESS_CLIP of the empty cells' spreads (an embossed mark's line, a glint must not decide); the
# likeness adds at most LIKENESS_CAP log-odds (its template is drawn from the very cells that scale
# it, so it flatters itself); from surely read cells it leans a best guess less where its clusters
# lie under MIX_SEPARATION spreads apart, but doubts a sure cell in full; its two clusters are
# never narrower than LIKENESS_SPREAD (a twentieth of the gap between them).
LIKENESS_CLIP, LIKENESS_CAP, LIKENESS_SPREAD = 3.0, 3.0, 0.05
# A photo sure of fewer than MIX_MIN_CLEAR clear cells takes its clear look from the cells whose best
# guess is clear at these log-odds or more (the weakest guesses are most often empty cells in shade).
LIKENESS_GUESSED_ODDS = 1.0
# Over-exposure (a phone metering on a dark table): a channel at WHITE has met the sensor's
# white and says only "at least this bright", so where it clips it is no evidence.
WHITE = 250
MIN_PLAIN = 20  # unclipped empty cells needed to measure the clear evidence against them alone
PLAIN_SHARE = 0.5  # ... and their share of the cells read empty
# Under-exposure: a clear piece's evidence is a contrast of a few per cent of the light on the
# board (its bevel bands and sides lie 3-8 % above an empty cell's, on generated photos of every
# condition: CLEAR_CONTRAST, the least of them, since the faintest piece is the one missed). A photo
# holds whole grey levels only, so where the board's light is so dim that this contrast spans fewer
# than CLEAR_LEVELS levels, rounding hides it (and the empty cells' spreads, which scale the
# evidence, collapse to the rounding too): a cell that looks empty there may be clear.
CLEAR_CONTRAST, CLEAR_LEVELS = 0.03, 1.5
# A reflection of the lamp or a window on the board: a cell this many times as bright as the bare
# board's typical cell (a clear piece lifts it by CLEAR_CONTRAST-8 %; a gradient or the lit side of a
# cast shadow left seed 2's bare cells at most 1.9 times it).
REFLECTION = 2.0


@lru_cache(maxsize=2)
def _clear_offsets(ppu: float) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Offsets for the clear-piece evidence: the cell inside its walls, its middle, the
    CLEAR_BANDS by distance from the walls, and the side band split by side."""
    n = int(np.ceil(ppu))
    dy, dx = np.mgrid[-n:n + 1, -n:n + 1]
    rad = np.hypot(dx, dy) / ppu
    e, side = edge_distance(dx / ppu, dy / ppu)
    pick = lambda m: np.column_stack([dy[m], dx[m]])  # noqa: E731
    band = (e >= 0.05) & (e <= 0.2)
    return (pick(e >= 0.06), pick(rad <= INNER_R), [pick((e >= lo) & (e < hi)) for lo, hi in CLEAR_BANDS],
            [pick(band & (side == k)) for k in range(6)])


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


def white_shares(top: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (463,): the share of its pixels white (WHITE) in all three channels, the share
    white in two or more, and whether its middle is white in all three (its median pixel).
    Over-exposure clips the beige board first: a clipped channel only says 'at least this
    bright', so a clear piece's extra light no longer shows there."""
    whole_o, mid_o = _clear_offsets(CLEAR_PPU)[:2]
    clipped = (top >= WHITE).sum(axis=-1, dtype=np.uint8)[..., None]
    whole = gather(clipped, whole_o, CLEAR_PPU)[..., 0]
    return ((whole == 3).mean(axis=1), (whole >= 2).mean(axis=1),
            (gather(clipped, mid_o, CLEAR_PPU)[..., 0] == 3).mean(axis=1) > 0.5)


def too_dark_for_clear(level: np.ndarray) -> np.ndarray:
    """(463,) cells whose light is too dim for a clear piece's evidence to show: its typical
    contrast (CLEAR_CONTRAST of the cell's middle brightness) spans fewer than CLEAR_LEVELS grey
    levels, i.e. a cell middle below 50 of 255. The level is empirical: on our renders
    darkened 3-7 stops, clear cells in cells dimmer than about 37 were read surely empty (85
    cells on 40 photos), and on the bench's seed 2 `hard` #7 (a dark photo, its upper right
    shaded) 8 clear cells at 38-39, which a piece lifting its cell 3 % (the least, not the typical
    4 %) rounds to fewer than CLEAR_LEVELS; that a contrast of one or two quantisation steps is
    too little to tell apart from an empty cell's own spread is the plain reading of it, not a
    derivation (noise could as well dither such a step into view). ``level``: each cell's light,
    :func:`middle_level`."""
    return CLEAR_CONTRAST * level < CLEAR_LEVELS


def middle_level(gray: np.ndarray) -> np.ndarray:
    """(463,) each cell's light: the median grey level of its middle (``gray``: as for
    :func:`vision.gemblo_walls.walls_seen`)."""
    return np.median(gather(gray, _clear_offsets(CLEAR_PPU)[1], CLEAR_PPU), axis=1)


def in_a_reflection(level: np.ndarray, bare: np.ndarray) -> np.ndarray:
    """(463,) cells a reflection of the lamp or a window lies on: their middle REFLECTION times
    as bright as the typical one of the ``bare`` cells (read empty or clear, in sight), or half
    their neighbours so (a window's bar or a piece's rim shades one cell of the bright patch; seed 2
    `hard` #6: an empty cell under a mullion, 1.97 times, read surely clear among neighbours at
    2.0-2.4). There the board shows the lamp's white, and the sheen and faded hue that mark a
    clear piece are the reflection's own: clear or empty is a guess, as where the light clips.
    ``level``: each cell's light, :func:`middle_level`. A board with no bare cell, or whose bare
    cells are black (a view too dark for any reflection to be told from the board), has none."""
    typical = float(np.median(level[bare])) if bare.any() else 0.0
    if typical <= 0:
        return np.zeros(len(level), bool)
    bright = bare & (level >= REFLECTION * typical)
    adjacent = edge_matrix()
    return bright | (2 * (adjacent @ bright) >= adjacent.sum(1))


def grey_and_lab(top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The top-down view at CLEAR_PPU in grey levels and in LAB (uint8), converted once per read:
    the walls, the clear evidence, the likeness and the dim-light check all look at them."""
    return cv2.cvtColor(top, cv2.COLOR_BGR2GRAY), cv2.cvtColor(top, cv2.COLOR_BGR2LAB)


def clear_features(gray: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """(463, 21) raw clear-piece evidence from a top-down view at CLEAR_PPU (:func:`grey_and_lab`):
    b*, a* of the whole cell and of its middle, then CLEAR_FEATURES[2:] (see :func:`clear_zscores`)."""
    whole_o, mid_o, band_o, side_o = _clear_offsets(CLEAR_PPU)
    mid = middle_level(gray).astype(np.float32) + 1.0
    gray = gray.astype(np.float32) + 1.0
    lab = lab.astype(np.float32)
    whole = gather(gray, whole_o, CLEAR_PPU)
    colour = gather(lab, whole_o, CLEAR_PPU).mean(axis=1)
    colour_mid = gather(lab, mid_o, CLEAR_PPU).mean(axis=1)
    bands = np.stack([gather(gray, o, CLEAR_PPU).mean(axis=1) for o in band_o], axis=1)
    sides = np.sort(np.stack([gather(gray, o, CLEAR_PPU).mean(axis=1) for o in side_o], axis=1), axis=1)
    peaks = np.percentile(whole, (95, 99), axis=1).T
    return np.column_stack([colour[:, 2], colour[:, 1], colour_mid[:, 2], colour_mid[:, 1],
                            peaks / mid[:, None], whole.std(axis=1) / mid, np.log(mid),
                            bands / mid[:, None], sides / mid[:, None]])


def clear_zscores(features: np.ndarray, empty: np.ndarray, shown: np.ndarray | None = None) -> np.ndarray:
    """(463, len(CLEAR_FEATURES)): each measure in spreads of the cells read as empty (median
    and MAD: the clear pieces among them are a minority and move neither much), clipped at
    CLIP_Z. Each pair of colour axes becomes one distance, since the hue moves towards the
    lamp's white, whichever way that lies from the board's.

    Where a cast shadow crosses the board (:func:`shadow_lights`), the shade is lit by the room, not
    the lamp: darker, and of another hue (seed 5 `shadow` #0: the lit third's bare cells 12
    spreads off the shaded bare cells' hue and light, 14 of them read clear, and the shaded
    clear pieces, measured against a reference half lit, read empty). There a cell's hue and
    light are measured against the bare cells under its own light, and the hue's move along
    the line between the two lights' bare hues is taken out (:func:`_off_the_shade_line`): a
    cell the shadow's edge or a window's bar crosses mixes the two lights, and its hue lies on
    that line, while a clear piece fades the board's hue towards the lamp's white, across it.
    The other measures are ratios to the cell's own light, which a shadow does not move.
    The lights, and the bare cells under them, are those whose walls show (``shown``, default
    all): a mug standing on the board hides cells that read empty in its own dark or bright
    colours, and those passed for a shade (standing mug seed 8: four cells silently wrong)."""
    ref = empty if empty.sum() >= 10 else np.ones(len(features), bool)
    bare = ref if shown is None else ref & shown
    lights = shadow_lights(features[:, LEVEL_COLUMN], bare)
    lit_ref = bare if lights else ref
    z = _standardised(features, ref, [], 1e-6)
    z[:, :4] = _standardised(_off_the_shade_line(features[:, :4], lit_ref, lights), lit_ref, lights, 1e-6)
    z[:, LEVEL_COLUMN] = _standardised(features[:, [LEVEL_COLUMN]], lit_ref, lights, 1e-6)[:, 0]
    return np.clip(np.column_stack([np.hypot(z[:, 0], z[:, 1]), np.hypot(z[:, 2], z[:, 3]), z[:, 4:]]),
                   -CLIP_Z, CLIP_Z)


def shadow_lights(level: np.ndarray, bare: np.ndarray) -> list[np.ndarray]:
    """The cells under each of two lights, (shade, lit), where a cast shadow's edge crosses the
    board: the ``bare`` cells' ``level`` (log middle light) falls in two groups SHADE_SEPARATION
    spreads apart, each of MIN_PLAIN cells or more; else none. A cell lies under a light when its
    own level is within PENUMBRA spreads of that light's bare cells' median (a clear piece lifts
    its cell a few per cent, a shadow halves it); those between (the shadow's soft edge) lie
    under neither: their light and likeness are measured against the whole board (their hue, as
    every cell's, off the line between the two lights). Each group's spread is at least one
    grey level.
    On the bench's seeds 2 and 5 (240 photos), the `shadow` photos' lights lie 6-34 spreads apart;
    of the others only two `hard` photos (a cast shade too) and one whose colours are overfull
    pass, every other one's two groups lie under 4.5 (a gradient's halves, a glare's patch)."""
    x = np.sort(level[bare])
    n = len(x)
    if n < 2 * MIN_PLAIN:
        return []
    k = np.arange(MIN_PLAIN, n - MIN_PLAIN + 1)
    low, high = np.cumsum(x)[k - 1], x.sum() - np.cumsum(x)[k - 1]
    k = int(k[np.argmax(low ** 2 / k + high ** 2 / (n - k))])  # Otsu: the cut that parts them most
    medians = np.array([np.median(x[:k]), np.median(x[k:])])
    # a spread of at least one grey level: a cell's light is a median of whole levels, so on an
    # evenly lit board most of a group can share one level, and its spread would be none
    spreads = np.maximum([_spread(part, m) for part, m in ((x[:k], medians[0]), (x[k:], medians[1]))],
                         np.exp(-medians))
    if separation(medians, spreads) < SHADE_SEPARATION:
        return []
    return [np.abs(level - m) <= PENUMBRA * s for m, s in zip(medians, spreads)]


def _spread(values: np.ndarray, centre, axis=None):
    """The robust spread (MAD scaled to a normal's standard deviation) of ``values`` about ``centre``."""
    return 1.4826 * np.median(np.abs(values - centre), axis=axis)


def _held(lights: list[np.ndarray], ref: np.ndarray) -> list[np.ndarray]:
    """The ``lights`` if each holds MIN_PLAIN // 2 ``ref`` cells or more to be measured against,
    else none: shade is where cells are most often in doubt, and a light without reference
    cells would measure its cells against nothing (a median of no cells)."""
    return lights if all((light & ref).sum() >= MIN_PLAIN // 2 for light in lights) else []


def _off_the_shade_line(hue: np.ndarray, ref: np.ndarray, lights: list[np.ndarray]) -> np.ndarray:
    """``hue`` (each cell's colour axes in pairs: whole cell, middle) with its move along the line
    between the (shade, lit) ``lights``' ``ref`` cells' median hues taken out: how far a cell lies
    off the colours a mix of the two lights gives the bare board (unchanged without two lights)."""
    hue, lights = hue.copy(), _held(lights, ref)
    for pair in (slice(0, 2), slice(2, 4)) if lights else ():
        shade, lit = (np.median(hue[light & ref, pair], axis=0) for light in lights)
        along = (lit - shade) / (np.linalg.norm(lit - shade) + 1e-6)
        hue[:, pair] -= np.outer((hue[:, pair] - shade) @ along, along)
    return hue


def _standardised(values: np.ndarray, ref: np.ndarray, lights: list[np.ndarray], floor: float) -> np.ndarray:
    """``values`` (one row a cell) in spreads of the ``ref`` cells' (median and MAD, plus ``floor``):
    each cell under one of the ``lights`` (:func:`shadow_lights`) against the ``ref`` cells under it, the
    others against all of them."""
    out = np.empty_like(values)
    for light in (np.ones(len(values), bool), *_held(lights, ref)):
        centre = np.median(values[light & ref], axis=0)
        out[light] = (values[light] - centre) / (_spread(values[light & ref], centre, axis=0) + floor)
    return out


def clear_score(z: np.ndarray) -> np.ndarray:
    """The fitted logistic score (log-odds of clear) over :func:`clear_zscores`.

    The light's fitted term rises and then falls: a cell a little brighter than the bare ones is
    lifted by a clear piece, a far brighter one was mostly a bare cell in a glare's patch among
    the photos it was fitted on, and beyond :data:`LIGHT_SAYS_NOTHING` spreads the term counts
    against clear. But an evenly lit board's bare cells lie within a spread or two of each other,
    and a clear piece lifts its cell further than that, as does one in a glare's patch: on the
    bench's seed 2, of the 36 cells read empty by colour 8 or more spreads brighter than the bare
    cells, 27 were clear, and the light's term called 22 of them empty (7 surely; seed 2 `clean`
    #5, `perspective` #2 silently). So a cell brighter than that is counted there: its light
    says nothing either way, and the other measures decide."""
    z = z.copy()
    level = CLEAR_FEATURES.index("level")
    z[:, level] = np.minimum(z[:, level], LIGHT_SAYS_NOTHING)
    return z @ CLEAR_WEIGHTS + (np.clip(z, 0, None) ** 2 / CLIP_Z) @ CLEAR_WEIGHTS_SQ + CLEAR_BIAS


def _clear(features: np.ndarray, empty: np.ndarray, plain: np.ndarray, doubted: np.ndarray,
           shown: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """P(clear) and confidence for cells the colour classifier read as empty: a logistic score over the
    clear-piece evidence; near the cut the cell is uncertain, never guessed. Also the *faded* cells
    (below), the *odd* ones (:func:`odd_cells`) and the *guessed* ones (the cells whose best guess
    the clear cluster found where it lies gave, below).

    The score's scale is fitted over many photos, but within one photo its clear and empty cells
    fall in two tight clusters whose gap lies elsewhere from photo to photo (light, blur, the lens).
    So the photo's own clusters are fitted too (:func:`vision.gemblo_clusters.score_clusters`); where they say plainly
    what the score says weakly, the cell is decided, and a doubtful cell's best guess is the side of
    the photo's own gap it lies on. Where the clusters held near the scores' usual places find no
    clear one at all, it is sought where the photo puts it (:func:`vision.gemblo_clusters.clusters_where_they_lie`);
    found, it alone gives the doubtful cells' best guesses, and decides none: their confidence stays
    the fitted score's (never higher), and the rules downstream take them as best guesses only
    (:func:`vision.gemblo._decide`). Where the held clusters only best-guess, the one found where the photo puts
    it stands in for them if a larger share of the cells its cut calls clear lie in distinct
    pieces (:func:`vision.gemblo_clusters.cut_into_pieces`). ``plain``: the empty cells that say what an empty cell
    looks like here (those read empty whose light did not clip); ``shown``: the cells in the
    photo whose walls show (default: all).

    ``doubted``: cells the colour classifier reads empty, but in doubt (torn between empty and a
    colour, or like no class well). Those whose hue lies FADED_Z spreads or more off the bare cells'
    (*faded*) have faded as under clear plastic, further than the cells the score was fitted on: its
    'empty' says nothing there (its squared terms, fitted on milder cells, call the farthest ones
    empty), so their odds are even at worst and their best guess is left to the pieces and the
    photo's likeness. On the bench's photos in sight (seeds 2 and 5), all 15 such cells the score
    called empty were clear pieces (empty cells doubted under a shadow or in dim light: hue 2-7
    spreads off); under a hand, skin fades the hue too, and the likeness leans those empty."""
    z = clear_zscores(features, plain, shown)
    score = clear_score(z)
    clusters = score_clusters(score[empty])
    seen = empty if shown is None else empty & shown
    found = clusters_where_they_lie(score, seen) if clusters is None else None
    fitted = np.clip(np.abs(score) / CLEAR_SURE, 0, 1)
    guessed = np.zeros(len(score), bool)
    if found is not None:
        # the photo's own cut, found where it lies: a doubtful cell's best guess by it alone
        # (the fitted score's cut lies visibly elsewhere here), in doubt, nothing decided
        guessed = np.abs(score) < CLEAR_SURE / 2
        score = np.where(guessed, np.clip(found(score), -0.45 * CLEAR_SURE, 0.45 * CLEAR_SURE), score)
    elif clusters is not None:
        odds, plain = clusters
        if not plain:
            odds = cut_into_pieces(score, seen, odds)
        photo = odds(score)
        agree = (np.sign(photo) == np.sign(score)) & (np.abs(score) >= MIX_AGREE) & plain
        doubtful = ~agree & (np.abs(score) < CLEAR_SURE / 2)
        score = np.where(agree, np.sign(score) * np.maximum(np.abs(score), np.abs(photo)), score)
        # still in doubt: the best guess halfway between the two views
        score = np.where(doubtful, np.clip((photo + score) / 2, -0.45 * CLEAR_SURE, 0.45 * CLEAR_SURE), score)
    p = 1 / (1 + np.exp(-score))
    conf = np.clip(np.abs(score) / CLEAR_SURE, 0, 1)
    conf = np.where(guessed, np.minimum(conf, fitted), conf)  # a best guess, no surer than the photo's score
    # A cell unlike this photo's empty cells in many measures at once is no plain empty cell,
    # whatever the fitted score says beyond the cells it was fitted on (a clear piece over an
    # embossed mark, lit oddly): 'empty' there is a guess.
    odd = odd_cells(z)
    conf = np.where(odd & (score < 0), np.minimum(conf, UNCERTAIN_BELOW - 0.01), conf)
    faded = doubted & (z[:, 0] >= FADED_Z)
    return np.where(faded, np.maximum(p, 0.5), p), conf, faded, odd, guessed


def odd_cells(z: np.ndarray) -> np.ndarray:
    """(463,) cells unlike this photo's empty cells in many measures at once (ODD_MEASURES at
    ODD_Z spreads or more of :func:`clear_zscores`): beyond the cells the fitted score was fitted
    on, as a clear piece over an embossed mark is."""
    return (np.abs(z) >= ODD_Z).sum(axis=1) >= ODD_MEASURES


def probabilities(rect: np.ndarray, gray: np.ndarray, lab: np.ndarray, shown: np.ndarray | None = None,
                   clipped: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(463, 7) class probabilities in LABELS order, (463,) confidence, (463,) whether the
    cell's only doubt is clear or empty (the colour classifier surely saw no colour, or saw a
    faded hue: see :func:`_clear`), (463,) those faded cells, which stay uncertain, (463,) the
    cells read empty that are odd (:func:`odd_cells`), and (463,) those whose clear odds are the
    best guess of the clear cluster found where the photo puts it (:func:`_clear`);
    ``rect`` is the top-down view at PPU (colour), ``gray`` and ``lab`` at CLEAR_PPU (clear pieces).
    ``shown``: the cells whose walls show (default: all); only these teach the colour classes,
    so a mug over the board cannot become a colour's cluster (a pink mug, purple's).
    ``clipped``: the cells whose light clipped (default: none); they do not set what a plain
    empty cell looks like, since clipping flattens exactly the measures a clear piece shows in."""
    inner_o, ring_o = offsets(PPU)
    inner = gather(rect, inner_o).astype(np.float32) / 255
    ring = gather(rect, ring_o).astype(np.float32) / 255
    grid = _layout()
    colours = classify(inner[grid], ring[grid], PALETTE, shown=None if shown is None else shown[grid],
                       translucent=True)
    post = np.zeros((len(cells()), len(LABELS)))
    conf = np.zeros(len(cells()))
    rows, cols = np.indices(grid.shape)
    real = grid[rows, cols]
    post[real.ravel(), :len(PALETTE.labels)] = colours.posterior.reshape(-1, len(PALETTE.labels))
    conf[real.ravel()] = colours.confidence.ravel()
    empty = np.argmax(post, 1) == 0
    plain = _plain(empty, clipped)
    # read empty (most of the colour weight) yet in doubt: torn with a colour, or like no class well
    doubted = empty & (conf < UNCERTAIN_BELOW) & (post[:, 0] >= 0.5)
    p_clear, c_clear, faded, odd, guessed = _clear(clear_features(gray, lab), empty, plain, doubted, shown)
    post[empty, -1] = post[empty, 0] * p_clear[empty]
    post[empty, 0] *= 1 - p_clear[empty]
    clear_only = (empty & (conf >= UNCERTAIN_BELOW)) | faded
    conf[empty] = np.minimum(conf[empty], c_clear[empty])
    return post, conf, clear_only, faded, empty & odd, empty & guessed


def _plain(empty: np.ndarray, clipped: np.ndarray | None) -> np.ndarray:
    """The cells read empty that say what a bare cell looks like in this photo: those whose light
    did not clip, when there are enough of them (MIN_PLAIN) and they are most of the cells read
    empty; else all cells read empty. Where the light clips most of the bare board (a cool lamp
    saturating blue and green), the few cells it spares are no sample of it: they are what passes
    less light, the clear pieces above all, and measured against them a clear piece looks empty."""
    if clipped is None:
        return empty
    unclipped = empty & ~clipped
    return unclipped if unclipped.sum() >= max(MIN_PLAIN, PLAIN_SHARE * empty.sum()) else empty


def cell_pixels(gray: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """(463, 3n) each cell's pixels inside its walls, every other one across and down (an eighth
    of a cell's radius apart: finer than a glint or a bevel, and a quarter of the work), as a
    clear piece changes them: brightness over the cell's median (light and shade cancel), then
    a* and b* (a clear piece fades the board's hue towards the lamp's white). ``gray``, ``lab``:
    the top-down view at CLEAR_PPU (:func:`grey_and_lab`)."""
    whole_o = _clear_offsets(CLEAR_PPU)[0]
    whole_o = whole_o[(whole_o % 2 == 0).all(axis=1)]
    gray = gather(gray, whole_o, CLEAR_PPU).astype(np.float32) + 1.0
    lab = gather(lab, whole_o, CLEAR_PPU).astype(np.float32)
    return np.concatenate([gray / np.median(gray, axis=1, keepdims=True), lab[..., 1], lab[..., 2]], axis=1)


def clear_likeness(pixels: np.ndarray, clear: np.ndarray, empty: np.ndarray,
                   lights: list[np.ndarray] | None = None) -> tuple[np.ndarray, float]:
    """(463,) log-odds of clear by how each cell looks beside this photo's own ``clear`` and
    ``empty`` cells, pixel by pixel (0 where the photo shows too few of either), and the share
    of them a best guess may lean by (how far apart its clusters lie, see below).

    The fitted score sums a few measures whose weights were fitted over many photos; here the
    photo itself says where its clear cells differ from its empty ones (where the lamp's glint
    falls on a piece, where its bevel shines, which way the hue fades, how the embossing and
    the lens distort all of it). Each pixel is put in spreads of the empty cells' same pixel
    (clipped, LIKENESS_CLIP), projected on the clear cells' difference (a matched filter:
    0 looks empty, 1 looks clear), and the projection weighed by the two sets' own clusters
    (Student-t, as the scores' clusters). Clusters fewer than MIX_SEPARATION spreads apart (the
    bar the scores' own clusters must clear to say anything) lean a best guess that much less
    (the share returned): the reference cells are the ones the photo is surest of, so their
    clusters are tighter than the cells weighed by them, and where even those overlap, a cell
    between them is no plainer one than the other (on the bench's seeds 2 and 5, in the 19
    photos whose surely read cells' clusters lay closer, their likeness turned 3 doubtful cells'
    guesses right and 12 wrong; in the 177 others, 239 right and 28 wrong). The log-odds
    themselves are not scaled: a likeness that opposes a sure cell still puts it in doubt
    (:func:`weigh_likeness`), as a weaker prior must never remove a doubt. Under a cast shadow
    (``lights``, :func:`shadow_lights`) each cell's pixels are put in spreads of the empty cells under
    its own light: against the whole board, the shade's own hue looked like clear's where the
    clear cells the photo is sure of lay in the shade (seed 5 `shadow` #4, its score measured
    under each light: 30 empty cells there leaned clear)."""
    if clear.sum() < MIX_MIN_CLEAR or empty.sum() < MIN_PLAIN:
        return np.zeros(len(pixels)), 0.0
    z = _standardised(pixels, empty, lights or [], 1e-3)
    template = np.median(z[clear], axis=0)
    z = np.clip(z, -LIKENESS_CLIP, LIKENESS_CLIP)
    match = z @ template / max(float(np.clip(template, -LIKENESS_CLIP, LIKENESS_CLIP) @ template), 1e-9)
    means = np.array([np.median(match[empty]), np.median(match[clear])])
    spreads = np.array([max(float(_spread(match[ref], m)), LIKENESS_SPREAD)
                        for ref, m in ((empty, means[0]), (clear, means[1]))])
    ll = cluster_log_lik(match, means, spreads, np.full(2, 0.5))
    lean = float(np.clip(separation(means, spreads) / MIX_SEPARATION, 0.0, 1.0))
    return np.clip(ll[:, 1] - ll[:, 0], -LIKENESS_CAP, LIKENESS_CAP), lean


def weigh_likeness(pixels: np.ndarray, post: np.ndarray, conf: np.ndarray, labels: list[str],
                    readable: np.ndarray, plain: np.ndarray, lights: list[np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The likeness of the ``readable`` cells (those whose only doubt is clear or empty) to this
    photo's surely clear and surely empty cells (of those, only the ``plain`` ones: clipped light
    flattens what a clear piece changes), from each cell's ``pixels`` (:func:`cell_pixels`),
    under a cast shadow's ``lights`` (:func:`shadow_lights`; default none);
    returns the confidences and the likeness to lean the doubtful cells' best guesses by.

    A cell the fitted score made just sure but that the likeness contradicts is in doubt: as
    sure as both together make it. Agreement makes no cell surer (the likeness is drawn from
    the cells it would confirm); a doubtful cell's best guess leans by it.

    A photo sure of fewer than MIX_MIN_CLEAR clear cells (a dim lamp, a warm one, jpeg: the
    glints the score rests on are weak, and every clear cell is only a best guess) takes what
    clear looks like from its best-guess clear cells (LIKENESS_GUESSED_ODDS or more). On the
    bench's seeds 2 and 5 those were mostly clear (e.g. 35 of 35, 12 of 12), and their likeness
    set right most wrong guesses of such photos; but they are guesses, so their likeness only
    leans the doubtful cells' best guesses and puts no sure cell in doubt. Under a cast shadow
    they may be shaded empty cells (0 of 9), and it leans more of those clear (all in doubt).

    The likeness of surely read cells whose clusters overlap leans the best guesses less
    (:func:`clear_likeness`), but doubts a sure cell it opposes in full: the doubt it raises is
    never lessened by its weakness as a prior. The likeness of guessed cells leans in full: where
    its clusters overlapped it still turned 49 guesses right and 21 wrong (seeds 2 and 5)."""
    sure = conf >= UNCERTAIN_BELOW
    lab = np.array(labels)
    clear, empty = sure & (lab == "C"), sure & (lab == EMPTY) & plain
    if clear.sum() < MIX_MIN_CLEAR:
        guessed = readable & (lab == "C") & (clear_odds(post) >= LIKENESS_GUESSED_ODDS)
        return conf, np.where(readable, clear_likeness(pixels, guessed, empty, lights)[0], 0.0)
    likeness, lean = clear_likeness(pixels, clear, empty, lights)
    likeness = np.where(readable, likeness, 0.0)
    own = clear_odds(post)
    against = sure & (likeness * own < 0)
    conf = np.where(against, np.minimum(conf, np.abs(own + likeness) / CLEAR_SURE), conf)
    return conf, likeness * lean


def beyond_the_score(post: np.ndarray, odd: np.ndarray, lean: np.ndarray) -> np.ndarray:
    """The ``odd`` cells (:func:`odd_cells`) the fitted score calls empty yet whose likeness
    (``lean``, :func:`clear_likeness`) says clear; their odds are raised to even in ``post``
    and they are returned, to be weighed as faded cells are (:func:`_clear`).

    A clear piece over an embossed mark (a flower, a start's double hex) is unlike the photo's
    empty cells in many measures at once, and the score's squared terms, fitted on milder cells,
    call it empty. The photo's own marks of the same kind read empty are no better a reference
    (measured on the bench's seeds 2 and 5: against them the misread clear cells still looked
    empty, one further off than before), but the likeness to the photo's own clear cells
    separates them: of the odd cells in sight the score called empty, 33 of 48 clear ones and 4
    of 204 empty ones look clear by it. So the score's 'empty' says nothing there: the likeness
    and the pieces give the best guess, the cell stays in doubt, and its group decides nothing."""
    beyond = odd & (lean > 0) & (clear_odds(post) < 0)
    total = post[beyond, 0] + post[beyond, -1]
    post[beyond, -1] = total / 2
    post[beyond, 0] = total / 2
    return beyond


def lean_guesses(labels: list[str], post: np.ndarray, lean: np.ndarray, doubtful: np.ndarray) -> None:
    """Best guesses of the ``doubtful`` empty-or-clear cells by the photo's odds and their
    likeness (:func:`clear_likeness`) together. Taken after the rules' region fixes: the regions
    the rules flag and doubt stay those the photo's odds alone make, so a guess cannot talk a
    region out of its doubt (and leave a cell in it silently wrong)."""
    odds = clear_odds(post) + lean
    for i in np.flatnonzero(doubtful):
        if labels[i] in (EMPTY, "C"):
            labels[i] = "C" if odds[i] > 0 else EMPTY
