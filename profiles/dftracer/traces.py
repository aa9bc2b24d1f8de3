"""DFTracer's trace files read: its .pfw[.gz] files decoded one event at a time, the events normalized (rank, pid,
call, file, times, offset, count, return value). Where the tracer is installed: the package (profiles.dftracer)."""
from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

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
