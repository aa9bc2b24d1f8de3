"""DFTracer profile: POSIX events (and the programs' own regions) of a training launch.

DLIO traces itself through pydftracer, switched on by the environment (DFTRACER_ENABLE=1, DFTRACER_INC_METADATA=1,
files output.folder/trace-<rank>-of-<size>*.pfw[.gz]). Two generations of the tracer, both read here:
- pydftracer 1.0 (DLIO 2.0.0's lock): JSON lines with "ph": "X", the file name in args.fname, and DLIO's rank as the
  process id; DLIO's forked reader processes inherit the tracer.
- pydftracer 2.x with its core, the `dftracer` wheel (DLIO 2.0.1 and 3.x): "ph": 1, the file name as a hash
  (args.fhash) declared once by an "FH" metadata event, the OS process id. pydftracer 2.x traces only the process that
  initialises it, and DLIO 3.x spawns its readers (multiprocessing context spawn), so DLIO runs under the preload
  library as the kernel does; pydftracer's initialisation renames the process's log to trace-<rank>-of-<size> and its
  children inherit that name: the rank comes from the file name.
The kernel runs under the same venv's preload library (POSIX calls) plus the regions it emits through DFTracer's C API
(epoch, step, load_batch, read_sample, compute, and rank_info, which maps each process to its rank).
"""
from __future__ import annotations

import gzip
import json
import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from common.rundir import BIG_TABLE
from profiles import (
    SIDES,
    Context,
    Done,
    Found,
    Launch,
    Profile,
    RunView,
    Wrapped,
    checkpoint_dir,
    checkpoint_only,
    register,
)
from profiles.compare import (
    CHECKPOINT,
    DATA,
    FAIL,
    GEN_RECORD,
    PARTIAL,
    PASS,
    SKIP,
    Differences,
    FileRows,
    classify,
    dlio_rule,
    explained,
    kernel_record,
    launch_roots,
    model_judges_kernel,
    raw_reader,
    result,
    similarity,
    train_file_index,
)
from profiles.compute import check_compute
from profiles.features import access_sizes, metadata_rate

try:  # orjson (requirements-test.txt) decodes an event ~4x faster than json; json decodes what orjson refuses
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover (the venv pins it)
    _fast_loads = json.loads

# names differ by libc ABI (h5py's manylinux HDF5 calls open/pread/__fxstat; a Debian build calls open64/pread64)
CANON = {"open64": "open", "pread64": "pread", "pwrite64": "pwrite", "read64": "read", "lseek64": "lseek",
         "__fxstat": "fstat", "__fxstat64": "fstat", "fstat64": "fstat", "__lxstat": "lstat", "__lxstat64": "lstat",
         "lstat64": "lstat", "__xstat": "stat", "__xstat64": "stat", "stat64": "stat", "openat64": "openat",
         "posix_fadvise64": "posix_fadvise"}
READS = {"pread", "read"}


def preload_library(dlio_venv: Path) -> Path | None:
    """DFTracer's preload library as shipped in the reference venv: pydftracer 1.0's wheel (dftracer/lib) or the
    dftracer 2.x core wheel (dftracer/lib64)."""
    hits = sorted(dlio_venv.glob("lib/python3*/site-packages/dftracer/lib*/libdftracer_preload.so"))
    return hits[0] if hits else None


def pydftracer_version(dlio_venv: Path) -> str | None:
    """The venv's pydftracer release (the Python side DLIO imports), from its dist-info folder."""
    hits = sorted(dlio_venv.glob("lib/python3*/site-packages/pydftracer-*.dist-info"))
    return hits[0].name[len("pydftracer-"):-len(".dist-info")] if hits else None


# the file name DLIO gives its trace (utils/utility.py get_trace_name in 2.0.0 and 3.x): the rank of the process
TRACE_RANK = re.compile(r"trace-(\d+)-of-\d+")


def _decode(line: str, fast: bool = True) -> dict | None:
    """One trace line as its event, or None: a line that is not an object, or cut by a crash (counted by nothing on
    purpose: the trace is best effort). fast: orjson first (for a line without an integer past 64 bits, which
    orjson makes a float: _safe); a line it refuses (NaN, a lone surrogate escape, ...) is decoded by json, so the
    events are json's, whichever library decoded them."""
    line = line.strip().rstrip(",")
    if not line.startswith("{"):
        return None
    if fast:
        try:
            return _fast_loads(line)
        except ValueError:
            pass
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


# text read at a time from an uncompressed trace (the first pass's scan, the second's lines)
SCAN_CHUNK = 1 << 20

# ASCII digits to "9", every other byte to " ": a run of 19 nines marks a number orjson may not keep exact
_DIGITS = bytes(57 if 48 <= i <= 57 else 32 for i in range(256))
_LONG = b"9" * 19


def _safe(text: str) -> bool:
    """No run of 19 digits in text: every integer in it is within 64 bits (orjson decodes a longer one as a float;
    json as the integer)."""
    return _LONG not in text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def _lines(f, gz: bool) -> Iterator[tuple[list[str], bool]]:
    """Every line of a text file, in lists, with whether orjson may decode them (_safe): a gzip stream a line at a
    time (a cut keeps every line before it), an uncompressed file a chunk at a time (one check per chunk), the lines
    `for line in f` gives (less their newline)."""
    if gz:
        for line in f:
            yield [line], _safe(line)
        return
    carry = ""
    while True:
        chunk = f.read(SCAN_CHUNK)
        buf = carry + chunk
        lines = buf.split("\n")
        carry = lines.pop() if chunk else ""  # a line not yet whole goes with the next chunk
        yield lines, _safe(buf)
        del buf, lines
        if not chunk:
            return


def _scan_lines(f, only: tuple[str, ...]) -> Iterator[str]:
    """The lines of a text file holding one of `only`, in order: whole chunks searched at once, each string by
    str.find (a line holding several is yielded once), as `any(x in line for x in only)` over every line selects
    them."""
    carry = ""
    while True:
        chunk = f.read(SCAN_CHUNK)
        buf = carry + chunk
        end = len(buf) if not chunk else buf.rfind("\n") + 1
        starts = set()
        for x in only:
            k = buf.find(x, 0, end)
            while k >= 0:
                starts.add(buf.rfind("\n", 0, k) + 1)
                k = buf.find(x, k + 1, end)
        for start in sorted(starts):
            stop = buf.find("\n", start, end)
            yield buf[start:stop + 1 if stop >= 0 else end]
        if not chunk:
            return
        carry = buf[end:]


def iter_events(path: Path, only: tuple[str, ...] = ()) -> Iterator[dict]:
    """A .pfw (or .pfw.gz) file, one event at a time: a JSON array written one event per line; tolerate a missing
    closing bracket and a gzip stream cut short (a process that ended without finalising its tracer: DFTracer 2.x's
    helper processes). Each event carries the rank its file name gives ("_file_rank", -1 when the name has none).
    only: decode just the lines holding one of these strings (a cheap first pass for the few events the others
    need: an uncompressed file searched a chunk at a time, a gzip stream line by line so a cut keeps every line
    before it)."""
    m = TRACE_RANK.search(path.name)
    file_rank = int(m.group(1)) if m else -1
    gz = path.suffix == ".gz"
    opener = gzip.open if gz else open
    with opener(path, "rt", errors="replace") as f:
        if only and not gz:
            pieces: Iterable[tuple[list[str], bool]] = (([x], _safe(x)) for x in _scan_lines(f, only))
        elif only:
            pat = re.compile("|".join(map(re.escape, only)))
            pieces = (([x], _safe(x)) for x in f if pat.search(x))
        else:
            pieces = _lines(f, gz)
        try:
            for lines, fast in pieces:
                for line in lines:
                    e = _decode(line, fast)
                    if e is not None:
                        e["_file_rank"] = file_rank
                        yield e
        except (EOFError, gzip.BadGzipFile):
            pass  # the events before the cut are kept


