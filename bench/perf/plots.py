"""Figures of results.json: each function takes a section's data and an optional ax, draws with fig/ax methods
only (no pyplot state), returns the Figure; `save` writes a PNG and clears it. Bars are medians, error bars the
min..max of the repetitions."""
from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

MIB = 1024 * 1024
C_KERNEL, C_DLIO, C_PLAIN, C_OTHER = "#2b5797", "#d9822b", "#2b8a3e", "#9aa5b1"


def new_figure(width: float, height: float, ncols: int = 1):
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def _fig_ax(ax, width=7.0, height=4.0):
    if ax is not None:
        return ax.figure, ax
    fig, axes = new_figure(width, height)
    return fig, axes[0]


def save(fig: Figure, path: Path) -> str:
    fig.savefig(path, format="png", metadata={"Software": None})
    fig.clear()
    return path.name


def _err(s: dict, scale: float = 1.0) -> tuple[float, list[float]]:
    m = (s.get("median") or 0.0) * scale
    return m, [m - (s.get("min") or 0.0) * scale, (s.get("max") or 0.0) * scale - m]


def _bars(ax, groups: list[str], series: list[tuple[str, str, list[dict]]], scale: float = 1.0) -> None:
    """series: (label, color, one summary per group)."""
    w = 0.8 / max(1, len(series))
    for i, (label, color, stats) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * w for j in range(len(groups))]
        vals = [_err(s or {}, scale) for s in stats]
        ax.bar(xs, [v[0] for v in vals], w, yerr=[[v[1][0] for v in vals], [v[1][1] for v in vals]], color=color,
               label=label, capsize=3)
    ax.set_xticks(range(len(groups)), groups)


def readpath(sec: dict, ax=None) -> Figure:
    fig, ax = _fig_ax(ax)
    modes = list(sec["modes"])
    m = sec["modes"]
    _bars(ax, modes, [
        ("kernel: inside H5Dread", C_KERNEL, [m[x]["kernel_raw_bw_bytes_per_s"] for x in modes]),
        ("fio: inside pread", C_PLAIN, [m[x]["fio_syscall_bw_bytes_per_s"] for x in modes]),
        ("kernel: end to end (with opens)", "#7aa6da", [m[x]["kernel_e2e_bw_bytes_per_s"] for x in modes]),
        ("fio: wall", "#8fd19e", [m[x]["fio_wall_bw_bytes_per_s"] for x in modes]),
        ("fio: inside pread, whole file from offset 0", C_OTHER,
         [m[x].get("fio_from0_syscall_bw_bytes_per_s") or {} for x in modes])], 1 / MIB)
    if sec.get("fio_odirect_bw_bytes_per_s", {}).get("median"):
        ax.axhline(sec["fio_odirect_bw_bytes_per_s"]["median"] / MIB, color="#c92a2a", ls="--", lw=1,
                   label="fio O_DIRECT (device)")
    for j, x in enumerate(modes):
        r = m[x]["ratio_raw"]["median_ratio"]
        if r:
            ax.annotate(f"{r * 100:.0f}%", (j, 0), xytext=(0, 4), textcoords="offset points", ha="center",
                        color="white", fontweight="bold")
    ax.set_ylabel("MiB/s (1 rank)")
    ax.set_title(f"Read path: {sec['files']} files x {sec['sample_bytes'] / MIB:.0f} MiB, kernel vs fio")
    ax.legend(fontsize=8)
    return fig


def overhead(sec: dict, ax=None) -> Figure:
    fig, ax = _fig_ax(ax)
    labels = [f"{c['ranks']} rank(s), rt {c['read_threads']}" for c in sec["cases"]]
    data = [[s["overhead_percent"] for s in c["samples"]] for c in sec["cases"]]
    ax.boxplot(data, tick_labels=labels, showfliers=True)
    ax.axhline(sec["target_percent"], color="#c92a2a", ls="--", lw=1, label=f"target {sec['target_percent']}%")
    ax.set_ylabel("overhead, % of observed epoch")
    ax.set_title("Kernel overhead per rank and epoch (unet3d shape)")
    ax.legend(fontsize=8)
    return fig


