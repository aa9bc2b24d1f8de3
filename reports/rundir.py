"""Reading a run directory (manifest.json, verdict.json, tables/*.json) and the few number rules every table uses.
Only files are read: nothing here imports harness/, profiles/ or validate/ (the run directory is the interface)."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from common.rundir import MANIFEST, SIDES, RunDir  # noqa: F401  (SIDES: re-exported to the sections)

SIDE_LABEL = {"dlio": "DLIO", "kernel": "kernel"}


class NotARunDir(ValueError):
    """The directory holds no run (exit status 2)."""


@dataclass
class RunData:
    path: Path
    manifest: dict
    verdict: dict | None                   # None: never validated
    _tables: dict = field(default_factory=dict)
    report_dir: Path | None = None         # where the report is written (links are relative to it): DIR/report

    def link(self, rel: str) -> str:
        """[path](href): a file of the run directory (path relative to it), linked from the report's folder."""
        href = os.path.relpath(self.path / rel, self.report_dir or self.path / "report")
        return f"[{rel}]({quote(href)})"

    def table(self, name: str):
        """tables/<name> parsed, or None when the profile did not produce it."""
        if name not in self._tables:
            self._tables[name] = RunDir(self.path).table(name)
        return self._tables[name]

    def table_names(self, prefix: str) -> list[str]:
        return sorted(p.name for p in RunDir(self.path).tables.glob(f"{prefix}*.json"))

    @property
    def config(self) -> dict:
        return self.manifest.get("workload", {}).get("config", {})

    @property
    def checks(self) -> list[dict]:
        return (self.verdict or {}).get("checks", [])

    def check(self, name: str) -> dict | None:
        return next((c for c in self.checks if c["name"] == name), None)

    def step(self, name: str) -> dict | None:
        return self.manifest.get("steps", {}).get(name)


def load_run(path: Path) -> RunData:
    path = Path(path)
    if not path.is_dir():
        raise NotARunDir(f"{path}: not a directory")
    mf = RunDir(path).manifest_path
    if not mf.exists():
        raise NotARunDir(f"{path}: no {MANIFEST} (not a run directory made by `python -m harness run`)")
    try:
        manifest = json.loads(mf.read_text())
    except json.JSONDecodeError as e:
        raise NotARunDir(f"{mf}: not JSON ({e})") from None
    if not isinstance(manifest, dict) or "workload" not in manifest or "steps" not in manifest:
        raise NotARunDir(f"{mf}: no workload/steps (not a harness manifest)")
    vf = RunDir(path).verdict_path
    verdict = json.loads(vf.read_text()) if vf.exists() else None
    return RunData(path, manifest, verdict)


def timing_reps(run: RunData) -> dict[str, list[dict]]:
    """tables/timing.json per side as a list of repetitions {step, wall_s, train_epoch_s, eval_s, au_percent,
    throughput_samples_per_s}. Runs made before REPEAT=N stored one dict per side: read as one repetition whose
    wall time comes from the manifest."""
    t = run.table("timing.json") or {}
    out: dict[str, list[dict]] = {}
    for side in SIDES:
        reps = t.get(side) or []
        if isinstance(reps, dict):
            rec = run.step(f"{side}.timing") or {}
            reps = [{"step": f"{side}.timing", "wall_s": rec.get("wall_s"), **reps}]
        out[side] = list(reps)
    return out


# ---------------------------------------------------------------- statistics and number formats

def stats(xs: list[float]) -> dict | None:
    """min/max/mean and the population standard deviation (as validate's runtime checks), n values."""
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return None
    n = len(xs)
    m = sum(xs) / n
    return {"n": n, "min": min(xs), "max": max(xs), "mean": m, "stdev": math.sqrt(sum((x - m) ** 2 for x in xs) / n)}


def f3(x) -> str:
    """seconds, percentages, samples/s and other measured floats: 3 decimals; '-' when absent"""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.3f}"


def f1(x) -> str:
    """rates (MiB/s): 1 decimal"""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.1f}"


def ratio(a, b) -> str:
    """a/b as '2.50x' ('-' if either is missing or b is 0)"""
    if a is None or b is None or not b:
        return "-"
    return f"{a / b:.2f}x"


def value(v) -> str:
    """A verdict's expected/observed value: ints exact, floats 3 decimals, dicts 'key=value, ...', lists '[...]'."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f3(v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={value(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return str(v)


def plain(v) -> str:
    """a configuration or version value as written in the file: 0.9, true, [1, 2], '' for empty"""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, list | tuple):
        return "[" + ", ".join(plain(x) for x in v) + "]"
    return str(v)


def status_cell(status: str) -> str:
    return {"pass": "PASS", "fail": "FAIL", "skip": "skip"}.get(status, status)


def flatten(d: dict, prefix: str = "") -> list[tuple[str, object]]:
    """nested config -> [('dataset.record_length', 1048576), ...] in file order"""
    out: list[tuple[str, object]] = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += flatten(v, key + ".")
        else:
            out.append((key, v))
    return out
