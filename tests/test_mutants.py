"""The kernel's mutants (bench/src/mutate.h; `make mutants`, docs/mutants.md): chosen only through H5DLIO_MUTATE,
never shown in --help, named loudly in a mutated run, and each one a real divergence at the point it claims: a read
mutant changes rank 0's Log VFD records (the other rank's stay as they were), a generation mutant changes training
file 0 only, a checkpoint mutant the checkpoint folder. Whether the validator then catches each one is
tests/test_validation_e2e.py's fast subset and `make mutants`' matrix (fidelity/mutants.md)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, h5tool, run, tiny

from fidelity import mutants as fm
from fidelity.mutants import killed_by, mutant_table, render_md

FAMILIES = {"pytorch", "tf", "tf-eval", "checkpoint", "dlio3", "dlio3-jpeg", "dlio3-checkpoint", "dlio3-mlps", "async",
            "fixed-size"}


def test_unknown_mutant_is_refused_naming_the_variable(tmp_path):
    r = run(tmp_path, 1, tiny(tmp_path / "data", **{"generate-data": True}), env={"H5DLIO_MUTATE": "no-such"})
    assert r.rc == 2
    assert "H5DLIO_MUTATE" in r.proc.stderr and "'no-such' is not a mutant" in r.proc.stderr
    assert not (tmp_path / "data").exists()  # refused before any I/O


def test_mutants_are_hidden_from_help_and_listed_by_their_own_flag():
    assert "mutat" not in subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout.lower()
    rows = mutant_table(Path(BIN))
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)) >= 16
    for r in rows:
        assert r["what"] and r["checks"] and r["families"] and set(r["families"]) <= FAMILIES, r


def test_killed_by_matches_only_the_intended_checks():
    failed = ["counts.kernel.logvfd-rt0.rank0", "dftracer.explained", "logvfd.sequence.rt0.rank1"]
    assert killed_by(failed, ["logvfd.sequence.*"]) == ["logvfd.sequence.rt0.rank1"]
    assert killed_by(failed, ["counts.dlio.*", "dataset.structure"]) == []


def test_the_matrix_names_each_cells_outcome():
    table = [{"name": n, "what": "w", "checks": ["c.*"], "families": ["pytorch"]} for n in ("a", "b", "c")]
    res = [{"mutant": "a", "family": "pytorch", "status": "killed", "killed_by": ["c.x"], "failed": ["c.x", "d"]},
           {"mutant": "b", "family": "pytorch", "status": "survived", "killed_by": [], "failed": []},
           {"mutant": "c", "family": "pytorch", "status": "killed-elsewhere", "killed_by": [], "failed": ["d"]}]
    m = {"kernel_revision": "r", "dlio": "2.0.0", "scale": "tiny", "ranks": 2, "profiles": ["timing"],
         "profiles_note": "", "wall_s": 1, "started": "s", "finished": "f", "table": table, "results": res,
         "baselines": [{"family": "pytorch", "workload": "unet3d", "scale": "tiny", "verdict": "pass"}],
         "not_run": [{"mutant": "z", "family": "dlio3", "reason": "no 3.x here"}], "findings": ["b: why"]}
    md = render_md(m)
    matrix = md.split("## Mutant x family")[1].split("\n## ")[0]
    rows = {ln.split("|")[1].strip(): ln for ln in matrix.splitlines() if ln.startswith("| `")}
    assert rows["`a`"].endswith("| **killed** by c.x (+1 more) |")
    assert rows["`b`"].endswith("| **SURVIVED** |")
    assert rows["`c`"].endswith("| caught, not by its check by d |")
    assert "- `z` (dlio3): no 3.x here" in md and "- b: why" in md
    m["baselines"].append({"family": "dlio3", "workload": "unet3d_b200", "scale": "tiny_odirect", "verdict": "pass"})
    md = render_md(m)  # a family's own preset named, the header's not
    assert "| pytorch | unet3d |" in md and "| dlio3 | unet3d_b200 (SCALE=tiny_odirect) |" in md


def _venv(tmp: Path, name: str, version: str) -> Path:
    """A stand-in reference venv: bin/dlio_benchmark and the .h5dlio-dlio.json scripts/deps-dlio.sh writes."""
    v = tmp / name
    (v / "bin").mkdir(parents=True)
    (v / "bin" / "dlio_benchmark").write_text("")
    (v / ".h5dlio-dlio.json").write_text(json.dumps({"version": version}))
    return v


def test_the_dlio3_family_runs_only_in_a_3x_venv(tmp_path, capsys):
    """`make mutants DLIO=<3.x checkout>` hands the 3.x venv over as --dlio3-venv; the dlio3 family is refused
    (exit 2, naming what is missing) without one or with a venv of another DLIO, and is left out of the default
    families (its mutants listed as not run) when none is given."""
    v2, v3 = _venv(tmp_path, "v2", "2.0.0"), _venv(tmp_path, "v3", "3.0.2")
    out = ["--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")]
    assert fm.main(["--dlio-venv", str(v2), "--families", "dlio3", *out]) == 2
    assert "MUTANT_FAMILIES=dlio3" in capsys.readouterr().err
    assert fm.main(["--dlio-venv", str(v2), "--dlio3-venv", str(v2), "--families", "dlio3", *out]) == 2
    assert "DLIO=2.0.0 (--dlio3-venv" in capsys.readouterr().err
    a = fm.argparse.Namespace(ranks=2, families="", dlio_venv=v2, dlio3_venv=None, mutants="prewarm-dropped",
                              baseline=[])
    fams, _, chosen = fm._chosen(a)
    assert "dlio3" not in fams and [t["name"] for t in chosen] == ["prewarm-dropped"]
    a.dlio3_venv = v3
    assert "dlio3" in fm._chosen(a)[0] and fm.venv_for("dlio3", a) == v3 and fm.venv_for("tf", a) == v2


def test_the_3x_checkpoint_families_and_the_odirect_preset(tmp_path, capsys):
    """dlio3-checkpoint runs in the 3.x venv (--dlio3-venv), dlio3-mlps only in one given by --dlio3-mlps-venv (refused,
    exit 2 naming DLIO3_MLPS_VENV, without one; left out of the default families then, its mutants listed as not
    run); dlio3 runs at tiny_odirect when SCALE=tiny, and a given baseline at another preset is not its baseline."""
    v2, v3 = _venv(tmp_path, "v2", "2.0.0"), _venv(tmp_path, "v3", "3.0.2")
    out = ["--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")]
    assert fm.main(["--dlio-venv", str(v2), "--dlio3-venv", str(v3), "--families", "dlio3-mlps", *out]) == 2
    assert "MUTANT_FAMILIES=dlio3-mlps: needs a DLIO 3.x venv where mlpstorage_py imports" in capsys.readouterr().err
    assert fm.main(["--dlio-venv", str(v2), "--dlio3-mlps-venv", str(v2), "--families", "dlio3-mlps", *out]) == 2
    assert "DLIO=2.0.0 (--dlio3-mlps-venv" in capsys.readouterr().err
    a = fm.argparse.Namespace(ranks=2, families="", dlio_venv=v2, dlio3_venv=v3, dlio3_mlps_venv=None, scale="tiny",
                              mutants="fsync-dropped,fadvise-dropped", baseline=[], vol_kernel=tmp_path / "none")
    fams, _, chosen = fm._chosen(a)
    assert "dlio3-checkpoint" in fams and "dlio3-mlps" not in fams and fm.venv_for("dlio3-checkpoint", a) == v3
    fadvise = [t for t in chosen if t["name"] == "fadvise-dropped"]  # runs in no family here: nothing launched
    assert [(n["mutant"], n["family"]) for n in fm._matrix(fams, fadvise, a, print)[2]] == [
        ("fadvise-dropped", "dlio3-mlps")]
    vm = _venv(tmp_path, "vm", "3.0.2")
    a.dlio3_mlps_venv = vm
    assert "dlio3-mlps" in fm._chosen(a)[0] and fm.venv_for("dlio3-mlps", a) == vm
    assert (fm.scale_for("dlio3", a), fm.scale_for("dlio3-checkpoint", a), fm.scale_for("pytorch", a)) == (
        "tiny_odirect", "tiny", "tiny")
    a.scale = "small"
    assert fm.scale_for("dlio3", a) == "small"
    a.scale, given = "tiny", tmp_path / "given"
    given.mkdir()
    (given / "manifest.json").write_text(json.dumps({"workload": {"name": "unet3d_b200", "scale": "tiny"},
                                                     "status": "complete", "steps": {}}))
    a.baselines, a.runs_dir = {"dlio3": given}, tmp_path / "runs"
    row = fm.baseline("dlio3", a, print)
    assert row["verdict"] == "error" and "a run at SCALE=tiny, the dlio3 family runs at tiny_odirect" in row["detail"]


def test_the_syscall_mutants_are_meant_for_strace_per_file():
    """The four system-call mutants (tests/test_syscall_mutants.py kills each with strace.per_file) name it, and the
    families where the kernel makes the call: the O_DIRECT npz reader (dlio3), the 3.x streams' fsync, mlpstorage's
    fadvise."""
    rows = {r["name"]: r for r in mutant_table(Path(BIN))}
    want = {"odirect-dropped": ["dlio3"], "readv-size": ["dlio3"], "fsync-dropped": ["dlio3-checkpoint", "dlio3-mlps"],
            "fadvise-dropped": ["dlio3-mlps"]}
    for name, fams in want.items():
        assert rows[name]["families"] == fams and "strace.per_file" in rows[name]["checks"], rows[name]


def test_the_async_family_needs_the_vol_kernel(tmp_path, capsys, monkeypatch):
    """The async family (the kernel side under VOL=async-prefetch) is refused, exit 2 naming the family and what
    builds the vol kernel, when that kernel is missing; it is left out of the default families then (its mutant listed
    as not run). With a kernel and a plugin folder (stand-ins) it is in, and its runs get --vol async-prefetch and
    the kernel as H5DLIO_KERNEL_BIN; a given baseline that ran natively is not its baseline."""
    v2 = _venv(tmp_path, "v2", "2.0.0")
    out = ["--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")]
    none = tmp_path / "no-vol-kernel"
    assert fm.main(["--dlio-venv", str(v2), "--families", "async", "--vol-kernel", str(none), *out]) == 2
    err = capsys.readouterr().err
    assert f"MUTANT_FAMILIES=async: --vol-kernel {none}: no such file (make vol-kernel builds it)" in err
    a = fm.argparse.Namespace(ranks=2, families="", dlio_venv=v2, dlio3_venv=None, mutants="async-lost-read",
                              baseline=[], vol_kernel=none)
    fams, _, chosen = fm._chosen(a)
    assert "async" not in fams and [t["name"] for t in chosen] == ["async-lost-read"]
    assert [(n["mutant"], n["family"]) for n in fm._matrix(fams, chosen, a, print)[2]] == [("async-lost-read",
                                                                                            "async")]
    kernel = tmp_path / "h5dlio-ts"
    kernel.write_text("")
    monkeypatch.setenv("HDF5_PLUGIN_PATH", str(tmp_path))
    a.vol_kernel = kernel
    assert "async" in fm._chosen(a)[0]
    assert fm.family_launch("async", a) == (["--vol", "async-prefetch"], {"H5DLIO_KERNEL_BIN": str(kernel)})
    assert fm.family_launch("pytorch", a) == ([], {})
    assert "needs VOL=async-prefetch" in fm._given_vol("async", {"vol": {"requested": "native"}})
    assert fm._given_vol("async", {"vol": {"requested": "async-prefetch"}}) == "" == fm._given_vol("pytorch", {})


def test_a_family_left_out_of_an_explicit_list_is_not_listed_as_not_run(tmp_path):
    """MUTANT_FAMILIES=pytorch with MUTANT_MERGE=1 must not turn dlio3's measured cell into "not run" (measured: the
    first merge of the async family did that to prewarm-dropped); with every family asked, the ones that cannot run
    are listed."""
    a = fm.argparse.Namespace(ranks=2, families="pytorch", dlio_venv=_venv(tmp_path, "v2", "2.0.0"), dlio3_venv=None,
                              mutants="prewarm-dropped", baseline=[], vol_kernel=tmp_path / "none")
    fams, _, chosen = fm._chosen(a)
    assert fams == ["pytorch"] and fm._matrix(fams, chosen, a, print) == ([], [], [])
    a.families = ""
    fams, _, chosen = fm._chosen(a)
    assert [(n["mutant"], n["family"]) for n in fm._matrix(fams, chosen, a, print)[2]] == [
        ("prewarm-dropped", "dlio3"), ("prewarm-dropped", "dlio3-jpeg")]


RUN_TINY = Path(__file__).resolve().parent / "data" / "run-tiny"


@pytest.fixture
def passes(monkeypatch, tmp_path):
    """A stand-in for the one `python -m pipeline --no-report --outcome FILE` process a baseline or mutant runs: it
    makes a run directory (run-tiny's manifest, a kernel output.json naming H5DLIO_MUTATE, the planted verdict),
    writes the planted outcome (st["outcome"]; None: none written, as a pipeline that crashed) and exits st["rc"]."""
    import shutil
    st = {"rc": 1, "outcome": {"harness": 0, "validate": 1, "harness_s": 12.5, "validate_s": 3.5},
          "verdict": {"verdict": "fail", "checks": [{"name": "dataset.structure", "status": "fail"}]}, "argv": []}

    def fake(argv, cwd=None, env=None, stdout=None, stderr=None, **kw):
        st["argv"].append(argv)
        assert argv[1:5] == ["-m", "pipeline", "--no-report", "--outcome"], argv
        run = Path(argv[argv.index("--runs-dir") + 1]) / f"run-{len(st['argv'])}"
        shutil.copytree(RUN_TINY, run)
        out = run / "kernel" / "timing" / "out"
        out.mkdir(parents=True)
        (out / "output.json").write_text(json.dumps({"mutant": (env or {}).get("H5DLIO_MUTATE")}))
        (run / "verdict.json").write_text(json.dumps(st["verdict"]))
        stdout.write(f"harness: run directory {run}\n")
        if st["outcome"] is not None:
            Path(argv[5]).write_text(json.dumps({"run": str(run), **st["outcome"]}))
        return subprocess.CompletedProcess(argv, st["rc"])
    monkeypatch.setattr(fm.subprocess, "run", fake)
    a = fm.argparse.Namespace(ranks=2, scale="tiny", runs_dir=tmp_path / "runs", dlio_venv=tmp_path / "v2",
                              baselines={})
    (a.runs_dir / "pytorch").mkdir(parents=True)
    return st, a


MUT = {"name": "gen-size", "checks": ["dataset.*"]}


@pytest.mark.parametrize("validate_rc,verdict,status", [
    (1, "fail", "killed"), (2, "fail", "killed"), (1, "pass", "survived"), (0, "fail", "survived")])
def test_a_mutant_is_one_pipeline_pass_whose_validate_step_decides(passes, validate_rc, verdict, status):
    """The mutant row takes the validate step's exit status and the step times from the pipeline's outcome (not the
    pass's own exit status, which is the harness's when it failed), and the outcome rules as they were: killed only
    when the verdict FAILs and validate exits non-zero (planted: exit 0 on a FAIL, a PASS WITH MUTANT exit 1)."""
    st, a = passes
    st["outcome"]["validate"], st["verdict"]["verdict"] = validate_rc, verdict
    st["rc"] = 7  # the process's own status is not the validate step's
    row = fm.one("pytorch", Path("/base"), MUT, a, lambda s: None)
    assert (row["status"], row["validate_rc"], row["kernel_s"], row["validate_s"]) == (status, validate_rc, 12.5, 3.5)
    argv = st["argv"][0]
    assert argv[argv.index("--reuse-dlio") + 1] == "/base" and argv[argv.index("--workload") + 1] == "unet3d"


def test_a_mutant_pass_that_did_not_validate_is_an_error_not_a_survivor(passes):
    """No outcome written (the pipeline crashed or was stopped): the run its log named, the process's status as the
    harness's, validation not run: error. The same when the outcome says validate did not run."""
    st, a = passes
    st["outcome"], st["rc"] = None, 130
    row = fm.one("pytorch", Path("/base"), MUT, a, lambda s: None)
    assert row["status"] == "error" and "not validated (harness exit 130)" in row["detail"]
    assert row["run"] and row["run"].endswith("run-1")
    st["outcome"], st["rc"] = {"harness": 2, "validate": None, "harness_s": 0.4, "validate_s": None}, 2
    assert fm.one("pytorch", Path("/base"), MUT, a, lambda s: None)["status"] == "error"


def test_a_baseline_is_one_pipeline_pass_without_a_mutant(passes, monkeypatch):
    """The baseline's pass runs without H5DLIO_MUTATE (even when the caller's environment has one); its verdict,
    validate status and times are the pipeline's; a failed harness step is an error whatever validate said."""
    st, a = passes
    monkeypatch.setenv("H5DLIO_MUTATE", "gen-size")
    st["outcome"]["validate"], st["verdict"] = 0, {"verdict": "pass", "checks": [], "summary": {"pass": 3}}
    row = fm.baseline("pytorch", a, lambda s: None)
    assert (row["verdict"], row["validate_rc"], row["harness_s"], row["validate_s"]) == ("pass", 0, 12.5, 3.5)
    out = Path(row["run"]) / "kernel" / "timing" / "out" / "output.json"
    assert json.loads(out.read_text())["mutant"] is None
    st["outcome"]["harness"] = 1
    row = fm.baseline("pytorch", a, lambda s: None)
    assert row["verdict"] == "error" and "the harness exited 1" in row["detail"]


def test_the_async_mutant_is_meant_for_the_read_checks_of_the_in_rank_launch():
    """async-lost-read's row names the checks that see one lost read of rank 0 in the launch that reads in-rank (the
    Log VFD's in-order records, and its counts against the model): the failures measured in docs/vol.md kill it."""
    row = {r["name"]: r for r in mutant_table(Path(BIN))}["async-lost-read"]
    assert row["families"] == ["async"]
    measured = ["counts.kernel.logvfd-rt0.rank0", "counts.kernel.logvfd-rt0.rank0.per_phase",
                "logvfd.sequence.rt0.rank0"]
    assert killed_by(measured, row["checks"]) == ["counts.kernel.logvfd-rt0.rank0", "logvfd.sequence.rt0.rank0"]
    assert killed_by(["logvfd.sequence.rt0.rank1", "dftracer.per_file"], row["checks"]) == []


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutants")
    r = run(tmp, 2, tiny(tmp / "data", **{"generate-data": True, "train": False, "evaluation": False, **VARIED}),
            name="gen")
    assert r.rc == 0, r.proc.stderr
    return tmp


BASE: dict = {}
# files of different sizes (DLIO's record_length_stdev): the Log VFD's records, which name no file, then tell two
# files' samples apart (of files alike, sample i of one reads the same offsets as sample i of the other)
VARIED = {"record-length-stdev": 16384}


def _reads(tmp: Path, name: str, mutant: str | None) -> tuple[dict, list, list]:
    sets = tiny(tmp / "data", **{"train": True, "evaluation": True, "log-vfd": True, **VARIED})
    r = run(tmp, 2, sets, log=True, name=name, env={"H5DLIO_MUTATE": mutant} if mutant else None)
    assert r.rc == 0, r.proc.stderr
    return r.summary(), r.logvfd(0), r.logvfd(1)


@pytest.mark.parametrize("mutant,rank", [("skip-read", 0), ("extra-read", 0), ("swap-samples", 0),
                                         ("swap-batches", 0), ("read-offset", 0), ("extra-open", 0),
                                         ("eval-step-dropped", 0), ("rank-seed", 1), ("wrong-file", 0)])
def test_a_read_mutant_changes_one_ranks_reads_only(dataset, mutant, rank):
    if "base" not in BASE:  # the unmutated run, once for the module
        BASE["base"] = _reads(dataset, "base", None)
    _, base0, base1 = BASE["base"]
    out, m0, m1 = _reads(dataset, mutant, mutant)
    assert out["mutant"] == mutant and out["config"]["mutant"] == mutant
    assert any("MUTANT" in w and mutant in w for w in out["config"]["warnings"])
    changed, same = (m0, m1) if rank == 0 else (m1, m0)
    assert changed != (base0 if rank == 0 else base1)
    assert same == (base1 if rank == 0 else base0)


def _train_files(r, rank: int) -> dict[int, list[int]]:
    """epoch -> the files rank read in its training steps, in order (the kernel's samples log)."""
    out: dict[int, list[int]] = {}
    for row in r.samples(rank):
        if row["phase"] == "train":
            out.setdefault(int(row["epoch"]), []).append(int(row["file"]))
    return out


@pytest.mark.parametrize("mutant", ["no-shuffle", "epoch-seed", "swap-rank-slices"])
def test_an_order_mutant_changes_which_file_or_when(dataset, mutant):
    """The order mutants (dftracer.order's), against the unmutated run's samples log (one sample per file, so the
    file names the sample): no-shuffle reads each rank's files of every epoch in ascending order, the same files;
    epoch-seed leaves epoch 1 as it was and reads epoch 2's files in another order; swap-rank-slices gives rank 0
    what rank 1 read and rank 1 what rank 0 read, each in that rank's order."""
    sets = tiny(dataset / f"one-{mutant}", **{"generate-data": True, "train": True, "num-samples-per-file": 1,
                                              "num-files-train": 16})
    base = run(dataset, 2, sets, name=f"order-base-{mutant}")
    got = run(dataset, 2, {**sets, "generate-data": False}, name=f"order-{mutant}", env={"H5DLIO_MUTATE": mutant})
    assert base.rc == 0 and got.rc == 0, base.proc.stderr + got.proc.stderr
    b = {r: _train_files(base, r) for r in (0, 1)}
    m = {r: _train_files(got, r) for r in (0, 1)}
    for r in (0, 1):
        for e in (1, 2):
            if mutant == "no-shuffle":
                assert m[r][e] == sorted(b[r][e]) != b[r][e]
            elif mutant == "epoch-seed":
                assert (m[r][e] == b[r][e]) == (e == 1) and sorted(m[r][e]) == sorted(b[r][e])
            else:
                assert m[r][e] == b[1 - r][e] != b[r][e]


def _headers(folder: Path) -> dict:
    """Each file's structure as h5dump prints it (-H -p: datasets, shapes, layout, chunks, filters; no data)."""
    return {p.name: subprocess.run([h5tool("h5dump"), "-H", "-p", str(p)], capture_output=True, text=True,
                                   check=True).stdout.replace(str(folder), "") for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("mutant", ["gen-chunk", "gen-dims", "compression-level"])
def test_a_generation_mutant_changes_training_file_0_only(tmp_path, mutant):
    sets = {**tiny(tmp_path / "x"), "generate-data": True, "train": False, "evaluation": False}
    a = run(tmp_path, 2, {**sets, "data-folder": str(tmp_path / "a")}, name="a")
    b = run(tmp_path, 2, {**sets, "data-folder": str(tmp_path / "b")}, name="b", env={"H5DLIO_MUTATE": mutant})
    assert a.rc == 0 and b.rc == 0, a.proc.stderr + b.proc.stderr
    assert "MUTANT" in b.proc.stderr and "MUTANT" not in a.proc.stderr
    for phase in ("train", "valid"):
        da, db = _headers(tmp_path / "a" / phase), _headers(tmp_path / "b" / phase)
        assert da.keys() == db.keys()
        differ = sorted(n for n in da if da[n] != db[n])
        assert differ == (["img_0_of_8.hdf5"] if phase == "train" else []), (phase, differ)


def test_the_gen_rename_mutant_renames_training_file_0_only_and_says_in_place(tmp_path):
    """gen-rename: under strace (the profile's parse of a generate launch), training file 0 alone is written under a
    partial name and renamed into place, an unlink of that name first; every other file as in the unmutated run (no
    rename, no unlink); the output still says generate mode in_place. Negative control: the unmutated run renames
    nothing."""
    import shutil as sh

    from profiles import strace as st
    exe = sh.which("strace")
    if exe is None:
        pytest.skip("no strace here (scripts/deps-system.sh installs it)")
    sets = {**tiny(tmp_path / "x"), "generate-data": True, "train": False, "evaluation": False}
    calls = "trace=" + ",".join(st.SYSCALLS + st.GEN_SYSCALLS)
    rows = {}
    for name, env in (("a", None), ("b", {"H5DLIO_MUTATE": "gen-rename"})):
        trace = tmp_path / name / "strace"
        trace.mkdir(parents=True)
        r = run(tmp_path, 1, {**sets, "data-folder": str(tmp_path / name / "data")}, name=f"{name}-out", env=env,
                launcher=[*MPIRUN, "-np", "1", exe, "-f", "-ff", "-qq", "-y", "-ttt", "-o",
                          str(trace / "trace.r0"), "-e", calls])
        assert r.rc == 0, r.proc.stderr
        assert json.loads((tmp_path / f"{name}-out" / "output.json").read_text())["generate"]["mode"] == "in_place"
        rows[name] = st.parse(tmp_path / name, "kernel", tmp_path / name / "data", generation=True)["files"]
    assert sorted(rows["a"]) == sorted(rows["b"]) and len(rows["a"]) == 10   # 8 training files, 2 evaluation files
    renamed = {n: (r["renames"], dict(r.get("failed") or {})) for n, r in rows["b"].items() if r["renames"]}
    assert renamed == {"train/img_0_of_8.hdf5": (1, {"unlink": 1})}
    assert not any(r["renames"] or r.get("failed") for r in rows["a"].values())


def test_the_data_write_mutant_leaves_its_file_in_the_data_folder(dataset, tmp_path):
    r = run(tmp_path, 2, tiny(dataset / "data", train=True, **VARIED), env={"H5DLIO_MUTATE": "data-write"})
    stray = dataset / "data" / "train" / "h5dlio-mutant.tmp"
    try:
        assert r.rc == 0, r.proc.stderr
        assert stray.read_bytes() == b"x"
    finally:
        stray.unlink(missing_ok=True)  # this test's own file: the module's dataset stays as generated


def _ckpt(tmp: Path, name: str, mutant: str | None) -> Path:
    sets = {**tiny(tmp / "data", **{"generate-data": True, "train": True, "epochs": 1}),
            "data-folder": str(tmp / name / "data"), "checkpoint": True, "checkpoint-folder": str(tmp / name / "ckpt"),
            "checkpoint-after-epoch": 1, "epochs-between-checkpoints": 1, "model-size": 4096,
            "layer-parameters": "[17, 100]"}
    r = run(tmp, 2, sets, name=f"{name}-out", env={"H5DLIO_MUTATE": mutant} if mutant else None)
    assert r.rc == 0, r.proc.stderr
    return tmp / name / "ckpt"


def test_the_checkpoint_folder_mutants(tmp_path):
    base = {p.name: p.stat().st_size for p in _ckpt(tmp_path, "base", None).iterdir()}
    stray = {p.name: p.stat().st_size for p in _ckpt(tmp_path, "stray", "ckpt-stray").iterdir()}
    short = {p.name: p.stat().st_size for p in _ckpt(tmp_path, "short", "ckpt-short").iterdir()}
    assert base and stray == {**base, "h5dlio-mutant.stray": 1}
    assert short.keys() == base.keys() and sum(base.values()) - sum(short.values()) == 1
    # ckpt-split and ckpt-fsync leave the same files (their divergence is in the calls: DFTracer's to see)
    assert {p.name: p.stat().st_size for p in _ckpt(tmp_path, "split", "ckpt-split").iterdir()} == base
    assert json.loads((tmp_path / "split-out" / "output.json").read_text())["mutant"] == "ckpt-split"
