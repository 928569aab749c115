#!/usr/bin/env bash
# Peak RSS of a default-mapping CSV backfill (bench/pull-backfill.ts) under Node majors other than
# this machine's, each case as its own `freight-sync backfill` child:
#   before  the process as it starts, no re-execution (FREIGHT_SYNC_REEXECUTED=1): as builds
#           before the fifteenth session ran on that Node
#   auto    as `npm i -g` runs it now: a long command re-executes itself with the start-up
#           settings it lacks (src/cli/start-up-settings.ts; Node ≥ 22.15): on Node 24 these
#           include --no-maglev
#   maglev  as auto with FREIGHT_SYNC_MAGLEV=on: Maglev left as V8 has it (as auto was before the
#           seventeenth session); only on a node built with Maglev
#   image   as the container image starts it: the three malloc variables in the environment and
#           node --max-semi-space-size=4 --no-maglev (its entrypoint), nothing re-executed
# CASES (environment) picks some of them: CASES="auto maglev" bench/node-versions-rss.sh 1000000
# and, per version, the peak RSS of `freight-sync --help` (goal ≤ 60 MB) in each round.
# Node binaries come from the npm registry (node-linux-<arch>@<version>, the official builds);
# better-sqlite3 is rebuilt for each against that Node's headers in a scratch copy (~1–2 min the
# first time). Run `npm run build` first.
#
# usage: bench/node-versions-rss.sh [loads] [rounds] [version ...]
#        bench/node-versions-rss.sh 100000 2 22.23.5 24.22.3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
loads=${1:-100000}
rounds=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22.23.5 24.22.3)
arch=$(node -p process.arch)
work=${TMPDIR:-/tmp}/freight-sync-node-versions
node_gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
[ -f "$root/dist/bench/pull-backfill.js" ] || { echo "run npm run build first" >&2; exit 2; }

prepare() {
  local version=$1 dir=$work/$1
  if [ ! -x "$dir/node/bin/node" ]; then
    rm -rf "$dir/node" && mkdir -p "$dir/node"
    (cd "$dir/node" && npm pack --silent "node-linux-$arch@$version" >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm -f ./*.tgz)
  fi
  # The app: this checkout's build, its packages linked, better-sqlite3 copied and rebuilt.
  rm -rf "$dir/app" && mkdir -p "$dir/app/node_modules"
  cp -r "$root/package.json" "$root/config" "$root/dist" "$dir/app/"
  for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
    [ "$(basename "$entry")" = better-sqlite3 ] || ln -s "$entry" "$dir/app/node_modules/"
  done
  if [ ! -f "$dir/better-sqlite3/build/Release/better_sqlite3.node" ]; then
    rm -rf "$dir/better-sqlite3" && cp -r "$root/node_modules/better-sqlite3" "$dir/better-sqlite3"
    (cd "$dir/better-sqlite3" && PATH="$dir/node/bin:$PATH" node "$node_gyp" rebuild --release --nodedir="$dir/node" >"$dir/node-gyp.log" 2>&1) \
      || { tail -20 "$dir/node-gyp.log" >&2; exit 1; }
  fi
  # A copy, not a link: its own requires (bindings) resolve from where it is.
  cp -r "$dir/better-sqlite3" "$dir/app/node_modules/better-sqlite3"
}

run_case() {
  local version=$1 name=$2 flags=$3; shift 3
  local dir=$work/$version out
  [[ " ${CASES:-before auto maglev image} " == *" $name "* ]] || return 0
  out=$(cd "$dir/app" && env "$@" "$dir/node/bin/node" --input-type=module -e "
    const { benchBackfill } = await import('$dir/app/dist/bench/pull-backfill.js');
    const r = await benchBackfill({ loads: $loads, sink: 'csv', mapping: 'default', nodeFlags: $flags });
    if (r.delivered !== $loads) throw new Error('delivered ' + r.delivered + ' of $loads');
    console.log('| ' + [process.version, '$name', $loads, r.seconds.toFixed(1), r.peakRssMiB.toFixed(1)].join(' | ') + ' |');
  " 2>&1) || { echo "$out" | tail -15 >&2; exit 1; }
  echo "$out" | tail -1
}

for version in "${versions[@]}"; do prepare "$version"; done
malloc=(MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072)
echo "| Node | case | loads | seconds | peak RSS MiB |"
echo "|---|---|---|---|---|"
run_help() {
  local version=$1 dir=$work/$1 kib
  kib=$(cd "$dir/app" && FREIGHT_SYNC_REPORT_RSS=1 "$dir/node/bin/node" dist/src/cli/bin.js --help 2>&1 >/dev/null | sed -n 's/^freight-sync: peak-rss-kib=//p')
  echo "| $("$dir/node/bin/node" -p process.version) | --help | — | — | $(awk "BEGIN { printf \"%.1f\", $kib / 1024 }") |"
}

for _ in $(seq 1 "$rounds"); do
  for version in "${versions[@]}"; do
    run_help "$version"
    run_case "$version" before '[]' FREIGHT_SYNC_REEXECUTED=1
    run_case "$version" auto '[]' FREIGHT_SYNC_GLIBC_MALLOC=auto
    if [ "$("$work/$version/node/bin/node" -p process.config.variables.v8_enable_maglev)" = 1 ]; then
      run_case "$version" maglev '[]' FREIGHT_SYNC_MAGLEV=on
    fi
    run_case "$version" image '["--max-semi-space-size=4", "--no-maglev"]' "${malloc[@]}"
  done
done
