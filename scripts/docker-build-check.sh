#!/usr/bin/env bash
# Performs the Dockerfile's build steps as plain commands (no Docker engine needed), so CI can catch
# a broken image recipe: compile, install production dependencies only into a clean folder with the
# runtime layout, and start the CLI from there. Needs network access to the npm registry (npm ci).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/freight-sync-image-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "build stage: npm run build"
(cd "$root" && npm run build >/dev/null)

echo "prod-deps stage: npm ci --omit=dev into $work"
cp "$root/package.json" "$root/package-lock.json" "$work/"
(cd "$work" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null && npm rebuild better-sqlite3 >/dev/null)

echo "runtime stage: copy dist, package.json, config/mappings"
cp -r "$root/dist" "$work/dist"
mkdir -p "$work/config" && cp -r "$root/config/mappings" "$work/config/mappings"

echo "smoke: --help, and a state DB opened with the production better-sqlite3"
(cd "$work" && NODE_ENV=production node dist/src/cli/bin.js --help >/dev/null)
(cd "$work" && node -e "const D=require('better-sqlite3'); const d=new D(':memory:'); d.prepare('select 1').get(); console.log('better-sqlite3 ok')")
# Dev dependencies must not be needed at run time (vitest, typescript, nock).
for dev in typescript vitest nock; do
  if [ -d "$work/node_modules/$dev" ]; then echo "dev dependency $dev found in the runtime node_modules" >&2; exit 1; fi
done
echo "ok: the image's build steps work"
