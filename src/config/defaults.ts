import path from 'node:path';
import type { ApiVariant, FreightSyncConfig, StreamName } from './types.js';
import { parseConfig } from './parse-config.js';

export interface DemoConfigOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  variant: ApiVariant;
  /** Folder of the demo's state database. */
  stateDir: string;
  /** Folder the demo CSV connector writes to. */
  outputDir: string;
}

export const DEMO_CONNECTOR = 'demo_csv';

/** Streams each variant serves (bills, support moves, audits, charge codes are main-only, §4). */
const DEMO_STREAMS: Record<ApiVariant, StreamName[]> = {
  main: ['loads', 'invoices', 'bills', 'supportMoves', 'customers', 'consignees', 'webhookEvents', 'chargeCodes'],
  brokerage: ['loads', 'invoices', 'customers', 'consignees', 'webhookEvents'],
};

/**
 * The config of `npm run demo`, built in code against the simulator. It goes through the same
 * validation as a file, so the demo cannot drift from what the schema accepts.
 */
export function demoConfig(options: DemoConfigOptions): FreightSyncConfig {
  const streams = Object.fromEntries(
    DEMO_STREAMS[options.variant].map((name) => [name, { enabled: true, sinks: [DEMO_CONNECTOR] }]),
  );
  const raw = {
    api: {
      variant: options.variant,
      baseUrl: options.baseUrl,
      auth: { clientId: options.clientId, clientSecret: options.clientSecret },
    },
    state: { path: path.resolve(options.stateDir, 'freight-sync.sqlite') },
    log: { level: 'info', pretty: 'auto' },
    sync: {
      // Every minute, so a demo run shows progress quickly.
      defaults: { schedule: '*/1 * * * *', pageSize: 50 },
      streams,
    },
    connectors: {
      [DEMO_CONNECTOR]: { type: 'csv', options: { directory: path.resolve(options.outputDir) } },
    },
  };
  return parseConfig(raw, { source: 'demo config', baseDir: options.stateDir });
}
