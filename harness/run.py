"""A side-by-side run: generation and training as separate launches, each side under each profile, all in one
run directory with manifest.json. Interrupted runs resume where they stopped (--resume). The run's execution: its
plan (harness.plan) prepared into a run directory, launched step by step, collected (harness.collect)."""
from __future__ import annotations

import os
import platform
import shutil
import sys
import time
from pathlib import Path

import yaml

from common.coreconfig import provenance
from common.proc import command_output, venv_python
from common.rundir import SCHEMA, WORKLOAD, RunDir, SchemaError
from harness import vol as hvol
from harness.collect import collect
from harness.dlio import describe
from harness.launch import execute
from harness.paths import KERNEL_BIN, REPO
from harness.plan import Plan, launches

RESUME_KEYS = ("workload", "ranks", "launcher", "profiles", "kernel_sets", "steps")

def check_resumable(rd: Path) -> str | None:
    """Why rd cannot be resumed (None: it can): a manifest.json this harness wrote, whole."""
    try:
        m = RunDir(rd).load()
    except SchemaError as e:
        return f"--resume {rd}: {e}"
    except OSError as e:
        return f"--resume {rd}: cannot read manifest.json: {e.strerror or e}"
    except ValueError as e:
        return f"--resume {rd}: manifest.json is not valid JSON ({e})"
    if not isinstance(m, dict):
        return f"--resume {rd}: manifest.json is not a run manifest"
    missing = [k for k in RESUME_KEYS if k not in m]
    wl_missing = [k for k in ("name", "scale", "base", "config", "base_path") if k not in m.get("workload", {})]
    if missing or wl_missing or not isinstance(m["steps"], dict):
        return f"--resume {rd}: manifest.json lacks {missing + ['workload.' + k for k in wl_missing] or ['steps']}"
    kb = (m.get("vol") or {}).get("kernel_bin")
    if kb and Path(kb) != KERNEL_BIN:  # the rest of the kernel side must run the same kernel (VOL=async: the vol one)
        return (f"--resume {rd}: its kernel side ran {kb} (VOL={m['vol'].get('requested')}), this harness "
                f"{KERNEL_BIN}: resume with H5DLIO_KERNEL_BIN={kb}")
    return None


