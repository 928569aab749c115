import { describe, expect, it } from 'vitest';
import { Kysely, MssqlDialect } from 'kysely';
import * as Tedious from 'tedious';
import { MiniPool } from '../../connectors/sql/mssql-pool.js';
import { encodeRow } from '../../connectors/sql/encode-row.js';
import { deleteByRootKeysQuery, insertQuery, selectVersionsQuery, upsertQuery } from '../../connectors/sql/statements.js';
import { planStream } from '../../connectors/sql/table-plan.js';
import { createTableQuery } from '../../connectors/sql/table-spec.js';
import { specOfPlan } from '../../connectors/sql/ensure-tables.js';
import { stagingTableSpec } from '../../connectors/sql/staging-table.js';
import { columnTypeChanges, migrationStatements } from '../../connectors/sql/schema-migration.js';
import { describeMssqlType } from '../../connectors/sql/type-names.js';
import { parseMapping } from '../../src/mapping/index.js';

/**
 * SQL Server is not available here: its SQL is checked through Kysely's compiler only (a dialect
 * whose connection factory throws, so nothing can reach a server). These assertions pin the
 * MERGE shape (newer-or-equal condition, every value a parameter) and the DDL types.
 */
const db = new Kysely<any>({
  dialect: new MssqlDialect({
    tarn: { Pool: MiniPool as never, options: { min: 0, max: 1 } },
    tedious: {
      ...Tedious,
      connectionFactory: () => {
        throw new Error('no SQL Server in tests: compile only');
      },
    },
  }),
});

const mapping = parseMapping('things', {
  table: 'things',
  key: ['id'],
  includeRaw: true,
  columns: [
    { name: 'id', path: 'id' },
    { name: 'text', path: 'text' },
    { name: 'amount', path: 'amount', transform: { type: 'number', decimals: 2 } },
    { name: 'flag', path: 'flag', transform: 'boolean' },
    { name: 'when_at', path: 'when', transform: 'date' },
  ],
  children: [{ table: 'thing_parts', path: 'parts', parentKey: { id: 'id' }, key: ['id', 'n'], columns: [{ name: 'n', path: '$index' }, { name: 'part', path: 'name' }] }],
});
const plan = planStream(mapping, { dialect: 'mssql', tablePrefix: 'erp_', textLength: 200 });
const ctx = { dialect: 'mssql' as const, schema: 'sync' };
const row = (id: string) =>
  encodeRow({ id, text: "O'Brien; DROP TABLE x --", amount: 1.5, flag: true, when_at: '2024-01-02T03:04:05.000Z', _raw: '{}', _op: 'upsert', _updated_at: '2024-03-12T15:04:05.000Z', _synced_at: '2024-03-13T00:00:00.000Z' }, plan.root, 'mssql', 'upsert');

