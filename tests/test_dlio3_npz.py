"""MLCommons DLIO 3.x's npz training (MLPerf Storage v3.0 unet3d_b200) in the kernel's 3.0.2 entry: the files np.savez
writes (checked against numpy's own np.savez, not against the kernel's code), their names and sub-folders, the order
rank 0 lists them in (against the analytic model, which sorts DLIO's path strings: validate/model.py dlio3_listing),
and the refusals. The real DLIO 3.x side runs in `make validate WORKLOAD=unet3d_b200 DLIO=<3.x checkout>`
(docs/fidelity-dlio3.md, rows 10-11)."""
from __future__ import annotations

import io
import json
import math
import re
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests import kernel
from validate import model


def v3npz(data: Path, **kw) -> dict:
    return kernel.tiny(data, **{"dlio-version": "3.0.2", "format": "npz", "num-files-eval": 0, "shuffle": "off",
                                **kw})


def dlio_npz_files(files: int, ranks: int, spf: int, dims: list[int]) -> dict[int, bytes]:
    """What DLIO 3.x's numpy path writes, recomputed with numpy: rank q's rng = default_rng(10 + q) draws each of its
    files' seed, integers(0, 2**63), in its file order (data_generator.py:150-166 at f6796ed); file i's records are
    gen_random_tensor((d1, d2, n), uint8, rng=default_rng(seed)): rng.random(float32) * 255 + 0, astype uint8
    (utils/utility.py:656-660); the file np.savez(out, x=records, y=[0] * n) (npz_generator.py:88-97)."""
    out = {}
    for q in range(ranks):
        rng = np.random.default_rng(10 + q)
        for i in range(q, files, ranks):
            seed = int(rng.integers(0, 2**63))
            info = np.iinfo(np.uint8)
            rec = np.random.default_rng(seed).random(size=(dims[2 * i], dims[2 * i + 1], spf), dtype=np.float32)
            rec = (rec * (info.max - info.min) + info.min).astype(np.uint8)
            buf = io.BytesIO()
            np.savez(buf, x=rec, y=[0] * spf)
            out[i] = buf.getvalue()
    return out


@pytest.mark.parametrize("spf,stdev", [(1, 488832), (3, 0)])
def test_npz_files_are_dlio3s_bytes(tmp_path, spf, stdev):
    """Every file the kernel writes is, byte for byte, the file DLIO 3.x's numpy generator writes (recomputed with
    numpy's own np.random and np.savez): zip layout, zip64 extra fields, npy headers, samples and CRC-32s; numpy
    reads it back with the shape DLIO draws. (A DLIO with dgen-py or s3dlio installed writes other sample bytes:
    docs/fidelity-dlio3.md.)"""
    files, ranks, rl = 6, 2, 65536
    sets = v3npz(tmp_path / "data", **{"num-files-train": files, "num-samples-per-file": spf, "record-length": rl,
                                       "record-length-stdev": stdev, "generate-data": True, "train": False})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    dim, scale = int(math.sqrt(rl)), stdev / 2.0 / math.sqrt(rl)
    dims = {}
    for q in range(ranks):  # data_generator.py:150-152: get_dimension(total) after np.random.seed(10 + q)
        np.random.seed(10 + q)
        d = [max(int(x), 1) for x in np.random.normal(dim, scale, 2 * files)] if stdev else [dim] * (2 * files)
        dims.update({k: d[k] for i in range(q, files, ranks) for k in (2 * i, 2 * i + 1)})
    want = dlio_npz_files(files, ranks, spf, [dims[k] for k in range(2 * files)])
    for i in range(files):
        path = tmp_path / "data" / "train" / f"img_{i}_of_{files}.npz"
        raw = path.read_bytes()
        with np.load(path) as z:
            assert z["x"].shape == (dims[2 * i], dims[2 * i + 1], spf) and z["x"].dtype == np.uint8
            assert z["y"].tolist() == [0] * spf and z["y"].dtype == np.int64
        assert len(raw) == len(want[i]), (path.name, len(raw), len(want[i]))
        diff = [k for k in range(len(raw)) if raw[k] != want[i][k]]
        assert not diff, (path.name, len(diff), diff[:8])
        assert zipfile.ZipFile(path).testzip() is None


