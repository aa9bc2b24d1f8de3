"""The make targets users type, with one bad variable each, after a previous run that passed.

Each case runs the real target (`make validate`, `make fidelity-run`, `make report`, `make build`) in this checkout
with `RUNS_DIR` holding a prepared earlier run whose verdict passes (a copy of tests/data/run-tiny). A bad
variable must end the invocation non-zero with one error naming the variable, and must not validate, show or
render that earlier run: no check lines, no verdict, no report path. Nothing is launched: every case fails before
the harness creates a run (the runs folder holds the earlier run alone afterwards)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
STAMPS = (REPO / "build" / ".dlio-venv", REPO / "build" / ".hdf5-prefix", REPO / ".venv" / ".stamp")

# (id, make target and variables, words the error must hold)
CASES = [
    ("WORKLOAD unknown", ["validate", "WORKLOAD=nosuch"], ["WORKLOAD=nosuch", "known:"]),
    ("WORKLOAD missing file", ["validate", "WORKLOAD=/nonexistent/w.yaml"], ["WORKLOAD=/nonexistent/w.yaml"]),
    ("SCALE unknown", ["validate", "SCALE=huge"], ["SCALE=huge", "tiny"]),
    ("RANKS zero", ["validate", "RANKS=0"], ["RANKS=0", "at least 1"]),
    ("RANKS not a number", ["validate", "RANKS=abc"], ["RANKS=abc", "not a whole number"]),
    ("RANKS more than samples", ["validate", "RANKS=4096"], ["4096 ranks", "refused by the kernel"]),
    ("PROFILES unknown", ["validate", "PROFILES=nosuch"], ["PROFILES=nosuch", "known:"]),
    ("RANKS more DLIO ranks than memory holds", ["validate", "SCALE=field", "RANKS=250"],
     ["does not fit this machine", "250 DLIO ranks", "ranks fit here (RANKS)"]),
    ("REPEAT zero", ["validate", "REPEAT=0"], ["REPEAT=0", "at least 1"]),
    ("LAUNCHER unknown", ["validate", "LAUNCHER=pbs"], ["LAUNCHER=pbs", "invalid choice"]),
    ("VOL unknown", ["validate", "VOL=asyncc"], ["VOL=asyncc", "unknown connector stack", "known:"]),
    ("DARSHAN_ANALYSES unknown", ["validate", "DARSHAN_ANALYSES=some"],
     ["DARSHAN_ANALYSES=some", "not one of auto, all, none"]),
    ("DLIO_QUIET_MAP unknown", ["validate", "DLIO_QUIET_MAP=yes"], ["DLIO_QUIET_MAP=yes", "not 0 or 1"]),
    ("REPEAT not a number", ["validate", "REPEAT=twice"], ["REPEAT=twice", "not a whole number"]),
    ("COLLECT_JOBS zero", ["validate", "COLLECT_JOBS=0"], ["COLLECT_JOBS=0", "at least 1"]),
    ("DLIO neither version nor checkout", ["validate", "DLIO=nosuch"], ["DLIO=nosuch", "neither a version"]),
    ("DLIO a folder that is not DLIO", ["validate", "DLIO=/tmp"], ["DLIO=/tmp", "not a DLIO source checkout"]),
    ("HDF5_DIR not an install", ["validate", "HDF5_DIR=/nonexistent/hdf5"], ["HDF5_DIR=/nonexistent/hdf5"]),
    ("DARSHAN_PREFIX not an install", ["validate", "DARSHAN_PREFIX=/nonexistent/darshan"],
     ["DARSHAN_PREFIX=/nonexistent/darshan", "libdarshan.so"]),
    ("fidelity-run WORKLOAD unknown", ["fidelity-run", "WORKLOAD=nosuch"], ["WORKLOAD=nosuch"]),
    ("fidelity-run RANKS zero", ["fidelity-run", "RANKS=0"], ["RANKS=0"]),
    ("workloads WORKLOADS unknown", ["workloads", "WORKLOADS=nosuch"], ["WORKLOADS=nosuch", "known:"]),
    ("workloads WORKLOADS a thesis configuration", ["workloads", "WORKLOADS=thesis-b"], ["WORKLOADS=thesis-b"]),
    ("workloads RANKS zero", ["workloads", "RANKS=0"], ["RANKS=0", "at least 1"]),
    ("mutants MUTANTS unknown", ["mutants", "MUTANTS=nosuch"], ["MUTANTS=nosuch", "known:"]),
    ("mutants MUTANT_FAMILIES unknown", ["mutants", "MUTANT_FAMILIES=nosuch"], ["MUTANT_FAMILIES=nosuch", "known:"]),
    ("mutants RANKS zero", ["mutants", "RANKS=0"], ["RANKS=0", "at least 1"]),
    ("mutants DLIO a folder that is not DLIO", ["mutants", "DLIO=/tmp"], ["DLIO=/tmp", "not a DLIO source checkout"]),
    ("mutants MUTANT_BASELINES not a run", ["mutants", "MUTANT_BASELINES=pytorch=/nonexistent"],
     ["MUTANT_BASELINES", "pytorch=/nonexistent"]),
    ("audit RESULT missing", ["audit"], ["RESULT=", "is required"]),
    ("audit RESULT not a leaf", ["audit", "RESULT=/nonexistent/leaf"], ["RESULT=/nonexistent/leaf", "not a folder"]),
    ("build HDF5_DIR not an install", ["build", "HDF5_DIR=/nonexistent/hdf5"], ["HDF5_DIR=/nonexistent/hdf5"]),
    ("vol-deps VOL_ASYNC_TGZ missing", ["vol-deps", "VOL_ASYNC_TGZ=/nonexistent/a.tar.gz"],
     ["VOL_ASYNC_TGZ=/nonexistent/a.tar.gz", "no such tarball"]),
    ("darshan-ts DARSHAN_TARBALL missing", ["darshan-ts", "DARSHAN_TARBALL=/nonexistent/d.tar.gz"],
     ["DARSHAN_TARBALL=/nonexistent/d.tar.gz", "no such tarball"]),
    ("report RUN missing", ["report", "RUN=/nonexistent/run"], ["RUN=/nonexistent/run", "no such directory"]),
    ("report RUN not a run", ["report", "RUN=@empty"], ["RUN=", "no manifest.json", "not rendered"]),
    ("report RUN unset", ["report"], ["set RUN="]),
    ("runs ARGS unknown command", ["runs", "ARGS=lsit"], ["'lsit'", "no such command", "known:"]),
    ("runs ARGS unset", ["runs"], ["set ARGS="]),
    ("sizing WORKLOAD unknown", ["sizing", "WORKLOAD=nosuch"], ["WORKLOAD=nosuch", "known:"]),
    ("sizing RANKS_MAX zero", ["sizing", "RANKS_MAX=0"], ["RANKS_MAX=0", ">= 1"]),
    ("sizing RANKS_MAX not a number", ["sizing", "RANKS_MAX=many"], ["RANKS_MAX=many", "not a whole number"]),
    ("sizing DATA not writable", ["sizing", "DATA=/proc/h5dlio-sizing"],
     ["DATA=/proc/h5dlio-sizing", "not a writable folder"]),
    ("runs RUNS_DB no store", ["runs", "ARGS=list", "RUNS_DB=/nonexistent/runs.sqlite"],
     ["/nonexistent/runs.sqlite", "no run store"]),
]


def _env() -> dict:
    """The user's environment: no make state of an enclosing `make test`, no Darshan of the machine."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "DARSHAN_PREFIX")}
    return env


