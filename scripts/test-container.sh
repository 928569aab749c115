#!/usr/bin/env bash
# `npm run test:container`: builds the Dockerfile with podman and runs the image for real, beside the
# API simulator (also run from the image), checking what an operator relies on:
#   size at most IMAGE_MAX_MB (decimal MB, as `podman images` prints), uid 1000, no dev dependency and
#   no left-out driver inside, /healthz and /readyz, a first sync into the mounted /data volume and a
#   PostgreSQL sink (rows equal the simulator's truth), the HEALTHCHECK reported healthy, a driver the
#   image lacks named in the error, SIGTERM drain exiting 0, glibc malloc settings in the environment.
# No registry is reachable here: the base image node:<major>-bookworm-slim is a local stand-in built by
# container-base.sh (CONTAINER_BASE_SH, else ../shared/tools/container-base.sh), which also prints the
# podman flags these machines need. With CI=true anything missing fails; otherwise it skips loudly.
# Environment: NODE_MAJOR (default: this machine's, as the stand-in base carries the machine's node),
# DRIVERS (default: the Dockerfile's), IMAGE (default freight-sync:test), KEEP=1 keeps the containers.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
IMAGE=${IMAGE:-freight-sync:test}
IMAGE_MAX_MB=${IMAGE_MAX_MB:-250}
NODE_MAJOR=${NODE_MAJOR:-$(node -p 'process.versions.node.split(".")[0]')}
t0=$(date +%s%N)

