import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { dayCursorSchema } from '../../src/sync/strategies/day-window.js';
import type { StreamRunSummary } from '../../src/sync/stream-runner.js';
import {
  ageChangesPastSafetyLag,
  collectTruth,
  compareWithTruth,
  latestByKey,
  pullConfig,
  readCsvRows,
  startSim,
  syncOnce,
  tempDir,
  withPullApp,
} from '../helpers/pull-harness.js';

/**
 * Issue 15, deliverable 0: the brokerage pull against a simulator whose `updatedFrom/updatedTo`
 * are day-granular (a 1-minute window answers the whole day), with the mutator changing records
 * every 200 ms. A backfill and the `sync` after it (both while records change) exit 0; after the
 * mutator stops, one more `sync` and the CSV drop equals the server's truth. Requests are held to
 * 1.5× the minimum a day-granular reader needs:
 *
 *   minimum = Σ over the UTC days the run had to read: ceil(records updated that day / 50) + 1
 *
 * (page size 50; the `+ 1` per day is the confirming short page; "records" counted on the truth
 * at the end of the run). The figures are printed.
 */
const DAY = 86_400_000;
const PAGE = 50;

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const dayOf = (value: unknown) => String(value).slice(0, 10);

/** Σ over the days from `fromDay` to `toDay` of ceil(records updated that day / 50) + 1. */
function minimumRequests(truth: Record<string, unknown>[], fromDay: string, toDay: string): { records: number; days: number; minimum: number } {
  const perDay = new Map<string, number>();
  for (const record of truth) {
    const day = dayOf(record.updatedAt);
    if (day >= fromDay && day <= toDay) perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  let records = 0;
  let minimum = 0;
  for (const n of perDay.values()) {
    records += n;
    minimum += Math.ceil(n / PAGE) + 1;
  }
  return { records, days: perDay.size, minimum };
}

function listRequests(sim: SimulatorHandle, route: string): number {
  return Object.values(sim.stats().byRoute[route] ?? {}).reduce((a, b) => a + b, 0);
}

interface Phase {
  phase: string;
  requests: number;
  records: number;
  days: number;
  minimum: number;
  ratio: number;
  /** ceil(records / 50) + 1: what one window over every day would cost at the least. */
  floor: number;
}

/** Runs one pass, counts the list requests it made, and the minimum for the days it had to read. */
async function measured(
  phase: string,
  s: SimulatorHandle,
  route: string,
  resource: 'loads' | 'customers' | 'consignees',
  fromDay: string,
  run: () => Promise<StreamRunSummary[]>,
): Promise<{ summaries: StreamRunSummary[]; figures: Phase }> {
  s.resetStats();
  const summaries = await run();
  const requests = listRequests(s, route);
  const { records, days, minimum } = minimumRequests(await collectTruth(s, resource), fromDay, dayOf(s.now().toISOString()));
  const floor = Math.ceil(records / PAGE) + 1;
  return { summaries, figures: { phase, requests, records, days, minimum, ratio: Number((requests / minimum).toFixed(3)), floor } };
}

/** The day the next incremental pass of `stream` starts at: its high-water minus the lookback (2 min in pullConfig). */
async function nextPassFromDay(config: Parameters<typeof withPullApp>[0], dir: string, stream: string): Promise<string> {
  const cursor = await withPullApp(config, dir, (app) => app.stores.checkpoints.get(stream, dayCursorSchema));
  expect(cursor?.window ?? null).toBeNull();
  return dayOf(new Date(Date.parse(cursor!.highWater!) - 120_000).toISOString());
}

async function scenario(
  resource: 'loads' | 'customers' | 'consignees',
  streams: string[],
  route: string,
  simOptions: Record<string, unknown>,
  streamSettings: Record<string, unknown> = {},
) {
  sim = await startSim({
    variant: 'brokerage',
    seed: 15,
    dataStart: new Date(Date.now() - 14 * DAY).toISOString(),
    mutator: { enabled: true, intervalMs: 200, perTick: 5 },
    ...simOptions,
  });
  const s = sim;
  const dir = tempDir(`pull-brokerage-days-${resource}`);
  const config = pullConfig({ sim: s, dir, streams, streamSettings });
  const figures: Phase[] = [];
  const expectOk = (summaries: StreamRunSummary[]) => {
    for (const summary of summaries) expect(summary.status, `${summary.stream}: ${summary.error ?? ''}`).toBe('ok');
  };

  const backfill = await measured('backfill (mutating)', s, route, resource, dayOf(s.options.dataStart), () =>
    syncOnce(config, dir, { backfill: { from: s.options.dataStart, to: new Date(s.now().getTime() + 60_000).toISOString() } }),
  );
  expectOk(backfill.summaries);
  figures.push(backfill.figures);

  const mutating = await measured('sync (mutating)', s, route, resource, await nextPassFromDay(config, dir, streams[0]!), () => syncOnce(config, dir));
  expectOk(mutating.summaries);
  figures.push(mutating.figures);

  s.configure({ mutator: { enabled: false, intervalMs: 200, perTick: 5 } });
  ageChangesPastSafetyLag(s);
  const final = await measured('sync (after the mutator stopped)', s, route, resource, await nextPassFromDay(config, dir, streams[0]!), () => syncOnce(config, dir));
  expectOk(final.summaries);
  figures.push(final.figures);
  console.log(`brokerage ${resource}, day-granular filters, page size ${PAGE}, ${JSON.stringify(streamSettings)}:\n${figures.map((f) => `  ${JSON.stringify(f)}`).join('\n')}`);
  return { dir, figures, sim: s };
}

async function expectTruth(s: SimulatorHandle, dir: string, resource: 'loads' | 'customers' | 'consignees', key: (r: Record<string, unknown>) => string) {
  const truth = await collectTruth(s, resource);
  const cmp = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), resource)), key);
  expect({ resource, missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length, phantom: cmp.phantom.length }).toEqual({
    resource,
    missing: 0,
    stale: 0,
    wrongOp: 0,
    phantom: 0,
  });
  return truth;
}

