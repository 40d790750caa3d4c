"""Things that get in the way of the board: a hand reaching over it (perhaps carrying a piece),
a mug at its edge, and loose pieces lying on the table beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .board import Sprite
from .camera import _jacobian, _plane_coords
from .draw import _blur_mask, _fill, _fixed4, _lerp_into, _ray_exit, _rep3, _roi, _tint
from .light import cast_shadow

if TYPE_CHECKING:
    from .scene import View


@dataclass(frozen=True)
class HandStyle:
    """Whose hand it is (fixed for a photo session)."""

    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float] | None
    sleeve_from_mm: float  # sleeve starts this far behind the wrist
    left: bool
    size: float
    curl: float  # 1 = fingers stretched, 0.5 = curled (foreshortened from above)
    spread_deg: float
    height_mm: float  # grip height above the board
    skew_deg: float  # how far the arm deviates from pointing at the board centre

    @staticmethod
    def random(rng: np.random.Generator) -> HandStyle:
        tones = [(0.93, 0.75, 0.64), (0.86, 0.64, 0.52), (0.72, 0.52, 0.38), (0.55, 0.37, 0.26),
                 (0.36, 0.24, 0.17), (0.25, 0.17, 0.12)]
        skin = tuple(float(np.clip(v * rng.uniform(0.94, 1.06), 0, 1)) for v in tones[rng.integers(len(tones))])
        sleeve = None if rng.random() < 0.3 else tuple(float(v) for v in rng.uniform(0.05, 0.85, 3))
        return HandStyle(skin, sleeve, float(rng.uniform(60, 260)), bool(rng.random() < 0.25),
                         float(rng.uniform(0.88, 1.1)), float(rng.uniform(0.55, 1.0)),
                         float(rng.uniform(0, 12)), float(rng.uniform(35, 140)), float(rng.uniform(-25, 25)))


@dataclass(frozen=True)
class Hand:
    """A hand reaching over the table; `at_mm` is the world point under its grip (thumb-to-fingers)."""

    at_mm: tuple[float, float]
    direction_deg: float  # where the fingers point, world
    height_mm: float  # grip height above the board top
    style: HandStyle
    carrying: Sprite | None = None
    carry_angle_deg: float = 0.0


# Where a mug's footprint lies (``CupStyle.inset``, diameters in from the board's edge along its
# ray from the board's centre): reaching in over the edge, as a mug set down beside the board does,
# or wholly on the board (``place_cup`` keeps such a foot inside the outline all round).
AT_THE_EDGE = (-0.1, 0.55)
ON_THE_BOARD = (1.3, 3.0)


@dataclass(frozen=True)
class CupStyle:
    """A mug: its look and where it stands relative to the board's edge."""

    radius_mm: float
    height_mm: float
    rgb: tuple[float, float, float]
    liquid: tuple[float, float, float] | None
    direction_deg: float  # from the board centre
    inset: float  # how far the footprint reaches inside the board edge, in diameters
    handle_deg: float

    @staticmethod
    def random(rng: np.random.Generator, on_board: bool = False) -> CupStyle:
        """A random mug at the board's edge or, ``on_board``, the same mug (look, size,
        direction, handle) set further in to stand wholly on the board: drawn after it, so
        a seed's mug on the board is its mug at the edge moved, and every draw before it the same."""
        colours = [(0.92, 0.92, 0.9), (0.72, 0.1, 0.1), (0.15, 0.3, 0.68), (0.9, 0.75, 0.15),
                   (0.1, 0.1, 0.11), (0.2, 0.5, 0.3), (0.95, 0.6, 0.7)]
        liquids = [None, (0.22, 0.12, 0.06), (0.45, 0.25, 0.1), (0.75, 0.6, 0.45)]
        mug = CupStyle(float(rng.uniform(36, 46)), float(rng.uniform(85, 110)),
                       colours[rng.integers(len(colours))], liquids[rng.integers(len(liquids))],
                       float(rng.uniform(0, 360)), float(rng.uniform(*AT_THE_EDGE)), float(rng.uniform(0, 360)))
        return replace(mug, inset=float(rng.uniform(*ON_THE_BOARD))) if on_board else mug


