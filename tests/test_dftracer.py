"""DFTracer profile parser on real traces of the tiny unet3d workload (2 ranks, 28 files x 1 sample of ~1 MiB
drawn with record_length_stdev, batch 7, 4 reader processes, 2 epochs): DLIO 2.0.0 (pydftracer 1.0.2) and the
kernel under libdftracer_preload.so. Expected values come from the workload, not from the parser."""
from __future__ import annotations

import copy
import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from profiles import dftracer
from profiles.dftracer import tables as dft_tables
from profiles.dftracer import traces as dft_traces
from profiles.dftracer.checks import _whole_opens_more
from profiles.dftracer.collect import FIRST_PASS
from profiles.dftracer.order import _batches
from profiles.dftracer.traces import _decode, _scan_lines
from profiles.shared.files import cosine_similarity, file_index
from profiles.shared.rules import raw_reader
from validate import model

DATA = Path(__file__).parent / "data" / "dftracer"
RUN = "/tmp/hruns/unet3d-tiny-20261122-010153"  # where the traces were captured (file names inside them)
CFG = {"dataset": {"num_files_train": 28, "num_samples_per_file": 1, "record_length": 1048576,
                   "record_length_stdev": 488832}}
META_BYTES_PER_OPEN = 8 + 48 + 48 + 512 + 512 + 544 + 328 + 512  # superblock probe + OHDR/LHEAP/BTREE/OHDR reads


def load(side: str) -> list[dict]:
    events = [e for p in sorted(DATA.glob(f"{side}-*.pfw.gz")) for e in dftracer.read_events(p)]
    return dftracer.normalize(events, side)


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_data_file_reads_match_the_workload(side):
    t = dftracer.file_table(load(side), Path(RUN) / side / "data")
    files = {k: v for k, v in t["files"].items() if v["opens"]}
    dims = model.file_dims(CFG)
    assert sorted(files) == [f"train/img_{i:02d}_of_28.hdf5" for i in range(28)]
    # 2 epochs x 28 samples over 2 ranks: every file opened, read and closed twice
    assert {v["opens"] for v in files.values()} == {2} and {v["closes"] for v in files.values()} == {2}
    assert sum(v["reads"] for v in files.values()) == 56 * 9
    for i in range(28):
        f = files[f"train/img_{i:02d}_of_28.hdf5"]
        d1, d2 = dims[i]
        assert f["bytes"] == 2 * (META_BYTES_PER_OPEN + d1 * d2)
        assert f["accesses"][f"2048+{d1 * d2}"] == 2  # the sample itself, at DLIO's data offset


def test_both_sides_touch_the_data_files_identically():
    a = dftracer.file_table(load("dlio"), Path(RUN) / "dlio" / "data")["files"]
    b = dftracer.file_table(load("kernel"), Path(RUN) / "kernel" / "data")["files"]
    for name in (n for n in a if a[n]["opens"]):
        for field in ("opens", "closes", "reads", "bytes", "accesses"):
            assert a[name][field] == b[name][field], (name, field)
    # the differences are file-status probes and directory listing, which the validator classifies
    extra = Counter(c for n in a for c in a[n]["calls"]) - Counter(c for n in b for c in b[n]["calls"])
    assert set(extra) == {"fstat", "lstat", "opendir"}


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_ranks_and_timeline(side):
    ev = load(side)
    assert {e["rank"] for e in ev if e["cat"] == "POSIX"} == {0, 1}
    lanes = dftracer.timeline(ev)["lanes"]
    kinds = Counter((lane["rank"], x["kind"]) for lane in lanes for x in lane["events"])
    for r in (0, 1):
        assert kinds[(r, "open")] == 28 and kinds[(r, "read")] == 28 * 9
        assert kinds[(r, "compute")] == 4  # 2 steps (14 samples / batch 7) x 2 epochs
    assert min(x["t"] for lane in lanes for x in lane["events"]) >= 0  # relative to the first event traced


def test_features_and_similarity():
    fa = dftracer.features(load("dlio"), Path(RUN) / "dlio" / "data")
    fb = dftracer.features(load("kernel"), Path(RUN) / "kernel" / "data")
    for f in (fa, fb):
        assert f["files"] == 28 and f["xfer_min"] == 8 and f["xfer_max"] == max(a * b for a, b in model.file_dims(CFG))
    assert fa["bytes"] == fb["bytes"]
    assert cosine_similarity(fa, fa) == pytest.approx(1.0)
    s = cosine_similarity(fa, fb)
    assert 0.5 < s < 1.0  # same pattern, different speed
    assert cosine_similarity(fa, {**fb, "files": 1, "bytes": 1}) < s


def test_truncated_and_gzipped_traces(tmp_path):
    lines = gzip.open(DATA / "kernel-trace-h5dlio-22074-preload.pfw.gz", "rt").read().splitlines()
    cut = tmp_path / "cut.pfw"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + '\n{"id":"9","name":"pre')  # a crash mid-write
    ev = dftracer.read_events(cut)
    assert 0 < len(ev) < len(lines) and all("name" in e for e in ev)


# ---------------------------------------------------------------- metadata rate, on a trace made by construction

def _ev(name: str, pid: str, ts_us: int, dur_us: int, fname: str | None = None, cat: str = "POSIX",
        **args) -> dict:
    a = {"fname": fname, **args} if fname else args
    return {"id": "1", "name": name, "cat": cat, "pid": pid, "tid": pid, "ts": str(ts_us), "dur": str(dur_us),
            "ph": "X", "args": a}


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_metadata_rate_per_epoch_by_construction(tmp_path, side):
    """Two ranks, two epochs. Epoch 1: rank 0 [1.0 s, 2.0 s), rank 1 [1.1 s, 2.1 s) -> 1.1 s; epoch 2: rank 0
    [3.0 s, 4.0 s), rank 1 [3.0 s, 4.5 s) -> 1.5 s. Epoch 1: rank 0 opens, fstats and closes 3 files (100, 5, 10 us
    each) and reads each (1000 us: data, not metadata), rank 1 opens 2 (200 us each); epoch 2: rank 0 opens 4 (50 us
    each) and seeks once (7 us). Before training: a directory listing of the data folder (300 us). Ignored: a file
    outside the data folder."""
    data = tmp_path / side / "data"
    region = "DLIOBenchmark._train" if side == "dlio" else "train_epoch"
    cat = "dlio_benchmark" if side == "dlio" else "C_APP"
    pid = {0: "0", 1: "1"} if side == "dlio" else {0: "7001", 1: "7002"}  # DLIO: the rank is the pid
    ev = [] if side == "dlio" else [_ev("rank_info", pid[r], 10, 1, cat=cat, rank=r) for r in (0, 1)]
    for r, spans in ((0, [(1_000_000, 1_000_000), (3_000_000, 1_000_000)]), (1, [(1_100_000, 1_000_000),
                                                                               (3_000_000, 1_500_000)])):
        ev += [_ev(region, pid[r], ts, dur, cat=cat) for ts, dur in spans]
    f = [str(data / "train" / f"img_{i}.h5") for i in range(4)]
    for i in range(3):
        t = 1_100_000 + 10_000 * i
        ev += [_ev("open64" if side == "kernel" else "open", pid[0], t, 100, f[i]),
               _ev("__fxstat", pid[0], t + 200, 5, f[i]),
               _ev("pread64", pid[0], t + 300, 1000, f[i], offset=0, count=8, ret=8),
               _ev("close", pid[0], t + 2000, 10, f[i])]
    ev += [_ev("open", pid[1], 1_500_000 + 1000 * i, 200, f[i]) for i in range(2)]
    ev += [_ev("open", pid[0], 3_200_000 + 1000 * i, 50, f[i]) for i in range(4)]
    ev += [_ev("lseek64", pid[0], 3_300_000, 7, f[0]), _ev("opendir", pid[0], 500_000, 300, str(data / "train")),
           _ev("open", pid[0], 1_200_000, 999, "/usr/lib/libz.so")]
    out = tmp_path / side / "dftracer"
    out.mkdir(parents=True)
    (out / "trace-0-of-2.pfw").write_text("[\n" + "\n".join(json.dumps(e) for e in ev) + "\n")
    m = dftracer.parse(out, side, data)["metadata"]
    e1, e2 = m["per_epoch"]
    assert (e1["opens"], e1["epoch_s"], e1["metadata_s"]) == (5, pytest.approx(1.1),
                                                              pytest.approx((3 * (100 + 5 + 10) + 2 * 200) / 1e6))
    assert e1["opens_per_s"] == pytest.approx(5 / 1.1)
    assert (e2["opens"], e2["epoch_s"], e2["metadata_s"]) == (4, pytest.approx(1.5), pytest.approx((4 * 50 + 7) / 1e6))
    a = m["all"]
    assert (a["epochs"], a["opens"], a["epoch_s"]) == (2, 9, pytest.approx(2.6))
    assert a["opens_per_s"] == pytest.approx(9 / 2.6) and a["metadata_s_per_epoch"] == pytest.approx(952 / 2 / 1e6)
    assert m["outside_epochs"] == {"opens": 0, "metadata_s": pytest.approx(300 / 1e6)}
    assert m["calls"] == {"close": 3, "fstat": 3, "lseek": 1, "open": 9, "opendir": 1}


