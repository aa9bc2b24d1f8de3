"""Darshan's own analyses (profiles/darshan/analyses.py) on the real logs of tests/data/darshan (Darshan 3.5.0, see its
README): pydarshan's job summary and drishti's report per log, run by validate's `darshan.analyses` row, linked from
the rendered report; a corrupt log is a note, not a crash; and the metadata rate from Darshan's counters. Expected
values come from Darshan's own text dump of the counters (c_sec2.posix.txt, darshan-parser) or from the fixture
programs, never from the code under test."""
from __future__ import annotations

import html.parser
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from profiles import darshan
from profiles.darshan import analyses as darshan_analyses
from reports.__main__ import main as reports_main
from validate.checks import Run

DATA = Path(__file__).resolve().parent / "data" / "darshan"
DATA_DIR = "/scratch/dlio/data"   # the fixture programs' data folder (README)


def counters() -> tuple[dict, list[tuple[str, str, float]]]:
    """c_sec2.posix.txt (darshan-parser's own text): the totals, and (counter, file, value) per record"""
    totals, rows = {}, []
    for line in (DATA / "c_sec2.posix.txt").read_text().splitlines():
        if line.startswith("total_"):
            k, v = line.split(": ")
            totals[k.removeprefix("total_")] = float(v)
        elif line.startswith("POSIX\t"):
            f = line.split("\t")
            rows.append((f[3], f[5], float(f[4])))
    return totals, rows


def need_tools() -> None:
    t = darshan_analyses.tools()
    for k in ("summary", "drishti"):
        if t[k]:
            pytest.skip(f"Darshan's analyses cannot run here: {t[k]}")


def make_run(root: Path, logs: dict[str, list[Path | tuple[str, bytes]]]) -> Path:
    """a run directory with a finished Darshan launch per side holding the given logs (a path, or (name, bytes))"""
    steps = {}
    for side, items in logs.items():
        d = root / side / "darshan" / "logs"
        d.mkdir(parents=True)
        for it in items:
            if isinstance(it, Path):
                shutil.copy(it, d)
            else:
                (d / it[0]).write_bytes(it[1])
        steps[f"{side}.darshan"] = {"status": "ok", "rc": 0, "wall_s": 1.0, "workdir": str(root / side / "darshan")}
    (root / "tables").mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({
        "run_id": root.name, "ranks": 2, "status": "complete", "profiles": ["darshan"], "steps": steps,
        "workload": {"name": "unet3d", "scale": "tiny", "config": {}}}))
    return root


def analyse(root: Path) -> dict:
    run = Run(root)
    rows = darshan_analyses.analyse(run)
    run.store_tables()
    return {r["name"]: r for r in rows}


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href", ""))


def section(md: str) -> str:
    return md[md.index("\n## Darshan's own analyses\n"):]


def test_insights_parser_on_drishti_text_by_hand():
    """drishti's box layout: ▶ insight, ↪ details, ↪ Recommendations: and the lines wrapped under them"""
    text = "\n".join([
        "╭─ DRISHTI v.0.5 ───╮", "│  JOB: 1 │", "╰─ 1 critical issues, 2 warnings, and 3 recommendations ───╯",
        "╭─ METADATA ───╮", "│  ▶ Application is read operation intensive (10.00% writes vs. 90.00% reads)  │",
        "│  ▶ High number (50.00%) of misaligned   │", "│  file requests  │", "│    ↪ Recommendations:  │",
        "│      ↪ Consider aligning the requests  │", "│  to the block size  │", "│  │", "╰───╯",
        "╭─ OPERATIONS ───╮", "│  ▶ Load imbalance on 1 shared file │", "│    ↪ 100.00% on \"a.h5\" │", "╰───╯",
        "╭─ THRESHOLDS ───╮", "│ Maximum misaligned requests ratio: 10.0% │", "╰───╯"])
    got = darshan_analyses.insights(text)
    assert got["counts"] == "1 critical issues, 2 warnings, and 3 recommendations"
    assert got["insights"] == [
        {"section": "METADATA", "text": "Application is read operation intensive (10.00% writes vs. 90.00% reads)",
         "recommendations": []},
        {"section": "METADATA", "text": "High number (50.00%) of misaligned file requests",
         "recommendations": ["Consider aligning the requests to the block size"]},
        {"section": "OPERATIONS", "text": "Load imbalance on 1 shared file; 100.00% on \"a.h5\"",
         "recommendations": []}]


