"""A report's figure declared and drawn to bytes: FigureSpec (its file name, caption and plot function), a new
figure, PNG and PDF bytes. matplotlib is imported only when a figure is drawn (profiles/ import common/, and the
harness imports profiles/). Figures are created without pyplot (no global figure registry to leak into) on an
explicit Agg canvas. reports/figures.py holds the report's own plots; a profile's report section declares its own
(profiles/dftracer/report.py)."""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.blocks import Figure as FigureBlock


@dataclass
class FigureSpec:
    """A declared figure: file name (figures/<name>.png), caption, and how to draw it."""
    name: str
    caption: str
    draw: Callable[[], Any]      # -> a matplotlib Figure

    def render(self) -> FigureBlock:
        fig = self.draw()
        raster = png(fig, clear=False)
        vector = pdf(fig)
        fig.clear()
        return FigureBlock(id=f"fig-{self.name}", path=f"figures/{self.name}.png", caption=self.caption,
                           png=raster, pdf=vector)


def new_figure(width: float = 8.0, height: float = 4.2, nrows: int = 1, ncols: int = 1, **kw):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def png(fig, clear: bool = True) -> bytes:
    """The PNG bytes (no software or date stamp); clears the figure unless told not to."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    if clear:
        fig.clear()
    return buf.getvalue()


def pdf(fig) -> bytes:
    """The same figure as vector PDF for LaTeX: TrueType (Type 42) fonts, which publishers'
    checks accept where matplotlib's default Type 3 fonts fail, and no date or producer stamp, so a re-rendering of the
    same data gives the same bytes."""
    from matplotlib import rc_context
    buf = io.BytesIO()
    with rc_context({"pdf.fonttype": 42}):
        fig.savefig(buf, format="pdf", metadata={"Creator": None, "Producer": None, "CreationDate": None})
    return buf.getvalue()
