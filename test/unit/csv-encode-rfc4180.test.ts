import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { encodeCsv, neutraliseFormula } from '../../connectors/file-drop/encode-csv.js';
import { csvOptionsSchema } from '../../connectors/csv/options.js';
import { Prng } from '../../src/simulator/prng.js';

type Format = Parameters<typeof encodeCsv>[2];
const base: Format = { delimiter: ',', bom: false, lineEnding: 'crlf', quote: '"', quoted: 'auto', encoding: 'utf8', header: true, formulaEscape: 'off' };

/** Pieces a field is built from: every character RFC 4180 cares about, plus unicode that is easy to mangle. */
const PIECES = ['\r', '\n', '\r\n', '"', '""', ',', ';', '\t', ' ', 'a', 'Z', '0', '-', '=', "'", '\\', 'é', 'ß', '日本', '🚚', 'e\u0301', '\u00a0', '\u2028', '\ufeff', 'x'];

function randomField(prng: Prng): string {
  let text = '';
  const length = prng.int(12);
  for (let i = 0; i < length; i += 1) text += prng.pick(PIECES);
  return text;
}

function roundTrip(format: Format, rows: string[][]): string[][] {
  const columns = rows[0]!.map((_, i) => `c${i}`);
  const buffer = encodeCsv(columns, rows.map((row) => Object.fromEntries(row.map((value, i) => [`c${i}`, value]))), format);
  const text = buffer.toString(format.encoding === 'utf16le' ? 'utf16le' : format.encoding);
  // Like most readers (spreadsheets, Python's csv), any of CRLF, LF or CR ends a record outside quotes.
  const parsed = parse(text, { delimiter: format.delimiter, quote: format.quote, bom: true, record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: false }) as string[][];
  expect(parsed[0]).toEqual(columns);
  return parsed.slice(1);
}

describe('CSV drop encoding (RFC 4180)', () => {
  it('quotes a bare LF or CR with CRLF record delimiters, so the row stays one row', () => {
    const text = encodeCsv(['name'], [{ name: 'Line one\nLine two Trucking' }, { name: 'a\rb' }], base).toString('utf8');
    expect(text).toBe('name\r\n"Line one\nLine two Trucking"\r\n"a\rb"\r\n');
  });

  // Seeded, so a failure replays; each case prints its seed.
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`round-trips random field content through csv-parse (seed ${seed})`, () => {
      const prng = new Prng(seed);
      for (let round = 0; round < 40; round += 1) {
        const format: Format = {
          ...base,
          delimiter: prng.pick([',', ';', '\t', '|']),
          lineEnding: prng.pick(['crlf', 'lf'] as const),
          quoted: prng.pick(['auto', 'all'] as const),
          encoding: prng.pick(['utf8', 'utf16le'] as const),
          bom: prng.chance(0.5),
        };
        const width = 1 + prng.int(5);
        const rows = Array.from({ length: 1 + prng.int(6) }, () => Array.from({ length: width }, () => randomField(prng)));
        expect(roundTrip(format, rows), JSON.stringify({ seed, round, format })).toEqual(rows);
      }
    });
  }
});

describe('formula neutralisation', () => {
  const cells = ['=HYPERLINK("http://x","y")', '+1+2', '-2+3+cmd|/C calc', '@SUM(A1)', '\tx', '\rx', '＝1+1', '-12.50', '+3', 'plain', ''];

  it('text (default): prefixes a quote to formula-like text, leaves plain numbers', () => {
    expect(cells.map((c) => neutraliseFormula(c, 'text'))).toEqual([
      `'=HYPERLINK("http://x","y")`, "'+1+2", "'-2+3+cmd|/C calc", "'@SUM(A1)", "'\tx", "'\rx", "'＝1+1", '-12.50', '+3', 'plain', '',
    ]);
    expect(neutraliseFormula(-12.5, 'text')).toBe(-12.5);
  });

  it('neutralises every start the OWASP expression names, whatever the first character (the check by character code agrees with it)', () => {
    const formulaStart = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/u;
    const differing: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const cell = `${String.fromCharCode(code)}x`;
      if ((neutraliseFormula(cell, 'all') !== cell) !== formulaStart.test(cell)) differing.push(code.toString(16));
    }
    expect(differing).toEqual([]);
  });

  it('all: every cell with a trigger, numbers too; off: none', () => {
    expect(neutraliseFormula('-12.50', 'all')).toBe("'-12.50");
    expect(neutraliseFormula(-12.5, 'all')).toBe("'-12.5");
    expect(cells.map((c) => neutraliseFormula(c, 'off'))).toEqual(cells);
  });

  it('is applied by default when encoding, and the neutralised cell reads back with its quote', () => {
    const format = { ...base, formulaEscape: undefined } as unknown as Format;
    const text = encodeCsv(['a', 'b'], [{ a: '=HYPERLINK("http://evil","x")', b: '-12.50' }], format).toString('utf8');
    expect(parse(text, { columns: true })).toEqual([{ a: `'=HYPERLINK("http://evil","x")`, b: '-12.50' }]);
  });

  it('is a connector option with text as the default', () => {
    expect(csvOptionsSchema.parse({ directory: 'out' }).formulaEscape).toBe('text');
    expect(csvOptionsSchema.parse({ directory: 'out', formulaEscape: 'off' }).formulaEscape).toBe('off');
    expect(() => csvOptionsSchema.parse({ directory: 'out', formulaEscape: 'never' })).toThrow();
  });
});
