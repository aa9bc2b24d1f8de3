"""MLPerf Storage v3.0's training numbers, as DLIO 3.x computes them and as mlpstorage checks them (issue 27).

Written from DLIO 3.x's source (mlcommons/DLIO_local_changes f6796ed, utils/statscounter.py) and mlpstorage's
(mlcommons/storage mlpstorage/submission_checker/checks/training_checks.py, commit 4234cd9):
- per rank and block: the metric window is the steps [exclude_start, steps - 1 - exclude_end] (statscounter.py:84-86;
  defaults 1 and 0: utils/config.py:142-143); its time T = end - start - the excluded steps' load+compute (:448-453);
  AU = the window's compute / T x 100, throughput = the window's steps / T x batch, both 0 when the window is empty or
  T <= 0 (:461-470);
- per epoch: AU = the ranks' mean (allreduce / size), throughput = their sum (:190-191; one block per epoch,
  the steps-weighted mean over blocks :266-277 is then the block's value);
- the run: mean and population stdev over the epochs, MB/s = samples/s x record_length / 2^20, AU met when the mean
  >= au x 100 (:194-205);
- mlpstorage's dataset size (recalculate_dataset_size: HOST_MEMORY_MULTIPLIER 5, MIN_STEPS_PER_EPOCH 500): the files
  must reach max(max(500, files x samples // (batch x accelerators)) x batch x accelerators,
  hosts x host_memory_GB[0] x 5 GiB / record_length) samples / samples per file; its AU check reads
  summary.json's train_au_meet_expectation (accelerator_utilization_check).
The per-block formula is profiles/dlio_metrics.py block. The kernel computes the same in bench/src/report.c
(json_mlperf_train); these functions recompute it from the kernel's per-rank inputs and from DLIO's own per-rank
output.json, so that each side can be checked against DLIO's formulas.
"""
from __future__ import annotations

import math
from statistics import fmean, pstdev

from profiles.dlio_metrics import block

MIB = 1024.0 * 1024.0
GIB = MIB * 1024.0
HOST_MEMORY_MULTIPLIER = 5  # training_checks.py recalculate_dataset_size
MIN_STEPS_PER_EPOCH = 500   # idem


def rank_metrics(steps: int, span_s: float, first_step_s: float, compute_after_first_s: float, batch: int,
                 exclude_start: int = 1) -> tuple[float, float]:
    """(AU %, samples/s) of one rank and epoch from the kernel's inputs (the window: steps 2..; exclude_start=0 is the
    planted wrong formula the tests use: the first step counted)."""
    if exclude_start == 0:
        return block("3.x", steps, span_s, 0.0, compute_after_first_s, steps, batch)
    return block("3.x", steps, span_s, first_step_s, compute_after_first_s, steps - 1, batch)


def summarize(au_per_epoch: list[float], thr_per_epoch: list[float], record_length: float, au: float) -> dict:
    """summary.json's metric block (statscounter.py:190-205) from the per-epoch AU (%) and throughput."""
    if not au_per_epoch:
        return {}
    am, tm = fmean(au_per_epoch), fmean(thr_per_epoch)
    ts = pstdev(thr_per_epoch)
    return {"train_au_percentage": list(au_per_epoch), "train_au_mean_percentage": am,
            "train_au_stdev_percentage": pstdev(au_per_epoch), "train_au_expectation_percentage": au * 100.0,
            "train_au_meet_expectation": "success" if am >= au * 100.0 else "fail",
            "train_throughput_samples_per_second": list(thr_per_epoch),
            "train_throughput_mean_samples_per_second": tm, "train_throughput_stdev_samples_per_second": ts,
            "train_io_mean_MB_per_second": tm * record_length / MIB,
            "train_io_stdev_MB_per_second": ts * record_length / MIB}


