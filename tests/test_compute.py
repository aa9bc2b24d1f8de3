"""The emulated computation judged side by side (profiles/compute.py), on the committed real run (tests/data/run-tiny:
unet3d tiny, 2 ranks, computation_time 0.323 s, DFTracer on both sides) and on copies of it with one divergence
planted in the kernel's timeline: each must fail its rank's row, and only that row."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profiles import compute
from validate import checks

RUN_TINY = Path(__file__).resolve().parent / "data" / "run-tiny"


def _run(tmp_path: Path, plant=None, cfg=None) -> checks.Run:
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    if plant:
        p = run / "tables" / "dftracer-timeline-kernel.json"
        t = json.loads(p.read_text())
        plant(t)
        p.write_text(json.dumps(t))
    if cfg:
        m = json.loads((run / "manifest.json").read_text())
        cfg(m["workload"]["config"])
        (run / "manifest.json").write_text(json.dumps(m))
    return checks.Run(run)


def _computes(t: dict, rank: int) -> list[dict]:
    return [e for lane in t["lanes"] if lane["rank"] == rank for e in lane["events"] if e["kind"] == "compute"]


def test_the_committed_run_passes_with_its_numbers(tmp_path):
    rows = {r["name"]: r for r in compute.check_compute(_run(tmp_path))}
    assert sorted(rows) == ["compute.rank0", "compute.rank1"]
    for r in rows.values():
        assert r["status"] == "pass", r
        # by hand from the committed timelines: 2 epochs x 2 steps of 0.323 s on each rank and side
        assert r["expected"]["regions"] == r["observed"]["regions"] == 4
        assert 4 * 0.323 <= r["observed"]["seconds"] < 4 * 0.323 + 0.1


def _skip_one(t):    # rank 0's 2nd step computes nothing (what a kernel skipping computation_time does)
    _computes(t, 0)[1]["d"] = 0.000004


def _drop_one(t):    # rank 1 makes one compute region fewer
    for lane in t["lanes"]:
        if lane["rank"] == 1:
            i = next(i for i, e in enumerate(lane["events"]) if e["kind"] == "compute")
            del lane["events"][i]


def _half(t):        # rank 0 computes half the time at every step
    for e in _computes(t, 0):
        e["d"] /= 2


@pytest.mark.parametrize("plant,bad,words", [
    (_skip_one, "compute.rank0", "DLIO made 4 compute regions, the kernel 3"),
    (_drop_one, "compute.rank1", "DLIO made 4 compute regions, the kernel 3"),
    (_half, "compute.rank0", "compute region 1 of 4"),
], ids=["one step's compute skipped", "one region fewer", "half the compute"])
def test_a_planted_divergence_fails_its_rank(tmp_path, plant, bad, words):
    rows = {r["name"]: r for r in compute.check_compute(_run(tmp_path, plant))}
    assert rows[bad]["status"] == "fail" and words in rows[bad]["detail"], rows[bad]
    assert all(r["status"] == "pass" for n, r in rows.items() if n != bad), rows


def test_a_rank_dlio_traced_without_compute_is_a_skip_not_a_pass(tmp_path):
    """DLIO 3.x's rank 0 app trace can end at its loader's start-up (measured): no compute region on DLIO's side of a
    rank the kernel computed in is a SKIP naming the rank, never a PASS; the other rank is still judged. Negative
    control: the kernel's rank 1 skipping a step's compute in the same run still fails."""
    def dlio_rank0_cut(t):
        for lane in t["lanes"]:
            if lane["rank"] == 0:
                lane["events"] = [e for e in lane["events"] if e["kind"] != "compute"]
    run = _run(tmp_path)
    p = Path(run.path) / "tables" / "dftracer-timeline-dlio.json"
    t = json.loads(p.read_text())
    dlio_rank0_cut(t)
    p.write_text(json.dumps(t))
    rows = {r["name"]: r for r in compute.check_compute(checks.Run(Path(run.path)))}
    assert rows["compute.rank0"]["status"] == "skip" and "trace of rank 0" in rows["compute.rank0"]["detail"]
    assert rows["compute.rank1"]["status"] == "pass"
    k = Path(run.path) / "tables" / "dftracer-timeline-kernel.json"
    t = json.loads(k.read_text())
    _computes(t, 1)[1]["d"] = 0.000004
    k.write_text(json.dumps(t))
    rows = {r["name"]: r for r in compute.check_compute(checks.Run(Path(run.path)))}
    assert rows["compute.rank1"]["status"] == "fail" and rows["compute.rank0"]["status"] == "skip"


def _double(t):      # rank 1 computes twice the time at its 4th step
    _computes(t, 1)[3]["d"] *= 2


def test_twice_the_compute_fails_and_a_late_dlio_sleep_does_not(tmp_path):
    rows = {r["name"]: r for r in compute.check_compute(_run(tmp_path / "a", _double))}
    assert rows["compute.rank1"]["status"] == "fail" and "compute region 4 of 4" in rows["compute.rank1"]["detail"]
    run = _run(tmp_path / "b")
    p = run.path / "tables" / "dftracer-timeline-dlio.json"
    t = json.loads(p.read_text())
    for e in _computes(t, 0):
        e["d"] += 0.07          # measured here: DLIO's 0.224 s regions up to 0.292 s at load 10
    p.write_text(json.dumps(t))
    rows = {r["name"]: r for r in compute.check_compute(run)}
    assert rows["compute.rank0"]["status"] == "pass", rows["compute.rank0"]
    assert "largest overrun 7" in rows["compute.rank0"]["detail"], rows["compute.rank0"]


def test_drawn_times_are_compared_as_totals(tmp_path):
    """computation_time_stdev set: each side draws its own times, so the kernel's total is judged against the asked
    total (4 x 0.323 s), within 4 sd of the sum (4 x 0.01 x 2 s) more; half the compute on every step is outside."""
    def jitter(c):
        c.setdefault("train", {})["computation_time_stdev"] = 0.01
    ok = {r["name"]: r for r in compute.check_compute(_run(tmp_path / "a", cfg=jitter))}
    assert all(r["status"] == "pass" and "drawn times" in r["detail"] for r in ok.values()), ok
    for plant in (_skip_one, _half):
        bad = {r["name"]: r for r in compute.check_compute(_run(tmp_path / plant.__name__, plant, jitter))}
        assert bad["compute.rank0"]["status"] == "fail", bad["compute.rank0"]


def _third(t):       # rank 1's 3rd region a third shorter: within no tolerance
    _computes(t, 1)[2]["d"] *= 2 / 3


def test_one_shortened_region_fails_naming_it(tmp_path):
    rows = {r["name"]: r for r in compute.check_compute(_run(tmp_path, _third))}
    assert rows["compute.rank1"]["status"] == "fail" and "compute region 3 of 4" in rows["compute.rank1"]["detail"]
    assert rows["compute.rank0"]["status"] == "pass"


def test_a_workload_without_computation_is_a_skip(tmp_path):
    def none(c):
        c.setdefault("train", {})["computation_time"] = 0
    rows = compute.check_compute(_run(tmp_path, cfg=none))
    assert [r["status"] for r in rows] == ["skip"] and "no computation" in rows[0]["detail"]


def test_no_timeline_is_a_skip_saying_so(tmp_path):
    run = _run(tmp_path)
    (run.path / "tables" / "dftracer-timeline-kernel.json").unlink()
    rows = compute.check_compute(run)
    assert [r["status"] for r in rows] == ["skip"] and "not compared" in rows[0]["detail"]


def test_validate_runs_it():
    """the check is one of the verdict's (the dftracer profile's checks)"""
    assert compute.check_compute in [fn for fn in checks.checks()]
