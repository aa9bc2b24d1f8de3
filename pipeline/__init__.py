"""The pipeline in one place: run (the harness) -> validate (the verdict) -> report, in this process.

Why a package of its own: data and imports flow one way (harness -> run directory -> validate -> reports; tests/
test_sources.py MAY_IMPORT), so the one step that calls all three sits above them and can live in none of them.
`make validate`, `make fidelity-run`, `make paper`, fidelity's mutation matrix and `make bench`'s validation cost use
it; it knows the run directory it made in-process (harness.__main__.main's `started`): no pointer file.

Exit status (`python -m pipeline`, `make validate`): 0 PASS (and the report rendered), 1 a launch failed, the verdict
FAILs or the report was not rendered, 2 bad input (named; nothing launched), 130 interrupted (Ctrl-C), 143
terminated (SIGTERM); an interrupted run resumes with --resume RUN_DIR."""
from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass, fields
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DARSHAN_ANALYSES = ("auto", "all", "none")  # profiles.darshan_analyses.MODES, as make validate names them
VOL_ASYNC = ("async", "async-prefetch")  # the stacks whose kernel is built against the thread-safe HDF5
VOL_KERNEL = REPO / "build" / ".vol-kernel"  # mk/vol.mk vol-kernel writes that kernel's path here
# the line `python -m harness run` (and so `python -m pipeline`) prints once its run directory is named
RUN_LINE = re.compile(r"^harness: run directory (.+)$", re.M)


class BadInput(ValueError):
    """An option refused before anything runs (exit 2); the message names the make variable."""


