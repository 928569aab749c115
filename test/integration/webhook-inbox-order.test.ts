import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openState } from '../../src/state/database.js';
import { createStores } from '../../src/state/stores/index.js';
import type { InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import { freshStateOn, stateDialects, type FreshState } from '../helpers/state-db.js';

const disposable: FreshState[] = [];
afterEach(async () => {
  for (const handle of disposable.splice(0)) await handle.dispose();
});

const NOW = '2024-06-01T12:00:00.000Z';
let seq = 0;

function entry(ref: string | null, receivedAt: string, extra: Partial<InboxEntry> = {}): InboxEntry {
  seq += 1;
  return { key: `k${seq}`, eventType: 'load#info_updated', family: 'load', referenceNumber: ref, body: `{"n":${seq}}`, source: 'delivery', occurredAt: null, receivedAt, ...extra };
}

const at = (second: number) => new Date(Date.parse('2024-06-01T11:00:00.000Z') + second * 1000).toISOString();

/** A fresh state database of `dialect` (dropped after the test) and its webhook inbox. */
async function freshInbox(dialect: Parameters<typeof freshStateOn>[0]) {
  const handle = await freshStateOn(dialect);
  disposable.push(handle);
  return { handle, inbox: createStores(handle.db).webhookInbox };
}

/** `WebhookInboxStore.due` on a real state database: which events a processor batch takes. */
describe.each(await stateDialects())('the webhook inbox hands out work per load, oldest first (%s)', (dialect) => {
  it('takes every pending event of the longest-waiting loads across the whole inbox', async () => {
    const { stores } = await freshStateOn(dialect).then((handle) => (disposable.push(handle), { stores: createStores(handle.db) }));
    const inbox = stores.webhookInbox;
    // A burst interleaving A, B, C, then D arriving last.
    const entries: InboxEntry[] = [];
    for (let i = 0; i < 50; i++) for (const ref of ['A', 'B', 'C']) entries.push(entry(ref, at(i)));
    entries.push(entry('D', at(100)));
    await inbox.acceptMany(entries, 60_000);
    const batch = await inbox.due(2, NOW);
    expect(new Set(batch.map((r) => r.reference_number))).toEqual(new Set(['A', 'B']));
    expect(batch).toHaveLength(100);
    expect(batch.map((r) => r.id)).toEqual([...batch.map((r) => r.id)].sort((a, b) => a - b));
    await inbox.markDone(batch, NOW);
    // A new event for A now waits behind C, which has waited longer: no load is overtaken.
    await inbox.accept(entry('A', at(200)), 60_000);
    expect([...new Set((await inbox.due(1, NOW)).map((r) => r.reference_number))]).toEqual(['C']);
    expect((await inbox.due(3, NOW)).map((r) => r.reference_number).filter((r) => r !== 'C')).toEqual(['D', 'A']);
  });

  it('orders by when the change happened: an event-log row from before the burst goes first', async () => {
    const { stores } = await freshStateOn(dialect).then((handle) => (disposable.push(handle), { stores: createStores(handle.db) }));
    const inbox = stores.webhookInbox;
    await inbox.acceptMany(Array.from({ length: 20 }, (_, i) => entry(`L${i}`, at(60 + i))), 60_000);
    // Read from the event log after the burst arrived, but it happened during the downtime before.
    await inbox.accept(entry('OLD', at(90), { source: 'log', occurredAt: at(5) }), 60_000);
    expect((await inbox.due(1, NOW)).map((r) => r.reference_number)).toEqual(['OLD']);
  });

  it('an event naming no load is a subject of its own; rows not yet due wait; maxRows bounds a batch', async () => {
    const { stores } = await freshStateOn(dialect).then((handle) => (disposable.push(handle), { stores: createStores(handle.db) }));
    const inbox = stores.webhookInbox;
    await inbox.acceptMany([entry(null, at(1)), entry(null, at(2)), entry('X', at(3)), entry('X', at(4)), entry('X', at(5))], 60_000);
    expect((await inbox.due(2, NOW)).map((r) => r.reference_number)).toEqual([null, null]);
    const [x] = (await inbox.due(10, NOW)).filter((r) => r.reference_number === 'X');
    await inbox.markFailed(x!, 'HTTP 500', '2024-06-01T13:00:00.000Z', 10);
    expect((await inbox.due(10, NOW)).map((r) => r.reference_number)).toEqual([null, null, 'X', 'X']);
    expect(await inbox.due(10, NOW, 3)).toHaveLength(3);
  });

  it('leaves out the subjects of the batch in delivery and takes the next ones; pendingFor reads one load\'s pending events', async () => {
    const { stores } = await freshStateOn(dialect).then((handle) => (disposable.push(handle), { stores: createStores(handle.db) }));
    const inbox = stores.webhookInbox;
    const lone = entry(null, at(2));
    await inbox.acceptMany([entry('A', at(1)), lone, entry('B', at(3)), entry('A', at(4)), entry('C', at(5)), entry('A', at(6), { family: 'document', eventType: 'document#pod_added' })], 60_000);
    const loneId = (await inbox.due(10, NOW)).find((r) => r.reference_number === null)!.id;
    // A and the lone event are in delivery: B and C are next, and nothing of A or the lone row comes with them.
    expect((await inbox.due(2, NOW, undefined, ['A', `#${loneId}`])).map((r) => r.reference_number)).toEqual(['B', 'C']);
    expect((await inbox.due(10, NOW, undefined, ['B'])).map((r) => r.reference_number ?? 'lone')).toEqual(['A', 'lone', 'A', 'C', 'A']);
    // A's load events, not its document event, and nothing once they are done.
    const a = await inbox.pendingFor('A', ['load']);
    expect(a.map((r) => r.received_at)).toEqual([at(1), at(4)]);
    await inbox.markDone(a, NOW);
    expect(await inbox.pendingFor('A', ['load'])).toEqual([]);
    expect((await inbox.pendingFor('A', ['load', 'document'])).map((r) => r.family)).toEqual(['document']);
  });
});

/** `WebhookInboxStore.acceptMany`: one statement for the new rows, outcomes in the caller's order. */
describe.each(await stateDialects())('the webhook inbox stores a group of deliveries (%s)', (dialect) => {
  it('answers per entry in the given order: new, already present, the same key twice in one group, seen long ago', async () => {
    const { handle, inbox } = await freshInbox(dialect);
    const old = { ...entry('A', at(0)), key: 'old' };
    await inbox.acceptMany([old], 60_000);
    await handle.db.updateTable('webhook_inbox').set({ state: 'done' }).where('event_key', '=', 'old').execute();
    const present = { ...entry('A', at(1)), key: 'present' };
    await inbox.accept(present, 60_000);
    const fresh = { ...entry('B', at(2)), key: 'z-new' };
    const twice = { ...entry('C', at(3)), key: 'a-twice' };
    const outcomes = await inbox.acceptMany([fresh, present, twice, { ...twice, body: '{"again":1}' }, { ...old, receivedAt: at(7200), occurredAt: at(7200) }], 60_000);
    expect(outcomes).toEqual(['stored', 'duplicate', 'stored', 'duplicate', 'rearmed']);
    const rows = await handle.db.selectFrom('webhook_inbox').select(['event_key', 'state', 'body']).orderBy('event_key').execute();
    expect(rows.map((r) => [r.event_key, r.state])).toEqual([['a-twice', 'pending'], ['old', 'pending'], ['present', 'pending'], ['z-new', 'pending']]);
    // The first of the two entries with one key is the one stored.
    expect(rows[0]!.body).toBe(twice.body);
  });

  it('two replicas storing the same keys in opposite orders at the same time never deadlock', async () => {
    const handle = await freshStateOn(dialect);
    disposable.push(handle);
    // A second connection (PostgreSQL: the pool has several; SQLite serialises writers anyway).
    const inbox = createStores(handle.db).webhookInbox;
    for (let round = 0; round < 15; round++) {
      const group = Array.from({ length: 30 }, (_, i) => ({ ...entry(`L${i}`, at(round * 100 + i)), key: `r${round}-e${i}` }));
      const results = await Promise.allSettled([inbox.acceptMany(group, 60_000), inbox.acceptMany([...group].reverse(), 60_000)]);
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      const [a, b] = results.map((r) => (r as PromiseFulfilledResult<string[]>).value);
      // Each event stored exactly once between the two.
      for (let i = 0; i < group.length; i++) expect([a![i], b![group.length - 1 - i]].sort()).toEqual(['duplicate', 'stored']);
    }
  });
});

/**
 * A load event has no event id: its key is a digest of its body, which names a body, not an event.
 * A later change that looks the same must not be dropped (test/integration/webhook-processor-wakeup.test.ts
 * runs the same end to end with the processor).
 */
describe.each(await stateDialects())('the webhook inbox keeps a repeated body that may be a new change (%s)', (dialect) => {
  it('arms a pending row again, so settling what was taken before leaves it pending; re-arms a processed one', async () => {
    const { inbox } = await freshInbox(dialect);
    const first = { ...entry('A', at(0)), key: 'body:aa' };
    expect(await inbox.accept(first, 3_600_000)).toBe('stored');
    const [taken] = await inbox.due(1, NOW);
    expect(taken!.arm_count).toBe(0);
    // The same body while that row's refresh is in flight: no new row, the row armed again.
    expect(await inbox.accept({ ...first, receivedAt: at(1) }, 3_600_000)).toBe('duplicate');
    expect(await inbox.markDone([taken!], NOW)).toEqual([]);
    const [again] = await inbox.due(1, NOW);
    // Its place in the queue is kept (received_at); armed_at says when it was last armed.
    expect(again).toMatchObject({ id: taken!.id, state: 'pending', arm_count: 1, received_at: at(0), armed_at: at(1) });
    // A failed attempt of the stale take does not count either.
    expect(await inbox.markFailed(taken!, 'HTTP 500', at(3600), 1)).toBe('pending');
    expect((await inbox.byIds([taken!.id]))[0]).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: at(0) });
    expect(await inbox.markDone([again!], NOW)).toEqual([taken!.id]);
    // Processed; the same body a minute later, far inside the window: made pending again.
    expect(await inbox.accept({ ...first, receivedAt: at(60) }, 3_600_000)).toBe('rearmed');
    expect((await inbox.byIds([taken!.id]))[0]).toMatchObject({ state: 'pending', received_at: at(60), next_attempt_at: at(60), attempts: 0, processed_at: null });
  });

  it('a repeated body that finds its row pending, but settled before its arming lands, makes the row pending again', async () => {
    const { handle, inbox } = await freshInbox(dialect);
    const first = { ...entry('A', at(0)), key: 'body:race' };
    expect(await inbox.accept(first, 3_600_000)).toBe('stored');
    const taken = await inbox.due(1, NOW);
    // The processor settles the row on a connection of its own, right after the delivery's
    // (transaction-less) read found it pending and before its arming runs: the interleaving that
    // dropped the change while the guarded arming still answered 'duplicate'.
    const processorDb = await openState(handle.location);
    const processor = createStores(processorDb).webhookInbox;
    let settled: number[] | undefined;
    const settleAfterTheRead: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        const row = result.rows[0] as { state?: unknown; armed_at?: unknown } | undefined;
        if (settled === undefined && result.rows.length === 1 && row?.state === 'pending' && 'armed_at' in row) settled = await processor.markDone(taken, NOW);
        return result;
      },
    };
    try {
      const racing = createStores(handle.db.withPlugin(settleAfterTheRead)).webhookInbox;
      expect(await racing.accept({ ...first, receivedAt: at(30) }, 3_600_000)).toBe('rearmed');
      expect(settled).toEqual([taken[0]!.id]);
      // Pending again, for a refresh that reads the load after the repeated change.
      expect((await inbox.byIds([taken[0]!.id]))[0]).toMatchObject({ state: 'pending', received_at: at(30), processed_at: null });
      expect((await inbox.due(1, NOW)).map((r) => r.id)).toEqual([taken[0]!.id]);
    } finally {
      await processorDb.destroy();
    }
  });

  it('drops an event-log entry that happened before the row was received (its refresh covers it), not one that happened after', async () => {
    const { handle, inbox } = await freshInbox(dialect);
    const delivered = { ...entry('A', at(10)), key: 'body:bb' };
    await inbox.accept(delivered, 3_600_000);
    // The catch-up's echo of that delivery: the event happened before it was received.
    const echo = { ...delivered, source: 'log' as const, occurredAt: at(9), receivedAt: at(500) };
    expect(await inbox.accept(echo, 3_600_000)).toBe('duplicate');
    expect((await inbox.byIds([1]))[0]!.arm_count).toBe(0);
    const [row] = await inbox.due(1, NOW);
    await inbox.markDone([row!], NOW);
    expect(await inbox.accept(echo, 3_600_000)).toBe('duplicate');
    // The client's estimate of the server clock may trail the log's times by up to a second or two.
    expect(await inbox.accept({ ...echo, occurredAt: at(11) }, 3_600_000)).toBe('duplicate');
    // A logged event with the same body that happened after the receipt: a newer change.
    expect(await inbox.accept({ ...echo, occurredAt: at(20) }, 3_600_000)).toBe('rearmed');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ state: 'pending', occurred_at: at(20), received_at: at(500), armed_at: at(500) });
    // Armed by the log: a delivery of the same body within the window is taken for the late
    // delivery of that logged event (the catch-up read it first) and dropped, the row untouched.
    expect(await inbox.accept({ ...delivered, receivedAt: at(900) }, 3_600_000)).toBe('duplicate');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ arm_count: 1, armed_at: at(500), received_at: at(500) });
    // A newer change with that body is in the log too: its entry arms the row again.
    expect(await inbox.accept({ ...echo, occurredAt: at(899), receivedAt: at(1000) }, 3_600_000)).toBe('duplicate');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ arm_count: 2, armed_at: at(1000), received_at: at(500) });
    // Armed by a delivery, processed: the same body delivered again is a new change.
    const [pending] = await inbox.due(1, NOW);
    await inbox.markDone([pending!], NOW);
    await handle.db.updateTable('webhook_inbox').set({ occurred_at: null }).where('id', '=', row!.id).execute();
    expect(await inbox.accept({ ...delivered, receivedAt: at(1100) }, 3_600_000)).toBe('rearmed');
  });

  it('an event-log entry that happened after the read that found it (a brokerage log read answers the whole day) arms its row once, not at every read', async () => {
    const { inbox } = await freshInbox(dialect);
    const delivered = { ...entry('A', at(10)), key: 'body:cc' };
    await inbox.accept(delivered, 3_600_000);
    const [row] = await inbox.due(1, NOW);
    await inbox.markDone([row!], NOW);
    // Read at 100 s (the read's `to`), it happened at 160 s: a newer change, armed at when it happened.
    const logged = { ...delivered, source: 'log' as const, occurredAt: at(160), receivedAt: at(100) };
    expect(await inbox.accept(logged, 3_600_000)).toBe('rearmed');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ armed_at: at(160), arm_count: 1 });
    const [again] = await inbox.due(1, NOW);
    expect(await inbox.markDone([again!], NOW)).toEqual([row!.id]);
    // The next reads find the same entry: covered, the row stays done.
    expect(await inbox.accept({ ...logged, receivedAt: at(130) }, 3_600_000)).toBe('duplicate');
    expect(await inbox.accept({ ...logged, receivedAt: at(400) }, 3_600_000)).toBe('duplicate');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ state: 'done', arm_count: 1 });
  });

  it('an event id is one event: a repeat within the window is dropped, processed or not', async () => {
    const { inbox } = await freshInbox(dialect);
    const logged = { ...entry('A', at(0)), key: 'event:77' };
    await inbox.accept(logged, 3_600_000);
    expect(await inbox.accept({ ...logged, receivedAt: at(1) }, 3_600_000)).toBe('duplicate');
    const [row] = await inbox.due(1, NOW);
    expect(row!.arm_count).toBe(0);
    expect(await inbox.markDone([row!], NOW)).toEqual([row!.id]);
    expect(await inbox.accept({ ...logged, receivedAt: at(60) }, 3_600_000)).toBe('duplicate');
    expect(await inbox.accept({ ...logged, receivedAt: at(7200) }, 3_600_000)).toBe('rearmed');
  });
});
