"""strace profile: every I/O system call of every process of a rank, as the Linux kernel sees it.

DFTracer and Darshan see the C library's wrappers (and only those they wrap: glibc >= 2.33's stat family, readv and
O_DIRECT's flags are unseen or dropped); a library preloaded ahead of them can hide a call from the kernel altogether
(a no-op fsync or posix_fadvise). strace sees the system calls themselves. Each rank's command runs under
`strace -f -ff` (every thread and process it starts, reader processes included, each in its own file
`strace/trace.r<rank>.<pid>`, the rank from the launcher's environment); the system calls traced are the I/O ones
(SYSCALLS), with each descriptor's path (-y), a microsecond clock (-ttt) and at most 16 bytes or elements of a buffer
(-s 16: readv's first 16 iovec lengths; a longer vector is counted, its lengths past 16 not listed).

Collected per side (tables/strace-<side>.json), streaming one line at a time: per data file (relative to the side's
data folder) and per checkpoint file (relative to the launch's checkpoint folder; the kernel's `<name>.partial.<pid>`
under its final name) the open flags, the (offset, size) of every read, readv's iovec lengths, writes, fsync,
fdatasync, posix_fadvise (offset, length, advice), the stat family, renames, unlinks, mmaps, lseeks and closes; per
rank its data-file opens in time order and the processes that opened one; per rank the LD_PRELOAD its command ran
with. Checked: strace.per_file (every field side by side), strace.ranks (each rank's data-file opens: a multiset, in
order where the rank reads in its own process), strace.preload (an fsync or posix_fadvise DFTracer counts at the C
library that never reaches the kernel)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

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
    Roots,
    classify,
    launch_roots,
    result,
)
from profiles.dftracer import prewarm_prefetch

SYSCALLS = ("open", "openat", "read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev",
            "pwritev", "pwritev2", "lseek", "close", "fsync", "fdatasync", "fadvise64", "newfstatat", "statx", "fstat",
            "stat", "lstat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mmap")
# the generate launches' calls besides those (a file's and a folder's metadata: creating, linking, truncating)
GEN_SYSCALLS = ("creat", "mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink", "symlinkat", "truncate",
                "ftruncate", "fallocate")
STRACE_OPTS = ("-f", "-ff", "-qq", "-y", "-ttt", "-s", "16", "--seccomp-bpf")
# the open flags that change no I/O of a regular file (descriptor inheritance, 64-bit offsets, terminals)
IGNORED_FLAGS = {"O_CLOEXEC", "O_LARGEFILE", "O_NOCTTY"}
READ_CALLS = {"read", "pread64"}
READV_CALLS = {"readv", "preadv", "preadv2"}
WRITE_CALLS = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
STAT_CALLS = {"newfstatat", "statx", "fstat", "stat", "lstat"}
# the launcher's rank variable: Open MPI's mpirun, MPICH's Hydra, Slurm's srun
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")
TRACE_NAME = re.compile(r"trace\.r(\d+)\.(\d+)$")

LINE = re.compile(r"^(?P<ts>\d+\.\d+) (?P<call>\w+)\((?P<args>.*)\)\s+= (?P<ret>-?\d+|0x[0-9a-f]+|\?)"
                  r"(?:<(?P<rpath>[^>]*)>)?")
CALL = re.compile(r"^\d+\.\d+ (\w+)\((?=.*\) += )")
RELATIVE = re.compile(r'(?:^\S+ (?:open|creat|stat|lstat|rename|unlink|mkdir|rmdir|link|symlink|truncate)\(|'
                      r'AT_FDCWD<[^>]*>, )"[^/]')  # a relative path
FD_ARG = re.compile(r"^(-?\d+|AT_FDCWD)<([^>]*)>")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
IOV_LEN = re.compile(r"iov_len=(\d+)")


# the generate launches' metadata calls by name, and by descriptor, as their row's field
GEN_BY_NAME = ("mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink", "symlinkat", "truncate")
GEN_FIELD = {"mkdir": "mkdirs", "mkdirat": "mkdirs", "rmdir": "rmdirs", "link": "links", "linkat": "links",
             "symlink": "links", "symlinkat": "links", "truncate": "truncates", "ftruncate": "truncates",
             "fallocate": "fallocates"}
CALL_FAMILY = {"mkdirat": "mkdir", "unlinkat": "unlink", "renameat": "rename", "renameat2": "rename", "linkat": "link",
               "symlinkat": "symlink"}


def _failed(row: dict, call: str) -> None:
    """A metadata call that failed (an unlink of a name that is not there, a mkdir of a folder that is): counted by
    call in the row's "failed" (a generate launch's: each one still reached the file system's metadata server)."""
    row.setdefault("failed", Counter())[CALL_FAMILY.get(call, call)] += 1


def strace_binary() -> str | None:
    return shutil.which("strace")


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in s else s


def split_args(args: str) -> list[str]:
    """strace's argument text split at the top-level commas (not inside quotes, braces or brackets)."""
    out, depth, cur, quote, esc = [], 0, [], False, False
    for ch in args:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def _path_arg(dirarg: str | None, patharg: str, cwd: str) -> str:
    """An absolute path from a (dirfd<path>, "path") pair, or a plain "path" resolved against the launch's folder."""
    m = STRING.match(patharg.strip())
    p = _unescape(m.group(1)) if m else ""
    if p.startswith("/"):
        return os.path.normpath(p)
    base = cwd
    if dirarg is not None:
        fm = FD_ARG.match(dirarg)
        if fm:
            base = fm.group(2)
    return os.path.normpath(os.path.join(base, p)) if p else base


