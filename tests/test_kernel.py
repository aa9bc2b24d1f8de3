"""End-to-end tests of the h5dlio kernel under mpirun (1-4 ranks, oversubscribed on small machines)."""
from __future__ import annotations

import subprocess
from collections import Counter, defaultdict

import numpy as np
import pytest
from kernel import BIN, dlio_order, h5tool, kernel_info, run, tiny


def test_dlio_order_by_hand():
    """kernel.dlio_order (the statement of DLIO's sampler the order tests compare with) on cases small enough to work
    out: 8 samples, 2 ranks, batch 2 -> rank 1 owns 4-7 and takes 2 steps; seed 123 permutes a 4-list as numpy's
    legacy MT19937 does (the second epoch shuffles the first's order)"""
    rng = np.random.RandomState(123)
    first = rng.permutation(4).tolist()
    rng = np.random.RandomState(123)
    second = [first[i] for i in rng.permutation(4)]
    assert dlio_order(8, 2, 2, 2)[1] == [[4 + i for i in first], [4 + i for i in second]]
    assert [len(x[0]) for x in dlio_order(32, 3, 2, 1).values()] == [10, 10, 10]   # 11, 11, 10 owned; 5 steps each
    assert [len(x[0]) for x in dlio_order(8, 3, 1, 1).values()] == [2, 2, 2]      # 3, 3, 2 owned; 2 steps each
    assert dlio_order(3, 1, 4, 1)[0] == [[]]                                      # one step asked, no full batch


def train_samples(r, rank, phase="train"):
    """epoch -> samples consumed by steps, in order"""
    per = defaultdict(list)
    for row in r.samples(rank):
        if row["phase"] == phase and row["use"] == "step":
            per[int(row["epoch"])].append(int(row["sample"]))
    return per


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_dlio_sample_order_equals_the_sampler_model(tmp_path, ranks):
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True})
    r = run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    total = 8 * 4
    exp = dlio_order(total, ranks, 2, 2)
    exp_eval = dlio_order(2 * 4, ranks, 1, 2)
    for rank in range(ranks):
        got = train_samples(r, rank)
        assert [got[e] for e in (1, 2)] == exp[rank]
        got_e = train_samples(r, rank, "eval")
        assert [got_e[e] for e in (1, 2)] == exp_eval[rank]
    for epoch in (1, 2):
        seen = Counter(s for rank in range(ranks) for s in train_samples(r, rank)[epoch])
        assert max(seen.values()) == 1, "a training sample was read twice in one epoch"
        if total % (ranks * 2) == 0:
            assert sorted(seen) == list(range(total)), "every training sample once per epoch"


def test_counts_equal_the_analytic_model(tmp_path):
    ranks, rl = 2, 65536
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True, "epochs": 3,
                                      "record-length": rl})
    r = run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    s = r.summary()
    # 32 training samples, 2 ranks, batch 2: floor(32 / 2 / 2) = 8 steps of 2 samples per rank, 32 per epoch; each
    # one open and one read of a 256 x 256 sample (DLIO: int(sqrt(record_length)) squared); evaluation: 8 samples,
    # batch 1, 4 steps per rank
    per_epoch, sample = 2 * 8 * 2, 256 * 256
    assert [e["opens"] for e in s["train"]["epochs"]] == [per_epoch] * 3
    assert [e["reads"] for e in s["train"]["epochs"]] == [per_epoch] * 3
    assert [e["bytes"] for e in s["train"]["epochs"]] == [per_epoch * sample] * 3
    assert [e["opens"] for e in s["eval"]["epochs"]] == [2 * 4] * 3
    assert s["generate"]["files"] == 10
    assert s["generate"]["bytes"] == 10 * 4 * sample


