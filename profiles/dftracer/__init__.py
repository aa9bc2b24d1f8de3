"""DFTracer profile: POSIX events (and the programs' own regions) of a training launch.

DLIO traces itself through pydftracer, switched on by the environment (DFTRACER_ENABLE=1, DFTRACER_INC_METADATA=1,
files output.folder/trace-<rank>-of-<size>*.pfw[.gz]). Two generations of the tracer, both read here:
- pydftracer 1.0 (DLIO 2.0.0's lock): JSON lines with "ph": "X", the file name in args.fname, and DLIO's rank as the
  process id; DLIO's forked reader processes inherit the tracer.
- pydftracer 2.x with its core, the `dftracer` wheel (DLIO 2.0.1 and 3.x): "ph": 1, the file name as a hash
  (args.fhash) declared once by an "FH" metadata event, the OS process id. pydftracer 2.x traces only the process that
  initialises it, and DLIO 3.x spawns its readers (multiprocessing context spawn), so DLIO runs under the preload
  library as the kernel does; pydftracer's initialisation renames the process's log to trace-<rank>-of-<size> and its
  children inherit that name: the rank comes from the file name.
The kernel runs under the same venv's preload library (POSIX calls) plus the regions it emits through DFTracer's C API
(epoch, step, load_batch, read_sample, compute, and rank_info, which maps each process to its rank).
The package by job: traces (the trace files read and normalized), tables and measures (the per-launch tables, fed one
event at a time), collect (a launch's traces into its tables: the harness's collection), checks and order (the
checks validate runs); here the Profile itself, where the tracer is installed, and the names the other modules and
the tests use (each imported from its module when first asked for).
"""
from __future__ import annotations

import json
from pathlib import Path

from common.rundir import BIG_TABLE
from profiles import (
    Context,
    Deferred,
    Done,
    Found,
    Launch,
    Profile,
    ReportSection,
    Shape,
    Similarity,
    Wrapped,
    checkpoint_dir,
    counted,
    exports,
    per_file,
    register,
    touched,
)

__all__ = ["SHARED", "UNBUFFERED_TRACE", "DFTracer", "Features", "FileTable", "ProcessOpens", "Timeline",
           "check_dftracer", "check_model_opens", "check_order", "check_workers", "checkpoint_table", "features",
           "file_table", "iter_events", "metadata", "normalize", "parse", "parse_json", "preload_library",
           "prewarm_prefetch", "process_opens", "process_order", "pydftracer_version", "read_events", "timeline",
           "trace_files"]
# the names the callers take from here, each imported from its module when first used (registry() imports none)
__getattr__ = exports(__name__, {
    ".checks": ("SHARED", "check_checkpoint_io", "check_dftracer", "prewarm_prefetch"),
    ".collect": ("parse", "parse_json"),
    ".measures": ("Features", "Timeline", "features", "metadata", "timeline"),
    ".order": ("check_model_opens", "check_order", "check_workers"),
    ".tables": ("FileTable", "ProcessOpens", "checkpoint_table", "file_table", "process_opens", "process_order"),
    ".traces": ("iter_events", "normalize", "read_events", "trace_files")})


# DLIO 3.x's rank 0 runs `sudo -n sh -c 'echo 3 > /proc/sys/vm/drop_caches'` before every epoch (main.py:734-787 at
# f6796ed). Where no sudo is installed the exec fails, and a failed exec in a child stops DFTracer 2.2.0 in the parent
# (docs/fidelity-dlio3.md); reader processes forked from that parent afterwards (reader.multiprocessing_context: fork)
# die of SIGSEGV, and DLIO with them (measured: unet3d_b200 tiny_fork, every epoch's readers; spawned readers start a
# fresh interpreter and are not touched). On the DLIO side of such a launch a `sudo` that answers as `sudo -n` does
# without a NOPASSWD rule (exit 1) comes first in PATH: DLIO's handler takes both failures alike (`except Exception`:
# a warning, the flush disabled for the run), and the readers live.
NO_SUDO = Path(__file__).parent / "nosudo"


