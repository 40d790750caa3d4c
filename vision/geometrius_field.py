"""Find a Geometrius field's tokens in a photo and number their places on its grid.

Reading goes frame -> pose -> tokens -> polygons and stacks -> state; this module does the
first two steps (``vision.geometrius`` puts the steps together):

1. *Tokens*: the inside of an unbroken frame is a light four-sided region of the dark-line
   mask holding a drawing. The reference frame is the one that puts most others on integer
   grid steps (a tablecloth's checks, a polygon that happens to be four-sided do not). The
   field then grows one pitch at a time from each placed token's own frame (so a distorting
   lens does not bend the steps): a neighbour is a token when a frame was found there, or
   when its frame shows along most of its length (a chip, a hand or glare broke it). A
   place next to the field whose frame shows only in part, yet holds plain card of the
   tokens' grey level with a drawing on it, may hold a token (dropped, it would number
   every token beyond it a place off); so may a place across a hidden one whose frame
   shows in full (a cup over its neighbour). Such a place is read as a token in doubt
   when a polygon is measured on it, and is the tablecloth when none is. An underexposed
   photo is first stretched to a normal light (the search's contrasts are in grey levels),
   and a noisy one searched smoothed.
2. *Local frame*: each token's frame is fitted again in a top-down view of it (the first
   dark line going outwards from the card, four lines through most of their points): its
   own homography carries the polygon's measurement. Where the search's quad cannot be
   refined (a chip or blur bent it), the frame is sought again where the field's homography
   puts the token; a token whose frame never shows is centred on its polygon.

Positions follow the contract: row 0 is the topmost row of tokens in the photo, column 0
the leftmost, the grid turned by the quarter turn whose +col points nearest the photo's right
at the field's centre, both of the grid's axes weighed (at a slant they need not be square in
the photo): the axis nearer level runs along the rows. When a token in doubt lies beyond
the others' top row or left column, the numbering rests on it: every token's position is
then in doubt ("position"), whether it is a token or not. Read live at a kept pose, rows and
columns count from the pose's first ones (a push never empties a place), or from a token
pushed beyond them; when no token shows in the pose's first row or column (a hand, a cup
over it), every position is in doubt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import cv2
import numpy as np

from .errors import ReadError
from .exposure import DARK, brightest
from .geometrius_frame import frame_line
from .geometrius_lines import median, robust_line
from .geometrius_token import (FRAME_EDGES_MM, FRAME_MM, FRAME_SHIFT_MM, INNER_MM, PITCH_MM, Pos, homography, square,
                               view_to_photo, warp)
from .matching import sample_at
from .pose import MAX_VIEW_ANGLE_DEG, BoardPose, angle_refusal, apply_h, check_angle, make_pose


MAX_TOKENS = 40  # the game has 40 tokens
SURE_FIELD = 12  # a grid growing to this many tokens is taken without trying others
FIELD_REACH = 8  # no token lies farther than this many places from another (lines hold 5 at most)
INK_INSIDE = (0.01, 0.22)  # share of a token's middle that is drawing
FLATTEST_FRAME = 0.5  # a token frame's shortest side over its longest, below which it is no square frame
SLIVER = 0.2  # ... and below which it is no token at all, however steeply seen (about 78 degrees)
FRAME_SHOWS = 0.65  # share of a frame that must show for a token found by the grid alone
FRAME_PART = 0.3  # ... and that shows in part where a token may lie hidden (blur, a hand, the dark)
FRAME_HINT = 0.15  # ... through the pose's grid beyond it, where the own frame may show it in part (round 15)
CARD_LIKE = 0.12  # such a token's card is within this share of the field's cards' grey level
CARD_PLAIN = 0.05  # ... and plain: its spread within this share of it
_ALONG = np.linspace(-8.0, 8.0, 9)  # mm along each side's middle, clear of the chip spots
CARD_RING = np.vstack(  # card beside each side's middle, inside the frame, outside the polygon (token mm)
    [np.column_stack([_ALONG, np.full_like(_ALONG, s * d)]) for s in (-1, 1) for d in (19.0, 20.5)]
    + [np.column_stack([np.full_like(_ALONG, s * d), _ALONG]) for s in (-1, 1) for d in (19.0, 20.5)])
REFERENCES = 120  # frames tried as the grid's reference, the most token-like first
WORK_WIDTH = 1400  # token search runs on the photo shrunk to this width
FRAME_PPM = 4.0  # for fitting the frame
FRAME_VIEW_MM = 6.0  # the frame's view reaches this far past the frame line
FRAME_PROFILE_MM = 5.0  # a frame line's profile reaches this far either way (past the gap to the next token)


# --- 0. light -----------------------------------------------------------------------------

EXPOSED_LIGHT = 200.0  # grey level an underexposed photo's lightest part is brought to


def exposed(image: np.ndarray, gray: np.ndarray | None = None) -> np.ndarray:
    """The photo, its grey levels stretched when it is underexposed (its lightest part under
    ``exposure.DARK``) so that its lightest part reaches EXPOSED_LIGHT, as in a normally exposed
    photo. The contrasts the reader tests in grey levels (the dark-line mask's offset, a
    frame's depth, a frame line against its card) were set on such photos; in a photo whose
    card reaches 20 grey levels, a frame line shows only some 18 darker, and frames failing
    those tests stopped the field's growth: the tokens beyond were missed and, a column or
    row of them gone, the rest were silently numbered a place off. Stretched, every such
    test is one on contrast relative to the photo's own light. (Colours are read against the
    token's card, so the stretch leaves them as they were.) ``gray``: the photo's grey, when
    already made (the light is measured on it)."""
    level = brightest(image if gray is None else gray)
    if level >= DARK:
        return image
    return cv2.convertScaleAbs(image, alpha=EXPOSED_LIGHT / max(level, 1.0))


NOISY = 8.0  # grey levels of noise above which the token search runs on a smoothed photo
_FINEST = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)  # sees noise, not a smooth picture


NOISE_SCALE = 2  # noise is measured on the photo shrunk this many times (its finest detail JPEG drops)


def _noise(gray: np.ndarray) -> float:
    """The photo's noise (standard deviation, grey levels): the median response to a kernel
    that cancels any locally planar picture, so edges, few among the pixels, hardly count.
    Measured on the photo shrunk NOISE_SCALE times, and scaled back (a mean of n x n pixels
    of independent noise has an n-th of its spread): JPEG drops a photo's finest detail,
    the pixel-to-pixel noise with it, and a dark noisy phone photo (noise some 14 grey
    levels once stretched) measured 2-4 levels saved at quality 85; its blotches a few
    pixels wide, which JPEG keeps, still break the token frames. Noise that is not
    independent from pixel to pixel (a phone's, demosaiced) measures more than its
    pixel-to-pixel spread there, as it does harm. Every third pixel each way is plenty
    for a median (and a ninth of its time)."""
    small = cv2.resize(gray, None, fx=1 / NOISE_SCALE, fy=1 / NOISE_SCALE, interpolation=cv2.INTER_AREA)
    response = cv2.filter2D(small, cv2.CV_32F, _FINEST)[::3, ::3]
    return NOISE_SCALE * 1.4826 * float(np.median(np.abs(response))) / 6.0


# --- 1. tokens ---------------------------------------------------------------------------

def dark_mask(gray: np.ndarray, block: int, offset: int = 12) -> np.ndarray:
    return cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block | 1, offset)


def search_mask(gray: np.ndarray, offset: int = 12) -> np.ndarray:
    """The dark-line mask of the search grey ``gray`` (``offset``: how much darker than its
    surroundings a pixel must be). Made once a search and handed on: the frames' quads, the
    tokens' ink and the flat frames all look at the same mask."""
    return dark_mask(gray, max(15, gray.shape[1] // 60), offset)


def _frame_quads(dark: np.ndarray) -> list[np.ndarray]:
    """Four-sided light regions enclosed by dark lines (``dark``: the search's dark-line
    mask): token frames' insides (photo pixels, clockwise on screen from the top-left
    corner). A frame notched by a chip or a hand is left out here: the grid finds it again."""
    return [q for q, foreshortened in _four_sided(dark) if foreshortened >= FLATTEST_FRAME]


def _flat_frames(gray: np.ndarray, dark: np.ndarray) -> list[np.ndarray]:
    """Token frames too flat for :func:`_frame_quads` (their short side under FLATTEST_FRAME
    of their long one, but not under SLIVER): four-sided light regions enclosed by dark lines
    with a token's drawing inside. A square token seen more than about 60 degrees from straight
    above is that flat; asked when no token is read, to say why (:func:`_too_steep`).
    Flatter ones are strips, not tokens: an empty Gemblo board's rows of cells between a hard
    shadow's edges, a wooden table's grain (0.10-0.19 on 122 photos of other games' boards).
    ``dark``: the search's dark-line mask of ``gray``."""
    return [q for q, foreshortened in _four_sided(dark) if SLIVER <= foreshortened < FLATTEST_FRAME
            and _token_like(gray, dark, q) > 0]


def _token_pose(quad: np.ndarray, size: tuple[int, int]) -> BoardPose:
    """The pose of one token seen as ``quad`` (photo pixels, clockwise; ``size``: the photo's
    width and height): how steeply the table is seen there (:meth:`BoardPose.view_angle_deg`)."""
    unit = square(0.5) + 0.5  # the token as the unit square, its middle at (0.5, 0.5)
    return make_pose(homography(unit, quad), size, 1.0, 0.0)


def _too_steep(gray: np.ndarray, dark: np.ndarray, square_frames: int) -> ReadError | None:
    """ReadError("impossible_angle") for a photo where no token could be read, when token
    frames show but at least half of them (``square_frames``: how many square ones show,
    every four-sided light region counted, a board's empty cells among them) are too flat to
    read (``dark``: the search's dark-line mask of ``gray``), and the steepest of those, as
    the pose of one token, is seen beyond
    :data:`vision.pose.MAX_VIEW_ANGLE_DEG`: the far tokens are seen too steeply, and the
    advice is to take the photo from higher up. Else None: the refusal is "no_board".

    The steepest, not the middle one: a field seen that steeply is found as a few of its
    nearest tokens, square or flat (seen at 58-63 degrees), its far rows flatter still or
    not found at all, and the middle of the frames that show is nearer than the field's
    (fields whose middle was seen at 66-67 degrees showed frames whose middle one was seen
    at 64, the steepest at 69-72). Another game's board shows many square cells, and any
    flat region in it is outnumbered (on 103 such photos: 1-9 flat ones to 35-132 square)."""
    flat = _flat_frames(gray, dark)
    if len(flat) < max(square_frames, 1):
        return None
    steepest = max(_token_pose(q, gray.shape[::-1]).view_angle_deg() for q in flat)
    return angle_refusal(steepest, "the far tokens are seen") if steepest > MAX_VIEW_ANGLE_DEG else None


def not_a_field(image: np.ndarray, full_gray: np.ndarray, message: str) -> ReadError:
    """The refusal of a photo (upright BGR; ``full_gray``: its grey) in which no token could
    be read (``message``: why): "no_board", unless the token frames in it are seen too
    steeply to read (:func:`_too_steep`)."""
    gray = _search_gray(image, full_gray)[0]
    dark = search_mask(gray)
    return _too_steep(gray, dark, len(_square_frames(gray, dark))) or ReadError("no_board", message)


def _field_too_steep(gray: np.ndarray, H: np.ndarray, places: Sequence[Pos]) -> None:
    """ReadError("impossible_angle") when the field found (``H``: grid mm -> pixels of
    ``gray``; its tokens at ``places``) is seen beyond :data:`vision.pose.MAX_VIEW_ANGLE_DEG`
    at its middle, as Blokus's board is (:func:`vision.pose.check_angle`). Seen so steeply,
    the far tokens' frames are a few pixels deep: a far row was missed and every token read
    was numbered a row off, silently, or a token dropped unreported (fields seen at 66-80
    degrees, 62-75 degrees of camera tilt). Nearer than that limit every field of the tilt
    sweep read with no silent token (round 25)."""
    middle = np.mean([[c * PITCH_MM, r * PITCH_MM] for r, c in places], axis=0)
    check_angle(_token_pose(apply_h(H, square(INNER_MM) + middle), gray.shape[::-1]))


def _four_sided(dark: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """Four-sided convex light regions enclosed by the dark lines of the mask ``dark``, of a
    token's size or larger (photo pixels, clockwise on screen from the top-left corner), each
    with its shortest side over its longest (how foreshortened it is)."""
    h, w = dark.shape
    light = cv2.bitwise_not(dark)
    light = cv2.morphologyEx(light, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(light, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    min_area = (w / 45) ** 2
    quads = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < min_area or area > 0.25 * w * h:
            continue
        approx = cv2.approxPolyDP(c, 0.03 * cv2.arcLength(c, True), True)
        if len(approx) != 4 or not cv2.isContourConvex(approx):
            continue
        q = approx[:, 0, :].astype(np.float64)
        if abs(cv2.contourArea(np.float32(q)) - area) > 0.04 * area:
            continue
        sides = np.linalg.norm(q - np.roll(q, -1, 0), axis=1)
        quads.append((_clockwise(q), float(sides.min() / sides.max())))
    return quads


def _clockwise(q: np.ndarray) -> np.ndarray:
    """Corners clockwise on screen (y down), starting nearest the top-left."""
    centre = q.mean(0)
    order = np.argsort(np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0]))
    q = q[order]
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, 0)


def _inside(image: np.ndarray, q: np.ndarray, n: int) -> np.ndarray:
    """Samples on an n x n lattice over the middle of a quad (a fifth in from each side)."""
    u = np.linspace(0.2, 0.8, n)
    a, b = np.meshgrid(u, u)
    a, b = a.ravel()[:, None], b.ravel()[:, None]
    pts = (1 - a) * (1 - b) * q[0] + a * (1 - b) * q[1] + a * b * q[2] + (1 - a) * b * q[3]
    return sample_at(image, pts)[:, 0]


def _token_like(gray: np.ndarray, dark: np.ndarray, q: np.ndarray) -> float:
    """How much a quad looks like a token's inside: light card with a drawing on it (a check
    of the tablecloth is light or dark, but plain). 0 when it holds no ink at all."""
    ink = float((_inside(dark, q, 15) > 127).mean())
    return _inside(gray, q, 5).mean() if INK_INSIDE[0] <= ink <= INK_INSIDE[1] else 0.0


def _on_grid(to_grid: np.ndarray, q: np.ndarray, slack: float) -> tuple[Pos, np.ndarray] | None:
    """The grid place of quad ``q`` in the frame of homography ``to_grid`` (pixels -> grid
    mm), if it is a token-sized square sitting on a grid step (within ``slack`` of a pitch);
    with its corners in grid mm."""
    local = apply_h(to_grid, q)
    c = local.mean(0) / PITCH_MM
    if np.abs(c - np.round(c)).max() > slack:
        return None
    sides = np.linalg.norm(local - np.roll(local, -1, 0), axis=1)
    if np.abs(sides / (2 * INNER_MM) - 1).max() > 0.15:
        return None
    return (int(round(c[1])), int(round(c[0]))), local


def _grids(quads: list[np.ndarray], count: int = 3) -> list[dict[Pos, np.ndarray]]:
    """Candidate token grids, best first: the quads that are token frames, at their grid
    places relative to a reference frame at (0, 0). A reference is good when it puts many
    of the others on grid steps (a polygon that happens to be four-sided does not, a check
    of the tablecloth rarely) and is big (checks are smaller than tokens); the most
    token-like quads are tried first. A homography
    through all of them then places the farther ones."""
    sq = square(INNER_MM)
    corners = np.vstack(quads)
    scored = []
    for ref in quads[:REFERENCES]:
        H = homography(sq, ref)
        local = apply_h(np.linalg.inv(H), corners).reshape(-1, 4, 2)
        c = local.mean(1) / PITCH_MM
        sides = np.linalg.norm(local - np.roll(local, -1, 1), axis=2)
        on = (np.abs(c - np.round(c)).max(1) <= 0.25) & (np.abs(c).max(1) <= FIELD_REACH) \
            & (np.abs(sides / (2 * INNER_MM) - 1).max(1) <= 0.15)
        # Many frames on the grid, and big ones: a tablecloth's checks are smaller than tokens.
        size = math.sqrt(cv2.contourArea(np.float32(ref)))
        scored.append((int(on.sum()) * size, len(scored), H, frozenset(np.flatnonzero(on))))
    scored.sort(key=lambda x: (-x[0], x[1]))
    grids, seen = [], []
    for _, _, H, members in scored:
        if any(members == m for m in seen):
            continue  # the same grid from another of its frames
        seen.append(members)
        grids.append(_placed(quads, H))
        if len(grids) == count:
            break
    return grids


def _placed(quads: list[np.ndarray], H: np.ndarray) -> dict[Pos, np.ndarray]:
    sq = square(INNER_MM)
    places: dict[Pos, np.ndarray] = {}
    for _ in range(3):
        places = {}
        src, dst = [], []
        to_grid = np.linalg.inv(H)
        for q in quads:
            found = _on_grid(to_grid, q, 0.2)
            if found is None:
                continue
            rc, local = found
            if rc in places or max(abs(rc[0]), abs(rc[1])) > FIELD_REACH:
                continue
            ideal = sq + np.array([rc[1], rc[0]]) * PITCH_MM  # pair each corner with the nearest ideal one
            src += [ideal[int(np.argmin(np.linalg.norm(ideal - p, axis=1)))] for p in local]
            dst += list(q)
            places[rc] = q
        if len(src) >= 8:
            H, _ = cv2.findHomography(np.float64(src), np.float64(dst), 0)
    return places


def _frame_evidence(gray: np.ndarray, H: np.ndarray) -> float:
    """Share of a token frame's length that shows as a dark line with lighter card inside it
    (``H``: token millimetres -> pixels of ``gray``). The line is looked for a little either
    side of where ``H`` puts it: a grid fitted across a distorting lens is a pixel or two off.
    The four sides' samples are taken in one go."""
    t = np.linspace(-FRAME_MM + 3, FRAME_MM - 3, 24)
    offsets = np.arange(-1.5, 1.51, 0.5)
    pts = []
    for axis in range(2):
        for sign in (-1, 1):
            line = np.zeros((len(t), 2))
            line[:, axis] = t
            normal = np.zeros(2)
            normal[1 - axis] = sign
            across = [line + (sign * FRAME_MM + o * sign) * normal * sign for o in offsets]
            inner = line + sign * (FRAME_MM - 3.2) * normal * sign
            pts += across + [inner]
    values = sample_at(gray, apply_h(H, np.vstack(pts)))[:, 0].reshape(4, len(offsets) + 1, len(t))
    on, inside = values[:, :-1].min(1), values[:, -1]
    return int(np.sum(inside - on > 20)) / (4 * len(t))


def _turned_like(quad: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """A found frame's corners (clockwise) in the order of the corners where a step from its
    neighbour expects them. A square's corners say nothing of which way its grid runs, and
    at 45 degrees "the corner nearest the top-left" is a tie: taken as found, a token's
    grid could be turned a quarter from its neighbour's, and stepping round the field would
    then give one token many places (until the search gave up: "more than 40 squares")."""
    shifts = [np.roll(quad, -k, 0) for k in range(4)]
    return min(shifts, key=lambda q: float(np.linalg.norm(q - expected, axis=1).sum()))


def _card_level(gray: np.ndarray, H: np.ndarray) -> tuple[float, float]:
    """The card's grey level inside a token's frame, beside the middle of each side (clear of
    the polygon and the chip spots), and its spread (median absolute deviation)."""
    v = sample_at(gray, apply_h(H, CARD_RING))[:, 0]
    level = float(np.median(v))
    return level, float(np.median(np.abs(v - level)))


def _drawn_card(gray: np.ndarray, dark: np.ndarray, H: np.ndarray, card: float) -> bool:
    """Plain card inside a place's frame (its spread within CARD_PLAIN of the field's card
    level ``card``) holding a drawing, as a token's inside does. A tablecloth's check may
    show a frame and be light, but is plain."""
    if _card_level(gray, H)[1] > CARD_PLAIN * card:
        return False
    ink = float((_inside(dark, apply_h(H, square(INNER_MM)), 15) > 127).mean())
    return INK_INSIDE[0] <= ink <= INK_INSIDE[1]


def _looks_like_token(gray: np.ndarray, dark: np.ndarray, H: np.ndarray, card: float) -> bool:
    """A place whose frame showed too little to count may still hold a token that blur, a
    hand or the dark hid: its frame shows in part, the inside of its frame is card of the
    field's tokens' level (``card``) with a drawing on it (``_drawn_card``); the table
    beside a field is no card."""
    return abs(_card_level(gray, H)[0] / max(card, 1.0) - 1) <= CARD_LIKE and _drawn_card(gray, dark, H, card)


def _neighbours(p: Pos) -> tuple[Pos, ...]:
    """The four places beside ``p``: tokens touch by a side, never by a corner alone."""
    r, c = p
    return (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)


def _stepped(gray: np.ndarray, H: np.ndarray, dr: int, dc: int) -> np.ndarray | None:
    """The homography of the place ``dr`` rows and ``dc`` columns from the token of ``H``
    (token mm -> pixels of ``gray``); None when that place's centre lies outside the photo."""
    moved = H @ np.array([[1, 0, dc * PITCH_MM], [0, 1, dr * PITCH_MM], [0, 0, 1]])
    centre = apply_h(moved, np.zeros((1, 2)))[0]
    return moved if 0 <= centre[0] < gray.shape[1] and 0 <= centre[1] < gray.shape[0] else None


BEYOND_HIDDEN = ((-2, 0), (2, 0), (0, -2), (0, 2), (-1, -1), (-1, 1), (1, -1), (1, 1))  # steps across one place


def _unreached(gray: np.ndarray, dark: np.ndarray, local: Mapping[Pos, np.ndarray], card: float
               ) -> dict[Pos, np.ndarray]:
    """Tokens the field's growth could not reach, at the homography a step put them: places
    across one place from a token (two steps straight or one diagonal), next to none, whose
    frame shows as much as a grown neighbour's must (FRAME_SHOWS) and holds plain card with
    a drawing (``_drawn_card``). The field is connected, so the place between lies hidden
    (a cup, a hand over it); missed, such a token beyond the top row or left column numbers
    every token read a place off, silently (a cup over a field's top-left corner did).
    Its card's level is not compared with the field's: a strong frame is asked of it, as of
    any grown neighbour, and the light beside a cup or a hand differs."""
    out: dict[Pos, np.ndarray] = {}
    for (r, c), H in local.items():
        for dr, dc in BEYOND_HIDDEN:
            n = (r + dr, c + dc)
            if n in local or n in out or any(m in local for m in _neighbours(n)):
                continue
            Hn = _stepped(gray, H, dr, dc)
            if Hn is not None and _frame_evidence(gray, Hn) >= FRAME_SHOWS and _drawn_card(gray, dark, Hn, card):
                out[n] = Hn
    return out


def _token_places(gray: np.ndarray, dark: np.ndarray, found: Mapping[Pos, np.ndarray]
                  ) -> tuple[dict[Pos, np.ndarray], dict[Pos, np.ndarray]]:
    """Each token's place and its own homography (token mm -> pixels of ``gray``), grown
    outwards one pitch at a time from the reference token: a neighbour is a token when a
    frame found there lines up with the step, or its frame shows along most of its length.
    Stepping from each token's own frame, rather than from one grid for the whole field,
    keeps every step right under a distorting lens.
    Also the places that may hold a token all the same, at the homography the step put
    them: next to the field, its frame showing in part (``_looks_like_token``), or across a
    hidden place (``_unreached``). Missed, such a token would go unreported and, beyond the
    field's top row or left column, move every other token's contract position by one,
    silently; taken, the tablecloth could do the same (``numbered``)."""
    if len(found) > MAX_TOKENS:
        raise ReadError("no_board", f"more than {MAX_TOKENS} squares line up in the photo: that is not a "
                                    "Geometrius field")
    quads = list(found.values())
    centres = np.array([q.mean(0) for q in quads])
    start = (0, 0) if (0, 0) in found else next(iter(found))
    local = {(0, 0): _own_frame(gray, homography(square(INNER_MM), found[start]), once=True)}
    partial: dict[Pos, np.ndarray] = {}  # places whose frame shows in part
    frontier = [(0, 0)]
    while frontier:
        r, c = frontier.pop(0)
        for n in _neighbours((r, c)):
            if n in local:  # (a place missed from one side may still show from another)
                continue
            H = _stepped(gray, local[(r, c)], n[0] - r, n[1] - c)
            if H is None:
                continue
            near = np.linalg.norm(apply_h(np.linalg.inv(H), centres), axis=1)
            if near.min() < 0.3 * PITCH_MM:
                quad = _turned_like(quads[int(np.argmin(near))], apply_h(H, square(INNER_MM)))
                local[n] = _own_frame(gray, homography(square(INNER_MM), quad), once=True)
            elif (shows := _frame_evidence(gray, H)) >= FRAME_SHOWS:
                local[n] = _own_frame(gray, H)
            else:
                if shows >= FRAME_PART:
                    partial[n] = H
                continue
            frontier.append(n)
        if len(local) > MAX_TOKENS:
            raise ReadError("no_board", f"more than {MAX_TOKENS} squares line up in the photo: that is not a "
                                        "Geometrius field")
    return local, doubtful_places(gray, dark, local, partial)


def doubtful_places(gray: np.ndarray, dark: np.ndarray, local: Mapping[Pos, np.ndarray],
                     partial: Mapping[Pos, np.ndarray]) -> dict[Pos, np.ndarray]:
    """The places that may hold a token besides the tokens of ``local`` (place -> token mm
    -> pixels of ``gray``), at their homographies: of the places ``partial`` whose frame
    shows in part, those that look like a token (``_looks_like_token``), and the places
    across a hidden one (``_unreached``). The photo's search and the live read at a pose
    ask the same of them."""
    card = float(np.median([_card_level(gray, H)[0] for H in local.values()]))
    doubtful = {n: H for n, H in partial.items() if n not in local and _looks_like_token(gray, dark, H, card)}
    return doubtful | _unreached(gray, dark, local, card)


# --- 2. the local frame -------------------------------------------------------------------

def _own_frame(gray: np.ndarray, H: np.ndarray, once: bool = False) -> np.ndarray:
    """The token's frame refitted from ``H`` (once when ``H`` came from the frame itself)."""
    refined = fit_frame(gray, H) if once else token_frame(gray, H)
    return H if refined is None else refined


def _field_homography(local: Mapping[Pos, np.ndarray]) -> np.ndarray:
    """One homography (grid mm -> pixels) through every token's frame corners."""
    src, dst = [], []
    for (r, c), H in local.items():
        src.append(square(FRAME_MM) + [c * PITCH_MM, r * PITCH_MM])
        dst.append(apply_h(H, square(FRAME_MM)))
    H, _ = cv2.findHomography(np.vstack(src), np.vstack(dst), 0)
    return H


def fit_frame(gray: np.ndarray, H: np.ndarray, blurred: bool = False) -> np.ndarray | None:
    """Refit one token's frame in its top-down view; the token's own homography, or None.
    ``blurred``: each line placed by the blurred printed frame's profile (the polygon is
    measured through this homography; finding the field's tokens needs no such care)."""
    half = FRAME_MM + FRAME_VIEW_MM
    view = warp(gray, H, half, FRAME_PPM).astype(np.float32)
    view = cv2.GaussianBlur(view, (0, 0), 0.6)
    to_photo = view_to_photo(H, half, FRAME_PPM)
    n = view.shape[0]
    to_px = lambda mm: (mm + half) * FRAME_PPM - 0.5  # noqa: E731
    lines = []
    along = np.arange(to_px(-FRAME_MM + 3), to_px(FRAME_MM - 3), 1.0).astype(int)
    for axis in range(2):
        for sign in (-1, 1):
            expect = to_px(sign * FRAME_MM)
            lo, hi = int(expect - 3.5 * FRAME_PPM), int(expect + 3.5 * FRAME_PPM) + 1
            lo, hi = max(lo, 1), min(hi, n - 1)
            band = view[lo:hi, along] if axis == 0 else view[along, lo:hi].T  # rows: across the line
            # The frame is the first dark line met going outwards from the card; the gap
            # between tokens beyond it may be darker still (a dark table, a shadow).
            inward = band[::-1] if sign < 0 else band
            card = inward[:3].mean(0)
            dark = inward < 0.5 * (card + inward.min(0))
            first = np.argmax(dark, axis=0)
            window = np.arange(int(1.2 * FRAME_PPM) + 1)
            rows_ = np.clip(first[None, :] + window[:, None], 0, inward.shape[0] - 1)
            k_in = rows_[np.argmin(np.take_along_axis(inward, rows_, 0), axis=0), np.arange(inward.shape[1])]
            k = (inward.shape[0] - 1 - k_in) if sign < 0 else k_in
            ok = (k > 0) & (k < band.shape[0] - 1) & dark.any(0)
            cols = np.arange(band.shape[1])
            y0, y1 = band[np.maximum(k - 1, 0), cols], band[k, cols]
            y2 = band[np.minimum(k + 1, band.shape[0] - 1), cols]
            denom = y0 - 2 * y1 + y2
            off = np.where(np.abs(denom) > 1e-6, 0.5 * (y0 - y2) / np.where(np.abs(denom) > 1e-6, denom, 1), 0)
            depth = np.maximum(median(band, axis=0), card) - y1  # blur may merge the line with a dark gap
            ok &= depth > 15
            pos = lo + k + np.clip(off, -1, 1)
            if ok.sum() < 8:
                return None
            fitted = robust_line(along[ok].astype(np.float64), pos[ok])
            if fitted is None:
                return None
            if blurred:
                fitted = _blurred_frame_line(view, (to_photo, gray.shape), axis, sign, along[ok], *fitted)
            lines.append((axis, *fitted))
    # Corners: intersect x-lines (axis 1: x = m y + b) with y-lines (axis 0: y = m x + b).
    (_, mt, bt), (_, mb, bb), (_, ml, bl), (_, mr, br) = lines

    def meet(my, by, mx, bx):
        # y = my x + by ; x = mx y + bx
        y = (my * bx + by) / (1 - my * mx)
        return np.array([mx * y + bx, y])

    corners_px = np.array([meet(mt, bt, ml, bl), meet(mt, bt, mr, br), meet(mb, bb, mr, br), meet(mb, bb, ml, bl)])
    corners_mm = (corners_px + 0.5) / FRAME_PPM - half
    if np.abs(corners_mm - square(FRAME_MM)).max() > FRAME_SHIFT_MM:
        return None
    return H @ homography(square(FRAME_MM), corners_mm)


def _blurred_frame_line(view: np.ndarray, photo: tuple[np.ndarray, tuple[int, ...]], axis: int, sign: int,
                        along: np.ndarray, m: float, b: float) -> tuple[float, float]:
    """A frame line (``axis`` 0: y = m x + b, 1: x = m y + b, pixels of the frame's top-down
    ``view``; ``sign``: which way is outwards) moved to where the printed frame, blurred,
    fits the profile across it best (``geometrius_frame``): blur running the line, the card
    beyond it and the dark gap together moves the darkest point outwards, up to the gap.
    ``photo``: the view's pixels -> photo pixels homography and the photo's shape. A profile
    the photo's edge cuts keeps the line as found: the view repeats the photo's last pixels
    past its edge, a flat run no printed profile fits (the line moved by over a millimetre,
    the token's frame sheared, its angles a degree off)."""
    s = np.arange(-FRAME_PROFILE_MM, FRAME_PROFILE_MM + 1e-9, 1 / FRAME_PPM)
    across = m * along[None, :] + b + sign * s[:, None] * FRAME_PPM
    n = view.shape[0]
    if (across < 0).any() or (across > n - 1).any():  # the line is far from where the view expected it
        return m, b
    to_photo, shape = photo
    cols = np.broadcast_to(along[None, :], across.shape)
    # The samples fill a parallelogram of the view, which the homography carries to a convex
    # quadrilateral: all of them lie in the photo when its four corners do.
    ends = np.ix_([0, -1], [0, -1])
    corners = [cols[ends], across[ends]]
    at_px = apply_h(to_photo, np.stack(corners if axis == 0 else corners[::-1], axis=-1))
    if (at_px < 0).any() or (at_px > [shape[1] - 1, shape[0] - 1]).any():
        return m, b
    lo = np.clip(np.floor(across).astype(int), 0, n - 2)
    frac = np.clip(across - lo, 0, 1)
    # Each sample between two view pixels across the line, taken by flat index (numpy's
    # quickest gather: the profiles of every token's four lines are thousands of samples).
    index, step = (lo * n + cols, n) if axis == 0 else (cols * n + lo, 1)
    flat = view.ravel()
    values = flat.take(index) * (1 - frac) + flat.take(index + step) * frac
    profile = median(values, axis=1)  # a chip or a hand over part of the line is outvoted
    at = frame_line(profile, s, FRAME_PROFILE_MM - FRAME_EDGES_MM[-1] / 2, FRAME_EDGES_MM)
    return (m, b) if at is None else (m, b + sign * at * FRAME_PPM)


def token_frame(gray: np.ndarray, H: np.ndarray, blurred: bool = False) -> np.ndarray | None:
    """A token's own homography: its frame fitted where the grid puts it, then fitted again
    where the first fit found it (the grid may be millimetres off at a far corner).
    ``blurred``: the second fit places each line by the blurred printed frame's profile
    (``_blurred_frame_line``), for a token whose polygon is to be measured; the first
    only needs to land near the frame."""
    first = fit_frame(gray, H)
    if first is None:
        return None
    second = fit_frame(gray, first, blurred)
    return first if second is None else second


# --- the field's places and their numbering --------------------------------------------------

@dataclass(frozen=True)
class Field:
    """The located field: grid homography (grid mm -> photo px), the token places, and the
    tokens' own homographies where their frames were fitted (token mm -> photo px)."""

    H: np.ndarray
    places: tuple[Pos, ...]
    local: Mapping[Pos, np.ndarray] = field(default_factory=dict)
    doubtful: frozenset[Pos] = frozenset()  # places that may hold a token (or be the tablecloth)
    origin: Pos | None = None  # a live pose's (0, 0): see ``orient``


def _search_gray(image: np.ndarray, full_gray: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The grey photo the token search runs on (shrunk to WORK_WIDTH, smoothed when noisy)
    and its scale to the photo. ``full_gray``: the photo's grey, when already made."""
    h, w = image.shape[:2]
    f = min(1.0, WORK_WIDTH / max(w, h))
    # grey before shrinking: a third of the work
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if full_gray is None else full_gray
    if f < 0.5:  # an exact halving first: its own quick path, and the same pixels to a grey level
        gray = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        gray = cv2.resize(gray, None, fx=2 * f, fy=2 * f, interpolation=cv2.INTER_AREA)
    elif f < 1:
        gray = cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    if _noise(gray) > NOISY:
        gray = cv2.GaussianBlur(gray, (0, 0), 1.0)
    return gray, f


def _square_frames(gray: np.ndarray, dark: np.ndarray) -> list[np.ndarray]:
    """:func:`_frame_quads` in the search's dark-line mask ``dark`` of ``gray``, sought at a
    fainter contrast when none shows: in a blurred photo the thin frames only just stand out."""
    return _frame_quads(dark) or _frame_quads(search_mask(gray, 5))


def locate_field(image: np.ndarray, full_gray: np.ndarray | None = None) -> Field:
    h, w = image.shape[:2]
    if min(h, w) < 200:
        raise ReadError("image_too_small", f"the image is {w}x{h}; a photo of the field needs at least 200 pixels")
    gray, f = _search_gray(image, full_gray)
    dark = search_mask(gray)
    quads = _square_frames(gray, dark)
    if not quads:
        raise _too_steep(gray, dark, 0) or ReadError("no_board", "no Geometrius tokens were found in the photo (no "
                                                           "square token frames)")
    if len(quads) > 10 * MAX_TOKENS:
        raise ReadError("no_board", f"{len(quads)} squares show in the photo: that is not a Geometrius field")
    squares = len(quads)
    likeness = [_token_like(gray, dark, q) for q in quads]
    quads = [q for q, v in sorted(zip(quads, likeness), key=lambda x: -x[1]) if v > 0] or quads
    local: dict[Pos, np.ndarray] = {}
    doubtful: dict[Pos, np.ndarray] = {}
    for found in _grids(quads):  # a small field may be the tablecloth's: try the next grid
        if found:
            grown, maybe = _token_places(gray, dark, found)
            local, doubtful = (grown, maybe) if len(grown) > len(local) else (local, doubtful)
            if len(local) >= SURE_FIELD:
                break
    if not local:
        raise _too_steep(gray, dark, squares) or ReadError("no_board", "no Geometrius tokens were found in the photo")
    grid = _field_homography(local)
    _field_too_steep(gray, grid, list(local))
    up = np.array([[1 / f, 0, 0.5 / f - 0.5], [0, 1 / f, 0.5 / f - 0.5], [0, 0, 1]])
    return Field(up @ grid, tuple(sorted(local | doubtful)), {p: up @ H for p, H in local.items()},
                  frozenset(doubtful))


def orient(H: np.ndarray, places: Sequence[Pos], origin: Pos | None = None) -> tuple[dict[Pos, Pos], np.ndarray]:
    """Contract labels: the grid turned so +col points right in the photo, shifted to 0.
    Also the homography from contract grid units (cell (r, c) spans [c, c+1] x [r, r+1]) to pixels.

    ``origin``: read at a live pose (``H`` its contract frame), the pose's (0, 0). Its turn is
    kept, and rows and columns count from its first row and column unless a token lies above
    or left of them (a push grew the field): they held tokens when the pose was located, and
    a push never empties a place, so a hand or a cup over them now moves no token's number.

    Of the four quarter turns, the one whose +col points nearest the photo's right at the
    field's centre (the mean of its tokens) is taken, both axes being weighed: seen at a slant
    the two axes need not be square in the photo, and rounding one axis's angle alone would
    give either answer when both lie some 40 degrees from level (then the grid's own axis
    names, an accident of which frame was the reference, would decide). An exact tie goes
    to the fewest turns."""
    centre = np.mean([[c * PITCH_MM, r * PITCH_MM] for r, c in places], axis=0)
    q = apply_h(H, np.array([centre, centre + [10.0, 0.0], centre + [0.0, 10.0]]))
    x_dir, y_dir = q[1] - q[0], q[2] - q[0]
    # +col after k turns of (r, c) -> (c, -r): the grid's +x, -y, -x, +y.
    cols = (x_dir, -y_dir, -x_dir, y_dir)
    k = 0 if origin is not None else int(np.argmin([abs(math.atan2(d[1], d[0])) for d in cols]))
    turned = {}
    for p in places:
        r, c = p
        for _ in range(k):
            r, c = c, -r
        turned[p] = (r, c)
    counted = [*turned.values(), *([origin] if origin is not None else [])]
    r0, c0 = min(r for r, _ in counted), min(c for _, c in counted)
    labels = {p: (r - r0, c - c0) for p, (r, c) in turned.items()}
    # Contract grid (x = col, y = row, units of a pitch, cell corners at integers) -> grid mm.
    to_mm = np.diag([PITCH_MM, PITCH_MM, 1.0]) @ np.array([[1, 0, c0 - 0.5], [0, 1, r0 - 0.5], [0, 0, 1]])
    M = _contract_to_grid(k) @ to_mm
    return labels, H @ M


def numbered(H: np.ndarray, places: Sequence[Pos], doubtful: frozenset[Pos], origin: Pos | None = None
              ) -> tuple[dict[Pos, Pos], np.ndarray, bool]:
    """``orient``'s labels and homography for the places read, and whether the numbering
    rests on a doubtful place: whether any token not in doubt would be numbered otherwise
    without the doubtful ones. Rows and columns count from the topmost and leftmost token
    read, so a doubtful place beyond the others' top row or left column (a real token half
    hidden, or the tablecloth) decides every token's position: whichever it is, no token's
    position is then sure.

    Live (``origin``: the pose's (0, 0)), the numbering also rests on what is not seen when
    the pose's first row or column shows no token now: most likely a hand or a cup over it
    (the numbering from the pose is then right), but a push taken back also empties a
    place. The numbering is then kept from the pose, every position in doubt: the live
    referee waits for the hand to lift rather than count from the tokens it sees."""
    labels, contract_H = orient(H, places, origin)
    sure = [p for p in places if p not in doubtful]
    own = orient(H, sure, None if origin is None else (min(r for r, _ in sure), min(c for _, c in sure)))[0]
    return labels, contract_H, any(labels[p] != at for p, at in own.items())


def _contract_to_grid(k: int) -> np.ndarray:
    """Turned grid coordinates (x = col, y = row) -> the field's own grid coordinates, undoing
    k quarter turns of (r, c) -> (c, -r): one undoes as (c', r') -> (c, r) = (r', -c')."""
    M = np.eye(3)
    step = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], np.float64)
    for _ in range(k):
        M = M @ step
    return M


def _cell_homography(pose: BoardPose, r: int, c: int) -> np.ndarray:
    """Token millimetres of the cell (r, c) -> photo pixels, at a pose."""
    to_units = np.array([[1 / PITCH_MM, 0, c + 0.5], [0, 1 / PITCH_MM, r + 0.5], [0, 0, 1]])
    return np.linalg.inv(pose.homography) @ to_units


def pose_evidence(frame: np.ndarray, pose: BoardPose) -> float:
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    w, h = (int(round(v)) for v in pose.extent)
    shares = [_frame_evidence(gray, _cell_homography(pose, r, c)) for r in range(h) for c in range(w)]
    return float(np.mean(shares)) if shares else 0.0


def pose_places(gray: np.ndarray, pose: BoardPose) -> tuple[dict[Pos, np.ndarray], dict[Pos, np.ndarray]]:
    """The places at a pose whose frame shows (tokens) and those where it shows in part, with
    their homographies (token mm -> pixels of ``gray``): the pose's own places, and places
    beyond it beside a token: a push grows the field by one at a line's end, and a token
    pushed above or left of the pose renumbers every other. A place beyond is stepped to
    from its neighbour's own frame: the pose's grid, fitted on the field it was located on,
    bends away from the tokens beyond it under a distorting lens."""
    ew, eh = (int(round(v)) for v in pose.extent)
    todo = {(r, c): _cell_homography(pose, r, c) for r in range(eh) for c in range(ew)}
    looked = set(todo)
    tokens: dict[Pos, np.ndarray] = {}
    partial: dict[Pos, np.ndarray] = {}
    while todo:
        p, H = todo.popitem()
        shows = _frame_evidence(gray, H)
        if shows < FRAME_SHOWS:
            if shows >= FRAME_PART:
                partial[p] = H
            continue
        tokens[p] = H
        beyond = [n for n in _neighbours(p) if n not in looked]
        if beyond and len(tokens) <= MAX_TOKENS:
            looked.update(beyond)
            if _frame_beyond(gray, H, p, beyond):
                own = _own_frame(gray, H, once=True)
                todo |= {n: Hn for n in beyond if (Hn := _stepped(gray, own, n[0] - p[0], n[1] - p[1])) is not None}
    return tokens, partial


def _frame_beyond(gray: np.ndarray, H: np.ndarray, p: Pos, beyond: Sequence[Pos]) -> bool:
    """Whether a frame may show at any place ``beyond`` the token at ``p`` (``H``: the pose's
    homography there), looked at through the pose's grid: the token's own frame (a fit per
    token, on every live read) is needed to step there only then. A place outside the photo
    through the grid may lie inside it through the own frame: it is looked at."""
    for n in beyond:
        Hg = _stepped(gray, H, n[0] - p[0], n[1] - p[1])
        if Hg is None or _frame_evidence(gray, Hg) >= FRAME_HINT:
            return True
    return False
