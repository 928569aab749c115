import type { RecordBatch, SyncRecord } from '../contracts/index.js';
import type { MappedBatch, MappedTable, MapOptions as MapBatchOptions, MapResult as MapBatchResult, Row } from '../contracts/mapping.js';
import { describeValue } from '../util/describe-value.js';
import { recordJson } from '../util/record-json.js';
import { MappingError, type RecordMappingError } from './mapping-error.js';
import { applyTransforms, toCell, TransformError } from './transforms.js';
import { deleteAtSegments, getAtSegments, type CompiledPath } from './path.js';
import type { Cell, CompiledChild, CompiledColumn, CompiledTable, StreamMapping } from './compile-mapping.js';

const isBlank = (value: unknown): boolean => value === null || value === undefined || value === '';

export type { MappedBatch, MappedTable, Row } from '../contracts/mapping.js';
export type { MapOptions as MapBatchOptions, MapResult as MapBatchResult } from '../contracts/mapping.js';

interface Frame {
  /** Elements from the record data (index 0) down to the current element. */
  readonly chain: readonly unknown[];
  readonly index: number;
  readonly element: string;
}

/**
 * Maps a batch record by record. A record is all-or-nothing: if any of its cells (parent or child)
 * fails, none of its rows are emitted and it is returned in `errors`, so a bad record never takes
 * the rest of the batch with it and never leaves half of itself behind.
 */
export function mapBatch(batch: RecordBatch, mapping: StreamMapping, options: MapBatchOptions = {}): MapBatchResult {
  const rowsByTable = new Map<string, Row[]>(mapping.tables.map((t) => [t.table, []]));
  const errors: RecordMappingError[] = [];

  for (const record of batch.records) {
    const pending = new Map<string, Row[]>();
    const problems: MappingError[] = [];
    mapRecord(record, batch.runId ?? null, mapping, options, pending, problems);
    if (problems.length > 0) {
      errors.push({ record, errors: problems as unknown as RecordMappingError['errors'] });
      continue;
    }
    for (const [table, rows] of pending) rowsByTable.get(table)?.push(...rows);
  }

  const tables: MappedTable[] = mapping.tables.map((table) => {
    const child = table as CompiledChild;
    const base = { table: table.table, key: table.key, columns: table.outputColumns, rows: rowsByTable.get(table.table) ?? [] };
    return child.parentTable ? { ...base, parent: { table: child.parentTable, parentKeyColumns: child.parentKey.map((k) => k.name) } } : base;
  });
  return { batch: { stream: batch.stream, batchId: batch.batchId, tables }, errors };
}

/**
 * Each table's rows start as a copy of this: every output column, in output order, set to null.
 * A row then only has its values stored, and keeps one fast object layout. Built column by
 * column, a root row of the default loads mapping (58 columns) fell into V8's dictionary mode —
 * a hash-table insert per cell, and a hash lookup per cell again when a sink reads it. The keys
 * are exactly those mapRow sets, in the order it sets them (outputColumns), so rows are unchanged.
 */
const rowTemplates = new WeakMap<CompiledTable, Row | null>();

function rowTemplate(table: CompiledTable): Row | null {
  let template = rowTemplates.get(table);
  if (template === undefined) {
    // `__proto__` as a key would be an own property in the template but the prototype when set.
    // JSON.parse builds an object with fast properties however many there are.
    template = table.outputColumns.includes('__proto__') ? null : (JSON.parse(JSON.stringify(Object.fromEntries(table.outputColumns.map((c) => [c, null])))) as Row);
    rowTemplates.set(table, template);
  }
  return template;
}

