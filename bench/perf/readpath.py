"""(1) Read path vs the physical limit: the kernel's raw read bandwidth on its own dataset against fio reading the
same files with the same transfer size, same cache state, interleaved repetitions.

- warm: page cache holds the files (one untimed pass of each program first);
- cold: `sync; echo 1 > /proc/sys/vm/drop_caches` before every timed launch of either program (root in a VM);
- O_DIRECT fio as the device's own limit (informative; the kernel reads through the page cache like h5py).

fio reads the same byte range the kernel's H5Dread moves: each file's `records` dataset, from its offset (2048)
for one sample. A whole-file fio from offset 0 is kept for reference: on this machine kind (AMD EPYC VM) the
page-cache copy (`_copy_to_iter`) is several times slower when the file offset and the user buffer are both
page-aligned, so "fio from 0" is not the limit of the bytes the kernel reads.

Kernel 'raw' = bytes / time inside H5Dread; fio 'raw' = bytes / time inside pread (completion latency x I/Os).
Kernel 'end to end' = bytes / (observed epoch - compute), i.e. with H5Fopen/H5Dopen/close; fio 'wall' = bytes /
fio's runtime."""
from __future__ import annotations

from bench.perf.common import (
    Context,
    can_drop_caches,
    dataset_files,
    drop_caches,
    fio,
    generate,
    kernel,
    load_snapshot,
    ratio,
    records_offset,
    summary,
    wait_for_quiet,
)

TARGET = 0.95


def _kernel_read(ctx: Context, name: str, folder, n_files: int, rl: int) -> dict:
    r = kernel(ctx, name, 1, {"data_folder": folder, "train": True, "generate_data": False,
                              "num_files_train": n_files, "num_files_eval": 0, "num_samples_per_file": 1,
                              "record_length": rl, "batch_size": 1, "read_threads": 0, "computation_time": 0,
                              "epochs": 1, "shuffle": "off"})
    ep = r["output"]["train"]["epochs"][0]
    return {"bytes": ep["bytes"], "raw_bw": ep["bytes"] / ep["raw_read_s_rank_mean"],
            "e2e_bw": ep["bytes"] / (ep["observed_s"] - ep["compute_s_rank_mean"]),
            "metadata_s": ep["metadata_s_rank_mean"], "raw_s": ep["raw_read_s_rank_mean"],
            "observed_s": ep["observed_s"], "wall_s": r["wall_s"]}


def measure(ctx: Context) -> dict:
    p = ctx.preset["readpath"]
    n, rl, reps = p["files"], p["record_length"], p["repeat"]
    side = int(rl ** 0.5)
    sample = side * side
    folder = ctx.work / "readpath"
    load = {"before": wait_for_quiet(ctx)}
    ctx.say(f"readpath: generating {n} files x {sample / 2**20:.0f} MiB")
    generate(ctx, "readpath/generate", folder, 1, {"num_files_train": n, "num_files_eval": 0,
                                                   "num_samples_per_file": 1, "record_length": rl})
    files = dataset_files(folder)
    off = records_offset(files[0])
    modes = ["warm"] + (["cold"] if can_drop_caches() else [])
    res: dict = {"files": n, "sample_bytes": sample, "total_bytes": sample * n, "ranks": 1, "repeat": reps,
                 "records_offset": off,
                 "cold_method": "sync; echo 1 > /proc/sys/vm/drop_caches before each launch" if "cold" in modes
                 else "not allowed here (not root): cold skipped", "modes": {}}
    for mode in modes:
        k_runs, f_runs, f0_runs = [], [], []
        same = {"offset": off or 0, "size_per_file": sample}
        if mode == "warm":  # untimed pass of each: both read from the page cache afterwards
            _kernel_read(ctx, "readpath/warmup-kernel", folder, n, rl)
            fio(ctx, "readpath/warmup-fio", files, "read", sample)
        for i in range(reps):
            ctx.say(f"readpath: {mode} repetition {i + 1}/{reps}")
            if mode == "cold":
                drop_caches()
            k_runs.append(_kernel_read(ctx, f"readpath/{mode}-kernel-{i}", folder, n, rl))
            if mode == "cold":
                drop_caches()
            f_runs.append(fio(ctx, f"readpath/{mode}-fio-{i}", files, "read", sample, **same))
            if mode == "cold":
                drop_caches()
            f0_runs.append(fio(ctx, f"readpath/{mode}-fio0-{i}", files, "read", sample))
        kraw = [r["raw_bw"] for r in k_runs]
        ke2e = [r["e2e_bw"] for r in k_runs]
        fraw = [r["syscall_bw_bytes_per_s"] for r in f_runs]
        fwall = [r["bw_bytes_per_s"] for r in f_runs]
        res["modes"][mode] = {
            "kernel_raw_bw_bytes_per_s": summary(kraw), "kernel_e2e_bw_bytes_per_s": summary(ke2e),
            "kernel_metadata_s": summary([r["metadata_s"] for r in k_runs]),
            "fio_syscall_bw_bytes_per_s": summary(fraw), "fio_wall_bw_bytes_per_s": summary(fwall),
            "ratio_raw": ratio(kraw, fraw), "ratio_e2e": ratio(ke2e, fwall),
            "fio_from0_syscall_bw_bytes_per_s": summary([r["syscall_bw_bytes_per_s"] for r in f0_runs]),
            "ratio_raw_vs_fio_from0": ratio(kraw, [r["syscall_bw_bytes_per_s"] for r in f0_runs])}
        rr = res["modes"][mode]["ratio_raw"]["median_ratio"]
        res["modes"][mode]["target_met"] = rr is not None and rr >= TARGET
    if "cold" in modes:  # the device limit, for scale
        d = []
        for i in range(max(1, reps // 2)):
            d.append(fio(ctx, f"readpath/direct-fio-{i}", files, "read", sample, direct=True)["bw_bytes_per_s"])
        res["fio_odirect_bw_bytes_per_s"] = summary(d)
    res["target"] = TARGET
    load["after"] = load_snapshot()
    res["load"] = load
    return res
