"""python -m harness sizing for a checkpoint workload (llama3_*: workflow.checkpoint without training): the checkpoint
cycle on the storage under test against the number of ranks writing and reading it, with the bare kernel. Not a
submission.

A llama3 shape has data x tensor x pipeline ranks (llama3_8b: 8); MLPerf Storage runs it whole, or as a subset of
those ranks on fewer hosts (DLIO 3.x's `checkpoint_mode: subset`: each rank writes its own shard, the same size at
any count). So each trial is one kernel launch at N ranks (1, 2, 4, ... up to RANKS_MAX, default the shape's whole
count) that saves the workload's checkpoints and loads them back; its numbers are the kernel's "mlperf" block (DLIO
3.x statscounter's checkpoint duration and GiB/s, rank 0's timing over the checkpoint's total bytes). Where the
duration stays flat as ranks are added, the storage keeps up; where it grows, the storage is the limit. The answer
names the count with the highest save and load bandwidth. Each trial's checkpoint folder
(DATA/checkpoints-np<N>, made by this search) is removed when the trial has been measured; a trial is refused
before its launch when DATA's file system has not the room the earlier trials measured for it (the first trial,
at 1 rank, writes one shard per checkpoint unchecked). The state, resume and exit statuses are harness/sizing.py's."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from common.fileio import write_json_atomic, write_text_atomic
from common.rundir import WORKLOAD
from harness.launch import Launcher, Step, execute, kernel_argv
from harness.paths import KERNEL_BIN
from harness.sizing_search import NoRoom, SizingError, TrialFailed

MARGIN = 64 * 2**20   # bytes of room beyond the checkpoints a trial is measured to write (file system metadata)


def is_checkpoint_workload(cfg: dict) -> bool:
    wf = cfg.get("workflow") or {}
    return bool(wf.get("checkpoint")) and not wf.get("train")


def shape_ranks(cfg: dict) -> int | None:
    """data x tensor x pipeline of the model's parallelism (DLIO 3.x model.parallelism), None when it has none."""
    par = (cfg.get("model") or {}).get("parallelism") or {}
    try:
        n = int(par.get("data", 1)) * int(par.get("tensor", 1)) * int(par.get("pipeline", 1))
    except (TypeError, ValueError):
        return None
    return n if par and n >= 1 else None


def counts(ranks_max: int) -> list[int]:
    """1, 2, 4, ... below RANKS_MAX, then RANKS_MAX itself."""
    out, n = [], 1
    while n < ranks_max:
        out.append(n)
        n *= 2
    return out + [ranks_max]


def check_counts(workload_text: str, version: str, ns: list[int]) -> None:
    """Every count accepted by the kernel's own validator for this workload (--dry-run --ranks N), before any
    launch and before the sizing folder exists (a refused search leaves nothing behind): SizingError naming
    RANKS_MAX and the kernel's reason otherwise."""
    with tempfile.TemporaryDirectory(prefix="h5dlio-sizing-check-") as tmp:
        wl = Path(tmp) / WORKLOAD
        wl.write_text(workload_text)
        for n in ns:
            _check_count(wl, version, n)


