"""What a game must say for the live session to referee it: the adapter interface.

The session (:mod:`companion_app.session`) owns everything every game shares: the event log
in SQLite, replaying it, take-backs by turn, alerts per reason code, publishing snapshots.
An adapter owns what differs: how the camera's game-neutral board becomes events, how the
log's events become the game's judged turns, and what the page draws. One adapter object
lives as long as its session and keeps what the camera last saw (its reading and the
corrections that still stand against it); everything else is derived from the log.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Sequence

from rules.errors import InputError
from rules.records import GAME_RULES

from ..store import EventRow, KeptBoard

Item = tuple[str, dict]  # an event to log: (kind, payload)


class SessionError(InputError):
    """A request the session cannot carry out; ``message`` is shown to the user as is. Its
    ``code`` is ``bad_request`` unless the fault has a code of its own: a setup the rules
    refuse keeps the rules' code, the one ``tableref check`` gives the same document."""

    def __init__(self, message: str, code: str = "bad_request"):
        super().__init__(code, message)


@dataclass(frozen=True)
class Entry:
    """One move of the game as it now stands, and the event that put it there."""

    event_id: int
    move: Any  # the adapter's own move description


@dataclass(frozen=True)
class Derived:
    """The game replayed from the log.

    ``game`` is the rules engine's game in progress (``turns``, ``over``,
    ``colour_to_move``), or None while the game cannot start yet (a Geometrius field not yet
    seen). ``sources[i]`` is the event behind turn ``i`` (None for a pass the board made due).
    ``entries`` are the moves the log stands for, for a quick append of the next move.
    """

    game: Any
    sources: tuple[int | None, ...]
    entries: tuple[Entry, ...] = ()
    core: Any = None  # the adapter's own cache (the placement engine's match before its auto passes)


class GameAdapter:
    """The base of every adapter; subclasses fill in the game's parts."""

    game: str = ""
    # What a restart loses when the saved held boards are damaged, and what a player does then
    # (the session's resume notice)
    lost_hold = ("the camera boards held back before the restart", "if more than two pieces were laid since "
                 "the last move in the history, lift them and lay them again one at a time")
    # The same where nothing was held back: only the camera's last board was saved, with the
    # corrections standing on it, so the log's corrections stand until the camera's next board
    # (it ends those the table no longer shows)
    lost_camera_board = ("the camera's last board and the corrections standing on it", "nothing was held back "
                         "and nothing needs lifting; until the camera's next board a square corrected "
                         "before may be ringed as corrected again")

    def __init__(self, setup: Any):
        self.setup = setup
        self.uncertain: tuple = ()  # what the camera last could not read

    @property
    def module(self) -> ModuleType:
        return GAME_RULES[self.game]

    # --- the log -------------------------------------------------------------------------

    def derive(self, events: Sequence[EventRow], before: Derived | None = None,
               new: Sequence[EventRow] = ()) -> Derived:
        """The game after ``events``; ``before`` (the game before ``new``) lets a plain
        appended move be played on instead of replaying everything."""
        raise NotImplementedError

    def turn_events(self, derived: Derived, index: int) -> list[int]:
        """The logged events behind turn ``index`` (what taking it back removes)."""
        return [derived.sources[index]]

    def restore(self, events: Sequence[EventRow], derived: Derived) -> None:
        """After a restart: take back what the log says about the camera (corrections)."""

    def held_boards(self) -> list[KeptBoard]:
        """The camera boards kept while a change is held back, as the store saves them (the
        session saves them when they change, so a restart resumes the hold: :meth:`resume_hold`);
        none for a game that keeps none."""
        return []

    def resume_hold(self, boards: Sequence[KeptBoard]) -> None:
        """After a restart: hold again the boards :meth:`held_boards` gave (a game that keeps
        none has none saved)."""

    # --- input ---------------------------------------------------------------------------

    def observe(self, derived: Derived, board: Any, uncertain: Sequence, t: float) -> list[Item]:
        """Events for a newly stable camera board (none: nothing new, or wait for a clearer one)."""
        raise NotImplementedError

    def catch_up(self, derived: Derived) -> list[Item]:
        """Events of a camera board kept while a change was held back, now explained (the
        session logs them and asks again until none come); none by default."""
        return []

    def taken_back_by_tap(self, derived: Derived, events: list[int]) -> dict:
        """The payload of the take-back the player tapped (the moves of ``events``); an
        adapter that keeps what the camera read forgets here what that held of those moves."""
        return {"events": events, "source": "user"}

    def correction(self, derived: Derived, doc: dict) -> dict:
        """The payload of a correction the user asked for (``doc`` as the page posts it)."""
        raise NotImplementedError

    def corrected(self, derived: Derived, doc: dict) -> list[Item]:
        """The events a tap logs (``doc`` as the page posts it): its correction."""
        return [("correction", self.correction(derived, doc))]

    def amendment(self, derived: Derived, doc: dict) -> dict:
        """The payload of a detail entered by tap about a logged move (a card, a tile)."""
        raise SessionError(f"{self.game} moves have nothing to enter by tap")

    def pass_payload(self, derived: Derived) -> dict:
        game = derived.game
        if game is None or game.over:
            raise SessionError("the game is over" if game is not None else "the game has not started yet")
        return {"colour": game.colour_to_move, "source": "user"}

    # --- output --------------------------------------------------------------------------

    def cell_json(self, cell: tuple) -> Any:
        """A cell (field, token place) as the page and the records name it."""
        return list(cell)

    def move_cells(self, move: Any) -> tuple:
        """The cells a judged move covered (drawn round the last move and an illegal one)."""
        return tuple(move.cells)

    def turn_details(self, turn: Any) -> dict:
        """What the move list shows of a judged turn beyond the contract's verdict."""
        return {}

    def layout(self, derived: Derived) -> dict:
        raise NotImplementedError

    def view(self, derived: Derived) -> dict:
        """The board part of the snapshot: what lies where, the last move, unsure cells."""
        raise NotImplementedError

    def scores(self, derived: Derived) -> dict:
        return self.module.score_match(derived.game, self.setup).to_json()

    def record(self, derived: Derived) -> dict:
        raise NotImplementedError

    def players(self) -> list[dict]:
        return [{"name": n, "colours": list(cs)} for n, cs in self.setup.player_list]


def last_placements(derived: Derived, n: int, placed: Any) -> list[int]:
    """Events of the last ``n`` turns that laid something (``placed(turn)``) and of every
    move logged after the first of them: what a piece lifted off the table takes back."""
    turns = derived.game.turns
    laid = [i for i, t in enumerate(turns) if placed(t)]
    return [e for e in derived.sources[laid[-n]:] if e is not None]
