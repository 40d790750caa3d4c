"""Measured properties of a polygon, from its vertices alone.

Geometrius cards are conditions on the polygon a token shows ("at least three sides of equal
length", "no right angles", "has a centre of symmetry"), and the rulebook's glossary defines
every term: sides, interior angles, acute / right / obtuse / over 180°, convex. This module
turns vertices into those terms so that a card is one comparison, and it recognises a
polygon seen by the camera as one of the catalogue's shapes.

"Equal" depends on where the vertices come from (:class:`Tolerance`): catalogue vertices
are exact up to the six decimals they are written with (:data:`EXACT`); vertices measured
by the camera are equal within 2 % of a length or 2° of an angle (:data:`CAMERA`).

Coordinates are a right-handed plane (x to the right, y up), like the catalogue's. Image
coordinates (y down) are a mirror image: negate y before matching, since tokens are never
turned over and :func:`match_token` does not accept mirror images.
"""
from __future__ import annotations

import cmath
import math
import operator
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable, Mapping, Sequence

Point = tuple[float, float]

FEATURES = (
    "sides", "sides_odd", "max_equal_sides", "equal_side_pairs", "all_sides_equal",
    "right_angles", "acute_angles", "obtuse_angles", "reflex_angles", "convex",
    "max_equal_angles", "all_angles_equal", "parallel_side_pairs", "symmetry_axes",
    "point_symmetric",
)
YES_NO = frozenset({"sides_odd", "all_sides_equal", "convex", "all_angles_equal", "point_symmetric"})
OPS: Mapping[str, Callable[[object, object], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le,
    ">": operator.gt, "<": operator.lt,
}


@dataclass(frozen=True)
class Tolerance:
    """How far apart two measurements may be and still count as equal."""

    length: float  # relative: a and b are equal when |a - b| <= length * max(a, b)
    angle: float  # degrees

    def same_length(self, a: float, b: float) -> bool:
        return abs(a - b) <= self.length * max(a, b)

    def same_angle(self, a: float, b: float) -> bool:
        return abs(a - b) <= self.angle


# Catalogue vertices carry six decimals (√3 is 1.732051), so "exact" absorbs that rounding.
EXACT = Tolerance(length=1e-5, angle=1e-3)
CAMERA = Tolerance(length=0.02, angle=2.0)


@dataclass(frozen=True)
class Polygon:
    """A simple polygon walked counter-clockwise: side ``i`` runs from vertex ``i`` to
    vertex ``i + 1`` and ``angles[i]`` is the interior angle at vertex ``i``, in degrees."""

    points: tuple[complex, ...]
    sides: tuple[float, ...]
    angles: tuple[float, ...]
    directions: tuple[float, ...]  # of each side, degrees

    @classmethod
    def of(cls, vertices: Sequence[Sequence[float]]) -> "Polygon":
        """Check that ``vertices`` outline a polygon and walk it counter-clockwise.

        Raises ValueError (one line) for fewer than three vertices, a side of length zero,
        sides that cross or touch, or a side folding back onto the one before.
        """
        points = _points(vertices)
        n = len(points)
        if any(points[i] == points[i - 1] for i in range(n)):
            raise ValueError("two consecutive vertices coincide (a side of length zero)")
        _check_simple(points)
        area = sum((points[i].conjugate() * points[(i + 1) % n]).imag for i in range(n)) / 2
        if area == 0:
            raise ValueError("the vertices enclose no area")
        if area < 0:
            points = points[::-1]
        edges = [points[(i + 1) % n] - points[i] for i in range(n)]
        angles = tuple(180 - math.degrees(cmath.phase(edges[i] / edges[i - 1])) for i in range(n))
        if any(not 0 < a < 360 for a in angles):
            raise ValueError("a side folds back onto the one before it")
        return cls(tuple(points), tuple(abs(e) for e in edges), angles,
                   tuple(math.degrees(cmath.phase(e)) for e in edges))

    @property
    def perimeter(self) -> float:
        return sum(self.sides)


def _points(vertices: Sequence[Sequence[float]]) -> list[complex]:
    try:
        points = [complex(float(x), float(y)) for x, y in vertices]
    except (TypeError, ValueError):
        raise ValueError("vertices must be [x, y] pairs of numbers") from None
    if len(points) < 3:
        raise ValueError(f"a polygon needs at least 3 vertices, not {len(points)}")
    if not all(math.isfinite(p.real) and math.isfinite(p.imag) for p in points):
        raise ValueError("vertices must be finite numbers")
    return points


def _cross(u: complex, v: complex) -> float:
    return (u.conjugate() * v).imag


def _check_simple(points: Sequence[complex]) -> None:
    """The glossary's polygon: sides that are not neighbours share no point."""
    n = len(points)
    scale = max(abs(p - points[0]) for p in points)
    eps = 1e-12 * scale * scale
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # neighbours through vertex 0
            if _segments_meet(points[i], points[i + 1], points[j], points[(j + 1) % n], eps):
                raise ValueError(f"sides {i} and {j} cross or touch: not a simple polygon")


def _segments_meet(p: complex, q: complex, r: complex, s: complex, eps: float) -> bool:
    d1, d2 = _cross(s - r, p - r), _cross(s - r, q - r)
    d3, d4 = _cross(q - p, r - p), _cross(q - p, s - p)
    if ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and \
            ((d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps)):
        return True
    return any(abs(d) <= eps and _between(x, a, b) for d, x, a, b in
               ((d1, p, r, s), (d2, q, r, s), (d3, r, p, q), (d4, s, p, q)))


def _between(x: complex, a: complex, b: complex) -> bool:
    """``x``, known to lie on the line through ``a`` and ``b``, lies on the segment."""
    return ((x - a).conjugate() * (x - b)).real <= 0


# --- features -------------------------------------------------------------------------------

def features(vertices: Sequence[Sequence[float]], tol: Tolerance = EXACT) -> dict[str, int | bool]:
    """Every property a card can ask about (:data:`FEATURES`), measured with ``tol``.

    Raises ValueError for vertices that are not a polygon, and for a straight angle (180°
    within ``tol``): such a vertex is not a corner, and counting it would change the number
    of sides a card sees, so a camera reader must drop it first.
    """
    p = Polygon.of(vertices)
    straight = [i for i, a in enumerate(p.angles) if tol.same_angle(a, 180)]
    if straight:
        raise ValueError(f"vertex {straight[0]} is a straight angle ({p.angles[straight[0]]:.1f}°), "
                         "not a corner")
    n = len(p.sides)
    side_groups = _groups(p.sides, tol.same_length)
    angle_groups = _groups(p.angles, tol.same_angle)
    reflex = sum(a > 180 for a in p.angles)
    return {
        "sides": n,
        "sides_odd": n % 2 == 1,
        "max_equal_sides": max(side_groups),
        "equal_side_pairs": sum(g // 2 for g in side_groups),
        "all_sides_equal": max(side_groups) == n,
        "right_angles": sum(tol.same_angle(a, 90) for a in p.angles),
        "acute_angles": sum(a < 90 - tol.angle for a in p.angles),
        "obtuse_angles": sum(90 + tol.angle < a < 180 for a in p.angles),
        "reflex_angles": reflex,
        "convex": reflex == 0,
        "max_equal_angles": max(angle_groups),
        "all_angles_equal": max(angle_groups) == n,
        "parallel_side_pairs": sum(_parallel(p.directions[i], p.directions[j], tol)
                                   for i in range(n) for j in range(i + 1, n)),
        "symmetry_axes": _mirror_axes(p, tol),
        "point_symmetric": _half_turn(p, tol),
    }


def _groups(values: Iterable[float], same: Callable[[float, float], bool]) -> list[int]:
    """Sizes of the groups of equal values.

    Equality within a tolerance is not transitive, so groups are cut from the smallest value
    up: a group takes every following value equal to its first. The groups then partition
    the values, and "largest group" and "pairs" count the same groups; exact values give
    exact groups.
    """
    sizes: list[int] = []
    first = None
    for v in sorted(values):
        if first is not None and same(first, v):
            sizes[-1] += 1
        else:
            first = v
            sizes.append(1)
    return sizes


def _parallel(a: float, b: float, tol: Tolerance) -> bool:
    turn = abs(a - b) % 180
    return min(turn, 180 - turn) <= tol.angle


def _mirror_axes(p: Polygon, tol: Tolerance) -> int:
    """Mirror axes, counted as the ways the side-and-angle sequence reads the same backwards.

    A mirror maps vertex ``i`` to ``k - i`` for some ``k``, so it exists exactly when angle
    ``i`` equals angle ``k - i`` and side ``i`` equals side ``k - 1 - i`` for all ``i`` (the
    sequence fixes the polygon up to a motion, and an orientation-reversing motion with a
    fixed point is a mirror). Each ``k`` is a different axis.
    """
    n = len(p.angles)
    return sum(all(tol.same_angle(p.angles[i], p.angles[(k - i) % n])
                   and tol.same_length(p.sides[i], p.sides[(k - 1 - i) % n]) for i in range(n))
               for k in range(n))


def _half_turn(p: Polygon, tol: Tolerance) -> bool:
    """A half turn maps vertex ``i`` to ``i + n/2``: the sequence repeats after half of it."""
    n = len(p.angles)
    h = n // 2
    return n % 2 == 0 and all(tol.same_angle(p.angles[i], p.angles[(i + h) % n])
                              and tol.same_length(p.sides[i], p.sides[(i + h) % n]) for i in range(n))


# --- cards ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Predicate:
    """A card's condition: ``feature op value``, e.g. ``right_angles == 0``."""

    feature: str
    op: str
    value: int | bool

    def __post_init__(self) -> None:
        if self.feature not in FEATURES:
            raise ValueError(f"unknown feature {self.feature!r} (one of {', '.join(FEATURES)})")
        if self.op not in OPS:
            raise ValueError(f"unknown comparison {self.op!r} (one of {' '.join(OPS)})")
        yes_no = self.feature in YES_NO
        if yes_no != isinstance(self.value, bool) or not isinstance(self.value, int):
            kind = "true or false" if yes_no else "a whole number"
            raise ValueError(f"{self.feature} is compared with {kind}, not {self.value!r}")

    def holds(self, measured: Mapping[str, int | bool]) -> bool:
        return OPS[self.op](measured[self.feature], self.value)

    def __str__(self) -> str:
        value = str(self.value).lower() if isinstance(self.value, bool) else self.value
        return f"{self.feature} {self.op} {value}"


@dataclass(frozen=True)
class Card:
    """A condition card; the texts are what the card says, the predicate what it means."""

    id: str
    predicate: Predicate
    text_en: str = ""
    text_ru: str = ""


def card_matches(card: Card, vertices: Sequence[Sequence[float]], tol: Tolerance = EXACT) -> bool:
    """Whether the polygon with these vertices satisfies the card (G1)."""
    return card.predicate.holds(features(vertices, tol))


# --- shapes ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    """A polygon of the catalogue; ``measured`` shapes were added from the camera, so their
    equalities use :data:`CAMERA` rather than :data:`EXACT`."""

    id: str
    vertices: tuple[Point, ...]
    star: bool  # the token carries a star: the polygon is not convex
    name_ru: str = ""
    measured: bool = False

    @property
    def tolerance(self) -> Tolerance:
        return CAMERA if self.measured else EXACT

    @cached_property
    def polygon(self) -> Polygon:
        return Polygon.of(self.vertices)

    @cached_property
    def features(self) -> dict[str, int | bool]:
        return features(self.vertices, self.tolerance)

    def satisfies(self, card: Card) -> bool:
        return card.predicate.holds(self.features)


@dataclass(frozen=True)
class TokenMatch:
    shape: Shape
    distance: float  # RMS vertex distance after the best rotation, in units of the RMS radius


def match_token(vertices: Sequence[Sequence[float]], shapes: Iterable[Shape],
                tol: Tolerance = CAMERA) -> TokenMatch | None:
    """The shape this polygon is, up to position, rotation and size, or None.

    A shape qualifies when some pairing of the vertices (same walking direction) gives the
    same angles and proportional sides within ``tol``; among those, the smallest
    :attr:`TokenMatch.distance` wins. Mirror images do not qualify: tokens are tiles lying
    face up, never turned over. None means the polygon is not in the catalogue (or the
    vertices were read badly); the caller can add it as a measured shape.
    """
    seen = Polygon.of(vertices)
    n = len(seen.sides)
    best: TokenMatch | None = None
    for shape in shapes:
        known = shape.polygon
        if len(known.sides) != n:
            continue
        for shift in range(n):
            if _corresponds(seen, known, shift, tol):
                d = _distance(seen, known, shift)
                if best is None or d < best.distance:
                    best = TokenMatch(shape, d)
    return best


def _corresponds(seen: Polygon, known: Polygon, shift: int, tol: Tolerance) -> bool:
    """Vertex ``i`` of ``seen`` pairs with vertex ``i + shift`` of ``known``."""
    n, scale = len(seen.sides), known.perimeter / seen.perimeter
    return all(tol.same_angle(seen.angles[i], known.angles[(i + shift) % n])
               and tol.same_length(seen.sides[i] * scale, known.sides[(i + shift) % n]) for i in range(n))


def _distance(seen: Polygon, known: Polygon, shift: int) -> float:
    """Both outlines centred and scaled to RMS radius 1; for unit vectors ``a`` and ``b``
    the best rotation leaves sum |r a - b|^2 = 2n - 2 |sum b conj(a)|."""
    a, b = _normalised(seen.points), _normalised(known.points)
    n = len(a)
    z = sum(b[(i + shift) % n] * a[i].conjugate() for i in range(n))
    return math.sqrt(max(0.0, 2 - 2 * abs(z) / n))


def _normalised(points: Sequence[complex]) -> list[complex]:
    centre = sum(points) / len(points)
    moved = [p - centre for p in points]
    radius = math.sqrt(sum(abs(p) ** 2 for p in moved) / len(moved))
    return [p / radius for p in moved]
