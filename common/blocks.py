"""The report's blocks as plain data (headings, paragraphs, tables, figures, ...): what reports/ lays out and writes
(reports/doc.py: Markdown, HTML, LaTeX) and what a profile's report section builds (Profile.report_sections), so both
may build them without a profile importing reports/. Nothing here renders."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Heading:
    level: int
    text: str
    id: str = ""


@dataclass
class Para:
    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Pre:
    text: str


@dataclass
class Table:
    id: str                      # HTML id (tbl-...), also the anchor tests look tables up by
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] = field(default_factory=list)   # right-align these columns


@dataclass
class Figure:
    id: str
    path: str                    # relative to the report folder: figures/<name>.png
    caption: str
    png: bytes
    pdf: bytes = b""             # the same figure as vector PDF (figures/<name>.pdf), for LaTeX


@dataclass
class Fold:
    """The blocks up to the next EndFold are folded away in HTML (<details>, opened by a click on `summary`); the
    other formats show the summary in bold and the blocks as they are."""
    summary: str


@dataclass
class EndFold:
    pass


Block = Heading | Para | Bullets | Pre | Table | Figure | Fold | EndFold


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def demote(blocks: list[Block], prefix: str) -> list[Block]:
    """A run report's section shown inside another report (the paper's): each heading one level down, and the ids of
    headings and tables made unique with prefix."""
    out: list[Block] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(Heading(b.level + 1, b.text, f"{prefix}-{b.id or slug(b.text)}"))
        elif isinstance(b, Table):
            out.append(Table(f"{b.id}-{prefix}", b.columns, b.rows, b.caption, b.numeric))
        else:
            out.append(b)
    return out
