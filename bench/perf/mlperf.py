"""(8) The MLPerf Storage checkpoint cycle: write N checkpoints in one launch, then read them back in another, as
MLPerf Storage v2.0 runs its llama3 checkpoint workloads (a write launch with num_checkpoints_read 0, a read launch
with num_checkpoints_write 0: 392621b main.py:257-305 writes only if num_checkpoints_write > 0, then reads the
folder's checkpoints). DLIO of that branch (392621b, reference-configs/llama3_8b.yaml) against the kernel (entry
2.0.0-52) on the same merged workload, repetitions interleaved: each launch's wall time, and the gap between the end
of the write phase and the start of the read phase, bounded above by the read launch's wall time less the time in
its loads as the program reports them (start-up, the time_between_checkpoints sleep, barriers and teardown). MLPerf's
rule: at most 30 s between the phases. Needs the 392621b venv (tests/test_validation_llama.py finds it the same
way); without it the section is skipped with that reason. Page caches are not dropped (a shared machine): the reads
may come from memory on both sides."""
from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import yaml

from bench.perf.common import (
    BenchError,
    Context,
    cached_dlio_venv,
    kernel,
    load_snapshot,
    ratio,
    run,
    summary,
    wait_for_quiet,
)
from common.rundir import WORKLOAD
from validate.model import checkpoint_files_v2

REVISION = "392621b"
RULE_S = 30.0   # MLPerf Storage v2.0: the read phase starts within 30 s of the write phase's end


def mlperf_venv() -> Path | None:
    """H5DLIO_MLPERF_DLIO_VENV, or the venv scripts/deps-dlio.sh made for 392621b (wheel h5py) in the cache."""
    return cached_dlio_venv("H5DLIO_MLPERF_DLIO_VENV", "dlio-2.0.0-52", REVISION)


