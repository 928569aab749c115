import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/**
 * Reads a CSV drop the way an ERP would — every data file of a table, then the latest version of
 * each key — and compares it with a list of records (the simulator's truth). Used by the demo to
 * report honestly what it delivered, and by the tests.
 */
export type CsvRow = Record<string, string>;

/** A batch's file of the table (`<UTC time>-<seq>-<table>.csv`). */
const BATCH_FILE = /^\d{8}T\d{6}Z-\d{6,}-(.+)\.csv$/;

/**
 * Every published data file of a table (not markers, not staged pages, not error files), rows in
 * file-name order: batch files (`<UTC time>-<seq>-<table>.csv`), then files of the layout
 * before batches (`<table>__<batchId>.csv`).
 */
export function readCsvRows(outDir: string, table: string): CsvRow[] {
  if (!fs.existsSync(outDir)) return [];
  const rows: CsvRow[] = [];
  for (const name of fs.readdirSync(outDir).sort()) {
    const ofTable = BATCH_FILE.exec(name)?.[1] === table || (name.startsWith(`${table}__`) && name.endsWith('.csv') && !name.endsWith('.errors.csv'));
    if (!ofTable) continue;
    const text = fs.readFileSync(path.join(outDir, name), 'utf8').replace(/^\uFEFF/, '');
    rows.push(...(parse(text, { columns: true, skip_empty_lines: true, relax_column_count: false }) as CsvRow[]));
  }
  return rows;
}

/** The latest version of each key: by the record's updatedAt, then by when it was synced. */
export function latestByKey(rows: readonly CsvRow[], keyColumn = 'record_key'): Map<string, CsvRow> {
  const latest = new Map<string, CsvRow>();
  for (const row of rows) {
    const key = row[keyColumn]!;
    const current = latest.get(key);
    if (!current || compareVersion(row, current) >= 0) latest.set(key, row);
  }
  return latest;
}

function compareVersion(a: CsvRow, b: CsvRow): number {
  const au = Date.parse(a._updated_at ?? '') || 0;
  const bu = Date.parse(b._updated_at ?? '') || 0;
  if (au !== bu) return au - bu;
  return (Date.parse(a._synced_at ?? '') || 0) - (Date.parse(b._synced_at ?? '') || 0);
}

export interface TruthComparison {
  truth: number;
  /** Keys the server has and the drop does not. */
  missing: string[];
  /** Keys whose latest version in the drop is older than the server's. */
  stale: string[];
  /** Keys deleted on the server without a tombstone as their latest version (or the reverse). */
  wrongOp: string[];
  /** Keys in the drop the server never had. */
  phantom: string[];
}

export function compareWithTruth(
  truth: readonly Record<string, unknown>[],
  latest: ReadonlyMap<string, CsvRow>,
  key: (record: Record<string, unknown>) => string,
  isDeleted: (record: Record<string, unknown>) => boolean = (record) => record.isDeleted === true,
): TruthComparison {
  const result: TruthComparison = { truth: truth.length, missing: [], stale: [], wrongOp: [], phantom: [] };
  const keys = new Set<string>();
  for (const record of truth) {
    const k = key(record);
    keys.add(k);
    const row = latest.get(k);
    if (!row) {
      result.missing.push(k);
      continue;
    }
    const truthUpdated = Date.parse(String(record.updatedAt ?? ''));
    if (!Number.isNaN(truthUpdated) && Date.parse(row._updated_at ?? '') !== truthUpdated) result.stale.push(k);
    if ((row._op === 'delete') !== isDeleted(record)) result.wrongOp.push(k);
  }
  for (const k of latest.keys()) if (!keys.has(k)) result.phantom.push(k);
  return result;
}
