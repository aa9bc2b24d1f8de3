"""A run's collection: every finished launch's raw output (traces, logs, the dataset) parsed into tables/ by the
profile it belongs to, in lanes, in up to COLLECT_JOBS processes at once; and the VOL stack each kernel launch used."""
from __future__ import annotations

import json
import os
from multiprocessing import get_context
from multiprocessing.connection import wait as mp_wait
from pathlib import Path

from common.rundir import RunDir
from harness import describe_dataset
from harness import vol as hvol
from harness.paths import KERNEL_BIN
from harness.plan import OTHER
from profiles import Done, Profile, owner, registry


def _lanes(m: dict) -> list[list[tuple[str, dict]]]:
    """The finished steps to collect, in lanes: one per (profile, side), or per side's generation, its steps in
    launch order. Two lanes never write the same table (a profile names its tables after the side, or the step)."""
    lanes: dict[tuple[str, str], list] = {}
    for name, rec in m["steps"].items():
        side, step = name.split(".", 1)
        if rec.get("status") == "ok" and (step == "generate" or (prof := owner(step)) is not None):
            lanes.setdefault(("generate" if step == "generate" else prof.name, side), []).append((name, rec))
    return list(lanes.values())


def _collect_lane(rd: Path, lane: list[tuple[str, dict]], dlio_venv: Path, jobs: int = 1) -> tuple[dict, dict]:
    """Parse one lane's steps, in order: ({step: error}, {step: tables} of the profiles with their own merge; the
    others' tables are written as soon as they are parsed). A dataset is described by `jobs` processes at once."""
    rdir = RunDir(rd)
    errors, parts = {}, {}
    for name, rec in lane:
        side, step = name.split(".", 1)
        try:
            # the data folders the launch read, as its traces name them: a step reused from an earlier run read that
            # run's
            base = Path(rec.get("reused_from") or rd)
            done = Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], base / side / "data",
                        base / OTHER[side] / "data")
            if step == "generate":
                _collect_dataset(rdir, side, dlio_venv, jobs)
                for prof in registry().values():  # a profile that traced it (Profile.traces_generation)
                    for table, obj in (prof.collect(done) if prof.traces_generation else {}).items():
                        rdir.write_table(table, obj)
                continue
            prof = owner(step)
            tables = prof.collect(done)
            if type(prof).merge is Profile.merge:
                for table, obj in tables.items():
                    rdir.write_table(table, obj)
                del tables
            else:
                parts[name] = tables
        except (OSError, ValueError, KeyError, TypeError) as e:  # a step's output unreadable: the others still count
            errors[name] = f"{type(e).__name__}: {e}"
    return errors, parts


def _heavy(lane: list[tuple[str, dict]]) -> bool:
    """A lane whose parse holds a table per data file (Profile.holds_file_tables): one at a time."""
    prof = owner(lane[0][0].split(".", 1)[1])
    return prof is not None and prof.holds_file_tables


def _input_bytes(lane: list[tuple[str, dict]]) -> int:
    """What a lane parses, in bytes (its steps' folders; a generation's data folder counted by its files, 4 KiB each):
    the order lanes start in, largest first."""
    n = 0
    for name, rec in lane:
        root = Path(rec.get("workdir") or "")
        if name.endswith(".generate"):
            root = Path(rec.get("workdir") or "").parent / "data"
        for dirpath, _, files in os.walk(root):
            n += sum(4096 if name.endswith(".generate") else _size(Path(dirpath) / f) for f in files)
    return n


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _lane_process(rd: Path, lane: list, dlio_venv: Path, jobs: int, conn) -> None:
    conn.send(_collect_lane(rd, lane, dlio_venv, jobs))
    conn.close()


