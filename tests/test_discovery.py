"""The kernel's dataset discovery (bench/src/discover.c) as DLIO makes it, seen by the strace profile's parse: the
per-rank listings and probe stats below are read off DLIO's source by hand (2.0.0 main.py:171-193 and
storage/file_storage.py:62-82; 3.x f6796ed main.py:378-442) and, for the flat 2.0.0 case, off the committed capture
of real DLIO 2.0.0 (tests/data/strace/dlio). The bad datasets end every rank with status 2 naming key
'data-folder'."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kernel import MPIRUN, run, tiny

from profiles import strace as st

CAPTURE = Path(__file__).parent / "data" / "strace"


def _strace() -> str:
    exe = shutil.which("strace")
    if exe is None:
        pytest.skip("no strace here (scripts/deps-system.sh installs it)")
    return exe


def _discovery(tmp: Path, ranks: int, sets: dict, name: str, env: dict | None = None) -> dict:
    """The kernel run under strace (every rank's processes), its launch parsed: discovery per rank."""
    trace = tmp / name / "strace"
    trace.mkdir(parents=True)
    calls = "trace=" + ",".join(f"?{c}" for c in st.SYSCALLS)
    # the profile's own wrapper (profiles/strace/ Strace.wrap): each rank's traces trace.r<rank>.<pid>
    launcher = [*MPIRUN, "-np", str(ranks), "sh", "-c", st.WRAPPER, str(trace / "trace"), _strace(), *st.STRACE_OPTS,
                "-e", calls, "--"]
    r = run(tmp, ranks, sets, name=f"{name}-out", env=env, launcher=launcher)
    assert r.rc == 0, r.proc.stderr[-2000:]
    return st.parse(tmp / name, "kernel", Path(sets["data-folder"]))["discovery"]["ranks"]


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("disc")
    r = run(tmp, 2, tiny(tmp / "data", **{"generate-data": True, "train": False, "evaluation": False}), name="gen")
    assert r.rc == 0, r.proc.stderr
    return tmp


def test_flat_2x_discovery_is_dlio_2_0_0s_per_rank(flat):
    """Each rank lists train/ and valid/ once and stats each one's first listed entry twice (exists, isdir): 4
    stats of 2 data files (valid/ holds the 2 evaluation files: DLIO probes it though evaluation is off)."""
    got = _discovery(flat, 2, tiny(flat / "data", train=True), "flat")
    want = {"stats": 4, "files": 2, "listings": {"train": 1, "valid": 1}}
    assert got == {"0": want, "1": want}


def test_the_committed_dlio_capture_discovers_as_the_kernel(tmp_path):
    """The real DLIO 2.0.0 ranks' discovery (unet3d: 28 flat files, valid/ empty) is the kernel's on a flat dataset
    of that shape."""
    shutil.copytree(CAPTURE / "dlio", tmp_path / "dlio" / "strace")
    dlio = st.parse(tmp_path / "dlio", "dlio", Path("/r/dlio/data"))["discovery"]["ranks"]
    sets = tiny(tmp_path / "data", **{"num-files-eval": 0})
    gen = run(tmp_path, 2, {**sets, "generate-data": True, "train": False}, name="gen")
    assert gen.rc == 0, gen.proc.stderr
    got = _discovery(tmp_path, 2, {**sets, "train": True}, "flat-vs-dlio")
    assert got == dlio


def test_subfolders_2x_are_globbed_twice(tmp_path):
    """The first listed entry is a folder: its two stats are no data file's; then glob and its upper-cased form
    each list train/ and every sub-folder once more (valid/ is flat)."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "num-subfolders-train": 3})
    got = _discovery(tmp_path, 2, sets, "sub")
    want = {"stats": 0, "files": 0, "listings": {"train": 3, "train/0": 2, "train/1": 2, "train/2": 2, "valid": 1}}
    assert got == {"0": want, "1": want}


def test_3x_discovery_is_rank_0s_with_no_probe(tmp_path):
    """DLIO 3.x: rank 0 alone lists train/ (sorted) and globs each sub-folder twice; valid/ is listed flat; no
    probe stat; rank 1 discovers nothing."""
    sets = tiny(tmp_path / "data", **{"dlio-version": "3.0.2", "format": "npz", "num-files-eval": 0,
                                      "shuffle": "off", "generate-data": True, "train": True,
                                      "num-subfolders-train": 3, "num-samples-per-file": 1})
    got = _discovery(tmp_path, 2, sets, "v3")
    assert got == {"0": {"stats": 0, "files": 0,
                         "listings": {"train": 1, "train/0": 2, "train/1": 2, "train/2": 2, "valid": 1}}}


def test_the_discovery_stat_all_mutant_stats_every_file_on_rank_0(flat):
    got = _discovery(flat, 2, tiny(flat / "data", train=True), "mutant", env={"H5DLIO_MUTATE": "discovery-stat-all"})
    assert got["1"] == {"stats": 4, "files": 2, "listings": {"train": 1, "valid": 1}}
    assert got["0"]["listings"] == {"train": 1, "valid": 1}
    assert got["0"]["stats"] == 4 + 8 and got["0"]["files"] == 1 + 8  # the 8 training files and valid's first


@pytest.mark.parametrize("damage,want", [
    ("delete", ["img_3_of_8.hdf5: No such file or directory", "finds 7 files, the run reads 8"]),
    ("dir", ["img_3_of_8.hdf5 is not a regular file"]),
    ("folder", ["/train: No such file or directory"]),
])
def test_a_bad_dataset_ends_every_rank_with_status_2(flat, tmp_path, damage, want):
    data = tmp_path / "data"
    shutil.copytree(flat / "data", data)
    victim = data / "train" / "img_3_of_8.hdf5"
    if damage == "delete":
        victim.unlink()
    elif damage == "dir":
        victim.unlink()
        victim.mkdir()
    else:
        shutil.rmtree(data / "train")
    r = run(tmp_path, 2, tiny(data, train=True), timeout=60)
    assert r.rc == 2, r.proc.stderr[-2000:]
    assert "key 'data-folder'" in r.proc.stderr and all(w in r.proc.stderr for w in want), r.proc.stderr[-2000:]

