import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import { parseMapping } from '../../src/mapping/index.js';
import type { RecordBatch, SyncRecord } from '../../src/contracts/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { batchOf, record } from '../helpers/records.js';
import { availableTargets, createTarget, type SqlTarget, type TargetKind } from '../helpers/sql-targets.js';
import { mappersOf } from '../helpers/mappers.js';

/**
 * Round trips of the SQL sink per batch, counted at the driver: every `query` call of a pg Client
 * or a mysql2 connection is one request/response exchange with the server (a multi-statement
 * query included). A clean batch must cost at most three (BEGIN, the batch statement, COMMIT);
 * on PostgreSQL one, the statement alone (one statement is one transaction there).
 */
const require = createRequire(import.meta.url);
const targets = await availableTargets();

type Counted = { query: (...args: unknown[]) => unknown };
const sent: string[] = [];
/** Name of each query sent as a named (prepared) statement, '' for unnamed ones. */
const names: string[] = [];
/** Bound parameters of each query. */
const params: number[] = [];
const restores: (() => void)[] = [];
function countQueries(prototype: Counted): void {
  let owner: object | null = prototype;
  while (owner && !Object.prototype.hasOwnProperty.call(owner, 'query')) owner = Object.getPrototypeOf(owner) as object | null;
  const target = owner as Counted;
  const original = target.query;
  target.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { sql?: string; text?: string })?.sql ?? (args[0] as { text?: string })?.text);
    sent.push(text);
    names.push(typeof args[0] === 'object' && args[0] !== null ? String((args[0] as { name?: string }).name ?? '') : '');
    const values = Array.isArray(args[1]) ? args[1] : (args[0] as { values?: unknown[] } | null)?.values;
    params.push(Array.isArray(values) ? values.length : 0);
    return original.apply(this, args);
  };
  restores.push(() => (target.query = original));
}

const things = parseMapping('things', {
  table: 'things',
  key: ['id'],
  includeRaw: true,
  columns: [
    { name: 'id', path: 'id' },
    { name: 'text', path: 'text' },
    { name: 'amount', path: 'amount', transform: { type: 'number', decimals: 2 } },
    { name: 'when_at', path: 'when', transform: 'date' },
  ],
  children: [
    {
      table: 'thing_parts',
      path: 'parts',
      parentKey: { id: 'id' },
      key: ['id', 'n'],
      columns: [
        { name: 'n', path: '$index' },
        { name: 'part', path: 'name' },
      ],
      children: [{ table: 'thing_part_notes', path: 'notes', parentKey: { id: 'id', n: 'n' }, key: ['id', 'n', 'm'], columns: [{ name: 'm', path: '$index' }, { name: 'note', path: 'text' }] }],
    },
  ],
});

const never = () => new AbortController().signal;
const thing = (id: string, version: string, parts: unknown[], overrides: Partial<SyncRecord> = {}) =>
  record('things', id, { id, text: `t${id}@${version}`, amount: '12.345', when: '2024-01-02T03:04:05Z', parts }, { updatedAt: version, ...overrides });
const V1 = '2024-03-01T00:00:00.000Z';
const V2 = '2024-04-01T00:00:00.000Z';

beforeAll(() => {
  countQueries(require('pg').Client.prototype as Counted);
  countQueries(require('mysql2').Connection.prototype as Counted);
});
afterAll(() => restores.forEach((restore) => restore()));
afterEach(() => void (sent.splice(0), names.splice(0), params.splice(0)));

