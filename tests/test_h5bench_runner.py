"""The kernel as h5bench's `dlio` benchmark (h5bench PR #124, the thesis kernel): the argv the runner builds from an
h5bench configuration file runs the kernel under its h5bench name, and the results land where h5bench expects them.

The argv is built here from the runner's documented rules, not by importing h5bench (PR #124 head a69307c,
src/h5bench.py): every `benchmarks` entry runs once, in order (run, 200-254); `directory` is required (validate_json,
161-175); each `configuration` key becomes `--key value` (997), the yes/no keys of its list (972-985) a bare `--key`
when "true" and nothing otherwise (989-991), `data-folder` is prefixed with the directory (993-995), then
`--output-data-folder <directory>/<id>` (999) where `<id>` is a folder the runner creates per entry (229-231); the
binary is `h5bench_dlio` (H5BENCH_DLIO, 37; run_dlio 1001-1007). The thesis kernel writes
`<output-data-folder>/<output-csv-name>.csv` (dlio/stats.c:436) with `metric, value, unit` rows (stats.c:442-449;
the row names of dlio/example_output.csv).
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN

H5BENCH_BIN = str(Path(BIN).resolve().parent / "h5bench_dlio")
# src/h5bench.py:972-985 at PR #124: the keys the runner passes as a bare flag (when "true") or not at all
YES_NO = ("generate-data", "train", "evaluation", "chunking", "keep-files", "compression", "shuffle",
          "seed-change-epoch", "collective-meta", "collective-data", "subfiling", "output-ranks-data")
# dlio/example_output.csv at PR #124: the header and the rows before the eval block (eval repeats them as "eval ...")
CSV_HEADER = ["metric", "value", "unit"]
CSV_ROWS = ["operation", "ranks", "read threads", "subfiling", "chunking", "collective meta", "collective data",
            "train total size", "train size per rank", "train emulated compute time per epoch",
            "train emulated compute time", "train metadata time per epoch", "train metadata time",
            "train raw read time per epoch", "train total raw read time", "train raw read rate per epoch",
            "train avg raw read rate", "train observed time per epoch", "train observed time",
            "train observed rate per epoch", "train avg observed rate",
            "train throughput samples per second per epoch", "train throughput avg samples per second",
            "train throughput stdev samples per second", "train io avg", "train io stdev"]


class RunnerRefusal(Exception):
    """What h5bench's runner refuses before running anything (it exits EX_DATAERR naming the property)."""


def runner_argv(setup: dict, entry: dict, run_id: str) -> list[str]:
    """The kernel's argv for one `benchmarks` entry, by the runner's rules (see the module docstring)."""
    for prop in ("mpi", "vol", "file-system", "directory", "benchmarks"):
        if prop not in setup:
            raise RunnerRefusal(prop)
    d = setup["directory"]
    argv = ["h5bench_dlio"]
    for key, value in entry["configuration"].items():
        if key in YES_NO:
            argv += [f"--{key}"] if value.lower() == "true" else []
        elif key == "data-folder":
            argv += [f"--{key}", f"{d}/{value}"]
        else:
            argv += [f"--{key}", value]
    return argv + ["--output-data-folder", f"{d}/{run_id}"]


def suite(directory: str | None) -> dict:
    """PR #124's samples/sync-dlio.json at a tiny size: generate, then train and evaluate (collective modes with one
    reader process, as shipped)."""
    common = {"keep-files": "true", "record-length": "4096", "num-files-train": "8", "num-files-eval": "2",
              "num-samples-per-file": "4", "data-folder": "data", "file-prefix": "img", "random-seed": "42",
              "train-data-folder": "train", "valid-data-folder": "valid", "records-dataset-name": "records",
              "labels-dataset-name": "labels", "output-csv-name": "output", "output-ranks-data": "true"}
    gen = {"generate-data": "true", "chunking": "false", "compression": "false", **common}
    train = {"train": "true", "evaluation": "true", "shuffle": "true", "seed-change-epoch": "true", **common,
             "batch-size": "2", "batch-size-eval": "1", "read-threads": "1", "preprocess-time": "0.0",
             "epochs": "2", "computation-time": "0.001", "eval-time": "0.001", "epochs-between-evals": "1",
             "collective-meta": "true", "collective-data": "true", "subfiling": "false"}
    s = {"mpi": {"command": "mpirun", "ranks": "2"}, "vol": {}, "file-system": {},
         "benchmarks": [{"benchmark": "dlio", "configuration": gen}, {"benchmark": "dlio", "configuration": train}]}
    if directory is not None:
        s["directory"] = directory
    return s


