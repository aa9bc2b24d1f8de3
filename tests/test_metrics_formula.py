"""Each side's AU and throughput recomputed with DLIO's formula (profiles/timing/ check_metrics, the formula once in
profiles/dlio_metrics.py from DLIO 2.0.0's and 3.x's utils/statscounter.py) from the per-step times it recorded:
real runs pass (tests/data/metrics_formula.json: the timing entries of measured tiny runs; a live tiny kernel run with
its train.inputs), and each planted wrong formula fails its side's row: the first step counted, one step's compute
dropped, the ranks' AU summed, the whole block's steps over the window's time, a metric window the kernel does not
apply, checkpoints between steps."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from profiles import FAIL, PASS, SKIP, timing
from profiles import dlio_metrics as dm
from profiles.timing.checks import _kernel_epochs
from tests import kernel

DATA = json.loads((Path(__file__).resolve().parent / "data" / "metrics_formula.json").read_text())
RUN_TINY = Path(__file__).resolve().parent / "data" / "run-tiny"
# a 0.2 s step may overrun its sleep by 150 ms (profiles/compute.py's bound); with 0.05 s (75 ms) the real-input test
# failed once at a load of 22 here (not reproduced in 7 reruns; a late sleep is the one bound load can break)
CT, BATCH = 0.2, 4


class Run:
    """What check_metrics reads of a run (profiles.RunView)."""

    def __init__(self, t: dict, cfg: dict, release: str):
        self.t, self.cfg, self.release = t, cfg, release

    def table(self, name: str):
        return self.t if name == "timing.json" else None


def rows(t: dict, cfg: dict, release: str) -> dict:
    return {r["name"]: r for r in timing.check_metrics(Run(t, cfg, release))}


def real(key: str) -> tuple[dict, dict, str]:
    d = copy.deepcopy(DATA[key])
    return d["timing"], d["cfg"], d["release"]


def test_real_dlio3_run_passes_and_reports_both_aus():
    """DLIO 3.x's own numbers come back from its per-step times and stamps by the formula, every rank and the
    summary; the kernel's (mlperf inputs of the same run) too; the info row shows both AUs and their ratio."""
    t, cfg, rel = real("dlio3")
    r = rows(t, cfg, rel)
    assert r["metrics.formula.dlio"]["status"] == PASS, r["metrics.formula.dlio"]["detail"]
    assert r["metrics.formula.kernel"]["status"] == PASS, r["metrics.formula.kernel"]["detail"]
    assert r["metrics.formula.dlio"]["compared"] == ["metrics"]
    au = r["metrics.au"]
    assert au["status"] == PASS and au["required"] is False and "compared" not in au
    d, k = t["dlio"][0]["au_percent"], t["kernel"][0]["mlperf"]["train_au_mean_percentage"]
    assert au["expected"] == round(d, 3) and au["observed"] == round(k, 3)
    assert f"kernel/DLIO {k / d:.2f}x" in au["detail"]


def test_real_dlio2_run_passes():
    """DLIO 2.0.0 (2 ranks, 2 epochs): rank 0's blocks by its stamps, rank 1's (no stamps in 2.0.0) by the span its
    throughput implies, the summary; and the kernel's train.inputs of the same run."""
    t, cfg, rel = real("dlio2")
    assert t["dlio"][0]["formula"]["ranks"][1]["1"]["block1"]["span_s"] is None
    r = rows(t, cfg, rel)
    for side in ("dlio", "kernel"):
        assert r[f"metrics.formula.{side}"]["status"] == PASS, r[f"metrics.formula.{side}"]["detail"]
    assert r["metrics.au"]["status"] == PASS


def test_dlio2_planted_formulas_fail():
    """Under 2.0.0: rank 0's throughput as 3.x computes it (the window's steps over the window's time), and rank 1's
    AU (no stamps) with the first step's compute counted: each fails its block."""
    for rank, plant, what in ((0, lambda b: b.update(throughput=(len(b["proc"]) - 1) / (b["span_s"] - b["proc"][0])
                                                      * 7), "throughput"),
                              (1, lambda b: b.update(au=b["au"] * len(b["compute"]) / (len(b["compute"]) - 1)),
                               "AU")):
        t, cfg, rel = real("dlio2")
        plant(t["dlio"][0]["formula"]["ranks"][rank]["1"]["block1"])
        row = rows(t, cfg, rel)["metrics.formula.dlio"]
        assert row["status"] == FAIL and f"rank {rank} epoch 1 block1: {what}" in row["detail"], row["detail"]


def _dlio3_planted(plant) -> dict:
    t, cfg, rel = real("dlio3")
    plant(t["dlio"][0]["formula"])
    return rows(t, cfg, rel)["metrics.formula.dlio"]


