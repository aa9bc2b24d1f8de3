"""One launch's traces into every table of the profile (runs in the harness, at collection): two streamed passes
over the trace files, each event fed once to all tables (Tables), the result as a dict (parse) or as the JSON text
collection writes (parse_json).
"""
from __future__ import annotations

import json
from pathlib import Path

from profiles import checkpoint_dir
from profiles.dftracer.measures import DATA_CALLS, EPOCH_REGIONS, Features, Metadata, Timeline, epochs
from profiles.dftracer.tables import CheckpointTable, FileTable, Names, ProcessOpens
from profiles.dftracer.traces import (
    COMPLETE,
    READS,
    TRACE_RANK,
    _num,
    _who,
    iter_events,
    names,
    normalize_one,
    trace_files,
)

# the events the first pass decodes: the kernel's ranks, DFTracer 2.x's file names, the epoch regions
FIRST_PASS = ("rank_info", '"FH"', *EPOCH_REGIONS)


class Tables:
    """Every table of one launch, fed each normalized event once: what the tables test alike (a POSIX call, on a
    data file, under the checkpoint folder) tested once, the event then handed to each table's own step, the data
    files' names held once (Names). The same tables as each one's add() over the events."""

    def __init__(self, data_dir: Path, ckpt: Path, spans: list[tuple[float, float]]) -> None:
        self.names = Names()
        self.files = FileTable(data_dir, ckpt, self.names)
        self.opens = ProcessOpens(data_dir, self.names)
        self.checkpoints = CheckpointTable(ckpt)
        self.features = Features(data_dir, self.names)
        self.metadata = Metadata(data_dir, spans)
        self.timeline = Timeline()
        self.root, self.croot = self.files.root, self.checkpoints.root

    def add(self, e: dict) -> None:
        """One normalized event (normalize_one)."""
        self.timeline.add(e)
        if e["cat"] == "POSIX":
            self._posix(e)

    def _posix(self, e: dict) -> None:
        f = e["fname"] or ""
        in_ck = f.startswith(self.croot)
        if in_ck:
            self.checkpoints.add(e)
        if not f.startswith(self.root):
            if not in_ck:
                self.files.other[(e["name"], f)] += 1
            return
        i = self.names.get(f[len(self.root):])
        if not in_ck:
            self.files.add_data(i, e["name"], e["ret"], e["offset"], e["count"], e["dur"])
        self._data(i, e["rank"], e["pid"], e["name"], e["ts"], e["dur"], e["offset"], e["ret"], e["tid"])

    def _data(self, i: int, rank: int, pid: str, name: str, ts: float, dur: float, offset: int, ret: int,
              tid: str) -> None:
        if name in READS:
            self.features.add_read(pid, i, offset, max(ret, 0), rank, ts, dur)
        elif name not in DATA_CALLS:
            if name in ("open", "openat"):
                self.opens.add_open(rank, pid, ts, i, tid)
            self.metadata.add_call(name, ts, dur)

    def add_raw(self, e: dict, side: str, pid_rank: dict[str, int], fnames: dict[str, str]) -> None:
        """One decoded complete event ("ph" in COMPLETE, "_file_rank" set), normalized as normalize_one does, without
        making its dict on the hot path (a POSIX call on a data file outside the checkpoint folder) or for any
        other region (the timeline alone); the others (checkpoints, files outside the data folder) through
        normalize_one and add. tests/test_dftracer.py holds it to add(normalize_one(e)) on both tracers' traces."""
        pid, rank, cat, name = _who(e, side, pid_rank)
        try:
            ts, dur = int(e.get("ts", 0)), int(e.get("dur", 0))
        except (TypeError, ValueError):
            ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        ts, dur = ts / 1e6, dur / 1e6
        self.timeline.add_one(rank, pid, name, ts, dur)
        if cat != "POSIX":
            return
        a = e.get("args", {}) or {}
        f = (a.get("fname") if "fname" in a else fnames.get(str(a.get("fhash"))) if "fhash" in a else None) or ""
        if f.startswith(self.croot) or not f.startswith(self.root):
            self._posix(normalize_one(e, side, pid_rank, fnames))
            return
        try:
            offset, count, ret = int(a.get("offset", -1)), int(a.get("count", -1)), int(a.get("ret", -1))
        except (TypeError, ValueError):
            offset, count, ret = _num(a.get("offset"), -1), _num(a.get("count"), -1), _num(a.get("ret"), -1)
        i = self.names.get(f[len(self.root):])
        self.files.add_data(i, name, ret, offset, count, dur)
        self._data(i, rank, pid, name, ts, dur, offset, ret, str(e.get("tid")))