function mapRecord(
  record: SyncRecord,
  runId: string | null,
  mapping: StreamMapping,
  options: MapBatchOptions,
  out: Map<string, Row[]>,
  problems: MappingError[],
): void {
  const fail = (table: CompiledTable, column: string, element: string, reason: string) =>
    problems.push(new MappingError({ stream: record.stream || mapping.stream, key: record.key, table: table.table, column, element, reason }));

  const mapRow = (table: CompiledTable, frame: Frame, parentRow: Row | undefined, op: SyncRecord['op']): Row => {
    const template = rowTemplate(table);
    const row: Row = template ? { ...template } : {};
    const child = table as CompiledChild;
    for (const parentKey of child.parentTable ? child.parentKey : []) {
      const value = parentKey.fromColumn !== undefined ? (parentRow?.[parentKey.fromColumn] ?? null) : cellOf(read(record, parentKey.path!, { ...frame, chain: frame.chain.slice(0, -1) }));
      row[parentKey.name] = value;
    }
    for (const column of table.columns) {
      try {
        const raw = readColumn(record, column, frame);
        let value = column.transforms.length === 0 ? toCell(raw) : toCell(applyTransforms(raw, column.transforms));
        if (value === null && column.default !== undefined) value = column.default;
        if (typeof value === 'string' && options.checkText) {
          const reason = options.checkText(value);
          if (reason) throw new TransformError(`${reason} in ${describeValue(value)}`);
        }
        row[column.name] = value;
      } catch (error) {
        if (!(error instanceof TransformError)) throw error;
        row[column.name] = null;
        fail(table, column.name, frame.element, error.message);
      }
    }
    if (table.includeRaw) row._raw = rawJson(frame.chain[frame.chain.length - 1], table, options, (reason) => fail(table, '_raw', frame.element, reason));
    for (const keyColumn of table.key) {
      const value = row[keyColumn];
      if (value === null || value === undefined || value === '') fail(table, keyColumn, frame.element, 'key column is empty');
    }
    row._op = op;
    row._updated_at = record.updatedAt;
    row._synced_at = record.syncedAt;
    row._run_id = runId;
    return row;
  };

  const emit = (table: CompiledTable, row: Row) => {
    const list = out.get(table.table);
    if (list) list.push(row);
    else out.set(table.table, [row]);
  };

  const mapChildren = (table: CompiledTable, frame: Frame, parentRow: Row) => {
    for (const child of table.children) {
      const items = getAtSegments(frame.chain[frame.chain.length - 1], child.path.segments);
      if (items === null || items === undefined) continue;
      if (!Array.isArray(items)) {
        fail(child, '(path)', frame.element, `expected an array at "${child.path.text}", got ${describeValue(items)}`);
        continue;
      }
      for (let index = 0; index < items.length; index++) {
        const item: unknown = items[index];
        // A hole of a sparse array is skipped, as forEach did.
        if (item === undefined && !(index in items)) continue;
        const element = `${frame.element}${frame.element ? '.' : ''}${child.path.text}[${index}]`;
        const childFrame: Frame = { chain: [...frame.chain, item], index, element };
        const row = mapRow(child, childFrame, parentRow, 'upsert');
        emit(child, row);
        mapChildren(child, childFrame, row);
      }
    }
  };

  const rootFrame: Frame = { chain: [record.data], index: 0, element: '' };
  const rootRow = mapRow(mapping.root, rootFrame, undefined, record.op);
  emit(mapping.root, rootRow);
  // A tombstone carries only its parent row: sinks replace children per parent, so none are needed.
  if (record.op !== 'delete') mapChildren(mapping.root, rootFrame, rootRow);
}

/** The column's path, else the first fallback that yields something, else what the path gave. */
function readColumn(record: SyncRecord, column: CompiledColumn, at: Frame): unknown {
  const first = column.path ? read(record, column.path, at) : undefined;
  if (!column.fallback || !isBlank(first)) return first;
  for (const alternative of column.fallback) {
    const value = applyTransforms(read(record, alternative.path, at), alternative.transforms);
    if (!isBlank(value)) return value;
  }
  return first;
}

function read(record: SyncRecord, path: CompiledPath, at: Frame): unknown {
  switch (path.scope) {
    case 'key':
      return record.key;
    case 'index':
      return at.index;
    case 'root':
      return getAtSegments(record.data, path.segments);
    case 'parent':
      return getAtSegments(at.chain[at.chain.length - 1 - path.depth], path.segments);
    case 'element':
      return getAtSegments(at.chain[at.chain.length - 1], path.segments);
  }
}

function cellOf(value: unknown): Cell {
  try {
    return toCell(value);
  } catch {
    return null;
  }
}

function rawJson(value: unknown, table: CompiledTable, options: MapBatchOptions, fail: (reason: string) => void): string {
  let subject = value;
  if (table.rawOmit.length > 0 && value !== null && typeof value === 'object') {
    subject = structuredClone(value);
    for (const segments of table.rawOmit) deleteAtSegments(subject, segments);
  }
  // The record itself (no omissions): the text the content hash already made, not a second stringify.
  const text = subject === value && subject !== null && typeof subject === 'object' && !Array.isArray(subject) ? recordJson(subject) : JSON.stringify(subject ?? null);
  const reason = options.checkText?.(text);
  if (reason) fail(`${reason} in the raw JSON`);
  return text;
}
