"""The make targets of this repository, read from the Makefile and mk/*.mk: `make help` prints them, one line each,
from the `## ` comment line right above each rule; tests/test_make_help.py fails when a target has none; the test
tier guard (tests/tiers.py) asks which targets need the DLIO venv, Chromium, LaTeX or Slurm.

A target is a rule whose name is a plain word (`validate:`, `test-fast:`); file rules (`build/.dlio-venv:`,
`$(VENV)/.stamp:`) are how targets get their prerequisites, not entry points. A target named by several rules (an
mk file adding a prerequisite) needs one `## ` line among them. Standard library only: `make help` runs before
anything is installed."""
from __future__ import annotations

import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
RULE = re.compile(r"^([^\t#:=][^:=]*?)\s*:(?![=:])(.*)$")


@dataclass
class Target:
    name: str
    where: str                     # the file (relative to the repository) of its first rule
    help: str | None = None        # its `## ` line
    prereqs: set[str] = field(default_factory=set)   # prerequisites, and targets its recipe runs with $(MAKE)


def makefiles(repo: Path = REPO) -> list[Path]:
    return [repo / "Makefile", *sorted((repo / "mk").glob("*.mk"))]


def parse(repo: Path = REPO) -> tuple[dict[str, Target], set[str]]:
    """({name: Target} of every rule, including file rules, in file order; the names declared .PHONY)"""
    targets: dict[str, Target] = {}
    phony: set[str] = set()
    for path in makefiles(repo):
        rel = str(path.relative_to(repo))
        lines = path.read_text().splitlines()
        in_define = False
        current: list[Target] = []
        for i, line in enumerate(lines):
            prev = lines[i - 1] if i else ""
            if re.match(r"^define\b", line):
                in_define = True
            if in_define:
                in_define = not line.startswith("endef")
                continue
            if prev.endswith("\\") and not prev.startswith("#"):
                continue            # a continued line (of a recipe or a variable), never a rule
            if line.startswith("\t"):
                for m in re.finditer(r"\$\(MAKE\)([^;&|]*)", line):     # a recipe running another target
                    for t in current:
                        t.prereqs |= {w for w in m.group(1).split() if PLAIN.fullmatch(w)}
                continue
            m = RULE.match(line)
            if not m:
                current = [] if line and not line.startswith("#") else current
                continue
            names, rest = m.group(1).split(), m.group(2).split("#", 1)[0]
            if names == [".PHONY"]:
                phony |= set(rest.split())
                continue
            help_line = prev[3:].strip() if prev.startswith("## ") else None
            current = []
            for n in names:
                t = targets.setdefault(n, Target(n, rel))
                t.prereqs |= {w for w in rest.split() if w != "|"}
                if help_line and not t.help:
                    t.help = help_line
                current.append(t)
    return targets, phony


def entry_points(repo: Path = REPO) -> list[Target]:
    """every plain-named target, in file order"""
    return [t for t in parse(repo)[0].values() if PLAIN.fullmatch(t.name)]


def needing(what: set[str], repo: Path = REPO) -> set[str]:
    """the targets that make (directly or through other targets) any of `what`"""
    targets = parse(repo)[0]
    need = set(what)
    while True:
        more = {t.name for t in targets.values() if t.prereqs & need} - need
        if not more:
            return need
        need |= more


def variables_help(repo: Path = REPO) -> list[str]:
    """the Makefile header's `# Variables:` paragraph (up to the first line that is not a comment)"""
    out: list[str] = []
    for line in (repo / "Makefile").read_text().splitlines():
        if not line.startswith("#"):
            break
        if out or line.startswith("# Variables:"):
            out.append(line[2:] if line.startswith("# ") else line[1:])
    return out


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `make help | head` ends quietly
    argv = sys.argv[1:] if argv is None else argv
    repo = Path(argv[0]) if argv else REPO
    ts = entry_points(repo)
    width = max(len(t.name) for t in ts) + 2
    print("h5dlio: make <target> [VARIABLE=value ...]; each target installs what it needs\n")
    where = None
    for t in ts:
        if t.where != where:
            where = t.where
            print(f"{where}:")
        print(f"  {t.name:<{width}}{t.help or '(no ## line above its rule: tests/test_make_help.py fails)'}")
    print()
    print("\n".join(variables_help(repo)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
