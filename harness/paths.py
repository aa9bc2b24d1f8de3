"""The repository's paths, in one leaf module every part of the harness may import (it imports nothing of ours)."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE_CONFIGS = REPO / "reference-configs"
# `make build` links build/h5dlio to the kernel of the HDF5 in use; H5DLIO_KERNEL_BIN names another (make validate
# VOL=async: the kernel built against the thread-safe HDF5, build/.vol-kernel)
KERNEL_BIN = Path(os.environ.get("H5DLIO_KERNEL_BIN") or REPO / "build" / "h5dlio")
PROBE = REPO / "harness" / "probe.py"         # run with the reference DLIO's Python (harness.dlio.probe)


def runs_home() -> Path:
    """Where runs and sizing folders go by default: a checkout's runs/; an installed copy (`make install`: these
    packages in <prefix>/share/h5dlio, no Makefile beside them, often read-only) the runs/ of the folder it is run
    from."""
    return REPO / "runs" if (REPO / "Makefile").exists() else Path.cwd() / "runs"
