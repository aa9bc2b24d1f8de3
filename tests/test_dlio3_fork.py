"""MLCommons DLIO 3.x's reader processes started by fork, as MLPerf Storage v3.0's CLOSED unet3d runs start them
(reader.multiprocessing_context: fork; 3.x's default is spawn): docs/fidelity-dlio3.md, row 8. The fixture
(tests/data/dlio3-fork-strace) is the strace profile of the real DLIO 3.x (f6796ed) on unet3d_b200 tiny_fork, 2 ranks
x 2 reader processes, once with fork and once with spawn."""
from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests import kernel
from validate import model

FIX = json.loads((Path(__file__).parent / "data" / "dlio3-fork-strace" / "calls.json").read_text())


def _iterators(side: dict) -> dict[tuple[int, int], list[tuple[int, ...]]]:
    """(rank, iterator: 0 pre-warm before epoch 1, 1 epoch 1, 2 pre-warm after it) -> each reader process's files."""
    out: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    for p in side["process_opens"]:
        out.setdefault((p["rank"], p["iterator"]), []).append(tuple(p["files"]))
    return out


def _fits(procs: list[tuple[int, ...]], seg: dict) -> bool:
    """Every process read one worker's batches of the model's window (workers_max, the pre-warm's race included) and
    every batch the model says is read (workers) was read by one process."""
    may = Counter(tuple(w) for w in seg["workers_max"] if w)
    must = Counter(tuple(w) for w in seg["workers"] if w)
    got = Counter(procs)
    return not (got - may) and not (must - got)


def _matches(side: dict, want: dict) -> bool:
    its = _iterators(side)
    return all(_fits(its.get((r, i), []), seg) for r in want for i, seg in enumerate(want[r])) and \
        len(its) == sum(len(v) for v in want.values())


def test_forked_and_spawned_readers_make_the_same_data_file_io():
    """torch_data_loader.py:178-186 (f6796ed): each worker, forked or spawned, runs worker_init, whose
    pickle.loads(serial_args) makes its copy the ConfigArguments singleton (utils/config.py:308-313); serial_args is
    pickled after reconfigure(1) (:172) and again by refresh_args after every reconfigure (main.py:802-808), before the
    next iterator forks. So a forked reader reads the lists a spawned one unpickles: measured, every reader process's
    data files in the same order, and every open the same calls, under both contexts."""
    fork, spawn = FIX["fork"], FIX["spawn"]
    assert fork["process_opens"] == spawn["process_opens"]
    assert fork["per_open"] == spawn["per_open"] and sum(fork["per_open"].values()) == 84
    # what differs is the start-up: a spawned reader starts an interpreter and imports torch and DLIO before its
    # first data file; a forked one opens a handful of lazily imported modules and DLIO's log
    assert max(fork["startup_opens"]) * 100 < min(spawn["startup_opens"])


@pytest.mark.parametrize("side", ["fork", "spawn"])
def test_model_gives_each_reader_process_its_batches(side):
    """The analytic model (validate/model.py, written from DLIO's source) gives each iterator's reader processes the
    batches they read: per rank, the pre-warm before epoch 1 (worker 0's batch, worker 1's within the race), epoch 1,
    and the pre-warm after it, on the lists of reconfigure(2)."""
    assert _matches(FIX[side], model.workload_reads(FIX["workload"], 2, "3.0.2"))


def test_a_model_of_forked_readers_keeping_the_first_lists_is_caught():
    """Negative control: were a forked reader to keep the lists its rank had when it first read (as the in-rank reader
    of read_threads 0 does, row 4a), the pre-warm after epoch 1 would read epoch 1's files; the trace refutes it."""
    want = model.workload_reads(FIX["workload"], 2, "3.0.2")
    planted = {r: [segs[0], segs[1], {**segs[2], "workers": segs[0]["workers"],
                                      "workers_max": segs[0]["workers_max"]}] for r, segs in want.items()}
    assert not _matches(FIX["fork"], planted)


