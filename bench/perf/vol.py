"""(9) The async VOL connector in the training loop (issue 28, docs/vol.md): the same workload, the kernel built
against the thread-safe HDF5, three ways: sync (native connector), implicit (the async connector under the kernel's
synchronous calls) and explicit (key vol-async-prefetch: the next batch's reads issued with H5Dread_async behind the
step's compute, waited for at the next step), interleaved, with the emulated compute swept, the page cache warm
(the files just written) and cold (before each launch the dataset files' pages are dropped with
posix_fadvise(DONTNEED) after a sync: only these files, not the machine's cache, which other jobs share).

From the kernel's own timers (output.json, training): epoch time (observed_s), AU, the I/O wait (load_wait_s: the
time steps waited for their batch, synchronous reads included) and, for explicit, async_prefetch's issue / window /
wait. I/O hidden behind compute = sync's I/O wait - explicit's I/O wait (medians, same compute and cache state).

The pass-through row (issue 28's goal: <= 2% overhead): the project's kernel (build/h5dlio, no vol-async needed) on
the same files, native against HDF5's built-in pass-through connector over native (key vol-connector), interleaved
in alternating order, one rank, no compute, page cache warm, per workload (unet3d-like samples and one-sample small
files); ratio = pass-through's training time / native's (the kernel's observed_s), median with the [min-max] of the
repetitions' pairs; beside it the launch's CPU time (user + system of mpirun and the rank, which the machine's load
stretches less than the wall clock). Which stack a launch ran on is read from its output.json (HDF5's answer,
vol.description), never taken from what it was given: a launch that reports another stack than its label ends the
row (BenchError)."""
from __future__ import annotations

import hashlib
import resource
import subprocess
from pathlib import Path

from bench.perf.common import (
    KERNEL,
    REPO,
    BenchError,
    Context,
    kernel,
    load_snapshot,
    ratio,
    summary,
    wait_for_quiet,
)
from common.fileio import evict

ASYNC = "async under_vol=0;under_info={}"
MODES = ("sync", "implicit", "explicit")
# the pass-through row: label -> (the kernel's vol-connector key, the stack its output.json must report)
PASS_THROUGH = "pass_through under_vol=0;under_info={}"
STACKS = {"native": ("", "native"), "pass_through": (PASS_THROUGH, "pass_through > native")}
GOAL_PERCENT = 2.0  # issue 28: the pass-through connector's overhead against native


def _built() -> tuple[Path | None, Path | None, str]:
    """The thread-safe kernel and vol-async's plugin folder (make vol-deps; make build HDF5_DIR=...), or why not."""
    ts, vp = REPO / "build" / ".hdf5-ts-prefix", REPO / "build" / ".vol-prefix"
    if not ts.exists() or not vp.exists():
        return None, None, "vol-async is not built here (make vol-deps writes build/.hdf5-ts-prefix, build/.vol-prefix)"
    prefix = ts.read_text().strip()
    binary = REPO / "build" / f"hdf5-{hashlib.sha256(prefix.encode()).hexdigest()[:8]}" / "h5dlio"
    plugins = Path(vp.read_text().strip()) / "lib"
    if not binary.exists():
        return None, None, f"no kernel built against the thread-safe HDF5: make build HDF5_DIR={prefix}"
    if not (plugins / "libh5async.so").exists():
        return None, None, f"no libh5async.so in {plugins}"
    return binary, plugins, ""


def _launch(ctx: Context, binary: Path, plugins: Path, name: str, mode: str, sets: dict) -> dict:
    env = {"HDF5_VOL_CONNECTOR": ""} if mode == "sync" else \
        {"HDF5_VOL_CONNECTOR": ASYNC, "HDF5_PLUGIN_PATH": str(plugins)}
    extra = {"vol_async_prefetch": True} if mode == "explicit" else {}
    r = kernel(ctx, name, sets.pop("ranks"), {**sets, **extra}, env=env, binary=binary)
    o = r["output"]
    ep = o["train"]["epochs"]
    pf = o.get("async_prefetch", {}).get("train", {})
    return {"stack": o["vol"]["description"], "wall_s": r["wall_s"],
            "epoch_s": sum(e["observed_s"] for e in ep) / len(ep),
            "au_percent": sum(e["au_percent"] for e in ep) / len(ep),
            "io_wait_s": sum(e["load_wait_s_rank_mean"] for e in ep),
            "compute_s": sum(e["compute_s_rank_mean"] for e in ep),
            "bytes": sum(e["bytes"] for e in ep), "opens": sum(e["opens"] for e in ep),
            "window_s": pf.get("window_s_rank_mean"), "wait_s": pf.get("wait_s_rank_mean")}


