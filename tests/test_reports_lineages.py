"""The report renders every check family of every workload family it is given: real run directories of the
TensorFlow loader, torch.save checkpoints and evaluation (tests/data/lineages/README.md), beside run-tiny's PyTorch
one. A check shape the report cannot render (as DLIO 3.x's integer counts.dftracer rows once did) fails here."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINEAGES = REPO / "tests" / "data" / "lineages"
NOT_HERE = {
    "mlperf_storage_v2.0-llama3_8b": "needs argonne-lcf/dlio_benchmark's mlperf_storage_v2.0 branch (392621b) checked "
                                     "out: `make fidelity-run DLIO=<checkout> WORKLOAD=llama3_8b`",
    "dlio3-unet3d": "needs an MLCommons DLIO 3.x checkout (Python >= 3.12): `make fidelity-run DLIO=<checkout>`",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in LINEAGES.iterdir() if p.is_dir()) + sorted(NOT_HERE))
def test_report_renders_every_check_of_a_saved_run(name, tmp_path):
    if name in NOT_HERE:
        pytest.skip(f"no saved run of {name} here: {NOT_HERE[name]}")
    run = tmp_path / name
    shutil.copytree(LINEAGES / name, run)
    p = subprocess.run([sys.executable, "-m", "reports", str(run)], cwd=REPO, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    md = (run / "report" / "report.md").read_text()
    checks = json.loads((run / "verdict.json").read_text())["checks"]
    assert len(checks) > 30
    missing = [c["name"] for c in checks if f"| {c['name']} |" not in md]
    assert not missing, missing


@pytest.mark.slow
def test_first_screen_is_the_verdict_by_family_with_the_details_folded(tmp_path):
    """The report opens with the verdict, one row per check family (pass/fail/skip counts summing to the verdict's)
    and DLIO/kernel ratios; every check's detail (dlio.version's alone once filled 1,400 pixels) is behind a
    <details> fold, after the family table."""
    import re
    run = tmp_path / "run"
    shutil.copytree(LINEAGES / "unet3d_checkpoint", run)
    assert subprocess.run([sys.executable, "-m", "reports", str(run)], cwd=REPO, capture_output=True,
                          timeout=600).returncode == 0
    page = (run / "report" / "report.html").read_text()
    v = json.loads((run / "verdict.json").read_text())
    fam = page.index('id="tbl-families"')
    fold = page.index("<details><summary>Every check of verdict.json")
    assert fam < fold < page.index('id="tbl-verdict"') < page.index("</details>", fold)
    long_detail = max((c for c in v["checks"]), key=lambda c: len(str(c["detail"])))
    assert len(str(long_detail["detail"])) > 200 and page.index(str(long_detail["detail"])[:60]) > fold
    body = page[fam:page.index("</table>", fam)]
    rows = re.findall(r"<tr><td><code>(\w+)\.\*</code></td><td>[^<]*</td><td[^>]*>(\d+)</td><td[^>]*>(\d+)</td>"
                      r"<td[^>]*>(\d+)</td></tr>", body)
    assert {r[0] for r in rows} == {c["name"].split(".")[0] for c in v["checks"]}
    for i, status in enumerate(("pass", "fail", "skip"), start=1):
        assert sum(int(r[i]) for r in rows) == v["summary"].get(status, 0), status
    assert "DLIO / kernel wall time" in page[:fam]
