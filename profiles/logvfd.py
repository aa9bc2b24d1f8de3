"""HDF5 Log VFD profile: records (LOC_IO | ALLOC flags) from each rank's stderr, split into per-open blocks.

The log is parsed with a regular expression over the whole stream, not line by line: with PyTorch DataLoader
workers (and any other process sharing a rank's stderr) records get glued to each other and to other output.
The only normalization is the one that differs by HDF5 version: the superblock probe (its reads and allocations,
e.g. 0-15/16-95 up to 1.14.2, 0-47/48-95 from 1.14.5) collapses into one token with its overall extent."""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from common.mapping import dotted_get
from profiles import Done, Launch, LaunchSpec, Profile, RunView, Shape, Wrapped, checkpoint_only, register
from profiles.compare import FAIL, PASS, SKIP, raw_reader, result

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


def _first_diff(a: list, b: list) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _distinct(blocks: list) -> tuple[dict[int, list], Counter]:
    """The distinct block objects in order of first use (a compact table's equal blocks are one shared list) and how
    many opens each stands for: the work of a check is then per distinct block, not per open."""
    first: dict[int, list] = {}
    for b in blocks:
        first.setdefault(id(b), b)
    return first, Counter(map(id, blocks))


def _records(blocks: list) -> Counter:
    """Every record of the blocks (superblock probes aside) with its count, in order of first appearance."""
    first, n = _distinct(blocks)
    c: Counter = Counter()
    for i, b in first.items():
        for x in b:
            if not x.startswith("SUPER-PROBE"):
                c[x] += n[i]
    c["opens"] = len(blocks)
    return c


def _draw_sizes(blocks: list) -> list[int]:
    """The raw reads' sizes, open by open, in order (each distinct block's computed once)."""
    first, _ = _distinct(blocks)
    sizes = {i: [int(x.split()[0].split("-")[1]) - int(x.split()[0].split("-")[0]) + 1
                 for x in b if x.endswith("DRAW Read")] for i, b in first.items()}
    return [v for b in blocks for v in sizes[id(b)]]


def _tensorflow(cfg: dict) -> bool:
    return str(dotted_get(cfg, "framework", "")).lower() == "tensorflow" and \
        str(dotted_get(cfg, "reader.data_loader", "")).lower() == "tensorflow"


def _ordered(cfg: dict) -> bool:
    """Is DLIO's per-rank order deterministic with the workload's read threads? PyTorch: only without worker
    processes. TensorFlow: with one tf.data reader thread (0 counts as 1, tf_data_loader.py:70-74), whose generator
    reads its list in order; several threads read in parallel (interleave, num_parallel_calls, :84-91)."""
    rt = int(dotted_get(cfg, "reader.read_threads", 1))
    return rt <= 1 if _tensorflow(cfg) else rt == 0


NO_DATA = "a checkpoint-only workload (workflow.train false) opens no HDF5 file: no Log VFD launch"


def check_logvfd(run: RunView) -> list[dict]:
    out = []
    why = raw_reader(run) or NO_DATA * checkpoint_only(run.cfg)
    if why:
        return [result("logvfd", SKIP, detail=why)]
    rt = int(dotted_get(run.cfg, "reader.read_threads", 1))
    variants = [("logvfd", "sequence" if _ordered(run.cfg) else "multiset")]
    if _tensorflow(run.cfg) and rt > 1:
        out += [result(f"logvfd.sequence.rank{r}", SKIP, detail=f"DLIO's tf.data runs {rt} reader threads in parallel "
                       "(tf_data_loader.py:84-91 interleave, num_parallel_calls): its order across threads is not "
                       "deterministic; the multiset, counts and the read_threads=0 sequence are checked")
                for r in range(run.ranks)]
    if run.table("logvfd-rt0-dlio.json") is not None or rt > 0:
        variants.append(("logvfd-rt0", "sequence"))
    for prof, kind in variants:
        d, k = run.table(f"{prof}-dlio.json"), run.table(f"{prof}-kernel.json")
        if d is None or k is None:
            out.append(result(f"logvfd.{prof}", SKIP, detail=f"no {prof} tables (profile not run or a launch failed)"))
            continue
        for r in range(run.ranks):
            name = f"logvfd.{kind}.{'rt0.' if prof == 'logvfd-rt0' else ''}rank{r}"
            db = d["ranks"].get(str(r), {}).get("blocks")
            kb = k["ranks"].get(str(r), {}).get("blocks")
            if db is None or kb is None:
                out.append(result(name, FAIL, detail=f"rank {r}: no Log VFD records on one side"))
                continue
            if kind == "sequence":
                i = _first_diff(db, kb)
                ok = db == kb
                detail = f"{len(db)} blocks identical in order" if ok else (
                    f"first difference at open #{i}: DLIO {db[i] if i < len(db) else 'none'} | kernel "
                    f"{kb[i] if i < len(kb) else 'none'}")
            else:
                # reader processes share the rank's stderr: their records interleave, so blocks are not reliable;
                # compare the multiset of records (superblock probes aside) and the number of opens
                cd, ck = _records(db), _records(kb)
                ok = cd == ck
                only_d, only_k = cd - ck, ck - cd
                detail = f"{len(db)} opens, {sum(cd.values())} records, same multiset" if ok else (
                    f"only DLIO ({sum(only_d.values())}): {list(only_d)[:3]} | only kernel ({sum(only_k.values())}): "
                    f"{list(only_k)[:3]}")
            out.append(result(name, PASS if ok else FAIL, len(db), len(kb), detail))
    return out


