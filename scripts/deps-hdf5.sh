#!/usr/bin/env bash
# Build parallel HDF5 1.14.5 (subfiling VFD, zlib, shared, tools) from Debian trixie's *source* package
# into a cache outside the clone, keyed by version + build options. Idempotent: a stamp marks a finished build.
# Prints the install prefix on its last line.
# Env: H5DLIO_CACHE (default ~/.cache/h5dlio), HDF5_VERSION_WANT (default 1.14.5).
set -euo pipefail
want=${HDF5_VERSION_WANT:-1.14.5}
cache=${H5DLIO_CACHE:-$HOME/.cache/h5dlio}
opts="-DHDF5_ENABLE_PARALLEL=ON -DHDF5_ENABLE_SUBFILING_VFD=ON -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DHDF5_BUILD_TOOLS=ON -DBUILD_TESTING=OFF -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF -DHDF5_BUILD_HL_LIB=ON -DCMAKE_BUILD_TYPE=Release"
# H5DLIO_HDF5_FLAVOUR=threadsafe: the thread-safe parallel flavour VOL connectors with background threads need
# (vol-async: H5TSmutex_*; HDF5 refuses threadsafe + parallel unless ALLOW_UNSUPPORTED). Its own cache folder.
flavour=${H5DLIO_HDF5_FLAVOUR:-}
case "$flavour" in
  "") name=hdf5 ;;
  threadsafe) name=hdf5-ts; opts="$opts -DHDF5_ENABLE_THREADSAFE=ON -DALLOW_UNSUPPORTED=ON" ;;
  *) echo "deps-hdf5: error: H5DLIO_HDF5_FLAVOUR='$flavour' is not empty or threadsafe" >&2; exit 2 ;;
esac
key=$(printf '%s|%s' "$want" "$opts" | sha256sum | cut -c1-12)
prefix="$cache/$name-$want-$key"
if [ -f "$prefix/.h5dlio-complete" ]; then
  echo "deps-hdf5: cached at $prefix" >&2
  echo "$prefix"; exit 0
fi
mkdir -p "$cache"
. "$(dirname "$0")/cache-lock.sh"
if cache_lock "$prefix" deps-hdf5; then
  echo "deps-hdf5: cached at $prefix (built by the process waited for)" >&2
  echo "$prefix"; exit 0
fi
work=$(mktemp -d "$cache/hdf5-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "deps-hdf5: fetching hdf5 source from Debian trixie (private apt lists in $work)" >&2
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" > "$work/apt/sources.list"
aptopts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=-"
         -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o "Debug::NoLocking=1")
apt-get "${aptopts[@]}" update -qq >&2
(cd "$work/src" && apt-get "${aptopts[@]}" source --download-only hdf5 >&2)
orig=$(ls "$work"/src/hdf5_*.orig.tar.* | head -n1)
mkdir -p "$work/hdf5"
tar -xf "$orig" -C "$work/hdf5" --strip-components=1
got=$(grep -m1 -oE 'H5_VERS_INFO.*[0-9]+\.[0-9]+\.[0-9]+' "$work/hdf5/src/H5public.h" | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' || true)
echo "deps-hdf5: source version $got (wanted $want)" >&2
[ "$got" = "$want" ] || { echo "deps-hdf5: error: Debian trixie ships hdf5 $got, not $want; set HDF5_VERSION_WANT=$got or HDF5_DIR=<install>" >&2; exit 1; }
echo "deps-hdf5: configuring (~20 s) and building (~3 min on 2 cores) into $prefix" >&2
cmake -S "$work/hdf5" -B "$work/build" -G Ninja $opts -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_C_COMPILER=mpicc -DCMAKE_INSTALL_RPATH="$prefix/lib" >"$work/configure.log" 2>&1 \
  || { tail -40 "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
cmake --install "$work/build" >"$work/install.log" 2>&1 || { tail -40 "$work/install.log" >&2; exit 1; }
if [ "$flavour" = threadsafe ] && ! grep -Eq '^# *define H5_HAVE_THREADSAFE 1' "$prefix/include/H5pubconf.h"; then
  echo "deps-hdf5: error: $prefix is not thread-safe (H5_HAVE_THREADSAFE unset in H5pubconf.h)" >&2; exit 1
fi
touch "$prefix/.h5dlio-complete"
echo "deps-hdf5: installed $prefix" >&2
echo "$prefix"
