"""The kernel entry is chosen by what the installed DLIO does (harness/probe.py), not by its version number (issue 13,
part 1). CI installs only DLIO 2.0.0: the probe runs on it for real; the other lineages are probe outputs written
from DLIO's sources (each value with its file:line, paths in the dlio_benchmark package of that revision), fed to the
harness' selection. Also: a DLIO no entry matches is refused with exit 2 before any launch, the rules named."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import dlio as hdlio
from tests.kernel import BIN
from validate import checks

REPO = Path(__file__).resolve().parent.parent
KERNEL = Path(BIN)


def dlio_venv() -> Path:
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    stamp = REPO / "build" / ".dlio-venv"
    if not venv and stamp.exists():
        venv = stamp.read_text().strip()
    if not venv or not (Path(venv) / "bin" / "python").exists():
        pytest.skip("no reference DLIO venv (make dlio-venv): the probe runs DLIO's own code")
    return Path(venv)


V200_KEYS = {"dataset.record_length": True, "dataset.record_length_stdev": True, "dataset.record_length_resize": True,
             "dataset.record_length_bytes": False, "dataset.record_length_bytes_stdev": False,
             "dataset.record_length_bytes_resize": False, "dataset.enable_chunking": True, "dataset.chunk_size": True,
             "dataset.hdf5.chunk_dims": False, "dataset.hdf5.num_dset_per_record": False,
             "dataset.record_dims": False}
V201_KEYS = {**{k: not v for k, v in V200_KEYS.items()}, "dataset.enable_chunking": False, "dataset.chunk_size": False}
# The model's keys: 2.0.0 reads them under checkpoint.* (utils/config.py:528-539 at 2.0.0); 392621b
# (utils/config.py:864-943), v2.0.1 (:955-1033) and main under model.*, with the checkpoint-only workflow's keys;
# checkpoint.fsync is read into checkpoint_sync there (392621b :879, v2.0.1 :969), which is what the probe sees
OLD_MODEL = ["model_size", "optimization_groups", "num_layers", "layer_parameters", "tensor_parallelism",
             "pipeline_parallelism"]
NEW_MODEL = ["model.model_size_bytes", "model.optimization_groups", "model.num_layers", "model.layer_parameters",
             "model.parallelism.tensor", "model.parallelism.pipeline", "model.type", "model.model_datatype",
             "model.optimizer_datatype", "model.parallelism.data", "model.parallelism.zero_stage",
             "model.transformer.vocab_size", "model.transformer.hidden_size", "model.transformer.ffn_hidden_size",
             "model.transformer.num_attention_heads", "model.transformer.num_kv_heads", "checkpoint.mode",
             "checkpoint.num_checkpoints_write", "checkpoint.num_checkpoints_read",
             "checkpoint.time_between_checkpoints", "checkpoint.rank_sync", "checkpoint.randomize_tensor",
             "checkpoint.fsync"]
V200_KEYS.update({**{f"checkpoint.{k}": True for k in OLD_MODEL}, **{k: False for k in NEW_MODEL}})
V201_KEYS.update({**{f"checkpoint.{k}": False for k in OLD_MODEL}, **{k: True for k in NEW_MODEL}})

# Rules every 2.x lineage shares (paths in that revision's dlio_benchmark): reader/hdf5_reader.py opens each sample
# with h5py.File (2.0.0 :47, v2.0.1 :47-48); main.py initialize lists every file on every rank and
# utils/config.py get_global_map_index slices the global sample index; reconfigure shuffles file lists only for the
# ITERATIVE sampler (2.0.0 utils/config.py:369-376, v2.0.1 :531-533, e1919d7 :635-637, 392621b :460-462), the PyTorch
# path is INDEX; no pre-warm read in main.py run; hdf5_generator.py np.random.seed(10) on every rank (2.0.0 :46,
# v2.0.1 and e1919d7 :58, 392621b :47); checkpoints by torch.save (checkpointing/pytorch_checkpointing.py save_state:
# no _get_streaming before 3.x)
V2X = {"sample_read": "h5py", "file_sharding": "index_slice", "file_reshuffle": False, "prewarm": False,
       "gen_seed_per_rank": False, "checkpoint_stream": "torch_save"}
# What each lineage does, read from its source (not from the kernel's entries).
LINEAGES = {
    # PyPI dlio-benchmark 2.0.0 (git ec22aec): data_generator/hdf5_generator.py:56 h5py.File(path, 'w') (superblock
    # 0, v1 object headers: times tracked), :69 one 'records' dataset; :58-62 chunks from enable_chunking/chunk_size;
    # data_loader/torch_data_loader.py:104-108 np.random.shuffle of the slice; main.py:287 the cap checked after the
    # step; no trimming in main.py initialize; utils/config.py:407-412 dataset.record_length*;
    # data_generator/data_generator.py:98 files '<prefix>_<i>_of_<N>.<format>'; utils/config.py:352-366
    # get_global_map_index walks r*ceil(T/R)..(r+1)*ceil(T/R) unclamped (IndexError past T); utils/config.py:120
    # multiprocessing_context "fork"
    "2.0.0": {"rules": {"libver_low": "earliest", "track_times": True, "indexed_records": False,
                        "sampler_shuffles": True, "cap_checked_on_fetch": False, "trim_files_to_steps": False,
                        "slice_clamped": False, "file_ext": "hdf5", **V2X, "reader_context": "fork"},
              "keys": V200_KEYS},
    # v2.0.1 (b56c741): data_generator/hdf5_generator.py:44 libver='latest', :46 records_<k> with data= (h5py: no
    # times in v2 headers), :68-69 chunks only from hdf5.chunk_dims; torch_data_loader.py:84-103 dlio_sampler takes
    # no shuffle argument; main.py:328 cap checked when the batch arrives; utils/config.py:792-797
    # record_length_bytes*, :831-839 record_dims, hdf5.chunk_dims, hdf5.num_dset_per_record; :510-511 the index map
    # clamps the slice at T
    "2.0.1": {"rules": {"libver_low": "latest", "track_times": False, "indexed_records": True,
                        "sampler_shuffles": False, "cap_checked_on_fetch": True, "trim_files_to_steps": False,
                        "slice_clamped": True, "file_ext": "hdf5", **V2X}, "keys": V201_KEYS},
    # main e1919d7 (v2.0.1-17): as v2.0.1 (hdf5_generator.py:44-48, :68-69; torch_data_loader.py:84-103;
    # main.py:356; utils/config.py:903-949), plus main.py:230-237 training files trimmed to a multiple of
    # samples-per-file x batch x ranks; utils/config.py:611-612 the index map clamps at T
    "main": {"rules": {"libver_low": "latest", "track_times": False, "indexed_records": True,
                       "sampler_shuffles": False, "cap_checked_on_fetch": True, "trim_files_to_steps": True,
                       "slice_clamped": True, "file_ext": "hdf5", **V2X}, "keys": V201_KEYS},
    # mlperf_storage_v2.0 (392621b, v2.0.0-52): data_generator/hdf5_generator.py:68 h5py.File(path, 'w') (superblock
    # 0, times tracked), :69 one 'records' dataset, :51-55 chunks from enable_chunking/chunk_size;
    # torch_data_loader.py:88-107 dlio_sampler(rank, size, num_samples, epochs): no shuffle, slice clamped;
    # main.py:347-348 cap checked after the step; no trimming (main.py:215-226); utils/config.py:721-726 only
    # dataset.record_length_bytes*, no record_dims / hdf5.* keys; utils/config.py:439-440 the index map clamps at T
    "392621b": {"rules": {"libver_low": "earliest", "track_times": True, "indexed_records": False,
                          "sampler_shuffles": False, "cap_checked_on_fetch": False, "trim_files_to_steps": False,
                          "slice_clamped": True, "file_ext": "hdf5", **V2X},
                "keys": {**V201_KEYS, "dataset.enable_chunking": True, "dataset.chunk_size": True,
                         "dataset.hdf5.chunk_dims": False, "dataset.hdf5.num_dset_per_record": False,
                         "dataset.record_dims": False}},
    # MLCommons DLIO_local_changes main f6796ed (pyproject 3.0.2): data_generator/hdf5_generator.py:46
    # libver='latest', records_<k> with data=; torch_data_loader.py:534-584 dlio_sampler(rank, size, num_samples,
    # epochs), no shuffle; utils/config.py:1017-1040 the index map floors (clamped); main.py:619 the step cap checked
    # when the batch arrives; utils/config.py:1556-1561 record_length_bytes*; reader/hdf5_reader.py:61-63 read_index
    # -> reader/_local_fs_iterable_mixin.py:348-359, :150-153 open(path, 'rb') and len(fh.read()): the whole file per
    # sample, no h5py; main.py:260, :274-278, :484 rank 0 lists, rank r keeps files r, r+R, ... trimmed to floor(N/R);
    # utils/config.py:1135-1138 reconfigure reshards every epoch (:1067-1110: numpy seed+epoch, alltoall, then
    # seed+epoch+31*rank); main.py:710, :813 a pre-warm batch before epoch 1 and after each epoch;
    # data_generator/hdf5_generator.py:70 np.random.seed(10 + rank); checkpointing/pytorch_checkpointing.py:114-119
    # SimpleStreamingCheckpointing when mlpstorage_py does not import (a DLIO venv alone); utils/config.py:217
    # multiprocessing_context "spawn"
    "f6796ed": {"rules": {"libver_low": "latest", "track_times": False, "indexed_records": True,
                          "sampler_shuffles": False, "cap_checked_on_fetch": True, "trim_files_to_steps": False,
                          "slice_clamped": True, "file_ext": "hdf5", "sample_read": "whole_file",
                          "file_sharding": "round_robin", "file_reshuffle": True, "prewarm": True,
                          "gen_seed_per_rank": True, "checkpoint_stream": "simple_streaming",
                          "reader_context": "spawn"}, "keys": V201_KEYS},
}


def found(lineage: dict) -> dict:
    """A probe output as harness.dlio.probe returns it (with "options")."""
    out = {"rules": dict(lineage["rules"]), "keys": dict(lineage["keys"]), "how": {}, "unknown": {}}
    out["options"], unknown = hdlio.probed_keys(out, hdlio.entries(None, KERNEL)["versioned_keys"])
    out["unknown"].update(unknown)
    return out


@pytest.mark.dlio
def test_probe_on_the_reference_dlio(monkeypatch):
    """The real probe on the installed DLIO 2.0.0 observes 2.0.0's behaviour, rule by rule and key by key (run here,
    not read from the session's probe cache)."""
    monkeypatch.delenv(hdlio.PROBE_CACHE, raising=False)
    hdlio._probe.cache_clear()
    got = hdlio.probe(dlio_venv(), KERNEL)
    want = LINEAGES["2.0.0"]
    assert got["unknown"] == {}, got["unknown"]
    assert got["rules"] == want["rules"], got["how"]
    assert got["keys"] == want["keys"]
    assert got["options"]["record-length"] == "dataset.record_length" and got["options"]["record-dims"] is None
    assert sum(got["seconds"].values()) < 120, got["seconds"]
    m = hdlio.match(got, hdlio.kernel_entries(KERNEL))
    assert m["entry"] == "2.0.0" and m["unverified"] == []
    # negative control: the real DLIO 2.0.0 against the 3.x entry alone is refused with the 3.x rules it lacks named
    only3 = [e for e in hdlio.kernel_entries(KERNEL) if e["version"] == "3.0.2"]
    m3 = hdlio.match(got, only3)
    assert m3["entry"] is None
    msg = hdlio.refusal("DLIO 2.0.0", m3)
    for rule in ("sample_read probed h5py (3.0.2: whole_file)", "file_sharding probed index_slice (3.0.2: round_robin)",
                 "file_reshuffle probed false (3.0.2: true)", "prewarm probed false (3.0.2: true)",
                 "gen_seed_per_rank probed false (3.0.2: true)"):
        assert rule in msg, msg