def _feed(outdir: Path, side: str, data_dir: Path) -> tuple[dict, Tables]:
    """One launch's traces streamed into its Tables: a first pass decodes only the events the second needs before
    it starts (ranks, file-name hashes, epochs); the second feeds each event to the tables as it is read. Memory:
    the per-file tables, the per-process open sequences, the reads' compact arrays (features) and a bounded
    timeline, never the list of events."""
    files = trace_files(outdir)
    first = [e for p in files for e in iter_events(p, FIRST_PASS)]
    pid_rank, fnames = names(first)
    spans = epochs(n for e in first if (n := normalize_one(e, side, pid_rank, fnames)) is not None)
    tables = Tables(data_dir, checkpoint_dir(outdir), spans)
    add = tables.add_raw
    n = 0
    # a process's preload trace (named after its rank) without a single event: the process ended before its tracer
    # flushed (torch terminates a spawned reader that has not exited within its shutdown wait, under load; DLIO's
    # launches write each event as logged against it: UNBUFFERED_TRACE): what it read is missing from the counts.
    # (The rank's file before initialize_log renames it, and the app trace of a process that traced nothing, are
    # empty with DFTracer's buffered defaults: not counted.)
    empty = []
    for p in files:
        raw = 0
        for e in iter_events(p):
            raw += 1
            if e.get("ph") not in COMPLETE:
                continue
            n += 1
            add(e, side, pid_rank, fnames)
        if not raw and TRACE_RANK.search(p.name) and ".pfw" in p.name and "-preload." in p.name:
            empty.append(p.name)
    return {"side": side, "data_dir": str(data_dir), "events": n, "empty_traces": sorted(empty)}, tables


def parse(outdir: Path, side: str, data_dir: Path) -> dict:
    """Every table of one launch's traces (_feed): {side, data_dir, events, empty_traces, files, process_opens,
    checkpoints, features, metadata, timeline}."""
    head, t = _feed(outdir, side, data_dir)
    out = {"features": t.features.result(), "process_opens": t.opens.result(), "files": t.files.result()}
    return {**head, "files": out["files"], "process_opens": out["process_opens"],
            "process_order": t.opens.order(), "checkpoints": t.checkpoints.result(), "features": out["features"],
            "metadata": t.metadata.result(), "timeline": t.timeline.result()}


def parse_json(outdir: Path, side: str, data_dir: Path) -> tuple[str, dict]:
    """parse's tables as collection writes them: dftracer-<side>.json's JSON text (json.dumps of parse's table
    without its timeline, byte for byte), made a part at a time as the tables are dropped (the features' arrays
    first, then the open sequences, then the per-file rows, written as made), and the timeline."""
    head, t = _feed(outdir, side, data_dir)
    feats = json.dumps(t.features.result())
    t.features = None
    opens = json.dumps(t.opens.result())
    order = json.dumps(t.opens.order())
    t.opens = None
    rest = {"checkpoints": t.checkpoints.result(), "features": None, "metadata": t.metadata.result()}
    timeline = t.timeline.result()
    t.names.index = {}  # the rows are found by index from here on
    parts = [json.dumps(head)[:-1], ', "files": ', *t.files.json_parts(), ', "process_opens": ', opens,
             ', "process_order": ', order, ', "checkpoints": ', json.dumps(rest["checkpoints"]),
             ', "features": ', feats, ', "metadata": ', json.dumps(rest["metadata"]), "}"]
    del t  # the per-file arrays and names: only the text's parts are left to join
    return "".join(parts), timeline