def _case(runs: dict) -> dict:
    """per mode: the summaries of its repetitions; hidden I/O from the medians"""
    out = {m: {k: summary([r[k] for r in runs[m]]) for k in ("epoch_s", "au_percent", "io_wait_s", "compute_s",
                                                            "wall_s", "window_s", "wait_s")
               if all(r[k] is not None for r in runs[m])} for m in MODES}
    sync, expl = out["sync"]["io_wait_s"]["median"], out["explicit"]["io_wait_s"]["median"]
    out["hidden_io_s"] = sync - expl
    out["hidden_io_percent"] = (sync - expl) / sync * 100 if sync > 0 else None
    out["same_counts"] = len({(r["bytes"], r["opens"]) for m in MODES for r in runs[m]}) == 1
    out["stacks"] = {m: runs[m][0]["stack"] for m in MODES}
    return out


def _pt_launch(ctx: Context, name: str, label: str, sets: dict) -> dict:
    """One training launch of build/h5dlio on `label`'s stack; what its output.json says it ran on and measured."""
    key, _ = STACKS[label]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = kernel(ctx, name, 1, {**sets, **({"vol_connector": key} if key else {})}, env={"HDF5_VOL_CONNECTOR": ""})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # mpirun and the rank, reaped: CPU time, less load-bound
    o = r["output"]
    ep = o["train"]["epochs"]
    return {"label": label, "launch": name, "stack": (o.get("vol") or {}).get("description"), "wall_s": r["wall_s"],
            "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "epoch_s": sum(e["observed_s"] for e in ep), "io_s": sum(e["load_wait_s_rank_mean"] for e in ep),
            "bytes": sum(e["bytes"] for e in ep), "opens": sum(e["opens"] for e in ep),
            "reads": sum(e["reads"] for e in ep)}


def overhead_row(runs: list[dict]) -> dict:
    """native against pass-through from interleaved launches (in order: pairs by repetition). BenchError when a launch
    reports another stack than its label's (the row would compare what it does not say), or read other bytes."""
    for r in runs:
        want = STACKS[r["label"]][1]
        if r["stack"] != want:
            raise BenchError(f"vol pass-through row: launch {r['launch']} was run as {r['label']} but its output.json "
                             f"reports the VOL stack {r['stack']!r}, not {want!r}")
    by = {lb: [r for r in runs if r["label"] == lb] for lb in STACKS}
    if not by["native"] or len(by["native"]) != len(by["pass_through"]):
        raise BenchError(f"vol pass-through row: {len(by['native'])} native and {len(by['pass_through'])} "
                         "pass-through launches (pairs needed)")
    counts = {(r["bytes"], r["opens"], r["reads"]) for r in runs}
    out = {lb: {k: summary([r.get(k) for r in rs]) for k in ("epoch_s", "io_s", "wall_s", "cpu_s")}
           for lb, rs in by.items()}
    out["stacks"] = {lb: STACKS[lb][1] for lb in STACKS}
    out["ratio_epoch"] = ratio([r["epoch_s"] for r in by["pass_through"]], [r["epoch_s"] for r in by["native"]])
    out["ratio_io"] = ratio([r["io_s"] for r in by["pass_through"]], [r["io_s"] for r in by["native"]])
    out["ratio_cpu"] = ratio([r.get("cpu_s") for r in by["pass_through"]], [r.get("cpu_s") for r in by["native"]])
    med = out["ratio_epoch"]["paired"]["median"]
    out["overhead_percent"] = (med - 1) * 100 if med is not None else None
    out["goal_percent"] = GOAL_PERCENT
    out["within_goal"] = out["overhead_percent"] is not None and out["overhead_percent"] <= GOAL_PERCENT
    out["same_counts"] = len(counts) == 1
    out["counts"] = dict(zip(("bytes", "opens", "reads"), sorted(counts)[0], strict=True))
    return out