def _run(argv: list[str], cwd: Path, ranks: int | None = 2, timeout: float = 300) -> subprocess.CompletedProcess:
    launch = MPIRUN + ["-np", str(ranks)] if ranks else []
    return subprocess.run(launch + argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _csv(path: Path) -> list[list[str]]:
    with open(path) as f:
        return list(csv.reader(f, skipinitialspace=True))


def test_runner_argv_runs_the_suite_in_order(tmp_path):
    """Both entries of the suite, in order, as the runner launches them (2 ranks): the dataset under `directory`,
    each entry's CSV and JSON in its own output-data folder with h5bench's name and rows."""
    assert os.access(H5BENCH_BIN, os.X_OK), f"no h5bench_dlio next to {BIN}: `make build` installs it"
    setup = suite("storage")
    (tmp_path / "sync-dlio.json").write_text(json.dumps(setup))
    outs, errs = [], []
    for n, entry in enumerate(setup["benchmarks"]):
        run_id = f"entry{n}"
        (tmp_path / "storage" / run_id).mkdir(parents=True)  # the runner makes it before the launch
        argv = runner_argv(setup, entry, run_id)
        assert argv[0] == "h5bench_dlio"
        p = _run([H5BENCH_BIN] + argv[1:], tmp_path)
        assert p.returncode == 0, f"{argv}\n{p.stderr[-2000:]}"
        outs.append(tmp_path / "storage" / run_id)
        errs.append(p.stderr)
    # the generate entry wrote h5bench-named files under <directory>/<data-folder>, kept for the train entry
    assert sorted(f.name for f in (tmp_path / "storage" / "data" / "train").iterdir()) == \
        sorted(f"img_{i}_of_8.h5" for i in range(1, 9))
    assert len(list((tmp_path / "storage" / "data" / "valid").glob("img_*_of_2.h5"))) == 2
    for out in outs:
        rows = _csv(out / "output.csv")
        assert rows[0] == CSV_HEADER
        assert dict((r[0], r[1]) for r in rows[1:])["ranks"] == "2"
        assert (out / "output.json").exists() and (out / "output.ranks.csv").exists()
    rows = _csv(outs[1] / "output.csv")
    names = [r[0] for r in rows[1:]]
    missing = [r for r in CSV_ROWS + [r.replace("train ", "eval ", 1) for r in CSV_ROWS if r.startswith("train ")]
               if r not in names]
    assert not missing, f"rows of the thesis kernel's CSV missing: {missing}"
    value = {r[0]: r[1:] for r in rows[1:]}
    assert value["collective meta"][0] == "YES" and value["collective data"][0] == "YES"
    # the sample's reader process with collective I/O: each rank reads itself, said once on stderr and in the CSV
    notes = [line for line in errs[1].splitlines() if "'read-threads'" in line]
    assert len(notes) == 1 and "collective-data" in notes[0] and "read-threads 0" in notes[0], errs[1][-1500:]
    assert value["read threads"][0] == "0"
    # 2 epochs of 32 training samples of 64x64 bytes, read by 2 ranks: 16 samples x 4096 bytes per rank per epoch
    assert float(value["train size per rank"][0]) == pytest.approx(16 * 4096 / 2**20, abs=1e-3)
    assert json.loads((outs[1] / "output.json").read_text())["train"]["epochs"][1]["samples"] == 32


def test_entry_reads_a_suite_file_as_the_runner(tmp_path):
    """`--config FILE --entry N` resolves entry N the way the runner's argv does (data folder under `directory`)."""
    setup = suite("storage")
    (tmp_path / "sync-dlio.json").write_text(json.dumps(setup))
    for n, entry in enumerate(setup["benchmarks"], start=1):
        via_argv = _run([BIN, *runner_argv(setup, entry, "x")[1:], "--dry-run"], tmp_path, ranks=None)
        via_entry = _run([BIN, "--config", "sync-dlio.json", "--entry", str(n), "--output-data-folder", "storage/x",
                          "--dry-run"], tmp_path, ranks=None)
        assert via_argv.returncode == 0 and via_entry.returncode == 0, via_argv.stderr + via_entry.stderr
        a, b = json.loads(via_argv.stdout), json.loads(via_entry.stdout)
        assert a["data-folder"] == "storage/data" and a["output-folder"] == "storage/x"
        for k in ("config-source", "config-file"):
            a.pop(k), b.pop(k)
        assert a == b, {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}


def test_runner_refuses_a_suite_without_directory():
    with pytest.raises(RunnerRefusal, match="directory"):
        runner_argv(suite(None), suite(None)["benchmarks"][0], "x")


TWO_DLIO = suite("storage")
NO_DIR = suite(None)
# (id, argv after the binary, files to write, words the one error line must hold)
BAD = [
    ("unknown key", ["--num-files-trian", "8"], {}, ["'--num-files-trian'", "'--num-files-train'"]),
    ("yes/no key given maybe", ["--train", "maybe"], {}, ["'train'", "maybe"]),
    ("yes/no key given a number", ["--keep-files", "2"], {}, ["'keep-files'", "'2'"]),
    ("value missing at the end", ["--train", "--epochs"], {}, ["'epochs'", "needs a value"]),
    ("value missing before a key", ["--epochs", "--train"], {}, ["'epochs'", "needs a value"]),
    ("output-data-folder without a value", ["--train", "--output-data-folder"], {}, ["'output-data-folder'"]),
    ("drop-last false", ["--train", "--drop-last", "false"], {}, ["'drop-last'", "false"]),
    ("a DLIO path in runner form", ["--dataset.num_files_train", "8"], {}, ["'--dataset.num_files_train'"]),
    ("missing directory", ["--config", "s.json", "--entry", "1"], {"s.json": NO_DIR}, ["'directory'", "s.json"]),
    ("two dlio entries, no --entry", ["--config", "s.json"], {"s.json": TWO_DLIO}, ["more than one dlio", "--entry"]),
    ("--entry out of range", ["--config", "s.json", "--entry", "3"], {"s.json": TWO_DLIO}, ["--entry 3", "2 entries"]),
    ("--entry not a number", ["--config", "s.json", "--entry", "two"], {"s.json": TWO_DLIO}, ["--entry"]),
]


@pytest.mark.parametrize("argv,files,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_runner_input_exits_2_naming_the_key(tmp_path, argv, files, words):
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    p = _run([H5BENCH_BIN, *argv], tmp_path, timeout=60)
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr[-1500:]}"
    errors = [line for line in p.stderr.splitlines() if line.startswith("h5dlio: error:")]
    assert len(errors) == 1, p.stderr[-1500:]
    for w in words:
        assert w in errors[0], f"{w!r} not in {errors[0]!r}"
    assert not (tmp_path / "storage").exists() and not (tmp_path / "data").exists(), "bad input must do no I/O"
