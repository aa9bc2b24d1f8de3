"""Re-run the harness's collection (every launch's raw output parsed into tables/) on a finished run, alone, with
the time of each part: the dataset description per side and each profile's collect per launch (wrapped with a
timer; the tree is whichever PYTHONPATH names, so one script times this tree and the one before it).
Usage: PYTHONPATH=<tree> python recollect.py RUN_DIR DLIO_VENV  (prints one JSON object)"""
import json
import sys
import time
from pathlib import Path

from harness import collect as hcollect
from profiles import registry

parts: dict = {}


def timed(name, fn):
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            parts[name] = round(parts.get(name, 0.0) + time.perf_counter() - t, 2)
    return wrapper


def main() -> None:
    rd, venv = Path(sys.argv[1]), Path(sys.argv[2])
    m = json.loads((rd / "manifest.json").read_text())
    hcollect._collect_dataset = timed("dataset", hcollect._collect_dataset)
    for name, prof in registry().items():
        prof.collect = timed(f"collect.{name}", prof.collect)
        prof.merge = timed(f"merge.{name}", prof.merge)
    t = time.perf_counter()
    hcollect.collect(rd, m, venv)
    print(json.dumps({"collect_s": round(time.perf_counter() - t, 2), "parts_s": parts,
                      "errors": m["collect_errors"]}))


main()
