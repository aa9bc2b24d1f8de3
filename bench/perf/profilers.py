"""(6) Profiler overhead: each profile of the harness (logvfd, dftracer; darshan is not: see measure())
against `timing` (no profiler), on both sides, with the harness's own argv and environment for each profile, on
tiny unet3d (PyTorch, 4 read threads), repetitions interleaved (timing, logvfd, dftracer, timing, ...).

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
    venv = ctx.dlio_venv
    base = ctx.work / f"dlio-{p['scale']}"
    if not (base / "dlio" / "data").exists() or not (base / "kernel" / "data").exists():
        return {"skipped": f"the dlio section did not generate {p['scale']} datasets"}
    wl = load("unet3d", p["scale"], dlio_config_dir(str(venv / "bin" / "python")))
    wl = wl.with_overrides({"reader": {"read_threads": 4}})
    profs = ["timing", "logvfd"]
    res: dict = {"scale": p["scale"], "ranks": p["ranks"], "repeat": p["repeat"], "sides": p["sides"],
                 "skipped": {}, "profiles": {}, "load": {"before": wait_for_quiet(ctx)}}
    reg, pctx = registry(), Context(venv, hrun.KERNEL_BIN)
    found = {name: reg[name].available(pctx) for name in ("dftracer", "darshan")}
    if found["dftracer"].ok:
        profs.append("dftracer")
    else:
        res["skipped"]["dftracer"] = found["dftracer"].reason
    # not "darshan" here even when installed: its launches read with read_threads=0 (Darshan does not follow DLIO's
    # PyTorch workers), so the timing launches at 4 read threads are no baseline for them
    res["skipped"]["darshan"] = found["darshan"].reason if not found["darshan"].ok else (
        "Darshan launches read with read_threads=0 (Darshan does not follow DLIO's PyTorch workers): no timing "
        "baseline at 4 read threads for them; not measured")
    rd = ctx.work / "profilers"
    if rd.exists():
        shutil.rmtree(rd)
    opt = hrun.Options(ranks=p["ranks"], profiles=profs, repeat=1, timeout=p["timeout"],
                       found={name: found[name].info for name in profs if name in found})
    hrun.prepare(rd, wl, opt, venv)
    for side in ("dlio", "kernel"):
        (rd / side).mkdir(parents=True, exist_ok=True)
        (rd / side / "data").symlink_to(base / side / "data")
    steps = {s.name: s for s in hrun.plan(rd, wl, opt, venv)}
    recs = {side: {pr: [] for pr in profs} for side in p["sides"]}

    def progress(s: str) -> None:
        if "running" not in s:
            ctx.say("  " + s.strip())

    for i in range(p["repeat"]):
        for pr in profs:
            for side in p["sides"]:
                st = steps.get(f"{side}.{pr}")
                if st is None:
                    continue
                ctx.say(f"profilers: {side} {pr} {i + 1}/{p['repeat']}")
                recs[side][pr].append(_parse(timing, st, _exec(execute, st, progress)))
    for side in p["sides"]:
        t = recs[side]["timing"]
        out = {}
        for pr in profs:
            rs = recs[side][pr]
            if not rs:
                continue
            out[pr] = {"wall_s": summary([r["wall_s"] for r in rs]), "epochs_s": summary([r["epochs_s"] for r in rs])}
            if pr != "timing":
                out[pr]["ratio_wall"] = ratio([r["wall_s"] for r in rs], [r["wall_s"] for r in t])
                out[pr]["ratio_epochs"] = ratio([r["epochs_s"] for r in rs], [r["epochs_s"] for r in t])
        res["profiles"][side] = out
    res["load"]["after"] = load_snapshot()
    return res
