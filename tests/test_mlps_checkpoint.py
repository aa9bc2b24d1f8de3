"""MLPerf Storage v3.0's checkpoint path (issue 27 item 3): DLIO 3.x (f6796ed) where mlpstorage_py imports, as in
MLPerf's own environment, streams every checkpoint file through mlpstorage's StreamingCheckpointing
(mlcommons/storage mlpstorage_py/checkpointing/streaming_checkpoint.py, storage_writers/file_writer.py,
storage_readers/file_reader.py): kernel entry 3.0.2+mlpstorage (bench/src/ckpt.c mlps_save, mlps_load), the analytic
model's checkpoint_io_v3(..., "mlpstorage_streaming"), and the harness choosing that entry by what the probe sees.
The live run against the real DLIO with mlpstorage_py importable is the `dlio`/`slow` test at the end (skipped, with
the reason, unless H5DLIO_DLIO3_MLPS_VENV names such a venv: mlpstorage is not installed here or in CI)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from profiles.dftracer.checks import checkpoint_io_mismatches
from tests import kernel
from validate import model

DATA = Path(__file__).parent / "data" / "dlio3-checkpoint"
REC = json.loads((DATA / "llama3_8b_v3-tiny.json").read_text())  # the workload (SimpleStreaming's recorded run)
MLPS = DATA / "llama3_8b_v3_mlps-tiny.json"  # the real DLIO 3.x + mlpstorage_py's DFTracer table (recorded)
ENTRY = "3.0.2+mlpstorage"
MIB = 2**20


def run(tmp: Path, ranks: int = 2, name: str = "out", **sets) -> kernel.Run:
    cfg = tmp / "workload.yaml"
    cfg.write_text(yaml.safe_dump(REC["workload"]))
    return kernel.run(tmp, ranks, {"dlio-version": ENTRY, "checkpoint-folder": str(tmp / "ckpt"),
                                   "time-between-checkpoints": 0, **sets}, config=cfg, name=name)


def test_the_model_reads_back_as_mlpstorage_does():
    """StreamingCheckpointing.load by hand: blocks of ceil(size / 4) bytes (at most 4 readers), each pread in pieces
    of at most read_chunk_size = 4 x 32 MiB; one posix_fadvise(RANDOM) per reader's open and one DONTNEED per read."""
    # 1.2 GB: 4 blocks of 300,000,000 = 2 x 134,217,728 + 31,564,544 each
    assert model.mlps_reads(1_200_000_000) == {"opens": 4, "closes": 4, "reads": 12, "read_bytes": 1_200_000_000,
                                               "read_sizes": {"134217728": 8, "31564544": 4}, "fadvises": 16}
    # 5 bytes: blocks of 2 -> [0, 2), [2, 4), [4, 5): three readers, not four
    assert model.mlps_reads(5) == {"opens": 3, "closes": 3, "reads": 3, "read_bytes": 5,
                                   "read_sizes": {"2": 2, "1": 1}, "fadvises": 6}
    # 47,091,072 (the tiny optimizer shard): 4 x 11,772,768
    assert model.mlps_reads(47_091_072)["read_sizes"] == {"11772768": 4}
    io = model.checkpoint_io_v3(REC["workload"], 2, "mlpstorage_streaming")
    opt = io["global_epoch1_step1/zero_pp_rank_0_mp_rank_0_optim_states.pt"]
    # written: 32 MiB + 13,536,640 (2 writes, 2 DONTNEED); read back: 4 opens + 4 preads (8 fadvises); 1 fsync
    assert opt == {"bytes": 47_091_072, "writes": 2, "write_sizes": {"33554432": 1, "13536640": 1}, "fsyncs": 1,
                   "read_bytes": 47_091_072, "opens": 5, "closes": 5, "reads": 4, "read_sizes": {"11772768": 4},
                   "fadvises": 10, "seeks": 0}
    with pytest.raises(model.UnknownRelease):
        model.checkpoint_io_v3(REC["workload"], 2, "s3dlio")


