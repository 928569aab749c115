import { RAW_COLUMN, type CompiledColumn, type CompiledTable, type SinkRow, type StreamMapper, type SyncRecord } from '../contracts/index.js';
import { cellText } from '../util/cell-text.js';

/** A root-table row as text, keyed like the sink keys it. */
export interface TextRow {
  /** The root table's key columns as one string (what sink rows are matched by). */
  readonly rowKey: string;
  readonly cells: SinkRow;
}

/**
 * How reconcile reads one sink's mapping of a stream: which root columns it compares, how a row's
 * key and record key are found, and which columns hold status and invoice money. Everything comes
 * from the compiled mapping the sink itself uses, so a custom mapping is compared as it is.
 */
export class MappedView {
  readonly root: CompiledTable;
  /** Mapped columns of the root table (not `_raw`, not the meta columns). */
  readonly compared: readonly string[];
  private readonly keyColumn: string | undefined;

  constructor(readonly mapper: StreamMapper) {
    this.root = mapper.mapping.root;
    this.compared = this.root.columns.map((c) => c.name);
    this.keyColumn = this.root.columns.find((c) => c.path?.scope === 'key')?.name ?? (this.root.key.length === 1 ? this.root.key[0] : undefined);
  }

  /** Columns to ask the sink's reader for (`_raw` only when `withRaw`: it can be large). */
  readColumns(withRaw: boolean): string[] {
    return withRaw && this.root.includeRaw ? [...this.compared, RAW_COLUMN] : [...this.compared];
  }

  rowKey(cells: SinkRow): string {
    return JSON.stringify(this.root.key.map((k) => cells[k] ?? null));
  }

  /** The stream key of a sink row: the `$key` column, else the single key column, else the row key. */
  recordKey(cells: SinkRow): string {
    return (this.keyColumn ? cells[this.keyColumn] : null) ?? this.rowKey(cells);
  }

  /** The API record's root row exactly as this sink would store it, or the mapping problem. */
  mapRecord(record: SyncRecord): TextRow | { problem: string } {
    const { batch, errors } = this.mapper.map({ stream: record.stream, batchId: 'reconcile', records: [record] });
    if (errors.length > 0) return { problem: errors[0]!.errors[0].message };
    const row = batch.tables[0]?.rows[0];
    if (!row) return { problem: `the mapping produced no ${this.root.table} row` };
    const cells: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(row)) cells[name] = cellText(value);
    return { rowKey: this.rowKey(cells), cells };
  }

  /** The first root column read from one of `paths`, else one named like `names`. */
  column(paths: readonly string[], names: readonly string[] = []): string | undefined {
    const byPath = (path: string) => this.root.columns.find((c: CompiledColumn) => c.path?.scope === 'element' && c.path.text === path)?.name;
    const byName = (name: string) => this.root.columns.find((c) => c.name === name)?.name;
    return paths.map(byPath).find(Boolean) ?? names.map(byName).find(Boolean);
  }
}
