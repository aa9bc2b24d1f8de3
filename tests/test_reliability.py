"""Reliability (issue 7): data safety, faults, bad input, determinism and memory safety of the kernel and harness.

Every fault test bounds the job with a timeout, checks the exit status and the message (file, rank, cause), and
checks no process of the job survives. Kernel tests run the real kernel under mpirun (2 ranks); harness tests run
`python -m harness run` against a fake reference DLIO (a venv whose bin/dlio_benchmark is a small script) and the
real kernel. Names: test_harness_* need the harness, test_valgrind_* need valgrind (`make test-asan` runs the rest
against the ASan/UBSan kernel)."""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, h5tool, run, tiny
from test_dlio_probe import LINEAGES

from profiles import logvfd

REPO = Path(__file__).resolve().parent.parent
SANITIZED = bool(os.environ.get("H5DLIO_SANITIZED"))  # make test-asan: slower, so wider time bounds
SLACK = 3.0 if SANITIZED else 1.0
CRASH_WORDS = ("Segmentation fault", "core dumped", "Aborted", "AddressSanitizer", "runtime error:",
               "LeakSanitizer", "exited on signal")


# ---------- helpers ----------

def _fmt(v) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def kernel_argv(ranks: int, sets: dict, extra: list[str] | None = None) -> list[str]:
    argv = list(MPIRUN) + ["-np", str(ranks), BIN] + (extra or [])
    for k, v in sets.items():
        argv += ["--set", f"{k}={_fmt(v)}"]
    return argv


def survivors(tag: str) -> list[str]:
    """Live processes (not zombies) whose command line holds tag: our job's mpirun, ranks and reader processes."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if tag in cmd:
            found.append(f"pid {d}: {cmd[:160]}")
    return found


def assert_nothing_left(tag: str, within: float = 10.0) -> None:
    deadline = time.time() + within * SLACK
    while (left := survivors(tag)) and time.time() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left behind: {left}"


class Job:
    """A launch in its own session, stdout/stderr collected by threads, stdout lines also queued for wait_for."""

    def __init__(self, argv: list[str], env: dict | None = None, preexec=None, cwd: Path | None = None):
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                                  preexec_fn=preexec, cwd=cwd, start_new_session=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self.lines: queue.Queue = queue.Queue()
        self.threads = [threading.Thread(target=self._pump, args=(self.p.stdout, self.out, True), daemon=True),
                        threading.Thread(target=self._pump, args=(self.p.stderr, self.err, False), daemon=True)]
        for t in self.threads:
            t.start()

    def _pump(self, stream, into: list, queued: bool) -> None:
        for line in stream:
            into.append(line)
            if queued:
                self.lines.put(line)
        if queued:
            self.lines.put(None)

    def wait_for(self, text: str, timeout: float = 120) -> None:
        deadline = time.time() + timeout * SLACK
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                break
            if text in line:
                return
        self.kill()
        pytest.fail(f"never saw {text!r} (rc {self.p.poll()}): {self.stderr[-2000:]}")

    def finish(self, timeout: float) -> int:
        try:
            rc = self.p.wait(timeout=timeout * SLACK)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"job still running {timeout * SLACK:.0f} s after the fault (hang): {self.stderr[-2000:]}")
        for t in self.threads:
            t.join(timeout=10)
        return rc

    def kill(self) -> None:
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait(timeout=30)

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    @property
    def stderr(self) -> str:
        return "".join(self.err)


def job_pids(mpirun_pid: int) -> dict:
    """{'ranks': {rank: pid}, 'workers': {rank: [pid, ...]}} of a running mpirun (single node)."""
    def ppid(pid: int) -> int:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

    ranks: dict = {}
    workers: dict = {}
    procs = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
            if not cmd or not cmd[0].endswith(b"h5dlio"):
                continue
            env = Path(f"/proc/{d}/environ").read_bytes().split(b"\0")
            r = [int(x.split(b"=")[1]) for x in env if x.startswith(b"OMPI_COMM_WORLD_RANK=")]
            procs.append((int(d), ppid(int(d)), r[0] if r else -1))
        except (OSError, ValueError, IndexError):
            continue
    for pid, parent, r in procs:
        if parent == mpirun_pid:
            ranks[r] = pid
    for pid, parent, r in procs:
        if parent in ranks.values():
            workers.setdefault(r, []).append(pid)
    return {"ranks": ranks, "workers": workers}


def tree_state(root: Path) -> dict:
    """Every path under root with its size and mtime (what must not change when the kernel refuses)."""
    return {str(p.relative_to(root)): (p.is_dir(), p.lstat().st_size, p.lstat().st_mtime_ns)
            for p in sorted(root.rglob("*"))} if root.exists() else {}


def error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if re.match(r"h5dlio: (rank \d+: )?error: ", ln)]


def dataset_files(data: Path) -> list[Path]:
    return sorted(p for p in data.rglob("*") if p.is_file())


def h5_complete(path: Path, samples: int) -> bool:
    """A whole dataset file: opens, and both datasets are there with all samples (labels are written last)."""
    p = subprocess.run([h5tool("h5dump"), "-H", str(path)], capture_output=True, text=True, timeout=60)
    return p.returncode == 0 and p.stdout.count(f"( {samples}") >= 2 and 'DATASET "labels"' in p.stdout


# ---------- 1. data safety ----------

def _gen(data: Path, **kw) -> dict:
    return tiny(data, **{"generate-data": True, "train": False, "evaluation": False, **kw})


def test_generation_refuses_root(tmp_path):
    r = run(tmp_path, 2, _gen(Path("/")), timeout=60)
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
    r = run(tmp_path, 2, _gen(folder), env=env, timeout=60)
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
    r = run(tmp_path, 2, _gen(data), timeout=60)
    assert r.rc == 2, r.proc.stderr
    [line] = error_lines(r.proc.stderr)
    assert str(foreign) in line and "reuse-data-folder=true" in line and "MPI_ABORT" not in r.proc.stderr
    assert tree_state(data) == before, "a refused generation must not touch the data folder"
    if case == "symlink named like data":
        assert (tmp_path / "precious").read_text() == "someone's data"
        return  # with reuse-data-folder the existing name would still be refused (overwrite=false)
    r = run(tmp_path, 2, _gen(data, **{"reuse-data-folder": True}), timeout=60)
    assert r.rc == 0, r.proc.stderr
    key = str(foreign.relative_to(data))
    assert tree_state(data)[key] == before[key], "reuse-data-folder: the foreign entry is left as it was"


def test_generation_accepts_new_empty_and_own_folders(tmp_path):
    """The refusal is precise: a new folder, an empty one, and one holding only this kernel's dataset files (another
    count, a partial file of a killed generation) are accepted; reads never need the key."""
    assert run(tmp_path, 2, _gen(tmp_path / "new" / "data"), name="a").rc == 0
    (tmp_path / "empty").mkdir()
    assert run(tmp_path, 2, _gen(tmp_path / "empty"), name="b").rc == 0
    own = tmp_path / "own"
    assert run(tmp_path, 1, _gen(own, **{"num-files-train": 3, "num-files-eval": 0}), name="c").rc == 0
    (own / "train" / "img_0_of_8.hdf5.partial.4242").write_bytes(b"\0" * 100)
    r = run(tmp_path, 2, _gen(own), name="d")
    assert r.rc == 0, r.proc.stderr
    (own / "README").write_text("a note next to the dataset")
    r = run(tmp_path, 2, tiny(own, train=True, epochs=1), name="e")
    assert r.rc == 0, r.proc.stderr


def test_interrupted_generation_never_leaves_a_file_that_looks_whole(tmp_path):
    """SIGKILL one rank mid-generation: every file with a dataset name is whole, what is left of the interrupted
    writes has a .partial name only, and a rerun completes the dataset. SIGINT to mpirun mid-generation: the same,
    and no partial file is left (the ranks get SIGTERM and remove theirs)."""
    data = tmp_path / "data"
    slow = _gen(data, **{"num-files-train": 24, "num-files-eval": 0, "num-samples-per-file": 4,
                         "record-length": 1048576, "chunking": True, "chunk-size": 4096, "compression": "gzip",
                         "compression-level": 9, "quiet": False})
    for how in ("SIGKILL a rank", "SIGINT to mpirun"):
        if data.exists():
            shutil.rmtree(data)
        job = Job(kernel_argv(2, {"output-folder": str(tmp_path / "out"), **slow}))
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
        whole = [p for p in dataset_files(data) if p.name.endswith(".hdf5")]
        partial = [p for p in dataset_files(data) if ".partial." in p.name]
        assert whole and len(whole) < 24, f"{how}: not interrupted mid-way ({len(whole)} files)"
        for p in whole:
            assert h5_complete(p, 4), f"{how}: {p} has a dataset name but is not whole"
        assert all(re.fullmatch(r"img_\d+_of_24\.hdf5\.partial\.\d+", p.name) for p in partial), partial
        if how == "SIGINT to mpirun":
            assert len(partial) <= 2 - _handled_sigterm(job.stderr), f"partial files left after SIGINT: {partial}"
        else:  # the leftovers are this kernel's own names: a rerun may generate next to them
            r = run(tmp_path, 2, {**slow, "overwrite": True, "quiet": True}, name="rerun", timeout=300)
            assert r.rc == 0, r.proc.stderr
            assert len([p for p in dataset_files(data) if p.name.endswith(".hdf5")]) == 24


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


def _handled_sigterm(stderr: str) -> int:
    """Ranks that ran their SIGTERM handler (which removes the rank's partial file, then reports). OpenMPI ends a job
    with SIGTERM and, 1 s later (odls_base_sigkill_timeout), SIGKILL: a rank blocked that long in a write (I/O
    pressure from other jobs) is killed first and keeps its .partial file."""
    return len(set(re.findall(r"h5dlio: rank (\d+): terminated \(SIGTERM\)", stderr)))


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return p.returncode == 0


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(path: Path) -> None:
    """Fill the file system holding path to its last byte."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (65536, 4096, 1):
            try:
                while os.write(fd, b"\0" * chunk) == chunk:
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)


