#!/bin/bash
# imagenet_files side by side with DLIO 3.x (docs/scale-record.md), measured step by step: the harness (launches +
# collection), `python -m validate`, `python -m reports`, each under /usr/bin/time -v at nice 5; the 1-minute load
# every 30 s; DLIO's memory every 10 s (../2026-11-27-rt32/memsample.py, folded per launch by its summarize.py);
# the run directory's size. bench/results/2026-11-27-imagenet-field/run.sh with the DLIO venv given, not build's.
# Usage (from the repository root, after make build venv):
#   DLIO_VENV=<3.x venv> run.sh SCALE RUNS_DIR OUT [extra harness options...]
set -u
scale=$1; runs=$2; out=$3; shift 3
: "${DLIO_VENV:?DLIO_VENV=<the DLIO 3.x venv>}"
mkdir -p "$out" "$runs"
py=$PWD/.venv/bin/python
here=bench/results/2026-11-27-rt32
(while sleep 30; do echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)"; done) > "$out/load" & loadpid=$!
"$py" "$here/memsample.py" $$ "$DLIO_VENV" "$out/mem.jsonl" 10 & mempid=$!
: > "$out/rc"
nice -n 5 /usr/bin/time -v -o "$out/harness.time" "$py" -m harness run --workload imagenet_files --scale "$scale" \
  --ranks 2 --sides both --runs-dir "$runs" --dlio-venv "$DLIO_VENV" --timeout 10800 \
  "$@" > "$out/harness.out" 2> "$out/harness.err"
echo "harness rc=$?" >> "$out/rc"
# the run directory: the harness's "harness: run directory" line (it wrote --print-run-dir once; gone since issue 38)
sed -n 's/^harness: run directory //p' "$out/harness.out" | tail -n1 > "$out/run"
run=$(cat "$out/run")
nice -n 5 /usr/bin/time -v -o "$out/validate.time" "$py" -m validate "$run" > "$out/validate.out" 2> "$out/validate.err"
echo "validate rc=$?" >> "$out/rc"
nice -n 5 /usr/bin/time -v -o "$out/reports.time" "$py" -m reports "$run" > "$out/reports.out" 2> "$out/reports.err"
echo "reports rc=$?" >> "$out/rc"
ls -l "$run/tables" > "$out/tables.ls"; du -sb "$run" > "$out/du"
cp "$run/manifest.json" "$run/verdict.json" "$out/" 2>/dev/null
"$py" "$here/summarize.py" "$out/manifest.json" "$out/mem.jsonl" > "$out/memory.json"
kill $loadpid $mempid
echo done >> "$out/rc"