def test_metadata_rate_of_the_real_traces_counts_every_data_file_open():
    """the captured traces (2 epochs, 28 files, every file opened once per epoch): 28 opens in each epoch"""
    for side in ("dlio", "kernel"):
        m = dftracer.metadata(load(side), Path(RUN) / side / "data")
        assert [e["opens"] for e in m["per_epoch"]] == [28, 28] and m["all"]["opens"] == 56
        assert all(e["metadata_s"] > 0 and e["epoch_s"] > 0 for e in m["per_epoch"])


# ------------------------------------------- DFTracer 2.x: MLCommons DLIO 3.x (f6796ed) traced in the run, real traces

DATA2 = Path(__file__).parent / "data" / "dftracer2"
RUN2 = "/work/main/runs/unet3d-tiny-20261123-155010"  # where they were captured (the file names inside them)
# the run's workload (tiny unet3d, 2 ranks, 4 reader processes; DLIO's default seed)
CFG2 = {"dataset": {"num_files_train": 28, "num_samples_per_file": 1},
        "reader": {"batch_size": 7, "read_threads": 4, "file_shuffle": "seed", "sample_shuffle": "seed"},
        "train": {"epochs": 2}}


def load2(side: str) -> list[dict]:
    return dftracer.normalize([e for p in sorted((DATA2 / side).glob("*.pfw.gz")) for e in dftracer.read_events(p)],
                              side)


def test_dftracer2_format_file_names_and_cut_streams(tmp_path):
    """pydftracer 2.x names files by hash ("FH" events): every traced data-file call gets its path back. Rank 0's
    main process of that run never flushed its trace (an empty file); a stream cut mid-way (a process killed before
    finalising) keeps the events before the cut."""
    assert dftracer.read_events(DATA2 / "dlio" / "trace-0-of-2-6ec660e72376514e-app.pfw.gz") == []
    whole = DATA2 / "dlio" / "trace-1-of-2-3c3b9a48315398ab-app.pfw.gz"
    raw = whole.read_bytes()
    cut = tmp_path / "trace-1-of-2-cut-app.pfw.gz"
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    with pytest.raises(EOFError):
        gzip.open(cut, "rt").read()
    n, ev = len(dftracer.read_events(whole)), dftracer.read_events(cut)
    assert 0 < len(ev) < n and {e["_file_rank"] for e in ev} == {1}
    for side in ("dlio", "kernel"):
        posix = [e for e in load2(side) if e["cat"] == "POSIX" and e["name"] in ("open", "read", "pread", "close")]
        assert posix and all(e["fname"] for e in posix)
        assert all(e["fname"].startswith(f"{RUN2}/{side}/data/train/img_") for e in posix if e["name"] != "close"
                   or "/data/" in e["fname"])


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_dftracer2_ranks_read_the_files_the_model_gives_them(side):
    """The rank of a DLIO 3.x process comes from its trace's file name (trace-<rank>-of-<size>: pydftracer renames the
    log, spawned readers inherit it), the kernel's from rank_info. Each rank must open exactly the files MLCommons
    DLIO 3.x's sharding and reshards give it (validate.model, numpy's RandomState), DLIO up to its pre-warm prefetch."""
    t = dftracer.process_opens(load2(side), Path(RUN2) / side / "data")
    assert set(t) == {"0", "1"}  # no data-file open by a process of unknown rank
    segs = model.dlio3_workload_reads(CFG2, 2)
    for r in (0, 1):
        got = Counter(int(f.split("_")[1]) for files in t[str(r)] for f in files)
        want = Counter(f for s in segs[r] for f in s["bytes"])
        may = Counter(s for seg in segs[r] for s in seg.get("prefetch_samples", []))
        if side == "kernel":
            assert got == want
        else:
            assert not want - got and not (got - want) - may and got != want  # this run's DLIO did prefetch


def _opens(t: dict, r: int) -> Counter:
    return Counter(f for files in t["process_opens"][str(r)] for f in files)


class _Run:
    """The few things check_model_opens reads of a run."""
    ranks, release, cfg, manifest = 2, "3.0.2", CFG2, {}

    def model_reads(self, cfg):
        return model.workload_reads(cfg, self.ranks, self.release)


def test_dftracer2_model_opens_check_fails_on_a_wrong_file_or_a_missing_open():
    tables = {s: {"process_opens": dftracer.process_opens(load2(s), Path(RUN2) / s / "data")}
              for s in ("dlio", "kernel")}
    run = _Run()
    segs = run.model_reads(CFG2)

    def verdicts(d, k):
        return {c["name"]: c["status"] for c in dftracer.check_model_opens(run, d, k, segs)}
    assert set(verdicts(tables["dlio"], tables["kernel"]).values()) == {"pass"}
    # rank 1's kernel opens a file once more than modelled; rank 0's DLIO misses a modelled open
    k = json.loads(json.dumps(tables["kernel"]))
    k["process_opens"]["1"].append([k["process_opens"]["1"][0][0]])
    d = json.loads(json.dumps(tables["dlio"]))
    f0 = next(x for x, n in _opens(d, 0).items() if n == _opens(tables["kernel"], 0)[x])  # a file not prefetched
    next(files for files in d["process_opens"]["0"] if f0 in files).remove(f0)
    v = verdicts(d, k)
    assert v["counts.dftracer.kernel.rank1"] == "fail" and v["counts.dftracer.dlio.rank0"] == "fail"
    assert v["counts.dftracer.kernel.rank0"] == "pass" and v["counts.dftracer.dlio.rank1"] == "pass"
    # DLIO's rank 0 opening a file once more than its epochs and every pre-warm batch could: beyond the bound
    d = json.loads(json.dumps(tables["dlio"]))
    x = d["process_opens"]["0"][0][0]
    i = int(x.split("_")[1])
    bound = sum(f == i for s in segs[0] for f in s["bytes"]) + \
        sum(f == i for s in segs[0] for f in s.get("prefetch_samples", []))
    d["process_opens"]["0"].append([x] * (bound + 1 - _opens(d, 0)[x]))
    assert verdicts(d, tables["kernel"])["counts.dftracer.dlio.rank0"] == "fail"
    # without pre-warm prefetch in the model (read_threads 0), DLIO's extra opens are not allowed either
    v = {c["name"]: c["status"] for c in dftracer.check_model_opens(run, tables["dlio"], tables["kernel"], None)}
    assert v["counts.dftracer.dlio.rank0"] == "fail" and v["dftracer.batches.rank0"] == "fail"


@pytest.mark.parametrize("side,delta,ok", [("dlio", 1, True), ("kernel", 1, True), ("kernel", -1, False),
                                           ("dlio", -1, False)])
