"""Reliability, bad input to the kernel (issue 7): every bad --set, config file and argument exits 2 with exactly
one error line naming the key, file or argument at fault, under mpirun with 2 ranks, before any I/O."""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from kernel import BIN, MPIRUN, tiny
from reliability import SLACK, assert_clean_refusal, bounded_memory, concurrently, kernel_argv, proc

BASE_YAML = ("workflow: {train: true}\nreader: {batch_size: 2, read_threads: 0}\n"
             "dataset: {data_folder: DATA, num_files_train: 8, num_samples_per_file: 4}\n")

# (id, --set overrides on a valid tiny workload, words the one error line must hold)
KERNEL_BAD_SETS = [
    # wrong types
    ("int: word", {"epochs": "many"}, ["'epochs'", "'many'", "integer"]),
    ("int: fraction", {"batch-size": "2.5"}, ["'batch-size'", "2.5"]),
    ("int: hex", {"num-files-train": "0x10"}, ["'num-files-train'", "0x10"]),
    ("int: empty", {"epochs": ""}, ["'epochs'"]),
    ("bool: word", {"train": "maybe"}, ["'train'", "boolean"]),
    ("bool: number", {"chunking": "2"}, ["'chunking'", "boolean"]),
    ("number: word", {"computation-time": "fast"}, ["'computation-time'", "number"]),
    ("number: nan", {"computation-time": "nan"}, ["'computation-time'", "nan"]),
    ("number: inf", {"eval-time": "inf"}, ["'eval-time'", "inf"]),
    ("number: 1e400", {"preprocess-time": "1e400"}, ["'preprocess-time'"]),
    ("enum: shuffle", {"shuffle": "sometimes"}, ["'shuffle'", "off|seed|random"]),
    ("enum: compression", {"compression": "lz4"}, ["'compression'", "lz4"]),
    ("enum: ordering", {"ordering": "random"}, ["'ordering'", "dlio|h5bench"]),
    ("string: empty", {"file-prefix": ""}, ["'file-prefix'", "empty"]),
    ("string: too long", {"file-prefix": "p" * 300}, ["'file-prefix'", "longer than 255"]),
    # negative and zero sizes
    ("record-length 0", {"record-length": 0}, ["'record-length'", "out of range"]),
    ("record-length -1", {"record-length": -1}, ["'record-length'", "out of range"]),
    ("samples per file 0", {"num-samples-per-file": 0}, ["'num-samples-per-file'", "out of range"]),
    ("batch 0", {"batch-size": 0}, ["'batch-size'", "out of range"]),
    ("batch -7", {"batch-size": -7}, ["'batch-size'", "out of range"]),
    ("eval batch 0", {"batch-size-eval": 0}, ["'batch-size-eval'", "out of range"]),
    ("epochs 0", {"epochs": 0}, ["'epochs'", "out of range"]),
    ("read threads -1", {"read-threads": -1}, ["'read-threads'", "out of range"]),
    ("files -8", {"num-files-train": -8}, ["'num-files-train'", "out of range"]),
    ("train files 0", {"num-files-train": 0}, ["'num-files-train'", "at least one file"]),
    ("chunk size 0", {"chunk-size": 0}, ["'chunk-size'", "out of range"]),
    ("generation buffer 0", {"generation-buffer-size": 0}, ["'generation-buffer-size'", "out of range"]),
    ("compute -0.5", {"computation-time": -0.5}, ["'computation-time'", "out of range"]),
    ("steps 0", {"total-training-steps": 0}, ["'total-training-steps'"]),
    ("steps -2", {"total-training-steps": -2}, ["'total-training-steps'", "out of range"]),
    ("gzip level 10", {"compression-level": 10}, ["'compression-level'", "out of range"]),
    ("au 1.5", {"au": 1.5}, ["'au'", "out of range"]),
    # batch larger than the dataset, more ranks than samples, steps beyond the dataset
    ("batch > a rank's share", {"batch-size": 17}, ["'batch-size'", "17", "16 samples"]),
    ("eval batch > share", {"evaluation": True, "batch-size-eval": 100}, ["'batch-size-eval'", "100"]),
    ("more ranks than samples", {"num-files-train": 1, "num-samples-per-file": 1, "batch-size": 1},
     ["'num-files-train'", "2 ranks"]),
    ("more ranks than eval samples", {"evaluation": True, "num-files-eval": 1, "num-samples-per-file": 1,
                                      "batch-size": 1, "batch-size-eval": 1}, ["'num-files-eval'", "2 ranks"]),
    ("steps beyond the dataset", {"total-training-steps": 1000}, ["'total-training-steps'", "1000"]),
    # unknown keys
    ("unknown key", {"batch-sise": 2}, ["'batch-sise'", "'batch-size'"]),
    ("unknown h5dlio key", {"h5dlio.nope": 1}, ["'h5dlio.nope'"]),
    ("unknown dotted key", {"dataset.record_lenght": 1}, ["'dataset.record_lenght'", "'dataset.record_length'"]),
    # 32- and 64-bit overflow
    ("files 2^31", {"num-files-train": 2147483648}, ["'num-files-train'", "out of range"]),
    ("batch 2^32", {"batch-size": 4294967296}, ["'batch-size'", "out of range"]),
    ("epochs 2^31", {"epochs": 2147483648}, ["'epochs'", "out of range"]),
    ("seed 2^32", {"random-seed": 4294967296}, ["'random-seed'", "out of range"]),
    ("seed -1", {"random-seed": -1}, ["'random-seed'", "out of range"]),
    ("int64 overflow", {"record-length": "99999999999999999999"}, ["'record-length'", "out of range"]),
    ("int64 + 1", {"record-length": "9223372036854775808"}, ["'record-length'", "out of range"]),
    ("1e19", {"record-length": "1e19"}, ["'record-length'", "out of range"]),
    ("file size overflow", {"generate-data": True, "record-length": 4611686018427387904,
                            "num-samples-per-file": 1000}, ["'num-samples-per-file'", "64-bit file size"]),
    ("sample count overflow", {"num-files-train": 1000000000, "num-samples-per-file": 1000000000},
     ["'num-samples-per-file'", "overflows"]),
    ("10^9 files with drawn sizes", {"num-files-train": 1000000000, "record-length-stdev": 100},
     ["'num-files-train'", "10^8 files"]),
    ("steps 2^63-1", {"total-training-steps": 9223372036854775807}, ["'total-training-steps'"]),
    # names that would leave the data folder or collide
    ("prefix with ..", {"file-prefix": "../../escape"}, ["'file-prefix'", "plain name"]),
    ("train folder ..", {"train-data-folder": ".."}, ["'train-data-folder'", "plain name"]),
    ("valid folder a/b", {"valid-data-folder": "a/b"}, ["'valid-data-folder'", "plain name"]),
    ("train == valid", {"evaluation": True, "valid-data-folder": "train"}, ["'valid-data-folder'", "share"]),
    ("records == labels", {"generate-data": True, "labels-dataset-name": "records"}, ["'labels-dataset-name'"]),
    ("path too long", {"data-folder": "/tmp/" + "a" * 4050}, ["'data-folder'", "4095"]),
    # combinations
    ("nothing to do", {"train": False}, ["nothing to do"]),
    ("evaluation without training", {"train": False, "evaluation": True}, ["'evaluation'", "train=true"]),
    ("gzip without chunking", {"generate-data": True, "compression": "gzip"}, ["'compression'", "chunking"]),
    ("Log VFD with MPI-IO", {"log-vfd": True, "collective-meta": True}, ["'log-vfd'"]),
    ("not a DLIO release", {"dlio-version": "banana"}, ["'dlio-version'", "banana"]),
    ("tensorflow with data_loader pytorch", {"framework": "tensorflow"}, ["'framework'", "Imcompatible"]),
    # the data and output folders
    ("missing dataset", {"data-folder": "/nonexistent/h5dlio"}, ["'data-folder'", "/nonexistent/h5dlio/train"]),
    ("output folder is a file", {"output-folder": "/etc/hostname"}, ["'output-folder'", "/etc/hostname"]),
]

