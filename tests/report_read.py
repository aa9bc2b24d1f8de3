"""Reading a rendered report back, for the report tests (tests/test_reports_*.py): the committed fixtures, the
documented number format, HTML, Markdown and LaTeX tables parsed into cell texts, and rendering a fixture's copy.
Expected numbers are computed by the tests from the fixtures' JSON/CSV, never copied from a rendered report."""
from __future__ import annotations

import contextlib
import html.parser
import io
import json
import re
import shutil
import statistics
from collections import Counter
from pathlib import Path

from common.rundir import SIDES  # noqa: F401  (the report tests take it from here)
from reports.__main__ import main as reports_main

DATA = Path(__file__).resolve().parent / "data"
RUN = DATA / "run-tiny"
PAPER = DATA / "paper-tiny"

SECTIONS = [("verdict", "Verdict"), ("workload-and-environment", "Workload and environment"),
            ("log-vfd-records", "Log VFD records (thesis Table 6.1)"),
            ("counts-against-the-analytic-model", "Counts against the analytic model"),
            ("runtime", "Runtime per phase (thesis Tables C.1-C.4)"), ("dftracer-timelines", "DFTracer timelines"),
            ("per-file-comparison", "Per-file system-level comparison"), ("similarity", "Similarity score"),
            ("darshan-analyses", "Darshan's own analyses")]


def shows(cell: str, v) -> bool:
    """whether a table cell shows the JSON value v by the documented rule, read back from the cell: '-' for none,
    integers exact, floats to 3 decimals (the cell within rounding of v), dicts as 'key=value, ...' in order"""
    if v is None:
        return cell == "-"
    if isinstance(v, bool):
        return cell == ("true" if v else "false")
    if isinstance(v, int):
        return re.fullmatch(r"-?\d+", cell) is not None and int(cell) == v
    if isinstance(v, float):
        return re.fullmatch(r"-?\d+\.\d{3}", cell) is not None and abs(float(cell) - v) <= 0.0005 + 1e-9
    if isinstance(v, dict):
        parts = [p.split("=", 1) for p in cell.split(", ")] if cell else []
        return len(parts) == len(v) and all(len(p) == 2 and p[0] == k and shows(p[1], x)
                                            for p, (k, x) in zip(parts, v.items(), strict=True))
    raise AssertionError(f"no rule here for a {type(v).__name__} value ({v!r}): extend shows()")


def pstats(xs: list[float]) -> dict:
    return {"min": min(xs), "max": max(xs), "mean": statistics.fmean(xs), "stdev": statistics.pstdev(xs)}


class _Tables(html.parser.HTMLParser):
    """table id -> rows of cell texts; also every <img> and every heading (level, id, text)"""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.imgs: list[dict] = []
        self.headings: list[tuple[int, str, str]] = []
        self._tid = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._h: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._tid = a.get("id", "")
            self.tables[self._tid] = []
        elif tag == "tr" and self._tid is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "img":
            self.imgs.append(a)
        elif re.fullmatch(r"h[1-6]", tag):
            self._h = [int(tag[1]), a.get("id", ""), []]

    def handle_endtag(self, tag):
        if tag == "table":
            self._tid = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._tid].append(self._row)
            self._row = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif self._h is not None and tag == f"h{self._h[0]}":
            self.headings.append((self._h[0], self._h[1], "".join(self._h[2]).strip()))
            self._h = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._h is not None:
            self._h[2].append(data)


def log_vfd_records(t: dict) -> tuple[Counter, int]:
    """(record counts by kind, opens) of a logvfd-<side>.json table, summed over ranks"""
    c: Counter = Counter()
    opens = 0
    for r in t["ranks"].values():
        opens += len(r["blocks"])
        for b in r["blocks"]:
            c.update(b)
    return c, opens


def parse_html(path: Path) -> _Tables:
    p = _Tables()
    p.feed(path.read_text())
    return p


def md_plain(cell: str) -> str:
    cell = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", cell)
    cell = re.sub(r"`([^`]+)`", r"\1", cell)
    return re.sub(r"\*\*([^*]+)\*\*", r"\1", cell).strip()


def md_tables(path: Path) -> list[list[list[str]]]:
    """every Markdown table (header row first), cells split on unescaped pipes, markup removed"""
    out, cur = [], None
    for line in path.read_text().splitlines():
        if line.startswith("|"):
            if re.fullmatch(r"\|(?:-+:?\|)+", line):
                continue
            cells = [c.replace("\\|", "|").replace("\\\\", "\\") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if cur is None:
                cur = []
                out.append(cur)
            cur.append([md_plain(c) for c in cells])
        else:
            cur = None
    return out


def table(rep, tid: str) -> dict[str, list[str]]:
    rows = rep.tables[tid]
    return {r[0]: r for r in rows[1:]}


def header(rep, tid: str) -> list[str]:
    return rep.tables[tid][0]


def render(src: Path, dst: Path) -> tuple[Path, str]:
    """copy a fixture and render it once per session (the tests only read the result)"""
    shutil.copytree(src, dst)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = reports_main([str(dst)])
    assert rc == 0
    return dst / "report", buf.getvalue()


def load(name: str, base: Path = RUN):
    return json.loads((base / name).read_text())


TEX_UNESCAPE = [(r"\allowbreak{}", ""), (r"\textbackslash{}", "\\"), (r"\textasciitilde{}", "~"),
                 (r"\textasciicircum{}", "^"), (r"\textless{}", "<"), (r"\textgreater{}", ">"), (r"\textbar{}", "|"),
                 ("{[}", "["), (r"\&", "&"), (r"\%", "%"), (r"\$", "$"), (r"\#", "#"), (r"\_", "_"), (r"\{", "{"),
                 (r"\}", "}")]


def tex_cell(cell: str) -> str:
    """a LaTeX table cell back to the text the HTML shows (markup dropped, escapes undone)"""
    cell = re.sub(r"\\text(?:tt|bf)\{((?:[^{}]|\\[{}]|\{\})*)\}", r"\1", cell.strip())
    for a, b in TEX_UNESCAPE:
        cell = cell.replace(a, b)
    return cell


def tex_table(path: Path) -> tuple[str, list[list[str]]]:
    """(label, header + rows) of one tables/<id>.tex, parsed by its booktabs rules"""
    lines = path.read_text().splitlines()
    label = re.search(r"\\label\{([^}]+)\}", path.read_text()).group(1)
    head = lines[lines.index(r"\toprule") + 1]
    if r"\begin{longtable}" in path.read_text():
        body = lines[lines.index(r"\endlastfoot") + 1:lines.index(r"\end{longtable}")]
    else:
        body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    rows = []
    for line in [head, *body]:
        assert line.endswith(r" \\"), f"{path.name}: {line!r}"
        rows.append([tex_cell(c) for c in line[:-3].split(" & ")])
    return label, rows
