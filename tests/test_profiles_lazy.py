"""Importing the profiles is cheap (profiles/__init__.py): registry() imports each profile's package only, never its
parse or check modules nor what they import (numpy, yaml, pydarshan's metadata, orjson), and a run under the timing
profile alone, validated, never imports DFTracer's trace parse. Each is measured in a fresh interpreter; a planted
import (a scratch profile registered at runtime whose module imports one at its top) is caught by the same helper."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import profiles

ROOT = Path(__file__).resolve().parent.parent
RUN_TINY = Path(__file__).parent / "data" / "run-tiny"
HEAVY = ("numpy", "yaml", "importlib.metadata", "orjson")   # what the profiles' parse and analysis modules import
DFTRACER_PARSE = ("profiles.dftracer.collect", "profiles.dftracer.measures", "profiles.dftracer.tables",
                  "profiles.dftracer.traces")

# run in a fresh interpreter: argv[1] JSON {"scratch": folder of extra profile modules, "known": {name: module},
# "validate": a run directory or ""}; prints the modules of interest then loaded
PROBE = """
import json, sys
args = json.loads(sys.argv[1])
sys.path.insert(0, args["scratch"])
import profiles
profiles.KNOWN.update(args["known"])
profiles.registry()
if args["validate"]:
    from validate.checks import validate
    validate(args["validate"])
packages = tuple(m + "." for m in profiles.KNOWN.values())
print(json.dumps(sorted(m for m in sys.modules if m in args["heavy"] or m.startswith(packages))))
"""


def loaded(tmp_path: Path, known: dict | None = None, run: Path | None = None, heavy=HEAVY) -> list[str]:
    """The heavy modules and the profiles' own modules (not their packages) a fresh interpreter has loaded after
    profiles.registry() (with the extra profiles `known`, modules in tmp_path) and, given a run, validating it."""
    args = {"scratch": str(tmp_path), "known": known or {}, "validate": str(run or ""), "heavy": list(heavy)}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.splitlines()[-1])


SCRATCH = """
from profiles import Profile, register
{plant}

@register
class Scratch(Profile):
    name = "scratch"
"""


@pytest.mark.parametrize("plant, caught", [
    ("", None),
    ("import numpy  # noqa", "numpy"),
    ("import yaml  # noqa", "yaml"),
    ("from profiles.dftracer import measures  # noqa", "profiles.dftracer.measures"),
    ("from profiles.timing import check_metrics  # noqa", "profiles.timing.checks"),
])
def test_the_registry_imports_no_profiles_parse_module_nor_numpy(tmp_path, plant, caught):
    """Every profile's package imported, nothing of theirs beyond it; a scratch profile importing numpy, yaml, a parse
    module or (through a re-exported name) a check module at its top is reported."""
    (tmp_path / "scratch_profile.py").write_text(SCRATCH.format(plant=plant))
    got = loaded(tmp_path, {"scratch": "scratch_profile"})
    assert (caught in got) if caught else got == [], got


def test_the_registrys_declarations_resolve_to_their_modules_functions():
    """A Deferred declaration reads as the functions themselves (validate names rows after them), and a re-exported
    name is the module's own object."""
    from profiles import dftracer, timing
    from profiles.dftracer import checks as dchecks
    from profiles.timing import checks as tchecks
    assert timing.Timing.checks == (tchecks.check_metrics,) and timing.check_metrics is tchecks.check_metrics
    assert profiles.get("dftracer").checks[:2] == (dchecks.check_dftracer, dchecks.check_checkpoint_io)
    assert dftracer.prewarm_prefetch is dchecks.prewarm_prefetch
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        dftracer.no_such_name  # noqa: B018


def timing_only(tmp_path: Path) -> Path:
    """run-tiny as PROFILES=timing would leave it: its timing and dataset tables, its steps but the profiles' others"""
    rd = tmp_path / "run"
    shutil.copytree(RUN_TINY, rd)
    for t in (rd / "tables").iterdir():
        if not t.name.startswith(("timing", "dataset")):
            t.unlink()
    m = json.loads((rd / "manifest.json").read_text())
    m["steps"] = {k: v for k, v in m["steps"].items() if k.split(".", 1)[1].split("-")[0] in ("timing", "generate")}
    (rd / "manifest.json").write_text(json.dumps(m))
    return rd


def test_validating_a_timing_run_imports_no_dftracer_parse(tmp_path):
    """validate runs every profile's checks (each skips what it did not record): DFTracer's trace parse stays
    unimported; a scratch profile whose check module imports it is caught."""
    rd = timing_only(tmp_path / "a")
    got = loaded(tmp_path, run=rd, heavy=())
    assert not set(got) & set(DFTRACER_PARSE), got
    assert "profiles.timing.checks" in got and "profiles.dftracer.checks" in got   # the checks did run
    (tmp_path / "scratch_checks.py").write_text("from profiles.dftracer.traces import READS  # noqa\n\n\n"
                                                "def check_scratch(run):\n    return []\n")
    (tmp_path / "scratch_profile.py").write_text(SCRATCH.format(plant="from profiles import Deferred") +
                                                 '    checks = Deferred("scratch_checks:check_scratch")\n')
    got = loaded(tmp_path, {"scratch": "scratch_profile"}, run=rd, heavy=())
    assert "profiles.dftracer.traces" in got, got
