"""DFTracer profile: POSIX events (and the programs' own regions) of a training launch, as DLIO 2.0.0 records
them (pydftracer 1.0.2, DFTRACER_ENABLE=1, DFTRACER_INC_METADATA=1 -> output.folder/trace-<rank>-of-<size>.pfw)
and, for the kernel, through DFTracer's preload library (POSIX calls) plus the kernel's regions (epoch, step,
load_batch, read_sample, compute) that it emits through DFTracer's C API when the library is loaded."""
from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from profiles import Context, Done, Found, Launch, Profile, RunView, Wrapped, checkpoint_dir, checkpoint_only, register
from profiles.compare import FAIL, PASS, SKIP, classify, explained, raw_reader, result, similarity
from profiles.features import io_features, metadata_rate

# names differ by libc ABI (h5py's manylinux HDF5 calls open/pread/__fxstat; a Debian build calls open64/pread64)
CANON = {"open64": "open", "pread64": "pread", "pwrite64": "pwrite", "read64": "read", "lseek64": "lseek",
         "__fxstat": "fstat", "__fxstat64": "fstat", "fstat64": "fstat", "__lxstat": "lstat", "__lxstat64": "lstat",
         "lstat64": "lstat", "__xstat": "stat", "__xstat64": "stat", "stat64": "stat", "openat64": "openat"}
READS = {"pread", "read"}


def preload_library(dlio_venv: Path) -> Path | None:
    """DFTracer's preload library as shipped in the reference venv's dftracer wheel."""
    hits = sorted(dlio_venv.glob("lib/python3*/site-packages/dftracer/lib/libdftracer_preload.so"))
    return hits[0] if hits else None


def read_events(path: Path) -> list[dict]:
    """A .pfw (or .pfw.gz) file: a JSON array written one event per line; tolerate a missing closing bracket."""
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a crash; counted by nothing on purpose: the trace is best effort
    return out


def trace_files(outdir: Path) -> list[Path]:
    return sorted([*outdir.rglob("*.pfw"), *outdir.rglob("*.pfw.gz")])


def _num(x, default=0):
    try:
        return int(x)
    except (TypeError, ValueError):
        return default


def normalize(events: list[dict], side: str) -> list[dict]:
    """Events -> {rank, pid, cat, name, ts (s), dur (s), fname, offset, count, ret}; ranks from DLIO's pid field
    (DLIO passes its rank as DFTracer's process id) or from the kernel's rank_info region."""
    pid_rank: dict[str, int] = {}
    for e in events:
        if e.get("name") == "rank_info":
            pid_rank[str(e.get("pid"))] = _num(e.get("args", {}).get("rank"), -1)
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        a = e.get("args", {}) or {}
        pid = str(e.get("pid"))
        rank = _num(pid, -1) if side == "dlio" else pid_rank.get(pid, -1)
        cat = e.get("cat", "")
        name = CANON.get(e.get("name", ""), e.get("name", "")) if cat == "POSIX" else e.get("name", "")
        out.append({"rank": rank, "pid": pid, "tid": str(e.get("tid")), "cat": cat, "name": name,
                    "ts": _num(e.get("ts")) / 1e6, "dur": _num(e.get("dur")) / 1e6, "fname": a.get("fname"),
                    "offset": _num(a.get("offset"), -1), "count": _num(a.get("count"), -1),
                    "ret": _num(a.get("ret"), -1)})
    return out


def file_table(events: list[dict], data_dir: Path, ckpt_dir: Path | None = None) -> dict:
    """Per file under the data folder (path relative to it): opens, reads, bytes, access sizes and offsets; every
    other POSIX call (but those on checkpoints: checkpoint_table) is kept as an 'other' row for classification."""
    root = str(data_dir).rstrip("/") + "/"
    croot = str(ckpt_dir).rstrip("/") + "/" if ckpt_dir else None
    files: dict[str, dict] = defaultdict(lambda: {"opens": 0, "closes": 0, "reads": 0, "bytes": 0, "calls": Counter(),
                                                  "accesses": Counter(), "read_time_s": 0.0})
    other: Counter = Counter()
    for e in events:
        if e["cat"] != "POSIX":
            continue
        f = e["fname"] or ""
        if croot and f.startswith(croot):
            continue
        if not f.startswith(root):
            other[(e["name"], f)] += 1
            continue
        row = files[f[len(root):]]
        row["calls"][e["name"]] += 1
        if e["name"] in ("open", "openat"):
            row["opens"] += 1
        elif e["name"] == "close":
            row["closes"] += 1
        elif e["name"] in READS:
            row["reads"] += 1
            row["bytes"] += max(e["ret"], 0)
            row["accesses"][f"{e['offset']}+{e['count']}"] += 1
            row["read_time_s"] += e["dur"]
    return {"files": {k: {**v, "calls": dict(v["calls"]), "accesses": dict(v["accesses"])}
                      for k, v in sorted(files.items())},
            "other": [{"call": c, "file": f, "n": n} for (c, f), n in sorted(other.items())]}


