"""A side-by-side run: generation and training as separate launches, each side under each profile, all in one
run directory with manifest.json. Interrupted runs resume where they stopped (--resume)."""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.launch import Launcher, Step, execute
from harness.workload import REPO, Workload

KERNEL_BIN = REPO / "build" / "h5dlio"
GEN_BUFFER = 16 * 1024 * 1024


@dataclass
class Options:
    ranks: int = 2
    launcher: str = "mpirun"
    profiles: list = field(default_factory=lambda: ["timing", "logvfd"])
    kernel_sets: list = field(default_factory=list)  # extra --set for the kernel (negative controls)
    timeout: float = 1800.0
    reuse_dlio: Path | None = None                     # take the DLIO side of an earlier run of the same workload
    repeat: int = 1                                    # timing launches per side (REPEAT=N)
    darshan: dict = field(default_factory=dict)        # profiles.darshan.detect() result
    darshan_skip_sides: dict = field(default_factory=dict)  # side -> reason
    skipped_profiles: dict = field(default_factory=dict)    # profile -> reason (recorded in the manifest)


def write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, path)


def _cmd(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (p.stdout or p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"


def versions(dlio_python: str) -> dict:
    probe = ("import importlib.metadata as m, h5py, numpy, sys; print(m.version('dlio-benchmark'), h5py.__version__, "
             "h5py.version.hdf5_version, numpy.__version__, sys.version.split()[0])")
    d = _cmd([dlio_python, "-c", probe]).split()
    k = _cmd([str(KERNEL_BIN), "--version"]).split()
    git = _cmd(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    dirty = bool(_cmd(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"]))
    return {
        "dlio": d[0] if len(d) == 5 else "unknown", "dlio_h5py": d[1] if len(d) == 5 else "unknown",
        "dlio_hdf5": d[2] if len(d) == 5 else "unknown", "dlio_numpy": d[3] if len(d) == 5 else "unknown",
        "dlio_python": d[4] if len(d) == 5 else "unknown",
        "kernel": k[1] if len(k) > 5 else "unknown", "kernel_hdf5": k[5] if len(k) > 5 else "unknown",
        "mpi": _cmd(["mpirun", "--version"]).splitlines()[0] if shutil.which("mpirun") else "none",
        "git_revision": git, "git_dirty": dirty,
        "host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
        "harness_python": sys.version.split()[0],
    }


class RunDir:
    def __init__(self, path: Path):
        self.path = path
        self.manifest_path = path / "manifest.json"

    def load(self) -> dict:
        return json.loads(self.manifest_path.read_text())

    def save(self, m: dict) -> None:
        write_json_atomic(self.manifest_path, m)


def kernel_sets(profile: str, data: Path, out: Path, generate: bool) -> list[str]:
    s = [f"data-folder={data}", f"output-folder={out}", "quiet=true"]
    if generate:
        s += ["generate-data=true", "train=false", "evaluation=false"]
    else:
        s += ["generate-data=false"]
    if profile == "logvfd-rt0":
        s.append("read-threads=0")
    return s


def dlio_overrides(profile: str, data: Path, out: Path, workdir: Path, generate: bool) -> list[str]:
    o = [f"++workload.dataset.data_folder={data}", f"++workload.output.folder={out}",
         f"++workload.workflow.generate_data={generate}", f"++workload.workflow.train={not generate}",
         f"hydra.run.dir={workdir / 'hydra'}"]
    if profile == "logvfd-rt0":
        o.append("++workload.reader.read_threads=0")
    return o


def plan(rd: Path, wl: Workload, opt: Options, dlio_venv: Path) -> list[Step]:
    """The launches of a run, in order. Log VFD runs read the *other* side's dataset, which doubles as the
    cross-read check (DLIO reads the kernel's files, the kernel reads DLIO's)."""
    from profiles import get as get_profile
    launcher = Launcher(opt.launcher, opt.ranks)
    data = {"dlio": rd / "dlio" / "data", "kernel": rd / "kernel" / "data"}
    other = {"dlio": "kernel", "kernel": "dlio"}
    profiles = ["generate"]
    if "timing" in opt.profiles:
        profiles += ["timing"] + [f"timing-{k}" for k in range(2, opt.repeat + 1)]
    if "dftracer" in opt.profiles:
        profiles.append("dftracer")
    if "darshan" in opt.profiles:
        profiles.append("darshan")
    if "logvfd" in opt.profiles:
        profiles.append("logvfd")
        if wl.read_threads > 0:
            profiles.append("logvfd-rt0")  # DLIO's order is deterministic only with read_threads=0
    steps = []
    for prof in profiles:
        for side in ("dlio", "kernel"):
            if prof == "darshan" and side in opt.darshan_skip_sides:
                continue
            wd = rd / side / prof
            gen = prof == "generate"
            own = prof == "generate" or prof.startswith("timing") or prof in ("dftracer", "darshan")
            src = data[side] if own else data[other[side]]
            logdir = wd / "ranks"
            if side == "kernel":
                base = [str(KERNEL_BIN), "--config", str(rd / "workload.yaml")]
                for s in kernel_sets(prof, src, wd / "out", gen) + ([] if gen else opt.kernel_sets):
                    base += ["--set", s]
            else:
                base = [str(dlio_venv / "bin" / "dlio_benchmark"), "--config-dir", str(rd / "dlio-config"),
                        f"workload=h5dlio_{wl.name}"] + dlio_overrides(prof, src, wd / "out", wd, gen)
            env: dict = {}
            if prof.startswith("logvfd"):
                base, env = get_profile("logvfd").wrap(base, env, wd, side)
            elif prof == "dftracer":
                base, env = get_profile("dftracer").wrap(base, env, wd, side, dlio_venv=dlio_venv, data_dir=src)
            elif prof == "darshan":
                base, env = get_profile("darshan").wrap(base, env, wd, side, info=opt.darshan)
            argv = launcher.argv(logdir, env) + base
            steps.append(Step(f"{side}.{prof}", side, prof, argv, env, wd, logdir, opt.timeout))
    return steps


def prepare(rd: Path, wl: Workload, opt: Options, dlio_venv: Path) -> dict:
    rd.mkdir(parents=True, exist_ok=True)
    cfg = dict(wl.config)
    cfg.setdefault("dataset", {})
    cfg["dataset"] = {**cfg["dataset"], "generation_buffer_size": cfg["dataset"].get("generation_buffer_size",
                                                                                        GEN_BUFFER)}
    text = f"# {wl.name} at scale {wl.scale}: {wl.base_path} <- reference-configs/{wl.name}.yaml\n" + \
        yaml.safe_dump(cfg, sort_keys=False)
    (rd / "workload.yaml").write_text(text)
    (rd / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    (rd / "dlio-config" / "workload" / f"h5dlio_{wl.name}.yaml").write_text(text)
    wl2 = Workload(wl.name, wl.scale, wl.base, cfg, wl.base_path)
    return {"run_id": rd.name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "workload": wl2.to_dict(),
            "ranks": opt.ranks, "launcher": opt.launcher, "profiles": opt.profiles, "kernel_sets": opt.kernel_sets,
            "repeat": opt.repeat, "skipped_profiles": opt.skipped_profiles,
            "versions": versions(str(dlio_venv / "bin" / "python")), "steps": {}, "status": "running"}


def _reuse(rd: Path, src: Path, m: dict) -> None:
    """Copy the DLIO side (and its step records) of an earlier run of the same workload."""
    old = json.loads((src / "manifest.json").read_text())
    if old["workload"]["config"] != m["workload"]["config"] or old["ranks"] != m["ranks"]:
        raise ValueError(f"--reuse-dlio {src}: different workload or ranks")
    if not (rd / "dlio").exists():
        shutil.copytree(src / "dlio", rd / "dlio", symlinks=True)
    for name, rec in old["steps"].items():
        if name.startswith("dlio.") and rec.get("status") == "ok":
            m["steps"][name] = {**rec, "reused_from": str(src)}


def collect(rd: Path, m: dict, dlio_venv: Path) -> None:
    """Parse every finished step's raw output into tables/ (one schema per profile, same for both sides)."""
    from profiles import darshan, dftracer, logvfd, timing
    tables = rd / "tables"
    tables.mkdir(exist_ok=True)
    timing_t: dict = {"dlio": [], "kernel": []}
    for name, rec in m["steps"].items():
        if rec.get("status") != "ok":
            continue
        side, prof = name.split(".", 1)
        wd = Path(rec["workdir"])
        if prof.startswith("timing"):
            timing_t[side].append({"step": name, "wall_s": rec["wall_s"], **timing.parse(wd / "out", side)})
        elif prof.startswith("logvfd"):
            logvfd.save(logvfd.parse_dir(wd / "ranks"), tables / f"{prof}-{side}.json")
        elif prof == "darshan":
            write_json_atomic(tables / f"darshan-{side}.json", darshan.parse(wd, side, rd / side / "data"))
        elif prof == "dftracer":
            t = dftracer.parse(wd, side, rd / side / "data")
            write_json_atomic(tables / f"dftracer-timeline-{side}.json", t.pop("timeline"))
            write_json_atomic(tables / f"dftracer-{side}.json", t)
        elif prof == "generate":
            p = subprocess.run([str(dlio_venv / "bin" / "python"), str(REPO / "harness" / "inspect_dataset.py"),
                                str(rd / side / "data")], capture_output=True, text=True)
            if p.returncode == 0:
                (tables / f"dataset-{side}.json").write_text(p.stdout)
    if timing_t["dlio"] or timing_t["kernel"]:
        write_json_atomic(tables / "timing.json", timing_t)  # per side: one entry per repetition


def run(rd: Path, wl: Workload | None, opt: Options, dlio_venv: Path, resume: bool, progress=print) -> dict:
    rdir = RunDir(rd)
    if resume:
        m = rdir.load()
        wl = Workload(**{k: m["workload"][k] for k in ("name", "scale", "base", "config", "base_path")})
        opt.ranks, opt.launcher, opt.profiles, opt.kernel_sets = m["ranks"], m["launcher"], m["profiles"], \
            m["kernel_sets"]
        opt.repeat = m.get("repeat", 1)
    else:
        assert wl is not None
        m = prepare(rd, wl, opt, dlio_venv)
        wl = Workload(**{k: m["workload"][k] for k in ("name", "scale", "base", "config", "base_path")})
        if opt.reuse_dlio:
            _reuse(rd, opt.reuse_dlio, m)
        rdir.save(m)
    steps = plan(rd, wl, opt, dlio_venv)
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
    collect(rd, m, dlio_venv)
    rdir.save(m)
    return m
