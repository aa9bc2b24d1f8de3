"""Asking a program about itself (versions, configuration) for the record."""
from __future__ import annotations

import subprocess


def command_output(argv: list[str], timeout: float = 60) -> str:
    """The program's stdout (its stderr when stdout is empty), stripped; "unavailable: <why>" when it cannot be run
    or does not answer within timeout seconds. Never raises: what is asked is recorded, not required."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return (p.stdout or p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"
