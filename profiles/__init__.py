"""Profiles: one module per profiler, each defining one `Profile` subclass registered with @register. The harness and
validate loop over the registry: adding a profile is one file in this folder (found by `registry()`, nothing to
list anywhere) plus its tests.

A profile says, for a run:
- available(ctx) -> Found(ok, reason, info): whether it can run on this machine (info: what it found, handed back
  to wrap as Launch.info); prepare(ctx, found) -> {side: why}: a side that cannot run under it here (Darshan's);
- launches(shape) -> [LaunchSpec]: its steps (named "<profile>" or "<profile>-<variant>"), each on both sides,
  reading the side's own dataset or the other side's, with read threads or in the ranks (read_threads=0);
- wrap(launch) -> Wrapped: the program's argv and the environment for the ranks, folders and files it needs; a
  profile with traces_generation also wraps each side's generate launch (Launch.step "generate"; the harness chains
  such profiles' wraps) and collect() gets that launch too;
- collect(done) -> {table file name: object} written to tables/ (merge() joins the launches' parts);
- checks: the functions validate runs for it, each fn(run: RunView) -> list of check rows (result below);
- what it declares about itself, read by the harness and validate so they name no profile: options (its command-line
  flags, given to it in Context.options; check_environment() refuses a bad environment variable of its own before
  validate's checks), covers (the classes of I/O its checks compare, validate/checks.py CLASSES, each with how: the
  verdict's `not compared ... (needs ...)`), claims (what its rows that do not say so themselves compared) and
  kernel_only (the prefixes of its rows a kernel-only run keeps); and what the report reads of it: describes (its
  check family in one line), metadata_label (its tables carry the metadata rate) and report_sections (its sections
  of the report: functions of a ReportView returning common.blocks blocks, each placed after one of the report's own
  sections: ReportSection) and paper_sections (its parts of the paper report, from the paper's runs); what the
  sections several profiles feed say of it: label, similarity (its similarity row) and writes (a catalogue table its
  collect writes); what fidelity/ and bench/perf read: first_difference (its tables of per-open blocks) and baseline
  (the profile the others' cost is measured against).

The registry (KNOWN below) is the one place outside a profile's own module or package that names it: adding a
profiler is its package and one line there. registry() imports them all; get(name) imports one. Importing a profile's
package is cheap: its __init__ holds the Profile and its declarations only; its parse and check modules (numpy, yaml,
a tracer's reader) are imported when first used: its checks and report_sections are Deferred (imported when validate
or the report reads them), its methods import what they call, and the names it re-exports are resolved on first use
(exports(): the package's module __getattr__). tests/test_profiles_lazy.py holds that to it.

Where this sits: profiles import only common/ (and the standard library); the harness (wrap, collect) and validate
(checks) import profiles, and reports/ this registry only (the declarations above, never a profile's package).
Nothing here imports harness/, validate/ or reports/, so all three may use it without a circle; what a check needs
of validate (the analytic model) it gets through the RunView it is handed."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from common.mapping import dotted_get
from common.rundir import SIDES  # noqa: F401  (re-exported: the profiles' callers take it from here)

# Every profile: its name -> its module or package (in profiles/). The one line a new profiler adds here.
KNOWN = {"timing": "profiles.timing", "logvfd": "profiles.logvfd", "dftracer": "profiles.dftracer",
         "darshan": "profiles.darshan", "strace": "profiles.strace"}


# A check row of verdict.json (validate's own checks and every profile's) and its statuses.
PASS, FAIL, SKIP = "pass", "fail", "skip"


def result(name, status, expected=None, observed=None, detail="", required=True) -> dict:
    return {"name": name, "status": status, "expected": expected, "observed": observed, "detail": detail,
            "required": required}


@dataclass(frozen=True)
class Context:
    """What a profile may look at to say whether (and how) it runs here."""
    dlio_venv: Path
    kernel_bin: Path
    options: dict = field(default_factory=dict)  # profile options from the command line, e.g. darshan_prefix


@dataclass
class Found:
    ok: bool
    reason: str = ""                           # why not (printed and recorded in the manifest's skipped_profiles)
    info: dict = field(default_factory=dict)   # what it found (a library, an install): Launch.info


@dataclass(frozen=True)
class Option:
    """A profile's command-line option (python -m harness run): the flag, its help, the Context.options key."""
    flag: str                    # e.g. "--darshan-prefix"
    help: str
    key: str = ""                # Context.options key: the flag's name with "_" (darshan_prefix) when empty

    @property
    def dest(self) -> str:
        return self.key or self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Shape:
    """The run as planning sees it: the merged workload config, the timing repetitions and the rules the probe saw
    the reference DLIO follow (harness/probe.py; empty when not probed)."""
    config: dict
    repeat: int = 1
    rules: dict = field(default_factory=dict)
    ranks: int = 1

    @property
    def read_threads(self) -> int:
        return int((self.config.get("reader") or {}).get("read_threads", 1))

    @property
    def reads_data(self) -> bool:
        return not checkpoint_only(self.config)


