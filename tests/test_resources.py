"""A run that would not fit this machine is refused before anything is launched or written, with the numbers
(harness/resources.py): both sides' datasets against the free disk, DLIO's ranks against the available memory."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import resources
from harness.workload import deep_merge

CFG = {"dataset": {"num_files_train": 148000, "num_samples_per_file": 1, "record_length": 4096}}


def test_need_counts_both_sides_datasets_and_dlio_ranks():
    n = resources.need(CFG, 16)
    per_file = 4096 + resources.FILE_OVERHEAD
    assert n.files == 148000 and n.dataset_bytes == 148000 * per_file and n.disk_bytes == 2 * 148000 * per_file
    assert n.memory_bytes == 16 * resources.DLIO_RANK_RSS
    assert resources.need({"workflow": {"train": False, "checkpoint": True}}, 2).disk_bytes == 0


def test_refuses_a_dataset_larger_than_the_free_disk_naming_the_numbers():
    n = resources.need(CFG, 2)
    why = resources.refuse("unet3d", "field", n, 2, Path("/r"), free=n.disk_bytes, avail=10**12)
    assert why and "unet3d (field)" in why and "3.6 GB" in why and "/r has 3.6 GB free" in why and "RUNS_DIR" in why
    assert resources.refuse("unet3d", "field", n, 2, Path("/r"), free=2 * n.disk_bytes, avail=10**12) is None


def test_refuses_more_dlio_ranks_than_memory_holds_unless_dlio_is_reused():
    n = resources.need(CFG, 64)
    avail = 24 * 10**9
    why = resources.refuse("unet3d", "field", n, 64, Path("/r"), free=10**13, avail=avail)
    assert why and "64 DLIO ranks" in why and "at most 19 ranks fit here" in why
    assert resources.refuse("unet3d", "field", n, 64, Path("/r"), free=10**13, avail=avail, dlio_launches=False) \
        is None
    assert resources.refuse("unet3d", "field", resources.need(CFG, 16), 16, Path("/r"), free=10**13,
                            avail=avail) is None


def test_dlio_ranks_with_8_readers_count_each_reader_beyond_4():
    """imagenet_files and resnet50 run 8 PyTorch readers per rank: 1.1 GB + 4 x 110 MB = 1.54 GB per rank (by hand),
    so 24 GB available (21.6 GB under the headroom) holds 14 such ranks (21.6 / 1.54 = 14.03), not 19."""
    avail = 24 * 10**9
    eight = {**CFG, "reader": {"read_threads": 8}}
    assert resources.need(eight, 2).memory_bytes == 2 * 1_540_000_000
    why = resources.refuse("imagenet_files", "field", resources.need(eight, 15), 15, Path("/r"), free=10**14,
                           avail=avail)
    assert why and "15 DLIO ranks peak at ~23.1 GB (1.5 GB each, with its reader processes)" in why \
        and "at most 14 ranks fit here" in why
    assert resources.refuse("imagenet_files", "field", resources.need(eight, 14), 14, Path("/r"), free=10**14,
                            avail=avail) is None
    # the control: the same ranks with 4 readers (or DLIO's default 1, or none) fit as before
    for readers in (4, 1, 0):
        cfg = {**CFG, "reader": {"read_threads": readers}}
        assert resources.need(cfg, 16).memory_bytes == 16 * 1_100_000_000
        assert resources.refuse("unet3d", "field", resources.need(cfg, 16), 16, Path("/r"), free=10**14,
                                avail=avail) is None


def test_no_reading_no_refusal():
    n = resources.need(CFG, 64)
    assert resources.refuse("unet3d", "field", n, 64, Path("/r"), free=None, avail=None) is None


def field_config(name: str, scale: str = "field") -> dict:
    """A reference config's overlay merged with one of its field scales (DLIO's base adds no dataset key these need
    but num_samples_per_file, which is 1 in every base concerned and resources.need's default)."""
    import yaml

    from harness.workload import REFERENCE_CONFIGS, deep_merge
    ref = yaml.safe_load((REFERENCE_CONFIGS / f"{name}.yaml").read_text())
    return deep_merge(ref.get("overlay") or {}, ref["scales"][scale])


# (workload, files per side, disk for both sides in GB rounded as gb() prints it): computed by hand from the field
# shapes docs/scale.md states, not from the code: files x (samples x bytes + 8 KiB) x 2 sides.
FIELD_SHAPES = [
    ("unet3d", 148_000, "3.6 GB"),                        # 148,000 x (4,096 + 8,192) x 2 = 3.64 GB
    ("cosmoflow", 524_288, "12.9 GB"),                    # 524,288 x 12,288 x 2 = 12.88 GB
    ("resnet50", 1_024, "167.9 GB"),                      # 1,024 x (1,251 x 65,536 + 8,192) x 2 = 167.92 GB
    ("imagenet_files", 1_281_024, "31.5 GB"),             # 1,281,024 x 12,288 x 2 = 31.48 GB
]
# imagenet_files' growth-curve scales (docs/scale.md): the field shape at fewer files, by hand as above.
SMALLER_FIELD_SHAPES = [
    ("imagenet_files", "field-10k", 10_240, "251.7 MB"),  # 10,240 x 12,288 x 2 = 251.66 MB
    ("imagenet_files", "field-100k", 102_400, "2.5 GB"),  # 102,400 x 12,288 x 2 = 2.52 GB
]
ALL_FIELD_SHAPES = [(name, "field", files, disk) for name, files, disk in FIELD_SHAPES] + SMALLER_FIELD_SHAPES


