"""The manual as a site: `make docs` builds docs/ with `mkdocs build --strict` (mkdocs.yml), so a broken link, a
broken anchor or a page left out of the nav fails the build. Checked as built, and on a copy of the manual with one
such fault planted at a time (each must fail, naming it)."""
import ast
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


# ---------------------------------------------------------------- the manual as a manual (issue 38 item 6)
PAGE_LIMIT = 40 * 1024   # bytes: a page past it is split by topic (a reference page and its dated record)


def oversized(docs: Path) -> list[str]:
    """The manual's pages over PAGE_LIMIT bytes, with their sizes."""
    return [f"{p.name}: {p.stat().st_size} bytes" for p in sorted(docs.glob("*.md")) if p.stat().st_size > PAGE_LIMIT]


def test_every_page_is_at_most_40_kb():
    assert oversized(REPO / "docs") == []


README_LIMIT = 15 * 1024   # bytes: the front door; the manual lives in docs/


def test_the_readme_is_at_most_15_kb(tmp_path):
    """The README stays the front door: past 15 KB what grew belongs in docs/ (a README of 15,516 bytes once went
    unseen here, after pages were split and each got a README link). Control: a README one byte past the limit."""
    def too_big(p: Path) -> bool:
        return p.stat().st_size > README_LIMIT
    assert not too_big(REPO / "README.md"), (REPO / "README.md").stat().st_size
    (tmp_path / "README.md").write_bytes(b"x" * (README_LIMIT + 1))
    assert too_big(tmp_path / "README.md")


def test_a_page_over_40_kb_is_named(tmp_path):
    """The control: a planted 41 KB page is named; one of exactly PAGE_LIMIT bytes is not."""
    (tmp_path / "long.md").write_text("# Long\n" + "x" * (41 * 1024))
    (tmp_path / "full.md").write_text("y" * PAGE_LIMIT)
    assert oversized(tmp_path) == [f"long.md: {7 + 41 * 1024} bytes"]


def unlisted(docs: Path, index: str, readme: str) -> list[str]:
    """Pages of the manual that docs/index.md's table does not link to, and the README's Links without a link to that
    index (ARCHITECTURE.md: a new page gets a line in the index; the README, the front door at most 15 KB, links the
    index and the pages a newcomer starts from, not every page)."""
    links = readme.split("\n## Links\n", 1)[1].split("\n## ", 1)[0]
    out = [] if "](docs/index.md)" in links else ["README.md's Links lack docs/index.md"]
    for p in sorted(docs.glob("*.md")):
        if p.name != "index.md" and f"]({p.name})" not in index:
            out.append(f"docs/index.md lacks {p.name}")
    return out


def test_every_page_is_linked_from_the_index_and_the_readme_links_the_index(tmp_path):
    index, readme = (REPO / "docs" / "index.md").read_text(), (REPO / "README.md").read_text()
    assert unlisted(REPO / "docs", index, readme) == []
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    (tmp_path / "docs" / "orphan.md").write_text("# An orphan page\n")   # the control: a page linked from neither
    no_index = readme.replace("](docs/index.md)", "](docs/kernel.md)")
    assert unlisted(tmp_path / "docs", index, no_index) == ["README.md's Links lack docs/index.md",
                                                            "docs/index.md lacks orphan.md"]


def make_prerequisites(target: str) -> list[str]:
    """target's prerequisites in GNU make's own database of this Makefile (nothing is run: -q)."""
    p = subprocess.run(["make", "-pRrq", "-f", "Makefile", "--no-print-directory", "h5dlio-no-such-goal"], cwd=REPO,
                       env=_env(), capture_output=True, text=True, timeout=120)
    lines = p.stdout.splitlines()
    for prev, line in zip(["", *lines], lines, strict=False):
        if line.startswith(f"{target}:") and not line.startswith(f"{target}:=") and prev != "# Not a target:":
            return [w for w in line.split(":", 1)[1].split() if w != "|"]
    raise AssertionError(f"make's database has no rule for {target}: {p.stderr[-500:]}")


