"""The HDF5 VOL connector (docs/vol.md): the kernel takes it from HDF5's own variables (HDF5_VOL_CONNECTOR,
HDF5_PLUGIN_PATH), from its `vol-connector` key, or from an h5bench configuration's `vol` block; the results name the
stack HDF5 reports; a connector HDF5 cannot set up ends the job with status 2 naming it, on every rank, where HDF5
alone would fall back to the native connector and say nothing.

The pass-through connector built into HDF5 1.14 (`pass_through under_vol=0;under_info={}`) forwards every call to the
native one: it must be named in the results and must read the same bytes as native, record for record in the Log VFD
trace of each rank."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from kernel import BIN, MPIRUN, kernel_info, run, tiny

PASS = "pass_through under_vol=0;under_info={}"
# the pass-through connector over itself over native (value 1 is the pass-through connector's, H5VLpassthru.h)
PASS2 = "pass_through under_vol=1;under_info={under_vol=0;under_info={}}"


@pytest.fixture(autouse=True)
def _needs_vol():
    if kernel_info()["hdf5"] < (1, 14, 0):
        pytest.skip("this HDF5 has no VOL layer the kernel uses (< 1.14): test_vol_on_hdf5_without_vol covers it")


@pytest.fixture()
def dataset(tmp_path):
    """A tiny dataset generated once, on the native connector with no connector variable set."""
    gen = tiny(tmp_path / "data", **{"generate-data": True, "train": False})
    r = run(tmp_path, 1, gen, name="gen", env={"HDF5_VOL_CONNECTOR": ""})
    assert r.rc == 0, r.proc.stderr
    return tmp_path / "data"


def errors(stderr: str) -> list[str]:
    """The kernel's error lines. Each is one write(2), but the other ranks' HDF5-DIAG stacks go to the same stderr at
    the same moment, so one may start in the middle of a line of theirs (seen once in CI under load)."""
    return re.findall(r"h5dlio: (?:rank \d+: )?[^\n]*?error: [^\n]*", stderr)


def csv_value(out, metric: str) -> str:
    with open(out / "output.csv") as f:
        rows = {r[0]: r[1] for r in csv.reader(f, skipinitialspace=True) if r}
    return rows[metric]


# (id, --set, env, the words the one error line must hold)
UNKNOWN = [
    ("env", {}, {"HDF5_VOL_CONNECTOR": "nosuch_vol"}, ["HDF5_VOL_CONNECTOR", "'nosuch_vol'", "can't find plugin"]),
    ("key", {"vol-connector": "nosuch_vol"}, {}, ["key 'vol-connector'", "'nosuch_vol'", "can't find plugin"]),
    ("env, empty plugin folder", {}, {"HDF5_VOL_CONNECTOR": "nosuch_vol", "HDF5_PLUGIN_PATH": "@empty"},
     ["'nosuch_vol'", "HDF5_PLUGIN_PATH '@empty'"]),
    ("pass-through with an unknown connector below", {"vol-connector": "pass_through under_vol=4242;under_info={}"},
     {}, ["'pass_through under_vol=4242;under_info={}'"]),
]


@pytest.mark.parametrize("read_threads", [0, 2])
@pytest.mark.parametrize("sets,env,words", [u[1:] for u in UNKNOWN], ids=[u[0] for u in UNKNOWN])
def test_a_connector_hdf5_cannot_load_exits_2_naming_it(tmp_path, sets, env, words, read_threads):
    """Every rank leaves with status 2 (no hang: the run has a timeout; reader processes forked before MPI_Init end
    too), one error line names the connector and where it came from, and nothing is generated or written."""
    empty = tmp_path / "plugins"
    empty.mkdir()
    env = {k: v.replace("@empty", str(empty)) for k, v in env.items()}
    words = [w.replace("@empty", str(empty)) for w in words]
    s = tiny(tmp_path / "data", **{"generate-data": True, "train": True, "read-threads": read_threads, **sets})
    r = run(tmp_path, 2, s, env={"HDF5_VOL_CONNECTOR": "", **env}, timeout=60)
    assert r.rc == 2, f"exit {r.rc}: {r.proc.stderr[-3000:]}"
    errs = errors(r.proc.stderr)
    assert len(errs) == 1, r.proc.stderr[-3000:]
    for w in words:
        assert w in errs[0], f"{w!r} not in {errs[0]!r}"
    assert not (tmp_path / "data").exists() and not r.out.exists(), "a refused connector must do no I/O"


def test_key_and_variable_naming_different_connectors_exit_2(tmp_path):
    s = tiny(tmp_path / "data", **{"generate-data": True, "vol-connector": PASS})
    r = run(tmp_path, 2, s, env={"HDF5_VOL_CONNECTOR": "native"}, timeout=60)
    assert r.rc == 2, r.proc.stderr[-2000:]
    errs = errors(r.proc.stderr)
    assert len(errs) == 1 and "key 'vol-connector'" in errs[0] and "HDF5_VOL_CONNECTOR='native'" in errs[0], errs


def _stack(r) -> list[str]:
    return r.summary()["vol"]["stack"]


def test_native_is_named_native(tmp_path, dataset):
    r = run(tmp_path, 2, tiny(dataset, train=True), env={"HDF5_VOL_CONNECTOR": ""})
    assert r.rc == 0, r.proc.stderr[-2000:]
    vol = r.summary()["vol"]
    assert vol["stack"] == ["native"] and vol["connector"] == "native" and vol["info"] == ""
    assert vol["selected_by"] == "none"
    assert csv_value(r.out, "vol connector") == "native"


@pytest.mark.parametrize("how", ["env", "key", "native by name"])
def test_the_results_name_the_stack_hdf5_uses(tmp_path, dataset, how):
    """What HDF5 reports, not the request echoed: the request is one string, the stack is HDF5's names of each
    connector (the one below the pass-through is found from its info, named by HDF5)."""
    conn = "native" if how == "native by name" else PASS
    sets, env = ({"vol-connector": conn}, {"HDF5_VOL_CONNECTOR": ""}) if how == "key" else \
        ({}, {"HDF5_VOL_CONNECTOR": conn})
    r = run(tmp_path, 2, {**tiny(dataset, train=True), **sets, "quiet": False}, env=env)
    assert r.rc == 0, r.proc.stderr[-2000:]
    want = ["native"] if conn == "native" else ["pass_through", "native"]
    vol = r.summary()["vol"]
    assert vol["stack"] == want
    assert vol["selected_by"] == ("key 'vol-connector'" if how == "key" else "HDF5_VOL_CONNECTOR")
    if conn == PASS:
        assert vol["info"] == "under_vol=0;under_info={}"
    assert csv_value(r.out, "vol connector") == " > ".join(want)
    assert f"VOL {' > '.join(want)}," in r.proc.stdout


def test_a_stack_of_three_is_named_in_order(tmp_path, dataset):
    r = run(tmp_path, 1, tiny(dataset, train=True, epochs=1), env={"HDF5_VOL_CONNECTOR": PASS2})
    assert r.rc == 0, r.proc.stderr[-2000:]
    assert _stack(r) == ["pass_through", "pass_through", "native"]
    assert csv_value(r.out, "vol connector") == "pass_through > pass_through > native"


@pytest.mark.parametrize("read_threads", [0, 2])
def test_pass_through_reads_the_same_bytes_as_native(tmp_path, dataset, read_threads):
    """Per rank, the Log VFD records (every metadata and raw read, address and size) of a pass-through run equal the
    native run's, in order where the rank reads itself, as a multiset with reader processes; the sample logs and
    the summary's counts are equal too."""
    base = {**tiny(dataset, train=True, evaluation=True), "read-threads": read_threads, "log-vfd": True}
    a = run(tmp_path, 2, base, log=True, name="native", env={"HDF5_VOL_CONNECTOR": ""})
    b = run(tmp_path, 2, {**base, "vol-connector": PASS}, log=True, name="pass", env={"HDF5_VOL_CONNECTOR": ""})
    assert a.rc == 0 and b.rc == 0, a.proc.stderr[-2000:] + b.proc.stderr[-2000:]
    assert _stack(a) == ["native"] and _stack(b) == ["pass_through", "native"]
    for rank in range(2):
        ta, tb = a.logvfd(rank), b.logvfd(rank)
        assert any(rec[3] == "H5FD_MEM_DRAW" and rec[4] == "Read" for rec in ta), "no raw read in the trace"
        if read_threads == 0:
            assert ta == tb
        else:
            assert Counter(ta) == Counter(tb)
        assert a.samples(rank) == b.samples(rank)
    for phase in ("train", "eval"):
        for ea, eb in zip(a.summary()[phase]["epochs"], b.summary()[phase]["epochs"], strict=True):
            for k in ("samples", "bytes", "opens", "reads"):
                assert ea[k] == eb[k] > 0, (phase, k, ea[k], eb[k])


