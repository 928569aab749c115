import { FreightSyncError } from '../../src/util/errors.js';

/**
 * A record the database refused. The message names stream, key, table and column:
 * `stream loads, key M000123, table erp_loads, column container_no: Data too long for column …`.
 */
export class SqlRowError extends FreightSyncError {
  readonly stream: string;
  readonly key: string;
  readonly table: string;
  readonly column: string | undefined;
  readonly reason: string;

  constructor(details: { stream: string; key: string; table: string; column: string | undefined; reason: string }, options?: { cause?: unknown }) {
    const column = details.column ? `, column ${details.column}` : '';
    super('SQL_ROW_REJECTED', `stream ${details.stream}, key ${details.key}, table ${details.table}${column}: ${details.reason}`, options);
    this.stream = details.stream;
    this.key = details.key;
    this.table = details.table;
    this.column = details.column;
    this.reason = details.reason;
  }
}

export function isSqlRowError(error: unknown): error is SqlRowError {
  return error instanceof SqlRowError;
}