def checkpoint_only(cfg: dict) -> bool:
    """DLIO's checkpoint-only workflow (workflow.train false, workflow.checkpoint true; 2.0.0-52 utils/config.py:976-980
    sets checkpoint_only, main.py:376 then runs no training and :420 _checkpoint): no dataset, nothing read but the
    checkpoints, so no generation launch and no data-file comparison."""
    wf = cfg.get("workflow") or {}
    return not wf.get("train", True) and bool(wf.get("checkpoint", False))


def compute_asks(cfg: dict) -> list[float]:
    """the compute times a step may ask for: computation_time, and eval_time when evaluation is on"""
    ct = float(dotted_get(cfg, "train.computation_time", 0) or 0)
    et = float(dotted_get(cfg, "evaluation.eval_time", 0) or 0) if dotted_get(cfg, "workflow.evaluation") else 0.0
    return sorted({a for a in (ct, et) if a > 0})


def checkpoint_dir(workdir: Path) -> Path:
    """Where a launch's checkpoints go (both sides; the harness sets the folder, the profiles find it)."""
    return workdir / "checkpoints"


@dataclass(frozen=True)
class LaunchSpec:
    step: str                    # after "<side>.": the profile's name, or "<name>-<variant>"
    data: str = "own"            # whose dataset the launch reads: "own" or "other" (the cross-read)
    read_threads_0: bool = False  # read in the ranks on both sides (--set read-threads=0 / reader.read_threads=0)


@dataclass(frozen=True)
class Launch:
    """One side's launch of a step, before wrapping."""
    side: str
    step: str
    argv: list
    env: dict
    workdir: Path                # <run>/<side>/<step>
    data: Path                   # the dataset it reads
    info: dict                   # Found.info
    shape: Shape | None = None   # the run's shape (files and ranks: what a profile sizes its buffers from)


@dataclass(frozen=True)
class Wrapped:
    argv: list
    env: dict                    # reaches the ranks only (the launcher's -x K=V)
    dirs: tuple = ()             # folders that must exist at launch
    files: tuple = ()            # (path, text) written at launch


@dataclass(frozen=True)
class Done:
    """A finished launch, as collection sees it."""
    name: str                    # "<side>.<step>"
    side: str
    step: str
    workdir: Path
    wall_s: float
    data: Path                   # the side's own dataset, as its traces name it (a reused step: the earlier run's)
    other_data: Path


class RunView(Protocol):
    """What a profile's check may read of the run being validated: a narrow view, not a reader. Satisfied by
    validate.checks.Run, the run directory's one reader (common.rundir.RunDir: manifest, step, cfg, ranks, release,
    table) with validate's own analytic model and derived tables (tests/test_sources.py holds it to this)."""
    path: Path                   # the run directory (raw outputs a check may analyse: <side>/<step>/...)
    manifest: dict
    ranks: int
    cfg: dict
    release: str

    def table(self, name: str, shared: bool = False, skip: tuple[str, ...] = ()) -> Any: ...  # common.rundir
    def step(self, name: str) -> dict | None: ...
    def model_reads(self, cfg: dict) -> dict: ...  # validate's analytic model: rank -> phase segments
    def model_checkpoint_io(self) -> dict: ...  # its POSIX calls per checkpoint file ({} where it has none)
    def put_table(self, name: str, obj: Any) -> None: ...  # a derived table (files-<profile>.json) to store
    derived: dict                # the tables put so far (name -> object)


