"""The sections of a run's report, in order: verdict, workload and environment, runtime (thesis Tables C.1-C.4) with
the metadata rate, checkpoints, what MLPerf would report, per-file comparison, similarity; with each profile's own
sections (Profile.report_sections: the Log VFD's records and counts after the workload section, DFTracer's timelines
after the MLPerf section, Darshan's own analyses after all) placed among them by `placed`. Each section is a function
RunData -> blocks: its rows come from reports.tables, its figures are declared as FigureSpecs and drawn by
reports.figures; reports.doc writes the blocks."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import profiles
from common.coreconfig import line as comparability_line
from common.rundir import REPORT, SIDES, TIMING, verdict_label
from reports import figures
from reports.doc import Block, Bullets, EndFold, Fold, Heading, Para, Table
from reports.rundir import RunData, timing_reps
from reports.tables import (
    FILE_FIELDS,
    SIDE_LABEL,
    checkpoint_rows,
    f3,
    family_rows,
    file_rows,
    file_summary,
    flatten,
    headline_ratios,
    metadata_rows,
    metric_rows,
    mlperf_rows,
    mlperf_train_rows,
    plain,
    ratio,
    runtime_rows,
    similarity_score,
    status_cell,
    value,
    vol_cell,
)

MAX_FILE_ROWS = 200


# ---------------------------------------------------------------- 1. verdict

def verdict_section(run: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Verdict", "verdict")]
    v = run.verdict
    if v is None:
        out.append(Para(f"This run was never validated (no `verdict.json`): run `python -m validate "
                        f"{run.path.name}` and render again. The sections below use the tables alone."))
        return out
    s = v.get("summary", {})
    out.append(Para(f"**Verdict: {verdict_label(v)}** for workload `{v.get('workload')}` at scale "
                    f"`{v.get('scale')}` with {v.get('ranks')} ranks: {s.get('pass', 0)} pass, {s.get('fail', 0)} "
                    f"fail, {s.get('skip', 0)} skip. Only required checks decide the verdict; `runtime.*` checks are "
                    "reported, not judged."))
    if v.get("comparability"):  # MLPerf Storage's core-config hash and class (common/coreconfig.py), not a check
        out.append(Para(comparability_line(v["comparability"]) + "."))
    if v.get("mutant"):
        out.append(Para(f"**Mutant injected**: this run's kernel ran with the mutant `{v['mutant']}` (`H5DLIO_MUTATE`, "
                        "`bench/src/mutate.c`): an attack on the validator, not a measurement"
                        + ("; no check caught it (a validator bug)." if v["verdict"] == "pass" else ".")))
    if v.get("not_compared"):
        out.append(Para("**Not compared** in this run (no passing check compared it; the verdict says nothing about "
                        "it):"))
        out.append(Bullets([f"{x['what']}: needs {x['needs']}" for x in v["not_compared"]]))
    if v.get("failed"):
        out.append(Para("Failed required checks: " + ", ".join(f"`{n}`" for n in v["failed"]) + "."))
    ratios = headline_ratios(v["checks"])
    if ratios:
        out.append(Para("**DLIO / kernel wall time**: " + ", ".join(f"{what} {r:.1f}x" for what, r in ratios) + "."))
    out.append(Table("tbl-families", ["check family", "what it compared", "pass", "fail", "skip"],
                     family_rows(v["checks"]), "The checks of verdict.json by family (every check, with its detail, "
                     "below)", [False, False, True, True, True]))
    rows = [[c["name"], status_cell(c["status"]), "required" if c.get("required", True) else "info",
             value(c.get("expected")), value(c.get("observed")), str(c.get("detail") or "")] for c in v["checks"]]
    out.append(Fold(f"Every check of verdict.json, with its detail ({len(rows)})"))
    out.append(Table("tbl-verdict", ["check", "status", "required", "expected", "observed", "detail"], rows,
                     "Every check of verdict.json, in its order"))
    out.append(EndFold())
    return out


# ---------------------------------------------------------------- 2. workload and environment

def workload_section(run: RunData) -> list[Block]:
    m = run.manifest
    wl = m.get("workload", {})
    out: list[Block] = [Heading(2, "Workload and environment", "workload-and-environment")]
    info = [("run", m.get("run_id", run.path.name)), ("created", m.get("created")), ("status", m.get("status")),
            ("workload", wl.get("name")), ("scale", wl.get("scale")), ("DLIO base config", wl.get("base")),
            ("ranks per side", m.get("ranks")), ("launcher", m.get("launcher")),
            ("profiles", ", ".join(m.get("profiles", []))), ("timing repetitions", m.get("repeat", 1)),
            ("extra kernel settings", ", ".join(m.get("kernel_sets", [])) or "none"),
            ("failed steps", ", ".join(m.get("failed_steps", [])) or "none")]
    if isinstance(m.get("dlio"), dict):          # the reference DLIO release and the kernel entry standing for it
        # (its probed rules next to the entry's are the dlio.version check's detail, in the checks table)
        info.append(("DLIO reference", value({k: v for k, v in m["dlio"].items()
                                              if not isinstance(v, dict | list)})))
    if isinstance(m.get("vol"), dict) and m["vol"].get("kernel_launches") is not None:
        info.append(("kernel VOL connector stack (each launch's output.json)", vol_cell(m["vol"])))
    out.append(Table("tbl-run", ["item", "value"], [[k, value(x)] for k, x in info], "The run (manifest.json)"))
    out.append(Para(f"Both sides ran one merged workload: DLIO's bundled `{wl.get('base')}` overlaid with "
                    f"`reference-configs/{wl.get('name')}.yaml` at scale `{wl.get('scale')}`:"))
    out.append(Table("tbl-config", ["key", "value"], [[k, plain(x)] for k, x in flatten(run.config)],
                     "The merged workload (manifest.json: workload.config)"))
    vers = m.get("versions", {})
    out.append(Table("tbl-versions", ["component", "version"], [[k, plain(x)] for k, x in vers.items()],
                     "Versions and host (manifest.json: versions)"))
    rows = [[name, rec.get("status", "?"), value(rec.get("rc")), f3(rec.get("wall_s"))]
            for name, rec in m.get("steps", {}).items()]
    out.append(Table("tbl-steps", ["launch", "status", "exit code", "wall s"], rows,
                     "Every launch, in the order it ran", [False, False, True, True]))
    return out


# ---------------------------------------------------------------- 5. runtime (thesis Tables C.1-C.4)


def stat_table(tid: str, rows: list[dict], caption: str, first: str = "phase") -> Table:
    cols = [first, "n"] + [f"{SIDE_LABEL[s]} {k}" for s in SIDES for k in ("min", "max", "mean", "stdev")] + \
        ["DLIO/kernel"]
    body = []
    for r in rows:
        n = "/".join(str((r[s] or {}).get("n", 0)) for s in SIDES)
        cells = [f3((r[s] or {}).get(k)) for s in SIDES for k in ("min", "max", "mean", "stdev")]
        body.append([r["label"], n] + cells + [ratio((r["dlio"] or {}).get("mean"), (r["kernel"] or {}).get("mean"))])
    return Table(tid, cols, body, caption, [False] + [True] * (len(cols) - 1))


def timing_stack_note(run: RunData, reps: dict) -> str:
    """Under VOL=: the connector stack the kernel's timing launches ran on, as each launch's output.json says HDF5
    reported it (manifest vol.kernel_launches), never the request; so whether the kernel's AU and epoch times of this
    section are under the connector. "" for a run without the vol block, or native asked and reported everywhere."""
    vol = run.manifest.get("vol")
    launches = vol.get("kernel_launches") if isinstance(vol, dict) else None
    steps = [r["step"].split(".", 1)[1] for r in reps["kernel"] if r.get("step")]
    if not launches or not steps:
        return ""
    stack = {s: " > ".join((launches.get(s) or {}).get("stack") or ["not reported"]) for s in steps}
    under = [s for s, g in launches.items() if g and (g.get("stack") or ["native"]) != ["native"]]
    asked = vol.get("requested", "native")
    if asked == "native" and not under:
        return ""
    by = "; ".join(f"`{st}` ({', '.join(s for s in steps if stack[s] == st)})" for st in dict.fromkeys(stack.values()))
    txt = (f"Asked VOL={asked}: the kernel's timing launch(es) ran on {by} (HDF5's answer in each launch's "
           f"output.json); DLIO's on {vol.get('dlio', 'native')}. ")
    if all(st == "native" for st in stack.values()):
        return txt + ("So no kernel time, AU or throughput below is under the connector: the launches HDF5 ran under "
                      f"it are {', '.join(under) or 'none'} (profiled, not timed; VOL=async-prefetch leaves the "
                      "launches with reader processes native: docs/vol.md).")
    return txt + "The kernel's epoch times, AU and throughput below are under that stack, beside DLIO's on native."


def runtime_section(run: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Runtime per phase (thesis Tables C.1-C.4)", "runtime")]
    rows = runtime_rows(run)
    reps = timing_reps(run)
    if not any(reps[s] for s in SIDES) and not any(r["dlio"] or r["kernel"] for r in rows):
        writer = next(p for p in profiles.registry().values() if TIMING in p.writes)
        out.append(Para(f"No timing: the {writer.name} profile did not run (" + run.absent_reason(writer.name) + ")."))
        return out + metadata_blocks(run)
    n = {s: len(reps[s]) for s in SIDES}
    out.append(Para(f"Seconds over {n['dlio']} DLIO and {n['kernel']} kernel training launch(es) (`REPEAT=N` "
                    "repeats them; generation runs once per side). Launch wall time includes start-up (DLIO's "
                    "interpreter, TensorFlow and PyTorch imports); in-program times are each program's own epoch "
                    "timers. min / max / mean / standard deviation (population, as validate's runtime checks); "
                    "n = values per side (DLIO/kernel)."))
    note = timing_stack_note(run, reps)
    if note:
        out.append(Para(note))
    out.append(stat_table("tbl-runtime", rows, "Runtime in seconds per phase and side, DLIO/kernel ratio of means"))
    shown = [r for r in rows if r["dlio"] or r["kernel"]]
    out.append(figures.FigureSpec(
        "runtime", "Runtime per phase: mean of the repetitions, error bars one standard deviation, DLIO/kernel "
        "ratio above each pair (log scale)", lambda: figures.runtime_bars(shown)).render())
    mrows = metric_rows(run)
    if any(r["dlio"] or r["kernel"] for r in mrows):
        out.append(stat_table("tbl-metrics", mrows, "DLIO's training metrics as each program reports them "
                              "(kernel: computed as DLIO computes them, from measured compute times)", "metric"))
    return out + metadata_blocks(run)


def checkpoint_section(run: RunData) -> list[Block]:
    """Each checkpoint of the first timing launch per side: files, bytes, seconds and MiB/s as each program times it,
    and a figure of the write throughput per checkpoint."""
    reps = timing_reps(run)
    first = {s: (reps[s][0].get("checkpoints") or []) if reps[s] else [] for s in SIDES}
    if not any(first.values()):
        return []
    out: list[Block] = [Heading(2, "Checkpoints", "checkpoints")]
    out.append(Para("The checkpoints of each side's first timing launch, as each program times them: the kernel "
                    "from the first writing rank's first open to the last one's rename (output.json), DLIO from rank "
                    "0's start_ckpt to end_ckpt stamps (per_epoch_stats.json); files and bytes from each launch's "
                    "checkpoint folder. Which files and how many write calls: `dftracer.checkpoints` and "
                    "`counts.checkpoints` in the verdict."))
    body, bars = checkpoint_rows(first)
    out.append(Table("tbl-checkpoints", ["epoch", "step", "files DLIO/kernel", "MiB DLIO/kernel", "DLIO s",
                                         "kernel s", "DLIO MiB/s", "kernel MiB/s", "DLIO/kernel"], body,
                     "Checkpoint writes per checkpoint and side", [False] + [True] * 8))
    out.append(figures.FigureSpec("checkpoints", "Checkpoint write throughput per checkpoint, DLIO against kernel "
                                  "(MiB/s; DLIO/kernel above each pair)",
                                  lambda: figures.checkpoint_bars(bars)).render())
    return out


def mlperf_section(run: RunData) -> list[Block]:
    """What MLPerf Storage v3.0 would report for a DLIO 3.x workload, from each side's first timing launch (the
    kernel's output.json "mlperf", DLIO's summary.json): checkpoint rows for a checkpoint-only launch, training rows
    when the kernel computed them (it does for its 3.x entry only: DLIO 2.x computes AU and throughput otherwise, and
    its summary.json is not what MLPerf v3.0 reads). Not a submission."""
    reps = timing_reps(run)
    first = {s: (reps[s][0].get("mlperf") if reps[s] else None) for s in SIDES}
    ckpt = any((first[s] or {}).get("checkpoint_size_GiB") is not None for s in SIDES)
    train = (first["kernel"] or {}).get("train_au_mean_percentage") is not None
    if not ckpt and not train:
        return []
    out: list[Block] = [Heading(2, "What MLPerf would report (not a submission)", "mlperf")]
    if train:
        out.append(Para("MLPerf Storage v3.0's training numbers as DLIO 3.x computes them (utils/statscounter.py: per "
                        "rank AU = the compute of steps 2.. over the epoch's time less the first step, throughput = "
                        "steps 2.. over that time x batch; AU the ranks' mean, throughput their sum; mean and stdev "
                        "over the epochs) and mlpstorage's dataset-size rule (files >= max(500 steps per epoch, 5x the "
                        "clients' memory)), from each side's first timing launch. Tiny scale, a shared machine, page "
                        "cache not dropped: not a submission, not a result."))
        out.append(Table("tbl-mlperf-train", ["metric", "DLIO", "kernel", "DLIO/kernel"], mlperf_train_rows(first),
                         "MLPerf Storage v3.0 training metrics per side (not a submission)",
                         [False, True, True, True]))
    if ckpt:
        out.append(Para("MLPerf Storage v3.0's checkpoint numbers as DLIO 3.x computes them (utils/statscounter.py: "
                        "per checkpoint the size over all ranks divided by rank 0's duration; mean and stdev over the "
                        "checkpoints), from each side's first timing launch, and the gap between the end of the write "
                        "phase and the start of the read phase against MLPerf's 30 s rule (one launch here: MLPerf's "
                        "two invocations add a launch's start-up to it). Tiny scale, a shared machine, page cache not "
                        "dropped: not a submission, not a result."))
        out.append(Table("tbl-mlperf", ["metric", "DLIO", "kernel", "DLIO/kernel"], mlperf_rows(first),
                         "MLPerf Storage v3.0 checkpoint metrics per side (not a submission)",
                         [False, True, True, True]))
    return out


def metadata_blocks(run: RunData) -> list[Block]:
    """The metadata rate next to the data rate: opens per second of epoch time and metadata time per epoch, per side,
    from the traces the run has (profiles.features.metadata_rate is its one definition)."""
    rows, old = metadata_rows(run)
    out: list[Block] = []
    if rows:
        out.append(Para("Metadata rate of the training epochs, per side, from each trace of the run: opens of the "
                        "files under the data folder per second of epoch wall time, and metadata time per epoch (the "
                        "summed duration of the calls on those files that move no data: open, close, the stat "
                        "family, seek; all processes; in milliseconds). DFTracer: the POSIX events, each epoch "
                        "bounded by the epoch regions of all ranks (DLIO's `DLIOBenchmark._train`, the kernel's "
                        "`train_epoch`). Darshan: `POSIX_OPENS` and `POSIX_F_META_TIME` of those files over the "
                        "epochs as the program timed them (Darshan has no epoch marks: per epoch = total / epochs)."))
        cols = ["source", "epochs"] + [f"{SIDE_LABEL[s]} {k}" for s in SIDES for k in
                                       ("opens", "opens/s", "metadata ms/epoch")] + ["DLIO/kernel metadata time"]
        out.append(Table("tbl-metadata", cols, rows, "Metadata rate per side: opens per second and metadata time "
                         "per epoch (tables/<profile>-<side>.json: metadata)", [False, False] + [True] * 7))
    for label in old:
        out.append(Para(f"No metadata rate from {label}: this run's {label} tables were collected before h5dlio "
                        "recorded it."))
    return out


# ---------------------------------------------------------------- 7. per-file comparison


def per_file_profiles() -> list[profiles.Profile]:
    """the system-level profiles this section's absent reason names: those whose "<name>.per_file" row compares
    the POSIX I/O on the data files (a claim of that row, and posix_data in their covers)"""
    return [p for p in profiles.registry().values()
            if "posix_data" in p.covers and any(pat == f"{p.name}.per_file" for pat, _ in p.claims)]


def files_section(run: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Per-file system-level comparison", "per-file-comparison")]
    names = run.table_names("files-")
    if not names:
        out.append(Para("No per-file comparison (validate writes `tables/files-<profile>.json` from the system-level "
                        "profiles): " + "; ".join(f"{p.label or p.name} {run.absent_reason(p.name)}"
                                                  for p in per_file_profiles()) + "."))
        return out
    for name in names:
        prof = name[len("files-"):-len(".json")]
        tab = run.table(name) or {}
        fields = tuple(tab.get("columns") or FILE_FIELDS)
        rows, points = file_rows(tab, fields)
        s = file_summary(tab, rows)
        diffs = tab.get("differences", [])
        unexplained = sum(d.get("class") is None for d in diffs)
        total = len(diffs) + int(tab.get("differences_dropped") or 0)
        out.append(Heading(3, f"`{prof}`", f"files-{prof}"))
        out.append(Para(f"{s['files']} files and folders under the data folders, {s['identical']} identical on both "
                        f"sides ({', '.join(fields)}, transfer sizes), {s['only_dlio'] + s['only_kernel']} touched by "
                        f"one side only; {total} differences in all, "
                        f"{unexplained} without a class (a data-file difference or an unexplained call)."
                        + (f" Listed: {s['listed']} files, every one that is not identical first (up to 2,000); each "
                           f"side's counters for every file are in tables/{prof}-dlio.json and "
                           f"tables/{prof}-kernel.json." if s["listed"] < s["files"] else "")))
        if points:
            out.append(figures.FigureSpec(f"files-{prof}", f"Bytes read per data file, DLIO against kernel ({prof}); "
                                          "on the diagonal both sides read the same", lambda p=points:
                                          figures.files_scatter(p)).render())
        cols = ["file"] + [f"{s} {x}" for x in fields for s in ("DLIO", "kernel")] + ["same"]
        more = len(rows) - MAX_FILE_ROWS
        out.append(Table(f"tbl-files-{prof}", cols, rows[:MAX_FILE_ROWS], f"Per data file ({prof})"
                         + (f"; first {MAX_FILE_ROWS} listed, {more} more in tables/{name}" if more > 0 else ""),
                         [False] + [True] * (2 * len(fields)) + [False]))
        out += _difference_tables(prof, tab, total)
    return out


def _difference_tables(prof: str, tab: dict, total: int) -> list[Block]:
    """the differences of a per-file comparison by class (every one, from validate's counts where it listed only
    the first of each call and class) and the listed ones"""
    diffs = tab.get("differences", [])
    cls: Counter = Counter()
    if "difference_counts" in tab:
        for _field, c, n in tab["difference_counts"]:
            cls[str(c)] += int(n)
        cls["UNEXPLAINED"] += sum(d.get("class") is None for d in diffs)
        cls = +cls
    else:
        cls = Counter(str(d.get("class") or "UNEXPLAINED") for d in diffs)
    if not cls:
        return []
    drows = [[str(d.get("file")), str(d.get("field")), value(d.get("dlio")), value(d.get("kernel")),
              str(d.get("class") or "UNEXPLAINED")] for d in diffs[:MAX_FILE_ROWS]]
    listed = len(diffs) < total
    return [Table(f"tbl-files-classes-{prof}", ["class", "differences"], [[k, str(n)] for k, n in cls.most_common()],
                  f"Differences by class ({prof})", [False, True]),
            Table(f"tbl-files-diff-{prof}", ["file", "field", "DLIO", "kernel", "class"], drows,
                  f"Every difference and its class ({prof})" if not listed and len(diffs) <= MAX_FILE_ROWS else
                  f"Differences and their classes ({prof}): the first {min(len(diffs), MAX_FILE_ROWS)} of {total}"
                  + (" (validate lists every unexplained one and the first 20 of each call and class)"
                     if listed else ""))]


# ---------------------------------------------------------------- 8. similarity


def similarity_section(run: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Similarity score", "similarity")]
    sims = [(name, p.similarity) for name, p in profiles.registry().items() if p.similarity]  # Profile.similarity
    found = [(s.row, s.source, run.check(s.row)) for _, s in sims if run.check(s.row) is not None]
    if not found:
        out.append(Para("No similarity score: " + ("the run was not validated" if run.verdict is None else
                        "the verdict has no `similarity` check (it needs "
                        + ", or ".join(f"{s.needs}: {run.absent_reason(name)}" for name, s in sims) + ")") + "."))
        return out
    for name, src, c in found:
        score = similarity_score(c)
        tid = "tbl-" + name.replace(".", "-")
        out.append(Para(f"Cosine similarity of the two sides' I/O feature vectors (as in the DLIO paper), from the "
                        f"{src}: **{value(score)}** ({status_cell(c['status'])}"
                        f"{'' if c.get('required', True) else ', reported, not judged'}). 1 means the same I/O."))
        exp, obs = c.get("expected"), c.get("observed")
        if isinstance(exp, dict) and isinstance(obs, dict):
            rows = [[k, value(exp.get(k)), value(obs.get(k))] for k in sorted(set(exp) | set(obs))]
            out.append(Table(tid, ["feature", "DLIO", "kernel"], rows,
                             f"The score's inputs ({src}): each side's I/O features (the check's expected = DLIO, "
                             "observed = kernel)", [False, True, True]))
        else:
            rows = [[k, value(x)] for k, x in flatten(exp)] if isinstance(exp, dict) else [["expected", value(exp)]]
            out.append(Table(tid, ["input", "value"], rows, f"The score's inputs ({src}; the check's expected)"))
        if c.get("detail"):
            out.append(Bullets([str(c["detail"])]))
    return out


# the report's own sections, in order, by the name a profile's section is placed after (profiles.ReportSection.after)
# ---------------------------------------------------------------- earlier runs on this storage (a run store's)


def _href(run: RunData, target: Path) -> str:
    """A link from the report's folder to another run's report (its report.html, else its folder)."""
    page = target / REPORT / "report.html"
    dest = page if page.exists() else target
    return quote(os.path.relpath(dest, run.report_dir or run.path / REPORT))


def predecessors_section(run: RunData) -> list[Block]:
    """The earlier runs of the workload on this storage that the run store held when the pipeline kept this run
    (predecessors.json, store/predecessors.py); nothing for a run never kept in a store."""
    p = run.predecessors
    if p is None:
        return []
    out: list[Block] = [Heading(2, "Earlier runs on this storage", "predecessors")]
    where = f"`{p.get('storage')}` ({p.get('fs_type') or 'file system unknown'})"
    if not p.get("runs"):
        return out + [Para(f"None: this is the first run of `{p.get('workload')}` on {where} in the run store "
                           f"`{p.get('store')}`.")]
    out.append(Para(f"The newest {len(p['runs'])} runs of `{p.get('workload')}` on {where} that the run store "
                    f"`{p.get('store')}` held when this run was kept, newest first (means over their repetitions; "
                    "\"same config\": the configuration hashes as this run's). Compare one with this run: `make runs "
                    f"ARGS=\"compare <ID> {run.manifest.get('run_id', run.path.name)}\"` (docs/runs.md)."))
    rows = [[str(r["id"]), f"[{r['name']}]({_href(run, Path(r['source']))})" if r.get("source") else r["name"],
             str(r.get("date")), str(r.get("dlio")), str(r.get("ranks")), "yes" if r.get("same_config") else "NO",
             str(r.get("verdict") or "-")] + [f3(r["means"].get(k)) for k in
                                               ("kernel.au_percent", "kernel.throughput_samples_per_s",
                                                "kernel.train_s")] for r in p["runs"]]
    out.append(Table("tbl-predecessors", ["ID", "run", "date", "DLIO", "ranks", "same config", "verdict",
                                          "kernel AU %", "kernel samples/s", "kernel train s"], rows,
                     "Earlier runs on this storage (the run store's)", [True] + [False] * 3 + [True, False, False]
                     + [True] * 3))
    return out


SECTIONS: dict[str, profiles.Section] = {
    "verdict": verdict_section, "workload": workload_section, "runtime": runtime_section,
    "checkpoints": checkpoint_section, "mlperf": mlperf_section, "files": files_section,
    "similarity": similarity_section, "predecessors": predecessors_section}


def placed(own: dict[str, profiles.Section], declared: list[tuple[str, profiles.ReportSection]]) -> list:
    """The report's sections in order: each of its own (own: SECTIONS), then the profiles' sections placed after it
    (declared: (profile, ReportSection) in the profiles' order), then those placed after all of them. A place that is
    not one of own's names is refused, naming the profile and the place."""
    at: dict[str, list] = {name: [] for name in [*own, ""]}
    for prof, rs in declared:
        if rs.after not in at:
            raise ValueError(f"profile {prof}: report section {getattr(rs.section, '__name__', rs.section)} placed "
                             f"after {rs.after!r}, not a section of the report ({', '.join(own)})")
        at[rs.after].append(rs.section)
    return [fn for name, sec in own.items() for fn in [sec, *at[name]]] + at[""]


def build(run: RunData) -> tuple[str, list[Block]]:
    wl = run.manifest.get("workload", {})
    blocks: list[Block] = [Para(
        f"Kernel (h5dlio) against DLIO Benchmark for workload `{wl.get('name')}` at scale `{wl.get('scale')}`, "
        f"{run.manifest.get('ranks')} ranks per side; run `{run.manifest.get('run_id', run.path.name)}`. "
        f"Rendered from the run directory alone; render again with `python -m reports <run directory>`.")]
    declared = [(name, rs) for name, p in profiles.registry().items() for rs in p.report_sections]
    for fn in placed(SECTIONS, declared):
        blocks += fn(run)
    return f"h5dlio report: {run.manifest.get('run_id', run.path.name)}", blocks
