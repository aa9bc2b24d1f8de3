"""python -m fidelity [RUN_DIR|RUNS_FOLDER ...] [--out fidelity]: update the DLIO version matrix (matrix.json,
matrix.md) from run directories' verdicts and write a divergence report for every failing version.
Exit status: 0 every row passes, 1 a row fails, 2 no run directory with a verdict found."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fidelity.matrix import REPO, find_runs, write


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", type=Path, default=[REPO / "runs"],
                   help="run directories, or folders of them (default: runs/)")
    p.add_argument("--out", type=Path, default=REPO / "fidelity", help="where matrix.json/.md go (default fidelity/)")
    p.add_argument("--reference", default="2.0.0", help="the version whose workload the config keys compare with")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fidelity", description=__doc__)
    setup_parser(p)
    a = p.parse_args(argv)
    runs = find_runs(a.paths)
    if not runs:
        print(f"fidelity: no run directory with a verdict.json under {', '.join(map(str, a.paths))}", file=sys.stderr)
        return 2
    m = write(a.out, runs, a.reference)
    for r in m["rows"]:
        print(f"  {r['version']:<12} {r['verdict']:<5} entry {r['entry']}{' (nearest)' if r['nearest'] else '':<10} "
              f"{r['date']}  {r['run']}")
    print(f"fidelity: {len(m['rows'])} versions in {a.out / 'matrix.md'}")
    return 0 if all(r["verdict"] == "pass" for r in m["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
