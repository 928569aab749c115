import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openApp, type AppContext } from '../src/app/compose.js';
import { runPass } from '../src/app/sync-pass.js';
import { parseConfig } from '../src/config/parse-config.js';
import type { StreamName } from '../src/config/stream-names.js';
import { startSimulator, type SimulatorHandle } from '../src/simulator/index.js';
import type { TruthResource } from '../src/simulator/truth.js';
import { streamsForVariant } from '../src/sync/streams/index.js';
import { silentLogger } from '../src/util/logger.js';
import { simulatorApiConfig } from './simulator-api-config.js';

/**
 * Steady-state request cost of every polled stream (issue 14, deliverable 6): after a first full
 * sync, the mutator changes the account over one schedule interval of server time (the clock is
 * advanced, never slept), then one incremental pass runs as the daemon runs it (`runPass`, product
 * defaults: lookback PT10M, safety lag PT30S, pages of 50, default mappings into CSV). Requests
 * are counted per stream by the SIMULATOR (its request counter around each stream's run), and
 * each stream's minimum comes from the simulator's truth, not from what the client fetched:
 * changes = records new or different between truth snapshots taken before and after the
 * interval; minimum = ceil(changes / 50) + 1 for a change feed (issue 14's formula: the pages of
 * the changes plus one answer saying the range is done), the pages of the whole list for a reference list read whole every run (no
 * change filter exists: floor(entries / 50) + 1 paged without a count, 1 unpaged). A second pass
 * one interval later with nothing changed has minimum 1 per stream (goal: at most minimum + 1).
 */
export interface StreamPassRow {
  variant: 'main' | 'brokerage';
  loads: number;
  pass: 'changes' | 'nothing changed';
  stream: StreamName;
  changes: number;
  requests: number;
  minimum: number;
}

const PAGE = 50;
/** One default schedule interval (`*\/5 * * * *`) of server time between passes. */
const INTERVAL_MS = 5 * 60_000;
const TICKS = 100;
/** Default safety lag plus a margin: the interval's last changes are inside the pass's range. */
const SETTLE_MS = 31_000;

/** Truth resource of each change-feed stream, and the key of its records. */
const FEEDS: Partial<Record<StreamName, TruthResource>> = {
  loads: 'loads',
  invoices: 'invoices',
  bills: 'bills',
  supportMoves: 'supportMoves',
  loadAudits: 'loadAudits',
  customerAudits: 'customerAudits',
  customers: 'customers',
  consignees: 'consignees',
  webhookEvents: 'webhookEvents',
};
/** Reference lists read whole every run: their truth resource and whether they are paged (no count). */
const WHOLE_LISTS: Partial<Record<StreamName, { resource?: TruthResource; paged: boolean }>> = {
  chargeCodes: { paged: false },
  loadDocumentTypes: { paged: false },
  customerDiscounts: { resource: 'customerDiscounts', paged: false },
  customerRates: { resource: 'customerRates', paged: true },
  customerDynamicRates: { resource: 'customerDynamicRates', paged: false },
};

function recordKey(record: Record<string, unknown>): string {
  for (const field of ['_id', 'reference_number', 'billId', 'supportMoveNumber', 'invoiceNumber']) {
    const value = record[field];
    if (value !== undefined && value !== null) return String(value);
  }
  return JSON.stringify(record);
}

/** Each record of a resource by key, with its whole content as the version (any change shows). */
async function snapshot(sim: SimulatorHandle, resource: TruthResource): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const record of sim.truth(resource)) out.set(recordKey(record), JSON.stringify(record));
  return out;
}

async function snapshots(sim: SimulatorHandle): Promise<Map<TruthResource, Map<string, string>>> {
  const out = new Map<TruthResource, Map<string, string>>();
  for (const resource of new Set(Object.values(FEEDS))) out.set(resource, await snapshot(sim, resource));
  return out;
}

function changed(before: Map<string, string>, after: Map<string, string>): number {
  let n = 0;
  for (const [key, version] of after) if (before.get(key) !== version) n += 1;
  return n;
}

async function liveEntries(sim: SimulatorHandle, resource: TruthResource): Promise<number> {
  let n = 0;
  for await (const record of sim.truth(resource)) if (record.isDeleted !== true) n += 1;
  return n;
}