def _dry(ctx: str) -> subprocess.CompletedProcess:
    argv = [kernel.BIN, "--dry-run", "--ranks", "2", "--set", "dlio-version=3.0.2", "--set", "train=true",
            "--set", f"reader.multiprocessing_context={ctx}"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_kernel_accepts_the_contexts_torch_knows(ctx):
    p = _dry(ctx)
    assert p.returncode == 0, p.stderr


def test_kernel_refuses_a_context_torch_does_not_know_naming_the_key():
    """torch's DataLoader hands the name to multiprocessing.get_context, which raises ValueError for any other."""
    p = _dry("threads")
    assert p.returncode == 2 and "reader.multiprocessing_context" in p.stderr, (p.returncode, p.stderr)


def _launch(cfg: dict, rules: dict | None = None):
    from profiles import Launch, Shape
    return Launch("dlio", "dftracer", ["dlio_benchmark"], {}, Path("/nonexistent"), Path("/nonexistent"),
                  {"dlio_preload": True, "lib": "/x.so"}, Shape(cfg, rules=rules or {}))


def test_dftracer_launch_of_forked_readers_gets_a_refusing_sudo(monkeypatch):
    """Without sudo installed, DLIO 3.x's failed exec of sudo stops DFTracer 2.2.0 in rank 0, and readers forked
    after it die of SIGSEGV (measured on tiny_fork: 2 of 2, DLIO exit 1; with a sudo that exits 1: 0, exit 0). The
    DLIO side of a fork launch gets profiles/dftracer/nosudo first in PATH; its sudo refuses as `sudo -n` does."""
    from profiles import dftracer
    monkeypatch.setattr("shutil.which", lambda name: None)
    env = dftracer.DFTracer().wrap(_launch({"reader": {"multiprocessing_context": "fork"}})).env
    assert env["PATH"].split(":")[0] == str(dftracer.NO_SUDO)
    assert subprocess.run([str(dftracer.NO_SUDO / "sudo"), "-n", "true"]).returncode == 1
    # the probe's default counts when the workload names none
    env = dftracer.DFTracer().wrap(_launch({}, {"reader_context": "fork"})).env
    assert env["PATH"].split(":")[0] == str(dftracer.NO_SUDO)


@pytest.mark.parametrize("cfg,rules,which", [
    ({"reader": {"multiprocessing_context": "spawn"}}, {"reader_context": "fork"}, None),  # spawned readers
    ({}, {"reader_context": "spawn"}, None),                                               # 3.x's default
    ({"reader": {"multiprocessing_context": "fork"}}, {}, "/usr/bin/sudo"),                # a real sudo: its own
])
def test_no_sudo_shim_where_readers_are_spawned_or_sudo_exists(monkeypatch, cfg, rules, which):
    """Negative controls: the PATH is left alone for spawned readers and where sudo is installed."""
    from profiles import dftracer
    monkeypatch.setattr("shutil.which", lambda name: which)
    assert "PATH" not in dftracer.DFTracer().wrap(_launch(cfg, rules)).env


@pytest.mark.parametrize("cfg,rules,refused", [
    ({"reader": {"multiprocessing_context": "fork"}}, {"reader_context": "spawn"}, True),   # 3.x, fork named
    ({"reader": {"multiprocessing_context": "spawn"}}, {"reader_context": "spawn"}, False),  # 3.x spawn: traced
    ({}, {"reader_context": "spawn"}, False),                                              # 3.x default: spawn
    ({"reader": {"multiprocessing_context": "fork"}}, {"reader_context": "fork"}, False),   # 2.0.0 forks, traced
])
def test_dftracer_refuses_dlio3_fork_readers_it_cannot_attribute(cfg, rules, refused):
    """Measured on unet3d_b200 tiny_fork under DFTracer (with the sudo above): each forked reader wrote its own
    trace-<hash>-fork.pfw under its pid; the per-rank rows found no DLIO read and rows for ranks named 15392, ...:
    refused with the reason before any launch; left alone: spawned 3.x readers, and 2.0.0's forked readers (their
    DFTracer runs pass: docs/scale-record.md, 32 reader threads)."""
    from profiles import Shape, dftracer
    why = dftracer.DFTracer().refuse(Shape(cfg, rules=rules), Path("/nonexistent"))
    assert bool(why) == refused and (not why or "multiprocessing_context" in why)
