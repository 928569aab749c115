import { stringify } from 'csv-stringify/sync';
import type { Cell } from '../../src/contracts/index.js';
import { takeBuffer } from '../../src/util/large-buffers.js';
import type { CsvFormat } from './format-options.js';

type Format = Pick<CsvFormat, 'delimiter' | 'bom' | 'lineEnding' | 'quote' | 'quoted' | 'encoding' | 'header'> &
  Partial<Pick<CsvFormat, 'formulaEscape'>>;

/**
 * A cell starting with one of these is run as a formula by spreadsheets (OWASP "CSV injection"):
 * `=`, `+`, `-`, `@`, tab, CR, and the fullwidth `＝＋－＠` some spreadsheets normalise to them.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/u;
/** The first code units FORMULA_START accepts (NaN, an empty text's, is none). */
const mayStartFormula = (code: number): boolean =>
  code === 0x3d || code === 0x2b || code === 0x2d || code === 0x40 || code === 0x09 || code === 0x0d || code === 0xff1d || code === 0xff0b || code === 0xff0d || code === 0xff20;
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
  const body = hasPlainSyntax(format) ? encodePlain(columns, rows, format) : Buffer.from(encodeWithCsvStringify(columns, rows, format), format.encoding);
  return format.bom ? Buffer.concat([BOMS[format.encoding], body]) : body;
}

/** A one-character delimiter and `"` quotes: the default format, written by `encodePlain`. */
const hasPlainSyntax = (format: Format): boolean => format.delimiter.length === 1 && format.quote === '"';

/** The most bytes one UTF-16 code unit takes in each encoding: the room a text needs before it is written. */
const MAX_BYTES_PER_UNIT: Record<CsvFormat['encoding'], number> = { utf8: 3, utf16le: 2, latin1: 1 };
const QUOTE = 0x22;
/** Longer cells go through the native `write` (and `_raw` JSON through the quoting path). */
const ASCII_FAST_MAX = 64;
/** Reused between calls (pages are encoded one after the other); a larger one is let go after its call. */
const SCRATCH_KEEP = 4 << 20;
let scratch = Buffer.allocUnsafeSlow(1 << 16);
let rawScratch = Buffer.allocUnsafeSlow(1 << 14);

/**
 * The same bytes csv-stringify writes for a plain format (test/unit/csv-encode-fast.test.ts compares
 * them over random rows), written straight into a byte buffer: building the page as one string
 * (each `_raw` JSON quoted with `replaceAll`, then the whole text encoded) was ~25% of a CSV
 * backfill's CPU, most of it copying and collecting large strings. A field is quoted when it holds
 * the delimiter, a quote, CR or LF (or always, with `quoted: all`); quotes inside are doubled — in
 * UTF-8 on the bytes (0x22 is never part of a multi-byte character there), in other encodings on
 * the text, as before.
 */
function encodePlain(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): Buffer {
  const escape = format.formulaEscape ?? 'text';
  const all = format.quoted === 'all';
  const encoding = format.encoding;
  const perUnit = MAX_BYTES_PER_UNIT[encoding];
  const delimiter = Buffer.from(format.delimiter, encoding);
  const eol = Buffer.from(format.lineEnding === 'crlf' ? '\r\n' : '\n', encoding);
  const quote = Buffer.from('"', encoding);
  const emptyQuoted = Buffer.from('""', encoding);
  const needsQuotes = new RegExp(`[\r\n"${format.delimiter.replace(/[\\\]^-]/g, '\\$&')}]`);
  let buf = scratch;
  let at = 0;

  const room = (bytes: number): void => {
    if (at + bytes <= buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(at + bytes, buf.length * 2));
    buf.copy(bigger, 0, 0, at);
    buf = bigger;
  };
  const putBytes = (bytes: Buffer): void => {
    room(bytes.length);
    for (let i = 0; i < bytes.length; i++) buf[at++] = bytes[i]!;
  };
  const putText = (text: string): void => {
    room(text.length * perUnit);
    at += buf.write(text, at, encoding);
  };
  const putQuoted = (text: string): void => {
    putBytes(quote);
    if (encoding !== 'utf8') putText(text.includes('"') ? text.replaceAll('"', '""') : text);
    else {
      if (rawScratch.length < text.length * perUnit) rawScratch = Buffer.allocUnsafeSlow(text.length * perUnit);
      const length = rawScratch.write(text, 0, encoding);
      room(2 * length);
      at = copyDoublingQuotes(rawScratch, length, buf, at);
    }
    putBytes(quote);
  };
  const delimiterCode = format.delimiter.charCodeAt(0);
  const asciiAsIs = !all && encoding !== 'utf16le';
  /**
   * Writes a short field whose characters are all ASCII and none needs quoting, one byte per
   * character (the same byte in UTF-8 and latin1); false, having written nothing, for any other.
   * Most cells are like that, and a native `write` per ~10-byte cell cost more than the copy.
   */
  const putAsciiAsIs = (text: string): boolean => {
    const length = text.length;
    if (length > ASCII_FAST_MAX) return false;
    room(length);
    const to = buf;
    const start = at;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80 || code === QUOTE || code === 0x0a || code === 0x0d || code === delimiterCode) return false;
      to[start + i] = code;
    }
    at = start + length;
    return true;
  };
  const putField = (cell: Cell): void => {
    const text = cell === null ? '' : typeof cell === 'string' ? cell : typeof cell === 'boolean' ? (cell ? 'true' : 'false') : String(cell);
    // Empty text and null are written as nothing, or as `""` when everything is quoted (quoted_empty).
    if (text === '') {
      if (all) putBytes(emptyQuoted);
    } else if (asciiAsIs && putAsciiAsIs(text)) return;
    else if (!all && !needsQuotes.test(text)) putText(text);
    else putQuoted(text);
  };

  if (format.header) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) putBytes(delimiter);
      putField(columns[i]!);
    }
    putBytes(eol);
  }
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) putBytes(delimiter);
      putField(neutraliseFormula(row[columns[i]!] ?? null, escape));
    }
    putBytes(eol);
  }
  // Its memory is reused for a later page once the sink releases it (large-buffers.ts).
  const out = takeBuffer(at);
  buf.copy(out, 0, 0, at);
  if (buf.length <= SCRATCH_KEEP) scratch = buf;
  if (rawScratch.length > SCRATCH_KEEP) rawScratch = Buffer.allocUnsafeSlow(1 << 14);
  return out;
}

/**
 * Copies `length` bytes of `from` into `to` at `at`, each `"` doubled; returns the end. A function
 * of its own, not part of the closure made per page: the loop over every byte of each `_raw` JSON
 * then cost 0.43 ms per 50-load page instead of ~0.8 (CPU profile of `cpu-per-page.js 20000
 * csv-default,csv-default`, putQuoted 1.17 → 0.40 + 0.43 ms/page).
 */
function copyDoublingQuotes(from: Buffer, length: number, to: Buffer, at: number): number {
  let end = at;
  for (let i = 0; i < length; i++) {
    const byte = from[i]!;
    to[end++] = byte;
    if (byte === QUOTE) to[end++] = QUOTE;
  }
  return end;
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
  // The first character decides; most cells start with none of these, so the expression is not run for them.
  if (!mayStartFormula(cell.charCodeAt(0)) || !FORMULA_START.test(cell)) return cell;
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