export async function benchStreamPasses(options: { variant: 'main' | 'brokerage'; loads: number; stepsPerInterval: number; seed?: number }): Promise<StreamPassRow[]> {
  const { variant, loads } = options;
  const sim = await startSimulator({
    variant,
    loads,
    // The default simulator's proportions (200/200/1,000/500 at 5,000 loads).
    customers: Math.max(1, Math.round(loads / 25)),
    consignees: Math.max(1, Math.round(loads / 25)),
    bills: Math.round(loads / 5),
    supportMoves: Math.round(loads / 10),
    seed: options.seed ?? 14,
    clientId: 'bench',
    clientSecret: 'bench-secret',
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-passes-'));
  try {
    const names = streamsForVariant(variant)
      .filter((s) => !s.pushOnly && s.name !== 'documentFiles')
      .map((s) => s.name);
    const config = parseConfig(
      {
        api: simulatorApiConfig(sim, { requestsPerSecond: 2000, maxInFlight: 4 }),
        state: { path: path.join(dir, 'state.sqlite') },
        log: { level: 'silent' },
        // Product defaults for every window setting; only where the history starts is the simulator's.
        sync: { defaults: { initialFrom: sim.options.dataStart }, streams: Object.fromEntries(names.map((name) => [name, { sinks: ['out'] }])) },
        connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out') } } },
      },
      { source: 'bench config', baseDir: dir },
    );
    const app = await openApp({ config, filePath: path.join(dir, 'bench.yaml'), baseDir: dir }, { logger: silentLogger(), withConnectors: true });
    try {
      const seeClock = async () => {
        // The simulator's clock jumps; a daemon's moves with real time and every answer's Date
        // header keeps the client's estimate current. One uncounted call lets the client see it.
        await app.client.call({ method: 'GET', route: '/load-document-type', schema: z.unknown() });
      };
      const pass = async (): Promise<Map<StreamName, number>> => {
        await seeClock();
        const counts = new Map<StreamName, number>();
        for (const stream of app.streams) {
          const before = sim.stats().requests;
          const view: AppContext = { ...app, streams: [stream] };
          const [summary] = await runPass(view, { command: 'bench', signal: new AbortController().signal });
          if (summary && summary.status !== 'ok') throw new Error(`${stream.definition.name} pass failed: ${summary.error ?? summary.status}`);
          counts.set(stream.definition.name, sim.stats().requests - before);
        }
        return counts;
      };

      // First full sync of every stream, then one more pass so every checkpoint stands at the
      // server clock minus the safety lag (a stream's first range may end earlier than the others').
      await pass();
      sim.advance(SETTLE_MS);
      await pass();

      const rows: StreamPassRow[] = [];
      const before = await snapshots(sim);
      const perTick = options.stepsPerInterval / TICKS;
      let done = 0;
      for (let tick = 1; tick <= TICKS; tick += 1) {
        const due = Math.round(perTick * tick);
        if (due > done) await sim.mutate(due - done);
        done = due;
        sim.advance(INTERVAL_MS / TICKS);
      }
      sim.advance(SETTLE_MS);
      const after = await snapshots(sim);
      const counts = await pass();
      for (const [name, requests] of counts) {
        const feed = FEEDS[name];
        const list = WHOLE_LISTS[name];
        let changes = 0;
        let minimum = 1;
        if (feed) {
          changes = changed(before.get(feed)!, after.get(feed)!);
          // The minimum: the pages of the changes, plus one answer saying the range is done.
          minimum = Math.ceil(changes / PAGE) + 1;
        } else if (list?.paged && list.resource) {
          changes = await liveEntries(sim, list.resource);
          minimum = Math.floor(changes / PAGE) + 1;
        }
        rows.push({ variant, loads, pass: 'changes', stream: name, changes, requests, minimum });
      }

      // One interval later, nothing changed on the account.
      sim.advance(INTERVAL_MS);
      const idle = await pass();
      for (const [name, requests] of idle) {
        const list = WHOLE_LISTS[name];
        const entries = list?.paged && list.resource ? await liveEntries(sim, list.resource) : 0;
        rows.push({ variant, loads, pass: 'nothing changed', stream: name, changes: 0, requests, minimum: Math.floor(entries / PAGE) + 1 });
      }
      return rows;
    } finally {
      await app.close();
    }
  } finally {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
