"""(6) Profiler overhead: each profile of the harness (logvfd, dftracer, strace; darshan is not: see measure())
against the baseline profile (Profile.baseline: timing, no profiler), on both sides, with the harness's own argv and
environment for each profile, on unet3d (PyTorch, 4 read threads) at each scale of the preset (tiny; small adds
small), repetitions interleaved (timing, logvfd, dftracer, strace, timing, ...).

Measured: the launch's wall time and the in-program training time (sum of the epochs as each program times
them). The logvfd launches read the other side's dataset (the harness's cross-read; same shapes and sizes)."""
from __future__ import annotations

import shutil

from bench.perf.common import Context, load_snapshot, ratio, summary, wait_for_quiet
from bench.perf.dlio import _exec, _harness, _parse


def measure(ctx: Context) -> dict:
    if ctx.dlio_venv is None or not (ctx.dlio_venv / "bin" / "dlio_benchmark").exists():
        return {"skipped": "no reference DLIO venv"}
    hrun, _Step, execute, dlio_config_dir, load, timing = _harness()
    from profiles import Context, registry
    p = ctx.preset["profilers"]
    scales = p.get("scales") or [p["scale"]]
    venv = ctx.dlio_venv
    res: dict = {"scale": scales[0], "ranks": p["ranks"], "repeat": p["repeat"], "sides": p["sides"],
                 "skipped": {}, "profiles": {}, "scales": {}, "load": {"before": wait_for_quiet(ctx)}}
    pctx = Context(venv, hrun.KERNEL_BIN)
    # the baseline and the builtin profiles (nothing to install), then every other one available here
    profs = [timing.name] + [q.name for q in registry().values() if q.builtin and q is not timing]
    found = {q.name: q.available(pctx) for q in registry().values() if not q.builtin}
    for name, f in found.items():
        if not f.ok:
            res["skipped"][name] = f.reason
        elif in_ranks_only(registry()[name]):
            # its launches read with read_threads=0 (Darshan does not follow DLIO's PyTorch workers), so the baseline's
            # launches at 4 read threads are no baseline for them
            res["skipped"][name] = (f"{name} launches read with read_threads=0 (it does not follow DLIO's PyTorch "
                                    f"workers): no {timing.name} baseline at 4 read threads for them; not measured")
        else:
            profs.append(name)
    for scale in scales:
        res["scales"][scale] = _scale(ctx, p, scale, profs, found, venv)
    res["profiles"] = res["scales"][scales[0]]
    res["load"]["after"] = load_snapshot()
    return res


def in_ranks_only(prof) -> bool:
    """Whether every launch of a profile reads in the ranks (read_threads=0) on a workload with read threads, as the
    bench's (unet3d at 4): the baseline's launches are then no baseline for them."""
    from profiles import Shape
    specs = prof.launches(Shape({"reader": {"read_threads": 4}}))
    return bool(specs) and all(s.read_threads_0 for s in specs)


def _scale(ctx: Context, p: dict, scale: str, profs: list[str], found: dict, venv) -> dict:
    """One scale of unet3d: each profile's launches against timing's, per side, interleaved. The datasets are the dlio
    section's when it generated this scale, else generated here once (plain generate launches, not measured)."""
    hrun, _Step, execute, dlio_config_dir, load, timing = _harness()
    from harness import plan as hplan
    wl = load("unet3d", scale, dlio_config_dir(str(venv / "bin" / "python")))
    wl = wl.with_overrides({"reader": {"read_threads": 4}})
    rd = ctx.work / f"profilers-{scale}"
    if rd.exists():
        shutil.rmtree(rd)
    opt = hplan.Options(ranks=p["ranks"], profiles=profs, repeat=1, timeout=p["timeout"],
                        found={name: found[name].info for name in profs if name in found})
    plan = hplan.build(wl, opt, venv)
    hrun.prepare(rd, plan)
    steps = {s.name: s for s in hplan.launches(rd, plan)}

    def progress(s: str) -> None:
        if "running" not in s:
            ctx.say("  " + s.strip())

    base = ctx.work / f"dlio-{scale}"
    for side in ("dlio", "kernel"):
        (rd / side).mkdir(parents=True, exist_ok=True)
        if (base / side / "data").exists():
            (rd / side / "data").symlink_to(base / side / "data")
        else:
            ctx.say(f"profilers: {scale}: {side} generation (not measured)")
            _exec(execute, steps[f"{side}.generate"], progress)
    recs = {side: {pr: [] for pr in profs} for side in p["sides"]}
    for i in range(p["repeat"]):
        for pr in profs:
            for side in p["sides"]:
                st = steps.get(f"{side}.{pr}")
                if st is None:
                    continue
                ctx.say(f"profilers: {scale}: {side} {pr} {i + 1}/{p['repeat']}")
                recs[side][pr].append(_parse(timing, st, _exec(execute, st, progress)))
    res: dict = {}
    for side in p["sides"]:
        t = recs[side][profs[0]]   # the baseline's
        out = {}
        for pr in profs:
            rs = recs[side][pr]
            if not rs:
                continue
            out[pr] = {"wall_s": summary([r["wall_s"] for r in rs]), "epochs_s": summary([r["epochs_s"] for r in rs])}
            if pr != profs[0]:
                out[pr]["ratio_wall"] = ratio([r["wall_s"] for r in rs], [r["wall_s"] for r in t])
                out[pr]["ratio_epochs"] = ratio([r["epochs_s"] for r in rs], [r["epochs_s"] for r in t])
        res[side] = out
    return res