def test_dlio_side_first_step_counted_fails():
    """A DLIO whose AU counts the first step (window from step 1, its time the whole block) fails."""
    def plant(f):
        for r in f["ranks"]:
            b = r["1"]["block1"]
            b["au"] = sum(b["compute"]) / b["span_s"] * 100
    row = _dlio3_planted(plant)
    assert row["status"] == FAIL and "rank 0 epoch 1 block1: AU" in row["detail"], row["detail"]


def test_dlio_side_ranks_summed_fails():
    """summary.json's AU the ranks' sum, not their mean: the epoch and the mean differ."""
    def plant(f):
        m = f["metric"]
        m["train_au_percentage"] = [sum(r["1"]["block1"]["au"] for r in f["ranks"])]
        m["train_au_mean_percentage"] = m["train_au_percentage"][0]
    row = _dlio3_planted(plant)
    assert row["status"] == FAIL and "not summary.json's" in row["detail"], row["detail"]


def test_dlio_side_2_0_0_throughput_on_3x_fails():
    """A block's throughput computed as 2.0.0 does (every step over the whole block) under 3.x: it fails."""
    def plant(f):
        b = f["ranks"][1]["1"]["block1"]
        b["throughput"] = len(b["proc"]) / b["span_s"] * 7
    row = _dlio3_planted(plant)
    assert row["status"] == FAIL and "rank 1 epoch 1 block1: throughput" in row["detail"], row["detail"]


def test_kernel_mlperf_window_not_the_workloads_fails():
    """A 3.x workload whose metric window excludes 2 first steps: the kernel's (steps 2..) is not DLIO's."""
    t, cfg, rel = real("dlio3")
    cfg["output"] = {"metric": {"exclude_start_steps": 2}}
    row = rows(t, cfg, rel)["metrics.formula.kernel"]
    assert row["status"] == FAIL and "excludes 2 first" in row["detail"]


def test_skips_say_what_is_missing():
    """The committed run-tiny's timing.json holds no per-step inputs: both rows SKIP naming them; an unread DLIO
    release SKIPs its side; no timing table: one SKIP."""
    t = json.loads((RUN_TINY / "tables" / "timing.json").read_text())
    r = rows(t, {"workflow": {"train": True}}, "2.0.0")
    assert r["metrics.formula.dlio"]["status"] == SKIP and "<rank>_output.json" in r["metrics.formula.dlio"]["detail"]
    assert r["metrics.formula.kernel"]["status"] == SKIP and "train.inputs" in r["metrics.formula.kernel"]["detail"]
    t, cfg, _ = real("dlio2")
    r = rows(t, cfg, "2.0.1")
    assert r["metrics.formula.dlio"]["status"] == SKIP
    k = r["metrics.formula.kernel"]  # held to 2.0.0's formula, said so, and the class not claimed
    assert k["status"] == PASS and "2.0.1's own formula is not read here" in k["detail"] and "compared" not in k
    assert [x["status"] for x in timing.check_metrics(Run(None, cfg, "2.0.0"))] == [SKIP]


# --- a live tiny kernel run (DLIO 2.0.0's entry): its train.inputs, and planted formulas on them -------------------


SETS = {"num-files-eval": 0, "batch-size": BATCH, "computation-time": CT, "epochs": 2}


