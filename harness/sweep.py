"""python -m harness sweep init|scaling DIR: what a paper directory (`make paper`) holds besides its kernel-vs-DLIO
runs: its paper.json, and the kernel-only strong scaling of configurations D-H.

    runs/paper-<time>/
      paper.json          what was asked: scale, ranks, repetitions, scaling rank counts (sweep init)
      runs/<workload>-.../  kernel vs DLIO run directories of configurations A-C (python -m harness run + validate)
      runs-before-<time>/ the harness runs of an earlier invocation (sweep init moves them when continuing)
      scaling/sweep.json  what the strong-scaling sweep ran on which host (sweep scaling), and
      scaling/<config>/   workload.yaml, launches.json, generate/, np<N>/rep<k>/out/output.{json,ranks.csv}
      report/             rendered by python -m reports runs/paper-<time>

Workloads are resolved, validated and renamed for the installed DLIO as `harness run` does (harness.workload.load),
refused before anything is launched when the kernel's validator refuses them at any rank count of the sweep
(harness.precheck), and every launch is a harness.launch Step. A sweep run again on the same directory continues
where it stopped: launches recorded ok whose output exists are not repeated.

Exit status: 0 every launch succeeded, 1 a launch failed (launches.json says which), 2 bad options or workloads,
130 interrupted (run the same command again to continue)."""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import yaml

from common.fileio import write_json_atomic
from common.proc import command_output
from common.rundir import WORKLOAD
from harness import plan as hplan
from harness.dlio import key_table
from harness.dlio import select as dlio_select
from harness.launch import LAUNCHERS, Launcher, Step, execute, kernel_argv
from harness.paths import KERNEL_BIN
from harness.precheck import precheck
from harness.workload import REPO, Workload, WorkloadError, dlio_config_dir, load

SCALING_CONFIGS = "thesis-d,thesis-e,thesis-f,thesis-g,thesis-h"
PAGE_CACHE = "warm: no cache drop between launches (the dataset fits in memory at tiny/small scale)"


def setup_parser(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="sweep_cmd", required=True)
    i = sub.add_parser("init", help="create a paper directory (paper.json); an existing one is continued")
    i.add_argument("dir", type=Path)
    i.add_argument("--scale", default="tiny", help="scale preset of every workload (default tiny)")
    i.add_argument("--ranks", type=int, default=2, help="ranks per side for the kernel-vs-DLIO runs (default 2)")
    i.add_argument("--repeat", type=int, default=2, help="timing launches per side / scaling repetitions (default 2)")
    i.add_argument("--scaling-ranks", default="1,2,4,8", help="comma-separated rank counts (default 1,2,4,8)")
    s = sub.add_parser("scaling", help="kernel-only strong scaling of configurations D-H into DIR/scaling/")
    s.add_argument("dir", type=Path, help="a paper directory (made by sweep init)")
    s.add_argument("--dlio-venv", type=Path, required=True,
                   help="the reference DLIO venv (its bundled workload configs and version)")
    s.add_argument("--configs", default=SCALING_CONFIGS,
                   help=f"comma-separated reference configs, names or paths (default {SCALING_CONFIGS})")
    s.add_argument("--launcher", default="mpirun", choices=LAUNCHERS)
    s.add_argument("--timeout", type=float, default=1800.0, help="seconds per launch (default 1800)")
    s.add_argument("--keep-data", action="store_true", help="keep the generated datasets")


def init(d: Path, scale: str, ranks: int, repeat: int, scaling_ranks: str) -> Path | None:
    """Write d/paper.json. When it exists, the directory is continued: paper.json and the sweep's finished launches
    are kept, and the harness runs of the earlier invocation are moved from d/runs/ to d/runs-before-<time>/ (the
    continuing invocation runs them afresh, and its report shows only its own). Returns that folder, or None."""
    try:
        counts = [int(x) for x in scaling_ranks.split(",") if x.strip()]
    except ValueError:
        raise WorkloadError(f"--scaling-ranks {scaling_ranks!r}: expected comma-separated integers") from None
    if not counts or min(counts) < 1 or ranks < 1 or repeat < 1:
        raise WorkloadError("--ranks, --repeat and every --scaling-ranks must be >= 1")
    d.mkdir(parents=True, exist_ok=True)
    if (d / "paper.json").exists():
        runs = d / "runs"
        if not runs.is_dir() or not any(runs.iterdir()):
            return None
        dest = d / f"runs-before-{time.strftime('%Y%m%d-%H%M%S')}"
        n = 1
        while dest.exists():
            n += 1
            dest = dest.with_name(f"{dest.name.rsplit('.', 1)[0]}.{n}")
        runs.rename(dest)
        return dest
    write_json_atomic(d / "paper.json", {
        "kind": "h5dlio-paper", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "scale": scale, "ranks": ranks,
        "repeat": repeat, "scaling_ranks": counts, "git_revision": command_output(["git", "-C", str(REPO), "rev-parse",
                                                                             "HEAD"])})
    return d / "paper.json"


