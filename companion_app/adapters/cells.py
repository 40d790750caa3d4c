"""The part shared by games whose board is cells that take a colour (Blokus, Gemblo,
Equilibrix): the camera's board is ``{cell: colour}``, a move covers cells, and a one-tap
correction says "this cell is really that colour".

A correction edits the moves, not the board: the cell leaves the move that held it, and a
coloured cell joins the latest move of that colour it touches along an edge (the piece it
was misread out of), or else is a move on its own, placed now. Replaying the log with the
correction re-judges every later move exactly as a fresh replay would.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from rules.board import Board
from rules.lattice import Cell
from rules.observe import EMPTY

from ..store import EventRow, KeptBoard
from .base import Derived, Entry, GameAdapter, Item, SessionError, last_placements


@dataclass(frozen=True)
class Laid:
    """A logged move on a cell board: a colour's cells, or its pass; ``extra`` holds what
    the game adds (Equilibrix: the ring tile and the 5+1 token, entered by tap), keyed as
    the move's payload names it, so a piece logged again carries it (:meth:`CellAdapter.logged_as`)."""

    colour: str
    cells: tuple[Cell, ...] = ()
    passed: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def with_cells(self, cells: tuple[Cell, ...]) -> "Laid":
        return Laid(self.colour, cells, self.passed, self.extra)


@dataclass(frozen=True)
class Override:
    """A corrected cell: while the camera reads ``misread`` there, it means ``colour``.

    Without it the next camera board would bring the misread straight back. Once the camera
    reads anything else there clearly the table changed, and the camera is believed again.

    A cell that reads the same whether the piece is there or not cannot show that: a missed
    cell of a piece reads empty, and so does the bare board once the piece is lifted (a
    one-cell move would be left behind); a piece taken back by tap that still lies there reads
    its colour, and so does the same piece laid again (it would never be logged). Such a
    correction also stands on its ``piece``: the piece's other cells, read in its colour when
    the correction was made. Once the camera reads one of them clearly otherwise, the piece
    was lifted or moved, and the correction ends with it.

    A cell the camera could not read (a hand over it) shows nothing against the correction
    while another square of its piece reads clearly in place (a piece is lifted whole): ended
    by a hand over a piece taken back by tap, the piece still on the table was logged again,
    one square, once the hand lifted (Blokus fuzz seed 350), and a tapped misread came back.
    A hand over the whole piece, or over a piece the correction saw nothing else of (a
    monomino), may be lifting it: that ends the correction as before, or the piece laid
    again there (or a real piece laid over a stray's square) read as the correction said and
    was never logged, or logged short. So a tapped misread in a colour stands on the squares
    read in that colour around it too.

    The same test says which boards the correction reads at all (:func:`overridden`): a board
    kept during a hold from before the piece was laid shows the cell as the bare board it was,
    and read with the correction it would hold a one-cell move laid before the piece. A tap
    that sees nothing of its piece (a square missed beside a hand over the rest) cannot tell
    those boards so: a tap on a held change reads only the boards from ``since`` on (the
    source time of the first kept board whose held change reaches the tapped cell; None: every
    board).
    """

    misread: str
    colour: str
    piece: frozenset[Cell] = frozenset()
    since: float | None = None

    def stands(self, cell: Cell, seen: Mapping[Cell, str], doubted: Sequence[Cell]) -> bool:
        """Whether the camera's board ``seen`` (occupied cells; ``doubted``: those it could not
        read) still shows what the correction was made against (a doubted cell shows nothing
        against it while its piece reads clearly in place)."""
        shown = self.misread if self.colour == EMPTY else self.colour  # the piece's colour
        on_piece = all(seen.get(c, EMPTY) == shown or c in doubted for c in self.piece)
        if seen.get(cell, EMPTY) != self.misread and cell in doubted:
            # a hand over the cell may be lifting the piece: only its other squares read clearly
            # in place say it was not
            return on_piece and any(c not in doubted for c in self.piece)
        return seen.get(cell, EMPTY) == self.misread and on_piece

    def also_on(self, piece: frozenset[Cell]) -> "Override":
        """This correction of a missed cell once a later tap on the same piece reads ``piece``
        (the cells the camera reads of it). A tap on a cell with nothing of the piece read
        around it (the far square of two missed, tapped first) stood on nothing: it read every
        board with that cell empty, the bare board from before the piece was laid too, and
        outlived the piece's lift. Now the taps of one piece stand on it together."""
        return Override(self.misread, self.colour, self.piece | piece, self.since)


@dataclass
class Kept:
    """A stable board the camera sent while a change was held back, with the cells it could
    not read then (camera data: never logged as an event, but saved beside the log, since the
    game goes on at the table during a hold and only these boards tell its moves apart after a
    restart: :meth:`CellAdapter.held_boards`). The player's word edits it, as it speaks of the
    table the board saw: a piece taken back by tap goes from it, and once the camera's later
    boards end a correction (the piece it was made on lifted or moved), the kept boards still
    read as the correction said, as they were read while it stood (those it stood on: a board
    from before its piece was laid never read so)."""

    board: dict[Cell, str]
    uncertain: tuple[Cell, ...]
    t: float


def left_on_table(on_table: Mapping[Cell, str]) -> dict[Cell, Override]:
    """The corrections of a piece taken back by tap that still lies on the table (``{cell:
    colour}`` of the cells the camera reads it on): it is no move, said the player, so its
    cells read empty while it lies there unmoved."""
    return {c: Override(colour, EMPTY, frozenset(on_table) - {c}) for c, colour in on_table.items()}


def overridden(seen: Mapping[Cell, str], overrides: Mapping[Cell, Override],
               doubted: Sequence[Cell], t: float) -> dict[Cell, str]:
    """The occupied cells of the board ``seen`` (``doubted``: the cells the camera could not
    read on it; ``t``: its source time) as the player's corrections read it: a cell is a
    correction's ``colour`` where the correction stands on this board (:meth:`Override.stands`:
    the cell read as its ``misread``, its piece there) and the board is not older than the
    change the tap was made at (``Override.since``). A board seen before the piece was laid,
    or after it was lifted, is not what the player spoke of."""
    out = dict(seen)
    for cell, o in overrides.items():
        if o.stands(cell, seen, doubted) and (o.since is None or t >= o.since):
            out[cell] = o.colour
    return {c: colour for c, colour in out.items() if colour != EMPTY}


def without_pieces(board: Mapping[Cell, str], pieces: Sequence[Laid]) -> dict[Cell, str]:
    """A kept board less the ``pieces`` taken back by tap: the cells it shows in a piece's
    colour (a cell it shows in another colour is a piece laid there since the lift)."""
    gone = {(c, m.colour) for m in pieces for c in m.cells}
    return {c: colour for c, colour in board.items() if (c, colour) not in gone}


