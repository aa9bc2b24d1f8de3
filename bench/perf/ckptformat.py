"""(7b) Checkpoint formats: DLIO 2.0.0-52's transformer checkpoints (checkpoint-only workflow) as torch.save files
(DLIO's format, POSIX calls as CPython makes them) and as the kernel's HDF5 files (checkpoint-format hdf5: sec2 per
rank; with 2 ranks also one shared file by MPI-IO, independent and collective), the same model, the same node: write
bandwidth (each program's own checkpoint span; "to disk" adds a `sync` right after), then read bandwidth of the same
checkpoints in a second launch, cold (after `sync`, each checkpoint file's pages dropped with
posix_fadvise(DONTNEED): only these files, nothing else of the machine's cache) and warm (the same launch again)."""
from __future__ import annotations

import shutil
import subprocess
import time

from bench.perf.common import Context, kernel, load_snapshot, summary, wait_for_quiet
from common.fileio import evict


def _sync() -> float:
    t0 = time.perf_counter()
    subprocess.run(["sync"], check=False)
    return time.perf_counter() - t0


def _bw(out: dict, kind: str) -> tuple[float, float]:
    """bytes and seconds of the launch's checkpoints of one kind (save | load), summed"""
    cs = [c for c in out["checkpoint"]["checkpoints"] if c["kind"] == kind]
    return float(sum(c["bytes"] for c in cs)), float(sum(c["seconds"] for c in cs))


def measure(ctx: Context) -> dict:
    p = ctx.preset["checkpoint_hdf5"]
    load = {"before": wait_for_quiet(ctx)}
    folder = ctx.work / "ckpt-formats"
    model = {"dlio_version": "2.0.0-52", "data_folder": ctx.work / "ckpt-formats-data", "train": False,
             "generate_data": False, "checkpoint": True, "model_type": "transformer", "zero_stage": 3,
             "time_between_checkpoints": 0, **p["model"]}
    n = p["checkpoints"]
    res: dict = {"model": {k: v for k, v in p["model"].items()}, "checkpoints": n, "cases": []}
    for ranks in p["ranks"]:
        variants = [("torch", {"checkpoint_format": "torch"}), ("hdf5 sec2", {"checkpoint_format": "hdf5"})]
        if ranks > 1:
            variants += [(f"hdf5 mpio-{m}", {"checkpoint_format": "hdf5", "checkpoint_mpiio": m})
                         for m in ("independent", "collective")]
        per: dict = {name: {"w": [], "wd": [], "rc": [], "rw": [], "bytes": 0} for name, _ in variants}
        for i in range(p["repeat"]):
            for name, keys in variants:  # interleaved: the machine's load drifts alike for every format
                ctx.say(f"checkpoint_hdf5: {ranks} rank(s), {name}, repetition {i + 1}/{p['repeat']}")
                shutil.rmtree(folder, ignore_errors=True)
                _sync()
                tag = f"{name.replace(' ', '-')}-r{ranks}-{i}"
                sets = {**model, **keys, "checkpoint_folder": folder}
                w = kernel(ctx, f"checkpoint_hdf5/write-{tag}", ranks,
                           {**sets, "num_checkpoints_write": n, "num_checkpoints_read": 0})
                b, s = _bw(w["output"], "save")
                per[name]["w"].append(b / s)
                per[name]["wd"].append(b / (s + _sync()))
                per[name]["bytes"] = b / n
                evict(folder)
                for view in ("rc", "rw"):  # cold, then warm
                    r = kernel(ctx, f"checkpoint_hdf5/read-{view}-{tag}", ranks,
                               {**sets, "num_checkpoints_write": 0, "num_checkpoints_read": n})
                    b, s = _bw(r["output"], "load")
                    per[name][view].append(b / s)
        for name, _ in variants:
            x = per[name]
            res["cases"].append({"ranks": ranks, "format": name, "bytes_per_checkpoint": x["bytes"],
                                 "write_bw_bytes_per_s": summary(x["w"]), "write_disk_bw_bytes_per_s": summary(x["wd"]),
                                 "read_cold_bw_bytes_per_s": summary(x["rc"]),
                                 "read_warm_bw_bytes_per_s": summary(x["rw"])})
    shutil.rmtree(folder, ignore_errors=True)
    load["after"] = load_snapshot()
    res["load"] = load
    return res
