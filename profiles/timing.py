"""Timing profile (no profiler): each side's own measurements of a training launch, repeated REPEAT times
(steps timing, timing-2, ...) -> tables/timing.json, one entry per repetition and side. Its numbers are reported by
validate's runtime.* rows, not judged: it has no checks of its own."""
from __future__ import annotations

import json
from pathlib import Path

from profiles import Done, LaunchSpec, Profile, Shape, register


def parse(outdir: Path, side: str) -> dict:
    """In-program time of each training epoch (and evaluation) as the program itself reports it."""
    if side == "kernel":
        s = json.loads((outdir / "output.json").read_text())
        tr = s.get("train", {}).get("epochs", [])
        ev = s.get("eval", {}).get("epochs", [])
        return {"train_epoch_s": [e["observed_s"] for e in tr], "eval_s": [e["observed_s"] for e in ev],
                "au_percent": s.get("train", {}).get("au_mean_percent"),
                "throughput_samples_per_s": s.get("train", {}).get("throughput_mean_samples_per_s"),
                "wall_s_in_program": s.get("wall_s")}
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
            "wall_s_in_program": None}


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
