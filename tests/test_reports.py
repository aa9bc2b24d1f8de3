"""reports/: rendering tests on committed fixtures (tests/data/run-tiny: a real tiny unet3d run's manifest, verdict
and tables; tests/data/paper-tiny: a real tiny `make paper` directory without datasets). Every expected number is
computed here from the fixture's JSON/CSV, never copied from a rendered report. The HTML is opened in headless
Chromium (DevTools protocol over --remote-debugging-pipe): screenshot non-blank, no broken images, no console
errors, no request leaving the page. Without Chromium that test skips and says why (`make chromium` installs it)."""
from __future__ import annotations

import base64
import contextlib
import html.parser
import io
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from reports.__main__ import main as reports_main

DATA = Path(__file__).resolve().parent / "data"
RUN = DATA / "run-tiny"
PAPER = DATA / "paper-tiny"
SIDES = ("dlio", "kernel")
SECTIONS = [("verdict", "Verdict"), ("workload-and-environment", "Workload and environment"),
            ("log-vfd-records", "Log VFD records (thesis Table 6.1)"),
            ("counts-against-the-analytic-model", "Counts against the analytic model"),
            ("runtime", "Runtime per phase (thesis Tables C.1-C.4)"), ("dftracer-timelines", "DFTracer timelines"),
            ("per-file-comparison", "Per-file system-level comparison"), ("similarity", "Similarity score"),
            ("darshan-analyses", "Darshan's own analyses")]


# ---------------------------------------------------------------- the number formats the report documents

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


def test_value_format_rule_by_hand():
    """the rule docs/reports.md states for expected/observed cells, on values written out by hand"""
    from reports.rundir import value
    assert [value(x) for x in (None, True, False, 0, 28, -3, 1.0, 0.0326, 2.0004, 52.96509464581808)] == \
        ["-", "true", "false", "0", "28", "-3", "1.000", "0.033", "2.000", "52.965"]
    assert value({"opens": 28, "raw_bytes": 32584446, "mean": 1.25}) == "opens=28, raw_bytes=32584446, mean=1.250"
    assert value([1, 0.5, None, "x"]) == "[1, 0.500, -, x]"
    assert value((2, [3])) == "[2, [3]]"
    assert value("2.0.0") == "2.0.0"
    assert shows("opens=28, mean=1.250", {"opens": 28, "mean": 1.2504}) and not shows("1.25", 1.25)
    assert not shows("opens=28", {"opens": 28, "raw_reads": 28}) and not shows("28.000", 28)


def pstats(xs: list[float]) -> dict:
    return {"min": min(xs), "max": max(xs), "mean": statistics.fmean(xs), "stdev": statistics.pstdev(xs)}


# ---------------------------------------------------------------- reading a rendered report back

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


def parse_html(path: Path) -> _Tables:
    p = _Tables()
    p.feed(path.read_text())
    return p


def _md_plain(cell: str) -> str:
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
            cur.append([_md_plain(c) for c in cells])
        else:
            cur = None
    return out


def table(rep, tid: str) -> dict[str, list[str]]:
    rows = rep.tables[tid]
    return {r[0]: r for r in rows[1:]}


def header(rep, tid: str) -> list[str]:
    return rep.tables[tid][0]


# ---------------------------------------------------------------- fixtures

def _render(src: Path, dst: Path) -> tuple[Path, str]:
    """copy a fixture and render it once per module (the tests only read the result)"""
    shutil.copytree(src, dst)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = reports_main([str(dst)])
    assert rc == 0
    return dst / "report", buf.getvalue()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    rep_dir, out = _render(RUN, tmp / "run")
    return {"dir": rep_dir, "out": out, "html": parse_html(rep_dir / "report.html"), "run": tmp / "run"}


def load(name: str, base: Path = RUN):
    return json.loads((base / name).read_text())


# ---------------------------------------------------------------- the run report

def test_cli_writes_the_three_outputs_and_prints_the_path_last(rendered):
    d = rendered["dir"]
    assert rendered["out"].strip().splitlines()[-1] == str(d / "report.md")
    assert (d / "report.md").stat().st_size > 1000 and (d / "report.html").stat().st_size > 1000
    assert sorted(p.name for p in (d / "figures").glob("*.png"))


def test_every_section_present_in_order(rendered):
    md = (rendered["dir"] / "report.md").read_text()
    pos = [md.find(f"\n## {title}\n") for _, title in SECTIONS]
    assert all(p > 0 for p in pos), [t for (_, t), p in zip(SECTIONS, pos, strict=True) if p < 0]
    assert pos == sorted(pos)
    h2 = [(i, t) for lvl, i, t in rendered["html"].headings if lvl == 2]
    assert h2 == SECTIONS


def test_markdown_and_html_tables_are_the_same(rendered):
    md = md_tables(rendered["dir"] / "report.md")
    ht = list(rendered["html"].tables.values())
    assert len(md) == len(ht) >= 8
    for m, h in zip(md, ht, strict=True):
        assert m == h


def test_verdict_table_holds_every_check_with_its_numbers(rendered):
    v = load("verdict.json")
    rows = rendered["html"].tables["tbl-verdict"]
    assert rows[0] == ["check", "status", "required", "expected", "observed", "detail"]
    assert [r[0] for r in rows[1:]] == [c["name"] for c in v["checks"]]
    for c, r in zip(v["checks"], rows[1:], strict=True):
        assert r[1] == {"pass": "PASS", "fail": "FAIL", "skip": "skip"}[c["status"]], c["name"]
        assert r[2] == ("required" if c["required"] else "info")
        assert shows(r[3], c["expected"]) and shows(r[4], c["observed"]), (c["name"], r[3:5])
        assert r[5] == str(c["detail"] or "")
    s = v["summary"]
    md = (rendered["dir"] / "report.md").read_text()
    assert (f"**Verdict: {v['verdict'].upper()}** for workload `{v['workload']}`" in md and
            f"{s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('skip', 0)} skip" in md)


