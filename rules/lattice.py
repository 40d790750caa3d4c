"""Lattices: the cell geometry every game is played on.

A lattice says which cells touch which and how shapes turn over. Cells are tuples of
ints whose first two entries are lattice coordinates (translation acts on those only),
so the same shape code serves the square cells of Blokus (row, col), the axial hex cells
of Gemblo (q, r) and, with a trailing label, the fields of the Flower of Life.

A shape's *canonical form* is its cell set translated so that its smallest cell sits at
the origin; two placements are the same shape in the same orientation exactly when
their canonical forms are equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

Cell = tuple[int, ...]
Shape = frozenset  # frozenset[Cell], canonical (translated to the origin)
Transform = Callable[[Cell], Cell]


def canonical(cells: Iterable[Cell]) -> Shape:
    """Translate ``cells`` so that the smallest one (lexicographic) is at the origin."""
    cells = list(cells)
    a0, b0 = min(cells)[:2]
    return frozenset((c[0] - a0, c[1] - b0) + tuple(c[2:]) for c in cells)


def translate(cells: Iterable[Cell], da: int, db: int) -> tuple[Cell, ...]:
    return tuple((c[0] + da, c[1] + db) + tuple(c[2:]) for c in cells)


@dataclass(frozen=True)
class Lattice:
    """The local geometry of a cell lattice.

    ``edge`` gives the cells that share a side with a cell (Blokus squares, Gemblo hexes,
    Flower-of-Life fields sharing an arc); ``contact`` the cells a game counts as touching
    "at a corner" (Blokus' diagonals, Gemblo's bridges, fields sharing a node).
    ``rotations`` and ``reflection`` are the point symmetries a piece may be turned by.
    """

    name: str
    edge: Callable[[Cell], tuple[Cell, ...]]
    contact: Callable[[Cell], tuple[Cell, ...]]
    rotations: tuple[Transform, ...]
    reflection: Transform

    def orientations(self, cells: Iterable[Cell], flip: bool = True) -> list[Shape]:
        """Every distinct canonical orientation of a shape, in a fixed order."""
        cells = tuple(cells)
        images = [cells]
        if flip:
            images.append(tuple(self.reflection(c) for c in cells))
        seen: dict[Shape, None] = {}
        for image in images:
            for rotate in self.rotations:
                seen.setdefault(canonical(rotate(c) for c in image), None)
        return list(seen)

    def fixed_form(self, cells: Iterable[Cell], flip: bool = True) -> Shape:
        """One representative of the shape's class under rotation (and reflection).

        Used to recognise a piece from its cells whatever way it lies.
        """
        return min(self.orientations(cells, flip), key=lambda s: sorted(s))


def _square_rotations() -> tuple[Transform, ...]:
    return (
        lambda c: (c[0], c[1]),
        lambda c: (c[1], -c[0]),
        lambda c: (-c[0], -c[1]),
        lambda c: (-c[1], c[0]),
    )


def offsets(steps: tuple[Cell, ...]) -> Callable[[Cell], tuple[Cell, ...]]:
    """Neighbours of a cell reached by fixed steps (lattices whose cells are all alike)."""
    return lambda c: tuple((c[0] + a, c[1] + b) for a, b in steps)


SQUARE = Lattice(
    name="square",
    edge=offsets(((-1, 0), (1, 0), (0, -1), (0, 1))),
    contact=offsets(((-1, -1), (-1, 1), (1, -1), (1, 1))),
    rotations=_square_rotations(),
    reflection=lambda c: (c[0], -c[1]),
)


def _hex_rotations() -> tuple[Transform, ...]:
    # Axial (q, r) with s = -q - r: a 60 degree turn maps (q, r, s) -> (-r, -s, -q).
    def turn(c: Cell, k: int) -> Cell:
        q, r = c[0], c[1]
        for _ in range(k):
            q, r = -r, q + r
        return (q, r)

    return tuple((lambda c, k=k: turn(c, k)) for k in range(6))


HEX = Lattice(
    name="hex",
    edge=offsets(((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))),
    contact=offsets(((1, 1), (-1, 2), (-2, 1), (-1, -1), (1, -2), (2, -1))),
    rotations=_hex_rotations(),
    reflection=lambda c: (c[1], c[0]),
)