def test_a_wrong_read_size_or_count_fails_the_model_check():
    """counts.checkpoint_io's comparison (checkpoint_io_mismatches) on the model's own rows passes, and fails,
    naming the file and field, with one read size planted wrong, one read too many, or one fadvise missing."""
    want = model.checkpoint_io_v3(REC["workload"], 2, "mlpstorage_streaming")
    got = json.loads(json.dumps(want))
    for row in got.values():
        row["calls"] = {"open": row["opens"]}  # a traced row carries more than the model's fields
    assert checkpoint_io_mismatches(want, got) == []
    victim = "global_epoch1_step2/zero_pp_rank_1_mp_rank_0_optim_states.pt"
    for field, value in (("read_sizes", {"11772768": 3, "11772767": 1}), ("reads", 5), ("fadvises", 9)):
        bad = json.loads(json.dumps(got))
        bad[victim][field] = value
        out = checkpoint_io_mismatches(want, bad)
        assert len(out) == 1 and out[0].startswith(victim) and f"'{field}'" in out[0], out


def test_the_recorded_dlio_run_is_the_model():
    """The real DLIO 3.x with mlpstorage_py importable (its DFTracer per-file table, recorded from `make validate
    WORKLOAD=llama3_8b_v3 DLIO_VENV=<that venv>`) made, per file, exactly the model's calls and sizes."""
    if not MLPS.exists():
        pytest.skip(f"{MLPS.name} not recorded")
    rec = json.loads(MLPS.read_text())
    got = {n: r for n, r in rec["checkpoints"].items() if r["opens"]}
    want = model.checkpoint_io_v3(rec["workload"], rec["ranks"], "mlpstorage_streaming")
    assert len(want) == 8 and checkpoint_io_mismatches(want, got) == []


def strace_calls(traces: list[Path], root: str) -> dict[str, dict]:
    """Per checkpoint file (the kernel's partial name mapped to its final one): opens, write and read sizes, fsyncs,
    fadvise advice, lseeks, from `strace -ff -y` output (one file per thread: no interleaved lines)."""
    calls: dict[str, dict] = {}
    pat = re.compile(r"^(\w+)\((?:AT_FDCWD<[^>]*>, \"([^\"]+)\"|\d+<([^>]*)>)(.*)\)\s+= (-?\d+)")
    for line in (x for t in traces for x in t.read_text().splitlines()):
        mt = pat.match(line)
        path = mt and (mt.group(2) or mt.group(3))
        if not path or not path.startswith(root):
            continue
        name = re.sub(r"\.partial\.\d+$", "", path[len(root):])
        row = calls.setdefault(name, {"opens": 0, "write_sizes": Counter(), "read_sizes": Counter(), "fsyncs": 0,
                                      "fadvise": Counter(), "lseeks": 0})
        call, args = mt.group(1), mt.group(4)
        if call == "openat":
            row["opens"] += 1
        elif call == "write":
            row["write_sizes"][args.rsplit(", ", 1)[1]] += 1
        elif call == "pread64":
            row["read_sizes"][args.split(", ")[-2]] += 1
        elif call == "fsync":
            row["fsyncs"] += 1
        elif call == "fadvise64":
            row["fadvise"][args.rsplit(", ", 1)[1]] += 1
        elif call == "lseek":
            row["lseeks"] += 1
    return calls


