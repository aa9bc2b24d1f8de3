"""`make install PREFIX=<dir>` as HPC centres install software (mk/install.mk): the program under both names, runnable
from any folder with its HDF5 (rpath), the configs and examples, a man page generated from the options table, and
an Lmod modulefile that `module load h5dlio` takes (Debian's Lmod: `make lmod`), and the Python tools the kernel runs
as `h5dlio sizing` and `h5dlio runs` (libexec/h5dlio/, their packages in share/h5dlio)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


def _tool(prefix: Path, cwd: Path, *args: str, block: str = "") -> subprocess.CompletedProcess:
    """`<prefix>/bin/h5dlio <args>` from a folder outside the checkout, with no PYTHONPATH of the checkout: the tools
    import only what was installed. block: a module made unimportable (a PYTHONPATH folder whose <block> package
    raises ImportError), as on a Python without it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "H5DLIO_KERNEL_BIN", "H5DLIO_RUNS_DB")}
    env["H5DLIO_PYTHON"] = sys.executable   # the test venv: PyYAML, numpy, matplotlib
    if block:
        (cwd / "blocked" / block).mkdir(parents=True, exist_ok=True)
        (cwd / "blocked" / block / "__init__.py").write_text(f"raise ImportError('no {block} here')\n")
        env["PYTHONPATH"] = str(cwd / "blocked")
    return subprocess.run([str(prefix / "bin" / "h5dlio"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_installed_tools_run_from_the_kernel(prefix, tmp_path):
    """`h5dlio runs` and `h5dlio sizing` reach the installed tools (named so in their help and errors) from any folder;
    the run store keeps a committed run. Controls: a bare word that is no tool is still refused by the kernel; the
    build tree's kernel, with no tool beside it, refuses with exit 2 naming `make install`."""
    db = tmp_path / "runs.sqlite"
    add = _tool(prefix, tmp_path, "runs", "add", str(REPO / "tests" / "data" / "run-tiny"), "--db", str(db))
    assert add.returncode == 0 and "added" in add.stdout, add.stdout + add.stderr
    listed = _tool(prefix, tmp_path, "runs", "list", "--db", str(db))
    assert listed.returncode == 0 and "unet3d-tiny-20261122-010853" in listed.stdout, listed.stdout + listed.stderr
    assert _tool(prefix, tmp_path, "runs", "show", "--help").stdout.startswith("usage: h5dlio runs show")
    bad = _tool(prefix, tmp_path, "sizing", "--ranks-max", "0", "--dlio-venv", str(tmp_path / "v"))
    assert bad.returncode == 2 and "RANKS_MAX=0" in bad.stderr, bad.stdout + bad.stderr
    assert _tool(prefix, tmp_path, "sizing", "--help").stdout.startswith("usage: h5dlio sizing")
    assert not (tmp_path / "runs").exists()   # bad input made no sizing folder
    word = _tool(prefix, tmp_path, "sizingg")
    assert word.returncode != 0 and "unknown argument 'sizingg'" in word.stderr, word.stderr
    built = subprocess.run([str(REPO / "build" / "h5dlio"), "runs", "list"], capture_output=True, text=True)
    assert built.returncode == 2 and "not installed beside this program" in built.stderr and "make install" in \
        built.stderr, built.stderr


@pytest.mark.slow
def test_installed_tools_name_a_missing_python_module(prefix, tmp_path):
    """On a Python without numpy: `h5dlio runs` exits 2 naming numpy and H5DLIO_PYTHON (the launcher's check), while
    `h5dlio sizing`, which needs no numpy, still runs (the profiles it imports load lazily). Control: the same Python
    with numpy lists the store (above)."""
    runs = _tool(prefix, tmp_path, "runs", "list", "--db", str(tmp_path / "x.sqlite"), block="numpy")
    assert runs.returncode == 2 and "cannot import numpy" in runs.stderr and "H5DLIO_PYTHON" in runs.stderr, runs
    sizing = _tool(prefix, tmp_path, "sizing", "--help", block="numpy")
    assert sizing.returncode == 0 and sizing.stdout.startswith("usage: h5dlio sizing"), sizing.stdout + sizing.stderr
