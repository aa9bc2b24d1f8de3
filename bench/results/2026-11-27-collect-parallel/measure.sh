#!/bin/bash
# measure.sh OUT cmd...: run cmd in its own session; sample the session's summed RSS every second
out=$1; shift
setsid "$@" > $out.log 2>&1 &
pid=$!
sleep 0.5
sid=$(ps -o sid= -p $pid | tr -d ' ')
peak=0
while kill -0 $pid 2>/dev/null; do
  s=$(ps -s $sid -o rss= 2>/dev/null | awk '{t+=$1} END {print t+0}')
  [ "$s" -gt "$peak" ] && peak=$s
  sleep 1
done
wait $pid; rc=$?
echo "rc=$rc session peak RSS sum: $((peak/1024)) MB" >> $out.log
