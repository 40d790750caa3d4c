"""Read the chip stacks on a Geometrius token's chip spots: the top chip's colour and the height.

5. *Stacks*: a stack stands on one of the token's chip spots. Seen at an angle its top rises
   away from the camera's nadir, by an amount the camera fixes (its position follows from
   the field's homography; its focal length too, unless the camera looks nearly straight
   down, when the stacks fix it, each being a whole number of chips high): the chip's
   dark-rimmed top is searched along that line, and its distance from the spot gives the
   height where one chip's side is tall enough in the photo to tell heights apart;
   otherwise the height is reported unknown. The top stone's colour (and, where the height
   is read, each chip's side) is compared with the token's card as the white reference; a
   top read white but far more colourful than the card is a coloured chip under glare, its
   colour (what the glare left of it) a guess; so is any top lit far brighter than its card,
   and a top no whole number of chips puts where it was found. A photo through a phone's
   one-hue filter (sepia, a duotone, a tritone) shows no colour anywhere on the tokens: there
   every top is a guess (:func:`tokens_show_colour`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import cv2
import numpy as np

from .geometrius_token import CHIP_COLOURS, CHIP_MM, CHIP_RADIUS_MM, FRAME_MM, SIDE_SHADE, SPOTS, STONE_RADIUS_MM
from .matching import sample_at
from .one_hue import BentCurve, off_curve_nearby, pixel_curve
from .pose import apply_h


HEIGHT_PX = 4.0  # one chip's side must be this tall in the photo to count chips
SPOT_CARD_TOLERANCE = 0.15  # a bare chip spot is the card's colour within this (relative)
CHIP_FOUND = 0.22  # rim contrast (card = 1) above which a chip top is there
FAINT_CHIP = 0.3  # on a spot that is not bare card, a top this faint (share of CHIP_FOUND) is a guess
# (defocus smears a chip's dark rim into its face: a lone chip under heavy blur scored 0.35 of CHIP_FOUND)
FOCAL_RANGE = (0.6, 0.9)  # plausible phone focal lengths, in photo lengths (fields of view 58-80 degrees)
FOCAL_TYPICAL = 0.72
TILT_FOR_FOCAL_DEG = 12.0  # below this the homography hardly shows the focal length: use the typical one
LIT_APART = 1.5  # a top this much brighter than its card (any channel) is lit apart from it: its colour a guess
# (a white top is 1.0-1.3 times its card; seed 307 `hard` 5's yellow top at 1.68 under a reflection, read sure, left
# its stack's glare-lit lower chips unchecked)
CARD_PPM = 2.0  # the cards are looked at for colour at this many pixels per millimetre (a right-angle mark: 0.7 px)
PIXEL_OFF_CURVE = 0.3  # a card pixel this far off the photo's one-hue curve (share of the card's brightness) ...
COLOUR_PIXELS = 45  # ... shows a colour of its own, and this many show the photo in colour (bench/ROUNDS.md, "Round
# chip20": 47 colour fields, one chip colour or none among them, 68 or more; through five one-hue filters 14 or fewer,
# 34 on a bare field through the sepia matrix)
COLOUR_PIXELS_PER_STACK = 150  # with the stacks (COVER_MARGIN_MM round) left out of the curve's fit, this many off it
# per stack seen, and for at least STACKS_AT_LEAST stacks, show the photo in colour (bench/ROUNDS.md, "Round chipfix20":
# colour photos of one chip colour whose marks fell under COLOUR_PIXELS 265 or more a stack, yellow ones 168 or more;
# one-hue fields 30 or fewer a stack; but a tritone's middle tone leaves the fit with the stacks, so one stack's faces
# lie off it in 80-225 pixels: the review's first-turn photos, read silently wrong without the floor)
STACKS_AT_LEAST = 3
CARD_HALF_MM = FRAME_MM - 2  # the card's half side the tops are judged on (its frame's ink left out)
COVER_MARGIN_MM = 2.0  # a stack's outline grown by this covers its rim and the JPEG's colour bleeding past it
OFF_STACK_STEPS = 1.0  # a top this many chip steps from every whole height (sides tall enough to count) is no stack's
# (bench seeds 6, 41 and 211, 1289 such tops: every right one within 0.75 steps; the two wrong ones 1.6 and 3.5)


# --- 5. stacks ----------------------------------------------------------------------------

@dataclass(frozen=True)
class FieldCamera:
    """The camera over the token plane, in grid millimetres: its nadir and height; the focal
    length (pixels) it was solved with, and whether the homography itself showed it."""

    nadir: np.ndarray
    height: float
    focal: float = 0.0
    focal_seen: bool = False

    def lift(self, xy: np.ndarray, h: float) -> np.ndarray:
        """Where a point ``h`` mm above the token plane is seen on that plane."""
        return self.nadir + (np.asarray(xy, np.float64) - self.nadir) * self.height / (self.height - h)


def _tilt_deg(G: np.ndarray, f: float) -> float:
    """Angle between the optical axis and the plane's normal for focal length ``f``."""
    M = np.diag([1 / f, 1 / f, 1.0]) @ G
    normal = np.cross(M[:, 0], M[:, 1])
    return math.degrees(math.acos(min(1.0, abs(normal[2]) / max(np.linalg.norm(normal), 1e-12))))


