#!/usr/bin/env bash
# Create the reference DLIO Benchmark venv (DLIO 2.0.0 from PyPI + pinned PyTorch/TensorFlow stack) in a cache
# outside the clone, keyed by the lock file's hash. Idempotent; prints the venv path on its last line.
# Plain `pip install dlio-benchmark` fails here (its nvidia-dali stub downloads from an unreachable host), so DLIO
# is installed with --no-deps and its runtime stack from the lock file, also with --no-deps.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ver=${DLIO_VERSION:-2.0.0}
lock="$here/harness/requirements/dlio-$ver.lock.txt"
[ -f "$lock" ] || { echo "deps-dlio: error: no lock file $lock for DLIO $ver" >&2; exit 1; }
cache=${H5DLIO_CACHE:-$HOME/.cache/h5dlio}
key=$( (cat "$lock"; echo "$ver"; python3 --version) | sha256sum | cut -c1-12)
venv="$cache/dlio-$ver-$key"
if [ -f "$venv/.h5dlio-complete" ]; then
  echo "deps-dlio: cached at $venv" >&2; echo "$venv"; exit 0
fi
rm -rf "$venv.partial"; mkdir -p "$cache"
echo "deps-dlio: creating $venv (~7 GB, a few minutes)" >&2
python3 -m venv "$venv.partial"
"$venv.partial/bin/pip" install --no-cache-dir -q --upgrade pip >&2
"$venv.partial/bin/pip" install --no-cache-dir -q --no-deps "dlio-benchmark==$ver" >&2
"$venv.partial/bin/pip" install --no-cache-dir -q --no-deps -r "$lock" >&2
rm -rf "$venv"; mv "$venv.partial" "$venv"
# venv scripts hard-code their path: rewrite the shebangs after the move
grep -rlI --null "$venv.partial" "$venv/bin" | xargs -0 -r sed -i "s#$venv.partial#$venv#g"
"$venv/bin/python" -c "import dlio_benchmark.main, h5py, torch, mpi4py; print('deps-dlio: h5py', h5py.__version__, 'HDF5', h5py.version.hdf5_version)" >&2
touch "$venv/.h5dlio-complete"
echo "$venv"