@pytest.mark.slow
def test_summary_and_drishti_on_real_logs_linked_from_the_report(tmp_path):
    need_tools()
    root = make_run(tmp_path / "run", {"dlio": [DATA / "py_src.darshan"], "kernel": [DATA / "c_sec2.darshan"]})
    row = analyse(root)["darshan.analyses"]
    assert row["status"] == "pass" and not row["required"], row
    t = json.loads((root / "tables" / "darshan-analyses.json").read_text())
    by = {r["side"]: r for r in t["logs"]}
    assert set(by) == {"dlio", "kernel"} and t["tools"] == {"darshan": "3.5.0", "drishti-io": "0.8"}
    # the job summaries are about these jobs: the programs, their data files and the modules each log holds (README)
    k = (root / by["kernel"]["summary"]).read_text()
    assert "h5sample /scratch/dlio/data/train_img_1_of_1.h5 2 sec2" in k and "train_img_1_of_1.h5" in k
    for mod in ("POSIX", "MPI-IO", "HDF5", "STDIO"):
        assert f"Per-Module Statistics: {mod}" in k, mod
    d = (root / by["dlio"]["summary"]).read_text()
    assert "h5py_sample.py" in d and "py_img_1_of_1.h5" in d and "Per-Module Statistics: STDIO" not in d
    # drishti: its three outputs, and an insight checked against Darshan's own counter dump
    assert [Path(p).suffix for p in by["kernel"]["drishti"]] == [".txt", ".html", ".csv"]
    tot, _ = counters()
    ops = tot["POSIX_READS"] + tot["POSIX_WRITES"]
    want = (f"Application is read operation intensive ({100 * tot['POSIX_WRITES'] / ops:.2f}% writes vs. "
            f"{100 * tot['POSIX_READS'] / ops:.2f}% reads)")
    texts = [x["text"] for x in by["kernel"]["insights"]]
    assert want in texts and want in (root / by["kernel"]["drishti"][0]).read_text()
    assert f"Application issues a high number ({100 * tot['POSIX_FILE_NOT_ALIGNED'] / ops:.2f}%) of misaligned " \
           "file requests" in texts
    # the report links every output by its path, relative to where the report is written
    out = tmp_path / "elsewhere" / "rep"
    assert reports_main([str(root), "--out", str(out)]) == 0
    md = section((out / "report.md").read_text())
    links = re.findall(r"\[([^\]]+)\]\(([^)\s]+)\)", md)
    shown = {p for r in t["logs"] for p in [r["summary"], *r["drishti"]]}
    assert {text for text, _ in links} == shown
    for text, href in links:
        assert (out / unquote(href)).resolve() == (root / text).resolve() and (root / text).is_file()
    p = _Links()
    p.feed((out / "report.html").read_text())
    hrefs = [h for h in p.hrefs if not h.startswith("#")]
    assert sorted(hrefs) == sorted(href for _, href in links)
    assert want in md


