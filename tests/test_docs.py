"""The manual as a site: `make docs` builds docs/ with `mkdocs build --strict` (mkdocs.yml), so a broken link, a
broken anchor or a page left out of the nav fails the build. Checked as built, and on a copy of the manual with one
such fault planted at a time (each must fail, naming it)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
MKDOCS = REPO / ".venv" / "bin" / "mkdocs"


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def _need_mkdocs() -> None:
    if not MKDOCS.exists():
        pytest.fail("mkdocs is not in .venv: `make venv` installs requirements-docs.txt (via requirements-test.txt)")


def nav_pages() -> list[str]:
    conf = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    return [next(iter(item.values())) if isinstance(item, dict) else item for item in conf["nav"]]


def test_make_docs_builds_every_page_strict(tmp_path):
    _need_mkdocs()
    site = tmp_path / "site"
    p = subprocess.run(["make", "--no-print-directory", "docs", f"DOCS_SITE={site}"], cwd=REPO, capture_output=True,
                       text=True, timeout=600, env=_env())
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == f"docs: {site}/index.html"
    pages = sorted(f.name for f in (REPO / "docs").glob("*.md"))
    assert sorted(nav_pages()) == pages, "mkdocs.yml's nav and docs/*.md differ"
    for page in pages:
        html = (site / page.replace(".md", ".html")).read_text()
        first = next(ln for ln in (REPO / "docs" / page).read_text().splitlines() if ln.startswith("# "))
        title = re.sub(r"`", "", first[2:]).split(":")[0].strip()
        assert title.split()[0] in html, f"{page}: its title {title!r} is not in the built page"


def _copy(tmp: Path) -> Path:
    d = tmp / "manual"
    shutil.copytree(REPO / "docs", d / "docs")
    shutil.copy(REPO / "mkdocs.yml", d / "mkdocs.yml")
    return d


def _build(d: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MKDOCS), "build", "--strict", "-f", str(d / "mkdocs.yml"), "-d", str(d / "site")],
                          capture_output=True, text=True, timeout=600, env=_env())


FAULTS = {
    "a link to a page that does not exist": ("kernel.md", "\n\nSee [the options](optoins.md).\n", "optoins.md"),
    "a link to an anchor that does not exist": ("validation.md", "\n\nSee [the verdict](#reading-the-verdcit).\n",
                                                "#reading-the-verdcit"),
    "a link to a repository file outside the manual": ("safety.md", "\n\nSee [the code](../bench/src/util.c).\n",
                                                        "../bench/src/util.c"),
}


def test_copy_of_the_manual_builds_clean(tmp_path):
    """The control for the planted faults below: the unchanged copy builds."""
    _need_mkdocs()
    p = _build(_copy(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_fails_the_build(fault, tmp_path):
    _need_mkdocs()
    d = _copy(tmp_path)
    page, text, named = FAULTS[fault]
    with open(d / "docs" / page, "a") as f:
        f.write(text)
    p = _build(d)
    assert p.returncode != 0, f"{fault}: the strict build passed"
    out = p.stdout + p.stderr
    assert named in out and page in out and "WARNING" in out, out[-3000:]


def test_page_left_out_of_the_nav_fails_the_build(tmp_path):
    _need_mkdocs()
    d = _copy(tmp_path)
    (d / "docs" / "orphan.md").write_text("# An orphan page\n")
    p = _build(d)
    assert p.returncode != 0 and "orphan.md" in p.stderr, p.stderr[-3000:]


def _make_docs(site: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "docs", f"DOCS_SITE={site}"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env=_env())


def test_make_docs_rebuilds_its_own_site(tmp_path):
    """A second build into the same folder (marked .h5dlio-docs by the first) replaces the site."""
    _need_mkdocs()
    site = tmp_path / "site"
    assert _make_docs(str(site)).returncode == 0
    again = _make_docs(str(site))
    assert again.returncode == 0 and (site / "index.html").exists(), again.stderr[-2000:]


@pytest.mark.parametrize("what", ["a folder holding someone else's file", "a file", "empty"])
def test_make_docs_refuses_a_site_folder_it_would_wipe(what, tmp_path):
    """MkDocs empties its site folder before building: a folder make docs did not make is refused, named, exit 2,
    with nothing touched."""
    _need_mkdocs()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    site = {"a folder holding someone else's file": str(theirs), "a file": str(theirs / "notes.txt"), "empty": ""}[what]
    p = _make_docs(site)
    assert p.returncode == 2 and "DOCS_SITE" in p.stderr and "index.html" not in p.stdout, p.stdout + p.stderr
    assert sorted(f.name for f in theirs.iterdir()) == ["notes.txt"] and (theirs / "notes.txt").read_text() == "mine"
