#!/bin/bash
# CPU per page of two builds, alternated in one sitting (a shared VM drifts by ±15% over minutes;
# alternating puts both builds under the same drift). Each directory must hold a built checkout
# (`npm run build`; node_modules may be a symlink to another checkout's).
#   bench/ab-cpu-per-page.sh <dir A> <dir B> [rounds=4] [cases=csv-default,csv-default,null]
# e.g. git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules &&
#      (cd /tmp/base && npx tsc -p tsconfig.build.json) && bench/ab-cpu-per-page.sh /tmp/base "$PWD"
set -euo pipefail
a=$1 b=$2 rounds=${3:-4} cases=${4:-csv-default,csv-default,null}
for i in $(seq 1 "$rounds"); do
  for dir in "$a" "$b"; do
    (cd "$dir" && node dist/bench/cpu-per-page.js 20000 "$cases" | grep -v '^heap policy' | sed "s|^|$(basename "$dir") round $i: |")
  done
done
