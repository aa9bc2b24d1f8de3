#!/bin/bash
# `python -m validate` then `python -m reports` of one tree on one run directory, each under /usr/bin/time -v, and
# the sha256 of everything they write (verdict.json, the tables validate derives, the report's files).
# Usage: measure.sh TREE RUN_DIR OUT_PREFIX [PYTHON]     (TREE: a checkout or a `git archive` of one)
# Writes OUT_PREFIX.{validate,reports}.{time,out} and OUT_PREFIX.sha256; prints wall and peak RSS of each.
set -u -o pipefail
tree=$(cd "$1" && pwd); run=$(cd "$2" && pwd); out=$3; py=${4:-python3}
for step in validate reports; do
  (cd "$tree" && PYTHONPATH="$tree" /usr/bin/time -v -o "$out.$step.time" nice -n 5 "$py" -m "$step" "$run" \
     > "$out.$step.out" 2>&1); rc=$?
  echo "$step: exit $rc, $(grep -E 'Elapsed' "$out.$step.time" | awk '{print $NF}') wall," \
       "$(grep -E 'Maximum resident' "$out.$step.time" | awk '{print $NF}') kB peak RSS"
  [ "$step" = validate ] && [ $rc -gt 1 ] && exit $rc
  [ "$step" = reports ] && [ $rc -ne 0 ] && exit $rc
done
(cd "$run" && find verdict.json tables/files-*.json tables/darshan-analyses.json tables/checkpoints-*.json report \
   -type f 2>/dev/null | sort | xargs sha256sum) > "$out.sha256"
tail -n 1 "$out.validate.out"