def _run_lanes(rd: Path, lanes: list, dlio_venv: Path, jobs: int) -> list[tuple[dict, dict]]:
    """Each lane's (errors, parts): in this process one after the other (jobs 1, or a single lane), else in up to
    `jobs` forked processes, largest lane first, never two heavy lanes at once. A process that ends without its
    answer (killed: out of memory?) fails its lane's steps, said, not raised; on any exception here (Ctrl-C, SIGTERM)
    every process still parsing is killed."""
    if jobs <= 1 or len(lanes) <= 1:
        return [_collect_lane(rd, lane, dlio_venv, jobs) for lane in lanes]
    ctx = get_context("fork")
    pending = sorted(lanes, key=_input_bytes, reverse=True)
    out, running = [], {}  # receiving end -> (process, lane)
    try:
        while pending or running:
            for lane in list(pending):
                heavy = any(_heavy(x) for _, x in running.values())
                if len(running) >= jobs or (heavy and _heavy(lane)):
                    continue
                pending.remove(lane)
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_lane_process, args=(rd, lane, dlio_venv, jobs, send), daemon=True)
                proc.start()
                send.close()
                running[recv] = (proc, lane)
            for recv in mp_wait(list(running)):
                proc, lane = running.pop(recv)
                try:
                    out.append(recv.recv())
                except EOFError:
                    proc.join()
                    why = (f"killed by signal {-proc.exitcode} (out of memory?)" if (proc.exitcode or 0) < 0 else
                           f"exit {proc.exitcode}: its error is in the harness's output above")
                    out.append(({name: f"collection process ended without its tables: {why}" for name, _ in lane},
                                {}))
                proc.join()
    finally:
        for proc, _ in running.values():
            proc.kill()
            proc.join()
    return out


def collect(rd: Path, m: dict, dlio_venv: Path, jobs: int = 1) -> None:
    """Parse every finished step's raw output into tables/: generation into the dataset tables, every other step by
    the profile it belongs to (profiles.owner; Profile.collect per launch, Profile.merge per profile). A step whose
    output cannot be parsed is recorded in m["collect_errors"]; the others are still collected. A profile whose merge
    is the default union has each launch's tables written as soon as they are parsed (the same files and bytes, the
    later launch's table over an earlier one of the same name, as the union): collection then holds one launch's
    tables at a time, not every profile's of every launch (docs/performance.md#validation-at-scale). jobs > 1: lanes
    (_lanes) parsed in that many processes at once, at most one lane holding per-file tables (_run_lanes)."""
    RunDir(rd).tables.mkdir(exist_ok=True)
    errors: dict = {}
    parts: dict = {}
    for errs, ps in _run_lanes(rd, _lanes(m), dlio_venv, jobs):
        errors.update(errs)
        parts.update(ps)
    m["collect_errors"] = {n: errors[n] for n in m["steps"] if n in errors}
    m.setdefault("vol", hvol.manifest_block(hvol.STACKS["native"], "", KERNEL_BIN))["kernel_launches"] = \
        kernel_vol(rd, m)
    by_profile: dict[str, list] = {}
    for name in m["steps"]:  # a profile's launches merged in launch order
        if name in parts:
            by_profile.setdefault(owner(name.split(".", 1)[1]).name, []).append(parts[name])
    reg = registry()
    for pname, ps in by_profile.items():
        for table, obj in reg[pname].merge(ps).items():
            RunDir(rd).write_table(table, obj)


def kernel_vol(rd: Path, m: dict) -> dict:
    """Per finished kernel launch, the VOL stack its output.json says HDF5 used and its explicit async reads
    (async_prefetch: mode, training batches), as the kernel reported them (None: no output.json, or a kernel from
    before the vol block)."""
    out = {}
    for name, rec in sorted(m["steps"].items()):
        side, step = name.split(".", 1)
        if side != "kernel" or rec.get("status") != "ok":
            continue
        f = Path(rec["workdir"]) / "out" / "output.json"
        try:
            o = json.loads(f.read_text())
        except (OSError, ValueError):
            out[step] = None
            continue
        pf = o.get("async_prefetch")
        sets = [x for x in rec.get("argv", []) if isinstance(x, str)]
        asked = {"connector": next((x.split("=", 1)[1] for x in sets if x.startswith("vol-connector=")), "native"),
                 "prefetch": "vol-async-prefetch=true" in sets}
        vol = o.get("vol") or {}
        out[step] = {"asked": asked, "stack": vol.get("stack"), "selected_by": vol.get("selected_by"),
                     "async_prefetch": {"mode": pf.get("mode"), "train_batches": (pf.get("train") or {}).get("batches")}
                     if pf else None, "mutant": o.get("mutant")}
    return out


def _collect_dataset(rdir: RunDir, side: str, dlio_venv: Path, parts: int = 1) -> None:
    """tables/dataset-<side>.json: every file a generation step wrote, described (harness.describe_dataset) by
    `parts` processes at once."""
    rdir.write_table(f"dataset-{side}.json", describe_dataset.describe(rdir.path / side / "data", dlio_venv,
                                                                       parts=parts))

