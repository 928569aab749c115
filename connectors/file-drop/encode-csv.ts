import { stringify } from 'csv-stringify/sync';
import type { Cell } from '../../src/contracts/index.js';
import type { CsvFormat } from './format-options.js';

type Format = Pick<CsvFormat, 'delimiter' | 'bom' | 'lineEnding' | 'quote' | 'quoted' | 'encoding' | 'header'> &
  Partial<Pick<CsvFormat, 'formulaEscape'>>;

/**
 * A cell starting with one of these is run as a formula by spreadsheets (OWASP "CSV injection"):
 * `=`, `+`, `-`, `@`, tab, CR, and the fullwidth `＝＋－＠` some spreadsheets normalise to them.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/u;
/** A plain decimal number (`-12.50`, `+3`, `1e-5`): a spreadsheet reads it as a number, never runs it. */
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/**
 * csv-stringify quotes a field holding the record delimiter, which with CRLF is the pair only: a
 * bare CR or LF would be written unquoted and split the row for every reader. Any CR or LF is quoted.
 */
const LINE_BREAK = /[\r\n]/;

const BOMS: Record<CsvFormat['encoding'], Buffer> = {
  utf8: Buffer.from([0xef, 0xbb, 0xbf]),
  utf16le: Buffer.from([0xff, 0xfe]),
  latin1: Buffer.alloc(0),
};

/** RFC 4180 text of a table, encoded as configured. `null` is an empty field. */
export function encodeCsv(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): Buffer {
  const text = hasPlainSyntax(format) ? encodePlain(columns, rows, format) : encodeWithCsvStringify(columns, rows, format);
  const body = Buffer.from(text, format.encoding);
  return format.bom ? Buffer.concat([BOMS[format.encoding], body]) : body;
}

/** A one-character delimiter and `"` quotes: the default format, written by `encodePlain`. */
const hasPlainSyntax = (format: Format): boolean => format.delimiter.length === 1 && format.quote === '"';

/**
 * The same text csv-stringify writes for a plain format (test/unit/csv-encode-fast.test.ts compares
 * them over random rows), without its per-field option objects and casts: csv-stringify was ~12%
 * of a CSV backfill's CPU. A field is quoted when it holds the delimiter, a quote, CR or LF (or
 * always, with `quoted: all`); quotes inside are doubled.
 */
function encodePlain(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): string {
  const escape = format.formulaEscape ?? 'text';
  const all = format.quoted === 'all';
  const delimiter = format.delimiter;
  const eol = format.lineEnding === 'crlf' ? '\r\n' : '\n';
  const needsQuotes = new RegExp(`[\r\n"${delimiter.replace(/[\\\]^-]/g, '\\$&')}]`);
  const field = (cell: Cell): string => {
    if (cell === null) return all ? '""' : '';
    const text = typeof cell === 'string' ? cell : typeof cell === 'boolean' ? (cell ? 'true' : 'false') : String(cell);
    if (text === '') return all ? '""' : '';
    if (!all && !needsQuotes.test(text)) return text;
    return `"${text.includes('"') ? text.replaceAll('"', '""') : text}"`;
  };
  let out = format.header ? columns.map(field).join(delimiter) + eol : '';
  for (const row of rows) {
    let line = '';
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) line += delimiter;
      line += field(neutraliseFormula(row[columns[i]!] ?? null, escape));
    }
    out += line + eol;
  }
  return out;
}

function encodeWithCsvStringify(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): string {
  const escape = format.formulaEscape ?? 'text';
  return stringify(
    rows.map((row) => columns.map((column) => neutraliseFormula(row[column] ?? null, escape))),
    {
      header: format.header,
      columns: [...columns],
      delimiter: format.delimiter,
      quote: format.quote,
      quoted: format.quoted === 'all',
      // Also quote empty strings when quoting everything, so "" and null stay distinguishable there.
      quoted_empty: format.quoted === 'all',
      quoted_match: LINE_BREAK,
      record_delimiter: format.lineEnding === 'crlf' ? 'windows' : 'unix',
      eof: true,
      // csv-stringify writes true as "1" and false as ""; an ERP reading "" would see null.
      cast: { boolean: (value: boolean) => (value ? 'true' : 'false') },
    },
  );
}

/**
 * Prefixes a single quote to a cell a spreadsheet would run as a formula (OWASP's rule). `text`
 * (the default) leaves numbers alone, typed or as plain decimal text, so `-12.50` stays an amount an
 * ERP can read; `all` is OWASP's rule to the letter (every cell, numbers too); `off` writes cells as they are.
 */
export function neutraliseFormula(cell: Cell, mode: CsvFormat['formulaEscape']): Cell {
  if (mode === 'off' || cell === null || typeof cell === 'boolean') return cell;
  if (typeof cell === 'number') return mode === 'all' && cell < 0 ? `'${String(cell)}` : cell;
  if (!FORMULA_START.test(cell)) return cell;
  if (mode === 'text' && PLAIN_NUMBER.test(cell)) return cell;
  return `'${cell}`;
}

/** For latin1 output: a character that cannot be written makes the record an error, not a `?`. */
export function latin1Check(text: string): string | undefined {
  const match = /[^\u0000-\u00ff]/u.exec(text);
  if (!match) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `character U+${code} cannot be encoded in latin1`;
}