# (id, config file name, content, words)
KERNEL_BAD_FILES = [
    ("yaml: syntax", "w.yaml", "dataset:\n  record_length: [1, 2\n", ["w.yaml:", "syntax error"]),
    ("yaml: tab indent", "w.yaml", "dataset:\n\trecord_length: 5\n", ["w.yaml:", "syntax error"]),
    ("yaml: duplicate key", "w.yaml", BASE_YAML + "train: {epochs: 1}\ntrain: {epochs: 2}\n",
     ["duplicate key 'train'"]),
    ("yaml: alias", "w.yaml", "a: &x 1\nb: *x\n", ["aliases"]),
    ("yaml: two documents", "w.yaml", "train: {epochs: 1}\n---\ntrain: {epochs: 2}\n", ["more than one document"]),
    ("yaml: a list", "w.yaml", "- 1\n- 2\n", ["mapping"]),
    ("yaml: empty", "w.yaml", "", ["empty"]),
    ("yaml: NUL byte", "w.yaml", "train:\0 {}\n", ["NUL"]),
    ("yaml: bad UTF-8", "w.yaml", b"train: {epochs: \xff\xfe}\n", ["w.yaml:", "UTF-8"]),
    ("yaml: 10^5 levels", "w.yaml", "a: " + "[" * 100000 + "]" * 100000 + "\n", ["nested deeper than 64"]),
    ("yaml: unknown nested key", "w.yaml", "reader:\n  batch_sise: 2\n",
     ["w.yaml:", "'reader.batch_sise'", "'reader.batch_size'"]),
    ("yaml: map for a scalar", "w.yaml", "reader:\n  batch_size: {a: 1}\n", ["'reader.batch_size'", "scalar"]),
    ("yaml: wrong type", "w.yaml", "train:\n  epochs: many\n", ["w.yaml:2", "'epochs'", "many"]),
    ("yaml: format npz", "w.yaml", "dataset:\n  format: npz\n", ["'dataset.format'", "npz", "hdf5"]),
    ("yaml: checkpointing of 2.0.1", "w.yaml", "workflow:\n  checkpoint: true\nh5dlio:\n  dlio_version: 2.0.1\n",
     ["'checkpoint'", "2.0.1", "not emulated"]),
    ("yaml: bad distribution", "w.yaml", "train:\n  computation_time: {mean: 1, kind: normal}\n",
     ["'train.computation_time.kind'"]),
    ("yaml: 32-bit overflow", "w.yaml", "dataset:\n  num_files_train: 4294967296\n",
     ["'num-files-train'", "out of range"]),
    ("json: syntax", "c.json", '{"train": true,, "epochs": 1}', ["c.json:1", "syntax error"]),
    ("json: unterminated", "c.json", '{"train": true', ["c.json:", "syntax error"]),
    ("json: unknown key", "c.json", '{"train": true,\n "epoch": 3}', ["c.json:2", "'epoch'", "'epochs'"]),
    ("json: list value", "c.json", '{"epochs": [1, 2]}', ["'epochs'", "scalar"]),
    ("json: null", "c.json", '{"train": true, "epochs": null}', ["'epochs'", "null"]),
    ("json: benchmarks not a list", "c.json", '{"benchmarks": {"benchmark": "dlio"}}', ["'benchmarks'", "list"]),
    ("json: no dlio benchmark", "c.json", '{"benchmarks": [{"benchmark": "write"}]}', ["dlio"]),
    ("json: two dlio benchmarks", "c.json", '{"benchmarks": [{"benchmark": "dlio", "configuration": {}}, '
     '{"benchmark": "dlio", "configuration": {}}]}', ["more than one dlio"]),
    ("json: configuration not an object", "c.json",
     '{"benchmarks": [{"benchmark": "dlio", "configuration": [1]}]}', ["configuration must be an object"]),
    ("json: top-level array", "c.json", "[1, 2]", ["mapping"]),
    ("json: negative size", "c.json", '{"train": true, "record-length": "-4096"}', ["'record-length'", "range"]),
]

