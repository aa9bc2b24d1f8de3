"""The report's tables as rows, from the run (or paper) directory read by reports.rundir: the number rules every
table uses and one row builder per table. Nothing here draws, lays out or writes: the sections wrap these rows in
blocks (reports.sections, reports.paper) and reports.doc writes them."""

from __future__ import annotations

import math
from collections import Counter

import profiles
from common.cells import f1, f3, ms, ratio, value, yes  # noqa: F401  (the sections take them from here)
from common.rundir import SIDE_LABEL, SIDES, TABLES  # noqa: F401  (SIDE_LABEL: the sections take it from here)
from reports.rundir import RunData, timing_reps

# ---------------------------------------------------------------- the number rules (and common/cells.py)

def stats(xs: list[float]) -> dict | None:
    """min/max/mean and the population standard deviation (as validate's runtime checks), n values."""
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return None
    n = len(xs)
    m = sum(xs) / n
    return {"n": n, "min": min(xs), "max": max(xs), "mean": m, "stdev": math.sqrt(sum((x - m) ** 2 for x in xs) / n)}


def plain(v) -> str:
    """a configuration or version value as written in the file: 0.9, true, [1, 2], '' for empty"""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, list | tuple):
        return "[" + ", ".join(plain(x) for x in v) + "]"
    return str(v)


def vol_cell(vol: dict) -> str:
    """The kernel side's VOL connector stacks as its launches reported them (manifest vol.kernel_launches, collected
    from each output.json), grouped: "async > native: timing, logvfd (explicit async reads: logvfd-rt0); native:
    generate", then what was asked (VOL=) and DLIO's side."""
    by: dict[str, list[str]] = {}
    for step, got in (vol.get("kernel_launches") or {}).items():
        by.setdefault(" > ".join((got or {}).get("stack") or ["not reported"]), []).append(step)
    explicit = [s for s, g in (vol.get("kernel_launches") or {}).items() if g and g.get("async_prefetch")]
    parts = [f"{stack}: {', '.join(steps)}" for stack, steps in by.items()]
    return "; ".join(parts) + (f" (explicit async reads: {', '.join(explicit)})" if explicit else "") + \
        f"; asked VOL={vol.get('requested', 'native')}; DLIO: {vol.get('dlio', 'native')}"


def status_cell(status: str) -> str:
    return {"pass": "PASS", "fail": "FAIL", "skip": "skip"}.get(status, status)


def flatten(d: dict, prefix: str = "") -> list[tuple[str, object]]:
    """nested config -> [('dataset.record_length', 1048576), ...] in file order"""
    out: list[tuple[str, object]] = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += flatten(v, key + ".")
        else:
            out.append((key, v))
    return out


# ---------------------------------------------------------------- the verdict

# what each family of checks compares (the first part of a check's name; docs/validation.md, Reading the verdict)
FAMILIES = {
    "dlio": "which kernel entry stands for the installed DLIO, from what it was seen to do",
    "run": "the harness finished the run: status complete, no failed or missing launch",
    "steps": "every launch exited 0",
    "dataset": "the generated files: names, datasets, shapes, dtypes, layout; each side reads the other's",
    "nodes": "each side's ranks on the same nodes, and what each node's local rank 0 reported",
    "counts": "opens, reads and bytes per rank, and the checkpoint files, against the analytic model",
    "compute": "the emulated computation per rank: compute regions as many and as long as DLIO's (DFTracer)",
    "metrics": "each side's AU and throughput recomputed with DLIO's formula from its own step times; both AUs side "
               "by side (reported)",
    "similarity": "the DLIO paper's cosine similarity of I/O features (reported, not judged)",
    "runtime": "wall time per phase and side (reported, not judged)",
    "coverage": "a kernel-only run compared the kernel's data reads (and checkpoint files) with the analytic model",
}


def family_description(family: str) -> str:
    """What a family of checks compares: FAMILIES, or the profile of that name's own line (Profile.describes)."""
    if family in FAMILIES:
        return FAMILIES[family]
    try:
        return profiles.get(family).describes
    except KeyError:  # a family no profile is named after (coverage, a check of validate's own)
        return ""


