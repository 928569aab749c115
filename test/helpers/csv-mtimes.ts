import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

export interface TimedRow {
  row: Record<string, string>;
  /** When the file holding the row was written (ms). */
  mtimeMs: number;
}

/** Every data row of a table with the mtime of its file: when the row became visible to an ERP. */
export function readRowsWithMtime(outDir: string, table: string): TimedRow[] {
  if (!fs.existsSync(outDir)) return [];
  const out: TimedRow[] = [];
  for (const name of fs.readdirSync(outDir)) {
    if (!name.startsWith(`${table}__`) || !name.endsWith('.csv') || name.endsWith('.errors.csv')) continue;
    const file = path.join(outDir, name);
    const mtimeMs = fs.statSync(file).mtimeMs;
    const rows = parse(fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, ''), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>;
    for (const row of rows) out.push({ row, mtimeMs });
  }
  return out;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
