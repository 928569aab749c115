import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { collectTruth, compareWithTruth, latestByKey, loadGets, pullConfig, pullConfigRaw, readCsvRows, startSim, tempDir, withPullApp } from '../helpers/pull-harness.js';
import { composeWebhookProcessor } from '../../src/app/compose-webhooks.js';

const SECRET = 'whsec-burst-test-0c7d51';
const LOADS = 20;
const EVENTS_PER_LOAD = 30;

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not met within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `events` load events per load, interleaved as a burst arrives (load 1, 2, …, 20, 1, 2, …). */
function burst(loads: Array<Record<string, unknown>>, perLoad: number, receivedAt: string): InboxEntry[] {
  const entries: InboxEntry[] = [];
  for (let round = 0; round < perLoad; round++) {
    for (const load of loads) {
      const ref = String(load.reference_number);
      const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: ref, _id: load._id, changedValues: { officeNote: `burst ${round}` } });
      entries.push({ key: `burst:${ref}:${round}`, eventType: 'load#info_updated', family: 'load', referenceNumber: ref, body, source: 'delivery', occurredAt: null, receivedAt });
    }
  }
  return entries;
}

/**
 * A burst of many events for few loads: the processor coalesces every pending event of a load
 * across the whole inbox (not only inside one batch), so the drain costs one GET per load, the
 * sink ends equal to the truth, and every event is processed exactly once — also when the daemon
 * is restarted in the middle of the drain. The burst is committed to the inbox in one transaction
 * (as the catch-up stores a page of the event log), so the processor sees it whole.
 */
