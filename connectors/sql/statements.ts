import { sql, type Expression, type OnConflictBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { AnyDb } from './connect.js';
import type { DbRow } from './encode-row.js';
import type { SqlDialectName } from './options.js';
import type { TablePlan } from './table-plan.js';

/**
 * The dialect-specific statements of the sink, all built with Kysely: names through references
 * (quoted by the dialect), values as bound parameters. "Newer or equal wins": a stored row is
 * only overwritten when the incoming `_updated_at` is >= the stored one; a NULL on either side
 * (a stream without versions) lets the incoming row win, so the latest fetch is kept.
 */
export interface StatementContext {
  readonly dialect: SqlDialectName;
  readonly schema: string | undefined;
}

/** The errors table whose rows of the written keys a batch statement clears, and the stream. */
export interface ErrorsMirror {
  readonly table: string;
  readonly stream: string;
}

/** Bound parameters per statement: under each driver's limit (SQL Server: 2100; SQLite: 32766). */
const MAX_PARAMS: Record<SqlDialectName, number> = { sqlite: 30_000, postgres: 30_000, mysql: 30_000, mssql: 2_000 };
/** SQL Server also caps a VALUES list / UNION at 1000 rows; smaller chunks keep statements short elsewhere. */
const MAX_ROWS = 1000;

const VERSION = '_updated_at';

export function qualified(ctx: StatementContext, table: string): string {
  return ctx.schema ? `${ctx.schema}.${table}` : table;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function rowsPerStatement(ctx: StatementContext, columnsPerRow: number): number {
  return Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS[ctx.dialect] / Math.max(1, columnsPerRow))));
}

/** The upsert of one chunk of rows (unique keys within the chunk), not yet executed. */
export function upsertQuery(db: AnyDb, ctx: StatementContext, plan: TablePlan, rows: readonly DbRow[]) {
  const table = qualified(ctx, plan.name);
  const columns = plan.columns.map((c) => c.name);
  // The version column is assigned last: MySQL evaluates SET left to right, so every other
  // column's condition must still see the stored version.
  const updated = columns.filter((c) => !plan.key.includes(c) && c !== VERSION).concat(VERSION);

  switch (ctx.dialect) {
    case 'postgres':
    case 'sqlite':
      return db.insertInto(table).values(rows as DbRow[]).onConflict(newerWinsOnConflict(plan));
    case 'mysql': {
      const stored = sql.ref(VERSION);
      const incoming = sql`VALUES(${stored})`;
      const newer = sql<SqlBool>`(${stored} IS NULL OR ${incoming} IS NULL OR ${incoming} >= ${stored})`;
      return db
        .insertInto(table)
        .values(rows as DbRow[])
        .onDuplicateKeyUpdate(Object.fromEntries(updated.map((c) => [c, sql`IF(${newer}, VALUES(${sql.ref(c)}), ${sql.ref(c)})`])));
    }
    case 'mssql': {
      const source = rows
        .map((row) => db.selectNoFrom((eb) => columns.map((c) => eb.val(row[c]).as(c))))
        .reduce((all, one) => all.unionAll(one));
      return db
        .mergeInto(`${table} as target`)
        .using(source.as('source'), (join) =>
          plan.key.reduce<any>((on, k, i) => (i === 0 ? join.onRef(`target.${k}`, '=', `source.${k}`) : on.onRef(`target.${k}`, '=', `source.${k}`)), join),
        )
        .whenMatchedAnd((eb: any) =>
          eb.or([
            eb(eb.ref(`target.${VERSION}`), 'is', null),
            eb(eb.ref(`source.${VERSION}`), 'is', null),
            eb(eb.ref(`source.${VERSION}`), '>=', eb.ref(`target.${VERSION}`)),
          ]),
        )
        .thenUpdateSet((eb: any) => Object.fromEntries(updated.map((c) => [c, eb.ref(`source.${c}`)])))
        .whenNotMatched()
        .thenInsertValues((eb: any) => Object.fromEntries(columns.map((c) => [c, eb.ref(`source.${c}`)])));
    }
  }
}

/**
 * PostgreSQL's and SQLite's `ON CONFLICT` of the upsert: every column but the key updated, only
 * when the incoming version is newer or equal (or either is NULL).
 */
