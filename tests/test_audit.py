"""python -m pipeline audit (docs/audit.md): reading a results leaf (bad input names the file), the LD_PRELOAD it
records, the library named for a call it defines (libraries built here from a few lines of C), each contract row on
hand-made strace tables with its planted divergence; live (the 3.x venv): the three fixture leaves of tests/data/audit
replayed by the kernel, the honest one holding, the no-op fsync and the O_DIRECT-stripping preloads flagged by name."""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import plan as hplan
from pipeline import BadInput, audit
from profiles.strace import audit as contract

LEAVES = Path(__file__).parent / "data" / "audit"
# a no-op fsync (MLPerf Storage v3.0 had a submission preloading one), and a shim that clears O_DIRECT from opens
NOFSYNC = "int fsync(int fd) { (void)fd; return 0; }\nint fdatasync(int fd) { (void)fd; return 0; }\n"
NOODIRECT = r"""#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#define STRIP(name, ...) int name(__VA_ARGS__, int flags, ...) { va_list ap; va_start(ap, flags); \
    mode_t m = va_arg(ap, mode_t); va_end(ap); int (*real)() = (int (*)())dlsym(RTLD_NEXT, #name);
STRIP(open, const char *p) return real(p, flags & ~O_DIRECT, m); }
STRIP(open64, const char *p) return real(p, flags & ~O_DIRECT, m); }
STRIP(openat, int d, const char *p) return real(d, p, flags & ~O_DIRECT, m); }
STRIP(openat64, int d, const char *p) return real(d, p, flags & ~O_DIRECT, m); }
"""
HARMLESS = "int audit_harmless(void) { return 0; }\n"


