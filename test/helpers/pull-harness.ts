import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { openApp, type AppContext } from '../../src/app/app-context.js';
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
        safetyLag: 'PT2S',
        maxWindow: 'P30D',
        minWindow: 'PT1S',
        ...(options.streamSettings ?? {}),
      },
      streams: Object.fromEntries(options.streams.map((s) => [s, { enabled: true, sinks: ['out'] }])),
    },
    connectors: { out: { type: 'csv', options: { directory: path.join(options.dir, 'out'), ...(options.csvOptions ?? {}) } } },
    ...(options.raw ?? {}),
  };
  return parseConfig(raw, { source: 'test config', baseDir: options.dir });
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

export type CsvRow = Record<string, string>;

/** Every data file of a table (not markers, not error files), rows in file order. */
export function readCsvRows(outDir: string, table: string): CsvRow[] {
  if (!fs.existsSync(outDir)) return [];
  const rows: CsvRow[] = [];
  for (const name of fs.readdirSync(outDir).sort()) {
    if (!name.startsWith(`${table}__`) || !name.endsWith('.csv') || name.endsWith('.errors.csv')) continue;
    const text = fs.readFileSync(path.join(outDir, name), 'utf8').replace(/^\uFEFF/, '');
    rows.push(...(parse(text, { columns: true, skip_empty_lines: true }) as CsvRow[]));
  }
  return rows;
}

/**
 * The CSV drop read as an ERP would: the latest version of each key (by the record's updatedAt,
 * then by when it was synced).
 */
export function latestByKey(rows: CsvRow[], keyColumn = 'record_key'): Map<string, CsvRow> {
  const latest = new Map<string, CsvRow>();
  for (const row of rows) {
    const key = row[keyColumn]!;
    const current = latest.get(key);
    if (!current || compareVersion(row, current) >= 0) latest.set(key, row);
  }
  return latest;
}

function compareVersion(a: CsvRow, b: CsvRow): number {
  const au = Date.parse(a._updated_at ?? '') || 0;
  const bu = Date.parse(b._updated_at ?? '') || 0;
  if (au !== bu) return au - bu;
  return (Date.parse(a._synced_at ?? '') || 0) - (Date.parse(b._synced_at ?? '') || 0);
}

export async function collectTruth(sim: SimulatorHandle, resource: Parameters<SimulatorHandle['truth']>[0]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const record of sim.truth(resource)) out.push(record);
  return out;
}

export interface Comparison {
  truth: number;
  missing: string[];
  stale: string[];
  wrongOp: string[];
  phantom: string[];
}

/** Compares the sink's latest versions with the server's truth: missing, stale, wrong tombstone state. */
export function compareWithTruth(
  truth: Record<string, unknown>[],
  latest: Map<string, CsvRow>,
  key: (r: Record<string, unknown>) => string,
  isDeleted: (r: Record<string, unknown>) => boolean = (r) => r.isDeleted === true,
): Comparison {
  const result: Comparison = { truth: truth.length, missing: [], stale: [], wrongOp: [], phantom: [] };
  const keys = new Set<string>();
  for (const record of truth) {
    const k = key(record);
    keys.add(k);
    const row = latest.get(k);
    if (!row) {
      result.missing.push(k);
      continue;
    }
    const truthUpdated = Date.parse(String(record.updatedAt ?? ''));
    if (!Number.isNaN(truthUpdated) && Date.parse(row._updated_at ?? '') !== truthUpdated) result.stale.push(k);
    if ((row._op === 'delete') !== isDeleted(record)) result.wrongOp.push(k);
  }
  for (const k of latest.keys()) if (!keys.has(k)) result.phantom.push(k);
  return result;
}
