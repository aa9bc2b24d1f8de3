"""A side-by-side run: generation and training as separate launches, each side under each profile, all in one
run directory with manifest.json. Interrupted runs resume where they stopped (--resume)."""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.connection import wait as mp_wait
from pathlib import Path

import yaml

from common.coreconfig import provenance
from common.fileio import write_json_atomic
from common.proc import command_output
from common.rundir import PROVENANCE, SCHEMA, WORKLOAD, RunDir, SchemaError
from harness import describe_dataset
from harness import vol as hvol
from harness.dlio import describe
from harness.launch import Launcher, Step, execute, kernel_argv
from harness.paths import KERNEL_BIN, REPO
from harness.workload import Workload
from profiles import SIDES, Done, Launch, LaunchSpec, Profile, Shape, Wrapped, checkpoint_dir, owner, registry
from profiles.compare import venv_python

GEN_BUFFER = 16 * 1024 * 1024
BOTH = SIDES
DLIO_SITE = REPO / "harness" / "dlio_site"  # DLIO_QUIET_MAP=1: its sitecustomize shortens DLIO's index map text
# SIDES=both|kernel (--sides): which programs a run launches. A kernel-only run is judged against the analytic model
# alone (validate/checks.py KERNEL_ONLY): never a statement about DLIO.
SIDE_CHOICES = {"both": BOTH, "kernel": ("kernel",)}


@dataclass
class Options:
    ranks: int = 2
    launcher: str = "mpirun"
    profiles: list = field(default_factory=lambda: ["timing", "logvfd"])
    kernel_sets: list = field(default_factory=list)  # extra --set for the kernel (negative controls)
    timeout: float = 1800.0
    reuse_dlio: Path | None = None                     # take the DLIO side of an earlier run of the same workload
    repeat: int = 1                                    # timing launches per side (REPEAT=N)
    found: dict = field(default_factory=dict)          # profile -> what its available()/prepare() found (Found.info)
    skip_sides: dict = field(default_factory=dict)     # profile -> {side: why that side cannot run under it here}
    skipped_profiles: dict = field(default_factory=dict)    # profile -> reason (recorded in the manifest)
    dlio_version: str | None = None                    # the kernel entry whose rules the reference DLIO matches
    dlio_keys: dict | None = None                      # {option: the yaml key the probe saw DLIO honour}
    dlio_rules: dict = field(default_factory=dict)     # {rule: what the probe saw the reference DLIO do}
    vol: hvol.Stack = hvol.STACKS["native"]            # the kernel side's VOL connector stack (VOL=, harness/vol.py)
    vol_plugins: str = ""                              # its plugin folder (HDF5_PLUGIN_PATH of the kernel's ranks)
    sides: tuple = BOTH                                # the sides launched (SIDES=kernel: the kernel's alone)
    dlio_quiet_index_map: bool = False                 # DLIO_QUIET_MAP=1: harness/dlio_site on DLIO's PYTHONPATH
    collect_jobs: int = 1                              # processes parsing the launches' output at once (collect)


RESUME_KEYS = ("workload", "ranks", "launcher", "profiles", "kernel_sets", "steps")


def _in_rank(cfg: dict, read_threads_0: bool) -> bool:
    """Does the kernel read in its ranks in this launch (read-threads 0)?"""
    return read_threads_0 or int((cfg.get("reader") or {}).get("read_threads", 1)) == 0


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


def merged_config(wl: Workload) -> dict:
    """The workload both sides run: the merged config with the generation buffer bounded (DLIO's default is 2 GiB
    per rank)."""
    cfg = dict(wl.config)
    ds = cfg.get("dataset") or {}
    cfg["dataset"] = {**ds, "generation_buffer_size": ds.get("generation_buffer_size", GEN_BUFFER)}
    return cfg


# The kernel's warning for a shape the emulated DLIO release cannot run (config_check.c config_note_rank_shape)
DLIO_CANNOT_RUN = re.compile(r"^h5dlio: warning: (DLIO \S+ cannot run this at \d+ ranks: .*)$", re.M)


