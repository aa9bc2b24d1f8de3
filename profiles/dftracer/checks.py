"""The DFTracer profile's main check (run in validate): per data file and per checkpoint file, both sides'
POSIX calls compared, every other difference classified, the I/O features' similarity; DLIO's pre-warm prefetch
tolerated as the model bounds it.
"""
from __future__ import annotations

from collections import Counter

from profiles import FAIL, PASS, SIDES, SKIP, RunView, checkpoint_only, result
from profiles.dftracer.order import check_model_opens, check_order, check_workers
from profiles.features import access_sizes
from profiles.shared.files import Differences, FileRows, explained, similarity
from profiles.shared.paths import CHECKPOINT, DATA, classify, kernel_record, launch_roots
from profiles.shared.rules import dlio_rule, model_judges_kernel, raw_reader

DATA_FIELDS = ("opens", "closes", "reads", "bytes", "accesses")
# how the checks read a side's table: equal counts one shared object, without the per-file read time no check uses
# (a float per file: every row would be its own); at 10^6 files ~0.3 GB a side, not ~1.2 GB (common.rundir.loads_table)
SHARED = {"shared": True, "skip": ("read_time_s",)}
FILE_FIELDS = ("opens", "closes", "reads", "bytes")  # the per-file table's counters (tables/files-dftracer.json)


CKPT_FIELDS = ("opens", "closes", "writes", "bytes", "fsyncs", "write_sizes", "reads", "read_bytes", "read_sizes",
               "seeks", "fadvises")


def _classify_both(call: str, rel: str, roots: dict, kind: str, x: int, y: int) -> str | None:
    """A difference in a call's count on a path both sides name alike (relative to their data or checkpoint folder):
    explained, or not, as the side that made more of the call made it."""
    side = "kernel" if y > x else "dlio"
    return classify(call, rel, roots[side], kind)


def compare_checkpoints(run: RunView, d: dict | None, k: dict | None, diffs: list, roots: dict) -> tuple[list, dict]:
    """dftracer.checkpoints: per checkpoint file of the launch, opens, closes, writes, bytes, fsyncs, the multiset of
    write sizes, reads, bytes read, the multiset of read sizes, lseeks and posix_fadvise calls equal on both sides;
    other calls on them go to the classified differences, as do the calls on what neither side opened (the
    per-checkpoint folders)."""
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
                    diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                                  "class": _classify_both(call, n, roots, CHECKPOINT, x, y)})
            continue
        rows += [{"file": n, "side": side, **{f: row.get(f) for f in CKPT_FIELDS}}
                 for side, row in (("dlio", d.get(n)), ("kernel", k.get(n))) if row is not None]
        wrong = [f for f in CKPT_FIELDS if a.get(f) != b.get(f)]
        if wrong:
            bad.append({"file": n, "fields": {f: {"dlio": a.get(f), "kernel": b.get(f)} for f in wrong}})
        for call in sorted(set(a.get("calls", {})) | set(b.get("calls", {})) if a and b else ()):
            # a file only one side wrote fails dftracer.checkpoints itself; its other calls are not differences
            if call in ("open", "openat", "close", "write", "pwrite", "fsync", "fdatasync", "read", "pread", "lseek",
                        "posix_fadvise"):
                continue
            x, y = a.get("calls", {}).get(call, 0), b.get("calls", {}).get(call, 0)
            if x != y:
                diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                              "class": _classify_both(call, n, roots, CHECKPOINT, x, y)})
    if not rows:
        return rows, result("dftracer.checkpoints", FAIL,
                            detail="checkpointing is on but no checkpoint file was traced")
    n = len({r["file"] for r in rows})
    return rows, result("dftracer.checkpoints", PASS if not bad else FAIL, n, n - len(bad),
                        f"{n} checkpoint files: opens, closes, writes, bytes, fsyncs, write sizes, reads, bytes read, "
                        "read sizes, lseeks and posix_fadvise calls equal" if not bad
                        else f"{len(bad)} of {n} checkpoint files differ; first: {bad[0]}")


