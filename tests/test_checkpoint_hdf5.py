"""The kernel's own checkpoint format (checkpoint-format hdf5, bench/src/ckpth5.c): the tensors of DLIO's checkpoint
states as HDF5 datasets. The expected tensors come from two places independent of the code under test: torch.load
of the torch path's files (in the reference DLIO venv: torch itself names the keys, sizes and dtypes), and DLIO's
formulas worked by hand in the comments (base_checkpointing.py at 2.0.0 and 392621b). h5py reads the HDF5 side."""
from __future__ import annotations

import json
import re
import resource
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, kernel_info, run, tiny
from test_checkpoint import ckpt_sets, torch_run

# every dataset of an HDF5 file: name -> [elements, dtype code], and the first values of each
H5_LIST = r"""
import h5py, json, sys
def code(t):
    import h5py.h5t as T
    if t.get_class() == T.INTEGER:
        return ("i" if t.get_sign() == T.SGN_2 else "u") + str(t.get_size())
    return "bf16" if t.get_size() == 2 and t.get_fields()[4] == 7 else "f" + str(t.get_size())
out = {}
with h5py.File(sys.argv[1], "r") as f:
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out["/" + name] = [obj.shape[0], code(obj.id.get_type()), [float(x) for x in obj[:3]], len(obj.shape)]
    f.visititems(visit)
print(json.dumps(out))
"""

# every tensor of torch.save files, keyed /<group>/<dict keys>: [elements, dtype code] (group: the file's name
# without .pt, and for DLIO 2.0.0's flat names without -<epoch>-<step>-<rank>)
PT_LIST = r"""
import json, re, sys, torch
codes = {torch.int8: "i1", torch.uint8: "u1", torch.float16: "f2", torch.bfloat16: "bf16", torch.float32: "f4",
         torch.float64: "f8"}
out = {}
for path in sys.argv[1:]:
    stem = path.rsplit("/", 1)[1][:-3]
    g = re.sub(r"^(model|optimizer)-\d+-\d+-\d+$", r"\1", stem)
    g = re.sub(r"^layer-(\d+)-\d+-\d+-\d+$", r"layer-\1", g)
    def walk(d, prefix):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, prefix + "/" + str(k))
            else:
                out[prefix + "/" + str(k)] = [v.numel(), codes[v.dtype]]
    walk(torch.load(path, weights_only=True), "/" + g)
print(json.dumps(out))
"""


def h5_list(path: Path) -> dict:
    return json.loads(torch_run(H5_LIST, str(path)))


def pt_list(paths: list[Path]) -> dict:
    return json.loads(torch_run(PT_LIST, *map(str, paths)))


def strip(listing: dict) -> dict:
    return {k: v[:2] for k, v in listing.items()}


# DLIO 2.0.0 (base_checkpointing.py:35-56, :70-86): every rank (all_ranks) saves model {"a": 100000},
# optimizer {"0": {"a": 3, "b": 3}, "2": {"a": 300, "b": 300}, "combined": 303} (group 1 is 0: skipped) and
# num_layers 2 + tensor_parallelism 2 = 4 layer files of {"0": 5, "1": 70000}; int8
V1 = {"checkpoint-type": "all_ranks", "optimization-groups": "3,0,300", "num-layers": 2, "tensor-parallelism": 2,
      "layer-parameters": "5,70000", "model-size": 100000, "epochs": 1}
V1_TENSORS = {"/model/a": [100000, "i1"], "/optimizer/0/a": [3, "i1"], "/optimizer/0/b": [3, "i1"],
              "/optimizer/2/a": [300, "i1"], "/optimizer/2/b": [300, "i1"], "/optimizer/combined": [303, "i1"],
              **{f"/layer-{lay}/{i}": [n, "i1"] for lay in range(4) for i, n in enumerate((5, 70000))}}


