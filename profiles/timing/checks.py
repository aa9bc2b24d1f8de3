"""The timing profile's check (run by validate): metrics.formula.<side> and metrics.au from tables/timing.json."""
from __future__ import annotations

from common.mapping import dotted_get
from common.rundir import TIMING
from profiles import FAIL, PASS, SKIP, checkpoint_only, result
from profiles import dlio_metrics as dm
from profiles.compute import _bounds as cbounds

# --- check_metrics: each side's AU and throughput recomputed with DLIO's formula (profiles/dlio_metrics.py) ---------
# DLIO's block stamps are utcnow() strings written within a few ms of the time() calls its formula uses (start_block
# and end_block, 2.0.0 utils/statscounter.py:255-284, 3.x :331-354): a recomputed block value may move by STAMP_S of
# span; the kernel prints %.9g (REL); DLIO's summary.json holds repr floats (REL_DLIO).
STAMP_S, REL, REL_DLIO = 0.01, 1e-6, 1e-9


def _near(a: float | None, b: float | None, rel: float) -> bool:
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-9


def _within(got: float, values: list[float]) -> bool:
    lo, hi = min(values), max(values)
    return lo - REL_DLIO * abs(lo) - 1e-9 <= got <= hi + REL_DLIO * abs(hi) + 1e-9


def _expected_steps(cfg: dict, ranks: int) -> int:
    """DLIO's steps per epoch (statscounter.py 3.x :73-83): total_training_steps, else the files' samples / batch /
    ranks."""
    total = int(dotted_get(cfg, "train.total_training_steps", 0) or 0)
    per = int(dotted_get(cfg, "dataset.num_samples_per_file", 1) or 1) * int(dotted_get(cfg, "dataset.num_files_train",
                                                                                            0) or 0)
    return total if total > 0 else per // max(int(dotted_get(cfg, "reader.batch_size", 1) or 1) * ranks, 1)


def _dlio_block(formula: str, b: dict, batch: int, win: tuple) -> str | None:
    """A DLIO block's AU and throughput against its formula: with its stamps, both within STAMP_S of span; without
    (2.0.0's ranks > 0), the span its throughput implies, and the AU from it."""
    outside, wc, ws = win
    n, span = len(b["proc"]), b["span_s"]
    if span is None:
        if b["throughput"] <= 0:
            return None
        span = n * batch / b["throughput"] if formula == "2.0.0" else ws * batch / b["throughput"] + outside
        au, _ = dm.block(formula, n, span, outside, wc, ws, batch)
        return None if _near(au, b["au"], REL) else f"AU {b['au']:.6g}% where its formula gives {au:.6g}%"
    got = [dm.block(formula, n, span + d, outside, wc, ws, batch) for d in (-STAMP_S, STAMP_S)]
    if not _within(b["au"], [g[0] for g in got]):
        return f"AU {b['au']:.6g}% outside [{min(g[0] for g in got):.6g}, {max(g[0] for g in got):.6g}]%"
    if not _within(b["throughput"], [g[1] for g in got]):
        return f"throughput {b['throughput']:.6g} outside [{min(g[1] for g in got):.6g}, " \
            f"{max(g[1] for g in got):.6g}] samples/s"
    return None


