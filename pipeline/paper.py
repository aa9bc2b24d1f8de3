"""python -m pipeline paper DIR ...: `make paper`, the thesis experiment set (docs/reports.md). Every launch goes
through the harness: the paper directory (`python -m harness sweep init`), each kernel-vs-DLIO pair one pass of the
pipeline (`python -m pipeline --no-report --quiet`: it validates the run it made, none if the harness stopped before
making one; a failed run still gets its verdict), the kernel-only strong scaling (`python -m harness sweep scaling`);
then one report over everything under DIR (`python -m reports DIR`, which only renders). Each step is a process of
its own, as the make recipe's shell loop did before (a pass's environment and kernel are its own).

Exit status: sweep init's or the report's when it fails (nothing after it runs); 130 when a step is interrupted
(nothing after it runs); 2 bad input (named; nothing runs); else 1 when a pass or the scaling sweep failed (after the
report is rendered; the last line names them), 0."""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pipeline paper", description=__doc__, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", type=Path, help="PAPER_DIR: the paper directory (made, or continued)")
    p.add_argument("--scale", required=True, help="PAPER_SCALE")
    p.add_argument("--ranks", required=True, help="PAPER_RANKS: ranks per side of the kernel-vs-DLIO runs")
    p.add_argument("--repeat", required=True, help="PAPER_REPEAT: timing launches per side, scaling repetitions")
    p.add_argument("--scaling-ranks", required=True, help="PAPER_SCALING_RANKS")
    p.add_argument("--workloads", required=True, help="PAPER_WORKLOADS: space-separated WORKLOAD:PROFILES pairs")
    p.add_argument("--scaling", required=True, help="PAPER_SCALING: the strong scaling's configurations")
    p.add_argument("--dlio-venv", required=True, help="the reference DLIO venv")
    return p.parse_args(argv)


def pairs(workloads: str) -> list[tuple[str, str]]:
    """PAPER_WORKLOADS as (workload, profiles) pairs; ValueError naming the variable and the entry."""
    out = []
    for wp in workloads.split():
        w, sep, prof = wp.partition(":")
        if not (w and sep and prof):
            raise ValueError(f"PAPER_WORKLOADS={workloads}: {wp!r} is not WORKLOAD:PROFILES")
        out.append((w, prof))
    if not out:
        raise ValueError(f"PAPER_WORKLOADS={workloads!r}: no WORKLOAD:PROFILES pair")
    return out


def step(args: list[str]) -> int:
    """`python -m ARGS...` in a process of its own (its output is the caller's); its exit status, 130 if
    interrupted."""
    try:
        return subprocess.run([sys.executable, "-m", *args], cwd=REPO).returncode
    except KeyboardInterrupt:
        return 130


def main(argv: list[str]) -> int:
    a = parse(argv)
    try:
        todo = pairs(a.workloads)
    except ValueError as e:
        print(f"make paper: error: {e}", file=sys.stderr)
        return 2
    d, t0, failed = a.dir.resolve(), time.time(), []
    rc = step(["harness", "sweep", "init", str(d), "--scale", a.scale, "--ranks", a.ranks, "--repeat", a.repeat,
               "--scaling-ranks", a.scaling_ranks])
    if rc:
        return rc
    for w, prof in todo:
        rc = step(["pipeline", "--no-report", "--quiet", "--workload", w, "--scale", a.scale, "--ranks", a.ranks,
                   "--repeat", a.repeat, "--profiles", prof, "--dlio-venv", a.dlio_venv, "--runs-dir",
                   str(d / "runs")])
        if rc == 130:
            return 130
        if rc:
            failed.append(w)
    rc = step(["harness", "sweep", "scaling", str(d), "--dlio-venv", a.dlio_venv, "--configs", a.scaling])
    if rc == 130:
        return 130
    if rc:
        failed.append("scaling")
    rc = step(["reports", str(d)])
    if rc:
        return rc
    print(f"make paper: {int(time.time() - t0)} s" + (f"; failed: {' '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0
