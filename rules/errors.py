"""The one kind of refusal every layer raises for bad input.

A user, a script and the tablet page must all learn *why* an input was refused, in one
line, and map it to the contract's ``{"error": {"code", "message"}}``. So a record that
breaks the contract, a photo with no board, a broken calibration file and a camera that
cannot be opened are each an :class:`InputError` with a stable machine ``code`` and a human
``message``: never a traceback, never a silent guess.
"""
from __future__ import annotations

from typing import ClassVar, Mapping


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
