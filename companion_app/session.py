"""A live game as recorded at the table: an event log, and everything else derived from it.

The log (moves seen by the camera, one-tap corrections, take-backs, declared passes, details
entered by tap) is what is written to disk; the game, board, scores, whose turn and alerts
are replayed from it. So a correction or a take-back far back in the game re-judges every
later move exactly as a fresh replay would, and a restarted server resumes where it was.
Beside the log, the camera boards held while a change waits on a doubt, or on a tap as no
play, are saved (the game goes on at the table meanwhile, and a restart that lost them would
leave the log too far behind the table for any one board to explain): a restart resumes the
hold as it was. So is the camera's last board, with the player's corrections standing on it
(one the camera ended stays ended over a restart).

An alert belongs to a logged move and a rule it breaks; it stays until acknowledged, or
until that move is taken back or corrected so that it breaks the rule no more (the table
has then dealt with it). Acknowledgements are stored, so a restart does not raise them again.
A piece lifted from under later play takes back the moves after it, and those still on the
table are logged again as new events: each names the event it logs again, and keeps the
alerts acknowledged on any move of that chain acknowledged (the same move breaking the same
rule; a rule it breaks anew is raised); an acknowledgement of the old move's alert, tapped on
a page drawn before the lift, acknowledges the new move's too.

Everything that differs between games is the game's adapter (:mod:`companion_app.adapters`):
how a camera board becomes events, how events become judged turns, what the page draws.
This module is the same for every game.
"""
from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from rules.records import InvalidInput, colour_names, setup_of
from rules.sgf import to_sgf
from tableref.report import turn_json

from .adapters import LIVE_GAMES, Derived, GameAdapter, SessionError, adapter_for
from .store import AlertRow, DamagedRecord, EventRow, KeptBoard, SessionRow, Store

__all__ = ["LIVE_GAMES", "Broadcast", "Camera", "Mailbox", "Session", "SessionError", "parse_setup"]


def logged_earlier_as(relogs: dict[int, int], event_id: int) -> list[int]:
    """The events a move logged again after lifts logs again (``relogs``: each such event and
    the one it names), nearest first; none for a move logged once."""
    chain = []
    while (event_id := relogs.get(event_id)) is not None:
        chain.append(event_id)
    return chain


def logged_again_as(relogs: dict[int, int], event_id: int) -> list[int]:
    """The events that log the move ``event_id`` again after lifts, in log order (a chain: each
    names the one before it); none when no lift took it back and logged it again."""
    chain = {event_id}
    for later, earlier in sorted(relogs.items()):
        if earlier in chain:
            chain.add(later)
    return sorted(chain - {event_id})


# --- pub/sub -----------------------------------------------------------------------------

class Mailbox:
    """One subscriber's inbox holding only the newest message.

    The page redraws from a full snapshot, so a client that falls behind loses nothing by
    skipping states, and the camera loop publishing into it never waits for it.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._item: str | None = None
        self.closed = False

    def put(self, item: str) -> None:
        with self._cond:
            self._item = item
            self._cond.notify_all()

    def get(self, timeout: float) -> str | None:
        """The newest message, waiting up to ``timeout`` seconds; None when nothing came."""
        with self._cond:
            if self._item is None and not self.closed:
                self._cond.wait(timeout)
            item, self._item = self._item, None
            return item

    def close(self) -> None:
        """Wake the reader for good (the server stops: its stream must end so pages reconnect)."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class Broadcast:
    """Fan-out of snapshots to every open page (Server-Sent Events), never blocking.

    It numbers what it sends: every session publishing through it (a new game, KOMBO's next
    one, the game resumed) takes the next version, and each inbox gets them in that order.
    A page that is also handed snapshots by its own requests, which may arrive after a newer
    state was streamed, keeps the newest by ``version``: within one ``run`` (this server
    process) a higher version is always the later state; a new run is a restarted server.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._boxes: set[Mailbox] = set()
        self.run = secrets.token_hex(8)
        self.version = 0

    def subscribe(self) -> Mailbox:
        box = Mailbox()
        with self._lock:
            self._boxes.add(box)
        return box

    def unsubscribe(self, box: Mailbox) -> None:
        with self._lock:
            self._boxes.discard(box)

    def publish(self, item_for: Callable[[int], str]) -> int:
        """Send ``item_for(version)``, the next version, to every inbox; return that version.
        Numbering and delivery are one step, so no inbox is left holding an older item."""
        with self._lock:
            self.version += 1
            item = item_for(self.version)
            for box in self._boxes:
                box.put(item)  # never waits: an inbox only keeps the newest
            return self.version

    def close(self) -> None:
        with self._lock:
            boxes, self._boxes = list(self._boxes), set()
        for box in boxes:
            box.close()


# --- the session -------------------------------------------------------------------------

@dataclass
class Camera:
    """The live loop's last word on the camera, shown as is on the page."""

    status: str = "none"  # the live loop's status code; "none" without a camera
    message: str = "no camera: taps and photo review only"


