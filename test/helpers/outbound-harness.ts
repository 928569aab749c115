import path from 'node:path';
import type { AppContext } from '../../src/app/compose.js';
import { composeDryRun, composeOutbound, openApp } from '../../src/app/compose.js';
import { runPass } from '../../src/app/sync-pass.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import { runDryRun, type DryRunSummary } from '../../src/outbound/dry-run.js';
import type { NamedSource } from '../../src/outbound/intake.js';
import { runPush, type PushSummary } from '../../src/outbound/run-push.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { collectTruth, pullConfigRaw } from './pull-harness.js';

export interface OutboundConfigOptions {
  sim: SimulatorHandle;
  dir: string;
  outbound?: Record<string, unknown>;
  connectors?: Record<string, unknown>;
  rateLimit?: Record<string, unknown>;
  /** Merged into the `api` block (e.g. `requestEncoding`). */
  api?: Record<string, unknown>;
}

/** A config against the simulator with the customers/consignees streams (for ERP codes) and outbound on. */
export function outboundConfig(options: OutboundConfigOptions): FreightSyncConfig {
  return parseConfig(outboundConfigRaw(options), { source: 'test config', baseDir: options.dir });
}

/** The raw (unvalidated) config of `outboundConfig`, e.g. to write as a file for the CLI. */
export function outboundConfigRaw(options: OutboundConfigOptions): Record<string, unknown> {
  return pullConfigRaw({
    sim: options.sim,
    dir: options.dir,
    streams: ['customers', 'consignees', 'loads'],
    raw: {
      api: {
        variant: options.sim.options.variant,
        baseUrl: options.sim.baseUrl,
        auth: { clientId: options.sim.options.clientId, clientSecret: options.sim.options.clientSecret },
        rateLimit: { requestsPerSecond: 2000, maxInFlight: 8, adaptive: true, ...(options.rateLimit ?? {}) },
        retry: { maxAttempts: 12, baseDelay: 'PT0.02S', maxDelay: 'PT0.5S', maxElapsed: 'PT2M' },
        timeout: 'PT5S',
        ...(options.api ?? {}),
      },
      connectors: { out: { type: 'csv', options: { directory: path.join(options.dir, 'out') } }, ...(options.connectors ?? {}) },
      outbound: {
        enabled: true,
        sources: [],
        concurrency: 8,
        maxAttempts: 10,
        backoff: { base: 'PT0.05S', max: 'PT1S' },
        reconcileDelay: 'PT0.05S',
        ...(options.outbound ?? {}),
      },
    },
  });
}

export async function withApp<T>(config: FreightSyncConfig, dir: string, work: (app: AppContext) => Promise<T>): Promise<T> {
  const app = await openApp({ config, filePath: path.join(dir, 'test.yaml'), baseDir: dir }, { logger: silentLogger(), withConnectors: true });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

/** Pulls customers and consignees so ERP codes resolve (fills customer_directory). */
export async function syncDirectory(config: FreightSyncConfig, dir: string): Promise<void> {
  await withApp(config, dir, async (app) => {
    const only = { ...app, streams: app.streams.filter((s) => s.definition.name !== 'loads') };
    await runPass(only, { command: 'sync', signal: new AbortController().signal });
  });
}

export async function push(config: FreightSyncConfig, dir: string, sources: readonly NamedSource[] = [], maxWaitMs = 60_000): Promise<PushSummary> {
  return withApp(config, dir, (app) =>
    runPush(composeOutbound(app, { abortSignal: new AbortController().signal, extraSources: sources }), {
      stopSignal: new AbortController().signal,
      abortSignal: new AbortController().signal,
      maxWaitMs,
      settleMs: 300,
    }),
  );
}

/** `push --dry-run` as the CLI runs it: what a push would do, nothing sent, taken or stored. */
export async function dryRun(config: FreightSyncConfig, dir: string, sources: readonly NamedSource[] = []): Promise<DryRunSummary> {
  return withApp(config, dir, (app) => runDryRun(composeDryRun(app, { extraSources: sources }), new AbortController().signal));
}

/** The simulator's own records of loads whose secondaryReferenceNo is one of `keys`, counted per key. */
export async function loadsByErpKey(sim: SimulatorHandle, keys: Iterable<string>): Promise<Map<string, Array<Record<string, unknown>>>> {
  const wanted = new Set(keys);
  const out = new Map<string, Array<Record<string, unknown>>>();
  for (const load of await collectTruth(sim, 'loads')) {
    const key = load['secondaryReferenceNo'];
    if (typeof key === 'string' && wanted.has(key) && load['isDeleted'] !== true) out.set(key, [...(out.get(key) ?? []), load]);
  }
  return out;
}
