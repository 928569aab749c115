import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { encodeCsv, neutraliseFormula } from '../../connectors/file-drop/encode-csv.js';
import type { Cell } from '../../src/contracts/index.js';
import { Prng } from '../../src/simulator/prng.js';

type Format = Parameters<typeof encodeCsv>[2];

/** The encoder as it was before the plain-format fast path: csv-stringify for every format. The reference. */
function viaCsvStringify(columns: readonly string[], rows: readonly Record<string, Cell>[], format: Format): Buffer {
  const escape = format.formulaEscape ?? 'text';
  const text = stringify(
    rows.map((row) => columns.map((column) => neutraliseFormula(row[column] ?? null, escape))),
    {
      header: format.header,
      columns: [...columns],
      delimiter: format.delimiter,
      quote: format.quote,
      quoted: format.quoted === 'all',
      quoted_empty: format.quoted === 'all',
      quoted_match: /[\r\n]/,
      record_delimiter: format.lineEnding === 'crlf' ? 'windows' : 'unix',
      eof: true,
      cast: { boolean: (value: boolean) => (value ? 'true' : 'false') },
    },
  );
  return Buffer.from(text, format.encoding);
}

const PIECES = ['\r', '\n', '\r\n', '"', '""', ',', ';', '\t', '|', ']', '^', '-', '\\', ' ', 'a', '0', '=', '+', '@', "'", 'é', '日本', '🚚', '\u2028', '\ufeff', '\uFF1D'];
const DELIMITERS = [',', ';', '\t', '|', ']', '^', '-', '\\', ' ', 'a'];

function randomCell(prng: Prng): Cell {
  switch (prng.int(6)) {
    case 0:
      return null;
    case 1:
      return prng.pick([0, -0, 1, -12.5, 1e21, 1.5e-7, 123456789.123, -3]);
    case 2:
      return prng.chance(0.5);
    case 3:
      return prng.pick(['', '-12.50', '+3', '=1+1', '1e-5']);
    default: {
      let text = '';
      for (let i = prng.int(10); i > 0; i--) text += prng.pick(PIECES);
      return text;
    }
  }
}

describe('CSV encoding: plain-format fast path', () => {
  it('writes byte for byte what csv-stringify writes, over random rows and formats', () => {
    const prng = new Prng(14);
    let compared = 0;
    for (let round = 0; round < 400; round++) {
      const format: Format = {
        delimiter: prng.pick(DELIMITERS),
        quote: '"',
        quoted: prng.pick(['auto', 'all'] as const),
        lineEnding: prng.pick(['crlf', 'lf'] as const),
        header: prng.chance(0.7),
        bom: prng.chance(0.2),
        encoding: prng.pick(['utf8', 'utf16le', 'latin1'] as const),
        formulaEscape: prng.pick(['text', 'all', 'off'] as const),
      };
      const columns = Array.from({ length: 1 + prng.int(6) }, (_, i) => (prng.chance(0.2) ? `c"${i}${format.delimiter}` : `c${i}`));
      const rows = Array.from({ length: prng.int(8) }, () => Object.fromEntries(columns.map((c) => [c, randomCell(prng)])));
      const expected = viaCsvStringify(columns, rows, format);
      const actual = encodeCsv(columns, rows, format);
      const bom = format.bom ? { utf8: 3, utf16le: 2, latin1: 0 }[format.encoding] : 0;
      expect(actual.subarray(bom).toString('hex'), JSON.stringify({ format, columns, rows })).toBe(expected.toString('hex'));
      compared++;
    }
    expect(compared).toBe(400);
  });

  it('writes long JSON cells and pages larger than its reusable buffer like csv-stringify', () => {
    const format: Format = { delimiter: ',', quote: '"', quoted: 'auto', lineEnding: 'crlf', header: true, bom: false, encoding: 'utf8', formulaEscape: 'text' };
    const prng = new Prng(3);
    // A `_raw`-like cell: JSON with quotes, commas, non-ASCII text and line breaks, ~70 KB (over the reused buffers' first size).
    const big = JSON.stringify(Array.from({ length: 1500 }, (_, i) => ({ id: `L${i}`, note: prng.pick(['日本 "quoted"', 'a,b', 'x\r\ny', '🚚', '']) })));
    const rows = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, _raw: i % 3 === 0 ? big : JSON.stringify({ i, s: '"' }), n: i % 2 === 0 ? -i : null }));
    for (const encoding of ['utf8', 'utf16le', 'latin1'] as const) {
      const expected = viaCsvStringify(['key', '_raw', 'n'], rows, { ...format, encoding });
      expect(expected.length).toBeGreaterThan(1 << 18);
      expect(encodeCsv(['key', '_raw', 'n'], rows, { ...format, encoding }).equals(expected)).toBe(true);
    }
    // A small page after a large one: nothing of the large one shows.
    expect(encodeCsv(['a'], [{ a: 'x"y' }], format).toString('utf8')).toBe('a\r\n"x""y"\r\n');
  });

  it('leaves multi-character delimiters and other quotes to csv-stringify, unchanged', () => {
    const format: Format = { delimiter: '::', quote: "'", quoted: 'auto', lineEnding: 'lf', header: true, bom: false, encoding: 'utf8', formulaEscape: 'off' };
    const rows = [{ a: "it's", b: 'x:' }, { a: 'say "hi"', b: null }];
    expect(encodeCsv(['a', 'b'], rows, format).toString()).toBe(viaCsvStringify(['a', 'b'], rows, format).toString());
  });
});
