"""DLIO 2.0.0's checkpoints in the kernel: the files are torch.save's bytes (checked against torch itself in the
reference DLIO venv), the names and sizes are the analytic model's (validate/model.py, written from DLIO's source),
the points in the training loop are DLIO's, and a failing or foreign checkpoint is handled safely."""
from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, run, tiny

from validate.model import checkpoint_files, torch_save_size

VENV = os.environ.get("H5DLIO_DLIO_VENV", "")


def dlio_python() -> str:
    py = Path(VENV, "bin", "python")
    if not VENV or not py.exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}) with torch; `make test` installs it")
    return str(py)


def torch_run(script: str, *args: str) -> str:
    p = subprocess.run([dlio_python(), "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def ckpt_sets(data: Path, folder: Path, **kw) -> dict:
    return tiny(data, **{"generate-data": True, "train": True, "evaluation": False, "checkpoint": True,
                         "checkpoint-folder": str(folder), **kw})


def as_cfg(sets: dict, ranks_type: str = "rank_zero") -> dict:
    """The same workload as DLIO YAML keys, for the analytic model."""
    lists = {k: [int(x) for x in str(sets[k]).split(",") if x] for k in ("optimization-groups", "layer-parameters")
             if k in sets}
    ck = {"model_size": sets.get("model-size", 10240), "num_layers": sets.get("num-layers", 1),
          "tensor_parallelism": sets.get("tensor-parallelism", 1),
          "pipeline_parallelism": sets.get("pipeline-parallelism", 1), "type": sets.get("checkpoint-type", ranks_type),
          "steps_between_checkpoints": sets.get("steps-between-checkpoints", -1),
          "checkpoint_after_epoch": sets.get("checkpoint-after-epoch", 1),
          "epochs_between_checkpoints": sets.get("epochs-between-checkpoints", 1)}
    if "optimization-groups" in lists:
        ck["optimization_groups"] = lists["optimization-groups"]
    if "layer-parameters" in lists:
        ck["layer_parameters"] = lists["layer-parameters"]
    return {"workflow": {"checkpoint": True}, "checkpoint": ck,
            "dataset": {"num_files_train": sets["num-files-train"],
                        "num_samples_per_file": sets["num-samples-per-file"], "record_length": sets["record-length"]},
            "reader": {"batch_size": sets["batch-size"], "read_threads": 0}, "train": {"epochs": sets["epochs"]}}


# (ranks, kernel keys) -> what DLIO 2.0.0 writes, read off base_checkpointing.py / main.py by hand in each comment
CASES = {
    # rank 0 only; after epochs 1 and 2 (4 steps each): model + DLIO's default layer file
    "defaults": (2, {}),
    # every rank; optimizer with a zero group (skipped, not in "combined"); tensor parallelism 2 -> 2 + 2 layer files
    "all_ranks_tp": (2, {"checkpoint-type": "all_ranks", "optimization-groups": "3,0,300", "num-layers": 2,
                         "tensor-parallelism": 2, "layer-parameters": "5,70000", "model-size": 100000}),
    # after steps 2 and 4 of each epoch; pipeline parallelism 2 on 3 ranks: layers on ranks 0 and 2 only
    "steps_pp": (3, {"checkpoint-type": "all_ranks", "steps-between-checkpoints": 2, "num-layers": 2,
                     "pipeline-parallelism": 2, "layer-parameters": "1000", "model-size": 0,
                     "num-files-train": 12}),
    # from epoch 2, every 2 epochs, over 5 epochs: epochs 2 and 4; no layer file (all sizes 0)
    "epoch_schedule": (1, {"epochs": 5, "checkpoint-after-epoch": 2, "epochs-between-checkpoints": 2,
                           "layer-parameters": "0,0", "model-size": 65536}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_writes_the_files_the_model_predicts(tmp_path, case):
    ranks, kw = CASES[case]
    folder = tmp_path / "ck"
    sets = ckpt_sets(tmp_path / "data", folder, **kw)
    r = run(tmp_path, ranks, sets)
    assert r.rc == 0, r.proc.stderr
    got = {p.name: p.stat().st_size for p in folder.iterdir()}
    want = checkpoint_files(as_cfg(sets), ranks)
    assert want and got == want
    summary = r.summary()["checkpoint"]
    assert summary["files"] == len(want) and summary["bytes"] == sum(want.values())


def test_hand_worked_names():
    """The model's names on one case worked out by hand: 8 files x 4 samples, batch 2, 2 ranks -> 8 steps per epoch;
    steps_between_checkpoints 4 -> after steps 4 and 8 of epochs 1 and 2; rank 0; model and one layer file."""
    cfg = {"workflow": {"checkpoint": True}, "checkpoint": {"steps_between_checkpoints": 4},
           "dataset": {"num_files_train": 8, "num_samples_per_file": 4}, "reader": {"batch_size": 2},
           "train": {"epochs": 2}}
    assert sorted(checkpoint_files(cfg, 2)) == sorted(
        f"{k}-{e}-{s}-0.pt" for e in (1, 2) for s in (4, 8) for k in ("model", "layer-0"))


def test_files_are_torch_save_bytes(tmp_path):
    """Each kernel file equals torch.save of DLIO's state (built here as base_checkpointing.py:38-56 builds it) byte
    for byte, but the 40-digit serialization id (data and its CRC), and torch.load reads it back."""
    ranks, kw = CASES["all_ranks_tp"]
    folder = tmp_path / "ck"
    r = run(tmp_path, ranks, ckpt_sets(tmp_path / "data", folder, **kw))
    assert r.rc == 0, r.proc.stderr
    script = r'''
import io, json, sys, zipfile, torch
def T(n): return torch.randint(high=1, size=(n,), dtype=torch.int8)
states = {"model": {"a": T(100000)},
          "optimizer": {"0": {"a": T(3), "b": T(3)}, "2": {"a": T(300), "b": T(300)}, "combined": T(303)},
          "layer": {"0": T(5), "1": T(70000)}}
out = {}
for path in sys.argv[1:]:
    kind = path.rsplit("/", 1)[1].split("-")[0]
    b = io.BytesIO(); torch.save(states[kind], b); ref = b.getvalue()
    got = open(path, "rb").read()
    z = zipfile.ZipFile(io.BytesIO(ref))
    sid = z.getinfo("archive/.data/serialization_id")
    diff = [i for i in range(len(ref)) if i >= len(got) or ref[i] != got[i]]
    loaded = torch.load(path, weights_only=True)
    shapes = json.dumps({k: list(v.shape) if hasattr(v, "shape") else {kk: list(vv.shape) for kk, vv in v.items()}
                         for k, v in loaded.items()}, sort_keys=True)
    want = json.dumps({k: [v.numel()] if hasattr(v, "numel") else {kk: [vv.numel()] for kk, vv in v.items()}
                       for k, v in states[kind].items()}, sort_keys=True)
    zero = all(not t.any() for v in loaded.values() for t in (v.values() if isinstance(v, dict) else [v]))
    out[path] = {"len": [len(ref), len(got)], "diff": diff, "sid": sid.header_offset, "shapes": shapes == want,
                 "zero": zero}
print(json.dumps(out))
'''
    files = sorted(str(p) for p in folder.iterdir())
    res = json.loads(torch_run(script, *files))
    assert len(res) == 24  # 2 ranks x 2 epochs x (model, optimizer, 2 + 2 layer files)
    for path, x in res.items():
        assert x["len"][0] == x["len"][1], path
        # only the serialization id record (after its local header) and the CRCs naming it may differ
        assert all(i > x["sid"] for i in x["diff"]) and len(x["diff"]) <= 48, (path, x["diff"][:10])
        assert x["shapes"] and x["zero"], path


def test_torch_save_size_model_equals_torch():
    """The analytic model's container size against torch.save on states that reach every encoding: memo slots past
    255 (LONG_BINPUT), a dict of over 1000 items (two SETITEMS batches), ints at the BININT1/BININT2/BININT edges."""
    states = {
        "small": {"a": 1},
        "edges": {"0": 255, "1": 256, "2": 65535, "3": 65536, "4": 2**31 - 1},
        "nested": {"0": {"a": 3, "b": 3}, "1": {"a": 70000, "b": 70000}, "combined": 70003},
        "many": {str(i): 1 + i % 7 for i in range(1100)},
    }
    script = r'''
import io, json, sys, torch
def build(v):
    return {k: build(x) for k, x in v.items()} if isinstance(v, dict) else torch.zeros(v, dtype=torch.int8)
out = {}
for name, st in json.loads(sys.argv[1]).items():
    b = io.BytesIO(); torch.save(build(st), b); out[name] = len(b.getvalue())
print(json.dumps(out))
'''
    got = json.loads(torch_run(script, json.dumps(states)))
    assert {k: torch_save_size(v) for k, v in states.items()} == got


def test_foreign_files_kept_and_existing_checkpoint_refused(tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / "model-1-16-0.pt").write_text("an earlier run's checkpoint")
    r = run(tmp_path, 1, ckpt_sets(tmp_path / "data", folder))
    assert r.rc == 2
    assert "model-1-16-0.pt exists" in r.proc.stderr and "overwrite=true" in r.proc.stderr
    assert (folder / "notes.txt").read_text() == "mine"
    assert (folder / "model-1-16-0.pt").read_text() == "an earlier run's checkpoint"
    assert not [p for p in folder.iterdir() if ".partial." in p.name]
    (folder / "model-1-16-0.pt").unlink()
    r = run(tmp_path, 1, ckpt_sets(tmp_path / "data", folder, overwrite=True))
    assert r.rc == 0, r.proc.stderr
    assert (folder / "notes.txt").read_text() == "mine"


def test_write_failure_names_file_and_rank_and_leaves_no_checkpoint(tmp_path):
    """A file-size limit (the stand-in for a full disk here) below the model file: the write fails with EFBIG; the
    job ends non-zero at once naming the file and the rank, and neither a partial file nor one under the final name
    is left."""
    sets = ckpt_sets(tmp_path / "data", tmp_path / "ck", **{"model-size": 96 << 20, "layer-parameters": "0"})
    gen = run(tmp_path, 1, {**sets, "train": False, "checkpoint": False})
    assert gen.rc == 0, gen.proc.stderr

    def limit():
        # above what Open MPI's PMIx puts in its shared-memory files, below the model file
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))

    env = dict(os.environ)
    argv_sets = [a for k, v in {**sets, "generate-data": False, "output-folder": str(tmp_path / "o")}.items()
                 for a in ("--set", f"{k}={'true' if v is True else 'false' if v is False else v}")]

    p = subprocess.run([*MPIRUN, "-np", "2", BIN, *argv_sets], capture_output=True, text=True, timeout=120, env=env,
                       preexec_fn=limit)
    assert p.returncode != 0
    assert "checkpoint" in p.stderr and "model-1-" in p.stderr and "rank 0" in p.stderr, p.stderr[-1500:]
    assert not list((tmp_path / "ck").iterdir())


def test_checkpoint_keys_out_of_range_exit_2(tmp_path):
    for bad, key in (({"checkpoint-type": "rank_one"}, "checkpoint-type"),
                     ({"num-layers": 3, "pipeline-parallelism": 2}, "num-layers"),
                     ({"tensor-parallelism": 0}, "tensor-parallelism"),
                     ({"optimization-groups": "1,x"}, "optimization-groups")):
        r = run(tmp_path, 1, ckpt_sets(tmp_path / "data", tmp_path / "ck", **bad))
        assert r.rc == 2 and f"'{key}'" in r.proc.stderr, (bad, r.proc.stderr)


def test_timing_pairs_dlio_checkpoint_stamps_with_its_files(tmp_path):
    """DLIO 2.0.0's per_epoch_stats.json (utils/statscounter.py:288-304: rank 0's ckpt<block> start/end stamps) and
    the files of the launch's checkpoint folder: the k-th checkpoint of an epoch is its k-th (epoch, step) by step."""
    from profiles.timing import checkpoints
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    for name, size in (("model-1-4-0.pt", 1000), ("layer-0-1-4-0.pt", 24), ("model-1-8-0.pt", 1000),
                       ("layer-0-1-8-0.pt", 24), ("notes.txt", 5)):
        with open(folder / name, "wb") as f:
            f.truncate(size)
    per = {"1": {"start": "2026-11-23T09:00:00", "block1": {"start": "2026-11-23T09:00:00"},
                 "ckpt2": {"start": "2026-11-23T09:00:03.000000", "end": "2026-11-23T09:00:03.750000"},
                 "ckpt1": {"start": "2026-11-23T09:00:01.000000", "end": "2026-11-23T09:00:01.250000"}}}
    got = checkpoints(tmp_path, "dlio", None, per)
    assert got == [{"epoch": 1, "step": 4, "files": 2, "bytes": 1024, "seconds": 0.25},
                   {"epoch": 1, "step": 8, "files": 2, "bytes": 1024, "seconds": 0.75}]
