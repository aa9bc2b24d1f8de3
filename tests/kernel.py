"""Helpers to run the h5dlio kernel under mpirun in tests and read what it leaves behind."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BIN = os.environ.get("H5DLIO_BIN", str(Path(__file__).resolve().parent.parent / "build" / "h5dlio"))
HDF5_PREFIX = os.environ.get("H5DLIO_HDF5_PREFIX", "")
# root in a VM: mpirun refuses root and more ranks than cores without these (never use them on a cluster)
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
LOG_RE = re.compile(r"\s*(\d+)-\s*(\d+) \(\s*(\d+) bytes\) \((H5FD_MEM_[A-Z]+)\) (Read|Written|Allocated|Freed)")


@dataclass
class Run:
    proc: subprocess.CompletedProcess
    out: Path
    logs: Path | None

    @property
    def rc(self) -> int:
        return self.proc.returncode

    def summary(self) -> dict:
        return json.loads((self.out / "output.json").read_text())

    def samples(self, rank: int) -> list[dict]:
        with open(self.out / f"output.samples.rank{rank}.csv") as f:
            return list(csv.DictReader(f))

    def stderr(self, rank: int) -> str:
        assert self.logs is not None
        return (self.logs / "1" / f"rank.{rank}" / "stderr").read_text(errors="replace")

    def logvfd(self, rank: int) -> list[tuple]:
        return LOG_RE.findall(self.stderr(rank))


def tiny(data: Path, **kw) -> dict:
    """A tiny DLIO-like workload (DLIO YAML semantics through --set)."""
    base = {
        "data-folder": str(data), "record-length": 65536, "num-files-train": 8, "num-files-eval": 2,
        "num-samples-per-file": 4, "batch-size": 2, "batch-size-eval": 1, "read-threads": 0, "epochs": 2,
        "computation-time": 0, "eval-time": 0, "shuffle": "seed", "random-seed": 123, "keep-files": True,
        "naming": "dlio", "record-samples": True, "quiet": True,
    }
    base.update(kw)
    return base


def run(tmp: Path, ranks: int, sets: dict, *, config: Path | None = None, log: bool = False, timeout: float = 120,
        env: dict | None = None, name: str = "out", launcher: list[str] | None = None,
        environ: dict | None = None) -> Run:
    """The kernel on `ranks` ranks under mpirun, or under `launcher` (its argv up to the program, e.g. srun's: then
    `ranks` and `log` are the launcher's business); env is added to environ (default: this process's)."""
    out = tmp / name
    logs = tmp / f"{name}-logs" if log and launcher is None else None
    if logs is not None and logs.exists():
        shutil.rmtree(logs)
    argv = list(MPIRUN) + ["-np", str(ranks)] if launcher is None else list(launcher)
    if logs is not None:
        argv += ["--output-filename", str(logs)]
    argv += [BIN]
    if config is not None:
        argv += ["--config", str(config)]
    allsets = {"output-folder": str(out), **sets}
    for k, v in allsets.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        argv += ["--set", f"{k}={v}"]
    e = dict(os.environ if environ is None else environ)
    e.update(env or {})
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e)
    return Run(proc, out, logs)


def h5tool(name: str) -> str:
    p = Path(HDF5_PREFIX) / "bin" / name if HDF5_PREFIX else None
    if p is not None and p.exists():
        return str(p)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found (set H5DLIO_HDF5_PREFIX)")
    return found


def kernel_info() -> dict:
    """Fields of `h5dlio --version`: version, git, hdf5 (tuple), subfiling (bool)."""
    words = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout.split()
    return {"version": words[1], "hdf5": tuple(int(x) for x in words[5].split(".")), "subfiling": words[7] == "yes"}


def counter(records: list[tuple]) -> Counter:
    return Counter(records)


def dlio_order(total: int, ranks: int, batch: int, epochs: int, seed: int = 123) -> dict[int, list[list[int]]]:
    """rank -> per epoch the samples DLIO 2.0.0 consumes, in order, stated from DLIO's source for the tests (not
    from validate's model): torch_data_loader.dlio_sampler gives rank r the list range(r*ceil(T/R), (r+1)*ceil(T/R))
    and, with sample_shuffle seed, calls np.random.seed(seed); np.random.shuffle(list) on that same list at every
    epoch's __iter__, so epoch e sees the e-fold shuffle; batches are whole (drop_last); main._train / _eval stop
    after floor(T/batch/R) steps, checked after a step (at least one). Where T is not a multiple of R DLIO's last rank
    raises IndexError; the kernel clamps that rank's list at T (README) and so does this statement."""
    per_rank = -(-total // ranks)
    steps = max(total // batch // ranks, 1)
    out = {}
    for r in range(ranks):
        idx = list(range(r * per_rank, min((r + 1) * per_rank, total)))
        epochs_ = []
        for _ in range(epochs):
            np.random.seed(seed)
            np.random.shuffle(idx)
            epochs_.append(idx[: min(steps, len(idx) // batch) * batch])
        out[r] = epochs_
    return out
