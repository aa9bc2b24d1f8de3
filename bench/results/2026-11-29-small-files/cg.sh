#!/bin/bash
# callgrind the kernel's epoch and the hdf5 loop over N files
N=$1; K=${2:-/tmp/wt-small/build/own-hdf5/h5dlio}; tag=${3:-base}
L=/tmp/wt-small/build/own-hdf5/h5dlio-limits
S="--set data-folder=/tmp/sm/d$N --set naming=dlio --set num-files-train=$N --set num-files-eval=0 --set num-samples-per-file=1 --set record-length=4096 --set batch-size=7 --set read-threads=0 --set epochs=1 --set computation-time=0 --set shuffle=seed --set keep-files=true --set num-subfolders-train=0 --set quiet=true --set generate-data=false --set train=true --set output-folder=/tmp/sm/ot-$tag"
valgrind --tool=callgrind --callgrind-out-file=/tmp/sm/k$N-$tag.cg $K $S >/dev/null 2>/tmp/sm/k$N-$tag.vg
[ "$tag" = base ] && valgrind --tool=callgrind --callgrind-out-file=/tmp/sm/l$N.cg $L --mode hdf5 --list /tmp/sm/l$N.txt >/dev/null 2>/tmp/sm/l$N.vg
echo done
