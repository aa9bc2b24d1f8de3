"""The system-call mutants (issue 35 item 7; bench/src/mutate.c): odirect-dropped and readv-size (DLIO 3.x's O_DIRECT
npz reader, reader.odirect), fsync-dropped (both 3.x checkpoint streams) and fadvise-dropped (mlpstorage's stream).
DFTracer records no readv and drops open flags; a preloaded no-op fsync or fadvise hides the call from the kernel:
only the strace profile (profiles/strace/) sees these four, so strace.per_file is the check meant to kill each.

Two layers, both cheap (CI has no DLIO 3.x venv):
- the kernel itself under the strace profile's own wrapper and options (seconds): the mutant run's table against an
  unmutated run's, parsed by the profile; strace.per_file FAILs, and the only differences are the mutant's own (one
  file, one field), so the hook changes exactly the system calls it claims;
- planted tables in DLIO 3.x's shape (the pre-warm rule on: DLIO may open a file more often): strace.per_file FAILs
  naming the file and the field, where the pre-warm tolerance could otherwise have swallowed the difference."""
from __future__ import annotations

import copy
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from profiles import FAIL, PASS
from profiles import strace as st
from tests import kernel
from tests.test_dlio3_npz import v3npz
from tests.test_strace import FakeRun

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed: the system-call "
                                "profile cannot run")
CKPT = json.loads((Path(__file__).parent / "data" / "dlio3-checkpoint" / "llama3_8b_v3-tiny.json").read_text())
ALIGN = 4096


def traced(tmp: Path, name: str, sets: dict, ranks: int = 2, mutant: str = "", config: Path | None = None) -> Path:
    """The kernel under the strace profile's wrapper (profiles.strace.WRAPPER, STRACE_OPTS, SYSCALLS), as the harness
    runs a launch; its workdir (<name>/strace/trace.r<rank>.<pid>, checkpoints in <name>/checkpoints)."""
    work = tmp / name
    (work / "strace").mkdir(parents=True)
    trace = "trace=" + ",".join(f"?{c}" for c in st.SYSCALLS)
    launcher = [*kernel.MPIRUN, "-np", str(ranks), "sh", "-c", st.WRAPPER, str(work / "strace" / "trace"),
                shutil.which("strace"), *st.STRACE_OPTS, "-e", trace, "--"]
    r = kernel.run(work, ranks, {"checkpoint-folder": str(work / "checkpoints"), **sets}, config=config,
                   launcher=launcher, env={"H5DLIO_MUTATE": mutant} if mutant else None, timeout=300)
    assert r.rc == 0, r.proc.stderr[-2000:]
    if mutant:
        assert r.summary().get("mutant") == mutant
    return work


def versus(base: Path, mut: Path, data: Path) -> tuple[dict, list[dict]]:
    """strace.per_file with the unmutated run as DLIO's side and the mutant as the kernel's; (result, differences)."""
    d, k = (json.loads(json.dumps(st.parse(w, side, data))) for w, side in ((base, "dlio"), (mut, "kernel")))
    run = FakeRun({"strace-dlio.json": d, "strace-kernel.json": k})
    r = st.check_per_file(run)[0]
    return r, run.put["files-strace.json"]["differences"]


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    """28 npz files of 1 MiB +- 488,832 bytes in 3 sub-folders (unet3d_b200 tiny_odirect's shape), generated once;
    an unmutated O_DIRECT training run under strace."""
    tmp = tmp_path_factory.mktemp("sysmut-npz")
    sets = v3npz(tmp / "data", **{"num-files-train": 28, "num-samples-per-file": 1, "num-subfolders-train": 3,
                                  "record-length": 1048576, "record-length-stdev": 488832, "batch-size": 7,
                                  "read-threads": 1, "file-shuffle": "seed", "epochs": 1, "random-seed": 123,
                                  "cpu-count": 2,  # the fixture's 2 CPUs: 2 ranks -> 1 reader (DLIO 3.x)
                                  "seed-change-epoch": True, "generate-data": True, "train": False})
    assert kernel.run(tmp, 2, sets, name="gen").rc == 0
    sets.update({"generate-data": False, "train": True, "odirect": True})
    return tmp, sets, traced(tmp, "base", sets)