@dataclass
class Session:
    """One table's game; every method is safe to call from the camera loop and web threads."""

    store: Store
    row: SessionRow
    setup: Any  # the game module's Setup
    adapter: GameAdapter
    broadcast: Broadcast = field(default_factory=Broadcast)
    version: int = 0
    camera: Camera = field(default_factory=Camera)
    retired: bool = False  # another game is the table's now: publish nothing more (see retire)
    notice: str | None = None  # what a resume could not bring back, for the user (see _resume_hold)
    _events: list[EventRow] = field(default_factory=list)
    _derived: Derived | None = None
    _alerts: dict[tuple[int, str], AlertRow] = field(default_factory=dict)
    _held: list[KeptBoard] = field(default_factory=list)  # the hold's boards as last saved
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _snapshot: dict | None = None
    _layout: dict | None = None

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def start(cls, store: Store, setup_doc: dict, game: str = "blokus",
              broadcast: Broadcast | None = None) -> "Session":
        """A new game (closing the open one) from the setup page's document."""
        if game not in LIVE_GAMES:
            raise SessionError(f"live refereeing of {game} is not supported yet")
        setup = parse_setup(game, setup_doc)
        adapter_for(game, setup, setup_doc)  # refuses a bad document before it is stored for good
        row = store.create_session(game, setup_doc)
        return cls._open(store, row, setup, broadcast)

    @classmethod
    def resume(cls, store: Store, broadcast: Broadcast | None = None) -> "Session | None":
        """The latest open session, exactly where it was; None when there is none."""
        row = store.latest_open_session()
        if row is None:
            return None
        return cls._open(store, row, parse_setup(row.game, row.setup), broadcast)

    @classmethod
    def _open(cls, store: Store, row: SessionRow, setup: Any, broadcast: Broadcast | None) -> "Session":
        s = cls(store, row, setup, adapter_for(row.game, setup, row.setup), broadcast or Broadcast())
        s._events = store.events(row.id)
        s._alerts = {(a.event_id, a.code): a for a in store.alerts(row.id)}
        s._rederive()
        s.adapter.restore(s._events, s._derived)
        s.notice = s._resume_hold()
        s._publish()  # pages already open switch to this game
        return s

    def _resume_hold(self) -> str | None:
        """Hold again the boards the hold kept before the restart. A saved board that no longer
        reads is camera data, not the game's record: the game resumes without the hold (the
        boards are dropped, or every restart would stumble on them) and the notice says what was
        lost and what a player may have to do: lay again what was held back, or nothing where only
        the camera's last board was saved; the log, the record itself, is whole."""
        try:
            self._held = self.store.kept_boards(self.id)
            self.adapter.resume_hold(self._held)
            return None
        except (DamagedRecord, SessionError) as e:
            held = self.store.holds_a_change(self.id)
            self.store.keep_boards(self.id, [])
            self._held = []
            lost, advice = self.adapter.lost_hold if held else self.adapter.lost_camera_board
            return f"the game resumed, but {lost} could not be read ({e.message}): {advice}"

    @property
    def id(self) -> int:
        return self.row.id

    # --- input ---------------------------------------------------------------------------

    def observe(self, board: Any, uncertain: Sequence = (), t: float | None = None) -> None:
        """A newly stable board from the camera, in the game's neutral form (see the
        adapters): record what it shows was played."""
        t = time.time() if t is None else t
        with self._lock:
            items = self.adapter.observe(self._derived, board, uncertain, t)
            if items:
                self._record(items)
                self._catch_up()
            else:
                self._publish()
            self._save_hold()

    def correct(self, doc: dict) -> None:
        """The user says what a misread cell, field or token really shows (a tap on a cell the
        camera held a change back for may log that change: see the adapter's ``corrected``)."""
        with self._lock:
            self._record(self.adapter.corrected(self._derived, doc))
            self._catch_up()
            self._save_hold()

    def correct_cell(self, cell: Sequence[int] | str, colour: str) -> None:
        """The user says ``cell`` is really ``colour`` (``.`` for empty)."""
        self.correct({"cell": cell, "colour": colour})

    def amend(self, doc: dict) -> None:
        """A detail of a logged move the camera cannot see, entered by tap (the cards played
        in Geometrius; the ring tile or the 5+1 token in Equilibrix)."""
        with self._lock:
            self._record([("amend", self.adapter.amendment(self._derived, doc))])

    def take_back(self, index: int, event: Any = None) -> None:
        """Take back the move at turn ``index`` (the piece lifted off; later moves stay).

        ``event``: the move's event as the page showed it. A later move takes the number of one
        taken back, so a second tap on the same take-back (or a second tablet's) would lift
        that one too; with ``event`` it is refused instead.

        During a hold the boards kept stay kept, less the piece (see the adapter's
        ``taken_back_by_tap``), saved with the take-back; a doubt that held them back only
        beside the piece holds nothing now, so they are caught up on at once.
        """
        with self._lock:
            sources = self._derived.sources
            if type(index) is not int or not 0 <= index < len(sources):  # JSON true is no move number
                raise SessionError(f"there is no move {str(index)[:40]}")
            if event is not None and sources[index] != event:
                raise SessionError(f"move {index + 1} was taken back or changed meanwhile: nothing was taken back")
            if sources[index] is None:
                raise SessionError("that pass follows from the board (no legal placement was left); "
                                   "take back a placement instead")
            events = self.adapter.turn_events(self._derived, index)
            self._record([("take_back", self.adapter.taken_back_by_tap(self._derived, events))])
            self._catch_up()
            self._save_hold()  # the catch-up may have released or dropped the boards kept

    def declare_pass(self, seen: Any = None) -> None:
        """The colour to move says it passes (or, in Geometrius, makes a turn that changes nothing).

        ``seen``: the colour the page showed to move. A double tap on Pass sends two passes; the
        second, made for a colour that is no longer to move, is refused rather than passing the
        next colour too.
        """
        with self._lock:
            payload = self.adapter.pass_payload(self._derived)
            if seen is not None and seen != payload["colour"]:
                names = colour_names(self.row.game, self.setup)
                said = names.get(seen, seen[:40]) if isinstance(seen, str) else "that colour"
                raise SessionError(f"{said} has passed already (or moved): "
                                   f"{names.get(payload['colour'], payload['colour'])} is to move, nothing was passed")
            self._record([("pass", payload)])

    def acknowledge(self, alert_id: int) -> None:
        """The player dealt with an alert. Its move's alert for the same code on each move that
        logs it again after a lift is acknowledged with it: a tap on a page drawn before the
        lift names the old move's alert, and the warning would be raised again on the new one."""
        with self._lock:
            # an id past SQLite's integers (a hand-typed URL) names no alert either
            alert = next((a for a in self._alerts.values() if a.id == alert_id), None)
            later = logged_again_as(self._relogs(), alert.event_id) if alert is not None else []
            if alert_id >= 2 ** 63 or not self.store.acknowledge(self.id, alert_id, later):
                raise SessionError(f"there is no alert {alert_id}")
            self._alerts = {(a.event_id, a.code): a for a in self.store.alerts(self.id)}
            self._publish()

    def set_camera(self, status: str, message: str) -> None:
        with self._lock:
            self.camera = Camera(status, message)
            self._publish()

    def retire(self) -> None:
        """Another game is the table's now (a new game, KOMBO's next one). A late tap or camera
        frame may still reach this session: its events are kept, but it publishes nothing more,
        since a snapshot of it would take a later version than the new game's and every page
        would draw the closed game over it."""
        with self._lock:
            self.retired = True

    # --- output --------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Everything the live page shows, with a version that grows with every change (see
        :class:`Broadcast`: the version is the broadcast's, shared by the sessions it serves)."""
        with self._lock:
            if self._snapshot is None:
                self._snapshot = self._build_snapshot()
            return self._snapshot

    def next_kombo_doc(self, variant: Any) -> dict:
        """The setup document of KOMBO's next game (Equilibrix), the loser's ``variant`` chosen."""
        if self.row.game != "equilibrix":
            raise SessionError("KOMBO is an Equilibrix series")
        with self._lock:
            return {**self.adapter.next_kombo_doc(self._derived, self.row.setup, variant), "game": "equilibrix"}

    def export_record(self) -> dict:
        with self._lock:
            return self.adapter.record(self._derived)

    def export_sgf(self) -> str:
        if self.row.game != "blokus":
            raise SessionError("Pentobi files (.blksgf) hold Blokus games only: export the game record")
        with self._lock:
            return to_sgf(self._derived.game, self.setup)

    # --- internals -----------------------------------------------------------------------

    def _record(self, items: list[tuple[str, dict]]) -> None:
        """Write events (committed before anything else happens), with the boards the hold
        keeps after them when those changed (the adapter drops a board it explains before it
        returns the events: both go in one transaction), then re-derive and publish."""
        held = self._changed_hold()
        rows = self.store.add_events(self.id, items, held)
        self._held = self._held if held is None else held
        self._events.extend(rows)
        self._rederive(rows)
        self._publish()

    def _catch_up(self) -> None:
        """Log, one after another, the camera boards kept while a change was held back that
        now explain (the adapter's ``catch_up``): each is explained against the log as the
        one before left it, so no board explains more than ``MOST_PER_STEP`` placements of the
        colours taking turns."""
        while items := self.adapter.catch_up(self._derived):
            self._record(items)

    def _save_hold(self) -> None:
        """Save the boards the hold keeps when they changed without an event: a camera board
        kept, or boards dropped that explain nothing (see :meth:`_record` for the others)."""
        held = self._changed_hold()
        if held is not None:
            self.store.keep_boards(self.id, held)
            self._held = held

    def _changed_hold(self) -> list[KeptBoard] | None:
        """The boards the hold keeps, as saved, when they differ from those saved last (so
        they are written once per stable board kept, and once when the hold is released or a
        take-back lifts a piece off them; a cell game's camera's last board after them, once
        per stable board, during a hold or not, and with the tap or take-back that changes the
        corrections standing, saved with it); None otherwise, and for a retired session (never
        resumed)."""
        held = self.adapter.held_boards()
        return held if held != self._held and not self.retired else None

    def _rederive(self, new: list[EventRow] | None = None) -> None:
        """Replay the log (the adapter may just play new moves on: the common case, kept fast)."""
        self._derived = self.adapter.derive(self._events, self._derived, new or ())
        self._sync_alerts()

    def _turns(self) -> tuple:
        game = self._derived.game
        return game.turns if game is not None else ()

    def _sync_alerts(self) -> None:
        """Give every rule broken by a logged move an alert row (kept across restarts); a move
        logged again after lifts (its event names the one it logs again: ``logs_again``) takes
        the acknowledgement of an alert for the same rule on any move of that chain (see the
        store's ``ensure_alerts``)."""
        missing = []
        for turn, event_id in zip(self._turns(), self._derived.sources):
            for v in turn.violations:
                key = (event_id, v.code)
                if event_id is not None and key not in self._alerts:
                    missing.append((event_id, v.code, v.rule, v.message, [list(c) for c in v.cells]))
        if missing:
            relogs = self._relogs()
            self._alerts = {(a.event_id, a.code): a for a in self.store.ensure_alerts(
                self.id, [(*item, logged_earlier_as(relogs, item[0])) for item in missing])}

    def _relogs(self) -> dict[int, int]:
        """Each move logged again after a lift, and the event it logs again (``logs_again``).
        A link is to an earlier event; one naming anything else (a damaged payload) is no link,
        so following links always ends."""
        return {e.id: e.payload["logs_again"] for e in self._events
                if type(e.payload.get("logs_again")) is int and e.payload["logs_again"] < e.id}

    def _publish(self) -> None:
        if self.retired:
            self._snapshot = None
            return

        def item(version: int) -> str:
            self.version = version
            self._snapshot = None
            return json.dumps(self.snapshot())

        self.broadcast.publish(item)

    def _layout_json(self) -> dict:
        """The board's drawing (static for the session, so built once)."""
        if self._layout is None:
            self._layout = self.adapter.layout(self._derived)
        return self._layout

    def _build_snapshot(self) -> dict:
        derived, adapter = self._derived, self.adapter
        game = derived.game
        history = []
        for turn, event_id in zip(self._turns(), derived.sources):
            doc = turn_json(turn, adapter.cell_json)
            doc["cells"] = [adapter.cell_json(c) for c in adapter.move_cells(turn.move)]
            doc["auto"] = event_id is None
            doc["event"] = event_id
            doc.update(adapter.turn_details(turn))
            history.append(doc)
        alerts = []
        for turn, event_id in zip(self._turns(), derived.sources):
            for v in turn.violations:
                a = self._alerts.get((event_id, v.code))
                if a is None or a.acknowledged:
                    continue
                piece_cells = [adapter.cell_json(c) for c in adapter.move_cells(turn.move)]
                alerts.append({"id": a.id, "index": turn.index, "colour": turn.move.colour, "rule": v.rule,
                               "code": v.code, "message": v.message, "warning": v.warning,
                               "piece": turn.piece,
                               "cells": [adapter.cell_json(c) for c in v.cells] or piece_cells,
                               "piece_cells": piece_cells})
        over = bool(game is not None and game.over)
        return {
            "version": self.version,
            "run": self.broadcast.run,
            "session": {"id": self.id, "game": self.row.game, "variant": self.setup.variant,
                        "created": self.row.created},
            "players": adapter.players(),
            "layout": self._layout_json(),
            **adapter.view(derived),
            "to_move": None if over else (game.colour_to_move if game is not None else self.setup.turn_order[0]),
            "game_over": over,
            "history": history,
            "scores": adapter.scores(derived),
            "alerts": alerts,
            "camera": {"status": self.camera.status, "message": self.camera.message},
        }


def parse_setup(game: str, doc: dict) -> Any:
    """The setup page's document (record-style: variant, players, settings) as the game's Setup;
    a document the rules refuse is a SessionError with the rules' code (``bad_setup``, ...)."""
    try:
        return setup_of(game, doc)
    except InvalidInput as e:
        raise SessionError(e.message, e.code) from None
