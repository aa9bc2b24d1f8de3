"""A Darshan launch's logs into its table (runs in the harness: collect): each log streamed a record at a time
(profiles.darshan.log), the launched program's logs summed per data file and per checkpoint file, every other
process's log kept apart."""
from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path

from profiles import checkpoint_dir
from profiles.darshan.log import Log
from profiles.features import ReadStats, metadata_rate
from profiles.shared.paths import PARTIAL

# the programs a launch starts (the kernel under either of its names, DLIO's entry point): any other process that
# left a log (a child such as the `uname` DLIO's Python spawns) is kept apart from the per-file comparison
PROGRAMS = ("h5dlio", "h5bench_dlio", "dlio_benchmark")


def _ckpt_row() -> dict:
    return {"opens": 0, "writes": 0, "bytes": 0, "fsyncs": 0, "reads": 0, "read_bytes": 0,
            "write_segments": Counter(), "read_segments": Counter()}


def _file_row() -> dict:
    """A data file's row, as the table stores it ("accesses": {"offset+size": n} in the order first read)."""
    return {"opens": 0, "reads": 0, "bytes": 0, "accesses": {}, "h5f_opens": 0, "h5d": {}}


def is_program(exe: str, programs: tuple = PROGRAMS) -> bool:
    """Is a log's process the launched program (its exe line names one of `programs` in its first two words: the
    binary, or the script an interpreter runs)?"""
    return any(os.path.basename(w) in programs for w in exe.split()[:2])


class _Interned(dict):
    """Access keys ("offset+size") and dataset names, one string each however many files hold them: 20,000 files'
    table 1,084 -> 981 bytes per file held (at most 2^16 strings kept)."""

    def setdefault(self, k, v):
        return super().setdefault(k, v) if len(self) < 1 << 16 or k in self else v


_KEYS: dict[str, str] = _Interned()


class _Names:
    """A log's record ids, resolved once as its name records are read: a data file's name relative to the data folder
    (H5D records "<file>:/<dataset>" as their file; one string per file however many records name it) and its
    dataset; a checkpoint file's name relative to the checkpoint folder (the kernel's partial name as its final one);
    every other file's whole name. Held while the log is read (its records' ids), not its records."""

    def __init__(self, log, data_dir: Path, ckpt_dir: Path | None):
        root = str(data_dir).rstrip("/") + "/"
        croot = str(ckpt_dir).rstrip("/") + "/" if ckpt_dir else None
        self.root = root
        self.rel: dict[int, str] = {}
        self.ds: dict[int, str] = {}
        self.crel: dict[int, str] = {}
        self.other: dict[int, str] = {}
        rels: dict[str, str] = {}
        for rid, n in log.names():
            f, sep, ds = n.partition(":/")
            if f.startswith(root):
                r = f[len(root):]
                self.rel[rid] = rels.setdefault(r, r)
                if sep:
                    self.ds[rid] = _KEYS.setdefault(ds, ds)
            if croot and n.startswith(croot):
                self.crel[rid] = PARTIAL.sub("", n[len(croot):])
            if rid not in self.rel and rid not in self.crel:
                self.other[rid] = n

    def known(self, rid: int) -> bool:
        """Has the record a name (DarshanReport passed over records without one: so does the parse)?"""
        return rid in self.rel or rid in self.crel or rid in self.other

    def dataset(self, rid: int) -> str:
        ds = self.ds.get(rid)
        return self.root + self.rel[rid] if ds is None else ds  # a name without ":/" is its own dataset


class _Table:
    """What the parse keeps, fed a record at a time: per data file, per checkpoint file, opens of every other file;
    the data files' reads go to `reads` (a callable, or None to drop them)."""

    def __init__(self, reads=None):
        self.files: dict[str, dict] = defaultdict(_file_row)
        self.ckpts: dict[str, dict] = defaultdict(_ckpt_row)
        self.other: Counter = Counter()
        self.reads = reads
        self.dxt_cut: set[str] = set()  # data files of a log whose DXT ran out of its trace memory


POSIX_COUNTERS = ("POSIX_OPENS", "POSIX_READS", "POSIX_BYTES_READ", "POSIX_WRITES", "POSIX_BYTES_WRITTEN",
                  "POSIX_FSYNCS", "POSIX_FDSYNCS")


