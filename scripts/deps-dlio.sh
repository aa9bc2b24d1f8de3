#!/usr/bin/env bash
# Create a reference DLIO Benchmark venv in a cache outside the clone, keyed by what it holds. Idempotent; prints
# the venv path on its last line.
#   DLIO_SPEC=2.0.0 (default)     dlio-benchmark==2.0.0 from PyPI
#   DLIO_SPEC=/path/to/checkout   a DLIO source checkout (git): pip install --no-deps of that tree
# Plain `pip install dlio-benchmark` fails here (its nvidia-dali stub downloads from an unreachable host), so DLIO
# is installed with --no-deps and its runtime stack from a pinned lock file (harness/requirements/), also --no-deps:
# dlio-<version>.lock.txt, else the newest lock of an older version (2.0.1 and later need pydftracer >= 2.0.2).
#   DLIO_H5PY=wheel (default)     h5py as the lock pins it: a manylinux wheel with its own serial HDF5
#   DLIO_H5PY=wheel==X.Y.Z        the lock's stack with another h5py wheel (and the HDF5 it bundles): e.g. 3.16.0,
#                                 which bundles HDF5 2.0.0 (the fidelity matrix gets a row of its own)
#   DLIO_H5PY=mpi                 h5py (same version) built from source against the parallel HDF5 in
#                                 H5DLIO_HDF5_PREFIX (the kernel's), HDF5_MPI=ON, CC=mpicc: what Darshan's HDF5 module
#                                 needs to record H5F/H5D for DLIO (Darshan built against that same libhdf5); +4-5 min
# The venv holds .h5dlio-dlio.json: the DLIO version (for a checkout: `git describe --tags`, since DLIO's setup.py
# still says 2.0.0 at v2.0.1 and on main; a checkout with no tag, as MLCommons' DLIO_local_changes: its
# pyproject.toml [project] version), its git revision and where it came from; the harness reads it.
# The Python: the checkout's pyproject.toml [project] requires-python (MLCommons 3.x: >=3.12,<3.13) picks it, else
# python3 as before. H5DLIO_DLIO_PYTHON=<interpreter> if set, else the newest that fits of: python3.X on PATH for each
# minor the range allows, then pyenv's ($PYENV_ROOT or ~/.pyenv)/versions/*/bin/python3. None: exit 2, saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
spec=${DLIO_SPEC:-${DLIO_VERSION:-2.0.0}}
cache=${H5DLIO_CACHE:-$HOME/.cache/h5dlio}
if [ -d "$spec" ]; then
  src=$(cd "$spec" && pwd)
  [ -f "$src/setup.py" ] && [ -d "$src/dlio_benchmark" ] || { echo "deps-dlio: error: DLIO=$spec: $src is not a DLIO source checkout (no setup.py + dlio_benchmark/)" >&2; exit 2; }
  rev=$(git -C "$src" rev-parse HEAD 2>/dev/null) || { echo "deps-dlio: error: DLIO=$spec: $src is not a git checkout (its revision is recorded)" >&2; exit 2; }
  # [project] version and requires-python of its pyproject.toml ("" when absent)
  read -r pyver pyreq < <(python3 - "$src/pyproject.toml" <<'PY'
import sys, tomllib
try:
    p = tomllib.load(open(sys.argv[1], "rb")).get("project", {})
except (OSError, tomllib.TOMLDecodeError):
    p = {}
print(p.get("version") or "-", (p.get("requires-python") or "-").replace(" ", ""))
PY
)
  [ "$pyver" = - ] && pyver=""; [ "$pyreq" = - ] && pyreq=""
  if describe=$(git -C "$src" describe --tags --long 2>/dev/null); then
    # v2.0.1-17-ge1919d7 -> 2.0.1-17 ; v2.0.1-0-gb56c741 -> 2.0.1
    ver=$(echo "$describe" | sed -E 's/^v//; s/-g[0-9a-f]+$//; s/-0$//')
  elif [ -n "$pyver" ]; then  # no tag (MLCommons' DLIO_local_changes): the package's own version
    describe="${rev:0:7} (no tag; pyproject.toml version $pyver)"; ver=$pyver
  else
    describe="v0.0.0-0-g${rev:0:7}"; ver=0.0.0
  fi
  dirty=$(git -C "$src" status --porcelain --untracked-files=no | sha256sum | cut -c1-8)
  [ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] && dirty=clean
  origin="source:$src"
else
  echo "$spec" | grep -Eq '^[0-9]+(\.[0-9]+)*$' || { echo "deps-dlio: error: DLIO=$spec is neither a version nor a directory" >&2; exit 2; }
  src=""; ver=$spec; rev="pypi"; describe="dlio-benchmark==$spec"; dirty=clean; origin="pypi"; pyreq=""