@pytest.mark.slow
def test_a_corrupt_log_is_a_note_not_a_crash(tmp_path):
    need_tools()
    cut = (DATA / "c_sec2.darshan").read_bytes()[:1500]   # a log cut mid-write
    root = make_run(tmp_path / "run", {"kernel": [("cut.darshan", cut), DATA / "c_sec2.darshan"],
                                       "dlio": [("garbage.darshan", b"not a darshan log\n")]})
    row = analyse(root)["darshan.analyses"]
    assert row["status"] == "fail" and not row["required"] and "failed" in row["detail"]
    t = json.loads((root / "tables" / "darshan-analyses.json").read_text())
    by = {Path(r["log"]).name: r for r in t["logs"]}
    for bad in ("cut.darshan", "garbage.darshan"):
        assert by[bad]["summary"] is None and "pydarshan summary failed" in by[bad]["summary_error"]
        assert by[bad]["drishti"] == [] and "drishti failed" in by[bad]["drishti_error"]
    assert by["c_sec2.darshan"]["summary"] and by["c_sec2.darshan"]["drishti"]   # the good log still analysed
    assert not (root / "kernel" / "darshan" / "analysis" / "summary" / "cut.html").exists()  # no half report
    assert reports_main([str(root)]) == 0
    md = section((root / "report" / "report.md").read_text())
    assert "failed: pydarshan summary failed" in md and "failed: drishti failed" in md


def test_tools_missing_is_said_in_the_verdict_and_the_report(tmp_path, monkeypatch):
    why = "drishti-io not installed for /x/python (pinned in requirements-test.txt: make venv)"
    t = {"versions": {"darshan": "3.5.0", "drishti-io": None}, "summary": "pydarshan's summary needs seaborn",
         "drishti": why}
    monkeypatch.setattr(darshan_analyses, "tools", lambda: t)
    root = make_run(tmp_path / "run", {"kernel": [DATA / "c_sec2.darshan"]})
    row = analyse(root)["darshan.analyses"]
    assert row["status"] == "skip" and why in row["detail"]
    assert reports_main([str(root)]) == 0
    md = section((root / "report" / "report.md").read_text())
    assert f"Not produced here: {why}." in md and "drishti-io not installed" in md
    assert not (root / "kernel" / "darshan" / "analysis").exists()


def test_no_darshan_launch_no_row_and_the_report_says_why(tmp_path):
    root = make_run(tmp_path / "run", {})
    assert analyse(root) == {}
    assert not (root / "tables" / "darshan-analyses.json").exists()
    m = json.loads((root / "manifest.json").read_text())
    m["skipped_profiles"] = {"darshan": darshan.runtime.NO_RUNTIME}
    (root / "manifest.json").write_text(json.dumps(m))
    assert reports_main([str(root)]) == 0
    assert darshan.runtime.NO_RUNTIME in section((root / "report" / "report.md").read_text())


def test_metadata_rate_from_darshans_counters(tmp_path):
    """opens and POSIX_F_META_TIME of the records under the data folder (darshan-parser's text), over the epochs the
    program timed (a kernel output.json written here: 2 epochs of 0.5 s and 0.25 s)"""
    _, rows = counters()
    opens = sum(v for c, f, v in rows if c == "POSIX_OPENS" and f.startswith(DATA_DIR + "/"))
    meta = sum(v for c, f, v in rows if c == "POSIX_F_META_TIME" and f.startswith(DATA_DIR + "/"))
    assert opens == 12  # the data file's 10 opens (2 ranks x (1 create + 4 samples)), 2 lock-test files
    step = tmp_path / "kernel" / "darshan"
    (step / "logs").mkdir(parents=True)
    shutil.copy(DATA / "c_sec2.darshan", step / "logs")
    m = darshan.parse.parse(step, "kernel", Path(DATA_DIR), programs=("h5sample",))["metadata"]["all"]
    assert m["opens"] == opens and m["metadata_s"] == pytest.approx(meta, abs=5e-6)  # the dump has 6 decimals
    assert m["opens_per_s"] is None and m["epochs"] is None  # no epoch times: no rate, not a made-up one
    (step / "out").mkdir()
    (step / "out" / "output.json").write_text(json.dumps({"train": {"epochs": [{"observed_s": 0.5},
                                                                               {"observed_s": 0.25}]}}))
    m = darshan.parse.parse(step, "kernel", Path(DATA_DIR), programs=("h5sample",))["metadata"]["all"]
    assert m["epochs"] == 2 and m["epoch_s"] == pytest.approx(0.75)
    assert m["opens_per_s"] == pytest.approx(opens / 0.75) and m["metadata_s_per_epoch"] == pytest.approx(
        meta / 2, abs=5e-6)


