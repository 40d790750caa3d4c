"""Read the ring of tiles round an Equilibrix board's flower at a known pose: per slot the tile
lying there (its shape, matched by its silhouette against every catalogue shape's, and its side
up, black or white), where the Origin (the red tetrahedron) stands, and the white tiles' colour
and roughness, this photo's reference for white plastic (``vision.equilibrix_fields``).

Reading goes pose -> fields and ring -> state; this module reads the ring (``vision.equilibrix``
puts the steps together).
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from rules import equilibrix, flower

from . import flowergrid as fg
from .equilibrix_fields import PPU, light_terms
from .reading import UNCERTAIN_BELOW

SLOT_R = 0.8  # a ring slot's search radius (r units)
SHAPE_WINDOW = 1.0  # half-size of the window a ring tile's silhouette is compared in (r units)
SHAPE_TURNS = (-8.0, -4.0, 0.0, 4.0, 8.0)  # degrees a ring tile may lie off the lattice's directions
MIN_OVERLAP = 0.7  # a silhouette overlapping every shape less (IoU) is not a tile
SHAPE_MARGIN = 0.1  # overlap (IoU) by which the best shape must beat the next to be sure
MIN_TILE_AREA = 0.15  # r^2: smaller blobs in a slot are not a tile
RED = 0.7  # redness (log R over the mean of G and B, light divided out) of the tetrahedron


@lru_cache(maxsize=1)
def _shape_masks() -> tuple[tuple[str, ...], np.ndarray]:
    """Every catalogue shape in each of its 12 lattice orientations (6 turns, either side up),
    drawn at PPU in a window centred on its centroid: (shape per mask, masks)."""
    index = {name: i for i, name in enumerate(fg.names())}
    half = int(SHAPE_WINDOW * PPU)
    d = (np.mgrid[0:2 * half + 1, 0:2 * half + 1].astype(np.float32) - half) / np.float32(PPU)
    names, masks = [], []
    for shape, fields in equilibrix.default_catalogue()["shapes"].items():
        cells = [flower.parse_field(f) for f in fields]
        for flip in (False, True):
            for turn in range(6):
                turned = [flower.FLOWER.rotations[turn](flower.FLOWER.reflection(c) if flip else c) for c in cells]
                mid = np.mean([flower.centroid(c) for c in turned], axis=0)
                f, _, _ = fg.locate_fields(d[1] + np.float32(mid[0]), d[0] + np.float32(mid[1]))
                # Fields of a shape near the board's edge may fall off the tabulated board: shift it in.
                ids = [index.get(flower.field_id(c), -2) for c in turned]
                if min(ids) < 0:
                    continue
                names.append(shape)
                masks.append(np.isin(f, ids))
    return tuple(names), np.array(masks)


@lru_cache(maxsize=1)
def _mask_rows() -> tuple[np.ndarray, np.ndarray]:
    """The masks of :func:`_shape_masks` one a row (0 or 1), and their areas in pixels: a
    silhouette's overlap with every mask is then one product (whole numbers, exact), not a
    pass over every mask's pixels for each turn of each tile."""
    _, masks = _shape_masks()
    rows = masks.reshape(len(masks), -1).astype(np.float64)
    return rows, rows.sum(1)


def _identify_tile(blob: np.ndarray) -> tuple[str, float, bool]:
    """The catalogue shape a ring tile's silhouette (holes filled) overlaps best, how clearly
    it beats the best other shape (0-1), and whether it is a tile's shape at all."""
    names, masks = _shape_masks()
    rows, areas = _mask_rows()
    half = masks.shape[1] // 2
    ys, xs = np.nonzero(blob)
    cy, cx = int(round(ys.mean())), int(round(xs.mean()))
    window = np.zeros(masks.shape[1:], bool)
    y0, x0 = cy - half, cx - half
    sy, sx = max(0, -y0), max(0, -x0)
    crop = blob[max(0, y0):y0 + 2 * half + 1, max(0, x0):x0 + 2 * half + 1]
    window[sy:sy + crop.shape[0], sx:sx + crop.shape[1]] = crop
    iou = np.zeros(len(masks))
    centre = (float(half), float(half))
    for angle in SHAPE_TURNS:  # a tile lies only roughly along the lattice's directions
        m = cv2.getRotationMatrix2D(centre, angle, 1.0)
        turned = cv2.warpAffine(window.astype(np.uint8), m, window.shape[::-1], flags=cv2.INTER_NEAREST).ravel() > 0
        inter = rows @ turned
        union = areas + turned.sum() - inter
        iou = np.maximum(iou, inter / np.maximum(union, 1))
    best = {}
    for name, score in zip(names, iou):
        best[name] = max(best.get(name, 0.0), float(score))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    if ranked[0][1] < MIN_OVERLAP:  # no tile's shape: a hand or a cup on the rim
        return ranked[0][0], 0.0, False
    return ranked[0][0], float(np.clip((ranked[0][1] - ranked[1][1]) / SHAPE_MARGIN, 0, 1)), True


