"""Held-out "phone camera" stress bench: every photo reader on photos developed by a phone's
image pipeline it was never tuned on.

Every reader was developed against our renderer and its named conditions; real phone photos
also pass through the phone's own processing (local tone mapping, vivid colour, noise
reduction, sharpening, chroma-subsampled JPEG, zoom, exposure and white-balance mistakes, lens
fringes: ``vision.synth.phone``). This bench renders photos from a seed no other bench draws
(4242), under a mix of everyday conditions, then reads each photo as rendered ("none") and
after each phone effect in turn, so every effect is compared on the same photos. Nobody tunes
a reader on it: it is the check that a change generalises, not a target.

The cell games (Blokus, Gemblo, Equilibrix) are counted as in :mod:`bench.photo_accuracy`, the
Geometrius tokens as in :mod:`bench.geometrius_bench`. A last table ranks the (game, effect)
pairs by the silent errors they add over the same photos undeveloped.

``python -m bench heldout``; ``HELDOUT_PHOTOS=N`` photos per game (default 4), each read once
per effect; ``HELDOUT_GAMES=blokus,gemblo`` runs only those games, ``HELDOUT_EFFECTS=dark_room,vivid``
only those effects; ``BENCH_SEED=N`` draws another held-out set.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np

from vision.synth.conditions import sample_conditions
from vision.synth.geometrius import render_photo as render_geometrius
from vision.synth.phone import PHONE_EFFECTS, develop

from . import equilibrix_bench, gemblo_bench, geometrius_bench, vision_bench
from .photo_accuracy import PhotoBench, bench_seed, new_stats, percent, score_photo, upright

SEED = 4242  # no other bench draws it (they use 1, 2, 3, 5, 6, 99 and 11 for checks)
NONE = "none"  # the photo as rendered, before any phone effect
# Everyday conditions the photos cycle through (the first few make up a small run).
MIX = ("clean", "perspective", "shadow", "glare", "warm_light", "hand", "rotation", "wood_table", "cool_light",
       "gradient", "patterned_table", "stray_pieces")


@dataclass(frozen=True)
class Game:
    """How the bench draws, scores and tabulates one reader."""

    name: str
    # (rng, condition, size) -> (upright image, the truth ``score`` compares against)
    render: Callable[[np.random.Generator, str, tuple[int, int]], tuple[np.ndarray, object]]
    new_row: Callable[[str], dict]
    score: Callable[[dict, np.ndarray, object], None]  # read the image, add its counts to the row
    table: Callable[[list[dict]], None]
    silent: Callable[[dict], float]  # share of cells (tokens) wrong and not marked uncertain
    good: Callable[[dict], float]  # share of boards exact (tokens right)


def _share(n: int, d: int) -> float:
    return n / d if d else 0.0


def _cell_game(name: str, bench: PhotoBench) -> Game:
    def table(rows: list[dict]) -> None:
        print("| effect | photos | cell error (silent) | misread | uncertain | boards exact | no board "
              "| boards right or marked |\n|---|---|---|---|---|---|---|---|")
        for r in rows:
            n = r["photos"] * bench.cells
            print(f"| {r['condition']} | {r['photos']} | {percent(r['silent'], n)} | {percent(r['misread'], n)} | "
                  f"{percent(r['uncertain'], n)} | {r['exact']}/{r['photos']} | {r['refused']} | "
                  f"{r['marked']}/{r['photos']} |")

    return Game(name, bench.render, new_stats, lambda row, image, truth: score_photo(row, bench, image, truth), table,
                lambda r: _share(r["silent"], r["photos"] * bench.cells), lambda r: _share(r["exact"], r["photos"]))


def _render_geometrius(rng: np.random.Generator, condition: str, size: tuple[int, int]):
    photo = render_geometrius(rng, sample_conditions(condition, rng), size)
    return upright(photo), photo.tokens


def _geometrius_table(rows: list[dict]) -> None:
    pct = geometrius_bench.token_percent
    print("| effect | photos | tokens found | token right | silent wrong | shape uncertain | angles within 2° "
          "| top chip right | top silent wrong | refused |\n|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['condition']} | {r['photos']} | {pct(r['found'], r['tokens'])} | "
              f"{pct(r['right'], r['visible'])} | {pct(r['silent'], r['visible'])} | "
              f"{pct(r['uncertain'], r['visible'])} | "
              f"{pct(sum(a <= 2.0 for a in r['angles']), len(r['angles']))} | {pct(r['top_right'], r['tops'])} | "
              f"{pct(r['top_silent'], r['tops'])} | {r['refused']} |")


GAMES = (
    _cell_game("blokus", vision_bench.BENCH),
    _cell_game("gemblo", gemblo_bench.BENCH),
    _cell_game("equilibrix", equilibrix_bench.BENCH),
    Game("geometrius", _render_geometrius, geometrius_bench.new_row, geometrius_bench.score_photo, _geometrius_table,
         lambda r: _share(r["silent"], r["visible"]), lambda r: _share(r["right"], r["visible"])),
)


def sweep(game: Game, photos: int, seed: int, effects=PHONE_EFFECTS, size=(1600, 1200)) -> list[dict]:
    """One row per effect (``none`` first): the same ``photos`` rendered photos, each read as
    rendered and after each effect."""
    rows = {name: game.new_row(name) for name in (NONE, *effects)}
    g = 1000 + GAMES.index(game)  # keeps these draws apart from every [seed, condition, i] of the sweeps
    for i in range(photos):
        condition = MIX[i % len(MIX)]
        image, truth = game.render(np.random.default_rng([seed, g, i]), condition, size)
        seen = []
        for effect in (NONE, *effects):
            developed = image if effect == NONE else develop(
                image, effect, np.random.default_rng([seed, g, i, 1 + PHONE_EFFECTS.index(effect)]))
            photo = game.new_row(effect)
            game.score(photo, developed, truth)
            for key, value in photo.items():
                if key != "condition":
                    rows[effect][key] += value
            seen.append(_verdict(game, photo))
        print(f"  {game.name} photo {i + 1}/{photos} ({condition}): {', '.join(seen)}", file=sys.stderr, flush=True)
    return list(rows.values())


def _verdict(game: Game, photo: dict) -> str:
    """One photo's result under one effect, for the progress log: which photo broke what."""
    if photo["refused"]:
        return f"{photo['condition']} refused"
    return f"{photo['condition']} {100 * game.silent(photo):.1f}% silent, {100 * game.good(photo):.0f}% right"


