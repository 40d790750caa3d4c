"""Export a refereed Blokus game as a Pentobi-readable SGF file (``.blksgf``).

Pentobi, the leading Blokus program, reads SGF with game names like ``GM[Blokus]`` and one
move property per colour: ``1``..``4`` for blue, yellow, red, green. A move value lists
its squares as column letter + row number, ``a1`` at the lower left, comma-separated.
"""
from __future__ import annotations

from .blokus import COLOURS, SIZE, Setup
from .lattice import Cell
from .placement import Match

GAME_NAMES = {
    "classic": "Blokus",
    "team": "Blokus",
    "two-player": "Blokus Two-Player",
    "three-player-shared": "Blokus Three-Player",
    "three-player-free": "Blokus Three-Player",
}


def point(cell: Cell) -> str:
    row, col = cell
    return f"{chr(ord('a') + col)}{SIZE - row}"


def _text(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def to_sgf(match: Match, setup: Setup, application: str = "tableref") -> str:
    """The game as SGF: every placement that was laid on the board, in order.

    Passes are not written (Pentobi infers them); a placement that could not be laid
    (off the board, overlapping) is left out, since no viewer could show it.
    """
    players = "".join(f"P{i + 1}[{_text(name)}]" for i, (name, _) in enumerate(setup.player_list))
    head = f"(;FF[4]CA[UTF-8]AP[{_text(application)}]GM[{GAME_NAMES[setup.variant]}]{players}"
    laid = {p.mask for p in match.position.placed}
    board = match.rules.board
    nodes = []
    for turn in match.turns:
        if turn.move.passed or not all(c in board.index for c in turn.move.cells):
            continue
        if board.mask(turn.move.cells) not in laid:
            continue
        prop = str(COLOURS.index(turn.move.colour) + 1)
        nodes.append(f";{prop}[{','.join(point(c) for c in turn.move.cells)}]")
    return head + "".join(nodes) + ")\n"
