"""python -m store COMMAND ... (make runs ARGS="COMMAND ..."): the run store (docs/runs.md).

  add PATH...        add runs (a run directory, a kernel output folder)   import DIR   every run under DIR once
  list               the kept runs                                        show ID      one run, all its numbers
  compare A B        differences with effect sizes over repeats           trend METRIC one number over time (PNG)

Exit status: 0 done, 2 bad input (a path, ID or metric, named)."""
from __future__ import annotations

import importlib
import os
import sys

COMMANDS = ("add", "import", "list", "show", "compare", "trend")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        print(f"runs: error: {argv[0]!r}: no such command (known: {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    try:
        return importlib.import_module(f"store.cmd_{argv[0]}").main(argv[1:])
    except BrokenPipeError:  # the reader left (`| head`): no traceback, and nothing more to its closed pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
