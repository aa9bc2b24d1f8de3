"""A run directory's shared files: manifest.json (written by the harness after every launch), verdict.json (by
validate) and tables/ (by the harness's collection and by validate). RunDir is their one reader and one writer (who
writes what: docs/validation.md "Reading a run directory"): each file is replaced whole (common.fileio), so an
interrupted run or validation never leaves half a table."""
from __future__ import annotations

import json
import re
from functools import cached_property
from pathlib import Path
from typing import Any

from common.fileio import write_json_atomic, write_text_atomic

# the names of a run directory, spelled here only (docs/validation.md "The run directory"; tests/test_sources.py holds
# every product folder to it: RUN_NAMES)
MANIFEST = "manifest.json"   # what the harness ran (written after every launch)
VERDICT = "verdict.json"     # what validate judged
PROVENANCE = "provenance.json"  # MLPerf Storage's stamp of the run, not a submission (common/coreconfig.py)
PREDECESSORS = "predecessors.json"  # the earlier runs on the same storage a run store held (python -m pipeline)
WORKLOAD = "workload.yaml"   # the merged workload the kernel ran (also each sweep cell's and sizing trial's)
TABLES = "tables"            # parsed profiler output and the checks' derived tables
TIMING = "timing.json"       # tables/timing.json: the timing profile's repetitions per side
REPORT = "report"            # python -m reports' output folder (report.md, report.html, figures/, tables/)
REPORT_TABLES = "tables"     # report/tables/: the report's LaTeX tables, one .tex per table
SIDES = ("dlio", "kernel")   # the two programs compared; each has <run>/<side>/
SIDE_LABEL = {"dlio": "DLIO", "kernel": "kernel"}   # each side as the report names it
# spelled nowhere else (not SIDES)
RUN_NAMES = (MANIFEST, VERDICT, PROVENANCE, PREDECESSORS, WORKLOAD, TABLES, TIMING, REPORT)
SCHEMA = 1                   # manifest.json's "schema": the layout this tree writes, the highest it reads (manifest)
BIG_TABLE = 1 << 20          # a table of this many bytes or more is written compact (RunDir.write_table)
SHARE_LIMIT = 1 << 16        # distinct shared objects per table read with shared=True (loads_table)
TAIL = 1 << 16               # the first window table_member reads from a table's end (doubled up to TAIL_MAX)
TAIL_MAX = 1 << 26



