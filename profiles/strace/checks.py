"""The strace profile's checks (run by validate): each fn(run: RunView) -> check rows, reading the strace tables of
both sides (and a side's dftracer table, strace.preload)."""
from __future__ import annotations

from collections import Counter

from profiles import FAIL, PASS, SIDES, SKIP, RunView, checkpoint_only, result
from profiles.dftracer import prewarm_prefetch
from profiles.shared.paths import CHECKPOINT, DATA, PARTIAL, Roots, classify, launch_roots

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
    """Why a difference is not data I/O (shared.paths.classify, as the side that made more of the call made it): a
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
    folders' listings and probes and the kernel's own checkpoint steps classified (shared.paths.classify); the stats of
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
                       "profiles/strace/ counted it): parse the traces again")]
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
