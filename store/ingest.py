"""A run read into the store's record: its identity (what ran, where, with what) and its numbers (metric ->
one value per repetition). Two sources: a harness run directory, read through common.rundir.RunDir (manifest.json,
verdict.json, tables/timing.json), and a bare kernel run's output folder (output.json, docs/kernel.md "Output").
Nothing here writes: a run directory is only read."""
from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from common.coreconfig import flatten
from common.rundir import MANIFEST, SIDES, TIMING, RunDir, SchemaError, verdict_label
from store import BadInput

KERNEL_OUTPUT = "output.json"
# The config hash covers every resolved key that changes I/O: all keys but these, which name places or outputs.
# DLIO's YAML config (a run directory's workload config, dotted paths; a whole section when it ends in ".")
DLIO_NOT_IO = ("dataset.data_folder", "checkpoint.checkpoint_folder", "output.", "hydra.")
# the kernel's resolved config (output.json "config", the kernel's key names)
KERNEL_NOT_IO = ("data-folder", "output-folder", "output-csv-name", "output-ranks-data", "record-samples", "quiet",
                 "warnings", "config-file", "config-source", "checkpoint-folder")


def config_hash(kind: str, config: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of [kind, {dotted key: value}] over the keys that change
    I/O (DLIO_NOT_IO, KERNEL_NOT_IO left out): two runs differing only in where their data or outputs went hash the
    same. kind ("dlio-yaml": a run directory's DLIO config; "kernel": output.json's) keeps the two key spellings
    apart: a run directory and a bare kernel run never share a hash."""
    flat = flatten(config)
    if kind == "kernel":
        keep = {k: v for k, v in flat.items() if k not in KERNEL_NOT_IO}
    else:
        keep = {k: v for k, v in flat.items()
                if not any(k == x or (x.endswith(".") and k.startswith(x)) for x in DLIO_NOT_IO)}
    text = json.dumps([kind, keep], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _unescape(s: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040)."""
    return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def file_system(path: str | None, mounts: Path = Path("/proc/mounts")) -> tuple[str | None, str | None]:
    """(type, mount point) of the file system holding path, looked up when the run is added on the machine adding
    it: the mount of /proc/mounts that is the longest prefix of the nearest existing folder at or above path (a
    data folder a run deleted is on its parent's file system). (None, None) without /proc/mounts."""
    if not path:
        return None, None
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    real = os.path.realpath(p)
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return None, None
    best = (None, None)
    for line in lines:
        f = line.split()
        if len(f) < 3:
            continue
        mnt = _unescape(f[1])
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1] or ""):
            best = (f[2], mnt)
    return best


def _iso(t: float | str) -> str:
    d = datetime.fromtimestamp(t, UTC) if isinstance(t, int | float) else datetime.fromisoformat(t)
    return d.astimezone(UTC).isoformat(timespec="seconds")


def load(path: Path, workload: str | None = None) -> dict:
    """The record of the run at path: a run directory (manifest.json), a kernel output folder or its output.json."""
    path = Path(path)
    if RunDir(path).manifest_path.is_file():
        return from_rundir(path)
    out = path if path.is_file() and path.name == KERNEL_OUTPUT else path / KERNEL_OUTPUT
    if out.is_file():
        return from_kernel(out, workload)
    raise BadInput(f"{path}: neither a run directory (no {MANIFEST}) nor a kernel output folder (no {KERNEL_OUTPUT})")


def _read_json(p: Path) -> dict:
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise BadInput(f"{p}: not readable JSON ({e})") from e
    if not isinstance(d, dict):
        raise BadInput(f"{p}: not a JSON object")
    return d


def _read(rd: RunDir, what: str) -> dict:
    """rd.manifest or rd.verdict (RunDir: the manifest's schema checked), unreadable or not an object: BadInput."""
    p = rd.manifest_path if what == "manifest" else rd.verdict_path
    try:
        d = getattr(rd, what)
    except SchemaError as e:
        raise BadInput(str(e)) from e
    except (OSError, ValueError) as e:
        raise BadInput(f"{p}: not readable JSON ({e})") from e
    if not isinstance(d, dict):
        raise BadInput(f"{p}: not a JSON object")
    return d


