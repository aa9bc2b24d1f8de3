"""The harness's VOL connector stacks (`make validate VOL=...`, harness/vol.py,
docs/vol-validation.md#validated-against-dlio-make-validate-vol):
what the kernel's launches are given, what the manifest collects from each launch's output.json, and validate's
vol.kernel check with its negative controls (a launch reporting another stack, explicit async reads missing or
unasked). No launch: the end-to-end async validation is in tests/test_validation_e2e.py."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_harness import _setup

from harness import collect as hcollect
from harness import plan as hplan
from harness import run as hrun
from harness import vol as hvol
from harness.workload import WorkloadError, load
from validate.checks import check_vol


def test_an_unknown_stack_is_refused_naming_vol():
    with pytest.raises(WorkloadError, match=r"VOL=asyncc \(--vol\): unknown connector stack \(known: native, "):
        hvol.stack("asyncc")
    assert hvol.stack(None).name == hvol.stack("").name == "native"


def test_a_connector_in_the_harness_environment_is_refused():
    """It would reach DLIO's h5py as well as the kernel: the harness refuses it, naming the variable."""
    with pytest.raises(WorkloadError, match=r"HDF5_VOL_CONNECTOR='pass_through under_vol=0;under_info=\{\}' is set"):
        hvol.refuse_env({"HDF5_VOL_CONNECTOR": "pass_through under_vol=0;under_info={}"})
    hvol.refuse_env({"HDF5_VOL_CONNECTOR": ""})  # empty: HDF5's default, accepted


def test_the_plugin_folder_is_the_users_else_the_built_one_else_refused(monkeypatch, tmp_path):
    s = hvol.stack("async")
    assert hvol.plugin_path(s, {"HDF5_PLUGIN_PATH": "/opt/vol/lib"}) == "/opt/vol/lib"
    assert hvol.plugin_path(hvol.stack("pass_through"), {}) == ""  # built into HDF5
    monkeypatch.setattr(hvol, "_stamp", lambda name: "")
    with pytest.raises(WorkloadError, match=r"VOL=async \(--vol\): no vol-async plugin folder"):
        hvol.plugin_path(s, {})
    (tmp_path / "lib").mkdir()
    monkeypatch.setattr(hvol, "_stamp", lambda name: str(tmp_path) if name == ".vol-prefix" else "")
    assert hvol.plugin_path(s, {}) == str(tmp_path / "lib")


def _plan(tmp_path, name: str, read_threads: int = 4) -> dict:
    tmp_path.mkdir(exist_ok=True)
    base = {"model": "m", "framework": "pytorch", "dataset": {"format": "hdf5", "num_files_train": 8},
            "reader": {"batch_size": 2, "read_threads": read_threads}, "workflow": {"checkpoint": False}}
    dl, refs = _setup(tmp_path, {"base": "base_wl", "scales": {"tiny": {}}}, base)
    wl = load("w", "tiny", dl, refs)
    opt = hplan.Options(profiles=["timing", "logvfd"], vol=hvol.stack(name), vol_plugins="/p/lib")
    return {s.name: s for s in hplan.launches(tmp_path / "run", hplan.build(wl, opt, tmp_path / "venv"))}


@pytest.mark.parametrize("name", ["async", "async-prefetch"])
def test_the_kernels_training_launches_get_the_connector_dlio_and_generation_do_not(tmp_path, name):
    """async: every kernel training launch names the connector by key and gets the plugin folder (implicit);
    async-prefetch: only the launches whose ranks read themselves (the Log VFD's read_threads=0 variant), with explicit
    async reads, the ones with reader processes stay native; generation and every DLIO launch get neither (DLIO's
    side is unchanged)."""
    steps = _plan(tmp_path, name)
    conn = "vol-connector=async under_vol=0;under_info={}"
    for step, st in steps.items():
        kernel_train = st.side == "kernel" and st.profile != "generate"
        given = kernel_train and (name == "async" or st.profile == "logvfd-rt0")
        assert (conn in st.argv) == given, step
        assert ("vol-async-prefetch=true" in st.argv) == (given and name == "async-prefetch"), step
        assert (st.env_changes.get("HDF5_PLUGIN_PATH") == "/p/lib") == given, step
        assert "HDF5_VOL_CONNECTOR" not in st.env_changes, step
    assert set(steps) >= {"kernel.timing", "kernel.logvfd", "kernel.logvfd-rt0", "dlio.logvfd-rt0"}