def ranking(results: dict[str, list[dict]]) -> list[tuple[str, str, float, float, int]]:
    """(game, effect, silent share added, good share lost, photos refused added) against the same
    photos undeveloped, worst first: silent errors rank before lost exact boards and refusals (a
    reader that says "check this" or "I cannot read it" is still trustworthy). A refused photo
    counts no silent error, so an effect that makes a reader refuse can show fewer of them."""
    out = []
    for game in GAMES:
        if game.name not in results:
            continue
        rows = results[game.name]
        base = rows[0]
        for r in rows[1:]:
            out.append((game.name, r["condition"], game.silent(r) - game.silent(base), game.good(base) - game.good(r),
                        r["refused"] - base["refused"]))
    return sorted(out, key=lambda t: (-t[2], -t[3], -t[4]))


def run(photos: int, seed: int, games=GAMES, effects=PHONE_EFFECTS, size=(1600, 1200)) -> dict[str, list[dict]]:
    """Every game's rows, printed as Markdown tables, then the ranking."""
    results = {}
    for game in games:
        results[game.name] = rows = sweep(game, photos, seed, effects, size)
        print(f"\n### {game.name} ({photos} photos per effect, seed {seed})\n")
        game.table(rows)
    print("\n### effects ranked by the silent errors they add (then by boards / tokens no longer right)\n")
    print("| game | effect | silent error added | exact boards (tokens right) lost | photos refused added |\n"
          "|---|---|---|---|---|")
    for name, effect, silent, good, refused in ranking(results):
        print(f"| {name} | {effect} | {100 * silent:+.3f} % | {100 * good:+.1f} % | {refused:+d} |")
    return results


def main() -> None:
    cv2.setNumThreads(1)
    wanted = os.environ.get("HELDOUT_GAMES", "").split(",") if os.environ.get("HELDOUT_GAMES") else None
    known = [g.name for g in GAMES]
    if wanted and set(wanted) - set(known):
        sys.exit(f"HELDOUT_GAMES: unknown game(s) {sorted(set(wanted) - set(known))} (one of {', '.join(known)})")
    games = tuple(g for g in GAMES if not wanted or g.name in wanted)
    effects = tuple(os.environ["HELDOUT_EFFECTS"].split(",")) if os.environ.get("HELDOUT_EFFECTS") else PHONE_EFFECTS
    if set(effects) - set(PHONE_EFFECTS):
        sys.exit(f"HELDOUT_EFFECTS: unknown effect(s) {sorted(set(effects) - set(PHONE_EFFECTS))} "
                 f"(one of {', '.join(PHONE_EFFECTS)})")
    run(int(os.environ.get("HELDOUT_PHOTOS", "4")), bench_seed(SEED), games, effects)


if __name__ == "__main__":
    main()
