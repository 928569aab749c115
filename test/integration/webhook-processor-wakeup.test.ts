import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import type { RecordSink } from '../../src/contracts/index.js';
import { composeWebhookProcessor } from '../../src/app/compose-webhooks.js';
import type { AppContext } from '../../src/app/app-context.js';
import type { WebhookProcessor } from '../../src/webhooks/processor.js';
import { freePort } from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/lease-targets.js';
import { collectTruth, loadGets, pullConfig, readCsvRows, startSim, tempDir, withPullApp } from '../helpers/pull-harness.js';

/** A condition the processor's progress makes true (no time is asserted: the limit only ends a hung test). */
const until = (check: () => boolean | Promise<boolean>, what: string) => waitFor(check, 30_000, what);

function loadEvent(load: Record<string, unknown>, n: number): InboxEntry {
  const ref = String(load.reference_number);
  const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: ref, _id: load._id, changedValues: { officeNote: `note ${n}` } });
  return { key: `wake:${ref}:${n}`, eventType: 'load#info_updated', family: 'load', referenceNumber: ref, body, source: 'delivery', occurredAt: null, receivedAt: new Date(Date.now() - 60_000).toISOString() };
}

/**
 * The processor loop wakes on events this process commits, never on a timer: the idle poll is
 * set to ten minutes, so every step below happens because of a wake-up or a delivery settling.
 * The CSV sink's writes are held at a gate to keep a batch in delivery as long as the test needs.
 */
