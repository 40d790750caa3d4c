"""How the live page draws a game's board, computed from the game's rules.

Blokus and Gemblo share one drawing path: a polygon per cell at a centre given here,
outlines built from the polygon's sides and the neighbour across each side. Only the cell
shape differs between them, and it follows the lattice (Blokus' squares, Gemblo's hexes).
Units are chosen so that neighbouring cells' centres lie 1 apart on either board: the
page's stroke widths and marks then read the same on both. Equilibrix' fields are not
polygons (petals and curved triangles have arcs for sides), so the flower layout gives each
field's SVG path; Geometrius' token field is drawn by its adapter's layout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from rules import equilibrix, flower, gemblo
from rules.lattice import Cell
from rules.placement import PlacementRules

HEX_RADIUS = 1 / math.sqrt(3)  # a flat-topped hex whose neighbours' centres lie 1 apart


@dataclass(frozen=True)
class CellShape:
    """One lattice's cells on screen (y down)."""

    polygon: tuple[tuple[float, float], ...]  # corners around the centre, clockwise
    sides: tuple[Cell, ...]  # the neighbour across the side from corner k to corner k + 1
    centre: Callable[[Cell], tuple[float, float]]
    label: str  # a cell as the user is told it: {a}, {b} are its coordinates plus label_base
    label_base: int


SQUARE = CellShape(
    polygon=((-.5, -.5), (.5, -.5), (.5, .5), (-.5, .5)),
    sides=((-1, 0), (0, 1), (1, 0), (0, -1)),
    centre=lambda cell: (float(cell[1]), float(cell[0])),  # (row, col): x is the column
    label="row {a}, column {b}", label_base=1,
)

HEX = CellShape(
    polygon=tuple((HEX_RADIUS * math.cos(k * math.pi / 3), HEX_RADIUS * math.sin(k * math.pi / 3))
                  for k in range(6)),
    sides=((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)),
    centre=lambda cell: tuple(HEX_RADIUS * v for v in gemblo.screen(cell)),
    label="cell {a}, {b}", label_base=0,
)

SHAPES = {"square": SQUARE, "hex": HEX}  # by lattice name


def layout_json(rules: PlacementRules, pickable: Sequence[str]) -> dict:
    """Everything static the page needs to draw and correct this game's board.

    ``cells`` rows are ``[a, b, x, y, in_zone]``; ``starts`` rows ``[a, b, colour]`` with
    colour None where several colours may start (Blokus' free corners).
    """
    board = rules.board
    shape = SHAPES[board.lattice.name]
    colours_at: dict[Cell, set[str]] = {}
    for colour, mask in rules.starts.items():
        for cell in board.cells_of(mask):
            colours_at.setdefault(cell, set()).add(colour)
    return {
        "shape": board.lattice.name,
        "polygon": [[round(x, 4), round(y, 4)] for x, y in shape.polygon],
        "sides": [list(s) for s in shape.sides],
        "label": shape.label,
        "label_base": shape.label_base,
        "cells": [[*cell, *(round(v, 4) for v in shape.centre(cell)), (rules.zone >> i) & 1]
                  for i, cell in enumerate(board.cells)],
        "starts": [[*cell, next(iter(cs)) if len(cs) == 1 else None] for cell, cs in sorted(colours_at.items())],
        "pickable": list(pickable),
    }


# --- Equilibrix: the Flower of Life -----------------------------------------------------------

FLOWER_SCALE = 2.0  # node spacing on screen: a petal's length (its two tips 1 apart would be too thin to tap)


def _node_xy(node: tuple[int, int], r: float) -> tuple[float, float]:
    """A flower node on screen (y down): axial (q, s) at r·(q + s/2, s·√3/2)."""
    q, s = node
    return (r * (q + s / 2), r * s * math.sqrt(3) / 2)


def _arc(to: tuple[float, float], r: float, sweep: int) -> str:
    return f"A{r:g} {r:g} 0 0 {sweep} {to[0]:.4f} {to[1]:.4f}"


def flower_field_path(cell: Cell, r: float = FLOWER_SCALE) -> str:
    """The field's outline as an SVG path: arcs of the circles (radius r) drawn round the nodes.

    Every side of a field is an arc of radius r between two of its tips (they lie r apart).
    A petal's two sides bow outward, one to each side of its edge; a curved triangle's three
    sides bow inward, each being the arc of the circle round the node beyond that side.
    """
    pts = [_node_xy(n, r) for n in sorted(flower.field_nodes(cell))]
    if len(pts) == 2:
        a, b = pts
        return f"M{a[0]:.4f} {a[1]:.4f}{_arc(b, r, 0)}{_arc(a, r, 0)}Z"
    cx, cy = sum(p[0] for p in pts) / 3, sum(p[1] for p in pts) / 3
    pts.sort(key=lambda p: math.atan2(p[1] - cy, p[0] - cx))  # clockwise on screen (y down)
    a, b, c = pts
    return f"M{a[0]:.4f} {a[1]:.4f}{_arc(b, r, 0)}{_arc(c, r, 0)}{_arc(a, r, 0)}Z"


def flower_layout(markers: dict | None = None, r: float = FLOWER_SCALE) -> dict:
    """The Equilibrix board: a path per field (``[id, d, x, y]``, (x, y) its centroid),
    the nodes (``[q, s, x, y]``) and the TŘI METY markers (``[q, s, colour]``)."""
    board = flower.board()
    return {
        "shape": "flower",
        "fields": [[flower.field_id(c), flower_field_path(c, r), *(round(v, 4) for v in flower.centroid(c, r))]
                   for c in board.cells],
        "nodes": [[q, s, *(round(v, 4) for v in _node_xy((q, s), r))] for q, s in flower.NODES],
        "markers": [[q, s, colour] for (q, s), colour in (markers or {}).items()],
        "radius": round(3 * r, 4),
        "pickable": list(equilibrix.COLOURS),
    }
