"""Validation at scale (issue 26 item 2): what parsing the traces, `python -m validate` and `python -m reports` cost
against the number of data files and trace records, for this tree and (optionally) a baseline revision.

The run directories are synthetic, made from real traces committed under tests/data by replaying their data-file
records with distinct file names (nothing is invented but the names and a 1 us shift of each copy's timestamps):
- DFTracer: tests/data/dftracer (DLIO 2.0.0 and the kernel, tiny unet3d: 28 one-sample files, 2 ranks, 4 reader
  processes, 2 epochs). Every event on a data file (img_<i>_of_28.hdf5) is written k = files/28 times, copy j naming
  file i + 28 j (img_<i+28j>_of_<files>.hdf5) at ts + j us; every other event (ranks, epochs, other files) once.
  Each side then opens `files` data files, each twice (2 epochs), with the template's per-open calls.
- HDF5 Log VFD: tests/data/logvfd (dlio-pytorch-rt0 and kernel-rt0, 2 ranks, 12 opens per rank): each rank's
  stderr written k = files/12 times, so each rank has ~`files` opens (per-open blocks), as many as its DFTracer
  trace.
The run's manifest, workload and other tables are tests/data/run-tiny's, with dataset.num_files_train set to
`files` (so the analytic model is computed at that size too). The model's checks fail on such a run (its order is the
replay's, not DLIO's sampler's): what is measured is the cost, and that the verdict (every check's status and
detail) is the same with either tree. Each step runs in its own process under /usr/bin/time -v (wall time, peak
RSS) with an address-space limit (`mem_limit`, so a parser that holds whole traces fails here instead of taking the
shared machine's memory); a step over it is recorded as such."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.perf.common import REPO, Context, load_snapshot, table, wait_for_quiet
from common.rundir import REPORT, TABLES, VERDICT, RunDir

DATA = REPO / "tests" / "data"
RUN_TINY = DATA / "run-tiny"
# the DFTracer fixture's run root, and the run-tiny root its paths are moved to (the manifest's launches)
TRACE_ROOT, RUN_ROOT = "/tmp/hruns/unet3d-tiny-20261122-010153", "/tmp/h5runs2/unet3d-tiny-20261122-010853"
TEMPLATE_FILES = 28
LOGVFD_OPENS = 12  # per rank in tests/data/logvfd/{dlio-pytorch-rt0,kernel-rt0}
FILE_RE = re.compile(r"img_(\d+)_of_28\.hdf5")
TS_RE = re.compile(r'"ts":"?(\d+)"?')

# The two profiles this benchmark parses, by name: every name it spells of them (its synthetic run's raw/<name>
# folders, the tables/<name>-<side>.json each tree's parser writes and validate reads, the modules its parse scripts
# import, the results' parse.<name>.<side> steps) is made from this one table. Literal, not the registry's: the same
# steps run on saved copies of older revisions (export_tree), which have no registry or not this one; for this tree,
# measure() checks its registry still knows both (this_tree_knows).
LOGVFD, DFTRACER = "logvfd", "dftracer"
LOGVFD_RT0 = f"{LOGVFD}-rt0"                   # the read_threads=0 launch's Log VFD tables: the same replayed trace
DFTRACER_TIMELINE = f"{DFTRACER}-timeline"     # the DFTracer parse's timeline, a table of its own
FILES_DFTRACER = f"files-{DFTRACER}"           # validate's per-file table of the DFTracer traces (derived)

# one measured step: python code run with the tree on PYTHONPATH; {run} is the synthetic run directory
PARSE_LOGVFD = (f"import json,sys; from profiles import {LOGVFD} as p; from pathlib import Path; "
                "t = p.parse_dir(Path(sys.argv[1])); "
                "Path(sys.argv[2]).write_text(json.dumps(getattr(p, 'compact', lambda t: t)(t)))")
PARSE_DFTRACER = (f"import json,sys; from profiles import {DFTRACER} as p; from pathlib import Path; "
                  "t = p.parse(Path(sys.argv[1]), sys.argv[3], Path(sys.argv[4])); tl = t.pop('timeline'); "
                  "Path(sys.argv[2]).write_text(json.dumps(t)); "
                  f"Path(sys.argv[2]).with_name('{DFTRACER_TIMELINE}-' + sys.argv[3] + '.json')"
                  ".write_text(json.dumps(tl))")


def this_tree_knows() -> None:
    """This tree's registry (profiles.KNOWN) has both profiles the benchmark parses; RuntimeError naming the missing
    one (a profile renamed here: the table above follows it, while older revisions keep their names)."""
    from profiles import KNOWN
    missing = [n for n in (LOGVFD, DFTRACER) if n not in KNOWN]
    if missing:
        raise RuntimeError(f"bench.perf.validation: this tree's profiles.KNOWN has no {', '.join(missing)} "
                           f"(known: {', '.join(KNOWN)})")


def replay_dftracer(src: Path, dst: Path, files: int) -> int:
    """One DFTracer trace replayed for `files` data files (module docstring); returns the number of events."""
    import gzip

    k = max(1, files // TEMPLATE_FILES)
    width = len(str(files))
    n = 0
    with gzip.open(src, "rt") as f, open(dst, "w") as out:
        for line in f:
            line = line.replace(TRACE_ROOT, RUN_ROOT)
            m = FILE_RE.search(line)
            if m is None:
                out.write(line)
                n += line.lstrip().startswith("{")
                continue
            i = int(m.group(1))
            ts = TS_RE.search(line)
            for j in range(k):
                x = FILE_RE.sub(f"img_{i + TEMPLATE_FILES * j:0{width}d}_of_{files}.hdf5", line)
                if ts:
                    x = TS_RE.sub(f'"ts":"{int(ts.group(1)) + j}"', x, count=1)
                out.write(x)
            n += k
    return n


def replay_logvfd(src: Path, dst: Path, files: int) -> int:
    """Each rank's Log VFD stderr written files/12 times (module docstring); returns the number of records."""
    from importlib import import_module
    RECORD_RE = import_module(f"profiles.{LOGVFD}").RECORD_RE

    k = max(1, files // LOGVFD_OPENS)
    n = 0
    for p in sorted(src.glob("1/rank.*/stderr")):
        q = dst / p.relative_to(src)
        q.parent.mkdir(parents=True, exist_ok=True)
        text = p.read_text(errors="replace")
        n += k * len(RECORD_RE.findall(text))
        with open(q, "w") as out:
            for _ in range(k):
                out.write(text)
    return n


def make_run(run: Path, files: int) -> dict:
    """The synthetic run directory of `files` data files, its raw traces under run/raw; returns the trace sizes."""
    if run.exists():
        shutil.rmtree(run)
    shutil.copytree(RUN_TINY, run, ignore=shutil.ignore_patterns(VERDICT, REPORT, "README.md"))
    for t in (LOGVFD, LOGVFD_RT0, DFTRACER, DFTRACER_TIMELINE, FILES_DFTRACER):
        for p in (run / TABLES).glob(f"{t}-*.json"):
            p.unlink()
    (run / TABLES / f"{FILES_DFTRACER}.json").unlink(missing_ok=True)
    rd = RunDir(run)
    m = rd.manifest
    m["workload"]["config"]["dataset"]["num_files_train"] = files
    rd.save(m)
    raw = run / "raw"
    sizes = {"files": files, "dftracer_events": {}, "logvfd_records": {}, "bytes": 0}
    for side in ("dlio", "kernel"):
        d = raw / DFTRACER / side
        d.mkdir(parents=True)
        sizes["dftracer_events"][side] = sum(replay_dftracer(p, d / p.name.replace(f"{side}-", "").replace(".gz", ""),
                                                             files)
                                             for p in sorted((DATA / DFTRACER).glob(f"{side}-*.pfw.gz")))
        tmpl = DATA / LOGVFD / ("dlio-pytorch-rt0" if side == "dlio" else "kernel-rt0")
        sizes["logvfd_records"][side] = replay_logvfd(tmpl, raw / LOGVFD / side, files)
    sizes["bytes"] = sum(p.stat().st_size for p in raw.rglob("*") if p.is_file())
    return sizes


def timed(argv: list[str], env: dict, mem_limit: int, cwd: Path, ok: tuple = (0,)) -> dict:
    """/usr/bin/time -v around argv under an address-space limit: wall s, peak RSS MB, exit status."""
    import os
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True, env={**os.environ, **env},
                       preexec_fn=limit, cwd=cwd)
    wall = time.perf_counter() - t0
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    out = {"wall_s": round(wall, 3), "peak_rss_mb": round(int(rss.group(1)) / 1024, 1) if rss else None,
           "rc": p.returncode}
    if p.returncode not in ok:
        err = p.stderr.split("\tCommand being timed")[0].strip()
        out["error"] = ("MemoryError (over the address-space limit)" if "MemoryError" in err else err[-600:])
    return out


