"""One launch's collect (Profile.collect, as the harness's collection calls it) under tracemalloc, with pydarshan
and pandas imported before the measurement starts: peak and kept (what the returned tables hold) bytes per data file.
Usage: PYTHONPATH=<tree> python launchmem.py RUN_DIR STEP   (e.g. kernel.darshan; prints one JSON object)"""
import json
import sys
import tracemalloc
from pathlib import Path

import darshan  # noqa: F401  (imported outside the measurement, as the harness has it loaded by then)
import pandas  # noqa: F401

from harness.plan import OTHER
from profiles import Done, owner

run, name = Path(sys.argv[1]), sys.argv[2]
m = json.loads((run / "manifest.json").read_text())
rec = m["steps"][name]
side, step = name.split(".", 1)
files = int(m["workload"]["config"]["dataset"]["num_files_train"])
tracemalloc.start()
t = owner(step).collect(Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], run / side / "data",
                             run / OTHER[side] / "data"))
cur, peak = tracemalloc.get_traced_memory()
print(json.dumps({name: {"peak_bytes_per_file": peak // files, "kept_bytes_per_file": cur // files}}))
