"""python -m bench.perf run [--scale tiny|small] [--out DIR] ...: every measurement of issue 6 into
DIR/results.json + DIR/*.png + DIR/results.md (raw launch output in DIR/raw/, not committed);
python -m bench.perf render DIR: redraw the figures and results.md from DIR/results.json.

Exit status: 0 every section measured (targets missed are results, not failures), 1 a section failed (the others
are still written), 2 bad options, 130 interrupted."""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
import traceback
from pathlib import Path

from bench.perf import (
    checkpoint,
    ckptformat,
    density,
    dlio,
    generation,
    mlperf,
    mlperf3,
    overhead,
    profilers,
    readpath,
    report,
    scale,
    scaling,
    validation,
    vol,
)
from bench.perf.common import KERNEL, MIB, REPO, BenchError, Context, load_snapshot
from common.fileio import write_json_atomic

SECTIONS = {"readpath": readpath, "overhead": overhead, "dlio": dlio, "generation": generation, "scaling": scaling,
            "profilers": profilers, "checkpoint": checkpoint, "checkpoint_hdf5": ckptformat,
            "mlperf": mlperf, "vol": vol, "validation": validation, "mlperf3": mlperf3,
            "scale": scale, "density": density}

# checkpoint_hdf5: DLIO 2.0.0-52 transformers, ZeRO 3, fp16 (small: 63 M parameters, ~0.5 GB per checkpoint)
_CKPT_MODEL_TINY = {"num_layers": 2, "hidden_size": 256, "ffn_hidden_size": 1024, "vocab_size": 4000,
                    "num_attention_heads": 8, "num_kv_heads": 2, "model_datatype": "fp16", "optimizer_datatype": "fp16"}
_CKPT_MODEL_SMALL = {**_CKPT_MODEL_TINY, "hidden_size": 1024, "ffn_hidden_size": 4096, "vocab_size": 16000,
                     "num_attention_heads": 16, "num_kv_heads": 4}

# tiny: the CI smoke (every section, 1-3 repetitions, DLIO only where it is needed: < 3 min on 2 cores);
# small: the measurement of record (minutes; ~30 DLIO launches)
# the tree whose validation the streaming parsers replaced (bench/perf/validation.py measures both)
VALIDATION_BASELINE = "672eac6"

