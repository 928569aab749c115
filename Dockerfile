# syntax=docker/dockerfile:1
# freight-sync container image. NOT BUILT OR RUN in the development environment (no Docker
# engine there); scripts/docker-build-check.sh performs the same build steps as plain commands.

# ---- build: compile TypeScript (dev dependencies, python3/make/g++ for better-sqlite3) ----
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` would compile before the sources are copied.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY connectors ./connectors
COPY bench ./bench
RUN npm run build

# ---- prod-deps: production dependencies only, native module compiled for this base image ----
FROM node:20-bookworm-slim AS prod-deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3 && npm cache clean --force

# ---- runtime: no compilers, no dev dependencies, non-root ----
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    FREIGHT_SYNC_IN_CONTAINER=1
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Default mappings are read at run time (findPackageRoot looks for package.json + config/mappings).
COPY config/mappings ./config/mappings
# /data: state DB and file drops; /config: the mounted config file (read-only is fine).
RUN mkdir -p /data /config && chown -R node:node /data
USER node
VOLUME ["/data"]
# Ops server (/healthz, /readyz, /metrics) and webhook receiver; the config must listen on 0.0.0.0.
EXPOSE 9090 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.FREIGHT_SYNC_HTTP_PORT || '9090') + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/cli/bin.js"]
CMD ["run", "-c", "/config/freight-sync.yaml"]