def _posix(log, nm: _Names, t: _Table) -> float:
    """POSIX counters per data file, per checkpoint file and opens of every other file; returns POSIX_F_META_TIME
    under the data folder (open, close, stat and seek time, summed over processes)."""
    meta_s = 0.0
    for rid, _, opens, reads, rbytes, writes, wbytes, fsyncs, fdsyncs, meta in log.records(
            "POSIX", POSIX_COUNTERS, ("POSIX_F_META_TIME",)):
        cr = nm.crel.get(rid)
        if cr is not None:
            c = t.ckpts[cr]
            c["opens"] += opens
            c["writes"] += writes
            c["bytes"] += wbytes
            c["reads"] += reads
            c["read_bytes"] += rbytes
            c["fsyncs"] += fsyncs + fdsyncs
            continue
        r = nm.rel.get(rid)
        if r is None:
            if rid in nm.other:
                t.other[nm.other[rid] or "?"] += opens
            continue
        meta_s += meta
        f = t.files[r]
        f["opens"] += opens
        f["reads"] += reads
        f["bytes"] += rbytes
    return meta_s


def _dxt(log, nm: _Names, t: _Table, name: str) -> None:
    """DXT segments: each checkpoint file's write and read segments, each data file's read accesses, and its reads
    (with their times, for the I/O features) to t.reads."""
    for rid, rank, writes, reads in log.dxt("DXT_POSIX"):
        cr = nm.crel.get(rid)
        if cr is not None:
            for kind, segs in (("write", writes), ("read", reads)):
                for off, size, _, _ in segs:  # a record without segments adds no row
                    t.ckpts[cr][f"{kind}_segments"][f"{off}+{size}"] += 1
            continue
        r = nm.rel.get(rid)
        if r is None or not reads:
            continue
        acc, proc = t.files[r]["accesses"], f"{name}:{rank}"
        for off, size, start, end in reads:
            key = f"{off}+{size}"
            key = _KEYS.setdefault(key, key)  # one string per distinct access
            acc[key] = acc.get(key, 0) + 1
            if t.reads is not None:
                t.reads(proc, r, off, size, start, end - start)


def _hdf5(log, nm: _Names, t: _Table) -> None:
    """H5F opens per data file; H5D opens, reads and bytes per dataset of each data file (one record per dataset)."""
    for rid, _, opens in log.records("H5F", ("H5F_OPENS",)):
        r = nm.rel.get(rid)
        if r is not None:
            t.files[r]["h5f_opens"] += opens
    for rid, _, opens, reads, nbytes in log.records("H5D", ("H5D_OPENS", "H5D_READS", "H5D_BYTES_READ")):
        r = nm.rel.get(rid)
        if r is not None:
            d = t.files[r]["h5d"].setdefault(nm.dataset(rid), {"opens": 0, "reads": 0, "bytes": 0})
            d["opens"] += opens
            d["reads"] += reads
            d["bytes"] += nbytes


def _read_log(path: Path, data_dir: Path, ckpt_dir: Path | None, programs: tuple, table: _Table,
              child: _Table | None = None) -> dict:
    """One log streamed into `table` if its process is the launched program, else into `child` (by default a table
    of its own); returns
    its header ("log", "exe", "program", "modules", "nprocs", "partial"), its "meta_s" and the "table" fed."""
    with Log(path) as log:
        exe = str(log.exe or "")
        program = is_program(exe, programs)
        t = table if program else child or _Table()
        nm = _Names(log, data_dir, ckpt_dir)
        mods = set(log.modules)
        meta_s = _posix(log, nm, t) if "POSIX" in mods else 0.0
        if "DXT_POSIX" in mods:
            _dxt(log, nm, t, path.name)
        _hdf5(log, nm, t)
        partial = sorted(m for m in mods if log.modules[m].get("partial_flag"))
        if "DXT_POSIX" in partial:  # its segments may miss any file this process touched: those files only
            t.dxt_cut.update(nm.rel.values())
        return {"log": path.name, "exe": exe, "program": program, "modules": sorted(mods), "nprocs": log.nprocs,
                "partial": partial, "meta_s": meta_s, "table": t}


def _files_out(t: _Table) -> dict:
    """The data files' rows sorted by name, moved out of the table (not copied: the rows are the table's)."""
    return {k: t.files.pop(k) for k in sorted(t.files)}


