"""The revision x workload table of I/O signatures (fidelity/revisions.{json,md}, fidelity/revisions.py): the table is
the JSON rendered; the JSON's source facts hold against the git mirrors (when this machine has them); and the check
catches each planted divergence in a repository made here: an unclassified differing file, a classified file that is
identical, a stale count, a cited line past a file's end, an "unfetchable" revision a mirror holds."""
from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from fidelity import revisions as rv

REPO = Path(__file__).resolve().parent.parent
JSON = REPO / "fidelity" / "revisions.json"
# mlcommons/storage mlpstorage_py/rules/editions.yaml, edition "3.0", dlio_revisions (read 2026-11-29)
ACCEPTED_V3 = ["edaf4bb3d6343ef2fb6b9f6dbafa6102032ae8bf", "24b13d7630a12e3d08624e5db254694a09f71599",
               "a7d56e73ed4630e47f89720436290a23c0f94b6c", "f6796ed281e39ccc83a450e2b1f21b9c909d8fd0",
               "252a54b18d113541e1e8e24832921fac0a7f2b96", "86945a7a203912435774e0972f6350221446229e",
               "c338e07412350df4d72279be985ff31b82407a80", "95c6a9d46a2a072b7f1455b65b3a5e22602b53e5",
               "17d982a3c7842355c25787c97f636a9f6a474caa", "21c0723de897add728158943d369abd4b333f7dc"]


def test_markdown_is_the_json_rendered():
    assert (REPO / "fidelity" / "revisions.md").read_text() == rv.render(rv.load(JSON))


def test_every_accepted_revision_has_a_row():
    data = rv.load(JSON)
    accepted = [r["rev"] for r in data["revisions"] if r.get("accepted") == "3.0"]
    assert accepted == ACCEPTED_V3
    md = rv.render(data)
    for r in data["revisions"]:
        row = next(line for line in md.splitlines() if line.startswith(f"| `{r['rev'][:7]}`"))
        if not r["fetchable"]:
            assert row.count("not tested") == len(data["workloads"])


def test_source_facts_hold_against_the_mirrors():
    data = rv.load(JSON)
    if not all(rv.holds(rv.mirror_of(rv.MIRRORS, r["repo"]), r["rev"]) for r in data["revisions"] if r["fetchable"]):
        pytest.skip(f"the DLIO git mirrors are not under {rv.MIRRORS} on this machine")
    assert rv.check(data, rv.MIRRORS) == []


def _git(d: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(d), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def planted(tmp_path):
    """A mirror root with one repository: base (two package files) and rev (one of them changed, 12 lines)."""
    work = tmp_path / "src"
    (work / "dlio_benchmark").mkdir(parents=True)
    _git(work, "init", "-q")
    _git(work, "config", "user.email", "t@t")
    _git(work, "config", "user.name", "t")
    (work / "dlio_benchmark" / "main.py").write_text("a\n" * 10)
    (work / "dlio_benchmark" / "reader.py").write_text("r\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "base")
    base = _git(work, "rev-parse", "HEAD")
    (work / "dlio_benchmark" / "main.py").write_text("b\n" * 12)
    _git(work, "commit", "-qam", "rev")
    rev = _git(work, "rev-parse", "HEAD")
    root = tmp_path / "mirrors"
    (root / "o+r").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / "o+r" / "repo")], check=True)
    why = {"w": {"kind": "io", "why": "x", "first_rev": "main.py:12", "first_base": "main.py:10"}}
    data = {"base": {"rev": base, "repo": "o/r"}, "workloads": {"w": "a workload"},
            "revisions": [{"rev": rev, "repo": "o/r", "version": "1", "fetchable": True, "compared": 2,
                           "differs": {"main.py": {"base_lines": "1", "rev_lines": "1", "what": "w", **why}}}]}
    return root, data


def test_planted_repository_holds(planted):
    root, data = planted
    assert rv.check(data, root) == []
    assert "**differs**" in rv.cell(data, data["revisions"][0], "w")


def test_check_names_an_unclassified_differing_file(planted):
    root, data = planted
    data["revisions"][0]["differs"] = {}
    assert rv.check(data, root) == [f"{data['revisions'][0]['rev'][:7]}: dlio_benchmark/main.py differs from "
                                    f"{data['base']['rev'][:7]} but is not classified"]
    assert "**= " in rv.cell(data, data["revisions"][0], "w")  # what the table would have claimed


def test_check_names_a_classified_file_that_is_identical(planted):
    root, data = planted
    d = data["revisions"][0]["differs"]
    d["reader.py"] = copy.deepcopy(d["main.py"])
    d["reader.py"]["w"] = {"kind": "off", "why": "x"}
    assert rv.check(data, root) == [f"{data['revisions'][0]['rev'][:7]}: dlio_benchmark/reader.py is classified as "
                                    "differing but is identical"]


