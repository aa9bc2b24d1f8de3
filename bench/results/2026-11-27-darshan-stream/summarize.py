"""The committed numbers of measure.sh's outputs: per run (LABEL=OUT), for each tree, the Darshan part of collection
(parse and write seconds, user+system CPU seconds and peak RSS from /usr/bin/time -v), tracemalloc's peak and kept
bytes per data file, the import floor, and the tables compared.
Usage: python summarize.py LABEL=OUT... > results.json"""
import json
import sys
from pathlib import Path


def gnu_time(path: Path) -> dict:
    if not path.exists():
        return {}
    v = {}
    for line in path.read_text().splitlines():
        k, _, x = line.strip().rpartition(": ")
        v[k] = x
    m, s = v["Elapsed (wall clock) time (h:mm:ss or m:ss)"].rsplit(":", 1)
    return {"wall_s": round(float(m.split(":")[-1]) * 60 + float(s), 2),
            "cpu_s": round(float(v["User time (seconds)"]) + float(v["System time (seconds)"]), 2),
            "peak_rss_mb": round(int(v["Maximum resident set size (kbytes)"]) / 1024, 1)}


def one(out: Path) -> dict:
    res = {}
    for tree in ("old", "new"):
        if not (out / f"{tree}.json").exists():
            continue
        part = json.loads((out / f"{tree}.json").read_text())
        (name, launch), = part["launches"].items()
        files = sum(launch["files"].values())
        tm = json.loads((out / f"{tree}.tracemalloc.json").read_text())[name] \
            if (out / f"{tree}.tracemalloc.json").exists() else {}
        t = gnu_time(out / f"{tree}.time")
        res[tree] = {"launch": name, "data_files_in_table": files, "parse_s": launch["parse_s"],
                     "write_s": launch["write_s"], **t, "tracemalloc_bytes_per_file": tm}
    floor = gnu_time(out / "import.time").get("peak_rss_mb")
    res["import_floor_rss_mb"] = floor
    for tree in ("old", "new"):
        if tree in res:
            r = res[tree]
            r["rss_bytes_per_file_over_floor"] = int((r["peak_rss_mb"] - floor) * 2**20 / r["data_files_in_table"])
    if (out / "cmp.txt").exists():
        res["tables_identical"] = (out / "cmp.txt").read_text().splitlines()
    return res


print(json.dumps({a.split("=", 1)[0]: one(Path(a.split("=", 1)[1])) for a in sys.argv[1:]}, indent=1))
