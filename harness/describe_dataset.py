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
import threading
from pathlib import Path

from harness.paths import KERNEL_BIN, REPO

DESCRIBER = KERNEL_BIN.resolve().parent / "h5dlio-describe"
INSPECT = REPO / "harness" / "inspect_dataset.py"
GEN_RECORD = "h5dlio-generation.json"  # bench/src/gen.h GEN_RECORD


def _c_part(folder: Path, describer: Path, part: str | None, out: tuple[dict, list]) -> None:
    """One describer process's lines (its --part K/N of the files, or all of them) into out ({description text:
    [files]}, [files for inspect_dataset.py]), streamed line by line; a failure raised as OSError."""
    groups, other = out
    argv = [str(describer)] + (["--part", part] if part else []) + [str(folder)]
    with tempfile.TemporaryFile(mode="w+") as err:
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True) as p:
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


def _c_lines(folder: Path, describer: Path, parts: int = 1) -> tuple[dict[str, list[str]], list[str]]:
    """({description text: [files]}, [files for inspect_dataset.py]) from the C describer: `parts` processes at once,
    each describing the files of its --part (a folder of 10^6 files is bound by the file system's latency, which
    concurrent opens hide), their lines merged (the caller sorts every group's files)."""
    outs = [({}, []) for _ in range(parts)]
    if parts == 1:
        _c_part(folder, describer, None, outs[0])
    else:
        errors: list[OSError] = []

        def run(k: int) -> None:
            try:
                _c_part(folder, describer, f"{k}/{parts}", outs[k])
            except OSError as e:
                errors.append(e)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(parts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    groups: dict[str, list[str]] = {}
    for g, _ in outs:
        for desc, names in g.items():
            groups.setdefault(desc, []).extend(names)
    return groups, [n for _, o in outs for n in o]


def _python(folder: Path, dlio_venv: Path, only_other: bool) -> dict:
    """inspect_dataset.py's {file: description} (all files, or only the non-HDF5 ones)."""
    argv = [str(dlio_venv / "bin" / "python"), str(INSPECT), str(folder)] + ["--only-other"] * only_other
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(f"inspect_dataset.py {folder}: exit {p.returncode}: {p.stderr[-400:].strip()}")
    return json.loads(p.stdout)["files"]


def describe(folder: Path, dlio_venv: Path, describer: Path = DESCRIBER, parts: int = 1) -> dict:
    """The dataset table of one side's data folder: {"folder", "described_by", "file_groups": [{"structure",
    "files"}]}, groups in the order of their first file, files sorted. Without the C describer (a kernel built
    elsewhere: H5DLIO_KERNEL_BIN) every file is described by h5py, as before, and "described_by" says so."""
    if not folder.is_dir():  # a side whose generation wrote no folder (a failed or fake launch): nothing to describe,
        return {"folder": str(folder), "described_by": "nothing (no such folder)", "files_described": 0,
                "file_groups": []}  # as the h5py describer's rglob of a missing folder gave
    if describer.exists():
        groups, other = _c_lines(folder, describer, parts)
        by = [describer.name]
        if other:
            by.append("inspect_dataset.py (h5py, zip)")
            for name, d in _python(folder, dlio_venv, True).items():
                groups.setdefault(json.dumps(d, sort_keys=True), []).append(name)
    else:
        groups, by = {}, [f"inspect_dataset.py (h5py: no {describer})"]
        for name, d in _python(folder, dlio_venv, False).items():
            groups.setdefault(json.dumps(d, sort_keys=True), []).append(name)
    record = folder / GEN_RECORD  # the kernel's completion record (bench/src/gen.h), no dataset file: not described
    rows = [{"structure": json.loads(k), "files": sorted(n for n in v if n != GEN_RECORD)} for k, v in groups.items()]
    rows = [r for r in rows if r["files"]]
    rows.sort(key=lambda g: g["files"][0])
    return {"folder": str(folder), "described_by": ", ".join(by), "files_described": sum(len(g["files"]) for g in rows),
            "generation_record": _record(record), "file_groups": rows}


def _record(path: Path) -> dict | str | None:
    """The kernel's completion record as it reads (None: no record, a DLIO folder; a string: not JSON, e.g. cut
    short by an interrupted generation)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text[:200]