def _judge_dlio(f: dict, formula: str, cfg: dict) -> list[str]:
    """What of DLIO's reported numbers its formula does not give back from its own per-step times."""
    batch = int(dotted_get(cfg, "reader.batch_size", 1) or 1)
    es = int(dotted_get(cfg, "output.metric.exclude_start_steps", 1) or 0)
    ee = int(dotted_get(cfg, "output.metric.exclude_end_steps", 0) or 0)
    steps = _expected_steps(cfg, len(f["ranks"]))
    bad, epochs = [], []
    for e in sorted({e for r in f["ranks"] for e in r}, key=int):
        per_rank = []
        for rank, r in enumerate(f["ranks"]):
            blocks = r.get(e, {})
            for name, b in blocks.items():
                why = _dlio_block(formula, b, batch, dm.window(formula, b["compute"], b["proc"], steps, es, ee))
                bad += [f"rank {rank} epoch {e} {name}: {why}"] * bool(why)
            per_rank.append(dm.epoch_of_rank([(b["au"], b["throughput"], len(b["proc"])) for b in blocks.values()]))
        epochs.append(dm.epoch_of_ranks(per_rank))
    m = f["metric"]
    for i, (au, thr) in enumerate(epochs):
        if not _near(au, (m.get("train_au_percentage") or [None] * (i + 1))[i], REL_DLIO) or not _near(
                thr, (m.get("train_throughput_samples_per_second") or [None] * (i + 1))[i], REL_DLIO):
            bad.append(f"epoch {i + 1}: the ranks' mean AU {au:.6g}% and summed throughput {thr:.6g} are not "
                       "summary.json's")
    if epochs:
        rl = float(dotted_get(cfg, "dataset.record_length_bytes", dotted_get(cfg, "dataset.record_length", 0)) or 0)
        for k, v in dm.run_means(epochs, rl).items():
            if not _near(v, m.get(k), REL_DLIO):
                bad.append(f"summary.json {k} {m.get(k)} where the epochs give {v:.9g}")
    return bad


def _kernel_compute(i: dict, ct: float, sd: float) -> str | None:
    """A rank's epoch: the compute of its first step and of the others against the asked computation_time (a sleep
    returns late, never early: profiles/compute.py's bounds); None when within them."""
    n = int(i["steps"])
    spread = (lambda k: 4 * sd * k ** 0.5) if sd else (lambda k: 0.0)
    parts = [("the steps after the first", i["compute_after_first_s"], n - 1)]
    if "compute_s" in i and n > 0:
        parts.insert(0, ("the first step", i["compute_s"] - i["compute_after_first_s"], 1))
    for what, got, k in parts:
        lo, hi = cbounds(ct * k, k, spread(k))
        if k > 0 and not lo <= got <= hi:
            return f"{what}: compute {got:.4f} s where {k} x {ct} s asked allows [{lo:.4f}, {hi:.4f}] s"
    return None


def _kernel_epochs(inputs: list[dict], formula: str, batch: int) -> list[tuple[float, float]]:
    """The kernel's epochs recomputed with DLIO's formula from its inputs (one block per epoch, steps 2.. the
    window)."""
    out = []
    for e in sorted({i["epoch"] for i in inputs}):
        out.append(dm.epoch_of_ranks([dm.block(formula, i["steps"], i["span_s"], i["first_step_s"],
                                               i["compute_after_first_s"], i["steps"] - 1, batch)
                                      for i in inputs if i["epoch"] == e]))
    return out


