"""Reliability, data safety (issue 7): generation refuses folders it does not own, interrupted writes never leave a
file that looks whole, results are replaced whole or not at all. The real kernel under mpirun (2 ranks)."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import time
from pathlib import Path

import pytest
from kernel import run, tiny
from reliability import (
    SLACK,
    Job,
    assert_nothing_left,
    dataset_files,
    error_lines,
    fill,
    gen,
    h5_complete,
    handled_sigterm,
    job_pids,
    kernel_argv,
    mount_tmpfs,
    tree_state,
    umount,
)


def test_generation_refuses_root(tmp_path):
    r = run(tmp_path, 2, gen(Path("/")), timeout=60)
    try:
        assert r.rc == 2, r.proc.stderr
        assert error_lines(r.proc.stderr) == [
            "h5dlio: error: key 'data-folder': refusing to generate into '/' (/): choose a folder of its own"]
    finally:  # a broken check would have written /train and /valid: remove exactly what it would have made
        for sub in ("train", "valid"):
            d = Path("/", sub)
            for f in d.glob("img_*_of_*.hdf5*") if d.is_dir() else []:
                f.unlink()
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()


@pytest.mark.parametrize("which", ["HOME", "HOME via a symlink", "home of a user"])
def test_generation_refuses_home_directories(tmp_path, which):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    folder = home
    if which == "HOME via a symlink":
        (tmp_path / "link").symlink_to(home)
        folder = tmp_path / "link"
    elif which == "home of a user":  # the password database's home of the user running the test
        folder = Path(pwd.getpwuid(os.getuid()).pw_dir)
        if not folder.is_dir() or any((folder / s).exists() for s in ("train", "valid")):
            pytest.skip(f"{folder}: not a directory, or it has train/valid already")
    before = tree_state(home)
    r = run(tmp_path, 2, gen(folder), env=env, timeout=60)
    try:
        assert r.rc == 2, r.proc.stderr
        assert "refusing to generate into" in r.proc.stderr and "home directory" in r.proc.stderr
        assert tree_state(home) == before
    finally:
        for sub in ("train", "valid"):
            if (folder / sub).is_dir() and which == "home of a user":
                shutil.rmtree(folder / sub)


@pytest.mark.parametrize("case", ["file at the top", "file in train/", "folder in train/", "symlink named like data",
                                  "other dataset name"])
def test_generation_refuses_a_folder_holding_foreign_files(tmp_path, case):
    data = tmp_path / "data"
    (data / "train").mkdir(parents=True)
    foreign = {"file at the top": data / "notes.txt", "file in train/": data / "train" / "README",
               "folder in train/": data / "train" / "sub",
               "symlink named like data": data / "train" / "img_0_of_8.hdf5",
               "other dataset name": data / "train" / "other_0_of_8.hdf5"}[case]
    if case == "folder in train/":
        foreign.mkdir()
    elif case == "symlink named like data":
        (tmp_path / "precious").write_text("someone's data")
        foreign.symlink_to(tmp_path / "precious")
    else:
        foreign.write_text("someone's data")
    before = tree_state(data)
    r = run(tmp_path, 2, gen(data), timeout=60)
    assert r.rc == 2, r.proc.stderr
    [line] = error_lines(r.proc.stderr)
    assert str(foreign) in line and "reuse-data-folder=true" in line and "MPI_ABORT" not in r.proc.stderr
    assert tree_state(data) == before, "a refused generation must not touch the data folder"
    if case == "symlink named like data":
        assert (tmp_path / "precious").read_text() == "someone's data"
        return  # with reuse-data-folder the existing name would still be refused (overwrite=false)
    r = run(tmp_path, 2, gen(data, **{"reuse-data-folder": True}), timeout=60)
    assert r.rc == 0, r.proc.stderr
    key = str(foreign.relative_to(data))
    assert tree_state(data)[key] == before[key], "reuse-data-folder: the foreign entry is left as it was"


def test_generation_accepts_new_empty_and_own_folders(tmp_path):
    """The refusal is precise: a new folder, an empty one, and one holding only this kernel's dataset files (another
    count, a partial file of a killed generation) are accepted; reads never need the key."""
    assert run(tmp_path, 2, gen(tmp_path / "new" / "data"), name="a").rc == 0
    (tmp_path / "empty").mkdir()
    assert run(tmp_path, 2, gen(tmp_path / "empty"), name="b").rc == 0
    own = tmp_path / "own"
    assert run(tmp_path, 1, gen(own, **{"num-files-train": 3, "num-files-eval": 0}), name="c").rc == 0
    (own / "train" / "img_0_of_8.hdf5.partial.4242").write_bytes(b"\0" * 100)
    r = run(tmp_path, 2, gen(own), name="d")
    assert r.rc == 0, r.proc.stderr
    (own / "README").write_text("a note next to the dataset")
    r = run(tmp_path, 2, tiny(own, train=True, epochs=1), name="e")
    assert r.rc == 0, r.proc.stderr


@pytest.mark.slow
def test_interrupted_generation_never_leaves_a_file_that_looks_whole(tmp_path):
    """generation-atomic-rename=true. SIGKILL one rank mid-generation: every file with a dataset name is whole, what
    is left of the interrupted writes has a .partial name only, and a rerun completes the dataset. SIGINT to mpirun
    mid-generation: the same, and no partial file is left (the ranks get SIGTERM and remove theirs).
    OpenMPI's mpirun takes ~1 s to pass a SIGINT on as SIGTERM, in which a fast machine writes ~25 of these files
    (75 MiB/s here): the dataset is large enough (160 files) that the fault always lands mid-way."""
    data = tmp_path / "data"
    n = 160
    slow = slow_generation(data, n, **{"generation-atomic-rename": True})
    for how in ("SIGKILL a rank", "SIGINT to mpirun"):
        stderr = interrupt(tmp_path, data, slow, how)
        whole = [p for p in dataset_files(data) if p.name.endswith(".hdf5")]
        partial = [p for p in dataset_files(data) if ".partial." in p.name]
        assert whole and len(whole) < n, f"{how}: not interrupted mid-way ({len(whole)} of {n} files)"
        for p in whole:
            assert h5_complete(p, 4), f"{how}: {p} has a dataset name but is not whole"
        assert all(re.fullmatch(rf"img_\d+_of_{n}\.hdf5\.partial\.\d+", p.name) for p in partial), partial
        if how == "SIGINT to mpirun":
            assert len(partial) <= 2 - handled_sigterm(stderr), f"partial files left after SIGINT: {partial}"
        else:  # the leftovers are this kernel's own names: a rerun may generate next to them
            r = run(tmp_path, 2, {**slow, "overwrite": True, "quiet": True}, name="rerun", timeout=300)
            assert r.rc == 0, r.proc.stderr
            assert len([p for p in dataset_files(data) if p.name.endswith(".hdf5")]) == n


@pytest.mark.slow
def test_interrupted_in_place_generation_is_detected(tmp_path):
    """The default (files written in place, as DLIO): SIGKILL one rank mid-generation. The completion record still
    says "generating"; a read of the folder exits 2 naming it, a generation without overwrite likewise; a rerun with
    overwrite=true completes the dataset and the record."""
    data = tmp_path / "data"
    n = 160
    slow = slow_generation(data, n)
    interrupt(tmp_path, data, slow, "SIGKILL a rank")
    assert '"state": "generating"' in (data / "h5dlio-generation.json").read_text()
    assert not [p for p in dataset_files(data) if ".partial." in p.name]
    want = f"h5dlio: error: key 'data-folder': '{data}' holds an interrupted generation"
    r = run(tmp_path, 2, tiny(data, **{"num-files-train": n, "num-files-eval": 0, "train": True, "epochs": 1,
                                       "record-samples": False}), name="read")
    assert r.rc == 2 and error_lines(r.proc.stderr)[0].startswith(want), r.proc.stderr
    r = run(tmp_path, 2, {**slow, "quiet": True}, name="again")
    assert r.rc == 2 and error_lines(r.proc.stderr)[0].startswith(want), r.proc.stderr
    r = run(tmp_path, 2, {**slow, "overwrite": True, "quiet": True}, name="rerun", timeout=300)
    assert r.rc == 0, r.proc.stderr
    assert '"state": "complete"' in (data / "h5dlio-generation.json").read_text()
    assert all(h5_complete(p, 4) for p in dataset_files(data)) and len(dataset_files(data)) == n


def slow_generation(data: Path, n: int, **kw) -> dict:
    return gen(data, **{"num-files-train": n, "num-files-eval": 0, "num-samples-per-file": 4,
                        "record-length": 1048576, "chunking": True, "chunk-size": 4096, "compression": "gzip",
                        "compression-level": 9, "quiet": False, **kw})


def interrupt(tmp_path: Path, data: Path, sets: dict, how: str) -> str:
    """Start the generation, wait for its first file, then SIGKILL rank 1 or SIGINT mpirun; the job must fail and
    leave no process. Returns its stderr."""
    if data.exists():
        shutil.rmtree(data)
    job = Job(kernel_argv(2, {"output-folder": str(tmp_path / "out"), **sets}))
    deadline = time.time() + 60 * SLACK
    while not list((data / "train").glob("*.hdf5")) and time.time() < deadline and job.p.poll() is None:
        time.sleep(0.01)
    assert job.p.poll() is None, f"generation ended before the fault: {job.stderr}"
    if how == "SIGKILL a rank":
        os.kill(job_pids(job.p.pid)["ranks"][1], signal.SIGKILL)
    else:
        os.kill(job.p.pid, signal.SIGINT)
    rc = job.finish(timeout=30)
    assert rc != 0, f"{how}: the job must fail"
    assert_nothing_left(str(tmp_path))
    return job.stderr


def test_killed_rank_mid_checkpoint_ends_the_job_and_leaves_no_whole_looking_file(tmp_path):
    """SIGKILL rank 1 while it writes its checkpoint file (all_ranks, 3 GiB model file each): the job ends within
    seconds with a non-zero status, rank 1 named; every file under a checkpoint's final name is a whole torch.save
    zip, and what is left of the interrupted write has a .partial name only."""
    import zipfile
    folder = tmp_path / "ckpt"
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": False, "epochs": 1,
                                      "checkpoint": True, "checkpoint-folder": str(folder),
                                      "checkpoint-type": "all_ranks", "model-size": 3 * 2**30, "quiet": False,
                                      "output-folder": str(tmp_path / "out")})
    job = Job(kernel_argv(2, sets))
    deadline = time.time() + 120 * SLACK
    partial = re.compile(r"model-\d+-\d+-1\.pt\.partial\.\d+")
    while job.p.poll() is None and time.time() < deadline and \
            not any(partial.fullmatch(p.name) for p in (folder.glob("*") if folder.exists() else [])):
        time.sleep(0.005)
    assert job.p.poll() is None, f"the job ended before rank 1 began its checkpoint: {job.stderr}"
    killed = time.time()
    os.kill(job_pids(job.p.pid)["ranks"][1], signal.SIGKILL)
    rc = job.finish(timeout=60)
    took = time.time() - killed
    assert rc != 0 and took < 20 * SLACK, (rc, took)
    assert re.search(r"rank 1\b", job.stderr), job.stderr[-2000:]
    assert_nothing_left(str(tmp_path))
    files = sorted(p for p in folder.iterdir() if p.is_file())
    whole = [p for p in files if p.name.endswith(".pt")]
    left = [p for p in files if ".partial." in p.name]
    assert set(files) == set(whole) | set(left), files
    assert any(partial.fullmatch(p.name) for p in left), f"rank 1's interrupted write: {files}"
    assert not any(p.name.endswith("-1.pt") for p in whole), "rank 1's file never got its final name"
    for p in whole:  # rank 0's, if it finished before the job was ended
        with zipfile.ZipFile(p) as z:
            assert z.testzip() is None, p


def test_outputs_replace_old_ones_whole_or_not_at_all(tmp_path):
    """Results are written under a temporary name and renamed: when the output file system is full, the previous
    output.csv/json stay as they were and no temporary is left (a plain open('w') would have truncated them)."""
    data = tmp_path / "data"
    assert run(tmp_path, 1, gen(data), name="gen").rc == 0
    out = tmp_path / "outfs"
    if not mount_tmpfs(out, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        (out / "output.csv").write_text("old csv\n")
        (out / "output.json").write_text('{"old": true}\n')
        fill(out / "filler")
        r = run(tmp_path, 2, {**tiny(data, train=True, epochs=1, **{"record-samples": False}),
                              "output-folder": str(out)}, timeout=120)
        assert r.rc != 0
        assert "cannot write" in r.proc.stderr and "output.csv" in r.proc.stderr
        assert "No space left on device" in r.proc.stderr
        assert (out / "output.csv").read_text() == "old csv\n"
        assert (out / "output.json").read_text() == '{"old": true}\n'
        assert sorted(p.name for p in out.iterdir()) == ["filler", "output.csv", "output.json"]
    finally:
        umount(out)
