"""Fidelity across DLIO releases (issue 8). Only DLIO 2.0.0 installs in CI, so the 2.0.1 and main kernel entries are
tested against files written the way those releases write them (a few lines of h5py reproducing their HDF5
generator, run with the reference venv's Python: h5py lives there, not in .venv): same file layout (h5dump -H -p -B)
and the same Log VFD blocks when read. Also: the key renaming, the nearest-entry fallback, the sampler and step
semantics of each entry, the analytic model per release, the harness' version handling and the matrix."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from fidelity import matrix as fmatrix
from harness import dlio as hdlio
from profiles import logvfd
from tests.kernel import BIN, dlio_order, h5tool, run, tiny
from validate import checks, model

REPO = Path(__file__).resolve().parent.parent


def dlio_python() -> str:
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    stamp = REPO / "build" / ".dlio-venv"
    if not venv and stamp.exists():
        venv = stamp.read_text().strip()
    py = Path(venv or "/nonexistent") / "bin" / "python"
    if not py.exists():
        pytest.skip("no reference DLIO venv (make dlio-venv): its h5py writes the release-style files")
    return str(py)


# DLIO's HDF5 generators, reduced to their HDF5 calls (dims from the kernel's own layout: same draws)
GEN = textwrap.dedent('''
    import sys, json, os
    import h5py, numpy as np
    root, release, files = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    for rel, shape, ndset, chunks, level in files:
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        rec = np.random.default_rng().integers(0, 255, size=shape, dtype=np.uint8)
        if release == "2.0.0":    # PyPI 2.0.0 hdf5_generator.py:56-79
            hf = h5py.File(path, 'w')
            d = hf.create_dataset('records', tuple(shape), chunks=None, compression=None, compression_opts=None,
                                  dtype=np.uint8)
            d[0:shape[0]] = rec
        else:                     # v2.0.1 / main hdf5_generator.py:43-48
            hf = h5py.File(path, 'w', libver='latest')
            kw = {"chunks": tuple(chunks)} if chunks else {}
            for k in range(ndset):
                hf.create_dataset(f'records_{k}', tuple(shape), compression="gzip" if level else None,
                                  compression_opts=level, dtype=np.dtype('uint8'), data=rec, **kw)
        hf.create_dataset('labels', data=[0] * shape[0])
        hf.close()
''')


def h5py_files(tmp: Path, release: str, kernel_data: Path, ndset: int = 1, chunks=None, level=None) -> Path:
    """Write, with h5py as DLIO `release` does, files with the names and shapes of the kernel's dataset."""
    py = dlio_python()
    desc = subprocess.run([py, str(REPO / "harness" / "inspect_dataset.py"), str(kernel_data)], capture_output=True,
                          text=True, check=True)
    files = []
    for rel, dsets in json.loads(desc.stdout)["files"].items():
        rec = dsets.get("records") or dsets.get("records_0")
        files.append([rel, rec["shape"], ndset, chunks, level])
    out = tmp / f"h5py-{release}"
    subprocess.run([py, "-c", GEN, str(out), release, json.dumps(files)], check=True, capture_output=True, text=True)
    return out


def h5dump_header(path: Path) -> list[str]:
    p = subprocess.run([h5tool("h5dump"), "-H", "-p", "-B", str(path)], capture_output=True, text=True, check=True)
    return p.stdout.splitlines()[1:]  # without the file name


def read_blocks(tmp: Path, data: Path, sets: dict, name: str, ranks: int = 2) -> dict:
    r = run(tmp, ranks, {**sets, "data-folder": str(data), "generate-data": False, "train": True, "log-vfd": True},
            log=True, name=name)
    assert r.rc == 0, r.proc.stderr[-2000:]
    return {rk: v["blocks"] for rk, v in logvfd.parse_dir(r.logs)["ranks"].items()}


def gen(tmp: Path, sets: dict, name: str = "gen") -> Path:
    data = tmp / f"{name}-data"
    r = run(tmp, 2, {**sets, "data-folder": str(data), "generate-data": True, "train": False, "evaluation": False},
            name=name)
    assert r.rc == 0, r.proc.stderr[-2000:]
    return data