# (id, argv after BIN, words)
KERNEL_BAD_ARGS = [
    ("--set without =", ["--set", "epochs"], ["key=value"]),
    ("--set without key", ["--set", "=3"], ["key=value"]),
    ("unknown argument", ["--frobnicate"], ["'--frobnicate'"]),
    ("--config without value", ["--config"], ["--config needs a value"]),
    ("--config twice", ["--config", "a.yaml", "--config", "b.yaml"], ["--config given twice"]),
    ("missing config file", ["--config", "/nonexistent/w.yaml"], ["/nonexistent/w.yaml", "cannot open"]),
    ("config is a directory", ["--config", "/tmp"], ["/tmp", "read error"]),
    ("config is a binary", ["--config", "/bin/true"], ["/bin/true", "NUL"]),
    ("--ranks without --dry-run", ["--ranks", "2"], ["--ranks", "--dry-run"]),
    ("--ranks 0", ["--dry-run", "--ranks", "0"], ["--ranks"]),
]


@pytest.fixture(scope="module")
def kernel_refusals(tmp_path_factory) -> dict:
    """Every bad kernel input of the three tables, each launched under mpirun with 2 ranks in its own folder."""
    root = tmp_path_factory.mktemp("kernel-bad-input")
    jobs, dirs = {}, {}
    for i, (case, sets, _) in enumerate(KERNEL_BAD_SETS):
        d = dirs[("set", case)] = root / f"set{i}"
        d.mkdir()
        jobs[("set", case)] = proc(kernel_argv(2, {"output-folder": str(d / "out"),
                                                    **tiny(d / "data", train=True, **{"read-threads": 0}), **sets}))
    for i, (case, name, text, _) in enumerate(KERNEL_BAD_FILES):
        d = dirs[("file", case)] = root / f"file{i}"
        d.mkdir()
        body = text.replace("DATA", str(d / "data")) if isinstance(text, str) else text
        (d / name).write_bytes(body.encode() if isinstance(body, str) else body)
        jobs[("file", case)] = proc(kernel_argv(2, {"output-folder": str(d / "out")}, ["--config", str(d / name)]),
                                     cwd=d)
    for i, (case, args, _) in enumerate(KERNEL_BAD_ARGS):
        d = dirs[("args", case)] = root / f"args{i}"
        d.mkdir()
        jobs[("args", case)] = proc(list(MPIRUN) + ["-np", "2", BIN] + args, cwd=d)
    results = concurrently(jobs)
    return {k: (results[k], dirs[k]) for k in jobs}


