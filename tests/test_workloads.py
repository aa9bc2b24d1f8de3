"""The workload matrix (`make workloads`, fidelity/workloads.py), reference configs that extend one another, the
committed matrix against docs/workloads.md's table, and DLIO's dlrm keys that no DLIO release reads.

The matrix tests run on a fake reference-configs folder, a fake DLIO workload folder and a fake `make validate` (a
script writing what the real pipeline leaves: a run directory with manifest.json and verdict.json, named by the
harness's run directory line on stdout, or the harness's refusal on stderr with exit 2): seconds, no launch."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from fidelity import workloads as wm
from harness.dlio import key_table
from harness.workload import WorkloadError, load

REPO = Path(__file__).resolve().parent.parent
BIN = os.environ.get("H5DLIO_BIN", str(REPO / "build" / "h5dlio"))

FAKE_VALIDATE = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    w, runs = sys.argv[1], Path(sys.argv[2])
    if w == "refused":
        print("harness: error: workload refused (tiny) refused by the kernel for 2 ranks: workload:7: key "
              "'dataset.num_subfolders_train': value '2' is not supported (expected 0: sub-folders)", file=sys.stderr)
        sys.exit(2)
    run = runs / f"{w}-tiny-1"
    run.mkdir(parents=True)
    print(f"harness: run directory {run}", flush=True)
    checks = {"steps.dlio.generate": "pass", "steps.kernel.generate": "pass", "dataset.files": "pass",
              "logvfd.multiset.rank0": "pass", "counts.kernel.logvfd.rank0": "pass", "darshan.per_file": "skip"}
    if w == "broken":
        checks["counts.kernel.logvfd.rank0"] = "fail"
    (run / "manifest.json").write_text(json.dumps({"created": "2026-01-01T00:00:00+0000", "ranks": 2,
        "workload": {"name": w, "scale": "tiny"}, "versions": {"git_revision": "abc"}}))
    st = list(checks.values())
    (run / "verdict.json").write_text(json.dumps({"verdict": "fail" if "fail" in st else "pass",
        "failed": [n for n, s in checks.items() if s == "fail"],
        "summary": {k: st.count(k) for k in ("pass", "fail", "skip") if st.count(k)},
        "checks": [{"name": n, "status": s} for n, s in checks.items()]}))
    sys.exit(1 if "fail" in st else 0)
''')


@pytest.fixture
def fake(tmp_path):
    """reference-configs with: alpha (base a), alpha_twin (extends alpha: the same merged workload), broken (fails a
    check), refused, thesis-x; DLIO workloads a, b, r, z (z: no reference config)."""
    ref, dlio = tmp_path / "ref", tmp_path / "dlio"
    ref.mkdir()
    dlio.mkdir()
    for n in ("a", "b", "r", "z"):
        (dlio / f"{n}.yaml").write_text(yaml.safe_dump({"model": n, "dataset": {"num_files_train": 8}}))
    refs = {"alpha": {"base": "a", "overlay": {"dataset": {"format": "hdf5"}}, "scales": {"tiny": {}}},
            "alpha_twin": {"extends": "alpha"},
            "broken": {"base": "b", "scales": {"tiny": {}}},
            "refused": {"base": "r", "scales": {"tiny": {}}},
            "thesis-x": {"base": "a", "scales": {"tiny": {}}}}
    for n, d in refs.items():
        (ref / f"{n}.yaml").write_text(yaml.safe_dump(d))
    script = tmp_path / "fake_validate.py"
    script.write_text(FAKE_VALIDATE)
    cmd = f"{sys.executable} {script} {{workload}} {{runs_dir}}"
    return tmp_path, ["--ref-dir", str(ref), "--dlio-workloads", str(dlio), "--command", cmd,
                      "--runs-dir", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]


def test_matrix_rows_per_workload(fake, capsys):
    tmp, args = fake
    assert wm.main(args) == 1  # `broken` fails a check
    m = json.loads((tmp / "out" / "workloads.json").read_text())
    rows = {r["workload"]: r for r in m["rows"]}
    assert list(rows) == ["alpha", "alpha_twin", "broken", "refused"]  # not thesis-x
    assert rows["alpha"]["status"] == "pass" and rows["alpha"]["summary"] == {"pass": 5, "skip": 1}
    assert rows["alpha_twin"]["status"] == "same" and rows["alpha_twin"]["same_as"] == "alpha"
    assert rows["broken"]["status"] == "fail" and rows["broken"]["failed"] == ["counts.kernel.logvfd.rank0"]
    assert rows["refused"]["status"] == "refused" and "sub-folders" in rows["refused"]["reason"]
    assert m["without_reference"] == ["z"] and m["thesis"] == ["thesis-x"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", m["date"])
    # one fake validate per distinct workload: the twin is not run again
    assert "alpha_twin: the same merged workload as alpha: not run again" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp / "runs").iterdir() if p.is_dir()) == ["alpha-tiny-1", "broken-tiny-1"]
    md = (tmp / "out" / "workloads.md").read_text()
    # families by status, counted by hand from the fake's checks
    line = next(ln for ln in md.splitlines() if ln.startswith("| `alpha` "))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:4] == ["`alpha`", "`a`", "unknown", "PASS (5 pass, 1 skip)"]  # a fake DLIO: no version
    # a profile's columns are those its rows hold (fidelity.matrix.families): no row holds a DFTracer check, so no
    # dftracer column; validate's own (steps, dataset, runtime) always
    assert "| verdict | steps | dataset | logvfd | counts | darshan | runtime | date | run |" in md
    assert cells[4:10] == ["2 pass", "1 pass", "1 pass", "1 pass", "1 skip", "-"]  # steps .. runtime
    assert "| `refused` | `r` | unknown | refused: `key 'dataset.num_subfolders_train'" in md
    assert "= `alpha` (same merged workload): PASS (5 pass, 1 skip)" in md
    assert "- `broken`: counts.kernel.logvfd.rank0" in md


def test_rows_against_another_dlio_say_so_and_keep_the_main_dlio(fake, monkeypatch):
    """make workloads WORKLOADS=<w> DLIO=<3.x>: those rows name the DLIO they ran against; the other rows, the
    matrix's DLIO and the main DLIO's bundled workloads without a reference config stay the previous matrix's."""
    tmp, args = fake
    wm.main(args)
    first = json.loads((tmp / "out" / "workloads.json").read_text())
    first["dlio"] = "2.0.0"  # as a real `make workloads` against DLIO 2.0.0 wrote it before rows named their DLIO
    for r in first["rows"]:
        del r["dlio"]
    (tmp / "out" / "workloads.json").write_text(json.dumps(first))
    other = tmp / "dlio3" / "configs" / "workload"
    other.mkdir(parents=True)
    for n in ("b", "y"):  # another DLIO's bundled workloads: y has no reference config, and is not listed
        (other / f"{n}.yaml").write_text(yaml.safe_dump({"model": n, "dataset": {"num_files_train": 8}}))
    monkeypatch.setattr(wm.subprocess, "run", _version_run(wm.subprocess.run, "3.0.2"))
    at = args.index("--dlio-workloads")
    assert wm.main([*args[:at], *args[at + 2:], "--dlio-venv", str(_fake_venv(tmp)), "--workloads", "broken"]) == 1
    m = json.loads((tmp / "out" / "workloads.json").read_text())
    rows = {r["workload"]: r for r in m["rows"]}
    assert rows["broken"]["dlio"] == "3.0.2" and rows["alpha"]["dlio"] == "2.0.0", rows
    assert m["dlio"] == "2.0.0" and m["without_reference"] == ["z"], m
    md = (tmp / "out" / "workloads.md").read_text()
    assert "DLIO 2.0.0; the rows whose DLIO column says so against DLIO 3.0.2" in md
    assert "| `broken` | `b` | 3.0.2 | FAIL" in md and "| `alpha` | `a` | 2.0.0 | PASS" in md


