# Auditing a results leaf (issue 36 item 6; docs/audit.md): included by the Makefile (-include mk/*.mk).
#   make audit RESULT=<an MLPerf Storage results leaf> [DLIO=<the DLIO 3.x checkout> | DLIO_VENV=<a 3.x venv>]
#   [PRELOAD_DIR=<folder holding the leaf's preloaded libraries>] [RANKS=1] [RUNS_DIR=runs] [AUDIT_JSON=<file>]:
#   the leaf's DLIO config replayed small by the kernel under strace with the leaf's LD_PRELOAD; exit 0 the I/O
#   contract held, 1 it broke, 2 bad input (the file or variable named).
.PHONY: audit

## an MLPerf Storage results leaf's I/O contract (O_DIRECT, fsync, fadvise, file sizes; a preloaded library that swallows a call named), replayed by the kernel under strace (RESULT=<leaf>, DLIO=<3.x checkout> or DLIO_VENV, PRELOAD_DIR; docs/audit.md)
audit: build venv dlio-venv-spec
	@$(if $(strip $(RESULT)),,$(error RESULT=<an MLPerf Storage results leaf: the folder holding summary.json> is required))
	@$(VENV)/bin/python -m pipeline audit "$(RESULT)" --dlio-venv "$$(cat $(DLIO_STAMP))" \
	  $(if $(wildcard $(DLIO)/.git),--dlio "$(DLIO)") $(if $(PRELOAD_DIR),--preload-dir "$(PRELOAD_DIR)") \
	  $(if $(filter command line environment,$(origin RANKS)),--ranks "$(RANKS)") --runs-dir "$(RUNS_DIR)" \
	  $(if $(AUDIT_JSON),--json "$(AUDIT_JSON)")
