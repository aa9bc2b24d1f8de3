"""The emulated computation, judged (issue 35): per rank, the compute regions of both sides' DFTracer traces
(`dftracer-timeline-<side>.json`: DLIO's TorchFramework.compute / TFFramework.compute region around its sleep of
computation_time or eval_time, framework/torch_framework.py:94-96, tf_framework.py:88-90, called at main.py:235 and
:271; the kernel's "compute" region around its emulation, bench/src/run.c run_step) of at least MIN_S, paired in time
order: the same number on both sides, and each kernel region as long as the workload asks for that step (the time
of the pair's DLIO region tells a training step from an evaluation step) - never shorter, and longer only by what a
loaded machine adds to a sleep. A sleep returns late, never early: DLIO's own regions overran 0.224 s by up to 68 ms
at a load of 10 here, so the bound above is loose (HIGH, SLACK_S) and the bound below tight (LOW, MIN_S). A kernel
that skips, shortens or doubles a step's compute moves the AU and throughput it reports: this row fails it.

With `computation_time_stdev` (or `eval_time_stdev`) set, each side draws its own times (the kernel from its own
seeded stream, DLIO from numpy's global one): the kernel's total per rank is judged against the asked total, within
four standard deviations of the sum's spread. A lane the timeline sampled (over LANE_EVENTS events) keeps only its
counts and seconds: its total against DLIO's, looser, said in the detail."""
from __future__ import annotations

from common.mapping import dotted_get
from profiles import FAIL, PASS, SKIP, compute_asks, result

# a kernel region may be shorter than asked by LOW (timer granularity) and longer by HIGH of it plus SLACK_S (a loaded
# machine's late wake-up): half the time fails, twice the time fails, a 70 ms overrun of a 0.2 s step passes
LOW, HIGH, SLACK_S = 0.01, 0.5, 0.05
# a region shorter than this computes nothing: DLIO 2.0.0 makes none for an evaluation step when eval_time is 0
# (main.py:229-235) while the kernel's is empty, and a skipped compute leaves an empty region; both are left out, so
# a skipped step is one region fewer
MIN_S = 0.001


def _regions(table: dict | None) -> dict[int, dict]:
    """rank -> {"d": [durations in time order] or None when sampled, "n": count, "s": seconds}"""
    out: dict[int, dict] = {}
    for lane in (table or {}).get("lanes", []):
        r = out.setdefault(int(lane["rank"]), {"ev": [], "n": 0, "s": 0.0, "sampled": False})
        if "sampled" in lane:
            r["sampled"] = True
            r["n"] += int(lane["sampled"]["counts"].get("compute", 0))
            r["s"] += float(lane["sampled"]["seconds"].get("compute", 0.0))
            continue
        ev = [(e["t"], e["d"]) for e in lane["events"] if e["kind"] == "compute" and e["d"] >= MIN_S]
        r["ev"] += ev
        r["n"] += len(ev)
        r["s"] += sum(d for _, d in ev)
    return {k: {"d": None if v["sampled"] else [d for _, d in sorted(v["ev"])], "n": v["n"], "s": v["s"]}
            for k, v in out.items()}


def _jitter(cfg: dict) -> float:
    return max(float(dotted_get(cfg, "train.computation_time_stdev", 0) or 0),
               float(dotted_get(cfg, "evaluation.eval_time_stdev", 0) or 0))


def _wanted(dlio_s: float, asks: list[float]) -> float:
    """what the step of a DLIO region asked for: the largest ask its (never early) sleep covers"""
    return max((a for a in asks if a <= dlio_s * (1 + LOW) + MIN_S), default=asks[0])


def _rank_row(rank: int, d: dict, k: dict, sd: float, asks: list[float]) -> dict:
    """the rank's row; it declares the class it compared (validate/checks.py CLASSES) when DLIO made a region"""
    return _judge(rank, d, k, sd, asks) | {"compared": ["compute"] * bool(d["n"])}


