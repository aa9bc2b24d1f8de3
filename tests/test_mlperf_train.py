"""MLPerf Storage v3.0's training numbers (issue 27, item 5): the kernel's output.json "mlperf" block for a DLIO 3.x
training launch, checked against DLIO 3.x's own formulas (profiles/mlperf_train.py, written from
utils/statscounter.py) and against DLIO 3.x's own numbers of a measured tiny unet3d_b200 run (tests/data/
dlio3_unet3d_b200_metrics.json: DLIO's summary.json metric block and each rank's per-step compute and load+compute
times, AU and throughput, as DLIO wrote them). Each check is shown failing on a planted wrong formula: the first step
counted, the ranks' AU summed instead of averaged, the dataset rule without its 500-step floor."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from profiles import mlperf_train as mt
from reports.tables import mlperf_train_rows
from tests import kernel

DATA = Path(__file__).resolve().parent / "data" / "dlio3_unet3d_b200_metrics.json"
BATCH, COMPUTE = 7, 0.05


def v3train(data: Path, **kw) -> dict:
    return kernel.tiny(data, **{"dlio-version": "3.0.2", "format": "npz", "num-files-eval": 0, "shuffle": "off",
                                "num-samples-per-file": 1, "batch-size": BATCH, "num-files-train": 42,
                                "computation-time": COMPUTE, "epochs": 2, **kw})


@pytest.fixture(scope="module")
def kernel_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mlperf")
    gen = kernel.run(tmp, 2, v3train(tmp / "data", **{"generate-data": True, "train": False}), name="gen")
    assert gen.rc == 0, gen.proc.stderr
    r = kernel.run(tmp, 2, v3train(tmp / "data", **{"au": 0.85, "train": True}))
    assert r.rc == 0, r.proc.stderr
    return r.summary()


def test_kernel_block_is_dlio3s_formulas(kernel_run):
    """Every number of the kernel's block equals DLIO 3.x's formulas applied to the kernel's own per-rank inputs
    (steps, epoch time, first step, compute after it); the same inputs with the first step counted (the planted
    divergence) give another AU and throughput, so this check can fail."""
    m = kernel_run["mlperf"]
    assert "not a submission" in m["note"]
    assert len(m["inputs"]) == 2 * 2 and {i["steps"] for i in m["inputs"]} == {3}  # 42 files / (7 x 2 ranks)
    want = mt.from_kernel_inputs(m, 0.85)
    for k, v in want.items():
        if isinstance(v, list):
            assert len(m[k]) == len(v) and all(mt.close(a, b) for a, b in zip(m[k], v, strict=True)), k
        elif isinstance(v, str):
            assert m[k] == v, k
        elif "_stdev_" in k:  # a stdev of near-equal epochs carries its values' rounding as an absolute error, large
            # against itself: two epochs' AU stdev ~1e-4 % (a CI run: 0.000100783 vs 0.000100775 from the inputs)
            assert math.isclose(m[k], v, rel_tol=1e-3, abs_tol=1e-9 * abs(want[k.replace("_stdev_", "_mean_")])), \
                (k, m[k], v)
        else:
            assert mt.close(m[k], v), (k, m[k], v)
    planted = mt.from_kernel_inputs(m, 0.85, exclude_start=0)
    assert not mt.close(m["train_throughput_mean_samples_per_second"],
                        planted["train_throughput_mean_samples_per_second"], rel=1e-5)
    assert not mt.close(m["train_au_mean_percentage"], planted["train_au_mean_percentage"], rel=1e-4)


def test_kernel_block_physics(kernel_run):
    """Independent of the formulas' code: with compute the only cost per step (tiny files, warm cache), a rank's
    window throughput is AU x batch / (its compute per step), so the epoch's sum is ~ ranks x that (20%, a coarse
    check). The compute per step is the one the kernel measured (its "inputs"), not the configured 0.05 s: on a
    loaded machine (CI, load 17 on 2 cores) a sleep overshoots, which moves AU and throughput alike. The threshold is
    the workload's au x 100 and AU meets it as the mean says."""
    m = kernel_run["mlperf"]
    epochs = sorted({i["epoch"] for i in m["inputs"]})
    for e, au, thr in zip(epochs, m["train_au_percentage"], m["train_throughput_samples_per_second"], strict=True):
        rows = [i for i in m["inputs"] if i["epoch"] == e]
        per_step = sum(i["compute_after_first_s"] for i in rows) / sum(i["steps"] - 1 for i in rows)
        assert per_step >= COMPUTE * 0.99, "the kernel's emulated compute is at least what was asked"
        assert thr == pytest.approx(len(rows) * au / 100 * BATCH / per_step, rel=0.2)
    assert m["train_au_expectation_percentage"] == pytest.approx(85.0)
    assert m["train_au_meet_expectation"] == ("success" if m["train_au_mean_percentage"] >= 85.0 else "fail")
    assert m["train_io_mean_MB_per_second"] == pytest.approx(m["train_throughput_mean_samples_per_second"] * 65536
                                                             / 2**20)


