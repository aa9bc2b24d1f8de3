"""A verdict names the classes of I/O its profiles could not see (validate.checks.COVERAGE): a PASS with the Log VFD
alone says that I/O outside HDF5 was not compared, instead of letting PASS imply it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUN_TINY = REPO / "tests" / "data" / "run-tiny"


def _validate(run: Path) -> tuple[dict, str]:
    p = subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run)], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    return json.loads((run / "verdict.json").read_text()), p.stdout


# run-tiny's DFTracer tables predate process_order: the order of opens by name (data_order) is not compared there
# (tests/test_dftracer.py::test_validate_compares_the_order_of_opens adds it and sees it compared)
@pytest.mark.parametrize("drop,unseen", [
    ((), {"data_order"}),
    (("dftracer-dlio.json", "dftracer-kernel.json"), {"posix_data", "posix_other", "data_order"}),
    (("logvfd-dlio.json", "logvfd-kernel.json", "logvfd-rt0-dlio.json", "logvfd-rt0-kernel.json"),
     {"hdf5_reads", "counts_model", "data_order"}),  # DLIO 2.0.0's counts come from the Log VFD
], ids=["every profile", "without DFTracer", "without the Log VFD"])
def test_verdict_names_what_its_profiles_could_not_see(tmp_path, drop, unseen):
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    for t in drop:
        (run / "tables" / t).unlink()
    v, out = _validate(run)
    assert v["verdict"] == "pass"
    assert {x["io"] for x in v["not_compared"]} == unseen
    for x in v["not_compared"]:
        assert f"not compared: {x['what']}" in out


def test_checkpoint_writes_unseen_without_a_tracer(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    m = json.loads((run / "manifest.json").read_text())
    m["workload"]["config"]["workflow"]["checkpoint"] = True
    (run / "manifest.json").write_text(json.dumps(m))
    for t in ("dftracer-dlio.json", "dftracer-kernel.json"):
        (run / "tables" / t).unlink()
    v, _ = _validate(run)
    assert "checkpoint_writes" in {x["io"] for x in v["not_compared"]}
