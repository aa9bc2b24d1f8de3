"""The kernel and the harness under a real Slurm: a one-node cluster (2 CPUs) of Debian's slurm-wlm 22.05, started by
tests/slurm.py for this module and stopped after it. Skipped, with the reason, only where Slurm cannot be installed
or started (`make slurm` installs it for `make test`)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import slurm
from kernel import BIN, dlio_order, run, tiny

from harness.launch import Launcher, Step, execute
from pipeline import named_run
from profiles.logvfd import parse_dir

pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parent.parent
VENV = os.environ.get("H5DLIO_DLIO_VENV", "")
SBATCH = REPO / "scripts" / "h5dlio.sbatch"
PMIX = ["srun", "--mpi=pmix", "-n", "2"]


@pytest.fixture(scope="module")
def cluster():
    try:
        c = slurm.start()
    except slurm.Unavailable as e:
        pytest.skip(f"no Slurm: {e}")
    try:
        yield c
    finally:
        c.stop()
        assert not c.leftovers(), "a process of the test cluster survived its stop"


def connected_ranks(r, total: int = 32) -> None:
    """Two ranks of one MPI job, not two singletons: output.json counts 2 ranks and each rank read exactly its share
    of DLIO's sampler (rank 1 owns samples 16-31)."""
    assert r.rc == 0, r.proc.stdout[-2000:] + r.proc.stderr[-2000:]
    assert r.summary()["ranks"] == 2
    exp = dlio_order(total, 2, 2, 2)
    for rank in (0, 1):
        got: dict[int, list[int]] = {}
        for row in r.samples(rank):
            if row["phase"] == "train" and row["use"] == "step":
                got.setdefault(int(row["epoch"]), []).append(int(row["sample"]))
        assert [got.get(e) for e in (1, 2)] == exp[rank]


def test_pmix_is_the_mpi_plugin_open_mpi_starts_under(cluster, tmp_path):
    """README: this Slurm offers pmix, pmi2 and none; Debian's Open MPI 4.1 starts under pmix only."""
    p = cluster.run(["srun", "--mpi=list"])
    assert p.returncode == 0 and "pmix" in p.stdout.split() and "pmi2" in p.stdout.split(), p.stdout + p.stderr
    for mpi in ("pmi2", "none"):
        p = cluster.run(["srun", f"--mpi={mpi}", "-n", "2", BIN, "--set", f"data-folder={tmp_path / mpi}",
                         "--set", "generate-data=true", "--set", "quiet=true"])
        assert p.returncode != 0 and "MPI_Init" in p.stdout + p.stderr, f"--mpi={mpi}: {p.stderr[-1500:]}"


def test_kernel_under_srun(cluster, tmp_path):
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True})
    connected_ranks(run(tmp_path, 2, sets, launcher=PMIX, environ=cluster.env))


def test_kernel_under_salloc_mpirun(cluster, tmp_path):
    """mpirun inside an allocation takes its slots from Slurm: 2 ranks run, a third is refused (no slot for it)."""
    sets = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True})
    alloc = ["salloc", "-n", "2", "mpirun", "--allow-run-as-root"]
    connected_ranks(run(tmp_path, 2, sets, launcher=alloc, environ=cluster.env))
    r = run(tmp_path, 3, {**sets, "generate-data": False}, launcher=alloc + ["-np", "3"], environ=cluster.env,
            name="three")
    assert r.rc != 0 and "not enough slots" in r.proc.stdout + r.proc.stderr, r.proc.stderr[-2000:]