@pytest.mark.dlio
def test_probe_observations_tell_lineages_apart(tmp_path):
    """The probe's file observations on files written as v2.0.1 writes them (hdf5_generator.py:44-48: libver latest,
    records_<k> with data=) and as 2.0.0 does (:56, :69): they must differ, else the probe could not tell."""
    py = dlio_venv() / "bin" / "python"
    code = textwrap.dedent("""
        import sys, json, h5py, numpy as np
        sys.path.insert(0, sys.argv[1])
        import probe
        out = {}
        for name, libver, dset in (("v201", "latest", "records_0"), ("v200", None, "records")):
            p = sys.argv[2] + f"/{name}.hdf5"
            with (h5py.File(p, "w", libver=libver) if libver else h5py.File(p, "w")) as f:
                if libver:
                    f.create_dataset(dset, (2, 8, 8), dtype=np.uint8, data=np.zeros((2, 8, 8), np.uint8))
                else:
                    f.create_dataset(dset, (2, 8, 8), dtype=np.uint8)
            with h5py.File(p, "r") as f:
                out[name] = [probe._superblock_version(p), probe._stores_times(f[dset])]
        print(json.dumps(out))
    """)
    p = subprocess.run([str(py), "-c", code, str(REPO / "harness"), str(tmp_path)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["v200"] == [0, True]
    assert got["v201"][0] >= 2 and got["v201"][1] is False


@pytest.mark.parametrize("lineage,entry", [("2.0.0", "2.0.0"), ("2.0.1", "2.0.1"), ("main", "2.0.1-17"),
                                           ("392621b", "2.0.0-52"), ("f6796ed", "3.0.2")])
def test_selection_by_behaviour(lineage, entry):
    m = hdlio.match(found(LINEAGES[lineage]), hdlio.kernel_entries(KERNEL))
    assert m["entry"] == entry, m["differs"]
    if entry:
        assert m["differs"][entry] == [] and all(m["differs"][v] for v in m["differs"] if v != entry)


def test_mlperf_branch_refused_without_its_entry():
    """Without its entry (the kernel before 2.0.0-52), 392621b, which writes 2.0.0's files (superblock 0, times tracked,
    one records dataset) and checks the cap after the step, but reads 2.0.1's record_length_bytes* and model.* keys,
    matches no entry; the message names those rules against the closest entry (2.0.1, since the model keys), never a
    version number."""
    known = [e for e in hdlio.kernel_entries(KERNEL) if e["version"] != "2.0.0-52"]
    m = hdlio.match(found(LINEAGES["392621b"]), known)
    msg = hdlio.refusal("DLIO=/tmp/dlio-392621b", m)
    assert msg.startswith("DLIO=/tmp/dlio-392621b: no kernel entry matches its behaviour: ")
    assert "libver_low probed earliest (2.0.1: latest)" in msg
    assert "cap_checked_on_fetch probed false (2.0.1: true)" in msg
    assert "sampler_shuffles" not in msg and "record-length" not in msg  # where it behaves as 2.0.1: not named


def test_mlcommons_3x_matches_its_entry_which_the_kernel_replays():
    """MLCommons DLIO 3.x (f6796ed) behaves as the kernel's 3.0.2 entry and as no other (never as 2.0.1, with which it
    shares the HDF5 file rules), and the kernel replays that entry (nothing unsupported)."""
    known = hdlio.kernel_entries(KERNEL)
    m = hdlio.match(found(LINEAGES["f6796ed"]), known)
    assert m["entry"] == "3.0.2", m["differs"]
    assert [d["rule"] for d in m["differs"]["2.0.1"]] == ["sample_read", "file_sharding", "file_reshuffle", "prewarm",
                                                        "gen_seed_per_rank", "checkpoint_stream"]
    entry = next(e for e in known if e["version"] == "3.0.2")
    assert entry["unsupported"] is None
    # a listed entry the kernel cannot replay is refused naming what it cannot do (the message the harness prints)
    msg = hdlio.not_replayed("DLIO=/tmp/dlio-src-f6796ed", {**entry, "unsupported": "prewarm"})
    assert "behaves as kernel entry 3.0.2" in msg and "not replay yet: prewarm" in msg
    # without the 3.x entries (the kernel before them): no entry matches, the same rules named against 2.0.1
    m = hdlio.match(found(LINEAGES["f6796ed"]), [e for e in known if not e["version"].startswith("3.0.2")])
    assert m["entry"] is None
    assert "sample_read probed whole_file (2.0.1: h5py)" in hdlio.refusal("x", m)


def test_negative_control_3x_entry_against_a_2x_dlio():
    """The 3.x entry run against DLIO 2.0.0's behaviour: not chosen, the differing rules named."""
    known = hdlio.kernel_entries(KERNEL)
    m = hdlio.match(found(LINEAGES["2.0.0"]), [e for e in known if e["version"] == "3.0.2"])
    assert m["entry"] is None
    named = [d["rule"] for d in m["differs"]["3.0.2"]]
    assert {"sample_read", "file_sharding", "file_reshuffle", "prewarm", "gen_seed_per_rank",
            "libver_low"} <= set(named)


def test_negative_control_one_rule_flipped():
    """2.0.0's behaviour with one rule changed matches no entry, and exactly that rule is named."""
    lin = json.loads(json.dumps(LINEAGES["2.0.0"]))
    lin["rules"]["cap_checked_on_fetch"] = True
    m = hdlio.match(found(lin), hdlio.kernel_entries(KERNEL))
    assert m["entry"] is None and [d["rule"] for d in m["differs"]["2.0.0"]] == ["cap_checked_on_fetch"]


UNKNOWN = {"rules": {**LINEAGES["2.0.0"]["rules"], "cap_checked_on_fetch": True}, "keys": LINEAGES["2.0.0"]["keys"]}


def test_a_rule_the_probe_does_not_know_is_named():
    """A rule a kernel entry gains before the probe learns to observe it: named as not observed, never guessed."""
    known = [{**e, "new_rule": True} for e in hdlio.kernel_entries(KERNEL)]
    m = hdlio.match(found(LINEAGES["2.0.1"]), known)
    assert m["entry"] == "2.0.1" and m["unverified"] == ["new_rule"]


def test_unobserved_rule_is_named_not_guessed():
    lin = found(LINEAGES["main"])
    lin["rules"]["trim_files_to_steps"] = None
    lin["unknown"]["trim_files_to_steps"] = "a tiny DLIO run failed"
    m = hdlio.match(lin, hdlio.kernel_entries(KERNEL))
    assert m["entry"] is None and m["candidates"] == ["2.0.1", "2.0.1-17"]  # cannot choose: refused
    assert "trim_files_to_steps" in hdlio.refusal("x", m)


def test_keys_translated_by_what_dlio_reads():
    """The probe's key names decide the renaming: 392621b reads record_length_bytes but still enable_chunking, so a
    tiny unet3d overlay stays tiny there."""
    over = {"dataset": {"record_length": 4096, "record_length_stdev": 0, "enable_chunking": True, "chunk_size": 64}}
    opts = found(LINEAGES["392621b"])["options"]
    new, done = hdlio.translate(over, opts, KERNEL)
    assert new["dataset"] == {"record_length_bytes": 4096, "record_length_bytes_stdev": 0, "enable_chunking": True,
                              "chunk_size": 64}
    assert sorted(done) == ["dataset.record_length -> dataset.record_length_bytes",
                            "dataset.record_length_stdev -> dataset.record_length_bytes_stdev"]
    assert hdlio.translate(over, found(LINEAGES["2.0.0"])["options"], KERNEL) == (over, [])


def fake_venv(tmp: Path, lineage: dict) -> Path:
    """A venv whose python answers the probe with a lineage's behaviour (and has a dlio_benchmark to pass the
    harness' first checks)."""
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    py.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps({lineage!r}))\n")
    py.chmod(py.stat().st_mode | stat.S_IEXEC)
    (venv / "bin" / "dlio_benchmark").write_text("#!/bin/sh\nexit 99\n")
    (venv / ".h5dlio-dlio.json").write_text(json.dumps({"version": "2.0.0-52", "revision": "a" * 40,
                                                         "describe": "v2.0.0-52-gaaaaaaa",
                                                         "source": "source:/tmp/dlio-x", "lock": "x"}))
    return venv


@pytest.mark.parametrize("lineage", ["unknown", "2.0.0"])
def test_harness_refuses_unrecognised_dlio_before_launch(tmp_path, lineage):
    """A DLIO that loads one batch past the step cap but otherwise behaves as 2.0.0 (no such release): exit 2."""
    src = UNKNOWN if lineage == "unknown" else LINEAGES[lineage]
    lin = {"rules": src["rules"], "keys": src["keys"], "how": {}, "unknown": {}}
    venv = fake_venv(tmp_path, lin)
    runs = tmp_path / "runs"
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--dlio-venv", str(venv), "--runs-dir", str(runs),
                        "--profiles", "timing"], capture_output=True, text=True, cwd=REPO, timeout=300)
    if lineage == "unknown":
        assert p.returncode == 2, p.stderr
        assert "DLIO=/tmp/dlio-x: no kernel entry matches its behaviour: cap_checked_on_fetch probed true " \
               "(2.0.0: false)" in p.stderr, p.stderr
        assert not runs.exists() or not any(runs.iterdir())  # nothing launched, no run directory
    else:  # negative control: 2.0.0's behaviour passes the probe; the fake venv fails later, for another reason
        assert "no kernel entry matches" not in p.stderr, p.stderr


