"""Figures: each plot function takes its rows (plain dicts built by the sections) and an optional ax, returns the
matplotlib Figure it drew on, and uses only fig/ax methods. The figure itself (FigureSpec, new_figure, png, pdf) is
common/figures.py's, shared with the profiles' report sections."""
from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from common.figures import FigureSpec, new_figure, pdf, png  # noqa: F401  (the sections take them from here)

COLORS = {"dlio": "#d9822b", "kernel": "#2b5797"}
LINE_COLORS = ["#2b5797", "#d9822b", "#2b8a3e", "#c92a2a", "#7048e8", "#0c8599"]


def _fig_ax(ax, width=8.0, height=4.2):
    if ax is not None:
        return ax.figure, ax
    fig, axes = new_figure(width, height)
    return fig, axes[0][0]


def runtime_bars(rows: list[dict], ax=None, title: str = "") -> Figure:
    """rows: {label, dlio: stats|None, kernel: stats|None}; bars = mean, error bars = standard deviation, the
    DLIO/kernel ratio of the means above each group; log scale (start-up and epochs differ by orders)."""
    fig, ax = _fig_ax(ax, max(6.0, 1.3 * len(rows) + 2), 4.4)
    w = 0.38
    for i, side in enumerate(("dlio", "kernel")):
        xs = [j + (i - 0.5) * w for j in range(len(rows))]
        means = [(r[side] or {}).get("mean", 0.0) for r in rows]
        sds = [(r[side] or {}).get("stdev", 0.0) for r in rows]
        ax.bar(xs, means, w, yerr=sds, capsize=4, color=COLORS[side], label="DLIO" if side == "dlio" else "kernel",
               error_kw={"elinewidth": 1.2, "ecolor": "#222"})
    for j, r in enumerate(rows):
        d, k = r["dlio"] or {}, r["kernel"] or {}
        if d.get("mean") and k.get("mean"):
            top = max(d["mean"] + d.get("stdev", 0.0), k["mean"] + k.get("stdev", 0.0))
            ax.annotate(f"{d['mean'] / k['mean']:.1f}x", (j, top), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=9)
    ax.set_xticks(range(len(rows)), [r["label"] for r in rows], rotation=20 if len(rows) > 4 else 0, ha="right"
                  if len(rows) > 4 else "center", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (mean, error bar = stdev)")
    tops = [(r[s] or {}).get("mean", 0.0) + (r[s] or {}).get("stdev", 0.0) for r in rows for s in ("dlio", "kernel")]
    lows = [(r[s] or {}).get("mean") for r in rows for s in ("dlio", "kernel") if (r[s] or {}).get("mean")]
    if lows:
        ax.set_ylim(min(lows) / 2, max(tops) * 8)     # head room (log scale) for the ratios and the legend
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(loc="upper left", ncols=2, fontsize=9)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


# the most markers a per-file scatter draws per series (same / differs): files reading the same bytes on both sides
# share one marker; beyond this many distinct markers, every k-th
SCATTER_POINTS = 2000


def files_scatter(points: list[dict], ax=None) -> Figure:
    """points: {dlio: bytes, kernel: bytes, same: bool, n: files (default 1)}; per file bytes DLIO vs kernel,
    diagonal = equal. One marker per distinct (DLIO, kernel) pair, at most SCATTER_POINTS per series; the legend
    gives the files and, when fewer markers than files are drawn, the markers."""
    fig, ax = _fig_ax(ax, 5.5, 5.0)
    for same, color, lab in ((True, "#2b8a3e", "same"), (False, "#c92a2a", "differs")):
        ps = [p for p in points if p["same"] == same]
        if ps:
            xy = list(dict.fromkeys((max(p["dlio"], 1), max(p["kernel"], 1)) for p in ps))
            k = -(-len(xy) // SCATTER_POINTS) if len(xy) > SCATTER_POINTS else 1
            xy = xy[::k]
            n = sum(p.get("n", 1) for p in ps)
            note = f"{n} files" + (f", {len(xy)} markers" if len(xy) < n else "")
            ax.scatter([x for x, _ in xy], [y for _, y in xy], s=18, color=color, label=f"{lab} ({note})", alpha=0.8)
    hi = max([max(p["dlio"], p["kernel"], 1) for p in points] + [10])
    ax.plot([1, hi], [1, hi], color="#888", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes read by DLIO (files only one side touched at 1)")
    ax.set_ylabel("bytes read by the kernel")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return fig


def scaling_lines(series: list[dict], ax=None, title: str = "", ylabel: str = "MiB/s", logy: bool = False) -> Figure:
    """series: {label, x: [ranks], y: [value], dashed: bool}; log2 x axis, rank counts as ticks."""
    fig, ax = _fig_ax(ax, 7.0, 4.2)
    xs_all: set = set()
    for i, s in enumerate(series):
        pts = [(x, y) for x, y in zip(s["x"], s["y"], strict=True) if y is not None]
        if not pts:
            continue
        xs_all.update(x for x, _ in pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4,
                ls="--" if s.get("dashed") else "-", color=s.get("color", LINE_COLORS[i % len(LINE_COLORS)]),
                label=s["label"])
    if xs_all:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(xs_all), [str(x) for x in sorted(xs_all)])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="both" if logy else "major")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


def two_panels(draws: list[Callable], width: float = 12.0, height: float = 4.4) -> Figure:
    """draw functions (ax -> None) side by side in one figure"""
    fig, axes = new_figure(width, height, nrows=1, ncols=len(draws))
    for ax, draw in zip(axes[0], draws, strict=True):
        draw(ax)
    return fig


def checkpoint_bars(rows: list[dict], ax=None) -> Figure:
    """rows: {label, dlio: MiB/s|None, kernel: MiB/s|None} per checkpoint; grouped bars, DLIO/kernel above each."""
    fig, ax = _fig_ax(ax, max(6.0, 1.2 * len(rows) + 2), 4.2)
    w = 0.38
    for i, side in enumerate(("dlio", "kernel")):
        ax.bar([j + (i - 0.5) * w for j in range(len(rows))], [r[side] or 0.0 for r in rows], w, color=COLORS[side],
               label="DLIO" if side == "dlio" else "kernel")
    for j, r in enumerate(rows):
        if r["dlio"] and r["kernel"]:
            ax.annotate(f"{r['dlio'] / r['kernel']:.2f}x", (j, max(r["dlio"], r["kernel"])), textcoords="offset points",
                        xytext=(0, 4), ha="center", fontsize=9)
    ax.set_xticks(range(len(rows)), [r["label"] for r in rows], fontsize=9)
    ax.set_ylabel("checkpoint write MiB/s")
    top = max([r[s] or 0.0 for r in rows for s in ("dlio", "kernel")] + [1.0])
    ax.set_ylim(0, top * 1.25)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", ncols=2, fontsize=9)
    return fig
