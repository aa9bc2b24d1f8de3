#!/usr/bin/env bash
# Build Darshan (runtime + utilities; POSIX, MPI-IO, STDIO, HDF5 H5F/H5D modules and DXT) from a release tarball
# against the project's parallel HDF5, into a cache outside the clone keyed by the tarball's content and the HDF5
# prefix. Nothing is downloaded: the tarball is given (DARSHAN_TARBALL). Idempotent: a stamp marks a finished
# build. Prints the install prefix on its last line (what DARSHAN_PREFIX takes).
# Env: DARSHAN_TARBALL (required), H5DLIO_HDF5_PREFIX (required: the parallel HDF5 the kernel links),
#      H5DLIO_CACHE (default ~/.cache/h5dlio).
set -euo pipefail
tarball=${DARSHAN_TARBALL:-}
hdf5=${H5DLIO_HDF5_PREFIX:-}
cache=${H5DLIO_CACHE:-$HOME/.cache/h5dlio}
[ -n "$tarball" ] || { echo "deps-darshan: error: set DARSHAN_TARBALL=<darshan-X.Y.Z.tar.gz>" >&2; exit 2; }
[ -f "$tarball" ] || { echo "deps-darshan: error: DARSHAN_TARBALL=$tarball: no such file" >&2; exit 2; }
[ -n "$hdf5" ] && [ -f "$hdf5/include/hdf5.h" ] || {
  echo "deps-darshan: error: H5DLIO_HDF5_PREFIX=$hdf5: not an HDF5 install (no include/hdf5.h)" >&2; exit 2; }
opts="--with-log-path-by-env=DARSHAN_LOG_DIR_PATH --with-jobid-env=NONE --enable-hdf5-mod --with-hdf5=$hdf5"
key=$( { sha256sum < "$tarball" | cut -c1-64; echo "$opts"; } | sha256sum | cut -c1-12)
name=$(basename "$tarball"); name=${name%.tar.gz}; name=${name%.tgz}
prefix="$cache/$name-$key"
if [ -f "$prefix/.h5dlio-complete" ]; then
  echo "deps-darshan: cached at $prefix" >&2
  echo "$prefix"; exit 0
fi
need=""
for t in libtool autoconf automake; do command -v "$t" >/dev/null 2>&1 || need="$need $t"; done
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
if [ -n "$need" ]; then
  echo "deps-darshan: installing$need (Debian)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >&2
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/darshan-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
echo "deps-darshan: building $name (~2 min on 2 cores) against $hdf5 into $prefix" >&2
(cd "$src" && ./prepare.sh) >"$work/prepare.log" 2>&1 || { tail -40 "$work/prepare.log" >&2; exit 1; }
mkdir -p "$src/build"
(cd "$src/build" && ../configure --prefix="$prefix" $opts CC=mpicc) >"$work/configure.log" 2>&1 \
  || { tail -40 "$work/configure.log" >&2; exit 1; }
make -C "$src/build" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
make -C "$src/build" install >"$work/install.log" 2>&1 || { tail -40 "$work/install.log" >&2; exit 1; }
"$prefix/bin/darshan-config" --hdf5-mod >/dev/null 2>&1 || { echo "deps-darshan: error: $prefix has no HDF5 module" >&2; exit 1; }
touch "$prefix/.h5dlio-complete"
echo "deps-darshan: installed $prefix" >&2
echo "$prefix"
