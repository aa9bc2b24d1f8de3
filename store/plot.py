"""The trend figure: one number of the store's runs over time. Drawn with fig/ax methods on an explicit Agg canvas
(no pyplot state, as reports/figures.py), written as PNG and cleared."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def trend(points: list[dict], metric: str, out: Path) -> Path:
    """points: {date (ISO), values, name} per run, oldest first; each run's mean as a point, its repetitions' range
    as an error bar. Writes out (PNG) and returns it."""
    fig = Figure(figsize=(8, 4.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    xs = [datetime.fromisoformat(p["date"]) for p in points]
    means = [sum(p["values"]) / len(p["values"]) for p in points]
    err = [[m - min(p["values"]) for m, p in zip(means, points, strict=True)],
           [max(p["values"]) - m for m, p in zip(means, points, strict=True)]]
    ax.errorbar(xs, means, yerr=err, fmt="o-", color="#2b5797", ecolor="#222", capsize=4)
    ax.set_title(f"{metric}: each run's mean (bar: its repetitions' range)")
    ax.set_xlabel("run date (UTC)")
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", metadata={"Software": None})
    fig.clear()
    return out
