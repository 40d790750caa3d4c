"""The one kind of refusal every layer raises for bad input.

A user, a script and the tablet page must all learn *why* an input was refused, in one
line, and map it to the contract's ``{"error": {"code", "message"}}``. So a record that
breaks the contract, a photo with no board, a broken calibration file and a camera that
cannot be opened are each an :class:`InputError` with a stable machine ``code`` and a human
``message``: never a traceback, never a silent guess.
"""
from __future__ import annotations

import json
from typing import Any, ClassVar, Mapping


class InputError(Exception):
    """Bad input, with a stable ``code`` and a one-line ``message``.

    A subclass may list its ``CODES`` with default messages; it then accepts only those.
    """

    CODES: ClassVar[Mapping[str, str]] = {}

    def __init__(self, code: str, message: str | None = None) -> None:
        if self.CODES and code not in self.CODES:
            raise ValueError(f"unknown {type(self).__name__} code {code!r}")
        self.code = code
        self.message = " ".join((message or self.CODES.get(code, code)).split())  # always one line
        super().__init__(self.message)

    def to_json(self) -> dict:
        """The contract's error object."""
        return {"error": {"code": self.code, "message": self.message}}


class _NameTwice(ValueError):
    """A JSON object naming one key twice (the key is the message)."""


def _distinct_names(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object as a dict; ``json.loads`` alone keeps the last of two equal names without
    a word, so a state naming a cell twice would be scored with one of its colours guessed."""
    doc: dict = {}
    for name, value in pairs:
        if name in doc:
            raise _NameTwice(name)
        doc[name] = value
    return doc


def _no_number(_constant: str) -> None:
    """``NaN``, ``Infinity`` or ``-Infinity`` in a document: no number (see :func:`parse_json`)."""
    return None


def parse_json(text: str | bytes, name: str) -> Any:
    """``text`` parsed as JSON, or a one-line ValueError naming ``name`` and the fault.

    Every document a user hands over (state, record, calibration, token catalogue, a tablet's
    request) and every saved row goes through here, so one nested thousands of levels deep is
    refused as bad JSON like any other malformed one instead of surfacing as Python's recursion
    limit ("internal error"), and so is an object that names one key twice. ``NaN`` and
    ``Infinity`` are not JSON (Python writes and reads them; a browser's reader refuses them):
    they are read as null, so a number that is none is refused by the document's own checks,
    and a review saved before its reader wrote null there opens again.
    """
    try:
        return json.loads(text, object_pairs_hook=_distinct_names, parse_constant=_no_number)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise ValueError(f"{name} nests its lists or objects too deeply to be read") from None
    except _NameTwice as e:
        raise ValueError(f"{name} names {str(e)!r} twice in one object: which one is meant would be a guess") \
            from None
    except ValueError:  # Python's own limit on an integer's digits (over 4300)
        raise ValueError(f"{name} holds a number too long to read") from None
