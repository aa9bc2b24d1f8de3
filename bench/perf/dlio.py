"""(3) Kernel vs DLIO 2.0.0: wall time per phase (generation, training, evaluation) and end to end, through the
harness's own workload merge and launch plan (the exact argv `make validate` uses), repetitions interleaved
(DLIO, kernel, DLIO, kernel, ...) so both sides see the same load. unet3d's variants (scale, framework, readers),
and one row per other workload of reference-configs/ (`<workload>-<scale>-...`, each on its own dataset); one row
alone: `python -m bench.perf run --sections dlio --dlio-variants <name> --out <folder>`.

What a ratio is made of:
- start-up: DLIO's launch until its first log line (interpreter, torch/tensorflow/hydra/mpi4py imports, config),
  the kernel's launch minus its in-program wall time; and a DLIO launch with ~0 work (train=False,
  generate_data=False: import, initialize, walk the data folder, exit) against a kernel launch reading one batch;
- per epoch: DLIO's epoch time (its per_epoch_stats) against the kernel's observed epoch; the difference per
  sample of a rank is DLIO's per-sample overhead; epoch 1 minus the last epoch is DLIO's data-loader start-up.
A variant the kernel refuses (its --dry-run, e.g. a tf.data shape it does not emulate) runs DLIO alone: the row
reports DLIO's own times and the kernel's reason."""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from bench.perf.common import BenchError, Context, load_snapshot, ratio, summary, wait_for_quiet


def _harness():
    """The harness's pieces a bench launches with, and the profile it times launches under: the baseline (no
    profiler; Profile.baseline)."""
    from harness import run as hrun
    from harness.launch import Step, execute
    from harness.workload import dlio_config_dir, load
    from profiles import baseline
    return hrun, Step, execute, dlio_config_dir, load, baseline()