def _fake_venv(tmp: Path) -> Path:
    """A venv whose python is this one (dlio_config_dir is asked of it: answered by the monkeypatched run)."""
    venv = tmp / "venv3"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    return venv


def _version_run(real, version: str):
    """subprocess.run, but the venv's DLIO version and its package folder (tmp/dlio3) are answered."""
    def run(argv, *a, **kw):
        if argv and str(argv[0]).endswith("venv3/bin/python"):
            code = argv[-1]
            out = version if "dlio-benchmark" in code else str(Path(argv[0]).parents[2] / "dlio3")
            return subprocess.CompletedProcess(argv, 0, out + "\n", "")
        return real(argv, *a, **kw)
    return run


def test_matrix_subset_keeps_other_rows_and_refuses_unknown(fake, capsys):
    tmp, args = fake
    wm.main(args)
    before = json.loads((tmp / "out" / "workloads.json").read_text())
    assert wm.main([*args, "--workloads", "refused"]) == 0  # a refusal is a result
    after = json.loads((tmp / "out" / "workloads.json").read_text())
    assert [r["workload"] for r in after["rows"]] == [r["workload"] for r in before["rows"]]
    assert next(r for r in after["rows"] if r["workload"] == "alpha") == \
        next(r for r in before["rows"] if r["workload"] == "alpha")
    capsys.readouterr()
    for bad in ("nosuch", "thesis-x", "alpha,nosuch"):
        assert wm.main([*args, "--workloads", bad]) == 2
        err = capsys.readouterr().err
        assert f"WORKLOADS={bad}" in err and "known: alpha, alpha_twin, broken, refused" in err
    assert json.loads((tmp / "out" / "workloads.json").read_text()) == after  # nothing written