def _launch(launcher: str, tmp: Path, name: str, sets: dict, env: dict, timeout: float = 120) -> tuple[Step, dict]:
    """One launch the way the harness makes it: Launcher.argv with per-rank output into <step>/ranks, execute()."""
    wd = tmp / name
    argv = Launcher(launcher, 2).argv(wd / "ranks", env) + [BIN]
    for k, v in sets.items():
        argv += ["--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    st = Step(name, "kernel", name, argv, env, wd, wd / "ranks", timeout)
    return st, execute(st, progress=lambda s: None)


def test_per_rank_output_from_srun_files(cluster, tmp_path, monkeypatch):
    """The harness's srun launch leaves each rank's output in <step>/ranks/rank.N.stderr and the Log VFD parser reads
    it: HDF5_DRIVER=log reaches the ranks through --export, and the per-rank tables equal mpirun's on the same data."""
    for k, v in cluster.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    data = tmp_path / "data"
    _, res = _launch("srun", tmp_path, "gen", tiny(data, **{"generate-data": True}), {})
    assert res["status"] == "ok", res
    tables = {}
    for launcher in ("srun", "mpirun"):
        st, res = _launch(launcher, tmp_path, launcher, tiny(data, train=True), {"HDF5_DRIVER": "log"})
        assert res["status"] == "ok", res
        tables[launcher] = parse_dir(st.logdir)
    files = sorted(p.name for p in (tmp_path / "srun" / "ranks").iterdir())
    assert files == ["rank.0.stderr", "rank.0.stdout", "rank.1.stderr", "rank.1.stdout"]
    assert Launcher("srun", 2).argv(None, {})[:4] == ["srun", "-n", "2", "--kill-on-bad-exit=1"]
    srun = tables["srun"]["ranks"]
    assert sorted(srun) == ["0", "1"]
    for rank, t in srun.items():
        # 32 samples, 2 ranks, batch 2: 8 steps of 2 samples per rank and epoch, 2 epochs, one open per sample (DLIO)
        assert t["opens"] == 2 * 8 * 2, (rank, t["opens"])
        assert t["raw_reads"] > 0
    assert srun == tables["mpirun"]["ranks"]


def test_srun_exit_0_without_tasks_is_a_failed_launch(cluster, tmp_path, monkeypatch):
    """Slurm 22.05's srun exits 0 when slurmd cannot start the tasks (here: an output file it cannot open); the
    harness records the launch as failed, with srun's reason."""
    for k, v in cluster.env.items():
        monkeypatch.setenv(k, v)
    wd = tmp_path / "step"
    argv = ["srun", "-n", "2", "--output", str(tmp_path / "no" / "such" / "rank.%t"), "true"]
    res = execute(Step("x", "kernel", "x", argv, {}, wd, None, 60), progress=lambda s: None)
    assert res["rc"] == 0 and res["status"] == "failed", res
    assert "launch failed" in res["detail"] and "task 0" in res["detail"], res["detail"]


def _procs(mark: str) -> list[tuple[int, dict]]:
    """(pid, environment) of every kernel process whose command line holds mark."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            if not cmd[0].endswith(b"h5dlio") or mark.encode() not in b" ".join(cmd):
                continue
            env = dict(x.split(b"=", 1) for x in (d / "environ").read_bytes().split(b"\0") if b"=" in x)
        except OSError:
            continue
        found.append((int(d.name), {k.decode(): v.decode(errors="replace") for k, v in env.items()}))
    return found


def test_killed_rank_ends_the_srun_job_naming_it(cluster, tmp_path, monkeypatch):
    """SIGKILL of rank 1 mid-epoch under the harness's srun launch: the whole step ends within 30 s, the launch is
    recorded failed, and what the user sees (srun's stderr, the launch's detail) names task 1."""
    for k, v in cluster.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    data = tmp_path / "data"
    sets = tiny(data, **{"generate-data": True, "train": True, "epochs": 1000, "computation-time": 0.2,
                         "quiet": False})
    holder: dict = {}

    def launch() -> None:
        holder["step"], holder["res"] = _launch("srun", tmp_path, "killed", sets, {}, timeout=180)
    t = threading.Thread(target=launch)
    t.start()
    ranks = tmp_path / "killed" / "ranks"
    t0 = time.time()
    while time.time() - t0 < 90 and not any("epoch 2/" in p.read_text(errors="replace")
                                            for p in ranks.glob("rank.0.*") if p.is_file()):
        time.sleep(0.2)
    victims = [pid for pid, env in _procs(str(data)) if env.get("SLURM_PROCID") == "1"]
    assert len(victims) == 1, f"rank 1 not found running: {_procs(str(data))}"
    os.kill(victims[0], signal.SIGKILL)
    killed = time.time()
    t.join(60)
    ended = time.time() - killed
    assert not t.is_alive(), "the launch did not end within 60 s of the SIGKILL"
    res = holder["res"]
    print(f"\nkilled rank 1: the srun step ended {ended:.1f} s later; detail: {res['detail']}")
    assert ended < 30, f"{ended:.1f} s"
    assert res["status"] == "failed" and res["rc"] not in (0, None), res
    stderr = (tmp_path / "killed" / "launch.stderr").read_text()
    assert "task 1: Killed" in stderr and "task 1" in res["detail"], stderr[-2000:]
    deadline = time.time() + 10
    while _procs(str(data)) and time.time() < deadline:
        time.sleep(0.2)
    assert not _procs(str(data)), "a rank survived the job"


def _harness(cluster, tmp: Path, name: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path | None]:
    argv = [sys.executable, "-m", "harness", "run", "--workload", "unet3d", "--scale", "tiny", "--ranks", "2",
            "--profiles", "logvfd", "--dlio-venv", VENV, "--runs-dir", str(tmp / name), *extra]
    p = subprocess.run(argv, cwd=REPO, env=cluster.env, capture_output=True, text=True, timeout=1200)
    return p, named_run(p.stdout)


def _verdict(run_dir: Path) -> dict:
    p = subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run_dir)], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert (run_dir / "verdict.json").exists(), p.stdout + p.stderr
    return json.loads((run_dir / "verdict.json").read_text())


@pytest.mark.dlio
def test_harness_launcher_srun_gives_mpiruns_verdict(cluster, tmp_path):
    """`python -m harness run --launcher srun` (make validate LAUNCHER=srun), tiny unet3d, 2 ranks, Log VFD profile:
    every launch (DLIO's through mpi4py too) is an srun step, each rank's trace is parsed from srun's per-rank files,
    and the verdict has the same checks with the same statuses as the same workload under mpirun (the mpirun run
    takes the DLIO side of the srun run, --reuse-dlio, to keep the test short: its kernel launches are mpirun's)."""
    if not VENV or not Path(VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}); `make test` installs it")
    p, srun_run = _harness(cluster, tmp_path, "srun", "--launcher", "srun")
    assert p.returncode == 0 and srun_run is not None, p.stdout[-3000:] + p.stderr[-3000:]
    m = json.loads((srun_run / "manifest.json").read_text())
    assert m["launcher"] == "srun" and len(m["steps"]) == 6
    for name, s in m["steps"].items():
        assert s["argv"][:2] == ["srun", "-n"] and "--mpi=pmix" in s["argv"], (name, s["argv"])
        assert sorted(x.name for x in Path(s["workdir"], "ranks").iterdir())[:2] == ["rank.0.stderr", "rank.0.stdout"]
    p, mpirun_run = _harness(cluster, tmp_path, "mpirun", "--reuse-dlio", str(srun_run))
    assert p.returncode == 0 and mpirun_run is not None, p.stdout[-3000:] + p.stderr[-3000:]
    assert json.loads((mpirun_run / "manifest.json").read_text())["steps"]["kernel.logvfd"]["argv"][0] == "mpirun"
    v_srun, v_mpirun = _verdict(srun_run), _verdict(mpirun_run)
    got = {c["name"]: c["status"] for c in v_srun["checks"]}
    print("\ncheck: srun / mpirun\n" + "\n".join(f"{n}: {s} / {c['status']}" for n, s, c in
                                                    ((c["name"], got.get(c["name"]), c) for c in v_mpirun["checks"])))
    assert v_srun["verdict"] == v_mpirun["verdict"] == "pass", (v_srun["failed"], v_mpirun["failed"])
    assert got == {c["name"]: c["status"] for c in v_mpirun["checks"]}
    for must in ("logvfd.sequence.rt0.rank0", "logvfd.sequence.rt0.rank1", "counts.dlio.logvfd-rt0.rank1",
                 "counts.kernel.logvfd.rank0", "dataset.dlio_reads_kernel"):
        assert got.get(must) == "pass", must   # judged from the ranks' srun files, not skipped


def test_sbatch_template(cluster, tmp_path):
    """scripts/h5dlio.sbatch: accepted by sbatch --test-only for this one-node cluster (its default 2 nodes are
    refused here: the check can fail), then run for real with a tiny workload given as the script's arguments: both
    steps write their results under RESULTS, and the data folder is striped through lfs where lfs exists (a stand-in
    lfs on PATH records its arguments)."""
    p = cluster.run(["sbatch", "--test-only", str(SBATCH)], cwd=tmp_path)
    assert p.returncode != 0 and "node configuration is not available" in p.stderr, p.stderr
    p = cluster.run(["sbatch", "--test-only", "--nodes=1", "--ntasks-per-node=2", str(SBATCH)], cwd=tmp_path)
    assert p.returncode == 0 and "to start at" in p.stderr, p.stderr
    text = SBATCH.read_text()
    assert "#SBATCH --nodes=" in text and "#SBATCH --ntasks-per-node=" in text and "command -v lfs" in text

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "lfs").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/lfs.calls\n')
    (fake / "lfs").chmod(0o755)
    data, results = tmp_path / "lustre" / "data", tmp_path / "results"
    env = {**cluster.env, "PATH": f"{fake}:{os.environ['PATH']}", "H5DLIO": BIN, "DATA": str(data),
           "RESULTS": str(results), "CHECKPOINT": str(tmp_path / "lustre" / "ckpt")}
    args = [f"--set={k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in tiny(data).items()
            if k not in ("data-folder", "record-samples")]
    args = [x for a in args for x in ("--set", a.removeprefix("--set="))]
    p = cluster.run(["sbatch", "--wait", "--nodes=1", "--ntasks-per-node=2", f"--output={tmp_path}/job.out",
                     str(SBATCH), *args], cwd=tmp_path, env=env, timeout=180)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert p.returncode == 0, p.stderr + out[-3000:]
    assert f"results in {results}" in out
    gen, train = (json.loads((results / s / "output.json").read_text()) for s in ("generate", "train"))
    assert gen["ranks"] == train["ranks"] == 2
    assert len(list((data / "train").iterdir())) == 8 and train["config"]["data-folder"] == str(data)
    calls = (tmp_path / "lfs.calls").read_text().splitlines()
    assert calls == [f"setstripe --stripe-count 1 --stripe-size 1M {data}",
                     f"setstripe --stripe-count 1 --stripe-size 1M {tmp_path / 'lustre' / 'ckpt'}"]