def field_camera(H: np.ndarray, image_size: tuple[int, int], focal: float | None = None) -> FieldCamera:
    """Camera centre from the plane's homography (grid mm -> pixels), with square pixels and
    the principal point at the photo's centre; the focal length is solved from the two
    rotation constraints and kept within a phone's range (a camera looking straight down
    does not reveal it, but then no stack's side shows either)."""
    w, h = image_size
    T = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(h - 1) / 2], [0, 0, 1]])
    G = T @ H
    G = G / np.linalg.norm(G[:, 0])
    g1, g2 = G[:, 0], G[:, 1]
    a = np.array([g1[0] * g2[0] + g1[1] * g2[1], g1[0] ** 2 + g1[1] ** 2 - g2[0] ** 2 - g2[1] ** 2])
    b = np.array([g1[2] * g2[2], g1[2] ** 2 - g2[2] ** 2])
    inv_f2 = -float(a @ b) / float(a @ a) if float(a @ a) > 1e-30 else 0.0
    long = max(w, h)
    f = FOCAL_TYPICAL * long
    seen = inv_f2 > 0 and _tilt_deg(G, f) > TILT_FOR_FOCAL_DEG
    if focal is not None:
        f = focal
    elif seen:
        f = float(np.clip(1 / math.sqrt(inv_f2), FOCAL_RANGE[0] * long, FOCAL_RANGE[1] * long))
    M = np.diag([1 / f, 1 / f, 1.0]) @ G
    scale = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    M *= scale
    if M[2, 2] < 0:  # the plane lies in front of the camera
        M = -M
    r1, r2, t = M[:, 0], M[:, 1], M[:, 2]
    r3 = np.cross(r1, r2)
    R = np.column_stack([r1, r2, r3])
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    centre = -R.T @ t
    return FieldCamera(centre[:2], float(abs(centre[2])), f, bool(seen))


def _to_lab(rgb: np.ndarray) -> np.ndarray:
    rgb = np.clip(np.asarray(rgb, np.float32).reshape(-1, 1, 3), 0, 1)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab).reshape(-1, 3)


@lru_cache(maxsize=1)
def _palette() -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    names = tuple(CHIP_COLOURS)
    tops = _to_lab(np.array([CHIP_COLOURS[c] for c in names]) / CHIP_SCALE)
    sides = _to_lab(np.array([CHIP_COLOURS[c] for c in names]) * SIDE_SHADE / CHIP_SCALE)
    return names, tops, sides


CHIP_SCALE = 1.07  # the brightest chip channel (white's blue, card-relative): colours are divided by it for Lab


