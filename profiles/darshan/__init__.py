"""Darshan profile (POSIX, MPI-IO, H5F/H5D counters, DXT segments). Darshan's runtime is not in any registry
reachable from here: an installed one is detected (an explicit prefix, DARSHAN_PREFIX, or darshan-config on PATH),
as HPC sites provide it; without one the profile is skipped with that reason. The package, by job: runtime (the
install, each side's preload, a launch's configuration), log (one log read a record at a time through pydarshan's
cffi backend), parse (a launch's logs into its table, in the harness), checks (the comparison, in validate),
analyses (pydarshan's and drishti's reports of the logs)."""
from __future__ import annotations

import os
from pathlib import Path

from profiles import (
    Context,
    Deferred,
    Done,
    Found,
    Launch,
    LaunchSpec,
    Option,
    Profile,
    Shape,
    Wrapped,
    checkpoint_dir,
    counted,
    exports,
    per_file,
    register,
    touched,
)

# its modules (runtime, parse, checks, analyses, report) are imported when first used: registry() imports none
__getattr__ = exports(__name__, {})


@register
class Darshan(Profile):
    """Training under Darshan (POSIX, MPI-IO, H5F/H5D, DXT), reading in the ranks on both sides: processes forked
    after MPI_Init (DLIO's PyTorch workers) leave no log, so with workers Darshan would see none of DLIO's reads."""
    name = "darshan"
    describes = "POSIX, H5F/H5D and DXT per data and checkpoint file; every other file, classified (Darshan)"
    metadata_label = "Darshan"
    report_sections = Deferred(".report:analyses_section")
    holds_file_tables = True
    order = 40
    checks = Deferred(".checks:check_darshan", ".analyses:analyse")
    options = (Option("--darshan-prefix", "a Darshan install (else DARSHAN_PREFIX, darshan-config)"),)
    covers = {"data_reads": "Darshan", "posix_data": "Darshan (PROFILES=darshan)",
              "traced_other": "Darshan (PROFILES=darshan)",
              "other_files": "Darshan, which sees every file but its default exclusions: PROFILES=darshan",
              "checkpoint_writes": "Darshan (PROFILES=darshan)", "model_reads": "Darshan on a kernel-only run"}
    claims = (("counts.darshan.kernel", counted("model_reads")), ("darshan.per_file", per_file("darshan")),
              ("darshan.explained", touched("traced_other", "other_files")),
              ("darshan.checkpoints", counted("checkpoint_writes")))
    kernel_only = ("counts.darshan.kernel", "darshan.analyses")  # its records of the kernel against the model;
    # Darshan's own reports of the kernel's logs (info only)

    def check_environment(self) -> None:
        from profiles.darshan.analyses import mode
        mode()   # H5DLIO_DARSHAN_ANALYSES (make validate DARSHAN_ANALYSES=): refused before any check

    def available(self, ctx: Context) -> Found:
        from profiles.darshan import runtime
        info = runtime.detect(ctx.options.get("darshan_prefix"))
        return Found(info["available"], info["reason"], info)

    def bad_options(self, ctx: Context) -> str | None:
        """A prefix the user named (--darshan-prefix, DARSHAN_PREFIX, DARSHAN_TS_PREFIX) must be a Darshan install: a
        typo there is refused, not quietly replaced by another install or a skipped profile."""
        for what, prefix in ((f"DARSHAN_PREFIX={ctx.options.get('darshan_prefix')} (--darshan-prefix)",
                              ctx.options.get("darshan_prefix")),
                             (f"DARSHAN_PREFIX={os.environ.get('DARSHAN_PREFIX')}", os.environ.get("DARSHAN_PREFIX")),
                             (f"DARSHAN_TS_PREFIX={os.environ.get('DARSHAN_TS_PREFIX')}",
                              os.environ.get("DARSHAN_TS_PREFIX"))):
            if prefix and not any((Path(prefix) / d / "libdarshan.so").exists() for d in ("lib", "lib64")):
                return f"{what}: no Darshan runtime there (no lib/libdarshan.so)"
        return None

    def prepare(self, ctx: Context, found: Found) -> dict[str, str]:
        from profiles.darshan import runtime
        found.info["sides"] = runtime.plan_sides(found.info, ctx.dlio_venv, ctx.kernel_bin)
        return {k: v["skip"] for k, v in found.info["sides"].items() if "skip" in v}

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        # a checkpoint-only workload reads no data file: its launch compares the checkpoint files
        return [LaunchSpec("darshan", read_threads_0=shape.reads_data)]

    def wrap(self, launch: Launch) -> Wrapped:
        """Preload for the ranks only (libdarshan.so first, then the side's libhdf5); logs into <workdir>/logs (made
        at launch: Darshan writes nothing into a missing folder, a warning only), the configuration (config_text)
        in <workdir>/darshan.conf. DXT on. Every process writes its own log (DARSHAN_ENABLE_NONMPI), so the kernel's
        reader processes, forked before MPI_Init, are logged."""
        from profiles.darshan import runtime
        info, wd = launch.info, launch.workdir
        preload = info.get("sides", {}).get(launch.side, {}).get("preload") or [info["lib"]]
        env = {**launch.env, "LD_PRELOAD": ":".join(preload), "DARSHAN_LOG_DIR_PATH": str(wd / "logs"),
               "DARSHAN_CONFIG_PATH": str(wd / "darshan.conf"), "DARSHAN_MOD_ENABLE": "DXT_POSIX,DXT_MPIIO",
               "DARSHAN_ENABLE_NONMPI": "1"}
        files = runtime.files_per_rank(launch.shape.config, launch.shape.ranks) if launch.shape else 0
        return Wrapped(list(launch.argv), env, dirs=(wd / "logs",),
                       files=((wd / "darshan.conf", runtime.config_text(launch.data, checkpoint_dir(wd), files)),))

    def refuse(self, shape: Shape, data_dir: Path) -> str | None:
        from profiles.darshan import runtime
        return runtime.refuse_records(shape.config, shape.ranks, data_dir)

    def collect(self, done: Done) -> dict:
        from profiles.darshan import parse
        return {f"darshan-{done.side}.json": parse.parse(done.workdir, done.side, done.data)}