def test_kernel_dataset_rule(kernel_run):
    """mlpstorage's rule, by hand for this shape: 42 files // (7 x 2) = 3 steps < 500, so 500 x 7 x 2 = 7000 files by
    steps; by memory 1 host x MemTotal x 5 / 64 KiB; the larger one; 42 files fail it."""
    r = kernel_run["mlperf"]["dataset_rule"]
    mem_kb = next(int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines()
                  if x.startswith("MemTotal:"))
    assert r["num_hosts"] == 1 and r["host_memory_GB"] == pytest.approx(mem_kb / 2**20)
    assert r["steps_per_epoch"] == 3 and r["min_files_by_steps"] == 7000
    assert r["min_files_by_memory"] == pytest.approx(mem_kb * 1024 * 5 / 65536)
    assert r["min_files"] == pytest.approx(max(7000, mem_kb * 1024 * 5 / 65536)) and r["met"] is False
    assert mt.dataset_rule(42, 1, 7, 2, 1, None, 65536)["min_files"] == 7000  # the 500-step floor alone
    assert mt.dataset_rule(7000, 1, 7, 2, 1, None, 65536)["met"] is True


def test_no_block_for_dlio2(tmp_path):
    """DLIO 2.x's entries compute AU and throughput otherwise (their statscounter): no MLPerf v3.0 block."""
    gen = kernel.run(tmp_path, 1, kernel.tiny(tmp_path / "d", **{"generate-data": True, "train": False}), name="g")
    assert gen.rc == 0, gen.proc.stderr
    r = kernel.run(tmp_path, 1, kernel.tiny(tmp_path / "d", train=True))
    assert r.rc == 0, r.proc.stderr
    assert "mlperf" not in r.summary()


def dlio_record() -> dict:
    return json.loads(DATA.read_text())


def test_formulas_reproduce_dlio3s_own_numbers():
    """DLIO 3.x's measured run: each rank's throughput re-derived from its own compute list and AU with the first
    step excluded equals the throughput DLIO wrote (1e-6); with the first step included it does not. The per-epoch
    aggregation (AU: the ranks' mean, throughput: their sum) and the summary (mean, population stdev, MB/s) of those
    per-rank values reproduce summary.json; the ranks' AU summed (planted) does not."""
    rec = dlio_record()
    bs, rl, au = rec["batch_size"], rec["record_length"], rec["au"]
    aus, thrs, planted_aus = [], [], []
    for e in sorted(rec["ranks"][0]["epochs"], key=int):
        ranks = [r["epochs"][e] for r in rec["ranks"]]
        for r in ranks:
            got = mt.dlio_rank_window(r["compute"], r["proc"], r["au"], bs)
            assert got == pytest.approx(r["throughput"], rel=1e-6)
            wrong = mt.dlio_rank_window(r["compute"], r["proc"], r["au"], bs, exclude_start=0)
            assert wrong != pytest.approx(r["throughput"], rel=1e-3)
        aus.append(sum(r["au"] for r in ranks) / len(ranks))
        planted_aus.append(sum(r["au"] for r in ranks))
        thrs.append(sum(r["throughput"] for r in ranks))
    mine, dlio = mt.summarize(aus, thrs, rl, au), rec["summary_metric"]
    for k in ("train_au_mean_percentage", "train_au_stdev_percentage", "train_throughput_mean_samples_per_second",
              "train_throughput_stdev_samples_per_second", "train_io_mean_MB_per_second",
              "train_io_stdev_MB_per_second"):
        assert mt.close(mine[k], dlio[k], rel=1e-9), (k, mine[k], dlio[k])
    assert mine["train_au_meet_expectation"] == dlio["train_au_meet_expectation"]
    assert not mt.close(mt.summarize(planted_aus, thrs, rl, au)["train_au_mean_percentage"],
                        dlio["train_au_mean_percentage"])


