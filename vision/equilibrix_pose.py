"""Find an Equilibrix board in a photo and fit its pose: the round outlines, the printed circle,
the Flower-of-Life drawing matched and aligned, the lens, and the upright labelling.

Reading goes pose -> fields and ring -> state; this module does the pose (``vision.equilibrix``
puts the steps together). ``locate`` gives the pose.

Geometry (``locate_board``), on a copy about 720 px wide, one module per step:

1. *Round outlines* (``vision.equilibrix_edges``, on a busy table ``vision.equilibrix_outlines``):
   the board's edge, the printed circle, sometimes a cup's rim.
2. *The printed circle* (``vision.equilibrix_circle``): a thin dark line with bare wood on both sides.
3. *Perspective* (``vision.equilibrix_perspective``): the frame, right but for the turn, from
   the two concentric circles, or from the printed circle alone.
4. *Turn* (``vision.equilibrix_guesses``): the drawing matched turned and shifted, the first
   guesses of the pose.
5. *Refinement* and 6. *Lens* (``vision.equilibrix_fit``): each guess fitted to the drawing
   piece by piece; here the pose more of the drawing's pieces agree with wins, one they
   confirm on some sides only is refitted with the printed circle, and one few confirm is a
   board only where the printed circle lies where it puts it all round.
7. *Upright*: the frame is turned by a multiple of 60 degrees so the node hexagon's side
   nearest the photo's top is up (the labelling ``vision.synth.equilibrix`` documents): the
   board cannot tell its sides apart, the photo can. Near a tie (the board turned by about 30
   degrees, two sides within TIE_DEG of equally near) a small pose error could pick either;
   any labelling that follows the board's turn must switch somewhere, so a lone photo keeps
   the nearest side, but ``locate_board(frame, reference=earlier_pose)`` keeps the side the
   camera's earlier pose had on top (:func:`_upright`). The ring and the Origin do not fix it:
   the Origin moves every turn and the ring empties.
"""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np

from . import flowergrid as fg
from .equilibrix_circle import RAY_ANGLES, printed_circle
from .equilibrix_drawing import CORNER_NODES, about_centre, pose_from
from .equilibrix_edges import PhotoEdges, working
from .equilibrix_fit import (PATCH_TOLERANCE, SURE_VOTES, agreeing, anchors, drawn, fit_drawing, lens_fit, matches,
                             near_pose, one_sided, second_opinion)
from .equilibrix_guesses import NO_DRAWING, SURE_MATCH, centred_guesses, first_frame
from .equilibrix_outlines import ellipse_points
from .errors import ReadError
from .pose import BoardPose, check_angle

TURNS_TRIED = 3  # turns aligned when the best match is not sure
MIN_MATCH = 0.3  # normalised correlation with the drawing below which there is no board
GUESSES_FITTED = 8  # at most this many first guesses (frames and turns) are fitted, best matched first
POSE_TRUST = 0.3  # share of the drawing's pieces that must agree with a pose for its fields to be read
CIRCLE_ROUNDS = 12  # a pose few pieces confirm: rounds of fitting to the printed circle and matching again
CIRCLE_STEPS = 3  # ... each round this many steps of moving the circle's points onto it (see _circle_fit)
CIRCLE_KEEP = 3.0  # ... keeping the pieces within this many PATCH_TOLERANCE of the pose so far
CIRCLE_HOLDS = 0.15  # r: the printed circle found this near where a pose puts it, all round, vouches for its geometry
PIECE_WEIGHT = 4  # ... each piece weighing as this many of the circle's EDGE_RAYS points
LENS_MIN = 0.08  # a weaker lens term is within what the fit finds on lens-free photos (up to 0.06)
LENS_GAIN = 1  # a lens term must bring more than this many more of the drawing's pieces into agreement
TIE_DEG = 4.0  # degrees off a tie of the top side within which a reference pose keeps the labelling