def _check_count(wl: Path, version: str, n: int) -> None:
    p = subprocess.run(kernel_argv(KERNEL_BIN, wl, [f"dlio-version={version}"], ["--dry-run", "--ranks", str(n)]),
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        why = (p.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise SizingError(f"RANKS_MAX: the kernel refuses this workload at {n} ranks ({why})")


class CheckpointTrial:
    """One trial: the kernel at N ranks saving and loading the workload's checkpoints under DATA."""

    def __init__(self, d: Path, st: dict, version: str, a: argparse.Namespace, progress=print):
        self.d, self.st, self.version, self.a, self.progress = d, st, version, a, progress
        self.root = a.data.resolve() if a.data else d / "data"

    def _room(self, n: int) -> None:
        per_rank = max((t["bytes_written"] / t["n"] for t in self.st["trials"].values()), default=0)
        want, free = per_rank * n + MARGIN, shutil.disk_usage(self.root).free
        if per_rank and free < want:
            raise NoRoom(f"DATA={self.root}: the checkpoints of {n} ranks are about {want / 2**30:.2f} GiB (measured "
                         f"per rank at fewer ranks); its file system has {free / 2**30:.2f} GiB free: give a DATA "
                         "with room (nothing was written)")

    def __call__(self, n: int) -> dict:
        self.root.mkdir(parents=True, exist_ok=True)
        folder, made = self.root / f"checkpoints-np{n}", self.st.setdefault("made", [])
        if folder.exists() and str(folder) not in made:
            raise TrialFailed(f"DATA={self.root}: {folder} exists and this search did not make it: choose another "
                              "DATA (nothing was removed)")
        self._room(n)
        made.append(str(folder))
        write_json_atomic(self.d / "state.json", self.st)
        wd = self.d / "trials" / f"np{n}"
        shutil.rmtree(wd, ignore_errors=True)
        argv = Launcher(self.a.launcher, n).argv(None, {}) + kernel_argv(
            KERNEL_BIN, self.d / WORKLOAD, [f"dlio-version={self.version}", f"checkpoint-folder={folder}",
                                            f"output-folder={wd / 'out'}", "quiet=true"])
        res = execute(Step(f"sizing.np{n}", "kernel", "sizing", argv, {}, wd, None, self.a.timeout), self.progress)
        try:
            written = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            made.remove(str(folder))
        if res["status"] != "ok":
            raise TrialFailed(f"the trial at {n} ranks: {res['status']} ({res['detail'][-600:]}); see {wd}")
        try:
            ml = json.loads((wd / "out" / "output.json").read_text())["mlperf"]
            row = {k: float(ml[f"{k}_checkpoint_duration_mean_seconds"]) for k in ("save", "load")}
            row.update({f"{k}_GiB_s": float(ml[f"{k}_checkpoint_io_mean_GiB_per_second"]) for k in ("save", "load")})
            size = float(ml["checkpoint_size_GiB"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TrialFailed(f"the trial at {n} ranks left no MLPerf checkpoint numbers ({e}); see {wd}") from None
        return {"n": n, "checkpoint_GiB": size, "bytes_written": written, **row, "wall_s": res["wall_s"],
                "launcher": res["argv"][0], "output": str(wd / "out" / "output.json")}


def progress_line(st: dict, res: dict, started: float, ns: list[int]) -> str:
    """trial k of n, its save and load, the time so far and about how much is left."""
    k, spent = len(st["trials"]), time.time() - started
    left = spent / max(1, st.get("launched", 1)) * (len(ns) - k)
    return (f"sizing: trial {k} of {len(ns)}: {res['n']} rank{'s' * (res['n'] > 1)}, save {res['save']:.2f} s "
            f"({res['save_GiB_s']:.3f} GiB/s), load {res['load']:.2f} s ({res['load_GiB_s']:.3f} GiB/s) of a "
            f"{res['checkpoint_GiB']:.3f} GiB checkpoint, elapsed {spent:.0f} s, about {left:.0f} s left "
            "(not a submission)")


def answer_of(rows: list[dict], wl_name: str) -> str:
    best = {k: max(rows, key=lambda r: r[f"{k}_GiB_s"]) for k in ("save", "load")}
    flat = [r["n"] for r in rows if r["save"] <= 1.1 * rows[0]["save"]]
    grows = next((r["n"] for r in rows if r["save"] > 1.1 * rows[0]["save"]), None)
    return (f"{wl_name}: highest save bandwidth at {best['save']['n']} ranks ({best['save']['save_GiB_s']:.3f} GiB/s, "
            f"a {best['save']['checkpoint_GiB']:.3f} GiB checkpoint in {best['save']['save']:.2f} s), highest load "
            f"bandwidth at {best['load']['n']} ranks ({best['load']['load_GiB_s']:.3f} GiB/s); the save time per "
            + (f"checkpoint stays within 10% of one rank's at every count up to {max(flat)}" if grows is None else
               f"checkpoint grows past 1.1x one rank's from {grows} ranks on (where the storage stops keeping up)"))


def write_outputs(d: Path, st: dict, wl_name: str, note: str) -> str:
    """sizing.json, sizing.md (the table) and sizing.png (duration and bandwidth against ranks)."""
    rows = sorted(st["trials"].values(), key=lambda r: r["n"])
    answer = answer_of(rows, wl_name)
    write_json_atomic(d / "sizing.json", {"note": note, "answer": answer, "outcome": "checkpoint_cycle",
                                          "params": st["params"], "trials": rows})
    lines = [f"# Checkpoint cycle of {wl_name} ({st['params']['scale']}): {note}", "", answer, "",
             "| ranks | checkpoint GiB | save s | save GiB/s | load s | load GiB/s | trial s |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['n']} | {r['checkpoint_GiB']:.3f} | {r['save']:.3f} | {r['save_GiB_s']:.3f} | {r['load']:.3f} | "
              f"{r['load_GiB_s']:.3f} | {r['wall_s']:.1f} |" for r in rows]
    write_text_atomic(d / "sizing.md", "\n".join(lines) + "\n")
    plot(d / "sizing.png", rows, wl_name)
    return answer


def plot(path: Path, rows: list[dict], wl_name: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.6))
    n = [r["n"] for r in rows]
    for k, colour in (("save", "tab:blue"), ("load", "tab:orange")):
        ax.plot(n, [r[k] for r in rows], "o-", color=colour, label=f"{k} s (mean per checkpoint)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks saving and loading (checkpoint_mode subset)")
    ax.set_ylabel("seconds per checkpoint")
    ax2 = ax.twinx()
    for k, colour in (("save", "tab:green"), ("load", "tab:red")):
        ax2.plot(n, [r[f"{k}_GiB_s"] for r in rows], "s--", color=colour, label=f"{k} GiB/s")
    ax2.set_ylabel("GiB/s")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4, fontsize=8)
    ax.set_title(f"checkpoint cycle {wl_name}: not a submission", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
