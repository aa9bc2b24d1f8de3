"""strace.generate (profiles/strace/): the generate launches of both sides compared per data file, and its negative
controls on planted traces.

tests/data/strace-generate/<side>/ is a real capture of `make validate WORKLOAD=unet3d SCALE=tiny` (DLIO 2.0.0, 2
ranks, the strace profile wrapping each side's generate launch), cut to the lines naming the data folder but 26 of
its 28 files (train/img_00_of_28.hdf5, written by rank 0, and train/img_13_of_28.hdf5, by rank 1, kept) and DLIO's
checkpoint folder, the run folder renamed /r and the written bytes dropped (strace's `""...`). The counts below were
read off the capture by hand. Each planted divergence is one edit of a side's capture: strace.generate must FAIL
naming the file, the call and both sides' values."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_strace import FakeRun

from profiles import FAIL, PASS, SKIP, Launch
from profiles import strace as st

CAPTURE = Path(__file__).parent / "data" / "strace-generate"
IMG0 = "train/img_00_of_28.hdf5"
K0 = f"/r/kernel/data/{IMG0}"
# one file's writes as both sides make them (h5py's HDF5 and the kernel's): the superblock (96 at 0) twice, the
# sample (1,601,154 at 2048), the labels (8 at 1,603,202), the metadata (1,672 at 0)
WRITES = {"0:96": 2, "2048:1601154": 1, "1603202:8": 1, "0:1672": 1}


def capture(tmp: Path) -> Path:
    """A copy of the capture laid out as a run: <tmp>/<side>/generate/strace/trace.r<rank>.<pid>."""
    for side in ("dlio", "kernel"):
        shutil.copytree(CAPTURE / side, tmp / side / "generate" / "strace")
    return tmp


def tables(run: Path) -> dict:
    return {f"strace-generate-{side}.json": json.loads(json.dumps(st.parse(
        run / side / "generate", side, Path(f"/r/{side}/data"), generation=True))) for side in ("dlio", "kernel")}


def edit(run: Path, side: str, old: str, new: str) -> None:
    """Replace the first occurrence of old in the side's trace files (in pid order); each "TS " in new is the time
    stamp of the line old was found on (a planted call made at that moment)."""
    for f in sorted((run / side / "generate" / "strace").glob("trace.r*")):
        text = f.read_text()
        if old in text:
            i = text.index(old)
            ts = text[text.rfind("\n", 0, i) + 1:i].strip()
            f.write_text(text.replace(old, new.replace("TS ", f"{ts} "), 1))
            return
    raise AssertionError(f"{old!r} not in {side}'s capture")


def generate_row(run: Path, fmt: str = "hdf5") -> dict:
    fake = FakeRun(tables(run))
    fake.cfg = {"dataset": {"format": fmt}}
    return st.check_generate(fake)[0]


def test_capture_parses_as_read_by_hand(tmp_path):
    t = tables(capture(tmp_path))
    d, k = t["strace-generate-dlio.json"], t["strace-generate-kernel.json"]
    for side in (d, k):
        assert sorted(side["files"]) == [IMG0, "train/img_13_of_28.hdf5"]   # the completion record is no data file
        row = side["files"][IMG0]
        # HDF5's probe (O_RDWR: not there yet), then the create; an fstat and a stat by name of the new file
        assert row["opens"] == 1 and row["open_errors"] == 1 and row["open_flags"] == {"O_CREAT|O_RDWR|O_TRUNC": 1}
        assert row["writes"] == WRITES and row["write_bytes"] == 96 * 2 + 1601154 + 8 + 1672
        assert row["stats"] == 2 and row["closes"] == 1 and row["renames"] == 0 and row["unlinks"] == 0
        assert "failed" not in row
        assert {n: r.get("mkdirs") for n, r in side["dirs"].items() if n.startswith("files/")} == \
            {"files/": 1, "files/train": 1, "files/valid": 1}
    # the kernel makes the data folder's ancestors as mkdir -p does: two more mkdirs of it that fail (EEXIST)
    assert k["dirs"]["files/"]["failed"] == {"mkdir": 2} and "failed" not in d["dirs"]["files/"]
    # DLIO's discovery once generated (main.py:176-181): each rank stats the first listed file twice
    # and lists train/ and valid/ (the kernel's generate launch discovers nothing)
    rank = {"stats": 2, "files": 1, "listings": {"train": 1, "valid": 1}}
    assert d["discovery"] == {"stats": 4, "files": 1, "ranks": {"0": rank, "1": rank}}
    assert k["discovery"] == {"stats": 0, "files": 0, "ranks": {}}
    assert d["files"]["train/img_13_of_28.hdf5"]["stats"] == 2   # its creation's own, as the kernel's


def test_capture_passes_and_says_what_was_not_compared(tmp_path):
    r = generate_row(capture(tmp_path))
    assert r["status"] == PASS and r["compared"] == ["generation"], r["detail"]
    assert r["detail"].startswith("2 data files: renames, unlinks") and "each write (offset, size)" in r["detail"]
    assert "DLIO 4 folder opens, 6 folder stats, 0 failed folder calls, 4 stats of 1 data files after generating; " \
        "kernel 0 folder opens, 0 folder stats, 2 failed folder calls, 0 stats of 0 data files" in r["detail"]


OPEN0 = f'openat(AT_FDCWD</r/kernel/generate>, "{K0}", O_RDWR|O_CREAT|O_TRUNC, 0666) = 17<{K0}>\n'
CLOSE0 = f"close(17<{K0}>) = 0\n"
PARTIAL = f"{K0}.partial.4242"


@pytest.mark.parametrize("side,old,new,first", [
    # MUTANT gen-rename's calls: the file written as <name>.partial.<pid> (its leftover unlinked first: not there),
    # then renamed into place
    ("kernel", OPEN0, f'unlink("{PARTIAL}") = -1 ENOENT (No such file or directory)\nTS openat(AT_FDCWD</r/kernel/'
     f'generate>, "{PARTIAL}", O_RDWR|O_CREAT|O_TRUNC, 0666) = 17<{PARTIAL}>\nTS rename("{PARTIAL}", "{K0}") = 0\n',
     f"{IMG0} renames: DLIO 0, kernel 1"),
    # an unlink of the file before creating it (it is not there: a failed call still reaches the metadata server)
    ("kernel", OPEN0, f'unlink("{K0}") = -1 ENOENT (No such file or directory)\nTS {OPEN0}',
     f"{IMG0} failed: DLIO {{}}, kernel {{'unlink': 1}}"),
    # a hard link to the new file
    ("kernel", CLOSE0, f'{CLOSE0}TS link("{K0}", "{K0}.bak") = 0\n', "train/img_00_of_28.hdf5.bak links: DLIO 0"),
    # the file truncated to its size before the close
    ("kernel", CLOSE0, f"ftruncate(17<{K0}>, 1603210) = 0\nTS {CLOSE0}", f"{IMG0} truncates: DLIO 0, kernel 1"),
    # created with O_DIRECT
    ("kernel", "O_RDWR|O_CREAT|O_TRUNC, 0666) = 17", "O_RDWR|O_CREAT|O_TRUNC|O_DIRECT, 0666) = 17",
     f"{IMG0} open_flags: DLIO {{'O_CREAT|O_RDWR|O_TRUNC': 1}}, kernel {{'O_CREAT|O_DIRECT|O_RDWR|O_TRUNC': 1}}"),
    # an fsync DLIO makes and the kernel does not (planted on DLIO's side)
    ("dlio", "close(18</r/dlio/data/train/img_00_of_28.hdf5>) = 0\n",
     "fsync(18</r/dlio/data/train/img_00_of_28.hdf5>) = 0\nTS close(18</r/dlio/data/train/img_00_of_28.hdf5>) = 0\n",
     f"{IMG0} fsyncs: DLIO 1, kernel 0"),
    # the sample written in two calls (same bytes, same offsets): an HDF5 file's writes are compared
    ("kernel", f'pwrite64(17<{K0}>, ""..., 1601154, 2048) = 1601154\n',
     f'pwrite64(17<{K0}>, ""..., 1600000, 2048) = 1600000\nTS pwrite64(17<{K0}>, ""..., 1154, 1602048) = 1154\n',
     f"{IMG0} writes: DLIO"),
    # a stat more while writing
    ("kernel", CLOSE0, f"newfstatat(17<{K0}>, \"\", {{st_mode=S_IFREG|0644, st_size=0, ...}}, AT_EMPTY_PATH) = 0\n"
     f"TS {CLOSE0}", f"{IMG0} stats: DLIO 2, kernel 3"),
    # one folder more in the data folder
    ("kernel", 'mkdir("/r/kernel/data/valid", 0755) = 0\n',
     'mkdir("/r/kernel/data/valid", 0755) = 0\nTS mkdir("/r/kernel/data/extra", 0755) = 0\n',
     "extra/ (folder) mkdirs: DLIO 0, kernel 1"),
])
def test_planted_divergence_fails_naming_file_call_and_values(tmp_path, side, old, new, first):
    run = capture(tmp_path)
    edit(run, side, old, new)
    r = generate_row(run)
    assert r["status"] == FAIL and "compared" not in r, r["detail"]
    assert f"first: {first}" in r["detail"], r["detail"]


def test_the_verdict_names_generation_compared_only_when_strace_generate_passed(tmp_path):
    """validate on a copy of tests/data/run-tiny (no strace tables: generation not compared) with the capture's
    tables added: strace.generate PASSes and generation leaves not_compared; with the gen-rename mutant's rename
    planted it FAILs and generation is named again."""
    from validate import checks
    run_tiny = Path(__file__).parent / "data" / "run-tiny"

    def verdict(t: dict) -> tuple[dict, set]:
        rd = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
        shutil.copytree(run_tiny, rd)
        for name, obj in t.items():
            (rd / "tables" / name).write_text(json.dumps(obj))
        v = checks.validate(rd)
        return {c["name"]: c for c in v["checks"]}["strace.generate"], {x["io"] for x in v["not_compared"]}

    row, unseen = verdict({})
    assert row["status"] == SKIP and "generation" in unseen
    row, unseen = verdict(tables(capture(tmp_path / "ok")))
    assert row["status"] == PASS and "generation" not in unseen, row
    bad = capture(tmp_path / "bad")
    edit(bad, "kernel", CLOSE0, f'{CLOSE0}TS rename("{PARTIAL}", "{K0}") = 0\n')
    row, unseen = verdict(tables(bad))
    assert row["status"] == FAIL and "generation" in unseen, row


def test_a_non_hdf5_format_compares_bytes_and_metadata_not_the_write_calls(tmp_path):
    """Another format's writer (numpy's zipfile, PIL) splits its writes its own way: the sample written in two calls
    passes there (the bytes are equal), and a rename still fails."""
    run = capture(tmp_path)
    edit(run, "kernel", f'pwrite64(17<{K0}>, ""..., 1601154, 2048) = 1601154\n',
         f'pwrite64(17<{K0}>, ""..., 1600000, 2048) = 1600000\nTS pwrite64(17<{K0}>, ""..., 1154, 1602048) = 1154\n')
    r = generate_row(run, "npz")
    assert r["status"] == PASS and "the write calls of a non-HDF5 format: not compared" in r["detail"], r["detail"]
    assert generate_row(run, "hdf5")["status"] == FAIL
    edit(run, "kernel", CLOSE0, f'{CLOSE0}TS rename("{K0}.partial.1", "{K0}") = 0\n')
    r = generate_row(run, "npz")
    assert r["status"] == FAIL and f"first: {IMG0} renames: DLIO 0, kernel 1" in r["detail"], r["detail"]


def test_a_write_to_the_completion_record_is_no_difference(tmp_path):
    """The kernel's h5dlio-generation.json (written twice on rank 0) is left out by the rule every parser uses."""
    run = capture(tmp_path)
    rec = "/r/kernel/data/h5dlio-generation.json"
    edit(run, "kernel", f"close(17<{rec}>) = 0\n", f"fsync(17<{rec}>) = 0\nTS close(17<{rec}>) = 0\n")
    assert generate_row(run)["status"] == PASS


