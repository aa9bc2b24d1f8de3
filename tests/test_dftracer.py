"""DFTracer profile parser on real traces of the tiny unet3d workload (2 ranks, 28 files x 1 sample of ~1 MiB
drawn with record_length_stdev, batch 7, 4 reader processes, 2 epochs): DLIO 2.0.0 (pydftracer 1.0.2) and the
kernel under libdftracer_preload.so. Expected values come from the workload, not from the parser."""
from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from profiles import dftracer
from profiles.compare import cosine_similarity
from validate import model

DATA = Path(__file__).parent / "data" / "dftracer"
RUN = "/tmp/hruns/unet3d-tiny-20261122-010153"  # where the traces were captured (file names inside them)
CFG = {"dataset": {"num_files_train": 28, "num_samples_per_file": 1, "record_length": 1048576,
                   "record_length_stdev": 488832}}
META_BYTES_PER_OPEN = 8 + 48 + 48 + 512 + 512 + 544 + 328 + 512  # superblock probe + OHDR/LHEAP/BTREE/OHDR reads


def load(side: str) -> list[dict]:
    events = [e for p in sorted(DATA.glob(f"{side}-*.pfw.gz")) for e in dftracer.read_events(p)]
    return dftracer.normalize(events, side)


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_data_file_reads_match_the_workload(side):
    t = dftracer.file_table(load(side), Path(RUN) / side / "data")
    files = {k: v for k, v in t["files"].items() if v["opens"]}
    dims = model.file_dims(CFG)
    assert sorted(files) == [f"train/img_{i:02d}_of_28.hdf5" for i in range(28)]
    # 2 epochs x 28 samples over 2 ranks: every file opened, read and closed twice
    assert {v["opens"] for v in files.values()} == {2} and {v["closes"] for v in files.values()} == {2}
    assert sum(v["reads"] for v in files.values()) == 56 * 9
    for i in range(28):
        f = files[f"train/img_{i:02d}_of_28.hdf5"]
        d1, d2 = dims[i]
        assert f["bytes"] == 2 * (META_BYTES_PER_OPEN + d1 * d2)
        assert f["accesses"][f"2048+{d1 * d2}"] == 2  # the sample itself, at DLIO's data offset


def test_both_sides_touch_the_data_files_identically():
    a = dftracer.file_table(load("dlio"), Path(RUN) / "dlio" / "data")["files"]
    b = dftracer.file_table(load("kernel"), Path(RUN) / "kernel" / "data")["files"]
    for name in (n for n in a if a[n]["opens"]):
        for field in ("opens", "closes", "reads", "bytes", "accesses"):
            assert a[name][field] == b[name][field], (name, field)
    # the differences are file-status probes and directory listing, which the validator classifies
    extra = Counter(c for n in a for c in a[n]["calls"]) - Counter(c for n in b for c in b[n]["calls"])
    assert set(extra) == {"fstat", "lstat", "opendir"}


@pytest.mark.parametrize("side", ["dlio", "kernel"])
def test_ranks_and_timeline(side):
    ev = load(side)
    assert {e["rank"] for e in ev if e["cat"] == "POSIX"} == {0, 1}
    lanes = dftracer.timeline(ev)["lanes"]
    kinds = Counter((lane["rank"], x["kind"]) for lane in lanes for x in lane["events"])
    for r in (0, 1):
        assert kinds[(r, "open")] == 28 and kinds[(r, "read")] == 28 * 9
        assert kinds[(r, "compute")] == 4  # 2 steps (14 samples / batch 7) x 2 epochs
    assert min(x["t"] for lane in lanes for x in lane["events"]) >= 0  # relative to the first event traced


def test_features_and_similarity():
    fa = dftracer.features(load("dlio"), Path(RUN) / "dlio" / "data")
    fb = dftracer.features(load("kernel"), Path(RUN) / "kernel" / "data")
    for f in (fa, fb):
        assert f["files"] == 28 and f["xfer_min"] == 8 and f["xfer_max"] == max(a * b for a, b in model.file_dims(CFG))
    assert fa["bytes"] == fb["bytes"]
    assert cosine_similarity(fa, fa) == pytest.approx(1.0)
    s = cosine_similarity(fa, fb)
    assert 0.5 < s < 1.0  # same pattern, different speed
    assert cosine_similarity(fa, {**fb, "files": 1, "bytes": 1}) < s


def test_truncated_and_gzipped_traces(tmp_path):
    lines = gzip.open(DATA / "kernel-trace-h5dlio-22074-preload.pfw.gz", "rt").read().splitlines()
    cut = tmp_path / "cut.pfw"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + '\n{"id":"9","name":"pre')  # a crash mid-write
    ev = dftracer.read_events(cut)
    assert 0 < len(ev) < len(lines) and all("name" in e for e in ev)