def dlio_breakdown(sec: dict, ax=None) -> Figure:
    names = [n for n, v in sec["variants"].items() if "dlio" in v]
    fig, ax = _fig_ax(ax, max(7.0, 1.4 * len(names) + 2), 4.6)
    parts = [("startup_s", "start-up (+teardown)", "#c92a2a"), ("epochs_s", "epochs (in program)", C_PLAIN),
             ("other_s", "other", C_OTHER)]
    w = 0.38
    for i, side in enumerate(("dlio", "kernel")):
        xs = [j + (i - 0.5) * w for j in range(len(names))]
        bottom = [0.0] * len(names)
        for key, label, color in parts:
            vals = []
            for n in names:
                s = sec["variants"][n].get(side)
                v = (s or {}).get(key, {}).get("median") or 0.0
                if key == "startup_s" and s:
                    v += (s.get("teardown_s", {}).get("median") or 0.0)
                vals.append(v)
            ax.bar(xs, vals, w, bottom=bottom, color=color, edgecolor=C_DLIO if side == "dlio" else C_KERNEL,
                   linewidth=1.5, label=label if i == 0 else None)
            bottom = [b + v for b, v in zip(bottom, vals, strict=False)]
        for x, b in zip(xs, bottom, strict=False):
            if b:
                ax.annotate("D" if side == "dlio" else "K", (x, b), xytext=(0, 2), textcoords="offset points",
                            ha="center", fontsize=8)
    for j, n in enumerate(names):
        r = sec["variants"][n].get("ratio", {}).get("wall", {}).get("median_ratio")
        if r:
            ax.annotate(f"{r:.1f}x", (j, 0), xytext=(0, -28), textcoords="offset points", ha="center", fontsize=9)
    ax.set_xticks(range(len(names)), [n.replace("-", "\n", 1) for n in names], fontsize=8)
    ax.set_ylabel("training launch wall time, s (median)")
    ax.set_title("Training launch wall: DLIO (D) vs kernel (K); DLIO/kernel below")
    ax.legend(fontsize=8)
    return fig


def generation(sec: dict) -> Figure:
    fig, (a, b) = new_figure(12, 4.2, 2)
    pre = "disk_" if "kernel_disk_bw_bytes_per_s" in (sec["bandwidth"] or [{}])[0] else ""
    groups = [f"{r['ranks']} rank(s)" for r in sec["bandwidth"]]
    _bars(a, groups, [("kernel", C_KERNEL, [r[f"kernel_{pre}bw_bytes_per_s"] for r in sec["bandwidth"]]),
                      ("fio", C_PLAIN, [r[f"fio_{pre}bw_bytes_per_s"] for r in sec["bandwidth"]]),
                      ("dd (1 file)", "#8fd19e", [r[f"dd_{pre}bw_bytes_per_s"] for r in sec["bandwidth"]])], 1 / MIB)
    a.set_ylabel("MiB/s (aggregate)")
    a.set_title("Generation write bandwidth" + (" (to disk: + sync)" if pre else " (page cache)"))
    a.legend(fontsize=8)
    rows = sec["rss"]
    labels = [f"buf {r['buffer_bytes'] // 2**20}M\nsample {r['sample_bytes'] / 2**20:.0f}M" for r in rows]
    xs = range(len(rows))
    b.bar([x - 0.2 for x in xs], [max(r["generate_maxrss_kb"]) / 1024 for r in rows], 0.4, color=C_KERNEL,
          label="generation (max over ranks)")
    b.bar([x + 0.2 for x in xs], [max(r["train_maxrss_kb"]) / 1024 for r in rows], 0.4, color="#7aa6da",
          label="training read (max over ranks)")
    b.scatter(list(xs), [r["bound_kb"] / 1024 for r in rows], marker="_", s=600, color="#c92a2a",
              label="bound: baseline + buffer + sample", zorder=3)
    b.set_xticks(list(xs), labels, fontsize=7)
    b.set_ylabel("peak RSS per rank, MiB")
    b.set_title("Peak RSS per rank")
    b.legend(fontsize=8)
    return fig


