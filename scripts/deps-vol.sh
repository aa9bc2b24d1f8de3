#!/usr/bin/env bash
# Build the VOL connectors of issue 28 from local release tarballs (nothing downloads): Argobots, vol-async and
# vol-cache, against a thread-safe parallel HDF5 (vol-async calls H5TSmutex_*: against a non-thread-safe HDF5 it
# builds, then fails to load), into one cache folder keyed by the tarballs' contents and the HDF5 prefix. Idempotent:
# a finished build is marked .h5dlio-complete and reused. Prints the install prefix on its last line (the plugins are
# in <prefix>/lib: HDF5_PLUGIN_PATH=<prefix>/lib). For developers and CI; never committed.
# Env: HDF5_TS_PREFIX (required: a thread-safe parallel HDF5, e.g. `H5DLIO_HDF5_FLAVOUR=threadsafe
#      scripts/deps-hdf5.sh`), ARGOBOTS_TGZ, VOL_ASYNC_TGZ, VOL_CACHE_TGZ (empty: vol-cache is skipped),
#      H5DLIO_CACHE (default ~/.cache/h5dlio).
set -euo pipefail
cache=${H5DLIO_CACHE:-$HOME/.cache/h5dlio}
hdf5=${HDF5_TS_PREFIX:?HDF5_TS_PREFIX: the thread-safe parallel HDF5 prefix}
abt_tgz=${ARGOBOTS_TGZ:?ARGOBOTS_TGZ: the Argobots release tarball}
async_tgz=${VOL_ASYNC_TGZ:?VOL_ASYNC_TGZ: the vol-async release tarball}
cache_tgz=${VOL_CACHE_TGZ:-}
for t in "$abt_tgz" "$async_tgz" ${cache_tgz:+"$cache_tgz"}; do
  [ -f "$t" ] || { echo "deps-vol: error: tarball '$t' not found (ARGOBOTS_TGZ / VOL_ASYNC_TGZ / VOL_CACHE_TGZ)" >&2; exit 2; }
done
grep -Eq '^# *define H5_HAVE_THREADSAFE 1' "$hdf5/include/H5pubconf.h" 2>/dev/null ||
  { echo "deps-vol: error: HDF5_TS_PREFIX=$hdf5 is not a thread-safe HDF5 (no H5_HAVE_THREADSAFE in include/H5pubconf.h)" >&2; exit 2; }
grep -Eq '^# *define H5_HAVE_PARALLEL 1' "$hdf5/include/H5pubconf.h" ||
  { echo "deps-vol: error: HDF5_TS_PREFIX=$hdf5 is not a parallel HDF5" >&2; exit 2; }
# Argobots' autogen.sh runs autoreconf with libtool (a fresh Debian 12 has autoconf and automake through other
# packages, but not libtool: "Libtool library used but 'LIBTOOL' is undefined"); installed like scripts/deps-system.sh
missing=()
for p in autoconf automake libtool; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps-vol: installing ${missing[*]} (Argobots' autogen.sh)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
key=$( { sha256sum "$abt_tgz" "$async_tgz" ${cache_tgz:+"$cache_tgz"} | cut -d' ' -f1; echo "$hdf5"; } | sha256sum | cut -c1-12)
prefix="$cache/vol-$key"
if [ -f "$prefix/.h5dlio-complete" ]; then
  echo "deps-vol: cached at $prefix" >&2
  echo "$prefix"; exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/vol-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$prefix" # an unfinished earlier attempt (no marker): start over
untar() { mkdir -p "$work/$2" && tar -xzf "$1" -C "$work/$2" --strip-components=1; }
step() { # name, log, command...: the command's output goes to its log; on failure the log's tail and exit 1
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  "$@" >"$log" 2>&1 || { echo "deps-vol: $name failed (log $log):" >&2; tail -40 "$log" >&2; exit 1; }
  echo "deps-vol: $name: $((SECONDS - t0)) s" >&2
}
jobs=$(nproc)

untar "$abt_tgz" argobots
step "argobots autogen" "$work/abt-autogen.log" bash -c "cd '$work/argobots' && ./autogen.sh"
step "argobots configure" "$work/abt-configure.log" bash -c "cd '$work/argobots' && ./configure --prefix='$prefix'"
step "argobots build" "$work/abt-build.log" make -C "$work/argobots" -j"$jobs" install

untar "$async_tgz" vol-async
step "vol-async configure" "$work/async-configure.log" cmake -S "$work/vol-async" -B "$work/async-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$hdf5;$prefix" -DCMAKE_C_COMPILER=mpicc -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_RPATH="$prefix/lib;$hdf5/lib" -DBUILD_TESTING=OFF
step "vol-async build" "$work/async-build.log" cmake --build "$work/async-build" -j"$jobs"
step "vol-async install" "$work/async-install.log" cmake --install "$work/async-build"

if [ -n "$cache_tgz" ]; then
  untar "$cache_tgz" vol-cache
  step "vol-cache configure" "$work/cache-configure.log" env HDF5_VOL_DIR="$prefix" cmake -S "$work/vol-cache" \
    -B "$work/cache-build" -G Ninja -DCMAKE_PREFIX_PATH="$hdf5;$prefix" -DCMAKE_C_COMPILER=mpicc \
    -DCMAKE_CXX_COMPILER=mpicxx -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_RPATH="$prefix/lib;$hdf5/lib" -DBUILD_TESTING=OFF
  step "vol-cache build" "$work/cache-build.log" cmake --build "$work/cache-build" -j"$jobs"
  step "vol-cache install" "$work/cache-install.log" cmake --install "$work/cache-build"
fi

# each plugin must load into this HDF5: h5ls of a file written through it (h5ls refuses to start on a connector it
# cannot set up); a plugin that does not load is a failed build, not a finished one
probe="$work/probe.h5"
"$hdf5/bin/h5mkgrp" "$probe" g >"$work/probe.log" 2>&1 ||
  { echo "deps-vol: cannot write a probe file with $hdf5/bin/h5mkgrp:" >&2; tail -5 "$work/probe.log" >&2; exit 1; }
check() { # connector string
  local out
  out=$(HDF5_PLUGIN_PATH="$prefix/lib" HDF5_VOL_CONNECTOR="$1" LD_LIBRARY_PATH="$prefix/lib:$hdf5/lib" \
        "$hdf5/bin/h5ls" "$probe" 2>&1) && grep -q '^g ' <<<"$out" ||
    { echo "deps-vol: the connector '$1' does not load into $hdf5:" >&2; head -20 <<<"$out" >&2; exit 1; }
  echo "deps-vol: '$1' loads into $hdf5" >&2
}
check "async under_vol=0;under_info={}"
touch "$prefix/.h5dlio-complete"
echo "deps-vol: installed $prefix (HDF5_PLUGIN_PATH=$prefix/lib)" >&2
echo "$prefix"
