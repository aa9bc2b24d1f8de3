"""DLIO_QUIET_MAP=1 (harness/dlio_site/sitecustomize.py): DLIO's index map keeps its contents and gets a short text.

Run in the reference DLIO venv, on DLIO's own `get_global_map_index` (a stand-in `self` with the attributes it
reads): with the module on PYTHONPATH the map equals DLIO's entry for entry and its text stays short however many
samples it holds; without it (the control) DLIO's text grows with the samples, which is the per-read cost the module
removes (DLIO formats it at every read: reader/reader_handler.py:115 of 2.0.0)."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness import plan as hplan
from harness.workload import load
from tests.test_dlio_probe import dlio_venv
from tests.test_harness import _setup

PROBE = textwrap.dedent("""
    import json, sys, types
    from dlio_benchmark.utils.config import ConfigArguments
    out = {}
    for n in (10, 10000):
        me = types.SimpleNamespace(comm_size=2, my_rank=1, num_samples_per_file=1)
        files = [f"/data/img_{i:06d}.h5" for i in range(n)]
        m = ConfigArguments.get_global_map_index(me, files, n)
        out[n] = {"entries": len(m), "text": len(f"{m}"), "first": list(m.items())[0]}
    print(json.dumps(out))
""")


def probe(venv: Path, quiet: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if quiet:
        env["PYTHONPATH"] = str(hplan.DLIO_SITE)
    r = subprocess.run([str(venv / "bin" / "python"), "-c", PROBE], env=env, capture_output=True, text=True,
                       timeout=300, cwd="/")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.dlio
def test_quiet_index_map_keeps_the_map_and_shortens_its_text():
    venv = dlio_venv()
    if not list((venv / "lib").glob("python3*/site-packages/dlio_benchmark-2.*")):
        pytest.skip("the reference DLIO is not 2.x: 3.x (f6796ed) keeps its index map as a VirtualIndexMap whose "
                    "text is already short (utils/config.py:41-105), and the module leaves it alone")
    quiet, plain = probe(venv, True), probe(venv, False)
    for n in ("10", "10000"):
        # the same entries: rank 1 of 2 holds the second half of the samples, each (file, sample 0)
        assert quiet[n]["entries"] == plain[n]["entries"] == int(n) // 2
        assert quiet[n]["first"] == plain[n]["first"] == [int(n) // 2, [f"/data/img_{int(n) // 2:06d}.h5", 0]]
    # the control: DLIO's own text grows with the samples (~40 characters per entry) ...
    assert plain["10000"]["text"] > 100 * plain["10"]["text"] > 0
    # ... the quiet map's does not
    assert quiet["10000"]["text"] < 120 and quiet["10"]["text"] < 120


def test_quiet_index_map_reaches_only_dlio_launches(tmp_path):
    """The flag puts the module on DLIO's ranks' PYTHONPATH (the launcher's -x) and nowhere else; without the flag no
    launch gets it; the manifest says which."""
    base = {"model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
            "reader": {"batch_size": 2, "read_threads": 4}, "workflow": {"checkpoint": False}}
    dl, refs = _setup(tmp_path, {"base": "base_wl", "scales": {"tiny": {}}}, base)
    wl = load("w", "tiny", dl, refs)
    for flag in (True, False):
        opt = hplan.Options(profiles=["timing", "logvfd"], dlio_quiet_index_map=flag)
        steps = hplan.launches(tmp_path / str(flag), hplan.build(wl, opt, tmp_path / "venv"))
        assert {st.side for st in steps} == {"dlio", "kernel"}
        for st in steps:
            has = str(hplan.DLIO_SITE) in st.env_changes.get("PYTHONPATH", "")
            assert has == (flag and st.side == "dlio"), (flag, st.name, st.env_changes)
            assert any(str(hplan.DLIO_SITE) in a for a in st.argv) == has
    assert (hplan.DLIO_SITE / "sitecustomize.py").is_file()
