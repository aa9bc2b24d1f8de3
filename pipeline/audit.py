"""python -m pipeline audit LEAF [--dlio CHECKOUT] [--dlio-venv VENV] [--preload-dir DIR] [--runs-dir DIR]
[--ranks N] [--json FILE]: `make audit RESULT=<leaf>` (docs/audit.md). Reads an MLPerf Storage results leaf (the folder
mlpstorage writes per run: summary.json, dlio_config/config.yaml, <benchmark>_<datetime>_metadata.json), replays its
DLIO configuration at a small scale with the kernel under the strace profile and the environment the leaf records
(its LD_PRELOAD), and says whether the I/O contract held: O_DIRECT taken where configured, fsync and fadvise reaching
the kernel, the files of the sizes the config says; a preloaded library that kept a call from the kernel is named.

Exit status: 0 the contract held, 1 it broke (each broken row says how), 2 bad input (a leaf file missing or
unreadable, named; a preloaded library not found here), as the harness's own refusals."""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import pipeline
from pipeline import BadInput
from profiles.strace import audit as contract
from profiles.strace.audit import row

# The leaf's files, as mlpstorage reads them back (mlcommons/storage mlpstorage/rules.py BenchmarkResult.
# _process_result_directory: the one *_metadata.json, summary.json, the Hydra folder mlpstorage/config.py
# HYDRA_OUTPUT_SUBDIR = "dlio_config" holding DLIO's config.yaml and overrides.yaml)
SUMMARY = "summary.json"
CONFIG = Path("dlio_config") / "config.yaml"
METADATA = "*_metadata.json"
# the DLIO revisions whose DLIO side this project replays (docs/fidelity-dlio3.md) and the checkout it expects
REPLAYED = {"f6796ed": "/tmp/dlio-src-f6796ed"}
# LD_PRELOAD=... in a recorded command: mpirun's -x, an export, an env prefix (FarmGPU's run.sh: --mpi-params
# "-x LD_PRELOAD=$LD_PRELOAD", mlcommons/storage_results_v3.0 FarmGPU/code-da417e70/run.sh)
PRELOAD_RE = re.compile(r"""LD_PRELOAD=("[^"]*"|'[^']*'|[^\s"']+)""")
SCALE = "audit"
# what DLIO's default workload sets that the leaf may not: DLIO's own defaults for it (f6796ed dlio_benchmark/utils/
# config.py:170-172, 210-211), so a key the leaf left out is what DLIO ran, not the default workload's value
UNSET = {"workflow": {"evaluation": False},
         "dataset": {"num_files_eval": 0, "num_subfolders_train": 0, "num_subfolders_eval": 0}}


@dataclass
class Leaf:
    path: Path
    workload: dict                 # DLIO's workload as the run composed it (dlio_config/config.yaml's workload)
    summary: dict
    metadata: dict
    metadata_name: str
    preload: list[str] = field(default_factory=list)   # the LD_PRELOAD the leaf records, in order


def _load(path: Path, what: str):
    if not path.is_file():
        raise BadInput(f"{path}: no {what} (RESULT= must name a results leaf: summary.json, {CONFIG}, {METADATA})")
    try:
        text = path.read_text()
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise BadInput(f"{path}: unreadable {what}: {e}") from None


def read_leaf(path: Path) -> Leaf:
    """The leaf at path; raises BadInput naming the file missing or unreadable."""
    if not path.is_dir():
        raise BadInput(f"RESULT={path}: not a folder (a results leaf: {SUMMARY}, {CONFIG}, {METADATA})")
    summary = _load(path / SUMMARY, "DLIO summary")
    cfg = _load(path / CONFIG, "DLIO config (Hydra's, mlpstorage's dlio_config/)")
    metas = sorted(path.glob(METADATA))
    if len(metas) != 1:
        raise BadInput(f"{path}/{METADATA}: {len(metas)} metadata files (mlpstorage writes exactly one per run)")
    meta = _load(metas[0], "mlpstorage metadata")
    wl = cfg.get("workload", cfg) if isinstance(cfg, dict) else None
    if not isinstance(wl, dict) or not isinstance(wl.get("workflow") or wl.get("dataset"), dict):
        raise BadInput(f"{path / CONFIG}: neither workload.workflow nor workload.dataset (not a DLIO config)")
    if not isinstance(summary, dict) or not isinstance(meta, dict):
        raise BadInput(f"{path}: {SUMMARY} and {metas[0].name} must be JSON objects")
    return Leaf(path, wl, summary, meta, metas[0].name, recorded_preload(meta))


