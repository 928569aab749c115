import { parse } from 'csv-parse/sync';
import type { InboundRequest } from '../../src/contracts/index.js';
import { scanCsvRecords } from './csv-records.js';

export interface ParseOptions {
  readonly delimiter: string;
  readonly maxRecordLength: number;
}

export type RequestFormat = 'csv' | 'json';

/** `.json`, `.jsonl`, `.ndjson` are JSON; anything else is CSV. */
export function formatOf(name: string): RequestFormat {
  return /\.(json|jsonl|ndjson)$/i.test(name) ? 'json' : 'csv';
}

/**
 * Requests of a CSV file: the first record is the header; every later record is a request with
 * `ref` = the line it starts on. A record that cannot be read becomes a request with `problem`
 * set; the others are still read. A broken header makes a single problem request (ref = its line).
 */
export function parseCsvRequests(text: string, options: ParseOptions): InboundRequest[] {
  const records = scanCsvRecords(text.replace(/^\uFEFF/, ''), options.delimiter, options.maxRecordLength);
  const [header, ...rows] = records;
  if (!header) return [];
  if (header.problem) return [{ ref: String(header.line), fields: {}, problem: `header (line ${header.line}): ${header.problem}` }];
  const columns = fieldsOf(header.text, options.delimiter);
  const headerProblem = checkHeader(columns);
  if (headerProblem) return [{ ref: String(header.line), fields: {}, problem: `header (line ${header.line}): ${headerProblem}` }];

  return rows.map((row): InboundRequest => {
    const ref = String(row.line);
    if (row.problem) return { ref, fields: {}, problem: `line ${row.line}: ${row.problem}` };
    let values: string[];
    try {
      values = fieldsOf(row.text, options.delimiter);
    } catch (error) {
      return { ref, fields: {}, problem: `line ${row.line}: ${(error as Error).message}` };
    }
    if (values.length !== columns.length) {
      return { ref, fields: {}, problem: `line ${row.line}: ${values.length} fields, but the header has ${columns.length}` };
    }
    return { ref, fields: Object.fromEntries(columns.map((column, k) => [column, values[k]])) };
  });
}

/** Fields of one record (already delimited by the scanner), unquoted by csv-parse (strict RFC 4180). */
function fieldsOf(record: string, delimiter: string): string[] {
  const parsed = parse(record, { delimiter, relax_quotes: false, relax_column_count: false, record_delimiter: ['\n', '\r\n'] }) as string[][];
  return parsed[0] ?? [''];
}

function checkHeader(columns: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const [k, column] of columns.entries()) {
    if (column.trim() === '') return `column ${k + 1} has no name`;
    if (seen.has(column)) return `column "${column}" appears twice`;
    seen.add(column);
  }
  return undefined;
}

/**
 * Requests of a JSON file: an array of objects (`ref` = 1-based element number) or JSON lines
 * (`ref` = line number). An element that is not an object, or a line that is not JSON, becomes a
 * problem request; the rest are still read. A file that is neither yields one problem request.
 */
export function parseJsonRequests(text: string): InboundRequest[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      return [{ ref: '1', fields: {}, problem: `not valid JSON: ${(error as Error).message}` }];
    }
    if (!Array.isArray(parsed)) return [{ ref: '1', fields: {}, problem: 'expected an array of objects' }];
    return parsed.map((element, k) => asRequest(String(k + 1), element, `element ${k + 1}`));
  }
  const requests: InboundRequest[] = [];
  for (const [k, line] of body.split('\n').entries()) {
    if (line.trim() === '') continue;
    const ref = String(k + 1);
    try {
      requests.push(asRequest(ref, JSON.parse(line), `line ${ref}`));
    } catch (error) {
      requests.push({ ref, fields: {}, problem: `line ${ref}: not valid JSON: ${(error as Error).message}` });
    }
  }
  return requests;
}

function asRequest(ref: string, value: unknown, where: string): InboundRequest {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ref, fields: {}, problem: `${where}: expected an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}` };
  }
  return { ref, fields: value as Record<string, unknown> };
}
