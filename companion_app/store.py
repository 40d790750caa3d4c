"""SQLite persistence for live sessions: what was recorded at the table must survive a crash.

One file, ``tableref.sqlite3``, in the data folder. Every write is its own committed
transaction in WAL mode with ``synchronous=FULL``, so a move recorded a moment before the
process is killed (or the power goes) is on disk. A file that SQLite cannot read is moved
aside under a new name and reported, never deleted: it may hold a game someone wants back.
The schema carries a version (``PRAGMA user_version``) so a later release can migrate it.
Photo reviews (the review page) live in the same file: what was read, the user's corrections
and the latest scores, with the overlay and straightened board as JPEG (never the photo).
The camera boards a live game holds while a change waits on a doubt are saved too (``kept_boards``,
schema 3): the game goes on at the table meanwhile, and only those boards tell its moves apart.
The camera's last board is saved there too, marked as not held (schema 4): alone outside a hold,
after the held boards during one, with the player's corrections standing on the table as it was
saved (schema 5).
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from rules.errors import InputError, parse_json

FILENAME = "tableref.sqlite3"
SCHEMA_VERSION = 5

# Each entry upgrades the schema from version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        game TEXT NOT NULL,
        setup TEXT NOT NULL,
        created REAL NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed'))
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE INDEX events_by_session ON events(session_id, id);
    CREATE TABLE alerts (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        event_id INTEGER NOT NULL REFERENCES events(id),
        code TEXT NOT NULL,
        rule TEXT NOT NULL,
        message TEXT NOT NULL,
        cells TEXT NOT NULL,
        acknowledged INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL,
        UNIQUE (session_id, event_id, code)
    );
    """,
    """
    CREATE TABLE reviews (
        id TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        variant TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        read TEXT NOT NULL,
        uncertain TEXT NOT NULL,
        state TEXT NOT NULL,
        corrections TEXT NOT NULL,
        scores TEXT NOT NULL
    );
    CREATE INDEX reviews_by_time ON reviews(created);
    CREATE TABLE review_images (
        review_id TEXT NOT NULL REFERENCES reviews(id),
        name TEXT NOT NULL,
        jpeg BLOB NOT NULL,
        PRIMARY KEY (review_id, name)
    );
    """,
    """
    CREATE TABLE kept_boards (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        board TEXT NOT NULL,
        uncertain TEXT NOT NULL,
        t REAL NOT NULL
    );
    CREATE INDEX kept_boards_by_session ON kept_boards(session_id, id);
    """,
    """
    ALTER TABLE kept_boards ADD COLUMN held INTEGER NOT NULL DEFAULT 1;
    """,
    """
    ALTER TABLE kept_boards ADD COLUMN corrections TEXT;
    """,
)

# Reviews beyond this many (newest first) keep their reading and scores but lose their images,
# so the file does not grow by a few hundred kB with every photo ever scored.
REVIEWS_WITH_IMAGES = 50


class StoreError(InputError):
    """The data folder or its database cannot be used; ``message`` says why in plain words."""

    def __init__(self, message: str, code: str = "data_unusable"):
        super().__init__(code, message)


class DamagedRecord(StoreError):
    """A row whose saved JSON no longer parses (the file itself opens): that one game or review
    cannot be shown, the others can; the row is left as it is."""

    def __init__(self, what: str, why: str = "its data is not valid JSON"):
        super().__init__(f"the saved {what} is damaged ({why})", "data_damaged")


class CorruptDatabase(StoreError):
    """The database file was unreadable and has been moved to ``moved_to``."""

    def __init__(self, path: Path, moved_to: Path, detail: str):
        super().__init__(f"the saved-games file {path} is damaged ({detail}); it was moved to {moved_to} "
                         "and a new one is started")
        self.path, self.moved_to = path, moved_to


@dataclass(frozen=True)
class SessionRow:
    id: int
    game: str
    setup: dict
    created: float
    status: str


@dataclass(frozen=True)
class EventRow:
    id: int
    session_id: int
    kind: str
    payload: dict
    created: float


@dataclass(frozen=True)
class AlertRow:
    id: int
    event_id: int
    code: str
    rule: str
    message: str
    cells: tuple[tuple[int, int], ...]
    acknowledged: bool


