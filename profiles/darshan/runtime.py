"""Darshan's runtime on this machine: which install (detect: an explicit prefix, DARSHAN_PREFIX, or darshan-config on
PATH; detect_ts: the one built against the thread-safe HDF5), what each side preloads (plan_sides: Darshan's HDF5
module forwards to the libhdf5 it was built against), and the configuration of a launch (config_text: room for
every file's records, refuse_records when there cannot be)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

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
TS_STAMP = Path(__file__).resolve().parents[2] / "build" / ".darshan-ts-prefix"


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
            "profiles/darshan/runtime.py): run with more ranks or without darshan (PROFILES=...)")


def config_text(data_dir: Path, ckpt_dir: Path | None = None, files: int = 0) -> str:
    """The runtime configuration (DARSHAN_CONFIG_PATH) of one launch. Darshan's defaults (4 MiB for all modules,
    1024 records per module) are used up by a Python process's imports before DLIO opens its first data file: the
    data files are then simply missing from the log. So: room for every file (the interpreter's own included, so
    that the comparison can classify them, and the `files` data files a rank opens: record_limits); and DXT, whose
    2 MiB per module and process is fixed at Darshan's build, traces the data folder and the checkpoint folder
    only."""
    include = "".join(f"NAME_INCLUDE  {_posix_rx(d)}  DXT_POSIX,DXT_MPIIO\n" for d in (data_dir, ckpt_dir) if d)
    lim = record_limits(files, data_dir)
    return ("# written by h5dlio's darshan profile (profiles/darshan/runtime.py)\n"
            "MOD_ENABLE    DXT_POSIX,DXT_MPIIO\n"
            f"MODMEM        {lim['modmem']}\n"
            f"NAMEMEM       {lim['namemem']}\n"
            f"MAX_RECORDS   {lim['records']}  {MODULES}\n"
            "NAME_EXCLUDE  .*  DXT_POSIX,DXT_MPIIO\n" + include)
