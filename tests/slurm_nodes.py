"""A several-node Slurm on this one machine, for the tests: every node a `slurmd` in a network and UTS namespace of its
own (its own hostname, its own `eth0`, the end of a veth pair whose other end is on a bridge of the host), slurmctld,
munged and the Slurm clients (srun) in the host's namespaces, on that bridge's address. Everything is named after this
process's pid and a letter per start (bridge `h5n<tag>br`, veths `h5n<tag>v<i>`, namespaces `h5dlio-<tag>-n<i>`,
folder `/tmp/h5dlio-nodes-*`, cluster `h5dlio-nodes`, free ports), so it coexists with tests/slurm.py's one-node
cluster and with another copy of itself; stop() removes all of it, even after a failed start.

What is separate per node: hostname (UTS), network (an MPI rank on node 1 reaches one on node 2 only through the
veths and the bridge: Open MPI's TCP transport, PMIx's exchange between slurmstepds) and Slurm's TmpFS (where the PMIx
plugin makes each step's folders: with one folder for both nodes they collide). What is shared, as on a cluster with
a parallel file system: the files (/tmp, the repository, the venvs), the page cache, the CPUs (2 here) and memory.
Needs root (namespaces, veths), `ip`, `nsenter` and `unshare`; otherwise Unavailable with the reason."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import slurm

NODES = 2
_STARTS = 0
CPUS = 2   # per node: srun -N 2 -n 4 puts 2 ranks on each (block distribution), -N 2 -n 2 one


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise slurm.Unavailable(f"`ip {' '.join(args)}` failed: {p.stderr.strip()}")
    return p


def _subnet() -> str:
    """10.253.N: the first /24 from the pid that no interface of the host uses."""
    used = _ip("-4", "-o", "addr", "show").stdout
    for k in range(250):
        n = (os.getpid() + k) % 250 + 1
        if f" 10.253.{n}." not in used:
            return f"10.253.{n}"
    raise slurm.Unavailable("no free 10.253.N.0/24 subnet for the node network")


@dataclass
class Net:
    """The bridge, the namespaces and the veths of one cluster (created in that order, removed in reverse)."""
    tag: str
    subnet: str
    made: list = field(default_factory=list)   # ("link"|"netns", name), in creation order

    @property
    def bridge(self) -> str:
        return f"h5n{self.tag}br"

    @property
    def host_addr(self) -> str:
        return f"{self.subnet}.1"

    def ns(self, i: int) -> str:
        return f"h5dlio-{self.tag}-n{i}"

    def veth(self, i: int) -> str:
        return f"h5n{self.tag}v{i}"   # the host's end; the node's end is eth0 in its namespace

    def addr(self, i: int) -> str:
        return f"{self.subnet}.{10 + i}"

    def up(self, nodes: int) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        self.made.append(("link", self.bridge))
        _ip("addr", "add", f"{self.host_addr}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i in range(1, nodes + 1):
            _ip("netns", "add", self.ns(i))
            self.made.append(("netns", self.ns(i)))
            _ip("link", "add", self.veth(i), "type", "veth", "peer", "name", "eth0", "netns", self.ns(i))
            self.made.append(("link", self.veth(i)))
            _ip("link", "set", self.veth(i), "master", self.bridge, "up")
            _ip("-n", self.ns(i), "addr", "add", f"{self.addr(i)}/24", "dev", "eth0")
            _ip("-n", self.ns(i), "link", "set", "eth0", "up")
            _ip("-n", self.ns(i), "link", "set", "lo", "up")

    def down(self) -> None:
        for kind, name in reversed(self.made):
            _ip("link", "del", name, check=False) if kind == "link" else _ip("netns", "del", name, check=False)
        self.made.clear()

    def leftovers(self) -> list[str]:
        links = _ip("-o", "link", "show", check=False).stdout
        nss = _ip("netns", "list", check=False).stdout
        return [n for n in re.findall(r"^\d+: ([^:@]+)", links, re.M) if n.startswith(f"h5n{self.tag}")] + \
               [n.split()[0] for n in nss.splitlines() if n.startswith(f"h5dlio-{self.tag}-")]

    def bytes(self, i: int) -> dict:
        """The host end's counters of node i's veth: rx = what the node sent, tx = what it received."""
        d = Path("/sys/class/net") / self.veth(i) / "statistics"
        return {k: int((d / f"{k}_bytes").read_text()) for k in ("rx", "tx")}


@dataclass
class Nodes(slurm.Cluster):
    net: Net | None = None
    names: list = field(default_factory=list)

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self.net is not None:
                self.net.down()

    def remains(self) -> list:
        """What stop() must have removed: processes carrying this cluster's SLURM_CONF, its interfaces, namespaces
        and folder."""
        return [*self.leftovers(), *(self.net.leftovers() if self.net is not None else []),
                *([str(self.root)] if self.root.exists() else [])]

    def logs(self) -> str:
        return "; ".join(f"{p.name}: {slurm._tail(p, 3)}" for p in sorted((self.root / "log").glob("*.log")))


def config(root: Path, ctld_host: str, net: Net, names: list[str], ctld_port: int, slurmd_port: int,
           node_local_tmp: bool = True) -> str:
    """slurm.conf: tests/slurm.py's settings, the nodes at their namespaces' addresses, per-node slurmd files, and a
    TmpFS of each node's own (node_local_tmp; False: /tmp, shared by both, which breaks the PMIx plugin)."""
    one = slurm.config(root, "x", ctld_port, slurmd_port).splitlines()
    keep = [ln for ln in one if not ln.startswith(("#", "ClusterName", "SlurmctldHost", "NodeName", "PartitionName",
                                                   "SlurmdPidFile", "SlurmdLogFile", "SlurmdSpoolDir"))]
    nodes = [f"NodeName={n} NodeAddr={net.addr(i)} CPUs={CPUS} State=UNKNOWN" for i, n in enumerate(names, 1)]
    return "\n".join([
        f"# {len(names)}-node Slurm of the h5dlio tests (tests/slurm_nodes.py): one slurmd per network+UTS namespace",
        "ClusterName=h5dlio-nodes", f"SlurmctldHost={ctld_host}({net.host_addr})",
        f"SlurmdPidFile={root}/run/slurmd.%n.pid", f"SlurmdLogFile={root}/log/slurmd.%n.log",
        f"SlurmdSpoolDir={root}/spool/%n", f"TmpFS={root}/tmp/%n" if node_local_tmp else "TmpFS=/tmp", *keep, *nodes,
        f"PartitionName=nodes Nodes={','.join(names)} Default=YES MaxTime=INFINITE State=UP", ""])


