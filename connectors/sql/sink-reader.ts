import { sql } from 'kysely';
import type { SinkReader, SinkRow, StreamMapper } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { cellText } from '../../src/util/cell-text.js';
import type { AnyDb } from './connect.js';
import { versionMillis } from './encode-row.js';
import { qualified, type StatementContext } from './statements.js';
import type { ColumnPlan, StreamPlan, TablePlan } from './table-plan.js';

const PAGE_ROWS = 1000;
const META = ['_op', '_updated_at', '_synced_at'];

export interface SqlSinkReaderDeps {
  readonly db: AnyDb;
  readonly ctx: StatementContext;
  readonly streamFor: (stream: string) => Promise<{ mapper: StreamMapper; plan: StreamPlan }>;
}

/**
 * Reads a stream's root table back for `reconcile`: pages ordered by the key, every value turned
 * into the canonical text of `cellText` using the column's planned kind (SQLite keeps booleans
 * as 1/0, drivers return dates as Date objects, decimals as strings). Only SELECTs.
 */
export class SqlSinkReader implements SinkReader {
  constructor(private readonly deps: SqlSinkReaderDeps) {}

  async *readRows(stream: string, options: { columns?: readonly string[] }, signal: AbortSignal): AsyncIterable<readonly SinkRow[]> {
    const { plan } = await this.deps.streamFor(stream);
    const table = plan.root;
    const wanted = options.columns ? new Set([...options.columns, ...table.key, ...META, '_deleted']) : undefined;
    const columns = table.columns.filter((c) => !wanted || wanted.has(c.name));
    for (let offset = 0; ; offset += PAGE_ROWS) {
      throwIfAborted(signal);
      const rows = (await this.page(table, columns, offset).execute()) as Record<string, unknown>[];
      if (rows.length > 0) yield rows.map((row) => this.toText(row, columns));
      if (rows.length < PAGE_ROWS) return;
    }
  }

  private page(table: TablePlan, columns: readonly ColumnPlan[], offset: number) {
    const { db, ctx } = this.deps;
    let query = db
      .selectFrom(qualified(ctx, table.name))
      .select(columns.map((c) => sql.ref(c.name).as(c.name)) as never);
    for (const key of table.key) query = query.orderBy(sql.ref(key) as never);
    // SQL Server pages with OFFSET … FETCH; the others with LIMIT … OFFSET.
    return ctx.dialect === 'mssql' ? query.offset(offset).fetch(PAGE_ROWS) : query.limit(PAGE_ROWS).offset(offset);
  }

  private toText(row: Record<string, unknown>, columns: readonly ColumnPlan[]): SinkRow {
    const out: Record<string, string | null> = {};
    for (const column of columns) out[column.name] = this.cell(row[column.name], column);
    // A soft-deleted row is a tombstone whatever `_op` says (an ERP may only set the flag).
    if (out._deleted === 'true') out._op = 'delete';
    return out;
  }

  private cell(value: unknown, column: ColumnPlan): string | null {
    if (value === null || value === undefined) return null;
    switch (column.kind.type) {
      case 'boolean':
        return typeof value === 'boolean' ? String(value) : Number(value) !== 0 ? 'true' : 'false';
      case 'timestamp': {
        const millis = versionMillis(value);
        return millis === null ? cellText(value) : new Date(millis).toISOString();
      }
      case 'date':
        return value instanceof Date ? this.dateOnly(value) : cellText(value);
      default:
        return cellText(value);
    }
  }

  /** pg builds a DATE at local midnight, mysql2 (connection in UTC) at UTC midnight. */
  private dateOnly(value: Date): string {
    const local = this.deps.ctx.dialect === 'postgres';
    const y = local ? value.getFullYear() : value.getUTCFullYear();
    const m = (local ? value.getMonth() : value.getUTCMonth()) + 1;
    const d = local ? value.getDate() : value.getUTCDate();
    return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  }
}
