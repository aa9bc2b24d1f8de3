"""python -m validate RUN_DIR: write RUN_DIR/verdict.json, print the checks, exit 0 only on a PASS of a run made
without a kernel mutant (1 if a required check fails, the run is incomplete, or a mutant was injected; 2 if the run
directory is unusable)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.coreconfig import comparability, line
from common.rundir import MANIFEST, RunDir, SchemaError
from profiles import registry
from validate.checks import validate, verdict_label


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path, help="a run directory made by `python -m harness run`")
    p.add_argument("--quiet", action="store_true", help="print only the verdict line")


def print_table(v: dict, out=None) -> None:
    w = max(len(c["name"]) for c in v["checks"])
    for c in v["checks"]:
        mark = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}[c["status"]]
        req = "" if c["required"] else " (info)"
        print(f"  {mark}  {c['name']:<{w}}  {str(c['detail'])[:150]}{req}", file=out)


SHOWN = 5  # classes named per printed line (the rest counted; verdict.json and the report list every one)


def print_not_compared(v: dict, out=None) -> None:
    """What the verdict does not cover, one short line per thing that would compare it: its classes' labels."""
    by_needs: dict[str, list[str]] = {}
    for x in v.get("not_compared", []):
        by_needs.setdefault(x["needs"], []).append(x.get("label") or x["what"])
    for needs, labels in by_needs.items():
        more = f"; and {len(labels) - SHOWN} more (verdict.json not_compared)" if len(labels) > SHOWN else ""
        print(f"  not compared: {'; '.join(labels[:SHOWN])}{more} (needs {needs})", file=out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m validate", description=__doc__)
    setup_parser(p)
    a = p.parse_args(argv)
    rd = RunDir(a.run_dir)
    if not rd.manifest_path.exists():
        print(f"validate: error: {a.run_dir}: no {MANIFEST} (not a run directory)", file=sys.stderr)
        return 2
    try:
        m = rd.manifest  # its schema: a run of a newer tree is refused before any check (common.rundir.manifest_schema)
        for prof in registry().values():  # a profile's own environment (e.g. make validate DARSHAN_ANALYSES=)
            prof.check_environment()
    except (SchemaError, ValueError) as e:
        print(f"validate: error: {e}", file=sys.stderr)
        return 2
    v = validate(a.run_dir)
    v["comparability"] = comparability((m.get("workload") or {}).get("config") or {}, m.get("dlio"))  # not a check
    rd.write_verdict(v)
    if not a.quiet:
        print_table(v)
    s = v["summary"]
    print(f"verdict: {verdict_label(v)}  ({s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('skip', 0)} "
          f"skip)  {rd.verdict_path}")
    print_not_compared(v)
    print(f"  {line(v['comparability'])}")
    return 0 if v["verdict"] == "pass" and not v.get("mutant") else 1


if __name__ == "__main__":
    sys.exit(main())