def _top_lab(rgb_rel: np.ndarray) -> np.ndarray:
    """Lab of a card-relative RGB sample, on the palette's scale (CHIP_SCALE). A sample
    brighter than the white chip (a top lit more than its card: the card in a shadow's or a
    vignette's dark, the top under a lamp's reflection) is dimmed as a whole into the
    palette's range, keeping its hue: clipped channel by channel, a pale blue top at
    1.14, 1.26, 1.79 times a shaded card came out pure white (seed 211, `hard`)."""
    rel = np.asarray(rgb_rel, np.float64) / CHIP_SCALE
    return _to_lab(rel / max(float(rel.max()), 1.0))[0]


def classify_chip(rgb_rel: np.ndarray, side: bool = False) -> tuple[str, float]:
    """Chip colour of a card-relative RGB sample; and the margin to the runner-up (Lab units)."""
    names, tops, sides = _palette()
    lab = _top_lab(rgb_rel)
    ref = sides if side else tops
    weights = np.array([0.35, 1.0, 1.0])
    d = np.sqrt((((ref - lab) * weights) ** 2).sum(1))
    order = np.argsort(d)
    return names[order[0]], float(d[order[1]] - d[order[0]])


WHITE_CHROMA = 20.0  # a white top's colour lies this near the white chip's in Lab a*, b* (card-relative)


def washed_top(rgb_rel: np.ndarray) -> str | None:
    """For a top read as white (a card-relative RGB sample): the coloured chip it is when a
    glare spot washed it out, or None when it is white. A white chip's top has the card's
    colour whatever the light, since the card is the white reference; a top far more
    colourful than that is a coloured chip under a specular highlight (a blue one under a
    window's reflection read pale blue, classified white by its lightness). Glare adds white
    light to the chip's own colour: the chip whose colour, dimmed or not, plus some white
    comes nearest the sample (both amounts at least 0) is the guess."""
    names, tops, _ = _palette()
    rel = np.asarray(rgb_rel, np.float64)
    lab = _top_lab(rel)
    white = tops[names.index("white")]
    if math.hypot(*(lab[1:] - white[1:])) <= WHITE_CHROMA:
        return None
    best = (math.inf, None)
    for name in names:
        if name == "white":
            continue
        chip = np.array(CHIP_COLOURS[name])
        (s, g), *_ = np.linalg.lstsq(np.column_stack([chip, np.ones(3)]), rel, rcond=None)
        # Both amounts at least 0: the free fit, else the better of each amount alone.
        fits = [(s, g)] if s >= 0 and g >= 0 else []
        fits += [(max(float(chip @ rel / (chip @ chip)), 0.0), 0.0), (0.0, float(rel.mean()))]
        miss = min(float(np.linalg.norm(rel - s * chip - g)) for s, g in fits)
        best = min(best, (miss, name))
    return best[1]


@dataclass(frozen=True)
class StackReading:
    stack: list[str]
    height_known: bool
    sure: bool
    outline: np.ndarray | None = None  # token millimetres: what the stack covers, seen from the camera


@dataclass(frozen=True)
class _Sighting:
    """A chip top found on a token: the spot its stack stands on and where its top is seen
    (grid mm), with its colour."""

    base: np.ndarray
    top: np.ndarray
    score: float
    colour: str
    margin: float
    outline: np.ndarray  # token mm: what the stack covers in the photo


_RING = np.linspace(0, 2 * np.pi, 32, endpoint=False)
_CIRCLE = np.column_stack([np.cos(_RING), np.sin(_RING)])
_FACE = np.vstack([_CIRCLE * 0.5, _CIRCLE[::2] * 0.25, [[0.0, 0.0]]])  # where a top's colour is sampled (x stone radius)


