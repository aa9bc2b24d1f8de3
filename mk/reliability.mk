# Reliability (issue 7): included by the Makefile (-include mk/*.mk). tests/test_reliability_*.py run in test-py.
#   make fuzz             libFuzzer on the config parser (config_load on files and --set strings, config_validate,
#                         layout paths) for FUZZ_TIME seconds (default 60), from bench/fuzz/corpus; prints the
#                         executions count. Findings land in build/fuzz/ (crash-*, leak-*, timeout-*) and fail it.
#   make fuzz-merge       minimize what the fuzzer found back into the committed corpus (bench/fuzz/corpus)
#   make test-asan        the kernel built with ASan+UBSan (build/asan/h5dlio): ctest, then the kernel end-to-end
#                         tests (tests/test_kernel.py, the kernel part of tests/test_reliability_*.py) against it
#   make valgrind         valgrind memcheck on a tiny generate+train run: no error or leak with a frame in our code
#   make test-reliability fuzz + test-asan (for `make test`; the valgrind test itself runs in test-py, which needs
#                         valgrind installed: reliability-deps, a prerequisite of fuzz, installs it)
# Variables: FUZZ_TIME (s), FUZZ_JOBS (parallel fuzzers, default 1), ASAN_TESTS (pytest -k filter).
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 1
FUZZ_DIR := build/fuzz
ASAN_DIR := build/asan
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# LeakSanitizer on, library allocations (MPI, PMIx, HDF5 internals) suppressed by name: see bench/sanitize/
# fast_unwind_on_malloc=0: Debian's Open MPI has no frame pointers; full stacks let the suppressions see its frames
export H5DLIO_ASAN_OPTIONS := detect_leaks=1:fast_unwind_on_malloc=0:exitcode=86:halt_on_error=1
export H5DLIO_LSAN_OPTIONS := suppressions=$(abspath bench/sanitize/lsan.supp):print_suppressions=0
export H5DLIO_UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1:exitcode=87
# the kernel part of the reliability tests (not the harness's, not valgrind's: it cannot run an ASan binary)
RELIABILITY_KERNEL_TESTS := $(addprefix tests/test_reliability_,data_safety.py faults.py bad_input.py determinism.py)
# the kernel tests that make sense under ASan: not the 4.3 GiB file (minutes under ASan) and not the RSS bound
# (ASan's shadow memory is most of the RSS)
ASAN_TESTS ?= not file_larger_than_4gib and not memory_is_bounded and not harness and not valgrind

.PHONY: reliability-deps fuzz fuzz-build fuzz-merge asan-build test-asan valgrind test-reliability

# clang + libFuzzer runtime, valgrind: Debian packages, installed once
## clang, the libFuzzer runtime and valgrind (Debian)
reliability-deps:
	@need=""; command -v clang >/dev/null 2>&1 || need="$$need clang"; \
	  [ -n "$$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' -o -name 'libclang_rt.fuzzer-aarch64.a' 2>/dev/null | head -1)" ] || \
	    need="$$need libclang-rt-14-dev"; \
	  command -v valgrind >/dev/null 2>&1 || need="$$need valgrind"; \
	  if [ -n "$$need" ]; then echo "reliability: installing$$need (Debian)"; SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$need >/dev/null; fi