def data_name(cfg: dict) -> str:
    """Dataset identity: configurations that read the same files share one generated dataset."""
    ds, k = cfg.get("dataset", {}), cfg.get("h5dlio", {}) or {}
    keys = [ds.get(x, ds.get(x.replace("record_length", "record_length_bytes")))
            for x in ("num_files_train", "num_files_eval", "num_samples_per_file", "record_length",
                      "record_length_stdev", "enable_chunking", "chunk_size", "compression", "compression_level")]
    return "data-" + "-".join(str(x) for x in keys) + ("-subfiling" if k.get("subfiling") else "")


def resolve(configs: list[str], scale: str, ranks: list[int], dlio_venv: Path) -> tuple[dict[str, Workload], str]:
    """Every configuration (a reference-configs/ name or the path of such a file) loaded as `harness run` loads a
    workload, and accepted by the kernel's validator at every rank count, before anything is launched. Returns the
    workloads by name (each one's folder scaling/<name>/) and the kernel entry whose rules the installed DLIO's
    behaviour matches (harness.dlio.select: a DLIO no entry matches is refused)."""
    if not (dlio_venv / "bin" / "python").exists():
        raise WorkloadError(f"--dlio-venv {dlio_venv}: no bin/python")
    sel = dlio_select(dlio_venv, KERNEL_BIN)
    version = sel["entry"]
    wl_dir = dlio_config_dir(str(dlio_venv / "bin" / "python"))
    wls: dict[str, Workload] = {}
    for c in configs:
        try:
            wl = load(c, scale, wl_dir, keys=key_table(sel["probed"]["keys"], KERNEL_BIN))
        except WorkloadError as e:
            raise WorkloadError(f"--configs {c}: {e}") from None
        if wl.name in wls:
            raise WorkloadError(f"--configs: {wl.name} given twice (its folder would be scaling/{wl.name}/)")
        wls[wl.name] = wl
    for wl in wls.values():
        for n in ranks:
            why = precheck(hplan.build(wl, hplan.Options(ranks=n, dlio_version=version)), dlio_side=False)  # kernel
            if why:
                raise WorkloadError(why)
    return wls, version


def _kernel(cdir: Path, data: Path, out: Path, version: str, sets: list[str]) -> list[str]:
    return kernel_argv(KERNEL_BIN, cdir / WORKLOAD,
                       [f"dlio-version={version}", f"data-folder={data}", f"output-folder={out}", "quiet=true", *sets])