def recorded_preload(meta: dict) -> list[str]:
    """The libraries of the LD_PRELOAD the metadata records: its environment block when it has one, else the command
    mlpstorage ran (executed_command) and the MPI options it was given (args.mpi_params), the last setting winning."""
    env = meta.get("environment") or meta.get("env") or {}
    texts = [str(meta.get("executed_command") or ""), str((meta.get("args") or {}).get("mpi_params") or "")]
    found = [m.strip("\"'") for t in texts for m in PRELOAD_RE.findall(t)]
    value = env.get("LD_PRELOAD") if isinstance(env, dict) and env.get("LD_PRELOAD") else (found[-1] if found else "")
    return [x for x in re.split(r"[:\s]+", value) if x]


def resolve_preload(libs: list[str], preload_dir: Path | None) -> list[str]:
    """Each recorded library as a path here: itself when it exists, else the file of its name in preload_dir. Raises
    BadInput naming the first library found nowhere."""
    out = []
    for lib in libs:
        here = Path(lib)
        if preload_dir is not None and (preload_dir / here.name).is_file():
            out.append(str((preload_dir / here.name).resolve()))
        elif here.is_file():
            out.append(str(here))
        else:
            raise BadInput(f"LD_PRELOAD library {lib} (recorded by the leaf) is not here: put it at that path or "
                           f"pass PRELOAD_DIR=<folder holding {here.name}> (--preload-dir)")
    return out


def _min(d: dict, key: str, cap) -> None:
    if isinstance(d.get(key), int | float) and d[key] > cap:
        d[key] = cap


def shrunk(wl: dict, ranks: int) -> dict:
    """The scale preset the replay runs (docs/audit.md): what the leaf's config keeps (format, samples per file,
    batch, shuffles, odirect, listing, the checkpoint's mode, parallelism and fsync) at a few files of at most 1 MiB
    mean (the stdev in proportion), one epoch, one read thread; a checkpoint workload at reference-configs/
    llama3_8b_v3.yaml's tiny shape (two checkpoints written and read, a 256-wide transformer)."""
    out: dict = {}
    if isinstance(wl.get("dataset"), dict) and (wl.get("workflow") or {}).get("train", True):
        out = _shrunk_data(wl, ranks)
    if (wl.get("workflow") or {}).get("checkpoint"):
        ck = dict(wl.get("checkpoint") or {})
        for k, cap in (("num_checkpoints_write", 2), ("num_checkpoints_read", 2), ("time_between_checkpoints", 0.5),
                       ("model_size", 4991531)):
            _min(ck, k, cap)
        out["checkpoint"] = ck
        model = wl.get("model") if isinstance(wl.get("model"), dict) else {}
        out["model"] = {k: v for k, v in model.items() if k in ("model_size", "transformer")}
        _min(out["model"], "model_size", 4991531)
        if isinstance(model.get("transformer"), dict):
            out["model"]["transformer"] = dict(model["transformer"])
            for k, cap in (("hidden_size", 256), ("ffn_hidden_size", 896), ("vocab_size", 8016)):
                _min(out["model"]["transformer"], k, cap)
    return out


def _shrunk_data(wl: dict, ranks: int) -> dict:
    ds, rd = dict(wl.get("dataset") or {}), wl.get("reader") or {}
    batch = int(rd.get("batch_size") or 1)
    _min(ds, "num_files_train", max(2 * batch * ranks, 4))
    _min(ds, "num_files_eval", 2 * ranks)
    _min(ds, "num_subfolders_train", 2)
    _min(ds, "num_subfolders_eval", 2)
    for mean, sd in (("record_length", "record_length_stdev"), ("record_length_bytes", "record_length_bytes_stdev")):
        if isinstance(ds.get(mean), int | float) and ds[mean] > (1 << 20):
            if isinstance(ds.get(sd), int | float):
                ds[sd] = int(ds[sd] * (1 << 20) / ds[mean])
            ds[mean] = 1 << 20
    for k in ("record_length_resize", "record_length_bytes_resize"):
        _min(ds, k, 16384)
    compute = min(float((wl.get("train") or {}).get("computation_time") or 0), 0.05)
    return {"dataset": ds, "reader": {"read_threads": min(int(rd.get("read_threads") or 1), 1)},
            "train": {"epochs": 1, "computation_time": compute}}


def workload_file(leaf: Leaf, ranks: int, folder: Path) -> Path:
    """A reference-config file of the leaf (reference-configs' form: DLIO's default workload overlaid by the leaf's
    whole composed workload, the preset SCALE shrinking it), written in folder; the harness loads it as any other."""
    from harness.workload import deep_merge
    over = deep_merge(UNSET, {k: v for k, v in leaf.workload.items() if k not in ("output", "hydra")})
    ref = {"base": "default", "overlay": over, "default_scale": SCALE, "scales": {SCALE: shrunk(leaf.workload, ranks)}}
    path = folder / f"audit_{re.sub(r'[^A-Za-z0-9_]', '_', leaf.path.name)}.yaml"
    path.write_text(f"# the results leaf {leaf.path} ({CONFIG}), replayed by python -m pipeline audit\n" +
                    yaml.safe_dump(ref, sort_keys=False))
    return path


