"""Reliability of the harness (issue 7): `python -m harness run` against a fake reference DLIO (a venv whose
bin/dlio_benchmark is a small script) and the real kernel: bad options and workloads exit 2, failures,
Ctrl-C and timeouts are recorded, kill the launch and resume, the manifest is written atomically."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability import REPO, SLACK, Job, assert_nothing_left, concurrently, mount_tmpfs, proc, survivors, umount
from test_dlio_probe import LINEAGES

FAKE_DLIO = r'''#!{python}
"""A stand-in for dlio_benchmark: behaviour per step from {ctl}/<generate|train> (ok, fail, fail-once, sleep)."""
import json, os, sys, time
from pathlib import Path
ctl = Path({ctl!r})
args = sys.argv[1:]
gen = "++workload.workflow.generate_data=True" in args
out = Path(next(a.split("=", 1)[1] for a in args if a.startswith("++workload.output.folder=")))
step = "generate" if gen else "train"
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
mode = (ctl / step).read_text().strip() if (ctl / step).exists() else "ok"
if mode == "sleep":
    print("fake dlio: sleeping", flush=True)
    time.sleep(300)
if mode == "fail" or (mode == "fail-once" and not (ctl / (step + ".failed")).exists()):
    (ctl / (step + ".failed")).touch()
    print(f"fake dlio: injected failure in {{step}} on rank {{rank}}", file=sys.stderr)
    sys.exit(3)
out.mkdir(parents=True, exist_ok=True)
if not gen and rank == "0":
    (out / "per_epoch_stats.json").write_text(json.dumps({{"1": {{"duration": 0.5}}}}))
    (out / "summary.json").write_text(json.dumps({{"metric": {{"train_au_mean_percentage": 90.0}}}}))
'''

FAKE_PY = """#!/bin/sh
case "$*" in *"import dlio_benchmark"*) echo "{pkg}"; exit 0;; *harness/probe.py*) echo '{probe}'; exit 0;; esac
exec {python} "$@"
"""

FAKE_BASE = """model: fake
framework: pytorch
workflow: {generate_data: false, train: true, checkpoint: true}
dataset: {data_folder: data/fake, format: npz, num_files_train: 168, num_samples_per_file: 1,
          record_length: 146600628}
reader: {data_loader: pytorch, batch_size: 2, read_threads: 1, file_shuffle: seed, sample_shuffle: seed}
train: {epochs: 5, computation_time: 0.323}
"""

FAKE_WORKLOAD = """base: fake_base
overlay:
  dataset: {format: hdf5, keep_files: true}
  workflow: {checkpoint: false}
default_scale: tiny
scales:
  tiny:
    dataset: {num_files_train: 8, record_length: 65536}
    train: {epochs: 1, computation_time: 0.0}
