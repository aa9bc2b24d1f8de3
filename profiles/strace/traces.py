"""The strace profile's parse (run in the harness): a launch's strace/ folder, one trace file per process, read a
line at a time into its table (strace-<side>.json; a generate launch's strace-generate-<side>.json)."""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from profiles import checkpoint_dir
from profiles.shared.paths import GEN_RECORD, PARTIAL

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