def test_native_plans_as_before_and_in_rank_workloads_prefetch_everywhere(tmp_path):
    steps = _plan(tmp_path / "a", "native")
    assert not any("vol-connector" in " ".join(map(str, s.argv)) or "HDF5_PLUGIN_PATH" in s.env_changes
                   for s in steps.values())
    steps = _plan(tmp_path / "b", "async-prefetch", read_threads=0)
    assert all("vol-async-prefetch=true" in s.argv for s in steps.values()
               if s.side == "kernel" and s.profile != "generate")


def _launch(rd: Path, step: str, stack: list, prefetch: dict | None, argv: list) -> tuple[str, dict]:
    wd = rd / "kernel" / step
    (wd / "out").mkdir(parents=True)
    out = {"vol": {"stack": stack, "selected_by": "key 'vol-connector'"}}
    if prefetch:
        out["async_prefetch"] = {"mode": "explicit", "train": {"batches": prefetch["batches"]}}
    (wd / "out" / "output.json").write_text(json.dumps(out))
    return f"kernel.{step}", {"status": "ok", "workdir": str(wd), "argv": argv}


ASYNC_ARGV = ["h5dlio", "--set", "vol-connector=async under_vol=0;under_info={}"]


def _collected(tmp_path, rt0_stack=("async", "native"), rt0_batches=8, timing_prefetch=None,
               rt0_argv=ASYNC_ARGV + ["--set", "vol-async-prefetch=true"]) -> SimpleNamespace:
    """A run asked for async-prefetch whose launches' output.json say what the arguments give (timing: reader
    processes, left native), collected as the harness collects them (kernel_vol), as validate sees it."""
    rd = tmp_path / "run"
    steps = dict([_launch(rd, "generate", ["native"], None, ["h5dlio"]),
                  _launch(rd, "timing", ["native"], timing_prefetch, ["h5dlio"]),
                  _launch(rd, "logvfd-rt0", list(rt0_stack), {"batches": rt0_batches} if rt0_batches else None,
                          rt0_argv)])
    steps["dlio.timing"] = {"status": "ok", "workdir": str(rd / "dlio" / "timing"), "argv": []}
    m = {"steps": steps, "vol": hvol.manifest_block(hvol.stack("async-prefetch"), "/p/lib", Path("k"))}
    m["vol"]["kernel_launches"] = hcollect.kernel_vol(rd, m)
    return SimpleNamespace(manifest=m)


def test_vol_kernel_passes_on_what_the_launches_reported(tmp_path):
    run = _collected(tmp_path)
    kl = run.manifest["vol"]["kernel_launches"]
    assert set(kl) == {"generate", "timing", "logvfd-rt0"}  # the kernel's launches only
    assert kl["logvfd-rt0"]["async_prefetch"] == {"mode": "explicit", "train_batches": 8}
    assert kl["logvfd-rt0"]["asked"] == {"connector": "async under_vol=0;under_info={}", "prefetch": True}
    [row] = check_vol(run)
    assert row["name"] == "vol.kernel" and row["status"] == "pass", row
    assert row["expected"] == "async > native" and row["observed"] == ["async > native", "native"]
    assert "explicit async reads in logvfd-rt0" in row["detail"]


@pytest.mark.parametrize("case,kw,words", [
    ("a launch on native", {"rt0_stack": ("native",)}, "logvfd-rt0: HDF5 reported native, asked async > native"),
    ("explicit reads asked, none made", {"rt0_batches": 0}, "logvfd-rt0: explicit async reads asked"),
    ("explicit reads not asked", {"timing_prefetch": {"batches": 3}}, "timing: explicit async reads reported"),
    ("no launch given the connector", {"rt0_stack": ("native",), "rt0_batches": 0, "rt0_argv": ["h5dlio"]},
     "VOL=async-prefetch: no kernel launch was given the connector"),
])
def test_vol_kernel_fails_naming_the_launch(tmp_path, case, kw, words):
    """Negative controls: what the kernel's output.json says, not what was asked, decides."""
    [row] = check_vol(_collected(tmp_path, **kw))
    assert row["status"] == "fail" and words in row["detail"], row


