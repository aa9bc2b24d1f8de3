"""The report as data: a list of blocks (headings, paragraphs, tables, figures, ...) built once, then written as
Markdown and as one self-contained HTML page (figures as data: URIs, inline CSS, a CSP that forbids every external
load). Inline markup understood by both writers: `code`, **bold**, [text](relative-link)."""
from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path


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


Block = Heading | Para | Bullets | Pre | Table | Figure

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# ---------------------------------------------------------------- Markdown

def _md_cell(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(title: str, blocks: list[Block]) -> str:
    out = [f"# {title}", ""]
    for b in blocks:
        if isinstance(b, Heading):
            out += [f"{'#' * b.level} {b.text}", ""]
        elif isinstance(b, Para):
            out += [b.text, ""]
        elif isinstance(b, Bullets):
            out += [f"- {x}" for x in b.items] + [""]
        elif isinstance(b, Pre):
            out += ["```", b.text.rstrip("\n"), "```", ""]
        elif isinstance(b, Table):
            if b.caption:
                out += [f"*{b.caption}*", ""]
            num = b.numeric or [False] * len(b.columns)
            out.append("| " + " | ".join(_md_cell(c) for c in b.columns) + " |")
            out.append("|" + "|".join("---:" if n else "---" for n in num) + "|")
            out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in b.rows]
            out.append("")
        elif isinstance(b, Figure):
            out += [f"![{b.caption}]({b.path})", "", f"*{b.caption}*", ""]
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- HTML

def _inline_html(text: str) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        code, bold, ltext, href = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            out.append(f"<strong>{html.escape(bold)}</strong>")
        else:
            out.append(f'<a href="{html.escape(href, quote=True)}">{html.escape(ltext)}</a>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1180px;
padding:1.2em 2em;color:#1d2330;background:#fff}
h1{font-size:1.7em;border-bottom:2px solid #2b5797;padding-bottom:.2em}
h2{font-size:1.35em;margin-top:1.8em;border-bottom:1px solid #ccd;padding-bottom:.15em}
h3{font-size:1.1em;margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
th,td{border:1px solid #c8ccd6;padding:3px 8px;vertical-align:top;text-align:left}
th{background:#eef1f7}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
caption{caption-side:top;text-align:left;font-style:italic;padding:.2em 0;color:#445}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;background:#f4f5f8}
pre{padding:.6em;overflow-x:auto;border:1px solid #dde}
figure{margin:1em 0}
figure img{max-width:100%;border:1px solid #dde}
figcaption{font-style:italic;color:#445}
td.st-pass{background:#dff3e3;color:#135c25;font-weight:600}
td.st-fail{background:#fbe0e0;color:#8a1414;font-weight:600}
td.st-skip{background:#eceef2;color:#555}
nav ul{columns:2;font-size:13.5px}
"""

_STATUS = {"PASS": "st-pass", "FAIL": "st-fail", "skip": "st-skip", "yes": "st-pass", "NO": "st-fail"}


def to_html(title: str, blocks: list[Block]) -> str:
    toc = [b for b in blocks if isinstance(b, Heading) and b.level == 2]
    body = [f"<h1>{_inline_html(title)}</h1>"]
    if toc:
        body.append("<nav><ul>" + "".join(f'<li><a href="#{b.id or slug(b.text)}">{html.escape(b.text)}</a></li>'
                                          for b in toc) + "</ul></nav>")
    for b in blocks:
        if isinstance(b, Heading):
            body.append(f'<h{b.level} id="{b.id or slug(b.text)}">{_inline_html(b.text)}</h{b.level}>')
        elif isinstance(b, Para):
            body.append(f"<p>{_inline_html(b.text)}</p>")
        elif isinstance(b, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline_html(x)}</li>" for x in b.items) + "</ul>")
        elif isinstance(b, Pre):
            body.append(f"<pre>{html.escape(b.text)}</pre>")
        elif isinstance(b, Table):
            num = b.numeric or [False] * len(b.columns)
            rows = []
            for r in b.rows:
                cells = []
                for c, n in zip(r, num, strict=False):
                    cls = _STATUS.get(str(c)) or ("num" if n else "")
                    attr = f' class="{cls}"' if cls else ""
                    cells.append(f"<td{attr}>{_inline_html(str(c))}</td>")
                rows.append("<tr>" + "".join(cells) + "</tr>")
            cap = f"<caption>{_inline_html(b.caption)}</caption>" if b.caption else ""
            body.append(f'<table id="{b.id}">{cap}<thead><tr>'
                        + "".join(f"<th>{html.escape(c)}</th>" for c in b.columns)
                        + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
        elif isinstance(b, Figure):
            uri = "data:image/png;base64," + base64.b64encode(b.png).decode("ascii")
            body.append(f'<figure id="{b.id}"><img src="{uri}" alt="{html.escape(b.caption, quote=True)}">'
                        f"<figcaption>{_inline_html(b.caption)}</figcaption></figure>")
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write(out_dir: Path, title: str, blocks: list[Block]) -> Path:
    """report.md, report.html and figures/*.png into out_dir; returns the report.md path. Stale figures of an
    earlier rendering are removed so the folder holds exactly what the report shows."""
    figs = out_dir / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    keep = {Path(b.path).name for b in blocks if isinstance(b, Figure)}
    for p in figs.glob("*.png"):
        if p.name not in keep:
            p.unlink()
    for b in blocks:
        if isinstance(b, Figure):
            (out_dir / b.path).write_bytes(b.png)
    _write_atomic(out_dir / "report.html", to_html(title, blocks))
    md = out_dir / "report.md"
    _write_atomic(md, to_markdown(title, blocks))
    return md


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
