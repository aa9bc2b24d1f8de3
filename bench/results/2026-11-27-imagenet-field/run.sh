#!/bin/bash
# One field-scale run measured step by step (docs/scale-record.md): the harness (launches + collection), `python -m validate`
# and `python -m reports`, each under /usr/bin/time -v, a load sample every 30 s, the run directory's size.
# Usage (from the repository root, after make build venv dlio-venv; DARSHAN_PREFIX a Darshan install or unset):
#   run.sh WORKLOAD SCALE SIDES RUNS_DIR OUT [extra harness options...]
#   RESUME=<run directory> run.sh ...: continue that run (harness run --resume) instead of starting one
set -u
workload=$1; scale=$2; sides=$3; runs=$4; out=$5; shift 5
mkdir -p "$out" "$runs"
py=$PWD/.venv/bin/python
dp=()
[ -n "${DARSHAN_PREFIX:-}" ] && dp=(--darshan-prefix "$DARSHAN_PREFIX")
(while sleep 30; do echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)"; done) > "$out/load" & loadpid=$!
: > "$out/rc"
if [ -n "${RESUME:-}" ]; then  # an interrupted run continued (its launches kept, the rest done by this tree)
  /usr/bin/time -v -o "$out/resume.time" "$py" -m harness run --resume "$RESUME" --dlio-venv "$(cat build/.dlio-venv)" \
    --timeout 10800 "${dp[@]}" "$@" > "$out/resume.out" 2> "$out/resume.err"
  echo "resume rc=$?" >> "$out/rc"
else
  /usr/bin/time -v -o "$out/harness.time" "$py" -m harness run --workload "$workload" --scale "$scale" --ranks 2 \
    --sides "$sides" --runs-dir "$runs" --dlio-venv "$(cat build/.dlio-venv)" --timeout 10800 "${dp[@]}" \
    "$@" > "$out/harness.out" 2> "$out/harness.err"
  echo "harness rc=$?" >> "$out/rc"
fi
# the run directory: the harness's "harness: run directory" line (it wrote --print-run-dir once; gone since issue 38)
sed -n 's/^harness: run directory //p' "$out"/{resume,harness}.out 2>/dev/null | tail -n1 > "$out/run"
run=$(cat "$out/run")
/usr/bin/time -v -o "$out/validate.time" "$py" -m validate "$run" > "$out/validate.out" 2> "$out/validate.err"
echo "validate rc=$?" >> "$out/rc"
/usr/bin/time -v -o "$out/reports.time" "$py" -m reports "$run" > "$out/reports.out" 2> "$out/reports.err"
echo "reports rc=$?" >> "$out/rc"
ls -l "$run/tables" > "$out/tables.ls"; du -sb "$run" > "$out/du"
kill $loadpid
echo done >> "$out/rc"
