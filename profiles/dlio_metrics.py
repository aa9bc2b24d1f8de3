"""DLIO's accelerator utilisation (AU) and throughput, written once from its source, for both statscounters read here.

DLIO 2.0.0 (utils/statscounter.py; main.py _train :244-302):
- a block is the training steps between two checkpoints (one per epoch without checkpoints between steps);
  start_block/end_block stamp time() (:255-256, :269-271) around it;
- per rank and block (compute_metrics_train :327-337): AU = sum(compute[1:]) / (end - start - proc[0]) x 100, 0 when
  that compute is 0; throughput = len(compute) / (end - start) x batch (every step over the whole block); compute[i]
  is the *asked* computation_time of step i (main.py:264-272 -> batch_processed :316-324), proc[i] the step's
  load+compute time from the loader's t0 (:317);
- per rank and epoch (end_train :206-217): each block's value weighted by its steps (len(proc[block]));
- per epoch (end_run :139-141): AU = the ranks' mean (allreduce / size), throughput = their sum;
- the run (:142-154): mean (and population stdev) over the epochs; io MB/s = the mean throughput x record_length /
  2^20.
MLCommons DLIO 3.x (f6796ed, utils/statscounter.py; main.py _train :599-659): the same blocks, epochs, ranks and
run (:190-205, :266-277), but per block (compute_metrics_train :436-470) a metric window of steps [s, e] with
s = metric_exclude_start_steps (default 1), e = steps - 1 - metric_exclude_end_steps (default 0; steps: the expected
steps per epoch, :73-86; utils/config.py:142-143); its time T = end - start - the load+compute of the steps outside
it (:448-453); AU = the window's compute / T x 100, throughput = the window's steps / T x batch, both 0 when the window
is empty or T <= 0 (:461-467); compute[i] is the *measured* time of the step's compute (start_compute ->
batch_processed :404-422).
"""
from __future__ import annotations

from statistics import fmean

FORMULAS = ("2.0.0", "3.x")


def formula_of(release: str) -> str | None:
    """The statscounter a DLIO release computes its metrics with (None: one not read here)."""
    if release == "2.0.0":
        return "2.0.0"
    if release.startswith("3."):
        return "3.x"
    return None


def block(formula: str, steps: int, span_s: float, outside_s: float, window_compute_s: float, window_steps: int,
          batch: int) -> tuple[float, float]:
    """(AU %, samples/s) of one rank's block: steps taken, the block's span (end - start), the load+compute of the
    steps outside the window (2.0.0: proc[0]), the window's compute and steps (2.0.0: steps 2..)."""
    total = span_s - outside_s
    if formula == "2.0.0":
        au = window_compute_s / total * 100.0 if window_compute_s != 0 else 0.0
        return au, (steps / span_s * batch if span_s else 0.0)
    if window_steps <= 0 or total <= 0:
        return 0.0, 0.0
    return (window_compute_s / total * 100.0 if window_compute_s > 0 else 0.0), window_steps / total * batch


def window(formula: str, compute: list[float], proc: list[float], expected_steps: int, exclude_start: int = 1,
           exclude_end: int = 0) -> tuple[float, float, int]:
    """(outside_s, window_compute_s, window_steps) of a block from DLIO's per-step lists."""
    if formula == "2.0.0":
        return proc[0] if proc else 0.0, sum(compute[1:]), max(len(compute) - 1, 0)
    end = expected_steps - 1 - exclude_end
    w = compute[exclude_start:end + 1]
    return sum(proc[:exclude_start]) + sum(proc[end + 1:]), sum(w), len(w)


def epoch_of_rank(blocks: list[tuple[float, float, int]]) -> tuple[float, float]:
    """A rank's epoch from its blocks' (AU, throughput, steps): the step-weighted mean (0 without steps)."""
    n = sum(s for _, _, s in blocks)
    if n == 0:
        return 0.0, 0.0
    return sum(a * s for a, _, s in blocks) / n, sum(t * s for _, t, s in blocks) / n


def epoch_of_ranks(per_rank: list[tuple[float, float]]) -> tuple[float, float]:
    """An epoch over the ranks: AU their mean, throughput their sum."""
    return fmean(a for a, _ in per_rank), sum(t for _, t in per_rank)


def run_means(epochs: list[tuple[float, float]], record_length: float) -> dict:
    """The run's means over the epochs, under summary.json's names."""
    au, thr = fmean(a for a, _ in epochs), fmean(t for _, t in epochs)
    return {"train_au_mean_percentage": au, "train_throughput_mean_samples_per_second": thr,
            "train_io_mean_MB_per_second": thr * record_length / 1024.0 / 1024.0}
