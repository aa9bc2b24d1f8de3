"""The report's LaTeX output: tables/*.tex equal the HTML tables, vector PDF figures, reproducible bytes, and (with
pdflatex, `make latex`) report.tex, docs/reports.md's example and every special character compile."""
from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from report_read import tex_table

from reports.__main__ import main as reports_main


@pytest.mark.parametrize("which", ["rendered", pytest.param("paper", marks=pytest.mark.slow)])
def test_latex_tables_equal_the_html_tables(which, request):
    """one tables/<id>.tex per table of the report, labelled <id>, with the HTML table's header and cells; booktabs
    rules and a caption; report.tex inputs each in report order"""
    r = request.getfixturevalue(which)   # the paper report only when asked: rendering it is slow
    html_tabs = r["html"].tables
    files = sorted((r["dir"] / "tables").glob("*.tex"))
    assert sorted(p.stem for p in files) == sorted(html_tabs)
    for p in files:
        label, rows = tex_table(p)
        assert label == p.stem
        assert rows == html_tabs[p.stem], p.name
        text = p.read_text()
        assert text.count(r"\toprule") >= 1 and r"\bottomrule" in text and r"\caption{" in text
    inputs = re.findall(r"\\input\{tables/([^}]+)\.tex\}", (r["dir"] / "report.tex").read_text())
    assert inputs == list(html_tabs), "report.tex inputs every table once, in the report's order"


@pytest.mark.parametrize("which", ["rendered", pytest.param("paper", marks=pytest.mark.slow)])
def test_every_figure_has_a_vector_pdf(which, request):
    """figures/<name>.pdf beside each PNG: a one-page vector PDF (no embedded raster image), TrueType fonts (no
    Type 3, which publishers' checks reject), no creation date (the same data gives the same bytes)"""
    d = request.getfixturevalue(which)["dir"] / "figures"
    pngs, pdfs = sorted(p.stem for p in d.glob("*.png")), sorted(p.stem for p in d.glob("*.pdf"))
    assert pngs == pdfs and pdfs
    for p in d.glob("*.pdf"):
        b = p.read_bytes()
        assert b.startswith(b"%PDF-") and b.rstrip().endswith(b"%%EOF"), p.name
        assert b"/Subtype /Image" not in b and b"/Type3" not in b and b"CreationDate" not in b, p.name
        assert b.count(b"/Type /Page\n") + b.count(b"/Type /Page ") + b.count(b"/Type /Page>") <= 1 or \
            len(re.findall(rb"/Type\s*/Page[^s]", b)) == 1, p.name
    tex = (d.parent / "report.tex").read_text()
    assert sorted(re.findall(r"\\includegraphics\[[^]]*\]\{figures/([^}]+)\.pdf\}", tex)) == pdfs


@pytest.mark.slow
def test_rerendering_gives_the_same_latex_and_pdf_bytes(rendered, tmp_path):
    again = tmp_path / "again"
    shutil.copytree(rendered["run"], again)
    with contextlib.redirect_stdout(io.StringIO()):
        assert reports_main([str(again)]) == 0
    for sub in ("tables", "figures"):
        for p in (rendered["dir"] / sub).glob("*.[tp][ed][xf]"):
            assert p.read_bytes() == (again / "report" / sub / p.name).read_bytes(), p.name


def _pdflatex(tex: Path) -> subprocess.CompletedProcess:
    if not shutil.which("pdflatex"):
        pytest.skip("no pdflatex (`make latex` installs texlive-latex-base/-recommended from Debian)")
    p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tex.parent,
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout[-3000:]
    return p


def _pdftotext(pdf: Path) -> str:
    if not shutil.which("pdftotext"):
        pytest.skip("no pdftotext (`make latex` installs poppler-utils from Debian)")
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.latex
@pytest.mark.parametrize("which", ["rendered", pytest.param("paper", marks=pytest.mark.slow)])
def test_report_tex_compiles_with_pdflatex(which, request):
    """report.tex is a complete document: pdflatex builds it; the PDF's text holds the verdict and every table's
    caption number"""
    r = request.getfixturevalue(which)
    d = r["dir"]
    _pdflatex(d / "report.tex")
    text = _pdftotext(d / "report.pdf")
    n = len(list((d / "tables").glob("*.tex")))
    assert all(f"Table {i}:" in text for i in range(1, n + 1)), f"captions 1..{n} not all in the PDF"
    if which == "rendered":
        v = json.loads((r["run"] / "verdict.json").read_text())
        assert f"Verdict: {v['verdict'].upper()}" in text
        status = Counter(c["status"] for c in v["checks"])
        assert len(re.findall(r"\bPASS\b", text)) >= status["pass"] > 0
    fonts = subprocess.run(["pdffonts", str(d / "report.pdf")], capture_output=True, text=True, check=True).stdout
    assert "Type 3" not in fonts, f"bitmap (Type 3) fonts in the PDF: is lmodern installed?\n{fonts}"


@pytest.mark.latex
def test_docs_latex_example_compiles_with_a_table_and_a_figure(rendered, tmp_path):
    """docs/reports.md's LaTeX snippet, as written, in a minimal document next to a rendered report: it compiles, and
    the verdict table's first check and a figure land in the PDF"""
    page = (Path(__file__).resolve().parent.parent / "docs" / "reports.md").read_text()
    blocks = re.findall(r"```latex\n(.*?)```", page, re.S)
    assert len(blocks) == 1, "docs/reports.md shows one ```latex example"
    body = blocks[0]
    assert r"\usepackage{booktabs" in body and r"\input{" in body and r"\includegraphics" in body
    doc_ = body.replace("runs/<id>/report/", str(rendered["dir"]) + "/")
    assert "<id>" not in doc_, "the page's example paths are runs/<id>/report/..."
    tex = tmp_path / "paper.tex"
    tex.write_text(doc_)
    _pdflatex(tex)
    text = _pdftotext(tmp_path / "paper.pdf")
    v = json.loads((rendered["run"] / "verdict.json").read_text())
    flat = re.sub(r"\s+", "", text)   # a narrow column breaks a check name after its dots
    assert all(part in flat for c in v["checks"] for part in c["name"].split(".")), "a check missing from the PDF"
    assert len(re.findall(r"\bPASS\b", text)) == sum(c["status"] == "pass" for c in v["checks"])
    assert b"/Subtype /Form" in (tmp_path / "paper.pdf").read_bytes(), "the figure's PDF was not included"


@pytest.mark.latex
def test_latex_escapes_every_special_character(tmp_path):
    """a table whose cells hold LaTeX's special characters compiles and prints them literally"""
    from reports import doc
    cells = ["a\\b", "50% & more", "$HOME #1", "x_y {z}", "~user ^up", "<a|b>", "`code_1` **bold**", "é", "→"]
    t = doc.Table("tbl-esc", ["cell"], [[c] for c in cells], "Special characters: 100% _raw_")
    tex = tmp_path / "esc.tex"
    tex.write_text("\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{lmodern,booktabs,array}"
                   "\\begin{document}\n" + doc.to_latex_table(t) + "\\end{document}\n")
    _pdflatex(tex)
    text = _pdftotext(tmp_path / "esc.pdf")
    for want in ["a\\b", "50% & more", "$HOME #1", "x_y {z}", "~user", "<a|b>", "code_1 bold", "é", "[U+2192]",
                 "100% _raw_"]:
        assert want in text, f"{want!r} not printed literally:\n{text}"
