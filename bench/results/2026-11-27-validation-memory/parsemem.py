"""Where collection's memory goes: each trace parser run alone in this process under tracemalloc, its peak and what
its result keeps (the tables collection holds until they are written), per data file; and the process's peak RSS.
Usage: PYTHONPATH=<tree> python parsemem.py synthetic RUN_DIR FILES   (a bench/perf/validation.py run: raw/ traces)
       PYTHONPATH=<tree> python parsemem.py run RUN_DIR              (a harness run: every launch's collect)
Prints one JSON object."""
import gc
import json
import resource
import sys
import tracemalloc
from pathlib import Path


def measure(name, fn, files, out):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    res = fn()
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out[name] = {"peak_mb": round((peak - base) / 2**20, 1), "kept_mb": round((cur - base) / 2**20, 1),
                 "peak_bytes_per_file": round((peak - base) / files),
                 "kept_bytes_per_file": round((cur - base) / files)}
    del res
    gc.collect()


def synthetic(run: Path, files: int, out: dict) -> None:
    from profiles import dftracer, logvfd

    root = "/tmp/h5runs2/unet3d-tiny-20261122-010853"
    for side in ("dlio", "kernel"):
        measure(f"dftracer.{side}", lambda s=side: dftracer.parse(run / "raw" / "dftracer" / s, s,
                                                                  Path(f"{root}/{s}/data")), files, out)
        measure(f"logvfd.{side}", lambda s=side: logvfd.compact(logvfd.parse_dir(run / "raw" / "logvfd" / s)),
                files, out)


def harness_run(run: Path, out: dict) -> int:
    from harness.plan import OTHER
    from profiles import Done, owner

    m = json.loads((run / "manifest.json").read_text())
    files = int(m["workload"]["config"]["dataset"]["num_files_train"])
    for name, rec in m["steps"].items():
        side, step = name.split(".", 1)
        prof = owner(step) if step != "generate" else None
        if rec.get("status") != "ok" or prof is None:
            continue
        done = Done(name, side, step, Path(rec["workdir"]), rec["wall_s"], run / side / "data",
                    run / OTHER[side] / "data")
        measure(name, lambda p=prof, d=done: p.collect(d), files, out)
    return files


def main() -> None:
    out: dict = {}
    if sys.argv[1] == "synthetic":
        files = int(sys.argv[3])
        synthetic(Path(sys.argv[2]), files, out)
    else:
        files = harness_run(Path(sys.argv[2]), out)
    out["files"] = files
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out, indent=1))


main()