def scaling(sec: dict) -> Figure:
    fig, (a, b) = new_figure(12, 4.2, 2)
    rs = [r["ranks"] for r in sec["ranks"]]
    for key, label, color in (("aggregate_bw_bytes_per_s", "aggregate (bytes / epoch)", C_KERNEL),
                              ("per_rank_raw_bw_bytes_per_s", "per rank (inside H5Dread)", C_PLAIN)):
        vals = [_err(r[key], 1 / MIB) for r in sec["ranks"]]
        a.errorbar(rs, [v[0] for v in vals], yerr=[[v[1][0] for v in vals], [v[1][1] for v in vals]], marker="o",
                   color=color, label=label, capsize=3)
    if any((r.get("fio_aggregate_bw_bytes_per_s") or {}).get("n") for r in sec["ranks"]):
        vals = [_err(r["fio_aggregate_bw_bytes_per_s"], 1 / MIB) for r in sec["ranks"]]
        a.errorbar(rs, [v[0] for v in vals], yerr=[[v[1][0] for v in vals], [v[1][1] for v in vals]], marker="s",
                   color="#8fd19e", label="fio, one job per rank (aggregate)", capsize=3)
    a.axvline(sec["cpus"], color="#c92a2a", ls="--", lw=1, label=f"{sec['cpus']} cores")
    a.set_xscale("log", base=2)
    a.set_xticks(rs, [str(r) for r in rs])
    a.set_xlabel("ranks")
    a.set_ylabel("MiB/s")
    a.set_title(f"Read rate vs ranks ({sec['files']} files x {sec['record_length'] / MIB:.0f} MiB, warm)")
    a.legend(fontsize=8)
    xs = [r["samples"] for r in sec["size"]]
    for key, label, color in (("launch_wall_s", "launch wall", C_KERNEL), ("epochs_observed_s", "epochs", C_PLAIN)):
        vals = [_err(r[key]) for r in sec["size"]]
        b.errorbar(xs, [v[0] for v in vals], yerr=[[v[1][0] for v in vals], [v[1][1] for v in vals]], marker="o",
                   color=color, label=label, capsize=3)
    b.set_xlabel("samples (files x samples per file)")
    b.set_ylabel("s")
    b.set_title(f"Runtime vs dataset size ({sec['size'][0]['ranks'] if sec['size'] else '?'} ranks, 2 epochs)")
    b.legend(fontsize=8)
    return fig


def profilers(sec: dict, ax=None) -> Figure:
    fig, ax = _fig_ax(ax)
    sides = list(sec["profiles"])
    from profiles import baseline, registry
    # the profilers measured, in the registry's order (the baseline is each bar's 1.0)
    profs = [p for p in registry() if p != baseline().name and any(p in sec["profiles"][s] for s in sides)]
    colors = {"dlio": C_DLIO, "kernel": C_KERNEL}
    series = []
    for s in sides:
        for key, suffix, alpha in (("ratio_wall", "launch wall", 1.0), ("ratio_epochs", "epochs", 0.5)):
            stats = []
            for p in profs:
                r = sec["profiles"][s].get(p, {}).get(key, {})
                pr = r.get("paired", {})
                stats.append({"median": r.get("median_ratio"), "min": pr.get("min"), "max": pr.get("max")})
            series.append((f"{s}: {suffix}", colors[s] if alpha == 1.0 else colors[s] + "80", stats))
    _bars(ax, profs, series)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("time with profile / time with timing")
    ax.set_title(f"Profiler overhead ({sec.get('scale', 'tiny')} unet3d, 2 ranks, 4 read threads)")
    ax.legend(fontsize=8)
    return fig


def vol(sec: dict) -> Figure:
    """The async VOL connector: per (ranks, cache) panel, each mode's I/O wait against the compute per step (h5bench's
    fully vs partially overlapped reads: explicit async flattens towards the first batch's wait once compute covers
    the reads)."""
    panels = sorted({(c["ranks"], c["cache"]) for c in sec["cases"]})
    fig, axes = new_figure(4.2 * len(panels), 3.8, len(panels))
    colors = {"sync": C_KERNEL, "implicit": C_OTHER, "explicit": C_PLAIN}
    for ax, (ranks, cache) in zip(axes, panels, strict=True):
        cs = sorted((c for c in sec["cases"] if c["ranks"] == ranks and c["cache"] == cache),
                    key=lambda c: c["compute_s"])
        xs = [c["compute_s"] * 1000 for c in cs]
        for mode, color in colors.items():
            vals = [_err(c[mode]["io_wait_s"], 1000) for c in cs]
            ax.errorbar(xs, [v[0] for v in vals], yerr=[[v[1][0] for v in vals], [v[1][1] for v in vals]],
                        marker="o", color=color, label=mode, capsize=3)
        ax.set_yscale("log")
        ax.set_xlabel("emulated compute per step (ms)")
        ax.set_ylabel("I/O wait per epoch (ms)")
        ax.set_title(f"{ranks} rank(s), page cache {cache}")
        ax.legend(fontsize=8)
    return fig
