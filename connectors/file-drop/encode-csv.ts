import { stringify } from 'csv-stringify/sync';
import type { Cell } from '../../src/contracts/index.js';
import type { CsvFormat } from './format-options.js';

type Format = Pick<CsvFormat, 'delimiter' | 'bom' | 'lineEnding' | 'quote' | 'quoted' | 'encoding' | 'header'>;

const BOMS: Record<CsvFormat['encoding'], Buffer> = {
  utf8: Buffer.from([0xef, 0xbb, 0xbf]),
  utf16le: Buffer.from([0xff, 0xfe]),
  latin1: Buffer.alloc(0),
};

/** RFC 4180 text of a table, encoded as configured. `null` is an empty field. */
export function encodeCsv(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): Buffer {
  const text = stringify(
    rows.map((row) => columns.map((column) => row[column] ?? null)),
    {
      header: format.header,
      columns: [...columns],
      delimiter: format.delimiter,
      quote: format.quote,
      quoted: format.quoted === 'all',
      // Also quote empty strings when quoting everything, so "" and null stay distinguishable there.
      quoted_empty: format.quoted === 'all',
      record_delimiter: format.lineEnding === 'crlf' ? 'windows' : 'unix',
      eof: true,
      // csv-stringify writes true as "1" and false as ""; an ERP reading "" would see null.
      cast: { boolean: (value: boolean) => (value ? 'true' : 'false') },
    },
  );
  const body = Buffer.from(text, format.encoding);
  return format.bom ? Buffer.concat([BOMS[format.encoding], body]) : body;
}

/** For latin1 output: a character that cannot be written makes the record an error, not a `?`. */
export function latin1Check(text: string): string | undefined {
  const match = /[^\u0000-\u00ff]/u.exec(text);
  if (!match) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `character U+${code} cannot be encoded in latin1`;
}
