"""python -m pipeline [--darshan-analyses M] [--dlio-quiet-map 0|1] [--no-report] [--quiet] [--runs-db FILE]
[--outcome FILE] HARNESS-RUN-OPTIONS...: what `make validate` does (`make help`): run both sides (python -m harness
run's options, --resume RUN_DIR among them), validate the run this invocation made, render its report and print
report.md's path last. Exit status: the pipeline package's (0 PASS, 1 FAIL, 2 bad input, 130 interrupted, 143
terminated).

python -m pipeline paper DIR ...: `make paper` (pipeline/paper.py).
python -m pipeline audit LEAF ...: `make audit` (pipeline/audit.py)."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

import pipeline
from common.fileio import write_json_atomic


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--darshan-analyses", default="", metavar="MODE",
                   help="DARSHAN_ANALYSES: which Darshan logs get pydarshan's summary and drishti (auto, all, none)")
    p.add_argument("--dlio-quiet-map", default="", metavar="0|1",
                   help="DLIO_QUIET_MAP: 1 passes --dlio-quiet-index-map to the harness")
    p.add_argument("--no-report", action="store_true", help="run and validate only (make fidelity-run, make paper)")
    p.add_argument("--quiet", action="store_true", help="validate prints its verdict line only")
    p.add_argument("--runs-db", type=Path, default=None, help="RUNS_DB: also keep the run in this run store")
    p.add_argument("--outcome", type=Path, default=None, metavar="FILE",
                   help="write the pass's outcome here as JSON: the run directory, each step's status and wall time "
                        "(fidelity.mutants reads it; not written when the pass is interrupted during validate)")
    return p.parse_known_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["audit"]:  # make audit: a results leaf's I/O contract, replayed by the kernel (pipeline/audit.py)
        from pipeline.audit import main as audit
        return audit(argv[1:])
    if argv[:1] == ["paper"]:  # make paper: the thesis experiment set, a pass per kernel-vs-DLIO pair
        from pipeline.paper import main as paper
        return paper(argv[1:])
    a, rest = parse(argv)
    try:
        pipeline.check_options(a.darshan_analyses, a.dlio_quiet_map)
        pipeline.kernel_env(_vol(rest))
    except pipeline.BadInput as e:
        print(f"pipeline: error: {e}", file=sys.stderr)
        return 2
    if a.dlio_quiet_map == "1":
        rest.append("--dlio-quiet-index-map")
    try:
        out = pipeline.one_pass(rest, a.darshan_analyses, not a.no_report, a.quiet, a.runs_db)
    except KeyboardInterrupt as e:  # during validate or the report (the harness returns 130 and 143 itself)
        from harness.__main__ import Terminated
        return 143 if isinstance(e, Terminated) else 130
    if a.outcome:
        write_json_atomic(a.outcome, out.as_json())
    return out.status


def _vol(rest: list[str]) -> str | None:
    """The harness's --vol among the options handed to it (its VOL_ASYNC kernel is set before it is imported)."""
    for i, x in enumerate(rest):
        if x == "--vol" and i + 1 < len(rest):
            return rest[i + 1]
        if x.startswith("--vol="):
            return x.split("=", 1)[1]
    return None


def _on_sigterm(signum, frame) -> None:
    """SIGTERM, handled as `python -m harness run` handles it: the running launch killed with its ranks, exit 143."""
    from harness.__main__ import Terminated
    raise Terminated()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.exit(main())
