"""results.json from run.sh's outputs (and recollect.py's under /usr/bin/time -v, when given): each tree's collect
of each side, the per-file bytes, the speed-ups, and whether every table the two trees wrote is identical.
Usage: python summarize.py OUT FIRST_OUT [LABEL RECOLLECT_JSON TIME_V_LOG]...   (prints one JSON object; FIRST_OUT:
an earlier run.sh pair, summarized the same way as "first_pair")"""
import filecmp
import json
import re
import sys
from pathlib import Path

EVENTS = {"kernel": 1839366, "dlio": 2875473}  # the run's tables: "events" (complete events parsed)


def sides(out: Path) -> dict:
    res = {}
    for side in ("kernel", "dlio"):
        r = {t: json.loads((out / t / side / "collect.json").read_text()) for t in ("old", "new")}
        tabs = sorted(p.name for p in (out / "old" / side / "tables").iterdir())
        same = {n: filecmp.cmp(out / "old" / side / "tables" / n, out / "new" / side / "tables" / n, shallow=False)
                for n in tabs}
        res[side] = {**r, "events": EVENTS[side], "tables_identical": same,
                     "cpu_speedup": round(r["old"]["cpu_s"] / r["new"]["cpu_s"], 2),
                     "wall_speedup": round(r["old"]["wall_s"] / r["new"]["wall_s"], 2),
                     "new_cpu_us_per_event": round(r["new"]["cpu_s"] / EVENTS[side] * 1e6, 2),
                     "old_cpu_us_per_event": round(r["old"]["cpu_s"] / EVENTS[side] * 1e6, 2)}
    return res


def main() -> None:
    res: dict = {"run": "/work/field148k/runs/unet3d-field-20261127-120546", "files": 148000,
                 "sides": sides(Path(sys.argv[1])), "first_pair": sides(Path(sys.argv[2]))}
    for label, rec, tv in zip(sys.argv[3::3], sys.argv[4::3], sys.argv[5::3], strict=True):
        text = Path(tv).read_text()
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
        res.setdefault("collection", {})[label] = {**json.loads(Path(rec).read_text().splitlines()[-1]),
                                                   "max_rss_mb": round(rss / 1024, 1)}
    print(json.dumps(res, indent=1))


main()
