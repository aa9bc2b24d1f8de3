# Darshan for developers and CI (issue 24): included by the Makefile (-include mk/*.mk). Users point DARSHAN_PREFIX at
# their own install; nothing here downloads a tarball and none is committed.
#   make darshan DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz>   build Darshan (POSIX, MPI-IO, STDIO, H5F/H5D, DXT) against
#                         the kernel's parallel HDF5 into the cache (scripts/deps-darshan.sh, ~2-4 min on 2 cores);
#                         its prefix in build/.darshan-prefix
#   make darshan-ts DARSHAN_TARBALL=...   the same Darshan against the thread-safe HDF5 of `make vol-deps` (the HDF5 of
#                         the vol kernel, VOL=async): a second flavour in the cache, its prefix in build/.darshan-ts-prefix
#                         (or a user's own: DARSHAN_TS_PREFIX), which the harness gives the vol kernel (docs/vol.md)
#   `make test` builds it from $(VENDOR_DIR) when a Darshan tarball is there and DARSHAN_PREFIX is not set, and
#   then runs the live Darshan tests with the DLIO venv whose h5py is built against that HDF5 (DLIO_H5PY=mpi); with
#   the vol kernel built (vol-for-tests), the thread-safe flavour too
VENDOR_DIR ?= $(abspath ../shared/vendor)
DARSHAN_TARBALL ?= $(lastword $(sort $(wildcard $(VENDOR_DIR)/darshan-*.tar.gz)))
DARSHAN_STAMP := build/.darshan-prefix
DARSHAN_TS_STAMP := build/.darshan-ts-prefix

.PHONY: darshan darshan-ts darshan-tarball darshan-for-tests

## build Darshan (HDF5 module, DXT) from DARSHAN_TARBALL against our HDF5 into the cache
darshan: | deps
	@mkdir -p build
	@[ -z "$(HDF5_DIR)" ] || { echo "make darshan: builds against the project's own HDF5 only (unset HDF5_DIR, or build Darshan against $(HDF5_DIR) yourself and set DARSHAN_PREFIX)" >&2; exit 2; }
	@[ -n "$(DARSHAN_TARBALL)" ] || { echo "make darshan: set DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz> (none in $(VENDOR_DIR); where to get one: docs/testing.md#a-clone-with-nothing-beside-it)" >&2; exit 2; }
	@DARSHAN_TARBALL="$(abspath $(DARSHAN_TARBALL))" H5DLIO_HDF5_PREFIX="$$(cat build/.hdf5-prefix)" \
	  bash scripts/deps-darshan.sh > $(DARSHAN_STAMP).tmp && tail -n1 $(DARSHAN_STAMP).tmp > $(DARSHAN_STAMP) && \
	  rm -f $(DARSHAN_STAMP).tmp && echo "darshan: $$(cat $(DARSHAN_STAMP)) (DARSHAN_PREFIX)"

## check the tarball DARSHAN_TARBALL names exists (exit 2 naming it), before the thread-safe HDF5 is built for it
darshan-tarball:
	@[ -n "$(DARSHAN_TARBALL)" ] || { echo "make darshan-ts: set DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz> (none in $(VENDOR_DIR); where to get one: docs/testing.md#a-clone-with-nothing-beside-it)" >&2; exit 2; }
	@[ -f "$(DARSHAN_TARBALL)" ] || { echo "make darshan-ts: DARSHAN_TARBALL=$(DARSHAN_TARBALL): no such tarball" >&2; exit 2; }

## build Darshan from DARSHAN_TARBALL against the thread-safe HDF5 of make vol-deps (the vol kernel's Darshan)
darshan-ts: darshan-tarball | build/.hdf5-ts-prefix
	@DARSHAN_TARBALL="$(abspath $(DARSHAN_TARBALL))" H5DLIO_HDF5_PREFIX="$$(cat build/.hdf5-ts-prefix)" \
	  bash scripts/deps-darshan.sh > $(DARSHAN_TS_STAMP).tmp && tail -n1 $(DARSHAN_TS_STAMP).tmp > $(DARSHAN_TS_STAMP) && \
	  rm -f $(DARSHAN_TS_STAMP).tmp && echo "darshan-ts: $$(cat $(DARSHAN_TS_STAMP)) (DARSHAN_TS_PREFIX: the vol kernel's)"

# what `make test` runs Darshan with: the user's DARSHAN_PREFIX, else the vendored tarball built here, else none
# (the live tests then skip, saying so)
## the Darshan make test uses: DARSHAN_PREFIX, else the vendored tarball built, else none
darshan-for-tests:
	@if [ -n "$$DARSHAN_PREFIX" ]; then echo "darshan: DARSHAN_PREFIX=$$DARSHAN_PREFIX (yours)"; \
	elif [ -n "$(DARSHAN_TARBALL)" ] && [ -z "$(HDF5_DIR)" ]; then \
	  $(MAKE) --no-print-directory darshan && $(MAKE) --no-print-directory dlio-venv-spec DLIO_H5PY=mpi; \
	else rm -f $(DARSHAN_STAMP); echo "darshan: no DARSHAN_PREFIX and no tarball in $(VENDOR_DIR): live Darshan tests skip"; fi
