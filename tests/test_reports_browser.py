"""The rendered HTML reports in headless Chromium (tests/browser.py): screenshot non-blank, no broken images, no
console errors, no request leaving the page."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from browser import open_in_chromium

pytestmark = pytest.mark.browser


def _blank(png: bytes) -> bool:
    from PIL import Image, ImageStat
    im = Image.open(io.BytesIO(png)).convert("L")
    return len(im.getcolors(256) or []) <= 20 or ImageStat.Stat(im).stddev[0] <= 10


def _check_in_browser(report: Path, tmp: Path, exe: str):
    """the page as a reader sees it: no console error, every figure loaded and drawn (a screenshot of each figure
    is not blank), nothing fetched from anywhere, the first screen not blank"""
    from PIL import Image
    n_figs = len(list((report.parent / "figures").glob("*.png")))
    r = open_in_chromium(report, tmp, exe)
    assert r["errors"] == [], r["errors"]
    assert r["n"] == n_figs > 0 and r["broken"] == [] and min(r["widths"]) >= 400
    assert [i for i, f in enumerate(r["figures"]) if _blank(f)] == [], "figures drawn blank in the browser"
    assert [u for u in r["requests"] if not u.startswith("data:") and u != report.as_uri()] == []
    assert r["height"] > 2000 and r["text"] > 2000
    assert Image.open(io.BytesIO(r["shot"])).size == (1280, 1000)
    assert not _blank(r["shot"]), "blank screenshot"


def test_html_renders_in_headless_chromium(chromium, rendered, tmp_path):
    _check_in_browser(rendered["dir"] / "report.html", tmp_path, chromium)


def test_paper_html_renders_in_headless_chromium(chromium, paper, tmp_path):
    _check_in_browser(paper["dir"] / "report.html", tmp_path, chromium)
