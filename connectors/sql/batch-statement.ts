import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { AnyDb } from './connect.js';
import { encodeRow, type DbRow } from './encode-row.js';
import type { RecordGroup } from './record-groups.js';
import { deleteByRootKeysQuery, qualified, upsertQuery, type StatementContext } from './statements.js';
import type { StreamPlan, TablePlan } from './table-plan.js';

/**
 * A whole batch in ONE round trip (inside the caller's transaction): the parents' multi-row upsert
 * with the newer-version guard in the statement, each child table replaced for the records whose
 * version won, and the errors-table mirror of the written keys cleared.
 *
 * - PostgreSQL: one statement of data-modifying CTEs. The upsert's RETURNING names the winners
 *   (rows inserted, or updated because the guard let them); child deletes and inserts are filtered
 *   by it. All parts of one statement share one snapshot, so the winners must come from RETURNING.
 * - MariaDB/MySQL: one multi-statement query (the pool allows it; every value is still escaped by
 *   the driver). Statements run in order, so the child statements see the upserted parents and
 *   pick the winners by comparing each stored version to the incoming one — as the read-back did.
 *
 * Anything else (SQLite, SQL Server, hard deletes, a batch over the parameter limit) keeps the
 * statement-per-table path (`writeGroups`). When this statement fails the caller rolls back and
 * isolates records one by one on that path, so which records are refused does not change.
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
  let params = groups.length * (plan.root.columns.length + plan.root.key.length * (1 + plan.children.length)) + groups.length + 1;
  for (const child of plan.children) {
    for (const g of groups) params += (g.children.get(child.name)?.length ?? 0) * child.columns.length;
  }
  return params <= MAX_PARAMS;
}

export async function writeBatchInOneStatement(db: AnyDb, ctx: StatementContext, plan: StreamPlan, groups: readonly RecordGroup[], errors: ErrorsMirror): Promise<void> {
  // Sorted by key so two writers touching the same rows lock them in the same order (no deadlock).
  const sorted = [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rootRows = sorted.map((g) => encodeRow(g.root, plan.root, ctx.dialect, g.op));
  const keys = rootRows.map((row) => plan.root.key.map((k) => row[k]));
  const childRows = plan.children.map((child) => ({
    child,
    rows: sorted.filter((g) => g.op === 'upsert').flatMap((g) => (g.children.get(child.name) ?? []).map((row) => encodeRow(row, child, ctx.dialect, 'upsert'))),
  }));
  const recordKeys = sorted.map((g) => g.record.key);
  const query = ctx.dialect === 'postgres' ? postgresStatement(db, ctx, plan, rootRows, keys, childRows, errors, recordKeys) : mysqlStatements(db, ctx, plan, rootRows, keys, childRows, errors, recordKeys);
  await db.executeQuery(query);
}

interface ChildRows {
  readonly child: TablePlan;
  readonly rows: readonly DbRow[];
}

const columnList = (columns: readonly string[]) => sql.join(columns.map((c) => sql.ref(c)));

/**
 * A SELECT of literal rows whose column types are the target table's: the first branch reads the
 * (empty) table, so PostgreSQL types every parameter of the following branches as that column —
 * exactly as `INSERT … VALUES` would (a bare VALUES list would type them as text).
 */
function typedRows(db: AnyDb, ctx: StatementContext, table: TablePlan, rows: readonly DbRow[]) {
  const columns = table.columns.map((c) => c.name);
  const empty = db.selectFrom(qualified(ctx, table.name)).select(columns.map((c) => sql.ref(c).as(c)) as never).where(sql<boolean>`false`);
  return rows.reduce<any>((all, row) => all.unionAll(db.selectNoFrom((eb) => columns.map((c) => eb.val(row[c]).as(c)))), empty);
}