def _workload(ctx: Context, venv: Path, scale: str) -> tuple[Path, dict]:
    """The merged llama3_8b workload as both sides run it (harness.workload.load, the harness's merged_config), written
    as the kernel's --config and as DLIO's --config-dir."""
    from harness.dlio import key_table
    from harness.plan import merged_config
    from harness.workload import dlio_config_dir, load
    wl = load("llama3_8b", scale, dlio_config_dir(str(venv / "bin" / "python")),
              keys=key_table("2.0.0-52"))
    cfg = merged_config(wl)
    d = ctx.work / "mlperf"
    (d / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(cfg, sort_keys=False)
    (d / WORKLOAD).write_text(text)
    (d / "dlio-config" / "workload" / "h5dlio_llama3_8b.yaml").write_text(text)
    return d, cfg


def _dlio(ctx: Context, venv: Path, d: Path, name: str, ranks: int, folder: Path, phase: dict) -> dict:
    """One DLIO launch of the workload with the checkpoint keys of `phase`; its wall time and per-checkpoint times
    (rank 0's per_epoch_stats.json: utils/statscounter.py start/end_save_ckpt, start/end_load_ckpt)."""
    from harness.launch import Launcher
    where = ctx.raw / name
    if where.exists():
        shutil.rmtree(where)
    argv = Launcher("mpirun", ranks).argv(where / "ranks", {"DFTRACER_ENABLE": "0"}) + [
        str(venv / "bin" / "dlio_benchmark"), "--config-dir", str(d / "dlio-config"), "workload=h5dlio_llama3_8b",
        f"++workload.output.folder={where / 'out'}", f"++workload.checkpoint.checkpoint_folder={folder}",
        f"hydra.run.dir={where / 'hydra'}"] + [f"++workload.checkpoint.{k}={v}" for k, v in phase.items()]
    r = run(argv, where, env={"DFTRACER_ENABLE": "0"})
    stats = json.loads((where / "out" / "0_per_epoch_stats.json").read_text())["1"]
    ck = sorted((v for k, v in stats.items() if k.startswith(("save_ckpt", "load_ckpt"))), key=lambda v: v["start"])
    r["checkpoint_s"] = [float(v["duration"]) for v in ck]
    r["first_start"] = datetime.fromisoformat(ck[0]["start"]).timestamp() if ck else None
    return r


def _kernel(ctx: Context, venv: Path, d: Path, name: str, ranks: int, folder: Path, phase: dict) -> dict:
    """One kernel launch (entry 2.0.0-52) of the workload with the checkpoint keys of `phase` (venv: unused)."""
    sets = {"dlio_version": "2.0.0-52", "checkpoint_folder": folder, **phase}
    r = kernel(ctx, name, ranks, sets, config=d / WORKLOAD)
    r["checkpoint_s"] = [c["seconds"] for c in r["output"]["checkpoint"]["checkpoints"]]
    return r


def measure(ctx: Context) -> dict:
    p = ctx.preset["mlperf"]
    venv = mlperf_venv()
    if venv is None or not (venv / "bin" / "dlio_benchmark").exists():
        return {"skipped": f"no venv of MLPerf Storage v2.0's DLIO ({REVISION}): make dlio-venv-spec DLIO=<a git "
                           "checkout of it>, or H5DLIO_MLPERF_DLIO_VENV"}
    load = {"before": wait_for_quiet(ctx)}
    d, cfg = _workload(ctx, venv, p["scale"])
    n = int(cfg["checkpoint"]["num_checkpoints_write"])
    write, read = {"num_checkpoints_read": 0}, {"num_checkpoints_write": 0, "num_checkpoints_read": n}
    sides = {"dlio": _dlio, "kernel": _kernel}
    raw: dict = {s: {"write_wall_s": [], "read_wall_s": [], "cycle_wall_s": [], "gap_bound_s": [], "save_s": [],
                     "load_s": []} for s in sides}
    dlio_gap = []
    for i in range(p["repeat"]):
        for side, fn in sides.items():
            ctx.say(f"mlperf: {side}, repetition {i + 1}/{p['repeat']}: write {n}, then read {n}")
            folder = ctx.work / "mlperf" / f"checkpoints-{side}"
            shutil.rmtree(folder, ignore_errors=True)
            w = fn(ctx, venv, d, f"mlperf/{side}-write-{i}", p["ranks"], folder, write)
            t_end = time.time()
            r = fn(ctx, venv, d, f"mlperf/{side}-read-{i}", p["ranks"], folder, read)
            if len(w["checkpoint_s"]) != n or len(r["checkpoint_s"]) != n:
                raise BenchError(f"mlperf: {side}: {len(w['checkpoint_s'])} saves and {len(r['checkpoint_s'])} loads "
                                 f"reported, {n} each expected")
            x = raw[side]
            x["write_wall_s"].append(w["wall_s"])
            x["read_wall_s"].append(r["wall_s"])
            x["cycle_wall_s"].append(w["wall_s"] + r["wall_s"])
            x["gap_bound_s"].append(r["wall_s"] - sum(r["checkpoint_s"]))
            x["save_s"].append(sum(w["checkpoint_s"]))
            x["load_s"].append(sum(r["checkpoint_s"]))
            if side == "dlio" and r.get("first_start"):
                dlio_gap.append(r["first_start"] - t_end)  # the write launch's exit -> rank 0's first load
            shutil.rmtree(folder, ignore_errors=True)
    res = {"workload": f"llama3_8b {p['scale']}", "ranks": p["ranks"], "checkpoints": n, "rule_s": RULE_S,
           "bytes_per_checkpoint": sum(checkpoint_files_v2(cfg, p["ranks"]).values()) // n,
           "sides": {s: {k: summary(v) for k, v in x.items()} for s, x in raw.items()},
           "ratio_cycle": ratio(raw["dlio"]["cycle_wall_s"], raw["kernel"]["cycle_wall_s"]),
           "dlio_gap_measured_s": summary(dlio_gap) if dlio_gap else None}
    res["within_rule"] = {s: max(raw[s]["gap_bound_s"]) <= RULE_S for s in sides}
    load["after"] = load_snapshot()
    res["load"] = load
    return res
