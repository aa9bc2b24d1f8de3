# VOL connectors (issue 28, docs/vol.md), for developers and CI.
#   make vol-deps   a thread-safe parallel HDF5 1.14.5 (scripts/deps-hdf5.sh with H5DLIO_HDF5_FLAVOUR=threadsafe) and
#                   Argobots + vol-async (+ vol-cache) built against it from local release tarballs
#                   (scripts/deps-vol.sh; nothing downloads them), into the cache; prints the plugin folder
#                   (HDF5_PLUGIN_PATH) and the HDF5 prefix to build the kernel with (make build HDF5_DIR=...)
#   make vol-kernel vol-deps, then the kernel against its thread-safe HDF5 (build/hdf5-<hash>/h5dlio, named in
#                   build/.vol-kernel); build/h5dlio keeps pointing at the kernel `make build` made
#   `make test` runs vol-for-tests: vol-kernel when the tarballs are in VOL_VENDOR and neither HDF5_PLUGIN_PATH
#   (a user's own connectors) nor HDF5_DIR is set, so tests/test_vol.py and the bench's vol tests run instead of
#   skipping (~8.5 min once, from a cold cache; ~1 s warm)
# Variables: VOL_VENDOR (default ../shared/vendor), ARGOBOTS_TGZ, VOL_ASYNC_TGZ, VOL_CACHE_TGZ (the tarballs; default:
#   argobots-1.2, vol-async-1.8.1, vol-cache-1.2.1 in VOL_VENDOR; VOL_CACHE_TGZ= skips vol-cache).
VOL_VENDOR ?= $(abspath $(CURDIR)/../shared/vendor)
ARGOBOTS_TGZ ?= $(VOL_VENDOR)/argobots-1.2.tar.gz
VOL_ASYNC_TGZ ?= $(VOL_VENDOR)/vol-async-1.8.1.tar.gz
VOL_CACHE_TGZ ?= $(VOL_VENDOR)/vol-cache-1.2.1.tar.gz

ifneq ($(call stamp_ok,build/.hdf5-ts-prefix),ok)
.PHONY: build/.hdf5-ts-prefix
endif
.PHONY: vol-deps vol-tarballs vol-kernel vol-for-tests build/.vol-prefix

# before anything builds: each tarball named is there
# every missing one is named (not only the first), with where to get them
## check the VOL tarballs named by ARGOBOTS_TGZ, VOL_ASYNC_TGZ, VOL_CACHE_TGZ exist (exit 2 naming each that is not)
vol-tarballs:
	@rc=0; for v in "ARGOBOTS_TGZ=$(ARGOBOTS_TGZ)" "VOL_ASYNC_TGZ=$(VOL_ASYNC_TGZ)" $(if $(VOL_CACHE_TGZ),"VOL_CACHE_TGZ=$(VOL_CACHE_TGZ)"); do \
	  [ -f "$${v#*=}" ] || { echo "make vol-deps: $$v: no such tarball" >&2; rc=2; }; done; \
	[ $$rc = 0 ] || echo "make vol-deps: set each variable above to its release tarball (docs/testing.md#a-clone-with-nothing-beside-it), or VOL_VENDOR=<a folder holding them>; VOL_CACHE_TGZ= builds without vol-cache" >&2; exit $$rc

build/.hdf5-ts-prefix: scripts/deps-hdf5.sh | deps-system
	@mkdir -p build
	@H5DLIO_HDF5_FLAVOUR=threadsafe bash scripts/deps-hdf5.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

# always run: the script itself is the idempotent part (its key is the tarballs' contents, which make cannot see)
build/.vol-prefix: scripts/deps-vol.sh build/.hdf5-ts-prefix
	@HDF5_TS_PREFIX="$$(cat build/.hdf5-ts-prefix)" ARGOBOTS_TGZ="$(ARGOBOTS_TGZ)" VOL_ASYNC_TGZ="$(VOL_ASYNC_TGZ)" \
	  VOL_CACHE_TGZ="$(VOL_CACHE_TGZ)" bash scripts/deps-vol.sh > $@.tmp && tail -n1 $@.tmp > $@ && rm -f $@.tmp

## thread-safe parallel HDF5 + Argobots + vol-async + vol-cache from the vendored tarballs
vol-deps: vol-tarballs build/.vol-prefix
	@echo "vol-deps: HDF5_PLUGIN_PATH=$$(cat build/.vol-prefix)/lib (thread-safe HDF5: $$(cat build/.hdf5-ts-prefix);" \
	  "the kernel against it: make build HDF5_DIR=$$(cat build/.hdf5-ts-prefix))"

# `make validate VOL=async|async-prefetch` runs the kernel side with vol-async: the kernel against its HDF5 first
validate: $(if $(VOL_ASYNC),vol-kernel)

# the kernel against the thread-safe HDF5, in the folder `make build HDF5_DIR=<that HDF5>` uses, without relinking
# build/h5dlio (the harness's and the tests' kernel stays the one `make build` made)
## vol-deps and the kernel built against its thread-safe HDF5 (build/hdf5-<hash>/h5dlio; its path in build/.vol-kernel)
vol-kernel: vol-deps
	@ts="$$(cat build/.hdf5-ts-prefix)"; hash=$$(echo -n "$$ts" | sha256sum | cut -c1-8); d="build/hdf5-$$hash"; \
	cmake -S bench -B "$$d" -G Ninja -DHDF5_ROOT="$$ts" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
	cmake --build "$$d" && echo "$(CURDIR)/$$d/h5dlio" > build/.vol-kernel && \
	echo "vol-kernel: $(CURDIR)/$$d/h5dlio (HDF5 $$ts)"

# what `make test` runs the VOL tests with: the connectors built here from the vendored tarballs, unless the user
# points HDF5 at their own (HDF5_PLUGIN_PATH) or builds against another HDF5 (HDF5_DIR); then the vol-async tests use
# H5DLIO_VOL_PREFIX and H5DLIO_BIN_TS when set, else skip naming `make vol-deps`
## the VOL connectors make test uses: vol-kernel from VOL_VENDOR's tarballs, unless HDF5_PLUGIN_PATH or HDF5_DIR is set
vol-for-tests:
	@if [ -n "$$HDF5_PLUGIN_PATH" ]; then \
	  echo "vol: HDF5_PLUGIN_PATH=$$HDF5_PLUGIN_PATH (yours): nothing built; the vol-async tests take H5DLIO_VOL_PREFIX and H5DLIO_BIN_TS"; \
	elif [ -n "$(HDF5_DIR)" ]; then echo "vol: HDF5_DIR=$(HDF5_DIR): the connectors are built against the project's own thread-safe HDF5 only: nothing built"; \
	elif [ -f "$(ARGOBOTS_TGZ)" ] && [ -f "$(VOL_ASYNC_TGZ)" ]; then $(MAKE) --no-print-directory vol-kernel $(if $(wildcard $(VOL_CACHE_TGZ)),,VOL_CACHE_TGZ=) && \
	  { [ -n "$$DARSHAN_PREFIX" ] || [ -z "$(DARSHAN_TARBALL)" ] || $(MAKE) --no-print-directory darshan-ts; }; \
	else echo "vol: no $(notdir $(ARGOBOTS_TGZ)) and $(notdir $(VOL_ASYNC_TGZ)) in $(VOL_VENDOR): the vol-async tests skip"; fi