def correct(entries: list[Entry], cell: Cell, colour: str, event_id: int,
            near: Callable[[Cell], set[Cell]]) -> list[Entry]:
    """The moves after saying "``cell`` is really ``colour``" (``.`` for empty); ``near``
    gives the cells sharing an edge with a cell (a piece is joined along edges)."""
    out = []
    for e in entries:
        if cell in e.move.cells and e.move.colour != colour:
            cells = tuple(c for c in e.move.cells if c != cell)
            if not cells:
                continue
            e = Entry(e.event_id, e.move.with_cells(cells))
        out.append(e)
    if colour == EMPTY or any(cell in e.move.cells for e in out):
        return out
    i = misread_out_of(out, cell, colour, near)
    if i is None:
        return out + [Entry(event_id, Laid(colour, (cell,)))]
    out[i] = Entry(out[i].event_id, out[i].move.with_cells(out[i].move.cells + (cell,)))
    return out


def misread_out_of(entries: Sequence[Entry], cell: Cell, colour: str, near: Callable[[Cell], set[Cell]]) -> int | None:
    """The index of the move a cell said to be ``colour`` joins: the latest move of that
    colour it touches along an edge (the piece it was misread out of); None when none does."""
    touching = near(cell)
    return next((i for i in range(len(entries) - 1, -1, -1) if entries[i].move.colour == colour
                 and not entries[i].move.passed and touching & set(entries[i].move.cells)), None)


PieceKey = tuple[str, frozenset[Cell]]
Piece = tuple[str, tuple[Cell, ...]]  # a piece a board shows: its colour and its cells


def piece_key(move: Laid) -> PieceKey:
    """A placement as its colour and cells (the same piece, logged twice, compares equal)."""
    return move.colour, frozenset(move.cells)


def logged_again(taken: PieceKey, relaid: set[PieceKey]) -> PieceKey | None:
    """The piece of ``relaid`` (logged again) that is the taken-back piece ``taken``: the same,
    or else the one of its colour on all of its cells, if one only (the camera reads more of
    it now: a square missed when it was logged, never tapped, read at the lift; two pieces of
    one colour share no cell). None: it was lifted. A piece of its colour on only some of its
    cells is another piece laid where it lay (a player who changed their mind): taken for it,
    it was logged with the lifted piece's taps (an Equilibrix mini-tile as the fan tapped
    fan-2, with its 5+1 token)."""
    if taken in relaid:
        return taken
    on_it = [k for k in relaid if k[0] == taken[0] and taken[1] <= k[1]]
    return on_it[0] if len(on_it) == 1 else None


@dataclass(frozen=True)
class Relogged:
    """What a piece lifted from under later play leaves of the moves it takes back: those the
    table still shows (:meth:`CellAdapter.relogged`), each logged again as the same move."""

    pieces: dict[PieceKey, Entry]  # the taken-back placement each piece logged again is
    passes: dict[PieceKey | None, list[Entry]]  # the taken-back passes that stand, by the piece each follows


def corrected_cell(payload: dict) -> Any:
    """The cell of a correction event as logged (logs written before Gemblo name it by row and col)."""
    return payload["cell"] if "cell" in payload else (payload["row"], payload["col"])


