"""MLCommons DLIO 3.x's JPEG/PNG training (MLPerf Storage v3.0 retinanet_b200) in the kernel's 3.0.2 entry: the files
3.x's non-DALI image generator writes (d1 x d2 raw random bytes, no image bitstream: jpeg_generator.py:78-98 at
f6796ed; png_generator.py the same but for the extension), checked against numpy recomputing DLIO's draws (not
against the kernel's code), their names, the reads (whole files, as npz: the same local-FS mixin) against the analytic
model, and the refusals. The real DLIO 3.x side runs in `make validate WORKLOAD=retinanet_b200 DLIO=<3.x checkout>`
(docs/fidelity-dlio3.md, row 13)."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests import kernel
from tests.test_dlio3_npz import strace_opens
from validate import model


def v3img(data: Path, fmt: str = "jpeg", **kw) -> dict:
    return kernel.tiny(data, **{"dlio-version": "3.0.2", "format": fmt, "num-files-eval": 0, "shuffle": "off",
                                "num-samples-per-file": 1, **kw})


def dlio_image_files(files: int, ranks: int, dims: list[int]) -> dict[int, bytes]:
    """What DLIO 3.x's numpy path writes, recomputed with numpy: rank q's rng = default_rng(10 + q) draws each of its
    files' seed, integers(0, 2**63), in its file order (data_generator.py:150-166); file i is
    gen_random_tensor((d1, d2), uint8, rng=default_rng(seed)) (jpeg_generator.py:92-96): rng.random(float32) * 255 +
    0, astype uint8 (utils/utility.py:656-660), written as it is (f.write(data))."""
    out = {}
    for q in range(ranks):
        rng = np.random.default_rng(10 + q)
        for i in range(q, files, ranks):
            seed = int(rng.integers(0, 2**63))
            rec = np.random.default_rng(seed).random(size=(dims[2 * i], dims[2 * i + 1]), dtype=np.float32)
            out[i] = (rec * 255 + 0).astype(np.uint8).tobytes()
    return out


@pytest.mark.parametrize("fmt,stdev", [("jpeg", 0), ("jpeg", 9000), ("png", 9000)])
def test_image_files_are_dlio3s_bytes(tmp_path, fmt, stdev):
    """Every file the kernel writes is named img_<i>_of_<N>.<format> and is, byte for byte, what DLIO 3.x's non-DALI
    generator writes with numpy (no dgen-py): d1 x d2 raw bytes, d1, d2 DLIO's dimension draws (np.random.seed(10 + q),
    get_dimension(total): data_generator.py:150-152, :300-318), no JPEG/PNG bitstream."""
    files, ranks, rl = 7, 2, 40000
    sets = v3img(tmp_path / "data", fmt, **{"num-files-train": files, "record-length": rl,
                                            "record-length-stdev": stdev, "generate-data": True, "train": False})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    dim, scale = int(math.sqrt(rl)), stdev / 2.0 / math.sqrt(rl)
    dims = {}
    for q in range(ranks):
        np.random.seed(10 + q)
        d = [max(int(x), 1) for x in np.random.normal(dim, scale, 2 * files)] if stdev else [dim] * (2 * files)
        dims.update({k: d[k] for i in range(q, files, ranks) for k in (2 * i, 2 * i + 1)})
    want = dlio_image_files(files, ranks, [dims[k] for k in range(2 * files)])
    assert sorted(p.name for p in (tmp_path / "data" / "train").iterdir()) == sorted(
        f"img_{i}_of_{files}.{fmt}" for i in range(files))
    sizes = set()
    for i in range(files):
        raw = (tmp_path / "data" / "train" / f"img_{i}_of_{files}.{fmt}").read_bytes()
        assert len(raw) == dims[2 * i] * dims[2 * i + 1] == len(want[i]), (i, len(raw))
        diff = [k for k in range(len(raw)) if raw[k] != want[i][k]]
        assert not diff, (i, len(diff), diff[:8])
        sizes.add(len(raw))
    assert (len(sizes) > 1) == (stdev > 0), sizes  # the draws vary the sizes exactly when a stdev is given


@pytest.mark.parametrize("rt", [0, 1])
def test_jpeg_reads_are_the_models(tmp_path, rt):
    """3 sub-folders over 30 files, 2 ranks, batch 5, 2 epochs, file_shuffle seed: the kernel's reads per rank, epoch
    and pre-warm (each a whole file: one sample per file) are the model's, written from DLIO's source
    (validate/model.py dlio3_workload_reads), at 0 and 1 read threads."""
    files, ranks, S = 30, 2, 3
    sets = v3img(tmp_path / "data", **{"num-files-train": files, "batch-size": 5, "read-threads": rt, "epochs": 2,
                                       "random-seed": 42, "file-shuffle": "seed", "seed-change-epoch": True,
                                       "num-subfolders-train": S, "record-length": 4096, "generate-data": True,
                                       "train": True})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    cfg = {"dataset": {"num_files_train": files, "num_samples_per_file": 1, "num_subfolders_train": S},
           "reader": {"batch_size": 5, "read_threads": rt, "prefetch_size": 2, "file_shuffle": "seed"},
           "train": {"epochs": 2, "seed": 42, "seed_change_epoch": True}}
    want = model.workload_reads(cfg, ranks, "3.0.2")
    for rank in range(ranks):
        rows = r.samples(rank)
        for seg in want[rank]:
            use = "prewarm" if seg["phase"] == "prewarm" else "step"
            got = [int(x["sample"]) for x in rows if x["use"] == use and int(x["epoch"]) == seg["epoch"]]
            assert got == seg["samples"], (rank, seg["phase"], seg["epoch"])
    for i in range(files):  # data_generator.py:350-353: train/<i % S>/img_<i padded to 2>_of_<N>.jpeg
        assert (tmp_path / "data" / "train" / str(i % S) / f"img_{i:02d}_of_{files}.jpeg").is_file(), i


@pytest.mark.parametrize("sets,key", [
    ({"format": "tfrecord"}, "'dataset.format'"),
    ({"format": "jpeg", "dlio-version": "2.0.0"}, "'dataset.format'"),
    ({"format": "png", "odirect": True}, "'odirect'"),
    ({"format": "jpeg", "num-samples-per-file": 2}, "'num-samples-per-file'"),
    ({"format": "jpeg", "compression": "gzip", "chunking": True}, "'chunking'"),
])
def test_image_refusals_name_the_key(tmp_path, sets, key):
    """DLIO 3.x refuses O_DIRECT for images (reader_factory.py:68-69); one image per file whatever
    num_samples_per_file (jpeg_generator.py:73-98); 2.x decodes images with PIL (not replayed): exit 2 naming the
    key, nothing written."""
    s = v3img(tmp_path / "data", **{"generate-data": True, "train": True, **sets})
    r = kernel.run(tmp_path, 1, s)
    assert r.rc == 2, r.proc.stderr
    assert key in r.proc.stderr, r.proc.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("fmt,sets,first", [
    ("jpeg", [], "key 'dataset.format' (format): jpeg is replayed for DLIO 3.x only"),
    ("png", [], "key 'dataset.format' (format): png is replayed for DLIO 3.x only"),
    ("hdf5", ["format=jpeg"], "key 'dataset.format' (format): jpeg is replayed for DLIO 3.x only"),
    ("hdf5", [], None),                       # a format the entry replays: the key's own error alone
    ("jpeg", ["dlio-version=3.0.2"], None),   # jpeg where it is replayed: likewise
])
def test_an_unreplayed_format_is_named_before_a_bad_key_of_its_file(tmp_path, fmt, sets, first):
    """A jpeg workload over DLIO 2.0.0's resnet50_h100 inherits its record_length 114660.07, not an integer: the
    refusal names the format first (the reason the workload cannot run on that entry), the key's error after it
    ("; also: ..."); where the format is replayed, only the key's error (the negative controls)."""
    cfg = tmp_path / "w.yaml"
    cfg.write_text(f"dataset:\n  format: {fmt}\n  data_folder: {tmp_path / 'data'}\nreader:\n  batch_size: 2.5\n")
    argv = [kernel.BIN, "--config", str(cfg), "--dry-run", "--ranks", "1"]
    for s in sets:
        argv += ["--set", s]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    bad_key = "key 'batch-size': '2.5' is not an integer"
    assert p.returncode == 2 and bad_key in p.stderr and p.stderr.count("\n") == 1, p.stderr
    if first:
        assert p.stderr.index(first) < p.stderr.index("; also: ") < p.stderr.index(bad_key), p.stderr
    else:
        assert "dataset.format" not in p.stderr and "; also" not in p.stderr, p.stderr
    assert not (tmp_path / "data").exists()


