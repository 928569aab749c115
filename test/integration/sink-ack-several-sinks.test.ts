import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/api-client.js';
import type { RecordBatch, RecordSink, SinkAck } from '../../src/contracts/index.js';
import { createStores } from '../../src/state/stores/index.js';
import { redeliverDue } from '../../src/sync/redeliver.js';
import { deliverBatch, type StreamRunDeps } from '../../src/sync/stream-runner.js';
import { streamByName } from '../../src/sync/streams/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { freshStateDatabase } from '../helpers/state-db.js';

/** A sink that keeps every record it acknowledged and refuses the keys in `refuse`. */
class MemorySink implements RecordSink {
  readonly written: Array<{ key: string; version: string }> = [];
  refuse = new Set<string>();
  answer: unknown = undefined;
  async write(batch: RecordBatch): Promise<SinkAck> {
    if (this.answer !== undefined) return this.answer as SinkAck;
    const rejected = batch.records.filter((r) => this.refuse.has(r.key)).map((r) => ({ key: r.key, reason: `refused ${r.key}` }));
    for (const r of batch.records) if (!this.refuse.has(r.key)) this.written.push({ key: r.key, version: String(r.data.name) });
    return { rejected };
  }
}

const customers = streamByName('customers');
const customer = (id: string, name: string) => ({ _id: id, name, updatedAt: '2024-06-01T00:00:00.000Z' });
const never = new AbortController().signal;

async function setup() {
  const { db } = await freshStateDatabase();
  const stores = createStores(db);
  const deps: StreamRunDeps = { stores, client: {} as ApiClient, logger: silentLogger() };
  const a = new MemorySink();
  const b = new MemorySink();
  const sinks = [{ name: 'a', sink: a }, { name: 'b', sink: b }];
  const deliver = (records: Array<Record<string, unknown>>, batchId = 'p1') => deliverBatch(deps, { definition: customers, sinks, records, batchId, signal: never });
  const seen = async () => (await stores.side.seenKeys('customers')).size;
  return { db, stores, deps, a, b, sinks, deliver, seen };
}

