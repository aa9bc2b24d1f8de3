"""What a fresh run's plan must pass before anything is launched or written: the kernel's own validator
(`h5dlio --dry-run`), what each profile can record at this shape, the disk and memory here (accept)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import yaml

from harness import resources
from harness import vol as hvol
from harness.launch import kernel_argv
from harness.paths import KERNEL_BIN
from harness.plan import Plan, chosen_profiles

# The kernel's warning for a shape the emulated DLIO release cannot run (config_check.c config_note_rank_shape)
DLIO_CANNOT_RUN = re.compile(r"^h5dlio: warning: (DLIO \S+ cannot run this at \d+ ranks: .*)$", re.M)


def own_checkpoint_format(dry_run_stdout: str) -> str | None:
    """The kernel's own checkpoint format (key checkpoint-format hdf5, ckpth5.c) has no DLIO counterpart (DLIO writes
    torch.save files): a side-by-side run of it would compare nothing. The reason, from the kernel's resolved config
    (its --dry-run JSON), or None."""
    try:
        cfg = json.loads(dry_run_stdout)
    except ValueError:
        return None
    if cfg.get("checkpoint") and cfg.get("checkpoint-format", "torch") != "torch":
        return (f"key 'checkpoint-format': {cfg['checkpoint-format']} is the kernel's own checkpoint format (DLIO "
                "writes torch.save files): nothing to validate side by side; run the kernel alone (build/h5dlio) or "
                "set h5dlio.checkpoint-format=torch")
    return None


def _dry_run(p: Plan, config: Path, rt0: bool) -> subprocess.CompletedProcess | None:
    """`h5dlio --dry-run --ranks N` of a training launch as harness.plan.launches builds it (the VOL connector's sets
    and plugin folder included: the kernel's dry run probes the stack, so a connector HDF5 cannot set up, or explicit
    async reads the launch cannot do, is refused here); rt0: its read_threads=0 variant. None: it could not run."""
    opt = p.opt
    sets = ["generate-data=true", *hvol.kernel_sets(opt.vol, p.in_rank(rt0)), *opt.kernel_sets] + \
        (["read-threads=0"] if rt0 else []) + ([f"dlio-version={opt.dlio_version}"] if opt.dlio_version else [])
    argv = kernel_argv(KERNEL_BIN, config, sets, options=["--dry-run", "--ranks", str(opt.ranks)])
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                              env={**os.environ, **hvol.kernel_env(opt.vol, opt.vol_plugins, p.in_rank(rt0))})
    except (OSError, subprocess.TimeoutExpired):
        return None


def precheck(plan: Plan, dlio_side: bool = True) -> str | None:
    """Validate the workload (and --kernel-set, and the VOL stack) with the kernel's own validator for opt.ranks
    ranks, before anything is launched or written: `h5dlio --dry-run --ranks N`, one process, no I/O (with explicit
    async reads and reader processes, once more as the read_threads=0 launches run). Returns the kernel's message when
    it refuses the workload (exit 2), or, with dlio_side, when it says the emulated DLIO release cannot run this shape
    (DLIO 2.0.0 crashes on some ranks and hangs on the others: no comparison can come of it); None when it accepts it
    or cannot tell (any other failure: the run will say)."""
    wl, opt = plan.workload, plan.opt
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="h5dlio-precheck-") as f:
        f.write(yaml.safe_dump(plan.config, sort_keys=False))
        f.flush()
        variants = [False] + ([True] if opt.vol.prefetch and not plan.in_rank(False) else [])
        for rt0 in variants:
            p = _dry_run(plan, Path(f.name), rt0)
            if p is None:
                return None
            if p.returncode == 2:
                break
            if p.returncode != 0:
                return None
            own = own_checkpoint_format(p.stdout) if dlio_side and not rt0 else None
            if own:
                return f"workload {wl.name} ({wl.scale}): {own}"
            shape = DLIO_CANNOT_RUN.search(p.stderr) if dlio_side and not rt0 else None
            if shape:
                return f"workload {wl.name} ({wl.scale}) at {opt.ranks} ranks (RANKS): {shape.group(1)}"
        else:
            return None
    msg = " ".join(ln.removeprefix("h5dlio: error: ") for ln in p.stderr.splitlines() if ln.startswith("h5dlio:"))
    return f"workload {wl.name} ({wl.scale}) refused by the kernel for {opt.ranks} ranks" + \
        (f" (VOL={opt.vol.name}, its read_threads=0 launches)" if rt0 else "") + ": " + \
        (msg.replace(f.name, "workload") or p.stderr.strip()[-500:])


def accept(plan: Plan, runs_dir: Path) -> str | None:
    """Why a fresh run of the plan in runs_dir cannot start (None: it can): the kernel's validator (precheck), what a
    profile cannot record at this shape (Darshan's record memory), the disk and memory it needs here."""
    wl, opt = plan.workload, plan.opt
    why = precheck(plan)
    if why:
        return why
    for prof in chosen_profiles(opt):
        why = prof.refuse(plan.shape, runs_dir / f"{wl.name}-{wl.scale}-YYYYmmdd-HHMMSS" / "kernel" / "data")
        if why:
            return why
    return resources.check(wl.name, wl.scale, plan.config, opt.ranks, runs_dir,
                           dlio_launches=opt.reuse_dlio is None and "dlio" in opt.sides,
                           context=opt.dlio_rules.get("reader_context"))