def _counting_venv(tmp: Path) -> tuple[Path, Path]:
    """fake_venv answering as 2.0.0, its python appending a line to a file each time it runs: (venv, that file)."""
    lin = {"rules": LINEAGES["2.0.0"]["rules"], "keys": LINEAGES["2.0.0"]["keys"], "how": {}, "unknown": {}}
    venv, runs = fake_venv(tmp, lin), tmp / "probe-runs"
    py = venv / "bin" / "python"
    count = f"open({str(runs)!r}, 'a').write('x')\n"
    py.write_text(py.read_text().replace("import json, sys\n", "import json, sys\n" + count))
    return venv, runs


def test_probe_cache_probes_a_venv_once_across_processes(tmp_path, monkeypatch):
    """$H5DLIO_PROBE_CACHE (tests/conftest.py sets it: every harness launch of a session probes the same venv, ~15 s
    each): a second process asking the same venv reads the first one's answer, the probe not run again; the venv
    re-installed (its dlio_benchmark rewritten) or the variable unset, the probe runs again (negative controls: a
    cache that kept answering for a changed venv, or answered without the variable, fails here)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(hdlio.PROBE_CACHE, str(cache))
    venv, runs = _counting_venv(tmp_path)
    code = ("import sys; from pathlib import Path; from harness import dlio; "
            "print(dlio.probe(Path(sys.argv[1]), Path(sys.argv[2]))['rules']['sampler_shuffles'])")

    def probe_in_a_new_process() -> str:
        p = subprocess.run([sys.executable, "-c", code, str(venv), str(KERNEL)], cwd=REPO, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    want = str(LINEAGES["2.0.0"]["rules"]["sampler_shuffles"])
    assert probe_in_a_new_process() == want and runs.read_text() == "x"
    assert probe_in_a_new_process() == want and runs.read_text() == "x"  # the first process's answer
    assert len(list(cache.iterdir())) == 1
    dlio = venv / "bin" / "dlio_benchmark"
    dlio.write_text(dlio.read_text() + "# re-installed\n")
    assert probe_in_a_new_process() == want and runs.read_text() == "xx"
    monkeypatch.delenv(hdlio.PROBE_CACHE)
    assert probe_in_a_new_process() == want and runs.read_text() == "xxx"


def test_probe_cache_that_is_no_folder_is_refused_naming_the_variable(tmp_path):
    venv, runs = _counting_venv(tmp_path)
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--dlio-venv", str(venv), "--runs-dir",
                        str(tmp_path / "runs"), "--profiles", "timing"], capture_output=True, text=True, cwd=REPO,
                       timeout=300, env={**os.environ, hdlio.PROBE_CACHE: str(tmp_path / "none")})
    assert p.returncode == 2 and f"H5DLIO_PROBE_CACHE={tmp_path / 'none'}: not a folder" in p.stderr, p.stderr
    assert not runs.exists()  # refused before the probe ran


def test_dlio_version_check_shows_probed_rules():
    m = found(LINEAGES["2.0.0"])
    known = hdlio.kernel_entries(KERNEL)
    e = next(x for x in known if x["version"] == "2.0.0")
    block = {"version": "2.0.0", "revision": "pypi", "source": "pypi", "entry": "2.0.0", "nearest": False,
             "probed": {"rules": m["rules"], "keys": m["options"], "unknown": {}, "how": {}},
             "entry_rules": {**{r: e[r] for r in hdlio.rules_of(e)}, "keys": e["keys"]}, "unverified": []}
    run_ = checks.Run.__new__(checks.Run)
    run_.manifest = {"dlio": block}
    [c] = checks.check_dlio_version(run_)
    assert c["status"] == "pass" and "behaves as kernel entry 2.0.0" in c["detail"]
    assert "sampler_shuffles true (2.0.0: true)" in c["detail"]
    assert "key record-length dataset.record_length (2.0.0: dataset.record_length)" in c["detail"]
    run_.manifest = {"dlio": {**block, "entry": None, "entry_rules": None, "warning": "no kernel entry matches its "
                              "behaviour: sampler_shuffles probed false (2.0.0: true)"}}
    [c] = checks.check_dlio_version(run_)
    assert c["status"] == "fail" and "sampler_shuffles probed false" in c["detail"]


def _checkout(tmp: Path, requires: str) -> Path:
    """A git checkout shaped as a DLIO source tree whose pyproject.toml asks for `requires` (no tag: as MLCommons'
    DLIO_local_changes)."""
    src = tmp / "dlio"
    (src / "dlio_benchmark").mkdir(parents=True)
    (src / "setup.py").write_text("")
    (src / "pyproject.toml").write_text(f'[project]\nname = "dlio_benchmark"\nversion = "3.0.2"\n'
                                        f'requires-python = "{requires}"\n')
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "x"]):
        subprocess.run(argv, cwd=src, env=env, check=True, capture_output=True)
    return src


def test_deps_dlio_without_a_fitting_python_exits_2(tmp_path):
    """A checkout asking for a Python the machine lacks (MLCommons 3.x: >=3.12,<3.13): a clear error naming the range,
    where it looked and what to set, exit 2, nothing created; H5DLIO_DLIO_PYTHON naming one that does not fit: the
    same, naming it."""
    src = _checkout(tmp_path, ">=3.99,<3.100")
    cache = tmp_path / "cache"
    env = {**os.environ, "DLIO_SPEC": str(src), "H5DLIO_CACHE": str(cache), "PYENV_ROOT": str(tmp_path / "pyenv")}
    env.pop("H5DLIO_DLIO_PYTHON", None)
    p = subprocess.run(["bash", str(REPO / "scripts" / "deps-dlio.sh")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2, p.stderr
    assert "this DLIO needs Python >=3.99,<3.100 (its pyproject.toml requires-python) and none was found" in p.stderr
    assert "H5DLIO_DLIO_PYTHON=" in p.stderr and str(tmp_path / "pyenv") in p.stderr
    assert not cache.exists() or not any(cache.iterdir())
    p = subprocess.run(["bash", str(REPO / "scripts" / "deps-dlio.sh")],
                       env={**env, "H5DLIO_DLIO_PYTHON": sys.executable}, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and f"H5DLIO_DLIO_PYTHON={sys.executable}: Python 3." in p.stderr, p.stderr
    assert "does not fit this DLIO's requires-python >=3.99,<3.100" in p.stderr


class _Run:
    """The part of validate's RunView the Log VFD and counts checks read."""

    def __init__(self, rules: dict):
        self.manifest = {"dlio": {"probed": {"rules": rules}}}
        self.cfg = {"reader": {"read_threads": 0}}
        self.ranks = 1

    def table(self, name, **_):
        return None


