"""The run directory's schema (common.rundir.manifest_schema, docs/validation.md "The schema"): the harness writes
"schema": 1 into manifest.json; validate and reports read a manifest without it (every run made before it) as
schema 0, migrated by changing nothing, and schema 1 as it is; a higher number is refused with exit 2 naming the
file, the number and the highest this tree reads."""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common.rundir import SchemaError, manifest_schema, read_manifest

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"
ENV = {"PYTHONPATH": str(REPO), "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"}


def _run(tmp_path: Path, schema) -> Path:
    """A copy of run-tiny (a schema 0 run: made before the number) with "schema" set (None: left out)."""
    run = tmp_path / f"run-{schema}"
    shutil.copytree(RUN_TINY, run, ignore=shutil.ignore_patterns("verdict.json", "report"))
    m = json.loads((run / "manifest.json").read_text())
    assert "schema" not in m, "run-tiny is meant to be a run made before the schema number"
    if schema is not None:
        m["schema"] = schema
    (run / "manifest.json").write_text(json.dumps(m))
    return run


def test_manifest_schema_reads_0_and_1_and_refuses_the_rest():
    assert manifest_schema({"steps": {}}) == 0
    assert manifest_schema({"schema": 1}) == 1
    for bad, words in ((2, ["schema 2", "schema 1 at most"]), (99, ["schema 99"]), ("1", ["'1'"]),
                       (True, ["True"]), (-1, ["-1"]), (1.0, ["1.0"])):
        with pytest.raises(SchemaError) as e:
            manifest_schema({"schema": bad}, "x/manifest.json")
        assert "x/manifest.json" in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("tool", ["validate", "reports"])
def test_a_future_schema_is_refused_with_exit_2(tmp_path, tool):
    run = _run(tmp_path, 2)
    p = subprocess.run([sys.executable, "-m", tool, str(run)], cwd=REPO, env=ENV, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    for w in (f"{tool}: error: ", str(run / "manifest.json"), "schema 2", "schema 1 at most"):
        assert w in p.stderr, (w, p.stderr)
    assert not (run / "verdict.json").exists() and not (run / "report").exists(), "refused before writing"


def test_schema_0_and_1_are_read_alike_by_validate_and_reports(tmp_path):
    verdicts = {}
    for schema in (None, 1):
        run = _run(tmp_path, schema)
        p = subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run)], cwd=REPO, env=ENV,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        verdicts[schema] = json.loads((run / "verdict.json").read_text())
        p = subprocess.run([sys.executable, "-m", "reports", str(run)], cwd=REPO, env=ENV, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        assert (run / "report" / "report.md").exists()
    assert verdicts[None] == verdicts[1], "schema 0 -> 1 changes nothing"
    assert read_manifest(tmp_path / "run-None" / "manifest.json") == \
        json.loads((RUN_TINY / "manifest.json").read_text()), "a schema 0 manifest is read as stored"


def test_the_harness_writes_schema_1_and_resume_refuses_a_future_one(tmp_path, monkeypatch):
    from test_core_config import F6796ED, UNET3D_B200

    from harness import plan as hplan
    from harness import run as hrun
    from harness.workload import Workload
    monkeypatch.setattr(hrun, "_dlio_block", lambda venv: {"version": "3.0.2", "revision": F6796ED})
    monkeypatch.setattr(hrun, "versions", lambda py: {"kernel": "0.1.0"})
    monkeypatch.setattr(hplan, "merged_config", lambda w: copy.deepcopy(UNET3D_B200))
    wl = Workload("unet3d_b200", "tiny", "unet3d", copy.deepcopy(UNET3D_B200), "x.yaml")
    assert hrun.prepare(tmp_path / "r", hplan.build(wl, hplan.Options(), tmp_path))["schema"] == 1
    run = _run(tmp_path, 2)
    why = hrun.check_resumable(run)
    assert why and "schema 2" in why and str(run / "manifest.json") in why, why


def test_every_reader_reads_through_rundir_and_refuses_a_future_schema(tmp_path):
    """The run store, the version matrix, the mutants and the report read a run through common.rundir.RunDir: a
    manifest of schema 2 is refused by each (the store: bad input naming it; the matrix: the run left out; the
    mutants: SchemaError); the same run at schema 1 is read by each (the control)."""
    from fidelity import matrix, mutants
    from reports.rundir import NotARunDir, load_run
    from store import ingest
    for schema in (1, 2):
        run = _run(tmp_path, schema)
        shutil.copy(RUN_TINY / "verdict.json", run / "verdict.json")
        if schema == 1:
            assert ingest.load(run)["workload"] == "unet3d"
            assert matrix.row_of(run)["verdict"] == json.loads((RUN_TINY / "verdict.json").read_text())["verdict"]
            assert mutants._dlio_wall(run) > 0
            assert load_run(run).verdict is not None
            continue
        with pytest.raises(ingest.BadInput, match="schema 2"):
            ingest.load(run)
        assert matrix.row_of(run) is None
        with pytest.raises(SchemaError):
            mutants._dlio_wall(run)
        with pytest.raises(NotARunDir, match="schema 2"):
            load_run(run)