describe.each(['postgres', 'mariadb'] as TargetKind[])('sql sink round trips on %s', (kind) => {
  const url = targets[kind];
  let target: SqlTarget;
  beforeAll(async () => {
    if (url) target = await createTarget(kind, url, `trips_${kind}`);
  });
  afterAll(async () => {
    await target?.drop();
  });
  const openSink = async (tablePrefix: string) => {
    const instance = await sqlConnector.create(sqlOptionsSchema.parse({ ...target.options, tablePrefix }), {
      instanceName: 'erp',
      logger: silentLogger(),
      baseDir: process.cwd(),
      mappings: mappersOf([['things', things]]),
    });
    await instance.init?.(never());
    return instance;
  };

  it.skipIf(!url)('a clean batch of 50 records with children costs at most 3 round trips; versions and children stay exact, also when part of a batch is older', async () => {
    const instance = await openSink('rt_');
    const write = async (batch: RecordBatch) => {
      sent.splice(0);
      const ack = await instance.sink!.write(batch, never());
      return { ack, trips: sent.length, statements: [...sent] };
    };
    const ids = Array.from({ length: 50 }, (_, i) => String(1000 + i));
    // Insert: every record new.
    const first = await write(batchOf('things', 'b1', ids.map((id) => thing(id, V2, [{ name: 'a', notes: [{ text: 'x' }] }, { name: 'b' }]))));
    expect(first.ack?.rejected).toEqual([]);
    expect(first.trips).toBeGreaterThan(0);
    expect(first.trips, first.statements.join('\n---\n')).toBeLessThanOrEqual(kind === 'postgres' ? 1 : 3);

    // Update: every record newer, children replaced under the same child keys.
    const V3 = '2024-05-01T00:00:00.000Z';
    const second = await write(batchOf('things', 'b2', ids.map((id) => thing(id, V3, [{ name: 'new' }]))));
    expect(second.ack?.rejected).toEqual([]);
    expect(second.trips, second.statements.join('\n---\n')).toBeLessThanOrEqual(kind === 'postgres' ? 1 : 3);

    // Half of a batch is a late, older version: the batch takes the statement-per-table path and
    // the older half changes neither its rows nor its children.
    const mixed = await write(
      batchOf('things', 'b2b', ids.map((id, i) => (i % 2 === 0 ? thing(id, '2024-05-02T00:00:00.000Z', [{ name: 'newer', notes: [{ text: 'n' }] }]) : thing(id, V1, [{ name: 's1' }, { name: 's2' }])))),
    );
    expect(mixed.ack?.rejected).toEqual([]);
    // The batch statement was tried first and kept nothing (PostgreSQL: it failed on its own guard).
    expect(mixed.statements.length).toBeGreaterThan(kind === 'postgres' ? 1 : 3);

    const main = (await target.reader.selectFrom(target.table('rt_things')).selectAll().orderBy('id').execute()) as Record<string, any>[];
    expect(main.map((r) => [r.id, r.text, String(r.amount)])).toEqual(ids.map((id, i) => [id, i % 2 === 0 ? `t${id}@2024-05-02T00:00:00.000Z` : `t${id}@${V3}`, '12.35']));
    const parts = (await target.reader.selectFrom(target.table('rt_thing_parts')).selectAll().orderBy('id').orderBy('n').execute()) as Record<string, any>[];
    expect(parts.map((r) => [r.id, r.part])).toEqual(ids.map((id, i) => [id, i % 2 === 0 ? 'newer' : 'new']));
    const notes = (await target.reader.selectFrom(target.table('rt_thing_part_notes')).selectAll().orderBy('id').execute()) as Record<string, any>[];
    expect(notes.map((r) => r.id)).toEqual(ids.filter((_, i) => i % 2 === 0));

    // A soft tombstone: the row stays flagged, its children go, still one statement.
    const third = await write(batchOf('things', 'b3', [thing(ids[1]!, '2024-06-01T00:00:00.000Z', [], { op: 'delete' })]));
    expect(third.trips).toBeLessThanOrEqual(kind === 'postgres' ? 1 : 3);
    const gone = (await target.reader.selectFrom(target.table('rt_thing_parts')).selectAll().where('id', '=', ids[1]!).execute()) as unknown[];
    expect(gone).toEqual([]);
    await instance.close();
  });

  it.skipIf(!url || kind !== 'postgres')('every batch of a stream runs as one named statement with one array per column (PostgreSQL), one round trip, values exact', async () => {
    const instance = await openSink('np_');
    const used: string[][] = [];
    for (let b = 0; b < 4; b++) {
      sent.splice(0);
      names.splice(0);
      params.splice(0);
      // Shapes differ (20 then 19… records, 2 parts, 1 note each but the last); new keys, so every row is inserted.
      const batch = batchOf('things', `n${b}`, Array.from({ length: 20 - b }, (_, i) => thing(String(5000 + b * 100 + i), V2, [{ name: `p${b}`, notes: i === 19 - b ? [] : [{ text: `n${i}` }] }, { name: 'q' }])));
      const ack = await instance.sink!.write(batch, never());
      expect(ack?.rejected).toEqual([]);
      expect(sent.length, sent.join('\n---\n')).toBe(1);
      used.push(names.filter((n) => n !== ''));
    }
    // Whatever the row counts, one text: named from the first batch on, the same name each time.
    expect(used[0]).toHaveLength(1);
    expect(used.slice(1)).toEqual([used[0], used[0], used[0]]);
    // One parameter per column (and the stream, the record keys), not one per value.
    expect(Math.max(...params)).toBeLessThan(40);
    const rows = (await target.reader.selectFrom(target.table('np_things')).select(['id', 'text']).orderBy('id').execute()) as Record<string, any>[];
    expect(rows).toHaveLength(74);
    expect(rows.every((r) => r.text === `t${r.id}@${V2}`)).toBe(true);
    const parts = (await target.reader.selectFrom(target.table('np_thing_parts')).select(['id', 'part']).orderBy('id').orderBy('n').execute()) as Record<string, any>[];
    expect(parts.filter((p) => p.id === '5301').map((p) => p.part)).toEqual(['p3', 'q']);
    expect(parts).toHaveLength(148);
    const notes = (await target.reader.selectFrom(target.table('np_thing_part_notes')).select(['id']).execute()) as Record<string, any>[];
    expect(notes).toHaveLength(70);
    await instance.close();
  });
});