def _no_sudo(launch: Launch) -> dict[str, str]:
    """PATH with NO_SUDO first, for a DLIO launch whose readers are forked, on a host without sudo; else nothing."""
    import os
    import shutil
    shape = launch.shape
    named = ((shape.config.get("reader") or {}).get("multiprocessing_context") if shape else None)
    # the workload's own context, else the one the probe saw DLIO default to (harness/probe.py reader_context)
    if str(named or (shape.rules.get("reader_context") if shape else "")) != "fork" or shutil.which("sudo"):
        return {}
    return {"PATH": f"{NO_SUDO}{os.pathsep}{launch.env.get('PATH', os.environ.get('PATH', ''))}"}


def preload_library(dlio_venv: Path) -> Path | None:
    """DFTracer's preload library as shipped in the reference venv: pydftracer 1.0's wheel (dftracer/lib) or the
    dftracer 2.x core wheel (dftracer/lib64)."""
    hits = sorted(dlio_venv.glob("lib/python3*/site-packages/dftracer/lib*/libdftracer_preload.so"))
    return hits[0] if hits else None


def pydftracer_version(dlio_venv: Path) -> str | None:
    """The venv's pydftracer release (the Python side DLIO imports), from its dist-info folder."""
    hits = sorted(dlio_venv.glob("lib/python3*/site-packages/pydftracer-*.dist-info"))
    return hits[0].name[len("pydftracer-"):-len(".dist-info")] if hits else None


# DLIO's spawned readers under DFTracer 2.x: each event written to the trace as it is logged, uncompressed. torch
# ends a reader that has not exited within 5 s of its iterator's shutdown with SIGTERM
# (torch/utils/data/dataloader.py `_shutdown_workers`: join(timeout=MP_STATUS_CHECK_INTERVAL), then terminate()), and
# a reader's exit (the interpreter's teardown of torch) takes longer than that on a loaded machine: measured with strace
# on DLIO 3.x (f6796ed), every reader process of a tiny retinanet_b200 or unet3d_b200 run was killed that way, after
# its last read. DFTracer writes its buffer (16 MiB, gzip) only when full or at its exit handler, which SIGTERM skips:
# the trace file stays empty. With the buffer at 1 byte (dftracer's BufferManager writes when the event would
# overflow it) and no compression (a gzip stream cut short loses zlib's pending block), a terminated reader's trace
# holds every call it completed. DLIO's I/O on its data files is untouched: only the tracer's own writes change.
UNBUFFERED_TRACE = {"DFTRACER_WRITE_BUFFER_SIZE": "1", "DFTRACER_TRACE_COMPRESSION": "0"}


