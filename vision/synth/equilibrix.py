"""Synthetic photos of an Equilibrix board with exact ground truth.

This module only knows what the round board looks like from straight above: a wooden disc
with the Flower-of-Life drawing (the outline of every field, dark lines) inside a printed
outer circle; black/white two-sided tiles cut to the fields' shapes (petal lenses and curved
triangles), each field of a tile perforated by a small dot at every tip through which the
board shows; the ring of tiles lying on the wooden rim in ``flowergrid.SLOTS`` slots (the
stand-in shapes of ``rules/data/equilibrix-tiles.json``, turned any way, either side up); and
the red tetrahedron marking the Origin between two slots. The scene module photographs it.

Positions come from real play (:func:`random_position`: random legal turns of
``rules.equilibrix.Game`` from a shuffled ring), so the fields, the holes in the ring and the
Origin agree with each other.

Orientation of the truth: the board is 6-fold symmetric and so is the ring's layout, so, as
for Gemblo, "up" is the side of the lattice's node hexagon (the flat run of border petals
between two corner nodes) nearest the top of the upright photo. Fields are turned by the
multiple of 60 degrees that puts that side at the top (nodes (0,-3)..(3,-3)); ring slots and
the Origin turn with them (3 slots per 60 degrees), slot 0 being the first slot clockwise from
straight up. A fixed camera therefore keeps one labelling for a whole game. Mirroring never
happens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import cv2
import numpy as np

from rules import equilibrix, flower

from .. import flowergrid as fg
from .conditions import Conditions
from .draw import smoothstep
from .scene import BoardGeometry, BoardTexture, CameraSetup, SceneRender, View, save_photo, upright_size

R_MM = 30.0  # lattice spacing: a petal is 30 mm long and 8 mm wide
THICKNESS_MM = 12.0
LINE_R = 0.018  # half-width of a drawn line (r units)
GAP_R = 0.012  # half-width of the cut between two tiles
DOT_R = 0.035  # radius of a perforated tip dot
DOT_AT = {2: 0.13, 3: 0.2}  # how far a dot sits from its tip, towards the field's middle (2- / 3-tip fields)
TETRA_SIDE = 0.6  # the tetrahedron's edge (r units)
MAX_TEXTURE_PX_PER_MM = 6.0  # a finer texture only costs time: the photo never shows more
WOODS = {"light": (0.8, 0.64, 0.44), "honey": (0.76, 0.56, 0.33), "birch": (0.86, 0.76, 0.6)}
TILE_RGB = {"B": (0.07, 0.07, 0.08), "W": (0.93, 0.93, 0.91)}
TETRA_RGB = (0.78, 0.14, 0.1)


@dataclass(frozen=True)
class RingTile:
    """A tile lying in a ring slot: its shape, which side is up, how it is turned."""

    shape: str
    side: str  # "B" or "W"
    turn: int  # 0..5 lattice turns
    flip: bool
    jitter_deg: float  # how far off the lattice's directions it was laid


@dataclass(frozen=True)
class Position:
    """What lies on and around the board: tiles on the fields (colour, field ids), the ring
    (a tile or None per slot, clockwise from slot 0) and the slot the Origin stands before."""

    tiles: tuple[tuple[str, tuple[str, ...]], ...]
    ring: tuple[RingTile | None, ...]
    origin: int

    @property
    def fields(self) -> dict[str, str]:
        return {f: colour for colour, fs in self.tiles for f in fs}


@dataclass
class EquilibrixPhoto:
    """A rendered photo and what a perfect reader would report for it (turned to photo-up)."""

    image: np.ndarray  # BGR uint8 as stored (before any EXIF rotation)
    encoded: bytes | None  # the saved file when the conditions ask for one
    fields: dict[str, str]  # field id -> "B" / "W", occupied only
    ring: list[str | None]  # shape per slot, clockwise from slot 0; None: empty slot
    ring_sides: list[str | None]  # the side up ("B"/"W") per slot
    origin: int  # the Origin stands just before this slot (clockwise)
    corners: np.ndarray  # 6 x 2: corner nodes clockwise from the top side's left end, photo pixels
    occluded: set[str]  # fields mostly hidden by a hand, cup or glare
    ring_occluded: set[int]  # slots mostly hidden
    conditions: Conditions


@dataclass(frozen=True)
class EquilibrixStyle:
    """One physical copy of the game under one light."""

    wood_rgb: tuple[float, float, float]
    line_rgb: tuple[float, float, float]
    black_rgb: tuple[float, float, float]
    white_rgb: tuple[float, float, float]
    grain: float
    light_deg: float
    seed: int

    @staticmethod
    def random(rng: np.random.Generator, light_deg: float) -> EquilibrixStyle:
        wood = WOODS[list(WOODS)[int(rng.integers(len(WOODS)))]]
        jitter = lambda rgb, lo, hi: tuple(float(np.clip(v * rng.uniform(lo, hi), 0, 1)) for v in rgb)  # noqa: E731
        return EquilibrixStyle(jitter(wood, 0.93, 1.04), jitter((0.22, 0.14, 0.09), 0.7, 1.2),
                               jitter(TILE_RGB["B"], 0.8, 1.5), jitter(TILE_RGB["W"], 0.95, 1.03),
                               float(rng.uniform(0.02, 0.07)), light_deg, int(rng.integers(2**31)))

    @property
    def geometry(self) -> BoardGeometry:
        return _geometry(tuple(round(v * 0.7, 4) for v in self.wood_rgb))


@lru_cache(maxsize=8)
def _geometry(side_rgb: tuple[float, float, float]) -> BoardGeometry:
    """The disc's outline in texture millimetres, dense enough to follow the curve."""
    size = fg.EXTENT[0] * R_MM
    a = np.linspace(0, 2 * np.pi, 240, endpoint=False)
    rad = fg.DISC * R_MM
    outline = tuple((round(float(size / 2 + rad * math.cos(t)), 4), round(float(size / 2 + rad * math.sin(t)), 4))
                    for t in a)
    return BoardGeometry((size, size), outline, THICKNESS_MM, side_rgb)


