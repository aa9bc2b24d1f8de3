"""The README documents every kernel key `h5dlio --help` lists (and no key the kernel does not have), and every
command the README shows runs as documented (and fails with a named cause when one thing is wrong)."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel import BIN

README = Path(__file__).resolve().parent.parent / "README.md"


def help_keys() -> set[str]:
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True, check=True).stdout
    table = out.split("\nKEY ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return {line.split()[0] for line in table if line.strip()}


def readme_keys() -> set[str]:
    keys = set()
    for line in README.read_text().splitlines():
        m = re.match(r"\| ([a-z0-9-]+)(\(-stdev\))? \|", line)
        if m:
            keys.add(m.group(1))
            if m.group(2):
                keys.add(m.group(1) + "-stdev")
    return keys


def test_every_key_is_documented():
    missing = help_keys() - readme_keys()
    assert not missing, f"README's key table lacks {sorted(missing)}"


def test_no_stale_key_in_readme():
    stale = {k for k in readme_keys() - help_keys() if "-" in k or k in ("train", "evaluation", "epochs", "au")}
    assert not stale, f"README documents keys h5dlio does not have: {sorted(stale)}"


# ---------------------------------------------------------------- every command the README shows, run as documented
#
# Each ```sh command of the README, the way this suite runs it as documented, and the same command with one thing
# wrong (which must exit non-zero and name the cause). A command added to the README without a row here fails
# test_every_readme_command_has_a_row. "elsewhere" rows name the test or CI step that runs that command; the test
# checks the named place exists and really runs it.

REPO = README.parent
PY = str(REPO / ".venv" / "bin" / "python")
MPIRUN_ROOT = ["--allow-run-as-root", "--oversubscribe"]  # root in a VM (the README's mpirun lines are for users)
DLIO_STAMP = REPO / "build" / ".dlio-venv"


def readme_commands() -> list[str]:
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.splitlines():
            cmd = re.split(r"\s{2,}#", line)[0].strip()
            if cmd and not cmd.startswith("#"):
                cmds.append(cmd)
    return cmds


def _sh(argv: list[str], cwd: Path = REPO, timeout: float = 900, env: dict | None = None):
    e = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**e, **(env or {})})


def _mpirun(cmd: str) -> list[str]:
    argv = cmd.split()
    assert argv[:3] == ["mpirun", "-np", "4"], cmd
    return argv[:3] + (MPIRUN_ROOT if os.geteuid() == 0 else ["--oversubscribe"]) + [BIN] + argv[4:]


def _need_dlio() -> Path:
    if not DLIO_STAMP.exists():
        pytest.skip("no reference DLIO venv here (build/.dlio-venv): `make dlio-venv` installs it")
    return Path(DLIO_STAMP.read_text().strip())


def case_help(tmp: Path, cmd: str) -> None:
    ok = _sh([BIN, "--help"])
    assert ok.returncode == 0 and "\nKEY " in ok.stdout, ok.stderr
    bad = _sh([BIN, "--hlep"])
    assert bad.returncode == 2 and "'--hlep'" in bad.stderr, bad.stderr


def case_dlio_entries(tmp: Path, cmd: str) -> None:
    ok = _sh([BIN] + cmd.split()[1:])
    assert ok.returncode == 0, ok.stderr
    sel = json.loads(ok.stdout)["selected"]
    assert sel["entry"] == "2.0.1" and sel["nearest"] is False
    assert sel["keys"]["record-length"] == "dataset.record_length_bytes"   # v2.0.1 utils/config.py:792
    bad = _sh([BIN] + cmd.replace("2.0.1", "2.0.x").split()[1:])
    assert bad.returncode == 2 and "'dlio-version'" in bad.stderr, bad.stderr


def case_h5bench_json(tmp: Path, cmd: str) -> None:
    """my.json: an h5bench DLIO config (benchmarks list, one dlio entry) at a tiny size: generate, then train."""
    conf = {"generate-data": "true", "train": "true", "evaluation": "false", "data-folder": str(tmp / "data"),
            "output-folder": str(tmp / "out"), "num-files-train": "8", "num-samples-per-file": "2",
            "record-length": "4096", "batch-size": "2", "read-threads": "0", "epochs": "1",
            "computation-time": "0", "keep-files": "true", "quiet": "true"}
    (tmp / "my.json").write_text(json.dumps({"benchmarks": [{"benchmark": "dlio", "configuration": conf}]}))
    ok = _sh(_mpirun(cmd), cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert len(list((tmp / "data" / "train").glob("*.h5"))) == 8 and (tmp / "out" / "output.csv").exists()
    conf["batch-sise"] = conf.pop("batch-size")
    (tmp / "my.json").write_text(json.dumps({"benchmarks": [{"benchmark": "dlio", "configuration": conf}]}))
    bad = _sh(_mpirun(cmd), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "'batch-sise'" in bad.stderr, bad.stderr[-2000:]


def case_dlio_yaml(tmp: Path, cmd: str) -> None:
    """DLIO's own unet3d_h100.yaml with the README's --set: validated end to end (--dry-run: the full-size dataset
    is 24 GB); one misspelled value must be refused naming its key."""
    venv = _need_dlio()
    found = list(venv.glob("lib/python*/site-packages/dlio_benchmark/configs/workload/unet3d_h100.yaml"))
    assert found, f"DLIO's unet3d_h100.yaml not in {venv}"
    shutil.copy(found[0], tmp / "unet3d_h100.yaml")
    ok = _sh(_mpirun(cmd) + ["--dry-run"], cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = _sh(_mpirun(cmd.replace("dataset.format=hdf5", "dataset.format=hfd5")) + ["--dry-run"], cwd=tmp)
    assert bad.returncode == 2 and "dataset.format" in bad.stderr and "hfd5" in bad.stderr, bad.stderr[-2000:]
    # without the README's override the file's own checkpoint block applies (DLIO 2.0.0's checkpoints are emulated):
    # checkpointing on, with unet3d_h100.yaml's model_size and schedule
    on = _sh(_mpirun(cmd.replace(" --set workflow.checkpoint=false", "")) + ["--dry-run"], cwd=tmp)
    assert on.returncode == 0, on.stderr[-2000:]
    resolved = json.loads(on.stdout[on.stdout.index("{"):])
    assert (resolved["checkpoint"], resolved["model-size"], resolved["checkpoint-after-epoch"],
            resolved["epochs-between-checkpoints"]) == (True, 499153191, 5, 2)


def case_make_build(tmp: Path, cmd: str) -> None:
    ok = _sh(["make", "--no-print-directory", "build"])
    assert ok.returncode == 0 and "built " in ok.stdout, ok.stdout[-2000:] + ok.stderr[-2000:]


def case_make_build_usr(tmp: Path, cmd: str) -> None:
    if not Path("/usr/include/hdf5/openmpi/hdf5.h").exists():
        pytest.skip("Debian's libhdf5-openmpi-dev (HDF5 1.10 in /usr) is not installed here")
    ok = _sh(["make", "--no-print-directory", "build", "HDF5_DIR=/usr"])
    assert ok.returncode == 0, ok.stderr[-2000:]


def case_make_validate(tmp: Path, cmd: str) -> None:
    """The first command of the README, as typed (timing only, to keep the suite short), into a temporary runs
    folder; then with a typo in the workload name."""
    _need_dlio()
    where = [f"RUNS_DIR={tmp / 'runs'}", f"LAST_RUN={tmp / 'last-run'}"]
    ok = _sh(cmd.split() + ["PROFILES=timing", *where], timeout=1500)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    run = Path((tmp / "last-run").read_text())
    assert run.parent == tmp / "runs" and json.loads((run / "verdict.json").read_text())["verdict"] == "pass"
    assert ok.stdout.strip().splitlines()[-1] == str(run / "report" / "report.md"), ok.stdout[-500:]
    bad = _sh(cmd.replace("unet3d", "unet3e").split() + where)
    assert bad.returncode != 0 and "WORKLOAD=unet3e" in bad.stderr and "report" not in bad.stdout, bad.stdout


def case_make_report(tmp: Path, cmd: str) -> None:
    run = tmp / "runs" / "some-run"
    shutil.copytree(REPO / "tests" / "data" / "run-tiny", run)
    ok = _sh(["make", "--no-print-directory", "report", f"RUN={run}"])
    assert ok.returncode == 0 and (run / "report" / "report.html").exists(), ok.stderr[-2000:]
    assert ok.stdout.strip().splitlines()[-1] == str(run / "report" / "report.md")


def case_reports_paper_dir(tmp: Path, cmd: str) -> None:
    d = tmp / "paper-1"
    shutil.copytree(REPO / "tests" / "data" / "paper-tiny", d)
    ok = _sh([PY, "-m", "reports", str(d)], timeout=600)
    assert ok.returncode == 0 and (d / "report" / "report.md").exists(), ok.stderr[-2000:]
    bad = _sh([PY, "-m", "reports", str(tmp / "paper-2")])
    assert bad.returncode == 2 and "paper-2" in bad.stderr, bad.stderr


def case_make_dry(expect: list[str]):
    """A long target (tens of minutes): `make -n` shows the commands it would run carry the README's variables."""
    def check(tmp: Path, cmd: str) -> None:
        argv = cmd.split()
        env = {}
        while "=" in argv[0]:
            k, v = argv.pop(0).split("=", 1)
            env[k] = v
        p = _sh(argv[:1] + ["-n", "--no-print-directory"] + argv[1:], env=env, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        for w in expect:
            assert w in p.stdout, f"{cmd}: {w!r} not in the commands make would run:\n{p.stdout[-3000:]}"
    return check


def case_bench_merge(tmp: Path, cmd: str) -> None:
    """The merge re-measurement's options exist; an unknown section is refused naming it (exit 2) before any
    measurement."""
    h = _sh([PY, "-m", "bench.perf", "run", "--help"])
    assert h.returncode == 0 and "--merge" in h.stdout and "--sections" in h.stdout, h.stderr
    bad = _sh([PY, "-m", "bench.perf", "run", "--merge", "--sections", "readpth", "--out", str(tmp / "r")])
    assert bad.returncode == 2 and "readpth" in bad.stderr, bad.stdout[-1000:] + bad.stderr[-1000:]


def _mpirun_named(cmd: str) -> list[str]:
    """_mpirun, keeping the README's binary name (build/h5bench_dlio is the kernel under h5bench's name)."""
    argv = _mpirun(cmd)
    argv[argv.index(BIN)] = str(Path(BIN).resolve().parent / Path(cmd.split()[3]).name)
    return argv


def case_h5bench_runner_argv(tmp: Path, cmd: str) -> None:
    """What h5bench's runner runs for its sample's generate entry: the dataset under storage/, the CSV h5bench
    expects in the output-data folder; a yes/no key given a value it cannot be is refused naming it."""
    ok = _sh(_mpirun_named(cmd), cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert len(list((tmp / "storage" / "data" / "train").glob("img_*_of_8.h5"))) == 8
    assert (tmp / "storage" / "run1" / "output.csv").read_text().startswith("metric, value, unit\n")
    bad = _sh(_mpirun_named(cmd.replace("--keep-files", "--keep-files maybe")), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "'keep-files'" in bad.stderr, bad.stderr[-2000:]


def case_h5bench_sample_entry(tmp: Path, cmd: str) -> None:
    """A suite file shaped like h5bench's sample (generate entry, then a train entry with read-threads 1 and
    collective MPI-IO): entry 1 generates under `directory`, the README's command trains with each rank reading its
    own samples (one warning naming read-threads); an --entry past the file's entries exits 2."""
    from test_h5bench_runner import suite
    setup = suite("storage")
    assert setup["benchmarks"][1]["configuration"]["read-threads"] == "1"
    (tmp / "sync-dlio.json").write_text(json.dumps(setup))
    gen = _sh(_mpirun("mpirun -np 4 build/h5dlio --config sync-dlio.json --entry 1"), cwd=tmp, timeout=300)
    assert gen.returncode == 0 and (tmp / "storage" / "data" / "train").is_dir(), gen.stderr[-2000:]
    ok = _sh(_mpirun(cmd), cwd=tmp, timeout=300)
    assert ok.returncode == 0 and (tmp / "output.csv").exists(), ok.stderr[-2000:]
    assert "read threads, 0," in (tmp / "output.csv").read_text()
    assert sum("warning: key 'read-threads'" in line for line in ok.stderr.splitlines()) == 1, ok.stderr[-2000:]
    bad = _sh(_mpirun(cmd.replace("--entry 2", "--entry 3")), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "--entry 3" in bad.stderr, bad.stderr[-2000:]


def _need_darshan_tools() -> None:
    from profiles import darshan_analyses
    t = darshan_analyses.tools()
    for k in ("summary", "drishti"):
        if t[k]:
            pytest.skip(f"Darshan's analyses cannot run here: {t[k]}")


DARSHAN_LOG = REPO / "tests" / "data" / "darshan" / "c_sec2.darshan"   # a real log (its README)


def case_validate_darshan_analyses(tmp: Path, cmd: str) -> None:
    """A run with a Darshan launch per side (the committed tiny run plus a real log in each side's logs/): validate
    writes the job summaries and drishti's reports, and the verdict has its darshan.analyses row."""
    _need_darshan_tools()
    run = tmp / "runs" / "some-run"
    shutil.copytree(REPO / "tests" / "data" / "run-tiny", run)
    m = json.loads((run / "manifest.json").read_text())
    for side in ("dlio", "kernel"):
        (run / side / "darshan" / "logs").mkdir(parents=True)
        shutil.copy(DARSHAN_LOG, run / side / "darshan" / "logs")
        m["steps"][f"{side}.darshan"] = {"status": "ok", "rc": 0, "wall_s": 1.0, "workdir": str(run / side / "darshan")}
    (run / "manifest.json").write_text(json.dumps(m))
    p = _sh([PY, "-m", "validate", str(run)], timeout=600)
    assert p.returncode in (0, 1) and "darshan.analyses" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    row = next(c for c in json.loads((run / "verdict.json").read_text())["checks"] if c["name"] == "darshan.analyses")
    assert row["status"] == "pass", row
    for side in ("dlio", "kernel"):
        a = run / side / "darshan" / "analysis"
        assert (a / "summary" / "c_sec2.html").stat().st_size > 10000
        assert {f.name for f in (a / "drishti").iterdir()} == {"c_sec2.txt", "c_sec2.html", "c_sec2.csv"}


def case_darshan_summary(tmp: Path, cmd: str) -> None:
    _need_darshan_tools()
    shutil.copy(DARSHAN_LOG, tmp / "LOG.darshan")
    p = _sh([PY if a == ".venv/bin/python" else a for a in cmd.split()], cwd=tmp, timeout=600)
    html = tmp / "summary.html"
    assert p.returncode == 0 and html.exists(), p.stderr[-2000:]
    assert "h5sample /scratch/dlio/data/train_img_1_of_1.h5 2 sec2" in html.read_text()


def case_drishti(tmp: Path, cmd: str) -> None:
    _need_darshan_tools()
    shutil.copy(DARSHAN_LOG, tmp / "LOG.darshan")
    argv = cmd.split()
    p = _sh([str(REPO / argv[0])] + argv[1:], cwd=tmp, timeout=600)
    assert p.returncode == 0 and "DRISHTI" in p.stdout and "EXECUTABLE:     ./h5sample" in p.stdout, p.stderr[-2000:]
    assert (tmp / "LOG.html").exists() and (tmp / "LOG.csv").read_text().startswith("JOB,")


def elsewhere(path: str, needle: str):
    def check(tmp: Path, cmd: str) -> None:
        text = (REPO / path).read_text()
        assert needle in text, f"{cmd}: {path} no longer runs it ({needle!r})"
    return check


README_COMMANDS = {
    "make validate WORKLOAD=unet3d": case_make_validate,
    "make test": elsewhere(".ci/run", "\nmake test\n"),
    "make report RUN=runs/<id>": case_make_report,
    ".venv/bin/python -m validate runs/<id>": case_validate_darshan_analyses,
    ".venv/bin/python -m darshan summary LOG.darshan --output summary.html": case_darshan_summary,
    ".venv/bin/drishti --html --csv LOG.darshan": case_drishti,
    "make paper": case_make_dry(["python -m harness", "--scale tiny", "python -m reports"]),
    "make paper PAPER_SCALE=small PAPER_REPEAT=3": case_make_dry(["--scale small", "--repeat 3"]),
    ".venv/bin/python -m reports runs/paper-<time>": case_reports_paper_dir,
    "make build": case_make_build,
    "make build HDF5_DIR=/usr": case_make_build_usr,
    "mpirun -np 4 build/h5dlio --config my.json": case_h5bench_json,
    "mpirun -np 4 build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 --set workflow.checkpoint=false":
        case_dlio_yaml,
    "mpirun -np 4 build/h5bench_dlio --generate-data --keep-files --record-length 1048576 --num-files-train 8 "
    "--num-files-eval 2 --num-samples-per-file 4 --data-folder storage/data --output-data-folder storage/run1":
        case_h5bench_runner_argv,
    "mpirun -np 4 build/h5dlio --config sync-dlio.json --entry 2": case_h5bench_sample_entry,
    "srun --mpi=pmix -n 4 build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 "
    "--set workflow.checkpoint=false": elsewhere("tests/test_slurm.py", 'PMIX = ["srun", "--mpi=pmix", "-n", "2"]'),
    "salloc -N 2 --ntasks-per-node=4 mpirun build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 "
    "--set workflow.checkpoint=false": elsewhere("tests/test_slurm.py", '["salloc", "-n", "2", "mpirun",'),
    "make validate LAUNCHER=srun": case_make_dry(["--launcher srun"]),
    "make workloads": case_make_dry(["python -m fidelity.workloads", "--scale tiny", "--ranks \"2\""]),
    "make workloads WORKLOADS=dlrm": case_make_dry(['--workloads "dlrm"']),
    "sbatch --test-only --nodes=4 --ntasks-per-node=8 scripts/h5dlio.sbatch":
        elsewhere("tests/test_slurm.py", '["sbatch", "--test-only", "--nodes=1", "--ntasks-per-node=2", str(SBATCH)]'),
    "DATA=/lustre/$USER/unet3d sbatch --nodes=4 --ntasks-per-node=8 scripts/h5dlio.sbatch --config unet3d_h100.yaml "
    "--set dataset.format=hdf5 --set workflow.checkpoint=false":
        elsewhere("tests/test_slurm.py", '["sbatch", "--wait", "--nodes=1", "--ntasks-per-node=2"'),
    "build/h5dlio --help": case_help,
    "build/h5dlio --dlio-entries --set dlio-version=2.0.1": case_dlio_entries,
    "make bench": case_make_dry(["python -m bench.perf run --scale small"]),
    "make bench SCALE=tiny": elsewhere("mk/bench.mk", "bench SCALE=tiny"),
    "make bench BENCH_SECTIONS=readpath,overhead": case_make_dry(["--sections readpath,overhead"]),
    ".venv/bin/python -m bench.perf run --merge --sections readpath": case_bench_merge,
    "H5DLIO_BENCH_KERNEL=/path/to/h5dlio make bench BENCH_SECTIONS=overhead":
        elsewhere("bench/perf/common.py", "H5DLIO_BENCH_KERNEL"),
}


def test_every_readme_command_has_a_row():
    missing = sorted(set(readme_commands()) - set(README_COMMANDS))
    assert not missing, f"README commands this suite does not run: {missing}"
    stale = sorted(set(README_COMMANDS) - set(readme_commands()))
    assert not stale, f"rows for commands the README no longer shows: {stale}"


# the test tier of the commands that need more than the kernel and .venv, or run long (docs/testing.md)
UNET3D_H100 = ("mpirun -np 4 build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 "
               "--set workflow.checkpoint=false")
TIERS = {
    "make validate WORKLOAD=unet3d": (pytest.mark.dlio, pytest.mark.slow),
    UNET3D_H100: (pytest.mark.dlio,),                      # DLIO's own unet3d_h100.yaml, from its venv
    ".venv/bin/python -m validate runs/<id>": (pytest.mark.slow,),
    ".venv/bin/python -m reports runs/paper-<time>": (pytest.mark.slow,),
    "make report RUN=runs/<id>": (pytest.mark.slow,),
    ".venv/bin/python -m darshan summary LOG.darshan --output summary.html": (pytest.mark.slow,),
}


def test_every_tiered_command_is_a_readme_command():
    assert sorted(set(TIERS) - set(README_COMMANDS)) == []


@pytest.mark.parametrize("cmd", [pytest.param(c, marks=TIERS.get(c, ())) for c in sorted(README_COMMANDS)])
def test_readme_command_runs_as_documented(cmd, tmp_path):
    README_COMMANDS[cmd](tmp_path, cmd)
