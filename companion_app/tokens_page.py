"""The tokens page: add a Geometrius token to the table's catalogue by showing it to the camera.

The token is measured by :func:`calibration.tokens.add_token` (its polygon's vertices, so
its sides, angles and convexity) from the camera's latest frame or an uploaded photo, and
written to the data folder's catalogue, which new Geometrius games then use. Measuring is
another module's job; this page only hands it an image and shows what it answered.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from rules.errors import InputError
from vision.errors import ReadError
from vision.image_io import load_image

from .review import one_upload

bp = Blueprint("tokens", __name__)
EXTENSION = "tableref.tokens"
CATALOGUE = "geometrius-catalogue.json"  # in the data folder


@dataclass(frozen=True)
class TokenHooks:
    latest_frame: Callable[[], np.ndarray | None]  # the camera's latest frame (BGR), or None
    catalogue_path: Path


def install(app: Flask, hooks: TokenHooks) -> None:
    app.extensions[EXTENSION] = hooks
    if bp.name not in app.blueprints:
        app.register_blueprint(bp)


@bp.errorhandler(InputError)
@bp.errorhandler(ReadError)
def _refused(e: Any) -> Response:
    response = jsonify({"error": {"code": e.code, "message": e.message}})
    response.status_code = 422
    return response


@bp.get("/calibrate/tokens")
def tokens_page() -> str:
    table = current_app.extensions.get("tableref")
    hooks: TokenHooks = current_app.extensions[EXTENSION]
    return render_template("tokens.html", notice=getattr(table, "notice", None),
                           session=getattr(table, "session", None), catalogue=str(hooks.catalogue_path))


@bp.post("/api/calibrate/tokens")
def add_token() -> Response:
    """``token_id`` and either a ``photo`` upload or the camera's latest frame."""
    hooks: TokenHooks = current_app.extensions[EXTENSION]
    token_id = (request.form.get("token_id") or "").strip()
    if not token_id:
        raise InputError("bad_request", "name the token first (e.g. T09)")
    upload = one_upload("photo")
    if upload is not None and upload.filename:
        image = load_image(upload.read())
    else:
        image = hooks.latest_frame()
        if image is None:
            raise InputError("no_camera", "no camera frame yet: upload a photo of the token instead")
    try:
        from calibration.tokens import add_token as measure_and_add
    except ImportError:
        raise InputError("unavailable", "adding tokens is not available in this installation yet") from None
    return jsonify(measure_and_add(image, token_id, hooks.catalogue_path))
