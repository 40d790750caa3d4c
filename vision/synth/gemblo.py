"""Synthetic photos of a Gemblo board with exact ground truth.

This module only knows what a Gemblo board looks like from straight above: a beige (or
white) hexagonal plate, 463 recessed hexagonal cells between raised ridges, embossed marks
(flowers on the 3-player zone's rim, double-outlined hexes with digits on start cells), and
translucent pieces whose cells are parted by thin grooves. Pieces tint the board beneath
them, so the ridges and marks show through every colour; a clear piece on a light board is
nearly invisible except for a brighter rim and highlights. The scene module photographs the
texture (camera, table, light, clutter, sensor, file); ``render_frame`` films a live game
with a fixed camera, a hand bringing each piece in, as the Blokus module does.

Orientation of the truth: the board is 6-fold symmetric, so, as the contract does for
Blokus, "up" is the plate side nearest the top of the upright photo. The truth cells are
turned by the multiple of 60 degrees (``vision.hexgrid.turn``) that puts that side at the
top (row2 = -21); `corners` are the six corner-cell centres, clockwise from the top side's
left end, in the same turned frame. Mirroring never happens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import cv2
import numpy as np

from rules.gemblo import CORNERS, FOUR_STARTS, SHAPES, THREE_STARTS, board, on_board, row2, screen
from rules.lattice import Cell

from ..hexgrid import (CORNERS_CW, EXTENT, NEIGHBOURS, PLATE_RADIUS, SQRT3, axial_round, cells, edge_distance,
                       hexagon, key, turn)
from .conditions import Conditions
from .draw import smoothstep
from .scene import (BoardGeometry, BoardTexture, CameraSetup, Hand, SceneRender, Sprite, View, save_photo,
                    upright_size)
from .slop import Slop

CELL_MM = 6.7  # circumradius: 11.6 mm between cell centres, as on the original edition
THICKNESS_MM = 5.0
COLOURS = "CRYGBP"
# Transmission of each plastic (multiplies the board seen through it).
TINT = {"C": (0.97, 0.97, 0.98), "R": (0.88, 0.16, 0.2), "Y": (0.98, 0.84, 0.16),
        "G": (0.22, 0.68, 0.33), "B": (0.18, 0.38, 0.86), "P": (0.55, 0.24, 0.7)}
BOARDS = {"beige": (0.84, 0.75, 0.58), "white": (0.9, 0.9, 0.87)}


@dataclass
class GembloPhoto:
    """A rendered photo and what a perfect reader would report for it."""

    image: np.ndarray  # BGR uint8 as stored (before any EXIF rotation)
    encoded: bytes | None  # the saved file when the conditions ask for one
    cells: dict[str, str]  # "q,r" -> colour, turned so the top side is nearest the photo's top
    corners: np.ndarray  # 6 x 2: corner-cell centres (CORNERS_CW) in upright photo pixels
    occluded: set[str]  # cells mostly hidden by a hand, cup or glare (turned keys)
    conditions: Conditions


@dataclass(frozen=True)
class GembloStyle:
    """One physical copy of the game under one light."""

    board_rgb: tuple[float, float, float]
    tints: tuple[tuple[float, float, float], ...]  # in COLOURS order
    ridge_gain: float  # brightness of the ridge tops relative to the cell floors
    mark_depth: float  # how strongly the embossing shows
    light_deg: float
    seed: int

    @staticmethod
    def random(rng: np.random.Generator, light_deg: float) -> GembloStyle:
        base = BOARDS["beige" if rng.random() < 0.6 else "white"]
        board_rgb = tuple(float(np.clip(v * rng.uniform(0.95, 1.03), 0, 1)) for v in base)
        tints = tuple(tuple(float(np.clip(v * rng.uniform(0.93, 1.04), 0, 1)) for v in TINT[c]) for c in COLOURS)
        return GembloStyle(board_rgb, tints, float(rng.uniform(1.0, 1.08)), float(rng.uniform(0.7, 1.3)),
                           light_deg, int(rng.integers(2**31)))

    @property
    def geometry(self) -> BoardGeometry:
        return _geometry(tuple(round(v * 0.8, 4) for v in self.board_rgb))


@lru_cache(maxsize=8)
def _geometry(side_rgb: tuple[float, float, float]) -> BoardGeometry:
    """The plate's hexagonal outline in texture millimetres, densified for lens distortion."""
    w, h = EXTENT[0] * CELL_MM, EXTENT[1] * CELL_MM
    corners = hexagon(PLATE_RADIUS * CELL_MM, (w / 2, h / 2))
    dense = [a + (b - a) * t for a, b in zip(corners, np.roll(corners, -1, 0)) for t in np.arange(20) / 20]
    outline = tuple((round(float(x), 4), round(float(y), 4)) for x, y in dense)
    return BoardGeometry((w, h), outline, THICKNESS_MM, side_rgb)


