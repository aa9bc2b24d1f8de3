"""A one-node Slurm for the tests, started by hand (no systemd): munged with its own key and socket, slurmctld and
slurmd with a configuration of their own (2 CPUs, the node named `hostname -s`, select/cons_tres, no accounting,
SlurmUser root, free ports), all in one folder under /tmp; stopped by pid afterwards, with every process that carries
its configuration path (job steps and their tasks included).

`make slurm` installs Debian's slurm-wlm and munge (a dependency of `make test`); where that was impossible, start()
raises Unavailable with the reason and the tests skip with it."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INSTALL_LOG = REPO / "build" / "slurm-install.log"   # written by `make slurm` when the install failed
PROGRAMS = ("munged", "slurmctld", "slurmd", "srun", "salloc", "sbatch", "scancel", "squeue", "sinfo")
CPUS = 2


class Unavailable(Exception):
    """Slurm cannot be installed or started here: the reason the tests skip with."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-n:])
    except OSError:
        return f"(no {path.name})"


def client_env(conf: Path) -> dict:
    """The caller's environment for Slurm's commands: this cluster's configuration, nothing of an enclosing job (a
    `make test` run inside a real allocation must not submit there)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SALLOC_", "SBATCH_", "SRUN_", "SQUEUE_", "PMIX_", "OMPI_"))}
    env["SLURM_CONF"] = str(conf)
    return env


@dataclass
class Cluster:
    root: Path
    conf: Path
    node: str
    procs: dict = field(default_factory=dict)   # name -> Popen of the daemons, in start order

    @property
    def env(self) -> dict:
        return client_env(self.conf)

    def run(self, argv: list[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(argv, env=kw.pop("env", self.env), capture_output=True, text=True, timeout=timeout, **kw)

    def logs(self) -> str:
        return "; ".join(f"{n}: {_tail(self.root / 'log' / f'{n}.log', 3)}" for n in ("slurmctld", "slurmd"))

    def jobs(self) -> list[str]:
        p = self.run(["squeue", "-h", "-o", "%i"], timeout=30)
        return p.stdout.split()

    def stop(self) -> None:
        """Cancel every job, stop the daemons (SIGTERM, then SIGKILL), then SIGKILL any process still carrying this
        cluster's SLURM_CONF (slurmstepd and tasks), and remove the folder."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                for j in self.jobs():
                    self.run(["scancel", j], timeout=30)
                t0 = time.time()
                while self.jobs() and time.time() - t0 < 15:
                    time.sleep(0.5)
            except (OSError, subprocess.SubprocessError):
                pass
        for name in reversed(list(self.procs)):
            _end(self.procs[name])
        for pid in self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    def leftovers(self) -> list[int]:
        """Processes (not this one) whose environment holds this cluster's SLURM_CONF: only ours have it."""
        mark = f"SLURM_CONF={self.conf}".encode()
        found = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == os.getpid():
                continue
            try:
                if mark in (d / "environ").read_bytes().split(b"\0"):
                    found.append(int(d.name))
            except OSError:
                continue
        return found


def _end(p: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if p.poll() is not None:
            return
        p.send_signal(sig)
        try:
            p.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def config(root: Path, node: str, ctld_port: int, slurmd_port: int) -> str:
    return f"""# one-node Slurm of the h5dlio tests (tests/slurm.py)
ClusterName=h5dlio-test
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/sock/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmdParameters=config_overrides
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName={node} NodeAddr=127.0.0.1 CPUs={CPUS} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def start() -> Cluster:
    """munged, slurmctld and slurmd up and the node idle, or Unavailable with the reason (then nothing runs)."""
    missing = [p for p in PROGRAMS if not shutil.which(p)]
    if missing:
        why = f"Slurm is not installed here ({', '.join(missing)} not on PATH; `make slurm` installs Debian's " \
              "slurm-wlm and munge)"
        if INSTALL_LOG.exists():
            why += f"; the install failed: {_tail(INSTALL_LOG, 3)}"
        raise Unavailable(why)
    root = Path(tempfile.mkdtemp(prefix="h5dlio-slurm-", dir="/tmp"))  # short: slurmd's step sockets live below
    root.chmod(0o755)                                                     # munged wants its socket folder reachable
    for d, mode in (("munge", 0o700), ("sock", 0o755), ("state", 0o755), ("spool", 0o755), ("run", 0o755),
                    ("log", 0o755)):
        (root / d).mkdir(mode=mode)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    node = socket.gethostname().split(".")[0]
    conf = root / "slurm.conf"
    conf.write_text(config(root, node, _free_port(), _free_port()))
    c = Cluster(root, conf, node)
    env = c.env   # the daemons carry SLURM_CONF too: stop() finds everything they started by it

    def spawn(name: str, argv: list[str]) -> None:
        with open(root / "log" / f"{name}.out", "w") as out:
            c.procs[name] = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root,
                                             start_new_session=True)

    try:
        spawn("munged", ["munged", "-F", f"--key-file={key}", f"--socket={root}/sock/munge.socket",
                         f"--pid-file={root}/run/munged.pid", f"--log-file={root}/log/munged.log",
                         f"--seed-file={root}/munge/seed"])
        _wait(lambda: (root / "sock" / "munge.socket").exists(), 10, c.procs["munged"],
              lambda: f"munged did not start: {_tail(root / 'log' / 'munged.out')}")
        spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(conf)])
        spawn("slurmd", ["slurmd", "-D", "-f", str(conf), "-N", node])

        def idle() -> bool:
            p = c.run(["sinfo", "-h", "-N", "-o", "%t"], timeout=10)
            return p.returncode == 0 and p.stdout.strip() == "idle"
        for name in ("slurmctld", "slurmd"):
            _wait(idle, 30, c.procs[name],
                  lambda: f"the one-node Slurm did not come up (node not idle in 30 s): {c.logs()}")
    except BaseException:
        c.stop()
        raise
    return c


def _wait(ok, seconds: float, proc: subprocess.Popen, why) -> None:
    t0 = time.time()
    while time.time() - t0 < seconds:
        if proc.poll() is not None:
            raise Unavailable(f"{proc.args[0]} exited with {proc.returncode}: {why()}")
        try:
            if ok():
                return
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.3)
    raise Unavailable(why())
