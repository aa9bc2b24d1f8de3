"""python -m fidelity.workloads [--workloads a,b] [--scale tiny] ...: the workload matrix (`make workloads`).

Runs `make validate WORKLOAD=<w> SCALE=<scale>`'s pipeline (`python -m pipeline`) for every DLIO workload in
reference-configs/, one at a time, and writes fidelity/workloads.json and fidelity/workloads.md (dated): per
workload the verdict with pass/fail/skip counts per check family (the DLIO version matrix's rows and families:
fidelity/matrix.py), or the reason `make validate` refused it. A workload whose merged config equals one run before
it (unet3d_h100 is unet3d) is not run again: its row says which. The thesis configurations (thesis-*.yaml) are not
DLIO workloads but DLIO's `default` reshaped, validated by `make paper`: they are listed apart, not run. The
installed DLIO's bundled workloads that no reference config overlays are listed too, so a workload without a
reference config is visible. Each row names the DLIO it ran against: `make workloads WORKLOADS=<w> DLIO=<spec>` runs
those workloads against another DLIO (MLCommons DLIO 3.x for MLPerf Storage v3.0's unet3d_b200, retinanet_b200 and
llama3 shapes) and their rows say so; the bundled workloads listed as without a reference config are the main DLIO's
(the one most rows ran against).

Exit status: 0 every workload run passed or was refused by the kernel (a refusal is a result), 1 a workload failed,
2 bad input (an unknown workload, no reference DLIO venv)."""
from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from common.fileio import write_json_atomic, write_text_atomic
from fidelity.matrix import families, family_counts, row_of
from harness.workload import REFERENCE_CONFIGS, WorkloadError, dlio_config_dir, load
from pipeline import named_run

REPO = Path(__file__).resolve().parent.parent
THESIS = "thesis-"
# what each workload runs: make validate's pipeline, in a process of its own (its output is the workload's log; the
# run directory it made: the run directory line it prints, pipeline.named_run)
COMMAND = ("{python} -m pipeline --workload {workload} --scale {scale} --ranks {ranks} --runs-dir {runs_dir} "
           "--dlio-venv {venv}")
# the harness's refusal, printed before any launch (harness/__main__.py: "harness: error: ...")
REFUSAL = re.compile(r"^harness: error: (.*)$", re.M)
# its kernel refusal prefix and the YAML location in it: what the short reason leaves out
REFUSAL_PREFIX = re.compile(r"^workload \S+ \(\S+\) refused by the kernel for \d+ ranks: (workload:\d+: )?")


class MatrixError(ValueError):
    """Bad input (exit status 2)."""


def reference_workloads(ref_dir: Path) -> tuple[list[str], list[str]]:
    """(DLIO workloads, thesis configurations) among ref_dir's reference configs, by name."""
    names = sorted(p.stem for p in ref_dir.glob("*.yaml"))
    return [n for n in names if not n.startswith(THESIS)], [n for n in names if n.startswith(THESIS)]


def short_reason(reason: str) -> str:
    return REFUSAL_PREFIX.sub("", reason)


def verdict_text(row: dict) -> str:
    """One Markdown cell: PASS (37 pass, 1 skip), FAIL (2 fail, ...), refused: `<why>`, = `unet3d` (same ...): ..."""
    if row["status"] == "same":
        return f"= `{row['same_as']}` (same merged workload): " + verdict_text({**row, "status": row["same_status"]})
    if row["status"] == "refused":
        return f"refused: `{short_reason(row['reason'])}`"  # a code span: the kernel's reason may hold <, |, *
    counts = ", ".join(f"{n} {k}" for k in ("pass", "fail", "skip") if (n := row.get("summary", {}).get(k)))
    return f"{row['status'].upper()} ({counts})" if counts else row["status"].upper()


def _cell(row: dict, fam: str) -> str:
    c = family_counts(row.get("checks", {}), fam)
    return " ".join(f"{n} {k}" for k, n in c.items()) if c else "-"