def own_checkpoint_format(dry_run_stdout: str) -> str | None:
    """The kernel's own checkpoint format (key checkpoint-format hdf5, ckpth5.c) has no DLIO counterpart (DLIO writes
    torch.save files): a side-by-side run of it would compare nothing. The reason, from the kernel's resolved config
    (its --dry-run JSON), or None."""
    try:
        cfg = json.loads(dry_run_stdout)
    except ValueError:
        return None
    if cfg.get("checkpoint") and cfg.get("checkpoint-format", "torch") != "torch":
        return (f"key 'checkpoint-format': {cfg['checkpoint-format']} is the kernel's own checkpoint format (DLIO "
                "writes torch.save files): nothing to validate side by side; run the kernel alone (build/h5dlio) or "
                "set h5dlio.checkpoint-format=torch")
    return None


def _dry_run(wl: Workload, opt: Options, config: Path, rt0: bool) -> subprocess.CompletedProcess | None:
    """`h5dlio --dry-run --ranks N` of a training launch as plan() builds it (the VOL connector's sets and plugin
    folder included: the kernel's dry run probes the stack, so a connector HDF5 cannot set up, or explicit async reads
    the launch cannot do, is refused here); rt0: its read_threads=0 variant. None: it could not run."""
    sets = ["generate-data=true", *hvol.kernel_sets(opt.vol, _in_rank(merged_config(wl), rt0)), *opt.kernel_sets] + \
        (["read-threads=0"] if rt0 else []) + ([f"dlio-version={opt.dlio_version}"] if opt.dlio_version else [])
    argv = kernel_argv(KERNEL_BIN, config, sets, options=["--dry-run", "--ranks", str(opt.ranks)])
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                              env={**os.environ, **hvol.kernel_env(opt.vol, opt.vol_plugins,
                                                                   _in_rank(merged_config(wl), rt0))})
    except (OSError, subprocess.TimeoutExpired):
        return None


def precheck(wl: Workload, opt: Options, dlio_side: bool = True) -> str | None:
    """Validate the workload (and --kernel-set, and the VOL stack) with the kernel's own validator for opt.ranks
    ranks, before anything is launched or written: `h5dlio --dry-run --ranks N`, one process, no I/O (with explicit
    async reads and reader processes, once more as the read_threads=0 launches run). Returns the kernel's message when
    it refuses the workload (exit 2), or, with dlio_side, when it says the emulated DLIO release cannot run this shape
    (DLIO 2.0.0 crashes on some ranks and hangs on the others: no comparison can come of it); None when it accepts it
    or cannot tell (any other failure: the run will say)."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="h5dlio-precheck-") as f:
        f.write(yaml.safe_dump(merged_config(wl), sort_keys=False))
        f.flush()
        variants = [False] + ([True] if opt.vol.prefetch and not _in_rank(merged_config(wl), False) else [])
        for rt0 in variants:
            p = _dry_run(wl, opt, Path(f.name), rt0)
            if p is None:
                return None
            if p.returncode == 2:
                break
            if p.returncode != 0:
                return None
            own = own_checkpoint_format(p.stdout) if dlio_side and not rt0 else None
            if own:
                return f"workload {wl.name} ({wl.scale}): {own}"
            shape = DLIO_CANNOT_RUN.search(p.stderr) if dlio_side and not rt0 else None
            if shape:
                return f"workload {wl.name} ({wl.scale}) at {opt.ranks} ranks (RANKS): {shape.group(1)}"
        else:
            return None
    msg = " ".join(ln.removeprefix("h5dlio: error: ") for ln in p.stderr.splitlines() if ln.startswith("h5dlio:"))
    return f"workload {wl.name} ({wl.scale}) refused by the kernel for {opt.ranks} ranks" + \
        (f" (VOL={opt.vol.name}, its read_threads=0 launches)" if rt0 else "") + ": " + \
        (msg.replace(f.name, "workload") or p.stderr.strip()[-500:])


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


def kernel_sets(data: Path, out: Path, generate: bool, read_threads_0: bool = False,
                ckpt: Path | None = None) -> list[str]:
    s = [f"data-folder={data}", f"output-folder={out}", "quiet=true"] + \
        ([f"checkpoint-folder={ckpt}"] if ckpt else [])
    if generate:
        s += ["generate-data=true", "train=false", "evaluation=false"]
    else:
        s += ["generate-data=false"]
    if read_threads_0:
        s.append("read-threads=0")
    return s


def dlio_overrides(data: Path, out: Path, workdir: Path, generate: bool, read_threads_0: bool = False,
                   train: bool = True) -> list[str]:
    # DLIO 2.0.0 creates its checkpoint folder in every launch, checkpointing or not (main.py:214 builds the
    # checkpointing mechanism, base_checkpointing.py:31-33 makedirs): inside the launch's folder, never the cwd.
    # train=False: a checkpoint-only workload keeps workflow.train false (profiles.checkpoint_only)
    o = [f"++workload.dataset.data_folder={data}", f"++workload.output.folder={out}",
         f"++workload.checkpoint.checkpoint_folder={checkpoint_dir(workdir)}",
         f"++workload.workflow.generate_data={generate}", f"++workload.workflow.train={train and not generate}",
         f"hydra.run.dir={workdir / 'hydra'}"]
    if read_threads_0:
        o.append("++workload.reader.read_threads=0")
    return o


def chosen_profiles(opt: Options) -> list[Profile]:
    """The run's profiles in launch order."""
    ps = [p for p in registry().values() if p.name in opt.profiles]
    return sorted(ps, key=lambda p: p.order if p.launch_order is None else p.launch_order)