def test_npz_subfolder_listing_order_is_dlio3s(tmp_path):
    """3 sub-folders over 28 files (10, 9, 9): DLIO 3.x's rank 0 lists the paths sorted (sub-folder 0's files, then
    1's, ...: main.py:371-419), deals them round-robin and reshards per epoch. The kernel's reads per rank, epoch and
    pre-warm are the model's, which differ from the flat listing's (so this test tells the two apart)."""
    files, ranks, S = 28, 2, 3
    sets = v3npz(tmp_path / "data", **{"num-files-train": files, "num-samples-per-file": 1, "batch-size": 7,
                                       "read-threads": 0, "epochs": 2, "random-seed": 42, "file-shuffle": "seed",
                                       "seed-change-epoch": True,
                                       "num-subfolders-train": S, "generate-data": True, "train": True})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    cfg = {"dataset": {"num_files_train": files, "num_samples_per_file": 1, "num_subfolders_train": S},
           "reader": {"batch_size": 7, "read_threads": 0, "prefetch_size": 2, "file_shuffle": "seed"},
           "train": {"epochs": 2, "seed": 42, "seed_change_epoch": True}}
    want = model.workload_reads(cfg, ranks, "3.0.2")
    flat = model.workload_reads({**cfg, "dataset": {**cfg["dataset"], "num_subfolders_train": 0}}, ranks, "3.0.2")
    differs = False
    for rank in range(ranks):
        rows = r.samples(rank)
        for seg, fseg in zip(want[rank], flat[rank], strict=True):
            use = "prewarm" if seg["phase"] == "prewarm" else "step"
            got = [int(x["sample"]) for x in rows if x["use"] == use and int(x["epoch"]) == seg["epoch"]]
            assert got == seg["samples"], (rank, seg["phase"], seg["epoch"])
            differs |= got != fseg["samples"]
    assert differs, "the sub-folder listing order did not change what the ranks read: the test cannot tell"
    for i in range(files):  # data_generator.py:350-353: train/<i % S padded to len(str(S))>/img_<i>_of_<N>.npz
        assert (tmp_path / "data" / "train" / str(i % S) / f"img_{i:02d}_of_{files}.npz").is_file(), i


@pytest.mark.parametrize("sets,key", [
    ({"format": "tfrecord"}, "'dataset.format'"),
    ({"format": "npz", "dlio-version": "2.0.0"}, "'dataset.format'"),
    ({"format": "npz", "compression": "gzip", "chunking": True}, "'chunking'"),
    ({"format": "npz", "record-length": 3 * 2 ** 30}, "'record-length'"),
    ({"format": "npz", "num-subfolders-train": 1}, "'num-subfolders-train'"),
])
def test_npz_refusals_name_the_key(tmp_path, sets, key):
    s = v3npz(tmp_path / "data", **{"generate-data": True, "train": True, **sets})
    r = kernel.run(tmp_path, 1, s)
    assert r.rc == 2, r.proc.stderr
    assert key in r.proc.stderr, r.proc.stderr
    assert not (tmp_path / "data").exists()


NPZ_STRACE = json.loads((Path(__file__).parent / "data" / "dlio3-npz-strace" / "calls.json").read_text())
OPEN = re.compile(r'open(?:at)?\(.*?"([^"]+\.npz)", ([A-Z_|]+)\) = (\d+)')
IOV_LEN = re.compile(r"iov_len=(\d+)")
CALL = re.compile(r"\d\d:\d\d:\d\d\.\d+ (\w+)\((.*)\) += (-?\d+)")


