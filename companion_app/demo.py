"""The bundled demo (``make run``): a whole 4-colour game filmed by our renderer.

So that the tablet page can be seen working without a camera or a board, the demo is what a
webcam over a real table would send: for every move a hand reaches in carrying the piece,
lets go and leaves, then the board holds still. The game is self-play with a fixed seed; one
placement in it is illegal (the piece touches its own colour along an edge, B5) and is taken
back a little later, as players do once the referee flags it.

A game is a list of :class:`DemoStep` (the ground truth, :func:`demo_script`), filmed as a
list of :class:`Shot` (a still picture of the table held for some seconds, :func:`film`),
played at a frame rate by :class:`FilmSource`. Filming knows a game only through
:class:`Filmed` (its board, and the renderer's ``render_frame``): :data:`BLOKUS` is the demo's,
:data:`GEMBLO` films a Gemblo game the same way (tests and ``bench live_games``). Timing lives in seconds on the shots, so one
film gives the same story at any fps. Each shot is rendered once, on first use; with a cache
folder it is kept as a JPEG so a replay costs a file read instead of a render (the demo loops
on a 2-core machine that is also reading the board).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import cv2
import numpy as np

from rules import blokus, gemblo
from rules.lattice import Cell
from rules.placement import Match, Move, PlacementRules, check_placement, random_playout

from vision import synth
from vision.hexgrid import PLATE_RADIUS, SQRT3
from vision.synth import blokus as blokus_synth, gemblo as gemblo_synth
from vision.synth.conditions import CONDITIONS
from vision.synth.scene import CameraSetup

from .sources import Frame, RecordedSource, Report

DEMO_SEED = 2024
FPS = 4.0
SIZE = (1280, 720)
ILLEGAL_AFTER = 9  # placements before the illegal one: every colour has pieces down by then
HOLD_SECONDS = 1.75  # how long the board stays still after a move
FLAGGED_HOLD_SECONDS = 5.0  # after the illegal piece: time to see the alert before it goes
HAND_SHOT_SECONDS = 1 / FPS  # one hand position per demo frame
FIRST_SECONDS = 2.5  # the empty board, before the first hand comes in
LAST_SECONDS = 8.0  # the finished game


@dataclass(frozen=True)
class DemoStep:
    """One thing the players do: lay ``move``'s piece, or take it back off the board.

    ``hold`` is how long the board then stays untouched (longer after a piece the referee
    flags, so that the alert can be seen before the piece goes).
    """

    move: Move
    take_back: bool = False
    hold: float = HOLD_SECONDS


@dataclass(frozen=True)
class Shot:
    """One still picture of the table: the board, maybe a hand, seen by camera ``camera``."""

    board: tuple  # in the game's :class:`Filmed` form
    seconds: float
    hand_at: tuple[float, float] | None = None  # the cell under the grip, fractional
    carrying: str | None = None  # colour of the piece in the hand
    camera: int = 0


@dataclass(frozen=True)
class Filmed:
    """What filming needs to know of a game: its empty board, how laying (or lifting, with
    ``EMPTY``) a piece changes it, where a hand reaching for a cell comes from, and how a
    frame of it is rendered (``board, camera, rng, hand_at=, size=, carrying=``)."""

    empty: tuple
    lay: Callable[[tuple, Sequence[Cell], str], tuple]
    beside: Callable[[np.ndarray], np.ndarray]
    render: Callable[..., Any]


def demo_script(seed: int = DEMO_SEED, illegal_after: int = ILLEGAL_AFTER, rules: PlacementRules | None = None,
                placements: int | None = None) -> tuple[DemoStep, ...]:
    """The demo game: the self-play placements (all, or the first ``placements``), with one
    illegal piece laid and taken back before placement number ``illegal_after`` (by the
    colour whose turn it is there). ``rules``: Blokus' by default."""
    rules = rules or blokus.rules()
    played = random_playout(rules, np.random.default_rng(seed), placements)
    moves = [t.move for t in played.turns if not t.move.passed]
    before = Match(rules)
    for move in moves[:illegal_after]:
        before = before.play(move)
    wrong = edge_touching(before)
    return (*(DemoStep(m) for m in moves[:illegal_after]),
            DemoStep(wrong, hold=FLAGGED_HOLD_SECONDS), DemoStep(wrong, take_back=True),
            *(DemoStep(m) for m in moves[illegal_after:]))


