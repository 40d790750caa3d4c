"""A live game as recorded at the table: an event log, and everything else derived from it.

The log (moves seen by the camera, one-tap corrections, take-backs, declared passes) is
the only thing written to disk; the match, board, scores, whose turn and alerts are
replayed from it. So a correction or a take-back far back in the game re-judges every
later move exactly as a fresh replay would, and a restarted server resumes where it was.
Forced passes are not logged: a colour with no legal placement passes, which the board
decides, so they are re-derived after every change and can never go stale.

An alert belongs to a logged move and a rule it breaks; it stays until acknowledged, or
until that move is taken back or corrected so that it breaks the rule no more (the table
has then dealt with it). Acknowledgements are stored, so a restart does not raise them again.

One code path serves every game played on the shared placement engine (Blokus, Gemblo): the
game module (``rules.records.GAME_RULES[game]``) is data here, and boards travel in the
game-neutral form of :mod:`rules.observe`, ``{cell: colour}`` of the occupied cells.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Sequence

from rules.board import Board
from rules.errors import InputError
from rules.lattice import Cell
from rules.observe import EMPTY, BoardLike, as_cell, laid_cells, occupied, passes_due
from rules.observe import observe as explain_board
from rules.placement import Match, Move
from rules.records import GAME_RULES, InvalidInput, record_json, setup_of
from rules.sgf import to_sgf
from tableref.report import turn_json

from .layout import layout_json
from .store import AlertRow, EventRow, SessionRow, Store

LIVE_GAMES = ("blokus", "gemblo")  # the games on the shared placement engine


class SessionError(InputError):
    """A request the session cannot carry out; ``message`` is shown to the user as is."""

    def __init__(self, message: str):
        super().__init__("bad_request", message)


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
    """Fan-out of snapshots to every open page (Server-Sent Events), never blocking."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._boxes: set[Mailbox] = set()

    def subscribe(self) -> Mailbox:
        box = Mailbox()
        with self._lock:
            self._boxes.add(box)
        return box

    def unsubscribe(self, box: Mailbox) -> None:
        with self._lock:
            self._boxes.discard(box)

    def publish(self, item: str) -> None:
        with self._lock:
            boxes = list(self._boxes)
        for box in boxes:
            box.put(item)

    def close(self) -> None:
        with self._lock:
            boxes, self._boxes = list(self._boxes), set()
        for box in boxes:
            box.close()


# --- replaying the log -------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One move of the game as it now stands, and the event that put it there."""

    event_id: int
    move: Move


@dataclass(frozen=True)
class Override:
    """A corrected cell: while the camera reads ``misread`` there, it means ``colour``.

    Without it the next camera board would bring the misread straight back. Once the camera
    reads anything else there the table changed, and the camera is believed again.
    """

    misread: str
    colour: str


def replay(events: Sequence[EventRow], board: Board) -> list[Entry]:
    """The moves the log stands for, in order, after corrections and take-backs."""
    entries: list[Entry] = []
    for event in events:
        p = event.payload
        if event.kind == "move":
            entries.append(Entry(event.id, Move(p["colour"], tuple(tuple(c) for c in p["cells"]))))
        elif event.kind == "pass":
            entries.append(Entry(event.id, Move(p["colour"], passed=True)))
        elif event.kind == "take_back":
            gone = set(p["events"])
            entries = [e for e in entries if e.event_id not in gone]
        elif event.kind == "correction":
            entries = correct(entries, corrected_cell(p), p["colour"], event.id, board)
    return entries


def corrected_cell(payload: dict) -> Cell:
    """The cell of a correction event (logs written before Gemblo name it by row and col)."""
    return as_cell(payload["cell"]) if "cell" in payload else (payload["row"], payload["col"])


def correct(entries: list[Entry], cell: Cell, colour: str, event_id: int, board: Board) -> list[Entry]:
    """The moves after saying "``cell`` is really ``colour``" (``.`` for empty).

    The cell leaves the move that held it; a coloured cell joins the latest move of that
    colour it touches along an edge (the piece it was misread out of), or else is a piece on
    its own, placed now (a monomino the camera missed).
    """
    out = []
    for e in entries:
        if cell in e.move.cells and e.move.colour != colour:
            cells = tuple(c for c in e.move.cells if c != cell)
            if not cells:
                continue
            e = Entry(e.event_id, Move(e.move.colour, cells))
        out.append(e)
    if colour == EMPTY or any(cell in e.move.cells for e in out):
        return out
    near = set(board.cells_of(board.edge[board.index[cell]]))
    for i in range(len(out) - 1, -1, -1):
        e = out[i]
        if e.move.colour == colour and not e.move.passed and near & set(e.move.cells):
            out[i] = Entry(e.event_id, Move(colour, e.move.cells + (cell,)))
            return out
    return out + [Entry(event_id, Move(colour, (cell,)))]


