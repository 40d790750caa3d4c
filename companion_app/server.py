"""The tablet's web app: live page, setup page, photo review page and their JSON API.

Flask serves plain HTML, CSS and JavaScript from this package (no CDN: the tablet may sit
on a LAN without internet). The live page is redrawn from session snapshots pushed over
Server-Sent Events. Every action is a POST with a same-origin check, so a page from another
site open on the same tablet cannot correct cells or take moves back.
"""
from __future__ import annotations

import argparse
import errno
import fcntl
import ipaddress
import json
import logging
import signal
import socket
import sqlite3
import sys
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterator
from urllib.parse import urlsplit

from flask import (Flask, Response, jsonify, make_response, redirect, render_template, request,
                   stream_with_context, url_for)
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from calibration import Calibration, CalibrationError, load_calibration
from calibration.catalogue import catalogue_doc
from rules.errors import InputError, parse_json
from vision import reproducible
from rules import blokus, geometrius
from rules.records import GAMES, colour_names

from . import calibration_page, review, tokens_page
from .calibration_page import CalibrationHooks
from .review import ReviewHooks
from .tokens_page import TokenHooks
from .session import LIVE_GAMES, Broadcast, Session, SessionError, parse_setup
from .store import CorruptDatabase, Store, StoreError, data_folder, default_data_dir

MAX_UPLOAD_MB = 25
MAX_BODY_KB = 256  # a tap or a setup; a Geometrius setup carrying a table's own catalogue is ~30 kB
LOCK_FILE = "tableref.lock"  # in the data folder: held by the one server using it
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")  # how a browser on this computer names it
KEEPALIVE_S = 15.0
# What a player reads when the server fails on a request: what they can do about it. The fault
# itself ("KeyError: 'B'") tells them nothing; it goes to the log, which is named here.
INTERNAL_ERROR = ("the server failed on this request (a fault in tableref, not in anything you did); the game, "
                  "the reviews and all you entered so far are saved: reload the page to carry on. The details "
                  "are in the server's log, in the window where tableref serve runs")
# Each variant's short name (what its select shows: a phone cut "Classic: four players" to
# "Classic: four p...") and its description (shown in words under the select).
VARIANT_LABELS = {
    "blokus": {
        "classic": ("Classic", "four players, one colour each"),
        "team": ("Team", "blue + red against yellow + green"),
        "two-player": ("Two players", "two colours each"),
        "three-player-shared": ("Three, shared", "three players, the neutral colour taken in turns"),
        "three-player-free": ("Three, free", "three players, the neutral colour laid freely"),
    },
    "gemblo": {
        "6p": ("Six players", "the whole board"),
        "5p": ("Five players", "the sixth colour's pieces as obstacles"),
        "4p": ("Four players", "the rectangle"),
        "3p": ("Three players", "the central hexagon"),
        "2p": ("Two players", "one colour each, from opposite starts"),
        "2p-double": ("Two, double", "two players, two colours each"),
    },
    "equilibrix": {
        "zdrzovacka": ("ZDRŽOVAČKA", "the first who cannot move loses"),
        "autonomie": ("AUTONOMIE", "territory (empty regions walled by one colour)"),
        "tri-mety": ("TŘI METY", "join the corner markers"),
    },
    "geometrius": {
        "standard": ("Standard", "four turns each"),
    },
}


class ServeError(InputError):
    """The server cannot start (port taken, unusable source)."""


