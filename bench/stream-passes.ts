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
 * Steady-state request cost of every polled stream (issue 14, deliverable 6). After a first full
 * sync, the mutator changes the account over one schedule interval of server time (the clock is
 * advanced, never slept) and a pass runs; then again over a second interval, and the pass after it
 * is measured — so its lookback holds the previous interval's changes, as in a running daemon.
 * Three more passes follow, 5 minutes apart, with nothing changing. Passes run as the daemon runs
 * them (`runPass`, product defaults: lookback PT10M, safety lag PT30S, pages of 50, default
 * mappings into CSV). Requests are counted per stream by the SIMULATOR (its request counter
 * around each stream's run), and each stream's figures come from the simulator's truth, not from
 * what the client fetched:
 * - changes: records new or different between truth snapshots before and after the interval;
 * - minimum: ceil(changes / 50) + 1 for a change feed (issue 14's formula: the pages of the
 *   changes plus one answer saying the range is done; 1 when nothing changed); for a reference
 *   list read whole every run (no change filter exists) the pages of the whole list:
 *   floor(entries / 50) + 1 paged without a count, 1 unpaged;
 * - lookback re-read: unchanged records timed within [checkpoint − lookback, checkpoint], which
 *   the stream's lookback reads again; floor = ceil((changes + re-read) / 50) + 1.
 */
export interface StreamPassRow {
  variant: 'main' | 'brokerage';
  loads: number;
  pass: 'changes' | 'nothing changed, 5 min' | 'nothing changed, 10 min' | 'nothing changed, 15 min';
  stream: StreamName;
  changes: number;
  /** Records already delivered that the lookback reads again: unchanged, timed within the lookback before the checkpoint. */
  reread: number;
  requests: number;
  /** Issue 14's minimum: ceil(changes / 50) + 1 (1 when nothing changed). */
  minimum: number;
  /** The least this stream's settings allow: the minimum counting the lookback's records too. */
  floor: number;
}

const PAGE = 50;
/** One default schedule interval (`*\/5 * * * *`) of server time between passes. */
const INTERVAL_MS = 5 * 60_000;
const TICKS = 100;
const SAFETY_LAG_MS = 30_000;
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
/**
 * Feeds read without the lookback in incremental passes (append-only logs, window-plan.ts
 * `incrementalWithoutLookback`; invoices have their own rules and are informational here).
 */
const NO_LOOKBACK = new Set<StreamName>(['webhookEvents', 'loadAudits', 'customerAudits', 'invoices']);
/** Brokerage feeds read by whole UTC days (strategies/day-window.ts). */
const DAY_WINDOWS = new Set<StreamName>(['loads', 'customers', 'consignees']);
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

/** A record's whole content (any change shows) and the time its stream windows on. */
interface Version {
  content: string;
  timeMs: number;
}
type Snapshot = Map<string, Version>;

/** Audits and the event log are windowed on createdAt, the other feeds on updatedAt. */
const byCreatedAt = new Set<TruthResource>(['loadAudits', 'customerAudits', 'webhookEvents']);

async function snapshot(sim: SimulatorHandle, resource: TruthResource): Promise<Snapshot> {
  const out: Snapshot = new Map();
  const field = byCreatedAt.has(resource) ? 'createdAt' : 'updatedAt';
  for await (const record of sim.truth(resource)) out.set(recordKey(record), { content: JSON.stringify(record), timeMs: Date.parse(String(record[field])) });
  return out;
}

async function snapshots(sim: SimulatorHandle): Promise<Map<TruthResource, Snapshot>> {
  const out = new Map<TruthResource, Snapshot>();
  for (const resource of new Set(Object.values(FEEDS))) out.set(resource, await snapshot(sim, resource));
  return out;
}

function changed(before: Snapshot, after: Snapshot): number {
  let n = 0;
  for (const [key, version] of after) if (before.get(key)?.content !== version.content) n += 1;
  return n;
}

/** Records whose time lies in [fromMs, toMs]: what a range re-reads there. */
function within(records: Snapshot, fromMs: number, toMs: number): number {
  let n = 0;
  for (const { timeMs } of records.values()) if (timeMs >= fromMs && timeMs <= toMs) n += 1;
  return n;
}

/** `steps` mutator steps spread over one interval of server time, then the safety lag. */
async function mutateOverInterval(sim: SimulatorHandle, steps: number): Promise<void> {
  const perTick = steps / TICKS;
  let done = 0;
  for (let tick = 1; tick <= TICKS; tick += 1) {
    const due = Math.round(perTick * tick);
    if (due > done) await sim.mutate(due - done);
    done = due;
    sim.advance(INTERVAL_MS / TICKS);
  }
  sim.advance(SETTLE_MS);
}

async function liveEntries(sim: SimulatorHandle, resource: TruthResource): Promise<number> {
  let n = 0;
  for await (const record of sim.truth(resource)) if (record.isDeleted !== true) n += 1;
  return n;
}

/**
 * Window settings other than the product defaults, for every stream: e.g. `lateWriteCover: lag`
 * (the lookback moved into the safety lag) — the same cover for late writes, each record read once.
 * Changes are then counted as what each pass's range holds: records whose time lies after the
 * previous pass's checkpoint and up to this one's (the range is no longer the last interval).
 */
export interface PassWindow {
  /** `sync.defaults` settings, as in a config file. */
  readonly settings: Record<string, string>;
  /** How far behind the server clock each range ends with them. */
  readonly safetyLagMs: number;
}

export async function benchStreamPasses(options: { variant: 'main' | 'brokerage'; loads: number; stepsPerInterval: number; seed?: number; window?: PassWindow }): Promise<StreamPassRow[]> {
  const { variant, loads, window } = options;
  const safetyLagMs = window?.safetyLagMs ?? SAFETY_LAG_MS;
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
        sync: {
          defaults: { initialFrom: sim.options.dataStart, ...(window?.settings ?? {}) },
          streams: Object.fromEntries(names.map((name) => [name, { sinks: ['out'] }])),
        },
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
      // BENCH_PASSES_TRACE=loads,bills prints those streams' requests (route and query) to stderr.
      const traced = new Set((process.env['BENCH_PASSES_TRACE'] ?? '').split(',').filter(Boolean));
      let current = '';
      if (traced.size > 0) {
        const call = app.client.call.bind(app.client);
        app.client.call = ((spec: Parameters<typeof call>[0]) => {
          if (traced.has(current)) process.stderr.write(`  ${current} ${spec.route} ${JSON.stringify(spec.query ?? {})}\n`);
          return call(spec);
        }) as typeof call;
      }
      let passNo = 0;
      let lastPassAt = 0;
      const pass = async (): Promise<Map<StreamName, number>> => {
        await seeClock();
        lastPassAt = sim.now().getTime();
        passNo += 1;
        if (traced.size > 0) process.stderr.write(`pass ${passNo} at ${sim.now().toISOString()}\n`);
        const counts = new Map<StreamName, number>();
        for (const stream of app.streams) {
          current = stream.definition.name;
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

      // Steady state: one interval of changes and its pass (not counted) before the measured one,
      // so the measured pass's lookback holds the previous interval's changes, as in a daemon.
      await mutateOverInterval(sim, options.stepsPerInterval);
      await pass();
      // Other window settings (a long lag): more intervals, so the measured pass's range holds an
      // interval of changes. The defaults' passes stay as they were.
      for (let lagged = 0; window && lagged < Math.ceil(safetyLagMs / INTERVAL_MS); lagged += 1) {
        await mutateOverInterval(sim, options.stepsPerInterval);
        await pass();
      }
      const before = await snapshots(sim);
      await mutateOverInterval(sim, options.stepsPerInterval);
      const after = await snapshots(sim);

      const rows: StreamPassRow[] = [];
      const record = async (label: StreamPassRow['pass'], changesFrom: Map<TruthResource, Snapshot> | null) => {
        const previousPassAt = lastPassAt;
        const counts = await pass();
        // With other window settings: what this pass's range (checkpoint, new checkpoint] holds now.
        const inRange = window ? await snapshots(sim) : undefined;
        for (const [name, requests] of counts) {
          // The checkpoint the previous pass left: its server time minus the range's lag — the
          // safety lag alone for the append-only logs, which no lookback or lag's cover applies to.
          const lagMs = NO_LOOKBACK.has(name) ? SAFETY_LAG_MS : safetyLagMs;
          const checkpointMs = previousPassAt - lagMs;
          const newCheckpointMs = lastPassAt - lagMs;
          const feed = FEEDS[name];
          const list = WHOLE_LISTS[name];
          const lookbackMs = config.sync.streams[name]?.lookback ?? 0;
          let changes = 0;
          let reread = 0;
          let minimum = 1;
          if (feed && inRange) {
            changes = within(inRange.get(feed)!, checkpointMs + 1, newCheckpointMs);
            minimum = Math.ceil(changes / PAGE) + 1;
          } else if (feed) {
            changes = changesFrom ? changed(changesFrom.get(feed)!, after.get(feed)!) : 0;
            // Unchanged records in [checkpoint − lookback, checkpoint]: delivered before, read again.
            // Brokerage day windows start at 00:00Z of that day (its filters are dates).
            if (!NO_LOOKBACK.has(name) && lookbackMs > 0) {
              const fromMs = checkpointMs - lookbackMs;
              reread = within(after.get(feed)!, variant === 'brokerage' && DAY_WINDOWS.has(name) ? fromMs - (fromMs % 86_400_000) : fromMs, checkpointMs);
            }
            // The minimum: the pages of the changes, plus one answer saying the range is done.
            minimum = Math.ceil(changes / PAGE) + 1;
          } else if (list?.paged && list.resource) {
            changes = await liveEntries(sim, list.resource);
            minimum = Math.floor(changes / PAGE) + 1;
          }
          const floor = reread > 0 ? Math.ceil((changes + reread) / PAGE) + 1 : minimum;
          rows.push({ variant, loads, pass: label, stream: name, changes: list ? (list.paged ? changes : 0) : changes, reread, requests, minimum, floor });
        }
      };
      await record('changes', before);
      // Then nothing changes on the account: a pass every interval. The first two still re-read
      // the last interval's changes (the lookback reaches 10 minutes before the checkpoint, which
      // is 30 s before the previous pass); the third is past them.
      for (const label of ['nothing changed, 5 min', 'nothing changed, 10 min', 'nothing changed, 15 min'] as const) {
        sim.advance(INTERVAL_MS);
        await record(label, null);
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