"""


class Fake:
    """A fake reference DLIO venv (bin/dlio_benchmark a script, bin/python answering the config-dir probe), a
    workload over it, and how to run `python -m harness run` on them."""

    def __init__(self, tmp: Path, runs: Path | None = None):
        self.root = root = tmp / "fake"
        self.venv, self.ctl, self.workload = root / "venv", root / "ctl", tmp / "fakewl.yaml"
        self.runs = runs or tmp / "runs"
        (root / "venv" / "bin").mkdir(parents=True)
        self.ctl.mkdir()
        pkg = root / "pkg"
        (pkg / "configs" / "workload").mkdir(parents=True)
        (pkg / "configs" / "workload" / "fake_base.yaml").write_text(FAKE_BASE)
        dlio = root / "venv" / "bin" / "dlio_benchmark"
        dlio.write_text(FAKE_DLIO.format(python=sys.executable, ctl=str(self.ctl)))
        py = root / "venv" / "bin" / "python"
        # the probe's answer: DLIO 2.0.0's behaviour (tests/test_dlio_probe.py LINEAGES)
        probe = json.dumps({**LINEAGES["2.0.0"], "how": {}, "unknown": {}})
        py.write_text(FAKE_PY.format(pkg=pkg, python=sys.executable, probe=probe))
        for f in (dlio, py):
            f.chmod(0o755)
        self.workload.write_text(FAKE_WORKLOAD)

    def argv(self, *extra: str, workload: str | None = None, runs: Path | None = None) -> list[str]:
        a = [sys.executable, "-m", "harness", "run", "--dlio-venv", str(self.venv), "--runs-dir",
             str(runs or self.runs), "--profiles", "timing", "--ranks", "2", "--timeout", "120"]
        if "--resume" not in extra:
            a += ["--workload", workload or str(self.workload)]
        return a + list(extra)

    def harness(self, *extra: str, workload: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*extra, workload=workload), capture_output=True, text=True,
                              timeout=timeout * SLACK, cwd=REPO)


@pytest.fixture
def fake(tmp_path) -> Fake:
    return Fake(tmp_path)


def _run_dir(f) -> Path:
    dirs = [d for d in f.runs.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _wl(tmp_path: Path, text: str | bytes, name: str = "bad.yaml") -> str:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


HARNESS_BAD = [
    # (id, extra argv, workload text (None: the good fake one), words)
    ("--ranks 0", ["--ranks", "0"], None, ["RANKS=0 (--ranks)", "must be at least 1"]),
    ("--ranks -2", ["--ranks", "-2"], None, ["RANKS=-2 (--ranks)", "must be at least 1"]),
    ("--ranks two", ["--ranks", "two"], None, ["RANKS=two (--ranks)", "not a whole number"]),
    ("--repeat 0", ["--repeat", "0"], None, ["REPEAT=0 (--repeat)", "must be at least 1"]),
    ("--repeat x", ["--repeat", "x"], None, ["REPEAT=x (--repeat)", "not a whole number"]),
    ("--profiles bogus", ["--profiles", "timing,bogus"], None, ["PROFILES=timing,bogus (--profiles)", "bogus"]),
    ("--profiles empty", ["--profiles", ","], None, ["PROFILES=, (--profiles)", "empty list"]),
    ("--darshan-prefix not an install", ["--darshan-prefix", "/nonexistent/darshan"], None,
     ["DARSHAN_PREFIX=/nonexistent/darshan (--darshan-prefix)", "libdarshan.so"]),
    ("--timeout 0", ["--timeout", "0"], None, ["--timeout", "positive"]),
    ("--timeout -5", ["--timeout", "-5"], None, ["--timeout", "positive"]),
    ("--timeout nan", ["--timeout", "nan"], None, ["--timeout", "positive"]),
    ("--timeout inf", ["--timeout", "inf"], None, ["--timeout", "positive"]),
    ("--timeout word", ["--timeout", "soon"], None, ["argument --timeout"]),
    ("--launcher bogus", ["--launcher", "pbs"], None, ["argument --launcher", "invalid choice"]),
    ("unknown option", ["--frobnicate"], None, ["unrecognized arguments", "--frobnicate"]),
    ("--kernel-set without =", ["--kernel-set", "epochs"], None, ["--kernel-set", "KEY=VALUE"]),
    ("--rank-env without =", ["--rank-env", "LD_PRELOAD"], None, ["--rank-env", "KEY=VALUE"]),
    ("--rank-env not a variable name", ["--rank-env", "A-B=1"], None, ["--rank-env 'A-B=1'", "KEY=VALUE"]),
    ("--kernel-set bad value", ["--kernel-set", "epochs=many"], None, ["refused by the kernel", "'epochs'", "many"]),
    ("--kernel-set unknown key", ["--kernel-set", "batch-sise=2"], None, ["'batch-sise'", "'batch-size'"]),
    ("--dlio-venv missing", ["--dlio-venv", "/nonexistent/venv"], None, ["/nonexistent/venv", "dlio_benchmark"]),
    ("--scale unknown", ["--scale", "huge"], None, ["SCALE=huge", "tiny"]),
    ("more ranks than samples", ["--ranks", "64"], None, ["refused by the kernel", "64 ranks"]),
    ("a shape DLIO 2.0.0 crashes on", ["--ranks", "3"], None,
     ["RANKS", "DLIO 2.0.0 cannot run this at 3 ranks", "8 training samples", "rank 2", "IndexError",
      "A rank count that divides 8"]),
    ("workload unknown name", [], "@nonexistent", ["WORKLOAD=nonexistent", "known:"]),
    ("workload missing file", [], "@/nonexistent/w.yaml", ["/nonexistent/w.yaml", "no such file"]),
    ("workload not a workload", [], "@/etc/passwd", ["top level must be a mapping"]),
    ("workload bad YAML", [], "base: [fake_base\n", ["bad YAML"]),
    ("workload bad UTF-8", [], b"base: \xff\xfe\n", ["cannot read"]),
    ("workload empty", [], "", ["top level must be a mapping"]),
    ("workload a list", [], "- base\n", ["top level must be a mapping"]),
    ("workload unknown key", [], FAKE_WORKLOAD + "extra: 1\n", ["unknown keys", "extra"]),
    ("workload no base", [], "scales: {tiny: {}}\n", ["no 'base'"]),
    ("workload unknown base", [], FAKE_WORKLOAD.replace("base: fake_base", "base: nope"),
     ["base 'nope'", "installed DLIO"]),
    ("overlay a list", [], "base: fake_base\noverlay: [1, 2]\nscales: {tiny: {}}\n",
     ["overlay must be a mapping", "list"]),
    ("scales not a mapping", [], "base: fake_base\nscales: [tiny]\n", ["'scales' must be a mapping"]),
    ("scale a number", [], "base: fake_base\nscales: {tiny: 5}\n", ["scales.tiny must be a mapping"]),
    ("default_scale a list", [], "base: fake_base\ndefault_scale: [1]\nscales: {tiny: {}}\n", ["default_scale"]),
    ("kernel: unknown key", [], FAKE_WORKLOAD + "    h5dlio: {batch-sise: 2}\n",
     ["refused by the kernel", "'h5dlio.batch-sise'"]),
    ("kernel: unknown DLIO key", [], FAKE_WORKLOAD.replace("{num_files_train: 8,", "{num_files_trian: 8,"),
     ["refused by the kernel", "'dataset.num_files_trian'"]),
    ("kernel: wrong type", [], FAKE_WORKLOAD.replace("epochs: 1,", "epochs: many,"),
     ["refused by the kernel", "'epochs'", "many"]),
    ("kernel: negative size", [], FAKE_WORKLOAD.replace("record_length: 65536", "record_length: -65536"),
     ["refused by the kernel", "'record-length'", "out of range"]),
    ("kernel: zero batch", [], FAKE_WORKLOAD + "    reader: {batch_size: 0}\n", ["'batch-size'", "out of range"]),
    ("kernel: batch larger than the dataset", [], FAKE_WORKLOAD + "    reader: {batch_size: 1000}\n",
     ["refused by the kernel", "'batch-size'", "1000"]),
    ("kernel: 64-bit overflow", [],
     FAKE_WORKLOAD.replace("record_length: 65536", "record_length: 99999999999999999999"),
     ["'record-length'", "out of range"]),
    ("kernel: 32-bit overflow", [], FAKE_WORKLOAD.replace("{num_files_train: 8,", "{num_files_train: 4294967296,"),
     ["'num-files-train'", "out of range"]),
    ("kernel: tf + pytorch loader", [], FAKE_WORKLOAD + "    framework: tensorflow\n", ["'framework'", "tensorflow"]),
    ("resume: no directory", ["--resume", "/nonexistent/run"], None, ["--resume", "no manifest.json"]),
    ("resume: manifest not JSON", ["--resume", "@run:{not json"], None, ["manifest.json is not valid JSON"]),
    ("resume: manifest a list", ["--resume", "@run:[]"], None, ["not a run manifest"]),
    ("resume: manifest incomplete", ["--resume", '@run:{"steps": {}}'], None, ["manifest.json lacks", "workload"]),
]


@pytest.fixture(scope="module")
def harness_refusals(tmp_path_factory) -> dict:
    """Every bad harness invocation of the table, with the fake DLIO, each with its own runs folder."""
    root = tmp_path_factory.mktemp("harness-bad-input")
    f = Fake(root)
    jobs, runs = {}, {}
    for i, (case, extra, workload, _) in enumerate(HARNESS_BAD):
        d = root / f"case{i}"
        d.mkdir()
        extra = list(extra)
        for k, x in enumerate(extra):
            if x.startswith("@run:"):  # a run directory holding this manifest text
                (d / "oldrun").mkdir()
                (d / "oldrun" / "manifest.json").write_text(x[5:])
                extra[k] = str(d / "oldrun")
        wl = None
        if isinstance(workload, str) and workload.startswith("@"):
            wl = workload[1:]
        elif workload is not None:
            wl = _wl(d, workload)
        runs[case] = d / "runs"
        jobs[case] = proc(f.argv(*extra, workload=wl, runs=runs[case]), cwd=REPO)
    results = concurrently(jobs)
    return {k: (results[k], runs[k]) for k in jobs}


@pytest.mark.slow
@pytest.mark.parametrize("case,extra,workload,words", HARNESS_BAD, ids=[c[0] for c in HARNESS_BAD])
def test_harness_bad_options_and_workloads_exit_2(harness_refusals, case, extra, workload, words):
    p, runs = harness_refusals[case]
    assert p.returncode == 2, f"exit {p.returncode}: {p.stdout[-500:]} {p.stderr[-1500:]}"
    assert "Traceback" not in p.stderr, p.stderr
    assert re.search(r"(harness: error: |python -m harness run: error: )", p.stderr), p.stderr
    for w in words:
        assert w in p.stderr, f"{w!r} not in {p.stderr[-1500:]!r}"
    assert not runs.exists() or not any(runs.iterdir()), "bad input must not create a run directory"


@pytest.mark.slow
def test_harness_records_a_failed_run_keeps_it_and_resumes(tmp_path, fake):
    """A reference-side failure: the run is 'failed' (exit 1), the failing step's rc and message are recorded, every
    other step's outputs are kept; --resume reruns only what did not succeed and completes."""
    (fake.ctl / "train").write_text("fail-once")
    p = fake.harness()
    assert p.returncode == 1, p.stdout + p.stderr
    rd = _run_dir(fake)
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "failed" and m["failed_steps"] == ["dlio.timing"]
    st = m["steps"]["dlio.timing"]
    assert st["status"] == "failed" and st["rc"] == 3 and "injected failure in train" in st["detail"]
    assert all(m["steps"][s]["status"] == "ok" for s in ("dlio.generate", "kernel.generate", "kernel.timing"))
    assert (rd / "kernel" / "timing" / "out" / "output.json").exists()
    assert json.loads((rd / "tables" / "timing.json").read_text())["kernel"], "what was collected is kept"
    started = {k: v["started"] for k, v in m["steps"].items() if v["status"] == "ok"}
    p = fake.harness("--resume", str(rd))
    assert p.returncode == 0, p.stdout + p.stderr
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "complete" and m["failed_steps"] == [] and m["collect_errors"] == {}
    assert {k: m["steps"][k]["started"] for k in started} == started, "finished steps are not rerun"
    assert "done earlier" in p.stdout


