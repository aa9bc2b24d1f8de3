"""The strace profile (profiles/strace/): its parse of a real capture and strace.per_file's negative controls.

tests/data/strace/<side>/ is a real capture of `make validate WORKLOAD=unet3d PROFILES=timing,strace` (DLIO 2.0.0,
tiny, 2 ranks; the profile's own `trace.r<rank>.<pid>` files), cut to the lines on two data files
(train/img_00_of_28.hdf5, train/img_13_of_28.hdf5), the data folders and the checkpoint folder, the run folder
renamed /r and each read's bytes dropped (strace's `""...`). The expected counts below were read off the capture by
hand. Each planted divergence is one edit of the kernel's (or DLIO's) capture: strace.per_file must FAIL naming the
file and the field."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profiles import FAIL, PASS, SKIP
from profiles import strace as st

CAPTURE = Path(__file__).parent / "data" / "strace"
IMG0 = "train/img_00_of_28.hdf5"


class FakeRun:
    """What a profile's check reads of a run (profiles.RunView): tables by name, a run folder at /r; prewarm: the
    reference DLIO's rules say its loader's pre-warm may read more than the model's share (DLIO 3.x, 4 readers)."""

    def __init__(self, tables: dict, prewarm: bool = False):
        self.tables, self.put = tables, {}
        self.path, self.manifest, self.cfg = Path("/r"), {"steps": {}, "roots": {"home": "/root"}}, {}
        if prewarm:
            self.manifest["dlio"] = {"probed": {"rules": {"prewarm": True}}}
            self.cfg = {"reader": {"read_threads": 4}}

    def model_reads(self, cfg: dict) -> dict:
        return {0: [{"phase": "train", "prefetch_samples": 14}]}

    def table(self, name: str, **_):
        return self.tables.get(name)

    def step(self, name: str):
        return None

    def put_table(self, name: str, obj) -> None:
        self.put[name] = obj


def capture(tmp: Path) -> Path:
    """A copy of the capture laid out as a run: /tmp/.../<side>/strace/trace.r<rank>.<pid>."""
    for side in ("dlio", "kernel"):
        shutil.copytree(CAPTURE / side, tmp / side / "strace")
    return tmp


def tables(run: Path) -> dict:
    """Both sides parsed (the capture names /r/<side>/data as each side's data folder)."""
    return {f"strace-{side}.json": json.loads(json.dumps(st.parse(run / side, side, Path(f"/r/{side}/data"))))
            for side in ("dlio", "kernel")}


def edit(run: Path, side: str, old: str, new: str, count: int = 1) -> None:
    """Replace the first `count` occurrences of old in the side's trace files (in pid order)."""
    left = count
    for f in sorted((run / side / "strace").glob("trace.r*.[0-9]*")):
        text = f.read_text()
        k = min(text.count(old), left)
        if k:
            f.write_text(text.replace(old, new, k))
            left -= k
    assert left == 0, f"{old!r} found {count - left} times in {side}'s capture, not {count}"


def per_file(run: Path) -> dict:
    return st.check_per_file(FakeRun(tables(run)))[0]


def test_capture_parses_as_read_by_hand(tmp_path):
    t = tables(capture(tmp_path))
    d, k = t["strace-dlio.json"], t["strace-kernel.json"]
    for side in (d, k):
        row = side["files"][IMG0]
        assert row["opens"] == 2 and row["closes"] == 2 and row["open_flags"] == {"O_RDONLY": 2}
        # per open 9 preads: the 8-byte signature, the superblock (48 at 0, 48 at 48), the root group's header (512 at
        # 96), its heap (512 at 680), B-tree (544 at 136) and symbol node (328 at 1072), the dataset's header (512 at
        # 800), then the sample (1,601,154 bytes at 2048)
        assert row["reads"] == {"0:8": 2, "0:48": 2, "48:48": 2, "96:512": 2, "680:512": 2, "136:544": 2,
                                "1072:328": 2, "800:512": 2, "2048:1601154": 2}
        assert row["read_bytes"] == 2 * (8 + 48 + 48 + 512 + 512 + 544 + 328 + 512 + 1601154)
        assert row["stats"] == 4  # an fstat and a stat by name per open (DLIO: fstat, lstat; kernel: newfstatat x2)
        assert row["fsyncs"] == 0 and row["fadvise"] == {}
    # discovery: the kernel's rank 0 stats each file before reading; DLIO's ranks probe the first listed entry twice
    dlio_rank = {"stats": 2, "files": 1, "listings": {"train": 1, "valid": 1}}
    assert k["discovery"] == {"stats": 2, "files": 2, "ranks": {"0": {"stats": 2, "files": 2, "listings": {}}}}
    assert d["discovery"] == {"stats": 4, "files": 1, "ranks": {"0": dlio_rank, "1": dlio_rank}}
    assert d["dirs"]["files/train"]["opens"] == 2 and "files/train" not in k["dirs"]
    assert k["ranks"]["0"]["opens"] == [IMG0, "train/img_13_of_28.hdf5", IMG0, "train/img_13_of_28.hdf5"]
    assert k["ranks"]["0"]["processes"] == 2


