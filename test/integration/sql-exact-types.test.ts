import { readdir, readFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvConnector, csvOptionsSchema } from '../../connectors/csv/index.js';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import { errorsTableSpec } from '../../connectors/sql/errors-table.js';
import { specOfPlan } from '../../connectors/sql/ensure-tables.js';
import { planStream } from '../../connectors/sql/table-plan.js';
import { createTable, type TableSpec } from '../../connectors/sql/table-spec.js';
import type { SqlDialectName } from '../../connectors/sql/options.js';
import type { ConnectorInstance } from '../../src/contracts/index.js';
import { loadMapping, parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import { createStores } from '../../src/state/stores/index.js';
import { deliverBatch, runStream, type NamedSink, type StreamRunDeps } from '../../src/sync/stream-runner.js';
import type { AnyStreamDefinition } from '../../src/sync/stream-definition.js';
import { streamByName } from '../../src/sync/streams/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { mappersOf } from '../helpers/mappers.js';
import { fixture } from '../helpers/records.js';
import { freshStateDatabase } from '../helpers/state-db.js';
import { plan } from '../helpers/strategy-fakes.js';
import { availableTargets, createTarget, type SqlTarget, type TargetKind } from '../helpers/sql-targets.js';

/**
 * Issue 12, exact types: money the API sends as decimal strings ("1234567.89", "0.10", "0.20")
 * and as a bare JSON number (an invoice's totalAmount) reaches PostgreSQL, MariaDB, SQLite and the
 * CSV drop with exactly those digits, read back as text; rows carry the run history id in
 * `_run_id`; and a table an older version created is upgraded (new columns added on init, type
 * changes listed and applied by `migrate`).
 */
const targets = await availableTargets();
const never = () => new AbortController().signal;
const DIALECT: Record<TargetKind, SqlDialectName> = { sqlite: 'sqlite', postgres: 'postgres', mariadb: 'mysql' };

/** The invoice fixture with the amounts of the acceptance criterion. */
function invoice(): Record<string, unknown> {
  const data = structuredClone(fixture('invoice')) as Record<string, any>;
  data.totalAmount = 1234567.89;
  data.invoice[0].pricing[0].amount = '1234567.89';
  data.invoice[0].pricing[1].amount = '0.10';
  data.invoice[1].pricing[0].amount = '0.20';
  return data;
}

/** The invoices stream as the engine runs it, reading one fixed page instead of the API. */
function invoicesReading(records: Record<string, unknown>[]): AnyStreamDefinition {
  const real = streamByName('invoices');
  return {
    ...real,
    dependsOnCommits: true,
    read: async function* () {
      yield { records, cursor: real.resetCursor('main', '2024-03-01T00:00:00.000Z'), batchId: 'fixed', pages: 1, rejected: [] };
    },
  } as AnyStreamDefinition;
}

/** A column's value as the database's own text, never through a JavaScript number. */
function asText(kind: TargetKind, column: string) {
  if (kind === 'postgres') return sql<string>`${sql.ref(column)}::text`;
  if (kind === 'mariadb') return sql<string>`cast(${sql.ref(column)} as char)`;
  return sql<string>`cast(${sql.ref(column)} as text)`;
}

/** The capturing logger's stream delivers buffered lines on later ticks. */
async function flushed(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

async function engine() {
  const { db } = await freshStateDatabase();
  const stores = createStores(db);
  const client = { stats: { requests: 0 }, variant: 'main' };
  const deps = { stores, client, logger: silentLogger() } as unknown as StreamRunDeps;
  return { db, stores, deps };
}

describe.each(['sqlite', 'postgres', 'mariadb'] as TargetKind[])('exact types on %s', (kind) => {
  const url = targets[kind];
  let target: SqlTarget;
  let mapping: StreamMapping;
  beforeAll(async () => {
    mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant: 'main' });
    if (url) target = await createTarget(kind, url, `exact_${kind}`);
  });
  afterAll(async () => {
    await target?.drop();
  });

  it.skipIf(!url)('money arrives with exactly its digits; _raw is JSON; every row carries the run history id', async () => {
    const config = sqlOptionsSchema.parse({ ...target.options, tablePrefix: 'a_' });
    const instance = await sqlConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: process.cwd(), mappings: mappersOf([['invoices', mapping]]) });
    await instance.init!(never());
    const { db, stores, deps } = await engine();
    try {
      const summary = await runStream(deps, {
        definition: invoicesReading([invoice()]),
        sinks: [{ name: 'erp', sink: instance.sink! }],
        pageSize: 100,
        options: {},
        plan: plan(),
        command: 'sync',
        signal: never(),
      });
      expect(summary).toMatchObject({ status: 'ok', delivered: 1 });
      const [run] = await stores.runs.recent(1);
      expect(run).toBeDefined();

      const lines = await target.reader
        .selectFrom(target.table('a_invoice_pricing_lines'))
        .select([asText(kind, 'amount').as('amount'), asText(kind, 'unit').as('unit'), 'entry_no', 'line_no', '_run_id'])
        .orderBy('entry_no')
        .orderBy('line_no')
        .execute();
      expect(lines.map((l) => l.amount)).toEqual(['1234567.89', '0.10', '0.20']);
      expect(lines.map((l) => l._run_id)).toEqual([String(run!.id), String(run!.id), String(run!.id)]);
      if (kind === 'sqlite') {
        const types = await sql<{ t: string }>`select typeof(amount) as t from a_invoice_pricing_lines`.execute(target.reader);
        expect(types.rows.map((r) => r.t)).toEqual(['text', 'text', 'text']);
      }
      // The sum is exact in the database too ("0.10" + "0.20" = 0.30, not 0.30000000000000004).
      if (kind !== 'sqlite') {
        const total = await target.reader
          .selectFrom(target.table('a_invoice_pricing_lines'))
          .select(kind === 'postgres' ? sql<string>`sum(amount)::text`.as('s') : sql<string>`cast(sum(amount) as char)`.as('s'))
          .where('amount', '<', 1)
          .executeTakeFirstOrThrow();
        expect(total.s).toBe('0.30');
      }

      const header = await target.reader
        .selectFrom(target.table('a_invoices'))
        .select([asText(kind, 'total_amount').as('total'), asText(kind, 'entry_count').as('entries'), '_run_id'])
        .executeTakeFirstOrThrow();
      expect(header).toEqual({ total: '1234567.89', entries: '2', _run_id: String(run!.id) });
      if (kind === 'postgres') {
        const raw = await sql<{ id: string; amount: string; type: string }>`
          select _raw->>'_id' as id, _raw->'invoice'->0->'pricing'->0->>'amount' as amount, pg_typeof(_raw)::text as type
          from ${sql.table(target.table('a_invoices'))}`.execute(target.reader);
        expect(raw.rows).toEqual([{ id: 'inv-1', amount: '1234567.89', type: 'jsonb' }]);
      }
      if (kind === 'mariadb') {
        const raw = await sql<{ id: string }>`select json_value(_raw, '$._id') as id from ${sql.table(target.table('a_invoices'))}`.execute(target.reader);
        expect(raw.rows).toEqual([{ id: 'inv-1' }]);
      }

      // A targeted delivery (a webhook refresh) has no run: its rows carry the delivery's id.
      const changed = invoice();
      (changed.invoice as any[])[1].pricing[0].amount = '0.25';
      await deliverBatch(deps, { definition: streamByName('invoices'), sinks: [{ name: 'erp', sink: instance.sink! }], records: [changed], batchId: 'webhook_7-9', signal: never() });
      const refreshed = await target.reader.selectFrom(target.table('a_invoice_pricing_lines')).select([asText(kind, 'amount').as('amount'), '_run_id']).where('entry_no', '=', 1).executeTakeFirstOrThrow();
      expect(refreshed).toEqual({ amount: '0.25', _run_id: 'webhook_7-9' });
    } finally {
      await instance.close();
      await db.destroy();
    }
  });

  it.skipIf(!url)('a table an older version created: init adds _run_id and the indexes and warns about each type; migrate lists, then applies the changes', async () => {
    const dialect = DIALECT[kind];
    const things = parseMapping('things', {
      table: 'things',
      key: ['id'],
      includeRaw: true,
      columns: [
        { name: 'id', path: 'id' },
        { name: 'amount', path: 'amount', transform: { type: 'decimal', scale: 2 } },
        { name: 'n', path: 'n', transform: 'integer' },
      ],
    });
    // The tables exactly as the previous version created them: doubles, `_raw` as text, `at` as text, no `_run_id`, no indexes.
    const previous = (spec: TableSpec, old: Record<string, Record<SqlDialectName, string>>): TableSpec => ({
      ...spec,
      columns: spec.columns.filter((c) => c.name !== '_run_id').map((c) => (old[c.name] ? { ...c, type: { default: old[c.name]![dialect] } } : c)),
      indexes: [],
    });
    const double = { sqlite: 'real', postgres: 'double precision', mysql: 'double', mssql: 'float' };
    const text = { sqlite: 'text', postgres: 'text', mysql: 'longtext', mssql: 'nvarchar(max)' };
    const stamp = { sqlite: 'text', postgres: 'text', mysql: 'varchar(40)', mssql: 'nvarchar(40)' };
    const planned = planStream(things, { dialect, tablePrefix: 'u_', textLength: 255 });
    const ctx = { dialect, schema: (target.options.schema as string | undefined) ?? undefined };
    const writer = { ...target.options, tablePrefix: 'u_' };
    await createTable(target.reader, ctx, previous(specOfPlan(planned.root), { amount: double, n: double, _raw: text }));
    await createTable(target.reader, ctx, previous(errorsTableSpec('u_sync_errors', 255), { at: stamp, updated_at: stamp }));
    const old = { id: '1', amount: 0.1, n: 3, _raw: '{"id":"1","amount":"0.10"}', _op: 'upsert', _updated_at: null, _synced_at: null, _deleted: false };
    await target.reader.insertInto(target.table('u_things')).values(kind === 'sqlite' ? { ...old, _deleted: 0 } : old).execute();
    await target.reader.insertInto(target.table('u_sync_errors')).values({ stream: 'things', record_key: '9', message: 'old', at: '2024-01-02T03:04:05.000Z' }).execute();

    const { logger, lines } = capturingLogger('info');
    const logs = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const isWarn = (l: Record<string, unknown>) => l.level === 'warn' || l.level === 40;
    const instance: ConnectorInstance = await sqlConnector.create(sqlOptionsSchema.parse(writer), { instanceName: 'erp', logger, baseDir: process.cwd(), mappings: mappersOf([['things', things]]) });
    try {
      await instance.init!(never());
      await flushed();
      const added = logs().filter((l) => /^added (column|index)/.test(String(l.msg))).map((l) => String(l.msg).replace(/ to .*/, ''));
      expect(added).toEqual(expect.arrayContaining(['added column _run_id', 'added index ix_u_things_synced', 'added index ix_u_things_updated']));
      const warned = logs().filter((l) => isWarn(l)).map((l) => [l.column, l.current]);
      const expectedChanges: [string, string][] = [
        ['amount', { sqlite: 'real', postgres: 'double precision', mysql: 'double', mssql: 'float' }[dialect]],
        ['n', { sqlite: 'real', postgres: 'double precision', mysql: 'double', mssql: 'float' }[dialect]],
        ...(kind === 'postgres' ? ([['_raw', 'text']] as [string, string][]) : []),
      ];
      expect(warned).toEqual(expect.arrayContaining(expectedChanges));
      expect(String(logs().find((l) => isWarn(l) && l.column === 'amount')?.msg)).toContain('run `freight-sync sink migrate`');

      // A write after the upgrade fills the new column.
      await instance.sink!.write({ stream: 'things', batchId: 'b', runId: '41', records: [{ stream: 'things', key: '2', op: 'upsert', updatedAt: null, data: { id: '2', amount: '0.20', n: 4 }, syncedAt: '2024-03-13T00:00:00.000Z' }] }, never());

      const listed = await instance.migrate!({ apply: false }, never());
      const byTable = Object.fromEntries(listed.map((m) => [m.table.replace(/^.*\./, ''), m]));
      // SQLite keeps timestamps as ISO 8601 text, so its errors table needs no change.
      expect(Object.keys(byTable).sort()).toEqual(kind === 'sqlite' ? ['u_things'] : ['u_sync_errors', 'u_things']);
      expect(byTable.u_things!.changes.map((c) => c.column)).toEqual(['amount', 'n', ...(kind === 'postgres' ? ['_raw'] : [])]);
      expect(byTable.u_things!.changes.find((c) => c.column === 'amount')?.wanted).toBe({ sqlite: 'text', postgres: 'numeric(30, 2)', mysql: 'decimal(30, 2)', mssql: '' }[dialect]);
      if (kind !== 'sqlite') expect(byTable.u_sync_errors!.changes.map((c) => c.column)).toEqual(['updated_at', 'at']);
      if (kind === 'sqlite') expect(byTable.u_things!.statements.join('\n')).toMatch(/create table .*"u_things__migrate"[\s\S]*insert into[\s\S]*drop table "u_things"[\s\S]*rename to "u_things"/);
      else expect(byTable.u_things!.statements.join('\n')).toMatch(kind === 'postgres' ? /alter table .* alter column "amount" type numeric\(30, 2\)/ : /alter table .* modify column `amount` decimal\(30, 2\)/);
      // Listing changed nothing.
      expect(await instance.migrate!({ apply: false }, never())).toHaveLength(listed.length);

      await instance.migrate!({ apply: true }, never());
      expect(await instance.migrate!({ apply: false }, never())).toEqual([]);
      // Written after the migration: exact on every dialect.
      await instance.sink!.write({ stream: 'things', batchId: 'c', runId: '42', records: [{ stream: 'things', key: '3', op: 'upsert', updatedAt: null, data: { id: '3', amount: '0.30', n: '5' }, syncedAt: '2024-03-13T00:00:00.000Z' }] }, never());
      const rows = await target.reader.selectFrom(target.table('u_things')).select(['id', asText(kind, 'amount').as('amount'), asText(kind, 'n').as('n'), '_run_id']).orderBy('id').execute();
      // Rows 1 and 2 were stored as doubles before the migration: the server turns 0.1 into 0.10;
      // SQLite's rebuild copies the double's text.
      expect(rows).toEqual([
        { id: '1', amount: kind === 'sqlite' ? '0.1' : '0.10', n: '3', _run_id: null },
        { id: '2', amount: kind === 'sqlite' ? '0.2' : '0.20', n: '4', _run_id: '41' },
        { id: '3', amount: '0.30', n: '5', _run_id: '42' },
      ]);
      const errors = await target.reader.selectFrom(target.table('u_sync_errors')).select(['record_key', 'at']).execute();
      expect(errors.map((e) => new Date(e.at as string).toISOString())).toEqual(['2024-01-02T03:04:05.000Z']);
      if (kind === 'postgres') {
        const raw = await sql<{ amount: string }>`select _raw->>'amount' as amount from ${sql.table(target.table('u_things'))} where id = '1'`.execute(target.reader);
        expect(raw.rows).toEqual([{ amount: '0.10' }]);
      }
      // The indexes survived (SQLite rebuilt the table).
      const again = await sqlConnector.create(sqlOptionsSchema.parse(writer), { instanceName: 'erp', logger, baseDir: process.cwd(), mappings: mappersOf([['things', things]]) });
      const before = logs().length;
      await again.init!(never());
      await again.close();
      await flushed();
      expect(logs().slice(before).filter((l) => /^added|is .* but this version writes/.test(String(l.msg)))).toEqual([]);
    } finally {
      await instance.close();
    }
  });
});