def _norm(seq: str) -> str:
    """A data-file open's calls with its size written S (each file has its own) and addresses dropped."""
    def rd(m):
        want, got = int(m.group(1)), int(m.group(2))
        return "read(1)=0" if (want, got) == (1, 0) else "read(S+1)=S" if want == got + 1 else m.group(0)

    def rv(m):
        aligned = int(m.group(1)) == -(-int(m.group(2)) // 4096) * 4096
        return f"readv(iov_len={'ceil4096(S)' if aligned else m.group(1)})=S"
    seq = re.sub(r"read\((\d+)\)=(\d+)", rd, seq)
    seq = re.sub(r"readv\(iov_len=(\d+)\)=(\d+)", rv, seq)
    return re.sub(r"0x[0-9a-f]+", "ADDR", re.sub(r"st_size=\d+", "st_size=S", seq))


def strace_opens(folder: Path, ext: str = "npz") -> tuple[Counter, list[list[int]]]:
    """Per data-file open (files ending .<ext>) in strace -ff -tt files: the calls on its descriptor (and stats of its
    path) to its close, normalised; per process, the file indices in the order opened."""
    seqs: Counter = Counter()
    procs = []
    opener = re.compile(OPEN.pattern.replace(r"\.npz", "\\." + ext))
    for f in sorted(folder.glob("st.*")):
        fd, cur, order, path = None, [], [], ""
        for ln in f.read_text().splitlines():
            m = opener.search(ln)
            if m and fd is None:
                path, fd, cur = m.group(1), m.group(3), [f"openat({m.group(2)})"]
                order.append(int(re.search(r"img_(\d+)_of", path).group(1)))
                continue
            m = CALL.search(ln) if fd is not None else None
            if not m:
                continue
            call, args, ret = m.groups()
            if call in ("newfstatat", "statx", "stat") and path in args:
                cur.append(f"{call}(path)")
            elif args.split(",")[0] == fd:
                if call == "readv":
                    iov = IOV_LEN.search(args)
                    cur.append(f"readv(iov_len={iov.group(1)})={ret}")
                elif call in ("read", "pread64"):
                    cur.append(f"{call}({args.split(',')[-1].strip()})={ret}")
                elif call == "close":
                    cur.append("close")
                    seqs[_norm(" ".join(cur))] += 1
                    fd = None
                else:
                    cur.append(f"{call}({','.join(a.strip() for a in args.split(',')[1:])})={ret}")
        if order:
            procs.append(order)
    return seqs, procs


def _npz_cfg() -> dict:
    w = NPZ_STRACE["workload"]
    return {"dataset": {k: w["dataset"][k] for k in ("num_files_train", "num_samples_per_file",
                                                      "num_subfolders_train")},
            "reader": {**w["reader"], "prefetch_size": 2}, "train": {**w["train"], "seed_change_epoch": True}}


@pytest.mark.parametrize("mode", ["buffered", "odirect"])
def test_model_reads_what_the_real_dlio3_read_from_npz(mode):
    """The real DLIO 3.x on unet3d_b200 tiny (tests/data/dlio3-npz-strace, 1 read thread): each of its reader
    processes (one per pre-warm and epoch, spawned anew) opened the files the model gives that iterator, in its order:
    the sorted sub-folder listing's shard, resharded per epoch, and each pre-warm reading both batches of worker 0's
    share (prefetch_factor 2), not one; with O_DIRECT the same files."""
    want = model.workload_reads(_npz_cfg(), 2, "3.0.2")
    segs = Counter(tuple(s["bytes"]) for r in want for s in want[r])
    got = Counter(tuple(p) for p in NPZ_STRACE[mode]["process_opens"])
    assert got == segs
    assert all(len(s["bytes"]) == 14 and not s["prefetch_samples"] for r in want for s in want[r]
               if s["phase"] == "prewarm")  # 2 batches of 7, no tolerance left


def test_kernel_creates_npz_files_as_numpys_zipfile_does(tmp_path):
    """np.savez creates its file through zipfile.ZipFile(file, "w"), which opens it "w+b" (CPython 3.12
    Lib/zipfile/__init__.py:1316-1318): read and write, created, truncated, mode 0666 (Python's open). Measured on the
    real DLIO 3.x (f6796ed, numpy path: no s3dlio in its venv; npz_generator.py:97) by strace.generate on
    unet3d_b200 tiny_odirect, 2026-11-28: `O_CREAT|O_RDWR|O_TRUNC` for each of its 28 files. The kernel's npz writer
    must create each data file the same way (before this test it opened O_WRONLY: strace.generate failed 28 of 28
    files on open_flags, the negative control this test was first run against)."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed: the system-call comparison cannot run")
    sets = v3npz(tmp_path / "data", **{"num-files-train": 4, "num-samples-per-file": 1, "record-length": 4096,
                                       "generate-data": True, "train": False})
    st = tmp_path / "st"
    st.mkdir()
    r = kernel.run(tmp_path, 2, sets, launcher=list(kernel.MPIRUN) + ["-np", "2", "strace", "-ff", "-e",
                   "trace=openat,open,creat", "-o", str(st / "st")])
    assert r.rc == 0, r.proc.stderr
    creates = [m.groups() for f in st.iterdir() for m in re.finditer(r'openat\(AT_FDCWD, "([^"]+\.npz)", ([A-Z_|]+), '
                                                                      r"(0\d+)\)", f.read_text())]
    assert len(creates) == 4, creates
    for path, flags, mode in creates:
        assert {"O_RDWR", "O_CREAT", "O_TRUNC"} <= set(flags.split("|")) and "O_WRONLY" not in flags, (path, flags)
        assert mode == "0666", (path, mode)


@pytest.mark.parametrize("mode", ["buffered", "odirect"])
def test_kernel_reads_npz_with_dlio3s_system_calls(tmp_path, mode):
    """The kernel (3.0.2, format npz, its own dataset of the same shape) under strace: every data-file open is the
    real DLIO 3.x's sequence of calls (buffered: CPython's open().read(); odirect: npy_reader_odirect.py's
    O_DIRECT open, stat, one readv of the size rounded up to 4096, close), and each rank opens the files the model
    gives its pre-warms and epoch, in order (its one reader process serves them all)."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed: the system-call comparison cannot run")
    w = _npz_cfg()
    sets = v3npz(tmp_path / "data", **{"num-files-train": w["dataset"]["num_files_train"], "num-samples-per-file": 1,
                                       "num-subfolders-train": 3, "record-length": 1048576,
                                       "record-length-stdev": 488832, "batch-size": 7, "read-threads": 1,
                                       "cpu-count": 2,  # the fixture's 2 CPUs: 2 ranks -> 1 reader (DLIO 3.x)
                                       "file-shuffle": "seed", "epochs": 1, "random-seed": 123,
                                       "seed-change-epoch": True, "generate-data": True, "train": False})
    assert kernel.run(tmp_path, 2, sets, name="gen").rc == 0
    sets.update({"generate-data": False, "train": True, "odirect": mode == "odirect"})
    st = tmp_path / "st"
    st.mkdir()
    r = kernel.run(tmp_path, 2, sets, launcher=list(kernel.MPIRUN) + ["-np", "2", "strace", "-ff", "-tt", "-e",
                   "trace=openat,open,read,readv,pread64,lseek,newfstatat,fstat,statx,stat,close,ioctl", "-o",
                   str(st / "st")])
    assert r.rc == 0, r.proc.stderr
    seqs, procs = strace_opens(st)
    assert set(seqs) == set(NPZ_STRACE[mode]["per_open"]), seqs
    want = model.workload_reads(w, 2, "3.0.2")
    assert Counter(tuple(p) for p in procs) == Counter(tuple(f for s in want[q] for f in s["bytes"]) for q in want)