def one_difference(diffs: list[dict], field: str) -> dict:
    assert len(diffs) == 1 and diffs[0]["field"] == field, diffs
    return diffs[0]


def test_odirect_dropped_changes_one_opens_flags_and_strace_per_file_fails(npz):
    tmp, sets, base = npz
    r, diffs = versus(base, traced(tmp, "odirect-dropped", sets, mutant="odirect-dropped"), tmp / "data")
    assert r["status"] == FAIL
    x = one_difference(diffs, "open_flags")
    n = x["dlio"]["O_DIRECT|O_RDONLY"]
    assert x["dlio"] == {"O_DIRECT|O_RDONLY": n} and x["kernel"] == {"O_DIRECT|O_RDONLY": n - 1, "O_RDONLY": 1}
    assert f"first: {x['file']} open_flags:" in r["detail"] and "'O_RDONLY': 1" in r["detail"], r["detail"]


def test_readv_size_asks_one_block_more_and_strace_per_file_fails(npz):
    tmp, sets, base = npz
    r, diffs = versus(base, traced(tmp, "readv-size", sets, mutant="readv-size"), tmp / "data")
    assert r["status"] == FAIL
    x = one_difference(diffs, "readv")
    size = (tmp / "data" / x["file"].removeprefix("files/")).stat().st_size
    want = -(-size // ALIGN) * ALIGN  # npy_reader_odirect.py:58: the size rounded up to the alignment
    d, k = Counter(x["dlio"]), Counter(x["kernel"])
    assert (d - k, k - d) == ({f"0:{want}": 1}, {f"0:{want + ALIGN}": 1})  # one readv, one block more
    assert f"first: {x['file']} readv:" in r["detail"], r["detail"]


def ckpt_run(tmp: Path, name: str, entry: str, mutant: str = "") -> Path:
    """llama3_8b_v3 tiny (the recorded 3.x workload): 2 checkpoints written by 2 ranks (8 files), none read back."""
    cfg = tmp / "workload.yaml"
    cfg.write_text(yaml.safe_dump(CKPT["workload"]))
    return traced(tmp, name, {"dlio-version": entry, "time-between-checkpoints": 0, "num-checkpoints-read": 0},
                  mutant=mutant, config=cfg)


@pytest.mark.parametrize("entry,mutant,field", [
    ("3.0.2", "fsync-dropped", "fsyncs"),               # SimpleStreamingCheckpointing
    ("3.0.2+mlpstorage", "fsync-dropped", "fsyncs"),    # mlpstorage's StreamingCheckpointing
    ("3.0.2+mlpstorage", "fadvise-dropped", "fadvise"),
])
def test_checkpoint_mutant_changes_one_files_calls_and_strace_per_file_fails(tmp_path, entry, mutant, field):
    base = ckpt_run(tmp_path, "base", entry)
    r, diffs = versus(base, ckpt_run(tmp_path, mutant, entry, mutant), tmp_path / "data")
    assert r["status"] == FAIL
    x = one_difference(diffs, field)
    assert x["file"].startswith("checkpoints/global_epoch1_step1/")
    if field == "fsyncs":
        assert (x["dlio"], x["kernel"]) == (1, 0)
    else:  # one DONTNEED per chunk written (32 MiB and the tail), none in the mutant
        assert x["kernel"] == {} and len(x["dlio"]) >= 1
        assert all(k.endswith(":POSIX_FADV_DONTNEED") for k in x["dlio"])
    assert f"first: {x['file']} {field}:" in r["detail"], r["detail"]


# ---------------------------------------------------------------- planted tables in DLIO 3.x's shape

NPZ = "train/0/img_03_of_28.npz"
SIZE = 1_111_111  # rounded up: 1,114,112


def odirect_row(opens: int, flags: dict | None = None, readv: dict | None = None) -> dict:
    """A data file read as npy_reader_odirect.py reads it, `opens` times: O_DIRECT open, stat, one readv, close."""
    return {**st.new_row(), "opens": opens, "open_flags": flags or {"O_DIRECT|O_RDONLY": opens}, "closes": opens,
            "readv": readv or {"0:1114112": opens}, "read_bytes": opens * SIZE, "stats": opens}


def ckpt_row(fsyncs: int = 1, fadvise: dict | None = None) -> dict:
    """A checkpoint file written through mlpstorage's stream: 2 chunks, a DONTNEED after each, one fsync."""
    return {**st.new_row(), "opens": 1, "open_flags": {"O_CREAT|O_TRUNC|O_WRONLY": 1}, "closes": 1,
            "writes": {"0:33554432": 1, "33554432:13536640": 1}, "write_bytes": 47091072, "fsyncs": fsyncs,
            "fadvise": {"0:33554432:POSIX_FADV_DONTNEED": 1, "33554432:13536640:POSIX_FADV_DONTNEED": 1}
            if fadvise is None else fadvise}


def table(files: dict, ckpts: dict | None = None) -> dict:
    return {"files": files, "checkpoints": ckpts or {}, "dirs": {}, "discovery": {}, "ranks": {}}


@pytest.mark.parametrize("dlio_opens", [2, 3])  # 3: DLIO's pre-warm opened the file once more than the kernel
@pytest.mark.parametrize("kernel_row,field", [
    (odirect_row(2, flags={"O_DIRECT|O_RDONLY": 1, "O_RDONLY": 1}), "open_flags"),     # odirect-dropped
    (odirect_row(2, flags={"O_RDONLY": 2}), "open_flags"),                             # every open buffered
    (odirect_row(2, readv={"0:1114112": 1, "0:1118208": 1}), "readv"),                 # readv-size
    (odirect_row(2, readv={"0:1114112,4096": 2}), "readv"),                            # two iovecs
])
def test_planted_odirect_divergence_fails_under_the_prewarm_rule(dlio_opens, kernel_row, field):
    """Under DLIO 3.x's pre-warm rule a file DLIO opened more often passes only when each open reads as the kernel's;
    a kernel open without O_DIRECT or with another readv is never tolerated: FAIL naming the file (and, when the
    opens agree, the field)."""
    ok = st.check_per_file(FakeRun({"strace-dlio.json": table({NPZ: odirect_row(dlio_opens)}),
                                    "strace-kernel.json": table({NPZ: odirect_row(2)})}, prewarm=True))[0]
    assert ok["status"] == PASS, ok["detail"]
    r = st.check_per_file(FakeRun({"strace-dlio.json": table({NPZ: odirect_row(dlio_opens)}),
                                   "strace-kernel.json": table({NPZ: kernel_row})}, prewarm=True))[0]
    assert r["status"] == FAIL, r["detail"]
    first = "opens" if dlio_opens != 2 else field
    assert f"first: files/{NPZ} {first}:" in r["detail"], r["detail"]


CK = "global_epoch1_step1/zero_pp_rank_0_mp_rank_0_optim_states.pt"


@pytest.mark.parametrize("kernel_row,field", [
    (ckpt_row(fsyncs=0), "fsyncs"),                                                    # fsync-dropped
    (ckpt_row(fadvise={}), "fadvise"),                                                 # fadvise-dropped
    (ckpt_row(fadvise={"0:33554432:POSIX_FADV_DONTNEED": 1}), "fadvise"),              # one of two dropped
])
def test_planted_checkpoint_divergence_fails_naming_the_field(kernel_row, field):
    ok = st.check_per_file(FakeRun({"strace-dlio.json": table({}, {CK: ckpt_row()}),
                                    "strace-kernel.json": table({}, {CK: copy.deepcopy(ckpt_row())})}))[0]
    assert ok["status"] == PASS, ok["detail"]
    r = st.check_per_file(FakeRun({"strace-dlio.json": table({}, {CK: ckpt_row()}),
                                   "strace-kernel.json": table({}, {CK: kernel_row})}))[0]
    assert r["status"] == FAIL and f"first: checkpoints/{CK} {field}:" in r["detail"], r["detail"]