class ReportView(Protocol):
    """What a profile's report section may read of the run being rendered: the run directory's files only, never a
    trace to parse. A narrow view, not a reader: satisfied by reports.rundir.RunData, the run directory's one reader
    (common.rundir.RunDir: manifest, verdict, table, table_part, table_names, absent_reason, ...) with the report's
    links (tests/test_sources.py holds it to this)."""
    path: Path
    manifest: dict
    verdict: dict | None         # None: never validated

    def table(self, name: str) -> Any: ...          # tables/<name> parsed, None when absent
    def has_table(self, name: str) -> bool: ...     # whether tables/<name> exists (without reading it)
    def link(self, rel: str) -> str: ...            # [rel](href): a file of the run directory, linked from the report
    def absent_reason(self, profile: str) -> str: ...   # why a profile's tables are absent, from the manifest
    def check(self, name: str) -> dict | None: ...  # verdict.json's row of that name, None when absent

    @property
    def checks(self) -> list[dict]: ...             # verdict.json's rows ([] when never validated)

    @property
    def config(self) -> dict: ...                   # the merged workload (manifest.json: workload.config)


@dataclass(frozen=True)
class Similarity:
    """A profile's similarity row (the DLIO paper's cosine similarity of the two sides' I/O features,
    profiles/shared/files.py) as the report's similarity section shows it."""
    row: str                     # the row's name in verdict.json
    source: str                  # what the features come from, in the report's words ("DFTracer POSIX events")
    needs: str                   # what a run needs for the row, in the report's words ("the DFTracer profile")


Check = Callable[[RunView], list]
Section = Callable[[ReportView], list]   # -> common.blocks blocks, in the order they are shown
# the paper report's part of a profile (reports/paper.py): (the paper's runs, how the paper names a run) -> blocks
PaperSection = Callable[[list, Callable[[ReportView], str]], list]


@dataclass(frozen=True)
class ReportSection:
    """A profile's section of the run's report and where it goes: right after the report's own section `after` (a
    key of reports/sections.py SECTIONS: verdict, workload, runtime, checkpoints, mlperf, files, similarity), or after
    all of them when "" (the default). Sections placed at the same point follow each other in the profiles' order, a
    profile's own in the order it lists them; a place the report does not have is refused (ValueError naming it)."""
    section: Section | str       # a str ".module:function" inside Deferred (imported when the report reads it)
    after: str = ""
Claim = Callable[[RunView, dict], tuple]   # (run, a row) -> the classes of I/O the row compared (empty: none)


def _n(x: Any) -> int:
    """How many items a row's expected value counts: an int as it is, a per-rank counts dict by its opens."""
    if isinstance(x, dict):
        x = x.get("opens")
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def counted(*classes: str) -> Claim:
    """A claim: the row compared these classes when its expected value counts at least one item."""
    def claim(run: RunView, c: dict) -> tuple[str, ...]:
        return classes if _n(c["expected"]) > 0 else ()
    return claim


def touched(*classes: str) -> Claim:
    """A claim: the row compared these classes whenever it ran (a set of every file and call a side made is never
    empty for a program)."""
    return lambda run, c: classes


def per_file(profile: str) -> Claim:
    """A claim of a per-file comparison: the POSIX I/O on the data files when it expected at least one file, and
    their reads when its derived table (tables/files-<profile>.json) pairs a file read on both sides (files opened
    and never read compare no read)."""
    def claim(run: RunView, c: dict) -> tuple[str, ...]:
        if _n(c["expected"]) <= 0:
            return ()
        pairs = (run.derived.get(f"files-{profile}.json") or {}).get("pairs") or []
        return ("posix_data", "data_reads") if any(a > 0 and b > 0 for a, b, *_ in pairs) else ("posix_data",)
    return claim


