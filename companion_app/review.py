"""The photo review: a photo of a finished board read and scored, corrected by tap, scored again.

The camera's reading is a proposal. The page draws it as the game's own board (the live
page's drawing), the user taps what was misread or doubted, and each tapped cell comes back
here to be set on the stored state (a whole contract state may be posted instead), which the
rules then parse like any state file: so the corrected state and the same state given to
``tableref score state.json`` are judged alike.

Every review is kept in the store (what was read, the cells the reader doubted, the cells
the user set, the latest scores, the overlay and straightened board as JPEG; never the
photo), so nothing entered is lost to a reload or a restart. Ids are random and made here:
a URL names a review, never a file.
"""
from __future__ import annotations

import copy
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from flask import Flask, Response, jsonify, request, url_for

from rules import flower, geometrius
from rules.errors import InputError
from rules.records import GAME_RULES, GAMES, InvalidInput, game_of, setup_of

from .adapters import adapter_for
from .cells import EMPTY, cells_of
from .store import ReviewRow, Store

IMAGE_MAGIC = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
)
ID = re.compile(r"[0-9a-f]{16}")
MAX_STATE_BYTES = 256 * 1024  # a Gemblo state with every cell taken is ~10 kB
IMAGE_SIDE = 1400  # stored images are shrunk to this (pixels, longer side)
JPEG_QUALITY = 85
RECENT = 12  # reviews listed on the page


class ReviewError(InputError):
    """A request the review routes refuse; ``status`` is the HTTP answer."""

    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(code, message)
        self.status = status


class ReviewConflict(ReviewError):
    """Taps made on cells that were changed since the tab showed them (another tab or tablet
    saved first): refused as a whole, so neither correction silently undoes the other.
    ``current`` is ``{cell key: what is there now}``, for the page to show."""

    def __init__(self, current: dict[str, Any]):
        (first, now), more = next(iter(current.items())), len(current) - 1
        others = f" (and {more} more cell{'s' if more > 1 else ''})" if more else ""
        super().__init__("changed_elsewhere", f"cell {first}{others} was changed on another screen meanwhile: "
                                              f"it is now {said(now)}; your tap was not saved", 409)
        self.current = current


@dataclass(frozen=True)
class ReviewHooks:
    """What the routes need from the app."""

    store: Store
    game: Callable[[], str]  # the table's game: the upload form's default
    page: Callable[..., str]  # renders a template with the app's common context
    # the app's refusal (its ``refused_page``): a page for a browser tab opening a URL (the
    # "Corrected state (JSON)" link of a review no longer kept), the one-line JSON for the pages' scripts
    error: Callable[[str, str, int], Response]
    variants: Mapping[str, Mapping[str, tuple[str, str]]]  # {game: {variant: (short name, description)}}
    max_mb: int


# --- the review's reading -----------------------------------------------------------------

def cell_key(cell: Any) -> str:
    """A cell as the page keys it: "a,b" for a pair (Blokus, Gemblo, a Geometrius place), the
    field id for an Equilibrix field."""
    return ",".join(str(v) for v in cell) if isinstance(cell, (list, tuple)) else str(cell)


def setup_for(game: str, variant: str | None) -> Any:
    """The setup a review is judged with: the variant's defaults, as ``score_photo`` uses
    (a photo shows no players' names or seating)."""
    return setup_of(game, {}, variant)


def board_cells(game: str, state: dict, setup: Any) -> dict[str, Any]:
    """``{cell key: what is there}`` of a state, parsed by the game's rules (ValueError,
    InvalidInput when it is not a state of the game)."""
    if game == "geometrius":
        tokens = geometrius.parse_state(state, setup.catalogue, setup.colour_names)
        return {cell_key(p): (t.shape, t.stack) for p, t in tokens.items()}
    fields = state.get("fields")
    if game == "equilibrix" and isinstance(fields, dict) and EMPTY in fields.values():
        # The live loop lets a reader list bare fields (cells.cells_of drops them); a state
        # posted here is judged as ``tableref score`` judges it, which knows no colour ".".
        raise ValueError(f"an empty field is left out of 'fields', not given as {EMPTY!r}")
    key = flower.field_id if game == "equilibrix" else cell_key  # a field as the page names it
    return {key(c): v for c, v in cells_of(game, state).items()}


