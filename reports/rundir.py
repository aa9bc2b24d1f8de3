"""The first step of a report: reading a run directory (manifest.json, verdict.json, tables/*.json) or a paper
directory (paper.json, its runs, its scaling sweep) into data. Only files are read: nothing here imports harness/,
profiles/ or validate/ (the run directory is the interface), nor the later steps of reports/ (tables, sections,
the document)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import yaml

from common.rundir import MANIFEST, REPORT, SIDES, TIMING, WORKLOAD, RunDir, SchemaError

MIB = 1024 * 1024
PAPER = "paper.json"   # what `make paper` was asked to run: a paper directory's mark


class NotARunDir(ValueError):
    """The directory holds no run (exit status 2)."""


class RunData(RunDir):
    """The run being rendered (profiles.ReportView): a RunDir that keeps every table it read (several sections read
    the same ones) and links the run's files from the report's folder (report_dir: DIR/report unless given)."""
    cache = True

    def __init__(self, path: Path, report_dir: Path | None = None):
        super().__init__(path)
        self.report_dir = report_dir

    def link(self, rel: str) -> str:
        """[path](href): a file of the run directory (path relative to it), linked from the report's folder."""
        href = os.path.relpath(self.path / rel, self.report_dir or self.path / REPORT)
        return f"[{rel}]({quote(href)})"


def load_run(path: Path) -> RunData:
    """The run directory at path, its manifest and verdict read (RunDir: schema checked). Raises NotARunDir."""
    run = RunData(Path(path))
    if not run.path.is_dir():
        raise NotARunDir(f"{path}: not a directory")
    mf = run.manifest_path
    if not mf.exists():
        raise NotARunDir(f"{path}: no {MANIFEST} (not a run directory made by `python -m harness run`)")
    try:
        manifest = run.manifest
    except json.JSONDecodeError as e:
        raise NotARunDir(f"{mf}: not JSON ({e})") from None
    except SchemaError as e:  # a run of a newer tree (common.rundir.manifest_schema): refused, exit 2
        raise NotARunDir(str(e)) from None
    if not isinstance(manifest, dict) or "workload" not in manifest or "steps" not in manifest:
        raise NotARunDir(f"{mf}: no workload/steps (not a harness manifest)")
    run.verdict  # noqa: B018 (read now, as the manifest: a verdict that is not JSON fails here)
    return run


def timing_reps(run: RunData) -> dict[str, list[dict]]:
    """tables/timing.json per side as a list of repetitions {step, wall_s, train_epoch_s, eval_s, au_percent,
    throughput_samples_per_s}. Runs made before REPEAT=N stored one dict per side: read as one repetition whose
    wall time comes from the manifest."""
    t = run.table(TIMING) or {}
    out: dict[str, list[dict]] = {}
    for side in SIDES:
        reps = t.get(side) or []
        if isinstance(reps, dict):
            rec = run.step(f"{side}.timing") or {}
            reps = [{"step": f"{side}.timing", "wall_s": rec.get("wall_s"), **reps}]
        out[side] = list(reps)
    return out


# ---------------------------------------------------------------- a paper directory (make paper)

def rank_rates(path: Path) -> dict[str, dict] | None:
    """A kernel launch's output.json (written with output-ranks-data) -> per phase {ranks, bytes, per-rank and total
    raw and observed rates (MiB/s), metadata and raw read seconds per rank}. The rates are the kernel's own, per rank
    over the phase's epochs (`ranks` lists: docs/kernel.md, Output); here they are only combined: per rank = the mean
    over ranks, total = the sum over ranks. None when the file is missing or has no per-rank lists."""
    try:
        summary = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    out = {}
    for phase in ("train", "eval"):
        ranks = (summary.get(phase) or {}).get("ranks")
        if not ranks:
            continue
        raw = [r["raw_read_rate_bytes_per_s"] / MIB for r in ranks if r["raw_read_rate_bytes_per_s"] is not None]
        obs = [r["observed_rate_bytes_per_s"] / MIB for r in ranks if r["observed_rate_bytes_per_s"] is not None]
        n = len(ranks)
        out[phase] = {"ranks": n, "bytes": sum(r["bytes"] for r in ranks),
                      "raw_per_rank": sum(raw) / len(raw) if raw else None, "raw_total": sum(raw) if raw else None,
                      "obs_per_rank": sum(obs) / len(obs) if obs else None, "obs_total": sum(obs) if obs else None,
                      "meta_s": sum(r["metadata_s"] for r in ranks) / n,
                      "raw_s": sum(r["raw_read_s"] for r in ranks) / n}
    return out or None


@dataclass
class ScalingConfig:
    """One configuration of the kernel-only scaling sweep: scaling/<name>/."""
    name: str
    cfg: dict                                  # workload.yaml ({} when absent)
    launches: dict                             # launches.json ({} when absent): launch -> {status, detail, ...}
    rates: dict[int, list[dict | None]]        # rank count -> each repetition's rank_rates (None: no usable output)


@dataclass
class Sweep:
    meta: dict                                 # scaling/sweep.json: configs, ranks, repeat, cpus, scale, versions
    configs: list[ScalingConfig]


@dataclass
class PaperData:
    path: Path
    meta: dict                                 # paper.json
    runs: list[RunData]                        # runs/<workload>-...: the kernel-vs-DLIO runs, by workload and time
    sweep: Sweep | None                        # None: the sweep did not finish (no scaling/sweep.json)


def load_sweep(d: Path) -> Sweep | None:
    """d/scaling/: sweep.json and, per configuration, its workload, launches and each launch's per-rank rates."""
    sweep_f = d / "scaling" / "sweep.json"
    if not sweep_f.exists():
        return None
    sw = json.loads(sweep_f.read_text())
    configs = []
    for c in sw["configs"]:
        cdir = d / "scaling" / c
        wl, lf = cdir / WORKLOAD, cdir / "launches.json"
        configs.append(ScalingConfig(
            c, yaml.safe_load(wl.read_text()) if wl.exists() else {},
            json.loads(lf.read_text()) if lf.exists() else {},
            {n: [rank_rates(cdir / f"np{n}" / f"rep{k}" / "out" / "output.json") for k in range(1, sw["repeat"] + 1)]
             for n in sw["ranks"]}))
    return Sweep(sw, configs)


def load_paper(d: Path) -> PaperData:
    meta_f = d / PAPER
    try:
        meta = json.loads(meta_f.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise NotARunDir(f"{meta_f}: {e}") from None
    runs = []
    for m in sorted((d / "runs").glob(f"*/{MANIFEST}")):
        try:
            runs.append(load_run(m.parent))
        except NotARunDir:
            continue
    runs.sort(key=lambda r: (r.manifest["workload"]["name"], r.manifest.get("created", "")))
    return PaperData(d, meta, runs, load_sweep(d))


def load(path: Path) -> RunData | PaperData:
    """A run directory or a paper directory, read whole. Raises NotARunDir."""
    return load_paper(path) if (Path(path) / PAPER).exists() else load_run(path)
