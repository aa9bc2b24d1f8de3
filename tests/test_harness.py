"""Unit tests of the workload translation and the analytic model (no DLIO needed)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.workload import WorkloadError, deep_merge, load
from validate import model


def _setup(tmp_path, ref: dict, base: dict):
    dl = tmp_path / "dlio_workloads"
    dl.mkdir()
    (dl / "base_wl.yaml").write_text(yaml.safe_dump(base))
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "w.yaml").write_text(yaml.safe_dump(ref))
    return dl, refs


def test_overlay_order_base_overlay_scale(tmp_path):
    base = {"model": "m", "dataset": {"format": "npz", "num_files_train": 168, "record_length": 10},
            "reader": {"batch_size": 7, "read_threads": 4}, "workflow": {"checkpoint": True}}
    ref = {"base": "base_wl", "overlay": {"dataset": {"format": "hdf5"}, "workflow": {"checkpoint": False}},
           "default_scale": "tiny", "scales": {"tiny": {"dataset": {"num_files_train": 28}}, "full": {}}}
    dl, refs = _setup(tmp_path, ref, base)
    wl = load("w", None, dl, refs)
    assert wl.scale == "tiny"
    assert wl.config["dataset"] == {"format": "hdf5", "num_files_train": 28, "record_length": 10}
    assert wl.config["reader"] == {"batch_size": 7, "read_threads": 4}  # DLIO's shape kept
    assert wl.config["workflow"] == {"checkpoint": False}
    assert load("w", "full", dl, refs).config["dataset"]["num_files_train"] == 168
    assert base["dataset"]["format"] == "npz"  # merging never mutates its inputs


@pytest.mark.parametrize("ref,scale,words", [
    ({"base": "base_wl", "scales": {"tiny": {}}}, "huge", ["SCALE=huge", "tiny"]),
    ({"base": "nope", "scales": {"tiny": {}}}, "tiny", ["nope", "installed DLIO"]),
    ({"base": "base_wl", "scales": {"tiny": {}}, "extra": 1}, "tiny", ["extra"]),
    ({"scales": {"tiny": {}}}, "tiny", ["base"]),
])
def test_bad_reference_configs(tmp_path, ref, scale, words):
    dl, refs = _setup(tmp_path, ref, {"model": "m"})
    with pytest.raises(WorkloadError) as e:
        load("w", scale, dl, refs)
    for w in words:
        assert w in str(e.value)


def test_unknown_workload_lists_known(tmp_path):
    dl, refs = _setup(tmp_path, {"base": "base_wl", "scales": {"tiny": {}}}, {})
    with pytest.raises(WorkloadError, match="known: w"):
        load("resnet", None, dl, refs)


def test_deep_merge_replaces_leaves_and_lists():
    assert deep_merge({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2], "d": 3}}) == {"a": {"b": 1, "c": [2], "d": 3}}


def test_model_unet3d_tiny_by_hand():
    """28 files x 1 sample, 2 ranks, batch 7: 14 samples per rank, floor(28/7/2) = 2 steps -> 14 reads per epoch."""
    cfg = {"dataset": {"num_files_train": 28, "num_samples_per_file": 1, "record_length": 1048576},
           "reader": {"batch_size": 7, "read_threads": 4, "sample_shuffle": "seed"}, "train": {"epochs": 2}}
    reads = model.workload_reads(cfg, 2)
    assert [len(s["samples"]) for s in reads[0]] == [14, 14]
    assert [s["prefetched"] for s in reads[0]] == [0, 0]
    assert sorted(reads[0][0]["samples"]) == list(range(14)) and sorted(reads[1][1]["samples"]) == list(range(14, 28))
    assert all(b == 1024 * 1024 for s in reads[1] for b in s["bytes"])


def test_model_prefetch_past_a_step_cap():
    """total_training_steps=1 with 2 workers, prefetch 2: window ceil(2/2)*2 = 2 -> 3 batches read, 1 used."""
    cfg = {"dataset": {"num_files_train": 8, "num_samples_per_file": 4, "record_length": 4096},
           "reader": {"batch_size": 2, "read_threads": 2, "prefetch_size": 2}, "train": {"epochs": 1,
                                                                                        "total_training_steps": 1}}
    seg = model.workload_reads(cfg, 1)[0][0]
    assert len(seg["samples"]) == 2 and seg["prefetched"] == 4 and len(seg["bytes"]) == 6


def test_model_eval_cadence_and_dims():
    cfg = {"dataset": {"num_files_train": 4, "num_files_eval": 2, "num_samples_per_file": 2, "record_length": 10000,
                       "record_length_stdev": 3000},
           "reader": {"batch_size": 2, "batch_size_eval": 1, "read_threads": 0}, "train": {"epochs": 4},
           "workflow": {"evaluation": True}, "evaluation": {"eval_after_epoch": 2, "epochs_between_evals": 2}}
    segs = model.workload_reads(cfg, 1)[0]
    assert [(s["phase"], s["epoch"]) for s in segs] == [("train", 1), ("train", 2), ("eval", 2), ("train", 3),
                                                         ("train", 4), ("eval", 4)]
    dims = model.file_dims(cfg)
    assert len(dims) == 6 and len(set(dims)) > 1  # drawn per file
    ev = segs[2]
    # ~100x100-byte samples, 2 per file: below HDF5's 64 KiB sieve buffer, so the first sample's read runs to the
    # dataset's end (both samples) and the second's is the sample alone
    assert ev["bytes"] == [dims[4 + s // 2][0] * dims[4 + s // 2][1] * (2 - s % 2) for s in ev["samples"]]


def test_model_small_samples_read_through_the_sieve_buffer():
    """megatron_deepspeed tiny: 1 file x 1024 samples of 45x45 = 2025 bytes (record_length 2048), 2 ranks, batch 64,
    no readers: every read is 64 KiB but for samples 992-1023, which have less than 64 KiB of dataset left. Rank 1's
    Log VFD raw bytes over 2 epochs, measured on both DLIO 2.0.0 and the kernel: 65,052,960."""
    cfg = {"dataset": {"num_files_train": 1, "num_samples_per_file": 1024, "record_length": 2048},
           "reader": {"batch_size": 64, "read_threads": 0, "sample_shuffle": "seed"}, "train": {"epochs": 2}}
    reads = model.workload_reads(cfg, 2)
    assert sum(sum(s["bytes"]) for s in reads[1]) == 65_052_960
    assert sum(sum(s["bytes"]) for s in reads[0]) == 2 * 512 * 65536
    chunked = {**cfg, "dataset": {**cfg["dataset"], "enable_chunking": True}}
    assert all(b == 2025 for s in model.workload_reads(chunked, 2)[0] for b in s["bytes"])


def test_a_plan_is_built_once_frozen_and_a_resumed_one_plans_the_same_launches(tmp_path, monkeypatch):
    """harness.plan.build merges the workload once (the generation buffer bounded) into a frozen plan; prepare writes
    the plan's workload and reference DLIO block as they are (no second describe of the reference: the kernel is not
    asked again); the plan resumed from that manifest plans the same launches, and a manifest of another shape does
    not (the negative control)."""
    import dataclasses

    from harness import plan as hplan
    from harness import run as hrun
    base = {"model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
            "reader": {"batch_size": 2, "read_threads": 4}, "workflow": {"checkpoint": False}}
    dl, refs = _setup(tmp_path, {"base": "base_wl", "scales": {"tiny": {}}}, base)
    wl = load("w", "tiny", dl, refs)
    assert "generation_buffer_size" not in wl.config["dataset"]
    block = {"version": "2.0.0", "entry": "2.0.0", "probed": {"rules": {}, "keys": {}}}
    opt = hplan.Options(profiles=["timing", "logvfd"], dlio_version="2.0.0")  # as harness/__main__.py sets it
    plan = hplan.build(wl, opt, tmp_path / "venv", block)
    assert plan.config["dataset"]["generation_buffer_size"] == hplan.GEN_BUFFER == 16 * 1024 * 1024
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.opt = hplan.Options()  # type: ignore[misc]

    def asked(*a):
        raise AssertionError("the reference DLIO described again")
    monkeypatch.setattr(hrun, "describe", asked)
    monkeypatch.setattr(hrun, "versions", lambda py: {"kernel": "0.1.0"})
    m = hrun.prepare(tmp_path / "run", plan)
    assert m["dlio"] == block and m["workload"]["config"] is plan.config
    with pytest.raises(AssertionError, match="described again"):  # without the block the reference is described
        hrun.prepare(tmp_path / "run2", dataclasses.replace(plan, dlio=None))
    m = json.loads(json.dumps(m))
    fresh = hplan.launches(tmp_path / "run", plan)
    again = hplan.launches(tmp_path / "run", hplan.resumed(m, hplan.Options(), tmp_path / "venv"))
    assert [(s.name, s.argv, s.env_changes) for s in again] == [(s.name, s.argv, s.env_changes) for s in fresh]
    other = hplan.launches(tmp_path / "run", hplan.resumed({**m, "ranks": 3}, hplan.Options(), tmp_path / "venv"))
    assert [s.argv for s in other] != [s.argv for s in fresh]


def test_plan_profiles_reach_the_ranks_and_dlio_runs_untraced_elsewhere(tmp_path):
    """Every DLIO launch but the DFTracer one sets DFTRACER_ENABLE=0 (pydftracer 1.0.2 is on by default and slows
    DLIO's first epoch ~2x); the Darshan launches read in the ranks (read_threads=0) on both sides, preload
    libdarshan.so first, and ask the launcher for their log folder and config file."""
    from harness import plan as hplan
    base = {"model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
            "reader": {"batch_size": 2, "read_threads": 4}, "workflow": {"checkpoint": False}}
    dl, refs = _setup(tmp_path, {"base": "base_wl", "scales": {"tiny": {}}}, base)
    wl = load("w", "tiny", dl, refs)
    info = {"lib": "/d/libdarshan.so", "sides": {s: {"preload": ["/d/libdarshan.so", "/h/libhdf5.so.310"]}
                                                 for s in ("dlio", "kernel")}}
    opt = hplan.Options(profiles=["timing", "logvfd", "dftracer", "darshan"],
                        found={"darshan": info, "dftracer": {"lib": "/t/libdftracer_preload.so"}})
    steps = {s.name: s for s in hplan.launches(tmp_path / "run", hplan.build(wl, opt, tmp_path / "venv"))}
    for name, st in steps.items():
        if st.side == "dlio":
            assert st.env_changes["DFTRACER_ENABLE"] == ("1" if st.profile == "dftracer" else "0"), name
            assert f"DFTRACER_ENABLE={st.env_changes['DFTRACER_ENABLE']}" in st.argv  # -x K=V: the ranks only
    for side in ("dlio", "kernel"):
        st = steps[f"{side}.darshan"]
        assert st.env_changes["LD_PRELOAD"] == "/d/libdarshan.so:/h/libhdf5.so.310"
        assert st.dirs == (st.workdir / "logs",) and st.files[0][0] == st.workdir / "darshan.conf"
        assert "NAME_INCLUDE" in st.files[0][1] and str(tmp_path / "run" / side / "data") in st.files[0][1]
        assert ("read-threads=0" in st.argv) if side == "kernel" else ("++workload.reader.read_threads=0" in st.argv)
        assert steps[f"{side}.dftracer"].env_changes.get("LD_PRELOAD") == (
            "/t/libdftracer_preload.so" if side == "kernel" else None)  # DLIO traces itself (pydftracer)
        timing = steps[f"{side}.timing"].argv
        assert "read-threads=0" not in timing and "++workload.reader.read_threads=0" not in timing


def test_a_kernel_entry_the_model_does_not_know_fails_by_name(tmp_path):
    """The analytic model is the independent second opinion: for a kernel entry it has no rules for, validation
    fails naming what is missing (dlio.version, and each check that needs the model), never quietly using 2.0.0."""
    import shutil

    from validate.checks import validate
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parent / "data" / "run-tiny", run)
    v = validate(run)
    assert v["verdict"] == "pass"                          # the control: the run as it was made
    m = json.loads((run / "manifest.json").read_text())
    m["dlio"] = {**(m.get("dlio") or {}), "version": "9.9.9", "entry": "9.9.9", "nearest": False, "source": "test"}
    (run / "manifest.json").write_text(json.dumps(m))
    v = validate(run)
    rows = {c["name"]: c for c in v["checks"]}
    assert v["verdict"] == "fail" and rows["dlio.version"]["status"] == "fail"
    assert "no counterpart in the analytic model" in rows["dlio.version"]["detail"]
    model_rows = [n for n in rows if n.endswith(".model")]
    assert model_rows and all(rows[n]["status"] == "fail" and "'9.9.9'" in rows[n]["detail"] for n in model_rows)


def test_a_relative_reuse_dlio_is_recorded_absolute(tmp_path, monkeypatch):
    """--reuse-dlio runs/<id> (relative, as typed in the repository): the reused steps name the run absolutely, so
    that collect() matches the reused traces' absolute file names against its data folder (relative, every DLIO
    data file went unmatched: 'dlio: None' opens for all 96 files of a retinanet_b200 negative control)."""
    from common.rundir import RunDir
    from harness.run import _reuse
    src = tmp_path / "runs" / "old"
    (src / "dlio" / "dftracer").mkdir(parents=True)
    m = {"workload": {"config": {"a": 1}}, "ranks": 2, "steps": {}}
    RunDir(src).save({**m, "steps": {"dlio.dftracer": {"status": "ok", "workdir": str(src / "dlio" / "dftracer")},
                                     "dlio.timing": {"status": "fail"}}})
    monkeypatch.chdir(tmp_path)
    rd = tmp_path / "runs" / "new"
    rd.mkdir()
    _reuse(rd, Path("runs/old"), m)
    assert m["steps"] == {"dlio.dftracer": {"status": "ok", "workdir": str(src / "dlio" / "dftracer"),
                                            "reused_from": str(src)}}
    assert (rd / "dlio" / "dftracer").is_dir()
