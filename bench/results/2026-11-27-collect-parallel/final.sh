#!/bin/bash
# final.sh RUN_DIR OUT: the page cache dropped, then the run's collection with COLLECT_JOBS=2 (pcollect.py, its
# session's summed RSS sampled by measure.sh), python -m validate and python -m reports, each under /usr/bin/time -v;
# the 1-minute load every 10 s. Run from the repository's root.
RD=$1
O=$2
H=$(dirname "$0")
mkdir -p "$O"
sync; echo 3 > /proc/sys/vm/drop_caches
(while sleep 10; do cat /proc/loadavg >> "$O/load"; done) & LM=$!
date +%T > "$O/start"
"$H/measure.sh" "$O/collect" /usr/bin/time -v .venv/bin/python "$H/pcollect.py" "$RD" 2
date +%T >> "$O/start"
/usr/bin/time -v .venv/bin/python -m validate "$RD" > "$O/validate.out" 2> "$O/validate.time"
date +%T >> "$O/start"
/usr/bin/time -v .venv/bin/python -m reports "$RD" > "$O/reports.out" 2> "$O/reports.time"
date +%T >> "$O/start"
kill $LM
