"""(7) Checkpoints: the kernel's checkpoint write bandwidth against fio writing the same bytes with the same
transfer size (one file per rank, the model tensor in one write call as torch.save through Python's buffered file
issues it), and each rank's peak RSS with checkpointing on against the same launch with it off (goal: no more than
the write buffer, st_blksize, above it: tensors come from the zero page, whatever the model size).

Both views as for generation: "page cache" = the program's own time (the kernel: its checkpoint span in
output.json; fio: its runtime), "to disk" = that plus a `sync` issued right after. DLIO 2.0.0 writes checkpoints but
never reads them; the MLPerf Storage cycle (write N, read N) of the DLIO that has those keys (mlperf_storage_v2.0)
is section 8, bench/perf/mlperf.py."""
from __future__ import annotations

import shutil
import subprocess
import time

from bench.perf.common import Context, fio, generate, kernel, load_snapshot, ratio, summary, wait_for_quiet


def _sync() -> float:
    t0 = time.perf_counter()
    subprocess.run(["sync"], check=False)
    return time.perf_counter() - t0


def measure(ctx: Context) -> dict:
    p = ctx.preset["checkpoint"]
    model = p["model_size"]
    load = {"before": wait_for_quiet(ctx)}
    data = ctx.work / "checkpoint-data"
    dset = {"num_files_train": 4, "num_files_eval": 0, "num_samples_per_file": 1, "record_length": 4096}
    generate(ctx, "checkpoint/gen", data, 1, dset)
    train = {"data_folder": data, "train": True, "read_threads": 0, "batch_size": 1, "computation_time": 0,
             "epochs": 1, **dset}
    ck = {"checkpoint": True, "checkpoint_type": "all_ranks", "model_size": model, "layer_parameters": "",
          "num_layers": 0}
    res: dict = {"model_bytes": model, "bandwidth": [], "rss": []}
    folder = ctx.work / "checkpoints"
    for ranks in p["ranks"]:
        k, f, kd, fd = [], [], [], []
        for i in range(p["repeat"]):
            ctx.say(f"checkpoint: {ranks} rank(s), repetition {i + 1}/{p['repeat']}")
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run(["sync"], check=False)
            r = kernel(ctx, f"checkpoint/kernel-r{ranks}-{i}", ranks, {**train, **ck, "checkpoint_folder": folder})
            c = r["output"]["checkpoint"]
            k.append(c["bytes"] / c["seconds"])
            kd.append(c["bytes"] / (c["seconds"] + _sync()))
            files = sorted(folder.glob("model-*.pt"))
            per_file = c["bytes"] // len(files)
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            subprocess.run(["sync"], check=False)
            # the same bytes per file; one write call of the tensor's size (the kernel's, as DLIO's, largest call)
            fr = fio(ctx, f"checkpoint/fio-r{ranks}-{i}", [folder / x.name for x in files], "write", model,
                     numjobs=ranks, size_per_file=per_file)
            f.append(fr["bw_bytes_per_s"])
            fd.append(fr["io_bytes"] / (fr["runtime_s"] + _sync()))
        res["bandwidth"].append({"ranks": ranks, "bytes": c["bytes"], "kernel_bw_bytes_per_s": summary(k),
                                 "fio_bw_bytes_per_s": summary(f), "ratio_vs_fio": ratio(k, f),
                                 "kernel_disk_bw_bytes_per_s": summary(kd), "fio_disk_bw_bytes_per_s": summary(fd),
                                 "disk_ratio_vs_fio": ratio(kd, fd)})
    ctx.say("checkpoint: peak RSS per rank, checkpointing off and on")
    ranks = max(p["ranks"])
    off = kernel(ctx, "checkpoint/rss-off", ranks, train, rss=True)
    shutil.rmtree(folder, ignore_errors=True)
    on = kernel(ctx, "checkpoint/rss-on", ranks, {**train, **ck, "checkpoint_folder": folder}, rss=True)
    blk = folder.stat().st_blksize if folder.exists() else 4096
    # the goal: the write buffer above the baseline; 1 MiB allowed for the state descriptions, the pickle and the
    # zero-page mapping's page tables
    bound = max(off["maxrss_kb"]) + -(-blk // 1024) + 1024
    res["rss"] = {"ranks": ranks, "off_kb": off["maxrss_kb"], "on_kb": on["maxrss_kb"], "buffer_bytes": blk,
                  "delta_kb": max(on["maxrss_kb"]) - max(off["maxrss_kb"]), "bound_kb": bound,
                  "within_bound": max(on["maxrss_kb"]) <= bound}
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    res["mlperf_cycle"] = "section 8 (bench/perf/mlperf.py: DLIO 2.0.0 has no checkpoint reads)"
    load["after"] = load_snapshot()
    res["load"] = load
    return res

