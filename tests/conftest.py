"""Shared by every test: the import paths, the test tier guard and markers' fixtures (tests/tiers.py, a plugin;
docs/testing.md), and the report tests' rendered fixtures (tests/test_reports_*.py)."""
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
