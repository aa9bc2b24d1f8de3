"""A run that would not fit this machine is refused before anything is launched or written, with the numbers
(harness/resources.py): both sides' datasets against the free disk, DLIO's ranks against the available memory."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import resources

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


def test_no_reading_no_refusal():
    n = resources.need(CFG, 64)
    assert resources.refuse("unet3d", "field", n, 64, Path("/r"), free=None, avail=None) is None


def field_config(name: str) -> dict:
    """A reference config's overlay merged with its field scale (DLIO's base adds no dataset key these need but
    num_samples_per_file, which is 1 in every base concerned and resources.need's default)."""
    import yaml

    from harness.workload import REFERENCE_CONFIGS, deep_merge
    ref = yaml.safe_load((REFERENCE_CONFIGS / f"{name}.yaml").read_text())
    return deep_merge(ref.get("overlay") or {}, ref["scales"]["field"])


# (workload, files per side, disk for both sides in GB rounded as gb() prints it): computed by hand from the field
# shapes docs/scale.md states, not from the code: files x (samples x bytes + 8 KiB) x 2 sides.
FIELD_SHAPES = [
    ("unet3d", 148_000, "3.6 GB"),                        # 148,000 x (4,096 + 8,192) x 2 = 3.64 GB
    ("cosmoflow", 524_288, "12.9 GB"),                    # 524,288 x 12,288 x 2 = 12.88 GB
    ("resnet50", 1_024, "167.9 GB"),                      # 1,024 x (1,251 x 65,536 + 8,192) x 2 = 167.92 GB
    ("imagenet_files", 1_281_024, "31.5 GB"),             # 1,281,024 x 12,288 x 2 = 31.48 GB
]


@pytest.mark.parametrize("name,files,disk", FIELD_SHAPES, ids=[s[0] for s in FIELD_SHAPES])
def test_every_field_scale_is_refused_with_its_numbers_where_the_disk_is_too_small(name, files, disk):
    n = resources.need(field_config(name), 2)
    assert n.files == files
    tight = int(n.disk_bytes / resources.HEADROOM) - 1  # one byte short of what fits under the headroom
    why = resources.refuse(name, "field", n, 2, Path("/r"), free=tight, avail=10**12)
    assert why and f"{name} (field)" in why and f"its datasets need {disk}" in why and f"{files} files" in why
    assert resources.refuse(name, "field", n, 2, Path("/r"), free=tight + 2, avail=10**12) is None


def test_field_ranks_refused_against_memory_for_every_field_workload():
    """24 GB available holds 19 DLIO ranks of 1.1 GB under the 90% headroom (21.6 / 1.1): 20 are refused, 19 not."""
    for name, _, _ in FIELD_SHAPES:
        cfg = field_config(name)
        why = resources.refuse(name, "field", resources.need(cfg, 20), 20, Path("/r"), free=10**14, avail=24 * 10**9)
        assert why and "20 DLIO ranks" in why and "at most 19 ranks fit here" in why, name
        assert resources.refuse(name, "field", resources.need(cfg, 19), 19, Path("/r"), free=10**14,
                                avail=24 * 10**9) is None, name


def test_dlio_reader_processes_counted_by_how_dlio_starts_them():
    """A rank's memory grows with its reader processes beyond the 4 DLIO_RANK_RSS was measured with: forked readers
    (DLIO 2.0.0) at 60 MB each, spawned ones (DLIO 3.x: fresh interpreters) whole, every one. Expected values by hand:
    32 forked: 1.1 GB + 28 x 60 MB = 2.78 GB; 32 spawned: 1.1 GB + 32 x 500 MB = 17.1 GB."""
    def cfg(readers, ctx=None):
        return {**CFG, "reader": {"read_threads": readers, **({"multiprocessing_context": ctx} if ctx else {})}}
    assert resources.need(cfg(4), 2).memory_bytes == 2 * 1_100_000_000
    assert resources.need(cfg(0), 2).memory_bytes == 2 * 1_100_000_000
    assert resources.need(cfg(32), 2).rank_bytes == 2_780_000_000
    assert resources.need(cfg(32), 2, "fork").memory_bytes == 5_560_000_000
    assert resources.need(cfg(32), 2, "spawn").rank_bytes == 17_100_000_000
    assert resources.need(cfg(4), 1, "spawn").rank_bytes == 3_100_000_000
    # the workload's own multiprocessing_context wins over the reference DLIO's default
    assert resources.need(cfg(32, "fork"), 1, "spawn").rank_bytes == 2_780_000_000
    assert resources.need(cfg(32, "spawn"), 1, "fork").rank_bytes == 17_100_000_000


def test_32_reader_ranks_refused_with_their_numbers():
    """24 GB available (21.6 GB under the 90% headroom): 2 ranks of 32 forked readers (5.56 GB) fit, 8 (22.2 GB) do
    not, at most 7 (21.6 / 2.78); 2 ranks of 32 spawned readers (34.2 GB) do not, 1 (17.1 GB) does."""
    c = {**CFG, "reader": {"read_threads": 32}}
    avail = 24 * 10**9
    assert resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 2, "fork"), 2, Path("/r"), free=10**14,
                            avail=avail) is None
    why = resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 8, "fork"), 8, Path("/r"), free=10**14,
                           avail=avail)
    assert why and "8 DLIO ranks peak at ~22.2 GB (2.8 GB each, with its reader processes)" in why \
        and "at most 7 ranks fit here" in why, why
    why = resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 2, "spawn"), 2, Path("/r"), free=10**14,
                           avail=avail)
    assert why and "2 DLIO ranks peak at ~34.2 GB (17.1 GB each" in why and "at most 1 ranks fit here" in why, why
    assert resources.refuse("unet3d", "field-10k-rt32", resources.need(c, 1, "spawn"), 1, Path("/r"), free=10**14,
                            avail=avail) is None