class RequestJSON(DefaultJSONProvider):
    """Request bodies parsed as the command line's files are (:func:`rules.errors.parse_json`):
    one nested thousands of levels deep is bad JSON like any other (every route's "expected a
    JSON object"), not Python's recursion limit answered as an internal error."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return parse_json(s, "the request")


@dataclass
class Table:
    """What the app serves: the store, the game being played and the camera feeding it."""

    store: Store
    game: str
    broadcast: Broadcast = field(default_factory=Broadcast)
    session: Session | None = None
    notice: str | None = None  # shown on every page (a damaged database moved aside)
    camera: tuple[str, str] | None = None
    referee: Any = None  # companion_app.live.LiveReferee when a source is given
    catalogue_path: Path | None = None  # the table's Geometrius catalogue (tokens added by camera)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start_session(self, doc: dict) -> Session:
        with self._lock:
            doc = self.with_catalogue(doc)
            session = Session.start(self.store, doc, doc.get("game", self.game), self.broadcast)
            previous, self.session = self.session, session
            if previous is not None:
                previous.retire()
            # published again once the old game is silent: the newest state is the new game's
            session.set_camera(*(self.camera or (session.camera.status, session.camera.message)))
            if session.row.game != self.game:
                self.game = session.row.game
                if self.referee is not None:
                    self.referee.watch_game(self.game)
            return session

    def with_catalogue(self, doc: dict) -> dict:
        """A Geometrius game uses the table's own catalogue when tokens were added to it (the
        session keeps a copy, so its record replays the same anywhere). A broken one is the
        table's file at fault, not the setup: ``catalogue_invalid``, as ``tableref calibrate
        tokens`` says of the same file."""
        path = self.catalogue_path
        if doc.get("game", self.game) != "geometrius" or path is None or not path.exists():
            return doc
        settings = doc.get("settings") or {}
        if not isinstance(settings, dict) or "catalogue" in settings:
            return doc  # the setup's own catalogue (a malformed document is refused by the setup)
        try:
            catalogue = catalogue_doc(path)
        except CalibrationError as e:
            raise SessionError(f"the table's token catalogue cannot be used: {e.message}", e.code) from None
        return {**doc, "settings": {**settings, "catalogue": catalogue}}

    def on_board(self, board: dict, uncertain: list, t: float) -> None:
        """A stable board from the live loop (in the game's neutral form: ``{cell: colour}``, or
        Geometrius' tokens) goes to the game being played."""
        session = self.session
        if session is not None:
            session.observe(board, uncertain, t)

    def on_status(self, status: str, message: str) -> None:
        self.camera = (status, message)
        session = self.session
        if session is not None:
            session.set_camera(status, message)

    def stop(self) -> None:
        """Stop the camera, end every event stream, close the database."""
        if self.referee is not None:
            self.referee.stop()
        self.broadcast.close()
        self.store.close()


def open_store(data_dir: Path) -> tuple[Store, str | None]:
    """The store, and a notice for the user when a damaged file had to be moved aside."""
    try:
        return Store.open(data_dir), None
    except CorruptDatabase as e:
        print(f"tableref: {e.message}", file=sys.stderr)
        return Store.open(data_dir), e.message


def create_app(data_dir: str | Path, source: Any = None, game: str = "blokus",
               fresh_session: bool = False) -> Flask:
    """The app over the sessions in ``data_dir``; with a ``source``, the live referee runs.

    The latest open session is resumed; with a source and none open (or ``fresh_session``,
    as for the demo, which plays its game from the start) a classic game is started, so
    the camera never watches a table with no game to record into.
    """
    app = Flask(__name__)
    app.json = RequestJSON(app)
    app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD_MB * 1024 * 1024
    app.json.sort_keys = False
    store, notice = open_store(Path(data_dir))
    table = Table(store, game, notice=notice, catalogue_path=Path(data_dir) / tokens_page.CATALOGUE)
    table.session, unresumed = resume(store, table.broadcast)
    table.notice = " ".join(n for n in (notice, unresumed) if n) or None
    # A game that could not be resumed is not closed by a new one the camera would start over
    # it: the user chooses (New game closes it; its rows stay in the file either way).
    if source is not None and (fresh_session or (table.session is None and unresumed is None)):
        table.start_session({"game": game})  # the game's default variant
    elif table.session is not None:
        table.game = table.session.row.game  # the camera reads the game being resumed
    app.extensions["tableref"] = table
    _routes(app, table, live=source is not None)
    calibration = load_table_calibration(Path(data_dir))
    calibration_page.install(app, CalibrationHooks(
        latest_frame=lambda: table.referee.latest_frame if table.referee else None,
        path=Path(data_dir) / "calibration.json",
        on_saved=lambda cal: table.referee.calibrate(cal) if table.referee else None))
    tokens_page.install(app, TokenHooks(latest_frame=lambda: table.referee.latest_frame if table.referee else None,
                                        catalogue_path=table.catalogue_path))
    if source is not None:
        from .live import LiveReferee

        table.on_status("starting", "starting the camera")
        table.referee = LiveReferee(source, on_board=table.on_board, on_status=table.on_status,
                                    calibration=calibration, game=table.game)
        table.referee.start()
    return app


def resume(store: Store, broadcast: Broadcast) -> tuple[Session | None, str | None]:
    """The open game (with a notice when the boards its hold kept could not be brought back:
    :meth:`Session._resume_hold`), or None and a notice for the user when its saved record no longer
    replays (a damaged row, a game or setup this release does not know). The server starts
    all the same, so the table's other games and its reviews stay in reach, and the record
    is left in the file as it is, still the open game (a newer release or a hand may mend it);
    no camera starts a game over it (:func:`create_app`). A file that cannot be read at all
    (a disk error) is no damaged record: StoreError, and ``serve`` ends in one line."""
    try:
        session = Session.resume(store, broadcast)
        return session, session.notice if session else None
    except sqlite3.Error as e:
        raise StoreError(f"cannot read the saved-games file {store.path}: {e}") from None
    except Exception as e:  # whatever else a damaged record makes the replay raise
        why = e.message if isinstance(e, InputError) else f"{type(e).__name__}: {e}"
        message = f"the open game could not be resumed ({why}); it is kept in {store.path}"
        print(f"tableref: {message}", file=sys.stderr)
        return None, message


def load_table_calibration(data_dir: Path) -> Calibration | None:
    """The data folder's calibration when there is a usable one; a broken one is reported and ignored."""
    path = data_dir / "calibration.json"
    if not path.exists():
        return None
    try:
        return load_calibration(path)
    except CalibrationError as e:
        print(f"tableref: calibration ignored: {e.message}", file=sys.stderr)
        return None


def _routes(app: Flask, table: Table, live: bool) -> None:
    def page(name: str, **context: Any) -> str:
        return render_template(name, notice=table.notice, session=table.session, **context)

    def session() -> Session:
        if table.session is None:
            raise SessionError("no game is running: start one on the setup page")
        return table.session

    def body() -> dict:
        # The photo upload's limit is far too wide for a tap: a setup is stored as sent and its
        # players' names go out in every state, so a 20 MB one would swell the file and every page.
        if (request.content_length or 0) > MAX_BODY_KB * 1024 or len(request.get_data()) > MAX_BODY_KB * 1024:
            raise SessionError(f"that request is far larger than a setup or a tap ({MAX_BODY_KB} kB at most)")
        doc = request.get_json(silent=True)
        if not isinstance(doc, dict):
            raise SessionError("expected a JSON object")
        return doc

    app.before_request(reproducible)  # a request's thread may read a photo (review, calibration)

    @app.before_request
    def same_origin() -> Response | None:
        """CSRF-light: browsers send Origin (or Referer) on POST; it must be this server."""
        if request.method != "POST":
            return None
        sender = request.headers.get("Origin") or request.headers.get("Referer")
        if sender and urlsplit(sender).netloc != request.host:
            return _error("cross_origin", "refused: this request came from another site", 403)
        return None

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(e: RequestEntityTooLarge) -> Response:
        return _error("too_large", f"the file is larger than {MAX_UPLOAD_MB} MB; "
                                   "take the photo at a lower resolution", 413)

    def refused_page(code: str, message: str, status: int) -> Response:
        """The error as a page when a browser was opening one (a mistyped or old address, a
        page that failed, a file link with nothing to save): a tablet showed the raw JSON meant
        for the pages' scripts, with no way on. The API's callers, which ask for JSON, get the
        usual one-line JSON. The review routes refuse through it too (their hooks' ``error``)."""
        if request.method == "GET" and request.accept_mimetypes.best_match(
                ["application/json", "text/html"]) == "text/html":
            return make_response(page("error.html", status=status, message=message), status)
        return _error(code, message, status)

    @app.errorhandler(SessionError)
    def session_error(e: SessionError) -> Response:
        # a page link followed with no game running (the game record's, once the server came
        # back without the game): the words on a page, never the JSON saved as the record
        return refused_page(e.code, e.message, 400)

    @app.errorhandler(StoreError)
    def store_error(e: StoreError) -> Response:  # a damaged saved row: said, not an internal error
        return refused_page(e.code, e.message, 500)

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Response:
        if e.code == 404:
            return refused_page("not_found", f"there is no page at {request.path[:80]}: "
                                             "choose one of the pages above", 404)
        return refused_page(e.name.lower().replace(" ", "_"), e.description or e.name, e.code or 500)

    @app.errorhandler(Exception)
    def internal_error(e: Exception) -> Response:
        app.logger.exception("request failed")  # the fault's type, text and traceback: for whoever mends it
        return refused_page("internal_error", INTERNAL_ERROR, 500)

    # --- pages ---------------------------------------------------------------------------

    @app.get("/")
    def index() -> Response:
        if live or table.session is not None:
            return redirect(url_for("live_page"))
        return redirect(url_for("review_page"))

    @app.get("/live")
    def live_page() -> Response | str:
        if table.session is None:
            return redirect(url_for("setup_page"))
        return page("live.html")

    @app.get("/setup")
    def setup_page() -> str:
        # Variants as [code, [name, description]] pairs: JSON objects lose their order on the way (tojson sorts keys).
        # A seat's colours come with the seats (/api/seats): a Geometrius table names its own.
        choices = {g: {"variants": list(VARIANT_LABELS[g].items())} for g in LIVE_GAMES}
        return page("setup.html", games=GAMES, live_games=LIVE_GAMES, choices=choices,
                    game=table.session.row.game if table.session else table.game,
                    blokus_colours=[(c, blokus.COLOUR_NAMES[c]) for c in blokus.COLOURS],
                    chip_colours=geometrius.COLOURS, chip_name_max=geometrius.COLOUR_NAME_MAX)

    review.install(app, ReviewHooks(table.store, game=lambda: table.game, page=page, error=refused_page,
                                    variants=VARIANT_LABELS, max_mb=MAX_UPLOAD_MB))

    # --- live state ----------------------------------------------------------------------

    @app.get("/api/state")
    def state() -> Response:
        return jsonify(session().snapshot())

    @app.get("/events")
    def events() -> Response:
        box = table.broadcast.subscribe()
        first = table.session.snapshot() if table.session else None

        def stream() -> Iterator[str]:
            try:
                yield "retry: 2000\n\n"
                if first is not None:
                    yield _sse(json.dumps(first))
                while not box.closed:
                    item = box.get(KEEPALIVE_S)
                    yield _sse(item) if item is not None else ": keepalive\n\n"
            finally:
                table.broadcast.unsubscribe(box)

        return Response(stream_with_context(stream()), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    # --- actions -------------------------------------------------------------------------

    def act(run: Callable[[Session], None]) -> Response:
        s = session()
        run(s)
        return jsonify(s.snapshot())

    @app.post("/api/session")
    def new_session() -> Response:
        return jsonify(table.start_session(body()).snapshot())

    @app.post("/api/kombo/next")
    def kombo_next() -> Response:
        """Equilibrix KOMBO: the next game of the series, in the variant the loser picked."""
        return jsonify(table.start_session(session().next_kombo_doc(body().get("variant"))).snapshot())

    @app.post("/api/seats")
    def seats() -> Response:
        """The players a setup has by default, and the colours a seat may take as [colour, name]
        pairs (the setup page shows them as it is filled in; a Geometrius table's names are its
        ``colour_names`` setting, checked here as the game's start will check them)."""
        doc = body()
        game = doc.get("game")
        if game not in LIVE_GAMES:
            raise SessionError(f"live refereeing of {game} is not supported yet")
        setup = parse_setup(game, {**doc, "players": []})
        return jsonify({"seats": default_seats(game, setup, doc.get("count", 2)),
                        "colours": list(colour_names(game, setup).items())})

    @app.post("/api/correct")
    def correct() -> Response:
        doc = body()
        return act(lambda s: s.correct(doc))

    @app.post("/api/amend")
    def amend() -> Response:
        """A detail of a logged move entered by tap: Geometrius cards, an Equilibrix tile or token."""
        doc = body()
        return act(lambda s: s.amend(doc))

    @app.post("/api/take-back")
    def take_back() -> Response:
        doc = body()
        return act(lambda s: s.take_back(doc.get("index"), doc.get("event")))

    @app.post("/api/pass")
    def declare_pass() -> Response:
        seen = body().get("to_move") if request.get_data() else None  # a page of an older release sends nothing
        return act(lambda s: s.declare_pass(seen))

    @app.post("/api/alerts/<int:alert_id>/ack")
    def acknowledge(alert_id: int) -> Response:
        return act(lambda s: s.acknowledge(alert_id))

    # --- exports -------------------------------------------------------------------------

    @app.get("/export/record.json")
    def export_record() -> Response:
        s = session()
        return Response(json.dumps(s.export_record(), indent=1), mimetype="application/json",
                        headers={"Content-Disposition": f'attachment; filename="tableref-game-{s.id}.json"'})

    @app.get("/export/game.blksgf")
    def export_sgf() -> Response:
        s = session()
        return Response(s.export_sgf(), mimetype="application/x-blokus-sgf",
                        headers={"Content-Disposition": f'attachment; filename="tableref-game-{s.id}.blksgf"'})


def default_seats(game: str, setup: Any, count: Any) -> list[dict]:
    """The players ``setup`` (of a document naming no players) has by default; Geometrius: as
    many as ``count`` asks (2-6), its colours named as the setup's settings name them."""
    if game != "geometrius":
        return [{"name": n, "colours": list(cs)} for n, cs in setup.player_list]
    if type(count) is not int or not 2 <= count <= len(geometrius.COLOURS):
        raise SessionError(f"Geometrius is played by 2 to {len(geometrius.COLOURS)} players")
    return [{"name": setup.names[c], "colours": [c]} for c in setup.colour_names[:count]]


def _sse(data: str) -> str:
    return "event: state\ndata: " + data + "\n\n"


def _error(code: str, message: str, status: int) -> Response:
    response = jsonify({"error": {"code": code, "message": message}})
    response.status_code = status
    return response


# --- tableref serve ----------------------------------------------------------------------

def open_source(args: argparse.Namespace, data_dir: Path) -> Any:
    """The frame source the command line asks for, or None (review page only)."""
    from . import sources

    try:
        if args.camera is not None:
            camera = sources.CameraSource(args.camera)
            camera.check()
            return camera
        if args.video:
            return sources.VideoSource(args.video, realtime=True)
        if args.frames:
            return sources.FolderSource(args.frames, realtime=True)
    except sources.SourceError as e:
        raise ServeError(e.code, e.message) from None
    if getattr(args, "demo", False):
        from .demo import demo_source

        return demo_source(data_dir, realtime=True)  # rendered frames are cached there
    return None


def serve(args: argparse.Namespace) -> None:
    """``tableref serve``: run the referee and the pages until Ctrl-C."""
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line per request and event stream
    data_dir = data_folder_of(args)
    with ExitStack() as held:  # an unusable source or data folder: the port and the folder are free again
        try:
            held.enter_context(claim_data_folder(data_dir))
            listener = held.enter_context(listen(args.host, args.port))  # before the camera: a taken port ends here
            app = create_app(data_dir, open_source(args, data_dir), args.game,
                             fresh_session=bool(getattr(args, "demo", False)))
        except StoreError as e:
            raise ServeError("data_folder", e.message) from None
        table: Table = app.extensions["tableref"]
        guard_hosts(app, args.host)
        port = listener.getsockname()[1]  # --port 0: the one the system chose, which the tablet needs
        server = make_server(args.host, port, app, threaded=True, fd=listener.fileno())
        listener.close()  # the server holds its own copy of the socket
        shown = f"[{args.host}]" if ":" in args.host else args.host  # an IPv6 address in a URL
        print(f"tableref: open http://{shown}:{port}/ on the tablet (games saved in {data_dir}); "
              "Ctrl-C stops", file=sys.stderr)
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: the same clean exit as Ctrl-C
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            table.stop()


def data_folder_of(args: argparse.Namespace) -> Path:
    """``--data``, else the user's data folder; the demo's own folder inside it for ``--demo``:
    the demo plays its game from the start, which would close the table's open game."""
    if args.data:
        return Path(args.data)
    return default_data_dir() / "demo" if getattr(args, "demo", False) else default_data_dir()


def guard_hosts(app: Flask, host: str) -> None:
    """Listening on this computer only, answer only requests that name it so (``Host``). A web
    page from anywhere can point its own name at 127.0.0.1 (DNS rebinding): its requests then
    reach this port carrying that name as both Host and Origin, which the same-origin check
    cannot tell from the tablet page. Listening wider (``--host``), the tablet names the server
    by whatever address it has on the network, so no names are kept."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: the user chose it
        loopback = False
    if not loopback:
        return
    names = {*LOOPBACK_NAMES, host.strip("[]").lower()}

    @app.before_request
    def own_name() -> Response | None:
        # the name without port or brackets ("[::1]:8000" -> "::1"); werkzeug's own list of
        # trusted hosts cuts an IPv6 address at its first colon
        name = urlsplit(f"//{request.host}").hostname
        if name not in names:
            return _error("untrusted_host", f"this server answers only to {', '.join(sorted(names))}", 400)
        return None


def claim_data_folder(data_dir: Path) -> IO:
    """The data folder's lock, held while this server runs (the system lets it go when the
    process ends, however it ends). A second server on the same folder would play its own
    copy of the open game and write its moves into the first one's record."""
    path = data_folder(data_dir) / LOCK_FILE
    try:
        handle = path.open("a")
    except OSError as e:
        raise StoreError(f"cannot use the data folder {data_dir}: {e.strerror or e}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise StoreError(f"the data folder {data_dir} is in use by another tableref serve: "
                         "stop that one, or choose another --data folder") from None
    return handle


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line ServeError (Werkzeug's own would print
    two lines and exit, past the command line's --json error)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # "::" or "::1": IPv6, as Werkzeug would
    try:
        return socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            why = "the port is in use by another program; stop it or choose another --port"
        else:
            why = e.strerror or str(e)
        raise ServeError("cannot_listen", f"cannot listen on {host}:{port}: {why}") from None


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