def test_outputs_replace_old_ones_whole_or_not_at_all(tmp_path):
    """Results are written under a temporary name and renamed: when the output file system is full, the previous
    output.csv/json stay as they were and no temporary is left (a plain open('w') would have truncated them)."""
    data = tmp_path / "data"
    assert run(tmp_path, 1, _gen(data), name="gen").rc == 0
    out = tmp_path / "outfs"
    if not _mount_tmpfs(out, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        (out / "output.csv").write_text("old csv\n")
        (out / "output.json").write_text('{"old": true}\n')
        _fill(out / "filler")
        r = run(tmp_path, 2, {**tiny(data, train=True, epochs=1, **{"record-samples": False}),
                              "output-folder": str(out)}, timeout=120)
        assert r.rc != 0
        assert "cannot write" in r.proc.stderr and "output.csv" in r.proc.stderr
        assert "No space left on device" in r.proc.stderr
        assert (out / "output.csv").read_text() == "old csv\n"
        assert (out / "output.json").read_text() == '{"old": true}\n'
        assert sorted(p.name for p in out.iterdir()) == ["filler", "output.csv", "output.json"]
    finally:
        _umount(out)


# ---------- 2. faults ----------

@pytest.mark.parametrize("fault,rt,cause", [
    ("delete", 0, "No such file or directory"),
    ("truncate", 0, "truncated file"),
    ("corrupt", 0, "file signature not found"),
    ("delete", 2, "No such file or directory"),
])
def test_dataset_file_fault_mid_run_ends_the_job(tmp_path, fault, rt, cause):
    """A file deleted, truncated or overwritten while the job runs (here: while it sleeps in the first epoch's
    emulated compute) ends the whole job within seconds, naming the file, the rank and the cause."""
    data = tmp_path / "data"
    assert run(tmp_path, 1, _gen(data), name="gen").rc == 0
    victim = data / "train" / "img_5_of_8.hdf5"
    job = Job(kernel_argv(2, {"output-folder": str(tmp_path / "out"),
                              **tiny(data, train=True, epochs=3, quiet=False, **{
                                  "computation-time": 0.25, "read-threads": rt, "record-samples": False})}))
    job.wait_for("epoch 1/3: training")
    t0 = time.time()
    if fault == "delete":
        victim.unlink()
    elif fault == "truncate":
        os.truncate(victim, victim.stat().st_size // 2)
    else:
        with open(victim, "r+b") as f:
            f.write(b"\xde\xad\xbe\xef" * 16)
    rc = job.finish(timeout=30)
    assert rc == 2, job.stderr
    assert time.time() - t0 < 20 * SLACK
    err = job.stderr
    lines = [ln for ln in error_lines(err) if str(victim) in ln]
    assert lines, err
    for line in lines:  # the rank's line (and with reader processes, the reader's own line before it)
        assert re.match(r"h5dlio: rank [01]: error: ", line) and cause in line, line
    if rt:
        assert any("reader process" in ln for ln in lines), lines
    assert not any(w in err for w in CRASH_WORDS), err
    assert_nothing_left(str(tmp_path))


@pytest.fixture
def small_fs(tmp_path, request):
    """A file system that fills up: a 1 MiB tmpfs (root), or a 16 MiB file-size limit (RLIMIT_FSIZE) on mpirun and
    the ranks (MPI itself needs a few MiB of shared-memory files, so the limit cannot be smaller)."""
    kind = request.param
    where = tmp_path / "fs"
    if kind == "tmpfs":
        if not _mount_tmpfs(where, "1m"):
            pytest.skip("cannot mount a tmpfs here (not root?): the RLIMIT_FSIZE variant covers it")
        yield kind, where, None, {"record-length": 65536}, "No space left on device"
        _umount(where)
    else:
        where.mkdir()

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        yield kind, where, limit, {"record-length": 8388608}, "File too large"


@pytest.mark.parametrize("small_fs", ["tmpfs", "fsize"], indirect=True)
def test_full_file_system_during_generation(tmp_path, small_fs):
    kind, where, preexec, size, cause = small_fs
    data = where / "data"
    sets = {"output-folder": str(tmp_path / "out"), **_gen(data, **{"num-files-train": 8, "num-files-eval": 0,
                                                                       "num-samples-per-file": 4, **size})}
    t0 = time.time()
    job = Job(kernel_argv(2, sets), preexec=preexec)
    rc = job.finish(timeout=60)
    assert rc == 1, job.stderr
    assert time.time() - t0 < 30 * SLACK
    lines = [ln for ln in error_lines(job.stderr) if cause in ln]
    assert lines, job.stderr
    assert re.match(rf"h5dlio: rank [01]: error: {re.escape(str(data))}/train/img_\d+_of_8\.hdf5\.partial\.\d+: ",
                    lines[0])
    assert not any(w in job.stderr for w in CRASH_WORDS), job.stderr
    assert_nothing_left(str(tmp_path))
    partial = [p for p in dataset_files(data) if ".partial." in p.name]
    assert len(partial) <= 1 - _handled_sigterm(job.stderr), f"temporary files left behind: {partial}"
    for p in dataset_files(data):
        assert ".partial." in p.name or h5_complete(p, 4), f"{p} has a dataset name but is not whole"


@pytest.mark.parametrize("victim", ["rank", "reader process"])
def test_sigkill_ends_the_job(tmp_path, victim):
    data = tmp_path / "data"
    assert run(tmp_path, 1, _gen(data), name="gen").rc == 0
    job = Job(kernel_argv(2, {"output-folder": str(tmp_path / "out"),
                              **tiny(data, train=True, epochs=5, quiet=False, **{
                                  "computation-time": 0.25, "read-threads": 2, "record-samples": False})}))
    job.wait_for("epoch 1/5: training")
    pids = job_pids(job.p.pid)
    assert sorted(pids["ranks"]) == [0, 1] and len(pids["workers"].get(1, [])) == 2, pids
    t0 = time.time()
    if victim == "rank":
        os.kill(pids["ranks"][1], signal.SIGKILL)
    else:
        os.kill(pids["workers"][1][0], signal.SIGKILL)
    rc = job.finish(timeout=30)
    assert rc != 0 and time.time() - t0 < 15 * SLACK
    if victim == "rank":
        assert re.search(r"process rank 1 with PID \d+ on node \S+ exited on signal 9", job.stderr), job.stderr
    else:
        assert re.search(rf"h5dlio: rank 1: error: reader process \d \(pid {pids['workers'][1][0]}\) "
                         r"(died while reading batch \d+|is gone)", job.stderr), job.stderr
    assert_nothing_left(str(tmp_path))


def test_sigint_to_mpirun_ends_the_job(tmp_path):
    data = tmp_path / "data"
    assert run(tmp_path, 1, _gen(data), name="gen").rc == 0
    job = Job(kernel_argv(2, {"output-folder": str(tmp_path / "out"),
                              **tiny(data, train=True, epochs=5, quiet=False, **{
                                  "computation-time": 0.25, "read-threads": 2, "record-samples": False})}))
    job.wait_for("epoch 1/5: training")
    t0 = time.time()
    os.kill(job.p.pid, signal.SIGINT)
    rc = job.finish(timeout=30)
    assert rc != 0 and time.time() - t0 < 15 * SLACK
    assert re.search(r"h5dlio: rank [01]: terminated \(SIGTERM\)", job.stderr), job.stderr
    assert not (tmp_path / "out" / "output.json").exists(), "an interrupted run must not leave results"
    assert_nothing_left(str(tmp_path))


# ---------- 3. bad input (kernel: 2 ranks under mpirun) ----------

BASE_YAML = ("workflow: {train: true}\nreader: {batch_size: 2, read_threads: 0}\n"
             "dataset: {data_folder: DATA, num_files_train: 8, num_samples_per_file: 4}\n")

# (id, --set overrides on a valid tiny workload, words the one error line must hold)
KERNEL_BAD_SETS = [
    # wrong types
    ("int: word", {"epochs": "many"}, ["'epochs'", "'many'", "integer"]),
    ("int: fraction", {"batch-size": "2.5"}, ["'batch-size'", "2.5"]),
    ("int: hex", {"num-files-train": "0x10"}, ["'num-files-train'", "0x10"]),
    ("int: empty", {"epochs": ""}, ["'epochs'"]),
    ("bool: word", {"train": "maybe"}, ["'train'", "boolean"]),
    ("bool: number", {"chunking": "2"}, ["'chunking'", "boolean"]),
    ("number: word", {"computation-time": "fast"}, ["'computation-time'", "number"]),
    ("number: nan", {"computation-time": "nan"}, ["'computation-time'", "nan"]),
    ("number: inf", {"eval-time": "inf"}, ["'eval-time'", "inf"]),
    ("number: 1e400", {"preprocess-time": "1e400"}, ["'preprocess-time'"]),
    ("enum: shuffle", {"shuffle": "sometimes"}, ["'shuffle'", "off|seed|random"]),
    ("enum: compression", {"compression": "lz4"}, ["'compression'", "lz4"]),
    ("enum: ordering", {"ordering": "random"}, ["'ordering'", "dlio|h5bench"]),
    ("string: empty", {"file-prefix": ""}, ["'file-prefix'", "empty"]),
    ("string: too long", {"file-prefix": "p" * 300}, ["'file-prefix'", "longer than 255"]),
    # negative and zero sizes
    ("record-length 0", {"record-length": 0}, ["'record-length'", "out of range"]),
    ("record-length -1", {"record-length": -1}, ["'record-length'", "out of range"]),
    ("samples per file 0", {"num-samples-per-file": 0}, ["'num-samples-per-file'", "out of range"]),
    ("batch 0", {"batch-size": 0}, ["'batch-size'", "out of range"]),
    ("batch -7", {"batch-size": -7}, ["'batch-size'", "out of range"]),
    ("eval batch 0", {"batch-size-eval": 0}, ["'batch-size-eval'", "out of range"]),
    ("epochs 0", {"epochs": 0}, ["'epochs'", "out of range"]),
    ("read threads -1", {"read-threads": -1}, ["'read-threads'", "out of range"]),
    ("files -8", {"num-files-train": -8}, ["'num-files-train'", "out of range"]),
    ("train files 0", {"num-files-train": 0}, ["'num-files-train'", "at least one file"]),
    ("chunk size 0", {"chunk-size": 0}, ["'chunk-size'", "out of range"]),
    ("generation buffer 0", {"generation-buffer-size": 0}, ["'generation-buffer-size'", "out of range"]),
    ("compute -0.5", {"computation-time": -0.5}, ["'computation-time'", "out of range"]),
    ("steps 0", {"total-training-steps": 0}, ["'total-training-steps'"]),
    ("steps -2", {"total-training-steps": -2}, ["'total-training-steps'", "out of range"]),
    ("gzip level 10", {"compression-level": 10}, ["'compression-level'", "out of range"]),
    ("au 1.5", {"au": 1.5}, ["'au'", "out of range"]),
    # batch larger than the dataset, more ranks than samples, steps beyond the dataset
    ("batch > a rank's share", {"batch-size": 17}, ["'batch-size'", "17", "16 samples"]),
    ("eval batch > share", {"evaluation": True, "batch-size-eval": 100}, ["'batch-size-eval'", "100"]),
    ("more ranks than samples", {"num-files-train": 1, "num-samples-per-file": 1, "batch-size": 1},
     ["'num-files-train'", "2 ranks"]),
    ("more ranks than eval samples", {"evaluation": True, "num-files-eval": 1, "num-samples-per-file": 1,
                                      "batch-size": 1, "batch-size-eval": 1}, ["'num-files-eval'", "2 ranks"]),
    ("steps beyond the dataset", {"total-training-steps": 1000}, ["'total-training-steps'", "1000"]),
    # unknown keys
    ("unknown key", {"batch-sise": 2}, ["'batch-sise'", "'batch-size'"]),
    ("unknown h5dlio key", {"h5dlio.nope": 1}, ["'h5dlio.nope'"]),
    ("unknown dotted key", {"dataset.record_lenght": 1}, ["'dataset.record_lenght'", "'dataset.record_length'"]),
    # 32- and 64-bit overflow
    ("files 2^31", {"num-files-train": 2147483648}, ["'num-files-train'", "out of range"]),
    ("batch 2^32", {"batch-size": 4294967296}, ["'batch-size'", "out of range"]),
    ("epochs 2^31", {"epochs": 2147483648}, ["'epochs'", "out of range"]),
    ("seed 2^32", {"random-seed": 4294967296}, ["'random-seed'", "out of range"]),
    ("seed -1", {"random-seed": -1}, ["'random-seed'", "out of range"]),
    ("int64 overflow", {"record-length": "99999999999999999999"}, ["'record-length'", "out of range"]),
    ("int64 + 1", {"record-length": "9223372036854775808"}, ["'record-length'", "out of range"]),
    ("1e19", {"record-length": "1e19"}, ["'record-length'", "out of range"]),
    ("file size overflow", {"generate-data": True, "record-length": 4611686018427387904,
                            "num-samples-per-file": 1000}, ["'num-samples-per-file'", "64-bit file size"]),
    ("sample count overflow", {"num-files-train": 1000000000, "num-samples-per-file": 1000000000},
     ["'num-samples-per-file'", "overflows"]),
    ("10^9 files with drawn sizes", {"num-files-train": 1000000000, "record-length-stdev": 100},
     ["'num-files-train'", "10^8 files"]),
    ("steps 2^63-1", {"total-training-steps": 9223372036854775807}, ["'total-training-steps'"]),
    # names that would leave the data folder or collide
    ("prefix with ..", {"file-prefix": "../../escape"}, ["'file-prefix'", "plain name"]),
    ("train folder ..", {"train-data-folder": ".."}, ["'train-data-folder'", "plain name"]),
    ("valid folder a/b", {"valid-data-folder": "a/b"}, ["'valid-data-folder'", "plain name"]),
    ("train == valid", {"evaluation": True, "valid-data-folder": "train"}, ["'valid-data-folder'", "share"]),
    ("records == labels", {"generate-data": True, "labels-dataset-name": "records"}, ["'labels-dataset-name'"]),
    ("path too long", {"data-folder": "/tmp/" + "a" * 4050}, ["'data-folder'", "4095"]),
    # combinations
    ("nothing to do", {"train": False}, ["nothing to do"]),
    ("evaluation without training", {"train": False, "evaluation": True}, ["'evaluation'", "train=true"]),
    ("gzip without chunking", {"generate-data": True, "compression": "gzip"}, ["'compression'", "chunking"]),
    ("Log VFD with MPI-IO", {"log-vfd": True, "collective-meta": True}, ["'log-vfd'"]),
    ("not a DLIO release", {"dlio-version": "banana"}, ["'dlio-version'", "banana"]),
    ("tensorflow with data_loader pytorch", {"framework": "tensorflow"}, ["'framework'", "Imcompatible"]),
    # the data and output folders
    ("missing dataset", {"data-folder": "/nonexistent/h5dlio"}, ["'data-folder'", "/nonexistent/h5dlio/train"]),
    ("output folder is a file", {"output-folder": "/etc/hostname"}, ["'output-folder'", "/etc/hostname"]),
]

# (id, config file name, content, words)
KERNEL_BAD_FILES = [
    ("yaml: syntax", "w.yaml", "dataset:\n  record_length: [1, 2\n", ["w.yaml:", "syntax error"]),
    ("yaml: tab indent", "w.yaml", "dataset:\n\trecord_length: 5\n", ["w.yaml:", "syntax error"]),
    ("yaml: duplicate key", "w.yaml", BASE_YAML + "train: {epochs: 1}\ntrain: {epochs: 2}\n",
     ["duplicate key 'train'"]),
    ("yaml: alias", "w.yaml", "a: &x 1\nb: *x\n", ["aliases"]),
    ("yaml: two documents", "w.yaml", "train: {epochs: 1}\n---\ntrain: {epochs: 2}\n", ["more than one document"]),
    ("yaml: a list", "w.yaml", "- 1\n- 2\n", ["mapping"]),
    ("yaml: empty", "w.yaml", "", ["empty"]),
    ("yaml: NUL byte", "w.yaml", "train:\0 {}\n", ["NUL"]),
    ("yaml: bad UTF-8", "w.yaml", b"train: {epochs: \xff\xfe}\n", ["w.yaml:", "UTF-8"]),
    ("yaml: 10^5 levels", "w.yaml", "a: " + "[" * 100000 + "]" * 100000 + "\n", ["nested deeper than 64"]),
    ("yaml: unknown nested key", "w.yaml", "reader:\n  batch_sise: 2\n",
     ["w.yaml:", "'reader.batch_sise'", "'reader.batch_size'"]),
    ("yaml: map for a scalar", "w.yaml", "reader:\n  batch_size: {a: 1}\n", ["'reader.batch_size'", "scalar"]),
    ("yaml: wrong type", "w.yaml", "train:\n  epochs: many\n", ["w.yaml:2", "'epochs'", "many"]),
    ("yaml: format npz", "w.yaml", "dataset:\n  format: npz\n", ["'dataset.format'", "npz", "hdf5"]),
    ("yaml: checkpointing of 2.0.1", "w.yaml", "workflow:\n  checkpoint: true\nh5dlio:\n  dlio_version: 2.0.1\n",
     ["'checkpoint'", "2.0.1", "not emulated"]),
    ("yaml: bad distribution", "w.yaml", "train:\n  computation_time: {mean: 1, kind: normal}\n",
     ["'train.computation_time.kind'"]),
    ("yaml: 32-bit overflow", "w.yaml", "dataset:\n  num_files_train: 4294967296\n",
     ["'num-files-train'", "out of range"]),
    ("json: syntax", "c.json", '{"train": true,, "epochs": 1}', ["c.json:1", "syntax error"]),
    ("json: unterminated", "c.json", '{"train": true', ["c.json:", "syntax error"]),
    ("json: unknown key", "c.json", '{"train": true,\n "epoch": 3}', ["c.json:2", "'epoch'", "'epochs'"]),
    ("json: list value", "c.json", '{"epochs": [1, 2]}', ["'epochs'", "scalar"]),
    ("json: null", "c.json", '{"train": true, "epochs": null}', ["'epochs'", "null"]),
    ("json: benchmarks not a list", "c.json", '{"benchmarks": {"benchmark": "dlio"}}', ["'benchmarks'", "list"]),
    ("json: no dlio benchmark", "c.json", '{"benchmarks": [{"benchmark": "write"}]}', ["dlio"]),
    ("json: two dlio benchmarks", "c.json", '{"benchmarks": [{"benchmark": "dlio", "configuration": {}}, '
     '{"benchmark": "dlio", "configuration": {}}]}', ["more than one dlio"]),
    ("json: configuration not an object", "c.json",
     '{"benchmarks": [{"benchmark": "dlio", "configuration": [1]}]}', ["configuration must be an object"]),
    ("json: top-level array", "c.json", "[1, 2]", ["mapping"]),
    ("json: negative size", "c.json", '{"train": true, "record-length": "-4096"}', ["'record-length'", "range"]),
]

# (id, argv after BIN, words)
KERNEL_BAD_ARGS = [
    ("--set without =", ["--set", "epochs"], ["key=value"]),
    ("--set without key", ["--set", "=3"], ["key=value"]),
    ("unknown argument", ["--frobnicate"], ["'--frobnicate'"]),
    ("--config without value", ["--config"], ["--config needs a value"]),
    ("--config twice", ["--config", "a.yaml", "--config", "b.yaml"], ["--config given twice"]),
    ("missing config file", ["--config", "/nonexistent/w.yaml"], ["/nonexistent/w.yaml", "cannot open"]),
    ("config is a directory", ["--config", "/tmp"], ["/tmp", "read error"]),
    ("config is a binary", ["--config", "/bin/true"], ["/bin/true", "NUL"]),
    ("--ranks without --dry-run", ["--ranks", "2"], ["--ranks", "--dry-run"]),
    ("--ranks 0", ["--dry-run", "--ranks", "0"], ["--ranks"]),
]


def _assert_clean_refusal(proc: subprocess.CompletedProcess, words: list[str]) -> None:
    assert proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr[-1500:]}"
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, f"want exactly one error line: {proc.stderr[-1500:]}"
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"
    assert not any(w in proc.stderr for w in CRASH_WORDS + ("MPI_ABORT",)), proc.stderr[-1500:]


def _concurrently(jobs: dict) -> dict:
    """Launches are mostly start-up latency (mpirun, MPI_Init), not CPU: a table runs 8 at a time (4 under ASan,
    whose start-up is CPU)."""
    with ThreadPoolExecutor(4 if SANITIZED else 8) as ex:
        futures = {k: ex.submit(f) for k, f in jobs.items()}
        return {k: f.result() for k, f in futures.items()}


def _bounded_memory() -> None:
    """preexec: 4 GiB of address space per process, so a regression that allocates for a huge (bad or valid) count
    fails fast instead of pushing the machine into the OOM killer (not under ASan: its shadow needs terabytes)."""
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _proc(argv: list[str], cwd: Path | None = None, timeout: float = 180):
    return lambda: subprocess.run(argv, capture_output=True, text=True, timeout=timeout * SLACK, cwd=cwd,
                                  preexec_fn=_bounded_memory)


@pytest.fixture(scope="module")
def kernel_refusals(tmp_path_factory) -> dict:
    """Every bad kernel input of the three tables, each launched under mpirun with 2 ranks in its own folder."""
    root = tmp_path_factory.mktemp("kernel-bad-input")
    jobs, dirs = {}, {}
    for i, (case, sets, _) in enumerate(KERNEL_BAD_SETS):
        d = dirs[("set", case)] = root / f"set{i}"
        d.mkdir()
        jobs[("set", case)] = _proc(kernel_argv(2, {"output-folder": str(d / "out"),
                                                    **tiny(d / "data", train=True, **{"read-threads": 0}), **sets}))
    for i, (case, name, text, _) in enumerate(KERNEL_BAD_FILES):
        d = dirs[("file", case)] = root / f"file{i}"
        d.mkdir()
        body = text.replace("DATA", str(d / "data")) if isinstance(text, str) else text
        (d / name).write_bytes(body.encode() if isinstance(body, str) else body)
        jobs[("file", case)] = _proc(kernel_argv(2, {"output-folder": str(d / "out")}, ["--config", str(d / name)]),
                                     cwd=d)
    for i, (case, args, _) in enumerate(KERNEL_BAD_ARGS):
        d = dirs[("args", case)] = root / f"args{i}"
        d.mkdir()
        jobs[("args", case)] = _proc(list(MPIRUN) + ["-np", "2", BIN] + args, cwd=d)
    results = _concurrently(jobs)
    return {k: (results[k], dirs[k]) for k in jobs}


@pytest.mark.parametrize("case,sets,words", KERNEL_BAD_SETS, ids=[c[0] for c in KERNEL_BAD_SETS])
def test_kernel_bad_set_exits_2(kernel_refusals, case, sets, words):
    proc, d = kernel_refusals[("set", case)]
    _assert_clean_refusal(proc, words)
    assert not (d / "data").exists() and not (d / "out" / "output.json").exists()


@pytest.mark.parametrize("case,name,text,words", KERNEL_BAD_FILES, ids=[c[0] for c in KERNEL_BAD_FILES])
def test_kernel_bad_config_file_exits_2(kernel_refusals, case, name, text, words):
    _assert_clean_refusal(kernel_refusals[("file", case)][0], words)


@pytest.mark.parametrize("case,args,words", KERNEL_BAD_ARGS, ids=[c[0] for c in KERNEL_BAD_ARGS])
def test_kernel_bad_arguments_exit_2(kernel_refusals, case, args, words):
    _assert_clean_refusal(kernel_refusals[("args", case)][0], words)


def test_kernel_dry_run_validates_for_the_given_rank_count(tmp_path):
    """--dry-run --ranks N (what the harness uses before launching) judges the rank count like a real N-rank run."""
    sets = tiny(tmp_path / "data", train=True, **{"num-files-train": 2, "num-samples-per-file": 2, "batch-size": 1})
    ok = subprocess.run(kernel_argv(1, sets, ["--dry-run", "--ranks", "4"]), capture_output=True, text=True,
                        timeout=60)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(kernel_argv(1, sets, ["--dry-run", "--ranks", "5"]), capture_output=True, text=True,
                         timeout=60)
    _assert_clean_refusal(bad, ["'num-files-train'", "5 ranks"])


def test_huge_but_valid_counts_cost_nothing_before_validation(tmp_path):
    """10^9 files (valid) used to allocate 16 GB of per-file dimensions before the config was even validated."""
    sets = tiny(tmp_path / "data", train=True, **{"num-files-train": 1000000000, "batch-size": 7})
    t0 = time.time()
    p = subprocess.run(kernel_argv(2, sets, ["--dry-run"]), capture_output=True, text=True, timeout=60 * SLACK,
                       preexec_fn=_bounded_memory)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["num-files-train"] == 1000000000
    assert time.time() - t0 < 20 * SLACK


# ---------- 4. determinism ----------

def _normalized_traces(r) -> dict[int, bytes]:
    out = {}
    for rank in range(2):
        blocks, stray = logvfd.split_blocks(logvfd.parse(r.stderr(rank)))
        out[rank] = "\n".join("|".join(logvfd.normalize_block(b)) for b in blocks).encode()
        assert stray == 0 and len(blocks) >= 16
    return out


def test_same_config_and_seed_give_byte_identical_traces(tmp_path):
    """Two runs on one dataset, and a run on a second dataset generated with the same config and seed: the normalized
    Log VFD traces of each rank are byte-identical. Another seed changes them (the comparison can see a change)."""
    for d in ("data", "data2"):
        assert run(tmp_path, 2, _gen(tmp_path / d, **{"record-length-stdev": 16384}), name=f"gen-{d}").rc == 0
    sets = tiny(tmp_path / "data", train=True, evaluation=True, epochs=2, **{"log-vfd": True,
                                                                           "record-length-stdev": 16384})
    a = run(tmp_path, 2, sets, log=True, name="a")
    b = run(tmp_path, 2, sets, log=True, name="b")
    c = run(tmp_path, 2, {**sets, "data-folder": str(tmp_path / "data2")}, log=True, name="c")
    other = run(tmp_path, 2, {**sets, "random-seed": 124}, log=True, name="other")
    for r in (a, b, c, other):
        assert r.rc == 0, r.proc.stderr
    ta, tb, tc, to = (_normalized_traces(r) for r in (a, b, c, other))
    for rank in range(2):
        digest = hashlib.sha256(ta[rank]).hexdigest()
        assert hashlib.sha256(tb[rank]).hexdigest() == digest, f"rank {rank}: second run differs"
        assert hashlib.sha256(tc[rank]).hexdigest() == digest, f"rank {rank}: regenerated dataset differs"
        assert to[rank] != ta[rank], f"rank {rank}: another seed gave the same trace"


# ---------- 5. memory safety: valgrind (ASan/UBSan: make test-asan) ----------

def _innermost_own_frame(error_xml: str) -> str | None:
    """The innermost frame outside valgrind's preload and the C library, if it is in our binary."""
    for fr in re.findall(r"<frame>.*?</frame>", error_xml, re.S):
        obj = (re.search(r"<obj>(.*?)</obj>", fr) or [None, ""])[1]
        if "vgpreload" in obj or re.search(r"/libc\.so|/ld-linux", obj):
            continue
        if obj == os.path.realpath(BIN):
            fn = (re.search(r"<fn>(.*?)</fn>", fr) or [None, "?"])[1]
            line = (re.search(r"<file>(.*?)</file>.*?<line>(\d+)</line>", fr, re.S))
            return f"{fn} ({line.group(1)}:{line.group(2)})" if line else fn
        return None
    return None


def test_valgrind_memcheck_tiny_run_has_no_error_or_leak_in_our_code(tmp_path):
    """One process (no mpirun: valgrind sees the rank and its forked reader processes) generates, trains and
    evaluates a tiny dataset, deleting it at the end. Errors and leaks whose innermost non-libc frame is in the
    kernel fail the test; the MPI library's own (its start-up allocations, kept until exit) are counted only."""
    if not shutil.which("valgrind"):
        if os.environ.get("H5DLIO_VALGRIND"):
            pytest.fail("valgrind not installed (make reliability-deps)")
        pytest.skip("valgrind not installed (make reliability-deps)")
    if SANITIZED:
        pytest.skip("valgrind cannot run an ASan binary")
    vg = tmp_path / "vg"
    vg.mkdir()
    supp = ["--suppressions=/usr/share/openmpi/openmpi-valgrind.supp"] \
        if Path("/usr/share/openmpi/openmpi-valgrind.supp").exists() else []
    argv = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite", "--child-silent-after-fork=no", "--num-callers=40",
            "--xml=yes", f"--xml-file={vg}/vg.%p.xml", *supp, BIN]
    sets = {**tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True,
                                         "num-files-train": 4, "num-files-eval": 2, "num-samples-per-file": 2,
                                         "record-length": 4096, "read-threads": 2, "keep-files": False,
                                         "record-length-stdev": 1024, "output-ranks-data": True}),
            "output-folder": str(tmp_path / "out")}
    for k, v in sets.items():
        argv += ["--set", f"{k}={_fmt(v)}"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "out" / "output.json").exists() and not list((tmp_path / "data").rglob("*.hdf5"))
    ours, library, processes = [], 0, 0
    for f in sorted(vg.glob("vg.*.xml")):
        text = f.read_text(errors="replace")
        processes += "<pid>" in text
        for e in re.findall(r"<error>.*?</error>", text, re.S):
            own = _innermost_own_frame(e)
            kind = re.search(r"<kind>(.*?)</kind>", e).group(1)
            if own:
                ours.append(f"{f.name}: {kind} in {own}")
            else:
                library += 1
    assert processes >= 3, "the rank and its two reader processes were checked"
    print(f"valgrind: {processes} processes, {len(ours)} errors in our code, {library} in libraries")
    assert not ours, "\n".join(ours)