def usual_form(game: str, state: dict, setup: Any) -> dict:
    """``state`` with its cells keyed as the page keys them ("0, 0" becomes "0,0", "P 0 0  0"
    becomes "P 0 0 0"): the rules read both, but a later tap sets the usual key only, and would
    leave the other standing (a correction lost, or two colours on one cell)."""
    if game in ("gemblo", "equilibrix"):
        return {**state, "fields" if game == "equilibrix" else "cells": board_cells(game, state, setup)}
    return state  # Blokus' rows and Geometrius' tokens are placed by position, not by a key


def usual_key(game: str, cell: Any) -> str:
    """A cell named by a tap or a confirmation (``"q,r"``, ``[r, c]``, a field id), keyed as
    :func:`board_cells` keys it; ValueError when it names no cell."""
    try:
        if game == "equilibrix":
            return flower.field_id(flower.parse_field(cell))
        parts = cell if isinstance(cell, list) else str(cell).split(",")
        if len(parts) != 2 or not all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in parts):
            raise ValueError
        return cell_key([int(v) for v in parts])
    except ValueError:
        raise ValueError(f"{str(cell)[:40]} is not a cell of this {game} board") from None


def check_token(token: Any, where: str) -> None:
    """A tapped Geometrius token's fields of the right kinds, named in the page's words before
    it is merged into the state (a whole posted state is checked by the rules' parser alone)."""
    if not isinstance(token, dict):
        raise ValueError(f"{where} must be given as an object")
    if not isinstance(token.get("shape"), str):
        raise ValueError(f"{where} needs its shape as a name, e.g. \"Q01\"")
    stack = token.get("stack", [])
    if not isinstance(stack, list) or not all(isinstance(c, str) for c in stack):
        raise ValueError(f"{where}: the stack lists chip colours bottom to top, e.g. [\"red\", \"blue\"]")


def with_cells(game: str, state: dict, changes: Mapping[str, Any]) -> dict:
    """A copy of ``state`` with the cells ``changes`` names set to what it says is there: a
    colour letter or "." (empty), a Geometrius token (its place is the key's). The keys are
    cells of the board (see :func:`tappable`); the rules judge the result."""
    out = copy.deepcopy(state)
    if game == "geometrius":
        tokens = {cell_key((t["row"], t["col"])): i for i, t in enumerate(out["tokens"])}
        for k, token in changes.items():
            check_token(token, f"the token at {k}")
            row, col = (int(v) for v in k.split(","))
            out["tokens"][tokens[k]] = {**token, "row": row, "col": col}
        return out
    if not all(isinstance(v, str) for v in changes.values()):
        raise ValueError("a cell is set to a colour letter, or '.' for empty")
    if game == "blokus":
        rows = [list(row) for row in out["board"]]
        for k, colour in changes.items():
            r, c = (int(v) for v in k.split(","))
            rows[r][c] = colour
        out["board"] = ["".join(row) for row in rows]
        return out
    cells = out["fields" if game == "equilibrix" else "cells"]
    for k, colour in changes.items():
        if colour == EMPTY:
            cells.pop(k, None)
        else:
            cells[k] = colour
    return out


def said(content: Any) -> str:
    """A cell's content in words for a message: "empty", "R", "token Q01 with red, blue"."""
    if isinstance(content, dict):
        stack = ", ".join(content.get("stack", [])) or "no chip"
        return f"token {content.get('shape')} with {stack}"
    return "empty" if content == EMPTY else str(content)


def changed_since(game: str, state: dict, setup: Any, was: Mapping[str, Any],
                  sets: Mapping[str, Any]) -> dict[str, Any]:
    """``{cell: what is there now}`` (as a tap sets it) for the cells of ``was`` (``{cell key:
    what the tab showed there}``) whose content in ``state`` is no longer that, a token compared
    by its shape and stack. A cell that already holds what the tap ``sets`` is no conflict: it is
    the tap's own save, sent again because its answer was lost. What ``was`` gives is parsed by
    the rules like a tap (ValueError for a colour or token the board cannot hold)."""
    now = board_cells(game, state, setup)
    shown = board_cells(game, with_cells(game, state, was), setup)
    wanted = board_cells(game, with_cells(game, state, {k: sets[k] for k in was}), setup)
    out = {}
    for k in was:
        there = now.get(k, EMPTY)
        if shown.get(k, EMPTY) != there and wanted.get(k, EMPTY) != there:
            out[k] = {"shape": there[0], "stack": list(there[1])} if game == "geometrius" else there
    return out


