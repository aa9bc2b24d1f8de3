"""Where `python -m validate` holds its memory: every check of validate.checks.checks() run in turn, as validate runs
them, each with the process's peak RSS reset first (/proc/self/clear_refs 5), then its own peak (VmHWM), the RSS
left after it and its CPU seconds; and, with --tables, what one parsed table keeps (tracemalloc, RunDir.table) for
the per-file tables (--tables shared: read as the checks read them now, shared=True; DFTracer's without read_time_s).
Nothing is written to the run directory (the derived tables are dropped).
Usage: PYTHONPATH=<tree> python checkmem.py RUN_DIR [--tables [shared]]      prints one JSON object"""
import gc
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path


def status(key: str) -> int:
    """a /proc/self/status field, kB"""
    for ln in Path("/proc/self/status").read_text().splitlines():
        if ln.startswith(key + ":"):
            return int(ln.split()[1])
    return 0


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def per_check(run_dir: Path) -> list[dict]:
    from validate.checks import Run, checks

    run = Run(run_dir)
    out = []
    for fn in checks():
        gc.collect()
        reset_peak()
        before, t0 = status("VmRSS"), time.process_time()
        fn(run)
        cpu = time.process_time() - t0
        out.append({"check": fn.__name__, "peak_rss_mb": round(status("VmHWM") / 1024),
                    "rss_before_mb": round(before / 1024), "rss_after_mb": round(status("VmRSS") / 1024),
                    "cpu_s": round(cpu, 1), "derived_kept": sorted(run.derived)})
        run.derived.clear()
    return out


def per_table(run_dir: Path, shared: bool) -> dict:
    from common.rundir import RunDir

    rd, out = RunDir(run_dir), {}
    for name in ("dftracer-dlio.json", "darshan-dlio.json", "dataset-dlio.json"):
        if not (rd.tables / name).exists():
            continue
        gc.collect()
        tracemalloc.start()
        how = {"shared": True, "skip": ("read_time_s",) if name.startswith("dftracer") else ()} if shared else {}
        t = rd.table(name, **how)
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[name] = {"kept_mb": round(cur / 2**20), "peak_mb": round(peak / 2**20),
                     "file_bytes": (rd.tables / name).stat().st_size}
        del t
    return out


def main() -> None:
    run_dir = Path(sys.argv[1])
    res = {"checks": per_check(run_dir)}
    if "--tables" in sys.argv[2:]:
        res["tables"] = per_table(run_dir, "shared" in sys.argv[2:])
    res["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
