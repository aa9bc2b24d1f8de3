"""make bench's `vol` section (bench/perf/vol.py, docs/vol.md#measured-the-overlap): the hidden I/O is sync's I/O wait
less explicit's, stated by hand here; the committed results.md is what its results.json renders to."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.perf import common, report, vol
from bench.perf.common import BenchError, Context

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


# ---------------------------------------------------------------- the pass-through row (issue 28's <= 2% goal)

def _pt(label: str, i: int, epoch: float, stack: str | None = None, reads: int = 16) -> dict:
    return {"label": label, "launch": f"vol-pt/w/{label}-{i}", "stack": stack or vol.STACKS[label][1],
            "wall_s": 1.0, "epoch_s": epoch, "io_s": epoch / 2, "bytes": 4096 * 16, "opens": 16, "reads": reads}


def test_overhead_is_the_median_of_the_paired_ratios():
    runs = [_pt("native", 0, 1.00), _pt("pass_through", 0, 1.01), _pt("pass_through", 1, 1.05),
            _pt("native", 1, 1.00), _pt("native", 2, 2.00), _pt("pass_through", 2, 1.98)]
    row = vol.overhead_row(runs)
    # pairs by repetition: 1.01, 1.05, 0.99 -> median 1.01 (1% overhead), range 0.99-1.05, computed here by hand
    assert abs(row["ratio_epoch"]["paired"]["median"] - 1.01) < 1e-12
    pr = row["ratio_epoch"]["paired"]
    assert abs(pr["min"] - 0.99) < 1e-12 and abs(pr["max"] - 1.05) < 1e-12
    assert abs(row["overhead_percent"] - 1.0) < 1e-9 and row["within_goal"] and row["same_counts"]
    slow = vol.overhead_row([_pt("native", 0, 1.0), _pt("pass_through", 0, 1.03)])
    assert abs(slow["overhead_percent"] - 3.0) < 1e-9 and not slow["within_goal"]


def test_a_launch_that_did_not_run_on_its_labels_stack_ends_the_row():
    """Planted: native twice, the second labelled pass-through: the row is refused naming the launch, never called
    the pass-through overhead; and a launch that read other bytes is flagged."""
    with pytest.raises(BenchError, match=r"vol-pt/w/pass_through-0 was run as pass_through but its output.json "
                                         r"reports the VOL stack 'native'"):
        vol.overhead_row([_pt("native", 0, 1.0), _pt("pass_through", 0, 1.0, stack="native")])
    with pytest.raises(BenchError, match="reports the VOL stack 'pass_through > native', not 'native'"):
        vol.overhead_row([_pt("native", 0, 1.0, stack="pass_through > native"), _pt("pass_through", 0, 1.0)])
    assert not vol.overhead_row([_pt("native", 0, 1.0), _pt("pass_through", 0, 1.0, reads=15)])["same_counts"]


def _ctx(tmp_path: Path, repeat: int = 1) -> Context:
    w = {"name": "small-files", "what": "x", "files": 4, "samples_per_file": 1, "record_length": 4096,
         "batch_size": 2, "epochs": 1}
    return Context(scale="tiny", preset={"vol": {"pass_through": {"repeat": repeat, "workloads": [w]}}},
                   out=tmp_path / "out", work=tmp_path / "work", dlio_venv=None)


@pytest.fixture()
def bench_kernel(monkeypatch):
    binary = Path(os.environ.get("H5DLIO_BIN") or REPO / "build" / "h5dlio")
    if not binary.exists():
        pytest.skip(f"{binary} not built (make build)")
    monkeypatch.setattr(common, "KERNEL", binary)
    return binary


def test_the_pass_through_row_asks_each_launch_for_its_stack(tmp_path, bench_kernel):
    """The real kernel, 4 files of 4 KiB: the row names the stacks HDF5 reported and the same counts on both; rendered
    into results.md."""
    pt = vol.pass_through(_ctx(tmp_path, repeat=2))
    w = pt["workloads"][0]
    assert w["stacks"] == {"native": "native", "pass_through": "pass_through > native"}
    assert w["same_counts"] and w["counts"]["opens"] == 4 and w["counts"]["bytes"] == 4 * 4096
    assert w["ratio_epoch"]["paired"]["n"] == 2
    md = report.markdown({"meta": {"date": "d", "scale": "tiny", "preset": {}},
                          "sections": {"vol": {"parts": ["pass_through"], "cases": [], "pass_through": pt}}}, {})
    assert "| small-files | 4 x 4 KiB, batch 2, 1 epoch(s) |" in md and "('native', 'pass_through > native')" in md
    assert "The async sweep: not run in this invocation" in md


def test_a_pass_through_launch_left_native_is_refused(tmp_path, bench_kernel, monkeypatch):
    """Negative control: the pass-through launches given no connector key (so HDF5 runs them on native): the bench
    stops naming the first such launch instead of reporting native against native as the pass-through overhead."""
    monkeypatch.setitem(vol.STACKS, "pass_through", ("", "pass_through > native"))
    with pytest.raises(BenchError, match=r"launch vol-pt/small-files/pass_through-0 was run as pass_through but its "
                                         r"output.json reports the VOL stack 'native'"):
        vol.pass_through(_ctx(tmp_path))


@pytest.mark.parametrize("folder", ["2026-11-27-vol", "2026-11-27-vol-2"])
def test_the_committed_pass_through_results_md_is_what_results_json_renders_to(folder):
    d = REPO / "bench" / "results" / folder
    res = json.loads((d / "results.json").read_text())
    md = (d / "results.md").read_text()
    assert report.markdown(res, {}) == md
    rows = {w["name"]: w for w in res["sections"]["vol"]["pass_through"]["workloads"]}
    assert set(rows) == {"unet3d-like", "small-files"} and all(w["same_counts"] for w in rows.values())
    assert all(w["ratio_epoch"]["paired"]["n"] == 10 for w in rows.values())
