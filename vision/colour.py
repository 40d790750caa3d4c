"""Classify board cells by colour, adapting to each photo's white balance, light and glare.

Why adaptive: fixed thresholds fail because white balance, exposure, shadows and the lamp's
colour change from photo to photo. The one reference every photo carries is the board
itself: its empty cells are one neutral plastic. So:

1. *Light field from the board*: the board's empty cells give the local colour and
   brightness of the light (a smooth field over the board, so a shadow or a warm lamp on
   one side is divided out, not only a global cast). The first guess of "empty" is the least
   saturated cells of middling brightness.
2. *Glare*: a specular highlight adds white light, raising *all* channels; coloured plastic
   never has all three above the board's grey. Such pixels (or pixels clipped in all three
   channels) are ignored, and of the rest only the half with the least white added is
   used. A cell whose middle is all glare falls back to its outer ring; a cell with nothing
   left has no evidence at all and is uncertain, never guessed empty.
3. *Classes adapt*: each class is a Gaussian in CIE L*a*b*, colours started at the palette's
   nominal hue, re-estimated from this photo's cells (bounded to stay near that hue), so a
   yellowish light or a different batch of plastic moves the clusters, not the answers.
   The empty class is kept tight: after dividing out the light, every empty cell is the
   board's own grey, so a hand or a cup stands out even where it has no colour.
4. *Confidence*: the posterior of the best class, lowered when the cell is far from every
   class (a hand, a cup, a held piece) or mostly lost to glare.
5. *A table's profile* (optional, ``prior``; see ``calibration.colours``): what this
   table's board and plastic looked like when calibrated. It seeds the board's grey (when
   more cells of this photo agree with it than with the photo's own first guess), anchors
   each colour at its real hue here rather than the nominal one, and gives a class with too
   few cells in this photo its learned centre and spread instead of a guess at the nominal
   hue. Without a profile nothing of this applies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol

import cv2
import numpy as np

NEUTRAL = 0.5  # the board's grey is mapped to this level (lower if bright plastic would clip)
GLARE_LEVEL = 1.55  # all channels above this multiple of the board's grey: specular light
CLIP = 0.98  # raw values at or above this are clipped by the sensor
EMPTY_CHROMA = 12.0  # first split only: a*b* chroma of an empty cell after normalisation
MAX_HUE_DRIFT = np.deg2rad(25.0)  # how far a colour's cluster may move from its nominal hue
LIGHT_SIGMA = 2.5  # smoothness of the light field, in cells
# Largest a*b* standard deviation of the empty class and of a colour: the board is one
# plastic and the light is divided out, so empty cells stay tight; a hand or a cup must not
# widen the empty class until it looks like part of the board.
MAX_SPREAD = (6.0, 15.0)
# Smallest spreads: sensor noise and plastic mottling; a piece's colour also varies with its
# thickness and the light through it, an empty cell's hardly at all.
MIN_SPREAD = (1.5, 6.0)
# The same for lightness L*: the light field makes every empty cell the board's own grey, so
# a dark hand or a white cup is out of place even when it has no colour; pieces vary more.
MIN_SPREAD_L, MAX_SPREAD_L = (4.0, 6.0), (10.0, 20.0)
PRIOR_GREY_TOLERANCE = 0.15  # log-ratio, every channel: a cell this close to a grey supports it
PRIOR_MIN_CHROMA = 10.0  # a profile colour this grey says nothing about its hue
DULL_SHARE = 0.5  # a translucent colour is taught only by cells this share of the colour cells' typical chroma
VIVID_SHARE = 1.5  # ... and at most this share of the colours' own typical (more: an opaque glaze, a mug's)
FILTER_MARGIN_L = 4.0  # L*: how much lighter than the board a translucent colour's cell may read (noise)


class Prior(Protocol):
    """What ``classify`` takes from a table's colour profile (``calibration.colours.ColourPrior``):
    per label, empty first, a*b* centre and spread and L* in the light-free feature space;
    and the empty board's BGR (0-1) under the latest light."""

    labels: tuple[str, ...]
    means_ab: np.ndarray
    spreads: np.ndarray
    lightness: np.ndarray
    board_grey: np.ndarray