def test_workload_and_environment_from_the_manifest(rendered):
    m = load("manifest.json")
    rep = rendered["html"]

    def leaves(d, p=""):
        for k, x in d.items():
            if isinstance(x, dict) and x:
                yield from leaves(x, f"{p}{k}.")
            else:
                yield f"{p}{k}", x
    cfg = table(rep, "tbl-config")
    want = dict(leaves(m["workload"]["config"]))
    assert set(cfg) == set(want)
    for k, x in want.items():
        assert cfg[k][1] == (str(x).lower() if isinstance(x, bool) else str(x)), k
    vers = table(rep, "tbl-versions")
    for k, x in m["versions"].items():
        assert vers[k][1] == (str(x).lower() if isinstance(x, bool) else str(x)), k
    steps = table(rep, "tbl-steps")
    assert list(steps) == list(m["steps"])
    for name, rec in m["steps"].items():
        assert steps[name][1:] == [rec["status"], str(rec["rc"]), f"{rec['wall_s']:.3f}"]
    run = table(rep, "tbl-run")
    assert run["ranks per side"][1] == str(m["ranks"]) and run["run"][1] == m["run_id"]
    assert run["timing repetitions"][1] == str(m["repeat"])


def _records(t: dict) -> tuple[Counter, int]:
    c: Counter = Counter()
    opens = 0
    for r in t["ranks"].values():
        opens += len(r["blocks"])
        for b in r["blocks"]:
            c.update(b)
    return c, opens


@pytest.mark.parametrize("prof", ["logvfd", "logvfd-rt0"])
def test_log_vfd_table_6_1_counts_equal_the_tables(rendered, prof):
    t = {s: load(f"tables/{prof}-{s}.json") for s in SIDES}
    rc = {s: _records(t[s]) for s in SIDES}
    rows = rendered["html"].tables[f"tbl-logvfd-{prof}"]
    assert rows[0] == ["record (normalized, in block order)", "DLIO", "kernel", "match"]
    body = rows[1:]
    assert body[0] == ["opens (per-open blocks)", str(rc["dlio"][1]), str(rc["kernel"][1]),
                       "yes" if rc["dlio"][1] == rc["kernel"][1] else "NO"]
    covered: set = set()
    for label, d, k, match in body[1:]:
        m = re.fullmatch(r"(.+) \((\d+) distinct extents\)", label)
        if m:
            kind, n = m.group(1), int(m.group(2))
            texts = {x for s in SIDES for x in rc[s][0] if x.endswith(" " + kind) and not x.startswith("SUPER")}
            assert len(texts) == n
            want = [sum(rc[s][0][x] for x in texts) for s in SIDES]
            same = all(rc["dlio"][0][x] == rc["kernel"][0][x] for x in texts)
        elif label.startswith("SUPER-PROBE (all probes"):
            texts = {x for s in SIDES for x in rc[s][0] if x.startswith("SUPER-PROBE")}
            want = [sum(rc[s][0][x] for x in texts) for s in SIDES]
            raw = [Counter({a: b for r in t[s]["ranks"].values() for a, b in r["record_kinds"].items()
                            if a.startswith("SUPER")}) for s in SIDES]
            same = raw[0] == raw[1]
        else:
            texts = {label}
            want = [rc[s][0][label] for s in SIDES]
            same = want[0] == want[1]
        assert [d, k] == [str(x) for x in want], label
        assert match == ("yes" if same else "NO"), label
        covered |= texts
    assert covered == set(rc["dlio"][0]) | set(rc["kernel"][0])
    kinds = table(rendered["html"], f"tbl-logvfd-kinds-{prof}")
    for s_i, s in enumerate(SIDES):
        tot: Counter = Counter()
        for r in t[s]["ranks"].values():
            tot.update(r["record_kinds"])
        for kind, n in tot.items():
            assert kinds[kind][1 + s_i] == str(n)
        assert kinds["raw bytes read"][1 + s_i] == str(sum(r["raw_read_bytes"] for r in t[s]["ranks"].values()))


def test_counts_table_equals_the_counts_checks(rendered):
    v = load("verdict.json")
    checks = {c["name"]: c for c in v["checks"]}
    rows = rendered["html"].tables["tbl-counts"][1:]
    names = [n for n in checks if re.fullmatch(r"counts\.\w+\.[\w-]+\.rank\d+", n)]
    assert len(rows) == len(names) > 0
    for n, r in zip(names, rows, strict=True):
        _, side, prof, rank = n.split(".")
        c, pp = checks[n], checks.get(n + ".per_phase")
        assert r[:3] == [{"dlio": "DLIO", "kernel": "kernel"}[side], prof, rank[4:]]
        assert r[3:9] == [str(d[k]) for k in ("opens", "raw_reads", "raw_bytes") for d in (c["expected"],
                                                                                            c["observed"])]
        assert r[9] == (f"{pp['observed']}/{pp['expected']}" if pp else "-")
        ok = c["status"] == "pass" and (pp is None or pp["status"] == "pass")
        assert r[10] == ("PASS" if ok else "FAIL")