PRESETS = {
    "tiny": {
        "readpath": {"files": 16, "record_length": 4 * MIB, "repeat": 3},
        "overhead": {"files": 28, "record_length": MIB, "record_length_stdev": 488832, "epochs": 2,
                     "cases": [(1, 0), (2, 0), (2, 4)], "repeat": 1},
        "generation": {"files": 8, "samples_per_file": 1, "record_length": 4 * MIB, "ranks": [1, 2], "repeat": 2,
                       "rss_buffers": [4 * MIB, 16 * MIB], "rss_record_lengths": [4 * MIB]},
        "scaling": {"files": 56, "samples_per_file": 1, "record_length": MIB, "ranks": [1, 2, 4, 8], "repeat": 1,
                    "size_files": [16, 64], "size_ranks": 2},
        "dlio": {"ranks": 2, "repeat": 1, "gen_repeat": 1, "empty_repeat": 0, "empty_scale": "tiny",
                 "reference_read_threads": 4, "timeout": 900,
                 "variants": [{"scale": "tiny", "framework": "pytorch", "read_threads": 4}]},
        "profilers": {"scales": ["tiny"], "ranks": 2, "repeat": 1, "sides": ["kernel"], "timeout": 900},
        "checkpoint": {"model_size": 32 * MIB, "ranks": [1, 2], "repeat": 1},
        "checkpoint_hdf5": {"ranks": [1, 2], "repeat": 1, "checkpoints": 1, "model": _CKPT_MODEL_TINY},
        "mlperf": {"scale": "tiny", "ranks": 2, "repeat": 1},
        "vol": {"files": 8, "samples_per_file": 4, "record_length": 64 * 1024, "batch_size": 2, "epochs": 1,
                "ranks": [2], "compute": [0.0, 0.01], "repeat": 1, "cold": False,
                "pass_through": {"repeat": 2, "workloads": [
                    {"name": "small-files", "what": "one-sample 4 KiB files", "files": 16, "samples_per_file": 1,
                     "record_length": 4096, "batch_size": 4, "epochs": 1}]}},
        "validation": {"files": [1000], "mem_limit": 4 * 2**30},
        "scale": {"files": [100, 400], "ranks_files": 1, "record_length": 4096, "repeat": 1, "once_from": 10**6,
                  "hier": {"files": 400, "subfolders": [0, 10]}, "ranks": [1, 2, 4], "ranks_n": 400,
                  "dlio_files": [], "dlio_ranks": 2, "dlio_timeout": 900},
        # the kernel side alone (CI: the code cannot rot); its DLIO side takes minutes a launch
        "density": {"workload": "unet3d_b200", "scale": "tiny_odirect", "read_MiB_s": 100, "sides": ["kernel"],
                    "ranks_max": {"kernel": 2}, "min_steps": 5, "fs_size": "1G", "timeout": 600,
                    "mem_fraction": 0.8},
    },
    "small": {
        "readpath": {"files": 64, "record_length": 16 * MIB, "repeat": 5},
        "overhead": {"files": 168, "record_length": 8 * MIB, "record_length_stdev": 3910656, "epochs": 2,
                     "cases": [(1, 0), (2, 0), (2, 4)], "repeat": 3},
        "generation": {"files": 64, "samples_per_file": 1, "record_length": 16 * MIB, "ranks": [1, 2], "repeat": 3,
                       "rss_buffers": [4 * MIB, 16 * MIB, 64 * MIB], "rss_record_lengths": [MIB, 16 * MIB, 64 * MIB]},
        "scaling": {"files": 128, "samples_per_file": 1, "record_length": 4 * MIB, "ranks": [1, 2, 4, 8],
                    "repeat": 3, "size_files": [32, 64, 128, 256], "size_ranks": 2},
        "dlio": {"ranks": 2, "repeat": 3, "gen_repeat": 2, "empty_repeat": 2, "empty_scale": "tiny",
                 "reference_read_threads": 4, "timeout": 900,
                 "variants": [{"scale": "tiny", "framework": "pytorch", "read_threads": 4},
                              {"scale": "tiny", "framework": "pytorch", "read_threads": 0},
                              {"scale": "tiny", "framework": "pytorch", "read_threads": 4, "evaluation": True},
                              {"scale": "tiny", "framework": "tensorflow", "read_threads": 4},
                              {"scale": "small", "framework": "pytorch", "read_threads": 4},
                              {"scale": "small", "framework": "pytorch", "read_threads": 0},
                              {"scale": "small", "framework": "tensorflow", "read_threads": 4},
                              # one row per other workload of reference-configs/ the kernel runs, with its own
                              # readers (`make workloads`: the matrix of their verdicts); 2 interleaved repetitions
                              *({"workload": w, "scale": "small", "framework": fw, "read_threads": rt,
                                 "repeat": 2} for w, fw, rt in (("unet3d_a100", "pytorch", 4),
                                                                ("unet3d_v100", "pytorch", 4), ("dlrm", "pytorch", 1),
                                                                ("bert", "tensorflow", 1),
                                                                ("cosmoflow", "tensorflow", 4),
                                                                ("resnet50", "tensorflow", 8))),
                              # default: 2 x 80 one-second steps and 2 x 40 half-second evaluations a launch (once)
                              {"workload": "default", "scale": "small", "framework": "pytorch", "read_threads": 1,
                               "repeat": 1},
                              # megatron_deepspeed at tiny scale: DLIO's small-scale training launch (65,536
                              # samples) passed 900 s
                              {"workload": "megatron_deepspeed", "scale": "tiny", "framework": "pytorch",
                               "read_threads": 1, "repeat": 2}]},
        # the strace profile's cost at tiny and small (issue 35); the dlio section's datasets when it ran, else its own
        "profilers": {"scales": ["tiny", "small"], "ranks": 2, "repeat": 2, "sides": ["dlio", "kernel"],
                      "timeout": 900},
        "checkpoint": {"model_size": 512 * MIB, "ranks": [1, 2], "repeat": 3},
        "checkpoint_hdf5": {"ranks": [1, 2], "repeat": 2, "checkpoints": 2, "model": _CKPT_MODEL_SMALL},
        "mlperf": {"scale": "tiny", "ranks": 2, "repeat": 3},
        # unet3d-like samples (DLIO's unet3d: 140 MiB per file, batch 7, 0.323 s) scaled to this machine
        "vol": {"files": 32, "samples_per_file": 1, "record_length": 8 * MIB, "batch_size": 2, "epochs": 1,
                "ranks": [1, 2], "compute": [0.0, 0.02, 0.05, 0.1], "repeat": 3, "cold": True,
                # native against the pass-through connector (issue 28's <= 2% goal): 1 rank, no compute, warm
                "pass_through": {"repeat": 10, "workloads": [
                    {"name": "unet3d-like", "what": "unet3d-like samples (8 MiB, one per file)", "files": 32,
                     "samples_per_file": 1, "record_length": 8 * MIB, "batch_size": 2, "epochs": 2},
                    {"name": "small-files", "what": "one-sample 4 KiB files (the scale section's)", "files": 2000,
                     "samples_per_file": 1, "record_length": 4096, "batch_size": 4, "epochs": 2}]}},
        # validation at 10^3..10^5 data files, this tree and the last commit before streaming parsers (issue 26)
        "validation": {"files": [1000, 10000, 100000], "mem_limit": 6 * 2**30, "baseline": VALIDATION_BASELINE},
        # MLPerf Storage v3.0 on DLIO 3.x (f6796ed): a unet3d_b200 epoch and the llama3_8b_v3 checkpoint cycle, DLIO
        # against the kernel against dd, 2 interleaved repetitions (6 DLIO launches)
        "mlperf3": {"epoch_scale": "tiny_odirect", "ckpt_scale": "tiny", "ranks": 2, "repeat": 2},
        # issue 26 item 6: one-sample 4 KiB files, 10^3..10^5 (10^5 measured once) read by 1 rank (the loops' process
        # count; no step barrier to wait at), MLPerf unet3d's 14 sub-folders and a deeper tree against flat, ranks
        # 1..64 at 2,000 files (each rank's split), DLIO 2.0.0 at 10^3 and 5 x 10^3
        "scale": {"files": [1000, 10000, 100000, 1000000], "ranks_files": 1, "record_length": 4096, "repeat": 2,
                  "once_from": 10**5, "hier": {"files": 10000, "subfolders": [0, 14, 100]},
                  "ranks": [1, 2, 4, 8, 16, 32, 64], "ranks_n": 2000, "dlio_files": [1000, 5000], "dlio_ranks": 2,
                  "dlio_timeout": 3600},
        # issue 37 item 3: a storage feeding ~7 unet3d_b200 tiny_odirect accelerators (43.2 MiB/s each)
        "density": {"workload": "unet3d_b200", "scale": "tiny_odirect", "read_MiB_s": 300, "sides": ["kernel", "dlio"],
                    "ranks_max": {"kernel": 16, "dlio": 16}, "min_steps": 20, "fs_size": "4G", "timeout": 1800,
                    "mem_fraction": 0.8},
    },
}


