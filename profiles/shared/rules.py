"""The reference DLIO's rules as the run records them (the probe's, else its kernel entry's), and what they decide
for the checks: whether the Log VFD has anything to compare, whether the model alone judges a kernel-only run."""
from __future__ import annotations

from profiles import checkpoint_only


def dlio_rule(run, name: str):
    """A rule of the reference DLIO as the probe saw it (manifest dlio.probed.rules), else as its kernel entry says
    (dlio.entry_rules); None when neither has it."""
    d = run.manifest.get("dlio") or {}
    probed = ((d.get("probed") or {}).get("rules") or {}).get(name)
    return probed if probed is not None else (d.get("entry_rules") or {}).get(name)


def raw_reader(run) -> str | None:
    """Why the Log VFD has nothing to compare, or None: the reference DLIO reads each sample as the whole file with
    Python's open().read() (rule sample_read whole_file, as probed: MLCommons 3.x reader/hdf5_reader.py read_index ->
    reader/_local_fs_iterable_mixin.py _read_local_bytes), no HDF5 call, so its side of a Log VFD log is empty."""
    if dlio_rule(run, "sample_read") != "whole_file":
        return None
    return ("DLIO reads each sample as the whole file with Python open().read() (sample_read whole_file), without "
            "the HDF5 library: no Log VFD record to compare; equivalence is checked at the POSIX level "
            "(dftracer.per_file: opens, reads, bytes and (offset, size) accesses per file; darshan.* when installed)")


def one_open_per_sample(run) -> bool:
    """An HDF5 workload whose every sample read is one open of its file (one sample per file, training only: the
    model's read_files name each read's file; eval files would share train files' indices): a tracer's opens per
    data file can be checked against the model without DLIO's side."""
    cfg = run.cfg
    if int((cfg.get("dataset") or {}).get("num_samples_per_file", 1)) != 1:
        return False
    segs = run.model_reads(cfg)
    return bool(segs) and all(seg.get("phase") == "train" and "read_files" in seg for r in segs for seg in segs[r])


def model_judges_kernel(run, per_sample: bool = True) -> bool:
    """A kernel-only run (SIDES=kernel) whose kernel's opens per data file the analytic model names alone: the
    reference reads whole files (raw_reader), or (when the tracer's table can say it: per_sample) each sample read is
    one open of its file (one_open_per_sample). Then counts.<tracer>.kernel* judge the kernel's trace against the
    model instead of a skip."""
    return list(run.manifest.get("sides") or ()) == ["kernel"] and not checkpoint_only(run.cfg) and \
        bool(raw_reader(run) or per_sample and one_open_per_sample(run))
