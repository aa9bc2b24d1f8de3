"""Summarize field-scale runs measured by run.sh (this folder): per run, each launch's wall time (the manifest), the
harness's collection, `python -m validate` and `python -m reports` (wall time and peak RSS from /usr/bin/time -v),
the run directory's size, the verdict (pass/fail/skip counts, the skipped checks and their reasons, the order
checks' statuses). Usage: python summarize.py OUT_DIR... > results.json (each OUT_DIR one run.sh output folder)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def gnu_time(p: Path) -> dict:
    """Wall seconds and peak RSS (bytes) of a /usr/bin/time -v report."""
    t = p.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) * 1024
    return {"wall_s": round(secs, 2), "peak_rss": rss}


def one(out: Path) -> dict:
    run = Path(out.joinpath("run").read_text().strip())
    m = json.loads((run / "manifest.json").read_text())
    v = json.loads((run / "verdict.json").read_text())
    launches = {n: round(r["wall_s"], 2) for n, r in m["steps"].items()}
    checks = v.get("checks") or v.get("results") or []
    skipped = {c["name"]: c.get("detail", "") for c in checks if c.get("status") == "skip"}
    order = {c["name"]: c["status"] for c in checks if re.search(r"sequence|order", c["name"])}
    steps = {k: gnu_time(out / f"{k}.time") for k in ("harness", "collect", "validate", "reports")}
    du = out.joinpath("du").read_text().split()
    launch_s = sum(launches.values())
    judge_s = steps["collect"]["wall_s"] + steps["validate"]["wall_s"] + steps["reports"]["wall_s"]
    return {"run": run.name, "files": m["workload"]["config"]["dataset"]["num_files_train"], "ranks": m["ranks"],
            "profiles": m["profiles"], "skipped_profiles": m.get("skipped_profiles"), "launches_s": launches,
            "launches_total_s": round(launch_s, 1), "steps": steps, "run_dir_bytes": int(du[0]),
            "validation_s": round(judge_s, 1), "validation_share_of_launches": round(judge_s / launch_s, 3),
            "verdict": v.get("verdict") or v.get("status"), "summary": v.get("summary"), "failed": v.get("failed"),
            "skipped_checks": skipped, "order_checks": order}


def markdown(rows: list[dict]) -> str:
    """The docs/scale-record.md table: one row per run."""
    out = ["| files | launches (DLIO / kernel), s | collection | `python -m validate` | `python -m reports` | "
           "validation / launches | run directory | verdict |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = sum(v for k, v in r["launches_s"].items() if k.startswith("dlio."))
        k = sum(v for k, v in r["launches_s"].items() if k.startswith("kernel."))
        cell = {s: f"{t['wall_s']:.1f} s, {t['peak_rss'] / 1e6:.0f} MB" for s, t in r["steps"].items()}
        sm = r["summary"] or {}
        counts = ", ".join(f"{sm[x]} {x}" for x in ("pass", "fail", "skip") if sm.get(x))
        out.append(f"| {r['files']:,} | {r['launches_total_s']:.0f} ({d:.0f} / {k:.1f}) | {cell['collect']} | "
                   f"{cell['validate']} | {cell['reports']} | {r['validation_share_of_launches']:.0%} | "
                   f"{r['run_dir_bytes'] / 1e6:.0f} MB | {str(r['verdict']).upper()} ({counts}) |")
    out += ["", "| launch, s | " + " | ".join(f"{r['files']:,} files" for r in rows) + " |",
            "|---|" + "---|" * len(rows)]
    for name in rows[0]["launches_s"]:
        out.append(f"| `{name}` | " + " | ".join(f"{r['launches_s'].get(name, float('nan')):.1f}" for r in rows)
                   + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1] == "--md":
        print(markdown(json.loads(Path(sys.argv[2]).read_text())))
    else:
        json.dump([one(Path(a)) for a in sys.argv[1:]], sys.stdout, indent=1)
        print()
