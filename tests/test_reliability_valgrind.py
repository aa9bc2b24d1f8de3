"""Reliability, memory safety under valgrind (issue 7; ASan/UBSan: `make test-asan`): no error or leak in our code."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel import BIN, tiny
from reliability import SANITIZED, fmt

pytestmark = pytest.mark.slow


def _innermost_own_frame(error_xml: str) -> str | None:
    """The innermost frame outside valgrind's preload and the C library, if it is in our binary."""
    for fr in re.findall(r"<frame>.*?</frame>", error_xml, re.S):
        obj = (re.search(r"<obj>(.*?)</obj>", fr) or [None, ""])[1]
        if "vgpreload" in obj or re.search(r"/libc\.so|/ld-linux", obj):
            continue
        if obj == os.path.realpath(BIN):
            fn = (re.search(r"<fn>(.*?)</fn>", fr) or [None, "?"])[1]
            line = (re.search(r"<file>(.*?)</file>.*?<line>(\d+)</line>", fr, re.S))
            return f"{fn} ({line.group(1)}:{line.group(2)})" if line else fn
        return None
    return None


def test_valgrind_memcheck_tiny_run_has_no_error_or_leak_in_our_code(tmp_path):
    """One process (no mpirun: valgrind sees the rank and its forked reader processes) generates, trains and
    evaluates a tiny dataset, deleting it at the end. Errors and leaks whose innermost non-libc frame is in the
    kernel fail the test; the MPI library's own (its start-up allocations, kept until exit) are counted only."""
    if not shutil.which("valgrind"):
        if os.environ.get("H5DLIO_VALGRIND"):
            pytest.fail("valgrind not installed (make reliability-deps)")
        pytest.skip("valgrind not installed (make reliability-deps)")
    if SANITIZED:
        pytest.skip("valgrind cannot run an ASan binary")
    vg = tmp_path / "vg"
    vg.mkdir()
    supp = ["--suppressions=/usr/share/openmpi/openmpi-valgrind.supp"] \
        if Path("/usr/share/openmpi/openmpi-valgrind.supp").exists() else []
    argv = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite", "--child-silent-after-fork=no", "--num-callers=40",
            "--xml=yes", f"--xml-file={vg}/vg.%p.xml", *supp, BIN]
    sets = {**tiny(tmp_path / "data", **{"generate-data": True, "train": True, "evaluation": True,
                                         "num-files-train": 4, "num-files-eval": 2, "num-samples-per-file": 2,
                                         "record-length": 4096, "read-threads": 2, "keep-files": False,
                                         "record-length-stdev": 1024, "output-ranks-data": True}),
            "output-folder": str(tmp_path / "out")}
    for k, v in sets.items():
        argv += ["--set", f"{k}={fmt(v)}"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "out" / "output.json").exists() and not list((tmp_path / "data").rglob("*.hdf5"))
    ours, library, processes = [], 0, 0
    for f in sorted(vg.glob("vg.*.xml")):
        text = f.read_text(errors="replace")
        processes += "<pid>" in text
        for e in re.findall(r"<error>.*?</error>", text, re.S):
            own = _innermost_own_frame(e)
            kind = re.search(r"<kind>(.*?)</kind>", e).group(1)
            if own:
                ours.append(f"{f.name}: {kind} in {own}")
            else:
                library += 1
    assert processes >= 3, "the rank and its two reader processes were checked"
    print(f"valgrind: {processes} processes, {len(ours)} errors in our code, {library} in libraries")
    assert not ours, "\n".join(ours)
