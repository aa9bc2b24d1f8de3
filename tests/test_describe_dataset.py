"""The dataset description at C speed (bench/tools/describe.c, harness/describe_dataset.py): the same description
as h5py's (harness/inspect_dataset.py) file by file, every file described, stored grouped and read back per file,
and dataset.structure still failing on one file of many: the gen-dims and gen-chunk mutants, and a file planted
among 64 and among 20,000."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, run, tiny

from common.rundir import loads_table
from harness import describe_dataset as dd
from validate.checks import Run, check_dataset

REPO = Path(__file__).resolve().parent.parent
DESCRIBER = Path(BIN).resolve().parent / "h5dlio-describe"
pytestmark = pytest.mark.skipif(not DESCRIBER.exists(), reason=f"no {DESCRIBER} (make build builds it)")


def generate(tmp: Path, name: str, files: int, mutant: str | None = None, **kw) -> Path:
    """The kernel's one-sample training files (unet3d's field shape, 4 KiB samples), training file 0 mutated."""
    data = tmp / name
    sets = tiny(data, **{"generate-data": True, "train": False, "evaluation": False, "num-files-train": files,
                         "num-files-eval": 0, "num-samples-per-file": 1, "record-length": 4096, **kw})
    r = run(tmp, 1, sets, name=f"{name}-out", env={"H5DLIO_MUTATE": mutant} if mutant else None, timeout=300)
    assert r.proc.returncode == 0, r.proc.stderr[-800:]
    return data


def structure_row(tmp: Path, dlio: dict, kernel: dict) -> dict:
    """dataset.structure of a copy of tests/data/run-tiny holding these two dataset tables (as stored)."""
    rd = tmp / "run"
    if not rd.exists():
        shutil.copytree(REPO / "tests" / "data" / "run-tiny", rd)
    for side, t in (("dlio", dlio), ("kernel", kernel)):
        (rd / "tables" / f"dataset-{side}.json").write_text(json.dumps(t))
    return {r["name"]: r for r in check_dataset(Run(rd))}["dataset.structure"]


def test_bad_usage_exits_2_naming_it(tmp_path):
    p = subprocess.run([str(DESCRIBER)], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr
    p = subprocess.run([str(DESCRIBER), str(tmp_path / "nope")], capture_output=True, text=True)
    assert p.returncode == 2 and f"{tmp_path / 'nope'}: not a folder" in p.stderr


@pytest.mark.parametrize("part", ["3/3", "1/0", "x/2", "1", "-1/2"])
def test_a_bad_part_exits_2_naming_it(tmp_path, part):
    p = subprocess.run([str(DESCRIBER), "--part", part, str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 2 and f"--part {part}: expected K/N" in p.stderr


def test_parts_describe_every_file_once_and_the_same_table(tmp_path):
    """--part K/N: the N processes' lines are every file once (none twice, none left out), and describe() with
    several parts at once gives the table one process gives, byte for byte."""
    data = generate(tmp_path, "clean", 64)
    want = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    got = []
    for k in range(3):
        p = subprocess.run([str(DESCRIBER), "--part", f"{k}/3", str(data)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        got.append([json.loads(line.split("\t")[0]) for line in p.stdout.splitlines()])
    assert all(got) and sorted(n for g in got for n in g) == want  # each part some files; together each file once
    one = dd.describe(data, Path("/nonexistent"), DESCRIBER)
    assert json.dumps(dd.describe(data, Path("/nonexistent"), DESCRIBER, parts=3)) == json.dumps(one)
    assert one["files_described"] == 64


def test_grouped_table_reads_back_per_file_and_the_mutants_fail_structure(tmp_path):
    clean = dd.describe(generate(tmp_path, "clean", 64), Path("/nonexistent"), DESCRIBER)
    assert clean["described_by"] == "h5dlio-describe" and clean["files_described"] == 64
    (tmp_path / "link").symlink_to(tmp_path / "clean")    # a data folder named through a link (bench/perf does)
    assert dd.describe(tmp_path / "link", Path("/nonexistent"), DESCRIBER)["file_groups"] == clean["file_groups"]
    assert len(clean["file_groups"]) == 1                  # one structure stored once, with its 64 files
    files = loads_table(json.dumps(clean))["files"]
    assert len(files) == 64
    one = next(iter(files.values()))
    # what the kernel writes for a one-sample unet3d file (DLIO's hdf5_generator: records (1, d, d) uint8, contiguous)
    assert one["records"]["shape"][0] == 1 and one["records"]["dtype"] == "|u1"
    assert one["records"]["layout"] == "contiguous" and one["records"]["chunks"] is None
    assert structure_row(tmp_path, clean, clean)["status"] == "pass"     # the control
    for mutant, key in (("gen-dims", "shape"), ("gen-chunk", "chunks")):
        bad = dd.describe(generate(tmp_path, mutant, 64, mutant), Path("/nonexistent"), DESCRIBER)
        assert len(bad["file_groups"]) == 2 and bad["files_described"] == 64
        row = structure_row(tmp_path, clean, bad)
        assert row["status"] == "fail" and row["observed"] == 1, row
        f0 = min(loads_table(json.dumps(bad))["files"])
        assert row["detail"].startswith(f"{f0}: ") and key in row["detail"]


def test_the_compression_level_mutant_fails_structure_on_the_level_alone(tmp_path):
    """A gzip-compressed dataset (chunking on, level 4: the thesis-g key values; no DLIO workload here compresses),
    training file 0 written at level 5 by the compression-level mutant: the same filter ids, chunks and shapes, so
    dataset.structure fails on that file's filter values alone. Negative control: the unmutated dataset against
    itself passes."""
    gz = {"chunking": True, "chunk-size": 1024, "compression": "gzip", "compression-level": 4}
    clean = dd.describe(generate(tmp_path, "gz", 8, **gz), Path("/nonexistent"), DESCRIBER)
    bad = dd.describe(generate(tmp_path, "gz-level", 8, "compression-level", **gz), Path("/nonexistent"), DESCRIBER)
    assert structure_row(tmp_path, clean, clean)["status"] == "pass"
    want, got = (loads_table(json.dumps(t))["files"] for t in (clean, bad))
    f0 = min(got)
    assert want[f0]["records"]["filter_values"] != got[f0]["records"]["filter_values"]
    assert {k: v for k, v in want[f0]["records"].items() if k != "filter_values"} == \
        {k: v for k, v in got[f0]["records"].items() if k != "filter_values"}    # the level, nothing else
    assert all(want[f] == got[f] for f in want if f != f0)
    row = structure_row(tmp_path, clean, bad)
    assert row["status"] == "fail" and row["observed"] == 1 and row["detail"].startswith(f"{f0}: "), row


@pytest.mark.parametrize("files", [64, pytest.param(20000, marks=pytest.mark.slow)])
def test_one_planted_file_among_many_fails_structure(tmp_path, files):
    data = generate(tmp_path, "clean", files)
    other = generate(tmp_path, "dims", 2, "gen-dims")
    names = sorted(p.relative_to(data).as_posix() for p in data.rglob("*.hdf5"))
    assert len(names) == files
    planted = names[len(names) // 2]
    copy = tmp_path / "planted"
    shutil.copytree(data, copy)
    shutil.copyfile(min(other.rglob("*.hdf5")), copy / planted)   # another file's dims, under this name
    want, got = (dd.describe(d, Path("/nonexistent"), DESCRIBER) for d in (data, copy))
    assert got["files_described"] == files and [len(g["files"]) for g in got["file_groups"]].count(1) == 1
    assert structure_row(tmp_path, want, want)["status"] == "pass"
    row = structure_row(tmp_path, want, got)
    assert row["status"] == "fail" and row["observed"] == 1 and row["detail"].startswith(planted), row


H5PY_FILES = r"""
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/a.hdf5", "w") as f:
    f.create_dataset("records", data=np.zeros((1, 64, 64), np.uint8)); f.create_dataset("labels", data=[0])
