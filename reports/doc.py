"""The report as data: a list of blocks (headings, paragraphs, tables, figures, ...) built once, then written as
Markdown, as one self-contained HTML page (figures as data: URIs, inline CSS, a CSP that forbids every external
load), and as LaTeX for papers: one booktabs table per file (tables/<id>.tex) and report.tex, the whole report as a
document that inputs them and includes each figure's PDF. Inline markup understood by every writer: `code`,
**bold**, [text](relative-link)."""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from common.blocks import Block, Bullets, EndFold, Figure, Fold, Heading, Para, Pre, Table, slug  # noqa: F401
from common.fileio import write_text_atomic
from common.rundir import REPORT_TABLES

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)")



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
        elif isinstance(b, Fold):
            out += [f"**{b.summary}**", ""]
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
        elif isinstance(b, Fold):
            body.append(f"<details><summary>{_inline_html(b.summary)}</summary>")
        elif isinstance(b, EndFold):
            body.append("</details>")
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


# ---------------------------------------------------------------- LaTeX

_TEX_ESCAPE = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
               "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
               ">": r"\textgreater{}", "|": r"\textbar{}",
               "[": "{[}"}   # a row starting with [ would be read as the optional argument of the previous \\
LONG_TABLE_ROWS = 40   # longer tables are written as longtable (page breaks, header repeated; one-column layouts)
_WIDE_CELL = 28        # a column holding a longer cell is a paragraph column (p{...}) so the table wraps


def _tex_text(s: str, breaks: bool = False) -> str:
    """Plain text escaped for LaTeX; with breaks, a line may break after . / , - (long dotted check names, file paths
    and run names in a narrow column or in typewriter type, which never hyphenates). The reports are ASCII; any
    other character outside Latin-1 (which pdflatex's UTF-8 input reads) is written as [U+XXXX], visibly, instead of
    breaking the build."""
    out = []
    for ch in str(s):
        if ch in _TEX_ESCAPE:
            out.append(_TEX_ESCAPE[ch])
        elif ord(ch) > 0xFF:
            out.append(f"{{[}}U+{ord(ch):04X}]")
        else:
            out.append(ch)
        if breaks and ch in "./,-":
            out.append(r"\allowbreak{}")
    return "".join(out)


def _inline_tex(text: str, breaks: bool = False) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(_tex_text(text[pos:m.start()], breaks))
        code, bold, ltext, _href = m.groups()
        if code is not None:
            out.append(r"\texttt{" + _tex_text(code, breaks) + "}")
        elif bold is not None:
            out.append(r"\textbf{" + _tex_text(bold, breaks) + "}")
        else:
            out.append(_tex_text(ltext, breaks))   # relative links mean nothing inside a paper: the text stays
        pos = m.end()
    out.append(_tex_text(text[pos:], breaks))
    return "".join(out)


def _col_spec(t: Table) -> str:
    """r for numeric columns, l for short text, and a ragged-right paragraph column for text with cells longer than
    _WIDE_CELL characters: those share what the other columns leave of the line (about 100 characters of \\small
    type per \\textwidth), in proportion to their mean cell length."""
    num = t.numeric or [False] * len(t.columns)
    cells = [[len(str(c))] + [len(str(r[i])) for r in t.rows if i < len(r)] for i, c in enumerate(t.columns)]
    wide = {i: sum(n) / len(n) for i, n in enumerate(cells) if max(n) > _WIDE_CELL and not num[i]}
    short = sum((max(n) + 2) / 100 for i, n in enumerate(cells) if i not in wide)
    budget = max(0.3, 0.97 - short - 0.02 * len(cells))
    total = sum(wide.values()) or 1.0
    spec = []
    for i in range(len(t.columns)):
        if i in wide:
            spec.append(rf">{{\raggedright\arraybackslash}}p{{{max(0.08, budget * wide[i] / total):.2f}\linewidth}}")
        else:
            spec.append("r" if num[i] else "l")
    return "".join(spec)


def to_latex_table(t: Table) -> str:
    """One table as a LaTeX fragment for \\input: booktabs rules, caption and \\label{<id>}. A table wider than the
    line is scaled down to it (measured by TeX in a box, so it holds in one- and two-column layouts alike); a table of
    more than LONG_TABLE_ROWS rows is a longtable (page breaks, never scaled). Needs \\usepackage{booktabs,array,
    graphicx} (and longtable for long tables)."""
    head = " & ".join(_tex_text(c) for c in t.columns) + r" \\"
    num = t.numeric or [False] * len(t.columns)
    rows = [" & ".join(_inline_tex(str(c), breaks=not n) for c, n in zip(r, num, strict=False)) + r" \\"
            for r in t.rows]
    cap = rf"\caption{{{_inline_tex(t.caption)}}}\label{{{t.id}}}" if t.caption else rf"\label{{{t.id}}}"
    spec = _col_spec(t)
    note = f"% {t.id}: written by h5dlio's reports (python -m reports); needs \\usepackage{{booktabs,array,graphicx}}"
    if len(t.rows) > LONG_TABLE_ROWS:
        return "\n".join([note + " and {longtable}", r"{\small", rf"\begin{{longtable}}{{{spec}}}", cap + r" \\",
                          r"\toprule", head, r"\midrule", r"\endfirsthead", r"\toprule", head, r"\midrule",
                          r"\endhead", r"\bottomrule", r"\endlastfoot", *rows, r"\end{longtable}", "}", ""])
    box = r"\hdliotablebox"
    return "\n".join([note, r"\begin{table}[htbp]", r"\centering", r"\small", cap,
                      rf"\ifdefined{box}\else\newsavebox{{{box}}}\fi",
                      rf"\sbox{{{box}}}{{\begin{{tabular}}{{{spec}}}", r"\toprule", head, r"\midrule", *rows,
                      r"\bottomrule", r"\end{tabular}}",
                      rf"\ifdim\wd{box}>\linewidth\resizebox{{\linewidth}}{{!}}{{\usebox{{{box}}}}}"
                      rf"\else\usebox{{{box}}}\fi", r"\end{table}", ""])


