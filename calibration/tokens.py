"""Add a Geometrius token to a user's catalogue by showing it to the camera.

The rulebook does not publish its 40 shapes, so a group playing with its own set measures
each token once: the photo reader finds the one token in the shot, measures its polygon
(vertices in millimetres, sides, angles, convexity), and the token is appended to the
user's catalogue file as a *measured* shape, whose equalities then use the camera
tolerance (2 %, 2 degrees). The catalogue starts as a copy of the packaged default.

A catalogue's cards list the tokens they ``match`` and the loader checks those lists
against the geometry, so every card's list is brought up to date with the new token before
the file is validated (``rules.geometrius.parse_catalogue``) and written (atomically).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from rules.geometrius import parse_catalogue
from rules.polygon import Shape
from vision.errors import ReadError
from vision.geometrius import read_single_token

from .catalogue import catalogue_doc
from .errors import CalibrationError

TOKEN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$")


def _write(doc: dict, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CalibrationError("unwritable_file", f"cannot write {path}: {e.strerror or e}") from None


def add_token(image: np.ndarray, token_id: str, catalogue_path: str | Path) -> dict[str, Any]:
    """Measure the one token in ``image`` and append it to the catalogue at ``catalogue_path``
    (a copy of the default when the file does not exist yet) as ``token_id``.

    Returns the new catalogue entry: ``{"id", "star", "name_ru", "vertices", "measured": true}``
    (vertices in millimetres, y up). CalibrationError for a bad id, an id already used, a
    photo without exactly one readable token, or a damaged catalogue file.
    """
    if not isinstance(token_id, str) or not TOKEN_ID.match(token_id):
        raise CalibrationError("bad_token", f"token id {token_id!r}: use 1-16 letters, digits, '-' or '_'")
    path = Path(catalogue_path)
    doc = catalogue_doc(path)
    if any(t.get("id") == token_id for t in doc["tokens"]):
        raise CalibrationError("bad_token", f"the catalogue already has a token {token_id}; choose another id")
    try:
        token = read_single_token(image)
    except ReadError as e:
        raise CalibrationError("no_token", e.message) from None
    if not token.vertices:
        raise CalibrationError("no_token", "the token's polygon could not be measured: show it flat, whole and "
                               "well lit, nothing on it")
    vertices = [[round(x, 3), round(y, 3)] for x, y in token.vertices]
    shape = Shape(token_id, tuple((x, y) for x, y in vertices), False, measured=True)
    try:
        star = not shape.features["convex"]
    except ValueError as e:
        raise CalibrationError("no_token", f"the measured polygon is not usable: {e}") from None
    entry = {"id": token_id, "star": star, "name_ru": "", "vertices": vertices, "measured": True}
    doc["tokens"].append(entry)
    for card in doc["cards"]:
        if "matches" in card:
            catalogue = parse_catalogue({"tokens": [entry], "cards": [{k: v for k, v in card.items()
                                                                       if k != "matches"}]})
            if catalogue.accepts(card["id"], token_id):
                card["matches"] = list(card["matches"]) + [token_id]
    try:
        parse_catalogue(doc)
    except ValueError as e:  # pragma: no cover - the lists were just brought up to date
        raise CalibrationError("catalogue_invalid", f"the catalogue would not load with {token_id}: {e}") from None
    _write(doc, path)
    return entry
