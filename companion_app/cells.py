"""A board state's pieces as ``{cell: colour}``, parsed by the game's rules.

The live loop (a reader's board, each time the board holds still) and the photo review (the
state read and the state as corrected) both need a Blokus, Gemblo or Equilibrix state's
occupied cells; one parser here keeps them judging a board alike. Geometrius' field is
tokens with stacks, not cells of a colour, and has no entry.
"""
from __future__ import annotations

from typing import Any, Mapping

from rules import blokus, equilibrix, flower, gemblo
from rules.lattice import Cell

EMPTY = blokus.EMPTY  # a reader's "nothing here", in any game


def cells_of(game: str, state: Mapping[str, Any]) -> dict[Cell, str]:
    """The occupied cells of a state in the contract's form (``board`` rows, ``cells`` or
    ``fields``); ValueError naming what is wrong when it is not a board of the game.

    An Equilibrix field given as empty is no piece: the live loop hands this a reader's
    ``fields``, and a reader may list the fields it saw bare (tests/test_live.py). A state
    *file* knows no such field (``equilibrix.score_state`` refuses it), so the photo review,
    which judges a posted state as ``tableref score`` would, refuses it before asking here
    (review.board_cells). Any other value must be one of the game's colours.
    """
    if game == "blokus":
        return blokus.parse_board(state.get("board"))
    if game == "gemblo":
        return gemblo.parse_cells(state.get("cells"))
    if game == "equilibrix":
        fields = state.get("fields")
        if isinstance(fields, dict):
            fields = {k: v for k, v in fields.items() if v != EMPTY}
        equilibrix.parse_fields(fields)  # checks every field and colour
        return {flower.parse_field(k): v for k, v in fields.items()}
    raise ValueError(f"a {game} board is not cells of one colour each")