# the words the README's `make test` line uses for what `make test` runs (a target not here is expanded into its
# prerequisites: test-reliability is fuzz + test-asan)
TEST_WORDS = {"lint": "lint", "test-c": "ctest", "fuzz": "fuzzing", "test-asan": "ASan", "test-py": "pytest"}


def readme_test_line_misses(line: str, target: str = "test") -> list[str]:
    """What `make <target>` runs (make's database) that the README's line for it does not name."""
    out = []
    for t in make_prerequisites(target):
        if t in TEST_WORDS:
            out += [] if TEST_WORDS[t] in line else [f"{t} ({TEST_WORDS[t]!r})"]
        else:
            out += readme_test_line_misses(line, t)
    return out


def test_readme_make_test_line_names_what_make_test_runs():
    line = next(ln for ln in (REPO / "README.md").read_text().splitlines() if ln.startswith("make test "))
    assert readme_test_line_misses(line) == []
    # the control: the line as it was before fuzzing and ASan joined make test (issue 38)
    old = "make test                        # lint, C unit tests (ctest), kernel + harness tests (pytest)"
    assert readme_test_line_misses(old) == ["fuzz ('fuzzing')", "test-asan ('ASan')"]


def marker_claims_missed(ini: str, installs: list[str]) -> list[str]:
    """pytest.ini's tier markers against what `make test` installs for them (test-py's prerequisites): a marker whose
    name is part of such a target must say which make target provides it (`make <target>` or `make test`)."""
    out = []
    for line in ini.split("markers =", 1)[1].splitlines():
        name, _, text = line.strip().partition(": ")
        for t in installs:
            if name and name in t.split("-") and f"make {t}" not in text and "make test " not in text:
                out.append(f"{name}: make test installs it ({t}), the marker does not say so")
    return out


def test_pytest_markers_say_what_make_test_installs():
    ini, installs = (REPO / "pytest.ini").read_text(), make_prerequisites("test-py")
    assert marker_claims_missed(ini, installs) == []
    # the control: the darshan marker as it read before `make test` built Darshan (issue 38)
    old = re.sub(r"(?m)^    darshan: .*$", "    darshan: needs a live Darshan runtime (DARSHAN_PREFIX or "
                 "darshan-config; none is installed by make)", ini)
    assert marker_claims_missed(old, installs) == ["darshan: make test installs it (darshan-for-tests), the marker "
                                                   "does not say so"]


def launcher_spellings_wrong(texts: dict[str, str]) -> list[str]:
    """Each `LAUNCHER=a|b|c` the manual, the README and the make files spell, against the launchers a run accepts
    (harness.launch.LAUNCHERS)."""
    from harness.launch import LAUNCHERS
    out = []
    for where, text in texts.items():
        for m in re.finditer(r"LAUNCHER=([a-z]+(?:\|[a-z]+)+)", text):
            if sorted(m.group(1).split("|")) != sorted(LAUNCHERS):
                out.append(f"{where}: LAUNCHER={m.group(1)}")
    return out


def test_every_launcher_a_run_accepts_is_documented():
    from harness.launch import LAUNCHERS, Launcher
    for kind in LAUNCHERS:   # each one accepted: it makes an argv
        assert Launcher(kind, 2).argv(None, {"K": "V"})[0] == kind
    with pytest.raises(ValueError, match="LAUNCHER=mpiexecc"):
        Launcher("mpiexecc", 2).argv(None, {})
    files = [REPO / "README.md", REPO / "Makefile", *sorted((REPO / "docs").glob("*.md")),
             *sorted((REPO / "mk").glob("*.mk"))]
    texts = {str(f.relative_to(REPO)): f.read_text() for f in files}
    assert "LAUNCHER=mpirun|mpiexec|srun" in texts["docs/validation.md"]
    assert launcher_spellings_wrong(texts) == []
    # the control: the Variables of docs/validation.md as they were, without mpiexec (issue 38)
    assert launcher_spellings_wrong({"docs/validation.md": "`LAUNCHER=mpirun|srun` (default mpirun)"}) == [
        "docs/validation.md: LAUNCHER=mpirun|srun"]
    assert "`LAUNCHER=mpiexec`" in texts["docs/kernel.md"]   # what it runs: docs/kernel.md, Under Slurm


