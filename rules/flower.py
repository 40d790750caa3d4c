"""The Flower-of-Life lattice of Equilibrix: nodes, fields, and their two adjacencies.

Nodes are the points of a triangular lattice, axial (q, s), Cartesian r·(q + s/2, s·√3/2).
Circles of radius r round every node cut the plane into two kinds of field:

- a *petal* (lens) per lattice edge, its tips at the edge's two nodes: cell ``(q, s, d)``,
  the edge from node (q, s) to (q, s) + DIRS[d];
- a *curved triangle* per lattice triangle, its tips at the three nodes: cell ``(q, s, 3)``
  for nodes (q,s), (q+1,s), (q,s+1) ("T q s +") and ``(q, s, 4)`` for (q+1,s), (q,s+1),
  (q+1,s+1) ("T q s -").

A field is known by its set of nodes, so turning the board is turning nodes. Fields that
share a curved side (a petal and a triangle on the same edge) are *edge* neighbours here;
fields that share a node are *contact* neighbours.
"""
from __future__ import annotations

import math
from functools import lru_cache

from .board import Board
from .lattice import Cell, Lattice

Node = tuple[int, int]
DIRS: tuple[Node, ...] = ((1, 0), (0, 1), (-1, 1))
RADIUS = 3  # the board: nodes with max(|q|, |s|, |q+s|) <= 3
PLUS, MINUS = 3, 4


def field_nodes(cell: Cell) -> frozenset[Node]:
    q, s, k = cell
    if k < 3:
        dq, ds = DIRS[k]
        return frozenset({(q, s), (q + dq, s + ds)})
    if k == PLUS:
        return frozenset({(q, s), (q + 1, s), (q, s + 1)})
    return frozenset({(q + 1, s), (q, s + 1), (q + 1, s + 1)})


def field_of(nodes: frozenset[Node]) -> Cell:
    """The field whose tips are exactly these nodes."""
    if len(nodes) == 2:
        a, b = sorted(nodes)
        for first, second in ((a, b), (b, a)):
            step = (second[0] - first[0], second[1] - first[1])
            if step in DIRS:
                return (first[0], first[1], DIRS.index(step))
    elif len(nodes) == 3:
        base = (min(n[0] for n in nodes), min(n[1] for n in nodes))
        for kind in (PLUS, MINUS):
            if field_nodes(base + (kind,)) == nodes:
                return base + (kind,)
    raise ValueError(f"no field has tips {sorted(nodes)}")


def _turn(node: Node) -> Node:
    q, s = node
    return (-s, q + s)  # 60 degrees: e1 -> e2, e2 -> e2 - e1


def _rotation(k: int):
    def rotate(cell: Cell) -> Cell:
        nodes = field_nodes(cell)
        for _ in range(k):
            nodes = frozenset(_turn(n) for n in nodes)
        return field_of(nodes)

    return rotate


def _reflect(cell: Cell) -> Cell:
    return field_of(frozenset((s, q) for q, s in field_nodes(cell)))


def _fields_near(cell: Cell) -> list[Cell]:
    """Every field sharing a node with ``cell`` (the fields round its tips)."""
    out = []
    for q, s in field_nodes(cell):
        out.extend(fields_at((q, s)))
    return [f for f in dict.fromkeys(out) if f != cell]


def _arc_neighbours(cell: Cell) -> tuple[Cell, ...]:
    mine = field_nodes(cell)
    # A petal and a triangle share a curved side exactly when the petal's edge is the triangle's.
    return tuple(f for f in _fields_near(cell)
                 if len(field_nodes(f)) != len(mine) and len(field_nodes(f) & mine) == 2)


def fields_at(node: Node) -> list[Cell]:
    """The 12 fields round a node on the infinite lattice, alternating petal / triangle."""
    q, s = node
    petals = [(q, s, 0), (q, s, 1), (q, s, 2), (q - 1, s, 0), (q, s - 1, 1), (q + 1, s - 1, 2)]
    triangles = [(q, s, PLUS), (q - 1, s, PLUS), (q, s - 1, PLUS),
                 (q - 1, s, MINUS), (q, s - 1, MINUS), (q - 1, s - 1, MINUS)]
    return petals + triangles


FLOWER = Lattice(
    name="flower",
    edge=_arc_neighbours,
    contact=lambda c: tuple(_fields_near(c)),
    rotations=tuple(_rotation(k) for k in range(6)),
    reflection=_reflect,
)


def on_board(node: Node) -> bool:
    q, s = node
    return max(abs(q), abs(s), abs(q + s)) <= RADIUS


NODES: tuple[Node, ...] = tuple((q, s) for q in range(-RADIUS, RADIUS + 1)
                                for s in range(-RADIUS, RADIUS + 1) if on_board((q, s)))


@lru_cache(maxsize=None)
def board() -> Board:
    fields = {f for n in NODES for f in fields_at(n) if all(on_board(m) for m in field_nodes(f))}
    return Board.build(FLOWER, fields)


def field_id(cell: Cell) -> str:
    q, s, k = cell
    return f"P {q} {s} {k}" if k < 3 else f"T {q} {s} {'+' if k == PLUS else '-'}"


def parse_field(text: str) -> Cell:
    """``"P q s d"`` or ``"T q s +"``/``"T q s -"`` (the contract's field ids)."""
    parts = str(text).split()
    try:
        kind, q, s, tail = parts
        q, s = int(q), int(s)
        if kind == "P" and tail in ("0", "1", "2"):
            return (q, s, int(tail))
        if kind == "T" and tail in ("+", "-"):
            return (q, s, PLUS if tail == "+" else MINUS)
    except ValueError:
        pass
    raise ValueError(f"{text!r} is not a field id ('P q s d' or 'T q s +/-')")


def centroid(cell: Cell, r: float = 1.0) -> tuple[float, float]:
    """The field's centroid in board units (y down), where the camera samples its colour."""
    nodes = field_nodes(cell)
    x = sum(q + s / 2 for q, s in nodes) / len(nodes)
    y = sum(s * math.sqrt(3) / 2 for _, s in nodes) / len(nodes)
    return r * x, r * y