def _circle_fit(pose: BoardPose, circle: np.ndarray, board: np.ndarray, photo: np.ndarray) -> BoardPose:
    """The pose fitted through matched pieces (``board`` -> ``photo``) and the printed circle's
    points in the photo (``circle``). A circle point's place on the circle is not known, only
    that it lies on it: it is paired with the circle's point in the same direction from the
    middle as the pose puts it, and the fit is repeated (iterative closest points)."""
    centre = np.full(2, fg.DISC)
    for _ in range(CIRCLE_STEPS):
        on = pose.to_board(circle) - centre
        on = centre + fg.OUTER_LINE * on / np.maximum(np.linalg.norm(on, axis=1), 1e-9)[:, None]
        H, _ = cv2.findHomography(np.vstack([board] * PIECE_WEIGHT + [on]),
                                  pose.lens.undistort(np.vstack([photo] * PIECE_WEIGHT + [circle])), 0)
        if H is None:
            return pose
        pose = pose_from(H, pose.image_size, pose.distortion, pose.quality)
    return pose


def _circle_holds(gray: np.ndarray, pose: BoardPose, thin: np.ndarray) -> bool:
    """Does the printed circle the photo shows lie where ``pose`` puts it, all round (within
    CIRCLE_HOLDS)? Found whole from the parts that show (a mug standing on the flower hides
    some of it, not its ellipse), it fixes the view's tilt, scale and middle; a pose fitted
    through the drawing's pieces on one side of the mug, tilted off on the far side, puts it
    elsewhere there (seed 8 mug photo 34's first pose: 0.33 r; photo 8's, 0.47 r off the true
    circle, finds none near it)."""
    circle = printed_circle(gray, pose, thin)
    if circle is None:
        return False
    on = pose.to_board(ellipse_points(circle, RAY_ANGLES))
    return bool(np.abs(np.hypot(*(on - fg.DISC).T) - fg.OUTER_LINE).max() < CIRCLE_HOLDS)