def edge_touching(match: Match) -> Move:
    """A placement for the colour to move that breaks B5 (Gemblo's M4: touches its own
    colour along an edge) and no other rule: the mistake a referee exists to catch."""
    rules, pos = match.rules, match.position
    colour = match.colour_to_move
    edge = pos.near.get(colour, 0) & ~pos.own.get(colour, 0)
    for _, mask in rules.table.masks:
        if mask & pos.occupied or not mask & edge or not mask & pos.reach.get(colour, 0):
            continue
        cells = tuple(rules.board.cells_of(mask))
        _, broken = check_placement(rules, pos, colour, cells)
        if [v.code for v in broken] == ["edge_contact_same_colour"]:
            return Move(colour, cells)
    raise ValueError(f"{colour} has no placement that breaks only B5 here")


def film(steps: Sequence[DemoStep], cameras_at: Sequence[int] = (),
         first: float = FIRST_SECONDS, last: float = LAST_SECONDS, game: Filmed | None = None) -> list[Shot]:
    """The shots of a game (Blokus unless ``game`` says): for each step a hand comes in from
    the nearest side, the piece appears (or goes) under it, the hand leaves, the board holds
    still.

    ``cameras_at[i]`` is the step from which camera ``i + 1`` films (the board was bumped).
    """
    game = game or BLOKUS
    board = game.empty
    shots = [Shot(board, first)]
    for number, step in enumerate(steps):
        camera = sum(1 for at in cameras_at if at <= number)
        after = game.lay(board, step.move.cells, blokus.EMPTY if step.take_back else step.move.colour)
        target = np.mean(step.move.cells, axis=0)
        outside = game.beside(target)
        path = [outside + (target - outside) * f for f in (0.0, 0.5, 1.0)]
        carry_in = None if step.take_back else step.move.colour
        carry_out = step.move.colour if step.take_back else None
        for at in path:
            shots.append(Shot(board, HAND_SHOT_SECONDS, _cell(at), carry_in, camera))
        for at in path[:0:-1]:
            shots.append(Shot(after, HAND_SHOT_SECONDS, _cell(at), carry_out, camera))
        shots.append(Shot(after, step.hold, camera=camera))
        board = after
    shots[-1] = replace(shots[-1], seconds=max(shots[-1].seconds, last))
    return shots


def _lay(board: tuple[str, ...], cells: Sequence[Cell], letter: str) -> tuple[str, ...]:
    grid = [list(row) for row in board]
    for r, c in cells:
        grid[r][c] = letter
    return tuple("".join(row) for row in grid)


def _beside_board(target: np.ndarray, beyond: float = 4.0) -> np.ndarray:
    """Where a hand reaching for ``target`` starts: off the nearest board side."""
    side = blokus.SIZE - 1
    r, c = target
    options = [np.array([-beyond, c]), np.array([r, side + beyond]), np.array([side + beyond, c]),
               np.array([r, -beyond])]
    return min(options, key=lambda p: float(np.abs(p - target).sum()))


def _render_blokus(board: tuple[str, ...], *args, **kwargs) -> Any:
    return blokus_synth.render_frame(list(board), *args, **kwargs)


BLOKUS = Filmed(tuple([blokus.EMPTY * blokus.SIZE] * blokus.SIZE), _lay, _beside_board, _render_blokus)


def _lay_hexes(board: tuple[tuple[str, str], ...], cells: Sequence[Cell], letter: str) -> tuple[tuple[str, str], ...]:
    """A Gemblo board is its occupied cells, ``(("q,r", colour), ...)`` in key order."""
    out = dict(board)
    for q, r in cells:
        out.pop(f"{q},{r}", None)
        if letter != blokus.EMPTY:
            out[f"{q},{r}"] = letter
    return tuple(sorted(out.items()))