def _data_folder(m: dict) -> str | None:
    """Where the run's kernel side (else DLIO side) kept its dataset: <run>/<side>/data beside its step folders
    (harness/run.py lays them out so), as the manifest recorded it (the run's own location when it ran)."""
    for side in ("kernel", "dlio"):
        for rec in (m.get("steps") or {}).values():
            if isinstance(rec, dict) and rec.get("side") == side and rec.get("workdir") and \
                    not rec.get("reused_from"):
                return str(Path(rec["workdir"]).parent / "data")
    return None


def timing_metrics(t: dict | None, record_length: float | None) -> dict[str, list[float]]:
    """tables/timing.json -> {"<side>.<metric>": [value per repetition]}: train_s (the epochs' in-program times
    summed), train_epoch<k>_s, eval_s, au_percent, throughput_samples_per_s, io_bytes_per_s (samples/s x
    record_length, as DLIO computes its I/O rate), launch_wall_s (the launch, start-up included), checkpoint_s."""
    out: dict[str, list[float]] = {}
    for side in SIDES:
        for rep in (t or {}).get(side) or []:
            vals: dict[str, float] = {}
            epochs = rep.get("train_epoch_s") or []
            if epochs:
                vals["train_s"] = sum(epochs)
                vals.update({f"train_epoch{i}_s": x for i, x in enumerate(epochs, 1)})
            if rep.get("eval_s"):
                vals["eval_s"] = sum(rep["eval_s"])
            for k in ("au_percent", "throughput_samples_per_s"):
                if rep.get(k) is not None:
                    vals[k] = rep[k]
            if rep.get("throughput_samples_per_s") is not None and record_length:
                vals["io_bytes_per_s"] = rep["throughput_samples_per_s"] * record_length
            if rep.get("wall_s") is not None:
                vals["launch_wall_s"] = rep["wall_s"]
            if rep.get("checkpoints"):
                vals["checkpoint_s"] = sum(c["seconds"] for c in rep["checkpoints"])
            for k, x in vals.items():
                out.setdefault(f"{side}.{k}", []).append(float(x))
    return out


def _verdict(rd: RunDir) -> dict:
    if not rd.verdict_path.is_file():
        return {}
    v = _read(rd, "verdict")
    s = v.get("summary") or {}
    return {"verdict": verdict_label(v) if v.get("verdict") else None, "checks_pass": s.get("pass", 0),
            "checks_fail": s.get("fail", 0), "checks_skip": s.get("skip", 0)}


def from_rundir(path: Path) -> dict:
    """A harness run directory's record (kind "validate"): identity from manifest.json, the verdict's counts from
    verdict.json (none yet: not validated), the numbers from tables/timing.json (none without the timing profile)."""
    rd = RunDir(path)
    m = _read(rd, "manifest")
    if not all(k in m for k in ("run_id", "created", "workload")):
        raise BadInput(f"{rd.manifest_path}: no run_id, created or workload: not a harness manifest")
    wl, v = m["workload"], m.get("versions") or {}
    config = {"workload": wl.get("config") or {}, "kernel_sets": m.get("kernel_sets") or []}
    ds = config["workload"].get("dataset") or {}
    data = _data_folder(m)
    storage = str(Path(data).parents[2]) if data else str(rd.path.resolve().parent)
    entry = (m.get("dlio") or {}).get("entry")
    hosts = sorted({h for r in ((rd.table(TIMING) or {}).get("kernel") or [])
                    for h in ((r.get("nodes") or {}).get("rank_host") or [])}) or [v.get("host")]
    fs, mnt = file_system(data)
    return {"key": f"run:{m['run_id']}:{m['created']}", "name": m["run_id"], "kind": "validate",
            "workload": wl.get("name"), "scale": wl.get("scale"), "date": _iso(m["created"]),
            "config_json": json.dumps(config, sort_keys=True), "config_hash": config_hash("dlio-yaml", config),
            "dlio": f"DLIO {v.get('dlio', '?')}" + (f", kernel entry {entry}" if entry else ""),
            "kernel_version": v.get("kernel"),
            "kernel_git": (v.get("git_revision") or "") + ("-dirty" if v.get("git_dirty") else "") or None,
            "hosts": [h for h in hosts if h], "ranks": m.get("ranks"), "storage": storage, "data_folder": data,
            "fs_type": fs, "fs_mount": mnt, "source": str(rd.path.resolve()), **_verdict(rd),
            "metrics": timing_metrics(rd.table(TIMING),
                                      ds.get("record_length", ds.get("record_length_bytes")))}