def family_rows(checks: list[dict]) -> list[list[str]]:
    """One row per check family, in the verdict's order: what it compared and its pass/fail/skip counts."""
    fams: dict[str, Counter] = {}
    for c in checks:
        fams.setdefault(c["name"].split(".", 1)[0], Counter())[c["status"]] += 1
    return [[f"`{f}.*`", family_description(f), str(n["pass"]), str(n["fail"]), str(n["skip"])]
            for f, n in fams.items()]


def headline_ratios(checks: list[dict]) -> list[tuple[str, float]]:
    """DLIO's wall time over the kernel's, from the runtime.* checks (their expected: DLIO, observed: the kernel;
    a number, or {mean, ...} over the timing repetitions)."""
    out = []
    for name, what in (("runtime.generate", "generation"), ("runtime.train", "training launch"),
                       ("runtime.train_in_program", "training epochs as each program times them")):
        c = next((c for c in checks if c["name"] == name and c["status"] == "pass"), None)
        if c is None:
            continue
        d, k = (x.get("mean") if isinstance(x, dict) else x for x in (c.get("expected"), c.get("observed")))
        if isinstance(d, int | float) and isinstance(k, int | float) and k > 0:
            out.append((what, d / k))
    return out


# ---------------------------------------------------------------- runtime, metrics, metadata rate

def runtime_rows(run: RunData) -> list[dict]:
    """[{label, dlio: stats, kernel: stats}] per phase."""
    reps = timing_reps(run)
    rows = []
    gen = {s: stats([(run.step(f"{s}.generate") or {}).get("wall_s")]) for s in SIDES
           if (run.step(f"{s}.generate") or {}).get("status") == "ok"}
    rows.append({"label": "generation (launch wall)", **{s: gen.get(s) for s in SIDES}})
    rows.append({"label": "training (launch wall)", **{s: stats([r.get("wall_s") for r in reps[s]]) for s in SIDES}})
    rows.append({"label": "training, all epochs (in program)",
                 **{s: stats([sum(r.get("train_epoch_s") or []) for r in reps[s] if r.get("train_epoch_s")])
                    for s in SIDES}})
    n_ep = max([len(r.get("train_epoch_s") or []) for s in SIDES for r in reps[s]] + [0])
    for e in range(n_ep if n_ep > 1 else 0):       # one epoch: the row above already is that epoch
        rows.append({"label": f"training epoch {e + 1} (in program)",
                     **{s: stats([r["train_epoch_s"][e] for r in reps[s] if len(r.get("train_epoch_s") or []) > e])
                        for s in SIDES}})
    if any(r.get("eval_s") for s in SIDES for r in reps[s]):
        rows.append({"label": "evaluation, all (in program)",
                     **{s: stats([sum(r.get("eval_s") or []) for r in reps[s] if r.get("eval_s")]) for s in SIDES}})
    return rows


def metric_rows(run: RunData) -> list[dict]:
    reps = timing_reps(run)
    return [{"label": label, **{s: stats([r.get(key) for r in reps[s]]) for s in SIDES}}
            for key, label in (("au_percent", "AU % (training)"),
                               ("throughput_samples_per_s", "throughput samples/s (training)"))]

def metadata_sources() -> list[tuple[str, str]]:
    """(profile, label) of every profile whose tables carry the metadata rate (Profile.metadata_label), in order."""
    return [(n, p.metadata_label) for n, p in profiles.registry().items() if p.metadata_label]


def metadata_rows(run: RunData) -> tuple[list[list[str]], list[str]]:
    """Per profile that traced both sides' training (tables/<profile>-<side>.json "metadata", written at collection
    by profiles.features.metadata_rate): one row per epoch the trace marks, then all epochs; and the profiles whose
    tables predate the metadata rate."""
    rows, old = [], []
    for prof, label in metadata_sources():
        names = {s: f"{prof}-{s}.json" for s in SIDES}
        if not any(run.has_table(n) for n in names.values()):
            continue
        m = {s: run.table_part(names[s], "metadata") or {} for s in SIDES}
        if not any(m.values()):
            old.append(label)
            continue
        n_ep = max(len(m[s].get("per_epoch") or []) for s in SIDES)
        per = [(f"epoch {k + 1}", {s: (m[s].get("per_epoch") or [None] * n_ep)[k] if k < len(m[s].get("per_epoch")
                                   or []) else None for s in SIDES}) for k in range(n_ep)]
        epochs = {(m[s].get("all") or {}).get("epochs") for s in SIDES} - {None}
        per.append((f"all {'/'.join(map(str, sorted(epochs)))} epochs" if epochs else "all (epochs unknown)",
                    {s: m[s].get("all") for s in SIDES}))
        for what, r in per:
            cells = [label, what]
            for s in SIDES:
                x = r[s] or {}
                cells += [value(x.get("opens")), f1(x.get("opens_per_s")), ms(x.get("metadata_s_per_epoch"))]
            cells.append(ratio((r["dlio"] or {}).get("metadata_s"), (r["kernel"] or {}).get("metadata_s")))
            rows.append(cells)
    return rows, old


