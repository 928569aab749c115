import path from 'node:path';
import type { Kysely } from 'kysely';
import { ApiClient } from '../api/api-client.js';
import type { LoadedConfig } from '../config/load-config.js';
import type { FreightSyncConfig } from '../config/types.js';
import { createConnectors, type ConnectorSet } from '../plugins/create-connectors.js';
import { CheckpointRepository } from '../state/checkpoint-repository.js';
import { openStateDatabase } from '../state/database.js';
import { migrateToLatest } from '../state/migrate.js';
import { RunHistory } from '../state/run-history.js';
import { SeenRecords } from '../state/seen-records.js';
import type { StateTables } from '../state/tables.js';
import { SqlTokenStore } from '../state/token-repository.js';
import { UsageError } from '../util/errors.js';
import { OpsMetrics } from '../ops/metrics.js';
import type { Logger } from '../util/logger.js';
import { SyncSideTables } from '../sync/side-tables.js';
import type { NamedSink, StreamRunDeps } from '../sync/stream-runner.js';
import { resolveStreams, type ResolvedStream } from './stream-settings.js';
import { streamsSentTo } from './validate-deployment.js';

/**
 * The composition root: everything a command needs, built in one place from the config, and
 * closed in reverse order of creation by `close()`.
 */
export interface AppContext {
  config: FreightSyncConfig;
  baseDir: string;
  logger: Logger;
  db: Kysely<StateTables>;
  client: ApiClient;
  checkpoints: CheckpointRepository;
  seen: SeenRecords;
  runs: RunHistory;
  side: SyncSideTables;
  streams: ResolvedStream[];
  connectors: ConnectorSet | undefined;
  deps: StreamRunDeps;
  /** Prometheus metrics on a dedicated registry (served by the ops server in `run`). */
  metrics: OpsMetrics;
  sinksFor(stream: ResolvedStream): NamedSink[];
  close(): Promise<void>;
}

export interface OpenAppOptions {
  logger: Logger;
  /** Create and init the sink connectors of the selected streams (not needed by `status`). */
  withConnectors: boolean;
  /** Limit to these streams (`--stream`). */
  streams?: readonly string[];
  /** Also create the outbound source connectors (default: when outbound is enabled). */
  withSources?: boolean;
  signal?: AbortSignal;
}

export async function openApp(loaded: LoadedConfig, options: OpenAppOptions): Promise<AppContext> {
  const { config } = loaded;
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        options.logger.warn({ err: error }, 'cleanup failed');
      }
    }
  };
  try {
    const streams = resolveStreams(config, options.streams);
    const db = openStateDatabase(config.state.path);
    cleanups.push(() => db.destroy());
    await migrateToLatest(db, { location: config.state.path });
    const metrics = new OpsMetrics();

    const client = new ApiClient({
      baseUrl: config.api.baseUrl,
      variant: config.api.variant,
      credentials: config.api.auth,
      tokenStore: new SqlTokenStore(db),
      logger: options.logger.child({ component: 'api' }),
      timeoutMs: config.api.timeout,
      refreshBeforeExpiryMs: config.api.refreshBeforeExpiry,
      rateLimit: config.api.rateLimit,
      retry: {
        maxAttempts: config.api.retry.maxAttempts,
        maxElapsedMs: config.api.retry.maxElapsed,
        baseDelayMs: config.api.retry.baseDelay,
        maxDelayMs: config.api.retry.maxDelay,
      },
      userAgent: config.api.userAgent,
      events: metrics.apiClientEvents(),
    });
    cleanups.push(() => client.close());

    let connectors: ConnectorSet | undefined;
    if (options.withConnectors) {
      const needed = new Set(streams.flatMap((s) => s.sinks));
      if (options.withSources ?? config.outbound.enabled) for (const name of config.outbound.sources) needed.add(name);
      const block = Object.fromEntries(Object.entries(config.connectors).filter(([name]) => needed.has(name)));
      connectors = await createConnectors(block, {
        baseDir: loaded.baseDir,
        logger: options.logger.child({ component: 'connectors' }),
        variant: config.api.variant,
        streamsFor: (name) => streams.filter((s) => s.sinks.includes(name)).map((s) => s.definition.name),
        mappableFor: (name) => streamsSentTo(config, name, { enabledOnly: false }),
        signal: options.signal,
      });
      const set = connectors;
      cleanups.push(() => set.close());
    }

    const checkpoints = new CheckpointRepository(db);
    const seen = new SeenRecords(db);
    const runs = new RunHistory(db);
    const side = new SyncSideTables(db);
    const deps: StreamRunDeps = { db, checkpoints, seen, runs, side, client, logger: options.logger };
    metrics.bind({
      db,
      checkpoints,
      streams: streams.filter((s) => !s.definition.pushOnly).map((s) => s.definition.name),
      now: () => client.clock.now(),
      apiStats: client.stats,
    });
    return {
      config,
      baseDir: loaded.baseDir,
      logger: options.logger,
      db,
      client,
      checkpoints,
      seen,
      runs,
      side,
      streams,
      connectors,
      deps,
      metrics,
      sinksFor(stream) {
        return stream.sinks.map((name) => {
          const handle = connectors?.get(name);
          const sink = handle?.instance.sink;
          if (!sink) throw new UsageError(`sync.streams.${stream.definition.name}.sinks: connector ${name} cannot receive records (no sink capability)`);
          return { name, sink: metrics.observeSink(stream.definition.name, name, sink) };
        });
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export function describeStatePath(config: FreightSyncConfig): string {
  return path.relative(process.cwd(), config.state.path) || config.state.path;
}