def check_dftracer(run: RunView) -> list[dict]:
    """System level: per data file, opens/closes/reads/bytes/access multiset equal on both sides; every other POSIX
    difference listed and classified; the DLIO paper's cosine similarity over I/O features, reported."""
    d, k = (run.table(f"dftracer-{side}.json", **SHARED) for side in SIDES)
    if d is None and k is not None and model_judges_kernel(run, "process_opens" in k):  # against the model
        return check_model_opens(run, None, k, None)
    if d is None or k is None:
        return [result("dftracer.per_file", SKIP, detail="dftracer profile not run (or a launch failed)")]
    out, diffs = [], Differences()
    files = FileRows(FILE_FIELDS)
    roots = {side: launch_roots(run, side, "dftracer") for side in SIDES}
    prewarm = prewarm_prefetch(run)
    extra: dict[str, int] = {}  # data file -> DLIO's opens beyond the kernel's (its pre-warm prefetch)
    df, kf = d["files"]["files"], k["files"]["files"]
    kernel_opens = _PerOpen(kf)
    names = sorted(set(df) | set(kf))
    data = [n for n in names if (df.get(n, {}).get("opens", 0) + kf.get(n, {}).get("opens", 0)) > 0
            and not kernel_record(n, df)]
    is_data = set(data)  # (a list's `in` made this check quadratic in the files: 100 s at 10^5)
    bad_files, raced = 0, Counter()
    for n in names:
        a, b = df.get(n), kf.get(n)
        files.add(n, *({**{f: row[f] for f in FILE_FIELDS}, "sizes": access_sizes(row["accesses"])}
                       if row is not None else None for row in (a, b)))
        if n not in is_data:  # a directory or a file only probed: explained below
            for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
                diffs.append({"file": n, "field": call, "dlio": (a or {}).get("calls", {}).get(call, 0),
                              "kernel": (b or {}).get("calls", {}).get(call, 0),
                              "class": _classify_both(call, n, roots, DATA, (a or {}).get("calls", {}).get(call, 0),
                                                      (b or {}).get("calls", {}).get(call, 0))})
            continue
        a, b = _fd_reuse(a, raced, "dlio"), _fd_reuse(b, raced, "kernel")
        bad_files += _compare_data_file(n, a, b, kernel_opens if prewarm else None, extra, diffs, roots)
    for side, t in (("dlio", d), ("kernel", k)):
        for o in t["files"]["other"]:
            diffs.append({"file": o["file"], "field": o["call"], "dlio": o["n"] if side == "dlio" else 0,
                          "kernel": o["n"] if side == "kernel" else 0,
                          "class": classify(o["call"], o["file"], roots[side])})
    ck_rows, ck_result = compare_checkpoints(run, d.get("checkpoints"), k.get("checkpoints"), diffs, roots)
    run.put_table("files-dftracer.json", files.table(differences=diffs, checkpoints=ck_rows))
    raw = raw_reader(run)  # DLIO reads whole files without HDF5: this is the level where equivalence is shown
    first = next((x for x in diffs if x["field"] in DATA_FIELDS), None)
    alone = sum(not kf.get(n, {}).get("opens") for n in extra)  # files only DLIO's pre-warm opened
    if checkpoint_only(run.cfg) and not data:
        out.append(result("dftracer.per_file", SKIP, detail="a checkpoint-only workload (workflow.train false): no "
                          "data file is read; its checkpoint files are compared in dftracer.checkpoints"))
    else:
        out.append(result("dftracer.per_file", PASS if data and bad_files == 0 else FAIL, len(data),
                          len(data) - bad_files,
                          f"{len(data)} data files: opens, closes, reads, bytes and (offset, size) accesses equal" +
                          (f" but for DLIO's pre-warm prefetch: {sum(extra.values())} more opens of {len(extra)} "
                           "files, each reading the file as the kernel's opens do" +
                           (f" ({alone} of them opened by DLIO's pre-warm alone, each open reading as the kernel's "
                            "read a file of that size)" if alone else "") +
                           " (counts.dftracer and dftracer.batches check which)"
                           if extra else "") +
                          ("; DLIO reads whole files without HDF5 (sample_read whole_file): the equivalence of the two "
                           "sides' I/O, in place of the Log VFD checks" if raw else "") +
                          (f"; closes beyond a file's opens, not counted (DLIO {raced['dlio']}, the kernel "
                           f"{raced['kernel']}): DFTracer maps a close to the name its fd number had, and another "
                           "thread can reuse the number while a slow close of the file runs" if raced else "")
                          if data and not bad_files else
                          (f"{bad_files} files differ; first: {first}" if first else "no data-file reads traced") +
                          "".join(f"; {side}: {len(t.get('empty_traces') or [])} trace files hold no event (processes "
                                  "that ended before their tracer flushed: their reads are missing here)"
                                  for side, t in (("DLIO", d), ("kernel", k)) if t.get("empty_traces"))))
    out.append(ck_result)
    if raw and not checkpoint_only(run.cfg):
        out += check_model_opens(run, d, k, prewarm)
        out += check_workers(run, d, k)
    elif not checkpoint_only(run.cfg):
        out += check_order(run, d, k)
    out.append(explained("dftracer", [x for x in diffs if x["field"] not in DATA_FIELDS], diffs.dropped))
    return out + similarity("similarity", d, k, "the data-file reads")


