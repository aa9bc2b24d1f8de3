"""Shared by every test: the import paths, the test tier guard and markers' fixtures (tests/tiers.py, a plugin;
docs/testing.md), and the report tests' rendered fixtures (tests/test_reports_*.py)."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

pytest_plugins = ("tiers",)


# ---------------------------------------------------------------- the report tests' rendered fixtures

@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """tests/data/run-tiny rendered once (the tests only read the result)"""
    from report_read import RUN, parse_html, render
    tmp = tmp_path_factory.mktemp("run")
    rep_dir, out = render(RUN, tmp / "run")
    return {"dir": rep_dir, "out": out, "html": parse_html(rep_dir / "report.html"), "run": tmp / "run"}


@pytest.fixture(scope="session")
def paper(tmp_path_factory):
    """tests/data/paper-tiny rendered once (the tests only read the result)"""
    from report_read import PAPER, parse_html, render
    tmp = tmp_path_factory.mktemp("paper")
    rep_dir, out = render(PAPER, tmp / "paper")
    return {"dir": rep_dir, "out": out, "html": parse_html(rep_dir / "report.html"), "root": tmp / "paper"}


# ---------------------------------------------------------------- the DLIO probe's answers, shared by the session

@pytest.fixture(scope="session", autouse=True)
def probe_cache(tmp_path_factory):
    """Every harness launch probes the reference DLIO venv (harness/probe.py with its Python, ~15 s) before it
    chooses the kernel entry: the session's launches keep the answers in one folder ($H5DLIO_PROBE_CACHE, keyed by
    the venv's state and the probe's bytes: harness/dlio.py), so each venv is probed once per session, not once per
    launch (tests/test_dlio_probe.py: the cache's tests, and the real probe run without it)."""
    import os

    from harness.dlio import PROBE_CACHE
    if PROBE_CACHE not in os.environ:
        os.environ[PROBE_CACHE] = str(tmp_path_factory.mktemp("probe-cache"))
    yield os.environ[PROBE_CACHE]


# ---------------------------------------------------------------- one live side-by-side run, shared by modules

@pytest.fixture(scope="session")
def unet3d_checkpoint_run(tmp_path_factory):
    """The harness's tiny 2-rank unet3d_checkpoint run with the default profiles (strace among them at tiny scale:
    profiles/strace/ default_at), launched once per session: tests/test_validation_e2e.py's reference run and
    tests/test_strace.py's live run, whose mutants relaunch the kernel side only against its DLIO side (--reuse-dlio).
    Returns (folder for the tests' own runs, exit status, run directory)."""
    from test_validation_e2e import VENV, harness
    if not VENV or not Path(VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}); `make test` installs it")
    tmp = tmp_path_factory.mktemp("validate")
    rc, run = harness(tmp)
    return tmp, rc, run


# ---------------------------------------------------------------- the temporary folder's peak, printed at the end

_PEAK = {"bytes": 0, "after": "", "config": None}


def _disk_usage(root: Path) -> int:
    total, stack = 0, [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    total += e.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def pytest_runtest_logfinish(nodeid, location):
    """After each test's teardown: the session's temporary folder on disk (pytest.ini removes a passed test's
    tmp_path; module fixtures free theirs at the module's end). CI's disk is smaller than this machine's."""
    factory = getattr(_PEAK["config"], "_tmp_path_factory", None)
    if factory is None or factory._basetemp is None:
        return
    used = _disk_usage(factory._basetemp)
    if used > _PEAK["bytes"]:
        _PEAK.update(bytes=used, after=nodeid)


def pytest_configure(config):
    _PEAK["config"] = config


def pytest_terminal_summary(terminalreporter):
    if _PEAK["after"]:
        terminalreporter.write_line(f"temporary folder: peak {_PEAK['bytes'] / 2**20:,.0f} MiB on disk, after "
                                    f"{_PEAK['after']}")
