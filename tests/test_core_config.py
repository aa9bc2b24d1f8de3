"""MLPerf Storage's core-config-v1 hash, comparability class and DLIO acceptance (common/coreconfig.py), held to the
hashes mlcommons/storage documents: its rules table editions.yaml lists each class's hashes, and its own tests name
the configurations that hash to them (tests/unit/test_leaf_provenance.py UNET3D_B200, a v3.0 CLOSED unet3d run,
classifies as unet3d-b200-A; the class's notes: the first hash is workflow.checkpoint false, the second the
ZettaLane rows' 'True'; the shipped templates configs/dlio/workload/retinanet_b200.yaml and llama3_8b.yaml hash to
retinanet-b200-A and llama3-8b-A). Every expected hash below is copied from editions.yaml, none from the code."""
from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from common import coreconfig as cc

# mlcommons/storage tests/unit/test_leaf_provenance.py UNET3D_B200 (closed/TTA/.../training/unet3d/run, v3.0 tree)
UNET3D_B200 = {
    "checkpoint": {"checkpoint_after_epoch": 5, "checkpoint_folder": "checkpoints/unet3d",
                   "epochs_between_checkpoints": 2},
    "dataset": {"data_folder": "/mnt/seahorse/v3train-1007b/unet3d", "format": "npz",
                "listing_validation_interval": 100, "num_files_train": 148000, "num_samples_per_file": 1,
                "num_subfolders_train": 14, "record_length_bytes": 146600628,
                "record_length_bytes_resize": 2097152, "record_length_bytes_stdev": 68341808, "skip_listing": True},
    "framework": "pytorch",
    "metric": {"au": 0.9},
    "model": {"model_size": 499153191, "name": "unet3d", "type": "cnn"},
    "reader": {"batch_size": 7, "data_loader": "pytorch", "file_shuffle": "seed", "multiprocessing_context": "fork",
               "odirect": True, "read_threads": 32, "sample_shuffle": "seed"},
    "train": {"computation_time": 0.162, "epochs": 5},
    "workflow": {"checkpoint": False, "generate_data": False, "train": True},
}
# mlcommons/storage configs/dlio/workload/retinanet_b200.yaml (the reference of class retinanet-b200-A)
RETINANET_B200 = {"workload": {
    "model": {"name": "retinanet", "type": "cnn"}, "framework": "pytorch",
    "workflow": {"generate_data": False, "train": True, "checkpoint": False},
    "dataset": {"data_folder": "data/retinanet/", "format": "jpeg", "num_files_train": 1170301,
                "num_samples_per_file": 1, "record_length_bytes": 322957},
    "reader": {"data_loader": "pytorch", "batch_size": 24, "read_threads": 8, "file_shuffle": "seed",
               "sample_shuffle": "seed"},
    "train": {"epochs": 8, "computation_time": 0.04755}, "metric": {"au": 0.85}}}
# mlcommons/storage configs/dlio/workload/llama3_8b.yaml as v2.0/v3.0 ran it (class llama3-8b-A; the template's
# later `model.parallelism.data: 1` is a core key, so it is left out here as those rounds had it)
LLAMA3_8B = {
    "model": {"name": "llama_8b", "type": "transformer", "num_layers": 32, "model_datatype": "fp16",
              "optimizer_datatype": "fp32", "parallelism": {"pipeline": 1, "tensor": 1, "zero_stage": 3},
              "transformer": {"vocab_size": 128256, "hidden_size": 4096, "ffn_hidden_size": 14336,
                              "num_attention_heads": 32, "num_kv_heads": 8}},
    "framework": "pytorch", "workflow": {"generate_data": False, "train": False, "checkpoint": True},
    "checkpoint": {"checkpoint_folder": "checkpoints/llama_8b", "time_between_checkpoints": 5,
                   "num_checkpoints_write": 10, "num_checkpoints_read": 10, "fsync": True}}
F6796ED = "f6796ed281e39ccc83a450e2b1f21b9c909d8fd0"  # accepted for v3.0 (editions.yaml)


def _with(cfg: dict, dotted: str, value) -> dict:
    out = copy.deepcopy(cfg)
    *path, last = dotted.split(".")
    d = out.get("workload", out)
    for p in path:
        d = d.setdefault(p, {})
    d[last] = value
    return out


