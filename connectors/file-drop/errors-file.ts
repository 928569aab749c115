import type { Cell, RecordMappingError, StreamMapper } from '../../src/contracts/index.js';

/** Columns of `<table>__<batch>.errors.csv`: one row per problem, with the record's full JSON. */
export const ERROR_COLUMNS = ['stream', 'batch_id', 'record_key', 'op', 'updated_at', 'synced_at', 'table', 'column', 'element', 'message', 'raw'] as const;

export function errorRows(batchId: string, errors: readonly RecordMappingError[], mapper: StreamMapper): Record<string, Cell>[] {
  const rows: Record<string, Cell>[] = [];
  for (const { record, errors: problems } of errors) {
    const raw = JSON.stringify(mapper.rawOf(record));
    for (const problem of problems) {
      rows.push({
        stream: record.stream,
        batch_id: batchId,
        record_key: record.key,
        op: record.op,
        updated_at: record.updatedAt,
        synced_at: record.syncedAt,
        table: problem.table,
        column: problem.column,
        element: problem.element,
        message: problem.message,
        raw,
      });
    }
  }
  return rows;
}

/** For latin1 output: escape what latin1 cannot hold (`\uXXXX`), so the error report itself never fails. */
export function escapeNonLatin1(rows: Record<string, Cell>[]): Record<string, Cell>[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [
        k,
        typeof v === 'string' ? v.replace(/[^\u0000-\u00ff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : v,
      ]),
    ),
  );
}