@dataclass(frozen=True)
class Derived:
    """The match replayed from the entries, with the auto passes in between.

    ``sources[i]`` is the event behind turn ``i`` (None for a pass the board made due).
    """

    match: Match
    sources: tuple[int | None, ...]


def derive(fresh: Match, entries: Sequence[Entry], start: Derived | None = None) -> Derived:
    """Play ``entries`` after ``start`` (``fresh``, the game's empty match, when None)."""
    match = start.match if start else fresh
    sources = list(start.sources) if start else []
    for entry in entries:
        for colour in passes_due(match):
            if colour == entry.move.colour:
                break
            match = match.play(Move(colour, passed=True))
            sources.append(None)
        match = match.play(entry.move)
        sources.append(entry.event_id)
    return Derived(match, tuple(sources))


def with_passes(derived: Derived) -> Derived:
    """The passes due now, so the page says "Yellow passes" as soon as Yellow is stuck."""
    match, sources = derived.match, list(derived.sources)
    for colour in passes_due(match):
        match = match.play(Move(colour, passed=True))
        sources.append(None)
    return Derived(match, tuple(sources))


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
    broadcast: Broadcast = field(default_factory=Broadcast)
    version: int = 0
    camera: Camera = field(default_factory=Camera)
    _events: list[EventRow] = field(default_factory=list)
    _entries: list[Entry] = field(default_factory=list)
    _core: Derived | None = None  # entries played, before the trailing passes
    _derived: Derived | None = None
    _alerts: dict[tuple[int, str], AlertRow] = field(default_factory=dict)
    _overrides: dict[Cell, Override] = field(default_factory=dict)
    _camera_board: dict[Cell, str] | None = None
    _uncertain: tuple[Cell, ...] = ()
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
        s = cls(store, row, setup, broadcast or Broadcast())
        s._events = store.events(row.id)
        s._alerts = {(a.event_id, a.code): a for a in store.alerts(row.id)}
        s._rederive()
        s._overrides = s._overrides_from_log()
        s._publish()  # pages already open switch to this game
        return s

    @property
    def id(self) -> int:
        return self.row.id

    @property
    def module(self) -> ModuleType:
        return GAME_RULES[self.row.game]

    @property
    def board(self) -> Board:
        return self._derived.match.rules.board

    # --- input ---------------------------------------------------------------------------

    def observe(self, board: BoardLike, uncertain: Sequence[Cell] = (), t: float | None = None) -> None:
        """A newly stable board from the camera (``{cell: colour}``, see :func:`rules.observe.occupied`):
        record what it shows was played."""
        t = time.time() if t is None else t
        with self._lock:
            seen_now = occupied(board)
            self._camera_board = seen_now
            self._uncertain = tuple(as_cell(c) for c in uncertain)
            self._overrides = {cell: o for cell, o in self._overrides.items()
                               if seen_now.get(cell, EMPTY) == o.misread}
            if self._unsure_change():
                self._publish()  # part of the change could not be read: wait for a clearer board
                return
            seen = explain_board(self._derived.match, self._with_overrides(seen_now))
            items: list[tuple[str, dict]] = []
            if seen.taken_back:
                items.append(("take_back", {"events": self._last_placements(seen.taken_back),
                                            "source": "camera", "t": t}))
            for move in seen.moves:
                items.append(("move", {"colour": move.colour, "cells": [list(c) for c in move.cells],
                                       "source": "camera", "t": t}))
            if items:
                self._record(items)
            else:
                self._publish()

    def correct_cell(self, cell: Sequence[int], colour: str) -> None:
        """The user says ``cell`` is really ``colour`` (``.`` for empty)."""
        pickable = self.module.COLOURS + (EMPTY,)
        if colour not in pickable:
            raise SessionError(f"unknown colour {colour!r} (use {' '.join(pickable)})")
        if not (isinstance(cell, (list, tuple)) and len(cell) == 2 and all(type(x) is int for x in cell)
                and tuple(cell) in self.board.index):
            raise SessionError(f"cell {cell!r} is not on the {self.row.game} board")
        cell = tuple(cell)
        with self._lock:
            misread = self._camera_board.get(cell, EMPTY) if self._camera_board is not None else None
            self._overrides.pop(cell, None)
            if misread is not None and misread != colour:
                self._overrides[cell] = Override(misread, colour)
            self._record([("correction", {"cell": list(cell), "colour": colour, "misread": misread})])

    def take_back(self, index: int) -> None:
        """Take back the move at turn ``index`` (the piece lifted off; later moves stay)."""
        with self._lock:
            sources = self._derived.sources
            if not (isinstance(index, int) and 0 <= index < len(sources)):
                raise SessionError(f"there is no move {index}")
            event_id = sources[index]
            if event_id is None:
                raise SessionError("that pass follows from the board (no legal placement was left); "
                                   "take back a placement instead")
            self._record([("take_back", {"events": [event_id], "source": "user"})])

    def declare_pass(self) -> None:
        """The colour to move says it passes (B7: a warning if it could still place)."""
        with self._lock:
            match = self._derived.match
            if match.over:
                raise SessionError("the game is over: nobody can place any more")
            self._record([("pass", {"colour": match.colour_to_move, "source": "user"})])

    def acknowledge(self, alert_id: int) -> None:
        with self._lock:
            if not self.store.acknowledge(self.id, alert_id):
                raise SessionError(f"there is no alert {alert_id}")
            self._alerts = {(a.event_id, a.code): a for a in self.store.alerts(self.id)}
            self._publish()

    def set_camera(self, status: str, message: str) -> None:
        with self._lock:
            self.camera = Camera(status, message)
            self._publish()

    # --- output --------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Everything the live page shows, with a version that grows with every change."""
        with self._lock:
            if self._snapshot is None:
                self._snapshot = self._build_snapshot()
            return self._snapshot

    def export_record(self) -> dict:
        with self._lock:
            return record_json(self._derived.match, self.setup)

    def export_sgf(self) -> str:
        if self.row.game != "blokus":
            raise SessionError("Pentobi files (.blksgf) hold Blokus games only: export the game record")
        with self._lock:
            return to_sgf(self._derived.match, self.setup)

    # --- internals -----------------------------------------------------------------------

    def _record(self, items: list[tuple[str, dict]]) -> None:
        """Write events (committed before anything else happens), then re-derive and publish."""
        rows = self.store.add_events(self.id, items)
        self._events.extend(rows)
        self._rederive(rows)
        self._publish()

    def _rederive(self, new: list[EventRow] | None = None) -> None:
        """Replay the log; new moves at the end are just played on (the common case, kept fast)."""
        fresh = self.module.new_match(self.setup)
        if new and self._core is not None and all(e.kind == "move" for e in new):
            added = replay(new, fresh.rules.board)
            self._entries = self._entries + added
            self._core = derive(fresh, added, self._core)
        else:
            self._entries = replay(self._events, fresh.rules.board)
            self._core = derive(fresh, self._entries)
        self._derived = with_passes(self._core)
        self._sync_alerts()

    def _sync_alerts(self) -> None:
        """Give every rule broken by a logged move an alert row (kept across restarts)."""
        missing = []
        for turn, event_id in zip(self._derived.match.turns, self._derived.sources):
            for v in turn.violations:
                key = (event_id, v.code)
                if event_id is not None and key not in self._alerts:
                    missing.append((event_id, v.code, v.rule, v.message, [list(c) for c in v.cells]))
        if missing:
            self._alerts = {(a.event_id, a.code): a for a in self.store.ensure_alerts(self.id, missing)}

    def _publish(self) -> None:
        self.version += 1
        self._snapshot = None
        self.broadcast.publish(json.dumps(self.snapshot()))

    def _last_placements(self, n: int) -> list[int]:
        """Events of the last ``n`` placements and every move logged after the first."""
        placed = [i for i, t in enumerate(self._derived.match.turns) if not t.move.passed]
        return [e for e in self._derived.sources[placed[-n]:] if e is not None]

    def _with_overrides(self, seen: dict[Cell, str]) -> dict[Cell, str]:
        out = dict(seen)
        for cell, o in self._overrides.items():
            if out.get(cell, EMPTY) == o.misread:
                out[cell] = o.colour
        return {c: colour for c, colour in out.items() if colour != EMPTY}

    def _overrides_from_log(self) -> dict[Cell, Override]:
        """Corrections still standing after a restart: the latest per cell, if the game agrees."""
        laid = laid_cells(self._derived.match)
        out = {}
        for event in self._events:
            if event.kind == "correction":
                p = event.payload
                cell = corrected_cell(p)
                out.pop(cell, None)
                if p.get("misread") not in (None, p["colour"]):
                    out[cell] = Override(p["misread"], p["colour"])
        return {cell: o for cell, o in out.items() if laid.get(cell, EMPTY) == o.colour}

    def _differences(self) -> tuple[Cell, ...]:
        """Cells where the camera's last board and the game disagree (shown as unsure).

        These are the cells :func:`rules.observe.observe` could not explain, or those of a
        piece the user took back that is still on the table.
        """
        if self._camera_board is None:
            return ()
        seen = self._with_overrides(self._camera_board)
        game = laid_cells(self._derived.match)
        return tuple(sorted(c for c in seen.keys() | game.keys() if seen.get(c) != game.get(c)))

    def _unsure_change(self) -> bool:
        """Whether a cell that changed lies on or next to one the camera could not read.

        Such a change may be a piece seen in part; recording it would invent a wrong move or
        take back a piece that is still there. Cells the user corrected count as read.
        """
        board = self.board
        unsure = {c for c in self._uncertain if c not in self._overrides}
        near = set(unsure)
        for cell in unsure & board.index.keys():  # next to: along an edge or at a corner/bridge
            i = board.index[cell]
            near.update(board.cells_of(board.edge[i] | board.contact_mask[i]))
        return any(c in near for c in self._differences())

    def _layout_json(self) -> dict:
        """The board's drawing (static for the session, so built once)."""
        if self._layout is None:
            self._layout = layout_json(self._derived.match.rules, self.module.COLOURS)
        return self._layout

    def _build_snapshot(self) -> dict:
        match, sources = self._derived.match, self._derived.sources
        sheet = self.module.score_match(match, self.setup)
        history = []
        for turn, event_id in zip(match.turns, sources):
            doc = turn_json(turn)
            doc["cells"] = [list(c) for c in turn.move.cells]
            doc["auto"] = event_id is None
            history.append(doc)
        alerts = []
        for turn, event_id in zip(match.turns, sources):
            for v in turn.violations:
                a = self._alerts.get((event_id, v.code))
                if a is None or a.acknowledged:
                    continue
                alerts.append({"id": a.id, "index": turn.index, "colour": turn.move.colour, "rule": v.rule,
                               "code": v.code, "message": v.message, "warning": v.warning,
                               "piece": turn.piece, "cells": [list(c) for c in (v.cells or turn.move.cells)],
                               "piece_cells": [list(c) for c in turn.move.cells]})
        last = next((t for t in reversed(match.turns) if not t.move.passed), None)
        over = match.over
        return {
            "version": self.version,
            "session": {"id": self.id, "game": self.row.game, "variant": self.setup.variant,
                        "created": self.row.created},
            "players": [{"name": n, "colours": list(cs)} for n, cs in self.setup.player_list],
            "layout": self._layout_json(),
            "cells": {f"{a},{b}": colour for (a, b), colour in laid_cells(match).items()},
            "last": {"index": last.index, "colour": last.move.colour,
                     "cells": [list(c) for c in last.move.cells]} if last else None,
            "to_move": None if over else match.colour_to_move,
            "game_over": over,
            "history": history,
            "scores": sheet.to_json(),
            "alerts": alerts,
            "uncertain": [list(c) for c in sorted(set(self._uncertain) | set(self._differences()))],
            "camera": {"status": self.camera.status, "message": self.camera.message},
        }


def parse_setup(game: str, doc: dict) -> Any:
    """The setup page's document (record-style: variant, players, settings) as the game's Setup."""
    try:
        return setup_of(game, doc)
    except InvalidInput as e:
        raise SessionError(e.message) from None
