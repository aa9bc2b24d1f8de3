"""Will a side-by-side run fit this machine? Checked before anything is launched or written: the datasets both sides
generate against the free space where the run directory goes, and the reference DLIO's ranks against the memory
available. A run that would not fit is refused (bad input, exit 2) with the numbers, instead of filling the disk
or getting DLIO's ranks OOM-killed half-way (at 5,000 files and more, hours in)."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

# Measured on this project's 2-core Debian 12 VM (24 GiB): one DLIO 2.0.0 rank peaks at ~1.1 GB RSS with a
# bounded generation buffer (its default 2 GiB per rank gets it OOM-killed on many small files), with its
# DLIO_RANK_READERS PyTorch reader processes.
DLIO_RANK_RSS = 1_100_000_000
DLIO_RANK_READERS = 4
# Each reader process more, by how DLIO starts them (the probe's reader_context): forked (DLIO 2.0.0), a reader shares
# its rank's pages and adds 45-80 MB of its own: at most ~48 MB PSS with 2 ranks x 32 readers (unet3d field-10k-rt32
# under DFTracer: bench/results/2026-11-27-rt32), 54 MB untraced and up to 80 MB under DFTracer (Private_* of
# smaps_rollup) with 2 ranks x 8 readers at 102,400 files (imagenet_files field-100k, whose rank and readers peaked
# at 1.53 GB PSS: bench/results/2026-11-27-imagenet-dlio), counted as 110 MB; spawned (DLIO 3.x), a fresh
# interpreter that imports DLIO and torch: ~440 MB PSS each (408 MB its own dirty pages; 2 ranks x 4 readers, unet3d
# tiny, bench/results/2026-11-27-rt32), counted as 500 MB for every reader (the forked readers in DLIO_RANK_RSS are
# not its).
READER_BYTES = {"fork": 110_000_000, "spawn": 500_000_000}
# An HDF5 file's own bytes beyond its samples (superblock, object headers, B-trees; the file system's block
# rounding): at most ~8 KiB per file for DLIO's and the kernel's one- and two-dataset files.
FILE_OVERHEAD = 8192
# What is left for everything else (the kernel, the harness, profilers, the OS), of disk and of memory.
HEADROOM = 0.9


@dataclass(frozen=True)
class Need:
    files: int              # data files per side (train + eval)
    dataset_bytes: int      # per side
    disk_bytes: int         # both sides' datasets
    memory_bytes: int       # the DLIO side's ranks at their peak
    rank_bytes: int = DLIO_RANK_RSS  # one DLIO rank with its reader processes


def rank_bytes(cfg: dict, context: str | None = None) -> int:
    """One DLIO rank's peak with its reader processes: reader.read_threads of them, started as the workload's
    reader.multiprocessing_context says, else as the reference DLIO does when none is named (context: the probe's
    reader_context; unknown: fork)."""
    rd = cfg.get("reader") or {}
    readers = int(rd.get("read_threads", 1))
    ctx = str(rd.get("multiprocessing_context") or context or "fork")
    if ctx == "fork":
        return DLIO_RANK_RSS + max(0, readers - DLIO_RANK_READERS) * READER_BYTES["fork"]
    return DLIO_RANK_RSS + readers * READER_BYTES.get(ctx, READER_BYTES["spawn"])  # spawn, forkserver


def need(cfg: dict, ranks: int, context: str | None = None) -> Need:
    """What a workload needs of this machine (merged DLIO config): each side generates its own dataset; context: how
    the reference DLIO starts its reader processes (rank_bytes)."""
    ds = cfg.get("dataset") or {}
    wf = cfg.get("workflow") or {}
    if not wf.get("train", True) and wf.get("checkpoint"):  # checkpoint-only: no dataset
        files, per_side = 0, 0
    else:
        per_file = int(ds.get("num_samples_per_file", 1)) * int(ds.get("record_length", 65536)) + FILE_OVERHEAD
        files = int(ds.get("num_files_train", 8)) + int(ds.get("num_files_eval", 0))
        per_side = files * per_file
    per_rank = rank_bytes(cfg, context)
    return Need(files, per_side, 2 * per_side, ranks * per_rank, per_rank)


def mem_available() -> int | None:
    """MemAvailable of /proc/meminfo in bytes, or None where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def disk_free(path: Path) -> int | None:
    """Free bytes of the file system that holds path (its nearest existing parent)."""
    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def gb(n: int) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= f:
            return f"{n / f:.1f} {unit}"
    return f"{n} B"


def refuse(name: str, scale: str, n: Need, ranks: int, runs_dir: Path, free: int | None,
           avail: int | None, dlio_launches: bool = True) -> str | None:
    """Why this run would not fit here (None: it fits, or this machine does not say). Without DLIO launches (its side
    reused from an earlier run) only the disk counts."""
    why = []
    if free is not None and n.disk_bytes > HEADROOM * free:
        why.append(f"its datasets need {gb(n.disk_bytes)} ({n.files} files of ~{gb(n.dataset_bytes // max(n.files, 1))}"
                   f" per side, both sides) and {runs_dir} has {gb(free)} free (at most {HEADROOM:.0%} is used): "
                   "use RUNS_DIR=<a larger file system> or a smaller SCALE")
    if dlio_launches and avail is not None and n.memory_bytes > HEADROOM * avail:
        fit = int(HEADROOM * avail // n.rank_bytes)
        why.append(f"{ranks} DLIO ranks peak at ~{gb(n.memory_bytes)} ({gb(n.rank_bytes)} each, with its reader "
                   f"processes) and {gb(avail)} of memory is available: at most {fit} ranks fit here (RANKS)")
    return f"workload {name} ({scale}) does not fit this machine: " + "; ".join(why) if why else None


def check(name: str, scale: str, cfg: dict, ranks: int, runs_dir: Path, dlio_launches: bool = True,
          context: str | None = None) -> str | None:
    return refuse(name, scale, need(cfg, ranks, context), ranks, runs_dir, disk_free(runs_dir), mem_available(),
                  dlio_launches)