def _fd_path(arg: str) -> str | None:
    m = FD_ARG.match(arg)
    return m.group(2) if m else None


def _int(x: str) -> int:
    try:
        return int(x, 0)
    except ValueError:
        return -1


def open_flags(text: str) -> str:
    """The flags of an open that change I/O, sorted: "O_DIRECT|O_RDONLY" (IGNORED_FLAGS dropped)."""
    return "|".join(sorted(f for f in text.split("|") if f and f not in IGNORED_FLAGS))


def new_row() -> dict:
    return {"opens": 0, "open_flags": Counter(), "closes": 0, "reads": Counter(), "read_bytes": 0, "readv": Counter(),
            "writes": Counter(), "write_bytes": 0, "fsyncs": 0, "fdatasyncs": 0, "fadvise": Counter(), "stats": 0,
            "lseeks": 0, "mmaps": 0, "renames": 0, "unlinks": 0}


class Parser:
    """One launch's trace files fed a line at a time into per-file rows (bounded by the files, never the calls), the
    per-rank data-file opens and the calls on any other file (counted by call)."""

    def __init__(self, data_dir: Path, ckpt_dir: Path, cwd: Path, generation: bool = False) -> None:
        self.root, self.croot, self.cwd = str(data_dir).rstrip("/") + "/", str(ckpt_dir).rstrip("/") + "/", str(cwd)
        self.generation = generation
        self.last_close: dict[int, float] = {}  # generation: each rank's last close of a data file
        self.sections: dict[str, dict[str, dict]] = {"files": {}, "checkpoints": {}, "dirs": {}}
        self.other: Counter = Counter()
        self.opens: dict[int, list[tuple[float, str, int]]] = {}
        self.opened: set[tuple[int, int]] = set()  # (rank, pid) of the processes that opened a data file
        self.pending: list[tuple[int, float, str]] = []  # stats of a data file by a process before it opened one
        self.listings: dict[int, Counter] = {}  # per rank, its opens of each data folder (O_DIRECTORY: a listing)
        self.lines = 0

    def where(self, path: str | None) -> tuple[str, str] | None:
        """(section, name) of a data or checkpoint path (a folder: "dirs", "<section>/<name>"), None for any other."""
        if not path:
            return None
        if path.startswith(self.root) or path + "/" == self.root:
            sec, name = "files", path[len(self.root):]
            if name == GEN_RECORD:   # the kernel's completion record (docs/kernel.md): no data file, an other file
                return None
            if self.generation:      # generation-atomic-rename's <name>.partial.<pid>: under the file's own name
                name = PARTIAL.sub("", name)
        elif path.startswith(self.croot) or path + "/" == self.croot:
            sec, name = "checkpoints", PARTIAL.sub("", path[len(self.croot):])
        else:
            return None
        return ("dirs", f"{sec}/{name}") if f"{sec}/{name}" in self.sections["dirs"] else (sec, name)

    def row(self, path: str | None, is_dir: bool = False) -> dict | None:
        """The row of a data or checkpoint path (made at its first call; a folder's, once it is seen to be one: an
        open with O_DIRECTORY, a stat of S_IFDIR), None for any other path."""
        w = self.where(path)
        if w is None:
            return None
        sec, name = w
        if is_dir and sec != "dirs":
            key = f"{sec}/{name}"
            self.sections["dirs"][key] = self.sections[sec].pop(name, None) or new_row()
            return self.sections["dirs"][key]
        return self.sections[sec].setdefault(name, new_row())

    def feed_file(self, path: Path, rank: int, pid: int) -> None:
        """One process's trace. A line that names neither folder nor a relative path (resolved against the launch's
        folder) is a call on another file: counted by its name without being parsed (a Python process's imports are
        ~99% of DLIO's lines)."""
        pos: dict[str, int] = {}  # descriptor -> its file position (read() has no offset argument)
        near = (self.root[:-1], self.croot[:-1])
        with open(path, errors="replace") as f:
            for line in f:
                if not any(x in line for x in near) and RELATIVE.search(line) is None:
                    call = CALL.match(line)
                    if call is not None:
                        self.lines += 1
                        self.other[call.group(1)] += 1
                        if call.group(1) == "close":
                            pos.pop(line[call.end():].split("<", 1)[0], None)
                    continue
                m = LINE.match(line)
                if m is not None:
                    self.lines += 1
                    self.call(m, rank, pid, pos)

    def call(self, m: re.Match, rank: int, pid: int, pos: dict[str, int]) -> None:
        call, ret, args = m.group("call"), _int(m.group("ret")), split_args(m.group("args"))
        if call in ("open", "openat", "creat"):
            self._open(call, args, ret, m.group("rpath"), float(m.group("ts")), rank, pid, pos)
            return
        if call in STAT_CALLS | {"rename", "renameat", "renameat2", "unlink", "unlinkat"}:
            self._by_name(call, args, ret, (rank, pid, float(m.group("ts"))))
            return
        if call in GEN_BY_NAME:
            self._gen_by_name(call, args, ret)
            return
        fdarg = args[4] if call == "mmap" and len(args) > 4 else args[0] if args else ""
        fd = fdarg.split("<", 1)[0]
        row = self.row(_fd_path(fdarg))
        if row is None:
            self.other[call] += 1
            if call == "close":
                pos.pop(fd, None)
            return
        if call == "close" and self.generation and (self.where(_fd_path(fdarg)) or ("",))[0] == "files":
            self.last_close[rank] = max(self.last_close.get(rank, 0.0), float(m.group("ts")))
        self._fd_call(row, call, args, ret, fd, pos)

    def _open(self, call: str, args: list[str], ret: int, rpath: str | None, ts: float, rank: int, pid: int,
              pos: dict[str, int]) -> None:
        flags = "O_CREAT|O_TRUNC|O_WRONLY" if call == "creat" else args[1] if call == "open" else \
            args[2] if len(args) > 2 else ""
        path = rpath if ret >= 0 and rpath else \
            _path_arg(None, args[0], self.cwd) if call in ("open", "creat") else _path_arg(args[0], args[1], self.cwd)
        row = self.row(path, "O_DIRECTORY" in flags)
        if row is None:
            self.other[call] += 1
            return
        if "O_DIRECTORY" in flags and self.where(path)[1].startswith("files/"):
            self.listings.setdefault(rank, Counter())[self.where(path)[1][len("files/"):] + ("" if ret >= 0 else
                                                                                               " (failed)")] += 1
        if ret < 0:
            row["open_errors"] = row.get("open_errors", 0) + 1
            return
        pos[str(ret)] = 0
        row["opens"] += 1
        row["open_flags"][open_flags(flags)] += 1
        if "O_DIRECTORY" not in flags and self.where(path)[0] == "files":
            self.opens.setdefault(rank, []).append((ts, path[len(self.root):], pid))
            self.opened.add((rank, pid))

    def _by_name(self, call: str, args: list[str], ret: int, who: tuple[int, int, float]) -> None:
        if call == "fstat":
            path = _fd_path(args[0])
        elif call in ("stat", "lstat", "rename", "unlink"):
            path = _path_arg(None, args[1] if call == "rename" else args[0], self.cwd)
        elif call in ("newfstatat", "statx", "unlinkat"):
            path = _path_arg(args[0], args[1], self.cwd)
        else:  # renameat, renameat2: (olddirfd, old, newdirfd, new[, flags])
            path = _path_arg(args[2], args[3], self.cwd)
        row = self.row(path, call in STAT_CALLS and any("S_IFDIR" in a for a in args))
        if row is None:
            self.other[call] += 1
        elif call in STAT_CALLS:
            w = self.where(path)
            if w[0] == "files" and (self.generation or (who[0], who[1]) not in self.opened):
                self.pending.append((who[0], who[2], w[1]))  # judged at the end: before the rank's first open?
            else:
                row["stats"] += 1
        elif self.generation and ret < 0:
            _failed(row, call)
        elif call.startswith("rename"):
            row["renames"] += ret == 0
        else:
            row["unlinks"] += ret == 0

    def _gen_by_name(self, call: str, args: list[str], ret: int) -> None:
        """A generate launch's metadata call by name (GEN_BY_NAME): the created, removed, linked or truncated path's
        row (a folder's for mkdir and rmdir); a failed one counted apart by call (its row's "failed")."""
        if call in ("mkdir", "rmdir", "truncate"):
            path = _path_arg(None, args[0], self.cwd)
        elif call in ("mkdirat", "link", "symlink"):
            path = _path_arg(args[0], args[1], self.cwd) if call == "mkdirat" else _path_arg(None, args[1], self.cwd)
        elif call == "linkat":
            path = _path_arg(args[2], args[3], self.cwd)
        else:  # symlinkat(target, newdirfd, new)
            path = _path_arg(args[1], args[2], self.cwd)
        row = self.row(path, call in ("mkdir", "mkdirat", "rmdir"))
        if row is None:
            self.other[call] += 1
        elif ret < 0:
            _failed(row, call)
        else:
            field = GEN_FIELD[call]
            row[field] = row.get(field, 0) + 1

    def _fd_call(self, row: dict, call: str, args: list[str], ret: int, fd: str, pos: dict[str, int]) -> None:
        if call in READ_CALLS:
            off = _int(args[3]) if call == "pread64" else pos.get(fd, -1)
            row["reads"][f"{off}:{_int(args[2])}"] += 1
            row["read_bytes"] += max(ret, 0)
            if call == "read" and fd in pos:
                pos[fd] += max(ret, 0)
        elif call in READV_CALLS:
            lens = IOV_LEN.findall(args[1])
            n = _int(args[2])
            off = _int(args[3]) if call != "readv" else pos.get(fd, -1)
            row["readv"][f"{off}:{','.join(lens)}" + (f"+{n - len(lens)}" if n > len(lens) else "")] += 1
            row["read_bytes"] += max(ret, 0)
            if call == "readv" and fd in pos:
                pos[fd] += max(ret, 0)
        elif call in WRITE_CALLS:
            off = _int(args[3]) if call in ("pwrite64", "pwritev", "pwritev2") else pos.get(fd, -1)
            row["writes"][f"{off}:{max(ret, 0)}"] += 1
            row["write_bytes"] += max(ret, 0)
            if call in ("write", "writev") and fd in pos:
                pos[fd] += max(ret, 0)
        elif call == "lseek":
            row["lseeks"] += 1
            if ret >= 0:
                pos[fd] = ret
        elif call == "close":
            row["closes"] += 1
            pos.pop(fd, None)
        elif call == "fsync":
            row["fsyncs"] += 1
        elif call == "fdatasync":
            row["fdatasyncs"] += 1
        elif call == "fadvise64":
            row["fadvise"][":".join(a.strip() for a in args[1:4])] += 1
        elif call == "mmap":
            row["mmaps"] += 1
        elif call in GEN_FIELD:  # ftruncate, fallocate (traced in generate launches)
            if ret < 0:
                _failed(row, call)
            else:
                row[GEN_FIELD[call]] = row.get(GEN_FIELD[call], 0) + 1

    def discovery(self) -> dict:
        """The stats of data files made before their rank's first data-file open (dataset discovery: DLIO lists the
        folder and probes its first entry, 2.0.0 main.py:176-186; the kernel does the same, bench/src/discover.c),
        counted apart, in all and per rank with the rank's data-folder listings ("ranks": {rank: {"stats", "files",
        "listings": {folder: opens with O_DIRECTORY}}}); a later stat (a process that opened none yet, after its
        rank's first open) joins its file's row."""
        first = {r: min(ts for ts, _, _ in opens) for r, opens in self.opens.items() if opens}
        out: dict = {"stats": 0, "files": 0}
        seen: set[str] = set()
        per: dict[int, tuple[list[int], set[str]]] = {r: ([0], set()) for r in self.listings}
        for rank, ts, name in self.pending:
            # a generate launch's: after the rank's last close of a data file (DLIO's discovery once it generated)
            if (ts > self.last_close.get(rank, float("inf"))) if self.generation else \
                    ts < first.get(rank, float("inf")):
                out["stats"] += 1
                seen.add(name)
                n, files = per.setdefault(rank, ([0], set()))
                n[0] += 1
                files.add(name)
            else:
                self.sections["files"][name]["stats"] += 1
        out["files"] = len(seen)
        out["ranks"] = {str(r): {"stats": n[0], "files": len(files),
                                 "listings": dict(sorted((self.listings.get(r) or {}).items()))}
                        for r, (n, files) in sorted(per.items())}
        self.pending = []
        return out

    def result(self, preload: dict[int, str]) -> dict:
        def plain(rows: dict) -> dict:
            return {n: {k: dict(sorted(v.items())) if isinstance(v, Counter) else v for k, v in r.items()}
                    for n, r in sorted(rows.items())}
        discovery = self.discovery()
        ranks = {}
        for r, opens in sorted(self.opens.items()):
            opens.sort()
            ranks[str(r)] = {"opens": [name for _, name, _ in opens],
                             "processes": len({pid for _, _, pid in opens})}
        return {"files": plain(self.sections["files"]), "checkpoints": plain(self.sections["checkpoints"]),
                "dirs": plain(self.sections["dirs"]), "discovery": discovery, "ranks": ranks,
                "preload": {str(r): v for r, v in sorted(preload.items())},
                "other_calls": dict(sorted(self.other.items())), "lines": self.lines}