def measure_tree(tree: Path, run: Path, mem_limit: int, stash: Path) -> dict:
    """Every step with the Python packages of `tree` (this checkout, or a baseline's exported packages). The DFTracer
    tables this tree parsed are kept in `stash`; a tree whose DFTracer parse fails (over the memory limit) is
    validated and reported with the stashed ones (the same tables: tests/test_scale.py), and says so."""
    py = sys.executable
    env = {"PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    tabs, raw = run / TABLES, run / "raw"
    for p in (*tabs.glob(f"{LOGVFD}*.json"), *tabs.glob(f"{DFTRACER}*.json"), tabs / f"{FILES_DFTRACER}.json",
              run / VERDICT):
        p.unlink(missing_ok=True)
    shutil.rmtree(run / REPORT, ignore_errors=True)
    steps: dict = {}
    for side in ("dlio", "kernel"):
        # the Log VFD tables of both launches (logvfd and logvfd-rt0) come from the same replayed trace
        steps[f"parse.{LOGVFD}.{side}"] = timed([py, "-c", PARSE_LOGVFD, str(raw / LOGVFD / side),
                                                 str(tabs / f"{LOGVFD}-{side}.json")], env, mem_limit, tree)
        if (tabs / f"{LOGVFD}-{side}.json").exists():
            shutil.copy(tabs / f"{LOGVFD}-{side}.json", tabs / f"{LOGVFD_RT0}-{side}.json")
        data = f"{RUN_ROOT}/{side}/data"
        steps[f"parse.{DFTRACER}.{side}"] = timed([py, "-c", PARSE_DFTRACER, str(raw / DFTRACER / side),
                                                   str(tabs / f"{DFTRACER}-{side}.json"), side, data], env,
                                                  mem_limit, tree)
    # validate exits 1 on a failing verdict
    borrowed = []
    for side in ("dlio", "kernel"):
        names = (f"{DFTRACER}-{side}.json", f"{DFTRACER_TIMELINE}-{side}.json")
        if steps[f"parse.{DFTRACER}.{side}"]["rc"] == 0:
            stash.mkdir(exist_ok=True)
            for n in names:
                shutil.copy(tabs / n, stash / n)
        elif all((stash / n).exists() for n in names):
            borrowed.append(side)
            for n in names:
                shutil.copy(stash / n, tabs / n)
    steps["validate"] = timed([py, "-m", "validate", "--quiet", str(run)], env, mem_limit, tree, (0, 1))
    steps["reports"] = timed([py, "-m", "reports", str(run)], env, mem_limit, tree)
    v = RunDir(run).verdict
    tables = {p.name: p.stat().st_size for p in sorted(tabs.glob("*.json"))}
    return {"steps": steps, "dftracer_tables_of_this_tree": borrowed, "verdict": v and v["verdict"],
            "summary": v and v["summary"],
            "checks": v and [[c["name"], c["status"], str(c.get("detail"))] for c in v["checks"]],
            "table_bytes": tables}


def export_tree(rev: str, dst: Path) -> Path:
    """The Python packages of a git revision, exported to dst (the baseline measured beside this tree)."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    arch = subprocess.run(["git", "-C", str(REPO), "archive", rev, "common", "profiles", "validate", "reports",
                           "harness"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=arch, check=True)
    return dst


def measure(ctx: Context) -> dict:
    p = ctx.preset["validation"]
    load = {"before": wait_for_quiet(ctx)}
    if p.get("this", True):
        this_tree_knows()
    trees = {"this": REPO} if p.get("this", True) else {}
    if p.get("baseline"):
        trees[f"baseline {p['baseline']}"] = export_tree(p["baseline"], ctx.work / "validation-baseline")
    res = {"method": __doc__, "mem_limit_mb": p["mem_limit"] // 2**20, "points": []}
    for files in p["files"]:
        run = ctx.work / "validation" / f"run-{files}"
        ctx.say(f"validation: a synthetic run of {files} data files")
        t0 = time.perf_counter()
        point = {**make_run(run, files), "make_run_s": round(time.perf_counter() - t0, 1), "trees": {}}
        for name, tree in trees.items():
            if files in p.get("baseline_skip", ()) and name != "this":
                point["trees"][name] = {"skipped": "baseline_skip: over the memory limit at a smaller size"}
                continue
            ctx.say(f"validation: {files} files, tree {name}")
            point["trees"][name] = measure_tree(Path(tree), run, p["mem_limit"], run / "stash")
        point["same_verdict"] = len({json.dumps(t.get("checks")) for t in point["trees"].values()
                                     if "checks" in t and t["checks"] is not None}) <= 1
        res["points"].append(point)
        shutil.rmtree(run / "raw", ignore_errors=True)
    load["after"] = load_snapshot()
    res["load"] = load
    return res


PARSES = tuple(f"parse.{n}.{side}" for n in (LOGVFD, DFTRACER) for side in ("dlio", "kernel"))


def records(point: dict) -> int:
    """The trace records of a point: DFTracer events and Log VFD records, both sides."""
    return sum(point["dftracer_events"].values()) + sum(point["logvfd_records"].values())


def totals(tree: dict) -> dict:
    """parse (the four parses, one after the other), validate, reports and all: wall s and peak RSS MB (the
    largest of the steps: each is its own process); None where a step failed."""
    st = tree["steps"]

    def agg(names):
        xs = [st[n] for n in names if n in st]
        if not xs or any(x["rc"] not in (0, 1) or x.get("error") for x in xs):
            return None
        return {"wall_s": round(sum(x["wall_s"] for x in xs), 2), "peak_rss_mb": max(x["peak_rss_mb"] for x in xs)}

    return {"parse": agg(PARSES), "validate": agg(["validate"]), "reports": agg(["reports"]),
            "all": agg([*PARSES, "validate", "reports"])}


def markdown(sec: dict) -> list[str]:
    def cell(x):
        return "over the limit" if x is None else f"{x['wall_s']:.1f} s, {x['peak_rss_mb']:.0f} MB"

    rows = []
    for p in sec["points"]:
        for name, t in p["trees"].items():
            if "steps" not in t:
                rows.append([str(p["files"]), f"{records(p):,}", name, t.get("skipped", "?"), "", "", ""])
                continue
            tt = totals(t)
            worst = max(t["steps"][n]["peak_rss_mb"] or 0 for n in PARSES)
            parse = cell(tt["parse"]) if tt["parse"] else f"over the limit (a parse reached {worst:.0f} MB)"
            rows.append([str(p["files"]), f"{records(p):,}", name, parse, cell(tt["validate"]), cell(tt["reports"]),
                         f"{t['verdict']} ({t['summary'].get('pass', 0)}/{t['summary'].get('fail', 0)}/"
                         f"{t['summary'].get('skip', 0)})" + (" with this tree's DFTracer tables"
                                                              if t.get("dftracer_tables_of_this_tree") else "")])
    same = all(p.get("same_verdict") for p in sec["points"])
    head = ["data files", "trace records", "tree", "parse (4 traces)", "validate", "reports",
            "verdict (pass/fail/skip)"]
    out = ["## 9. Validation at scale", "",
           "Synthetic runs made from the committed real traces (bench/perf/validation.py: DFTracer events and Log "
           "VFD records replayed with distinct file names); each step its own process under /usr/bin/time -v, "
           f"address space limited to {sec['mem_limit_mb']} MB; peak RSS is the largest step's. The model's checks "
           "fail on such runs by construction (the replay's order is not DLIO's sampler's)" +
           ("" if len({n for p in sec["points"] for n in p["trees"]}) < 2 else
            ": the verdict is shown to be the same with either tree" +
            (" (it is, check by check, at every point)." if same else ": **it differs**.")), "",
           table(head, rows)]
    return out + [""]


def plot(sec: dict):
    """Wall time and peak RSS against trace records, log-log, one line per tree and step."""
    from bench.perf.plots import new_figure

    fig, (a1, a2) = new_figure(11.0, 4.2, 2)
    styles = {"parse": "o-", "validate": "s--", "reports": "^:"}
    for ti, name in enumerate(sorted({n for p in sec["points"] for n in p["trees"]})):
        color = ("#2b5797", "#d9822b", "#2b8a3e")[ti % 3]
        for step, style in styles.items():
            xs, wall, rss = [], [], []
            for p in sec["points"]:
                t = p["trees"].get(name, {})
                v = totals(t)[step] if "steps" in t else None
                if v:
                    xs.append(records(p))
                    wall.append(v["wall_s"])
                    rss.append(v["peak_rss_mb"])
            if xs:
                a1.plot(xs, wall, style, color=color, label=f"{step}: {name}")
                a2.plot(xs, rss, style, color=color, label=f"{step}: {name}")
    for ax, lab in ((a1, "wall time, s"), (a2, "peak RSS, MB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("trace records (DFTracer events + Log VFD records, both sides)")
        ax.set_ylabel(lab)
        ax.grid(alpha=0.3, which="both")
    a1.legend(fontsize=7)
    a1.set_title("a missing point: over the memory limit", fontsize=9)
    return fig