@dataclass(frozen=True)
class Palette:
    """The classes of a board: the empty cell's label and each colour's nominal sRGB.

    Only the *hue* of a nominal colour is used (as a starting point that each photo refines),
    so the values describe "a red", not a particular batch of plastic.
    """

    empty: str
    colours: Mapping[str, tuple[int, int, int]]

    @property
    def labels(self) -> tuple[str, ...]:
        return (self.empty, *self.colours)

    def hues(self) -> np.ndarray:
        """Nominal hue angles (radians) in the a*b* plane, in ``colours`` order."""
        rgb = np.array([[c for c in self.colours.values()]], np.float32)[..., ::-1] / 255.0
        lab = cv2.cvtColor(rgb, cv2.COLOR_BGR2Lab)[0]
        return np.arctan2(lab[:, 2], lab[:, 1])


@dataclass(frozen=True)
class CellColours:
    """Per-cell class probabilities; ``labels[0]`` is the empty class."""

    labels: tuple[str, ...]
    posterior: np.ndarray  # rows x cols x K, sums to 1
    confidence: np.ndarray  # rows x cols, 0-1

    def best(self) -> np.ndarray:
        return np.argmax(self.posterior, axis=2)

    def letters(self) -> list[str]:
        table = np.array(self.labels)
        return ["".join(row) for row in table[self.best()]]


def _lab(bgr: np.ndarray) -> np.ndarray:
    flat = np.clip(bgr, 0.0, 1.0).reshape(-1, 1, 3).astype(np.float32)
    return cv2.cvtColor(flat, cv2.COLOR_BGR2Lab).reshape(bgr.shape)


