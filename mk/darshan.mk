# Darshan for developers and CI (issue 24): included by the Makefile (-include mk/*.mk). Users point DARSHAN_PREFIX at
# their own install; nothing here downloads a tarball and none is committed.
#   make darshan DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz>   build Darshan (POSIX, MPI-IO, STDIO, H5F/H5D, DXT) against
#                         the kernel's parallel HDF5 into the cache (scripts/deps-darshan.sh, ~2-4 min on 2 cores);
#                         its prefix in build/.darshan-prefix
#   `make test` builds it from $(VENDOR_DIR) when a Darshan tarball is there and DARSHAN_PREFIX is not set, and
#   then runs the live Darshan tests with the DLIO venv whose h5py is built against that HDF5 (DLIO_H5PY=mpi)
VENDOR_DIR ?= $(abspath ../shared/vendor)
DARSHAN_TARBALL ?= $(lastword $(sort $(wildcard $(VENDOR_DIR)/darshan-*.tar.gz)))
DARSHAN_STAMP := build/.darshan-prefix

.PHONY: darshan darshan-for-tests

## build Darshan (HDF5 module, DXT) from DARSHAN_TARBALL against our HDF5 into the cache
darshan: | deps
	@mkdir -p build
	@[ -z "$(HDF5_DIR)" ] || { echo "make darshan: builds against the project's own HDF5 only (unset HDF5_DIR, or build Darshan against $(HDF5_DIR) yourself and set DARSHAN_PREFIX)" >&2; exit 2; }
	@[ -n "$(DARSHAN_TARBALL)" ] || { echo "make darshan: set DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz> (none in $(VENDOR_DIR))" >&2; exit 2; }
	@DARSHAN_TARBALL="$(abspath $(DARSHAN_TARBALL))" H5DLIO_HDF5_PREFIX="$$(cat build/.hdf5-prefix)" \
	  bash scripts/deps-darshan.sh > $(DARSHAN_STAMP).tmp && tail -n1 $(DARSHAN_STAMP).tmp > $(DARSHAN_STAMP) && \
	  rm -f $(DARSHAN_STAMP).tmp && echo "darshan: $$(cat $(DARSHAN_STAMP)) (DARSHAN_PREFIX)"

# what `make test` runs Darshan with: the user's DARSHAN_PREFIX, else the vendored tarball built here, else none
# (the live tests then skip, saying so)
## the Darshan make test uses: DARSHAN_PREFIX, else the vendored tarball built, else none
darshan-for-tests:
	@if [ -n "$$DARSHAN_PREFIX" ]; then echo "darshan: DARSHAN_PREFIX=$$DARSHAN_PREFIX (yours)"; \
	elif [ -n "$(DARSHAN_TARBALL)" ] && [ -z "$(HDF5_DIR)" ]; then \
	  $(MAKE) --no-print-directory darshan && $(MAKE) --no-print-directory dlio-venv-spec DLIO_H5PY=mpi; \
	else rm -f $(DARSHAN_STAMP); echo "darshan: no DARSHAN_PREFIX and no tarball in $(VENDOR_DIR): live Darshan tests skip"; fi