def test_logvfd_family_skipped_by_name_when_dlio_reads_raw_bytes():
    """sample_read whole_file (3.x reads whole files with open().read(), no HDF5): the Log VFD and its counts are one
    named skip each with the reason and where equivalence is checked instead; with h5py reads they run as before."""
    from profiles import logvfd
    raw = _Run({**LINEAGES["f6796ed"]["rules"]})
    [c] = logvfd.check_logvfd(raw)
    assert c["name"] == "logvfd" and c["status"] == "skip"
    assert "whole file" in c["detail"] and "no Log VFD record" in c["detail"] and "dftracer.per_file" in c["detail"]
    [c] = logvfd.check_counts(raw)
    assert c["name"] == "counts.logvfd" and c["status"] == "skip" and "sample_read whole_file" in c["detail"]
    h5 = _Run({**LINEAGES["2.0.1"]["rules"]})
    assert [c["name"] for c in logvfd.check_logvfd(h5)] == ["logvfd.logvfd"]  # no tables: the usual skip


def test_logvfd_plans_no_read_threads_0_launch_when_dlio_reads_raw_bytes():
    """That variant orders Log VFD records, which a whole-file reader has none of (and DLIO 3.x with read_threads 0
    exits 1 under mpirun after its last epoch: it skips MPI.Finalize); with h5py reads it is planned as before."""
    from profiles import Shape, logvfd
    cfg = {"reader": {"read_threads": 4}}
    steps = [x.step for x in logvfd.LogVFD().launches(Shape(cfg, 1, {**LINEAGES["f6796ed"]["rules"]}))]
    assert steps == ["logvfd"]
    assert [x.step for x in logvfd.LogVFD().launches(Shape(cfg, 1, {**LINEAGES["2.0.1"]["rules"]}))] == \
        ["logvfd", "logvfd-rt0"]


def test_model_names_the_3x_rules_it_does_not_model():
    """validate/model.py models 3.0.2's rules together (from DLIO's source); a release with only some of them is not
    guessed: it says which by name."""
    from validate import model
    cfg = {"dataset": {"num_files_train": 4}, "reader": {"batch_size": 1}, "train": {"epochs": 1}}
    model.RELEASES["3.x-partial"] = {**model.RELEASES["3.0.2"], "prewarm": False, "seed_per_rank": False}
    try:
        with pytest.raises(model.UnknownRelease, match="3.x-partial's rules whole_file, round_robin, reshard yet"):
            model.workload_reads(cfg, 2, "3.x-partial")
    finally:
        del model.RELEASES["3.x-partial"]
    assert [s["phase"] for s in model.workload_reads(cfg, 2, "3.0.2")[0]] == ["prewarm", "train", "prewarm"]
    assert model.workload_reads(cfg, 2, "2.0.1")[0][0]["opens"] == 2
