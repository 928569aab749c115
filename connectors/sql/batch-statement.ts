import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { AnyDb } from './connect.js';
import { encodeRow, type DbRow } from './encode-row.js';
import type { RecordGroup } from './record-groups.js';
import { chunk, deleteByRootKeysQuery, insertQuery, qualified, rowsPerStatement, upsertQuery, type StatementContext } from './statements.js';
import type { StreamPlan, TablePlan } from './table-plan.js';


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
 * - MySQL/MariaDB: the same statements as one multi-statement query (the pool allows it; every
 *   value is still escaped by the driver), run in order.
 *
 * Anything else (SQLite, SQL Server, hard deletes, a batch over the parameter limit) keeps the
 * statement-per-table path (`writeGroups`), which also isolates refused records when this fails.
 */
export interface ErrorsMirror {
  readonly table: string;
  readonly stream: string;
}

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
  // Sorted by key so two writers touching the same rows lock them in the same order (no deadlock).
  const sorted = [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rootRows = sorted.map((g) => encodeRow(g.root, plan.root, ctx.dialect, g.op));
  const keys = rootRows.map((row) => plan.root.key.map((k) => row[k]));
  const upserts = sorted.filter((g) => g.op === 'upsert');
  const children = plan.children.map((child) => ({
    child,
    rows: upserts.flatMap((g) => (g.children.get(child.name) ?? []).map((row) => encodeRow(row, child, ctx.dialect, 'upsert'))),
  }));
  const rows: BatchRows = { rootRows, keys, children, recordKeys: sorted.map((g) => g.record.key) };
  if (ctx.dialect === 'postgres') {
    const result = await db.executeQuery(postgresStatement(db, ctx, plan, rows, errors));
    return Number((result.rows[0] as { written: unknown }).written) === sorted.length;
  }
  const result = await db.executeQuery(mysqlStatements(db, ctx, plan, rows, errors));
  // One result per statement; the last is the count of rows holding the incoming versions.
  const last = result.rows[result.rows.length - 1] as unknown as { won: unknown }[];
  return Number(last[0]?.won) === sorted.length;
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
  return sql`with ${sql.join(ctes)} select (select count(*) from ${sql.id('fs_up')}) as written, ${deletedCount} as deleted`.compile(db);
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