def trace_files(folder: Path) -> Iterator[tuple[Path, int, int]]:
    """(file, rank, pid) of each process's trace, ranks and pids in order."""
    found = []
    for p in folder.iterdir() if folder.is_dir() else ():
        m = TRACE_NAME.search(p.name)
        if m:
            found.append((int(m.group(1)), int(m.group(2)), p))
    for rank, pid, p in sorted(found):
        yield p, rank, pid


def parse(workdir: Path, side: str, data_dir: Path, generation: bool = False) -> dict:
    """One launch's strace/ folder as its table (strace-<side>.json; a generate launch's: generation)."""
    folder = workdir / "strace"
    parser = Parser(data_dir, checkpoint_dir(workdir), workdir, generation)
    processes = 0
    for path, rank, pid in trace_files(folder):
        parser.feed_file(path, rank, pid)
        processes += 1
    preload = {}
    for p in folder.glob("trace.r*.preload") if folder.is_dir() else ():
        preload[int(p.name.split(".")[1][1:])] = p.read_text().strip()
    return {"side": side, "data_dir": str(data_dir), "processes": processes, **parser.result(preload)}


FIELDS = ("opens", "open_errors", "open_flags", "closes", "reads", "read_bytes", "readv", "writes", "write_bytes",
          "fsyncs", "fdatasyncs", "fadvise", "stats", "lseeks", "mmaps", "renames", "unlinks")