@pytest.mark.parametrize("cfg,want,cls", [
    (UNET3D_B200, "0d3ad0dec188becd", "unet3d-b200-A"),
    (_with(UNET3D_B200, "workflow.checkpoint", "True"), "f636f5a57473fca2", "unet3d-b200-A"),
    (RETINANET_B200, "20c73f53486caba0", "retinanet-b200-A"),
    (LLAMA3_8B, "68df04b7240e3fb0", "llama3-8b-A"),
])
def test_documented_hashes_and_classes(cfg, want, cls):
    b = cc.comparability(cfg, {"revision": F6796ED})
    assert (b["hash"], b["class"]) == (want, cls)
    assert b["algorithm"] == "core-config-v1" and b["keys"] == sorted(b["keys"])


def test_hash_by_hand():
    """The rules done by hand, another way: the allowlisted keys of a small training config written out as the
    literal canonical JSON (sorted, no spaces; "7" and 5.0 as integers, "False" as false), its SHA-256 cut to 16."""
    cfg = {"framework": "pytorch", "reader": {"batch_size": "7", "read_threads": 4},
           "train": {"epochs": 5.0}, "workflow": {"train": True, "checkpoint": "False"},
           "dataset": {"num_files_train": 28, "data_folder": "x"}, "checkpoint": {"checkpoint_folder": "c"}}
    literal = ('{"framework":"pytorch","reader.batch_size":7,"train.epochs":5,'
               '"workflow.checkpoint":false,"workflow.train":true}')
    got = cc.core_config(cfg)
    assert got["hash"] == hashlib.sha256(literal.encode()).hexdigest()[:16]
    assert got["keys"] == ["framework", "reader.batch_size", "train.epochs", "workflow.checkpoint", "workflow.train"]


@pytest.mark.parametrize("key,value", [
    ("reader.read_threads", 4), ("dataset.num_files_train", 28), ("checkpoint.checkpoint_folder", "/elsewhere"),
    ("dataset.data_folder", "/x"), ("reader.multiprocessing_context", "spawn"), ("reader.odirect", False),
    ("storage.storage_type", "direct_fs"),
])
def test_a_tunable_changes_nothing(key, value):
    base = cc.core_config(UNET3D_B200)
    assert cc.core_config(_with(UNET3D_B200, key, value)) == base and key not in base["keys"]


@pytest.mark.parametrize("key,value", [
    ("reader.batch_size", 8), ("dataset.record_length_bytes", 1048576), ("train.computation_time", 0.636),
    ("checkpoint.checkpoint_after_epoch", 3), ("dataset.format", "hdf5"),
])
def test_a_core_key_changes_the_hash_and_loses_the_class(key, value):
    """The negative controls: a workload another submission did not run is not in its class."""
    b = cc.comparability(_with(UNET3D_B200, key, value), {"revision": F6796ED})
    assert b["hash"] != "0d3ad0dec188becd" and key in b["keys"] and b["class"] == cc.NO_CLASS


def test_checkpointing_excludes_the_phase_selectors():
    """checkpointing@1: num_checkpoints_write/read pick a phase, not a workload; time_between_checkpoints is core."""
    h = cc.core_config(LLAMA3_8B)["hash"]
    assert cc.core_config(_with(LLAMA3_8B, "checkpoint.num_checkpoints_read", 0))["hash"] == h
    assert cc.core_config(_with(LLAMA3_8B, "checkpoint.time_between_checkpoints", 6))["hash"] != h


def test_unknown_hash_and_family_have_no_class():
    assert cc.class_of("0123456789abcdef", "training") == cc.NO_CLASS
    assert cc.class_of("0d3ad0dec188becd", "checkpointing") == cc.NO_CLASS   # a class is of one family
    assert cc.class_of("0d3ad0dec188becd", "training", edition="2.0") == cc.NO_CLASS
    assert cc.core_config({}, "training")["hash"] == cc.UNKNOWN
    assert cc.core_config(UNET3D_B200, "kv_cache")["allowlist"] == cc.UNKNOWN
    assert cc.comparability({}, None)["class"] == cc.NO_CLASS


