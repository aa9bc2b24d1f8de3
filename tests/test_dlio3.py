"""The kernel's MLCommons DLIO 3.x entry (3.0.2, mlcommons/DLIO_local_changes f6796ed) against the analytic model,
which is written from DLIO's source (validate/model.py dlio3_*), not from the kernel: which files each rank reads in
each epoch and pre-warm, whole files, and the per-rank generation seeds. DLIO 3.x itself needs Python >= 3.12 and is
not installed in CI; its side runs in `make fidelity-run DLIO=<checkout>` (docs/fidelity-dlio3.md)."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests import kernel
from tests.test_fidelity import h5tool
from validate import model


def v3(data, **kw) -> dict:
    return kernel.tiny(data, **{"dlio-version": "3.0.2", "num-files-eval": 0, "shuffle": "off", **kw})


def cfg_of(sets: dict, file_shuffle: str | None) -> dict:
    """The DLIO YAML the kernel's --set keys stand for (what the model reads)."""
    reader = {"batch_size": sets["batch-size"], "read_threads": sets["read-threads"], "prefetch_size": 2}
    if file_shuffle is not None:
        reader["file_shuffle"] = file_shuffle
    dataset = {"num_files_train": sets["num-files-train"], "num_samples_per_file": sets["num-samples-per-file"]}
    train = {"epochs": sets["epochs"], "seed": sets["random-seed"], "seed_change_epoch": sets["seed-change-epoch"],
             "total_training_steps": sets.get("total-training-steps", -1)}
    return {"dataset": dataset, "reader": reader, "train": train}


def by_use(rows: list[dict], use: str) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r in rows:
        if r["use"] == use:
            out.setdefault(int(r["epoch"]), []).append(int(r["sample"]))
    return out


@pytest.mark.parametrize("ranks,files,spf,bs,rt,tts,shuffle,sce", [
    (2, 28, 1, 7, 0, -1, "seed", True),      # tiny unet3d's shape: 14 files a rank, 2 steps
    (3, 20, 2, 3, 2, -1, "random", True),    # floor(20/3) = 6 files a rank (18, 19 never read), 2 reader processes
    (2, 9, 3, 2, 0, 3, "off", False),        # "off" given: DLIO 3.x still reshards (the YAML string); cap 3 of 6 steps
    (2, 8, 1, 2, 0, -1, None, True),         # no file_shuffle key: no reshard, the round-robin listing every epoch
])
def test_kernel_reads_the_files_dlio3_reads(tmp_path, ranks, files, spf, bs, rt, tts, shuffle, sce):
    sets = v3(tmp_path / "data", **{"num-files-train": files, "num-samples-per-file": spf, "batch-size": bs,
                                    "read-threads": rt, "epochs": 2, "random-seed": 42,
                                    "total-training-steps": tts, "seed-change-epoch": sce, "generate-data": True,
                                    "train": True})
    if shuffle is not None:
        sets["file-shuffle"] = shuffle
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    want = model.workload_reads(cfg_of(sets, shuffle), ranks, "3.0.2")
    sizes = {i: os.path.getsize(p) for i, p in enumerate(sorted((tmp_path / "data" / "train").iterdir()))}
    for rank in range(ranks):
        rows = r.samples(rank)
        pre, steps, fetched = by_use(rows, "prewarm"), by_use(rows, "step"), by_use(rows, "fetched")
        for seg in want[rank]:
            got = pre if seg["phase"] == "prewarm" else steps
            assert got.get(seg["epoch"], []) == seg["samples"], (rank, seg["phase"], seg["epoch"])
            if seg["phase"] == "train":
                assert len(fetched.get(seg["epoch"], [])) == seg["prefetched"]
    # every sample read is one open and one read of the whole file: the bytes are the sizes of the files read
    summ = r.summary()
    segs = [seg for rank in range(ranks) for seg in want[rank]]
    epochs = summ["train"]["epochs"]
    got = {"opens": sum(e["opens"] for e in epochs) + summ["prewarm"]["opens"],
           "reads": sum(e["reads"] for e in epochs) + summ["prewarm"]["reads"],
           "bytes": sum(e["bytes"] for e in epochs) + summ["prewarm"]["bytes"]}
    assert got == {"opens": sum(s["opens"] for s in segs), "reads": sum(s["opens"] for s in segs),
                   "bytes": sum(sizes[f] for s in segs for f in s["bytes"])}
    assert summ["prewarm"]["prewarms"] == ranks * (sets["epochs"] + 1)


def test_generation_seeds_each_rank_apart(tmp_path):
    """hdf5_generator.py:70-83 at f6796ed: rank q draws get_dimension(total) after np.random.seed(10 + q) and writes
    files q, q+R, ... with draws 2i, 2i+1 (recomputed here with numpy)."""
    ranks, files, rl, sd = 3, 7, 1048576, 488832
    sets = v3(tmp_path / "data", **{"num-files-train": files, "num-samples-per-file": 1, "record-length": rl,
                                    "record-length-stdev": sd, "generate-data": True, "train": False})
    r = kernel.run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    dim, scale = int(math.sqrt(rl)), sd / 2.0 / math.sqrt(rl)
    for q in range(ranks):
        np.random.seed(10 + q)
        d = [max(int(x), 1) for x in np.random.normal(dim, scale, 2 * files)]
        for i in range(q, files, ranks):
            path = tmp_path / "data" / "train" / f"img_{i}_of_{files}.hdf5"
            head = subprocess.run([h5tool("h5dump"), "-H", "-d", "/records_0", str(path)], capture_output=True,
                                  text=True, check=True).stdout
            shape = re.search(r"DATASPACE\s+SIMPLE\s+\{\s*\(([^)]*)\)", head).group(1)
            assert [int(x) for x in shape.split(",")] == [1, d[2 * i], d[2 * i + 1]], (q, i)


