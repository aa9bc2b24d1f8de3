#!/bin/bash
# One kernel-only field-scale run measured (docs/scale-record.md, "Kernel-only"): the harness (launches + collection) under
# /usr/bin/time -v, then measure.sh on the run (collection re-run alone with its parts, validate, reports).
# Usage (from the repository root, after make build venv dlio-venv):
#   bench/results/2026-11-27-validation-scale/run.sh <unet3d scale, e.g. field-20k> <runs folder> <out folder>
set -u
here=$(cd "$(dirname "$0")" && pwd)
scale=$1; runs=$2; out=$3; mkdir -p "$out" "$runs"
DV=$(cat build/.dlio-venv)
DP=$(ls -d ~/.cache/h5dlio/darshan-3.5.0-* | head -1)
/usr/bin/time -v -o "$out/harness.time" .venv/bin/python -m harness run --workload unet3d --scale "$scale" --ranks 2 \
  --sides kernel --runs-dir "$runs" --dlio-venv "$DV" --darshan-prefix "$DP" \
  > "$out/harness.out" 2> "$out/harness.err"; echo "harness rc=$?" > "$out/harness.rc"
# the run directory: the harness's "harness: run directory" line (it wrote --print-run-dir once; gone since issue 38)
sed -n 's/^harness: run directory //p' "$out/harness.out" | tail -n1 > "$out/run"
"$here/measure.sh" "$(cat "$out/run")" . "$out"