describe('brokerage pull with day-granular filters, records changing every 200 ms', () => {
  // P30D: sparse days merge, and the first window of the backfill holds every day (a record
  // updated onto today stays in it). P1D: one day per window, so records leave the past day being
  // read for today — the departures the pager must notice.
  it.each(['P30D', 'P1D'])('loads (maxWindow %s): a 5,000-load backfill and the syncs after it exit 0, equal the truth, within 1.5× the minimum requests', async (maxWindow) => {
    const { dir, figures, sim: s } = await scenario('loads', ['loads'], 'GET /loads', { loads: 5000 }, { maxWindow });
    const truth = await expectTruth(s, dir, 'loads', (r) => String(r.reference_number));
    // The scenario really is day-granular and busy: days of far more than a page, deletes, changes.
    expect(truth.filter((r) => r.isDeleted === true).length).toBeGreaterThan(0);
    expect(figures[0]!.records / figures[0]!.days).toBeGreaterThan(3 * PAGE);
    for (const f of figures) expect(f.ratio, f.phase).toBeLessThanOrEqual(1.5);
  });

  it('customers and consignees: backfill and syncs exit 0, equal the truth (tombstones included), within 1.5× the minimum', async () => {
    // Few records per day: every day-granular reader pays its +1 per day; more per day than a page
    // would need a larger account than the mutator changes in a short test.
    for (const [resource, route] of [['customers', 'GET /customer'], ['consignees', 'GET /consignee']] as const) {
      const { dir, figures, sim: s } = await scenario(resource, [resource], route, { loads: 200, customers: 1500, consignees: 1500 });
      await expectTruth(s, dir, resource, (r) => String(r._id));
      for (const f of figures) expect(f.ratio, `${resource} ${f.phase}`).toBeLessThanOrEqual(1.5);
      await s.close();
    }
  });
});