def test_eval_cadence_and_step_cap(tmp_path):
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True, "epochs": 5,
                                      "eval-after-epoch": 2, "epochs-between-evals": 2, "total-training-steps": 3})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    s = r.summary()
    assert [e["epoch"] for e in s["eval"]["epochs"]] == [2, 4]   # after epoch 2, then every 2nd of 5
    assert [e["steps_per_rank_max"] for e in s["train"]["epochs"]] == [3] * 5
    assert [e["opens"] for e in s["train"]["epochs"]] == [3 * 2 * 2] * 5


def test_logvfd_trace_follows_the_sample_order(tmp_path):
    rl = 65536
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "record-length": rl, "log-vfd": True})
    r = run(tmp_path, 2, sets, log=True)
    assert r.rc == 0, r.proc.stderr
    for rank in range(2):
        recs = r.logvfd(rank)
        draws = [int(a) for a, b, n, mem, op in recs if mem == "H5FD_MEM_DRAW" and op == "Read"]
        expected = [2048 + (s % 4) * rl for e in (1, 2) for s in train_samples(r, rank)[e]]
        assert draws == expected
        opens = [x for x in recs if x[:2] == ("0", "8") and x[3:] == ("H5FD_MEM_SUPER", "Allocated")]
        assert len(opens) == len(expected)
        # the thesis' Table 6.1 block per open (metadata addresses of a DLIO/h5py file)
        meta = Counter((a, b, mem) for a, b, n, mem, op in recs if op == "Read" and mem in ("H5FD_MEM_OHDR",
                                                                                             "H5FD_MEM_LHEAP",
                                                                                             "H5FD_MEM_BTREE"))
        n = len(expected)
        assert meta == {("96", "607", "H5FD_MEM_OHDR"): n, ("680", "1191", "H5FD_MEM_LHEAP"): n,
                        ("136", "679", "H5FD_MEM_BTREE"): n, ("1072", "1399", "H5FD_MEM_BTREE"): n,
                        ("800", "1311", "H5FD_MEM_OHDR"): n}


def test_hdf5_driver_env_gives_the_same_trace(tmp_path):
    if kernel_info()["hdf5"] < (1, 14, 0):
        pytest.skip("HDF5 < 1.14 ignores HDF5_DRIVER (the kernel's --log-vfd sets the Log VFD in code instead)")
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": False, "evaluation": False})
    assert run(tmp_path, 1, sets, name="gen").rc == 0
    sets = tiny(tmp_path / "data", train=True, epochs=1)
    a = run(tmp_path, 2, {**sets, "log-vfd": True}, log=True, name="flag")
    b = run(tmp_path, 2, sets, log=True, env={"HDF5_DRIVER": "log"}, name="env")
    assert a.rc == 0 and b.rc == 0, a.proc.stderr + b.proc.stderr
    for rank in range(2):
        assert a.logvfd(rank) and a.logvfd(rank) == b.logvfd(rank)


def test_reader_processes_read_the_same_multiset(tmp_path):
    """read-threads > 0: PyTorch worker semantics; the per-rank multiset of Log VFD records equals read-threads=0."""
    gen = tiny(tmp_path / "data", **{"generate-data": True, "train": False})
    assert run(tmp_path, 1, gen, name="gen").rc == 0
    base = tiny(tmp_path / "data", train=True, evaluation=True)
    a = run(tmp_path, 2, {**base, "read-threads": 0, "log-vfd": True}, log=True, name="rt0")
    b = run(tmp_path, 2, {**base, "read-threads": 3, "log-vfd": True}, log=True, name="rt3")
    assert a.rc == 0 and b.rc == 0, a.proc.stderr + b.proc.stderr
    for rank in range(2):
        assert Counter(a.logvfd(rank)) == Counter(b.logvfd(rank))
        assert train_samples(a, rank) == train_samples(b, rank)


