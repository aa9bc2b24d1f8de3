"""Summarize measure.sh / run.sh output folders: per folder, the launches (the run's manifest), the collection with
its parts, `python -m validate` and `python -m reports` (wall time, peak RSS from /usr/bin/time -v), the verdict,
the dataset table's size and the load. Usage: python summarize.py LABEL=OUT_DIR... > results.json"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def gnu_time(p: Path) -> dict | None:
    if not p.exists():
        return None
    t = p.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) * 1024
    return {"wall_s": round(secs, 2), "peak_rss_mb": round(rss / 1e6, 1)}


def one(out: Path) -> dict:
    run = Path((out / "run").read_text().strip()) if (out / "run").exists() else None
    tables = {ln.split()[-1]: int(ln.split()[4]) for ln in (out / "tables.ls").read_text().splitlines()[1:]}
    r = {"out": str(out), "rc": (out / "rc").read_text().split("\n"), "load": (out / "load").read_text().strip(),
         "harness": gnu_time(out / "harness.time"), "collect": json.loads((out / "collect.json").read_text()),
         "collect_time": gnu_time(out / "collect.time"), "validate": gnu_time(out / "validate.time"),
         "reports": gnu_time(out / "reports.time"), "tables_bytes": tables,
         "run_dir_bytes": int((out / "du").read_text().split()[0])}
    verdict = [ln for ln in (out / "validate.out").read_text().splitlines() if ln.startswith("verdict:")]
    r["verdict"] = verdict[0] if verdict else None
    r["darshan_analyses"] = [ln.strip() for ln in (out / "validate.out").read_text().splitlines()
                             if "darshan.analyses" in ln]
    if run is not None:
        m = json.loads((run / "manifest.json").read_text())
        r["launches_s"] = {n: round(s["wall_s"], 1) for n, s in m["steps"].items()}
        r["launches_total_s"] = round(sum(s["wall_s"] for s in m["steps"].values()), 1)
    return r


def main() -> None:
    out = {}
    for arg in sys.argv[1:]:
        label, _, path = arg.partition("=")
        out[label] = one(Path(path))
    print(json.dumps(out, indent=1))


main()
