"""Copy one finished launch of a run (its folder only) and the run's manifest into DEST, the manifest's steps cut to
that launch and its workdir pointed into the copy, so that darshanpart.py (with --data-root RUN) reads the copy and
writes nothing into RUN. Usage: python copylaunch.py RUN STEP DEST   (e.g. kernel.darshan)"""
import json
import shutil
import sys
from pathlib import Path

run, step, dest = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
m = json.loads((run / "manifest.json").read_text())
rec = m["steps"][step]
if rec.get("status") != "ok":
    sys.exit(f"{run}: {step} is {rec.get('status')}, not finished well")
side, name = step.split(".", 1)
shutil.copytree(rec["workdir"], dest / side / name, symlinks=True)
m["steps"] = {step: {**rec, "workdir": str(dest / side / name)}}
(dest / "manifest.json").write_text(json.dumps(m, indent=1))
print(dest / side / name)
