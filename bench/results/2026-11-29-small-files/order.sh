#!/bin/bash
# the kernel's file order for N files (its openat sequence)
N=$1; K=${2:-/tmp/wt-small/build/own-hdf5/h5dlio}
S="--set data-folder=/tmp/sm/d$N --set naming=dlio --set num-files-train=$N --set num-files-eval=0 --set num-samples-per-file=1 --set record-length=4096 --set batch-size=7 --set read-threads=0 --set epochs=1 --set computation-time=0 --set shuffle=seed --set keep-files=true --set num-subfolders-train=0 --set quiet=true --set generate-data=false --set train=true --set output-folder=/tmp/sm/oo"
strace -f -e trace=openat -o /tmp/sm/k$N.openat $K $S > /dev/null 2>&1
grep -o "\"/tmp/sm/d$N/train/[^\"]*\"" /tmp/sm/k$N.openat | tr -d '"' > /tmp/sm/korder$N.txt
wc -l /tmp/sm/korder$N.txt