def check_counts(run: RunView) -> list[dict]:
    """Opens, raw reads and raw bytes per rank (and per phase/epoch where the order is deterministic) against the
    analytic model computed from the workload alone."""
    out = []
    why = raw_reader(run) or NO_DATA * checkpoint_only(run.cfg)
    if why:
        return [result("counts.logvfd", SKIP, detail=why)]
    for prof in ("logvfd", "logvfd-rt0"):
        cfg = run.cfg if prof == "logvfd" else {**run.cfg, "reader": {**run.cfg.get("reader", {}), "read_threads": 0}}
        exp = run.model_reads(cfg)
        for side in ("dlio", "kernel"):
            t = run.table(f"{prof}-{side}.json")
            if t is None:
                continue
            for r in range(run.ranks):
                segs = exp[r]
                e_bytes = [b for s in segs for b in s["bytes"]]
                tr = t["ranks"].get(str(r), {})
                blocks = tr.get("blocks", [])
                got = _draw_sizes(blocks)
                e = {"opens": sum(s["opens"] for s in segs), "raw_reads": len(e_bytes), "raw_bytes": sum(e_bytes)}
                o = {"opens": tr.get("opens"), "raw_reads": tr.get("raw_reads"), "raw_bytes": tr.get("raw_read_bytes")}
                name = f"counts.{side}.{prof}.rank{r}"
                out.append(result(name, PASS if e == o else FAIL, e, o,
                                  f"model of DLIO {run.release}: sampler + steps + prefetch + per-file dims (seed 10)"))
                if prof == "logvfd-rt0" or _ordered(cfg):
                    pos, bad = 0, []
                    for s in segs:
                        n = len(s["bytes"])
                        if got[pos:pos + n] != s["bytes"]:
                            bad.append(f"{s['phase']} epoch {s['epoch']}")
                        pos += n
                    out.append(result(f"{name}.per_phase", PASS if not bad and pos == len(got) else FAIL,
                                      len(segs), len(segs) - len(bad),
                                      "each phase/epoch segment reads the modelled sample sizes in order" if not bad
                                      else f"differs in {', '.join(bad[:4])}"))
    return out


@register
class LogVFD(Profile):
    """Training under the HDF5 Log VFD, each side reading the *other* side's dataset (which doubles as the
    cross-read check); with reader processes also in the ranks (logvfd-rt0), where DLIO's order is deterministic."""
    name = "logvfd"
    order = 20
    launch_order = 50  # after every other profile's launches, as runs have always been ordered
    checks = (check_logvfd, check_counts)

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        if not shape.reads_data:  # a checkpoint-only workload opens no HDF5 file: nothing to log
            return []
        out = [LaunchSpec("logvfd", data="other")]
        # the read_threads=0 variant exists for the Log VFD's order: a DLIO that reads whole files without HDF5
        # (sample_read whole_file, MLCommons 3.x) leaves no record to order, and DLIO 3.x with read_threads 0 exits 1
        # after its last epoch under mpirun (worker_init(-1) in the rank, torch_data_loader.py:174-175, resets its
        # DLIOMPI to a child's state, utils/config.py:308-313, so utils/utility.py:381-384 skips MPI.Finalize)
        if shape.read_threads > 0 and shape.rules.get("sample_read") != "whole_file":
            out.append(LaunchSpec("logvfd-rt0", data="other", read_threads_0=True))
        return out

    def wrap(self, launch: Launch) -> Wrapped:
        """kernel: --log-vfd (set in code, works on HDF5 1.10 too); DLIO/h5py: HDF5_DRIVER=log (HDF5 >= 1.14)."""
        if launch.side == "kernel":
            return Wrapped(list(launch.argv) + ["--log-vfd"], dict(launch.env))
        return Wrapped(list(launch.argv), {**launch.env, "HDF5_DRIVER": "log"})

    def collect(self, done: Done) -> dict:
        return {f"{done.step}-{done.side}.json": json.dumps(compact(parse_dir(done.workdir / "ranks")))}
