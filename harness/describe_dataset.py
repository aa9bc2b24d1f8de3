"""tables/dataset-<side>.json: the structure of every file a generation step wrote, for dataset.files and
dataset.structure, both sides described by the same program. HDF5 files by `h5dlio-describe` (bench/tools/describe.c,
built beside the kernel against its HDF5: per file the root group's datasets, shapes, dtypes, layout, chunks,
filters, as harness/inspect_dataset.py's h5py describer gives them, in ~1/6 of h5py's CPU time: 20,000 files 3.2 s
against 21 s, bench/results/2026-11-27-validation-scale);
DLIO 3.x's .npz/.jpeg/.png files by inspect_dataset.py with the reference venv's Python (zip members, CRCs).
Every file is described; the table stores each distinct structure once with its files ("file_groups"), which
common.rundir.loads_table reads back as the per-file "files" map (one shared dict per structure)."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from harness.paths import KERNEL_BIN, REPO

DESCRIBER = KERNEL_BIN.resolve().parent / "h5dlio-describe"
INSPECT = REPO / "harness" / "inspect_dataset.py"


def _c_lines(folder: Path, describer: Path) -> tuple[dict[str, list[str]], list[str]]:
    """({description text: [files]}, [files for inspect_dataset.py]) from the C describer, streamed line by line."""
    groups: dict[str, list[str]] = {}
    other: list[str] = []
    with tempfile.TemporaryFile(mode="w+") as err:
        with subprocess.Popen([str(describer), str(folder)], stdout=subprocess.PIPE, stderr=err, text=True) as p:
            assert p.stdout is not None
            for line in p.stdout:
                name, _, desc = line.rstrip("\n").partition("\t")
                name = json.loads(name) if "\\" in name else name[1:-1]
                if desc == "other":
                    other.append(name)
                else:
                    groups.setdefault(desc, []).append(name)
        err.seek(0)
        if p.returncode != 0:
            raise OSError(f"{describer} {folder}: exit {p.returncode}: {err.read()[-400:].strip()}")
    return groups, other


def _python(folder: Path, dlio_venv: Path, only_other: bool) -> dict:
    """inspect_dataset.py's {file: description} (all files, or only the non-HDF5 ones)."""
    argv = [str(dlio_venv / "bin" / "python"), str(INSPECT), str(folder)] + ["--only-other"] * only_other
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(f"inspect_dataset.py {folder}: exit {p.returncode}: {p.stderr[-400:].strip()}")
    return json.loads(p.stdout)["files"]


def describe(folder: Path, dlio_venv: Path, describer: Path = DESCRIBER) -> dict:
    """The dataset table of one side's data folder: {"folder", "described_by", "file_groups": [{"structure",
    "files"}]}, groups in the order of their first file, files sorted. Without the C describer (a kernel built
    elsewhere: H5DLIO_KERNEL_BIN) every file is described by h5py, as before, and "described_by" says so."""
    if not folder.is_dir():  # a side whose generation wrote no folder (a failed or fake launch): nothing to describe,
        return {"folder": str(folder), "described_by": "nothing (no such folder)", "files_described": 0,
                "file_groups": []}  # as the h5py describer's rglob of a missing folder gave
    if describer.exists():
        groups, other = _c_lines(folder, describer)
        by = [describer.name]
        if other:
            by.append("inspect_dataset.py (h5py, zip)")
            for name, d in _python(folder, dlio_venv, True).items():
                groups.setdefault(json.dumps(d, sort_keys=True), []).append(name)
    else:
        groups, by = {}, [f"inspect_dataset.py (h5py: no {describer})"]
        for name, d in _python(folder, dlio_venv, False).items():
            groups.setdefault(json.dumps(d, sort_keys=True), []).append(name)
    rows = [{"structure": json.loads(k), "files": sorted(v)} for k, v in groups.items()]
    rows.sort(key=lambda g: g["files"][0])
    return {"folder": str(folder), "described_by": ", ".join(by), "files_described": sum(len(g["files"]) for g in rows),
            "file_groups": rows}
