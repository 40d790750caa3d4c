"""A finite board on a lattice, with cells numbered so that cell sets are bit masks.

Placement games check and enumerate thousands of placements per turn; a Python int used
as a bit set makes "does this piece overlap / touch that colour" one ``&`` instead of a
loop, for any lattice and any board shape.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from .lattice import Cell, Lattice


def bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@dataclass(frozen=True)
class Contact:
    """A cell that counts as touching another "at a corner", and the two cells between.

    ``between`` holds the two common edge neighbours (``-1`` when off the board); Gemblo's
    bridge rule looks at them, Blokus' corner rule does not.
    """

    cell: int
    between: tuple[int, int]


@dataclass(frozen=True)
class Board:
    lattice: Lattice
    cells: tuple[Cell, ...]
    index: dict[Cell, int]
    edge: tuple[int, ...]  # per cell: mask of its edge neighbours
    contact: tuple[tuple[Contact, ...], ...]  # per cell: its contact neighbours
    contact_mask: tuple[int, ...]

    @classmethod
    def build(cls, lattice: Lattice, cells: Iterable[Cell]) -> "Board":
        cells = tuple(sorted(tuple(c) for c in cells))
        index = {c: i for i, c in enumerate(cells)}

        edge, contact, contact_mask = [], [], []
        for c in cells:
            near_c = set(lattice.edge(c))
            edge.append(sum(1 << index[n] for n in near_c if n in index))
            touching = []
            for other in lattice.contact(c):
                if other not in index:
                    continue
                # The cells between c and other: their common edge neighbours.
                between = sorted(near_c & set(lattice.edge(other)))
                pair = tuple(index.get(b, -1) for b in between)
                touching.append(Contact(index[other], (pair + (-1, -1))[:2]))
            contact.append(tuple(touching))
            contact_mask.append(sum(1 << t.cell for t in touching))
        return cls(lattice, cells, index, tuple(edge), tuple(contact), tuple(contact_mask))

    @property
    def full(self) -> int:
        return (1 << len(self.cells)) - 1

    def mask(self, cells: Iterable[Cell]) -> int:
        m = 0
        for c in cells:
            m |= 1 << self.index[c]
        return m

    def cells_of(self, mask: int) -> list[Cell]:
        return [self.cells[i] for i in bits(mask)]

    def grow(self, mask: int, relation: tuple[int, ...]) -> int:
        """Union of ``relation`` (``edge`` or ``contact_mask``) over the cells of ``mask``."""
        out = 0
        for i in bits(mask):
            out |= relation[i]
        return out

    def around(self, cells: Iterable[Cell]) -> set[Cell]:
        """The cells on the board among ``cells`` and every cell touching one of them, along an
        edge or at a corner (Gemblo: across a bridge): where a change beside a cell can lie."""
        mask = self.mask(c for c in cells if c in self.index)
        return set(self.cells_of(mask | self.grow(mask, self.edge) | self.grow(mask, self.contact_mask)))

    def components(self, mask: int, relation: tuple[int, ...] | None = None) -> list[int]:
        """Connected parts of a cell set, each as a mask, in cell order: through ``relation``
        (``edge``, the default, or ``contact_mask``)."""
        relation = self.edge if relation is None else relation
        parts = []
        while mask:
            seed = mask & -mask
            part, frontier = seed, seed
            while frontier:
                frontier = self.grow(frontier, relation) & mask & ~part
                part |= frontier
            parts.append(part)
            mask &= ~part
        return parts