def test_skips_say_why(tmp_path):
    t = tables(capture(tmp_path))
    r = st.check_generate(FakeRun({"strace-generate-kernel.json": t["strace-generate-kernel.json"]}))[0]
    assert r["status"] == SKIP and "not traced on both sides" in r["detail"]
    ckpt = FakeRun(t)
    ckpt.cfg = {"workflow": {"train": False, "checkpoint": True}}
    assert st.check_generate(ckpt)[0]["status"] == SKIP
    empty = {n: {**v, "files": {}} for n, v in t.items()}
    assert st.check_generate(FakeRun(empty))[0]["status"] == FAIL


def test_wrap_traces_the_generate_launch_with_its_metadata_calls(tmp_path):
    base = ["/bin/h5dlio", "--config", "w.yaml"]
    gen = st.Strace().wrap(Launch("kernel", "generate", base, {}, tmp_path, tmp_path / "d", {"strace": "strace"}))
    train = st.Strace().wrap(Launch("kernel", "strace", base, {}, tmp_path, tmp_path / "d", {"strace": "strace"}))
    calls = {x: a[a.index("-e") + 1] for x, a in (("gen", gen.argv), ("train", train.argv))}
    for c in ("mkdir", "link", "ftruncate", "creat"):
        assert f"?{c}," in calls["gen"] + "," and f"?{c}," not in calls["train"] + ","
    assert gen.argv[-3:] == base and tmp_path / "strace" in gen.dirs


