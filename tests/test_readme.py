"""The README and the manual (docs/*.md) say what the code does: every kernel key `h5dlio --help` lists is in
docs/kernel.md's key table (and no key the kernel lacks), the README's FAIL table covers every check family the
validator can report, the examples in examples/ run as they are, the README's links resolve, and every command of
every ```sh block of the README and of docs/*.md runs as documented (and fails with a named cause when one thing is
wrong)."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel import BIN

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
KEY_TABLE = DOCS / "kernel.md"       # the kernel's key table lives there
EXAMPLES = REPO / "examples"


def help_keys() -> set[str]:
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True, check=True).stdout
    table = out.split("\nKEY ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return {line.split()[0] for line in table if line.strip()}


def documented_keys() -> set[str]:
    keys = set()
    for line in KEY_TABLE.read_text().splitlines():
        m = re.match(r"\| ([a-z0-9-]+)(\(-stdev\))? \|", line)
        if m:
            keys.add(m.group(1))
            if m.group(2):
                keys.add(m.group(1) + "-stdev")
    return keys


def test_every_key_is_documented():
    missing = help_keys() - documented_keys()
    assert not missing, f"{KEY_TABLE.relative_to(REPO)}'s key table lacks {sorted(missing)}"


def test_no_stale_key_documented():
    stale = {k for k in documented_keys() - help_keys() if "-" in k or k in ("train", "evaluation", "epochs", "au")}
    assert not stale, f"{KEY_TABLE.relative_to(REPO)} documents keys h5dlio does not have: {sorted(stale)}"


# ---------------------------------------------------------------- the README's FAIL table against the validator
#
# Check names as the validator spells them: validate/checks.py and the profiles' modules (whose `checks` tuples
# validate runs) build every row with result(name, ...) or similarity(name, ...); a name computed in the call is
# taken from its `name = f"..."`. Names starting with a computed part ({profile}.explained, {name}.per_phase,
# {fn}.model) take their family from the rows they extend. The committed verdicts add real names.

SOURCES = [REPO / "validate" / "checks.py", *sorted((REPO / "profiles").rglob("*.py"))]  # a profile's package too
NAME_RE = re.compile(r'(?:\bresult|\bsimilarity)\(\s*f?"([^"]+)"|\bname = f"([^"]+)"')


def family(name: str) -> str:
    """A check's family as fidelity/matrix.py counts them: dlio.version, else the first dotted part."""
    return "dlio.version" if name.startswith("dlio.version") else re.split(r"[.{<]", name, maxsplit=1)[0]


def source_check_names() -> set[str]:
    """Every name template the validator builds: 'steps.{name}', and '{profile}.explained' (a suffix of others)."""
    names = set()
    for src in SOURCES:
        for m in NAME_RE.finditer(src.read_text()):
            names.add(m.group(1) or m.group(2))
    return names


def verdict_check_names() -> set[str]:
    names = set()
    for v in [*REPO.glob("tests/data/**/verdict.json"), *REPO.glob("reports/examples/**/verdict.json")]:
        names |= {c["name"] for c in json.loads(v.read_text())["checks"]}
    return names