def _name(node) -> str | None:
    """A table name as the code spells it: a string, a constant of common.rundir's catalogue (TIMING: its value), or
    an f-string whose fields become <field> (done.side: <side>)."""
    import common.rundir
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id.isupper() and isinstance(getattr(common.rundir, node.id, None), str):
        return getattr(common.rundir, node.id)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else f"<{ast.unparse(v.value).split('.')[-1]}>"
                       for v in node.values)
    return None


def code_tables() -> set[str]:
    """Every table the code writes into a run's tables/, from the source: the names given to put_table/write_table,
    and the keys of the dicts a profile's collect() or merge() returns (its tables of one launch); a <step> is each
    step the profile launches (Profile.launches)."""
    from profiles import Shape, registry
    steps = {type(p).__module__: sorted({s.step for s in p.launches(Shape({"reader": {"read_threads": 1}}))})
             for p in registry().values()}
    names: set[str] = set()
    for f in sorted([*(REPO / "profiles").rglob("*.py"), *(REPO / "harness").rglob("*.py"),
                     *(REPO / "validate").rglob("*.py")]):
        parts = f.relative_to(REPO).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)  # a package's __init__.py: the package
        found = []
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("put_table", "write_table"):
                found.append(_name(node.args[0]) if node.args else None)
            if isinstance(node, ast.FunctionDef) and node.name in ("collect", "merge"):
                found += [_name(k) for r in ast.walk(node) if isinstance(r, ast.Return) and isinstance(r.value,
                                                                                                        ast.Dict)
                          for k in r.value.keys]
        for n in filter(None, found):
            names |= {n.replace("<step>", s) for s in steps.get(module, [])} if "<step>" in n else {n}
    return names


def doc_tables(text: str) -> set[str]:
    """The tables docs/validation.md's run directory names: the `tables/` row's, and every `tables/<name>.json`."""
    sec = text.split("\n## The run directory\n", 1)[1].split("\n## ", 1)[0]
    row = next(ln for ln in sec.splitlines() if ln.startswith("| `tables/` |"))
    return set(re.findall(r"`([a-z0-9<>_-]+\.json)`", row)) | set(re.findall(r"`tables/([a-z0-9<>_-]+\.json)`", sec))


def tables_differ(doc: set[str], code: set[str]) -> list[str]:
    """Tables the code writes that no name of the doc's list covers (<profile>: any profile's name), and names of the
    list that cover no table the code writes."""
    pat = {d: re.compile(re.escape(d).replace(re.escape("<profile>"), "[a-z]+(?:-[a-z]+)*")) for d in doc}
    return ([f"not in docs/validation.md: {c}" for c in sorted(code) if not any(p.fullmatch(c) for p in pat.values())]
            + [f"not written by the code: {d}" for d in sorted(doc) if not any(pat[d].fullmatch(c) for c in code)])


def test_the_run_directorys_tables_are_the_ones_the_code_writes():
    text, code = (REPO / "docs" / "validation.md").read_text(), code_tables()
    assert {"dataset-<side>.json", "timing.json", "logvfd-rt0-<side>.json", "files-strace-generate.json"} <= code
    assert tables_differ(doc_tables(text), code) == []
    # the control: the list as it was (issue 38: two tables missing) fails naming both
    old = text.replace("`dftracer-timeline-<side>.json` (", "(").replace("`checkpoints-darshan.json` (", "(")
    assert tables_differ(doc_tables(old), code) == ["not in docs/validation.md: checkpoints-darshan.json",
                                                    "not in docs/validation.md: dftracer-timeline-<side>.json"]
    assert tables_differ(doc_tables(text) | {"trace-<side>.json"}, code) == [
        "not written by the code: trace-<side>.json"]
