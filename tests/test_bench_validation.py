"""bench/perf/validation.py (make bench's validation cost): the profiles it parses are named in one table, the same
for this tree and the saved older revisions it also times; for this tree the registry must still know them."""
from __future__ import annotations

import pytest

import bench.perf.validation as bv


def test_this_tree_knows_the_profiles_the_benchmark_parses(monkeypatch):
    bv.this_tree_knows()
    import profiles
    monkeypatch.setattr(profiles, "KNOWN", {k: v for k, v in profiles.KNOWN.items() if k != bv.DFTRACER})
    with pytest.raises(RuntimeError, match=f"profiles.KNOWN has no {bv.DFTRACER} "):  # planted: a renamed profile
        bv.this_tree_knows()