# ---------- 6. the harness ----------

FAKE_DLIO = r'''#!{python}
"""A stand-in for dlio_benchmark: behaviour per step from {ctl}/<generate|train> (ok, fail, fail-once, sleep)."""
import json, os, sys, time
from pathlib import Path
ctl = Path({ctl!r})
args = sys.argv[1:]
gen = "++workload.workflow.generate_data=True" in args
out = Path(next(a.split("=", 1)[1] for a in args if a.startswith("++workload.output.folder=")))
step = "generate" if gen else "train"
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
mode = (ctl / step).read_text().strip() if (ctl / step).exists() else "ok"
if mode == "sleep":
    print("fake dlio: sleeping", flush=True)
    time.sleep(300)
if mode == "fail" or (mode == "fail-once" and not (ctl / (step + ".failed")).exists()):
    (ctl / (step + ".failed")).touch()
    print(f"fake dlio: injected failure in {{step}} on rank {{rank}}", file=sys.stderr)
    sys.exit(3)
out.mkdir(parents=True, exist_ok=True)
if not gen and rank == "0":
    (out / "per_epoch_stats.json").write_text(json.dumps({{"1": {{"duration": 0.5}}}}))
    (out / "summary.json").write_text(json.dumps({{"metric": {{"train_au_mean_percentage": 90.0}}}}))
'''

