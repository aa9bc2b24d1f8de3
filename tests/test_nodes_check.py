"""validate's nodes.* checks and the timing profile's per-rank hosts, on planted tables (no launch): the same placement
under other node names passes, a rank on another node fails naming it, a missing side skips with the reason, and each
node's local rank 0's report is compared entry by entry. tests/test_slurm_nodes.py runs them on a real 2-node run."""
from __future__ import annotations

import json
from types import SimpleNamespace

from profiles.timing import nodes_dlio, nodes_kernel
from validate.checks import check_nodes


def _run(dlio: dict | None, kernel: dict | None):
    t = {"dlio": [{"nodes": dlio}], "kernel": [{"nodes": kernel}]}
    return SimpleNamespace(table=lambda name: t if name == "timing.json" else None)


def _side(hosts: list[str], mem: list[float] | None = None) -> dict:
    n = len(dict.fromkeys(hosts))
    return {"rank_host": hosts, "num_hosts": n, "host_memory_GiB": mem if mem is not None else [23.5] * n}


def _rows(run) -> dict:
    return {r["name"]: r for r in check_nodes(run)}


def test_same_placement_other_names_passes():
    """Two launches of a real cluster may get other nodes: the partition of the ranks is what must agree."""
    rows = _rows(_run(_side(["a", "a", "b", "b"]), _side(["x", "x", "y", "y"])))
    assert rows["nodes.placement"]["status"] == "pass" and rows["nodes.local_rank_0"]["status"] == "pass"
    assert rows["nodes.placement"]["observed"] == [0, 0, 1, 1]


def test_a_rank_on_another_node_fails_naming_it():
    rows = _rows(_run(_side(["n1", "n2"]), _side(["n1", "n1"])))
    p = rows["nodes.placement"]
    assert p["status"] == "fail" and p["required"]
    assert "from rank 1" in p["detail"] and "['n1', 'n1']" in p["detail"]
    assert "num_hosts DLIO 2, kernel 1" in p["detail"]
    rows = _rows(_run(_side(["n1", "n2", "n1", "n2"]), _side(["n1", "n1", "n2", "n2"])))   # cyclic vs block
    assert rows["nodes.placement"]["status"] == "fail" and "from rank 1" in rows["nodes.placement"]["detail"]


def test_local_rank_0_report_compared_per_node():
    rows = _rows(_run(_side(["n1", "n2"], [23.5, 23.5]), _side(["n1", "n2"], [23.5])))
    assert rows["nodes.local_rank_0"]["status"] == "fail"
    rows = _rows(_run(_side(["n1", "n2"], [23.5, 11.0]), _side(["n1", "n2"], [23.5, 23.5])))
    assert rows["nodes.local_rank_0"]["status"] == "fail" and "[23.5, 11.0]" in rows["nodes.local_rank_0"]["detail"]
    rows = _rows(_run({**_side(["n1"]), "host_memory_GiB": None}, _side(["n1"])))
    assert rows["nodes.local_rank_0"]["status"] == "skip"


def test_missing_side_skips_with_the_reason():
    rows = _rows(_run(None, _side(["n1"])))
    assert {r["status"] for r in rows.values()} == {"skip"}
    assert "DLIO (<rank>_output.json)" in rows["nodes.placement"]["detail"]
    rows = _rows(SimpleNamespace(table=lambda name: None))
    assert "no timing launch" in rows["nodes.placement"]["detail"]


def test_parsers(tmp_path):
    """DLIO's <rank>_output.json hostnames in rank order (not the file listing's), summary.json's per-node list; the
    kernel's output.json "nodes"; a DLIO output folder without rank files gives None."""
    for r, h in ((0, "n1"), (10, "n2"), (2, "n1")):
        (tmp_path / f"{r}_output.json").write_text(json.dumps({"hostname": h}))
    (tmp_path / "summary_output.json").write_text("{}")   # not a rank's file
    d = nodes_dlio(tmp_path, {"num_hosts": 2, "host_memory_GB": [1.0, 2.0]})
    assert d["rank_host"][:3] == ["n1", None, "n1"] and d["rank_host"][10] == "n2" and len(d["rank_host"]) == 11
    assert d["num_hosts"] == 2 and d["host_memory_GiB"] == [1.0, 2.0]
    assert nodes_dlio(tmp_path / "none", {}) is None
    k = nodes_kernel({"nodes": {"count": 2, "rank_host": ["n1", "n2"], "local_rank": [0, 0], "per_node": [
        {"host": "n1", "local_rank_0": 0, "ranks": [0], "host_memory_GiB": 1.0},
        {"host": "n2", "local_rank_0": 1, "ranks": [1], "host_memory_GiB": 2.0}]}})
    assert k == {"rank_host": ["n1", "n2"], "num_hosts": 2, "host_memory_GiB": [1.0, 2.0]}
    assert nodes_kernel({}) is None
