"""python -m fidelity.revisions [--check] [--mirrors DIR] [--out fidelity]: the revision x workload table of I/O
signatures of the DLIO revisions MLPerf Storage v3.0 accepted (fidelity/revisions.md, from fidelity/revisions.json).

revisions.json is written by hand from the DLIO sources: for each accepted revision (editions.yaml `dlio_revisions`
of edition 3.0) whether it can be fetched here, the files of the `dlio_benchmark/` package whose content differs from
the base revision (f6796ed, the kernel's 3.x entry), each with the DLIO lines on both sides and, per workload, what
the difference does to that workload's I/O:
  io     the workload's I/O differs (the first such file in `first` order gives the table's first differing line)
  inert  the changed lines are on the workload's path but act only under a setting the workload does not use (named)
  off    the workload never reaches the changed lines (named why)
and the runs made (the probe, a side-by-side validate), whose result the table quotes as a run, apart from the
source-diff findings. Without --check the table is rendered from the JSON alone. With --check the JSON's source facts
are recomputed from the git mirrors first (blob ids of every file under `dlio_benchmark/`, so revisions of two
repositories compare): a differing file the JSON does not classify, a classified file that no longer differs, a file
count that is not the one compared, a cited line past its file's end, or a revision marked unfetchable that a mirror
holds, is named and exit 1; so is a recorded run whose first differing call or data-file opens per rank are not
those of the two call sequences it names (`run_fixtures`: per rank, in time order, the directory and data-file opens
under the data folder, from strace).

Exit status: 0 written (and, with --check, every fact held), 1 a fact did not hold, 2 bad input (naming the key)."""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from common.fileio import write_text_atomic

REPO = Path(__file__).resolve().parent.parent
MIRRORS = Path("/work/.mirror")
PACKAGE = "dlio_benchmark/"
KINDS = ("io", "inert", "off")


class RevisionsError(ValueError):
    """Bad input (exit status 2)."""


def load(path: Path) -> dict:
    """revisions.json, its keys checked (RevisionsError naming the first missing or bad one)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise RevisionsError(f"{path}: {e}") from None
    for key in ("base", "workloads", "revisions"):
        if key not in data:
            raise RevisionsError(f"{path}: key '{key}' missing")
    workloads = list(data["workloads"])
    for i, rev in enumerate(data["revisions"]):
        where = f"{path}: revisions[{i}]"
        for key in ("rev", "repo", "version", "fetchable"):
            if key not in rev:
                raise RevisionsError(f"{where}: key '{key}' missing")
        for name, f in (rev.get("differs") or {}).items():
            for w in workloads:
                if f.get(w, {}).get("kind") not in KINDS:
                    raise RevisionsError(f"{where}.differs['{name}'].{w}.kind: one of {', '.join(KINDS)}")
        for w, c in (rev.get("cells") or {}).items():
            if c.get("kind") not in ("io", "same") or (c["kind"] == "io" and not c.get("first_rev")):
                raise RevisionsError(f"{where}.cells.{w}: kind io (with first_rev, first_base) or same")
        if rev["fetchable"] and not rev.get("base") and "cells" not in rev and "compared" not in rev:
            raise RevisionsError(f"{where}: key 'compared' missing (or 'cells' for a revision of another lineage)")
    return data


CITE = re.compile(r"^([\w./]+\.py):(\d+)")


def citations(rev: dict, workloads: list[str]) -> list[tuple[str, str]]:
    """(side, 'path:line') of every first differing line the revision's findings cite ('rev' or 'base' side)."""
    found = [(side, c[f"first_{side}"]) for c in (rev.get("cells") or {}).values() if c["kind"] == "io"
             for side in ("rev", "base")]
    for f in (rev.get("differs") or {}).values():
        found += [(side, f[w][f"first_{side}"]) for w in workloads for side in ("rev", "base")
                  if f"first_{side}" in f[w]]
    return found


def cited_lines_exist(mirror: Path, commit: str, cite: str) -> str | None:
    """None when the cited `path:line` exists at commit (the file has that many lines), else what is wrong."""
    m = CITE.match(cite)
    if not m:
        return f"citation '{cite}' is not path.py:line"
    try:
        text = _git(mirror, "show", f"{commit}:{PACKAGE}{m.group(1)}")
    except subprocess.CalledProcessError:
        return f"{PACKAGE}{m.group(1)} does not exist at {commit[:7]}"
    if int(m.group(2)) > len(text.splitlines()):
        return f"{PACKAGE}{m.group(1)} has {len(text.splitlines())} lines at {commit[:7]}, '{cite}' cited"
    return None


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], check=True, capture_output=True,
                          text=True).stdout


def holds(mirror: Path, rev: str) -> bool:
    return subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "-e", f"{rev}^{{commit}}"],
                          capture_output=True).returncode == 0


def blobs(mirror: Path, rev: str) -> dict[str, str]:
    """{path inside dlio_benchmark/: blob id} of rev (its content hash: equal ids are equal files in any repo)."""
    out = {}
    for line in _git(mirror, "ls-tree", "-r", rev, "--", PACKAGE).splitlines():
        meta, path = line.split("\t", 1)
        out[path[len(PACKAGE):]] = meta.split()[2]
    return out