def tappable(game: str, setup: Any, cells: Mapping[str, Any]) -> set[str]:
    """The cells a user can set: every cell of the board, Geometrius' tokens on the field."""
    if game == "geometrius":
        return set(cells)
    adapter = adapter_for(game, setup)
    if game == "equilibrix":
        return {flower.field_id(c) for c in adapter.board.cells}
    return {cell_key(c) for c in adapter.board.cells}


def rescore(game: str, variant: str | None, state: dict, uncertain: list) -> dict:
    """The state's scores (contract JSON), with the cells still in doubt named in ``undecided``
    (the remaining pieces, and so the score, may change with them)."""
    sheet = GAME_RULES[game].score_state(state, setup_for(game, variant), None)
    return sheet.with_unread(uncertain, "by tapping them on the board").to_json()


def corrected(row: ReviewRow, doc: Any) -> tuple[dict, list, dict]:
    """A posted change made to the review as stored: (state, corrections, scores).

    ``doc`` is the page's ``{"set": {cell: what is there}}``: the cells the user tapped, set
    on the stored state (so two tabs correcting different cells both keep theirs). It may add
    ``"was": {cell: what the tab showed there}`` for some of them: if one of those cells holds
    something else by now (another tab set it first), :class:`ReviewConflict` refuses the whole
    change, naming what is there, rather than let the later tap silently win. Or a whole
    contract state, which replaces the board (stored with its cells keyed as the page keys
    them), also as ``{"state": state, "confirmed": [cells]}`` (the body pages sent before
    taps were sent one by one: the confirmed cells count as tapped). The corrections are the
    cells that differ from the reading, and the doubted cells the user set, even to what was
    read (a doubt confirmed); a cell set back to a confident reading is no correction any more.
    """
    if not isinstance(doc, dict):
        raise ReviewError("bad_state", "expected a JSON object: a board state")
    whole = "game" in doc or "state" in doc  # a state names its game (and may carry a "set" key of its own)
    if not whole and not isinstance(doc.get("set"), dict):
        raise ReviewError("bad_state", 'expected {"set": {cell: what is there}} or a board state '
                                       "('set' must map cells to what is there)")
    try:
        setup = setup_for(row.game, row.variant)
        if whole:
            posted, named = (doc, []) if "game" in doc else (doc["state"], doc.get("confirmed", []))
            game_of(posted, row.game)
            if not isinstance(named, list):
                raise ValueError("'confirmed' must list cells")
            state = usual_form(row.game, posted, setup)
        else:
            named = list(doc["set"])
            state = usual_form(row.game, row.state, setup)  # a review stored before keys were made usual
        keys = [usual_key(row.game, c) for c in named]
        if len(set(keys)) < len(keys):
            raise ValueError("two of the cells given name one cell")
        cells = tappable(row.game, setup, board_cells(row.game, state, setup))
        wrong = [k for k in keys if k not in cells]
        if wrong:
            raise ValueError(f"{wrong[0][:40]} is not a cell of this {row.game} board")
        if not whole:
            sets = dict(zip(keys, doc["set"].values()))
            current = changed_since(row.game, state, setup, shown_before(row.game, doc.get("was", {}), keys), sets)
            if current:
                raise ReviewConflict(current)
            state = with_cells(row.game, state, sets)
        now = board_cells(row.game, state, setup)
        read = board_cells(row.game, row.read, setup)
        changed = {k for k in now.keys() | read.keys() if now.get(k) != read.get(k)}
        confirmed = (set(keys) | set(row.corrections)) & {cell_key(c) for c in row.uncertain}
        corrections = sorted(changed | confirmed)
        scores = rescore(row.game, row.variant, state, doubts(row.uncertain, corrections))
    except InvalidInput as e:
        raise ReviewError(e.code, e.message) from None
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise ReviewError("bad_state", f"that is not a {row.game} board state: {e}") from None
    return state, corrections, scores


def shown_before(game: str, was: Any, keys: list[str]) -> dict[str, Any]:
    """A tap body's ``"was"`` keyed as :func:`board_cells` keys cells; ValueError unless it
    names only cells the body sets."""
    if not isinstance(was, dict):
        raise ValueError("'was' must map cells to what the tab showed there")
    out = {usual_key(game, c): v for c, v in was.items()}
    if len(out) < len(was):
        raise ValueError("two of the cells in 'was' name one cell")
    stray = [k for k in out if k not in keys]
    if stray:
        raise ValueError(f"'was' names {stray[0][:40]}, a cell the change does not set")
    if game != "geometrius" and not all(isinstance(v, str) for v in out.values()):
        raise ValueError("'was' gives each cell's colour letter as shown, or '.' for empty")
    return out