describe('exact types in the CSV drop', () => {
  it('writes the digits as they came, and the run id', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'csv-exact-'));
    const mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant: 'main' });
    const instance = await csvConnector.create(csvOptionsSchema.parse({ directory: 'out' }), { instanceName: 'drop', logger: silentLogger(), baseDir: dir, mappings: mappersOf([['invoices', mapping]]) });
    await instance.init?.(never());
    const { db, stores, deps } = await engine();
    try {
      const sinks: NamedSink[] = [{ name: 'drop', sink: instance.sink! }];
      await runStream(deps, { definition: invoicesReading([invoice()]), sinks, pageSize: 100, options: {}, plan: plan(), command: 'sync', signal: never() });
      const [run] = await stores.runs.recent(1);
      const files = await readdir(path.join(dir, 'out'));
      const read = async (table: string) => {
        // The run published one batch: `<time>-<seq>-<table>.csv`.
        const file = files.find((f) => f.endsWith(`-${table}.csv`));
        return parse(await readFile(path.join(dir, 'out', file!)), { columns: true, bom: true }) as Record<string, string>[];
      };
      expect((await read('invoice_pricing_lines')).map((r) => [r.amount, r._run_id])).toEqual([
        ['1234567.89', String(run!.id)],
        ['0.10', String(run!.id)],
        ['0.20', String(run!.id)],
      ]);
      expect((await read('invoices')).map((r) => [r.total_amount, r.entry_count])).toEqual([['1234567.89', '2']]);
    } finally {
      await instance.close();
      await db.destroy();
    }
  });
});
