"""(10) Scale (issue 26 item 6): the kernel's per-file cost as the file count and the ranks grow, against the two
limits over the same files, and DLIO 2.0.0 where a run fits.

One-sample files of `record_length` bytes (DLIO's unet3d shape shrunk: what grows at field scale is the number of
files, and each costs an open, HDF5's metadata reads and a close whatever its size), batch 7, read-threads 0, no
compute, page cache warm (the files just written), per file count:
- the kernel's generation (wall, files/s, peak RSS per rank) and one training epoch (opens/s = opens / the epoch's
  observed time; samples/s; each rank's metadata time against its raw read time, the BeeGFS study's split; peak RSS);
- the two limits, `build/h5dlio-limits` (bench/tools/limits.c) over the same files and ranks: `posix` (open, read the
  file, close: the file system's own rate) and `hdf5` (H5Fopen, H5Dopen, H5Dread of `records`, close: what HDF5
  costs per file, which DLIO pays too); goal: the kernel >= 90% of the hdf5 loop's opens/s; at one rank also the
  hdf5 loop over the files in the kernel's own (shuffled) order, its openat calls under strace: the like-for-like
  comparison (the sorted list walks inodes in another order, a cost of the order, not of the kernel);
- flat against hierarchical folders (`num_subfolders_train`, DLIO's tree) at one file count: generation and reads;
- ranks swept at one file count (beyond the cores ranks share them: the per-rank split is what is read there);
- DLIO 2.0.0 (its own generation and one epoch, through the harness's launch plan) at the counts that fit a session.
Slopes: least squares of log(time) against log(files) (1.0 = linear)."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

from bench.perf.common import (
    KERNEL,
    BenchError,
    Context,
    kernel,
    kernel_sets,
    load_snapshot,
    ratio,
    run,
    summary,
    table,
    wait_for_quiet,
)
from harness.launch import Launcher
from profiles.strace import strace_binary

LIMITS = KERNEL.resolve().parent / "h5dlio-limits"  # built beside the kernel (build/<hdf5>/)
GOAL_HDF5 = 0.90


def _shape(p: dict, folder: Path, files: int, subfolders: int) -> dict:
    return {"data_folder": folder, "naming": "dlio", "num_files_train": files, "num_files_eval": 0,
            "num_samples_per_file": 1, "record_length": p["record_length"], "batch_size": 7, "read_threads": 0,
            "epochs": 1, "computation_time": 0, "shuffle": "seed", "keep_files": True,
            "num_subfolders_train": subfolders}


def _limit(ctx: Context, name: str, ranks: int, mode: str, listing: Path) -> dict:
    where = ctx.raw / name
    where.mkdir(parents=True, exist_ok=True)
    argv = Launcher("mpirun", ranks).argv(where / "ranks", {}) + [str(LIMITS), "--mode", mode, "--list", str(listing)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=where)
    if p.returncode != 0:
        raise BenchError(f"h5dlio-limits --mode {mode} exited {p.returncode} ({where}): {p.stderr[-800:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["opens_per_s"] = r["files"] / r["wall_s"] if r["wall_s"] > 0 else None
    io = (r["open_s"] + r["read_s"] + r["close_s"]) / ranks  # a rank's mean time in open, read and close
    r["io_opens_per_s"] = r["files"] / io if io > 0 else None
    return r


def _train(ctx: Context, name: str, ranks: int, shape: dict) -> dict:
    r = kernel(ctx, name, ranks, {**shape, "generate_data": False, "train": True}, rss=True)
    ep = r["output"]["train"]["epochs"][0]
    return {"wall_s": r["wall_s"], "epoch_s": ep["observed_s"], "opens": ep["opens"],
            "opens_per_s": ep["opens"] / ep["observed_s"], "samples_per_s": ep["throughput_samples_per_s"],
            "metadata_s_rank": ep["metadata_s_rank_mean"], "raw_read_s_rank": ep["raw_read_s_rank_mean"],
            # the I/O path alone (opens, reads, closes; not DLIO's step barriers or the scheduler): all opens over a
            # rank's mean time in them, as the loops' io rate below
            "io_opens_per_s": ep["opens"] / (ep["metadata_s_rank_mean"] + ep["raw_read_s_rank_mean"]),
            "maxrss_kb": max(r.get("maxrss_kb") or [0])}


def _generate(ctx: Context, name: str, ranks: int, shape: dict) -> dict:
    if shape["data_folder"].exists():
        shutil.rmtree(shape["data_folder"])
    r = kernel(ctx, name, ranks, {**shape, "generate_data": True, "train": False}, rss=True)
    g = r["output"]["generate"]
    return {"wall_s": r["wall_s"], "in_program_s": g["seconds"], "files_per_s": g["files"] / g["seconds"],
            "maxrss_kb": max(r.get("maxrss_kb") or [0])}


def _listing(folder: Path, out: Path) -> Path:
    files = sorted(str(f) for f in (folder / "train").rglob("*.hdf5"))
    out.write_text("\n".join(files) + "\n")
    return out


def kernel_order(trace: Path, root: str, out: Path) -> Path:
    """The data files under `root` in the order the kernel's openat calls in a strace output name them (a file
    opened again right after itself counted once), one per line, into `out`."""
    prefix, last = root.rstrip("/") + "/", None
    with open(trace, errors="replace") as f, open(out, "w") as w:
        for line in f:
            i = line.find('openat(')
            if i < 0:
                continue
            a = line.find('"', i)
            b = line.find('"', a + 1)
            path = line[a + 1:b] if a >= 0 and b > a else ""
            if path.startswith(prefix) and path.endswith(".hdf5") and path != last:
                w.write(path + "\n")
                last = path
    return out


def _ordered(ctx: Context, name: str, shape: dict, out: Path) -> Path | None:
    """One rank's epoch under `strace -e trace=openat` (not timed): the listing in the kernel's order; None without
    strace."""
    exe = strace_binary()   # the system-call profile's own lookup
    if exe is None:
        return None
    where = ctx.raw / name
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    trace = where / "openat.trace"
    run([exe, "-f", "-qq", "-e", "trace=openat", "-o", str(trace), str(KERNEL),
         *kernel_sets(output_folder=where / "out", quiet=True, **{**shape, "generate_data": False, "train": True})],
        where)
    kernel_order(trace, str(shape["data_folder"]), out)
    trace.unlink()
    return out


def _point(ctx: Context, p: dict, files: int, ranks: int, subfolders: int, tag: str) -> dict:
    """One dataset: generated once per repetition, then the kernel and both loops over it, interleaved."""
    folder = ctx.work / f"scale-{tag}"
    shape = _shape(p, folder, files, subfolders)
    runs: dict = {"generate": [], "kernel": [], "hdf5": [], "posix": [], "hdf5_order": []}
    reps = 1 if files >= p["once_from"] else p["repeat"]
    for i in range(reps):
        ctx.say(f"scale: {tag}: {files} files, {ranks} rank(s), {subfolders} sub-folders, repetition "
                f"{i + 1}/{reps}")
        runs["generate"].append(_generate(ctx, f"scale/{tag}-gen-{i}", ranks, shape))
        listing = _listing(folder, ctx.work / f"scale-{tag}.list")
        runs["kernel"].append(_train(ctx, f"scale/{tag}-train-{i}", ranks, shape))
        for mode in ("hdf5", "posix"):
            runs[mode].append(_limit(ctx, f"scale/{tag}-{mode}-{i}", ranks, mode, listing))
        order = _ordered(ctx, f"scale/{tag}-order-{i}", shape, ctx.work / f"scale-{tag}.order") if ranks == 1 \
            else None
        if order is not None:
            runs["hdf5_order"].append(_limit(ctx, f"scale/{tag}-hdf5-order-{i}", ranks, "hdf5", order))
    shutil.rmtree(folder, ignore_errors=True)
    out = {"files": files, "ranks": ranks, "subfolders": subfolders, "runs": runs,
           "kernel_opens_per_s": summary([r["opens_per_s"] for r in runs["kernel"]]),
           "hdf5_opens_per_s": summary([r["opens_per_s"] for r in runs["hdf5"]]),
           "posix_opens_per_s": summary([r["opens_per_s"] for r in runs["posix"]]),
           "generate_files_per_s": summary([r["files_per_s"] for r in runs["generate"]]),
           "kernel_vs_hdf5": ratio([r["opens_per_s"] for r in runs["kernel"]],
                                   [r["opens_per_s"] for r in runs["hdf5"]]),
           "kernel_io_opens_per_s": summary([r["io_opens_per_s"] for r in runs["kernel"]]),
           "hdf5_io_opens_per_s": summary([r["io_opens_per_s"] for r in runs["hdf5"]]),
           "posix_io_opens_per_s": summary([r["io_opens_per_s"] for r in runs["posix"]]),
           "kernel_io_vs_hdf5_io": ratio([r["io_opens_per_s"] for r in runs["kernel"]],
                                         [r["io_opens_per_s"] for r in runs["hdf5"]]),
           "kernel_vs_posix": ratio([r["opens_per_s"] for r in runs["kernel"]],
                                    [r["opens_per_s"] for r in runs["posix"]])}
    if runs["hdf5_order"]:
        out["hdf5_order_opens_per_s"] = summary([r["opens_per_s"] for r in runs["hdf5_order"]])
        out["kernel_vs_hdf5_order"] = ratio([r["opens_per_s"] for r in runs["kernel"]],
                                            [r["opens_per_s"] for r in runs["hdf5_order"]])
        out["kernel_io_vs_hdf5_order_io"] = ratio([r["io_opens_per_s"] for r in runs["kernel"]],
                                                  [r["io_opens_per_s"] for r in runs["hdf5_order"]])
    return out


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) against log(x): 1.0 is linear growth, 0 flat."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=False) if x and y and x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def _slopes(points: list[dict]) -> dict:
    n = [pt["files"] for pt in points]

    def med(key, side):
        return [summary([r[key] for r in pt["runs"][side]])["median"] for pt in points]
    return {"kernel_generate_s": slope(n, med("in_program_s", "generate")),
            "kernel_epoch_s": slope(n, med("epoch_s", "kernel")),
            "hdf5_loop_s": slope(n, med("wall_s", "hdf5")), "posix_loop_s": slope(n, med("wall_s", "posix")),
            "kernel_maxrss_kb": slope(n, med("maxrss_kb", "kernel"))}


def _dlio(ctx: Context, p: dict, files: int) -> dict:
    """DLIO 2.0.0's own generation and one epoch at this file count (unet3d shrunk as above; a bounded generation
    buffer), through the harness's launch plan; the kernel's launches of the same plan beside it."""
    from harness import plan as hplan
    from harness import run as hrun
    from harness.launch import execute
    from harness.workload import dlio_config_dir, load
    venv = ctx.dlio_venv
    wl = load("unet3d", "tiny", dlio_config_dir(str(venv / "bin" / "python")))
    wl = wl.with_overrides({"dataset": {"num_files_train": files, "num_files_eval": 0, "num_samples_per_file": 1,
                                        "record_length": p["record_length"], "record_length_stdev": 0},
                            "reader": {"read_threads": 0, "batch_size": 7}, "train": {"epochs": 1,
                                                                                       "computation_time": 0}})
    base = ctx.work / f"scale-dlio-{files}"
    from profiles import baseline
    base_name = baseline().name   # the launches under no profiler, timed (steps <side>.<its name>)
    opt = hplan.Options(ranks=p["dlio_ranks"], profiles=[base_name], repeat=1, timeout=p["dlio_timeout"])
    plan = hplan.build(wl, opt, venv)
    hrun.prepare(base, plan)
    steps = {s.name: s for s in hplan.launches(base, plan)}
    out: dict = {"files": files, "ranks": p["dlio_ranks"]}
    train = [f"{side}.{base_name}" for side in ("dlio", "kernel")]
    for name in ("dlio.generate", "kernel.generate", *train):
        ctx.say(f"scale: DLIO at {files} files: {name}")
        r = execute(steps[name], lambda s: None)
        if r["status"] != "ok":
            raise BenchError(f"scale: {name} at {files} files {r['status']} (rc {r['rc']}): {r['detail'][:600]}")
        out[name] = {"wall_s": r["wall_s"]}
    shutil.rmtree(base, ignore_errors=True)
    out["ratio_generate"] = out["dlio.generate"]["wall_s"] / out["kernel.generate"]["wall_s"]
    out["ratio_train"] = out[train[0]]["wall_s"] / out[train[1]]["wall_s"]
    return out


def fitting(counts: list[int], record_length: int, free: int) -> tuple[list[int], list[str]]:
    """The file counts whose dataset fits the free disk (each file its record and ~4 KiB of HDF5 and file system
    overhead, twice over for headroom), and a sentence for each that does not: a 10^6 point that does not fit is
    left out, not the whole section."""
    keep, skipped = [], []
    for n in counts:
        need = n * (record_length + 4096) * 2
        if need > free:
            skipped.append(f"{n:,} files need ~{need / 1e9:.1f} GB here, {free / 1e9:.1f} GB free")
        else:
            keep.append(n)
    return keep, skipped


def measure(ctx: Context) -> dict:
    p = ctx.preset["scale"]
    if not LIMITS.exists():
        return {"skipped": f"{LIMITS} not built (make build)"}
    free = shutil.disk_usage(ctx.work).free
    counts, too_big = fitting(p["files"], p["record_length"], free)
    if not counts:
        return {"skipped": "; ".join(too_big)}
    res: dict = {"preset": p, "load": {"before": wait_for_quiet(ctx)}, "cores": os.cpu_count(),
                 "files_skipped": too_big}
    res["files"] = [_point(ctx, p, n, p["ranks_files"], 0, f"flat-{n}") for n in counts]
    res["slopes"] = _slopes(res["files"])
    h = p["hier"]
    res["hier"] = [_point(ctx, p, h["files"], p["ranks_files"], s, f"sub{s}-{h['files']}") for s in h["subfolders"]]
    res["ranks"] = [_point(ctx, p, p["ranks_n"], r, 0, f"ranks{r}-{p['ranks_n']}") for r in p["ranks"]]
    res["dlio"] = []
    if ctx.dlio_venv and (ctx.dlio_venv / "bin" / "dlio_benchmark").exists():
        for n in p["dlio_files"]:
            try:
                res["dlio"].append(_dlio(ctx, p, n))
            except BenchError as e:
                res["dlio"].append({"files": n, "error": str(e)[:2000]})
    else:
        res["dlio_skipped"] = f"no reference DLIO venv ({ctx.dlio_venv}): run `make dlio-venv`"
    res["load"]["after"] = load_snapshot()
    return res


# ---------- results.md and the figure ----------
def _m(s: dict | None, digits: int = 0) -> str:
    if not s or not s.get("n"):
        return "-"
    if s["n"] == 1:
        return f"{s['median']:,.{digits}f}"
    return f"{s['median']:,.{digits}f} [{s['min']:,.{digits}f}–{s['max']:,.{digits}f}]"


def _r(r: dict | None) -> str:
    if not r or r.get("median_ratio") is None:
        return "-"
    p = r.get("paired") or {}
    span = f" [{p['min'] * 100:.0f}–{p['max'] * 100:.0f}]" if p.get("n", 0) > 1 else ""
    return f"{r['median_ratio'] * 100:.0f}%{span}"


def _rows(points: list[dict], first: str, ordered: bool = False) -> list[list[str]]:
    def med(pt, side, key):
        return summary([r[key] for r in pt["runs"][side]])

    def same_order(pt):
        return [_m(pt.get("hdf5_order_opens_per_s")), _r(pt.get("kernel_vs_hdf5_order")),
                _r(pt.get("kernel_io_vs_hdf5_order_io"))] if ordered else []

    return [[f"{pt[first]:,}", _m(pt["generate_files_per_s"]), _m(pt["kernel_opens_per_s"]),
             _m(pt["hdf5_opens_per_s"]), _m(pt["posix_opens_per_s"]), _r(pt["kernel_vs_hdf5"]),
             _r(pt["kernel_io_vs_hdf5_io"]), *same_order(pt), _m(med(pt, "kernel", "metadata_s_rank"), 3),
             _m(med(pt, "kernel", "raw_read_s_rank"), 3), _m(med(pt, "kernel", "maxrss_kb"))] for pt in points]


HEAD = ["files/s generated", "kernel opens/s (epoch)", "hdf5 loop opens/s", "posix loop opens/s",
        "kernel / hdf5 loop", "kernel / hdf5 loop, I/O path only", "metadata s per rank", "read s per rank",
        "kernel peak RSS KiB"]
# results measured with the loop in the kernel's own order (2026-11-29 on) carry three more columns
HEAD_ORDER = [*HEAD[:6], "hdf5 loop in the kernel's order opens/s", "kernel / that loop",
              "kernel / that loop, I/O path only", *HEAD[6:]]


def _table(points: list[dict], first: str, label: str) -> str:
    ordered = any("kernel_vs_hdf5_order" in pt for pt in points)
    return table([label, *(HEAD_ORDER if ordered else HEAD)], _rows(points, first, ordered))


def _load1(sec: dict, when: str) -> str:
    v = (sec.get("load") or {}).get(when, {}).get("load1")
    return f"{v:.1f}" if isinstance(v, int | float) else "?"


def markdown(sec: dict) -> list[str]:
    p = sec["preset"]
    L = ["## 10. Scale: files, folders, ranks", "",
         f"One-sample files of {p['record_length']:,} B, batch 7, read-threads 0, no compute, page cache warm; "
         f"{p['ranks_files']} ranks unless stated; {sec['cores']} cores (more ranks share them). Loops: "
         "`build/h5dlio-limits` over the same files and ranks (`hdf5`: H5Fopen, H5Dopen, H5Dread, close; `posix`: "
         "open, read, close). Epoch rates include DLIO's barrier after every step, which the loops do not have; "
         "the I/O-path ratio compares a rank's time inside opens, reads and closes alone. "
         f"Goal: kernel >= {GOAL_HDF5:.0%} of the hdf5 loop. Load (1-min): {_load1(sec, 'before')} before, "
         f"{_load1(sec, 'after')} after.", ""]
    L += ["By file count (flat folder):", "", _table(sec["files"], "files", "files"), ""]
    if sec.get("files_skipped"):
        L += ["Not measured (disk): " + "; ".join(sec["files_skipped"]) + ".", ""]
    sl = sec.get("slopes") or {}
    L += ["Slopes of log(time) against log(files) (1.0 = linear): " + ", ".join(
        f"{k} {v:.2f}" for k, v in sl.items() if v is not None) + ".", ""]
    L += ["Flat against hierarchical folders:", "", _table(sec["hier"], "subfolders", "sub-folders"), ""]
    L += [f"By ranks ({sec['ranks'][0]['files']:,} files):" if sec["ranks"] else "By ranks:", "",
          _table(sec["ranks"], "ranks", "ranks"), ""]
    if sec.get("dlio"):
        rows = [[f"{d['files']:,}", "error: " + d["error"][:200], "", "", "", ""] if "error" in d else
                [f"{d['files']:,}", f"{d['dlio.generate']['wall_s']:.1f}", f"{d['kernel.generate']['wall_s']:.1f}",
                 f"{d['dlio.timing']['wall_s']:.1f}", f"{d['kernel.timing']['wall_s']:.1f}",
                 f"{d['ratio_generate']:.1f}x / {d['ratio_train']:.1f}x"] for d in sec["dlio"]]
        L += ["DLIO 2.0.0 against the kernel (launch wall, s; the harness's launch plan, timing profile):", "",
              table(["files", "DLIO generate", "kernel generate", "DLIO train", "kernel train",
                     "DLIO/kernel generate / train"], rows), ""]
    elif sec.get("dlio_skipped"):
        L += [f"DLIO: not measured ({sec['dlio_skipped']}).", ""]
    return L


def plot(sec: dict):
    """log-log: opens/s against files (kernel, loops), and generation/epoch time against files."""
    from bench.perf.plots import C_DLIO, C_KERNEL, C_OTHER, C_PLAIN, new_figure

    fig, (a, b) = new_figure(12.0, 4.2, 2)
    pts = sec["files"]
    xs = [pt["files"] for pt in pts]
    for key, label, color in (("kernel_opens_per_s", "kernel (epoch)", C_KERNEL), ("hdf5_opens_per_s", "hdf5 loop",
                                                                                   C_DLIO),
                              ("posix_opens_per_s", "posix loop", C_PLAIN),
                              ("kernel_io_opens_per_s", "kernel, I/O path only", C_OTHER)):
        a.plot(xs, [pt[key]["median"] for pt in pts], "o-", color=color, label=label)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("files")
    a.set_ylabel("opens/s")
    a.set_title("Open rate against file count (warm)")
    a.legend(fontsize=8)
    for side, key, label, color in (("generate", "in_program_s", "kernel generation", C_KERNEL),
                                    ("kernel", "epoch_s", "kernel epoch", C_PLAIN), ("hdf5", "wall_s", "hdf5 loop",
                                                                                      C_DLIO)):
        ys = [summary([r[key] for r in pt["runs"][side]])["median"] for pt in pts]
        b.plot(xs, ys, "o-", color=color, label=f"{label} (slope {slope(xs, ys) or 0:.2f})")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("files")
    b.set_ylabel("s")
    b.set_title("Time against file count")
    b.legend(fontsize=8)
    return fig