say() { printf '== %s\n' "$*"; }
fail() { printf 'test:container FAILED: %s\n' "$*" >&2; exit 1; }
unavailable() {
  if [ "${CI:-}" = "true" ]; then fail "$* (CI=true: the container test cannot be skipped)"; fi
  printf '\n!! test:container SKIPPED: %s\n!! install podman, runc and debootstrap (apt-get install -y podman runc debootstrap) and run as root\n\n' "$*" >&2
  exit 0
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

command -v podman >/dev/null || unavailable "podman is not installed"
[ "$(id -u)" = 0 ] || unavailable "container-base.sh needs root (debootstrap, chroot)"
base_sh=${CONTAINER_BASE_SH:-}
if [ -z "$base_sh" ]; then
  for candidate in "$root/../shared/tools/container-base.sh" /work/shared/tools/container-base.sh; do
    [ -f "$candidate" ] && { base_sh=$candidate; break; }
  done
fi
[ -n "$base_sh" ] && [ -f "$base_sh" ] || unavailable "container-base.sh not found (set CONTAINER_BASE_SH)"

say "base image node:${NODE_MAJOR}-bookworm-slim (local stand-in, $base_sh)"
base_out=$(bash "$base_sh") || fail "container-base.sh failed"
# It prints NAME="value" lines for the flags; take only those three.
PODMAN_FLAGS=$(sed -n 's/^PODMAN_FLAGS="\(.*\)"$/\1/p' <<<"$base_out")
RUN_FLAGS=$(sed -n 's/^RUN_FLAGS="\(.*\)"$/\1/p' <<<"$base_out")
NPM_CACHE_DIR=$(sed -n 's/^NPM_CACHE_DIR="\(.*\)"$/\1/p' <<<"$base_out")
[ -n "$NPM_CACHE_DIR" ] || fail "container-base.sh printed no NPM_CACHE_DIR: $base_out"
pod() { podman $PODMAN_FLAGS "$@"; }
pod image exists "docker.io/library/node:${NODE_MAJOR}-bookworm-slim" \
  || fail "no base image node:${NODE_MAJOR}-bookworm-slim (the stand-in carries this machine's node, $(node --version): use NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]'))"

build_args=(--build-arg "NODE_MAJOR=$NODE_MAJOR")
[ -n "${DRIVERS:-}" ] && build_args+=(--build-arg "DRIVERS=$DRIVERS")
say "build $IMAGE (${build_args[*]}; --format docker keeps the HEALTHCHECK)"
start=$(date +%s%N)
# shellcheck disable=SC2086 # the flags are word lists
pod build --pull=never --network host --format docker -v "$NPM_CACHE_DIR:/npmcache" $RUN_FLAGS "${build_args[@]}" -t "$IMAGE" . >"${TMPDIR:-/tmp}/freight-sync-image-build.log" 2>&1 \
  || { tail -40 "${TMPDIR:-/tmp}/freight-sync-image-build.log" >&2; fail "image build failed (log: ${TMPDIR:-/tmp}/freight-sync-image-build.log)"; }
build_ms=$(ms_since "$start")
echo "built in $((build_ms / 1000)) s"

size=$(pod image inspect --format '{{.Size}}' "$IMAGE")
size_mb=$(( size / 1000000 ))
echo "image size: ${size_mb} MB ($size bytes; budget ${IMAGE_MAX_MB} MB)"
[ "$size" -le $(( IMAGE_MAX_MB * 1000000 )) ] || fail "image is ${size_mb} MB, over the ${IMAGE_MAX_MB} MB budget"
[ "$(pod image inspect --format '{{.Config.User}}' "$IMAGE")" = node ] || fail "image USER is not node"
[[ "$(pod image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE")" == *healthz* ]] || fail "image has no HEALTHCHECK (built without --format docker?)"
# glibc's malloc settings the peak RSS figures are measured with (README "Memory"): only the
# environment at start can set them, so the image must carry them.
image_env=$(pod image inspect --format '{{json .Config.Env}}' "$IMAGE")
for setting in MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072; do
  [[ "$image_env" == *"\"$setting\""* ]] || fail "image environment lacks $setting (has: $image_env)"
done
# The young generation's cap: a node flag on Node ≥ 22, whose V8 ignores the growth factor set at
# run time (src/cli/start-up-settings.ts); the entrypoint passes it so the daemon need not re-execute.
image_entrypoint=$(pod image inspect --format '{{json .Config.Entrypoint}}' "$IMAGE")
[[ "$image_entrypoint" == *'"--max-semi-space-size=4"'* ]] || fail "image entrypoint lacks --max-semi-space-size=4 (has: $image_entrypoint)"
# --no-maglev likewise, for an image built on a node with Maglev (Node 24); the others ignore it.
[[ "$image_entrypoint" == *'"--no-maglev"'* ]] || fail "image entrypoint lacks --no-maglev (has: $image_entrypoint)"

# ---- what is inside node_modules: production packages of the lockfile only, left-out drivers absent ----
say "image contents: no dev dependency, drivers as built"
pod run --rm $RUN_FLAGS --no-healthcheck --entrypoint node "$IMAGE" -e '
  const fs = require("fs"), path = require("path"); const out = [];
  (function walk(dir) {
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(".")) continue;
      const full = path.join(dir, name);
      if (name.startsWith("@")) { walk(full); continue; }
      if (!fs.existsSync(path.join(full, "package.json"))) continue;
      out.push(path.relative("/app", full));
      if (fs.existsSync(path.join(full, "node_modules"))) walk(path.join(full, "node_modules"));
    }
  })("/app/node_modules");
  console.log(out.join("\n"));' >"${TMPDIR:-/tmp}/freight-sync-image-packages.txt"
drivers=$(pod image inspect --format '{{index .Config.Labels "io.freight-sync.drivers"}}' "$IMAGE")
node scripts/check-image-packages.mjs "${TMPDIR:-/tmp}/freight-sync-image-packages.txt" "$drivers" || fail "image node_modules"

