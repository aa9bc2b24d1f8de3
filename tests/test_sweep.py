"""`python -m harness sweep`: the paper directory's paper.json and the kernel-only strong-scaling sweep (the launches
`make paper` makes besides its harness runs), and the paper report rendered from what the sweep wrote."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.__main__ import main as harness_main
from harness.run import KERNEL_BIN

REPO = Path(__file__).resolve().parent.parent
VENV = os.environ.get("H5DLIO_DLIO_VENV", "")


def sweep(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "sweep", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def test_init_writes_paper_json_once(tmp_path, capsys):
    d = tmp_path / "paper"
    assert harness_main(["sweep", "init", str(d), "--scale", "small", "--ranks", "3", "--repeat", "1",
                         "--scaling-ranks", "1,4"]) == 0
    meta = json.loads((d / "paper.json").read_text())
    assert {k: meta[k] for k in ("kind", "scale", "ranks", "repeat", "scaling_ranks")} == {
        "kind": "h5dlio-paper", "scale": "small", "ranks": 3, "repeat": 1, "scaling_ranks": [1, 4]}
    assert len(meta["git_revision"]) == 40
    before = (d / "paper.json").read_text()
    assert harness_main(["sweep", "init", str(d), "--scale", "tiny"]) == 0     # continued as it is
    assert "continuing that paper directory" in capsys.readouterr().out
    assert (d / "paper.json").read_text() == before
    # a later invocation runs the harness runs afresh: the earlier ones leave runs/, so its report shows only its own
    (d / "runs" / "thesis-b-tiny-1").mkdir(parents=True)
    (d / "scaling").mkdir()
    assert harness_main(["sweep", "init", str(d)]) == 0
    moved = [p.name for p in d.glob("runs-before-*")]
    assert len(moved) == 1 and f"earlier harness runs moved to {moved[0]}/" in capsys.readouterr().out
    assert (d / moved[0] / "thesis-b-tiny-1").is_dir() and not (d / "runs").exists() and (d / "scaling").is_dir()
    assert (d / "paper.json").read_text() == before


@pytest.mark.parametrize("args,words", [
    (["--scaling-ranks", "1,two"], ["--scaling-ranks", "'1,two'"]),
    (["--scaling-ranks", "0,2"], ["--scaling-ranks", ">= 1"]),
    (["--repeat", "0"], ["--repeat", ">= 1"]),
])
def test_init_bad_options_exit_2(tmp_path, capsys, args, words):
    assert harness_main(["sweep", "init", str(tmp_path / "p"), *args]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert not (tmp_path / "p" / "paper.json").exists()


def test_scaling_without_paper_json_exits_2(tmp_path, capsys):
    assert harness_main(["sweep", "scaling", str(tmp_path), "--dlio-venv", str(tmp_path)]) == 2
    assert "no paper.json" in capsys.readouterr().err


@pytest.fixture
def paper_dir(tmp_path):
    if not VENV or not Path(VENV, "bin", "python").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}): its bundled configs are the workloads' base")
    if not KERNEL_BIN.exists():
        pytest.skip(f"kernel not built: {KERNEL_BIN} (make build)")
    d = tmp_path / "paper"
    with contextlib.redirect_stdout(io.StringIO()):
        assert harness_main(["sweep", "init", str(d), "--repeat", "1", "--scaling-ranks", "1,2"]) == 0
    return d


@pytest.mark.dlio
def test_refused_workloads_exit_2_before_any_launch(tmp_path, paper_dir):
    r = sweep("scaling", str(paper_dir), "--dlio-venv", VENV, "--configs", "thesis-d,no-such-config")
    assert r.returncode == 2 and "--configs no-such-config" in r.stderr and "known:" in r.stderr, r.stderr
    # 4 training samples, batch 4: one full batch for 1 rank, none for 2 (the kernel's validator refuses that), so not
    # even the 1-rank launch runs
    ref = {"base": "default", "overlay": {"dataset": {"format": "hdf5", "num_files_train": 4, "num_files_eval": 2,
                                                      "num_samples_per_file": 1, "record_length": 4096,
                                                      "num_subfolders_train": 0, "num_subfolders_eval": 0},
                                         "reader": {"batch_size": 4, "batch_size_eval": 1}},
           "scales": {"tiny": {}}}
    (tmp_path / "few.yaml").write_text(yaml.safe_dump(ref))
    r = sweep("scaling", str(paper_dir), "--dlio-venv", VENV, "--configs", str(tmp_path / "few.yaml"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "refused by the kernel for 2 ranks" in r.stderr and "'batch-size': 4" in r.stderr, r.stderr
    assert not (paper_dir / "scaling").exists()


@pytest.mark.dlio
def test_scaling_sweep_layout_resume_and_report(paper_dir):
    from reports.__main__ import main as reports_main
    from reports.rundir import rank_rates
    r = sweep("scaling", str(paper_dir), "--dlio-venv", VENV, "--configs", "thesis-d")
    assert r.returncode == 0, r.stdout + r.stderr
    sd = paper_dir / "scaling"
    sw = json.loads((sd / "sweep.json").read_text())
    assert (sw["configs"], sw["ranks"], sw["repeat"], sw["scale"], sw["failed_launches"]) == (
        ["thesis-d"], [1, 2], 1, "tiny", 0)
    launches = json.loads((sd / "thesis-d" / "launches.json").read_text())
    assert sorted(launches) == ["generate", "np1/rep1", "np2/rep1"]
    assert all(x["status"] == "ok" for x in launches.values())
    assert launches["np2/rep1"]["argv"][:3] == ["mpirun", "-np", "2"]
    assert "output-ranks-data=true" in launches["np2/rep1"]["argv"]
    assert not list(sd.glob("data-*")), "the generated dataset is deleted after the sweep"
    cfg = yaml.safe_load((sd / "thesis-d" / "workload.yaml").read_text())
    assert cfg["dataset"]["num_files_train"] == 32 and cfg["reader"]["batch_size"] == 7   # thesis-d at tiny scale
    rates = {n: rank_rates(sd / "thesis-d" / f"np{n}" / "rep1" / "out" / "output.json") for n in (1, 2)}
    assert {n: (x["train"]["ranks"], x["train"]["bytes"]) for n, x in rates.items()} == {
        n: (n, 126 * 262144) for n in (1, 2)}    # floor(128 / 7 / n) steps x 7 samples x n ranks, 512 x 512 bytes

    again = sweep("scaling", str(paper_dir), "--dlio-venv", VENV, "--configs", "thesis-d")
    assert again.returncode == 0, again.stdout + again.stderr
    later = json.loads((sd / "thesis-d" / "launches.json").read_text())
    assert {k: v["started"] for k, v in later.items() if k != "generate"} == \
        {k: v["started"] for k, v in launches.items() if k != "generate"}, "finished launches are not repeated"

    with contextlib.redirect_stdout(io.StringIO()):
        assert reports_main([str(paper_dir)]) == 0
    md = (paper_dir / "report" / "report.md").read_text()
    assert "### D: independent" in md
    row = next(x for x in md.splitlines() if x.startswith("| 2 | 1 |"))
    assert row.split(" | ")[2] == f"{rates[2]['train']['raw_per_rank']:.1f}"
