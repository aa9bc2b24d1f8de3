"""SIDES=kernel (harness --sides kernel): only the kernel's launches run, and validation judges the kernel against the
analytic model alone. Its PASS must never read as equivalence with DLIO: every side-by-side check is a SKIP saying
why, the verdict's not_compared names DLIO's I/O first, and the printed verdict is never a bare PASS."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.workload import load

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
MODEL_ONLY = ("dlio.version", "run.status", "coverage.kernel_model", "steps.kernel.", "vol.kernel", "counts.kernel.",
              "counts.checkpoints", "counts.checkpoint_io.kernel", "counts.dftracer.kernel.", "counts.darshan.kernel",
              "darshan.analyses", "metrics.formula.kernel")


def _kernel_only(tmp_path: Path, mark: bool = True) -> Path:
    """run-tiny as a kernel-only run would leave it: no DLIO step, no DLIO table; mark=False leaves out the manifest's
    "sides" (a planted harness that forgot to record the run's scope)."""
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    (run / "verdict.json").unlink()
    m = json.loads((run / "manifest.json").read_text())
    m["steps"] = {n: r for n, r in m["steps"].items() if n.startswith("kernel.")}
    if mark:
        m["sides"] = ["kernel"]
    (run / "manifest.json").write_text(json.dumps(m))
    for t in (run / "tables").glob("*-dlio.json"):
        t.unlink()
    return run


def _validate(run: Path) -> tuple[dict, str, int]:
    p = subprocess.run([sys.executable, "-m", "validate", str(run)], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    return json.loads((run / "verdict.json").read_text()), p.stdout, p.returncode


def assert_kernel_only_verdict(v: dict, out: str) -> None:
    """What a kernel-only PASS must say: DLIO named as not compared, first; the verdict line qualified; no side-by-side
    check counted as a pass."""
    assert v["not_compared"] and v["not_compared"][0]["io"] == "dlio", v["not_compared"]
    assert "kernel-only run" in v["not_compared"][0]["what"]
    line = next(ln for ln in out.splitlines() if ln.startswith("verdict: "))
    assert line.startswith("verdict: PASS (kernel against the analytic model only, not DLIO)"), line
    side_by_side = [c["name"] for c in v["checks"] if c["status"] != "skip" and not c["name"].startswith(MODEL_ONLY)]
    assert not side_by_side, side_by_side


def test_kernel_only_verdict_is_the_model_only_and_says_so(tmp_path):
    v, out, rc = _validate(_kernel_only(tmp_path))
    assert rc == 0 and v["verdict"] == "pass" and v["scope"] == "kernel-model" and v["sides"] == ["kernel"]
    assert_kernel_only_verdict(v, out)
    passed = {c["name"] for c in v["checks"] if c["status"] == "pass"}
    # the model checks ran and passed: opens, raw reads and bytes per rank, both Log VFD launches
    assert {f"counts.kernel.{p}.rank{r}" for p in ("logvfd", "logvfd-rt0") for r in (0, 1)} <= passed
    skipped = [c for c in v["checks"] if c["status"] == "skip" and c["name"].startswith(("logvfd.", "dataset.",
                                                                                          "dftracer."))]
    assert skipped and all(c["detail"] == "kernel-only run: no DLIO side" for c in skipped)
    assert "not compared: DLIO's I/O (kernel-only run" in out
    unseen = [x["io"] for x in v["not_compared"]]
    assert unseen[0] == "dlio" and "model_reads" not in unseen  # not "needs the Log VFD profile": it ran
    # every other class is named too, needing first what the kernel-only run lacks: the other side
    assert {"data_reads", "read_order", "posix_data", "open_flags"} <= set(unseen)
    assert {x["needs"] for x in v["not_compared"]} == {"a side-by-side run (SIDES=both, the default)"}
    assert {c["name"]: c for c in v["checks"]}["coverage.kernel_model"]["status"] == "pass"


def _timing_only(run: Path, checkpoint: bool) -> None:
    """The kernel-only run as `PROFILES=timing` leaves it (no Log VFD, no DFTracer launch or table); checkpoint: the
    workload checkpoints and every training launch wrote the model's checkpoint files (counts.checkpoints passes)."""
    from profiles import checkpoint_dir
    from validate import model
    m = json.loads((run / "manifest.json").read_text())
    m["steps"] = {n: r for n, r in m["steps"].items() if n.split(".", 1)[1].startswith(("generate", "timing"))}
    m["profiles"] = ["timing"]
    m["workload"]["config"]["workflow"]["checkpoint"] = checkpoint
    if checkpoint:  # a checkpoint after each of its 2 epochs, of a model small enough to plant (unet3d_checkpoint's)
        m["workload"]["config"]["checkpoint"].update(checkpoint_after_epoch=1, epochs_between_checkpoints=1,
                                                     model_size=4991531, layer_parameters=[173, 247402])
    (run / "manifest.json").write_text(json.dumps(m))
    for t in ("logvfd-kernel.json", "logvfd-rt0-kernel.json", "dftracer-kernel.json"):
        (run / "tables" / t).unlink()
    want = model.checkpoint_files(m["workload"]["config"], m["ranks"], "2.0.0") if checkpoint else {}
    for name in m["steps"]:
        for rel, size in want.items():
            f = checkpoint_dir(run / "kernel" / name.split(".", 1)[1]) / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            with f.open("wb") as out:
                out.truncate(size)


@pytest.mark.parametrize("checkpoint", [False, True], ids=["timing only", "timing only, checkpoints"])
def test_kernel_only_pass_needs_the_data_reads_against_the_model(tmp_path, checkpoint):
    """A kernel-only run whose profiles compared no data read with the model (PROFILES=timing: with checkpoints it
    passed on counts.checkpoints alone) FAILs coverage.kernel_model, the verdict line naming what is missing.
    Negative control: the Log VFD's counts in place, the same run PASSes."""
    run = _kernel_only(tmp_path)
    _timing_only(run, checkpoint)
    v, out, rc = _validate(run)
    rows = {c["name"]: c for c in v["checks"]}
    if checkpoint:
        assert rows["counts.checkpoints"]["status"] == "pass"
    assert rc == 1 and v["verdict"] == "fail" and v["failed"] == ["coverage.kernel_model"], v["failed"]
    line = next(ln for ln in out.splitlines() if ln.startswith("verdict: "))
    assert line.startswith("verdict: FAIL (kernel against the analytic model only, not DLIO; kernel-only: no check "
                           "compared data reads against the model)"), line
    for t in ("logvfd-kernel.json", "logvfd-rt0-kernel.json"):
        shutil.copy(RUN_TINY / "tables" / t, run / "tables" / t)
    v, out, rc = _validate(run)
    assert rc == 0 and v["verdict"] == "pass", v["failed"]


def test_unmarked_run_is_no_pass_and_the_check_catches_it(tmp_path):
    """Negative control: the same kernel-only tables without the manifest's scope read as a side-by-side run whose
    DLIO launches never ran: run.status FAILs naming them (it was a plain PASS, the DLIO-side checks skipping for want
    of tables); the assertion above rejects that verdict."""
    v, out, rc = _validate(_kernel_only(tmp_path, mark=False))
    assert rc == 1 and v["verdict"] == "fail" and v["scope"] == "sides" and v["failed"] == ["run.status"]
    assert "launches failed or never ran: dlio.generate" in v["reasons"][0]
    with pytest.raises(AssertionError):
        assert_kernel_only_verdict(v, out)


@pytest.mark.parametrize("table,plant", [
    ("logvfd-kernel.json", "drop-read"), ("logvfd-rt0-kernel.json", "extra-read")])
def test_kernel_only_run_fails_its_counts_on_a_planted_divergence(tmp_path, table, plant):
    """A kernel-only run whose kernel read one raw block fewer (or one more) than the model FAILs counts.kernel.*."""
    run = _kernel_only(tmp_path)
    p = run / "tables" / table
    t = json.loads(p.read_text())
    r0 = t["ranks"]["0"]
    r0["raw_reads"] += -1 if plant == "drop-read" else 1
    p.write_text(json.dumps(t))
    v, out, rc = _validate(run)
    assert rc == 1 and v["verdict"] == "fail"
    prof = table.removesuffix("-kernel.json")
    assert f"counts.kernel.{prof}.rank0" in v["failed"]
    assert "verdict: FAIL" in out


def test_every_model_row_failing_is_a_comparison_not_a_missing_one(tmp_path):
    """Every rank of both Log VFD launches reads one raw block more and one open fewer than the model: each
    counts.kernel.* row FAILs,
    and coverage.kernel_model does not (the reads were compared; the live Darshan mutants' runs, whose one model row
    failed, showed it failing on top of it)."""
    run = _kernel_only(tmp_path)
    for table in ("logvfd-kernel.json", "logvfd-rt0-kernel.json"):
        p = run / "tables" / table
        t = json.loads(p.read_text())
        for r in t["ranks"].values():
            r["raw_reads"] += 1
            r["blocks"].pop()            # and its last open, seen per phase too
            r["opens"] -= 1
        p.write_text(json.dumps(t))
    v, out, rc = _validate(run)
    passed = [c["name"] for c in v["checks"] if c["name"].startswith("counts.kernel.") and c["status"] == "pass"]
    assert rc == 1 and v["failed"] and not passed, (v["failed"], passed)
    assert all(n.startswith("counts.kernel.") for n in v["failed"]), v["failed"]


def test_report_first_screen_names_the_kernel_only_scope(tmp_path):
    """The rendered report says it near its top (the verdict section), not only in verdict.json. Negative control: the
    unmarked run's report reads a plain PASS."""
    from reports.__main__ import render
    for mark, want in ((True, True), (False, False)):
        run = _kernel_only(tmp_path / str(mark), mark)
        _validate(run)
        head = "\n".join(render(run).read_text().splitlines()[:40])
        assert ("**Verdict: PASS (kernel against the analytic model only, not DLIO)**" in head) is want, head
        assert ("DLIO's I/O (kernel-only run: checked against the analytic model only)" in head) is want


def _workload(tmp_path):
    dl = tmp_path / "dlio_workloads"
    dl.mkdir()
    (dl / "base_wl.yaml").write_text(yaml.safe_dump({
        "model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
        "reader": {"batch_size": 2, "read_threads": 4}, "workflow": {"checkpoint": False}}))
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "w.yaml").write_text(yaml.safe_dump({"base": "base_wl", "scales": {"tiny": {}}}))
    return load("w", "tiny", dl, refs)


def test_plan_kernel_only_launches_the_kernel_alone_on_its_own_data(tmp_path):
    """--sides kernel: no DLIO launch; the Log VFD launches (which read the other side's dataset side by side) read the
    kernel's own. Negative control: the default plan has DLIO launches and the cross-read."""
    from harness import plan as hplan
    wl = _workload(tmp_path)
    rd = tmp_path / "run"
    plan = hplan.build(wl, hplan.Options(profiles=["timing", "logvfd"]), tmp_path / "venv")
    both = {s.name: s for s in hplan.launches(rd, plan)}
    assert any(s.side == "dlio" for s in both.values())
    assert str(rd / "dlio" / "data") in " ".join(both["kernel.logvfd"].argv)
    opt = hplan.Options(profiles=["timing", "logvfd"], sides=hplan.SIDE_CHOICES["kernel"])
    steps = {s.name: s for s in hplan.launches(rd, hplan.build(wl, opt, tmp_path / "venv"))}
    assert steps and all(s.side == "kernel" for s in steps.values())
    assert {"kernel.generate", "kernel.timing", "kernel.logvfd", "kernel.logvfd-rt0"} <= set(steps)
    for st in steps.values():
        assert str(rd / "dlio") not in " ".join(st.argv), st.name


def test_sides_option_refuses_a_bad_value():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--sides", "dlio"], cwd=REPO, capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 2 and "SIDES=dlio (--sides): invalid choice (use both or kernel)" in p.stderr


VENV = os.environ.get("H5DLIO_DLIO_VENV", "")


def _make_validate(tmp: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    """`make validate SIDES=kernel PROFILES=logvfd` of tiny unet3d at 2 ranks into tmp (the DLIO venv only for the
    probe that picks the model's release)."""
    p = subprocess.run(["make", "--no-print-directory", "validate", "WORKLOAD=unet3d", "SCALE=tiny", "RANKS=2",
                        "SIDES=kernel", "PROFILES=logvfd", f"RUNS_DIR={tmp / 'runs'}"],
                       cwd=REPO, capture_output=True, text=True, timeout=1800, env={**os.environ, **(env or {})})
    runs = list((tmp / "runs").iterdir()) if (tmp / "runs").is_dir() else []
    assert len(runs) == 1, p.stdout[-3000:] + p.stderr[-3000:]  # the one run this invocation made
    return p, runs[0]


@pytest.mark.dlio
@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, "skip-read", "extra-read"])
def test_tiny_kernel_only_make_validate(tmp_path, mutant):
    """A real kernel-only run: PASS qualified as model-only, no DLIO launch; with a read mutant (one sample of rank 0
    not read, or read twice) the same run FAILs its counts.kernel checks for rank 0 and only there."""
    if not VENV or not Path(VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}): the probe picks the model's release")
    p, run = _make_validate(tmp_path, {"H5DLIO_MUTATE": mutant} if mutant else None)
    m = json.loads((run / "manifest.json").read_text())
    assert m["sides"] == ["kernel"] and m["steps"] and all(n.startswith("kernel.") for n in m["steps"])
    assert not (run / "dlio").exists()
    v = json.loads((run / "verdict.json").read_text())
    if mutant is None:
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert_kernel_only_verdict(v, p.stdout)
        return
    assert p.returncode != 0 and v["verdict"] == "fail" and "verdict: FAIL" in p.stdout
    bad = {c["name"] for c in v["checks"] if c["status"] == "fail"}
    assert {"counts.kernel.logvfd.rank0", "counts.kernel.logvfd-rt0.rank0"} <= bad, bad
    assert not {n for n in bad if "rank1" in n or n.startswith("steps.")}, bad