def test_capture_passes(tmp_path):
    r = per_file(capture(tmp_path))
    assert r["status"] == PASS, r["detail"]
    assert "dataset discovery" in r["detail"] and "DLIO 4 on 1 files, kernel 2 on 2 files" in r["detail"]
    assert "not compared" in r["detail"]


@pytest.mark.parametrize("side,old,new,count,field", [
    # an open rewritten to O_DIRECT on one side
    ("kernel", f'{IMG0}", O_RDONLY)', f'{IMG0}", O_RDONLY|O_DIRECT)', 1, "open_flags"),
    # a read of another size (the dataset header's 512 bytes at 800 read as 4096)
    ("kernel", '""..., 512, 800)', '""..., 4096, 800)', 1, "reads"),
    # a stat added while the file is open
    ("kernel", f"pread64(3</r/kernel/data/{IMG0}>, \"\"..., 8, 0) = 8\n",
     f"pread64(3</r/kernel/data/{IMG0}>, \"\"..., 8, 0) = 8\n1795843581.344800 fstat(3</r/kernel/data/{IMG0}>, "
     "{st_mode=S_IFREG|0644, st_size=1603210, ...}) = 0\n", 1, "stats"),
    # an fsync DLIO makes that the kernel drops (planted on DLIO's side: the capture's files are only read)
    ("dlio", f"close(25</r/dlio/data/{IMG0}>) = 0\n",
     f"fsync(25</r/dlio/data/{IMG0}>) = 0\n1795843568.276365 close(25</r/dlio/data/{IMG0}>) = 0\n", 1, "fsyncs"),
    # a posix_fadvise on one side only
    ("kernel", f"pread64(3</r/kernel/data/{IMG0}>, \"\"..., 8, 0) = 8\n",
     f"pread64(3</r/kernel/data/{IMG0}>, \"\"..., 8, 0) = 8\n1795843581.344800 fadvise64(3</r/kernel/data/{IMG0}>, "
     "0, 0, POSIX_FADV_SEQUENTIAL) = 0\n", 1, "fadvise"),
])
def test_planted_divergence_fails_naming_file_and_field(tmp_path, side, old, new, count, field):
    run = capture(tmp_path)
    edit(run, side, old, new, count)
    r = per_file(run)
    assert r["status"] == FAIL
    assert f"first: files/{IMG0} {field}:" in r["detail"], r["detail"]


def test_a_stat_after_the_ranks_first_open_by_a_process_that_opened_nothing_is_compared(tmp_path):
    """MUTANT data-stat's shape: rank 0's main process (which never opens a data file: its readers do) stats a data
    file after the rank's first open: a compared stat, not discovery."""
    run = capture(tmp_path)
    main = next(f for f in (run / "kernel" / "strace").glob("trace.r0.[0-9]*") if "openat" not in f.read_text())
    main.write_text(main.read_text() + f'1795843590.000000 newfstatat(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/'
                    f'{IMG0}", {{st_mode=S_IFREG|0644, st_size=1603210, ...}}, 0) = 0\n')
    r = per_file(run)
    assert r["status"] == FAIL and f"first: files/{IMG0} stats: DLIO 4, kernel 5" in r["detail"], r["detail"]