def from_kernel_inputs(block: dict, au: float, exclude_start: int = 1) -> dict:
    """The kernel's "mlperf" block recomputed from its own "inputs" (each rank's steps, span, first step, compute)."""
    epochs = sorted({i["epoch"] for i in block["inputs"]})
    aus, thrs = [], []
    for e in epochs:
        rows = [rank_metrics(i["steps"], i["span_s"], i["first_step_s"], i["compute_after_first_s"],
                             block["batch_size"], exclude_start) for i in block["inputs"] if i["epoch"] == e]
        aus.append(fmean(r[0] for r in rows))
        thrs.append(sum(r[1] for r in rows))
    return summarize(aus, thrs, block["record_length"], au)


def dlio_rank_window(compute: list[float], proc: list[float], au_pct: float, batch: int,
                     exclude_start: int = 1) -> float | None:
    """DLIO's own per-rank throughput re-derived from its own numbers: the window's time T = its compute / AU (DLIO's
    AU definition), throughput = the window's steps / T x batch. exclude_start=0, the planted wrong formula: every
    step over the block's whole time (T + the first step's load+compute). None: AU 0 or an empty window."""
    window = compute[1:]
    if au_pct <= 0 or not window:
        return None
    total = sum(window) / (au_pct / 100.0)
    if exclude_start == 0:
        return len(compute) / (total + proc[0]) * batch
    return len(window) / total * batch


def dataset_rule(files: int, samples_per_file: int, batch: int, accelerators: int, hosts: int,
                 host_memory_gb: float | None, record_length: float, min_steps: int = MIN_STEPS_PER_EPOCH) -> dict:
    """mlpstorage's minimum dataset (training_checks.py recalculate_dataset_size) and whether `files` meets it
    (min_steps: MLPerf's 500; fewer only where a caller says its dataset is below MLPerf's rule, harness/sizing.py)."""
    steps = files * samples_per_file // (batch * accelerators)
    by_steps = max(min_steps, steps) * batch * accelerators
    by_mem = None if host_memory_gb is None else hosts * host_memory_gb * HOST_MEMORY_MULTIPLIER * GIB / record_length
    need = max(by_steps, by_mem if by_mem is not None else 0) / samples_per_file
    return {"num_files_train": files, "num_hosts": hosts, "host_memory_GB": host_memory_gb, "steps_per_epoch": steps,
            "min_files_by_steps": by_steps / samples_per_file,
            "min_files_by_memory": None if by_mem is None else by_mem / samples_per_file, "min_files": need,
            "min_size_GiB": need * samples_per_file * record_length / GIB, "met": files >= need}


def from_dlio(summary: dict, config: dict | None) -> dict | None:
    """What MLPerf reads from a DLIO 3.x training launch: summary.json's metric block (DLIO's own numbers), the AU
    threshold and mlpstorage's dataset rule from the launch's config (hydra's .hydra/config.yaml: workload.*).
    None: not a training launch."""
    m = summary.get("metric", {})
    if "train_au_mean_percentage" not in m:
        return None
    out = {"note": "what MLPerf Storage v3.0 reads from this DLIO run (summary.json); not a submission"}
    out.update({k: v for k, v in m.items() if k.startswith("train_")})
    wl = (config or {}).get("workload", {})
    ds, rd = wl.get("dataset", {}), wl.get("reader", {})
    au = (wl.get("metric") or {}).get("au")
    if au is not None:
        out["train_au_expectation_percentage"] = float(au) * 100.0
    rl = ds.get("record_length_bytes", ds.get("record_length"))
    if rl and rd.get("batch_size"):
        mem = summary.get("host_memory_GB") or [None]
        out["dataset_rule"] = dataset_rule(int(summary.get("num_files_train", ds.get("num_files_train", 0))),
                                           int(summary.get("num_samples_per_file", ds.get("num_samples_per_file", 1))),
                                           int(rd["batch_size"]), int(summary.get("num_accelerators", 1)),
                                           int(summary.get("num_hosts", 1)), mem[0], float(rl))
    return out


def close(a: float | None, b: float | None, rel: float = 1e-6) -> bool:
    """Two of the block's numbers equal up to the printed precision (both absent counts as equal)."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
