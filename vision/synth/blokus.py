"""Synthetic photos of a Blokus board with exact ground truth.

This module only knows what a Blokus board looks like from straight above: a grey plastic
board with a raised rim, 20 x 20 recessed cells between low ridges, and translucent glossy
pieces with bevelled edges and grooves between the squares of one piece. The scene module
photographs that texture (camera, table, light, clutter, sensor, file).

Ground truth follows the reader's convention: row 0 is the board side nearest the top of the
upright photo and column 0 its left end, so the 20 x 20 array is turned by the multiple of
90 degrees that makes this so; `corners` follow the same order. Mirroring never happens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator

import cv2
import numpy as np

from .conditions import Conditions
from .draw import smoothstep
from .scene import (BoardGeometry, BoardTexture, CameraSetup, SceneRender, Sprite, View, save_photo,
                    upright_size)
from .slop import Slop

N = 20
COLOURS = "BYRG"
CELL_MM = 16.0  # pitch of the grid; the classic board is about a foot across
FRAME_CELLS = 0.75  # width of the rim around the grid, in cells (texture px per cell: multiple of 4)
THICKNESS_MM = 6.0
_CORNER_CELLS = 0.4  # rounding radius of the board's outer corners
# Nominal plastic colours (RGB) of the four sets.
PIECE_RGB = {"B": (0, 90, 200), "Y": (250, 200, 0), "R": (215, 25, 35), "G": (0, 150, 70)}

# The 21 pieces of one colour ('#' = square).
PIECES = {
    "1": ["#"], "2": ["##"], "I3": ["###"], "V3": ["##", "#."],
    "I4": ["####"], "L4": ["###", "#.."], "T4": ["###", ".#."], "O4": ["##", "##"], "Z4": ["##.", ".##"],
    "F": [".##", "##.", ".#."], "I5": ["#####"], "L5": ["####", "#..."], "N": ["##..", ".###"],
    "P": ["##", "##", "#."], "T5": ["###", ".#.", ".#."], "U": ["#.#", "###"], "V5": ["#..", "#..", "###"],
    "W": ["#..", "##.", ".##"], "X": [".#.", "###", ".#."], "Y": ["####", ".#.."], "Z5": ["##.", ".#.", ".##"],
}


@dataclass
class SyntheticPhoto:
    """A rendered photo and what a perfect reader would report for it."""

    image: np.ndarray  # BGR uint8 as stored (before any EXIF rotation)
    encoded: bytes | None  # the saved file when the conditions ask for one
    state: list[str]  # 20 strings of '.BYRG', row 0 nearest the top of the upright photo
    corners: np.ndarray  # 4 x 2: grid corners TL, TR, BR, BL in upright photo pixels
    occluded: np.ndarray  # 20 x 20 bool, cells mostly hidden by a hand, cup or glare
    conditions: Conditions


@dataclass(frozen=True)
class BlokusStyle:
    """One physical copy of the game under one light: plastic shades and bevel look."""

    board_rgb: tuple[float, float, float]
    rim_rgb: tuple[float, float, float]
    ridge_dark: float  # how much darker the grid ridges look than the cell floors
    piece_rgb: tuple[tuple[float, float, float], ...]  # in COLOURS order
    translucency: float  # how much of the board's relief shows through a piece
    bevel: float
    light_deg: float  # direction towards the light in texture coordinates (for baked relief)
    seed: int

    @staticmethod
    def random(rng: np.random.Generator, light_deg: float) -> BlokusStyle:
        grey = rng.uniform(0.30, 0.72)
        board = tuple(float(np.clip(grey + rng.normal(0, 0.015), 0, 1)) for _ in range(3))
        rim_gain = rng.uniform(0.88, 1.08)
        rim = tuple(float(v * rim_gain) for v in board)
        pieces = tuple(
            tuple(float(np.clip(v / 255 * rng.uniform(0.92, 1.04) + rng.normal(0, 0.02), 0, 1)) for v in PIECE_RGB[c])
            for c in COLOURS)
        return BlokusStyle(board, rim, float(rng.uniform(0.05, 0.2)), pieces, float(rng.uniform(0.15, 0.35)),
                           float(rng.uniform(0.75, 1.3)), light_deg, int(rng.integers(2**31)))

    @staticmethod
    def default() -> BlokusStyle:
        return BlokusStyle((0.55, 0.55, 0.56), (0.52, 0.52, 0.53), 0.12,
                           tuple(tuple(v / 255 for v in PIECE_RGB[c]) for c in COLOURS), 0.25, 1.0, 225.0, 0)

    @property
    def geometry(self) -> BoardGeometry:
        return _geometry(tuple(v * 0.78 for v in self.board_rgb))


@lru_cache(maxsize=8)
def _geometry(side_rgb: tuple[float, float, float]) -> BoardGeometry:
    """Rounded-square outline, densified so lens distortion bends its edges."""
    size = (N + 2 * FRAME_CELLS) * CELL_MM
    r = _CORNER_CELLS * CELL_MM
    pts = []
    for cx, cy, a0 in ((size - r, r, -90), (size - r, size - r, 0), (r, size - r, 90), (r, r, 180)):
        for a in np.radians(np.linspace(a0, a0 + 90, 7)):
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    poly = np.array(pts)
    dense = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        n = max(1, int(np.linalg.norm(b - a) // 6))
        dense.extend(a + (b - a) * t for t in np.arange(n) / n)
    outline = tuple((round(float(x), 4), round(float(y), 4)) for x, y in dense)
    return BoardGeometry((size, size), outline, THICKNESS_MM, side_rgb)


# --------------------------------------------------------------------------- relief tiles


def _shade(h: np.ndarray, p: int, light_deg: float, strength: float) -> tuple[np.ndarray, np.ndarray]:
    """Diffuse factor and specular sparkle of a height field (heights in cell units) lit
    from `light_deg`; slopes facing the light brighten."""
    gy, gx = np.gradient(h.astype(np.float32), np.float32(1.0 / p))
    lx, ly = math.cos(math.radians(light_deg)), math.sin(math.radians(light_deg))
    facing = (gx * np.float32(-lx * strength) - gy * np.float32(ly * strength))
    diffuse = 1 + np.clip(np.float32(0.05) * facing, -0.55, 0.45)
    spec = np.clip(np.float32(0.045) * facing - np.float32(0.1), 0, 1) ** 2
    return diffuse.astype(np.float32, copy=False), spec.astype(np.float32, copy=False)


def _edge_dist(p: int) -> tuple[np.ndarray, ...]:
    """Distance (cell units) of each tile pixel centre to the N, E, S, W sides."""
    t = (np.arange(p, dtype=np.float32) + 0.5) / p
    v, u = np.meshgrid(t, t, indexing="ij")
    return v, 1 - u, 1 - v, u


def _empty_tile(style: BlokusStyle, p: int, filled: int) -> np.ndarray:
    """A recessed cell between ridges; `filled` bits (N, E, S, W) mark neighbours holding a
    piece, whose edges cast a short shadow into this cell."""
    sides = _edge_dist(p)
    e = np.minimum.reduce(sides)
    ridge = _smoothstep(0.085, 0.045, e)
    floor_ao = 1 - 0.07 * _smoothstep(0.22, 0.04, e)
    diffuse, spec = _shade(0.08 * ridge, p, style.light_deg, style.bevel)
    tone = (1 - style.ridge_dark * ridge) * floor_ao * diffuse
    away = -np.array([math.cos(math.radians(style.light_deg)), math.sin(math.radians(style.light_deg))])
    inward = [np.array([0, 1]), np.array([-1, 0]), np.array([0, -1]), np.array([1, 0])]  # into this cell
    for bit, (d, n) in enumerate(zip(sides, inward)):
        reach = max(0.0, float(away @ n))
        if filled >> bit & 1 and reach > 0:
            tone = tone * (1 - 0.38 * reach * _smoothstep(0.05 + 0.2 * reach, 0.0, d))
    rgb = np.array(style.board_rgb, np.float32) * tone[..., None] + 0.08 * spec[..., None]
    return np.dstack([rgb, np.ones((p, p)), np.full((p, p), 0.35)]).astype(np.float32)


def _piece_tile(style: BlokusStyle, p: int, colour: int, same: int, on_board: bool) -> np.ndarray:
    """One square of a piece; `same` bits (N, E, S, W) mark squares of the same piece, where
    a groove replaces the outer bevel. Off the board the plastic lets a little table through."""
    sides = _edge_dist(p)
    h = np.ones((p, p), np.float32)
    bevel_w = 0.11
    for bit, d in enumerate(sides):
        if same >> bit & 1:
            h = np.minimum(h, 1 - 0.3 * _smoothstep(0.035, 0.0, d))
        else:
            h = np.minimum(h, 0.35 + 0.65 * _smoothstep(0.0, bevel_w, d))
    e = np.minimum.reduce(sides)
    h = h + 0.03 * _smoothstep(0.2, 0.24, e)  # the slightly raised square moulded on each cell
    diffuse, spec = _shade(h, p, style.light_deg, style.bevel)
    base = np.array(style.piece_rgb[colour], np.float32)
    if on_board:  # translucent plastic: the grid ridges below show faintly
        ridge = _smoothstep(0.085, 0.045, e)
        base = base * (1 - style.translucency * style.ridge_dark * 2 * ridge)[..., None]
    rgb = base * diffuse[..., None] + 0.55 * spec[..., None]
    rgb = rgb * (1 - 0.25 * _smoothstep(0.03, 0.0, e))[..., None]  # dark outer lip of each square
    gloss = 0.45 + 0.55 * _smoothstep(0.02, bevel_w, e)
    alpha = np.full((p, p), 1.0 if on_board else 0.93)
    return np.dstack([rgb, alpha, gloss]).astype(np.float32)


def _smoothstep(e0: float, e1: float, x: np.ndarray) -> np.ndarray:
    """The shared `smoothstep`, always float32 (the tiles are float32 whatever the inputs)."""
    return smoothstep(e0, e1, x).astype(np.float32)


_NEIGHBOURS = ((-1, 0), (0, 1), (1, 0), (0, -1))  # N, E, S, W as (drow, dcol): bit order of tiles


@lru_cache(maxsize=6)
def _tiles(style: BlokusStyle, p: int, on_board: bool = True) -> np.ndarray:
    """All cell tiles (K x p x p x 5: RGB, alpha, gloss): 16 empty, then 16 per colour."""
    empty = [_empty_tile(style, p, m) for m in range(16)] if on_board else [np.zeros((p, p, 5), np.float32)] * 16
    pieces = [_piece_tile(style, p, c, m, on_board) for c in range(4) for m in range(16)]
    return np.stack(empty + pieces).astype(np.float32)


def _neighbour_bits(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the sides (bits N, E, S, W) where a square of the same piece lies, and those
    where any piece lies."""
    rows, cols = codes.shape
    padded = np.pad(codes, 1)
    same = np.zeros_like(codes)
    filled = np.zeros_like(codes)
    for bit, (dr, dc) in enumerate(_NEIGHBOURS):
        nb = padded[1 + dr:1 + dr + rows, 1 + dc:1 + dc + cols]
        same |= ((nb == codes) & (codes > 0)).astype(codes.dtype) << bit
        filled |= (nb > 0).astype(codes.dtype) << bit
    return same, filled


