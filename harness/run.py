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
    dlio_version: str | None = None                    # the reference DLIO's version: the kernel's dlio-version


def write_text_atomic(path: Path, text: str) -> None:
    """Readers (and a crash) see the old file or the new one, never a part: a temporary name of this process,
    flushed to disk, then renamed over the file. On failure the old file is untouched and the temporary removed."""
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, obj) -> None:
    write_text_atomic(path, json.dumps(obj, indent=1, default=str))


RESUME_KEYS = ("workload", "ranks", "launcher", "profiles", "kernel_sets", "steps")


def check_resumable(rd: Path) -> str | None:
    """Why rd cannot be resumed (None: it can): a manifest.json this harness wrote, whole."""
    try:
        m = json.loads((rd / "manifest.json").read_text())
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
    return None


def merged_config(wl: Workload) -> dict:
    """The workload both sides run: the merged config with the generation buffer bounded (DLIO's default is 2 GiB
    per rank)."""
    cfg = dict(wl.config)
    ds = cfg.get("dataset") or {}
    cfg["dataset"] = {**ds, "generation_buffer_size": ds.get("generation_buffer_size", GEN_BUFFER)}
    return cfg


def precheck(wl: Workload, opt: Options) -> str | None:
    """Validate the workload (and --kernel-set) with the kernel's own validator for opt.ranks ranks, before anything
    is launched or written: `h5dlio --dry-run --ranks N`, one process, no I/O. Returns the kernel's message when it
    refuses the workload (exit 2); None when it accepts it or cannot tell (any other failure: the run will say)."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="h5dlio-precheck-") as f:
        f.write(yaml.safe_dump(merged_config(wl), sort_keys=False))
        f.flush()
        argv = [str(KERNEL_BIN), "--config", f.name, "--dry-run", "--ranks", str(opt.ranks), "--set",
                "generate-data=true"]
        for s in opt.kernel_sets + ([f"dlio-version={opt.dlio_version}"] if opt.dlio_version else []):
            argv += ["--set", s]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if p.returncode != 2:
        return None
    msg = " ".join(ln.removeprefix("h5dlio: error: ") for ln in p.stderr.splitlines() if ln.startswith("h5dlio:"))
    return f"workload {wl.name} ({wl.scale}) refused by the kernel for {opt.ranks} ranks: " + \
        (msg.replace(f.name, "workload") or p.stderr.strip()[-500:])


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


# Launches that read in the ranks themselves (read_threads=0) on both sides: logvfd-rt0 because DLIO's order is
# deterministic only there; darshan because Darshan does not follow processes forked after MPI_Init (DLIO's PyTorch
# workers: measured, they leave no log and no record), so with workers it would see none of DLIO's data reads.
RT0 = ("logvfd-rt0", "darshan")


def kernel_sets(profile: str, data: Path, out: Path, generate: bool) -> list[str]:
    s = [f"data-folder={data}", f"output-folder={out}", "quiet=true"]
    if generate:
        s += ["generate-data=true", "train=false", "evaluation=false"]
    else:
        s += ["generate-data=false"]
    if profile in RT0:
        s.append("read-threads=0")
    return s


def dlio_overrides(profile: str, data: Path, out: Path, workdir: Path, generate: bool) -> list[str]:
    o = [f"++workload.dataset.data_folder={data}", f"++workload.output.folder={out}",
         f"++workload.workflow.generate_data={generate}", f"++workload.workflow.train={not generate}",
         f"hydra.run.dir={workdir / 'hydra'}"]
    if profile in RT0:
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
                if opt.dlio_version:  # the kernel entry of the reference DLIO's release
                    base += ["--set", f"dlio-version={opt.dlio_version}"]
                for s in kernel_sets(prof, src, wd / "out", gen) + ([] if gen else opt.kernel_sets):
                    base += ["--set", s]
            else:
                base = [str(dlio_venv / "bin" / "dlio_benchmark"), "--config-dir", str(rd / "dlio-config"),
                        f"workload=h5dlio_{wl.name}"] + dlio_overrides(prof, src, wd / "out", wd, gen)
            env: dict = {}
            dirs: tuple = ()
            files: tuple = ()
            if prof.startswith("logvfd"):
                base, env = get_profile("logvfd").wrap(base, env, wd, side)
            elif prof == "dftracer":
                base, env = get_profile("dftracer").wrap(base, env, wd, side, dlio_venv=dlio_venv, data_dir=src)
            elif prof == "darshan":
                base, env = get_profile("darshan").wrap(base, env, wd, side, info=opt.darshan)
                dirs = (wd / "logs",)  # Darshan writes nothing into a missing folder (a warning only)
                files = ((wd / "darshan.conf", get_profile("darshan").config_text(src)),)
            if side == "dlio" and prof != "dftracer":
                # pydftracer 1.0.2 (DLIO 2.0.0's dependency) is ON unless DFTRACER_ENABLE=0: its Python-level
                # instrumentation writes no trace yet slows DLIO's first epoch ~2x (measured: 2.1-2.5 s vs 0.93-0.99 s,
                # tiny unet3d). Every other launch is DLIO without a profiler besides the one under test.
                env = {**env, "DFTRACER_ENABLE": "0"}
            argv = launcher.argv(logdir, env) + base
            steps.append(Step(f"{side}.{prof}", side, prof, argv, env, wd, logdir, opt.timeout, dirs, files))
    return steps


def prepare(rd: Path, wl: Workload, opt: Options, dlio_venv: Path) -> dict:
    rd.mkdir(parents=True, exist_ok=True)
    cfg = merged_config(wl)
    text = f"# {wl.name} at scale {wl.scale}: {wl.base_path} <- reference-configs/{wl.name}.yaml\n" + \
        yaml.safe_dump(cfg, sort_keys=False)
    (rd / "workload.yaml").write_text(text)
    (rd / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    (rd / "dlio-config" / "workload" / f"h5dlio_{wl.name}.yaml").write_text(text)
    wl2 = Workload(wl.name, wl.scale, wl.base, cfg, wl.base_path)
    return {"run_id": rd.name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "workload": wl2.to_dict(),
            "ranks": opt.ranks, "launcher": opt.launcher, "profiles": opt.profiles, "kernel_sets": opt.kernel_sets,
            "repeat": opt.repeat, "skipped_profiles": opt.skipped_profiles,
            "versions": versions(str(dlio_venv / "bin" / "python")), "dlio": _dlio_block(dlio_venv),
            "steps": {}, "status": "running"}


def _dlio_block(dlio_venv: Path) -> dict:
    """The reference DLIO (version, git revision, source) and the kernel entry used for it (manifest["dlio"])."""
    from harness.dlio import describe
    return describe(dlio_venv, KERNEL_BIN)


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
    """Parse every finished step's raw output into tables/ (one schema per profile, same for both sides). A step
    whose output cannot be parsed is recorded in m["collect_errors"]; the others are still collected."""
    tables = rd / "tables"
    tables.mkdir(exist_ok=True)
    timing_t: dict = {"dlio": [], "kernel": []}
    errors: dict = {}
    for name, rec in m["steps"].items():
        if rec.get("status") != "ok":
            continue
        try:
            _collect_step(rd, name, rec, tables, timing_t, dlio_venv)
        except (OSError, ValueError, KeyError, TypeError) as e:  # a step's output unreadable: the others still count
            errors[name] = f"{type(e).__name__}: {e}"
    m["collect_errors"] = errors
    if timing_t["dlio"] or timing_t["kernel"]:
        write_json_atomic(tables / "timing.json", timing_t)  # per side: one entry per repetition


def _collect_step(rd: Path, name: str, rec: dict, tables: Path, timing_t: dict, dlio_venv: Path) -> None:
    from profiles import darshan, dftracer, logvfd, timing
    side, prof = name.split(".", 1)
    wd = Path(rec["workdir"])
    # the data folder the launch read, as its traces name it: a step reused from an earlier run read that run's
    data = Path(rec.get("reused_from") or rd) / side / "data"
    if prof.startswith("timing"):
        timing_t[side].append({"step": name, "wall_s": rec["wall_s"], **timing.parse(wd / "out", side)})
    elif prof.startswith("logvfd"):
        write_text_atomic(tables / f"{prof}-{side}.json", json.dumps(logvfd.parse_dir(wd / "ranks")))
    elif prof == "darshan":
        write_json_atomic(tables / f"darshan-{side}.json", darshan.parse(wd, side, data))
    elif prof == "dftracer":
        t = dftracer.parse(wd, side, data)
        write_json_atomic(tables / f"dftracer-timeline-{side}.json", t.pop("timeline"))
        write_json_atomic(tables / f"dftracer-{side}.json", t)
    elif prof == "generate":
        p = subprocess.run([str(dlio_venv / "bin" / "python"), str(REPO / "harness" / "inspect_dataset.py"),
                            str(rd / side / "data")], capture_output=True, text=True)
        if p.returncode == 0:
            write_text_atomic(tables / f"dataset-{side}.json", p.stdout)


def run(rd: Path, wl: Workload | None, opt: Options, dlio_venv: Path, resume: bool, progress=print) -> dict:
    rdir = RunDir(rd)
    if resume:
        m = rdir.load()
        wl = Workload(**{k: m["workload"][k] for k in ("name", "scale", "base", "config", "base_path")})
        opt.ranks, opt.launcher, opt.profiles, opt.kernel_sets = m["ranks"], m["launcher"], m["profiles"], \
            m["kernel_sets"]
        opt.dlio_version = m.get("dlio", {}).get("version", opt.dlio_version)
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
