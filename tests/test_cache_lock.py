"""scripts/cache-lock.sh: one builder per cache folder. A second builder waits for the first (never deletes its
half-built folder) and then reuses the finished folder; with nothing finished it goes on and builds."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "scripts" / "cache-lock.sh"


def _second(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f'. "{LOCK}"; cache_lock "{folder}" second && echo reuse || echo build'],
                          capture_output=True, text=True, timeout=60)


def test_a_second_builder_waits_and_reuses_the_finished_folder(tmp_path):
    folder = tmp_path / "dlio-x"
    folder.mkdir()
    first = subprocess.Popen(["bash", "-c", f'. "{LOCK}"; cache_lock "{folder}" first; sleep 2; '
                              f'touch "{folder}/.h5dlio-complete"'])
    time.sleep(0.5)
    t = time.monotonic()
    p = _second(folder)
    first.wait(timeout=60)
    assert p.stdout.strip() == "reuse" and "another process is building" in p.stderr, (p.stdout, p.stderr)
    assert time.monotonic() - t > 1.0          # it waited for the first (which held the lock 2 s)


def test_without_a_finished_folder_the_builder_builds(tmp_path):
    """the control: no other builder, no .h5dlio-complete: build, at once and without waiting"""
    (tmp_path / "hdf5-x").mkdir()
    p = _second(tmp_path / "hdf5-x")
    assert p.stdout.strip() == "build" and p.stderr == "", (p.stdout, p.stderr)
