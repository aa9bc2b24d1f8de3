"""`make install PREFIX=<dir>` as HPC centres install software (mk/install.mk): the program under both names, runnable
from any folder with its HDF5 (rpath), the configs and examples, a man page generated from the options table, and
an Lmod modulefile that `module load h5dlio` takes (Debian's Lmod: `make lmod`)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def _make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, env=_env(), capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    if not (REPO / "build" / ".hdf5-prefix").exists():
        pytest.skip("the kernel's HDF5 is not built here: run `make build` (or `make test`)")
    p = tmp_path_factory.mktemp("inst") / "h5dlio"
    r = _make("install", f"PREFIX={p}")
    assert r.returncode == 0, r.stdout + r.stderr
    return p


@pytest.mark.slow
def test_install_lays_out_the_program_configs_and_docs(prefix):
    assert (prefix / "bin" / "h5bench_dlio").resolve() == (prefix / "bin" / "h5dlio").resolve()
    for rel in ("share/h5dlio/reference-configs/unet3d.yaml", "share/h5dlio/examples/unet3d.yaml",
                "share/doc/h5dlio/README.md", "share/doc/h5dlio/kernel.md", "share/man/man1/h5dlio.1"):
        assert (prefix / rel).is_file(), rel
    # runs from another folder, with the HDF5 it was built against (its rpath), under both names
    for name in ("h5dlio", "h5bench_dlio"):
        out = subprocess.run([str(prefix / "bin" / name), "--version"], cwd="/", capture_output=True, text=True,
                             timeout=60, env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
        assert out.returncode == 0 and re.match(r"h5dlio \S+ \(git \S+\) HDF5 1\.", out.stdout), out


@pytest.mark.slow
def test_man_page_holds_every_key_of_the_options_table(prefix):
    page = (prefix / "share" / "man" / "man1" / "h5dlio.1").read_text()
    assert page.startswith(".TH H5DLIO 1") and ".SH SYNOPSIS" in page and ".SH OPTIONS AND KEYS" in page
    helptext = subprocess.run([str(prefix / "bin" / "h5dlio"), "--help"], capture_output=True, text=True).stdout
    keys = re.findall(r"^([a-z][a-z0-9-]+)\s{2,}", helptext.split("KEY ", 1)[1], re.M)
    assert len(keys) > 40
    missing = [k for k in keys if not re.search(rf"^{re.escape(k)}\s", page, re.M)]
    assert not missing, missing
    if shutil.which("groff"):  # it renders as a man page, without a warning
        r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(prefix / "share/man/man1/h5dlio.1")],
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr[:2000]


@pytest.mark.slow
def test_module_load_puts_h5dlio_on_the_path(prefix, tmp_path):
    if not LMOD_INIT.exists():
        pytest.skip(f"Lmod is not installed here (no {LMOD_INIT}): `make lmod` installs Debian's")
    script = (f"source {LMOD_INIT}; module use {prefix}/share/modulefiles; module load h5dlio; "
              "command -v h5dlio; h5dlio --version; echo \"configs=$H5DLIO_CONFIGS\"; man -w h5dlio")
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "MODULEPATH")})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == str(prefix / "bin" / "h5dlio")
    assert lines[1].startswith("h5dlio ") and "HDF5 1." in lines[1]
    assert f"configs={prefix}/share/h5dlio/reference-configs" in lines
    assert lines[-1] == str(prefix / "share" / "man" / "man1" / "h5dlio.1")


@pytest.mark.parametrize("args,words", [([], ["set PREFIX="]), (["PREFIX=/etc/hostname"], ["not a folder"])],
                         ids=["no PREFIX", "PREFIX a file"])
def test_install_refuses_a_bad_prefix(args, words):
    r = _make("install", *args)
    assert r.returncode != 0 and all(w in r.stderr for w in words), r.stdout + r.stderr
    assert "Error 2" in r.stderr
