import { sql } from 'kysely';
import type { ContractLogger, TableMigration } from '../../src/contracts/index.js';
import { FreightSyncError } from '../../src/util/errors.js';
import type { AnyDb } from './connect.js';
import { existingColumns, existingIndexes, type ExistingColumn } from './introspect.js';
import { columnTypeChanges, migrationStatements } from './schema-migration.js';
import { qualified, type StatementContext } from './statements.js';
import { addColumnSql, createIndex, createTable, indexName, typeFor, type TableSpec } from './table-spec.js';
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
  /** Where added columns and indexes (info) and type differences (warn) are reported. */
  readonly logger?: ContractLogger;
}

/** A mapped table as a spec: plan columns, primary key = the mapping's key, an index for child replacement. */
export function specOfPlan(plan: TablePlan): TableSpec {
  const keyPrefix = plan.rootKeyColumns.every((c, i) => plan.key[i] === c);
  return {
    name: plan.name,
    primaryKey: plan.key,
    columns: plan.columns.map((c) => ({ name: c.name, type: { default: c.sqlType }, notNull: c.key })),
    // Children are deleted by root key; the primary key serves when it starts with the root key.
    // Parent tables: an ERP reads "what changed since" by `_synced_at` or `_updated_at`.
    indexes: plan.isRoot
      ? [
          { suffix: 'synced', columns: ['_synced_at'] },
          { suffix: 'updated', columns: ['_updated_at'] },
        ]
      : keyPrefix
        ? []
        : [{ suffix: 'root', columns: plan.rootKeyColumns }],
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
 * Creates the table when missing (createTables); on an existing table adds the columns and
 * indexes this version writes that it lacks (createTables; otherwise fails with the table, the
 * columns and the ALTER TABLE statements that would fix it), checks that the key has a unique
 * index, and warns about every column whose type differs from the wanted one (never changed
 * here: `freight-sync sink migrate`). Returns the declared lengths of text columns.
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
  existing = await addMissingColumns(db, ctx, spec, existing, options, owner);
  await addMissingIndexes(db, ctx, spec, options, owner);
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
  for (const change of columnTypeChanges(ctx, spec, existing, await isMariaDb(db, ctx))) {
    options.logger?.warn(
      { table: qualified(ctx, spec.name), column: change.column, current: change.current, wanted: change.wanted },
      `table ${qualified(ctx, spec.name)} column ${change.column} is ${change.current} but this version writes ${change.wanted}; run \`freight-sync sink migrate\` to see and apply the change`,
    );
  }
  return new Map([...existing.values()].map((c) => [c.name, c.length]));
}

/**
 * Columns an older version did not create (`_run_id`, a column added to the mapping) are added,
 * nullable, when createTables is on. A missing NOT NULL (key) column means the key changed: that
 * is never patched, it fails with the statement an operator can review.
 */
async function addMissingColumns(
  db: AnyDb,
  ctx: StatementContext,
  spec: TableSpec,
  existing: Map<string, ExistingColumn>,
  options: EnsureOptions,
  owner: string,
): Promise<Map<string, ExistingColumn>> {
  const wanted = [...(spec.id ? [{ name: 'id', type: { default: 'bigint' }, notNull: true }] : []), ...spec.columns];
  const missing = wanted.filter((column) => !existing.has(column.name.toLowerCase()));
  if (missing.length === 0) return existing;
  const fixes = missing.map((column) => addColumnSql(db, ctx, spec.name, column.name, typeFor(column, ctx.dialect)));
  if (!options.createTables || missing.some((column) => column.notNull)) {
    throw new SqlSchemaError(
      spec.name,
      missing.map((c) => c.name),
      `table ${qualified(ctx, spec.name)} (${owner}) exists but has no column ${missing.map((c) => c.name).join(', ')}; add ${missing.length === 1 ? 'it' : 'them'} with: ${fixes.map((f) => `${f};`).join(' ')}`,
    );
  }
  for (const [i, column] of missing.entries()) {
    await sql.raw(fixes[i]!).execute(db);
    options.logger?.info({ table: qualified(ctx, spec.name), column: column.name, type: typeFor(column, ctx.dialect) }, `added column ${column.name} to ${qualified(ctx, spec.name)}`);
  }
  return (await existingColumns(db, ctx, spec.name)) ?? existing;
}

async function addMissingIndexes(db: AnyDb, ctx: StatementContext, spec: TableSpec, options: EnsureOptions, owner: string): Promise<void> {
  if (!spec.indexes || spec.indexes.length === 0) return;
  const present = await existingIndexes(db, ctx, spec.name);
  for (const index of spec.indexes) {
    const name = indexName(spec, index.suffix);
    if (present.has(name.toLowerCase())) continue;
    if (!options.createTables) {
      options.logger?.warn({ table: qualified(ctx, spec.name), index: name }, `table ${qualified(ctx, spec.name)} (${owner}) has no index ${name} on (${index.columns.join(', ')}); reads by it will scan the table`);
      continue;
    }
    await createIndex(db, ctx, spec, index);
    options.logger?.info({ table: qualified(ctx, spec.name), index: name }, `added index ${name} to ${qualified(ctx, spec.name)}`);
  }
}

/** MariaDB reports JSON columns as LONGTEXT (an alias there); cached per database handle. */
const mariaDbByDb = new WeakMap<AnyDb, Promise<boolean>>();

export function isMariaDb(db: AnyDb, ctx: StatementContext): Promise<boolean> {
  if (ctx.dialect !== 'mysql') return Promise.resolve(false);
  let known = mariaDbByDb.get(db);
  if (!known) {
    known = sql<{ v: string }>`select version() as ${sql.ref('v')}`.execute(db).then((r) => /mariadb/i.test(String(r.rows[0]?.v ?? '')));
    known.catch(() => mariaDbByDb.delete(db));
    mariaDbByDb.set(db, known);
  }
  return known;
}

/** The type changes a table needs and their statements; undefined when it has none (or does not exist). */
export async function pendingMigration(db: AnyDb, ctx: StatementContext, spec: TableSpec): Promise<TableMigration | undefined> {
  const existing = await existingColumns(db, ctx, spec.name);
  if (!existing) return undefined;
  const changes = columnTypeChanges(ctx, spec, existing, await isMariaDb(db, ctx));
  if (changes.length === 0) return undefined;
  return { table: qualified(ctx, spec.name), changes, statements: await migrationStatements(db, ctx, spec, existing, changes) };
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
