"""Blokus Classic as the referee applies it (``shared/rules/blokus.md``): B1-B8, S1-S3, V1-V4."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

from .board import Board
from .lattice import SQUARE, Cell
from .pieces import PieceSet
from .placement import Decomposition, Match, PlacementRules, Position, Reason, shared_start, start_taken
from .placement import decompose as placement_decompose
from .scoring import ColourScore, Flag, ScoreSheet, Undecided, rank_players

SIZE = 20
COLOURS = ("B", "Y", "R", "G")
COLOUR_NAMES = {"B": "Blue", "Y": "Yellow", "R": "Red", "G": "Green"}
EMPTY = "."
CORNERS: tuple[Cell, ...] = ((0, 0), (0, SIZE - 1), (SIZE - 1, 0), (SIZE - 1, SIZE - 1))
FIXED_CORNERS: Mapping[str, Cell] = {"B": (0, 0), "Y": (0, SIZE - 1), "R": (SIZE - 1, SIZE - 1), "G": (SIZE - 1, 0)}
VARIANTS = ("classic", "team", "two-player", "three-player-shared", "three-player-free")

SHAPES: Mapping[str, tuple[Cell, ...]] = {
    "1": ((0, 0),),
    "2": ((0, 0), (0, 1)),
    "I3": ((0, 0), (0, 1), (0, 2)),
    "V3": ((0, 0), (1, 0), (1, 1)),
    "I4": ((0, 0), (0, 1), (0, 2), (0, 3)),
    "L4": ((0, 0), (1, 0), (2, 0), (2, 1)),
    "T4": ((0, 0), (0, 1), (0, 2), (1, 1)),
    "O4": ((0, 0), (0, 1), (1, 0), (1, 1)),
    "Z4": ((0, 0), (0, 1), (1, 1), (1, 2)),
    "F": ((0, 1), (0, 2), (1, 0), (1, 1), (2, 1)),
    "I5": ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)),
    "L5": ((0, 0), (1, 0), (2, 0), (3, 0), (3, 1)),
    "N": ((0, 0), (1, 0), (2, 0), (2, 1), (3, 1)),
    "P": ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0)),
    "T5": ((0, 0), (0, 1), (0, 2), (1, 1), (2, 1)),
    "U": ((0, 0), (0, 2), (1, 0), (1, 1), (1, 2)),
    "V5": ((0, 0), (1, 0), (2, 0), (2, 1), (2, 2)),
    "W": ((0, 0), (1, 0), (1, 1), (2, 1), (2, 2)),
    "X": ((0, 1), (1, 0), (1, 1), (1, 2), (2, 1)),
    "Y": ((0, 1), (1, 0), (1, 1), (2, 1), (3, 1)),
    "Z5": ((0, 0), (0, 1), (1, 1), (2, 1), (2, 2)),
}
MONOMINO = "1"

REASONS: Mapping[str, Reason] = {
    "off_board": Reason("off_board", "B1", "a square lies off the board"),
    "outside_zone": Reason("off_board", "B1", "a square lies off the board"),
    "overlap": Reason("overlap", "B1", "a square covers one already taken"),
    "not_a_piece": Reason("not_a_piece", "B2", "these squares are not one of the 21 pieces"),
    "piece_already_used": Reason("piece_already_used", "B2", "piece {piece} of this colour is already on the board"),
    "first": Reason("first_not_in_corner", "B3", "a colour's first piece must cover a free board corner"),
    "edge_contact": Reason("edge_contact_same_colour", "B5", "the piece shares an edge with its own colour"),
    "connect": Reason("no_corner_contact", "B4", "the piece does not touch its own colour corner to corner"),
    "blocked": Reason("no_corner_contact", "B4", "the piece does not touch its own colour corner to corner"),
    "wrong_turn": Reason("wrong_turn", "B7", "{colour} placed out of turn: it was {expected}'s turn"),
    "illegal_pass": Reason("illegal_pass", "B7", "{colour} passed while it still had a legal placement"),
}


@lru_cache(maxsize=None)
def board(size: int = SIZE) -> Board:
    return Board.build(SQUARE, ((r, c) for r in range(size) for c in range(size)))


@lru_cache(maxsize=None)
def pieces() -> PieceSet:
    return PieceSet.build(SQUARE, SHAPES)


@dataclass(frozen=True)
class Setup:
    """Everything a table decides before play: variant, players, corners, neutral colour."""

    variant: str = "classic"
    players: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, colours); default per variant
    fixed_corners: bool = False
    starts: Mapping[str, Cell] = field(default_factory=dict)  # pinned start corner per colour
    neutral: str = "G"  # the unscored colour of the three-player variants

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown Blokus variant {self.variant!r} (one of {', '.join(VARIANTS)})")
        if self.neutral not in COLOURS:
            raise ValueError(f"unknown neutral colour {self.neutral!r}")
        for colour, corner in self.starts.items():
            if colour not in COLOURS or tuple(corner) not in CORNERS:
                raise ValueError(f"start {colour}: {list(corner)} is not a colour and a board corner")
        if shared := shared_start(self.starts):
            raise ValueError("starts {} and {} are both pinned to corner {}: a corner takes one colour's "
                             "first piece (B3)".format(*shared))
        fixed = {c: tuple(self.starts.get(c, FIXED_CORNERS[c])) for c in COLOURS}
        if self.fixed_corners and (taken := start_taken(self.starts, fixed)):
            raise ValueError("start {}: {} is {}'s corner when corners are fixed; pin {} elsewhere too (a corner "
                             "takes one colour's first piece, B3)".format(taken[0], taken[2], taken[1], taken[1]))
        if self.players:
            seatless = [n for n, cs in self.players if not cs]
            if seatless:  # with nothing to lose it would score 0 and win
                raise ValueError(f"player {seatless[0]} holds no colour")
            colours = [c for _, cs in self.players for c in cs]
            if len(set(colours)) != len(colours) or not set(colours) <= set(COLOURS):
                raise ValueError("players' colours must be distinct Blokus colours")
            missing = set(self.scored_colours) - set(colours)
            if missing:
                raise ValueError(f"no player holds colour(s) {', '.join(sorted(missing))}")

    def settings_json(self) -> dict:
        """The settings that differ from the rules file's defaults, as a record stores them."""
        return {k: v for k, v in (("fixed_corners", self.fixed_corners), ("neutral", self.neutral))
                if v != Setup.__dataclass_fields__[k].default}

    @property
    def three_player(self) -> bool:
        return self.variant.startswith("three-player")

    @property
    def scored_colours(self) -> tuple[str, ...]:
        return tuple(c for c in COLOURS if not (self.three_player and c == self.neutral))

    @property
    def player_list(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if self.players:  # a seat holding only the neutral colour (V4) is no player: it is not scored
            seats = ((n, tuple(c for c in cs if c in self.scored_colours)) for n, cs in self.players)
            return tuple((n, cs) for n, cs in seats if cs)
        if self.variant == "team":
            return (("Blue & Red", ("B", "R")), ("Yellow & Green", ("Y", "G")))
        if self.variant == "two-player":
            return (("Player 1", ("B", "R")), ("Player 2", ("Y", "G")))
        return tuple((COLOUR_NAMES[c], (c,)) for c in self.scored_colours)


def rules(setup: Setup = Setup()) -> PlacementRules:
    b = board()
    corners = b.mask(CORNERS)
    starts = {}
    for colour in COLOURS:
        if colour in setup.starts:
            starts[colour] = b.mask([tuple(setup.starts[colour])])
        elif setup.fixed_corners:
            starts[colour] = b.mask([FIXED_CORNERS[colour]])
        else:
            starts[colour] = corners
    unchecked = frozenset({setup.neutral}) if setup.variant == "three-player-free" else frozenset()
    return _rules(setup.variant, tuple(sorted(starts.items())), unchecked)


@lru_cache(maxsize=None)
def _rules(variant: str, starts: tuple[tuple[str, int], ...], unchecked: frozenset[str]) -> PlacementRules:
    # Cached so that the placement table (30,433 placements) is built once per process.
    b = board()
    return PlacementRules(
        game="blokus", board=b, zone=b.full, pieces=pieces(), colours=COLOURS,
        starts=dict(starts), reasons=REASONS, names=COLOUR_NAMES, unchecked=unchecked,
    )


def new_match(setup: Setup = Setup()) -> Match:
    return Match(rules(setup))


# --- states: the board as 20 strings ---------------------------------------------------

def parse_board(rows: Sequence[str]) -> dict[Cell, str]:
    """Validate a 20 x 20 board of '.BYRG' and return its occupied cells."""
    if not isinstance(rows, (list, tuple)) or len(rows) != SIZE:
        raise ValueError(f"a Blokus board has {SIZE} rows, got {len(rows) if isinstance(rows, (list, tuple)) else 'none'}")
    cells = {}
    for r, row in enumerate(rows):
        if not isinstance(row, str) or len(row) != SIZE:
            raise ValueError(f"row {r} must be a string of {SIZE} characters")
        for c, ch in enumerate(row):
            if ch == EMPTY:
                continue
            if ch not in COLOURS:
                raise ValueError(f"unknown colour letter {ch!r} at row {r}, column {c} (use . B Y R G)")
            cells[(r, c)] = ch
    return cells


def board_rows(pos: Position) -> list[str]:
    grid = [[EMPTY] * SIZE for _ in range(SIZE)]
    b = board()
    for placed in pos.placed:
        for r, c in b.cells_of(placed.mask):
            grid[r][c] = placed.colour
    return ["".join(row) for row in grid]


def decompose(rows: Sequence[str], setup: Setup = Setup()) -> Decomposition:
    """Split a finished (or any) board into pieces per colour (see :func:`placement.decompose`)."""
    return placement_decompose(rules(setup), parse_board(rows), COLOUR_NAMES)


# --- scoring ---------------------------------------------------------------------------

def score(pos: Position, setup: Setup = Setup(), last_piece: Mapping[str, str] | None = None,
          flags: Sequence[Flag] = ()) -> ScoreSheet:
    """S1-S3 per colour, summed per player, ranked.

    ``last_piece`` gives, per colour, the piece placed last (from the move history or the
    user); without it a colour that placed all 21 pieces gets +15 and S3 is undecided.
    """
    ps = pieces()
    last_piece = last_piece or {}
    colour_scores: dict[str, ColourScore] = {}
    undecided: list[Undecided] = []
    for colour in setup.scored_colours:
        used = pos.used.get(colour, frozenset())
        remaining = tuple(p for p in ps.ids if p not in used)
        penalty = sum(ps.size(p) for p in remaining)
        unknown = [p for p in pos.pieces_of(colour) if p.piece is None]
        bonus = 0
        if unknown:
            undecided.append(Undecided(colour, "S1", f"{COLOUR_NAMES[colour]}: squares in regions that are not "
                                                     "pieces; which pieces remain is unknown"))
        elif not remaining:
            last = last_piece.get(colour)
            if last is None:
                bonus = 15
                undecided.append(Undecided(colour, "S3", f"{COLOUR_NAMES[colour]} placed all 21 pieces: +20 instead "
                                                         "of +15 if the monomino was placed last"))
            else:
                bonus = 20 if last == MONOMINO else 15
        colour_scores[colour] = ColourScore(colour, bonus - penalty, penalty, bonus, remaining)
    return rank_players(setup.player_list, colour_scores, flags, undecided, tiebreaks=())


def match_last_pieces(match: Match) -> dict[str, str]:
    return {c: p for c in COLOURS if (p := match.last_piece(c)) is not None}


def random_game_state(rng, n_moves: int | None = None, setup: Setup = Setup()) -> list[str]:
    """The board after ``n_moves`` random legal placements (a whole game when None)."""
    from .placement import random_playout

    return board_rows(random_playout(rules(setup), rng, n_moves).position)


def score_match(match: Match, setup: Setup) -> ScoreSheet:
    """Final scores of a played game: the move history decides S3."""
    return score(match.position, setup, match_last_pieces(match))


def score_state(state: Mapping, setup: Setup, last_piece: Mapping[str, str] | None = None) -> ScoreSheet:
    """Scores of a board state document (``{"game": "blokus", "board": [...]}``)."""
    d = decompose(state.get("board"), setup)
    return score(d.position, setup, last_piece, d.flags)
