"""Read the 144 fields of an Equilibrix board at a known pose: the light field from the bare
wood, each field read empty, black or white, and the doubts (glare, shadow, grain, a hand, the
five-dot prior) that make a field uncertain.

Reading goes pose -> fields and ring -> state; this module reads the fields (``vision.equilibrix``
puts the steps together; the ring, read first, gives them the white tiles' colour:
``vision.equilibrix_ring``).

Colour (no palette of plastics here): every photo carries its own reference, the bare wood
between the flower and the ring, which no tile covers. Its colour over the board gives the
light field (a smooth quadratic, refitted with the fields read as empty; a hand over part of
that wood, darker and redder than the light the rest agrees on, is left out, not averaged in).
A field's colour divided by the light there is then near 1 for bare wood, far darker for
black, brighter and bluer (as blue as the wood is red) for white, whatever the lamp's colour. Each field is
sampled in its middle, away from the perforated tip dots and the drawn lines. The ring's
white tiles, recognised by their shapes, anchor the white class (a glare spot on bare wood is
brighter and a little bluer, but it is no tile's shape).

Glare: a highlight adds white light, so a black tile under it can look white or like wood in
its mean; the darkest quarter of its middle, which the highlight misses, stays black, and the
field is read black (not surely; for a field read white a less dark quarter will do, since
white plastic is brighter than the wood even there), when that quarter is neutral, as plastic
is (one as red as the wood is a finger or the wood beside it). Added light moves the wood's colour towards the
lamp's, never beyond, so where a highlight partly clips a doubtful white field whose darkest
quarter keeps the wood's red hue and about its brightness, the best guess is empty; so too where
a doubtful white field's middle (its blue channel not clipped) is clearly redder than plastic and
a highlight shows there (it clips part of the middle, or the wood's grain shows), since plastic
keeps its hue under the lamp's light. Wood under a highlight turns as bright
and neutral as white plastic but keeps its grain: a white field whose darkest tenth lies well
below its middle is not sure, nor is one several times rougher than the smoothest white
fields (flat plastic) and a fair share as rough as the bare wood (a phone's tone map lifts the
wood beside black tiles until it is as bright and grey as white plastic). A soft reflection
adds more light to the glossy tiles than to the wood, so a black tile under one turns grey and
neutral, and may be read white; white plastic is brighter than the wood in any light the two
share, so a doubtful neutral field read white but darker than the bare wood round it (the
fields read empty among its neighbours and theirs, which share a shadow the smooth light field
does not follow) is best guessed black; so too one a highlight partly clips whose darkest part
(which the highlight misses) is neutral and no brighter than the darkest part of the wood round it.

Covered fields' best guess: skin and a sleeve are read black or white by their brightness,
but plastic is neutral (bluer over the wood's light than wood or skin). A covered field (see
Doubt) as red as the wood is guessed empty, as most fields are, and stays uncertain; for black
only where this photo's sure black fields are clearly bluer than the wood, and not where the
field's darkest quarter is black plastic (as dark as a black tile, and neutral): a finger over
a black tile leaves that part of it in sight, and skin is never so dark and grey.

Doubt: a field is uncertain when its colour sits between the classes or far from its own
class, when its middle is rough (a hand's creases, a sleeve), when it is washed out by glare
or only partly bluer than white (glared wood), when read white it is much brighter or less
blue than the ring's white tiles (a highlight: many glared fields would otherwise widen the
white class towards themselves), when it is black only in part or white but grained (above),
when read white it is far rougher than the bare wood round the flower (plastic is flat: a drawn
line crosses its middle where the pose, fitted through the pieces of one corner, is off),
or, read as empty, when its drawn outline does not show or most of its neighbours are covered
(rough, outline hidden, or far from every class: a hand or a cup lies over them, and skin can
look like wood; doubt of other kinds does not spread), or, among fields so covered (a field read
black with no tile's lighter gap round it counts: a dark mug's side), when read in the colour
of a covered or doubtful neighbour (a standing mug lends its colour to the fields at its
rim). The five-dot rule is a prior: no node holds more than six fields of one colour (five,
six with the 5+1 token), so where more are read round a node, all of that colour there are
uncertain. Every field is uncertain when too
few pieces of the drawing agree with the pose (its ``quality``, their share).

Shadow: a hard shadow darkens bare wood more than the smooth light field follows, so by colour
a shadowed field can look black. A black tile is the darkest thing in its field (the gap round
it is lighter than its middle); a field read black whose outline is not lighter is not surely
black, and one whose drawn outline shows as bare wood's does is re-read, not surely (unless its
darkest quarter is black plastic: then the outline is a finger's edge): empty when as red as
the wood; plastic, white only when its outline shows at least half as much as bare
wood's (a shadow's edge across a black tile darkens part of its gap, never that much). The
five-dot rule counts the colour reading too. A shadow also turns the wood bluer (the lamp's warm
light is gone, the room's remains), by as much per unit of darkness as the bare wood round the
flower shows where it lies darker than the light field: a doubtful field read in a colour,
darker than the light field (not as dark as black) and nearer the shaded wood's hue than
white plastic's, whose drawn outline shows, is best guessed empty.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from rules import equilibrix, flower

from . import flowergrid as fg
from .equilibrix_drawing import raster
from .errors import ReadError
from .reading import UNCERTAIN_BELOW

EMPTY = "."
LABELS = (EMPTY, "B", "W")
PPU = 32.0  # top-down pixels per r for reading
CORE_LINE = 0.07  # sampled pixels keep this far from a drawn line (r units)
CORE_NODE = 0.3  # ... and from every tip (the dots sit within 0.24 of it)
BAND_LINE = 0.045  # the outline band of a field: within this of its drawn boundary
WOOD_BAND = (3.08, 3.22, 3.42, 3.62)  # bare wood: inside the printed circle, and outside it
LIGHT_TRIES, LIGHT_SET = 300, 8  # random sets of wood samples a light field is fitted through first
LIGHT_AGREE = 0.08  # log units: a wood sample this close to a light field agrees with it
LIGHT_MAJORITY = 2 / 3  # share of the samples a consensus must hold to leave any out (see _covered_samples)
# Class centres in (brightness, blueness) of colour / light: log units, adapted per photo.
CENTRES = {EMPTY: (0.0, 0.0), "B": (-1.8, 0.7), "W": (0.45, 0.6)}
SPREAD = {EMPTY: (0.06, 0.03), "B": (0.2, 0.2), "W": (0.1, 0.08)}  # smallest spreads (noise, plastic)
MAX_SPREAD = {EMPTY: (0.15, 0.08), "B": (0.4, 0.35), "W": (0.2, 0.08)}  # a hand must not widen a class
# How far a class may move from its nominal centre: glare moves wood along "more white light"
# (brighter, a little bluer), which must never become the white class.
DRIFT = np.array([0.3, 0.12])
WHITE_NEIGHBOURHOOD = np.array([0.1, 0.06])  # how close white tiles' colours lie in one photo
WHITE_DRIFT = np.array([0.35, 0.5])
OUTLIER = 3.0  # spreads from its class beyond which a field's colour is not that class's
TEXTURE_RATIO, TEXTURE_FLOOR = 3.0, 6.0  # a field's middle this much rougher than the usual: not a tile or wood
CLIPPED = 250  # a raw channel this high is clipped
GLARE_PART = 0.3  # share of a field's middle with a clipped channel from which a highlight lies across it
DARK_PART = 0.25  # share of a field's middle, its darkest, that a highlight is judged to have missed
PARTLY_BLACK = -1.0  # log brightness over the wood's below which that part is a black tile's
PARTLY_BLACK_WHITE = -0.5  # ... in a field read white (white plastic lies about 0.45 above the wood)
WHITE_GRAIN = 0.015  # least margin below white tiles' usual darkest tenth (share of the middle)
NEIGHBOUR_R = 0.62  # r: a field's neighbours (5 or 6) have their centroids this close
HIDDEN_AROUND = 0.5  # share of doubtful neighbours that makes an empty-looking field doubtful
WOOD_ROUND = 3  # fields read empty round a field (neighbours and theirs) that show the light there
OUTLINE_SHARE = 0.45  # an empty field whose outline shows less than this share of the usual: hidden
DRAWN_OUTLINE = 0.25  # a field whose outline shows more than this share of an empty one's is no black tile when
# as red as the wood (neutral in a shadow: see WHITE_OUTLINE)
BLACK_OUTLINE = -0.05  # a black tile's outline is lighter than its middle by more than this share
WHITE_OUTLINE = 0.5  # a shadowed neutral field whose outline shows this share of an empty one's is white
SKIN_SHARE = 0.25  # a covered field read black but bluer than the wood by less than this share of black's: not plastic
BLACK_HUE_GAP = 0.3  # ... where the sure black fields are at least this much bluer than the wood
PLASTIC_ROUGH, ROUGH_FLOOR = 2.0, 1.0  # a white field rougher than this many times white plastic's (+ grey levels) ...
WOOD_ROUGH = 0.3  # ... and than this share of the bare wood's is not surely plastic
SHADE_SAMPLE, SHADE_SAMPLES = 0.1, 3  # wood samples this much darker than the light (log), and how many, measure a shadow's hue


@lru_cache(maxsize=1)
def _sampling() -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per field, the flat indices of its middle (away from lines and tip dots) and of its
    outline band in the PPU view; and the bare-wood pixels (never covered by a tile)."""
    f, line, node, radius = raster(PPU)
    core = (line > CORE_LINE) & (node > CORE_NODE)
    band = line < BAND_LINE
    flat_f = f.ravel()
    order = np.argsort(flat_f, kind="stable")
    cores, bands = [], []
    for i in range(len(fg.fields())):
        mine = order[np.searchsorted(flat_f[order], i):np.searchsorted(flat_f[order], i, side="right")]
        cores.append(mine[core.ravel()[mine]])
        bands.append(mine[band.ravel()[mine]])
    r1, r2, r3, r4 = WOOD_BAND
    wood = (((radius > r1) & (radius < r2)) | ((radius > r3) & (radius < r4))) & (f < 0) & (line > CORE_LINE)
    return cores, bands, np.flatnonzero(wood.ravel())


