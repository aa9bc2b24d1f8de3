"""The emulated computation, judged side by side (issue 35): per rank, the compute regions of both sides' DFTracer
traces (`dftracer-timeline-<side>.json`: DLIO's TorchFramework.compute / compute region around its sleep of
computation_time or eval_time, framework/torch_framework.py:94-96, tf_framework.py:88-90, called at main.py:235 and
:271; the kernel's "compute" region around its emulation, bench/src/run.c run_step) of at least MIN_S, paired
in time order: the same number on both sides, and each kernel region as long as DLIO's at the same position within
a tolerance (a sleep overruns under load; DLIO's Python adds its own). A kernel that skips, shortens or lengthens a
step's compute moves the AU and throughput it reports: this row fails it.

With `computation_time_stdev` (or `eval_time_stdev`) set, each side draws its own times (the kernel from its own
seeded stream, DLIO from numpy's global one): the regions are then compared as totals per rank, within four
standard deviations of the sum's spread. A lane the timeline sampled (over LANE_EVENTS events) keeps only its counts
and seconds: totals again, said in the detail."""
from __future__ import annotations

from common.mapping import dotted_get
from profiles.compare import FAIL, PASS, SKIP, result

# a region may overrun its wanted time: the larger of ABS_S and REL of DLIO's region, per region (the kernel's sleep
# returns after its time; DLIO's sleep and its Python around it overrun by ~1 ms idle, tens of ms at load 10+)
ABS_S, REL = 0.025, 0.10
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


def _rank_row(rank: int, d: dict, k: dict, sd: float) -> dict:
    """the rank's row; it declares the class it compared (validate/checks.py CLASSES) when DLIO made a region"""
    return _judge(rank, d, k, sd) | {"compared": ["compute"] * bool(d["n"])}


def _judge(rank: int, d: dict, k: dict, sd: float) -> dict:
    name = f"compute.rank{rank}"
    want = {"regions": d["n"], "seconds": round(d["s"], 3)}
    got = {"regions": k["n"], "seconds": round(k["s"], 3)}
    if d["n"] != k["n"]:
        return result(name, FAIL, want, got, f"DLIO made {d['n']} compute regions, the kernel {k['n']}")
    if d["d"] is not None and k["d"] is not None and not sd:
        for i, (a, b) in enumerate(zip(d["d"], k["d"], strict=True)):
            if abs(a - b) > max(ABS_S, REL * a):
                return result(name, FAIL, want, got, f"compute region {i + 1} of {d['n']}: DLIO {a:.4f} s, kernel "
                              f"{b:.4f} s (tolerance {max(ABS_S, REL * a):.4f} s)")
        return result(name, PASS, want, got, f"{d['n']} compute regions, each within max({ABS_S} s, "
                      f"{REL:.0%}) of DLIO's at the same position (kernel {k['s']:.3f} s, DLIO {d['s']:.3f} s)")
    tol = max(ABS_S, REL * d["s"]) + 4 * sd * d["n"] ** 0.5
    why = f"drawn times (stdev {sd} s)" if sd else "a sampled timeline lane"
    ok = abs(d["s"] - k["s"]) <= tol
    return result(name, PASS if ok else FAIL, want, got, f"{d['n']} compute regions; totals compared ({why}): "
                  f"DLIO {d['s']:.3f} s, kernel {k['s']:.3f} s, tolerance {tol:.3f} s")


def check_compute(run) -> list[dict]:
    asked = float(dotted_get(run.cfg, "train.computation_time", 0) or 0) + \
        float(dotted_get(run.cfg, "evaluation.eval_time", 0) or 0) * bool(dotted_get(run.cfg, "workflow.evaluation"))
    if asked <= 0:
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
    sd = _jitter(run.cfg)
    empty = {"d": [], "n": 0, "s": 0.0}
    return [_rank_row(r, dr.get(r, empty), kr.get(r, empty), sd) for r in sorted(set(dr) | set(kr))]
