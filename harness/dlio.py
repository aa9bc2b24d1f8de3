"""Which DLIO a reference venv holds, and the workload keys each release reads.

A venv made by scripts/deps-dlio.sh holds .h5dlio-dlio.json (version, git revision, source). DLIO's own metadata is
not enough: its setup.py still says 2.0.0 at the v2.0.1 tag and on main, so a source checkout's version is its
`git describe --tags` ("2.0.1", or "2.0.1-17" for 17 commits past the tag)."""
from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path

# DLIO 2.0.0 key -> the name DLIO reads from release `since` on; the old name is then silently ignored
# (utils/config.py:407-412 at PyPI 2.0.0 -> :792-797 at v2.0.1).
RENAMED = [
    ("dataset.record_length", "dataset.record_length_bytes", "2.0.1"),
    ("dataset.record_length_stdev", "dataset.record_length_bytes_stdev", "2.0.1"),
    ("dataset.record_length_resize", "dataset.record_length_bytes_resize", "2.0.1"),
]
_VERSION = re.compile(r"^(\d+(?:\.\d+){0,3})(?:-(\d+))?(?:-g[0-9a-f]+)?(?:\+.+)?$")


def version_key(v: str) -> tuple[int, ...]:
    """Order of DLIO versions as the kernel orders them: X.Y.Z, then commits past the tag ("2.0.1-17")."""
    m = _VERSION.match(v.strip())
    if not m:
        raise ValueError(f"{v!r} is not a DLIO version (X.Y.Z or X.Y.Z-N)")
    nums = [int(x) for x in m.group(1).split(".")] + [0] * 4
    return (*nums[:4], int(m.group(2) or 0))


def at_least(version: str, since: str) -> bool:
    return version_key(version) >= version_key(since)


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


def _get(cfg: dict, path: str):
    node = cfg
    for k in path.split("."):
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node


def translate(cfg: dict, version: str) -> tuple[dict, list[str]]:
    """A workload written with DLIO 2.0.0's key names (reference-configs/ overlays), renamed to the names DLIO
    `version` reads. Returns the new dict and what was renamed."""
    out = copy.deepcopy(cfg)
    done = []
    for old, new, since in RENAMED:
        src, dst = (old, new) if at_least(version, since) else (new, old)
        sec, key = src.rsplit(".", 1)
        node = _get(out, sec)
        if isinstance(node, dict) and key in node:
            node[dst.rsplit(".", 1)[1]] = node.pop(key)
            done.append(f"{src} -> {dst}")
    return out, done


def kernel_entry(kernel_bin: Path, version: str) -> dict:
    """The kernel entry `h5dlio --set dlio-version=version` uses: {entry, nearest, warning}."""
    p = subprocess.run([str(kernel_bin), "--dry-run", "--set", "generate-data=true", "--set",
                        f"dlio-version={version}"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return {"entry": None, "nearest": None, "warning": p.stderr.strip()[-300:]}
    cfg = json.loads(p.stdout.strip().splitlines()[-1])
    warn = [w for w in cfg.get("warnings", []) if "nearest entry" in w]
    return {"entry": cfg.get("dlio-entry"), "nearest": bool(cfg.get("dlio-entry-nearest")),
            "warning": warn[0] if warn else ""}


def describe(venv: Path, kernel_bin: Path) -> dict:
    """The manifest's "dlio" block: the installed DLIO and the kernel entry chosen for it."""
    d = info(venv)
    return {**d, **kernel_entry(kernel_bin, d["version"])}
