# Fidelity across DLIO releases (issue 8): included by the Makefile (-include mk/*.mk).
#   make dlio-venv-spec DLIO=<spec>   the reference venv of a DLIO: a PyPI version (default 2.0.0) or the path of a
#                                     DLIO source checkout (git; its version is `git describe --tags`), one venv per
#                                     version and revision in $(CACHE) (scripts/deps-dlio.sh); its path in $(DLIO_STAMP)
#   make fidelity-run DLIO=<spec>     `make validate` against that DLIO (WORKLOAD, SCALE, RANKS, PROFILES as there),
#                                     then `make fidelity`
#   make fidelity                     update fidelity/matrix.{md,json} from runs/*/verdict.json (one row per DLIO
#                                     version, the newest run) and write fidelity/divergence-<version>.md for each
#                                     failing version; FIDELITY_RUNS=<run dirs or folders> to read others
DLIO ?= 2.0.0
FIDELITY_RUNS ?= runs
# 2.0.0 keeps the historical stamp (the venv `make dlio-venv` builds); other specs get their own
DLIO_SLUG = $(if $(filter 2.0.0,$(DLIO)),,.$(shell echo -n "$(if $(wildcard $(DLIO)),$(abspath $(DLIO)),$(DLIO))" | sha256sum | cut -c1-10))
DLIO_STAMP = build/.dlio-venv$(DLIO_SLUG)

.PHONY: dlio-venv-spec fidelity fidelity-run

dlio-venv-spec:
	@mkdir -p build
	@DLIO_SPEC="$(if $(wildcard $(DLIO)),$(abspath $(DLIO)),$(DLIO))" bash scripts/deps-dlio.sh > $(DLIO_STAMP).tmp && \
	  tail -n1 $(DLIO_STAMP).tmp > $(DLIO_STAMP) && rm -f $(DLIO_STAMP).tmp

# `make validate` itself also takes DLIO=<spec> once its recipe reads $(DLIO_STAMP) (see docs/fidelity.md)
validate: dlio-venv-spec

fidelity-run: build venv dlio-venv-spec
	@$(VENV)/bin/python -m harness run --workload $(WORKLOAD) $(if $(SCALE),--scale $(SCALE)) --ranks $(RANKS) \
	  --dlio-venv "$$(cat $(DLIO_STAMP))" $(if $(PROFILES),--profiles $(PROFILES)) \
	  --print-run-dir build/.last-run; \
	  rc=$$?; [ $$rc -eq 130 ] && exit 130; [ -s build/.last-run ] || exit $$rc; \
	  $(VENV)/bin/python -m validate "$$(cat build/.last-run)"; \
	  $(VENV)/bin/python -m fidelity $(FIDELITY_RUNS)

fidelity: venv
	@$(VENV)/bin/python -m fidelity $(FIDELITY_RUNS)
