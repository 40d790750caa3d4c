"""Where a Geometrius token's printed frame line lies across a blurred profile.

The frame is a dark line FRAME_WIDTH_MM wide printed FRAME_MM from the token's centre; the
card goes on past it to the token's edge (TOKEN_HALF_MM), then comes the gap to the next
token (or the table): ``vision.geometrius_token.FRAME_EDGES_MM``. Sharp, the line is the
darkest point of a profile across it. Blurred (defocus, and a shaking phone's streak
running across the line), the line, the strip of card beyond it and the dark gap run
together, and the darkest point moves into the gap: a whole field read with every frame
2.9 mm too wide across the streak, its polygons sheared by several degrees. Since the
printed profile is known, the blurred one is fitted instead: the printed strips, each
blurred by a Gaussian of a width to be found, their levels by least squares, the line's
place where the fit is closest. The gap's and the far side's levels are free (a light or
dark table, a neighbour's card), so is the blur: it is measured, not assumed (a Gaussian
stands in for defocus and streak together: both are symmetric, so a width that is somewhat
off spreads the strips evenly and hardly moves the line).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

BLUR_MM = np.array([0.2, 0.4, 0.7, 1.0, 1.4])  # Gaussian widths tried (defocus and streak together)
STEP_MM = 0.05  # the line's place is tried on this grid (the profile's samples must lie on it too)
COARSE = 5  # first every COARSE-th place, then every one round the best
REACH_MM = 12.0  # the strips are tabulated this far either side of the line
LINE_CONTRAST = 0.08  # the fitted line must be this much darker than the card (relative) to count


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """The standard normal's cumulative share below ``z`` (numpy has no erf; the strips'
    table is built once per frame geometry, so the scalar one will do)."""
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(z, np.float64) / math.sqrt(2.0)))


@lru_cache(maxsize=4)
def _strips(edges: tuple[float, ...]) -> np.ndarray:
    """Blur widths x places x 4: at each place (STEP_MM apart, from -REACH_MM, relative to
    the line's centre) the share of the blurred card inside, line, gap beyond the card's
    edge and far side past the gap (the card's two strips share one level). ``edges``: the
    printed strips' edges from the line's centre outwards (the line's two, the card's, the gap's)."""
    u = np.arange(-REACH_MM, REACH_MM + 1e-9, STEP_MM)
    past = normal_cdf((u[None, :, None] - np.array(edges)[None, None, :]) / BLUR_MM[:, None, None])  # share past each edge
    card = 1 - past[..., 0] + past[..., 1] - past[..., 2]
    return np.stack([card, past[..., 0] - past[..., 1], past[..., 2] - past[..., 3], past[..., 3]], axis=-1)


@lru_cache(maxsize=4)
def _hypotheses(s_key: bytes, places: int, edges: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """For every line place (-``places`` .. ``places`` steps) and blur width, the strips' shares
    at the profile's samples (``s_key``: their axis's bytes), transposed (places x blurs x 4 x
    samples), and the inverse of the normal equations' matrix (places x blurs x 4 x 4).
    Neither depends on the profile, and every frame line of every token is sampled on the
    same axis: tabulated once, the fit per line is two products per hypothesis."""
    s = np.frombuffer(s_key, np.float64)
    table = _strips(edges)
    at = np.arange(-places, places + 1) * STEP_MM
    k = np.rint((s[None, :] - at[:, None] + REACH_MM) / STEP_MM).astype(int)
    A = table[:, np.clip(k, 0, table.shape[1] - 1)].transpose(1, 0, 2, 3)  # places x blurs x samples x 4
    At = np.ascontiguousarray(A.transpose(0, 1, 3, 2))
    return At, np.linalg.inv(At @ A + 1e-6 * np.eye(4))


def _fit(profile: np.ndarray, s: np.ndarray, at: np.ndarray, blur: np.ndarray, edges: tuple[float, ...],
         places: int) -> np.ndarray:
    """Each hypothesis's (line place ``at``, in steps within ``places`` of 0, blur index ``blur``)
    squared residual; infinite where the fitted line is not darker than the card."""
    At, inverse = _hypotheses(np.ascontiguousarray(s, np.float64).tobytes(), places, edges)
    At, inverse = At[at + places, blur], inverse[at + places, blur]
    Atb = At @ profile
    levels = (inverse @ Atb[..., None])[..., 0]
    residual = profile @ profile - (levels * Atb).sum(1)  # at the least-squares levels
    dark = levels[:, 1] < levels[:, 0] * (1 - LINE_CONTRAST)
    return np.where(dark, residual, np.inf)


def frame_line(profile: np.ndarray, s: np.ndarray, reach: float, edges: tuple[float, ...]) -> float | None:
    """The frame line's centre (mm, on the axis ``s`` of ``profile``, which runs from the card
    inside outwards, its samples on the STEP_MM grid) within ``reach`` of 0, or None when no
    blurred frame fits. ``edges``: the printed strips' edges from the line's centre outwards
    (the line's two, the card's edge, the gap's far edge)."""
    steps = round(reach / STEP_MM)
    places = np.arange(-steps, steps + 1)
    coarse = places[places % COARSE == 0]
    at, blur = (g.ravel() for g in np.meshgrid(coarse, np.arange(len(BLUR_MM)), indexing="ij"))
    err = _fit(profile, s, at, blur, edges, steps)
    if not np.isfinite(err).any():
        return None
    best = int(np.argmin(err))
    fine = at[best] + np.arange(-COARSE + 1, COARSE)
    fine = fine[np.abs(fine) <= places[-1]]  # round a best coarse place at the reach, only places within it
    near = np.arange(max(blur[best] - 1, 0), min(blur[best] + 2, len(BLUR_MM)))
    at, blur = (g.ravel() for g in np.meshgrid(fine, near, indexing="ij"))
    err = _fit(profile, s, at, blur, edges, steps)
    if not np.isfinite(err).any():
        return None
    return float(at[int(np.argmin(err))] * STEP_MM)
