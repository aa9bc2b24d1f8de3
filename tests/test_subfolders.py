"""DLIO's sub-folder layout (dataset.num_subfolders_train/eval, issue 16: DLIO's `default` workload).

Expectations are stated from DLIO 2.0.0's source, not from the kernel: data_generator/data_generator.py:91-105 puts
file i of N in <train|valid>/<i mod S zero-padded to len(str(S))>/<prefix>_<i zero-padded to len(str(N))>_of_<N>.hdf5
when S > 1 and rank 0 creates all S sub-folders (:70-75); main.py:176-190 lists <folder>/*/*.hdf5 and sorts by file
name, so the files are read in index order, as in the flat layout; with S = 1 the files are written flat and
main.py's assert (num_subfolders == 0) fails."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from kernel import run, tiny

DLIO_VENV = os.environ.get("H5DLIO_DLIO_VENV", "")


def dlio_paths(kind: str, n: int, s: int, prefix: str = "img") -> list[str]:
    """The relative paths DLIO 2.0.0 gives the n files of a phase with s sub-folders (module docstring)."""
    name = [f"{prefix}_{str(i).rjust(len(str(n)), '0')}_of_{n}.hdf5" for i in range(n)]
    if s > 1:
        return [f"{kind}/{str(i % s).rjust(len(str(s)), '0')}/{name[i]}" for i in range(n)]
    return [f"{kind}/{x}" for x in name]


def tree(root: Path) -> tuple[set[str], set[str]]:
    """The dataset's files (the kernel's completion record at the top left out: no DLIO file) and folders."""
    files = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} - {"h5dlio-generation.json"}
    dirs = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir()}
    return files, dirs


def _sets(data: Path, **kw) -> dict:
    return tiny(data, **{"num-files-train": 7, "num-files-eval": 5, "num-samples-per-file": 2, "record-length": 4096,
                         "num-subfolders-train": 12, "num-subfolders-eval": 2, "generate-data": True, "train": True,
                         "evaluation": True, "epochs": 1, "batch-size": 1, **kw})


def test_files_land_in_dlios_sub_folders_and_every_sub_folder_is_made(tmp_path):
    data = tmp_path / "data"
    r = run(tmp_path, 2, _sets(data))
    assert r.rc == 0, r.proc.stderr
    files, dirs = tree(data)
    assert files == set(dlio_paths("train", 7, 12) + dlio_paths("valid", 5, 2))
    # 12 sub-folders, two digits, also the five no file falls in (7 files)
    assert {d for d in dirs if d.startswith("train/")} == {f"train/{k:02d}" for k in range(12)}
    assert "train/11" in dirs and not any((data / "train" / "11").iterdir())


def test_read_order_is_the_flat_layouts(tmp_path):
    """Sorted by file name = index order: every rank reads the same samples of the same file indices in the same
    order with and without sub-folders (only the paths differ)."""
    flat = run(tmp_path, 2, _sets(tmp_path / "flat", **{"num-subfolders-train": 0, "num-subfolders-eval": 0}),
               name="flat")
    sub = run(tmp_path, 2, _sets(tmp_path / "sub"), name="sub")
    assert flat.rc == 0 and sub.rc == 0, (flat.proc.stderr, sub.proc.stderr)
    for rank in range(2):
        a, b = flat.samples(rank), sub.samples(rank)
        assert a and len(a) == len(b)
        strip = [{k: v for k, v in row.items() if k not in ("file", "path", "seconds", "start", "end")} for row in a]
        assert strip == [{k: v for k, v in row.items() if k not in ("file", "path", "seconds", "start", "end")}
                         for row in b]


def test_one_sub_folder_is_refused_as_dlio_fails_it(tmp_path):
    data = tmp_path / "data"
    r = run(tmp_path, 2, _sets(data, **{"num-subfolders-train": 1}))
    assert r.rc == 2
    assert "num-subfolders-train" in r.proc.stderr and "num_subfolders == 0" in r.proc.stderr
    assert not data.exists(), "a refused run writes nothing"
    # no evaluation files: DLIO never meets its assertion for valid/ (an empty folder is skipped, main.py:179-180)
    r = run(tmp_path, 2, _sets(data, **{"num-subfolders-eval": 1, "num-files-eval": 0, "evaluation": False}),
            name="b")
    assert r.rc == 0, r.proc.stderr


def test_keep_files_false_removes_only_what_the_run_made(tmp_path):
    data = tmp_path / "data"
    (data / "train" / "03").mkdir(parents=True)
    (data / "train" / "03" / "notes.txt").write_text("someone's")
    r = run(tmp_path, 2, _sets(data, **{"keep-files": False, "reuse-data-folder": True}))
    assert r.rc == 0, r.proc.stderr
    files, dirs = tree(data)
    assert files == {"train/03/notes.txt"}
    assert dirs == {"train", "train/03"}, "the run's empty sub-folders (and valid/) go, the one it found stays"


@pytest.mark.parametrize("foreign", ["train/01/notes.txt", "train/x/img_0_of_7.hdf5", "train/012/img_0_of_7.hdf5",
                                     "train/12/img_0_of_7.hdf5"])
def test_foreign_entries_in_sub_folders_are_refused(tmp_path, foreign):
    """Only DLIO-named sub-folders (0..S-1, padded) holding dataset files are this kernel's; anything else refuses
    generation naming it (x: not a number; 012: not padded as DLIO pads 12; 12: past S-1)."""
    data = tmp_path / "data"
    (data / foreign).parent.mkdir(parents=True)
    (data / foreign).write_text("x")
    r = run(tmp_path, 2, _sets(data))
    assert r.rc == 2
    # the first foreign entry named: the file in a sub-folder of ours, else the folder that is not ours
    named = data / foreign if foreign.startswith("train/01/") else (data / foreign).parent
    assert f"first: {named})" in r.proc.stderr and "reuse-data-folder" in r.proc.stderr
    own = tmp_path / "own"  # the kernel's own layout is accepted on a rerun
    assert run(tmp_path, 2, _sets(own), name="a").rc == 0
    assert run(tmp_path, 2, _sets(own, overwrite=True), name="b").rc == 0


@pytest.mark.parametrize("kw,key", [({"naming": "h5bench"}, "naming=dlio"),
                                    ({"num-subfolders-train": -1}, "num-subfolders-train")])
def test_bad_sub_folder_settings_exit_2_naming_the_key(tmp_path, kw, key):
    r = run(tmp_path, 1, _sets(tmp_path / "d", **kw))
    assert r.rc == 2 and key in r.proc.stderr, r.proc.stderr
    assert "num-subfolders" in r.proc.stderr


@pytest.mark.dlio
@pytest.mark.skipif(not DLIO_VENV, reason="needs the reference DLIO venv (H5DLIO_DLIO_VENV; make dlio-venv)")
def test_real_dlio_writes_the_same_tree(tmp_path):
    """DLIO 2.0.0 itself, generation only, 1 rank: the same files and folders as the kernel."""
    data = tmp_path / "dlio"
    cfg = tmp_path / "conf" / "workload"
    cfg.mkdir(parents=True)
    wl = {"model": "sf", "framework": "pytorch",
          "workflow": {"generate_data": True, "train": False, "evaluation": False},
          "dataset": {"data_folder": str(data), "format": "hdf5", "num_files_train": 7, "num_files_eval": 5,
                      "num_samples_per_file": 2, "record_length": 4096, "num_subfolders_train": 12,
                      "num_subfolders_eval": 2,
                      # 2.0.0 draws a 2 GiB buffer per file by default (utils/config.py:99): 30 s a file here
                      "generation_buffer_size": 65536},
          "reader": {"data_loader": "pytorch", "batch_size": 1}}
    (cfg / "sf.yaml").write_text(yaml.safe_dump(wl))
    env = {**os.environ, "DLIO_PROFILER_ENABLE": "0", "DFTRACER_ENABLE": "0"}
    p = subprocess.run([str(Path(DLIO_VENV) / "bin" / "dlio_benchmark"), "workload=sf",
                        f"hydra.run.dir={tmp_path / 'hydra'}", f"++workload.output.folder={tmp_path / 'out'}",
                        f"++workload.checkpoint.checkpoint_folder={tmp_path / 'ckpt'}",
                        "--config-dir", str(tmp_path / "conf")], capture_output=True, text=True, timeout=300,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    mine = tmp_path / "kernel"
    r = run(tmp_path, 1, _sets(mine, train=False, evaluation=False))
    assert r.rc == 0, r.proc.stderr
    assert tree(data) == tree(mine)
    assert tree(data)[0] == set(dlio_paths("train", 7, 12) + dlio_paths("valid", 5, 2))