def test_runtime_table_equals_timing_json_and_the_verdict(rendered):
    t, m, v = load("tables/timing.json"), load("manifest.json"), load("verdict.json")
    rows = table(rendered["html"], "tbl-runtime")
    assert header(rendered["html"], "tbl-runtime")[-1] == "DLIO/kernel"
    want = {"generation (launch wall)": {s: [m["steps"][f"{s}.generate"]["wall_s"]] for s in SIDES},
            "training (launch wall)": {s: [r["wall_s"] for r in t[s]] for s in SIDES},
            "training, all epochs (in program)": {s: [sum(r["train_epoch_s"]) for r in t[s]] for s in SIDES}}
    n_ep = len(t["dlio"][0]["train_epoch_s"])
    for e in range(n_ep if n_ep > 1 else 0):          # one epoch: "all epochs" is that epoch
        want[f"training epoch {e + 1} (in program)"] = {s: [r["train_epoch_s"][e] for r in t[s]] for s in SIDES}
    assert len(t["dlio"]) >= 2, "the fixture is a REPEAT>=2 run"
    assert set(rows) == set(want)
    for label, xs in want.items():
        st = {s: pstats(xs[s]) for s in SIDES}
        cells = [f"{st[s][k]:.3f}" for s in SIDES for k in ("min", "max", "mean", "stdev")]
        assert rows[label][1] == f"{len(xs['dlio'])}/{len(xs['kernel'])}"
        assert rows[label][2:10] == cells, label
        assert rows[label][10] == f"{st['dlio']['mean'] / st['kernel']['mean']:.2f}x"
    rt = {c["name"]: c for c in v["checks"]}["runtime.train"]   # validate's own statistics agree
    assert rows["training (launch wall)"][4] == f"{rt['expected']['mean']:.3f}"
    assert rows["training (launch wall)"][9] == f"{rt['observed']['stdev']:.3f}"
    metrics = table(rendered["html"], "tbl-metrics")
    for key, label in (("au_percent", "AU % (training)"), ("throughput_samples_per_s",
                                                           "throughput samples/s (training)")):
        st = {s: pstats([r[key] for r in t[s]]) for s in SIDES}
        assert metrics[label][2:10] == [f"{st[s][k]:.3f}" for s in SIDES for k in ("min", "max", "mean", "stdev")]


def test_dftracer_timeline_table_equals_the_timeline_tables(rendered):
    rows = rendered["html"].tables["tbl-dftracer"][1:]
    want = []
    for s in SIDES:
        for lane in load(f"tables/dftracer-timeline-{s}.json")["lanes"]:
            c = Counter(e["kind"] for e in lane["events"])
            for k in sorted(c):
                dur = sum(e["d"] for e in lane["events"] if e["kind"] == k)
                want.append([{"dlio": "DLIO", "kernel": "kernel"}[s], lane["label"], str(lane["rank"]),
                             str(lane["pid"]), k, str(c[k]), f"{dur:.3f}"])
    assert rows == want and len(rows) > 4
    assert (rendered["dir"] / "figures" / "dftracer-timeline.png").exists()


def test_per_file_table_and_similarity_equal_their_sources(rendered):
    tab = load("tables/files-dftracer.json")
    rows = table(rendered["html"], "tbl-files-dftracer")
    by: dict = {}
    for r in tab["rows"]:
        by.setdefault(r["file"], {})[r["side"]] = r
    assert set(rows) == set(by)
    for f, sides in by.items():
        d, k = sides.get("dlio", {}), sides.get("kernel", {})
        want = [x.get(field) for field in ("opens", "closes", "reads", "bytes") for x in (d, k)]
        assert all(shows(c, w) for c, w in zip(rows[f][1:9], want, strict=True)), (f, rows[f][1:9], want)
        same = all(d.get(x) == k.get(x) for x in ("opens", "closes", "reads", "bytes", "sizes"))
        assert rows[f][9] == ("only kernel" if not d else "only DLIO" if not k else "yes" if same else "NO")
    classes = table(rendered["html"], "tbl-files-classes-dftracer")
    for cls, n in Counter(str(x["class"] or "UNEXPLAINED") for x in tab["differences"]).items():
        assert classes[cls][1] == str(n)
    sim = {c["name"]: c for c in load("verdict.json")["checks"]}["similarity"]
    md = (rendered["dir"] / "report.md").read_text()
    assert f"**{sim['observed_score']:.3f}**" in md
    feats = table(rendered["html"], "tbl-similarity")
    assert set(feats) == set(sim["expected"]) | set(sim["observed"])
    for f in feats:
        assert shows(feats[f][1], sim["expected"].get(f)) and shows(feats[f][2], sim["observed"].get(f)), feats[f]


def test_figures_are_non_empty_pngs_embedded_in_the_html(rendered):
    from PIL import Image
    figs = sorted((rendered["dir"] / "figures").glob("*.png"))
    assert {p.stem for p in figs} >= {"runtime", "dftracer-timeline", "files-dftracer"}
    imgs = rendered["html"].imgs
    assert len(imgs) == len(figs)
    embedded = sorted(base64.b64decode(i["src"].split(",", 1)[1]) for i in imgs)
    assert embedded == sorted(p.read_bytes() for p in figs)
    for p in figs:
        b = p.read_bytes()
        assert b.startswith(b"\x89PNG\r\n\x1a\n") and len(b) > 5000, p.name
        im = Image.open(io.BytesIO(b)).convert("L")
        assert im.size[0] >= 400 and im.size[1] >= 300
        hist = im.histogram()
        assert sum(hist[:200]) > 0.01 * im.size[0] * im.size[1], f"{p.name}: almost blank"
    md = (rendered["dir"] / "report.md").read_text()
    assert all(f"](figures/{p.name})" in md for p in figs)


def test_committed_example_is_this_fixtures_current_report(rendered):
    ex = Path(__file__).resolve().parent.parent / "reports" / "examples" / "unet3d-tiny"
    assert (ex / "report.md").read_text() == (rendered["dir"] / "report.md").read_text(), \
        "stale example: python -m reports tests/data/run-tiny --out reports/examples/unet3d-tiny"
    assert sorted(p.name for p in (ex / "figures").glob("*.png")) == \
        sorted(p.name for p in (rendered["dir"] / "figures").glob("*.png"))
    assert (ex / "report.html").stat().st_size + sum(p.stat().st_size for p in ex.rglob("*.png")) < 2_000_000


def test_html_is_self_contained(rendered):
    text = (rendered["dir"] / "report.html").read_text()
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert not re.search(r"url\(", text)
    assert all(i["src"].startswith("data:image/png;base64,") for i in rendered["html"].imgs)
    assert "Content-Security-Policy" in text


