"""(2) Kernel overhead: observed epoch time minus what the kernel measured doing (emulated compute + raw read +
metadata + preprocess), as a percentage of the observed time, on the unet3d shape (batch 7, 0.323 s compute).

Per rank and epoch (output.ranks.csv): with read-threads=0 the rank reads itself, so
  overhead = observed - (compute + raw read + metadata + preprocess);
with reader processes the rank only waits for batches, so
  overhead = observed - (compute + load wait).
What is left is the loop itself: sampler, batch bookkeeping, timers, the barrier after each step (which also
absorbs load imbalance between ranks) and the scheduler's lateness in waking a sleeping rank."""
from __future__ import annotations

from bench.perf.common import Context, generate, kernel, load_snapshot, summary, wait_for_quiet

TARGET_PERCENT = 1.0


def workload_sets(p: dict) -> dict:
    return {"num_files_train": p["files"], "num_files_eval": 0, "num_samples_per_file": 1,
            "record_length": p["record_length"], "record_length_stdev": p["record_length_stdev"],
            "batch_size": 7, "computation_time": 0.323, "epochs": p["epochs"], "shuffle": "seed"}


def rank_overheads(rows: list[dict], threads: int) -> list[dict]:
    out = []
    for r in rows:
        if r.get("phase") != "train":
            continue
        obs = r["observed_s"]
        busy = r["compute_s"] + (r["load_wait_s"] if threads else r["raw_read_s"] + r["metadata_s"] +
                                 r["preprocess_s"])
        row = {"rank": int(r["rank"]), "epoch": int(r["epoch"]), "observed_s": obs, "accounted_s": busy,
               "overhead_s": obs - busy, "overhead_percent": (obs - busy) / obs * 100 if obs else None}
        if isinstance(r.get("barrier_s"), float):  # kernels that time the per-step barrier apart
            left = obs - busy - r["barrier_s"]
            row.update({"barrier_s": r["barrier_s"],
                        "overhead_excl_barrier_percent": left / obs * 100 if obs else None})
        out.append(row)
    return out


def measure(ctx: Context) -> dict:
    p = ctx.preset["overhead"]
    folder = ctx.work / "overhead"
    load = {"before": wait_for_quiet(ctx)}
    ctx.say(f"overhead: generating the unet3d-shaped dataset ({p['files']} files)")
    generate(ctx, "overhead/generate", folder, 2, workload_sets(p))
    res = {"workload": {**workload_sets(p), "samples_per_file": 1}, "target_percent": TARGET_PERCENT, "cases": []}
    for ranks, threads in p["cases"]:
        per_rank, job = [], []
        for i in range(p["repeat"]):
            ctx.say(f"overhead: {ranks} ranks, read-threads {threads}, repetition {i + 1}/{p['repeat']}")
            r = kernel(ctx, f"overhead/r{ranks}-t{threads}-{i}", ranks,
                       {"data_folder": folder, "train": True, "read_threads": threads, **workload_sets(p)})
            per_rank += rank_overheads(r["ranks"], threads)
            for ep in r["output"]["train"]["epochs"]:
                acc = ep["compute_s_rank_mean"] + (ep["load_wait_s_rank_mean"] if threads else
                                                   ep["raw_read_s_rank_mean"] + ep["metadata_s_rank_mean"] +
                                                   ep["preprocess_s_rank_mean"])
                job.append((ep["observed_s"] - acc) / ep["observed_s"] * 100)
        pct = [x["overhead_percent"] for x in per_rank]
        case = {"ranks": ranks, "read_threads": threads, "repeat": p["repeat"],
                "rank_epoch_overhead_percent": summary(pct),
                "rank_epoch_overhead_s": summary([x["overhead_s"] for x in per_rank]),
                "job_overhead_percent": summary(job),
                "rank_epoch_overhead_excl_barrier_percent": summary([x.get("overhead_excl_barrier_percent")
                                                                     for x in per_rank]),
                "rank_epoch_barrier_s": summary([x.get("barrier_s") for x in per_rank]),
                "observed_epoch_s": summary([x["observed_s"] for x in per_rank]),
                "samples": per_rank}
        case["target_met"] = case["rank_epoch_overhead_percent"]["median"] <= TARGET_PERCENT
        res["cases"].append(case)
    load["after"] = load_snapshot()
    res["load"] = load
    return res
