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
import yaml
from kernel import BIN, MPIRUN, run, tiny

from validate.model import checkpoint_files, torch_save_size, transformer_parameters

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


def torch_save_sizes(build: str, states: dict) -> dict:
    """len(torch.save(build(state))) per named state, in the reference venv; build: Python source defining build(v)."""
    script = "import io, json, sys, torch\n" + build + """
out = {}
for name, st in json.loads(sys.argv[1]).items():
    b = io.BytesIO(); torch.save(build(st), b); out[name] = len(b.getvalue())
print(json.dumps(out))
"""
    return json.loads(torch_run(script, json.dumps(states)))


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


def llama(layers: int, ranks_cfg: dict, **ck) -> dict:
    """A checkpoint-only workload of DLIO 2.0.0-52's keys (392621b utils/config.py:864-933)."""
    return {"workflow": {"train": False, "checkpoint": True}, "checkpoint": {"num_checkpoints_write": 1, **ck},
            "model": {"type": "transformer", "num_layers": layers, "parallelism": ranks_cfg,
                      "transformer": {"hidden_size": 64, "ffn_hidden_size": 224, "vocab_size": 2004,
                                      "num_attention_heads": 32, "num_kv_heads": 8}}}


def test_v2_parameters_as_dlio_logs_them():
    """The tiny llama3_8b (L 32, h 64, FFN 224, V 2004, 32 heads, 8 KV heads) by hand: per layer h + h(h + 2 x 16) +
    h^2 + h + 2 x 224h + 224h = 53376, x 32 + 2 x 2004h + h = 1964608, the number DLIO 392621b itself logs
    ("Total number of parameters in the model: 1964608", make validate WORKLOAD=llama3_8b DLIO=<392621b>)."""
    m = {"hidden": 64, "ffn": 224, "vocab": 2004, "layers": 32, "heads": 32, "kv_heads": 8}
    assert transformer_parameters(m) == 1964608


def test_v2_hand_worked_names():
    """392621b base_checkpointing.py:56-107, :360-418 worked by hand.
    ZeRO 1, tp 2, pp 2, 4 ranks (mp 4, dp 1), 3 layers: stage 0 (ranks 0, 1) holds layers 0-2 (embedding + 1, 2),
    stage 1 (ranks 2, 3) layers 3-5 (layer 3, lm_head 4, norm 5); pp > 1 -> one file per layer on dp rank 0, plus each
    rank's optimizer file. ZeRO 0, 4 ranks, tp = pp = 1: only rank 0 (< mp) writes, the zero_pp names."""
    got = checkpoint_files(llama(3, {"tensor": 2, "pipeline": 2, "zero_stage": 1}), 4, "2.0.0-52")
    want = {f"global_epoch1_step1/layer_{li}-model_{r}_model_states.pt" for r in (0, 1) for li in (0, 1, 2)} | \
        {f"global_epoch1_step1/layer_{li}-model_{r}_model_states.pt" for r in (2, 3) for li in (3, 4, 5)} | \
        {f"global_epoch1_step1/zero_pp_rank_0_mp_rank_{r}_optim_states.pt" for r in range(4)}
    assert set(got) == want
    got = checkpoint_files(llama(2, {"zero_stage": 0}, num_checkpoints_write=2), 4, "2.0.0-52")
    assert set(got) == {f"global_epoch1_step{s}/zero_pp_rank_0_mp_rank_0_{k}_states.pt" for s in (1, 2)
                        for k in ("model", "optim")}


@pytest.mark.dlio
def test_torch_save_size_datatypes_equal_torch():
    """The container model with DLIO 2.0.0-52's datatypes (HalfStorage, BFloat16Storage, FloatStorage, ...: one GLOBAL
    per class and file) against torch.save of such a state, nested as DLIO's layer states are."""
    states = {
        "layers": {str(li): {str(i): (n, "fp16") for i, n in enumerate((32, 3072, 2048, 32, 14336, 7168))}
                   for li in range(4)},
        "optim": {str(i): (n, "fp32") for i, n in enumerate((70001, 320, 70001, 320))},
        "mixed": {"0": (5, "bf16"), "1": (7, "fp64"), "2": (9, "uint8"), "3": (11, "int8"), "4": (3, "fp16")},
    }
    build = """
T = {"int8": torch.int8, "uint8": torch.uint8, "fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
     "fp64": torch.float64}
def build(v):  # keys made afresh as DLIO's str(index) (json.loads shares equal keys: pickle would memoize them)
    return {str(int(k)): build(x) for k, x in v.items()} if isinstance(v, dict) else \\
        torch.ones(v[0], dtype=T[v[1]])
"""
    assert {k: torch_save_size(v) for k, v in states.items()} == torch_save_sizes(build, states)


@pytest.mark.dlio
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


@pytest.mark.dlio
def test_torch_save_size_model_equals_torch():
    """The analytic model's container size against torch.save on states that reach every encoding: memo slots past
    255 (LONG_BINPUT), a dict of over 1000 items (two SETITEMS batches), ints at the BININT1/BININT2/BININT edges."""
    states = {
        "small": {"a": 1},
        "edges": {"0": 255, "1": 256, "2": 65535, "3": 65536, "4": 2**31 - 1},
        "nested": {"0": {"a": 3, "b": 3}, "1": {"a": 70000, "b": 70000}, "combined": 70003},
        "many": {str(i): 1 + i % 7 for i in range(1100)},
    }
    build = """
def build(v):
    return {k: build(x) for k, x in v.items()} if isinstance(v, dict) else torch.zeros(v, dtype=torch.int8)
"""
    assert {k: torch_save_size(v) for k, v in states.items()} == torch_save_sizes(build, states)


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_v2_random_files_are_valid_zips_as_the_model_sizes_them(tmp_path):
    """Entry 2.0.0-52, random tensors (many below and one above the 4 MiB period of the random view): every record's
    CRC-32 in the data descriptors is the CRC of the bytes written (Python's zipfile recomputes each), and the sizes are
    the analytic model's. Hidden 1024, vocabulary 4096: the embedding and lm_head tensors are 4 MiB (fp16, / 2 ranks at
    ZeRO 3 = 2 MiB each... so vocabulary 8192: 8 MiB / 2 = 4 MiB + the period's remainder), the layers' far smaller."""
    import zipfile
    cfg = llama(1, {"zero_stage": 3})
    cfg["model"]["transformer"].update({"hidden_size": 1024, "vocab_size": 8200, "ffn_hidden_size": 512})
    f = tmp_path / "llama.yaml"
    f.write_text(yaml.safe_dump(cfg))
    folder = tmp_path / "ck"
    r = run(tmp_path, 2, {"dlio-version": "2.0.0-52", "checkpoint-folder": str(folder), "num-checkpoints-read": 0,
                          "quiet": True, "data-folder": str(tmp_path / "data")}, config=f)
    assert r.rc == 0, r.proc.stderr
    want = checkpoint_files(cfg, 2, "2.0.0-52")
    got = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*.pt")}
    assert got == want
    big = 0
    for p in folder.rglob("*.pt"):
        with zipfile.ZipFile(p) as z:
            assert z.testzip() is None, p
            big += any(i.file_size > 4 << 20 for i in z.infolist())
    assert big  # the embedding shard (8200 x 1024 / 2 fp16 values) is past one period