def read_events(path: Path) -> list[dict]:
    """Every event of a trace file (iter_events as a list)."""
    return list(iter_events(path))


def trace_files(outdir: Path) -> list[Path]:
    return sorted([*outdir.rglob("*.pfw"), *outdir.rglob("*.pfw.gz")])


def _num(x, default=0):
    try:
        return int(x)
    except (TypeError, ValueError):
        return default


# a complete event: "X" in DFTracer 1.0, 1 in 2.x (whose metadata events, "FH" among them, are 4)
COMPLETE = ("X", 1)


def names(events: Iterable[dict]) -> tuple[dict[str, int], dict[str, str]]:
    """pid -> rank (the kernel's rank_info regions) and file hash -> name (DFTracer 2.x's "FH" events)."""
    pid_rank: dict[str, int] = {}
    fnames: dict[str, str] = {}
    for e in events:
        a = e.get("args", {}) or {}
        if e.get("name") == "rank_info":
            pid_rank[str(e.get("pid"))] = _num(a.get("rank"), -1)
        elif e.get("name") == "FH" and e.get("ph") not in COMPLETE:
            fnames[str(a.get("value"))] = a.get("name")
    return pid_rank, fnames


def _who(e: dict, side: str, pid_rank: dict[str, int]) -> tuple[str, int, str, str]:
    """An event's pid, rank (DLIO: its trace file's rank, else the pid's number; the kernel: the pid's rank), category
    and name (POSIX calls by their canonical name)."""
    pid = str(e.get("pid"))
    if side == "dlio":
        rank = e["_file_rank"] if e.get("_file_rank", -1) >= 0 else _num(pid, -1)
    else:
        rank = pid_rank.get(pid, -1)
    cat = e.get("cat", "")
    return pid, rank, cat, CANON.get(e.get("name", ""), e.get("name", "")) if cat == "POSIX" else e.get("name", "")


def normalize_one(e: dict, side: str, pid_rank: dict[str, int], fnames: dict[str, str]) -> dict | None:
    """One event normalized (normalize), None for one that is not a complete event."""
    if e.get("ph") not in COMPLETE:
        return None
    a = e.get("args", {}) or {}
    pid, rank, cat, name = _who(e, side, pid_rank)
    fname = a.get("fname") if "fname" in a else fnames.get(str(a.get("fhash"))) if "fhash" in a else None
    try:  # every number at once (_num's int()); any that is not one: each field by _num, its default for that one
        nums = (int(e.get("ts", 0)), int(e.get("dur", 0)), int(a.get("offset", -1)), int(a.get("count", -1)),
                int(a.get("ret", -1)))
    except (TypeError, ValueError):
        nums = (_num(e.get("ts")), _num(e.get("dur")), _num(a.get("offset"), -1), _num(a.get("count"), -1),
                _num(a.get("ret"), -1))
    return {"rank": rank, "pid": pid, "tid": str(e.get("tid")), "cat": cat, "name": name,
            "ts": nums[0] / 1e6, "dur": nums[1] / 1e6, "fname": fname, "offset": nums[2], "count": nums[3],
            "ret": nums[4]}


def normalize(events: list[dict], side: str) -> list[dict]:
    """Events -> {rank, pid, cat, name, ts (s), dur (s), fname, offset, count, ret}. The rank: for DLIO, its trace
    file's name (else the pid field, DLIO 2.0.0 passing its rank as DFTracer 1.0's process id); for the kernel, its
    rank_info region. The file name: args.fname (1.0) or args.fhash resolved through the "FH" events (2.x)."""
    pid_rank, fnames = names(events)
    return [n for e in events if (n := normalize_one(e, side, pid_rank, fnames)) is not None]


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
# PARTIAL (profiles.compare)
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


class Features:
    """The DLIO paper's I/O features over the data-file reads of one side: profiles.features.ReadStats's numbers, the
    same floats bit for bit (tests/test_dftracer.py compares them), from leaner arrays: per read its start, duration,
    offset, size (8 bytes each) and file index (4), per process; its rank (the order's major key) only once it
    differs from the process's first. The order and the per-file offsets are computed with numpy, one process at a
    time, each process's arrays dropped once done; the sums are Python's over the same sequences."""

    def __init__(self, data_dir: Path, names: Names | None = None) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.names = names or Names()
        self.procs: dict[str, list] = {}  # str(pid) -> [first major, majors|None, start, dur, offset, size, file]
        self.read = bytearray()  # per name index: 1 once read
        self.files = 0

    def add(self, e: dict) -> None:
        if e["cat"] == "POSIX" and e["name"] in READS and (e["fname"] or "").startswith(self.root):
            self.add_read(e["pid"], self.names.get(e["fname"][len(self.root):]), e["offset"], max(e["ret"], 0),
                          e["rank"], e["ts"], e["dur"])

    def add_read(self, proc, i: int, offset: int, size: int, major: int, start: float, dur: float) -> None:
        p = self.procs.get(str(proc))
        if p is None:
            p = self.procs[str(proc)] = [major, None, array("d"), array("d"), array("q"), array("q"), array("i")]
        if p[1] is None and major != p[0]:
            p[1] = array("q", [p[0]]) * len(p[2])
        if p[1] is not None:
            p[1].append(major)
        p[2].append(start)
        p[3].append(dur)
        p[4].append(offset)
        p[5].append(size)
        p[6].append(i)
        if i >= len(self.read):
            self.read.extend(bytes(i + 1 - len(self.read)))
        if not self.read[i]:
            self.read[i] = 1
            self.files += 1

    def _proc(self, p: list) -> tuple:
        """One process's reads in ReadStats's order (stable by major, start): sizes, durations, sequential and
        consecutive follow-ups, and the (process, file) pairs."""
        start = np.frombuffer(p[2], np.float64)
        order = np.lexsort((start, np.frombuffer(p[1], np.int64))) if p[1] is not None else \
            np.argsort(start, kind="stable")
        del start
        off, size, f = np.frombuffer(p[4], np.int64)[order], np.frombuffer(p[5], np.int64)[order], \
            np.frombuffer(p[6], np.int32)[order]
        dur = np.frombuffer(p[3], np.float64)[order]
        del order
        p.clear()  # the process's arrays: what is left is in order
        if len(off) and int(off.max()) + int(size.max()) > MAX_BYTES:  # past int64: Python's integers
            off, size = off.astype(object), size.astype(object)
        byf = np.argsort(f, kind="stable")  # each file's reads together, in that order
        ff, oo, ee = f[byf], off[byf], (off + size)[byf]
        del byf, f, off
        same = ff[1:] == ff[:-1]
        follow, prev = oo[1:][same], ee[:-1][same]
        return size, dur, int((follow >= prev).sum()), int((follow == prev).sum()), len(ff) - int(same.sum())

    def result(self) -> dict:
        if not self.procs:
            return {}
        sizes, durs = [], []
        seq = consec = pairs = 0
        for proc in sorted(self.procs):
            sz, du, s, c, pr = self._proc(self.procs.pop(proc))
            sizes.append(sz)
            durs.append(du)
            seq, consec, pairs = seq + s, consec + c, pairs + pr
        n = sum(len(x) for x in sizes)
        allsz = np.sort(np.concatenate(sizes))
        m = n // 2
        median = int(allsz[m]) if n % 2 else (int(allsz[m - 1]) + int(allsz[m])) / 2  # statistics.median
        del allsz
        bw = [(sz[du > 0].astype(np.float64) / du[du > 0]) for sz, du in zip(sizes, durs, strict=True)]
        nbw = sum(len(x) for x in bw)
        n_follow = max(n - pairs, 1)
        return {"io_time_s": sum(_chunked(durs)), "bytes": sum(_chunked(sizes)), "xfer_min": min(_chunked(sizes)),
                "xfer_max": max(_chunked(sizes)), "xfer_mean": math.fsum(_chunked(sizes)) / n,  # statistics.fmean
                "xfer_median": median, "bandwidth_per_op": math.fsum(_chunked(bw)) / nbw if nbw else 0.0,
                "pct_sequential": 100.0 * seq / n_follow, "pct_consecutive": 100.0 * consec / n_follow,
                "files": self.files}


