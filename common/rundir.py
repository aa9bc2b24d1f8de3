"""A run directory's shared files: manifest.json (written by the harness after every launch) and tables/ (written by
the harness's collection and by validate). The one writer of both: each file is replaced whole (common.fileio), so
an interrupted run or validation never leaves half a table."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.fileio import write_json_atomic, write_text_atomic

# the names of a run directory, spelled here only
MANIFEST = "manifest.json"   # what the harness ran (written after every launch)
VERDICT = "verdict.json"     # what validate judged
TABLES = "tables"            # parsed profiler output and the checks' derived tables
SIDES = ("dlio", "kernel")   # the two programs compared; each has <run>/<side>/
BIG_TABLE = 1 << 20          # a table of this many bytes or more is written compact (RunDir.write_table)



def _expand(d: dict) -> dict:
    """A table stored compact, read back whole: a Log VFD rank table (profiles/logvfd.py: each distinct per-open
    block once in "block_set", the opens as indices into it in "block_seq") with its "blocks", one list per open,
    equal blocks one shared list (8 bytes per open, not a copy of the block); a dataset table
    (harness/describe_dataset.py: each distinct structure once in "file_groups", with its files) with its "files",
    {file: structure}, the files of a group sharing one dict."""
    if "block_seq" in d and "block_set" in d:
        uniq, seq = d.pop("block_set"), d.pop("block_seq")
        d["blocks"] = [uniq[i] for i in seq]
    if "file_groups" in d and "files" not in d:
        d["files"] = {f: g["structure"] for g in d.pop("file_groups") for f in g["files"]}
    return d


def loads_table(text: str) -> Any:
    """A table's JSON text parsed (a compact Log VFD or dataset table expanded: _expand)."""
    return json.loads(text, object_hook=_expand) if '"block_seq"' in text or '"file_groups"' in text \
        else json.loads(text)


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.manifest_path = self.path / MANIFEST
        self.verdict_path = self.path / VERDICT
        self.tables = self.path / TABLES

    def load(self) -> dict:
        return json.loads(self.manifest_path.read_text())

    def save(self, m: dict) -> None:
        write_json_atomic(self.manifest_path, m)

    def table(self, name: str) -> Any:
        """tables/<name> parsed, or None when there is no such table."""
        p = self.tables / name
        return loads_table(p.read_text()) if p.exists() else None

    def write_table(self, name: str, obj: Any) -> None:
        """tables/<name>: a str is stored as it is (already JSON: e.g. the Log VFD tables, the largest, written
        compact), anything else as JSON with indent 1, or compact from BIG_TABLE bytes on (indent takes json's
        Python encoder, ~10x slower than its C one: 3 s of a 10^4-file validation for files-dftracer.json)."""
        self.tables.mkdir(parents=True, exist_ok=True)
        if isinstance(obj, str):
            write_text_atomic(self.tables / name, obj)
            return
        text = json.dumps(obj, default=str)
        if len(text) >= BIG_TABLE:
            write_text_atomic(self.tables / name, text)
        else:
            write_json_atomic(self.tables / name, obj)


def verdict_label(v: dict) -> str:
    """The verdict as printed and shown: PASS or FAIL, a kernel-only run's never a bare PASS."""
    return v["verdict"].upper() + (" (kernel against the analytic model only, not DLIO)"
                                    if v.get("scope") == "kernel-model" else "")
