"""Equilibrix Combact live: the camera sees fields turn black or white; the table taps the rest.

Newly covered fields of one colour are one tile placement. Which ring tile it was comes from
the ring the camera saw (the tile gone from it), or else from the fields' shape: the first
tile of that shape among those offered next to the Origin, decided when the move is judged,
so a take-back or correction earlier in the game re-decides it. One field alone is a
mini-tile. What the camera cannot know is entered by tap: the 5+1 token played with a tile,
or another ring tile than the one guessed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Mapping, Sequence

from rules import equilibrix, flower
from rules.board import Board, bits
from rules.lattice import Cell
from rules.observe import regions

from ..layout import flower_layout
from .base import Derived, Entry, SessionError, last_placements
from .cells import CellAdapter, Laid, Piece

UNKNOWN_TILE = "?"  # tiles whose shape no ring tile has: judged "not offered" (E1)


def kombo_series(doc: Mapping) -> list[dict] | None:
    """The earlier games of the KOMBO series a setup document continues (``"kombo"``:
    ``[{"variant", "winner"}]``), [] for a series' first game, None for a single game.

    Checked before the session is stored: the snapshot of every later start reads this list,
    so a malformed one would break the table's session on every restart.
    """
    kombo = doc.get("kombo")
    if kombo is None:
        settings = doc.get("settings")
        return [] if isinstance(settings, Mapping) and settings.get("kombo") else None
    games = []
    if not isinstance(kombo, list):
        raise SessionError("'kombo' lists the series' earlier games")
    for g in kombo:
        if not (isinstance(g, Mapping) and g.get("variant") in equilibrix.VARIANTS
                and g.get("winner") in equilibrix.COLOURS):
            raise SessionError("each earlier KOMBO game is {\"variant\": one of "
                               f"{', '.join(equilibrix.VARIANTS)}, \"winner\": \"B\" or \"W\"}}")
        games.append({"variant": g["variant"], "winner": g["winner"]})
    if max(Counter(g["winner"] for g in games).values(), default=0) >= 2:
        raise SessionError("that KOMBO series is over: a player has two wins")
    return games


class EquilibrixAdapter(CellAdapter):
    game = "equilibrix"
    colours = equilibrix.COLOURS
    catches_up = False  # a tile's ring slot is read with its board: a kept board would take the latest ring's

    def __init__(self, setup: equilibrix.Setup, kombo: list | None = None):
        super().__init__(setup)
        self.camera_ring: tuple | None = None
        # KOMBO: the results of the series' earlier games ([{"variant", "winner"}]); None: a single game
        self.kombo = kombo

    @property
    def board(self) -> Board:
        return flower.board()

    def parse_cell(self, value: Any) -> Cell:
        if isinstance(value, str):
            return flower.parse_field(value)
        if isinstance(value, (list, tuple)) and len(value) == 3 and all(type(x) is int for x in value):
            return tuple(value)
        raise ValueError(f"{value!r} is not a field")

    def cell_json(self, cell: Cell) -> str:
        return flower.field_id(cell)

    def key(self, cell: Cell) -> str:
        return flower.field_id(cell)

    def move_cells(self, move: equilibrix.Move) -> tuple:
        return tuple(move.fields)

    def laid(self, game: equilibrix.Game) -> dict[Cell, str]:
        b = self.board
        return {b.cells[i]: c for c in equilibrix.COLOURS for i in bits(game.own[c])}

    # --- the log -------------------------------------------------------------------------

    def move_of(self, kind: str, payload: dict) -> Laid | None:
        if kind == "move":
            extra = {k: payload[k] for k in ("tile", "token") if k in payload}
            return Laid(payload["colour"], tuple(flower.parse_field(f) for f in payload["fields"]), extra=extra)
        if kind == "pass":
            return Laid(payload["colour"], passed=True)
        return None

    def amend(self, entries: list[Entry], payload: dict) -> list[Entry]:
        """A tap about a logged tile: which ring tile it is, or that the 5+1 token came with it."""
        out = []
        for e in entries:
            if e.event_id == payload["event"]:
                extra = dict(e.move.extra)
                # "tile": None (back to the guess from the shape) is kept, not dropped: it is the
                # player's word, so a tile logged again guesses rather than take the ring then seen
                extra.update((k, payload[k]) for k in ("tile", "token") if k in payload)
                e = Entry(e.event_id, Laid(e.move.colour, e.move.cells, e.move.passed, extra))
            out.append(e)
        return out

    def play(self, entries: Sequence[Entry], before: Derived | None = None,
             added: Sequence[Entry] = ()) -> Derived:
        game = before.game if before is not None else equilibrix.Game.start(self.setup)
        sources = list(before.sources) if before is not None else []
        for entry in (added if before is not None else entries):
            laid = entry.move
            if laid.passed:
                move = equilibrix.Move(laid.colour, passed=True)
            else:
                tile = laid.extra.get("tile") or self.guess_tile(game, laid.colour, laid.cells)
                move = equilibrix.Move(laid.colour, laid.cells, tile, bool(laid.extra.get("token", False)))
            game = game.play(move)
            sources.append(entry.event_id)
        return Derived(game, tuple(sources), tuple(entries) + tuple(added))

    def guess_tile(self, game: equilibrix.Game, colour: str, cells: tuple[Cell, ...]) -> str | None:
        """The ring tile these fields most likely are: one of that shape offered to ``colour``,
        else any left in the ring of that shape (then E1 flags it); one field: a mini-tile."""
        if len(cells) == 1:
            return None
        shape = self.setup.tiles.identify(cells)
        left = [t for t in game.ring if t is not None]
        for pool in (game.offered(colour), left):
            for tile in pool:
                if equilibrix.tile_shape(tile) == shape:
                    return tile
        return UNKNOWN_TILE

    # --- input ---------------------------------------------------------------------------

    def occupied(self, board: Mapping) -> dict[Cell, str]:
        """``{field: "B"|"W"}``, or ``{"fields": {...}, "ring": [...], "origin": n}`` when the
        camera also read the ring (its tiles clockwise, None for an empty slot). A board
        without the ring forgets the last one: the ring may have changed out of sight."""
        ring = None
        if "fields" in board:
            ring = tuple(board["ring"]) if board.get("ring") is not None else None
            board = board["fields"]
        self.camera_ring = ring
        return super().occupied(board)

    def explain(self, derived: Derived, seen: dict[Cell, str]) -> tuple[int, list[dict]] | None:
        game, b = derived.game, self.board
        laid = self.laid(game)
        changed = [c for c in seen.keys() | laid.keys() if seen.get(c) != laid.get(c)]
        if not changed:
            return 0, []
        if any(c in seen and c in laid for c in changed):
            return None  # a field turned into the other colour: a misread, not play
        if any(c not in b.index or seen[c] not in equilibrix.COLOURS for c in changed if c in seen):
            return None
        gone = {c for c in changed if c in laid}
        placed = [t for t in game.turns if not t.move.passed]
        count = 0
        for turn in reversed(placed):
            if not gone:
                break
            gone -= set(turn.move.fields)
            count += 1
        if gone or count > 2:
            return None
        still = dict(laid)
        for turn in placed[len(placed) - count:]:
            for f in turn.move.fields:
                still.pop(tuple(f), None)
        pieces = regions(b, {c: col for c, col in seen.items() if c not in still}, equilibrix.COLOURS)
        if len(pieces) > 2:
            return None
        pieces = self.in_play_order(derived, count, pieces)
        moves = []
        for colour, cells in pieces:
            doc = {"colour": colour, "fields": [flower.field_id(c) for c in cells]}
            tile = self.tile_gone_from_ring(game)
            if tile is not None and len(pieces) == 1 and len(cells) > 1:
                doc["tile"] = tile
            moves.append(doc)
        return count, moves

    def new_in_play_order(self, derived: Derived, count: int, before: Sequence[Laid],
                          new: Sequence[Piece]) -> list[Piece]:
        """By turn from the colour to move after ``before`` (the pieces logged again and the
        passes that stand), else from the colour to move before the first taken-back placement
        (the colour to move now, if none taken back): two tiles first seen together leave no
        trace of their order, and the turn order is the reading the referee accepts.

        Ordered from the colour to move before the stray, two new tiles after a pass that
        stands (declared after a stray out of turn) went the passer's first, out of turn
        (session 24 review)."""
        game = derived.game
        if before:
            first = self.setup.after(before[-1].colour)
        elif count:
            events = last_placements(derived, count, lambda t: not t.move.passed)
            turn = derived.sources.index(events[0])
            first = self.setup.after(game.turns[turn - 1].move.colour) if turn else game.setup.turn_order[0]
        else:
            first = game.colour_to_move
        return sorted(new, key=lambda piece: piece[0] != first)

    def tile_gone_from_ring(self, game: equilibrix.Game) -> str | None:
        """The ring tile the camera no longer sees in the ring, if it read the ring: the one
        shape missing from it (the reader sees shapes, not which copy), as the tile of that
        shape offered to the player to move, else any left of that shape."""
        if self.camera_ring is None:
            return None
        seen = Counter(slot["shape"] if isinstance(slot, Mapping) else equilibrix.tile_shape(slot)
                       for slot in self.camera_ring if slot is not None)
        gone = Counter(equilibrix.tile_shape(t) for t in game.ring if t is not None) - seen
        if sum(gone.values()) != 1:
            return None
        (shape,) = gone
        left = [t for t in game.ring if t is not None]
        return next(t for t in game.offered(game.colour_to_move) + left if equilibrix.tile_shape(t) == shape)

    def amendment(self, derived: Derived, doc: dict) -> dict:
        event = doc.get("event")
        if event not in derived.sources or event is None:
            raise SessionError(f"there is no logged move {event!r}")
        out: dict = {"event": event}
        if "token" in doc:
            if not isinstance(doc["token"], bool):
                raise SessionError("'token' is true or false")
            out["token"] = doc["token"]
        if "tile" in doc:
            tile = doc["tile"]
            if tile is not None and tile not in self.setup.ring:
                raise SessionError(f"there is no ring tile {tile!r}")
            out["tile"] = tile
        if len(out) == 1:
            raise SessionError("say which ring tile it was ('tile') or whether the 5+1 token came with it ('token')")
        return out

    # --- output --------------------------------------------------------------------------

    def turn_details(self, turn: Any) -> dict:
        return {} if turn.move.passed else {"token": turn.move.token}

    def layout(self, derived: Derived) -> dict:
        return flower_layout(self.setup.markers if self.setup.variant == "tri-mety" else {})

    def view(self, derived: Derived) -> dict:
        game = derived.game
        doc = super().view(derived)
        to_move = None if game.over else game.colour_to_move
        doc["equilibrix"] = {
            "ring": list(game.ring),
            "origin": game.origin,
            "offered": game.offered(to_move) if to_move else [],
            "tokens": dict(game.tokens),
            "minis": {c: sorted(game.minis[c]) for c in equilibrix.COLOURS},
            "mini_turns_left": {c: equilibrix.MAX_MINI_TURNS - game.mini_turns(c) for c in equilibrix.COLOURS},
            "variant_name": equilibrix.VARIANT_NAMES[self.setup.variant],
            "shapes": {t: equilibrix.tile_shape(t) for t in self.setup.ring},
        }
        if self.kombo is not None:
            doc["kombo"] = self.kombo_json(derived)
        return doc

    def winner(self, derived: Derived) -> str | None:
        """The colour that won this game (None: not over, or a draw)."""
        if not derived.game.over:
            return None
        sheet = equilibrix.score(derived.game)
        first = [p for p in sheet.players if p.place == 1]
        return first[0].colours[0] if len(first) == 1 else None

    def kombo_json(self, derived: Derived) -> dict:
        """KOMBO so far: the earlier games, this one's winner once over, the wins, the series' winner."""
        games = [equilibrix.KomboGame(replace(self.setup, variant=g["variant"]), g.get("winner"))
                 for g in self.kombo]
        games.append(equilibrix.KomboGame(self.setup, self.winner(derived)))
        wins = {c: sum(g.winner == c for g in games) for c in equilibrix.COLOURS}
        return {"games": [{"variant": g["variant"], "winner": g.get("winner")} for g in self.kombo],
                "winner_now": games[-1].winner, "wins": wins, "champion": equilibrix.kombo_winner(games)}

    def next_kombo_doc(self, derived: Derived, doc: dict, variant: Any) -> dict:
        """The setup of KOMBO's next game: the loser picks a new variant and chooses from 5
        ring tiles, the winner from 3."""
        if self.kombo is None:
            raise SessionError("this game is not part of a KOMBO series")
        winner = self.winner(derived)
        if winner is None:
            raise SessionError("the next KOMBO game starts when this one has a winner")
        if equilibrix.kombo_winner([equilibrix.KomboGame(self.setup, g.get("winner")) for g in self.kombo]
                                   + [equilibrix.KomboGame(self.setup, winner)]):
            raise SessionError("KOMBO is over: a player has two wins")
        if variant not in equilibrix.VARIANTS or variant == self.setup.variant:
            raise SessionError(f"the loser picks a variant other than {equilibrix.VARIANT_NAMES[self.setup.variant]}")
        loser = next(c for c in equilibrix.COLOURS if c != winner)
        settings = {**(doc.get("settings") or {}), "offered": {loser: 5, winner: 3}}
        return {**doc, "variant": variant, "settings": settings,
                "kombo": self.kombo + [{"variant": self.setup.variant, "winner": winner}]}

    def record(self, derived: Derived) -> dict:
        setup = self.setup
        doc: dict = {"game": "equilibrix", "variant": setup.variant,
                     "players": [{"name": n, "colours": list(c)} for n, c in setup.player_list],
                     "ring": list(setup.ring), "origin": setup.origin}
        if setup.settings_json():
            doc["settings"] = setup.settings_json()
        moves = []
        for turn in derived.game.turns:
            m = turn.move
            if m.passed:
                moves.append({"colour": m.colour, "pass": True})
                continue
            move = {"colour": m.colour, "fields": [flower.field_id(f) for f in m.fields]}
            if m.tile is not None:
                move["tile"] = m.tile
            if m.token:
                move["token"] = True
            moves.append(move)
        doc["moves"] = moves
        return doc
