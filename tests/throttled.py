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
