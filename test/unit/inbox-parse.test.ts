import { describe, expect, it } from 'vitest';
import { formatOf, parseCsvRequests, parseJsonRequests } from '../../connectors/file-inbox/index.js';

const csv = (text: string, maxRecordLength = 1_000_000) => parseCsvRequests(text, { delimiter: ',', maxRecordLength });

describe('inbox CSV parsing (strict, per-row tolerant)', () => {
  it('reads header and rows (ref = line the row starts on), CRLF or LF, BOM tolerated, quoted newlines kept', () => {
    expect(csv('\uFEFFerp_key,note\r\nA-1,"two\r\nlines"\r\nA-2,"say ""hi"""\nA-3,\n')).toEqual([
      { ref: '2', fields: { erp_key: 'A-1', note: 'two\r\nlines' } },
      { ref: '4', fields: { erp_key: 'A-2', note: 'say "hi"' } },
      { ref: '5', fields: { erp_key: 'A-3', note: '' } },
    ]);
  });

  it('malformed quoting makes only its own row a problem; the rows behind it are still read', () => {
    const requests = csv('k,v\n1,"ok"\n2,"bad"x\n3,ab"c\n4,"never closed\n5,fine\n');
    expect(requests.map((r) => [r.ref, r.fields.k ?? null, r.problem ?? null])).toEqual([
      ['2', '1', null],
      ['3', null, expect.stringContaining('line 3: unexpected character "x" after the closing quote')],
      ['4', null, expect.stringContaining('line 4: quote inside an unquoted field')],
      ['5', null, 'line 5: quote opened at line 5 is never closed'],
      ['6', '5', null],
    ]);
  });

  it('a 10 MB line is a precise problem of its row, not a crash or a dropped file', () => {
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const requests = csv(`k,v\n1,a\n2,${huge}\n3,c\n`, 1_000_000);
    expect(requests.map((r) => r.ref)).toEqual(['2', '3', '4']);
    expect(requests[1]!.problem).toBe(`line 3: record is ${huge.length + 2} characters long, more than the limit of 1000000`);
    expect(requests[2]!.fields).toEqual({ k: '3', v: 'c' });
  });

  it('a row with the wrong number of fields is a problem naming both counts', () => {
    expect(csv('a,b\n1,2,3\n4\n')).toEqual([
      { ref: '2', fields: {}, problem: 'line 2: 3 fields, but the header has 2' },
      { ref: '3', fields: {}, problem: 'line 3: 1 fields, but the header has 2' },
    ]);
  });

  it('a broken header is one problem request; an empty file none', () => {
    expect(csv('a,a\n1,2\n')).toEqual([{ ref: '1', fields: {}, problem: 'header (line 1): column "a" appears twice' }]);
    expect(csv('')).toEqual([]);
    expect(csv('\r\n\r\n')).toEqual([]);
  });

  it('honours another delimiter', () => {
    expect(parseCsvRequests('a;b\n"x;y";2\n', { delimiter: ';', maxRecordLength: 100 })).toEqual([{ ref: '2', fields: { a: 'x;y', b: '2' } }]);
  });
});

describe('inbox JSON parsing', () => {
  it('an array of objects: ref = element number; a non-object element is a problem', () => {
    expect(parseJsonRequests('[{"k":1},"oops",{"k":{"n":2}}]')).toEqual([
      { ref: '1', fields: { k: 1 } },
      { ref: '2', fields: {}, problem: 'element 2: expected an object, got string' },
      { ref: '3', fields: { k: { n: 2 } } },
    ]);
  });

  it('JSON lines: ref = line number; a bad line is a problem, the others are read', () => {
    const requests = parseJsonRequests('{"k":1}\n{"k":\n\n[1]\n{"k":3}\n');
    expect(requests.map((r) => [r.ref, r.fields.k ?? null, r.problem?.slice(0, 28) ?? null])).toEqual([
      ['1', 1, null],
      ['2', null, 'line 2: not valid JSON: Unex'],
      ['4', null, 'line 4: expected an object, '],
      ['5', 3, null],
    ]);
  });

  it('a truncated array is one problem request', () => {
    expect(parseJsonRequests('[{"k":1},')[0]!.problem).toMatch(/^not valid JSON/);
  });

  it('chooses the parser by extension', () => {
    expect([formatOf('a.json'), formatOf('a.JSONL'), formatOf('a.ndjson'), formatOf('a.csv'), formatOf('a.txt')]).toEqual(['json', 'json', 'json', 'csv', 'csv']);
  });
});