@dataclass(frozen=True)
class KeptBoard:
    """A stable camera board a live game holds while a change waits (the adapter's ``Kept``), in
    plain JSON: ``board`` the occupied cells as ``[cell, colour]`` pairs, ``uncertain`` the cells
    the camera could not read then, cells named as the page names them; ``t`` its source time.
    Geometrius keeps its camera's last reading of each token this way (see its adapter's
    ``held_boards``, with no time): a tap after a restart reads them.

    ``held`` False: the camera's last board as it came, saved last, after the boards a hold
    keeps if any (a cell game's: the corrections standing on the table are judged on it, so a
    restart must not forget the board that ended one; rows saved before schema 4 are all held).
    ``corrections``, on that board: the player's corrections standing then, in the game's JSON
    (schema 5; None on a held board and on rows saved before). The board alone cannot tell
    which of the corrections the log brings back the camera ended on a board before it: one
    whose square it cannot read (a hand over it), or whose piece was lifted and laid again,
    reads on it as if it stood."""

    board: list
    uncertain: list
    t: float
    held: bool = True
    corrections: list | None = None


@dataclass(frozen=True)
class ReviewRow:
    """A photo review: the state as read and as corrected (contract state JSON), the cells the
    reader doubted and those the user set, the latest scores (contract scores JSON)."""

    id: str
    game: str
    variant: str | None
    created: float
    updated: float
    read: dict
    uncertain: list
    state: dict
    corrections: list
    scores: dict
    images: tuple[str, ...] = ()  # the names of its stored JPEG images
    damaged: bool = False  # its saved data no longer parses: listed, to be told, never opened