with h5py.File(f"{d}/b.hdf5", "w") as f:
    f.create_dataset("c", data=np.zeros((8, 16), ">f4"), chunks=(2, 16), compression="gzip", shuffle=True)
    f.create_dataset("s", data=3.5); f.create_dataset("fixed", data=np.array([b"abc"], "S10"))
    f.create_dataset("vlen", data=["x", "yz"], dtype=h5py.string_dtype())
    f.create_group("g").create_dataset("inner", data=[1]); f["link"] = h5py.SoftLink("/c")
    f.create_dataset("k", data=np.zeros((4,), "<i2"), compression="lzf")
with h5py.File(f"{d}/empty.hdf5", "w"):
    pass
open(f"{d}/garbage.hdf5", "wb").write(b"not hdf5" * 100)
"""


@pytest.mark.dlio
def test_c_description_equals_h5pys_file_by_file(tmp_path):
    """The C describer against the h5py describer it replaces (inspect_dataset.py, with the reference venv's h5py)
    over files of other shapes, dtypes, layouts, filters, links and a non-HDF5 file: the same keys and values (the C
    one adds every filter id), the same files in error."""
    venv = Path(os.environ.get("H5DLIO_DLIO_VENV") or "/nonexistent")
    if not (venv / "bin" / "python").exists():
        pytest.skip("no reference DLIO venv (H5DLIO_DLIO_VENV): h5py is the reference here")
    subprocess.run([str(venv / "bin" / "python"), "-c", H5PY_FILES, str(tmp_path)], check=True)
    h5 = dd._python(tmp_path, venv, False)
    c = loads_table(json.dumps(dd.describe(tmp_path, venv, DESCRIBER)))["files"]
    assert sorted(c) == sorted(h5) == ["a.hdf5", "b.hdf5", "empty.hdf5", "garbage.hdf5"]
    assert "error" in c["garbage.hdf5"] and "error" in h5["garbage.hdf5"]
    for f in ("a.hdf5", "b.hdf5", "empty.hdf5"):
        assert {k: {kk: vv for kk, vv in v.items() if kk not in ("filters", "filter_values")}
                for k, v in c[f].items()} == h5[f], f
    assert "inner" not in c["b.hdf5"] and c["b.hdf5"]["link"] == c["b.hdf5"]["c"]
    assert c["b.hdf5"]["c"]["filters"] == [2, 1]       # H5Z_FILTER_SHUFFLE, then H5Z_FILTER_DEFLATE (H5Zpublic.h)
    assert c["b.hdf5"]["c"]["filter_values"][1] == [4]  # h5py's default gzip level (compression_opts None -> 4)


def _gzip(tmp: Path, name: str, level: int) -> dict:
    data = tmp / name
    sets = tiny(data, **{"generate-data": True, "train": False, "evaluation": False, "num-files-train": 4,
                         "num-files-eval": 0, "num-samples-per-file": 1, "record-length": 4096, "chunking": True,
                         "compression": "gzip", "compression-level": level})
    r = run(tmp, 1, sets, name=f"{name}-out", timeout=300)
    assert r.proc.returncode == 0, r.proc.stderr[-800:]
    return dd.describe(data, Path("/nonexistent"), DESCRIBER)


def test_a_compression_level_is_compared_not_only_the_filter(tmp_path):
    """issue 35: dataset.structure compared filter ids only, so a kernel writing gzip level 5 where DLIO writes 4
    (DLIO 2.0.0 hdf5_generator.py:63-70 passes compression_opts=compression_level) passed. Each filter's client data
    is described: gzip's first value is its level (H5Pset_deflate)."""
    four, five = _gzip(tmp_path, "l4", 4), _gzip(tmp_path, "l5", 5)
    rec = next(iter(loads_table(json.dumps(four))["files"].values()))["records"]
    assert rec["filters"] == [1] and rec["filter_values"] == [[4]] and rec["compression"] == "gzip", rec
    assert structure_row(tmp_path, four, four)["status"] == "pass"     # the control
    row = structure_row(tmp_path, four, five)
    assert row["status"] == "fail" and row["observed"] == 4 and "filter_values" in row["detail"], row


def test_the_kernels_completion_record_is_reported_not_described(tmp_path):
    """The kernel's h5dlio-generation.json at the top of its data folder is no dataset file: the table leaves it out
    of the files (DLIO's folder has none, so dataset.files would differ by it) and reports it as
    "generation_record". Controls: the describer itself lists it (so the leaving out is describe()'s); the same
    folder without it reports None and describes the same files; a record cut short is reported as its text."""
    data = generate(tmp_path, "clean", 4)
    record = data / dd.GEN_RECORD
    p = subprocess.run([str(DESCRIBER), str(data)], capture_output=True, text=True)
    assert dd.GEN_RECORD in p.stdout
    t = dd.describe(data, Path("/nonexistent"), DESCRIBER)
    assert t["generation_record"]["state"] == "complete" and t["files_described"] == 4
    assert not any(dd.GEN_RECORD in f for g in t["file_groups"] for f in g["files"])
    record.write_text('{"h5dlio_generation": 1, "sta')
    assert dd.describe(data, Path("/nonexistent"), DESCRIBER)["generation_record"] == '{"h5dlio_generation": 1, "sta'
    record.unlink()
    u = dd.describe(data, Path("/nonexistent"), DESCRIBER)
    assert u["generation_record"] is None and u["file_groups"] == t["file_groups"]
