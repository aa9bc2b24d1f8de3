"""Asking a program about itself (versions, configuration) for the record."""
from __future__ import annotations

import subprocess
from pathlib import Path


def command_output(argv: list[str], timeout: float = 60) -> str:
    """The program's stdout (its stderr when stdout is empty), stripped; "unavailable: <why>" when it cannot be run
    or does not answer within timeout seconds. Never raises: what is asked is recorded, not required."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return (p.stdout or p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"


def venv_python(venv: Path) -> list[str]:
    """The venv and its interpreter's prefix (pyvenv.cfg's home is <prefix>/bin), when the venv is still here."""
    out = [str(venv)]
    try:
        home = next((ln.split("=", 1)[1].strip() for ln in (venv / "pyvenv.cfg").read_text().splitlines()
                     if ln.split("=", 1)[0].strip() == "home"), None)
    except OSError:
        home = None
    if home:
        out.append(str(Path(home).parent))
    return out