def _judge_kernel(entry: dict, cfg: dict, release: str) -> list[str]:
    """What of the kernel's reported AU and throughput DLIO's formula does not give back from its inputs: its train
    block by 2.0.0's (what it names DLIO's metrics), its mlperf block by 3.x's; each step's compute as asked."""
    f, bad = entry["formula"], []
    if dotted_get(cfg, "workflow.checkpoint") and int(dotted_get(cfg, "checkpoint.steps_between_checkpoints", -1)
                                                     or -1) > 0:
        bad.append("the workload checkpoints between steps: DLIO computes one AU per block between checkpoints, "
                   "weighted by steps (2.0.0 statscounter.py:206-217, :269-271), the kernel one per epoch")
    batch, rl = int(f["batch_size"]), float(f["record_length"])
    epochs = _kernel_epochs(f["inputs"], "2.0.0", batch)
    for got, (au, thr) in zip(f["epochs"], epochs, strict=False):
        if not _near(got["au_percent"], au, REL) or not _near(got["throughput_samples_per_s"], thr, REL):
            bad.append(f"epoch {got['epoch']}: AU {got['au_percent']}%, {got['throughput_samples_per_s']} samples/s "
                       f"where DLIO 2.0.0's formula gives {au:.9g}%, {thr:.9g} samples/s")
    want = dm.run_means(epochs, rl) if epochs else {}
    for k, mine in (("train_au_mean_percentage", "au_mean_percent"),
                    ("train_throughput_mean_samples_per_second", "throughput_mean_samples_per_s"),
                    ("train_io_mean_MB_per_second", "dlio_io_mean_MB_per_s")):
        if want and not _near(f.get(mine), want[k], REL):
            bad.append(f"{mine} {f.get(mine)} where the epochs give {want[k]:.9g}")
    ml = entry.get("mlperf") or {}
    if ml.get("inputs") and dm.formula_of(release) == "3.x":
        es = dotted_get(cfg, "output.metric.exclude_start_steps", 1)
        ee = dotted_get(cfg, "output.metric.exclude_end_steps", 0)
        if (int(es or 0), int(ee or 0)) != (1, 0):
            bad.append(f"mlperf: the workload's metric window excludes {es} first and {ee} last steps; the kernel's "
                       "is fixed at steps 2..")
        w = dm.run_means(_kernel_epochs(ml["inputs"], "3.x", int(ml["batch_size"])), float(ml["record_length"]))
        bad += [f"mlperf {k} {ml.get(k)} where DLIO 3.x's formula gives {v:.9g}" for k, v in w.items()
                if not _near(ml.get(k), v, REL)]
    ct = float(dotted_get(cfg, "train.computation_time", 0) or 0)
    sd = float(dotted_get(cfg, "train.computation_time_stdev", 0) or 0)
    for i in f["inputs"] if ct > 0 else []:
        why = _kernel_compute(i, ct, sd)
        bad += [f"rank {i['rank']} epoch {i['epoch']}: {why}"] * bool(why)
    return bad


def _overhead_per_step(entry: dict, side: str) -> float | None:
    """Seconds per step of the AU window outside the emulated compute (the window's time less its compute, over its
    steps), over ranks and blocks, from a side's inputs."""
    f, t, n = entry.get("formula") or {}, 0.0, 0
    if side == "kernel":
        for i in f.get("inputs", []):
            t += i["span_s"] - i["first_step_s"] - i["compute_after_first_s"]
            n += i["steps"] - 1
    for r in f.get("ranks", []) if side == "dlio" else []:
        for b in (b for blocks in r.values() for b in blocks.values() if b["span_s"] is not None):
            t += b["span_s"] - b["proc"][0] - sum(b["compute"][1:]) if b["proc"] else 0.0
            n += max(len(b["compute"]) - 1, 0)
    return t / n if n > 0 else None


def _au_row(t: dict, release: str) -> dict:
    """Reported, not judged: both sides' AU, their ratio and the time per step outside the compute that explains it."""
    d, k = t.get("dlio") or [], t.get("kernel") or []
    three = dm.formula_of(release) == "3.x"
    kau = [(e.get("mlperf") or {}).get("train_au_mean_percentage") if three else e.get("au_percent") for e in k]
    dau = [e.get("au_percent") for e in d]
    if not d or not k or None in dau + kau:
        return result("metrics.au", SKIP, detail="no AU of both sides (the timing profile or a side's launch "
                      "missing)", required=False)
    da, ka = sum(dau) / len(dau), sum(kau) / len(kau)
    kthr = [(e.get("mlperf") or {}).get("train_throughput_mean_samples_per_second") if three else
            e.get("throughput_samples_per_s") for e in k]
    dthr = [e.get("throughput_samples_per_s") for e in d]
    thr = f"; throughput DLIO {sum(dthr) / len(dthr):.3f}, kernel {sum(kthr) / len(kthr):.3f} samples/s" \
        if None not in dthr + kthr else ""
    od, ok = _overhead_per_step(d[0], "dlio"), _overhead_per_step(k[0], "kernel")
    per = f"; per step of the AU window outside the emulated compute: DLIO {od * 1000:.1f} ms, kernel " \
        f"{ok * 1000:.2f} ms" if od is not None and ok is not None else ""
    return result("metrics.au", PASS, round(da, 3), round(ka, 3), f"AU DLIO {da:.2f}%, kernel {ka:.2f}% "
                  f"(kernel/DLIO {ka / da if da else float('inf'):.2f}x){thr}{per}. With the compute per step equal "
                  "(compute.rank<N>), the kernel's AU is what DLIO's would be without the time its Python loader "
                  "(workers, their start and shutdown) and interpreter take in the AU window; at small scale that "
                  "time dominates DLIO's (reported, not judged)", required=False)


