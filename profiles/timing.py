"""Timing profile (no profiler): each side's own measurements of a training launch, repeated REPEAT times
(steps timing, timing-2, ...) -> tables/timing.json, one entry per repetition and side. Its numbers are reported by
validate's runtime.* rows, not judged: it has no checks of its own; its "nodes" (which rank ran on which node, what each
node's local rank 0 reported) are judged by validate's nodes.* rows."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import yaml

from profiles import Done, LaunchSpec, Profile, Shape, checkpoint_dir, register
from profiles.mlperf_train import from_dlio as mlperf_train_dlio

# DLIO 2.0.0's checkpoint file names end in -<epoch>-<step>-<rank>.pt (base_checkpointing.py:77-86)
CKPT_NAME = re.compile(r"-(\d+)-(\d+)-\d+\.pt$")


def checkpoint_bytes(folder: Path) -> dict[tuple[int, int], dict]:
    """(epoch, step) -> {files, bytes} of the checkpoint files a launch left in its folder."""
    out: dict[tuple[int, int], dict] = defaultdict(lambda: {"files": 0, "bytes": 0})
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        m = CKPT_NAME.search(p.name)
        if m and p.is_file():
            out[(int(m.group(1)), int(m.group(2)))]["files"] += 1
            out[(int(m.group(1)), int(m.group(2)))]["bytes"] += p.stat().st_size
    return dict(out)


def _iso(t: str) -> float:
    return datetime.fromisoformat(t).timestamp()


def checkpoints(workdir: Path, side: str, kernel_json: dict | None, per_epoch: dict | None) -> list[dict]:
    """Each checkpoint of a launch: epoch, step, files and bytes (from its folder), seconds as the program times it
    (kernel: output.json's span over the writing ranks; DLIO: rank 0's start_ckpt..end_ckpt stamps in
    per_epoch_stats.json, utils/statscounter.py:288-304, matched to the files in order within the epoch)."""
    files = checkpoint_bytes(checkpoint_dir(workdir))
    if side == "kernel":
        done = ((kernel_json or {}).get("checkpoint") or {}).get("checkpoints", [])
        return [{"epoch": c["epoch"], "step": c["step"], **files.get((c["epoch"], c["step"]), {"files": 0, "bytes": 0}),
                 "seconds": c["seconds"]} for c in done]
    out = []
    for e in sorted(per_epoch or {}, key=int):
        stamps = sorted((v for k, v in per_epoch[e].items() if k.startswith("ckpt") and "end" in v),
                        key=lambda v: v["start"])
        steps = sorted(s for (ep, s) in files if ep == int(e))
        for st, v in zip(steps, stamps, strict=False):
            out.append({"epoch": int(e), "step": st, **files[(int(e), st)],
                        "seconds": _iso(v["end"]) - _iso(v["start"])})
    return out


MLPERF_RULE_S = 30.0  # MLPerf Storage v3.0: the read phase starts within 30 s of the write phase's end


def mlperf_dlio(metric: dict, per_epoch: dict) -> dict | None:
    """What MLPerf reads from a DLIO 3.x checkpoint-only launch (summary.json's checkpoint metrics, GiB as DLIO
    computes them: utils/statscounter.py:160-187), under the kernel's names, and the gap between the phases from rank
    0's stamps (per_epoch_stats.json save_ckpt<k>/load_ckpt<k>, :368-400): the last save's end to the first load's
    start (a write-only or read-only launch: no gap). None: not such a launch."""
    if "checkpoint_size_GB" not in metric:
        return None
    out = {"note": "what MLPerf Storage v3.0 reads from this DLIO run (summary.json); not a submission",
           "checkpoint_size_GiB": metric["checkpoint_size_GB"]}
    out.update({k.replace("_GB_", "_GiB_"): v for k, v in metric.items()
                if k.startswith(("save_checkpoint", "load_checkpoint"))})
    stamps = [(k, v) for e in per_epoch.values() if isinstance(e, dict) for k, v in e.items()
              if isinstance(v, dict) and k.startswith(("save_ckpt", "load_ckpt")) and "end" in v]
    saves = [_iso(v["end"]) for k, v in stamps if k.startswith("save")]
    loads = [_iso(v["start"]) for k, v in stamps if k.startswith("load")]
    gap = min(loads) - max(saves) if saves and loads else None
    out.update({"phase_gap_kind": "write end to read start, one launch (rank 0)" if gap is not None else
                "no gap in this launch", "phase_gap_seconds": gap, "phase_gap_rule_seconds": MLPERF_RULE_S,
                "phase_gap_within_rule": None if gap is None else gap <= MLPERF_RULE_S})
    return out


def nodes_dlio(outdir: Path, summ: dict) -> dict | None:
    """Which node each DLIO rank ran on: the hostname in its <rank>_output.json (2.0.0 utils/statscounter.py:373-375,
    3.x :507), and what summary.json says per node — num_hosts (size // ranks per node, 2.0.0 :60) and host_memory_GB
    (one entry per node, given by the node's local rank 0: 2.0.0 :93-97, 3.x :97-103). None without rank files."""
    hosts = {}
    for f in outdir.glob("*_output.json"):
        if f.name.split("_", 1)[0].isdigit():
            hosts[int(f.name.split("_", 1)[0])] = json.loads(f.read_text()).get("hostname")
    if not hosts:
        return None
    return {"rank_host": [hosts.get(r) for r in range(max(hosts) + 1)], "num_hosts": summ.get("num_hosts"),
            "host_memory_GiB": summ.get("host_memory_GB")}


def nodes_kernel(s: dict) -> dict | None:
    """The same from the kernel's output.json "nodes" (None from a kernel without it)."""
    n = s.get("nodes")
    if not n:
        return None
    return {"rank_host": n["rank_host"], "num_hosts": n["count"],
            "host_memory_GiB": [p["host_memory_GiB"] for p in n["per_node"]]}


def parse(outdir: Path, side: str) -> dict:
    """In-program time of each training epoch (and evaluation, and checkpoint) as the program itself reports it, and
    the nodes the ranks ran on."""
    if side == "kernel":
        s = json.loads((outdir / "output.json").read_text())
        tr = s.get("train", {}).get("epochs", [])
        ev = s.get("eval", {}).get("epochs", [])
        return {"train_epoch_s": [e["observed_s"] for e in tr], "eval_s": [e["observed_s"] for e in ev],
                "au_percent": s.get("train", {}).get("au_mean_percent"),
                "throughput_samples_per_s": s.get("train", {}).get("throughput_mean_samples_per_s"),
                "wall_s_in_program": s.get("wall_s"), "checkpoints": checkpoints(outdir.parent, side, s, None),
                "mlperf": s.get("mlperf"), "nodes": nodes_kernel(s)}
    stats = outdir / "per_epoch_stats.json"
    if not stats.exists():  # DLIO >= 2.0.1 writes one per rank: <rank>_per_epoch_stats.json
        stats = outdir / "0_per_epoch_stats.json"
    per = json.loads(stats.read_text())
    summ = json.loads((outdir / "summary.json").read_text())
    epochs = sorted(per, key=int)
    train = [float(per[e]["duration"]) for e in epochs if "duration" in per[e]]
    evals = [float(per[e]["eval"]["duration"]) for e in epochs if "eval" in per[e] and "duration" in per[e]["eval"]]
    m = summ.get("metric", {})
    return {"train_epoch_s": train, "eval_s": evals, "au_percent": m.get("train_au_mean_percentage"),
            "throughput_samples_per_s": m.get("train_throughput_mean_samples_per_second"),
            "wall_s_in_program": None, "checkpoints": checkpoints(outdir.parent, side, None, per),
            "mlperf": mlperf_dlio(m, per) or mlperf_train_dlio(summ, _hydra_config(outdir)),
            "nodes": nodes_dlio(outdir, summ)}


def _hydra_config(outdir: Path) -> dict | None:
    """The launch's composed config (hydra's .hydra/config.yaml next to its output folder), or None."""
    f = outdir.parent / "hydra" / ".hydra" / "config.yaml"
    return yaml.safe_load(f.read_text()) if f.exists() else None


@register
class Timing(Profile):
    name = "timing"
    order = 10

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        return [LaunchSpec("timing")] + [LaunchSpec(f"timing-{k}") for k in range(2, shape.repeat + 1)]

    def collect(self, done: Done) -> dict:
        return {"timing.json": {"step": done.name, "wall_s": done.wall_s, **parse(done.workdir / "out", done.side)}}

    def merge(self, parts: list[dict]) -> dict:
        """timing.json: per side, one entry per repetition (no table when no timing launch finished)."""
        t: dict = {"dlio": [], "kernel": []}
        for p in parts:
            row = p["timing.json"]
            t[row["step"].split(".", 1)[0]].append(row)
        return {"timing.json": t} if t["dlio"] or t["kernel"] else {}