def plan(rd: Path, wl: Workload, opt: Options, dlio_venv: Path) -> list[Step]:
    """The launches of a run, in order: generation, then each chosen profile's launches (profiles.LaunchSpec), each
    on both sides (opt.sides) but a side the profile cannot run here (opt.skip_sides), wrapped by the profile. A launch
    reads its side's own dataset or the other side's (the Log VFD launches: the cross-read check; a kernel-only run
    has no other side: its own)."""
    launcher = Launcher(opt.launcher, opt.ranks)
    data = {side: rd / side / "data" for side in SIDES}
    shape = Shape(wl.config, opt.repeat, opt.dlio_rules, opt.ranks)
    # a checkpoint-only workload has no dataset: no generation launch
    specs: list[tuple[Profile | None, LaunchSpec]] = [(None, LaunchSpec("generate"))] if shape.reads_data else []
    specs += [(p, spec) for p in chosen_profiles(opt) for spec in p.launches(shape)]
    steps = []
    for prof, spec in specs:
        for side in SIDES:
            if side not in opt.sides or (prof is not None and side in opt.skip_sides.get(prof.name, {})):
                continue
            wd = rd / side / spec.step
            gen = prof is None
            src = data[side] if spec.data == "own" or OTHER[side] not in opt.sides else data[OTHER[side]]
            lenv = {}
            if side == "kernel":
                sets = ([f"dlio-version={opt.dlio_version}"] if opt.dlio_version else []) + \
                    kernel_sets(src, wd / "out", gen, spec.read_threads_0, checkpoint_dir(wd)) + \
                    ([] if gen else hvol.kernel_sets(opt.vol, _in_rank(wl.config, spec.read_threads_0))) + \
                    ([] if gen else opt.kernel_sets)
                base = kernel_argv(KERNEL_BIN, rd / WORKLOAD, sets)
                in_rank = _in_rank(wl.config, spec.read_threads_0)
                lenv = {} if gen else hvol.kernel_env(opt.vol, opt.vol_plugins, in_rank)
            else:
                base = [str(dlio_venv / "bin" / "dlio_benchmark"), "--config-dir", str(rd / "dlio-config"),
                        f"workload=h5dlio_{wl.name}"] + dlio_overrides(src, wd / "out", wd, gen, spec.read_threads_0,
                                                                       shape.reads_data)
            w = _wrap_generation(Launch(side, spec.step, base, lenv, wd, src, {}, shape), opt) if prof is None else \
                prof.wrap(Launch(side, spec.step, base, lenv, wd, src, opt.found.get(prof.name, {}), shape))
            env = w.env
            if side == "dlio" and "DFTRACER_ENABLE" not in env:
                # pydftracer 1.0.2 (DLIO 2.0.0's dependency) is ON unless DFTRACER_ENABLE=0: its Python-level
                # instrumentation writes no trace yet slows DLIO's first epoch ~2x (measured: 2.1-2.5 s vs 0.93-0.99 s,
                # tiny unet3d). Every DLIO launch runs without a profiler besides the one under test.
                env = {**env, "DFTRACER_ENABLE": "0"}
            if side == "dlio" and opt.dlio_quiet_index_map:
                env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(DLIO_SITE), env.get("PYTHONPATH")) if p)}
            argv = launcher.argv(wd / "ranks", env) + w.argv
            steps.append(Step(f"{side}.{spec.step}", side, spec.step, argv, env, wd, wd / "ranks", opt.timeout,
                              w.dirs, w.files))
    return steps