def _taper(a: np.ndarray, b: np.ndarray, ra: float, rb: float, n: int = 14) -> np.ndarray:
    """Outline of a limb segment: the convex hull of a disc at each end (2-D, mm)."""
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    ring = np.column_stack([np.cos(t), np.sin(t)])
    hull = cv2.convexHull(np.vstack([a + ra * ring, b + rb * ring]).astype(np.float32))
    return hull[:, 0, :].astype(np.float64)


def _hand_parts(hand: Hand, top_z: float) -> list[tuple[str, np.ndarray]]:
    """3-D outlines (world mm) of the arm, sleeve, palm, fingers and thumb in drawing order;
    "crease" parts are open polylines (knuckle folds)."""
    st = hand.style
    curl = st.curl
    # Hand frame: u towards the fingertips, v towards the little finger; palm centre at 0.
    fingers = []
    finger_specs = ((-26, 72, 18, -1.0), (-8, 79, 18.5, -0.2), (9, 74, 17.5, 0.4), (25, 58, 15.5, 1.0))
    for base_v, length, width, ang in finger_specs:  # index to little finger: v, mm long, mm wide, splay
        a = math.radians(ang * st.spread_deg)
        base = np.array([36.0 - abs(base_v) * 0.25, base_v])
        fingers.append((base, base + length * curl * np.array([math.cos(a), math.sin(a)]), width))
    thumb_base, thumb_joint = np.array([-22.0, -30.0]), np.array([8.0, -47.0])
    ta = math.radians(-25 - 30 * curl)
    thumb_tip = thumb_joint + 34 * np.array([math.cos(ta), math.sin(ta)])
    grip = (fingers[0][1] + thumb_tip) / 2
    t = np.linspace(0, 2 * math.pi, 36, endpoint=False)
    c, s = np.cos(t), np.sin(t)
    palm = np.column_stack([47 * np.sign(c) * np.abs(c) ** 0.7, 42 * np.sign(s) * np.abs(s) ** 0.7])
    palm[:, 1] *= 0.86 + 0.14 * (palm[:, 0] + 47) / 94  # narrower towards the wrist

    wrist_u = -42.0
    back = np.arange(0, 1300, 40.0)
    arm_u = wrist_u - back
    half = 29 + 12 * np.minimum(1.0, back / 260)
    lift = back * math.tan(math.radians(16))  # the forearm rises towards the shoulder

    def band(widths, keep):
        u, w, z = arm_u[keep], widths[keep], lift[keep]
        return (np.vstack([np.column_stack([u, 3 - w]), np.column_stack([u, 3 + w])[::-1]]),
                np.concatenate([z, z[::-1]]))

    parts = [("arm", *band(half, back >= 0))]
    if st.sleeve is not None and np.sum(back >= st.sleeve_from_mm) >= 2:
        parts.append(("sleeve", *band(half + 9, back >= st.sleeve_from_mm)))
    parts.append(("palm", palm, None))
    parts.append(("palm", _taper(thumb_base, np.array([-5.0, -20.0]), 24, 20), None))  # thumb's ball
    if hand.carrying is not None:
        parts.append(("piece", np.zeros((1, 2)), None))  # placeholder: drawn from the sprite
    for base, tip, width in fingers[::-1]:
        parts.append(("finger", _taper(base, tip, width / 2, width * 0.41), None))
        d = (tip - base) / np.linalg.norm(tip - base)
        side = np.array([-d[1], d[0]]) * width * 0.3
        for at in (0.42, 0.72):
            mid = base + (tip - base) * at
            parts.append(("crease", np.array([mid - side, mid + d * 1.5, mid + side]), None))
        if curl > 0.75:  # stretched fingers show their nails
            parts.append(("nail", _taper(tip - 12 * d, tip - 4 * d, width * 0.26, width * 0.24, 10), None))
    parts.append(("finger", _taper(thumb_base + [12, -6], thumb_joint, 14, 12), None))
    parts.append(("finger", _taper(thumb_joint, thumb_tip, 12, 10), None))

    phi = math.radians(hand.direction_deg)
    d = np.array([math.cos(phi), math.sin(phi)])
    n = np.array([-math.sin(phi), math.cos(phi)]) * (-1.0 if st.left else 1.0)
    z0 = top_z - hand.height_mm
    out = []
    for kind, uv, rise in parts:
        uv = (uv - grip) * st.size
        xy = np.asarray(hand.at_mm) + uv[:, :1] * d + uv[:, 1:2] * n
        out.append((kind, np.column_stack([xy, z0 - (np.zeros(len(xy)) if rise is None else rise)])))
    return out