def fail_table() -> list[list[str]]:
    """The README's 'Reading a FAIL' table: per row, the check names of its first cell."""
    sec = README.read_text().split("\n## Reading a FAIL\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in sec.splitlines() if line.startswith("| `")]
    return [re.findall(r"`([^`]+)`", row.split(" | ", 1)[0]) for row in rows]


def _pattern(name: str) -> re.Pattern:
    """`counts.<side>.<variant>.rank<N>` -> a regex: <...> any dotted part, [x] optional, * anything."""
    rx = re.escape(name).replace(r"\*", ".*")
    rx = re.sub(r"\\\[(.*?)\\\]", r"(?:\1)?", rx)
    rx = re.sub(r"<[^>]+>", r"[\\w.-]+", rx)
    return re.compile(rx + r"(?:\.per_phase)?")


def test_fail_table_covers_every_check_family():
    rows = fail_table()
    assert rows, "README has no 'Reading a FAIL' table"
    names = [n for row in rows for n in row]
    listed = {family(n) for n in names if not n.startswith(("<", "."))}
    source = source_check_names()
    made = {family(n) for n in source if not n.startswith("{")}
    assert {"steps", "dataset", "logvfd", "counts", "dftracer", "darshan", "similarity", "runtime"} <= made, made
    assert not made - listed, f"check families the validator reports but the README's FAIL table lacks: {made - listed}"
    assert not listed - made, f"families in the README's FAIL table the validator does not report: {listed - made}"
    suffixes = {re.sub(r"^\{[^}]*\}", "", n) for n in source if n.startswith("{")}
    assert {".explained", ".per_phase", ".model"} <= suffixes, suffixes
    unnamed = {s for s in suffixes if not any(n.endswith(s) for n in names)}
    assert not unnamed, f"check names the validator derives ({unnamed}) that the README's FAIL table lacks"
    pats = [_pattern(n) for row in rows for n in row]
    unmatched = sorted(n for n in verdict_check_names() if not any(p.fullmatch(n) for p in pats))
    assert not unmatched, f"committed verdicts' checks no row of the README's FAIL table names: {unmatched}"


def test_fail_table_paths_exist_in_a_run_directory():
    """The tables the FAIL table says to open are tables a run has: in the committed tiny run, or (Darshan's, absent
    there) stored by name in the profiles' code; the source files it names exist."""
    sec = README.read_text().split("\n## Reading a FAIL\n", 1)[1].split("\n## ", 1)[0]
    fixture = {p.name for p in (REPO / "tests" / "data" / "run-tiny" / "tables").iterdir()}
    code = "".join(p.read_text() for p in SOURCES)
    # a table named in code by an f-string with a name of its own ("darshan-{side}.json"): each {...} any dotted part
    named = [re.compile(re.sub(r"\\\{[^}]*\\\}", r"[\\w.-]+", re.escape(f)))
             for f in re.findall(r'f"([\w.{}-]*\.json)"', code) if "{" in f and not f.startswith("{")]
    refs = sorted(set(re.findall(r"`tables/([^`]+)`", sec)))
    assert len(refs) >= 5, refs
    for ref in refs:
        rx = _pattern(ref)
        assert any(rx.fullmatch(n) for n in fixture) or f'"{ref}"' in code or any(x.fullmatch(ref) for x in named), \
            f"tables/{ref}: no run has such a table"
    for ref in set(re.findall(r"`((?:validate|profiles|harness)/[\w/]+\.py)`", sec)):
        assert (REPO / ref).exists(), ref


# ---------------------------------------------------------------- the examples run as they are


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir()))
def test_example_runs_as_it_is(example, tmp_path):
    """Every file of examples/ is a kernel configuration that runs unchanged (2 ranks, from a fresh folder): it
    generates, trains, leaves its results in h5dlio-output/ and deletes the dataset it generated."""
    p = _sh(_mpirun(f"mpirun -np 4 build/h5dlio --config examples/{example}", ranks=2), cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    outs = list((tmp_path / "h5dlio-output").rglob("output.json"))
    assert len(outs) == 1, list(tmp_path.rglob("*"))
    out = json.loads(outs[0].read_text())
    assert out["generate"]["files"] > 0 and out["train"]["epochs"], out
    assert not [f for f in tmp_path.rglob("*.h5*") if f.is_file()], "the example left its dataset behind"


# ---------------------------------------------------------------- the README's links

def test_readme_links_resolve():
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    broken = [u for u in links if not re.match(r"https?://", u) and not (README.parent / u.split("#")[0]).exists()]
    assert not broken, f"README links to files that do not exist: {broken}"


# ---------------------------------------------------------------- every command the docs show, run as documented
#
# Each ```sh command of each page (README.md, docs/*.md), the way this suite runs it as documented, and the same
# command with one thing wrong (which must exit non-zero and name the cause). A command added to a page without a
# row here fails test_every_command_has_a_row. "elsewhere" rows name the test or CI step that runs that command; the
# test checks the named place exists and really runs it.

PY = str(REPO / ".venv" / "bin" / "python")
MPIRUN_ROOT = ["--allow-run-as-root", "--oversubscribe"]  # root in a VM (the docs' mpirun lines are for users)
DLIO_STAMP = REPO / "build" / ".dlio-venv"
YOUR_FS = "/path/on/your/fs"   # the README's placeholder for the file system to measure


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def page_commands(page: Path) -> list[str]:
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text(), re.S):
        for line in block.splitlines():
            cmd = re.split(r"\s{2,}#", line)[0].strip()
            if cmd and not cmd.startswith("#"):
                cmds.append(cmd)
    return cmds


def _sh(argv: list[str], cwd: Path = REPO, timeout: float = 900, env: dict | None = None):
    e = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**e, **(env or {})})


