#!/bin/bash
# Issue 14 (CPU, pass 5) scratch driver, not part of npm run bench; see bench/results-cpu.md, "pass 5".
# usage: pairs.sh <label> <pairs> <before dir> <after dir> [env...]
label=$1; n=$2; B=$3; A=$4; shift 4
for i in $(seq 1 $n); do
  if (( i % 2 )); then order="$B $A"; else order="$A $B"; fi
  for d in $order; do
    l0=$(cut -d' ' -f1 /proc/loadavg)
    out=$(cd $d && env "$@" nice -n 19 node dist/bench/cpu-per-page.js 20000 csv-default,csv-default 2>&1 | tr '\n' ' ')
    l1=$(cut -d' ' -f1 /proc/loadavg)
    echo "$label pair $i $d load $l0 -> $l1 :: $out"
  done
done