@pytest.fixture(scope="module")
def kernel_data(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("metrics")
    gen = kernel.run(tmp, 2, kernel.tiny(tmp / "d", **{**SETS, "generate-data": True, "train": False}), name="gen")
    assert gen.rc == 0, gen.proc.stderr
    return tmp


def _kernel_train(tmp: Path, name: str, env: dict | None = None) -> dict:
    r = kernel.run(tmp, 2, kernel.tiny(tmp / "d", **{**SETS, "train": True}), name=name, env=env)
    assert r.rc == 0, r.proc.stderr
    return {"step": "kernel.timing", **timing.parse(r.out, "kernel")}


@pytest.fixture(scope="module")
def kernel_entry(kernel_data) -> dict:
    return _kernel_train(kernel_data, "out")


CFG = {"reader": {"batch_size": BATCH}, "dataset": {"num_files_train": 8, "num_samples_per_file": 4,
                                                     "record_length": 65536},
       "train": {"computation_time": CT, "epochs": 2}, "workflow": {"train": True}}


def _kernel_row(entry: dict, cfg: dict = CFG) -> dict:
    return rows({"dlio": [], "kernel": [entry]}, cfg, "2.0.0")["metrics.formula.kernel"]


def _report(f: dict, epochs: list[tuple[float, float]]) -> None:
    """Write `epochs` (AU, throughput) as the kernel's reported numbers, and their means."""
    for e, (au, thr) in zip(f["epochs"], epochs, strict=True):
        e["au_percent"], e["throughput_samples_per_s"] = au, thr
    f.update({"au_mean_percent": sum(a for a, _ in epochs) / len(epochs),
              "throughput_mean_samples_per_s": sum(t for _, t in epochs) / len(epochs),
              "dlio_io_mean_MB_per_s": sum(t for _, t in epochs) / len(epochs) * 65536 / 2**20})


def test_kernel_real_inputs_pass(kernel_entry):
    """The kernel's train.inputs (2 ranks x 2 epochs, compute_s with them) give back its AU and throughput by DLIO
    2.0.0's formula, and each rank's compute is as asked."""
    f = kernel_entry["formula"]
    assert len(f["inputs"]) == 4 and all("compute_s" in i for i in f["inputs"])
    assert {i["steps"] for i in f["inputs"]} == {4}  # 8 files x 4 samples / (4 x 2 ranks)
    row = _kernel_row(copy.deepcopy(kernel_entry))
    assert row["status"] == PASS, row["detail"]


def test_kernel_first_step_counted_fails(kernel_entry):
    """AU and throughput computed with the first step inside the window (every step's compute over the whole
    span): the reported numbers are not DLIO's formula of the inputs."""
    e = copy.deepcopy(kernel_entry)
    f = e["formula"]
    per_epoch = []
    for ep in sorted({i["epoch"] for i in f["inputs"]}):
        ins = [i for i in f["inputs"] if i["epoch"] == ep]
        per_epoch.append(dm.epoch_of_ranks([(i["compute_s"] / i["span_s"] * 100, i["steps"] / i["span_s"] * BATCH)
                                            for i in ins]))
    _report(f, per_epoch)
    row = _kernel_row(e)
    assert row["status"] == FAIL and "DLIO 2.0.0's formula gives" in row["detail"], row["detail"]


def test_kernel_step_compute_dropped_fails(kernel_entry):
    """One step's compute missing from rank 1's epoch 1 (its inputs and the AU computed from them agree): the
    compute is one step short of what the workload asks."""
    e = copy.deepcopy(kernel_entry)
    f = e["formula"]
    i = next(i for i in f["inputs"] if i["rank"] == 1 and i["epoch"] == 1)
    i["compute_after_first_s"] -= CT
    i["compute_s"] -= CT
    _report(f, _kernel_epochs(f["inputs"], "2.0.0", BATCH))
    row = _kernel_row(e)
    assert row["status"] == FAIL and "rank 1 epoch 1: the steps after the first" in row["detail"], row["detail"]


def test_kernel_first_step_in_window_inputs_fails(kernel_entry):
    """The first step's compute counted in compute_after_first_s (inputs and AU consistent): the first step then has
    no compute left, which the asked time refuses."""
    e = copy.deepcopy(kernel_entry)
    f = e["formula"]
    for i in f["inputs"]:
        i["compute_after_first_s"] = i["compute_s"]
    _report(f, _kernel_epochs(f["inputs"], "2.0.0", BATCH))
    row = _kernel_row(e)
    assert row["status"] == FAIL and "the first step: compute" in row["detail"], row["detail"]


def test_kernel_ranks_summed_fails(kernel_entry):
    """The epoch's AU the ranks' sum instead of their mean."""
    e = copy.deepcopy(kernel_entry)
    f = e["formula"]
    per_epoch = []
    for ep in sorted({i["epoch"] for i in f["inputs"]}):
        ins = [dm.block("2.0.0", i["steps"], i["span_s"], i["first_step_s"], i["compute_after_first_s"],
                        i["steps"] - 1, BATCH) for i in f["inputs"] if i["epoch"] == ep]
        per_epoch.append((sum(a for a, _ in ins), sum(t for _, t in ins)))
    _report(f, per_epoch)
    row = _kernel_row(e)
    assert row["status"] == FAIL and "DLIO 2.0.0's formula gives" in row["detail"], row["detail"]


def test_kernel_checkpoints_between_steps_fails(kernel_entry):
    """DLIO ends a block at each checkpoint between steps and weights the blocks by steps; the kernel keeps one
    window per epoch: named as a difference."""
    cfg = {**CFG, "workflow": {"train": True, "checkpoint": True}, "checkpoint": {"steps_between_checkpoints": 2}}
    row = _kernel_row(copy.deepcopy(kernel_entry), cfg)
    assert row["status"] == FAIL and "checkpoints between steps" in row["detail"]


def test_kernel_mutant_skip_compute_fails(kernel_data):
    """Live: the kernel's mutant skip-compute (rank 0 skips its 2nd training step's compute in epoch 1; its AU is
    computed from what it measured, so inputs and AU agree) fails on the compute its inputs record."""
    e = _kernel_train(kernel_data, "mutant", env={"H5DLIO_MUTATE": "skip-compute"})
    row = _kernel_row(e)
    assert row["status"] == FAIL and "rank 0 epoch 1: the steps after the first" in row["detail"], row["detail"]
    assert "rank 1" not in row["detail"] and "epoch 2" not in row["detail"]
