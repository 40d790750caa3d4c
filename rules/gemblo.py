"""Gemblo as the referee applies it (``shared/rules/gemblo.md``): M1-M7, S1-S3, 2-6 players.

The hexagonal board, zones and starts are data; the placement rules are the shared
engine's, with Gemblo's bridge as the contact relation and M6's blocking switched on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

from .board import Board
from .lattice import HEX, Cell
from .pieces import PieceSet
from .placement import Decomposition, Match, PlacementRules, Position, Reason, shared_start, start_taken
from .placement import decompose as placement_decompose
from .scoring import ColourScore, Flag, ScoreSheet, Tiebreak, rank_players

COLOURS = ("C", "R", "Y", "G", "B", "P")
COLOUR_NAMES = {"C": "Clear", "R": "Red", "Y": "Yellow", "G": "Green", "B": "Blue", "P": "Purple"}
VARIANTS = ("6p", "5p", "4p", "3p", "2p", "2p-double")
CORNERS: tuple[Cell, ...] = ((7, 7), (-7, 14), (-14, 7), (-7, -7), (7, -14), (14, -7))
FOUR_STARTS: tuple[Cell, ...] = ((-3, -9), (12, -9), (3, 9), (-12, 9))
FOUR_STARTS_ROTATED: tuple[Cell, ...] = ((9, 3), (-9, 12), (-9, -3), (9, -12))
THREE_STARTS: tuple[Cell, ...] = ((5, 5), (-10, 5), (5, -10))

SHAPES: Mapping[str, tuple[Cell, ...]] = {
    "P01": ((0, 0),),
    "P02": ((0, 0), (0, 1)),
    "P03": ((0, 0), (0, 1), (1, 0)),
    "P04": ((0, 0), (0, 1), (1, 1)),
    "P05": ((0, 0), (0, 1), (0, 2)),
    "P06": ((0, 0), (0, 1), (1, 1), (1, 2)),
    "P07": ((0, 0), (0, 1), (1, 0), (1, 1)),
    "P08": ((0, 1), (1, 1), (1, 2), (2, 0)),
    "P09": ((0, 0), (0, 1), (1, 1), (2, 0)),
    "P10": ((0, 0), (0, 1), (0, 2), (0, 3)),
    "P11": ((0, 0), (0, 1), (0, 2), (1, 0), (2, 0)),
    "P12": ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2)),
    "P13": ((0, 0), (0, 1), (1, 1), (1, 2), (2, 2)),
    "P14": ((0, 1), (1, 1), (1, 2), (1, 3), (2, 0)),
    "P15": ((0, 0), (0, 1), (1, 1), (1, 2), (2, 0)),
    "P16": ((0, 0), (0, 1), (0, 2), (1, 2), (1, 3)),
    "P17": ((0, 0), (0, 1), (1, 1), (2, 1), (2, 2)),
    "P18": ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)),
}
DEFAULT_COSTS: Mapping[str, int] = {pid: k + 1 for k, pid in enumerate(SHAPES)}

REASONS: Mapping[str, Reason] = {
    "off_board": Reason("off_board", "M1", "a cell lies off the board"),
    "outside_zone": Reason("outside_zone", "M1", "a cell lies outside the zone in play"),
    "overlap": Reason("overlap", "M1", "a cell is already covered"),
    "not_a_piece": Reason("not_a_piece", "M2", "these cells are not one of the 18 pieces"),
    "piece_already_used": Reason("piece_already_used", "M2", "piece {piece} of this colour is already on the board"),
    "first": Reason("first_not_on_start", "M3", "a colour's first piece must cover its start cell"),
    "edge_contact": Reason("edge_contact_same_colour", "M4", "the piece shares an edge with its own colour"),
    "connect": Reason("no_connection", "M5", "no bridge joins the piece to its own colour"),
    "blocked": Reason("connection_blocked", "M6", "every bridge to its own colour runs through a piece"),
    "wrong_turn": Reason("wrong_turn", "M7", "{colour} placed out of turn: it was {expected}'s turn"),
    "illegal_pass": Reason("illegal_pass", "M7", "{colour} passed while it still had a legal placement"),
}


def row2(cell: Cell) -> int:
    return cell[0] + 2 * cell[1]


def on_board(cell: Cell) -> bool:
    return abs(row2(cell)) <= 21 and 3 * abs(cell[0]) + abs(row2(cell)) <= 42


@lru_cache(maxsize=None)
def board() -> Board:
    return Board.build(HEX, (c for q in range(-14, 15) for r in range(-21, 22) if on_board(c := (q, r))))


@lru_cache(maxsize=None)
def pieces() -> PieceSet:
    return PieceSet.build(HEX, SHAPES)


def zone_cells(variant: str, rotated_4p: bool = False) -> list[Cell]:
    """The active cells for a player count (the 4-player zone may be the 60 degree turned one)."""
    cells = board().cells
    if variant in ("6p", "5p"):
        return list(cells)
    if variant == "3p":
        return [c for c in cells if abs(row2(c)) <= 15 and 3 * abs(c[0]) + abs(row2(c)) <= 30]
    if rotated_4p:
        return [c for c in cells if abs(c[0]) <= 9 and abs(row2(c)) <= 15]
    return [c for c in cells if abs(c[1]) <= 9 and abs(2 * c[0] + c[1]) <= 15]


@lru_cache(maxsize=None)
def zone_set(variant: str, rotated_4p: bool = False) -> frozenset[Cell]:
    """:func:`zone_cells` as a set, to ask of one cell whether it is in play."""
    return frozenset(zone_cells(variant, rotated_4p))


def screen(cell: Cell) -> tuple[float, float]:
    """Cell centre in units of the circumradius, y pointing down."""
    return 1.5 * cell[0], math.sqrt(3) / 2 * row2(cell)


def five_player_starts() -> tuple[Cell, ...]:
    """Default 5-player starts: the cells next to the rim (not on it) nearest five evenly
    spaced directions, clockwise from the top. No official layout exists: a setting."""
    b = board()
    rim = {c for c in b.cells if bin(b.edge[b.index[c]]).count("1") < 6}
    ring = [c for c in b.cells if c not in rim and any(n in rim for n in b.cells_of(b.edge[b.index[c]]))]
    starts = []
    for k in range(5):
        angle = -math.pi / 2 + k * 2 * math.pi / 5  # y down: increasing angle runs clockwise
        direction = (math.cos(angle), math.sin(angle))
        starts.append(max(ring, key=lambda c: screen(c)[0] * direction[0] + screen(c)[1] * direction[1]))
    return tuple(starts)


def default_starts(variant: str, rotated_4p: bool = False) -> tuple[Cell, ...]:
    if variant == "6p":
        return CORNERS
    if variant == "5p":
        return five_player_starts()
    if variant == "3p":
        return THREE_STARTS
    four = FOUR_STARTS_ROTATED if rotated_4p else FOUR_STARTS
    return (four[0], four[2]) if variant == "2p" else four


COLOURS_IN_PLAY = {"6p": 6, "5p": 5, "4p": 4, "3p": 3, "2p": 2, "2p-double": 4}


@dataclass(frozen=True)
class Setup:
    """The table's choices: player count variant, players and colours, starts, settings."""

    variant: str = "6p"
    players: tuple[tuple[str, tuple[str, ...]], ...] = ()
    starts: Mapping[str, Cell] = field(default_factory=dict)  # pinned start per colour
    rotated_4p: bool = False
    five_player_starts: tuple[Cell, ...] | None = None
    costs: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_COSTS))

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown Gemblo variant {self.variant!r} (one of {', '.join(VARIANTS)})")
        seatless = [n for n, cs in self.player_list if not cs]
        if seatless:  # with nothing to lose it would score 0 and win
            raise ValueError(f"player {seatless[0]} holds no colour")
        colours = [c for _, cs in self.player_list for c in cs]
        if len(set(colours)) != len(colours) or not set(colours) <= set(COLOURS):
            raise ValueError("players' colours must be distinct Gemblo colours (C R Y G B P)")
        if len(colours) != COLOURS_IN_PLAY[self.variant]:
            raise ValueError(f"{self.variant} is played with {COLOURS_IN_PLAY[self.variant]} colours, "
                             f"the players hold {len(colours)}")
        if self.variant == "2p-double" and any(len(cs) != 2 for _, cs in self.player_list):
            raise ValueError("2p-double: each player holds two colours")
        for colour, cell in self.starts.items():
            if colour not in COLOURS or not on_board(tuple(cell)):
                raise ValueError(f"start {colour}: {list(cell)} is not a colour and a board cell")
            if colour not in self.turn_order:  # a slip for another colour, not a start to drop
                raise ValueError(f"start {colour}: {COLOUR_NAMES[colour]} does not play in {self.variant} "
                                 f"(playing: {' '.join(self.turn_order)})")
            if tuple(cell) not in zone_set(self.variant, self.rotated_4p):  # M3 could never be met
                raise ValueError(f"start {colour}: {list(cell)} lies outside the {self.variant} playing area")
        if shared := shared_start(self.starts):
            raise ValueError("starts {} and {} are both pinned to {}: a start cell takes one colour's "
                             "first piece (M3)".format(*shared))
        for cell in self.five_player_starts or ():
            if not on_board(tuple(cell)):
                raise ValueError(f"five-player start {list(cell)} is not a board cell")
        if shared := shared_start({str(i + 1): cell for i, cell in enumerate(self.five_player_starts or ())}):
            raise ValueError("five-player starts {} and {} are both {}: each colour needs a start of its own "
                             "(M3)".format(*shared))
        if taken := start_taken(self.starts, self.start_cells):
            raise ValueError("start {0}: {2} is {1}'s start in {3}; pin {1} elsewhere too (a start cell takes "
                             "one colour's first piece, M3)".format(*taken, self.variant))
        if set(self.costs) != set(SHAPES):
            raise ValueError("the cost table must give a cost for each of P01..P18")
        odd = [pid for pid, cost in self.costs.items() if type(cost) not in (int, float) or not math.isfinite(cost)]
        if odd:  # S3 sums them; JSON true would count as 1
            raise ValueError(f"the cost table must give a number for each piece, not for {', '.join(sorted(odd))}")

    def settings_json(self) -> dict:
        """The settings that differ from the rules file's defaults, as a record stores them."""
        out: dict = {}
        if self.rotated_4p:
            out["rotated_4p"] = True
        if self.five_player_starts:
            out["five_player_starts"] = [list(c) for c in self.five_player_starts]
        if dict(self.costs) != dict(DEFAULT_COSTS):
            out["costs"] = dict(self.costs)
        return out

    @property
    def player_list(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if self.players:
            return self.players
        colours = COLOURS[:COLOURS_IN_PLAY[self.variant]]
        if self.variant == "2p-double":
            return (("Player 1", (colours[0], colours[2])), ("Player 2", (colours[1], colours[3])))
        return tuple((COLOUR_NAMES[c], (c,)) for c in colours)

    @property
    def turn_order(self) -> tuple[str, ...]:
        """Clockwise round the table: every player's first colour, then every second colour."""
        rounds = max(len(cs) for _, cs in self.player_list)
        return tuple(cs[j] for j in range(rounds) for _, cs in self.player_list if j < len(cs))

    @property
    def start_cells(self) -> dict[str, Cell]:
        """Each playing colour's start: the one pinned, else the variant's default in turn order."""
        defaults = self.five_player_starts if self.variant == "5p" and self.five_player_starts else \
            default_starts(self.variant, self.rotated_4p)
        return {c: tuple(self.starts.get(c, defaults[i % len(defaults)])) for i, c in enumerate(self.turn_order)}

    @property
    def obstacle_colour(self) -> str | None:
        """5 players: the unused colour's pieces lie round the rim as obstacles."""
        if self.variant != "5p":
            return None
        return next(c for c in COLOURS if c not in self.turn_order)


def rules(setup: Setup = Setup()) -> PlacementRules:
    b = board()
    start_masks = {c: b.mask([cell]) for c, cell in setup.start_cells.items()}
    colours = setup.turn_order + ((setup.obstacle_colour,) if setup.obstacle_colour else ())
    if setup.obstacle_colour:
        start_masks[setup.obstacle_colour] = 0
    return _rules(colours, tuple(sorted(start_masks.items())), b.mask(zone_cells(setup.variant, setup.rotated_4p)),
                  frozenset({setup.obstacle_colour}) if setup.obstacle_colour else frozenset())


@lru_cache(maxsize=None)
def _rules(colours: tuple[str, ...], starts: tuple[tuple[str, int], ...], zone: int,
           unchecked: frozenset[str]) -> PlacementRules:
    return PlacementRules(game="gemblo", board=board(), zone=zone, pieces=pieces(), colours=colours,
                          starts=dict(starts), reasons=REASONS, names=COLOUR_NAMES, blockable=True, unchecked=unchecked)


def new_match(setup: Setup = Setup()) -> Match:
    return Match(rules(setup))


# --- states: {"q,r": colour} -------------------------------------------------------------

def parse_cells(cells: Mapping[str, str]) -> dict[Cell, str]:
    if not isinstance(cells, dict):
        raise ValueError("a Gemblo state needs 'cells': {\"q,r\": colour}")
    out, named = {}, {}
    for key, colour in cells.items():
        try:
            q, r = (int(x) for x in str(key).split(","))
        except ValueError:
            raise ValueError(f"cell {key!r} is not 'q,r'") from None
        if not on_board((q, r)):
            raise ValueError(f"cell {key} lies off the 463-cell board")
        if colour not in COLOURS:
            raise ValueError(f"unknown colour letter {colour!r} at {key} (use C R Y G B P)")
        if (q, r) in named:  # "0,0" and "0, 0": which colour is there would be a guess
            raise ValueError(f"cells {named[(q, r)]!r} and {key!r} are one cell")
        out[(q, r)], named[(q, r)] = colour, key
    return out


def cells_json(pos: Position) -> dict[str, str]:
    b = board()
    return {f"{q},{r}": p.colour for p in pos.placed for q, r in b.cells_of(p.mask)}


def state_rules(setup: Setup = Setup()) -> PlacementRules:
    """The rules a board state is judged by, rather than a game in progress.

    A state carries no seating and, read from a photo, no absolute turn: whichever side of the
    board lay nearest the photo's top becomes "up". So a colour the setup does not pin may have
    started on any of the variant's start cells turned by any multiple of 60 degrees (as a
    Blokus state allows any free corner); a pinned start is kept as given.
    """
    r = rules(setup)
    return _state_rules(r.colours, tuple(sorted(r.starts.items())), r.zone, r.unchecked, frozenset(setup.starts))


@lru_cache(maxsize=None)
def _state_rules(colours: tuple[str, ...], starts: tuple[tuple[str, int], ...], zone: int,
                 unchecked: frozenset[str], pinned: frozenset[str]) -> PlacementRules:
    b = board()
    anywhere = b.mask({turn(cell) for c, m in starts if c not in pinned for cell in b.cells_of(m)
                       for turn in HEX.rotations})
    return _rules(colours, tuple((c, m if c in pinned or not m else anywhere) for c, m in starts), zone, unchecked)


def decompose(cells: Mapping[str, str], setup: Setup = Setup()) -> Decomposition:
    """Each edge-connected region of one colour is one piece (M4); see :func:`placement.decompose`.
    Starts are those of a state (:func:`state_rules`)."""
    parsed = parse_cells(cells)
    r = state_rules(setup)
    stray = sorted({c for c in parsed.values() if c not in r.colours})
    if stray:
        raise ValueError(f"colour(s) {' '.join(stray)} are not in play in {setup.variant}")
    return placement_decompose(r, parsed, COLOUR_NAMES)


# --- scoring ---------------------------------------------------------------------------------

def score(pos: Position, setup: Setup = Setup(), flags: Sequence[Flag] = ()) -> ScoreSheet:
    """S1 penalty = cells of unplaced pieces (fewest wins); S2 the bigger largest remaining
    piece loses; S3 the lower sum of remaining costs wins. Two colours per player are summed."""
    ps = pieces()
    colour_scores = {}
    for colour in setup.turn_order:
        used = pos.used.get(colour, frozenset())
        remaining = tuple(p for p in ps.ids if p not in used)
        penalty = sum(ps.size(p) for p in remaining)
        colour_scores[colour] = ColourScore(colour, -penalty, penalty, 0, remaining)
    tiebreaks = (
        Tiebreak("S2", "the bigger largest remaining piece loses",
                 lambda parts: -max((ps.size(p) for c in parts for p in c.remaining), default=0)),
        Tiebreak("S3", "the lower cost of remaining pieces wins",
                 lambda parts: -sum(setup.costs[p] for c in parts for p in c.remaining)),
    )
    return rank_players(setup.player_list, colour_scores, flags, (), tiebreaks)


def score_match(match: Match, setup: Setup) -> ScoreSheet:
    return score(match.position, setup)


def score_state(state: Mapping, setup: Setup, last_piece: Mapping[str, str] | None = None) -> ScoreSheet:
    """Scores of a board state document (``{"game": "gemblo", "cells": {...}}``)."""
    d = decompose(state.get("cells"), setup)
    return score(d.position, setup, d.flags)