def build(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.c").write_text(source)
    lib = folder / f"lib{name}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(folder / f"{name}.c"), "-ldl"], check=True)
    return lib


def leaf_copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(LEAVES / name, dst)
    return dst


@pytest.mark.parametrize("remove,named", [("summary.json", "summary.json"),
                                          ("dlio_config/config.yaml", "config.yaml"),
                                          ("training_20261128_100000_metadata.json", "_metadata.json")])
def test_a_leaf_missing_a_file_is_bad_input_naming_it(tmp_path, capsys, remove, named):
    leaf = leaf_copy(tmp_path, "honest")
    assert audit.read_leaf(leaf).workload["reader"]["odirect"] is True  # control: the whole leaf reads
    (leaf / remove).unlink()
    assert audit.main([str(leaf), "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert named in err and "audit: error:" in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing launched


def test_two_metadata_files_and_a_broken_config_are_bad_input(tmp_path):
    leaf = leaf_copy(tmp_path, "honest")
    shutil.copy(leaf / "training_20261128_100000_metadata.json", leaf / "training_20261128_110000_metadata.json")
    with pytest.raises(BadInput, match="2 metadata files"):
        audit.read_leaf(leaf)
    leaf = leaf_copy(tmp_path / "b", "honest")
    (leaf / "dlio_config" / "config.yaml").write_text("workload: [1, 2\n")
    with pytest.raises(BadInput, match="config.yaml: unreadable"):
        audit.read_leaf(leaf)


def test_the_recorded_ld_preload_in_each_form_a_leaf_holds_it():
    assert audit.read_leaf(LEAVES / "nofsync").preload == ["/opt/audit/lib/libnofsync.so"]
    assert audit.read_leaf(LEAVES / "honest").preload == []  # control: none recorded, none found
    cmd = 'mpirun -x LD_PRELOAD="/a/libx.so:/b/liby.so" -x OTHER=1 dlio_benchmark workload=unet3d_b200'
    assert audit.recorded_preload({"executed_command": cmd}) == ["/a/libx.so", "/b/liby.so"]
    assert audit.recorded_preload({"args": {"mpi_params": "-x LD_PRELOAD=/c/libz.so"}}) == ["/c/libz.so"]
    assert audit.recorded_preload({"environment": {"LD_PRELOAD": "/e/libe.so"},
                                   "executed_command": "mpirun -x LD_PRELOAD=/x/libx.so"}) == ["/e/libe.so"]
    assert audit.recorded_preload({"executed_command": "mpirun -x LD_LIBRARY_PATH=/l dlio_benchmark"}) == []


def test_a_recorded_library_not_here_is_bad_input_naming_it(tmp_path):
    with pytest.raises(BadInput, match="libnofsync.so.*PRELOAD_DIR"):
        audit.resolve_preload(["/opt/audit/lib/libnofsync.so"], tmp_path)
    lib = build(tmp_path, "nofsync", NOFSYNC)
    assert audit.resolve_preload(["/opt/audit/lib/libnofsync.so"], tmp_path) == [str(lib.resolve())]


def test_the_library_defining_a_call_is_the_one_named(tmp_path):
    libs = [str(build(tmp_path, n, s)) for n, s in (("harmless", HARMLESS), ("nofsync", NOFSYNC),
                                                    ("noodirect", NOODIRECT))]
    assert contract.culprits(libs, "fsync") == ["libnofsync.so"]
    assert contract.culprits(libs, "O_DIRECT") == ["libnoodirect.so"]
    assert contract.culprits(libs, "fadvise") == []
    assert contract.culprits(libs[:1], "fsync") == []  # control: a library defining none of the calls is never named


def table(odirect: bool = True, fsyncs: int = 1, fadvise: int = 0) -> dict:
    flags = "O_DIRECT|O_RDONLY" if odirect else "O_RDONLY"
    return {"files": {f"train/0/img_{i}.npz": {"open_flags": {flags: 2}, "fsyncs": 0, "fadvise": {}} for i in range(3)},
            "checkpoints": {"global_step1/model.pt": {"fsyncs": fsyncs, "fdatasyncs": 0,
                                                      "fadvise": {"DONTNEED": fadvise} if fadvise else {}}}}


WL = {"workflow": {"checkpoint": True}, "reader": {"odirect": True},
      "dataset": {"num_files_train": 3, "record_length_bytes": 1000, "record_length_bytes_stdev": 0}}


def test_odirect_row_and_its_planted_buffered_open(tmp_path):
    lib = str(build(tmp_path, "noodirect", NOODIRECT))
    assert contract.check_odirect(WL, table(), [])["status"] == "PASS"
    r = contract.check_odirect(WL, table(odirect=False), [lib])
    assert r["status"] == "FAIL" and "6 of 6" in r["detail"] and "libnoodirect.so" in r["detail"]
    r = contract.check_odirect({**WL, "reader": {}}, table(odirect=False), [])
    assert r["status"] == "PASS"  # not configured: buffered opens are the contract


def test_fsync_row_and_its_planted_lost_fsync(tmp_path):
    lib = str(build(tmp_path, "nofsync", NOFSYNC))
    assert contract.check_fsync(WL, table(), [lib])["status"] == "PASS"
    r = contract.check_fsync(WL, table(fsyncs=0), [lib])
    assert r["status"] == "FAIL" and "1 of 1 checkpoint files" in r["detail"] and "libnofsync.so" in r["detail"]
    assert contract.check_fsync({"workflow": {}}, table(fsyncs=0), [])["status"] == "SKIP"


def test_preload_row_against_the_baseline_and_its_planted_lost_fadvise(tmp_path):
    lib = str(build(tmp_path, "nofsync", NOFSYNC))
    base = table(fadvise=2)
    assert contract.check_preload(copy.deepcopy(base), base, [lib])["status"] == "PASS"
    r = contract.check_preload(table(fadvise=0), base, [lib])
    assert r["status"] == "FAIL" and "(fadvise)" in r["detail"] and "2 without the preload, 0 with it" in r["detail"]
    assert "LD_PRELOAD: libnofsync.so" in r["detail"]  # it defines no fadvise: the launch's libraries are listed
    assert contract.check_preload(table(), None, [])["status"] == "PASS"


def test_file_sizes_row_and_its_planted_wrong_size_and_count():
    scale = audit.shrunk(WL, 1)
    gen = {"files": {f"train/0/img_{i}.npz": {"write_bytes": 1000 + 120} for i in range(3)}}
    assert contract.check_sizes(WL, gen, scale)["status"] == "PASS"
    bad = copy.deepcopy(gen)
    bad["files"]["train/0/img_1.npz"]["write_bytes"] = 1000 + 70000
    assert contract.check_sizes(WL, bad, scale)["status"] == "FAIL"
    del gen["files"]["train/0/img_2.npz"]
    assert "2 data files written (config: 3)" in contract.check_sizes(WL, gen, scale)["detail"]


def test_the_shrunk_replay_keeps_the_contract_keys():
    wl = audit.read_leaf(LEAVES / "honest").workload
    s = audit.shrunk(wl, 1)
    assert s["dataset"]["num_files_train"] == 14 and s["dataset"]["record_length_bytes"] == 1 << 20
    assert s["dataset"]["record_length_bytes_stdev"] == int(68341808 * (1 << 20) / 146600628)
    assert "reader" in s and "odirect" not in s["reader"]  # the leaf's odirect stays in the overlay, unshrunk
    c = audit.shrunk(audit.read_leaf(LEAVES / "nofsync").workload, 1)
    assert c["checkpoint"]["fsync"] is True and c["checkpoint"]["num_checkpoints_write"] == 2
    assert c["model"]["transformer"]["hidden_size"] == 256 and "dataset" not in c


def test_the_dlio_side_is_refused_naming_the_revision(tmp_path, monkeypatch):
    repo = tmp_path / "dlio"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    rev = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout[:7]
    r = audit.dlio_side(repo)
    assert r["status"] == "SKIP" and rev in r["detail"] and "f6796ed" in r["detail"] and "refused" in r["detail"]
    monkeypatch.setitem(audit.REPLAYED, rev, str(repo))
    assert audit.dlio_side(repo) is None  # a revision replayed: its DLIO side runs too
    assert "no DLIO checkout" in audit.dlio_side(None)["detail"]
    with pytest.raises(BadInput, match="not a git checkout"):
        audit.dlio_side(tmp_path / "nowhere")


class Tables:
    def __init__(self, tables: dict):
        self.tables = tables

    def table(self, name: str):
        return self.tables.get(name)


def test_each_side_is_judged_from_its_own_tables(tmp_path):
    """The DLIO side's rows (audit.dlio.*) read strace-dlio.json: a buffered open planted there fails that side's
    odirect row alone; the kernel's rows, from strace-kernel.json, hold (and only the kernel's carry page_cache)."""
    lib = str(build(tmp_path, "noodirect", NOODIRECT))
    run = Tables({"strace-kernel.json": table(), "strace-dlio.json": table(odirect=False)})
    base = Tables({"strace-kernel.json": table(), "strace-dlio.json": table()})
    scale = audit.shrunk(WL, 1)
    k = {r["check"]: r["status"] for r in contract.judge(run, base, WL, scale, [lib])}
    d = {r["check"]: r for r in contract.judge(run, base, WL, scale, [lib], side="dlio")}
    assert k["audit.odirect"] == "PASS" and k["audit.preload"] == "PASS" and "audit.page_cache" in k
    assert d["audit.dlio.odirect"]["status"] == "FAIL" and "libnoodirect.so" in d["audit.dlio.odirect"]["detail"]
    assert d["audit.dlio.preload"]["status"] == "FAIL" and "audit.dlio.page_cache" not in d


def test_rank_env_puts_the_leafs_preload_ahead_of_a_profiles():
    assert hplan._rank_env({"LD_PRELOAD": "/t/libtracer.so", "A": "1"}, {"LD_PRELOAD": "/l/libx.so"}) == \
        {"LD_PRELOAD": "/l/libx.so:/t/libtracer.so", "A": "1"}
    assert hplan._rank_env({"A": "1"}, {}) == {"A": "1"}


# ---------------------------------------------------------------- live: the kernel replays the fixture leaves

@pytest.mark.dlio
@pytest.mark.slow
@pytest.mark.parametrize("leaf,rc,broken,lib", [("honest", 0, None, None),
                                                 ("nofsync", 1, "audit.fsync", "libnofsync.so"),
                                                 ("noodirect", 1, "audit.odirect", "libnoodirect.so")])
def test_fixture_leaves_replayed_by_the_kernel(tmp_path, leaf, rc, broken, lib):
    from test_dlio3_checkpoint import dlio3_venv
    venv = dlio3_venv()
    if venv is None:
        pytest.skip("no venv of MLCommons DLIO 3.x (H5DLIO_DLIO3_VENV or the cache's dlio-3.0.2-*)")
    libs = tmp_path / "lib"
    build(libs, "nofsync", NOFSYNC)
    build(libs, "noodirect", NOODIRECT)
    out = tmp_path / "audit.json"
    got = audit.main([str(LEAVES / leaf), "--dlio-venv", str(venv), "--runs-dir", str(tmp_path / "runs"),
                      "--preload-dir", str(libs), "--json", str(out)])
    rows = {r["check"]: r for r in json.loads(out.read_text())["rows"]}
    assert got == rc
    failed = sorted(k for k, r in rows.items() if r["status"] == "FAIL")
    if broken is None:
        assert failed == [] and rows["audit.odirect"]["status"] == "PASS"
    else:
        assert broken in failed and lib in rows[broken]["detail"]
        assert rows["audit.preload"]["status"] == "FAIL" and lib in rows["audit.preload"]["detail"]


@pytest.mark.dlio
@pytest.mark.slow
def test_the_dlio_side_under_the_leafs_preload(tmp_path):
    """DLIO=<the f6796ed checkout>: DLIO 3.x itself replays the noodirect leaf beside the kernel, under the same
    preload; its NPZReaderODIRECT's opens lose O_DIRECT too, and the DLIO side's row names the library (measured: 8
    min with its baseline)."""
    import os

    from test_dlio3_checkpoint import dlio3_venv
    venv, src = dlio3_venv(), Path(os.environ.get("H5DLIO_DLIO3_SRC", "/tmp/dlio-src-f6796ed"))
    if venv is None or not (src / ".git").exists():
        pytest.skip("no DLIO 3.x venv and f6796ed checkout (H5DLIO_DLIO3_VENV, H5DLIO_DLIO3_SRC)")
    libs = tmp_path / "lib"
    build(libs, "noodirect", NOODIRECT)
    out = tmp_path / "audit.json"
    got = audit.main([str(LEAVES / "noodirect"), "--dlio", str(src), "--dlio-venv", str(venv), "--runs-dir",
                      str(tmp_path / "runs"), "--preload-dir", str(libs), "--json", str(out)])
    rows = {r["check"]: r for r in json.loads(out.read_text())["rows"]}
    assert got == 1
    for name in ("audit.odirect", "audit.dlio.odirect", "audit.dlio.preload"):
        assert rows[name]["status"] == "FAIL" and "libnoodirect.so" in rows[name]["detail"], rows[name]
    assert "audit.dlio_side" not in rows
