"""Score sheets: per-colour scores summed per player, ranked, tiebreaks told in words.

Shared by every game: a game computes one :class:`ColourScore` per colour and names its
tiebreak steps; this module does the summing, ordering and explaining.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Mapping, Sequence

from .lattice import Cell


@dataclass(frozen=True)
class ColourScore:
    colour: str
    score: int
    penalty: int
    bonus: int
    remaining: tuple[str, ...]


@dataclass(frozen=True)
class Flag:
    """Something a board proves against the rules (from a photo or a state file)."""

    rule: str
    code: str
    cells: tuple[Cell, ...]
    message: str

    def to_json(self) -> dict:
        return {"rule": self.rule, "code": self.code, "cells": [list(c) for c in self.cells],
                "message": self.message}


@dataclass(frozen=True)
class Undecided:
    """A part of the score the referee cannot decide from what it saw."""

    colour: str
    rule: str
    message: str

    def to_json(self) -> dict:
        return {"colour": self.colour, "rule": self.rule, "message": self.message}


@dataclass(frozen=True)
class PlayerScore:
    name: str
    colours: tuple[str, ...]
    score: int
    penalty: int
    bonus: int
    remaining: tuple[str, ...]
    by_colour: tuple[ColourScore, ...]
    place: int  # 1 = best; tied players share a place

    def to_json(self) -> dict:
        return {
            "name": self.name, "colours": list(self.colours), "score": self.score,
            "penalty": self.penalty, "bonus": self.bonus, "remaining": list(self.remaining),
            "place": self.place,
            "by_colour": {c.colour: {"score": c.score, "penalty": c.penalty, "bonus": c.bonus,
                                     "remaining": list(c.remaining)} for c in self.by_colour},
        }


@dataclass(frozen=True)
class ScoreSheet:
    players: tuple[PlayerScore, ...]  # best first
    tiebreak: tuple[str, ...]
    flags: tuple[Flag, ...]
    undecided: tuple[Undecided, ...]

    @property
    def ranking(self) -> list[str]:
        return [p.name for p in self.players]

    def with_unread(self, cells: Sequence, check: str) -> ScoreSheet:
        """This sheet with the cells a camera could not read named in ``undecided``: the
        remaining pieces, and so the score, may change with them. ``check``: where the user
        checks them ("on the overlay", "by tapping them on the board")."""
        if not cells:
            return self
        names = ", ".join(f"({c if isinstance(c, str) else ','.join(str(v) for v in c)})" for c in cells[:12])
        more = "" if len(cells) <= 12 else f" and {len(cells) - 12} more"
        return ScoreSheet(self.players, self.tiebreak, self.flags, self.undecided + (
            Undecided("", "read", f"{len(cells)} cell(s) could not be read with confidence: {names}{more}; "
                                  f"check them {check}"),))

    def to_json(self) -> dict:
        return {
            "players": [p.to_json() for p in self.players],
            "ranking": self.ranking,
            "tiebreak": list(self.tiebreak),
            "flags": [f.to_json() for f in self.flags],
            "undecided": [u.to_json() for u in self.undecided],
        }


@dataclass(frozen=True)
class Tiebreak:
    """One tiebreak step: ``key`` of a player's colour scores, larger is better."""

    rule: str
    words: str
    key: Callable[[Sequence[ColourScore]], float]


class OneColourEach:
    """A setup mixin for games where each player plays one colour and the turn goes round
    the players: the seats the table gave (``players``), else the game's default table."""

    players: tuple[tuple[str, tuple[str, ...]], ...]
    default_players: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()

    @property
    def player_list(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return self.players or self.default_players

    @property
    def turn_order(self) -> tuple[str, ...]:
        return tuple(cs[0] for _, cs in self.player_list)


def rank_players(players: Sequence[tuple[str, Sequence[str]]], colours: Mapping[str, ColourScore],
                 flags: Sequence[Flag], undecided: Sequence[Undecided],
                 tiebreaks: Sequence[Tiebreak]) -> ScoreSheet:
    """Sum colour scores per player, order by score then each tiebreak, explain the ties."""
    rows = []
    for name, cols in players:
        parts = tuple(colours[c] for c in cols)
        rows.append((name, tuple(cols), parts))

    def keys(parts: Sequence[ColourScore]) -> tuple:
        return (sum(p.score for p in parts),) + tuple(t.key(parts) for t in tiebreaks)

    rows.sort(key=lambda row: keys(row[2]), reverse=True)
    words: list[str] = []
    groups: dict[int, list] = {}
    for row in rows:
        groups.setdefault(sum(p.score for p in row[2]), []).append(row)
    for total, group in groups.items():
        if len(group) < 2:
            continue
        names = " and ".join(r[0] for r in group)
        words.append(f"{names} tie on {total} points")
        remaining = [group]
        for t in tiebreaks:
            split = []
            for g in remaining:
                values = {r[0]: t.key(r[2]) for r in g}
                if len(g) > 1 and len(set(values.values())) > 1:
                    order = sorted(g, key=lambda r: values[r[0]], reverse=True)
                    words.append(f"{t.rule} {t.words}: " + ", ".join(r[0] for r in order) + " in that order")
                buckets: dict[float, list] = {}
                for r in g:
                    buckets.setdefault(values[r[0]], []).append(r)
                split.extend(b for b in buckets.values() if len(b) > 1)
            remaining = split
        for g in remaining:
            words.append(" and ".join(r[0] for r in g) + " remain tied and share a place"
                         + ("" if tiebreaks else " (the rules name no tiebreak)"))
    scored = []
    place, previous = 0, None
    for i, (name, cols, parts) in enumerate(rows):
        k = keys(parts)
        if k != previous:
            place, previous = i + 1, k
        scored.append(PlayerScore(
            name=name, colours=cols, score=k[0], penalty=sum(p.penalty for p in parts),
            bonus=sum(p.bonus for p in parts), remaining=tuple(x for p in parts for x in p.remaining),
            by_colour=parts, place=place))
    return ScoreSheet(tuple(scored), tuple(words), tuple(flags), tuple(undecided))
