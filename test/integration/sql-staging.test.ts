import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import type { ConnectorInstance, InboundUnit } from '../../src/contracts/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { availableTargets, createTarget, type SqlTarget, type TargetKind } from '../helpers/sql-targets.js';

const targets = await availableTargets();
const never = () => new AbortController().signal;

describe.each(['sqlite', 'postgres', 'mariadb'] as TargetKind[])('sql staging source on %s', (kind) => {
  const url = targets[kind];
  let target: SqlTarget;
  let counter = 0;
  beforeAll(async () => {
    if (url) target = await createTarget(kind, url, `staging_${kind}`);
  });
  afterAll(async () => {
    await target?.drop();
  });

  async function open(staging: Record<string, unknown> = {}) {
    const table = `requests_${++counter}`;
    const config = sqlOptionsSchema.parse({ ...target.options, staging: { table, claimBatch: 3, ...staging } });
    const instances: ConnectorInstance[] = [];
    const start = async () => {
      const instance = await sqlConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: process.cwd(), mappings: new Map() });
      await instance.init?.(never());
      instances.push(instance);
      return instance;
    };
    const first = await start();
    const t = target.table(table);
    const insert = (rows: { erp_key: string; kind: string; payload: string | null }[]) => target.reader.insertInto(t).values(rows).execute();
    const all = async () => (await target.reader.selectFrom(t).selectAll().orderBy('id').execute()) as Record<string, any>[];
    return { first, start, insert, all, table: t, close: () => Promise.all(instances.map((i) => i.close())) };
  }

  it.skipIf(!url)('peek (push --dry-run) reads every new row in units of claimBatch without claiming or changing any', async () => {
    const s = await open();
    await s.insert([1, 2, 3, 4].map((i) => ({ erp_key: `P-${i}`, kind: 'create_load', payload: JSON.stringify({ type_of_load: 'IMPORT' }) })));
    const before = await s.all();
    const source = s.first.source!;
    const peeked = await source.peek!(never());
    const ids = before.map((r) => String(r.id));
    expect(peeked.map((u) => [u.id, u.requests.map((r) => r.ref)])).toEqual([
      [`peek-${ids[0]}-${ids[2]}`, ids.slice(0, 3)],
      [`peek-${ids[3]}-${ids[3]}`, ids.slice(3)],
    ]);
    expect(peeked[0]!.requests[0]!.fields).toEqual({ erp_key: 'P-1', kind: 'create_load', type_of_load: 'IMPORT' });
    expect(await s.all()).toEqual(before);
    // The rows are still there for the real claim.
    expect((await source.take(never()))[0]!.requests.map((r) => r.ref)).toEqual(ids.slice(0, 3));
    await s.close();
  });

  it.skipIf(!url)('creates the staging table; take claims new rows, accepted queues them, writeBack records the outcome', async () => {
    const s = await open();
    await s.insert([
      { erp_key: 'ERP-1', kind: 'create_load', payload: JSON.stringify({ type_of_load: 'IMPORT', caller: 'Acme "Q" Ünï 🚚' }) },
      { erp_key: 'ERP-2', kind: 'change_status', payload: JSON.stringify({ reference_number: 'M1', status: 'AVAILABLE', erp_key: 'spoofed' }) },
      { erp_key: 'ERP-3', kind: 'create_load', payload: '{not json' },
      { erp_key: 'ERP-4', kind: 'create_load', payload: null },
    ]);
    const source = s.first.source!;
    const units = await source.take(never());
    expect(units).toHaveLength(1);
    const unit = units[0]!;
    expect(unit.requests.map((r) => r.fields.erp_key)).toEqual(['ERP-1', 'ERP-2', 'ERP-3']);
    expect(unit.requests[0]!.fields).toEqual({ erp_key: 'ERP-1', kind: 'create_load', type_of_load: 'IMPORT', caller: 'Acme "Q" Ünï 🚚' });
    // The columns win over a payload field of the same name.
    expect(unit.requests[1]!.fields.erp_key).toBe('ERP-2');
    expect(unit.requests[2]!.problem).toMatch(/^payload is not valid JSON/);
    expect(unit.id).toBe(`claim-${unit.requests[0]!.ref}-${unit.requests[2]!.ref}`);
    expect((await s.all()).map((r) => r.status)).toEqual(['claimed', 'claimed', 'claimed', 'new']);

    await source.accepted(unit, never());
    expect((await s.all()).map((r) => r.status)).toEqual(['queued', 'queued', 'queued', 'new']);
    const finishedAt = '2024-05-01T10:00:00.000Z';
    await source.writeBack(
      unit.id,
      [
        { ref: unit.requests[0]!.ref, status: 'done', referenceNumber: 'M00000042', loadId: 'abc', outboxId: 7, finishedAt },
        { ref: unit.requests[1]!.ref, status: 'done', finishedAt },
        { ref: unit.requests[2]!.ref, status: 'failed', error: 'payload is not valid JSON', finishedAt },
      ],
      never(),
    );
    const rows = await s.all();
    expect(rows.map((r) => [r.erp_key, r.status, r.reference_number, r.load_id, r.error, r.outbox_id === null ? null : Number(r.outbox_id)])).toEqual([
      ['ERP-1', 'done', 'M00000042', 'abc', null, 7],
      ['ERP-2', 'done', null, null, null, null],
      ['ERP-3', 'failed', null, null, 'payload is not valid JSON', null],
      ['ERP-4', 'new', null, null, null, null],
    ]);
    expect(new Date(rows[0]!.finished_at).toISOString()).toBe(finishedAt);
    expect(rows[0]!.created_at).not.toBeNull();

    const next = await source.take(never());
    expect(next.flatMap((u) => u.requests.map((r) => r.fields.erp_key))).toEqual(['ERP-4']);
    expect(await source.take(never())).toEqual([]);
    await s.close();
  });

  it.skipIf(!url)('two daemons taking at the same time never claim the same row', async () => {
    const s = await open({ claimBatch: 7 });
    const second = await s.start();
    await s.insert(Array.from({ length: 60 }, (_, i) => ({ erp_key: `K${i}`, kind: 'create_load', payload: '{}' })));
    const taken: InboundUnit[] = [];
    const loop = async (instance: ConnectorInstance) => {
      for (;;) {
        const units = await instance.source!.take(never());
        if (units.length === 0) return;
        taken.push(...units);
      }
    };
    await Promise.all([loop(s.first), loop(second), loop(s.first), loop(second)]);
    const keys = taken.flatMap((u) => u.requests.map((r) => String(r.fields.erp_key)));
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);
    expect(new Set(taken.map((u) => u.id)).size).toBe(taken.length);
    await s.close();
  });

  it.skipIf(!url)('rows left claimed by a crash are claimed again after the claim timeout, not before', async () => {
    const s = await open({ claimTimeout: 'PT1S' });
    await s.insert([{ erp_key: 'C1', kind: 'create_load', payload: '{}' }]);
    const first = await s.first.source!.take(never());
    expect(first[0]!.requests).toHaveLength(1);
    // The daemon "crashes" here: never calls accepted.
    expect(await s.first.source!.take(never())).toEqual([]);
    // The claim timeout is measured on the daemon's local clock (claimed_at is written from it):
    // move that clock 1.3 s forward instead of sleeping. Only Date is faked; the database
    // driver's timers and sockets run in real time.
    vi.useFakeTimers({ toFake: ['Date'] });
    let again: InboundUnit[];
    try {
      vi.setSystemTime(Date.now() + 1_300);
      again = await s.first.source!.take(never());
    } finally {
      vi.useRealTimers();
    }
    expect(again.map((u) => u.id)).toEqual([first[0]!.id]);
    expect(again[0]!.requests[0]!.fields.erp_key).toBe('C1');
    await s.close();
  });
});