STRACE = Path(__file__).parent / "data" / "dlio3-jpeg-strace" / "calls.json"


def _strace() -> dict:
    return json.loads(STRACE.read_text())


def _jpeg_cfg() -> dict:
    w = _strace()["workload"]
    return {"dataset": {"num_files_train": w["dataset"]["num_files_train"], "num_samples_per_file": 1,
                        "num_subfolders_train": w["dataset"].get("num_subfolders_train", 0)},
            "reader": {**w["reader"], "prefetch_size": 2}, "train": {**w["train"], "seed_change_epoch": True}}


def test_model_reads_what_the_real_dlio3_read_from_jpeg():
    """The real DLIO 3.x on retinanet_b200 tiny under strace (tests/data/dlio3-jpeg-strace, 2 ranks, 1 read thread, 1
    epoch, its own 96 files): each of its reader processes (one per pre-warm and epoch, spawned anew) opened the
    files the model gives that iterator, in its order, each pre-warm both batches of worker 0's share."""
    want = model.workload_reads(_jpeg_cfg(), 2, "3.0.2")
    assert Counter(tuple(p) for p in _strace()["buffered"]["process_opens"]) == Counter(
        tuple(s["bytes"]) for r in want for s in want[r])


def test_kernel_reads_jpeg_with_dlio3s_system_calls(tmp_path):
    """The kernel (3.0.2, format jpeg, its own dataset of the same shape) under strace: every data-file open is the
    real DLIO 3.x's sequence of calls (CPython's open().read(): the whole file, no decode), and each rank opens the
    files the model gives its pre-warms and epoch, in order."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed: the system-call comparison cannot run")
    w, st = _jpeg_cfg(), tmp_path / "st"
    sets = v3img(tmp_path / "data", **{"num-files-train": w["dataset"]["num_files_train"], "record-length": 322957,
                                       "batch-size": w["reader"]["batch_size"], "read-threads": 1,
                                       "cpu-count": 2,  # the fixture's 2 CPUs: 2 ranks -> 1 reader (DLIO 3.x)
                                       "file-shuffle": "seed", "epochs": 1, "random-seed": w["train"]["seed"],
                                       "seed-change-epoch": True, "generate-data": True, "train": False})
    assert kernel.run(tmp_path, 2, sets, name="gen").rc == 0
    sets.update({"generate-data": False, "train": True})
    st.mkdir()
    r = kernel.run(tmp_path, 2, sets, launcher=list(kernel.MPIRUN) + ["-np", "2", "strace", "-ff", "-tt", "-e",
                   "trace=openat,open,read,readv,pread64,lseek,newfstatat,fstat,statx,stat,close,ioctl", "-o",
                   str(st / "st")])
    assert r.rc == 0, r.proc.stderr
    seqs, procs = strace_opens(st, "jpeg")
    assert set(seqs) == set(_strace()["buffered"]["per_open"]), seqs
    want = model.workload_reads(w, 2, "3.0.2")
    assert Counter(tuple(p) for p in procs) == Counter(tuple(f for s in want[q] for f in s["bytes"]) for q in want)
