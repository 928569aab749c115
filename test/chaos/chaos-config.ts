import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { ChaosOptions } from './chaos-options.js';
import type { ChaosSink } from './chaos-sinks.js';
import type { ChaosStream } from './chaos-streams.js';

export interface ChaosConfigInput {
  options: ChaosOptions;
  sim: SimulatorHandle;
  dir: string;
  sinks: readonly ChaosSink[];
  streams: readonly ChaosStream[];
  inboxDir?: string;
  /** Name of the SQL connector that also hosts the staging table, if any. */
  stagingConnector?: string;
  opsPort: number;
}

/**
 * The daemon's config file, as an operator would write it: secrets as `${VAR}` (the values come
 * from the environment), every stream into every sink, outbound from the inbox folder and the
 * SQL staging table. The client's rate is deliberately above the server's limit, so 429s happen.
 */
export function writeChaosConfig(input: ChaosConfigInput): string {
  const { options, sim } = input;
  const sources = [...(input.inboxDir ? ['erp_inbox'] : []), ...(input.stagingConnector ? [input.stagingConnector] : [])];
  const connectors: Record<string, unknown> = Object.fromEntries(input.sinks.map((s) => [s.name, s.connector]));
  if (input.inboxDir) connectors['erp_inbox'] = { type: 'inbox', options: { dir: input.inboxDir } };
  const config = {
    api: {
      variant: options.variant,
      baseUrl: sim.baseUrl,
      auth: { clientId: sim.options.clientId, clientSecret: '${CHAOS_CLIENT_SECRET}' },
      rateLimit: { requestsPerSecond: Math.round(options.serverRps * 1.6), maxInFlight: 4, adaptive: true },
      retry: { maxAttempts: 12, baseDelay: 'PT0.05S', maxDelay: 'PT1S', maxElapsed: 'PT2M' },
      timeout: 'PT5S',
    },
    state: { path: path.join(input.dir, 'state.sqlite') },
    log: { level: options.logLevel, pretty: false },
    sync: {
      defaults: {
        // Every 2 seconds (node-cron's optional seconds field): many passes, so kills land everywhere.
        schedule: '*/2 * * * * *',
        lookback: 'PT1M',
        safetyLag: 'PT2S',
        initialFrom: sim.options.dataStart,
        maxWindow: 'P30D',
        minWindow: 'PT1S',
      },
      streams: Object.fromEntries(input.streams.map((s) => [s.stream, { enabled: true, sinks: input.sinks.map((k) => k.name) }])),
    },
    connectors,
    outbound: {
      enabled: sources.length > 0,
      sources,
      pollInterval: 'PT1S',
      concurrency: 4,
      maxAttempts: 30,
      backoff: { base: 'PT0.1S', max: 'PT2S' },
      reconcileDelay: 'PT0.2S',
    },
    http: { enabled: true, listen: `127.0.0.1:${input.opsPort}` },
  };
  const file = path.join(input.dir, 'freight-sync.yaml');
  fs.writeFileSync(file, stringify(config));
  return file;
}
