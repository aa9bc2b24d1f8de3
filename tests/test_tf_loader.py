"""DLIO 2.0.0's TensorFlow loader (framework/reader.data_loader tensorflow): the kernel's reads and the analytic
model's counts, both against expectations worked out by hand from DLIO's source:
  utils/config.py:317-349 build_sample_map_iter: rank r takes positions k = 0..spp-1 (spp = ceil(T/R)) of
    arange(r*spp, (r+1)*spp); k = 0 reads file r * ((F // R) % F), every later k file (k // spf) % F (:348 drops the
    rank offset); sample = position value % spf; thread (k // (spp // nt)) % nt;
  reader/reader_handler.py:80-109: a thread opens a file that is not open, keeps it open, closes the file just read
    after every spf samples it processed, pads its last batch without reads; files still open close when the
    generator ends;
  data_loader/tf_data_loader.py:84-91: tf.data interleaves the threads' batches round-robin.
Measured on DLIO 2.0.0 here (strace of the real DLIO, 6 files x 4 samples, batch 4, 1 thread, 2 ranks): rank 0 opens
files 0, 1, 2 once each per epoch, rank 1 files 3, 0, 1, 2 (3 closed last) -- the same as worked out below."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from kernel import run, tiny

from validate import model


def tf_sets(data, **kw) -> dict:
    base = tiny(data, **{"generate-data": True, "train": True, "evaluation": False, "num-files-train": 6,
                         "num-files-eval": 0, "num-samples-per-file": 4, "batch-size": 4, "shuffle": "off",
                         "record-length": 4096, "framework": "tensorflow", "data-loader": "tensorflow"})
    base.update(kw)
    return base


def steps(r, rank) -> dict[int, list[list[tuple[int, int]]]]:
    """epoch -> the batches consumed, each a list of (file, index) in read order"""
    per: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for row in r.samples(rank):
        assert row["use"] == "step", row
        per[int(row["epoch"])][int(row["step"])].append((int(row["file"]), int(row["index"])))
    return {e: [b[s] for s in sorted(b)] for e, b in per.items()}


# by hand: 6 files x 4 samples, 2 ranks -> spp 12, one thread, batch 4 -> 3 batches = floor(24 / 4 / 2) steps
RANK0 = [[(0, 0), (0, 1), (0, 2), (0, 3)], [(1, 0), (1, 1), (1, 2), (1, 3)], [(2, 0), (2, 1), (2, 2), (2, 3)]]
RANK1 = [[(3, 0), (0, 1), (0, 2), (0, 3)], [(1, 0), (1, 1), (1, 2), (1, 3)], [(2, 0), (2, 1), (2, 2), (2, 3)]]


@pytest.mark.parametrize("threads", [0, 1])
def test_one_thread_reads_by_hand(tmp_path, threads):
    """read-threads 0 (DLIO makes it 1 thread, tf_data_loader.py:70-74; the rank reads) and 1 (one reader process):
    the order of DLIO's generator, and its opens: rank 0 files 0, 1, 2 (each closed after its 4th sample), rank 1
    files 3, 0, 1, 2 (file 3 left open by the close rule, closed at the end): 3 + 4 opens per epoch"""
    r = run(tmp_path, 2, tf_sets(tmp_path / "data", **{"read-threads": threads}))
    assert r.rc == 0, r.proc.stderr
    assert steps(r, 0) == {1: RANK0, 2: RANK0}
    assert steps(r, 1) == {1: RANK1, 2: RANK1}
    ep = r.summary()["train"]["epochs"]
    assert [e["opens"] for e in ep] == [7, 7] and [e["reads"] for e in ep] == [24, 24]
    assert [(e["steps_per_rank_min"], e["steps_per_rank_max"]) for e in ep] == [(3, 3), (3, 3)]


def test_two_threads_interleave_by_hand(tmp_path):
    """4 files x 2 samples, 1 rank, 2 threads, batch 2: thread 0 holds positions 0-3 (files 0, 1), thread 1 4-7
    (files 2, 3); tf.data yields thread 0's first batch, thread 1's first, then the seconds; 4 opens per epoch"""
    r = run(tmp_path, 1, tf_sets(tmp_path / "data", **{"read-threads": 2, "num-files-train": 4,
                                                        "num-samples-per-file": 2, "batch-size": 2}))
    assert r.rc == 0, r.proc.stderr
    want = [[(0, 0), (0, 1)], [(2, 0), (2, 1)], [(1, 0), (1, 1)], [(3, 0), (3, 1)]]
    assert steps(r, 0) == {1: want, 2: want}
    assert [e["opens"] for e in r.summary()["train"]["epochs"]] == [4, 4]


@pytest.mark.parametrize("sets,words", [
    ({"batch-size": 5}, ["'batch-size'", "3 batches", "2 steps", "read ahead"]),  # 12 per rank: 5, 5, 2 + pad
    ({"total-training-steps": 2}, ["'total-training-steps'", "3 batches", "2 steps"]),
    ({"read-threads": 16}, ["'read-threads'", "ZeroDivisionError", "12 training samples per rank"]),
    # 2 threads of 6 positions: thread 0 reads files 0 and 1, thread 1 files 1 and 2 (position 6 is file 6 // 4 = 1)
    ({"read-threads": 2}, ["'read-threads'", "file 1 together", "share an open HDF5 file"]),
    ({"data-loader": "pytorch"}, ["'framework'", "Imcompatible", "utils/config.py:211-213"]),
    ({"dlio-version": "2.0.1"}, ["'data-loader'", "2.0.0 only"]),
    # evaluation: 2 files x 4 samples over 2 ranks = 4 per rank, batch 3: 2 batches (3 + 1 padded), 1 step
    ({"evaluation": True, "num-files-eval": 2, "batch-size-eval": 3},
     ["'batch-size-eval'", "evaluation pipeline yields 2 batches", "1 steps", "main.py:224, :239"]),
    # a batch above 256: DLIO's padding loop compares with `is` and never ends (reader_handler.py:98)
    ({"batch-size": 300, "num-files-train": 2, "num-samples-per-file": 600},
     ["'batch-size'", "300", "is not self.batch_size", "at most 256"]),
    # DLIO builds the evaluation map whenever it trains: 1 file x 4 samples, 2 ranks, 4 threads -> 2 // 4 = 0
    ({"evaluation": False, "num-files-eval": 1, "read-threads": 4, "num-files-train": 8},
     ["'read-threads'", "2 evaluation samples per rank", "ZeroDivisionError", "even with evaluation off"]),
])
def test_shapes_not_emulated_are_refused(tmp_path, sets, words):
    """each refused before any I/O with exit 2 and the reason (what DLIO does with it)"""
    r = run(tmp_path, 2, tf_sets(tmp_path / "data", **sets))
    assert r.rc == 2, r.proc.stderr
    msg = r.proc.stderr
    assert all(w in msg for w in words), msg
    assert not (tmp_path / "data").exists()


def test_model_thread_lists_by_hand():
    """build_sample_map_iter on the measured example: rank 1 of 2 over 6 files x 4 samples reads file 3 first (its
    offset r * (6 // 2)), then files 0, 1, 2; two threads split the 12 positions 6 + 6"""
    one = model.tf_thread_lists(6, 4, 2, 1, 1, list(range(6)), list(range(12, 24)))
    assert one == [[r for b in RANK1 for r in b]]
    two = model.tf_thread_lists(6, 4, 2, 1, 2, list(range(6)), list(range(12, 24)))
    assert [len(t) for t in two] == [6, 6] and two[0][0] == (3, 0) and two[1][0] == (1, 2)
    # 7 positions over 2 threads: 3 each, the 7th wraps to thread 0 ((6 // 3) % 2)
    assert [len(t) for t in model.tf_thread_lists(7, 1, 1, 0, 2, list(range(7)), list(range(7)))] == [4, 3]


def test_model_open_rule_by_hand():
    """reader_handler.py:90-107: opened when absent or closed; after every spf processed the current file closes"""
    assert model.tf_thread_opens([(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)], 2) == 3   # 1 reopened after its close
    assert model.tf_thread_opens([(3, 0), (0, 1), (0, 2), (0, 3), (1, 0)], 4) == 3   # 3 never closed by the rule
    assert model.tf_thread_opens([(5, 0)] * 3, 1) == 3                               # 1 per file: open per sample


def test_model_counts_by_hand():
    """the model's per-rank counts on the measured example: 3 and 4 opens and 12 reads of 4096 bytes per epoch (a
    4096-byte sample of a 4-sample dataset is read through the sieve buffer: min(64 KiB, bytes to the dataset's end))"""
    cfg = {"framework": "tensorflow", "dataset": {"num_files_train": 6, "num_samples_per_file": 4,
                                                   "record_length": 4096},
           "reader": {"data_loader": "tensorflow", "read_threads": 1, "batch_size": 4}, "train": {"epochs": 2}}
    m = model.workload_reads(cfg, 2)
    assert [[s["opens"] for s in m[r]] for r in (0, 1)] == [[3, 3], [4, 4]]
    sieve = {0: 16384, 1: 12288, 2: 8192, 3: 4096}
    assert m[1][0]["bytes"] == [sieve[i] for b in RANK1 for _, i in b]
    assert [s["steps"] for s in m[0]] == [3, 3]
    with pytest.raises(model.UnknownRelease):
        model.workload_reads(cfg, 2, "2.0.1")


def eval_by_dlio(neval: int, ntrain: int, ranks: int, rank: int, seed: int, epochs: int) -> dict[int, list[int]]:
    """DLIO 2.0.0's evaluation files for one rank, 1 sample per file, 1 thread, file shuffle on, sample shuffle off,
    seed_change_epoch: reconfigure(e) seeds numpy with seed + e, shuffles the training list, then the evaluation list
    (utils/config.py:370-376, in place: it compounds), and the evaluation after epoch e reads its map
    (build_sample_map_iter: position 0 file r * ((F // R) % F), position k > 0 file (k // spf) % F, :337-348)."""
    rs = np.random.RandomState()
    train, ev = list(range(ntrain)), list(range(neval))
    out = {}
    spp = -(-neval // ranks)
    for e in range(1, epochs + 1):
        rs.seed(seed + e)
        rs.shuffle(train)
        rs.shuffle(ev)
        out[e] = [ev[rank * ((neval // ranks) % neval)] if k == 0 else ev[k % neval] for k in range(spp)]
    return out


def test_evaluation_reads_dlios_shuffled_evaluation_list(tmp_path):
    """6 training + 4 evaluation files of 1 sample, 2 ranks, 1 thread, batch 1 (eval 1), file shuffle: the
    evaluation steps read the evaluation list shuffled after the training list from one seeding, every epoch"""
    r = run(tmp_path, 2, tf_sets(tmp_path / "data", **{"num-files-train": 6, "num-files-eval": 4,
                                                        "num-samples-per-file": 1, "batch-size": 1,
                                                        "batch-size-eval": 1, "evaluation": True, "epochs": 3,
                                                        "file-shuffle": "seed", "random-seed": 123,
                                                        "seed-change-epoch": True}))
    assert r.rc == 0, r.proc.stderr
    for rank in (0, 1):
        got: dict[int, list[int]] = defaultdict(list)
        for row in r.samples(rank):
            if row["phase"] == "eval":
                assert row["use"] == "step" and row["index"] == "0", row
                got[int(row["epoch"])].append(int(row["file"]))
        assert dict(got) == eval_by_dlio(4, 6, 2, rank, 123, 3), rank
    ev = r.summary()["eval"]["epochs"]
    assert [(e["opens"], e["reads"]) for e in ev] == [(4, 4)] * 3  # 2 per rank, one open per 1-sample file


def test_model_evaluation_segments_by_hand():
    """the model's evaluation segments: after each evaluation epoch, the evaluation list DLIO shuffles after the
    training list (eval_by_dlio), 2 steps and 2 opens per rank; none with evaluation off"""
    cfg = {"framework": "tensorflow", "workflow": {"evaluation": True},
           "dataset": {"num_files_train": 6, "num_files_eval": 4, "num_samples_per_file": 1, "record_length": 4096},
           "reader": {"data_loader": "tensorflow", "read_threads": 1, "batch_size": 1, "batch_size_eval": 1,
                      "file_shuffle": "seed"},
           "train": {"epochs": 3, "seed": 123, "seed_change_epoch": True}}
    m = model.workload_reads(cfg, 2)
    for rank in (0, 1):
        want = eval_by_dlio(4, 6, 2, rank, 123, 3)
        evs = [s for s in m[rank] if s["phase"] == "eval"]
        assert [s["epoch"] for s in evs] == [1, 2, 3]
        assert {s["epoch"]: s["samples"] for s in evs} == want
        assert [(s["steps"], s["opens"]) for s in evs] == [(2, 2)] * 3
    off = model.workload_reads({**cfg, "workflow": {"evaluation": False}}, 2)
    assert [s["phase"] for s in off[0]] == ["train"] * 3
