# VOL connectors (issue 28, docs/vol.md), for developers and CI; not part of `make test` (a ~10 min build).
#   make vol-deps   a thread-safe parallel HDF5 1.14.5 (scripts/deps-hdf5.sh with H5DLIO_HDF5_FLAVOUR=threadsafe) and
#                   Argobots + vol-async (+ vol-cache) built against it from local release tarballs
#                   (scripts/deps-vol.sh; nothing downloads them), into the cache; prints the plugin folder
#                   (HDF5_PLUGIN_PATH) and the HDF5 prefix to build the kernel with (make build HDF5_DIR=...)
# Variables: VOL_VENDOR (default ../shared/vendor), ARGOBOTS_TGZ, VOL_ASYNC_TGZ, VOL_CACHE_TGZ (the tarballs; default:
#   argobots-1.2, vol-async-1.8.1, vol-cache-1.2.1 in VOL_VENDOR; VOL_CACHE_TGZ= skips vol-cache).
VOL_VENDOR ?= $(abspath $(CURDIR)/../shared/vendor)
ARGOBOTS_TGZ ?= $(VOL_VENDOR)/argobots-1.2.tar.gz
VOL_ASYNC_TGZ ?= $(VOL_VENDOR)/vol-async-1.8.1.tar.gz
VOL_CACHE_TGZ ?= $(VOL_VENDOR)/vol-cache-1.2.1.tar.gz

ifneq ($(call stamp_ok,build/.hdf5-ts-prefix),ok)
.PHONY: build/.hdf5-ts-prefix
endif
.PHONY: vol-deps vol-tarballs build/.vol-prefix

# before anything builds: each tarball named is there
## check the VOL tarballs named by ARGOBOTS_TGZ, VOL_ASYNC_TGZ, VOL_CACHE_TGZ exist (exit 2 naming one that is not)
vol-tarballs:
	@for v in "ARGOBOTS_TGZ=$(ARGOBOTS_TGZ)" "VOL_ASYNC_TGZ=$(VOL_ASYNC_TGZ)" $(if $(VOL_CACHE_TGZ),"VOL_CACHE_TGZ=$(VOL_CACHE_TGZ)"); do \
	  [ -f "$${v#*=}" ] || { echo "make vol-deps: $$v: no such tarball" >&2; exit 2; }; done

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