def test_parser_reads_each_call_as_strace_prints_it(tmp_path):
    """Lines as strace 6.1 prints them with the profile's options (-y -ttt -s 16), one per call kind."""
    folder = tmp_path / "strace"
    folder.mkdir()
    ck = f"{tmp_path}/checkpoints"  # the launch's checkpoint folder (profiles.checkpoint_dir)
    (folder / "trace.r0.7").write_text("\n".join([
        '1.000001 openat(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/a.npz", O_RDONLY|O_CLOEXEC|O_DIRECT) = 3'
        '</r/kernel/data/a.npz>',
        '1.000002 preadv2(3</r/kernel/data/a.npz>, [{iov_base="D"..., iov_len=10}, {iov_base="E"..., iov_len=20}], 2,'
        ' 30, 0) = 30',
        '1.000003 lseek(3</r/kernel/data/a.npz>, 5, SEEK_SET) = 5',
        '1.000004 read(3</r/kernel/data/a.npz>, ""..., 7) = 7',
        '1.000005 read(3</r/kernel/data/a.npz>, ""..., 7) = 3',
        '1.000006 fadvise64(3</r/kernel/data/a.npz>, 0, 0, POSIX_FADV_DONTNEED) = 0',
        '1.000007 statx(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/a.npz", AT_STATX_SYNC_AS_STAT, STATX_ALL, '
        '{stx_mask=STATX_ALL, stx_mode=S_IFREG|0644, ...}) = 0',
        '1.000008 close(3</r/kernel/data/a.npz>) = 0',
        f'1.000009 openat(AT_FDCWD</r/kernel/strace>, "{ck}/m.pt.partial.7", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, '
        f'0666) = 4<{ck}/m.pt.partial.7>',
        f'1.000010 pwrite64(4<{ck}/m.pt.partial.7>, ""..., 64, 0) = 64',
        f'1.000011 write(4<{ck}/m.pt.partial.7>, ""..., 10) = 10',
        f'1.000012 fdatasync(4<{ck}/m.pt.partial.7>) = 0',
        f'1.000013 rename("{ck}/m.pt.partial.7", "{ck}/m.pt") = 0',
        f'1.000014 unlinkat(AT_FDCWD<{tmp_path}>, "checkpoints/old.pt", 0) = 0',
        '1.000015 newfstatat(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/train", {st_mode=S_IFDIR|0755, '
        'st_size=4096, ...}, 0) = 0',
        '1.000016 openat(AT_FDCWD</r/kernel/strace>, "/etc/hosts", O_RDONLY) = 5</etc/hosts>',
        "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=8} ---", ""]))
    t = st.parse(tmp_path, "kernel", Path("/r/kernel/data"))
    a = t["files"]["a.npz"]
    assert a["open_flags"] == {"O_DIRECT|O_RDONLY": 1} and a["readv"] == {"30:10,20": 1}
    assert a["reads"] == {"5:7": 1, "12:7": 1} and a["read_bytes"] == 40  # read()'s offsets from the lseek on
    assert a["fadvise"] == {"0:0:POSIX_FADV_DONTNEED": 1} and a["lseeks"] == 1 and a["closes"] == 1
    assert a["stats"] == 1  # after the rank's first open: compared
    m = t["checkpoints"]["m.pt"]  # the kernel's partial name under its final one; pwrite leaves the position
    assert m["writes"] == {"0:64": 1, "0:10": 1} and m["fdatasyncs"] == 1 and m["renames"] == 1
    assert t["checkpoints"]["old.pt"]["unlinks"] == 1
    assert t["dirs"]["files/train"]["stats"] == 1 and "train" not in t["files"]
    assert t["other_calls"] == {"openat": 1} and t["ranks"]["0"]["opens"] == ["a.npz"]


def dftracer_table(fsyncs: int) -> dict:
    return {"files": {"files": {IMG0: {"opens": 2, "calls": {"fsync": fsyncs}}}}, "checkpoints": {}}


