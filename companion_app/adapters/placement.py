"""Blokus and Gemblo: the games of the shared placement engine (:mod:`rules.placement`).

A colour with no legal placement passes, which the board decides, so those passes are not
logged: they are re-derived after every change and can never go stale.
"""
from __future__ import annotations

from typing import Any, Sequence

from rules.board import Board
from rules.lattice import Cell
from rules.observe import as_cell, in_play_order, laid_cells, occupied, observe as explain_board, passes_due, take_back
from rules.placement import Match, Move
from rules.records import record_json

from ..layout import layout_json
from .base import Derived, Entry
from .cells import CellAdapter, Laid, Piece


class PlacementAdapter(CellAdapter):
    pieces_apart = True

    def __init__(self, setup: Any, game: str):
        self.game = game
        super().__init__(setup)
        self.colours = self.module.COLOURS
        self.fresh: Match = self.module.new_match(setup)

    @property
    def board(self) -> Board:
        return self.fresh.rules.board

    def parse_cell(self, value: Any) -> Cell:
        return as_cell(value)

    def occupied(self, board: Any) -> dict[Cell, str]:
        """``{cell: colour}``, or Blokus' 20 rows as the camera reads them."""
        return occupied(board)

    def laid(self, game: Match) -> dict[Cell, str]:
        return laid_cells(game)

    def move_of(self, kind: str, payload: dict) -> Laid | None:
        if kind == "move":
            return Laid(payload["colour"], tuple(tuple(c) for c in payload["cells"]))
        if kind == "pass":
            return Laid(payload["colour"], passed=True)
        return None

    def explain(self, derived: Derived, seen: dict[Cell, str]) -> tuple[int, list[dict]] | None:
        seen_moves = explain_board(derived.game, seen)
        if seen_moves.unexplained_cells:
            return None
        pieces = [(m.colour, m.cells) for m in seen_moves.moves]
        if seen_moves.taken_back:  # pieces logged again keep their logged places (in_play_order)
            free = self.free_colours
            pieces = self.in_play_order(derived, seen_moves.taken_back, [p for p in pieces if p[0] not in free],
                                        [p for p in pieces if p[0] in free])
        return seen_moves.taken_back, [{"colour": colour, "cells": [list(c) for c in cells]}
                                       for colour, cells in pieces]

    def new_in_play_order(self, derived: Derived, count: int, before: Sequence[Laid],
                          new: Sequence[Piece]) -> list[Piece]:
        """The order that breaks the fewest rules (:func:`rules.observe.in_play_order`), played
        after the match less its last ``count`` placements and then ``before``."""
        match = take_back(derived.game, count)
        for m in before:
            match = match.play(Move(m.colour, passed=True) if m.passed else Move(m.colour, m.cells))
        return [(m.colour, m.cells) for m in in_play_order(match, new)]

    def turn_details(self, turn: Any) -> dict:
        """An obstacle (a piece of a colour that takes no turns: Gemblo's five-player rim, Blokus'
        freely laid neutral) is the table's, not a player's move: the page lists it unnumbered."""
        return {"obstacle": True} if turn.move.colour in self.free_colours else {}

    @property
    def free_colours(self) -> frozenset[str]:
        """Gemblo's five-player obstacle colour, Blokus V4's freely laid neutral."""
        return self.fresh.rules.unchecked

    def view(self, derived: Derived) -> dict:
        """Adds ``holding_joined``: of the cells held back, obstacle pieces laid touching along an
        edge where bridges can be blocked (:attr:`rules.observe.Observed.joined_cells`). No tap
        can say which pieces lie there; the page asks the table to lay them apart."""
        doc = super().view(derived)
        joined: tuple[Cell, ...] = ()
        if doc["holding"] and not doc["holding_doubts"]:
            seen = self.with_overrides(self.camera_board, self.uncertain, self.camera_t)
            joined = explain_board(derived.game, seen).joined_cells
        doc["holding_joined"] = [self.cell_json(c) for c in joined]
        return doc

    def play(self, entries: Sequence[Entry], before: Derived | None = None,
             added: Sequence[Entry] = ()) -> Derived:
        """Play the entries, with the passes the board makes due in between and at the end
        (so the page says "Yellow passes" as soon as Yellow is stuck)."""
        match, sources = before.core if before is not None else (self.fresh, ())
        sources = list(sources)
        for entry in (added if before is not None else entries):
            move = Move(entry.move.colour, passed=True) if entry.move.passed else Move(entry.move.colour,
                                                                                      entry.move.cells)
            for colour in passes_due(match):
                if colour == move.colour:
                    break
                match = match.play(Move(colour, passed=True))
                sources.append(None)
            match = match.play(move)
            sources.append(entry.event_id)
        core = (match, tuple(sources))
        for colour in passes_due(match):
            match = match.play(Move(colour, passed=True))
            sources.append(None)
        return Derived(match, tuple(sources), tuple(entries) + tuple(added), core)

    def layout(self, derived: Derived) -> dict:
        return layout_json(self.fresh.rules, self.colours)

    def record(self, derived: Derived) -> dict:
        return record_json(derived.game, self.setup)