def _mpirun(cmd: str, ranks: int | None = None) -> list[str]:
    """The docs' `mpirun -np N build/h5dlio ...` as this suite runs it: root's flags, the kernel under test, the
    repository's examples/ by absolute path (the command may run in another folder); ranks= another rank count."""
    argv = cmd.split()
    assert argv[:2] == ["mpirun", "-np"] and argv[3] in ("build/h5dlio", "build/h5bench_dlio"), cmd
    rest = [str(REPO / a) if a.startswith("examples/") else a for a in argv[4:]]
    np_ = ["-np", str(ranks or argv[2])]
    return ["mpirun", *np_] + (MPIRUN_ROOT if os.geteuid() == 0 else ["--oversubscribe"]) + [BIN] + rest


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


def _your_fs(cmd: str, tmp: Path) -> tuple[str, Path]:
    """The README's command with its placeholder file system replaced by a folder of tmp, and that folder."""
    assert YOUR_FS in cmd, cmd
    return cmd.replace(YOUR_FS, str(tmp / "fs")), tmp / "fs"


def case_example_json(tmp: Path, cmd: str) -> None:
    """The README's first kernel run: the shipped h5bench JSON, its dataset on "your" file system. As the README says:
    16 + 4 files of 4 samples of 1 MiB generated, 2 epochs of training and evaluation (every sample opened once per
    epoch), the results in h5dlio-output/, the dataset deleted. A data folder holding someone else's file is refused
    (exit 2, the folder named) and the file left alone; a misspelt key in a copy of the example is refused by name."""
    run, fs = _your_fs(cmd, tmp)
    ok = _sh(_mpirun(run), cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    out = json.loads((tmp / "h5dlio-output" / "output.json").read_text())
    assert out["generate"]["files"] == 16 + 4 and out["generate"]["bytes"] == 20 * 4 * 2**20
    assert [e["opens"] for e in out["train"]["epochs"]] == [16 * 4] * 2
    assert [e["opens"] for e in out["eval"]["epochs"]] == [4 * 4] * 2
    assert not [f for f in fs.rglob("*") if f.is_file()], "keep-files false left files behind"
    (fs / "h5dlio").mkdir(parents=True, exist_ok=True)
    (fs / "h5dlio" / "notes.txt").write_text("mine")
    foreign = _sh(_mpirun(run), cwd=tmp, timeout=300)
    assert foreign.returncode == 2 and "'data-folder'" in foreign.stderr, foreign.stderr[-2000:]
    assert str(fs / "h5dlio" / "notes.txt") in foreign.stderr, foreign.stderr[-2000:]
    assert (fs / "h5dlio" / "notes.txt").read_text() == "mine"
    conf = json.loads((EXAMPLES / "h5bench-dlio.json").read_text())
    c = conf["benchmarks"][0]["configuration"]
    c["batch-sise"] = c.pop("batch-size")
    (tmp / "typo.json").write_text(json.dumps(conf))
    bad = _sh(_mpirun(run.replace("examples/h5bench-dlio.json", str(tmp / "typo.json"))), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "'batch-sise'" in bad.stderr, bad.stderr[-2000:]


def case_example_yaml(tmp: Path, cmd: str) -> None:
    """The README's DLIO YAML run: DLIO's unet3d keys at 56 one-sample files, 2 epochs, batch 7 (4 ranks: 14 samples,
    2 steps each per epoch); the dataset on "your" file system, deleted after; one misspelt value refused by key."""
    run, fs = _your_fs(cmd, tmp)
    ok = _sh(_mpirun(run), cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    out = json.loads((tmp / "h5dlio-output" / "unet3d" / "output.json").read_text())
    assert out["generate"]["files"] == 56 and out["ranks"] == 4
    assert [(e["opens"], e["steps_per_rank_max"]) for e in out["train"]["epochs"]] == [(56, 2)] * 2
    assert not [f for f in fs.rglob("*") if f.is_file()], "keep_files False left files behind"
    bad = _sh(_mpirun(run + " --set dataset.format=hfd5"), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "dataset.format" in bad.stderr and "hfd5" in bad.stderr, bad.stderr[-2000:]


def case_ckpt_hdf5(tmp: Path, cmd: str) -> None:
    """docs/kernel-io.md's HDF5 checkpoints: the shipped unet3d example with checkpointing on, the kernel's HDF5 format
    and collective MPI-IO: one shared file per checkpoint (DLIO 2.0.0's schedule: after each of the 2 epochs), the
    summary naming the format and driver; a driver name it does not have is refused by key."""
    ok = _sh(_mpirun(cmd), cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert sorted(p.name for p in (tmp / "checkpoints").iterdir()) == ["checkpoint-1-1.h5", "checkpoint-2-1.h5"]
    assert "(hdf5, mpio-collective)" in ok.stdout, ok.stdout[-1000:]
    bad = _sh(_mpirun(cmd.replace("=collective", "=colective")), cwd=tmp, timeout=300)
    assert bad.returncode == 2 and "'checkpoint-mpiio'" in bad.stderr, bad.stderr[-2000:]


def case_dlio_yaml(tmp: Path, cmd: str) -> None:
    """DLIO's own unet3d_h100.yaml with docs/kernel.md's --set: validated end to end (--dry-run: the full-size dataset
    is 24 GB); one misspelled value must be refused naming its key."""
    venv = _need_dlio()
    found = list(venv.glob("lib/python*/site-packages/dlio_benchmark/configs/workload/unet3d_h100.yaml"))
    assert found, f"DLIO's unet3d_h100.yaml not in {venv}"
    shutil.copy(found[0], tmp / "unet3d_h100.yaml")
    ok = _sh(_mpirun(cmd) + ["--dry-run"], cwd=tmp, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = _sh(_mpirun(cmd.replace("dataset.format=hdf5", "dataset.format=hfd5")) + ["--dry-run"], cwd=tmp)
    assert bad.returncode == 2 and "dataset.format" in bad.stderr and "hfd5" in bad.stderr, bad.stderr[-2000:]
    # without the documented override the file's own checkpoint block applies (DLIO 2.0.0's checkpoints are emulated):
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
    where = [f"RUNS_DIR={tmp / 'runs'}"]
    ok = _sh(cmd.split() + ["PROFILES=timing", *where], timeout=1500)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    [run] = list((tmp / "runs").iterdir())  # the one run this invocation made
    assert json.loads((run / "verdict.json").read_text())["verdict"] == "pass"
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
    """_mpirun, keeping the documented binary name (build/h5bench_dlio is the kernel under h5bench's name)."""
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
    from profiles.darshan import analyses as darshan_analyses
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


RUNS_BAD = {"import": ("runs", "no-runs-here"), "list": ("--workload unet3d", "--storage /tmp --nosuch-option"),
            "show": ("show 1", "show 99"), "compare": ("compare 1 2", "compare 1 99"),
            "trend": ("kernel.au_percent", "kernel.nosuch")}


def case_make_runs(tmp: Path, cmd: str) -> None:
    """docs/runs.md's commands on a store of their own (RUNS_DB in tmp) holding two copies of the committed tiny run
    (each with its REPEAT=3 timing values, identical): import adds both, list and show print them, compare finds every
    metric within noise, trend writes its PNG; the command with a folder, ID, metric or option that is not there exits
    2 naming it."""
    runs, db = tmp / "runs", tmp / "runs.sqlite"
    for name in ("unet3d-tiny-a", "unet3d-tiny-b"):
        shutil.copytree(REPO / "tests" / "data" / "run-tiny", runs / name)
        m = json.loads((runs / name / "manifest.json").read_text())
        (runs / name / "manifest.json").write_text(json.dumps({**m, "run_id": name}))
    args = re.search(r'ARGS="([^"]*)"', cmd).group(1)
    args = args.replace("import runs", f"import {runs}").replace("--out trend.png", f"--out {tmp / 'trend.png'}")

    def make(a: str):
        return _sh(["make", "--no-print-directory", "runs", f"ARGS={a}", f"RUNS_DB={db}"])
    verb = args.split()[0]
    if verb != "import":
        assert make(f"import {runs}").returncode == 0
    ok = make(args)
    assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
    out = ok.stdout
    assert {"import": "2 added", "list": "unet3d-tiny-b", "show": "kernel.au_percent\t3\t",
            "compare": "kernel.au_percent\t", "trend": "2 runs"}[verb] in out, out[-2000:]
    if verb == "compare":
        rows = [line.split("\t") for line in out.splitlines()[2:] if "\t" in line]
        assert "narrower than the truth" in out.splitlines()[-1]   # 3 values a side
        assert rows and all(r[-1] == "within noise" for r in rows), out[-2000:]
    if verb == "trend":
        assert (tmp / "trend.png").stat().st_size > 0
    good, bad = RUNS_BAD[verb]
    wrong = make(args.replace(good, bad) if verb != "import" else f"import {tmp / bad}")
    assert wrong.returncode != 0 and bad.split()[-1] in wrong.stderr, wrong.stderr[-2000:]


def elsewhere(path: str, needle: str):
    def check(tmp: Path, cmd: str) -> None:
        text = (REPO / path).read_text()
        assert needle in text, f"{cmd}: {path} no longer runs it ({needle!r})"
    return check


COMMANDS = {
    "README.md": {
        "make validate WORKLOAD=unet3d": case_make_validate,
        "make test": elsewhere(".ci/run", "\nmake test\n"),
        "make build": case_make_build,
        f"mpirun -np 4 build/h5dlio --config examples/h5bench-dlio.json --set data-folder={YOUR_FS}/h5dlio":
            case_example_json,
        f"mpirun -np 4 build/h5dlio --config examples/unet3d.yaml --set dataset.data_folder={YOUR_FS}/unet3d":
            case_example_yaml,
    },
    "docs/kernel.md": {
        "make build HDF5_DIR=/usr": case_make_build_usr,
        "mpirun -np 4 build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 --set workflow.checkpoint=false":
            case_dlio_yaml,
        "build/h5dlio --help": case_help,
        "make install PREFIX=/opt/h5dlio/0.1.0":
            elsewhere("tests/test_install.py", 'r = _make("install", f"PREFIX={p}")'),
        "module use /opt/h5dlio/0.1.0/share/modulefiles && module load h5dlio":
            elsewhere("tests/test_install.py", "module use {prefix}/share/modulefiles; module load h5dlio"),
        "build/h5dlio --dlio-entries --set dlio-version=2.0.1": case_dlio_entries,
        "mpirun -np 4 build/h5bench_dlio --generate-data --keep-files --record-length 1048576 --num-files-train 8 "
        "--num-files-eval 2 --num-samples-per-file 4 --data-folder storage/data --output-data-folder storage/run1":
            case_h5bench_runner_argv,
        "mpirun -np 4 build/h5dlio --config sync-dlio.json --entry 2": case_h5bench_sample_entry,
        "srun --mpi=pmix -n 4 build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 "
        "--set workflow.checkpoint=false": elsewhere("tests/test_slurm.py", 'PMIX = ["srun", "--mpi=pmix", "-n", "2"]'),
        "salloc -N 2 --ntasks-per-node=4 mpirun build/h5dlio --config unet3d_h100.yaml --set dataset.format=hdf5 "
        "--set workflow.checkpoint=false": elsewhere("tests/test_slurm.py", '["salloc", "-n", "2", "mpirun",'),
        "make validate LAUNCHER=srun": case_make_dry(["--launcher srun"]),
        "sbatch --test-only --nodes=4 --ntasks-per-node=8 scripts/h5dlio.sbatch":
            elsewhere("tests/test_slurm.py",
                      '["sbatch", "--test-only", "--nodes=1", "--ntasks-per-node=2", str(SBATCH)]'),
        "DATA=/lustre/$USER/unet3d sbatch --nodes=4 --ntasks-per-node=8 scripts/h5dlio.sbatch "
        "--config unet3d_h100.yaml --set dataset.format=hdf5 --set workflow.checkpoint=false":
            elsewhere("tests/test_slurm.py", '["sbatch", "--wait", "--nodes=1", "--ntasks-per-node=2"'),
    },
    "docs/kernel-io.md": {
        "mpirun -np 8 build/h5dlio --config examples/unet3d.yaml --set workflow.checkpoint=true "
        "--set checkpoint-format=hdf5 --set checkpoint-mpiio=collective": case_ckpt_hdf5,
    },
    "docs/validation.md": {
        ".venv/bin/python -m validate runs/<id>": case_validate_darshan_analyses,
        ".venv/bin/python -m darshan summary LOG.darshan --output summary.html": case_darshan_summary,
        ".venv/bin/drishti --html --csv LOG.darshan": case_drishti,
    },
    "docs/workloads.md": {
        "make workloads": case_make_dry(["python -m fidelity.workloads", "--scale tiny", "--ranks \"2\""]),
        "make workloads WORKLOADS=dlrm": case_make_dry(['--workloads "dlrm"']),
    },
    "docs/reports.md": {
        "make report RUN=runs/<id>": case_make_report,
        "make paper": case_make_dry(["python -m pipeline paper", "--scale tiny", "--workloads \"thesis-a-rt0:timing"]),
        "make paper PAPER_SCALE=small PAPER_REPEAT=3": case_make_dry(["--scale small", "--repeat 3"]),
        ".venv/bin/python -m reports runs/paper-<time>": case_reports_paper_dir,
    },
    "docs/sizing.md": {
        "make sizing WORKLOAD=unet3d_b200 DLIO_VENV=/path/to/dlio3-venv DATA=/path/on/your/fs/sizing":
            case_make_dry(['python -m harness sizing --workload "unet3d_b200"', '--data "/path/on/your/fs/sizing"',
                           '--dlio-venv "$(cat build/.dlio-venv.']),
    },
    "docs/audit.md": {
        "make audit RESULT=/path/to/results/training/unet3d/run/20250801_120000 DLIO_VENV=/path/to/dlio3-venv":
            case_make_dry(['python -m pipeline audit "/path/to/results/training/unet3d/run/20250801_120000"',
                           '--dlio-venv "$(cat build/.dlio-venv.']),
    },
    "docs/runs.md": {
        'make runs ARGS="import runs"': case_make_runs,
        "make validate WORKLOAD=unet3d RUNS_DB=runs/store.sqlite":
            case_make_dry(['python -m pipeline --workload unet3d', '--runs-db "runs/store.sqlite"']),
        'make runs ARGS="list --workload unet3d"': case_make_runs,
        'make runs ARGS="show 1"': case_make_runs,
        'make runs ARGS="compare 1 2"': case_make_runs,
        'make runs ARGS="trend kernel.au_percent --workload unet3d --out trend.png"': case_make_runs,
    },
    "docs/performance.md": {
        "make bench": case_make_dry(["python -m bench.perf run --scale small"]),
        "make bench SCALE=tiny": elsewhere("mk/bench.mk", "bench SCALE=tiny"),
        "make bench BENCH_SECTIONS=readpath,overhead": case_make_dry(["--sections readpath,overhead"]),
        ".venv/bin/python -m bench.perf run --merge --sections readpath": case_bench_merge,
        "H5DLIO_BENCH_KERNEL=/path/to/h5dlio make bench BENCH_SECTIONS=overhead":
            elsewhere("bench/perf/common.py", "H5DLIO_BENCH_KERNEL"),
    },
    "docs/fidelity.md": {
        "make validate WORKLOAD=unet3d DLIO=2.0.0":
            case_make_dry(["python -m pipeline --workload unet3d", '--dlio-venv "$(cat build/.dlio-venv)"']),
        "make fidelity-run WORKLOAD=unet3d DLIO=/path/to/dlio_benchmark":
            case_make_dry(['DLIO_SPEC="/path/to/dlio_benchmark"', "python -m pipeline --workload unet3d",
                           "python -m fidelity runs"]),
        "make fidelity": case_make_dry(["python -m fidelity runs"]),
        "make fidelity-revisions": case_make_dry(["python -m fidelity.revisions --check --mirrors"]),
    },
}


@pytest.mark.parametrize("page", [str(p.relative_to(REPO)) for p in pages()])
def test_every_command_has_a_row(page):
    shown = set(page_commands(REPO / page))
    rows = set(COMMANDS.get(page, {}))
    assert not shown - rows, f"{page}: commands this suite does not run: {sorted(shown - rows)}"
    assert not rows - shown, f"{page}: rows for commands the page no longer shows: {sorted(rows - shown)}"


def test_every_page_with_rows_exists():
    assert not {p for p in COMMANDS if not (REPO / p).exists()}


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
    ".venv/bin/drishti --html --csv LOG.darshan": (pytest.mark.slow,),
}


def test_every_tiered_command_is_a_documented_command():
    assert sorted(set(TIERS) - {c for rows in COMMANDS.values() for c in rows}) == []


@pytest.mark.parametrize("page,cmd", [pytest.param(p, c, marks=TIERS.get(c, ())) for p, rows in COMMANDS.items()
                                      for c in sorted(rows)])
def test_command_runs_as_documented(page, cmd, tmp_path):
    COMMANDS[page][cmd](tmp_path, cmd)
