"""Re-run the harness's collection (parsing every launch into tables/) on a finished run, to time it alone (run.sh
runs it under /usr/bin/time -v). Usage: PYTHONPATH=<repo> python recollect.py RUN_DIR DLIO_VENV"""
import json
import sys
import time
from pathlib import Path

from harness.collect import collect

rd, venv = Path(sys.argv[1]), Path(sys.argv[2])
m = json.loads((rd / "manifest.json").read_text())
t = time.time()
collect(rd, m, venv)
print(f"collect_s {time.time() - t:.2f} errors {m['collect_errors']}")