def _chunked(parts: list, step: int = 1 << 16) -> Iterator:
    """The Python numbers of a list of numpy arrays, in order, a slice at a time (never a whole list)."""
    for a in parts:
        for k in range(0, len(a), step):
            yield from a[k:k + step].tolist()


def features(events: list[dict], data_dir: Path) -> dict:
    """The DLIO paper's I/O features over the data-file reads of one side."""
    t = Features(data_dir)
    for e in events:
        t.add(e)
    return t.result()


# a training epoch as each side marks it: DLIO 2.0.0's DLIOBenchmark._train (one call per epoch and rank), the kernel's
# train_epoch region
EPOCH_REGIONS = ("DLIOBenchmark._train", "train_epoch")
DATA_CALLS = READS | {"write", "pwrite"}


def epochs(events: Iterable[dict]) -> list[tuple[float, float]]:
    """Epoch k = the k-th epoch region of every process that marks epochs (the ranks): [earliest start, latest end]
    (seconds)."""
    per_proc: dict[str, list] = defaultdict(list)
    for e in events:
        if e["name"] in EPOCH_REGIONS:
            per_proc[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
    spans = [sorted(v) for v in per_proc.values()]
    return [(min(s[k][0] for s in spans if len(s) > k), max(s[k][1] for s in spans if len(s) > k))
            for k in range(max((len(s) for s in spans), default=0))]


class Metadata:
    """The metadata rate (profiles.features.metadata_rate) per training epoch and over all of them, from the POSIX
    calls on the files under the data folder that move no data (every call but read/pread/write/pwrite: open, close,
    the stat family, lseek, ...; all processes), each counted in the epoch its start falls in; calls outside every
    epoch (dataset discovery before training) are counted apart. The epochs are known before the events are fed
    (the first pass over the traces)."""

    def __init__(self, data_dir: Path, spans: list[tuple[float, float]]) -> None:
        self.root = str(data_dir).rstrip("/") + "/"
        self.spans = spans
        self.opens = [0] * len(spans)
        self.meta = [0.0] * len(spans)
        self.outside = {"opens": 0, "metadata_s": 0.0}
        self.calls: Counter = Counter()

    def add(self, e: dict) -> None:
        if e["cat"] != "POSIX" or e["name"] in DATA_CALLS or not (e["fname"] or "").startswith(self.root):
            return
        self.add_call(e["name"], e["ts"], e["dur"])

    def add_call(self, name: str, ts: float, dur: float) -> None:
        """A call on a data file that moves no data."""
        self.calls[name] += 1
        k = None
        for i, (a, b) in enumerate(self.spans):
            if a <= ts < b:
                k = i
                break
        is_open = name in ("open", "openat")
        if k is None:
            self.outside["opens"] += is_open
            self.outside["metadata_s"] += dur
        else:
            self.opens[k] += is_open
            self.meta[k] += dur

    def result(self) -> dict:
        spans, opens, meta = self.spans, self.opens, self.meta
        return {"source": "DFTracer POSIX events on the files under the data folder; epochs from "
                          f"{' / '.join(EPOCH_REGIONS)} regions",
                "per_epoch": [metadata_rate(opens[k], meta[k], b - a, 1) for k, (a, b) in enumerate(spans)],
                "all": metadata_rate(sum(opens), sum(meta), sum(b - a for a, b in spans) or None,
                                     len(spans) or None),
                "outside_epochs": self.outside, "calls": dict(sorted(self.calls.items()))}


def metadata(events: list[dict], data_dir: Path) -> dict:
    """Metadata over a list of normalized events (its epochs from the same list)."""
    t = Metadata(data_dir, epochs(events))
    for e in events:
        t.add(e)
    return t.result()


KIND = {"pread": "read", "read": "read", "open": "open", "openat": "open", "close": "close",
        "compute": "compute", "TorchFramework.compute": "compute", "TFFramework.compute": "compute"}
# a lane of the timeline keeps at most this many events: beyond it, every s-th in trace order (s a power of two, so
# the kept events are spread evenly over the lane), with the lane's exact count and seconds per kind beside them
LANE_EVENTS = 20000


class Timeline:
    """Lanes per rank and process for the reports (times relative to the first event). A lane of more than
    LANE_EVENTS events is sampled (every s-th event in trace order) and says so: "sampled": {"every", "events",
    "counts", "seconds"} (the lane's whole event count, and its count and total duration per kind)."""

    def __init__(self) -> None:
        self.t0 = float("inf")
        self.lanes: dict[tuple, list] = {}  # (rank, pid) -> [kept (ts, d, kind), stride, n, counts, seconds]

    def add(self, e: dict) -> None:
        self.add_one(e["rank"], e["pid"], e["name"], e["ts"], e["dur"])

    def add_one(self, rank: int, pid: str, name: str, ts: float, dur: float) -> None:
        if ts < self.t0 or self.t0 != self.t0:  # min(t0, ts), NaN included
            self.t0 = min(self.t0, ts)
        kind = KIND.get(name)
        if kind is None:
            return
        lane = self.lanes.get((rank, pid))
        if lane is None:
            lane = self.lanes[(rank, pid)] = [[], 1, 0, Counter(), Counter()]
        d = round(dur, 6)
        if lane[2] % lane[1] == 0:
            lane[0].append((ts, d, kind))
            if len(lane[0]) > LANE_EVENTS:
                lane[0] = lane[0][::2]
                lane[1] *= 2
        lane[2] += 1
        lane[3][kind] += 1
        lane[4][kind] += d

    def result(self) -> dict:
        out = []
        for (r, p), (kept, every, n, counts, secs) in sorted(self.lanes.items()):
            lane = {"rank": r, "pid": _num(p, -1), "label": f"rank {r} pid {p}",
                    "events": [{"t": round(t - self.t0, 6), "d": d, "kind": k} for t, d, k in kept]}
            if every > 1:
                lane["sampled"] = {"every": every, "events": n, "counts": dict(sorted(counts.items())),
                                   "seconds": {k: round(v, 6) for k, v in sorted(secs.items())}}
            out.append(lane)
        return {"lanes": out}


def timeline(events: list[dict]) -> dict:
    """Timeline over a list of normalized events."""
    t = Timeline()
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


# the events the first pass decodes: the kernel's ranks, DFTracer 2.x's file names, the epoch regions
FIRST_PASS = ("rank_info", '"FH"', *EPOCH_REGIONS)


class Tables:
    """Every table of one launch, fed each normalized event once: what the tables test alike (a POSIX call, on a
    data file, under the checkpoint folder) tested once, the event then handed to each table's own step, the data
    files' names held once (Names). The same tables as each one's add() over the events."""

    def __init__(self, data_dir: Path, ckpt: Path, spans: list[tuple[float, float]]) -> None:
        self.names = Names()
        self.files = FileTable(data_dir, ckpt, self.names)
        self.opens = ProcessOpens(data_dir, self.names)
        self.checkpoints = CheckpointTable(ckpt)
        self.features = Features(data_dir, self.names)
        self.metadata = Metadata(data_dir, spans)
        self.timeline = Timeline()
        self.root, self.croot = self.files.root, self.checkpoints.root

    def add(self, e: dict) -> None:
        """One normalized event (normalize_one)."""
        self.timeline.add(e)
        if e["cat"] == "POSIX":
            self._posix(e)

    def _posix(self, e: dict) -> None:
        f = e["fname"] or ""
        in_ck = f.startswith(self.croot)
        if in_ck:
            self.checkpoints.add(e)
        if not f.startswith(self.root):
            if not in_ck:
                self.files.other[(e["name"], f)] += 1
            return
        i = self.names.get(f[len(self.root):])
        if not in_ck:
            self.files.add_data(i, e["name"], e["ret"], e["offset"], e["count"], e["dur"])
        self._data(i, e["rank"], e["pid"], e["name"], e["ts"], e["dur"], e["offset"], e["ret"], e["tid"])

    def _data(self, i: int, rank: int, pid: str, name: str, ts: float, dur: float, offset: int, ret: int,
              tid: str) -> None:
        if name in READS:
            self.features.add_read(pid, i, offset, max(ret, 0), rank, ts, dur)
        elif name not in DATA_CALLS:
            if name in ("open", "openat"):
                self.opens.add_open(rank, pid, ts, i, tid)
            self.metadata.add_call(name, ts, dur)

    def add_raw(self, e: dict, side: str, pid_rank: dict[str, int], fnames: dict[str, str]) -> None:
        """One decoded complete event ("ph" in COMPLETE, "_file_rank" set), normalized as normalize_one does, without
        making its dict on the hot path (a POSIX call on a data file outside the checkpoint folder) or for any
        other region (the timeline alone); the others (checkpoints, files outside the data folder) through
        normalize_one and add. tests/test_dftracer.py holds it to add(normalize_one(e)) on both tracers' traces."""
        pid, rank, cat, name = _who(e, side, pid_rank)
        try:
            ts, dur = int(e.get("ts", 0)), int(e.get("dur", 0))
        except (TypeError, ValueError):
            ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        ts, dur = ts / 1e6, dur / 1e6
        self.timeline.add_one(rank, pid, name, ts, dur)
        if cat != "POSIX":
            return
        a = e.get("args", {}) or {}
        f = (a.get("fname") if "fname" in a else fnames.get(str(a.get("fhash"))) if "fhash" in a else None) or ""
        if f.startswith(self.croot) or not f.startswith(self.root):
            self._posix(normalize_one(e, side, pid_rank, fnames))
            return
        try:
            offset, count, ret = int(a.get("offset", -1)), int(a.get("count", -1)), int(a.get("ret", -1))
        except (TypeError, ValueError):
            offset, count, ret = _num(a.get("offset"), -1), _num(a.get("count"), -1), _num(a.get("ret"), -1)
        i = self.names.get(f[len(self.root):])
        self.files.add_data(i, name, ret, offset, count, dur)
        self._data(i, rank, pid, name, ts, dur, offset, ret, str(e.get("tid")))


def _feed(outdir: Path, side: str, data_dir: Path) -> tuple[dict, Tables]:
    """One launch's traces streamed into its Tables: a first pass decodes only the events the second needs before
    it starts (ranks, file-name hashes, epochs); the second feeds each event to the tables as it is read. Memory:
    the per-file tables, the per-process open sequences, the reads' compact arrays (features) and a bounded
    timeline, never the list of events."""
    files = trace_files(outdir)
    first = [e for p in files for e in iter_events(p, FIRST_PASS)]
    pid_rank, fnames = names(first)
    spans = epochs(n for e in first if (n := normalize_one(e, side, pid_rank, fnames)) is not None)
    tables = Tables(data_dir, checkpoint_dir(outdir), spans)
    add = tables.add_raw
    n = 0
    # a process's preload trace (named after its rank) without a single event: the process ended before its tracer
    # flushed (torch terminates a spawned reader that has not exited within its shutdown wait, under load; DLIO's
    # launches write each event as logged against it: UNBUFFERED_TRACE): what it read is missing from the counts.
    # (The rank's file before initialize_log renames it, and the app trace of a process that traced nothing, are
    # empty with DFTracer's buffered defaults: not counted.)
    empty = []
    for p in files:
        raw = 0
        for e in iter_events(p):
            raw += 1
            if e.get("ph") not in COMPLETE:
                continue
            n += 1
            add(e, side, pid_rank, fnames)
        if not raw and TRACE_RANK.search(p.name) and ".pfw" in p.name and "-preload." in p.name:
            empty.append(p.name)
    return {"side": side, "data_dir": str(data_dir), "events": n, "empty_traces": sorted(empty)}, tables


def parse(outdir: Path, side: str, data_dir: Path) -> dict:
    """Every table of one launch's traces (_feed): {side, data_dir, events, empty_traces, files, process_opens,
    checkpoints, features, metadata, timeline}."""
    head, t = _feed(outdir, side, data_dir)
    out = {"features": t.features.result(), "process_opens": t.opens.result(), "files": t.files.result()}
    return {**head, "files": out["files"], "process_opens": out["process_opens"],
            "process_order": t.opens.order(), "checkpoints": t.checkpoints.result(), "features": out["features"],
            "metadata": t.metadata.result(), "timeline": t.timeline.result()}


def parse_json(outdir: Path, side: str, data_dir: Path) -> tuple[str, dict]:
    """parse's tables as collection writes them: dftracer-<side>.json's JSON text (json.dumps of parse's table
    without its timeline, byte for byte), made a part at a time as the tables are dropped (the features' arrays
    first, then the open sequences, then the per-file rows, written as made), and the timeline."""
    head, t = _feed(outdir, side, data_dir)
    feats = json.dumps(t.features.result())
    t.features = None
    opens = json.dumps(t.opens.result())
    order = json.dumps(t.opens.order())
    t.opens = None
    rest = {"checkpoints": t.checkpoints.result(), "features": None, "metadata": t.metadata.result()}
    timeline = t.timeline.result()
    t.names.index = {}  # the rows are found by index from here on
    parts = [json.dumps(head)[:-1], ', "files": ', *t.files.json_parts(), ', "process_opens": ', opens,
             ', "process_order": ', order, ', "checkpoints": ', json.dumps(rest["checkpoints"]),
             ', "features": ', feats, ', "metadata": ', json.dumps(rest["metadata"]), "}"]
    del t  # the per-file arrays and names: only the text's parts are left to join
    return "".join(parts), timeline


DATA_FIELDS = ("opens", "closes", "reads", "bytes", "accesses")
# how the checks read a side's table: equal counts one shared object, without the per-file read time no check uses
# (a float per file: every row would be its own); at 10^6 files ~0.3 GB a side, not ~1.2 GB (common.rundir.loads_table)
SHARED = {"shared": True, "skip": ("read_time_s",)}
FILE_FIELDS = ("opens", "closes", "reads", "bytes")  # the per-file table's counters (tables/files-dftracer.json)


CKPT_FIELDS = ("opens", "closes", "writes", "bytes", "fsyncs", "write_sizes", "reads", "read_bytes", "read_sizes",
               "seeks", "fadvises")


def _classify_both(call: str, rel: str, roots: dict, kind: str, x: int, y: int) -> str | None:
    """A difference in a call's count on a path both sides name alike (relative to their data or checkpoint folder):
    explained, or not, as the side that made more of the call made it."""
    side = "kernel" if y > x else "dlio"
    return classify(call, rel, roots[side], kind)


def compare_checkpoints(run: RunView, d: dict | None, k: dict | None, diffs: list, roots: dict) -> tuple[list, dict]:
    """dftracer.checkpoints: per checkpoint file of the launch, opens, closes, writes, bytes, fsyncs, the multiset of
    write sizes, reads, bytes read, the multiset of read sizes, lseeks and posix_fadvise calls equal on both sides;
    other calls on them go to the classified differences, as do the calls on what neither side opened (the
    per-checkpoint folders)."""
    if not (run.cfg.get("workflow") or {}).get("checkpoint"):
        return [], result("dftracer.checkpoints", SKIP, detail="checkpointing is off in this workload")
    if d is None or k is None:
        return [], result("dftracer.checkpoints", FAIL, detail="a trace table has no checkpoint section")
    rows, bad = [], []
    for n in sorted(set(d) | set(k)):
        a, b = d.get(n) or {}, k.get(n) or {}
        if not a.get("opens") and not b.get("opens"):  # a folder (global_epoch<e>_step<s>/): mkdir, stat, opendir
            for call in sorted(set(a.get("calls", {})) | set(b.get("calls", {}))):
                x, y = a.get("calls", {}).get(call, 0), b.get("calls", {}).get(call, 0)
                if x != y:
                    diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                                  "class": _classify_both(call, n, roots, CHECKPOINT, x, y)})
            continue
        rows += [{"file": n, "side": side, **{f: row.get(f) for f in CKPT_FIELDS}}
                 for side, row in (("dlio", d.get(n)), ("kernel", k.get(n))) if row is not None]
        wrong = [f for f in CKPT_FIELDS if a.get(f) != b.get(f)]
        if wrong:
            bad.append({"file": n, "fields": {f: {"dlio": a.get(f), "kernel": b.get(f)} for f in wrong}})
        for call in sorted(set(a.get("calls", {})) | set(b.get("calls", {})) if a and b else ()):
            # a file only one side wrote fails dftracer.checkpoints itself; its other calls are not differences
            if call in ("open", "openat", "close", "write", "pwrite", "fsync", "fdatasync", "read", "pread", "lseek",
                        "posix_fadvise"):
                continue
            x, y = a.get("calls", {}).get(call, 0), b.get("calls", {}).get(call, 0)
            if x != y:
                diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                              "class": _classify_both(call, n, roots, CHECKPOINT, x, y)})
    if not rows:
        return rows, result("dftracer.checkpoints", FAIL,
                            detail="checkpointing is on but no checkpoint file was traced")
    n = len({r["file"] for r in rows})
    return rows, result("dftracer.checkpoints", PASS if not bad else FAIL, n, n - len(bad),
                        f"{n} checkpoint files: opens, closes, writes, bytes, fsyncs, write sizes, reads, bytes read, "
                        "read sizes, lseeks and posix_fadvise calls equal" if not bad
                        else f"{len(bad)} of {n} checkpoint files differ; first: {bad[0]}")


