import { createHash } from 'node:crypto';
import { sql, type CreateTableBuilder } from 'kysely';
import type { AnyDb } from './connect.js';
import { MAX_IDENTIFIER_LENGTH } from './identifiers.js';
import { declaredLength } from './sql-types.js';
import type { SqlDialectName } from './options.js';
import { qualified, type StatementContext } from './statements.js';

/** A column of a fixed table (errors, staging): its type per dialect, `default` for the rest. */
export interface SpecColumn {
  readonly name: string;
  readonly type: { readonly default: string } & Partial<Record<SqlDialectName, string>>;
  readonly notNull?: boolean;
  /** Raw SQL default, a constant of this module (never user input). */
  readonly defaultSql?: Partial<Record<SqlDialectName | 'default', string>>;
}

/** A table the connector creates: data tables (from mappings) and its own (errors, staging). */
export interface TableSpec {
  readonly name: string;
  /** An auto-increment `id` primary key, or the primary key columns. */
  readonly id?: typeof autoIncrementId;
  readonly primaryKey?: readonly string[];
  readonly columns: readonly SpecColumn[];
  readonly indexes?: readonly { readonly suffix: string; readonly columns: readonly string[] }[];
}

export const autoIncrementId = 'auto-increment' as const;

export function typeFor(column: SpecColumn, dialect: SqlDialectName): string {
  return column.type[dialect] ?? column.type.default;
}

/** A constraint or index name from a table name, kept under the identifier limit (hash when cut). */
export function derivedName(prefix: string, table: string, suffix = ''): string {
  const full = `${prefix}_${table}${suffix ? `_${suffix}` : ''}`;
  if (full.length <= MAX_IDENTIFIER_LENGTH) return full;
  const hash = createHash('sha1').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_IDENTIFIER_LENGTH - 9)}_${hash}`;
}

/**
 * CREATE TABLE (and its indexes) through Kysely's schema builder. Types are raw SQL text, built
 * only from constants and validated `sqlType` hints; names are quoted by Kysely.
 */
export async function createTable(db: AnyDb, ctx: StatementContext, spec: TableSpec): Promise<void> {
  try {
    await createTableQuery(db, ctx, spec).execute();
  } catch (error) {
    // PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a concurrent creator (replicas
    // starting together): the loser fails on the catalog's unique index (23505), on the table's
    // row type (42710, `type "…" already exists`: 10-account cluster chaos run 12) or, later, with
    // 42P07. Whether the table exists now is checked by the caller (ensureTable reads it back).
    const code = (error as { code?: string }).code;
    if (!(ctx.dialect === 'postgres' && (code === '23505' || code === '42P07' || code === '42710'))) throw error;
  }
  for (const index of spec.indexes ?? []) await createIndex(db, ctx, spec, index);
}

export function indexName(spec: TableSpec, suffix: string): string {
  return derivedName('ix', spec.name, suffix);
}

export async function createIndex(db: AnyDb, ctx: StatementContext, spec: TableSpec, index: NonNullable<TableSpec['indexes']>[number]): Promise<void> {
  let create = db.schema.createIndex(indexName(spec, index.suffix)).on(qualified(ctx, spec.name)).columns([...index.columns]);
  if (ctx.dialect === 'postgres' || ctx.dialect === 'sqlite') create = create.ifNotExists();
  try {
    await create.execute();
  } catch (error) {
    // MySQL has no CREATE INDEX IF NOT EXISTS: replicas starting together race to create the same
    // index, and the loser's ER_DUP_KEYNAME (1061) only says the index it wanted exists.
    // PostgreSQL's IF NOT EXISTS has the same race (23505 on the catalog, or 42P07).
    if (ctx.dialect === 'mysql' && (error as { errno?: number }).errno === 1061) return;
    if (ctx.dialect === 'postgres' && ['23505', '42P07'].includes(String((error as { code?: string }).code))) return;
    throw error;
  }
}

/** The CREATE TABLE statement alone (compiled in tests for SQL Server). */
export function createTableQuery(db: AnyDb, ctx: StatementContext, spec: TableSpec): CreateTableBuilder<string, string> {
  let builder: CreateTableBuilder<string, string> = db.schema.createTable(qualified(ctx, spec.name));
  // SQL Server has no IF NOT EXISTS; the table was just seen missing, so a race is the only risk.
  if (ctx.dialect !== 'mssql') builder = builder.ifNotExists();
  if (spec.id === autoIncrementId) {
    builder = builder.addColumn('id', sql.raw(ctx.dialect === 'postgres' ? 'bigserial' : ctx.dialect === 'sqlite' ? 'integer' : 'bigint'), (c) => {
      const pk = c.primaryKey();
      if (ctx.dialect === 'sqlite' || ctx.dialect === 'mysql') return pk.autoIncrement();
      if (ctx.dialect === 'mssql') return pk.identity();
      return pk;
    });
  }
  for (const column of spec.columns) {
    builder = builder.addColumn(column.name, sql.raw(typeFor(column, ctx.dialect)), (c) => {
      let out = column.notNull ? c.notNull() : c;
      const defaultSql = column.defaultSql?.[ctx.dialect] ?? column.defaultSql?.default;
      if (defaultSql !== undefined) out = out.defaultTo(sql.raw(defaultSql));
      // SQLite ignores declared lengths; a CHECK makes varchar(n) mean the same as on a server.
      const length = ctx.dialect === 'sqlite' ? declaredLength(typeFor(column, ctx.dialect)) : undefined;
      if (length !== undefined) out = out.check(sql`length(${sql.ref(column.name)}) <= ${sql.lit(length)}`);
      return out;
    });
  }
  if (spec.primaryKey && spec.primaryKey.length > 0) builder = builder.addPrimaryKeyConstraint(derivedName('pk', spec.name), [...spec.primaryKey]);
  // Binary collation: keys compare exactly (MySQL's default collation would merge "abc" and "ABC ").
  if (ctx.dialect === 'mysql') builder = builder.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`);
  return builder;
}

/** The ALTER TABLE that adds a missing column, compiled for the dialect (for the error message). */
export function addColumnSql(db: AnyDb, ctx: StatementContext, table: string, column: string, type: string): string {
  return db.schema.alterTable(qualified(ctx, table)).addColumn(column, sql.raw(type)).compile().sql;
}
