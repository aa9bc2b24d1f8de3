#!/bin/bash
# One field-scale measurement (docs/scale-record.md): the three steps of `make validate` (harness run, python -m validate,
# python -m reports) each under /usr/bin/time -v, plus the harness's collection re-run alone (recollect.py) to time
# the parsing, and the run directory's size. Usage (from the repository root, after make build venv dlio-venv):
#   [DARSHAN=<darshan prefix>] bench/results/2026-11-25-field/run.sh <unet3d scale, e.g. field-5k> <out folder>
# then: python bench/results/2026-11-25-field/summarize.py <out folder>... > results.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
scale=$1; out=$2; mkdir -p "$out"
DV=$(cat build/.dlio-venv)
/usr/bin/time -v -o "$out/harness.time" .venv/bin/python -m harness run --workload unet3d --scale "$scale" --ranks 2 \
  --runs-dir runs --dlio-venv "$DV" ${DARSHAN:+--darshan-prefix $DARSHAN} \
  > "$out/harness.out" 2> "$out/harness.err"; echo "harness rc=$?" > "$out/rc"
# the run directory: the harness's "harness: run directory" line (it wrote --print-run-dir once; gone since issue 38)
sed -n 's/^harness: run directory //p' "$out/harness.out" | tail -n1 > "$out/run"
run=$(cat "$out/run")
PYTHONPATH=. /usr/bin/time -v -o "$out/collect.time" .venv/bin/python "$here/recollect.py" "$run" "$DV" \
  > "$out/collect.out" 2>&1; echo "collect rc=$?" >> "$out/rc"
/usr/bin/time -v -o "$out/validate.time" .venv/bin/python -m validate "$run" > "$out/validate.out" 2> "$out/validate.err"
echo "validate rc=$?" >> "$out/rc"
/usr/bin/time -v -o "$out/reports.time" .venv/bin/python -m reports "$run" > "$out/reports.out" 2> "$out/reports.err"
echo "reports rc=$?" >> "$out/rc"
du -sb "$run" > "$out/du"; du -sb "$run"/*/ >> "$out/du" 2>/dev/null
echo done >> "$out/rc"
