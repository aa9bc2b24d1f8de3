"""The trend figure: one number of the store's runs over time. Drawn with fig/ax methods on an explicit Agg canvas
(no pyplot state, as reports/figures.py), written as PNG and cleared."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

COLORS = ["#2b5797", "#d9822b", "#2b8a3e", "#c92a2a", "#7048e8", "#0c8599"]
LEGEND_MAX = 8  # config hashes named in the legend (more: the lines alone)


def trend(points: list[dict], metric: str, out: Path) -> Path:
    """points: {date (ISO), values, config (its config_hash)} per run, oldest first; each run's mean as a point, its
    repetitions' range as an error bar, the runs of one config hash joined by a line of their own. Writes out (PNG)
    and returns it."""
    fig = Figure(figsize=(8, 4.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    groups: dict[str, list[dict]] = {}
    for p in points:
        groups.setdefault(p["config"] or "-", []).append(p)
    for i, (cfg, ps) in enumerate(groups.items()):
        xs = [datetime.fromisoformat(p["date"]) for p in ps]
        means = [sum(p["values"]) / len(p["values"]) for p in ps]
        err = [[m - min(p["values"]) for m, p in zip(means, ps, strict=True)],
               [max(p["values"]) - m for m, p in zip(means, ps, strict=True)]]
        ax.errorbar(xs, means, yerr=err, fmt="o-", color=COLORS[i % len(COLORS)], ecolor="#222", capsize=4,
                    label=f"config {cfg[:12]}")
    if len(groups) <= LEGEND_MAX:
        ax.legend(fontsize="small")
    ax.set_title(f"{metric}: each run's mean (bar: its repetitions' range)")
    ax.set_xlabel("run date (UTC)")
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", metadata={"Software": None})
    fig.clear()
    return out
