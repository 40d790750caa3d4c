"""Piece sets: named shapes with every orientation precomputed, and recognition.

A piece set is pure data shared by the rules engine and the photo reader: the reader
recognises each region of one colour with :meth:`PieceSet.identify`, the engine checks a
placement the same way, so both agree on what counts as "a piece".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from .lattice import Cell, Lattice, Shape, canonical


@dataclass(frozen=True)
class Piece:
    id: str
    cells: tuple[Cell, ...]
    orientations: tuple[Shape, ...]

    @property
    def size(self) -> int:
        return len(self.cells)


@dataclass(frozen=True)
class PieceSet:
    lattice: Lattice
    pieces: tuple[Piece, ...]
    _by_form: Mapping[Shape, str] = field(repr=False, default_factory=dict)

    @classmethod
    def build(cls, lattice: Lattice, shapes: Mapping[str, Iterable[Cell]], flip: bool = True) -> "PieceSet":
        pieces = []
        by_form: dict[Shape, str] = {}
        for pid, cells in shapes.items():
            cells = tuple(tuple(c) for c in cells)
            orients = tuple(lattice.orientations(cells, flip))
            for form in orients:
                if form in by_form:
                    raise ValueError(f"pieces {by_form[form]} and {pid} have the same shape")
                by_form[form] = pid
            pieces.append(Piece(pid, cells, orients))
        return cls(lattice, tuple(pieces), by_form)

    def __getitem__(self, pid: str) -> Piece:
        return self.pieces[self.ids.index(pid)]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.pieces)

    @property
    def total_cells(self) -> int:
        return sum(p.size for p in self.pieces)

    def size(self, pid: str) -> int:
        return self[pid].size

    def identify(self, cells: Iterable[Cell]) -> str | None:
        """The id of the piece these cells form in any orientation, or ``None``."""
        cells = list(cells)
        if not cells:
            return None
        return self._by_form.get(canonical(cells))
