#!/bin/bash
# Validation's own cost on a finished run (docs/scale-record.md, issue 26 item 2): the harness's collection re-run alone
# (recollect.py: the time of each part), `python -m validate` and `python -m reports`, each under /usr/bin/time -v,
# with the Python of TREE (this repository, or an export of the commit before: `git archive <commit> | tar -x -C
# <dir>`), and the tables' sizes. Every step's exit status is kept in OUT/rc.
# Usage (from this repository's root, after make build venv dlio-venv): measure.sh RUN_DIR TREE OUT [VALIDATE_ENV...]
#   VALIDATE_ENV: e.g. H5DLIO_DARSHAN_ANALYSES=all for python -m validate
set -u
run=$1; tree=$(cd "$2" && pwd); out=$3; shift 3; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
py=$PWD/.venv/bin/python
DV=$(cat build/.dlio-venv)
: > "$out/rc"
(cd "$tree" && PYTHONPATH=. /usr/bin/time -v -o "$out/collect.time" "$py" "$here/recollect.py" "$run" "$DV" \
  > "$out/collect.json" 2> "$out/collect.err"); echo "collect rc=$?" >> "$out/rc"
(cd "$tree" && env "$@" /usr/bin/time -v -o "$out/validate.time" "$py" -m validate "$run" > "$out/validate.out" \
  2> "$out/validate.err"); echo "validate rc=$?" >> "$out/rc"
(cd "$tree" && /usr/bin/time -v -o "$out/reports.time" "$py" -m reports "$run" > "$out/reports.out" \
  2> "$out/reports.err"); echo "reports rc=$?" >> "$out/rc"
ls -l "$run/tables" > "$out/tables.ls"; du -sb "$run" > "$out/du"
uptime >> "$out/load"
echo done >> "$out/rc"
