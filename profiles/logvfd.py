"""HDF5 Log VFD profile: records (LOC_IO | ALLOC flags) from each rank's stderr, split into per-open blocks.

The log is parsed with a regular expression over the whole stream, not line by line: with PyTorch DataLoader
workers (and any other process sharing a rank's stderr) records get glued to each other and to other output.
The only normalization is the one that differs by HDF5 version: the superblock probe (its reads and allocations,
e.g. 0-15/16-95 up to 1.14.2, 0-47/48-95 from 1.14.5) collapses into one token with its overall extent."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

RECORD_RE = re.compile(
    r"\s*(\d+)-\s*(\d+) \(\s*(\d+) bytes\) \(H5FD_MEM_([A-Z]+)\) (Read|Written|Allocated|Freed)")


@dataclass(frozen=True)
class Record:
    start: int
    end: int
    size: int
    mem: str  # SUPER, OHDR, LHEAP, BTREE, DRAW, GHEAP, DEFAULT
    op: str   # Read, Written, Allocated, Freed

    def text(self) -> str:
        return f"{self.start}-{self.end} {self.mem} {self.op}"


def parse(text: str) -> list[Record]:
    return [Record(int(a), int(b), int(n), m, op) for a, b, n, m, op in RECORD_RE.findall(text)]


def is_open(r: Record) -> bool:
    """Every H5Fopen through the Log VFD starts with allocating the 8-byte signature probe."""
    return r.start == 0 and r.end == 8 and r.mem == "SUPER" and r.op == "Allocated"


def split_blocks(records: list[Record]) -> tuple[list[list[Record]], int]:
    """Per-open blocks, and the number of records before the first open (not part of any block)."""
    blocks: list[list[Record]] = []
    stray = 0
    for r in records:
        if is_open(r):
            blocks.append([r])
        elif blocks:
            blocks[-1].append(r)
        else:
            stray += 1
    return blocks, stray


def normalize_block(block: list[Record]) -> tuple[str, ...]:
    out: list[str] = []
    sup = [r for r in block if r.mem == "SUPER"]
    if sup:
        out.append(f"SUPER-PROBE 0-{max(r.end for r in sup)}")
    out.extend(r.text() for r in block if r.mem != "SUPER")
    return tuple(out)


def rank_stderr_files(logdir: Path) -> dict[int, Path]:
    """OpenMPI --output-filename DIR layout: DIR/1/rank.<r>/stderr (srun: DIR/rank.<r>.stderr)."""
    found: dict[int, Path] = {}
    for p in logdir.glob("*/rank.*/stderr"):
        found[int(p.parent.name.split(".")[1])] = p
    for p in logdir.glob("rank.*.stderr"):
        found[int(p.name.split(".")[1])] = p
    return dict(sorted(found.items()))


def rank_table(text: str) -> dict:
    recs = parse(text)
    blocks, stray = split_blocks(recs)
    norm = [normalize_block(b) for b in blocks]
    kinds = Counter(f"{r.mem} {r.op}" for r in recs)
    draw = [r for r in recs if r.mem == "DRAW" and r.op == "Read"]
    return {
        "records": len(recs),
        "stray_records": stray,
        "opens": len(blocks),
        "raw_reads": len(draw),
        "raw_read_bytes": sum(r.size for r in draw),
        "read_bytes": sum(r.size for r in recs if r.op == "Read"),
        "record_kinds": dict(sorted(kinds.items())),
        "blocks": [list(b) for b in norm],
    }


def parse_dir(logdir: Path) -> dict:
    """tables for every rank found under a launch's per-rank output directory"""
    return {"ranks": {str(r): rank_table(p.read_text(errors="replace")) for r, p in rank_stderr_files(logdir).items()}}


def record_table(tables: dict) -> dict[str, int]:
    """Thesis Table 6.1 form: each normalized record of a block with its count over all ranks."""
    c: Counter = Counter()
    for t in tables["ranks"].values():
        for b in t["blocks"]:
            c.update(x for x in b if "DRAW" not in x)
            c.update("DRAW Read" for x in b if "DRAW" in x)
    return dict(c.most_common())


def wrap(argv: list[str], env: dict, outdir: Path, side: str) -> tuple[list[str], dict]:
    """kernel: --log-vfd (set in code, works on HDF5 1.10 too); DLIO/h5py: HDF5_DRIVER=log (HDF5 >= 1.14)."""
    env = dict(env)
    if side == "kernel":
        return argv + ["--log-vfd"], env
    env["HDF5_DRIVER"] = "log"
    return argv, env


def save(tables: dict, path: Path) -> None:
    path.write_text(json.dumps(tables))