def test_reader_processes_prefetch_past_a_step_cap(tmp_path):
    """With total-training-steps capping an epoch, PyTorch workers have already read prefetch_factor x workers
    batches ahead; those reads happen (and are counted apart)."""
    gen = tiny(tmp_path / "data", **{"generate-data": True, "train": False})
    assert run(tmp_path, 1, gen, name="gen").rc == 0
    sets = tiny(tmp_path / "data", train=True, epochs=1, **{"total-training-steps": 2, "read-threads": 2,
                                                            "prefetch-size": 2})
    r = run(tmp_path, 1, sets)
    assert r.rc == 0, r.proc.stderr
    e = r.summary()["train"]["epochs"][0]
    # 32 samples, batch 2: 16 batches; window = ceil(2/2) * 2 = 2; consumed 2 -> issued min(16, 2 + 2) = 4
    assert e["samples"] == 4 and e["samples_prefetched_unused"] == 4 and e["opens"] == 8


def test_h5bench_ordering_reads_every_sample_once_with_any_rank_count(tmp_path):
    """h5bench kernel bugs 1 and 2: overlapping rank ranges / unread tail, and ranks disagreeing on the shuffle
    because one rand() stream also served the compute jitter."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "ordering": "h5bench", "epochs": 3,
                                      "num-files-train": 7, "seed-change-epoch": True, "computation-time": 0.001,
                                      "computation-time-stdev": 0.001, "preprocess-time": 0.0005,
                                      "preprocess-time-stdev": 0.0005})
    r = run(tmp_path, 3, sets)
    assert r.rc == 0, r.proc.stderr
    total = 7 * 4
    orders = []
    for epoch in (1, 2, 3):
        seen = Counter(s for rank in range(3) for s in train_samples(r, rank)[epoch])
        assert sorted(seen.elements()) == list(range(total)), f"epoch {epoch}: not every sample exactly once"
        orders.append(train_samples(r, 0)[epoch])
    assert orders[0] != orders[1] != orders[2], "seed-change-epoch must change the permutation"


@pytest.mark.slow
def test_file_larger_than_4gib(tmp_path):
    """h5bench kernel bug 3: byte offsets used as row indices, uint32 overflow past 4 GiB."""
    rl = 1100 * 1024 * 1024  # 4 samples -> a 4.3 GiB file
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "record-length": rl,
                                      "num-files-train": 1, "num-files-eval": 0, "batch-size": 1, "epochs": 1,
                                      "shuffle": "off", "generation-buffer-size": 64 << 20, "log-vfd": True})
    r = run(tmp_path, 1, sets, log=True, timeout=600)
    assert r.rc == 0, r.proc.stderr
    f = tmp_path / "data" / "train" / "img_0_of_1.hdf5"
    d = 33962   # DLIO: each sample int(sqrt(1100 MiB)) = 33962 rows of 33962 bytes
    assert f.stat().st_size > 4 * 2**30
    draws = [(int(a), int(n)) for a, b, n, mem, op in r.logvfd(0) if mem == "H5FD_MEM_DRAW"]
    assert draws == [(2048 + k * int(d) ** 2, int(d) ** 2) for k in range(4)]
    # the last rows of the last sample hold generated bytes, not the fill value
    out = subprocess.run([h5tool("h5dump"), "-d", "records", "-s", f"3,{int(d) - 1},0", "-c", "1,1,256", "-y", "-w",
                          "0", str(f)], capture_output=True, text=True, check=True).stdout
    data_lines = out.split("DATA {", 1)[1]
    values = [int(x) for x in data_lines.replace(",", " ").split() if x.isdigit()]
    assert len(values) >= 256 and sum(values) > 0


def test_reader_processes_leave_nothing_behind(tmp_path):
    """h5bench kernel bugs 4 and 5: children forked after MPI_Init exiting without finalize; worker pipes closed
    under the wrong flag. Our reader processes are forked before MPI_Init and exit when the rank closes them."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": False, "read-threads": 2,
                                      "log-vfd": True})
    r = run(tmp_path, 2, sets, log=True)
    assert r.rc == 0, r.proc.stderr
    for rank in range(2):
        draws = [x for x in r.logvfd(rank) if x[3] == "H5FD_MEM_DRAW"]
        assert len(draws) == 2 * 16  # reads in the reader processes are seen by the profiler
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert left == []