describe('SQL Server statements (compiled, not run against a live server)', () => {
  it('upserts with MERGE: keyed on the mapping key, newer-or-equal condition, values only as parameters', () => {
    const compiled = upsertQuery(db, ctx, plan.root, [row('1'), row('2')]).compile();
    expect(compiled.sql).toMatch(/^merge into "sync"\."erp_things" as "target" using \(select @1 as "id", @2 as "text", .* union all select @\d+ as "id"/);
    expect(compiled.sql).toContain('as "source" on "target"."id" = "source"."id"');
    expect(compiled.sql).toContain(
      'when matched and ("target"."_updated_at" is null or "source"."_updated_at" is null or "source"."_updated_at" >= "target"."_updated_at") then update set',
    );
    expect(compiled.sql).toMatch(/then update set "text" = "source"\."text", .*"_updated_at" = "source"\."_updated_at" when not matched then insert/);
    expect(compiled.sql.endsWith(";"), compiled.sql).toBe(true);
    expect(compiled.sql).not.toContain("O'Brien");
    expect(compiled.parameters).toContain("O'Brien; DROP TABLE x --");
    expect(compiled.parameters).toHaveLength(2 * plan.root.columns.length);
    expect(compiled.parameters.filter((p) => p instanceof Date)).toHaveLength(6);
  });

  it('replaces children with parameterized DELETE and INSERT; versions are read by key', () => {
    const child = plan.children[0]!;
    expect(deleteByRootKeysQuery(db, ctx, child, [['1'], ['2']]).compile().sql).toBe('delete from "sync"."erp_thing_parts" where "id" in (@1, @2)');
    const insert = insertQuery(db, ctx, child, [encodeRow({ id: '1', n: 0, part: 'a', _op: 'upsert', _updated_at: null, _synced_at: null }, child, 'mssql', 'upsert')]).compile();
    expect(insert.sql).toBe('insert into "sync"."erp_thing_parts" ("id", "n", "part", "_op", "_updated_at", "_synced_at", "_run_id") values (@1, @2, @3, @4, @5, @6, @7)');
    expect(selectVersionsQuery(db, ctx, plan.root, [['1']]).compile().sql).toBe('select "id" as "id", "_updated_at" as "_updated_at" from "sync"."erp_things" where "id" in (@1)');
  });

  it('creates tables with SQL Server types and a named primary key', () => {
    const sql = createTableQuery(db, ctx, specOfPlan(plan.root)).compile().sql;
    expect(sql).toBe(
      'create table "sync"."erp_things" ("id" nvarchar(200) not null, "text" nvarchar(200), "amount" decimal(30, 2), "flag" bit, "when_at" datetimeoffset(3), "_raw" nvarchar(max), "_op" nvarchar(16), "_updated_at" datetimeoffset(3), "_synced_at" datetimeoffset(3), "_run_id" nvarchar(200), "_deleted" bit, constraint "pk_erp_things" primary key ("id"))',
    );
    const staging = createTableQuery(db, ctx, stagingTableSpec('freight_outbound_requests', 200)).compile().sql;
    expect(staging).toContain('"id" bigint identity primary key');
    expect(staging).toContain(`"status" nvarchar(16) default 'new' not null`);
    expect(staging).toContain('"created_at" datetimeoffset(3) default sysdatetimeoffset()');
  });

  it('type changes: an older table (float money, nvarchar(40) timestamps) gets ALTER COLUMN statements', async () => {
    const spec = specOfPlan(plan.root);
    const existing = new Map(
      [
        ['id', describeMssqlType({ data_type: 'nvarchar', length: 200 })],
        ['text', describeMssqlType({ data_type: 'nvarchar', length: 200 })],
        ['amount', describeMssqlType({ data_type: 'float', numeric_precision: 53 })],
        ['flag', 'bit'],
        ['when_at', describeMssqlType({ data_type: 'nvarchar', length: 40 })],
        ['_raw', describeMssqlType({ data_type: 'nvarchar', length: -1 })],
        ['_updated_at', describeMssqlType({ data_type: 'datetimeoffset', datetime_precision: 3 })],
      ].map(([name, type]) => [name!, { name: name!, length: undefined, type: type! }]),
    );
    const changes = columnTypeChanges(ctx, spec, existing, false);
    expect(changes).toEqual([
      { column: 'amount', current: 'float', wanted: 'decimal(30, 2)' },
      { column: 'when_at', current: 'nvarchar(40)', wanted: 'datetimeoffset(3)' },
    ]);
    expect(await migrationStatements(db, ctx, spec, existing, changes)).toEqual([
      'alter table "sync"."erp_things" alter column "amount" decimal(30, 2)',
      `update "sync"."erp_things" set "when_at" = null where "when_at" = ''`,
      'alter table "sync"."erp_things" alter column "when_at" datetimeoffset(3)',
    ]);
  });

  it('never connects: building and compiling needs no server', async () => {
    await expect(db.selectFrom('x').selectAll().execute()).rejects.toThrow('no SQL Server in tests: compile only');
  });
});
