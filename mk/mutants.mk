# The mutation matrix (issue 24): included by the Makefile (-include mk/*.mk).
#   make mutants    attack the validator with one injected divergence at a time (the kernel's mutants: h5dlio
#                   --mutants, bench/src/mutate.c): per workload family (pytorch: unet3d, tf: bert, checkpoint:
#                   unet3d_checkpoint, tf-eval: cosmoflow_eval; async: unet3d with the kernel side under
#                   VOL=async-prefetch, when `make vol-kernel` has run; dlio3: unet3d_b200 at tiny_odirect and
#                   dlio3-checkpoint: llama3_8b_v3, with DLIO=<3.x checkout>; dlio3-mlps: llama3_8b_v3 with
#                   DLIO3_MLPS_VENV=<a 3.x venv where mlpstorage_py imports>) one
#                   side-by-side run that must PASS gives the DLIO side, reused by every mutant;
#                   each mutant's kernel side under every profile here, validated; killed = verdict FAIL, validation
#                   exit non-zero, and a check meant to catch it among the failures. Results: fidelity/mutants.{json,md}
#                   (exit 1 if a mutant survived or was caught only by other checks). See docs/mutants.md.
# Variables: MUTANTS (comma-separated subset of mutant names), MUTANT_FAMILIES (subset of pytorch,tf,checkpoint,tf-eval,fixed-size,
#   async,dlio3,dlio3-checkpoint,dlio3-mlps; default every family that can run; async without the vol kernel: exit 2), MUTANT_RUNS (run folder, default build/mutants), MUTANT_BASELINES
#   (FAMILY=RUN_DIR ...: earlier passing runs to take as baselines), MUTANT_MERGE=1 (replace only this invocation's
#   cells in fidelity/mutants.json, keep the others), MUTANT_FINDINGS (a JSON list of notes on survivors, kept in
#   mutants.md), SCALE (default tiny), RANKS, DLIO=<MLCommons DLIO 3.x checkout> (adds the dlio3 family: its own venv,
#   make dlio-venv-spec; and dlio3-checkpoint), DLIO3_MLPS_VENV (a DLIO 3.x venv where mlpstorage_py imports, MLPerf
#   Storage v3.0's environment: the dlio3-mlps family; nothing here builds one), DARSHAN_PREFIX (else the Darshan `make darshan` built, build/.darshan-prefix: with one, the
#   2.0.0 families' DLIO side runs in the venv whose h5py is built against the kernel's HDF5, DLIO_H5PY=mpi, as
#   Darshan's HDF5 module needs).
MUTANTS ?=
MUTANT_FAMILIES ?=
MUTANT_RUNS ?= build/mutants
MUTANT_BASELINES ?=
MUTANT_FINDINGS ?=
MUTANT_MERGE ?=
DLIO3_MLPS_VENV ?=
# the venv of DLIO=<3.x checkout> with the wheel h5py (mk/fidelity.mk's DLIO_STAMP for DLIO_H5PY=wheel)
MUTANT_DLIO3_STAMP = build/.dlio-venv.$(shell echo -n "$(DLIO_SPEC_ABS)" | sha256sum | cut -c1-10)

# Darshan here (DARSHAN_PREFIX, else the one `make darshan` built): the DLIO 2.0.0 families' side runs in the venv
# whose h5py is built against the kernel's HDF5 (DLIO_H5PY=mpi), as Darshan's HDF5 module needs
MUTANT_DARSHAN = $(or $(DARSHAN_PREFIX),$(shell cat $(DARSHAN_STAMP) 2>/dev/null))
MUTANT_ARGS = --dlio-venv "$$(cat $(if $(MUTANT_DARSHAN),$(DLIO_MPI_STAMP),build/.dlio-venv))" \
  $(if $(filter-out 2.0.0,$(DLIO)),--dlio3-venv "$$(cat $(MUTANT_DLIO3_STAMP))") \
  $(if $(DLIO3_MLPS_VENV),--dlio3-mlps-venv "$(DLIO3_MLPS_VENV)") \
  --scale $(or $(SCALE),tiny) --ranks "$(RANKS)" --runs-dir "$(MUTANT_RUNS)" \
  $(if $(MUTANT_FAMILIES),--families "$(MUTANT_FAMILIES)") \
  $(if $(MUTANTS),--mutants "$(MUTANTS)") $(foreach b,$(MUTANT_BASELINES),--baseline "$(b)") \
  $(if $(MUTANT_FINDINGS),--findings "$(MUTANT_FINDINGS)") $(if $(MUTANT_MERGE),--merge)

.PHONY: mutants mutants-deps

## what the mutation matrix runs: the vol kernel rebuilt from this tree, the reference venvs its families need
mutants-deps: build venv dlio-venv
	@# the async family runs the vol kernel (build/.vol-kernel): rebuilt from this tree, never a stale binary
	@if [ -f build/.vol-kernel ] && [ -d "$$(dirname "$$(cat build/.vol-kernel)")" ]; then \
	  cmake --build "$$(dirname "$$(cat build/.vol-kernel)")" >/dev/null || exit $$?; fi
	@$(if $(MUTANT_DARSHAN),$(MAKE) --no-print-directory dlio-venv-spec DLIO=2.0.0 DLIO_H5PY=mpi)
	@$(if $(filter-out 2.0.0,$(DLIO)),$(MAKE) --no-print-directory dlio-venv-spec DLIO="$(DLIO)" DLIO_H5PY=wheel)

## the mutation matrix: each mutant (H5DLIO_MUTATE) through validation per workload family; fidelity/mutants.{md,json}
mutants: mutants-deps
	@DARSHAN_PREFIX="$(MUTANT_DARSHAN)" $(VENV)/bin/python -m fidelity.mutants $(MUTANT_ARGS)
