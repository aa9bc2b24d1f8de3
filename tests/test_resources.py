"""A run that would not fit this machine is refused before anything is launched or written, with the numbers
(harness/resources.py): both sides' datasets against the free disk, DLIO's ranks against the available memory."""
from __future__ import annotations

from pathlib import Path

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
