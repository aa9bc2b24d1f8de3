"""The repository's paths, in one leaf module every part of the harness may import (it imports nothing of ours)."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE_CONFIGS = REPO / "reference-configs"
KERNEL_BIN = REPO / "build" / "h5dlio"        # `make build` links it to the kernel of the HDF5 in use
PROBE = REPO / "harness" / "probe.py"         # run with the reference DLIO's Python (harness.dlio.probe)
