"""The command line of `python -m harness`: its subcommands and the run's arguments, each checked where it is parsed
(bad input names the make variable and the option), and each profile's own options (Profile.options)."""
from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from harness import plan as hplan
from harness import sizing, sweep
from harness import vol as hvol
from harness.launch import LAUNCHERS
from harness.paths import runs_home
from profiles import registry


def setup_parser(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run both sides under the chosen profiles")
    r.add_argument("--workload", default="unet3d",
                   help="a reference-configs/<name>.yaml, or the path of such a file (default unet3d)")
    r.add_argument("--scale", default=None, help="scale preset of the workload (default: its default_scale)")
    r.add_argument("--ranks", type=_count("RANKS", "--ranks"), default=2, help="MPI ranks per side (default 2)")
    r.add_argument("--launcher", type=_launcher, default="mpirun",
                   help="mpirun (default), mpiexec, or srun: each launch a job step (inside an allocation) or a job "
                        "of its own; --mpi=pmix unless SLURM_MPI_TYPE is set")
    r.add_argument("--sides", type=_sides, default=hplan.BOTH,
                   help="both (default: the kernel and DLIO side by side) or kernel (SIDES=kernel: the kernel's "
                        "launches only, validated against the analytic model alone, never against DLIO)")
    r.add_argument("--profiles", default=None,
                   help=f"comma-separated: {','.join(registry())} (default: every profile available here)")
    r.add_argument("--dlio-venv", type=Path, default=None, help="reference DLIO venv (default: build/.dlio-venv)")
    r.add_argument("--runs-dir", type=Path, default=runs_home())
    r.add_argument("--kernel-set", action="append", default=[], metavar="KEY=VALUE",
                   help="extra kernel --set for training launches (negative controls: the run must then fail)")
    r.add_argument("--rank-env", action="append", default=[], metavar="KEY=VALUE",
                   help="a variable for every rank of each side (generate and training launches, never the "
                        "launcher): the environment a results leaf records, as `python -m pipeline audit` replays "
                        "it (LD_PRELOAD: put ahead of a profile's own)")
    r.add_argument("--vol", default=None, metavar="STACK",
                   help=f"the kernel side's HDF5 VOL connector stack: {', '.join(hvol.STACKS)} (default native; "
                        "DLIO's side stays native; async stacks need H5DLIO_KERNEL_BIN at the kernel built against "
                        "the thread-safe HDF5, `make vol-kernel`; docs/vol.md)")
    r.add_argument("--reuse-dlio", type=Path, default=None, help="copy the DLIO side of an earlier run")
    r.add_argument("--dlio-quiet-index-map", action="store_true",
                   help="give DLIO's sample index map a short text (DLIO formats the whole map at every read: a cost "
                        "per read that grows with a rank's samples, hours per epoch at 10^5 files); no read changes "
                        "(docs/scale-record.md)")
    r.add_argument("--resume", type=Path, default=None, help="continue an interrupted run directory")
    for prof in registry().values():   # each profile's own options (Profile.options), given back in Context.options
        for o in prof.options:
            r.add_argument(o.flag, dest=o.dest, default=None, help=f"{o.help} (profile {prof.name})")
    r.add_argument("--repeat", type=_count("REPEAT", "--repeat"), default=1,
                   help="launches per side of a profile that repeats its launch to time it (default 1)")
    r.add_argument("--timeout", type=float, default=1800.0, help="seconds per launch (default 1800)")
    r.add_argument("--collect-jobs", type=_count("COLLECT_JOBS", "--collect-jobs"), default=min(4, os.cpu_count() or 1),
                   help="processes parsing the launches' traces and logs at once, at most one holding a per-file "
                        "table (default: the CPUs, at most 4)")
    sweep.setup_parser(sub.add_parser("sweep", help="a paper directory's paper.json and kernel-only scaling sweep",
                                      description=sweep.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter))
    sizing.setup_parser(sub.add_parser("sizing", help="the largest accelerator count whose AU meets the threshold",
                                       description=sizing.__doc__,
                                       formatter_class=argparse.RawDescriptionHelpFormatter))


def _launcher(text: str) -> str:
    if text not in LAUNCHERS:
        raise argparse.ArgumentTypeError(f"LAUNCHER={text} (--launcher): invalid choice (use "
                                         f"{', '.join(LAUNCHERS[:-1])} or {LAUNCHERS[-1]})")
    if not shutil.which(text):
        raise argparse.ArgumentTypeError(f"LAUNCHER={text} (--launcher): {text} not found on PATH")
    return text


def _sides(text: str) -> tuple[str, ...]:
    if text not in hplan.SIDE_CHOICES:
        raise argparse.ArgumentTypeError(f"SIDES={text} (--sides): invalid choice (use "
                                         f"{' or '.join(hplan.SIDE_CHOICES)})")
    return hplan.SIDE_CHOICES[text]


def _count(var: str, opt: str):
    """argparse type of a count >= 1; the message names both the make variable and the option."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{var}={text} ({opt}): not a whole number") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"{var}={text} ({opt}): must be at least 1")
        return n
    return parse


def profile_options(a: argparse.Namespace) -> dict:
    """Each profile's own options (Profile.options) as the command line set them: Context.options."""
    return {o.dest: getattr(a, o.dest, None) for p in registry().values() for o in p.options}
