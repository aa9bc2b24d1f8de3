"""`make sizing LAUNCHER=srun` across the 2-node Slurm of namespaces (tests/slurm_nodes.py) against ONE throttled
storage both nodes read (bench/perf/throttled.py: the case of sizing a shared file system): each node's slurmd starts in
the storage's blkio cgroup, so its slurmstepds and every task of every step inherit it (proctrack/linuxproc and
task/none move no task elsewhere). Checked: every task of every step seen running (/proc/<pid>/cgroup) is in that
cgroup, on both nodes; every trial's ranks on both nodes (output.json "nodes"); the answer the analytic count
(bandwidth / one accelerator's demand) within the search's tolerance. Negative control: node 2's slurmd moved back to
the root cgroup, a step's task there is caught as an escape naming the node. Skipped, with the reason, without root,
a loop device, cgroup v1 blkio, Slurm or the DLIO 3.x venv (docs/sizing.md "Across nodes")."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import slurm
import slurm_nodes
from test_dlio3_checkpoint import dlio3_venv
from test_sizing import analytic, within

from bench.perf import throttled
from harness import sizing

N1, N2 = "h5dlio-n1", "h5dlio-n2"
MIB = 2**20
RANKS_MAX = slurm_nodes.NODES * slurm_nodes.CPUS   # 4: a step of more tasks than the nodes' CPUs is refused


def _search(c: slurm_nodes.Nodes, venv: Path, d: Path, data: Path, workload: str, scale: str, *extra: str):
    """The search as `make sizing LAUNCHER=srun` runs it from a login node of the cluster: SLURM_JOB_NUM_NODES=2
    (srun's -N; also the search's HOSTS) spreads each trial's ranks over both nodes, block distribution. Measured:
    SLURM_NNODES=2 alone does not (Slurm 22.05's srun -n 2 put both ranks on h5dlio-n1; the hosts check caught it)."""
    return subprocess.run([sys.executable, "-m", "harness", "sizing", "--workload", workload, "--scale", scale,
                           "--ranks-max", str(RANKS_MAX), "--min-steps", "20", "--host-memory-gb", "0",
                           "--launcher", "srun", "--dlio-venv", str(venv), "--sizing-dir", str(d), "--data",
                           str(data), *extra], cwd=sizing.REPO, env={**c.env, "SLURM_JOB_NUM_NODES": "2"},
                          capture_output=True, text=True, timeout=900)


def _hosts(res: dict) -> dict[int, list[str]]:
    """Each trial's ranks' hosts as the kernel wrote them (output.json "nodes"), by accelerator count."""
    return {t["n"]: json.loads(Path(t["output"]).read_text())["nodes"]["rank_host"] for t in res["trials"]}


def test_escapes_names_each_unthrottled_task_and_each_node_never_seen():
    """The escape check on made-up sightings: all tasks in the cgroup on both nodes passes; a task in the root cgroup,
    or a node none of whose tasks was seen (its ranks never looked at), fails naming it."""
    cg = "/h5dlio-throttled-1-x"
    good = {10: (N1, cg, "h5dlio"), 11: (N2, cg, "h5dlio")}
    assert throttled.escapes(good, cg, [N1, N2]) == []
    assert throttled.escapes({**good, 12: (N2, "/", "h5dlio --config c")}, cg, [N1, N2]) == \
        [f"pid 12 on {N2} in blkio cgroup /, not {cg}: h5dlio --config c"]
    assert throttled.escapes({10: good[10]}, cg, [N1, N2]) == [f"no task seen on {N2}"]


@pytest.mark.slurm
@pytest.mark.dlio
@pytest.mark.slow
@pytest.mark.parametrize("workload,scale,mib_s,demand,extra", [
    ("unet3d_b200", "tiny_odirect", 100, (7, MIB, 0.162), ()),                # O_DIRECT: 2.31 fed
    ("retinanet_b200", "tiny", 400, (24, 568 * 568, 0.04755), ("--cold",)),  # plain reads, evicted: 2.58 fed
])
def test_search_across_two_nodes_on_one_throttled_storage(tmp_path, workload, scale, mib_s, demand, extra):
    venv = dlio3_venv()
    if venv is None:
        pytest.skip("no venv of MLCommons DLIO 3.x (H5DLIO_DLIO3_VENV or the cache's dlio-3.0.2-*)")
    bps, t0 = mib_s * MIB, time.monotonic()
    try:
        with throttled.storage(bps, size="4G") as fs:
            try:
                c = slurm_nodes.start(node_preexec=fs.enter)
            except slurm.Unavailable as e:
                pytest.skip(f"no 2-node Slurm here: {e}")
            try:
                with throttled.Tasks(c.conf) as tasks:
                    p = _search(c, venv, tmp_path / "s", fs.mount / "data", workload, scale, *extra)
                throttled.leave(c.procs[N2].pid)   # planted: node 2 (its next steps) unthrottled
                with throttled.Tasks(c.conf) as planted:
                    q = c.run(["srun", "-N", "2", "-n", "2", "sleep", "2"], timeout=120)
            finally:
                c.stop()
            cgroup = fs.name
    except throttled.Unavailable as e:
        pytest.skip(f"no throttled storage here: {e}")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    res = json.loads((tmp_path / "s" / "sizing.json").read_text())
    expected, hosts = analytic(bps, *demand), _hosts(res)
    print(f"\n{workload} on 2 nodes, one storage throttled at {mib_s} MiB/s: answer {res['largest']} (analytic "
          f"{expected:.2f}) in {time.monotonic() - t0:.0f} s; " + ", ".join(
              f"{t['n']}: AU {t['au']:.1f}% on {sorted(set(hosts[t['n']]))}" for t in res["trials"])
          + f"; {len(tasks.seen)} tasks seen")
    assert throttled.escapes(tasks.seen, cgroup, [N1, N2]) == []
    kernel = {node for node, _, cmd in tasks.seen.values() if cmd.startswith(str(sizing.KERNEL_BIN))}
    assert kernel == {N1, N2}, tasks.seen
    for n, h in hosts.items():
        assert len(h) == n and set(h) == ({N1} if n == 1 else {N1, N2}), (n, h)
    assert res["outcome"] == "max" and within(res["largest"], expected), res
    assert not within(res["largest"], analytic(2 * bps, *demand))
    assert q.returncode == 0, q.stderr
    caught = throttled.escapes(planted.seen, cgroup, [N1, N2])
    assert len(caught) == 1 and caught[0].startswith("pid ") and f" on {N2} in blkio cgroup /, not " in caught[0], \
        caught