def test_a_close_beyond_a_files_opens_is_the_tracers_fd_map(tmp_path, side, delta, ok):
    """A close more than a data file's opens on one side (DFTracer names a close by its fd number's last file, and
    another thread can reuse the number during a slow close: measured on DLIO 3.x) is not counted, and said; a
    close fewer (a file left open) still fails dftracer.per_file."""
    from validate import checks
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run-tiny", run)
    p = run / "tables" / f"dftracer-{side}.json"
    t = json.loads(p.read_text())
    row = next(r for n, r in sorted(t["files"]["files"].items()) if r["opens"])
    row["closes"] += delta
    row["calls"]["close"] = row["calls"].get("close", 0) + delta
    p.write_text(json.dumps(t))
    c = {r["name"]: r for r in dftracer.check_dftracer(checks.Run(run))}["dftracer.per_file"]
    assert (c["status"] == "pass") is ok, c
    if ok:
        said = "DLIO 1, the kernel 0" if side == "dlio" else "DLIO 0, the kernel 1"
        assert f"closes beyond a file's opens, not counted ({said})" in c["detail"]


def _worker_tables() -> dict:
    """The committed DLIO 3.x run's per-process opens and the files read, per side (what check_workers reads)."""
    out = {}
    for s in ("dlio", "kernel"):
        ev, root = load2(s), f"{RUN2}/{s}/data/"
        reads = Counter(e["fname"][len(root):] for e in ev if e["cat"] == "POSIX" and e["name"] in ("read", "pread")
                        and (e["fname"] or "").startswith(root))
        out[s] = {"process_opens": dftracer.process_opens(ev, Path(root)),
                  "files": {"files": {n: {"reads": c} for n, c in reads.items()}}}
    return out


def _workers(d: dict, k: dict, cfg: dict = CFG2) -> dict:
    run = _Run()
    run.cfg = cfg
    return {c["name"]: c for c in dftracer.check_workers(run, d, k)}


def test_dlio3_reading_processes_and_their_order_pass_on_the_committed_run():
    """DLIO 3.x's spawned workers (a new set per pre-warm and epoch) and the kernel's whole-run workers each open the
    files of the model's worker (batch k to worker k % W) in order: the committed traces of both sides, unchanged."""
    t = _worker_tables()
    v = _workers(t["dlio"], t["kernel"])
    assert [c["status"] for c in v.values()] == ["pass", "pass"], v
    assert "8 reading processes on DLIO's side, 2 on the kernel's" in v["dftracer.order.rank0"]["detail"]


def test_dlio3_more_reading_processes_on_dlios_side_fail():
    """DLIO 3.x sizes its readers by the machine (read_threads 1 read by 2 processes on a 2-CPU node): DLIO's
    training workers' batches each read by two processes fail that rank, naming the cause; the other rank passes."""
    t = _worker_tables()
    d = t["dlio"]["process_opens"]["1"]
    train = [w for s in _Run().model_reads(CFG2)[1] if s["phase"] == "train" for w in s["workers"] if w]
    split = [x for x in d if [file_index(f) for f in x] in train]
    assert len(train) == 4 and len(split) >= 4   # (a pre-warm's worker reads what its epoch's worker reads)
    for x in split:
        d.remove(x)
        d += [x[:3], x[3:]]
    v = _workers(t["dlio"], t["kernel"])
    assert v["dftracer.order.rank1"]["status"] == "fail" and v["dftracer.order.rank0"]["status"] == "pass"
    assert f"DLIO: {9 + len(split)} reading processes" in v["dftracer.order.rank1"]["detail"]
    assert "sizes its readers by the machine" in v["dftracer.order.rank1"]["detail"]


@pytest.mark.parametrize("plant", ["fewer-processes", "swapped-opens", "wrong-file"])
def test_dlio3_kernel_reading_otherwise_than_the_model_fails(plant):
    """The kernel reading with one process where the model has two, two opens of a process swapped, or a file in
    place of another: dftracer.order fails that rank, not the other."""
    t = _worker_tables()
    k = t["kernel"]["process_opens"]["0"]
    if plant == "fewer-processes":
        k[:] = [k[0] + k[1]]
    elif plant == "swapped-opens":
        k[0][1], k[0][2] = k[0][2], k[0][1]
    else:
        k[1][0] = next(f for f in k[0] if f not in k[1])
    v = _workers(t["dlio"], t["kernel"])
    assert v["dftracer.order.rank0"]["status"] == "fail" and v["dftracer.order.rank1"]["status"] == "pass", v
    assert "the kernel: " in v["dftracer.order.rank0"]["detail"]


@pytest.mark.parametrize("call,ok", [("readv", True), ("preadv", True), ("open", False)])
def test_dlio3_odirect_readv_reads_count_as_reads(call, ok):
    """MLPerf's O_DIRECT npz path reads with readv, which DFTracer records under the file's calls, not its reads (the
    tiny_odirect baseline of 2026-11-28 failed dftracer.order on both sides: 0 reading processes each). The committed
    traces with every read turned into that call pass; negative control: a file only opened (its calls no read at
    all) is no read, and every rank fails with 0 reading processes."""
    t = _worker_tables()
    for side in t.values():
        side["files"]["files"] = {n: {"reads": 0, "calls": {"open": 1, call: 1}} for n in side["files"]["files"]}
    v = _workers(t["dlio"], t["kernel"])
    assert all((c["status"] == "pass") is ok for c in v.values()), v
    if not ok:
        assert "the kernel: 0 reading processes" in v["dftracer.order.rank0"]["detail"]


def test_dlio3_read_threads_0_compares_the_ranks_own_list():
    """read_threads 0: the rank reads every batch itself on both sides, in the model's order; the committed
    4-worker traces, read as if configured with 0 threads, fail on both sides (8 and 2 processes where 1 is)."""
    t = _worker_tables()
    cfg = copy.deepcopy(CFG2)
    cfg["reader"]["read_threads"] = 0
    v = _workers(t["dlio"], t["kernel"], cfg)
    assert all(c["status"] == "fail" for c in v.values()), v
    assert "the kernel: 2 reading processes, the model 1" in v["dftracer.order.rank0"]["detail"]


@pytest.mark.parametrize("name,ok", [("h5dlio-generation.json", True), ("train/h5dlio-generation.json", False)])
def test_model_opens_leave_the_kernels_completion_record_out(name, ok):
    """The kernel's rank 0 opens its completion record before it reads the folder: no data file of
    counts.dftracer.kernel.rank0. Negative control: the same name in train/ is an unnamed open, and fails it."""
    tables = {s: {"process_opens": dftracer.process_opens(load2(s), Path(RUN2) / s / "data")}
              for s in ("dlio", "kernel")}
    run = _Run()
    tables["kernel"]["process_opens"]["0"].insert(0, [name])
    v = {c["name"]: c["status"] for c in dftracer.check_model_opens(run, tables["dlio"], tables["kernel"],
                                                                     run.model_reads(CFG2))}
    assert (v["counts.dftracer.kernel.rank0"] == "pass") == ok, v


def test_prewarm_extra_opens_must_read_as_the_kernel_does():
    row = {"opens": 2, "closes": 2, "reads": 4, "bytes": 200, "accesses": {"-1+101": 2, "-1+1": 2}}
    assert _whole_opens_more({k: v * 2 if k != "accesses" else {x: n * 2 for x, n in v.items()}
                              for k, v in row.items()}, row) == 2
    assert _whole_opens_more({**row, "opens": 3, "closes": 3, "reads": 6, "bytes": 300,
                              "accesses": {"-1+101": 3, "-1+1": 3}}, row) == 1
    # a third open that read half the file: not a pre-warm prefetch of the same file
    assert _whole_opens_more({**row, "opens": 3, "closes": 3, "reads": 6, "bytes": 250,
                              "accesses": {"-1+101": 3, "-1+1": 3}}, row) == 0
    assert _whole_opens_more(row, row) == 0 and _whole_opens_more(row, None) == 0



