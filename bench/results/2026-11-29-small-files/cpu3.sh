#!/bin/bash
# CPU seconds (user+sys, /usr/bin/time) of the kernel's epoch launch and the hdf5 loop (sorted, kernel's order), interleaved
N=$1; REPS=$2; K=/tmp/wt-small/build/own-hdf5/h5dlio; L=/tmp/wt-small/build/own-hdf5/h5dlio-limits
S="--set data-folder=/tmp/sm/d$N --set naming=dlio --set num-files-train=$N --set num-files-eval=0 --set num-samples-per-file=1 --set record-length=4096 --set batch-size=7 --set read-threads=0 --set epochs=1 --set computation-time=0 --set shuffle=seed --set keep-files=true --set num-subfolders-train=0 --set quiet=true --set generate-data=false --set train=true --set output-folder=/tmp/sm/oc$N"
for i in $(seq $REPS); do
  echo "rep $i load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "kernel user %U sys %S wall %e" $K $S >/dev/null 2>/tmp/sm/cpu.err; tail -1 /tmp/sm/cpu.err
  /usr/bin/time -f "loop-sorted user %U sys %S wall %e" $L --mode hdf5 --list /tmp/sm/l$N.txt >/dev/null 2>/tmp/sm/cpu.err; tail -1 /tmp/sm/cpu.err
  /usr/bin/time -f "loop-korder user %U sys %S wall %e" $L --mode hdf5 --list /tmp/sm/korder$N.txt >/dev/null 2>/tmp/sm/cpu.err; tail -1 /tmp/sm/cpu.err
done