def dry(*sets: str, config: Path | None = None) -> subprocess.CompletedProcess:
    argv = [BIN, "--dry-run"] + (["--config", str(config)] if config else [])
    for s in sets:
        argv += ["--set", s]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def resolved(p: subprocess.CompletedProcess) -> dict:
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---------- the entries against release-style files ----------

@pytest.mark.parametrize("release,ndset,extra", [
    ("2.0.0", 1, {}),
    ("2.0.1", 1, {}),
    ("2.0.1-17", 1, {}),
    ("2.0.1", 2, {"record-dims": "64,48", "num-dset-per-record": 2}),
    # chunked (gzip is left out: compressed chunk sizes depend on the random content, so even two DLIO runs differ)
    ("2.0.1", 1, {"chunk-dims": "1,16,16"}),
])
@pytest.mark.dlio
def test_entry_matches_release_files(tmp_path, release, ndset, extra):
    """Kernel files of an entry = h5py files written as that release writes them: same header (superblock, libver,
    track times, dataset names and count, layout) and the same Log VFD blocks when both are read, per rank."""
    sets = tiny(tmp_path, **{"dlio-version": release, "record-length": 4096, "record-length-stdev": 1500,
                             "num-files-train": 16, "num-samples-per-file": 2, "num-files-eval": 0, "shuffle": "off",
                             **extra})
    if "record-dims" in extra:
        sets.pop("record-length-stdev")
    kdata = gen(tmp_path, sets)
    chunks = [int(x) for x in extra["chunk-dims"].split(",")] if "chunk-dims" in extra else None
    pdata = h5py_files(tmp_path, release, kdata, ndset, chunks, extra.get("compression-level"))
    f0 = sorted((kdata / "train").iterdir())[0].name
    assert h5dump_header(kdata / "train" / f0) == h5dump_header(pdata / "train" / f0)
    kb = read_blocks(tmp_path, kdata, sets, "read-k")
    pb = read_blocks(tmp_path, pdata, sets, "read-p")
    assert kb == pb and all(len(b) == 32 for b in kb.values())  # 16 files x 2 samples / 2 ranks x 2 epochs
    draw = [x for x in kb["0"][0] if x.endswith("DRAW Read")]
    assert len(draw) == ndset if not chunks else len(draw) > 1  # contiguous: one raw read per dataset


@pytest.mark.dlio
def test_releases_write_different_files(tmp_path):
    """The control: 2.0.0-style and 2.0.1-style files differ in header and in what a reader touches."""
    sets = tiny(tmp_path, **{"record-length": 4096, "num-files-eval": 0, "shuffle": "off"})
    k200 = gen(tmp_path, {**sets, "dlio-version": "2.0.0"}, "g200")
    k201 = gen(tmp_path, {**sets, "dlio-version": "2.0.1"}, "g201")
    f0 = sorted((k200 / "train").iterdir())[0].name
    h200, h201 = h5dump_header(k200 / "train" / f0), h5dump_header(k201 / "train" / f0)
    assert "SUPERBLOCK_VERSION 0" in " ".join(h200) and "SUPERBLOCK_VERSION 3" in " ".join(h201)
    assert any('DATASET "records"' in x for x in h200) and any('DATASET "records_0"' in x for x in h201)
    b200 = read_blocks(tmp_path, k200, {**sets, "dlio-version": "2.0.0"}, "r200")
    b201 = read_blocks(tmp_path, k201, {**sets, "dlio-version": "2.0.1"}, "r201")
    assert b200["0"][0] != b201["0"][0]
    # a 2.0.1 reader on 2.0.0 files finds no records_0: bad input, exit 2
    r = run(tmp_path, 1, {**sets, "data-folder": str(k200), "dlio-version": "2.0.1", "train": True}, name="wrong")
    assert r.rc == 2 and "records_0" in r.proc.stderr


# ---------- sampler and step semantics ----------

def consumed(r, rank: int, phase: str = "train") -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for row in r.samples(rank):
        if row["phase"] == phase and row["use"] == "step":
            out.setdefault(int(row["epoch"]), []).append(int(row["sample"]))
    return out