class CellAdapter(GameAdapter):
    """A game on a :class:`rules.board.Board` whose moves lay coloured cells."""

    colours: tuple[str, ...] = ()  # what a cell can be corrected to (besides empty)
    # Whether the boards sent while a change is held back are kept and caught up on (catch_up):
    # a board that is cells alone; a game whose camera reads more with each board (Equilibrix's
    # ring) would explain a kept board with the latest of those readings, so it waits instead,
    # keeping the latest board alone (saved: a restart, and a tap before the camera's next
    # board, read the change as before).
    catches_up: bool = True
    # Whether a colour's pieces never share an edge (Blokus B5, Gemblo M4): then a square of a
    # colour beside a piece of it is that piece's (a tap's cell read clearly, a kept board's doubt).
    pieces_apart: bool = False

    def __init__(self, setup: Any):
        super().__init__(setup)
        self.camera_board: dict[Cell, str] | None = None
        self.camera_t = 0.0  # source time of the camera's last board
        self.overrides: dict[Cell, Override] = {}
        # The boards sent since a change was held back, oldest first, the latest last (see catch_up).
        self.kept: list[Kept] = []

    # --- what a game fills in ------------------------------------------------------------

    @property
    def board(self) -> Board:
        raise NotImplementedError

    def parse_cell(self, value: Any) -> Cell:
        """A cell as the page or a reader names it; ValueError when it is not one."""
        raise NotImplementedError

    def laid(self, game: Any) -> dict[Cell, str]:
        """What the game has on the board, ``{cell: colour}``."""
        raise NotImplementedError

    def explain(self, derived: Derived, seen: dict[Cell, str]) -> tuple[int, list[dict]] | None:
        """The board ``seen`` as (placements taken back, move payloads to log); None when the
        change is not play (a misread, a bumped board): the table is asked instead."""
        raise NotImplementedError

    def move_of(self, kind: str, payload: dict) -> Laid | None:
        """The move a logged event adds, if any."""
        raise NotImplementedError

    def amend(self, entries: list[Entry], payload: dict) -> list[Entry]:
        return entries

    def new_in_play_order(self, derived: Derived, count: int, before: Sequence[Laid],
                          new: Sequence[Piece]) -> list[Piece]:
        """The pieces ``new`` (first seen on this board) in the order the game reads them laid,
        after the log less its last ``count`` placements (taken back) and then ``before`` (the
        moves logged ahead of them: :meth:`in_play_order`)."""
        raise NotImplementedError

    def play(self, entries: Sequence[Entry], before: Derived | None = None,
             added: Sequence[Entry] = ()) -> Derived:
        """Judge the entries in order (``before`` already judged, then ``added``)."""
        raise NotImplementedError

    # --- the log -------------------------------------------------------------------------

    def replay(self, events: Sequence[EventRow]) -> list[Entry]:
        """The moves the log stands for, in order, after corrections and take-backs."""
        entries: list[Entry] = []
        for event in events:
            p = event.payload
            move = self.move_of(event.kind, p)
            if move is not None:
                entries.append(Entry(event.id, move))
            elif event.kind == "take_back":
                gone = set(p["events"])
                entries = [e for e in entries if e.event_id not in gone]
            elif event.kind == "correction" and not p.get("held"):  # a held tap edits no move
                entries = correct(entries, self.parse_cell(corrected_cell(p)), p["colour"], event.id, self.near)
            elif event.kind == "amend":
                entries = self.amend(entries, p)
        return entries

    def derive(self, events: Sequence[EventRow], before: Derived | None = None,
               new: Sequence[EventRow] = ()) -> Derived:
        if new and before is not None and all(self.move_of(e.kind, e.payload) is not None for e in new):
            return self.play(before.entries, before, self.replay(new))
        return self.play(self.replay(events))

    def near(self, cell: Cell) -> set[Cell]:
        board = self.board
        return set(board.cells_of(board.edge[board.index[cell]])) if cell in board.index else set()

    def restore(self, events: Sequence[EventRow], derived: Derived) -> None:
        """Corrections still standing after a restart: the latest per cell, if the game agrees
        (a held tap, whose change was not logged yet, if the game has laid nothing there). The
        log cannot say which of them the camera has ended since: :meth:`resume_hold` replaces
        them whole with the corrections saved standing with the camera's last board (schema 5),
        and keeps only those that stand on that board where it was saved without them (a folder
        saved before)."""
        laid = self.laid(derived.game)
        out: dict[Cell, tuple[Override, bool]] = {}
        for event in events:
            p = event.payload
            if event.kind == "correction":
                cell = self.parse_cell(corrected_cell(p))
                out.pop(cell, None)
                if p.get("misread") not in (None, p["colour"]):
                    tapped = self.override_of(p)
                    out[cell] = tapped, bool(p.get("held"))
                    for c in map(self.parse_cell, p.get("joined", ())):
                        if c in out:  # the earlier tap on the piece (Override.also_on)
                            o, held = out[c]
                            out[c] = o.also_on(tapped.piece), held
            elif event.kind == "take_back" and "on_table" in p:
                on_table = {self.parse_cell(c["cell"]): c["colour"] for c in p["on_table"]}
                out.update((cell, (o, False)) for cell, o in left_on_table(on_table).items())
        self.overrides = {cell: o for cell, (o, held) in out.items()
                          if laid.get(cell, EMPTY) == o.colour or (held and cell not in laid)}

    def held_boards(self) -> list[KeptBoard]:
        """The boards kept while a change is held back, then the camera's last board as it came,
        not held, with the corrections standing (the corrections' ends are judged on the
        camera's boards: :meth:`resume_hold`; during a hold too, since the player's word edits
        the kept boards). Saved when they change: once per stable board, and with a tap or a
        take-back that changes the corrections, in the transaction that logs it."""
        held = [self.saved_board(k) for k in self.kept]
        if self.camera_board is None:
            return held
        standing = [self.override_json(c, self.overrides[c]) for c in sorted(self.overrides)]
        return held + [replace(self.saved_board(Kept(self.camera_board, self.uncertain, self.camera_t)),
                               held=False, corrections=standing)]

    def saved_board(self, kept: Kept) -> KeptBoard:
        """A board the camera sent, as it is saved (held)."""
        return KeptBoard([[self.cell_json(c), colour] for c, colour in sorted(kept.board.items())],
                         [self.cell_json(c) for c in kept.uncertain], kept.t)

    def resume_hold(self, boards: Sequence[KeptBoard]) -> None:
        """The boards the hold kept before a restart, and the camera's last board, saved after
        them, not held (a folder saved before: the latest kept board stands for it), so the page
        rings what it did, and a tap before the camera's next board reads as before. The
        corrections are those saved standing with the camera's board: each one the camera ended
        on any board stays ended, as it ended. The camera's last board alone could not say so
        of a correction whose square it could not read (a hand over it: the correction read as
        standing, ringed again, Gemblo fuzz seeds 83 and 464, Equilibrix 92), nor of a piece
        taken back by tap, left on the table, lifted and laid again (it read empty again and
        was never logged). A board saved before schema 5 has no corrections with it: those the
        log brings back (:meth:`restore`) that it no longer shows stay ended, as before. (A kept
        board is no such test: the player's word edits it, a piece taken back goes from it while
        it may lie there still.)"""
        kept = [self.kept_from(k) for k in boards if k.held]  # all read before any is held
        if boards:
            camera = boards[-1]
            latest = self.kept_from(camera)
            standing = None if camera.corrections is None else self.standing_from(camera.corrections)
            self.camera_board, self.uncertain, self.camera_t = latest.board, latest.uncertain, latest.t
            if standing is not None:
                self.overrides = standing
            elif not camera.held:
                self.overrides = self.standing_on(latest.board, latest.uncertain)
        self.kept = kept

    def override_json(self, cell: Cell, override: Override) -> dict:
        """A standing correction as its correction event names it (:meth:`override_of` reads it)."""
        doc = {"cell": self.cell_json(cell), "misread": override.misread, "colour": override.colour,
               "piece": [self.cell_json(c) for c in sorted(override.piece)]}
        return doc if override.since is None else {**doc, "since": override.since}

    def override_of(self, doc: Mapping) -> Override:
        """The correction a correction event's payload (or a saved standing one) makes of its
        cell (:func:`corrected_cell`)."""
        return Override(doc["misread"], doc["colour"], frozenset(self.parse_cell(c) for c in doc.get("piece", ())),
                        doc.get("since"))

    def standing_on(self, seen: Mapping[Cell, str], doubted: Sequence[Cell]) -> dict[Cell, Override]:
        """The corrections standing that the camera's board ``seen`` (``doubted``: the cells it
        could not read) still shows (:meth:`Override.stands`): the others it ended."""
        return {cell: o for cell, o in self.overrides.items() if o.stands(cell, seen, doubted)}

    @property
    def free_colours(self) -> frozenset[str]:
        """The colours that take no turns (the table's obstacles): none unless the game has them."""
        return frozenset()

    @property
    def pickable(self) -> tuple[str, ...]:
        """What a tap may say a cell is: a colour of the game, or empty."""
        return self.colours + (EMPTY,)

    def standing_from(self, saved: list) -> dict[Cell, Override]:
        """The corrections saved standing with the camera's board; SessionError when one is not a
        correction on this game's board, or two name one cell (a damaged row: the corrections are
        not guessed at; one correction stands on a cell at a time)."""
        try:
            standing = {self.parse_cell(corrected_cell(doc)): self.override_of(doc) for doc in saved}
            fits = len(standing) == len(saved) and all(
                c in self.board.index and o.piece <= self.board.index.keys()
                and {o.misread, o.colour} <= {*self.pickable} and o.misread != o.colour
                and type(o.since) in (type(None), int, float) for c, o in standing.items())
        except (ValueError, TypeError, KeyError, AttributeError):  # not a correction's fields, a cell no cell
            fits = False
        if not fits:
            raise SessionError(f"the corrections saved with the camera's last board are damaged (they are not "
                               f"a {self.game} board's)")
        return standing

    def kept_from(self, saved: KeptBoard) -> Kept:
        """A saved kept board; SessionError naming what is wrong when its cells or colours are
        not the game's (a damaged row: the hold is not resumed on a guess)."""
        try:
            board = {self.parse_cell(c): colour for c, colour in saved.board}
            uncertain = tuple(self.parse_cell(c) for c in saved.uncertain)
            fits = {*board, *uncertain} <= self.board.index.keys() and {*board.values()} <= {*self.colours}
        except (ValueError, TypeError):  # not [cell, colour] pairs, a cell no cell, a colour a list
            fits = False
        if not fits:
            raise SessionError(f"a camera board saved while a change was held back is damaged (its cells or "
                               f"colours are not a {self.game} board's)")
        return Kept(board, uncertain, saved.t)

    # --- input ---------------------------------------------------------------------------

    def observe(self, derived: Derived, board: Mapping, uncertain: Sequence, t: float) -> list[Item]:
        """The events for a newly stable board: those the board shows, or, while a change is
        held back, the first step of catching up (:meth:`catch_up`; the session asks for the
        rest)."""
        seen_now = self.occupied(board)
        # a board is never older than the boards and taps before it: a source clock that starts
        # again lower after a restart (a video or folder source; a webcam's clock after a reboot)
        # left a held tap's ``since`` ahead of every later board, and the tap was lost
        t = max(t, self.camera_t, *(o.since for o in self.overrides.values() if o.since is not None))
        self.camera_board, self.camera_t = seen_now, t
        self.uncertain = tuple(self.parse_cell(c) for c in uncertain)
        standing = self.standing_on(seen_now, self.uncertain)
        ended = {cell: o for cell, o in self.overrides.items() if cell not in standing}
        for k in self.kept if ended else ():  # the kept boards were read with the ended corrections: they stay so
            k.board = overridden(k.board, ended, k.uncertain, k.t)
        self.overrides = standing
        if self.kept and not self.holds_first_change(derived, seen_now):
            self.kept = []  # the held change is gone from the table: the boards kept for it say nothing now
        if self.catches_up:
            # keep the board (the game goes on at the table meanwhile, and a late tap reads it, not
            # only the latest board); it settles the doubts of the boards kept before it
            self.keep(seen_now, self.uncertain, t)
            first = self.laid_first(derived)
            if first is not None:  # the pieces in the order the table laid them
                self.kept = [first, self.kept[-1]]
                return self.catch_up(derived)
        items = self.explained_alone(derived)
        if items is not None:
            return items
        if not self.catches_up:  # part of the change could not be read, or it is not play: wait for a clearer board
            self.kept = [Kept(dict(seen_now), self.uncertain, t)]
            return []
        # part of the change could not be read, or it is not play (a misread the player has not
        # tapped yet, the table too far ahead of the log for one board): log what the boards kept
        # so far explain, if anything
        return self.catch_up(derived)

    def keep(self, seen: dict[Cell, str], uncertain: tuple[Cell, ...], t: float) -> None:
        """Keep a board sent while a change is held back.

        A doubt of an earlier kept board is settled when this board reads the cell clearly:
        the same way (the camera has now read what it doubted); empty (what the doubt showed
        there, a shadow read as a colour, was no piece that stays: a piece lifted since shows
        on its squares read clearly, :meth:`stale`); or as a square of a piece that board
        already showed (:meth:`completes`: a piece is laid whole, so the cell was that
        piece's then: a hand over it, a misread); or in a colour, the cell read occupied on
        every board kept since (:meth:`lay_there`: a piece misread in colour). The earlier
        board then reads the cell so. Any other clear reading settles nothing, as a piece may
        have been laid there since. Left unsettled, such a doubt held the catch-up for good,
        or made its board stale, with every ring on the page read clearly. A board the same as
        the last kept one replaces it (nothing was played in between).
        """
        for i, k in enumerate(self.kept):
            settled = {c for c in k.uncertain if c not in uncertain
                       and (seen.get(c, EMPTY) in (EMPTY, k.board.get(c)) or self.completes(k, c, seen, uncertain)
                            or self.lay_there(c, self.kept[i:], seen, uncertain))}
            k.board = {c: colour for c, colour in {**k.board, **{c: seen.get(c, EMPTY) for c in settled}}.items()
                       if colour != EMPTY}
            k.uncertain = tuple(c for c in k.uncertain if c not in settled)
        if self.kept and self.kept[-1].board == seen:
            self.kept.pop()
        self.kept.append(Kept(dict(seen), uncertain, t))

    def lay_there(self, cell: Cell, since: Sequence[Kept], seen: Mapping[Cell, str], doubted: Sequence[Cell]) -> bool:
        """Whether ``cell``, doubted on the first of the kept boards ``since`` and read clearly
        on the board ``seen`` (not doubted there), is read occupied on all of them and on
        ``seen``. A piece is not moved without being lifted, and a lift shows the bare cell (a
        hand over it reads empty), so one piece lay there all along: the doubt was its colour
        misread (a monomino read in another colour, doubted, and read right only after more
        pieces were laid: Gemblo fuzz seed 334). Left doubted, the board held the catch-up, then
        went stale against the clear reading, and the boards after it were too far ahead of
        the log for any to explain: the game stalled. A piece is laid whole, too: every square
        of the piece ``seen`` reads clearly there is occupied or doubted on each of those boards
        (a shadow read in a colour where a piece was then laid shows the piece's other squares
        bare; settled, it logged a one-square move there, legal and unflagged)."""
        if seen.get(cell, EMPTY) == EMPTY or cell not in self.board.index:
            return False
        piece = self.piece_around({c: col for c, col in seen.items() if c not in doubted}, cell)
        return all(k.board.get(c, EMPTY) != EMPTY or (c != cell and c in k.uncertain) for k in since for c in piece)

    def completes(self, kept: Kept, cell: Cell, seen: Mapping[Cell, str], doubted: Sequence[Cell]) -> bool:
        """Whether the board ``seen`` (``doubted``: its cells the camera could not read) reads
        ``cell`` (doubted on the ``kept`` board) clearly as a square of a piece ``kept`` already
        shows: the cell is joined along edges, through cells ``seen`` reads clearly in its colour,
        to a cell ``kept`` read clearly in that colour. A colour's pieces never share an edge
        (Blokus B5, Gemblo M4), so that piece is one, laid whole before ``kept`` was seen (in a
        game where they may, nothing is settled so). A doubted cell links nothing: a shadow read
        in the colour between an old piece and a new one would make the new one's square the old
        one's."""
        colour = seen.get(cell, EMPTY)
        if not self.pieces_apart or colour == EMPTY or kept.board.get(cell) == colour or cell in doubted \
                or cell not in self.board.index:
            return False
        clear = {c: col for c, col in seen.items() if c not in doubted}
        return any(kept.board.get(c) == colour and c not in kept.uncertain for c in self.piece_around(clear, cell))

    def holds_first_change(self, derived: Derived, seen: dict[Cell, str]) -> bool:
        """Whether the board ``seen`` still shows the change the first kept board holds back:
        every cell of it read clearly on both boards is read the same (the player's
        corrections standing). A cell doubted on either is no sign the change went: the doubt
        the change waits on read clearly at last, or a hand over the piece now; dropping the
        kept boards for it lost the pieces laid meanwhile (three or more: the game stalled).
        Nor is a logged piece's square the first board read bare and ``seen`` reads as a square
        of another piece (:meth:`laid_over`)."""
        first = self.kept[0]
        then = self.with_overrides(first.board, first.uncertain, first.t)
        now = self.with_overrides(seen, self.uncertain, self.camera_t)
        doubted = {*first.uncertain, *self.uncertain}
        return all(then.get(c) == now.get(c) or (c not in then and self.laid_over(derived, c, now, doubted))
                   for c in self.differences(derived, first) if c not in doubted)

    def laid_over(self, derived: Derived, cell: Cell, now: Mapping[Cell, str], doubted: set[Cell]) -> bool:
        """Whether ``cell``, a square of a logged piece, is read on the board ``now``
        (``doubted``: the cells it could not read) clearly as a square of a piece other than
        that one: a piece laid over the square since the logged one was lifted, which says
        nothing of the lifted piece coming back. A hand over a square of the logged piece
        says nothing either way (the clear squares around fall short of it): the piece put
        back under a hand was taken for another, the boards stayed and the game stalled. A
        stray lifted and another laid over some of its squares during a hold (Gemblo fuzz seed
        496) read those squares as the log has them again: the held change was taken for gone,
        the boards kept for the piece laid meanwhile were dropped, and the latest board, too
        far ahead of the log, explained nothing."""
        logged = next((set(e.move.cells) for e in reversed(derived.entries) if cell in e.move.cells), None)
        if logged is None or cell not in now or logged & doubted:  # a hand over the piece: it may be the logged one
            return False
        return self.piece_around({c: colour for c, colour in now.items() if c not in doubted}, cell) != logged

    def stale(self, kept: Kept, latest: Kept, derived: Derived) -> bool:
        """Whether a kept board shows a piece the latest board no longer has (a cell it shows
        occupied that the latest board reads clearly as empty or another colour).

        Such a board is skipped, not explained: the piece was taken away before the hold was
        released (a piece laid wrong and lifted, a hand or shadow read as a piece), so logging
        it would put a move in the log the table no longer has, and taking it back again from
        the latest board would need more take-backs than one board may explain once others
        were laid on top: the game would stall with a move wrongly logged. Skipping it, the
        pieces laid meanwhile are still seen on the later boards.
        """
        then = self.with_overrides(kept.board, kept.uncertain, kept.t)
        now = self.with_overrides(latest.board, latest.uncertain, latest.t)
        laid = self.laid(derived.game)  # a logged piece the latest board misreads (glare) is no lifted one
        return any(now.get(c, EMPTY) != colour and c not in latest.uncertain
                   for c, colour in then.items() if laid.get(c) != colour)

    def catch_up(self, derived: Derived) -> list[Item]:
        """The events of the next kept board that explains, from the log's state ``derived``.

        While a change is held back by a doubt the game goes on at the table, and each board
        the camera sends is held too (the change is still on it). Once the hold is released
        (a tap, or a board that reads the doubt clearly), the latest board may be several
        placements ahead of the log, more than one board may explain (``MOST_PER_STEP`` of the
        colours taking turns; the table's obstacles are not counted). So
        the boards are kept and explained one after another, each as :meth:`observe` would
        (against the log as it then is, the player's corrections standing): this returns the
        events of the first that changes the game (the session logs them and asks again),
        none when the next is still held by a doubt, or is not play: it waits, with those
        after it, for a tap at it (or a board without its change, :meth:`holds_first_change`).
        A board that is no play once dropped every kept board: those after it were lost, and
        the tap read only the latest board, often three placements ahead of the log: the game
        stalled. A stale board (:meth:`stale`) is skipped; a board that changes nothing is
        passed over.
        """
        latest = self.kept[-1] if self.kept else None
        while self.kept:
            k = self.kept[0]
            if k is not latest and self.stale(k, latest, derived):
                self.kept.pop(0)
                continue
            if self.doubts_holding(derived, k):
                return []
            explained = self.explain(derived, self.with_overrides(k.board, k.uncertain, k.t))
            if explained is None:
                return []  # not play: held, with the boards after it, for a tap at it (or the change gone)
            self.kept.pop(0)
            items = self.logged_as(derived, explained, k.t)
            if items:
                return items
        return []

    def taken_back_by_tap(self, derived: Derived, events: list[int]) -> dict:
        """The player took the moves of ``events`` back.

        A take-back during a hold keeps the hold: the boards kept show the pieces laid since
        the change was held back, and dropping them left the log too far behind the table for
        any one board to explain (three or more placements waiting: the game stalled). The
        kept boards were seen before the player's word, so those showing a taken-back piece
        show it before the lift: it goes from each of them (:func:`without_pieces`), and the
        rest is caught up in order as before, never that piece again. The corrections of its
        cells end with it. What the camera still reads of it on the table is no move, said
        the player: those cells read empty while the piece lies there unmoved
        (:func:`left_on_table`), so neither a tap beside it nor the next piece laid logs it
        again, and lifted and laid again it is logged. The payload names those cells
        (``on_table``): a restart keeps them.
        """
        gone = [e.move for e in derived.entries if e.event_id in events]
        cells = {c for m in gone for c in m.cells}
        for k in self.kept:
            k.board = without_pieces(k.board, gone)
        seen = self.camera_board or {}
        on_table = {c: m.colour for m in gone for c in m.cells if seen.get(c) == m.colour}
        self.overrides = {c: o for c, o in self.overrides.items() if c not in cells} | left_on_table(on_table)
        payload = super().taken_back_by_tap(derived, events)
        if on_table:
            payload["on_table"] = [{"cell": self.cell_json(c), "colour": colour} for c, colour in sorted(on_table.items())]
        return payload

    def explained_alone(self, derived: Derived) -> list[Item] | None:
        """The events of the camera's latest board alone, when no doubt holds it back and it
        explains the table (the common release: the doubt read clearly, whichever way, or
        tapped); the boards kept before it then add nothing and are dropped. None otherwise."""
        if self.camera_board is None or self.unsure_change(derived):
            return None
        explained = self.explain(derived, self.with_overrides(self.camera_board, self.uncertain, self.camera_t))
        if explained is None:
            return None
        self.kept = []
        return self.logged_as(derived, explained, self.camera_t)

    def laid_first(self, derived: Derived) -> Kept | None:
        """The kept board that shows the first of the pieces the camera's latest board explains,
        when that board explains more than one piece and a board kept before it shows a part of
        them laid (and nothing else): the table laid that part first. None otherwise.

        Logged at once from the latest board, the pieces go in the order of the turns as the log
        has them; when a misread the player has not tapped yet left a wrong move in the log (a
        square read in another colour, a piece of one square), that order is wrong, and the tap
        that mends the misread later re-judges the pieces out of turn (Gemblo fuzz seed 333). A
        kept board that is stale, held by a doubt, or no play says nothing of the order."""
        if len(self.kept) < 2 or self.unsure_change(derived):  # the latest board is the last kept
            return None
        latest = self.explain(derived, self.with_overrides(self.camera_board, self.uncertain, self.camera_t))
        if latest is None or latest[0] or len(latest[1]) < 2:
            return None
        whole = {self.payload_key(m) for m in latest[1]}
        for k in self.kept[:-1]:
            if self.stale(k, self.kept[-1], derived) or self.doubts_holding(derived, k):
                continue
            explained = self.explain(derived, self.with_overrides(k.board, k.uncertain, k.t))
            if explained is not None and (explained[0] or explained[1]):
                part = {self.payload_key(m) for m in explained[1]}
                # the rest must read clearly not laid there (a piece doubted on it, glare, may be the first)
                rest = {c for m in latest[1] if self.payload_key(m) not in part for c in self.payload_key(m)[1]}
                return k if not explained[0] and part < whole and not rest & set(k.uncertain) else None
        return None

    def payload_key(self, move: dict) -> PieceKey:
        """A move payload an explained board logs, as its colour and cells (to compare two
        boards', or a piece logged again with the one taken back)."""
        return piece_key(self.move_of("move", move))

    def logged_as(self, derived: Derived, explained: tuple[int, list[dict]], t: float) -> list[Item]:
        """The events of an explained board change (see :meth:`explain`).

        A piece lifted from under later play takes back every move logged after it, and the
        pieces still on the table are logged again, first, in the order they were logged, then
        the new ones in the game's order from the colour to move after them and after the passes
        that stand (:meth:`in_play_order`: in Blokus and Gemblo the order that breaks the fewest
        rules, in Equilibrix by turn).
        A pass declared after one of those is logged again after it (:meth:`relogged`): the
        camera cannot see a pass, so taken back it was lost, and the next piece was flagged
        out of turn (Gemblo fuzz seed 872: a stray logged late, lifted after the next piece
        and a pass; one that followed only a stray flagged out of turn, before them). A piece
        logged again keeps what its taken-back move said beyond its cells (``Laid.extra``: in
        Equilibrix the ring tile and the 5+1 token the player tapped, or the tile the camera
        saw leave the ring): the camera sees neither, so logged afresh the tile was guessed
        again from the shape and the token was lost. What the move did not say (a tile guessed,
        the ring unseen) this board's reading may say. The piece logged again is the one of its
        colour on its cells, read whole now or not (:func:`logged_again`): matched by the cells
        logged, a piece logged short and read whole at the lift lost its pass and its taps.

        A piece or pass logged again names the taken-back event it is (``logs_again``): an
        alert is its event's, so the warnings the player acknowledged on the old event were
        raised again on the new one; the session carries their acknowledgement over (a rule
        the move breaks now and did not before is raised)."""
        taken_back, moves = explained
        items: list[Item] = []
        relogged = Relogged({}, {})
        if taken_back:
            events = last_placements(derived, taken_back, lambda t: not t.move.passed)
            items.append(("take_back", {"events": events, "source": "camera", "t": t}))
            relogged = self.relogged(derived, events, {self.payload_key(m) for m in moves})

        def passes_after(piece: PieceKey | None) -> list[Item]:
            return [("pass", {"colour": e.move.colour, "source": "user", "logs_again": e.event_id})
                    for e in relogged.passes.get(piece, ())]

        items += passes_after(None)
        for m in moves:
            key = self.payload_key(m)
            old = relogged.pieces.get(key)
            if old is not None:  # the same piece: what its move said wins over what this board read
                m = {**m, **old.move.extra, "logs_again": old.event_id}
            items.append(("move", {**m, "source": "camera", "t": t}))
            items += passes_after(key)
        return items

    def in_play_order(self, derived: Derived, count: int, pieces: Sequence[Piece],
                      laid_before: Sequence[Piece] = ()) -> list[Piece]:
        """The pieces a board shows laid since the log's last turn less its last ``count``
        placements (taken back), in the order they were laid: first those that are a taken-back
        placement logged again (:meth:`relogged`), turn pieces and ``laid_before`` (pieces of a
        colour taking no turns) alike, in the order they were logged, then the new pieces of
        ``laid_before``, then the new turn pieces as the game orders them
        (:meth:`new_in_play_order`) from the position after what is logged before them: the
        passes that stand, and each piece before them with the passes that follow it. An
        obstacle logged again keeps its place too: a pass declared after it is logged again
        after it (Gemblo 5p, session 24 review: put first, it took the pass ahead of the turn
        pieces logged before it, and they, the pass and the next piece were flagged out of turn).

        The log is evidence of the order of the pieces logged again (each was logged before the
        new ones were on the table); a game's rule for pieces seen together (fewest rules broken,
        turn order) is a guess that only pieces first seen together need. Ordered with the new
        ones by fewest rules broken, a piece logged again that was laid out of turn went after a
        new one and lost its ``wrong_turn`` flag (Blokus, session 24 review); ordered with them by
        turn from the first taken-back placement's colour, a stray laid out of turn and lifted as
        the next tile went down put that tile before the tile logged again, flagged out of turn
        (Equilibrix live fuzz, session 24)."""
        def key(piece: Piece) -> PieceKey:
            return piece[0], frozenset(piece[1])

        relog = Relogged({}, {})
        if count:
            events = last_placements(derived, count, lambda t: not t.move.passed)
            relog = self.relogged(derived, events, {key(p) for p in (*laid_before, *pieces)})
        again = list(relog.pieces)  # in the order they were logged
        relaid = sorted((p for p in (*laid_before, *pieces) if key(p) in relog.pieces),
                        key=lambda p: again.index(key(p)))
        laid_now = [p for p in laid_before if key(p) not in relog.pieces]
        before = [e.move for e in relog.passes.get(None, ())]
        for piece in relaid:
            before += [Laid(piece[0], tuple(piece[1])), *(e.move for e in relog.passes.get(key(piece), ()))]
        before += [Laid(colour, tuple(cells)) for colour, cells in laid_now]
        new = [p for p in pieces if key(p) not in relog.pieces]
        return relaid + laid_now + self.new_in_play_order(derived, count, before, new)

    def relogged(self, derived: Derived, events: Sequence[int], relaid: set[PieceKey]) -> Relogged:
        """What the table kept of the taken-back ``events``, in one walk of them in log order:
        the taken-back placement each piece of ``relaid`` (logged again) is (:func:`logged_again`),
        and the passes declared among them that stand, by the piece each followed: a piece still
        on the table, the latest placement logged before the pass (None: none, the passes go
        before the pieces).
        A pass declared right after a lifted piece goes with it: that piece gave the colour its
        turn (a piece nudged after the next colour passed leaves that colour to move again, as
        before). A stray flagged out of turn gave no colour its turn, nor did an obstacle (a
        colour taking no turns): the passes after it follow what it followed (a stray laid, the
        colour to move passes, the stray lifted as the next piece goes down: the pass stands)."""
        gone = set(events)
        turns = dict(zip(derived.sources, derived.game.turns))
        pieces: dict[PieceKey, Entry] = {}
        passes: dict[PieceKey | None, list[Entry]] = {}
        after: PieceKey | None = None  # the piece still on the table the passes since follow
        given = False  # a lifted piece since gave the colour to move its turn: its passes go with it
        for e in derived.entries:
            if e.event_id not in gone:
                continue
            if e.move.passed:
                if not given:
                    passes.setdefault(after, []).append(e)
            elif (again := logged_again(piece_key(e.move), relaid)) is not None:
                pieces[again] = e
                after, given = again, False
            elif not (e.move.colour in self.free_colours
                      or any(v.code == "wrong_turn" for v in turns[e.event_id].violations)):
                given = True
        return Relogged(pieces, passes)

    def occupied(self, board: Mapping) -> dict[Cell, str]:
        """The camera's board as ``{cell: colour}`` of the occupied cells."""
        return {self.parse_cell(c): colour for c, colour in board.items() if colour != EMPTY}

    def corrected(self, derived: Derived, doc: dict) -> list[Item]:
        """A tap; on a cell at a change the camera holds back (on a doubt, ``unsure_change``, or
        as no play; the cells :meth:`reach` gives), it reads that cell of the camera's board
        rather than edits the moves.

        The held board is not sent again while it holds still, and a correction logged alone
        would make the tapped cell of a new piece a piece of its own (``correct``) and leave
        the rest unlogged. So the tap counts as the camera's reading of the cell; once no
        unsure cell holds the change back, the moves the board shows are logged, then the
        correction (which then changes no move). Until then the tap is logged as ``held``: it
        edits no move on replay, and a restart stands it against the camera again
        (:meth:`restore`), so nothing the player tapped is lost. A tap that edits a logged
        move (a cell the game holds in another colour; or a cell the camera read clearly as the
        game has it, said to be the colour of a logged move beside it: a square of that move
        the camera missed unnoticed, which read as part of the held change logged a piece of
        one square, both flagged) is a plain correction whatever is held, as is any tap while
        the camera's board and the game agree (a taken-back piece still on the table reads
        empty: the take-back stands). Where a colour's pieces may share an edge (Equilibrix), a
        cell that also touches a cell of the held change read in the tapped colour, along an
        edge or at a corner (a tile's fields need not share an arc: a fan's two petals share a
        node only), may be the new tile's, laid against its own colour: it stays the held
        change's. A tile logged short (a field missed unnoticed) and then held by a hand's
        doubts over its fields shows no new field there: the tap on its missed field completes
        the tile, as with no hold; held, it once logged the field as a one-field mini-tile of
        its own, flagged. The price: a new tile whose every other field lies under the hand
        shows nothing of itself either, and the tap on its missed field then joins the older
        tile beside it, unflagged (the new tile is logged flagged once the hand lifts); the
        camera cannot tell the two apart. A doubted cell beside a logged move of its colour stays the held
        change's: it may be a new piece laid against its own colour (flagged as such once
        logged).

        A change the camera holds back as no play (more than it can explain: often a misread
        square cutting a piece in two, or a third piece, while a doubt held the board back) is
        a change as much: a tap on it once was a plain correction, a piece of one square logged
        at once and the rest of the piece after it, both flagged. Where the boards are not
        caught up on (Equilibrix), such a tap reads the camera's board only when that board then
        explains the table (a misread field cutting a tile in two, next to another tile laid);
        otherwise it stays a plain correction (held, it waited with its rings for a board that
        would never be reread).

        The latest board is tried alone first (as any board: it may explain the table in one
        step); only when it is too far ahead are the boards the camera sent while the change
        was held caught up on (:meth:`catch_up`), after the tap (logged as ``held``, as it
        reads the latest board, and a cell it names may only be laid by a later board's move).
        """
        changed = self.differences(derived)
        # a game that does not catch up (Equilibrix) waits on a tap at a change held as no play
        # only when the tap explains it: it never rereads the boards sent meanwhile
        asked = not (self.catches_up or self.unsure_change(derived))
        unseen = {*changed, *self.uncertain}  # before the tap reads its cell (it is no doubt then)
        seen = self.with_overrides(self.camera_board, self.uncertain, self.camera_t) \
            if self.camera_board is not None else {}
        shown = {c: seen[c] for c in changed if c in seen}  # what the held change shows laid, by cell
        at_change = self.reach(changed, self.uncertain)
        # where each kept board holds a change (before the tap reads its cell on them)
        reached = [(k.t, self.reach(self.differences(derived, k), k.uncertain)) for k in self.kept]
        payload = self.correction(derived, doc)
        cell, colour = self.parse_cell(corrected_cell(payload)), payload["colour"]
        edits_a_move = self.laid(derived.game).get(cell, colour) != colour or (
            cell not in unseen and misread_out_of(derived.entries, cell, colour, self.near) is not None
            and (self.pieces_apart or all(shown.get(c) != colour for c in self.board.around([cell]))))
        if cell not in at_change or edits_a_move:
            return [("correction", payload)]
        if cell in self.overrides:  # it reads the boards from the first whose change reaches it
            since = next((t for t, cells in reached if cell in cells), self.camera_t)
            self.overrides[cell] = replace(self.overrides[cell], since=since)
            payload["since"] = since
        if not self.kept and self.catches_up:  # a difference the player's word made since the camera's board
            self.kept = [Kept(dict(self.camera_board), self.uncertain, self.camera_t)]
        items = self.explained_alone(derived)
        if items is not None:
            return items + [("correction", payload)]
        if asked:
            return [("correction", payload)]
        items = self.catch_up(derived)
        if not items:
            return [("correction", {**payload, "held": True})]
        return [("correction", {**payload, "held": True})] + items if self.kept else items + [("correction", payload)]

    def reach(self, held: Sequence[Cell], doubted: Sequence[Cell]) -> set[Cell]:
        """The cells a tap on which reads the ``held`` change (cells that changed, held back by
        a doubt, or as no play) on a board whose doubts are ``doubted``: those on or next to it,
        the doubts joined along edges to a doubt there (``doubts_holding`` counts the ones next
        to it), and the cells sharing an edge with those linked doubts.

        A piece laid with two squares the camera missed shows the change without them: the
        near square is next to it, the far one only next to the near one. Tapped first, the
        far square was a plain correction, logged at once as a one-square move, and the rest
        of the piece became a second move (both flagged; no hold to take the first back). The
        far square is as much the held piece as the near one, seen through the doubt between,
        so its tap waits with the change until the piece is whole. So does a clear cell that
        shares an edge with such a doubt: a square missed unnoticed beside a hand over the piece
        (the hand hides what joins it to the squares read); tapped, it was a one-square move
        and the rest of the piece a second, both flagged (Blokus fuzz seeds 67, 225). Such a
        tap sees nothing of its piece, so it reads only the boards from the first whose held
        change reaches it (``Override.since``): held with a change kept before its piece was laid, it
        stood on the boards kept before, and logged a one-square move there, legal and
        unflagged (session 20's review). A doubt joined by no doubt (a clear cell between) is
        no part of the same unseen stretch: a tap on it, or on a cell only it touches, stays a
        plain correction, as does any tap while nothing is held. Only doubts link here, and
        they link only cells that may be unseen squares of the change (a doubt may hide one; a
        clear empty cell hides nothing); which piece a clear square belongs to is another
        question, answered through clear squares alone (:meth:`completes`)."""
        if not held:
            return set()
        b, near = self.board, self.board.around(held)
        doubts = b.mask(c for c in doubted if c not in self.overrides and c in b.index)
        linked = 0
        for m in b.components(doubts):
            if any(c in near for c in b.cells_of(m)):
                linked |= m
        return near | set(b.cells_of(linked | b.grow(linked, b.edge)))

    def correction(self, derived: Derived, doc: dict) -> dict:
        colour = doc.get("colour")
        if colour not in self.pickable:
            raise SessionError(f"unknown colour {colour!r} (use {' '.join(self.pickable)})")
        try:
            cell = self.parse_cell(doc.get("cell"))
        except (ValueError, TypeError):
            cell = None
        if cell is None or cell not in self.board.index:
            raise SessionError(f"cell {doc.get('cell')!r} is not on the {self.game} board")
        misread = self.camera_board.get(cell, EMPTY) if self.camera_board is not None else None
        self.overrides.pop(cell, None)
        payload = {"cell": self.cell_json(cell), "colour": colour, "misread": misread}
        if misread is not None and misread != colour:
            piece, joined = self.piece_read(cell, colour) if colour != EMPTY else (frozenset(), set())
            self.overrides[cell] = Override(misread, colour, piece)
            if piece:
                payload["piece"] = [self.cell_json(c) for c in sorted(piece)]
                for c in joined:
                    self.overrides[c] = self.overrides[c].also_on(piece)
                if joined:  # a restart joins them again (restore)
                    payload["joined"] = [self.cell_json(c) for c in sorted(joined)]
        self.uncertain = tuple(c for c in self.uncertain if c != cell)  # the player has read it
        for k in self.kept:
            k.uncertain = tuple(c for c in k.uncertain if c != cell)
        return payload

    def piece_read(self, cell: Cell, colour: str) -> tuple[frozenset[Cell], set[Cell]]:
        """The cells the camera reads ``colour`` of the piece that ``cell``, said to be
        ``colour``, belongs to: joined to it along edges through cells of that colour (the
        player's corrections standing); empty for a piece the camera sees nothing of. With the
        other cells of it the player said are ``colour`` where the camera read them empty
        (earlier taps on the same piece)."""
        read = self.with_overrides(self.camera_board, self.uncertain, self.camera_t)
        cells = self.piece_around({**read, cell: colour}, cell) - {cell}
        joined = {c for c, o in self.overrides.items() if c in cells and o.misread == EMPTY and o.colour == colour}
        return frozenset(c for c in cells if self.camera_board.get(c) == colour), joined

    def piece_around(self, board: Mapping[Cell, str], cell: Cell) -> set[Cell]:
        """The cells joined to ``cell`` along edges through cells ``board`` reads in its colour
        (``cell`` among them): the piece it is a square of, where a colour's pieces stay apart."""
        b, colour = self.board, board[cell]
        part = next(m for m in b.components(b.mask(c for c, col in board.items() if col == colour and c in b.index))
                    if m >> b.index[cell] & 1)
        return set(b.cells_of(part))

    def with_overrides(self, seen: dict[Cell, str], doubted: Sequence[Cell], t: float) -> dict[Cell, str]:
        """The board ``seen`` (``doubted``: its cells the camera could not read; ``t``: its source
        time) as the player's standing corrections read it (:func:`overridden`)."""
        return overridden(seen, self.overrides, doubted, t)

    def differences(self, derived: Derived, kept: Kept | None = None) -> tuple[Cell, ...]:
        """Cells where the camera's last board (or a ``kept`` board) and the game disagree
        (shown as unsure): those the change could not explain, or a piece taken back that is
        still there."""
        board, doubted, t = (self.camera_board, self.uncertain, self.camera_t) if kept is None \
            else (kept.board, kept.uncertain, kept.t)
        if board is None:
            return ()
        seen = self.with_overrides(board, doubted, t)
        game = self.laid(derived.game)
        return tuple(sorted(c for c in seen.keys() | game.keys() if seen.get(c) != game.get(c)))

    def doubts_holding(self, derived: Derived, kept: Kept | None = None) -> set[Cell]:
        """The cells the camera could not read that lie on or next to a cell that changed
        (cells the user corrected count as read): each one holds the change back. Of the
        camera's last board, or of a ``kept`` board."""
        near = self.board.around(self.differences(derived, kept))
        uncertain = self.uncertain if kept is None else kept.uncertain
        return {c for c in uncertain if c in near and c not in self.overrides}

    def kept_doubts(self, derived: Derived) -> set[Cell]:
        """The doubts holding back the first kept board (the page shows them with the
        latest board's, so the player finds the tap the log waits on)."""
        return self.doubts_holding(derived, self.kept[0]) if self.kept else set()

    def unsure_change(self, derived: Derived) -> bool:
        """Whether a cell that changed lies on or next to one the camera could not read.

        Such a change may be a piece seen in part; recording it would invent a wrong move or
        take back a piece that is still there.
        """
        return bool(self.doubts_holding(derived))

    def doubts_waited_on(self, derived: Derived) -> set[Cell]:
        """The camera's doubts among the rings a tap settles (the snapshot's ``holding``): none
        when the change is read clearly and held back as no play at all (the page says which)."""
        return self.doubts_holding(derived) | self.kept_doubts(derived)

    # --- output --------------------------------------------------------------------------

    def view(self, derived: Derived) -> dict:
        game = derived.game
        waited_on, changed = self.doubts_waited_on(derived), set(self.differences(derived))
        last = next((t for t in reversed(game.turns) if not t.move.passed), None)
        return {
            "cells": {self.key(c): colour for c, colour in self.laid(game).items()},
            "last": {"index": last.index, "colour": last.move.colour,
                     "cells": [self.cell_json(c) for c in self.move_cells(last.move)]} if last else None,
            "uncertain": [self.cell_json(c) for c in sorted(set(self.uncertain) | changed
                                                            | self.kept_doubts(derived))],
            # the user's corrections standing against what the camera reads (the page rings them)
            "corrected": [self.cell_json(c) for c in sorted(self.overrides)],
            # of the ``uncertain`` cells, the rings a tap settles: the cells that changed and the
            # doubted cells beside them. On a sparse board the camera doubts dozens of cells that
            # change nothing (Gemblo's reader cannot tell clear plastic from the bare board); the
            # page draws these few strongly and the rest faintly, so the player finds them.
            "holding": [self.cell_json(c) for c in sorted(changed | waited_on)],
            # of those, the camera's doubts (none: the change is held back as no play at all)
            "holding_doubts": [self.cell_json(c) for c in sorted(waited_on)],
        }

    def key(self, cell: Cell) -> str:
        """A cell as the snapshot's ``cells`` map names it."""
        return ",".join(map(str, cell))