@pytest.mark.parametrize("ranks", [2, 4])
def test_subfiling_no_hang(tmp_path, ranks):
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True, "subfiling": True})
    r = run(tmp_path, ranks, sets, timeout=180)
    if r.rc == 2 and "Subfiling VFD" in r.proc.stderr:
        pytest.skip("HDF5 built without the Subfiling VFD: " + r.proc.stderr.strip().splitlines()[0])
    assert r.rc == 0, r.proc.stderr
    s = r.summary()
    assert sum(e["opens"] for e in s["train"]["epochs"]) == 2 * 32


def test_collective_metadata_and_data(tmp_path):
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True,
                                      "collective-meta": True, "collective-data": True})
    r = run(tmp_path, 2, sets, timeout=180)
    assert r.rc == 0, r.proc.stderr
    assert [e["opens"] for e in r.summary()["train"]["epochs"]] == [32, 32]


def test_metrics_as_dlio_computes_them(tmp_path):
    """h5bench kernel bug 7: per-rank values labelled like totals, requested instead of measured compute, no AU,
    units changing between rows."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "computation-time": 0.02,
                                      "output-ranks-data": True})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    s = r.summary()
    import csv
    rows = list(csv.DictReader(open(r.out / "output.ranks.csv")))
    for e in s["train"]["epochs"]:
        mine = [float(x["throughput_samples_per_s"]) for x in rows if x["phase"] == "train" and
                int(x["epoch"]) == e["epoch"]]
        assert e["throughput_samples_per_s"] == pytest.approx(sum(mine), rel=1e-6)
        assert e["compute_s_rank_mean"] >= 8 * 0.02  # measured sleeps, at least what was asked
        assert 0 < e["au_percent"] <= 100
    tr = s["train"]
    assert tr["dlio_io_mean_MB_per_s"] == pytest.approx(tr["throughput_mean_samples_per_s"] * 65536 / 2**20)
    units = {}
    for line in (r.out / "output.csv").read_text().splitlines()[1:]:
        name = line.split(",")[0]
        unit = line.rsplit(",", 1)[1].strip().strip('"')
        units[name] = {u.strip() for u in unit.split(",")} if unit else set()
        assert len(units[name]) <= 1, f"row {name!r} mixes units {units[name]}"
    for row in ("train total size", "train size per rank"):
        assert units[row] == {"MiB"}
    for row in ("train raw read rate per epoch", "train avg observed rate", "train io avg"):
        assert units[row] == {"MiB/s"}


def test_generation_memory_is_bounded_by_the_buffer(tmp_path):
    """h5bench kernel bug 8: a 2 GiB random buffer per generator. One rank as a singleton (no mpirun), so its
    peak RSS is ours to read."""
    import sys

    from kernel import BIN
    argv = [BIN, "--set", f"data-folder={tmp_path / 'data'}", "--set", "generate-data=true", "--set",
            "record-length=67108864", "--set", "num-files-train=2", "--set", "num-files-eval=0", "--set",
            "generation-buffer-size=8388608", "--set", f"output-folder={tmp_path}", "--set", "quiet=true"]
    # a fresh Python parent, so RUSAGE_CHILDREN holds this one run only
    probe = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=300)
    rc, peak_kib = map(int, p.stdout.split())
    assert rc == 0, p.stderr
    assert (tmp_path / "data" / "train" / "img_1_of_2.h5").stat().st_size > 4 * 67108864
    # 8 MiB buffer + libraries (MPI, HDF5): far below one 64 MiB sample, let alone DLIO's 2 GiB
    assert peak_kib < 60 * 1024, f"peak RSS {peak_kib} KiB for an 8 MiB buffer"


def test_keep_files_false_deletes_only_what_it_generated(tmp_path):
    data = tmp_path / "data"
    (data / "train").mkdir(parents=True)
    foreign = data / "train" / "notes.txt"
    foreign.write_text("not ours")
    sets = tiny(data, **{"generate-data": True, "train": True, "keep-files": False, "reuse-data-folder": True})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    assert foreign.read_text() == "not ours"
    assert sorted(p.name for p in (data / "train").iterdir()) == ["notes.txt"]
    assert not (data / "valid").exists(), "the valid/ folder this run created (and emptied) is removed"


def test_generation_refuses_to_overwrite(tmp_path):
    sets = tiny(tmp_path / "data", **{"generate-data": True})
    assert run(tmp_path, 1, sets).rc == 0
    f = tmp_path / "data" / "train" / "img_0_of_8.hdf5"
    before = f.stat().st_mtime_ns
    r = run(tmp_path, 2, sets)
    assert r.rc == 2 and "overwrite" in r.proc.stderr and str(f) in r.proc.stderr
    assert "MPI_ABORT" not in r.proc.stderr
    assert f.stat().st_mtime_ns == before


def test_dataset_layout_is_dlio_s(tmp_path):
    """Names, datasets, shapes, dtypes and layout of DLIO 2.0.0's h5py generator (records at 2048, labels after)."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "record-length": 1048576, "record-length-stdev": 524288,
                                      "num-files-train": 3, "num-files-eval": 1})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    names = sorted(p.relative_to(tmp_path / "data").as_posix() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert "h5dlio-generation.json" in names  # the kernel's completion record (docs/kernel.md), no DLIO file
    names.remove("h5dlio-generation.json")
    assert names == ["train/img_0_of_3.hdf5", "train/img_1_of_3.hdf5", "train/img_2_of_3.hdf5", "valid/img_0_of_1.hdf5"]
    import math

    import numpy as np
    np.random.seed(10)
    dims = [max(int(d), 1) for d in np.random.normal(1024, 524288 / 2 / math.sqrt(1048576), 8)]
    for k, n in enumerate(names):
        h = subprocess.run([h5tool("h5dump"), "-H", "-p", str(tmp_path / "data" / n)], capture_output=True, text=True,
                           check=True).stdout
        assert f'DATASPACE  SIMPLE {{ ( 4, {dims[2 * k]}, {dims[2 * k + 1]} )' in h
        assert "H5T_STD_U8LE" in h and "H5T_STD_I64LE" in h and "DATASPACE  SIMPLE { ( 4 ) / ( 4 ) }" in h
        rec = h.split('DATASET "records"')[1]
        assert "CONTIGUOUS" in rec and "OFFSET 2048" in rec


@pytest.mark.parametrize("case,sets,words", [
    ("unknown key", {"batch-sise": 2}, ["batch-sise", "batch-size"]),
    ("bad value", {"epochs": "many"}, ["'epochs'", "many"]),
    ("missing dataset", {"train": True, "data-folder": "/nonexistent/h5dlio"}, ["/nonexistent/h5dlio", "data-folder"]),
])
def test_bad_input_exits_2(tmp_path, case, sets, words):
    r = run(tmp_path, 2, {**tiny(tmp_path / "data", train=True), **sets}, timeout=60)
    assert r.rc == 2, r.proc.stderr
    for w in words:
        assert w in r.proc.stderr


def _dataset(tmp_path):
    gen = tiny(tmp_path / "data", **{"generate-data": True, "train": False})
    assert run(tmp_path, 1, gen, name="gen").rc == 0
    return tmp_path / "data" / "train" / "img_3_of_8.hdf5"


def test_foreign_hdf5_file_exits_2_naming_it(tmp_path):
    """An HDF5 file without the expected dataset (here: the dataset name does not match) is bad input."""
    _dataset(tmp_path)
    r = run(tmp_path, 2, tiny(tmp_path / "data", train=True, **{"records-dataset-name": "nope"}), timeout=60)
    assert r.rc == 2, r.proc.stderr
    assert "nope" in r.proc.stderr and "/data/train/img_" in r.proc.stderr and "rank" in r.proc.stderr


def test_truncated_file_exits_2_naming_it(tmp_path):
    f = _dataset(tmp_path)
    with open(f, "r+b") as fh:
        fh.truncate(1000)
    r = run(tmp_path, 2, tiny(tmp_path / "data", train=True), timeout=60)
    assert r.rc == 2, r.proc.stderr
    assert str(f) in r.proc.stderr and "rank" in r.proc.stderr


def test_reader_process_failure_ends_the_job(tmp_path):
    f = _dataset(tmp_path)
    f.write_bytes(b"garbage" * 100)
    r = run(tmp_path, 2, tiny(tmp_path / "data", train=True, **{"read-threads": 2}), timeout=60)
    assert r.rc == 2, r.proc.stderr
    assert "reader process" in r.proc.stderr and str(f) in r.proc.stderr


def test_per_rank_rates_as_defined(tmp_path):
    """The per-rank observed and raw read rates, written by the kernel (so reports read them instead of computing
    them), recomputed by hand from each row's own columns; the JSON `ranks` lists sum each rank's rows of a phase."""
    import csv
    import math
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True, "epochs": 3,
                                      "computation-time": 0.002, "preprocess-time": 0.0005,
                                      "output-ranks-data": True})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    rows = list(csv.DictReader(open(r.out / "output.ranks.csv")))
    assert len(rows) == 2 * (3 + 3) and list(rows[0])[-2:] == ["raw_read_rate_bytes_per_s", "observed_rate_bytes_per_s"]
    for row in rows:
        x = {k: float(v) for k, v in row.items() if k not in ("phase", "raw_read_rate_bytes_per_s",
                                                                "observed_rate_bytes_per_s")}
        busy = x["observed_s"] - x["compute_s"] - x["preprocess_s"]
        for col, den in (("raw_read_rate_bytes_per_s", x["raw_read_s"]), ("observed_rate_bytes_per_s", busy)):
            if den > 0:
                assert float(row[col]) == pytest.approx(x["bytes"] / den, rel=1e-5), (col, row)
            else:
                assert row[col] == "", (col, row)
    s = r.summary()
    for phase in ("train", "eval"):
        got = s[phase]["ranks"]
        assert [g["rank"] for g in got] == [0, 1]
        for g in got:
            mine = [row for row in rows if row["phase"] == phase and int(row["rank"]) == g["rank"]]
            assert g["epochs"] == len(mine) == 3
            tot = {k: sum(float(row[k]) for row in mine) for k in ("bytes", "raw_read_s", "observed_s", "compute_s",
                                                                   "preprocess_s", "metadata_s")}
            for k, v in tot.items():
                assert g[k] == pytest.approx(v, rel=1e-6, abs=1e-8), (phase, k)
            assert g["raw_read_rate_bytes_per_s"] == pytest.approx(tot["bytes"] / tot["raw_read_s"], rel=1e-5)
            busy = tot["observed_s"] - tot["compute_s"] - tot["preprocess_s"]
            if busy > 0:
                assert g["observed_rate_bytes_per_s"] == pytest.approx(tot["bytes"] / busy, rel=1e-5)
            else:
                assert g["observed_rate_bytes_per_s"] is None
        # IOR's phase time: the latest end minus the earliest start, so never shorter than any rank's own time
        for e in s[phase]["epochs"]:
            mine = [float(row["observed_s"]) for row in rows
                    if row["phase"] == phase and int(row["epoch"]) == e["epoch"]]
            assert e["observed_s"] >= max(mine) - 1e-3 and not math.isnan(e["observed_s"])
    # without output-ranks-data: no ranks lists
    r2 = run(tmp_path, 1, {**sets, "generate-data": False, "output-ranks-data": False}, name="plain")
    assert r2.rc == 0, r2.proc.stderr
    assert "ranks" not in r2.summary()["train"] and not (r2.out / "output.ranks.csv").exists()


