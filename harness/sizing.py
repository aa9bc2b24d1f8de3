"""python -m harness sizing: the largest number of simulated accelerators (kernel ranks, no DLIO) whose AU stays at or
above the workload's threshold on the storage under test (`make sizing`, docs/sizing.md); for a checkpoint workload,
its checkpoint cycle against ranks instead (harness/sizing_ckpt.py). Not a submission.

Each trial is one kernel launch (harness.launch: mpirun, mpiexec or srun) at N ranks over a dataset sized by
mlpstorage's rule for N (profiles/mlperf_train.py dataset_rule: >= MIN_STEPS steps per accelerator and >= 5x the
hosts' memory), its AU, throughput and threshold the kernel's own "mlperf" block (DLIO 3.x's statscounter formula,
the first step excluded; the threshold the workload's metric.au). The search (harness/sizing_search.py) brackets
and bisects; its state is SIZING_DIR/state.json, so the same command run again continues.

    runs/sizing-<workload>-<scale>-<hash>/
      state.json         what was asked and every finished trial (the resume point)
      workload.yaml      the merged workload every trial runs (num-files-train set per trial)
      data/files-<F>/    the dataset (DATA=<folder> puts it there), regenerated only when a trial needs more files
      trials/np<N>/      each trial's launch folder and kernel output (out/output.json)
      sizing.{json,md,png}  the answer, the table and the plot (AU and throughput against accelerators)

Exit status: 0 a largest count found, or RANKS_MAX fed; 1 the AU misses the threshold at 1 accelerator, or a launch
failed (the state keeps what finished); 2 bad input, naming the key; 130 interrupted (run the same command again)."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from common.fileio import evict, write_json_atomic, write_text_atomic
from common.rundir import WORKLOAD
from harness import sizing_ckpt, sweep
from harness.launch import LAUNCHERS, Launcher, Step, execute, kernel_argv
from harness.paths import KERNEL_BIN, REFERENCE_CONFIGS, runs_home
from harness.sizing_search import Memo, NoRoom, Outcome, SizingError, TrialFailed, estimate, search
from harness.workload import REPO, WorkloadError, default_scale
from profiles.mlperf_train import HOST_MEMORY_MULTIPLIER, MIN_STEPS_PER_EPOCH, dataset_rule

NOT_SUBMISSION = "not a submission: the bare kernel's emulation of MLPerf Storage's training, measured by h5dlio"
NOT_SUBMISSION_CKPT = NOT_SUBMISSION.replace("training", "checkpointing")
PARAMS = ("workload", "scale", "ranks_max", "resolution", "data", "launcher", "hosts", "host_memory_gb", "min_steps",
          "cold")


def _int(var: str):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{var}={text}: not a whole number") from None
    return parse


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", default="unet3d_b200",
                   help="a reference config with metric.au (default unet3d_b200)")
    p.add_argument("--scale", default=None, help="its scale preset (default: its default_scale)")
    p.add_argument("--ranks-max", type=_int("RANKS_MAX"), default=None,
                   help="the largest accelerator count tried (default 64; a checkpoint workload: its shape's ranks)")
    p.add_argument("--resolution", type=_int("RESOLUTION"), default=1,
                   help="stop when the bracket is this narrow (default 1)")
    p.add_argument("--data", type=Path, default=None,
                   help="the folder on the storage under test for the dataset (default SIZING_DIR/data)")
    p.add_argument("--dlio-venv", type=Path, required=True, help="a DLIO 3.x venv: its bundled workloads and entry")
    p.add_argument("--launcher", default="mpirun", choices=LAUNCHERS)
    p.add_argument("--sizing-dir", type=Path, default=None,
                   help="the search's folder (default runs/sizing-<workload>-<scale>-<hash of the parameters>)")
    p.add_argument("--hosts", type=_int("HOSTS"), default=int(os.environ.get("SLURM_JOB_NUM_NODES", "1") or 1),
                   help="client hosts in the dataset rule (default SLURM_JOB_NUM_NODES, else 1)")
    p.add_argument("--host-memory-gb", type=float, default=None,
                   help="one host's memory (GiB) in the dataset rule (default this host's MemTotal)")
    p.add_argument("--min-steps", type=_int("MIN_STEPS"), default=MIN_STEPS_PER_EPOCH,
                   help=f"steps per accelerator in the dataset rule (default MLPerf's {MIN_STEPS_PER_EPOCH}; fewer: "
                        "the trials are marked below MLPerf's rule)")
    p.add_argument("--cold", action="store_true",
                   help="before each trial, the dataset's pages out of the page cache (fdatasync, then posix_fadvise "
                        "DONTNEED per file; no root needed): its reads come from the storage, as MLPerf's 5x-memory "
                        "dataset makes them, on a smaller one")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per launch (default 3600)")
    p.add_argument("--runs-db", type=Path, default=None, help="also add every trial's kernel run to this run store")


def mem_total_gib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1024.0 * 1024.0)
    raise SizingError("HOST_MEMORY_GB: /proc/meminfo has no MemTotal: give it")


def check_input(a: argparse.Namespace) -> None:
    """Bad input, before anything is probed or launched: SizingError naming the key."""
    name = a.workload
    if not (name.endswith((".yaml", ".yml")) or "/" in name) and not (REFERENCE_CONFIGS / f"{name}.yaml").exists():
        known = ", ".join(sorted(p.stem for p in REFERENCE_CONFIGS.glob("*.yaml")))
        raise SizingError(f"WORKLOAD={name}: no reference config of that name (known: {known})")
    for key, v in (("RANKS_MAX", a.ranks_max), ("RESOLUTION", a.resolution), ("HOSTS", a.hosts),
                   ("MIN_STEPS", a.min_steps)):
        if v is not None and v < 1:
            raise SizingError(f"{key}={v}: must be >= 1")
    if a.host_memory_gb is not None and not 0 <= a.host_memory_gb < float("inf"):
        raise SizingError(f"HOST_MEMORY_GB={a.host_memory_gb}: must be a number >= 0")
    if not 0 < a.timeout < float("inf"):
        raise SizingError(f"--timeout {a.timeout}: must be a positive number of seconds")
    if a.data is not None:
        probe = a.data
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:  # a folder made and removed: mode bits do not bind root, a read-only mount does
            if not probe.is_dir():
                raise OSError(f"{probe} is not a folder")
            tempfile.TemporaryDirectory(dir=probe, prefix=".h5dlio-sizing-").cleanup()
        except OSError as e:
            raise SizingError(f"DATA={a.data}: not a writable folder ({e})") from None
    if not KERNEL_BIN.exists():
        raise SizingError(f"kernel not built: {KERNEL_BIN} (run `make build`)")


def params_of(a: argparse.Namespace, scale: str) -> dict:
    return {"workload": a.workload, "scale": scale, "ranks_max": a.ranks_max, "resolution": a.resolution,
            "data": str(a.data.resolve()) if a.data else None, "launcher": a.launcher, "hosts": a.hosts,
            "host_memory_gb": a.host_memory_gb, "min_steps": a.min_steps,
            **({"cold": True} if getattr(a, "cold", False) else {})}  # (a search made without --cold has no key)


def sizing_dir(a: argparse.Namespace, params: dict) -> Path:
    if a.sizing_dir is not None:
        return a.sizing_dir.resolve()
    h = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    return runs_home() / f"sizing-{Path(params['workload']).stem}-{params['scale']}-{h}"


def load_state(d: Path, params: dict) -> dict:
    """d/state.json, or a new state; one of other parameters is refused (naming the first key that differs)."""
    f = d / "state.json"
    if not f.exists():
        return {"kind": "h5dlio-sizing", "note": NOT_SUBMISSION, "params": params, "trials": {}, "dataset": None}
    try:
        st = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        raise SizingError(f"SIZING_DIR={d}: state.json unreadable ({e}): remove it to start afresh") from None
    old = st.get("params", {})
    for k in PARAMS:
        if old.get(k) != params.get(k):
            raise SizingError(f"SIZING_DIR={d}: its search has {k.upper()}={old.get(k)}, this one {params.get(k)}: "
                              "give another SIZING_DIR, or the same parameters to continue it")
    return st


class KernelTrial:
    """One trial: the dataset for N (generated when the current one is too small or more than twice too big), then
    the kernel at N ranks reading it; its result from output.json's "mlperf" block."""

    def __init__(self, d: Path, st: dict, cfg: dict, version: str, a: argparse.Namespace, progress=print):
        self.d, self.st, self.cfg, self.version, self.a, self.progress = d, st, cfg, version, a, progress
        self.data_root = a.data.resolve() if a.data else d / "data"
        self.mem = a.host_memory_gb if a.host_memory_gb is not None else mem_total_gib()
        ds, rd = cfg.get("dataset", {}), cfg.get("reader", {})
        self.spf = int(ds.get("num_samples_per_file", 1))
        self.batch = int(rd.get("batch_size", 1))
        self.rl = float(ds.get("record_length_bytes", ds.get("record_length", 0)))

    def files_for(self, n: int) -> int:
        """mlpstorage's minimum file count for n accelerators (dataset_rule with no files yet: its min_files), rounded
        up to whole batches on every rank."""
        need = dataset_rule(0, self.spf, self.batch, n, self.a.hosts, self.mem, self.rl, self.a.min_steps)["min_files"]
        unit = self.batch * n
        return math.ceil(math.ceil(need * self.spf / unit) * unit / self.spf)

    def _kernel(self, n: int, files: int, out: Path, sets: list[str]) -> list[str]:
        return Launcher(self.a.launcher, n).argv(None, {}) + kernel_argv(
            KERNEL_BIN, self.d / WORKLOAD,
            [f"dlio-version={self.version}", f"data-folder={self.data_root / f'files-{files}'}",
             f"output-folder={out}", "quiet=true", f"num-files-train={files}", *sets])

    def _room(self, n: int, need: int) -> None:
        """NoRoom unless DATA's file system has the dataset's bytes free (its samples, 2% and 64 MiB more for the
        files' headers and metadata): never fill a file system half way (MLPerf's rule, 5x the hosts' memory, is
        large)."""
        want = need * self.spf * self.rl * 1.02 + 64 * 2**20
        self.data_root.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.data_root).free
        if free < want:
            raise NoRoom(f"DATA={self.data_root}: the dataset for {n} accelerators is {need} files, "
                         f"{want / 2**30:.2f} GiB (MLPerf's rule: {HOST_MEMORY_MULTIPLIER}x the hosts' memory, "
                         f"HOST_MEMORY_GB={self.mem}, and MIN_STEPS={self.a.min_steps} steps); its file system has "
                         f"{free / 2**30:.2f} GiB free: give a DATA with room (nothing was generated)")

    def dataset(self, n: int) -> tuple[int, float]:
        """The file count the trial at n reads, and the seconds spent generating (0: reused). Only folders this
        search made (the state's "made", saved before each generation starts) are ever removed."""
        need, cur = self.files_for(n), self.st.get("dataset")
        if cur and need <= cur["files"] <= 2 * need and (self.data_root / f"files-{cur['files']}").is_dir():
            return cur["files"], 0.0
        made = self.st.setdefault("made", [])
        target = self.data_root / f"files-{need}"
        if target.exists() and str(target) not in made:
            raise TrialFailed(f"DATA={self.data_root}: {target} exists and this search did not make it: choose "
                              "another DATA (nothing was removed)")
        for old in {str(target), *(([cur["folder"]]) if cur else [])} & set(made):
            shutil.rmtree(old, ignore_errors=True)   # this search's own: the previous dataset, or an unfinished one
        self.st["dataset"] = None
        made[:] = [m for m in made if Path(m).exists()] + [str(target)]
        write_json_atomic(self.d / "state.json", self.st)
        self._room(n, need)
        gdir = self.d / "generate" / f"files-{need}"
        shutil.rmtree(gdir, ignore_errors=True)
        self.progress(f"sizing: generating {need} files ({need * self.rl / 2**30:.2f} GiB) in {self.data_root} ...")
        argv = self._kernel(n, need, gdir / "out", ["generate-data=true", "train=false", "evaluation=false"])
        res = execute(Step(f"sizing.generate.{need}", "kernel", "generate", argv, {}, gdir, None, self.a.timeout),
                      self.progress)
        if res["status"] != "ok":
            raise TrialFailed(f"generating {need} files: {res['status']} ({res['detail'][-600:]}); see {gdir}")
        self.st["dataset"] = {"files": need, "folder": str(target)}
        return need, res["wall_s"]

    def __call__(self, n: int) -> dict:
        files, gen_s = self.dataset(n)
        if self.a.cold:
            evict(self.data_root / f"files-{files}", sync=True)
        wd = self.d / "trials" / f"np{n}"
        shutil.rmtree(wd, ignore_errors=True)
        argv = self._kernel(n, files, wd / "out", ["generate-data=false", "output-ranks-data=true"])
        res = execute(Step(f"sizing.np{n}", "kernel", "sizing", argv, {}, wd, None, self.a.timeout), self.progress)
        if res["status"] != "ok":
            raise TrialFailed(f"the trial at {n} ranks: {res['status']} ({res['detail'][-600:]}); see {wd}")
        try:
            ml = json.loads((wd / "out" / "output.json").read_text())["mlperf"]
            au, thr = float(ml["train_au_mean_percentage"]), float(ml["train_au_expectation_percentage"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TrialFailed(f"the trial at {n} ranks left no MLPerf training numbers ({e}); see {wd}") from None
        if self.a.runs_db:
            add_to_store(self.a.runs_db, wd / "out", self.a.workload, self.progress)
        return {"n": n, "files": files, "au": au, "threshold": thr, "pass": ml["train_au_meet_expectation"] ==
                "success", "au_per_epoch": ml.get("train_au_percentage"),
                "throughput": ml.get("train_throughput_mean_samples_per_second"),
                "io_MB_s": ml.get("train_io_mean_MB_per_second"), "launcher": res["argv"][0], "mlperf_dataset_rule_met":
                (ml.get("dataset_rule") or {}).get("met"), "wall_s": res["wall_s"], "generate_s": gen_s,
                "output": str(wd / "out" / "output.json")}


def add_to_store(db_path: Path, out: Path, workload: str, progress) -> None:
    """The trial's kernel run added to the run store (`python -m store add`, docs/runs.md) as a child process (the
    harness imports no store); a store that cannot take it is a note, never the search's outcome."""
    p = subprocess.run([sys.executable, "-m", "store", "add", str(out), "--workload", Path(workload).stem,
                        "--db", str(db_path)], cwd=REPO, capture_output=True, text=True)
    if p.returncode == 0 and p.stdout.split():
        progress(f"sizing: trial kept in the run store {db_path} as run {p.stdout.split()[0]}")
    else:
        progress(f"sizing: note: the run store {db_path} did not take the trial: {(p.stderr or p.stdout)[-300:]}")


def progress_line(st: dict, res: dict, started: float, a: argparse.Namespace) -> str:
    """trial k of about n, its N and AU, the time so far and about how much is left."""
    done = st["trials"]
    passing = [int(k) for k, v in done.items() if v["pass"]]
    failing = [int(k) for k, v in done.items() if not v["pass"] and int(k) > max(passing, default=0)]
    lo, hi = max(passing, default=None), min(failing, default=None)
    k = len(done)
    about = max(k, estimate(a.ranks_max, a.resolution, lo, hi) if lo and hi else estimate(a.ranks_max, a.resolution))
    spent = time.time() - started
    left = (spent / max(1, st.get("launched", 1))) * (about - k)
    return (f"sizing: trial {k} of about {about}: {res['n']} accelerators, AU {res['au']:.2f}% "
            f"({'>=' if res['pass'] else '<'} {res['threshold']:.0f}%), {res.get('throughput') or 0:.1f} samples/s, "
            f"elapsed {spent:.0f} s, about {left:.0f} s left ({'pass' if res['pass'] else 'fail'}; not a submission)")


def write_outputs(d: Path, st: dict, out: Outcome, wl_name: str) -> str:
    """sizing.json, sizing.md (the table) and sizing.png (the plot); returns the answer's sentence."""
    rows = sorted(st["trials"].values(), key=lambda r: r["n"])
    p = st["params"]
    below = [r["n"] for r in rows if p["min_steps"] < MIN_STEPS_PER_EPOCH or r.get("mlperf_dataset_rule_met") is False]
    if out.kind == "fails_at_1":
        answer = (f"{wl_name}: the AU misses the threshold already at 1 accelerator (AU {rows[0]['au']:.2f}% < "
                  f"{rows[0]['threshold']:.0f}%): this storage feeds no accelerator of this workload")
    elif out.kind == "feeds_all":
        answer = (f"{wl_name}: the storage feeds every count up to RANKS_MAX={p['ranks_max']} (AU >= threshold at "
                  f"{out.largest}): no maximum found below it; raise RANKS_MAX to find one")
    else:
        answer = (f"{wl_name}: largest accelerator count with AU >= threshold: {out.largest} ({out.first_fail} "
                  f"fails; resolution {p['resolution']}: the true largest count is in [{out.largest}, "
                  f"{out.first_fail - 1}])")
    note = NOT_SUBMISSION + (f"; trials at {below} ran a dataset below MLPerf's rule (MIN_STEPS {p['min_steps']}, "
                             "or files under 5x host memory)" if below else "")
    write_json_atomic(d / "sizing.json", {"note": note, "answer": answer, "outcome": out.kind, "largest": out.largest,
                                          "first_fail": out.first_fail, "order": out.trials, "params": p,
                                          "trials": rows})
    lines = [f"# Sizing {wl_name} ({p['scale']}): {note}", "", answer, "",
             "| accelerators | AU % | threshold % | meets | samples/s | MB/s | files | trial s |",
             "|---:|---:|---:|---|---:|---:|---:|---:|"]
    lines += [f"| {r['n']} | {r['au']:.2f} | {r['threshold']:.0f} | {'yes' if r['pass'] else 'no'} | "
              f"{r.get('throughput') or 0:.1f} | {r.get('io_MB_s') or 0:.1f} | {r['files']} | {r['wall_s']:.1f} |"
              for r in rows]
    write_text_atomic(d / "sizing.md", "\n".join(lines) + "\n")
    plot(d / "sizing.png", rows, wl_name, out)
    return answer


def plot(path: Path, rows: list[dict], wl_name: str, out: Outcome) -> None:
    """AU (left axis, with the threshold line) and throughput (right axis) against accelerators."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.6))
    n = [r["n"] for r in rows]
    ax.plot(n, [r["au"] for r in rows], "o-", color="tab:blue", label="AU %")
    ax.axhline(rows[0]["threshold"], color="tab:red", ls="--", label=f"threshold {rows[0]['threshold']:.0f}%")
    if out.kind == "max":
        ax.axvline(out.largest, color="grey", ls=":", label=f"largest passing: {out.largest}")
    ax.set_xlabel("simulated accelerators (kernel ranks)")
    ax.set_ylabel("AU %")
    ax2 = ax.twinx()
    ax2.plot(n, [r.get("throughput") or 0 for r in rows], "s-", color="tab:green", label="samples/s")
    ax2.set_ylabel("throughput (samples/s)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.set_ylim(min([rows[0]["threshold"]] + [r["au"] for r in rows]) - 5, 101)
    ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4, fontsize=8)
    ax.set_title(f"sizing {wl_name}: not a submission", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def set_ranks_max(a: argparse.Namespace, cfg: dict) -> None:
    """RANKS_MAX when not given: a checkpoint shape's whole count (data x tensor x pipeline), else 64."""
    if a.ranks_max is None:
        a.ranks_max = (sizing_ckpt.shape_ranks(cfg) or 64) if sizing_ckpt.is_checkpoint_workload(cfg) else 64


def prepare(a: argparse.Namespace, progress) -> tuple[Path, dict, KernelTrial]:
    """Inputs checked, the workload resolved for the DLIO venv's entry, the folder and its state; SizingError or
    WorkloadError on bad input."""
    check_input(a)
    wls, version = sweep.resolve([a.workload], a.scale or default_scale(a.workload), [1], a.dlio_venv.resolve())
    (name, wl), = wls.items()
    ckpt = sizing_ckpt.is_checkpoint_workload(wl.config)
    set_ranks_max(a, wl.config)
    au = (wl.config.get("metric") or {}).get("au")
    if not ckpt and not isinstance(au, int | float):
        raise SizingError(f"WORKLOAD={a.workload}: no metric.au (the AU threshold) in its config")
    if not version.startswith("3."):
        raise SizingError(f"WORKLOAD={a.workload}: the kernel entry {version} computes no MLPerf "
                          f"{'checkpoint numbers' if ckpt else 'AU'} (a DLIO 3.x entry does): DLIO=<a DLIO 3.x "
                          "checkout> or DLIO_VENV=<a DLIO 3.x venv>")
    params = params_of(a, wl.scale)
    note = NOT_SUBMISSION_CKPT if ckpt else NOT_SUBMISSION
    text = f"# {name} at scale {wl.scale} ({note})\n" + yaml.safe_dump(wl.config, sort_keys=False)
    if ckpt:
        sizing_ckpt.check_counts(text, version, sizing_ckpt.counts(a.ranks_max))
    d = sizing_dir(a, params)
    d.mkdir(parents=True, exist_ok=True)
    st = load_state(d, params)
    write_text_atomic(d / WORKLOAD, text)
    if ckpt:
        return d, st, sizing_ckpt.CheckpointTrial(d, st, version, a, progress)
    return d, st, KernelTrial(d, st, wl.config, version, a, progress)


def dispatch(a: argparse.Namespace) -> int:
    """`python -m harness sizing ...` after argument parsing."""
    progress = lambda s: print(s, flush=True)  # noqa: E731
    try:
        d, st, trial = prepare(a, progress)
    except (SizingError, WorkloadError) as e:
        print(f"harness: error: {e}", file=sys.stderr)
        return 2
    started, st["launched"] = time.time(), 0
    ckpt = isinstance(trial, sizing_ckpt.CheckpointTrial)
    note = NOT_SUBMISSION_CKPT if ckpt else NOT_SUBMISSION
    progress(f"sizing: {a.workload} in {d} (" + (f"ranks {sizing_ckpt.counts(a.ranks_max)}" if ckpt else
             f"resolution {a.resolution}, RANKS_MAX {a.ranks_max}") + f"; {note})"
             + (f"; continuing: {len(st['trials'])} trials done" if st["trials"] else ""))

    def save(done: dict) -> None:
        write_json_atomic(d / "state.json", st)

    def measured(n: int) -> dict:
        res = trial(n)
        st["launched"] = st.get("launched", 0) + 1
        st["trials"][str(n)] = res
        progress(sizing_ckpt.progress_line(st, res, started, sizing_ckpt.counts(a.ranks_max)) if ckpt else
                 progress_line(st, res, started, a))
        return res

    try:
        memo = Memo(measured, st["trials"], save)
        if ckpt:  # the checkpoint cycle at every count: a curve, not a threshold to search for
            for n in sizing_ckpt.counts(a.ranks_max):
                memo(n)
        else:
            out = search(memo, a.ranks_max, a.resolution)
    except TrialFailed as e:
        save(st["trials"])
        print(f"harness: sizing: {e} (the finished trials are kept: run the same command again to continue)",
              file=sys.stderr)
        return 2 if isinstance(e, NoRoom) else 1
    except KeyboardInterrupt:
        save(st["trials"])
        print("harness: sizing interrupted: run the same command again to continue", file=sys.stderr)
        return 130
    answer = sizing_ckpt.write_outputs(d, st, Path(a.workload).stem, note) if ckpt else \
        write_outputs(d, st, out, Path(a.workload).stem)
    print((d / "sizing.md").read_text(), end="")
    progress(f"sizing: {answer} ({note}); {d}/sizing.png")
    return 0 if ckpt or out.kind != "fails_at_1" else 1