# --------------------------------------------------------------------------- positions


def random_position(rng: np.random.Generator, turns: int | None = None, variant: str = "autonomie") -> Position:
    """A position reached by random legal play from a shuffled ring and a random Origin.

    A mini-tile that needs the 5+1 token is left out of the draw: the positions are the ones
    every bench seed and test photo was drawn from before session 15's rules audit made such a
    mini-tile a legal move (a photo shows no token, so nothing the reader sees is lost, and the
    figures of every session stay comparable)."""
    catalogue = equilibrix.default_catalogue()
    ring = list(catalogue["ring"])
    rng.shuffle(ring)
    setup = equilibrix.Setup(variant=variant, ring=tuple(ring), origin=int(rng.integers(len(ring))))
    game = equilibrix.Game.start(setup)
    turns = int(rng.integers(0, 24)) if turns is None else turns
    tiles = []
    for _ in range(turns):
        moves = [m for m in game.legal_moves(game.colour_to_move) if m.tile is not None or not m.token]
        if not moves:
            break
        move = moves[int(rng.integers(len(moves)))]
        game = game.play(move)
        tiles.append((move.colour, tuple(flower.field_id(f) for f in move.fields)))
    slots = []
    for name in game.ring:
        if name is None:
            slots.append(None)
        else:
            slots.append(RingTile(equilibrix.tile_shape(name), "BW"[int(rng.integers(2))], int(rng.integers(6)),
                                  bool(rng.random() < 0.5), float(rng.uniform(-6, 6))))
    return Position(tuple(tiles), tuple(slots), game.origin)


# --------------------------------------------------------------------------- texture


@lru_cache(maxsize=None)
def _shape_cells(shape: str, turn: int, flip: bool) -> tuple[tuple[int, int, int], ...]:
    """A catalogue shape turned (and flipped) about its own middle, as board fields near (0, 0)."""
    cells = [flower.parse_field(f) for f in equilibrix.default_catalogue()["shapes"][shape]]
    if flip:
        cells = [flower.FLOWER.reflection(c) for c in cells]
    cells = [flower.FLOWER.rotations[turn](c) for c in cells]
    board = flower.board()
    # Move it by whole lattice steps so it sits round the centre node (on the board).
    mid = np.mean([flower.centroid(c) for c in cells], axis=0)
    dq = -int(round(mid[0] - mid[1] / math.sqrt(3)))
    ds = -int(round(mid[1] * 2 / math.sqrt(3)))
    moved = tuple((q + dq, s + ds, k) for q, s, k in cells)
    assert all(c in board.index for c in moved), shape
    return moved