# ---- run: simulator and daemon from the image, on the host network (loopback between them) ----
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
sim_port=$(free_port); ops_port=$(free_port)
work=$(mktemp -d "${TMPDIR:-/tmp}/freight-sync-container-XXXXXX")
mkdir -p "$work/data" "$work/config"
chown 1000:1000 "$work/data"   # the volume is written by the image's user, uid 1000
suffix="$$-$(date +%s)"
sim=fs-sim-$suffix; daemon=fs-daemon-$suffix
schema=fs_container_$$
psql_test() { PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -d test -v ON_ERROR_STOP=1 -qtAc "$1"; }
cleanup() {
  status=$?
  if [ "${KEEP:-}" != 1 ]; then
    pod rm -f -t 0 "$sim" "$daemon" >/dev/null 2>&1 || true
    psql_test "drop schema if exists $schema cascade" >/dev/null 2>&1 || true
    rm -rf "$work"
  fi
  exit $status
}
trap cleanup EXIT
pg_isready -h 127.0.0.1 -p 5432 -q || fail "PostgreSQL is not running on 127.0.0.1:5432"
psql_test "drop schema if exists $schema cascade"

say "simulator from the image on 127.0.0.1:$sim_port"
pod run -d --name "$sim" $RUN_FLAGS --no-healthcheck --network host "$IMAGE" simulate --port "$sim_port" --loads 300 --seed 13 >/dev/null
base_url=""
for _ in $(seq 1 300); do
  base_url=$( (pod logs "$sim" 2>/dev/null || true) | sed -n 's/^ *base URL: *//p' | head -1)
  [ -n "$base_url" ] && break
  sleep 0.1
done
[ -n "$base_url" ] || { pod logs "$sim" >&2; fail "the simulator did not start"; }
truth_loads=$(curl -fsS "http://127.0.0.1:$sim_port/__admin/truth?resource=loads" | grep -c .)
echo "simulator at $base_url with $truth_loads loads"

cat >"$work/config/freight-sync.yaml" <<YAML
api:
  variant: main
  baseUrl: $base_url
  auth:
    clientId: sim-client
    clientSecret: "\${SIM_CLIENT_SECRET}"
  rateLimit: { requestsPerSecond: 500 }
state: { path: /data/freight-sync.sqlite }
log: { level: info, pretty: false }
http: { listen: 0.0.0.0:$ops_port }
sync:
  defaults: { schedule: "*/5 * * * *", safetyLag: PT2S, initialFrom: "$(date -u -d '400 days ago' +%Y-%m-%dT00:00:00Z)" }
  streams:
    loads: { sinks: [drop, erp] }
connectors:
  drop: { type: csv, options: { directory: /data/drop } }
  erp: { type: sql, options: { dialect: postgres, url: "postgres://postgres@127.0.0.1:5432/test", schema: $schema } }
YAML

say "daemon from the image: run, ops on :$ops_port, /data a volume, config mounted read-only"
# --health-interval disable: the image's HEALTHCHECK stays, but podman schedules it with systemd
# timers, and there is no systemd here; `podman healthcheck run` below runs it instead.
pod run -d --name "$daemon" $RUN_FLAGS --health-interval disable --network host \
  -e SIM_CLIENT_SECRET=sim-secret -e FREIGHT_SYNC_HTTP_PORT="$ops_port" \
  -v "$work/config:/config:ro" -v "$work/data:/data" "$IMAGE" >/dev/null 2>"$work/podman-run.err" \
  || { cat "$work/podman-run.err" >&2; fail "podman run of the daemon failed"; }

wait_for() { # description, deadline seconds, command...
  local what=$1 secs=$2; shift 2
  local until=$(( $(date +%s) + secs ))
  until "$@"; do
    [ "$(pod inspect --format '{{.State.Running}}' "$daemon")" = true ] || { pod logs "$daemon" 2>&1 | tail -30 >&2; fail "the daemon exited while waiting for $what"; }
    [ "$(date +%s)" -lt "$until" ] || { pod logs "$daemon" 2>&1 | tail -30 >&2; fail "timed out after ${secs}s waiting for $what"; }
    sleep 0.2
  done
}
http_ok() { curl -fsS -o /dev/null "http://127.0.0.1:$ops_port$1" 2>/dev/null; }
wait_for "/healthz" 60 http_ok /healthz
echo "/healthz: $(curl -fsS "http://127.0.0.1:$ops_port/healthz")"
wait_for "/readyz" 60 http_ok /readyz
echo "/readyz: $(curl -fsS "http://127.0.0.1:$ops_port/readyz")"

