#!/bin/bash
# Both trees' DFTracer collect of each launch of one run, back to back (old then new, per side), each in its own
# process (collect1.py), its tables into OUT/<tree>/<side>/tables/, then cmp of every table the two trees wrote.
# Usage: run.sh RUN_DIR OLD_TREE NEW_TREE OUT   (OLD_TREE: e.g. `git archive 83e4f46 | tar -x -C /tmp/old`)
set -euo pipefail
run=$1 old=$2 new=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
py=$new/.venv/bin/python
mkdir -p "$out"
for side in kernel dlio; do
  for tree in old new; do
    dir=$old; [ "$tree" = new ] && dir=$new
    mkdir -p "$out/$tree/$side"
    (cd "$dir" && PYTHONPATH=$dir "$py" "$here/collect1.py" "$run" "$side.dftracer" "$out/$tree/$side") \
      > "$out/$tree/$side/collect.json"
    cat "$out/$tree/$side/collect.json"
  done
  for t in "$out/old/$side/tables/"*; do
    cmp "$t" "$out/new/$side/tables/$(basename "$t")" && echo "identical: $side $(basename "$t") $(stat -c %s "$t") bytes"
  done
done