def versions(dlio_python: str) -> dict:
    probe = ("import importlib.metadata as m, h5py, numpy, sys; print(m.version('dlio-benchmark'), h5py.__version__, "
             "h5py.version.hdf5_version, numpy.__version__, sys.version.split()[0])")
    d = command_output([dlio_python, "-c", probe]).split()
    k = command_output([str(KERNEL_BIN), "--version"]).split()
    git = command_output(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    dirty = bool(command_output(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"]))
    return {
        "dlio": d[0] if len(d) == 5 else "unknown", "dlio_h5py": d[1] if len(d) == 5 else "unknown",
        "dlio_hdf5": d[2] if len(d) == 5 else "unknown", "dlio_numpy": d[3] if len(d) == 5 else "unknown",
        "dlio_python": d[4] if len(d) == 5 else "unknown",
        "kernel": k[1] if len(k) > 5 else "unknown", "kernel_hdf5": k[5] if len(k) > 5 else "unknown",
        "mpi": command_output(["mpirun", "--version"]).splitlines()[0] if shutil.which("mpirun") else "none",
        "git_revision": git, "git_dirty": dirty,
        "host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
        "harness_python": sys.version.split()[0],
    }


OTHER = {"dlio": "kernel", "kernel": "dlio"}
def prepare(rd: Path, p: Plan) -> dict:
    """The run directory of a fresh run: its workload files (both sides read the plan's config), provenance.json,
    and the manifest it starts from."""
    rd.mkdir(parents=True, exist_ok=True)
    wl, opt, cfg = p.workload, p.opt, p.config
    text = f"# {wl.name} at scale {wl.scale}: {wl.base_path} <- reference-configs/{wl.name}.yaml\n" + \
        yaml.safe_dump(cfg, sort_keys=False)
    (rd / WORKLOAD).write_text(text)
    (rd / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    (rd / "dlio-config" / "workload" / f"h5dlio_{wl.name}.yaml").write_text(text)
    m = {"schema": SCHEMA,  # the run-directory layout (common.rundir.manifest_schema; docs/validation.md)
            "run_id": rd.name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "workload": wl.to_dict(),
            "ranks": opt.ranks, "launcher": opt.launcher, "profiles": opt.profiles, "kernel_sets": opt.kernel_sets,
            "repeat": opt.repeat, "skipped_profiles": opt.skipped_profiles, "sides": list(opt.sides),
            "versions": versions(str(p.dlio_venv / "bin" / "python")), "dlio": _dlio_block(p),
            "vol": hvol.manifest_block(opt.vol, opt.vol_plugins, KERNEL_BIN),
            "dlio_quiet_index_map": opt.dlio_quiet_index_map,
            **({"rank_env": opt.rank_env} if opt.rank_env else {}),  # --rank-env (pipeline audit), only when set
            # what a path is in this run (profiles.shared.paths.launch_roots): the reference venv and its interpreter
            "roots": {"python": venv_python(p.dlio_venv), "home": str(Path.home())},
            "steps": {}, "status": "running"}
    # MLPerf Storage's stamp of what ran (its core-config hash, the DLIO revision), marked not a submission
    RunDir(rd).write_provenance(provenance(cfg, m["dlio"], m["versions"]))
    return m


def _dlio_block(p: Plan) -> dict:
    """The reference DLIO (version, git revision, source) and the kernel entry used for it (manifest["dlio"]): as
    the plan's harness.dlio.select found it, else described now."""
    return p.dlio if p.dlio is not None else describe(p.dlio_venv, KERNEL_BIN)


def _reuse(rd: Path, src: Path, m: dict) -> None:
    """Copy the DLIO side (and its step records) of an earlier run of the same workload. Its path is recorded absolute:
    collect() matches the reused traces' file names against that run's data folder."""
    src = src.resolve()
    old = RunDir(src).load()
    if old["workload"]["config"] != m["workload"]["config"] or old["ranks"] != m["ranks"]:
        raise ValueError(f"--reuse-dlio {src}: different workload or ranks")
    if not (rd / "dlio").exists():
        shutil.copytree(src / "dlio", rd / "dlio", symlinks=True)
    for name, rec in old["steps"].items():
        if name.startswith("dlio.") and rec.get("status") == "ok":
            m["steps"][name] = {**rec, "reused_from": str(src)}


def run(rd: Path, p: Plan, resume: bool, progress=print) -> dict:
    """Run the plan p in rd (resume: rd's manifest, p resumed from it: harness.plan.resumed), then collect."""
    rdir = RunDir(rd)
    if resume:
        m = rdir.load()
    else:
        m = prepare(rd, p)
        if p.opt.reuse_dlio:
            _reuse(rd, p.opt.reuse_dlio, m)
        rdir.save(m)
    steps = launches(rd, p)
    m["status"] = "running"
    try:
        for i, st in enumerate(steps, 1):
            prev = m["steps"].get(st.name)
            if prev and prev.get("status") == "ok":
                progress(f"[{i}/{len(steps)}] {st.name}: done earlier ({prev['wall_s']:.1f} s)")
                continue
            if st.workdir.exists():
                shutil.rmtree(st.workdir)  # a step's own folder only, from an unfinished attempt
            if st.profile == "generate":
                data = rd / st.side / "data"
                if data.exists():
                    shutil.rmtree(data)  # created by this run's earlier, unfinished attempt
            progress(f"[{i}/{len(steps)}] {st.name} ...")
            res = execute(st, progress)
            m["steps"][st.name] = res
            rdir.save(m)
            progress(f"[{i}/{len(steps)}] {st.name}: {res['status']} in {res['wall_s']:.1f} s"
                     + (f" ({res['detail'][:300]})" if res["status"] != "ok" else ""))
            if res["status"] != "ok" and st.profile == "generate":
                break  # nothing later can run without the dataset
    except KeyboardInterrupt:
        m["status"] = "interrupted"
        rdir.save(m)
        progress(f"interrupted: resume with  python -m harness run --resume {rd}")
        raise
    failed = [n for n, r in m["steps"].items() if r.get("status") != "ok"]
    missing = [s.name for s in steps if s.name not in m["steps"]]
    m["status"] = "failed" if failed or missing else "complete"
    m["failed_steps"] = failed + missing
    collect(rd, m, p.dlio_venv, p.opt.collect_jobs)
    rdir.save(m)
    return m
