#!/bin/bash
# The field claims re-earned with the order of opens compared (issue 35 item 8): each run by the run.sh of the
# folder that first measured it (the harness, validate and reports under /usr/bin/time -v; the load every 30 s), its
# manifest and verdict copied here, then ../2026-11-27-imagenet-dlio3/summarize.py over the output folders.
# Usage (from the repository root, after make build venv dlio-venv and make dlio-venv-spec DLIO=<3.x f6796ed checkout>):
#   run.sh RUNS OUT DLIO3_VENV
set -eu
runs=$1; out=$2; v3=$3
R=bench/results
DARSHAN_PREFIX= bash $R/2026-11-27-imagenet-field/run.sh imagenet_files field-100k both "$runs" "$out/img2" \
  --profiles timing,dftracer,logvfd --dlio-quiet-index-map
DLIO_VENV=$v3 bash $R/2026-11-27-imagenet-dlio3/run.sh field-100k "$runs" "$out/img3" --profiles timing,dftracer
DARSHAN_PREFIX= bash $R/2026-11-27-imagenet-field/run.sh unet3d field both "$runs" "$out/u2" \
  --profiles timing,dftracer,logvfd --dlio-quiet-index-map
DARSHAN_PREFIX= bash $R/2026-11-27-imagenet-field/run.sh imagenet_files field-100k both "$runs" "$out/img2s" \
  --profiles timing,dftracer,strace --dlio-quiet-index-map
for n in img2 img3 u2 img2s; do
  r=$(cat "$out/$n/run"); cp "$r/manifest.json" "$r/verdict.json" "$out/$n/"
  cp "$out/$n/validate.out" "$R/2026-11-28-field-order/validate-$n.out"
  cp "$r/verdict.json" "$R/2026-11-28-field-order/verdict-$n.json"
done
.venv/bin/python $R/2026-11-27-imagenet-dlio3/summarize.py "$out"/img2 "$out"/img3 "$out"/u2 "$out"/img2s \
  > $R/2026-11-28-field-order/results.json