def _check_can() -> None:
    missing = [p for p in slurm.PROGRAMS if not shutil.which(p)]
    if missing:
        raise slurm.Unavailable(f"Slurm is not installed here ({', '.join(missing)} not on PATH; `make slurm`)")
    if os.geteuid() != 0:
        raise slurm.Unavailable("network and UTS namespaces and veth pairs need root")
    for prog in ("ip", "unshare", "nsenter"):
        if not shutil.which(prog):
            raise slurm.Unavailable(f"`{prog}` is not on PATH (iproute2, util-linux)")


def start(nodes: int = NODES, node_local_tmp: bool = True, node_preexec=None) -> Nodes:
    """munged and slurmctld in the host's namespaces, one slurmd per node namespace, every node idle; or Unavailable
    with the reason (then nothing of it is left). node_local_tmp False: the nodes share /tmp as TmpFS (the PMIx
    plugin's per-step folders then collide: the test that shows why each node has its own). node_preexec: run in
    each node's starter process before it execs (e.g. bench/perf/throttled.py's Throttled.enter: that slurmd, its
    slurmstepds and every task of every step then inherit the throttling cgroup; ProctrackType=proctrack/linuxproc
    and TaskPlugin=task/none move no task to a cgroup of Slurm's)."""
    _check_can()
    root = Path(tempfile.mkdtemp(prefix="h5dlio-nodes-", dir="/tmp"))
    root.chmod(0o755)
    global _STARTS
    _STARTS += 1
    tag = f"{os.getpid()}{chr(96 + _STARTS % 26 or 26)}"   # a cluster at a time of this process: a, b, ...
    names = [f"h5dlio-n{i}" for i in range(1, nodes + 1)]
    c = Nodes(root, root / "slurm.conf", names[0], net=Net(tag, _subnet()), names=names)
    try:
        _start(c, node_local_tmp, node_preexec)
    except BaseException:
        c.stop()
        raise
    return c


def _start(c: Nodes, node_local_tmp: bool, node_preexec=None) -> None:
    root = c.root
    for d, mode in (("munge", 0o700), ("sock", 0o755), ("state", 0o755), ("spool", 0o755), ("run", 0o755),
                    ("log", 0o755)):
        (root / d).mkdir(mode=mode)
    for n in c.names:
        (root / "spool" / n).mkdir(parents=True)
        (root / "tmp" / n).mkdir(parents=True)
    c.net.up(len(c.names))
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    host = socket.gethostname().split(".")[0]
    c.conf.write_text(config(root, host, c.net, c.names, slurm._free_port(), slurm._free_port(), node_local_tmp))
    env = c.env

    def spawn(name: str, argv: list[str], preexec=None) -> None:
        with open(root / "log" / f"{name}.out", "w") as out:
            c.procs[name] = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root,
                                             start_new_session=True, preexec_fn=preexec)

    spawn("munged", ["munged", "-F", f"--key-file={key}", f"--socket={root}/sock/munge.socket",
                     f"--pid-file={root}/run/munged.pid", f"--log-file={root}/log/munged.log",
                     f"--seed-file={root}/munge/seed"])
    slurm._wait(lambda: (root / "sock" / "munge.socket").exists(), 10, c.procs["munged"],
                lambda: f"munged did not start: {slurm._tail(root / 'log' / 'munged.out')}")
    spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(c.conf)])
    # the node's hostname set in its own UTS namespace, then slurmd in its place (nsenter, not `ip netns exec`: that
    # remounts /sys, and slurmd wants /sys/fs/cgroup)
    for i, n in enumerate(c.names, 1):
        spawn(n, ["nsenter", f"--net=/run/netns/{c.net.ns(i)}", "unshare", "--uts", "sh", "-c",
                  'hostname "$0" && exec slurmd -D -f "$1" -N "$0"', n, str(c.conf)], node_preexec)

    def idle() -> bool:
        p = c.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=10)
        return p.returncode == 0 and sorted(p.stdout.split()) == sorted([*c.names, *["idle"] * len(c.names)])
    for name in ("slurmctld", *c.names):
        slurm._wait(idle, 45, c.procs[name], lambda: f"the {len(c.names)}-node Slurm did not come up (nodes not idle "
                    f"in 45 s): {c.logs()}")