def check_metrics(run) -> list[dict]:
    """metrics.formula.<side>: the AU, throughput and MB/s each side reported, recomputed with DLIO's formula
    (profiles/dlio_metrics.py: DLIO 2.0.0 utils/statscounter.py:139-154, :206-217, :327-337; 3.x :190-205,
    :266-277, :436-470) from the per-step times the side recorded; metrics.au: both AUs side by side, reported."""
    t = run.table(TIMING)
    if not t or (not t.get("dlio") and not t.get("kernel")):
        return [result("metrics.formula", SKIP, detail="the timing profile did not run: no AU or throughput to "
                       "recompute")]
    if checkpoint_only(run.cfg):
        return [result("metrics.formula", SKIP, detail="no training epoch (checkpoint-only workload)")]
    return [_formula_row(run, t.get("dlio") or [], "dlio"), _formula_row(run, t.get("kernel") or [], "kernel"),
            _au_row(t, run.release)]


def _formula_row(run, entries: list[dict], side: str) -> dict:
    name, formula = f"metrics.formula.{side}", dm.formula_of(run.release)
    if side == "dlio" and formula is None:
        return result(name, SKIP, detail=f"DLIO {run.release}: its statscounter is not read here (2.0.0's and "
                      "3.x's are): its AU and throughput were not recomputed")
    have = [e for e in entries if e.get("formula")]
    if not have:
        return result(name, SKIP, detail=f"timing.json holds no per-step inputs of the {side} side" + (
            " (DLIO's <rank>_output.json compute and proc per step; a run collected before this check, or a failed "
            "launch)" if side == "dlio" else " (output.json train.inputs; a kernel before this check, or a failed "
            "launch)"))
    bad = [f"{e['step']}: {b}" for e in have for b in (
        _judge_dlio(e["formula"], formula, run.cfg) if side == "dlio" else _judge_kernel(e, run.cfg, run.release))]
    au = [e["au_percent"] for e in have]
    thr = [e["throughput_samples_per_s"] for e in have]
    what = (f"DLIO {formula}'s AU and throughput recomputed with its own formula from each rank's per-step compute "
            "and load+compute times and each block's span (rank stamps, within 10 ms; else the span its throughput "
            "implies)") if side == "dlio" else ("the kernel's AU and throughput recomputed with DLIO 2.0.0's formula "
                                                 "(its mlperf block: 3.x's) from each rank's steps, span, first step "
                                                 "and compute, and each step's compute against the asked time")
    got = {"au_percent": round(sum(au) / len(au), 4), "throughput_samples_per_s": round(sum(thr) / len(thr), 4)}
    # a DLIO release whose statscounter is not read here: the kernel is held to 2.0.0's formula, which that DLIO
    # may not use, so the class is not claimed
    known = {"compared": ["metrics"]} if formula else {}
    note = "" if formula else f"; DLIO {run.release}'s own formula is not read here: 2.0.0's stands in, not compared"
    if bad:
        return result(name, FAIL, "DLIO's formula", got, f"{len(bad)} difference(s): {'; '.join(bad[:3])}{note}") \
            | known
    return result(name, PASS, "DLIO's formula", got, f"{what}: every block, epoch and mean as reported "
                  f"(AU {got['au_percent']:.3f}%, {got['throughput_samples_per_s']:.3f} samples/s; {len(have)} "
                  f"repetition(s)){note}") | known