def test_extends(tmp_path):
    ref, dlio = tmp_path / "ref", tmp_path / "dlio"
    ref.mkdir()
    dlio.mkdir()
    for n, batch in (("w_h", 7), ("w_v", 4)):
        (dlio / f"{n}.yaml").write_text(yaml.safe_dump({"reader": {"batch_size": batch, "read_threads": 4}}))
    (ref / "w.yaml").write_text(yaml.safe_dump({"base": "w_h", "overlay": {"dataset": {"format": "hdf5"}},
                                                "scales": {"tiny": {"train": {"epochs": 2}}, "full": {}}}))
    (ref / "w_v.yaml").write_text(yaml.safe_dump({"extends": "w", "base": "w_v",
                                                  "scales": {"tiny": {"reader": {"read_threads": 1}}}}))
    wl = load("w_v", "tiny", dlio, ref)
    assert wl.base == "w_v"
    assert wl.config == {"reader": {"batch_size": 4, "read_threads": 1}, "dataset": {"format": "hdf5"},
                         "train": {"epochs": 2}}
    (ref / "loop.yaml").write_text(yaml.safe_dump({"extends": "loop"}))
    (ref / "orphan.yaml").write_text(yaml.safe_dump({"extends": "nosuch"}))
    with pytest.raises(WorkloadError, match="loop -> loop is a cycle"):
        load("loop", None, dlio, ref)
    with pytest.raises(WorkloadError, match="extends: 'nosuch' is not a reference config"):
        load("orphan", None, dlio, ref)


def test_docs_workload_table_matches_the_committed_matrix():
    """docs/workloads.md describes every workload of the matrix `make workloads` writes (fidelity/workloads.json), on
    the DLIO base the matrix ran, and no other; the verdicts themselves live only in fidelity/workloads.md, which the
    page names with the command that writes it."""
    m = json.loads((REPO / "fidelity" / "workloads.json").read_text())
    text = (REPO / "docs" / "workloads.md").read_text()
    table = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and not cells[0].startswith("`thesis-"):
            table[cells[0].strip("`")] = cells
    assert sorted(table) == sorted(r["workload"] for r in m["rows"]), "docs/workloads.md != fidelity/workloads.json"
    for r in m["rows"]:
        assert table[r["workload"]][1] == f"`{r['base']}`", (r["workload"], table[r["workload"]][1], r["base"])
    assert "`make workloads`" in text and "`fidelity/workloads.md`" in text
    assert not re.search(r"\b(PASS|FAIL) \(\d+ pass", text), "verdicts belong to fidelity/workloads.md, not the page"


