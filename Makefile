# h5dlio — top-level entry points. Each target installs what it needs, idempotently.
#   make help    every target with one line (the `## ` line above its rule here and in mk/*.mk)
#   make validate WORKLOAD=unet3d; make test (the complete suite CI runs); make test-fast (docs/testing.md)
# Variables: HDF5_DIR=<prefix> (use another parallel HDF5, e.g. /usr for Debian's 1.10), RANKS, WORKLOAD, SCALE,
#   PROFILES, REPEAT, LAUNCHER=mpirun|mpiexec|srun, SIDES=both|kernel, DLIO=<PyPI version | DLIO source checkout> (default 2.0.0), DLIO_H5PY=mpi
#   (the reference venv's h5py built from source against the kernel's parallel HDF5: DLIO's H5F/H5D under Darshan),
#   DARSHAN_PREFIX, RUNS_DIR (default runs),
#   VOL=native|pass_through|async|async-prefetch (the kernel side's HDF5 VOL connector stack; docs/vol.md),
#   DARSHAN_ANALYSES=auto|all|none (which Darshan logs get pydarshan's summary and drishti; docs/validation.md),
#   DLIO_QUIET_MAP=1 (DLIO's index map gets a short text: its per-read cost at 10^5 files; docs/scale-record.md),
#   COLLECT_JOBS=N (processes parsing the traces and logs at once; default the CPUs, at most 4; docs/scale.md),
#   RUNS_DB=<file> (validate: the finished run also added to this run store, never changing validate's status; docs/runs.md),
#   RESUME=runs/<id> (validate, fidelity-run: continue that interrupted run, then validate and report it).
SHELL := /bin/bash
# a pipe's status is its first failing command's, in every recipe here and in mk/*.mk (no step's failure is hidden)
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := help
PY ?= python3
CACHE ?= $(HOME)/.cache/h5dlio
export H5DLIO_CACHE := $(CACHE)
WORKLOAD ?= unet3d
SCALE ?=
RANKS ?= 2
PROFILES ?=
SIDES ?=
DARSHAN_ANALYSES ?=
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

# Stamps name folders in the cache; they are checked, not trusted: a stamp whose folder is gone (or unfinished) is
# remade by its own rule (made phony here, so `make deps`/`make build` rebuild what was removed).
stamp_ok = $(shell d=$$(cat $(1) 2>/dev/null); [ -n "$$d" ] && [ -f "$$d/.h5dlio-complete" ] && echo ok)
ifneq ($(call stamp_ok,build/.hdf5-prefix),ok)
.PHONY: build/.hdf5-prefix
endif
ifneq ($(call stamp_ok,build/.dlio-venv),ok)
.PHONY: build/.dlio-venv
endif

# The pipeline (python -m pipeline: run, validate, report; docs/ARCHITECTURE.md): it validates and shows only the run
# this invocation made, known in its own process (no pointer file); exit 0 PASS, 1 FAIL, 2 bad input, 130 interrupted.
RUNS_DIR ?= runs
HARNESS_RUN = --workload $(WORKLOAD) $(if $(SCALE),--scale $(SCALE)) --ranks $(RANKS) --runs-dir "$(RUNS_DIR)" \
  --dlio-venv "$$(cat $(DLIO_STAMP))" $(if $(PROFILES),--profiles $(PROFILES)) $(if $(REPEAT),--repeat $(REPEAT)) \
  $(if $(LAUNCHER),--launcher $(LAUNCHER)) $(if $(VOL),--vol $(VOL)) $(if $(SIDES),--sides $(SIDES)) \
  $(if $(COLLECT_JOBS),--collect-jobs $(COLLECT_JOBS)) $(if $(RESUME),--resume "$(RESUME)")
PIPELINE = $(VENV)/bin/python -m pipeline $(HARNESS_RUN) --dlio-quiet-map "$(DLIO_QUIET_MAP)"
# VOL=async, async-prefetch: the kernel built against the thread-safe HDF5 (mk/vol.mk vol-kernel, a prerequisite then;
# the pipeline runs the kernel build/.vol-kernel names)
VOL_ASYNC := $(filter async async-prefetch,$(VOL))

.PHONY: help deps deps-system build test test-c test-py test-fast venv dlio-venv validate clean lint
## this list: every target, one line each (the `## ` line above its rule; scripts/make_targets.py)
help:
	@$(PY) scripts/make_targets.py

## the Debian packages the kernel needs (Open MPI, libyaml, CMake)
deps-system:
	@bash scripts/deps-system.sh

# our own parallel HDF5 1.14.5 (Debian trixie source package), cached outside the clone
build/.hdf5-prefix: scripts/deps-hdf5.sh | deps-system
	@mkdir -p build
	@bash scripts/deps-hdf5.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

## deps-system and our own parallel HDF5 1.14.5, built once into the cache (CACHE, default ~/.cache/h5dlio)
deps: deps-system $(HDF5_STAMP)