def value_at(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """(N) the photo's value (each pixel's brightest channel, B, G or R: a chip's dark rim
    against its lighter face whatever its colour) sampled bilinearly at N photo points (N x 2),
    the photo's edge pixels repeated beyond it, as ``sample_at`` samples an image.

    Made only over the pixels the points reach (their bounding box, a pixel to spare, within
    the photo): the stacks' search samples a few patches of the photo, and the value of a whole
    12 MP photo cost some 20 ms of CPU a read (two more channels, two maxima over 12 M pixels).
    The samples are the whole photo's to the bit: ``cv2.remap`` places a point to a 32nd of a
    pixel from its float32 coordinates, which a shift by whole pixels leaves exact, and a box
    reaching past the photo's edge is cut at it, so a point beyond the edge repeats the same
    pixels."""
    pts = np.asarray(pts, np.float32).reshape(-1, 2)
    h, w = image.shape[:2]
    if not len(pts):
        return np.empty(0, np.float32)
    x, y = pts.T  # (a min over the first axis of N x 2 is numpy's slow path)
    box = np.array([x.min(), y.min(), x.max(), y.max()])
    if not (np.abs(box) < 2**24).all():  # a point at the horizon (huge, inf or NaN): the whole photo, as remap sees it
        lo, hi = np.zeros(2, int), np.array([w, h])
    else:
        lo = np.clip(np.floor(box[:2]).astype(int) - 1, 0, [w - 1, h - 1])
        hi = np.clip(np.ceil(box[2:]).astype(int) + 2, lo + 1, [w, h])  # exclusive
    patch = image[lo[1]:hi[1], lo[0]:hi[0]]
    b, g, r = (cv2.extractChannel(patch, k) for k in range(3))
    return sample_at(cv2.max(cv2.max(b, g), r), pts - lo.astype(np.float32))[:, 0]


def find_stack(image: np.ndarray, H: np.ndarray, centre_mm: np.ndarray, cam: FieldCamera,
                card_rgb: np.ndarray, card_v: float) -> tuple[_Sighting | None, float]:
    """The chip top on a token, searched from each chip spot away from the camera's nadir
    (``H``: token mm -> photo px; ``centre_mm``: the token's centre in grid mm, where
    ``cam`` lives); and the best score found (for the doubt when none is there: 0 when
    every spot is bare card, and a spot that does not look like bare card counts as a chip
    top only just missed)."""
    r = CHIP_RADIUS_MM
    inner = np.vstack([_CIRCLE * (r - 1.6), _CIRCLE[::2] * (r - 3.2), [[0.0, 0.0]]])
    best: tuple = (-1.0, None, None, r)
    feet = (centre_mm + SPOTS)[:, None, :] + np.vstack([_CIRCLE[::2] * (r - 1.5), [[0.0, 0.0]],
                                                        _CIRCLE * (r - 0.3)])[None]
    foot_rgb = sample_at(image, apply_h(H, feet.reshape(-1, 2) - centre_mm)).reshape(len(SPOTS), -1, 3)[..., ::-1]
    rel = foot_rgb / card_rgb
    # A chip (or anything) on a spot: its colour off the card's, or its dark rim. The card
    # under a chip never shows, so a spot that is bare card holds no stack: no search there.
    unlike = np.maximum(np.abs(rel[:, :17].mean(1) - 1).max(1), (1 - rel[:, 17:].min(2)).max(1))
    if unlike.max() < SPOT_CARD_TOLERANCE:
        return None, 0.0
    for spot in SPOTS[unlike >= SPOT_CARD_TOLERANCE]:
        base = centre_mm + spot
        away = base - cam.nadir
        dist = np.linalg.norm(away)
        u = away / dist if dist > 1e-6 else np.array([1.0, 0.0])
        far = cam.lift(base, 5.6 * CHIP_MM) - base
        # Room past the tallest top for a focal length the homography does not show (a camera
        # looking nearly straight down); one it shows places that top, and a search past it
        # met a printed corner's ring of ink beyond a tall stack (seed 211 `perspective`).
        reach = (1.0 if cam.focal_seen else 1.4) * float(np.linalg.norm(far)) + 1.5
        ts = np.arange(-0.8, reach + 0.01, 0.4)
        lat = np.array([-0.8, 0.0, 0.8])
        cands = (base[None, None] + ts[:, None, None] * u + lat[None, :, None] * np.array([-u[1], u[0]]))
        cands = cands.reshape(-1, 2)
        grow = 1.0 + float(np.linalg.norm(far)) / max(dist, 1e-6) * 0.5  # a raised top looks a little larger
        radii = (r * grow) + np.array([-0.9, -0.45, 0.0, 0.45])
        rim_pts = (cands[:, None, None, :] + _CIRCLE[None, None] * radii[None, :, None, None]).reshape(-1, 2)
        in_pts = (cands[:, None, :] + inner[None]).reshape(-1, 2)
        v_rim = value_at(image, apply_h(H, rim_pts - centre_mm)).reshape(len(cands), len(radii), -1).min(1)
        v_in = value_at(image, apply_h(H, in_pts - centre_mm)).reshape(len(cands), -1)
        # A chip's top: a dark rim all round (wherever it lies in the band), a lighter face inside.
        k_in, k_rim = int(0.3 * v_in.shape[1]), int(0.8 * v_rim.shape[1])
        score = (np.partition(v_in, k_in, axis=1)[:, k_in] - np.partition(v_rim, k_rim, axis=1)[:, k_rim]) / card_v
        k = int(np.argmax(score))
        if score[k] > best[0]:
            best = (float(score[k]), base, cands[k], r * grow)
    score, base, top, radius = best if best[1] is not None else (best[0], None, None, r)
    if base is None or score < CHIP_FOUND:
        # No clear chip top on a spot that is not bare card: a faint top there (blur) gives
        # that top, in doubt; none at all leaves the token's stack in doubt.
        if base is None or score < FAINT_CHIP * CHIP_FOUND:
            return None, CHIP_FOUND
    top = _centre_top(image, H, centre_mm, top, radius, card_v)
    cover = np.vstack([base + _CIRCLE * (r + 0.6), top + _CIRCLE * (r + 0.8)]) - centre_mm
    outline = cv2.convexHull(np.float32(cover))[:, 0, :].astype(np.float64)
    # The face's darker half: a glint of glare on part of the top washes its colour towards
    # white, and a shadow's edge crossing it only darkens (the hue stays).
    face = sample_at(image, apply_h(H, top + _FACE * STONE_RADIUS_MM - centre_mm))
    stone = face[np.argsort(face.sum(1))[: len(face) // 2]].mean(0)
    rel = stone[::-1] / card_rgb
    colour, margin = classify_chip(rel)
    washed = washed_top(rel) if colour == "white" else None
    if washed is not None:  # a coloured top under glare: its colour a guess, with no margin
        colour, margin = washed, 0.0
    elif float(rel.max()) > LIT_APART:  # lit apart from its card: the card is no white reference for it
        margin = 0.0
    return _Sighting(base, top, score, colour, margin, outline), score


def _centre_top(image: np.ndarray, H: np.ndarray, centre_mm: np.ndarray, top: np.ndarray, radius: float,
                card_v: float) -> np.ndarray:
    """The chip top's centre to a tenth of a millimetre: the place where the dark rim runs
    round at the top's radius, darkest against the face inside and the band just outside."""
    g = np.arange(-0.8, 0.81, 0.1)
    cands = (top + np.stack(np.meshgrid(g, g), -1).reshape(-1, 2))
    rim = (cands[:, None, :] + _CIRCLE[None] * (radius - 0.3)).reshape(-1, 2)
    inside = (cands[:, None, :] + _CIRCLE[None] * (radius - 1.3)).reshape(-1, 2)
    v_rim = value_at(image, apply_h(H, rim - centre_mm)).reshape(len(cands), -1)
    v_in = value_at(image, apply_h(H, inside - centre_mm)).reshape(len(cands), -1)
    score = (v_in - v_rim).mean(1) / card_v
    return cands[int(np.argmax(score))]


def _height(sight: _Sighting, H: np.ndarray, centre_mm: np.ndarray, cam: FieldCamera) -> tuple[int, float, float]:
    """Best height for a sighting at this camera: (chips, miss in chip steps, one chip's side in photo px)."""
    grow = cam.height / (cam.height - np.arange(7) * CHIP_MM)
    levels = cam.nadir + (sight.base - cam.nadir) * grow[:, None]
    steps = np.hypot(*np.diff(levels, axis=0).T)
    errors = np.hypot(*(levels[1:6] - sight.top).T) / steps[:5]
    n = int(np.argmin(errors)) + 1
    toward = cam.nadir - sight.base
    foot = sight.base + CHIP_RADIUS_MM * toward / max(float(np.hypot(*toward)), 1e-6)
    side_px = apply_h(H, cam.nadir + (foot - cam.nadir) * grow[:, None] - centre_mm)
    return n, float(errors[n - 1]), float(np.hypot(*np.diff(side_px, axis=0).T).min())


def read_stack(sight: _Sighting | None, best_score: float, image: np.ndarray, H: np.ndarray,
                centre_mm: np.ndarray, cam: FieldCamera, card_rgb: np.ndarray) -> StackReading:
    """The stack on a token: top colour always, height and lower colours where one chip's
    side is tall enough in the photo and the top sits where a whole number of chips puts it."""
    if sight is None:
        return StackReading([], True, best_score < 0.6 * CHIP_FOUND)
    n, miss, step_px = _height(sight, H, centre_mm, cam)
    # Where one chip's side is tall enough to count chips, a stack's top lies at a whole
    # height along the line away from the nadir; a "top" a chip or more from every one is
    # something else the search met on that line (a printed corner's ring of ink past a
    # tall stack's top, under a steep camera), and its colour says nothing of the stack.
    on_stack = step_px < HEIGHT_PX or miss < OFF_STACK_STEPS
    sure = sight.margin > 8 and sight.score > 1.3 * CHIP_FOUND and on_stack
    if step_px < HEIGHT_PX or miss > 0.25 or sight.score < CHIP_FOUND:
        return StackReading([sight.colour], False, sure, sight.outline)
    r = CHIP_RADIUS_MM
    foot = sight.base + r * (cam.nadir - sight.base) / max(np.linalg.norm(cam.nadir - sight.base), 1e-6)
    stack = []
    tangent = np.array([-(foot - sight.base)[1], (foot - sight.base)[0]]) / r
    for i in range(n - 1):  # each lower chip's side, where it faces the camera
        at = np.array([cam.lift(foot, (i + f) * CHIP_MM) for f in (0.35, 0.5, 0.65)])
        pts = (at[:, None, :] + np.array([-1.2, 0.0, 1.2])[None, :, None] * tangent).reshape(-1, 2) - centre_mm
        rgb = np.median(sample_at(image, apply_h(H, pts)), axis=0)[::-1] / card_rgb
        colour, m = classify_chip(rgb, side=True)
        stack.append(colour)
        sure = sure and m > 5
    return StackReading(stack + [sight.colour], True, sure, sight.outline)


def tokens_show_colour(cards: Sequence[np.ndarray], covers: Sequence[np.ndarray | None]) -> bool:
    """Does the photo show colours? A phone's one-hue filter (sepia, a duotone, a tritone, the
    sepia matrix) leaves every pixel only its brightness, and the palette then reads a chip top
    as whatever chip has that brightness, mostly sure of it (a yellow top as white). What the
    filter cannot fake is a colour off the photo's one-hue curve (``one_hue.pixel_curve``): a
    coloured chip's face, or a printed mark's colour beside the grey of the card and ink
    (``one_hue.off_curve_nearby``).

    Fitted to every flat pixel of the cards, the curve takes in the chips' faces: where the tops
    are all one colour, that colour and the card's white fit one bent curve together (the first
    turns of every game), and only the thin printed marks lie off it, COLOUR_PIXELS of them in a
    plain colour photo, but a phone's processing (noise reduction, a tungsten white balance and
    JPEG) can smooth them below that (bench/ROUNDS.md, "Round chipfix20"). So, failing that, the
    curve is fitted again without the stacks (each ``covers`` outline grown by COVER_MARGIN_MM):
    a colour photo's chip faces then lie off it in hundreds of pixels a stack, a one-hue photo's
    keep to it, COLOUR_PIXELS_PER_STACK a stack (for STACKS_AT_LEAST of them: with the stacks a
    tritone's middle tone leaves the fit too, and one stack's faces lie off it) telling them apart. All-white tops have no colour to
    show either way: only the marks count there. ``cards``: each token's card seen from above
    (``warp`` at :data:`CARD_PPM`), BGR 0-1 float32; ``covers``: each card's stack outline (token
    mm, as :class:`StackReading`), None where it holds no stack."""
    # A colour's chroma scales with the light: in a dim photo (cards 0.27-0.42 bright after ``exposed``) 0-30
    # pixels lay 0.3 off, thousands 0.3 of the card's brightness off.
    white = float(np.median([np.percentile(cv2.cvtColor(card, cv2.COLOR_BGR2GRAY), 80) for card in cards]))

    def off(curve: BentCurve) -> int:
        return sum(int((off_curve_nearby(card, curve) > PIXEL_OFF_CURVE * white).sum()) for card in cards)

    curve = pixel_curve(cards)
    if curve is None:  # nothing unclipped to fit: no colour to be seen either
        return False
    if off(curve) >= COLOUR_PIXELS:
        return True
    stacks = sum(cover is not None for cover in covers)
    if not stacks:
        return False
    bare = pixel_curve(cards, [_uncovered(card.shape[0], cover) for card, cover in zip(cards, covers, strict=True)])
    return bare is not None and off(bare) >= COLOUR_PIXELS_PER_STACK * max(stacks, STACKS_AT_LEAST)


def _uncovered(side_px: int, cover: np.ndarray | None) -> np.ndarray:
    """(side_px x side_px bool) the pixels of a card seen from above (``warp`` at :data:`CARD_PPM`
    over :data:`CARD_HALF_MM` each way of the token's centre) that lie COVER_MARGIN_MM or more
    outside the stack outline ``cover`` (token mm; None: every pixel)."""
    covered = np.zeros((side_px, side_px), np.uint8)
    if cover is not None:
        at_px = ((cover + CARD_HALF_MM) * CARD_PPM - 0.5) * 16  # warp's pixel centres, 4 bits of sub-pixel
        cv2.fillPoly(covered, [np.round(at_px).astype(np.int32)], 1, cv2.LINE_8, 4)
        grow = int(round(COVER_MARGIN_MM * CARD_PPM))
        covered = cv2.dilate(covered, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1)))
    return covered == 0


def focal_from_stacks(H: np.ndarray, size: tuple[int, int], cam: FieldCamera,
                       sights: Sequence[tuple[_Sighting, np.ndarray, np.ndarray]]) -> FieldCamera:
    """A camera looking nearly straight down hides its focal length from the homography;
    the stacks show it, since each must be a whole number of chips high. The focal length
    (within a phone's range, near the typical one) that puts the tops nearest whole heights."""
    if cam.focal_seen or not sights:
        return cam
    long = max(size)
    best = (math.inf, cam)
    for f in np.linspace(FOCAL_RANGE[0], FOCAL_RANGE[1], 16) * long:
        trial = field_camera(H, size, float(f))
        cost = 0.05 * ((f / (FOCAL_TYPICAL * long) - 1) / 0.1) ** 2
        for sight, Ht, centre_mm in sights:
            _, miss, step_px = _height(sight, Ht, centre_mm, trial)
            if step_px >= HEIGHT_PX:
                cost += min(miss * miss, 0.25)
        if cost < best[0]:
            best = (cost, trial)
    return best[1]