def test_preload_fails_naming_the_library_when_an_fsync_never_reaches_the_kernel(tmp_path):
    run = capture(tmp_path)
    (run / "kernel" / "strace" / "trace.r0.preload").write_text("/opt/noop/libnofsync.so\n")
    t = tables(run)
    ok = st.check_preload(FakeRun({**t, "dftracer-kernel.json": dftracer_table(0)}))[0]
    assert ok["status"] == PASS, ok["detail"]
    bad = st.check_preload(FakeRun({**t, "dftracer-kernel.json": dftracer_table(1)}))[0]
    assert bad["status"] == FAIL
    assert f"kernel files/{IMG0} fsync: 1 at the C library, 0 system calls" in bad["detail"]
    assert "/opt/noop/libnofsync.so" in bad["detail"]
    # the fsync reached the kernel (strace saw it): no finding
    edit(run, "kernel", f"close(3</r/kernel/data/{IMG0}>) = 0\n",
         f"fsync(3</r/kernel/data/{IMG0}>) = 0\n1.0 close(3</r/kernel/data/{IMG0}>) = 0\n")
    seen = st.check_preload(FakeRun({**tables(run), "dftracer-kernel.json": dftracer_table(1)}))[0]
    assert seen["status"] == PASS, seen["detail"]


def test_skips_say_why(tmp_path):
    t = tables(capture(tmp_path))
    assert st.check_preload(FakeRun(t))[0]["status"] == SKIP
    r = st.check_per_file(FakeRun({"strace-kernel.json": t["strace-kernel.json"]}))[0]
    assert r["status"] == SKIP and "strace profile not run" in r["detail"]


def test_wrap_traces_each_ranks_command_not_the_launcher(tmp_path):
    from profiles import Launch
    launch = Launch("kernel", "strace", ["/bin/h5dlio", "--config", "w.yaml"], {"K": "v"}, tmp_path, tmp_path / "d",
                    {"strace": "/usr/bin/strace"})
    w = st.Strace().wrap(launch)
    assert w.argv[:2] == ["sh", "-c"] and w.argv[-3:] == ["/bin/h5dlio", "--config", "w.yaml"]
    assert w.argv[4] == "/usr/bin/strace" and "-f" in w.argv and "-ff" in w.argv and w.env == {"K": "v"}
    assert tmp_path / "strace" in w.dirs


# ---------------------------------------------------------------- live: a mutant kernel against a reused DLIO side

@pytest.fixture(scope="module")
def strace_run(unet3d_checkpoint_run):
    """tests/test_validation_e2e.py's reference run (tests/conftest.py), launched once for both: unet3d_checkpoint
    with the default profiles, strace among them at tiny scale (a DLIO side of its own cost ~3 min here); the mutants
    below relaunch the kernel side with timing,dftracer,strace against its DLIO side."""
    tmp, rc, run = unet3d_checkpoint_run
    assert "strace" in json.loads((run / "manifest.json").read_text())["profiles"]  # the default set here has it
    return tmp / "strace", rc, run


@pytest.mark.dlio
@pytest.mark.slow
def test_live_run_passes_and_mutants_fail_strace_per_file(strace_run):
    """unet3d_checkpoint (checkpoints on) under strace on both sides: strace.per_file PASSes; the kernel side again
    with H5DLIO_MUTATE=read-offset (rank 0's 2nd sample read one byte further on) and ckpt-fsync (an fsync of a
    checkpoint file DLIO 2.0.0 never makes), DLIO's side reused: strace.per_file FAILs naming a data file's reads, a
    checkpoint file's fsyncs."""
    from tests.test_validation_e2e import failing, harness, validate
    tmp, rc, run = strace_run
    assert rc == 0
    _, v = validate(run)
    names = {c["name"]: c for c in v["checks"]}
    assert names["strace.per_file"]["status"] == PASS, names["strace.per_file"]["detail"]
    for mutant, first in (("read-offset", "first: files/train/"), ("ckpt-fsync", "first: checkpoints/")):
        rc, neg = harness(tmp / mutant, "--reuse-dlio", str(run), "--profiles", "timing,dftracer,strace",
                          env={"H5DLIO_MUTATE": mutant})
        assert rc == 0
        _, v = validate(neg)
        row = next(c for c in v["checks"] if c["name"] == "strace.per_file")
        assert "strace.per_file" in failing(v) and first in row["detail"], row["detail"]
        assert (" reads:" if mutant == "read-offset" else " fsyncs:") in row["detail"], row["detail"]


