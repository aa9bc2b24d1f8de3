"""What profile checks (and validate's own) are made of: the check row of verdict.json and its statuses, the
classes of I/O that is not data I/O (every difference outside the data-file reads needs one), the <profile>.explained
row, and the DLIO paper's similarity over I/O features."""
from __future__ import annotations

import re

PASS, FAIL, SKIP = "pass", "fail", "skip"


def result(name, status, expected=None, observed=None, detail="", required=True) -> dict:
    return {"name": name, "status": status, "expected": expected, "observed": observed, "detail": detail,
            "required": required}


def cosine_similarity(a: dict, b: dict) -> float:
    """The DLIO paper's similarity: cosine of two I/O feature vectors; each feature is first scaled by the larger of
    the two sides, so that bytes do not drown percentages."""
    keys = sorted(set(a) & set(b))
    va, vb = [], []
    for key in keys:
        m = max(abs(a[key]), abs(b[key]))
        va.append(a[key] / m if m else 1.0)
        vb.append(b[key] / m if m else 1.0)
    na, nb = sum(x * x for x in va) ** 0.5, sum(x * x for x in vb) ** 0.5
    return sum(x * y for x, y in zip(va, vb, strict=True)) / (na * nb) if na and nb else 0.0


def explained(profile: str, other: list[dict]) -> dict:
    """<profile>.explained: every difference outside the data-file reads has a class (tables/files-<profile>.json)."""
    unexplained = [x for x in other if x["class"] is None]
    return result(f"{profile}.explained", PASS if not unexplained else FAIL, 0, len(unexplained),
                  f"{len(other)} non-data differences, all classified (tables/files-{profile}.json)"
                  if not unexplained else f"unclassified: {unexplained[:3]}")


def similarity(name: str, d: dict, k: dict, what: str) -> list[dict]:
    """The similarity result of one profile's tables (DLIO's features as expected, the kernel's as observed);
    nothing when a side has no features."""
    fa, fb = d.get("features") or {}, k.get("features") or {}
    if not (fa and fb):
        return []
    score = cosine_similarity(fa, fb)
    return [result(name, PASS, fa, fb, f"cosine similarity {score:.4f} over I/O features of {what} (each feature "
                   "scaled by the larger side; reported, not judged)", required=False) | {"observed_score": score}]


# Differences outside the data-file reads, and why they are not data I/O (DFTracer calls, Darshan file records).
# Anything else fails dftracer.explained / darshan.explained.
CLASSES = [
    (lambda call, f: call in ("mkdir", "opendir", "readdir", "closedir") and "/checkpoints" in (f or ""),
     "the checkpoint folder: DLIO makes it at start-up, checkpointing or not (base_checkpointing.py create_namespace), "
     "2.0.0-52 also a global_epoch<e>_step<s>/ per save and load (:390, :431) and lists the folder before the reads "
     "(main.py:262); the kernel makes each level it needs and lists it as often"),
    (lambda call, f: call == "access" and (f or "").endswith(".pt"),
     "the kernel checks that a checkpoint file does not exist before writing it (never overwrites one, ckpt.c)"),
    (lambda call, f: call in ("opendir", "readdir", "closedir"), "dataset discovery: DLIO lists train/ and valid/"),
    (lambda call, f: call in ("stat", "lstat", "fstat", "access"), "file-status probe (HDF5 build / libc ABI)"),
    (lambda call, f: (f or "").endswith((".py", ".pyc", ".so")) or ".so." in (f or ""), "interpreter start-up"),
    (lambda call, f: re.search(r"\.(pfw|pfw\.gz|log|json|csv|darshan)(\.tmp\.\d+)?$", f or "") is not None,
     "profiler or program output"),
    (lambda call, f: (f or "").startswith(("/tmp/ompi.", "/dev/shm/")) or "pmix" in (f or ""),
     "MPI runtime session files (Open MPI / PMIx shared memory)"),
    (lambda call, f: (f or "").startswith(("/proc/", "/sys/", "/dev/")), "system pseudo-files (/proc, /sys, /dev)"),
    (lambda call, f: "/site-packages/" in (f or "") or (f or "").endswith(("pyvenv.cfg", ".pth", "bin/dlio_benchmark")),
     "Python environment: package data, metadata and entry points read at start-up"),
    (lambda call, f: call == "rename" and (f or "").endswith(".pt"),
     "the kernel writes a checkpoint as <name>.partial.<pid> and renames it when whole (never a partial file under "
     "its final name)"),
    (lambda call, f: "checkpoint" in (f or ""), "DLIO creates its checkpoint folder at start-up (checkpointing off)"),
    (lambda call, f: (f or "").endswith(".yaml") and ("/hydra/" in f or "/dlio-config/" in f),
     "DLIO's configuration (Hydra reads the workload YAML, writes the resolved config)"),
    (lambda call, f: f in ("<STDIN>", "<STDOUT>", "<STDERR>"), "standard streams (console output)"),
    (lambda call, f: not f and call in ("fork", "vfork", "clone", "execv", "execve", "execvp", "execvpe", "execl",
                                        "execlp", "execle", "waitpid", "wait", "wait4", "posix_spawn", "exit", "_exit"),
     "process management, no file (DFTracer 2.x records it): the kernel forks its reader processes, DLIO 3.x spawns "
     "its readers (exec of the interpreter, and its waits)"),
    (lambda call, f: re.fullmatch(r"/tmp/(tmp)?[a-z0-9_]{8}", f or "") is not None,
     "a Python library's temporary file (tempfile's random name under /tmp)"),
]


def classify(call: str, fname: str) -> str | None:
    for test, why in CLASSES:
        if test(call, fname):
            return why
    return None


def dlio_rule(run, name: str):
    """A rule of the reference DLIO as the probe saw it (manifest dlio.probed.rules), else as its kernel entry says
    (dlio.entry_rules); None when neither has it."""
    d = run.manifest.get("dlio") or {}
    probed = ((d.get("probed") or {}).get("rules") or {}).get(name)
    return probed if probed is not None else (d.get("entry_rules") or {}).get(name)


def raw_reader(run) -> str | None:
    """Why the Log VFD has nothing to compare, or None: the reference DLIO reads each sample as the whole file with
    Python's open().read() (rule sample_read whole_file, as probed: MLCommons 3.x reader/hdf5_reader.py read_index ->
    reader/_local_fs_iterable_mixin.py _read_local_bytes), no HDF5 call, so its side of a Log VFD log is empty."""
    if dlio_rule(run, "sample_read") != "whole_file":
        return None
    return ("DLIO reads each sample as the whole file with Python open().read() (sample_read whole_file), without "
            "the HDF5 library: no Log VFD record to compare; equivalence is checked at the POSIX level "
            "(dftracer.per_file: opens, reads, bytes and (offset, size) accesses per file; darshan.* when installed)")
