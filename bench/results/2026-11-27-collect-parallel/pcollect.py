"""Time the harness's collection of an existing run directory with COLLECT_JOBS=N (harness/run.py collect); print
each lane's wall, CPU (its own and its children's) and peak RSS when it ends. The tables are rewritten in place:
compare them with a copy taken before.

    pcollect.py RUN_DIR JOBS"""
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from harness import collect as hcollect  # noqa: E402
from harness.paths import REPO  # noqa: E402

ORIG = hcollect._collect_lane


def timed(rd, lane, venv, jobs=1):
    t0, c0 = time.time(), os.times()
    out = ORIG(rd, lane, venv, jobs)
    c1 = os.times()
    user = c1.user - c0.user + c1.children_user - c0.children_user
    sys_ = c1.system - c0.system + c1.children_system - c0.children_system
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"  lane {[n for n, _ in lane]}: {time.time() - t0:.1f} s wall, {user:.1f} s user {sys_:.1f} s sys, "
          f"peak {peak:.0f} MB (children {child:.0f} MB) [{time.strftime('%H:%M:%S')}]", flush=True)
    return out


def main() -> None:
    rd, jobs = Path(sys.argv[1]), int(sys.argv[2])
    m = json.loads((rd / "manifest.json").read_text())
    hcollect._collect_lane = timed
    t0 = time.time()
    hcollect.collect(rd, m, Path((REPO / "build" / ".dlio-venv").read_text().strip()), jobs)
    print(f"collect jobs={jobs}: {time.time() - t0:.1f} s wall; errors {m['collect_errors']}", flush=True)


if __name__ == "__main__":
    main()
