"""Profiler adapters. Each module: wrap(argv, env, outdir) -> (argv, env) for a launch, and parse(outdir) -> tables.
Registry: PROFILES maps a name to its module path (imported lazily)."""
from __future__ import annotations

import importlib
from types import ModuleType

PROFILES = {
    "timing": "profiles.timing",
    "logvfd": "profiles.logvfd",
    "dftracer": "profiles.dftracer",
    "darshan": "profiles.darshan",
}


def get(name: str) -> ModuleType:
    try:
        return importlib.import_module(PROFILES[name])
    except KeyError:
        raise KeyError(f"unknown profile '{name}' (known: {', '.join(PROFILES)})") from None