STRACE = json.loads((Path(__file__).parent / "data" / "dlio3-strace" / "reads.json").read_text())


def _sized(line: str, size: int) -> str:
    """A system call with the file's size written as S (the two sides' files differ in size, not in calls)."""
    return line.replace(str(size + 1), "S+1").replace(str(size), "S")


def test_kernel_and_model_read_what_the_real_dlio3_read(tmp_path):
    """The real DLIO 3.x's data-file opens per rank, in order (strace, read_threads 0: tests/data/dlio3-strace): the
    in-rank reader keeps epoch 1's resharded list in every epoch and pre-warm (7 + 14 + 7 + 14 + 7 opens). The model
    (from DLIO's source) and the kernel (3.0.2 entry, its own dataset) read the same files in the same order; where
    strace is installed, one whole-file read is the same system calls as DLIO's."""
    w = STRACE["workload"]
    cfg = {**w, "dataset": {"num_files_train": w["dataset"]["num_files_train"],
                            "num_samples_per_file": w["dataset"]["num_samples_per_file"]}}
    want = {int(r): seq for r, seq in STRACE["opens_in_order"].items()}
    got_model = model.workload_reads(cfg, len(want), "3.0.2")
    assert {r: [f for s in segs for f in s["bytes"]] for r, segs in got_model.items()} == want
    sets = v3(tmp_path / "data", **{"num-files-train": w["dataset"]["num_files_train"], "num-samples-per-file": 1,
                                    "record-length": w["dataset"]["record_length_bytes"],
                                    "record-length-stdev": w["dataset"]["record_length_bytes_stdev"],
                                    "batch-size": w["reader"]["batch_size"], "read-threads": 0,
                                    "file-shuffle": w["reader"]["file_shuffle"], "epochs": w["train"]["epochs"],
                                    "random-seed": w["train"]["seed"], "seed-change-epoch": True,
                                    "generate-data": True, "train": True})
    r = kernel.run(tmp_path, len(want), sets)
    assert r.rc == 0, r.proc.stderr
    for rank, seq in want.items():
        assert [int(x["file"]) for x in r.samples(rank) if x["use"] in ("prewarm", "step", "fetched")] == seq
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace not installed: the system-call comparison of one whole-file read did not run")
    trace = tmp_path / "trace.txt"
    one = {**sets, "generate-data": False, "epochs": 1, "output-folder": str(tmp_path / "one")}
    argv = [strace, "-f", "-o", str(trace), "-e", "trace=openat,read,lseek,fstat,newfstatat,ioctl,close",
            kernel.BIN] + [a for k, v in one.items()
                           for a in ("--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    name = "img_05_of_28.hdf5"
    lines = trace.read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if f'{name}", O_RDONLY' in x and "= " in x)
    pid = lines[i].split()[0]
    mine = [re.sub(r"\s+", " ", re.sub(r"^\d+\s+", "", x)) for x in lines[i:] if x.startswith(pid + " ")][:9]
    mine = [re.sub(r'"/[^"]*/(img_\d+_of_28\.hdf5)"', r'"\1"', x) for x in mine]
    mine = [re.sub(r"0x[0-9a-f]+", "ADDR", re.sub(r'read\((\d+), ".*"\.\.\., ', r"read(\1, DATA, ", x)) for x in mine]
    mine = [re.sub(r"st_mode=S_IFREG\|0644, ", "", x) for x in mine]
    fd_d, fd_k = STRACE["one_open"][0].rsplit("= ", 1)[1], mine[0].rsplit("= ", 1)[1]
    size_d = int(re.search(r"st_size=(\d+)", STRACE["one_open"][1]).group(1))
    size_k = (tmp_path / "data" / "train" / name).stat().st_size

    def fd(x: str, n: str) -> str:
        return re.sub(rf"\({n}\b", "(FD", re.sub(rf"= {n}$", "= FD", x))
    assert [fd(_sized(x, size_k), fd_k) for x in mine] == [fd(_sized(x, size_d), fd_d) for x in STRACE["one_open"]]


def test_model_batches_with_reader_processes_match_the_real_dlio3():
    """With reader processes, the real DLIO 3.x (strace, 4 workers, 1 epoch) read the first batch of each pre-warm only
    (here: the iterator was deleted before a second worker had started) and each epoch's and pre-warm's own resharded
    lists: the 8 batches its processes opened are the model's 2 x (pre-warm, 2 training batches, pre-warm)."""
    w, rp = STRACE["workload"], STRACE["reader_processes"]
    cfg = {"dataset": {"num_files_train": w["dataset"]["num_files_train"], "num_samples_per_file": 1},
           "reader": {**w["reader"], "read_threads": 4}, "train": {**w["train"], "epochs": 1}}
    bs = w["reader"]["batch_size"]
    segs = [s for segs in model.workload_reads(cfg, 2, "3.0.2").values() for s in segs]
    want = sorted(tuple(s["bytes"][i:i + bs]) for s in segs for i in range(0, len(s["bytes"]), bs))
    assert sorted(tuple(b) for b in rp["batches"]) == want