def test_the_harness_wraps_both_generate_launches_with_strace(tmp_path):
    """harness.plan.launches: the generate launch of each side runs under each chosen profile that traces generation
    (strace), not under the others; without strace chosen it runs bare."""
    import yaml

    from harness import plan as hplan
    from harness.workload import load
    (tmp_path / "wl").mkdir()
    (tmp_path / "wl" / "base_wl.yaml").write_text(yaml.safe_dump({
        "model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
        "reader": {"batch_size": 2, "read_threads": 4}, "workflow": {"checkpoint": False}}))
    (tmp_path / "wl" / "w.yaml").write_text(yaml.safe_dump({"base": "base_wl", "scales": {"tiny": {}}}))
    wl = load("w", "tiny", tmp_path / "wl", tmp_path / "wl")
    for profiles, traced in ((["timing", "strace"], True), (["timing"], False)):
        opt = hplan.Options(profiles=profiles, found={"strace": {"strace": "/usr/bin/strace"}})
        steps = {s.name: s for s in hplan.launches(tmp_path, hplan.build(wl, opt, tmp_path / "venv"))}
        for side in ("dlio", "kernel"):
            argv = steps[f"{side}.generate"].argv
            assert ("/usr/bin/strace" in argv) == traced, argv
            assert (tmp_path / side / "generate" / "strace" in steps[f"{side}.generate"].dirs) == traced


