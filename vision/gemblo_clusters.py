"""This photo's own two clusters of clear scores, empty and clear, and the log-odds of clear they
give a cell.

The clear score's scale is fitted over many photos, but in one photo the clear and empty cells
form two tight clusters whose gap moves with the light, the blur and the lens: the photo's own
clusters decide many cells the fitted scale alone leaves in doubt. Where the clusters held near
the scores' usual places find no clear cluster at all, the clear one is sought where the photo
puts it (blur washes out the glints, and moves it far down), and kept only as a peak of its own
whose cells lie as clear's pieces do (not the empty cells' tail under a shade); it then gives the
doubtful cells' best guesses, and decides none. Where the held clusters only best-guess, the found
ones stand in for them when a larger share of their clear cells lie in clear's pieces (jpeg
flattens the glints too).

Kept apart from the evidence (:mod:`vision.gemblo_clear`), which scores each cell: here the
scores of one photo are only numbers, fitted as two Student-t clusters, and the pieces
(:mod:`vision.gemblo_prior`) tell a clear cluster from the empty cells' tail.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .gemblo_cells import CLEAR_SURE
from .gemblo_prior import in_pieces

# The photo's own clusters of clear scores (see score_clusters):
MIX_PRIOR = ((-7.0, 1.5), (5.0, 1.5))  # (mean, spread) where empty and clear cells' scores usually lie
MIX_PRIOR_N = 10.0  # how many cells' weight that carries
MIX_NU = 4.0  # Student-t tails
# When the clusters count: enough clear cells and the clusters this many spreads apart (then
# they give doubtful cells' best guesses); they also decide cells when the clear cluster lies
# on the clear side and at most this many cells per clear cell are in doubt between them.
MIX_MIN_CLEAR, MIX_MIN_MEAN, MIX_SEPARATION, MIX_MAX_BETWEEN = 6, 1.5, 3.5, 1.5
# Where those clusters find no clear one, it is sought where this photo puts it (see
# clusters_where_they_lie): held near its usual place by FOUND_PRIOR_N cells' weight only; kept
# when FOUND_SEPARATION spreads from the empty one, with a valley between them holding at most
# FOUND_GAP of the cells at the clear one's peak, and FOUND_PIECES of its cells in distinct pieces
# of the set (none repeated). Set on the 16 photos of the bench's seeds 2 and 5 whose held clusters
# find none: separation 2.0 rejects seed 5 `warm_light` #0 (1.22) and keeps the four fits kept
# (2.54-3.61); valley 0.6 rejects seed 5 `glare` #1 (an empty tail) and `blur` #1 (1.00 each) and
# keeps seed 5 `hard` #0 (0.58); pieces 0.3 rejects the four tails that pass both (seed 2 `hard` #1
# 0.00, seed 5 `shadow` #0, #2, #4 0.12-0.21; stray cells at 10 %: 0.00-0.15) and keeps the four
# clear clusters (seed 2 `blur` #5 0.35, seed 5 `hard` #0 0.38, `hand` #5 0.60, `hand` #1 0.69:
# the empty cells a found cut calls clear beside clear's pieces join them into no piece).
FOUND_PRIOR_N, FOUND_SEPARATION, FOUND_GAP, FOUND_PIECES = 1.0, 2.0, 0.6, 0.3


def score_clusters(scores: np.ndarray) -> tuple[Callable[[np.ndarray], np.ndarray], bool] | None:
    """The log-odds of clear by this photo's own two clusters of clear scores (empty, clear) and
    whether their gap is plain enough to decide cells by; None when the photo shows no clear
    cluster (few clear pieces, or clusters run together). Student-t clusters (a stray cell must
    not look sure), fitted by EM and held near the scores' usual places (MIX_PRIOR) so a lone
    outlier cannot found a cluster."""
    if len(scores) < 20:
        return None
    means, spreads, share = _fit_clusters(scores)
    if share[1] * len(scores) < MIX_MIN_CLEAR or separation(means, spreads) < MIX_SEPARATION:
        return None
    odds = _cluster_odds(means, spreads, share)

    # Many cells between the clusters (a cast shadow, a glare smearing the scores): the gap is
    # not plain, whatever the fit says; the clusters still tell a doubtful cell's best guess.
    # A clear cluster on the empty side of the fitted score (a warm lamp fades the glints and
    # sheen the score was fitted on) still tells a doubtful cell's best guess, never decides one.
    own = odds(scores)
    return odds, bool(means[1] >= MIX_MIN_MEAN
                      and (np.abs(own) < CLEAR_SURE / 2).sum() <= MIX_MAX_BETWEEN * max((own > 0).sum(), 1))


def separation(means: np.ndarray, spreads: np.ndarray) -> float:
    """How far the (empty, clear) clusters of these means and spreads lie apart: the gap between
    them over the hypot of their spreads (negative if clear's lies on empty's side)."""
    return float((means[1] - means[0]) / np.hypot(*spreads))


def _fit_clusters(scores: np.ndarray, prior: tuple = MIX_PRIOR, held: tuple[float, float] = (MIX_PRIOR_N, MIX_PRIOR_N)
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means, spreads and shares of the (empty, clear) Student-t clusters of these scores
    (EM, each started at and held near its ``prior`` (mean, spread) by ``held`` cells' weight:
    by default their usual places, MIX_PRIOR)."""
    means = np.array([m for m, _ in prior], float)
    spreads = np.array([s for _, s in prior], float)
    share = np.array([0.85, 0.15])
    for _ in range(30):
        ll = cluster_log_lik(scores, means, spreads, share)
        resp = np.exp(ll - ll.max(axis=1, keepdims=True))
        resp /= resp.sum(axis=1, keepdims=True)
        z = (scores[:, None] - means) / spreads
        weight = resp * (MIX_NU + 1) / (MIX_NU + z * z)
        for k, ((m0, s0), n0) in enumerate(zip(prior, held)):
            means[k] = (weight[:, k] @ scores + n0 * m0) / (weight[:, k].sum() + n0)
            spreads[k] = np.sqrt((weight[:, k] @ (scores - means[k]) ** 2 + n0 * s0 ** 2)
                                 / (resp[:, k].sum() + n0))
        share = (resp.sum(axis=0) + 1) / (len(scores) + 2)
    return means, spreads, share