def setup_parser(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure")
    r.add_argument("--scale", default="small", choices=sorted(PRESETS))
    r.add_argument("--out", type=Path, default=None, help="results folder (default bench/results/<date>[-tiny])")
    r.add_argument("--work", type=Path, default=None, help="scratch datasets (default build/bench-work/<scale>)")
    r.add_argument("--keep-work", action="store_true", help="keep the scratch datasets")
    r.add_argument("--dlio-variants", default="", help="dlio: only these variants (e.g. tiny-tensorflow-rt4), "
                   "merged into the dlio section of --out's results.json (implies --merge)")
    r.add_argument("--vol-parts", default="", help="vol: only these parts (pass_through, async; default both)")
    r.add_argument("--merge", action="store_true", help="keep the other sections of an existing results.json in "
                   "--out (re-measure only --sections)")
    r.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    r.add_argument("--dlio-venv", type=Path, default=None, help="reference DLIO venv (default: build/.dlio-venv)")
    r.add_argument("--wait-load", type=float, default=1.5, help="before each section, wait for the 1-min load "
                   "average to drop below this (default 1.5) ...")
    r.add_argument("--wait-max", type=float, default=0.0, help="... for at most this many seconds (default 0)")
    d = sub.add_parser("render", help="redraw figures and results.md from results.json")
    d.add_argument("dir", type=Path)


def _versions(venv: Path | None) -> dict:
    try:
        from harness.run import versions
        return versions(str(venv / "bin" / "python")) if venv else {}
    except Exception as e:  # noqa: BLE001 - versions are informative, a failure is recorded
        return {"error": str(e)}


def render(out: Path, res: dict) -> None:
    figs = report.figures(res, out)
    (out / "results.md").write_text(report.markdown(res, figs))


def write(out: Path, res: dict) -> None:
    write_json_atomic(out / "results.json", res)


def _bad_options(a, names: list[str]) -> str:
    """What is wrong with --sections and --vol-parts ("" if nothing); sets a.vol_parts to a list."""
    bad = [x for x in names if x not in SECTIONS]
    if bad:
        return f"--sections: unknown {bad} (known: {', '.join(SECTIONS)})"
    a.vol_parts = [x for x in a.vol_parts.split(",") if x]
    bad = sorted(set(a.vol_parts) - {"pass_through", "async"})
    return f"--vol-parts: unknown {bad} (known: pass_through, async)" if bad else ""


def _preset(a) -> dict:
    """--scale's preset, with --vol-parts in the vol section's `parts`"""
    p = PRESETS[a.scale]
    return {**p, "vol": {**p["vol"], "parts": a.vol_parts}} if a.vol_parts else p


def run(a) -> int:
    names = [x for x in a.sections.split(",") if x]
    bad = _bad_options(a, names)
    if bad:
        print(f"bench: {bad}", file=sys.stderr)
        return 2
    if not KERNEL.exists():
        print(f"bench: kernel not built: {KERNEL} (run `make build`)", file=sys.stderr)
        return 2
    venv = a.dlio_venv
    stamp = REPO / "build" / ".dlio-venv"
    if venv is None and stamp.exists():
        venv = Path(stamp.read_text().strip())
    day = time.strftime("%Y-%m-%d")
    # absolute: launches run with their own working directory
    out = (a.out or REPO / "bench" / "results" / (day if a.scale == "small" else f"{day}-{a.scale}")).resolve()
    work = (a.work or REPO / "build" / "bench-work" / a.scale).resolve()
    previous = {}
    only = [x for x in a.dlio_variants.split(",") if x]
    a.merge = a.merge or bool(only)
    if a.merge and (out / "results.json").exists():
        previous = json.loads((out / "results.json").read_text()).get("sections", {})
    elif (out / "raw").exists():
        shutil.rmtree(out / "raw")
    if work.exists():
        shutil.rmtree(work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    preset = _preset(a)
    ctx = Context(scale=a.scale, preset=preset, out=out, work=work, dlio_venv=venv,
                  wait_load=a.wait_load, wait_max=a.wait_max, only_variants=only)
    t0 = time.time()
    res = {"meta": {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "scale": a.scale, "host": platform.node(),
                    "cpus": os.cpu_count(), "platform": platform.platform(), "versions": _versions(venv),
                    "preset": preset, "load_start": load_snapshot()},
           "sections": {k: v for k, v in previous.items() if k not in names or (k == "dlio" and only)}}
    failed = []
    ctx.say(f"bench: SCALE={a.scale} -> {out} (scratch {work}); load {os.getloadavg()[0]:.2f} on "
            f"{os.cpu_count()} cores")
    try:
        for name in names:
            ctx.say(f"bench: {name}")
            t1 = time.time()
            try:
                sec = SECTIONS[name].measure(ctx)
            except (BenchError, OSError, KeyError, ValueError, json.JSONDecodeError) as e:
                failed.append(name)
                sec = {"error": f"{type(e).__name__}: {e}"[:3000], "traceback": traceback.format_exc()[-3000:]}
                ctx.say(f"bench: {name} FAILED: {sec['error'][:500]}")
            sec["seconds"] = round(time.time() - t1, 1)
            if name == "dlio" and only and "variants" in sec and "variants" in previous.get("dlio", {}):
                new = sec
                sec = {**previous["dlio"], "variants": {**previous["dlio"]["variants"], **new["variants"]},
                       "scales": {**previous["dlio"].get("scales", {}), **new.get("scales", {})},
                       "remeasured": [*previous["dlio"].get("remeasured", []),
                                      {"variants": only, "load": new.get("load"), "scales": new.get("scales")}]}
                if new.get("empty_launch"):
                    sec["empty_launch"] = {**new["empty_launch"], "load": new.get("load")}
            res["sections"][name] = sec
            res["meta"]["duration_s"] = time.time() - t0
            write(out, res)
            ctx.say(f"bench: {name} done in {sec['seconds']:.0f} s")
    except KeyboardInterrupt:
        res["meta"]["interrupted"] = True
        write(out, res)
        return 130
    finally:
        if not a.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    res["meta"]["load_end"] = load_snapshot()
    res["meta"]["duration_s"] = time.time() - t0
    res["meta"]["failed_sections"] = failed
    write(out, res)
    render(out, res)
    (out / "raw").mkdir(exist_ok=True)
    with open(out / "raw" / "bench.log", "a") as f:
        f.write("\n".join(ctx.log) + "\n")
    ctx.say(f"bench: {'FAILED sections: ' + ', '.join(failed) if failed else 'done'} in {time.time() - t0:.0f} s: "
            f"{out}/results.md")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_parser(p)
    a = p.parse_args(argv)
    if a.cmd == "render":
        res = json.loads((a.dir / "results.json").read_text())
        render(a.dir, res)
        print(f"{a.dir}/results.md")
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