# --------------------------------------------------------------------------- marks


def _marks() -> list[tuple[tuple[int, int], str]]:
    """Embossed marks: flowers on the 3-player zone's rim, double hexes on start cells
    (with the player count as a digit on the 3- and 4-player starts)."""
    out: list[tuple[tuple[int, int], str]] = []
    for q, r in cells():
        inner = abs(row2((q, r))) <= 15 and 3 * abs(q) + abs(row2((q, r))) <= 30
        rim = abs(row2((q, r))) == 15 or 3 * abs(q) + abs(row2((q, r))) in (29, 30)
        if inner and rim and (q + r) % 2 == 0:
            out.append(((q, r), "flower"))
    out += [(c, "double") for c in CORNERS]
    out += [(c, "3") for c in THREE_STARTS] + [(c, "4") for c in FOUR_STARTS]
    return out


def _mark_relief(shape: tuple[int, int], p: float) -> np.ndarray:
    """Height (0-1) of the embossed marks at `p` texture px per R."""
    canvas = np.zeros(shape, np.uint8)
    w = max(1, int(round(0.07 * p)))
    for cell, kind in _marks():
        x, y = screen(cell)
        cx, cy = (x + EXTENT[0] / 2) * p - 0.5, (y + EXTENT[1] / 2) * p - 0.5
        if kind == "flower":
            for a in np.radians(np.arange(0, 360, 60)):
                centre = (int(round(cx + 0.3 * p * math.cos(a))), int(round(cy + 0.3 * p * math.sin(a))))
                cv2.circle(canvas, centre, max(1, int(round(0.14 * p))), 255, w, cv2.LINE_AA)
        else:
            for rad in (0.62, 0.48):
                pts = np.round(hexagon(rad * p, (cx, cy))).astype(np.int32)
                cv2.polylines(canvas, [pts], True, 255, w, cv2.LINE_AA)
            if kind != "double":
                scale = 0.022 * p
                (tw, th), _ = cv2.getTextSize(kind, cv2.FONT_HERSHEY_SIMPLEX, scale, w)
                cv2.putText(canvas, kind, (int(cx - tw / 2), int(cy + th / 2)), cv2.FONT_HERSHEY_SIMPLEX,
                            scale, 255, w, cv2.LINE_AA)
    return cv2.GaussianBlur(canvas.astype(np.float32) / 255, (0, 0), max(0.5, 0.03 * p))


# --------------------------------------------------------------------------- texture


def _code_grid(state: Mapping[str, str]) -> np.ndarray:
    """Colour code per (q + 15, r + 22): -1 off the board, 0 empty, 1..6 = COLOURS."""
    grid = np.full((31, 45), -1, np.int8)
    for q, r in cells():
        grid[q + 15, r + 22] = 0
    for k, colour in state.items():
        q, r = (int(v) for v in k.split(","))
        if not on_board((q, r)) or colour not in COLOURS:
            raise ValueError(f"bad Gemblo cell {k!r}: {colour!r}")
        grid[q + 15, r + 22] = COLOURS.index(colour) + 1
    return grid


def _shade(h: np.ndarray, p: float, light_deg: float) -> np.ndarray:
    """Diffuse factor of a height field (heights in R units): slopes facing the light brighten."""
    gy, gx = np.gradient(h, np.float32(1.0 / p))
    lx, ly = math.cos(math.radians(light_deg)), math.sin(math.radians(light_deg))
    return 1 + np.clip(np.float32(0.5) * (gx * np.float32(-lx) - gy * np.float32(ly)), -0.4, 0.4)


