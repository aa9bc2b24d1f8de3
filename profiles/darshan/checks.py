"""The Darshan checks validate runs (fn(run: RunView) -> rows): both sides' tables per data file and per checkpoint
file (darshan.per_file, darshan.checkpoints, darshan.explained, the similarity of the DXT segments), or a
kernel-only run's table against the analytic model (counts.darshan.kernel)."""
from __future__ import annotations

from collections import Counter

from profiles import FAIL, PASS, SIDES, SKIP, RunView, checkpoint_only, result
from profiles.features import access_sizes
from profiles.shared.files import FileRows, explained, similarity, train_file_index
from profiles.shared.paths import DATA, GEN_RECORD, classify, kernel_record, launch_roots
from profiles.shared.rules import model_judges_kernel


def _other_differences(run: RunView, d: dict, k: dict, data: list, diffs: list) -> None:
    """Every difference outside the compared data files and checkpoint files, classified by what its path is in
    each side's launch (profiles.shared.paths.where): other files' opens, data files opened without a read (never
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
                     "profiles/darshan/runtime.py config_text()" if partial else "")
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
                  "profiles/darshan/runtime.py config_text()" * bool(partial),
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

