"""The rules as a prior over a Gemblo reading: what the pieces, one of each per colour, and their
chains across bridges say of the cells the photo leaves in doubt.

Rules prior: one colour's edge-connected region is one piece (M4), and each colour has one
of each piece, so a region that is not one of the 18 shapes, or repeats a piece, is
re-examined at its least confident cells (their second-best labels; not the cells whose only
doubt is clear or empty, which the clear pieces weigh below); what cannot be
explained is flagged and its weakest cells (all of a region larger than any piece) reported
uncertain. An empty-looking cell that would complete a clear region into a piece needs
plainer evidence to be called empty. Then the doubts between clear and empty are weighed
against the rules: clear's pieces join across bridges (M5), so a doubt no chain of clear or
doubtful cells links to the surely clear ones is empty; and the clear cells of a group must
split into distinct pieces of the set, so a cell that only one labelling explains is decided
(a group with too many doubts to weigh every labelling only takes the likeliest that makes
pieces as its best guess). A doubtful cell's best guess also weighs how likely the pieces a
labelling makes are (clear lays whole pieces, not independent cells; a piece bridged to clear
lies at one of the few places the rules leave its next piece, not at any of 463: a doubt bridged
to clear and beside none is the monohex at one of a score of cells), and the groups' guesses
together take no piece twice. In a six-colour game
the corner the five other colours do not hold is clear's start, which its first piece covers (M3);
the photo does not say the variant, so this holds only where each colour's cells can be one group
from its corner (M5), as no five-player game's obstacle colour is, and clear is then only that
corner's best guess, in doubt.

Kept apart from the evidence (:mod:`vision.gemblo_clear`): it looks at no pixel, only at the
labels, the odds and the confidences the reading gives it.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from rules.gemblo import CORNERS, pieces

from .completion import Trials
from .gemblo_cells import CLEAR_SURE, EMPTY, LABELS, clear_odds
from .gemblo_complete import hex_ground
from .hexgrid import cells, key
from .reading import UNCERTAIN_BELOW

CLEAR_SURE_BESIDE = 14.0  # CLEAR_SURE for an empty-looking cell that would complete a clear piece
RULES_TRIALS = 300  # labellings the rules prior may check against the set (some 0.12 s; 9 of the bench's seed-2
# photos ask more, up to 763): a count, not a clock, so a photo reads the same however busy the machine
CHANGED_CONF = 0.45  # a cell the rules relabelled stays uncertain: the photo did not show it
PLAINLY_READ = 0.9  # a cell read this surely is not the rules' greedy fix's to relabel (apply_rules): those it
# relabelled at 0.98 or more were all right before; below, a hand's tint read at 0.63 is still the fix's to empty
PIECES_MAX_DOUBT = 10  # doubtful cells of one clear group whose labellings are all weighed (2**n)
# The clear score's odds hold a flat prior: of all empty-or-clear cells, CLEAR_BASE are clear, each
# alike (11.0 % over 300 random legal 6-colour games of 10-90 moves). But clear cells come as
# pieces, each of 18 shapes laid once: a labelling of a clear group is likelier the likelier the
# pieces it makes, whatever their size. A piece of clear lies on the board with odds PIECE_DOWN
# (about half a colour's pieces are down in a game of 10-90 moves, six colours) at any one of
# its placements (463 cells times its orientations), alike. So when labellings are weighed for a
# best guess, the flat prior of their doubtful cells gives way to that of their pieces (a lone
# cell far from clear is far likelier a stray reading than the monohex; four weak cells making a
# tetrahex are not four unrelated 11 % chances). A piece bridged to clear's other cells (M5) and
# beside none (M4) lies where the rules leave clear's next piece: at one of the cells bridged to
# clear and beside none (_monohex_places, typically 12-25) for each of its own cells, not at any
# of 463 (on seeds 2 and 5, of the lone doubts reading clear at log-odds 2-4.7, 3 were clear, 2
# empty, where 463 places made each a 1-in-5 chance).
CLEAR_BASE = 0.11
PIECE_DOWN = 0.5
# Labellings of a group, and steps, weighed for one of each piece (_one_of_each): seed 2 `blur` #5, the bench's
# largest contest (four groups), takes 738 steps; the steps bound a photo's worst case at a few milliseconds.
OPTIONS_MAX, SEARCH_NODES = 64, 5000
TREE_CONF = 0.55  # an empty-or-clear cell the clear colour's bridge tree cannot reach: empty, as read


def _regions(labels: list[str]) -> list[list[int]]:
    """Edge-connected one-colour regions (cell indices, in index order), in the index order
    of their first cell."""
    ground = hex_ground()
    seen, out = set(), []
    for i, lab in enumerate(labels):
        if lab == EMPTY or i in seen:
            continue
        region = ground.flood(labels, i, ground.edges)
        seen |= region
        out.append(sorted(region))
    return out


def _bad(labels: list[str]) -> list[list[int]]:
    """Regions that are no piece of the set, or a piece its colour already shows elsewhere
    (each colour has one of each: a repeat means one of them is another colour misread)."""
    ground = hex_ground()
    named = [(reg, ground.piece(reg)) for reg in _regions(labels)]
    seen: dict[tuple[str, str], int] = {}
    for reg, piece in named:
        if piece is not None:
            seen[labels[reg[0]], piece] = seen.get((labels[reg[0]], piece), 0) + 1
    return [reg for reg, piece in named if piece is None or seen[labels[reg[0]], piece] > 1]


def in_pieces(clear: np.ndarray) -> float:
    """The share of these ``clear`` cells that lie in distinct pieces of the set (edge-joined
    regions, each a piece, none repeated: 0 for none): clear's cells lie in its pieces, one of
    each (M4); a shade's or a tail's do not, nor do stray cells (each the monohex: one may be
    clear's, not a dozen)."""
    if not clear.any():
        return 0.0
    return 1 - sum(map(len, _bad([("C" if c else EMPTY) for c in clear]))) / int(clear.sum())


def apply_rules(labels: list[str], post: np.ndarray, conf: np.ndarray,
                 clear_only: np.ndarray, hidden: np.ndarray) -> tuple[list[str], list[int], list[str]]:
    """Fix regions that are not pieces by relabelling their least confident cells.

    The fix is greedy: near one region at a time, the cheapest one or two relabellings that
    leave fewer regions no piece. No region is fixed by relabelling the ``clear_only`` cells
    (those whose only doubt is clear or empty) near it: that doubt is the clear pieces'
    (:func:`clear_pieces` weighs every labelling of a group against the set), and the greedy fix
    knows only the one region. For two copies of a clear piece (one of each, M4) it joined them
    into one larger non-piece (one bad region instead of two) or emptied the photo's plainest
    clear cell, where the right fix lay beside the other copy. Fixing another colour's region it
    did the same: for a blue monohex read weakly under a glare (blue shows its monohex
    elsewhere), it called the empty cell beside it clear, joining two clear regions into one
    non-piece (the bench's seed 2 `blur` #0), or coloured a cell the colour classifier read as
    no colour (seed 37 `hard` #0: a clear cell read red; round gemglare21 in bench/ROUNDS.md).
    Such a region is put in doubt as any other (the flags below), its labels left as read; a
    ``clear_only`` cell that would make a coloured one a piece is put in doubt by the reader
    (:func:`bare_beside_bad`). The regions share RULES_TRIALS labellings checked against the
    set; once they are spent, the regions left keep their reading.

    Nor does the fix relabel a cell the photo read plainly (PLAINLY_READ) or one it could not
    show (``hidden``: walls unseen, or out of the photo). An occluder cuts the pieces at its
    edge, so their regions in sight are no pieces; the fix "mended" them by recolouring the
    plainest cells beside them (on the bench's seed 2, 19 cells read at 0.98 or more, every one
    right before and wrong after: a mug's blue pieces read purple, a glare's green read yellow).
    What the occluder hides is the completion's to label (:func:`vision.gemblo_complete.complete_hidden` weighs each
    hidden patch whole, against the rules); a hidden cell the fix relabelled first only moved
    the doubts round it (a clear cell emptied, so the one beside it lost its doubt)."""
    budget = Trials(RULES_TRIALS)
    changed: list[int] = []
    bad = _bad(labels)
    edges = hex_ground().edges
    for region in bad:
        if budget.left <= 0:
            break
        near = {i for i in set(region).union(*(edges[i] for i in region))
                if conf[i] < PLAINLY_READ and not hidden[i]}
        near -= set(np.flatnonzero(clear_only))
        options = []
        for i in near:
            for j in np.argsort(-post[i])[1:3]:
                cost = float(np.log(post[i].max() + 1e-9) - np.log(post[i, j] + 1e-9))
                options.append((cost + 2 * conf[i], i, LABELS[j]))
        options = sorted(options)[:8]
        before = len(_bad(labels))
        best = None
        for size in (1, 2):
            for combo in combinations(options, size):
                if len({i for _, i, _ in combo}) < size:
                    continue
                if not budget.take():
                    break
                trial = list(labels)
                for _, i, lab in combo:
                    trial[i] = lab
                if len(_bad(trial)) < before:
                    best = combo
                    break
            if best:
                break
        if best:
            for _, i, lab in best:
                labels[i] = lab
                conf[i] = min(conf[i], CHANGED_CONF)
                changed.append(i)
    flags = []
    largest = hex_ground().largest
    for region in _bad(labels):
        # Larger than any piece, it is no piece at all (a hand, a cup, a shadow read as a
        # colour): none of it was read. Otherwise its least confident half is in doubt.
        doubt = len(region) if len(region) > largest else max(1, len(region) // 2)
        weakest = sorted(region, key=lambda i: conf[i])[:doubt]
        for i in weakest:
            conf[i] = min(conf[i], UNCERTAIN_BELOW - 0.01)
        flags.append(f"not_a_piece: {' '.join(key(cells()[i]) for i in sorted(region))}")
    _doubt_beside_clear(labels, post, conf)
    return labels, changed, flags


def bare_beside_bad(labels: list[str], conf: np.ndarray, clear_only: np.ndarray) -> np.ndarray:
    """(463,) the ``clear_only`` cells, read short of PLAINLY_READ, beside a coloured region that
    is no piece which they would make a piece: the piece's own cell read bare, maybe. The greedy
    fix may not colour them (:func:`apply_rules`), and the clear pieces only weigh them as clear
    or empty, so the reader keeps them in doubt whatever those decide."""
    edges, ground = hex_ground().edges, hex_ground()
    out = np.zeros(len(labels), bool)
    for region in _bad(labels):
        if labels[region[0]] == "C":
            continue
        for i in {n for j in region for n in edges[j]}:
            if clear_only[i] and conf[i] < PLAINLY_READ and ground.piece(region + [i]) is not None:
                out[i] = True
    return out


def _doubt_beside_clear(labels: list[str], post: np.ndarray, conf: np.ndarray) -> None:
    """A cell read as empty beside a clear region, where that region plus the cell would still
    be a piece, may be the piece's cell the photo hardly shows: there the clear evidence must
    say 'empty' more plainly (CLEAR_SURE_BESIDE) to be trusted."""
    edges = hex_ground().edges
    score = clear_odds(post)
    ground = hex_ground()
    for region in _regions(labels):
        if labels[region[0]] != "C":
            continue
        beside = {n for i in region for n in edges[i] if labels[n] == EMPTY}
        for i in beside:
            if ground.piece(region + [i]) is not None:
                conf[i] = min(conf[i], float(np.clip(-score[i] / CLEAR_SURE_BESIDE, 0, 1)))


def clear_start(labels: list[str], conf: np.ndarray, seen: np.ndarray, readable: np.ndarray) -> int | None:
    """Clear's start corner, if the rules say clear covers it (M3), else None.

    In a six-colour game the six corner cells are the starts, one a colour, and each colour's
    first piece covers its own. So when five corners surely show five different colours and
    clear has had its first turn (:func:`_clear_started`), the sixth corner is covered by clear,
    whatever the photo makes of it. That cell lies at the board's rim and on an embossed double
    hexagon, where the clear evidence reads least well. Nothing is said when the corners do not
    show the five other colours, or the sixth is surely read a colour or clear already, or is
    not ``seen`` (outside the photo, hidden), or the photo does not show a six-colour game's
    groups (:func:`_six_colour_groups`: a five-player game's corners may hold five colours and
    the sixth be bare). ``readable``: the cells whose only doubt is clear or empty."""
    index = hex_ground().index
    corners = [index[c] for c in CORNERS]
    sure = conf >= UNCERTAIN_BELOW
    held = [i for i in corners if sure[i] and labels[i] not in (EMPTY, "C")]
    if len(held) != len(corners) - 1 or len({labels[i] for i in held}) != len(held):
        return None
    start = next(i for i in corners if i not in held)
    if not seen[start] or (sure[start] and labels[start] != EMPTY) or not _clear_started(labels, sure, start) \
            or not _six_colour_groups(labels, sure, readable, held, start):
        return None
    return start


def _six_colour_groups(labels: list[str], sure: np.ndarray, readable: np.ndarray, held: list[int],
                       start: int) -> bool:
    """Whether each colour's cells can be one group from its own corner, as in a six-colour
    game: every piece joins an earlier one of its colour at an edge or across a bridge (M5), back
    to the first, which covers the colour's corner (M3). The five ``held`` corners' colours: their
    surely read cells, joined through cells in doubt of a colour. Clear: its surely clear cells,
    joined through any doubtful cell, to its ``start``. A five-player game fails this: its unused
    colour lies round the rim in 15 separate obstacle pieces (clear's, or one of the five held
    corners' colours), placed by the table, not joined by the rules."""
    lab = np.array(labels)
    for i in held:
        own = sure & (lab == labels[i])
        if not _reach(i, own | (~sure & ~readable))[own].all():
            return False
    clear = sure & (lab == "C")
    return bool(_reach(start, clear | ~sure)[clear].all())


def _reach(source: int, open_: np.ndarray) -> np.ndarray:
    """(463,) the cells reached from ``source`` over edges and bridges (M5) through ``open_`` cells."""
    graph = hex_ground().touch
    reach = np.zeros(len(open_), bool)
    reach[source] = True
    stack = [source]
    while stack:
        for n in graph[stack.pop()]:
            if open_[n] and not reach[n]:
                reach[n] = True
                stack.append(n)
    return reach


def _clear_started(labels: list[str], sure: np.ndarray, start: int) -> bool:
    """Whether clear has had its first turn: it surely shows a cell beyond its start, or some
    colour surely shows a second piece (two regions: M4). Turns go round, so after any colour's
    second piece every colour has had one, and a first turn is never passed: nothing but
    clear's own piece can cover clear's start corner by then."""
    if _clear_shown(labels, sure, start):
        return True
    shown = [labels[reg[0]] for reg in _regions(labels)
             if labels[reg[0]] != "C" and all(sure[i] for i in reg)]
    return len(shown) > len(set(shown))


def _clear_shown(labels: list[str], sure: np.ndarray, start: int) -> bool:
    """Whether the photo surely shows a clear cell other than clear's start."""
    return any(lab == "C" and sure[i] for i, lab in enumerate(labels) if i != start)


def clear_tree(labels: list[str], conf: np.ndarray, clear_only: np.ndarray,
                settle: np.ndarray | None = None) -> list[int]:
    """Decide empty-or-clear doubts the clear colour's pieces cannot reach.

    Every piece of a colour joins its earlier pieces across a bridge (M5), so all clear cells
    form one tree over edges and bridges. The cells that may be clear are the surely clear ones
    and every uncertain cell; when the surely clear cells lie in one part of that graph, an
    uncertain empty-or-clear cell outside it cannot be clear: it is empty. When they do not
    (obstacle pieces of a 5-player game, a misread), nothing is decided. ``clear_only``: the
    cells whose doubt is only clear or empty; ``settle`` (default: all): those of them that
    may leave doubt (a clear cell the photo read surely empty would cut the tree, so only cells
    that already look empty are trusted to it; the others only take 'empty' as best guess).
    Returns the cells relabelled from clear to empty."""
    doubt = conf < UNCERTAIN_BELOW
    sure = [i for i, lab in enumerate(labels) if lab == "C" and not doubt[i]]
    if not sure:
        return []
    open_ = doubt.copy()
    open_[sure] = True
    reach = _reach(sure[0], open_)
    if not reach[sure].all():
        return []
    changed = []
    for i in np.flatnonzero(doubt & clear_only & ~reach):
        if labels[i] == "C":
            changed.append(int(i))
        labels[i] = EMPTY
        if settle is None or settle[i]:
            conf[i] = TREE_CONF
    return changed


def clear_pieces(labels: list[str], conf: np.ndarray, post: np.ndarray, clear_only: np.ndarray,
                  lean: np.ndarray | None = None, faded: np.ndarray | None = None,
                  unseen: np.ndarray | None = None) -> list[int]:
    """Decide empty-or-clear doubts by the pieces the clear cells must form.

    The clear cells of an edge-connected group (surely clear ones and doubtful ones) must split
    into pieces of the set that clear shows nowhere else (M4: one region, one piece; one of
    each). Every labelling of the group's doubtful cells is weighed by the photo's odds
    (clear-or-empty probabilities) and kept only if it makes such pieces; a cell whose share
    of the weight leaves no doubt is decided. A cell left in doubt takes as best guess its
    share of the weight once the labellings are also weighed by the pieces they make
    (:func:`_pieces_prior`): a tetrahex two of whose cells the photo hardly shows is likelier
    than a dihex and two stray readings; a cell that would be a piece of its own (the monohex
    across an empty cell from a clear piece, a trihex beside a doubtful gap), than a stray
    reading where the rules leave that piece few places (:func:`_monohex_places`), whether it is
    alone or one of a group's labellings. A group touching a cell in other doubt
    (a colour unsure) is left alone, that cell could be clear too, but for one of each piece
    (below); one beside a cell the photo could not show (``unseen``: walls hidden, or out of the
    photo; default none) is left wholly alone: its piece may run on under the hand. A group with no surely clear
    cell decides only what the rules leave one label for. A group of more than
    PIECES_MAX_DOUBT doubtful cells is weighed over its likeliest labellings only
    (:func:`_likeliest`): the likeliest that makes pieces gives its cells' best guesses, and
    decides none. ``lean``: log-odds of clear the best guesses weigh beyond the photo's odds
    (:func:`vision.gemblo_clear.clear_likeness`; default none). ``faded``: cells in colour doubt weighed as clear or
    empty (see :func:`vision.gemblo_clear._clear`), odd ones whose score's 'empty' was dropped
    (:func:`vision.gemblo_clear.beyond_the_score`), and those whose odds are the clear cluster found where the photo
    puts it (:func:`vision.gemblo_clear._clear`; default none); a group holding one only takes best guesses and
    decides none (weighed with them, a group the photo misreads elsewhere may leave a cell one
    label: seed 43 `stray_pieces` #1 read a clear cell surely empty so). Last, the groups' best
    guesses are taken together, so that no two make the same piece (:func:`_one_of_each`). Returns
    the cells whose label changed (once each; not those the last step set back)."""
    before = list(labels)
    doubt = conf < UNCERTAIN_BELOW
    cand = doubt & clear_only
    lean = np.zeros(len(labels)) if lean is None else lean
    unseen = np.zeros(len(labels), bool) if unseen is None else unseen
    sure = np.array([lab == "C" for lab in labels]) & ~doubt
    member = cand | sure
    edges = hex_ground().edges
    with np.errstate(divide="ignore"):
        p = post[:, -1] / np.maximum(post[:, -1] + post[:, 0], 1e-12)
    log_c, log_e = np.log(np.clip(p, 1e-9, 1)), np.log(np.clip(1 - p, 1e-9, 1))
    ground = hex_ground()
    # Where clear's next piece may lie: the cells bridged to the cells called clear and beside
    # none, a lone doubt's guess left out (its own guess must not widen the places it is
    # weighed against; a group's guesses stay: with no surely clear cell they are all the photo
    # says of clear's pieces); none: anywhere on the board.
    lone = cand & np.array([not any(member[n] for n in nbrs) for nbrs in edges])
    places = int(_monohex_places(labels, lone).sum()) or None
    # The cells called clear beyond the doubts weighed here: a piece bridged to one is clear's next.
    outside = (np.array(labels) == "C") & ~cand
    # The pieces clear surely shows elsewhere: regions of surely clear cells with no doubtful
    # cell beside them (a doubtful neighbour could still make the region another piece).
    settled = [(reg, ground.piece(reg)) for reg in _regions(labels)
               if labels[reg[0]] == "C" and not any(doubt[j] for i in reg for j in (i, *edges[i]))]
    changed: list[int] = []
    weighed: list[_Group] = []
    seen = np.zeros(len(labels), bool)
    for start in np.flatnonzero(cand):
        if seen[start]:
            continue
        group, stack = [int(start)], [int(start)]
        seen[start] = True
        while stack:
            for n in edges[stack.pop()]:
                if member[n] and not seen[n]:
                    seen[n] = True
                    group.append(n)
                    stack.append(n)
        doubtful = [i for i in group if cand[i]]
        # a group touching a cell in other doubt is only weighed for one of each piece (_one_of_each);
        # one touching a cell the photo could not show, not at all (its pieces may run on unseen)
        blocked = any(doubt[n] and not cand[n] for i in group for n in edges[i])
        if any(unseen[n] for i in group for n in edges[i]):
            continue
        in_group = set(group)
        elsewhere = {piece for reg, piece in settled if not in_group & set(reg)}
        fixed = [i for i in group if sure[i]]
        weights, shares, priors, made_pieces = [], [], [], []
        for on in _likeliest(log_c[doubtful], log_e[doubtful]):
            made = _distinct_pieces(fixed + [i for k, i in enumerate(doubtful) if on[k]], elsewhere, edges)
            if made is not None:
                weights.append(float(log_c[doubtful][on].sum() + log_e[doubtful][~on].sum()))
                shares.append(on)
                made_pieces.append(frozenset(made))
                flat = on.sum() * np.log(CLEAR_BASE) + (~on).sum() * np.log1p(-CLEAR_BASE)
                priors.append(_pieces_prior(made, outside, places) - flat + float(lean[doubtful][on].sum()))
        if not weights:
            continue
        shares = np.array(shares)
        # The best guess also weighs which pieces a labelling makes (_pieces_prior) and how
        # its cells look beside the photo's own (lean); the photo's odds alone decide how sure
        # a cell is.
        guess_weights = np.array(weights) + np.array(priors)
        weighed.append(_Group(doubtful, shares, guess_weights, made_pieces))
        if blocked:
            continue
        if len(doubtful) > PIECES_MAX_DOUBT:  # not every labelling weighed: a best guess, nothing decided
            for i, on in zip(doubtful, shares[int(np.argmax(guess_weights))]):
                lab = "C" if on else EMPTY
                if lab != labels[i]:
                    changed.append(i)
                labels[i] = lab
            continue
        marginal = _marginals(np.array(weights), shares)
        guess = _marginals(guess_weights, shares)
        decide = faded is None or not faded[group].any()
        for k, i in enumerate(doubtful):
            if decide and (shares[:, k].all() or not shares[:, k].any()):  # the rules leave one label
                conf[i] = TREE_CONF
            elif decide and fixed and not any(sure[n] for n in edges[i]):  # beside a clear piece: _doubt_beside_clear
                # As sure as the pieces make it beyond the cell's own odds: those alone were left
                # in doubt (the photo's two views disagreeing), and still are. Only in a group
                # the photo surely shows clear in: a group of doubts alone is most often a piece
                # whose every cell the photo reads weakly alike (blur, a dim corner), and its
                # cells' odds err together, so the labellings they allow add nothing sure.
                odds = np.log(max(marginal[k], 1e-12)) - np.log(max(1 - marginal[k], 1e-12))
                own = log_c[i] - log_e[i]
                gain = abs(odds) - abs(own) if odds * own > 0 else abs(odds)
                start = conf[i] if odds * own > 0 else 0.0
                conf[i] = max(conf[i], float(np.clip(start + gain / CLEAR_SURE, 0, 1)))
            # a cell left in doubt takes the game's best guess; a decided one, the photo's
            lab = "C" if (guess[k] if conf[i] < UNCERTAIN_BELOW else marginal[k]) > 0.5 else EMPTY
            if lab != labels[i]:
                changed.append(i)
            labels[i] = lab
    return [i for i in dict.fromkeys(changed + _one_of_each(weighed, labels, conf)) if labels[i] != before[i]]


@dataclass(frozen=True, eq=False)
class _Group:
    """One group of clear and doubtful cells :func:`clear_pieces` weighed: its ``doubtful`` cells,
    the labellings of them that make distinct pieces (rows of ``shares``), each labelling's
    log-weight for a best guess, and the pieces (ids) it makes."""

    doubtful: list[int]
    shares: np.ndarray
    weights: np.ndarray
    pieces: list[frozenset[str]]


def _one_of_each(groups: list[_Group], labels: list[str], conf: np.ndarray) -> list[int]:
    """Best guesses of the ``groups``' doubtful cells such that no two groups make the same piece.

    Each group is weighed alone (:func:`clear_pieces`), against the pieces clear surely shows
    elsewhere; but where the photo is sure of few clear cells, two groups of best guesses may each
    take the same piece (a blurred photo's shade read as clear's dihex three times over), and clear
    has one of each (M4). Where they do, the groups taking a piece twice, and those holding a piece
    one of their labellings would take instead, are labelled together: the likeliest labellings
    (each group's weight for a best guess summed) that take no piece twice, searched best first
    over each group's OPTIONS_MAX likeliest labellings within SEARCH_NODES steps, the groups whose
    best labelling leads its next by most first (a search cut short stops at the surest groups'
    choices, not at the board's first rows; cut short, nothing moves: the guesses stay). A group
    whose own guesses clash with no piece the others end up taking keeps them, as do groups taking
    no piece twice, and those whose guesses make no pieces (what they take is not known). Only best guesses move: a cell
    ``conf`` already calls sure keeps its label, and no confidence changes. On the bench's seed 2
    (`blur` #5: 11 cells wrong -> 0) and held-out seeds 37 and 43 it made 8 boards exact and lost
    none, no cell silently wrong (one photo gained a wrong guess: a piece running on through a cell
    read otherwise). Returns the cells whose label changed."""
    sure = conf >= UNCERTAIN_BELOW
    options, chosen = [], []
    for g in groups:
        idx = np.array(g.doubtful)
        now = np.array([labels[i] == "C" for i in g.doubtful])
        keep = np.flatnonzero((g.shares[:, sure[idx]] == now[sure[idx]]).all(axis=1))
        keep = keep[np.argsort(-g.weights[keep], kind="stable")]
        options.append([int(r) for r in keep[:OPTIONS_MAX]])
        # the cells' guesses; where those make no pieces (each cell's own share of the weight can
        # disagree with every labelling that does, or the piece runs on under a cell read otherwise)
        # the group takes no piece and is left as guessed
        chosen.append(next((int(r) for r in keep if (g.shares[r] == now).all()), None))
    held: dict[str, list[int]] = {}
    for k, r in enumerate(chosen):
        for piece in groups[k].pieces[r] if r is not None else ():
            held.setdefault(piece, []).append(k)
    play = {k for ks in held.values() if len(ks) > 1 for k in ks}
    if not play:
        return []
    grown = True
    while grown:  # and the groups holding a piece a group in play could take instead
        wanted = {p for k in play for r in options[k] for p in groups[k].pieces[r]}
        more = {k for p in wanted for k in held.get(p, ())} - play
        play |= more
        grown = bool(more)
    def lead(k: int) -> float:  # how far a group's likeliest labelling leads its next
        w = groups[k].weights[options[k][:2]]
        return float(w[0] - w[1]) if len(w) > 1 else np.inf

    order = sorted(play, key=lambda k: (-lead(k), k))
    taken = {p for k, r in enumerate(chosen) if k not in play and r is not None for p in groups[k].pieces[r]}
    best: tuple[float, list[int] | None] = (-np.inf, None)
    bound = np.cumsum([groups[k].weights[options[k][0]] if options[k] else 0.0 for k in order][::-1])[::-1]
    budget = Trials(SEARCH_NODES)

    def search(depth: int, total: float, used: set[str], picks: list[int]) -> None:
        nonlocal best
        if depth == len(order):
            if total > best[0]:
                best = (total, list(picks))
            return
        g = groups[order[depth]]
        rest = bound[depth + 1] if depth + 1 < len(order) else 0.0
        for r in options[order[depth]]:
            if total + g.weights[r] + rest <= best[0] or not budget.take():
                return  # options come best first: none after this one does better
            if not g.pieces[r] & used:
                search(depth + 1, total + float(g.weights[r]), used | g.pieces[r], picks + [r])

    search(0, 0.0, taken, [])
    if best[1] is None or budget.left <= 0:
        return []
    picks = dict(zip(order, best[1]))
    for k in order:  # a group whose own guesses clash with nothing the others take keeps them
        others = taken.union(*(groups[j].pieces[r] for j, r in picks.items() if j != k))
        if chosen[k] is not None and not groups[k].pieces[chosen[k]] & others:
            picks[k] = chosen[k]
    changed = []
    for k, r in picks.items():
        for i, on in zip(groups[k].doubtful, groups[k].shares[r]):
            lab = "C" if on else EMPTY
            if lab != labels[i] and not sure[i]:
                labels[i] = lab
                changed.append(i)
    return changed


def _marginals(weights: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Each cell's share of clear over labellings (rows of ``shares``) of these log-weights."""
    w = np.exp(weights - weights.max())
    return (w[:, None] * shares).sum(0) / w.sum()


def _pieces_prior(made: dict[str, list[int]], outside: np.ndarray, places: int | None) -> float:
    """Log-prior of clear showing these pieces (each with its cells) where they lie (PIECE_DOWN,
    and one of each piece's placements alike). Clear lays one piece after another, each but its
    first bridged (M5) to one laid before: a piece bridged to a cell called clear ``outside``
    them, or to another of them laid first, lies where the rules leave clear's next piece, one
    of its cells at one of ``places`` cells (:func:`_monohex_places`), so at about ``places``
    times its size spots, not at any of 463 (with no ``places``: every piece at any). Of pieces
    bridged only to each other, one was laid first, anywhere on the board: the largest (the
    likeliest order; the prior of a sure piece must not rise because a doubtful one beside it
    is weighed). Only the ratio between labellings counts: one that splits a group into more
    pieces, each where the rules leave one, is not charged a whole board's placements for each."""
    ps = pieces()
    spots = {pid: len(cells()) for pid in made}
    if places is not None:
        for cluster, anchored in _bridged_clusters(made, outside):
            # sorted: of equal-sized pieces, the one laid first must not hang on the hash seed
            first = None if anchored else max(sorted(cluster), key=lambda pid: len(made[pid]))
            for pid in cluster:
                if pid != first:
                    spots[pid] = min(spots[pid], places * len(made[pid]))
    return sum(float(np.log(PIECE_DOWN / (spots[pid] * len(ps[pid].orientations)))) for pid in made)


def _bridged_clusters(made: dict[str, list[int]], outside: np.ndarray) -> list[tuple[list[str], bool]]:
    """The pieces ``made`` (each with its cells) in clusters linked by bridges (M5), each with
    whether one of its pieces is bridged to a cell called clear ``outside`` them."""
    edges, graph = hex_ground().edges, hex_ground().touch
    mine = {i for own in made.values() for i in own}
    reach = {pid: {n for i in own for n in graph[i] if n not in edges[i]} - set(own)
             for pid, own in made.items()}
    left, clusters = set(made), []
    while left:
        cluster, stack = [], [left.pop()]
        while stack:
            pid = stack.pop()
            cluster.append(pid)
            near = {q for q in left if reach[pid] & set(made[q])}
            left -= near
            stack += near
        clusters.append((cluster, any(outside[n] and n not in mine for pid in cluster for n in reach[pid])))
    return clusters


def _monohex_places(labels: list[str], lone: np.ndarray) -> np.ndarray:
    """(463,) the empty-or-clear cells where clear's monohex may lie beside the cells the
    reading calls clear (surely or as best guess), the ``lone`` doubtful ones left out: bridged
    to one (M5) and sharing no edge with any (M4). The monohex lies at one of these, not at any
    of the board's 463 cells: a lone cell there is weighed against a dozen or two places, not
    against the whole board. A larger piece has one of its cells at one of them
    (:func:`_pieces_prior`)."""
    clear = (np.array(labels) == "C") & ~lone
    edges, graph = hex_ground().edges, hex_ground().touch
    bridged = np.array([any(clear[n] for n in graph[i] if n not in edges[i]) for i in range(len(clear))])
    beside = np.array([any(clear[n] for n in edges[i]) for i in range(len(clear))])
    return bridged & ~beside & ~clear & np.isin(labels, (EMPTY, "C"))


def _likeliest(log_c: np.ndarray, log_e: np.ndarray) -> list[np.ndarray]:
    """Labellings (clear or not, per cell) of doubtful cells with these log-probabilities of
    clear and of empty: all of them for up to PIECES_MAX_DOUBT cells, else the 2**PIECES_MAX_DOUBT
    likeliest, likeliest first (each cell's likelier label, then flips in order of what they
    cost: a clear piece under a warm lamp or in a dim photo may leave a group of 20 cells in
    doubt, but few of its labellings are both likely and pieces)."""
    n = len(log_c)
    if n <= PIECES_MAX_DOUBT:
        return [np.array([mask >> k & 1 for k in range(n)], bool) for mask in range(1 << n)]
    best = log_c > log_e
    cost = np.abs(log_c - log_e)
    order = np.argsort(cost)
    out = [best.copy()]
    heap = [(float(cost[order[0]]), (0,))]  # (cost, positions in ``order`` flipped, ascending)
    while heap and len(out) < 1 << PIECES_MAX_DOUBT:
        total, flips = heapq.heappop(heap)
        on = best.copy()
        on[order[list(flips)]] ^= True
        out.append(on)
        last = flips[-1]
        if last + 1 < n:  # successors: add the next flip, or move the last one on
            heapq.heappush(heap, (total + float(cost[order[last + 1]]), flips + (last + 1,)))
            heapq.heappush(heap, (total - float(cost[order[last]]) + float(cost[order[last + 1]]),
                                  flips[:-1] + (last + 1,)))
    return out


def _distinct_pieces(clear: list[int], elsewhere: set,
                     edges: tuple[tuple[int, ...], ...]) -> dict[str, list[int]] | None:
    """The pieces these clear cells make, each with its cells, if they split into edge-connected
    regions that are each a piece of the set, none twice and none among ``elsewhere``; else None."""
    left, found = set(clear), {}
    while left:
        region, stack = [], [left.pop()]
        while stack:
            j = stack.pop()
            region.append(j)
            for n in edges[j]:
                if n in left:
                    left.remove(n)
                    stack.append(n)
        piece = hex_ground().piece(region)
        if piece is None or piece in found or piece in elsewhere:
            return None
        found[piece] = region
    return found
