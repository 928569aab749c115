import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import { compileBatchStatement } from '../../connectors/sql/batch-statement.js';
import { groupRecords } from '../../connectors/sql/record-groups.js';
import { planStream } from '../../connectors/sql/table-plan.js';
import { OLDER_VERSION_IN_BATCH } from '../../connectors/sql/statements.js';
import { createStreamMapper, loadMapping, parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import type { SyncRecord } from '../../src/contracts/index.js';
import { Prng } from '../../src/simulator/prng.js';
import { silentLogger } from '../../src/util/logger.js';
import { availableTargets, createTarget, type SqlTarget } from '../helpers/sql-targets.js';

/**
 * The PostgreSQL batch statement binds one array per column (unnest-statement.ts) where it used to
 * bind one parameter per value (the VALUES form, still built for plans an array cannot carry).
 * Both forms, run on the same batches into twin tables of the default loads mapping, must leave
 * the very same rows — odd dates, decimals, booleans, quotes, backslashes, unicode, NULLs, empty
 * text, tombstones, re-sent keys with newer and older versions — and refuse the same batches.
 */
const targets = await availableTargets();
const url = targets.postgres;

const DATES = ['2024-05-01T13:45:10.123Z', '2024-05-01T13:45:10.1234567+02:00', '2024-05-01', '', null, 1714571110123, 'Wed, 01 May 2024 13:45:10 GMT'];
const AMOUNTS = ['12.345', 0, -0.5, '', null, '1e3', 19.99, '123456789012345678.123456789'];
const TEXTS = ['Acme, "Inc."', 'back\\slash \\" {braces}', 'Ünïcode 🚚', '', null, 'NULL', 'line\nbreak\ttab', "it's"];

function load(prng: Prng, n: number, version: string): Record<string, unknown> {
  const stops = Array.from({ length: prng.int(4) }, (_, i) => ({
    _id: `s${n}-${i}`,
    type: prng.pick(['PULLCONTAINER', 'DELIVERLOAD', null]),
    company_name: prng.pick(TEXTS),
    address: { address: prng.pick(TEXTS), lat: prng.pick([32.08, null, '12.5']), lng: -81.09 },
    isVoidOut: prng.pick([true, false, 'yes', null]),
  }));
  return {
    _id: `id${n}`,
    reference_number: `M${n}`,
    status: prng.pick(['PENDING', 'DISPATCHED', null]),
    callerName: prng.pick(TEXTS),
    caller: prng.pick([{ _id: 'c1', company_name: prng.pick(TEXTS) }, 'c2', null]),
    hazmat: prng.pick([true, false, null, 'no']),
    totalAmount: prng.pick(AMOUNTS),
    taxRate: prng.pick(AMOUNTS),
    weight: prng.pick(AMOUNTS),
    lastFreeDay: prng.pick(DATES),
    createdAt: prng.pick(DATES),
    updatedAt: version,
    vessel: prng.pick([{ eta: prng.pick(DATES) }, null]),
    driverOrder: stops,
  };
}

describe('PostgreSQL batch statement: arrays per column store what the VALUES form stores', () => {
  let target: SqlTarget;
  beforeAll(async () => {
    if (url) target = await createTarget('postgres', url, 'unnest');
  });
  afterAll(async () => {
    await target?.drop();
  });

  /** Runs every batch through both forms into twin tables; same outcomes, same rows. */
  async function compare(mapping: StreamMapping, tables: readonly string[], batches: readonly SyncRecord[][]): Promise<void> {
    const mapper = createStreamMapper(mapping);
    const forms = { arrays: 'ua_', values: 'uv_' } as const;
    for (const tablePrefix of Object.values(forms)) {
      const instance = await sqlConnector.create(sqlOptionsSchema.parse({ ...target.options, tablePrefix }), {
        instanceName: 'erp',
        logger: silentLogger(),
        baseDir: process.cwd(),
        mappings: new Map([[mapping.stream, mapper]]),
      });
      await instance.init?.(new AbortController().signal);
      await instance.close();
    }
    const db = target.reader;
    const schema = String(target.options.schema);
    const ctx = { dialect: 'postgres' as const, schema };
    const outcomes: Record<keyof typeof forms, string[]> = { arrays: [], values: [] };
    for (const [b, records] of batches.entries()) {
      const { batch, errors } = mapper.map({ stream: mapping.stream, batchId: `b${b}`, records });
      for (const [form, tablePrefix] of Object.entries(forms) as [keyof typeof forms, string][]) {
        const plan = planStream(mapping, { dialect: 'postgres', tablePrefix, textLength: 255 });
        const groups = groupRecords(batch, records, errors, plan);
        if (groups.length === 0) continue;
        const statement = compileBatchStatement(db, ctx, plan, groups, { table: `${tablePrefix}sync_errors`, stream: mapping.stream }, { unnest: form === 'arrays' });
        // Arrays: every parameter but the stream name is a column's array.
        const arrays = statement.parameters.filter((p) => Buffer.isBuffer(p) || Array.isArray(p)).length;
        expect(arrays).toBe(form === 'arrays' ? statement.parameters.length - 1 : 0);
        try {
          const result = await db.executeQuery(statement);
          outcomes[form].push(`written ${String((result.rows[0] as { written: unknown }).written)}`);
        } catch (error) {
          // A batch holding a late, older version fails on its own guard and keeps nothing.
          const lost = String((error as Error).message).includes(OLDER_VERSION_IN_BATCH);
          outcomes[form].push(lost ? 'an older version lost' : `refused ${(error as { code?: string }).code}`);
        }
      }
    }
    expect(outcomes.arrays).toEqual(outcomes.values);
    expect(outcomes.arrays.filter((o) => o.startsWith('written') || o === 'an older version lost').length).toBeGreaterThan(batches.length / 2);
    if (batches.length >= 40) expect(outcomes.arrays).toContain('an older version lost');
    for (const table of tables) {
      const rows = async (prefix: string) => {
        const result = await sql<Record<string, unknown>>`select * from ${sql.table(`${schema}.${prefix}${table}`)}`.execute(db);
        return result.rows.map((row) => JSON.stringify(row)).sort();
      };
      const stored = await rows(forms.arrays);
      expect(stored.length).toBeGreaterThan(3);
      expect(stored).toEqual(await rows(forms.values));
    }
  }

  it.skipIf(!url)('same rows in twin tables after 40 batches of odd values, tombstones and late versions; same batches refused', async () => {
    const mapping = await loadMapping('loads', undefined, { baseDir: process.cwd(), variant: 'main' });
    const prng = new Prng(7);
    const batches = Array.from({ length: 40 }, (): SyncRecord[] =>
      Array.from({ length: 1 + prng.int(6) }, () => {
        // Keys recur across batches (updates, children replaced), with versions going either way.
        const n = prng.int(30);
        const version = prng.pick(['2024-05-01T13:45:10.123Z', '2024-06-01T00:00:00.000Z', '2024-07-01T00:00:00.000Z']);
        const data = load(prng, n, version);
        return { stream: 'loads', key: String(data.reference_number), op: prng.chance(0.15) ? 'delete' : 'upsert', updatedAt: version, data, syncedAt: '2024-07-02T00:00:00.000Z' };
      }),
    );
    await compare(mapping, ['loads', 'load_stops'], batches);
  });

  it.skipIf(!url)('a two-column root key: children deleted and replaced per (a, b), as the VALUES form does', async () => {
    const mapping = parseMapping('pairs', {
      table: 'pairs',
      key: ['a', 'b'],
      columns: [
        { name: 'a', path: 'a' },
        { name: 'b', path: 'b', transform: 'integer' },
        { name: 'label', path: 'label' },
      ],
      children: [{ table: 'pair_items', path: 'items', parentKey: { a: 'a', b: 'b' }, key: ['a', 'b', 'n'], columns: [{ name: 'n', path: '$index' }, { name: 'item', path: 'text' }] }],
    });
    const prng = new Prng(11);
    const batches = Array.from({ length: 12 }, (_, i): SyncRecord[] =>
      Array.from({ length: 1 + prng.int(4) }, () => {
        // (x, 1) and (x, 2) share their first column: a delete by `a` alone would take the other's items.
        const a = `k${prng.int(3)}`;
        const b = 1 + prng.int(2);
        const items = Array.from({ length: prng.int(3) }, (_, n) => ({ text: `i${i}-${n}` }));
        const version = `2024-05-${String(1 + i).padStart(2, '0')}T00:00:00.000Z`;
        return { stream: 'pairs', key: `${a}/${b}`, op: 'upsert', updatedAt: version, data: { a, b, label: `l${i}`, items }, syncedAt: '2024-07-02T00:00:00.000Z' };
      }),
    );
    await compare(mapping, ['pairs', 'pair_items'], batches);
  });
});
