"""The run store (store/, docs/runs.md): runs added once, read as the fixtures hold them, compared with statistics
computed here by hand (not by store.stats), a planted difference called "differs" and identical values "within
noise", bad input refused by name (exit 2), the trend plot written; a run directory is never written to."""
from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest

from store import BadInput, ingest
from store import __main__ as cli

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
PAPER = REPO / "tests" / "data" / "paper-tiny"
SCALING = PAPER / "scaling" / "thesis-g"
KERNEL_OUT = SCALING / "np4" / "rep1" / "out"   # a bare kernel run's output folder (output.json)


def store(db: Path, *argv: str) -> int:
    return cli.main([*argv, "--db", str(db)])


def rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def run_copy(tmp: Path, name: str, kernel_au: list[float]) -> Path:
    """A copy of run-tiny as run `name` whose kernel side's REPEAT timing launches measured kernel_au."""
    d = tmp / name
    shutil.copytree(RUN_TINY, d)
    m = json.loads((d / "manifest.json").read_text())
    m["run_id"] = name
    (d / "manifest.json").write_text(json.dumps(m))
    t = json.loads((d / "tables" / "timing.json").read_text())
    assert len(t["kernel"]) == len(kernel_au)
    for rep, au in zip(t["kernel"], kernel_au, strict=True):
        rep["au_percent"] = au
    (d / "tables" / "timing.json").write_text(json.dumps(t))
    return d