def test_kernel_system_calls_per_file_are_mlpstorages(tmp_path):
    """One rank under strace: per checkpoint file the opens, write sizes, fsync, pread sizes (from 4 reader threads),
    DONTNEED and RANDOM advice the model says (from mlpstorage's source), no lseek; the bytes are random (no zero
    page, no repeated 32 MiB chunk), not SimpleStreamingCheckpointing's zeros."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace not installed: the per-file system calls were not compared")
    cfg = tmp_path / "workload.yaml"
    cfg.write_text(yaml.safe_dump(REC["workload"]))
    trace = tmp_path / "trace"
    argv = [strace, "-ff", "-y", "-qq", "-o", str(trace), "-e", "trace=openat,write,pread64,fsync,fadvise64,lseek",
            kernel.BIN, "--config", str(cfg), "--set", f"dlio-version={ENTRY}", "--set",
            f"checkpoint-folder={tmp_path / 'ckpt'}", "--set", f"output-folder={tmp_path / 'out'}", "--set",
            "time-between-checkpoints=0"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    threads = sorted(tmp_path.glob("trace.*"))
    calls = strace_calls(threads, str(tmp_path / "ckpt") + "/")
    assert len(threads) >= 5  # the rank and its 4 reader threads
    want = model.checkpoint_io_v3(REC["workload"], 1, "mlpstorage_streaming")
    assert set(calls) == set(want) and len(want) == 4
    for n, w in want.items():
        c = calls[n]
        assert c["opens"] == w["opens"] and c["fsyncs"] == 1 and c["lseeks"] == 0, (n, c)
        assert dict(c["write_sizes"]) == w["write_sizes"] and dict(c["read_sizes"]) == w["read_sizes"], (n, c)
        assert dict(c["fadvise"]) == {"POSIX_FADV_DONTNEED": w["writes"] + w["reads"],
                                      "POSIX_FADV_RANDOM": w["opens"] - 1}, (n, c)
    opt = tmp_path / "ckpt" / "global_epoch1_step1" / "zero_pp_rank_0_mp_rank_0_optim_states.pt"
    with open(opt, "rb") as f:
        first, second = f.read(32 * MIB), f.read()
    assert first.count(0) < len(first) // 128 and first[:len(second)] != second  # random, chunks not repeated


def test_kernel_files_and_events_follow_the_model(tmp_path):
    """Two ranks: the files and sizes of the model, every file read back by its 4 readers (the output's load events:
    bytes and pread calls as the model's)."""
    r = run(tmp_path)
    assert r.rc == 0, r.proc.stderr
    want = model.checkpoint_io_v3(REC["workload"], 2, "mlpstorage_streaming")
    assert {p.relative_to(tmp_path / "ckpt").as_posix(): p.stat().st_size
            for p in (tmp_path / "ckpt").rglob("*") if p.is_file()} == {n: w["bytes"] for n, w in want.items()}
    ck = r.summary()["checkpoint"]
    loads = [e for e in ck["checkpoints"] if e["kind"] == "load"]
    assert sum(e["bytes"] for e in loads) == sum(w["read_bytes"] for w in want.values())
    assert sum(e["reads"] for e in loads) == sum(w["reads"] for w in want.values())


def test_a_short_checkpoint_fails_the_read_back(tmp_path):
    """A checkpoint file one byte short: the reader of its last block gets 0 bytes (mlpstorage raises RuntimeError
    "Reader returned 0 bytes"): the kernel's read-only launch fails naming the file; nothing is deleted."""
    assert run(tmp_path, **{"num-checkpoints-read": 0}).rc == 0
    victim = tmp_path / "ckpt" / "global_epoch1_step1" / "zero_pp_rank_1_mp_rank_0_optim_states.pt"
    size = victim.stat().st_size
    os.truncate(victim, size - 1)
    r = run(tmp_path, name="read", **{"num-checkpoints-write": 0, "num-checkpoints-read": 1})
    assert r.rc not in (0, 2) and "ended early" in r.proc.stderr and victim.name in r.proc.stderr
    assert victim.stat().st_size == size - 1


@pytest.mark.slow
def test_checkpoint_memory_is_bounded(tmp_path):
    """A 1.2 GB checkpoint file written and read back by one rank with 4 reader threads: the kernel's peak resident
    memory stays near one read chunk (128 MiB, shared by the threads) plus one 32 MiB write chunk, far below the
    file (DLIO's own peak: 4 x 128 MiB of reads in flight plus 4 x 32 MiB of shared buffers)."""
    cfg = tmp_path / "workload.yaml"
    cfg.write_text(yaml.safe_dump(REC["workload"]))
    sets = {"dlio-version": ENTRY, "checkpoint-folder": tmp_path / "ckpt", "output-folder": tmp_path / "out",
            "hidden-size": 1024, "ffn-hidden-size": 3584, "vocab-size": 32064, "data-parallelism": 5,
            "num-checkpoints-write": 1, "num-checkpoints-read": 1, "time-between-checkpoints": 0}
    argv = [kernel.BIN, "--config", str(cfg)] + [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    wrap = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run([sys.executable, "-c", wrap, *argv], capture_output=True, text=True, timeout=600)
    rc, peak_kib = (int(x) for x in p.stdout.split()[-2:])
    assert rc == 0, p.stderr
    biggest = max(q.stat().st_size for q in (tmp_path / "ckpt").rglob("*.pt"))
    assert biggest > 1_000_000_000
    assert peak_kib * 1024 < 260 * MIB, (peak_kib, biggest)


def test_the_harness_picks_the_mlpstorage_entry_by_behaviour():
    """A DLIO 3.x whose _get_streaming() builds mlpstorage's StreamingCheckpointing matches entry 3.0.2+mlpstorage
    alone; the plain 3.x matches 3.0.2; a stream the kernel does not know matches none, the rule named. The local
    label is never another version's nearest entry."""
    from test_dlio_probe import LINEAGES, found

    import harness.dlio as hdlio
    known = hdlio.kernel_entries(Path(kernel.BIN))
    assert hdlio.match(found(LINEAGES["f6796ed"]), known)["entry"] == "3.0.2"
    rules = {**LINEAGES["f6796ed"]["rules"], "checkpoint_stream": "mlpstorage_streaming"}
    lin = {**LINEAGES["f6796ed"], "rules": rules}
    assert hdlio.match(found(lin), known)["entry"] == ENTRY
    lin["rules"]["checkpoint_stream"] = "SomeOtherStream"
    m = hdlio.match(found(lin), known)
    assert m["entry"] is None and "checkpoint_stream probed SomeOtherStream" in hdlio.refusal("DLIO 3.x", m)
    for v, entry in (("3.0.3", "3.0.2"), ("3.0.2+local", "3.0.2"), (ENTRY, ENTRY)):
        p = subprocess.run([kernel.BIN, "--dlio-entries", "--set", f"dlio-version={v}"], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0 and json.loads(p.stdout)["selected"]["entry"] == entry, (v, p.stderr)


# ---------------------------------------------------------------- side by side with the real DLIO 3.x + mlpstorage

def mlps_venv() -> Path | None:
    env = os.environ.get("H5DLIO_DLIO3_MLPS_VENV")
    return Path(env) if env else None


@pytest.mark.dlio
@pytest.mark.slow
def test_tiny_llama3_8b_v3_passes_against_dlio3_with_mlpstorage(tmp_path):
    """make validate WORKLOAD=llama3_8b_v3 against DLIO 3.x with mlpstorage_py importable: PASS, entry
    3.0.2+mlpstorage, per file equal on both sides and each side as the model; the kernel with its first checkpoint
    write split in two (H5DLIO_MUTATE=ckpt-split, the DLIO side reused) fails exactly dftracer.checkpoints and
    counts.checkpoint_io.kernel."""
    venv = mlps_venv()
    if venv is None:
        pytest.skip("H5DLIO_DLIO3_MLPS_VENV unset: no venv of DLIO 3.x (f6796ed) where mlpstorage_py imports (MLPerf "
                    "Storage v3.0's own environment; neither CI nor `make dlio-venv-spec` installs mlpstorage)")
    import test_validation_e2e as e2e
    rc, ref = e2e.harness(tmp_path / "ref", workload="llama3_8b_v3", venv=str(venv))
    assert rc == 0
    vrc, v = e2e.validate(ref)
    st = {c["name"]: c["status"] for c in v["checks"]}
    assert vrc == 0 and v["verdict"] == "pass", {n: s for n, s in st.items() if s == "fail"}
    assert json.loads((ref / "manifest.json").read_text())["dlio"]["entry"] == ENTRY
    for name in ("counts.checkpoints", "dftracer.checkpoints", "counts.checkpoint_io.dlio",
                 "counts.checkpoint_io.kernel"):
        assert st[name] == "pass", name
    rc, neg = e2e.harness(tmp_path / "neg", "--reuse-dlio", str(ref), workload="llama3_8b_v3", venv=str(venv),
                          env={"H5DLIO_MUTATE": "ckpt-split"})
    assert rc == 0
    vrc, v = e2e.validate(neg)
    assert vrc == 1 and {c["name"] for c in v["checks"] if c["status"] == "fail"} == {
        "dftracer.checkpoints", "counts.checkpoint_io.kernel"}
