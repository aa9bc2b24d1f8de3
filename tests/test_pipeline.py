"""The one pipeline entry (pipeline/: `python -m pipeline`, what `make validate` runs): its exit statuses, that it
validates and shows only the run it made (no pointer file), its refusals of bad input before anything runs, and the
run directory line callers in other processes read. Stand-ins for the harness and validate steps: no launch."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pipeline
from pipeline.__main__ import main

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"


@pytest.fixture
def steps(monkeypatch, tmp_path):
    """Stand-ins: the harness returns `harness` (status, run directory), validate returns `validate` (or raises
    it); `calls` records which steps ran, in order."""
    run = tmp_path / "runs" / "unet3d-tiny-made"
    shutil.copytree(RUN_TINY, run)
    st = {"harness": (0, run), "validate": 0, "calls": [], "run": run}

    def fake_run(argv):
        st["calls"].append(("harness", list(argv)))
        return st["harness"]

    def fake_validate(rd, quiet=False, darshan_analyses=None):
        st["calls"].append(("validate", rd, darshan_analyses))
        if isinstance(st["validate"], BaseException):
            raise st["validate"]
        return st["validate"]
    monkeypatch.setattr(pipeline, "run", fake_run)
    monkeypatch.setattr(pipeline, "validate", fake_validate)
    return st


def _ran(st) -> list[str]:
    return [c[0] for c in st["calls"]]


@pytest.mark.parametrize("opt,value,words", [
    ("--darshan-analyses", "some", ["DARSHAN_ANALYSES=some", "not one of auto, all, none"]),
    ("--dlio-quiet-map", "yes", ["DLIO_QUIET_MAP=yes", "not 0 or 1"])])
def test_bad_option_exits_2_before_anything_runs(steps, capsys, opt, value, words):
    assert main([opt, value, "--workload", "unet3d"]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert steps["calls"] == []  # neither the harness nor validate ran
    assert main([opt, {"--darshan-analyses": "none", "--dlio-quiet-map": "1"}[opt], "--no-report"]) == 0  # control


def test_quiet_map_and_darshan_analyses_reach_their_steps(steps):
    assert main(["--dlio-quiet-map", "1", "--darshan-analyses", "all", "--no-report", "--workload", "bert"]) == 0
    (_, argv), (_, rd, how) = steps["calls"]
    assert argv == ["--workload", "bert", "--dlio-quiet-index-map"] and rd == steps["run"] and how == "all"
    steps["calls"].clear()
    assert main(["--dlio-quiet-map", "0", "--no-report"]) == 0
    assert "--dlio-quiet-index-map" not in steps["calls"][0][1]


def test_a_pass_renders_the_report_and_prints_its_path_last(steps, capsys):
    assert main([]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == str(steps["run"] / "report" / "report.md") and Path(out[-1]).exists()


@pytest.mark.parametrize("harness_rc", [2, 130, 143])
def test_a_harness_that_stops_ends_with_its_status_and_validates_nothing(steps, capsys, harness_rc):
    steps["harness"] = (harness_rc, None)
    assert main([]) == harness_rc
    assert _ran(steps) == ["harness"] and "report" not in capsys.readouterr().out


def test_no_run_directory_named_is_a_failure_not_an_earlier_run(steps, capsys):
    steps["harness"] = (0, None)
    assert main([]) == 1
    assert _ran(steps) == ["harness"] and "named no run directory" in capsys.readouterr().err


@pytest.mark.parametrize("harness_rc,validate_rc,report_ok,status", [
    (0, 0, True, 0), (1, 0, True, 1), (0, 1, True, 1), (0, 0, False, 1), (1, 2, False, 1), (0, 2, True, 2)])
def test_status_of_a_pass(steps, capsys, monkeypatch, harness_rc, validate_rc, report_ok, status):
    """A failed launch still gets its verdict and report (what failed is said there); the status is the harness's,
    else validate's, else the report's (make validate's, as tests/test_make_status.py holds)."""
    steps["harness"], steps["validate"] = (harness_rc, steps["run"]), validate_rc

    def render(rd):  # a stand-in: the real rendering and its failure are test_a_pass_... and test_make_status's
        if not report_ok:
            raise OSError("planted: the report folder cannot be made")
        return rd / "report" / "report.md"
    monkeypatch.setattr("reports.__main__.render", render)
    assert main([]) == status
    cap = capsys.readouterr()
    assert _ran(steps) == ["harness", "validate"]
    assert (f"the report of {steps['run']} was not rendered" in cap.err) == (not report_ok), cap.err[-2000:]


@pytest.mark.parametrize("stop,status", [(KeyboardInterrupt(), 130), ("terminated", 143)])
def test_interrupted_during_validate(steps, stop, status):
    from harness.__main__ import Terminated
    steps["validate"] = Terminated() if stop == "terminated" else stop
    assert main([]) == status


def test_async_stacks_run_the_vol_kernel(monkeypatch, tmp_path):
    """VOL=async*: the kernel build/.vol-kernel names (H5DLIO_KERNEL_BIN, set before the harness is imported);
    without it: bad input naming VOL and the make target; a kernel the caller named is kept; native: untouched."""
    monkeypatch.setenv("H5DLIO_KERNEL_BIN", "")   # recorded first, so what kernel_env sets is undone after the test
    monkeypatch.delenv("H5DLIO_KERNEL_BIN")
    monkeypatch.setattr(pipeline, "VOL_KERNEL", tmp_path / ".vol-kernel")
    with pytest.raises(pipeline.BadInput, match=r"VOL=async-prefetch: .*make vol-kernel"):
        pipeline.kernel_env("async-prefetch")
    pipeline.kernel_env("native")
    pipeline.kernel_env(None)
    assert "H5DLIO_KERNEL_BIN" not in __import__("os").environ
    (tmp_path / ".vol-kernel").write_text("/opt/ts/h5dlio\n")
    pipeline.kernel_env("async")
    assert __import__("os").environ["H5DLIO_KERNEL_BIN"] == "/opt/ts/h5dlio"
    monkeypatch.setenv("H5DLIO_KERNEL_BIN", "/mine/h5dlio")
    pipeline.kernel_env("async")
    assert __import__("os").environ["H5DLIO_KERNEL_BIN"] == "/mine/h5dlio"


def test_named_run_reads_the_harness_line():
    out = "harness: profile x skipped: y\nharness: run directory /r/unet3d-tiny-1\nstep 1\nharness: complete: /r/u\n"
    assert pipeline.named_run(out) == Path("/r/unet3d-tiny-1")
    assert pipeline.named_run("harness: error: WORKLOAD=nosuch: unknown\n") is None  # refused: no run named


@pytest.mark.parametrize("harness,validate_rc,want", [
    ((0, "run"), 0, {"status": 0, "harness": 0, "validate": 0}),
    ((1, "run"), 2, {"status": 1, "harness": 1, "validate": 2}),
    ((0, "run"), 1, {"status": 1, "harness": 0, "validate": 1}),
    ((130, None), 0, {"status": 130, "harness": 130, "validate": None, "run": None})])
def test_outcome_file_holds_each_steps_status_and_time(steps, tmp_path, harness, validate_rc, want):
    """--outcome FILE (fidelity.mutants reads it): each step's own status, not only the pass's (a failed launch's
    run still validated: validate's status kept beside the harness's; a stopped harness: validate null), the run
    directory, and a wall time per step that ran (null for one that did not)."""
    steps["harness"] = (harness[0], steps["run"] if harness[1] else None)
    steps["validate"] = validate_rc
    f = tmp_path / "o" / "outcome.json"
    f.parent.mkdir()
    assert main(["--no-report", "--outcome", str(f)]) == want["status"]
    o = __import__("json").loads(f.read_text())
    assert {k: o[k] for k in want} == {**want, **({"run": None} if harness[1] is None else {})}
    if harness[1]:
        assert o["run"] == str(steps["run"])
    assert isinstance(o["harness_s"], float) and (o["validate_s"] is None) == (want["validate"] is None)
    assert o["report"] is None and o["report_s"] is None  # --no-report


@pytest.fixture
def paper_steps(monkeypatch, tmp_path):
    """make paper's steps (python -m pipeline paper) as stand-ins: each returns the planted status of the first
    planted key found in its argv (st["rc"]: word -> status), else 0; st["ran"] records each step's argv."""
    import pipeline.paper as pp
    st = {"rc": {}, "ran": []}

    def fake(args):
        st["ran"].append(args)
        return next((rc for w, rc in st["rc"].items() if w in args), 0)
    monkeypatch.setattr(pp, "step", fake)
    argv = ["paper", str(tmp_path / "paper-1"), "--scale", "tiny", "--ranks", "2", "--repeat", "2",
            "--scaling-ranks", "1,2", "--workloads", "thesis-a-rt0:timing thesis-b:timing,logvfd",
            "--scaling", "thesis-d", "--dlio-venv", "/v"]
    return st, argv


def _what(ran: list[list[str]]) -> list[str]:
    return [" ".join(a[:3]) if a[0] == "harness" else a[0] if a[0] == "reports" else a[a.index("--workload") + 1]
            for a in ran]


def test_paper_runs_each_step_once_in_order(paper_steps, capsys, tmp_path):
    st, argv = paper_steps
    assert main(argv) == 0
    assert _what(st["ran"]) == ["harness sweep init", "thesis-a-rt0", "thesis-b", "harness sweep scaling", "reports"]
    b = st["ran"][2]
    assert b[:3] == ["pipeline", "--no-report", "--quiet"] and b[b.index("--profiles") + 1] == "timing,logvfd"
    assert b[b.index("--runs-dir") + 1] == str(tmp_path / "paper-1" / "runs")
    assert "failed" not in capsys.readouterr().out


@pytest.mark.parametrize("planted,status,ran,failed", [
    ({"thesis-b": 1}, 1, 5, "thesis-b"),                  # a failed pass: the report still rendered, then exit 1
    ({"thesis-a-rt0": 2, "scaling": 1}, 1, 5, "thesis-a-rt0 scaling"),
    ({"thesis-a-rt0": 130}, 130, 2, None),               # interrupted: nothing after it
    ({"scaling": 130}, 130, 4, None),
    ({"init": 2}, 2, 1, None),                           # sweep init's status; nothing runs
    ({"thesis-b": 1, "reports": 3}, 3, 5, None)])         # the report's status when it is not rendered
def test_paper_exit_status(paper_steps, capsys, planted, status, ran, failed):
    st, argv = paper_steps
    st["rc"] = planted
    assert main(argv) == status
    assert len(st["ran"]) == ran
    out = capsys.readouterr().out
    if failed:
        assert out.strip().splitlines()[-1].endswith(f"; failed: {failed}"), out
    else:
        assert "failed:" not in out


def test_paper_refuses_a_workload_without_profiles(paper_steps, capsys):
    st, argv = paper_steps
    argv[argv.index("--workloads") + 1] = "thesis-a-rt0:timing thesis-b"
    assert main(argv) == 2
    assert "PAPER_WORKLOADS=thesis-a-rt0:timing thesis-b: 'thesis-b' is not WORKLOAD:PROFILES" in \
        capsys.readouterr().err
    assert st["ran"] == []


def test_paper_step_gives_the_process_status_and_130_when_interrupted(monkeypatch):
    import pipeline.paper as pp
    assert pp.step(["json.tool", "/no/such/file.json"]) != 0          # a real process that fails
    assert pp.step(["json.tool", "--help"]) == 0

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(pp.subprocess, "run", interrupted)
    assert pp.step(["json.tool", "--help"]) == 130
