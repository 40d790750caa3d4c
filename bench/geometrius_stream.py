"""A seeded Geometrius game as a webcam and its players would hand it to the live referee.

The Geometrius counterpart of :mod:`bench.fuzz_stream`: the camera does not see cells but
tokens, each with its shape and its stack of chips (the adapter's reading: ``row``, ``col``,
``shape``, ``stack``, in the camera's own rows and columns, which count from the field's top
left token and so move when a push grows the field up or left), and the table taps the
cards of each placement on the page (an ``amend``), a token's top chip (a ``correct`` with
``top``) and the passes.

The true game is drawn from the rules engine: each turn is a random mix of chips (an empty
token occupied, a card covering two empty tokens, a capture, a block with two cards, the
fourth chip that blocks) and at most one push of a token from outside the field, in a random
order, kept only if the engine finds nothing wrong with it (a pass now and then, and when no
drawn turn is legal). The players lay the actions of a turn one at a time; after each the
camera may or may not see a stable board. Noise events, each on its own so a stream can be
shrunk:

- ``TopMisread``: a chip just put down read as another playing colour on top, doubted or not;
  a doubted one is tapped or read right by a later board, an undoubted one is always tapped
  while the camera still misreads it;
- ``Unsure``: a token the camera cannot make out for a board (a hand over it, glare): its
  shape read ``unknown`` and its place doubted, a few tokens round a placement at once;
- ``BlockSeenHalf``: the camera sees a block's first chip alone (the player put the two
  chips down one after the other);
- ``Restart``: the server restarts after a board.

The cards of each placement are tapped some boards after it (``late``), or only at the
end, when a player settles every card the page still asks for. Pure: nothing here touches
a session or a file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Iterable, Union

import numpy as np

from companion_app.session import parse_setup
from rules import geometrius
from rules.geometrius import Place, Push, Token

from .fuzz_stream import FRAMES, PASS_CHANCE, Restart, truncated

GAME = "geometrius"
PLAYERS = (2, 5)  # players at least and below
TURN_TRIES = 30  # random turns drawn before the colour passes
PUSH_CHANCE = 0.35  # a drawn turn pushes a token in
SEEN_CHANCE = 0.4  # a stable board between two actions of one turn
MISREAD_CHANCE, UNSURE_CHANCE, HALF_CHANCE, RESTART_CHANCE = 0.3, 0.15, 0.5, 0.06
LATE = (0, 4)  # boards before the cards of a placement are tapped, at least and below
UNTAPPED_CHANCE = 0.3  # the cards are tapped only when the game is settled at the end

Pos = tuple[int, int]
Chip = tuple[str, int, str]  # a chip read as another colour: its token, its height in the stack, the colour read


@dataclass(frozen=True)
class TopMisread:
    placement: int  # the turn (counting placements only) whose chip is misread
    token: str
    reads: str  # another playing colour
    doubted: bool
    tap_after: int | None  # boards after the first misread one before the player taps; None: never tapped
    lasts: int  # boards (from the first, or after the tap) the camera keeps misreading it


@dataclass(frozen=True)
class Unsure:
    placement: int
    frame: int  # the turn's board it spoils
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class BlockSeenHalf:
    placement: int
    token: str


Noise = Union[TopMisread, Unsure, BlockSeenHalf, Restart]


@dataclass(frozen=True)
class Plan:
    seed: int
    game: str
    setup_doc: dict
    layout: tuple[tuple[str, ...], ...]
    moves: tuple[geometrius.Move, ...]  # the true turns (declared passes too)
    frames: tuple[int, ...]  # stable boards after each placement's last action
    seen: tuple[tuple[bool, ...], ...]  # per placement, per action but the last: a stable board after it
    late: tuple[int | None, ...]  # per placement: boards before its cards are tapped; None: at the end
    offset: Pos  # the camera's row and column of the field's top left token
    noise: tuple[Noise, ...]


@dataclass(frozen=True)
class Step:
    """One thing the session is handed: ``kind`` is ``tokens`` (a stable board: ``field``
    and the places ``doubted``; not handed on, the truth the fuzz checks against: ``table``,
    the chips lying on each token by colour, and ``read_as``, those of them the camera has
    read as another colour on this board or an earlier one, by the colour read), ``top``
    (the chip on ``token`` is ``colour``'s: the page places the token), ``cards`` (the cards
    of turn ``turn`` on ``token``: the page shows the turn; ``asked``: only where the page
    still asks for them, at the end), ``pass`` or ``restart``."""

    kind: str
    field: tuple[dict, ...] = ()
    doubted: tuple[Pos, ...] = ()
    table: tuple[tuple[str, str, int], ...] = ()
    read_as: tuple[tuple[str, str, int], ...] = ()
    token: str = ""
    colour: str = ""
    turn: int = 0
    cards: tuple[str, ...] = ()


def draw(seed: int) -> Plan:
    """The plan of ``seed``: a random legal Geometrius game and the noise over it."""
    rng = np.random.default_rng(seed)
    catalogue = geometrius.load_catalogue()
    shapes = sorted(catalogue.shapes)
    colours = list(geometrius.COLOURS)
    chosen = rng.permutation(len(colours))[:int(rng.integers(*PLAYERS))]
    doc = {"players": [{"name": f"P{i + 1}", "colours": [colours[k]]} for i, k in enumerate(chosen)]}
    picked = rng.permutation(len(shapes))[:geometrius.FIELD_SIZE ** 2]
    layout = tuple(tuple(shapes[picked[r * geometrius.FIELD_SIZE + c]] for c in range(geometrius.FIELD_SIZE))
                   for r in range(geometrius.FIELD_SIZE))
    game = geometrius.Game.start(replace(parse_setup(GAME, doc), layout=layout))
    moves: list[geometrius.Move] = []
    while not game.over:
        move = _turn(rng, game)
        game = game.play(move)
        moves.append(move)
    placed = [m for m in moves if not m.passed]
    frames = tuple(int(rng.integers(*FRAMES)) for _ in placed)
    seen = tuple(tuple(bool(rng.random() < SEEN_CHANCE) for _ in m.actions[1:]) for m in placed)
    late = tuple(None if rng.random() < UNTAPPED_CHANCE else int(rng.integers(*LATE)) for _ in placed)
    offset = (int(rng.integers(-3, 4)), int(rng.integers(-3, 4)))
    playing = [colours[k] for k in chosen]
    noise: list[Noise] = []
    before = geometrius.Game.start(game.setup)
    for p, move in enumerate(placed):
        while before.colour_to_move != move.colour:  # the declared passes before it
            before = before.play(geometrius.Move(before.colour_to_move))
        after = before.play(move)
        chipped = sorted({shape for _, shapes in _placed_on(before, move) for shape in shapes})
        if chipped and rng.random() < MISREAD_CHANCE:
            token = chipped[int(rng.integers(len(chipped)))]
            others = [c for c in playing if c != move.colour]
            doubted = bool(rng.random() < 0.6)
            tap_after = int(rng.integers(0, 4)) if not doubted or rng.random() < 0.5 else None
            noise.append(TopMisread(p, token, others[int(rng.integers(len(others)))], doubted, tap_after,
                                    int(rng.integers(0, 3))))
        for f in range(frames[p]):
            if rng.random() < UNSURE_CHANCE:
                tokens = sorted(t.shape for t in after.tokens.values())
                noise.append(Unsure(p, f, tuple(sorted({tokens[int(i)] for i in rng.integers(len(tokens), size=3)}))))
            if rng.random() < RESTART_CHANCE:
                noise.append(Restart(p, f))
        for place, (shape, *_) in _placed_on(before, move):
            if place.block and rng.random() < HALF_CHANCE:
                noise.append(BlockSeenHalf(p, shape))
        before = after
    return Plan(seed, GAME, doc, layout, tuple(moves), frames, seen, late, offset, tuple(noise))


def _turn(rng: np.random.Generator, game: geometrius.Game) -> geometrius.Move:
    """A random turn of the colour to move that the rules engine finds nothing wrong with (a
    pass when none of ``TURN_TRIES`` drawn is, or now and then by choice)."""
    colour = game.colour_to_move
    if rng.random() < PASS_CHANCE:
        return geometrius.Move(colour)
    for _ in range(TURN_TRIES):
        move = geometrius.Move(colour, _actions(rng, game, colour))
        if move.actions and not game.play(move).turns[-1].violations:
            return move
    return geometrius.Move(colour)


def _actions(rng: np.random.Generator, game: geometrius.Game, colour: str) -> tuple:
    """Up to two chips (one action or two) and maybe a push, in a random order, each drawn on
    the field as the actions before it leave it."""
    catalogue = game.setup.catalogue
    plan = ["push"] if rng.random() < PUSH_CHANCE else []
    chips = int(rng.integers(0 if plan else 1, 3))
    plan += ["chip"] * chips
    order = [plan[int(i)] for i in rng.permutation(len(plan))]
    tokens = dict(game.tokens)
    actions: list = []
    left = chips
    for kind in order:
        if kind == "push":
            outside = sorted(set(catalogue.shapes) - {t.shape for t in tokens.values()})
            line = "row" if rng.random() < 0.5 else "col"
            axis = 0 if line == "row" else 1
            indices = sorted({p[axis] for p in tokens})
            end = ("left", "right") if line == "row" else ("top", "bottom")
            push = Push(outside[int(rng.integers(len(outside)))], line, indices[int(rng.integers(len(indices)))],
                        end[int(rng.integers(2))])
            actions.append(push)
            tokens = geometrius.pushed(tokens, push)[0]
            continue
        if not left:
            continue
        places = sorted(tokens)
        pos = places[int(rng.integers(len(places)))]
        empty = [p for p in places if not tokens[p].stack and p != pos]
        kinds = ["one"] + (["block"] if left == 2 else []) + (["shared"] if left == 2 and empty else [])
        how = kinds[int(rng.integers(len(kinds)))]
        if how == "one":
            place = Place((_card(rng, catalogue, tokens[pos].shape),), (pos,))
            left -= 1
        elif how == "block":
            place = Place((_card(rng, catalogue, tokens[pos].shape), _card(rng, catalogue, tokens[pos].shape)), (pos,))
            left -= 2
        else:
            other = empty[int(rng.integers(len(empty)))]
            both = [c for c in sorted(catalogue.cards)
                    if catalogue.accepts(c, tokens[pos].shape) and catalogue.accepts(c, tokens[other].shape)]
            if not both:
                continue
            place = Place((both[int(rng.integers(len(both)))],), (pos, other))
            left -= 2
        actions.append(place)
        for p in place.at:
            tokens[p] = tokens[p].with_chips(colour, place.chips // len(place.at))
    return tuple(actions)


def _card(rng: np.random.Generator, catalogue: geometrius.Catalogue, shape: str) -> str:
    fitting = [c for c in sorted(catalogue.cards) if catalogue.accepts(c, shape)]
    return fitting[int(rng.integers(len(fitting)))]


def _fields(game: geometrius.Game, move: geometrius.Move) -> list[dict[Pos, Token]]:
    """The field after each action of ``move`` on ``game``'s (tokens keep their stacks)."""
    tokens, out = dict(game.tokens), []
    for action in move.actions:
        if isinstance(action, Push):
            tokens = geometrius.pushed(tokens, action)[0]
        else:
            for p in action.at:
                tokens[p] = tokens[p].with_chips(move.colour, action.chips // len(action.at))
        out.append(dict(tokens))
    return out


def _placed_on(game: geometrius.Game, move: geometrius.Move) -> list[tuple[Place, tuple[str, ...]]]:
    """Each placement of ``move`` with the tokens it puts chips on (on the field as the
    actions before it left it)."""
    tokens, out = dict(game.tokens), []
    for action, after in zip(move.actions, _fields(game, move)):
        if isinstance(action, Place):
            out.append((action, tuple(tokens[p].shape for p in action.at)))
        tokens = after
    return out


def true_match(plan: Plan, placements: int | None = None) -> geometrius.Game:
    """The true game of ``plan`` (its first ``placements`` turns that change the field)."""
    return geometrius.play_all(replace(parse_setup(GAME, plan.setup_doc), layout=plan.layout),
                               truncated(plan.moves, placements))


def verdicts(match: geometrius.Game) -> list[tuple]:
    """The true game's turns as the page can show them (:func:`judged`), with their rule codes."""
    game, out = geometrius.Game.start(match.setup), []
    for turn in match.turns:
        out.append((_key(turn.move, _placed_on(game, turn.move)), sorted(v.code for v in turn.violations)))
        game = game.play(turn.move)
    return out


def _key(move: geometrius.Move, placed: list[tuple[Place, tuple[str, ...]]]) -> tuple:
    """A turn as (colour, pass, push, chips by token, cards by token): what the camera sees
    of it, then the cards tapped. A card covering two tokens is tapped on each."""
    push = next((f"{a.token} into {a.name} from the {a.end}" for a in move.actions if isinstance(a, Push)), None)
    chips = tuple(sorted((shape, place.chips // len(shapes)) for place, shapes in placed for shape in shapes))
    cards = tuple(sorted((shape, tuple(place.cards)) for place, shapes in placed for shape in shapes))
    return move.colour, move.passed, push, chips, cards


def judged(snapshot: dict) -> list[tuple]:
    """The session's history as :func:`_key` gives a turn (cards not tapped yet: none)."""
    out = []
    for h, turn in zip(snapshot["history"], snapshot["geometrius"]["turns"]):
        # the push wherever the turn put it among its chips (Move.describe: the actions in order)
        push = next((a for a in h["piece"].split("; ") if a.startswith(f"{turn['push']} into ")), None) \
            if turn["push"] else None
        out.append((h["colour"], h["pass"], push, tuple(sorted((s["token"], s["chips"]) for s in turn["slots"])),
                    tuple(sorted((s["token"], tuple(s["cards"])) for s in turn["slots"] if s["cards"]))))
    return out


def camera(tokens: dict[Pos, Token], offset: Pos, misread: dict[str, str] | None = None,
           unsure: Iterable[str] = (), doubted: Iterable[str] = ()) -> tuple[tuple[dict, ...], tuple[Pos, ...]]:
    """The field as the camera reports it, rows and columns counted from its top left token
    at ``offset``: tops ``misread`` (token -> colour read), ``unsure`` tokens unreadable. And
    the places it doubts: the unsure tokens' and the ``doubted`` ones'."""
    r0, c0 = min(p[0] for p in tokens), min(p[1] for p in tokens)
    misread, unsure, doubted = misread or {}, set(unsure), set(doubted)
    field, places = [], []
    for (r, c), t in sorted(tokens.items()):
        place = (r - r0 + offset[0], c - c0 + offset[1])
        stack = list(t.stack)
        if t.shape in misread and stack:
            stack[-1] = misread[t.shape]
        field.append({"row": place[0], "col": place[1], "shape": "unknown" if t.shape in unsure else t.shape,
                      "stack": stack})
        if t.shape in unsure | doubted:
            places.append(place)
    return tuple(field), tuple(places)


def board_step(tokens: dict[Pos, Token], offset: Pos, misread: dict[str, str] | None = None,
               unsure: Iterable[str] = (), doubted: Iterable[str] = (),
               read_as: Iterable[Chip] = ()) -> Step:
    """A stable board of ``tokens`` as the camera reports it (see :func:`camera`), with the
    chips lying on each token by colour and those of them ``read_as`` another colour."""
    lying = Counter((t.shape, colour) for t in tokens.values() for colour in t.stack)
    return Step("tokens", *camera(tokens, offset, misread, unsure, doubted),
                table=tuple(sorted((shape, colour, n) for (shape, colour), n in lying.items())),
                read_as=tuple(sorted((shape, colour, n) for (shape, colour), n in
                                     Counter((shape, colour) for shape, _, colour in read_as).items())))


def twice(repeated: list[tuple], shown: list[tuple], board: Step | None) -> bool:
    """Whether a move the history shows more often than the true game (``repeated``, rows as
    :func:`judged` gives them) is in it twice: a push (each token enters the field once), or
    a row whose colour the history gives more chips on one of its tokens than that colour has
    laid there so far (the last ``board``'s ``table``) and the camera has read as it
    (``read_as``), or whose tokens the history gives more chips than lie there.

    The rows alone do not tell: one colour may put one chip on one token in two turns (a
    capture back after another colour's), and a chip misread as the colour of an earlier turn
    on the same token is logged as such a turn until it is tapped; until their cards are
    tapped the two rows are alike, since a row names no height in the stack. The count is by
    colour, not by token: a chip whose board is held (a doubt elsewhere) lies on the table
    but is not logged yet, and by token it would hide a duplicate of another colour's row on
    that token for as long as the hold lasts (review of geofuzz23)."""
    logged: Counter = Counter()
    for turn in shown:
        for token, chips in turn[3]:
            logged[token, turn[0]] += chips
            logged[token] += chips
    laid: Counter = Counter()
    read_as: Counter = Counter()
    if board is not None:
        for token, colour, n in board.table:
            laid[token, colour] += n
            laid[token] += n
        read_as.update({(token, colour): n for token, colour, n in board.read_as})
    return any(turn[2] is not None or any(logged[token, turn[0]] > laid[token, turn[0]] + read_as[token, turn[0]]
                                          or logged[token] > laid[token] for token, _ in turn[3])
               for turn in repeated)


def _push_after_chips(move: geometrius.Move, k: int) -> bool:
    """Whether action ``k`` of ``move`` is a push after the turn's chips. Seen alone, such a
    push is the next colour's turn as much as this one's (the camera sees no colour on a
    push, and the next colour may well begin with one): the session logs it as the next
    colour's, and no tap moves it. The fuzz has the camera see it with the chips."""
    return isinstance(move.actions[k], Push) and any(isinstance(a, Place) for a in move.actions[:k])


def _top(tokens: dict[Pos, Token], shape: str) -> str:
    return next(t.top for t in tokens.values() if t.shape == shape)


def render(plan: Plan, keep: Iterable[int] | None = None, placements: int | None = None) -> list[Step]:
    """The stream of ``plan`` with the noise events numbered in ``keep`` (all by default), its
    true game cut after ``placements``. Each turn's actions are laid one at a time, a board
    seen between them where ``plan.seen`` says, then the turn's stable boards. Before each
    next turn, a declared pass and at the end, a misread still standing is tapped (when it
    must be) and a clear board sent: the page's marks settled before play goes on. At the
    end every card the page still asks for is tapped."""
    kept = None if keep is None else set(keep)
    noise = [n for i, n in enumerate(plan.noise) if kept is None or i in kept]
    moves = truncated(plan.moves, placements)
    game = geometrius.Game.start(replace(parse_setup(GAME, plan.setup_doc), layout=plan.layout))
    steps = [board_step(game.tokens, plan.offset)]
    live: list[tuple[TopMisread, int]] = []  # misreads under way, with the board they started on
    cards: list[tuple[int, int | None, list[Step]]] = []  # card taps: first board of the turn, boards late, taps
    read_as: set[Chip] = set()  # every chip the camera has misread so far, with the colour read

    def board(tokens: dict[Pos, Token], unsure: Iterable[str] = ()) -> None:
        read_as.update((t.shape, len(t.stack) - 1, m.reads) for m, _ in live for t in tokens.values()
                       if t.shape == m.token and t.stack)
        steps.append(board_step(tokens, plan.offset, {m.token: m.reads for m, _ in live}, unsure,
                                [m.token for m, _ in live if m.doubted], read_as))

    def settle(tokens: dict[Pos, Token], frame: int) -> None:
        nonlocal live
        steps.extend(Step("top", token=m.token, colour=_top(tokens, m.token)) for m, start in live
                     if m.tap_after is not None and frame - start <= m.tap_after)
        live = []
        board(tokens)

    frame = p = 0
    for index, move in enumerate(moves):
        if move.passed:
            settle(dict(game.tokens), frame)
            steps.append(Step("pass", colour=move.colour))
            game = game.play(move)
            continue
        if p:
            settle(dict(game.tokens), frame)
        fields = _fields(game, move)
        halves = {n.token for n in noise if isinstance(n, BlockSeenHalf) and n.placement == p}
        before = dict(game.tokens)
        for k, (action, after) in enumerate(zip(move.actions, fields)):
            if isinstance(action, Place) and action.block and before[action.at[0]].shape in halves:
                board({**before, action.at[0]: before[action.at[0]].with_chips(move.colour, 1)})
            if k < len(move.actions) - 1 and plan.seen[p][k] and not _push_after_chips(move, k + 1):
                board(after)
            before = after
        taps = [Step("cards", token=shape, colour=move.colour, turn=index, cards=tuple(place.cards))
                for place, shapes in _placed_on(game, move) for shape in shapes]
        cards.append((frame, plan.late[p], taps))
        live += [(m, frame) for m in noise if isinstance(m, TopMisread) and m.placement == p]
        tokens = fields[-1]
        for f in range(plan.frames[p]):
            unsure = [t for u in noise if isinstance(u, Unsure) and (u.placement, u.frame) == (p, f) for t in u.tokens]
            board(tokens, unsure)
            still = []
            for m, start in live:
                done = frame - start  # boards seen since the misread began, less one
                if m.tap_after is not None and done == m.tap_after:
                    steps.append(Step("top", token=m.token, colour=_top(tokens, m.token)))
                over = (done >= m.tap_after + m.lasts) if m.tap_after is not None else done >= m.lasts
                if not over:
                    still.append((m, start))
            live = still
            steps += [tap for first, late, taps in cards if late == frame - first for tap in taps]
            steps += [Step("restart") for r in noise if isinstance(r, Restart) and (r.placement, r.frame) == (p, f)]
            frame += 1
        game = game.play(move)
        p += 1
    settle(dict(game.tokens), frame)
    steps += [replace(tap, kind="asked") for _, _, taps in cards for tap in taps]
    steps += [board_step(game.tokens, plan.offset, read_as=read_as)] * 2
    return steps
