"""Test tiers (docs/testing.md): a pytest plugin (tests/conftest.py loads it) with the guard and the fixtures of what
the markers name.

Markers (registered in pytest.ini, which runs pytest with --strict-markers): `dlio`, `darshan`, `slurm`, `browser`,
`latex` name what a test needs beyond the kernel's build and .venv; `slow` marks a long test. `make test-fast` runs
what carries none of them; `make test` runs everything.

The tiers cannot rot: a test that uses one of those things without its marker FAILS, whichever tier runs it. Used
means, while the test (or its fixtures) runs:
  - a fixture of that thing is requested (`dlio_venv`, `chromium`, `cluster`);
  - a DLIO venv variable is read (H5DLIO_DLIO_VENV, H5DLIO_DLIO_VENV_MPI, H5DLIO_MLPERF_DLIO_VENV; unmarked tests run
    without them, so a read finds nothing and their child processes do not inherit them either), or H5DLIO_CHROMIUM;
  - a program of that thing is started (chromium, pdflatex/pdftotext/pdffonts, srun/sbatch/salloc/slurmctld/...,
    a Darshan runtime's darshan-config, or LD_PRELOAD of a libdarshan.so), or `make <target>` for a target that
    needs it (scripts/make_targets.py: `make validate` installs the DLIO venv; `make -n` runs nothing);
  - a path of a DLIO venv is opened, listed or passed to a child (the cache's dlio-* folders, build/.dlio-venv*).
These are seen by a Python audit hook (sys.addaudithook) in this process, so a test cannot hide them by catching
an exception. The marker's own tier may still skip the test with its reason when the thing is not installed."""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

TIER_MARKERS = ("dlio", "darshan", "slurm", "browser", "latex")   # what a test needs; `slow` is about time only
# `vendored`: the test's verdict depends on the vendored sources of ../shared/vendor (Darshan, Argobots, vol-async,
# vol-cache) or on what was built from them; not a tier of its own (test-fast runs these tests), but the set .ci/run
# runs again from a clone with no ../shared beside it, as a user's clone is (issue 39, docs/testing.md)
GUARDED = (*TIER_MARKERS, "vendored")
SHARED = REPO.parent / "shared"
VENDORED_ENV = ("H5DLIO_DARSHAN_PREFIX", "H5DLIO_VOL_PREFIX", "H5DLIO_BIN_TS")  # what make test-py gives the tests
CACHE = Path(os.environ.get("H5DLIO_CACHE") or Path.home() / ".cache" / "h5dlio")
DLIO_ENV = ("H5DLIO_DLIO_VENV", "H5DLIO_DLIO_VENV_MPI", "H5DLIO_MLPERF_DLIO_VENV", "H5DLIO_DLIO3_VENV",
            "H5DLIO_DLIO3_MLPS_VENV")
FIXTURES = {"dlio_venv": "dlio", "chromium": "browser", "cluster": "slurm", "nodes": "slurm"}
ENV = {**{k: "dlio" for k in DLIO_ENV}, "H5DLIO_CHROMIUM": "browser", **{k: "vendored" for k in VENDORED_ENV}}
PROGRAMS = {
    "browser": {"chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell"},
    "latex": {"pdflatex", "pdftotext", "pdffonts", "kpsewhich", "xelatex", "lualatex", "latexmk"},
    "slurm": {"srun", "sbatch", "salloc", "squeue", "scontrol", "sinfo", "sacct", "scancel", "slurmctld", "slurmd",
              "munged"},
}
# make targets that need each thing (the Makefile's own prerequisites, with scripts/make_targets.py)
_spec = importlib.util.spec_from_file_location("make_targets", REPO / "scripts" / "make_targets.py")
make_targets = sys.modules["make_targets"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_targets)
MAKE_TARGETS = {"dlio": make_targets.needing({"dlio-venv", "dlio-venv-spec"}),
                "browser": make_targets.needing({"chromium"}), "latex": make_targets.needing({"latex"}),
                "slurm": make_targets.needing({"slurm"}),
                "vendored": make_targets.needing({"vol-tarballs", "darshan-tarball", "darshan", "darshan-for-tests",
                                                     "vol-for-tests"}) - {"test", "test-py"}}


def dlio_paths() -> list[str]:
    """path prefixes that are a DLIO venv: the env variables' values, the cache's dlio-* folders, the stamps"""
    paths = [str(CACHE / "dlio-"), str(REPO / "build" / ".dlio-venv")]
    paths += [os.environ[k] for k in DLIO_ENV if os.environ.get(k)]
    return [p.rstrip("/") for p in paths]


