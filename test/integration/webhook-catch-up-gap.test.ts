import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listWebhookEvents } from '../../src/api/endpoints/webhook-events.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { CATCH_UP_KEY, catchUp } from '../../src/webhooks/catch-up.js';
import { z } from 'zod';
import { bodyKey } from '../../src/webhooks/webhook-event.js';
import type { AppContext } from '../../src/app/app-context.js';
import { silentLogger } from '../../src/util/logger.js';
import { pullConfig, startSim, tempDir, withPullApp } from '../helpers/pull-harness.js';

/**
 * The catch-up reads the event log from where its previous read ended, whatever arrived by
 * delivery since. Found by the 10-account cluster chaos run 13: a replica's receiver was down for
 * a few seconds, the simulator's sender gave up on two events and delivered the later ones, and
 * the catch-up started its next read at the newest delivery's receipt minus the overlap, past the
 * two lost events: they were never processed (polling later covered their loads, the events
 * themselves were missing).
 */
const cursor = z.strictObject({ readUpTo: z.string() });

describe.each(['main', 'brokerage'] as const)('webhook catch-up after a delivery given up (%s)', (variant) => {
  let sim: SimulatorHandle;

  beforeAll(async () => {
    sim = await startSim({ variant, loads: 60, seed: 77 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  /** The log's events whose createdAt is in [from, to], keyed as the catch-up and the receiver key them. */
  async function loggedBetween(from: Date, to: Date): Promise<string[]> {
    const keys: string[] = [];
    for await (const event of sim.truth('webhookEvents')) {
      const at = Date.parse(String(event['createdAt']));
      if (at < from.getTime() || at > to.getTime()) continue;
      const sent = (event['response'] as { data?: unknown } | undefined)?.data;
      keys.push(bodyKey(typeof sent === 'string' && sent !== '' ? sent : JSON.stringify(event['data'] ?? {})));
    }
    return keys;
  }

  /** One catch-up as the daemon runs it, after a request so the client's clock knows the simulator's. */
  async function runCatchUp(app: AppContext, overlapMs: number) {
    await listWebhookEvents(app.client, variant === 'main' ? { limit: 1 } : { occurred_from: sim.now().toISOString(), occurred_to: sim.now().toISOString() });
    return catchUp(
      { client: app.client, inbox: app.stores.webhookInbox, checkpoints: app.stores.checkpoints, metrics: app.metrics, logger: silentLogger(), overlapMs, maxAgeMs: 86_400_000, dedupeWindowMs: 3_600_000 },
      new AbortController().signal,
    );
  }

  /** An app on a simulator of its own whose clock is 150 s behind this host's, more than the default 120 s overlap. */
  async function withServerBehind(seed: number, name: string, work: (app: AppContext, behind: SimulatorHandle) => Promise<void>): Promise<void> {
    const behind = await startSim({ variant, loads: 20, seed, clockOffsetMs: -150_000 });
    try {
      const dir = tempDir(`${name}-${variant}`);
      await withPullApp(pullConfig({ sim: behind, dir, streams: ['loads'] }), dir, (app) => work(app, behind));
    } finally {
      await behind.close();
    }
  }

  it('reads the events between its last read and a later delivery (the sender gave up on them)', async () => {
    const dir = tempDir(`wh-catch-up-gap-${variant}`);
    const config = pullConfig({ sim, dir, streams: ['loads'] });
    await withPullApp(config, dir, async (app) => {
      // First start: the position is set, nothing read.
      expect((await runCatchUp(app, 1_000)).from).toBeNull();

      // Changes whose deliveries the sender gives up on (the receiver was down).
      sim.advance(5_000);
      const lostFrom = sim.now();
      await sim.mutate(4);
      const lostTo = sim.now();
      const lost = await loggedBetween(lostFrom, lostTo);
      expect(lost.length).toBeGreaterThan(0);

      // Ten seconds later a change is delivered and committed to the inbox.
      sim.advance(10_000);
      await app.stores.webhookInbox.acceptMany(
        [{ key: 'body:later-delivery', eventType: 'load#info_updated', family: 'load', referenceNumber: 'LATER-1', body: '{}', source: 'delivery', occurredAt: null, receivedAt: sim.now().toISOString() }],
        3_600_000,
      );
      sim.advance(1_000);

      // The next catch-up (overlap 1 s, far less than the 10 s since the lost events) still reads them.
      const result = await runCatchUp(app, 1_000);
      expect(Date.parse(result.from!)).toBeLessThanOrEqual(lostFrom.getTime());
      const inInbox = new Set((await app.db.selectFrom('webhook_inbox').select('event_key').execute()).map((r) => r.event_key));
      expect(lost.filter((key) => !inInbox.has(key))).toEqual([]);
    });
  });

  it.runIf(variant === 'main')('keeps its progress page by page: a read cut short resumes where it was (chaos run 18)', async () => {
    const dir = tempDir(`wh-catch-up-progress-${variant}`);
    const config = pullConfig({ sim, dir, streams: ['loads'] });
    await withPullApp(config, dir, async (app) => {
      expect((await runCatchUp(app, 1_000)).from).toBeNull();
      const start = (await app.stores.checkpoints.get(CATCH_UP_KEY, cursor))!.readUpTo;
      // More than two pages of events while nothing was read.
      for (let i = 0; i < 12 && (await loggedBetween(new Date(start), sim.now())).length < 130; i++) {
        sim.advance(2_000);
        await sim.mutate(20);
      }
      const logged = await loggedBetween(new Date(start), sim.now());
      expect(logged.length).toBeGreaterThan(100);
      sim.advance(1_000);
      await listWebhookEvents(app.client, { limit: 1 });

      // The read is cut short after its first page is stored (the lease was lost).
      const cut = new AbortController();
      const inbox = Object.assign(Object.create(app.stores.webhookInbox) as typeof app.stores.webhookInbox, {
        acceptMany: async (...args: Parameters<typeof app.stores.webhookInbox.acceptMany>) => {
          const outcomes = await app.stores.webhookInbox.acceptMany(...args);
          cut.abort(new Error('lease lost'));
          return outcomes;
        },
      });
      await expect(
        catchUp({ client: app.client, inbox, checkpoints: app.stores.checkpoints, metrics: app.metrics, logger: silentLogger(), overlapMs: 1_000, maxAgeMs: 86_400_000, dedupeWindowMs: 3_600_000 }, cut.signal),
      ).rejects.toThrow();
      const firstPage = (await app.db.selectFrom('webhook_inbox').select(['occurred_at']).execute()).map((r) => Date.parse(r.occurred_at!));
      expect(firstPage).toHaveLength(50);
      const position = (await app.stores.checkpoints.get(CATCH_UP_KEY, cursor))!.readUpTo;
      expect(Date.parse(position)).toBe(Math.max(...firstPage) - 1);

      // The next read starts there (less the overlap), not at the old position, and stores the rest.
      const next = await runCatchUp(app, 1_000);
      expect(Date.parse(next.from!)).toBe(Date.parse(position) - 1_000);
      const inInbox = new Set((await app.db.selectFrom('webhook_inbox').select('event_key').execute()).map((r) => r.event_key));
      expect(logged.filter((key) => !inInbox.has(key))).toEqual([]);
    });
  });

  it('a first catch-up that cannot reach the API still fixes its start: the later one reads the events given up meanwhile (chaos, long form)', async () => {
    // The API unreachable at first (the account awaited re-authentication in the chaos run).
    await withServerBehind(79, 'wh-catch-up-unreachable', async (app, behind) => {
      // Overlap 5 s, far less than the skew. The simulator's clock moves with this host's here
      // (no advance before the lost events): the skew stays what it was, as a real server's does.
      const options = { client: app.client, inbox: app.stores.webhookInbox, checkpoints: app.stores.checkpoints, metrics: app.metrics, logger: silentLogger(), overlapMs: 5_000, maxAgeMs: 86_400_000, dedupeWindowMs: 3_600_000 };
      behind.configure({ faults: { rate: 1, kinds: ['500'], slowMs: 0 } });
      await expect(catchUp(options, new AbortController().signal)).rejects.toThrow();
      behind.configure({ faults: { rate: 0, kinds: ['500'], slowMs: 0 } });
      // Its start is kept aside in this host's clock: the position itself holds server times only,
      // so it never appears to move backwards (a host-clock value there did, in the chaos run).
      expect(await app.stores.checkpoints.get(CATCH_UP_KEY, cursor)).toBeUndefined();

      // Events whose deliveries the sender gives up on, then a delivery committed with this
      // host's clock (the receiver's stamp before the client learned the server's).
      const lostFrom = behind.now();
      await behind.mutate(4);
      const lostTo = behind.now();
      const lost: string[] = [];
      for await (const event of behind.truth('webhookEvents')) {
        const at = Date.parse(String(event['createdAt']));
        if (at < lostFrom.getTime() || at > lostTo.getTime()) continue;
        lost.push(bodyKey(String((event['response'] as { data: string }).data)));
      }
      expect(lost.length).toBeGreaterThan(0);
      await app.stores.webhookInbox.acceptMany(
        [{ key: 'body:later-delivery', eventType: 'load#info_updated', family: 'load', referenceNumber: 'LATER-1', body: '{}', source: 'delivery', occurredAt: null, receivedAt: new Date().toISOString() }],
        3_600_000,
      );
      behind.advance(1_000);

      // A request first, as in runCatchUp: the client's clock then knows the advance above.
      await listWebhookEvents(app.client, variant === 'main' ? { limit: 1 } : { occurred_from: behind.now().toISOString(), occurred_to: behind.now().toISOString() });
      const result = await catchUp(options, new AbortController().signal);
      expect(result.from).not.toBeNull();
      const inInbox = new Set((await app.db.selectFrom('webhook_inbox').select('event_key').execute()).map((r) => r.event_key));
      expect(lost.filter((key) => !inInbox.has(key))).toEqual([]);
      // The position is in the server's time again, never ahead of it.
      const position = (await app.stores.checkpoints.get(CATCH_UP_KEY, cursor))!;
      expect(Date.parse(position.readUpTo)).toBeLessThanOrEqual(behind.now().getTime());
    });
  });

  it('a fresh process whose clock is ahead of the server records the position in the server\'s time (chaos, long form)', async () => {
    await withServerBehind(78, 'wh-catch-up-clock', async (app, behind) => {
      expect(app.client.clock.known).toBe(false);
      const first = await catchUp(
        { client: app.client, inbox: app.stores.webhookInbox, checkpoints: app.stores.checkpoints, metrics: app.metrics, logger: silentLogger(), overlapMs: 120_000, maxAgeMs: 86_400_000, dedupeWindowMs: 3_600_000 },
        new AbortController().signal,
      );
      expect(first.from).toBeNull();
      // Never ahead of the server: an event the server stamps right after must still be read.
      expect(Date.parse(first.to)).toBeLessThanOrEqual(behind.now().getTime());
    });
  });
});