def dlio_side(checkout: Path | None) -> dict | None:
    """audit.dlio_side: None when the DLIO side is replayed too (a checkout of a revision this project replays, its
    venv the one --dlio-venv names); else the row saying why not (no checkout; a revision refused, naming it and what
    to provide). Raises BadInput when the checkout is no git checkout."""
    if checkout is None:
        return row("audit.dlio_side", "SKIP", "no DLIO checkout given (DLIO=): the kernel side alone audited")
    try:
        rev = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=60, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        raise BadInput(f"DLIO={checkout}: not a git checkout of DLIO (git rev-parse HEAD failed)") from None
    if rev[:7] not in REPLAYED:
        return row("audit.dlio_side", "SKIP", f"DLIO={checkout} is revision {rev[:7]}, which this project does not "
                   f"replay: refused; provide a checkout of {', '.join(f'{k} ({v})' for k, v in REPLAYED.items())}")
    return None


def replay(wfile: Path, a: argparse.Namespace, preload: list[str], sides: str) -> Path:
    """The leaf replayed under strace through the harness (sides: kernel, or both; its --rank-env giving every rank
    the leaf's LD_PRELOAD): its run directory. Raises BadInput when the harness refused (exit 2) or named no run."""
    argv = ["--workload", str(wfile), "--scale", SCALE, "--sides", sides, "--profiles", contract.PROFILE, "--ranks",
            str(a.ranks), "--runs-dir", str(a.runs_dir), *(["--dlio-venv", str(a.dlio_venv)] if a.dlio_venv else []),
            *(["--rank-env", "LD_PRELOAD=" + ":".join(preload)] if preload else [])]
    rc, rd = pipeline.run(argv)
    if rc or rd is None:
        raise BadInput(f"the harness could not replay {wfile.name} (exit {rc}; its message above)")
    return rd


def audit(a: argparse.Namespace) -> dict:
    """The audit of a.leaf: its rows and status. Raises BadInput."""
    from common.rundir import RunDir
    leaf = read_leaf(a.leaf)
    libs = resolve_preload(leaf.preload, a.preload_dir)
    refused = dlio_side(a.dlio)
    sides = "kernel" if refused else "both"
    a.runs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="audit-") as tmp:
        wfile = workload_file(leaf, a.ranks, Path(tmp))
        run = RunDir(replay(wfile, a, libs, sides))
        swallows = any(contract.culprits(libs, c) for c in contract.CONTRACT_SYMBOLS)
        base = RunDir(replay(wfile, a, [], sides)) if swallows else None
    scale = shrunk(leaf.workload, a.ranks)
    rows = contract.judge(run, base, leaf.workload, scale, libs)
    rows += [refused] if refused else contract.judge(run, base, leaf.workload, scale, libs, side="dlio")
    status = 1 if any(r["status"] == "FAIL" for r in rows) else 0
    return {"leaf": str(leaf.path), "metadata": leaf.metadata_name, "ld_preload": leaf.preload, "run": str(run.path),
            "baseline": str(base.path) if base else None, "rows": rows, "status": status}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline audit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("leaf", type=Path, help="RESULT: an MLPerf Storage results leaf (the folder holding summary.json)")
    p.add_argument("--dlio", type=Path, default=None, help="DLIO: the checkout of the DLIO revision the leaf ran")
    p.add_argument("--dlio-venv", type=Path, default=None, help="the reference DLIO venv whose rules the kernel takes")
    p.add_argument("--preload-dir", type=Path, default=None,
                   help="PRELOAD_DIR: a folder holding the leaf's preloaded libraries by file name")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="RUNS_DIR: where the replays' runs go")
    p.add_argument("--ranks", type=int, default=1, help="RANKS: the replay's ranks (default 1)")
    p.add_argument("--json", type=Path, default=None, help="also write the audit here as JSON")
    a = p.parse_args(argv)
    try:
        out = audit(a)
    except BadInput as e:
        print(f"audit: error: {e}", file=sys.stderr)
        return 2
    for r in out["rows"]:
        print(f"{r['status']:4}  {r['check']}: {r['detail']}")
    print(f"audit: {out['leaf']}: the I/O contract {'held' if out['status'] == 0 else 'broke'} (run {out['run']})")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")
    return out["status"]
