#!/bin/sh
# The Darshan part of collection of one run, with the tree before (OLD, a `git archive` export) and this one (NEW),
# on the same run directory: darshanpart.py under /usr/bin/time -v (parse + write, peak RSS), launchmem.py
# (tracemalloc: peak and kept bytes per file), the import floor (pydarshan alone), and cmp of every table written.
# Usage: measure.sh RUN_DIR OUT OLD_TREE NEW_TREE [STEP [DATA_ROOT]]  (STEP default kernel.darshan; OLD_TREE "-"
# skips it; DATA_ROOT: darshanpart.py --data-root, for a copy of one launch; then launchmem.py is not run)
set -eu
run=$1 out=$2 old=$3 new=$4 step=${5:-kernel.darshan} root=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
py=$new/.venv/bin/python
mkdir -p "$out"
for tree in old new; do
  t=$old; [ "$tree" = new ] && t=$new
  [ "$t" = - ] && continue
  rm -rf "${out:?}/$tree"
  PYTHONPATH=$t /usr/bin/time -v -o "$out/$tree.time" "$py" "$here/darshanpart.py" "$run" "$out/$tree" \
    ${root:+--data-root "$root"} > "$out/$tree.json"
  [ -n "$root" ] || PYTHONPATH=$t "$py" "$here/../2026-11-27-validation-memory/launchmem.py" "$run" "$step" > "$out/$tree.tracemalloc.json"
done
PYTHONPATH=$new /usr/bin/time -v -o "$out/import.time" "$py" "$here/darshanpart.py" "$run" "$out/x" --import-only \
  > "$out/import.json"
if [ "$old" != - ]; then
  for f in "$out"/old/tables/*.json; do
    cmp "$f" "$out/new/tables/$(basename "$f")"
    echo "identical: $(basename "$f") $(wc -c < "$f") bytes"
  done > "$out/cmp.txt"
  cat "$out/cmp.txt"
fi