def _round_the_circle(gray: np.ndarray, pose: BoardPose, votes: tuple[int, int], found: tuple[np.ndarray, np.ndarray],
                      thin: np.ndarray) -> tuple[BoardPose, tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """A pose few of the drawing's pieces confirm, and those on some sides only
    (:func:`vision.equilibrix_fit.one_sided`), refitted with the printed circle round the whole flower. When a hand
    covers one side, the pieces that agree lie mostly on the sides it leaves; a homography
    through them alone can tilt the far side off by half a unit (seed 3 ``hand`` #5: 0.51 r).
    The printed circle shows all round but for the hand and is found as a whole
    (:func:`vision.equilibrix_circle.circle_ellipse`, inside the board's edge the pose puts in the photo): it fixes the
    view's tilt and scale, the pieces the turn. Fitted through both, the drawing is matched
    again where that pose puts it, the pieces near it fitted with the circle again, and so on
    (pieces first found off come in). The board's edge itself is no such witness: its strongest
    step is often the ring tiles' or the hand's. The pose is kept when more of the drawing's
    pieces agree with it than with the one before. (pose, votes, matches) as :func:`vision.equilibrix_fit.patches`."""
    board, photo = found
    circle = printed_circle(gray, pose, thin)
    if circle is None:
        return pose, votes, found
    points = ellipse_points(circle, RAY_ANGLES)
    best, fitted, keep = (pose, votes, found), pose, PATCH_TOLERANCE
    for _ in range(CIRCLE_ROUNDS):
        pieces = near_pose(fitted, board, photo, keep) & drawn(board)
        if pieces.sum() < 4:
            break
        fitted = _circle_fit(fitted, points, board[pieces], photo[pieces])
        board, photo = matches(gray, fitted)
        agree = agreeing(fitted, board, photo)
        if agree[0] > best[1][0]:
            best = (fitted, agree, (board, photo))
        keep = CIRCLE_KEEP * PATCH_TOLERANCE
    return best


def _upright(pose: BoardPose, reference: BoardPose | None = None) -> BoardPose:
    """The same pose turned by 60 degree steps so the node hexagon's side nearest the photo's
    top is the top side (the labelling of the contract's field ids).

    When the board is turned by about 30 degrees two sides are about equally near the top, and
    a small pose error may pick either. A labelling that follows the board's turn in the photo
    must switch somewhere, so a lone photo cannot avoid that switch, only place it (here: at
    the exact tie). A fixed camera can: near a tie (within TIE_DEG) the side is taken that lies
    where the top side of ``reference`` (its earlier pose) lies, so re-locating the board does
    not relabel it. Away from a tie the reference is not used."""
    corners = np.array([fg.node_xy(n) for n in CORNER_NODES]) + fg.DISC
    sides = (corners + np.roll(corners, -1, 0)) / 2
    mids = pose.to_photo(sides)
    order = np.argsort(mids[:, 1])
    k = int(order[0])
    if reference is not None:
        centre = pose.to_photo(np.array([[fg.DISC, fg.DISC]]))[0]
        reach = float(np.mean(np.linalg.norm(mids - centre, axis=1)))
        # Two sides' heights differ by about reach * (angle off the tie, radians).
        if mids[order[1], 1] - mids[k, 1] < reach * math.radians(TIE_DEG):
            before = reference.for_size(pose.image_size).to_photo(sides[:1])[0]
            k = int(min(order[:2], key=lambda j: np.linalg.norm(mids[j] - before)))
    board_to_undist = np.linalg.inv(pose.homography) @ about_centre(60.0 * k)
    return pose_from(board_to_undist, pose.image_size, pose.distortion, pose.quality, pose.residual)


def locate(image: np.ndarray, reference: BoardPose | None = None) -> BoardPose:
    """The round board's pose in a BGR photo; ReadError("no_board") when there is none.
    ``reference``: the board's earlier pose from the same camera, which keeps its labelling
    when the board lies near a tie of the top side (:func:`_upright`)."""
    gray, lab, s = working(image)
    size = (gray.shape[1], gray.shape[0])
    edges = PhotoEdges(gray)
    # On a busy table (a patterned cloth, stripes) the pattern's edges run into the board's
    # edge all round, and no whole curve gives its ellipse: the curves' smooth arcs do. Its
    # strong steps may also set the edges' cut above the printed circle's thin line: the whole
    # curves of the photo's fainter edges then hold the circle (:meth:`vision.equilibrix_edges.PhotoEdges.fainter`).
    # When none of those guesses' fits is confirmed, the printed circles they came from are
    # tried once more, the drawing laid about each frame's own middle
    # (:func:`vision.equilibrix_guesses.centred_guesses`).
    # Not for the live referee looking for a board it lost (``reference``): every half second
    # while a hand covers the board it would cost 0.5-2.5 s. Nor with no circle found: the
    # earlier search's refusal says more (no round edge, the board cut by the photo's edge).
    for arcs, faint, centred in ((False, False, False), (True, False, False), (False, True, False),
                                 (False, False, True)):
        if centred and (reference is not None or not edges.frames):
            continue
        try:
            pose = _locate_in(gray, lab, size, arcs=arcs, edges=edges.fainter() if faint else edges,
                              centred=centred)
            break
        except ReadError as error:
            missed = error
    else:
        if edges.outline_cut():
            raise ReadError("no_board", "the board runs out of the photo and too little of it shows to place "
                            "it for sure; take the photo with the whole board in it") from missed
        seen = edges.round_view()
        if seen is not None:
            check_angle(seen)  # a round board seen too steeply: "impossible_angle", as for the other games
        raise missed
    full = (image.shape[1], image.shape[0])
    pose = _upright(pose.scaled(full[0] / size[0]) if s < 1.0 else pose, reference)
    check_angle(pose)  # beyond it the far fields are slivers the drawing's pieces barely fix
    return pose


def _locate_in(gray: np.ndarray, lab: np.ndarray, size: tuple[int, int], arcs: bool = False,
               edges: PhotoEdges | None = None, centred: bool = False) -> BoardPose:
    """The board's pose in the working copy (see :func:`locate`), its quality the share of the
    drawing's pieces that agree with it. ``arcs``, ``edges``: see :func:`vision.equilibrix_guesses.first_frame`;
    ``centred``: the first guesses from the frames earlier searches in ``edges`` made
    (:func:`vision.equilibrix_guesses.centred_guesses`)."""
    edges = edges or PhotoEdges(gray)
    guesses = centred_guesses(gray, size, edges.frames) if centred else first_frame(gray, lab, size, edges, arcs=arcs)
    # Glare or shadow can favour a wrong turn by a little: then the runners-up are aligned
    # too, and the pose most of the drawing's pieces agree with wins.
    sure = len(guesses) == 1 and guesses[0][0][1] >= SURE_MATCH
    tried = guesses[0][:1] if sure else [g for found in guesses for g in found[:TURNS_TRIED]]
    best, agree, matched, top = None, (-1, -1), None, 0.0
    for attempt in range(2):
        for board_to_photo, match in sorted(tried, key=lambda g: -g[1])[:GUESSES_FITTED]:
            pose, votes, found = fit_drawing(gray, pose_from(board_to_photo, size, quality=match))
            # On a tie of the drawing's pieces the board's edge decides: as many of a blurred
            # drawing's pieces can agree with a pose too large by about half as with the right
            # one, and none of the edge's with it (held-out seed 97 `blur` 4: 16 of 49 each).
            if votes > agree:
                best, agree, matched, top = pose, votes, found, match
            if agree[0] >= SURE_VOTES * len(anchors()):
                break
        if not sure or attempt or agree[0] >= POSE_TRUST * len(anchors()):
            break
        # A sure match the drawing's pieces do not confirm (a steep view's affine guess can
        # correlate well and still be off): every other guess is fitted too.
        tried = [g for found in first_frame(gray, lab, size, edges, every=True, arcs=arcs)
                 for g in found[:TURNS_TRIED]]
    # A steep view's first guess is off by more than a piece may move: matched again where
    # the first fit puts them, more pieces are found.
    best, agree, matched = second_opinion(gray, (best, agree, matched), best)
    # A pose the drawing confirms (POSE_TRUST), but on some sides only: the printed circle sets
    # its far side right. One it does not confirm is not made so (its fields stay in doubt).
    if POSE_TRUST * len(anchors()) <= agree[0] < SURE_VOTES * len(anchors()) and one_sided(best, *matched):
        best, agree, matched = _round_the_circle(gray, best, agree, matched, edges.thin)
    if agree[0] < POSE_TRUST * len(anchors()) and not _vouched_for(gray, best, agree, matched, top, edges.thin):
        raise ReadError("no_board", NO_DRAWING)
    # The lens: kept when more of the drawing and the edge agree with it than without.
    bent, bent_votes = lens_fit(gray, best, *matched)
    if bent_votes[1] > agree[1] + LENS_GAIN and abs(bent.distortion) >= LENS_MIN:
        best, agree = bent, bent_votes
    # How much of the drawing confirms the pose: a pose it does not confirm is not trusted.
    return replace(best, quality=agree[0] / len(anchors()))


def _vouched_for(gray: np.ndarray, pose: BoardPose, votes: tuple[int, int], found: tuple[np.ndarray, np.ndarray],
                 top: float, thin: np.ndarray) -> bool:
    """Is there a board at a pose fewer than POSE_TRUST of the drawing's pieces agree with? Only
    where the printed circle the photo shows lies where the pose puts it all round
    (:func:`_circle_holds`): every Equilibrix board has it round the flower, found whole from
    the parts that show. A whole-drawing match above MIN_MATCH does not vouch alone: another
    game's lattice matches it too (an empty Gemblo board under a hard shadow, 960x720: its
    hexagons matched 0.36-0.47 while 1-10 of 49 pieces agreed; no printed circle lies where
    those poses put it, the nearest 0.69 r off). A board it vouches for is still read with
    every field in doubt (its quality is under POSE_TRUST).

    Where the drawing matched weakly as a whole too (below MIN_MATCH), the pieces that match
    anywhere near (``found``) must still agree (POSE_TRUST of them), if half or more match: a
    mug standing on the flower hides up to half the drawing, and a piece under it matches
    nothing (no line shows there), so it says nothing against a board the circle round the
    mug places (seed 8 mug photos 0, 9, 18: 13 of 49 pieces agree, of 30-32 that match, the
    pose within 0.15 r). More than half unseen is more than a mug hides. Counting only the
    pieces that show without the circle let a held-out ``hard`` photo (seed 83) read one
    visible field wrong surely."""
    if not _circle_holds(gray, pose, thin):
        return False
    if top >= MIN_MATCH:
        return True
    shown = int(drawn(found[0]).sum())
    return shown >= len(anchors()) / 2 and votes[0] >= POSE_TRUST * shown