def _cup_outline(centre: np.ndarray, r: float, z: float, n: int = 48) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([centre[0] + r * np.cos(t), centre[1] + r * np.sin(t), np.full(n, z)])


# --------------------------------------------------------------------------- loose pieces


def lay_props(view: View, albedo: np.ndarray, gloss: np.ndarray, sprites: list[Sprite],
               rng: np.random.Generator) -> None:
    """Scatter loose pieces on the table around (never on) the board."""
    taken: list[tuple[np.ndarray, float]] = []
    if view.cup_at is not None:
        taken.append((view.cup_at[0], view.setup.cup_style.radius_mm + 10))
    t = view.setup.table
    for sp in sprites:
        for _ in range(60):
            ang = rng.uniform(0, 2 * math.pi)
            d = np.array([math.cos(ang), math.sin(ang)])
            centre = d * (_ray_exit(view.outline_xy, d) + sp.radius_mm + rng.uniform(2, 150))
            on_table = np.all(np.abs(centre - t.centre_mm) < np.array(t.half_size_mm) - sp.radius_mm)
            p = view.camera.project(np.array([[*centre, 0.0]]))[0]
            inside = -20 < p[0] < view.size[0] + 20 and -20 < p[1] < view.size[1] + 20
            free = all(np.linalg.norm(centre - q) > sp.radius_mm + r for q, r in taken)
            if on_table and inside and free:
                taken.append((centre, sp.radius_mm))
                _draw_sprite(view, albedo, gloss, sp, centre, rng.uniform(0, 360), 0.0)
                break


