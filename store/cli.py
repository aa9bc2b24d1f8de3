"""What the subcommands share: the --db option, a parser named after its subcommand, and one exit path (bad input:
the message naming the path, ID or metric, on stderr, exit 2)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from store import BadInput, db

PROG = os.environ.get("H5DLIO_PROG", "python -m store")  # `h5dlio runs` when installed (scripts/installed-tool.sh)


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help="the store (default: $H5DLIO_RUNS_DB, else ~/.local/share/h5dlio/runs.sqlite)")


def parse(name: str, doc: str | None, setup: Callable, argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=f"{PROG} {name}", description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup(p)
    a = p.parse_args(argv)
    a.db = a.db or db.default_path()
    return a


def run(name: str, body: Callable[[], int]) -> int:
    """body's exit status; bad input: its message and 2."""
    try:
        return body()
    except BadInput as e:
        print(f"runs {name}: error: {e}", file=sys.stderr)
        return 2


def fmt(x: float | None) -> str:
    """A number in at most 6 significant digits ("-" for none)."""
    return "-" if x is None else f"{x:.6g}"
