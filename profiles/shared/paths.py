"""What a path is in one side's launch (Roots, where) and the classes of the I/O that is not data I/O (CLASSES,
classify): every difference outside the data-file reads needs one."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from common.rundir import WORKLOAD
from profiles import checkpoint_dir

# What a path is in one side's launch of this run. Differences outside the data-file reads are classified by that
# (the kind of root a path lies under, the path relative to it), by the call and by the side, never by substrings of
# absolute paths: the run directory's name holds the workload's ("unet3d_checkpoint-tiny-..."), so a substring rule
# would "explain" anything under it. Anything a rule does not explain fails dftracer.explained / darshan.explained.
DATA, CHECKPOINT, OUTPUT, CONFIG, PYTHON, USERCONF, SYSTEM, STREAM, NOFILE, OTHER = (
    "data", "checkpoint", "output", "config", "python", "userconf", "system", "stream", "nofile", "other")


@dataclass(frozen=True)
class Roots:
    """The folders of one side's launch as they were when it ran (absolute: traces record absolute paths)."""
    side: str
    workdir: str                # the launch's folder and working directory: its own output (relative paths)
    data: str                   # the side's data folder
    checkpoint: str             # the launch's checkpoint folder (inside workdir)
    config: tuple = ()          # the run's configuration: <run>/workload.yaml, <run>/dlio-config
    python: tuple = ()          # the reference DLIO's venv and its interpreter's prefix
    home: str = ""              # the home folder of the user who ran it (its dot-folders: libraries' user config)


def _under(path: str, root: str) -> str | None:
    """path relative to root ("" for root itself), or None when it is not under it."""
    root = root.rstrip("/")
    if path == root:
        return ""
    return path[len(root) + 1:] if root and path.startswith(root + "/") else None


def where(path: str, roots: Roots) -> tuple[str, str]:
    """(kind, path relative to that kind's root) of a path one side's launch touched."""
    if not path:
        return NOFILE, ""
    if path in ("<STDIN>", "<STDOUT>", "<STDERR>"):
        return STREAM, path
    p = os.path.normpath(path if path.startswith("/") else os.path.join(roots.workdir, path))
    for kind, root in ((DATA, roots.data), (CHECKPOINT, roots.checkpoint), (OUTPUT, roots.workdir)):
        rel = _under(p, root)
        if rel is not None:
            return kind, rel
    for kind, rs in ((CONFIG, roots.config), (PYTHON, roots.python)):
        for root in rs:
            rel = _under(p, root)
            if rel is not None:
                return kind, rel
    rel = _under(p, roots.home) if roots.home else None
    if rel and rel.startswith("."):
        return USERCONF, rel
    if p.startswith(("/proc/", "/sys/", "/dev/")) or p in ("/proc", "/sys", "/dev") or \
            re.match(r"/tmp/(ompi\.|pmix|prte|openmpi-sessions)", p):
        return SYSTEM, p
    return OTHER, p


DIR_CALLS = ("mkdir", "opendir", "readdir", "closedir")


STAT_CALLS = ("stat", "lstat", "fstat", "fstatat", "newfstatat", "statx", "access", "faccessat", "xstat", "lxstat",
              "fxstat", "__xstat", "__lxstat", "__fxstat", "xstat64", "lxstat64", "fxstat64")


# dirfd: CPython starting a helper process closes the inherited descriptors by listing /proc/self/fd (_posixsubprocess;
# DLIO 3.x with mlpstorage_py starts multiprocessing's resource tracker and forkserver so): no file of the run
PROC_CALLS = ("fork", "vfork", "clone", "execv", "execve", "execvp", "execvpe", "execl", "execlp", "execle",
              "waitpid", "wait", "wait4", "posix_spawn", "exit", "_exit", "dirfd")


PARTIAL = re.compile(r"\.partial\.\d+$")  # the kernel's name of a checkpoint file until it is whole