def test_on_by_default_at_tiny_and_small_only_unless_named(tmp_path):
    """No PROFILES: strace runs at tiny and small (the workload's default scale is tiny), not at field; named, it
    runs at any scale."""
    import argparse

    from harness.__main__ import _profiles
    if st.strace_binary() is None:
        pytest.skip("no strace here (scripts/deps-system.sh installs it)")
    from profiles import Context
    ctx = Context(tmp_path, tmp_path / "h5dlio")
    for scale, named, runs in ((None, None, True), ("small", None, True), ("field", None, False),
                               ("field", "timing,strace", True)):
        notes: list[str] = []
        a = argparse.Namespace(profiles=named, scale=scale, workload="unet3d", sides=("dlio", "kernel"))
        profiles = _profiles(a, ctx, notes)[0]
        assert ("strace" in profiles) == runs, (scale, named, profiles)
        assert any("strace not run by default at SCALE=field" in n for n in notes) == (not runs), notes


NOOP_FSYNC = "int fsync(int fd) { (void)fd; return 0; }\nint fdatasync(int fd) { (void)fd; return 0; }\n"


@pytest.mark.dlio
@pytest.mark.slow
def test_live_preloaded_noop_fsync_fails_strace_preload(strace_run):
    """MLPerf Storage v3.0's no-op fsync, live: the kernel side again with H5DLIO_MUTATE=ckpt-fsync (an fsync of a
    checkpoint file) under a preloaded library whose fsync returns 0 without the system call. The DFTracer launch
    (its own LD_PRELOAD, the tracer's) counts the fsync at the C library; the strace launch (the no-op library)
    sees none reach the kernel: strace.preload FAILs naming the library, though strace.per_file sees no fsync on
    either side."""
    import subprocess

    from tests.test_validation_e2e import failing, harness, validate
    tmp, rc, run = strace_run
    assert rc == 0
    src, lib = tmp / "noop.c", tmp / "libnoopfsync.so"
    src.write_text(NOOP_FSYNC)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    rc, neg = harness(tmp / "noop", "--reuse-dlio", str(run), "--profiles", "timing,dftracer,strace",
                      env={"H5DLIO_MUTATE": "ckpt-fsync", "LD_PRELOAD": str(lib)})
    assert rc == 0
    _, v = validate(neg)
    rows = {c["name"]: c for c in v["checks"]}
    assert "strace.preload" in failing(v), rows["strace.preload"]
    assert str(lib) in rows["strace.preload"]["detail"] and " fsync: 1 at the C library, 0 system calls" in \
        rows["strace.preload"]["detail"], rows["strace.preload"]["detail"]
    assert "fsyncs:" not in rows["strace.per_file"]["detail"], rows["strace.per_file"]["detail"]


