"""Timing profile (no profiler): each side's own measurements of a training launch, repeated REPEAT times
(steps timing, timing-2, ...) -> tables/timing.json, one entry per repetition and side. Its numbers are reported by
validate's runtime.* rows, not judged: it has no checks of its own; its "nodes" (which rank ran on which node, what each
node's local rank 0 reported) are judged by validate's nodes.* rows.

The package: outputs.py reads the programs' outputs into the table (the harness's collect), checks.py recomputes
their metrics (validate's check); here the Profile and the names the callers take from `profiles.timing` (each
imported from its module when first asked for)."""
from __future__ import annotations

from common.rundir import TIMING
from profiles import Deferred, Done, LaunchSpec, Profile, Shape, exports, register

__all__ = ["Timing", "check_metrics", "checkpoints", "mlperf_dlio", "nodes_dlio", "nodes_kernel", "parse"]
__getattr__ = exports(__name__, {".checks": ("check_metrics",),
                                 ".outputs": ("checkpoints", "mlperf_dlio", "nodes_dlio", "nodes_kernel", "parse")})


@register
class Timing(Profile):
    name = "timing"
    order = 10
    builtin = True
    baseline = True   # no profiler: the programs' own times
    checks = Deferred(".checks:check_metrics")
    covers = {"metrics": "the timing profile on both sides (PROFILES=timing)"}
    kernel_only = ("metrics.formula.kernel",)   # the kernel's AU and throughput against DLIO's formula

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        return [LaunchSpec("timing")] + [LaunchSpec(f"timing-{k}") for k in range(2, shape.repeat + 1)]

    def collect(self, done: Done) -> dict:
        from profiles.timing.outputs import parse
        return {TIMING: {"step": done.name, "wall_s": done.wall_s, **parse(done.workdir / "out", done.side)}}

    def merge(self, parts: list[dict]) -> dict:
        """timing.json: per side, one entry per repetition (no table when no timing launch finished)."""
        t: dict = {"dlio": [], "kernel": []}
        for p in parts:
            row = p[TIMING]
            t[row["step"].split(".", 1)[0]].append(row)
        return {TIMING: t} if t["dlio"] or t["kernel"] else {}
