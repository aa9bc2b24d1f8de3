"""`make help` lists every make target with one line each, from the `## ` line above its rule (Makefile, mk/*.mk;
scripts/make_targets.py). The targets are taken from GNU make's own database (`make -pRrq`), not from our parser,
so a rule our parser misses fails here too; a target added without its `## ` line fails (shown on a planted one)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^  ([A-Za-z][A-Za-z0-9_-]*) +(.+)$")


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def make_database_targets(repo: Path) -> set[str]:
    """plain-named targets of make's database for this Makefile (no built-in rules; nothing is run: -q)"""
    p = subprocess.run(["make", "-pRrq", "-f", "Makefile", "--no-print-directory", "h5dlio-no-such-goal"], cwd=repo,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert "Makefile" in p.stdout, p.stderr[-2000:]
    out, skip = set(), False
    for line in p.stdout.splitlines():
        if line.startswith("# Not a target:"):
            skip = True
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9_-]*):(?![=:])", line)
        if m and not skip and m.group(1) != "h5dlio-no-such-goal":
            out.add(m.group(1))
        skip = False
    return out


def help_lines(repo: Path) -> dict[str, str]:
    p = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=repo, env=_env(), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    got: dict[str, str] = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            assert m.group(1) not in got, f"{m.group(1)} listed twice"
            got[m.group(1)] = m.group(2)
    return got


def undocumented(repo: Path) -> list[str]:
    """targets make knows that `make help` does not list with a `## ` line"""
    got = help_lines(repo)
    return sorted(t for t in make_database_targets(repo) if t not in got or got[t].startswith("(no ## line"))


def test_every_target_has_its_help_line():
    targets = make_database_targets(REPO)
    assert {"help", "test", "test-fast", "validate", "build"} <= targets and len(targets) >= 30, sorted(targets)
    assert undocumented(REPO) == []
    got = help_lines(REPO)
    assert set(got) == targets, f"listed but not a target: {sorted(set(got) - targets)}"
    assert all(len(text) >= 10 for text in got.values()), got


def test_help_is_the_default_goal():
    p = subprocess.run(["make", "-s", "--no-print-directory"], cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "  test-fast " in p.stdout and "Variables:" in p.stdout, p.stdout + p.stderr


def test_a_target_without_its_line_is_caught(tmp_path):
    """negative control: a copy of the build files with one target added without a `## ` line, and one whose
    `## ` line is separated from its rule by another comment"""
    for x in ("Makefile", "mk", "scripts"):
        (shutil.copytree if (REPO / x).is_dir() else shutil.copy)(REPO / x, tmp_path / x)
    with open(tmp_path / "mk" / "planted.mk", "w") as f:
        f.write(".PHONY: planted-one planted-two\nplanted-one:\n\t@true\n\n## a line\n# in the way\nplanted-two:\n"
                "\t@true\n")
    assert undocumented(tmp_path) == ["planted-one", "planted-two"]
