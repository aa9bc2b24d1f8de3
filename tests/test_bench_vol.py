"""make bench's `vol` section (bench/perf/vol.py, docs/vol.md#measured-the-overlap): the hidden I/O is sync's I/O wait
less explicit's, stated by hand here; the committed results.md is what its results.json renders to."""
from __future__ import annotations

import json
from pathlib import Path

from bench.perf import report, vol

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "2026-11-25-vol"


def _run(wait: float, nbytes: int = 100) -> dict:
    return {"epoch_s": 1.0, "au_percent": 90.0, "io_wait_s": wait, "compute_s": 0.5, "wall_s": 2.0,
            "window_s": None, "wait_s": None, "bytes": nbytes, "opens": 4, "stack": "x"}


def test_hidden_io_is_the_sync_wait_less_the_explicit_wait():
    c = vol._case({"sync": [_run(0.4), _run(0.6), _run(0.5)], "implicit": [_run(2.0)] * 3,
                   "explicit": [_run(0.1), _run(0.2), _run(0.05)]})
    assert abs(c["hidden_io_s"] - 0.4) < 1e-12  # medians 0.5 and 0.1
    assert abs(c["hidden_io_percent"] - 80.0) < 1e-9
    assert c["same_counts"]


def test_a_launch_that_read_other_bytes_is_flagged():
    c = vol._case({"sync": [_run(0.5)], "implicit": [_run(1.0)], "explicit": [_run(0.1, nbytes=99)]})
    assert not c["same_counts"]


def test_the_committed_results_md_is_what_results_json_renders_to():
    res = json.loads((RESULTS / "results.json").read_text())
    assert (RESULTS / "vol.png").exists()
    assert report.markdown(res, {"vol": "vol.png"}) == (RESULTS / "results.md").read_text()
    assert "Same bytes and opens in every launch: yes." in (RESULTS / "results.md").read_text()
