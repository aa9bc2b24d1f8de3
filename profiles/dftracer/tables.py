"""The per-launch tables of one side's DFTracer events, each fed one normalized event at a time: the per-file
table (FileTable), the checkpoint table (CheckpointTable), each process's data-file opens in time order
(ProcessOpens); the data files' names held once (Names), the per-file counts shared between files (CountStates).
"""
from __future__ import annotations

import json
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from profiles.dftracer.traces import READS
from profiles.shared.paths import GEN_RECORD, PARTIAL

# a per-file count table (calls or accesses) stays a shared tuple of (key, n) pairs while it has at most this many
# keys and the table of known steps has room (CountStates); beyond either it becomes the row's own dict
SHARED_KEYS = 8
SHARED_STEPS = 1 << 16


class CountStates:
    """Per-file Counters without a Counter per file: a file's counts are a tuple of (key, n) pairs in the order the
    keys were first seen, and equal tuples are one object, found through a table of steps (tuple, key) -> the tuple
    after counting key once more. Files that see the same calls in the same order (every data file of a workload)
    then share one tuple per step instead of holding a dict each. A tuple of more than SHARED_KEYS keys, or a step
    once the table holds SHARED_STEPS, becomes a dict of the row's own (the counts of a file read at many offsets,
    or of an unusual run), so the table stays bounded whatever the trace."""

    EMPTY: tuple = ()

    def __init__(self) -> None:
        self.steps: dict[tuple[int, str], tuple] = {}
        self.dicts: dict[int, dict] = {}

    def add(self, state, key: str):
        """The counts after one more key (state: a shared tuple or a row's own dict, updated in place)."""
        if isinstance(state, dict):
            state[key] = state.get(key, 0) + 1
            return state
        nxt = self.steps.get((id(state), key))  # (a state is a value of steps, or EMPTY: its id is its own)
        if nxt is None:
            d = dict(state)
            d[key] = d.get(key, 0) + 1
            if len(d) > SHARED_KEYS or len(self.steps) >= SHARED_STEPS:
                return d
            nxt = self.steps[(id(state), key)] = tuple(d.items())
        return nxt

    def as_dict(self, state) -> dict:
        """The counts as a dict in first-seen order (what dict(Counter) gave); a shared tuple's dict is made once
        and shared by the rows that hold it (the table is written as JSON, never changed in place)."""
        if isinstance(state, dict):
            return state
        d = self.dicts.get(id(state))
        if d is None:
            d = self.dicts[id(state)] = dict(state)
        return d