def check_dftracer(run: RunView) -> list[dict]:
    """System level: per data file, opens/closes/reads/bytes/access multiset equal on both sides; every other POSIX
    difference listed and classified; the DLIO paper's cosine similarity over I/O features, reported."""
    d, k = (run.table(f"dftracer-{side}.json", **SHARED) for side in SIDES)
    if d is None and k is not None and model_judges_kernel(run, "process_opens" in k):  # against the model
        return check_model_opens(run, None, k, None)
    if d is None or k is None:
        return [result("dftracer.per_file", SKIP, detail="dftracer profile not run (or a launch failed)")]
    out, diffs = [], Differences()
    files = FileRows(FILE_FIELDS)
    roots = {side: launch_roots(run, side, "dftracer") for side in SIDES}
    prewarm = prewarm_prefetch(run)
    extra: dict[str, int] = {}  # data file -> DLIO's opens beyond the kernel's (its pre-warm prefetch)
    df, kf = d["files"]["files"], k["files"]["files"]
    kernel_opens = _PerOpen(kf)
    names = sorted(set(df) | set(kf))
    data = [n for n in names if (df.get(n, {}).get("opens", 0) + kf.get(n, {}).get("opens", 0)) > 0
            and not kernel_record(n, df)]
    is_data = set(data)  # (a list's `in` made this check quadratic in the files: 100 s at 10^5)
    bad_files, raced = 0, Counter()
    for n in names:
        a, b = df.get(n), kf.get(n)
        files.add(n, *({**{f: row[f] for f in FILE_FIELDS}, "sizes": access_sizes(row["accesses"])}
                       if row is not None else None for row in (a, b)))
        if n not in is_data:  # a directory or a file only probed: explained below
            for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
                diffs.append({"file": n, "field": call, "dlio": (a or {}).get("calls", {}).get(call, 0),
                              "kernel": (b or {}).get("calls", {}).get(call, 0),
                              "class": _classify_both(call, n, roots, DATA, (a or {}).get("calls", {}).get(call, 0),
                                                      (b or {}).get("calls", {}).get(call, 0))})
            continue
        a, b = _fd_reuse(a, raced, "dlio"), _fd_reuse(b, raced, "kernel")
        bad_files += _compare_data_file(n, a, b, kernel_opens if prewarm else None, extra, diffs, roots)
    for side, t in (("dlio", d), ("kernel", k)):
        for o in t["files"]["other"]:
            diffs.append({"file": o["file"], "field": o["call"], "dlio": o["n"] if side == "dlio" else 0,
                          "kernel": o["n"] if side == "kernel" else 0,
                          "class": classify(o["call"], o["file"], roots[side])})
    ck_rows, ck_result = compare_checkpoints(run, d.get("checkpoints"), k.get("checkpoints"), diffs, roots)
    run.put_table("files-dftracer.json", files.table(differences=diffs, checkpoints=ck_rows))
    raw = raw_reader(run)  # DLIO reads whole files without HDF5: this is the level where equivalence is shown
    first = next((x for x in diffs if x["field"] in DATA_FIELDS), None)
    alone = sum(not kf.get(n, {}).get("opens") for n in extra)  # files only DLIO's pre-warm opened
    if checkpoint_only(run.cfg) and not data:
        out.append(result("dftracer.per_file", SKIP, detail="a checkpoint-only workload (workflow.train false): no "
                          "data file is read; its checkpoint files are compared in dftracer.checkpoints"))
    else:
        out.append(result("dftracer.per_file", PASS if data and bad_files == 0 else FAIL, len(data),
                          len(data) - bad_files,
                          f"{len(data)} data files: opens, closes, reads, bytes and (offset, size) accesses equal" +
                          (f" but for DLIO's pre-warm prefetch: {sum(extra.values())} more opens of {len(extra)} "
                           "files, each reading the file as the kernel's opens do" +
                           (f" ({alone} of them opened by DLIO's pre-warm alone, each open reading as the kernel's "
                            "read a file of that size)" if alone else "") +
                           " (counts.dftracer and dftracer.batches check which)"
                           if extra else "") +
                          ("; DLIO reads whole files without HDF5 (sample_read whole_file): the equivalence of the two "
                           "sides' I/O, in place of the Log VFD checks" if raw else "") +
                          (f"; closes beyond a file's opens, not counted (DLIO {raced['dlio']}, the kernel "
                           f"{raced['kernel']}): DFTracer maps a close to the name its fd number had, and another "
                           "thread can reuse the number while a slow close of the file runs" if raced else "")
                          if data and not bad_files else
                          (f"{bad_files} files differ; first: {first}" if first else "no data-file reads traced") +
                          "".join(f"; {side}: {len(t.get('empty_traces') or [])} trace files hold no event (processes "
                                  "that ended before their tracer flushed: their reads are missing here)"
                                  for side, t in (("DLIO", d), ("kernel", k)) if t.get("empty_traces"))))
    out.append(ck_result)
    if raw and not checkpoint_only(run.cfg):
        out += check_model_opens(run, d, k, prewarm)
        out += check_workers(run, d, k)
    elif not checkpoint_only(run.cfg):
        out += check_order(run, d, k)
    out.append(explained("dftracer", [x for x in diffs if x["field"] not in DATA_FIELDS], diffs.dropped))
    return out + similarity("similarity", d, k, "the data-file reads")


