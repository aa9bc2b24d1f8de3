"""reports/ on the paper report: tests/data/paper-tiny (a real tiny `make paper` directory without datasets) and
the per-rank rate and scaling tables worked by hand."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from report_read import SIDES, log_vfd_records, pstats, table

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
    from reports.rundir import rank_rates
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
    from reports.rundir import load_sweep
    c = tmp_path / "scaling" / "thesis-d"
    write_ranks_json(c / "np2" / "rep1" / "out" / "output.json")
    write_ranks_json(c / "np2" / "rep2" / "out" / "output.json", 0.5)
    (tmp_path / "scaling" / "sweep.json").write_text(json.dumps({"configs": ["thesis-d"], "ranks": [2], "repeat": 2,
                                                                 "cpus": 2, "scale": "tiny", "page_cache": "warm"}))
    blocks = scaling_section(load_sweep(tmp_path))
    tabs = {b.id: b for b in blocks if getattr(b, "rows", None) is not None}
    # train: raw per rank (6 + 12) / 2, total (12 + 24) / 2; observed (3 + 6) / 2, (6 + 12) / 2; metadata
    # (0.04 + 0.02) / 2 s; raw read (0.75 + 0.375) / 2 s. eval: raw (5 + 10) / 2, (10 + 20) / 2; observed as train;
    # metadata (0.01 + 0.005) / 2 s; raw read (0.625 / 3 + 0.3125 / 3) / 2 s
    assert tabs["tbl-scaling-thesis-d-train"].rows == [["2", "2", "9.0", "18.0", "4.5", "9.0", "30.000", "562.500"]]
    assert tabs["tbl-scaling-thesis-d-eval"].rows == [["2", "2", "7.5", "15.0", "4.5", "9.0", "7.500", "156.250"]]


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_paper_scaling_tables_equal_the_kernel_outputs(paper):
    from reports.rundir import rank_rates
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


@pytest.mark.slow
def test_paper_table_6_1_comes_from_the_log_vfd_run(paper):
    src = [p.parent.parent for p in (paper["root"] / "runs").glob("*/tables/logvfd-dlio.json")]
    assert len(src) == 1
    t = {s: json.loads((src[0] / "tables" / f"logvfd-rt0-{s}.json").read_text()) for s in SIDES}
    rows = table(paper["html"], "tbl-logvfd-logvfd-rt0-t61")
    assert rows["opens (per-open blocks)"][1:3] == [str(log_vfd_records(t[s])[1]) for s in SIDES]
    exact = [r for r in rows if not r.startswith(("opens", "SUPER-PROBE (all")) and "distinct" not in r]
    for label in exact:
        assert rows[label][1:3] == [str(log_vfd_records(t[s])[0][label]) for s in SIDES]