def test_sampler_shuffles_only_in_200(tmp_path):
    """2.0.0's dlio_sampler shuffles (compounding per epoch); 2.0.1's reads its slice in order whatever
    sample_shuffle says (torch_data_loader.py:84-103 at v2.0.1)."""
    base = tiny(tmp_path, **{"num-files-eval": 0, "shuffle": "seed", "epochs": 2})
    rs = []
    for rel in ("2.0.0", "2.0.1"):
        data = gen(tmp_path, {**base, "dlio-version": rel}, f"g{rel}")
        rs.append(run(tmp_path, 2, {**base, "data-folder": str(data), "dlio-version": rel, "train": True},
                      name=f"s{rel}"))
    r0, r1 = rs
    assert r0.rc == 0 and r1.rc == 0, r0.proc.stderr + r1.proc.stderr
    exp0 = dlio_order(32, 2, 2, 2)
    for rank in (0, 1):
        assert consumed(r0, rank) == {1: exp0[rank][0], 2: exp0[rank][1]}
        own = list(range(rank * 16, rank * 16 + 16))
        assert consumed(r1, rank) == {1: own, 2: own}


def test_cap_checked_on_fetch_loads_one_more_batch(tmp_path):
    """total_training_steps=3: 2.0.0 loads 3 batches per epoch, 2.0.1 loads a 4th before breaking (main.py:328)."""
    base = tiny(tmp_path, **{"num-files-eval": 0, "shuffle": "off", "epochs": 1, "total-training-steps": 3})
    out = {}
    for rel in ("2.0.0", "2.0.1"):
        data = gen(tmp_path, {**base, "dlio-version": rel}, f"g{rel}")
        r = run(tmp_path, 2, {**base, "data-folder": str(data), "dlio-version": rel, "train": True}, name=f"cap{rel}")
        assert r.rc == 0, r.proc.stderr
        ep = r.summary()["train"]["epochs"][0]
        rows = r.samples(0)
        out[rel] = (ep["steps_per_rank_max"], sum(1 for x in rows if x["use"] == "fetched"), ep["opens"],
                    ep["samples_prefetched_unused"])
    assert out["2.0.0"] == (3, 0, 12, 0) and out["2.0.1"] == (3, 2, 16, 4)  # opens and unused: both ranks