describe('sink acknowledgements with several sinks on one stream', () => {
  it('a record one sink refuses is not remembered, reaches the other sink once, and is re-delivered only to the refusing sink', async () => {
    const { db, stores, deps, a, b, sinks, deliver, seen } = await setup();
    b.refuse.add('c2');
    expect(await deliver([customer('c1', 'one'), customer('c2', 'two')])).toMatchObject({ delivered: 1, rejected: 1 });
    expect(await seen()).toBe(1);
    expect((await stores.quarantine.list()).map((e) => [e.kind, e.item_key, e.sink, e.attempts])).toEqual([['sink', 'c2', 'b', 1]]);

    // The same version read again (lookback): nobody gets it — a has it, b waits for the re-delivery.
    expect(await deliver([customer('c1', 'one'), customer('c2', 'two')], 'p2')).toMatchObject({ delivered: 0, rejected: 0, unchanged: 2 });
    expect(a.written).toEqual([{ key: 'c1', version: 'one' }, { key: 'c2', version: 'two' }]);

    // Not due: nothing re-delivered (backoff).
    const redeliver = () => redeliverDue(deps, { definition: customers, sinks, signal: never, logger: silentLogger() });
    expect(await redeliver()).toMatchObject({ delivered: 0, rejected: 0 });
    // Due (the backoff passed) and refused again: one more attempt, a later next attempt.
    const makeDue = () => db.updateTable('quarantine').set({ next_attempt_at: '2000-01-01T00:00:00.000Z' }).execute();
    await makeDue();
    expect(await redeliver()).toMatchObject({ delivered: 0, rejected: 1 });
    const [postponed] = await stores.quarantine.list();
    expect(postponed!.attempts).toBe(2);
    expect(Date.parse(postponed!.next_attempt_at!) - Date.parse(postponed!.last_seen_at)).toBe(2 * 60_000);
    // Due and accepted: only b receives it.
    b.refuse.clear();
    await makeDue();
    const outcome = await redeliver();
    expect(outcome).toMatchObject({ delivered: 1, rejected: 0 });
    expect(a.written.filter((w) => w.key === 'c2')).toHaveLength(1);
    expect(b.written).toEqual([{ key: 'c1', version: 'one' }, { key: 'c2', version: 'two' }]);
    expect(await stores.quarantine.list()).toEqual([]);
    expect(await seen()).toBe(2);
  });

  it('a newer version goes to every sink and settles the entry where it lands; refused again, it replaces the held version', async () => {
    const { stores, a, b, deliver, seen } = await setup();
    b.refuse.add('c2');
    await deliver([customer('c2', 'v1')]);
    expect(await deliver([customer('c2', 'v2')], 'p2')).toMatchObject({ delivered: 0, rejected: 1 });
    const [entry] = await stores.quarantine.list();
    expect([entry!.attempts, JSON.parse(entry!.raw).name]).toEqual([1, 'v2']);
    b.refuse.clear();
    expect(await deliver([customer('c2', 'v3')], 'p3')).toMatchObject({ delivered: 1, rejected: 0 });
    expect(await stores.quarantine.list()).toEqual([]);
    expect(a.written.map((w) => w.version)).toEqual(['v1', 'v2', 'v3']);
    expect(b.written.map((w) => w.version)).toEqual(['v3']);
    expect(await seen()).toBe(1);
  });

  it('an acknowledgement naming a key that is not in the batch fails the delivery: nothing is remembered', async () => {
    const { stores, b, deliver, seen } = await setup();
    b.answer = { rejected: [{ key: 'nope', reason: 'x' }] };
    await expect(deliver([customer('c1', 'one')])).rejects.toThrow('sink b, stream customers, batch p1_');
    b.answer = { rejected: 'all' };
    await expect(deliver([customer('c1', 'one')])).rejects.toThrow(/expected nothing or \{ rejected: \[\{ key, reason \}\] \}/);
    expect(await seen()).toBe(0);
    expect(await stores.quarantine.list()).toEqual([]);
  });
});


describe('webhook events in the one quarantine', () => {
  it('an event parked as failed is listed with its body and reason; processed later, it leaves the quarantine', async () => {
    const { stores } = await setup();
    const inbox = stores.webhookInbox;
    const entry = { key: 'event:9', eventType: 'load#info_updated', family: 'load', referenceNumber: 'M1', body: '{"eventType":"load#info_updated"}', source: 'delivery' as const, occurredAt: null, receivedAt: '2024-06-01T00:00:00.000Z' };
    expect(await inbox.accept(entry, 60_000)).toBe('stored');
    const [row] = await inbox.due(10, '2024-06-02T00:00:00.000Z');
    expect(await inbox.markFailed(row!, 'GET /loads/M1: HTTP 500', '2024-06-01T00:01:00.000Z', 2)).toBe('pending');
    expect(await stores.quarantine.list()).toEqual([]);
    expect(await inbox.markFailed({ ...row!, attempts: 1 }, 'GET /loads/M1: HTTP 500', '2024-06-01T00:01:00.000Z', 2)).toBe('failed');
    expect((await stores.quarantine.list()).map((e) => [e.kind, e.stream, e.item_key, e.reason, e.raw, e.attempts, e.webhook_event_id])).toEqual([
      ['webhook', 'webhook:load', 'event:9', 'GET /loads/M1: HTTP 500', entry.body, 2, row!.id],
    ]);
    await inbox.rearm([row!.id], '2024-06-03T00:00:00.000Z');
    expect((await inbox.byIds([row!.id]))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    await inbox.markDone([row!], '2024-06-03T00:00:01.000Z');
    expect(await stores.quarantine.list()).toEqual([]);
  });
});