def _initial_neutral(med: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """The board's grey: the least saturated quarter of the unclipped cells, of middling
    brightness (glare-whitened pieces are as unsaturated as the board, but brighter).

    Under a coloured lamp the board is no longer the least saturated thing on it: a dark piece
    may be as dull (a blue filter under an orange lamp; Gemblo's seed 5 `warm_light` #0: the
    quarter held 86 of the board's cells and 72 of blue's, the middling ones taken for the grey
    were mostly blue, and the bare board then read red, blue empty). So the quarter's darker and
    lighter halves are grey candidates too, and the grey is whichever of the three most unclipped
    cells agree with (:func:`_agreeing`; the middling one where they tie): the board is the one
    grey every empty cell shows, a piece's colour only its own cells."""
    sat = (med.max(-1) - med.min(-1)) / (med.max(-1) + 0.02)
    ok = ~clipped.ravel()
    flat, bright = med.reshape(-1, 3)[ok], med.max(-1).ravel()[ok]
    if len(flat) < 4:
        return np.median(med.reshape(-1, 3), axis=0)
    grey = np.argsort(sat.ravel()[ok])[:max(4, len(flat) // 4)]
    lo, hi = np.percentile(bright[grey], [20, 70])
    pick = grey[(bright[grey] >= lo) & (bright[grey] <= hi)]
    cut = np.median(bright[grey])
    halves = [grey[side] for side in (bright[grey] < cut, bright[grey] >= cut) if side.sum() >= 4]
    candidates = [np.median(flat[part], axis=0) for part in (pick if len(pick) else grey, *halves)]
    return max(candidates, key=lambda candidate: int(_agreeing(flat, candidate).sum()))


def _agreeing(flat: np.ndarray, grey: np.ndarray) -> np.ndarray:
    """(n,) which of the cells ``flat`` (n x 3 BGR) lie within PRIOR_GREY_TOLERANCE of ``grey`` in
    every channel (log-ratio): the cells that support it as the board's grey."""
    gap = np.abs(np.log(np.maximum(flat, 1e-3)) - np.log(np.maximum(grey, 1e-3))).max(-1)
    return gap < PRIOR_GREY_TOLERANCE


def _prior_neutral(med: np.ndarray, clipped: np.ndarray, own: np.ndarray, grey: np.ndarray) -> np.ndarray:
    """The board's grey given the profile's: whichever of the profile's grey and the photo's
    own first guess more unclipped cells agree with (a late-game board is mostly plastic,
    so the own guess may be a piece; a profile from another light is simply outvoted).
    The profile's grey, when chosen, is refined to the median of the cells that agree."""
    flat = med.reshape(-1, 3)[~clipped.ravel()]
    grey = np.asarray(grey, np.float64)
    if not np.isfinite(grey).all() or len(flat) == 0:
        return own
    near = _agreeing(flat, grey)
    if near.sum() < max(4, int(_agreeing(flat, own).sum())):
        return own
    return np.median(flat[near], axis=0).astype(own.dtype)


def _prior_classes(prior: Prior, palette: Palette, hues: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The profile aligned to ``palette.labels``: means (K x 3, NaN rows for classes the
    profile lacks), a*b* spreads (K) and the hue anchors (the profile's hue where it has one)."""
    k = len(palette.labels)
    means, spreads, hues = np.full((k, 3), np.nan), np.full(k, np.nan), hues.copy()
    index = {label: i for i, label in enumerate(prior.labels)}
    for j, label in enumerate(palette.labels):
        i = index.get(label)
        if i is None:
            continue
        ab = np.asarray(prior.means_ab[i], np.float64)
        means[j] = [float(prior.lightness[i]), *ab]
        spreads[j] = float(prior.spreads[i])
        if j > 0 and np.hypot(*ab) >= PRIOR_MIN_CHROMA:
            hues[j - 1] = np.arctan2(ab[1], ab[0])
    return means, spreads, hues


def _light_field(raw: np.ndarray, weight: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Smooth per-cell light colour from the empty cells (normalised convolution in log)."""
    logv = np.log(np.maximum(raw, 1e-3)).astype(np.float32)
    w = weight.astype(np.float32)
    blur = lambda x: cv2.GaussianBlur(x, (0, 0), LIGHT_SIGMA, borderType=cv2.BORDER_REFLECT)  # noqa: E731
    den = blur(w)
    field = np.exp(np.dstack([blur(logv[..., c] * w) for c in range(3)]) / np.maximum(den, 1e-6)[..., None])
    trust = np.clip(den / 0.15, 0, 1)[..., None]  # far from any empty cell: the global grey
    return field * trust + fallback * (1 - trust)


def _neutral_field(raw: np.ndarray, feat: np.ndarray, unseen: np.ndarray, field: np.ndarray) -> np.ndarray:
    """The first light field, taught by every cell that is neutral under ``field`` (the photo's
    one grey) whatever its lightness; ``field`` itself when fewer than 4 are.

    Under a deep shadow the board's empty cells are two greys, a lit one and a shaded one, both
    without colour. Left to the classes, the tight empty class keeps one of them (the more
    numerous) and the other grey goes to whichever colour's class is dark and wide enough to take
    it; a light field taught only by the kept grey then never learns the other light, and the
    cells along the shadow's edge stay "a dark colour" round after round (a band of empty cells
    read red). Chroma, unlike lightness, survives a shadow, so the first field is taught by
    every cell with the chroma of an empty one, and the classes then start from the board's own
    light on both sides of the shadow's edge. A piece dull enough to pass is outvoted by the
    empty cells round it in the smooth field, and later rounds learn from the classes again.
    """
    grey = (np.hypot(feat[..., 1], feat[..., 2]) < EMPTY_CHROMA) & ~unseen
    if grey.sum() < 4:
        return field
    return _light_field(raw, grey, field)


def _cell_colours(pix: np.ndarray, field: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median colour of the least glare-touched half of each cell's usable pixels, divided
    by the light (the board's grey becomes 1, 1, 1), and the usable share; NaN if none.

    ``pix`` is channel-major (rows, cols, 3, n) so every sort runs along contiguous memory.
    """
    norm = pix / field[..., None]
    white = np.minimum(np.minimum(norm[:, :, 0], norm[:, :, 1]), norm[:, :, 2])
    # One clipped channel is just bright plastic (a yellow's red); all three is glare.
    dullest = np.minimum(np.minimum(pix[:, :, 0], pix[:, :, 1]), pix[:, :, 2])
    usable = (dullest < CLIP) & (white < GLARE_LEVEL)
    keep_n = (usable.sum(-1) + 1) // 2
    ranked = np.sort(np.where(usable, white, np.inf), axis=-1)
    cut = np.take_along_axis(ranked, np.maximum(keep_n - 1, 0)[..., None], axis=-1)
    chosen = usable & (white <= cut)
    vals = np.sort(np.where(chosen[:, :, None], norm, np.inf), axis=-1)
    n_chosen = chosen.sum(-1)
    mid = np.broadcast_to((np.maximum(n_chosen - 1, 0) // 2)[:, :, None, None], n_chosen.shape + (3, 1))
    med = np.take_along_axis(vals, mid, axis=-1)[..., 0]
    med[n_chosen == 0] = np.nan
    return med, usable.mean(-1)


def _features(inner: np.ndarray, ring: np.ndarray, field: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell L*a*b* (light removed) from the middle, or middle + ring where the middle is
    mostly glare; and the usable share. Cells with nothing usable get a neutral colour."""
    med, usable = _cell_colours(inner, field)
    weak = (usable < 0.2) | np.isnan(med).any(-1)
    if weak.any():
        both = np.concatenate([inner[weak], ring[weak]], axis=-1)[None]
        m2, u2 = _cell_colours(both, field[weak][None])
        med[weak] = m2[0]
        usable = usable.copy()
        usable[weak] = np.maximum(usable[weak], 0.5 * u2[0])
    med = np.where(np.isnan(med), 1.0, med)
    # Lab wants 0-1: lower the level if the brightest plastic would clip (its hue would bend).
    level = min(NEUTRAL, 1.0 / max(float(np.percentile(med.max(-1), 99)), 1e-6))
    return _lab(med * level), usable


def _weighted_median(x: np.ndarray, w: np.ndarray) -> float:
    order = np.argsort(x)
    cum = np.cumsum(w[order])
    return float(x[order][np.searchsorted(cum, 0.5 * cum[-1])])


def _weighted_gaussian(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = (w[:, None] * x).sum(0) / max(w.sum(), 1e-9)
    d = x - mu
    return mu, (w[:, None, None] * d[:, :, None] * d[:, None, :]).sum(0) / max(w.sum(), 1e-9)


def _fit_classes(lab: np.ndarray, resp: np.ndarray, hues: np.ndarray,
                 learned: tuple[np.ndarray, np.ndarray] | None = None,
                 translucent: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Means (K x 3) and covariances (K x 3 x 3) in L*a*b* from soft assignments (N x K).

    ``learned``: a profile's means (K x 3, NaN where unknown) and a*b* spreads (K), used for a
    class with too few cells instead of the guess at its nominal hue. ``translucent``: the
    colours are filters over the board (Gemblo), so no cell lighter than the board's own grey
    teaches a colour: coloured plastic over the board only takes light away, and what is
    lighter is something else (a pink mug, a lit hand). Nor does a cell much duller than the
    colour cells' typical chroma (DULL_SHARE): the plastics are all strongly tinted, a mug's
    shadow or a dark shadowed cell is not, and it must not become a colour's cluster (purple
    turned grey, and the real purple then read as blue). Nor does a cell much more saturated
    than the colours' typical chroma, each colour counted once (VIVID_SHARE): the plastics are
    filters of one thickness over one grey board, so their tints lie within a few tens of
    percent of each other in chroma, while an opaque glaze shows its full colour. A blue mug's
    side, twice as saturated as the pieces, became blue's cluster (a colour's core is its most
    saturated half), and the blue pieces were read purple at full confidence. Each colour
    counts once because a board of mostly one colour would set the bar at that colour's chroma
    (seed 2's `hard` #2, mostly green, the dullest plastic: every other colour 2.1-2.5 times it).
    A colour with too few cells is placed at its nominal hue turned as far as the photo's
    other colours have turned.
    """
    k = resp.shape[1]
    means = np.zeros((k, 3))
    covs = np.zeros((k, 3, 3))
    ab = lab[:, 1:]
    chroma = np.hypot(*ab.T)
    colour = resp[:, 1:].sum(1) > 0.5
    typical = float(np.median(chroma[colour])) if colour.sum() >= 4 else 50.0
    typical_l = float(np.median(lab[colour, 0])) if colour.sum() >= 4 else 50.0
    vivid = np.inf  # translucent colours only: an opaque colour's cells may be as vivid as they come
    if translucent:
        each = [_weighted_median(chroma, resp[:, j]) for j in range(1, k) if resp[:, j].sum() >= 4]
        vivid = VIVID_SHARE * (float(np.median(each)) if each else typical)
    guessed: list[int] = []  # colours with too few cells here, placed at a guess
    for j in range(k):
        w = resp[:, j]
        if translucent and j > 0:
            w = w * (lab[:, 0] <= means[0, 0] + FILTER_MARGIN_L) * (chroma >= DULL_SHARE * typical) \
                * (chroma <= vivid)
        floor = np.array([MIN_SPREAD_L[j > 0]] + [MIN_SPREAD[j > 0]] * 2)
        if w.sum() >= 4:
            # Start tight at the class's core and grow by trimmed re-estimation, so a hand or
            # glare-shifted cells next to a colour cannot pull the class over to themselves.
            # A colour's core is its most saturated half: pieces are the most saturated
            # things on a board, an occluder of similar hue is duller.
            core = w
            if j > 0:
                core = w * (chroma >= _weighted_median(chroma, w))
            mu = np.array([_weighted_median(lab[:, i], core) for i in range(3)])
            cov = np.diag((floor + 2.0) ** 2)
            for _ in range(3):
                d = np.sqrt(np.einsum("ni,ij,nj->n", lab - mu, np.linalg.inv(cov), lab - mu))
                keep = w * (d < 3.0)
                if keep.sum() < 2:
                    break
                mu, cov = _weighted_gaussian(lab, keep)
                cov = cov + np.diag(floor ** 2) * 0.25
        elif learned is not None and np.isfinite(learned[0][j]).all() and np.isfinite(learned[1][j]):
            mu = learned[0][j].copy()
            sd = np.array([floor[0] * 2, *[max(float(learned[1][j]), floor[1])] * 2])
            cov = np.diag(sd ** 2)
        else:
            if j == 0:
                mu = np.array([typical_l, 0.0, 0.0])
            else:
                mu = np.array([typical_l, *(typical * np.array([np.cos(hues[j - 1]), np.sin(hues[j - 1])]))])
            cov = np.diag((floor * 2) ** 2)
            if j == 0:  # no empty cell seen: its brightness is unknown
                cov[0, 0] = 50.0 ** 2
            else:
                guessed.append(j)
        if j > 0:  # keep each colour near its nominal hue, however the photo's cells fell
            ang = np.arctan2(mu[2], mu[1])
            drift = np.angle(np.exp(1j * (ang - hues[j - 1])))
            if abs(drift) > MAX_HUE_DRIFT:
                ang = hues[j - 1] + np.sign(drift) * MAX_HUE_DRIFT
                mu[1:] = max(np.hypot(mu[1], mu[2]), 15.0) * np.array([np.cos(ang), np.sin(ang)])
        evals, evecs = np.linalg.eigh(cov)
        top = np.array([MAX_SPREAD_L[j > 0]] + [MAX_SPREAD[j > 0]] * 2)
        evals = np.clip(evals, floor.min() ** 2, top.max() ** 2)
        cov = (evecs * evals) @ evecs.T
        sd = np.clip(np.sqrt(np.diag(cov)), floor, top)  # per-axis bounds, correlations kept
        corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
        means[j], covs[j] = mu, corr * np.outer(sd, sd)
    seen = [j for j in range(1, k) if j not in guessed]
    if translucent and guessed and seen:
        # A colour this photo hardly shows is placed where the others say the light has moved
        # the plastics' hues: its nominal hue turned by their median drift.
        drift = float(np.median([np.angle(np.exp(1j * (np.arctan2(means[j, 2], means[j, 1]) - hues[j - 1])))
                                 for j in seen]))
        for j in guessed:
            means[j, 1:] = typical * np.array([np.cos(hues[j - 1] + drift), np.sin(hues[j - 1] + drift)])
    return means, covs


def _posterior(x: np.ndarray, means: np.ndarray, covs: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class posteriors (N x K) and Mahalanobis distances (N x K)."""
    inv = np.linalg.inv(covs)
    d = x[:, None, :] - means[None]
    m2 = np.einsum("nki,kij,nkj->nk", d, inv, d)
    logp = -0.5 * m2 - 0.5 * np.log(np.linalg.det(covs))[None] + np.log(prior)[None]
    logp -= logp.max(1, keepdims=True)
    p = np.exp(logp)
    return p / p.sum(1, keepdims=True), np.sqrt(m2)


def classify(inner: np.ndarray, ring: np.ndarray, palette: Palette, rounds: int = 3,
             prior: Prior | None = None, shown: np.ndarray | None = None, translucent: bool = False) -> CellColours:
    """Classify cells from their pixels (``sampling.cell_samples``: rows x cols x n x 3 BGR).

    ``prior``: a table's colour profile (``ColourProfile.prior()``), see the module notes.
    ``shown``: rows x cols bool, the cells where the board itself shows (its grid is seen);
    only these teach the light field and the classes, so a hand or a cup over the board
    cannot become the board's grey or stretch a colour. All cells are still classified.
    ``translucent``: the colours are filters laid on the board (see :func:`_fit_classes`).
    The first light field is taught by every neutral cell, whatever its lightness
    (:func:`_neutral_field`: a deep shadow's lit and shaded greys both).
    """
    rows, cols = inner.shape[:2]
    hues = palette.hues()
    learned = None
    if prior is not None:
        means, spreads, hues = _prior_classes(prior, palette, hues)
        learned = (means, spreads)
    k = len(palette.labels)
    inner = np.ascontiguousarray(inner.transpose(0, 1, 3, 2))  # channel-major: fast sorts
    ring = np.ascontiguousarray(ring.transpose(0, 1, 3, 2))
    raw_med = np.median(inner, axis=-1)
    clipped = (inner.min(2) >= CLIP).mean(-1) > 0.2  # mostly glare even before any light model
    told = shown is not None and shown.sum() >= 4
    unseen = clipped | ~shown if told else clipped  # not for the light field
    teach = shown.ravel() if told else np.ones(rows * cols, bool)  # the cells classes are fitted to
    neutral = _initial_neutral(raw_med, unseen)
    if prior is not None:
        neutral = _prior_neutral(raw_med, unseen, neutral, prior.board_grey)
    field = np.broadcast_to(neutral, (rows, cols, 3)).copy()
    resp = None
    for round_ in range(rounds):
        feat, usable = _features(inner, ring, field)
        if resp is None:
            field = _neutral_field(raw_med, feat, unseen, field)
            feat, usable = _features(inner, ring, field)
        lab = feat.reshape(-1, 3)
        ab = lab[:, 1:]
        if resp is None:  # first split: chroma, then the nearest nominal hue
            chroma = np.hypot(ab[:, 0], ab[:, 1])
            hue_gap = np.abs(np.angle(np.exp(1j * (np.arctan2(ab[:, 1], ab[:, 0])[:, None] - hues[None]))))
            label = np.where(chroma < EMPTY_CHROMA, 0, 1 + np.argmin(hue_gap, axis=1))
            resp = np.eye(k)[label]
        means, covs = _fit_classes(lab[teach], resp[teach], hues, learned, translucent)
        counts = np.maximum(resp[teach].sum(0), 4.0)
        if translucent:  # the colours take turns: none is much likelier than another
            counts[1:] = counts[1:].mean()
        post, dist = _posterior(lab, means, covs, counts / counts.sum())
        resp = post
        # Not "usable > 0.5": that depends on the field itself, and a brightly lit corner
        # would then never teach the field that it is bright. Clipped cells stay out.
        empty = (post[:, 0] > 0.5).reshape(rows, cols) & ~unseen
        if empty.sum() >= 4 and round_ < rounds - 1:
            field = _light_field(raw_med, empty, neutral)
    post[usable.ravel() == 0] = 1.0 / k  # nothing but glare: no evidence either way
    best = np.argmax(post, axis=1)
    typical = np.exp(-0.5 * np.maximum(dist[np.arange(len(best)), best] - 3.0, 0.0) ** 2)
    seen = np.clip(usable.ravel() / 0.3, 0.0, 1.0)
    conf = post.max(1) * typical * seen
    return CellColours(palette.labels, post.reshape(rows, cols, k), conf.reshape(rows, cols))