NOT_COMPARED = ("calls on files outside the data and checkpoint folders (shared libraries, Python modules, /proc, the "
                "launch's own output: counted per call in tables/strace-<side>.json other_calls); which files each "
                "rank opened, and in what order: strace.ranks")


def _field(row: dict | None, f: str):
    v = (row or {}).get(f)
    return v if v is not None else ({} if f in ("open_flags", "reads", "readv", "writes", "fadvise") else 0)


# a folder's field as the call compare.CLASSES names (dataset discovery lists the data folder; DLIO makes and probes
# the checkpoint folder)
DIR_CALL = {"opens": "opendir", "open_flags": "opendir", "closes": "closedir", "stats": "stat"}


def _explained(section: str, n: str, f: str, a: dict | None, b: dict | None, roots: dict) -> str | None:
    """Why a difference is not data I/O (compare.classify, as the side that made more of the call made it): a
    folder's listing and status probes, a checkpoint file's stat or rename by the kernel's own steps; None for any
    other, and always for a data file."""
    if section == "dirs":
        top, _, rel = n.partition("/")
        kind, call = (DATA if top == "files" else CHECKPOINT), DIR_CALL.get(f, f)
    elif section == "checkpoints" and f in ("stats", "renames"):
        kind, rel, call = CHECKPOINT, n, "stat" if f == "stats" else "rename"
    else:
        return None
    x, y = _field(a, f), _field(b, f)
    side = "kernel" if (sum(y.values()) if isinstance(y, dict) else y) > (sum(x.values()) if isinstance(x, dict)
                                                                            else x) else "dlio"
    return classify(call, rel, roots[side], kind)


