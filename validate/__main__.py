"""python -m validate RUN_DIR: write RUN_DIR/verdict.json, print the checks, exit 0 only if every required
check passes (1 if one fails, 2 if the run directory is unusable)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.fileio import write_json_atomic
from common.rundir import MANIFEST, RunDir
from profiles.darshan_analyses import mode as darshan_analyses_mode
from validate.checks import validate, verdict_label


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path, help="a run directory made by `python -m harness run`")
    p.add_argument("--quiet", action="store_true", help="print only the verdict line")


def print_table(v: dict, out=sys.stdout) -> None:
    w = max(len(c["name"]) for c in v["checks"])
    for c in v["checks"]:
        mark = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}[c["status"]]
        req = "" if c["required"] else " (info)"
        print(f"  {mark}  {c['name']:<{w}}  {str(c['detail'])[:150]}{req}", file=out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m validate", description=__doc__)
    setup_parser(p)
    a = p.parse_args(argv)
    rd = RunDir(a.run_dir)
    if not rd.manifest_path.exists():
        print(f"validate: error: {a.run_dir}: no {MANIFEST} (not a run directory)", file=sys.stderr)
        return 2
    try:
        darshan_analyses_mode()  # H5DLIO_DARSHAN_ANALYSES (make validate DARSHAN_ANALYSES=): refused before any check
    except ValueError as e:
        print(f"validate: error: {e}", file=sys.stderr)
        return 2
    v = validate(a.run_dir)
    write_json_atomic(rd.verdict_path, v)
    if not a.quiet:
        print_table(v)
    s = v["summary"]
    print(f"verdict: {verdict_label(v)}  ({s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('skip', 0)} "
          f"skip)  {rd.verdict_path}")
    for x in v.get("not_compared", []):  # what the PASS does not cover
        print(f"  not compared: {x['what']} (needs {x['needs']})")
    return 0 if v["verdict"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