def test_harness_records_a_kernel_fault(tmp_path, fake):
    """The kernel side failing at run time (a dataset name it cannot find: exit 2 from every training launch) is
    recorded with the kernel's own message; nothing of the job is left running."""
    p = fake.harness("--kernel-set", "records-dataset-name=nope")
    assert p.returncode == 1, p.stdout + p.stderr
    m = json.loads((_run_dir(fake) / "manifest.json").read_text())
    st = m["steps"]["kernel.timing"]
    assert m["status"] == "failed" and st["rc"] == 2, (st["rc"], st["detail"])
    assert "nope" in st["detail"] and re.search(r"h5dlio: rank \d: error: reader process \d: ", st["detail"]), st
    assert_nothing_left(str(tmp_path))


@pytest.mark.slow
def test_harness_ctrl_c_kills_the_launch_and_resumes(tmp_path, fake):
    """SIGINT to the harness (Ctrl-C) while a launch runs: the launch's whole process group is killed, the manifest
    says 'interrupted', the exit status is 130; --resume then completes the run."""
    (fake.ctl / "generate").write_text("sleep")
    job = Job(fake.argv(), cwd=REPO)
    job.wait_for("dlio.generate ...", timeout=120)
    time.sleep(1.0)
    assert survivors(str(fake.ctl.parent)), "the fake launch should be running"
    t0 = time.time()
    os.kill(job.p.pid, signal.SIGINT)
    assert job.finish(timeout=30) == 130, job.stderr
    assert time.time() - t0 < 15 * SLACK
    assert_nothing_left(str(fake.root))
    rd = _run_dir(fake)
    m = json.loads((rd / "manifest.json").read_text())
    assert m["status"] == "interrupted" and "--resume" in job.stdout
    (fake.ctl / "generate").write_text("ok")
    p = fake.harness("--resume", str(rd))
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads((rd / "manifest.json").read_text())["status"] == "complete"


