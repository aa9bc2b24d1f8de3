"""Each check is a function of the run directory returning results {name, status, expected, observed, detail,
required}. Names start with what they use: steps., dataset., logvfd., counts., runtime."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from validate import model

PASS, FAIL, SKIP = "pass", "fail", "skip"


def result(name, status, expected=None, observed=None, detail="", required=True) -> dict:
    return {"name": name, "status": status, "expected": expected, "observed": observed, "detail": detail,
            "required": required}


class Run:
    def __init__(self, path: Path):
        self.path = path
        self.manifest = json.loads((path / "manifest.json").read_text())
        self.tables = path / "tables"

    def table(self, name: str):
        p = self.tables / name
        return json.loads(p.read_text()) if p.exists() else None

    def step(self, name: str) -> dict | None:
        return self.manifest["steps"].get(name)

    @property
    def cfg(self) -> dict:
        return self.manifest["workload"]["config"]

    @property
    def ranks(self) -> int:
        return int(self.manifest["ranks"])

    @property
    def release(self) -> str:
        """The kernel entry the run used (manifests from before the dlio block: 2.0.0)."""
        return (self.manifest.get("dlio") or {}).get("entry") or "2.0.0"


def check_steps(run: Run) -> list[dict]:
    """Each launch ended well and its output could be read (a profiler that wrote nothing fails here, by name)."""
    out = []
    unread = run.manifest.get("collect_errors") or {}
    for name, rec in sorted(run.manifest["steps"].items()):
        ok = rec.get("status") == "ok"
        if ok and name in unread:
            out.append(result(f"steps.{name}", FAIL, "readable output", None, f"ran, output unreadable: {unread[name]}"
                              [:500]))
            continue
        out.append(result(f"steps.{name}", PASS if ok else FAIL, 0, rec.get("rc"),
                          "" if ok else f"{rec.get('status')}: {rec.get('detail', '')}"[:500]))
    return out


def check_dlio_version(run: Run) -> list[dict]:
    """Which DLIO was the reference and which kernel entry stood for it; an unknown release is validated with the
    nearest entry, and this check says so (it passes: the other checks judge whether the entry still fits)."""
    d = run.manifest.get("dlio")
    if not d:
        ver = run.manifest.get("versions", {}).get("dlio", "unknown")
        return [result("dlio.version", PASS, "2.0.0", ver, f"DLIO {ver} (manifest without a dlio block: PyPI "
                       "release assumed), kernel entry 2.0.0")]
    where = d.get("source", "?") + (f" @ {d['revision'][:12]}" if d.get("revision") not in (None, "pypi") else "")
    if not d.get("entry"):
        return [result("dlio.version", FAIL, d.get("version"), None,
                       f"DLIO {d.get('version')} ({where}): the kernel has no entry for it: {d.get('warning', '')}")]
    if d.get("nearest"):
        detail = f"nearest entry {d['entry']} used for {d['version']} ({where}); check the divergences below"
    else:
        detail = f"DLIO {d['version']} ({where}) validated with its own kernel entry"
    return [result("dlio.version", PASS, d.get("version"), d["entry"], detail) | {"nearest": bool(d.get("nearest"))}]


def check_dataset(run: Run) -> list[dict]:
    d, k = run.table("dataset-dlio.json"), run.table("dataset-kernel.json")
    if d is None or k is None:
        return [result("dataset.files", SKIP, detail="a generation step did not finish: no dataset tables")]
    out = []
    df, kf = sorted(d["files"]), sorted(k["files"])
    out.append(result("dataset.files", PASS if df == kf and df else FAIL, len(df), len(kf),
                      "" if df == kf else f"only DLIO: {sorted(set(df) - set(kf))[:5]}; only kernel: "
                                          f"{sorted(set(kf) - set(df))[:5]}"))
    diffs = [f for f in df if f in k["files"] and d["files"][f] != k["files"][f]]
    detail = ""
    if diffs:
        f = diffs[0]
        detail = f"{f}: DLIO {d['files'][f]} kernel {k['files'][f]}"
    out.append(result("dataset.structure", PASS if not diffs else FAIL, 0, len(diffs),
                      detail or "dataset names, shapes, dtypes, layout, chunks, filters equal in every file"))
    for name, who in (("dlio_reads_kernel", "dlio.logvfd"), ("kernel_reads_dlio", "kernel.logvfd")):
        rec = run.step(who)
        if rec is None:
            out.append(result(f"dataset.{name}", SKIP, detail=f"no {who} step (logvfd profile not run)"))
        else:
            ok = rec.get("status") == "ok"
            out.append(result(f"dataset.{name}", PASS if ok else FAIL, 0, rec.get("rc"),
                              f"{who} read the other side's dataset" if ok else rec.get("detail", "")[:500]))
    return out


def _first_diff(a: list, b: list) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _records(blocks: list) -> Counter:
    c = Counter(x for b in blocks for x in b if not x.startswith("SUPER-PROBE"))
    c["opens"] = len(blocks)
    return c


def check_logvfd(run: Run) -> list[dict]:
    out = []
    rt = int(run.cfg.get("reader", {}).get("read_threads", 1))
    variants = [("logvfd", "sequence" if rt == 0 else "multiset")]
    if run.table("logvfd-rt0-dlio.json") is not None or rt > 0:
        variants.append(("logvfd-rt0", "sequence"))
    for prof, kind in variants:
        d, k = run.table(f"{prof}-dlio.json"), run.table(f"{prof}-kernel.json")
        if d is None or k is None:
            out.append(result(f"logvfd.{prof}", SKIP, detail=f"no {prof} tables (profile not run or a launch failed)"))
            continue
        for r in range(run.ranks):
            name = f"logvfd.{kind}.{'rt0.' if prof == 'logvfd-rt0' else ''}rank{r}"
            db = d["ranks"].get(str(r), {}).get("blocks")
            kb = k["ranks"].get(str(r), {}).get("blocks")
            if db is None or kb is None:
                out.append(result(name, FAIL, detail=f"rank {r}: no Log VFD records on one side"))
                continue
            if kind == "sequence":
                i = _first_diff(db, kb)
                ok = db == kb
                detail = f"{len(db)} blocks identical in order" if ok else (
                    f"first difference at open #{i}: DLIO {db[i] if i < len(db) else 'none'} | kernel "
                    f"{kb[i] if i < len(kb) else 'none'}")
            else:
                # reader processes share the rank's stderr: their records interleave, so blocks are not reliable;
                # compare the multiset of records (superblock probes aside) and the number of opens
                cd, ck = _records(db), _records(kb)
                ok = cd == ck
                only_d, only_k = cd - ck, ck - cd
                detail = f"{len(db)} opens, {sum(cd.values())} records, same multiset" if ok else (
                    f"only DLIO ({sum(only_d.values())}): {list(only_d)[:3]} | only kernel ({sum(only_k.values())}): "
                    f"{list(only_k)[:3]}")
            out.append(result(name, PASS if ok else FAIL, len(db), len(kb), detail))
    return out


def check_counts(run: Run) -> list[dict]:
    """Opens, raw reads and raw bytes per rank (and per phase/epoch where the order is deterministic) against the
    analytic model computed from the workload alone."""
    out = []
    for prof in ("logvfd", "logvfd-rt0"):
        cfg = run.cfg if prof == "logvfd" else {**run.cfg, "reader": {**run.cfg.get("reader", {}), "read_threads": 0}}
        exp = model.workload_reads(cfg, run.ranks, run.release)
        for side in ("dlio", "kernel"):
            t = run.table(f"{prof}-{side}.json")
            if t is None:
                continue
            for r in range(run.ranks):
                segs = exp[r]
                e_bytes = [b for s in segs for b in s["bytes"]]
                tr = t["ranks"].get(str(r), {})
                blocks = tr.get("blocks", [])
                got = [int(x.split()[0].split("-")[1]) - int(x.split()[0].split("-")[0]) + 1
                       for b in blocks for x in b if x.endswith("DRAW Read")]
                e = {"opens": sum(s["opens"] for s in segs), "raw_reads": len(e_bytes), "raw_bytes": sum(e_bytes)}
                o = {"opens": tr.get("opens"), "raw_reads": tr.get("raw_reads"), "raw_bytes": tr.get("raw_read_bytes")}
                name = f"counts.{side}.{prof}.rank{r}"
                out.append(result(name, PASS if e == o else FAIL, e, o,
                                  f"model of DLIO {run.release}: sampler + steps + prefetch + per-file dims (seed 10)"))
                if prof == "logvfd-rt0" or int(cfg.get("reader", {}).get("read_threads", 1)) == 0:
                    pos, bad = 0, []
                    for s in segs:
                        n = len(s["bytes"])
                        if got[pos:pos + n] != s["bytes"]:
                            bad.append(f"{s['phase']} epoch {s['epoch']}")
                        pos += n
                    out.append(result(f"{name}.per_phase", PASS if not bad and pos == len(got) else FAIL,
                                      len(segs), len(segs) - len(bad),
                                      "each phase/epoch segment reads the modelled sample sizes in order" if not bad
                                      else f"differs in {', '.join(bad[:4])}"))
    return out


def _stats(xs: list[float]) -> dict:
    n = len(xs)
    m = sum(xs) / n
    return {"n": n, "min": min(xs), "max": max(xs), "mean": m, "stdev": (sum((x - m) ** 2 for x in xs) / n) ** 0.5}


def check_runtime(run: Run) -> list[dict]:
    """Reported, not judged: wall time per phase and side (min/max/mean/stdev over repetitions) and the ratio."""
    out = []
    d, k = run.step("dlio.generate"), run.step("kernel.generate")
    if d and k and d.get("status") == "ok" and k.get("status") == "ok" and k["wall_s"] > 0:
        out.append(result("runtime.generate", PASS, round(d["wall_s"], 3), round(k["wall_s"], 3),
                          f"launch wall time DLIO {d['wall_s']:.2f} s, kernel {k['wall_s']:.2f} s, DLIO/kernel "
                          f"{d['wall_s'] / k['wall_s']:.2f}x (reported, not judged)", required=False))
    else:
        out.append(result("runtime.generate", SKIP, detail="a generation launch did not finish", required=False))
    t = run.table("timing.json")
    if not t or not t.get("dlio") or not t.get("kernel"):
        out.append(result("runtime.train", SKIP, detail="timing profile not run or a side failed", required=False))
        return out
    for key, label, what in (("wall_s", "runtime.train", "launch wall time"),
                             ("train_s", "runtime.train_in_program", "training epochs as each program times them")):
        ds = _stats([r["wall_s"] if key == "wall_s" else sum(r["train_epoch_s"]) for r in t["dlio"]])
        ks = _stats([r["wall_s"] if key == "wall_s" else sum(r["train_epoch_s"]) for r in t["kernel"]])
        ratio = ds["mean"] / ks["mean"] if ks["mean"] > 0 else float("nan")
        out.append(result(label, PASS, ds, ks, f"{what}: DLIO {ds['mean']:.2f} s (sd {ds['stdev']:.2f}), kernel "
                          f"{ks['mean']:.2f} s (sd {ks['stdev']:.2f}), DLIO/kernel {ratio:.2f}x over {ds['n']} run(s) "
                          "(reported, not judged)", required=False))
    return out


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
    (lambda call, f: "checkpoint" in (f or ""), "DLIO creates its checkpoint folder at start-up (checkpointing off)"),
    (lambda call, f: (f or "").endswith(".yaml") and ("/hydra/" in f or "/dlio-config/" in f),
     "DLIO's configuration (Hydra reads the workload YAML, writes the resolved config)"),
    (lambda call, f: f in ("<STDIN>", "<STDOUT>", "<STDERR>"), "standard streams (console output)"),
    (lambda call, f: re.fullmatch(r"/tmp/(tmp)?[a-z0-9_]{8}", f or "") is not None,
     "a Python library's temporary file (tempfile's random name under /tmp)"),
]
DATA_FIELDS = ("opens", "closes", "reads", "bytes", "accesses")


def classify(call: str, fname: str) -> str | None:
    for test, why in CLASSES:
        if test(call, fname):
            return why
    return None


def check_dftracer(run: Run) -> list[dict]:
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
    (run.tables / "files-dftracer.json").write_text(json.dumps({"rows": rows, "differences": diffs}, indent=1))
    first = next((x for x in diffs if x["field"] in DATA_FIELDS), None)
    out.append(result("dftracer.per_file", PASS if data and bad_files == 0 else FAIL, len(data), len(data) - bad_files,
                      f"{len(data)} data files: opens, closes, reads, bytes and (offset, size) accesses equal"
                      if data and not bad_files else
                      (f"{bad_files} files differ; first: {first}" if first else "no data-file reads traced")))
    out.append(explained("dftracer", [x for x in diffs if x["field"] not in DATA_FIELDS]))
    return out + similarity("similarity", d, k, "the data-file reads")


DARSHAN_FIELDS = ("opens", "reads", "bytes", "accesses")
DARSHAN_H5_FIELDS = ("h5f_opens", "h5d")


def check_darshan(run: Run) -> list[dict]:
    """Per data file: POSIX opens/reads/bytes, DXT (offset, size) accesses, H5F opens and per-dataset H5D opens/reads/
    bytes, equal on both sides; every other file a side touched listed and classified; the similarity score from
    the DXT segments."""
    skipped = run.manifest.get("skipped_profiles", {})
    d, k = run.table("darshan-dlio.json"), run.table("darshan-kernel.json")
    if d is None or k is None:
        why = skipped.get("darshan") or skipped.get("darshan.dlio") or skipped.get("darshan.kernel") or \
            "darshan profile not run (or a launch failed)"
        return [result("darshan.per_file", SKIP, detail=f"skipped: {why}")]
    df, kf = d["files"], k["files"]
    data = sorted(n for n in set(df) | set(kf) if (df.get(n, {}).get("reads", 0) + kf.get(n, {}).get("reads", 0)))
    h5 = "H5D" in d["modules"] and "H5D" in k["modules"]
    dxt = "DXT_POSIX" in d["modules"] and "DXT_POSIX" in k["modules"]
    fields = tuple(f for f in DARSHAN_FIELDS if dxt or f != "accesses") + (DARSHAN_H5_FIELDS if h5 else ())
    rows, diffs = [], []
    for n in data:
        for side, row in (("dlio", df.get(n)), ("kernel", kf.get(n))):
            if row is not None:
                h5d = row.get("h5d", {})
                rows.append({"file": n, "side": side, **{f: row[f] for f in ("opens", "reads", "bytes", "h5f_opens")},
                             "h5d_reads": sum(x["reads"] for x in h5d.values()),
                             "h5d_bytes": sum(x["bytes"] for x in h5d.values()),
                             "sizes": dict(Counter(int(x.split("+")[1]) for x in row["accesses"]
                                                   for _ in range(row["accesses"][x])))})
        for f in fields:
            x, y = df.get(n, {}).get(f), kf.get(n, {}).get(f)
            if x != y:
                diffs.append({"file": n, "field": f, "dlio": x, "kernel": y, "class": None})
    others: dict[str, list[int]] = {}
    for i, t in enumerate((d, k)):
        for o in t["other"]:
            others.setdefault(o["file"], [0, 0])[i] += o["opens"]
        for n, row in t["files"].items():  # a data-folder entry with no reads (probe, lock test)
            if n not in data:
                others.setdefault(n, [0, 0])[i] += row["opens"]
    for f, (x, y) in sorted(others.items()):
        if x != y:
            diffs.append({"file": f, "field": "opens", "dlio": x, "kernel": y, "class": classify("open", f)})
    columns = ["opens", "reads", "bytes"] + (["h5f_opens", "h5d_reads", "h5d_bytes"] if h5 else [])
    (run.tables / "files-darshan.json").write_text(json.dumps({"rows": rows, "differences": diffs, "columns": columns,
                                                              "modules": {"dlio": d["modules"],
                                                                          "kernel": k["modules"]}}, indent=1))
    bad = sorted({x["file"] for x in diffs if x["file"] in data})
    first = next((x for x in diffs if x["file"] in data), None)
    partial = d.get("partial", []) + k.get("partial", [])
    out = [result("darshan.per_file", PASS if data and not bad and not partial else FAIL, len(data),
                  len(data) - len(bad),
                  (f"{len(data)} data files equal in {', '.join(fields)}" if data and not bad else
                   f"{len(bad)} files differ; first: {first}" if first else "no data-file reads recorded")
                  + (f"; Darshan ran out of record memory (partial logs: {partial[:3]}): raise the limits of "
                     "profiles/darshan.py config_text()" if partial else "")
                  + ("" if h5 else "; H5F/H5D not compared: a side has no HDF5 module records")
                  + ("" if dxt else "; access offsets and sizes not compared: a side has no DXT records"))]
    out.append(explained("darshan", [x for x in diffs if x["file"] not in data]))
    return out + similarity("similarity.darshan", d, k, "the DXT read segments")


CHECKS = [check_dlio_version, check_steps, check_dataset, check_logvfd, check_counts, check_dftracer, check_darshan,
          check_runtime]


def validate(path: Path) -> dict:
    run = Run(path)
    checks = [c for fn in CHECKS for c in fn(run)]
    req = [c for c in checks if c["required"]]
    failed = [c["name"] for c in req if c["status"] == FAIL]
    verdict = "pass" if not failed and any(c["status"] == PASS for c in req) else "fail"
    return {"run": run.manifest["run_id"], "workload": run.manifest["workload"]["name"],
            "scale": run.manifest["workload"]["scale"], "ranks": run.ranks, "verdict": verdict,
            "failed": failed, "summary": dict(Counter(c["status"] for c in checks)), "checks": checks}