def test_check_names_a_stale_count_and_a_line_past_the_end(planted):
    root, data = planted
    data["revisions"][0]["compared"] = 3
    data["revisions"][0]["differs"]["main.py"]["w"]["first_base"] = "main.py:11"
    problems = rv.check(data, root)
    assert len(problems) == 2
    assert "has 10 lines at" in problems[0] and "'main.py:11' cited" in problems[0]
    assert "2 files of dlio_benchmark/ compared, the JSON says 3" in problems[1]


def test_check_names_an_unfetchable_revision_a_mirror_holds(planted):
    root, data = planted
    data["revisions"][0] = {"rev": data["revisions"][0]["rev"], "repo": "o/r", "version": "1", "fetchable": False}
    assert rv.check(data, root) == [f"{data['revisions'][0]['rev'][:7]}: marked not fetchable, but o+r holds it"]


def test_bad_input_names_the_key(tmp_path, capsys):
    data = json.loads(JSON.read_text())
    data["revisions"][4]["differs"]["storage/obj_store_lib.py"]["unet3d_b200"]["kind"] = "maybe"
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(data))
    assert rv.main(["--json", str(bad), "--out", str(tmp_path / "r.md")]) == 2
    assert "differs['storage/obj_store_lib.py'].unet3d_b200.kind" in capsys.readouterr().err
    data["revisions"][4]["differs"]["storage/obj_store_lib.py"]["unet3d_b200"]["kind"] = "off"
    del data["revisions"][4]["compared"]
    bad.write_text(json.dumps(data))
    assert rv.main(["--json", str(bad), "--out", str(tmp_path / "r.md")]) == 2
    assert "revisions[4]: key 'compared' missing" in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


def test_recorded_runs_match_their_fixtures():
    data = rv.load(JSON)
    assert any(r.get("run_fixtures") for r in data["revisions"])
    assert rv.check_runs(data) == []


def test_check_runs_catches_a_planted_run(tmp_path):
    data = rv.load(JSON)
    rev = next(r for r in data["revisions"] if r.get("run_fixtures"))
    fx = rev["run_fixtures"]["unet3d_b200"]
    base = json.loads((REPO / fx["base"]).read_text())
    same = tmp_path / "same.json"  # the revision's run replaced by the base's: no differing call at all
    same.write_text(json.dumps(base))
    fx["rev"] = str(same)
    problems = rv.check_runs(data)
    assert len(problems) == 2 and "first differing call None" in problems[0] and "data-file opens" in problems[1]
    extra = copy.deepcopy(base)  # one data-file open more on rank 1, at its end
    extra["1"].append(["open", "train/0/img_27_of_28.npz"])
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    fx["rev"] = str(tmp_path / "extra.json")
    fx["first_call"] = {"rank": 1, "index": len(base["1"]), "base": None, "rev": ["open", "train/0/img_27_of_28.npz"]}
    fx["data_opens"] = {"base": rv.data_opens(base), "rev": rv.data_opens(base)}
    assert rv.check_runs(data) == [f"{rev['rev'][:7]} unet3d_b200: data-file opens "
                                   f"{ {'base': rv.data_opens(base), 'rev': rv.data_opens(extra)} }, recorded "
                                   f"{fx['data_opens']}"]


E1919D7 = "e1919d7b6ccffbe15143cd616517da9e5d7b26a7"


def _unet3d_tiny_sample_shuffle(tmp_path: Path, ref_dir: Path) -> str:
    """reader.sample_shuffle of `unet3d` tiny merged over e1919d7's own configs/workload/unet3d_h100.yaml (from the
    argonne mirror), as the harness merges it for the matrix's 2.0.1-17 row."""
    from harness.workload import load
    mirror = rv.mirror_of(rv.MIRRORS, "argonne-lcf/dlio_benchmark")
    if not rv.holds(mirror, E1919D7):
        pytest.skip(f"no argonne-lcf/dlio_benchmark mirror under {rv.MIRRORS}")
    wl = tmp_path / "workload"
    wl.mkdir(exist_ok=True)
    (wl / "unet3d_h100.yaml").write_text(rv._git(mirror, "show", f"{E1919D7}:dlio_benchmark/configs/workload/"
                                                         "unet3d_h100.yaml"))
    return load("unet3d", "tiny", wl, ref_dir).config["reader"].get("sample_shuffle")


def test_e1919d7_matrix_row_ran_with_sample_shuffle_on(tmp_path):
    rows = json.loads((REPO / "fidelity" / "matrix.json").read_text())["rows"]
    row = next(r for r in rows if r["dlio_revision"] == E1919D7)
    assert row["workload"] == "unet3d-tiny" and row["verdict"] == "pass"
    assert _unet3d_tiny_sample_shuffle(tmp_path, REPO / "reference-configs") == "seed"
    # negative control: an overlay that turns it off is seen
    planted = tmp_path / "refs"
    planted.mkdir()
    text = (REPO / "reference-configs" / "unet3d.yaml").read_text()
    off = "overlay:\n  reader:\n    sample_shuffle: 'off'\n"
    (planted / "unet3d.yaml").write_text(text.replace("overlay:\n", off, 1))
    assert _unet3d_tiny_sample_shuffle(tmp_path, planted) == "off"