def test_dlio_side_block_and_report_rows():
    """The DLIO side's block (profiles/timing/ from summary.json + the launch's config) carries DLIO's numbers,
    its threshold and mlpstorage's rule; the report's training rows put both sides side by side."""
    rec = dlio_record()
    summary = {"metric": rec["summary_metric"], "num_files_train": 28, "num_samples_per_file": 1,
               "num_accelerators": 2, "num_hosts": 1, "host_memory_GB": [rec["host_memory_GB"]]}
    cfg = {"workload": {"dataset": {"record_length_bytes": rec["record_length"]},
                        "reader": {"batch_size": rec["batch_size"]}, "metric": {"au": rec["au"]}}}
    d = mt.from_dlio(summary, cfg)
    assert d["train_au_mean_percentage"] == rec["summary_metric"]["train_au_mean_percentage"]
    assert d["train_au_expectation_percentage"] == pytest.approx(90.0)
    assert d["dataset_rule"]["min_files_by_steps"] == 7000 and d["dataset_rule"]["met"] is False
    assert mt.from_dlio({"metric": {"checkpoint_size_GB": 1.0}}, cfg) is None
    k = dict(rec["kernel_mlperf"])
    rows = {r[0]: r[1:] for r in mlperf_train_rows({"dlio": d, "kernel": k})}
    assert rows["AU threshold (%)"][:2] == ["90.000", "90.000"]
    assert rows["dataset-size rule met"][:2] == ["no", "no"]
    au_row = rows["AU, mean (%; first step excluded)"]
    assert au_row[0] == f"{d['train_au_mean_percentage']:.3f}" and au_row[1] == f"{k['train_au_mean_percentage']:.3f}"
    assert not math.isnan(float(au_row[1]))


def test_mlperf3_bench_section_skips_with_its_reason(tmp_path, monkeypatch):
    """make bench's MLPerf v3.0 section (bench/perf/mlperf3.py) needs DLIO 3.x's venv and is not in the tiny preset:
    either is a named skip under "Not measured" in results.md, not a failure."""
    from bench.perf import mlperf3, report
    from bench.perf.common import Context
    monkeypatch.setenv("H5DLIO_DLIO3_VENV", str(tmp_path / "none"))
    preset = {"mlperf3": {"epoch_scale": "tiny_odirect", "ckpt_scale": "tiny", "ranks": 2, "repeat": 1}}
    sec = mlperf3.measure(Context(scale="small", preset=preset, out=tmp_path, work=tmp_path / "w", dlio_venv=None))
    assert set(sec) == {"skipped"} and mlperf3.REVISION in sec["skipped"]
    md = report.markdown({"meta": {"date": "d", "scale": "small", "preset": {}}, "sections": {"mlperf3": sec}}, {})
    assert "- mlperf3: skipped: no venv of MLCommons DLIO 3.x" in md
    sec = mlperf3.measure(Context(scale="tiny", preset={}, out=tmp_path, work=tmp_path / "w", dlio_venv=None))
    assert sec["skipped"].startswith("not in the tiny preset")