@pytest.mark.dlio
def test_dlio_2_0_0_tensors_as_datasets(tmp_path):
    """Same tensors as the torch path (torch.load of its files) and as DLIO's formulas by hand, one file per rank."""
    r = run(tmp_path, 2, ckpt_sets(tmp_path / "data", tmp_path / "h5", **V1, **{"checkpoint-format": "hdf5"}))
    assert r.rc == 0, r.proc.stderr
    t = run(tmp_path, 2, ckpt_sets(tmp_path / "data", tmp_path / "pt", **V1, overwrite=True), name="pt-out")
    assert t.rc == 0, t.proc.stderr
    # 32 samples / 2 ranks / batch 2: 8 steps; one checkpoint after epoch 1, step 8
    assert sorted(p.name for p in (tmp_path / "h5").iterdir()) == ["checkpoint-1-8-0.h5", "checkpoint-1-8-1.h5"]
    for rank in (0, 1):
        got = h5_list(tmp_path / "h5" / f"checkpoint-1-8-{rank}.h5")
        assert strip(got) == V1_TENSORS
        assert all(v[3] == 1 and v[2] == [0.0] * len(v[2]) for v in got.values())  # 1-D, zeros (randint(high=1))
        assert strip(got) == pt_list(sorted((tmp_path / "pt").glob(f"*-1-8-{rank}.pt")))
    ck = r.summary()["checkpoint"]
    assert ck["format"] == "hdf5" and ck["driver"] == "sec2"
    total = sum(n for n, _ in V1_TENSORS.values())
    assert total == 100000 + 909 + 4 * 70005
    assert [(c["kind"], c["files"], c["bytes"], c["writes"]) for c in ck["checkpoints"]] == \
        [("save", 2, 2 * total, 2 * len(V1_TENSORS))]  # every tensor < the 16 MiB buffer: one H5Dwrite each
    assert t.summary()["checkpoint"]["format"] == "torch"


def v2_sets(folder: Path, **kw) -> dict:
    """A small transformer (392621b's rules), checkpoint-only: write 1, read 1."""
    return {"dlio-version": "2.0.0-52", "data-folder": str(folder.parent / "data"), "train": False,
            "checkpoint": True, "checkpoint-folder": str(folder), "model-type": "transformer", "num-layers": 4,
            "hidden-size": 64, "ffn-hidden-size": 128, "num-attention-heads": 8, "num-kv-heads": 4,
            "vocab-size": 1000, "zero-stage": 3, "num-checkpoints-write": 1, "num-checkpoints-read": 1,
            "time-between-checkpoints": 0, "model-datatype": "bf16", "optimizer-datatype": "fp64",
            "checkpoint-randomize-tensor": False, "quiet": True, "checkpoint-format": "hdf5", **kw}


