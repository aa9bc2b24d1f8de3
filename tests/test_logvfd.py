"""Unit tests of profiles/logvfd/ on real HDF5 Log VFD captures (tests/data/logvfd; README.md there says how each
was made). Expected numbers come from the workload YAML, the dataset layout and DLIO 2.0.0's samplers re-derived
here from DLIO's source, never from the parser's own output."""
from __future__ import annotations

import json
import math
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common.rundir import loads_table  # noqa: E402
from profiles import Done, Launch, get, logvfd  # noqa: E402

FIX = Path(__file__).resolve().parent / "data" / "logvfd"
CFG = yaml.safe_load((FIX / "unet3d_logvfd_hdf5.yaml").read_text())
SPF = CFG["dataset"]["num_samples_per_file"]
N_TRAIN = CFG["dataset"]["num_files_train"] * SPF
N_EVAL = CFG["dataset"]["num_files_eval"] * SPF
BATCH, BATCH_EVAL = CFG["reader"]["batch_size"], CFG["reader"]["batch_size_eval"]
EPOCHS = CFG["train"]["epochs"]
SEED = 123  # DLIO 2.0.0's default train.seed (the YAML sets none); seed_change_epoch defaults to True
DIM = int(math.sqrt(CFG["dataset"]["record_length"]))
SAMPLE = DIM * DIM  # bytes of one sample: one DRAW read
# layout of every h5py-written file of the dataset (h5dump -p -H): 'records' contiguous at 2048, then 'labels'
# (SPF int64) right after it, nothing else: the file ends (EOA) there
DATA = 2048
EOA = DATA + SPF * SAMPLE + SPF * 8
PROBE = "SUPER-PROBE 0-96"  # the version-0 superblock with its root symbol table entry is 96 bytes
# what H5Fopen + H5Dopen("records") read in such a file (the thesis' Table 6.1 block)
META = ("96-607 OHDR Read", "680-1191 LHEAP Read", "136-679 BTREE Read", "1072-1399 BTREE Read", "800-1311 OHDR Read")
META_BYTES = 512 + 512 + 544 + 328 + 512
PROBE_READ_BYTES = 8 + 48 + 48  # 0-7, 0-47, 48-95


def draw(s: int) -> str:
    i = s % SPF
    return f"{DATA + i * SAMPLE}-{DATA + (i + 1) * SAMPLE - 1} DRAW Read"


def block(*samples: int) -> list[str]:
    return [PROBE, f"96-{EOA} DEFAULT Allocated", *META, *(draw(s) for s in samples)]