uid=$(pod exec "$daemon" id -u)
[ "$uid" = 1000 ] || fail "the daemon runs as uid $uid, not 1000"
echo "daemon uid: $uid"

rows() { psql_test "select count(*) from $schema.loads" 2>/dev/null || echo 0; }
all_rows() { [ "$(rows)" = "$truth_loads" ]; }
wait_for "the first sync to deliver $truth_loads loads to PostgreSQL" 180 all_rows
echo "PostgreSQL $schema.loads: $(rows) rows = simulator truth"
csv_files=$(find "$work/data/drop" -name '*.csv' | wc -l)
[ "$csv_files" -gt 0 ] || fail "no CSV file in the /data volume ($work/data/drop)"
[ -s "$work/data/freight-sync.sqlite" ] || fail "no state database in the /data volume"
seen=$(node -e '
  const Database = require("better-sqlite3");
  const db = new Database(process.argv[1], { readonly: true });
  console.log(db.prepare("select count(*) as n from seen_records where stream = ?").get("loads").n);' "$work/data/freight-sync.sqlite")
[ "$seen" = "$truth_loads" ] || fail "the state database in /data records $seen loads, expected $truth_loads"
echo "/data volume: $csv_files CSV file(s), state database with $seen loads"

say "HEALTHCHECK"
pod healthcheck run "$daemon" || fail "podman healthcheck run: unhealthy"
health=$(pod inspect --format '{{.State.Healthcheck.Status}}' "$daemon" 2>/dev/null || pod inspect --format '{{.State.Health.Status}}' "$daemon")
[ "$health" = healthy ] || fail "health status is '$health', expected healthy"
echo "health status: $health"

case ",$drivers," in *,mssql,*|*,all,*) mssql_in=1 ;; *) mssql_in=0 ;; esac
if [ "$mssql_in" = 0 ]; then
  say "a driver left out of the image is named when configured (mssql -> tedious)"
  sed -e "s|dialect: postgres, url: \"[^\"]*\"|dialect: mssql, host: 127.0.0.1, user: sa, password: x, database: erp|" \
    "$work/config/freight-sync.yaml" >"$work/config/mssql.yaml"
  set +e
  out=$(pod run --rm $RUN_FLAGS --no-healthcheck --network host -e SIM_CLIENT_SECRET=sim-secret -v "$work/config:/config:ro" --tmpfs /data:rw,mode=1777 \
    "$IMAGE" check -c /config/mssql.yaml 2>&1)
  code=$?
  set -e
  [ "$code" -ne 0 ] || fail "check with an mssql sink succeeded in an image without tedious"
  grep -q 'needs the npm package "tedious"' <<<"$out" || { echo "$out" >&2; fail "the error does not name the missing package tedious"; }
  echo "check exits $code: $(grep -o 'the sql connector with dialect mssql needs the npm package "tedious"[^:]*' <<<"$out" | head -1)"
fi

say "SIGTERM drain"
start=$(date +%s%N)
pod kill --signal TERM "$daemon" >/dev/null
code=$(pod wait "$daemon")
term_ms=$(ms_since "$start")
[ "$code" = 0 ] || { pod logs "$daemon" 2>&1 | tail -20 >&2; fail "the daemon exited $code after SIGTERM"; }
# Captured first: `grep -q` quitting early would fail `podman logs` with SIGPIPE under pipefail.
daemon_log=$(pod logs "$daemon" 2>&1)
grep -q draining <<<"$daemon_log" || fail "no 'draining' line in the daemon's log"
echo "exit code 0, ${term_ms} ms after SIGTERM (as seen through podman kill/wait)"

say "ok: image $IMAGE (node $NODE_MAJOR, drivers: $drivers), ${size_mb} MB, built in $((build_ms / 1000)) s, SIGTERM exit in ${term_ms} ms, total $(( $(ms_since "$t0") / 1000 )) s"
