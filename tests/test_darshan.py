"""Darshan profile: detection (skips with its reason when no runtime is installed) and the parser on real logs
(../shared/fixtures/darshan, copied to tests/data/darshan: 2 ranks, one file with records uint8 4x1024x1024 and
labels int64 x4, each rank reading samples one open at a time for 2 epochs: 8 samples in all)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from profiles import darshan

DATA = Path(__file__).parent / "data" / "darshan"
SAMPLE = 1024 * 1024


def test_no_runtime_is_a_clean_skip(monkeypatch, tmp_path):
    monkeypatch.delenv("DARSHAN_PREFIX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no darshan-config anywhere
    info = darshan.detect()
    assert info == {"available": False, "reason": "no Darshan runtime found (set DARSHAN_PREFIX or put darshan-config "
                                                  "on PATH)"}


def test_detects_an_install_and_its_modules(monkeypatch, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libdarshan.so").write_bytes(b"")
    (tmp_path / "bin").mkdir()
    cfg = tmp_path / "bin" / "darshan-config"
    cfg.write_text(f'#!/bin/sh\ncase "$1" in --hdf5-mod) echo 1;; --dxt-mod) echo 1;;\n'
                   f'  --prefix) echo {tmp_path};; esac\n')
    cfg.chmod(cfg.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("DARSHAN_PREFIX", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    info = darshan.detect()
    assert info["available"] and info["lib"] == str(tmp_path / "lib" / "libdarshan.so")
    assert info["hdf5_mod"] and info["dxt_mod"]
    argv, env = darshan.wrap(["prog"], {}, tmp_path / "step", "kernel", info=info)
    assert env["LD_PRELOAD"] == info["lib"] and "DXT_POSIX" in env["DARSHAN_MOD_ENABLE"]
    assert (tmp_path / "step" / "logs").is_dir()


@pytest.mark.parametrize("log,h5", [("c_sec2", True), ("c_mpio", True), ("py_src", True), ("py_wheel_noh5", False)])
def test_parser_counts_the_eight_sample_reads(log, h5):
    t = darshan.parse_log(DATA / f"{log}.darshan", Path("/scratch/dlio/data"))
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
    t = darshan.parse_log(DATA / "py_src.darshan", Path("/scratch/dlio/data"))
    assert [k for k in t["files"] if t["files"][k]["reads"]] == ["py_img_1_of_1.h5"]  # (+ ROMIO lock tests)
    assert t["other"] and all(o["file"].startswith("/tmp/ompi.") for o in t["other"])
