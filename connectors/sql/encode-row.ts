import type { Cell, Row } from '../../src/contracts/index.js';
import type { SqlDialectName } from './options.js';
import { DELETED_COLUMN, type ColumnPlan, type TablePlan } from './table-plan.js';

/** A row as bound parameters for one dialect, with every planned column present (null when absent). */
export type DbRow = Record<string, unknown>;

/** Meta timestamps are compared (newer-or-equal wins): in SQLite, as text, they must share one format. */
const META_TIMESTAMPS = new Set(['_updated_at', '_synced_at']);

export function encodeRow(row: Row, plan: TablePlan, dialect: SqlDialectName, op: 'upsert' | 'delete'): DbRow {
  const out: DbRow = {};
  for (const column of plan.columns) out[column.name] = encodeColumn(row, column, plan, dialect, op);
  return out;
}

/**
 * The values `encodeRow` would hold, appended to `out` in the plan's column order: a batch
 * statement binds them straight from one array, without an object per row.
 */
export function encodeValuesInto(out: unknown[], row: Row, plan: TablePlan, dialect: SqlDialectName, op: 'upsert' | 'delete'): void {
  for (const column of plan.columns) out.push(encodeColumn(row, column, plan, dialect, op));
}

/**
 * The values `encodeRow` would hold, each appended to its column's array (`out[i]` for the plan's
 * i-th column): a PostgreSQL batch statement binds one array per column (unnest-statement.ts).
 */
export function encodeColumnsInto(out: readonly unknown[][], row: Row, plan: TablePlan, dialect: SqlDialectName, op: 'upsert' | 'delete'): void {
  const columns = plan.columns;
  for (let i = 0; i < columns.length; i += 1) out[i]!.push(encodeColumn(row, columns[i]!, plan, dialect, op));
}

function encodeColumn(row: Row, column: ColumnPlan, plan: TablePlan, dialect: SqlDialectName, op: 'upsert' | 'delete'): unknown {
  if (column.name === DELETED_COLUMN && plan.isRoot) return encodeCell(op === 'delete', column, dialect);
  return encodeCell(row[column.name] ?? null, column, dialect);
}

export function encodeCell(value: Cell, column: ColumnPlan, dialect: SqlDialectName): unknown {
  if (value === null) return null;
  const kind = column.kind.type;
  if (typeof value === 'boolean') {
    if (kind === 'boolean') return dialect === 'sqlite' ? (value ? 1 : 0) : value;
    // A boolean landing in a text or number column (untyped mapping): spelled out, never "1"/"".
    if (kind === 'integer' || kind === 'double' || kind === 'decimal') return value ? 1 : 0;
    return value ? 'true' : 'false';
  }
  if (kind === 'timestamp' && typeof value === 'string') {
    const millis = Date.parse(value);
    // Unparseable text is passed on as it is, so the database rejects it with the column named.
    if (Number.isNaN(millis)) return value;
    if (dialect === 'mysql' || dialect === 'mssql') return new Date(millis);
    if (dialect === 'sqlite' && META_TIMESTAMPS.has(column.name)) return new Date(millis).toISOString();
    return value;
  }
  if (kind === 'timestamp' && typeof value === 'number' && dialect !== 'sqlite') return new Date(value);
  return value;
}

/** Epoch millis of a stored or incoming version (`_updated_at`), whatever form the driver returns. */
export function versionMillis(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  const text = String(value);
  // MySQL DATETIME read as text has no zone: it is UTC (the connection runs in UTC).
  const millis = Date.parse(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(text) && !/[zZ+]/.test(text.slice(10)) ? `${text.replace(' ', 'T')}Z` : text);
  return Number.isNaN(millis) ? null : millis;
}

/** A key as a map key: values compared as text, since drivers return numbers and bigints differently. */
export function keyString(values: readonly unknown[]): string {
  return JSON.stringify(values.map((v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v))));
}
