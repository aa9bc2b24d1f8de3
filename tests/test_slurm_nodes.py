"""Several nodes on this one machine: a 2-node Slurm (tests/slurm_nodes.py: each slurmd in a network and UTS
namespace of its own, a veth pair to a bridge of the host where slurmctld and srun are), started for this module and
stopped after it, interfaces and namespaces included. What is checked: each rank runs on a node of its own hostname
and network; MPI traffic between nodes crosses the veths (and traffic within a node does not); the kernel's
rank->node mapping in its output; `make validate LAUNCHER=srun` across the 2 nodes, 1 rank per node and 2, with the
nodes.* checks (each side's ranks on the same nodes, each node's local rank 0's report) and a planted divergence
(the kernel's ranks placed otherwise) that fails them and nothing else. Skipped, with the reason, where Slurm or the
namespaces cannot be had (not root, no `ip`/`unshare`)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import slurm
import slurm_nodes
from kernel import dlio_order, run, tiny

from pipeline import named_run

pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parent.parent
VENV = os.environ.get("H5DLIO_DLIO_VENV", "")
N1, N2 = "h5dlio-n1", "h5dlio-n2"
MIB16 = 16 << 20
PINGPONG = r"""#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* rank 0 sends argv[1] bytes to rank 1, which sends them back; each rank prints its host */
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = atol(argv[1]);
    char *buf = calloc(n, 1), host[64] = "";
    gethostname(host, sizeof host - 1);
    if (rank == 0) {
        MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    printf("rank %d on %s\n", rank, host);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def nodes():
    try:
        c = slurm_nodes.start()
    except slurm.Unavailable as e:
        pytest.skip(f"no 2-node Slurm here: {e}")
    try:
        yield c
    finally:
        c.stop()
        assert not c.remains(), f"the 2-node cluster left {c.remains()}"


def _per_task(p: subprocess.CompletedProcess) -> dict[int, list[str]]:
    """srun -l output: task -> its lines"""
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out: dict[int, list[str]] = {}
    for ln in p.stdout.splitlines():
        task, _, text = ln.partition(": ")
        out.setdefault(int(task), []).append(text.strip())
    return out


def _where(nodes, *placement: str) -> dict[int, list[str]]:
    """Each task's hostname, net and UTS namespaces and eth0's address, under the given srun placement."""
    script = "hostname; readlink /proc/self/ns/net; readlink /proc/self/ns/uts; ip -4 -o addr show eth0 | " \
             "awk '{print $4}'"
    return _per_task(nodes.run(["srun", "-l", *placement, "sh", "-c", script], timeout=60))


def test_each_node_has_its_own_hostname_and_network(nodes):
    """srun -N 2 -n 2: task 0 on h5dlio-n1 (10.253.x.11), task 1 on h5dlio-n2 (.12), each in a net and a UTS
    namespace that is neither the other's nor this process's; the control: -N 1 -n 2 puts both tasks in one."""
    own = [os.readlink(f"/proc/self/ns/{k}") for k in ("net", "uts")]
    two = _where(nodes, "-N", "2", "-n", "2")
    assert [two[t][0] for t in (0, 1)] == [N1, N2], two
    assert [two[t][3] for t in (0, 1)] == [f"{nodes.net.addr(i)}/24" for i in (1, 2)], two
    for k in (1, 2):   # net, uts
        assert two[0][k] != two[1][k] and own[k - 1] not in (two[0][k], two[1][k]), two
    one = _where(nodes, "-N", "1", "-n", "2", "-w", N2)
    assert one[0] == one[1] and one[0][0] == N2, one   # the comparison above can see sameness


def _pingpong(tmp: Path) -> str:
    if not shutil.which("mpicc"):
        pytest.skip("no mpicc to build the ping-pong program")
    (tmp / "pingpong.c").write_text(PINGPONG)
    subprocess.run(["mpicc", "-O1", "-o", str(tmp / "pingpong"), str(tmp / "pingpong.c")], check=True, timeout=120)
    return str(tmp / "pingpong")


def _traffic(nodes, prog: str, *placement: str) -> tuple[dict, list[dict]]:
    before = [nodes.net.bytes(i) for i in (1, 2)]
    tasks = _per_task(nodes.run(["srun", "-l", "--mpi=pmix", *placement, prog, str(MIB16)], timeout=120))
    after = [nodes.net.bytes(i) for i in (1, 2)]
    return tasks, [{k: a[k] - b[k] for k in a} for b, a in zip(before, after, strict=True)]


def test_mpi_traffic_crosses_the_veths(nodes, tmp_path):
    """Open MPI under PMIx between the namespaces: 16 MiB from rank 0 (h5dlio-n1) to rank 1 (h5dlio-n2) and back
    are counted by both veths, each way; the control: the same two ranks on one node (shared memory) move less than
    1 MiB over either veth (Slurm's own messages)."""
    prog = _pingpong(tmp_path)
    tasks, moved = _traffic(nodes, prog, "-N", "2", "-n", "2")
    print(f"\n16 MiB ping-pong between nodes, bytes over the veths: {moved}")
    assert tasks == {0: [f"rank 0 on {N1}"], 1: [f"rank 1 on {N2}"]}
    for m in moved:
        assert m["rx"] >= MIB16 and m["tx"] >= MIB16, moved
    tasks, moved = _traffic(nodes, prog, "-N", "1", "-n", "2", "-w", N1)
    print(f"the same within h5dlio-n1: {moved}")
    assert tasks == {0: [f"rank 0 on {N1}"], 1: [f"rank 1 on {N1}"]}
    assert all(m["rx"] < 1 << 20 and m["tx"] < 1 << 20 for m in moved), moved


@pytest.mark.parametrize("ranks", [2, 4])
def test_kernel_rank_to_node_mapping(nodes, tmp_path, ranks):
    """The kernel under srun -N 2 (block distribution): its output.json "nodes" names each rank's host and local
    rank as Slurm placed it (stated here from srun's rule, not from the kernel), and each node's local rank 0; the
    ranks are one MPI job across the nodes (each read exactly its share of DLIO's sampler)."""
    per = ranks // 2
    r = run(tmp_path, ranks, tiny(tmp_path / "data", **{"generate-data": True, "train": True}),
            launcher=["srun", "--mpi=pmix", "-N", "2", "-n", str(ranks)], environ=nodes.env)
    assert r.rc == 0, r.proc.stdout[-2000:] + r.proc.stderr[-2000:]
    n = r.summary()["nodes"]
    assert n["count"] == 2 and n["rank_host"] == [N1] * per + [N2] * per
    assert n["local_rank"] == list(range(per)) * 2
    assert [(p["host"], p["local_rank_0"], p["ranks"]) for p in n["per_node"]] == \
        [(N1, 0, list(range(per))), (N2, per, list(range(per, ranks)))]
    exp = dlio_order(32, ranks, 2, 2)
    for rank in range(ranks):
        got: dict[int, list[int]] = {}
        for row in r.samples(rank):
            if row["phase"] == "train" and row["use"] == "step":
                got.setdefault(int(row["epoch"]), []).append(int(row["sample"]))
        assert [got.get(e) for e in (1, 2)] == exp[rank], rank


def test_pmix_needs_a_node_local_folder(tmp_path):
    """The node-local path Slurm's PMIx plugin needs: each step's client folder (<TmpFS>/spmix_appdir_<uid>_<step>)
    made by each node's slurmstepd. With one TmpFS for both nodes (/tmp, shared here as a parallel file system is)
    the second node finds the first's folder and the step fails ("File exists"); slurm_nodes gives each node its own
    (TmpFS=<folder>/tmp/%n), the run above."""
    try:
        c = slurm_nodes.start(node_local_tmp=False)
    except slurm.Unavailable as e:
        pytest.skip(f"no 2-node Slurm here: {e}")
    try:
        p = c.run(["srun", "--mpi=pmix", "-N", "2", "-n", "2", "true"], timeout=60)
        logs = " ".join(f.read_text(errors="replace") for f in (c.root / "log").glob("slurmd.*.log"))
    finally:
        c.stop()
        assert not c.remains(), c.remains()
    assert "task 0 launch failed" in p.stderr or "task 1 launch failed" in p.stderr, p.stderr  # srun may exit 0
    assert "spmix_appdir" in logs and "File exists" in logs, logs[-2000:]


def test_a_failed_start_leaves_nothing(monkeypatch):
    """A cluster whose slurmctld cannot start (a select plugin that does not exist): start() raises Unavailable with
    slurmctld's reason, after removing what it had made: the daemons, the bridge, the veths, the namespaces, the
    folder."""
    if os.geteuid() != 0 or not shutil.which("slurmctld"):
        pytest.skip("needs root and Slurm (the namespaces are made before slurmctld fails)")
    before = {p.name for p in Path("/tmp").glob("h5dlio-nodes-*")}
    good = slurm_nodes.config
    roots: list = []

    def config(root, *a, **k):
        roots.append(root)
        return good(root, *a, **k).replace("SelectType=select/cons_tres", "SelectType=select/h5dlio_nosuch")
    monkeypatch.setattr(slurm_nodes, "config", config)
    made: list = []
    real_up = slurm_nodes.Net.up

    def up(net, nodes):   # what the start made, to look for afterwards
        made.append(net)
        real_up(net, nodes)
    monkeypatch.setattr(slurm_nodes.Net, "up", up)
    with pytest.raises(slurm.Unavailable, match="slurmctld"):
        slurm_nodes.start()
    assert len(made) == 1 and not made[0].leftovers() and not made[0].made
    assert {p.name for p in Path("/tmp").glob("h5dlio-nodes-*")} == before
    assert not roots[0].exists()
    assert not [d.name for d in Path("/proc").iterdir() if d.name.isdigit() and str(roots[0]) in _cmd(d)]


def _cmd(d: Path) -> str:
    try:
        return (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _harness(env: dict, tmp: Path, name: str, ranks: int, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    argv = [sys.executable, "-m", "harness", "run", "--workload", "unet3d", "--scale", "tiny", "--ranks", str(ranks),
            "--profiles", "timing,logvfd", "--dlio-venv", VENV, "--launcher", "srun", "--runs-dir", str(tmp / name),
            *extra]
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
    assert p.returncode == 0 and named_run(p.stdout), p.stdout[-3000:] + p.stderr[-3000:]
    return p, named_run(p.stdout)


def _verdict(run_dir: Path) -> dict:
    p = subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run_dir)], cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    assert (run_dir / "verdict.json").exists(), p.stdout + p.stderr
    return json.loads((run_dir / "verdict.json").read_text())


def _spread(nodes, per_node: int) -> dict:
    """The cluster's client environment with srun's own input variables: 2 nodes, per_node ranks on each."""
    return {**nodes.env, "SLURM_NNODES": "2", "SLURM_NTASKS_PER_NODE": str(per_node)}


@pytest.mark.dlio
@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 4])
def test_validate_across_two_nodes(nodes, tmp_path, ranks):
    """`python -m harness run --launcher srun` (make validate LAUNCHER=srun) with SLURM_NNODES=2: tiny unet3d, DLIO
    2.0.0 and the kernel, timing and Log VFD, 1 then 2 ranks per node: PASS, every launch's ranks on both nodes,
    DLIO's and the kernel's rank->node mapping (DLIO's <rank>_output.json hostnames, the kernel's output.json) the
    same, each node's local rank 0 reporting for it. The negative control: the kernel's launches again with every rank
    on one node (SLURM_NNODES=1), DLIO's reused: nodes.placement fails naming the ranks' hosts, nodes.local_rank_0
    fails (one node's report against DLIO's two), and nothing else."""
    if not VENV or not Path(VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}); `make test` installs it")
    per = ranks // 2
    _, run_dir = _harness(_spread(nodes, per), tmp_path, "two", ranks)
    v = _verdict(run_dir)
    got = {c["name"]: c for c in v["checks"]}
    print(f"\n{ranks} ranks on 2 nodes: {v['verdict']} {v['summary']}; {got['nodes.placement']['detail']}")
    assert v["verdict"] == "pass", v["failed"]
    assert got["nodes.placement"]["status"] == got["nodes.local_rank_0"]["status"] == "pass"
    t = json.loads((run_dir / "tables" / "timing.json").read_text())
    hosts = [N1] * per + [N2] * per
    assert t["dlio"][0]["nodes"]["rank_host"] == t["kernel"][0]["nodes"]["rank_host"] == hosts
    assert t["dlio"][0]["nodes"]["num_hosts"] == t["kernel"][0]["nodes"]["num_hosts"] == 2
    for must in [f"logvfd.sequence.rt0.rank{r}" for r in range(ranks)] + ["dataset.dlio_reads_kernel"]:
        assert got[must]["status"] == "pass", must
    if ranks != 2:
        return
    env = {**_spread(nodes, 2), "SLURM_NNODES": "1"}
    _, one = _harness(env, tmp_path, "one", ranks, "--reuse-dlio", str(run_dir))
    v1 = _verdict(one)
    print(f"kernel on one node, DLIO on two: {v1['verdict']} {v1['failed']}")
    assert v1["failed"] == ["nodes.placement", "nodes.local_rank_0"], v1["failed"]   # 1 node's entry, not 2
    assert f"kernel ['{N1}', '{N1}']" in {c["name"]: c for c in v1["checks"]}["nodes.placement"]["detail"]
