"""One run.sh output folder as results.json's entry: each launch's wall time (the run's manifest), the harness,
validate and reports under /usr/bin/time -v (wall, peak RSS), collection (the harness's wall less its launches;
resume.time: the collection again alone by `harness run --resume`), the 1-minute load seen every 30 s, the run
directory's bytes, each verdict (verdict-before.json: before the model fix, verdict.json after it), each program's
epoch (tables/timing.json's train_epoch_s, as validate's runtime.train_in_program reads it), DLIO's memory per launch
(memory.json). Usage: summarize.py OUT [OUT...] > results.json (keys: each OUT's name)."""
import json
import re
import sys
from pathlib import Path


def gnu_time(p: Path) -> dict | None:
    if not p.exists():
        return None
    t = p.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1).split(":")
    s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
    return {"wall_s": round(s, 1), "max_rss_mb": round(rss / 1024)}


def verdict(p: Path) -> dict | None:
    if not p.exists():
        return None
    v = json.loads(p.read_text())
    return {"verdict": v["verdict"], "summary": v["summary"], "failed": v.get("failed", [])}


def entry(out: Path) -> dict:
    m = json.loads((out / "manifest.json").read_text())
    launches = {k: round(s["wall_s"], 1) for k, s in m["steps"].items() if "wall_s" in s}
    run = Path((out / "run").read_text().strip())
    timing = json.loads((run / "tables" / "timing.json").read_text()) if (run / "tables" / "timing.json").exists() \
        else {}
    load = [float(line.split()[1]) for line in (out / "load").read_text().splitlines() if line.strip()]
    h = gnu_time(out / "harness.time")
    e = {"files": m["workload"]["config"]["dataset"]["num_files_train"], "launches_s": launches,
         "launches_total_s": round(sum(launches.values()), 1), "harness": h,
         "collection": {"wall_s": round(h["wall_s"] - sum(launches.values()), 1),
                        "how": "the harness's wall time less its launches' (DLIO's probe + collection)",
                        "rerun_with_resume": gnu_time(out / "resume.time")},
         "validate": gnu_time(out / "validate.time"), "validate_after_fix": gnu_time(out / "validate-after.time"),
         "reports": gnu_time(out / "reports.time"),
         "verdict_before_fix": verdict(out / "verdict-before.json"),
         "verdict": verdict(out / "verdict-after.json") or verdict(out / "verdict.json"),
         "run_directory_bytes": int((out / "du").read_text().split()[0]),
         "load_1min": [min(load), max(load)] if load else None,
         "epoch_in_program_s": {side: [x for s in timing.get(side, []) for x in s.get("train_epoch_s", [])]
                                for side in ("dlio", "kernel")},
         "dlio": {k: m["dlio"].get(k) for k in ("version", "revision", "source")},
         "profiles": m["profiles"], "ranks": m["ranks"], "created": m["created"]}
    if (out / "memory.json").exists():
        e["dlio_memory_per_launch"] = json.loads((out / "memory.json").read_text())
    return e


if __name__ == "__main__":
    json.dump({Path(o).name: entry(Path(o)) for o in sys.argv[1:]}, sys.stdout, indent=1)
    print()