def _lattice(x: np.ndarray, y: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per texture pixel at board point (x, y) (R units): its cell (q, r), the distance to
    the cell's nearest side, the cell's colour code in `grid` and that of the neighbour
    across that side."""
    q, r = axial_round(x, y)
    dx = x - np.float32(1.5) * q
    dy = y - np.float32(SQRT3 / 2) * (q + 2 * r)
    e, side = edge_distance(dx, dy)
    qi, ri = np.clip(q + 15, 0, 30), np.clip(r + 22, 0, 44)
    code = grid[qi, ri]
    nq = np.array([n[0] for n in NEIGHBOURS], np.int32)[side]
    nr = np.array([n[1] for n in NEIGHBOURS], np.int32)[side]
    nb = grid[np.clip(qi + nq, 0, 30), np.clip(ri + nr, 0, 44)]
    return q, r, e, code, nb


def board_texture(state: Mapping[str, str], px_per_mm: float, style: GembloStyle,
                  slop: Slop | None = None) -> BoardTexture:
    """The board seen from straight above (RGB, alpha, gloss), `px_per_mm` texture pixels;
    with `slop` each piece lies a little off its cells (`_lay_nudged`)."""
    w = int(math.ceil(EXTENT[0] * px_per_mm * CELL_MM))
    p = w / EXTENT[0]  # texture px per R, exact so the scene's px_per_mm agrees
    h = int(math.ceil(EXTENT[1] * p))
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    x = (xs + 0.5) / np.float32(p) - np.float32(EXTENT[0] / 2)
    y = (ys + 0.5) / np.float32(p) - np.float32(EXTENT[1] / 2)
    del xs, ys
    grid = _code_grid(state)
    q, r, e, code, nb = _lattice(x, y, grid)

    # Board: raised ridges around recessed cells, a flat rim, the embossing, a bevelled edge.
    plate_e, _ = edge_distance(x / np.float32(PLATE_RADIUS), y / np.float32(PLATE_RADIUS))
    plate_e *= np.float32(PLATE_RADIUS)
    ridge = np.where(code >= 0, smoothstep(0.11, 0.04, e), np.float32(1.0)).astype(np.float32)
    marks = _mark_relief((h, w), p)
    height = 0.06 * ridge + 0.02 * marks * style.mark_depth
    height *= smoothstep(0.0, 0.25, plate_e)
    diffuse = _shade(height.astype(np.float32), p, style.light_deg)
    rng = np.random.default_rng(style.seed)
    mottle = cv2.resize(rng.standard_normal((10, 10)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    tone = diffuse * (1 + 0.015 * mottle) * (1 + (style.ridge_gain - 1) * ridge) \
        * (1 - 0.1 * smoothstep(0.25, 0.08, e) * (code >= 0)) * (1 - 0.06 * style.mark_depth * marks)
    rgb = tone[..., None] * np.array(style.board_rgb, np.float32)

    alpha = np.clip(plate_e * np.float32(p) + 0.5, 0, 1)
    if slop is not None:
        gloss = np.full((h, w), 0.35, np.float32)
        _lay_nudged(rgb, gloss, grid, style, p, slop)
    else:
        piece = _lay_pieces(rgb, x, y, (q, r, e, code, nb), style, p)
        gloss = np.where(piece, 0.9, 0.35).astype(np.float32)
    layers = np.dstack([np.clip(rgb, 0, 1), alpha, gloss]).astype(np.float32)
    return BoardTexture(layers, style.geometry)


def _lay_pieces(rgb: np.ndarray, x: np.ndarray, y: np.ndarray, lattice: tuple[np.ndarray, ...],
                style: GembloStyle, p: float) -> np.ndarray:
    """The pieces over the board `rgb` (in place): the board seen through tinted plastic,
    with bevels, grooves and highlights. `lattice` is `_lattice` of the pieces' own frame at
    the pixels' board points (x, y); returns where a piece lies."""
    q, r, e, code, nb = lattice
    piece = code > 0
    same = nb == code
    cover = piece * np.where(same, 0.55 + 0.45 * smoothstep(0.015, 0.04, e), smoothstep(0.05, 0.07, e))
    bevel = np.where(same, 1.0, smoothstep(0.06, 0.2, e)).astype(np.float32)
    lift = _shade((0.05 * bevel * piece).astype(np.float32), p, style.light_deg + 180)  # refraction: reversed
    tints = np.array([(1.0, 1.0, 1.0)] + list(style.tints), np.float32)[np.maximum(code, 0)]
    clear = code == 1
    rim = (smoothstep(0.2, 0.08, e) * ~same * piece).astype(np.float32)
    glint = np.clip(1 - np.hypot(x - np.float32(1.5) * q + 0.3, y - np.float32(SQRT3 / 2) * (q + 2 * r) + 0.3) / 0.18,
                    0, 1).astype(np.float32)
    seen = rgb * tints * lift[..., None]
    seen += (0.03 + 0.22 * clear * rim + 0.12 * glint * piece)[..., None]
    rgb += (seen - rgb) * cover[..., None].astype(np.float32)
    return piece


def _pieces(grid: np.ndarray) -> list[list[tuple[int, int]]]:
    """Each piece's cells (the rules' edge-connected regions of one colour: pieces of one colour
    never share a side), in the order of their first cell."""
    b = board()
    codes = {c: grid[c[0] + 15, c[1] + 22] for c in b.cells}
    parts = [part for code in {v for v in codes.values() if v > 0}
             for part in b.components(b.mask(c for c, v in codes.items() if v == code))]
    return [b.cells_of(part) for part in sorted(parts, key=lambda m: m & -m)]


def _blocked(piece: list[tuple[int, int]], grid: np.ndarray) -> list[tuple[float, float]]:
    """Unit directions (x, y) in which `piece` touches another piece (the plate is flat: its
    edge stops nothing)."""
    mine = set(piece)
    sides = []
    for dq, dr in NEIGHBOURS:
        if any(on_board(nb) and nb not in mine and grid[nb[0] + 15, nb[1] + 22] > 0
               for nb in ((q + dq, r + dr) for q, r in piece)):
            x, y = screen((dq, dr))
            sides.append((x / SQRT3, y / SQRT3))
    return sides


def _lay_nudged(rgb: np.ndarray, gloss: np.ndarray, grid: np.ndarray, style: GembloStyle, p: float,
                slop: Slop) -> None:
    """Each piece over the board `rgb` and `gloss` (in place) where a hand left it: drawn in
    its own frame, shifted and turned about its centre by its nudge. The board (its ridges and
    marks) shows through the plastic where the piece now lies."""
    h, w = gloss.shape
    pieces = _pieces(grid)
    for piece, nudge in zip(pieces, slop.nudges(SQRT3, [_blocked(c, grid) for c in pieces])):
        centres = np.array([screen(c) for c in piece])
        centre = centres.mean(axis=0)
        to_board = nudge.affine(tuple(centre), 1.0)  # R units: laid exactly -> where it lies
        x0, y0 = ((centres.min(axis=0) - 2 + np.array(EXTENT) / 2) * p).astype(int)
        x1, y1 = ((centres.max(axis=0) + 2 + np.array(EXTENT) / 2) * p).astype(int)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        x = (xs + 0.5) / np.float32(p) - np.float32(EXTENT[0] / 2)
        y = (ys + 0.5) / np.float32(p) - np.float32(EXTENT[1] / 2)
        inverse = cv2.invertAffineTransform(to_board)
        own_x = (inverse[0, 0] * x + inverse[0, 1] * y + inverse[0, 2]).astype(np.float32)
        own_y = (inverse[1, 0] * x + inverse[1, 1] * y + inverse[1, 2]).astype(np.float32)
        alone = np.zeros_like(grid)
        for q, r in piece:
            alone[q + 15, r + 22] = grid[q + 15, r + 22]
        lying = _lay_pieces(rgb[y0:y1, x0:x1], own_x, own_y, _lattice(own_x, own_y, alone), style, p)
        gloss[y0:y1, x0:x1][lying] = 0.9


# --------------------------------------------------------------------------- photos


def _style_for(setup: CameraSetup) -> GembloStyle:
    return GembloStyle.random(np.random.default_rng([setup.seed, 13]), setup.light.azimuth_deg)


def _truth(state: Mapping[str, str], out: SceneRender, tex: BoardTexture) -> tuple[dict, np.ndarray, set[str]]:
    """Cells, corners and occlusion turned so the plate side nearest the photo's top is up."""
    p = tex.layers.shape[1] / EXTENT[0]
    to_tex = lambda xy: (np.asarray(xy) + np.array(EXTENT) / 2) * p - 0.5  # noqa: E731
    sides = hexagon(PLATE_RADIUS)
    mids = out.texture_to_photo(to_tex((sides + np.roll(sides, -1, 0)) / 2))
    k = int(np.argmin(mids[:, 1]))  # texture side k (clockwise from the top) is nearest the top
    corners = out.texture_to_photo(to_tex(np.array([screen(turn(c, k)) for c in CORNERS_CW])))
    cells_turned = {key(turn(tuple(int(v) for v in c.split(",")), -k)): colour for c, colour in state.items()}
    ring = np.vstack([[0.0, 0.0], hexagon(0.45)])
    pts = np.array([screen(c) for c in cells()])[:, None, :] + ring[None]
    photo = out.texture_to_photo(to_tex(pts.reshape(-1, 2)))
    hgt, wid = out.hidden.shape
    xi = np.clip(np.round(photo[:, 0]).astype(int), 0, wid - 1)
    yi = np.clip(np.round(photo[:, 1]).astype(int), 0, hgt - 1)
    inside = (photo[:, 0] >= 0) & (photo[:, 0] < wid) & (photo[:, 1] >= 0) & (photo[:, 1] < hgt)
    hidden = (out.hidden[yi, xi] | ~inside).reshape(len(cells()), -1).mean(1) >= 0.5
    occluded = {key(turn(c, -k)) for c, hid in zip(cells(), hidden) if hid}
    return cells_turned, corners, occluded


def render_photo(state: Mapping[str, str], conditions: Conditions, rng: np.random.Generator,
                 size: tuple[int, int] = (1600, 1200)) -> GembloPhoto:
    """A phone photo of a Gemblo board holding `state` ("q,r" -> colour) under `conditions`.

    Loose pieces beside the board are not drawn (``stray_pieces`` is ignored)."""
    setup = CameraSetup.random(rng, conditions)
    style = _style_for(setup)
    view: View = setup.view(upright_size(size, conditions), style.geometry)
    tex = board_texture(state, view.px_per_mm, style, Slop.of(conditions, setup.seed))
    hand = view.random_hand(rng, conditions, tuple(0.4 * np.array(style.geometry.size_mm)))
    out = view.render(tex, rng, hand)
    cells_turned, corners, occluded = _truth(state, out, tex)
    image, encoded = save_photo(out.image, conditions)
    return GembloPhoto(image, encoded, cells_turned, corners, occluded, conditions)


def render_frame(state: Mapping[str, str], camera: CameraSetup, rng: np.random.Generator,
                 hand_at: tuple[float, float] | None = None, size: tuple[int, int] = (1280, 720),
                 carrying: str | None = None) -> GembloPhoto:
    """One frame of a live game seen by a fixed camera (`CameraSetup.random` once per game).

    `hand_at` is the cell (q, r) under the grip, fractional and maybe beside the plate;
    `carrying` is the colour of a piece in that hand. Frames of one setup differ only by the
    pieces, the hand and sensor noise.
    """
    style = _style_for(camera)
    view = camera.view(tuple(size), style.geometry)
    tex = board_texture(state, view.px_per_mm, style)
    hand = _hand(view, style, rng, hand_at, carrying) if hand_at is not None else None
    out, image, encoded = view.film(tex, rng, hand)
    cells_turned, corners, occluded = _truth(state, out, tex)
    return GembloPhoto(image, encoded, cells_turned, corners, occluded, camera.conditions)


def _hand(view: View, style: GembloStyle, rng: np.random.Generator, at: tuple[float, float],
          carrying: str | None) -> Hand:
    """The session's hand over cell `at`, holding one of `carrying`'s pieces (the same one in
    every frame of the setup, as a player's hand brings a piece in and leaves without it)."""
    x, y = screen(at)
    sprite = None
    if carrying is not None:
        pick = np.random.default_rng([view.setup.seed, ord(carrying)])
        names = sorted(SHAPES)
        sprite = piece_sprite(SHAPES[names[pick.integers(len(names))]], carrying, style, view.px_per_mm)
    return view.hand_toward((x * CELL_MM, y * CELL_MM), rng, sprite)


def piece_sprite(shape: Sequence[Cell], colour: str, style: GembloStyle, px_per_mm: float) -> Sprite:
    """A loose piece (its cells) as a sprite: hexes of tinted plastic, glossy; the table shows
    through a clear one far more than through a coloured one."""
    centres = np.array([screen(c) for c in shape])
    low = centres.min(axis=0) - 1.0
    p = px_per_mm * CELL_MM  # sprite px per R
    w, h = (int(math.ceil(v * p)) for v in centres.max(axis=0) + 1.0 - low)
    cover = np.zeros((h, w), np.uint8)
    for centre in centres:
        pts = np.round(hexagon(0.97 * p, tuple((centre - low) * p - 0.5))).astype(np.int32)
        cv2.fillConvexPoly(cover, pts, 255, cv2.LINE_AA)
    alpha = cover.astype(np.float32) / 255 * (0.5 if colour == "C" else 0.9)
    rgb = 0.1 + 0.8 * np.array(style.tints[COLOURS.index(colour)], np.float32)
    layers = np.dstack([np.broadcast_to(rgb, (h, w, 3)), alpha, np.full((h, w), 0.9, np.float32)])
    return Sprite(np.ascontiguousarray(layers, dtype=np.float32), (w / px_per_mm, h / px_per_mm))


def render_board_topdown(state: Mapping[str, str], px_per_r: float = 24.0, seed: int = 0,
                         board: str = "beige") -> np.ndarray:
    """The board from straight above as BGR uint8 (outside the plate: white); a quick look."""
    style = GembloStyle(BOARDS[board], tuple(TINT[c] for c in COLOURS), 1.04, 1.0, 225.0, seed)
    tex = board_texture(state, px_per_r / CELL_MM, style)
    return tex.flattened()
