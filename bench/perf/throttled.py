"""A storage whose read bandwidth a test sets: an ext4 file system on a loop device over a sparse file, read
bandwidth limited by cgroup v1's blkio.throttle.read_bps_device for the processes of one cgroup (docs/sizing.md).
Reads served by the page cache are not throttled: what is read must be read with O_DIRECT. Needs root, a free loop
device, mkfs.ext4 and the blkio controller; `Unavailable` says which is missing. Everything is removed on exit: the
limit, the mount, the loop device, the cgroup, the file."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")


class Unavailable(RuntimeError):
    pass


@dataclass
class Throttled:
    mount: Path      # the file system's mount point
    cgroup: Path     # a process whose pid is written to cgroup/cgroup.procs (and its children) is throttled

    def enter(self) -> None:
        """For subprocess's preexec_fn: the child joins the cgroup before it runs anything."""
        (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))

    @property
    def name(self) -> str:
        """The cgroup as /proc/<pid>/cgroup names it on its blkio line."""
        return "/" + str(self.cgroup.relative_to(BLKIO))


def leave(pid: int) -> None:
    """Process pid back in the root blkio cgroup (unthrottled); the processes it starts after inherit that."""
    (BLKIO / "cgroup.procs").write_text(str(pid))


def blkio_of(pid: int) -> str | None:
    """Process pid's blkio cgroup from /proc/<pid>/cgroup ("/" is the root), None once it has ended."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    return next((ln.split(":", 2)[2] for ln in lines if ln.split(":", 2)[1].split(",").count("blkio")), None)


def _environ(pid: str) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0") if "=" in kv)


class Tasks(threading.Thread):
    """Every task of every job step of the Slurm whose SLURM_CONF is `conf`, seen while it runs (a scan of /proc each
    `every` seconds: a task's environment holds SLURM_CONF, SLURM_STEP_ID and SLURMD_NODENAME, its node): pid ->
    (node, blkio cgroup, command). Use as a context manager around the launches."""

    def __init__(self, conf: Path, every: float = 0.1):
        super().__init__(daemon=True)
        self.conf, self.every, self.seen, self._done = str(conf), every, {}, threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.every):
            for d in os.listdir("/proc"):
                if not d.isdigit() or int(d) in self.seen or int(d) == os.getpid():
                    continue
                env = _environ(d)
                if env.get("SLURM_CONF") != self.conf or "SLURM_STEP_ID" not in env or "SLURMD_NODENAME" not in env:
                    continue
                cg = blkio_of(int(d))
                with contextlib.suppress(OSError):
                    cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    if cg is not None:
                        self.seen[int(d)] = (env["SLURMD_NODENAME"], cg, cmd.strip()[:200])

    def __enter__(self) -> Tasks:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self.join()


def escapes(seen: dict, cgroup: str, nodes: list[str]) -> list[str]:
    """What is wrong with the tasks seen (Tasks.seen) for a storage every node reads through `cgroup`: a node none of
    whose tasks was seen, and each task in another blkio cgroup (unthrottled), named with its node and command."""
    out = [f"no task seen on {n}" for n in nodes if not any(v[0] == n for v in seen.values())]
    return out + [f"pid {pid} on {node} in blkio cgroup {cg}, not {cgroup}: {cmd}"
                  for pid, (node, cg, cmd) in sorted(seen.items()) if cg != cgroup]


def _run(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Unavailable(f"{' '.join(argv)}: {p.stderr.strip()[-300:]}")
    return p.stdout.strip()


def check() -> None:
    if os.geteuid() != 0:
        raise Unavailable("not root (loop devices, mounts and cgroups need it)")
    if not (BLKIO / "blkio.throttle.read_bps_device").exists():
        raise Unavailable(f"no cgroup v1 blkio controller at {BLKIO} (cgroup v2's io.max is not handled here)")
    missing = [p for p in ("losetup", "mkfs.ext4", "mount", "umount", "lsblk") if not shutil.which(p)]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not on PATH")


@contextlib.contextmanager
def storage(read_bps: int, size: str = "2G") -> Iterator[Throttled]:
    """The throttled file system for the duration of the block."""
    check()
    root = Path(tempfile.mkdtemp(prefix="h5dlio-throttled-", dir="/tmp"))
    img, mnt, cg = root / "fs.img", root / "mnt", BLKIO / f"h5dlio-throttled-{os.getpid()}-{root.name[-8:]}"
    loop = mm = None
    mnt.mkdir()
    try:
        _run(["truncate", "-s", size, str(img)])
        loop = _run(["losetup", "-f", "--show", str(img)])
        _run(["mkfs.ext4", "-q", loop])
        _run(["mount", loop, str(mnt)])
        mm = _run(["lsblk", "-dno", "MAJ:MIN", loop]).replace(" ", "")
        cg.mkdir()
        (cg / "blkio.throttle.read_bps_device").write_text(f"{mm} {read_bps}")
        yield Throttled(mnt, cg)
    finally:
        if mm and cg.exists():
            with contextlib.suppress(OSError):
                (cg / "blkio.throttle.read_bps_device").write_text(f"{mm} 0")
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=120)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True, timeout=120)
        with contextlib.suppress(OSError):
            cg.rmdir()
        shutil.rmtree(root, ignore_errors=True)
