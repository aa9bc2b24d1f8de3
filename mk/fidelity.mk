# Fidelity across DLIO releases (issue 8): included by the Makefile (-include mk/*.mk).
#   make dlio-venv-spec DLIO=<spec>   the reference venv of a DLIO: a PyPI version (default 2.0.0) or the path of a
#                                     DLIO source checkout (git; its version is `git describe --tags`), one venv per
#                                     version and revision in $(CACHE) (scripts/deps-dlio.sh); its path in $(DLIO_STAMP)
#       DLIO_H5PY=wheel==X.Y.Z        ... with another h5py wheel (its bundled HDF5): a matrix row of its own
#       DLIO_H5PY=mpi                 ... with h5py built from source against the kernel's parallel HDF5 (HDF5_DIR or
#                                     our own): what Darshan's HDF5 module needs for DLIO's H5F/H5D records
#   make fidelity-run DLIO=<spec>     `make validate` against that DLIO (WORKLOAD, SCALE, RANKS, PROFILES as there),
#                                     then `make fidelity`
#   make fidelity-revisions           fidelity/revisions.md (MLPerf Storage v3.0's accepted DLIO revisions x workload:
#                                     their I/O signatures) from fidelity/revisions.json, its source facts first
#                                     recomputed from the git mirrors (MIRRORS, default /work/.mirror)
#   make fidelity                     update fidelity/matrix.{md,json} from runs/*/verdict.json (one row per DLIO
#                                     version, the newest run) and write fidelity/divergence-<version>.md for each
#                                     failing version; FIDELITY_RUNS=<run dirs or folders> to read others
DLIO ?= 2.0.0
DLIO_H5PY ?= wheel
FIDELITY_RUNS ?= runs
DLIO_SPEC_ABS = $(if $(wildcard $(DLIO)),$(abspath $(DLIO)),$(DLIO))
# 2.0.0 with the wheel h5py keeps the historical stamp (the venv `make dlio-venv` builds); others get their own
DLIO_SLUG = $(if $(and $(filter 2.0.0,$(DLIO)),$(filter wheel,$(DLIO_H5PY))),,.$(shell echo -n "$(DLIO_SPEC_ABS)$(if $(filter mpi,$(DLIO_H5PY)),:h5py-mpi:$(HDF5_DIR))$(if $(filter wheel==%,$(DLIO_H5PY)),:h5py-$(DLIO_H5PY))" | sha256sum | cut -c1-10))
DLIO_STAMP = build/.dlio-venv$(DLIO_SLUG)
# DLIO_VENV=<venv>: a DLIO environment made elsewhere, used as it is, never built or changed here: MLPerf Storage
# v3.0's own (mlpstorage installed with DLIO 3.x, so DLIO checkpoints through mlpstorage's StreamingCheckpointing)
DLIO_VENV ?=
ifneq ($(DLIO_VENV),)
DLIO_STAMP = build/.dlio-venv.$(shell echo -n "venv:$(abspath $(DLIO_VENV))" | sha256sum | cut -c1-10)
endif
# the DLIO 2.0.0 venv with the MPI h5py, when made (`make test` hands it to the live Darshan test)
DLIO_MPI_STAMP = build/.dlio-venv.$(shell echo -n "2.0.0:h5py-mpi:$(HDF5_DIR)" | sha256sum | cut -c1-10)

.PHONY: dlio-venv-spec fidelity fidelity-run fidelity-revisions

## the reference venv of DLIO=<PyPI version | source checkout> (DLIO_H5PY=wheel|wheel==X|mpi), or DLIO_VENV=<venv> as is
dlio-venv-spec: $(if $(filter mpi,$(DLIO_H5PY)),$(HDF5_STAMP))
	@mkdir -p build
	@if [ -n "$(DLIO_VENV)" ]; then \
	  [ -x "$(DLIO_VENV)/bin/dlio_benchmark" ] && [ -x "$(DLIO_VENV)/bin/python" ] || { \
	    echo "DLIO_VENV=$(DLIO_VENV): no bin/dlio_benchmark and bin/python there (a venv where DLIO is installed)" >&2; \
	    exit 2; }; \
	  echo "$(abspath $(DLIO_VENV))" > $(DLIO_STAMP); \
	else \
	  DLIO_SPEC="$(DLIO_SPEC_ABS)" DLIO_H5PY="$(DLIO_H5PY)" \
	  H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix 2>/dev/null)" \
	  bash scripts/deps-dlio.sh > $(DLIO_STAMP).tmp && tail -n1 $(DLIO_STAMP).tmp > $(DLIO_STAMP) && rm -f $(DLIO_STAMP).tmp; \
	fi

# `make validate` itself also takes DLIO=<spec> once its recipe reads $(DLIO_STAMP) (see docs/fidelity.md)
validate: dlio-venv-spec

## `make validate` against DLIO=<spec>, then `make fidelity`
fidelity-run: build venv dlio-venv-spec
	@$(PIPELINE) --no-report; rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	  $(VENV)/bin/python -m fidelity $(FIDELITY_RUNS) || exit $$?; exit $$rc

## update fidelity/matrix.{md,json} and the divergence notes from runs/*/verdict.json
fidelity: venv
	@$(VENV)/bin/python -m fidelity $(FIDELITY_RUNS)

MIRRORS ?= /work/.mirror
## fidelity/revisions.md: the accepted DLIO revisions' I/O signatures per workload, checked against the git mirrors
fidelity-revisions: venv
	@$(VENV)/bin/python -m fidelity.revisions --check --mirrors "$(MIRRORS)"