@pytest.mark.parametrize("rev", ["f" * 40, F6796ED[:7], None, "unknown", "pypi"])  # unlisted, short, none
def test_an_unaccepted_revision_is_not_accepted(rev):
    b = cc.comparability(UNET3D_B200, {"revision": rev} if rev else None)
    assert b["dlio_accepted"] is False and "is not accepted for MLPerf Storage v3.0" in b["dlio_acceptance"]
    assert "NOT accepted" in cc.line(b) and b["dlio_revision"] in ("f" * 40, "unknown")
    ok = cc.comparability(UNET3D_B200, {"revision": F6796ED})   # the control
    assert ok["dlio_accepted"] is True and "NOT" not in cc.line(ok)


def test_provenance_has_mlpstorages_form_and_says_not_a_submission():
    """The keys mlpstorage's stamp validator requires (provenance.py _validate_stamp), no null anywhere."""
    p = cc.provenance(UNET3D_B200, {"version": "3.0.2", "revision": F6796ED, "source": "x"},
                      {"kernel": "0.1.0", "git_revision": "abc"})
    assert p["schema"] == "mlps-run-provenance/1"
    assert set(p) == {"schema", "rules_edition", "layout_version", "tool", "dlio", "storage_library", "core_config",
                      "stamped_at", "stamped_by", "provenance", "notes"}
    assert set(p["tool"]) == {"name", "version", "git_sha", "code_image"}
    assert set(p["dlio"]) == {"version", "source", "commit"} and p["dlio"]["commit"] == F6796ED
    assert set(p["core_config"]) == {"algorithm", "allowlist", "hash", "keys"}
    assert p["core_config"]["hash"] == "0d3ad0dec188becd"
    assert set(p["provenance"]) == {"rules_edition", "layout_version", "tool", "dlio", "storage_library",
                                    "core_config"}
    assert "not a submission" in p["notes"]
    assert "null" not in json.dumps(cc.provenance({}, None, None))
    pypi = cc.provenance(UNET3D_B200, {"version": "2.0.0", "revision": "pypi", "source": "pypi"}, None)
    assert pypi["dlio"]["commit"] == "unknown" and pypi["provenance"]["dlio"] == "package-metadata"


def test_verdict_and_report_carry_the_comparability(tmp_path, capsys):
    """validate writes a comparability block beside the checks (not a check row) and the report's verdict section
    shows it in one line; run-tiny's manifest names no DLIO revision, so it is not accepted; planted f6796ed is."""
    from reports.sections import verdict_section
    from validate.__main__ import main
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parent / "data" / "run-tiny", run)
    main([str(run), "--quiet"])
    v = json.loads((run / "verdict.json").read_text())
    m = json.loads((run / "manifest.json").read_text())
    assert v["comparability"]["hash"] == cc.core_config(m["workload"]["config"])["hash"]
    assert v["comparability"]["class"] == cc.NO_CLASS and v["comparability"]["dlio_accepted"] is False
    assert not any(c["name"].startswith("comparab") for c in v["checks"])
    assert "core-config-v1" in capsys.readouterr().out
    m["dlio"] = {"version": "3.0.2", "revision": F6796ED, "entry": "3.0.2", "source": "test"}
    (run / "manifest.json").write_text(json.dumps(m))
    main([str(run), "--quiet"])
    v = json.loads((run / "verdict.json").read_text())
    assert v["comparability"]["dlio_accepted"] is True

    class Run:
        verdict, path = v, run
    text = json.dumps([getattr(b, "text", "") for b in verdict_section(Run())])
    assert "core-config-v1 " + v["comparability"]["hash"] in text and "not a submission" in text


def test_the_harness_writes_provenance_json(tmp_path, monkeypatch):
    """prepare() (every harness run, kernel side included) writes <run>/provenance.json of the run's config."""
    from harness import plan as hplan
    from harness import run as hrun
    from harness.workload import Workload
    monkeypatch.setattr(hrun, "_dlio_block", lambda venv: {"version": "3.0.2", "revision": F6796ED})
    monkeypatch.setattr(hrun, "versions", lambda py: {"kernel": "0.1.0"})
    wl = Workload("unet3d_b200", "tiny", "unet3d", copy.deepcopy(UNET3D_B200), "x.yaml")
    monkeypatch.setattr(hplan, "merged_config", lambda w: copy.deepcopy(UNET3D_B200))
    hrun.prepare(tmp_path / "r", hplan.build(wl, hplan.Options(), tmp_path))
    p = json.loads((tmp_path / "r" / "provenance.json").read_text())
    assert p["core_config"]["hash"] == "0d3ad0dec188becd" and p["dlio"]["commit"] == F6796ED
    assert "not a submission" in p["notes"]
