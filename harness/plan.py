"""A run's plan, built once and frozen: the workload both sides run (the merged config, harness.workload.load's
with the generation buffer bounded: the one place it is merged), the options, the reference DLIO, and from them the
launches of a run directory in order (launches). A fresh run builds it from the loaded workload (build); a resumed
one from its manifest (resumed)."""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from common.rundir import WORKLOAD
from harness import vol as hvol
from harness.launch import Launcher, Step, kernel_argv
from harness.paths import KERNEL_BIN, REPO
from harness.workload import Workload
from profiles import SIDES, Launch, LaunchSpec, Profile, Shape, Wrapped, checkpoint_dir, registry

GEN_BUFFER = 16 * 1024 * 1024
BOTH = SIDES
DLIO_SITE = REPO / "harness" / "dlio_site"  # DLIO_QUIET_MAP=1: its sitecustomize shortens DLIO's index map text
# SIDES=both|kernel (--sides): which programs a run launches. A kernel-only run is judged against the analytic model
# alone (validate/checks.py KERNEL_ONLY): never a statement about DLIO.
SIDE_CHOICES = {"both": BOTH, "kernel": ("kernel",)}
OTHER = {"dlio": "kernel", "kernel": "dlio"}


@dataclass(frozen=True)
class Options:
    ranks: int = 2
    launcher: str = "mpirun"
    profiles: list = field(default_factory=lambda: [n for n, p in registry().items() if p.builtin])
    kernel_sets: list = field(default_factory=list)  # extra --set for the kernel (negative controls)
    rank_env: dict = field(default_factory=dict)     # --rank-env: variables of every rank (pipeline audit)
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


@dataclass(frozen=True)
class Plan:
    workload: Workload        # the run's workload: its config the merged one both sides run (merged_config)
    opt: Options
    shape: Shape              # the run as the profiles plan it (profiles.Shape)
    dlio_venv: Path = Path()  # the reference DLIO venv
    dlio: dict | None = None  # the manifest's "dlio" block as harness.dlio.select found it (None: resumed)

    @property
    def config(self) -> dict:
        return self.workload.config

    def in_rank(self, read_threads_0: bool) -> bool:
        """Does the kernel read in its ranks in this launch (read-threads 0)?"""
        return read_threads_0 or int((self.config.get("reader") or {}).get("read_threads", 1)) == 0


def merged_config(wl: Workload) -> dict:
    """The workload both sides run: the merged config with the generation buffer bounded (DLIO's default is 2 GiB
    per rank)."""
    cfg = dict(wl.config)
    ds = cfg.get("dataset") or {}
    cfg["dataset"] = {**ds, "generation_buffer_size": ds.get("generation_buffer_size", GEN_BUFFER)}
    return cfg


def build(wl: Workload, opt: Options, dlio_venv: Path = Path(), dlio: dict | None = None) -> Plan:
    """The plan of a run of the loaded workload wl (harness.workload.load) under opt; dlio: the reference's manifest
    block (harness.dlio.select), kept as it was found."""
    run_wl = Workload(wl.name, wl.scale, wl.base, merged_config(wl), wl.base_path)
    return Plan(run_wl, opt, Shape(run_wl.config, opt.repeat, opt.dlio_rules, opt.ranks), dlio_venv,
                copy.deepcopy(dlio))


def resumed(m: dict, opt: Options, dlio_venv: Path) -> Plan:
    """The plan of the run whose manifest is m (harness.run.check_resumable accepted it): its workload and the options
    it ran with; opt's others (timeout, found, skipped sides, collection jobs) are this invocation's."""
    dl, vol = m.get("dlio") or {}, m.get("vol") or {}
    opt = replace(opt, ranks=m["ranks"], launcher=m["launcher"], profiles=m["profiles"], kernel_sets=m["kernel_sets"],
                  rank_env=m.get("rank_env") or {}, dlio_version=dl.get("entry") or opt.dlio_version,
                  dlio_rules=(dl.get("probed") or {}).get("rules") or opt.dlio_rules, repeat=m.get("repeat", 1),
                  vol=hvol.stack(vol.get("requested")), vol_plugins=vol.get("plugin_path", ""),
                  sides=tuple(m.get("sides", BOTH)), dlio_quiet_index_map=bool(m.get("dlio_quiet_index_map", False)))
    wl = Workload(**{k: m["workload"][k] for k in ("name", "scale", "base", "config", "base_path")})
    return build(wl, opt, dlio_venv)


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


