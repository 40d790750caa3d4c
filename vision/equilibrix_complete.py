"""Best guesses for the Equilibrix fields a photo leaves in doubt, completed from the rules.

The fields reader (``vision.equilibrix_fields``) marks what it cannot read (a field under a hand,
a blown-out reflection, a washed-out tile) uncertain and best-guesses it from the colour seen
there. Any legal board obeys the rules, so where the guesses together break one, they are
wrong, not the rule:

- E4: every tile of a colour after its first shares a node with a field of that colour, so a
  colour's fields form one node-connected network. A part of a colour's guessed network that
  holds only doubtful fields and touches none of its sure ones (glared wood read white away
  from the white tiles, skin read black) could only be real if another field were misread as
  well, the link between them; it is best guessed empty, as most doubtful fields are. Where one
  doubtful field alone could be that link (it touches both the part and the colour's sure
  network), the part is kept: a shadow or a hand over a single field explains it as well (white
  tiles in a hand's shadow, cut off by one shadowed field, are white tiles).
- E1 and E2: a ring tile leaves its slot when it is laid, and besides ring tiles a colour has
  only two mini-tiles, one petal and one triangle. A colour whose fields are all doubtful and
  more than its mini-tiles cover needs a ring tile; when the slots the ring shows empty are
  all needed for the other colour's sure fields, that colour has laid none, and its fields are
  best guessed empty.

Not used: the tiles' shapes, or their sizes. The publisher does not publish them: the catalogue
(``rules/data/equilibrix-tiles.json``) is a stand-in, and the bench's games are drawn from that
same catalogue, so a prior on shapes would be checked against our own invention and would
mislead with the real tiles. Only that a ring tile covers a field or more is used. Nor E5 (five
fields of a colour at a node): the fields reader already doubts every field of a node read
over-full, and which of them is wrong, or whether black or empty, the rule does not say.

Only best guesses change: a doubtful field stays doubtful and a sure one is never touched, so
no field is made silently wrong.
"""
from __future__ import annotations

import numpy as np

from rules import equilibrix, flower
from rules.board import bits

from . import flowergrid as fg
from .equilibrix_fields import EMPTY, LABELS

COLOURS = tuple(LABELS.index(c) for c in equilibrix.COLOURS)  # label indices of black and white


def complete(label: np.ndarray, doubt: np.ndarray, slots_empty: int) -> np.ndarray:
    """Label index per field (``vision.equilibrix_fields.LABELS``, the rules' field order) with
    the doubtful fields' best guesses set right by E4 and by the ring (E1, E2). ``doubt``: which
    fields are uncertain; ``slots_empty``: ring slots read empty (or unseen), taken as the most
    ring tiles that can have been laid (a hand or a glare spot read as a tile makes it too few:
    then a colour's doubtful fields may be best guessed empty wrongly; they stay uncertain)."""
    for colour in COLOURS:
        label = _one_network(label, doubt, colour)
    for colour in COLOURS:
        label = _laid_by_ring(label, doubt, colour, slots_empty)
    return label


def _mask(which: np.ndarray) -> int:
    """Fields (per-field booleans, the rules' order) as the rules' bit set."""
    return sum(1 << int(i) for i in np.flatnonzero(which))


def _fields(mask: int) -> np.ndarray:
    out = np.zeros(len(fg.fields()), bool)
    out[list(bits(mask))] = True
    return out


def _one_network(label: np.ndarray, doubt: np.ndarray, colour: int) -> np.ndarray:
    """E4: the parts of ``colour``'s network that hold no sure field of it, where it has sure
    fields, are best guessed empty, unless one doubtful field read otherwise touches both the
    part and a part holding a sure field: that one field may be the misread link."""
    mine = label == colour
    sure = _mask(mine & ~doubt)
    if not sure:
        return label
    parts = equilibrix.networks(_mask(mine))
    held = sum(part for part in parts if part & sure)
    links, board = _mask(doubt & ~mine), flower.board()
    stray = sum(part for part in parts if not part & sure and not
                board.grow(board.grow(part, board.contact_mask) & links, board.contact_mask) & held)
    return np.where(_fields(stray), LABELS.index(EMPTY), label)


def _needs_ring_tile(which: np.ndarray) -> int:
    """1 when these fields are more than one colour's mini-tiles cover (E2), else 0."""
    return int(not equilibrix.minis_cover(fg.fields()[i] for i in np.flatnonzero(which)))


def _laid_by_ring(label: np.ndarray, doubt: np.ndarray, colour: int, slots_empty: int) -> np.ndarray:
    """E1, E2: ``colour``'s fields, all doubtful, that need a ring tile when the other colour's
    sure fields need every tile gone from the ring (and no more: else the ring is misread) are
    best guessed empty."""
    mine = label == colour
    if not mine.any() or (mine & ~doubt).any():
        return label
    other = _needs_ring_tile((label == next(c for c in COLOURS if c != colour)) & ~doubt)
    if _needs_ring_tile(mine) + other <= slots_empty or other > slots_empty:
        return label
    return np.where(mine, LABELS.index(EMPTY), label)