def _bounds(want: float, n: int, spread: float = 0.0) -> tuple[float, float]:
    return want * (1 - LOW) - MIN_S * n - spread, want * (1 + HIGH) + SLACK_S * n + spread


def _judge(rank: int, d: dict, k: dict, sd: float, asks: list[float]) -> dict:
    name = f"compute.rank{rank}"
    want = {"regions": d["n"], "seconds": round(d["s"], 3)}
    got = {"regions": k["n"], "seconds": round(k["s"], 3)}
    if d["n"] == 0 < k["n"]:  # the workload asks for computation: DLIO computed, its trace of the rank lacks it
        return result(name, SKIP, want, got, f"DLIO's trace of rank {rank} holds no compute region, the kernel's "
                      f"{k['n']}: DLIO's rank wrote its trace only in part (measured on DLIO 3.x: rank 0's app trace "
                      "ends at its loader's start-up); this rank's computation was not compared")
    if d["n"] != k["n"]:
        return result(name, FAIL, want, got, f"DLIO made {d['n']} compute regions, the kernel {k['n']}")
    if d["d"] is None or k["d"] is None:
        lo, hi = d["s"] / (1 + HIGH) - MIN_S * d["n"], d["s"] * (1 + HIGH) + SLACK_S * d["n"]
        return result(name, PASS if lo <= k["s"] <= hi else FAIL, want, got, f"{d['n']} compute regions; a sampled "
                      f"timeline lane: totals compared, DLIO {d['s']:.3f} s, kernel {k['s']:.3f} s, within "
                      f"[{lo:.3f}, {hi:.3f}] s")
    wanted = [_wanted(a, asks) for a in d["d"]]
    if sd:
        lo, hi = _bounds(sum(wanted), d["n"], 4 * sd * d["n"] ** 0.5)
        return result(name, PASS if lo <= k["s"] <= hi else FAIL, want, got, f"{d['n']} compute regions; drawn "
                      f"times (stdev {sd} s): the kernel's total {k['s']:.3f} s against the asked {sum(wanted):.3f} s "
                      f"within [{lo:.3f}, {hi:.3f}] s (DLIO {d['s']:.3f} s)")
    for i, (w, b) in enumerate(zip(wanted, k["d"], strict=True)):
        lo, hi = _bounds(w, 1)
        if not lo <= b <= hi:
            return result(name, FAIL, want, got, f"compute region {i + 1} of {d['n']}: the step asks {w} s, the kernel "
                          f"took {b:.4f} s (allowed [{lo:.4f}, {hi:.4f}] s; DLIO {d['d'][i]:.4f} s)")
    over = max(a - w for a, w in zip(d["d"], wanted, strict=True))
    return result(name, PASS, want, got, f"{d['n']} compute regions as DLIO's, each as long as its step asks "
                  f"({', '.join(f'{a} s' for a in asks)}): kernel {k['s']:.3f} s, DLIO {d['s']:.3f} s (DLIO's largest "
                  f"overrun {over * 1000:.0f} ms)")


def check_compute(run) -> list[dict]:
    if not compute_asks(run.cfg):
        return [result("compute", SKIP, detail="the workload asks for no computation (computation_time and eval_time "
                       "0): nothing to compare")]
    d, k = run.table("dftracer-timeline-dlio.json"), run.table("dftracer-timeline-kernel.json")
    if not d or not k:
        return [result("compute", SKIP, detail="no DFTracer timeline of both sides (the dftracer profile did not run, "
                       "or a side's launch failed): the emulated computation was not compared")]
    dr, kr = _regions(d), _regions(k)
    if not any(v["n"] for v in dr.values()):
        return [result("compute", SKIP, detail="DLIO's trace holds no compute region (a DLIO whose compute is not "
                       "traced): the emulated computation was not compared")]
    sd, asks = _jitter(run.cfg), compute_asks(run.cfg)
    empty = {"d": [], "n": 0, "s": 0.0}
    return [_rank_row(r, dr.get(r, empty), kr.get(r, empty), sd, asks) for r in sorted(set(dr) | set(kr))]