def _fd_reuse(row: dict | None, raced: Counter, side: str) -> dict | None:
    """A data file's row with its closes at most its opens (no side dups a data file's fd): DFTracer names a close by
    the file its fd number was opened on, and Linux frees the number when close(2) starts, so another thread of the
    process can open and close that number before the slow close returns and the tracer forgets the name (measured:
    DLIO 3.x, a reader's close of an npz file taking 31 ms, torch's thread closing fd 4 meanwhile). The excess is
    counted in raced[side]."""
    if row is None or row["closes"] <= row["opens"]:
        return row
    raced[side] += row["closes"] - row["opens"]
    return {**row, "closes": row["opens"]}


def prewarm_prefetch(run: RunView) -> dict | None:
    """The analytic model's reads when the reference DLIO's pre-warm may read more than the model's exact share
    (rule prewarm, MLCommons 3.x main.py:705-717, :809-820), else None (then every check is exact). next(iter(loader))
    hands prefetch_factor x workers batches to the spawned workers and deletes the iterator when the first batch
    arrives: worker 0 reads its whole share (the model's pre-warm samples, as the kernel does); how many of the other
    workers' batches are read depends on how far each spawned worker got (measured: +7 and +14 opens on the two ranks
    of one tiny unet3d run at 4 read threads). With 0 or 1 read threads there are no such batches: no tolerance."""
    if not dlio_rule(run, "prewarm") or int((run.cfg.get("reader") or {}).get("read_threads", 1)) == 0:
        return None
    reads = run.model_reads(run.cfg)
    if not any(seg.get("prefetch_samples") for segs in reads.values() for seg in segs):
        return None
    return reads


def _compare_data_file(n: str, a: dict | None, b: dict | None, prefetch: _PerOpen | None, extra: dict[str, int],
                       diffs: list, roots: dict) -> bool:
    """One data file's rows of both sides compared (False when they agree); DLIO's opens beyond the kernel's go to
    extra when its pre-warm may prefetch (prefetch: the kernel's per-open rows) and each reads as the kernel's do: of
    the same file, or, for a file the kernel never opened, of a file of that size. The pre-warm after an epoch
    iterates the loader reconfigured for the next one (MLCommons 3.x main.py:802, :811-818): its prefetched batches are
    next epoch's files, among them those no rank read this epoch (the remainder below a whole batch); the counts and
    batch checks say which files those may be."""
    wrong = [f for f in DATA_FIELDS if (a or {}).get(f) != (b or {}).get(f)]
    if wrong and prefetch is not None and (more := _whole_opens_more(a, b) or prefetch.alone(a, b)):
        extra[n], wrong = more, []
    for f in wrong:
        diffs.append({"file": n, "field": f, "dlio": (a or {}).get(f), "kernel": (b or {}).get(f), "class": None})
    if n in extra and not (b or {}).get("opens"):
        return False  # its other calls were matched with the opens (prefetch.alone)
    for call in sorted(set((a or {}).get("calls", {})) | set((b or {}).get("calls", {}))):
        if call in ("open", "openat", "close", "pread", "read"):
            continue
        x, y = (a or {}).get("calls", {}).get(call, 0), (b or {}).get("calls", {}).get(call, 0)
        # a file DLIO's pre-warm opened more often: its other calls in the same proportion
        if (x * b["opens"] != y * a["opens"]) if n in extra else x != y:
            diffs.append({"file": n, "field": call, "dlio": x, "kernel": y,
                          "class": _classify_both(call, n, roots, DATA, x, y)})
    return bool(wrong)


