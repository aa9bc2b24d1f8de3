"""(4) Generation: the kernel's write bandwidth against fio (same file count and size, same 16 MiB transfer, one
job per rank) and dd (one file of the same total size, 16 MiB blocks) on the same file system; and the peak RSS of
each rank (/usr/bin/time) against its bound: a no-I/O baseline + the generation buffer + one sample.

Two views, both measured on every repetition: "page cache" = each program's own write time (the kernel does not
fsync, like h5py), which on this VM is dominated by the dirty-page throttling of whatever was written just before;
"to disk" = that time plus a `sync` issued right after the program (the data it wrote reaches the device), which is
what the file system can sustain. A `sync` (untimed) and a fresh folder precede every timed launch."""
from __future__ import annotations

import shutil
import subprocess
import time

from bench.perf.common import (
    MIB,
    Context,
    fio,
    generate,
    kernel,
    load_snapshot,
    ratio,
    records_offset,
    summary,
    wait_for_quiet,
)


def _sync() -> float:
    t0 = time.perf_counter()
    subprocess.run(["sync"], check=False)
    return time.perf_counter() - t0


def _dd(folder, total: int, bs: int) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={folder / 'dd.bin'}", f"bs={bs}", f"count={max(1, total // bs)}"],
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def measure(ctx: Context) -> dict:
    p = ctx.preset["generation"]
    n, rl, buf = p["files"], p["record_length"], 16 * MIB
    side = int(rl ** 0.5)
    sample = side * side
    sets = {"num_files_train": n, "num_files_eval": 0, "num_samples_per_file": p["samples_per_file"],
            "record_length": rl, "generation_buffer_size": buf}
    load = {"before": wait_for_quiet(ctx)}
    res: dict = {"files": n, "samples_per_file": p["samples_per_file"], "sample_bytes": sample,
                 "generation_buffer_bytes": buf, "bandwidth": [], "rss": []}
    folder = ctx.work / "generation"
    for ranks in p["ranks"]:
        k, f, d, kd, fd, dd = [], [], [], [], [], []
        for i in range(p["repeat"]):
            ctx.say(f"generation: {ranks} rank(s), repetition {i + 1}/{p['repeat']}")
            subprocess.run(["sync"], check=False)
            r = generate(ctx, f"generation/kernel-r{ranks}-{i}", folder / "kernel", ranks, sets)
            g = r["output"]["generate"]
            k.append(g["bytes"] / g["seconds"])
            kd.append(g["bytes"] / (g["seconds"] + _sync()))
            files = sorted((folder / "kernel" / "train").glob("*.h5"))
            off = records_offset(files[0]) or 0  # fio writes the records' bytes where the kernel writes them
            shutil.rmtree(folder / "fio", ignore_errors=True)
            (folder / "fio").mkdir(parents=True)
            targets = [folder / "fio" / x.name for x in files]
            subprocess.run(["sync"], check=False)
            # the kernel writes min(buffer, file's samples) per H5Dwrite: same transfer size for fio
            fr = fio(ctx, f"generation/fio-r{ranks}-{i}", targets, "write",
                     min(buf, sample * p["samples_per_file"]), numjobs=ranks,
                     size_per_file=sample * p["samples_per_file"], offset=off)
            f.append(fr["bw_bytes_per_s"])
            fd.append(fr["io_bytes"] / (fr["runtime_s"] + _sync()))
            shutil.rmtree(folder / "dd", ignore_errors=True)
            subprocess.run(["sync"], check=False)
            t_dd = _dd(folder / "dd", g["bytes"], buf)
            d.append(g["bytes"] / t_dd)
            dd.append(g["bytes"] / (t_dd + _sync()))
        res["bandwidth"].append({"ranks": ranks, "bytes": g["bytes"], "kernel_bw_bytes_per_s": summary(k),
                                 "fio_bw_bytes_per_s": summary(f), "dd_bw_bytes_per_s": summary(d),
                                 "ratio_vs_fio": ratio(k, f), "ratio_vs_dd": ratio(k, d),
                                 "kernel_disk_bw_bytes_per_s": summary(kd), "fio_disk_bw_bytes_per_s": summary(fd),
                                 "dd_disk_bw_bytes_per_s": summary(dd), "disk_ratio_vs_fio": ratio(kd, fd),
                                 "disk_ratio_vs_dd": ratio(kd, dd)})
    shutil.rmtree(folder, ignore_errors=True)
    # peak RSS per rank: a baseline launch (train one 4 KiB sample: MPI + HDF5 + the kernel, no buffers to speak
    # of), then generation with each buffer size and a training read of the same samples
    ctx.say("generation: peak RSS per rank")
    base_dir = ctx.work / "rss-base"
    generate(ctx, "generation/rss-base-gen", base_dir, 2, {"num_files_train": 2, "num_files_eval": 0,
                                                           "num_samples_per_file": 1, "record_length": 4096})
    base = kernel(ctx, "generation/rss-base", 2, {"data_folder": base_dir, "train": True, "num_files_train": 2,
                                                   "num_files_eval": 0, "num_samples_per_file": 1,
                                                   "record_length": 4096, "batch_size": 1, "read_threads": 0,
                                                   "computation_time": 0, "epochs": 1}, rss=True)
    base_kb = max(base["maxrss_kb"])
    res["rss_baseline_kb"] = base["maxrss_kb"]
    for b in p["rss_buffers"]:
        for rl2 in p["rss_record_lengths"]:
            s2 = int(rl2 ** 0.5) ** 2
            fold = ctx.work / "rss"
            st = {"num_files_train": 4, "num_files_eval": 0, "num_samples_per_file": 2, "record_length": rl2,
                  "generation_buffer_size": b}
            g = generate(ctx, f"generation/rss-gen-b{b}-rl{rl2}", fold, 2, st, rss=True)
            t = kernel(ctx, f"generation/rss-train-b{b}-rl{rl2}", 2,
                       {"data_folder": fold, "train": True, "read_threads": 0, "batch_size": 1,
                        "computation_time": 0, "epochs": 1, **st}, rss=True)
            bound_kb = base_kb + (b + s2) // 1024
            res["rss"].append({"buffer_bytes": b, "sample_bytes": s2, "generate_maxrss_kb": g["maxrss_kb"],
                               "train_maxrss_kb": t["maxrss_kb"], "baseline_kb": base_kb, "bound_kb": bound_kb,
                               "within_bound": max(g["maxrss_kb"] + t["maxrss_kb"]) <= bound_kb})
            shutil.rmtree(fold, ignore_errors=True)
    shutil.rmtree(base_dir, ignore_errors=True)
    load["after"] = load_snapshot()
    res["load"] = load
    return res