# the kernel writes a checkpoint as <name>.partial.<pid> and renames it when whole (DLIO writes <name> itself)
PARTIAL = re.compile(r"\.partial\.\d+$")
WRITES = {"write", "pwrite"}


def checkpoint_table(events: list[dict], ckpt_dir: Path) -> dict:
    """Per checkpoint file (name relative to the launch's checkpoint folder, the kernel's partial name mapped to its
    final one): opens, closes, writes, bytes written, the multiset of write sizes, fsyncs, reads (torch.load's
    read(2) calls), bytes read, the multiset of read sizes, lseeks (torch.load's and Python's buffered reader's), and
    every call."""
    root = str(ckpt_dir).rstrip("/") + "/"
    files: dict[str, dict] = defaultdict(lambda: {"opens": 0, "closes": 0, "writes": 0, "bytes": 0, "fsyncs": 0,
                                                  "write_sizes": Counter(), "reads": 0, "read_bytes": 0,
                                                  "read_sizes": Counter(), "seeks": 0, "calls": Counter(),
                                                  "write_time_s": 0.0,
                                                  "read_time_s": 0.0})
    for e in events:
        f = e["fname"] or ""
        if e["cat"] != "POSIX" or not f.startswith(root) or f == root.rstrip("/"):
            continue
        row = files[PARTIAL.sub("", f[len(root):])]
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
        elif e["name"] == "lseek":
            row["seeks"] += 1
    return {k: {**v, "write_sizes": dict(v["write_sizes"]), "read_sizes": dict(v["read_sizes"]),
                "calls": dict(v["calls"])} for k, v in sorted(files.items())}


def features(events: list[dict], data_dir: Path) -> dict:
    """The DLIO paper's I/O features over the data-file reads of one side."""
    root = str(data_dir).rstrip("/") + "/"
    return io_features([{"proc": e["pid"], "file": e["fname"], "offset": e["offset"], "size": max(e["ret"], 0),
                         "start": (e["rank"], e["ts"]), "dur": e["dur"]}
                        for e in events if e["cat"] == "POSIX" and e["name"] in READS
                        and (e["fname"] or "").startswith(root)])


# a training epoch as each side marks it: DLIO 2.0.0's DLIOBenchmark._train (one call per epoch and rank), the kernel's
# train_epoch region
EPOCH_REGIONS = ("DLIOBenchmark._train", "train_epoch")
DATA_CALLS = READS | {"write", "pwrite"}