def _wrap_generation(launch: Launch, opt: Options) -> Wrapped:
    """A generate launch wrapped by each chosen profile that traces generation (Profile.traces_generation), in launch
    order, each around the previous one's command; a side a profile cannot run on here is left unwrapped by it."""
    w = Wrapped(list(launch.argv), dict(launch.env))
    for prof in chosen_profiles(opt):
        if not prof.traces_generation or launch.side in opt.skip_sides.get(prof.name, {}):
            continue
        x = prof.wrap(Launch(launch.side, launch.step, w.argv, w.env, launch.workdir, launch.data,
                             opt.found.get(prof.name, {}), launch.shape))
        w = Wrapped(x.argv, x.env, w.dirs + tuple(x.dirs), w.files + tuple(x.files))
    return w


def prepare(rd: Path, wl: Workload, opt: Options, dlio_venv: Path) -> dict:
    rd.mkdir(parents=True, exist_ok=True)
    cfg = merged_config(wl)
    text = f"# {wl.name} at scale {wl.scale}: {wl.base_path} <- reference-configs/{wl.name}.yaml\n" + \
        yaml.safe_dump(cfg, sort_keys=False)
    (rd / WORKLOAD).write_text(text)
    (rd / "dlio-config" / "workload").mkdir(parents=True, exist_ok=True)
    (rd / "dlio-config" / "workload" / f"h5dlio_{wl.name}.yaml").write_text(text)
    wl2 = Workload(wl.name, wl.scale, wl.base, cfg, wl.base_path)
    m = {"schema": SCHEMA,  # the run-directory layout (common.rundir.manifest_schema; docs/validation.md)
            "run_id": rd.name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "workload": wl2.to_dict(),
            "ranks": opt.ranks, "launcher": opt.launcher, "profiles": opt.profiles, "kernel_sets": opt.kernel_sets,
            "repeat": opt.repeat, "skipped_profiles": opt.skipped_profiles, "sides": list(opt.sides),
            "versions": versions(str(dlio_venv / "bin" / "python")), "dlio": _dlio_block(dlio_venv),
            "vol": hvol.manifest_block(opt.vol, opt.vol_plugins, KERNEL_BIN),
            "dlio_quiet_index_map": opt.dlio_quiet_index_map,
            # what a path is in this run (profiles.compare.launch_roots): the reference venv and its interpreter
            "roots": {"python": venv_python(dlio_venv), "home": str(Path.home())},
            "steps": {}, "status": "running"}
    # MLPerf Storage's stamp of what ran (its core-config hash, the DLIO revision), marked not a submission
    write_json_atomic(rd / PROVENANCE, provenance(cfg, m["dlio"], m["versions"]))
    return m


def _dlio_block(dlio_venv: Path) -> dict:
    """The reference DLIO (version, git revision, source) and the kernel entry used for it (manifest["dlio"])."""
    return describe(dlio_venv, KERNEL_BIN)


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


def _lanes(m: dict) -> list[list[tuple[str, dict]]]:
    """The finished steps to collect, in lanes: one per (profile, side), or per side's generation, its steps in
    launch order. Two lanes never write the same table (a profile names its tables after the side, or the step)."""
    lanes: dict[tuple[str, str], list] = {}
    for name, rec in m["steps"].items():
        side, step = name.split(".", 1)
        if rec.get("status") == "ok" and (step == "generate" or (prof := owner(step)) is not None):
            lanes.setdefault(("generate" if step == "generate" else prof.name, side), []).append((name, rec))
    return list(lanes.values())