def test_files_only_dlio3s_prewarm_opened_must_read_as_the_kernel_reads_a_file_of_their_size():
    """DLIO 3.x's pre-warm after an epoch iterates the loader reconfigured for the next epoch (main.py:802, :811-818):
    its prefetched batches hold files no rank read in the epoch (the remainder below a whole batch), which the kernel,
    reading worker 0's share only, never opens. imagenet_files at 10,240 files (2 ranks, batch 400, 8 readers) showed
    350 such files and failed dftracer.per_file (kernel row None) and dftracer.explained (their lseeks). Planted here in
    the real 3.x tiny traces: a prefetched file's extra opens moved to a name the kernel never opened; it passes when
    each of its opens reads as the kernel read a file of that size (the same file's per-open row), and fails when the
    read was cut, was of a size the kernel never read, made another call, or when no pre-warm is modelled."""
    by_hand = {"dataset": {"num_files_train": 10240, "num_samples_per_file": 1, "num_subfolders_train": 1000},
               "reader": {"batch_size": 400, "read_threads": 8, "file_shuffle": "seed", "sample_shuffle": "seed"},
               "train": {"epochs": 1}}
    segs = model.dlio3_workload_reads(by_hand, 2)
    read = {f for r in (0, 1) for f in segs[r][1]["bytes"]}
    assert len(segs[0][1]["bytes"]) == 12 * 400 and len(read) == 10240 - 2 * 320  # 5,120 per rank: 12 whole batches
    assert {s for r in (0, 1) for s in segs[r][2]["prefetch_samples"]} - read  # next epoch's prefetch: unread files
    tables = {s: {"files": dftracer.file_table(load2(s), Path(RUN2) / s / "data"),
                  "process_opens": dftracer.process_opens(load2(s), Path(RUN2) / s / "data")}
              for s in ("dlio", "kernel")}

    class Run(_Run):
        manifest = {"sides": ["dlio", "kernel"], "steps": {},
                    "dlio": {"probed": {"rules": {"sample_read": "whole_file", "prewarm": True}}}}
        path = Path(RUN2)

        def table(self, name, **_):
            return {"dftracer-dlio.json": d, "dftracer-kernel.json": tables["kernel"]}.get(name)

        def step(self, name):
            return None

        def put_table(self, name, obj):
            pass

    def verdict():
        v = {c["name"]: c for c in dftracer.check_dftracer(Run())}
        return v["dftracer.per_file"]["status"], v["dftracer.explained"]["status"], v["dftracer.per_file"]["detail"]
    d = tables["dlio"]
    assert verdict()[:2] == ("pass", "pass")
    df, kf = d["files"]["files"], tables["kernel"]["files"]["files"]
    f = next(n for n in sorted(df) if df[n]["opens"] > kf[n]["opens"])  # a file DLIO's pre-warm prefetched
    alone, n = "train/img_99_of_28.hdf5", kf[f]["opens"]
    one = {"opens": 1, "closes": kf[f]["closes"] // n, "reads": kf[f]["reads"] // n, "bytes": kf[f]["bytes"] // n,
           "accesses": {x: c // n for x, c in kf[f]["accesses"].items()},
           "calls": {x: c // n for x, c in kf[f]["calls"].items()}}  # one open of f, as the kernel's
    assert one["reads"] == 2 and one["accesses"]["-1+1"] == 1  # a whole-file read: the file, then end of file

    def plant(**change):
        row = {**json.loads(json.dumps(one)), **change}
        base = json.loads(json.dumps(tables["dlio"]))
        base["files"]["files"][f] = json.loads(json.dumps(kf[f]))
        base["files"]["files"][alone] = row
        return base
    d = plant()
    status, explained, detail = verdict()
    assert (status, explained) == ("pass", "pass") and "1 of them opened by DLIO's pre-warm alone" in detail
    cut = {"reads": 1, "accesses": {x: c for x, c in one["accesses"].items() if x != "-1+1"},
           "calls": {**one["calls"], "read": 1}}
    other_size = {"bytes": one["bytes"] - 1,
                  "accesses": {(f"-1+{one['bytes']}" if x != "-1+1" else x): c for x, c in one["accesses"].items()}}
    for change in (cut, other_size, {"calls": {**one["calls"], "lseek": one["calls"].get("lseek", 0) + 1}}):
        d = plant(**change)
        assert verdict()[0] == "fail", change
    d = plant()
    Run.manifest = {**Run.manifest, "dlio": {"probed": {"rules": {"sample_read": "whole_file", "prewarm": False}}}}
    assert verdict()[:2] == ("fail", "fail")  # without a pre-warm, no open of DLIO's alone is allowed

# ------------------------------------------------------------------- which tracer a reference venv has, and the wrap

def _venv(tmp_path: Path, layout: str, pydftracer: str) -> Path:
    """A venv's DFTracer files as the two wheels lay them out: pydftracer 1.0 (dftracer/lib) or the 2.x core
    (dftracer/lib64), with pydftracer's dist-info."""
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    (site / "dftracer" / layout).mkdir(parents=True)
    (site / "dftracer" / layout / "libdftracer_preload.so").write_bytes(b"")
    (site / f"pydftracer-{pydftracer}.dist-info").mkdir()
    return tmp_path / "venv"


@pytest.mark.parametrize("layout,ver,dlio_preloaded", [("lib", "1.0.2", False), ("lib64", "2.0.6", True)])
def test_dlio_runs_under_the_preload_library_with_pydftracer_2(tmp_path, layout, ver, dlio_preloaded):
    from profiles import Context, Launch
    venv = _venv(tmp_path, layout, ver)
    found = dftracer.DFTracer().available(Context(dlio_venv=venv, kernel_bin=tmp_path / "h5dlio"))
    assert found.ok and found.info["lib"].endswith(f"dftracer/{layout}/libdftracer_preload.so")
    assert found.info["pydftracer"] == ver
    for side in ("dlio", "kernel"):
        w = dftracer.DFTracer().wrap(Launch(side, "dftracer", ["prog"], {}, tmp_path / side, tmp_path / "data",
                                            found.info))
        assert w.env["DFTRACER_ENABLE"] == "1"
        preloaded = side == "kernel" or dlio_preloaded
        assert (w.env.get("LD_PRELOAD") == found.info["lib"]) == preloaded
        if preloaded:
            assert w.env["DFTRACER_DATA_DIR"].startswith(str(tmp_path / "data") + ":")


def test_only_dlio_under_the_2x_tracer_writes_each_event_as_logged(tmp_path):
    """DLIO with the 2.x tracer (its readers are spawned, and terminated by torch): each event written as logged,
    uncompressed; the kernel (its readers exit) and DLIO with pydftracer 1.0 keep DFTracer's buffered gzip."""
    from profiles import Context, Launch
    for layout, ver, want in (("lib", "1.0.2", False), ("lib64", "2.0.6", True)):
        venv = _venv(tmp_path / ver, layout, ver)
        found = dftracer.DFTracer().available(Context(dlio_venv=venv, kernel_bin=tmp_path / "h5dlio"))
        for side in ("dlio", "kernel"):
            w = dftracer.DFTracer().wrap(Launch(side, "dftracer", ["prog"], {}, tmp_path / side, tmp_path / "data",
                                                found.info))
            unbuffered = {k: w.env.get(k) for k in dftracer.UNBUFFERED_TRACE}
            assert (unbuffered == dftracer.UNBUFFERED_TRACE) == (want and side == "dlio"), (ver, side, unbuffered)


TERMINATED_CHILD = """
import multiprocessing as mp, os, sys, time
def child(path, marker):
    with open(path, 'rb') as f:
        f.read()
    open(marker, 'w').close()   # outside the traced data folder
    time.sleep(120)
if __name__ == '__main__':
    p = mp.get_context('spawn').Process(target=child, args=(sys.argv[1], sys.argv[2]))
    p.start()
    deadline = time.time() + 120
    while time.time() < deadline and not os.path.exists(sys.argv[2]):
        time.sleep(0.1)
    p.terminate()   # as torch's _shutdown_workers ends a reader that has not exited in time
    p.join()
    print(p.exitcode)
"""


@pytest.mark.dlio
@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_terminated_spawned_reader_keeps_its_trace_only_unbuffered(tmp_path, unbuffered):
    """The reason for UNBUFFERED_TRACE, live with the reference venv's tracer: a spawned process that reads a data
    file and is then ended by SIGTERM (as torch ends DLIO 3.x's readers) leaves its open, reads and close in its trace
    with each event written as logged; with DFTracer's defaults (16 MiB buffer, gzip) its trace holds none of them
    (the negative control: every DLIO 3.x reader trace before the setting)."""
    import os
    import subprocess
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    lib = dftracer.preload_library(Path(venv)) if venv else None
    if lib is None or "lib64" not in str(lib):
        pytest.skip("no reference venv with the DFTracer 2.x core (H5DLIO_DLIO_VENV)")
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    (data / "f").write_bytes(os.urandom(300_000))
    script = tmp_path / "t.py"
    script.write_text(TERMINATED_CHILD)
    env = {**os.environ, "LD_PRELOAD": str(lib), "DFTRACER_ENABLE": "1", "DFTRACER_INIT": "PRELOAD",
           "DFTRACER_LOG_FILE": str(out / "trace"), "DFTRACER_DATA_DIR": str(data),
           **(dftracer.UNBUFFERED_TRACE if unbuffered else {})}
    p = subprocess.run([str(Path(venv) / "bin" / "python"), str(script), str(data / "f"), str(tmp_path / "read")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.stdout.strip() == "-15", (p.stdout, p.stderr[-800:])  # ended by SIGTERM
    names = Counter(e.get("name") for t in dftracer.trace_files(out) for e in dftracer.iter_events(t)
                    if e.get("cat") == "POSIX")
    opened = sum(names[n] for n in ("open", "open64", "openat", "openat64"))
    if unbuffered:
        assert opened == 1 and names["close"] == 1 and names["read"] >= 1, names
    else:
        assert not names, names


def test_no_tracer_in_the_venv_is_a_named_skip(tmp_path):
    from profiles import Context
    (tmp_path / "venv" / "lib" / "python3.12" / "site-packages" / "dftracer" / "python").mkdir(parents=True)
    found = dftracer.DFTracer().available(Context(dlio_venv=tmp_path / "venv", kernel_bin=tmp_path / "h5dlio"))
    assert not found.ok and "dftracer 2.x core wheel" in found.reason


def test_dftracer2_batches_in_order_and_cut_short():
    """dftracer.batches: each process's opens cut into batches of 7; two files swapped inside one of DLIO's batches
    fail it (the per-file counts cannot see that); a reader cut short mid-way through a pre-warm batch it may read
    passes, one cut short in a batch it may not read fails."""
    run = _Run()
    segs = run.model_reads(CFG2)
    tables = {s: {"process_opens": dftracer.process_opens(load2(s), Path(RUN2) / s / "data")}
              for s in ("dlio", "kernel")}

    def status(d, r=0):
        return _batches(run, r, segs[r], d, tables["kernel"], True)["status"]
    assert status(tables["dlio"]) == "pass" and status(tables["dlio"], 1) == "pass"
    d = json.loads(json.dumps(tables["dlio"]))
    first = d["process_opens"]["0"][0]
    first[0], first[1] = first[1], first[0]
    assert status(d) == "fail"
    # the kernel's own batches checked against the model too: one batch reversed
    k = json.loads(json.dumps(tables["kernel"]))
    k["process_opens"]["1"][0][:7] = k["process_opens"]["1"][0][:7][::-1]
    assert _batches(run, 1, segs[1], tables["dlio"], k, True)["status"] == "fail"
    # a DLIO reader that read only the first 3 files of a batch its pre-warm may prefetch
    names = {file_index(f): f for p in tables["dlio"]["process_opens"]["0"] for f in p}
    pre = [s for seg in segs[0] for s in seg.get("prefetch_samples", [])]
    d = json.loads(json.dumps(tables["dlio"]))
    d["process_opens"]["0"].append([names.get(i, f"train/img_{i:02d}_of_28.hdf5") for i in pre[-7:][:3]])
    assert status(d) == "pass"
    d["process_opens"]["0"][-1] = d["process_opens"]["0"][-1][::-1]  # the same 3 files in another order
    assert status(d) == "fail"


def test_dftracer2_kernel_only_run_checks_the_kernels_opens_against_the_model():
    """A kernel-only run (SIDES=kernel) of a DLIO 3.x raw reader has no DLIO trace: its kernel's opens per data file
    are still checked against the model (counts.dftracer.kernel.*), not skipped; a planted extra open fails rank 1."""
    k = {"process_opens": dftracer.process_opens(load2("kernel"), Path(RUN2) / "kernel" / "data")}

    class Run(_Run):  # as the harness records a 3.x reference: its probed rule sample_read whole_file
        manifest = {"sides": ["kernel"], "dlio": {"probed": {"rules": {"sample_read": "whole_file"}}}}

        def table(self, name, **_):
            return k if name == "dftracer-kernel.json" else None
    run = Run()
    assert raw_reader(run)
    v = {c["name"]: c["status"] for c in dftracer.check_dftracer(run)}
    assert v == {"counts.dftracer.kernel.rank0": "pass", "counts.dftracer.kernel.rank1": "pass"}
    k["process_opens"]["1"].append([k["process_opens"]["1"][0][0]])
    v = {c["name"]: c["status"] for c in dftracer.check_dftracer(run)}
    assert v["counts.dftracer.kernel.rank1"] == "fail" and v["counts.dftracer.kernel.rank0"] == "pass"


# ---------------------------------------------------------------- the per-file table held compact (issue 26 item 2)

def plain_file_table(events: list[dict], data_dir: Path) -> dict:
    """The per-file table as it was built before it was held compact: a dict and two Counters per file (the test's
    own copy of that algorithm, checkpoint folder aside)."""
    root = str(data_dir).rstrip("/") + "/"
    files: dict = {}
    other: Counter = Counter()
    for e in events:
        if e["cat"] != "POSIX":
            continue
        f = e["fname"] or ""
        if not f.startswith(root):
            other[(e["name"], f)] += 1
            continue
        row = files.setdefault(f[len(root):], {"opens": 0, "closes": 0, "reads": 0, "bytes": 0, "calls": Counter(),
                                               "accesses": Counter(), "read_time_s": 0.0})
        row["calls"][e["name"]] += 1
        row["opens"] += e["name"] in ("open", "openat")
        row["closes"] += e["name"] == "close"
        if e["name"] in ("pread", "read"):
            row["reads"] += 1
            row["bytes"] += max(e["ret"], 0)
            row["accesses"][f"{e['offset']}+{e['count']}"] += 1
            row["read_time_s"] += e["dur"]
    out = {k: {**v, "calls": dict(v["calls"]), "accesses": dict(v["accesses"])} for k, v in sorted(files.items())}
    return {"files": out, "other": [{"call": c, "file": f, "n": n} for (c, f), n in sorted(other.items())]}


@pytest.mark.parametrize("keys,steps", [(8, 1 << 16), (2, 1 << 16), (8, 5), (0, 0)])
@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_compact_file_table_writes_the_plain_tables_json(monkeypatch, side, keys, steps):
    """Shared count tuples, a row's own dict past SHARED_KEYS keys or SHARED_STEPS steps, or no sharing at all: the
    JSON written is the plain table's, byte for byte (key order of every dict included)."""
    monkeypatch.setattr(dft_tables, "SHARED_KEYS", keys)
    monkeypatch.setattr(dft_tables, "SHARED_STEPS", steps)
    events = load(side)
    data = Path(RUN) / side / "data"
    t = dftracer.FileTable(data)
    for e in events:
        t.add(e)
    assert len(t.counts.steps) <= steps
    assert json.dumps(t.result()) == json.dumps(plain_file_table(events, data))


def test_files_sharing_counts_stay_apart_when_one_diverges():
    """Negative control: files counted alike share their count tuples; one more read of one file (a planted
    divergence after the sharing) changes that file's row alone, and the shared counts of the others not at all."""
    events = load("kernel")
    data = Path(RUN) / "kernel" / "data"
    base = dftracer.file_table(events, data)["files"]
    reads = [e for e in events if e["name"] == "pread" and (e["fname"] or "").startswith(str(data) + "/")]
    planted = {**reads[-1], "offset": 12345, "count": 7, "ret": 7}
    got = dftracer.file_table([*events, planted], data)["files"]
    f = planted["fname"][len(str(data)) + 1:]
    assert [k for k in base if base[k] != got[k]] == [f]
    assert got[f]["accesses"]["12345+7"] == 1 and got[f]["reads"] == base[f]["reads"] + 1
    assert got[f]["bytes"] == base[f]["bytes"] + 7 and got[f]["calls"]["pread"] == base[f]["calls"]["pread"] + 1
    shared = [k for k in got if k != f and got[k]["calls"] == got[f]["calls"]]
    assert not shared
    same = Counter(id(v["calls"]) for v in base.values())
    assert max(same.values()) > 1  # the sharing the control runs against is real: several files hold one dict


def test_dlio3_prewarm_may_read_the_batch_queued_when_batch_0_arrives():
    """torch's iterator queues one more batch when batch 0 arrives, before next() returns (torch 2.15
    dataloader.py:1565-1567 _process_data -> _try_put_index): batch pf x W, to worker 0 (the cycle's next). A rank with
    more batches than the window may read it in each pre-warm (seen at 148,000 files). Here 4 workers, prefetch_size 0
    (pf 2): the window is batches 0..7, worker 0's share 0 and 4, the racy batches 1, 2, 3, 5, 6, 7 and the queued 8,
    written by hand; each pre-warm's prefetch samples are those batches of the epoch it reads (its train segment)."""
    cfg = {"dataset": {"num_files_train": 280, "num_samples_per_file": 1},
           "reader": {"batch_size": 7, "read_threads": 4, "prefetch_size": 0, "file_shuffle": "seed",
                      "sample_shuffle": "seed"}, "train": {"epochs": 1}}
    segs = model.dlio3_workload_reads(cfg, 2)
    for r in (0, 1):
        pre, train = segs[r][0], segs[r][1]
        assert (pre["phase"], train["phase"]) == ("prewarm", "train")
        batch = [train["samples"][b * 7:(b + 1) * 7] for b in range(20)]  # 140 samples per rank, 20 batches
        assert pre["samples"] == batch[0] + batch[4]
        assert pre["prefetch_samples"] == [s for b in (1, 2, 3, 5, 6, 7, 8) for s in batch[b]]
        assert pre["prefetched_max"] == 7 * 7
    # a rank with no batch 8 (as at tiny scale): nothing beyond the window
    small = json.loads(json.dumps(cfg))
    small["dataset"]["num_files_train"] = 112  # 56 samples per rank: batches 0..7
    pre = model.dlio3_workload_reads(small, 2)[0][0]
    assert len(pre["prefetch_samples"]) == 6 * 7


@pytest.mark.parametrize("workers", [8, 32])
def test_dlio3_prewarm_window_at_many_workers(workers):
    """MLPerf Storage v3.0's unet3d runs 32 reader workers: with DLIO's default prefetch_size 2, prefetch_factor is
    ceil(2 / W) = 1 (3.x torch_data_loader.py:743), so the pre-warm's window is W batches, one per worker: worker 0
    reads batch 0 only (its share), batches 1..W-1 and the batch W queued when batch 0 arrives are racy. Written by
    hand for W = 8 (the DLIO 3.x run of bench/results/2026-11-27-rt32) and 32; 10,000 files on 2 ranks, batch 7:
    714 batches per rank."""
    cfg = {"dataset": {"num_files_train": 10000, "num_samples_per_file": 1, "num_subfolders_train": 14},
           "reader": {"batch_size": 7, "read_threads": workers, "file_shuffle": "seed", "sample_shuffle": "seed"},
           "train": {"epochs": 1}}
    segs = model.dlio3_workload_reads(cfg, 2)
    for r in (0, 1):
        pre, train, post = segs[r]
        assert (pre["phase"], train["phase"], post["phase"]) == ("prewarm", "train", "prewarm")
        batch = [train["samples"][b * 7:(b + 1) * 7] for b in range(714)]
        assert pre["samples"] == batch[0]
        assert pre["prefetch_samples"] == [s for b in range(1, workers + 1) for s in batch[b]]
        assert pre["prefetched_max"] == workers * 7


# ---------------------------------------------------------------- the parse's fast paths against the plain ones

def _side_dir(tmp_path: Path, src: Path, side: str) -> Path:
    """A launch folder holding one side's traces (the tiny runs' files) and a trace of the rare events made here:
    calls under the launch's checkpoint folder, on a file outside the data folder, numbers that are not numbers, a
    region, a non-complete event."""
    out = tmp_path / side
    out.mkdir()
    for p in sorted(src.glob(f"{side}-*.pfw.gz") if src == DATA else (src / side).glob("*.pfw.gz")):
        (out / p.name).write_bytes(p.read_bytes())
    ck, data = str(out / "checkpoints"), f"{RUN if src == DATA else RUN2}/{side}/data"
    extra = [_ev("open64", "7", 10, 3, f"{ck}/model.pt"), _ev("write", "7", 14, 2, f"{ck}/model.pt", count="9",
             ret="9"), _ev("close", "7", 17, 1, f"{ck}/model.pt"), _ev("__xstat", "7", 18, 1, "/etc/hosts"),
             _ev("pread64", "7", 20, 1, f"{data}/train/extra.h5", offset="x", count=None, ret="12"),
             _ev("pread", "7", "later", 1, f"{data}/train/extra.h5", offset="4", count="4", ret="4"),
             _ev("read_sample", "7", 21, 5, cat="C_APP"), {**_ev("open", "7", 30, 1, f"{data}/x"), "ph": "B"}]
    (out / "trace-1-of-2-extra.pfw").write_text("[\n" + "\n".join(json.dumps(e) for e in extra) + "\n")
    return out


def _plant_count(outdir: Path) -> None:
    """The first data-file read of the first trace holding one: its count one more."""
    for p in sorted(outdir.glob("*.pfw.gz")):
        lines = gzip.open(p, "rt").read().split("\n")
        for k, line in enumerate(lines):
            if '"POSIX"' in line and "read" in line and '"count"' in line:
                e = json.loads(line.rstrip(","))
                e["args"]["count"] = int(e["args"]["count"]) + 1
                lines[k] = json.dumps(e)
                p.write_bytes(gzip.compress("\n".join(lines).encode()))
                return
    raise AssertionError("no read to plant a divergence in")


def _reference(outdir: Path, side: str, data: Path) -> dict:
    """Every table by the plain route: each trace's events decoded by json, normalized as a list, each table fed by
    its own add() (the features by profiles.features.ReadStats, the per-file table by plain_file_table)."""
    from profiles.features import ReadStats
    events = []
    for p in dftracer.trace_files(outdir):
        with (gzip.open(p, "rt") if p.suffix == ".gz" else p.open()) as f:
            for line in f:
                line = line.strip().rstrip(",")
                if line.startswith("{"):
                    events.append({**json.loads(line), "_file_rank": 1 if "-1-of-2" in p.name else 0})
    events = dftracer.normalize(events, side)
    root, ck = str(data) + "/", outdir / "checkpoints"
    rs = ReadStats()
    for e in events:
        if e["cat"] == "POSIX" and e["name"] in ("read", "pread") and (e["fname"] or "").startswith(root):
            rs.add(e["pid"], e["fname"], e["offset"], max(e["ret"], 0), e["rank"], e["ts"], e["dur"])
    plain = plain_file_table([e for e in events if not (e["fname"] or "").startswith(str(ck) + "/")], data)
    return {"events": len(events), "files": plain, "process_opens": dftracer.process_opens(events, data),
            "process_order": dftracer.process_order(events, data), "checkpoints": dftracer.checkpoint_table(events, ck),
            "features": rs.result(),
            "metadata": dftracer.metadata(events, data), "timeline": dftracer.timeline(events)}


@pytest.mark.parametrize("src,side", [(DATA, "dlio"), (DATA, "kernel"), (DATA2, "dlio"), (DATA2, "kernel")])
def test_parse_gives_the_plain_routes_tables(tmp_path, src, side):
    """parse (the first pass's chunked scan, orjson, the fused feed without a dict per hot event, the per-file
    arrays, the features from numpy orders) gives every table of the plain route, byte for byte as JSON, on both
    tracers' traces with the rare events added; parse_json's text is json.dumps of parse's table. Negative
    control: one read's count changed in one trace (a planted divergence) is seen in the files table (its
    accesses), and nowhere else."""
    outdir = _side_dir(tmp_path, src, side)
    data = Path(RUN if src == DATA else RUN2) / side / "data"
    got, want = dftracer.parse(outdir, side, data), _reference(outdir, side, data)
    assert got["checkpoints"] and got["files"]["other"] and "train/extra.h5" in got["files"]["files"]
    for k in want:
        assert json.dumps(got[k]) == json.dumps(want[k]), k
    text, timeline = dftracer.parse_json(outdir, side, data)
    assert text == json.dumps({k: v for k, v in got.items() if k != "timeline"}) and timeline == got["timeline"]
    _plant_count(outdir)
    planted = dftracer.parse(outdir, side, data)
    assert [k for k in want if json.dumps(planted[k]) != json.dumps(want[k])] == ["files"]


def test_features_are_readstats_bit_for_bit():
    """Features (numpy's stable orders, Python's sums over the same sequences) against profiles.features.ReadStats
    on reads made to tell orders apart: threads of one process interleaved (starts out of trace order), equal
    starts, a process whose rank changes, files read again, zero durations, an odd and an even count. Negative
    control: the same durations summed in trace order (a streaming sum) give another io_time_s, so an order
    mistake is seen."""
    import random

    from profiles.features import ReadStats
    rnd = random.Random(26)
    for n in (4001, 4000):
        f, r = dftracer.Features(Path("/d")), ReadStats()
        durs = []
        for k in range(n):
            proc, i = rnd.choice(["7", "8", "10"]), rnd.randrange(50)
            major = 1 if proc == "10" and k > n // 2 else 0
            start = round(rnd.uniform(0, 5), 3)  # ties among 4,000 draws of 5,001 values
            off, size, dur = rnd.choice([0, 48, 96, 2048]), rnd.choice([8, 48, 512, 4096]), rnd.choice(
                [0.0, rnd.uniform(1e-6, 1e-3)])
            f.add_read(proc, f.names.get(f"train/{i}.h5"), off, size, major, start, dur)
            r.add(proc, f"/d/train/{i}.h5", off, size, major, start, dur)
            durs.append(dur)
        want = r.result()
        assert json.dumps(f.result()) == json.dumps(want)
        assert sum(durs) != want["io_time_s"]


def test_json_text_writes_numbers_and_names_as_json_dumps(monkeypatch):
    """FileTable.json_parts against json.dumps of its result: a name out of ASCII, a row's own counts dict (past
    SHARED_KEYS accesses), shared count tuples. Negative control: a read time written with fewer digits is seen."""
    t = dftracer.FileTable(Path("/d"))
    for k in range(12):
        for name in ("train/é.h5", "train/b.h5", "train/c.h5") if k < 2 else ("train/é.h5",):
            t.add({"cat": "POSIX", "name": "pread", "fname": f"/d/{name}", "ret": 8, "offset": 8 * k, "count": 8,
                   "dur": 1.234567e-6 * (k + 1) / 7})
    want = json.dumps(t.result())
    assert "".join(t.json_parts()) == want and "\\u00e9" in want
    monkeypatch.setattr(dft_tables, "_float_text", lambda x: f"{x:.4g}")
    assert "".join(t.json_parts()) != want


@pytest.mark.parametrize("gz", [False, True])
def test_events_are_jsons_where_orjson_differs(tmp_path, gz):
    """Lines orjson refuses (NaN, a lone surrogate escape, a number past the float range) or decodes otherwise (an
    integer past 64 bits: a float) give json's events, in a plain file (checked a chunk at a time) and a gzip
    stream (a line at a time); a cut line is skipped. Negative control: orjson alone refuses or changes each."""
    import orjson
    odd = ['{"a": NaN}', '{"a": "\\ud800"}', '{"a": 1e400}', '{"ts": 123456789012345678901234567890}',
           '{"ts": -9223372036854775809}']
    for line in odd:
        try:
            assert repr(orjson.loads(line)) != repr(json.loads(line))
        except orjson.JSONDecodeError:
            pass
    lines = ['{"ts": "1795781786850667", "p": 18446744073709551615}', *odd, '{"id": "9", "na']
    p = tmp_path / ("trace-0-of-1.pfw.gz" if gz else "trace-0-of-1.pfw")
    p.write_bytes(gzip.compress(",\n".join(lines).encode()) if gz else ",\n".join(lines).encode())
    want = [{**json.loads(x), "_file_rank": 0} for x in lines[:-1]]
    assert repr(dftracer.read_events(p)) == repr(want)
    assert _decode(lines[-1]) is None and _decode("]") is None


def test_first_pass_scan_selects_the_lines_holding_a_marker(tmp_path, monkeypatch):
    """_scan_lines (chunks searched by str.find) selects the lines `any(x in line ...)` selects, in order, once each,
    with chunk edges inside lines, inside a marker and between \\r and \\n, and a last line without a newline.
    Negative control: a marker split by a chunk edge is there (a per-chunk search without the carried line would
    miss it)."""
    only = FIRST_PASS
    body = "".join(f'{{"id":"{k}","name":"{rnd}"}}' + ("\r\n" if k % 3 == 0 else "\r" if k % 5 == 0 else "\n")
                   for k, rnd in enumerate(["x", "rank_info", "y", "FH rank_info train_epoch", "z", '"FH"', "w",
                                            "DLIOBenchmark._train", "v"] * 7)) + '{"last":"train_epoch"}'
    p = tmp_path / "t.pfw"
    p.write_bytes(body.encode())
    with p.open("rt") as f:
        want = [line for line in f if any(x in line for x in only)]
    monkeypatch.setattr(dft_traces, "SCAN_CHUNK", 37)
    with p.open("rt") as f:
        got = list(_scan_lines(f, only))
    assert got == want and len(want) == 7 * 4 + 1
    assert any(0 < (body.find(x, k) % 37) > 37 - len(x) for x in only for k in range(0, len(body), 37)
               if body.find(x, k) >= 0)


def test_kernel_only_hdf5_one_sample_files_opens_against_the_model():
    """A kernel-only run of a DLIO 2.0.0 HDF5 workload of one sample per file (issue 26: the 1.28 M-file imagenet_files
    run): the kernel's DFTracer opens per data file and rank are checked against the model, as for a whole-file
    reader. The kernel's real traces of a tiny unet3d run (tests/data/dftracer: 28 files, 2 epochs, 2 ranks, 4
    readers, run-tiny's workload: every file opened once per epoch, by hand 2 x 28 = 56 opens over both ranks);
    planted: an open more on rank 1, then a file of rank 0's missing."""
    man = json.loads((Path(__file__).parent / "data" / "run-tiny" / "manifest.json").read_text())  # its workload
    k = {"process_opens": dftracer.process_opens(load("kernel"), Path(RUN) / "kernel" / "data")}

    class Run:
        ranks, release, cfg = 2, "2.0.0", man["workload"]["config"]
        manifest = {"sides": ["kernel"]}

        def model_reads(self, cfg):
            return model.workload_reads(cfg, self.ranks, self.release)

        def table(self, name, **_):
            return k if name == "dftracer-kernel.json" else None
    run = Run()
    assert not raw_reader(run)
    assert sum(len(files) for r in ("0", "1") for files in k["process_opens"][r]) == 56
    v = {c["name"]: c["status"] for c in dftracer.check_dftracer(run)}
    assert v == {"counts.dftracer.kernel.rank0": "pass", "counts.dftracer.kernel.rank1": "pass"}
    k["process_opens"]["1"].append([k["process_opens"]["1"][0][0]])
    v = {c["name"]: c["status"] for c in dftracer.check_dftracer(run)}
    assert v == {"counts.dftracer.kernel.rank0": "pass", "counts.dftracer.kernel.rank1": "fail"}
    next(files for files in k["process_opens"]["0"] if files).pop()
    v = {c["name"]: c["status"] for c in dftracer.check_dftracer(run)}
    assert v["counts.dftracer.kernel.rank0"] == "fail"
    # two samples per file: an open is no longer one sample's, so no such check (the side-by-side one applies)
    run.cfg = {**run.cfg, "dataset": {**run.cfg["dataset"], "num_samples_per_file": 2}}
    assert [c["name"] for c in dftracer.check_dftracer(run)] == ["dftracer.per_file"]


# ---------------------------------------------------------------- dftracer.order: which file, in which order

def _order_tables() -> dict:
    """Both sides' tables dftracer.order reads (the per-file rows and process_order), from the committed real traces
    of the tiny unet3d run (2 ranks, 4 reader processes of which 2 read: 2 batches of 7 files per rank and epoch)."""
    tables = {}
    for side in ("dlio", "kernel"):
        ev, data = load(side), Path(RUN) / side / "data"
        tables[side] = {"files": dftracer.file_table(ev, data), "process_order": dftracer.process_order(ev, data)}
    return tables


class _OrderRun:
    ranks, release = 2, "2.0.0"
    manifest: dict = {}
    cfg = json.loads((Path(__file__).parent / "data" / "run-tiny" / "manifest.json").read_text())["workload"]["config"]


def _order(d: dict, k: dict, run=None) -> dict:
    return {c["name"]: c for c in dftracer.check_order(run or _OrderRun(), d, k)}


def test_process_order_names_each_reading_process_and_its_opens_in_order():
    """process_order by hand against the workload: per rank, 2 reading processes (torch's workers 0 and 1: 2 batches
    of 7 per epoch; workers 2 and 3 read nothing), each opening 7 files per epoch over 2 epochs, in time order; the
    rank's 14 files per epoch read once each, rank 0 files 0-13, rank 1 files 14-27 (DLIO 2.0.0's sampler slices);
    the kernel's processes by tid (its readers, forked after the preload library started, share its pid)."""
    for side, t in _order_tables().items():
        po = t["process_order"]
        assert sorted(po) == ["0", "1"]
        for r in (0, 1):
            rows = po[str(r)]
            assert len(rows) == 2 and len({x["tid"] for x in rows}) == 2, (side, r)
            assert [len(x["opens"]) for x in rows] == [14, 14]
            for epoch in (0, 1):
                got = sorted(file_index(f) for x in rows for f in x["opens"][7 * epoch: 7 * epoch + 7])
                assert got == list(range(14 * r, 14 * r + 14)), (side, r, epoch)


def test_order_passes_on_the_real_traces_and_fails_on_each_planted_divergence():
    """dftracer.order.rank<r> on both sides' real traces: PASS per rank. Negative controls, each failing the planted
    rank only, the detail naming the first differing open (its position, both names): two opens of one kernel
    process swapped; a rank's lists replaced by the other rank's; one file name changed; the two reading processes
    of a rank merged into one (the same opens, fewer processes)."""
    t = _order_tables()
    v = _order(t["dlio"], t["kernel"])
    assert {n: c["status"] for n, c in v.items()} == {"dftracer.order.rank0": "pass", "dftracer.order.rank1": "pass"}
    assert "2 reading processes on each side, 28 data-file opens" in v["dftracer.order.rank0"]["detail"]

    k = copy.deepcopy(t["kernel"])  # two opens of one process swapped
    row = next(x for x in k["process_order"]["0"] if file_index(x["opens"][0]) == 7)  # worker 0: batch 0 first
    a, b = row["opens"][3], row["opens"][4]
    row["opens"][3], row["opens"][4] = b, a
    v = _order(t["dlio"], k)
    assert v["dftracer.order.rank0"]["status"] == "fail" and v["dftracer.order.rank1"]["status"] == "pass"
    assert "position 3 of a reading process's opens" in v["dftracer.order.rank0"]["detail"]
    assert f"DLIO {a}, the kernel {b}" in v["dftracer.order.rank0"]["detail"]

    k = copy.deepcopy(t["kernel"])  # rank 1 reads what rank 0 reads (ranks' slices swapped)
    k["process_order"]["1"] = copy.deepcopy(k["process_order"]["0"])
    k["files"]["files"] = t["kernel"]["files"]["files"]
    v = _order(t["dlio"], k)
    assert v["dftracer.order.rank1"]["status"] == "fail" and v["dftracer.order.rank0"]["status"] == "pass"
    assert "position 0" in v["dftracer.order.rank1"]["detail"]

    k = copy.deepcopy(t["kernel"])  # one name changed: another file (of the run's data) in its place
    row = k["process_order"]["1"][0]
    was, row["opens"][9] = row["opens"][9], row["opens"][0]
    v = _order(t["dlio"], k)
    assert v["dftracer.order.rank1"]["status"] == "fail" and v["dftracer.order.rank0"]["status"] == "pass"
    assert "position 9 of a reading process's opens" in v["dftracer.order.rank1"]["detail"]
    assert f"DLIO {was}, the kernel {row['opens'][0]}" in v["dftracer.order.rank1"]["detail"]

    k = copy.deepcopy(t["kernel"])  # a process's first open of another file: named beside the same worker's list
    row = next(x for x in k["process_order"]["0"] if file_index(x["opens"][0]) == 11)  # worker 1: batch 1 first
    row["opens"][0] = "train/img_27_of_28.hdf5"
    v = _order(t["dlio"], k)
    assert "position 0 of a reading process's opens" in v["dftracer.order.rank0"]["detail"]
    assert "DLIO train/img_11_of_28.hdf5, the kernel train/img_27_of_28.hdf5" in v["dftracer.order.rank0"]["detail"]

    k = copy.deepcopy(t["kernel"])  # one process reads what two did (the same opens, in the same time order)
    rows = k["process_order"]["0"]
    k["process_order"]["0"] = [{**rows[0], "opens": rows[0]["opens"] + rows[1]["opens"]}]
    v = _order(t["dlio"], k)
    assert v["dftracer.order.rank0"]["status"] == "fail"
    assert "reading processes: DLIO 2, the kernel 1" in v["dftracer.order.rank0"]["detail"]


def test_order_says_why_it_cannot_compare():
    """A TensorFlow workload (tf.data's thread pool: which thread opens a file is not fixed) and tables collected
    before process_order: one SKIP row saying why, never a PASS."""
    t = _order_tables()
    run = _OrderRun()
    run.cfg = {**run.cfg, "framework": "tensorflow", "reader": {**run.cfg["reader"], "data_loader": "tensorflow"}}
    assert [(c["name"], c["status"]) for c in dftracer.check_order(run, t["dlio"], t["kernel"])] == \
        [("dftracer.order", "skip")]
    old = {k: v for k, v in t["kernel"].items() if k != "process_order"}
    v = dftracer.check_order(_OrderRun(), t["dlio"], old)
    assert [c["status"] for c in v] == ["skip"] and "before process_order" in v[0]["detail"]


def test_validate_compares_the_order_of_opens(tmp_path):
    """`python -m validate` on a copy of the committed run-tiny whose DFTracer tables get process_order from the
    committed traces (tests/data/dftracer: a run of the same workload, seed and ranks, so the same order): PASS,
    dftracer.order.rank0/1 among the passed rows, the order class compared (not in not_compared). Negative control:
    two opens of one of rank 0's kernel processes swapped: the verdict FAILs on dftracer.order.rank0 alone (the
    per-file counts, the Log VFD and the model's counts cannot see it)."""
    from validate.checks import validate
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run-tiny", run)
    order = {side: t["process_order"] for side, t in _order_tables().items()}

    def put(k_order: dict) -> dict:
        for side, po in (("dlio", order["dlio"]), ("kernel", k_order)):
            p = run / "tables" / f"dftracer-{side}.json"
            p.write_text(json.dumps({**json.loads(p.read_text()), "process_order": po}))
        return validate(run)

    v = put(order["kernel"])
    rows = {c["name"]: c["status"] for c in v["checks"]}
    assert v["verdict"] == "pass" and rows["dftracer.order.rank0"] == rows["dftracer.order.rank1"] == "pass"
    assert "open_order" not in {x["io"] for x in v["not_compared"]}
    k = copy.deepcopy(order["kernel"])
    k["0"][0]["opens"][5], k["0"][0]["opens"][6] = k["0"][0]["opens"][6], k["0"][0]["opens"][5]
    v = put(k)
    assert v["verdict"] == "fail" and v["failed"] == ["dftracer.order.rank0"]
