"""One launch's DFTracer collect, as the harness's collection calls it (Profile.collect on the step's Done), its
tables written through RunDir.write_table into OUT/tables/: wall and CPU time, the process's peak RSS (getrusage)
and its RSS once the modules are imported (the baseline the per-file figure leaves out).
Usage: PYTHONPATH=<tree> python collect1.py RUN_DIR STEP OUT   (STEP e.g. kernel.dftracer; prints one JSON object)"""
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy  # noqa: F401  (the new tree imports it with profiles.dftracer; imported first in both trees)

from common.rundir import RunDir
from harness.plan import OTHER
from profiles import Done, owner


def rss_kb() -> int:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


run, name, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
m = json.loads((run / "manifest.json").read_text())
rec = m["steps"][name]
side, step = name.split(".", 1)
files = int(m["workload"]["config"]["dataset"]["num_files_train"])
prof = owner(step)
base = rss_kb()
load0 = os.getloadavg()[0]
t, c = time.perf_counter(), time.process_time()
tables = prof.collect(Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], run / side / "data",
                           run / OTHER[side] / "data"))
for table, obj in tables.items():
    RunDir(out).write_table(table, obj)
wall, cpu = time.perf_counter() - t, time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"step": name, "files": files, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                  "peak_rss_mb": round(peak / 1024, 1), "base_rss_mb": round(base / 1024, 1),
                  "peak_over_base_bytes_per_file": (peak - base) * 1024 // files,
                  "load1": [round(load0, 1), round(os.getloadavg()[0], 1)]}))
