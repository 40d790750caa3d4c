"""The table's Geometrius token catalogue file, read and checked.

Both ways a table uses its own catalogue read it here: ``tableref calibrate tokens`` (and the
Tokens page) before adding a token, and a new Geometrius game on the tablet, which copies it
into its setup. Kept apart from :mod:`calibration.tokens`, which brings the photo reader along:
a game can start from the file where the reader is not installed.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from rules.errors import parse_json
from rules.geometrius import parse_catalogue

from .errors import CalibrationError


def catalogue_doc(path: Path) -> dict:
    """The user's catalogue document, or the packaged default when the file is not there yet
    (``catalogue_invalid`` when it cannot be read or is no catalogue: the tablet's new game says
    the same of the table's file)."""
    if path.exists():
        try:
            doc = parse_json(path.read_text("utf-8"), str(path))
        except (OSError, UnicodeDecodeError) as e:
            raise CalibrationError("catalogue_invalid", f"cannot read the catalogue {path}: "
                                   f"{getattr(e, 'strerror', None) or e}") from None
        except ValueError as e:
            raise CalibrationError("catalogue_invalid", str(e)) from None
    else:
        doc = json.loads(resources.files("rules").joinpath("data/geometrius-catalogue.json").read_text("utf-8"))
    try:
        parse_catalogue(doc)
    except ValueError as e:
        raise CalibrationError("catalogue_invalid", f"{path}: {e}") from None
    return doc