def _collect_lane(rd: Path, lane: list[tuple[str, dict]], dlio_venv: Path, jobs: int = 1) -> tuple[dict, dict]:
    """Parse one lane's steps, in order: ({step: error}, {step: tables} of the profiles with their own merge; the
    others' tables are written as soon as they are parsed). A dataset is described by `jobs` processes at once."""
    rdir = RunDir(rd)
    errors, parts = {}, {}
    for name, rec in lane:
        side, step = name.split(".", 1)
        try:
            # the data folders the launch read, as its traces name them: a step reused from an earlier run read that
            # run's
            base = Path(rec.get("reused_from") or rd)
            done = Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], base / side / "data",
                        base / OTHER[side] / "data")
            if step == "generate":
                _collect_dataset(rdir, side, dlio_venv, jobs)
                for prof in registry().values():  # a profile that traced it (Profile.traces_generation)
                    for table, obj in (prof.collect(done) if prof.traces_generation else {}).items():
                        rdir.write_table(table, obj)
                continue
            prof = owner(step)
            tables = prof.collect(done)
            if type(prof).merge is Profile.merge:
                for table, obj in tables.items():
                    rdir.write_table(table, obj)
                del tables
            else:
                parts[name] = tables
        except (OSError, ValueError, KeyError, TypeError) as e:  # a step's output unreadable: the others still count
            errors[name] = f"{type(e).__name__}: {e}"
    return errors, parts


def _heavy(lane: list[tuple[str, dict]]) -> bool:
    """A lane whose parse holds a table per data file (Profile.holds_file_tables): one at a time."""
    prof = owner(lane[0][0].split(".", 1)[1])
    return prof is not None and prof.holds_file_tables


def _input_bytes(lane: list[tuple[str, dict]]) -> int:
    """What a lane parses, in bytes (its steps' folders; a generation's data folder counted by its files, 4 KiB each):
    the order lanes start in, largest first."""
    n = 0
    for name, rec in lane:
        root = Path(rec.get("workdir") or "")
        if name.endswith(".generate"):
            root = Path(rec.get("workdir") or "").parent / "data"
        for dirpath, _, files in os.walk(root):
            n += sum(4096 if name.endswith(".generate") else _size(Path(dirpath) / f) for f in files)
    return n


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _lane_process(rd: Path, lane: list, dlio_venv: Path, jobs: int, conn) -> None:
    conn.send(_collect_lane(rd, lane, dlio_venv, jobs))
    conn.close()


def _run_lanes(rd: Path, lanes: list, dlio_venv: Path, jobs: int) -> list[tuple[dict, dict]]:
    """Each lane's (errors, parts): in this process one after the other (jobs 1, or a single lane), else in up to
    `jobs` forked processes, largest lane first, never two heavy lanes at once. A process that ends without its
    answer (killed: out of memory?) fails its lane's steps, said, not raised; on any exception here (Ctrl-C, SIGTERM)
    every process still parsing is killed."""
    if jobs <= 1 or len(lanes) <= 1:
        return [_collect_lane(rd, lane, dlio_venv, jobs) for lane in lanes]
    ctx = get_context("fork")
    pending = sorted(lanes, key=_input_bytes, reverse=True)
    out, running = [], {}  # receiving end -> (process, lane)
    try:
        while pending or running:
            for lane in list(pending):
                heavy = any(_heavy(x) for _, x in running.values())
                if len(running) >= jobs or (heavy and _heavy(lane)):
                    continue
                pending.remove(lane)
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_lane_process, args=(rd, lane, dlio_venv, jobs, send), daemon=True)
                proc.start()
                send.close()
                running[recv] = (proc, lane)
            for recv in mp_wait(list(running)):
                proc, lane = running.pop(recv)
                try:
                    out.append(recv.recv())
                except EOFError:
                    proc.join()
                    why = (f"killed by signal {-proc.exitcode} (out of memory?)" if (proc.exitcode or 0) < 0 else
                           f"exit {proc.exitcode}: its error is in the harness's output above")
                    out.append(({name: f"collection process ended without its tables: {why}" for name, _ in lane},
                                {}))
                proc.join()
    finally:
        for proc, _ in running.values():
            proc.kill()
            proc.join()
    return out


