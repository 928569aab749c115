import { sql } from 'kysely';
import { FreightSyncError } from '../../src/util/errors.js';
import type { AnyDb } from './connect.js';
import { existingColumns } from './introspect.js';
import { qualified, type StatementContext } from './statements.js';
import { addColumnSql, createTable, typeFor, type TableSpec } from './table-spec.js';
import type { StreamPlan, TablePlan } from './table-plan.js';
import { columnSetKey, uniqueColumnSets } from './unique-keys.js';

/** A table or column the connector needs is missing or unusable; the message says how to fix it. */
export class SqlSchemaError extends FreightSyncError {
  readonly table: string;
  readonly columns: readonly string[];
  constructor(table: string, columns: readonly string[], message: string) {
    super('SQL_SCHEMA_MISMATCH', message);
    this.table = table;
    this.columns = columns;
  }
}

export function isSqlSchemaError(error: unknown): error is SqlSchemaError {
  return error instanceof SqlSchemaError;
}

export interface EnsureOptions {
  readonly createTables: boolean;
}

/** A mapped table as a spec: plan columns, primary key = the mapping's key, an index for child replacement. */
export function specOfPlan(plan: TablePlan): TableSpec {
  const keyPrefix = plan.rootKeyColumns.every((c, i) => plan.key[i] === c);
  return {
    name: plan.name,
    primaryKey: plan.key,
    columns: plan.columns.map((c) => ({ name: c.name, type: { default: c.sqlType }, notNull: c.key })),
    // Children are deleted by root key; the primary key serves when it starts with the root key.
    indexes: plan.isRoot || keyPrefix ? [] : [{ suffix: 'root', columns: plan.rootKeyColumns }],
  };
}

export async function ensureSchema(db: AnyDb, ctx: StatementContext, options: EnsureOptions): Promise<void> {
  if (ctx.schema === undefined || ctx.dialect === 'sqlite') return;
  const found = await sql<{ n: number }>`select count(*) as ${sql.ref('n')} from information_schema.schemata where schema_name = ${ctx.schema}`.execute(db);
  if (Number(found.rows[0]?.n ?? 0) > 0) return;
  if (!options.createTables) throw new SqlSchemaError('', [], `schema ${ctx.schema} does not exist (createTables is false)`);
  if (ctx.dialect === 'mssql') await db.schema.createSchema(ctx.schema).execute();
  else await db.schema.createSchema(ctx.schema).ifNotExists().execute();
}

/**
 * Creates the table when missing (createTables), otherwise checks that every column the connector
 * writes exists — failing with the table, the columns and the ALTER TABLE statements that would
 * fix it — and that the key has a unique index. Returns the declared lengths of text columns.
 */
export async function ensureTable(db: AnyDb, ctx: StatementContext, spec: TableSpec, options: EnsureOptions, owner: string): Promise<Map<string, number | undefined>> {
  let existing = await existingColumns(db, ctx, spec.name);
  if (!existing) {
    if (!options.createTables) {
      throw new SqlSchemaError(spec.name, [], `table ${qualified(ctx, spec.name)} (${owner}) does not exist and createTables is false; create it or set createTables: true`);
    }
    await createTable(db, ctx, spec);
    existing = await existingColumns(db, ctx, spec.name);
    if (!existing) throw new SqlSchemaError(spec.name, [], `table ${qualified(ctx, spec.name)} (${owner}) could not be created`);
    return new Map([...existing.values()].map((c) => [c.name, c.length]));
  }
  const wanted = [...(spec.id ? ['id'] : []), ...spec.columns.map((c) => c.name)];
  const missing = wanted.filter((name) => !existing.has(name.toLowerCase()));
  if (missing.length > 0) {
    const fixes = missing.map((name) => {
      const column = spec.columns.find((c) => c.name === name);
      return `${addColumnSql(db, ctx, spec.name, name, column ? typeFor(column, ctx.dialect) : 'bigint')};`;
    });
    throw new SqlSchemaError(
      spec.name,
      missing,
      `table ${qualified(ctx, spec.name)} (${owner}) exists but has no column ${missing.join(', ')}; add ${missing.length === 1 ? 'it' : 'them'} with: ${fixes.join(' ')}`,
    );
  }
  if (spec.primaryKey && spec.primaryKey.length > 0) {
    const unique = await uniqueColumnSets(db, ctx, spec.name);
    if (unique && !unique.has(columnSetKey(spec.primaryKey))) {
      throw new SqlSchemaError(
        spec.name,
        [...spec.primaryKey],
        `table ${qualified(ctx, spec.name)} (${owner}) has no primary key or unique index on (${spec.primaryKey.join(', ')}), which upserts need; add one`,
      );
    }
  }
  return new Map([...existing.values()].map((c) => [c.name, c.length]));
}

/** Ensures every table of a stream; returns the plan with the lengths the database declares. */
export async function ensureStreamTables(db: AnyDb, ctx: StatementContext, plan: StreamPlan, options: EnsureOptions): Promise<StreamPlan> {
  const withLengths = async (table: TablePlan): Promise<TablePlan> => {
    const lengths = await ensureTable(db, ctx, specOfPlan(table), options, `stream ${plan.stream}`);
    const byLower = new Map([...lengths].map(([name, length]) => [name.toLowerCase(), length]));
    return { ...table, columns: table.columns.map((c) => ({ ...c, length: byLower.get(c.name.toLowerCase()) ?? c.length })) };
  };
  const root = await withLengths(plan.root);
  const children: TablePlan[] = [];
  for (const child of plan.children) children.push(await withLengths(child));
  return { ...plan, root, children };
}