FAKE_PY = """#!/bin/sh
case "$*" in *"import dlio_benchmark"*) echo "{pkg}"; exit 0;; *harness/probe.py*) echo '{probe}'; exit 0;; esac
exec {python} "$@"
"""

FAKE_BASE = """model: fake
framework: pytorch
workflow: {generate_data: false, train: true, checkpoint: true}
dataset: {data_folder: data/fake, format: npz, num_files_train: 168, num_samples_per_file: 1,
          record_length: 146600628}
reader: {data_loader: pytorch, batch_size: 2, read_threads: 1, file_shuffle: seed, sample_shuffle: seed}
train: {epochs: 5, computation_time: 0.323}
"""

FAKE_WORKLOAD = """base: fake_base
overlay:
  dataset: {format: hdf5, keep_files: true}
  workflow: {checkpoint: false}
default_scale: tiny
scales:
  tiny:
    dataset: {num_files_train: 8, record_length: 65536}
    train: {epochs: 1, computation_time: 0.0}
"""


class Fake:
    """A fake reference DLIO venv (bin/dlio_benchmark a script, bin/python answering the config-dir probe), a
    workload over it, and how to run `python -m harness run` on them."""

    def __init__(self, tmp: Path, runs: Path | None = None):
        self.root = root = tmp / "fake"
        self.venv, self.ctl, self.workload = root / "venv", root / "ctl", tmp / "fakewl.yaml"
        self.runs = runs or tmp / "runs"
        (root / "venv" / "bin").mkdir(parents=True)
        self.ctl.mkdir()
        pkg = root / "pkg"
        (pkg / "configs" / "workload").mkdir(parents=True)
        (pkg / "configs" / "workload" / "fake_base.yaml").write_text(FAKE_BASE)
        dlio = root / "venv" / "bin" / "dlio_benchmark"
        dlio.write_text(FAKE_DLIO.format(python=sys.executable, ctl=str(self.ctl)))
        py = root / "venv" / "bin" / "python"
        # the probe's answer: DLIO 2.0.0's behaviour (tests/test_dlio_probe.py LINEAGES)
        probe = json.dumps({**LINEAGES["2.0.0"], "how": {}, "unknown": {}})
        py.write_text(FAKE_PY.format(pkg=pkg, python=sys.executable, probe=probe))
        for f in (dlio, py):
            f.chmod(0o755)
        self.workload.write_text(FAKE_WORKLOAD)

    def argv(self, *extra: str, workload: str | None = None, runs: Path | None = None) -> list[str]:
        a = [sys.executable, "-m", "harness", "run", "--dlio-venv", str(self.venv), "--runs-dir",
             str(runs or self.runs), "--profiles", "timing", "--ranks", "2", "--timeout", "120"]
        if "--resume" not in extra:
            a += ["--workload", workload or str(self.workload)]
        return a + list(extra)

    def harness(self, *extra: str, workload: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*extra, workload=workload), capture_output=True, text=True,
                              timeout=timeout * SLACK, cwd=REPO)