def kernel_metrics(s: dict) -> dict[str, list[float]]:
    """output.json -> {"kernel.<metric>": [value]}: train_s and train_epoch<k>_s (observed_s), au_percent,
    throughput_samples_per_s, io_bytes_per_s (train's means), opens_per_s (train's opens over train_s), eval_s,
    eval_opens_per_s, generate_s and generate_bytes_per_s, checkpoint_s and checkpoint_bytes_per_s, wall_s."""
    v: dict[str, float] = {}
    for phase, pre in (("train", ""), ("eval", "eval_")):
        p = s.get(phase) or {}
        ep = p.get("epochs") or []
        span = sum(e.get("observed_s", 0.0) for e in ep)
        if ep:
            v[f"{phase}_s"] = span
            if phase == "train":
                v.update({f"train_epoch{e.get('epoch', i)}_s": e["observed_s"] for i, e in enumerate(ep, 1)})
            if span > 0:
                v[f"{pre}opens_per_s"] = sum(e.get("opens", 0) for e in ep) / span
        for k, name in (("au_mean_percent", "au_percent"), ("throughput_mean_samples_per_s",
                        "throughput_samples_per_s"), ("io_mean_bytes_per_s", "io_bytes_per_s")):
            if ep and p.get(k) is not None:
                v[f"{pre}{name}"] = p[k]
    for block, name in (("generate", "generate"), ("checkpoint", "checkpoint")):
        b = s.get(block) or {}
        if b.get("seconds") is not None:
            v[f"{name}_s"] = b["seconds"]
        if b.get("bandwidth_bytes_per_s") is not None:
            v[f"{name}_bytes_per_s"] = b["bandwidth_bytes_per_s"]
    if s.get("wall_s") is not None:
        v["wall_s"] = s["wall_s"]
    return {f"kernel.{k}": [float(x)] for k, x in v.items()}


def _kernel_data_folder(out: Path, c: dict) -> str | None:
    """The data folder as an absolute path: a relative one is relative to where the kernel ran, found by walking up
    from the output folder as many levels as a relative output-folder has parts (unknown: as given)."""
    data, of = c.get("data-folder"), c.get("output-folder")
    if not data or os.path.isabs(data):
        return data
    if not of or os.path.isabs(of):
        return data
    cwd = out.parent.resolve()
    for _ in Path(of).parts:
        cwd = cwd.parent
    return os.path.normpath(cwd / data)


def from_kernel(out: Path, workload: str | None = None) -> dict:
    """A bare kernel run's record (kind "kernel") from its output.json; its date is the file's modification time
    (output.json holds none); its key the file's sha256 (the same output added twice is one row). A mutated run
    (output.json "mutant") is refused: it is not a measurement."""
    raw = out.read_bytes()
    s = _read_json(out)
    if s.get("mutant"):
        raise BadInput(f"{out}: a mutated run (mutant {s['mutant']}), not a measurement")
    c = s.get("config")
    if not isinstance(c, dict) or "h5dlio_version" not in s:
        raise BadInput(f"{out}: no h5dlio_version or config: not the kernel's output.json")
    digest = hashlib.sha256(raw).hexdigest()
    date = _iso(out.stat().st_mtime)
    data = _kernel_data_folder(out, c)
    fs, mnt = file_system(data)
    hosts = [p.get("host") for p in (s.get("nodes") or {}).get("per_node") or []] or [s.get("host")]
    entry = c.get("dlio-entry") or c.get("dlio-version")
    return {"key": f"kernel:{digest}", "name": f"kernel-{date[:19].replace('-', '').replace(':', '')}-{digest[:8]}",
            "kind": "kernel", "workload": workload or Path(c.get("config-file") or "kernel").stem, "scale": None,
            "date": date, "config_json": json.dumps(c, sort_keys=True), "config_hash": config_hash("kernel", c),
            "dlio": f"kernel entry {entry}" if entry else None, "kernel_version": s.get("h5dlio_version"),
            "kernel_git": s.get("git_revision"), "hosts": [h for h in hosts if h], "ranks": s.get("ranks"),
            "storage": data, "data_folder": data, "fs_type": fs, "fs_mount": mnt, "source": str(out.resolve()),
            "metrics": kernel_metrics(s)}
