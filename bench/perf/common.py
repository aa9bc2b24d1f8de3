"""Shared pieces: the run context, statistics, load snapshots, cache dropping, and launching the kernel and fio."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.launch import Launcher

REPO = Path(__file__).resolve().parents[2]
# H5DLIO_BENCH_KERNEL: measure another build (e.g. a prototype fix) with the same sections
KERNEL = Path(os.environ.get("H5DLIO_BENCH_KERNEL") or REPO / "build" / "h5dlio")
MIB = 1024 * 1024


class BenchError(RuntimeError):
    """A launch that should have worked did not (the message names it and where its output is)."""


@dataclass
class Context:
    scale: str
    preset: dict
    out: Path                 # bench/results/<date>/
    work: Path                # scratch datasets (deleted at the end unless --keep-work)
    dlio_venv: Path | None
    wait_load: float = 1.5    # wait (up to wait_max s) before each section for the 1-min load to drop below this
    wait_max: float = 0.0
    only_variants: list = field(default_factory=list)  # dlio: re-measure only these variants (--dlio-variants)
    log: list = field(default_factory=list)

    @property
    def raw(self) -> Path:
        return self.out / "raw"

    def say(self, msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        self.log.append(line)


# ---------- statistics ----------
def summary(xs: list[float]) -> dict:
    """Median and spread of repeated measurements (the raw values kept next to them)."""
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return {"n": 0, "median": None, "min": None, "max": None, "values": []}
    return {"n": len(xs), "median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "spread_percent": (max(xs) - min(xs)) / statistics.median(xs) * 100 if statistics.median(xs) else None,
            "values": xs}


def ratio(num: list[float], den: list[float]) -> dict:
    """Ratio of medians, with its range from pairing the repetitions in order (same load conditions: interleaved)."""
    pairs = [a / b for a, b in zip(num, den, strict=False) if a is not None and b]
    num_m, den_m = summary(num)["median"], summary(den)["median"]
    return {"median_ratio": num_m / den_m if num_m is not None and den_m else None,
            "paired": summary(pairs)}


# ---------- load ----------
def load_snapshot() -> dict:
    """The 1/5/15-minute load averages and the busiest processes (the machine is shared)."""
    one, five, fifteen = os.getloadavg()
    top = []
    try:
        p = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True,
                           timeout=10)
        for line in p.stdout.splitlines()[:6]:
            cpu, _, comm = line.strip().partition(" ")
            top.append({"pcpu": float(cpu), "comm": comm.strip()})
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "load1": one, "load5": five, "load15": fifteen,
            "cpus": os.cpu_count(), "top": top}


def wait_for_quiet(ctx: Context) -> dict:
    """Wait up to ctx.wait_max seconds for the 1-minute load to drop below ctx.wait_load; return the snapshot."""
    t0 = time.time()
    while os.getloadavg()[0] >= ctx.wait_load and time.time() - t0 < ctx.wait_max:
        time.sleep(5)
    snap = load_snapshot()
    snap["waited_s"] = round(time.time() - t0, 1)
    return snap


# ---------- cache ----------
def drop_caches() -> bool:
    """Cold page cache: sync, then drop clean pages (root only). Returns False where the machine does not allow it."""
    subprocess.run(["sync"], check=False)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
        return True
    except OSError:
        return False


def can_drop_caches() -> bool:
    return os.access("/proc/sys/vm/drop_caches", os.W_OK)


def cached_dlio_venv(env_var: str, prefix: str, revision: str) -> Path | None:
    """$env_var, or a finished venv scripts/deps-dlio.sh made in the cache (`<prefix>-*`, wheel h5py) for a DLIO
    source revision starting with `revision`."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    cache = Path(os.environ.get("H5DLIO_CACHE", Path.home() / ".cache" / "h5dlio"))
    for v in sorted(cache.glob(f"{prefix}-*")):
        try:
            meta = json.loads((v / ".h5dlio-dlio.json").read_text())
        except (OSError, ValueError):
            continue
        if (v / ".h5dlio-complete").exists() and meta.get("h5py") == "wheel" and \
                str(meta.get("revision", "")).startswith(revision):
            return v
    return None


# ---------- launching ----------
def run(argv: list[str], where: Path, timeout: float = 1800, env: dict | None = None) -> dict:
    """One launch: argv list, copied env, timeout; stdout/stderr to files in `where`; wall time measured here."""
    where.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **(env or {})}
    t0 = time.perf_counter()
    with open(where / "stdout", "w") as out, open(where / "stderr", "w") as err:
        try:
            p = subprocess.run(argv, stdout=out, stderr=err, env=full_env, timeout=timeout, cwd=where)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = None
    wall = time.perf_counter() - t0
    if rc != 0:
        tail = (where / "stderr").read_text(errors="replace")[-1500:]
        raise BenchError(f"{argv[0]} ... exited {rc} after {wall:.1f} s (see {where}): {tail}")
    return {"wall_s": wall, "argv": argv}


def kernel_sets(**kv) -> list[str]:
    out = []
    for k, v in kv.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out += ["--set", f"{k.replace('_', '-')}={v}"]
    return out