def source_facts(base: dict[str, str], rev: dict[str, str]) -> tuple[int, set[str]]:
    """(files compared: the union of both trees, the files whose content differs or exists on one side only)."""
    names = set(base) | set(rev)
    return len(names), {n for n in names if base.get(n) != rev.get(n)}


def mirror_of(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+") / "repo"


def check(data: dict, root: Path) -> list[str]:
    """What in data the mirrors under root contradict ([] when everything holds); a revision whose mirror is absent
    here is named too (nothing is taken on trust)."""
    problems = []
    base = data["base"]
    base_mirror = mirror_of(root, base["repo"])
    if not holds(base_mirror, base["rev"]):
        return [f"base {base['rev'][:7]}: not in {base_mirror}"]
    base_blobs = blobs(base_mirror, base["rev"])
    mirrors = sorted(p for p in root.glob("*/repo") if p.is_dir()) if root.is_dir() else []
    for rev in data["revisions"]:
        short = rev["rev"][:7]
        if not rev["fetchable"]:
            held = [m.parent.name for m in mirrors if holds(m, rev["rev"])]
            if held:
                problems.append(f"{short}: marked not fetchable, but {', '.join(held)} holds it")
            continue
        mirror = mirror_of(root, rev["repo"])
        if not holds(mirror, rev["rev"]):
            problems.append(f"{short}: not in {mirror}")
            continue
        for side, cite in citations(rev, list(data["workloads"])):
            commit, where = (rev["rev"], mirror) if side == "rev" else (base["rev"], base_mirror)
            wrong = cited_lines_exist(where, commit, cite)
            if wrong:
                problems.append(f"{short}: {wrong}")
        if rev.get("base") or "cells" in rev:
            continue
        n, differ = source_facts(base_blobs, blobs(mirror, rev["rev"]))
        if rev.get("compared") != n:
            problems.append(f"{short}: {n} files of {PACKAGE} compared, the JSON says {rev.get('compared')}")
        told = set(rev.get("differs") or {})
        for name in sorted(differ - told):
            problems.append(f"{short}: {PACKAGE}{name} differs from {base['rev'][:7]} but is not classified")
        for name in sorted(told - differ):
            problems.append(f"{short}: {PACKAGE}{name} is classified as differing but is identical")
    return problems


def first_differing_call(base: dict, rev: dict) -> dict | None:
    """The first call in which two runs' per-rank data-set call sequences ({rank: [[call, path], ...]}, time order)
    differ: {rank, index, base, rev} (a side's call None when its sequence ended), lowest rank first; None if equal."""
    for rank in sorted(set(base) | set(rev), key=int):
        a, b = base.get(rank, []), rev.get(rank, [])
        for i in range(max(len(a), len(b))):
            x, y = (a[i] if i < len(a) else None), (b[i] if i < len(b) else None)
            if x != y:
                return {"rank": int(rank), "index": i, "base": x, "rev": y}
    return None


def data_opens(calls: dict) -> dict:
    """{rank: [data-file opens, distinct files]} of a run's call sequences (an `open` of a file, not a folder)."""
    return {r: [sum(1 for c in v if c[0] == "open"), len({c[1] for c in v if c[0] == "open"})]
            for r, v in calls.items()}


def check_runs(data: dict, repo: Path = REPO) -> list[str]:
    """What the recorded runs' fixtures contradict: each run's first differing call and data-file opens per rank,
    recomputed from the two call sequences it names ([] when all hold)."""
    problems = []
    for rev in data["revisions"]:
        for w, fx in (rev.get("run_fixtures") or {}).items():
            try:
                base, mine = (json.loads((repo / fx[side]).read_text()) for side in ("base", "rev"))
            except (OSError, json.JSONDecodeError) as e:
                problems.append(f"{rev['rev'][:7]} {w}: {e}")
                continue
            first = first_differing_call(base, mine)
            if first != fx["first_call"]:
                problems.append(f"{rev['rev'][:7]} {w}: first differing call {first}, recorded {fx['first_call']}")
            opens = {"base": data_opens(base), "rev": data_opens(mine)}
            if opens != fx["data_opens"]:
                problems.append(f"{rev['rev'][:7]} {w}: data-file opens {opens}, recorded {fx['data_opens']}")
    return problems


def _first_io(rev: dict, workload: str) -> dict | None:
    """The finding that gives the workload's first differing line: a hand-written cell (a revision of another
    lineage, not compared file by file), else the `io` file first in `first` order."""
    if workload in (rev.get("cells") or {}):
        c = rev["cells"][workload]
        return c if c["kind"] == "io" else None
    io = [(f.get("first", 99), name, f) for name, f in (rev.get("differs") or {}).items()
          if f[workload]["kind"] == "io"]
    if not io:
        return None
    _, name, f = min(io, key=lambda t: (t[0], t[1]))
    return {"first_rev": f[workload].get("first_rev", f"{name}:{f['rev_lines']}"),
            "first_base": f[workload].get("first_base", f"{name}:{f['base_lines']}"), "why": f[workload]["why"],
            "also": [n for _, n, _f in sorted(io, key=lambda t: (t[0], t[1]))][1:]}


def _same_text(data: dict, rev: dict, workload: str) -> str:
    base = data["base"]["rev"][:7]
    if workload in (rev.get("cells") or {}):
        return f"**= {base}** by source diff: {rev['cells'][workload]['why']}"
    differ = rev.get("differs") or {}
    named = ", ".join(f"`{n}` {f[workload]['kind']}" for n, f in sorted(differ.items()))
    return (f"**= {base}** by source diff ({rev['compared']} files of `{PACKAGE}` compared; "
            f"{len(differ)} differ, none changing this workload's I/O: {named or '-'})")


def cell(data: dict, rev: dict, workload: str) -> str:
    """One table cell: the revision's I/O signature for the workload, and what it rests on."""
    if rev.get("base"):
        return "**base**: the kernel's 3.x entry (`3.0.2`); run: " + rev["runs"][workload]
    if not rev["fetchable"]:
        return "not tested: not fetchable here (no mirror holds it)"
    base = data["base"]["rev"][:7]
    first = _first_io(rev, workload)
    run = (rev.get("runs") or {}).get(workload)
    if first is None:
        text = _same_text(data, rev, workload)
    else:
        also = f" (also: {', '.join(f'`{n}`' for n in first['also'])})" if first.get("also") else ""
        text = (f"**differs**: first differing source line (from the diff) `{first['first_rev']}`, {base} "
                f"`{first['first_base']}`: {first['why']}{also}")
    return text + (f"; run: {run}" if run else "; no run")


def render(data: dict) -> str:
    workloads = list(data["workloads"])
    base = data["base"]["rev"][:7]
    out = ["# DLIO revisions accepted for MLPerf Storage v3.0: I/O signatures per workload", "",
           "Written by `python -m fidelity.revisions` from `fidelity/revisions.json` (the findings, by hand from the "
           "DLIO sources; `--check` recomputes the source facts from the git mirrors). Each cell says whether the "
           f"revision makes the same I/O as {base} (the kernel's `3.0.2` entry) for the workload, and on what that "
           "rests: a **source diff** (every file of the package compared by content; each differing file classified "
           "below) or a **run** (named as such). `io`: changes the workload's I/O; `inert`: on its path, but acts "
           "only under a setting it does not use; `off`: not on its path.", "",
           "| revision | repository | version | " + " | ".join(f"`{w}`" for w in workloads) + " |",
           "|---|---|---|" + "---|" * len(workloads)]
    for rev in data["revisions"]:
        name = f"`{rev['rev'][:7]}`" + (f" (= {rev['same_as']})" if rev.get("same_as") else "")
        out.append(f"| {name} | {rev['repo']} | {rev['version']} | "
                   + " | ".join(cell(data, rev, w) for w in workloads) + " |")
    out += ["", "Workloads: " + "; ".join(f"`{w}`: {t}" for w, t in data["workloads"].items()) + ".", ""]
    out += _differs_section(data, workloads)
    out += ["## Notes", ""] + [f"- {n}" for n in data.get("notes", [])] + [""]
    return "\n".join(out)


def _differs_section(data: dict, workloads: list[str]) -> list[str]:
    base = data["base"]["rev"][:7]
    out = []
    for rev in data["revisions"]:
        differ = rev.get("differs") or {}
        if not differ or rev.get("same_as"):
            continue
        out += [f"## `{rev['rev'][:7]}` against `{base}`: the differing files", "",
                f"| file | {base} | {rev['rev'][:7]} | what changed | "
                + " | ".join(f"`{w}`" for w in workloads) + " |",
                "|---|---|---|---|" + "---|" * len(workloads)]
        for name in sorted(differ, key=lambda n: (differ[n].get("first", 99), n)):
            f = differ[name]
            out.append(f"| `{name}` | {f['base_lines']} | {f['rev_lines']} | {f['what']} | "
                       + " | ".join(f"{f[w]['kind']}: {f[w]['why']}" for w in workloads) + " |")
        out.append("")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fidelity.revisions", description=__doc__)
    p.add_argument("--json", type=Path, default=REPO / "fidelity" / "revisions.json")
    p.add_argument("--out", type=Path, default=REPO / "fidelity" / "revisions.md")
    p.add_argument("--mirrors", type=Path, default=MIRRORS, help="git mirrors: <owner>+<name>/repo (default "
                   f"{MIRRORS})")
    p.add_argument("--check", action="store_true", help="recompute the source facts from the mirrors first")
    a = p.parse_args(argv)
    try:
        data = load(a.json)
    except RevisionsError as e:
        print(f"fidelity.revisions: error: {e}", file=sys.stderr)
        return 2
    if a.check:
        problems = check_runs(data) + check(data, a.mirrors)
        for msg in problems:
            print(f"fidelity.revisions: {msg}", file=sys.stderr)
        if problems:
            return 1
    write_text_atomic(a.out, render(data))
    print(f"fidelity.revisions: {len(data['revisions'])} revisions in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