class Deferred:
    """A declaration naming functions of a profile's own modules (".checks:check_x": module relative to the package
    that defines the Profile, then the function; or a ReportSection holding such a name), imported when it is first
    read: a Profile's checks, report_sections and paper_sections, so that registry() imports no check or report
    module. Reads as the tuple of those functions (and ReportSections of them)."""

    def __init__(self, *targets: str):
        self.targets = targets
        self.package = ""
        self.resolved: tuple | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.package = owner.__module__

    def __get__(self, obj: Any, owner: type | None = None) -> tuple:
        if self.resolved is None:
            self.resolved = tuple(ReportSection(self._function(t.section), t.after) if isinstance(t, ReportSection)
                                  else self._function(t) for t in self.targets)
        return self.resolved

    def _function(self, target: str) -> Callable:
        module, name = target.split(":")
        return getattr(importlib.import_module(module, self.package), name)


def exports(package: str, names: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """A profile package's module __getattr__ (PEP 562): the names it re-exports ({".module": (name, ...)}, module
    relative to the package) and its modules, each imported when a caller first asks for it."""
    where = {n: m for m, ns in names.items() for n in ns}
    folder = Path(sys.modules[package].__file__ or "").parent

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name], package), name)
        if not name.startswith("_") and (folder / f"{name}.py").is_file():
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return __getattr__