def _accepts(key: str) -> bool:
    """Whether the kernel's parser takes `key` (config_load through --dlio-entries: no MPI, no I/O)."""
    from kernel import BIN
    p = subprocess.run([BIN, "--dlio-entries", "--set", f"{key}=1"], capture_output=True, text=True, timeout=30)
    return p.returncode == 0 or (p.returncode == 2 and "unknown key" not in p.stderr and f"'{key}'" in p.stderr)


@pytest.mark.parametrize("with_dlio", [False, pytest.param(True, marks=pytest.mark.dlio)], ids=["kernel", "dlio"])
def test_help_lists_every_key_the_parser_accepts(with_dlio, request):
    """Candidate keys from the kernel's sources (every key-like string literal), docs/kernel.md's key table and, in the
    `dlio` tier, every key the reference DLIO's utils/config.py reads; each one the parser accepts must be in --help
    (a sub-key of an accepted section: its section in the accepted list)."""
    import re
    from pathlib import Path

    from kernel import BIN
    repo = Path(__file__).resolve().parent.parent
    cands: set[str] = set()
    for f in ("options.c", "config_yaml.c", "config_json.c", "config_argv.c", "config_load.c", "config_check.c",
              "dlio.c"):
        cands |= set(re.findall(r'"([a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*)"', (repo / "bench" / "src" / f).read_text()))
    for line in (repo / "docs" / "kernel.md").read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| key"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            cands |= {re.sub(r"\(.*?\)", "", c).strip() for c in cells[:2]}
    dlio = sorted(request.getfixturevalue("dlio_venv").glob("lib/python3*/site-packages/dlio_benchmark/utils/config.py")
                  ) if with_dlio else []
    assert len(dlio) == with_dlio, f"DLIO's utils/config.py in the reference venv: {dlio}"
    for src in dlio:
        text = src.read_text()
        cands |= {f"{a}.{b}" for a, b in re.findall(r"config\['(\w+)'\]\['(\w+)'\]", text)}
        cands |= {f"{b}.{a}" for a, b in re.findall(r"'(\w+)' in config\['(\w+)'\]", text)}
    cands = {c for c in cands if c and " " not in c}
    accepted = sorted(c for c in cands if _accepts(c))
    assert len(accepted) > 80, accepted  # the table's names and DLIO paths at least
    text = subprocess.run([BIN, "--help"], capture_output=True, text=True, check=True).stdout
    sections = text.split("Accepted DLIO keys with no I/O effect", 1)[1].split("Checked DLIO keys", 1)[0]

    def listed(k: str, where: str) -> bool:
        return re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w-])", where) is not None

    missing = [k for k in accepted if not listed(k, text) and not listed(k.replace("_", "-"), text)
               and not any(listed(k.rsplit(".", n)[0], sections) for n in range(1, k.count(".") + 1))]
    assert missing == []