def default_data_dir() -> Path:
    """The user's data folder, as the XDG base-directory convention places it."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tableref"


def data_folder(data_dir: str | os.PathLike) -> Path:
    """The data folder, created when it is not there yet; StoreError when it cannot be."""
    folder = Path(data_dir)
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"the data folder {folder} is a file, not a folder: choose another --data folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the data folder {folder}: {e.strerror or e}") from None
    return folder


class Store:
    """The session database; safe to share between the camera loop and web requests."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self._conn = conn
        self._lock = threading.Lock()
        self.path = path

    @classmethod
    def open(cls, data_dir: str | os.PathLike) -> "Store":
        """Open (creating or migrating) the database in ``data_dir``.

        Raises :class:`CorruptDatabase` after moving an unreadable file aside, so the caller
        can tell the user and call ``open`` again for a fresh file.
        """
        path = data_folder(data_dir) / FILENAME
        try:
            conn = _connect(path)
        except sqlite3.OperationalError as e:
            # Locked, not permitted, not a file, a failing disk: nothing says the file is damaged,
            # and moving a good file aside would hide its games behind a fresh, empty one.
            raise StoreError(f"cannot open the saved-games file {path}: {e}") from None
        except sqlite3.DatabaseError as e:  # not a database, or damaged pages
            raise _move_aside(path, str(e)) from None
        return cls(conn, path)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- sessions ------------------------------------------------------------------------

    def create_session(self, game: str, setup: dict) -> SessionRow:
        """A new open session; any other open session is closed (one game at a table), and the
        boards its hold kept are dropped (a closed game is never resumed)."""
        now = time.time()
        with self._lock, _transaction(self._conn) as c:
            c.execute("DELETE FROM kept_boards WHERE session_id IN (SELECT id FROM sessions WHERE status = 'open')")
            c.execute("UPDATE sessions SET status = 'closed' WHERE status = 'open'")
            cur = c.execute("INSERT INTO sessions (game, setup, created) VALUES (?, ?, ?)",
                            (game, json.dumps(setup), now))
            return SessionRow(cur.lastrowid, game, setup, now, "open")

    def latest_open_session(self) -> SessionRow | None:
        with self._lock:
            row = self._conn.execute("SELECT id, game, setup, created, status FROM sessions "
                                     "WHERE status = 'open' ORDER BY id DESC LIMIT 1").fetchone()
        return _session(row) if row else None

    # --- events --------------------------------------------------------------------------

    def add_events(self, session_id: int, items: list[tuple[str, dict]],
                   kept: list[KeptBoard] | None = None) -> list[EventRow]:
        """Append events in one committed transaction: either all are on disk or none. With
        ``kept``, the boards the session's hold keeps after them replace those saved, in the
        same transaction: a board the events explain is never left saved as still held."""
        now = time.time()
        out = []
        with self._lock, _transaction(self._conn) as c:
            for kind, payload in items:
                cur = c.execute("INSERT INTO events (session_id, kind, payload, created) VALUES (?, ?, ?, ?)",
                                (session_id, kind, json.dumps(payload), now))
                out.append(EventRow(cur.lastrowid, session_id, kind, payload, now))
            if kept is not None:
                _save_kept(c, session_id, kept)
        return out

    def events(self, session_id: int) -> list[EventRow]:
        with self._lock:
            rows = self._conn.execute("SELECT id, session_id, kind, payload, created FROM events "
                                      "WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return [EventRow(i, s, k, _loads(p, f"event {i} of game {s}"), t) for i, s, k, p, t in rows]

    # --- alerts --------------------------------------------------------------------------

    def alerts(self, session_id: int) -> list[AlertRow]:
        with self._lock:
            rows = self._conn.execute("SELECT id, event_id, code, rule, message, cells, acknowledged FROM alerts "
                                      "WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return [_alert(r) for r in rows]

    def ensure_alerts(self, session_id: int,
                      items: list[tuple[int, str, str, str, list, Sequence[int]]]) -> list[AlertRow]:
        """Insert alerts ``(event_id, code, rule, message, cells, logs_again)`` not yet recorded.

        An alert is keyed by the move event and the reason code, so re-deriving the match
        after a correction finds the same alert (and its acknowledgement) again. A move logged
        again after lifts is a new event naming the ones it logs again (``logs_again``: the
        chain of links back, nearest first; none for any other move): its alert for a code is
        inserted acknowledged when the player acknowledged that code on any of them (the same
        warning on the same move: a re-log between that did not break the rule, so had no
        alert for it, breaks no chain), in the same transaction, so a restart finds it so.
        """
        now = time.time()
        with self._lock, _transaction(self._conn) as c:
            for event_id, code, rule, message, cells, logs_again in items:
                c.execute("INSERT INTO alerts (session_id, event_id, code, rule, message, cells, acknowledged, "
                          "created) VALUES (?, ?, ?, ?, ?, ?, coalesce((SELECT max(acknowledged) FROM alerts "
                          "WHERE session_id = ? AND code = ? AND event_id IN (SELECT value FROM json_each(?))), 0), ?) "
                          "ON CONFLICT (session_id, event_id, code) DO UPDATE "
                          "SET rule = excluded.rule, message = excluded.message, cells = excluded.cells",
                          (session_id, event_id, code, rule, message, json.dumps(cells),
                           session_id, code, json.dumps(list(logs_again)), now))
        return self.alerts(session_id)

    def acknowledge(self, session_id: int, alert_id: int, logged_again_as: Sequence[int] = ()) -> bool:
        """Acknowledge an alert (False: the session has no such alert), and in the same
        transaction that code's alerts of ``logged_again_as``, the events that log its move
        again after lifts: a tap on a page drawn before the lift names the old move's alert,
        while the move logged again had its own raised already."""
        with self._lock, _transaction(self._conn) as c:
            cur = c.execute("UPDATE alerts SET acknowledged = 1 WHERE id = ? AND session_id = ?",
                            (alert_id, session_id))
            if cur.rowcount and logged_again_as:
                c.execute("UPDATE alerts SET acknowledged = 1 WHERE session_id = ? AND code = (SELECT code FROM "
                          "alerts WHERE id = ?) AND event_id IN (SELECT value FROM json_each(?))",
                          (session_id, alert_id, json.dumps(list(logged_again_as))))
            return cur.rowcount > 0

    # --- the boards a hold keeps ---------------------------------------------------------

    def keep_boards(self, session_id: int, boards: list[KeptBoard]) -> None:
        """Save the boards the session's hold keeps now, in place of those saved before, in one
        committed transaction (none: the hold is over). Called when they change, so once per
        stable board the hold keeps, never per frame; the saved rows that still begin the list
        stay (a board kept is one row inserted, with the camera's last board saved after it
        rewritten; a board edited is rewritten with every board after it: :func:`_save_kept`)."""
        with self._lock, _transaction(self._conn) as c:
            _save_kept(c, session_id, boards)

    def holds_a_change(self, session_id: int) -> bool:
        """Whether a board the session's hold kept is saved (a row not marked plainly as the
        camera's last board, a damaged mark too: a damaged row is not taken for one not held),
        read without the rows' data, which may be what is damaged."""
        with self._lock:
            return bool(self._conn.execute("SELECT EXISTS (SELECT 1 FROM kept_boards WHERE session_id = ? "
                                           "AND held IS NOT 0)", (session_id,)).fetchone()[0])

    def kept_boards(self, session_id: int) -> list[KeptBoard]:
        """The boards the session's hold kept when last saved, oldest first."""
        with self._lock:
            rows = self._conn.execute(f"SELECT id, {_KEPT_COLUMNS} FROM kept_boards WHERE session_id = ? "
                                      "ORDER BY id", (session_id,)).fetchall()
        return [_kept_board(r, session_id) for r in rows]

    # --- photo reviews -------------------------------------------------------------------

    def create_review(self, row: ReviewRow, images: dict[str, bytes]) -> ReviewRow:
        """Save a new review with its JPEG images; older reviews' images are dropped past
        :data:`REVIEWS_WITH_IMAGES`."""
        with self._lock, _transaction(self._conn) as c:
            c.execute("INSERT INTO reviews (id, game, variant, created, updated, read, uncertain, state, corrections, "
                      "scores) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (row.id, row.game, row.variant, row.created, row.updated, json.dumps(row.read),
                       json.dumps(row.uncertain), json.dumps(row.state), json.dumps(row.corrections),
                       json.dumps(row.scores)))
            c.executemany("INSERT INTO review_images (review_id, name, jpeg) VALUES (?, ?, ?)",
                          [(row.id, name, data) for name, data in images.items()])
            c.execute("DELETE FROM review_images WHERE review_id NOT IN "
                      "(SELECT id FROM reviews ORDER BY created DESC LIMIT ?)", (REVIEWS_WITH_IMAGES,))
        return self.review(row.id)

    def change_review(self, review_id: str, change: Callable[[ReviewRow], tuple[dict, list, dict]]) \
            -> ReviewRow | None:
        """Read the review, ``change`` it into ``(state, corrections, scores)`` and write those,
        in one transaction; None when there is no such review.

        Two tablets saving the same review at once take turns: each change is made on the
        review as the other one left it, so no correction is lost to a save made from an older
        copy. ``change`` must not use the store; what it raises undoes the transaction.
        """
        with self._lock, _transaction(self._conn) as c:
            row = c.execute(f"SELECT {_REVIEW_COLUMNS} FROM reviews WHERE id = ?", (review_id,)).fetchone()
            if row is None:
                return None
            state, corrections, scores = change(_review(row, ()))
            c.execute("UPDATE reviews SET state = ?, corrections = ?, scores = ?, updated = ? WHERE id = ?",
                      (json.dumps(state), json.dumps(corrections), json.dumps(scores), time.time(), review_id))
        return self.review(review_id)

    def review(self, review_id: str) -> ReviewRow | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_REVIEW_COLUMNS} FROM reviews WHERE id = ?", (review_id,)).fetchone()
            names = self._conn.execute("SELECT name FROM review_images WHERE review_id = ? ORDER BY name",
                                       (review_id,)).fetchall()
        return _review(row, tuple(n for (n,) in names)) if row else None

    def recent_reviews(self, limit: int = 12) -> list[ReviewRow]:
        """The newest reviews first (without their image names); a damaged one is listed as
        such, without its data, so one bad row neither takes the page and every other review
        with it nor vanishes from the user's list unexplained."""
        with self._lock:
            rows = self._conn.execute(f"SELECT {_REVIEW_COLUMNS} FROM reviews ORDER BY created DESC LIMIT ?",
                                      (limit,)).fetchall()
        out = []
        for r in rows:
            try:
                out.append(_review(r, ()))
            except DamagedRecord:
                out.append(ReviewRow(*r[:5], {}, [], {}, [], {}, damaged=True))
        return out

    def review_image(self, review_id: str, name: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute("SELECT jpeg FROM review_images WHERE review_id = ? AND name = ?",
                                     (review_id, name)).fetchone()
        return bytes(row[0]) if row else None


_REVIEW_COLUMNS = "id, game, variant, created, updated, read, uncertain, state, corrections, scores"
_KEPT_COLUMNS = "board, uncertain, t, held, corrections"


def _review(row: tuple, images: tuple[str, ...]) -> ReviewRow:
    i, game, variant, created, updated, *saved = row
    return ReviewRow(i, game, variant, created, updated, *(_loads(t, f"review {i}") for t in saved), images)


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: no implicit transactions; _transaction commits each write.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(check)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(f"{path} was written by a newer tableref (schema {version}, this one reads "
                             f"up to {SCHEMA_VERSION}); update tableref or choose another --data folder")
        if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise sqlite3.DatabaseError("not a tableref database")
        for step in range(version, SCHEMA_VERSION):
            with _transaction(conn) as c:
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        c.execute(statement)
                c.execute(f"PRAGMA user_version = {step + 1}")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.conn.execute("ROLLBACK" if kind else "COMMIT")


def _loads(text: str, what: str) -> Any:
    """A row's saved JSON, or :class:`DamagedRecord` naming the row."""
    try:
        return parse_json(text, what)
    except (ValueError, TypeError):  # TypeError: a NULL where JSON text was saved
        raise DamagedRecord(what) from None


def _move_aside(path: Path, detail: str) -> CorruptDatabase:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    try:
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(path) + suffix)
            if part.exists():
                part.rename(Path(str(target) + suffix))
    except OSError as e:
        raise StoreError(f"the saved-games file {path} is damaged ({detail}) and cannot be moved aside "
                         f"({e.strerror or e}); move it away yourself or choose another --data folder") from None
    return CorruptDatabase(path, target, detail)


