"""Non-data I/O is classified by what a path is in this run (relative to the launch's data, checkpoint and own
folders, the run's configuration, the reference venv), by call and by side: never by substrings of absolute paths.
The run directory of WORKLOAD=unet3d_checkpoint is runs/unet3d_checkpoint-tiny-..., and a rule matching "checkpoint"
anywhere in a path explained every file under it, data files included."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profiles import dftracer
from profiles.shared.paths import CHECKPOINT, DATA, Roots, classify, where
from validate import checks

RUN_TINY = Path(__file__).parent / "data" / "run-tiny"
RD = "/scratch/runs/unet3d_checkpoint-tiny-20261125-120000"  # a run named after a checkpointing workload


def roots(side: str = "dlio") -> Roots:
    wd = f"{RD}/{side}/dftracer"
    return Roots(side=side, workdir=wd, data=f"{RD}/{side}/data", checkpoint=f"{wd}/checkpoints",
                 config=(f"{RD}/workload.yaml", f"{RD}/dlio-config"),
                 python=("/cache/dlio-2.0.0-abc", "/root/.pyenv/versions/3.11.7"), home="/home/u")


@pytest.mark.parametrize("call,path,side", [
    ("open", f"{RD}/dlio/data/train/img_1_of_8.hdf5", "dlio"),            # a data file opened outside the reads
    ("write", f"{RD}/kernel/data/train/img_1_of_8.hdf5", "kernel"),       # written during training
    ("ftruncate", f"{RD}/kernel/data/train/img_1_of_8.hdf5", "kernel"),
    ("rename", f"{RD}/kernel/data/train/img_1_of_8.hdf5", "kernel"),
    ("open", f"{RD}/kernel/data/train/stray.hdf5", "kernel"),            # a stray file in the data folder
    ("open", f"{RD}/kernel/dftracer/checkpoints/stray.pt", "kernel"),      # a stray file in the checkpoint folder
    ("write", f"{RD}/dlio/dftracer/checkpoints/model-0.pt", "dlio"),       # a checkpoint write not compared
    ("open", f"{RD}/kernel/elsewhere.bin", "kernel"),                      # in the run dir, outside every root
    ("open", f"{RD}/dlio/data/h5dlio-generation.json", "dlio"),            # the kernel's record name, DLIO's side
    ("open", f"{RD}/kernel/data/train/h5dlio-generation.json", "kernel"),  # the record's name, not at the top
    ("open", f"{RD}/kernel/data/h5dlio-generation.json.1", "kernel"),
    ("open", "/home/someone/results.json", "kernel"),                      # a .json that is no output of this run
    ("open", "/home/someone/checkpoint.bin", "dlio"),
    ("open", "/home/u/results.bin", "dlio"),                                 # the home folder, not a dot-folder
    ("write", "/home/u/.keras/keras.json", "dlio"),                          # written: not a read of its config
    ("open", "/home/u/.keras/keras.json", "kernel"),                         # the kernel imports no library config
    ("open", "/cache/dlio-2.0.0-abc/lib/python3.11/site-packages/x.py", "kernel"),  # the kernel has no Python
    ("rename", f"{RD}/dlio/dftracer/checkpoints/model-0.pt", "dlio"),      # only the kernel renames its partial file
    ("open", f"{RD}/kernel/dftracer/h5dlio-mutant.tmp", "kernel"),         # a stray file in the launch's folder
    ("write", f"{RD}/kernel/dftracer/notes.json", "kernel"),
    # issue 35: a rule saying what a path is explains the side that legitimately touches it, and reading it
    ("write", f"{RD}/workload.yaml", "kernel"),                            # the run's configuration, written
    ("rename", f"{RD}/dlio-config/workload/h5dlio_unet3d.yaml", "dlio"),
    ("write", "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "kernel"),       # a shared library, written
    ("open", f"{RD}/kernel/dftracer/hydra/.hydra/config.yaml", "kernel"),  # DLIO's Hydra folder: not the kernel's
    ("open", "/tmp/abcd1234", "kernel"),                                   # Python's tempfile: the kernel has none
    ("open", "/tmp/__autograph_generated_file2_oumzpo.py", "kernel"),     # AutoGraph's module: the kernel has no TF
    ("open", "/tmp/__autograph_generated_file2_oumzpo.txt", "dlio"),      # not the module AutoGraph writes
    ("open", "/tmp/x/__autograph_generated_file2_oumzpo.py", "dlio"),     # not in /tmp itself
])
def test_never_explained(call, path, side):
    assert classify(call, path, roots(side)) is None, where(path, roots(side))


@pytest.mark.parametrize("call,path,side,words", [
    ("mkdir", f"{RD}/dlio/dftracer/checkpoints", "dlio", "checkpoint folder"),
    ("mkdir", "checkpoints/unet3d", "dlio", "checkpoint folder"),          # relative: against the launch's folder
    ("access", f"{RD}/kernel/dftracer/checkpoints/model-0.pt", "kernel", "does not exist"),
    ("rename", f"{RD}/kernel/dftracer/checkpoints/model-0.pt.partial.123", "kernel", "partial"),
    ("open", f"{RD}/kernel/data/h5dlio-generation.json", "kernel", "completion record"),
    ("read", f"{RD}/kernel/data/h5dlio-generation.json", "kernel", "completion record"),
    ("opendir", f"{RD}/dlio/data/train", "dlio", "dataset discovery"),
    ("lstat", f"{RD}/dlio/data/train/img_1_of_8.hdf5", "dlio", "file-status probe"),
    ("open", f"{RD}/dlio/dftracer/hydra/.hydra/config.yaml", "dlio", "own output"),
    ("open", f"{RD}/dlio/dftracer/trace-0-of-2.pfw", "dlio", "own output"),
    ("open", f"{RD}/dlio/dftracer/out/trace-0-of-2.pfw", "dlio", "own output"),
    ("write", f"{RD}/kernel/dftracer/logs/0_h5dlio_id1.darshan_partial", "kernel", "own output"),
    ("open", f"{RD}/kernel/dftracer/darshan.conf", "kernel", "own output"),
    ("open", f"{RD}/dlio-config/workload/h5dlio_unet3d.yaml", "dlio", "configuration"),
    ("open", "/root/.pyenv/versions/3.11.7/lib/python3.11/os.py", "dlio", "Python environment"),
    ("open", "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "kernel", "shared libraries"),
    ("open", "/tmp/ompi.vm.0/jf.0/1/sm_segment.vm.0.1", "kernel", "MPI runtime"),
    ("open", "/proc/self/maps", "kernel", "pseudo-files"),
    ("fork", "", "kernel", "process management"),
    ("open", "/home/u/.keras/keras.json", "dlio", "per-user configuration"),
    # measured: cosmoflow_eval on DLIO 2.0.0 under Darshan (2026-11-28) opened two, failing darshan.explained
    ("open", "/tmp/__autograph_generated_file2_oumzpo.py", "dlio", "AutoGraph"),
    ("write", "/tmp/__autograph_generated_file2vpc2ni6.py", "dlio", "AutoGraph"),
])
def test_explained_by_what_the_path_is(call, path, side, words):
    why = classify(call, path, roots(side))
    assert why is not None and words in why, (why, where(path, roots(side)))


def test_relative_names_take_the_kind_they_are_relative_to():
    r = roots("kernel")
    assert classify("open", "train/img_1_of_8.hdf5", r, DATA) is None
    assert classify("opendir", "train", r, DATA) is not None
    assert classify("write", "model-0.pt", r, CHECKPOINT) is None
    assert classify("access", "model-0.pt", r, CHECKPOINT) is not None


def _moved_run(tmp_path: Path) -> Path:
    """run-tiny as if it had been made for a workload named unet3d_checkpoint: every recorded path renamed."""
    old = json.loads((RUN_TINY / "manifest.json").read_text())["steps"]["dlio.dftracer"]["workdir"].rsplit("/", 2)[0]
    run = tmp_path / "unet3d_checkpoint-tiny-x"
    shutil.copytree(RUN_TINY, run)
    for f in [run / "manifest.json", *(run / "tables").glob("*.json")]:
        f.write_text(f.read_text().replace(old, RD))
    return run


@pytest.mark.parametrize("planted,ok", [
    (None, True),
    ({"call": "open", "file": f"{RD}/kernel/dftracer/checkpoints/stray.pt", "n": 1}, False),
    ({"call": "open", "file": f"{RD}/kernel/stray.bin", "n": 1}, False),
    ({"call": "openat", "file": f"{RD}/kernel/data/train/stray.hdf5", "n": 1}, False),
], ids=["as recorded", "stray checkpoint file", "a file in the run dir", "a stray data file"])
def test_dftracer_explained_fails_a_planted_path_in_a_checkpoint_named_run(tmp_path, planted, ok):
    run = _moved_run(tmp_path)
    if planted is not None:
        t = json.loads((run / "tables" / "dftracer-kernel.json").read_text())
        t["files"]["other"].append(planted)
        (run / "tables" / "dftracer-kernel.json").write_text(json.dumps(t))
    r = {c["name"]: c for c in dftracer.check_dftracer(checks.Run(run))}
    assert (r["dftracer.explained"]["status"] == "pass") == ok, r["dftracer.explained"]
    if not ok:
        assert planted["file"] in r["dftracer.explained"]["detail"]


RECORD_ROW = {"opens": 1, "closes": 1, "reads": 1, "bytes": 154, "calls": {"open": 1, "read": 1, "close": 1},
              "accesses": {"-1+1023": 1}, "read_time_s": 5e-06}  # as a kernel read launch traces its record


@pytest.mark.parametrize("sides,ok", [((), True), (("kernel",), True), (("kernel", "dlio"), False)],
                         ids=["as recorded", "the kernel reads its record", "both sides open it"])
def test_the_kernels_completion_record_is_no_data_file(tmp_path, sides, ok):
    """The kernel's read of h5dlio-generation.json before it reads the folder: left out of dftracer.per_file and
    explained by name and side. Negative control: a file of that name DLIO opens too is a data file of the
    comparison again (here with unequal accesses: per_file fails)."""
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    for side in sides:
        t = json.loads((run / "tables" / f"dftracer-{side}.json").read_text())
        t["files"]["files"]["h5dlio-generation.json"] = dict(RECORD_ROW, accesses={"0+1": 1} if side == "dlio" else
                                                             RECORD_ROW["accesses"])
        (run / "tables" / f"dftracer-{side}.json").write_text(json.dumps(t))
    r = {c["name"]: c for c in dftracer.check_dftracer(checks.Run(run))}
    assert (r["dftracer.per_file"]["status"] == "pass") == ok, r["dftracer.per_file"]
    assert r["dftracer.explained"]["status"] == "pass", r["dftracer.explained"]