def test_harness_sigterm_kills_the_launch_and_resumes(tmp_path, fake):
    """SIGTERM to the harness (a batch system's cancel, `kill`) while a launch runs: as Ctrl-C, the launch's whole
    process group is killed (mpirun runs in a session of its own: a signal to the harness alone never reaches it),
    the manifest says 'interrupted', the exit status is 143; --resume completes the run. Without the harness's
    handler the fake launch outlives it (the control, measured: assert_nothing_left names the survivors)."""
    (fake.ctl / "generate").write_text("sleep")
    job = Job(fake.argv(), cwd=REPO)
    job.wait_for("dlio.generate ...", timeout=120)
    time.sleep(1.0)
    assert survivors(str(fake.ctl.parent)), "the fake launch should be running"
    os.kill(job.p.pid, signal.SIGTERM)
    try:
        assert job.finish(timeout=30) == 143, job.stderr
        assert_nothing_left(str(fake.root))
    finally:  # a harness that failed this must not leave the fake mpirun behind for the rest of the suite
        for left in survivors(str(fake.root)):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(left.split()[1].rstrip(":")), signal.SIGKILL)
    rd = _run_dir(fake)
    assert json.loads((rd / "manifest.json").read_text())["status"] == "interrupted" and "--resume" in job.stdout
    (fake.ctl / "generate").write_text("ok")
    p = fake.harness("--resume", str(rd))
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads((rd / "manifest.json").read_text())["status"] == "complete"