# ---------------------------------------------------------------- checkpoints

def checkpoint_rows(first: dict[str, list[dict]]) -> tuple[list[list[str]], list[dict]]:
    """Per checkpoint (epoch, step) of each side's first timing launch: the table's row and the figure's bars (MiB/s
    per side)."""
    keys = sorted({(c["epoch"], c["step"]) for s in SIDES for c in first[s]})
    by = {s: {(c["epoch"], c["step"]): c for c in first[s]} for s in SIDES}
    body, bars = [], []
    for e, st in keys:
        d, k = by["dlio"].get((e, st)), by["kernel"].get((e, st))
        rate = {s: (c["bytes"] / 2**20 / c["seconds"] if c and c["seconds"] > 0 else None)
                for s, c in (("dlio", d), ("kernel", k))}
        body.append([str(e), str(st), "/".join(str((c or {}).get("files", "-")) for c in (d, k)),
                     "/".join(f3((c or {}).get("bytes", 0) / 2**20) if c else "-" for c in (d, k)),
                     f3((d or {}).get("seconds")), f3((k or {}).get("seconds")), f3(rate["dlio"]), f3(rate["kernel"]),
                     ratio(rate["dlio"], rate["kernel"])])
        bars.append({"label": f"e{e} s{st}", **rate})
    return body, bars


# ---------------------------------------------------------------- per-file comparison, similarity

FILE_FIELDS = ("opens", "closes", "reads", "bytes")


def file_rows(tab: dict, fields: tuple = FILE_FIELDS) -> tuple[list[list[str]], list[dict]]:
    """per file the table lists (both sides in one row): the profile's counters (DFTracer: opens, closes, reads,
    bytes; Darshan: the table's own columns, H5F/H5D included), and whether every field and the transfer size
    histogram are equal; files that differ first. The scatter's points: the table's distinct (DLIO bytes, kernel
    bytes, identical) pairs with their file counts, or, in a table from before validate bounded its rows, one per
    listed file."""
    by: dict[str, dict] = {}
    for r in tab.get("rows", []):
        by.setdefault(r["file"], {})[r["side"]] = r
    rows, same_rows, points = [], [], []
    for f in sorted(by):
        d, k = by[f].get("dlio") or {}, by[f].get("kernel") or {}
        same = all(d.get(x) == k.get(x) for x in (*fields, "sizes"))
        cell = "only kernel" if not d else "only DLIO" if not k else yes(same)
        (same_rows if cell == "yes" else rows).append([f] + [value(side.get(x)) for x in fields for side in (d, k)]
                                                      + [cell])
        if "pairs" not in tab:
            points.append({"dlio": int(d.get("bytes") or 0), "kernel": int(k.get("bytes") or 0), "same": same,
                           "n": 1})
    points += [{"dlio": a, "kernel": b, "same": same, "n": n} for a, b, same, n in tab.get("pairs", [])]
    return rows + same_rows, points


def file_summary(tab: dict, rows: list[list[str]]) -> dict:
    """every file's counts (validate's summary; from the listed rows in a table from before it had one)"""
    s = tab.get("summary")
    if s:
        return s
    cells = Counter(r[-1] for r in rows)
    return {"files": len(rows), "identical": cells["yes"], "only_dlio": cells["only DLIO"],
            "only_kernel": cells["only kernel"], "differ": cells["NO"], "listed": len(rows)}


