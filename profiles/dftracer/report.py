"""The DFTracer profile's section of the run's report (Profile.report_sections, placed after the MLPerf section):
its timelines, one lane per rank and reader process (tables/dftracer-timeline-<side>.json), drawn and counted per
lane and kind; and its part of the paper report (Profile.paper_sections). Reads the run directory only, through the
ReportView reports/ hands it; matplotlib only when the figure is drawn (common/figures.py)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from common.blocks import Block, Heading, Para, Table, demote
from common.cells import f3
from common.figures import FigureSpec, new_figure
from common.rundir import SIDE_LABEL, SIDES
from profiles import ReportView

KIND_COLORS = {"read": "#2b8a3e", "compute": "#9aa5b1", "open": "#c92a2a", "close": "#e67700", "other": "#7048e8"}


def lane_rows(t: dict[str, dict], present: list[str]) -> list[list[str]]:
    """DFTracer timelines (side -> tables/dftracer-timeline-<side>.json): events and their summed seconds per lane
    and kind."""
    rows = []
    for s in present:
        for lane in t[s].get("lanes", []):
            c: Counter = Counter()
            dur: Counter = Counter()
            if lane.get("sampled"):  # a long lane keeps a sample of its events and its exact counts beside them
                c.update(lane["sampled"].get("counts", {}))
                dur.update({k: float(v) for k, v in lane["sampled"].get("seconds", {}).items()})
            for e in [] if lane.get("sampled") else lane.get("events", []):
                c[e.get("kind", "other")] += 1
                dur[e.get("kind", "other")] += float(e.get("d", 0.0))
            for k in sorted(c):
                rows.append([SIDE_LABEL[s], lane.get("label", ""), str(lane.get("rank", "")), str(lane.get("pid", "")),
                             k, str(c[k]), f3(dur[k])])
    return rows


# the most events one lane of a timeline draws: beyond it, every k-th (a lane is ~900 pixels wide: more bars than
# that draw nothing more, and a PDF of 10^5 bars takes seconds)
LANE_POINTS = 2000


def thin(lane: dict) -> tuple[list, str]:
    """A lane's events to draw and its label: at most LANE_POINTS (every k-th in trace order), the label saying
    which part of the lane's events is shown when it is not all of them."""
    ev = lane.get("events", [])
    total = int((lane.get("sampled") or {}).get("events", len(ev)))
    k = -(-len(ev) // LANE_POINTS) if len(ev) > LANE_POINTS else 1
    shown = ev[::k]
    label = lane.get("label", "")
    if len(shown) < total:
        label += f" ({len(shown)} of {total} events)"
    return shown, label


def timelines(sides: list[dict]):
    """sides: {title, lanes: [{label, events: [{t, d, kind}], sampled?}]}; one panel per side (each on its own time
    range, as start-up differs by seconds), one lane per rank/worker; compute as a low grey band, I/O events drawn
    over it with a minimum visible width so that sub-millisecond reads still show. A lane draws at most
    LANE_POINTS events (every k-th beyond that); a lane shown in part says so in its label ("1/k of N events"),
    counting the sampling the trace's table already did."""
    n_lanes = [max(1, len(s["lanes"])) for s in sides]
    fig, axes = new_figure(9.0, 1.2 + 0.45 * sum(n_lanes) + 0.7 * len(sides), nrows=len(sides), ncols=1,
                           gridspec_kw={"height_ratios": n_lanes})
    seen: set = set()
    order = ["compute", "open", "read", "close", "other"]
    for ax, s in zip((a[0] for a in axes), sides, strict=True):
        lo, hi = float("inf"), 0.0
        labels = []
        for y, lane in enumerate(s["lanes"]):
            by_kind: dict[str, list] = {}
            events, label = thin(lane)
            labels.append(label)
            for e in events:
                t, d = float(e["t"]), max(float(e["d"]), 0.0)
                by_kind.setdefault(e.get("kind", "other"), []).append((t, d))
                lo, hi = min(lo, t), max(hi, t + d)
            for kind in sorted(by_kind, key=lambda k: order.index(k) if k in order else len(order)):
                io = kind != "compute"
                color = KIND_COLORS.get(kind, KIND_COLORS["other"])
                ax.broken_barh(by_kind[kind], (y - 0.4, 0.8) if io else (y - 0.1, 0.5), facecolors=color,
                               edgecolors=color if io else "none", linewidth=0.7 if io else 0, zorder=3 if io else 1,
                               label=kind if kind not in seen else None)
                seen.add(kind)
        ax.set_yticks(range(len(s["lanes"])), labels, fontsize=8)
        ax.set_ylim(-0.6, len(s["lanes"]) - 0.4)
        ax.invert_yaxis()
        if hi > lo:
            pad = 0.02 * (hi - lo)
            ax.set_xlim(lo - pad, hi + pad)
        ax.set_title(s["title"], fontsize=10, loc="left")
        ax.set_xlabel("seconds since launch start", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    handles, labels = [], []
    for a in axes:
        h, lab = a[0].get_legend_handles_labels()
        handles += h
        labels += lab
    if handles:
        fig.legend(handles, labels, loc="outside upper right", ncols=len(labels), fontsize=8)
    return fig


def dftracer_section(run: ReportView) -> list[Block]:
    out: list[Block] = [Heading(2, "DFTracer timelines", "dftracer-timelines")]
    t = {s: run.table(f"dftracer-timeline-{s}.json") for s in SIDES}
    present = [s for s in SIDES if t[s] is not None]
    if not present:
        out.append(Para("The DFTracer profile did not run: " + run.absent_reason("dftracer") + "."))
        return out
    if len(present) < len(SIDES):
        miss = [SIDE_LABEL[s] for s in SIDES if s not in present]
        out.append(Para(f"No timeline for {', '.join(miss)}: " + run.absent_reason("dftracer") + "."))
    rows = lane_rows(t, present)
    long = any(ln.get("sampled") or len(ln.get("events", [])) > LANE_POINTS
               for s in present for ln in t[s].get("lanes", []))
    out.append(Para("One lane per rank and reader process (worker); events on the time axis since the launch "
                    "started: reads, emulated compute, opens and closes." +
                    (f" A lane of more than {LANE_POINTS} events is drawn in part (every k-th event; its "
                     "label says how many of how many); the table counts every event." if long else "")))
    sides = [{"title": f"{SIDE_LABEL[s]}", "lanes": t[s].get("lanes", [])} for s in present]
    out.append(FigureSpec("dftracer-timeline", "DFTracer timeline per side: one lane per rank/worker, "
                          "colour = event kind", lambda: timelines(sides)).render())
    out.append(Table("tbl-dftracer", ["side", "lane", "rank", "pid", "kind", "events", "total s"], rows,
                     "Events per lane and kind", [False, False, True, True, False, True, True]))
    return out


def paper_section(runs: list[ReportView], label: Callable[[ReportView], str]) -> list[Block]:
    """The paper report's part of DFTracer (Profile.paper_sections): the timelines of the first run of the paper that
    ran it (runs: the paper's runs; label: how the paper names a run), as the thesis traced configuration A."""
    out: list[Block] = [Heading(2, "DFTracer timelines", "dftracer")]
    src = next((r for r in runs if r.table("dftracer-timeline-dlio.json") or r.table("dftracer-timeline-kernel.json")),
               None)
    if src is None:
        out.append(Para("No run of this paper ran the DFTracer profile (`PAPER_WORKLOADS` gives each workload its "
                        "profiles; the default runs it for configuration A with 4 read threads)."))
        return out
    out.append(Para(f"From the run of `{src.manifest['workload']['name']}` ({label(src)}, "
                    f"{src.config.get('reader', {}).get('read_threads', 1)} reader processes per rank), as the "
                    "thesis traced configuration A. Lanes are as the DFTracer profile attributes events (its "
                    "`tables/dftracer-timeline-<side>.json`)."))
    return out + demote(dftracer_section(src)[1:], "dft")