# every kernel source but main.c (the target is the front end main() runs before MPI_Init), instrumented
## the libFuzzer + ASan + UBSan config-parser fuzzer (build/fuzz/fuzz_config)
fuzz-build: $(FUZZ_DIR)/fuzz_config
$(FUZZ_DIR)/fuzz_config: bench/fuzz/fuzz_config.c $(wildcard bench/src/*.c bench/src/*.h) common/coreconfig.json \
  bench/coreconfig_facts.cmake | deps reliability-deps
	@mkdir -p $(FUZZ_DIR)
	@cmake -DCC_OUT_DIR=$(FUZZ_DIR)/gen -P bench/coreconfig_facts.cmake
	@prefix="$(HDF5_DIR)"; [ -n "$$prefix" ] || prefix=$$(cat build/.hdf5-prefix); \
	  inc=$$(find "$$prefix/include" -maxdepth 2 -name hdf5.h -printf '%h' -quit); \
	  lib=$$(dirname "$$(find "$$prefix" -name 'libhdf5.so' -print -quit)"); \
	  clang -g -O1 -std=gnu11 -ffp-contract=off -Wall -Wextra -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -DH5DLIO_VERSION='"fuzz"' -DH5DLIO_GIT='"fuzz"' \
	    -Ibench/src -I$(FUZZ_DIR)/gen -I"$$inc" $$(mpicc -showme:compile) \
	    bench/fuzz/fuzz_config.c $(filter-out bench/src/main.c,$(wildcard bench/src/*.c)) \
	    -L"$$lib" -Wl,-rpath,"$$lib" -lhdf5 -lyaml -lz $$(mpicc -showme:link) -ldl -lm -o $@.new 2>$(FUZZ_DIR)/build.log || { cat $(FUZZ_DIR)/build.log; exit 1; }; \
	  mv $@.new $@ && echo "built $@ (libFuzzer + ASan + UBSan)"

# New inputs go to build/fuzz/corpus (not committed); the committed corpus is read only. Exit status: the fuzzer's
# (non-zero on a crash, leak, timeout or out-of-memory: the reproducer is written to build/fuzz/).
## fuzz the config parser for FUZZ_TIME seconds (default 60); findings in build/fuzz/ fail it
fuzz: fuzz-build
	@mkdir -p $(FUZZ_DIR)/corpus
	@cd $(FUZZ_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./fuzz_config \
	  -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
	  -dict=$(abspath bench/fuzz/config.dict) $(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) \
	  corpus $(abspath bench/fuzz/corpus) 2>fuzz.log; rc=$$?; \
	  grep -E '^#[0-9]+ *DONE|^Done [0-9]+ runs|stat::number_of_executed_units|ERROR|SUMMARY|^artifact' fuzz.log; \
	  [ $$rc -eq 0 ] || { echo "fuzz: FAILED (exit $$rc): see $(FUZZ_DIR)/fuzz.log and the artifact above"; tail -40 fuzz.log; }; \
	  exit $$rc

## minimize what the fuzzer found into the committed corpus (bench/fuzz/corpus)
fuzz-merge: fuzz-build
	@mkdir -p $(FUZZ_DIR)/corpus
	@$(FUZZ_DIR)/fuzz_config -merge=1 -max_len=4096 bench/fuzz/corpus $(FUZZ_DIR)/corpus 2>&1 | tail -2 || exit $$?; \
	  echo "bench/fuzz/corpus: $$(ls bench/fuzz/corpus | wc -l) inputs, $$(du -sh bench/fuzz/corpus | cut -f1)"

## the kernel built with ASan + UBSan (build/asan/h5dlio)
asan-build: deps
	@prefix="$(HDF5_DIR)"; [ -n "$$prefix" ] || prefix=$$(cat build/.hdf5-prefix); \
	  cmake -S bench -B $(ASAN_DIR) -G Ninja -DHDF5_ROOT="$$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_FLAGS="$(SAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(SAN_FLAGS)" >/dev/null && \
	  cmake --build $(ASAN_DIR) && echo "built $(ASAN_DIR)/h5dlio (ASan + UBSan)"

## ctest and the kernel's end-to-end tests against the ASan + UBSan kernel (ASAN_TESTS: -k filter)
test-asan: asan-build venv
	@export ASAN_OPTIONS="$$H5DLIO_ASAN_OPTIONS" LSAN_OPTIONS="$$H5DLIO_LSAN_OPTIONS" UBSAN_OPTIONS="$$H5DLIO_UBSAN_OPTIONS" \
	  OMPI_MCA_mca_base_component_disable_dlclose=1; \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure && \
	  H5DLIO_BIN=$(abspath $(ASAN_DIR)/h5dlio) H5DLIO_SANITIZED=1 \
	  H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix)" \
	  $(VENV)/bin/python -m pytest -q tests/test_kernel.py $(RELIABILITY_KERNEL_TESTS) \
	    -k "$(ASAN_TESTS)"

## valgrind memcheck on a tiny generate + train run (tests/test_reliability_valgrind.py)
valgrind: build venv reliability-deps
	@H5DLIO_BIN=$(abspath $(BIN)) H5DLIO_HDF5_PREFIX="$$( [ -n "$(HDF5_DIR)" ] && echo $(HDF5_DIR) || cat build/.hdf5-prefix)" \
	  H5DLIO_VALGRIND=1 $(VENV)/bin/python -m pytest -q tests/test_reliability_valgrind.py

## fuzz + test-asan (part of `make test`)
test-reliability: fuzz test-asan
