"""The Log VFD profile's sections of the run's report (Profile.report_sections, placed after the workload section):
its records per open (thesis Table 6.1) and the raw record kinds, per launch (logvfd, logvfd-rt0), from
tables/<launch>-<side>.json; then its counts per rank against the analytic model (validate's counts.<side>.<launch>.*
rows). Reads the run directory only, through the ReportView reports/ hands it; the paper report shows the first
section too (reports/paper.py, through the registry)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from common.blocks import Block, Heading, Para, Table, demote
from common.cells import value, yes
from common.rundir import SIDE_LABEL, SIDES
from profiles import ReportView

MAX_EXTENTS = 8          # a record kind with more distinct extents than this is one row (per-file sizes differ)


def _kind(rec: str) -> str:
    return "SUPER-PROBE" if rec.startswith("SUPER-PROBE") else " ".join(rec.split()[1:])


def record_rows(tables: dict[str, dict | None], interleaved: bool = False,
                max_extents: int = MAX_EXTENTS) -> list[list[str]]:
    """Thesis Table 6.1: each normalized record of the per-open blocks, in block order, with its count over all
    ranks on each side. A kind with more than max_extents distinct extents (files of different sizes) is one row
    whose match means: the same multiset of extents on both sides. interleaved (reader processes share a rank's
    stderr): superblock probe records cannot be attributed to their open, so the probes are one row whose match is
    that of the raw SUPER records (as validate's multiset check, which leaves them out)."""
    counts = {s: Counter() for s in SIDES}
    order: dict[str, None] = {}
    opens = {s: 0 for s in SIDES}
    for s in SIDES:
        for r in (tables.get(s) or {}).get("ranks", {}).values():
            blocks = r.get("blocks", [])
            opens[s] += len(blocks)
            # a compact table's equal blocks are one shared list (common.rundir.loads_table): each distinct block
            # counted once, times the opens it stands for (the same counts and first-seen order as block by block)
            first: dict[int, list] = {}
            for b in blocks:
                first.setdefault(id(b), b)
            times = Counter(map(id, blocks))
            for i, b in first.items():
                for x in b:
                    counts[s][x] += times[i]
                    order.setdefault(x, None)
    distinct: dict[str, set] = {}
    for x in order:
        distinct.setdefault(_kind(x), set()).add(x)
    rows = [["opens (per-open blocks)", str(opens["dlio"]), str(opens["kernel"]),
             yes(opens["dlio"] == opens["kernel"])]]
    done: set = set()
    for x in order:
        k = _kind(x)
        if interleaved and k == "SUPER-PROBE":
            if k in done:
                continue
            done.add(k)
            xs = distinct[k]
            raw = {s: Counter() for s in SIDES}
            for s in SIDES:
                for r in (tables.get(s) or {}).get("ranks", {}).values():
                    raw[s].update({kk: v for kk, v in r.get("record_kinds", {}).items() if kk.startswith("SUPER")})
            rows.append(["SUPER-PROBE (all probes; interleaved records, matched as raw SUPER records)",
                         str(sum(counts["dlio"][t] for t in xs)), str(sum(counts["kernel"][t] for t in xs)),
                         yes(raw["dlio"] == raw["kernel"])])
        elif len(distinct[k]) > max_extents:
            if k in done:
                continue
            done.add(k)
            xs = distinct[k]
            d, kn = sum(counts["dlio"][t] for t in xs), sum(counts["kernel"][t] for t in xs)
            ok = all(counts["dlio"][t] == counts["kernel"][t] for t in xs)
            rows.append([f"{k} ({len(xs)} distinct extents)", str(d), str(kn), yes(ok)])
        else:
            d, kn = counts["dlio"][x], counts["kernel"][x]
            rows.append([x, str(d), str(kn), yes(d == kn)])
    return rows


def kind_rows(tables: dict[str, dict | None]) -> list[list[str]]:
    """raw record kinds (before normalization, superblock records included) summed over ranks"""
    c = {s: Counter() for s in SIDES}
    for s in SIDES:
        for r in (tables.get(s) or {}).get("ranks", {}).values():
            c[s].update(r.get("record_kinds", {}))
    kinds = sorted(set(c["dlio"]) | set(c["kernel"]))
    rows = [[k, str(c["dlio"][k]), str(c["kernel"][k]), yes(c["dlio"][k] == c["kernel"][k])] for k in kinds]
    tot = {s: {"raw_reads": 0, "raw_read_bytes": 0, "read_bytes": 0} for s in SIDES}
    for s in SIDES:
        for r in (tables.get(s) or {}).get("ranks", {}).values():
            for key in tot[s]:
                tot[s][key] += int(r.get(key, 0))
    for key, label in (("raw_reads", "raw reads (DRAW Read)"), ("raw_read_bytes", "raw bytes read"),
                       ("read_bytes", "all bytes read")):
        d, k = tot["dlio"][key], tot["kernel"][key]
        rows.append([label, str(d), str(k), yes(d == k)])
    return rows


def logvfd_section(run: ReportView) -> list[Block]:
    out: list[Block] = [Heading(2, "Log VFD records (thesis Table 6.1)", "log-vfd-records")]
    rt = run.config.get("reader", {}).get("read_threads", 1)
    variants = [("logvfd", f"the workload's {rt} read threads", int(rt) > 0), ("logvfd-rt0", "read threads 0", False)]
    any_ = False
    for prof, what, interleaved in variants:
        t = {s: run.table(f"{prof}-{s}.json") for s in SIDES}
        if t["dlio"] is None and t["kernel"] is None:
            continue
        any_ = True
        out.append(Heading(3, f"`{prof}`: {what}", f"log-vfd-{prof}"))
        out.append(Para(f"Each side read the other side's dataset through the HDF5 Log VFD ({what}). Every "
                        "H5Fopen starts a per-open block; the superblock probe, whose read sizes differ between "
                        "HDF5 versions, is one `SUPER-PROBE` record. Counts are over all ranks."
                        + (" Reader processes write their records to the rank's stderr concurrently, so records "
                           "interleave: the comparison is of the multiset of records (validate's `logvfd.multiset.*`)."
                           if interleaved else " Without reader processes the blocks are compared in order "
                           "(validate's `logvfd.sequence.*`).")
                        + ("" if all(t.values()) else " One side's table is missing: its launch failed.")))
        out.append(Table(f"tbl-logvfd-{prof}", ["record (normalized, in block order)", "DLIO", "kernel", "match"],
                         record_rows(t, interleaved), f"Log VFD records per open, {prof}",
                         [False, True, True, False]))
        out.append(Table(f"tbl-logvfd-kinds-{prof}", ["raw record kind", "DLIO", "kernel", "match"], kind_rows(t),
                         f"Raw Log VFD record kinds and bytes (before normalization), {prof}",
                         [False, True, True, False]))
    if not any_:
        out.append(Para("The Log VFD profile did not run: " + run.absent_reason("logvfd") + "."))
    return out


# the Log VFD's counts.<side>.<variant>.rank<r> (values: dicts of opens, raw reads, raw bytes); not DFTracer's
# counts.dftracer.<side>.rank<r> (integers: opens of DLIO 3.x's whole-file reads, shown with the other checks)
_COUNT_RE = re.compile(r"^counts\.(" + "|".join(SIDES) + r")\.([\w-]+)\.rank(\d+)$")


def counts_rows(run: ReportView) -> list[list[str]]:
    rows = []
    for c in run.checks:
        m = _COUNT_RE.match(c["name"])
        if not m:
            continue
        side, prof, rank = m.groups()
        e, o = c.get("expected") or {}, c.get("observed") or {}
        pp = run.check(c["name"] + ".per_phase")
        seg = f"{value(pp.get('observed'))}/{value(pp.get('expected'))}" if pp else "-"
        ok = c["status"] == "pass" and (pp is None or pp["status"] == "pass")
        rows.append([SIDE_LABEL.get(side, side), prof, rank] +
                    [value(d.get(k)) for k in ("opens", "raw_reads", "raw_bytes") for d in (e, o)] +
                    [seg, "PASS" if ok else "FAIL"])
    return rows


def counts_section(run: ReportView) -> list[Block]:
    out: list[Block] = [Heading(2, "Counts against the analytic model", "counts-against-the-analytic-model")]
    rows = counts_rows(run)
    if not rows:
        out.append(Para("No `counts.*` checks in the verdict: " + (
            "the run was not validated" if run.verdict is None else
            "the Log VFD profile did not run (" + run.absent_reason("logvfd") + ")") + "."))
        return out
    out.append(Para("Opens, raw reads (H5FD_MEM_DRAW) and raw bytes per rank, as the Log VFD recorded them, against "
                    "the analytic model computed from the workload alone (DLIO's sampler, step and prefetch rules, "
                    "per-file dimensions). Per-phase segments: epoch and evaluation segments whose sample sizes "
                    "match the model in order (read threads 0 only, where the order is deterministic)."))
    cols = ["side", "variant", "rank", "opens model", "opens seen", "raw reads model", "raw reads seen",
            "raw bytes model", "raw bytes seen", "per-phase segments (seen/model)", "status"]
    out.append(Table("tbl-counts", cols, rows, "The `counts.*` checks of verdict.json",
                     [False, False, True] + [True] * 7 + [False]))
    return out


def paper_section(runs: list[ReportView], label: Callable[[ReportView], str]) -> list[Block]:
    """The paper report's part of the Log VFD (Profile.paper_sections): its records per open in the first run of
    the paper that ran it (runs: the paper's runs; label: how the paper names a run), as the thesis measured
    configuration A."""
    out: list[Block] = [Heading(2, "Log VFD records per open (thesis Table 6.1)", "table-6-1")]
    src = next((r for r in runs if r.table("logvfd-dlio.json") or r.table("logvfd-kernel.json")), None)
    if src is None:
        out.append(Para("No run of this paper ran the Log VFD profile (`PAPER_WORKLOADS` gives each workload its "
                        "profiles; the default runs it for configuration A with 4 read threads)."))
        return out
    out.append(Para(f"From the run of `{src.manifest['workload']['name']}` ({label(src)}), as the thesis "
                    "measured configuration A."))
    return out + demote(logvfd_section(src)[1:], "t61")
