import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApp, type AppContext } from '../../src/app/compose.js';
import { runPass } from '../../src/app/sync-pass.js';
import { parseConfig } from '../../src/config/parse-config.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import type { StreamRunSummary } from '../../src/sync/stream-runner.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';

export type SimOptions = Partial<SimulatorOptions>;

export async function startSim(options: SimOptions): Promise<SimulatorHandle> {
  return startSimulator({ clientId: 'test-client', clientSecret: 'test-client-secret-xyz', ...options });
}

/** The safety lag of `pullConfig` (sync.defaults.safetyLag). */
export const TEST_SAFETY_LAG_MS = 2_000;

/**
 * Makes every change the simulator has made so far old enough for the next pass, without sleeping.
 * A pass's window ends at the server clock minus the safety lag, and the client reads the server
 * clock from the `Date` header (one-second resolution): so the server clock is moved forward by the
 * lag plus 1.5 s (the header's second plus a margin). Stop the mutator first — changes made after
 * this call are stamped on the advanced clock and are too new again.
 */
export function ageChangesPastSafetyLag(sim: SimulatorHandle, safetyLagMs = TEST_SAFETY_LAG_MS): Date {
  return sim.advance(safetyLagMs + 1_500);
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `freight-sync-${prefix}-`));
}

export interface PullConfigOptions {
  sim: SimulatorHandle;
  dir: string;
  streams: string[];
  /** Deep-merged into the raw config before validation. */
  raw?: Record<string, unknown>;
  streamSettings?: Record<string, unknown>;
  csvOptions?: Record<string, unknown>;
}

/** A real config (validated like a file) pointing at the simulator, with a CSV sink in `dir/out`. */
export function pullConfig(options: PullConfigOptions): FreightSyncConfig {
  return parseConfig(pullConfigRaw(options), { source: 'test config', baseDir: options.dir });
}

/** The raw (unvalidated) config of `pullConfig`, e.g. to write as a file for the CLI. */
export function pullConfigRaw(options: PullConfigOptions): Record<string, unknown> {
  const raw: Record<string, any> = {
    api: {
      variant: options.sim.options.variant,
      baseUrl: options.sim.baseUrl,
      auth: { clientId: options.sim.options.clientId, clientSecret: options.sim.options.clientSecret },
      rateLimit: { requestsPerSecond: 2000, maxInFlight: 4, adaptive: true },
      retry: { maxAttempts: 12, baseDelay: 'PT0.02S', maxDelay: 'PT0.5S', maxElapsed: 'PT2M' },
      timeout: 'PT5S',
    },
    state: { path: path.join(options.dir, 'state.sqlite') },
    log: { level: 'silent' },
    sync: {
      defaults: {
        initialFrom: options.sim.options.dataStart,
        lookback: 'PT2M',
        safetyLag: `PT${TEST_SAFETY_LAG_MS / 1000}S`,
        maxWindow: 'P30D',
        minWindow: 'PT1S',
        ...(options.streamSettings ?? {}),
      },
      streams: Object.fromEntries(options.streams.map((s) => [s, { enabled: true, sinks: ['out'] }])),
    },
    connectors: { out: { type: 'csv', options: { directory: path.join(options.dir, 'out'), ...(options.csvOptions ?? {}) } } },
    ...(options.raw ?? {}),
  };
  return raw;
}

export async function withPullApp<T>(config: FreightSyncConfig, dir: string, work: (app: AppContext) => Promise<T>, logger: Logger = silentLogger()): Promise<T> {
  const app = await openApp({ config, filePath: path.join(dir, 'test.yaml'), baseDir: dir }, { logger, withConnectors: true });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

export async function syncOnce(config: FreightSyncConfig, dir: string, extra: { backfill?: { from: string; to: string }; signal?: AbortSignal } = {}): Promise<StreamRunSummary[]> {
  return withPullApp(config, dir, (app) =>
    runPass(app, { command: extra.backfill ? 'backfill' : 'sync', backfill: extra.backfill, signal: extra.signal ?? new AbortController().signal }),
  );
}

export { compareWithTruth, latestByKey, readCsvRows, type CsvRow, type TruthComparison } from '../../src/app/csv-drop-check.js';

/** `GET /loads/<ref>` answers the simulator gave so far. */
export function loadGets(sim: SimulatorHandle): number {
  return Object.values(sim.stats().byRoute['GET /loads/:ref'] ?? {}).reduce((n, c) => n + c, 0);
}

export async function collectTruth(sim: SimulatorHandle, resource: Parameters<SimulatorHandle['truth']>[0]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const record of sim.truth(resource)) out.push(record);
  return out;
}

/** A token pair from the simulator, as a user pastes one from the developer settings (§5). */
export async function issuePair(handle: SimulatorHandle): Promise<{ accessToken: string; refreshToken: string }> {
  const response = await fetch(`${handle.baseUrl}/retrieve-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: handle.options.clientId, clientSecret: handle.options.clientSecret }),
  });
  const issued = (await response.json()) as { data: { access_token: string; refresh_token: string } };
  return { accessToken: issued.data.access_token, refreshToken: issued.data.refresh_token };
}
