"""The Log VFD profile's parse (run in the harness): each rank's stderr streamed into its records, split into per-open
blocks and normalized (the superblock probe), stored compact."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# a record never spans a line: the Log VFD prints each with one fprintf (one write, whole on the rank's pipe), padded
# with spaces; only the text before it (another process's output glued in front) may hold anything
RECORD_RE = re.compile(
    r"\s*(\d+)- *(\d+) \( *(\d+) bytes\) \(H5FD_MEM_([A-Z]+)\) (Read|Written|Allocated|Freed)")


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
    return rank_table_stream([text])


# a record is < 100 characters: in a stream piece without a line end, a match ending this far before the end of the
# text read so far cannot change when more text is read (the piece is cut after it, and scanned again from there)
_MARGIN = 4096
_CHUNK = 1 << 22


def _split(buf: str) -> tuple[list[tuple], str]:
    """The records of buf that more text cannot change, as RECORD_RE's groups, and the text to scan again with the
    next piece: up to the last line end (no record spans one: RECORD_RE), or, in a piece without any, up to the last
    match ending _MARGIN before its end (a match past it is scanned again; text without a record is dropped up to
    _MARGIN before the end)."""
    cut = buf.rfind("\n") + 1
    if cut:
        return RECORD_RE.findall(buf, 0, cut), buf[cut:]
    out, end = [], 0
    for m in RECORD_RE.finditer(buf):
        if m.end() > len(buf) - _MARGIN:
            return out, buf[m.start():]
        out.append(m.groups())
        end = m.end()
    return out, buf[max(end, len(buf) - _MARGIN):]


def _record_lists(chunks: Iterable[str]) -> Iterator[list[tuple]]:
    """The records of a stream read in pieces, a list per piece, each record RECORD_RE's groups (start, end, size,
    memory type, operation as text): together the same records, in the same order, as RECORD_RE over the whole text
    (parse), holding one piece at a time."""
    buf = ""
    for chunk in chunks:
        recs, buf = _split(buf + chunk)
        yield recs
    yield RECORD_RE.findall(buf)


def _stream_records(chunks: Iterable[str]) -> Iterator[Record]:
    """_record_lists' records one at a time, as Records."""
    for recs in _record_lists(chunks):
        for a, b, n, mem, op in recs:
            yield Record(int(a), int(b), int(n), mem, op)


def _normalized(block: list[tuple]) -> tuple[str, ...]:
    """normalize_block of a block of RECORD_RE's groups."""
    sup = [int(r[1]) for r in block if r[3] == "SUPER"]
    return tuple(([f"SUPER-PROBE 0-{max(sup)}"] if sup else [])
                 + [f"{int(r[0])}-{int(r[1])} {r[3]} {r[4]}" for r in block if r[3] != "SUPER"])


def rank_table_stream(chunks: Iterable[str]) -> dict:
    """One rank's table from its stderr read in pieces: counts aggregated a piece at a time, each open's block
    normalized when the next open starts it. Equal blocks are one shared list (a rank that opens 10^6 files of a few
    shapes holds a few blocks and 10^6 references), so memory follows the number of opens, not of records; a block
    seen before (the same records) is not normalized again (up to 10^4 distinct blocks remembered)."""
    n = stray = raw_reads = raw_bytes = read_bytes = 0
    kinds: Counter = Counter()
    blocks: list[list[str]] = []
    shared: dict[tuple, list[str]] = {}
    seen: dict[tuple, list[str]] = {}
    cur: list[tuple] | None = None

    def close(block: list[tuple]) -> None:
        key = tuple(block)
        if (b := seen.get(key)) is None:
            t = _normalized(block)
            b = shared.setdefault(t, list(t))
            if len(seen) >= 10_000:
                seen.clear()
            seen[key] = b
        blocks.append(b)

    for recs in _record_lists(chunks):
        n += len(recs)
        kinds.update((r[3], r[4]) for r in recs)
        read_bytes += sum(int(r[2]) for r in recs if r[4] == "Read")
        draw = [int(r[2]) for r in recs if r[3] == "DRAW" and r[4] == "Read"]
        raw_reads, raw_bytes = raw_reads + len(draw), raw_bytes + sum(draw)
        for r in recs:
            if r[3] == "SUPER" and r[4] == "Allocated" and int(r[0]) == 0 and int(r[1]) == 8:  # is_open
                if cur is not None:
                    close(cur)
                cur = [r]
            elif cur is not None:
                cur.append(r)
            else:
                stray += 1
    if cur is not None:
        close(cur)
    return {
        "records": n,
        "stray_records": stray,
        "opens": len(blocks),
        "raw_reads": raw_reads,
        "raw_read_bytes": raw_bytes,
        "read_bytes": read_bytes,
        "record_kinds": {f"{m} {o}": c for (m, o), c in sorted(kinds.items(), key=lambda x: f"{x[0][0]} {x[0][1]}")},
        "blocks": blocks,
    }


def _chunks(path: Path) -> Iterator[str]:
    with open(path, errors="replace") as f:
        while chunk := f.read(_CHUNK):
            yield chunk


def parse_dir(logdir: Path) -> dict:
    """tables for every rank found under a launch's per-rank output directory (each stderr streamed)"""
    return {"ranks": {str(r): rank_table_stream(_chunks(p)) for r, p in rank_stderr_files(logdir).items()}}


def compact(tables: dict) -> dict:
    """parse_dir's tables as stored: each rank's "blocks" as "block_set" (every distinct block once, in order of
    first use) and "block_seq" (each open's index into it); common.rundir.loads_table reads them back as "blocks".
    A rank of 10^6 opens of a few block shapes stores 10^6 small integers instead of 10^6 blocks."""
    out = {}
    for r, t in tables["ranks"].items():
        ids: dict[tuple, int] = {}
        seq = [ids.setdefault(tuple(b), len(ids)) for b in t["blocks"]]
        out[r] = {**{k: v for k, v in t.items() if k != "blocks"}, "block_set": [list(b) for b in ids],
                  "block_seq": seq}
    return {**tables, "ranks": out}


def record_table(tables: dict) -> dict[str, int]:
    """Thesis Table 6.1 form: each normalized record of a block with its count over all ranks."""
    c: Counter = Counter()
    for t in tables["ranks"].values():
        for b in t["blocks"]:
            c.update(x for x in b if "DRAW" not in x)
            c.update("DRAW Read" for x in b if "DRAW" in x)
    return dict(c.most_common())