def test_vol_kernel_skips_a_run_from_before_it():
    [row] = check_vol(SimpleNamespace(manifest={"steps": {}}))
    assert row["status"] == "skip" and "before the harness recorded" in row["detail"]


def _hdf5(root, threadsafe: bool):
    """An HDF5 install folder: include/H5pubconf.h (thread-safe or not) and lib/."""
    (root / "include").mkdir(parents=True, exist_ok=True)
    (root / "lib").mkdir(exist_ok=True)
    (root / "include" / "H5pubconf.h").write_text("#define H5_HAVE_THREADSAFE 1\n" if threadsafe else "/* none */\n")
    return root


def _darshan_install(root, hdf5_path):
    """A Darshan install as detect() reads it: lib/libdarshan.so and a darshan-config naming its HDF5."""
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "libdarshan.so").write_bytes(b"")
    (root / "bin").mkdir()
    cfg = root / "bin" / "darshan-config"
    cfg.write_text(f'#!/bin/sh\ncase "$1" in --hdf5-mod) echo yes;; --dxt-mod) echo yes;;\n'
                   f'  --hdf5-path) echo {hdf5_path};; --prefix) echo {root};; esac\n')
    cfg.chmod(0o755)
    return root


def _darshan_plan(tmp_path, monkeypatch, threadsafe: bool, ts_darshan=None):
    """plan_sides for a kernel loading tmp_path/hdf5-ts (thread-safe or not), the main Darshan built against
    tmp_path/hdf5, and ts_darshan as the thread-safe flavour (DARSHAN_TS_PREFIX; none: no stamp either)."""
    from profiles import darshan
    ts = _hdf5(tmp_path / "hdf5-ts", threadsafe)
    (ts / "lib" / "libhdf5.so").write_bytes(b"")
    monkeypatch.setattr(darshan.runtime, "linked_hdf5", lambda binary: (ts / "lib" / "libhdf5.so").resolve())
    monkeypatch.setattr(darshan.runtime, "h5py_build", lambda venv: {"mpi": False, "hdf5": None})
    monkeypatch.setattr(darshan.runtime, "TS_STAMP", tmp_path / "no-stamp")
    if ts_darshan:
        monkeypatch.setenv("DARSHAN_TS_PREFIX", str(ts_darshan))
    else:
        monkeypatch.delenv("DARSHAN_TS_PREFIX", raising=False)
    info = {"lib": "/d/libdarshan.so", "hdf5_mod": True, "hdf5_path": str(tmp_path / "hdf5")}
    return darshan.runtime.plan_sides(info, tmp_path / "venv", tmp_path / "h5dlio")["kernel"], ts


@pytest.mark.parametrize("threadsafe", [True, False])
def test_darshan_names_why_it_skips_the_vol_kernel(tmp_path, monkeypatch, threadsafe):
    """Darshan's HDF5 module forwards to the libhdf5 it was built against (the project's, `make darshan`): the vol
    kernel loads the thread-safe one, so without a Darshan built against that one its side is a named skip saying how
    to build it; another HDF5 keeps the old hint (the control: the thread-safe reason is not given to every
    mismatch)."""
    side, _ = _darshan_plan(tmp_path, monkeypatch, threadsafe)
    why = side["skip"]
    assert ("a thread-safe HDF5" in why and "make darshan-ts" in why) == threadsafe, why
    assert ("build the kernel with HDF5_DIR=" in why) == (not threadsafe), why


def test_the_vol_kernel_gets_the_darshan_built_against_its_hdf5(tmp_path, monkeypatch):
    """With the thread-safe flavour (make darshan-ts, DARSHAN_TS_PREFIX) the vol kernel's side preloads that Darshan,
    then the kernel's own libhdf5; a flavour built against another HDF5 (planted) is not used: a skip naming it."""
    good = _darshan_install(tmp_path / "darshan-ts", tmp_path / "hdf5-ts")
    side, ts = _darshan_plan(tmp_path, monkeypatch, True, good)
    want = [str(good / "lib" / "libdarshan.so"), str((ts / "lib" / "libhdf5.so").resolve())]
    assert side.get("preload") == want, side
    other = _hdf5(tmp_path / "hdf5-other", True)
    (other / "lib" / "libhdf5.so").write_bytes(b"")
    bad = _darshan_install(tmp_path / "darshan-other", other)
    side, _ = _darshan_plan(tmp_path, monkeypatch, True, bad)
    assert "preload" not in side and str(bad) in side["skip"] and "make darshan-ts" in side["skip"], side