def _fd_reuse(row: dict | None, raced: Counter, side: str) -> dict | None:
    """A data file's row with its closes at most its opens (no side dups a data file's fd): DFTracer names a close by
    the file its fd number was opened on, and Linux frees the number when close(2) starts, so another thread of the
    process can open and close that number before the slow close returns and the tracer forgets the name (measured:
    DLIO 3.x, a reader's close of an npz file taking 31 ms, torch's thread closing fd 4 meanwhile). The excess is
    counted in raced[side]."""
    if row is None or row["closes"] <= row["opens"]:
        return row
    raced[side] += row["closes"] - row["opens"]
    return {**row, "closes": row["opens"]}


def _reading(t: dict, r: int) -> list[dict]:
    """A side's threads of rank r that opened a data file (a name the side read from: the data folder's directories,
    opened to list them, are left out), each with its opens in time order."""
    files = t["files"]["files"]
    rows = [{**x, "opens": [n for n in x["opens"] if (files.get(n) or {}).get("reads")]}
            for x in (t.get("process_order") or {}).get(str(r), [])]
    return [x for x in rows if x["opens"]]


def _common(x: list[str], y: list[str]) -> int:
    """The length of two lists' common prefix."""
    return next((p for p in range(min(len(x), len(y))) if x[p] != y[p]), min(len(x), len(y)))