export function newerWinsOnConflict(plan: TablePlan) {
  const updated = plan.columns.map((c) => c.name).filter((c) => !plan.key.includes(c) && c !== VERSION).concat(VERSION);
  return (oc: OnConflictBuilder<any, any>) =>
    oc
      .columns(plan.key as string[])
      .doUpdateSet((eb) => Object.fromEntries(updated.map((c) => [c, eb.ref(`excluded.${c}`)])))
      .where((eb) =>
        eb.or([
          eb(eb.ref(`${plan.name}.${VERSION}`), 'is', null),
          eb(eb.ref(`excluded.${VERSION}`), 'is', null),
          eb(eb.ref(`excluded.${VERSION}`), '>=', eb.ref(`${plan.name}.${VERSION}`)),
        ]),
      );
}

export function insertQuery(db: AnyDb, ctx: StatementContext, plan: TablePlan, rows: readonly DbRow[]) {
  return db.insertInto(qualified(ctx, plan.name)).values(rows as DbRow[]);
}

/** `(a = ? AND b = ?) OR …` for composite keys, `a IN (…)` for single ones. */
function keyMatch(columns: readonly string[], keys: readonly (readonly unknown[])[]) {
  return (eb: any): Expression<SqlBool> => {
    if (columns.length === 1) return eb(eb.ref(columns[0]!), 'in', keys.map((k) => k[0]));
    return eb.or(keys.map((k) => eb.and(columns.map((c, i) => eb(eb.ref(c), '=', k[i])))));
  };
}

export function selectVersionsQuery(db: AnyDb, ctx: StatementContext, plan: TablePlan, keys: readonly (readonly unknown[])[]) {
  return db
    .selectFrom(qualified(ctx, plan.name))
    .select([...plan.key, VERSION].map((c) => sql.ref(c).as(c)) as any)
    .where(keyMatch(plan.key, keys));
}

/** Deletes the rows of `plan` whose root-key columns match `rootKeys` (children of those parents). */
export function deleteByRootKeysQuery(db: AnyDb, ctx: StatementContext, plan: TablePlan, rootKeys: readonly (readonly unknown[])[]) {
  return db.deleteFrom(qualified(ctx, plan.name)).where(keyMatch(plan.rootKeyColumns, rootKeys));
}

/** Hard delete of root rows, each only when the tombstone is not older than the stored row. */
export function hardDeleteQuery(db: AnyDb, ctx: StatementContext, plan: TablePlan, tombstones: readonly { key: readonly unknown[]; version: unknown }[]) {
  return db.deleteFrom(qualified(ctx, plan.name)).where((eb: any) =>
    eb.or(
      tombstones.map((t) =>
        eb.and([
          ...plan.key.map((c, i) => eb(eb.ref(c), '=', t.key[i])),
          // A tombstone without a version deletes whatever is stored.
          ...(t.version === null ? [] : [eb.or([eb(eb.ref(VERSION), 'is', null), eb(eb.ref(VERSION), '<=', t.version)])]),
        ]),
      ),
    ),
  );
}

/** What a PostgreSQL batch statement's error says when a record of the batch lost to a newer stored version. */
export const OLDER_VERSION_IN_BATCH = 'freight-sync: a record of the batch is older than the stored one';

/**
 * The final query of a PostgreSQL batch statement (batch-statement.ts, after its CTEs, the upsert
 * named `fs_up`): the count of records written and of child rows deleted — or, when fewer records
 * were written than `expected` (a late, older version lost the newer-wins guard), an error that
 * aborts the whole statement. One statement is one transaction on PostgreSQL, so the sink can run
 * it without BEGIN and COMMIT: nothing of a batch with a losing record is kept, and the sink takes
 * the statement-per-table path for it. The cast of text to integer is what raises (22P02); CASE
 * evaluates it only in that branch, and it depends on the count, so it is never folded at planning.
 */
export function everyRecordWon(expected: RawBuilder<unknown>, deletedCount: RawBuilder<unknown>): RawBuilder<unknown> {
  const written = sql`count(*)`;
  return sql`select case when ${written} = ${expected} then ${written} else cast(${sql.lit(`${OLDER_VERSION_IN_BATCH}: `)} || ${written} as integer) end as written, ${deletedCount} as deleted from ${sql.id('fs_up')}`;
}
