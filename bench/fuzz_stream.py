"""A seeded game as a webcam and its players would hand it to the live referee, noise and all.

A plan is drawn in two parts: the true game (random legal placements, now and then a pass
a colour declares though it could still place), and the noise laid over it, each noise
event on its own so a failing stream can be shrunk by dropping events (:func:`render` takes
the events kept and how many placements to play). The stream is what the session gets:
stable boards (``{cell: colour}`` with the cells the camera doubts), the player's taps
(a cell said to be its true colour, a take-back of a piece laid by mistake, a pass) and
server restarts. Every noise event is one the session promises to survive:

- ``Misread``: a cell of the piece just laid read empty or in another colour, doubted or
  not; a doubted one is tapped or read right by a later board, an undoubted one (an end of
  the piece: :func:`_ends`) is always tapped while the camera still misreads it (a misread
  nobody notices is no promise);
- ``Hand``: a hand over a few cells for one board (read empty, doubted);
- ``Ghost``: a shadow read as a colour on a cell left empty all game (doubted, a board or two);
- ``Stray``: a piece laid where it does not belong, lifted again (the camera may log it and
  then see it lifted), or taken back by tap first, lifted then or after the next piece; in
  Equilibrix also left unnoticed and lifted as the piece after the next goes down, so the
  camera takes back the next piece with it and logs it again (``EQUILIBRIX_STRAY_MODES``);
- ``TileTap``: an Equilibrix player opens a tile's sheet and picks a wrong ring tile first,
  or says "as the shape says" of a tile the shape does name;
- ``Restart``: the server restarts after a board.

What the camera cannot see of an Equilibrix move, its ring tile when the shape names another
copy first and the 5+1 token, the player taps once the move is listed (``amend`` steps; see
:func:`detail_taps`).

The games (``GAMES``): Blokus classic, Gemblo 3p and 4p, Equilibrix AUTONOMIE and TŘI METY
(:func:`_equilibrix_game` says which of its moves are drawn).

Pure: nothing here touches a session or a file.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence, Union

import numpy as np

from companion_app.adapters import adapter_for
from companion_app.session import parse_setup
from rules import equilibrix, flower
from rules.board import Board
from rules.lattice import Cell
from rules.placement import Match, Move, legal_placements
from rules.records import GAME_RULES

GAMES = {"blokus": ({"variant": "classic"},), "gemblo": ({"variant": "3p"}, {"variant": "4p"}),
         "equilibrix": ({"variant": "autonomie"}, {"variant": "tri-mety"})}
PLACEMENTS = (6, 16)  # how many placements a game has, at least and below
PASS_CHANCE = 0.05  # a colour that could place declares a pass
FRAMES = (1, 4)  # stable boards per placement, at least and below
STRAY_MODES = ("lift", "tap then lift", "tap, lift after the next piece")
# Equilibrix strays may also lie unnoticed under the next tile (its session does not catch up, so
# the stray is logged before the next tile rather than held back with it, as it rarely is elsewhere)
EQUILIBRIX_STRAY_MODES = (*STRAY_MODES, "lift after the next piece")
MISREAD_CHANCE, HAND_CHANCE, GHOST_CHANCE, STRAY_CHANCE, RESTART_CHANCE = 0.3, 0.15, 0.05, 0.08, 0.06
TILE_TAP_CHANCE = 0.15  # an Equilibrix tile's sheet opened though the shape names the tile, or a wrong pick first


@dataclass(frozen=True)
class Misread:
    placement: int
    cell: Cell
    reads: str  # "." or another colour
    doubted: bool
    tap_after: int | None  # boards after the first misread one before the player taps; None: never tapped
    lasts: int  # boards (from the first, or after the tap) the camera keeps misreading it


@dataclass(frozen=True)
class Hand:
    placement: int
    frame: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Ghost:
    placement: int
    cell: Cell
    reads: str
    lasts: int


@dataclass(frozen=True)
class Stray:
    placement: int  # laid before this placement
    move: Move
    mode: str  # one of STRAY_MODES


@dataclass(frozen=True)
class TileTap:
    """An Equilibrix tile's sheet opened: ``wrong`` picked first by mistake (None: not), then
    the true tile, or "as the shape says" when the shape names the true tile first."""

    placement: int
    wrong: str | None


@dataclass(frozen=True)
class Restart:
    placement: int
    frame: int


Noise = Union[Misread, Hand, Ghost, Stray, TileTap, Restart]


@dataclass(frozen=True)
class Plan:
    seed: int
    game: str
    setup_doc: dict
    moves: tuple[Any, ...]  # the true moves the players make (placements and declared passes; the game's Move)
    frames: tuple[int, ...]  # stable boards per placement
    noise: tuple[Noise, ...]


@dataclass(frozen=True)
class Step:
    """One thing the session is handed: ``kind`` is ``board``, ``tap``, ``take_back``, ``amend``,
    ``pass`` or ``restart``."""

    kind: str
    board: tuple[tuple[Cell, str], ...] = ()
    doubted: tuple[Cell, ...] = ()
    cell: Cell | None = None
    colour: str = ""
    move: Any = None  # take_back: the stray piece the player takes back; amend: the tile whose sheet is tapped
    # amend: what the sheet sends, as the page does: the token always, the tile when changed (None: "as
    # the shape says")
    detail: tuple[tuple[str, Any], ...] = ()


def covered(move: Any) -> tuple[Cell, ...]:
    """The cells a placement covers (an Equilibrix tile's fields)."""
    return move.fields if isinstance(move, equilibrix.Move) else move.cells


def true_match(plan: Plan, placements: int | None = None) -> Any:
    """The true game of ``plan`` (its first ``placements``), the passes the board forces played
    (Equilibrix has none: a player with no move says so, a declared pass in ``moves``)."""
    match = GAME_RULES[plan.game].new_match(parse_setup(plan.game, plan.setup_doc))
    for move in truncated(plan.moves, placements):
        while not move.passed and match.colour_to_move != move.colour:
            match = match.play(Move(match.colour_to_move, passed=True))
        match = match.play(move)
    return match


def truncated(moves: Iterable[Any], placements: int | None) -> list[Any]:
    out, laid = [], 0
    for move in moves:
        if placements is not None and laid == placements:
            break
        out.append(move)
        laid += not move.passed
    return out


def draw(seed: int, game: str) -> Plan:
    """The plan of ``seed``: a random legal game of ``game`` and the noise over it."""
    rng = np.random.default_rng(seed)
    docs = GAMES[game]
    doc = docs[int(rng.integers(len(docs)))]
    want = int(rng.integers(*PLACEMENTS))
    if game == "equilibrix":
        moves = _equilibrix_game(rng, equilibrix.Game.start(parse_setup(game, doc)), want)
        board, colours = flower.board(), equilibrix.COLOURS
    else:
        match = GAME_RULES[game].new_match(parse_setup(game, doc))
        moves = _placement_game(rng, match, want)
        board, colours = match.rules.board, match.rules.colours
    placed = [m for m in moves if not m.passed]
    final = {c for m in placed for c in covered(m)}
    frames = tuple(int(rng.integers(*FRAMES)) for _ in placed)
    noise: list[Noise] = []
    tiles = game == "equilibrix"
    modes = EQUILIBRIX_STRAY_MODES if tiles else STRAY_MODES
    before = GAME_RULES[game].new_match(parse_setup(game, doc))  # the game a stray is laid on
    for p, move in enumerate(placed):
        while before.colour_to_move != move.colour:  # the passes up to this placement, forced or declared
            before = before.play(type(move)(before.colour_to_move, passed=True))
        if rng.random() < STRAY_CHANCE:
            stray = (_equilibrix_stray if tiles else _stray)(rng, before, final)
            if stray is not None:
                noise.append(Stray(p, stray, modes[int(rng.integers(len(modes)))]))
        if tiles and move.tile is not None and rng.random() < TILE_TAP_CHANCE:
            wrong = [t for t in before.setup.ring if t != move.tile]
            noise.append(TileTap(p, wrong[int(rng.integers(len(wrong)))] if rng.random() < 0.5 else None))
        squares = covered(move)
        if rng.random() < MISREAD_CHANCE:
            doubted = len(squares) == 1 or bool(rng.random() < 0.6)  # a monomino missed unnoticed: no move seen
            cells = squares if doubted else _ends(board, squares)
            cell = cells[int(rng.integers(len(cells)))]
            others = [c for c in colours if c != move.colour]
            # a monomino read empty shows no change at all (see the round's limits): it is read in another colour
            reads = "." if len(squares) > 1 and rng.random() < 0.5 else others[int(rng.integers(len(others)))]
            tap_after = int(rng.integers(0, 4)) if not doubted or rng.random() < 0.5 else None
            noise.append(Misread(p, cell, reads, doubted, tap_after, int(rng.integers(0, 3))))
        for f in range(frames[p]):
            if rng.random() < HAND_CHANCE:
                centre = squares[int(rng.integers(len(squares)))] if rng.random() < 0.7 else \
                    board.cells[int(rng.integers(len(board.cells)))]
                near = sorted(board.around([centre]))
                noise.append(Hand(p, f, tuple(near[i] for i in sorted(set(rng.integers(len(near), size=4))))))
            if rng.random() < RESTART_CHANCE:
                noise.append(Restart(p, f))
        if rng.random() < GHOST_CHANCE:
            empty = [c for c in board.cells if c not in final]
            noise.append(Ghost(p, empty[int(rng.integers(len(empty)))],
                               colours[int(rng.integers(len(colours)))], int(rng.integers(1, 3))))
        before = before.play(move)
    return Plan(seed, game, doc, tuple(moves), frames, tuple(noise))


def _placement_game(rng: np.random.Generator, match: Match, want: int) -> list[Move]:
    """A random legal Blokus or Gemblo game of ``want`` placements (fewer if it ends first); a
    colour that could place declares a pass now and then (forced passes: the session's)."""
    rules, board = match.rules, match.rules.board
    moves: list[Move] = []
    while len([m for m in moves if not m.passed]) < want and not match.over:
        colour = match.colour_to_move
        options = legal_placements(rules, match.position, colour)
        if not options:
            match = match.play(Move(colour, passed=True))  # forced: the session passes it itself
            continue
        if rng.random() < PASS_CHANCE:
            move = Move(colour, passed=True)
        else:
            move = Move(colour, tuple(board.cells_of(options[int(rng.integers(len(options)))][1])))
        match = match.play(move)
        moves.append(move)
    return moves


def _equilibrix_game(rng: np.random.Generator, game: equilibrix.Game, want: int) -> list[equilibrix.Move]:
    """A random legal Equilibrix game of ``want`` placements (fewer if it ends first). A player
    without a legal move declares the pass (the session passes no one itself), one who has
    one now and then. A tile is any offered copy of its shape, and the 5+1 token comes with a
    move that needs it (``legal_moves``): the camera sees neither, the player taps them
    (:func:`detail_taps`)."""
    moves: list[equilibrix.Move] = []
    while len([m for m in moves if not m.passed]) < want and not game.over:
        colour = game.colour_to_move
        options = list(game.legal_moves(colour))
        if not options or rng.random() < PASS_CHANCE:
            move = equilibrix.Move(colour, passed=True)
        else:
            move = options[int(rng.integers(len(options)))]
            if move.tile is not None:
                copies = same_shape(game.offered(colour), move.tile)
                move = replace(move, tile=copies[int(rng.integers(len(copies)))])
        game = game.play(move)
        moves.append(move)
    return moves


def same_shape(tiles: Iterable[str], tile: str) -> list[str]:
    """The ring tiles among ``tiles`` of ``tile``'s shape, in their order."""
    return [t for t in tiles if equilibrix.tile_shape(t) == equilibrix.tile_shape(tile)]


def _equilibrix_stray(rng: np.random.Generator, game: equilibrix.Game, final: set[Cell]) -> equilibrix.Move | None:
    """A tile or mini-tile some colour could lay now, on fields the true game leaves empty to
    its end (the camera reads no ring in the stream, so a stray ring tile shows as its fields)."""
    colour = equilibrix.COLOURS[int(rng.integers(len(equilibrix.COLOURS)))]
    options = [m for m in game.legal_moves(colour) if not set(m.fields) & final]
    return options[int(rng.integers(len(options)))] if options else None


def _ends(board: Board, cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """The cells of a piece (of two or more) without which the rest is still one piece. A
    cell the camera misses unnoticed elsewhere cuts the piece in two, logged as two moves,
    and a tap joins the cell to one of them only; a monomino missed unnoticed is no move
    seen, and tapped later is logged where tapped (see the round's limits): no promise
    covers those."""
    return tuple(c for c in cells if len(board.components(board.mask(set(cells) - {c}))) == 1)


def _stray(rng: np.random.Generator, match: Match, final: set[Cell]) -> Move | None:
    """A piece some colour could lay now, on cells the true game leaves empty to its end."""
    rules = match.rules
    colour = rules.colours[int(rng.integers(len(rules.colours)))]
    options = [m for _, m in legal_placements(rules, match.position, colour)
               if not set(rules.board.cells_of(m)) & final]
    if not options:
        return None
    return Move(colour, tuple(rules.board.cells_of(options[int(rng.integers(len(options)))])))


def detail_taps(plan: Plan, moves: Sequence[Any], noise: Iterable[Noise]) -> list[list[Step]]:
    """The taps an Equilibrix player makes on each placement's sheet once the page lists it (a
    list a placement; none in the other games): ``TileTap``'s wrong pick first, then the ring
    tile when the shape names another copy first (the session's guess, as the true game so far
    has it: the first offered of that shape), or "as the shape says" after a ``TileTap`` of a
    tile the shape names; the 5+1 token sent with each, or alone when it came with the move."""
    if plan.game != "equilibrix":
        return [[] for m in moves if not m.passed]
    sheets = {n.placement: n for n in noise if isinstance(n, TileTap)}
    game = equilibrix.Game.start(parse_setup(plan.game, plan.setup_doc))
    out: list[list[Step]] = []
    for move in moves:
        if not move.passed:
            token = (("token", move.token),)
            opened = sheets.get(len(out))
            taps = [Step("amend", move=move, detail=(("tile", opened.wrong), *token))] if opened and opened.wrong else []
            if move.tile is not None and same_shape(game.offered(move.colour), move.tile)[0] != move.tile:
                taps.append(Step("amend", move=move, detail=(("tile", move.tile), *token)))
            elif opened:
                taps.append(Step("amend", move=move, detail=(("tile", None), *token)))
            elif move.token:
                taps.append(Step("amend", move=move, detail=token))
            out.append(taps)
        game = game.play(move)
    return out


def render(plan: Plan, keep: Iterable[int] | None = None, placements: int | None = None) -> list[Step]:
    """The stream of ``plan`` with the noise events numbered in ``keep`` (all by default), its
    true game cut after ``placements``. Before a declared pass and at the end, every misread
    still standing is tapped (when it must be) and a clear board is sent: a player settles
    the page's rings before passing. So before each piece in a game whose session waits for
    a clearer board rather than catching up on the boards sent meanwhile (Equilibrix: the
    adapter's ``catches_up``): there a doubt on the last board of one piece and another on
    the first of the next may leave the log three placements behind, which no board explains.
    The taps on an Equilibrix tile's sheet (:func:`detail_taps`) follow that clear board: the
    page lists the tile then."""
    kept = None if keep is None else set(keep)
    catches_up = adapter_for(plan.game, parse_setup(plan.game, plan.setup_doc), plan.setup_doc).catches_up
    noise = [n for i, n in enumerate(plan.noise) if kept is None or i in kept]
    moves = truncated(plan.moves, placements)
    table: dict[Cell, str] = {}
    steps: list[Step] = []
    live: list[tuple[Misread, int]] = []  # misreads under way, with the board they started on
    ghosts: list[tuple[Ghost, int]] = []
    left: Stray | None = None  # a stray left on the table until the next piece is down
    sheets = detail_taps(plan, moves, noise)
    owed: list[Step] = []  # the sheet taps of the pieces laid since the rings were last settled
    frame = p = 0

    def board_step(extra: Any, hand: Iterable[Cell] = ()) -> Step:
        seen = dict(table)
        if extra is not None:
            seen.update((c, extra.colour) for c in covered(extra))
        doubted: set[Cell] = set()
        for m, start in live:
            seen[m.cell] = m.reads
            doubted |= {m.cell} if m.doubted else set()
        for g, _ in ghosts:
            seen[g.cell] = g.reads
            doubted.add(g.cell)
        for c in set(hand) - {m.cell for m, _ in live}:  # a misread tapped is one reading: the hand spares it
            seen[c] = "."
            doubted.add(c)
        return Step("board", tuple(sorted((c, col) for c, col in seen.items() if col != ".")), tuple(sorted(doubted)))

    def settle() -> None:
        nonlocal live, ghosts
        steps.extend(Step("tap", cell=m.cell, colour=table[m.cell]) for m, start in live
                     if m.tap_after is not None and frame - start <= m.tap_after)
        live, ghosts = [], []
        steps.append(board_step(left.move if left else None))
        steps.extend(owed)
        owed.clear()

    for move in moves:
        if move.passed:
            settle()
            steps.append(Step("pass", colour=move.colour))
            continue
        if not catches_up and p:
            settle()  # the rings settled before the next piece (see above)
        if left is not None and left.placement < p:
            left = None  # lifted once the piece laid after it is down
        for s in (n for n in noise if isinstance(n, Stray) and n.placement == p):
            steps.append(board_step(s.move))
            if s.mode.startswith("tap"):
                steps.append(Step("take_back", move=s.move))
            if s.mode.endswith("next piece"):
                left = s
        table.update((c, move.colour) for c in covered(move))
        live += [(m, frame) for m in noise if isinstance(m, Misread) and m.placement == p]
        ghosts += [(g, frame) for g in noise if isinstance(g, Ghost) and g.placement == p]
        for f in range(plan.frames[p]):
            hand = [c for h in noise if isinstance(h, Hand) and (h.placement, h.frame) == (p, f) for c in h.cells]
            if set(covered(move)) <= {*hand, *(m.cell for m, _ in live if m.reads == ".")}:
                hand = [c for c in hand if c not in covered(move)]  # a piece hidden whole shows no change (limits)
            steps.append(board_step(left.move if left else None, hand))
            still = []
            for m, start in live:
                done = frame - start  # boards seen since the misread began, less one
                if m.tap_after is not None and done == m.tap_after:
                    steps.append(Step("tap", cell=m.cell, colour=table[m.cell]))
                over = (done >= m.tap_after + m.lasts) if m.tap_after is not None else done >= m.lasts
                if not over:
                    still.append((m, start))
            live = still
            ghosts = [(g, start) for g, start in ghosts if frame - start + 1 < g.lasts]
            steps += [Step("restart") for r in noise if isinstance(r, Restart) and (r.placement, r.frame) == (p, f)]
            frame += 1
        owed.extend(sheets[p])
        p += 1
    settle()
    left = None
    steps += [board_step(None), board_step(None)]
    return steps
