"""python -m harness run ...: run the kernel and the reference DLIO side by side into runs/<workload>-<scale>-<time>/
(--sides kernel: the kernel's launches alone, validated against the analytic model only).

Exit status: 0 every launch succeeded, 1 a launch failed (the run directory keeps what was collected),
2 bad workload or options, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM); both resume with --resume RUN_DIR."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from common.rundir import MANIFEST, RunDir
from harness import plan as hplan
from harness import run as hrun
from harness import sizing, sweep
from harness import vol as hvol
from harness.cli import profile_options, setup_parser
from harness.precheck import accept
from harness.workload import REPO, WorkloadError, default_scale, dlio_config_dir, load
from profiles import Context, registry


def _venv(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    stamp = REPO / "build" / ".dlio-venv"
    if not stamp.exists():
        raise WorkloadError("no reference DLIO venv: run `make dlio-venv` or pass --dlio-venv")
    return Path(stamp.read_text().strip())


def _who(venv: Path) -> str:
    """How a user named the reference DLIO: DLIO=<checkout> for a source venv, else its venv."""
    from harness.dlio import info
    src = str(info(venv).get("source", ""))
    return f"DLIO={src.removeprefix('source:')}" if src.startswith("source:") else f"--dlio-venv {venv}"


def _reference(a: argparse.Namespace) -> tuple[Path, dict | None]:
    """The reference DLIO venv and the kernel entry whose rules its probed behaviour matches (refused here, before any
    launch; None on --resume: the run directory already names it). Raises WorkloadError."""
    venv = _venv(a.dlio_venv)
    if not (venv / "bin" / "dlio_benchmark").exists():
        raise WorkloadError(f"--dlio-venv {venv}: no bin/dlio_benchmark")
    if not hrun.KERNEL_BIN.exists():
        raise WorkloadError(f"kernel not built: {hrun.KERNEL_BIN} (run `make build`)")
    from harness.dlio import select as dlio_select
    return venv, None if a.resume else dlio_select(venv, hrun.KERNEL_BIN, who=_who(venv))


def _profiles(a: argparse.Namespace, ctx: Context, notes: list[str]) -> tuple[list[str], dict, dict, dict]:
    """The profiles this run uses (--profiles, else every one available here), each prepared: (profiles, what each
    found, the profiles skipped and why, the sides each prepared profile skips and why). Raises WorkloadError."""
    reg = registry()
    have = {name: p.available(ctx) for name, p in reg.items()}
    for prof in reg.values():
        why = prof.bad_options(ctx)
        if why:
            raise WorkloadError(why)
    asked = [x for x in (a.profiles or "").split(",") if x]
    bad = [x for x in asked if x not in have]
    if bad or (a.profiles is not None and not asked):
        raise WorkloadError(f"PROFILES={a.profiles} (--profiles): unknown {bad or 'empty list'} "
                            f"(known: {', '.join(have)})")
    for x in asked:
        if not have[x].ok:
            raise WorkloadError(f"PROFILES={a.profiles} (--profiles): {x} is not available here: {have[x].reason}")
    scale = a.scale or default_scale(a.workload)
    profiles = asked or [x for x in have if have[x].ok and reg[x].default_at(scale)]
    skipped = {x: have[x].reason for x in have if x not in profiles and not have[x].ok}
    for x, why in skipped.items():
        notes.append(f"harness: profile {x} skipped: {why}")
    for x in (x for x in have if not asked and have[x].ok and x not in profiles):
        notes.append(f"harness: profile {x} not run by default at SCALE={scale} (PROFILES=...,{x} runs it)")
    skip_sides = {}
    for x in profiles:
        sides = reg[x].prepare(ctx, have[x])
        if sides:
            skip_sides[x] = sides
        for side, why in sides.items():
            if side not in a.sides:  # a kernel-only run launches no DLIO side: nothing was skipped
                continue
            notes.append(f"harness: {x}: {side.upper() if side == 'dlio' else side} side skipped: {why}")
    return profiles, have, skipped, skip_sides


def _options(a: argparse.Namespace, dlio: dict | None, profiles: list[str], have: dict, skipped: dict,
             skip_sides: dict) -> hplan.Options:
    """The run's options, once --timeout and every --kernel-set are accepted. Raises WorkloadError."""
    if not 0 < a.timeout < float("inf"):
        raise WorkloadError(f"--timeout {a.timeout}: must be a positive number of seconds")
    for s in a.kernel_set:
        if "=" not in s:
            raise WorkloadError(f"--kernel-set {s!r}: expected KEY=VALUE")
    bad = [s for s in a.rank_env if "=" not in s or not s.split("=", 1)[0].isidentifier()]
    if bad:
        raise WorkloadError(f"--rank-env {bad[0]!r}: expected KEY=VALUE")
    if a.reuse_dlio is not None and "dlio" not in a.sides:
        raise WorkloadError(f"--reuse-dlio {a.reuse_dlio} with SIDES=kernel (--sides kernel): a kernel-only run has no "
                            "DLIO side to reuse")
    hvol.refuse_env()
    vol = hvol.stack(a.vol)
    return hplan.Options(ranks=a.ranks, launcher=a.launcher, profiles=profiles, kernel_sets=a.kernel_set,
                         rank_env=dict(s.split("=", 1) for s in a.rank_env),
                         vol=vol, vol_plugins=hvol.plugin_path(vol), timeout=a.timeout, reuse_dlio=a.reuse_dlio,
                         repeat=a.repeat, sides=a.sides, dlio_quiet_index_map=a.dlio_quiet_index_map,
                         collect_jobs=a.collect_jobs,
                         found={x: have[x].info for x in profiles}, skip_sides=skip_sides,
                         skipped_profiles={**skipped, **{f"{x}.{side}": why for x, sides in skip_sides.items()
                                                         for side, why in sides.items()}},
                         dlio_version=dlio["entry"] if dlio else None,
                         dlio_keys=dlio["probed"]["keys"] if dlio else None,
                         dlio_rules=dlio["probed"]["rules"] if dlio else {})