class _PerOpen:
    """The kernel's data-file rows per open (closes, reads, bytes, (offset, size) accesses and every call, each over
    the file's opens), collected when first asked: what one open of a file of a given size reads on the kernel's
    side (a whole-file read's accesses and bytes name the size)."""

    def __init__(self, kernel_files: dict):
        self.files, self.seen = kernel_files, None

    @staticmethod
    def of(row: dict) -> tuple | None:
        n = row.get("opens") or 0
        if not n or any(row[f] % n for f in ("closes", "reads", "bytes")) or \
                any(c % n for c in (*row["accesses"].values(), *row.get("calls", {}).values())):
            return None
        return (row["closes"] // n, row["reads"] // n, row["bytes"] // n,
                tuple(sorted((x, c // n) for x, c in row["accesses"].items())),
                tuple(sorted((x, c // n) for x, c in row.get("calls", {}).items())))

    def alone(self, a: dict | None, b: dict | None) -> int:
        """DLIO's opens of a file the kernel never opened, when every one of them reads as one open of the kernel's
        reads some file (of that size), else 0."""
        if not a or (b or {}).get("opens") or (mine := self.of(a)) is None:
            return 0
        if self.seen is None:
            self.seen = {p for row in self.files.values() if (p := self.of(row)) is not None}
        return a["opens"] if mine in self.seen else 0


def _whole_opens_more(a: dict | None, b: dict | None) -> int:
    """How many more opens DLIO's row has than the kernel's when every one of them does what the kernel's do (closes,
    reads, bytes and accesses in the same proportion), else 0."""
    if not a or not b or not b["opens"] or a["opens"] <= b["opens"]:
        return 0
    na, nb = a["opens"], b["opens"]
    same = all(a[f] * nb == b[f] * na for f in ("closes", "reads", "bytes")) and \
        set(a["accesses"]) == set(b["accesses"]) and all(a["accesses"][x] * nb == b["accesses"][x] * na
                                                          for x in a["accesses"])
    return na - nb if same else 0


def check_checkpoint_io(run: RunView) -> list[dict]:
    """counts.checkpoint_io.<side>: per checkpoint file, each side's traced POSIX calls (DFTracer: bytes written, write
    calls, the multiset of write sizes, fsyncs, bytes read back; for MLPerf v3.0's mlpstorage stream also opens,
    closes, read calls and the multiset of their sizes, lseeks and posix_fadvise calls) against the analytic model's
    (DLIO 3.x's streamed checkpoints: RunView.model_checkpoint_io, validate's model). Other releases:
    their torch.save containers are compared side against side (dftracer.checkpoints), not against the model."""
    want = run.model_checkpoint_io()
    if not want:
        return []
    out = []
    for side in SIDES:
        t = run.table(f"dftracer-{side}.json", **SHARED)
        if t is None or t.get("checkpoints") is None:
            out.append(result(f"counts.checkpoint_io.{side}", SKIP, detail="dftracer profile not run (or a launch "
                              "failed): no traced checkpoint calls"))
            continue
        bad = checkpoint_io_mismatches(want, t["checkpoints"])
        out.append(result(f"counts.checkpoint_io.{side}", FAIL if bad else PASS, len(want), len(want) - len(bad),
                          "; ".join(bad)[:800] if bad else
                          f"{len(want)} checkpoint files: {', '.join(next(iter(want.values()), {}))} as the model's")
                   | {"compared": ["model_checkpoints"] * bool(want)})
    return out


def checkpoint_io_mismatches(want: dict[str, dict], got: dict[str, dict]) -> list[str]:
    """Per checkpoint file (the model's, and every traced one with opens), each field of the model's row that the
    traced row does not equal: one line per differing file, empty when all agree."""
    bad = []
    for name in sorted(set(want) | {n for n, r in got.items() if r.get("opens")}):
        w, g = want.get(name), got.get(name) or {}
        if w is None:
            bad.append(f"{name}: not in the model")
            continue
        wrong = {f: (g.get(f), w[f]) for f in w if g.get(f) != w[f]}
        if wrong:
            bad.append(f"{name}: (traced, model) {wrong}")
    return bad