def _first_difference(a: list[list[str]], b: list[list[str]]) -> tuple[int, int, int, str, str]:
    """The first differing open of two sides' per-process lists, once the lists equal on both sides are set aside:
    each remaining DLIO list beside the kernel list that opens the same file at the most positions (then: the longest
    common prefix). (i, j, position, DLIO's name, the kernel's name): the lists' indices, "-" for an open one side
    does not make."""
    left = list(range(len(b)))
    for i, x in enumerate(a):
        if x in (b[j] for j in left):
            left.remove(next(j for j in left if b[j] == x))
            continue
        if not left:
            return i, -1, 0, x[0], "-"
        j = max(left, key=lambda j, x=x: (sum(p == q for p, q in zip(x, b[j], strict=False)), _common(x, b[j])))
        p, y = _common(x, b[j]), b[j]
        return i, j, p, x[p] if p < len(x) else "-", y[p] if p < len(y) else "-"
    j = left[0]
    return -1, j, 0, "-", b[j][0]


def _order_rule(run: RunView) -> tuple[str | None, str]:
    """Why dftracer.order cannot compare this run (None: it can), and how DLIO's order is fixed: which process reads
    which batch, and in which order it opens its files. DLIO 2.0.0 data_loader/torch_data_loader.py:87-110: the rank's
    slice of the sampler, shuffled after np.random.seed(seed) at every __iter__; :137-162: a DataLoader of
    read_threads workers, drop_last, persistent_workers with workers (so one process per worker for the whole run).
    torch (the venv's) utils/data/dataloader.py:1260: each epoch's iterator restarts its worker cycle at worker 0;
    :1533-1546: batch after batch to the next worker of the cycle (in_order); _utils/worker.py:335: a worker takes its
    indices from its own queue, first in, first out; _utils/fetch.py:54: a batch's samples read in the sampler's
    order. So worker w opens batches w, w + W, ... in order; which OS process is worker w is not recorded."""
    reader = run.cfg.get("reader") or {}
    if (reader.get("data_loader") or run.cfg.get("framework")) != "pytorch":
        return ("DLIO's TensorFlow readers run on tf.data's thread pool: which thread opens a file is not fixed "
                "(the per-file counts and the Log VFD compare them)"), ""
    if int(reader.get("read_threads", 1)) == 0:
        return None, "read_threads 0: the rank opens every file itself, in its sampler's order"
    return None, ("reader processes: torch hands batch k of an epoch to worker k mod W, and each worker opens its "
                  "batches' files in order (the workers' interleaving is racy; each worker's list is not)")


def check_order(run: RunView, d: dict, k: dict) -> list[dict]:
    """dftracer.order.rank<r>: per rank, each reading process's data-file opens by name (relative to the side's data
    folder), in time order, side by side: as many processes, and the same lists, matched as a multiset (which OS
    process is worker w is not recorded; the sequence of each is fixed: _order_rule). The detail names the first
    differing open (rank, position in its process's list, both names)."""
    why, rule = _order_rule(run)
    if why:
        return [result("dftracer.order", SKIP, detail=why)]
    if "process_order" not in d or "process_order" not in k:
        return [result("dftracer.order", SKIP, detail="the DFTracer tables were collected before process_order "
                       "(re-collect the run to compare the order of opens)")]
    out = []
    for r in range(run.ranks):
        a, b = ([x["opens"] for x in _reading(t, r)] for t in (d, k))
        n = sum(map(len, a))
        if sorted(a) == sorted(b) and a:
            out.append(result(f"dftracer.order.rank{r}", PASS, n, n,
                              f"{len(a)} reading processes on each side, {n} data-file opens, each process's in "
                              f"the same order ({rule})"))
            continue
        i, j, p, x, y = _first_difference(a, b) if a or b else (-1, -1, 0, "-", "-")
        out.append(result(f"dftracer.order.rank{r}", FAIL, n, sum(map(len, b)),
                          f"reading processes: DLIO {len(a)}, the kernel {len(b)}; " +
                          (f"first differing open: rank {r}, position {p} of a reading process's opens "
                           f"(DLIO's list {i}, the kernel's {j}, in order of first open): DLIO {x}, the kernel {y}"
                           if a or b else "no data-file open traced on either side") + f" ({rule})"))
    return out


# a data file's read calls DFTracer records besides read/pread: the O_DIRECT path (reader.odirect) reads with readv,
# which the file table counts under "calls", not "reads"
READV_CALLS = ("readv", "preadv", "preadv2")


def _read_from(row: dict | None) -> bool:
    """Whether a data file's row records a read: read/pread, or readv (O_DIRECT's npz reads: no "reads" counted)."""
    return bool(row) and bool(row.get("reads") or any((row.get("calls") or {}).get(c) for c in READV_CALLS))


def _process_files(t: dict, r: int, cfg: dict) -> list[list[int]]:
    """A side's processes of rank r that opened a data file it read from (_read_from), each with its training-file
    opens (by DLIO's index; -1 for a name that is no training file of the workload) in time order."""
    files = t["files"]["files"]
    rows = [[train_file_index(n, cfg) for n in x if _read_from(files.get(n))]
            for x in (t.get("process_opens") or {}).get(str(r), [])]
    return [x for x in rows if x]


def _match_iterators(lists: list[list[int]], segs: list[dict]) -> tuple[list[list[int]], list[str]]:
    """DLIO 3.x's processes (spawned per iterator) matched to the model's workers: a training iterator's worker reads
    its list exactly; a pre-warm's reads at least its sure batches and a prefix of the batches it may read (the
    iterator is deleted when its first batch arrives). (the processes no worker explains, the workers no process
    read: "<phase> <epoch> worker <w>")."""
    left = list(lists)
    missing = []
    # the training iterators' exact lists first: a pre-warm's worker may read what the next epoch's worker reads
    for s in sorted(segs, key=lambda s: s["phase"] == "prewarm"):
        for w, (sure, most) in enumerate(zip(s["workers"], s["workers_max"], strict=True)):
            fit = [x for x in left if (x == sure if s["phase"] != "prewarm" else
                                       len(sure) <= len(x) <= len(most) and x == most[:len(x)])]
            if fit:
                left.remove(max(fit, key=len))
            elif sure:
                missing.append(f"{s['phase']} {s['epoch']} worker {w} ({len(sure)} opens)")
    return left, missing


