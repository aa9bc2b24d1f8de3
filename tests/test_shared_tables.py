"""The per-file tables as validate and reports read them at 10^6 files (issue 26, "peak memory <= 2 GB"): equal
counts one shared read-only object (common.rundir.loads_table shared=True), a table's last member read from its end
(RunDir.table_member); what validate writes is the same either way. Memory itself is measured, not asserted here:
bench/results/2026-11-27-validate-memory-1m."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from common import rundir
from common.rundir import RunDir, Shared, last_member, loads_table

RUN_TINY = Path(__file__).resolve().parent / "data" / "run-tiny"
MIXED = ('{"rows": {"a": {"n": 1}, "b": {"n": true}, "c": {"n": 1.0}, "d": {"n": 1}, "e": {"n": "1"}, "f": {}, '
         '"g": {}, "h1": {"h": {"x": 2}, "m": 3}, "h2": {"h": {"x": 2}, "m": 3}}, "list": [{"n": 1}, {"n": 1}], '
         '"t": 0.5}')


def test_shared_tables_read_as_the_plain_ones_byte_for_byte():
    """Every table of a real run (tests/data/run-tiny) and one of mixed values: equal to json's parse and written back
    to the same bytes; equal counts are one object."""
    for p in sorted((RUN_TINY / "tables").glob("*.json")):
        text = p.read_text()
        assert loads_table(text, shared=True) == loads_table(text), p.name
        assert json.dumps(loads_table(text, shared=True)) == json.dumps(loads_table(text)), p.name
    t = loads_table(MIXED, shared=True)
    assert json.dumps(t) == json.dumps(json.loads(MIXED))
    r = t["rows"]
    assert r["a"] is r["d"] is t["list"][0] is t["list"][1] and r["f"] is r["g"] and r["h1"] is r["h2"]
    assert r["b"] is not r["a"] and r["c"] is not r["a"] and type(r["e"]) is dict  # true, 1.0 and "1" are not 1
    k = loads_table((RUN_TINY / "tables" / "dftracer-kernel.json").read_text(), shared=True)["files"]["files"]
    rows = list(k.values())
    assert all(type(r["calls"]) is Shared for r in rows) and len({id(r["calls"]) for r in rows}) == 1


def test_sharing_by_equality_alone_would_change_the_bytes():
    """The control of the type rule: objects of scalars shared by == alone (true == 1 == 1.0) write other bytes."""
    seen: dict = {}

    def naive(pairs):
        try:
            return seen.setdefault(tuple(pairs), dict(pairs))
        except TypeError:  # a dict or a list among the values
            return dict(pairs)
    assert json.dumps(json.loads(MIXED, object_pairs_hook=naive)) != json.dumps(json.loads(MIXED))


def test_shared_objects_are_read_only_and_copies_are_not():
    t = loads_table(MIXED, shared=True)
    row = t["rows"]["a"]
    for change in (lambda: row.__setitem__("n", 2), lambda: row.pop("n"), lambda: row.update(n=2),
                   lambda: row.setdefault("z", 1), lambda: row.clear(), lambda: row.__delitem__("n")):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert t["rows"]["d"]["n"] == 1  # the file sharing it unchanged
    c = copy.deepcopy(t)["rows"]["a"]
    c["n"] = 2
    assert type(c) is dict and t["rows"]["a"]["n"] == 1


def test_skip_and_the_share_limit(monkeypatch):
    """skip leaves a key out of every object (then rows of equal counts are one); past SHARE_LIMIT distinct objects
    each is a plain dict of its own, the table still equal."""
    text = (RUN_TINY / "tables" / "dftracer-kernel.json").read_text()
    plain = json.loads(text)
    t = loads_table(text, shared=True, skip=("read_time_s",))
    for name, row in plain["files"]["files"].items():
        assert t["files"]["files"][name] == {k: v for k, v in row.items() if k != "read_time_s"}
    two = '{"a": {"n": 1, "read_time_s": 0.5}, "b": {"n": 1, "read_time_s": 0.25}}'
    s, whole = loads_table(two, shared=True, skip=("read_time_s",)), loads_table(two, shared=True)
    assert s == {"a": {"n": 1}, "b": {"n": 1}} and s["a"] is s["b"] and whole["a"] is not whole["b"]
    monkeypatch.setattr(rundir, "SHARE_LIMIT", 2)
    assert loads_table(text, shared=True) == plain


@pytest.mark.parametrize("text,found,value", [
    ('{"a": 1, "metadata": {"metadata": 2}}', True, {"metadata": 2}),   # the nested one is not the last member
    ('{"x": "\\"metadata\\": 3", "metadata": [1]}\n', True, [1]),        # quoted in a string: not a key
    ('{"metadata" : 5 }', True, 5),
    ('{"a": {"metadata": 1}}', False, None),                             # a nested member only
    ('{"metadata": 1, "b": 2}', False, None),                            # not the last member
    ('[{"metadata": 1}]', False, None),
])
def test_last_member(text, found, value):
    assert last_member(text, "metadata") == (found, value)
    if found:
        assert json.loads(text)["metadata"] == value


def test_table_member_reads_the_end_or_the_whole_table(tmp_path, monkeypatch):
    """The last member from a window at the table's end (grown while the member does not fit), another member from
    the table parsed whole: the same value as json's parse."""
    monkeypatch.setattr(rundir, "TAIL", 16)
    rd = RunDir(tmp_path)
    (tmp_path / "tables").mkdir()
    t = json.loads((RUN_TINY / "tables" / "dftracer-kernel.json").read_text())
    (tmp_path / "tables" / "t.json").write_text(json.dumps(t))
    for key in ("metadata", "features", "side", "nothing"):
        assert rd.table_member("t.json", key) == t.get(key), key
    assert rd.table_member("absent.json", "metadata") is None