@pytest.mark.slow
def test_harness_timeout_kills_a_hanging_launch(tmp_path, fake):
    (fake.ctl / "train").write_text("sleep")
    t0 = time.time()
    p = subprocess.run([x if x != "120" else "3" for x in fake.argv()], capture_output=True, text=True, timeout=120,
                       cwd=REPO)
    assert p.returncode == 1, p.stdout + p.stderr
    assert time.time() - t0 < 90 * SLACK
    m = json.loads((_run_dir(fake) / "manifest.json").read_text())
    st = m["steps"]["dlio.timing"]
    assert st["status"] == "timeout" and "killed after 3 s" in st["detail"]
    assert_nothing_left(str(fake.root))


def test_harness_manifest_write_is_atomic(tmp_path):
    """The manifest (and every table) is replaced whole or not at all: a write that fails midway (full file system)
    leaves the previous manifest and no temporary file."""
    from harness.run import RunDir
    where = tmp_path / "fs"
    if not mount_tmpfs(where, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        rd = RunDir(where)
        rd.save({"status": "running", "steps": {}})
        before = rd.manifest_path.read_text()
        with pytest.raises(OSError):
            rd.save({"status": "complete", "steps": {f"s{i}": "x" * 100 for i in range(2000)}})
        assert rd.manifest_path.read_text() == before
        assert sorted(p.name for p in where.iterdir()) == ["manifest.json"]
    finally:
        umount(where)
