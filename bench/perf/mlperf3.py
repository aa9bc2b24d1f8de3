"""(11) MLPerf Storage v3.0 on MLCommons' DLIO 3.x (f6796ed), DLIO against the kernel (entry 3.0.2), repetitions
interleaved (issue 27, item 6):

- a unet3d_b200 epoch (reference-configs/unet3d_b200.yaml, tiny_odirect where this file system accepts O_DIRECT, else
  tiny): one dataset, generated once by the kernel (its npz files are DLIO 3.x's bytes, docs/fidelity-dlio3.md), read
  by a DLIO training launch, by a kernel training launch, and by the plain limit: `dd iflag=direct` (or buffered where
  O_DIRECT is refused: said in the results) over the same files, one process per rank, each file read whole. Per
  side: the epoch as the program times it (DLIO: rank 0's per_epoch_stats.json duration; kernel: observed_s), the
  launch's wall time, and MLPerf's AU and throughput of the launch (summary.json; the kernel's "mlperf" block);
- the 3.x checkpoint cycle (reference-configs/llama3_8b_v3.yaml tiny): a launch writing the checkpoints, then one
  reading them back, as MLPerf v3.0 runs them; per side each launch's wall time, its saves and loads as the program
  times them, and the gap bound (the read launch's wall less its loads: start-up, sleeps, teardown) against 30 s;
- DLIO 3.x's launch cost against the kernel's: each launch's wall time less the time the program reports inside it.

Needs the DLIO 3.x venv (make dlio-venv-spec DLIO=<f6796ed checkout>, or H5DLIO_DLIO3_VENV); without it the section
is skipped with that reason. Page caches are not dropped (a shared machine) except by O_DIRECT itself."""
from __future__ import annotations

import json
import os
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

REVISION = "f6796ed"
ENTRY = "3.0.2"
RULE_S = 30.0  # MLPerf Storage v3.0: the read phase starts within 30 s of the write phase's end


def dlio3_venv() -> Path | None:
    """H5DLIO_DLIO3_VENV, or the venv scripts/deps-dlio.sh made for f6796ed (wheel h5py) in the cache."""
    return cached_dlio_venv("H5DLIO_DLIO3_VENV", "dlio-3.0.2", REVISION)


def odirect_ok(folder: Path) -> bool:
    """Does this file system accept O_DIRECT (ext4, xfs: yes; tmpfs before Linux 6.6: no)? Tried, not assumed."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / ".odirect-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
        os.close(fd)
        return hasattr(os, "O_DIRECT")
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


def workload(ctx: Context, venv: Path, name: str, scale: str, sub: str = "mlperf3") -> tuple[Path, dict]:
    """The merged workload as both sides run it (the harness's merged_config with 3.x's key names), written as the
    kernel's --config and as DLIO's --config-dir."""
    from harness.dlio import key_table
    from harness.plan import merged_config
    from harness.workload import dlio_config_dir, load
    wl = load(name, scale, dlio_config_dir(str(venv / "bin" / "python")), keys=key_table(ENTRY))
    cfg = merged_config(wl)
    d = ctx.work / sub / name
    (d / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(cfg, sort_keys=False)
    (d / WORKLOAD).write_text(text)
    (d / "dlio-config" / "workload" / f"h5dlio_{name}.yaml").write_text(text)
    return d, cfg


def _dlio(venv: Path, d: Path, name: str, where: Path, ranks: int, overrides: list[str]) -> dict:
    """One DLIO launch of workload `name` with hydra overrides; its wall time, rank 0's per_epoch_stats and summary."""
    from harness.launch import Launcher
    if where.exists():
        shutil.rmtree(where)
    argv = Launcher("mpirun", ranks).argv(where / "ranks", {"DFTRACER_ENABLE": "0"}) + [
        str(venv / "bin" / "dlio_benchmark"), "--config-dir", str(d / "dlio-config"), f"workload=h5dlio_{name}",
        f"++workload.output.folder={where / 'out'}", f"hydra.run.dir={where / 'hydra'}"] + overrides
    r = run(argv, where, env={"DFTRACER_ENABLE": "0"})
    r["stats"] = json.loads((where / "out" / "0_per_epoch_stats.json").read_text())
    r["summary"] = json.loads((where / "out" / "summary.json").read_text())
    return r


def _ckpt_stamps(stats: dict) -> list[dict]:
    """rank 0's save_ckpt<k>/load_ckpt<k> stamps of every epoch (utils/statscounter.py:368-400), in start order."""
    out = [dict(v, kind=k[:4]) for e in stats.values() if isinstance(e, dict) for k, v in e.items()
           if isinstance(v, dict) and k.startswith(("save_ckpt", "load_ckpt")) and "end" in v]
    return sorted(out, key=lambda v: v["start"])


