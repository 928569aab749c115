import { throwIfAborted } from '../../src/util/abort.js';
import type { Row } from '../../src/contracts/index.js';
import type { AnyDb } from './connect.js';
import { encodeRow, keyString, versionMillis, type DbRow } from './encode-row.js';
import type { RecordGroup } from './record-groups.js';
import {
  chunk,
  deleteByRootKeysQuery,
  hardDeleteQuery,
  insertQuery,
  rowsPerStatement,
  selectVersionsQuery,
  upsertQuery,
  type StatementContext,
} from './statements.js';
import type { StreamPlan, TablePlan } from './table-plan.js';

/** A statement failed: which table, and the mapped rows it was writing (to find the column). */
export class TableWriteError extends Error {
  constructor(
    readonly table: TablePlan,
    readonly rows: readonly Row[],
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'TableWriteError';
  }
}

export interface WriteSettings {
  readonly ctx: StatementContext;
  readonly deleteMode: 'soft' | 'hard';
}

/**
 * Writes groups set-wise inside the caller's transaction:
 * 1. upsert the root rows (newer-or-equal wins; tombstones as `_deleted = true`, or hard deletes);
 * 2. read back the stored versions to learn which records actually won — a late, older version
 *    must not replace the children of the newer one that stayed;
 * 3. for the winners, delete their child rows (deepest table first) and insert the new ones.
 */
export async function writeGroups(db: AnyDb, plan: StreamPlan, groups: readonly RecordGroup[], settings: WriteSettings, signal: AbortSignal): Promise<void> {
  if (groups.length === 0) return;
  const { ctx } = settings;
  const dialect = ctx.dialect;
  const root = plan.root;

  const run = async (table: TablePlan, rows: readonly Row[], work: () => Promise<unknown>) => {
    throwIfAborted(signal);
    try {
      await work();
    } catch (error) {
      throw new TableWriteError(table, rows, error);
    }
  };

  // Encoded once: the root row is needed for the upsert, the version read-back and the child delete.
  const encodedRoot = new Map<RecordGroup, DbRow>(groups.map((g) => [g, encodeRow(g.root, root, dialect, g.op)]));
  const rootKeyOf = (g: RecordGroup) => root.key.map((k) => encodedRoot.get(g)![k]);

  const upserts = settings.deleteMode === 'hard' ? groups.filter((g) => g.op === 'upsert') : groups;
  const tombstones = settings.deleteMode === 'hard' ? groups.filter((g) => g.op === 'delete') : [];

  // Sorted by key so two writers touching the same rows lock them in the same order (no deadlock).
  const sortedUpserts = [...upserts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const part of chunk(sortedUpserts, rowsPerStatement(ctx, root.columns.length))) {
    const rows = part.map((g) => encodedRoot.get(g)!);
    await run(root, part.map((g) => g.root), () => upsertQuery(db, ctx, root, rows).execute());
  }
  for (const part of chunk(tombstones, Math.max(1, Math.floor(rowsPerStatement(ctx, root.key.length + 1) / 2)))) {
    const items = part.map((g) => ({ key: rootKeyOf(g), version: encodedRoot.get(g)!._updated_at ?? null }));
    await run(root, part.map((g) => g.root), () => hardDeleteQuery(db, ctx, root, items).execute());
  }

  // Which records' versions are now the stored ones.
  const stored = new Map<string, unknown>();
  for (const part of chunk(groups, rowsPerStatement(ctx, root.key.length))) {
    const keys = part.map(rootKeyOf);
    await run(root, [], async () => {
      const rows = (await selectVersionsQuery(db, ctx, root, keys).execute()) as Record<string, unknown>[];
      for (const row of rows) stored.set(keyString(root.key.map((k) => row[k])), row._updated_at);
    });
  }
  const winners = groups.filter((g) => {
    const id = keyString(rootKeyOf(g));
    if (!stored.has(id)) return g.op === 'delete' && settings.deleteMode === 'hard';
    if (g.op === 'delete' && settings.deleteMode === 'hard') return false;
    return versionMillis(stored.get(id)) === versionMillis(g.root._updated_at);
  });
  if (winners.length === 0 || plan.children.length === 0) return;

  const winnerKeys = winners.map(rootKeyOf);
  for (const child of [...plan.children].sort((a, b) => b.depth - a.depth)) {
    for (const part of chunk(winnerKeys, rowsPerStatement(ctx, child.rootKeyColumns.length))) {
      await run(child, [], () => deleteByRootKeysQuery(db, ctx, child, part).execute());
    }
  }
  for (const child of plan.children) {
    const rows = winners.filter((g) => g.op === 'upsert').flatMap((g) => g.children.get(child.name) ?? []);
    for (const part of chunk(rows, rowsPerStatement(ctx, child.columns.length))) {
      const encoded: DbRow[] = part.map((row) => encodeRow(row, child, dialect, 'upsert'));
      await run(child, part, () => insertQuery(db, ctx, child, encoded).execute());
    }
  }
}