class Profile:
    name: ClassVar[str] = ""
    order: ClassVar[int] = 50          # listing order (--profiles, the manifest) and the order of its checks
    launch_order: ClassVar[int | None] = None  # order of its launches in a run, if not `order`
    checks: ClassVar[tuple[Check, ...] | Deferred] = ()   # a Deferred(".checks:check_x", ...) in a package
    # its collect() holds a table per data file (~1-1.5 KB each): collection parses one such launch at a time
    holds_file_tables: ClassVar[bool] = False
    # it also wraps and collects the generate launches (step "generate", no LaunchSpec of its own); launches() still
    # names only its own steps
    traces_generation: ClassVar[bool] = False
    # it needs nothing beyond the kernel and the reference DLIO (no tracer to install): the profiles of Options built
    # in code (harness.plan.Options' default: the sweep's kernel checks, tests)
    builtin: ClassVar[bool] = False
    # its launches run the programs under no profiler, timed: the baseline a profiler's cost is measured against and
    # the launch bench/perf times (baseline() below: exactly one profile says so)
    baseline: ClassVar[bool] = False
    options: ClassVar[tuple[Option, ...]] = ()       # its command-line flags (harness run), in Context.options
    covers: ClassVar[dict[str, str]] = {}            # class of I/O (validate's CLASSES) -> how its checks compare it
    claims: ClassVar[tuple[tuple[str, Claim], ...]] = ()  # (fnmatch pattern of its row names, what such a row compared)
    kernel_only: ClassVar[tuple[str, ...]] = ()      # its rows (name prefixes) a kernel-only run keeps
    # its steps whose tables (<step>-<side>.json) hold each rank's per-open blocks (ranks.<r>.blocks), the ordered one
    # first: the DLIO version matrix's divergence report shows the first block that differs (fidelity/matrix.py)
    first_difference: ClassVar[tuple[str, ...]] = ()
    # read by the report (reports/ imports this registry, never a profile's package): what its family of checks (rows
    # "<name>.*") compares, in one line (the verdict section's table of families), and, for a profile whose
    # tables/<name>-<side>.json carry the metadata rate (profiles.features.metadata_rate), the label of its rows
    describes: ClassVar[str] = ""
    metadata_label: ClassVar[str] = ""
    # its sections of the run's report, each placed after one of reports/'s own (ReportSection: reports/sections.py
    # SECTIONS) or after all of them; in a package, Deferred(ReportSection(".report:fn", after=...), ...)
    report_sections: ClassVar[tuple[ReportSection, ...] | Deferred] = ()
    # read by the report's sections that several profiles feed, which name a profile by these: label, the profiler's
    # name in the report's prose (its name when empty; the per-file section names the profiles with a
    # "<name>.per_file" claim); similarity, its similarity row (Similarity); writes, the tables of the run directory's
    # catalogue (common.rundir) its collect writes beside its own "<name>-*.json" (the runtime section says why
    # tables/timing.json is absent through its writer)
    label: ClassVar[str] = ""
    similarity: ClassVar[Similarity | None] = None
    writes: ClassVar[tuple[str, ...]] = ()
    # its parts of the paper report (make paper: reports/paper.py), after the paper's comparison of the runs, in the
    # profiles' order (the Log VFD's thesis Table 6.1 from the first run that ran it)
    paper_sections: ClassVar[tuple[PaperSection, ...] | Deferred] = ()

    def check_environment(self) -> None:
        """Before validate's checks: raise ValueError naming an environment variable of its own that is bad input."""

    def available(self, ctx: Context) -> Found:
        return Found(True)

    def default_at(self, scale: str) -> bool:
        """Whether a run at this scale preset (SCALE=) that names no PROFILES uses it when available; a run that
        names it always does."""
        return True

    def bad_options(self, ctx: Context) -> str | None:
        """An option the user set for this profile that names something unusable (bad input, exit 2: say which
        option and why); None when there is none. Unlike available(), this refuses the run instead of skipping."""
        return None

    def prepare(self, ctx: Context, found: Found) -> dict[str, str]:
        """Once it is chosen: {side: why} for a side it cannot run here; it may add to found.info what wrap needs."""
        return {}

    def launches(self, shape: Shape) -> list[LaunchSpec]:
        return [LaunchSpec(self.name)]

    def refuse(self, shape: Shape, data_dir: Path) -> str | None:
        """Why this profile cannot record this run's shape here (bad input, exit 2, before any launch), or None."""
        return None

    def wrap(self, launch: Launch) -> Wrapped:
        return Wrapped(list(launch.argv), dict(launch.env))

    def collect(self, done: Done) -> dict[str, Any]:
        """Tables of one finished launch: file name in tables/ -> object (a str is stored as it is)."""
        return {}

    def merge(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        """The tables of all its launches (collect() results in launch order); by default their union."""
        return {k: v for p in parts for k, v in p.items()}

    def owns(self, step: str) -> bool:
        return step == self.name or step.startswith(self.name + "-")


_REGISTRY: dict[str, Profile] = {}


def register(cls: type[Profile]) -> type[Profile]:
    """Class decorator: one instance of cls joins the registry under cls.name."""
    if not cls.name or "." in cls.name or cls.name == "generate":
        raise ValueError(f"profile {cls.__name__}: name {cls.name!r} (a word, not 'generate', no '.')")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def registry() -> dict[str, Profile]:
    """Every profile (KNOWN), in their order: each module imported once (it registers its own)."""
    for name in KNOWN:
        get(name)
    return dict(sorted(_REGISTRY.items(), key=lambda kv: kv[1].order))


def get(name: str) -> Profile:
    """One profile, importing only its module."""
    if name not in _REGISTRY and name in KNOWN:
        importlib.import_module(KNOWN[name])
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown profile '{name}' (known: {', '.join(KNOWN)})") from None


def baseline() -> Profile:
    """The profile whose launches run the programs under no profiler (Profile.baseline)."""
    found = [p for p in registry().values() if p.baseline]
    if len(found) != 1:
        raise LookupError(f"{len(found)} baseline profiles ({', '.join(p.name for p in found)}): exactly one declares "
                          "Profile.baseline")
    return found[0]


def owner(step: str) -> Profile | None:
    """The profile a step (the part after "<side>.") belongs to."""
    return next((p for p in registry().values() if p.owns(step)), None)
