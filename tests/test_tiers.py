"""The test tier guard (tests/tiers.py, docs/testing.md) on planted tests: pytest runs a file of small tests in a
child process with the guard loaded, the same pytest.ini markers, fake programs on PATH (chromium, pdflatex, srun:
scripts that exit 0) and a fake cache whose dlio-* folder is the "DLIO venv". Each unmarked test that uses one of
the things a marker names must FAIL, naming it, even when it catches errors or skips; the same test carrying its
marker, and unmarked tests that use none of them (a fake venv of their own, `make -n`), must not."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PLANTED = '''
import os, subprocess
from pathlib import Path
import pytest

VENV = Path(os.environ["PLANTED_CACHE"]) / "dlio-2.0.0-abc"


def test_reads_the_venv_variable():
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    if not venv:
        pytest.skip("no reference DLIO venv")


def test_runs_the_venvs_python():
    subprocess.run([str(VENV / "bin" / "python"), "-c", "pass"], check=True)


def test_lists_the_venv():
    list(VENV.iterdir())


def test_asks_for_the_fixture(dlio_venv):
    pass


def test_make_validate():
    subprocess.run(["make", "-C", os.environ["PLANTED_EMPTY"], "validate"], capture_output=True)


def test_runs_pdflatex_and_swallows_the_error():
    try:
        subprocess.run(["pdflatex", "x.tex"], check=True)
        raise RuntimeError("pretend pdflatex failed")
    except Exception:
        pass


def test_runs_chromium():
    subprocess.run(["chromium", "--headless"])


def test_runs_srun():
    subprocess.run(["srun", "-n", "2", "true"])


def test_reads_the_vol_prefix_and_skips():
    if not os.environ.get("H5DLIO_VOL_PREFIX"):
        pytest.skip("vol-async is not built here")


def test_make_vol_deps():
    subprocess.run(["make", "-C", os.environ["PLANTED_EMPTY"], "vol-deps"], capture_output=True)


@pytest.mark.vendored
def test_marked_reads_the_vol_prefix():
    assert os.environ["H5DLIO_VOL_PREFIX"] == os.environ["PLANTED_EMPTY"]


@pytest.mark.dlio
def test_marked_reads_the_venv_variable():
    assert os.environ["H5DLIO_DLIO_VENV"] == str(VENV)
    subprocess.run([str(VENV / "bin" / "python"), "-c", "pass"], check=True)


@pytest.mark.latex
def test_marked_runs_pdflatex():
    subprocess.run(["pdflatex", "x.tex"], check=True)


@pytest.mark.browser
@pytest.mark.slurm
def test_marked_runs_chromium_and_srun():
    subprocess.run(["chromium", "--headless"])
    subprocess.run(["srun", "true"])


def test_unmarked_own_fake_venv(tmp_path):
    fake = tmp_path / "venv" / "bin"
    fake.mkdir(parents=True)
    (fake / "python").symlink_to("/bin/true")
    subprocess.run([str(fake / "python")], check=True)
    assert "H5DLIO_DLIO_VENV" not in dict(os.environ)


def test_unmarked_make_dry_run():
    subprocess.run(["make", "-n", "-C", os.environ["PLANTED_EMPTY"], "validate"], capture_output=True)


def test_unmarked_sets_the_variable_itself(monkeypatch, tmp_path):
    monkeypatch.setenv("H5DLIO_DLIO_VENV", str(tmp_path / "none"))
    assert os.environ["H5DLIO_DLIO_VENV"] == str(tmp_path / "none")


def test_unmarked_plain():
    assert 1 + 1 == 2
'''


def run_planted(tmp: Path) -> tuple[dict[str, str], str]:
    (tmp / "bin").mkdir()
    for prog in ("chromium", "pdflatex", "srun"):
        (tmp / "bin" / prog).write_text("#!/bin/sh\nexit 0\n")
        (tmp / "bin" / prog).chmod(0o755)
    venv = tmp / "cache" / "dlio-2.0.0-abc" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to("/bin/true")
    (venv / "dlio_benchmark").symlink_to("/bin/true")
    (tmp / "empty").mkdir()
    shutil.copy(REPO / "pytest.ini", tmp / "pytest.ini")
    (tmp / "test_planted.py").write_text(PLANTED)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    env.update(PATH=f"{tmp / 'bin'}:{env['PATH']}", H5DLIO_CACHE=str(tmp / "cache"), PLANTED_CACHE=str(tmp / "cache"),
               PLANTED_EMPTY=str(tmp / "empty"), H5DLIO_DLIO_VENV=str(venv.parent),
               H5DLIO_VOL_PREFIX=str(tmp / "empty"), PYTHONPATH=f"{REPO / 'tests'}:{REPO}")
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "tiers", "-p", "no:cacheprovider",
                        "--rootdir", str(tmp), "-c", str(tmp / "pytest.ini"), str(tmp / "test_planted.py")],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    outcomes = dict(re.findall(r"test_planted\.py::(\w+) (PASSED|FAILED|SKIPPED|ERROR)", p.stdout))
    return outcomes, p.stdout + p.stderr


def test_the_guard_fails_unmarked_uses_and_only_those(tmp_path):
    got, out = run_planted(tmp_path)
    want_fail = {"test_reads_the_venv_variable": "$H5DLIO_DLIO_VENV without @pytest.mark.dlio",
                 "test_runs_the_venvs_python": "the DLIO venv (passes",
                 "test_lists_the_venv": "the DLIO venv (opens",
                 "test_asks_for_the_fixture": "the fixture 'dlio_venv' without @pytest.mark.dlio",
                 "test_make_validate": "make validate (it needs dlio",
                 "test_runs_pdflatex_and_swallows_the_error": "runs pdflatex",
                 "test_runs_chromium": "runs chromium",
                 "test_runs_srun": "runs srun",
                 "test_reads_the_vol_prefix_and_skips": "$H5DLIO_VOL_PREFIX without @pytest.mark.vendored",
                 "test_make_vol_deps": "make vol-deps (it needs vendored"}
    for name, words in want_fail.items():
        assert got.get(name) in ("FAILED", "ERROR"), f"{name}: {got.get(name)}\n{out[-4000:]}"
        block = out.split(f"test_planted.py::{name}: test tier guard:", 1)
        assert len(block) == 2 and words in block[1].split("\n\n")[0], f"{name}: {words!r} not named\n{out[-4000:]}"
    for name in ("test_marked_reads_the_venv_variable", "test_marked_runs_pdflatex", "test_marked_reads_the_vol_prefix",
                 "test_marked_runs_chromium_and_srun", "test_unmarked_own_fake_venv",
                 "test_unmarked_make_dry_run", "test_unmarked_sets_the_variable_itself", "test_unmarked_plain"):
        assert got.get(name) == "PASSED", f"{name}: {got.get(name)}\n{out[-4000:]}"
    assert len(got) == len(want_fail) + 8, got
