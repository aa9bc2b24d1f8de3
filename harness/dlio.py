"""Which DLIO a reference venv holds, and what the kernel knows of its release: the entry it selects and the workload
keys that release reads, asked of the kernel (`h5dlio --dlio-entries`), which keeps that knowledge in one place.

A venv made by scripts/deps-dlio.sh holds .h5dlio-dlio.json (version, git revision, source). DLIO's own metadata is
not enough: its setup.py still says 2.0.0 at the v2.0.1 tag and on main, so a source checkout's version is its
`git describe --tags` ("2.0.1", or "2.0.1-17" for 17 commits past the tag)."""
from __future__ import annotations

import copy
import functools
import json
import subprocess
from pathlib import Path

from common.mapping import dotted_get


def _kernel() -> Path:
    from harness.run import KERNEL_BIN
    return KERNEL_BIN


@functools.lru_cache(maxsize=32)
def _entries(kernel_bin: str, version: str | None) -> dict:
    argv = [kernel_bin, "--dlio-entries"] + (["--set", f"dlio-version={version}"] if version is not None else [])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip()[-300:] or f"{kernel_bin} --dlio-entries: exit {p.returncode}")
    return json.loads(p.stdout)


def entries(version: str | None = None, kernel_bin: Path | None = None) -> dict:
    """The kernel's DLIO release knowledge, the one place it is kept (`h5dlio --dlio-entries`): its entries, the
    workload keys only some releases read, and with a version the entry it selects ("selected": entry, nearest,
    warning, and for each option the key name that entry reads). ValueError with the kernel's message when it
    refuses the version."""
    return copy.deepcopy(_entries(str(kernel_bin or _kernel()), version))


def info(venv: Path) -> dict:
    """{version, revision, describe, source, lock, dirty} of the DLIO installed in venv."""
    meta = Path(venv) / ".h5dlio-dlio.json"
    if meta.exists():
        return json.loads(meta.read_text())
    # a venv from before .h5dlio-dlio.json: a PyPI install, its version from the package metadata
    p = subprocess.run([str(Path(venv) / "bin" / "python"), "-c",
                        "import importlib.metadata as m; print(m.version('dlio-benchmark'))"],
                       capture_output=True, text=True)
    ver = p.stdout.strip() if p.returncode == 0 else "2.0.0"
    return {"version": ver, "revision": "pypi", "describe": f"dlio-benchmark=={ver}", "source": "pypi",
            "lock": f"dlio-{ver}.lock.txt", "dirty": False}


def translate(cfg: dict, version: str, kernel_bin: Path | None = None) -> tuple[dict, list[str]]:
    """A workload written with DLIO 2.0.0's key names (reference-configs/ overlays), renamed to the names DLIO
    `version` reads, as the kernel's entry for that version says. Returns the new dict and what was renamed."""
    known = entries(version, kernel_bin)
    names: dict[str, list[str]] = {}
    for k in known["versioned_keys"]:
        names.setdefault(k["option"], []).append(k["yaml"])
    out = copy.deepcopy(cfg)
    done = []
    for opt, read in known["selected"]["keys"].items():
        for src in names[opt] if read else []:  # a key no release reads now stays (DLIO and the kernel ignore it)
            sec, key = src.rsplit(".", 1)
            node = dotted_get(out, sec)
            if src == read or not isinstance(node, dict) or key not in node:
                continue
            dsec, dkey = read.rsplit(".", 1)
            dst = out
            for part in dsec.split("."):
                dst = dst.setdefault(part, {})
            dst[dkey] = node.pop(key)
            done.append(f"{src} -> {read}")
    return out, done


def kernel_entry(kernel_bin: Path, version: str) -> dict:
    """The kernel entry `h5dlio --set dlio-version=version` uses: {entry, nearest, warning}."""
    try:
        sel = entries(version, kernel_bin)["selected"]
    except ValueError as e:
        return {"entry": None, "nearest": None, "warning": str(e)}
    return {"entry": sel["entry"], "nearest": sel["nearest"], "warning": sel["warning"]}


def describe(venv: Path, kernel_bin: Path) -> dict:
    """The manifest's "dlio" block: the installed DLIO and the kernel entry chosen for it."""
    d = info(venv)
    return {**d, **kernel_entry(kernel_bin, d["version"])}