def _beside_plate(target: np.ndarray, beyond: float = 6.0) -> np.ndarray:
    """Where a hand reaching for cell ``target`` (q, r) starts: off the plate, straight out
    from its centre through the target (``beyond`` cell radii past the rim)."""
    x, y = gemblo.screen(tuple(target))
    reach = float(np.hypot(x, y))
    if reach < 1e-6:  # the centre cell: from the photographer's side
        x, y, reach = 0.0, 1.0, 1.0
    scale = (PLATE_RADIUS + beyond) / reach
    q = x * scale / 1.5
    return np.array([q, (y * scale / (SQRT3 / 2) - q) / 2])


def _render_gemblo(board: tuple[tuple[str, str], ...], *args, **kwargs) -> Any:
    return gemblo_synth.render_frame(dict(board), *args, **kwargs)


GEMBLO = Filmed((), _lay_hexes, _beside_plate, _render_gemblo)


def _cell(at: np.ndarray) -> tuple[float, float]:
    return round(float(at[0]), 3), round(float(at[1]), 3)


class FilmSource(RecordedSource):
    """Plays shots at ``fps``: frame ``k`` is at ``k / fps`` and shows the shot of that time."""

    def __init__(self, shots: Sequence[Shot], cameras: Sequence[CameraSetup], fps: float = FPS, seed: int = DEMO_SEED,
                 size: tuple[int, int] = SIZE, cache: Path | None = None, realtime: bool = False,
                 game: Filmed | None = None) -> None:
        super().__init__(realtime)
        self.shots, self.cameras, self.fps, self.seed, self.size = list(shots), list(cameras), fps, seed, size
        self.render = (game or BLOKUS).render
        self.cache = cache / _digest(self.shots, self.cameras, seed, size) if cache is not None else None

    def recorded(self, report: Report) -> Iterator[Frame]:
        frame, start = 0, 0.0
        for number, shot in enumerate(self.shots):
            end = start + shot.seconds
            image = self.image(number) if frame / self.fps < end - 1e-9 else None  # a shot between two frames is not seen
            while frame / self.fps < end - 1e-9:
                yield frame / self.fps, image
                frame += 1
            start = end

    def image(self, number: int) -> np.ndarray:
        """Shot ``number`` as a BGR frame: from the cache, or rendered (and cached)."""
        path = self.cache / f"shot_{number:05d}.jpg" if self.cache is not None else None
        if path is not None and path.exists():
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is not None:
                return image
        shot = self.shots[number]
        image = self.render(shot.board, self.cameras[shot.camera], np.random.default_rng([self.seed, number]),
                            hand_at=shot.hand_at, size=self.size, carrying=shot.carrying).image
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part.jpg")
            cv2.imwrite(str(partial), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
            os.replace(partial, path)  # a reader never sees half a file
        return image


def _digest(shots: Sequence[Shot], cameras: Sequence[CameraSetup], seed: int, size: tuple[int, int]) -> str:
    """Names the cache folder after the film and the renderer's source, so neither a changed
    script nor a changed renderer ever reuses old frames."""
    seen_by = [(c.conditions, c.seed) for c in cameras]
    digest = hashlib.sha1(repr((shots, seen_by, seed, size)).encode())
    for source in sorted(Path(synth.__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def cameras(seed: int = DEMO_SEED, bumps: int = 0) -> list[CameraSetup]:
    """The demo's camera, then one per bump: the board shifted and turned a little on the
    same table under the same light."""
    first = CameraSetup.random(np.random.default_rng(seed), CONDITIONS["clean"])
    out = [first]
    for k in range(1, bumps + 1):
        c = first.conditions
        moved = replace(c, offset_x=c.offset_x + 0.15 * k, rotation_deg=c.rotation_deg + 4.0 * k)
        out.append(replace(first, conditions=moved))
    return out


def demo_source(data_dir: str | Path | None, realtime: bool = True) -> FilmSource:
    """The demo game as a frame source; rendered frames are kept under ``data_dir/demo``."""
    cache = Path(data_dir) / "demo" if data_dir is not None else None
    return FilmSource(film(demo_script()), cameras(), cache=cache, realtime=realtime)
