"""The Darshan part of collection alone: each finished Darshan launch of a run parsed by the profile's own collect
and its tables written as the harness writes them (common.rundir.RunDir.write_table), into OUT/tables (never into
the run). The tree is whichever PYTHONPATH names, so one script times this tree and the one before it.
Usage: PYTHONPATH=<tree> python darshanpart.py RUN_DIR OUT [--import-only] [--data-root DIR]
(prints one JSON object; run it under /usr/bin/time -v for the peak RSS; --import-only stops after importing
pydarshan: the floor every parse pays; --data-root: the run directory whose data folders the logs name, when
RUN_DIR is a copy of one launch of it, its manifest's workdirs pointing into the copy)"""
import json
import resource
import sys
import time
from pathlib import Path

from common.rundir import RunDir
from harness.plan import OTHER
from profiles import Done, registry


def main() -> None:
    rd, out = Path(sys.argv[1]), Path(sys.argv[2])
    if "--import-only" in sys.argv:
        import darshan.backend.cffi_backend  # noqa: F401  (pydarshan: numpy, pandas, cffi, libdarshan-util)
        print(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
        return
    root = Path(sys.argv[sys.argv.index("--data-root") + 1]) if "--data-root" in sys.argv else rd
    m = json.loads((rd / "manifest.json").read_text())
    prof, res = registry()["darshan"], {"launches": {}}
    for name, rec in m["steps"].items():
        side, step = name.split(".", 1)
        if rec.get("status") != "ok" or step != "darshan":
            continue
        done = Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], root / side / "data",
                    root / OTHER[side] / "data")
        t = time.perf_counter()
        tables = prof.collect(done)
        parsed = time.perf_counter()
        files = {k: len(v["files"]) for k, v in tables.items()}
        for table, obj in tables.items():
            RunDir(out).write_table(table, obj)
        del tables
        res["launches"][name] = {"parse_s": round(parsed - t, 2), "write_s": round(time.perf_counter() - parsed, 2),
                                 "files": files}
    res["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(res))


main()
