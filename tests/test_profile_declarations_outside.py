"""What fidelity/ and bench/perf read of the profiles, from their declarations (profiles/__init__.py), never a name:
the DLIO version matrix's columns (each profile's check families a row holds), the Log VFD's first differing block
(Profile.first_difference), the profile the benches time launches under (Profile.baseline, baseline()) and the
profilers' cost plot (every profiler measured, in the registry's order). Each with a profile registered at runtime
that changes what they show."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fidelity import matrix as fmatrix
from fidelity import workloads as fworkloads
from profiles import Done, Profile, baseline, register, registry, unregister
from profiles import timing as ptiming

REPO = Path(__file__).resolve().parent.parent


def test_the_committed_matrices_columns_are_the_families_their_rows_hold():
    """fidelity/matrix.md and workloads.md as committed: their header's columns are what families() gives their rows
    (so `make fidelity` rewrites them byte for byte)."""
    m = json.loads((REPO / "fidelity" / "matrix.json").read_text())
    header = (REPO / "fidelity" / "matrix.md").read_text().splitlines()[4]
    assert header.endswith("| verdict | " + " | ".join(fmatrix.families(m["rows"])) + " |"), header
    w = json.loads((REPO / "fidelity" / "workloads.json").read_text())
    assert fworkloads.render_md(w) == (REPO / "fidelity" / "workloads.md").read_text()


def row(*names: str) -> dict:
    return {"checks": {n: "pass" for n in names}}


def test_a_profiles_families_become_columns_when_a_row_holds_them():
    """A row with checks of a profile (its name, or a family its claims name: the Log VFD's counts.*) gains its
    column, in the registry's order between validate's own; a family no row holds has none."""
    base = fmatrix.families([row("dlio.version", "steps.x", "logvfd.multiset.rank0", "runtime.train")])
    assert base == ["dlio.version", "steps", "dataset", "logvfd", "runtime"]
    more = fmatrix.families([row("logvfd.m", "counts.dlio.logvfd.rank0"), row("strace.per_file", "darshan.per_file")])
    assert more == ["dlio.version", "steps", "dataset", "logvfd", "counts", "darshan", "strace", "runtime"]


class Echo(Profile):
    name = "echo"
    order = 25
    first_difference = ("echo",)


@pytest.fixture
def echo():
    register(Echo)
    yield
    unregister("echo")


def blocks_run(tmp_path: Path, step: str, dlio: list, kernel: list) -> Path:
    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    for side, b in (("dlio", dlio), ("kernel", kernel)):
        (run / "tables" / f"{step}-{side}.json").write_text(json.dumps({"ranks": {"0": {"blocks": b}}}))
    return run


def test_a_profiles_first_difference_tables_are_compared(tmp_path, echo):
    """The divergence report's first differing block comes from the tables a profile declares (first_difference):
    a runtime profile's, once registered; a table no profile declares is never read."""
    run = blocks_run(tmp_path, "echo", [["a", "b"]], [["a", "c"]])
    assert fmatrix.first_block_diffs(run) == [{"variant": "echo", "rank": 0, "open": 0, "opens": [1, 1],
                                               "dlio": ["a", "b"], "kernel": ["a", "c"]}]
    unregister("echo")
    assert fmatrix.first_block_diffs(run) == []
    # the Log VFD's: its ordered variant (read_threads=0) first, its other launch's tables then unread
    lv = blocks_run(tmp_path / "lv", "logvfd-rt0", [["x"], ["y"]], [["x"], ["z"]])
    (lv / "tables" / "logvfd-dlio.json").write_text(json.dumps({"ranks": {"0": {"blocks": [["p"]]}}}))
    (lv / "tables" / "logvfd-kernel.json").write_text(json.dumps({"ranks": {"0": {"blocks": [["q"]]}}}))
    assert [(b["variant"], b["open"]) for b in fmatrix.first_block_diffs(lv)] == [("logvfd-rt0", 1)]


def test_one_profile_is_the_baseline_the_benches_time_under(monkeypatch):
    """baseline() is the profile declaring Profile.baseline (timing); two such, or none, is refused."""
    assert baseline() is registry()["timing"] and baseline() is registry()[ptiming.Timing.name]
    monkeypatch.setattr(Echo, "baseline", True)
    register(Echo)
    try:
        with pytest.raises(LookupError, match="2 baseline profiles"):
            baseline()
    finally:
        unregister("echo")
    monkeypatch.setattr(ptiming.Timing, "baseline", False)
    with pytest.raises(LookupError, match="0 baseline profiles"):
        baseline()


def test_the_bench_reads_a_timed_launch_through_the_baselines_collect(tmp_path):
    """bench/perf/dlio.py's _parse: the in-program times the baseline collects of the launch's outputs (the kernel's
    output.json here); a launch whose output says other times gives those."""
    from bench.perf.dlio import _parse
    from harness.launch import Step
    wd = tmp_path / "kernel" / "timing"
    (wd / "out").mkdir(parents=True)

    def parsed(epochs: list[float]) -> dict:
        (wd / "out" / "output.json").write_text(json.dumps(
            {"wall_s": 9.0, "train": {"epochs": [{"observed_s": e} for e in epochs]}, "eval": {"epochs": []}}))
        step = Step("kernel.timing", "kernel", "timing", [], {}, wd, None, 60)
        return _parse(baseline(), step, {"wall_s": 10.0, "started": 0.0})
    r = parsed([2.0, 3.0])
    assert r["epochs_s"] == 5.0 and r["train_epoch_s"] == [2.0, 3.0] and r["startup_s"] == 1.0
    assert parsed([1.0])["epochs_s"] == 1.0
    assert isinstance(baseline().collect(Done("kernel.timing", "kernel", "timing", wd, 10.0, wd, wd)), dict)


def test_the_profilers_plot_shows_each_measured_profiler_in_the_registrys_order(echo):
    """Every profiler the results hold but the baseline, in the registry's order (a runtime profile included)."""
    from bench.perf import plots
    stat = {"ratio_wall": {"median_ratio": 1.5, "paired": {"min": 1.2, "max": 1.8}},
            "ratio_epochs": {"median_ratio": 1.1, "paired": {"min": 1.0, "max": 1.2}}}
    sec = {"profiles": {s: {"timing": {}, "strace": stat, "echo": stat, "logvfd": stat} for s in ("dlio", "kernel")}}
    fig = plots.profilers(sec)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["logvfd", "echo", "strace"]