def torch_order(total: int, ranks: int, rank: int, batch: int) -> list[list[int]]:
    """DLIO's dlio_sampler (PyTorch, DataLoader built once): the rank's contiguous slice, shuffled in place after
    np.random.seed(seed) at every epoch's iteration; the loop takes floor(total / batch / ranks) batches."""
    spp = math.ceil(total / ranks)
    idx = list(range(rank * spp, min((rank + 1) * spp, total)))
    steps = min(len(idx) // batch, total // batch // ranks)
    out = []
    for _ in range(EPOCHS):
        np.random.seed(SEED)
        np.random.shuffle(idx)
        out.append(idx[: steps * batch])
    return out


def torch_phases(ranks: int, rank: int) -> list[list[int]]:
    """samples read, per phase in run order: train epoch 1, eval 1, train epoch 2, eval 2"""
    tr, ev = torch_order(N_TRAIN, ranks, rank, BATCH), torch_order(N_EVAL, ranks, rank, BATCH_EVAL)
    return [p for e in range(EPOCHS) for p in (tr[e], ev[e])]


def tf_thread_entries(total: int, threads: int, epoch: int) -> list[list[int]]:
    """DLIO's build_sample_map_iter for 1 rank: arange shuffled after np.random.seed(seed + epoch), cut into
    threads; an entry reads within-file sample (entry % SPF), and the file changes every SPF entries."""
    lst = np.arange(total)
    np.random.seed(SEED + epoch)
    np.random.shuffle(lst)
    spt = total // threads
    return [[int(s) for s in lst[t * spt: (t + 1) * spt]] for t in range(threads)]


def tf_phases(threads: int) -> list[list[int]]:
    return [sum(tf_thread_entries(n, threads, e), []) for e in range(1, EPOCHS + 1) for n in (N_TRAIN, N_EVAL)]


def stderr(name: str, rank: int) -> str:
    return (FIX / name / "1" / f"rank.{rank}" / "stderr").read_text()


def table(name: str, rank: int) -> dict:
    return logvfd.parse_dir(FIX / name)["ranks"][str(rank)]


def texts(name: str, rank: int) -> list[str]:
    return [r.text() for r in logvfd.parse(stderr(name, rank))]


def per_phase_draws(name: str, rank: int, sizes: list[int]) -> list[Counter]:
    d = [r for r in logvfd.parse(stderr(name, rank)) if r.mem == "DRAW"]
    assert len(d) == sum(sizes)
    out, i = [], 0
    for n in sizes:
        out.append(Counter(r.text() for r in d[i: i + n]))
        i += n
    return out


def rec(a: int, b: int, mem: str, op: str) -> str:
    """one record line as HDF5 1.14's H5FDlog.c prints it (for a Read the newline is a second fprintf, which is
    why another process's output can land between a Read record and its newline)"""
    return f"{a:10d}-{b:10d} ({b - a + (op == 'Read'):10d} bytes) (H5FD_MEM_{mem}) {op}\n"


def probe(v: str) -> str:
    mid = {"1.14.2": 16, "1.14.5": 48}[v]  # HDF5 <= 1.14.2 reads 16 bytes, >= 1.14.5 48, then the rest to 96
    return (rec(0, 8, "SUPER", "Allocated") + rec(0, 7, "SUPER", "Read") + rec(8, mid, "SUPER", "Allocated")
            + rec(0, mid - 1, "SUPER", "Read") + rec(mid, 96, "SUPER", "Allocated") + rec(mid, 95, "SUPER", "Read"))


REST = (rec(96, EOA, "DEFAULT", "Allocated") + rec(96, 607, "OHDR", "Read") + rec(680, 1191, "LHEAP", "Read")
        + rec(136, 679, "BTREE", "Read") + rec(1072, 1399, "BTREE", "Read") + rec(800, 1311, "OHDR", "Read")
        + rec(DATA, DATA + SAMPLE - 1, "DRAW", "Read"))


# ---------------------------------------------------------------------------------------------------- records


def test_parse_reads_a_real_record_line():
    line = "     67584-    133119 (     65536 bytes) (H5FD_MEM_DRAW) Read\n"
    assert line in stderr("dlio-pytorch-rt0", 0)
    (r,) = logvfd.parse(line)
    assert (r.start, r.end, r.size, r.mem, r.op) == (DATA + SAMPLE, DATA + 2 * SAMPLE - 1, SAMPLE, "DRAW", "Read")
    assert r.text() == draw(1)


@pytest.mark.parametrize("version", ["1.14.2", "1.14.5"])
def test_normalize_block_collapses_the_superblock_probe(version):
    blocks, stray = logvfd.split_blocks(logvfd.parse(probe(version) + REST))
    assert stray == 0 and len(blocks) == 1 and len(blocks[0]) == 13
    assert list(logvfd.normalize_block(blocks[0])) == block(0)


def test_both_probe_variants_give_the_same_token_but_differ_raw():
    old, new = (logvfd.parse(probe(v) + REST) for v in ("1.14.2", "1.14.5"))
    assert [r.text() for r in old] != [r.text() for r in new]
    assert logvfd.normalize_block(old) == logvfd.normalize_block(new)
    # a probe cut short (no third part) keeps its smaller extent: the token is the probe's extent, not a constant
    short = logvfd.parse(probe("1.14.5").rsplit("\n", 3)[0] + "\n" + REST)
    assert logvfd.normalize_block(short)[0] == "SUPER-PROBE 0-48"


def test_the_real_capture_holds_the_new_probe_in_every_open():
    recs = logvfd.parse(stderr("dlio-pytorch-rt0", 0))
    blocks, _ = logvfd.split_blocks(recs)
    new = [r.text() for r in logvfd.parse(probe("1.14.5"))]
    assert all([r.text() for r in b[:6]] == new for b in blocks)


# ---------------------------------------------------------------------------------------------- PyTorch rt=0


@pytest.mark.parametrize("rank", [0, 1])
def test_pytorch_rt0_counts_follow_the_workload(rank):
    """one open per sample read: train steps x batch + eval steps x batch_eval, per epoch"""
    phases = torch_phases(2, rank)
    opens = sum(len(p) for p in phases)
    assert opens == EPOCHS * (N_TRAIN // BATCH // 2 * BATCH + N_EVAL // BATCH_EVAL // 2 * BATCH_EVAL) == 12
    t = table("dlio-pytorch-rt0", rank)
    assert (t["opens"], t["stray_records"], t["raw_reads"]) == (opens, 0, opens)
    assert t["raw_read_bytes"] == opens * SAMPLE
    assert t["read_bytes"] == opens * (PROBE_READ_BYTES + META_BYTES + SAMPLE)
    assert t["records"] == opens * 13
    assert t["record_kinds"] == {"BTREE Read": 2 * opens, "DEFAULT Allocated": opens, "DRAW Read": opens,
                                 "LHEAP Read": opens, "OHDR Read": 2 * opens, "SUPER Allocated": 3 * opens,
                                 "SUPER Read": 3 * opens}


@pytest.mark.parametrize("rank", [0, 1])
def test_pytorch_rt0_blocks_follow_the_sampler(rank):
    expected = [block(s) for p in torch_phases(2, rank) for s in p]
    assert table("dlio-pytorch-rt0", rank)["blocks"] == expected


@pytest.mark.parametrize("rank", [0, 1])
def test_kernel_replays_dlio_pytorch_rt0_block_for_block(rank):
    k, d = table("kernel-rt0", rank), table("dlio-pytorch-rt0", rank)
    assert k["opens"] == 12
    assert k["blocks"] == d["blocks"]
    assert k == d
    assert texts("kernel-rt0", rank) == texts("dlio-pytorch-rt0", rank)


def test_record_table_counts_every_normalized_record_over_ranks():
    opens = 2 * 12
    expected = {PROBE: opens, f"96-{EOA} DEFAULT Allocated": opens, **{m: opens for m in META}, "DRAW Read": opens}
    assert logvfd.record_table(logvfd.parse_dir(FIX / "dlio-pytorch-rt0")) == expected


# ---------------------------------------------------------------------------------------------- PyTorch rt=2


def test_pytorch_rt2_glued_records_are_parsed():
    """two DataLoader workers share the rank's stderr: one line of the capture holds two records"""
    text = stderr("dlio-pytorch-rt2", 0)
    lines = [ln for ln in text.splitlines() if "H5FD_MEM" in ln]
    glued = [ln for ln in lines if ln.count("H5FD_MEM") == 2]
    assert len(glued) == 1
    assert [r.text() for r in logvfd.parse(glued[0])] == [draw(1), "0-7 SUPER Read"]
    assert len(lines) == 155
    assert table("dlio-pytorch-rt2", 0)["records"] == 12 * 13 == len(lines) + 1


@pytest.mark.parametrize("rank", [0, 1])
def test_pytorch_rt2_reads_the_same_multiset_as_rt0(rank):
    """the sampler gives the workers the same samples per phase, only their order within a phase may differ"""
    t = table("dlio-pytorch-rt2", rank)
    assert (t["opens"], t["stray_records"], t["raw_reads"], t["raw_read_bytes"]) == (12, 0, 12, 12 * SAMPLE)
    assert Counter(texts("dlio-pytorch-rt2", rank)) == Counter(texts("dlio-pytorch-rt0", rank))
    phases = torch_phases(2, rank)
    expected = [Counter(draw(s) for s in p) for p in phases]
    assert per_phase_draws("dlio-pytorch-rt2", rank, [len(p) for p in phases]) == expected


@pytest.mark.parametrize("rank", [0, 1])
def test_pytorch_rt2_overlapping_workers_blur_two_blocks(rank):
    """splitting at opens cannot tell the two workers apart: where their opens overlapped (once per rank here,
    epoch 2 training) one block lacks its DRAW read and another has two; every other block is the rt=0 block"""
    blocks = table("dlio-pytorch-rt2", rank)["blocks"]
    ndraw = [sum("DRAW" in x for x in b) for b in blocks]
    assert len(blocks) == 12 and sum(ndraw) == 12
    assert sorted(n for n in ndraw if n != 1) == [0, 2]
    good = Counter(tuple(b) for b, n in zip(blocks, ndraw, strict=False) if n == 1)
    assert not good - Counter(tuple(b) for b in table("dlio-pytorch-rt0", rank)["blocks"])
    first = [i for i, n in enumerate(ndraw) if n != 1][0]
    assert first >= 6, "the overlap was in epoch 2 (epoch 1 is the first 6 opens)"


# ------------------------------------------------------------------------------------------------ TensorFlow


def test_tensorflow_rt1_opens_each_file_once_for_all_its_samples():
    """the tf.data path (iterator reader) keeps a file open for its SPF samples: opens = files, not samples"""
    t = table("dlio-tensorflow-rt1", 0)
    opens = EPOCHS * (N_TRAIN + N_EVAL) // SPF
    reads = EPOCHS * (N_TRAIN + N_EVAL)
    assert (t["opens"], t["stray_records"], t["raw_reads"], t["raw_read_bytes"]) == (opens, 0, reads, reads * SAMPLE)
    assert t["records"] == opens * (6 + 1 + len(META)) + reads
    expected = [block(*p[i: i + SPF]) for p in tf_phases(1) for i in range(0, len(p), SPF)]
    assert t["blocks"] == expected


def test_tensorflow_pattern_differs_from_pytorch():
    tf = {tuple(b) for b in table("dlio-tensorflow-rt1", 0)["blocks"]}
    pt = {tuple(b) for b in table("dlio-pytorch-rt0", 0)["blocks"]}
    assert not tf & pt
    assert {len(b) for b in tf} == {len(block()) + SPF} and {len(b) for b in pt} == {len(block()) + 1}


@pytest.mark.parametrize("name", ["dlio-tensorflow-rt1", "dlio-tensorflow-rt2"])
def test_record_glued_to_dlio_log_text_is_parsed(name):
    """a Read record's newline is a separate write: DLIO's next [INFO] line lands right after 'Read'"""
    text = stderr(name, 0)
    glued = [ln for ln in text.splitlines() if "Read[INFO]" in ln]
    assert len(glued) == 1
    (r,) = logvfd.parse(glued[0])
    assert r.mem == "DRAW" and r.size == SAMPLE
    assert len(logvfd.parse(text)) == sum("H5FD_MEM" in ln for ln in text.splitlines()) == 168


def test_tensorflow_rt2_threads_interleave_their_opens():
    """two tf.data generator threads in one process: same records as rt=1, but each open is followed by the other
    thread's open right after the H5Fopen part, so the per-open split alternates bare opens and 4-read blocks"""
    t1, t2 = table("dlio-tensorflow-rt1", 0), table("dlio-tensorflow-rt2", 0)
    assert Counter(texts("dlio-tensorflow-rt2", 0)) == Counter(texts("dlio-tensorflow-rt1", 0))
    assert (t2["opens"], t2["raw_reads"], t2["stray_records"]) == (t1["opens"], t1["raw_reads"], 0)
    bare = [PROBE, f"96-{EOA} DEFAULT Allocated", META[0]]
    assert t2["blocks"][0::2] == [bare] * (t2["opens"] // 2)
    assert [sum("DRAW" in x for x in b) for b in t2["blocks"][1::2]] == [2 * SPF] * (t2["opens"] // 2)
    assert t2["blocks"] != t1["blocks"]
    phases = tf_phases(2)
    assert per_phase_draws("dlio-tensorflow-rt2", 0, [len(p) for p in phases]) == [Counter(map(draw, p))
                                                                                    for p in phases]


# ------------------------------------------------------------------------------- stray records, gluing, files


def test_stray_records_before_the_first_open_are_counted():
    """a capture that starts inside a block (here: the real rt=0 log minus its first line of records)"""
    text = stderr("dlio-pytorch-rt0", 0)
    first = text.index(" (H5FD_MEM_SUPER) Allocated\n") + len(" (H5FD_MEM_SUPER) Allocated\n")
    t = logvfd.rank_table(text[first:])
    assert (t["stray_records"], t["opens"]) == (13 - 1, 12 - 1)
    assert t["records"] == 12 * 13 - 1
    assert t["raw_reads"] == 12, "the stray DRAW read still counts as a raw read"
    assert t["blocks"] == table("dlio-pytorch-rt0", 0)["blocks"][1:]


# Synthetic, modelled on the captures: rank 0's stderr with two reader processes (A, B) and DLIO's logging. It has
# a stray record (B's DRAW read finishing the previous phase), text glued before a record (a tqdm-style progress
# line redrawn with \r, no newline), a record glued to the next record (A's "Read", B's allocation, then A's
# newline), and a record glued to an [INFO] line (its newline after that line's).
GLUED = (
    "[INFO] 2026-11-22T00:53:08.125 Starting epoch 2: 2 steps expected [statscounter.py:192]\n"
    + rec(DATA + SAMPLE, DATA + 2 * SAMPLE - 1, "DRAW", "Read")
    + "Epoch 2:  50%|#####     | 1/2 [00:00<00:00]\r"
    + probe("1.14.5")
    + rec(96, EOA, "DEFAULT", "Allocated")
    + rec(96, 607, "OHDR", "Read")[:-1]
    + rec(0, 8, "SUPER", "Allocated")
    + "\n"
    + probe("1.14.5").split("\n", 1)[1]
    + rec(96, EOA, "DEFAULT", "Allocated") + rec(96, 607, "OHDR", "Read")
    + REST.split("\n", 2)[2]
    + REST.split("\n", 2)[2][:-1]
    + "[INFO] 2026-11-22T00:53:08.188 Rank 0 step 1 processed 2 samples in 0.029 s [statscounter.py:325]\n\n"
)


def test_synthetic_glued_stream():
    recs = logvfd.parse(GLUED)
    lines = GLUED.split("\n")
    assert len(recs) == 1 + 6 + 2 + 6 + 2 + 2 * 5 == sum(ln.count("H5FD_MEM") for ln in lines)
    assert sum("H5FD_MEM" in ln for ln in lines) == len(recs) - 1, "one line holds two records"
    assert [ln.split("\r")[0] for ln in lines if "H5FD_MEM" in ln and not ln.startswith(" ")] == [
        "Epoch 2:  50%|#####     | 1/2 [00:00<00:00]"]
    assert sum("H5FD_MEM" in ln and "Read[INFO]" in ln for ln in lines) == 1
    t = logvfd.rank_table(GLUED)
    assert (t["stray_records"], t["opens"], t["raw_reads"]) == (1, 2, 3)
    # A's block is cut short by B's open; B's block gets the rest of A's records, then its own
    assert t["blocks"][0] == [PROBE, f"96-{EOA} DEFAULT Allocated", META[0]]
    assert t["blocks"][1] == [PROBE, f"96-{EOA} DEFAULT Allocated", META[0], *META[1:], draw(0), *META[1:], draw(0)]


def test_rank_stderr_files_finds_both_layouts(tmp_path):
    assert logvfd.rank_stderr_files(FIX / "dlio-pytorch-rt0") == {
        r: FIX / "dlio-pytorch-rt0" / "1" / f"rank.{r}" / "stderr" for r in (0, 1)}
    for r in (10, 2):  # srun --output/--error DIR/rank.%t.stderr
        (tmp_path / f"rank.{r}.stderr").write_text(rec(0, 8, "SUPER", "Allocated"))
    (tmp_path / "rank.3.stdout").write_text("")
    found = logvfd.rank_stderr_files(tmp_path)
    assert list(found) == [2, 10]
    assert logvfd.parse_dir(tmp_path)["ranks"]["10"]["opens"] == 1


def test_collect_stores_the_tables_of_every_rank_as_compact_json(tmp_path):
    """A finished launch's per-rank stderr -> tables/<step>-<side>.json: the parsed tables of every rank, compact
    (the largest tables of a run)."""
    (tmp_path / "w").mkdir()
    shutil.copytree(FIX / "kernel-rt0", tmp_path / "w" / "ranks")
    done = Done("kernel.logvfd-rt0", "kernel", "logvfd-rt0", tmp_path / "w", 1.0, tmp_path / "d", tmp_path / "o")
    got = get("logvfd").collect(done)
    assert list(got) == ["logvfd-rt0-kernel.json"]
    text = got["logvfd-rt0-kernel.json"]
    assert "\n" not in text and loads_table(text) == logvfd.parse_dir(FIX / "kernel-rt0")
    assert sorted(json.loads(text)["ranks"]) == ["0", "1"]
    # stored compact: each distinct per-open block once (a rank opens 12 times, most opens alike)
    raw = json.loads(text)["ranks"]["0"]
    assert "blocks" not in raw and len(raw["block_seq"]) == 12 and len(raw["block_set"]) < 12


def _launch(side: str, argv: list, env: dict) -> Launch:
    return Launch(side, "logvfd", argv, env, Path("."), Path("data"), {})


def test_wrap_adds_the_log_vfd_without_touching_the_callers_env():
    env = {"PATH": "/bin"}
    w = get("logvfd").wrap(_launch("kernel", ["h5dlio", "--config", "x.yaml"], env))
    assert w.argv == ["h5dlio", "--config", "x.yaml", "--log-vfd"] and w.env == env
    w = get("logvfd").wrap(_launch("dlio", ["dlio_benchmark"], env))
    assert w.argv == ["dlio_benchmark"] and w.env == {"PATH": "/bin", "HDF5_DRIVER": "log"}
    assert env == {"PATH": "/bin"}
