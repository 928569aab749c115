import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema, isSqlRowError } from '../../connectors/sql/index.js';
import { parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import type { ConnectorInstance } from '../../src/contracts/index.js';
import type { RecordBatch, SyncRecord } from '../../src/contracts/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { batchOf, record } from '../helpers/records.js';
import { availableTargets, createTarget, type SqlTarget, type TargetKind } from '../helpers/sql-targets.js';
import { mappersOf } from '../helpers/mappers.js';

const targets = await availableTargets();

const things = parseMapping('things', {
  table: 'things',
  key: ['id'],
  includeRaw: true,
  columns: [
    { name: 'id', path: 'id' },
    { name: 'text', path: 'text' },
    { name: 'code', path: 'code', sqlType: 'varchar(10)' },
    { name: 'amount', path: 'amount', transform: { type: 'number', decimals: 2 } },
    { name: 'count', path: 'count', transform: 'number' },
    { name: 'flag', path: 'flag', transform: 'boolean' },
    { name: 'when_at', path: 'when', transform: 'date' },
    { name: 'tags', path: 'tags' },
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
const thing = (id: string, extra: Record<string, unknown> = {}, overrides: Partial<SyncRecord> = {}) =>
  record('things', id, { id, text: `t${id}`, code: 'C1', amount: '12.345', count: 3, flag: true, when: '2024-01-02T03:04:05Z', parts: [{ name: 'a', notes: [{ text: 'x' }] }, { name: 'b' }], ...extra }, overrides);

describe.each(['sqlite', 'postgres', 'mariadb'] as TargetKind[])('sql connector on %s', (kind) => {
  const url = targets[kind];
  let target: SqlTarget;
  let counter = 0;
  beforeAll(async () => {
    if (url) target = await createTarget(kind, url, `conn_${kind}`);
  });
  afterAll(async () => {
    await target?.drop();
  });

  /** A connector on its own table prefix, so every test starts from empty tables. */
  async function open(options: Record<string, unknown> = {}, mappings: [string, StreamMapping][] = [['things', things]], logger = silentLogger()) {
    const prefix = `t${++counter}_`;
    const config = sqlOptionsSchema.parse({ ...target.options, tablePrefix: prefix, ...options });
    const instance: ConnectorInstance = await sqlConnector.create(config, { instanceName: 'erp', logger, baseDir: process.cwd(), mappings: mappersOf(mappings) });
    await instance.init?.(never());
    const write = (batch: RecordBatch, signal = never()) => instance.sink!.write(batch, signal);
    const rows = async (table: string, order: string[] = ['id']) => {
      let q = target.reader.selectFrom(target.table(`${prefix}${table}`)).selectAll();
      for (const o of order) q = q.orderBy(o);
      return (await q.execute()) as Record<string, any>[];
    };
    return { instance, write, rows, prefix, close: () => instance.close() };
  }

  it.skipIf(!url)('creates the tables and upserts records with their child and grandchild rows', async () => {
    const c = await open();
    await c.write(batchOf('things', 'b1', [thing('1'), thing('2', { parts: [{ name: 'only' }] })]));
    const main = await c.rows('things');
    expect(main.map((r) => [r.id, r.text, r.code, Number(r.amount), Number(r.count), Boolean(Number(r.flag)), r._op])).toEqual([
      ['1', 't1', 'C1', 12.35, 3, true, 'upsert'],
      ['2', 't2', 'C1', 12.35, 3, true, 'upsert'],
    ]);
    expect(new Date(main[0]!.when_at).toISOString()).toBe('2024-01-02T03:04:05.000Z');
    expect(new Date(main[0]!._updated_at).toISOString()).toBe('2024-03-12T15:04:05.000Z');
    // jsonb (PostgreSQL) and JSON (MariaDB) come back parsed; SQLite's text as text.
    expect((typeof main[0]!._raw === 'string' ? JSON.parse(main[0]!._raw) : main[0]!._raw).id).toBe('1');
    expect(Boolean(Number(main[0]!._deleted))).toBe(false);
    expect((await c.rows('thing_parts', ['id', 'n'])).map((r) => [r.id, Number(r.n), r.part])).toEqual([['1', 0, 'a'], ['1', 1, 'b'], ['2', 0, 'only']]);
    expect((await c.rows('thing_part_notes', ['id', 'n', 'm'])).map((r) => [r.id, Number(r.n), Number(r.m), r.note])).toEqual([['1', 0, 0, 'x']]);
    await c.close();
  });

  it.skipIf(!url)('the same batch twice creates no duplicates; a newer version replaces the children', async () => {
    const c = await open();
    const batch = batchOf('things', 'b1', [thing('1'), thing('2')]);
    await c.write(batch);
    await c.write(batch);
    expect(await c.rows('things')).toHaveLength(2);
    expect(await c.rows('thing_parts', ['id', 'n'])).toHaveLength(4);
    await c.write(batchOf('things', 'b2', [thing('1', { text: 'new', parts: [{ name: 'z' }] }, { updatedAt: '2024-03-13T00:00:00.000Z' })]));
    expect((await c.rows('things')).map((r) => [r.id, r.text])).toEqual([['1', 'new'], ['2', 't2']]);
    expect((await c.rows('thing_parts', ['id', 'n'])).map((r) => [r.id, Number(r.n), r.part])).toEqual([['1', 0, 'z'], ['2', 0, 'a'], ['2', 1, 'b']]);
    expect((await c.rows('thing_part_notes', ['id', 'n', 'm'])).map((r) => r.id)).toEqual(['2']);
    await c.close();
  });

  it.skipIf(!url)('newer-or-equal wins: a late older version overwrites neither the row nor its children', async () => {
    const c = await open();
    await c.write(batchOf('things', 'b1', [thing('1', { text: 'newest', parts: [{ name: 'n1' }] }, { updatedAt: '2024-05-01T00:00:00.000Z' })]));
    await c.write(batchOf('things', 'b0', [thing('1', { text: 'old', parts: [{ name: 'o1' }, { name: 'o2' }] }, { updatedAt: '2024-04-01T00:00:00.000Z' })]));
    expect((await c.rows('things')).map((r) => r.text)).toEqual(['newest']);
    expect((await c.rows('thing_parts', ['id', 'n'])).map((r) => r.part)).toEqual(['n1']);
    // Equal version: the incoming row wins (a replay may carry a fixed mapping).
    await c.write(batchOf('things', 'b1', [thing('1', { text: 'same-version', parts: [] }, { updatedAt: '2024-05-01T00:00:00.000Z' })]));
    expect((await c.rows('things')).map((r) => r.text)).toEqual(['same-version']);
    expect(await c.rows('thing_parts', ['id', 'n'])).toEqual([]);
    // No version on either side: the latest write wins.
    await c.write(batchOf('things', 'b3', [thing('2', { text: 'v1' }, { updatedAt: null })]));
    await c.write(batchOf('things', 'b4', [thing('2', { text: 'v2' }, { updatedAt: null })]));
    expect((await c.rows('things')).map((r) => [r.id, r.text])).toEqual([['1', 'same-version'], ['2', 'v2']]);
    await c.close();
  });

  it.skipIf(!url)('a tombstone soft-deletes the row and removes its children; hard mode deletes the row', async () => {
    const soft = await open();
    await soft.write(batchOf('things', 'b1', [thing('1'), thing('2')]));
    await soft.write(batchOf('things', 'b2', [thing('1', {}, { op: 'delete', updatedAt: '2024-03-14T00:00:00.000Z' })]));
    expect((await soft.rows('things')).map((r) => [r.id, Boolean(Number(r._deleted)), r._op])).toEqual([['1', true, 'delete'], ['2', false, 'upsert']]);
    expect((await soft.rows('thing_parts', ['id', 'n'])).map((r) => r.id)).toEqual(['2', '2']);
    expect((await soft.rows('thing_part_notes', ['id', 'n', 'm'])).map((r) => r.id)).toEqual(['2']);
    await soft.close();

    const hard = await open({ deleteMode: 'hard' });
    await hard.write(batchOf('things', 'b1', [thing('1'), thing('2')]));
    await hard.write(batchOf('things', 'b2', [thing('1', {}, { op: 'delete', updatedAt: '2024-03-14T00:00:00.000Z' })]));
    expect((await hard.rows('things')).map((r) => r.id)).toEqual(['2']);
    expect((await hard.rows('thing_parts', ['id', 'n'])).map((r) => r.id)).toEqual(['2', '2']);
    await hard.close();
  });

  it.skipIf(!url)('stores unicode, emoji, quotes, NULLs and nested arrays; rejects a too-long value by name and keeps the rest', async () => {
    const { logger, text: logText } = capturingLogger('info');
    const c = await open({}, undefined, logger);
    const nasty = `O'Brien "quoted" \\ back; DROP TABLE things; -- Ünïcødé 日本語 🚚🎉`;
    const ack = await c.write(
      batchOf('things', 'b1', [
        thing('1', { text: nasty, tags: [[1, 2], { deep: ['x', null] }] }),
        thing('2', { code: 'THIS-IS-FAR-TOO-LONG' }),
        thing('3', { text: null, amount: null, count: null, flag: null, when: null, tags: null, parts: null }),
        thing("4'; --", { text: '🚚' }),
      ]),
    );
    const main = await c.rows('things');
    expect(main.map((r) => r.id)).toEqual(['1', '3', "4'; --"]);
    expect(main[0]!.text).toBe(nasty);
    expect(JSON.parse(main[0]!.tags)).toEqual([[1, 2], { deep: ['x', null] }]);
    expect([main[1]!.text, main[1]!.amount, main[1]!.count, main[1]!.flag, main[1]!.when_at, main[1]!.tags]).toEqual([null, null, null, null, null, null]);
    expect(main[2]!.text).toBe('🚚');
    // The acknowledgement names the refused record (the engine quarantines it); the errors table mirrors it.
    expect(ack?.rejected.map((r) => r.key)).toEqual(['2']);
    expect(ack?.rejected[0]!.reason).toContain(`stream things, key 2, table ${c.prefix}things, column code:`);
    const errors = (await target.reader.selectFrom(target.table(`${c.prefix}sync_errors`)).selectAll().execute()) as Record<string, any>[];
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ stream: 'things', record_key: '2', table_name: `${c.prefix}things`, column_name: 'code', batch_id: 'b1', op: 'upsert' });
    expect(errors[0]!.message).toContain(`stream things, key 2, table ${c.prefix}things, column code:`);
    expect(JSON.parse(errors[0]!.raw).code).toBe('THIS-IS-FAR-TOO-LONG');
    await new Promise((resolve) => setImmediate(resolve)); // log lines reach the capture a tick later
    expect(logText()).toContain('"column":"code"');
    // The rejected record's children did not land either (a record is all or nothing).
    expect((await c.rows('thing_parts', ['id', 'n'])).map((r) => r.id)).toEqual(['1', '1', "4'; --", "4'; --"]);
    await c.close();
  });

  it.skipIf(!url)('onRowError fail: the batch is rolled back and the error names stream, key, table and column', async () => {
    const c = await open({ onRowError: 'fail' });
    const error = await c.write(batchOf('things', 'b1', [thing('1'), thing('2', { code: 'THIS-IS-FAR-TOO-LONG' })])).catch((e: unknown) => e);
    expect(isSqlRowError(error)).toBe(true);
    expect((error as Error).message).toMatch(new RegExp(`^stream things, key 2, table ${c.prefix}things, column code: `));
    expect(await c.rows('things')).toEqual([]);
    await c.close();
  });

  it.skipIf(!url)('records that fail to map are acknowledged as rejected and mirrored in the errors table; writing the key later clears the mirror', async () => {
    const c = await open();
    const ack = await c.write(batchOf('things', 'b1', [thing('1'), thing('2', { amount: 'twelve' })]));
    expect(ack?.rejected.map((r) => r.key)).toEqual(['2']);
    expect(ack?.rejected[0]!.reason).toContain('column amount');
    expect((await c.rows('things')).map((r) => r.id)).toEqual(['1']);
    const errors = async () => (await target.reader.selectFrom(target.table(`${c.prefix}sync_errors`)).selectAll().execute()) as Record<string, any>[];
    expect((await errors()).map((e) => [e.record_key, e.column_name, e.table_name])).toEqual([['2', 'amount', 'things']]);
    // The re-delivered (fixed) record lands: its mirror rows go in the same transaction.
    expect(await c.write(batchOf('things', 'b2', [thing('2')]))).toEqual({ rejected: [] });
    expect((await c.rows('things')).map((r) => r.id)).toEqual(['1', '2']);
    expect(await errors()).toEqual([]);
    await c.close();
  });

  it.skipIf(!url)('createTables false: an existing table without a mapped column fails init naming table, column and the ALTER TABLE', async () => {
    const c = await open();
    await c.close();
    const narrower = parseMapping('things', { table: 'things', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: 'text', path: 'text' }, { name: 'extra_col', path: 'x', transform: 'number' }] });
    const config = sqlOptionsSchema.parse({ ...target.options, tablePrefix: c.prefix, createTables: false });
    const instance = await sqlConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: process.cwd(), mappings: mappersOf([['things', narrower]]) });
    const error = await instance.init!(never()).catch((e: unknown) => e);
    await instance.close();
    expect((error as Error).message).toContain(`${c.prefix}things`);
    expect((error as Error).message).toContain('has no column extra_col');
    expect((error as Error).message).toMatch(/alter table .*add column .extra_col. (double|real|float)/i);
  });

  it.skipIf(!url)('createTables false: a missing table fails init clearly', async () => {
    const config = sqlOptionsSchema.parse({ ...target.options, tablePrefix: 'never_created_', createTables: false });
    const instance = await sqlConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: process.cwd(), mappings: mappersOf([['things', things]]) });
    const error = await instance.init!(never()).catch((e: unknown) => e);
    await instance.close();
    expect((error as Error).message).toMatch(/never_created_sync_errors.*does not exist and createTables is false/);
  });

  it.skipIf(!url)('check() passes while connected and close() ends the pool', async () => {
    const c = await open();
    await expect(c.instance.check!(never())).resolves.toBeUndefined();
    await c.close();
    await expect(c.instance.check!(never())).rejects.toThrow();
  });

  it.skipIf(!url)('an aborted write commits nothing', async () => {
    const c = await open();
    const controller = new AbortController();
    controller.abort();
    await expect(c.write(batchOf('things', 'b1', [thing('1')]), controller.signal)).rejects.toThrow();
    expect(await c.rows('things')).toEqual([]);
    await c.close();
  });
});
