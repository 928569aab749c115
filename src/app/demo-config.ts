import path from 'node:path';
import type { ApiVariant, FreightSyncConfig, StreamName } from '../config/types.js';
import { parseConfig } from '../config/parse-config.js';
import { streamsForVariant } from '../sync/streams/index.js';

export interface DemoConfigOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  variant: ApiVariant;
  /** Folder of the demo's state database. */
  stateDir: string;
  /** Folder the demo CSV connector writes to. */
  outputDir: string;
  /** Where streams without a checkpoint start (the simulator's first record). */
  initialFrom?: string;
}

export const DEMO_CONNECTOR = 'demo_csv';

/**
 * Every polled stream the variant has, taken from the stream definitions (bills, support moves,
 * audits and charge codes are main-only, §4); push-only streams need webhooks, which the demo
 * does not configure.
 */
function demoStreams(variant: ApiVariant): StreamName[] {
  return streamsForVariant(variant)
    .filter((stream) => stream.cursorKind !== 'webhook push')
    .map((stream) => stream.name);
}

/**
 * The config of `npm run demo`, built in code against the simulator. It goes through the same
 * validation as a file, so the demo cannot drift from what the schema accepts.
 */
export function demoConfig(options: DemoConfigOptions): FreightSyncConfig {
  const streams = Object.fromEntries(
    demoStreams(options.variant).map((name) => [
      name,
      // Document files are stored through the same folder connector (`documents/<sha256>.<ext>`).
      { enabled: true, sinks: [DEMO_CONNECTOR], ...(name === 'documentFiles' ? { options: { filesTo: DEMO_CONNECTOR } } : {}) },
    ]),
  );
  const raw = {
    api: {
      variant: options.variant,
      baseUrl: options.baseUrl,
      auth: { clientId: options.clientId, clientSecret: options.clientSecret },
      // The simulator runs on loopback without a rate limit: no need to pace at production rates.
      rateLimit: { requestsPerSecond: 200, maxInFlight: 4 },
    },
    state: { path: path.resolve(options.stateDir, 'freight-sync.sqlite') },
    log: { level: 'info', pretty: 'auto' },
    sync: {
      // Every minute, so a demo run shows progress quickly.
      // Short lag and lookback: the demo runs against a local simulator within a minute.
      defaults: {
        schedule: '*/1 * * * *',
        pageSize: 50,
        safetyLag: 'PT2S',
        lookback: 'PT1M',
        minWindow: 'PT1S',
        maxWindow: 'P30D',
        ...(options.initialFrom ? { initialFrom: options.initialFrom } : {}),
      },
      streams,
    },
    connectors: {
      [DEMO_CONNECTOR]: { type: 'csv', options: { directory: path.resolve(options.outputDir) } },
    },
  };
  return parseConfig(raw, { source: 'demo config', baseDir: options.stateDir });
}
