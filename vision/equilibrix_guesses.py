"""The first guesses of the board's pose, the drawing's turn found: step 4 of the Equilibrix
pose search (``vision.equilibrix_pose`` puts the steps together).

*Turn*: the drawing repeats every 60 degrees; it is matched turned in 3 degree steps with
a small shift. When the best match is weak (glare, shadow, a steep view), the runners-up,
the other frames and the next circles are tried too: how well the whole drawing correlates
does not tell a steep view's guesses apart, how many of its pieces agree (the fit,
``vision.equilibrix_fit``) does. So too when a circle nothing frames (a ring of dark tiles)
matches surely after the circle the board's edge frames matched less well. When no guess's
fit is confirmed, the circles' frames are tried once more with the drawing laid about their
own middle, each turn judged by how many of its pieces agree: a hand, glare and a mug can
pull the whole drawing's best match off by the most it may move, and to a wrong turn.

Apart because it turns outlines into guesses (:func:`first_frame`, :func:`centred_guesses`),
each a board -> photo map with how well the drawing matched there, and decides nothing about
which is right: the fit and ``vision.equilibrix_pose`` do.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from . import flowergrid as fg
from .equilibrix_circle import (MIN_CIRCLE, RAY_ANGLES, circle_ellipse, disc_ellipse, same_ellipse,
                                sides_differ)
from .equilibrix_drawing import about_centre, drawing, edge_strength_in_light, ellipse_pose, pose_from
from .equilibrix_edges import PhotoEdges, round_outlines
from .equilibrix_fit import MIN_PIECES, patches
from .equilibrix_perspective import horizon_frame, perspective_frame
from .errors import ReadError
from .matching import edge_strength
from .pose import apply_h, rectify

FIT_PPU = 10.0  # top-down pixels per r while matching the drawing
OUTLINES_TRIED = 3  # distinct round outlines tried as the board's edge or its printed circle
SIDES_MAX = 3.0  # Lab difference across the printed circle above which it is the board's edge
SURE_CIRCLE = 0.15  # a printed circle matched this well ends the search
TURN_STEP_DEG = 3.0  # the turn search's step; the alignment takes out what is left
PROBE_TURN_DEG = 6.0  # ... the centred guesses' step (centred_guesses): a fit converges from 6 degrees off
SHIFT_R = 0.5  # how far the global match may move the drawing (r units)
SURE_MATCH = 0.45  # a turn matched this well needs no runner-up
MIN_TRY = 0.2  # ... and below which a first guess is not fitted (one between counts when its pieces agree)
CIRCLES_TRIED = 3  # printed circles whose guesses are fitted when none matches surely
NO_DRAWING = "no board with the Flower-of-Life drawing inside a printed circle was found"  # the refusal's words


def _turns(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int], in_light: bool = False
           ) -> list[tuple[float, float, np.ndarray]]:
    """How well the drawing, turned, lies on the photo's edges in the top-down view of
    ``frame1`` (right but for the turn and a small shift): (correlation, turn, shift) per turn.
    ``in_light``: the edges taken against the light round them
    (:func:`vision.equilibrix_drawing.edge_strength_in_light`)."""
    margin = 1.0
    view = rectify(gray, pose_from(frame1, size), FIT_PPU, margin)
    rect = cv2.GaussianBlur(edge_strength_in_light(view, FIT_PPU) if in_light else edge_strength(view), (0, 0), 0.6)
    c = (fg.DISC + margin) * FIT_PPU
    pad = int(math.ceil(SHIFT_R * FIT_PPU))
    out = []
    for turn in np.arange(0.0, 60.0, TURN_STEP_DEG):
        tmpl = drawing(FIT_PPU, float(turn))
        h0 = (tmpl.shape[0] - 1) // 2
        x0, x1 = int(round(c - h0)) - pad, int(round(c - h0)) + tmpl.shape[0] + pad
        score = cv2.matchTemplate(rect[x0:x1, x0:x1], tmpl, cv2.TM_CCOEFF_NORMED)
        _, top, _, (x, y) = cv2.minMaxLoc(score)
        out.append((float(top), float(turn), (np.array([x, y]) + x0 + h0 - c) / FIT_PPU))
    return out


def _global_match(gray: np.ndarray, frame1: np.ndarray, size: tuple[int, int], in_light: bool = False
                  ) -> list[tuple[np.ndarray, float]]:
    """Board -> photo maps that lay the drawing on the photo's edges, starting from ``frame1``
    (right but for the turn): the turns (within 60 degrees) whose match is a local best, best
    first, each with its correlation. ``in_light``: see :func:`_turns`."""
    scores = _turns(gray, frame1, size, in_light)
    n = len(scores)
    peaks = [scores[k] for k in range(n) if scores[k][0] >= max(scores[(k - 1) % n][0], scores[(k + 1) % n][0])]
    out = []
    for top, turn, shift in sorted(peaks, key=lambda p: -p[0]):
        # Board point b lies at centre + shift + turn(b - centre) in the frame's view.
        out.append((frame1 @ about_centre(turn, shift), top))
    return out


def first_frame(gray: np.ndarray, lab: np.ndarray, size: tuple[int, int], edges: PhotoEdges, every: bool = False,
                 arcs: bool = False) -> list[list[tuple[np.ndarray, float]]]:
    """Board -> photo maps and how well the drawing matches at each, from the board's round
    outlines and the drawing's turn (:func:`_global_match`): one list per first guess of the
    frame, best turn first; a single list when the drawing matched surely.

    The best-covered ellipse in the photo is either the board's edge or the printed circle
    (whichever shows better against the table): both are tried, the printed circle is looked
    for inside each, and the better find wins. With both outlines, perspective is solved
    exactly (:func:`vision.equilibrix_perspective.perspective_frame`); with the circle alone,
    as an affine map and from the vanishing line whose board's edge shows best
    (:func:`vision.equilibrix_perspective.horizon_frame`). When no guess is sure, the guesses
    of the next circles are gathered too: how well the whole drawing correlates does not tell
    a steep view's guesses apart, how many of its pieces agree does
    (:func:`vision.equilibrix_pose.locate`). A clear find ends the search only where the
    board's edge frames it (:func:`_framing`). When no frame's drawing matches at all, those of
    framed circles are matched once more against the light round the lines (a hard shadow,
    :func:`vision.equilibrix_drawing.edge_strength_in_light`), as guesses the drawing's pieces
    must confirm. ``every``: gather every guess, even after a sure match (which the drawing's
    pieces then did not confirm). ``arcs``: outlines from smooth arcs too (a busy table, see
    :func:`vision.equilibrix_edges.round_outlines`); those an earlier search looked inside are
    not tried again (``edges``: the photo's, shared with that search, or its fainter edges)."""
    outlines = round_outlines(edges, arcs)
    ratio = fg.DISC / fg.OUTER_LINE
    tries, distinct = [], []
    for _, first in outlines:
        (cx, cy), (d1, d2), angle = first
        if any(math.hypot(cx - x, cy - y) < 0.05 * max(d1, d2) and abs(max(d1, d2) / max(e1, e2) - 1) < 0.05
               for (x, y), (e1, e2), _ in distinct):
            continue  # the same outline again (both sides of a line give a curve each)
        search = (arcs, edges.cut)
        if any(same_ellipse(first, seen) for by, seen in edges.looked if by != search):
            continue  # looked inside already, by an earlier search
        distinct.append(first)
        if len(distinct) > OUTLINES_TRIED:
            break
        if (search, first) not in edges.looked:
            edges.looked.append((search, first))
        for disc in (first, ((cx, cy), (d1 * ratio, d2 * ratio), angle)):
            circle, score = circle_ellipse(gray, disc, size, edges.thin)
            # The board's edge can pass for a thin line (its shadowed side wall): the printed
            # circle has the same wood on both sides.
            if circle is not None and sides_differ(lab, circle) < SIDES_MAX:
                tries.append((score, disc, circle))
        if any(score >= SURE_CIRCLE and _framing(circle, outlines) for score, _, circle in tries):
            break  # a clear find the board's edge frames: the other outlines need not be tried
    # A circle framed by the board's edge (an outline round it, about as much larger as on the
    # board) first, then the best matched: a ring of tiles can match the template better than
    # the printed circle, but nothing frames it so.
    framed = []
    for score, disc, circle in tries:
        edge = _framing(circle, outlines)
        framed.append((edge is not None, score, edge or disc, circle))
    guesses: list[list[tuple[np.ndarray, float]]] = []
    circles, framed_guessed, framed_frames = 0, False, []
    for is_framed, score, disc, circle in sorted(framed, key=lambda t: (not t[0], -t[1])):
        if score < MIN_CIRCLE or circles >= CIRCLES_TRIED:
            continue
        circles += 1
        # The edge found on a busy table can be off: the circle alone (affine) is the fallback.
        frames = (lambda: perspective_frame(disc_ellipse(gray, disc), circle, size),
                  lambda: ellipse_pose(circle, size, fg.OUTER_LINE / fg.DISC),
                  lambda: horizon_frame(gray, circle, size))
        for make in frames:
            frame = make()
            if frame is None:
                continue
            edges.frames.append(frame)
            if is_framed:
                framed_frames.append(frame)
            found = [(b2p, top) for b2p, top in _global_match(gray, frame, size) if top >= MIN_TRY]
            # A sure match from a circle nothing frames (a ring of tiles) does not end the search
            # when a framed circle's guesses matched too: the drawing's pieces decide
            # (:func:`vision.equilibrix_pose.locate`).
            if found and found[0][1] >= SURE_MATCH and not every and (is_framed or not framed_guessed):
                return [found]
            if found:
                guesses.append(found)
                framed_guessed |= is_framed
    if not guesses:
        # A hard shadow over part of the drawing: its lines there are faint in the plain edges,
        # not against the light round them. The frames of circles the board's edge frames are
        # matched so. Such a match vouches for nothing by itself (against the light, a busy
        # cloth's pattern and the noise in the dark grow strong too: a Gemblo board on a cloth
        # matched above MIN_MATCH): it is fitted as a guess just good enough to try, and the
        # drawing's pieces, on the plain edges, must confirm it (POSE_TRUST, :func:`vision.equilibrix_pose._locate_in`).
        guesses = [found for found in ([(b2p, MIN_TRY) for b2p, top in _global_match(gray, frame, size, in_light=True)
                                        if top >= MIN_TRY] for frame in framed_frames) if found]
    if not guesses:
        raise ReadError("no_board", NO_DRAWING)
    return sorted(guesses, key=lambda g: -g[0][1])


def centred_guesses(gray: np.ndarray, size: tuple[int, int], frames: list[np.ndarray]
                     ) -> list[list[tuple[np.ndarray, float]]]:
    """First guesses from the frames the earlier searches made (:func:`first_frame`), when no
    fit of theirs was confirmed: the drawing laid about each frame's own middle, turned in
    PROBE_TURN_DEG steps, each turn judged by how many of the drawing's pieces agree with it
    (:func:`vision.equilibrix_fit.patches`); per distinct frame, the turn most agree with, if a homography was
    fitted through them (MIN_PIECES), those most agree with first. The whole-drawing match
    (:func:`_global_match`) moves the drawing up to SHIFT_R to where it correlates best, and a
    hand over the flower, glare and a mug at the rim can pull it to the end of that reach and
    a wrong turn (held-out seed 97 ``hard`` 2: the guesses 0.5-1.3 r off at the corners, 0-2
    agreeing pieces); the printed circle they came from had been found right, and about its
    frame's own middle 12-17 of the drawing's 49 pieces agree at the turns within 6 degrees of
    the right one, 0-2 at the others. Each guess is just good enough to try (MIN_TRY): the drawing's pieces must
    confirm its fit (:func:`vision.equilibrix_pose._locate_in`). A frame whose board's edge lies where an earlier
    one's does (SAME_OUTLINE) is the same frame. ReadError("no_board") when there is none."""
    t = RAY_ANGLES
    edge = fg.DISC + fg.DISC * np.column_stack([np.cos(t), np.sin(t)])
    distinct: list[tuple[np.ndarray, tuple]] = []
    for frame in frames:
        seen = cv2.fitEllipse(apply_h(frame, edge).astype(np.float32))
        if not any(same_ellipse(seen, other) for _, other in distinct):
            distinct.append((frame, seen))
    voted = []
    for frame, _ in distinct:
        turns = [patches(gray, pose_from(frame @ about_centre(turn), size))
                 for turn in np.arange(0.0, 60.0, PROBE_TURN_DEG)]
        pose, votes, _ = max(turns, key=lambda fit: fit[1])
        if votes[0] >= MIN_PIECES:
            voted.append((votes, np.linalg.inv(pose.homography)))
    if not voted:
        raise ReadError("no_board", NO_DRAWING)
    return [[(board_to_photo, MIN_TRY)] for _, board_to_photo in sorted(voted, key=lambda v: v[0], reverse=True)]


def _framing(circle, outlines: list[tuple[float, tuple]]) -> tuple | None:
    """The round outline round a printed circle found, about as much larger as the board's edge
    is than the circle and about as centred (the board's edge framing it), or None. A circle
    nothing frames may be the ring of tiles, or a circle looked for inside an outline taken
    for the printed circle that was the board's edge (seed 5 ``lens_distortion`` #4: matched
    0.16, midway between the ring and the printed circle, and the printed circle's own outline
    was never looked inside)."""
    ratio = fg.DISC / fg.OUTER_LINE
    (cx, cy), (c1, c2), _ = circle
    return next((outline for _, outline in outlines
                 if abs(math.sqrt(outline[1][0] * outline[1][1] / (c1 * c2)) / ratio - 1) < 0.15
                 and math.hypot(outline[0][0] - cx, outline[0][1] - cy) < 0.3 * max(c1, c2)), None)
