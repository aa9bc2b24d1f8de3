# Benchmarks (issue 6): included by the Makefile (-include mk/*.mk). Separate from `make test`; tests never assert
# on time.
#   make bench [SCALE=tiny|small]  every measurement of issue 6 (read path vs fio, kernel overhead, kernel vs DLIO
#                                  2.0.0, generation and RSS, scaling, profiler overhead; validation's own cost at
#                                  10^3..10^5 data files, issue 26) into
#                                  bench/results/<date>/ (SCALE=tiny: <date>-tiny/): results.json, *.png, results.md;
#                                  raw launch output in raw/ (not committed). Default SCALE=small (~30-40 min on 2
#                                  cores); SCALE=tiny is the CI smoke (< 3 min).
#   make bench-ci                  lint + SCALE=tiny into build/bench-ci/ (the clone stays clean): for .ci/run
#   make bench-render DIR=...      redraw the figures and results.md of a results folder from its results.json
# Variables: BENCH_OUT (results folder), BENCH_SECTIONS (comma-separated subset of readpath,overhead,dlio,generation,
# scaling,profilers,checkpoint,checkpoint_hdf5,mlperf,validation,mlperf3,scale,density), BENCH_WAIT (seconds to wait before each section
# for the 1-minute load average to drop below 1.5; default 120 for small, 0 for tiny).
BENCH_SCALE = $(or $(SCALE),small)
BENCH_WAIT ?= $(if $(filter tiny,$(BENCH_SCALE)),0,120)

.PHONY: bench bench-ci bench-deps bench-lint bench-render

# fio (Debian) is the plain reader/writer the kernel is compared with
## fio (Debian), the plain reader the kernel is compared with
bench-deps:
	@command -v fio >/dev/null 2>&1 || { echo "bench: installing fio (Debian)"; SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends fio >/dev/null; }

## ruff on bench/perf
bench-lint: venv
	@$(VENV)/bin/ruff check bench/perf

## every benchmark measurement into bench/results/<date>/ (SCALE=tiny|small)
bench: build venv dlio-venv bench-deps
	@$(VENV)/bin/python -m bench.perf run --scale $(BENCH_SCALE) --dlio-venv "$$(cat build/.dlio-venv)" \
	  --wait-max $(BENCH_WAIT) $(if $(BENCH_OUT),--out $(BENCH_OUT)) $(if $(BENCH_SECTIONS),--sections $(BENCH_SECTIONS))

## bench-lint + bench at SCALE=tiny into build/bench-ci/ (for .ci/run)
bench-ci: bench-lint
	@$(MAKE) --no-print-directory bench SCALE=tiny BENCH_OUT=build/bench-ci

## redraw the figures and results.md of DIR=bench/results/<date> from its results.json
bench-render: venv
	@[ -n "$(DIR)" ] || { echo "make bench-render: set DIR=bench/results/<date>" >&2; exit 2; }
	@$(VENV)/bin/python -m bench.perf render "$(DIR)"