@lru_cache(maxsize=1)
def _ring_pixels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rim's pixels in the PPU view (flat indices), their board points and light-field rows."""
    n = int(round(fg.EXTENT[0] * PPU))
    ys, xs = np.mgrid[0:n, 0:n]
    uv = np.column_stack([xs.ravel() / PPU, ys.ravel() / PPU])
    radius = np.hypot(uv[:, 0] - fg.DISC, uv[:, 1] - fg.DISC)
    idx = np.flatnonzero((radius > fg.OUTER_LINE + 0.2) & (radius < fg.DISC - 0.1))
    return idx, uv[idx], light_terms(uv[idx])


def read_ring(rect: np.ndarray, coef: np.ndarray, shown: np.ndarray) -> tuple[list[dict | None], list[int],
                                                                              int | None, np.ndarray | None,
                                                                              float | None]:
    """Per slot the tile lying there (shape, side up) or None; doubtful slots; the Origin; the
    white tiles' colour over the wood (brightness, blueness), the reference for the fields; and
    the roughness of the smoothest quarter of them (grey levels), white plastic's in this photo.
    ``shown``: which pixels of ``rect`` the photo shows; a slot it does not show whole is
    doubtful and read empty (a tile cut by the photo's edge is no shape)."""
    n = rect.shape[0]
    idx, uv, design = _ring_pixels()
    rel = np.log(rect.reshape(-1, 3)[idx].astype(np.float32) + 1.0) - (design @ coef).astype(np.float32)
    bright = rel.mean(1)
    red = (rel[:, 2] - 0.5 * (rel[:, 0] + rel[:, 1]) > RED) & shown[idx]
    black = (bright < -0.9) & ~red & shown[idx]
    white = (bright > 0.1) & (rel[:, 0] - rel[:, 2] > 0.15) & shown[idx]
    code = np.zeros(n * n, np.uint8)
    code[idx[black]] = 1
    code[idx[white]] = 2
    code = code.reshape(n, n)
    tiles = cv2.morphologyEx((code > 0).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, comp, stats, cents = cv2.connectedComponentsWithStats(tiles)
    ring: list[dict | None] = []
    doubt = []
    whites, white_rough = [], []
    gray = rect.astype(np.float32).mean(2)
    feat = np.zeros((n * n, 2), np.float32)
    feat[idx] = np.column_stack([bright, rel[:, 0] - rel[:, 2]])
    feat = feat.reshape(n, n, 2)
    area = stats[:, cv2.CC_STAT_AREA].astype(float)
    area[0] = 0
    unseen_slots = _slots_unseen(shown)
    for j, centre in enumerate(fg.slot_centres() * PPU):
        near = (np.hypot(*(cents - centre).T) < SLOT_R * PPU) & (area >= MIN_TILE_AREA * PPU ** 2)
        if unseen_slots[j] or not near.any():
            ring.append(None)
            if unseen_slots[j]:
                doubt.append(j)
            continue
        k = int(np.argmax(np.where(near, area, 0)))
        x, y, w, h = stats[k, :4]
        mask = comp[y:y + h, x:x + w] == k
        # The tip dots are holes in the silhouette: fill them.
        outline = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0]
        solid = cv2.drawContours(np.zeros(mask.shape, np.uint8), outline, -1, 1, -1)
        # Give back what the cut round the tile and the noise filter above took off its edge.
        solid = cv2.dilate(np.pad(solid, 2), np.ones((3, 3), np.uint8)) > 0
        shape, confidence, is_tile = _identify_tile(solid)
        side = "B" if np.mean(code[y:y + h, x:x + w][mask] == 1) > 0.5 else "W"
        ring.append({"shape": shape, "side": side, "confidence": confidence})
        if confidence < UNCERTAIN_BELOW:
            doubt.append(j)
        if is_tile and side == "W":  # a tile's shape, not a glare spot's or a hand's: white's colour
            whites.append(np.median(feat[y:y + h, x:x + w][cv2.erode(mask.astype(np.uint8), np.ones((3, 3))) > 0], 0))
            inner = cv2.erode(mask.astype(np.uint8), np.ones((5, 5))) > 0  # clear of the tile's shaded edge
            if inner.any():
                white_rough.append(float(np.std(gray[y:y + h, x:x + w][inner])))
    origin = None
    if red.sum() >= 0.05 * PPU ** 2:
        pts = uv[red]
        angle = math.degrees(math.atan2(np.mean(pts[:, 1]) - fg.DISC, np.mean(pts[:, 0]) - fg.DISC))
        origin = int(round((angle - fg.SLOT0_DEG) / fg.SLOT_DEG + 0.5)) % fg.SLOTS
    white_ref = np.median(whites, 0) if whites else None
    return ring, doubt, origin, white_ref, float(np.percentile(white_rough, 25)) if white_rough else None


def _slots_unseen(shown: np.ndarray) -> np.ndarray:
    """Per ring slot: does part of where its tile may lie (SHAPE_WINDOW round the slot) fall
    outside the photo (``shown``, per pixel of the PPU view)?"""
    idx, uv, _ = _ring_pixels()
    hidden = uv[~shown[idx]]
    if not len(hidden):
        return np.zeros(fg.SLOTS, bool)
    return (np.linalg.norm(hidden[:, None, :] - fg.slot_centres()[None], axis=2) < SHAPE_WINDOW).any(0)
