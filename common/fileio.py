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