def pass_through(ctx: Context) -> dict:
    """The pass-through row, per workload of the preset's `pass_through` list (build/h5dlio, one rank, warm)."""
    pt = ctx.preset["vol"]["pass_through"]
    load = {"before": wait_for_quiet(ctx)}
    res: dict = {"repeat": pt["repeat"], "kernel": str(KERNEL), "workloads": []}
    for w in pt["workloads"]:
        data = ctx.work / f"vol-pt-{w['name']}"
        shape = {"data_folder": data, "num_files_train": w["files"], "num_files_eval": 0,
                 "num_samples_per_file": w["samples_per_file"], "record_length": w["record_length"],
                 "batch_size": w["batch_size"], "read_threads": 0, "epochs": w["epochs"], "naming": "dlio",
                 "keep_files": True, "computation_time": 0.0}
        kernel(ctx, f"vol-pt/{w['name']}/generate", 1, {**shape, "generate_data": True, "train": False},
               env={"HDF5_VOL_CONNECTOR": ""})
        runs = []
        for i in range(pt["repeat"]):
            order = ("native", "pass_through") if i % 2 == 0 else ("pass_through", "native")  # ABBA
            for label in order:
                ctx.say(f"vol: pass-through row, {w['name']}, {label}, repetition {i + 1}/{pt['repeat']}")
                runs.append(_pt_launch(ctx, f"vol-pt/{w['name']}/{label}-{i}", label, {**shape, "train": True}))
        row = overhead_row(runs)
        res["workloads"].append({"name": w["name"], "what": w["what"],
                                 "shape": {k: v for k, v in shape.items() if k != "data_folder"}, **row})
    load["after"] = load_snapshot()
    res["load"] = load
    return res


def measure(ctx: Context) -> dict:
    """The pass-through row (build/h5dlio) and the async sweep (the vol kernel; skipped naming make vol-deps when it
    is not built), each unless the preset's `parts` leaves it out (--vol-parts)."""
    parts = ctx.preset["vol"].get("parts", ["pass_through", "async"])
    res: dict = {"parts": parts, "cases": []}
    if "pass_through" in parts:
        res["pass_through"] = pass_through(ctx)
    if "async" in parts:
        a = measure_async(ctx)
        if "skipped" in a and "pass_through" not in res:
            return a
        res.update(a if "skipped" not in a else {"async_skipped": a["skipped"]})
    return res


def measure_async(ctx: Context) -> dict:
    p = ctx.preset["vol"]
    binary, plugins, why = _built()
    if binary is None:
        return {"skipped": why}
    load = {"before": wait_for_quiet(ctx)}
    data = ctx.work / "vol-data"
    shape = {"data_folder": data, "num_files_train": p["files"], "num_files_eval": 0,
             "num_samples_per_file": p["samples_per_file"], "record_length": p["record_length"],
             "batch_size": p["batch_size"], "read_threads": 0, "epochs": p["epochs"], "naming": "dlio",
             "keep_files": True}
    kernel(ctx, "vol/generate", 1, {**shape, "generate_data": True, "train": False},
           env={"HDF5_VOL_CONNECTOR": ""}, binary=binary)
    subprocess.run(["sync"], check=False)  # clean pages: DONTNEED can drop them
    caches = ["warm", "cold"] if p.get("cold") else ["warm"]
    res: dict = {"shape": {k: v for k, v in shape.items() if k != "data_folder"},
                 "repeat": p["repeat"], "caches": caches, "cases": []}
    for ranks in p["ranks"]:
        for cache in caches:
            for compute in p["compute"]:
                runs: dict = {m: [] for m in MODES}
                for i in range(p["repeat"]):
                    for mode in MODES:  # interleaved: the machine's load drifts alike for each mode
                        ctx.say(f"vol: {ranks} rank(s), {cache}, compute {compute} s, {mode}, repetition "
                                f"{i + 1}/{p['repeat']}")
                        if cache == "cold":
                            evict(data)
                        sets = {**shape, "train": True, "computation_time": compute, "ranks": ranks}
                        runs[mode].append(_launch(ctx, binary, plugins, f"vol/r{ranks}-{cache}-{compute}-{mode}-{i}",
                                                  mode, sets))
                res["cases"].append({"ranks": ranks, "cache": cache, "compute_s": compute, **_case(runs)})
    load["after"] = load_snapshot()
    res["load"] = load
    return res