def kernel(ctx: Context, name: str, ranks: int, sets: dict, *, rss: bool = False, env: dict | None = None,
           config: Path | None = None, wrap_env: dict | None = None, binary: Path | None = None) -> dict:
    """Run build/h5dlio (or `binary`) under mpirun with --set KEY=VALUE (quiet, ranks data); return wall time,
    output.json, per-rank CSV rows and (rss=True) each rank's peak RSS from /usr/bin/time."""
    where = ctx.raw / name
    if where.exists():
        shutil.rmtree(where)
    outdir = where / "out"
    argv = Launcher("mpirun", ranks).argv(where / "ranks", wrap_env or {})
    if rss:
        argv += ["/usr/bin/time", "-f", "H5DLIO_MAXRSS_KB=%M"]
    argv += [str(binary or KERNEL)] + (["--config", str(config)] if config else [])
    argv += kernel_sets(output_folder=outdir, quiet=True, output_ranks_data=True, **sets)
    r = run(argv, where, env=env)
    js = outdir / "output.json"
    r["output"] = json.loads(js.read_text()) if js.exists() else {}
    r["ranks"] = read_ranks_csv(outdir / "output.ranks.csv")
    if rss:
        r["maxrss_kb"] = rank_rss(where / "ranks")
    return r


def read_ranks_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    head = lines[0].split(",")
    rows = []
    for ln in lines[1:]:
        vals = ln.split(",")
        row = {}
        for k, v in zip(head, vals, strict=False):
            try:
                row[k] = float(v) if k != "phase" else v
            except ValueError:
                row[k] = v
        rows.append(row)
    return rows


def rank_rss(logdir: Path) -> list[int]:
    """H5DLIO_MAXRSS_KB=<n> lines of /usr/bin/time in each rank's stderr (mpirun --output-filename), by rank."""
    out = {}
    for f in logdir.glob("*/rank.*/stderr"):
        rank = int(f.parent.name.split(".")[1])
        for ln in f.read_text(errors="replace").splitlines():
            if ln.startswith("H5DLIO_MAXRSS_KB="):
                out[rank] = int(ln.split("=", 1)[1])
    return [out[k] for k in sorted(out)]


def generate(ctx: Context, name: str, folder: Path, ranks: int, sets: dict, rss: bool = False) -> dict:
    """Generate a dataset into a new folder (removed first)."""
    if folder.exists():
        shutil.rmtree(folder)
    return kernel(ctx, name, ranks, {"data_folder": folder, "generate_data": True, "train": False,
                                     "evaluation": False, "keep_files": True, **sets}, rss=rss)


def dataset_files(folder: Path) -> list[Path]:
    return sorted((folder / "train").glob("*.h5")) + sorted((folder / "valid").glob("*.h5"))


def records_offset(path: Path) -> int | None:
    """Byte offset of the contiguous `records` dataset in a kernel/DLIO file (h5dump of the kernel's HDF5)."""
    stamp = REPO / "build" / ".hdf5-prefix"
    h5dump = Path(stamp.read_text().strip()) / "bin" / "h5dump" if stamp.exists() else None
    if not h5dump or not h5dump.exists():
        return None
    p = subprocess.run([str(h5dump), "-p", "-H", "-d", "records", str(path)], capture_output=True, text=True)
    words = p.stdout.split()
    return int(words[words.index("OFFSET") + 1]) if "OFFSET" in words else None


def fio(ctx: Context, name: str, files: list[Path], rw: str, bs: int, *, numjobs: int = 1, direct: bool = False,
        size_per_file: int | None = None, offset: int = 0) -> dict:
    """A plain reader/writer of the same files: fio, psync, one job per 'rank', files served in order, no cache
    invalidation of its own (the cache state is set by the caller, identically for both programs). offset: where
    in each file the transfers start (the records dataset's offset: the same bytes the kernel moves)."""
    where = ctx.raw / name
    where.mkdir(parents=True, exist_ok=True)
    groups = [files[i::numjobs] for i in range(numjobs)]
    argv = ["fio", "--output-format=json", "--group_reporting", "--ioengine=psync", "--invalidate=0",
            "--fallocate=none", "--file_service_type=sequential", f"--bs={bs}", f"--rw={rw}",
            f"--direct={int(direct)}", f"--offset={offset}"]
    for i, g in enumerate(groups):
        per = size_per_file or min(f.stat().st_size for f in g)
        dirs = {f.parent for f in g}
        if len(dirs) != 1:
            raise BenchError(f"fio {name}: files from {len(dirs)} folders (one job reads one folder)")
        # names relative to --directory: fio caps an option value at 4096 characters
        argv += [f"--name=j{i}", f"--directory={dirs.pop()}", f"--filename={':'.join(f.name for f in g)}",
                 f"--size={per * len(g)}"]
    r = run(argv, where)
    js = json.loads((where / "stdout").read_text())
    j = js["jobs"][0][rw.replace("rand", "")] if rw in ("read", "write") else js["jobs"][0]["read"]
    io = j["io_bytes"]
    lat_total = j["clat_ns"]["mean"] * j["total_ios"] / 1e9 / numjobs  # seconds inside the syscall, per job
    return {"wall_s": r["wall_s"], "io_bytes": io, "runtime_s": j["runtime"] / 1000.0,
            "bw_bytes_per_s": io / (j["runtime"] / 1000.0) if j["runtime"] else None,
            "syscall_s": lat_total, "syscall_bw_bytes_per_s": io / numjobs / lat_total if lat_total else None}


# ---------- results.md ----------
def table(head: list[str], rows: list[list[str]]) -> str:
    """A markdown table: the head, then one line a row (report.py and each section's own markdown)."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
