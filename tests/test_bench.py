"""The benchmarks stay runnable: each imports and names a main()."""
import importlib

import pytest

from bench.__main__ import BENCHES


@pytest.mark.parametrize("name", BENCHES)
def test_bench_imports(name):
    assert callable(importlib.import_module(f"bench.{name}").main)