def compare_json(db: Path, capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert store(db, "compare", *argv, "--json") == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- adding: one row per run, the numbers as filed

def test_add_twice_is_one_row_and_the_run_is_not_written(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    before = tree_digest(RUN_TINY), tree_digest(KERNEL_OUT)
    assert store(db, "add", str(RUN_TINY), str(KERNEL_OUT)) == 0
    assert store(db, "add", str(RUN_TINY), str(KERNEL_OUT / "output.json")) == 0
    assert "already kept" in capsys.readouterr().out
    assert rows(db, "SELECT count(*) FROM runs") == [(2,)]
    assert (tree_digest(RUN_TINY), tree_digest(KERNEL_OUT)) == before
    timing = json.loads((RUN_TINY / "tables" / "timing.json").read_text())
    verdict = json.loads((RUN_TINY / "verdict.json").read_text())
    (rid, name, kind, wl, ranks, v, npass, nskip), = rows(db, "SELECT id, name, kind, workload, ranks, verdict, "
                                                         "checks_pass, checks_skip FROM runs WHERE kind='validate'")
    assert (name, kind, wl, ranks, v, npass, nskip) == ("unet3d-tiny-20261122-010853", "validate", "unet3d", 2,
                                                        "PASS", verdict["summary"]["pass"], verdict["summary"]["skip"])
    au = rows(db, f"SELECT value FROM metrics WHERE run={rid} AND name='kernel.au_percent' ORDER BY rep")
    assert [x for (x,) in au] == [r["au_percent"] for r in timing["kernel"]]
    dlio_train = rows(db, f"SELECT value FROM metrics WHERE run={rid} AND name='dlio.train_s' ORDER BY rep")
    assert [x for (x,) in dlio_train] == pytest.approx([8.07 + 0.72, 4.44 + 0.74, 3.43 + 0.68])


def test_a_kernel_only_pass_is_never_a_bare_pass(tmp_path):
    d = run_copy(tmp_path, "kernel-only", [99.0, 99.1, 99.2])
    v = json.loads((d / "verdict.json").read_text())
    (d / "verdict.json").write_text(json.dumps({**v, "scope": "kernel-model"}))
    assert ingest.load(d)["verdict"] == "PASS (kernel against the analytic model only, not DLIO)"


def test_kernel_output_numbers_and_identity(tmp_path):
    out = json.loads((KERNEL_OUT / "output.json").read_text())
    rec = ingest.load(KERNEL_OUT)
    m = rec["metrics"]
    assert m["kernel.opens_per_s"] == pytest.approx([112 / 0.254540822])   # opens / observed_s of its one epoch
    assert m["kernel.au_percent"] == [52.0677301] and m["kernel.io_bytes_per_s"] == [116202841]
    assert m["kernel.eval_s"] == [0.150567372] and m["kernel.wall_s"] == [0.40803503]
    assert (rec["ranks"], rec["hosts"], rec["kernel_git"], rec["dlio"]) == (4, ["vm"], "81aa5aa52166",
                                                                             "kernel entry 2.0.0")
    assert rec["data_folder"] == out["config"]["data-folder"]
    out["nodes"] = {"count": 2, "per_node": [{"host": "n1"}, {"host": "n2"}]}
    (tmp_path / "output.json").write_text(json.dumps(out))
    assert ingest.load(tmp_path)["hosts"] == ["n1", "n2"]
    out["mutant"] = "skip-compute"
    (tmp_path / "output.json").write_text(json.dumps(out))
    with pytest.raises(BadInput, match="mutant skip-compute"):
        ingest.load(tmp_path)


def test_config_hash_ignores_places_and_sees_io_keys():
    dl = json.loads((RUN_TINY / "manifest.json").read_text())["workload"]["config"]
    moved = json.loads(json.dumps(dl))
    moved["dataset"]["data_folder"] = "/elsewhere/data"
    bigger = json.loads(json.dumps(dl))
    bigger["dataset"]["record_length"] += 1
    assert ingest.config_hash("dlio-yaml", moved) == ingest.config_hash("dlio-yaml", dl)
    assert ingest.config_hash("dlio-yaml", bigger) != ingest.config_hash("dlio-yaml", dl)
    k = json.loads((KERNEL_OUT / "output.json").read_text())["config"]
    assert ingest.config_hash("kernel", {**k, "output-folder": "/x"}) == ingest.config_hash("kernel", k)
    assert ingest.config_hash("kernel", {**k, "batch-size": 8}) != ingest.config_hash("kernel", k)
    assert ingest.config_hash("kernel", dl) != ingest.config_hash("dlio-yaml", dl)


def test_file_system_is_the_longest_mount_prefix(tmp_path):
    """The mount holding the nearest existing folder at or above the path (a deleted data folder: its parent's)."""
    t = tmp_path
    mounts = t / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nfs0 {t}/data lustre rw 0 0\nx {t}/data\\040two nfs rw 0 0\n")
    for d in ("data/run", "datax/run", "data two"):
        (t / d).mkdir(parents=True)
    assert ingest.file_system(f"{t}/data/run/deleted", mounts) == ("lustre", f"{t}/data")
    assert ingest.file_system(f"{t}/datax/run", mounts) == ("ext4", "/")    # a name prefix is not a path prefix
    assert ingest.file_system(f"{t}/data two/y", mounts) == ("nfs", f"{t}/data two")
    assert ingest.file_system(None, mounts) == (None, None)


def test_import_adds_every_run_folder_once(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    runs = {p.parent for p in PAPER.rglob("manifest.json")}
    outs = {p.parent for p in PAPER.rglob("output.json") if not any(q in runs for q in p.parents)}
    assert len(runs) == 4 and len(outs) == 40
    assert store(db, "import", str(PAPER)) == 0
    assert store(db, "import", str(PAPER)) == 0
    assert "0 added, 44 already kept" in capsys.readouterr().out
    assert rows(db, "SELECT count(*) FROM runs") == [(44,)]
    assert rows(db, "SELECT count(*) FROM runs WHERE kind='validate'") == [(4,)]


# ---------------------------------------------------------------- comparing, against numbers computed here

def exact_bootstrap(a: list[float], b: list[float]) -> list[float]:
    """Every equally likely resample's mean(b) - mean(a), enumerated (27 x 27 for 3 values a side), sorted."""
    ma = [sum(s) / len(s) for s in itertools.product(a, repeat=len(a))]
    mb = [sum(s) / len(s) for s in itertools.product(b, repeat=len(b))]
    return sorted(y - x for x in ma for y in mb)


def test_compare_repeats_by_hand_and_a_planted_difference(tmp_path, capsys):
    a = [99.4976117, 99.2152186, 99.0185567]            # run-tiny's kernel AU, its REPEAT=3 launches
    b = [x + 5.0 for x in a]                              # planted: 5 points more AU, far outside the spread
    db = tmp_path / "runs.sqlite"
    assert store(db, "add", str(run_copy(tmp_path, "A", a)), str(run_copy(tmp_path, "B", b))) == 0
    r, = compare_json(db, capsys, "A", "B", "--metric", "kernel.au_percent")["rows"]
    sd = statistics.stdev(a)                              # equal spreads: the pooled sd is each side's
    assert (r["n_a"], r["n_b"]) == (3, 3)
    assert r["mean_a"] == pytest.approx(sum(a) / 3) and r["mean_b"] == pytest.approx(sum(b) / 3)
    assert r["diff"] == pytest.approx(5.0) and r["cohens_d"] == pytest.approx(5.0 / sd)
    dist = exact_bootstrap(a, b)
    q = lambda p: dist[int(p * (len(dist) - 1))]        # noqa: E731
    lo, hi = r["interval"]
    assert q(0.005) <= lo <= q(0.05) and q(0.95) <= hi <= q(0.995), (lo, hi, q(0.025), q(0.975))
    assert lo > 0 and r["verdict"] == "differs" and r["resamples"] == 10000
    same = compare_json(db, capsys, "A", "A", "--metric", "kernel.au_percent")["rows"][0]
    assert same["diff"] == 0 and same["cohens_d"] == 0 and same["verdict"] == "within noise"
    assert same["interval"][0] < 0 < same["interval"][1]
    assert store(db, "compare", "A", "B", "--metric", "kernel.au_percent") == 0
    *_, line, note = capsys.readouterr().out.splitlines()
    assert line.split("\t")[0] == "kernel.au_percent" and line.split("\t")[-1] == "differs"
    assert note.startswith("note: fewer than 5 values a side")


def test_one_value_each_makes_no_noise_estimate(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    assert store(db, "add", str(SCALING / "np2" / "rep1" / "out"), str(KERNEL_OUT)) == 0
    rs = compare_json(db, capsys, "1", "2")["rows"]
    assert rs and all(r["verdict"] == "one value each: no spread, no noise estimate" and r["interval"] is None
                      and r["cohens_d"] is None for r in rs)
    au = next(r for r in rs if r["metric"] == "kernel.au_percent")
    assert au["diff"] == pytest.approx(52.0677301 - 73.8080716)


def test_pooled_repeats_are_the_runs_of_one_config_storage_and_ranks(tmp_path, capsys):
    """np2 rep1+rep2 against np4 rep1+rep2 (one config hash and data folder; ranks tell the groups apart)."""
    db = tmp_path / "runs.sqlite"
    paths = [SCALING / f"np{n}" / f"rep{r}" / "out" for n in (2, 4) for r in (1, 2)]
    assert store(db, "add", *map(str, paths)) == 0
    r = next(x for x in compare_json(db, capsys, "1", "3", "--pool")["rows"] if x["metric"] == "kernel.au_percent")
    a, b = [73.8080716, 72.1305977], [52.0677301, 48.2340014]
    pooled = ((statistics.variance(a) + statistics.variance(b)) / 2) ** 0.5
    assert (r["n_a"], r["n_b"]) == (2, 2) and r["diff"] == pytest.approx(sum(b) / 2 - sum(a) / 2)
    assert r["cohens_d"] == pytest.approx((sum(b) / 2 - sum(a) / 2) / pooled) and r["verdict"] == "differs"
    assert store(db, "compare", "1", "2", "--pool") == 2                 # repeats of each other: refused
    assert "repeat each other" in capsys.readouterr().err


# ---------------------------------------------------------------- bad input: exit 2, naming it; the plot

def test_bad_input_exits_2_naming_it(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    assert store(db, "add", str(tmp_path / "nosuch-run")) == 2
    assert "nosuch-run" in capsys.readouterr().err and not db.exists()
    assert store(db, "add", str(RUN_TINY)) == 0
    for argv, word in ((["show", "42"], "'42'"), (["show", "nosuch-name"], "'nosuch-name'"),
                       (["compare", "1", "nosuch"], "'nosuch'"),
                       (["compare", "1", "1", "--metric", "kernel.nosuch"], "'kernel.nosuch'"),
                       (["trend", "kernel.nosuch"], "'kernel.nosuch'"), (["import", str(tmp_path / "nodir")], "nodir"),
                       (["lsit"], "'lsit'")):
        capsys.readouterr()
        assert store(db, *argv) == 2, argv
        assert word in capsys.readouterr().err, argv
    assert store(tmp_path / "none.sqlite", "list") == 2


def test_trend_plot_is_written(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    assert store(db, "import", str(SCALING)) == 0
    png = tmp_path / "plots" / "au.png"
    assert store(db, "trend", "kernel.au_percent", "--out", str(png)) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert f"{len(list(SCALING.rglob('output.json')))} runs" in capsys.readouterr().out


# ---------------------------------------------------------------- make validate RUNS_DB=: kept, never its status

def test_validate_keeps_its_run_last_and_never_changes_its_status(tmp_path, monkeypatch, capsys):
    """make validate RUNS_DB=... (python -m pipeline --runs-db): the run is kept after its report, and the pass's
    status is validate's whatever the store does; a store that cannot be made is named on stderr (planted:
    /proc/nope), a good store gets the run and stdout (the report path's) stays empty."""
    import pipeline
    run = tmp_path / "runs" / "unet3d-tiny-x"
    shutil.copytree(RUN_TINY, run)
    order: list[str] = []
    keep = pipeline.keep
    monkeypatch.setattr(pipeline, "run", lambda argv: (order.append("run"), (0, run))[1])
    monkeypatch.setattr(pipeline, "validate", lambda rd, quiet, mode: (order.append("validate"), 1)[1])
    monkeypatch.setattr(pipeline, "report", lambda rd: (order.append("report"), 0)[1])
    monkeypatch.setattr(pipeline, "keep", lambda rd, db: (order.append("keep"), keep(rd, db))[1])
    assert pipeline.one_pass([]).status == 1 and order == ["run", "validate", "report"], "without RUNS_DB: no store"
    order.clear()
    for db, added in ((tmp_path / "ok.sqlite", True), (Path("/proc/nope/x.sqlite"), False)):
        capsys.readouterr()
        assert pipeline.one_pass([], runs_db=db).status == 1   # validate's FAIL stands, kept or not
        assert order == ["run", "validate", "report", "keep"]
        order.clear()
        out = capsys.readouterr()
        assert out.out == "", out.out
        assert (f"was not kept in the run store {db}" in out.err) is not added, out.err
        assert db.exists() is added
    assert rows(tmp_path / "ok.sqlite", "SELECT name FROM runs") == [("unet3d-tiny-20261122-010853",)]


# ---------------------------------------------------------------- the report's earlier runs on this storage


def _elsewhere(d: Path) -> Path:
    """The run moved, as its manifest records it, to another storage (its workdirs under /elsewhere/...)."""
    m = json.loads((d / "manifest.json").read_text())
    for rec in m["steps"].values():
        rec["workdir"] = rec["workdir"].replace("/tmp/h5runs2/", "/elsewhere/h5runs/")
    (d / "manifest.json").write_text(json.dumps(m))
    return d


def test_the_report_links_earlier_runs_on_the_same_storage(tmp_path, monkeypatch, capsys):
    """make validate RUNS_DB=...: runs A and B of unet3d on run-tiny's storage and X on another are in the store; the
    pass of run C writes predecessors.json before its report, whose "Earlier runs on this storage" lists B then A
    (newest first: the higher ID), each linked to its folder, with its kernel AU mean (by hand: A's 90, 92, 94 ->
    92.000), and never X (controls: another storage) nor C itself (the pass again, after C was kept). Without
    RUNS_DB no file and no section; a store that cannot be read is said and leaves no file."""
    import pipeline
    db = tmp_path / "runs.sqlite"
    a, b = run_copy(tmp_path, "unet3d-a", [90.0, 92.0, 94.0]), run_copy(tmp_path, "unet3d-b", [99.0, 99.0, 99.0])
    x = _elsewhere(run_copy(tmp_path, "unet3d-x", [50.0, 50.0, 50.0]))
    assert store(db, "add", str(a), str(b), str(x)) == 0
    c = run_copy(tmp_path, "unet3d-c", [95.0, 95.0, 95.0])
    monkeypatch.setattr(pipeline, "run", lambda argv: (0, c))
    monkeypatch.setattr(pipeline, "validate", lambda rd, quiet, mode: 0)
    assert pipeline.one_pass([], runs_db=db).status == 0
    found = json.loads((c / "predecessors.json").read_text())
    assert [r["name"] for r in found["runs"]] == ["unet3d-b", "unet3d-a"] and found["storage"] == "/tmp/h5runs2"
    md = (c / "report" / "report.md").read_text()
    section = md.split("## Earlier runs on this storage", 1)[1]
    assert section.index("unet3d-b") < section.index("unet3d-a") and "unet3d-x" not in section
    assert "(../../unet3d-a)" in section and "| 92.000 |" in section and 'compare <ID> unet3d-c' in section
    assert pipeline.one_pass([], runs_db=db).status == 0   # C is in the store now: still not its own predecessor
    assert "unet3d-c" not in [r["name"] for r in json.loads((c / "predecessors.json").read_text())["runs"]]
    d = run_copy(tmp_path, "unet3d-d", [95.0, 95.0, 95.0])
    monkeypatch.setattr(pipeline, "run", lambda argv: (0, d))
    assert pipeline.one_pass([]).status == 0
    assert not (d / "predecessors.json").exists() and "Earlier runs" not in (d / "report" / "report.md").read_text()
    capsys.readouterr()
    (tmp_path / "bad.sqlite").write_text("not a database")
    assert pipeline.one_pass([], runs_db=tmp_path / "bad.sqlite").status == 0
    assert "was not searched for earlier runs" in capsys.readouterr().err and not (d / "predecessors.json").exists()
