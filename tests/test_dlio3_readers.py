"""MLCommons DLIO 3.x's machine-sized readers (issue 36 item 4): a read_threads of 1 becomes
min(max(1, CPUs // ranks per node), max(1, DLIO_MAX_AUTO_THREADS or 8)) reader processes when that is > 1
(f6796ed dlio_benchmark/utils/config.py:853-876, derive_configurations). The expected counts below are worked out by
hand from that formula, not taken from the kernel or the model; the kernel (bench/src/autoread.c) and the analytic
model (validate/model.py dlio3_read_threads) must each give them. The 2.0.x entries read read_threads as given."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests import kernel
from validate import model

CAP = "DLIO_MAX_AUTO_THREADS"

# (cpus, ranks per node, DLIO_MAX_AUTO_THREADS or None, read_threads asked, readers by hand)
BY_HAND = [
    (16, 4, None, 1, 4),     # 16 // 4 = 4 < 8
    (16, 1, None, 1, 8),     # 16 > the default cap 8
    (64, 1, "3", 1, 3),      # the cap set
    (2, 1, None, 1, 2),      # this machine, one rank: DLIO reads with 2 processes
    (2, 2, None, 1, 1),      # 2 // 2 = 1: not > 1, kept
    (3, 2, None, 1, 1),      # 3 // 2 = 1
    (5, 2, None, 1, 2),      # 5 // 2 = 2
    (16, 1, "0", 1, 1),      # max(1, 0) = 1: min(16, 1) = 1, kept
    (16, 1, "-5", 1, 1),     # max(1, -5) = 1
    (64, 1, " 1_2 ", 1, 12),  # int(" 1_2 ") = 12, as Python reads it
    (64, 1, "100", 1, 64),   # cap above the CPUs: the CPUs
    (16, 2, None, 4, 4),     # not 1: a YAML value kept as intended
    (16, 2, None, 0, 0),     # 0: reads in the rank, kept
    (16, 20, None, 1, 1),    # more ranks than CPUs: max(1, 0) = 1
]


def dry(entry: str, asked: int, cpus: int, ranks: int, cap: str | None,
        extra: tuple = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != CAP}
    if cap is not None:
        env[CAP] = cap
    argv = [kernel.BIN, "--dry-run", "--ranks", str(ranks), "--set", f"dlio-version={entry}", "--set", "train=true",
            "--set", f"read-threads={asked}", "--set", f"cpu-count={cpus}", "--set", "num-files-train=1000", *extra]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("cpus,rpn,cap,asked,want", BY_HAND)
def test_kernel_and_model_size_readers_as_dlio3(cpus, rpn, cap, asked, want):
    """--dry-run --ranks N: N ranks on one node (the planted inputs); the resolved read-threads is DLIO's count."""
    p = dry("3.0.2", asked, cpus, rpn, cap)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["read-threads"] == want
    assert model.dlio3_read_threads(asked, cpus, rpn, None if cap is None else int(cap.replace("_", ""))) == want


def test_ranks_per_node_key_and_mlpstorage_entry():
    """key ranks-per-node plants the count MPI would give (16 CPUs // 2 = 8, not 16 // 4 = 4); the 3.0.2+mlpstorage
    entry (mlpstorage installs DLIO f6796ed unchanged) sizes alike."""
    p = dry("3.0.2", 1, 16, 4, None, ("--set", "ranks-per-node=2"))
    assert p.returncode == 0 and json.loads(p.stdout)["read-threads"] == 8, p.stderr
    p = dry("3.0.2+mlpstorage", 1, 16, 4, None)
    assert p.returncode == 0 and json.loads(p.stdout)["read-threads"] == 4, p.stderr


@pytest.mark.parametrize("entry", ["2.0.0", "2.0.0-52", "2.0.1", "2.0.1-17"])
def test_dlio2_entries_read_read_threads_as_given(entry):
    """The 2.0.x releases have no auto-sizing (their utils/config.py has no DLIO_MAX_AUTO_THREADS): 1 stays 1 on 64
    CPUs, and the variable, even one int() refuses, is not read."""
    p = dry(entry, 1, 64, 1, "x")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["read-threads"] == 1