def _footprint(size_mm: tuple[float, float], angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """A flat rectangle turned by `angle_deg`: its rotation (2 x 2) and its corners (4 x 2)
    around its centre, in world millimetres."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    corners = (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * (np.array(size_mm) / 2)) @ rot.T
    return rot, corners


def _sprite_samples(view: View, sp: Sprite, centre: np.ndarray, angle_deg: float,
                    z: float) -> tuple[tuple[int, int, int, int] | None, np.ndarray | None]:
    """Sprite pixels (remapped RGB, alpha, gloss) seen at each photo pixel of its ROI."""
    rot, corners = _footprint(sp.size_mm, angle_deg)
    hw = np.array(sp.size_mm) / 2
    corners = corners + centre
    roi = _roi(view.camera.project(np.column_stack([corners, np.full(4, z)])), view.size, 2)
    if roi is None:
        return None, None
    x0, y0, x1, y1 = roi
    xy = _plane_coords(view.undist[y0:y1, x0:x1], view.camera.plane_homography(z))
    local = (xy - np.asarray(centre, np.float32)) @ rot.astype(np.float32)
    ppm = sp.layers.shape[1] / sp.size_mm[0]
    mx = (local[..., 0] + hw[0]) * ppm - 0.5
    my = (local[..., 1] + hw[1]) * ppm - 0.5
    out = cv2.remap(sp.layers, mx.astype(np.float32), my.astype(np.float32), cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return roi, out


def _draw_sprite(view: View, albedo: np.ndarray, gloss: np.ndarray, sp: Sprite, centre: np.ndarray,
                 angle_deg: float, z: float) -> None:
    roi, s = _sprite_samples(view, sp, centre, angle_deg, z)
    if roi is None:
        return
    x0, y0, x1, y1 = roi
    a = s[..., 3]
    # A piece is a few mm thick: a small soft shadow on the side away from the light.
    shift = _jacobian(view.camera.plane_homography(z), np.asarray(centre, np.float64)) @ \
        view.setup.light.shadow_shift(3.0)
    m = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
    shade = cv2.warpAffine(a, m, (a.shape[1], a.shape[0]))
    shade = _blur_mask(shade, 1.5 * view.board_scale) * (1 - a)
    dst, g = albedo[y0:y1, x0:x1], gloss[y0:y1, x0:x1]
    dst *= _rep3(1 - 0.4 * shade)
    _lerp_into(dst, np.ascontiguousarray(s[..., :3]), np.ascontiguousarray(a))
    g += (s[..., 4] - g) * a


# --------------------------------------------------------------------------- mug


def place_cup(view: View, rng: np.random.Generator) -> tuple[np.ndarray, float] | None:
    """Stand the mug as its ``inset`` says (at the board's edge or on it), where the camera sees it.

    A mug the conditions stand on the board (``cup_on_board``) keeps its whole foot inside the
    outline: set far in along its ray, its centre may cross the board's centre and its foot the
    far side, and near a corner its foot may cross a side its ray does not."""
    st = view.setup.cup_style
    for k in range(24):
        ang = math.radians(st.direction_deg + 47 * k)
        d = np.array([math.cos(ang), math.sin(ang)])
        edge = _ray_exit(view.outline_xy, d)
        along = edge + st.radius_mm - 2 * st.radius_mm * st.inset
        if view.setup.conditions.cup_on_board:
            along = _foot_inside(view.outline_xy, d, along, st.radius_mm)
        centre = d * along
        z = view.geometry.top_z if np.linalg.norm(centre) < edge else 0.0
        top = view.camera.project(np.array([[*centre, z - st.height_mm]]))[0]
        w, h = view.size
        if 0.05 * w < top[0] < 0.95 * w and 0.05 * h < top[1] < 0.95 * h:
            return centre, z
    return None


def _foot_inside(outline_xy: np.ndarray, direction: np.ndarray, along: float, radius_mm: float) -> float:
    """The point of the line through the board's centre along ``direction`` nearest to ``along``
    (mm from the centre) where a foot of ``radius_mm`` lies wholly inside the outline:
    ``radius_mm`` or more from every side's line. The outline must be convex round the centre,
    as Blokus's, Gemblo's and Equilibrix's are (a Geometrius field's is not: its mug is stood
    over a token by ``stand_over``)."""
    a = outline_xy
    side = np.roll(a, -1, axis=0) - a
    inward = np.column_stack([side[:, 1], -side[:, 0]]) / np.linalg.norm(side, axis=1, keepdims=True)
    inward *= -np.sign(np.sum(inward * a, axis=1, keepdims=True))  # towards the centre
    # along * (inward . direction) >= radius - (the centre's distance to the side's line)
    slope, need = inward @ direction, radius_mm + np.sum(inward * a, axis=1)
    lowest = np.max(need[slope > 0] / slope[slope > 0], initial=-np.inf)
    highest = np.min(need[slope < 0] / slope[slope < 0], initial=np.inf)
    return float(np.clip(along, lowest, highest))


def stand_over(outline_xy: np.ndarray, at_mm: np.ndarray, radius_mm: float) -> tuple[float, float]:
    """The ``CupStyle.direction_deg`` and ``inset`` that stand a mug of ``radius_mm`` with its
    centre over ``at_mm`` (world mm, the board's centre at 0; ``outline_xy``: the board's edge,
    ``View.outline_xy``): ``place_cup``'s first try, solved for the inset. At the board's
    centre (``at_mm`` = 0, a 5 x 5 field's middle token) no direction leads there from the
    edge: the direction is NaN, and a caller must stand the mug elsewhere."""
    towards = at_mm / np.linalg.norm(at_mm)
    edge = _ray_exit(outline_xy, towards)
    inset = (edge + radius_mm - np.linalg.norm(at_mm)) / (2 * radius_mm)
    return math.degrees(math.atan2(towards[1], towards[0])), inset


def cup_layer(view: View):
    """The mug's radiance, opacity and shadow; static, so drawn once per view."""
    st, cam = view.setup.cup_style, view.camera
    centre, zb = view.cup_at
    r, height = st.radius_mm, st.height_mm
    bottom, top = _cup_outline(centre, r, zb), _cup_outline(centre, r, zb - height)
    pb, pt = cam.project(bottom), cam.project(top)
    hd = np.array([math.cos(math.radians(st.handle_deg)), math.sin(math.radians(st.handle_deg))])
    t = np.linspace(0, math.pi, 16)
    handle3 = np.column_stack([centre + np.outer(r + 26 * np.sin(t), hd),
                               zb - height + 18 + (height - 45) * t / math.pi])
    ph = cam.project(handle3)
    roi = _roi(np.vstack([pb, pt, ph]), view.size, 12)
    if roi is None:
        return None
    x0, y0, x1, y1 = roi
    o = np.array([x0, y0])
    rgb = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
    alpha = np.zeros((y1 - y0, x1 - x0), np.float32)
    col = np.array(st.rgb, np.float32)
    px_per_mm = view.board_scale * view.board_depth / float(cam.depth(top[:1])[0])
    handle_behind = cam.depth(handle3[8:9])[0] > cam.depth(np.array([[*centre, zb - height / 2]]))[0]

    def paint(polys, colour, thickness: int = 0):
        m = np.zeros(alpha.shape, np.uint8)
        if thickness:
            cv2.polylines(m, _fixed4(polys, o), False, 255, thickness, cv2.LINE_AA, shift=4)
        else:
            _fill(m, polys, 255, o)
        mf = m.astype(np.float32) / 255
        _lerp_into(rgb, colour if np.ndim(colour) == 3 else _tint(np.ones_like(mf), colour), mf)
        np.maximum(alpha, mf, out=alpha)

    handle_w = max(2, int(round(9 * px_per_mm)))
    if handle_behind:
        paint([ph], col * 0.7, handle_w)
    # Body: a cylinder lit from one side, with a vertical specular streak.
    hull = cv2.convexHull(np.vstack([pb, pt]).astype(np.float32))[:, 0, :]
    cb, ct = cam.project(np.array([[*centre, zb], [*centre, zb - height]]))
    axis = (ct - cb) / max(np.linalg.norm(ct - cb), 1e-6)
    perp = np.array([-axis[1], axis[0]])
    rb = np.abs((pb - cb) @ perp).max()
    rt = np.abs((pt - ct) @ perp).max()
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    along = np.clip(((xs - cb[0]) * axis[0] + (ys - cb[1]) * axis[1]) / max(np.linalg.norm(ct - cb), 1e-6), 0, 1)
    s = np.clip(((xs - cb[0]) * perp[0] + (ys - cb[1]) * perp[1]) / (rb + (rt - rb) * along), -1, 1)
    beta = 0.7 if (view.setup.light.azimuth_deg % 360) < 180 else -0.7
    lam = 0.5 + 0.5 * np.cos(np.arcsin(s) - beta)
    body = _tint((0.3 + 0.7 * lam * (1 - 0.3 * s * s)).astype(np.float32), col)
    body += _rep3((0.8 * np.exp(-((s - math.sin(beta / 2)) / 0.07) ** 2)).astype(np.float32))
    paint([hull], body)
    paint([pt], np.clip(col * 1.08 + 0.05, 0, 1))
    inner = cam.project(_cup_outline(centre, r * 0.9, zb - height))
    paint([inner], col * 0.5)
    if st.liquid is not None:
        m_inner = np.zeros(alpha.shape, np.uint8)
        _fill(m_inner, [inner], 255, o)
        m_liq = np.zeros(alpha.shape, np.uint8)
        _fill(m_liq, [cam.project(_cup_outline(centre, r * 0.88, zb - height + 16))], 255, o)
        mf = np.minimum(m_inner, m_liq).astype(np.float32) / 255
        _lerp_into(rgb, _tint(np.ones_like(mf), np.array(st.liquid) * 0.85), mf)
    if not handle_behind:
        paint([ph], col * 0.8, handle_w)
    radiance = rgb * view.illum[y0:y1, x0:x1]
    # Soft shadow of the whole cylinder on the surface it stands on.
    light = view.setup.light
    shadow_pts = np.vstack([bottom[:, :2], top[:, :2] + light.shadow_shift(height)])
    world = np.column_stack([shadow_pts, np.full(len(shadow_pts), zb)])
    shadow = [cv2.convexHull(cam.project(world).astype(np.float32))[:, 0, :]]
    return roi, radiance, alpha, (shadow, math.tan(math.radians(light.penumbra_deg)) * height)


# --------------------------------------------------------------------------- hand


def draw_hand(view: View, radiance: np.ndarray, occluder: np.ndarray, hand: Hand) -> None:
    cam, light = view.camera, view.setup.light
    top_z = view.geometry.top_z
    grip_z = top_z - hand.height_mm
    parts = []
    for kind, pts in _hand_parts(hand, top_z):
        if kind in ("arm", "sleeve"):  # the arm rises towards the camera: stop short of it
            keep = cam.depth(pts) > 0.3 * view.board_depth
            n = len(pts) // 2  # one side from the wrist back, the other side returning
            keep = keep[:n] & keep[::-1][:n]
            pts = np.vstack([pts[:n][keep], pts[n:][keep[::-1]]])
        if kind == "piece":
            pts = _carried_outline(hand, grip_z)
        parts.append((kind, pts))

    # Shadow first, so the hand does not darken itself.
    shadow_polys = []
    for kind, pts in parts:
        if kind in ("nail", "crease") or len(pts) < 3:
            continue
        flat = pts.copy()
        flat[:, :2] += light.shadow_shift(top_z - pts[:, 2])
        flat[:, 2] = top_z
        shadow_polys.append(cam.project(flat))
    blur_mm = 2.0 + math.tan(math.radians(light.penumbra_deg)) * hand.height_mm
    cast_shadow(radiance, shadow_polys, blur_mm, 0.55, view.board_scale)

    projected = [(kind, cam.project(pts)) for kind, pts in parts if len(pts) >= 3]
    roi = _roi(np.vstack([p for _, p in projected]), view.size, 2)
    if roi is None:
        return
    x0, y0, x1, y1 = roi
    # Colours are painted without anti-aliasing onto a skin-coloured canvas; the coverage
    # (alpha) is anti-aliased, so only the silhouette needs smooth edges.
    skin = np.array(hand.style.skin, np.float32)
    rgb = _tint(np.ones((y1 - y0, x1 - x0), np.float32), skin)
    cover = np.zeros((y1 - y0, x1 - x0), np.uint8)
    lines = np.zeros_like(cover)  # finger edges and knuckle folds, darkened at the end
    colours = {"arm": skin, "palm": skin, "finger": skin,
               "sleeve": np.array(hand.style.sleeve or skin, np.float32),
               "nail": np.clip(skin * np.float32(1.1) + np.float32(0.08), 0, 1)}
    px_per_mm = view.board_scale * view.board_depth / float(cam.depth(np.array([[*hand.at_mm, grip_z]]))[0])
    line_w = max(1, int(round(0.6 * px_per_mm)))
    o = np.array([x0, y0])
    for kind, p in projected:
        pts16 = _fixed4([p], o)
        if kind == "piece":
            _paint_carried(view, rgb, cover, roi, hand, grip_z)
        elif kind == "crease":
            cv2.polylines(lines, pts16, False, 255, line_w, cv2.LINE_AA, 4)
        else:
            cv2.fillPoly(rgb, pts16, tuple(float(v) for v in colours[kind]), cv2.LINE_8, 4)
            cv2.fillPoly(cover, pts16, 255, cv2.LINE_AA, 4)
            if kind == "finger":  # the dark edge where a finger lies over its neighbour
                cv2.polylines(lines, pts16, True, 255, line_w, cv2.LINE_AA, 4)
    alpha = cover.astype(np.float32) / 255
    # Rounded limbs: darker towards their silhouette, brighter on the side facing the lamp
    # (the silhouette's blurred slope stands in for the surface normal); skin is never even.
    dist = cv2.distanceTransform((cover > 127).astype(np.uint8), cv2.DIST_L2, 3)
    sigma = 5.0 * px_per_mm
    soft = cv2.GaussianBlur(alpha, (0, 0), sigma)
    lx, ly = _light_on_screen(view)
    facing = (cv2.Sobel(soft, cv2.CV_32F, 1, 0, ksize=3) * lx + cv2.Sobel(soft, cv2.CV_32F, 0, 1, ksize=3) * ly)
    facing = np.clip(facing * np.float32(-sigma * 2.5), -1, 1)
    mottle = cv2.resize(view.skin_mottle, (x1 - x0, y1 - y0), interpolation=cv2.INTER_CUBIC)
    shade = (0.72 + 0.28 * (1 - np.exp(-dist / (7.0 * px_per_mm)))) * (1 + 0.22 * facing) * (1 + 0.05 * mottle)
    shade *= 1 - 0.3 * lines.astype(np.float32) / 255
    rgb *= _rep3(shade.astype(np.float32))
    rgb *= view.illum[y0:y1, x0:x1]
    _lerp_into(radiance[y0:y1, x0:x1], rgb, alpha)
    np.maximum(occluder[y0:y1, x0:x1], alpha, out=occluder[y0:y1, x0:x1])


def _light_on_screen(view: View) -> tuple[float, float]:
    """Unit direction, in photo pixels, towards the main light along the board plane."""
    az = math.radians(view.setup.light.azimuth_deg)
    z = view.geometry.top_z
    a, b = view.camera.pinhole(np.array([[0.0, 0.0, z], [50 * math.cos(az), 50 * math.sin(az), z]]))
    d = b - a
    return tuple(d / max(np.linalg.norm(d), 1e-9))


def _carried_outline(hand: Hand, z: float) -> np.ndarray:
    """The footprint of the carried piece's sprite (for its shadow and the hand's extent)."""
    corners = _footprint(hand.carrying.size_mm, hand.carry_angle_deg)[1]
    return np.column_stack([corners + hand.at_mm, np.full(4, z)])


def _paint_carried(view: View, rgb: np.ndarray, cover: np.ndarray, roi, hand: Hand, z: float) -> None:
    """A piece held between thumb and fingers, drawn under the fingers."""
    sroi, s = _sprite_samples(view, hand.carrying, np.asarray(hand.at_mm), hand.carry_angle_deg, z)
    if sroi is None:
        return
    ix0, iy0 = max(sroi[0], roi[0]), max(sroi[1], roi[1])
    ix1, iy1 = min(sroi[2], roi[2]), min(sroi[3], roi[3])
    if ix1 <= ix0 or iy1 <= iy0:
        return
    part = s[iy0 - sroi[1]:iy1 - sroi[1], ix0 - sroi[0]:ix1 - sroi[0]]
    inside = (slice(iy0 - roi[1], iy1 - roi[1]), slice(ix0 - roi[0], ix1 - roi[0]))
    a = np.ascontiguousarray(part[..., 3])
    _lerp_into(rgb[inside], np.ascontiguousarray(part[..., :3]), a)
    np.maximum(cover[inside], (a * 255).astype(np.uint8), out=cover[inside])