def test_not_a_run_directory_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert reports_main([str(tmp_path / "empty")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert reports_main([str(tmp_path / "missing")]) == 2
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{}")
    assert reports_main([str(tmp_path / "bad")]) == 2
    assert "not a harness manifest" in capsys.readouterr().err
    assert not (tmp_path / "empty" / "report").exists()


def test_absent_profiles_are_reported_with_their_reason(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for p in list((run / "tables").glob("dftracer*")) + list((run / "tables").glob("files-*")):
        p.unlink()
    m = json.loads((run / "manifest.json").read_text())
    m["profiles"] = [p for p in m["profiles"] if p != "dftracer"]
    (run / "manifest.json").write_text(json.dumps(m))
    v = json.loads((run / "verdict.json").read_text())
    v["checks"] = [c for c in v["checks"] if c["name"] != "similarity"]
    (run / "verdict.json").write_text(json.dumps(v))
    assert reports_main([str(run)]) == 0
    md = (run / "report" / "report.md").read_text()
    why = f"not requested for this run (profiles: {', '.join(m['profiles'])})"
    assert f"The DFTracer profile did not run: {why}." in md
    assert "No per-file comparison" in md and "No similarity score" in md
    assert not (run / "report" / "figures" / "dftracer-timeline.png").exists()
    assert [t for _, t in SECTIONS if f"\n## {t}\n" not in md] == []


def test_differences_show_as_mismatches(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    f = run / "tables" / "logvfd-rt0-kernel.json"
    t = json.loads(f.read_text())
    b0, b1 = t["ranks"]["0"]["blocks"][0], t["ranks"]["0"]["blocks"][1]
    i = next(i for i, x in enumerate(b0) if x.endswith("DRAW Read"))
    a, z = b0[i].split()[0].split("-")
    b0[i] = f"{a}-{int(z) + 1} DRAW Read"          # one sample read one byte longer
    b1.append("96-607 OHDR Read")                    # one object header read more
    f.write_text(json.dumps(t))
    v = json.loads((run / "verdict.json").read_text())
    c = next(c for c in v["checks"] if c["name"].startswith("counts.kernel.logvfd-rt0."))
    c["status"], v["verdict"], v["failed"] = "fail", "fail", [c["name"]]
    c["detail"] = "first difference at open #0: DLIO ('a', 'b') | kernel ('a', 'c') \\ end"   # pipes and a backslash
    (run / "verdict.json").write_text(json.dumps(v))
    assert reports_main([str(run)]) == 0
    rep = parse_html(run / "report" / "report.html")
    rows = table(rep, "tbl-logvfd-logvfd-rt0")
    draw = next(r for k, r in rows.items() if k.startswith("DRAW Read ("))
    assert draw[1] == draw[2] and draw[3] == "NO"      # same number of reads, different extents
    assert int(rows["96-607 OHDR Read"][2]) == int(rows["96-607 OHDR Read"][1]) + 1
    assert rows["96-607 OHDR Read"][3] == "NO" and rows["680-1191 LHEAP Read"][3] == "yes"
    assert table(rep, "tbl-verdict")[c["name"]][1] == "FAIL"
    assert table(rep, "tbl-counts")  # still rendered
    md = (run / "report" / "report.md").read_text()
    assert "**Verdict: FAIL**" in md and f"Failed required checks: `{c['name']}`." in md
    assert table(rep, "tbl-verdict")[c["name"]][5] == c["detail"]
    assert md_tables(run / "report" / "report.md") == list(rep.tables.values())   # escaped in Markdown


def test_darshan_tables_and_similarity_render_with_their_own_columns(tmp_path):
    """A run with Darshan results (tables from the committed real logs, both sides the same log): the per-file table
    carries Darshan's own columns (H5F opens, H5D reads and bytes), and its similarity block comes from DXT."""
    from profiles import darshan
    from validate import checks
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for side, log in (("dlio", "py_src"), ("kernel", "c_sec2")):
        step = tmp_path / side
        (step / "logs").mkdir(parents=True)
        shutil.copy(DATA / "darshan" / f"{log}.darshan", step / "logs")
        (run / "tables" / f"darshan-{side}.json").write_text(json.dumps(
            darshan.parse(step, side, Path("/scratch/dlio/data"), programs=("h5sample", "h5py_sample.py"))))
    got = checks.run_checks(checks.Run(run), [darshan.check_darshan])  # stores tables/files-darshan.json
    v = json.loads((run / "verdict.json").read_text())
    v["checks"] += got
    (run / "verdict.json").write_text(json.dumps(v))
    assert reports_main([str(run)]) == 0
    rep = parse_html(run / "report" / "report.html")
    tab = json.loads((run / "tables" / "files-darshan.json").read_text())
    assert tab["columns"] == ["opens", "reads", "bytes", "h5f_opens", "h5d_reads", "h5d_bytes"]
    rows = table(rep, "tbl-files-darshan")
    by: dict = {}
    for r in tab["rows"]:
        by.setdefault(r["file"], {})[r["side"]] = r
    assert set(rows) == set(by) and by
    for f, sides in by.items():
        want = [sides.get(x, {}).get(c) for c in tab["columns"] for x in ("dlio", "kernel")]
        assert all(shows(c, w) for c, w in zip(rows[f][1:13], want, strict=True)), (f, rows[f][1:13], want)
    sim = next(c for c in got if c["name"] == "similarity.darshan")
    feats = table(rep, "tbl-similarity-darshan")
    assert set(feats) == set(sim["expected"]) | set(sim["observed"])
    md = (run / "report" / "report.md").read_text()
    assert f"Darshan DXT read segments: **{sim['observed_score']:.3f}**" in md
    assert "tbl-similarity" in rep.tables  # the DFTracer block is still there


def test_metadata_rate_table_next_to_the_training_metrics(tmp_path, rendered):
    """Metadata rates in the run's tables (DFTracer from the committed real traces, Darshan from a real log with the
    program's epoch times beside it): one row per epoch DFTracer marks, then all epochs, per source; every number
    by the documented format (opens exact, opens/s 1 decimal, milliseconds 3 decimals, ratios as 2.50x); the table
    right after the training metrics (the data rate). The committed fixture predates the rate and says so."""
    from profiles import darshan, dftracer
    assert "No metadata rate from DFTracer: this run's DFTracer tables were collected before" in \
        (rendered["dir"] / "report.md").read_text() and "tbl-metadata" not in rendered["html"].tables
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    trace_run = Path("/tmp/hruns/unet3d-tiny-20261122-010153")  # where tests/data/dftracer was captured
    meta = {}
    for side in SIDES:
        ev = dftracer.normalize([e for p in sorted((DATA / "dftracer").glob(f"{side}-*.pfw.gz"))
                                 for e in dftracer.read_events(p)], side)
        t = load(f"tables/dftracer-{side}.json")
        t["metadata"] = meta[("dftracer", side)] = dftracer.metadata(ev, trace_run / side / "data")
        (run / "tables" / f"dftracer-{side}.json").write_text(json.dumps(t))
        step = tmp_path / side
        (step / "logs").mkdir(parents=True)
        (step / "out").mkdir()
        shutil.copy(DATA / "darshan" / "c_sec2.darshan", step / "logs")
        (step / "out" / "output.json").write_text(json.dumps({"train": {"epochs": [{"observed_s": 0.5},
                                                                                   {"observed_s": 0.25}]}}))
        t = darshan.parse(step, "kernel", Path("/scratch/dlio/data"), programs=("h5sample",))
        meta[("darshan", side)] = t["metadata"]
        (run / "tables" / f"darshan-{side}.json").write_text(json.dumps(t))
    assert reports_main([str(run)]) == 0
    rep = parse_html(run / "report" / "report.html")
    rows = rep.tables["tbl-metadata"][1:]
    want = []
    for prof, label in (("dftracer", "DFTracer"), ("darshan", "Darshan")):
        m = {s: meta[(prof, s)] for s in SIDES}
        n = len(m["dlio"].get("per_epoch", []))
        per = [(f"epoch {k + 1}", {s: m[s]["per_epoch"][k] for s in SIDES}) for k in range(n)]
        per.append((f"all {m['dlio']['all']['epochs']} epochs", {s: m[s]["all"] for s in SIDES}))
        want += [(label, what, r) for what, r in per]
    assert [r[:2] for r in rows] == [[label, what] for label, what, _ in want]
    assert [r[1] for r in rows] == ["epoch 1", "epoch 2", "all 2 epochs", "all 2 epochs"]
    for cells, (_, _, r) in zip(rows, want, strict=True):
        for i, s in enumerate(SIDES):
            opens, rate, ms = cells[2 + 3 * i: 5 + 3 * i]
            assert int(opens) == r[s]["opens"]
            assert re.fullmatch(r"\d+\.\d", rate) and abs(float(rate) - r[s]["opens_per_s"]) <= 0.05 + 1e-9
            assert re.fullmatch(r"\d+\.\d{3}", ms) and abs(float(ms) - 1000 * r[s]["metadata_s_per_epoch"]) <= 5e-4
        assert cells[-1] == f"{r['dlio']['metadata_s'] / r['kernel']['metadata_s']:.2f}x"
    assert [r[2] for r in rows[:3]] == ["28", "28", "56"]   # every data file opened once per epoch
    md = (run / "report" / "report.md").read_text()
    assert md.index("*DLIO's training metrics") < md.index("*Metadata rate per side") < md.index("## DFTracer")
    assert md_tables(run / "report" / "report.md")[[t[0][0] for t in md_tables(run / "report" / "report.md")]
                                                   .index("source")] == rep.tables["tbl-metadata"]


def test_unvalidated_run_and_pre_repeat_timing_still_render(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "verdict.json").unlink()
    t = json.loads((run / "tables" / "timing.json").read_text())
    old = {s: {k: x for k, x in t[s][0].items() if k not in ("step", "wall_s")} for s in SIDES}
    (run / "tables" / "timing.json").write_text(json.dumps(old))     # the format before REPEAT=N
    assert reports_main([str(run)]) == 0
    md = (run / "report" / "report.md").read_text()
    assert "This run was never validated" in md
    rep = parse_html(run / "report" / "report.html")
    rows = table(rep, "tbl-runtime")
    m = json.loads((run / "manifest.json").read_text())
    assert rows["training (launch wall)"][1] == "1/1"
    assert rows["training (launch wall)"][4] == f"{m['steps']['dlio.timing']['wall_s']:.3f}"
    assert rows["training, all epochs (in program)"][4] == f"{sum(t['dlio'][0]['train_epoch_s']):.3f}"


# ---------------------------------------------------------------- the paper report

MIB = 1048576
# A kernel's per-rank phase sums as output.json lists them (docs/kernel.md, Output): (rank, phase, bytes, metadata_s,
# raw_read_s, raw rate MiB/s, observed rate MiB/s). The rates are the kernel's own (tests/test_kernel.py checks how the
# kernel computes them); the report only combines them: mean and sum over ranks.
RANK_ROWS = [(0, "train", 4 * MIB, 0.03, 1.0, 4.0, 2.0),
             (1, "train", 4 * MIB, 0.05, 0.5, 8.0, 4.0),
             (0, "eval", 1 * MIB, 0.005, 0.125, 8.0, 4.0),
             (1, "eval", 1 * MIB, 0.015, 0.5, 2.0, 2.0),
             (2, "eval", 1 * MIB, 0.01, 0.0, None, None)]   # no time inside H5Dread: no rate, not averaged in


def write_ranks_json(path: Path, time_scale: float = 1.0) -> Path:
    """RANK_ROWS as a kernel's output.json with output-ranks-data, every time multiplied by time_scale (rates divided
    by it)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc: dict = {"train": {}, "eval": {}}
    for rank, phase, nbytes, meta, raw, raw_rate, obs_rate in RANK_ROWS:
        doc[phase].setdefault("ranks", []).append({
            "rank": rank, "epochs": 2, "bytes": nbytes, "metadata_s": meta * time_scale,
            "raw_read_s": raw * time_scale, "observed_s": 9.0, "compute_s": 1.0, "preprocess_s": 0.0,
            "raw_read_rate_bytes_per_s": None if raw_rate is None else raw_rate * MIB / time_scale,
            "observed_rate_bytes_per_s": None if obs_rate is None else obs_rate * MIB / time_scale})
    path.write_text(json.dumps(doc))
    return path


def test_rank_rates_by_hand(tmp_path):
    from reports.paper import rank_rates
    got = rank_rates(write_ranks_json(tmp_path / "output.json"))
    assert set(got) == {"train", "eval"}
    assert got["train"] == pytest.approx({"ranks": 2, "bytes": 8 * MIB, "raw_per_rank": 6.0, "raw_total": 12.0,
                                          "obs_per_rank": 3.0, "obs_total": 6.0, "meta_s": 0.04, "raw_s": 0.75})
    assert got["eval"] == pytest.approx({"ranks": 3, "bytes": 3 * MIB, "raw_per_rank": 5.0, "raw_total": 10.0,
                                         "obs_per_rank": 3.0, "obs_total": 6.0, "meta_s": 0.01, "raw_s": 0.625 / 3})
    assert rank_rates(tmp_path / "missing.json") is None
    (tmp_path / "old.json").write_text(json.dumps({"train": {"epochs": []}}))  # a kernel run without output-ranks-data
    assert rank_rates(tmp_path / "old.json") is None


def test_scaling_table_by_hand(tmp_path):
    """two repetitions, the second with every time halved (every rate doubled): each cell the mean of the two"""
    from reports.paper import scaling_section
    c = tmp_path / "scaling" / "thesis-d"
    write_ranks_json(c / "np2" / "rep1" / "out" / "output.json")
    write_ranks_json(c / "np2" / "rep2" / "out" / "output.json", 0.5)
    (tmp_path / "scaling" / "sweep.json").write_text(json.dumps({"configs": ["thesis-d"], "ranks": [2], "repeat": 2,
                                                                 "cpus": 2, "scale": "tiny", "page_cache": "warm"}))
    blocks, _ = scaling_section(tmp_path)
    tabs = {b.id: b for b in blocks if getattr(b, "rows", None) is not None}
    # train: raw per rank (6 + 12) / 2, total (12 + 24) / 2; observed (3 + 6) / 2, (6 + 12) / 2; metadata
    # (0.04 + 0.02) / 2 s; raw read (0.75 + 0.375) / 2 s. eval: raw (5 + 10) / 2, (10 + 20) / 2; observed as train;
    # metadata (0.01 + 0.005) / 2 s; raw read (0.625 / 3 + 0.3125 / 3) / 2 s
    assert tabs["tbl-scaling-thesis-d-train"].rows == [["2", "2", "9.0", "18.0", "4.5", "9.0", "30.000", "562.500"]]
    assert tabs["tbl-scaling-thesis-d-eval"].rows == [["2", "2", "7.5", "15.0", "4.5", "9.0", "7.500", "156.250"]]


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paper")
    rep_dir, out = _render(PAPER, tmp / "paper")
    return {"dir": rep_dir, "out": out, "html": parse_html(rep_dir / "report.html"), "root": tmp / "paper"}


def test_paper_report_sections_runs_and_figures(paper):
    h2 = [i for lvl, i, _ in paper["html"].headings if lvl == 2]
    assert h2 == ["overview", "comparison", "table-6-1", "dftracer", "scaling", "environment"]
    assert paper["out"].strip().splitlines()[-1] == str(paper["dir"] / "report.md")
    runs = sorted(p.parent for p in (paper["root"] / "runs").glob("*/manifest.json"))
    assert len(runs) == 4
    rows = paper["html"].tables["tbl-paper-runs"][1:]
    assert sorted(r[-1] for r in rows) == sorted(p.name for p in runs)
    for p in runs:                     # each run's own report was rendered and is linked
        assert (p / "report" / "report.html").exists()
        v = json.loads((p / "verdict.json").read_text())
        r = next(x for x in rows if x[-1] == p.name)
        assert r[4:8] == [v["verdict"].upper()] + [str(v["summary"].get(k, 0)) for k in ("pass", "fail", "skip")]
    text = (paper["dir"] / "report.html").read_text()
    assert all(f'href="../runs/{p.name}/report/report.html"' in text for p in runs)
    figs = {p.stem for p in (paper["dir"] / "figures").glob("*.png")}
    sweep = json.loads((paper["root"] / "scaling" / "sweep.json").read_text())
    assert figs == {"paper-runtime", "scaling-all", "dftracer-timeline"} | {f"scaling-{c}" for c in sweep["configs"]}
    assert len(paper["html"].imgs) == len(figs)


def test_paper_runtime_means_equal_the_runs_timing(paper):
    rows = paper["html"].tables["tbl-paper-runtime"][1:]
    for p in sorted((paper["root"] / "runs").glob("*/manifest.json")):
        t = json.loads((p.parent / "tables" / "timing.json").read_text())
        m = json.loads(p.read_text())
        rt = m["workload"]["config"]["reader"]["read_threads"]
        label = f"{m['workload']['name'].split('-')[1].upper()} rt{rt}"
        r = next(x for x in rows if x[0] == label and x[1] == "training (launch wall)")
        st = {s: pstats([x["wall_s"] for x in t[s]]) for s in SIDES}
        assert r[2:6] == [f"{st[s][k]:.3f}" for s in SIDES for k in ("mean", "stdev")]
        assert r[6] == f"{st['dlio']['mean'] / st['kernel']['mean']:.2f}x"


def test_paper_scaling_tables_equal_the_kernel_outputs(paper):
    from reports.paper import rank_rates
    sweep = json.loads((paper["root"] / "scaling" / "sweep.json").read_text())
    assert sweep["ranks"] == [1, 2, 4, 8] and len(sweep["configs"]) == 5
    for c in sweep["configs"]:
        for phase in ("train", "eval"):
            rows = table(paper["html"], f"tbl-scaling-{c}-{phase}")
            assert list(rows) == [str(n) for n in sweep["ranks"]]
            for n in sweep["ranks"]:     # rank_rates itself is checked by hand above
                reps = [rank_rates(f)[phase] for k in range(1, sweep["repeat"] + 1)
                        if (f := paper["root"] / "scaling" / c / f"np{n}" / f"rep{k}" / "out" / "output.json")
                        .exists()]
                assert rows[str(n)][1] == str(len(reps)) and reps
                want = [f"{statistics.fmean(x[k] for x in reps):.1f}"
                        for k in ("raw_per_rank", "raw_total", "obs_per_rank", "obs_total")]
                assert rows[str(n)][2:6] == want, (c, phase, n)


def test_paper_table_6_1_comes_from_the_log_vfd_run(paper):
    src = [p.parent.parent for p in (paper["root"] / "runs").glob("*/tables/logvfd-dlio.json")]
    assert len(src) == 1
    t = {s: json.loads((src[0] / "tables" / f"logvfd-rt0-{s}.json").read_text()) for s in SIDES}
    rows = table(paper["html"], "tbl-logvfd-logvfd-rt0-t61")
    assert rows["opens (per-open blocks)"][1:3] == [str(_records(t[s])[1]) for s in SIDES]
    exact = [r for r in rows if not r.startswith(("opens", "SUPER-PROBE (all")) and "distinct" not in r]
    for label in exact:
        assert rows[label][1:3] == [str(_records(t[s])[0][label]) for s in SIDES]


# ---------------------------------------------------------------- the HTML in a real browser

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-pipe"]


class Browser:
    """Chromium driven through the DevTools protocol on fds 3 (commands in) and 4 (replies out), messages
    separated by NUL bytes; no websocket library needed."""

    def __init__(self, exe: str, profile: Path):
        cin_r, self._w = os.pipe()
        self._r, cout_w = os.pipe()

        def fds():  # in the child: the pipe ends to fds 3 and 4, through high fds so neither clobbers the other
            os.dup2(cin_r, 100)
            os.dup2(cout_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)
            os.close(100)
            os.close(101)

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=open(profile.parent / "chromium.log", "w"),
                                     close_fds=False, preexec_fn=fds, start_new_session=True)
        os.close(cin_r)
        os.close(cout_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.log = profile.parent / "chromium.log"

    def _recv(self, timeout: float) -> dict | None:
        end = time.time() + timeout
        while b"\0" not in self._buf:
            left = end - time.time()
            if left <= 0:
                return None
            if not select.select([self._r], [], [], min(left, 0.5))[0]:
                if self.proc.poll() is not None:
                    return None      # the browser is gone
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                return None
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while time.time() < end:
            m = self._recv(end - time.time())
            if m is None:
                break
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)
        if self.proc.poll() is not None:
            raise RuntimeError(f"{method}: the browser exited with status {self.proc.returncode}")
        raise TimeoutError(f"{method}: no reply in {timeout} s")

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        for e in self.events:
            if e.get("method") == method:
                return e
        end = time.time() + timeout
        while time.time() < end:
            m = self._recv(end - time.time())
            if m is None:
                break
            self.events.append(m)
            if m.get("method") == method:
                return m
        raise TimeoutError(f"no {method} in {timeout} s")

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - best effort, the process is ended below anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


def chromium_exe() -> str:
    exe = os.environ.get("H5DLIO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium not installed: `make chromium` installs Debian's chromium for this test")
    return exe


def open_in_chromium(page: Path, tmp: Path) -> dict:
    """load the page, then: images (count, broken), console errors, requests, a PNG screenshot"""
    try:
        b = Browser(chromium_exe(), tmp / "profile")
    except OSError as e:
        pytest.skip(f"chromium cannot start here: {e}")
    try:
        try:
            target = b.call("Target.createTarget", {"url": "about:blank"}, timeout=60)
        except (TimeoutError, RuntimeError, OSError) as e:
            pytest.skip(f"chromium cannot run here ({e}); its log: {b.log.read_text()[-800:]}")
        sid = b.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            b.call(m, session=sid)
        b.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1000, "deviceScaleFactor": 1,
                                                      "mobile": False}, session=sid)
        b.call("Page.navigate", {"url": page.as_uri()}, session=sid)
        b.wait_event("Page.loadEventFired", timeout=60)
        time.sleep(0.5)       # late console messages
        js = ("JSON.stringify({n: document.images.length, broken: Array.from(document.images).filter(i => "
              "!i.complete || i.naturalWidth === 0).map(i => i.alt), widths: Array.from(document.images).map("
              "i => i.naturalWidth), height: document.body.scrollHeight, text: document.body.innerText.length})")
        state = json.loads(b.call("Runtime.evaluate", {"expression": js, "returnByValue": True},
                                  session=sid)["result"]["value"])
        shot = base64.b64decode(b.call("Page.captureScreenshot", {"format": "png"}, session=sid)["data"])
        js = ("JSON.stringify(Array.from(document.images).map(i => {const r = i.getBoundingClientRect(); "
              "return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};}))")
        rects = json.loads(b.call("Runtime.evaluate", {"expression": js, "returnByValue": True},
                                  session=sid)["result"]["value"])
        figs = [base64.b64decode(b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                                   "clip": {**r, "scale": 1}}, session=sid)["data"])
                for r in rects]
        ev = [e for e in b.events if e.get("sessionId") == sid]
        errors = [e["params"] for e in ev if e.get("method") == "Runtime.exceptionThrown"]
        errors += [e["params"] for e in ev if e.get("method") == "Runtime.consoleAPICalled"
                   and e["params"].get("type") in ("error", "assert")]
        errors += [e["params"]["entry"] for e in ev if e.get("method") == "Log.entryAdded"
                   and e["params"]["entry"].get("level") == "error"]
        requests = [e["params"]["request"]["url"] for e in ev if e.get("method") == "Network.requestWillBeSent"]
        return {**state, "errors": errors, "requests": requests, "shot": shot, "figures": figs}
    finally:
        b.close()


def _blank(png: bytes) -> bool:
    from PIL import Image, ImageStat
    im = Image.open(io.BytesIO(png)).convert("L")
    return len(im.getcolors(256) or []) <= 20 or ImageStat.Stat(im).stddev[0] <= 10


def _check_in_browser(report: Path, tmp: Path):
    """the page as a reader sees it: no console error, every figure loaded and drawn (a screenshot of each figure
    is not blank), nothing fetched from anywhere, the first screen not blank"""
    from PIL import Image
    n_figs = len(list((report.parent / "figures").glob("*.png")))
    r = open_in_chromium(report, tmp)
    assert r["errors"] == [], r["errors"]
    assert r["n"] == n_figs > 0 and r["broken"] == [] and min(r["widths"]) >= 400
    assert [i for i, f in enumerate(r["figures"]) if _blank(f)] == [], "figures drawn blank in the browser"
    assert [u for u in r["requests"] if not u.startswith("data:") and u != report.as_uri()] == []
    assert r["height"] > 2000 and r["text"] > 2000
    assert Image.open(io.BytesIO(r["shot"])).size == (1280, 1000)
    assert not _blank(r["shot"]), "blank screenshot"


def test_html_renders_in_headless_chromium(rendered, tmp_path):
    _check_in_browser(rendered["dir"] / "report.html", tmp_path)


def test_paper_html_renders_in_headless_chromium(paper, tmp_path):
    _check_in_browser(paper["dir"] / "report.html", tmp_path)


# ---------------------------------------------------------------- LaTeX tables and vector figures

_TEX_UNESCAPE = [(r"\allowbreak{}", ""), (r"\textbackslash{}", "\\"), (r"\textasciitilde{}", "~"),
                 (r"\textasciicircum{}", "^"), (r"\textless{}", "<"), (r"\textgreater{}", ">"), (r"\textbar{}", "|"),
                 ("{[}", "["), (r"\&", "&"), (r"\%", "%"), (r"\$", "$"), (r"\#", "#"), (r"\_", "_"), (r"\{", "{"),
                 (r"\}", "}")]


def _tex_cell(cell: str) -> str:
    """a LaTeX table cell back to the text the HTML shows (markup dropped, escapes undone)"""
    cell = re.sub(r"\\text(?:tt|bf)\{((?:[^{}]|\\[{}]|\{\})*)\}", r"\1", cell.strip())
    for a, b in _TEX_UNESCAPE:
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
        rows.append([_tex_cell(c) for c in line[:-3].split(" & ")])
    return label, rows


@pytest.mark.parametrize("which", ["rendered", "paper"])
def test_latex_tables_equal_the_html_tables(which, rendered, paper):
    """one tables/<id>.tex per table of the report, labelled <id>, with the HTML table's header and cells; booktabs
    rules and a caption; report.tex inputs each in report order"""
    r = {"rendered": rendered, "paper": paper}[which]
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


@pytest.mark.parametrize("which", ["rendered", "paper"])
def test_every_figure_has_a_vector_pdf(which, rendered, paper):
    """figures/<name>.pdf beside each PNG: a one-page vector PDF (no embedded raster image), TrueType fonts (no
    Type 3, which publishers' checks reject), no creation date (the same data gives the same bytes)"""
    d = {"rendered": rendered, "paper": paper}[which]["dir"] / "figures"
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


@pytest.mark.parametrize("which", ["rendered", "paper"])
def test_report_tex_compiles_with_pdflatex(which, rendered, paper):
    """report.tex is a complete document: pdflatex builds it; the PDF's text holds the verdict and every table's
    caption number"""
    d = {"rendered": rendered, "paper": paper}[which]["dir"]
    _pdflatex(d / "report.tex")
    text = _pdftotext(d / "report.pdf")
    n = len(list((d / "tables").glob("*.tex")))
    assert all(f"Table {i}:" in text for i in range(1, n + 1)), f"captions 1..{n} not all in the PDF"
    if which == "rendered":
        v = json.loads((rendered["run"] / "verdict.json").read_text())
        assert f"Verdict: {v['verdict'].upper()}" in text
        status = Counter(c["status"] for c in v["checks"])
        assert len(re.findall(r"\bPASS\b", text)) >= status["pass"] > 0
    fonts = subprocess.run(["pdffonts", str(d / "report.pdf")], capture_output=True, text=True, check=True).stdout
    assert "Type 3" not in fonts, f"bitmap (Type 3) fonts in the PDF: is lmodern installed?\n{fonts}"


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


def test_checkpoint_section_from_timing_checkpoints(tmp_path):
    """A run whose timing launches wrote checkpoints: one row per checkpoint with both sides' files, MiB, seconds and
    MiB/s (worked by hand: 5 MiB in 0.5 s = 10 MiB/s, in 0.25 s = 20 MiB/s, ratio 0.50x) and the figure; a run
    without checkpoints (the fixture as committed) has no such section."""
    dst = tmp_path / "run"
    shutil.copytree(RUN, dst)
    t = json.loads((dst / "tables" / "timing.json").read_text())
    for side, secs in (("dlio", 0.5), ("kernel", 0.25)):
        reps = t[side] if isinstance(t[side], list) else [t[side]]
        reps[0]["checkpoints"] = [{"epoch": 1, "step": 4, "files": 2, "bytes": 5 * 2**20, "seconds": secs}]
        t[side] = reps
    (dst / "tables" / "timing.json").write_text(json.dumps(t))
    with contextlib.redirect_stdout(io.StringIO()):
        assert reports_main([str(dst)]) == 0
    rows = md_tables(dst / "report" / "report.md")
    row = next(r for tab in rows for r in tab if r[:2] == ["1", "4"])
    assert row[2:] == ["2/2", "5.000/5.000", "0.500", "0.250", "10.000", "20.000", "0.50x"]
    assert (dst / "report" / "figures" / "checkpoints.png").stat().st_size > 1000
    rendered_dir = tmp_path / "plain"
    shutil.copytree(RUN, rendered_dir)
    with contextlib.redirect_stdout(io.StringIO()):
        assert reports_main([str(rendered_dir)]) == 0
    assert "\n## Checkpoints\n" not in (rendered_dir / "report" / "report.md").read_text()