def _fake_tools(monkeypatch) -> list[str]:
    """the two analyses replaced by stand-ins that record which logs they were given (their real runs are the slow
    tests above): what is tested here is which logs are chosen and what the row says"""
    seen: list[str] = []
    t = {"versions": {"darshan": "3.5.0", "drishti-io": "0.8"}, "summary": None, "drishti": None}
    monkeypatch.setattr(darshan_analyses, "tools", lambda: t)

    def summary(log, out):
        seen.append(log.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("summary")

    monkeypatch.setattr(darshan_analyses, "summary", summary)
    monkeypatch.setattr(darshan_analyses, "drishti", lambda log, outdir: {"files": [], "error": None})
    return seen


def test_auto_analyses_the_first_and_last_log_of_a_launch_and_says_which_were_skipped(tmp_path, monkeypatch):
    seen = _fake_tools(monkeypatch)
    log = (DATA / "c_sec2.darshan").read_bytes()
    big = b"\0" * (darshan_analyses.AUTO_MAX_BYTES + 1)
    root = make_run(tmp_path / "run", {"kernel": [(f"r{i}.darshan", log) for i in range(4)],
                                       "dlio": [("a.darshan", log), ("b.darshan", big)]})
    monkeypatch.delenv(darshan_analyses.MODE_ENV, raising=False)
    row = analyse(root)["darshan.analyses"]
    assert sorted(seen) == ["a.darshan", "r0.darshan", "r3.darshan"]
    t = json.loads((root / "tables" / "darshan-analyses.json").read_text())
    skipped = {Path(s["log"]).name: s["why"] for s in t["skipped"]}
    assert t["mode"] == "auto" and sorted(skipped) == ["b.darshan", "r1.darshan", "r2.darshan"]
    assert f"{len(big)} bytes, over" in skipped["b.darshan"] and "first and the last" in skipped["r1.darshan"]
    assert row["status"] == "pass" and "3 log(s) not analysed (H5DLIO_DARSHAN_ANALYSES=auto" in row["detail"]
    seen.clear()                                         # the control: all analyses every log, skips none
    monkeypatch.setenv(darshan_analyses.MODE_ENV, "all")
    row = analyse(root)["darshan.analyses"]
    assert len(seen) == 6 and "not analysed" not in row["detail"]
    seen.clear()
    monkeypatch.setenv(darshan_analyses.MODE_ENV, "none")
    row = analyse(root)["darshan.analyses"]
    assert seen == [] and row["status"] == "skip" and "all 6 not analysed (H5DLIO_DARSHAN_ANALYSES=none" in \
        row["detail"]
    assert reports_main([str(root)]) == 0
    md = section((root / "report" / "report.md").read_text())
    assert "Not analysed: 6 log(s) (`DARSHAN_ANALYSES=none`: H5DLIO_DARSHAN_ANALYSES=none;" in md


def test_a_bad_mode_is_refused_by_validate_naming_the_variable(tmp_path, monkeypatch, capsys):
    from validate.__main__ import main as validate_main
    root = make_run(tmp_path / "run", {"kernel": [DATA / "c_sec2.darshan"]})
    monkeypatch.setenv(darshan_analyses.MODE_ENV, "some")
    assert validate_main([str(root)]) == 2
    assert "H5DLIO_DARSHAN_ANALYSES='some': not one of auto, all, none" in capsys.readouterr().err
    assert not (root / "verdict.json").exists()