def run_one(name: str, scale: str, ranks: int, runs_dir: Path, command: str, say) -> dict:
    """One `make validate` (command: the pipeline) and its row: the run's verdict, its failed launch, or the
    refusal."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    argv = shlex.split(command.format(workload=name, scale=scale, ranks=ranks, runs_dir=runs_dir))
    say(f"workloads: {name}: {shlex.join(argv)}")
    t0 = time.time()
    p = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    log = runs_dir / f".workloads-{name}.log"
    write_text_atomic(log, p.stdout + p.stderr)
    row = {"workload": name, "rc": p.returncode, "wall_s": round(time.time() - t0, 1), "log": str(log)}
    run = named_run(p.stdout)
    got = row_of(run) if run else None
    if got:
        return {**got, **row, "status": got["verdict"]}  # row_of's workload is <name>-<scale>: ours wins
    if run:  # a run directory without a verdict: a launch failed and validation did not run
        tail = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()][-3:]
        return {**row, "status": "fail", "run": run.name, "reason": " | ".join(tail)[-600:]}
    refused = REFUSAL.findall(p.stderr)
    reason = " ".join(refused) if refused else " | ".join(p.stderr.strip().splitlines()[-3:])[-600:]
    return {**row, "status": "refused" if refused else "fail", "reason": reason or f"exit status {p.returncode}"}


def build(names: list[str], scale: str, ranks: int, runs_dir: Path, command: str, ref_dir: Path,
          dlio_workloads: Path, say) -> list[dict]:
    rows, seen = [], []  # seen: (name, merged config) of the workloads run so far
    for name in names:
        try:
            wl = load(name, scale, dlio_workloads, ref_dir)
            base, cfg = wl.base, wl.config
        except WorkloadError:  # make validate says why, in its row
            base, cfg = None, None
        same = next((n for n, c in seen if cfg is not None and c == cfg), None)
        if same:
            say(f"workloads: {name}: the same merged workload as {same}: not run again")
            first = next(r for r in rows if r["workload"] == same)
            rows.append({**{k: v for k, v in first.items() if k not in ("rc", "wall_s", "log")}, "workload": name,
                         "status": "same", "same_as": same, "same_status": first["status"], "base": base})
            continue
        row = run_one(name, scale, ranks, runs_dir, command, say)
        row["base"] = base
        say(f"workloads: {name}: {verdict_text(row)}")
        rows.append(row)
        seen.append((name, cfg))
    return rows


def render_md(m: dict) -> str:
    fams = [f for f in families(m["rows"]) if f != "dlio.version"]
    others = sorted({r["dlio"] for r in m["rows"] if r.get("dlio", m["dlio"]) != m["dlio"]})
    L = ["# Workload matrix", "",
         f"Written by `make workloads` on {m['date']} (kernel {m['kernel_revision']}, DLIO {m['dlio']}"
         + (f"; the rows whose DLIO column says so against DLIO {', '.join(others)}" if others else "") + "): "
         f"`make validate WORKLOAD=<w> SCALE={m['scale']} RANKS={m['ranks']}` for every DLIO workload in "
         "`reference-configs/`, one at a time. Columns: the verdict, then the checks of each family by status (see "
         "docs/validation.md); a refused workload: the kernel's reason, given before any launch.", "",
         "| workload | DLIO base | DLIO | verdict | " + " | ".join(fams) + " | date | run |",
         "|" + "---|" * (6 + len(fams))]
    for r in m["rows"]:
        L.append(f"| `{r['workload']}` | {('`' + r['base'] + '`') if r.get('base') else '-'} | "
                 f"{r.get('dlio', m['dlio'])} | {verdict_text(r)} | "
                 + " | ".join(_cell(r, f) for f in fams) + f" | {r.get('date') or m['date']} | {r.get('run', '-')} |")
    L += ["", "Failed checks:", ""]
    L += [f"- `{r['workload']}`: " + (", ".join(r.get("failed", [])) or r.get("reason", "none"))
          for r in m["rows"] if r["status"] == "fail"] or ["- none"]
    L += ["", "DLIO's bundled workloads that no reference config overlays (not run): "
          + (", ".join(f"`{n}`" for n in m["without_reference"]) or "none") + ".", "",
          "Thesis configurations (DLIO's `default` reshaped; `make paper`, not run here): "
          + (", ".join(f"`{n}`" for n in m["thesis"]) or "none") + "."]
    return "\n".join(L) + "\n"


def _kernel_revision() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (p.stdout.strip() or "unknown") + ("+dirty" if dirty else "")


def write(out: Path, rows: list[dict], names: list[str], thesis: list[str], dlio_workloads: Path,
          ref_dir: Path, scale: str, ranks: int, dlio: str) -> dict:
    """Rows of this invocation replace the same workloads' rows of out/workloads.json; rows of workloads that are no
    longer reference configs are dropped. Each row keeps the DLIO it ran against; the matrix's DLIO (and its bundled
    workloads without a reference config) stay the previous matrix's when this invocation ran another DLIO."""
    old, prev = {}, {}
    try:
        prev = json.loads((out / "workloads.json").read_text())
        if prev.get("scale") == scale and prev.get("ranks") == ranks:
            old = {r["workload"]: {"dlio": prev.get("dlio", "unknown"), **r} for r in prev.get("rows", [])}
        else:
            prev = {}
    except (OSError, ValueError):
        pass
    by = {**{k: v for k, v in old.items() if k in names}, **{r["workload"]: {**r, "dlio": dlio} for r in rows}}
    main = prev.get("dlio", dlio)
    bases = set()
    for n in names:
        try:
            bases.add(load(n, scale, dlio_workloads, ref_dir).base)
        except WorkloadError:
            pass
    without = (sorted(p.stem for p in dlio_workloads.glob("*.yaml") if p.stem not in bases) if main == dlio
               else prev.get("without_reference", []))
    m = {"date": time.strftime("%Y-%m-%d"), "kernel_revision": _kernel_revision(), "dlio": main, "scale": scale,
         "ranks": ranks, "rows": [by[n] for n in names if n in by], "without_reference": without, "thesis": thesis}
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "workloads.json", m)
    write_text_atomic(out / "workloads.md", render_md(m))
    return m


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workloads", default="", help="comma-separated subset (default: every DLIO workload in "
                   "reference-configs/, not thesis-*); their rows replace those of the committed matrix")
    p.add_argument("--scale", default="tiny", help="scale preset of every workload (default tiny)")
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks per side (default 2)")
    p.add_argument("--dlio-venv", type=Path, default=None, help="reference DLIO venv (default: build/.dlio-venv)")
    p.add_argument("--runs-dir", type=Path, default=REPO / "runs")
    p.add_argument("--out", type=Path, default=REPO / "fidelity", help="where workloads.json/.md go")
    p.add_argument("--ref-dir", type=Path, default=REFERENCE_CONFIGS, help=argparse.SUPPRESS)
    p.add_argument("--dlio-workloads", type=Path, default=None, help=argparse.SUPPRESS)  # tests: a fake DLIO
    p.add_argument("--command", default=COMMAND, help=argparse.SUPPRESS)  # tests: a fake make validate


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fidelity.workloads", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_parser(p)
    a = p.parse_args(argv)
    try:
        names, thesis = reference_workloads(a.ref_dir)
        if a.workloads:
            asked = [w for w in a.workloads.split(",") if w]
            bad = [w for w in asked if w not in names]
            if bad or not asked:
                raise MatrixError(f"WORKLOADS={a.workloads}: " + (f"not DLIO workloads of {a.ref_dir}: {bad} "
                                  if bad else "empty list ") + f"(known: {', '.join(names)})")
            names = [n for n in names if n in asked]
        if a.ranks < 1:
            raise MatrixError(f"RANKS={a.ranks}: must be at least 1")
        dlio, venv = "unknown", a.dlio_venv
        if a.dlio_workloads is None:
            venv = a.dlio_venv or (Path((REPO / "build" / ".dlio-venv").read_text().strip())
                                   if (REPO / "build" / ".dlio-venv").exists() else None)
            if venv is None or not (venv / "bin" / "python").exists():
                raise MatrixError("no reference DLIO venv: run `make dlio-venv` or pass --dlio-venv")
            a.dlio_workloads = dlio_config_dir(str(venv / "bin" / "python"))
            dlio = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; "
                                   "print(m.version('dlio-benchmark'))"], capture_output=True, text=True).stdout.strip()
    except (MatrixError, WorkloadError) as e:
        print(f"workloads: error: {e}", file=sys.stderr)
        return 2
    command = a.command.replace("{python}", shlex.quote(sys.executable)).replace("{venv}", shlex.quote(str(venv)))
    rows = build(names, a.scale, a.ranks, a.runs_dir.resolve(), command, a.ref_dir, a.dlio_workloads,
                 lambda s: print(s, flush=True))
    m = write(a.out, rows, reference_workloads(a.ref_dir)[0], thesis, a.dlio_workloads, a.ref_dir, a.scale,
              a.ranks, dlio)
    print(f"workloads: {len(m['rows'])} workloads in {a.out / 'workloads.md'}")
    return 1 if any(r["status"] == "fail" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