class _Guard:
    """What the running test may use (its markers) and what it used without the marker (violations)."""

    def __init__(self):
        self.item = None
        self.allowed: set[str] = set(TIER_MARKERS)
        self.violations: list[str] = []
        self.hidden: dict[str, str] = {}
        self.dlio = dlio_paths()
        self.tmp = os.path.realpath(tempfile.gettempdir())

    def flag(self, marker: str, what: str) -> None:
        if marker not in self.allowed:
            msg = f"uses {what} without @pytest.mark.{marker} (tests/tiers.py, docs/testing.md)"
            if msg not in self.violations:
                self.violations.append(msg)

    def _path(self, s: str, how: str) -> None:
        if "vendored" not in self.allowed and (s == str(SHARED) or s.startswith(str(SHARED) + "/")):
            self.flag("vendored", f"../shared ({how} {s})")
        if "dlio" not in self.allowed and any(s == p or s.startswith(p + "/") or s.startswith(p + ".")
                                              or (p.endswith("dlio-") and s.startswith(p)) for p in self.dlio):
            self.flag("dlio", f"the DLIO venv ({how} {s})")

    def _program(self, argv: list[str], env) -> None:
        if not argv:
            return
        names = [os.path.basename(a) for a in argv]
        for marker, progs in PROGRAMS.items():
            hit = next((n for n in names if n in progs), None)
            if hit:
                self.flag(marker, f"{marker} (runs {hit}: {' '.join(argv)[:200]})")
        if names[0] == "make" and "-n" not in argv and "--dry-run" not in argv:
            for marker, targets in MAKE_TARGETS.items():
                hit = next((a for a in argv[1:] if a in targets), None)
                if hit:
                    self.flag(marker, f"make {hit} (it needs {marker}: scripts/make_targets.py)")
        cfg = next((a for a in argv if os.path.basename(a) == "darshan-config"), None)
        if cfg and not os.path.realpath(cfg).startswith(self.tmp + "/"):
            self.flag("darshan", f"a live Darshan ({cfg})")
        preload = (env or {}).get("LD_PRELOAD", "") if hasattr(env, "get") else ""
        for lib in str(preload).split(":"):
            if "libdarshan" in lib and os.path.exists(lib) and not os.path.realpath(lib).startswith(self.tmp + "/"):
                self.flag("darshan", f"a live Darshan (LD_PRELOAD={lib})")
        for a in argv:
            self._path(a, "passes")

    def audit(self, event: str, args: tuple) -> None:
        if self.item is None or self.allowed.issuperset(GUARDED):
            return
        try:
            if event == "subprocess.Popen":
                exe, argv, _cwd, env = args
                argv = [os.fsdecode(a) for a in ([argv] if isinstance(argv, str | bytes) else list(argv or []))]
                self._program(argv, env)
            elif event in ("os.posix_spawn", "os.exec"):
                self._program([os.fsdecode(a) for a in args[1]], args[2] if len(args) > 2 else None)
            elif event == "os.system":
                self._program(os.fsdecode(args[0]).split(), None)
            elif event in ("open", "os.listdir", "os.scandir") and args and \
                    isinstance(args[0], str | bytes | os.PathLike):
                self._path(os.path.abspath(os.fsdecode(args[0])), "opens")
        except Exception as e:  # noqa: BLE001 - an audit hook must never break the audited call
            self.violations.append(f"tests/conftest.py guard error on {event}: {e!r}")


GUARD = _Guard()
sys.addaudithook(GUARD.audit)


class _GuardedEnviron(type(os.environ)):
    """os.environ that reports a read of a variable hidden from an unmarked test (get, [], in: all read here)"""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:   # hidden, or never set; a value the test set itself is its own, not the machine's
            if GUARD.item is not None and key in GUARD.hidden and not _from_monkeypatch():
                GUARD.flag(GUARD.hidden[key], f"${key}")
            raise


def _from_monkeypatch() -> bool:
    """monkeypatch.setenv/delenv read the old value to restore it later: that is not the test using it"""
    f = sys._getframe(2)
    for _ in range(4):
        if f is None:
            return False
        if f.f_code.co_filename.endswith(os.path.join("_pytest", "monkeypatch.py")):
            return True
        f = f.f_back
    return False


os.environ.__class__ = _GuardedEnviron


def _markers(item) -> set[str]:
    return {m.name for m in item.iter_markers()}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    GUARD.item, GUARD.violations = None, []
    GUARD.allowed = _markers(item)
    GUARD.hidden = {k: m for k, m in ENV.items() if m not in GUARD.allowed}
    item._tier_env = {k: os.environ.pop(k) for k in GUARD.hidden if k in os.environ}
    GUARD.item = item
    for f, marker in FIXTURES.items():
        if f in item.fixturenames:
            GUARD.flag(marker, f"the fixture {f!r}")
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    GUARD.item = None      # a module fixture's teardown may run at an unrelated last test: not judged
    yield
    os.environ.update(getattr(item, "_tier_env", {}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """a test (or its fixtures) that used what its markers do not name fails, even if it passed or skipped"""
    outcome = yield
    rep = outcome.get_result()
    if call.when in ("setup", "call") and GUARD.item is item and GUARD.violations:
        rep.outcome = "failed"
        rep.longrepr = f"{item.nodeid}: test tier guard:\n  " + "\n  ".join(GUARD.violations)
        GUARD.violations = []


# ---------------------------------------------------------------- fixtures of the things the markers name

@pytest.fixture(scope="session")
def dlio_venv() -> Path:
    """the reference DLIO 2.0.0 venv (H5DLIO_DLIO_VENV, else build/.dlio-venv); needs @pytest.mark.dlio"""
    venv = os.environ.get("H5DLIO_DLIO_VENV")
    stamp = REPO / "build" / ".dlio-venv"
    if not venv and stamp.exists():
        venv = stamp.read_text().strip()
    if not venv or not (Path(venv) / "bin" / "dlio_benchmark").exists():
        pytest.skip(f"no reference DLIO venv (H5DLIO_DLIO_VENV={venv!r}; `make dlio-venv` installs it)")
    return Path(venv)


@pytest.fixture(scope="session")
def chromium() -> str:
    """the headless Chromium to drive (H5DLIO_CHROMIUM, else chromium on PATH; tests/browser.py); needs
    @pytest.mark.browser"""
    from browser import chromium_exe
    return chromium_exe()