def _run_dir(a: argparse.Namespace, venv: Path, dlio: dict | None, opt: hplan.Options):
    """(run directory, plan, resume): the directory --resume names once it is resumable, and its plan, else a new one
    for the workload's plan, once the kernel's validator and the disk and memory here accept it. Raises
    WorkloadError."""
    if a.resume:
        if not RunDir(a.resume).manifest_path.exists():
            raise WorkloadError(f"--resume {a.resume}: no {MANIFEST}")
        why = hrun.check_resumable(a.resume)
        if why:
            raise WorkloadError(why)
        return a.resume, hplan.resumed(RunDir(a.resume).load(), opt, venv), True
    from harness.dlio import key_table
    wl = load(a.workload, a.scale, dlio_config_dir(str(venv / "bin" / "python")),
              keys=key_table(opt.dlio_keys, hrun.KERNEL_BIN))
    plan = hplan.build(wl, opt, venv, dlio)
    why = accept(plan, a.runs_dir)
    if why:
        raise WorkloadError(why)
    rd = a.runs_dir / f"{wl.name}-{wl.scale}-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 1
    while rd.exists():
        n += 1
        rd = rd.with_name(f"{rd.name.rsplit('.', 1)[0]}.{n}")
    return rd, plan, False


def _announce(a: argparse.Namespace, rd: Path, notes: list[str], started) -> None:
    for note in notes:  # only once every input is accepted: a refused run prints its error alone
        print(note, flush=True)
    print(f"harness: run directory {rd}", flush=True)
    if started:  # the caller in this process (python -m pipeline) learns its run directory: no pointer file
        started(rd)


def main(argv=None, started=None) -> int:
    """`started(run_dir)`, if given, is called once the run's directory is named (before any launch); every input
    refused before that returns 2 without calling it."""
    # H5DLIO_PROG: the name an installed tool goes by (`h5dlio sizing`: scripts/installed-tool.sh)
    p = argparse.ArgumentParser(prog=os.environ.get("H5DLIO_PROG", "python -m harness"), description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_parser(p)
    a = p.parse_args(argv)
    if a.cmd == "sweep":
        return sweep.dispatch(a)
    if a.cmd == "sizing":
        return sizing.dispatch(a)
    a.runs_dir = a.runs_dir.resolve()  # DLIO's --config-dir is resolved from each launch's own folder
    if a.resume:
        a.resume = a.resume.resolve()
    notes: list[str] = []
    try:
        venv, dlio = _reference(a)
        ctx = Context(venv, hrun.KERNEL_BIN, profile_options(a))
        opt = _options(a, dlio, *_profiles(a, ctx, notes))
        rd, plan, resume = _run_dir(a, venv, dlio, opt)
    except WorkloadError as e:
        print(f"harness: error: {e}", file=sys.stderr)
        return 2
    _announce(a, rd, notes, started)
    try:
        m = hrun.run(rd, plan, resume, progress=lambda s: print(s, flush=True))
    except Terminated:
        return 143
    except KeyboardInterrupt:
        return 130
    except ValueError as e:
        print(f"harness: error: {e}", file=sys.stderr)
        return 2
    print(f"harness: {m['status']}: {rd}", flush=True)
    return 0 if m["status"] == "complete" else 1


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch system's cancel, kill): handled as Ctrl-C is, so that the running launch (mpirun in a session
    of its own, which a signal to the harness alone does not reach) is killed with its ranks and the run directory
    marked interrupted, resumable; exit 143."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.exit(main())