def test_a_run_resumes_only_with_the_kernel_it_ran(tmp_path, monkeypatch):
    """A VOL=async run's kernel side ran the vol kernel: resuming it with another kernel (build/h5dlio, which cannot
    load vol-async) is refused naming the one to give; the same kernel resumes."""
    m = {"workload": {k: "x" for k in ("name", "scale", "base", "config", "base_path")}, "ranks": 2,
         "launcher": "mpirun", "profiles": [], "kernel_sets": [], "steps": {},
         "vol": hvol.manifest_block(hvol.stack("async-prefetch"), "/p/lib", tmp_path / "vol-h5dlio")}
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    monkeypatch.setattr(hrun, "KERNEL_BIN", tmp_path / "h5dlio")
    why = hrun.check_resumable(tmp_path)
    assert why and f"H5DLIO_KERNEL_BIN={tmp_path / 'vol-h5dlio'}" in why and "VOL=async-prefetch" in why, why
    monkeypatch.setattr(hrun, "KERNEL_BIN", tmp_path / "vol-h5dlio")
    assert hrun.check_resumable(tmp_path) is None


# ---------------------------------------------------------------- the report: which stack the kernel's times ran on

def _report_run(tmp_path: Path, requested: str, stacks: dict):
    """tests/data/run-tiny with a planted manifest vol block: kernel launch -> the stack its output.json reported."""
    import shutil

    from reports.rundir import load_run
    d = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run-tiny", d)
    m = json.loads((d / "manifest.json").read_text())
    m["vol"] = {**hvol.manifest_block(hvol.stack(requested), "", Path("k")),
                "kernel_launches": {s: {"stack": st, "async_prefetch": None} for s, st in stacks.items()}}
    (d / "manifest.json").write_text(json.dumps(m))
    return load_run(d)


def _note(run) -> list[str]:
    from reports.sections import runtime_section
    return [b.text for b in runtime_section(run) if getattr(b, "text", "").startswith("Asked VOL=")]


TIMED = ("timing", "timing-2", "timing-3")  # the fixture's kernel timing launches


def test_the_report_says_which_stack_the_kernels_times_ran_on(tmp_path):
    """The runtime section (the kernel's epoch times, AU and throughput beside DLIO's) names the stack its timing
    launches reported: under it for pass_through; for async-prefetch (timing launches native) it says no time shown is
    under the connector, naming the launch that was; nothing for a native run."""
    pt = _note(_report_run(tmp_path / "pt", "pass_through", {**{s: ["pass_through", "native"] for s in TIMED},
                                                              "generate": ["native"]}))
    assert len(pt) == 1 and "ran on `pass_through > native` (timing, timing-2, timing-3)" in pt[0]
    assert "below are under that stack, beside DLIO's on native" in pt[0]
    ap = _note(_report_run(tmp_path / "ap", "async-prefetch", {**{s: ["native"] for s in TIMED},
                                                                "logvfd-rt0": ["async", "native"]}))
    assert len(ap) == 1 and "ran on `native` (timing, timing-2, timing-3)" in ap[0]
    assert "no kernel time, AU or throughput below is under the connector" in ap[0] and "are logvfd-rt0" in ap[0]
    assert _note(_report_run(tmp_path / "n", "native", {s: ["native"] for s in TIMED})) == []


def test_the_report_names_the_reported_stack_not_the_request(tmp_path):
    """Negative control: pass_through asked, but every launch reported native (planted): the report says native and
    that nothing shown is under the connector, never pass_through."""
    note = _note(_report_run(tmp_path, "pass_through", {s: ["native"] for s in TIMED}))
    assert len(note) == 1 and "ran on `native`" in note[0] and "pass_through >" not in note[0]
    assert "the launches HDF5 ran under it are none" in note[0]