fi
# The Python the venv is made with: python3, or one that fits the checkout's requires-python
py=python3
if [ -n "$pyreq" ]; then
  py=$(python3 - "$pyreq" "${H5DLIO_DLIO_PYTHON:-}" "${PYENV_ROOT:-$HOME/.pyenv}" <<'PY'
import glob, os, re, shutil, subprocess, sys
req, forced, pyenv = sys.argv[1:]
def fits(v):  # the usual forms only: >=X.Y, <X.Y, ==X.Y.*, !=, comma-separated
    for c in req.split(","):
        m = re.fullmatch(r"(>=|<=|==|!=|<|>|~=)(\d+(?:\.\d+)*)(\.\*)?", c)
        if not m:
            sys.exit(f"deps-dlio: error: requires-python {req!r}: cannot read {c!r}")
        op, w, star = m.groups()
        w = tuple(int(x) for x in w.split("."))
        have = v[:len(w)] if star or op == "~=" else v + (0,) * max(0, len(w) - len(v))
        ok = {">=": have >= w, "<=": have <= w, ">": have > w, "<": have < w, "==": have == w, "!=": have != w,
              "~=": v >= w and v[:len(w) - 1] == w[:-1]}[op]
        if not ok:
            return False
    return True
def version(exe):
    try:
        out = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:3])"], capture_output=True,
                             text=True, timeout=30).stdout.split()
        return tuple(int(x) for x in out) if len(out) == 3 else None
    except OSError:
        return None
if forced:
    v = version(forced)
    if not v or not fits(v):
        sys.exit(f"deps-dlio: error: H5DLIO_DLIO_PYTHON={forced}: " +
                 (f"Python {'.'.join(map(str, v))} does not fit" if v else "not a Python interpreter, which") +
                 f" this DLIO's requires-python {req}")
    print(forced); sys.exit(0)
cands = [shutil.which(f"python3.{m}") for m in range(8, 20)] + \
    sorted(glob.glob(os.path.join(pyenv, "versions", "*", "bin", "python3")))
found = [(v, c) for c in cands if c and (v := version(c)) and fits(v)]
if not found:
    sys.exit(f"deps-dlio: error: this DLIO needs Python {req} (its pyproject.toml requires-python) and none was "
             f"found (python3.X on PATH, {pyenv}/versions/*/bin/python3): install one (e.g. `pyenv install 3.12`) or "
             "set H5DLIO_DLIO_PYTHON=/path/to/python3.12")
print(max(found)[1])
PY
) || exit 2
  echo "deps-dlio: Python $("$py" -c 'import platform; print(platform.python_version())') ($py) for requires-python $pyreq" >&2
fi
h5py_mode=${DLIO_H5PY:-wheel}
case "$h5py_mode" in
  wheel) h5prefix="" ;;
  wheel==*) h5prefix=""
       echo "${h5py_mode#wheel==}" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || { echo "deps-dlio: error: DLIO_H5PY=$h5py_mode: use wheel==X.Y.Z (an h5py release)" >&2; exit 2; } ;;
  mpi) h5prefix=${H5DLIO_HDF5_PREFIX:-}
       [ -n "$h5prefix" ] && [ -f "$h5prefix/include/H5pubconf.h" ] || { echo "deps-dlio: error: DLIO_H5PY=mpi needs H5DLIO_HDF5_PREFIX=<a parallel HDF5 install prefix> (got '${h5prefix}')" >&2; exit 2; }
       grep -Eq '^#define H5_HAVE_PARALLEL 1' "$h5prefix/include/H5pubconf.h" || { echo "deps-dlio: error: DLIO_H5PY=mpi: $h5prefix is a serial HDF5 (H5_HAVE_PARALLEL unset in include/H5pubconf.h)" >&2; exit 2; }
       h5prefix=$(cd "$h5prefix" && pwd) ;;
  *) echo "deps-dlio: error: DLIO_H5PY=$h5py_mode: use wheel, wheel==X.Y.Z or mpi" >&2; exit 2 ;;