def epochs(events: list[dict]) -> list[tuple[float, float]]:
    """Epoch k = the k-th epoch region of every process that marks epochs (the ranks): [earliest start, latest end]
    (seconds)."""
    per_proc: dict[str, list] = defaultdict(list)
    for e in events:
        if e["name"] in EPOCH_REGIONS:
            per_proc[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
    spans = [sorted(v) for v in per_proc.values()]
    return [(min(s[k][0] for s in spans if len(s) > k), max(s[k][1] for s in spans if len(s) > k))
            for k in range(max((len(s) for s in spans), default=0))]


def metadata(events: list[dict], data_dir: Path) -> dict:
    """The metadata rate (profiles.features.metadata_rate) per training epoch and over all of them, from the POSIX
    calls on the files under the data folder that move no data (every call but read/pread/write/pwrite: open, close,
    the stat family, lseek, ...; all processes), each counted in the epoch its start falls in; calls outside every
    epoch (dataset discovery before training) are counted apart."""
    root = str(data_dir).rstrip("/") + "/"
    spans = epochs(events)
    opens = [0] * len(spans)
    meta = [0.0] * len(spans)
    outside = {"opens": 0, "metadata_s": 0.0}
    calls: Counter = Counter()
    for e in events:
        if e["cat"] != "POSIX" or e["name"] in DATA_CALLS or not (e["fname"] or "").startswith(root):
            continue
        calls[e["name"]] += 1
        k = next((i for i, (a, b) in enumerate(spans) if a <= e["ts"] < b), None)
        is_open = e["name"] in ("open", "openat")
        if k is None:
            outside["opens"] += is_open
            outside["metadata_s"] += e["dur"]
        else:
            opens[k] += is_open
            meta[k] += e["dur"]
    return {"source": "DFTracer POSIX events on the files under the data folder; epochs from "
                      f"{' / '.join(EPOCH_REGIONS)} regions",
            "per_epoch": [metadata_rate(opens[k], meta[k], b - a, 1) for k, (a, b) in enumerate(spans)],
            "all": metadata_rate(sum(opens), sum(meta), sum(b - a for a, b in spans) or None, len(spans) or None),
            "outside_epochs": outside, "calls": dict(sorted(calls.items()))}


KIND = {"pread": "read", "read": "read", "open": "open", "openat": "open", "close": "close",
        "compute": "compute", "TorchFramework.compute": "compute"}


def timeline(events: list[dict]) -> dict:
    """Lanes per rank and process for the reports (times relative to the first event)."""
    if not events:
        return {"lanes": []}
    t0 = min(e["ts"] for e in events)
    lanes: dict[tuple, list] = defaultdict(list)
    for e in events:
        kind = KIND.get(e["name"])
        if kind is None:
            continue
        lanes[(e["rank"], e["pid"])].append({"t": round(e["ts"] - t0, 6), "d": round(e["dur"], 6), "kind": kind})
    return {"lanes": [{"rank": r, "pid": _num(p, -1), "label": f"rank {r} pid {p}", "events": ev}
                      for (r, p), ev in sorted(lanes.items())]}


def parse(outdir: Path, side: str, data_dir: Path) -> dict:
    events = normalize([e for p in trace_files(outdir) for e in read_events(p)], side)
    ckpt = checkpoint_dir(outdir)
    return {"side": side, "data_dir": str(data_dir), "events": len(events), "files": file_table(events, data_dir, ckpt),
            "checkpoints": checkpoint_table(events, ckpt),
            "features": features(events, data_dir), "metadata": metadata(events, data_dir),
            "timeline": timeline(events)}


DATA_FIELDS = ("opens", "closes", "reads", "bytes", "accesses")


CKPT_FIELDS = ("opens", "closes", "writes", "bytes", "fsyncs", "write_sizes", "reads", "read_bytes", "read_sizes",
               "seeks")


def compare_checkpoints(run: RunView, d: dict | None, k: dict | None, diffs: list) -> tuple[list, dict]:
    """dftracer.checkpoints: per checkpoint file of the launch, opens, closes, writes, bytes, fsyncs, the multiset of
    write sizes, reads, bytes read, the multiset of read sizes and lseeks equal on both sides; other calls on them go
    to the classified differences, as do the calls on what neither side opened (the per-checkpoint folders)."""
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
                    diffs.append({"file": n, "field": call, "dlio": x, "kernel": y, "class": classify(call, n)})
            continue
        rows += [{"file": n, "side": side, **{f: row.get(f) for f in CKPT_FIELDS}}
                 for side, row in (("dlio", d.get(n)), ("kernel", k.get(n))) if row is not None]
        wrong = [f for f in CKPT_FIELDS if a.get(f) != b.get(f)]
        if wrong:
            bad.append({"file": n, "fields": {f: {"dlio": a.get(f), "kernel": b.get(f)} for f in wrong}})
        for call in sorted(set(a.get("calls", {})) | set(b.get("calls", {})) if a and b else ()):
            # a file only one side wrote fails dftracer.checkpoints itself; its other calls are not differences
            if call in ("open", "openat", "close", "write", "pwrite", "fsync", "fdatasync", "read", "pread", "lseek"):
                continue
            x, y = a.get("calls", {}).get(call, 0), b.get("calls", {}).get(call, 0)
            if x != y:
                diffs.append({"file": n, "field": call, "dlio": x, "kernel": y, "class": classify(call, n)})
    if not rows:
        return rows, result("dftracer.checkpoints", FAIL,
                            detail="checkpointing is on but no checkpoint file was traced")
    n = len({r["file"] for r in rows})
    return rows, result("dftracer.checkpoints", PASS if not bad else FAIL, n, n - len(bad),
                        f"{n} checkpoint files: opens, closes, writes, bytes, fsyncs, write sizes, reads, bytes read, "
                        "read sizes and lseeks equal" if not bad
                        else f"{len(bad)} of {n} checkpoint files differ; first: {bad[0]}")


def check_dftracer(run: RunView) -> list[dict]:
    """System level: per data file, opens/closes/reads/bytes/access multiset equal on both sides; every other POSIX
    difference listed and classified; the DLIO paper's cosine similarity over I/O features, reported."""
    d, k = run.table("dftracer-dlio.json"), run.table("dftracer-kernel.json")
    if d is None or k is None:
        return [result("dftracer.per_file", SKIP, detail="dftracer profile not run (or a launch failed)")]
    out, rows, diffs = [], [], []
    df, kf = d["files"]["files"], k["files"]["files"]
    names = sorted(set(df) | set(kf))
    data = [n for n in names if (df.get(n, {}).get("opens", 0) + kf.get(n, {}).get("opens", 0)) > 0]
    bad_files = 0
    for n in names:
        a, b = df.get(n), kf.get(n)
        for side, row in (("dlio", a), ("kernel", b)):
            if row is not None:
                rows.append({"file": n, "side": side, **{f: row[f] for f in ("opens", "closes", "reads", "bytes")},
                             "sizes": dict(Counter(int(x.split("+")[1]) for x in row["accesses"]
                                                   for _ in range(row["accesses"][x])))})
        if n not in data:  # a directory or a file only probed: explained below
            for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
                diffs.append({"file": n, "field": call, "dlio": (a or {}).get("calls", {}).get(call, 0),
                              "kernel": (b or {}).get("calls", {}).get(call, 0), "class": classify(call, n)})
            continue
        wrong = [f for f in DATA_FIELDS if (a or {}).get(f) != (b or {}).get(f)]
        bad_files += bool(wrong)
        for f in wrong:
            diffs.append({"file": n, "field": f, "dlio": (a or {}).get(f), "kernel": (b or {}).get(f), "class": None})
        for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
            if call in ("open", "openat", "close", "pread", "read"):
                continue
            x, y = (a or {}).get("calls", {}).get(call, 0), (b or {}).get("calls", {}).get(call, 0)
            if x != y:
                diffs.append({"file": n, "field": call, "dlio": x, "kernel": y, "class": classify(call, n)})
    for side, t in (("dlio", d), ("kernel", k)):
        for o in t["files"]["other"]:
            diffs.append({"file": o["file"], "field": o["call"], "dlio": o["n"] if side == "dlio" else 0,
                          "kernel": o["n"] if side == "kernel" else 0, "class": classify(o["call"], o["file"])})
    ck_rows, ck_result = compare_checkpoints(run, d.get("checkpoints"), k.get("checkpoints"), diffs)
    run.put_table("files-dftracer.json", {"rows": rows, "differences": diffs, "checkpoints": ck_rows})
    raw = raw_reader(run)  # DLIO reads whole files without HDF5: this is the level where equivalence is shown
    first = next((x for x in diffs if x["field"] in DATA_FIELDS), None)
    if checkpoint_only(run.cfg) and not data:
        out.append(result("dftracer.per_file", SKIP, detail="a checkpoint-only workload (workflow.train false): no "
                          "data file is read; its checkpoint files are compared in dftracer.checkpoints"))
    else:
        out.append(result("dftracer.per_file", PASS if data and bad_files == 0 else FAIL, len(data),
                          len(data) - bad_files,
                          f"{len(data)} data files: opens, closes, reads, bytes and (offset, size) accesses equal" +
                          ("; DLIO reads whole files without HDF5 (sample_read whole_file): the equivalence of the two "
                           "sides' I/O, in place of the Log VFD checks" if raw else "")
                          if data and not bad_files else
                          (f"{bad_files} files differ; first: {first}" if first else "no data-file reads traced")))
    out.append(ck_result)
    out.append(explained("dftracer", [x for x in diffs if x["field"] not in DATA_FIELDS]))
    return out + similarity("similarity", d, k, "the data-file reads")


@register
class DFTracer(Profile):
    name = "dftracer"
    order = 30
    checks = (check_dftracer,)

    def available(self, ctx: Context) -> Found:
        lib = preload_library(ctx.dlio_venv)
        if lib is None:
            return Found(False, f"no libdftracer_preload.so in {ctx.dlio_venv} (pydftracer not installed)")
        return Found(True, info={"lib": str(lib)})

    def wrap(self, launch: Launch) -> Wrapped:
        """DLIO traces itself (pydftracer, switched on by the environment); the kernel runs under the preload
        library, its trace next to the launch, restricted to the data folder."""
        env = {**launch.env, "DFTRACER_ENABLE": "1", "DFTRACER_INC_METADATA": "1"}
        if launch.side == "kernel":
            # the data folder and the checkpoint folder, as DLIO 2.0.0 hands both to DFTracer (utils/config.py:194-195)
            env.update({"LD_PRELOAD": launch.info["lib"], "DFTRACER_INIT": "PRELOAD",
                        "DFTRACER_LOG_FILE": str(launch.workdir / "trace"),
                        "DFTRACER_DATA_DIR": f"{launch.data}:{checkpoint_dir(launch.workdir)}"})
        return Wrapped(list(launch.argv), env)

    def collect(self, done: Done) -> dict:
        t = parse(done.workdir, done.side, done.data)
        timeline = t.pop("timeline")
        return {f"dftracer-timeline-{done.side}.json": timeline, f"dftracer-{done.side}.json": t}