def _dlio_workloads() -> Path:
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    hits = sorted(Path(venv).glob("lib/python3*/site-packages/dlio_benchmark/configs/workload")) if venv else []
    if not hits:
        pytest.skip("no reference DLIO venv (H5DLIO_DLIO_VENV): DLIO's bundled workloads are not here")
    return hits[0]


# reference configs over another DLIO's workload (make validate DLIO=<that DLIO>): name -> its base there
# MLPerf Storage v2.0's branch (392621b) configs/workload/, and MLCommons DLIO 3.x's (f6796ed) for the llama3 v3.0
# shapes (llama3_8b_v3, llama3_70b, llama3_405b, llama3_1t)
OTHER_DLIO = {"llama3_8b": "llama_8b_zero3", "llama3_8b_v3": "llama_8b_zero3", "llama3_70b": "llama_70b_zero3",
              "llama3_405b": "llama_405b", "llama3_1t": "llama_1t"}
# reference configs of MLCommons DLIO 3.x's npz and jpeg training (make validate DLIO=<3.x checkout>): refused by 2.0.0
DLIO3_ONLY = {"unet3d_b200", "retinanet_b200"}


@pytest.mark.dlio
def test_every_dlio_workload_config_is_accepted_or_refused_with_its_reason(tmp_path):
    """Each DLIO workload of reference-configs/ at tiny scale, merged on the installed DLIO's file, through the
    kernel's validator for 2 ranks: accepted (default with its sub-folders)."""
    dlio = _dlio_workloads()
    names, _ = wm.reference_workloads(REPO / "reference-configs")
    assert {"unet3d_a100", "unet3d_v100", "unet3d_h100", "dlrm", "default"} <= set(names)
    for n in names:
        if n in OTHER_DLIO and not (dlio / f"{OTHER_DLIO[n]}.yaml").exists():
            with pytest.raises(WorkloadError, match=f"base '{OTHER_DLIO[n]}' is not a workload of the installed DLIO"):
                load(n, "tiny", dlio)
            continue
        wl = load(n, "tiny", dlio)
        f = tmp_path / f"{n}.yaml"
        f.write_text(yaml.safe_dump(wl.config))
        p = subprocess.run([BIN, "--config", str(f), "--set", "generate-data=true", "--dry-run", "--ranks", "2"],
                           capture_output=True, text=True, timeout=60)
        if n in DLIO3_ONLY:  # the kernel replays npz and jpeg for DLIO 3.x only
            want = f"key 'dataset.format' (format): {wl.config['dataset']['format']} is replayed for DLIO 3.x only"
            assert p.returncode == 2 and want in p.stderr, (n, p.stderr)
            if n == "retinanet_b200":  # 2.0.0's resnet50_h100 names it record_length (114660.07), which the
                also = "; also: "      # overlay's 3.x record_length_bytes keeps: named after the format
                assert p.stderr.index(want) < p.stderr.index(also) < p.stderr.index("key 'record-length': "
                                                                                    "'114660.07' is not an integer")
        elif n == "default":  # DLIO's 2 + 2 sub-folders, kept
            assert wl.config["dataset"]["num_subfolders_train"] == 2, wl.config["dataset"]
            assert p.returncode == 0, (n, p.stderr)
        elif wl.config.get("framework", "pytorch") == "pytorch":
            assert p.returncode == 0, (n, p.stderr)
    # the variants keep DLIO's own batch and compute time (configs/workload/unet3d_*.yaml)
    for n in ("unet3d_a100", "unet3d_v100"):
        base = yaml.safe_load((dlio / f"{n}.yaml").read_text())
        cfg = load(n, "tiny", dlio).config
        assert cfg["reader"]["batch_size"] == base["reader"]["batch_size"]
        assert cfg["train"]["computation_time"] == base["train"]["computation_time"]


