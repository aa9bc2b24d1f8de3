"""Files written whole: readers (and a crash) see the old file or the new one, never a part."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_text_atomic(path: Path, text: str) -> None:
    """A temporary name of this process, flushed to disk, then renamed over the file. On failure the old file is
    untouched and the temporary removed."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    """obj as JSON (indent 1; what JSON has no type for, e.g. a Path, as its str), written whole."""
    write_text_atomic(path, json.dumps(obj, indent=1, default=str))


def evict(folder: Path, sync: bool = False) -> int:
    """Every file's clean pages under folder out of the page cache (posix_fadvise DONTNEED; no root needed, nothing
    else of the machine's cache touched): the next read comes from the device. sync: each file's dirty pages written
    first (fdatasync), so a file just written is evicted too; without it they stay. Returns the files evicted."""
    n = 0
    for f in folder.rglob("*"):
        if f.is_file():
            fd = os.open(f, os.O_RDONLY)
            try:
                if sync:
                    os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n