def _session(row: tuple) -> SessionRow:
    i, game, setup, created, status = row
    return SessionRow(i, game, _loads(setup, f"setup of game {i}"), created, status)


def _save_kept(c: sqlite3.Connection, session_id: int, boards: list[KeptBoard]) -> None:
    """Within a transaction: the session's saved kept boards become ``boards``, by writing only
    what changed. A hold that lasts keeps a board per stable board and mostly appends one or
    drops its oldest: rewriting them all made each save grow with the hold (a no-play board
    never cleared over 60 placements: the last of 58 boards rewrote 115 rows, 173 kB, where
    one row is new; ``python -m bench kept_boards``). The saved rows are gone through in their
    order: each that is the next of ``boards``, as saved, stays; the others are deleted, and
    the boards left over are inserted after them, so reading by row id gives ``boards`` in
    their order. A damaged row never equals a board's text, so it is replaced, as before."""
    rows = [(json.dumps(k.board), json.dumps(k.uncertain), k.t, int(k.held),
             None if k.corrections is None else json.dumps(k.corrections)) for k in boards]
    kept = 0
    dropped = []
    for row_id, *saved in c.execute(f"SELECT id, {_KEPT_COLUMNS} FROM kept_boards WHERE session_id = ? "
                                    "ORDER BY id", (session_id,)).fetchall():
        if kept < len(rows) and tuple(saved) == rows[kept]:
            kept += 1
        else:
            dropped.append((row_id,))
    c.executemany("DELETE FROM kept_boards WHERE id = ?", dropped)
    c.executemany(f"INSERT INTO kept_boards (session_id, {_KEPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                  [(session_id, *row) for row in rows[kept:]])


def _kept_board(row: tuple, session_id: int) -> KeptBoard:
    """A saved kept board, or :class:`DamagedRecord` when it is not the lists and time saved
    (whether its cells are on the board is the game's to say: the adapter's ``kept_from``)."""
    i, board, uncertain, t, held, corrections = row
    what = f"camera board {i} kept for game {session_id}"
    board, uncertain = _loads(board, what), _loads(uncertain, what)
    if not (isinstance(board, list) and isinstance(uncertain, list)) or type(t) not in (int, float):
        raise DamagedRecord(what, "its cells or its time are not what was saved")
    if type(held) is not int or held not in (0, 1):
        raise DamagedRecord(what, "whether a change waited on it is not what was saved")
    corrections = None if corrections is None else _loads(corrections, what)
    if corrections is not None and not isinstance(corrections, list):
        raise DamagedRecord(what, "the corrections standing with it are not what was saved")
    return KeptBoard(board, uncertain, float(t), bool(held), corrections)


def _alert(row: tuple) -> AlertRow:
    i, event_id, code, rule, message, cells, ack = row
    return AlertRow(i, event_id, code, rule, message, tuple(tuple(c) for c in _loads(cells, f"alert {i}")), bool(ack))