def collect(rd: Path, m: dict, dlio_venv: Path, jobs: int = 1) -> None:
    """Parse every finished step's raw output into tables/: generation into the dataset tables, every other step by
    the profile it belongs to (profiles.owner; Profile.collect per launch, Profile.merge per profile). A step whose
    output cannot be parsed is recorded in m["collect_errors"]; the others are still collected. A profile whose merge
    is the default union has each launch's tables written as soon as they are parsed (the same files and bytes, the
    later launch's table over an earlier one of the same name, as the union): collection then holds one launch's
    tables at a time, not every profile's of every launch (docs/performance.md#validation-at-scale). jobs > 1: lanes
    (_lanes) parsed in that many processes at once, at most one lane holding per-file tables (_run_lanes)."""
    RunDir(rd).tables.mkdir(exist_ok=True)
    errors: dict = {}
    parts: dict = {}
    for errs, ps in _run_lanes(rd, _lanes(m), dlio_venv, jobs):
        errors.update(errs)
        parts.update(ps)
    m["collect_errors"] = {n: errors[n] for n in m["steps"] if n in errors}
    m.setdefault("vol", hvol.manifest_block(hvol.STACKS["native"], "", KERNEL_BIN))["kernel_launches"] = \
        kernel_vol(rd, m)
    by_profile: dict[str, list] = {}
    for name in m["steps"]:  # a profile's launches merged in launch order
        if name in parts:
            by_profile.setdefault(owner(name.split(".", 1)[1]).name, []).append(parts[name])
    reg = registry()
    for pname, ps in by_profile.items():
        for table, obj in reg[pname].merge(ps).items():
            RunDir(rd).write_table(table, obj)


def kernel_vol(rd: Path, m: dict) -> dict:
    """Per finished kernel launch, the VOL stack its output.json says HDF5 used and its explicit async reads
    (async_prefetch: mode, training batches), as the kernel reported them (None: no output.json, or a kernel from
    before the vol block)."""
    out = {}
    for name, rec in sorted(m["steps"].items()):
        side, step = name.split(".", 1)
        if side != "kernel" or rec.get("status") != "ok":
            continue
        f = Path(rec["workdir"]) / "out" / "output.json"
        try:
            o = json.loads(f.read_text())
        except (OSError, ValueError):
            out[step] = None
            continue
        pf = o.get("async_prefetch")
        sets = [x for x in rec.get("argv", []) if isinstance(x, str)]
        asked = {"connector": next((x.split("=", 1)[1] for x in sets if x.startswith("vol-connector=")), "native"),
                 "prefetch": "vol-async-prefetch=true" in sets}
        vol = o.get("vol") or {}
        out[step] = {"asked": asked, "stack": vol.get("stack"), "selected_by": vol.get("selected_by"),
                     "async_prefetch": {"mode": pf.get("mode"), "train_batches": (pf.get("train") or {}).get("batches")}
                     if pf else None, "mutant": o.get("mutant")}
    return out


def _collect_dataset(rdir: RunDir, side: str, dlio_venv: Path, parts: int = 1) -> None:
    """tables/dataset-<side>.json: every file a generation step wrote, described (harness.describe_dataset) by
    `parts` processes at once."""
    rdir.write_table(f"dataset-{side}.json", describe_dataset.describe(rdir.path / side / "data", dlio_venv,
                                                                       parts=parts))


def run(rd: Path, wl: Workload | None, opt: Options, dlio_venv: Path, resume: bool, progress=print) -> dict:
    rdir = RunDir(rd)
    if resume:
        m = rdir.load()
        wl = Workload(**{k: m["workload"][k] for k in ("name", "scale", "base", "config", "base_path")})
        opt.ranks, opt.launcher, opt.profiles, opt.kernel_sets = m["ranks"], m["launcher"], m["profiles"], \
            m["kernel_sets"]
        opt.dlio_version = (m.get("dlio") or {}).get("entry") or opt.dlio_version
        opt.dlio_rules = ((m.get("dlio") or {}).get("probed") or {}).get("rules") or opt.dlio_rules
        opt.repeat = m.get("repeat", 1)
        vol = m.get("vol") or {}
        opt.vol, opt.vol_plugins = hvol.stack(vol.get("requested")), vol.get("plugin_path", "")
        opt.sides = tuple(m.get("sides", BOTH))
        opt.dlio_quiet_index_map = bool(m.get("dlio_quiet_index_map", False))
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
    collect(rd, m, dlio_venv, opt.collect_jobs)
    rdir.save(m)
    return m
