# syntax=docker/dockerfile:1
# freight-sync container image. Built and run by `npm run test:container` (scripts/test-container.sh,
# run by CI with podman): health, readiness, a sync into /data, HEALTHCHECK, SIGTERM drain, uid 1000,
# no dev dependency, size budget. See README "Container".
#
# Build arguments:
#   NODE_MAJOR  Node.js major of the base image node:<major>-bookworm-slim (default 22).
#   DRIVERS     optional drivers kept in the image, comma-separated, from postgres (pg), mysql (mysql2),
#               mssql (tedious, ~55 MB with its @azure/* dependencies), sftp (ssh2-sftp-client);
#               also `all` or `none`. Default: postgres,mysql,sftp. SQLite and the CSV drop are always in.
# podman builds OCI images by default, which have no HEALTHCHECK: build with `--format docker`.
ARG NODE_MAJOR=22

# ---- deps: every dependency, better-sqlite3 compiled (python3/make/g++) for this base image ----
FROM node:${NODE_MAJOR}-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` would compile before the sources are copied.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3

# ---- build: compile TypeScript (a source change rebuilds from here on, not the dependencies) ----
FROM deps AS build
# The image holds the daemon only: benchmarks (which use the test harness) are not built into it.
COPY tsconfig.json tsconfig.build.json tsconfig.image.json ./
COPY src ./src
COPY connectors ./connectors
RUN npx tsc -p tsconfig.image.json

# ---- prod-deps: the same node_modules without dev dependencies and without the drivers DRIVERS
# leaves out (npm prune after select-drivers.mjs removed them from package.json); better-sqlite3's
# sources and object files go too, its compiled module stays ----
FROM deps AS prod-deps
ARG DRIVERS=postgres,mysql,sftp
COPY scripts/select-drivers.mjs scripts/image-drivers.mjs ./scripts/
RUN node scripts/select-drivers.mjs "$DRIVERS" \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
      node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/build/Release/.deps \
      node_modules/better-sqlite3/build/Release/test_extension.node node_modules/better-sqlite3/build/deps

# ---- runtime-root: the base system minus what a running daemon never uses (npm, Node headers, apt
# lists, docs, man pages, locales); flattened into one layer below, so the removals save space ----
FROM node:${NODE_MAJOR}-bookworm-slim AS runtime-root
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/include /usr/local/share/doc /usr/local/share/man /opt/yarn* /usr/local/bin/yarn* \
      /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/log/* \
      /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* /usr/share/lintian /root/.npm /tmp/* \
 && mkdir -p /app /data /config \
 && chown node:node /data

# ---- runtime: no compilers, no npm, no dev dependencies, non-root ----
FROM scratch AS runtime
COPY --from=runtime-root / /
ARG NODE_MAJOR=22
ARG DRIVERS=postgres,mysql,sftp
LABEL org.opencontainers.image.title="freight-sync" \
      io.freight-sync.node-major="${NODE_MAJOR}" \
      io.freight-sync.drivers="${DRIVERS}"
# glibc's malloc, which a process can only tune from its environment at start (README "Memory"):
# MALLOC_ARENA_MAX: each allocating thread (V8's helpers, libuv's pool) gets its own arena, each
# resident at its own peak; two arenas took a 2x10^5-load backfill ~9 MiB lower. The two thresholds
# stop glibc raising its mmap threshold when V8 first frees a block of 1-2 MiB (its string table as
# it grows, a large compiler zone), after which such blocks come from the arenas and leave holes
# there: another ~5 MiB lower (bench/results-scaling.md, fourteenth session).
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    FREIGHT_SYNC_IN_CONTAINER=1 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=prod-deps /app/package.json ./
COPY --from=build /app/dist ./dist
# Default mappings are read at run time (findPackageRoot looks for package.json + config/mappings).
COPY config/mappings ./config/mappings
USER node
# /data: state DB and file drops (writable by uid 1000); /config: the mounted config file (read-only is fine).
VOLUME ["/data"]
# Ops server (/healthz, /readyz, /metrics) and webhook receiver; the config must listen on 0.0.0.0.
EXPOSE 9090 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.FREIGHT_SYNC_HTTP_PORT || '9090') + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The daemon drains on SIGTERM (the default stop signal) and exits 0.
STOPSIGNAL SIGTERM
# --max-semi-space-size=4: the young generation's cap (two 4 MiB semi-spaces). Node 22's V8 takes
# it only as a flag at start (src/cli/start-up-settings.ts); without it a 10^5-load backfill's
# young generation grew to 32 MiB, all resident (bench/results-scaling.md, fifteenth session).
# --no-maglev: where node is built with V8's Maglev compiler (a NODE_MAJOR=24 image), pages were
# still promoted under Maglev-compiled code, each costing full collections (bench/results-cpu.md);
# Node 22 has no Maglev and ignores the flag. With it here the daemon need not re-execute itself.
# FREIGHT_SYNC_SEMI_SPACE_MIB and FREIGHT_SYNC_MAGLEV do not apply to this image: change the flags
# with --entrypoint.
ENTRYPOINT ["node", "--max-semi-space-size=4", "--no-maglev", "dist/src/cli/bin.js"]
CMD ["run", "-c", "/config/freight-sync.yaml"]
