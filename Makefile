# h5dlio — top-level entry points. Each target installs what it needs, idempotently.
#   make validate WORKLOAD=unet3d   run the kernel and the real DLIO side by side and check they match
#   make test                       lint, ctest, fuzzing + ASan/UBSan kernel tests, pytest (kernel, harness, DLIO)
#   make build                      the kernel only: build/<hdf5>/h5dlio (also linked as build/h5dlio)
#   make report RUN=runs/<id>       re-render a run's report;  make paper: the thesis experiment set (tiny scale)
# Variables: HDF5_DIR=<prefix> (use another parallel HDF5, e.g. /usr for Debian's 1.10), RANKS, WORKLOAD, SCALE,
#   PROFILES, REPEAT, DLIO=<PyPI version | DLIO source checkout> (default 2.0.0), DLIO_H5PY=mpi (the reference
#   venv's h5py built from source against the kernel's parallel HDF5: DLIO's H5F/H5D under Darshan), DARSHAN_PREFIX.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY ?= python3
CACHE ?= $(HOME)/.cache/h5dlio
export H5DLIO_CACHE := $(CACHE)
WORKLOAD ?= unet3d
SCALE ?=
RANKS ?= 2
PROFILES ?=
VENV := .venv
TEST_REQS := requirements-test.txt

ifeq ($(strip $(HDF5_DIR)),)
HDF5_STAMP := build/.hdf5-prefix
BUILD_DIR := build/own-hdf5
else
HDF5_STAMP :=
BUILD_DIR := build/hdf5-$(shell echo -n "$(HDF5_DIR)" | sha256sum | cut -c1-8)
endif
BIN := $(BUILD_DIR)/h5dlio

.PHONY: help deps deps-system build test test-c test-py venv dlio-venv validate clean lint
help:
	@sed -n '1,8p' Makefile | sed 's/^# \{0,1\}//'

deps-system:
	@bash scripts/deps-system.sh

# our own parallel HDF5 1.14.5 (Debian trixie source package), cached outside the clone
build/.hdf5-prefix: scripts/deps-hdf5.sh | deps-system
	@mkdir -p build
	@bash scripts/deps-hdf5.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

deps: deps-system $(HDF5_STAMP)

build: deps
	@prefix="$(HDF5_DIR)"; [ -n "$$prefix" ] || prefix=$$(cat build/.hdf5-prefix); \
	cmake -S bench -B $(BUILD_DIR) -G Ninja -DHDF5_ROOT="$$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
	cmake --build $(BUILD_DIR) && ln -sfn $(notdir $(BUILD_DIR))/h5dlio build/h5dlio && \
	echo "built $(BIN) (HDF5 $$prefix)"

venv: $(VENV)/.stamp
$(VENV)/.stamp: $(TEST_REQS)
	@$(PY) -m venv $(VENV) && $(VENV)/bin/pip install -q --upgrade pip && $(VENV)/bin/pip install -q -r $(TEST_REQS)
	@touch $@

dlio-venv: build/.dlio-venv
build/.dlio-venv: scripts/deps-dlio.sh harness/requirements/dlio-2.0.0.lock.txt
	@mkdir -p build
	@DLIO_SPEC=2.0.0 DLIO_H5PY=wheel bash scripts/deps-dlio.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

# the main job: both sides, every profile available here, then the verdict (exit 0 only if every required check passes)
validate: build venv dlio-venv
	@rm -f build/.last-run; \
	$(VENV)/bin/python -m harness run --workload $(WORKLOAD) $(if $(SCALE),--scale $(SCALE)) --ranks $(RANKS) \
	  --dlio-venv "$$(cat $(DLIO_STAMP))" $(if $(PROFILES),--profiles $(PROFILES)) $(if $(REPEAT),--repeat $(REPEAT)) \
	  --print-run-dir build/.last-run; \
	  rc=$$?; [ $$rc -eq 130 ] && exit 130; [ -s build/.last-run ] || exit $$rc; \
	  $(VENV)/bin/python -m validate "$$(cat build/.last-run)"; rc=$$?; \
	  $(VENV)/bin/python -m reports "$$(cat build/.last-run)" | tail -n1; exit $$rc

test-c: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure

test-py: build venv dlio-venv chromium
	@H5DLIO_DLIO_VENV="$$(cat build/.dlio-venv)" H5DLIO_DLIO_VENV_MPI="$$(cat $(DLIO_MPI_STAMP) 2>/dev/null)" H5DLIO_BIN=$(abspath $(BIN)) H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix)" \
	  $(VENV)/bin/python -m pytest -q -rs tests

test: lint test-c test-reliability test-py

lint: venv
	@$(VENV)/bin/ruff check tests harness profiles validate fidelity reports

clean:
	rm -rf build

# further targets (reports, benchmarks, reliability) live in mk/*.mk
-include $(wildcard mk/*.mk)
