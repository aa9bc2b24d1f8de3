# The mutation matrix (issue 24): included by the Makefile (-include mk/*.mk).
#   make mutants    attack the validator with one injected divergence at a time (the kernel's mutants: h5dlio
#                   --mutants, bench/src/mutate.c): per workload family (pytorch: unet3d, tf: bert, checkpoint:
#                   unet3d_checkpoint, tf-eval: cosmoflow_eval) one side-by-side run that must PASS gives the DLIO side, reused by every mutant;
#                   each mutant's kernel side under every profile here, validated; killed = verdict FAIL, validation
#                   exit non-zero, and a check meant to catch it among the failures. Results: fidelity/mutants.{json,md}
#                   (exit 1 if a mutant survived or was caught only by other checks). See docs/mutants.md.
# Variables: MUTANTS (comma-separated subset of mutant names), MUTANT_FAMILIES (subset of pytorch,tf,checkpoint,tf-eval),
#   MUTANT_RUNS (run folder, default build/mutants), MUTANT_BASELINES (FAMILY=RUN_DIR ...: earlier passing runs to take
#   as baselines), MUTANT_MERGE=1 (replace only this invocation's cells in fidelity/mutants.json, keep the others),
#   MUTANT_FINDINGS (a JSON list of notes on survivors, kept in mutants.md), SCALE (default tiny), RANKS.
MUTANTS ?=
MUTANT_FAMILIES ?= pytorch,tf,checkpoint,tf-eval
MUTANT_RUNS ?= build/mutants
MUTANT_BASELINES ?=
MUTANT_FINDINGS ?=
MUTANT_MERGE ?=

.PHONY: mutants

## the mutation matrix: each mutant (H5DLIO_MUTATE) through validation per workload family; fidelity/mutants.{md,json}
mutants: build venv dlio-venv
	@$(VENV)/bin/python -m fidelity.mutants --dlio-venv "$$(cat build/.dlio-venv)" --scale $(or $(SCALE),tiny) \
	  --ranks "$(RANKS)" --runs-dir "$(MUTANT_RUNS)" --families "$(MUTANT_FAMILIES)" \
	  $(if $(MUTANTS),--mutants "$(MUTANTS)") $(foreach b,$(MUTANT_BASELINES),--baseline "$(b)") \
	  $(if $(MUTANT_FINDINGS),--findings "$(MUTANT_FINDINGS)") $(if $(MUTANT_MERGE),--merge)