def table_path(t: Table) -> str:
    """Where a table's LaTeX goes, relative to the report folder."""
    return f"tables/{t.id}.tex"


def to_latex(title: str, blocks: list[Block]) -> str:
    """The whole report as a LaTeX document (pdflatex report.tex): tables through \\input of their own files,
    figures as their PDF. Its preamble is all a paper needs to \\input one of the tables."""
    sec = {2: "section", 3: "subsection", 4: "subsubsection"}
    body = []
    for b in blocks:
        if isinstance(b, Heading):
            label = b.id or slug(b.text)
            body.append(rf"\{sec.get(b.level, 'paragraph')}{{{_inline_tex(b.text)}}}\label{{sec:{label}}}")
        elif isinstance(b, Para):
            body.append(_inline_tex(b.text, breaks=True))
        elif isinstance(b, Bullets):
            body.append("\\begin{itemize}\n" + "\n".join(rf"\item {_inline_tex(x)}" for x in b.items)
                        + "\n\\end{itemize}")
        elif isinstance(b, Pre):
            text = "".join(ch if ord(ch) < 0x80 else f"[U+{ord(ch):04X}]" for ch in b.text.rstrip("\n"))
            body.append("{\\small\n\\begin{verbatim}\n" + text.replace("\\end{verbatim}", "\\end {verbatim}")
                        + "\n\\end{verbatim}\n}")
        elif isinstance(b, Table):
            body.append(rf"\input{{{table_path(b)}}}")
        elif isinstance(b, Fold):
            body.append(rf"\textbf{{{_inline_tex(b.summary)}}}")
        elif isinstance(b, Figure):
            if b.pdf:
                body.append("\\begin{figure}[htbp]\n\\centering\n"
                            rf"\includegraphics[width=\linewidth]{{{Path(b.path).with_suffix('.pdf').as_posix()}}}"
                            + f"\n\\caption{{{_inline_tex(b.caption)}}}\\label{{{b.id}}}\n\\end{{figure}}")
    return "\n".join([r"\documentclass[10pt]{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{lmodern}",
                      r"\usepackage[margin=2cm]{geometry}", r"\usepackage{booktabs,array}", r"\usepackage{longtable}",
                      r"\usepackage{graphicx}", r"\usepackage{float}", rf"\title{{{_inline_tex(title)}}}",
                      r"\date{}", r"\begin{document}", r"\maketitle", "", "\n\n".join(body), "",
                      r"\clearpage", r"\end{document}", ""])


def write(out_dir: Path, title: str, blocks: list[Block]) -> Path:
    """report.md, report.html, report.tex, figures/*.png and *.pdf, tables/*.tex into out_dir; returns the report.md
    path. Stale figures and tables of an earlier rendering are removed so the folder holds exactly what the report
    shows (only files of the kinds written here: nothing else in those folders is touched)."""
    figs, tabs = out_dir / "figures", out_dir / REPORT_TABLES
    figs.mkdir(parents=True, exist_ok=True)
    tabs.mkdir(exist_ok=True)
    keep = {Path(b.path).name for b in blocks if isinstance(b, Figure)}
    keep |= {Path(b.path).with_suffix(".pdf").name for b in blocks if isinstance(b, Figure) and b.pdf}
    keep |= {Path(table_path(b)).name for b in blocks if isinstance(b, Table)}
    for p in [*figs.glob("*.png"), *figs.glob("*.pdf"), *tabs.glob("*.tex")]:
        if p.name not in keep:
            p.unlink()
    for b in blocks:
        if isinstance(b, Figure):
            (out_dir / b.path).write_bytes(b.png)
            if b.pdf:
                (out_dir / b.path).with_suffix(".pdf").write_bytes(b.pdf)
        elif isinstance(b, Table):
            write_text_atomic(out_dir / table_path(b), to_latex_table(b))
    write_text_atomic(out_dir / "report.tex", to_latex(title, blocks))
    write_text_atomic(out_dir / "report.html", to_html(title, blocks))
    md = out_dir / "report.md"
    write_text_atomic(md, to_markdown(title, blocks))
    return md