@lru_cache(maxsize=1)
def _middles() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The fields' middles (:func:`_sampling`) grouped by their pixel count: per group, its
    fields and their middles' flat indices, one row a field. Every field's middle holds pixels
    (39 to 49 at PPU), in 11 counts: a figure of every field's middle is then a numpy call a
    group (:func:`_per_field`); a call a field (144) took half of the fields' reading time."""
    cores, _, _ = _sampling()
    sizes = np.array([len(c) for c in cores])
    return tuple((np.flatnonzero(sizes == n), np.array([cores[i] for i in np.flatnonzero(sizes == n)]))
                 for n in np.unique(sizes))


def _per_field(values: np.ndarray, figure: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``figure`` of each field's middle: ``values`` holds one entry (a number or a colour) per
    pixel of the PPU view, and ``figure`` reduces axis 1 of (fields, their middles' pixels, ...).
    Each row is reduced as the field's middle alone would be, so the values are those of a call
    per field."""
    parts = [(fields, figure(values[middle])) for fields, middle in _middles()]
    out = np.empty((sum(len(fields) for fields, _ in parts),) + parts[0][1].shape[1:], parts[0][1].dtype)
    for fields, figures in parts:
        out[fields] = figures
    return out


def _darkest_part(colours: np.ndarray) -> np.ndarray:
    """The mean colour of the darkest DARK_PART of each field's middle (``colours``: fields x
    their middles' pixels x BGR, whole grey levels): the part a highlight leaves alone. The
    colours are whole numbers, so the sums over the part are exact and the means those of the
    part's pixels alone."""
    gray = colours.mean(2)
    part = gray <= np.percentile(gray, 100 * DARK_PART, axis=1, keepdims=True)
    return (colours * part[..., None]).sum(1) / part.sum(1)[:, None]


def light_terms(uv: np.ndarray) -> np.ndarray:
    u, v = (uv[:, 0] - fg.DISC) / fg.DISC, (uv[:, 1] - fg.DISC) / fg.DISC
    return np.column_stack([np.ones_like(u), u, v, u * u, v * v, u * v])


def _covered_samples(points: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """The wood samples a hand or a sleeve lies over: those a consensus light field does not
    follow, when it is a clear majority's (LIGHT_MAJORITY) and they are darker and redder than
    it. A least-squares fit through every sample is pulled far down beside a dark hand (the
    residuals there then mix wood and skin), so bare wood next to it looks brighter and bluer
    than the light, as white plastic does. The consensus: among fields fitted through small
    random sets of samples (a fixed draw, so a photo always reads the same), the one most
    samples lie within LIGHT_AGREE of. What else it leaves out is the light itself and is kept:
    a highlight is brighter, and a shadow darker but bluer (the lamp's warm light is gone, the
    room's remains), which the fields under it share."""
    design = light_terms(points)
    none = np.zeros(len(points), bool)
    if len(points) < 2 * LIGHT_SET:
        return none
    picks = np.random.default_rng(0).random((LIGHT_TRIES, len(points))).argsort(1)[:, :LIGHT_SET]
    coefs = np.linalg.pinv(design[picks]) @ logs[picks]  # LIGHT_TRIES x 6 x 3
    res = np.abs(design[None] @ coefs - logs[None]).max(2)
    agree = res < LIGHT_AGREE
    agree = agree[int(np.argmax(agree.sum(1) - 1e-3 * np.minimum(res, 1.0).mean(1)))]
    if agree.sum() < max(12, LIGHT_MAJORITY * len(points)) or agree.all():
        return none
    coef, *_ = np.linalg.lstsq(design[agree], logs[agree], rcond=None)
    off = logs[~agree] - design[~agree] @ coef  # log BGR over the consensus light
    darker, redder = np.median(off.mean(1)) < 0, np.median(off[:, 0] - off[:, 2]) < 0
    return ~agree if darker and redder else none


def fit_light(points: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """Quadratic light field (log colour per channel) through the points, refitted without
    outliers (glare, a hand over the rim); returns its 6 x 3 coefficients. The first fit leaves
    out the samples a hand or a sleeve covers (:func:`_covered_samples`)."""
    keep = ~_covered_samples(points, logs)
    coef = np.zeros((6, 3))
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(light_terms(points[keep]), logs[keep], rcond=None)
        res = np.abs(light_terms(points) @ coef - logs).max(1)
        keep = res < max(LIGHT_AGREE, 2.5 * float(np.median(res)))
        if keep.sum() < 12:
            break
    return coef


def wood_samples(rect: np.ndarray, shown: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sector medians of the bare wood the photo shows (``shown``: per pixel of ``rect``, see
    :func:`vision.pose.in_photo`): (points in the board frame, log BGR, roughness: the standard
    deviation of the grey level, the wood's grain and the photo's noise where no line lies)."""
    _, _, wood = _sampling()
    wood = wood[shown[wood]]
    n = rect.shape[1]
    ys, xs = np.divmod(wood, n)
    u, v = xs / PPU, ys / PPU
    sector = (np.degrees(np.arctan2(v - fg.DISC, u - fg.DISC)) // 10).astype(int) * 2 + \
        (np.hypot(u - fg.DISC, v - fg.DISC) > WOOD_BAND[2])
    pix = rect.reshape(-1, 3)[wood].astype(np.float64)
    pts, logs, rough = [], [], []
    for k in np.unique(sector):
        m = sector == k
        if m.sum() >= 5:
            pts.append((u[m].mean(), v[m].mean()))
            logs.append(np.log(np.median(pix[m], axis=0) + 1.0))
            rough.append(np.std(pix[m].mean(1)))
    return np.array(pts), np.array(logs), np.array(rough)


def _white_mode(feat: np.ndarray, mean: np.ndarray, spread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The white class from its densest cluster. White tiles are one plastic, so in one photo
    they nearly coincide; wood under a glare spot spreads along "more white light" and is
    never that tight, so it must not pull the class (or widen it) towards itself."""
    if len(feat) < 3:
        return mean, spread
    near = (np.abs((feat[:, None, :] - feat[None]) / WHITE_NEIGHBOURHOOD) <= 1).all(2).sum(1)
    if near.max() < 3:
        return mean, spread
    centre = feat[int(np.argmax(near))]
    members = feat[(np.abs((feat - centre) / WHITE_NEIGHBOURHOOD) <= 1).all(1)]
    centre = np.median(members, 0)
    mad = 1.4826 * np.median(np.abs(members - centre), 0)
    return centre, np.clip(mad, SPREAD["W"], MAX_SPREAD["W"])


def _wood_red(feat: np.ndarray, means: np.ndarray, shade: np.ndarray | float = 0.0) -> np.ndarray:
    """Fields whose blueness is nearer the wood's than white plastic's: the wood is red, the
    tiles neutral (far bluer than the wood), whatever the light's brightness. ``shade``: how
    much bluer a shadow over each field makes both (:func:`_shaded_wood`)."""
    return feat[:, 1] < 0.5 * (means[LABELS.index(EMPTY), 1] + means[LABELS.index("W"), 1]) + shade


def _redder_than_plastic(feat: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Fields whose blueness lies more than two of white's spreads below white plastic's (that
    spread is the same in every photo: its floor is its cap). Plastic, black or white, is
    neutral, and so is the lamp's light a highlight adds: under a highlight plastic keeps its
    hue, while the wood's moves towards it, never beyond."""
    return feat[:, 1] < means[LABELS.index("W"), 1] - 2 * MAX_SPREAD["W"][1]


def _shade_hue(points: np.ndarray, logs: np.ndarray, coef: np.ndarray) -> float:
    """How much bluer (log B - log R) the bare wood turns per unit of log darkness where it is
    darker than the light field ``coef`` (a cast shadow: the warm lamp's light is gone, the
    room's remains): the slope through the origin of the wood samples at least SHADE_SAMPLE
    darker than it; 0 where fewer than SHADE_SAMPLES are, or where they are not bluer."""
    rel = logs - light_terms(points) @ coef
    dark, blue = -rel.mean(1), rel[:, 0] - rel[:, 2]
    shaded = dark > SHADE_SAMPLE
    if shaded.sum() < SHADE_SAMPLES:
        return 0.0
    return max(0.0, float(dark[shaded] @ blue[shaded] / (dark[shaded] @ dark[shaded])))


def _shaded_wood(feat: np.ndarray, means: np.ndarray, shade_hue: float) -> np.ndarray:
    """Fields darker than the light field, though not half-way to black plastic, whose blueness
    is nearer that of the wood in as much shade (``shade_hue`` per unit of darkness,
    :func:`_shade_hue`) than white plastic's in it: :func:`_wood_red` where a shadow lies."""
    wood, black = means[LABELS.index(EMPTY), 0], means[LABELS.index("B"), 0]
    depth = wood - feat[:, 0]
    return (depth > 0) & (feat[:, 0] > 0.5 * (wood + black)) & _wood_red(feat, means, shade_hue * depth)


def _classify(feat: np.ndarray, white_ref: np.ndarray | None = None, seen: np.ndarray | None = None) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(label index, confidence, far from every class, the classes' means, read white but less
    blue or brighter than white plastic) per field from (brightness, blueness) of colour / light:
    three Gaussians started at the nominal centres and re-estimated from this photo's ``seen``
    fields (default: all)."""
    seen = np.ones(len(feat), bool) if seen is None else seen
    means = np.array([CENTRES[k] for k in LABELS])
    white = LABELS.index("W")
    if white_ref is not None:
        means[white] = white_ref
    floor = np.array([SPREAD[k] for k in LABELS])
    cap = np.array([MAX_SPREAD[k] for k in LABELS])
    spreads = floor.copy()
    for _ in range(3):
        d = ((feat[:, None, :] - means[None]) / spreads[None]) ** 2
        logp = -0.5 * d.sum(2) - np.log(spreads).sum(1)[None]
        label = np.argmax(logp, 1)
        for j in range(3):
            m = (label == j) & seen
            if m.sum() >= 4:
                nominal = white_ref if j == white and white_ref is not None else np.array(CENTRES[LABELS[j]])
                drift = DRIFT if LABELS[j] != "W" else WHITE_DRIFT  # white's hue follows the wood's
                if j == white and white_ref is not None:
                    drift = WHITE_NEIGHBOURHOOD  # the ring's white tiles showed it
                means[j] = np.clip(0.5 * means[j] + 0.5 * np.median(feat[m], 0), nominal - drift, nominal + drift)
                mad = 1.4826 * np.median(np.abs(feat[m] - np.median(feat[m], 0)), 0)
                spreads[j] = np.clip(mad, floor[j], cap[j])
    if white_ref is None:
        means[white], spreads[white] = _white_mode(feat[(label == white) & seen], means[white], spreads[white])
    d = ((feat[:, None, :] - means[None]) / spreads[None]) ** 2
    logp = -0.5 * d.sum(2) - np.log(spreads).sum(1)[None]
    post = np.exp(logp - logp.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    label = np.argmax(post, 1)
    conf = post.max(1)
    # Far from every class (a hand, a cup, a shadow's edge): not a reading.
    far = np.sqrt(d.sum(2)[np.arange(len(feat)), label]) > OUTLIER
    conf = np.where(far, np.minimum(conf, 0.3), conf)
    # Wood under the lamp's reflection is brighter and a little bluer, but less blue than white.
    glared = (label == white) & _redder_than_plastic(feat, means)
    if white_ref is not None:
        # Many glared fields widen the white class towards themselves: the ring's white tiles,
        # where they show, keep the plastic's own colour (with the widest spread white allows);
        # a field much brighter than they are lies under a highlight.
        off = (feat - white_ref) / MAX_SPREAD["W"]
        glared |= (label == white) & ((np.hypot(*off.T) > OUTLIER) | (off[:, 0] > 2))
    conf = np.where(glared, np.minimum(conf, 0.3), conf)
    return label, conf, far, means, glared


def read_fields(rect: np.ndarray, wood: tuple[np.ndarray, np.ndarray, np.ndarray], white: np.ndarray | None,
                 shown: np.ndarray, white_rough: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label index and confidence per field, and the light field's coefficients. ``wood``: the
    bare wood's samples (:func:`wood_samples`, at least 12 sectors). ``white``,
    ``white_rough``: the ring's white tiles' colour over the wood and the roughness of their
    smoothest quarter, when the ring shows one (see :func:`vision.equilibrix_ring.read_ring`). ``shown``: which
    pixels of ``rect`` the photo shows; a field whose middle it does not show whole is unseen:
    empty but uncertain, and left out of every figure the photo's classes are judged by."""
    cores, bands, _ = _sampling()
    seen = _per_field(shown, lambda middle: middle.all(1))
    if not seen.any():
        raise ReadError("no_board", "the board's fields all lie beyond the photo's edge")
    pix = rect.reshape(-1, 3).astype(np.float64)
    gray = pix.mean(1)
    med = _per_field(pix, lambda middle: np.median(middle, 1))
    clipped = _per_field(pix, lambda middle: np.mean(middle.min(2) >= CLIPPED, 1))
    grey_med = np.maximum(_per_field(gray, lambda middle: np.median(middle, 1)), 1.0)
    outline = np.array([1 - np.mean(gray[b]) / m if len(b) else 0.0 for b, m in zip(bands, grey_med)])
    # The darker part of a field's middle, which a highlight leaves alone: its colour, and how
    # much darker than the middle's it is (plastic is flat; wood keeps its grain under glare).
    dark = _per_field(pix, _darkest_part)
    grain = _per_field(gray, lambda middle: np.percentile(middle, 10, axis=1)) / grey_med
    pts, logs, wood_rough = wood
    centres = fg.centroids()
    label = np.zeros(len(cores), int)
    conf = np.zeros(len(cores))
    coef = np.zeros((6, 3))
    for _ in range(2):
        coef = fit_light(pts, logs)
        rel = np.log(med + 1.0) - light_terms(centres) @ coef  # log BGR over the wood's
        feat = np.column_stack([rel.mean(1), rel[:, 0] - rel[:, 2]])
        label, conf, far, means, glared = _classify(feat, white, seen)
        sure_empty = (label == 0) & (conf > 0.9) & seen
        pts = np.vstack([pts, centres[sure_empty]])
        logs = np.vstack([logs, np.log(med[sure_empty] + 1.0)])
    by_colour = label.copy()
    # Read white but as red as the wood (glared wood; shadowed wood, darker than the light field
    # says, is far from every class and may fall to white's wider spread): empty, not surely.
    label = np.where(glared & _wood_red(feat, means), 0, label)
    # A hand or a sleeve has shading and creases; wood and plastic are smooth in a field's middle.
    rough = _per_field(gray, lambda middle: np.std(middle, 1))
    # The usual roughness is the board's (most fields are bare wood or plastic, whatever a hand
    # covers): a class's own median would be the hand's when the hand is most of that class.
    rough_mask = rough > max(TEXTURE_RATIO * np.median(rough[seen]), TEXTURE_FLOOR)
    conf = np.where(rough_mask, np.minimum(conf, 0.3), conf)
    # Glare: a washed-out middle may be wood under the lamp's reflection.
    conf = np.where((clipped > 0.3) & (label != 1), np.minimum(conf, 0.3), conf)
    # A black tile under a highlight: its middle's mean looks white or like wood, but the part
    # the highlight misses stays black. Black is the reading, not a sure one. White plastic is
    # brighter than the wood, even in its darkest part, so a field read white needs a less dark
    # part for that than one read empty (wood has dark grain).
    # The dark part is black plastic only if it is neutral, as plastic is: one as red as the wood
    # is a finger, a sleeve or the wood beside it at the field's edge (a white tile a fingertip
    # half covers has a dark quarter of skin, and keeps its white reading, in doubt).
    dark_log = np.log(dark + 1.0) - light_terms(centres) @ coef
    dark_rel = dark_log.mean(1)
    dark_feat = np.column_stack([dark_rel, dark_log[:, 0] - dark_log[:, 2]])
    partly_dark = (label != 1) & (dark_rel < np.where(label == 2, PARTLY_BLACK_WHITE, PARTLY_BLACK))
    label = np.where(partly_dark & ~_wood_red(dark_feat, means), 1, label)
    conf = np.where(partly_dark, np.minimum(conf, 0.3), conf)
    # Wood under a highlight turns as bright and neutral as white plastic but keeps its grain,
    # and a highlight across a black tile leaves a darker edge: a white field's middle whose
    # darkest tenth lies more than twice as far below it as white tiles' usually does (the
    # photo's noise) is not sure.
    white = (label == 2) & seen
    if white.sum() >= 3:
        usual = float(np.median(grain[white]))
        conf = np.where(white & (grain < usual - max(WHITE_GRAIN, 1.0 - usual)), np.minimum(conf, 0.3), conf)
    # White plastic is flat, smoother than the wood's grain. A field read white whose middle is
    # far rougher than the bare wood round the flower (where no tile or drawn line lies) holds
    # more than plastic: a drawn line, or the wood or a tile beside it, where the pose is off by
    # more than a middle's margin from the lines (fitted through the pieces of one corner a
    # hand left in sight). The fields' own roughness cannot tell: the lines then cross most
    # middles, and their median is the lines'.
    lined = white & (rough > max(TEXTURE_RATIO * float(np.median(wood_rough)), TEXTURE_FLOOR))
    conf = np.where(lined, np.minimum(conf, 0.3), conf)
    # White plastic is flat: in one photo its fields are about as rough as the photo's noise, and
    # the smoothest quarter of the fields read white are plastic, however many others are read
    # white. A field read white several times rougher than they are and at least a share of the
    # bare wood's grain is wood made bright and grey (a phone's tone map lifts the wood beside a
    # black tile, a highlight washes it) or plastic under an edge: not sure. Every field read
    # white may be such wood (a board holding no white tile): the ring's white tiles, where they
    # show, are white plastic for sure, and the smoother of both references is the plastic's,
    # whether or not the board holds white tiles too. (A ring tile a highlight partly clips is
    # smoother still: then more white fields are in doubt, none made sure.)
    sure_empty = (label == 0) & (conf >= UNCERTAIN_BELOW) & seen
    grained = np.zeros(len(cores), bool)
    if (white.sum() >= 3 or (white_rough is not None and white.any())) and sure_empty.sum() >= 5:
        smooth = float(np.percentile(rough[white], 25))
        plastic = PLASTIC_ROUGH * (smooth if white_rough is None else min(smooth, white_rough)) + ROUGH_FLOOR
        grained = white & (rough > plastic) & (rough > WOOD_ROUGH * np.median(rough[sure_empty]))
        conf = np.where(grained, np.minimum(conf, 0.3), conf)
    # An empty field shows its drawn outline; one under a hand or a cup does not.
    empty = label == 0
    usual = np.median(outline[empty & seen]) if (empty & seen).sum() >= 5 else 0.2
    hidden = empty & (outline < OUTLINE_SHARE * usual)
    conf = np.where(hidden, np.minimum(conf, 0.3), conf)
    # A hand covers fields together: skin that looks like wood beside fields it covers (rough,
    # their outline hidden, or far from every class) is no sure empty field. Doubt of other
    # kinds (between two classes, glare) does not spread: it is not something lying there.
    covered = (rough_mask | hidden | far) & seen
    doubtful = (_neighbours() @ covered) >= HIDDEN_AROUND * _neighbours().sum(1)
    conf = np.where(empty & doubtful, np.minimum(conf, 0.3), conf)
    # A black tile is the darkest thing in its field: the gap round it and the line beside it
    # are lighter than its middle, whatever the light. A field read black by its colour whose
    # outline is not lighter is not surely black; one whose drawn outline shows as an empty
    # field's does (darker than its middle, as on bare wood and white plastic) is a darker patch
    # of the board (a hard shadow, which the light field's smooth surface cannot follow): empty
    # if its colour is as red as the wood's, and not surely. Neutral (plastic) in a shadow, it
    # is white only if its outline shows at least half as much as an empty field's: white
    # plastic, brighter than the wood, shows the drawn line at least as well, while a black
    # tile's outline is lighter than its middle (0 or less) but for a shadow's edge across it.
    # Not so where the darkest quarter is black plastic, as dark as a black tile and neutral: a
    # shadow or a finger at the field's edge is as red as the wood, so that part is the tile the
    # finger leaves in sight (its outline is the finger's edge).
    read_black = by_colour == 1
    conf = np.where(read_black & (outline > BLACK_OUTLINE), np.minimum(conf, 0.3), conf)
    neutral_label = np.where(outline > WHITE_OUTLINE * usual, 2, 1)
    black_part = (dark_rel < PARTLY_BLACK) & ~_wood_red(dark_feat, means)
    shadowed = read_black & (outline > DRAWN_OUTLINE * usual) & ~black_part
    label = np.where(shadowed, np.where(_wood_red(feat, means), 0, neutral_label), label)
    # What covers a field (a hand, a sleeve, a shadow's edge) is read by its brightness as black
    # or white, but white plastic is neutral, far bluer over the wood's light than wood or skin,
    # and so is black plastic where this photo's sure black fields show it (a phone's colour
    # processing can leave black as red as the wood). A covered field as red as the wood is best
    # guessed empty, as most fields are (still uncertain: covered fields are), unless read black
    # with a darkest quarter of black plastic (a finger over a black tile's edge: see above).
    skin = covered & (label == 2) & _wood_red(feat, means)
    sure_black = (label == 1) & (conf >= UNCERTAIN_BELOW) & seen
    if sure_black.sum() >= 3:
        wood_hue, black_hue = means[0, 1], float(np.median(feat[sure_black, 1]))
        if black_hue - wood_hue > BLACK_HUE_GAP:
            skin |= (covered & (label == 1) & (feat[:, 1] < wood_hue + SKIN_SHARE * (black_hue - wood_hue))
                     & ~black_part)
    label = np.where(skin, 0, label)
    # A highlight across a field leaves its darkest part least changed, and added white light
    # moves the wood's colour towards the lamp's, never beyond: wood there stays redder than
    # white plastic, which (like a black tile under white light) is neutral. A doubtful field
    # read white whose middle a highlight partly clips, but whose darkest part is as red as the
    # wood and nearer the wood's brightness than white's, is best guessed empty (still doubtful).
    glared_part = _per_field(pix, lambda middle: np.mean(middle.max(2) >= CLIPPED, 1)) >= GLARE_PART
    washed_wood = (glared_part & (label == 2) & (conf < UNCERTAIN_BELOW) & _wood_red(dark_feat, means)
                   & (dark_rel < 0.5 * (means[LABELS.index(EMPTY), 0] + means[LABELS.index("W"), 0])))
    label = np.where(washed_wood, 0, label)
    # Grey plastic. White plastic is brighter than the wood in any light the two share, and a
    # reflection adds more to it than to the wood (the tiles are glossier). A black tile under a
    # soft reflection turns grey: neutral, between black and the wood, and its gap no longer
    # shows lighter than its middle, so its colour alone may lie nearer white's than black's,
    # or the shadow rule above takes it for shadowed white plastic. A doubtful neutral field
    # read white yet darker than the bare wood round it is best guessed black (still doubtful).
    # The wood round it, not the light field, is the reference: a white tile in a shadow the
    # smooth light field does not follow is dimmer than the light field says, and so is the
    # wood beside it.
    # Under a highlight that clips part of the middle the mean is washed out, but the darkest
    # part, which the highlight misses, keeps the tile's own light: as neutral and no brighter
    # than the darkest part of the wood round it, it is no white plastic but a black tile.
    # A field read surely white but not brighter than the wood round it by half of what white
    # plastic lies above the wood is no sure white tile (a black tile under a soft reflection
    # that lifts the wood round it too): doubtful, and judged as grey plastic below.
    lift = 0.5 * (means[LABELS.index("W"), 0] - means[LABELS.index(EMPTY), 0])
    sure_white = (label == 2) & (conf >= UNCERTAIN_BELOW) & seen
    dim = sure_white & (feat[:, 0] < _wood_round(feat[:, 0], (label == 0) & seen, sure_white) + lift)
    conf = np.where(dim, np.minimum(conf, 0.3), conf)
    pale = (label == 2) & (conf < UNCERTAIN_BELOW) & seen & ~_wood_red(feat, means)
    grey = pale & (feat[:, 0] < _wood_round(feat[:, 0], (label == 0) & seen, pale))
    lit = pale & glared_part & ~_wood_red(dark_feat, means)
    grey |= lit & (dark_rel < _wood_round(dark_rel, (label == 0) & seen, lit))
    label = np.where(grey, 1, label)
    # Wood in a cast shadow: the lamp's warm light is gone there and the room's remains, so the
    # wood turns darker and bluer together, and a field of it, far from every class, may fall to
    # white or black, neither of which is as red as the shaded wood. A doubtful field read in a
    # colour, darker than the light field though not half-way to black plastic, whose hue
    # is nearer the wood's in that much shade than white plastic's (the bare wood round the
    # flower says how much bluer the shade makes it) and whose drawn outline shows, is best
    # guessed empty (still doubtful). White plastic in the same shade keeps its own lead in
    # blueness, and a black tile's outline is lighter than its middle; a field whose darkest
    # quarter is black plastic keeps black (a finger over a black tile: see above).
    shade = (label != 0) & (conf < UNCERTAIN_BELOW) & seen & (outline > DRAWN_OUTLINE * usual) & ~black_part
    shade &= _shaded_wood(feat, means, _shade_hue(pts, logs, coef))
    label = np.where(shade, 0, label)
    # The five-dot rule: a node never holds more than five fields of one colour, six with the
    # 5+1 token. More read round a node (a highlight across it, a shadow) means some of them are
    # misread, and which cannot be told: all of that colour there are doubtful.
    # Fields read so by colour alone count too: a shadow over a node is just what crowds it.
    for j in (1, 2):
        mine = (label == j) & seen
        crowded = (_node_fields() @ (mine | ((by_colour == j) & seen)).astype(np.float64)) > equilibrix.DOTS + 1
        conf = np.where(mine & (_node_fields()[crowded].sum(0) > 0), np.minimum(conf, 0.3), conf)
    # Wood under a highlight: its hue moves towards the lamp's, that of plastic, but stays
    # redder, and it keeps its grain. A doubtful field read white and clearly redder than
    # plastic, where a highlight shows (it clips part of the middle, or the field keeps the
    # wood's grain), is best guessed empty. The hue alone is not enough: white tiles in a
    # shadow the smooth light field misses can look as red over it. Only where the blue channel
    # is not clipped: a clipped red channel only makes a field look bluer than it is, a clipped
    # blue one redder (white plastic under a cool lamp). Last, so that no doubt above depends
    # on it.
    wood = glared & (glared_part | grained) & (label == 2) & (conf < UNCERTAIN_BELOW) & (med[:, 0] < CLIPPED)
    label = np.where(wood & _redder_than_plastic(feat, means), 0, label)
    # Nor is a field among covered ones sure when read in the colour of a covered or doubtful
    # field beside it: a mug standing on the board lends its own colour to the fields at its
    # edge, whose outline its rim or its side may draw (a dark mug's side, read black over bare
    # fields as surely as a tile; a pale mug's rim, read white but rough). Here a field read
    # black by its colour with no tile's lighter gap round it counts as covered too: a dark mug
    # hides the fields under it as black, smooth and outlineless. Last, so that no guess above
    # leans on the doubt.
    hiding = covered | (read_black & (outline > BLACK_OUTLINE) & seen)
    among = (_neighbours() @ hiding) >= HIDDEN_AROUND * _neighbours().sum(1)
    lender = hiding | ((conf < UNCERTAIN_BELOW) & seen)
    lent = _neighbours() @ (lender[:, None] & (label[:, None] == np.arange(len(LABELS)))) > 0
    conf = np.where(among & lent[np.arange(len(label)), label], np.minimum(conf, 0.3), conf)
    return np.where(seen, label, 0), np.where(seen, conf, 0.0), coef


@lru_cache(maxsize=1)
def _node_fields() -> np.ndarray:
    """Which fields touch which node (37 x 144, 0/1): a field has a tip at each of its nodes."""
    index = {f: i for i, f in enumerate(fg.fields())}
    out = np.zeros((len(flower.NODES), len(index)))
    for n, node in enumerate(flower.NODES):
        out[n, [index[f] for f in flower.fields_at(node) if f in index]] = 1  # the board's, of the lattice's 12
    return out


@lru_cache(maxsize=1)
def _neighbours() -> np.ndarray:
    """Which fields lie next to which (144 x 144, 0/1): centroids within NEIGHBOUR_R."""
    c = fg.centroids()
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    return ((d < NEIGHBOUR_R) & (d > 0)).astype(np.float64)


@lru_cache(maxsize=1)
def _round_about() -> np.ndarray:
    """Which fields lie round which (144 x 144, bool): its neighbours and theirs, not itself."""
    near = _neighbours()
    out = (near @ near + near) > 0
    np.fill_diagonal(out, False)
    return out


def _wood_round(bright: np.ndarray, empty: np.ndarray, which: np.ndarray) -> np.ndarray:
    """For each field ``which`` selects, the brightness (over the light field) of the bare wood
    round it: the median over the fields read empty among its neighbours and theirs; NaN
    where fewer than WOOD_ROUND are. Unlike the light field's smooth surface, it follows a
    shadow or a reflection lying over a few fields."""
    out = np.full(len(bright), np.nan)
    for i in np.flatnonzero(which):
        wood = _round_about()[i] & empty
        if wood.sum() >= WOOD_ROUND:
            out[i] = np.median(bright[wood])
    return out