@pytest.fixture(scope="module")
def previous_run(tmp_path_factory) -> Path:
    """A run that passed, as `make validate` left it in its runs folder (with its verdict)."""
    missing = [str(s) for s in STAMPS if not s.exists()]
    if missing:
        pytest.skip(f"the make targets' dependencies are not installed here ({', '.join(missing)}): run `make test`")
    root = tmp_path_factory.mktemp("previous")
    run = root / "runs" / "unet3d-tiny-previous"
    shutil.copytree(RUN_TINY, run)
    return run


def _make(args: list[str], runs: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args, f"RUNS_DIR={runs}"], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=600)


@pytest.mark.dlio
def test_previous_run_passes(previous_run, tmp_path):
    """The control: the prepared run's verdict is a pass and `make report` renders it (so the cases below would
    show it if the targets fell back to it)."""
    out = tmp_path / "report"
    p = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "validate", str(previous_run)], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    p = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "reports", str(previous_run), "--out",
                        str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and (out / "report.md").exists(), p.stderr[-2000:]


VENDORED_TARGETS = {"vol-deps", "darshan-ts"}   # their defaults name ../shared/vendor: @pytest.mark.vendored


@pytest.mark.dlio
@pytest.mark.parametrize("case,args,words", [
    pytest.param(*c, id=c[0], marks=[pytest.mark.vendored] if c[1][0] in VENDORED_TARGETS else []) for c in CASES])