def test_an_h5bench_vol_block_selects_the_connector(tmp_path, dataset):
    """h5bench's runner puts `vol.connector` into HDF5_VOL_CONNECTOR of the job it launches; the kernel reading the
    same file with --entry takes it itself (an unknown one exits 2 naming it)."""
    conf = {"train": "true", "data-folder": dataset.name, "num-files-train": "8", "num-files-eval": "2",
            "num-samples-per-file": "4", "record-length": "65536", "batch-size": "2", "read-threads": "0",
            "epochs": "1", "computation-time": "0", "naming": "dlio", "keep-files": "true", "quiet": "true"}
    for name, conn, rc in (("pass", PASS, 0), ("bad", "nosuch_vol", 2)):
        suite = {"mpi": {}, "vol": {"connector": conn}, "file-system": {}, "directory": str(dataset.parent),
                 "benchmarks": [{"benchmark": "dlio", "configuration": conf}]}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(suite))
        out = tmp_path / name
        p = subprocess.run(MPIRUN + ["-np", "2", BIN, "--config", str(path), "--entry", "1", "--set",
                                     f"output-folder={out}"], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, HDF5_VOL_CONNECTOR=""))
        assert p.returncode == rc, p.stderr[-2000:]
        if rc == 0:
            vol = json.loads((out / "output.json").read_text())["vol"]
            assert vol["stack"] == ["pass_through", "native"] and vol["selected_by"] == "key 'vol-connector'"
        else:
            errs = errors(p.stderr)
            assert len(errs) == 1 and "'nosuch_vol'" in errs[0], p.stderr[-2000:]
            assert not out.exists()


