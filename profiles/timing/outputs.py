"""The timing profile's parse (run in the harness): each side's own outputs of a training launch (the kernel's
output.json; DLIO's per_epoch_stats.json, summary.json, <rank>_output.json and hydra config) read into its entry of
tables/timing.json: epoch times, checkpoints, MLPerf numbers, nodes and the inputs of DLIO's formula."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import yaml

from profiles import checkpoint_dir
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


def _blocks(v: dict, stamps: dict) -> dict:
    """One epoch of a DLIO rank's output.json: per training block its AU, throughput, per-step compute and proc, and
    the block's span from the rank's stamps (None without them)."""
    out = {}
    for b in v["au"]:
        if not b.startswith("block") or not isinstance(v["au"][b], int | float):
            continue  # evaluation, or a block DLIO never ended (2.0.0 starts it as [], statscounter.py:260)
        st = stamps.get(b) or {}
        out[b] = {"au": v["au"][b], "throughput": v["throughput"][b], "compute": v["compute"].get(b, []),
                  "proc": v["proc"].get(b, []),
                  "span_s": _iso(st["end"]) - _iso(st["start"]) if "start" in st and "end" in st else None}
    return out


def formula_dlio(outdir: Path, summ: dict) -> dict | None:
    """DLIO's inputs of its AU and throughput as it wrote them, for check_metrics: per rank (<rank>_output.json) and
    epoch, per block the per-step compute and proc lists and the block's AU and throughput (2.0.0
    utils/statscounter.py:306-337, 3.x :402-470), the block's span from the stamps start_block/end_block write (2.0.0:
    rank 0's per_epoch_stats.json, :255-284; 3.x: each rank's <rank>_per_epoch_stats.json, :331-354); and summary.json's
    training metrics. None without rank files."""
    ranks = {}
    for f in outdir.glob("*_output.json"):
        head = f.name.split("_", 1)[0]
        if not head.isdigit():
            continue
        o = json.loads(f.read_text())
        sf = outdir / f"{head}_per_epoch_stats.json"
        sf = sf if sf.exists() or head != "0" else outdir / "per_epoch_stats.json"
        stamps = json.loads(sf.read_text()) if sf.exists() else {}
        ranks[int(head)] = {e: _blocks(v, stamps.get(e) or {}) for e, v in o.items()
                            if isinstance(v, dict) and isinstance(v.get("au"), dict)
                            and isinstance(v.get("compute"), dict) and isinstance(v.get("proc"), dict)}
    if not ranks:
        return None
    m = summ.get("metric", {})
    return {"ranks": [ranks.get(r, {}) for r in range(max(ranks) + 1)],
            "metric": {k: m[k] for k in ("train_au_percentage", "train_throughput_samples_per_second",
                                         "train_au_mean_percentage", "train_throughput_mean_samples_per_second",
                                         "train_io_mean_MB_per_second") if k in m}}


def formula_kernel(s: dict) -> dict | None:
    """The kernel's inputs of its AU and throughput (output.json train "inputs": per rank and epoch steps, span, first
    step, compute; an older kernel: the mlperf block's, without compute_s) and what it reported from them; None
    without inputs."""
    tr = s.get("train") or {}
    inputs = tr.get("inputs") or (s.get("mlperf") or {}).get("inputs")
    if not inputs:
        return None
    c = s.get("config") or {}
    return {"inputs": inputs, "batch_size": c.get("batch-size"), "record_length": c.get("record-length"),
            "epochs": [{k: e.get(k) for k in ("epoch", "au_percent", "throughput_samples_per_s")}
                       for e in tr.get("epochs", [])],
            **{k: tr.get(k) for k in ("au_mean_percent", "throughput_mean_samples_per_s", "dlio_io_mean_MB_per_s")}}


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
                "mlperf": s.get("mlperf"), "nodes": nodes_kernel(s), "formula": formula_kernel(s)}
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
            "nodes": nodes_dlio(outdir, summ), "formula": formula_dlio(outdir, summ)}


def _hydra_config(outdir: Path) -> dict | None:
    """The launch's composed config (hydra's .hydra/config.yaml next to its output folder), or None."""
    f = outdir.parent / "hydra" / ".hydra" / "config.yaml"
    return yaml.safe_load(f.read_text()) if f.exists() else None