@register
class DFTracer(Profile):
    name = "dftracer"
    describes = "POSIX I/O per data and checkpoint file; every other file a side touched, classified (DFTracer)"
    metadata_label = "DFTracer"
    holds_file_tables = True
    order = 30
    checks = Deferred(".checks:check_dftracer", ".checks:check_checkpoint_io", "profiles.compute:check_compute")
    covers = {"data_reads": "DFTracer", "posix_data": "DFTracer (PROFILES=dftracer)",
              "traced_other": "DFTracer (PROFILES=dftracer)",
              "open_order": "DFTracer's opens by name (PROFILES=dftracer; a PyTorch loader of DLIO: dftracer.order)",
              "readers": "DFTracer's opens by name (PROFILES=dftracer; a PyTorch loader of DLIO: dftracer.order)",
              "checkpoint_writes": "DFTracer (PROFILES=dftracer)",
              "model_reads": "DFTracer where DLIO reads whole files (3.x)",
              "compute": "DFTracer on both sides (PROFILES=dftracer)"}
    claims = (("counts.dftracer.*", counted("model_reads")), ("dftracer.batches.*", counted("model_reads")),
              ("dftracer.per_file", per_file("dftracer")), ("dftracer.explained", touched("traced_other")),
              ("dftracer.checkpoints", counted("checkpoint_writes")),
              ("dftracer.order.*", counted("open_order", "readers")))  # expected: the rank's data-file opens on DLIO's
    kernel_only = ("counts.dftracer.kernel.", "counts.checkpoint_io.kernel")   # the kernel's traced opens and
    # checkpoint calls against the model
    report_sections = Deferred(ReportSection(".report:dftracer_section", after="mlperf"))   # its timelines
    paper_sections = Deferred(".report:paper_section")
    label = "DFTracer"
    similarity = Similarity("similarity", "DFTracer POSIX events", "the DFTracer profile")

    def available(self, ctx: Context) -> Found:
        lib = preload_library(ctx.dlio_venv)
        if lib is None:
            return Found(False, f"no libdftracer_preload.so in {ctx.dlio_venv} (neither pydftracer 1.0 nor the "
                                "dftracer 2.x core wheel is installed)")
        ver = pydftracer_version(ctx.dlio_venv) or "?"
        return Found(True, info={"lib": str(lib), "pydftracer": ver, "dlio_preload": not ver.startswith("1.")})

    def refuse(self, shape: Shape, data_dir: Path) -> str | None:
        """A workload naming fork readers for a DLIO that spawns them by default (the 3.x line, whose readers DFTracer
        2.x traces through its preload library): each forked reader writes its own trace-<hash>-fork.pfw whose events
        carry the reader's pid, not its rank (measured, unet3d_b200 tiny_fork: the per-rank rows counted no DLIO read
        and named rank 15392, ...); the per-rank checks cannot attribute them yet. The strace profile compares them."""
        named = (shape.config.get("reader") or {}).get("multiprocessing_context")
        if str(named) == "fork" and shape.rules.get("reader_context") == "spawn" and shape.reads_data:
            return ("the dftracer profile cannot attribute DLIO 3.x's forked reader processes to their ranks "
                    "(reader.multiprocessing_context: fork; docs/fidelity-dlio3.md row 8): run with PROFILES "
                    "without dftracer, e.g. PROFILES=strace")
        return None

    def wrap(self, launch: Launch) -> Wrapped:
        """DLIO traces itself (pydftracer, switched on by the environment), under the preload library as well with
        pydftracer 2.x (its spawned readers); the kernel runs under the preload library, its trace next to the
        launch, restricted to the data and checkpoint folders."""
        env = {**launch.env, "DFTRACER_ENABLE": "1", "DFTRACER_INC_METADATA": "1"}
        if launch.side == "kernel" or launch.info.get("dlio_preload"):
            # the data folder and the checkpoint folder, as DLIO 2.0.0 hands both to DFTracer (utils/config.py:194-195)
            env.update({"LD_PRELOAD": launch.info["lib"], "DFTRACER_INIT": "PRELOAD",
                        "DFTRACER_LOG_FILE": str(launch.workdir / "trace"),
                        "DFTRACER_DATA_DIR": f"{launch.data}:{checkpoint_dir(launch.workdir)}"})
        if launch.side == "dlio" and launch.info.get("dlio_preload"):
            env.update(UNBUFFERED_TRACE)
            env.update(_no_sudo(launch))
        return Wrapped(list(launch.argv), env)

    def collect(self, done: Done) -> dict:
        """The launch's table as its JSON text (parse_json: the bytes json.dumps gives, without holding the rows as
        dicts), or parsed back under BIG_TABLE bytes (which the run directory writes indented), and its timeline."""
        from profiles.dftracer.collect import parse_json
        text, timeline = parse_json(done.workdir, done.side, done.data)
        return {f"dftracer-timeline-{done.side}.json": timeline,
                f"dftracer-{done.side}.json": text if len(text) >= BIG_TABLE else json.loads(text)}
