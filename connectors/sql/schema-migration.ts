import { sql, type RawBuilder } from 'kysely';
import type { ColumnTypeChange, TableMigration } from '../../src/contracts/index.js';
import type { AnyDb } from './connect.js';
import type { ExistingColumn } from './introspect.js';
import { qualified, type StatementContext } from './statements.js';
import { createTableQuery, indexName, typeFor, type TableSpec } from './table-spec.js';
import { isTextType, sameType } from './type-names.js';

/**
 * Type changes between an existing table and the table the connector wants, and the statements
 * that make them. Never run on start: a type change rewrites an ERP table, so `init` only warns
 * and `freight-sync sink migrate` prints these statements (and with `--apply` runs them).
 */

/** The columns whose type differs from the spec's, in spec order. */
export function columnTypeChanges(ctx: StatementContext, spec: TableSpec, existing: ReadonlyMap<string, ExistingColumn>, mariadb: boolean): ColumnTypeChange[] {
  const changes: ColumnTypeChange[] = [];
  for (const column of spec.columns) {
    const found = existing.get(column.name.toLowerCase());
    const wanted = typeFor(column, ctx.dialect);
    if (found && !sameType(ctx.dialect, found.type, wanted, mariadb)) changes.push({ column: column.name, current: found.type, wanted });
  }
  return changes;
}

const text = (db: AnyDb, query: RawBuilder<unknown>): string => query.compile(db).sql;

/** The statements that change the columns' types, one dialect at a time. */
export async function migrationStatements(
  db: AnyDb,
  ctx: StatementContext,
  spec: TableSpec,
  existing: ReadonlyMap<string, ExistingColumn>,
  changes: readonly ColumnTypeChange[],
): Promise<string[]> {
  const table = sql.table(qualified(ctx, spec.name));
  if (ctx.dialect === 'sqlite') return sqliteRebuild(db, ctx, spec, existing, changes);
  const out: string[] = [];
  for (const change of changes) {
    const column = sql.ref(change.column);
    const type = sql.raw(change.wanted);
    const fromText = isTextType(change.current) && !isTextType(change.wanted.toLowerCase());
    const notNull = spec.columns.find((c) => c.name === change.column)?.notNull === true;
    switch (ctx.dialect) {
      case 'postgres': {
        // An empty string means "no value" in a text column; no other type takes it.
        const source = fromText ? sql`nullif(${column}, '')` : column;
        out.push(text(db, sql`alter table ${table} alter column ${column} type ${type} using (${source})::${type}`));
        break;
      }
      case 'mysql':
      case 'mssql': {
        if (fromText && !notNull) out.push(text(db, sql`update ${table} set ${column} = null where ${column} = ''`));
        // ISO 8601 text (`2026-01-02T03:04:05.678Z`, as this connector wrote it) as MySQL reads a DATETIME.
        if (fromText && ctx.dialect === 'mysql' && /^(datetime|timestamp)/.test(change.wanted)) {
          out.push(text(db, sql`update ${table} set ${column} = replace(replace(${column}, ${sql.lit('T')}, ${sql.lit(' ')}), ${sql.lit('Z')}, ${sql.lit('')}) where ${column} like ${sql.lit('%T%Z')}`));
        }
        const verb = ctx.dialect === 'mysql' ? sql`modify column` : sql`alter column`;
        out.push(text(db, sql`alter table ${table} ${verb} ${column} ${type}${notNull ? sql` not null` : sql``}`));
        break;
      }
    }
  }
  return out;
}

/**
 * SQLite cannot change a column's type, so the table is rebuilt the documented way
 * (sqlite.org/lang_altertable.html, "other kinds of table schema changes"): a new table with the
 * wanted types, every row copied, the old table dropped, the new one renamed, its indexes
 * recreated from their own SQL. Columns the connector does not know (added by the ERP team) are
 * kept with their declared type.
 */
async function sqliteRebuild(db: AnyDb, ctx: StatementContext, spec: TableSpec, existing: ReadonlyMap<string, ExistingColumn>, changes: readonly ColumnTypeChange[]): Promise<string[]> {
  if (changes.length === 0) return [];
  const temporary = `${spec.name}__migrate`;
  const known = new Set([...(spec.id ? ['id'] : []), ...spec.columns.map((c) => c.name.toLowerCase())]);
  const extra = [...existing.values()].filter((c) => !known.has(c.name.toLowerCase()));
  const columns = [...existing.values()].map((c) => sql.ref(c.name));
  const indexes = await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and tbl_name = ${spec.name} and sql is not null`.execute(db);
  return [
    createTableQuery(db, ctx, { ...spec, name: temporary }).compile().sql,
    ...extra.map((c) => db.schema.alterTable(temporary).addColumn(c.name, sql.raw(c.type)).compile().sql),
    text(db, sql`insert into ${sql.table(temporary)} (${sql.join(columns)}) select ${sql.join(columns)} from ${sql.table(spec.name)}`),
    text(db, sql`drop table ${sql.table(spec.name)}`),
    text(db, sql`alter table ${sql.table(temporary)} rename to ${sql.table(spec.name)}`),
    ...indexes.rows.map((r) => r.sql),
    // Indexes the spec wants that the old table did not have yet.
    ...(spec.indexes ?? [])
      .filter((index) => !indexes.rows.some((r) => r.sql.includes(`"${indexName(spec, index.suffix)}"`)))
      .map((index) => db.schema.createIndex(indexName(spec, index.suffix)).ifNotExists().on(spec.name).columns([...index.columns]).compile().sql),
  ];
}

/** Runs a table's statements: in one transaction where DDL is transactional (PostgreSQL, SQLite, SQL Server). */
export async function applyMigration(db: AnyDb, ctx: StatementContext, migration: TableMigration): Promise<void> {
  const run = async (target: AnyDb) => {
    for (const statement of migration.statements) await sql.raw(statement).execute(target);
  };
  if (ctx.dialect === 'mysql') await run(db);
  else await db.transaction().execute(run);
}