def v2_expected(dp: int) -> dict:
    """392621b base_checkpointing.py by hand, h=64, f=128, heads 8, kv 4 (dim_kv = 64/8*4 = 32), vocab 1000, L=4,
    ZeRO 3 (shards over dp), tp = pp = 1: layer 0 and 5 (embedding, lm_head) h*vocab = 64000; layers 1-4: h,
    h*(h+2*32) = 8192, h*h = 4096, h, h*2f = 16384, h*f = 8192; layer 6 (final norm) h; all / dp (:304-329), bf16.
    Optimizer (:284-302, :340-358): parameters 64000 + 4*(64+8192+4096+64+16384+8192) + 64 + 64000 = 276032, / dp;
    groups [p, 5h, p, 5h, p, 5h], fp64."""
    g = "zero_pp_rank_{d}_mp_rank_0_model_states"
    out = {}
    for d in range(dp):
        mine = {0: [64000], 5: [64000], 6: [64], **{lay: [64, 8192, 4096, 64, 16384, 8192] for lay in range(1, 5)}}
        for lay, sizes in mine.items():
            for i, n in enumerate(sizes):
                out[(d, f"/{g.format(d=d)}/{lay}/{i}")] = [n // dp, "bf16"]
        for i, n in enumerate([276032 // dp, 320] * 3):
            out[(d, f"/zero_pp_rank_{d}_mp_rank_0_optim_states/{i}")] = [n, "f8"]
    return out


@pytest.mark.dlio
def test_transformer_write_and_read_back(tmp_path):
    """392621b's transformer states: the same tensors as torch.save's files of the torch path, DLIO's formulas by
    hand; the read-back reads every tensor the torch path's read phase reads (layer and optimizer states)."""
    r = run(tmp_path, 1, v2_sets(tmp_path / "h5"))
    assert r.rc == 0, r.proc.stderr
    t = run(tmp_path, 1, v2_sets(tmp_path / "pt", **{"checkpoint-format": "torch"}), name="pt-out")
    assert t.rc == 0, t.proc.stderr
    got = h5_list(tmp_path / "h5" / "global_epoch1_step1" / "checkpoint-0.h5")
    assert strip(got) == {k: v for (_, k), v in v2_expected(1).items()}
    assert strip(got) == pt_list(sorted((tmp_path / "pt" / "global_epoch1_step1").glob("*.pt")))
    assert all(v[2] == [1.0] * 3 for v in got.values())  # randomize_tensor false: torch.ones
    size = {"bf16": 2, "f8": 8}
    total = sum(n * size[c] for n, c in v2_expected(1).values())
    saves, loads = r.summary()["checkpoint"]["checkpoints"]
    assert (saves["kind"], saves["bytes"], loads["kind"], loads["bytes"]) == ("save", total, "load", total)
    assert loads["reads"] == saves["writes"] == len(got)


@pytest.mark.parametrize("mode", [pytest.param("collective", marks=pytest.mark.dlio),
                                  pytest.param("independent", marks=pytest.mark.dlio),
                                  pytest.param("subfiling", marks=pytest.mark.slow)])
def test_shared_file_two_ranks(tmp_path, mode):
    """checkpoint-mpiio / checkpoint-subfiling: one file per checkpoint for both ranks, /rank-<r>/ per rank, each
    rank's tensors its ZeRO-3 shard (dp 2); written and read back with a buffer smaller than most tensors."""
    if mode == "subfiling" and not kernel_info()["subfiling"]:
        pytest.skip("this HDF5 has no Subfiling VFD (the key is refused: test_bad_values)")
    key = {"checkpoint-subfiling": True} if mode == "subfiling" else {"checkpoint-mpiio": mode}
    r = run(tmp_path, 2, v2_sets(tmp_path / "ck", **key, **{"checkpoint-buffer-size": 16384}), timeout=300)
    assert r.rc == 0, r.proc.stderr
    folder = tmp_path / "ck" / "global_epoch1_step1"
    if mode == "subfiling":  # the stub names the subfiles; h5py opens no subfiled file: the kernel's read-back reads it
        data = [p for p in folder.iterdir() if re.fullmatch(r"checkpoint\.h5\.subfile_\d+_\d+_of_\d+", p.name)]
        assert data and sum(p.stat().st_size for p in data) >= 2 * 276032 // 2 * 8
    else:
        got = h5_list(folder / "checkpoint.h5")
        assert strip(got) == {f"/rank-{d}{k}": v for (d, k), v in v2_expected(2).items()}
    ck = r.summary()["checkpoint"]
    assert ck["driver"] == ("subfiling" if mode == "subfiling" else f"mpio-{mode}")
    size = {"bf16": 2, "f8": 8}
    total = sum(n * size[c] for n, c in v2_expected(2).values())
    calls = sum(-(-n * size[c] // (16384 // size[c] * size[c])) for n, c in v2_expected(2).values())
    assert [(c["kind"], c["files"], c["bytes"], c.get("writes", c.get("reads"))) for c in ck["checkpoints"]] == \
        [("save", 1, total, calls), ("load", 1, total, calls)]
    assert not [p for p in (tmp_path / "ck").rglob("*") if ".partial." in p.name]


@pytest.mark.parametrize("bad, key", [
    ({"checkpoint-format": "zip"}, "checkpoint-format"),
    ({"checkpoint-mpiio": "yes"}, "checkpoint-mpiio"),
    ({"checkpoint-format": "torch", "checkpoint-mpiio": "collective"}, "checkpoint-mpiio"),
    ({"checkpoint-format": "torch", "checkpoint-subfiling": True}, "checkpoint-subfiling"),
    ({"checkpoint-mpiio": "independent", "checkpoint-subfiling": True}, "checkpoint-subfiling"),
    ({"checkpoint-buffer-size": 100}, "checkpoint-buffer-size"),
])
def test_bad_values_exit_2(tmp_path, bad, key):
    r = run(tmp_path, 1, v2_sets(tmp_path / "ck", **bad))
    assert r.rc == 2 and f"'{key}'" in r.proc.stderr, r.proc.stderr
    assert not (tmp_path / "ck").exists() or not list((tmp_path / "ck").rglob("*.h5"))


def test_existing_refused_foreign_kept_overwrite(tmp_path):
    folder = tmp_path / "ck"
    (folder / "global_epoch1_step1").mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    old = folder / "global_epoch1_step1" / "checkpoint-0.h5"
    old.write_text("an earlier run's checkpoint")
    sets = v2_sets(folder, **{"num-checkpoints-read": 0})
    r = run(tmp_path, 1, sets)
    assert r.rc == 2 and "checkpoint-0.h5 exists" in r.proc.stderr and "overwrite=true" in r.proc.stderr
    assert old.read_text() == "an earlier run's checkpoint" and (folder / "notes.txt").read_text() == "mine"
    assert not [p for p in folder.rglob("*") if ".partial." in p.name]
    r = run(tmp_path, 1, {**sets, "overwrite": True})
    assert r.rc == 0, r.proc.stderr
    assert old.read_bytes()[:8] == b"\x89HDF\r\n\x1a\n" and (folder / "notes.txt").read_text() == "mine"


def test_read_of_another_model_names_file_and_rank(tmp_path):
    folder = tmp_path / "ck"
    assert run(tmp_path, 1, v2_sets(folder, **{"num-checkpoints-read": 0})).rc == 0
    r = run(tmp_path, 1, v2_sets(folder, **{"num-checkpoints-write": 0, "vocab-size": 999}))
    assert r.rc not in (0, 2)
    assert re.search(r"rank 0: error: checkpoint \S+/global_epoch1_step1/checkpoint-0\.h5: dataset \S+ is not this "
                     r"model's tensor", r.proc.stderr), r.proc.stderr[-1500:]


def peak_rss_kib(tmp: Path, sets: dict) -> int:
    argv = ["/usr/bin/time", "-v", BIN] + [a for k, v in {"output-folder": str(tmp / "o"), **sets}.items()
                                            for a in ("--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-1500:]
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))


@pytest.mark.slow
def test_peak_rss_is_the_buffer_not_the_model(tmp_path):
    """A 2 GiB model state written (DLIO 2.0.0's model file: {"a": 2 GiB of int8}) through the
    default 16 MiB buffer: peak RSS stays within baseline (a 1 MiB model) + buffer + 16 MiB of slack."""
    if not Path("/usr/bin/time").exists():
        pytest.skip("/usr/bin/time (GNU time) is not installed")
    base = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": False, "epochs": 1,
                                      "checkpoint": True, "checkpoint-format": "hdf5", "layer-parameters": "0",
                                      "num-files-train": 2, "num-files-eval": 0})
    small = peak_rss_kib(tmp_path, {**base, "checkpoint-folder": str(tmp_path / "a"), "model-size": 1 << 20})
    big = peak_rss_kib(tmp_path, {**base, "checkpoint-folder": str(tmp_path / "b"), "model-size": 2 << 30,
                                  "overwrite": True})
    (f,) = (tmp_path / "b").iterdir()
    assert f.stat().st_size >= 2 << 30
    assert big - small < (16 << 10) + (16 << 10), (small, big)


@pytest.mark.parametrize("where", ["yaml", "kernel-set"])
def test_side_by_side_refused_by_name(where):
    """DLIO has no HDF5 checkpoints: the harness refuses a side-by-side run of one (the key is kernel-only: DLIO never
    sees it) before anything is launched, naming the key; the torch format passes that check."""
    from harness import plan as hplan
    from harness.precheck import precheck
    from harness.workload import Workload
    cfg = {"workflow": {"generate_data": True, "train": True, "checkpoint": True},
           "dataset": {"format": "hdf5", "num_files_train": 4, "num_samples_per_file": 1, "record_length": 4096},
           "reader": {"read_threads": 0}}
    sets = []
    if where == "yaml":
        cfg["h5dlio"] = {"checkpoint-format": "hdf5"}
    else:
        sets = ["h5dlio.checkpoint-format=hdf5"]
    wl = Workload("w", "tiny", "unet3d", cfg, "unet3d.yaml")
    why = precheck(hplan.build(wl, hplan.Options(ranks=1, kernel_sets=sets)))
    assert why and "key 'checkpoint-format': hdf5 is the kernel's own checkpoint format" in why, why
    cfg.pop("h5dlio", None)
    assert precheck(hplan.build(Workload("w", "tiny", "unet3d", cfg, "unet3d.yaml"), hplan.Options(ranks=1))) is None


def test_write_failure_names_file_and_rank_and_leaves_nothing(tmp_path):
    """A file-size limit (a full disk's stand-in) below the model: H5Dwrite fails; the job ends non-zero naming the
    file, the dataset and the rank; neither the partial file nor one under the final name is left."""
    sets = ckpt_sets(tmp_path / "data", tmp_path / "ck", **{"model-size": 96 << 20, "layer-parameters": "0",
                                                            "checkpoint-format": "hdf5", "epochs": 1})
    assert run(tmp_path, 1, {**sets, "train": False, "checkpoint": False}).rc == 0

    def limit():  # above Open MPI's PMIx shared-memory files, below the model
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))

    argv = [a for k, v in {**sets, "generate-data": False, "output-folder": str(tmp_path / "o")}.items()
            for a in ("--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}")]
    p = subprocess.run([*MPIRUN, "-np", "1", BIN, *argv], capture_output=True, text=True, timeout=120,
                       preexec_fn=limit)
    assert p.returncode not in (0, 2)
    assert re.search(r"rank 0: error: \S*checkpoint-1-16-0\.h5\.partial\.\d+, dataset /model/a", p.stderr), \
        p.stderr[-1500:]
    assert not list((tmp_path / "ck").iterdir())
