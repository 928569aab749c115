import type { AnyDb } from './connect.js';
import { TIMESTAMP } from './column-kinds.js';
import { SQL_DIALECTS } from './options.js';
import { sqlTypeOf } from './sql-types.js';
import { chunk, qualified, type StatementContext } from './statements.js';
import { autoIncrementId, type TableSpec } from './table-spec.js';

/**
 * `<prefix>sync_errors`: an ERP-side MIRROR of what this sink refused and has not written since —
 * one row per problem of a record rejected by the database or failed to map — so an integration
 * engineer finds it with SQL. The store of truth is the daemon's quarantine (`freight-sync
 * rejected list`), which the sink's acknowledgement feeds; the mirror stays consistent with the
 * ERP tables because the rows of a key are deleted in the same transaction that writes the key
 * (re-delivery, `rejected retry`, or a newer version). A discarded record stays listed: the ERP
 * does not have it. `table_name` / `column_name` rather than `table` / `column`: reserved words.
 */
export interface SyncErrorRow {
  stream: string;
  batch_id: string;
  record_key: string;
  op: string;
  updated_at: string | null;
  table_name: string;
  column_name: string | null;
  message: string;
  raw: string | null;
  at: string;
}

/** A real timestamp type wherever the database has one (SQLite: ISO 8601 text), as in data tables. */
const TIMESTAMP_TYPE = { default: sqlTypeOf(TIMESTAMP, 'mysql', 0), ...Object.fromEntries(SQL_DIALECTS.map((d) => [d, sqlTypeOf(TIMESTAMP, d, 0)])) };

export function errorsTableSpec(name: string, textLength: number): TableSpec {
  const short = `varchar(${Math.min(textLength, 255)})`;
  return {
    name,
    id: autoIncrementId,
    columns: [
      { name: 'stream', type: { default: 'varchar(100)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(100)' }, notNull: true },
      { name: 'batch_id', type: { default: short, postgres: 'text', sqlite: 'text', mssql: `n${short}` } },
      { name: 'record_key', type: { default: short, postgres: 'text', sqlite: 'text', mssql: `n${short}` }, notNull: true },
      { name: 'op', type: { default: 'varchar(16)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(16)' } },
      { name: 'updated_at', type: TIMESTAMP_TYPE },
      { name: 'table_name', type: { default: 'varchar(100)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(100)' } },
      { name: 'column_name', type: { default: 'varchar(100)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(100)' } },
      { name: 'message', type: { default: 'longtext', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(max)' }, notNull: true },
      { name: 'raw', type: { default: 'longtext', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(max)' } },
      { name: 'at', type: TIMESTAMP_TYPE, notNull: true },
    ],
    indexes: [{ suffix: 'key', columns: ['stream', 'record_key'] }],
  };
}

/**
 * ISO text as the dialect's timestamp parameter: MySQL and SQL Server drivers take a Date (written
 * as UTC); PostgreSQL parses the text itself; SQLite keeps the text. A version that is not a date
 * (a stream's own odd `updatedAt`) is left out rather than failing the report of a failure.
 */
function timestampParam(value: string | null, ctx: StatementContext): string | Date | null {
  if (value === null) return null;
  const millis = Date.parse(value);
  if (Number.isNaN(millis)) return null;
  if (ctx.dialect === 'mysql' || ctx.dialect === 'mssql') return new Date(millis);
  return ctx.dialect === 'sqlite' ? new Date(millis).toISOString() : value;
}

/** Fits each text into the errors table's columns, so the report of a too-long value never fails itself. */
function clip(value: string | null, max: number): string | null {
  if (value === null) return null;
  const chars = [...value];
  return chars.length <= max ? value : `${chars.slice(0, max - 1).join('')}…`;
}

export async function insertSyncErrors(db: AnyDb, ctx: StatementContext, table: string, rows: readonly SyncErrorRow[], textLength: number): Promise<void> {
  if (rows.length === 0) return;
  const short = Math.min(textLength, 255);
  const fitted = rows.map((r) => ({
    ...r,
    stream: clip(r.stream, 100),
    batch_id: clip(r.batch_id, short),
    record_key: clip(r.record_key, short),
    table_name: clip(r.table_name, 100),
    column_name: clip(r.column_name, 100),
    updated_at: timestampParam(r.updated_at, ctx),
    at: timestampParam(r.at, ctx),
  }));
  // Few rows, wide text: one statement per 50 keeps SQL Server's parameter limit far away.
  for (let i = 0; i < fitted.length; i += 50) {
    await db.insertInto(qualified(ctx, table)).values(fitted.slice(i, i + 50)).execute();
  }
}

/**
 * Removes the mirror rows of keys this transaction wrote. One indexed probe first: most batches
 * of a stream without errors cost no delete at all.
 */
export async function clearSyncErrors(db: AnyDb, ctx: StatementContext, table: string, stream: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const errors = qualified(ctx, table);
  const any = await db.selectFrom(errors).select('record_key').where('stream', '=', stream).limit(1).execute();
  if (any.length === 0) return;
  for (const part of chunk(keys, 500)) {
    await db.deleteFrom(errors).where('stream', '=', stream).where('record_key', 'in', part).execute();
  }
}