def run_scaling(d: Path, meta: dict, wls: dict[str, Workload], version: str, launcher: str, timeout: float,
                keep_data: bool, progress=print) -> int:
    """Every configuration at every rank count of meta (paper.json), meta["repeat"] times, into d/scaling/."""
    scale, ranks, repeat = meta["scale"], meta["scaling_ranks"], meta["repeat"]
    sd = d / "scaling"
    sd.mkdir(parents=True, exist_ok=True)
    sweep = {"configs": list(wls), "scale": scale, "ranks": ranks, "repeat": repeat, "started": time.time(),
             "kernel_version": command_output([str(KERNEL_BIN), "--version"]),
             "mpi": (command_output(["mpirun", "--version"]).splitlines() or ["unknown"])[0], "host": platform.node(),
             "cpus": os.cpu_count(), "platform": platform.platform(), "page_cache": PAGE_CACHE, "dlio_version": version}
    failed = 0
    generated: dict[str, dict] = {}
    total = len(wls) * len(ranks) * repeat
    i = 0
    for c, wl in wls.items():
        cdir = sd / c
        cdir.mkdir(exist_ok=True)
        (cdir / WORKLOAD).write_text(f"# {c} at scale {scale}: {wl.base_path} <- reference-configs/{c}.yaml\n"
                                            + yaml.safe_dump(wl.config, sort_keys=False))
        lfile = cdir / "launches.json"
        launches = json.loads(lfile.read_text()) if lfile.exists() else {}
        data = sd / data_name(wl.config)
        if data.name not in generated:
            gen = launches.get("generate")
            if not (gen and gen["status"] == "ok" and data.exists()):
                if data.exists():
                    shutil.rmtree(data)      # this sweep's own, unfinished generation
                argv = Launcher(launcher, min(2, os.cpu_count() or 1)).argv(None, {}) + _kernel(
                    cdir, data, cdir / "generate" / "out", version,
                    ["generate-data=true", "train=false", "evaluation=false", "h5dlio.collective-meta=false",
                     "h5dlio.collective-data=false"])
                progress(f"scaling: {c}: generating {data.name} ...")
                gen = execute(Step(f"{c}.generate", "kernel", "generate", argv, {}, cdir / "generate", None, timeout),
                              progress)
                progress(f"scaling: {c}: generation {gen['status']} in {gen['wall_s']:.1f} s {gen['detail']}")
            generated[data.name] = gen
        launches["generate"] = {**generated[data.name], "data": data.name}
        write_json_atomic(lfile, launches)
        for n in ranks:
            for k in range(1, repeat + 1):
                i += 1
                key = f"np{n}/rep{k}"
                wd = cdir / f"np{n}" / f"rep{k}"
                prev = launches.get(key)
                if prev and prev["status"] == "ok" and (wd / "out" / "output.json").exists():
                    continue
                if generated[data.name]["status"] != "ok":
                    launches[key] = {"status": "skipped", "rc": None, "wall_s": 0.0,
                                     "detail": "the dataset generation failed"}
                    failed += 1
                    continue
                if wd.exists():
                    shutil.rmtree(wd)
                argv = Launcher(launcher, n).argv(None, {}) + _kernel(
                    cdir, data, wd / "out", version, ["output-ranks-data=true", "generate-data=false"])
                res = execute(Step(f"{c}.{key}", "kernel", "scaling", argv, {}, wd, None, timeout), progress)
                launches[key] = res
                write_json_atomic(lfile, launches)
                failed += res["status"] != "ok"
                progress(f"scaling [{i}/{total}] {c} {n} ranks rep {k}: {res['status']} in {res['wall_s']:.1f} s"
                         + (f" ({res['detail']})" if res["status"] != "ok" else ""))
        write_json_atomic(lfile, launches)
    if not keep_data:
        for name in generated:
            shutil.rmtree(sd / name, ignore_errors=True)
    sweep["finished"] = time.time()
    sweep["wall_s"] = sweep["finished"] - sweep["started"]
    sweep["failed_launches"] = failed
    write_json_atomic(sd / "sweep.json", sweep)
    progress(f"scaling: {total - failed}/{total} launches ok in {sweep['wall_s']:.0f} s")
    return 0 if failed == 0 else 1


def paper_meta(d: Path) -> dict:
    """d/paper.json, with the keys the sweep reads."""
    f = d / "paper.json"
    if not f.exists():
        raise WorkloadError(f"{d}: no paper.json (run `python -m harness sweep init` first)")
    try:
        meta = json.loads(f.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"{f}: cannot read: {e}") from None
    except ValueError as e:
        raise WorkloadError(f"{f}: not JSON ({e})") from None
    missing = [k for k in ("scale", "repeat", "scaling_ranks") if not isinstance(meta, dict) or k not in meta]
    if missing:
        raise WorkloadError(f"{f}: no {', '.join(missing)} (not made by `python -m harness sweep init`)")
    return meta


def dispatch(a: argparse.Namespace) -> int:
    """`python -m harness sweep ...` after argument parsing."""
    a.dir = a.dir.resolve()    # launches run in their own folders
    try:
        if a.sweep_cmd == "init":
            existed = (a.dir / "paper.json").exists()
            moved = init(a.dir, a.scale, a.ranks, a.repeat, a.scaling_ranks)
            if existed:
                print(f"paper: {a.dir / 'paper.json'} exists: continuing that paper directory"
                      + (f"; its earlier harness runs moved to {moved.name}/ (they run afresh)" if moved else ""))
            print(f"paper: {a.dir}")
            return 0
        meta = paper_meta(a.dir)
        if not KERNEL_BIN.exists():
            raise WorkloadError(f"kernel not built: {KERNEL_BIN} (run `make build`)")
        if not 0 < a.timeout < float("inf"):
            raise WorkloadError(f"--timeout {a.timeout}: must be a positive number of seconds")
        configs = [c for c in a.configs.split(",") if c]
        if not configs:
            raise WorkloadError("--configs: no configuration given")
        wls, version = resolve(configs, meta["scale"], meta["scaling_ranks"], a.dlio_venv.resolve())
    except WorkloadError as e:
        print(f"harness: error: {e}", file=sys.stderr)
        return 2
    try:
        return run_scaling(a.dir, meta, wls, version, a.launcher, a.timeout, a.keep_data,
                           progress=lambda s: print(s, flush=True))
    except KeyboardInterrupt:
        return 130