def _dots(cells: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Tip-dot centres (lattice position, r units) of these fields."""
    out = []
    for cell in cells:
        c = np.array(flower.centroid(cell))
        nodes = flower.field_nodes(cell)
        for node in nodes:
            tip = np.array(fg.node_xy(node))
            out.append(tip + DOT_AT[len(nodes)] * (c - tip) / np.linalg.norm(c - tip))
    return np.array(out)


def _wood(shape: tuple[int, int], p: float, style: EquilibrixStyle, rng: np.random.Generator) -> np.ndarray:
    """Brightness of the wood: fine grain stripes warped by a slow noise, and mottling."""
    h, w = shape
    warp = cv2.resize(rng.standard_normal((8, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    mottle = cv2.resize(rng.standard_normal((14, 14)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    ys = np.arange(h, dtype=np.float32)[:, None] / np.float32(p)
    angle = rng.uniform(0, np.pi)
    xs = np.arange(w, dtype=np.float32)[None, :] / np.float32(p)
    along = xs * np.float32(math.cos(angle)) + ys * np.float32(math.sin(angle))
    stripes = np.sin(along * np.float32(2 * np.pi / 0.09) + np.float32(2.5) * warp)
    return 1 + np.float32(style.grain) * stripes + np.float32(0.02) * mottle


def board_texture(position: Position, px_per_mm: float, style: EquilibrixStyle) -> BoardTexture:
    """The board seen from straight above (RGB, alpha, gloss) at `px_per_mm` texture pixels."""
    px_per_mm = min(px_per_mm, MAX_TEXTURE_PX_PER_MM)
    n = int(math.ceil(fg.EXTENT[0] * R_MM * px_per_mm))
    p = n / fg.EXTENT[0]  # texture px per r, exact so the scene's px_per_mm agrees
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    x = (xs + 0.5) / np.float32(p) - np.float32(fg.DISC)
    y = (ys + 0.5) / np.float32(p) - np.float32(fg.DISC)
    del xs, ys
    rng = np.random.default_rng(style.seed)
    field, line, _ = fg.locate_fields(x, y)
    radius = np.hypot(x, y)

    # Tiles: which tile covers each pixel (0: none) and its colour code (1 black, 2 white).
    tile_id = np.zeros((n, n), np.int32)
    code = np.zeros((n, n), np.int8)
    index = {name: i for i, name in enumerate(fg.names())}
    owner = np.zeros(len(index) + 1, np.int32)
    colour_of = np.zeros(len(index) + 1, np.int8)
    dots = []
    for t, (colour, names) in enumerate(position.tiles, start=1):
        for name in names:
            owner[index[name]] = t
            colour_of[index[name]] = 1 if colour == "B" else 2
        dots.append(_dots([flower.parse_field(f) for f in names]))
    tile_id[:] = owner[field]  # field -1 picks the spare last entry (0)
    code[:] = colour_of[field]
    for j, slot in enumerate(position.ring):
        if slot is None:
            continue
        cells = _shape_cells(slot.shape, slot.turn, slot.flip)
        centre = fg.slot_centres()[j] - fg.DISC
        mid = np.mean([flower.centroid(c) for c in cells], axis=0)
        a = math.radians(slot.jitter_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        x0, x1 = (int(np.clip((centre[0] + fg.DISC + d) * p, 0, n)) for d in (-0.9, 0.9))
        y0, y1 = (int(np.clip((centre[1] + fg.DISC + d) * p, 0, n)) for d in (-0.9, 0.9))
        lx, ly = x[y0:y1, x0:x1] - centre[0], y[y0:y1, x0:x1] - centre[1]
        # Texture point -> the tile's own lattice frame: undo the jitter, then the offset.
        ux = rot[0, 0] * lx + rot[1, 0] * ly + mid[0]
        uy = rot[0, 1] * lx + rot[1, 1] * ly + mid[1]
        local, _, _ = fg.locate_fields(ux, uy)
        members = np.isin(local, [index[flower.field_id(c)] for c in cells])
        tile_id[y0:y1, x0:x1][members] = 1000 + j
        code[y0:y1, x0:x1][members] = 1 if slot.side == "B" else 2
        dots.append((_dots(cells) - mid) @ rot.T + centre)
    del x, y

    # The board: wood, the drawing, the printed outer circle, the bevelled edge.
    wood = _wood((n, n), p, style, rng)
    ink = smoothstep(LINE_R + 0.6 / p, LINE_R - 0.6 / p, line)
    ink = np.maximum(ink, smoothstep(LINE_R + 0.6 / p, LINE_R - 0.6 / p, np.abs(radius - fg.OUTER_LINE)))
    edge = smoothstep(0.0, 0.06, fg.DISC - radius)
    rgb = wood[..., None] * np.array(style.wood_rgb, np.float32) * (0.85 + 0.15 * edge)[..., None]
    rgb += (np.array(style.line_rgb, np.float32) - rgb) * (0.9 * ink)[..., None]
    del ink, line, wood

    # Tiles: a drop shadow on the board, the cut between neighbouring tiles, a dot at every tip.
    covered = (code > 0).astype(np.float32)
    light = math.radians(style.light_deg)
    shift = np.float32([[1, 0, -0.03 * p * math.cos(light)], [0, 1, -0.03 * p * math.sin(light)]])
    shadow = cv2.GaussianBlur(cv2.warpAffine(covered, shift, (n, n)), (0, 0), max(0.5, 0.02 * p))
    rgb *= (1 - 0.35 * shadow * (1 - covered))[..., None]
    k = max(1, int(round(GAP_R * p)))
    ids = tile_id.astype(np.float32)
    kernel = np.ones((2 * k + 1, 2 * k + 1), np.uint8)
    cut = (cv2.dilate(ids, kernel) != cv2.erode(ids, kernel)) & (code > 0)
    holes = np.zeros((n, n), np.uint8)
    for pts in dots:
        for cx, cy in (pts + fg.DISC) * p - 0.5:
            cv2.circle(holes, (int(round(cx * 16)), int(round(cy * 16))), int(round(DOT_R * p * 16)), 255,
                       -1, cv2.LINE_AA, shift=4)
    hole = holes.astype(np.float32) / 255
    tiles = np.array([(0, 0, 0), style.black_rgb, style.white_rgb], np.float32)[code]
    sheen = 1 + 0.02 * cv2.resize(rng.standard_normal((20, 20)).astype(np.float32), (n, n))
    tiles *= sheen[..., None]
    cover = covered * (1 - cut) * (1 - hole)
    rgb = rgb * (1 - cover[..., None]) + tiles * cover[..., None]
    rgb *= (1 - 0.3 * hole * covered)[..., None]  # the hole's wall shades the board seen through it
    del tiles, cut, shadow

    _tetrahedron(rgb, position.origin, p, style, rng)
    alpha = np.clip((fg.DISC - radius) * np.float32(p) + 0.5, 0, 1)
    gloss = np.where(code > 0, 0.75, 0.3).astype(np.float32)
    layers = np.dstack([np.clip(rgb, 0, 1), alpha, gloss]).astype(np.float32)
    return BoardTexture(layers, style.geometry)


def _tetrahedron(rgb: np.ndarray, origin: int, p: float, style: EquilibrixStyle, rng: np.random.Generator) -> None:
    """The Origin's marker seen from above: a triangle of three faces meeting at the apex,
    each lit by how it faces the light."""
    a = fg.origin_angle(origin)
    centre = (fg.DISC + fg.RING_RADIUS * np.array([math.cos(a), math.sin(a)])) * p - 0.5
    spin = rng.uniform(0, 2 * np.pi)
    corners = [centre + TETRA_SIDE / math.sqrt(3) * p * np.array([math.cos(spin + t), math.sin(spin + t)])
               for t in (0, 2 * np.pi / 3, 4 * np.pi / 3)]
    light = np.array([math.cos(math.radians(style.light_deg)), math.sin(math.radians(style.light_deg))])
    for i in range(3):
        b, c = corners[i], corners[(i + 1) % 3]
        outward = (b + c) / 2 - centre
        facing = float(outward @ light / max(np.linalg.norm(outward), 1e-9))
        shade = 0.8 + 0.25 * facing
        face = np.round(np.array([centre, b, c]) * 16).astype(np.int32)
        cv2.fillPoly(rgb, [face], tuple(float(v * shade) for v in TETRA_RGB), cv2.LINE_AA, shift=4)


# --------------------------------------------------------------------------- photos


def _style_for(setup: CameraSetup) -> EquilibrixStyle:
    return EquilibrixStyle.random(np.random.default_rng([setup.seed, 17]), setup.light.azimuth_deg)


@lru_cache(maxsize=1)
def _sample_offsets() -> np.ndarray:
    """Lattice offsets of a few points round each field's middle (what decides 'hidden')."""
    return np.array([[0, 0], [0.06, 0], [-0.06, 0], [0, 0.06], [0, -0.06]])


def _truth(position: Position, out: SceneRender, tex: BoardTexture):
    """Fields, ring, Origin, corners and occlusion turned so the side nearest the top is up."""
    p = tex.layers.shape[1] / fg.EXTENT[0]
    to_tex = lambda uv: np.asarray(uv) * p - 0.5  # noqa: E731  (board frame -> texture px)
    corner_nodes = [(0, -3), (3, -3), (3, 0), (0, 3), (-3, 3), (-3, 0)]  # clockwise from the top side's left end
    corners_xy = np.array([fg.node_xy(c) for c in corner_nodes]) + fg.DISC
    mids = out.texture_to_photo(to_tex((corners_xy + np.roll(corners_xy, -1, 0)) / 2))
    k = int(np.argmin(mids[:, 1]))  # texture side k (clockwise from the top) is nearest the photo's top
    corners = out.texture_to_photo(to_tex(np.roll(corners_xy, -k, 0)))
    back = fg.turn_table(-k)
    names = fg.names()
    index = {name: i for i, name in enumerate(names)}
    fields = {names[back[index[f]]]: colour for f, colour in position.fields.items()}

    pts = (fg.centroids()[:, None, :] + _sample_offsets()[None]).reshape(-1, 2)
    hidden = _hidden(out, out.texture_to_photo(to_tex(pts))).reshape(len(names), -1).mean(1) >= 0.5
    occluded = {names[back[i]] for i in np.flatnonzero(hidden)}
    slot_pts = (fg.slot_centres()[:, None, :] + 2 * _sample_offsets()[None]).reshape(-1, 2)
    slot_hidden = _hidden(out, out.texture_to_photo(to_tex(slot_pts))).reshape(fg.SLOTS, -1).mean(1) >= 0.5
    shift = 3 * k  # a 60 degree turn moves the ring by 3 slots
    ring = [position.ring[(j + shift) % fg.SLOTS] for j in range(fg.SLOTS)]
    return (fields, [t.shape if t else None for t in ring], [t.side if t else None for t in ring],
            (position.origin - shift) % fg.SLOTS, corners, occluded,
            {j for j in range(fg.SLOTS) if slot_hidden[(j + shift) % fg.SLOTS]})


def _hidden(out: SceneRender, photo: np.ndarray) -> np.ndarray:
    hgt, wid = out.hidden.shape
    xi = np.clip(np.round(photo[:, 0]).astype(int), 0, wid - 1)
    yi = np.clip(np.round(photo[:, 1]).astype(int), 0, hgt - 1)
    inside = (photo[:, 0] >= 0) & (photo[:, 0] < wid) & (photo[:, 1] >= 0) & (photo[:, 1] < hgt)
    return out.hidden[yi, xi] | ~inside


def render_photo(rng: np.random.Generator, conditions: Conditions, size: tuple[int, int] = (1600, 1200),
                 position: Position | None = None) -> EquilibrixPhoto:
    """A phone photo of an Equilibrix board under `conditions`: `position`, or a random game.

    Loose pieces beside the board are not drawn (``stray_pieces`` is ignored)."""
    position = position or random_position(rng)
    setup = CameraSetup.random(rng, conditions)
    style = _style_for(setup)
    view: View = setup.view(upright_size(size, conditions), style.geometry)
    tex = board_texture(position, view.px_per_mm, style)
    hand = view.random_hand(rng, conditions, (3.0 * R_MM, 3.0 * R_MM))  # over the flower
    out = view.render(tex, rng, hand)
    fields, ring, sides, origin, corners, occluded, ring_occluded = _truth(position, out, tex)
    image, encoded = save_photo(out.image, conditions)
    return EquilibrixPhoto(image, encoded, fields, ring, sides, origin, corners, occluded, ring_occluded, conditions)


def render_board_topdown(position: Position, px_per_r: float = 40.0, seed: int = 0) -> np.ndarray:
    """The board from straight above as BGR uint8 (outside the disc: white); a quick look."""
    style = EquilibrixStyle(WOODS["light"], (0.22, 0.14, 0.09), TILE_RGB["B"], TILE_RGB["W"], 0.04, 225.0, seed)
    tex = board_texture(position, px_per_r / R_MM, style)
    return tex.flattened()
