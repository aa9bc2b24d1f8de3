# The run store (issue 37; docs/runs.md): included by the Makefile (-include mk/*.mk).
#   make runs ARGS="list"   python -m store with ARGS: a command (add, import, list, show, compare, trend) and its
#                           arguments; RUNS_DB=<file> another store (default $H5DLIO_RUNS_DB, else
#                           ~/.local/share/h5dlio/runs.sqlite)
.PHONY: runs

## the run store: ARGS="import runs | list | show ID | compare A B | trend METRIC" (RUNS_DB=<file>; docs/runs.md)
runs: venv
	@[ -n "$(ARGS)" ] || { echo "make runs: set ARGS=\"<command> ...\" (add, import, list, show, compare, trend)" >&2; exit 2; }
	@$(VENV)/bin/python -m store $(ARGS) $(if $(RUNS_DB),--db "$(RUNS_DB)")