def test_bad_variable_after_a_passing_run(previous_run, tmp_path, case, args, words):
    args = list(args)
    if "RUN=@empty" in args:
        (tmp_path / "empty").mkdir()
        args[args.index("RUN=@empty")] = f"RUN={tmp_path / 'empty'}"
    before = sorted(p.name for p in previous_run.rglob("*"))
    p = _make(args, previous_run.parent)
    out = p.stdout + p.stderr
    assert p.returncode != 0, f"{case}: exit 0 after bad input:\n{out[-3000:]}"
    for w in words:
        assert w in p.stderr, f"{case}: {w!r} not in the error:\n{p.stderr[-3000:]}"
    assert "Traceback" not in out and "skipped" not in out, f"{case}: more than the error:\n{out[-3000:]}"
    assert "PASS" not in out and "verdict" not in out.lower(), f"{case}: an earlier verdict was shown:\n{out[-3000:]}"
    assert str(previous_run) not in out and "report.md" not in out and "report.html" not in out, \
        f"{case}: an earlier run or report was shown:\n{out[-3000:]}"
    assert sorted(p.name for p in previous_run.rglob("*")) == before, "the earlier run was touched"
    assert [x.name for x in previous_run.parent.iterdir()] == [previous_run.name], f"{case}: a run was made"


@pytest.mark.parametrize("stamp,target,script", [("build/.hdf5-prefix", "deps", "deps-hdf5.sh"),
                                                 ("build/.dlio-venv", "dlio-venv", "deps-dlio.sh")])
def test_a_stamp_naming_a_removed_cache_folder_is_remade(tmp_path, stamp, target, script):
    """A stamp is checked, not trusted: naming a folder that is gone (or unfinished), its rule runs again; naming a
    finished one (`.h5dlio-complete`), nothing is rebuilt. `make -n` in a copy of the build files: nothing runs."""
    for x in ("Makefile", "mk", "scripts", "requirements-test.txt", "harness/requirements"):
        src = REPO / x
        (tmp_path / x).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / x)
    (tmp_path / "build").mkdir()
    done = tmp_path / "cache" / "finished"
    done.mkdir(parents=True)
    (done / ".h5dlio-complete").touch()
    plans = {}
    for name, where in (("removed", tmp_path / "cache" / "removed"), ("unfinished", tmp_path / "cache"),
                        ("finished", done)):
        (tmp_path / stamp).write_text(f"{where}\n")
        p = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=tmp_path, env=_env(),
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        plans[name] = script in p.stdout
    assert plans == {"removed": True, "unfinished": True, "finished": False}