def _validate(run: Path) -> tuple[dict, bytes]:
    from validate.checks import validate
    v = validate(run)
    return v, (run / "tables" / "files-dftracer.json").read_bytes()


def test_validate_judges_and_writes_the_same_with_shared_tables(tmp_path, monkeypatch):
    """validate over a real run (tests/data/run-tiny) as it reads the tables now and with every table parsed plain:
    the same verdict, row by row, and the same files-dftracer.json; a data file read at another offset on the
    kernel's side (planted in its DFTracer table) fails dftracer.per_file alike in both."""
    runs = {}
    for name in ("shared", "plain", "shared-bad", "plain-bad"):
        runs[name] = tmp_path / name
        shutil.copytree(RUN_TINY, runs[name])
        if name.endswith("-bad"):
            p = runs[name] / "tables" / "dftracer-kernel.json"
            t = json.loads(p.read_text())
            row = t["files"]["files"]["train/img_03_of_28.hdf5"]
            row["accesses"] = {("4096+8" if a == "0+8" else a): n for a, n in row["accesses"].items()}
            p.write_text(json.dumps(t))
    got = {n: _validate(runs[n]) for n in ("shared", "shared-bad")}
    plain_table = RunDir.table
    monkeypatch.setattr(RunDir, "table", lambda self, name, shared=False, skip=(): plain_table(self, name))
    got |= {n: _validate(runs[n]) for n in ("plain", "plain-bad")}
    for kind in ("", "-bad"):
        (vs, fs), (vp, fp) = got["shared" + kind], got["plain" + kind]
        assert vs["checks"] == vp["checks"] and fs == fp, kind
    rows = {c["name"]: c for c in got["shared-bad"][0]["checks"]}
    assert got["shared"][0]["verdict"] == "pass" and rows["dftracer.per_file"]["status"] == "fail"
    assert "img_03_of_28" in rows["dftracer.per_file"]["detail"]