@dataclass
class Outcome:
    """What one pass made: the run directory (None: the harness stopped before naming one), each step's status
    (None: the step did not run) and its wall time in s, timed in this process around the step (`--outcome FILE`
    writes them: the mutation matrix's run and validate times)."""
    run: Path | None
    harness: int
    validate: int | None = None
    report: int | None = None
    harness_s: float | None = None
    validate_s: float | None = None
    report_s: float | None = None

    def as_json(self) -> dict:
        """The outcome as `--outcome FILE` writes it (the run directory a string or null)."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "status": self.status,
                "run": str(self.run) if self.run else None}

    @property
    def status(self) -> int:
        """The pass's exit status: the harness's if it failed, else validate's, else the report's."""
        for rc in (self.harness, self.validate, self.report):
            if rc:
                return rc
        return 0


def check_options(darshan_analyses: str, dlio_quiet_map: str) -> None:
    """DARSHAN_ANALYSES and DLIO_QUIET_MAP as make validate takes them; raises BadInput naming the variable."""
    if darshan_analyses not in ("", *DARSHAN_ANALYSES):
        raise BadInput(f"DARSHAN_ANALYSES={darshan_analyses}: not one of {', '.join(DARSHAN_ANALYSES)}")
    if dlio_quiet_map not in ("", "0", "1"):
        raise BadInput(f"DLIO_QUIET_MAP={dlio_quiet_map}: not 0 or 1")


def kernel_env(vol: str | None) -> None:
    """The async stacks run the kernel built against the thread-safe HDF5 (H5DLIO_KERNEL_BIN, read when the harness
    is imported): set from build/.vol-kernel unless the caller named one. Raises BadInput."""
    if vol not in VOL_ASYNC or os.environ.get("H5DLIO_KERNEL_BIN"):
        return
    if not VOL_KERNEL.exists():
        raise BadInput(f"VOL={vol}: no {VOL_KERNEL} (run `make vol-kernel`)")
    os.environ["H5DLIO_KERNEL_BIN"] = VOL_KERNEL.read_text().strip()


def named_run(output: str) -> Path | None:
    """The run directory a `python -m pipeline` or `python -m harness run` in another process named in its output
    (its RUN_LINE; None: it stopped before naming one). For callers that keep each run in a process of its own."""
    found = RUN_LINE.findall(output)
    return Path(found[-1].strip()) if found else None


def run(harness_argv: list[str]) -> tuple[int, Path | None]:
    """`python -m harness run ...` in this process: its status and the run directory it named (None: none)."""
    from harness.__main__ import main as harness_main
    named: list[Path] = []
    rc = harness_main(["run", *harness_argv], started=named.append)
    return rc, named[-1] if named else None


def validate(run_dir: Path, quiet: bool = False, darshan_analyses: str | None = None) -> int:
    """`python -m validate RUN_DIR` in this process (DARSHAN_ANALYSES: H5DLIO_DARSHAN_ANALYSES, as make gives it; None:
    the environment's)."""
    from validate.__main__ import main as validate_main
    before = os.environ.get("H5DLIO_DARSHAN_ANALYSES")
    if darshan_analyses is not None:
        os.environ["H5DLIO_DARSHAN_ANALYSES"] = darshan_analyses
    try:
        return validate_main([str(run_dir), *(["--quiet"] if quiet else [])])
    finally:   # the caller's environment as it was (a caller in the same process validates more than one run)
        if before is None:
            os.environ.pop("H5DLIO_DARSHAN_ANALYSES", None)
        else:
            os.environ["H5DLIO_DARSHAN_ANALYSES"] = before


def report(run_dir: Path) -> int:
    """Render the run's report; print its report.md path (make validate's last line). 0, or 1 (said on stderr)."""
    from reports.__main__ import render
    try:
        with contextlib.redirect_stdout(sys.stderr):
            md = render(run_dir)
    except Exception:  # noqa: BLE001 - any failure of the report leaves the verdict standing; its status says it
        traceback.print_exc()
        print(f"pipeline: the report of {run_dir} was not rendered (exit 1)", file=sys.stderr)
        return 1
    print(md, flush=True)
    return 0


def link_predecessors(run_dir: Path, runs_db: Path) -> None:
    """RUNS_DB, before the report: the earlier runs of the workload on the same storage that the store holds, written
    into the run as predecessors.json (the report's "Earlier runs on this storage"); a store that cannot be read is
    said, never changes the pass's status, and leaves no file."""
    from common.rundir import RunDir
    from store import BadInput, predecessors
    try:
        found = predecessors.find(runs_db, run_dir)
    except (BadInput, OSError, ValueError) as e:
        print(f"pipeline: the run store {runs_db} was not searched for earlier runs on this storage ({e})",
              file=sys.stderr)
        return
    RunDir(run_dir).write_predecessors(found)


def keep(run_dir: Path, runs_db: Path) -> None:
    """RUNS_DB: add the run to the run store; a failure is said, never changes the pass's status."""
    from store.cmd_add import main as add
    with contextlib.redirect_stdout(sys.stderr):
        rc = add([str(run_dir), "--db", str(runs_db)])
    if rc:
        print(f"pipeline: {run_dir} was not kept in the run store {runs_db} (exit {rc}; validate's status is "
              "unchanged)", file=sys.stderr)


def one_pass(harness_argv: list[str], darshan_analyses: str | None = None, report_it: bool = True, quiet: bool = False,
             runs_db: Path | None = None) -> Outcome:
    """Run, then validate and report the run this pass made (none made, or the harness refused or was stopped: nothing
    is validated, no earlier run is shown)."""
    t0 = time.monotonic()
    rc, rd = run(harness_argv)
    out = Outcome(rd, rc, harness_s=round(time.monotonic() - t0, 1))
    if rc not in (0, 1):
        return out
    if rd is None:
        print(f"pipeline: the harness (exit {rc}) named no run directory", file=sys.stderr)
        out.harness = 1
        return out
    t0 = time.monotonic()
    out.validate = validate(rd, quiet, darshan_analyses)
    out.validate_s = round(time.monotonic() - t0, 1)
    if report_it:
        if runs_db:
            link_predecessors(rd, runs_db)
        t0 = time.monotonic()
        out.report = report(rd)
        out.report_s = round(time.monotonic() - t0, 1)
    if runs_db:
        keep(rd, runs_db)
    return out
