"""Describe one data folder as collection does (harness/describe_dataset.py) with PARTS describers at once; print
the wall, the CPU (children included), the files described and the peak RSS.

    describe_parts.py DATA_FOLDER PARTS"""
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from harness import describe_dataset  # noqa: E402


def main() -> None:
    folder, parts = Path(sys.argv[1]), int(sys.argv[2])
    t0, c0 = time.time(), os.times()
    d = describe_dataset.describe(folder, Path("/nonexistent"), parts=parts)
    c1 = os.times()
    user = c1.user - c0.user + c1.children_user - c0.children_user
    sys_ = c1.system - c0.system + c1.children_system - c0.children_system
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"parts={parts}: {time.time() - t0:.1f} s wall, user {user:.1f} sys {sys_:.1f}; files "
          f"{d['files_described']}; peak {peak:.0f} MB [{time.strftime('%H:%M:%S')}]", flush=True)


if __name__ == "__main__":
    main()
