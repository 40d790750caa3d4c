"""Synthetic photos of a Geometrius field with exact ground truth.

Geometrius has no board: square card tokens lie on the table on an integer grid that
pushes make irregular. This module draws that field from straight above as one
`BoardTexture` (tokens, their printed polygons, chip stacks); the scene module photographs
it (camera, table, light, clutter, sensor, file).

A token (``TOKEN_MM`` square, light card) carries a thin printed frame, its catalogue
polygon scaled into a circle of ``POLY_RADIUS_MM`` about the token's centre and turned by a
multiple of 90 degrees (the token's own turn on the table), tick marks on equal sides, arcs
at equal angles, red marks at right angles, and a star when the polygon is not convex.
Chips stack on one of the token's four chip spots (its corners, clear of the polygon).

Stacks have height, but the scene photographs a plane. A pinhole camera sees a point at
height ``h`` above the plane exactly where the ray through it meets the plane, so each chip
is drawn where the camera would see it: every disc of the stack is moved away from the
camera's nadir and enlarged by ``D / (D - h)`` (``D`` the camera's height above the
tokens). Stacks seen nearly from above show no side (their height is then not readable);
stacks near the frame's edge or under a tilted camera show every chip's coloured side.
The truth says per token whether the side shows enough to count the chips
(``height_visible``) and whether the polygon or the top chip is hidden.

Orientation of the truth: the contract numbers rows from the topmost row of tokens in the
photo and columns from the leftmost, so the field's grid is turned by the multiple of 90
degrees that puts its rows nearest the photo's horizontal, then shifted to start at 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import cv2
import numpy as np

from rules.geometrius import COLOURS, LONGEST_LINE, Push, Token, field_flags, load_catalogue, pushed
from rules.polygon import EXACT, Polygon

from ..geometrius_token import (ARC_MM, CHIP_MM, CHIP_RADIUS_MM, FRAME_MM, FRAME_WIDTH_MM, PITCH_MM, POLY_RADIUS_MM,
                                SIDE_SHADE, SPOTS, STONE_RADIUS_MM)
from .clutter import Hand
from .conditions import Conditions
from .scene import BoardGeometry, BoardTexture, CameraSetup, SceneRender, View, save_photo, upright_size

TOKEN_MM = 50.0
THICKNESS_MM = 1.5  # card
LINE_MM = 0.9  # the polygon's outline (the marks are thinner)
MARK_MM = 0.35
STAR_AT_MM = (0.0, -19.5)  # the star's place, in the token's own frame (turned with it)
MARGIN_MM = 2.0
CARD_RGB = (0.93, 0.91, 0.84)
INK_RGB = (0.1, 0.1, 0.12)
MARK_RGB = (0.15, 0.2, 0.45)  # arcs and ticks
RIGHT_RGB = (0.85, 0.12, 0.1)  # right-angle marks
CHIP_RGB = {"red": (0.82, 0.1, 0.1), "blue": (0.1, 0.25, 0.78), "green": (0.1, 0.55, 0.2),
            "yellow": (0.96, 0.8, 0.08), "purple": (0.5, 0.14, 0.6), "white": (0.94, 0.94, 0.92)}
HEIGHT_VISIBLE_PX = 3.0  # one chip's side at least this tall in the photo: the height can be counted

Pos = tuple[int, int]


@dataclass
class TokenTruth:
    """What a perfect reader reports for one token (contract position in the photo's frame)."""

    row: int
    col: int
    shape: str
    stack: list[str]
    height_visible: bool  # the chips' sides show: the height can be counted
    top_visible: bool  # the top chip's stone is in view (not hidden by a hand, cup, glare or another stack)
    polygon_visible: bool  # the polygon is in view
    centre_px: tuple[float, float]  # the token's centre in the (upright) photo
    field_pos: Pos  # where the rules put it (row, col), before the photo's turn
    turn: int  # the polygon's turn on the token, quarter turns counter-clockwise as seen from above
    spot: int  # which chip spot holds the stack (0-3 clockwise from top-left, token frame)

    def to_state(self) -> dict:
        return {"row": self.row, "col": self.col, "shape": self.shape, "stack": list(self.stack)}


@dataclass
class GeometriusPhoto:
    """A rendered photo and what a perfect reader would report for it."""

    image: np.ndarray  # BGR uint8 as stored (before any EXIF rotation)
    encoded: bytes | None
    tokens: list[TokenTruth]
    occluded: set[Pos]  # contract positions whose polygon is mostly hidden
    conditions: Conditions
    px_per_mm: float  # photo pixels per millimetre at the field's centre (roughly)

    @property
    def state(self) -> dict:
        ordered = sorted(self.tokens, key=lambda t: (t.row, t.col))
        return {"game": "geometrius", "tokens": [t.to_state() for t in ordered]}


# --------------------------------------------------------------------------- the field


def random_field(rng: np.random.Generator, pushes: int | None = None,
                 max_height: int = 5) -> dict[Pos, Token]:
    """A 4 x 4 start field of distinct catalogue tokens after a few legal pushes (G7), with
    random stacks (0-``max_height`` chips, mixed colours)."""
    shapes = list(load_catalogue().shapes)
    picks = [shapes[i] for i in rng.permutation(len(shapes))]
    field = {(r, c): Token(picks[4 * r + c]) for r in range(4) for c in range(4)}
    spare = picks[16:]
    for _ in range(int(rng.integers(0, 5)) if pushes is None else pushes):
        for _attempt in range(20):
            line = "row" if rng.random() < 0.5 else "col"
            axis = 0 if line == "row" else 1
            indices = sorted({p[axis] for p in field})
            index = indices[int(rng.integers(len(indices)))]
            end = ("left", "right")[int(rng.integers(2))] if line == "row" else ("top", "bottom")[int(rng.integers(2))]
            if sum(p[axis] == index for p in field) >= LONGEST_LINE:
                continue
            after, _ = pushed(field, Push(spare[-1], line, index, end))
            if field_flags(after):  # a line of six, or tokens cut off (G7)
                continue
            field = after
            spare.pop()
            break
    out = {}
    for pos, token in field.items():
        height = int(rng.integers(0, max_height + 1)) if rng.random() < 0.7 else 0
        stack = tuple(COLOURS[int(i)] for i in rng.integers(0, len(COLOURS), height))
        out[pos] = Token(token.shape, stack)
    return out


@dataclass(frozen=True)
class Layout:
    """Where each token lies in the texture, how its polygon is turned, where its stack stands."""

    field: Mapping[Pos, Token]
    turns: Mapping[Pos, int]
    spots: Mapping[Pos, int]
    rows: tuple[int, int]
    cols: tuple[int, int]

    @staticmethod
    def random(field: Mapping[Pos, Token], rng: np.random.Generator) -> Layout:
        rows = (min(p[0] for p in field), max(p[0] for p in field))
        cols = (min(p[1] for p in field), max(p[1] for p in field))
        return Layout(field, {p: int(rng.integers(4)) for p in sorted(field)},
                      {p: int(rng.integers(4)) for p in sorted(field)}, rows, cols)

    @property
    def size_mm(self) -> tuple[float, float]:
        return ((self.cols[1] - self.cols[0] + 1) * PITCH_MM + 2 * MARGIN_MM,
                (self.rows[1] - self.rows[0] + 1) * PITCH_MM + 2 * MARGIN_MM)

    def centre_mm(self, pos: Pos) -> np.ndarray:
        """A token's centre in texture millimetres (origin at the texture's top-left)."""
        return np.array([MARGIN_MM + (pos[1] - self.cols[0] + 0.5) * PITCH_MM,
                         MARGIN_MM + (pos[0] - self.rows[0] + 0.5) * PITCH_MM])

    def geometry(self) -> BoardGeometry:
        """The outline is the union of the tokens' pitch squares: the contact shadow then
        falls into the gaps between tokens, as under real cards."""
        return BoardGeometry(self.size_mm, _union_outline(self), THICKNESS_MM, (0.8, 0.78, 0.72))


def _union_outline(layout: Layout) -> tuple[tuple[float, float], ...]:
    """Outer boundary of the pitch squares (a side-connected set), walked clockwise, dense."""
    cells = set(layout.field)
    edges = {}
    for r, c in cells:  # directed edges with the cell on the right (clockwise in y-down screen)
        for (dr, dc), a, b in (((-1, 0), (0, 0), (1, 0)), ((0, 1), (1, 0), (1, 1)),
                               ((1, 0), (1, 1), (0, 1)), ((0, -1), (0, 1), (0, 0))):
            if (r + dr, c + dc) not in cells:
                start = (c + a[0], r + a[1])
                edges.setdefault(start, []).append((c + b[0], r + b[1]))
    # Walk from the top-left-most corner (on the outer boundary).
    start = min(edges, key=lambda p: (p[1], p[0]))
    loop, at = [start], edges[start][0]
    while at != start and len(loop) < 4 * len(cells) + 4:
        loop.append(at)
        at = edges[at][0] if len(edges[at]) == 1 else min(edges[at], key=lambda q: (q[0] - at[0]) - (q[1] - at[1]))
    pts = np.array([[MARGIN_MM + (x - layout.cols[0]) * PITCH_MM, MARGIN_MM + (y - layout.rows[0]) * PITCH_MM]
                    for x, y in loop], np.float64)
    dense = [a + (b - a) * t for a, b in zip(pts, np.roll(pts, -1, 0)) for t in np.arange(8) / 8]
    return tuple((round(float(x), 4), round(float(y), 4)) for x, y in dense)


# --------------------------------------------------------------------------- drawing


class _Canvas:
    """RGB, alpha and gloss of the texture, drawn with OpenCV in sub-pixel fixed point."""

    SHIFT = 4

    def __init__(self, size_mm: tuple[float, float], px_per_mm: float):
        self.p = px_per_mm
        w, h = int(math.ceil(size_mm[0] * px_per_mm)), int(math.ceil(size_mm[1] * px_per_mm))
        self.rgb = np.zeros((h, w, 3), np.uint8)
        self.alpha = np.zeros((h, w), np.uint8)
        self.gloss = np.zeros((h, w), np.uint8)

    def px(self, pts_mm: np.ndarray) -> np.ndarray:
        """Millimetres -> fixed-point pixel coordinates (pixel centres at integers)."""
        return np.round((np.asarray(pts_mm, np.float64) * self.p - 0.5) * 16).astype(np.int32)

    @staticmethod
    def _c(rgb) -> tuple[int, int, int]:
        return tuple(int(round(255 * min(max(v, 0.0), 1.0))) for v in rgb)

    def poly(self, pts_mm: np.ndarray, rgb, alpha: bool = False, gloss: float | None = None) -> None:
        pts = [self.px(pts_mm).reshape(-1, 1, 2)]
        cv2.fillPoly(self.rgb, pts, self._c(rgb), cv2.LINE_AA, self.SHIFT)
        if alpha:
            cv2.fillPoly(self.alpha, pts, 255, cv2.LINE_AA, self.SHIFT)
        if gloss is not None:
            cv2.fillPoly(self.gloss, pts, int(255 * gloss), cv2.LINE_AA, self.SHIFT)

    def line(self, pts_mm: np.ndarray, rgb, width_mm: float, closed: bool = False) -> None:
        """A stroke of any (sub-pixel) width: each segment a filled quad, each joint a disc."""
        pts = np.asarray(pts_mm, np.float64)
        pairs = list(zip(pts, np.roll(pts, -1, 0))) if closed else list(zip(pts[:-1], pts[1:]))
        half = width_mm / 2
        polys = [_circle(q, half, 12) for q in pts]
        for a, b in pairs:
            d = b - a
            length = np.linalg.norm(d)
            if length < 1e-9:
                continue
            n = np.array([-d[1], d[0]]) / length * half
            polys.append(np.array([a + n, b + n, b - n, a - n]))
        colour = self._c(rgb)
        for poly in polys:  # one fill per piece: overlapping pieces must not cancel
            cv2.fillPoly(self.rgb, [self.px(poly).reshape(-1, 1, 2)], colour, cv2.LINE_AA, self.SHIFT)

    def layers(self) -> np.ndarray:
        rgb = self.rgb.astype(np.float32) / 255
        return np.dstack([rgb, self.alpha.astype(np.float32) / 255, self.gloss.astype(np.float32) / 255])


def _circle(centre: np.ndarray, radius: float, n: int = 72) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return centre + radius * np.column_stack([np.cos(a), np.sin(a)])


def _arc(centre: np.ndarray, radius: float, a0: float, sweep: float, n: int = 24) -> np.ndarray:
    a = a0 + sweep * np.linspace(0, 1, n)
    return centre + radius * np.column_stack([np.cos(a), np.sin(a)])


def _groups(values, same) -> list[list[int]]:
    """Indices of values equal to each other (groups of two or more)."""
    left, out = list(range(len(values))), []
    while left:
        i = left.pop(0)
        group = [i] + [j for j in left if same(values[i], values[j])]
        left = [j for j in left if j not in group]
        if len(group) > 1:
            out.append(group)
    return out


def polygon_on_token(shape_vertices, turn: int) -> np.ndarray:
    """The polygon's vertices in token millimetres (x right, y down, origin at the token's
    centre): centred on its bounding circle's rough middle, scaled so its farthest vertex
    lies POLY_RADIUS_MM out, then turned ``turn`` quarter turns (counter-clockwise as seen)."""
    v = np.asarray(shape_vertices, np.float64) * [1, -1]  # catalogue y up -> screen y down
    centre = (v.min(0) + v.max(0)) / 2
    v = v - centre
    v *= POLY_RADIUS_MM / np.linalg.norm(v, axis=1).max()
    for _ in range(turn % 4):
        v = np.column_stack([v[:, 1], -v[:, 0]])  # a quarter turn counter-clockwise on screen
    return v


def _draw_token(canvas: _Canvas, centre: np.ndarray, shape_vertices, star: bool, turn: int,
                card: tuple[float, float, float]) -> None:
    h = TOKEN_MM / 2
    square = centre + np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
    canvas.poly(square, card, alpha=True, gloss=0.3)
    f = FRAME_MM
    canvas.line(centre + np.array([[-f, -f], [f, -f], [f, f], [-f, f]]), INK_RGB, FRAME_WIDTH_MM, closed=True)
    pts = polygon_on_token(shape_vertices, turn)
    poly = Polygon.of(pts * [1, -1])  # Polygon wants y up for counter-clockwise walking
    ccw = np.array([[p.real, -p.imag] for p in poly.points])  # the same walk, screen coordinates
    n = len(ccw)
    sides = [np.linalg.norm(ccw[(i + 1) % n] - ccw[i]) for i in range(n)]
    # Ticks: one, two, three... across every side of each group of equal sides.
    for k, group in enumerate(_groups(sides, EXACT.same_length)):
        for i in group:
            a, b = ccw[i], ccw[(i + 1) % n]
            d = (b - a) / sides[i]
            normal = np.array([-d[1], d[0]])
            mid = (a + b) / 2
            for t in range(k + 1):
                at = mid + d * (t - k / 2) * 1.1
                canvas.line(centre + np.array([at - 1.1 * normal, at + 1.1 * normal]), MARK_RGB, MARK_MM)
    angles = list(poly.angles)
    right = [i for i, a in enumerate(angles) if EXACT.same_angle(a, 90)]
    for i in right:
        prev, nxt = ccw[i - 1], ccw[(i + 1) % n]
        s = min(2.6, 0.25 * min(sides[i - 1], sides[i]))
        u1 = (prev - ccw[i]) / np.linalg.norm(prev - ccw[i])
        u2 = (nxt - ccw[i]) / np.linalg.norm(nxt - ccw[i])
        box = ccw[i] + np.array([u1 * s, u1 * s + u2 * s, u2 * s])
        canvas.line(centre + box, RIGHT_RGB, MARK_MM)
    others = [i for i in range(n) if i not in right]
    for k, group in enumerate(_groups([angles[i] for i in others], EXACT.same_angle)):
        for j in group:
            i = others[j]
            prev, nxt = ccw[i - 1], ccw[(i + 1) % n]
            radius = min(ARC_MM, 0.25 * min(sides[i - 1], sides[i]))
            a_next = math.atan2(*(nxt - ccw[i])[::-1])
            sweep = -math.radians(angles[i])  # from the next side back through the interior
            for t in range(k + 1):
                canvas.line(centre + _arc(ccw[i], radius - 0.7 * t, a_next, sweep), MARK_RGB, MARK_MM)
    canvas.line(centre + ccw, INK_RGB, LINE_MM, closed=True)
    if star:
        at = np.array(STAR_AT_MM)
        for _ in range(turn % 4):
            at = np.array([at[1], -at[0]])
        a = -np.pi / 2 + np.arange(10) * np.pi / 5
        r = np.where(np.arange(10) % 2 == 0, 2.6, 1.1)
        canvas.poly(centre + at + np.column_stack([r * np.cos(a), r * np.sin(a)]), INK_RGB)


def lift(xy: np.ndarray, height_mm: float, nadir: np.ndarray, camera_height: float) -> np.ndarray:
    """Where the camera sees a point ``height_mm`` above the token plane, on that plane."""
    return nadir + (np.asarray(xy, np.float64) - nadir) * camera_height / (camera_height - height_mm)


def stack_outline(base: np.ndarray, level: int, nadir: np.ndarray, camera_height: float) -> tuple[np.ndarray, float]:
    """Centre and radius, on the token plane, of the disc at the top of chip ``level``
    (level 0: the stack's foot)."""
    scale = camera_height / (camera_height - level * CHIP_MM)
    return lift(base, level * CHIP_MM, nadir, camera_height), CHIP_RADIUS_MM * scale


def _hull(c0: np.ndarray, r0: float, c1: np.ndarray, r1: float) -> np.ndarray:
    pts = np.vstack([_circle(c0, r0), _circle(c1, r1)]).astype(np.float32)
    return cv2.convexHull(pts)[:, 0, :].astype(np.float64)


def _draw_stack(canvas: _Canvas, base: np.ndarray, stack: tuple[str, ...], nadir: np.ndarray,
                camera_height: float) -> None:
    for i, colour in enumerate(stack):
        rgb = np.array(CHIP_RGB[colour])
        c0, r0 = stack_outline(base, i, nadir, camera_height)
        c1, r1 = stack_outline(base, i + 1, nadir, camera_height)
        canvas.poly(_hull(c0, r0, c1, r1), rgb * SIDE_SHADE, alpha=True, gloss=0.6)
        canvas.line(_circle(c1, r1 - 0.15), rgb * 0.3, 0.35, closed=True)  # the groove above this chip
    if stack:
        rgb = np.array(CHIP_RGB[stack[-1]])
        c, r = stack_outline(base, len(stack), nadir, camera_height)
        scale = r / CHIP_RADIUS_MM
        canvas.poly(_circle(c, r), rgb * 0.85, alpha=True, gloss=0.6)
        canvas.line(_circle(c, r - 0.3), (0.12, 0.12, 0.12), 0.6, closed=True)  # the chip's rim
        canvas.poly(_circle(c, STONE_RADIUS_MM * scale), np.minimum(rgb * 1.05 + 0.03, 1), gloss=0.95)


def field_texture(layout: Layout, px_per_mm: float, nadir: np.ndarray, camera_height: float,
                  card: tuple[float, float, float] = CARD_RGB) -> BoardTexture:
    """The field from above as the camera (nadir and height in texture millimetres) sees it."""
    canvas = _Canvas(layout.size_mm, px_per_mm)
    shapes = load_catalogue().shapes
    for pos, token in sorted(layout.field.items()):
        shape = shapes[token.shape]
        _draw_token(canvas, layout.centre_mm(pos), shape.vertices, shape.star, layout.turns[pos], card)
    # Stacks far from the camera's nadir lean over their neighbours: draw nearest first.
    order = sorted(layout.field, key=lambda p: -np.linalg.norm(layout.centre_mm(p) - nadir))
    for pos in order[::-1]:
        token = layout.field[pos]
        if token.stack:
            base = layout.centre_mm(pos) + SPOTS[layout.spots[pos]]
            _draw_stack(canvas, base, token.stack, nadir, camera_height)
    return BoardTexture(canvas.layers(), layout.geometry())


# --------------------------------------------------------------------------- photos


def _camera_in_texture(view: View, layout: Layout) -> tuple[np.ndarray, float]:
    """The camera's nadir in texture millimetres and its height above the tokens' top."""
    c = view.camera.centre
    w, h = layout.size_mm
    return np.array([c[0] + w / 2, c[1] + h / 2]), float(-THICKNESS_MM - c[2])  # Z runs into the table


def _photo_turn(out: SceneRender, tex: BoardTexture, layout: Layout) -> int:
    """Quarter turns k such that the field's grid turned by k has its rows nearest the photo's."""
    p = tex.px_per_mm
    centre = np.array(layout.size_mm) / 2
    pts = np.array([centre, centre + [10, 0], centre + [0, 10]]) * p - 0.5
    q = out.texture_to_photo(pts)
    right = q[1] - q[0]  # where the field's +col points in the photo
    angle = math.degrees(math.atan2(right[1], right[0]))  # 0: +col points right
    return int(round(angle / 90.0)) % 4


def _relabel(pos: Pos, k: int) -> Pos:
    """Field position -> position in a grid turned so its +col points right in the photo.
    k = quarter turns of the field's +col axis clockwise on screen."""
    r, c = pos
    for _ in range(k):
        r, c = c, -r  # one clockwise quarter turn of the field (seen as +col pointing down)
    return r, c


def _in_view(out: SceneRender, pts_px: np.ndarray) -> np.ndarray:
    h, w = out.hidden.shape
    xi = np.clip(np.round(pts_px[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(pts_px[:, 1]).astype(int), 0, h - 1)
    inside = (pts_px[:, 0] >= 0) & (pts_px[:, 0] < w) & (pts_px[:, 1] >= 0) & (pts_px[:, 1] < h)
    return inside & ~out.hidden[yi, xi]


def _truth(layout: Layout, out: SceneRender, tex: BoardTexture, nadir: np.ndarray,
           camera_height: float) -> list[TokenTruth]:
    p = tex.px_per_mm
    to_photo = lambda mm: out.texture_to_photo(np.asarray(mm, np.float64).reshape(-1, 2) * p - 0.5)  # noqa: E731
    k = _photo_turn(out, tex, layout)
    labels = {pos: _relabel(pos, k) for pos in layout.field}
    r0 = min(r for r, _ in labels.values())
    c0 = min(c for _, c in labels.values())
    # Where every stack covers the plane (its hull, foot to top), to find what it hides.
    covers = []
    for pos, token in layout.field.items():
        if token.stack:
            base = layout.centre_mm(pos) + SPOTS[layout.spots[pos]]
            c0_, r0_ = stack_outline(base, 0, nadir, camera_height)
            c1_, r1_ = stack_outline(base, len(token.stack), nadir, camera_height)
            covers.append((pos, _hull(c0_, r0_, c1_, r1_), c1_, r1_))
    outline = np.array(layout.geometry().outline_mm, np.float32)
    out_list = []
    for pos, token in layout.field.items():
        centre = layout.centre_mm(pos)
        disc = _circle(centre, POLY_RADIUS_MM + 0.5, 48)
        ring = np.vstack([centre[None], disc, _circle(centre, POLY_RADIUS_MM * 0.5, 24)])
        seen = _in_view(out, to_photo(ring))
        covered = np.zeros(len(ring), bool)
        for _, hull, _, _ in covers:  # any stack, its own too, may hide the polygon
            covered |= np.array([cv2.pointPolygonTest(hull.astype(np.float32), tuple(map(float, q)), False) >= 0
                                 for q in ring])
        polygon_visible = bool(np.mean(seen & ~covered) >= 0.97)
        height_visible = top_visible = False
        if token.stack:
            base = centre + SPOTS[layout.spots[pos]]
            top_c, top_r = stack_outline(base, len(token.stack), nadir, camera_height)
            stone = _circle(top_c, STONE_RADIUS_MM * 0.8, 12)
            stone_px = to_photo(np.vstack([top_c[None], stone]))
            inside = all(cv2.pointPolygonTest(outline, tuple(map(float, q)), False) >= 0 for q in stone)
            top_visible = bool(inside and _in_view(out, stone_px).all())
            # Each chip's side, as tall as the photo shows it where it faces the camera.
            foot = base + CHIP_RADIUS_MM * (nadir - base) / max(np.linalg.norm(nadir - base), 1e-9)
            levels = to_photo(np.array([lift(foot, i * CHIP_MM, nadir, camera_height) for i in range(6)]))
            steps = np.linalg.norm(np.diff(levels, axis=0), axis=1)
            height_visible = bool(top_visible and steps.min() >= HEIGHT_VISIBLE_PX)
        rr, cc = labels[pos]
        centre_px = to_photo(centre)[0]
        out_list.append(TokenTruth(rr - r0, cc - c0, token.shape, list(token.stack), height_visible, top_visible,
                                   polygon_visible, (float(centre_px[0]), float(centre_px[1])), pos,
                                   layout.turns[pos], layout.spots[pos]))
    return out_list


def shoot(layout: Layout, view: View, rng: np.random.Generator, card: tuple[float, float, float] = CARD_RGB,
          hand: Hand | None = None) -> tuple[SceneRender, list[TokenTruth]]:
    """The field of ``layout`` as the camera ``view`` sees it (with ``hand`` over it, if any):
    the rendered frame and its tokens' truth. One layout shot by several views (a live
    referee's frames, a mug moved) keeps its tokens where they lie."""
    nadir, camera_height = _camera_in_texture(view, layout)
    tex = field_texture(layout, view.px_per_mm, nadir, camera_height, card)
    out = view.render(tex, rng, hand)
    return out, _truth(layout, out, tex, nadir, camera_height)


def render_photo(rng: np.random.Generator, conditions: Conditions, size: tuple[int, int] = (1600, 1200),
                 field: Mapping[Pos, Token] | None = None) -> GeometriusPhoto:
    """A phone photo of a Geometrius field (random unless given) under ``conditions``.

    Loose pieces beside the field are not drawn (``stray_pieces`` is ignored)."""
    field = random_field(rng) if field is None else field
    layout = Layout.random(field, rng)
    setup = CameraSetup.random(rng, conditions)
    view: View = setup.view(upright_size(size, conditions), layout.geometry())
    card = tuple(float(np.clip(v * rng.uniform(0.96, 1.03), 0, 1)) for v in CARD_RGB)
    hand = view.random_hand(rng, conditions, tuple(0.4 * np.array(layout.size_mm)))
    out, tokens = shoot(layout, view, rng, card, hand)
    image, encoded = save_photo(out.image, conditions)
    occluded = {(t.row, t.col) for t in tokens if not t.polygon_visible}
    return GeometriusPhoto(image, encoded, tokens, occluded, conditions, view.board_scale)


def render_token_topdown(shape: str, turn: int = 0, px_per_mm: float = 8.0, stack: tuple[str, ...] = (),
                         spot: int = 0) -> np.ndarray:
    """One token from straight above on a grey table, BGR uint8: a quick look, and the shot
    ``tableref calibrate tokens`` expects (one token shown to the camera)."""
    field = {(0, 0): Token(shape, tuple(stack))}
    layout = Layout(field, {(0, 0): turn}, {(0, 0): spot}, (0, 0), (0, 0))
    w, h = layout.size_mm
    tex = field_texture(layout, px_per_mm, np.array([w / 2, h / 2]), 1e6)
    pad = int(20 * px_per_mm)
    grey = int(0.45 * 255 + 0.5)
    return cv2.copyMakeBorder(tex.flattened(0.45), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(grey,) * 3)
