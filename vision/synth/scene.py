"""Board-agnostic photo synthesis: puts a top-down board texture on a table and photographs it.

Why this module exists: the board reader must be tested on photos whose ground truth is exact,
so every photo is *rendered* from a known board state. Board modules (Blokus now, later Gemblo's
hex board and Equilibrix's round board) only draw their board top-down as a `BoardTexture`;
everything about the photo — camera pose and lens, table, light, glare, shadows, clutter, blur,
sensor noise, file format — lives in this module and the few it composes, and works for any
board outline:

- `board`: what a board module hands over (`BoardGeometry`, `BoardTexture`, `Sprite`);
- `camera`: pinhole camera with lens distortion, posed to frame the board; pixel <-> plane maps;
- `table`: the procedural table surface and the room beyond it;
- `light`: exposure, colour cast, fall-off, cast shadows and glare;
- `clutter`: the hand, the mug and loose pieces beside the board;
- `sensor`: blur, noise, quantisation and sharpening;
- `photo_file`: EXIF orientation and JPEG round trip;
- `draw`: small raster helpers they share.

Their public names stay importable from here.

Conventions
- World coordinates are millimetres: X to the right of the board texture, Y towards the
  texture's bottom, Z *into* the table. The table top is Z = 0, so things above it have Z < 0.
  The board texture's centre sits over the world origin.
- Pixel coordinates (texture and photo) put pixel centres at integers, as OpenCV does.
- Images are float32 RGB in [0, 1] while rendering; the finished photo is BGR uint8.

Rendering is split in two so that a live-referee demo can render hundreds of frames quickly:
`CameraSetup` draws every random choice of a photo session (pose, lens, light, table, clutter);
`View` turns a setup into everything static for one image size (camera matrices, coordinate
maps, the rendered table, light fields); `View.render` then only adds the board, a hand, a cup
and sensor noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import cv2
import numpy as np

from .board import BoardGeometry, BoardTexture, Sprite
from .camera import Camera, _apply_h, _jacobian, _plane_coords, _solve_camera, _undistorted_grid
from .clutter import CupStyle, Hand, HandStyle, cup_layer, draw_hand, lay_props, place_cup
from .conditions import Conditions
from .draw import _chroma, _fill, _lerp_into, _rep3, _roi, _soft_mask, _tint
from .light import CastShadow, GlareSpot, Light, cast_shadow, glare_field, illumination, white_balance_gains
from .photo_file import exif_app1, save_photo, upright_size
from .sensor import _NOISE_TILE, _expose
from .table import CLOTH_PATTERNS, TableStyle, table_layer

__all__ = ["REFERENCE_WIDTH", "BoardGeometry", "BoardTexture", "Camera", "CameraSetup", "CastShadow",
           "CLOTH_PATTERNS", "CupStyle", "GlareSpot", "Hand", "HandStyle", "Light", "SceneRender", "Sprite",
           "TableStyle", "View", "exif_app1", "save_photo", "upright_size", "white_balance_gains"]

REFERENCE_WIDTH = 1600.0  # Conditions' pixel lengths refer to a photo this wide
_STRIP = 128  # rows composited at a time


@dataclass(eq=False)
class CameraSetup:
    """Every random choice of a photo session: a fixed camera, light, table and clutter.

    Successive frames rendered from one setup differ only by what the caller changes (the
    pieces, a hand) and by sensor noise. `seed` derives the static choices made later
    (placement of clutter, the board module's colours), so a setup is reproducible.
    """

    conditions: Conditions
    seed: int
    light: Light
    table: TableStyle
    hand_style: HandStyle
    cup_style: CupStyle | None
    _views: dict = field(default_factory=dict, init=False, repr=False)

    @staticmethod
    def random(rng: np.random.Generator, conditions: Conditions) -> CameraSetup:
        return CameraSetup(conditions, int(rng.integers(2**62)), Light.random(rng, conditions),
                           TableStyle.random(rng, conditions.table), HandStyle.random(rng),
                           CupStyle.random(rng, conditions.cup_on_board) if conditions.cup else None)

    def view(self, size: tuple[int, int], geometry: BoardGeometry,
             props: Callable[[np.random.Generator, int, float], list[Sprite]] | None = None) -> View:
        """The (cached) static rendering state for one image size and board shape.

        `props(rng, count, px_per_mm)` makes the loose pieces lying beside the board when the
        conditions ask for them; it is called once per view.
        """
        key = (tuple(size), geometry)
        if key not in self._views:
            if len(self._views) >= 2:  # a 12 MP view holds ~1 GB of maps and layers
                self._views.pop(next(iter(self._views)))
            self._views[key] = View(self, tuple(size), geometry, props)
        return self._views[key]


@dataclass
class SceneRender:
    """One rendered photo plus the geometry needed to state its ground truth."""

    image: np.ndarray  # BGR uint8, upright
    hidden: np.ndarray  # H x W bool: covered by a hand or cup, or glare left it white or colourless
    homography: np.ndarray  # board texture pixels -> undistorted photo pixels
    camera: Camera

    def texture_to_photo(self, pts: np.ndarray) -> np.ndarray:
        """Board texture pixels (N x 2) -> photo pixels, lens distortion included."""
        return self.camera.distort(_apply_h(self.homography, pts))


class View:
    """Everything static about one camera setup at one image size and board shape.

    Building it costs a few hundred milliseconds (table, light fields, coordinate maps);
    `render` then only remaps the board texture and adds a hand, a cup and noise.
    """

    def __init__(self, setup: CameraSetup, size: tuple[int, int], geometry: BoardGeometry,
                 props: Callable[[np.random.Generator, int, float], list[Sprite]] | None):
        self.setup, self.size, self.geometry = setup, size, geometry
        c = setup.conditions
        rng = np.random.default_rng(setup.seed)
        self.camera = cam = _solve_camera(c, size, geometry)
        self.scale = max(size) / REFERENCE_WIDTH
        self.undist = _undistorted_grid(cam)
        self.H_board = cam.plane_homography(geometry.top_z)
        self.board_scale = math.sqrt(abs(np.linalg.det(_jacobian(self.H_board, np.zeros(2)))))
        # Texture resolution a board module should draw at: a little finer than the photo.
        self.px_per_mm = min(1.15 * self.board_scale, 4096 / max(geometry.size_mm))
        outline = geometry.outline_world(geometry.top_z)
        self.outline_xy = outline[:, :2]
        outline_px = cam.project(outline)
        self.board_onscreen = math.sqrt(abs(cv2.contourArea(outline_px.astype(np.float32))))
        roi = _roi(outline_px, size, 2)
        if roi is None:  # a caller's own tilt and offset can aim the camera past the board
            raise ValueError(f"the board lies wholly outside the {size[0]}x{size[1]} photo (tilt "
                             f"{c.tilt_deg:.0f} degrees, turned {c.rotation_deg:.0f}): nothing to draw")
        self.board_roi = x0, y0, x1, y1 = roi
        self.board_xy = _plane_coords(self.undist[y0:y1, x0:x1], self.H_board)
        self.board_depth = float(cam.depth(np.array([[0.0, 0.0, geometry.top_z]]))[0])

        albedo, gloss = table_layer(setup.table, cam, self.undist, self.board_depth, self.scale)
        self.cup_at = place_cup(self, rng) if setup.cup_style else None
        sprites = props(rng, c.stray_pieces, self.px_per_mm) if props and c.stray_pieces else []
        lay_props(self, albedo, gloss, sprites, rng)
        self._board_base(albedo)
        self.illum = illumination(setup.light, cam, geometry, self.board_depth, self.board_onscreen)
        # the glare array covers glare_roi only
        self.glare, self.glare_roi = glare_field(setup.light, cam, geometry, self.board_onscreen)
        self.glare_rgb = (setup.light.gains / setup.light.gains.max()).astype(np.float32)
        self.background = albedo * self.illum
        if self.glare_roi is not None:
            gx0, gy0, gx1, gy1 = self.glare_roi
            self.background[gy0:gy1, gx0:gx1] += _tint(self.glare * gloss[gy0:gy1, gx0:gx1], self.glare_rgb)
        self.cup_layer = cup_layer(self) if self.cup_at is not None else None
        bank_rng = np.random.default_rng([setup.seed, 7])
        tile = (min(size[1], _NOISE_TILE) + 32, min(size[0], _NOISE_TILE) + 32, 3)
        self.noise_bank = bank_rng.standard_normal(tile, dtype=np.float32)
        self.skin_mottle = bank_rng.standard_normal((6, 6), dtype=np.float32)

    # -- static layers ------------------------------------------------------------------

    def _board_base(self, albedo: np.ndarray) -> None:
        """The board's contact shadow on the table and its visible side walls."""
        g, cam, light = self.geometry, self.camera, self.setup.light
        foot = g.outline_world(0.0)
        top = g.outline_world(g.top_z)
        shifted = foot.copy()
        shifted[:, :2] += light.shadow_shift(g.thickness_mm)
        sigma = (3.0 + 0.6 * g.thickness_mm) * self.board_scale
        polys = [cam.project(foot), cam.project(shifted)]
        near = _roi(np.vstack(polys), self.size, int(3 * sigma) + 2)
        if near is not None:
            x0, y0, x1, y1 = near
            mask = _soft_mask((x1 - x0, y1 - y0), [p - [x0, y0] for p in polys], sigma)
            albedo[y0:y1, x0:x1] *= _rep3(1 - 0.5 * mask)

        pf, pt = cam.project(foot), cam.project(top)
        roi = _roi(np.vstack([pf, pt]), self.size, 2)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        shade = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cover = np.zeros_like(shade)
        az = math.radians(light.azimuth_deg)
        to_light = np.array([math.cos(az), math.sin(az)])
        n_pts = len(foot)
        for i in range(n_pts):
            j = (i + 1) % n_pts
            edge = foot[j, :2] - foot[i, :2]
            normal = np.array([edge[1], -edge[0]]) / max(np.linalg.norm(edge), 1e-9)
            if normal @ foot[i, :2] < 0:
                normal = -normal
            value = int(255 * (0.45 + 0.4 * max(0.0, float(normal @ to_light))))
            quad = np.array([pf[i], pf[j], pt[j], pt[i]])
            _fill(shade, [quad], value, (x0, y0), aa=False)
            _fill(cover, [quad], 255, (x0, y0))
        side = _tint(shade.astype(np.float32) / 255, g.side_rgb)
        _lerp_into(albedo[y0:y1, x0:x1], side, cover.astype(np.float32) / 255)

    # -- per frame ----------------------------------------------------------------------

    def hand_toward(self, at_mm: tuple[float, float], rng: np.random.Generator,
                    carrying: Sprite | None = None) -> Hand:
        """This session's hand with its grip over `at_mm`, the arm coming from the board's
        nearest side (players reach in from where they sit)."""
        st = self.setup.hand_style
        at = np.asarray(at_mm, np.float64)
        if np.linalg.norm(at) > 1.0:
            inward = math.degrees(math.atan2(-at[1], -at[0]))
        else:  # over the centre: reach from the photographer's side
            inward = math.degrees(math.atan2(-self.camera.centre[1], -self.camera.centre[0]))
        return Hand((float(at[0]), float(at[1])), inward + st.skew_deg + float(rng.normal(0, 6)),
                    st.height_mm * float(rng.uniform(0.85, 1.15)), st, carrying, float(rng.uniform(0, 360)))

    def random_hand(self, rng: np.random.Generator, conditions: Conditions,
                    reach_mm: tuple[float, float]) -> Hand | None:
        """A hand over a random point within ``reach_mm`` (x, y) of the board's centre, when
        the conditions put one in the photo."""
        if not conditions.hand:
            return None
        at = rng.uniform(-1.0, 1.0, 2) * np.asarray(reach_mm, np.float64)
        return self.hand_toward((float(at[0]), float(at[1])), rng)

    def render(self, board: BoardTexture, rng: np.random.Generator, hand: Hand | None = None) -> SceneRender:
        """Photograph the board (any texture resolution) with the optional hand."""
        w, h = self.size
        radiance = self.background.copy()
        occluder = np.zeros((h, w), np.float32)
        washout = np.zeros((h, w), bool)

        x0, y0, x1, y1 = self.board_roi
        for top in range(y0, y1, _STRIP):  # strips keep the temporaries small and in cache
            self._composite_board(radiance, washout, board, top, min(top + _STRIP, y1))

        if self.cup_layer is not None:
            roi, cup_rad, cup_alpha, (shadow, blur_mm) = self.cup_layer
            cast_shadow(radiance, shadow, blur_mm, 0.5, self.board_scale)
            cx0, cy0, cx1, cy1 = roi
            _lerp_into(radiance[cy0:cy1, cx0:cx1], cup_rad, cup_alpha)
            occluder[cy0:cy1, cx0:cx1] = np.maximum(occluder[cy0:cy1, cx0:cx1], cup_alpha)
        if hand is not None:
            draw_hand(self, radiance, occluder, hand)

        image = _expose(radiance, self.setup.conditions, rng, self.noise_bank, self.scale)
        return SceneRender(image, (occluder > 0.5) | washout, self.H_board @ board.px_to_mm(), self.camera)

    def film(self, board: BoardTexture, rng: np.random.Generator,
             hand: Hand | None = None) -> tuple[SceneRender, np.ndarray, bytes | None]:
        """One frame of a live game filmed by this fixed camera: the render, its image as the
        conditions store it, and the encoded file if any. A camera films upright frames, so
        no EXIF turn is ever applied, whatever the conditions say a phone would do."""
        out = self.render(board, rng, hand)
        image, encoded = save_photo(out.image, replace(self.setup.conditions, exif_orientation=1))
        return out, image, encoded

    def _composite_board(self, radiance: np.ndarray, washout: np.ndarray, board: BoardTexture,
                         top: int, bottom: int) -> None:
        """Lay the lit board texture over rows top..bottom of the board's region."""
        x0, y0, x1, _ = self.board_roi
        ppm = np.float32(board.px_per_mm)
        gw, gh = board.geometry.size_mm
        xy = self.board_xy[top - y0:bottom - y0]
        mx = xy[..., 0] * ppm + np.float32(gw / 2 * ppm - 0.5)
        my = xy[..., 1] * ppm + np.float32(gh / 2 * ppm - 0.5)
        s = cv2.remap(board.layers, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        lit = s[..., :3] * self.illum[top:bottom, x0:x1]
        a = np.ascontiguousarray(s[..., 3])
        if self.glare_roi is not None:
            # Specular light, and where it drowns the surface colour (no reader can see beneath).
            gx0, gy0 = max(self.glare_roi[0], x0), max(self.glare_roi[1], top)
            gx1, gy1 = min(self.glare_roi[2], x1), min(self.glare_roi[3], bottom)
            if gx1 > gx0 and gy1 > gy0:
                inner = (slice(gy0 - top, gy1 - top), slice(gx0 - x0, gx1 - x0))
                rx, ry = self.glare_roi[:2]
                spec = self.glare[gy0 - ry:gy1 - ry, gx0 - rx:gx1 - rx] * s[inner][..., 4]
                glared = lit[inner]
                chroma_before = _chroma(glared)[0]
                glared += _tint(spec, self.glare_rgb)
                chroma_after, darkest = _chroma(glared)
                washout[gy0:gy1, gx0:gx1] = (spec * a[inner] >= 0.25) & (
                    (darkest >= 0.88) | (chroma_after < 0.35 * chroma_before))
        _lerp_into(radiance[top:bottom, x0:x1], lit, a)