def test_main_trims_files_to_step_multiples(tmp_path):
    """main (ad8ce8b): 10 files, 1 sample each, batch 2, 2 ranks -> the first 8 files only (main.py:230-237)."""
    sets = tiny(tmp_path, **{"num-files-train": 10, "num-samples-per-file": 1, "num-files-eval": 0, "shuffle": "off",
                             "epochs": 1, "dlio-version": "2.0.1"})
    data = gen(tmp_path, sets)
    seen = {}
    for rel in ("2.0.1", "2.0.1-17"):
        r = run(tmp_path, 2, {**sets, "data-folder": str(data), "dlio-version": rel, "train": True}, name=f"t{rel}")
        assert r.rc == 0, r.proc.stderr
        seen[rel] = sorted(int(x["sample"]) for rk in (0, 1) for x in r.samples(rk))
    # 2.0.1: rank slices [0, 5) and [5, 10), 2 full batches each; main: 8 files, slices [0, 4) and [4, 8)
    assert seen["2.0.1"] == [0, 1, 2, 3, 5, 6, 7, 8] and seen["2.0.1-17"] == list(range(8))
    p = subprocess.run([BIN, "--dry-run", "--ranks", "2", "--set", "train=true", "--set", "dlio-version=2.0.1-17",
                        "--set", "num-files-train=3", "--set", "num-samples-per-file=1", "--set", "batch-size=2"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "trims 3 training files" in p.stderr and "to none" in p.stderr


# ---------- keys and versions ----------

def test_record_length_keys_renamed_per_release(tmp_path):
    """DLIO 2.0.1 reads dataset.record_length_bytes* and silently ignores record_length*; 2.0.0 the reverse. The
    kernel follows the release in dlio-version, warning about every key that release ignores."""
    y = tmp_path / "w.yaml"
    y.write_text("dataset:\n  record_length: 1000\n  record_length_bytes: 2000\n  record_length_bytes_stdev: 5\n"
                 "  enable_chunking: true\nworkflow:\n  generate_data: true\n  train: false\n")
    c0 = resolved(dry("dlio-version=2.0.0", config=y))
    c1 = resolved(dry("dlio-version=2.0.1", config=y))
    assert (c0["record-length"], c0["record-length-stdev"], c0["chunking"]) == (1000, 0, True)
    assert (c1["record-length"], c1["record-length-stdev"], c1["chunking"]) == (2000, 5, False)
    assert any("record_length_bytes" in w and "ignored by DLIO 2.0.0" in w for w in c0["warnings"])
    assert any("'dataset.record_length'" in w and "ignored by DLIO 2.0.1" in w for w in c1["warnings"])
    assert any("enable_chunking" in w for w in c1["warnings"])
    p = dry("dlio-version=2.0.1", config=y)
    assert "h5dlio: warning: " in p.stderr and "record_length" in p.stderr
    # DLIO 2.0.1 keys the kernel emulates: dims lists from YAML
    y.write_text("dataset:\n  record_dims: [64, 48]\n  hdf5:\n    num_dset_per_record: 2\n    chunk_dims: [1, 16, 16]\n"
                 "workflow:\n  generate_data: true\n  train: false\n")
    c = resolved(dry("dlio-version=2.0.1", config=y))
    assert (c["record-dims"], c["num-dset-per-record"], c["chunk-dims"]) == ([64, 48], 2, [1, 16, 16])
    assert resolved(dry("dlio-version=2.0.0", config=y))["record-dims"] == []


def test_nearest_entry_fallback(tmp_path):
    """An unknown release uses the nearest entry: the newest entry whose range has begun; the run says so on
    stderr and in output.json; a string that is no version is bad input."""
    cases = {"2.0.3": "2.0.1-17", "2.0.1-5": "2.0.1", "2.0.1-13-gddb1be8": "2.0.1-17", "2.0.0-3": "2.0.0",
             "1.1": "2.0.0", "2.0.1": "2.0.1"}
    for ver, entry in cases.items():
        p = dry("generate-data=true", f"dlio-version={ver}")
        c = resolved(p)
        assert c["dlio-entry"] == entry, ver
        assert c["dlio-entry-nearest"] == (ver != entry), ver
        assert ("nearest entry" in p.stderr) == (ver != entry), ver
    p = dry("generate-data=true", "dlio-version=latest")
    assert p.returncode == 2 and "not a DLIO version" in p.stderr
    sets = tiny(tmp_path / "data", **{"dlio-version": "2.0.3", "num-files-eval": 0, "epochs": 1, "generate-data": True,
                             "train": True, "num-samples-per-file": 1})
    r = run(tmp_path, 2, sets)
    assert r.rc == 0, r.proc.stderr
    assert r.summary()["config"]["dlio-entry"] == "2.0.1-17" and r.summary()["config"]["dlio-entry-nearest"]
    assert r.proc.stderr.count("nearest entry 2.0.1-17 used for 2.0.3") == 1  # rank 0 only


def test_entries_listed():
    words = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout
    assert "dlio-versions 2.0.0, 2.0.0-52, 2.0.1, 2.0.1-17" in words


# ---------- analytic model, harness, matrix ----------

def test_model_per_release():
    cfg = {"dataset": {"num_files_train": 10, "num_samples_per_file": 1, "record_length": 4096,
                       "record_length_bytes": 1024}, "reader": {"batch_size": 2, "read_threads": 0,
                                                                "sample_shuffle": "seed"},
           "train": {"epochs": 1, "total_training_steps": 1, "seed": 123}}
    s0 = model.workload_reads(cfg, 2, "2.0.0")[0][0]
    s1 = model.workload_reads(cfg, 2, "2.0.1")[0][0]
    s2 = model.workload_reads(cfg, 2, "2.0.1-17")[0][0]
    s52 = model.workload_reads(cfg, 2, "2.0.0-52")[0][0]  # mlperf_storage_v2.0: in order, _bytes, cap after the step
    assert s52["samples"] == [0, 1] and s52["opens"] == 2 and s52["bytes"] == [32 * 32] * 2
    assert s0["samples"] != [0, 1] and len(s0["samples"]) == 2 and s0["bytes"] == [64 * 64] * 2
    assert s1["samples"] == [0, 1] and s1["opens"] == 4 and s1["bytes"] == [32 * 32] * 4  # one more batch
    assert s2["opens"] == 4 and model.workload_reads(cfg, 2, "2.0.1-17")[1][0]["samples"] == [4, 5]  # 8 files kept
    cfg["dataset"].update({"record_dims": [64, 48], "hdf5": {"num_dset_per_record": 2}})
    s3 = model.workload_reads(cfg, 2, "2.0.1")[0][0]
    assert s3["bytes"] == [32 * 48] * 8 and s3["opens"] == 4
    assert model.workload_reads(cfg, 2, "2.0.0-52")[0][0]["bytes"] == [32 * 32] * 2  # record_dims not read


def test_kernel_dlio_entries_json():
    """`h5dlio --dlio-entries`: the one place release knowledge is kept. Expectations from DLIO's sources: 2.0.1
    renamed dataset.record_length* to record_length_bytes* (utils/config.py:792-797) and added record_dims and
    hdf5.{chunk_dims, num_dset_per_record}; main trims files from v2.0.1-12 (ad8ce8b)."""
    def kernel(*args):
        return subprocess.run([BIN, "--dlio-entries", *args], capture_output=True, text=True, timeout=60)
    p = kernel()
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert "selected" not in j and [e["version"] for e in j["entries"]][:4] == ["2.0.0", "2.0.0-52", "2.0.1",
                                                                                 "2.0.1-17"]
    assert {k["yaml"] for k in j["versioned_keys"]} >= {"dataset.record_length", "dataset.record_length_bytes",
                                                        "dataset.record_dims", "dataset.hdf5.chunk_dims"}
    reads = {}
    for v in ("2.0.0", "2.0.0-3", "2.0.0-52", "2.0.1", "2.0.1-11", "2.0.1-12", "2.0.1-17", "2.0.1-17-ge1919d7",
              "2.0.3", "1.0"):
        p = kernel("--set", f"dlio-version={v}")
        assert p.returncode == 0, p.stderr
        sel = json.loads(p.stdout)["selected"]
        assert sel["version"] == v and bool(sel["warning"]) == sel["nearest"]
        reads[v] = (sel["entry"], sel["nearest"], sel["keys"]["record-length"], sel["keys"]["record-dims"])
    old = ("dataset.record_length", None)
    new = ("dataset.record_length_bytes", "dataset.record_dims")
    # the mlperf_storage_v2.0 branch (392621b): record_length_bytes* (its utils/config.py:721-726), no record_dims
    assert reads == {"2.0.0": ("2.0.0", False, *old), "2.0.0-3": ("2.0.0", True, *old),
                     "2.0.0-52": ("2.0.0-52", False, "dataset.record_length_bytes", None),
                     "2.0.1": ("2.0.1", False, *new),
                     "2.0.1-11": ("2.0.1", True, *new), "2.0.1-12": ("2.0.1-17", True, *new),
                     "2.0.1-17": ("2.0.1-17", False, *new), "2.0.1-17-ge1919d7": ("2.0.1-17", True, *new),
                     "2.0.3": ("2.0.1-17", True, *new), "1.0": ("2.0.0", True, *old)}
    p = kernel("--set", "dlio-version=main")
    assert p.returncode == 2 and "'dlio-version'" in p.stderr and "main" in p.stderr


def test_harness_versions_and_key_translation(tmp_path):
    with pytest.raises(ValueError, match="dlio-version"):
        hdlio.translate({}, "main", Path(BIN))
    over = {"dataset": {"record_length": 1048576, "record_length_stdev": 7, "num_files_train": 28}}
    new, done = hdlio.translate(over, "2.0.1-17", Path(BIN))
    assert new["dataset"] == {"record_length_bytes": 1048576, "record_length_bytes_stdev": 7, "num_files_train": 28}
    assert len(done) == 2 and hdlio.translate(over, "2.0.0", Path(BIN))[0] == over
    assert hdlio.translate(new, "2.0.0", Path(BIN))[0] == over  # and back
    chunked = {"dataset": {"enable_chunking": True, "chunk_size": 4096}}  # 2.0.1 reads neither: kept as written
    assert hdlio.translate(chunked, "2.0.1", Path(BIN)) == (chunked, [])
    # a venv made by deps-dlio.sh says which DLIO it holds (shown in the verdict; the entry is chosen by behaviour:
    # tests/test_dlio_probe.py)
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".h5dlio-dlio.json").write_text(json.dumps({"version": "2.0.1-17", "revision": "e1919d7" + "0" * 33,
                                                         "source": "source:/x", "describe": "v2.0.1-17-ge1919d7"}))
    assert hdlio.info(venv)["version"] == "2.0.1-17"
    with pytest.raises(ValueError, match="no bin/python"):
        hdlio.describe(venv, Path(BIN))


def fake_run(root: Path, name: str, dlio: dict | None, verdict: str, created: str, blocks=None) -> Path:
    rd = root / name
    (rd / "tables").mkdir(parents=True)
    m = {"run_id": name, "created": created, "ranks": 2, "workload": {"name": "unet3d", "scale": "tiny",
         "config": {"dataset": {"record_length": 1} if dlio is None else {"record_length_bytes": 1}}},
         "versions": {"dlio": "2.0.0", "git_revision": "abc" * 5, "git_dirty": False}, "steps": {}}
    if dlio is not None:
        m["dlio"] = dlio
    (rd / "manifest.json").write_text(json.dumps(m))
    run_ = checks.Run.__new__(checks.Run)
    run_.manifest, run_.path, run_.tables = m, rd, rd / "tables"
    chk = checks.check_dlio_version(run_)
    if verdict == "fail":
        chk.append(checks.result("logvfd.sequence.rt0.rank0", "fail", 2, 2, "first difference at open #1"))
    (rd / "verdict.json").write_text(json.dumps({"verdict": verdict, "failed": [c["name"] for c in chk
                                                 if c["status"] == "fail"], "summary": {}, "checks": chk}))
    if blocks:
        for side, b in blocks.items():
            (rd / "tables" / f"logvfd-rt0-{side}.json").write_text(json.dumps({"ranks": {"0": {"blocks": b}}}))
    return rd


def test_matrix_rows_and_divergence_report(tmp_path):
    runs = tmp_path / "runs"
    fake_run(runs, "a", None, "pass", "2026-01-01T00:00:00")
    fake_run(runs, "b", {"version": "2.0.3", "entry": "2.0.1-17", "nearest": True, "revision": "f" * 40,
                         "source": "source:/x"}, "fail", "2026-01-02T00:00:00",
             blocks={"dlio": [["SUPER-PROBE 0-48", "48-559 OHDR Read"], ["SUPER-PROBE 0-48", "2048-4095 DRAW Read"]],
                     "kernel": [["SUPER-PROBE 0-48", "48-559 OHDR Read"], ["SUPER-PROBE 0-96", "800-900 OHDR Read"]]})
    out = tmp_path / "fid"
    m = fmatrix.write(out, fmatrix.find_runs([runs]))
    assert [r["version"] for r in m["rows"]] == ["2.0.0", "2.0.3"]
    nearest = m["rows"][1]
    assert nearest["checks"]["dlio.version"] == "pass" and nearest["nearest"]
    md = (out / "matrix.md").read_text()
    assert "2.0.1-17 (nearest)" in md and "divergence-2.0.3.md" in md
    rep = (out / "divergence-2.0.3.md").read_text()
    assert "open #1" in rep and "`2048-4095 DRAW Read`" in rep and "`800-900 OHDR Read`" in rep
    assert "record_length_bytes" in rep  # the config keys that differ from the 2.0.0 row's run
    # a newer run replaces a version's row; rows of versions not given are kept
    fake_run(tmp_path / "more", "c", {"version": "2.0.3", "entry": "2.0.1-17", "nearest": True,
                                      "revision": "f" * 40, "source": "x"}, "pass", "2026-01-03T00:00:00")
    m = fmatrix.write(out, fmatrix.find_runs([tmp_path / "more"]))
    assert [(r["version"], r["verdict"]) for r in m["rows"]] == [("2.0.0", "pass"), ("2.0.3", "pass")]
    assert not (out / "divergence-2.0.3.md").exists()