describe('the webhook processor wakes on committed events', () => {
  let sim: SimulatorHandle | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  async function withGatedProcessor(work: (ctx: {
    loads: Array<Record<string, unknown>>;
    commit: (entry: InboxEntry) => Promise<void>;
    /** Resolves when a sink write for `stream` is held at the gate. */
    held: (stream: string) => Promise<void>;
    open: () => void;
    states: () => Promise<Record<string, string>>;
    dir: string;
    app: AppContext;
    processor: WebhookProcessor;
  }) => Promise<void>, variant: 'main' | 'brokerage' = 'main'): Promise<void> {
    sim = await startSim({ variant, loads: 50, seed: 41 });
    const dir = tempDir('wh-wakeup');
    const config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'events'],
      streamSettings: { schedule: '0 0 1 1 *' },
      raw: { webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: 'whsec-wakeup-test-51a2', catchUpInterval: 'PT0S', batchSize: 10 } },
    });
    const loads = (await collectTruth(sim, 'loads')).filter((l) => l.isDeleted !== true).slice(0, 2);
    await withPullApp(config, dir, async (app) => {
      const sink = app.connectors!.get('out')!.instance.sink as RecordSink;
      const write = sink.write.bind(sink);
      let open!: () => void;
      let gate: Promise<void> | undefined = new Promise<void>((resolve) => (open = resolve));
      const waiting = new Map<string, () => void>();
      const heldFor = new Map<string, Promise<void>>();
      const held = (stream: string) => {
        if (!heldFor.has(stream)) heldFor.set(stream, new Promise<void>((resolve) => waiting.set(stream, resolve)));
        return heldFor.get(stream)!;
      };
      sink.write = async (batch, signal) => {
        if (gate) {
          held(batch.stream);
          waiting.get(batch.stream)?.();
          await gate;
        }
        return write(batch, signal);
      };
      const processor = composeWebhookProcessor(app, undefined, { idlePollMs: 600_000 });
      const stop = new AbortController();
      const running = processor.run(stop.signal, new AbortController().signal);
      const commit = async (entry: InboxEntry) => {
        await app.stores.webhookInbox.accept(entry, 3_600_000);
        processor.wakeup.notify();
      };
      const states = async () => Object.fromEntries((await app.db.selectFrom('webhook_inbox').select(['event_key', 'state', 'attempts']).execute()).map((r) => [r.event_key, `${r.state}/${r.attempts}`]));
      try {
        await work({ loads, commit, held, open: () => ((gate = undefined), open()), states, dir, app, processor });
      } finally {
        open();
        gate = undefined;
        stop.abort();
        await running;
      }
    });
  }

  it('fetches an event for another load while a batch is still in delivery', { timeout: 60_000 }, async () => {
    await withGatedProcessor(async ({ loads, commit, held, open, states, dir }) => {
      const [a, b] = loads as [Record<string, unknown>, Record<string, unknown>];
      const before = loadGets(sim!);
      await commit(loadEvent(a, 1));
      // A's batch is in delivery (its sink write is held): B's event arrives.
      await held('loads');
      expect(loadGets(sim!) - before).toBe(1);
      await commit(loadEvent(b, 1));
      // B's GET is made while A's delivery is still held (it used to wait for that delivery).
      await until(() => loadGets(sim!) - before === 2, "B's GET while A is in delivery");
      open();
      await until(async () => Object.values(await states()).every((s) => s === 'done/1'), 'both events processed');
      const refs = new Set(readCsvRows(path.join(dir, 'out'), 'loads').map((r) => r.reference_number));
      expect([...refs].sort()).toEqual([String(a.reference_number), String(b.reference_number)].sort());
    });
  });

  it('takes an event for the load in delivery right after that delivery, with no other wake-up', { timeout: 60_000 }, async () => {
    await withGatedProcessor(async ({ loads, commit, held, open, states }) => {
      const [a] = loads as [Record<string, unknown>];
      const before = loadGets(sim!);
      await commit(loadEvent(a, 1));
      await held('loads');
      // Left out of the next look (A is in delivery), then due once A's delivery settled.
      await commit(loadEvent(a, 2));
      open();
      await until(async () => Object.values(await states()).length === 2 && Object.values(await states()).every((s) => s === 'done/1'), "A's second event processed");
      expect(loadGets(sim!) - before).toBe(2);
    });
  });

  it.each(['main', 'brokerage'] as const)('refreshes again when a change with the same body arrives while the refresh of the first is in flight (%s)', { timeout: 60_000 }, async (variant) => {
    await withGatedProcessor(async ({ loads, commit, held, open, states, dir, app }) => {
      const [a] = loads as [Record<string, unknown>];
      const ref = String(a.reference_number);
      // A load event carries no event id: its key is a digest of its body, and a later change that
      // looks the same (a note set to the same text again) arrives with the same key.
      const event = { ...loadEvent(a, 1), key: `body:same-${ref}` };
      const before = loadGets(sim!);
      await commit(event);
      // The refresh has read the load (its GET is made) and its delivery is held.
      await held('loads');
      expect(loadGets(sim!) - before).toBe(1);
      // The load changes after that read, and the change is announced with the same body.
      const changed = sim!.updateLoadLate(ref, { officeNote: `changed after the read ${Date.now()}` }, 0);
      expect(await app.stores.webhookInbox.accept({ ...event, receivedAt: new Date().toISOString() }, 3_600_000)).toBe('duplicate');
      open();
      // The first refresh settles without marking the row done (it was armed again meanwhile);
      // the next batch refreshes the load again and the sink gets the change.
      await until(async () => (await states())[event.key] === 'done/1' && loadGets(sim!) - before === 2, 'the load refreshed a second time');
      const rows = readCsvRows(path.join(dir, 'out'), 'loads').filter((r) => r.reference_number === ref);
      expect(rows.map((r) => r.updated_at)).toContain(String(changed.updatedAt));
    }, variant);
  });

  it.each(['main', 'brokerage'] as const)('refreshes again when a change with the same body as an event already processed arrives within the dedupe window (%s)', { timeout: 60_000 }, async (variant) => {
    await withGatedProcessor(async ({ loads, commit, open, states, dir, app, processor }) => {
      open();
      const [a] = loads as [Record<string, unknown>];
      const ref = String(a.reference_number);
      const event = { ...loadEvent(a, 1), key: `body:again-${ref}` };
      const before = loadGets(sim!);
      await commit(event);
      await until(async () => (await states())[event.key] === 'done/1', 'the first event processed');
      const changed = sim!.updateLoadLate(ref, { officeNote: `changed again ${Date.now()}` }, 0);
      // Seconds later, far inside the one-hour window: still a new change, refreshed again.
      // Stamped and announced as the receiver does (server clock).
      const receivedAt = app.client.clock.now();
      expect(await app.stores.webhookInbox.accept({ ...event, receivedAt: receivedAt.toISOString() }, 3_600_000)).toBe('rearmed');
      processor.stored();
      await until(async () => loadGets(sim!) - before === 2 && (await states())[event.key] === 'done/1', 'the load refreshed again');
      const rows = readCsvRows(path.join(dir, 'out'), 'loads').filter((r) => r.reference_number === ref);
      expect(rows.map((r) => r.updated_at)).toContain(String(changed.updatedAt));
    }, variant);
  });

  it('takes an event it was told of at once, also when the server clock estimate moved back since its receipt', { timeout: 60_000 }, async () => {
    await withGatedProcessor(async ({ loads, open, states, app, processor }) => {
      open();
      const [a] = loads as [Record<string, unknown>];
      // Stamped while the estimate of the server's offset was higher: its largest recent `Date`
      // sample has aged out since (the estimate moves by up to a second, the header's resolution).
      const receivedAt = new Date(app.client.clock.now().getTime() + 900);
      await app.stores.webhookInbox.accept({ ...loadEvent(a, 1), receivedAt: receivedAt.toISOString() }, 3_600_000);
      processor.stored();
      await until(async () => Object.values(await states()).join() === 'done/1', 'the event processed without waiting for the idle poll');
    });
  });

  it.each(['main', 'brokerage'] as const)('takes at once an event another replica stamped with a clock far ahead of the server (a standby that never called the API) (%s)', { timeout: 60_000 }, async (variant) => {
    await withGatedProcessor(async ({ loads, commit, open, states, app }) => {
      open();
      const [a] = loads as [Record<string, unknown>];
      // The standby's receiver had no `Date` header of this account's API yet: it stamped the
      // delivery with its own clock, here 10 minutes ahead of the server's (cluster chaos ran a
      // brokerage server 150 s behind its hosts). `commit` wakes the loop as the holder's idle
      // poll would; with due meaning "next_attempt_at <= the server's now", the event waited.
      const receivedAt = new Date(app.client.clock.now().getTime() + 10 * 60_000);
      await commit({ ...loadEvent(a, 1), receivedAt: receivedAt.toISOString() });
      await until(async () => Object.values(await states()).join() === 'done/1', 'the event processed without waiting for the skew');
    }, variant);
  });

  it('a failed event still waits for its retry time', { timeout: 60_000 }, async () => {
    await withGatedProcessor(async ({ loads, commit, open, states, app }) => {
      open();
      const [a] = loads as [Record<string, unknown>];
      await commit({ ...loadEvent(a, 1), receivedAt: app.client.clock.now().toISOString() });
      await until(async () => Object.values(await states()).join() === 'done/1', 'the event processed');
      const [row] = await app.db.selectFrom('webhook_inbox').selectAll().execute();
      // As after a failed refresh: pending, one attempt used, retried in an hour.
      const retryAt = new Date(app.client.clock.now().getTime() + 3_600_000).toISOString();
      await app.db.updateTable('webhook_inbox').set({ state: 'pending', attempts: 1, next_attempt_at: retryAt }).where('id', '=', row!.id).execute();
      expect(await app.stores.webhookInbox.due(10, app.client.clock.now().toISOString())).toEqual([]);
      expect((await app.stores.webhookInbox.due(10, new Date(Date.parse(retryAt) + 1).toISOString())).map((r) => r.id)).toEqual([row!.id]);
    });
  });
});
