"""`make bench`: run every benchmark and print its table (the README's figures come from here).

`python -m bench NAME ...` runs only the named ones.
"""
from __future__ import annotations

import importlib
import sys

BENCHES = ("rules_bench", "vision_bench", "gemblo_bench", "equilibrix_bench", "geometrius_bench", "heldout", "framing", "standing_mug", "nudged", "live", "kept_boards", "live_games", "live_fuzz", "latency", "calibration_bench")


def main(names: list[str]) -> None:
    for name in names or BENCHES:
        if name not in BENCHES:
            sys.exit(f"unknown benchmark {name!r} (one of {', '.join(BENCHES)})")
        print(f"\n## {name}\n", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