def dlio_200_index_error_ranks(files: int, per_file: int, ranks: int) -> list[int]:
    """The ranks on which DLIO 2.0.0 raises IndexError, stated from its source for this test: utils/config.py:352-366
    get_global_map_index walks range(r*ceil(T/R), (r+1)*ceil(T/R)) and looks up file_list[g // num_samples_per_file],
    with no clamp at T = files x per_file (measured: 6 x 7 on 4 ranks, rank 3 IndexError, the others hung until
    killed)."""
    total = files * per_file
    spp = -(-total // ranks)
    return [r for r in range(ranks) if any(g // per_file >= files for g in range(r * spp, (r + 1) * spp))]


SHAPES = [(6, 7, 4), (5, 1, 4), (8, 1, 3), (8, 4, 2), (6, 7, 3), (9, 1, 4)]


@pytest.mark.parametrize("files,per_file,ranks", SHAPES, ids=[f"{f}x{s}-R{r}" for f, s, r in SHAPES])
def test_a_shape_dlio_cannot_run_is_named(files, per_file, ranks):
    """--dry-run at R ranks: one warning naming the failing ranks exactly when DLIO 2.0.0's index map fails, none for
    2.0.1 (which clamps) or a shape it runs"""
    fails = dlio_200_index_error_ranks(files, per_file, ranks)
    for version in ("2.0.0", "2.0.1"):
        p = subprocess.run([BIN, "--dry-run", "--ranks", str(ranks), "--set", f"dlio-version={version}",
                            "--set", f"num-files-train={files}", "--set", f"num-samples-per-file={per_file}",
                            "--set", "batch-size=1", "--set", "train=true", "--set", "data-folder=/nonexistent"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        notes = [ln for ln in p.stderr.splitlines() if "cannot run this" in ln]
        if version == "2.0.1" or not fails:
            assert notes == [], notes
            continue
        assert len(notes) == 1, p.stderr
        who = f"rank {fails[0]}" if len(fails) == 1 else f"ranks {fails[0]}-{fails[-1]}"
        assert f"DLIO 2.0.0 cannot run this at {ranks} ranks" in notes[0] and f"{who}, whose" in notes[0], notes[0]
        assert f"{files * per_file} training samples" in notes[0] and "IndexError" in notes[0]


def test_the_kernel_runs_the_shape_dlio_crashes_on(tmp_path):
    """6 files x 7 samples on 4 ranks (DLIO 2.0.0: IndexError on rank 3, the others hang): the kernel ends, rank 3
    reads the 42 - 3 x 11 = 9 samples left, says so once, and every sample is read once per epoch"""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": False, "epochs": 1,
                                      "num-files-train": 6, "num-samples-per-file": 7, "batch-size": 1,
                                      "num-files-eval": 4, "record-length": 4096})
    r = run(tmp_path, 4, sets, timeout=120)
    assert r.rc == 0, r.proc.stderr
    assert r.proc.stderr.count("cannot run this at 4 ranks") == 1, r.proc.stderr
    got = {rank: train_samples(r, rank)[1] for rank in range(4)}
    assert [len(got[k]) for k in range(4)] == [10, 10, 10, 9]   # floor(42/1/4) = 10 steps cap the full ranks
    assert sorted(s for k in range(4) for s in got[k]) == sorted(set(s for k in range(4) for s in got[k]))


@pytest.mark.parametrize("evaluation,generate,named", [(True, False, True), (False, True, True), (False, False, False)],
                         ids=["eval-on", "eval-off-generated", "eval-off-not-generated"])
def test_an_evaluation_shape_dlio_cannot_run_is_named(evaluation, generate, named):
    """4 training + 3 evaluation files of 1 sample on 2 ranks (measured: DLIO 2.0.0 with evaluation on, rank 1
    IndexError, rank 0 hung). DLIO maps the valid folder's files with evaluation off too (main.py lists them
    whenever the folder holds files), so a run that generates them is named as well."""
    p = subprocess.run([BIN, "--dry-run", "--ranks", "2", "--set", "num-files-train=4", "--set", "num-files-eval=3",
                        "--set", "num-samples-per-file=1", "--set", "batch-size=1", "--set", "batch-size-eval=1",
                        "--set", "train=true", "--set", f"evaluation={str(evaluation).lower()}",
                        "--set", f"generate-data={str(generate).lower()}", "--set", "data-folder=/nonexistent"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if "cannot run this" in ln]
    assert len(notes) == int(named), p.stderr
    if named:
        assert "3 evaluation samples" in notes[0] and "rank 1, whose" in notes[0] and "IndexError" in notes[0]
        assert ("The kernel clamps" in notes[0]) == evaluation