# calls that change a file: a rule explaining what a path *is* (configuration, a library, a launch's own output)
# explains reading it, never these (issue 35: the kernel writing the run's workload YAML or a .so was explained)
WRITES = ("write", "pwrite", "pwrite64", "pwritev", "pwritev2", "writev", "fwrite", "ftruncate", "truncate",
          "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "creat", "fsync", "fdatasync")


# the kernel's completion record at the top of its data folder (bench/src/gen.h GEN_RECORD): no dataset file
GEN_RECORD = "h5dlio-generation.json"


def kernel_record(name: str, dlio_files: dict) -> bool:
    """A data-folder name (relative) that is the kernel's completion record and that DLIO never touched: not a data
    file of the per-file comparisons; its calls go to the classified differences (CLASSES)."""
    return name == GEN_RECORD and name not in dlio_files


SHARED_LIB = re.compile(r"\.so(\.[0-9.]+)?$")


# tempfile.NamedTemporaryFile(prefix='__autograph_generated_file', suffix='.py'): 8 random characters between
AUTOGRAPH = re.compile(r"/tmp/__autograph_generated_file[a-z0-9_]{8}\.py")


# What a launch's own folder holds (harness/run.py, the profiles' wrap): anything else a side touches there is a
# stray file, never explained
OWN_OUTPUT = ("out", "logs")   # and DLIO's hydra/ (its resolved configuration)


OWN_FILES = re.compile(r"trace[^/]*\.pfw(\.gz)?|darshan\.conf")


# (test(call, kind, relative path, side), why). A data file opened, read, written, truncated or renamed outside the
# compared reads, or a checkpoint file written outside the compared checkpoints, is never explained: no rule takes a
# data path but directory listing and status probes, and none takes a checkpoint file but the kernel's own two steps.
CLASSES = [
    (lambda c, k, r, s: k == CHECKPOINT and c in DIR_CALLS,
     "the checkpoint folder: DLIO makes it at start-up, checkpointing or not (base_checkpointing.py create_namespace), "
     "2.0.0-52 also a global_epoch<e>_step<s>/ per save and load (:390, :431) and lists the folder before the reads "
     "(main.py:262); the kernel makes each level it needs and lists it as often"),
    (lambda c, k, r, s: k == CHECKPOINT and s == "kernel" and c in ("access",) + STAT_CALLS and r.endswith(".pt"),
     "the kernel checks that a checkpoint file does not exist before writing it (never overwrites one, ckpt.c)"),
    (lambda c, k, r, s: k == CHECKPOINT and s == "kernel" and c == "rename" and PARTIAL.sub("", r).endswith(".pt"),
     "the kernel writes a checkpoint as <name>.partial.<pid> and renames it when whole (never a partial file under "
     "its final name)"),
    (lambda c, k, r, s: k == DATA and s == "kernel" and r == GEN_RECORD,
     "the kernel's completion record at the top of its data folder (h5dlio-generation.json, docs/kernel.md): written "
     "by rank 0 when it generates, read by rank 0 before a launch reads the folder (an interrupted generation is "
     "refused); no dataset file"),
    (lambda c, k, r, s: k == DATA and c in ("opendir", "readdir", "closedir"),
     "dataset discovery: DLIO lists train/ and valid/"),
    (lambda c, k, r, s: k in (DATA, CHECKPOINT) and c in STAT_CALLS,
     "file-status probe of a data or checkpoint path (HDF5's open, Python's os.path checks): no byte read or written"),
    (lambda c, k, r, s: k not in (DATA, CHECKPOINT) and c in STAT_CALLS, "file-status probe (HDF5 build / libc ABI)"),
    (lambda c, k, r, s: k == PYTHON and s == "dlio",
     "Python environment: the interpreter's and the venv's modules, package data and entry points read at start-up"),
    (lambda c, k, r, s: k in (OTHER, PYTHON) and c not in WRITES
     and (SHARED_LIB.search(r) is not None or r == "/etc/ld.so.cache"),
     "shared libraries loaded at start-up (the dynamic linker, MPI and HDF5 plugins, Python extension modules)"),
    (lambda c, k, r, s: k == OUTPUT and (r == "" or r.split("/")[0] in OWN_OUTPUT or OWN_FILES.fullmatch(r)
                                        or (s == "dlio" and r.split("/")[0] == "hydra")),
     "the launch's own output: the program's output folder (out/), DLIO's resolved Hydra configuration (hydra/), the "
     "profilers' traces, logs and configuration (trace-*.pfw, logs/, darshan.conf)"),
    (lambda c, k, r, s: k == CONFIG and c not in WRITES, "the run's configuration: the workload YAML each side "
     "reads"),
    (lambda c, k, r, s: k == USERCONF and s == "dlio" and c in ("open", "openat", "read", "close"),
     "a library's per-user configuration read at start-up (a dot-folder of the home folder, e.g. Keras' "
     "~/.keras/keras.json, read when DLIO imports TensorFlow)"),
    (lambda c, k, r, s: k == SYSTEM and r.startswith(("/tmp/", "/dev/shm/")),
     "MPI runtime session files (Open MPI / PMIx shared memory)"),
    (lambda c, k, r, s: k == SYSTEM, "system pseudo-files (/proc, /sys, /dev)"),
    (lambda c, k, r, s: k == STREAM, "standard streams (console output)"),
    (lambda c, k, r, s: k == NOFILE and c in PROC_CALLS,
     "process management, no file (DFTracer 2.x records it): the kernel forks its reader processes, DLIO 3.x spawns "
     "its readers (exec of the interpreter, and its waits) and, with mlpstorage_py, a checkpoint writer process per "
     "file (multiprocessing's forkserver)"),
    (lambda c, k, r, s: k == OTHER and s == "dlio" and re.fullmatch(r"/tmp/(tmp)?[a-z0-9_]{8}", r) is not None,
     "a Python library's temporary file (tempfile's random name under /tmp)"),
    (lambda c, k, r, s: k == OTHER and s == "dlio" and AUTOGRAPH.fullmatch(r) is not None,
     "TensorFlow AutoGraph's generated module: the source of a tf.function it converts, written to a temporary file "
     "and imported (tensorflow/python/autograph/pyct/loader.py load_source), when DLIO's TensorFlow reader builds "
     "its input pipeline"),
]


def classify(call: str, path: str, roots: Roots, kind: str | None = None) -> str | None:
    """Why a difference on `path` (raw as traced, or relative to the root of `kind` when given) is not data I/O;
    None when nothing explains it."""
    k, rel = (kind, path) if kind else where(path, roots)
    for test, why in CLASSES:
        if test(call, k, rel, roots.side):
            return why
    return None


def launch_roots(run, side: str, step: str) -> Roots:
    """The roots of one launch (`<side>.<step>` in the manifest), as they were when it ran: its recorded workdir (the
    run may have moved since), the run directory two levels up; the reference venv and interpreter as the harness
    recorded them (manifest roots), else from DLIO's argv."""
    rec = run.step(f"{side}.{step}") or {}
    wd = Path(rec.get("workdir") or (run.path / side / step))
    rd = wd.parent.parent
    recorded = run.manifest.get("roots") or {}
    home = recorded.get("home") or os.path.expanduser("~")
    py = list(recorded.get("python") or ())
    if not py:
        argv = next((r.get("argv") or [] for n, r in (run.manifest.get("steps") or {}).items()
                     if n.startswith("dlio.")), [])
        entry = next((a for a in argv if a.endswith("/bin/dlio_benchmark") or a.endswith("/bin/python")), None)
        if entry:  # a manifest from before roots were recorded: the venv only (validation reads nothing of it)
            py = [str(Path(entry).parent.parent)]
    return Roots(side=side, workdir=str(wd), data=str(rd / side / "data"), checkpoint=str(checkpoint_dir(wd)),
                 config=(str(rd / WORKLOAD), str(rd / "dlio-config")), python=tuple(py), home=home)