@pytest.fixture
def fake(tmp_path) -> Fake:
    return Fake(tmp_path)


def _run_dir(f) -> Path:
    dirs = [d for d in f.runs.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _wl(tmp_path: Path, text: str | bytes, name: str = "bad.yaml") -> str:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


HARNESS_BAD = [
    # (id, extra argv, workload text (None: the good fake one), words)
    ("--ranks 0", ["--ranks", "0"], None, ["RANKS=0 (--ranks)", "must be at least 1"]),
    ("--ranks -2", ["--ranks", "-2"], None, ["RANKS=-2 (--ranks)", "must be at least 1"]),
    ("--ranks two", ["--ranks", "two"], None, ["RANKS=two (--ranks)", "not a whole number"]),
    ("--repeat 0", ["--repeat", "0"], None, ["REPEAT=0 (--repeat)", "must be at least 1"]),
    ("--repeat x", ["--repeat", "x"], None, ["REPEAT=x (--repeat)", "not a whole number"]),
    ("--profiles bogus", ["--profiles", "timing,bogus"], None, ["PROFILES=timing,bogus (--profiles)", "bogus"]),
    ("--profiles empty", ["--profiles", ","], None, ["PROFILES=, (--profiles)", "empty list"]),
    ("--darshan-prefix not an install", ["--darshan-prefix", "/nonexistent/darshan"], None,
     ["DARSHAN_PREFIX=/nonexistent/darshan (--darshan-prefix)", "libdarshan.so"]),
    ("--timeout 0", ["--timeout", "0"], None, ["--timeout", "positive"]),
    ("--timeout -5", ["--timeout", "-5"], None, ["--timeout", "positive"]),
    ("--timeout nan", ["--timeout", "nan"], None, ["--timeout", "positive"]),
    ("--timeout inf", ["--timeout", "inf"], None, ["--timeout", "positive"]),
    ("--timeout word", ["--timeout", "soon"], None, ["argument --timeout"]),
    ("--launcher bogus", ["--launcher", "pbs"], None, ["argument --launcher", "invalid choice"]),
    ("unknown option", ["--frobnicate"], None, ["unrecognized arguments", "--frobnicate"]),
    ("--kernel-set without =", ["--kernel-set", "epochs"], None, ["--kernel-set", "KEY=VALUE"]),
    ("--kernel-set bad value", ["--kernel-set", "epochs=many"], None, ["refused by the kernel", "'epochs'", "many"]),
    ("--kernel-set unknown key", ["--kernel-set", "batch-sise=2"], None, ["'batch-sise'", "'batch-size'"]),
    ("--dlio-venv missing", ["--dlio-venv", "/nonexistent/venv"], None, ["/nonexistent/venv", "dlio_benchmark"]),
    ("--scale unknown", ["--scale", "huge"], None, ["SCALE=huge", "tiny"]),
    ("more ranks than samples", ["--ranks", "64"], None, ["refused by the kernel", "64 ranks"]),
    ("a shape DLIO 2.0.0 crashes on", ["--ranks", "3"], None,
     ["RANKS", "DLIO 2.0.0 cannot run this at 3 ranks", "8 training samples", "rank 2", "IndexError",
      "A rank count that divides 8"]),
    ("workload unknown name", [], "@nonexistent", ["WORKLOAD=nonexistent", "known:"]),
    ("workload missing file", [], "@/nonexistent/w.yaml", ["/nonexistent/w.yaml", "no such file"]),
    ("workload not a workload", [], "@/etc/passwd", ["top level must be a mapping"]),
    ("workload bad YAML", [], "base: [fake_base\n", ["bad YAML"]),
    ("workload bad UTF-8", [], b"base: \xff\xfe\n", ["cannot read"]),
    ("workload empty", [], "", ["top level must be a mapping"]),
    ("workload a list", [], "- base\n", ["top level must be a mapping"]),
    ("workload unknown key", [], FAKE_WORKLOAD + "extra: 1\n", ["unknown keys", "extra"]),
    ("workload no base", [], "scales: {tiny: {}}\n", ["no 'base'"]),
    ("workload unknown base", [], FAKE_WORKLOAD.replace("base: fake_base", "base: nope"),
     ["base 'nope'", "installed DLIO"]),
    ("overlay a list", [], "base: fake_base\noverlay: [1, 2]\nscales: {tiny: {}}\n",
     ["overlay must be a mapping", "list"]),
    ("scales not a mapping", [], "base: fake_base\nscales: [tiny]\n", ["'scales' must be a mapping"]),
    ("scale a number", [], "base: fake_base\nscales: {tiny: 5}\n", ["scales.tiny must be a mapping"]),
    ("default_scale a list", [], "base: fake_base\ndefault_scale: [1]\nscales: {tiny: {}}\n", ["default_scale"]),
    ("kernel: unknown key", [], FAKE_WORKLOAD + "    h5dlio: {batch-sise: 2}\n",
     ["refused by the kernel", "'h5dlio.batch-sise'"]),
    ("kernel: unknown DLIO key", [], FAKE_WORKLOAD.replace("{num_files_train: 8,", "{num_files_trian: 8,"),
     ["refused by the kernel", "'dataset.num_files_trian'"]),
    ("kernel: wrong type", [], FAKE_WORKLOAD.replace("epochs: 1,", "epochs: many,"),
     ["refused by the kernel", "'epochs'", "many"]),
    ("kernel: negative size", [], FAKE_WORKLOAD.replace("record_length: 65536", "record_length: -65536"),
     ["refused by the kernel", "'record-length'", "out of range"]),
    ("kernel: zero batch", [], FAKE_WORKLOAD + "    reader: {batch_size: 0}\n", ["'batch-size'", "out of range"]),
    ("kernel: batch larger than the dataset", [], FAKE_WORKLOAD + "    reader: {batch_size: 1000}\n",
     ["refused by the kernel", "'batch-size'", "1000"]),
    ("kernel: 64-bit overflow", [],
     FAKE_WORKLOAD.replace("record_length: 65536", "record_length: 99999999999999999999"),
     ["'record-length'", "out of range"]),
    ("kernel: 32-bit overflow", [], FAKE_WORKLOAD.replace("{num_files_train: 8,", "{num_files_train: 4294967296,"),
     ["'num-files-train'", "out of range"]),
    ("kernel: tf + pytorch loader", [], FAKE_WORKLOAD + "    framework: tensorflow\n", ["'framework'", "tensorflow"]),
    ("resume: no directory", ["--resume", "/nonexistent/run"], None, ["--resume", "no manifest.json"]),
    ("resume: manifest not JSON", ["--resume", "@run:{not json"], None, ["manifest.json is not valid JSON"]),
    ("resume: manifest a list", ["--resume", "@run:[]"], None, ["not a run manifest"]),
    ("resume: manifest incomplete", ["--resume", '@run:{"steps": {}}'], None, ["manifest.json lacks", "workload"]),
]


@pytest.fixture(scope="module")
def harness_refusals(tmp_path_factory) -> dict:
    """Every bad harness invocation of the table, with the fake DLIO, each with its own runs folder."""
    root = tmp_path_factory.mktemp("harness-bad-input")
    f = Fake(root)
    jobs, runs = {}, {}
    for i, (case, extra, workload, _) in enumerate(HARNESS_BAD):
        d = root / f"case{i}"
        d.mkdir()
        extra = list(extra)
        for k, x in enumerate(extra):
            if x.startswith("@run:"):  # a run directory holding this manifest text
                (d / "oldrun").mkdir()
                (d / "oldrun" / "manifest.json").write_text(x[5:])
                extra[k] = str(d / "oldrun")
        wl = None
        if isinstance(workload, str) and workload.startswith("@"):
            wl = workload[1:]
        elif workload is not None:
            wl = _wl(d, workload)
        runs[case] = d / "runs"
        jobs[case] = _proc(f.argv(*extra, workload=wl, runs=runs[case]), cwd=REPO)
    results = _concurrently(jobs)
    return {k: (results[k], runs[k]) for k in jobs}


@pytest.mark.parametrize("case,extra,workload,words", HARNESS_BAD, ids=[c[0] for c in HARNESS_BAD])
def test_harness_bad_options_and_workloads_exit_2(harness_refusals, case, extra, workload, words):
    p, runs = harness_refusals[case]
    assert p.returncode == 2, f"exit {p.returncode}: {p.stdout[-500:]} {p.stderr[-1500:]}"
    assert "Traceback" not in p.stderr, p.stderr
    assert re.search(r"(harness: error: |python -m harness run: error: )", p.stderr), p.stderr
    for w in words:
        assert w in p.stderr, f"{w!r} not in {p.stderr[-1500:]!r}"
    assert not runs.exists() or not any(runs.iterdir()), "bad input must not create a run directory"


def test_harness_records_a_failed_run_keeps_it_and_resumes(tmp_path, fake):
    """A reference-side failure: the run is 'failed' (exit 1), the failing step's rc and message are recorded, every
    other step's outputs are kept; --resume reruns only what did not succeed and completes."""
    (fake.ctl / "train").write_text("fail-once")
    p = fake.harness()
    assert p.returncode == 1, p.stdout + p.stderr
    rd = _run_dir(fake)
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "failed" and m["failed_steps"] == ["dlio.timing"]
    st = m["steps"]["dlio.timing"]
    assert st["status"] == "failed" and st["rc"] == 3 and "injected failure in train" in st["detail"]
    assert all(m["steps"][s]["status"] == "ok" for s in ("dlio.generate", "kernel.generate", "kernel.timing"))
    assert (rd / "kernel" / "timing" / "out" / "output.json").exists()
    assert json.loads((rd / "tables" / "timing.json").read_text())["kernel"], "what was collected is kept"
    started = {k: v["started"] for k, v in m["steps"].items() if v["status"] == "ok"}
    p = fake.harness("--resume", str(rd))
    assert p.returncode == 0, p.stdout + p.stderr
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "complete" and m["failed_steps"] == [] and m["collect_errors"] == {}
    assert {k: m["steps"][k]["started"] for k in started} == started, "finished steps are not rerun"
    assert "done earlier" in p.stdout


def test_harness_records_a_kernel_fault(tmp_path, fake):
    """The kernel side failing at run time (a dataset name it cannot find: exit 2 from every training launch) is
    recorded with the kernel's own message; nothing of the job is left running."""
    p = fake.harness("--kernel-set", "records-dataset-name=nope")
    assert p.returncode == 1, p.stdout + p.stderr
    m = json.loads((_run_dir(fake) / "manifest.json").read_text())
    st = m["steps"]["kernel.timing"]
    assert m["status"] == "failed" and st["rc"] == 2, (st["rc"], st["detail"])
    assert "nope" in st["detail"] and re.search(r"h5dlio: rank \d: error: reader process \d: ", st["detail"]), st
    assert_nothing_left(str(tmp_path))


def test_harness_ctrl_c_kills_the_launch_and_resumes(tmp_path, fake):
    """SIGINT to the harness (Ctrl-C) while a launch runs: the launch's whole process group is killed, the manifest
    says 'interrupted', the exit status is 130; --resume then completes the run."""
    (fake.ctl / "generate").write_text("sleep")
    job = Job(fake.argv(), cwd=REPO)
    job.wait_for("dlio.generate ...", timeout=120)
    time.sleep(1.0)
    assert survivors(str(fake.ctl.parent)), "the fake launch should be running"
    t0 = time.time()
    os.kill(job.p.pid, signal.SIGINT)
    assert job.finish(timeout=30) == 130, job.stderr
    assert time.time() - t0 < 15 * SLACK
    assert_nothing_left(str(fake.root))
    rd = _run_dir(fake)
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "interrupted" and "--resume" in job.stdout
    (fake.ctl / "generate").write_text("ok")
    p = fake.harness("--resume", str(rd))
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads((rd / "manifest.json").read_text())["status"] == "complete"


def test_harness_timeout_kills_a_hanging_launch(tmp_path, fake):
    (fake.ctl / "train").write_text("sleep")
    t0 = time.time()
    p = subprocess.run([x if x != "120" else "3" for x in fake.argv()], capture_output=True, text=True, timeout=120,
                       cwd=REPO)
    assert p.returncode == 1, p.stdout + p.stderr
    assert time.time() - t0 < 90 * SLACK
    m = json.loads((_run_dir(fake) / "manifest.json").read_text())
    st = m["steps"]["dlio.timing"]
    assert st["status"] == "timeout" and "killed after 3 s" in st["detail"]
    assert_nothing_left(str(fake.root))


def test_harness_manifest_write_is_atomic(tmp_path):
    """The manifest (and every table) is replaced whole or not at all: a write that fails midway (full file system)
    leaves the previous manifest and no temporary file."""
    from harness.run import RunDir
    where = tmp_path / "fs"
    if not _mount_tmpfs(where, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        rd = RunDir(where)
        rd.save({"status": "running", "steps": {}})
        before = rd.manifest_path.read_text()
        with pytest.raises(OSError):
            rd.save({"status": "complete", "steps": {f"s{i}": "x" * 100 for i in range(2000)}})
        assert rd.manifest_path.read_text() == before
        assert sorted(p.name for p in where.iterdir()) == ["manifest.json"]
    finally:
        _umount(where)