esac
base=${ver%%-*}
lock="$here/harness/requirements/dlio-$base.lock.txt"
if [ ! -f "$lock" ]; then  # the newest lock of an older release
  lock=""
  for l in "$here"/harness/requirements/dlio-*.lock.txt; do
    v=$(basename "$l" .lock.txt); v=${v#dlio-}
    [ "$(printf '%s\n%s\n' "$v" "$base" | sort -V | tail -1)" = "$base" ] || continue
    [ -z "$lock" ] || [ "$(printf '%s\n%s\n' "$v" "$lv" | sort -V | tail -1)" = "$v" ] && { lock=$l; lv=$v; }
  done
  [ -n "$lock" ] || lock="$here/harness/requirements/dlio-2.0.0.lock.txt"
  echo "deps-dlio: no lock file for $base: using $(basename "$lock")" >&2
fi
if [ -n "$src" ]; then
  key=$( (cat "$lock"; echo "$ver $rev $dirty"; "$py" --version) | sha256sum | cut -c1-12)
else
  key=$( (cat "$lock"; echo "$ver"; python3 --version) | sha256sum | cut -c1-12)  # unchanged since 2.0.0 only
fi
if [ "$h5py_mode" = mpi ]; then
  key=$( (echo "$key"; cat "$here/harness/requirements/h5py-mpi-build.txt"; echo "$h5prefix"; \
          grep -h 'HDF5 Version' "$h5prefix/lib/libhdf5.settings" 2>/dev/null; mpicc --showme:version 2>&1) | sha256sum | cut -c1-12)
  venv="$cache/dlio-$ver-h5mpi-$key"
elif [ "$h5py_mode" != wheel ]; then
  key=$( (echo "$key"; echo "$h5py_mode") | sha256sum | cut -c1-12)
  venv="$cache/dlio-$ver-h5py${h5py_mode#wheel==}-$key"
else
  venv="$cache/dlio-$ver-$key"
fi
if [ -f "$venv/.h5dlio-complete" ]; then
  echo "deps-dlio: cached at $venv" >&2; echo "$venv"; exit 0
fi
mkdir -p "$cache"
. "$here/scripts/cache-lock.sh"
if cache_lock "$venv" deps-dlio; then
  echo "deps-dlio: cached at $venv (built by the process waited for)" >&2; echo "$venv"; exit 0
fi
rm -rf "$venv.partial"
echo "deps-dlio: creating $venv (DLIO $ver from $origin, $(basename "$lock"); ~7 GB, a few minutes)" >&2
"$py" -m venv "$venv.partial"
"$venv.partial/bin/pip" install --no-cache-dir -q --upgrade pip >&2
if [ -n "$src" ]; then
  # a copy, so the build leaves the checkout untouched (setuptools writes build/ and *.egg-info)
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  git -C "$src" ls-files -z | (cd "$src" && xargs -0 cp --parents -t "$tmp")
  "$venv.partial/bin/pip" install --no-cache-dir -q --no-deps "$tmp" >&2
else
  "$venv.partial/bin/pip" install --no-cache-dir -q --no-deps "dlio-benchmark==$ver" >&2 || {
    rm -rf "$venv.partial"
    echo "deps-dlio: error: DLIO=$spec: pip cannot install dlio-benchmark==$ver (see pip's message above)" >&2; exit 2; }
fi
"$venv.partial/bin/pip" install --no-cache-dir -q --no-deps -r "$lock" >&2
if [ "$h5py_mode" = mpi ]; then
  h5ver=$(grep -E '^h5py==' "$lock" | cut -d= -f3)
  echo "deps-dlio: building h5py $h5ver from source against $h5prefix (HDF5_MPI=ON, CC=mpicc; ~5 min)" >&2
  "$venv.partial/bin/pip" install --no-cache-dir -q -r "$here/harness/requirements/h5py-mpi-build.txt" >&2
  # no wheel cache: pip keys it by the sdist alone, and would hand back an h5py built against another HDF5
  HDF5_MPI=ON CC=mpicc HDF5_DIR="$h5prefix" "$venv.partial/bin/pip" install --no-cache-dir -q --force-reinstall \
    --no-deps --no-build-isolation --no-binary=h5py "h5py==$h5ver" >&2
fi
if [ "${h5py_mode#wheel==}" != "$h5py_mode" ]; then
  "$venv.partial/bin/pip" install --no-cache-dir -q --no-deps "h5py==${h5py_mode#wheel==}" >&2 || {
    rm -rf "$venv.partial"
    echo "deps-dlio: error: DLIO_H5PY=$h5py_mode: pip cannot install h5py==${h5py_mode#wheel==} (see pip's message above)" >&2; exit 2; }
fi
python3 - "$venv.partial/.h5dlio-dlio.json" "$ver" "$rev" "$describe" "$origin" "$(basename "$lock")" "$dirty" \
  "$h5py_mode" "$h5prefix" <<'PY'
import json, sys
p, ver, rev, describe, origin, lock, dirty, h5py_mode, h5prefix = sys.argv[1:]
json.dump({"version": ver, "revision": rev, "describe": describe, "source": origin, "lock": lock,
           "dirty": dirty != "clean", "h5py": h5py_mode, "hdf5_prefix": h5prefix or None}, open(p, "w"), indent=1)
PY
rm -rf "$venv"; mv "$venv.partial" "$venv"
# venv scripts hard-code their path: rewrite the shebangs after the move
grep -rlI --null "$venv.partial" "$venv/bin" | xargs -0 -r sed -i "s#$venv.partial#$venv#g"
"$venv/bin/python" -c "import dlio_benchmark.main, h5py, torch, mpi4py; print('deps-dlio: h5py', h5py.__version__, 'HDF5', h5py.version.hdf5_version, 'mpi', h5py.get_config().mpi)" >&2
touch "$venv/.h5dlio-complete"
echo "$venv"