@pytest.mark.slow
@pytest.mark.parametrize("case,sets,words", KERNEL_BAD_SETS, ids=[c[0] for c in KERNEL_BAD_SETS])
def test_kernel_bad_set_exits_2(kernel_refusals, case, sets, words):
    proc, d = kernel_refusals[("set", case)]
    assert_clean_refusal(proc, words)
    assert not (d / "data").exists() and not (d / "out" / "output.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("case,name,text,words", KERNEL_BAD_FILES, ids=[c[0] for c in KERNEL_BAD_FILES])
def test_kernel_bad_config_file_exits_2(kernel_refusals, case, name, text, words):
    assert_clean_refusal(kernel_refusals[("file", case)][0], words)


@pytest.mark.slow
@pytest.mark.parametrize("case,args,words", KERNEL_BAD_ARGS, ids=[c[0] for c in KERNEL_BAD_ARGS])
def test_kernel_bad_arguments_exit_2(kernel_refusals, case, args, words):
    assert_clean_refusal(kernel_refusals[("args", case)][0], words)


def test_kernel_dry_run_validates_for_the_given_rank_count(tmp_path):
    """--dry-run --ranks N (what the harness uses before launching) judges the rank count like a real N-rank run."""
    sets = tiny(tmp_path / "data", train=True, **{"num-files-train": 2, "num-samples-per-file": 2, "batch-size": 1})
    ok = subprocess.run(kernel_argv(1, sets, ["--dry-run", "--ranks", "4"]), capture_output=True, text=True,
                        timeout=60)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(kernel_argv(1, sets, ["--dry-run", "--ranks", "5"]), capture_output=True, text=True,
                         timeout=60)
    assert_clean_refusal(bad, ["'num-files-train'", "5 ranks"])


def test_huge_but_valid_counts_cost_nothing_before_validation(tmp_path):
    """10^9 files (valid) used to allocate 16 GB of per-file dimensions before the config was even validated."""
    sets = tiny(tmp_path / "data", train=True, **{"num-files-train": 1000000000, "batch-size": 7})
    t0 = time.time()
    p = subprocess.run(kernel_argv(2, sets, ["--dry-run"]), capture_output=True, text=True, timeout=60 * SLACK,
                       preexec_fn=bounded_memory)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["num-files-train"] == 1000000000
    assert time.time() - t0 < 20 * SLACK
