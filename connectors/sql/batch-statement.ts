import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { AnyDb } from './connect.js';
import { encodeRow, encodeValuesInto, type DbRow } from './encode-row.js';
import type { RecordGroup } from './record-groups.js';
import { chunk, deleteByRootKeysQuery, everyRecordWon, insertQuery, qualified, rowsPerStatement, upsertQuery, type ErrorsMirror, type StatementContext } from './statements.js';
import { bindTemplate, Slot, templateOf, type StatementTemplate } from './statement-template.js';
import type { StreamPlan, TablePlan } from './table-plan.js';
import { markPreparable } from './prepared-statements.js';
import { unnestBatchStatement } from './unnest-statement.js';


/**
 * A whole batch in ONE round trip (inside the caller's transaction): the parents' multi-row upsert
 * with the newer-version guard in the statement, each child table replaced (delete by the batch's
 * root keys, then a plain multi-row insert), and the errors-table mirror of the written keys cleared.
 *
 * The statement assumes every record wins (the usual case) and reports how many did: the upsert's
 * RETURNING on PostgreSQL, a count of the stored rows now holding the incoming versions on MySQL.
 * When fewer won — a late, older version is in the batch — the caller rolls the transaction back
 * and takes the statement-per-table path, which replaces the children of the winners only. So an
 * older version never touches the row or the children of a newer one.
 *
 * - PostgreSQL: one statement of data-modifying CTEs. The main query reads every delete to its
 *   end, and the inserts (not read) run after it, so a replaced child row never meets its old
 *   self; were that order ever different, the unique violation would only send the batch to the
 *   statement-per-table path. All parts share one snapshot: no delete sees a row just inserted.
 *   Values are bound as one array per column (unnest-statement.ts) unless a column's type is not
 *   a plain scalar; then one parameter per value (the VALUES form, built here).
 * - MySQL/MariaDB: the same statements as one multi-statement query (the pool allows it; every
 *   value is still escaped by the driver), run in order.
 *
 * Anything else (SQLite, SQL Server, hard deletes, a batch over the parameter limit) keeps the
 * statement-per-table path (`writeGroups`), which also isolates refused records when this fails.
 */
export type { ErrorsMirror } from './statements.js';

/** Bound parameters of one statement: well under PostgreSQL's 65535. */
const MAX_PARAMS = 30_000;
const VERSION = '_updated_at';

export function canWriteInOneStatement(ctx: StatementContext, plan: StreamPlan, groups: readonly RecordGroup[], deleteMode: 'soft' | 'hard'): boolean {
  if (ctx.dialect !== 'postgres' && ctx.dialect !== 'mysql') return false;
  if (groups.length === 0) return false;
  if (deleteMode === 'hard' && groups.some((g) => g.op === 'delete')) return false;
  let params = groups.length * (plan.root.columns.length + plan.root.key.length * (2 + plan.children.length) + 2);
  for (const child of plan.children) {
    for (const g of groups) params += (g.children.get(child.name)?.length ?? 0) * child.columns.length;
  }
  return params <= MAX_PARAMS;
}

/** Writes the batch; returns false (nothing to keep: roll back) when a record's version lost. */
export async function writeBatchInOneStatement(db: AnyDb, ctx: StatementContext, plan: StreamPlan, groups: readonly RecordGroup[], errors: ErrorsMirror): Promise<boolean> {
  const result = await db.executeQuery(compileBatchStatement(db, ctx, plan, groups, errors));
  if (ctx.dialect === 'postgres') return Number((result.rows[0] as { written: unknown }).written) === groups.length;
  // One result per statement; the last is the count of rows holding the incoming versions.
  const last = result.rows[result.rows.length - 1] as unknown as { won: unknown }[];
  return Number(last[0]?.won) === groups.length;
}

/**
 * The batch's statement (PostgreSQL or MySQL), its text from the template of the batch's shape
 * (`reuse`, the default) or built afresh (what the template must equal; tests compare the two).
 * On PostgreSQL the values are bound as one array per column (`unnest`, the default) where the
 * plan's column types allow it; `unnest: false` gives the VALUES form.
 */