# --- the routes ---------------------------------------------------------------------------

def install(app: Flask, hooks: ReviewHooks) -> None:
    """The review page and its API: upload and score, reopen, correct and score again."""

    @app.errorhandler(ReviewError)
    def refused(e: ReviewError) -> Response:
        response = hooks.error(e.code, e.message, e.status)
        if isinstance(e, ReviewConflict):  # a tap's POST (JSON): the error says what is there now, for the page to show
            doc = response.get_json()
            doc["error"]["current"] = e.current
            response.set_data(json.dumps(doc))
        return response

    def recent() -> list[dict]:
        return [{"id": r.id, "game": r.game, "variant": r.variant,
                 "when": time.strftime("%d %b %H:%M", time.localtime(r.created)), "leader": _leader(r.scores),
                 "fixed": len(r.corrections), "doubts": len(doubts(r.uncertain, r.corrections)),
                 "damaged": r.damaged}
                for r in hooks.store.recent_reviews(RECENT)]

    def page(review_id: str | None, missing: str | None = None) -> tuple[str, int]:
        return hooks.page("review.html", games=GAMES, game=hooks.game(),
                          variants={g: list(labels.items()) for g, labels in hooks.variants.items()},
                          max_mb=hooks.max_mb, review_id=review_id, missing=missing,
                          recent=recent()), 404 if missing else 200

    def find(review_id: str) -> ReviewRow:
        row = hooks.store.review(review_id) if ID.fullmatch(review_id) else None
        if row is None:
            raise ReviewError("no_review", f"there is no review {review_id[:40]!r}: it may be from another table", 404)
        if row.game not in GAMES:  # a damaged row, or one a newer release wrote
            raise ReviewError("data_damaged", f"the saved review {row.id} is of a game this tableref does not know "
                                              f"({str(row.game)[:40]}); it is kept in the file as it is", 500)
        return row

    @app.get("/review")
    def review_page() -> tuple[str, int]:
        return page(None)

    @app.get("/review/<review_id>")
    def review_reopen(review_id: str) -> tuple[str, int]:
        if not ID.fullmatch(review_id) or hooks.store.review(review_id) is None:
            return page(None, missing=review_id[:40])  # the page says so and offers the upload
        return page(review_id)

    @app.post("/api/review")
    def review() -> Response:
        upload = one_upload("photo")
        if upload is None or not upload.filename:
            raise ReviewError("bad_request", "choose a photo of the finished board first")
        data = upload.read()
        if sniff_image(data) is None:
            if data[4:8] == b"ftyp":  # HEIC/HEIF, as phones save by default
                raise ReviewError("not_an_image", "HEIC photos cannot be read here: share or save the photo "
                                                  "as JPEG and upload that", 415)
            raise ReviewError("not_an_image", "that file is not a photo: upload a JPEG, PNG or WebP image", 415)
        game = request.form.get("game") or hooks.game()
        variant = request.form.get("variant") or None
        try:  # refused before the photo is read, as `tableref score` refuses them (unknown_game, bad_setup)
            game = game_of({"game": game[:40]})  # no game's name is longer: the message stays one short line
            setup_for(game, None if variant is None else variant[:40])
        except InvalidInput as e:
            raise ReviewError(e.code, e.message) from None
        result, images = score_upload(data, game, variant)
        reading = result["reading"]
        now = time.time()
        row = hooks.store.create_review(ReviewRow(
            secrets.token_hex(8), game, variant, now, now, reading["state"], list(reading.get("uncertain", [])),
            reading["state"], [], {k: v for k, v in result.items() if k != "reading"}),
            {name: jpeg(image, IMAGE_SIDE) for name, image in images.items()})
        return jsonify({"result": result, "review": review_json(row)})

    @app.get("/api/reviews")
    def reviews() -> Response:
        """The recent reviews as the page lists them (it lists them again after a change)."""
        return jsonify({"reviews": recent()})

    @app.get("/api/review/<review_id>")
    def review_get(review_id: str) -> Response:
        return jsonify(review_json(find(review_id)))

    @app.post("/api/review/<review_id>/state")
    def review_state(review_id: str) -> Response:
        """The user's corrected state: checked by the rules, scored, saved."""
        row = find(review_id)
        if (request.content_length or 0) > MAX_STATE_BYTES or len(request.get_data()) > MAX_STATE_BYTES:
            raise ReviewError("too_large", "that state is far larger than a board's", 413)
        doc = request.get_json(silent=True)
        changed = hooks.store.change_review(row.id, lambda stored: corrected(stored, doc))
        return jsonify(review_json(changed or find(row.id)))

    @app.get("/api/review/<review_id>/state.json")
    def review_download(review_id: str) -> Response:
        """The corrected state as a file ``tableref score state.json --game G`` reads."""
        row = find(review_id)
        return Response(_pretty(row.state), mimetype="application/json", headers={
            "Content-Disposition": f'attachment; filename="tableref-{row.game}-review-{row.id}.json"'})

    @app.get("/api/review/<review_id>/images/<name>.jpg")
    def review_image(review_id: str, name: str) -> Response:
        data = hooks.store.review_image(find(review_id).id, name)
        if data is None:
            raise ReviewError("no_image", "that image is not kept (older reviews keep their scores only)", 404)
        return Response(data, mimetype="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})


def review_json(row: ReviewRow) -> dict:
    """What the page draws: the board's layout, the state read and as corrected, the doubts
    left, the scores, the image URLs."""
    setup = setup_for(row.game, row.variant)
    return {
        "id": row.id, "game": row.game, "variant": row.variant or GAME_RULES[row.game].VARIANTS[0],
        "created": row.created, "updated": row.updated,
        "layout": adapter_for(row.game, setup).layout(None),
        "read": row.read, "state": row.state, "read_uncertain": row.uncertain,
        "uncertain": doubts(row.uncertain, row.corrections), "corrections": row.corrections, "scores": row.scores,
        "images": {name: url_for("review_image", review_id=row.id, name=name) for name in row.images},
        "download": url_for("review_download", review_id=row.id),
    }


def doubts(uncertain: list, corrections: list) -> list:
    """The cells read without confidence that the user has not set yet."""
    settled = set(corrections)
    return [c for c in uncertain if cell_key(c) not in settled]


def _leader(scores: dict) -> str:
    best = [p["name"] for p in scores.get("players", []) if p.get("place") == 1]
    return " and ".join(best)


def _pretty(doc: dict) -> str:
    return json.dumps(doc, indent=1) + "\n"


# --- the upload ---------------------------------------------------------------------------

def score_upload(data: bytes, game: str, variant: str | None) -> tuple[dict, dict]:
    """Score the uploaded bytes (never written to a path chosen by the user): the photo's
    scores JSON (with its reading) and the debug images."""
    from vision import photo
    from vision.errors import ReadError

    try:
        result = photo.score_photo(data, game, variant, None, None, None)
    except ReadError as e:  # with the code `tableref score` gives the same photo
        raise ReviewError(e.code, f"the photo could not be read: {e.message}") from None
    except InvalidInput as e:
        raise ReviewError(e.code, e.message) from None
    except ImportError:
        raise ReviewError("unsupported_game",
                          f"reading {game} photos is not available in this installation yet") from None
    return result.to_json(), dict(result.debug_images)


def one_upload(name: str) -> Any:
    """The form's one file called ``name`` (None without one). A form carrying two is refused:
    only the first would be read, and the photo scored might not be the one meant."""
    files = request.files.getlist(name)
    if len(files) > 1:
        raise ReviewError("bad_request", f"{len(files)} files were sent: send one photo at a time")
    return files[0] if files else None


def sniff_image(data: bytes) -> str | None:
    """The image format the bytes start with (JPEG, PNG, WebP), else None; the name is ignored."""
    for magic, kind in IMAGE_MAGIC:
        if data.startswith(magic):
            return kind
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return None


def jpeg(image: Any, side: int | None = None) -> bytes:
    """A BGR image as JPEG bytes, shrunk to ``side`` pixels on its longer side when larger."""
    import cv2

    if side is not None and max(image.shape[:2]) > side:
        f = side / max(image.shape[:2])
        image = cv2.resize(image, (round(image.shape[1] * f), round(image.shape[0] * f)), interpolation=cv2.INTER_AREA)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise ValueError("could not encode a debug image")
    return encoded.tobytes()