def similarity_score(c: dict) -> float | None:
    """validate records the score as observed_score (observed then holds the kernel's features); a bare number in
    observed is the score too"""
    if isinstance(c.get("observed_score"), int | float):
        return float(c["observed_score"])
    return float(c["observed"]) if isinstance(c.get("observed"), int | float) else None


# ---------------------------------------------------------------- the paper's strong scaling

def scaling_rows(rates: dict[int, list[dict | None]], phase: str) -> list[dict]:
    """per rank count (rates: rank count -> each repetition's rank_rates): the mean over successful repetitions of
    each rate, and n"""
    rows = []
    for n, reps in rates.items():
        reps = [r[phase] for r in reps if r and phase in r]
        row = {"ranks": n, "n": len(reps)}
        for key in ("raw_per_rank", "raw_total", "obs_per_rank", "obs_total", "meta_s", "raw_s"):
            s = stats([r[key] for r in reps if r[key] is not None])
            row[key] = s["mean"] if s else None
            row[key + "_sd"] = s["stdev"] if s else None
        rows.append(row)
    return rows


MLPERF_ROWS = (("checkpoint size (GiB)", "checkpoint_size_GiB"),
               ("save throughput, mean (GiB/s)", "save_checkpoint_io_mean_GiB_per_second"),
               ("save throughput, stdev (GiB/s)", "save_checkpoint_io_stdev_GiB_per_second"),
               ("save duration, mean (s)", "save_checkpoint_duration_mean_seconds"),
               ("load throughput, mean (GiB/s)", "load_checkpoint_io_mean_GiB_per_second"),
               ("load throughput, stdev (GiB/s)", "load_checkpoint_io_stdev_GiB_per_second"),
               ("load duration, mean (s)", "load_checkpoint_duration_mean_seconds"),
               ("gap write end -> read start (s)", "phase_gap_seconds"))


MLPERF_TRAIN_ROWS = (("AU, mean (%; first step excluded)", "train_au_mean_percentage"),
                     ("AU, stdev (%)", "train_au_stdev_percentage"),
                     ("AU threshold (%)", "train_au_expectation_percentage"),
                     ("throughput, mean (samples/s)", "train_throughput_mean_samples_per_second"),
                     ("throughput, stdev (samples/s)", "train_throughput_stdev_samples_per_second"),
                     ("I/O, mean (MB/s, DLIO's MiB)", "train_io_mean_MB_per_second"))


def mlperf_train_rows(first: dict) -> list[list[str]]:
    """The MLPerf training metrics of each side's first timing launch ({side: its "mlperf" block or None}): one row
    per metric (DLIO, kernel, DLIO/kernel), whether AU meets the threshold, and mlpstorage's dataset-size rule."""
    body = []
    for label, key in MLPERF_TRAIN_ROWS:
        d, k = ((first[s] or {}).get(key) for s in SIDES)
        body.append([label, f3(d), f3(k), ratio(d, k)])
    met = [(first[s] or {}).get("train_au_meet_expectation") or "-" for s in SIDES]
    body.append(["AU meets the threshold", *met, ""])
    rule = {s: (first[s] or {}).get("dataset_rule") or {} for s in SIDES}
    for label, key in (("dataset: files", "num_files_train"), ("dataset: minimum files (5x memory, 500 steps)",
                                                               "min_files")):
        d, k = (rule[s].get(key) for s in SIDES)
        body.append([label, f3(d), f3(k), ratio(d, k)])
    body.append(["dataset-size rule met", *("-" if rule[s].get("met") is None else ("yes" if rule[s]["met"] else "no")
                                             for s in SIDES), ""])
    return body


def mlperf_rows(first: dict) -> list[list[str]]:
    """The MLPerf checkpoint metrics of each side's first timing launch ({side: its "mlperf" block or None}):
    one row per metric (DLIO, kernel, DLIO/kernel), then whether the phase gap is within MLPerf's 30 s."""
    body = []
    for label, key in MLPERF_ROWS:
        d, k = ((first[s] or {}).get(key) for s in SIDES)
        body.append([label, f3(d), f3(k), ratio(d, k)])
    ok = {s: (first[s] or {}).get("phase_gap_within_rule") for s in SIDES}
    body.append(["gap within 30 s", *("-" if ok[s] is None else ("yes" if ok[s] else "no") for s in SIDES), ""])
    return body