def check_workers(run: RunView, d: dict | None, k: dict) -> list[dict]:
    """dftracer.order.rank<r> of MLCommons DLIO 3.x (the model's segments carry "workers", validate/model.py
    _dlio3_workers): per rank, each reading process's data-file opens by name, in order, against the model's
    workers at the configured read_threads W, so the number of reading processes is judged too. DLIO spawns W
    workers per iterator (each pre-warm and each epoch: torch_data_loader.py, spawn context), so its processes match
    the iterators' workers one by one (_match_iterators); the kernel's W reader processes live the whole run, each
    reading its worker's lists of every iterator in turn (read_threads 0: the rank itself, on both sides)."""
    segs = run.model_reads(run.cfg)
    if d is None or not all("workers" in s for ss in segs.values() for s in ss):
        return []
    rt = int((run.cfg.get("reader") or {}).get("read_threads", 1))
    out = []
    for r in range(run.ranks):
        want = [x for x in ([f for s in segs[r] for f in s["workers"][w]] for w in range(max(rt, 1))) if x]
        k_lists, d_lists = _process_files(k, r, run.cfg), _process_files(d, r, run.cfg)
        bad = []
        if sorted(k_lists) != sorted(want):
            i, j, p, x, y = _first_difference(want, k_lists)
            bad.append(f"the kernel: {len(k_lists)} reading processes, the model {len(want)}; first differing "
                       f"open: position {p}: the model's file {x}, the kernel's {y}")
        left, missing = _match_iterators(d_lists, segs[r]) if rt > 0 else \
            (([] if d_lists == want else d_lists), ([] if d_lists == want else ["the rank's own list"]))
        if left or missing:
            bad.append(f"DLIO: {len(d_lists)} reading processes, {len(left)} of them reading no modelled worker's "
                       f"files in order (first opens {left[0][:4] if left else []}), modelled workers not found: "
                       f"{', '.join(missing[:3]) or 'none'}" +
                       (f" (DLIO read with more processes than read_threads {rt}: DLIO 3.x sizes its readers by the "
                        "machine, utils/config.py derive_configurations; the kernel reads with read_threads as given)"
                        if len(d_lists) > sum(bool(s['workers_max'][w]) for s in segs[r]
                                              for w in range(max(rt, 1))) else ""))
        n = sum(map(len, want))
        what = f"read_threads {rt}: " + ("the rank reads every batch itself" if rt == 0 else
                                         f"{rt} worker{'s' * (rt > 1)} per iterator on DLIO's side, {rt} for the "
                                         "whole run on the kernel's; worker w reads batches w, w + W, ... in order")
        out.append(result(f"dftracer.order.rank{r}", FAIL if bad else PASS, n, sum(map(len, k_lists)),
                          "; ".join(bad) + f" ({what})" if bad else
                          f"{len(d_lists)} reading processes on DLIO's side, {len(k_lists)} on the kernel's, each "
                          f"process's data-file opens in the model's order ({what})"))
    return out


def prewarm_prefetch(run: RunView) -> dict | None:
    """The analytic model's reads when the reference DLIO's pre-warm may read more than the model's exact share
    (rule prewarm, MLCommons 3.x main.py:705-717, :809-820), else None (then every check is exact). next(iter(loader))
    hands prefetch_factor x workers batches to the spawned workers and deletes the iterator when the first batch
    arrives: worker 0 reads its whole share (the model's pre-warm samples, as the kernel does); how many of the other
    workers' batches are read depends on how far each spawned worker got (measured: +7 and +14 opens on the two ranks
    of one tiny unet3d run at 4 read threads). With 0 or 1 read threads there are no such batches: no tolerance."""
    if not dlio_rule(run, "prewarm") or int((run.cfg.get("reader") or {}).get("read_threads", 1)) == 0:
        return None
    reads = run.model_reads(run.cfg)
    if not any(seg.get("prefetch_samples") for segs in reads.values() for seg in segs):
        return None
    return reads


def _compare_data_file(n: str, a: dict | None, b: dict | None, prefetch: _PerOpen | None, extra: dict[str, int],
                       diffs: list, roots: dict) -> bool:
    """One data file's rows of both sides compared (False when they agree); DLIO's opens beyond the kernel's go to
    extra when its pre-warm may prefetch (prefetch: the kernel's per-open rows) and each reads as the kernel's do: of
    the same file, or, for a file the kernel never opened, of a file of that size. The pre-warm after an epoch
    iterates the loader reconfigured for the next one (MLCommons 3.x main.py:802, :811-818): its prefetched batches are
    next epoch's files, among them those no rank read this epoch (the remainder below a whole batch); the counts and
    batch checks say which files those may be."""
    wrong = [f for f in DATA_FIELDS if (a or {}).get(f) != (b or {}).get(f)]
    if wrong and prefetch is not None and (more := _whole_opens_more(a, b) or prefetch.alone(a, b)):
        extra[n], wrong = more, []
    for f in wrong:
        diffs.append({"file": n, "field": f, "dlio": (a or {}).get(f), "kernel": (b or {}).get(f), "class": None})
    if n in extra and not (b or {}).get("opens"):
        return False  # its other calls were matched with the opens (prefetch.alone)
    for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
        if call in ("open", "openat", "close", "pread", "read"):
            continue
        x, y = (a or {}).get("calls", {}).get(call, 0), (b or {}).get("calls", {}).get(call, 0)
        # a file DLIO's pre-warm opened more often: its other calls in the same proportion
        if (x * b["opens"] != y * a["opens"]) if n in extra else x != y:
            diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                          "class": _classify_both(call, n, roots, DATA, x, y)})
    return bool(wrong)


