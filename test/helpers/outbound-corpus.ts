import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/** The bad outbound input corpus (test/fixtures/bad-input/outbound/README.md). */
export const CORPUS = path.resolve('test/fixtures/bad-input/outbound');

export type ResultRow = Record<string, string>;

/**
 * Copies every corpus file into `inbox`, plus `huge-line.csv`: a 10 MB line between two valid
 * rows (generated here rather than kept in the repository). Returns the file names.
 */
export function copyBadInputCorpus(inbox: string): string[] {
  const names = fs.readdirSync(CORPUS).filter((n) => /\.(csv|json)$/.test(n));
  for (const name of names) fs.copyFileSync(path.join(CORPUS, name), path.join(inbox, name));
  const huge = 'x'.repeat(10 * 1024 * 1024);
  fs.writeFileSync(
    path.join(inbox, 'huge-line.csv'),
    `erp_key,kind,type_of_load,preSetOrderStatus,caller,shipper,officeNote\r\nOK-H-1,create,IMPORT,,CUS000001,CUS000002,\r\nBAD-H-2,create,IMPORT,,CUS000001,CUS000002,${huge}\r\nOK-H-3,create,IMPORT,,CUS000001,CUS000002,short note\r\n`,
  );
  return [...names, 'huge-line.csv'];
}

export function readCsvRows(file: string): ResultRow[] {
  return parse(fs.readFileSync(file, 'utf8'), { columns: true }) as ResultRow[];
}

/** The `<file>.result.csv` a push wrote into `processed/` or `failed/`. */
export function resultsOf(inbox: string, file: string): ResultRow[] {
  for (const folder of ['processed', 'failed']) {
    const candidate = path.join(inbox, folder, `${file}.result.csv`);
    if (fs.existsSync(candidate)) return readCsvRows(candidate);
  }
  throw new Error(`no result file for ${file}`);
}
