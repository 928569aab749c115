#!/bin/bash
# Issue 14 (CPU, pass 5) scratch driver, not part of npm run bench; see bench/results-cpu.md, "pass 5".
# semi.sh <rounds> <dir>: cpu-per-page with the semi-space cap at 4, 8, 16 MiB, rotated
n=$1; D=$2
for i in $(seq 1 $n); do
  case $((i % 3)) in 1) order="4 8 16";; 2) order="8 16 4";; 0) order="16 4 8";; esac
  for m in $order; do
    l0=$(cut -d' ' -f1 /proc/loadavg)
    out=$(cd $D && FREIGHT_SYNC_SEMI_SPACE_MIB=$m nice -n 19 node dist/bench/cpu-per-page.js 20000 csv-default,csv-default 2>&1 | tr '\n' ' ')
    echo "semi $m round $i load $l0 -> $(cut -d' ' -f1 /proc/loadavg) :: $out"
  done
done