def clusters_where_they_lie(score: np.ndarray, seen: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """The log-odds of clear by this photo's clear cluster sought where the photo puts it, or None where
    what is found may be the empty cells' tail; ``score``: every cell's clear score, ``seen``: the
    cells read empty that the photo shows.

    The clusters held near the scores' usual places (:func:`score_clusters`) miss a clear cluster
    the photo moved far from its usual place: blur and jpeg wash out the glints and bevels the score
    was fitted on, so a whole photo's clear cells may score -4.5..-3.4, just above its empty cells
    yet far below the fitted cut (seed 2 `blur` #5: 50 of 51 clear cells read empty). Started from
    the photo (the clear cluster at the held fit's clear mean if that takes MIX_MIN_CLEAR cells,
    else at the scores' top decile) and held by FOUND_PRIOR_N cell only, the fit finds it there; but
    where a photo shows few clear pieces it makes a cluster of the empty cells' tail (shade,
    embossed marks: seed 2 `shadow` #4, 12 clear cells and 107 empty ones in sight called clear).
    What tells a second peak from a tail, as a real photo shows them: the clusters lie apart
    (FOUND_SEPARATION), a valley between them holds few cells beside the clear peak (FOUND_GAP: a
    tail thins out without a valley), and the cells it calls clear lie as clear's pieces do
    (FOUND_PIECES of them in distinct pieces of the set, :func:`vision.gemblo_prior.in_pieces`: a tail lies in
    shade-wide patches or stray cells). On the 16 photos of seeds 2 and 5 whose held fit finds no clear
    cluster, four fits that took a tail passed the other two tests, with at most 0.21 of their cells
    in distinct pieces; the four kept had 0.35 or more (the constants' comment). Its odds alone give
    best guesses only where the held fit finds no clear cluster at all: where it finds one it only
    best-guesses by, this fit moved close calls of overlapping clusters (dim light) the wrong way as
    often as the right one (seeds 2 and 5: 3 boards gained, 2 lost), and it stands in there only
    where a larger share of its clear cells lie in clear's pieces (:func:`cut_into_pieces`)."""
    scores = score[seen]
    if len(scores) < 20:
        return None
    means, spreads, share = _found_clusters(scores)
    odds = _cluster_odds(means, spreads, share)
    clear = seen & (odds(score) > 0)
    if share[1] * len(scores) < MIX_MIN_CLEAR or separation(means, spreads) < FOUND_SEPARATION \
            or _valley(scores, means, spreads) > FOUND_GAP or in_pieces(clear) < FOUND_PIECES:
        return None
    return odds


def cut_into_pieces(score: np.ndarray, seen: np.ndarray, held: Callable[[np.ndarray], np.ndarray]
                     ) -> Callable[[np.ndarray], np.ndarray]:
    """The log-odds of clear by whichever of this photo's two cluster fits cuts its cells into clear's
    pieces better: the ``held`` one (:func:`score_clusters`, here only best-guessing) or the one
    found where the photo puts it (:func:`clusters_where_they_lie`), where that is kept and a
    larger share of the ``seen`` cells its cut calls clear lie in distinct pieces of the set
    (:func:`vision.gemblo_prior.in_pieces`).

    Jpeg's blocks flatten the glints the score was fitted on, so a photo's clear cluster may lie below
    its usual place while the held fit, pulled towards that place by MIX_PRIOR, cuts above its lowest
    cells (seed 2 `jpeg` #0: clear found at +0.6, held at +2.2; six clear cells read empty). Where
    the clusters overlap (dim light, a cast shadow), the found fit moves close calls the wrong way as
    often as the right one (seeds 2 and 5, used wherever kept: 3 boards gained, 2 lost). Clear lays
    whole pieces, one of each: the cut whose clear cells lie more in such pieces is the one at the
    photo's clear cluster, and a cut moved onto empty cells at the clear peak (stray readings,
    shade) does not and is not taken (seeds 2 and 5: the found cut taken on 4 photos, one board
    gained, no cell worse). The share, not the count, is compared: a found cut calling one whole
    piece clear would beat a held one calling all of clear's cells and a stray or two; no such
    photo was met, and counts chose as the share did on 480 photos of four seeds (round 32c).
    Taken, it only stands in for the held fit in the halfway best guess with the fitted score;
    the rules downstream weigh those guesses as before."""
    found = clusters_where_they_lie(score, seen)
    if found is None or in_pieces(seen & (found(score) > 0)) <= in_pieces(seen & (held(score) > 0)):
        return held
    return found


def _found_clusters(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means, spreads and shares of the (empty, clear) clusters of these scores, the clear one
    sought where the photo puts it (see :func:`clusters_where_they_lie`), unguarded."""
    means, spreads, share = _fit_clusters(scores)
    start = means[1] if share[1] * len(scores) >= MIX_MIN_CLEAR else float(np.percentile(scores, 90))
    return _fit_clusters(scores, (MIX_PRIOR[0], (start, spreads[1])), (MIX_PRIOR_N, FOUND_PRIOR_N))


def _cluster_odds(means: np.ndarray, spreads: np.ndarray, share: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The log-odds of clear against empty by the (empty, clear) clusters of these means, spreads
    and shares."""
    def odds(x: np.ndarray) -> np.ndarray:
        ll = cluster_log_lik(np.asarray(x, float), means, spreads, share)
        return ll[:, 1] - ll[:, 0]
    return odds


def _valley(scores: np.ndarray, means: np.ndarray, spreads: np.ndarray) -> float:
    """How many scores lie in the emptiest window between the (empty, clear) clusters, beyond
    the empty one's spread, over how many lie at the clear one's peak (windows of half the
    narrower spread; the last window is the peak's own, so at most 1): well under 1 where the
    clear cluster is a peak of its own, near 1 where it is the empty cells' tail thinning out,
    and infinite where no score lies at the clear peak (no peak at all)."""
    half = min(spreads) / 2

    def near(x: float) -> int:
        return int((np.abs(scores - x) < half).sum())

    peak = near(means[1])
    if peak == 0:
        return np.inf
    return min(near(x) for x in np.linspace(means[0] + spreads[0], means[1], 50)) / peak


def cluster_log_lik(x: np.ndarray, means: np.ndarray, spreads: np.ndarray, share: np.ndarray) -> np.ndarray:
    """(n, 2) log-likelihood of each score under each Student-t cluster, share included."""
    z = (x[:, None] - means) / spreads
    return np.log(share) - np.log(spreads) - (MIX_NU + 1) / 2 * np.log1p(z * z / MIX_NU)
