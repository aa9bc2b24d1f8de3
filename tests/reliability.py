"""Helpers of the reliability tests (tests/test_reliability_*.py, issue 7): launching the kernel under mpirun as a
job that can be faulted, finding what survives it, and judging refusals and the files it leaves."""
from __future__ import annotations

import os
import queue
import re
import resource
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, h5tool, tiny

REPO = Path(__file__).resolve().parent.parent
SANITIZED = bool(os.environ.get("H5DLIO_SANITIZED"))  # make test-asan: slower, so wider time bounds
SLACK = 3.0 if SANITIZED else 1.0
CRASH_WORDS = ("Segmentation fault", "core dumped", "Aborted", "AddressSanitizer", "runtime error:",
               "LeakSanitizer", "exited on signal")


# ---------- helpers ----------

def fmt(v) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def kernel_argv(ranks: int, sets: dict, extra: list[str] | None = None) -> list[str]:
    argv = list(MPIRUN) + ["-np", str(ranks), BIN] + (extra or [])
    for k, v in sets.items():
        argv += ["--set", f"{k}={fmt(v)}"]
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


def _as_from_a_shell(preexec=None):
    """The child starts with SIGINT and SIGTERM at their defaults and unblocked, as a user's shell starts a program,
    whatever the test process inherited or a library in it changed (an ignored or blocked SIGINT is inherited across
    fork and exec, and a Python started with SIGINT ignored never raises KeyboardInterrupt): the Ctrl-C tests then
    test the program, not the test runner's signal state."""
    def run():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if preexec is not None:
            preexec()
    return run


class Job:
    """A launch in its own session, stdout/stderr collected by threads, stdout lines also queued for wait_for."""

    def __init__(self, argv: list[str], env: dict | None = None, preexec=None, cwd: Path | None = None):
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                                  preexec_fn=_as_from_a_shell(preexec), cwd=cwd, start_new_session=True)
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
    """The files of a data folder but the kernel's completion record (h5dlio-generation.json at its top)."""
    return sorted(p for p in data.rglob("*") if p.is_file() and p != data / "h5dlio-generation.json")


def h5_complete(path: Path, samples: int) -> bool:
    """A whole dataset file: opens, and both datasets are there with all samples (labels are written last)."""
    p = subprocess.run([h5tool("h5dump"), "-H", str(path)], capture_output=True, text=True, timeout=60)
    return p.returncode == 0 and p.stdout.count(f"( {samples}") >= 2 and 'DATASET "labels"' in p.stdout


def gen(data: Path, **kw) -> dict:
    return tiny(data, **{"generate-data": True, "train": False, "evaluation": False, **kw})


def handled_sigterm(stderr: str) -> int:
    """Ranks that ran their SIGTERM handler (which removes the rank's partial file, then reports). OpenMPI ends a job
    with SIGTERM and, 1 s later (odls_base_sigkill_timeout), SIGKILL: a rank blocked that long in a write (I/O
    pressure from other jobs) is killed first and keeps its .partial file."""
    return len(set(re.findall(r"h5dlio: rank (\d+): terminated \(SIGTERM\)", stderr)))


def mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return p.returncode == 0


def umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(path: Path) -> None:
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


def assert_clean_refusal(proc: subprocess.CompletedProcess, words: list[str]) -> None:
    assert proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr[-1500:]}"
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, f"want exactly one error line: {proc.stderr[-1500:]}"
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"
    assert not any(w in proc.stderr for w in CRASH_WORDS + ("MPI_ABORT",)), proc.stderr[-1500:]


def concurrently(jobs: dict) -> dict:
    """Launches are mostly start-up latency (mpirun, MPI_Init), not CPU: a table runs 8 at a time (4 under ASan,
    whose start-up is CPU)."""
    with ThreadPoolExecutor(4 if SANITIZED else 8) as ex:
        futures = {k: ex.submit(f) for k, f in jobs.items()}
        return {k: f.result() for k, f in futures.items()}


def bounded_memory() -> None:
    """preexec: 4 GiB of address space per process, so a regression that allocates for a huge (bad or valid) count
    fails fast instead of pushing the machine into the OOM killer (not under ASan: its shadow needs terabytes)."""
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def proc(argv: list[str], cwd: Path | None = None, timeout: float = 180):
    return lambda: subprocess.run(argv, capture_output=True, text=True, timeout=timeout * SLACK, cwd=cwd,
                                  preexec_fn=bounded_memory)