BROKEN_PLUGIN = r"""
/* a VOL plugin as HDF5 finds one (H5PLextern.h's two entry points) whose first call needs a symbol nothing defines:
 * like vol-async built against a HDF5 without thread safety (H5TSmutex_release) */
extern int h5dlio_test_missing_symbol(void);
int H5PLget_plugin_type(void) { return h5dlio_test_missing_symbol(); }
const void *H5PLget_plugin_info(void) { return 0; }
"""


def test_a_plugin_that_does_not_link_exits_2_naming_it(tmp_path):
    """HDF5 opens every library of its plugin folders lazily while looking for a connector and calls into it: one
    with an unresolved symbol kills the process in the dynamic linker (exit 127, no message). The kernel opens each
    one first with every symbol bound and names the one that does not link."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler here to build the test plugin")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (tmp_path / "broken.c").write_text(BROKEN_PLUGIN)
    lib = plugins / "libbroken_vol.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "broken.c")], check=True)
    s = tiny(tmp_path / "data", **{"generate-data": True, "train": True})
    r = run(tmp_path, 2, s, env={"HDF5_VOL_CONNECTOR": "broken_vol", "HDF5_PLUGIN_PATH": str(plugins)}, timeout=60)
    assert r.rc == 2, f"exit {r.rc}: {r.proc.stderr[-2000:]}"
    errs = errors(r.proc.stderr)
    assert len(errs) == 1, r.proc.stderr[-2000:]
    for w in ("'broken_vol'", str(lib), "undefined symbol: h5dlio_test_missing_symbol"):
        assert w in errs[0], f"{w!r} not in {errs[0]!r}"
    assert not (tmp_path / "data").exists() and not r.out.exists()


VOL_PREFIX = os.environ.get("H5DLIO_VOL_PREFIX", "")  # `make vol-deps`: the connectors' install (build/.vol-prefix)
BIN_TS = os.environ.get("H5DLIO_BIN_TS", "")  # the kernel built against the thread-safe HDF5 (make build HDF5_DIR=)
ASYNC = "async under_vol=0;under_info={}"


def _need_vol_deps():
    if not VOL_PREFIX or not Path(VOL_PREFIX, "lib", "libh5async.so").exists():
        pytest.skip("vol-async is not built here: `make vol-deps`, then H5DLIO_VOL_PREFIX=$(cat build/.vol-prefix)")


def test_vol_async_built_against_another_hdf5_exits_2(tmp_path, dataset):
    """The measured case of issue 28: vol-async linked against the thread-safe HDF5, loaded by the kernel built
    against the project's non-thread-safe one (undefined symbol H5TSmutex_*): exit 2 naming the library."""
    _need_vol_deps()
    r = run(tmp_path, 2, tiny(dataset, train=True),
            env={"HDF5_VOL_CONNECTOR": ASYNC, "HDF5_PLUGIN_PATH": str(Path(VOL_PREFIX, "lib"))}, timeout=60)
    assert r.rc == 2, r.proc.stderr[-2000:]
    errs = errors(r.proc.stderr)
    assert len(errs) == 1 and "undefined symbol: H5TSmutex_" in errs[0] and f"'{ASYNC}'" in errs[0], errs