def _tile_index(codes: np.ndarray) -> np.ndarray:
    """Tile number per cell from a grid of colour codes (0 empty, 1..4 = B, Y, R, G)."""
    same, filled = _neighbour_bits(codes)
    return np.where(codes > 0, 16 + (codes - 1) * 16 + same, filled)


def _assemble(tiles: np.ndarray, index: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Lay tiles out in a grid, into `out` (a rows*p x cols*p x C view) when given."""
    rows, cols = index.shape
    p, ch = tiles.shape[1], tiles.shape[3]
    if out is None:
        out = np.empty((rows * p, cols * p, ch), np.float32)
    cells = out.reshape(rows, p, cols, p, ch)  # a view: splitting axes never copies
    for r in range(rows):  # cell by cell: no huge temporary, ~20x faster than one fancy index
        for c in range(cols):
            cells[r, :, c] = tiles[index[r, c]]
    return out


# --------------------------------------------------------------------------- board texture


@lru_cache(maxsize=4)
def _board_base(style: BlokusStyle, p: int) -> np.ndarray:
    """The rim, plastic mottling and rounded outline of an empty board (RGB, alpha, gloss)."""
    size = N * p + 2 * int(FRAME_CELLS * p)
    t = (np.arange(size, dtype=np.float32) + 0.5) / p  # pixel centres in cell units
    full = size / p
    # The rim is raised: it slopes down to the table outside and to the grid inside.
    e_out = np.minimum.outer(np.minimum(t, full - t), np.minimum(t, full - t))
    g0, g1 = FRAME_CELLS, FRAME_CELLS + N
    e_in = np.maximum.outer(np.maximum(g0 - t, t - g1), np.maximum(g0 - t, t - g1))
    h = _smoothstep(0.0, 0.14, e_out) * _smoothstep(0.0, 0.12, e_in)
    h *= 0.6
    diffuse, spec = _shade(h, p, style.light_deg, style.bevel)
    rng = np.random.default_rng(style.seed)
    tone = cv2.resize(rng.standard_normal((12, 12), np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    tone *= 0.025
    tone += rng.standard_normal((size, size), np.float32) * np.float32(0.015)
    tone += 1
    tone *= diffuse
    spec *= 0.1
    layers = np.empty((size, size, 5), np.float32)
    for ch in range(3):
        np.multiply(tone, np.float32(style.rim_rgb[ch]), out=layers[..., ch])
        layers[..., ch] += spec
    # Rounded outer corners, anti-aliased over one pixel.
    r = _CORNER_CELLS
    q = np.maximum(np.abs(t - full / 2) - (full / 2 - r), 0)
    layers[..., 3] = np.clip((r - np.sqrt(np.add.outer(q * q, q * q))) * p + 0.5, 0, 1)
    layers[..., 4] = 0.35
    layers.setflags(write=False)  # cached: copied before use
    return layers


def _codes(state: list[str] | np.ndarray) -> np.ndarray:
    grid = np.array([list(row) for row in state]) if not isinstance(state, np.ndarray) else state
    if grid.shape != (N, N):
        raise ValueError(f"a Blokus state is {N} strings of {N} characters")
    codes = np.zeros(grid.shape, np.int64)
    for i, ch in enumerate(COLOURS, start=1):
        codes[grid == ch] = i
    if not np.all((codes > 0) | (grid == ".")):
        raise ValueError("state characters must be one of '.BYRG'")
    return codes


def board_texture(state: list[str], px_per_cell: int, style: BlokusStyle,
                  slop: Slop | None = None) -> BoardTexture:
    """The board seen from straight above at `px_per_cell` (rounded up to a multiple of 4);
    with `slop` each piece lies a little off its cells (`_lay_nudged`)."""
    p = max(8, int(math.ceil(px_per_cell / 4)) * 4)
    codes = _codes(state)
    tex = _board_base(style, p).copy()
    f = int(FRAME_CELLS * p)
    if slop is not None:
        _lay_nudged(tex, codes, style, p, slop)
        return BoardTexture(tex, style.geometry)
    grid = _assemble(_tiles(style, p), _tile_index(codes), tex[f:f + N * p, f:f + N * p])
    # Each physical piece is a slightly different shade (moulding batches, wear, angle).
    g = _piece_gains(codes, style.seed)
    ones = np.ones_like(g)
    gains = cv2.resize(cv2.merge((g, g, g, ones, ones)), (N * p, N * p), interpolation=cv2.INTER_NEAREST)
    grid *= gains
    return BoardTexture(tex, style.geometry)


def _piece_labels(codes: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """Per colour code c: (c, n, labels), its pieces labelled 1 .. n - 1 (0: not c's). Pieces
    of one colour never share a side, so a piece is a side-connected patch of one colour."""
    for c in range(1, 5):
        n, labels = cv2.connectedComponents((codes == c).astype(np.uint8), connectivity=4)
        yield c, n, labels


def _pieces(codes: np.ndarray) -> list[np.ndarray]:
    """Each piece's cells as a boolean mask."""
    return [labels == k for _, n, labels in _piece_labels(codes) for k in range(1, n)]


def _blocked(piece: np.ndarray, codes: np.ndarray) -> list[tuple[float, float]]:
    """Unit directions (x, y) in which `piece` touches another piece or the raised rim."""
    padded = np.pad(codes > 0, 1, constant_values=True)  # the rim stops a piece like a neighbour
    mine = np.pad(piece, 1)
    rows, cols = piece.shape
    sides = []
    for dr, dc in _NEIGHBOURS:
        shifted = np.s_[1 + dr:1 + dr + rows, 1 + dc:1 + dc + cols]
        if np.any(piece & padded[shifted] & ~mine[shifted]):
            sides.append((float(dc), float(dr)))
    return sides


def _lay_nudged(tex: np.ndarray, codes: np.ndarray, style: BlokusStyle, p: int, slop: Slop) -> None:
    """The grid into `tex` (the board's layers) with every piece where a hand left it: the
    empty board first (with the shadows pieces cast beside them), then each piece drawn
    alone, shifted and turned about its centre by its nudge, over the board. The board shows
    where a piece moved off its cells; a turned piece may press a neighbour's bevel."""
    f = int(FRAME_CELLS * p)
    _, filled = _neighbour_bits(codes)
    tiles = _tiles(style, p)
    _assemble(tiles, filled, tex[f:f + N * p, f:f + N * p])
    pieces = _pieces(codes)
    gains = _piece_gains(codes, style.seed)
    own = np.concatenate([tiles, np.zeros((1, *tiles.shape[1:]), np.float32)])  # last: nothing
    for piece, nudge in zip(pieces, slop.nudges(1.0, [_blocked(m, codes) for m in pieces])):
        rows, cols = np.nonzero(piece)
        r0, c0 = rows.min() - 1, cols.min() - 1  # one cell of room around the piece to turn in
        window = np.full((rows.max() - r0 + 2, cols.max() - c0 + 2), len(own) - 1)
        index = _tile_index(np.where(piece, codes, 0))
        window[rows - r0, cols - c0] = index[rows, cols]
        patch = _assemble(own, window)
        patch[..., :3] *= gains[rows[0], cols[0]]
        origin = np.array([f + c0 * p, f + r0 * p], np.float64)  # texture px of the patch's (0, 0)
        centre = origin + (np.array([cols.mean(), rows.mean()]) - [c0, r0] + 0.5) * p - 0.5
        to_tex = nudge.affine(tuple(centre), p)
        to_tex[:, 2] += to_tex[:, :2] @ origin  # patch px -> texture px
        x0, y0 = (max(0, int(v)) for v in origin)
        x1 = min(tex.shape[1], int(origin[0]) + patch.shape[1])
        y1 = min(tex.shape[0], int(origin[1]) + patch.shape[0])
        to_tex[:, 2] -= (x0, y0)
        laid = cv2.warpAffine(patch, to_tex, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        under = tex[y0:y1, x0:x1]
        cover = laid[..., 3:4]
        under[..., :3] = under[..., :3] * (1 - cover) + laid[..., :3]  # the patch is zero off the piece
        under[..., 4:] = under[..., 4:] * (1 - cover) + laid[..., 4:]


def _piece_gains(codes: np.ndarray, seed: int) -> np.ndarray:
    gains = np.ones(codes.shape, np.float32)
    for c, n, labels in _piece_labels(codes):
        table = np.random.default_rng([seed, c]).uniform(0.95, 1.05, n).astype(np.float32)
        gains = np.where(labels > 0, table[labels], gains)
    return gains


def render_board_topdown(state: list[str], px_per_cell: int = 32, rng: np.random.Generator | None = None) -> np.ndarray:
    """The board drawn from straight above as BGR uint8 (outside the rounded corners: white).

    With `rng` the board and piece shades vary like different copies of the game do.
    """
    style = BlokusStyle.default() if rng is None else BlokusStyle.random(rng, 225.0)
    tex = board_texture(state, px_per_cell, style)
    return tex.flattened()


# --------------------------------------------------------------------------- loose pieces


def _oriented(rows: list[str], rng: np.random.Generator) -> np.ndarray:
    shape = np.array([[ch == "#" for ch in r] for r in rows])
    shape = np.rot90(shape, int(rng.integers(4)))
    return np.fliplr(shape) if rng.random() < 0.5 else shape


def piece_sprite(shape: np.ndarray, colour: str, style: BlokusStyle, px_per_mm: float) -> Sprite:
    """A loose piece (boolean cell mask) as a sprite: translucent, glossy, bevelled."""
    p = max(8, int(math.ceil(px_per_mm * CELL_MM / 4)) * 4)
    codes = np.where(shape, COLOURS.index(colour) + 1, 0)
    layers = _assemble(_tiles(style, p, on_board=False), _tile_index(codes))
    rows, cols = shape.shape
    return Sprite(np.ascontiguousarray(layers), (cols * CELL_MM, rows * CELL_MM))


def _stray_pieces(style: BlokusStyle) -> Callable[[np.random.Generator, int, float], list[Sprite]]:
    def make(rng: np.random.Generator, count: int, px_per_mm: float) -> list[Sprite]:
        names = list(PIECES)
        return [piece_sprite(_oriented(PIECES[names[rng.integers(len(names))]], rng),
                             COLOURS[rng.integers(4)], style, px_per_mm) for _ in range(count)]
    return make


# --------------------------------------------------------------------------- photos


def _style_for(setup: CameraSetup) -> BlokusStyle:
    return BlokusStyle.random(np.random.default_rng([setup.seed, 11]), setup.light.azimuth_deg)


def _truth(codes: np.ndarray, out: SceneRender, tex: BoardTexture) -> tuple[list[str], np.ndarray, np.ndarray]:
    """State, grid corners and occlusion re-indexed to the upright photo."""
    p = tex.layers.shape[1] / (N + 2 * FRAME_CELLS)
    g0, g1 = FRAME_CELLS * p - 0.5, (FRAME_CELLS + N) * p - 0.5
    corners = out.texture_to_photo(np.array([[g0, g0], [g1, g0], [g1, g1], [g0, g1]]))
    mid_y = [(corners[k, 1] + corners[(k + 1) % 4, 1]) / 2 for k in range(4)]
    k = int(np.argmin(mid_y))  # texture side (top, right, bottom, left) nearest the photo's top
    # Occlusion: the share of hidden sample points inside each cell.
    s = (np.arange(4) + 0.5) / 4 * 0.8 + 0.1
    sr, sc = np.meshgrid(s, s, indexing="ij")
    rr, cc = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    ty = (FRAME_CELLS + rr[..., None, None] + sr) * p - 0.5
    tx = (FRAME_CELLS + cc[..., None, None] + sc) * p - 0.5
    pts = out.texture_to_photo(np.column_stack([tx.ravel(), ty.ravel()]))
    h, w = out.hidden.shape
    xi = np.clip(np.round(pts[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(pts[:, 1]).astype(int), 0, h - 1)
    inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
    hidden = (out.hidden[yi, xi] | ~inside).reshape(N, N, -1).mean(axis=2) >= 0.5
    letters = np.array(list("." + COLOURS))[np.rot90(codes, k)]
    return ["".join(row) for row in letters], np.roll(corners, -k, axis=0), np.rot90(hidden, k).copy()


def _hand(view: View, style: BlokusStyle, rng: np.random.Generator, at_cells, carrying: str | None):
    at_mm = ((at_cells[1] + 0.5 - N / 2) * CELL_MM, (at_cells[0] + 0.5 - N / 2) * CELL_MM)
    sprite = None
    if carrying is not None:
        pick = np.random.default_rng([view.setup.seed, ord(carrying)])
        names = list(PIECES)
        shape = _oriented(PIECES[names[pick.integers(len(names))]], pick)
        sprite = piece_sprite(shape, carrying, style, view.px_per_mm)
    return view.hand_toward(at_mm, rng, sprite)


def render_photo(state: list[str], conditions: Conditions, rng: np.random.Generator,
                 size: tuple[int, int] = (1600, 1200)) -> SyntheticPhoto:
    """A phone photo of the board in `state` under `conditions`; `size` is (width, height)
    of the stored pixels (a sideways EXIF photo is portrait when upright)."""
    codes = _codes(state)
    setup = CameraSetup.random(rng, conditions)
    style = _style_for(setup)
    view = setup.view(upright_size(size, conditions), style.geometry, _stray_pieces(style))
    tex = board_texture(state, round(view.px_per_mm * CELL_MM), style, Slop.of(conditions, setup.seed))
    hand = None
    if conditions.hand:
        at = rng.uniform(-1.0, N, 2)
        carrying = COLOURS[rng.integers(4)] if rng.random() < 0.5 else None
        hand = _hand(view, style, rng, at, carrying)
    out = view.render(tex, rng, hand)
    truth_state, corners, occluded = _truth(codes, out, tex)
    image, encoded = save_photo(out.image, conditions)
    return SyntheticPhoto(image, encoded, truth_state, corners, occluded, conditions)


def render_frame(state: list[str], camera: CameraSetup, rng: np.random.Generator,
                 hand_at: tuple[float, float] | None = None, size: tuple[int, int] = (1280, 720),
                 carrying: str | None = None) -> SyntheticPhoto:
    """One frame of a live game seen by a fixed camera (`CameraSetup.random` once per game).

    `hand_at` is (row, col) in the input state's cell units (fractional, may lie beside the
    board); `carrying` is the colour of a piece in that hand. Frames of one setup differ only
    by the pieces, the hand and sensor noise. Frames are upright (no EXIF), JPEG round-tripped
    only if the conditions ask for it.
    """
    codes = _codes(state)
    style = _style_for(camera)
    view = camera.view(tuple(size), style.geometry, _stray_pieces(style))
    tex = board_texture(state, round(view.px_per_mm * CELL_MM), style)
    hand = _hand(view, style, rng, hand_at, carrying) if hand_at is not None else None
    out, image, encoded = view.film(tex, rng, hand)
    truth_state, corners, occluded = _truth(codes, out, tex)
    return SyntheticPhoto(image, encoded, truth_state, corners, occluded, camera.conditions)