def test_unavailable_says_why(tmp_path, monkeypatch):
    """No strace: skipped naming the package; a strace that cannot trace here (ptrace forbidden): skipped with its
    error, not run to fail every launch."""
    from profiles import Context
    ctx = Context(tmp_path, tmp_path / "h5dlio")
    monkeypatch.setattr(st, "strace_binary", lambda: None)
    f = st.Strace().available(ctx)
    assert not f.ok and "scripts/deps-system.sh" in f.reason
    fake = tmp_path / "strace"
    fake.write_text("#!/bin/sh\necho 'strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted' "
                    ">&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(st, "strace_binary", lambda: str(fake))
    f = st.Strace().available(ctx)
    assert not f.ok and "cannot trace here (exit 1" in f.reason and "Operation not permitted" in f.reason


def one_more_dlio_open(run: Path, change: tuple[str, str] | None = None) -> None:
    """DLIO's first open of IMG0 (its lines from the open to the close) made once more in the same process, as its
    loader's pre-warm prefetch does; change: one (old, new) edit of the copy."""
    for f in sorted((run / "dlio" / "strace").glob("trace.r*.[0-9]*")):
        lines = f.read_text().splitlines(keepends=True)
        start = next((i for i, x in enumerate(lines) if "openat(" in x and IMG0 in x), None)
        if start is None:
            continue
        stop = next(i for i in range(start, len(lines)) if " close(" in lines[i] and IMG0 in lines[i])
        block = "".join(lines[start:stop + 1])
        f.write_text("".join(lines) + (block.replace(*change, 1) if change else block))
        return
    raise AssertionError("no open of IMG0 in DLIO's capture")


def test_prewarm_extra_opens_pass_only_when_each_reads_as_the_kernels(tmp_path):
    """DLIO 3.x's pre-warm may open a file more often than the kernel (dftracer.prewarm_prefetch): tolerated only when
    the reference's rules say so and every open reads the file alike."""
    run = capture(tmp_path)
    one_more_dlio_open(run)
    t = tables(run)
    exact = st.check_per_file(FakeRun(t))[0]
    assert exact["status"] == FAIL and f"first: files/{IMG0} opens: DLIO 3, kernel 2" in exact["detail"]
    ok = st.check_per_file(FakeRun(t, prewarm=True))[0]
    assert ok["status"] == PASS and "pre-warm prefetch: 1 more opens of 1 data files" in ok["detail"], ok["detail"]
    run2 = capture(tmp_path / "other")
    one_more_dlio_open(run2, ('""..., 512, 800)', '""..., 4096, 800)'))
    bad = st.check_per_file(FakeRun(tables(run2), prewarm=True))[0]
    assert bad["status"] == FAIL and f"first: files/{IMG0} opens: DLIO 3, kernel 2" in bad["detail"], bad["detail"]


def ranks(run: Path, **kw) -> dict:
    r = FakeRun(tables(run), **{k: v for k, v in kw.items() if k == "prewarm"})
    if "read_threads" in kw:
        r.cfg = {"reader": {"read_threads": kw["read_threads"]}}
    return st.check_ranks(r)[0]


def test_ranks_pass_on_the_capture(tmp_path):
    run = capture(tmp_path)
    r = ranks(run)
    assert r["status"] == PASS and "1 ranks" in r["detail"] and "rank 0: DLIO 2, kernel 2" in r["detail"], r
    assert ranks(run, read_threads=0)["status"] == PASS  # the capture's order is equal too


def test_two_ranks_slices_swapped_fail_ranks_not_per_file(tmp_path):
    """One of the kernel's reader processes (img_13 twice, img_00 once) moved from rank 0 to rank 1: every file's
    calls unchanged (strace.per_file passes), the ranks' files not (strace.ranks fails naming the rank and file)."""
    run = capture(tmp_path)
    folder = run / "kernel" / "strace"
    reader = next(f for f in folder.glob("trace.r0.[0-9]*") if "img_13_of_28.hdf5\", O_RDONLY" in f.read_text())
    reader.rename(folder / reader.name.replace("trace.r0.", "trace.r1."))
    assert per_file(run)["status"] == PASS
    r = ranks(run)
    assert r["status"] == FAIL and "rank 0: train/img_00_of_28.hdf5 opened 2 times by DLIO, 1 by the kernel" in \
        r["detail"], r["detail"]


def test_order_is_judged_where_the_rank_reads_in_its_own_process(tmp_path):
    """The kernel's first open of img_13 moved before its first open of img_00: the same multiset (PASS with reader
    processes), another order (FAIL at read_threads 0)."""
    run = capture(tmp_path)
    edit(run, "kernel", '1795843581.351196 openat(', '1795843581.300000 openat(')
    assert ranks(run)["status"] == PASS
    r = ranks(run, read_threads=0)
    assert r["status"] == FAIL and "rank 0: open 0 is train/img_00_of_28.hdf5 in DLIO, train/img_13_of_28.hdf5 in " \
        "the kernel" in r["detail"], r["detail"]


def test_ranks_under_prewarm_allow_dlio_more_never_the_kernel(tmp_path):
    run = capture(tmp_path)
    one_more_dlio_open(run)
    assert ranks(run)["status"] == FAIL
    assert ranks(run, prewarm=True)["status"] == PASS
    run2 = capture(tmp_path / "k")
    folder = run2 / "kernel" / "strace"
    reader = next(f for f in folder.glob("trace.r0.[0-9]*") if "img_13_of_28.hdf5\", O_RDONLY" in f.read_text())
    reader.rename(folder / reader.name.replace("trace.r0.", "trace.r1."))
    r = ranks(run2, prewarm=True)
    assert r["status"] == FAIL and "rank 1: train/img_00_of_28.hdf5 opened 0 times by DLIO, 1 by the kernel" in \
        r["detail"], r["detail"]


def discovery(run: Path) -> dict:
    return st.check_discovery(FakeRun(tables(run)))[0]


def as_dlio(run: Path) -> Path:
    """The kernel's capture replaced by DLIO's (its paths renamed): a kernel that makes DLIO's every call."""
    shutil.rmtree(run / "kernel" / "strace")
    (run / "kernel" / "strace").mkdir()
    for f in (run / "dlio" / "strace").iterdir():
        (run / "kernel" / "strace" / f.name).write_text(f.read_text().replace("/r/dlio/", "/r/kernel/"))
    return run


def test_discovery_of_the_kernel_that_stats_every_file_fails(tmp_path):
    """The capture's kernel is the one before bench/src/discover.c: rank 0 statted each data file (here the 2 the
    capture keeps) and listed no folder, where each DLIO rank lists train/ and valid/ and probes the first entry
    twice (2.0.0 main.py:176-181): strace.discovery FAILs on rank 0 and declares stat_discovery compared."""
    r = discovery(capture(tmp_path))
    assert r["status"] == FAIL and r["compared"] == ["stat_discovery"]
    assert "first: rank 0 files: DLIO 1, kernel 2" in r["detail"], r["detail"]
    assert "rank 1: train x1, valid x1; 2 stats of 1 data files" in r["detail"]


@pytest.mark.parametrize("cfg,status", [
    ({"workflow": {"train": False, "checkpoint": True}}, SKIP),   # llama3_8b_v3: checkpoints only, no dataset
    ({}, FAIL),                                                   # a workload that reads data: nothing traced fails
])
def test_discovery_of_a_checkpoint_only_workload_skips(cfg, status):
    """A checkpoint-only workload lists and stats no data folder on either side: strace.discovery skips saying so
    (the tiny llama3_8b_v3 against DLIO 3.x failed it: "no rank of either side listed a data folder"). Negative
    control: the same empty tables on a workload that reads data still FAIL."""
    empty = {"discovery": {"ranks": {}}, "files": {}}
    run = FakeRun({"strace-dlio.json": empty, "strace-kernel.json": empty})
    run.cfg = cfg
    r = st.check_discovery(run)[0]
    assert r["status"] == status, r
    assert ("checkpoint-only" in r["detail"]) is (status == SKIP), r["detail"]


LIST_VALID = ('1795843553.167382 openat(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/valid", O_RDONLY|O_NONBLOCK|'
              'O_CLOEXEC|O_DIRECTORY) = 18</r/kernel/data/valid>\n')
PROBE = ('1795843553.167100 newfstatat(AT_FDCWD</r/kernel/strace>, "/r/kernel/data/train/img_13_of_28.hdf5", '
         '{st_mode=S_IFREG|0644, st_size=1603210, ...}, 0) = 0\n')


@pytest.mark.parametrize("old,new,first", [
    (None, None, None),
    # rank 1 lists valid/ no more (the kernel skipping a folder DLIO lists though its phase is off)
    (LIST_VALID, "", "rank 1 listings: DLIO {'train': 1, 'valid': 1}, kernel {'train': 1}"),
    # rank 1 lists valid/ twice
    (LIST_VALID, LIST_VALID + LIST_VALID.replace("167382", "167390"),
     "rank 1 listings: DLIO {'train': 1, 'valid': 1}, kernel {'train': 1, 'valid': 2}"),
    # rank 1 probes one more data file before its first open (a stat per file, as the old check)
    (LIST_VALID, PROBE + LIST_VALID, "rank 1 stats: DLIO 2, kernel 3"),
])
def test_discovery_side_by_side_per_rank(tmp_path, old, new, first):
    """A kernel making DLIO's calls passes; each planted divergence of one rank's discovery FAILs naming the rank
    and the field (each edit hits rank 1's trace: LIST_VALID's time stamp is its listing of valid/)."""
    run = as_dlio(capture(tmp_path))
    if old is not None:
        edit(run, "kernel", old, new)
    r = discovery(run)
    if first is None:
        assert r["status"] == PASS and r["expected"] == r["observed"] == 2, r["detail"]
    else:
        assert r["status"] == FAIL and f"first: {first}" in r["detail"], r["detail"]
    assert r["compared"] == ["stat_discovery"]
