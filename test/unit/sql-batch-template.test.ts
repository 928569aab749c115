import { describe, expect, it } from 'vitest';
import { DummyDriver, Kysely, MysqlAdapter, MysqlIntrospector, MysqlQueryCompiler, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { compileBatchStatement } from '../../connectors/sql/batch-statement.js';
import { groupRecords } from '../../connectors/sql/record-groups.js';
import { planStream } from '../../connectors/sql/table-plan.js';
import { createStreamMapper, loadMapping } from '../../src/mapping/index.js';
import type { SyncRecord } from '../../src/contracts/index.js';
import { Prng } from '../../src/simulator/prng.js';

/**
 * The batch statement's text is compiled once per batch shape and reused with each batch's values
 * (batch-statement.ts). Whatever the values — nulls, deletes, dates, decimals, odd text — the
 * reused statement must be the very statement Kysely builds for the batch: same text, same
 * parameters in the same order. Compile-only (Kysely's dummy driver), the default loads mapping.
 */
const dialects = {
  postgres: new Kysely<any>({ dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() } }),
  mysql: new Kysely<any>({ dialect: { createAdapter: () => new MysqlAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new MysqlIntrospector(db), createQueryCompiler: () => new MysqlQueryCompiler() } }),
};

const DATES = ['2024-05-01T13:45:10.123Z', '2024-05-01T13:45:10.1234567+02:00', '2024-05-01', '', null, 1714571110123, 'Wed, 01 May 2024 13:45:10 GMT'];
const AMOUNTS = ['12.345', 0, -0.5, '', null, '1e3', 19.99];

function load(prng: Prng, n: number): Record<string, unknown> {
  const stops = Array.from({ length: prng.int(5) }, (_, i) => ({
    _id: `s${n}-${i}`,
    type: prng.pick(['PULLCONTAINER', 'DELIVERLOAD', null]),
    company_name: prng.pick(['Acme, "Inc."', 'Ünïcode 🚚', '', null]),
    address: { address: prng.pick(['1 Main St\nSuite 2', null]), lat: prng.pick([32.08, null, '12.5']), lng: -81.09 },
    isVoidOut: prng.pick([true, false, 'yes', null]),
  }));
  return {
    _id: `id${n}`,
    reference_number: `M${n}`,
    status: prng.pick(['PENDING', 'DISPATCHED', null]),
    callerName: prng.pick(['Harbor "Foods"', null, '']),
    caller: prng.pick([{ _id: 'c1', company_name: 'C' }, 'c2', null]),
    hazmat: prng.pick([true, false, null, 'no']),
    totalAmount: prng.pick(AMOUNTS),
    taxRate: prng.pick(AMOUNTS),
    weight: prng.pick(AMOUNTS),
    // Now and then a record the mapping refuses (it is left out of the batch, and of its shape).
    lastFreeDay: prng.chance(0.05) ? 'not a date' : prng.pick(DATES),
    createdAt: prng.pick(DATES),
    updatedAt: prng.pick(['2024-05-01T13:45:10.123Z', '2024-06-01T00:00:00.000Z']),
    vessel: prng.pick([{ eta: prng.pick(DATES) }, null]),
    driverOrder: stops,
  };
}

describe('SQL batch statement: text compiled once per batch shape', () => {
  it('equals the statement built afresh, batch after batch, on PostgreSQL and MySQL', async () => {
    const mapper = createStreamMapper(await loadMapping('loads', undefined, { baseDir: '.', variant: 'main' }));
    const prng = new Prng(21);
    let compared = 0;
    for (const [dialect, db] of Object.entries(dialects) as [keyof typeof dialects, Kysely<any>][]) {
      const plan = planStream(mapper.mapping, { dialect, tablePrefix: '', textLength: 255 });
      const ctx = { dialect, schema: prng.chance(0.5) ? 'erp' : undefined };
      const shapes = new Set<string>();
      for (let b = 0; b < 60; b++) {
        // Few sizes, so shapes repeat (the reused path) and differ (new templates).
        const size = prng.pick([1, 2, 3]);
        const records: SyncRecord[] = Array.from({ length: size }, (_, i) => {
          const data = load(prng, b * 10 + i);
          return { stream: 'loads', key: String(data.reference_number), op: prng.chance(0.2) ? 'delete' : 'upsert', updatedAt: String(data.updatedAt), data, syncedAt: '2024-06-02T00:00:00.000Z' };
        });
        const { batch, errors } = mapper.map({ stream: 'loads', batchId: `b${b}`, records });
        const groups = groupRecords(batch, records, errors, plan);
        if (groups.length === 0) continue;
        const errorsMirror = { table: 'freight_sync_errors', stream: 'loads' };
        const reused = compileBatchStatement(db, ctx, plan, groups, errorsMirror, { unnest: false });
        const fresh = compileBatchStatement(db, ctx, plan, groups, errorsMirror, { reuse: false, unnest: false });
        expect(reused.sql).toBe(fresh.sql);
        expect(reused.parameters).toEqual(fresh.parameters);
        shapes.add(reused.sql);
        compared++;
      }
      // Batches of the same shape did come round again (the template was reused, not only built).
      expect(shapes.size).toBeLessThan(40);
      expect(shapes.size).toBeGreaterThan(3);
    }
    expect(compared).toBeGreaterThan(80);
  });
});