def _plain(ctx: Context, name: str, files: list[Path], ranks: int, direct: bool) -> dict:
    """dd over the files, one process per rank (rank r: files r, r+R, ...), each file whole, 4 MiB transfers."""
    where = ctx.raw / name
    where.mkdir(parents=True, exist_ok=True)
    flag = ["iflag=direct"] if direct else []
    script = "set -e\n" + "\n".join(
        "(" + "; ".join(f"dd if={f} of=/dev/null bs=4M status=none {' '.join(flag)}" for f in files[q::ranks]) + ") &"
        for q in range(ranks)) + "\nfor j in $(jobs -p); do wait $j; done\n"
    (where / "plain.sh").write_text(script)
    r = run(["bash", str(where / "plain.sh")], where)
    total = sum(f.stat().st_size for f in files)
    return {"wall_s": r["wall_s"], "bytes": total, "bw_bytes_per_s": total / r["wall_s"]}


def _epoch(ctx: Context, venv: Path, p: dict) -> dict:
    folder = ctx.work / "mlperf3" / "unet3d-data"
    direct = odirect_ok(ctx.work / "mlperf3")
    scale = p["epoch_scale"] if direct else "tiny"
    d, cfg = workload(ctx, venv, "unet3d_b200", scale)
    ranks = p["ranks"]
    ctx.say(f"mlperf3: unet3d_b200 {scale}: generating its dataset (kernel, entry {ENTRY})")
    if folder.exists():
        shutil.rmtree(folder)
    base = {"dlio_version": ENTRY, "data_folder": folder}
    kernel(ctx, "mlperf3/unet3d-generate", ranks, {**base, "generate_data": True, "train": False},
           config=d / WORKLOAD)
    files = sorted(folder.rglob("*.npz"))
    if not files:
        raise BenchError(f"mlperf3: no npz files under {folder} after generation")
    raw: dict = {s: {"epoch_s": [], "wall_s": [], "launch_cost_s": [], "au_percent": [],
                     "throughput_samples_per_s": []} for s in ("dlio", "kernel")}
    plain = []
    for i in range(p["repeat"]):
        ctx.say(f"mlperf3: unet3d_b200 epoch, repetition {i + 1}/{p['repeat']}: DLIO, kernel, dd")
        r = _dlio(venv, d, "unet3d_b200", ctx.raw / f"mlperf3/unet3d-dlio-{i}", ranks,
                  [f"++workload.dataset.data_folder={folder}", "++workload.workflow.generate_data=False",
                   "++workload.workflow.train=True"])
        ep = [float(v["duration"]) for k, v in r["stats"].items() if isinstance(v, dict) and "duration" in v]
        m = r["summary"]["metric"]
        x = raw["dlio"]
        x["epoch_s"].append(sum(ep))
        x["wall_s"].append(r["wall_s"])
        x["launch_cost_s"].append(r["wall_s"] - sum(ep))
        x["au_percent"].append(m["train_au_mean_percentage"])
        x["throughput_samples_per_s"].append(m["train_throughput_mean_samples_per_second"])
        k = kernel(ctx, f"mlperf3/unet3d-kernel-{i}", ranks, {**base, "generate_data": False, "train": True},
                   config=d / WORKLOAD)
        out = k["output"]
        ep = [e["observed_s"] for e in out["train"]["epochs"]]
        x = raw["kernel"]
        x["epoch_s"].append(sum(ep))
        x["wall_s"].append(k["wall_s"])
        x["launch_cost_s"].append(k["wall_s"] - sum(ep))
        x["au_percent"].append(out["mlperf"]["train_au_mean_percentage"])
        x["throughput_samples_per_s"].append(out["mlperf"]["train_throughput_mean_samples_per_second"])
        plain.append(_plain(ctx, f"mlperf3/unet3d-dd-{i}", files, ranks, direct))
    total = sum(f.stat().st_size for f in files)
    epochs = int(cfg["train"]["epochs"])
    res = {"workload": f"unet3d_b200 {scale}", "ranks": ranks, "files": len(files), "bytes": total,
           "epochs": epochs, "computation_time": cfg["train"]["computation_time"],
           "batch_size": cfg["reader"]["batch_size"], "odirect": bool(cfg["reader"].get("odirect")),
           "plain": "dd iflag=direct" if direct else "dd, buffered (this file system refuses O_DIRECT)",
           "sides": {s: {k: summary(v) for k, v in x.items()} for s, x in raw.items()},
           "plain_wall_s": summary([q["wall_s"] for q in plain]),
           "plain_bw_bytes_per_s": summary([q["bw_bytes_per_s"] for q in plain]),
           "ratio_epoch": ratio(raw["dlio"]["epoch_s"], raw["kernel"]["epoch_s"]),
           "ratio_wall": ratio(raw["dlio"]["wall_s"], raw["kernel"]["wall_s"])}
    # the compute the epoch's steps must take, whatever the storage: the floor of an epoch
    steps = int(cfg["dataset"]["num_files_train"]) // (int(cfg["reader"]["batch_size"]) * ranks)
    res["compute_floor_s"] = steps * float(cfg["train"]["computation_time"]) * epochs
    shutil.rmtree(folder, ignore_errors=True)
    return res