function postgresStatement(
  db: AnyDb,
  ctx: StatementContext,
  plan: StreamPlan,
  rootRows: DbRow[],
  keys: unknown[][],
  children: readonly ChildRows[],
  errors: ErrorsMirror,
  recordKeys: string[],
): CompiledQuery {
  const root = plan.root;
  const ctes: RawBuilder<unknown>[] = [sql`${sql.id('fs_up')} as (${(upsertQuery(db, ctx, root, rootRows) as any).returning(root.key.map((k) => sql.ref(k).as(k)))})`];
  const winnerOf = (columns: readonly string[]) => sql<boolean>`(${columnList(columns)}) in (select ${columnList(root.key)} from ${sql.id('fs_up')})`;
  children.forEach(({ child, rows }, i) => {
    const deleted = `fs_del_${i}`;
    // The batch's keys as constants keep the delete on the child table's root-key index.
    const remove = deleteByRootKeysQuery(db, ctx, child, keys).where(winnerOf(child.rootKeyColumns)).returning(sql<number>`1`.as('one'));
    ctes.push(sql`${sql.id(deleted)} as (${remove})`);
    if (rows.length === 0) return;
    const columns = child.columns.map((c) => c.name);
    // The count is a one-time filter: every old row is deleted before the first new one is
    // inserted, so a replaced child with the same key never meets its predecessor.
    ctes.push(
      sql`${sql.id(`fs_ins_${i}`)} as (insert into ${sql.table(qualified(ctx, child.name))} (${columnList(columns)}) select ${columnList(columns)} from ${typedRows(db, ctx, child, rows).as('fs_rows')} where ${winnerOf(child.rootKeyColumns)} and (select count(*) from ${sql.id(deleted)}) >= 0)`,
    );
  });
  const clear = db.deleteFrom(qualified(ctx, errors.table)).where('stream', '=', errors.stream).where('record_key', 'in', recordKeys);
  ctes.push(sql`${sql.id('fs_cleared')} as (${clear})`);
  return sql`with ${sql.join(ctes)} select count(*) as written from ${sql.id('fs_up')}`.compile(db);
}

function mysqlStatements(
  db: AnyDb,
  ctx: StatementContext,
  plan: StreamPlan,
  rootRows: DbRow[],
  keys: unknown[][],
  children: readonly ChildRows[],
  errors: ErrorsMirror,
  recordKeys: string[],
): CompiledQuery {
  const root = plan.root;
  const rootTable = qualified(ctx, root.name);
  const versions = rootRows.map((row) => row[VERSION] ?? null);
  // The records whose version is the stored one after the upsert (NULL-safe, as the read-back compared).
  const won = (alias: string) =>
    sql.join(
      keys.map((key, i) => sql`(${sql.join(root.key.map((k, j) => sql`${sql.ref(`${alias}.${k}`)} = ${key[j]}`), sql` and `)} and ${sql.ref(`${alias}.${VERSION}`)} <=> ${versions[i]})`),
      sql` or `,
    );
  const parentOf = (childAlias: string, child: TablePlan) => sql.join(root.key.map((k, j) => sql`${sql.ref(`fs_root.${k}`)} = ${sql.ref(`${childAlias}.${child.rootKeyColumns[j]!}`)}`), sql` and `);

  const statements: CompiledQuery[] = [upsertQuery(db, ctx, root, rootRows).compile()];
  for (const child of [...plan.children].sort((a, b) => b.depth - a.depth)) {
    const childTable = qualified(ctx, child.name);
    statements.push(
      deleteByRootKeysQuery(db, ctx, child, keys)
        .where(sql<boolean>`exists (select 1 from ${sql.table(rootTable)} as ${sql.id('fs_root')} where ${parentOf(childTable, child)} and (${won('fs_root')}))`)
        .compile(),
    );
  }
  for (const { child, rows } of children) {
    if (rows.length === 0) continue;
    const columns = child.columns.map((c) => c.name);
    const source = rows.map((row) => sql`select ${sql.join(columns.map((c) => sql`${row[c]} as ${sql.ref(c)}`))}`);
    statements.push(
      sql`insert into ${sql.table(qualified(ctx, child.name))} (${columnList(columns)}) select ${sql.join(columns.map((c) => sql.ref(`fs_rows.${c}`)))} from (${sql.join(source, sql` union all `)}) as ${sql.id('fs_rows')} where exists (select 1 from ${sql.table(rootTable)} as ${sql.id('fs_root')} where ${parentOf('fs_rows', child)} and (${won('fs_root')}))`.compile(db),
    );
  }
  statements.push(db.deleteFrom(qualified(ctx, errors.table)).where('stream', '=', errors.stream).where('record_key', 'in', recordKeys).compile());
  return CompiledQuery.raw(statements.map((s) => s.sql).join(';\n'), statements.flatMap((s) => [...s.parameters]));
}
