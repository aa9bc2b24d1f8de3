"""What a verdict may claim (validate.checks: coverage(), run.status, mutants). A verdict names every class of I/O no
passing check compared, each check row saying which classes it compared from what it compared (a PASS with the Log
VFD alone says that I/O outside HDF5 was not compared); an interrupted run or one with a failed launch is never a
PASS; a run made with a kernel mutant never prints a plain PASS."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fidelity.mutants import outcome

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
# the classes no profile of run-tiny (timing, logvfd, dftracer) can see, named here by hand (metrics: its timing.json
# was collected before the per-step inputs of each side's AU were, so metrics.formula.* SKIP)
UNSEEN = {"open_order", "readers", "other_files", "open_flags", "readv", "sync_kernel", "stat", "stat_discovery",
          "generation", "metrics"}


def _copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    (run / "verdict.json").unlink()
    return run


def _validate(run: Path) -> tuple[dict, str, int]:
    p = subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run)], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    return json.loads((run / "verdict.json").read_text()), p.stdout, p.returncode


def _line(out: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith("verdict: "))


def _manifest(run: Path, **changes) -> dict:
    m = json.loads((run / "manifest.json").read_text())
    m.update(changes)
    (run / "manifest.json").write_text(json.dumps(m))
    return m


# run-tiny's DFTracer tables predate process_order: the order of opens by name (open_order) is not compared there
# (tests/test_dftracer.py::test_validate_compares_the_order_of_opens adds it and sees it compared)
@pytest.mark.parametrize("drop,unseen", [
    ((), UNSEEN),
    (("dftracer-dlio.json", "dftracer-kernel.json", "dftracer-timeline-dlio.json", "dftracer-timeline-kernel.json"),
     UNSEEN | {"posix_data", "traced_other", "compute"}),
    (("logvfd-dlio.json", "logvfd-kernel.json", "logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"),
     UNSEEN | {"read_order", "model_reads"}),  # DLIO 2.0.0's counts come from the Log VFD; DFTracer saw the reads
], ids=["every profile", "without DFTracer", "without the Log VFD"])
def test_verdict_names_what_its_profiles_could_not_see(tmp_path, drop, unseen):
    run = _copy(tmp_path)
    for t in drop:
        (run / "tables" / t).unlink()
    v, out, rc = _validate(run)
    assert v["verdict"] == "pass" and rc == 0
    assert {x["io"] for x in v["not_compared"]} == unseen
    for x in v["not_compared"]:  # printed, short: the class's label, grouped by what would compare it
        assert x["label"] in out and len(x["label"]) <= 60
    assert all(len(ln) <= 200 for ln in out.splitlines() if "not compared:" in ln), out


def test_a_row_declares_its_own_classes_and_only_known_ones(tmp_path):
    """A new check's row says what it compared ("compared"): it covers that class; a SKIP claims nothing, whatever it
    says; a class CLASSES does not know stops validation naming the check. Negative control: the same row without
    its declaration leaves the class not compared."""
    from validate import checks
    run = checks.Run(_copy(tmp_path))
    for declared, status, seen in (("open_flags", "pass", True), (None, "pass", False), ("open_flags", "skip", False)):
        rows = [{"name": "strace.flags", "status": status, "required": True,
                 **({"compared": [declared]} if declared else {})}]
        checks.declare_compared(run, rows)
        assert ("open_flags" not in {x["io"] for x in checks.not_compared(run, rows)}) is seen
    with pytest.raises(KeyError, match="strace.flags"):
        checks.declare_compared(run, [{"name": "strace.flags", "status": "pass", "compared": ["flagz"]}])


def test_a_class_whose_check_failed_names_the_check_not_a_profile(tmp_path):
    """A class compared only by a FAILing row is still not shown equal: not_compared keeps it, and says that check
    must pass (not which profile would compare it: it ran). Negative control: the same row passing covers it."""
    from validate import checks
    run = checks.Run(_copy(tmp_path))
    for status, listed in (("fail", True), ("pass", False)):
        rows = [{"name": "dftracer.order.rank0", "status": status, "required": True, "expected": 8}]
        checks.declare_compared(run, rows)
        got = {x["io"]: x["needs"] for x in checks.not_compared(run, rows)}
        assert ("readers" in got) is listed
        if listed:
            assert got["readers"] == got["open_order"] == "dftracer.order.rank0 to pass: compared, and FAILed"


def test_checkpoint_writes_unseen_without_a_tracer(tmp_path):
    run = _copy(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m["workload"]["config"]["workflow"]["checkpoint"] = True
    (run / "manifest.json").write_text(json.dumps(m))
    for t in ("dftracer-dlio.json", "dftracer-kernel.json"):
        (run / "tables" / t).unlink()
    v, _, _ = _validate(run)
    assert "checkpoint_writes" in {x["io"] for x in v["not_compared"]}


def test_compute_is_no_class_of_a_workload_that_computes_nothing(tmp_path):
    """imagenet_files (computation_time 0) at 102,400 files listed "compute emulation" as not compared, naming
    DFTracer, which both sides ran: with nothing to compute the class does not apply. The negative control is the
    same run computing (run-tiny as recorded) without DFTracer: compute is named."""
    run = _copy(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m["workload"]["config"]["train"]["computation_time"] = 0
    (run / "manifest.json").write_text(json.dumps(m))
    for side in ("dlio", "kernel"):
        for t in (f"dftracer-{side}.json", f"dftracer-timeline-{side}.json"):
            (run / "tables" / t).unlink()
    v, _, _ = _validate(run)
    assert "compute" not in {x["io"] for x in v["not_compared"]}
    assert next(r for r in v["checks"] if r["name"] == "compute")["status"] == "skip"


def test_a_multiset_alone_does_not_claim_the_order(tmp_path):
    """Without the read_threads=0 launches only logvfd.multiset.* compares HDF5 reads: "each rank's reads in order"
    is not compared. Negative control: the run as made compares it (logvfd.sequence.rt0.*)."""
    run = _copy(tmp_path)
    v, _, _ = _validate(run)
    assert "read_order" not in {x["io"] for x in v["not_compared"]}
    for t in ("logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"):
        (run / "tables" / t).unlink()
    v, _, _ = _validate(run)
    rows = {c["name"]: c for c in v["checks"]}
    assert rows["logvfd.multiset.rank0"]["status"] == "pass"
    assert rows["logvfd.multiset.rank0"]["compared"] == ["data_reads"]
    assert "read_order" in {x["io"] for x in v["not_compared"]}


def _no_reads(run: Path) -> None:
    """Every data file's reads taken out of both sides' DFTracer tables (as an O_DIRECT read that DFTracer 2.2.0 does
    not see: opens and closes equal, no read on either side), the Log VFD tables dropped."""
    for side in ("dlio", "kernel"):
        p = run / "tables" / f"dftracer-{side}.json"
        t = json.loads(p.read_text())
        for row in t["files"]["files"].values():
            row.update(reads=0, bytes=0, accesses={})
            row["calls"] = {c: n for c, n in row.get("calls", {}).items() if "read" not in c}
        p.write_text(json.dumps(t))
    for t in ("logvfd-dlio.json", "logvfd-kernel.json", "logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"):
        (run / "tables" / t).unlink(missing_ok=True)


def test_an_empty_compared_set_claims_nothing(tmp_path):
    """dftracer.per_file passes on files opened and never read, but claims no data-file read: "data-file reads" is
    named as not compared. Negative control: with the reads in place it claims them."""
    run = _copy(tmp_path)
    for t in ("logvfd-dlio.json", "logvfd-kernel.json", "logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"):
        (run / "tables" / t).unlink()
    v, _, _ = _validate(run)
    assert {c["name"]: c for c in v["checks"]}["dftracer.per_file"]["compared"] == ["data_reads", "posix_data"]
    assert "data_reads" not in {x["io"] for x in v["not_compared"]}
    _no_reads(run)
    v, _, _ = _validate(run)
    row = {c["name"]: c for c in v["checks"]}["dftracer.per_file"]
    assert row["status"] == "pass" and row["compared"] == ["posix_data"]
    assert "data_reads" in {x["io"] for x in v["not_compared"]}


@pytest.mark.parametrize("plant,reason", [
    ("interrupted", "run interrupted, not complete"),
    ("failed-step", "launches failed or never ran: kernel.logvfd-rt0"),
    ("launches-gone", "launches failed or never ran: dlio.logvfd-rt0, kernel.logvfd-rt0"),
])
def test_an_incomplete_run_is_never_a_pass(tmp_path, plant, reason):
    """The issue's run: both read_threads=0 launches gone and the status `interrupted` (or the harness's record of a
    failed launch, or the launches gone under a status `complete`) FAILs run.status, the verdict line names why.
    Negative control: the run as made PASSes."""
    run = _copy(tmp_path)
    v, out, rc = _validate(run)
    assert v["verdict"] == "pass" and rc == 0 and {c["name"]: c for c in v["checks"]}["run.status"]["status"] == "pass"
    m = json.loads((run / "manifest.json").read_text())
    if plant in ("interrupted", "launches-gone"):  # gone: the status left "complete", the profiles' plan has them
        steps = {n: r for n, r in m["steps"].items() if not n.endswith(".logvfd-rt0")}
        _manifest(run, steps=steps, status="interrupted" if plant == "interrupted" else "complete", failed_steps=[])
        for t in ("logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"):
            (run / "tables" / t).unlink()
    else:
        _manifest(run, failed_steps=["kernel.logvfd-rt0"])  # (its status left "complete": the list alone fails it)
    v, out, rc = _validate(run)
    assert v["verdict"] == "fail" and rc == 1 and "run.status" in v["failed"]
    assert reason in v["reasons"][0]
    assert _line(out).startswith(f"verdict: FAIL ({reason}")


@pytest.mark.parametrize("where", ["output.json", "manifest"])
def test_a_mutant_run_never_prints_a_plain_pass(tmp_path, where):
    """A kernel mutant named by a kernel launch's output.json (or the manifest's copy of it): the verdict line reads
    PASS WITH MUTANT <name> and exits 1, verdict.json names it, and `make mutants` still counts it a survivor (its
    verdict is not "fail"); a mutant that fails a check FAILs naming it. Negative control: without it, a plain PASS."""
    run = _copy(tmp_path)
    v, out, rc = _validate(run)
    assert v["mutant"] is None and _line(out).startswith("verdict: PASS  (") and rc == 0
    if where == "output.json":
        o = run / "kernel" / "logvfd" / "out" / "output.json"
        o.parent.mkdir(parents=True)
        o.write_text(json.dumps({"mutant": "rank-seed", "ranks": 2}))
    else:
        _manifest(run, vol={"kernel_launches": {"logvfd": {"stack": ["native"], "mutant": "rank-seed"}}})
    v, out, rc = _validate(run)
    assert v["mutant"] == "rank-seed" and v["verdict"] == "pass" and rc == 1
    assert _line(out).startswith("verdict: PASS WITH MUTANT rank-seed (")
    assert outcome(True, v["verdict"], rc, []) == "survived"
    t = json.loads((run / "tables" / "logvfd-kernel.json").read_text())
    t["ranks"]["0"]["raw_reads"] += 1
    (run / "tables" / "logvfd-kernel.json").write_text(json.dumps(t))
    v, out, rc = _validate(run)
    assert v["verdict"] == "fail" and rc == 1 and "mutant rank-seed injected" in _line(out)
    assert outcome(True, v["verdict"], rc, ["counts.kernel.logvfd.rank0"]) == "killed"


def test_report_first_screen_names_the_mutant(tmp_path):
    """The report's Verdict section (its first screen) says which mutant. Negative control: the run as made does not."""
    from reports.__main__ import render
    for mutant in (None, "rank-seed"):
        run = _copy(tmp_path / str(mutant))
        if mutant:
            _manifest(run, vol={"kernel_launches": {"logvfd": {"stack": ["native"], "mutant": mutant}}})
        _validate(run)
        head = "\n".join(render(run).read_text().splitlines()[:40])
        assert ("**Verdict: PASS WITH MUTANT rank-seed" in head) is bool(mutant), head
        assert ("**Mutant injected**: this run's kernel ran with the mutant `rank-seed`" in head) is bool(mutant)