def _cycle(ctx: Context, venv: Path, p: dict) -> dict:
    d, cfg = workload(ctx, venv, "llama3_8b_v3", p["ckpt_scale"])
    n = int(cfg["checkpoint"]["num_checkpoints_write"])
    ranks = p["ranks"]
    write, read = {"num_checkpoints_read": 0}, {"num_checkpoints_write": 0, "num_checkpoints_read": n}
    raw: dict = {s: {"write_wall_s": [], "read_wall_s": [], "cycle_wall_s": [], "save_s": [], "load_s": [],
                     "gap_bound_s": [], "launch_cost_s": []} for s in ("dlio", "kernel")}
    sleep = float(cfg["checkpoint"].get("time_between_checkpoints", 0) or 0)
    dlio_gap = []
    for i in range(p["repeat"]):
        for side in ("dlio", "kernel"):
            ctx.say(f"mlperf3: llama3_8b_v3 cycle, {side}, repetition {i + 1}/{p['repeat']}: write {n}, read {n}")
            folder = ctx.work / "mlperf3" / f"checkpoints-{side}"
            shutil.rmtree(folder, ignore_errors=True)
            secs, t_end = {}, time.time()
            for phase, keys in (("write", write), ("read", read)):
                name = f"mlperf3/llama-{side}-{phase}-{i}"
                if side == "dlio":
                    r = _dlio(venv, d, "llama3_8b_v3", ctx.raw / name, ranks,
                              [f"++workload.checkpoint.checkpoint_folder={folder}"] +
                              [f"++workload.checkpoint.{k}={v}" for k, v in keys.items()])
                    st = _ckpt_stamps(r["stats"])
                    s = [float(v["duration"]) for v in st]
                    if phase == "read" and st:
                        dlio_gap.append(datetime.fromisoformat(st[0]["start"]).timestamp() - t_end)
                else:
                    r = kernel(ctx, name, ranks, {"dlio_version": ENTRY, "checkpoint_folder": folder, **keys},
                               config=d / WORKLOAD)
                    s = [c["seconds"] for c in r["output"]["checkpoint"]["checkpoints"]]
                t_end = time.time()
                if len(s) != n:
                    raise BenchError(f"mlperf3: {side} {phase}: {len(s)} checkpoints reported, {n} expected")
                secs[phase] = (r["wall_s"], sum(s))
            x = raw[side]
            (ww, ws), (rw, rs) = secs["write"], secs["read"]
            x["write_wall_s"].append(ww)
            x["read_wall_s"].append(rw)
            x["cycle_wall_s"].append(ww + rw)
            x["save_s"].append(ws)
            x["load_s"].append(rs)
            x["gap_bound_s"].append(rw - rs)
            # wall less the program's own checkpoint time and its sleeps between checkpoints (n - 1 per launch)
            x["launch_cost_s"].append((ww - ws - sleep * (n - 1)) / 2 + (rw - rs - sleep * (n - 1)) / 2)
            shutil.rmtree(folder, ignore_errors=True)
    res = {"workload": f"llama3_8b_v3 {p['ckpt_scale']}", "ranks": ranks, "checkpoints": n, "rule_s": RULE_S,
           "time_between_checkpoints": sleep,
           "sides": {s: {k: summary(v) for k, v in x.items()} for s, x in raw.items()},
           "ratio_cycle": ratio(raw["dlio"]["cycle_wall_s"], raw["kernel"]["cycle_wall_s"]),
           "ratio_save": ratio(raw["dlio"]["save_s"], raw["kernel"]["save_s"]),
           "ratio_load": ratio(raw["dlio"]["load_s"], raw["kernel"]["load_s"]),
           "dlio_gap_measured_s": summary(dlio_gap) if dlio_gap else None}
    res["within_rule"] = {s: max(raw[s]["gap_bound_s"]) <= RULE_S for s in raw}
    return res


def measure(ctx: Context) -> dict:
    p = ctx.preset.get("mlperf3")
    if p is None:
        return {"skipped": f"not in the {ctx.scale} preset: its DLIO 3.x launches take minutes (SCALE=small)"}
    venv = dlio3_venv()
    if venv is None or not (venv / "bin" / "dlio_benchmark").exists():
        return {"skipped": f"no venv of MLCommons DLIO 3.x ({REVISION}): make dlio-venv-spec DLIO=<a git checkout of "
                           "it>, or H5DLIO_DLIO3_VENV"}
    load = {"before": wait_for_quiet(ctx)}
    res = {"revision": REVISION, "entry": ENTRY, "repeat": p["repeat"], "epoch": _epoch(ctx, venv, p),
           "cycle": _cycle(ctx, venv, p)}
    e, c = res["epoch"]["sides"], res["cycle"]["sides"]
    res["launch_cost"] = {"dlio_train_s": e["dlio"]["launch_cost_s"], "kernel_train_s": e["kernel"]["launch_cost_s"],
                          "dlio_checkpoint_s": c["dlio"]["launch_cost_s"],
                          "kernel_checkpoint_s": c["kernel"]["launch_cost_s"]}
    load["after"] = load_snapshot()
    res["load"] = load
    res["sides"] = True  # results.md shows the section when this key is present (report.SECTIONS)
    return res

