#!/bin/bash
# The harness's whole collection of one run (../2026-11-27-validation-scale/recollect.py: each part timed; it
# rewrites RUN_DIR/tables/) with TREE's Python, under /usr/bin/time -v; the 1-minute load before and after.
# Usage: [H5DLIO_KERNEL_BIN=<a built kernel>] recollect.sh RUN_DIR TREE OUT_PREFIX   (writes OUT_PREFIX.json,
# OUT_PREFIX.time; the dataset is described by the h5dlio-describe beside that kernel, else by h5py: a tree without
# build/ needs it)
set -euo pipefail
run=$1 tree=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
venv=$(cat /work/main/build/.dlio-venv)
echo "load before: $(cut -d' ' -f1 /proc/loadavg)" > "$out.load"
(cd "$tree" && PYTHONPATH=$tree /usr/bin/time -v -o "$out.time" "$here/../../../.venv/bin/python" \
  "$here/../2026-11-27-validation-scale/recollect.py" "$run" "$venv") > "$out.json"
echo "load after: $(cut -d' ' -f1 /proc/loadavg)" >> "$out.load"
cat "$out.json" "$out.load"