def test_skip_listing_deals_files_in_index_order(tmp_path):
    """dataset.skip_listing (main.py:280-305 at f6796ed): no listing, rank r names files r, r+R, ... in index order
    even in sub-folders (where the listing would sort them by path): the kernel's reads are the model's, and differ
    from the sorted listing's. With 10 sub-folders DLIO's names (len(str(9)) digits) miss the generator's
    (len(str(10))): refused, exit 2."""
    files, ranks = 28, 2
    sets = v3npz(tmp_path / "data", **{"num-files-train": files, "num-samples-per-file": 1, "batch-size": 7,
                                       "read-threads": 0, "epochs": 1, "random-seed": 42, "file-shuffle": "seed",
                                       "seed-change-epoch": True, "num-subfolders-train": 3, "skip-listing": True,
                                       "generate-data": True, "train": True})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    cfg = {"dataset": {"num_files_train": files, "num_samples_per_file": 1, "num_subfolders_train": 3,
                       "skip_listing": True},
           "reader": {"batch_size": 7, "read_threads": 0, "prefetch_size": 2, "file_shuffle": "seed"},
           "train": {"epochs": 1, "seed": 42, "seed_change_epoch": True}}
    want = model.workload_reads(cfg, ranks, "3.0.2")
    listed = model.workload_reads({**cfg, "dataset": {**cfg["dataset"], "skip_listing": False}}, ranks, "3.0.2")
    got = {q: [int(x["sample"]) for x in r.samples(q) if x["use"] in ("prewarm", "step")] for q in range(ranks)}
    assert got == {q: [s for seg in want[q] for s in seg["samples"]] for q in range(ranks)}
    assert got != {q: [s for seg in listed[q] for s in seg["samples"]] for q in range(ranks)}
    bad = kernel.run(tmp_path, 1, {**sets, "num-subfolders-train": 10}, name="bad")
    assert bad.rc == 2 and "key 'skip-listing'" in bad.proc.stderr, bad.proc.stderr
