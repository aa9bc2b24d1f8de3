"""Launching one step: an argv list, a copied environment, a timeout, per-rank output; failure is data. The one
command builder: Launcher (the MPI launcher's argv: ranks, per-rank output, variables for the ranks only) and
kernel_argv (the kernel's)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# the launchers a run accepts (LAUNCHER=, --launcher; docs/validation.md's Variables names each): mpiexec takes
# mpirun's Open MPI options
LAUNCHERS = ("mpirun", "mpiexec", "srun")


@dataclass
class Launcher:
    kind: str = "mpirun"   # one of LAUNCHERS
    ranks: int = 2
    extra: tuple = ()

    def argv(self, logdir: Path | None, env: dict) -> list[str]:
        """Profile variables go to the ranks only (-x K=V / --export), never into the launcher itself: a preloaded
        tracer must not trace mpirun."""
        if self.kind in ("mpirun", "mpiexec"):
            a = [self.kind, "-np", str(self.ranks)]
            if os.geteuid() == 0:
                a.append("--allow-run-as-root")  # root in a VM / container only
            if self.ranks > (os.cpu_count() or 1):
                a.append("--oversubscribe")
            if logdir is not None:
                a += ["--output-filename", str(logdir)]
            for k, v in sorted(env.items()):
                a += ["-x", f"{k}={v}"]
            return a + list(self.extra)
        if self.kind == "srun":
            # --kill-on-bad-exit: a rank that fails ends the step, as under mpirun (else the others wait in a barrier);
            # --mpi=pmix: Debian's Open MPI 4.1 starts under Slurm's PMIx only (pmi2, none: MPI_Init fails), whatever
            # the site's MpiDefault; SLURM_MPI_TYPE in the environment chooses another
            a = ["srun", "-n", str(self.ranks), "--kill-on-bad-exit=1"]
            if not os.environ.get("SLURM_MPI_TYPE"):
                a.append("--mpi=pmix")
            if logdir is not None:  # the folder is made by execute(): srun does not make it
                a += ["--output", f"{logdir}/rank.%t.stdout", "--error", f"{logdir}/rank.%t.stderr"]
            if env:
                bad = sorted(k for k, v in env.items() if "," in f"{k}{v}")
                if bad:  # srun --export separates variables with commas
                    raise ValueError(f"LAUNCHER=srun: cannot pass {', '.join(bad)} to the ranks (a comma in it)")
                a.append("--export=ALL," + ",".join(f"{k}={v}" for k, v in sorted(env.items())))
            return a + list(self.extra)
        raise ValueError(f"LAUNCHER={self.kind}: use {', '.join(LAUNCHERS[:-1])} or {LAUNCHERS[-1]}")


def kernel_argv(binary: Path, config: Path, sets: Sequence[str], options: Sequence[str] = ()) -> list[str]:
    """The kernel's own argv: `h5dlio --config FILE [options] --set K=V ...` (a later --set wins)."""
    argv = [str(binary), "--config", str(config), *options]
    for s in sets:
        argv += ["--set", s]
    return argv


@dataclass
class Step:
    name: str           # e.g. "dlio.timing"
    side: str           # dlio | kernel
    profile: str        # generate, or a profile's step: timing, timing-2, logvfd, logvfd-rt0, dftracer, ...
    argv: list
    env_changes: dict
    workdir: Path
    logdir: Path | None
    timeout: float
    dirs: tuple = ()    # folders the profile needs to exist at launch (e.g. Darshan's log folder)
    files: tuple = ()   # (path, text) files the profile needs at launch (e.g. Darshan's config file)


def execute(step: Step, progress=print) -> dict:
    """Run one step; never raises for the program's failure: the result records it."""
    step.workdir.mkdir(parents=True, exist_ok=True)
    if step.logdir is not None:
        step.logdir.mkdir(parents=True, exist_ok=True)
    for d in step.dirs:
        Path(d).mkdir(parents=True, exist_ok=True)
    for path, text in step.files:
        Path(path).write_text(text)
    env = dict(os.environ)  # step.env_changes reach the ranks through the launcher's argv
    out = open(step.workdir / "launch.stdout", "w")
    err = open(step.workdir / "launch.stderr", "w")
    t0 = time.time()
    result = {"name": step.name, "side": step.side, "profile": step.profile, "argv": step.argv,
              "env_changes": step.env_changes, "workdir": str(step.workdir), "started": t0}
    try:
        proc = subprocess.Popen(step.argv, env=env, stdout=out, stderr=err, cwd=step.workdir,
                                start_new_session=True)
    except OSError as e:
        out.close()
        err.close()
        return {**result, "status": "failed", "rc": None, "wall_s": 0.0, "detail": f"cannot start: {e}"}
    try:
        last = t0
        while True:
            try:
                rc = proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                now = time.time()
                if now - t0 > step.timeout:
                    _kill(proc)
                    return {**result, "status": "timeout", "rc": None, "wall_s": now - t0,
                            "detail": f"killed after {step.timeout:.0f} s"}
                if now - last >= 15:
                    progress(f"    ... {step.name} running {now - t0:.0f} s")
                    last = now
    except KeyboardInterrupt:
        _kill(proc)
        raise
    finally:
        out.close()
        err.close()
    wall = time.time() - t0
    status = "ok" if rc == 0 else "failed"
    detail = "" if rc == 0 else _tail(step.workdir / "launch.stderr")
    if rc == 0 and (lost := _srun_launch_failed(step.workdir / "launch.stderr")):
        status, detail = "failed", f"srun exited 0 but started no task: {lost}"
    return {**result, "status": status, "rc": rc, "wall_s": wall, "detail": detail}


def _kill(proc: subprocess.Popen) -> None:
    """End the whole launch (mpirun and every rank): SIGTERM to the process group, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


# Slurm 22.05's srun exits 0 when slurmd cannot start the tasks (e.g. an output file it cannot open)
_SRUN_LAUNCH_FAILED = re.compile(r"^srun: error: (task \S+ launch failed: .*)$", re.M)


def _srun_launch_failed(path: Path) -> str:
    try:
        return " | ".join(_SRUN_LAUNCH_FAILED.findall(path.read_text(errors="replace")))[-800:]
    except OSError:
        return ""


# Open MPI's boilerplate around a failed job: it would push the program's own message out of the detail
_MPI_NOISE = re.compile(r"Primary job +terminated normally|a non-zero exit code\. Per user-direction|mpirun detected "
                        r"that one or more|the job to be terminated\. The first|^\s*(Process name|Exit code):|"
                        r"MPI_ABORT was invoked|^with errorcode|NOTE: invoking MPI_ABORT|You may or may not see "
                        r"output|exactly when Open MPI kills|more process(es)? ha(s|ve) sent help message|"
                        r"Set MCA parameter \"orte_base_help_aggregate\"")


def _tail(path: Path, n: int = 6) -> str:
    """The last lines of a launch's stderr that say what failed: the program's own lines first (the rank, file and
    cause of a kernel error), Open MPI's summary of the job ("... exited on signal 9") kept, its boilerplate not."""
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip() and not ln.startswith("---")]
    except OSError:
        return ""
    own = [ln for ln in lines if not _MPI_NOISE.search(ln)]
    return " | ".join((own or lines)[-n:])[-800:]


def eprint(*a) -> None:
    print(*a, file=sys.stderr, flush=True)
