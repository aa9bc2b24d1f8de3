"""HDF5 Log VFD profile: records (LOC_IO | ALLOC flags) from each rank's stderr, split into per-open blocks.

The log is parsed with a regular expression over the whole stream, not line by line: with PyTorch DataLoader
workers (and any other process sharing a rank's stderr) records get glued to each other and to other output.
The only normalization is the one that differs by HDF5 version: the superblock probe (its reads and allocations,
e.g. 0-15/16-95 up to 1.14.2, 0-47/48-95 from 1.14.5) collapses into one token with its overall extent.

The package: records.py reads each rank's stderr into the tables (the harness's collect), checks.py compares them
(validate's checks); here the Profile and the names the callers take from `profiles.logvfd` (each imported from its
module when first asked for)."""
from __future__ import annotations

import json

from profiles import Deferred, Done, Launch, LaunchSpec, Profile, Shape, Wrapped, counted, exports, register

__all__ = ["RECORD_RE", "LogVFD", "check_counts", "check_logvfd", "compact", "normalize_block", "parse", "parse_dir",
           "rank_stderr_files", "rank_table", "record_table", "split_blocks"]
__getattr__ = exports(__name__, {".checks": ("check_counts", "check_logvfd"),
                                 ".records": ("RECORD_RE", "compact", "normalize_block", "parse", "parse_dir",
                                              "rank_stderr_files", "rank_table", "record_table", "split_blocks")})


@register
class LogVFD(Profile):
    """Training under the HDF5 Log VFD, each side reading the *other* side's dataset (which doubles as the
    cross-read check); with reader processes also in the ranks (logvfd-rt0), where DLIO's order is deterministic."""
    name = "logvfd"
    describes = "HDF5 reads of each file open, in order where DLIO's order is deterministic (Log VFD)"
    order = 20
    builtin = True
    launch_order = 50  # after every other profile's launches, as runs have always been ordered
    checks = Deferred(".checks:check_logvfd", ".checks:check_counts")
    covers = {"data_reads": "the Log VFD (logvfd)",
              "read_order": "the Log VFD where the order is deterministic: its read_threads=0 launch",
              "model_reads": "the Log VFD (PROFILES=logvfd; DLIO 2.x's HDF5 reads)"}
    claims = (("logvfd.sequence.*", counted("data_reads", "read_order")), ("logvfd.multiset.*", counted("data_reads")),
              ("counts.dlio.*", counted("model_reads")), ("counts.kernel.*", counted("model_reads")))
    kernel_only = ("counts.kernel.",)   # the kernel's records per rank against the model
    first_difference = ("logvfd-rt0", "logvfd")   # its launches' per-open blocks, the ordered variant first

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        if not shape.reads_data:  # a checkpoint-only workload opens no HDF5 file: nothing to log
            return []
        out = [LaunchSpec("logvfd", data="other")]
        # the read_threads=0 variant exists for the Log VFD's order: a DLIO that reads whole files without HDF5
        # (sample_read whole_file, MLCommons 3.x) leaves no record to order, and DLIO 3.x with read_threads 0 exits 1
        # after its last epoch under mpirun (worker_init(-1) in the rank, torch_data_loader.py:174-175, resets its
        # DLIOMPI to a child's state, utils/config.py:308-313, so utils/utility.py:381-384 skips MPI.Finalize)
        if shape.read_threads > 0 and shape.rules.get("sample_read") != "whole_file":
            out.append(LaunchSpec("logvfd-rt0", data="other", read_threads_0=True))
        return out

    def wrap(self, launch: Launch) -> Wrapped:
        """kernel: --log-vfd (set in code, works on HDF5 1.10 too); DLIO/h5py: HDF5_DRIVER=log (HDF5 >= 1.14)."""
        if launch.side == "kernel":
            return Wrapped(list(launch.argv) + ["--log-vfd"], dict(launch.env))
        return Wrapped(list(launch.argv), {**launch.env, "HDF5_DRIVER": "log"})

    def collect(self, done: Done) -> dict:
        from profiles.logvfd.records import compact, parse_dir
        return {f"{done.step}-{done.side}.json": json.dumps(compact(parse_dir(done.workdir / "ranks")))}
