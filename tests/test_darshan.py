"""Darshan profile: detection (skips with its reason when no runtime is installed) and the parser on real logs
(../shared/fixtures/darshan, copied to tests/data/darshan: 2 ranks, one file with records uint8 4x1024x1024 and
labels int64 x4, each rank reading samples one open at a time for 2 epochs: 8 samples in all)."""
from __future__ import annotations

import os
import shutil
import stat
from collections import Counter
from pathlib import Path

import pytest

from profiles import Launch, darshan, features
from profiles.shared.paths import GEN_RECORD

DATA = Path(__file__).parent / "data" / "darshan"
SAMPLE = 1024 * 1024


def test_no_runtime_is_a_clean_skip(monkeypatch, tmp_path):
    monkeypatch.delenv("DARSHAN_PREFIX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no darshan-config anywhere
    info = darshan.runtime.detect()
    assert info == {"available": False, "reason": "no Darshan runtime found (set DARSHAN_PREFIX or put darshan-config "
                                                  "on PATH)"}


def _fake_install(tmp_path: Path, hdf5_path: str = "") -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libdarshan.so").write_bytes(b"")
    (tmp_path / "bin").mkdir()
    cfg = tmp_path / "bin" / "darshan-config"
    cfg.write_text(f'#!/bin/sh\ncase "$1" in --hdf5-mod) echo yes;; --dxt-mod) echo yes;;\n'
                   f'  --hdf5-path) echo {hdf5_path};; --prefix) echo {tmp_path};; esac\n')
    cfg.chmod(cfg.stat().st_mode | stat.S_IEXEC)
    return cfg


def test_detects_an_install_and_its_modules(monkeypatch, tmp_path):
    _fake_install(tmp_path, "/opt/hdf5-par")
    monkeypatch.delenv("DARSHAN_PREFIX", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    info = darshan.runtime.detect()
    assert info["available"] and info["lib"] == str(tmp_path / "lib" / "libdarshan.so")
    assert info["hdf5_mod"] and info["dxt_mod"] and not info["mpiio_mod"] and info["hdf5_path"] == "/opt/hdf5-par"


def test_wrap_preloads_darshan_before_the_sides_libhdf5(tmp_path):
    """Reversed order records no H5F/H5D and says nothing (fixtures README): libdarshan.so must come first."""
    info = {"lib": "/d/lib/libdarshan.so", "sides": {"dlio": {"preload": ["/d/lib/libdarshan.so", "/h/libhdf5.so"]}}}
    w = darshan.Darshan().wrap(Launch("dlio", "darshan", ["prog"], {"KEEP": "1"}, tmp_path / "step",
                                      tmp_path / "data", info))
    env = w.env
    assert w.argv == ["prog"] and w.dirs == (tmp_path / "step" / "logs",)
    assert w.files[0][0] == tmp_path / "step" / "darshan.conf" and str(tmp_path / "data") in w.files[0][1]
    assert env["LD_PRELOAD"] == "/d/lib/libdarshan.so:/h/libhdf5.so" and env["KEEP"] == "1"
    assert env["DARSHAN_LOG_DIR_PATH"] == str(tmp_path / "step" / "logs")
    assert set(env["DARSHAN_MOD_ENABLE"].split(",")) == {"DXT_POSIX", "DXT_MPIIO"} and env["DARSHAN_ENABLE_NONMPI"]


@pytest.mark.dlio
def test_sides_need_the_libhdf5_darshan_was_built_against(tmp_path, dlio_venv):
    """The kernel runs under Darshan's HDF5 module only with the libhdf5 Darshan was built against; a wheel h5py
    (DLIO's default venv) is refused with the make option that fixes it."""
    kernel, venv = Path(os.environ["H5DLIO_BIN"]), dlio_venv
    mine = darshan.runtime.linked_hdf5(kernel)
    assert mine is not None and mine.name.startswith("libhdf5.so")
    prefix = str(mine.parent.parent)
    info = {"lib": "/d/libdarshan.so", "hdf5_mod": True, "hdf5_path": prefix}
    sides = darshan.runtime.plan_sides(info, venv, kernel)
    assert sides["kernel"] == {"preload": ["/d/libdarshan.so", str(mine)]}
    if darshan.runtime.h5py_build(venv)["mpi"]:
        pytest.skip(f"{venv} has an MPI h5py: the wheel refusal cannot be shown with it")
    assert "skip" in sides["dlio"] and "DLIO_H5PY=mpi" in sides["dlio"]["skip"]
    other = darshan.runtime.plan_sides({**info, "hdf5_path": str(tmp_path)}, venv, kernel)
    assert "skip" in other["kernel"] and f"HDF5_DIR={tmp_path}" in other["kernel"]["skip"]
    plain = darshan.runtime.plan_sides({**info, "hdf5_mod": False}, venv, kernel)
    assert plain == {"dlio": {"preload": ["/d/libdarshan.so"]}, "kernel": {"preload": ["/d/libdarshan.so"]}}


def test_no_log_is_an_error_that_quotes_darshan(tmp_path):
    step = tmp_path / "step"
    (step / "logs").mkdir(parents=True)
    (step / "launch.stderr").write_text("darshan_library_warning: unable to create log file /x/y.darshan_partial.\n")
    with pytest.raises(ValueError, match=r"no Darshan log in .*unable to create log file"):
        darshan.parse.parse(step, "kernel", tmp_path / "data")


def test_launch_creates_the_log_folder_a_profile_asks_for(tmp_path):
    """Darshan writes nothing (a warning only) into a missing folder: the step creates it, after the harness has
    emptied the step's folder of an earlier attempt."""
    from harness.launch import Step, execute
    logs = tmp_path / "w" / "logs"
    r = execute(Step("kernel.darshan", "kernel", "darshan", ["test", "-d", str(logs)], {}, tmp_path / "w", None, 30,
                     (logs,)), progress=lambda *_: None)
    assert r["status"] == "ok", r


def _dxt_reads(path: Path, fname: str) -> list[tuple[int, int, float, float]]:
    """(offset, length, start, end) of the X_POSIX reads of one file in darshan-dxt-parser's text."""
    return _dxt_segments(path, fname, "read")


def _dxt_segments(path: Path, fname: str, kind: str) -> list[tuple[int, int, float, float]]:
    """(offset, length, start, end) of one file's X_POSIX `kind` ("read" or "write") segments in
    darshan-dxt-parser's text."""
    out, cur = [], None
    for line in path.read_text().splitlines():
        if line.startswith("# DXT, file_id:"):
            cur = line.split("file_name: ", 1)[1]
        elif cur == fname and line.split()[:1] == ["X_POSIX"] and line.split()[2] == kind:
            _, _, _, _, off, length, start, end = line.split()
            out.append((int(off), int(length), float(start), float(end)))
    return out


def test_features_from_dxt_match_darshans_own_text_dump():
    """The similarity inputs from DXT (pydarshan) against darshan-dxt-parser's text of the same log."""
    t = darshan.parse.parse_log(DATA / "c_sec2.darshan", Path("/scratch/dlio/data"))
    f = features.io_features(t["reads"])
    ref = _dxt_reads(DATA / "c_sec2.dxt.txt", "/scratch/dlio/data/train_img_1_of_1.h5")
    assert len(ref) == 88 and len(t["reads"]) == len(ref)
    sizes = [n for _, n, _, _ in ref]
    assert (f["bytes"], f["xfer_min"], f["xfer_max"], f["files"]) == (sum(sizes), min(sizes), max(sizes), 1)
    assert f["io_time_s"] == pytest.approx(sum(e - s for _, _, s, e in ref), abs=1e-4 * len(ref))
    assert sorted((r["offset"], r["size"]) for r in t["reads"]) == sorted((o, n) for o, n, _, _ in ref)


# c_sec2.darshan's counters as Darshan's own darshan-parser (3.5.0) prints them, copied by hand: the data folder
# /scratch/dlio/data, the checkpoint folder Open MPI's segment folder (its files have writes and DXT write segments)
SEC2_SM = "/tmp/ompi.vm.0/pid.2222/1"
SEC2_FILES = {  # POSIX_OPENS, POSIX_READS, POSIX_BYTES_READ; H5F_OPENS; H5D_OPENS, H5D_READS, H5D_BYTES_READ
    "train_img_1_of_1.h5": {"opens": 10, "reads": 88, "bytes": 8412960, "h5f_opens": 10,
                            "h5d": {"records": {"opens": 10, "reads": 8, "bytes": 8388608},
                                    "labels": {"opens": 10, "reads": 8, "bytes": 64}}},
    "train_img_1_of_1.h5.locktest.0": {"opens": 1, "reads": 0, "bytes": 0, "h5f_opens": 0, "h5d": {}},
    "train_img_1_of_1.h5.locktest.1": {"opens": 1, "reads": 0, "bytes": 0, "h5f_opens": 0, "h5d": {}}}
SEC2_CKPTS = {  # POSIX_OPENS, POSIX_WRITES, POSIX_BYTES_WRITTEN, POSIX_FSYNCS + POSIX_FDSYNCS, READS, BYTES_READ
    "train_img_1_of_1.h5_cid--1-0.sm": {"opens": 1, "writes": 0, "bytes": 0, "fsyncs": 0, "reads": 0, "read_bytes": 0},
    "train_img_1_of_1.h5_cid--1-1.sm": {"opens": 1, "writes": 0, "bytes": 0, "fsyncs": 0, "reads": 0, "read_bytes": 0},
    "train_img_1_of_1.h5_cid-5-2227.sm": {"opens": 2, "writes": 1, "bytes": 40, "fsyncs": 0, "reads": 0,
                                          "read_bytes": 0}}
SEC2_META_S = 0.000018 + 0.000071 + 0.000018  # POSIX_F_META_TIME of the three data files (6 decimals printed)


def _sec2_differences(t: dict) -> list[str]:
    """What a parse of c_sec2.darshan (data folder /scratch/dlio/data, checkpoint folder SEC2_SM) gives that Darshan's
    own tools do not: counters against SEC2_FILES/SEC2_CKPTS, DXT accesses and segments against c_sec2.dxt.txt."""
    dxt, out = DATA / "c_sec2.dxt.txt", []
    want_files = {f: {**r, "accesses": dict(Counter(f"{o}+{n}" for o, n, _, _ in
                                                    _dxt_segments(dxt, f"/scratch/dlio/data/{f}", "read")))}
                  for f, r in SEC2_FILES.items()}
    want_ckpts = {f: {**r, **{f"{k}_segments": dict(Counter(f"{o}+{n}" for o, n, _, _ in
                                                            _dxt_segments(dxt, f"{SEC2_SM}/{f}", k)))
                              for k in ("write", "read")}} for f, r in SEC2_CKPTS.items()}
    for what, got, want in (("files", t["files"], want_files), ("checkpoints", t["checkpoints"], want_ckpts)):
        for f in sorted(set(got) | set(want)):
            for k in sorted(set(got.get(f, {})) | set(want.get(f, {}))):
                if got.get(f, {}).get(k) != want.get(f, {}).get(k):
                    out.append(f"{what} {f} {k}: {got.get(f, {}).get(k)} != {want.get(f, {}).get(k)}")
    if t["other"]:
        out.append(f"other: {t['other']}")
    return out


def test_streamed_tables_equal_darshans_own_reading_of_a_real_log(tmp_path):
    """The per-file tables of c_sec2.darshan, streamed a record at a time, equal what darshan-parser and
    darshan-dxt-parser print of it; and the launch's table (parse) of a folder holding it and a child's log."""
    t = darshan.parse.parse_log(DATA / "c_sec2.darshan", Path("/scratch/dlio/data"), Path(SEC2_SM))
    assert _sec2_differences(t) == []
    assert t["meta_s"] == pytest.approx(SEC2_META_S, abs=3 * 5e-7)
    assert t["checkpoints"]["train_img_1_of_1.h5_cid-5-2227.sm"]["write_segments"] == {"0+40": 1}  # non-empty
    reads = _dxt_segments(DATA / "c_sec2.dxt.txt", "/scratch/dlio/data/train_img_1_of_1.h5", "read")
    (tmp_path / "logs").mkdir()
    for log in ("c_sec2", "py_src"):  # py_src's process (h5py_sample.py) is not the program: a child of the launch
        shutil.copy(DATA / f"{log}.darshan", tmp_path / "logs")
    whole = darshan.parse.parse(tmp_path, "kernel", Path("/scratch/dlio/data"), programs=("h5sample",))
    assert whole["logs"] == ["c_sec2.darshan"]
    assert [(c["log"], c["data_files"]) for c in whole["children"]] == \
        [("py_src.darshan", ["py_img_1_of_1.h5", "py_img_1_of_1.h5.locktest.0", "py_img_1_of_1.h5.locktest.1"])]
    assert {f: {k: r[k] for k in ("opens", "reads", "bytes", "h5f_opens")} for f, r in whole["files"].items()} == \
        {f: {k: r[k] for k in ("opens", "reads", "bytes", "h5f_opens")} for f, r in SEC2_FILES.items()}
    f = whole["features"]
    assert (f["bytes"], f["files"], f["xfer_min"], f["xfer_max"]) == \
        (sum(n for _, n, _, _ in reads), 1, min(n for _, n, _, _ in reads), max(n for _, n, _, _ in reads))
    assert whole["metadata"]["all"]["opens"] == 12


def _twice(orig):
    def records(self, *a, **kw):  # every counter record handed over twice (a stream read again, not reset)
        for r in orig(self, *a, **kw):
            yield r
            yield r
    return records


def _drop_last_read(orig):
    def dxt(self, *a, **kw):  # each DXT record's last read segment lost
        for rid, rank, w, r in orig(self, *a, **kw):
            yield rid, rank, w, r[:-1]
    return dxt


def _shift_writes(orig):
    def dxt(self, *a, **kw):  # each write segment one byte further
        for rid, rank, w, r in orig(self, *a, **kw):
            yield rid, rank, [(o + 1, n, s, e) for o, n, s, e in w], r
    return dxt


@pytest.mark.parametrize("method,plant,field", [("records", _twice, "opens"), ("dxt", _drop_last_read, "accesses"),
                                                ("dxt", _shift_writes, "write_segments")])
def test_a_planted_divergence_in_the_stream_is_caught(monkeypatch, method, plant, field):
    """Negative control of the test above: the same comparison fails when the stream is planted a divergence."""
    from profiles.darshan import log as darshan_log
    monkeypatch.setattr(darshan_log.Log, method, plant(getattr(darshan_log.Log, method)))
    t = darshan.parse.parse_log(DATA / "c_sec2.darshan", Path("/scratch/dlio/data"), Path(SEC2_SM))
    diffs = _sec2_differences(t)
    assert any(f" {field}: " in d for d in diffs), diffs


@pytest.mark.parametrize("cut,where", [(1500, "name records"), (2000, "POSIX record"), (3000, "DXT_POSIX record")])
def test_a_truncated_log_is_refused_naming_it(tmp_path, cut, where):
    """A log cut short (c_sec2.darshan's 4,351 bytes cut in its name table, its POSIX or its DXT_POSIX records): a
    ValueError naming the log and what could not be read (collection records it and goes on), never a short
    table."""
    bad = tmp_path / "cut.darshan"
    bad.write_bytes((DATA / "c_sec2.darshan").read_bytes()[:cut])
    with pytest.raises(ValueError, match=f"cut.darshan: .*{where}"):
        darshan.parse.parse_log(bad, Path("/scratch/dlio/data"))


@pytest.mark.parametrize("log,h5", [("c_sec2", True), ("c_mpio", True), ("py_src", True), ("py_wheel_noh5", False)])
def test_parser_counts_the_eight_sample_reads(log, h5):
    t = darshan.parse.parse_log(DATA / f"{log}.darshan", Path("/scratch/dlio/data"))
    assert t["nprocs"] == 2
    (name, f), = ((k, v) for k, v in t["files"].items() if k.endswith(".h5"))
    sizes = [int(a.split("+")[1]) for a, n in f["accesses"].items() for _ in range(n)]
    if log != "c_mpio":  # MPI-IO reads land in DXT_MPIIO; POSIX sees ROMIO's own access sizes
        assert sizes.count(SAMPLE) == 8
        assert {int(a.split("+")[0]) for a in f["accesses"] if a.endswith(f"+{SAMPLE}")} <= \
            {2048 + k * SAMPLE for k in range(4)}
    if h5:
        assert f["h5d"]["records"]["reads"] == 8 and f["h5d"]["records"]["bytes"] == 8 * SAMPLE
        assert f["h5f_opens"] >= 8
        assert "H5D" in t["modules"]
    else:
        assert f["h5d"] == {} and "H5D" not in t["modules"]


def test_non_data_files_are_kept_apart():
    """Open MPI's shared-memory segments (and anything outside the data folder) are not data files."""
    t = darshan.parse.parse_log(DATA / "py_src.darshan", Path("/scratch/dlio/data"))
    assert [k for k in t["files"] if t["files"][k]["reads"]] == ["py_img_1_of_1.h5"]  # (+ ROMIO lock tests)
    assert t["other"] and all(o["file"].startswith("/tmp/ompi.") for o in t["other"])


def _run_with(tmp_path: Path, dlio: dict, kernel: dict, vol: dict | None = None) -> dict:
    """A run folder holding only what validate's Darshan check reads: the manifest (its `vol` block when given) and
    the two tables."""
    import json

    from validate import checks
    (tmp_path / "tables").mkdir(parents=True, exist_ok=True)
    (tmp_path / "manifest.json").write_text(json.dumps({"steps": {}, "ranks": 2, "workload": {"config": {}},
                                                        **({"vol": vol} if vol else {})}))
    for side, t in (("dlio", dlio), ("kernel", kernel)):
        (tmp_path / "tables" / f"darshan-{side}.json").write_text(json.dumps(t))
    return {c["name"]: c for c in darshan.checks.check_darshan(checks.Run(tmp_path))}


def _side(tmp_path: Path, log: str, side: str) -> dict:
    import shutil
    step = tmp_path / side
    (step / "logs").mkdir(parents=True)
    shutil.copy(DATA / f"{log}.darshan", step / "logs")
    # the fixtures' programs (README.md): h5sample.c and h5py_sample.py, not the kernel or DLIO
    return darshan.parse.parse(step, side, Path("/scratch/dlio/data"), programs=("h5sample", "h5py_sample.py"))


def test_check_passes_equal_sides_and_fails_a_changed_access(tmp_path):
    d, k = _side(tmp_path, "c_sec2", "dlio"), _side(tmp_path, "c_sec2", "kernel")
    ok = _run_with(tmp_path / "run", d, k)
    assert ok["darshan.per_file"]["status"] == "pass" and "h5d" in ok["darshan.per_file"]["detail"]
    assert ok["darshan.explained"]["status"] == "pass"
    assert ok["similarity.darshan"]["observed_score"] == pytest.approx(1.0)
    f = "train_img_1_of_1.h5"
    acc = k["files"][f]["accesses"]
    moved = next(a for a in acc if a.endswith(f"+{SAMPLE}"))
    acc[f"{int(moved.split('+')[0]) + 4096}+{SAMPLE}"] = acc.pop(moved)  # one sample read from another offset
    bad = _run_with(tmp_path / "run2", d, k)
    assert bad["darshan.per_file"]["status"] == "fail" and f in bad["darshan.per_file"]["detail"]
    assert "accesses" in bad["darshan.per_file"]["detail"]


def test_check_fails_an_unexplained_file_and_a_partial_log(tmp_path):
    d, k = _side(tmp_path, "c_sec2", "dlio"), _side(tmp_path, "c_sec2", "kernel")
    k["other"].append({"file": "/home/someone/secret.bin", "opens": 1})
    r = _run_with(tmp_path / "run", d, k)
    assert r["darshan.per_file"]["status"] == "pass"
    assert r["darshan.explained"]["status"] == "fail" and "/home/someone/secret.bin" in r["darshan.explained"]["detail"]
    k["other"].pop()
    k["partial"] = ["x.darshan:POSIX"]  # a compared module's counters incomplete: a failure
    r = _run_with(tmp_path / "run2", d, k)
    assert r["darshan.per_file"]["status"] == "fail" and "partial" in r["darshan.per_file"]["detail"]
    # DXT out of its trace memory (fixed at Darshan's build; a rank of 10^6 files): its segments are not compared,
    # said, the counters still are: an extra open fails, as it would with DXT whole
    f = "train_img_1_of_1.h5"
    k["partial"], k["dxt_cut"] = ["x.darshan:DXT_POSIX"], [f]
    acc = k["files"][f]["accesses"]
    moved = next(a for a in acc if a.endswith(f"+{SAMPLE}"))
    acc[f"{int(moved.split('+')[0]) + 4096}+{SAMPLE}"] = acc.pop(moved)  # its segments, cut short, differ
    r = _run_with(tmp_path / "run3", d, k)
    row = r["darshan.per_file"]
    assert row["status"] == "pass" and "DXT ran out of its trace memory" in row["detail"], row
    assert "not compared for 1 of 1 data files" in row["detail"], row
    k["files"][f]["opens"] += 1
    r = _run_with(tmp_path / "run4", d, k)
    assert r["darshan.per_file"]["status"] == "fail" and f in r["darshan.per_file"]["detail"]
    k["files"][f]["opens"] -= 1
    # negative control: the partial log touched other files only: this file's segments are compared, and differ
    k["dxt_cut"] = ["train_img_0_of_1.h5"]
    r = _run_with(tmp_path / "run5", d, k)
    assert r["darshan.per_file"]["status"] == "fail" and "accesses" in r["darshan.per_file"]["detail"], r
    # a table collected before dxt_cut: every file's segments left out, said
    del k["dxt_cut"]
    row = _run_with(tmp_path / "run6", d, k)["darshan.per_file"]
    assert row["status"] == "pass" and "collected before dxt_cut" in row["detail"], row


def test_a_log_whose_dxt_ran_out_names_its_own_files_only(tmp_path, monkeypatch):
    """The parse marks the data files of a log whose DXT_POSIX module ran out of its trace memory (dxt_cut), and only
    those: the same real log unflagged cuts nothing (the negative control)."""
    from profiles.darshan import log as darshan_log
    assert _side(tmp_path / "whole", "c_sec2", "kernel")["dxt_cut"] == []
    real = darshan_log.Log.__init__

    def flagged(self, path):
        real(self, path)
        if "DXT_POSIX" in self.modules:
            self.modules["DXT_POSIX"] = {**self.modules["DXT_POSIX"], "partial_flag": 1}
    monkeypatch.setattr(darshan_log.Log, "__init__", flagged)
    t = _side(tmp_path / "cut", "c_sec2", "kernel")
    assert "train_img_1_of_1.h5" in t["dxt_cut"] and t["partial"] == ["c_sec2.darshan:DXT_POSIX"], t["partial"]
    assert all(n.startswith("train_img_1_of_1.h5") for n in t["dxt_cut"]), t["dxt_cut"]  # (and its lock tests)


def test_check_without_hdf5_records_compares_posix_only_and_says_so(tmp_path):
    d, k = _side(tmp_path, "py_src", "dlio"), _side(tmp_path, "py_wheel_noh5", "kernel")
    r = _run_with(tmp_path / "run", d, k)
    assert "H5F/H5D not compared" in r["darshan.per_file"]["detail"]


def test_explicit_async_reads_name_why_h5d_is_not_compared(tmp_path):
    """A kernel launch that read with vol-async's event sets (manifest vol.kernel_launches.darshan.async_prefetch
    explicit) leaves no H5D record: the check says it is H5Dread_async, which Darshan does not wrap; the same tables
    without that launch record (the control) keep the general reason."""
    d, k = _side(tmp_path, "py_src", "dlio"), _side(tmp_path, "py_wheel_noh5", "kernel")
    vol = {"kernel_launches": {"darshan": {"stack": ["async", "native"], "async_prefetch": {"mode": "explicit"}}}}
    why = _run_with(tmp_path / "run", d, k, vol)["darshan.per_file"]["detail"]
    assert "H5Dread_async" in why and "wraps the synchronous calls only" in why, why
    vol["kernel_launches"]["darshan"]["async_prefetch"] = None  # implicit: the synchronous calls, wrapped
    why = _run_with(tmp_path / "run2", d, k, vol)["darshan.per_file"]["detail"]
    assert "H5Dread_async" not in why and "a side has no HDF5 module records" in why, why


def _live() -> tuple[dict, str]:
    """The Darshan `make test` built (H5DLIO_DARSHAN_PREFIX: the vendored tarball, `make darshan`), else the user's
    (DARSHAN_PREFIX, darshan-config); and the reference venv for DLIO's side (its h5py built against Darshan's
    libhdf5: H5DLIO_DLIO_VENV_MPI, `make dlio-venv-spec DLIO_H5PY=mpi`)."""
    info = darshan.runtime.detect(os.environ.get("H5DLIO_DARSHAN_PREFIX") or None)
    if not info["available"]:
        pytest.skip(f"live Darshan path not checked here: {info['reason']} (`make test` builds one when "
                    "../shared/vendor holds a Darshan tarball)")
    return info, os.environ.get("H5DLIO_DLIO_VENV_MPI") or os.environ["H5DLIO_DLIO_VENV"]


def _live_run(tmp_path: Path, info: dict, venv: str, workload: str, name: str, *extra: str) -> tuple[Path, dict]:
    """One `harness run --profiles darshan` and its validation: (run dir, checks by name)."""
    import json
    import subprocess
    import sys

    from pipeline import named_run
    repo = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--workload", workload, "--scale", "tiny", "--ranks",
                        "2", "--dlio-venv", venv, "--runs-dir", str(tmp_path / f"runs-{name}"), "--profiles",
                        "darshan", "--darshan-prefix", info["prefix"], *extra],
                       cwd=repo, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    run = named_run(p.stdout)
    subprocess.run([sys.executable, "-m", "validate", "--quiet", str(run)], cwd=repo, timeout=600)
    return run, {c["name"]: c for c in json.loads((run / "verdict.json").read_text())["checks"]}


@pytest.mark.vendored
@pytest.mark.darshan
@pytest.mark.dlio
def test_live_darshan_validation(tmp_path):
    """Both sides under a real Darshan runtime: the kernel side always; the DLIO side with a reference venv whose h5py
    is built against Darshan's libhdf5, else that side's skip names the fix."""
    import json
    info, venv = _live()
    run, checks = _live_run(tmp_path, info, venv, "unet3d", "unet3d")
    kernel = json.loads((run / "tables" / "darshan-kernel.json").read_text())
    # the kernel's completion record (h5dlio-generation.json, read by rank 0 before the reads) is in its data folder
    # and so in its table, read through POSIX only; the per-file check leaves it out (shared.paths.kernel_record)
    record = kernel["files"].pop(GEN_RECORD)
    assert record["reads"] > 0 and record["h5f_opens"] == 0, record
    assert kernel["files"] and all(r["reads"] > 0 for r in kernel["files"].values())
    if info["hdf5_mod"]:
        assert all(r["h5f_opens"] > 0 and r["h5d"]["records"]["reads"] > 0 for r in kernel["files"].values())
    if not darshan.runtime.h5py_build(Path(venv))["mpi"] and info["hdf5_mod"]:
        assert checks["darshan.per_file"]["status"] == "skip"
        assert "DLIO_H5PY=mpi" in checks["darshan.per_file"]["detail"]
        return
    for name in ("darshan.per_file", "darshan.explained"):
        assert checks[name]["status"] == "pass", checks[name]
    assert checks["darshan.checkpoints"]["status"] == "skip"  # checkpointing is off in unet3d
    assert checks["similarity.darshan"]["observed_score"] > 0.9
    # negative control: the kernel skips one sample read, DLIO's side reused: the per-file check must catch it
    _, bad = _live_run(tmp_path, info, venv, "unet3d", "neg", "--reuse-dlio", str(run),
                       "--kernel-set", "fault-skip-read=5")
    assert bad["darshan.per_file"]["status"] == "fail" and bad["darshan.per_file"]["observed"] == 27


@pytest.mark.vendored
@pytest.mark.darshan
@pytest.mark.dlio
def test_live_darshan_compares_checkpoint_files(tmp_path):
    """unet3d_checkpoint under Darshan: per checkpoint file (relative to each launch's checkpoint folder, the
    kernel's partial name as its final one) opens, writes, bytes, fsyncs and DXT write segments equal on both sides;
    only the launched programs' logs compared; a planted one-byte-short checkpoint file fails darshan.checkpoints."""
    import json

    from validate import checks as vchecks
    info, venv = _live()
    if not darshan.runtime.h5py_build(Path(venv))["mpi"] and info["hdf5_mod"]:
        pytest.skip("DLIO's side cannot run under this Darshan's HDF5 module without the MPI h5py venv "
                    "(H5DLIO_DLIO_VENV_MPI: `make dlio-venv-spec DLIO_H5PY=mpi`)")
    run, checks = _live_run(tmp_path, info, venv, "unet3d_checkpoint", "ckpt")
    for name in ("darshan.per_file", "darshan.checkpoints", "darshan.explained"):
        assert checks[name]["status"] == "pass", checks[name]
    tables = {s: json.loads((run / "tables" / f"darshan-{s}.json").read_text()) for s in ("dlio", "kernel")}
    ck = tables["kernel"]["checkpoints"]
    assert ck and set(ck) == set(tables["dlio"]["checkpoints"])
    assert all(r["writes"] > 0 and r["bytes"] > 0 and r["write_segments"] for r in ck.values())
    assert all(t["logs"] and all(log.endswith(".darshan") for log in t["logs"]) for t in tables.values())
    # negative control: one checkpoint file one byte short on the kernel's side
    f = sorted(ck)[0]
    ck[f]["bytes"] -= 1
    (run / "tables" / "darshan-kernel.json").write_text(json.dumps(tables["kernel"]))
    got = {c["name"]: c for c in darshan.checks.check_darshan(vchecks.Run(run))}
    assert got["darshan.checkpoints"]["status"] == "fail" and f in got["darshan.checkpoints"]["detail"]


def _conf(text: str) -> dict:
    """MODMEM/NAMEMEM (MiB) and MAX_RECORDS (with its modules) of a Darshan config text."""
    out = {}
    for ln in text.splitlines():
        w = ln.split()
        if w and w[0] in ("MODMEM", "NAMEMEM"):
            out[w[0]] = int(w[1])
        elif w and w[0] == "MAX_RECORDS":
            out[w[0]], out["modules"] = int(w[1]), set(w[2].split(","))
    return out


def assert_room_for(text: str, files: int, data_dir: str) -> None:
    """Darshan 3.5.0 logs every one of `files` data files of a rank (and 65,536 of the process's own): each of the
    five modules may hold that many records, MODMEM holds them all (sizeof of the records in Darshan's log-format
    headers, counted by hand: POSIX 704 + STDIO 248 + MPI-IO 560 + H5F 80 + H5D 912 = 2,504 bytes) and NAMEMEM two
    names per data file (its path, and "<path>:/<dataset>", each 8 + length + 1 bytes)."""
    c = _conf(text)
    assert c["modules"] == {"POSIX", "STDIO", "MPI-IO", "H5F", "H5D"}
    assert c["MAX_RECORDS"] >= files + 65536
    assert c["MODMEM"] * 2**20 >= (files + 65536) * 2504
    assert c["NAMEMEM"] * 2**20 >= files * 2 * (9 + len(data_dir) + len("/13/img_0012345_of_0148000.hdf5:/records"))


def test_darshan_config_has_room_for_200000_files_per_rank(tmp_path):
    """A workload of 200,000 one-sample files on one rank: 200,000 files open in the rank's Darshan launch. Negative
    control: the fixed configuration of before (65,536 records per module, 256 MiB) has no room for them."""
    data = tmp_path / "runs" / "imagenet_files-field-20261127-090000" / "kernel" / "data"
    cfg = {"dataset": {"num_files_train": 200_000, "num_samples_per_file": 1}, "train": {"epochs": 1}}
    files = darshan.runtime.files_per_rank(cfg, 1)
    assert files == 200_000
    assert darshan.runtime.refuse_records(cfg, 1, data) is None
    assert_room_for(darshan.runtime.config_text(data, None, files), 200_000, str(data))
    old = ("MODMEM        256\nNAMEMEM       64\nMAX_RECORDS   65536  POSIX,STDIO,MPI-IO,H5F,H5D\n")
    with pytest.raises(AssertionError):
        assert_room_for(old, 200_000, str(data))
    # 64 ranks share the files: each opens its 3,125 (one epoch), never more than the files over several epochs
    assert darshan.runtime.files_per_rank(cfg, 64) == 3125
    assert darshan.runtime.files_per_rank({**cfg, "train": {"epochs": 100}}, 64) == 200_000


def test_darshan_refuses_a_record_memory_past_the_bound_with_the_numbers(tmp_path):
    """10^6 files on one rank: 1,065,536 records x 2,504 bytes = 2,545 MiB of MODMEM, reserved twice (compression at
    shutdown): over 4 GiB per process, refused naming the numbers; the same files over 64 ranks are accepted (15,625
    files per rank, ~33 MiB of records each)."""
    data = tmp_path / "d"
    cfg = {"dataset": {"num_files_train": 1_000_000}, "train": {"epochs": 1}}
    why = darshan.runtime.refuse_records(cfg, 1, data)
    assert why and "1,000,000 data files per rank" in why and "MAX_RECORDS 1,065,536" in why
    assert "MODMEM 2545 MiB" in why and "(bound 4096)" in why
    assert darshan.runtime.refuse_records(cfg, 64, data) is None
    # the launch bound: 10^7 files over 64 ranks, 156,250 each (~1.4 GiB reserved, fine), >= 64 x 156,250 x 1,696
    # bytes of POSIX+H5F+H5D records = 15.8 GiB before their names: over 16 GiB together
    why = darshan.runtime.refuse_records({"dataset": {"num_files_train": 10_000_000}}, 64, data)
    assert why and "for 64 ranks (bound 16384" in why


def test_wrap_sizes_the_config_from_the_runs_shape(tmp_path):
    from profiles import Shape
    info = {"lib": "/d/lib/libdarshan.so", "sides": {}}
    shape = Shape({"dataset": {"num_files_train": 300_000}}, ranks=2)
    w = darshan.Darshan().wrap(Launch("kernel", "darshan", ["prog"], {}, tmp_path / "s", tmp_path / "data", info,
                                      shape))
    assert _conf(w.files[0][1])["MAX_RECORDS"] == 150_000 + 65536


def _vol_kernel() -> str:
    """The kernel against the thread-safe HDF5 (`make vol-kernel`: build/.vol-kernel) with vol-async's plugin folder
    (build/.vol-prefix) and the Darshan built against that HDF5 (`make darshan-ts`, or DARSHAN_TS_PREFIX), or skip
    naming what builds them."""
    repo = Path(__file__).resolve().parent.parent
    stamp, prefix = repo / "build" / ".vol-kernel", repo / "build" / ".vol-prefix"
    kernel = stamp.read_text().strip() if stamp.exists() else ""
    plugins = Path(prefix.read_text().strip(), "lib") if prefix.exists() else None
    if not kernel or not Path(kernel).exists() or plugins is None or not (plugins / "libh5async.so").exists():
        pytest.skip("vol-async and the kernel against the thread-safe HDF5 are not built here: `make vol-kernel`")
    if darshan.runtime.detect_ts() is None:
        pytest.skip("no Darshan built against the thread-safe HDF5 (build/.darshan-ts-prefix, DARSHAN_TS_PREFIX): "
                    "`make darshan-ts`")
    return kernel


@pytest.mark.vendored
@pytest.mark.darshan
@pytest.mark.dlio
@pytest.mark.slow
def test_live_darshan_under_vol_async(tmp_path, monkeypatch):
    """Darshan under vol-async (docs/vol-validation.md, "Profilers under a connector"): the vol kernel gets the Darshan
    built against its thread-safe HDF5, DLIO's side its own. Explicit async reads (VOL=async-prefetch): per data file
    the POSIX and DXT records equal DLIO's (async's background thread is recorded), H5F/H5D not compared, saying why
    (Darshan's HDF5 module wraps no *_async call); implicit (VOL=async, the ranks reading): H5F opens and H5D reads
    equal too. Negative control: a lost async read (mutant async-lost-read) fails the per-file check, one read short."""
    import json
    info, venv = _live()
    if not darshan.runtime.h5py_build(Path(venv))["mpi"]:
        pytest.skip("DLIO's side cannot run under Darshan's HDF5 module without the MPI h5py venv "
                    "(H5DLIO_DLIO_VENV_MPI: `make dlio-venv-spec DLIO_H5PY=mpi`)")
    monkeypatch.setenv("H5DLIO_KERNEL_BIN", _vol_kernel())
    run, c = _live_run(tmp_path, info, venv, "unet3d", "prefetch", "--vol", "async-prefetch", "--timeout", "300")
    k = json.loads((run / "tables" / "darshan-kernel.json").read_text())
    assert c["darshan.per_file"]["status"] == "pass", c["darshan.per_file"]
    assert "H5Dread_async" in c["darshan.per_file"]["detail"] and "H5D" not in k["modules"]
    assert c["darshan.explained"]["status"] == "pass", c["darshan.explained"]
    _, i = _live_run(tmp_path, info, venv, "unet3d", "implicit", "--vol", "async", "--timeout", "300",
                     "--reuse-dlio", str(run))
    assert i["darshan.per_file"]["status"] == "pass" and "h5f_opens, h5d" in i["darshan.per_file"]["detail"], i
    monkeypatch.setenv("H5DLIO_MUTATE", "async-lost-read")
    _, bad = _live_run(tmp_path, info, venv, "unet3d", "lost", "--vol", "async-prefetch", "--timeout", "300",
                       "--reuse-dlio", str(run))
    assert bad["darshan.per_file"]["status"] == "fail" and "'field': 'reads'" in bad["darshan.per_file"]["detail"]
    assert bad["darshan.per_file"]["observed"] == 27


# ------------------------------------------- a kernel-only run: the kernel's Darshan records against the model

KONLY = DATA / "kernel-only-unet3d"  # a real kernel-only run's manifest, workload and Darshan table (README.md)


def _konly(tmp_path: Path, plant=None, manifest=None) -> dict:
    """check_darshan over a copy of the committed kernel-only run, its table (and manifest) changed by `plant`
    (`manifest`) first: its rows by name."""
    import json

    from validate import checks
    run = tmp_path / "run"
    shutil.copytree(KONLY, run, dirs_exist_ok=True)
    for name, fn in (("tables/darshan-kernel.json", plant), ("manifest.json", manifest)):
        if fn:
            t = json.loads((run / name).read_text())
            fn(t)
            (run / name).write_text(json.dumps(t))
    return {c["name"]: c for c in darshan.checks.check_darshan(checks.Run(run))}


def test_kernel_only_darshan_records_pass_against_the_model(tmp_path):
    """tiny unet3d (28 one-sample files of ~1 MB, record_length_stdev: each file its own sample bytes; 2 epochs, all
    28 read in each: 2 ranks x batch 7 x 2 steps), kernel-only under Darshan: counts.darshan.kernel is the only row
    and passes, judging POSIX opens, H5F opens, H5D reads and bytes per file; the whole validation keeps it."""
    import json

    from validate import checks
    cfg = json.loads((KONLY / "manifest.json").read_text())["workload"]["config"]
    opens = cfg["dataset"]["num_files_train"] * cfg["train"]["epochs"]
    rows = _konly(tmp_path)
    assert list(rows) == ["counts.darshan.kernel"]
    c = rows["counts.darshan.kernel"]
    assert c["status"] == "pass" and c["expected"] == c["observed"] == opens, c
    assert "H5F opens, H5D reads and bytes" in c["detail"]
    v = checks.validate(tmp_path / "run")
    assert v["verdict"] == "pass" and {x["name"]: x["status"] for x in v["checks"]}["counts.darshan.kernel"] == "pass"


def _first(t: dict) -> dict:
    return t["files"]["train/img_05_of_28.hdf5"]


def _stray(t: dict) -> None:
    t["files"]["train/stray.hdf5"] = {**_first(t), "opens": 1}


def _more(t: dict) -> None:
    _first(t)["opens"] += 1


def _bytes(t: dict) -> None:
    _first(t)["h5d"]["records"]["bytes"] -= 1


def _h5f(t: dict) -> None:
    _first(t)["h5f_opens"] += 1


def _h5d_read(t: dict) -> None:
    _first(t)["h5d"]["records"]["reads"] += 1


def _posix_partial(t: dict) -> None:
    t["partial"] = [f"{t['logs'][0]}:POSIX"]


def _child(t: dict) -> None:
    t["children"] = [{"log": "x.darshan", "exe": "/bin/cat", "data_files": ["train/img_05_of_28.hdf5"],
                      "checkpoint_files": []}]


def _moved(name: str):
    """File 5's record renamed: read in its place from another folder or another dataset's file of that index."""
    def plant(t: dict) -> None:
        t["files"][name] = t["files"].pop("train/img_05_of_28.hdf5")
    return plant


@pytest.mark.parametrize("plant,says", [
    (_more, "1 files opened more than modelled (first [5])"),
    (_moved("valid/img_05_of_28.hdf5"), "opens of files without DLIO's name"),
    (_moved("train/img_05_of_29.hdf5"), "opens of files without DLIO's name"),
    (_moved("other/train/img_05_of_28.hdf5"), "opens of files without DLIO's name"),
    (lambda t: t["files"].pop("train/img_05_of_28.hdf5"), "1 modelled files never opened (first [5])"),
    (_bytes, "H5D bytes] differ"), (_h5f, "H5D bytes] differ"), (_h5d_read, "H5D bytes] differ"),
    (_stray, "1 opens of files without DLIO's name"), (_posix_partial, "ran out of record memory"),
    (_child, "child processes touched data files")])
def test_kernel_only_darshan_records_fail_a_planted_divergence(tmp_path, plant, says):
    """Negative controls on the real table: an extra open of one file, a file never opened, one H5D byte less, an H5F
    open or H5D read more, an open of a file without DLIO's name, a POSIX module out of record memory, a child process
    reading a data file, file 5 read from the evaluation folder, from a dataset of 29 files or from elsewhere (the
    index alone matches): each FAILs counts.darshan.kernel, saying which."""
    c = _konly(tmp_path, plant)["counts.darshan.kernel"]
    assert c["status"] == "fail" and says in c["detail"], c


def test_kernel_only_darshan_check_applies_where_the_model_names_each_file(tmp_path):
    """Where it does not apply, the side-by-side skip stays: a run with both sides (one table missing), two samples
    per file (an open is no longer one sample's). A DXT module out of record memory only is said, not failed (its
    segments are not judged)."""
    def both(m):
        m["sides"] = ["dlio", "kernel"]

    def two(m):
        m["workload"]["config"]["dataset"]["num_samples_per_file"] = 2
    for i, fix in enumerate((both, two)):
        assert list(_konly(tmp_path / str(i), manifest=fix)) == ["darshan.per_file"]
    c = _konly(tmp_path / "dxt", lambda t: t.update(partial=[f"{t['logs'][0]}:DXT_POSIX"]))["counts.darshan.kernel"]
    assert c["status"] == "pass" and "DXT ran out of record memory in 1 logs" in c["detail"], c


@pytest.mark.vendored
@pytest.mark.darshan
@pytest.mark.dlio
@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, "extra-open", "skip-read", "read-offset"])
def test_live_kernel_only_darshan_against_the_model(tmp_path, monkeypatch, mutant):
    """`--sides kernel --profiles darshan` of tiny unet3d (the DLIO venv only for the probe): counts.darshan.kernel
    passes with 28 files x 2 epochs of opens, and the verdict with it; each kernel read mutant FAILs it, and only it:
    extra-open (a file opened once more), skip-read (a sample never read: its file opened once less), read-offset
    (one H5D read a row element short)."""
    info, venv = _live()
    if mutant:
        monkeypatch.setenv("H5DLIO_MUTATE", mutant)
    _, c = _live_run(tmp_path, info, venv, "unet3d", mutant or "base", "--sides", "kernel")
    k = c["counts.darshan.kernel"]
    assert k["expected"] == 28 * 2, k
    failed = sorted(n for n, x in c.items() if x["status"] == "fail")
    if mutant is None:
        assert k["status"] == "pass" and not failed, (k, failed)
        return
    assert failed == ["counts.darshan.kernel"], failed
    assert k["observed"] == {"extra-open": 57, "skip-read": 55, "read-offset": 56}[mutant], k
    assert {"extra-open": "opened more", "skip-read": "opened less", "read-offset": "H5D bytes] differ"}[mutant] \
        in k["detail"], k


@pytest.mark.parametrize("name,ok", [("h5dlio-generation.json", True), ("train/h5dlio-generation.json", False)])
def test_kernel_only_darshan_leaves_the_kernels_completion_record_out(tmp_path, name, ok):
    """The kernel's read of its completion record (rank 0, before it reads the folder: one open, one read) at the
    top of its data folder is no data file of counts.darshan.kernel. Negative control: the same name in train/ is an
    open of a file without DLIO's name, and fails it."""
    def plant(t):
        t["files"][name] = {**_first(t), "opens": 1, "reads": 1, "bytes": 154, "h5f_opens": 0, "h5d": {}}
    c = _konly(tmp_path, plant)["counts.darshan.kernel"]
    assert (c["status"] == "pass") == ok, c