def launches(rd: Path, p: Plan) -> list[Step]:
    """The launches of a run in rd, in order: generation, then each chosen profile's launches (profiles.LaunchSpec),
    each on both sides (opt.sides) but a side the profile cannot run here (opt.skip_sides), wrapped by the profile. A
    launch reads its side's own dataset or the other side's (the Log VFD launches: the cross-read check; a kernel-only
    run has no other side: its own)."""
    opt, shape = p.opt, p.shape
    launcher = Launcher(opt.launcher, opt.ranks)
    data = {side: rd / side / "data" for side in SIDES}
    # a checkpoint-only workload has no dataset: no generation launch
    specs: list[tuple[Profile | None, LaunchSpec]] = [(None, LaunchSpec("generate"))] if shape.reads_data else []
    specs += [(prof, spec) for prof in chosen_profiles(opt) for spec in prof.launches(shape)]
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
                    ([] if gen else hvol.kernel_sets(opt.vol, p.in_rank(spec.read_threads_0))) + \
                    ([] if gen else opt.kernel_sets)
                base = kernel_argv(KERNEL_BIN, rd / WORKLOAD, sets)
                lenv = {} if gen else hvol.kernel_env(opt.vol, opt.vol_plugins, p.in_rank(spec.read_threads_0))
            else:
                base = [str(p.dlio_venv / "bin" / "dlio_benchmark"), "--config-dir", str(rd / "dlio-config"),
                        f"workload=h5dlio_{p.workload.name}"] + \
                    dlio_overrides(src, wd / "out", wd, gen, spec.read_threads_0, shape.reads_data)
            w = _wrap_generation(Launch(side, spec.step, base, lenv, wd, src, {}, shape), opt) if prof is None else \
                prof.wrap(Launch(side, spec.step, base, lenv, wd, src, opt.found.get(prof.name, {}), shape))
            env = _auto_threads_env(_rank_env(_dlio_env(w.env, opt) if side == "dlio" else w.env, opt.rank_env))
            argv = launcher.argv(wd / "ranks", env) + w.argv
            steps.append(Step(f"{side}.{spec.step}", side, spec.step, argv, env, wd, wd / "ranks", opt.timeout,
                              w.dirs, w.files))
    return steps


def _rank_env(env: dict, extra: dict) -> dict:
    """A launch's environment plus --rank-env's variables (a results leaf's recorded environment): its
    LD_PRELOAD ahead of a profile's own (a tracer's), any other variable over the profile's."""
    out = {**env, **extra}
    if env.get("LD_PRELOAD") and extra.get("LD_PRELOAD"):
        out["LD_PRELOAD"] = f"{extra['LD_PRELOAD']}:{env['LD_PRELOAD']}"
    return out


AUTO_THREADS_CAP = "DLIO_MAX_AUTO_THREADS"


def _auto_threads_env(env: dict) -> dict:
    """A launch's environment with the user's DLIO_MAX_AUTO_THREADS, when set, passed to its ranks by name (-x,
    --export) on both sides alike: DLIO 3.x caps its machine-sized readers with it (utils/config.py:862) and the
    kernel's 3.x entries read it the same way (bench/src/autoread.c). Unset: nothing is added (both sides cap at 8)."""
    v = os.environ.get(AUTO_THREADS_CAP)
    return env if v is None or AUTO_THREADS_CAP in env else {**env, AUTO_THREADS_CAP: v}


def _dlio_env(env: dict, opt: Options) -> dict:
    """A DLIO launch's environment as its profile wrapped it, plus what every DLIO launch gets."""
    if "DFTRACER_ENABLE" not in env:
        # pydftracer 1.0.2 (DLIO 2.0.0's dependency) is ON unless DFTRACER_ENABLE=0: its Python-level
        # instrumentation writes no trace yet slows DLIO's first epoch ~2x (measured: 2.1-2.5 s vs 0.93-0.99 s,
        # tiny unet3d). Every DLIO launch runs without a profiler besides the one under test.
        env = {**env, "DFTRACER_ENABLE": "0"}
    if opt.dlio_quiet_index_map:
        env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(DLIO_SITE), env.get("PYTHONPATH")) if p)}
    return env


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