def log_times(out: Path) -> dict:
    """Timestamps DLIO writes to its dlio.log (local time): first line, generation start/end, last line."""
    f = out / "dlio.log"
    if not f.exists():
        return {}
    first = last = gen0 = gen1 = None
    for ln in f.read_text(errors="replace").splitlines():
        parts = ln.split()
        ts = next((p for p in parts[:3] if len(p) >= 19 and p[4] == "-" and "T" in p), None)
        if ts is None:
            continue
        try:
            t = dt.datetime.strptime(ts[:26], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
        except ValueError:
            continue
        first = t if first is None else first
        last = t
        if "Starting data generation" in ln:
            gen0 = t
        elif "Generation done" in ln:
            gen1 = t
    return {"first": first, "last": last, "generate_s": gen1 - gen0 if gen0 and gen1 else None}


def _exec(execute, step, progress) -> dict:
    if step.workdir.exists():
        shutil.rmtree(step.workdir)
    r = execute(step, progress)
    if r["status"] != "ok":
        raise BenchError(f"{step.name} {r['status']} (rc {r['rc']}, {step.workdir}): {r['detail'][:600]}")
    return r


def _parse(timing, step, res: dict) -> dict:
    """A timed launch's row: its wall time, and the in-program times the baseline profile collects of it."""
    from common.rundir import TIMING
    from profiles import Done
    out = step.workdir / "out"
    done = Done(step.name, step.side, step.profile, step.workdir, res["wall_s"], Path(), Path())
    t = timing.collect(done)[TIMING]
    rec = {"wall_s": res["wall_s"], "train_epoch_s": t["train_epoch_s"], "eval_s": t["eval_s"],
           "epochs_s": sum(t["train_epoch_s"]) + sum(t["eval_s"])}
    if step.side == "dlio":
        lt = log_times(out)
        rec["startup_s"] = lt["first"] - res["started"] if lt.get("first") else None
        rec["teardown_s"] = res["started"] + res["wall_s"] - lt["last"] if lt.get("last") else None
    else:
        rec["startup_s"] = res["wall_s"] - (t["wall_s_in_program"] or 0.0)  # start-up and teardown together
        rec["teardown_s"] = None
    rec["other_s"] = res["wall_s"] - rec["epochs_s"] - (rec["startup_s"] or 0.0) - (rec["teardown_s"] or 0.0)
    return rec


def _variant_overrides(v: dict, files_train: int) -> dict:
    o: dict = {"reader": {"read_threads": v["read_threads"]}}
    if v["framework"] == "tensorflow":
        o["framework"] = "tensorflow"
        o["reader"]["data_loader"] = "tensorflow"
    if v.get("evaluation"):
        o["workflow"] = {"evaluation": True}
        o["reader"]["batch_size_eval"] = 1
        o["evaluation"] = {"eval_time": 0.323, "epochs_between_evals": 1}
    return o


def _name(v: dict) -> str:
    """unet3d's variants by scale, framework, readers (their names of before the other workloads had rows); another
    workload's rows are prefixed with its name (reference-configs/<workload>.yaml)."""
    w = v.get("workload", "unet3d")
    return ("" if w == "unet3d" else f"{w}-") + f"{v['scale']}-{v['framework']}-rt{v['read_threads']}" + \
        ("-eval" if v.get("evaluation") else "")


def _group(v: dict) -> str:
    """The dataset a variant reads: one per workload and scale (unet3d's keyed by scale alone, as before)."""
    w = v.get("workload", "unet3d")
    return v["scale"] if w == "unet3d" else f"{w}-{v['scale']}"


def samples_per_rank(cfg: dict, ranks: int) -> float:
    """Training samples a rank reads per epoch: DLIO's slice of files x samples per file, cut by
    train.total_training_steps x batch when that cap binds (main.py:287 at 2.0.0)."""
    d, r, t = cfg["dataset"], cfg.get("reader", {}), cfg.get("train", {})
    spr = int(d["num_files_train"]) * int(d.get("num_samples_per_file", 1)) / ranks
    cap = int(t.get("total_training_steps", -1))
    return min(spr, cap * int(r.get("batch_size", 1))) if cap > 0 else spr


def _sides_summary(recs: dict, samples_per_rank: float | None) -> dict:
    out: dict = {}
    for side, rs in recs.items():
        if not rs:
            continue
        out[side] = {k: summary([r[k] for r in rs if r.get(k) is not None])
                     for k in ("wall_s", "epochs_s", "startup_s", "teardown_s", "other_s")}
        out[side]["first_epoch_s"] = summary([r["train_epoch_s"][0] for r in rs if r["train_epoch_s"]])
        out[side]["last_epoch_s"] = summary([r["train_epoch_s"][-1] for r in rs if r["train_epoch_s"]])
        out[side]["eval_s"] = summary([sum(r["eval_s"]) for r in rs if r["eval_s"]])
        out[side]["runs"] = rs
    if recs.get("dlio") and recs.get("kernel"):
        d, k = recs["dlio"], recs["kernel"]
        out["ratio"] = {"wall": ratio([r["wall_s"] for r in d], [r["wall_s"] for r in k]),
                        "epochs": ratio([r["epochs_s"] for r in d], [r["epochs_s"] for r in k]),
                        "last_epoch": ratio([r["train_epoch_s"][-1] for r in d], [r["train_epoch_s"][-1] for r in k])}
        if any(r["eval_s"] for r in d) and any(r["eval_s"] for r in k):
            out["ratio"]["eval"] = ratio([sum(r["eval_s"]) for r in d], [sum(r["eval_s"]) for r in k])
        if samples_per_rank:
            diff = [(a["train_epoch_s"][-1] - b["train_epoch_s"][-1]) / samples_per_rank for a, b in zip(d, k,
                                                                                                           strict=False)]
            out["per_sample_overhead_s"] = summary(diff)
            out["dlio_loader_startup_s"] = summary([r["train_epoch_s"][0] - r["train_epoch_s"][-1] for r in d])
    return out


class _Bench:
    """One measurement's fixed parts: the context, its preset, the harness's pieces and the progress printer."""

    def __init__(self, ctx: Context, p: dict):
        self.ctx, self.p, self.venv = ctx, p, ctx.dlio_venv
        self.hrun, self.Step, self.execute, self.dlio_config_dir, self.load, self.timing = _harness()
        from harness import plan, precheck
        self.hplan, self.precheck = plan, precheck.precheck
        self.reps, self.ranks = p["repeat"], p["ranks"]

    def progress(self, s: str) -> None:
        if "running" not in s:
            self.ctx.say("  " + s.strip())

    def run(self, step) -> dict:
        return _exec(self.execute, step, self.progress)


def _dataset(b: _Bench, key: str, wname: str, scale: str, workloads):
    """A group's workload (evaluation files added when one of its variants evaluates), its launch plan in
    <work>/dlio-<key>, its base folder and the number of training files."""
    wl = b.load(wname, scale, workloads)
    nf = int(wl.config["dataset"]["num_files_train"])
    has_eval = any(v.get("evaluation") and _group(v) == key for v in b.p["variants"])
    if has_eval:  # evaluation files generated once for every variant of this scale (read only by -eval);
        # a multiple of the ranks: otherwise DLIO 2.0.0's last rank raises IndexError and the others hang
        # and at least 4 per rank: DLIO 2.0.0 builds its TensorFlow sample map for the evaluation files even
        # when evaluation is off, and divides by samples-per-rank // read_threads (ZeroDivisionError below 4)
        wl = wl.with_overrides({"dataset": {"num_files_eval": max(nf // 4 // b.ranks, 4) * b.ranks}})
    base = b.ctx.work / f"dlio-{key}"
    opt = b.hplan.Options(ranks=b.ranks, profiles=[b.timing.name], repeat=1, timeout=b.p["timeout"])
    plan = b.hplan.build(wl, opt, b.venv)
    b.hrun.prepare(base, plan)
    steps = {s.name: s for s in b.hplan.launches(base, plan)}
    return wl, steps, base, nf


def _generations(b: _Bench, key: str, steps: dict, base: Path) -> dict:
    """Each side's generation, repeated (interleaved): launch wall and in-program seconds."""
    gens: dict = {"dlio": [], "kernel": []}
    for i in range(b.p["gen_repeat"]):
        for side in ("dlio", "kernel"):
            b.ctx.say(f"dlio: {key}: {side} generation {i + 1}/{b.p['gen_repeat']}")
            data = base / side / "data"
            if data.exists():
                shutil.rmtree(data)
            st = steps[f"{side}.generate"]
            r = b.run(st)
            if side == "dlio":
                g = log_times(st.workdir / "out").get("generate_s")
            else:
                g = json.loads((st.workdir / "out" / "output.json").read_text())["generate"]["seconds"]
            gens[side].append({"wall_s": r["wall_s"], "in_program_s": g})
    return gens


def _scale_row(wname: str, scale: str, nf: int, wl, gens: dict) -> dict:
    sc = {"workload": wname, "scale": scale, "files_train": nf,
          "files_eval": wl.config["dataset"].get("num_files_eval", 0),
          "samples_per_file": int(wl.config["dataset"].get("num_samples_per_file", 1)),
          "record_length": wl.config["dataset"]["record_length"],
          "generate": {side: {"wall_s": summary([g["wall_s"] for g in gs]),
                              "in_program_s": summary([g["in_program_s"] for g in gs if g["in_program_s"]])}
                       for side, gs in gens.items()}}
    sc["generate"]["ratio_wall"] = ratio([g["wall_s"] for g in gens["dlio"]], [g["wall_s"] for g in gens["kernel"]])
    sc["generate"]["ratio_in_program"] = ratio([g["in_program_s"] for g in gens["dlio"]],
                                               [g["in_program_s"] for g in gens["kernel"]])
    return sc


def _empty_launch(b: _Bench, scale: str, steps: dict, base: Path) -> dict:
    """Start-up: a launch with ~0 work on each side, repeated (interleaved)."""
    emp: dict = {"dlio": [], "kernel": []}
    for i in range(b.p["empty_repeat"]):
        for side in ("dlio", "kernel"):
            b.ctx.say(f"dlio: {scale}: {side} launch with ~0 work {i + 1}/{b.p['empty_repeat']}")
            st = steps[f"{side}.{b.timing.name}"]
            if side == "dlio":
                argv = [a.replace("workflow.train=True", "workflow.train=False") for a in st.argv]
            else:
                argv = st.argv + ["--set", "epochs=1", "--set", "total-training-steps=1", "--set",
                                  "computation-time=0", "--set", "read-threads=0"]
            wd = base / side / "empty"
            e = b.run(b.Step(f"{side}.empty", side, "empty", argv, {}, wd, wd / "ranks", b.p["timeout"]))
            emp[side].append(e["wall_s"])
    return {"scale": scale, "dlio_wall_s": summary(emp["dlio"]),
            "kernel_wall_s": summary(emp["kernel"]), "ratio": ratio(emp["dlio"], emp["kernel"]),
            "what": "DLIO: train=False, generate_data=False (imports, initialize, walk the "
                    "data folder); kernel: one training step, no compute, read-threads 0"}


def _variant(b: _Bench, v: dict, wl, wname: str, scale: str, nf: int, base: Path, gens: dict) -> dict:
    """One variant's training launches on the group's dataset (both sides interleaved, or DLIO alone when the kernel
    refuses it): its row, or {"error": ...} when a launch failed."""
    name = _name(v)
    wv = wl.with_overrides(_variant_overrides(v, nf))
    rd = b.ctx.work / f"dlio-{name}"
    vreps = int(v.get("repeat", b.reps))
    optv = b.hplan.Options(ranks=b.ranks, profiles=[b.timing.name], repeat=vreps, timeout=b.p["timeout"])
    plan = b.hplan.build(wv, optv, b.venv)
    b.hrun.prepare(rd, plan)
    for side in ("dlio", "kernel"):
        (rd / side).mkdir(parents=True, exist_ok=True)
        link = rd / side / "data"
        if not link.exists():
            link.symlink_to(base / side / "data")
    # the kernel side runs unless the kernel refuses the variant (its --dry-run, before any launch): e.g. a
    # tf.data shape the TF emulation refuses; the row then says why and reports DLIO's own times
    refused = b.precheck(plan, dlio_side=False)
    sides = ["dlio"] if refused else ["dlio", "kernel"]
    vsteps = {s.name: s for s in b.hplan.launches(rd, plan)}
    recs: dict = {s: [] for s in sides}
    load0 = load_snapshot()["load1"]
    try:
        for i in range(vreps):
            for side in sides:
                nm = f"{side}.{b.timing.name}" + (f"-{i + 1}" if i else "")
                b.ctx.say(f"dlio: {name}: {side} training {i + 1}/{vreps}")
                st = vsteps[nm]
                recs[side].append(_parse(b.timing, st, b.run(st)))
    except BenchError as e:  # one variant failing does not lose the others
        b.ctx.say(f"dlio: {name} FAILED: {str(e)[:400]}")
        return {"error": str(e)[:3000], "scale": scale, "framework": v["framework"],
                "read_threads": v["read_threads"]}
    spr = samples_per_rank(wv.config, b.ranks)
    out = _sides_summary(recs, spr if "kernel" in sides else None)
    out.update({"workload": wname, "repeat": vreps, "scale": scale, "framework": v["framework"],
                "read_threads": v["read_threads"],
                "evaluation": bool(v.get("evaluation")), "samples_per_rank_per_epoch": spr,
                "load_1min": [load0, load_snapshot()["load1"]],
                "kernel_side": "run" if "kernel" in sides else
                f"not run: the kernel refuses it ({refused[:300]}); DLIO's own times reported"})
    if "kernel" in sides and v["read_threads"] == b.p["reference_read_threads"] and not v.get("evaluation"):
        e2e = {s: [a["wall_s"] + g for a, g in zip(recs[s], [x["wall_s"] for x in gens[s]] * vreps,
                                                     strict=False)] for s in sides}
        out["end_to_end_wall_s"] = {s: summary(e2e[s]) for s in sides}
        out["end_to_end_ratio"] = ratio(e2e["dlio"], e2e["kernel"])
    return out


def measure(ctx: Context) -> dict:
    if ctx.dlio_venv is None or not (ctx.dlio_venv / "bin" / "dlio_benchmark").exists():
        return {"skipped": f"no reference DLIO venv ({ctx.dlio_venv}): run `make dlio-venv`"}
    p = ctx.preset["dlio"]
    if ctx.only_variants:  # re-measure some variants (merged into an earlier dlio section by __main__)
        p = {**p, "variants": [v for v in p["variants"] if _name(v) in ctx.only_variants], "gen_repeat": 1,
             "empty_repeat": p["empty_repeat"] if "empty" in ctx.only_variants else 0}
    b = _Bench(ctx, p)
    workloads = b.dlio_config_dir(str(b.venv / "bin" / "python"))
    res: dict = {"ranks": b.ranks, "repeat": b.reps, "workload": "unet3d", "scales": {}, "variants": {},
                 "load": {"before": wait_for_quiet(ctx)}}
    groups = {_group(v): (v.get("workload", "unet3d"), v["scale"]) for v in p["variants"]}
    for key, (wname, scale) in sorted(groups.items(), key=lambda g: (g[1][0] != "unet3d", g[1][0],
                                                                      ["tiny", "small", "full"].index(g[1][1]))):
        wl, steps, base, nf = _dataset(b, key, wname, scale, workloads)
        gens = _generations(b, key, steps, base)
        sc = _scale_row(wname, scale, nf, wl, gens)
        if key == p["empty_scale"] and p["empty_repeat"] > 0:  # start-up: a launch with ~0 work on each side
            res["empty_launch"] = _empty_launch(b, scale, steps, base)
        res["scales"][key] = sc
        for v in [v for v in p["variants"] if _group(v) == key]:
            res["variants"][_name(v)] = _variant(b, v, wl, wname, scale, nf, base, gens)
    res["load"]["after"] = load_snapshot()
    return res