def test_vol_async_is_named_and_reads_the_same_bytes(tmp_path, monkeypatch):
    """With the thread-safe HDF5 and vol-async built by `make vol-deps`: the stack is async > native, and the sample
    logs and counts equal a native run's (the kernel's calls are synchronous; async only stacks under them)."""
    _need_vol_deps()
    if not BIN_TS or not Path(BIN_TS).exists():
        pytest.skip("no kernel built against the thread-safe HDF5: make build HDF5_DIR=$(cat build/.hdf5-ts-prefix), "
                    "then H5DLIO_BIN_TS=build/hdf5-<hash>/h5dlio")
    import kernel
    monkeypatch.setattr(kernel, "BIN", BIN_TS)
    gen = tiny(tmp_path / "data", **{"generate-data": True, "train": False})
    assert run(tmp_path, 1, gen, name="gen", env={"HDF5_VOL_CONNECTOR": ""}).rc == 0
    base = tiny(tmp_path / "data", train=True, evaluation=True)
    a = run(tmp_path, 2, base, name="native", env={"HDF5_VOL_CONNECTOR": ""})
    b = run(tmp_path, 2, base, name="async",
            env={"HDF5_VOL_CONNECTOR": ASYNC, "HDF5_PLUGIN_PATH": str(Path(VOL_PREFIX, "lib"))})
    assert a.rc == 0 and b.rc == 0, a.proc.stderr[-2000:] + b.proc.stderr[-2000:]
    assert _stack(a) == ["native"] and _stack(b) == ["async", "native"]
    for rank in range(2):
        assert a.samples(rank) == b.samples(rank)
    for phase in ("train", "eval"):
        for ea, eb in zip(a.summary()[phase]["epochs"], b.summary()[phase]["epochs"], strict=True):
            for k in ("samples", "bytes", "opens", "reads"):
                assert ea[k] == eb[k] > 0, (phase, k, ea[k], eb[k])