describe('webhook bursts are coalesced per load', () => {
  let sim: SimulatorHandle | undefined;
  let daemon: RunningDaemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
    await sim?.close();
    sim = undefined;
  });

  async function setup(name: string, batchSize: number, pageDelayMs = 0, limit?: number, loadCount = LOADS) {
    sim = await startSim({ loads: 200, seed: 31, pageDelayMs, rateLimit: limit ? { requestsPerSecond: limit, burst: limit } : null });
    const dir = tempDir(`wh-burst-${name}`);
    const config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'events'],
      streamSettings: { schedule: '0 0 1 1 *' },
      raw: {
        webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: SECRET, catchUpInterval: 'PT0S', batchSize },
        http: { listen: `127.0.0.1:${await freePort()}` },
        ...(limit ? { api: { ...(pullConfigRaw({ sim, dir, streams: [] }).api as Record<string, unknown>), rateLimit: { requestsPerSecond: limit, maxInFlight: 4, adaptive: true } } } : {}),
      },
    });
    const loads = (await collectTruth(sim, 'loads')).filter((l) => l.isDeleted !== true).slice(0, loadCount);
    return { sim, dir, config, loads };
  }

  const inboxRows = (running: RunningDaemon) => running.app.db.selectFrom('webhook_inbox').select(['id', 'event_key', 'state', 'attempts']).execute();

  async function expectExactlyOnce(running: RunningDaemon, dir: string, simulator: SimulatorHandle, loads: Array<Record<string, unknown>>, events = LOADS * EVENTS_PER_LOAD) {
    const rows = await inboxRows(running);
    expect(rows).toHaveLength(events);
    // `attempts` counts settlements: 1 everywhere means no event was processed twice.
    expect(rows.filter((r) => r.state !== 'done' || r.attempts !== 1)).toEqual([]);
    const eventKeys = readCsvRows(path.join(dir, 'out'), 'events').map((r) => r.record_key);
    expect(eventKeys).toHaveLength(rows.length);
    expect(new Set(eventKeys).size).toBe(rows.length);
    const refs = new Set(loads.map((l) => String(l.reference_number)));
    const truth = (await collectTruth(simulator, 'loads')).filter((l) => refs.has(String(l.reference_number)));
    const result = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
    expect({ missing: result.missing, stale: result.stale, wrongOp: result.wrongOp }).toEqual({ missing: [], stale: [], wrongOp: [] });
  }

  it(`drains ${LOADS * EVENTS_PER_LOAD} events for ${LOADS} loads with one GET per load, in batches of 8 loads`, { timeout: 120_000 }, async () => {
    const { sim, dir, config, loads } = await setup('once', 8);
    daemon = await startDaemon(config, dir);
    const running = daemon;
    const before = loadGets(sim);
    await running.app.stores.webhookInbox.acceptMany(burst(loads, EVENTS_PER_LOAD, new Date().toISOString()), 3_600_000);
    await until(async () => (await inboxRows(running)).every((r) => r.state !== 'pending'), 60_000, 'the burst is drained');
    expect(loadGets(sim) - before).toBe(LOADS);
    await expectExactlyOnce(running, dir, sim, loads);
  });

  it('restarted in the middle of the drain, loses no event and processes none twice', { timeout: 120_000 }, async () => {
    // Batches of 2 loads, each GET answered after 100 ms: the drain takes ten batches, long enough to stop in between.
    const { sim, dir, config, loads } = await setup('restart', 2, 100);
    daemon = await startDaemon(config, dir);
    const first = daemon;
    const before = loadGets(sim);
    await first.app.stores.webhookInbox.acceptMany(burst(loads, EVENTS_PER_LOAD, new Date().toISOString()), 3_600_000);
    await until(async () => (await inboxRows(first)).some((r) => r.state === 'done'), 60_000, 'a first batch is processed');
    await first.stop();
    daemon = undefined;
    daemon = await startDaemon(config, dir);
    const second = daemon;
    const pendingAtRestart = (await inboxRows(second)).filter((r) => r.state === 'pending').length;
    expect(pendingAtRestart).toBeGreaterThan(0);
    await until(async () => (await inboxRows(second)).every((r) => r.state !== 'pending'), 60_000, 'the rest of the burst is drained after the restart');
    // The stop lets the batch in hand finish: still one GET per load over both runs.
    expect(loadGets(sim) - before).toBe(LOADS);
    await expectExactlyOnce(second, dir, sim, loads);
  });

  it('a polling pass during the drain is not queued behind the burst (rate-limited API)', { timeout: 120_000 }, async () => {
    // 100 loads × 3 events in one batch, 20 req/s on both sides: the drain needs 100 GETs (≥ 5 s);
    // the first polling pass of `loads` (a token and a few pages) starts beside it. Were the
    // batch's GETs all queued in the shared rate budget at once, the pass would wait for all 100.
    const { dir, config, loads } = await setup('polling', 100, 0, 20, 100);
    const seeded = pullConfig({ sim: sim!, dir, streams: ['loads', 'events'], streamSettings: { schedule: '0 0 1 1 *' } });
    await withPullApp(seeded, dir, (app) => app.stores.webhookInbox.acceptMany(burst(loads, 3, new Date().toISOString()), 3_600_000));
    const before = loadGets(sim!);
    daemon = await startDaemon(config, dir, { runOnStart: true });
    const running = daemon;
    const finishedLoadsRun = async () => (await running.app.db.selectFrom('runs').select('status').where('stream', '=', 'loads').where('finished_at', 'is not', null).executeTakeFirst()) !== undefined;
    await until(finishedLoadsRun, 60_000, 'the first polling pass of loads finished');
    const refreshed = loadGets(sim!) - before;
    console.log(`loads polling pass finished after ${refreshed} of the burst's 100 GET /loads/<ref>`);
    expect(refreshed).toBeLessThan(100);
    await until(async () => (await inboxRows(running)).every((r) => r.state !== 'pending'), 60_000, 'the burst is drained');
    expect(loadGets(sim!) - before).toBe(100);
    await expectExactlyOnce(running, dir, sim!, loads, 300);
  });

  it('a load refresh covers the events that arrived after its batch was taken and before its GET, and no later one', { timeout: 120_000 }, async () => {
    const { sim, dir, config, loads } = await setup('claim', 10, 0, undefined, 2);
    const [a, b] = loads.map((l) => l) as [Record<string, unknown>, Record<string, unknown>];
    const event = (load: Record<string, unknown>, n: number) => burst([load], 1, new Date(Date.now() - 60_000).toISOString()).map((e) => ({ ...e, key: `claim:${String(load.reference_number)}:${n}` }))[0]!;
    await withPullApp(config, dir, async (app) => {
      const inbox = app.stores.webhookInbox;
      await inbox.acceptMany([event(a, 1), event(b, 1), event(a, 2)], 3_600_000);
      // Arrivals while the batch is under way: two for A after the batch was taken, one for A
      // after A's refresh read what it covers (its GET follows that read).
      const due = inbox.due.bind(inbox);
      const pendingFor = inbox.pendingFor.bind(inbox);
      let taken = false;
      let read = false;
      inbox.due = async (...args) => {
        const rows = await due(...args);
        if (!taken) await inbox.acceptMany([event(a, 3), event(a, 4)], 3_600_000);
        taken = true;
        return rows;
      };
      inbox.pendingFor = async (ref, families) => {
        const rows = await pendingFor(ref, families);
        if (ref === String(a.reference_number) && !read) await inbox.acceptMany([event(a, 5)], 3_600_000);
        read = true;
        return rows;
      };
      // Claim at every refresh (by default only a GET that waited for the rate budget claims).
      const processor = composeWebhookProcessor(app, undefined, { claimAfterMs: 0 });
      const before = loadGets(sim);
      const signal = new AbortController().signal;
      expect(await processor.processDue(signal)).toBe(5);
      expect(loadGets(sim) - before).toBe(2);
      const states = async () => Object.fromEntries((await app.db.selectFrom('webhook_inbox').select(['event_key', 'state', 'attempts']).execute()).map((r) => [r.event_key, `${r.state}/${r.attempts}`]));
      const aRef = String(a.reference_number);
      expect(await states()).toEqual({
        [`claim:${aRef}:1`]: 'done/1',
        [`claim:${aRef}:2`]: 'done/1',
        [`claim:${aRef}:3`]: 'done/1',
        [`claim:${aRef}:4`]: 'done/1',
        [`claim:${String(b.reference_number)}:1`]: 'done/1',
        // Arrived after the refresh read what it covers: it needs a GET of its own.
        [`claim:${aRef}:5`]: 'pending/0',
      });
      // The events stream has every covered event once, the late one not yet.
      expect(readCsvRows(path.join(dir, 'out'), 'events').map((r) => r.record_key).sort()).toEqual([`claim:${aRef}:1`, `claim:${aRef}:2`, `claim:${aRef}:3`, `claim:${aRef}:4`, `claim:${String(b.reference_number)}:1`].sort());
      expect(await processor.processDue(signal)).toBe(1);
      expect(loadGets(sim) - before).toBe(3);
      expect(Object.values(await states())).toEqual(Array(6).fill('done/1'));
    });
  });
});