# ---------------------------------------------------------------- live: a mutant kernel against a reused DLIO side

@pytest.mark.dlio
@pytest.mark.slow
def test_live_generation_passes_and_gen_rename_fails_strace_generate(tmp_path):
    """unet3d at tiny scale under the strace profile alone (both generate launches traced): strace.generate PASSes
    and the verdict compared generation; the kernel side again with H5DLIO_MUTATE=gen-rename (training file 0 written
    as <name>.partial.<pid> and renamed), DLIO's side reused: strace.generate, and only it, FAILs naming the file and
    its rename, and generation is not compared."""
    from tests.test_validation_e2e import VENV, failing, harness, validate
    if not VENV or not Path(VENV, "bin", "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={VENV!r}); `make test` installs it")
    rc, run = harness(tmp_path, "--profiles", "strace", workload="unet3d")
    assert rc == 0
    vrc, v = validate(run)
    rows = {c["name"]: c for c in v["checks"]}
    assert vrc == 0 and not failing(v), failing(v)
    assert rows["strace.generate"]["status"] == PASS and "28 data files" in rows["strace.generate"]["detail"]
    assert "generation" not in {x["io"] for x in v["not_compared"]}
    rc, neg = harness(tmp_path / "gen-rename", "--reuse-dlio", str(run), "--profiles", "strace", workload="unet3d",
                      env={"H5DLIO_MUTATE": "gen-rename"})
    assert rc == 0
    vrc, v = validate(neg)
    row = next(c for c in v["checks"] if c["name"] == "strace.generate")
    assert vrc == 1 and failing(v) == {"strace.generate"}, failing(v)
    assert "1 of 28 files or folders differ; first: train/img_00_of_28.hdf5 renames: DLIO 0, kernel 1" in \
        row["detail"], row["detail"]
    assert "generation" in {x["io"] for x in v["not_compared"]}