class _PerOpen:
    """The kernel's data-file rows per open (closes, reads, bytes, (offset, size) accesses and every call, each over
    the file's opens), collected when first asked: what one open of a file of a given size reads on the kernel's
    side (a whole-file read's accesses and bytes name the size)."""

    def __init__(self, kernel_files: dict):
        self.files, self.seen = kernel_files, None

    @staticmethod
    def of(row: dict) -> tuple | None:
        n = row.get("opens") or 0
        if not n or any(row[f] % n for f in ("closes", "reads", "bytes")) or \
                any(c % n for c in (*row["accesses"].values(), *row.get("calls", {}).values())):
            return None
        return (row["closes"] // n, row["reads"] // n, row["bytes"] // n,
                tuple(sorted((x, c // n) for x, c in row["accesses"].items())),
                tuple(sorted((x, c // n) for x, c in row.get("calls", {}).items())))

    def alone(self, a: dict | None, b: dict | None) -> int:
        """DLIO's opens of a file the kernel never opened, when every one of them reads as one open of the kernel's
        reads some file (of that size), else 0."""
        if not a or (b or {}).get("opens") or (mine := self.of(a)) is None:
            return 0
        if self.seen is None:
            self.seen = {p for row in self.files.values() if (p := self.of(row)) is not None}
        return a["opens"] if mine in self.seen else 0


def _whole_opens_more(a: dict | None, b: dict | None) -> int:
    """How many more opens DLIO's row has than the kernel's when every one of them does what the kernel's do (closes,
    reads, bytes and accesses in the same proportion), else 0."""
    if not a or not b or not b["opens"] or a["opens"] <= b["opens"]:
        return 0
    na, nb = a["opens"], b["opens"]
    same = all(a[f] * nb == b[f] * na for f in ("closes", "reads", "bytes")) and \
        set(a["accesses"]) == set(b["accesses"]) and all(a["accesses"][x] * nb == b["accesses"][x] * na
                                                          for x in a["accesses"])
    return na - nb if same else 0


def check_model_opens(run: RunView, d: dict | None, k: dict, model_reads: dict | None) -> list[dict]:
    """A DLIO reading whole files (no Log VFD count to check): each rank's data-file opens against the analytic model,
    per file. The kernel exactly; DLIO exactly without pre-warm prefetch, else at least the model's opens and at most
    the prefetch bound, the extra opens among the files of the pre-warm batches after the first (the model's
    prefetch_samples). Files map to their index by DLIO's name (img_<i>_of_<N>). d None (a kernel-only run): the
    kernel's rows alone."""
    segs = model_reads if model_reads is not None else run.model_reads(run.cfg)
    spf = int((run.cfg.get("dataset") or {}).get("num_samples_per_file", 1))
    out = []
    for r in range(run.ranks):
        # a segment's "bytes" names, per whole-file read, the file read: one open each (an HDF5 model of one sample
        # per file: its read_files)
        want = Counter(f for seg in segs[r] for f in seg.get("read_files", seg["bytes"]))
        may = Counter(s // spf for seg in segs[r] for s in seg.get("prefetch_samples", []) if model_reads)
        for side, t in (("kernel", k), ("dlio", d)) if d is not None else (("kernel", k),):
            got = Counter(train_file_index(f, run.cfg) for files in (t.get("process_opens") or {}).get(str(r), [])
                          for f in files
                          if side == "dlio" or f != GEN_RECORD)  # the kernel's read of its record: no data file
            unnamed = got.pop(-1, 0)
            more, fewer = got - want, want - got
            if side == "kernel" or not may:
                ok = not more and not fewer and not unnamed
                detail = f"{sum(got.values())} opens of {len(got)} files, as modelled" if ok else \
                    f"{sum(fewer.values())} modelled opens missing (first files {sorted(fewer)[:4]}), " \
                    f"{sum(more.values())} not modelled (first files {sorted(more)[:4]}), {unnamed} unnamed"
            else:
                beyond = more - may
                ok = not fewer and not beyond and not unnamed
                detail = (f"{sum(want.values())} modelled opens and {sum(more.values())} of at most "
                          f"{sum(may.values())} pre-warm prefetch opens, all of the prefetched batches' files") if ok \
                    else (f"{sum(fewer.values())} modelled opens missing (files {sorted(fewer)[:4]}), "
                          f"{sum(beyond.values())} beyond the pre-warm prefetch bound (files {sorted(beyond)[:4]}), "
                          f"{unnamed} unnamed")
            out.append(result(f"counts.dftracer.{side}.rank{r}", PASS if ok else FAIL, sum(want.values()),
                              sum(got.values()), f"model of DLIO {run.release}, opens per data file: {detail}"))
        if d is not None:  # (a kernel-only run: no DLIO batches to set beside the kernel's)
            out.append(_batches(run, r, segs[r], d, k, model_reads is not None))
    return out


def _batches(run: RunView, r: int, segs: list[dict], d: dict, k: dict, prefetch: bool) -> dict:
    """dftracer.batches.rank<r>: the order of reads within each batch. Every process's data-file opens, in time
    order, cut into batches of batch_size opens (one whole-file open per sample): the kernel's batches must be the
    model's (each segment's reads cut alike), as a multiset of ordered file tuples; DLIO's the model's plus pre-warm
    batches after the first (prefetch_samples cut alike), its reader's last batch possibly cut short by the
    iterator's deletion (a prefix of one of those)."""
    bs = int((run.cfg.get("reader") or {}).get("batch_size", 1))

    def cut(files: list[int]) -> list[tuple]:
        return [tuple(files[i:i + bs]) for i in range(0, len(files), bs)]

    want = Counter(b for seg in segs for b in cut(list(seg["bytes"])))
    spf = int((run.cfg.get("dataset") or {}).get("num_samples_per_file", 1))
    may = Counter(b for seg in segs for b in cut([s // spf for s in seg.get("prefetch_samples", [])])) \
        if prefetch else Counter()
    verdicts = []
    for side, t in (("kernel", k), ("dlio", d)):
        got: Counter = Counter()
        partial = []
        for files in (t.get("process_opens") or {}).get(str(r), []):
            chunks = cut([train_file_index(f, run.cfg) for f in files])
            if chunks and len(chunks[-1]) < bs:
                partial.append(chunks.pop())
            got.update(chunks)
        more, fewer = got - want, want - got
        if side == "kernel" or not may:
            bad = more or fewer or partial
        else:
            spare = may - more
            bad = fewer or (more - may) or any(not any(b[:len(p)] == p for b in spare) for p in partial)
        verdicts.append((side, not bad, sum(got.values()), len(partial), more, fewer))
    ok = all(v[1] for v in verdicts)
    (ks, _, kn, _, _, _), (ds, _, dn, dp, dmore, _) = verdicts
    detail = (f"{sum(want.values())} modelled batches of {bs} reads, each in the modelled order: the kernel {kn}, "
              f"DLIO {dn}" + (f" ({sum(dmore.values())} of them and {dp} cut short from its pre-warm prefetch)"
                              if dmore or dp else "")) if ok else \
        "; ".join(f"{s}: {sum(f.values())} modelled batches missing or out of order (first {sorted(f)[:1]}), "
                  f"{sum(m.values())} not modelled (first {sorted(m)[:1]})"
                  for s, good, _, _, m, f in verdicts if not good)
    return result(f"dftracer.batches.rank{r}", PASS if ok else FAIL, sum(want.values()), dn, detail)


# DLIO's spawned readers under DFTracer 2.x: each event written to the trace as it is logged, uncompressed. torch
# ends a reader that has not exited within 5 s of its iterator's shutdown with SIGTERM
# (torch/utils/data/dataloader.py `_shutdown_workers`: join(timeout=MP_STATUS_CHECK_INTERVAL), then terminate()), and
# a reader's exit (the interpreter's teardown of torch) takes longer than that on a loaded machine: measured with strace
# on DLIO 3.x (f6796ed), every reader process of a tiny retinanet_b200 or unet3d_b200 run was killed that way, after
# its last read. DFTracer writes its buffer (16 MiB, gzip) only when full or at its exit handler, which SIGTERM skips:
# the trace file stays empty. With the buffer at 1 byte (dftracer's BufferManager writes when the event would
# overflow it) and no compression (a gzip stream cut short loses zlib's pending block), a terminated reader's trace
# holds every call it completed. DLIO's I/O on its data files is untouched: only the tracer's own writes change.
UNBUFFERED_TRACE = {"DFTRACER_WRITE_BUFFER_SIZE": "1", "DFTRACER_TRACE_COMPRESSION": "0"}


@register
class DFTracer(Profile):
    name = "dftracer"
    holds_file_tables = True
    order = 30
    checks = (check_dftracer, check_compute)

    def available(self, ctx: Context) -> Found:
        lib = preload_library(ctx.dlio_venv)
        if lib is None:
            return Found(False, f"no libdftracer_preload.so in {ctx.dlio_venv} (neither pydftracer 1.0 nor the "
                                "dftracer 2.x core wheel is installed)")
        ver = pydftracer_version(ctx.dlio_venv) or "?"
        return Found(True, info={"lib": str(lib), "pydftracer": ver, "dlio_preload": not ver.startswith("1.")})

    def wrap(self, launch: Launch) -> Wrapped:
        """DLIO traces itself (pydftracer, switched on by the environment), under the preload library as well with
        pydftracer 2.x (its spawned readers); the kernel runs under the preload library, its trace next to the
        launch, restricted to the data and checkpoint folders."""
        env = {**launch.env, "DFTRACER_ENABLE": "1", "DFTRACER_INC_METADATA": "1"}
        if launch.side == "kernel" or launch.info.get("dlio_preload"):
            # the data folder and the checkpoint folder, as DLIO 2.0.0 hands both to DFTracer (utils/config.py:194-195)
            env.update({"LD_PRELOAD": launch.info["lib"], "DFTRACER_INIT": "PRELOAD",
                        "DFTRACER_LOG_FILE": str(launch.workdir / "trace"),
                        "DFTRACER_DATA_DIR": f"{launch.data}:{checkpoint_dir(launch.workdir)}"})
        if launch.side == "dlio" and launch.info.get("dlio_preload"):
            env.update(UNBUFFERED_TRACE)
        return Wrapped(list(launch.argv), env)

    def collect(self, done: Done) -> dict:
        """The launch's table as its JSON text (parse_json: the bytes json.dumps gives, without holding the rows as
        dicts), or parsed back under BIG_TABLE bytes (which the run directory writes indented), and its timeline."""
        text, timeline = parse_json(done.workdir, done.side, done.data)
        return {f"dftracer-timeline-{done.side}.json": timeline,
                f"dftracer-{done.side}.json": text if len(text) >= BIG_TABLE else json.loads(text)}
