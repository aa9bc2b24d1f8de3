"""reports/ on the run report: tests/data/run-tiny (a real tiny unet3d run's manifest, verdict and tables) rendered
once; every section, table and figure against the fixture's own JSON/CSV."""
from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from report_read import (
    DATA,
    RUN,
    SECTIONS,
    SIDES,
    header,
    load,
    log_vfd_records,
    md_tables,
    parse_html,
    pstats,
    shows,
    table,
)

from reports.__main__ import main as reports_main


def test_value_format_rule_by_hand():
    """the rule docs/reports.md states for expected/observed cells, on values written out by hand"""
    from reports.tables import value
    assert [value(x) for x in (None, True, False, 0, 28, -3, 1.0, 0.0326, 2.0004, 52.96509464581808)] == \
        ["-", "true", "false", "0", "28", "-3", "1.000", "0.033", "2.000", "52.965"]
    assert value({"opens": 28, "raw_bytes": 32584446, "mean": 1.25}) == "opens=28, raw_bytes=32584446, mean=1.250"
    assert value([1, 0.5, None, "x"]) == "[1, 0.500, -, x]"
    assert value((2, [3])) == "[2, [3]]"
    assert value("2.0.0") == "2.0.0"
    assert shows("opens=28, mean=1.250", {"opens": 28, "mean": 1.2504}) and not shows("1.25", 1.25)
    assert not shows("opens=28", {"opens": 28, "raw_reads": 28}) and not shows("28.000", 28)


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


@pytest.mark.parametrize("prof", ["logvfd", "logvfd-rt0"])
def test_log_vfd_table_6_1_counts_equal_the_tables(rendered, prof):
    t = {s: load(f"tables/{prof}-{s}.json") for s in SIDES}
    rc = {s: log_vfd_records(t[s]) for s in SIDES}
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


@pytest.mark.slow
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


@pytest.mark.slow
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
            darshan.parse.parse(step, side, Path("/scratch/dlio/data"), programs=("h5sample", "h5py_sample.py"))))
    got = checks.run_checks(checks.Run(run), [darshan.checks.check_darshan])  # stores tables/files-darshan.json
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


@pytest.mark.slow
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
        t = darshan.parse.parse(step, "kernel", Path("/scratch/dlio/data"), programs=("h5sample",))
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


@pytest.mark.slow
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


@pytest.mark.slow
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