class Names:
    """One string and one index per data-file name (relative to the data folder), shared by the tables of a parse:
    each name held once, the tables' rows found by its index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []

    def get(self, rel: str) -> int:
        i = self.index.get(rel)
        if i is None:
            i = self.index[rel] = len(self.names)
            self.names.append(rel)
        return i


# a row's bytes are a signed 64-bit count (FileTable): a sum past it is a trace's garbage, refused by name
MAX_BYTES = (1 << 63) - 1


class FileTable:
    """Per file under the data folder (path relative to it): opens, reads, bytes, access sizes and offsets; every
    other POSIX call (but those on checkpoints: checkpoint_table) is kept as an 'other' row for classification.
    Fed one normalized event at a time (add); its memory is the per-file table: per name index (Names) four
    64-bit counts and a float in arrays, and two CountStates states (calls, accesses), shared between files that
    count alike."""

    def __init__(self, data_dir: Path, ckpt_dir: Path | None = None, names: Names | None = None) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.croot = str(ckpt_dir).rstrip("/") + "/" if ckpt_dir else None
        self.names = names or Names()
        self.has = bytearray()  # 1: the name has a row here
        self.opens, self.closes, self.reads, self.bytes = array("q"), array("q"), array("q"), array("q")
        self.read_time = array("d")
        self.calls: list = []
        self.acc: list = []
        self.counts = CountStates()
        self.other: Counter = Counter()
        self.keys: dict[str, str] = {}

    def add(self, e: dict) -> None:
        if e["cat"] != "POSIX":
            return
        f = e["fname"] or ""
        if self.croot and f.startswith(self.croot):
            return
        if not f.startswith(self.root):
            self.other[(e["name"], f)] += 1
            return
        self.add_data(self.names.get(f[len(self.root):]), e["name"], e["ret"], e["offset"], e["count"], e["dur"])

    def add_data(self, i: int, name: str, ret: int, offset: int, count: int, dur: float) -> None:
        """A POSIX call on data file i (its Names index; neither under the checkpoint folder nor outside)."""
        if i >= len(self.has):
            n = i + 1 - len(self.has)
            self.has.extend(bytes(n))
            for a in (self.opens, self.closes, self.reads, self.bytes, self.read_time):
                a.frombytes(bytes(8 * n))
            self.calls.extend([CountStates.EMPTY] * n)
            self.acc.extend([CountStates.EMPTY] * n)
        self.has[i] = 1
        self.calls[i] = self.counts.add(self.calls[i], name)
        if name in ("open", "openat"):
            self.opens[i] += 1
        elif name == "close":
            self.closes[i] += 1
        elif name in READS:
            self.reads[i] += 1
            b = self.bytes[i] + max(ret, 0)
            if b > MAX_BYTES:
                raise ValueError(f"DFTracer trace: {self.names.names[i]} read past {MAX_BYTES} bytes (a return "
                                 f"value of {ret})")
            self.bytes[i] = b
            key = f"{offset}+{count}"
            self.acc[i] = self.counts.add(self.acc[i], self.keys.setdefault(key, key))  # one string per access
            self.read_time[i] += dur

    def _order(self) -> list[int]:
        names = self.names.names
        return sorted((i for i in range(len(self.has)) if self.has[i]), key=names.__getitem__)

    def _other(self) -> list[dict]:
        return [{"call": c, "file": f, "n": n} for (c, f), n in sorted(self.other.items())]

    def result(self) -> dict:
        """The table: {"files": {path: {opens, closes, reads, bytes, calls, accesses, read_time_s}} in path order,
        "other": [...]}."""
        as_dict, names = self.counts.as_dict, self.names.names
        files = {names[i]: {"opens": self.opens[i], "closes": self.closes[i], "reads": self.reads[i],
                            "bytes": self.bytes[i], "calls": as_dict(self.calls[i]), "accesses": as_dict(self.acc[i]),
                            "read_time_s": self.read_time[i]} for i in self._order()}
        return {"files": files, "other": self._other()}

    def json_parts(self) -> Iterator[str]:
        """result() as JSON text, json.dumps's bytes, a row at a time (the shared count states' text made once)."""
        texts: dict[int, str] = {}

        def counts(state) -> str:
            if isinstance(state, dict):
                return json.dumps(state)
            t = texts.get(id(state))
            if t is None:
                t = texts[id(state)] = json.dumps(dict(state))
            return t

        yield '{"files": {'
        sep, rows = "", []
        for i in self._order():
            rows.append(f'{sep}{json.dumps(self.names.names[i])}: {{"opens": {self.opens[i]}, '
                        f'"closes": {self.closes[i]}, "reads": {self.reads[i]}, "bytes": {self.bytes[i]}, '
                        f'"calls": {counts(self.calls[i])}, "accesses": {counts(self.acc[i])}, '
                        f'"read_time_s": {_float_text(self.read_time[i])}}}')
            sep = ", "
            if len(rows) == 4096:  # a piece of 4,096 rows, not a string per row, until the text is joined
                yield "".join(rows)
                rows = []
        yield "".join(rows) + '}, "other": ' + json.dumps(self._other()) + "}"


def _float_text(x: float) -> str:
    """A float as json.dumps writes it."""
    return float.__repr__(x) if math.isfinite(x) else json.dumps(x)


def file_table(events: list[dict], data_dir: Path, ckpt_dir: Path | None = None) -> dict:
    """FileTable over a list of normalized events."""
    t = FileTable(data_dir, ckpt_dir)
    for e in events:
        t.add(e)
    return t.result()


# the kernel writes a checkpoint as <name>.partial.<pid> and renames it when whole (DLIO writes <name> itself):
# PARTIAL (profiles.shared.paths)
WRITES = {"write", "pwrite"}


class CheckpointTable:
    """Per checkpoint file (name relative to the launch's checkpoint folder, the kernel's partial name mapped to its
    final one): opens, closes, writes, bytes written, the multiset of write sizes, fsyncs, posix_fadvise calls, reads
    (read(2) and pread(2) calls), bytes read, the multiset of read sizes, lseeks (torch.load's and Python's buffered
    reader's), and every call. Fed one normalized event at a time."""

    def __init__(self, ckpt_dir: Path) -> None:
        self.root = str(ckpt_dir).rstrip("/") + "/"
        self.files: dict[str, dict] = defaultdict(lambda: {"opens": 0, "closes": 0, "writes": 0, "bytes": 0,
                                                           "fsyncs": 0, "fadvises": 0, "write_sizes": Counter(),
                                                           "reads": 0,
                                                           "read_bytes": 0, "read_sizes": Counter(), "seeks": 0,
                                                           "calls": Counter(), "write_time_s": 0.0,
                                                           "read_time_s": 0.0})

    def add(self, e: dict) -> None:
        f = e["fname"] or ""
        if e["cat"] != "POSIX" or not f.startswith(self.root) or f == self.root.rstrip("/"):
            return
        row = self.files[PARTIAL.sub("", f[len(self.root):])]
        row["calls"][e["name"]] += 1
        if e["name"] in ("open", "openat"):
            row["opens"] += 1
        elif e["name"] == "close":
            row["closes"] += 1
        elif e["name"] in WRITES:
            row["writes"] += 1
            row["bytes"] += max(e["ret"], 0)
            row["write_sizes"][str(e["count"])] += 1
            row["write_time_s"] += e["dur"]
        elif e["name"] in READS:
            row["reads"] += 1
            row["read_bytes"] += max(e["ret"], 0)
            row["read_sizes"][str(e["count"])] += 1
            row["read_time_s"] += e["dur"]
        elif e["name"] in ("fsync", "fdatasync"):
            row["fsyncs"] += 1
        elif e["name"] == "posix_fadvise":  # mlpstorage's StreamingCheckpointing (MLPerf v3.0): DONTNEED, RANDOM
            row["fadvises"] += 1
        elif e["name"] == "lseek":
            row["seeks"] += 1

    def result(self) -> dict:
        return {k: {**v, "write_sizes": dict(v["write_sizes"]), "read_sizes": dict(v["read_sizes"]),
                    "calls": dict(v["calls"])} for k, v in sorted(self.files.items())}


def checkpoint_table(events: list[dict], ckpt_dir: Path) -> dict:
    """CheckpointTable over a list of normalized events."""
    t = CheckpointTable(ckpt_dir)
    for e in events:
        t.add(e)
    return t.result()


class ProcessOpens:
    """rank -> [the data files (relative to the data folder) one process opened, in time order], one list per
    process, for the order of reads within each process (a reader process reads its batches one sample at a time).
    Keeps per process the open times and the names' indices (Names), in arrays. The same per thread (the event's
    tid) for order(): DFTracer 1.0 writes DLIO 2.0.0's rank as every process's pid, and the kernel's readers, forked
    after the preload library started, inherit its pid; each process's one reading thread (a torch worker's, the
    rank's own at read_threads 0, a kernel reader's) has its own tid."""

    def __init__(self, data_dir: Path, names: Names | None = None) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.names = names or Names()
        self.seq: dict[tuple, tuple] = {}
        self.tseq: dict[tuple, tuple] = {}

    def add(self, e: dict) -> None:
        if e["cat"] == "POSIX" and e["name"] in ("open", "openat") and (e["fname"] or "").startswith(self.root):
            self.add_open(e["rank"], e["pid"], e["ts"], self.names.get(e["fname"][len(self.root):]), e["tid"])

    def add_open(self, rank: int, pid: str, ts: float, i: int, tid: str = "") -> None:
        if self.names.names[i] == GEN_RECORD:   # the kernel's completion record, read before the reads: no data file
            return
        for seq, key in ((self.seq, (rank, pid)), (self.tseq, (rank, pid, tid))):
            s = seq.get(key)
            if s is None:
                s = seq[key] = (array("d"), array("i"))
            s[0].append(ts)
            s[1].append(i)

    def _sorted(self, ts: array, idx: array) -> list[str]:
        order = np.argsort(np.frombuffer(ts, np.float64), kind="stable")  # as sorted() by time: stable
        names = self.names.names
        return [names[i] for i in np.frombuffer(idx, np.int32)[order].tolist()]

    def result(self) -> dict:
        out: dict[str, list] = defaultdict(list)
        for (rank, _pid), (ts, idx) in sorted(self.seq.items()):
            out[str(rank)].append(self._sorted(ts, idx))
        return dict(out)

    def order(self) -> dict:
        """rank -> [{"pid", "tid", "opens": its data-file opens in time order}], one row per thread that opened
        one, in the order of their first open (the table `process_order`, dftracer.order's)."""
        rows: dict[str, list] = defaultdict(list)
        for (rank, pid, tid), (ts, idx) in self.tseq.items():
            rows[str(rank)].append((min(ts), pid, tid, self._sorted(ts, idx)))
        return {r: [{"pid": pid, "tid": tid, "opens": o} for _, pid, tid, o in sorted(v, key=lambda x: x[:3])]
                for r, v in sorted(rows.items(), key=lambda x: int(x[0]))}


def process_opens(events: list[dict], data_dir: Path) -> dict:
    """ProcessOpens over a list of normalized events."""
    t = ProcessOpens(data_dir)
    for e in events:
        t.add(e)
    return t.result()


def process_order(events: list[dict], data_dir: Path) -> dict:
    """ProcessOpens.order over a list of normalized events (the table `process_order`)."""
    t = ProcessOpens(data_dir)
    for e in events:
        t.add(e)
    return t.order()
