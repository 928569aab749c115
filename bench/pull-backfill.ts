import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/index.js';
import { simulatorApiConfig } from './simulator-api-config.js';
import { SLIM_LOADS_MAPPING } from './loads-backfill-app.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../src/cli/bin.js');

export interface BackfillBenchResult {
  loads: number;
  sink: string;
  mapping: 'default' | 'slim';
  seconds: number;
  recordsPerSecond: number;
  requests: number;
  /** Requests per record divided by the minimum (one request per full page). */
  requestsPerRecordRatio: number;
  rateLimited: number;
  share429: number;
  achievedRequestsPerSecond: number;
  peakRssMiB: number;
  delivered: number;
}

/**
 * A `freight-sync backfill` of the loads stream as a child process (so its peak RSS is its own)
 * against an in-process simulator on loopback.
 */
export async function benchBackfill(options: {
  loads: number;
  sink: 'csv' | 'null';
  /** `default`: the loads mapping users run (with `_raw`); `slim`: 5 columns, the engine's own cost. */
  mapping?: 'default' | 'slim';
  rateLimit?: number;
  clientRate?: number;
  /** Node flags for the child, before the CLI's path (as the container image's entrypoint gives them). */
  nodeFlags?: string[];
}): Promise<BackfillBenchResult> {
  const sim = await startSimulator({
    variant: 'main',
    seed: 99,
    loads: options.loads,
    rateLimit: options.rateLimit ? { requestsPerSecond: options.rateLimit, burst: options.rateLimit } : null,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-'));
  try {
    const connectors =
      options.sink === 'null'
        ? { out: { module: path.resolve(here, 'null-sink.js') } }
        : {
            out: {
              type: 'csv',
              options: { directory: path.join(dir, 'out') },
              // The slim mapping measures the engine; the default one what users run.
              ...(options.mapping === 'default' ? {} : { mappings: { loads: SLIM_LOADS_MAPPING } }),
            },
          };
    const configFile = path.join(dir, 'bench.yaml');
    fs.writeFileSync(
      configFile,
      stringify({
        api: simulatorApiConfig(sim, { requestsPerSecond: options.clientRate ?? 100_000, maxInFlight: 1 }),
        state: { path: path.join(dir, 'state.sqlite') },
        log: { level: 'warn', pretty: false },
        sync: { defaults: { initialFrom: sim.options.dataStart, safetyLag: 'PT2S' }, streams: { loads: { enabled: true, sinks: ['out'] } } },
        connectors,
      }),
    );
    sim.resetStats();
    const to = new Date(sim.now().getTime() - 5000).toISOString();
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), CLI, 'backfill', '--from', sim.options.dataStart, '--to', to, '-c', configFile], {
      env: { ...process.env, FREIGHT_SYNC_REPORT_RSS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (code !== 0) throw new Error(`backfill exited ${code}: ${stderr.slice(-2000)}`);
    const rss = /peak-rss-kib=(\d+)/.exec(stderr);
    const delivered = Number(/loads\s+ok\s+(\d+)/.exec(stdout)?.[1] ?? NaN);
    const stats = sim.stats();
    const minimum = Math.ceil(options.loads / 50);
    return {
      loads: options.loads,
      sink: options.sink,
      mapping: options.mapping ?? 'slim',
      seconds,
      recordsPerSecond: options.loads / seconds,
      requests: stats.requests,
      requestsPerRecordRatio: stats.requests / minimum,
      rateLimited: stats.rateLimited,
      share429: stats.rateLimited / Math.max(1, stats.requests),
      achievedRequestsPerSecond: stats.requests / seconds,
      peakRssMiB: rss ? Number(rss[1]) / 1024 : NaN,
      delivered,
    };
  } finally {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