def per_open(row: dict) -> dict | None:
    """A data file's row as one open's share (every count and multiset count over its opens, exactly), or None when
    some count does not divide by the opens (its opens did not all make the same calls)."""
    n = row.get("opens") or 0
    if n <= 0:
        return None
    out = {}
    for f in FIELDS:
        if f == "opens":
            continue
        v = _field(row, f)
        vals = v.values() if isinstance(v, dict) else (v,)
        if any(x % n for x in vals):
            return None
        out[f] = {key: x // n for key, x in v.items()} if isinstance(v, dict) else v // n
    return out


def _prewarm_extra(a: dict | None, b: dict | None) -> bool:
    """DLIO's opens of a data file beyond the kernel's are its loader's pre-warm prefetch, tolerated when every open
    of both sides reads the file alike (per_open), or when the kernel never opened it (a file of the next epoch's
    remainder: which ones is the counts and batch checks' business)."""
    if a is None or not a.get("opens"):
        return False
    if b is None or not b.get("opens"):
        return True
    one = per_open(a)
    return a["opens"] > b["opens"] and one is not None and one == per_open(b)


def differences(d: dict, k: dict, roots: dict, prewarm: bool = False) -> tuple[list[dict], list[dict], int, dict]:
    """(unexplained, explained, files compared, DLIO's pre-warm extra {file: opens}): each data file, checkpoint file
    and folder of either side, every FIELD side by side; prewarm: the reference DLIO's pre-warm may read more
    (dftracer.prewarm_prefetch): a data file DLIO opened more often, each open as the kernel's, is not a
    difference."""
    bad, ok, n, extra = [], [], 0, {}
    for section in ("files", "checkpoints", "dirs"):
        a_rows, b_rows = d.get(section) or {}, k.get(section) or {}
        for name in sorted(set(a_rows) | set(b_rows)):
            a, b = a_rows.get(name), b_rows.get(name)
            n += section != "dirs"
            if prewarm and section == "files" and _prewarm_extra(a, b):
                extra[name] = a["opens"] - ((b or {}).get("opens") or 0)
                continue
            for f in FIELDS:
                x, y = _field(a, f), _field(b, f)
                if x != y:
                    why = _explained(section, name, f, a, b, roots)
                    (ok if why else bad).append({"file": f"{section}/{name}", "field": f, "dlio": x, "kernel": y,
                                                 **({"class": why} if why else {})})
    return bad, ok, n, extra


def check_per_file(run: RunView) -> list[dict]:
    """strace.per_file: per data and checkpoint file, every system call the kernel saw, side by side (FIELDS); the
    folders' listings and probes and the kernel's own checkpoint steps classified (compare.classify); the stats of
    dataset discovery (before a rank's first data-file open) counted per side, compared per rank by strace.discovery."""
    d, k = (run.table(f"strace-{side}.json") for side in SIDES)
    if d is None or k is None:
        return [result("strace.per_file", SKIP, detail="strace profile not run on both sides (or a launch failed)")]
    roots: dict[str, Roots] = {side: launch_roots(run, side, "strace") for side in SIDES}
    bad, ok, n, extra = differences(d, k, roots, prewarm_prefetch(run) is not None)
    run.put_table("files-strace.json", {"differences": bad[:2000], "explained": ok[:2000],
                                        "differences_total": len(bad), "explained_total": len(ok)})
    nd = len(set(d.get("files") or {}) | set(k.get("files") or {}))
    if not nd and not (d.get("checkpoints") or k.get("checkpoints")):
        return [result("strace.per_file", FAIL, detail="no system call on a data or checkpoint file was traced")]
    what = ("open flags, reads (offset, size), readv iovecs, writes, fsync, fdatasync, posix_fadvise, the stat "
            "family, lseeks, mmaps, renames, unlinks and closes")
    disc = {side: t.get("discovery") or {} for side, t in (("DLIO", d), ("kernel", k))}
    tail = (f"; but for DLIO's pre-warm prefetch: {sum(extra.values())} more opens of {len(extra)} data files, each "
            "reading the file as the kernel's opens do (or a file the kernel never opened)" if extra else "") + \
        (f"; {len(ok)} differences on folders and the kernel's checkpoint steps classified "
            f"({'; '.join(sorted({x['class'] for x in ok}))})" if ok else "") + \
        "; dataset discovery before each rank's first data-file open (compared per rank by strace.discovery): stats " \
        "of data files " + \
        ", ".join(f"{side} {v.get('stats', 0)} on {v.get('files', 0)} files" for side, v in disc.items()) + \
        f"; not compared: {NOT_COMPARED}"
    files = len({x["file"] for x in bad})
    if not bad:
        return [result("strace.per_file", PASS, n, n, f"{n} files ({nd} data files): {what} equal as the Linux "
                       f"kernel saw them{tail}")]
    first = bad[0]
    return [result("strace.per_file", FAIL, n, n - files,
                   f"{files} of {n} files differ; first: {first['file']} {first['field']}: DLIO {first['dlio']}, "
                   f"kernel {first['kernel']} (tables/files-strace.json){tail}")]


def _rank_rows(d: dict, k: dict, prewarm: bool, ordered: bool) -> tuple[list[str], list[str]]:
    """(the ranks whose data-file opens differ, with the first difference; each rank's processes per side)."""
    bad, procs = [], []
    for r in sorted(set(d.get("ranks") or {}) | set(k.get("ranks") or {}), key=int):
        a, b = (d.get("ranks") or {}).get(r) or {}, (k.get("ranks") or {}).get(r) or {}
        x, y = Counter(a.get("opens") or ()), Counter(b.get("opens") or ())
        procs.append(f"rank {r}: DLIO {a.get('processes', 0)}, kernel {b.get('processes', 0)}")
        differ = sorted(y - x) if prewarm else sorted(n for n in set(x) | set(y) if x[n] != y[n])
        if differ:
            f = differ[0]
            bad.append(f"rank {r}: {f} opened {x[f]} times by DLIO, {y[f]} by the kernel")
        elif ordered and a.get("opens") != b.get("opens"):
            i = next(i for i, (m, n) in enumerate(zip(a["opens"], b["opens"], strict=False)) if m != n)
            bad.append(f"rank {r}: open {i} is {a['opens'][i]} in DLIO, {b['opens'][i]} in the kernel")
    return bad, procs


def check_ranks(run: RunView) -> list[dict]:
    """strace.ranks: per rank, which data files its processes opened and how often (a multiset; in time order where
    the rank reads in its own process, read_threads 0: DLIO's order is then deterministic), side by side; under the
    reference's pre-warm rule (dftracer.prewarm_prefetch) DLIO's may hold more. The processes that opened a data file
    are reported, not judged (DLIO 2.0.0 keeps its loader's workers across epochs, 3.x spawns them per iterator)."""
    d, k = (run.table(f"strace-{side}.json") for side in SIDES)
    if d is None or k is None:
        return [result("strace.ranks", SKIP, detail="strace profile not run on both sides (or a launch failed)")]
    if not (d.get("ranks") or k.get("ranks")):
        return [result("strace.ranks", SKIP, detail="no data file was opened on either side (a checkpoint-only "
                       "workload)")]
    ordered = int((run.cfg.get("reader") or {}).get("read_threads", 1)) == 0
    prewarm = prewarm_prefetch(run) is not None
    bad, procs = _rank_rows(d, k, prewarm, ordered)
    n = len(procs)
    what = ("the data files each rank opened, in order" if ordered else "the data files each rank opened and how "
            "often (a multiset: reader processes interleave)") + \
        (", DLIO's allowed more by its loader's pre-warm" if prewarm else "")
    return [result("strace.ranks", FAIL if bad else PASS, n, n - len(bad),
                   (f"{n} ranks: {what} equal" if not bad else f"{len(bad)} of {n} ranks differ; first: {bad[0]}") +
                   f"; processes that opened a data file (reported, not judged): {'; '.join(procs)}")]


DISCOVERY = ("stats", "files", "listings")


def _discovery_ranks(t: dict) -> dict[str, dict]:
    """A side's discovery per rank, every rank that discovered or opened a data file (none made: zeros)."""
    per = (t.get("discovery") or {}).get("ranks") or {}
    return {r: {"stats": 0, "files": 0, "listings": {}, **(per.get(r) or {})}
            for r in set(per) | set(t.get("ranks") or {})}


def _listed_text(v: dict) -> str:
    lst = v.get("listings") or {}
    return (", ".join(f"{n or '.'} x{c}" for n, c in sorted(lst.items())) or "no listing") + \
        f"; {v.get('stats', 0)} stats of {v.get('files', 0)} data files"


def check_discovery(run: RunView) -> list[dict]:
    """strace.discovery: per rank, dataset discovery side by side: its listings of each data folder (opens with
    O_DIRECTORY: os.listdir, glob's os.scandir, the kernel's opendir) and its stats of data files before the rank's
    first data-file open (DLIO 2.0.0's probe of the first listed entry, main.py:179-181; the count and how many
    files, not which: the listing's first entry follows each folder's own directory order)."""
    if checkpoint_only(run.cfg):
        return [result("strace.discovery", SKIP, detail="a checkpoint-only workload: no dataset to discover")]
    d, k = (run.table(f"strace-{side}.json") for side in SIDES)
    if d is None or k is None:
        return [result("strace.discovery", SKIP, detail="strace profile not run on both sides (or a launch failed)")]
    if any("ranks" not in (t.get("discovery") or {}) for t in (d, k)):
        return [result("strace.discovery", SKIP, detail="a strace table without per-rank discovery (made before "
                       "profiles/strace.py counted it): parse the traces again")]
    a, b = _discovery_ranks(d), _discovery_ranks(k)
    ranks = sorted(set(a) | set(b), key=int)
    if not ranks:
        return [result("strace.discovery", FAIL, detail="no rank of either side listed a data folder, statted a "
                       "data file or opened one")]
    zero = {"stats": 0, "files": 0, "listings": {}}
    bad = []
    for r in ranks:
        x, y = a.get(r, zero), b.get(r, zero)
        for f in DISCOVERY:
            if x[f] != y[f]:
                bad.append(f"rank {r} {f}: DLIO {x[f]}, kernel {y[f]}")
                break
    shown = "; ".join(f"rank {r}: {_listed_text(a.get(r, zero))}" for r in ranks[:4]) + \
        (f"; ... {len(ranks) - 4} more ranks" if len(ranks) > 4 else "")
    n = len(ranks)
    detail = (f"{n} ranks: the data-folder listings and the stats of data files before each rank's first data-file "
              f"open equal (DLIO's: {shown})" if not bad else
              f"{len(bad)} of {n} ranks differ; first: {bad[0]} (DLIO's: {shown})")
    return [result("strace.discovery", FAIL if bad else PASS, n, n - len(bad), detail)
            | {"compared": ["stat_discovery"]}]


def _libc_counts(t: dict) -> dict[str, dict[str, int]]:
    """A DFTracer table's fsync (and fdatasync) and posix_fadvise counts per file (data and checkpoint sections), as
    the C library's wrappers saw them."""
    out: dict[str, dict[str, int]] = {}
    for n, row in ((t.get("files") or {}).get("files") or {}).items():
        c = row.get("calls") or {}
        out[f"files/{n}"] = {"fsync": c.get("fsync", 0) + c.get("fdatasync", 0), "fadvise": c.get("posix_fadvise", 0)}
    for n, row in (t.get("checkpoints") or {}).items():
        c = row.get("calls") or {}
        out[f"checkpoints/{PARTIAL.sub('', n)}"] = {"fsync": (row.get("fsyncs") or 0) + c.get("fdatasync", 0),
                                                    "fadvise": row.get("fadvises") or 0}
    return out


def check_preload(run: RunView) -> list[dict]:
    """strace.preload: where DFTracer (the C library's calls) counts an fsync, fdatasync or posix_fadvise on a file
    and strace (the system calls) sees none on it, the call never reached the kernel: a preloaded library answered
    it (MLPerf Storage v3.0 had a submission preloading no-op fsync and fadvise). FAIL names LD_PRELOAD's
    libraries of that side's strace launch."""
    name = "strace.preload"
    found = []
    for side in SIDES:
        s, t = run.table(f"strace-{side}.json"), run.table(f"dftracer-{side}.json")
        if s is None or t is None:
            continue
        sys_rows = {f"{sec}/{n}": r for sec in ("files", "checkpoints") for n, r in (s.get(sec) or {}).items()}
        for f, c in sorted(_libc_counts(t).items()):
            r = sys_rows.get(f) or {}
            got = {"fsync": (r.get("fsyncs") or 0) + (r.get("fdatasyncs") or 0),
                   "fadvise": sum((r.get("fadvise") or {}).values())}
            for call in ("fsync", "fadvise"):
                found.append((side, f, call, c[call], got[call]))
    if not found:
        return [result(name, SKIP, detail="needs the dftracer and strace tables of a side (PROFILES=...,dftracer,"
                       "strace): no side has both")]
    lost = [x for x in found if x[3] > 0 and x[4] == 0]
    if not lost:
        calls = sum(x[3] for x in found)
        return [result(name, PASS, 0, 0, f"{calls} fsync/fdatasync/posix_fadvise calls DFTracer counted at the C "
                       f"library on {len({x[1] for x in found})} files all reached the kernel (strace)")]
    side, f, call, libc, _ = lost[0]
    libs = sorted({v for v in ((run.table(f"strace-{side}.json") or {}).get("preload") or {}).values() if v})
    return [result(name, FAIL, 0, len(lost),
                   f"{len(lost)} (side, file, call) counted by DFTracer never reached the kernel; first: {side} {f} "
                   f"{call}: {libc} at the C library, 0 system calls; LD_PRELOAD of that launch: "
                   f"{', '.join(libs) if libs else 'none recorded'}")]


# strace.generate, per data file: the metadata operations and bytes (DLIO's contract: every format), then the calls
# of an HDF5 file's writing (measured equal: DLIO 2.0.0's h5py and the kernel make the same writes, docs/validation.md)
GEN_CONTRACT = ("renames", "unlinks", "links", "truncates", "fallocates", "failed", "opens", "open_errors",
                "open_flags", "write_bytes", "fsyncs", "fdatasyncs")
GEN_HDF5 = ("writes", "stats", "closes", "reads", "read_bytes", "readv", "lseeks", "mmaps", "fadvise")
# a data folder's creations and removals (its listings and probes: per folder and rank, DLIO's discovery)
GEN_DIR = ("mkdirs", "rmdirs", "renames", "unlinks", "links")
GEN_LISTED = ("opens", "stats", "failed")


def _gen_field(row: dict | None, f: str):
    return _field(row, f) if f in FIELDS else (row or {}).get(f) or ({} if f == "failed" else 0)


def gen_differences(d: dict, k: dict, hdf5: bool) -> tuple[list[dict], int]:
    """(the differences, data files compared) of two generate launches' tables: per data file GEN_CONTRACT (and on
    HDF5 GEN_HDF5), per folder of the data folder GEN_DIR, in file then field order."""
    bad, fields = [], GEN_CONTRACT + GEN_HDF5 * hdf5
    a_rows, b_rows = d.get("files") or {}, k.get("files") or {}
    names = sorted(set(a_rows) | set(b_rows))
    for n in names:
        for f in fields:
            x, y = _gen_field(a_rows.get(n), f), _gen_field(b_rows.get(n), f)
            if x != y:
                bad.append({"file": n, "field": f, "dlio": x, "kernel": y})
    a_dirs, b_dirs = d.get("dirs") or {}, k.get("dirs") or {}
    for n in sorted(x for x in set(a_dirs) | set(b_dirs) if x.startswith("files/")):
        for f in GEN_DIR:
            x, y = _gen_field(a_dirs.get(n), f), _gen_field(b_dirs.get(n), f)
            if x != y:
                bad.append({"file": f"{n[len('files/'):] or '.'}/ (folder)", "field": f, "dlio": x, "kernel": y})
    return bad, len(names)


def _listed(t: dict) -> str:
    """A generate launch's folder listings and probes and its discovery stats, counted (reported, not compared)."""
    dirs = [r for n, r in (t.get("dirs") or {}).items() if n.startswith("files/")]
    c = {f: sum(sum(v.values()) if isinstance(v := _gen_field(r, f), dict) else v for r in dirs) for f in GEN_LISTED}
    disc = t.get("discovery") or {}
    return (f"{c['opens']} folder opens, {c['stats']} folder stats, {c['failed']} failed folder calls, "
            f"{disc.get('stats', 0)} stats of {disc.get('files', 0)} data files after generating")


def check_generate(run: RunView) -> list[dict]:
    """strace.generate: the generate launches side by side, per data file (named relative to the data folder; the
    kernel's completion record left out, as every parser does; generation-atomic-rename's <name>.partial.<pid> under
    <name>). Compared on every format, DLIO's contract (GEN_CONTRACT): per file the renames, unlinks, links,
    truncates, fallocates and failed metadata calls, the opens and their flags, the bytes written, fsync and
    fdatasync; on HDF5 also each write (offset, size), the stat family, closes, reads, lseeks, mmaps and fadvise
    (GEN_HDF5: measured equal, h5py's HDF5 and the kernel's make the same calls; another format's writer splits
    its writes its own way: numpy's zipfile, PIL, so its calls are not DLIO's contract); per folder of the data
    folder its creations and removals (GEN_DIR). Reported, not compared: each side's folder listings and probes and
    the stats of a data file made after a rank's last close of one (DLIO's generate launch runs its dataset
    discovery once it generated, 2.0.0 main.py:176-181: each rank lists train/ and valid/ and probes the first
    entry; the kernel's does not), all constant in the file count."""
    name = "strace.generate"
    if checkpoint_only(run.cfg):
        return [result(name, SKIP, detail="a checkpoint-only workload: no generate launch")]
    d, k = (run.table(f"strace-generate-{side}.json") for side in SIDES)
    if d is None or k is None:
        return [result(name, SKIP, detail="the generate launches were not traced on both sides (strace profile not "
                       "run, a generate launch failed, or a DLIO side reused from a run that did not trace it)")]
    hdf5 = str((run.cfg.get("dataset") or {}).get("format", "hdf5")) == "hdf5"
    bad, n = gen_differences(d, k, hdf5)
    run.put_table("files-strace-generate.json", {"differences": bad[:2000], "differences_total": len(bad)})
    if not n:
        return [result(name, FAIL, detail="no data file written by either generate launch was traced")]
    what = "renames, unlinks, links, truncates, failed metadata calls, opens and flags, bytes, fsyncs" + \
        (", each write (offset, size), the stat family, closes, reads, lseeks, mmaps, fadvise" if hdf5 else
         " (the write calls of a non-HDF5 format: not compared)")
    tail = f"; reported, not compared: DLIO {_listed(d)}; kernel {_listed(k)}"
    files = len({x["file"] for x in bad})
    if not bad:
        return [result(name, PASS, n, n, f"{n} data files: {what} equal, and the data folders' creations"
                       + tail) | {"compared": ["generation"]}]
    f = bad[0]
    return [result(name, FAIL, n, n - files, f"{files} of {n} files or folders differ; first: {f['file']} "
                   f"{f['field']}: DLIO {f['dlio']}, kernel {f['kernel']} (tables/files-strace-generate.json)" + tail)]


# the rank's command under strace; the rank from the launcher's environment (RANK_VARS), its LD_PRELOAD recorded
WRAPPER = ('r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}; p=$0; s=$1; shift; '
           'printf "%s\\n" "${LD_PRELOAD:-}" > "$p.r$r.preload"; exec "$s" -o "$p.r$r" "$@"')


@register
class Strace(Profile):
    name = "strace"
    order = 45
    holds_file_tables = True
    traces_generation = True
    checks = (check_per_file, check_discovery, check_ranks, check_preload, check_generate)

    def available(self, ctx: Context) -> Found:
        """strace on PATH and allowed to trace here (ptrace and seccomp-bpf: a container or Yama's ptrace_scope 3 may
        forbid them, and every launch under it would fail): one traced `true` with the launches' options."""
        exe = strace_binary()
        if exe is None:
            return Found(False, "no strace on PATH (Debian package strace: scripts/deps-system.sh installs it)")
        true = shutil.which("true") or "/bin/true"
        try:
            p = subprocess.run([exe, *STRACE_OPTS, "-o", os.devnull, "-e", "trace=?fsync", true], capture_output=True,
                               text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return Found(False, f"{exe} cannot run here: {e}")
        if p.returncode != 0:
            return Found(False, f"{exe} cannot trace here (exit {p.returncode}: {' '.join(p.stderr.split())[:200]})")
        return Found(True, info={"strace": exe})

    def default_at(self, scale: str) -> bool:
        """On by default at the tiny and small presets (tiny_odirect, ...): its cost there is within the launches'
        noise (docs/validation.md#strace-system-calls); at field scale a trace line per call of every file (~10 per
        file and epoch) is asked for by name (PROFILES=...,strace)."""
        return scale.startswith(("tiny", "small"))

    def wrap(self, launch: Launch) -> Wrapped:
        """Each rank's command (not the launcher) under strace, its trace files in <workdir>/strace/."""
        folder = launch.workdir / "strace"
        calls = SYSCALLS + GEN_SYSCALLS if launch.step == "generate" else SYSCALLS
        trace = "trace=" + ",".join(f"?{c}" for c in calls)
        argv = ["sh", "-c", WRAPPER, str(folder / "trace"), launch.info.get("strace", "strace"), *STRACE_OPTS,
                "-e", trace, "--", *launch.argv]
        return Wrapped(argv, dict(launch.env), dirs=(folder,))

    def collect(self, done: Done) -> dict:
        """A training launch's table (strace-<side>.json); a generate launch's (strace-generate-<side>.json), none when
        it ran without strace (a DLIO side reused from a run that did not trace its generation)."""
        if done.step == "generate":
            if not (done.workdir / "strace").is_dir():
                return {}
            return {f"strace-generate-{done.side}.json": parse(done.workdir, done.side, done.data, generation=True)}
        return {f"strace-{done.side}.json": parse(done.workdir, done.side, done.data)}