@pytest.mark.parametrize("name,scale,files,disk", ALL_FIELD_SHAPES, ids=[f"{s[0]}-{s[1]}" for s in ALL_FIELD_SHAPES])
def test_every_field_scale_is_refused_with_its_numbers_where_the_disk_is_too_small(name, scale, files, disk):
    n = resources.need(field_config(name, scale), 2)
    assert n.files == files
    tight = int(n.disk_bytes / resources.HEADROOM) - 1  # one byte short of what fits under the headroom
    why = resources.refuse(name, scale, n, 2, Path("/r"), free=tight, avail=10**12)
    assert why and f"{name} ({scale})" in why and f"its datasets need {disk}" in why and f"{files} files" in why
    assert resources.refuse(name, scale, n, 2, Path("/r"), free=tight + 2, avail=10**12) is None


# Each field workload's reader processes per rank, from its DLIO base (configs/workload/<base>.yaml of DLIO 2.0.0:
# unet3d_h100 and cosmoflow_h100 4, resnet50_h100 8, imagenet_files' base resnet50_h100 8), and how many of its ranks
# 24 GB available holds under the 90% headroom, by hand: 21.6 / 1.1 = 19.6 with 4 readers, 21.6 / 1.54 = 14.03 with 8.
FIELD_READERS = {"unet3d": (4, 19), "cosmoflow": (4, 19), "resnet50": (8, 14), "imagenet_files": (8, 14)}


def test_field_ranks_refused_against_memory_for_every_field_workload():
    for name, _, _ in FIELD_SHAPES:
        readers, fit = FIELD_READERS[name]
        cfg = deep_merge({"reader": {"read_threads": readers}}, field_config(name))  # the base's readers
        why = resources.refuse(name, "field", resources.need(cfg, fit + 1), fit + 1, Path("/r"), free=10**14,
                               avail=24 * 10**9)
        assert why and f"{fit + 1} DLIO ranks" in why and f"at most {fit} ranks fit here" in why, name
        assert resources.refuse(name, "field", resources.need(cfg, fit), fit, Path("/r"), free=10**14,
                                avail=24 * 10**9) is None, name


def test_dlio_reader_processes_counted_by_how_dlio_starts_them():
    """A rank's memory grows with its reader processes beyond the 4 DLIO_RANK_RSS was measured with: forked readers
    (DLIO 2.0.0) at 110 MB each, spawned ones (DLIO 3.x: fresh interpreters) whole, every one. Expected values by
    hand: 32 forked: 1.1 GB + 28 x 110 MB = 4.18 GB; 32 spawned: 1.1 GB + 32 x 500 MB = 17.1 GB."""
    def cfg(readers, ctx=None):
        return {**CFG, "reader": {"read_threads": readers, **({"multiprocessing_context": ctx} if ctx else {})}}
    assert resources.need(cfg(4), 2).memory_bytes == 2 * 1_100_000_000
    assert resources.need(cfg(0), 2).memory_bytes == 2 * 1_100_000_000
    assert resources.need(cfg(32), 2).rank_bytes == 4_180_000_000
    assert resources.need(cfg(32), 2, "fork").memory_bytes == 8_360_000_000
    assert resources.need(cfg(32), 2, "spawn").rank_bytes == 17_100_000_000
    assert resources.need(cfg(4), 1, "spawn").rank_bytes == 3_100_000_000
    # the workload's own multiprocessing_context wins over the reference DLIO's default
    assert resources.need(cfg(32, "fork"), 1, "spawn").rank_bytes == 4_180_000_000
    assert resources.need(cfg(32, "spawn"), 1, "fork").rank_bytes == 17_100_000_000


def test_32_reader_ranks_refused_with_their_numbers():
    """24 GB available (21.6 GB under the 90% headroom): 2 ranks of 32 forked readers (8.36 GB) fit, 8 (33.4 GB) do
    not, at most 5 (21.6 / 4.18); 2 ranks of 32 spawned readers (34.2 GB) do not, 1 (17.1 GB) does."""
    c = {**CFG, "reader": {"read_threads": 32}}
    avail = 24 * 10**9
    assert resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 2, "fork"), 2, Path("/r"), free=10**14,
                            avail=avail) is None
    why = resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 8, "fork"), 8, Path("/r"), free=10**14,
                           avail=avail)
    assert why and "8 DLIO ranks peak at ~33.4 GB (4.2 GB each, with its reader processes)" in why \
        and "at most 5 ranks fit here" in why, why
    why = resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 2, "spawn"), 2, Path("/r"), free=10**14,
                           avail=avail)
    assert why and "2 DLIO ranks peak at ~34.2 GB (17.1 GB each" in why and "at most 1 ranks fit here" in why, why
    assert resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 1, "spawn"), 1, Path("/r"), free=10**14,
                            avail=avail) is None
