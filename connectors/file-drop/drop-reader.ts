import { parse } from 'csv-parse/sync';
import type { SinkReader, SinkRow, StreamMapper } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import type { FileEntry, FileTarget } from './file-target.js';
import { batchFileOf, safeFileComponent } from './file-names.js';
import type { CsvFormat } from './format-options.js';

const PAGE_ROWS = 1000;

export interface DropReaderDeps {
  readonly target: FileTarget;
  readonly directory: string;
  readonly options: Pick<CsvFormat, 'delimiter' | 'quote' | 'encoding' | 'header'>;
  readonly mappings: ReadonlyMap<string, StreamMapper>;
}

interface Version {
  readonly row: SinkRow;
  /** Delivery order: `_synced_at`, then the file's mtime and name, then the row's place in it. */
  readonly order: readonly [string, number, string, number];
}

/**
 * Reads a CSV drop back the way an ERP importing every file would end up: all published data files
 * of the stream's root table (never error files, markers, staged pages or temp files), then one version per key —
 * taken in delivery order with the rule an SQL sink applies (a version replaces the kept one when
 * its `_updated_at` is newer or equal, or either has none), so a tombstone (`_op` = `delete`)
 * written after a row hides it. Works on any file target (local folder, SFTP).
 */
export class DropSinkReader implements SinkReader {
  constructor(private readonly deps: DropReaderDeps) {}

  async *readRows(stream: string, _options: { columns?: readonly string[] }, signal: AbortSignal): AsyncIterable<readonly SinkRow[]> {
    yield* inPages(await this.latestRows(stream, signal));
  }

  /** Every kept row of the stream's root table (the drop must be read whole to know the latest). */
  async latestRows(stream: string, signal: AbortSignal): Promise<SinkRow[]> {
    const { target, directory } = this.deps;
    const mapper = this.deps.mappings.get(stream);
    if (!mapper) throw new Error(`stream ${stream}: this connector receives no such stream (it receives: ${[...this.deps.mappings.keys()].join(', ') || 'nothing'})`);
    const root = mapper.mapping.root;
    const table = safeFileComponent(root.table, 60);
    const files = (await target.list(directory)).filter((e) => e.isFile && isDataFileOf(e.name, table));
    const kept = new Map<string, Version>();
    const versions: Version[] = [];
    for (const file of files) {
      throwIfAborted(signal);
      versions.push(...(await this.readFile(file, root.outputColumns, signal)));
    }
    versions.sort((a, b) => compareOrder(a.order, b.order));
    for (const version of versions) {
      const key = JSON.stringify(root.key.map((k) => version.row[k] ?? null));
      const current = kept.get(key);
      if (!current || replaces(version.row, current.row)) kept.set(key, version);
    }
    return [...kept.values()].map((v) => v.row);
  }

  private async readFile(file: FileEntry, columns: readonly string[], signal: AbortSignal): Promise<Version[]> {
    const { target, directory, options } = this.deps;
    const path = target.join(directory, file.name);
    const text = (await target.read(path, signal)).toString(options.encoding).replace(/^\uFEFF/, '');
    let records: Record<string, string>[];
    try {
      records = parse(text, {
        columns: options.header ? true : [...columns],
        delimiter: options.delimiter,
        quote: options.quote,
        skip_empty_lines: true,
      }) as Record<string, string>[];
    } catch (error) {
      throw new Error(`${target.describe(path)}: cannot be read back as CSV: ${(error as Error).message}`, { cause: error });
    }
    return records.map((record, index) => {
      const row: Record<string, string | null> = {};
      for (const [name, value] of Object.entries(record)) row[name] = value === '' ? null : value;
      return { row, order: [row._synced_at ?? '', file.mtimeMs, file.name, index] as const };
    });
  }
}

/** Rows read whole, handed out in pages like the SQL reader's. */
export function* inPages(rows: readonly SinkRow[]): Generator<readonly SinkRow[]> {
  for (let i = 0; i < rows.length; i += PAGE_ROWS) yield rows.slice(i, i + PAGE_ROWS);
}

/** A published batch's file of the table (`<batch>-<table>.csv`), or one of the layout before batches (`<table>__<batchId>.csv`). */
function isDataFileOf(name: string, table: string): boolean {
  if (batchFileOf(name)?.table === table) return true;
  return !name.startsWith('.') && name.startsWith(`${table}__`) && name.endsWith('.csv') && !name.endsWith('.errors.csv');
}

function compareOrder(a: Version['order'], b: Version['order']): number {
  const synced = (Date.parse(a[0]) || 0) - (Date.parse(b[0]) || 0);
  if (synced !== 0) return synced;
  if (a[1] !== b[1]) return a[1] - b[1];
  if (a[2] !== b[2]) return a[2] < b[2] ? -1 : 1;
  return a[3] - b[3];
}

function replaces(incoming: SinkRow, stored: SinkRow): boolean {
  const next = Date.parse(incoming._updated_at ?? '');
  const kept = Date.parse(stored._updated_at ?? '');
  return Number.isNaN(next) || Number.isNaN(kept) || next >= kept;
}
