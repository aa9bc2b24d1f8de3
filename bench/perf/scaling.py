"""(5) Scaling: ranks 1, 2, 4, 8 on a fixed dataset (page-cache warm, read-threads 0, no compute: the read path
alone, unet3d's batch of 7 with DLIO's barrier after every step), aggregate and per-rank read rates; and runtime
against dataset size (files x samples) at fixed ranks.
The machine has os.cpu_count() cores: beyond that ranks are oversubscribed and share them."""
from __future__ import annotations

import os
import shutil
import subprocess

from bench.perf.common import (
    Context,
    dataset_files,
    fio,
    generate,
    kernel,
    load_snapshot,
    ratio,
    records_offset,
    summary,
    wait_for_quiet,
)


def _train_sets(folder, files: int, spf: int, rl: int) -> dict:
    return {"data_folder": folder, "train": True, "num_files_train": files, "num_files_eval": 0,
            "num_samples_per_file": spf, "record_length": rl, "batch_size": 7, "read_threads": 0,
            "computation_time": 0, "epochs": 2, "shuffle": "seed"}


def measure(ctx: Context) -> dict:
    p = ctx.preset["scaling"]
    load = {"before": wait_for_quiet(ctx)}
    rl, files, spf = p["record_length"], p["files"], p["samples_per_file"]
    folder = ctx.work / "scaling"
    generate(ctx, "scaling/generate", folder, 2, {"num_files_train": files, "num_files_eval": 0,
                                                  "num_samples_per_file": spf, "record_length": rl})
    kernel(ctx, "scaling/warmup", 1, _train_sets(folder, files, spf, rl))
    res: dict = {"cpus": os.cpu_count(), "files": files, "samples_per_file": spf, "record_length": rl,
                 "ranks": [], "size": []}
    fl = dataset_files(folder)
    sample = int(rl ** 0.5) ** 2
    off = records_offset(fl[0]) or 0
    for ranks in p["ranks"]:
        agg, per_rank, obs, fagg = [], [], [], []
        for i in range(p["repeat"]):
            ctx.say(f"scaling: {ranks} ranks, repetition {i + 1}/{p['repeat']}")
            r = kernel(ctx, f"scaling/ranks{ranks}-{i}", ranks, _train_sets(folder, files, spf, rl))
            ep = r["output"]["train"]["epochs"][-1]  # second epoch: steady state
            agg.append(ep["bytes"] / ep["observed_s"])
            per_rank.append(ep["bytes_per_rank_mean"] / ep["raw_read_s_rank_mean"])
            obs.append(ep["observed_s"])
            if spf == 1:  # the plain reader with as many jobs as ranks, same bytes (records, from their offset)
                fr = fio(ctx, f"scaling/fio{ranks}-{i}", fl, "read", sample, numjobs=ranks, offset=off,
                         size_per_file=sample)
                fagg.append(fr["bw_bytes_per_s"])
        res["ranks"].append({"ranks": ranks, "oversubscribed": ranks > (os.cpu_count() or 1),
                             "aggregate_bw_bytes_per_s": summary(agg), "per_rank_raw_bw_bytes_per_s": summary(per_rank),
                             "observed_epoch_s": summary(obs), "fio_aggregate_bw_bytes_per_s": summary(fagg),
                             "ratio_vs_fio": ratio(agg, fagg) if fagg else None})
    ranks = p["size_ranks"]
    for nf in p["size_files"]:
        fold = ctx.work / f"size-{nf}"
        generate(ctx, f"scaling/size-gen-{nf}", fold, ranks, {"num_files_train": nf, "num_files_eval": 0,
                                                             "num_samples_per_file": spf, "record_length": rl})
        subprocess.run(["sync"], check=False)  # no writeback of the new files during the timed reads
        kernel(ctx, f"scaling/size-warmup-{nf}", ranks, _train_sets(fold, nf, spf, rl))
        walls, obs = [], []
        for i in range(p["repeat"]):
            ctx.say(f"scaling: {nf} files x {spf} samples at {ranks} ranks, repetition {i + 1}/{p['repeat']}")
            r = kernel(ctx, f"scaling/size{nf}-{i}", ranks, _train_sets(fold, nf, spf, rl))
            walls.append(r["wall_s"])
            obs.append(sum(e["observed_s"] for e in r["output"]["train"]["epochs"]))
        res["size"].append({"files": nf, "samples": nf * spf, "bytes": nf * spf * int(rl ** 0.5) ** 2,
                            "ranks": ranks, "launch_wall_s": summary(walls), "epochs_observed_s": summary(obs)})
        shutil.rmtree(fold, ignore_errors=True)
    load["after"] = load_snapshot()
    res["load"] = load
    return res
