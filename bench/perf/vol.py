"""(9) The async VOL connector in the training loop (issue 28, docs/vol.md): the same workload, the kernel built
against the thread-safe HDF5, three ways: sync (native connector), implicit (the async connector under the kernel's
synchronous calls) and explicit (key vol-async-prefetch: the next batch's reads issued with H5Dread_async behind the
step's compute, waited for at the next step), interleaved, with the emulated compute swept, the page cache warm
(the files just written) and cold (before each launch the dataset files' pages are dropped with
posix_fadvise(DONTNEED) after a sync: only these files, not the machine's cache, which other jobs share).

From the kernel's own timers (output.json, training): epoch time (observed_s), AU, the I/O wait (load_wait_s: the
time steps waited for their batch, synchronous reads included) and, for explicit, async_prefetch's issue / window /
wait. I/O hidden behind compute = sync's I/O wait - explicit's I/O wait (medians, same compute and cache state)."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from bench.perf.common import (
    REPO,
    Context,
    kernel,
    load_snapshot,
    summary,
    wait_for_quiet,
)

ASYNC = "async under_vol=0;under_info={}"
MODES = ("sync", "implicit", "explicit")


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


def _drop(folder: Path) -> None:
    """The dataset's clean pages out of the page cache: the next launch reads them from the device."""
    for f in folder.rglob("*"):
        if f.is_file():
            fd = os.open(f, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


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


def measure(ctx: Context) -> dict:
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
                            _drop(data)
                        sets = {**shape, "train": True, "computation_time": compute, "ranks": ranks}
                        runs[mode].append(_launch(ctx, binary, plugins, f"vol/r{ranks}-{cache}-{compute}-{mode}-{i}",
                                                  mode, sets))
                res["cases"].append({"ranks": ranks, "cache": cache, "compute_s": compute, **_case(runs)})
    load["after"] = load_snapshot()
    res["load"] = load
    return res
