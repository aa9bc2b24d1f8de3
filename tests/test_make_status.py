"""No step's failure is hidden by a recipe: a pipe's status is its first failing command's in every recipe of the
Makefile and mk/*.mk, and `make validate` (python -m pipeline) fails when its report step fails (it used to pipe the
report into `tail -n1`, which dropped the status: a DLIO 3.x run ended with no report and exit 0)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
STAMPS = (REPO / "build" / ".dlio-venv", REPO / "build" / ".hdf5-prefix", REPO / ".venv" / ".stamp")


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "DARSHAN_PREFIX")}


def test_a_failing_command_in_a_pipe_fails_the_recipe(tmp_path):
    """The recipes run under the Makefile's own shell flags: `false | cat` must fail the target."""
    extra = tmp_path / "probe.mk"
    extra.write_text("pipe-probe:\n\t@false | cat\n"
                     "pipe-probe-ok:\n\t@true | cat\n")
    run = [("pipe-probe", False), ("pipe-probe-ok", True)]
    for target, ok in run:
        p = subprocess.run(["make", "--no-print-directory", "-f", "Makefile", "-f", str(extra), target], cwd=REPO,
                           env=_env(), capture_output=True, text=True, timeout=120)
        assert (p.returncode == 0) == ok, (target, p.returncode, p.stdout, p.stderr)


def _fake_venv(root: Path, run: Path) -> Path:
    """A VENV whose python runs the real pipeline with stand-ins for its harness step (names `run` as the run it made)
    and its validate step (a PASS), and the real reports: only the report step can fail."""
    venv = root / "fakevenv"
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    stand_ins = ("import runpy, sys, pipeline; from pathlib import Path; "
                 f"pipeline.run = lambda argv: (0, Path({str(run)!r})); "
                 "pipeline.validate = lambda *a, **k: print('verdict: PASS (stand-in)') or 0; "
                 "sys.argv[0] = 'pipeline'; runpy.run_module('pipeline', run_name='__main__')")
    py.write_text(f"""#!/bin/bash
if [ "$1 $2" = "-m pipeline" ]; then shift 2; exec "{REPO / '.venv' / 'bin' / 'python'}" -c "{stand_ins}" "$@"; fi
exec "{REPO / '.venv' / 'bin' / 'python'}" "$@"
""")
    py.chmod(0o755)
    (venv / ".stamp").touch()  # newer than requirements-test.txt: the venv target is up to date
    return venv


@pytest.mark.dlio  # `make validate` installs the DLIO venv first (its prerequisite)
@pytest.mark.parametrize("report_ok", [True, False], ids=["report renders", "report fails"])
def test_validate_exits_non_zero_when_its_report_fails(tmp_path, report_ok):
    missing = [str(s) for s in STAMPS if not s.exists()]
    if missing:
        pytest.skip(f"the make targets' dependencies are not installed here ({', '.join(missing)}): run `make test`")
    run = tmp_path / "runs" / "unet3d-tiny-stand-in"
    shutil.copytree(RUN_TINY, run)
    if not report_ok:  # the report folder cannot be made: python -m reports fails
        (run / "report").write_text("a file where the report folder goes\n")
    venv = _fake_venv(tmp_path, run)
    p = subprocess.run(["make", "--no-print-directory", "validate", f"VENV={venv}", f"RUNS_DIR={tmp_path / 'runs'}"],
                       cwd=REPO, env=_env(),
                       capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    if report_ok:
        assert p.returncode == 0, out[-3000:]
        assert (run / "report" / "report.md").exists() and p.stdout.strip().endswith("report.md"), out[-3000:]
    else:
        assert p.returncode != 0, out[-3000:]
        assert f"the report of {run} was not rendered" in p.stderr, out[-3000:]


def test_report_renders_dftracer_counts_of_a_whole_file_reader(tmp_path):
    """DLIO 3.x runs carry counts.dftracer.<side>.rank<r> checks whose expected/observed are integers (opens per
    rank): the report renders them among the checks instead of mistaking them for the Log VFD's per-rank counts
    (dicts), which crashed every 3.x report."""
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    v = json.loads((run / "verdict.json").read_text())
    planted = [{"name": f"counts.dftracer.{side}.rank{r}", "status": "pass", "expected": 20 + r, "observed": 20 + r,
                "detail": "opens of this rank's processes (planted)", "required": True}
               for side in ("dlio", "kernel") for r in (0, 1)]
    v["checks"] += planted
    (run / "verdict.json").write_text(json.dumps(v))
    p = subprocess.run([sys.executable, "-m", "reports", str(run), "--out", str(tmp_path / "rep")], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    md = (tmp_path / "rep" / "report.md").read_text()
    for c in planted:
        assert c["name"] in md, c["name"]