def test_a_cap_python_cannot_read_is_refused_naming_it():
    """DLIO 3.x's int(os.environ[...]) raises whatever read_threads is (utils/config.py:862 runs first): exit 2."""
    p = dry("3.0.2", 4, 2, 1, "eight")
    assert p.returncode == 2 and CAP in p.stderr, (p.returncode, p.stderr)


def test_kernel_run_sizes_by_mpi_ranks_per_node_and_says_so(tmp_path):
    """Two ranks on this node (MPI_COMM_TYPE_SHARED counts 2), 8 planted CPUs, cap 8 -> 8 // 2 = 4 reader processes:
    output.json records the asked and effective counts and their inputs, the summary says it, and each rank reads
    what the model gives 4 workers (pre-warm: prefetch_factor ceil(2 / 4) = 1, so batch 0 only). Negative control:
    the model at read_threads 1 (2 pre-warm batches) is not what the kernel read."""
    sets = kernel.tiny(tmp_path / "data", **{"dlio-version": "3.0.2", "num-files-eval": 0, "shuffle": "off",
                                             "num-files-train": 16, "num-samples-per-file": 1, "batch-size": 2,
                                             "read-threads": 1, "epochs": 1, "random-seed": 7,
                                             "generate-data": True, "train": True, "cpu-count": 8, "quiet": False})
    environ = {k: v for k, v in os.environ.items() if k != CAP}
    r = kernel.run(tmp_path, 2, sets, environ=environ)
    assert r.rc == 0, r.proc.stderr
    s = r.summary()
    assert s["read_threads"] == 4
    auto = s["read_threads_auto"]
    assert {k: auto[k] for k in ("asked", "effective", "applied", "cpu_count", "cpu_count_from", "ranks_per_node",
                                 "ranks_per_node_from", "cap")} == {
        "asked": 1, "effective": 4, "applied": True, "cpu_count": 8, "cpu_count_from": "key cpu-count",
        "ranks_per_node": 2, "ranks_per_node_from": "MPI_COMM_TYPE_SHARED", "cap": 8}
    assert "readers   4 per rank" in r.proc.stdout, r.proc.stdout
    cfg = {"dataset": {"num_files_train": 16, "num_samples_per_file": 1},
           "reader": {"batch_size": 2, "read_threads": 1, "prefetch_size": 2},
           "train": {"epochs": 1, "seed": 7, "seed_change_epoch": True}}
    machine = {"cpu_count": 8, "ranks_per_node": 2, "cap": 8}
    want, unsized = model.workload_reads(cfg, 2, "3.0.2", machine), model.workload_reads(cfg, 2, "3.0.2")
    for rank in range(2):
        pre = [int(x["sample"]) for x in r.samples(rank) if x["use"] == "prewarm" and x["epoch"] == "1"]
        assert pre == want[rank][0]["samples"] and len(pre) == 2, (rank, pre)
        assert pre != unsized[rank][0]["samples"]  # the negative control: 1 worker pre-warms 2 batches
    assert all(len(seg["workers"]) == 4 for seg in want[0])


def test_no_sizing_without_auto_entry_record():
    """The model with no machine (a run from before the kernel sized its readers) reads read_threads as given."""
    cfg = {"dataset": {"num_files_train": 8}, "reader": {"batch_size": 2, "read_threads": 1}, "train": {}}
    assert model.dlio3_sized(cfg, None) is cfg
    assert model.dlio3_sized(cfg, {"cpu_count": 2, "ranks_per_node": 1, "cap": None})["reader"]["read_threads"] == 2


def test_harness_passes_the_cap_to_both_sides_alike(monkeypatch):
    """The user's DLIO_MAX_AUTO_THREADS reaches every launch's ranks by name, DLIO's and the kernel's; unset, no
    launch gets one (both sides cap at 8)."""
    from harness import plan
    monkeypatch.setenv(CAP, "3")
    assert plan._auto_threads_env({"A": "1"}) == {"A": "1", CAP: "3"}
    monkeypatch.delenv(CAP)
    assert plan._auto_threads_env({"A": "1"}) == {"A": "1"}