export function compileBatchStatement(
  db: AnyDb,
  ctx: StatementContext,
  plan: StreamPlan,
  groups: readonly RecordGroup[],
  errors: ErrorsMirror,
  { reuse = true, unnest = true }: { reuse?: boolean; unnest?: boolean } = {},
): CompiledQuery {
  // Sorted by key so two writers touching the same rows lock them in the same order (no deadlock).
  const sorted = [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // PostgreSQL: one array per column (unnest-statement.ts) wherever every column's type allows it.
  const arrays = ctx.dialect === 'postgres' && unnest ? unnestBatchStatement(db, ctx, plan, sorted, errors) : undefined;
  if (arrays) return arrays;
  const build = ctx.dialect === 'postgres' ? postgresStatement : mysqlStatements;
  if (!reuse) return build(db, ctx, plan, encodedRows(ctx, plan, sorted), errors);
  return fromTemplate(db, ctx, plan, flatValues(ctx, plan, sorted), errors, build);
}

/** The batch as rows for the statement builders, encoded row by row (the statement built afresh). */
function encodedRows(ctx: StatementContext, plan: StreamPlan, sorted: readonly RecordGroup[]): BatchRows {
  const rootRows = sorted.map((g) => encodeRow(g.root, plan.root, ctx.dialect, g.op));
  const upserts = sorted.filter((g) => g.op === 'upsert');
  return {
    rootRows,
    keys: rootRows.map((row) => plan.root.key.map((k) => row[k])),
    children: plan.children.map((child) => ({
      child,
      rows: upserts.flatMap((g) => (g.children.get(child.name) ?? []).map((row) => encodeRow(row, child, ctx.dialect, 'upsert'))),
    })),
    recordKeys: sorted.map((g) => g.record.key),
  };
}

/**
 * The batch's values encoded for the dialect, one after another in a fixed order: each root row's
 * columns (plan order), each child table's rows of the upserted records, then the record keys.
 * Where a value sits depends only on the batch's shape (row counts per table).
 */
interface FlatValues {
  readonly values: unknown[];
  readonly rootRows: number;
  readonly childRows: readonly number[];
}

function flatValues(ctx: StatementContext, plan: StreamPlan, sorted: readonly RecordGroup[]): FlatValues {
  const values: unknown[] = [];
  for (const g of sorted) encodeValuesInto(values, g.root, plan.root, ctx.dialect, g.op);
  const childRows = plan.children.map((child) => {
    let count = 0;
    for (const g of sorted) {
      if (g.op !== 'upsert') continue;
      for (const row of g.children.get(child.name) ?? []) {
        encodeValuesInto(values, row, child, ctx.dialect, 'upsert');
        count += 1;
      }
    }
    return count;
  });
  for (const g of sorted) values.push(g.record.key);
  return { values, rootRows: sorted.length, childRows };
}

/** The batch's shape as rows for the statement builders, each value from its place in the flat array (`at`). */
function batchRows(plan: StreamPlan, flat: FlatValues, at: (index: number) => unknown): BatchRows {
  const rowAt = (table: TablePlan, offset: number): DbRow => {
    const row: DbRow = {};
    table.columns.forEach((column, j) => (row[column.name] = at(offset + j)));
    return row;
  };
  const width = plan.root.columns.length;
  const rootRows = Array.from({ length: flat.rootRows }, (_, i) => rowAt(plan.root, i * width));
  let offset = flat.rootRows * width;
  const children = plan.children.map((child, c) => {
    const rows = Array.from({ length: flat.childRows[c]! }, (_, i) => rowAt(child, offset + i * child.columns.length));
    offset += rows.length * child.columns.length;
    return { child, rows };
  });
  const recordKeys = Array.from({ length: flat.rootRows }, (_, i) => at(offset + i) as string);
  return { rootRows, keys: rootRows.map((row) => plan.root.key.map((k) => row[k])), children, recordKeys };
}

/**
 * The statement's text depends only on the batch's shape (row counts per table), so it is built
 * and compiled by Kysely once per shape, with slots where the values go (statement-template.ts);
 * each batch of that shape then only binds its values.
 */
/** Shapes kept per stream plan: batches of one size vary mostly in their child-row counts. */
const TEMPLATES_PER_PLAN = 64;
const templates = new WeakMap<StreamPlan, Map<string, StatementTemplate>>();

function fromTemplate(
  db: AnyDb,
  ctx: StatementContext,
  plan: StreamPlan,
  flat: FlatValues,
  errors: ErrorsMirror,
  build: (db: AnyDb, ctx: StatementContext, plan: StreamPlan, rows: BatchRows, errors: ErrorsMirror) => CompiledQuery,
): CompiledQuery {
  const shape = [ctx.dialect, ctx.schema ?? '', errors.table, errors.stream, flat.rootRows, ...flat.childRows].join('\u0000');
  let cache = templates.get(plan);
  if (!cache) templates.set(plan, (cache = new Map()));
  let template = cache.get(shape);
  if (template) {
    // Most recently used last, so the oldest shape is the first to go.
    cache.delete(shape);
    // A shape seen again is worth a server-side prepared statement (PostgreSQL).
    if (ctx.dialect === 'postgres') markPreparable(template.sql);
  } else {
    const slots = flat.values.map((_, i) => new Slot(i));
    const compiled = build(db, ctx, plan, batchRows(plan, flat, (i) => slots[i]), errors);
    template = templateOf(compiled, slots.length);
    // A value inlined or transformed: built per batch.
    if (!template) return build(db, ctx, plan, batchRows(plan, flat, (i) => flat.values[i]), errors);
    if (cache.size >= TEMPLATES_PER_PLAN) cache.delete(cache.keys().next().value!);
  }
  cache.set(shape, template);
  return bindTemplate(template, flat.values);
}

interface ChildRows {
  readonly child: TablePlan;
  readonly rows: readonly DbRow[];
}

/** The batch encoded for the dialect, sorted by key: root rows, their keys, child rows, record keys. */
interface BatchRows {
  readonly rootRows: readonly DbRow[];
  readonly keys: readonly (readonly unknown[])[];
  readonly children: readonly ChildRows[];
  readonly recordKeys: readonly string[];
}

function postgresStatement(db: AnyDb, ctx: StatementContext, plan: StreamPlan, rows: BatchRows, errors: ErrorsMirror): CompiledQuery {
  const { rootRows, keys, children, recordKeys } = rows;
  const root = plan.root;
  const ctes: RawBuilder<unknown>[] = [sql`${sql.id('fs_up')} as (${(upsertQuery(db, ctx, root, rootRows) as any).returning(root.key.map((k) => sql.ref(k).as(k)))})`];
  const deleted: RawBuilder<unknown>[] = [];
  children.forEach(({ child }, i) => {
    ctes.push(sql`${sql.id(`fs_del_${i}`)} as (${deleteByRootKeysQuery(db, ctx, child, keys).returning(sql<number>`1`.as('one'))})`);
    deleted.push(sql`(select count(*) from ${sql.id(`fs_del_${i}`)})`);
  });
  children.forEach(({ child, rows }, i) => {
    for (const [j, part] of chunk(rows, rowsPerStatement(ctx, child.columns.length)).entries()) ctes.push(sql`${sql.id(`fs_ins_${i}_${j}`)} as (${insertQuery(db, ctx, child, part)})`);
  });
  const clear = db.deleteFrom(qualified(ctx, errors.table)).where('stream', '=', errors.stream).where('record_key', 'in', recordKeys);
  ctes.push(sql`${sql.id('fs_cleared')} as (${clear})`);
  const deletedCount = deleted.length > 0 ? sql.join(deleted, sql` + `) : sql`0`;
  return sql`with ${sql.join(ctes)} ${everyRecordWon(sql.lit(rootRows.length), deletedCount)}`.compile(db);
}

function mysqlStatements(db: AnyDb, ctx: StatementContext, plan: StreamPlan, rows: BatchRows, errors: ErrorsMirror): CompiledQuery {
  const { rootRows, keys, children, recordKeys } = rows;
  const root = plan.root;
  const statements: CompiledQuery[] = [upsertQuery(db, ctx, root, rootRows).compile()];
  for (const { child } of [...children].sort((a, b) => b.child.depth - a.child.depth)) statements.push(deleteByRootKeysQuery(db, ctx, child, keys).compile());
  for (const { child, rows } of children) {
    for (const part of chunk(rows, rowsPerStatement(ctx, child.columns.length))) statements.push(insertQuery(db, ctx, child, part).compile());
  }
  statements.push(db.deleteFrom(qualified(ctx, errors.table)).where('stream', '=', errors.stream).where('record_key', 'in', recordKeys).compile());
  // NULL-safe, as the read-back compares: a NULL version on both sides is the incoming one.
  const won = sql.join(
    keys.map((key, i) => sql`(${sql.join(root.key.map((k, j) => sql`${sql.ref(k)} = ${key[j]}`), sql` and `)} and ${sql.ref(VERSION)} <=> ${rootRows[i]![VERSION] ?? null})`),
    sql` or `,
  );
  statements.push(sql`select count(*) as ${sql.id('won')} from ${sql.table(qualified(ctx, root.name))} where ${won}`.compile(db));
  return CompiledQuery.raw(statements.map((s) => s.sql).join(';\n'), statements.flatMap((s) => [...s.parameters]));
}
