"""Darshan profile (POSIX, MPI-IO, H5F/H5D counters, DXT segments). Darshan's runtime is not in any registry
reachable from here: an installed one is detected (an explicit prefix, DARSHAN_PREFIX, or darshan-config on PATH),
as HPC sites provide it; without one the profile is skipped with that reason. Logs are read a record at a time
through pydarshan's cffi backend (profiles.darshan_log); its analyses use pydarshan's reports (darshan_analyses)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

from profiles import (
    SIDES,
    Context,
    Done,
    Found,
    Launch,
    LaunchSpec,
    Profile,
    RunView,
    Shape,
    Wrapped,
    checkpoint_dir,
    checkpoint_only,
    register,
)
from profiles.compare import (
    DATA,
    FAIL,
    GEN_RECORD,
    PARTIAL,
    PASS,
    SKIP,
    FileRows,
    classify,
    explained,
    kernel_record,
    launch_roots,
    model_judges_kernel,
    result,
    similarity,
    train_file_index,
)
from profiles.darshan_analyses import analyse
from profiles.features import ReadStats, access_sizes, metadata_rate

NO_RUNTIME = "no Darshan runtime found (set DARSHAN_PREFIX or put darshan-config on PATH)"


def _config(conf: Path, opt: str) -> str:
    try:
        out = subprocess.run([str(conf), opt], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def detect(prefix: str | None = None) -> dict:
    """{"available", "reason", "prefix", "lib", "hdf5_mod", "dxt_mod", "mpiio_mod", "hdf5_path"} of the first install:
    an explicit prefix, then DARSHAN_PREFIX, then darshan-config on PATH."""
    cands = [prefix, os.environ.get("DARSHAN_PREFIX")]
    cfg = shutil.which("darshan-config")
    if cfg:
        cands.append(_config(Path(cfg), "--prefix"))
    for p in filter(None, cands):
        lib = next((x for x in (Path(p) / "lib" / "libdarshan.so", Path(p) / "lib64" / "libdarshan.so") if x.exists()),
                   None)
        if lib is None:
            continue
        conf = Path(p) / "bin" / "darshan-config"
        yes = {"hdf5_mod": _config(conf, "--hdf5-mod"), "dxt_mod": _config(conf, "--dxt-mod"),
               "mpiio_mod": _config(conf, "--mpiio-mod")}
        return {"available": True, "reason": "", "prefix": str(p), "lib": str(lib),
                **{k: v not in ("", "0", "no") for k, v in yes.items()},
                "hdf5_path": _config(conf, "--hdf5-path") or None}
    return {"available": False, "reason": NO_RUNTIME}


# Darshan's HDF5 module forwards to the libhdf5 it was built against: the vol kernel (VOL=async, make vol-kernel) loads
# the thread-safe HDF5, so its side needs a second Darshan built against that one (make darshan-ts, or the user's own)
TS_STAMP = Path(__file__).resolve().parent.parent / "build" / ".darshan-ts-prefix"


def detect_ts() -> dict | None:
    """The Darshan flavour for a kernel on the thread-safe HDF5 (detect's fields): DARSHAN_TS_PREFIX, else the one
    `make darshan-ts` built (build/.darshan-ts-prefix); None without one."""
    stamp = TS_STAMP.read_text().strip() if TS_STAMP.exists() else ""
    for p in filter(None, (os.environ.get("DARSHAN_TS_PREFIX"), stamp)):
        info = detect(p)
        if info["available"] and info["prefix"] == p:
            return info
    return None


def linked_hdf5(binary: Path) -> Path | None:
    """The libhdf5 a program or extension module loads (ldd), resolved to the real file."""
    try:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith("libhdf5") and not name.startswith("libhdf5_") and rest.split(" (")[0].startswith("/"):
            return Path(rest.split(" (")[0]).resolve()
    return None


def h5py_build(dlio_venv: Path) -> dict:
    """{"mpi": bool, "hdf5": Path | None}: is the venv's h5py built against a parallel libhdf5, and which file."""
    code = "import h5py; print(h5py.get_config().mpi); print(h5py.__file__)"
    try:
        out = subprocess.run([str(dlio_venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                             timeout=120).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return {"mpi": False, "hdf5": None}
    if len(out) != 2:
        return {"mpi": False, "hdf5": None}
    # the extension modules that call HDF5 (defs, h5f, ...) link it; h5.*.so itself does not
    libs = (linked_hdf5(m) for m in sorted(Path(out[1]).parent.glob("*.so")))
    return {"mpi": out[0] == "True", "hdf5": next((x for x in libs if x is not None), None)}


def _threadsafe(libhdf5: Path) -> bool:
    """Is this libhdf5 a thread-safe build (its install's include/H5pubconf.h defines H5_HAVE_THREADSAFE)?"""
    try:
        conf = (libhdf5.parent.parent / "include" / "H5pubconf.h").read_text(errors="replace")
    except OSError:
        return False
    return re.search(r"^#\s*define H5_HAVE_THREADSAFE 1", conf, re.M) is not None


def _threadsafe_side(k: Path, want: Path) -> dict:
    """The vol kernel's side (it loads k, a thread-safe libhdf5; the main Darshan was built against want): preload the
    Darshan flavour built against k (detect_ts), else a named skip saying how to get one."""
    ts = detect_ts()
    got = Path(ts["hdf5_path"], "lib", "libhdf5.so").resolve() if ts and ts.get("hdf5_path") else None
    if ts and ts.get("hdf5_mod") and got == k:
        return {"preload": [ts["lib"], str(k)], "darshan": ts["prefix"]}
    if ts:
        return {"skip": f"the kernel loads {k}, a thread-safe HDF5 (the kernel of the async VOL connector, VOL=async: "
                        f"make vol-kernel); the thread-safe Darshan {ts['prefix']} was built against "
                        f"{got or 'no HDF5 module'}: rebuild it with `make darshan-ts` (docs/vol.md)"}
    return {"skip": f"the kernel loads {k}, a thread-safe HDF5 (the kernel of the async VOL connector, VOL=async: make "
                    f"vol-kernel), Darshan's HDF5 module was built against {want}, and there is no Darshan built "
                    "against the thread-safe HDF5: build it with `make darshan-ts` or set DARSHAN_TS_PREFIX "
                    "(docs/vol.md)"}


def plan_sides(info: dict, dlio_venv: Path, kernel_bin: Path) -> dict:
    """Per side, what to preload ({"preload": [...]}) or why the side cannot run under this Darshan ({"skip": why}).
    Darshan's HDF5 module wraps H5F/H5D calls and forwards them to the libhdf5 it was built against: a side runs
    only if it loads that same file, preloaded after libdarshan.so (the reverse order records no H5F/H5D at all
    and says nothing). Without the HDF5 module, libdarshan.so alone (POSIX, MPI-IO, DXT)."""
    lib = info["lib"]
    if not info.get("hdf5_mod"):
        return {"dlio": {"preload": [lib]}, "kernel": {"preload": [lib]}}
    want = Path(info["hdf5_path"], "lib", "libhdf5.so").resolve() if info.get("hdf5_path") else None
    out = {}
    k = linked_hdf5(kernel_bin)
    if k is None:
        out["kernel"] = {"skip": f"cannot tell which libhdf5 {kernel_bin} loads (ldd)"}
    elif want is not None and k != want and _threadsafe(k):
        out["kernel"] = _threadsafe_side(k, want)
    elif want is not None and k != want:
        out["kernel"] = {"skip": f"the kernel loads {k}, Darshan's HDF5 module was built against {want}: build the "
                                 f"kernel with HDF5_DIR={info['hdf5_path']}"}
    else:
        out["kernel"] = {"preload": [lib, str(k)]}
    h = h5py_build(dlio_venv)
    if not h["mpi"]:
        out["dlio"] = {"skip": "Darshan's HDF5 module makes a wheel h5py crash (undefined symbol H5get_libversion): "
                               "build the reference venv's h5py from source with `make validate DLIO_H5PY=mpi`"}
    elif h["hdf5"] is None:
        out["dlio"] = {"skip": f"cannot tell which libhdf5 the h5py of {dlio_venv} loads (ldd)"}
    elif want is not None and h["hdf5"] != want:
        out["dlio"] = {"skip": f"DLIO's h5py loads {h['hdf5']}, Darshan's HDF5 module was built against {want}: "
                               f"rebuild the venv with DLIO_H5PY=mpi HDF5_DIR={info['hdf5_path']}"}
    else:
        out["dlio"] = {"preload": [lib, str(h["hdf5"])]}
    return out


def _posix_rx(folder: Path) -> str:
    """A POSIX regex of a folder's contents: special characters escaped; whitespace and commas (separators in the
    configuration file) -> '.'."""
    return "^" + re.sub(r"[\s,]", ".", re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", str(folder).rstrip("/"))) + "/"


# Darshan's record memory (3.5.0): each module reserves MAX_RECORDS x its record's size out of MODMEM when it registers
# (darshan-core.c:2537-2572), names take sizeof(id) + strlen + 1 out of NAMEMEM (:1352-1368). Both are allocated at
# start (malloc + memset, :266-281; yet not all touched: 64 ranks of the 65,536-record default, 320 MiB each, left
# the machine's used memory within 0.2 GB, sampled every 5 s: a folding into calloc is our guess) and MODMEM again at
# shutdown for compression (:482). A process reserves 2 x MODMEM + NAMEMEM (a reservation the kernel may refuse:
# Darshan then logs nothing) and touches what its records fill. Record sizes, sizeof of
# include/darshan-{posix,stdio,mpiio,hdf5}-log-format.h: POSIX 704, STDIO 248, MPI-IO 560, H5F 80, H5D 912 bytes; a
# data file fills a POSIX, an H5F and an H5D one.
MODULES = "POSIX,STDIO,MPI-IO,H5F,H5D"
RECORD_BYTES = 704 + 248 + 560 + 80 + 912
DATA_FILE_BYTES = 704 + 80 + 912
BASE_RECORDS = 65536   # a Python process's own files (its imports) before DLIO opens a data file: room kept for them
NAME_TAIL = 48         # a data file's name beyond its folder ("/13/img_0012345_of_0148000.hdf5"; ":/records" for H5D)
PROCESS_MIB = 4096     # refused above this reserved per process (2 x MODMEM + NAMEMEM) ...
LAUNCH_MIB = 16384     # ... or above this touched by a launch's ranks together


def files_per_rank(cfg: dict, ranks: int) -> int:
    """At most how many distinct data files one rank opens in a training launch (each one POSIX, H5F and H5D record):
    per epoch its share of the samples, each in another file at worst, over the epochs, never more than the files."""
    ds, tr = cfg.get("dataset") or {}, cfg.get("train") or {}
    spf, epochs = max(1, int(ds.get("num_samples_per_file", 1))), max(1, int(tr.get("epochs", 1)))
    out = 0
    for key in ("num_files_train", "num_files_eval"):
        n = int(ds.get(key, 0) or 0)
        out += min(n, epochs * -(-n * spf // max(1, ranks)))
    return out


def record_limits(files: int, data_dir: Path) -> dict:
    """MAX_RECORDS, MODMEM and NAMEMEM (MiB) with room for `files` data files per process besides BASE_RECORDS; what a
    process reserves (MiB) and what its data files' records touch (MiB)."""
    records = BASE_RECORDS + files
    name = 2 * (9 + len(str(data_dir)) + NAME_TAIL)  # two names per data file: its path and "<path>:/<dataset>"
    modmem = max(256, -(-records * RECORD_BYTES // 2**20))
    namemem = max(64, -(-records * name // 2**20))
    return {"records": records, "modmem": modmem, "namemem": namemem, "reserved_mib": 2 * modmem + namemem,
            "touched_mib": -(-files * (DATA_FILE_BYTES + name) // 2**20)}


def refuse_records(cfg: dict, ranks: int, data_dir: Path) -> str | None:
    """Why Darshan cannot log every data file of this workload here (the memory its records need), or None."""
    files = files_per_rank(cfg, ranks)
    lim = record_limits(files, data_dir)
    total = ranks * lim["touched_mib"]
    if lim["reserved_mib"] <= PROCESS_MIB and total <= LAUNCH_MIB:
        return None
    return (f"PROFILES darshan: {files:,} data files per rank need MAX_RECORDS {lim['records']:,} per module, MODMEM "
            f"{lim['modmem']} MiB and NAMEMEM {lim['namemem']} MiB: {lim['reserved_mib']} MiB reserved per process "
            f"(bound {PROCESS_MIB}), {total} MiB of records for {ranks} ranks (bound {LAUNCH_MIB}; "
            "profiles/darshan.py): run with more ranks or without darshan (PROFILES=...)")


def config_text(data_dir: Path, ckpt_dir: Path | None = None, files: int = 0) -> str:
    """The runtime configuration (DARSHAN_CONFIG_PATH) of one launch. Darshan's defaults (4 MiB for all modules,
    1024 records per module) are used up by a Python process's imports before DLIO opens its first data file: the
    data files are then simply missing from the log. So: room for every file (the interpreter's own included, so
    that the comparison can classify them, and the `files` data files a rank opens: record_limits); and DXT, whose
    2 MiB per module and process is fixed at Darshan's build, traces the data folder and the checkpoint folder
    only."""
    include = "".join(f"NAME_INCLUDE  {_posix_rx(d)}  DXT_POSIX,DXT_MPIIO\n" for d in (data_dir, ckpt_dir) if d)
    lim = record_limits(files, data_dir)
    return ("# written by h5dlio's darshan profile (profiles/darshan.py)\n"
            "MOD_ENABLE    DXT_POSIX,DXT_MPIIO\n"
            f"MODMEM        {lim['modmem']}\n"
            f"NAMEMEM       {lim['namemem']}\n"
            f"MAX_RECORDS   {lim['records']}  {MODULES}\n"
            "NAME_EXCLUDE  .*  DXT_POSIX,DXT_MPIIO\n" + include)


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
    from profiles.darshan_log import Log

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
    """A launch's table: every log streamed a record at a time (profiles.darshan_log), the launched program's logs
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


def _other_differences(run: RunView, d: dict, k: dict, data: list, diffs: list) -> None:
    """Every difference outside the compared data files and checkpoint files, classified by what its path is in
    each side's launch (profiles.compare.where): other files' opens, data files opened without a read (never
    explained), and child processes of a launch (explained unless they touched a data or checkpoint file)."""
    df, kf = d["files"], k["files"]
    roots = {side: launch_roots(run, side, "darshan") for side in SIDES}
    others: dict[str, list[int]] = {}
    for i, t in enumerate((d, k)):
        for o in t["other"]:
            others.setdefault(o["file"], [0, 0])[i] += o["opens"]
    for f, (x, y) in sorted(others.items()):
        if x != y:
            side = "kernel" if y > x else "dlio"
            diffs.append({"file": f, "field": "opens", "dlio": x, "kernel": y,
                          "class": classify("open", f, roots[side])})
    is_data = set(data)
    for n in sorted(set(df) | set(kf)):  # a data file opened with no read (probe, lock test): never explained
        x, y = df.get(n, {}).get("opens", 0), kf.get(n, {}).get("opens", 0)
        if n not in is_data and x != y:
            diffs.append({"file": n, "field": "opens", "dlio": x, "kernel": y,
                          "class": classify("open", n, roots["kernel" if y > x else "dlio"], DATA)})
    for i, t in enumerate((d, k)):  # a child process of a launch: explained unless it touched data or checkpoints
        for c in t.get("children", []):
            touched = c["data_files"] + c["checkpoint_files"]
            diffs.append({"file": c["log"], "field": "child process", "dlio": c["exe"] if i == 0 else None,
                          "kernel": c["exe"] if i == 1 else None,
                          "class": None if touched else f"a child process of the launch ({c['exe'][:80]}), not the "
                          "launched program: it touched no data or checkpoint file"})


DARSHAN_FIELDS = ("opens", "reads", "bytes", "accesses")
DARSHAN_H5_FIELDS = ("h5f_opens", "h5d")


def _no_h5(run: RunView, d: dict, k: dict) -> str:
    """Why the per-file check compares no H5F/H5D field. Darshan's HDF5 module wraps HDF5's synchronous calls only
    (darshan-runtime/lib/darshan-hdf5.c at 3.5.0: H5Fcreate/H5Fopen/H5Fclose, H5Dopen2/H5Dread/...; no *_async): a
    kernel launch that read with vol-async's event sets (vol-async-prefetch, VOL=async-prefetch) leaves no H5D record
    and no data file in H5F, while its POSIX and DXT records (async's background thread) are whole."""
    launch = ((run.manifest.get("vol") or {}).get("kernel_launches") or {}).get("darshan") or {}
    if "H5D" in d["modules"] and "H5D" not in k["modules"] and \
            (launch.get("async_prefetch") or {}).get("mode") == "explicit":
        return ("; H5F/H5D not compared: the kernel read with vol-async's H5Fopen_async/H5Dread_async (explicit "
                "async), which Darshan's HDF5 module does not wrap (it wraps the synchronous calls only): no H5D "
                "record, no data file in H5F (docs/vol-validation.md)")
    return "; H5F/H5D not compared: a side has no HDF5 module records"


def _compare_row(row: dict | None) -> dict | None:
    """a side's row of tables/files-darshan.json: its POSIX and H5F counters, H5D summed over datasets, sizes"""
    if row is None:
        return None
    h5d = row.get("h5d", {})
    return {**{f: row[f] for f in ("opens", "reads", "bytes", "h5f_opens")},
            "h5d_reads": sum(x["reads"] for x in h5d.values()), "h5d_bytes": sum(x["bytes"] for x in h5d.values()),
            "sizes": access_sizes(row["accesses"])}


def check_darshan(run: RunView) -> list[dict]:
    """Per data file: POSIX opens/reads/bytes, DXT (offset, size) accesses, H5F opens and per-dataset H5D opens/reads/
    bytes, equal on both sides; every other file a side touched listed and classified; the similarity score from
    the DXT segments."""
    skipped = run.manifest.get("skipped_profiles", {})
    d, k = (run.table(f"darshan-{side}.json", shared=True) for side in SIDES)  # a row of equal counts: one object
    if d is None and k is not None and model_judges_kernel(run):  # a kernel-only run: against the model
        return [check_kernel_model(run, k)]
    if d is None or k is None:
        why = skipped.get("darshan") or skipped.get("darshan.dlio") or skipped.get("darshan.kernel") or \
            "darshan profile not run (or a launch failed)"
        return [result("darshan.per_file", SKIP, detail=f"skipped: {why}")]
    if checkpoint_only(run.cfg):  # no data file read: the checkpoint files and everything else each side touched
        diffs: list = []
        out = [result("darshan.per_file", SKIP, detail="a checkpoint-only workload (workflow.train false): no data "
                      "file is read (its checkpoint files: darshan.checkpoints)"),
               check_checkpoints(run, d, k, "DXT_POSIX" in d["modules"] and "DXT_POSIX" in k["modules"], diffs)]
        _other_differences(run, d, k, [], diffs)
        run.put_table("files-darshan.json", {"rows": [], "differences": diffs, "columns": [],
                                             "modules": {"dlio": d["modules"], "kernel": k["modules"]}})
        return out + [explained("darshan", diffs)]
    df, kf = d["files"], k["files"]
    data = sorted(n for n in set(df) | set(kf) if (df.get(n, {}).get("reads", 0) + kf.get(n, {}).get("reads", 0))
                  and not kernel_record(n, df))
    h5 = "H5D" in d["modules"] and "H5D" in k["modules"]
    partial, dxt_partial = _partial(d, k)
    both_dxt = "DXT_POSIX" in d["modules"] and "DXT_POSIX" in k["modules"]
    dxt = both_dxt and not dxt_partial
    # a log whose DXT ran out of memory leaves its own files' segments out, not every file's (issue 35)
    cut = set(d.get("dxt_cut") or ()) | set(k.get("dxt_cut") or ()) if dxt_partial else set()
    known = "dxt_cut" in d and "dxt_cut" in k   # (a table collected before it: every file's segments left out)
    fields = tuple(f for f in DARSHAN_FIELDS if both_dxt or f != "accesses") + (DARSHAN_H5_FIELDS if h5 else ())
    columns = ["opens", "reads", "bytes"] + (["h5f_opens", "h5d_reads", "h5d_bytes"] if h5 else [])
    rows, diffs = FileRows(tuple(columns)), []
    for n in data:
        rows.add(n, *(_compare_row(row) for row in (df.get(n), kf.get(n))))
        for f in fields:
            if f == "accesses" and (n in cut or (dxt_partial and not known)):
                continue
            x, y = df.get(n, {}).get(f), kf.get(n, {}).get(f)
            if x != y:
                diffs.append({"file": n, "field": f, "dlio": x, "kernel": y, "class": None})
    _other_differences(run, d, k, data, diffs)
    run.put_table("files-darshan.json", rows.table(differences=diffs, columns=columns,
                                                   modules={"dlio": d["modules"], "kernel": k["modules"]}))
    is_data = set(data)  # (`in` a list of 10^6 files for each of DLIO's ~4,000 import differences: minutes)
    bad = sorted({x["file"] for x in diffs if x["file"] in is_data})
    first = next((x for x in diffs if x["file"] in is_data), None)
    out = [result("darshan.per_file", PASS if data and not bad and not partial else FAIL, len(data),
                  len(data) - len(bad),
                  (f"{len(data)} data files equal in {', '.join(fields)}" if data and not bad else
                   f"{len(bad)} files differ; first: {first}" if first else "no data-file reads recorded")
                  + (f"; Darshan ran out of record memory (partial logs: {partial[:3]}): raise the limits of "
                     "profiles/darshan.py config_text()" if partial else "")
                  + ("" if h5 else _no_h5(run, d, k))
                  + (_dxt_said(both_dxt, dxt_partial, cut, data, known)))]
    out.append(check_checkpoints(run, d, k, dxt, diffs))
    out.append(explained("darshan", [x for x in diffs if x["file"] not in is_data]))
    return out + similarity("similarity.darshan", d, k, "the DXT read segments")




def _dxt_said(both: bool, partial: list[str], cut: set[str], data: list[str], known: bool) -> str:
    """What darshan.per_file's detail says of the access offsets and sizes it did not compare."""
    if not both:
        return "; access offsets and sizes not compared: a side has no DXT records"
    if not partial:
        return ""
    n = len(cut.intersection(data)) if known else len(data)
    return (f"; access offsets and sizes not compared for {n} of {len(data)} data files: those of the {len(partial)} "
            "logs whose DXT ran out of its trace memory (fixed at Darshan's build)" +
            ("" if known else " (a table collected before dxt_cut: every file)"))


def _partial(*tables: dict) -> tuple[list[str], list[str]]:
    """The tables' partial logs ("<log>:<module>"): those of a module whose counters are compared (out of record
    memory: a failure), and the others (DXT's segments, whose memory is fixed at Darshan's build: those segments are
    then not compared)."""
    every = [x for t in tables for x in t.get("partial", [])]
    counted = [x for x in every if not x.rsplit(":", 1)[-1].startswith("DXT")]
    return counted, [x for x in every if x not in counted]


def _launch_cfg(run: RunView) -> dict:
    """The workload as the kernel's Darshan launch read it: reading in the ranks (read_threads 0) when its recorded
    argv set read-threads=0, as launches() asks for every workload that reads data (and as assumed when the step has
    no argv recorded); else the workload's own reader threads."""
    argv = (run.step("kernel.darshan") or {}).get("argv")
    if argv is not None and "read-threads=0" not in argv:
        return run.cfg
    return {**run.cfg, "reader": {**(run.cfg.get("reader") or {}), "read_threads": 0}}


def _model_per_file(segs: dict) -> tuple[Counter, dict]:
    """Over every rank: the model's opens per data file, and for an HDF5 model (its segments name each read's file:
    read_files) each file's [H5D reads, H5D bytes]: a read's datasets (num_dset_per_record) and bytes, which for one
    sample per file are the whole sample's (model.raw_read_bytes: min(sieve, 1 x sample)), what H5Dread selects."""
    opens, h5d = Counter(), {}
    for rank_segs in segs.values():
        for seg in rank_segs:
            files = seg.get("read_files", seg["bytes"])
            opens.update(files)
            if "read_files" not in seg or not files:
                continue
            nd = len(seg["bytes"]) // len(files)
            per_read = seg["bytes"] if nd == 1 else \
                [sum(seg["bytes"][i * nd:(i + 1) * nd]) for i in range(len(files))]
            for f, b in zip(files, per_read, strict=True):
                row = h5d.get(f)
                if row is None:
                    h5d[f] = [nd, b]
                else:
                    row[0] += nd
                    row[1] += b
    return opens, h5d


def _kernel_per_file(k: dict, cfg: dict) -> tuple[Counter, dict, int]:
    """The kernel's Darshan table per training file index (DLIO's name img_<i>_of_<N> under train/, N the workload's
    file count: train_file_index; the table sums every process's log): POSIX opens, [H5F opens, H5D reads, H5D bytes]
    (summed over datasets), and the opens of files under the data folder without such a name and place."""
    opens, h5, unnamed = Counter(), {}, 0
    for name, row in k["files"].items():
        i = train_file_index(name, cfg)
        if name == GEN_RECORD:  # the kernel's completion record, read before it reads the folder: no data file
            continue
        if i < 0:
            unnamed += row["opens"]
            continue
        opens[i] += row["opens"]
        nf, nr, nb = row["h5f_opens"], 0, 0
        for x in row["h5d"].values():
            nr += x["reads"]
            nb += x["bytes"]
        r = h5.get(i)
        if r is None:
            h5[i] = [nf, nr, nb]
        else:  # (two names of one index: a file outside the training folder; its opens fail above)
            r[0] += nf
            r[1] += nr
            r[2] += nb
    return opens, h5, unnamed


def _differences(want: Counter, want_h5: dict | None, got: Counter, got_h5: dict) -> tuple[list, list, list, list]:
    """In one pass over the files (10^6 of them: no sort but of what differs): modelled files never opened, files
    opened more (an unmodelled one among them) or less than modelled, and (want_h5 given) files whose [H5F opens, H5D
    reads, H5D bytes] are not the model's [opens, reads, bytes]."""
    missing, more, fewer, h5_bad = [], [], [], []
    for f, n in want.items():
        g = got.get(f, 0)
        if g != n:
            (missing if g == 0 else more if g > n else fewer).append(f)
        if want_h5 is not None:
            w, x = want_h5.get(f) or (0, 0), got_h5.get(f) or [0, 0, 0]
            if x[0] != n or x[1] != w[0] or x[2] != w[1]:
                h5_bad.append({"file": f, "model": [n, *w], "darshan": x})
    more += [f for f, g in got.items() if g and f not in want]
    return sorted(missing), sorted(more), sorted(fewer), sorted(h5_bad, key=lambda x: x["file"])


def check_kernel_model(run: RunView, k: dict) -> dict:
    """counts.darshan.kernel: a kernel-only run's Darshan records per data file against the analytic model (DLIO's
    side absent: model_judges_kernel). Darshan's table sums every process's log (ranks and reader processes alike),
    so the model's reads are summed over ranks: per file, POSIX opens equal the model's opens; with HDF5 records
    and an HDF5 model, H5F opens equal them too and the H5D reads and bytes (summed over the file's datasets) equal
    the model's reads and sample bytes. A modelled file never opened, a file opened more or less than modelled, an
    open of a file without DLIO's name, a child process that touched a data file, a counted module out of record
    memory: each fails it."""
    want, want_h5 = _model_per_file(run.model_reads(_launch_cfg(run)))
    got, got_h5, unnamed = _kernel_per_file(k, run.cfg)
    h5 = bool(want_h5) and "H5F" in k["modules"] and "H5D" in k["modules"]
    missing, more, fewer, h5_bad = _differences(want, want_h5 if h5 else None, got, got_h5)
    children = [c["log"] for c in k.get("children", []) if c.get("data_files")]
    partial, dxt = _partial(k)
    ok = bool(want) and not (missing or more or fewer or h5_bad or unnamed or children or partial)
    fields = "POSIX opens, H5F opens, H5D reads and bytes" if h5 else "POSIX opens"
    detail = (f"{sum(got.values())} opens of {len(got)} files, {fields} per file as modelled" if ok else
              "; ".join(x for x in (
                  f"{len(missing)} modelled files never opened (first {missing[:4]})" * bool(missing),
                  f"{len(more)} files opened more than modelled (first {more[:4]})" * bool(more),
                  f"{len(fewer)} files opened less than modelled (first {fewer[:4]})" * bool(fewer),
                  f"{len(h5_bad)} files' [H5F opens, H5D reads, H5D bytes] differ (first {h5_bad[:2]})" * bool(h5_bad),
                  f"{unnamed} opens of files without DLIO's name" * bool(unnamed),
                  f"child processes touched data files (logs {children[:3]})" * bool(children),
                  f"Darshan ran out of record memory (partial logs: {partial[:3]}): raise the limits of "
                  "profiles/darshan.py config_text()" * bool(partial),
                  "no modelled read" * (not want)) if x))
    return result("counts.darshan.kernel", PASS if ok else FAIL, sum(want.values()), sum(got.values()),
                  f"model of DLIO {run.release}, the Darshan launch's reads (summed over ranks: Darshan's table sums "
                  f"every process's log), per data file: {detail}"
                  + ("" if h5 or not want_h5 else "; H5F/H5D not judged: the kernel's logs have no HDF5 module "
                     "records")
                  + (f"; DXT ran out of record memory in {len(dxt)} logs (its segments are not judged here)"
                     if dxt else ""))


CKPT_FIELDS = ("opens", "writes", "bytes", "fsyncs", "reads", "read_bytes")
CKPT_DXT_FIELDS = ("write_segments", "read_segments")


def check_checkpoints(run: RunView, d: dict, k: dict, dxt: bool, diffs: list) -> dict:
    """darshan.checkpoints: per checkpoint file of the launch (its name relative to the launch's checkpoint folder,
    the kernel's partial name as its final one), POSIX opens, write calls, bytes written, fsyncs, reads and bytes
    read, and the DXT (offset, size) write and read segments, equal on both sides."""
    if not (run.cfg.get("workflow") or {}).get("checkpoint"):
        return result("darshan.checkpoints", SKIP, detail="checkpointing is off in this workload")
    dc, kc = d.get("checkpoints"), k.get("checkpoints")
    if dc is None or kc is None:
        return result("darshan.checkpoints", FAIL, detail="a Darshan table has no checkpoint section (collected "
                      "before checkpoint files were compared: collect the run again)")
    fields = CKPT_FIELDS + (CKPT_DXT_FIELDS if dxt else ())
    names = sorted(set(dc) | set(kc))
    bad = []
    for n in names:
        a, b = dc.get(n) or {}, kc.get(n) or {}
        wrong = {f: {"dlio": a.get(f), "kernel": b.get(f)} for f in fields if a.get(f) != b.get(f)}
        if wrong:
            bad.append({"file": n, "fields": wrong})
    if not names:
        return result("darshan.checkpoints", FAIL, detail="checkpointing is on but Darshan recorded no checkpoint "
                      "file on either side")
    run.put_table("checkpoints-darshan.json", {"files": {"dlio": dc, "kernel": kc}, "differences": bad})
    return result("darshan.checkpoints", PASS if not bad else FAIL, len(names), len(names) - len(bad),
                  (f"{len(names)} checkpoint files: {', '.join(fields)} equal" if not bad else
                   f"{len(bad)} of {len(names)} checkpoint files differ; first: {str(bad[0])[:400]}")
                  + ("" if dxt else "; write and read segments not compared: a side has no DXT records"))


@register
class Darshan(Profile):
    """Training under Darshan (POSIX, MPI-IO, H5F/H5D, DXT), reading in the ranks on both sides: processes forked
    after MPI_Init (DLIO's PyTorch workers) leave no log, so with workers Darshan would see none of DLIO's reads."""
    name = "darshan"
    holds_file_tables = True
    order = 40
    checks = (check_darshan, analyse)

    def available(self, ctx: Context) -> Found:
        info = detect(ctx.options.get("darshan_prefix"))
        return Found(info["available"], info["reason"], info)

    def bad_options(self, ctx: Context) -> str | None:
        """A prefix the user named (--darshan-prefix, DARSHAN_PREFIX, DARSHAN_TS_PREFIX) must be a Darshan install: a
        typo there is refused, not quietly replaced by another install or a skipped profile."""
        for what, prefix in ((f"DARSHAN_PREFIX={ctx.options.get('darshan_prefix')} (--darshan-prefix)",
                              ctx.options.get("darshan_prefix")),
                             (f"DARSHAN_PREFIX={os.environ.get('DARSHAN_PREFIX')}", os.environ.get("DARSHAN_PREFIX")),
                             (f"DARSHAN_TS_PREFIX={os.environ.get('DARSHAN_TS_PREFIX')}",
                              os.environ.get("DARSHAN_TS_PREFIX"))):
            if prefix and not any((Path(prefix) / d / "libdarshan.so").exists() for d in ("lib", "lib64")):
                return f"{what}: no Darshan runtime there (no lib/libdarshan.so)"
        return None

    def prepare(self, ctx: Context, found: Found) -> dict[str, str]:
        found.info["sides"] = plan_sides(found.info, ctx.dlio_venv, ctx.kernel_bin)
        return {k: v["skip"] for k, v in found.info["sides"].items() if "skip" in v}

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        # a checkpoint-only workload reads no data file: its launch compares the checkpoint files
        return [LaunchSpec("darshan", read_threads_0=shape.reads_data)]

    def wrap(self, launch: Launch) -> Wrapped:
        """Preload for the ranks only (libdarshan.so first, then the side's libhdf5); logs into <workdir>/logs (made
        at launch: Darshan writes nothing into a missing folder, a warning only), the configuration (config_text)
        in <workdir>/darshan.conf. DXT on. Every process writes its own log (DARSHAN_ENABLE_NONMPI), so the kernel's
        reader processes, forked before MPI_Init, are logged."""
        info, wd = launch.info, launch.workdir
        preload = info.get("sides", {}).get(launch.side, {}).get("preload") or [info["lib"]]
        env = {**launch.env, "LD_PRELOAD": ":".join(preload), "DARSHAN_LOG_DIR_PATH": str(wd / "logs"),
               "DARSHAN_CONFIG_PATH": str(wd / "darshan.conf"), "DARSHAN_MOD_ENABLE": "DXT_POSIX,DXT_MPIIO",
               "DARSHAN_ENABLE_NONMPI": "1"}
        files = files_per_rank(launch.shape.config, launch.shape.ranks) if launch.shape else 0
        return Wrapped(list(launch.argv), env, dirs=(wd / "logs",),
                       files=((wd / "darshan.conf", config_text(launch.data, checkpoint_dir(wd), files)),))

    def refuse(self, shape: Shape, data_dir: Path) -> str | None:
        return refuse_records(shape.config, shape.ranks, data_dir)

    def collect(self, done: Done) -> dict:
        return {f"darshan-{done.side}.json": parse(done.workdir, done.side, done.data)}
