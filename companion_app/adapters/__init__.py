"""One adapter per game the live session referees (see :mod:`.base` for what one says)."""
from __future__ import annotations

from typing import Any

from .base import Derived, Entry, GameAdapter, SessionError
from .equilibrix import EquilibrixAdapter, kombo_series
from .geometrius import GeometriusAdapter
from .placement import PlacementAdapter

LIVE_GAMES = ("blokus", "gemblo", "equilibrix", "geometrius")


def adapter_for(game: str, setup: Any, doc: dict | None = None) -> GameAdapter:
    """The game's adapter for a session set up by ``doc`` (the setup page's document)."""
    if game in ("blokus", "gemblo"):
        return PlacementAdapter(setup, game)
    if game == "equilibrix":
        return EquilibrixAdapter(setup, kombo_series(doc or {}))
    if game == "geometrius":
        return GeometriusAdapter(setup)
    raise SessionError(f"live refereeing of {game} is not supported")


__all__ = ["LIVE_GAMES", "Derived", "Entry", "GameAdapter", "SessionError", "adapter_for"]