def _ckpts_out(t: _Table) -> dict:
    return {k: {f: dict(v) if isinstance(v, Counter) else v for f, v in r.items()} for k, r in sorted(t.ckpts.items())}


def parse_log(path: Path, data_dir: Path, ckpt_dir: Path | None = None, programs: tuple = PROGRAMS) -> dict:
    """One log's tables, whatever its process ("reads": a dict per data-file read; parse() streams them instead)."""
    reads: list[dict] = []
    t = _Table(lambda proc, f, off, size, start, dur: reads.append(
        {"proc": proc, "file": f, "offset": off, "size": size, "start": start, "dur": dur}))
    h = _read_log(path, data_dir, ckpt_dir, programs, t, t)
    t = h.pop("table")
    return {**h, "files": _files_out(t), "checkpoints": _ckpts_out(t),
            "other": [{"file": f, "opens": n} for f, n in sorted(t.other.items())], "reads": reads}


def epoch_times(outdir: Path, side: str) -> list[float] | None:
    """The launch's training epochs as the program timed them (its own output in <outdir>/out, read as the timing
    profile reads it): Darshan's counters have no epoch marks. None when the program wrote none."""
    from profiles import timing

    try:
        return timing.parse(outdir / "out", side)["train_epoch_s"] or None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def parse(outdir: Path, side: str, data_dir: Path, programs: tuple = PROGRAMS) -> dict:
    """A launch's table: every log streamed a record at a time (profiles.darshan.log), the launched program's logs
    into one table (their reads into the I/O features' compact arrays), each other process's log into its own, of
    which only the names of the data and checkpoint files it touched are kept. Memory: the table, and one log's
    record ids while it is read."""
    logs = sorted((outdir / "logs").rglob("*.darshan"))
    if not logs:  # Darshan only warns when it cannot write: say what it said
        warn = next((ln for f in ("launch.stderr", "launch.stdout") if (outdir / f).exists()
                     for ln in (outdir / f).read_text(errors="replace").splitlines() if "darshan" in ln.lower()), "")
        raise ValueError(f"no Darshan log in {outdir / 'logs'}" + (f" (Darshan said: {warn.strip()[:300]})" if warn
                                                                    else " (was libdarshan.so preloaded?)"))
    stats = ReadStats()
    table = _Table(lambda proc, f, off, size, start, dur: stats.add(proc, f, off, size, 0, start, dur))
    every, children = [], []
    for p in logs:
        h = _read_log(p, data_dir, checkpoint_dir(outdir), programs, table)
        t = h.pop("table")
        if not h["program"]:  # a child process of the launch: kept apart, with every data or checkpoint file touched
            children.append({"log": h["log"], "exe": h["exe"], "data_files": sorted(t.files),
                             "checkpoint_files": sorted(t.ckpts)})
        every.append(h)
    parsed = [h for h in every if h["program"]]
    if not parsed:
        raise ValueError(f"no Darshan log of the launched program ({', '.join(programs)}) in {outdir / 'logs'}: only "
                         + "; ".join(f"{h['log']} ({h['exe'][:60]})" for h in every))
    ep = epoch_times(outdir, side)
    what = "Darshan POSIX_OPENS and POSIX_F_META_TIME of the files under the data folder"
    metadata = {"source": f"{what}; epoch time as the program timed its epochs" if ep else
                f"{what} (the program's epoch times not found: no rate)",
                "all": metadata_rate(sum(r["opens"] for r in table.files.values()), sum(h["meta_s"] for h in parsed),
                                     sum(ep) if ep else None, len(ep) if ep else None)}
    return {"side": side, "logs": [h["log"] for h in parsed], "children": children,
            "modules": sorted({m for h in parsed for m in h["modules"]}),
            # a module that ran out of memory in some process (DXT keeps 2 MiB per module): its counts are short
            "partial": sorted({f"{h['log']}:{m}" for h in parsed for m in h["partial"]}),
            "files": _files_out(table), "checkpoints": _ckpts_out(table),
            "other": [{"file": f, "opens": n} for f, n in sorted(table.other.items())],
            "dxt_cut": sorted(table.dxt_cut), "features": stats.result(), "metadata": metadata}