## the kernel only: build/<hdf5>/h5dlio (also linked as build/h5dlio; and h5bench_dlio)
build: deps
	@if [ -n "$(HDF5_DIR)" ] && [ -z "$$(find "$(HDF5_DIR)/include" -maxdepth 3 -name hdf5.h -print -quit 2>/dev/null)" ]; \
	  then echo "make build: HDF5_DIR=$(HDF5_DIR): not an HDF5 install (no include/**/hdf5.h there)" >&2; exit 2; fi
	@prefix="$(HDF5_DIR)"; [ -n "$$prefix" ] || prefix=$$(cat build/.hdf5-prefix); \
	cmake -S bench -B $(BUILD_DIR) -G Ninja -DHDF5_ROOT="$$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
	cmake --build $(BUILD_DIR) && ln -sfn $(notdir $(BUILD_DIR))/h5dlio build/h5dlio && \
	ln -sfn $(notdir $(BUILD_DIR))/h5bench_dlio build/h5bench_dlio && \
	echo "built $(BIN) and $(BUILD_DIR)/h5bench_dlio, the name h5bench's runner runs (HDF5 $$prefix)"

## .venv: pytest, ruff and the pipeline's Python packages (requirements-test.txt)
venv: $(VENV)/.stamp
$(VENV)/.stamp: $(TEST_REQS)
	@$(PY) -m venv $(VENV) && $(VENV)/bin/pip install -q --upgrade pip && $(VENV)/bin/pip install -q -r $(TEST_REQS)
	@touch $@

## the reference DLIO 2.0.0 venv (7 GB, cached); its path in build/.dlio-venv
dlio-venv: build/.dlio-venv
build/.dlio-venv: scripts/deps-dlio.sh harness/requirements/dlio-2.0.0.lock.txt
	@mkdir -p build
	@DLIO_SPEC=2.0.0 DLIO_H5PY=wheel bash scripts/deps-dlio.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

# the main job: both sides, every profile available here, then the verdict (exit 0 only if every required check passes)
# (exit status: GNU make's own is 2 for any failure; the step's status is in its "make: *** ... Error N" line)
## run the kernel and the real DLIO side by side and check they match (WORKLOAD, SCALE, RANKS, PROFILES; SIDES=kernel: the kernel against the analytic model only; DARSHAN_ANALYSES=auto|all|none)
validate: build venv dlio-venv
	@$(PIPELINE) --darshan-analyses "$(DARSHAN_ANALYSES)" $(if $(RUNS_DB),--runs-db "$(RUNS_DB)")

## the C unit tests (ctest)
test-c: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure

## every pytest test, all tiers (installs the DLIO venv, Chromium, LaTeX, Slurm, Darshan); MARK=<expr>: one tier
test-py: build venv dlio-venv chromium latex slurm lmod darshan-for-tests vol-for-tests
	@H5DLIO_DARSHAN_PREFIX="$$(cat build/.darshan-prefix 2>/dev/null)" H5DLIO_DLIO_VENV="$$(cat build/.dlio-venv)" H5DLIO_DLIO_VENV_MPI="$$(cat $(DLIO_MPI_STAMP) 2>/dev/null)" H5DLIO_BIN=$(abspath $(BIN)) H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix)" \
	  $(VENV)/bin/python -m pytest -q -rs --durations=40 $(if $(MARK),-m "$(MARK)") tests

## the complete suite CI runs: lint, ctest, fuzzing + ASan/UBSan kernel tests, every pytest test
test: lint test-c test-reliability test-py

# The fast tier (docs/testing.md): no DLIO venv, Darshan, Slurm, Chromium or LaTeX is installed or used. TEST_JOBS
# pytest workers (pytest-xdist; the kernel tests mostly wait on mpirun's start-up, not on the CPU). The slowest tests
# are listed at the end (--durations), so a test growing slow is seen and gets @pytest.mark.slow.
FAST_TESTS := not (dlio or darshan or slurm or browser or latex or slow)
TEST_JOBS ?= 4
## lint, the C unit tests and every pytest test without a tier marker (no DLIO venv, ...), TEST_JOBS at a time
test-fast: lint test-c venv
	@H5DLIO_BIN=$(abspath $(BIN)) H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix)" \
	  $(VENV)/bin/python -m pytest -q -rs -n $(TEST_JOBS) --durations=15 -m "$(FAST_TESTS)" tests

## ruff on every Python folder (packages, tests, scripts, bench/perf, bench/results); clang-format 14 on the kernel's C
lint: venv deps-system
	@$(VENV)/bin/ruff check tests common harness profiles validate fidelity reports store pipeline scripts bench/perf bench/results
	@clang-format-14 --style=file --dry-run -Werror bench/src/*.[ch] bench/tests/*.c bench/tools/*.c bench/fuzz/*.c && echo "lint: C formatted as .clang-format says"

## remove build/ (the cache, CACHE, stays)
clean:
	rm -rf build

# further targets (reports, benchmarks, reliability) live in mk/*.mk
-include $(wildcard mk/*.mk)