def _expand(d: dict) -> dict:
    """A table stored compact, read back whole: a Log VFD rank table (profiles/logvfd/records.py: each distinct per-open
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


class Shared(dict):
    """An object of a table read with shared=True (loads_table): every equal object of the table is this one, so it
    is read-only (a change would change them all: copy it, dict(x)) and hashed by identity."""
    __hash__ = object.__hash__  # type: ignore[assignment]

    def _read_only(self, *a, **k):
        raise TypeError("a shared table object is read-only (copy it first: dict(x))")

    __setitem__ = __delitem__ = __ior__ = pop = popitem = clear = update = setdefault = _read_only  # type: ignore

    def __reduce__(self):  # a copy (copy, deepcopy, pickle) is a plain dict of its own
        return dict, (dict(self),)


class _Sharing:
    """json's object_pairs_hook for loads_table(shared=True): an object whose values are all integers and shared
    objects (a file's counts, its accesses, a whole per-file row of counts) is the one Shared object of its content,
    at most SHARE_LIMIT distinct ones per table (past that, a plain dict each); any other a dict (a compact table
    expanded: _expand); keys in skip left out of every object."""

    def __init__(self, skip: tuple[str, ...]):
        self.skip, self.seen = frozenset(skip), {}

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict:
        if self.skip:
            pairs = [p for p in pairs if p[0] not in self.skip]
        for _, v in pairs:
            if type(v) is not int and type(v) is not Shared:  # (a bool or float equals an int: true == 1 == 1.0)
                return _expand(dict(pairs))
        key = tuple(pairs)
        hit = self.seen.get(key)
        if hit is None:
            if len(self.seen) >= SHARE_LIMIT:
                return dict(pairs)
            hit = self.seen[key] = Shared(pairs)
        return hit


def loads_table(text: str, shared: bool = False, skip: tuple[str, ...] = ()) -> Any:
    """A table's JSON text parsed (a compact Log VFD or dataset table expanded: _expand). shared: equal objects of
    integers (and of such objects) are one read-only object (Shared), so a per-file table of 10^6 files' equal counts
    holds each file's name and one pointer, not a dict per file and field (~1 KB per file); skip (with shared): keys
    left out of every object (fields the reader does not use, e.g. a time per file that makes every row distinct)."""
    if shared:
        return json.loads(text, object_pairs_hook=_Sharing(skip))
    return json.loads(text, object_hook=_expand) if '"block_seq"' in text or '"file_groups"' in text \
        else json.loads(text)


def last_member(text: str, key: str) -> tuple[bool, Any]:
    """(True, value) when `key` names the last member of the JSON object whose text ends `text` (a whole table or its
    end), else (False, None). `"key":` outside a string is always a key (a quote in a string is escaped); a member's
    value followed by nothing but the one closing brace is the outermost object's last member (a deeper one is
    followed by a brace for each level)."""
    dec = json.JSONDecoder()
    for m in reversed(list(re.finditer(f'"{re.escape(key)}"\\s*:\\s*', text))):
        try:
            value, end = dec.raw_decode(text, m.end())
        except ValueError:
            continue
        if text[end:].strip() == "}":
            return True, value
    return False, None


class SchemaError(ValueError):
    """A manifest this tree cannot read: a schema newer than SCHEMA, or not a schema number (exit 2 by its readers)."""


def manifest_schema(m: dict, path: Path | str = MANIFEST) -> int:
    """The run-directory schema of manifest m (read from path, named in the refusal). A manifest without "schema"
    (every run made before the number existed) is schema 0, whose migration to 1 changes nothing: schema 1 names
    the same files and folders with the same contents and only adds the number. Schema SCHEMA or lower is read as
    it is; a higher one (a run made by a newer tree) or a value that is not a whole number raises SchemaError."""
    n = m.get("schema", 0)
    if type(n) is not int or n < 0:
        raise SchemaError(f"{path}: schema {n!r} is not a schema number (0 to {SCHEMA})")
    if n > SCHEMA:
        raise SchemaError(f"{path}: schema {n}, newer than this tree reads (schema {SCHEMA} at most): a run made by "
                          "a newer h5dlio, read it with that tree")
    return n


def read_manifest(path: Path) -> dict:
    """The manifest at path, the one reading of a run's manifest.json (RunDir.load: validate, the store, --resume;
    reports; fidelity's mutant matrix), its schema checked by manifest_schema (an older schema migrated: 0 -> 1
    changes nothing, the dict is returned as stored; a newer one refused, SchemaError). json.JSONDecodeError and
    OSError pass through."""
    m = json.loads(Path(path).read_text())
    if isinstance(m, dict):
        manifest_schema(m, path)
    return m


class RunDir:
    """A run directory, the one reader (and writer) of its shared files (docs/validation.md "Reading a run
    directory"): validate.checks.Run and reports.rundir.RunData are this class and what only they add (the analytic
    model and the derived tables; the report's links), and the narrow views a profile sees (profiles.RunView,
    ReportView) are satisfied by them. Reading: the manifest once (read_manifest), the verdict once, tables/ (kept
    when `cache`: a report reads a table from several sections; validate reads each once and keeps none). Writing:
    save (manifest.json), write_verdict, write_provenance, write_table: each file replaced whole."""
    cache = False          # keep every table read (reports); validate's tables are too large to keep

    def __init__(self, path: Path):
        self.path = Path(path)
        self.manifest_path = self.path / MANIFEST
        self.verdict_path = self.path / VERDICT
        self.tables = self.path / TABLES

    # ---------------------------------------------------------------- manifest.json and verdict.json
    def load(self) -> dict:
        """The manifest read now (read_manifest: a schema newer than SCHEMA raises SchemaError); `manifest` keeps it."""
        return read_manifest(self.manifest_path)

    @cached_property
    def manifest(self) -> dict:
        """manifest.json, read once (load): OSError when absent, ValueError when not JSON or of a newer schema."""
        return self.load()

    def save(self, m: dict) -> None:
        """manifest.json written (the harness, after every launch) and kept as `manifest`."""
        write_json_atomic(self.manifest_path, m)
        self.__dict__["manifest"] = m

    @cached_property
    def verdict(self) -> dict | None:
        """verdict.json, read once; None when the run was never validated (ValueError when not JSON)."""
        return json.loads(self.verdict_path.read_text()) if self.verdict_path.exists() else None

    @property
    def checks(self) -> list[dict]:
        """The verdict's rows ([] for a run never validated)."""
        return (self.verdict or {}).get("checks", [])

    def check(self, name: str) -> dict | None:
        """The verdict's row of that name, or None."""
        return next((c for c in self.checks if c["name"] == name), None)

    def write_verdict(self, v: dict) -> None:
        """verdict.json written (validate) and kept as `verdict`."""
        write_json_atomic(self.verdict_path, v)
        self.__dict__["verdict"] = v

    @cached_property
    def predecessors(self) -> dict | None:
        """predecessors.json (the earlier runs of this workload on this storage in the run store the pipeline kept it
        in: pipeline.link_predecessors), None when the run was not kept in a store."""
        f = self.path / PREDECESSORS
        return json.loads(f.read_text()) if f.exists() else None

    def write_predecessors(self, p: dict) -> None:
        """predecessors.json written (the pipeline, before the report) and kept as `predecessors`."""
        write_json_atomic(self.path / PREDECESSORS, p)
        self.__dict__["predecessors"] = p

    def write_provenance(self, p: dict) -> None:
        """provenance.json written (the harness: MLPerf Storage's stamp of the run, common/coreconfig.py)."""
        write_json_atomic(self.path / PROVENANCE, p)

    # ---------------------------------------------------------------- what the manifest says
    def step(self, name: str) -> dict | None:
        """The manifest's record of launch `name` (status, rc, wall_s, workdir, ...), None when it did not run."""
        return self.manifest.get("steps", {}).get(name)

    @property
    def cfg(self) -> dict:
        """The merged workload the run ran (manifest workload.config; KeyError when the manifest has none)."""
        return self.manifest["workload"]["config"]

    @property
    def config(self) -> dict:
        """cfg, {} when the manifest has none (a report renders what there is)."""
        return self.manifest.get("workload", {}).get("config", {})

    @property
    def ranks(self) -> int:
        return int(self.manifest["ranks"])

    @property
    def release(self) -> str:
        """The kernel entry the run used (manifests from before the dlio block: 2.0.0)."""
        return (self.manifest.get("dlio") or {}).get("entry") or "2.0.0"

    def absent_reason(self, profile: str) -> str:
        """Why a profile's tables are absent, from the manifest (skipped_profiles, the launches, the run status)."""
        m = self.manifest
        skipped = m.get("skipped_profiles") or {}
        if profile in skipped:
            return f"skipped by the harness: {skipped[profile]}"
        profiles = m.get("profiles", [])
        if profile not in profiles:
            return f"not requested for this run (profiles: {', '.join(profiles) or 'none'})"
        failed = [(n, r) for n, r in m.get("steps", {}).items()
                  if n.split(".", 1)[-1].startswith(profile) and r.get("status") != "ok"]
        if failed:
            n, r = failed[0]
            return f"launch `{n}` {r.get('status')}: {str(r.get('detail', ''))[:300]}"
        if m.get("status") != "complete":
            return f"the run is {m.get('status')}; its launches did not all finish"
        return "requested, but its tables were not written (see the launches in the workload section)"

    # ---------------------------------------------------------------- tables/
    def _kept(self) -> dict:
        return self.__dict__.setdefault("_tables", {})

    def table(self, name: str, shared: bool = False, skip: tuple[str, ...] = ()) -> Any:
        """tables/<name> parsed, or None when there is no such table (shared, skip: loads_table); kept when
        `cache` (as first read: shared and skip of a later call do not apply)."""
        if self.cache and name in self._kept():
            return self._kept()[name]
        t = self._read(name, shared, skip)
        if self.cache:
            self._kept()[name] = t
        return t

    def _read(self, name: str, shared: bool = False, skip: tuple[str, ...] = ()) -> Any:
        p = self.tables / name
        return loads_table(p.read_text(), shared, skip) if p.exists() else None

    def has_table(self, name: str) -> bool:
        return (self.tables / name).exists()

    def table_names(self, prefix: str) -> list[str]:
        """The names of the tables whose name starts with prefix (tables/<prefix>*.json), sorted."""
        return sorted(p.name for p in self.tables.glob(f"{prefix}*.json"))

    def table_part(self, name: str, key: str) -> Any:
        """tables/<name>[key], or None: only that part read (table_member) and, when `cache`, kept (a profile's
        per-file tables are the largest of a run: ~0.5 GB of JSON at 10^6 files, where the report needs their
        summary); from the whole table when it was read already."""
        kept = self._kept() if self.cache else {}
        if name in kept:
            return (kept[name] or {}).get(key)
        part = f"{name}#{key}"
        if part not in kept:
            value = self.table_member(name, key)
            if not self.cache:
                return value
            kept[part] = value
        return kept[part]

    def table_member(self, name: str, key: str) -> Any:
        """tables/<name>[key], or None: read from the table's end when `key` is its last member (a per-file table's
        summary after its rows: DFTracer's `metadata`; last_member), a window of TAIL bytes doubled up to TAIL_MAX,
        else the table parsed whole. A 10^6-file table is ~0.5 GB of text and ~2 GB parsed; its summary, kB."""
        p = self.tables / name
        if not p.exists():
            return None
        size, n = p.stat().st_size, TAIL
        with p.open("rb") as f:
            while True:
                f.seek(max(0, size - n))
                found, value = last_member(f.read().decode("utf-8", "replace"), key)  # (a cut character: 1st)
                if found:
                    return value
                if n >= size or n >= TAIL_MAX:
                    break
                n *= 2
        t = self._read(name)
        return t.get(key) if isinstance(t, dict) else None

    def write_table(self, name: str, obj: Any) -> None:
        """tables/<name>: a str is stored as it is (already JSON: e.g. the Log VFD tables, the largest, written
        compact), anything else as JSON with indent 1, or compact from BIG_TABLE bytes on (indent takes json's
        Python encoder, ~10x slower than its C one: 3 s of a 10^4-file validation for files-dftracer.json)."""
        self.tables.mkdir(parents=True, exist_ok=True)
        self.__dict__.pop("_tables", None)  # (what was kept of tables/ is stale)
        if isinstance(obj, str):
            write_text_atomic(self.tables / name, obj)
            return
        text = json.dumps(obj, default=str)
        if len(text) >= BIG_TABLE:
            write_text_atomic(self.tables / name, text)
        else:
            write_json_atomic(self.tables / name, obj)


def verdict_label(v: dict) -> str:
    """The verdict as printed and shown: PASS or FAIL, never a bare PASS for a kernel-only run (qualified) or a run made
    with a kernel mutant injected (PASS WITH MUTANT <name>: it survived); a FAIL names the reasons that are not a
    failed comparison (an incomplete run, a kernel-only run that compared nothing against the model) and the mutant."""
    notes = ["kernel against the analytic model only, not DLIO"] * (v.get("scope") == "kernel-model")
    notes += v.get("reasons") or []
    label = v["verdict"].upper()
    if v.get("mutant") and v["verdict"] == "pass":
        label = f"PASS WITH MUTANT {v['mutant']}"
        notes.insert(0, "injected by H5DLIO_MUTATE and caught by no check: a validator bug, not a measurement")
    elif v.get("mutant"):
        notes.append(f"mutant {v['mutant']} injected by H5DLIO_MUTATE")
    return label + (f" ({'; '.join(notes)})" if notes else "")