def test_dlrm_keys_no_dlio_reads_are_ignored_with_a_warning(tmp_path):
    """DLIO's dlrm.yaml keys that no DLIO release's LoadConfig reads (do_eval, eval_num_samples_per_file,
    total_eval_steps, steps_between_evals): a warning each, and evaluation stays off (workflow.evaluation absent)."""
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump({"framework": "pytorch", "workflow": {"train": True, "do_eval": True},
                                 "dataset": {"format": "hdf5", "num_files_train": 2, "num_files_eval": 2,
                                             "eval_num_samples_per_file": 9},
                                 "train": {"total_eval_steps": 3}, "evaluation": {"steps_between_evals": 5}}))
    p = subprocess.run([BIN, "--config", str(f), "--dry-run", "--ranks", "2"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    for k in ("workflow.do_eval", "dataset.eval_num_samples_per_file", "train.total_eval_steps",
              "evaluation.steps_between_evals"):
        assert re.search(rf"warning: .*key '{re.escape(k)}' is ignored: no DLIO release reads it", p.stderr), k
    assert json.loads(p.stdout)["evaluation"] is False
    p = subprocess.run([BIN, "--config", str(f), "--set", "workflow.do_eval=false", "--dry-run", "--ranks", "2"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "--set: key 'workflow.do_eval' is ignored" in p.stderr, p.stderr


def test_bench_rows_per_workload():
    """make bench's DLIO rows: unet3d's names unchanged, another workload's prefixed with its reference config (which
    must exist); samples per rank from DLIO's rank slice, cut by the step cap (main.py:287 at 2.0.0), by hand."""
    from bench.perf import dlio
    from bench.perf.__main__ import PRESETS
    vs = PRESETS["small"]["dlio"]["variants"]
    names = [dlio._name(v) for v in vs]
    assert "small-pytorch-rt4" in names and "dlrm-small-pytorch-rt1" in names and len(set(names)) == len(names)
    for v in vs:
        assert (REPO / "reference-configs" / f"{v.get('workload', 'unet3d')}.yaml").exists(), v
    # dlrm small: 1 file x 1024 samples over 2 ranks = 512, cap 8 steps x batch 32 = 256
    cfg = {"dataset": {"num_files_train": 1, "num_samples_per_file": 1024}, "reader": {"batch_size": 32},
           "train": {"total_training_steps": 8}}
    assert dlio.samples_per_rank(cfg, 2) == 256
    cfg["train"]["total_training_steps"] = 100  # a cap past the epoch cuts nothing
    assert dlio.samples_per_rank(cfg, 2) == 512
    assert dlio.samples_per_rank({"dataset": {"num_files_train": 168}}, 2) == 84


def test_a_workload_of_another_dlio_is_refused_naming_the_keys_it_ignores(tmp_path):
    """llama3_8b's keys (num_checkpoints_*, model.transformer.*: 392621b utils/config.py:882-885, :935-945) are read by
    no key of DLIO 2.0.0 (entry 2.0.0): refused before its base is even looked up, the keys named, exit 2 in the
    harness; with entry 2.0.0-52's key names the same overlay loads (its base from a stand-in DLIO folder)."""
    with pytest.raises(WorkloadError) as e:
        load("llama3_8b", "tiny", tmp_path, keys=key_table("2.0.0"))
    for k in ("checkpoint.num_checkpoints_write", "checkpoint.num_checkpoints_read", "model.transformer.hidden_size"):
        assert k in str(e.value)
    (tmp_path / "llama_8b_zero3.yaml").write_text(yaml.safe_dump({"model": {"num_layers": 32}}))
    wl = load("llama3_8b", "tiny", tmp_path, keys=key_table("2.0.0-52"))
    assert wl.config["model"]["num_layers"] == 32 and wl.config["checkpoint"]["num_checkpoints_write"] == 2
