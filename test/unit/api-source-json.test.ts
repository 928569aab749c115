import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseJsonBody } from '../../src/api/json-body.js';
import { partitionItems } from '../../src/api/paging.js';
import type { z } from 'zod';
import { fastObjectParser } from '../../src/api/schemas/fast-object.js';
import * as resources from '../../src/api/schemas/resources.js';
import { loadSchema } from '../../src/api/schemas/resources.js';
import { Prng } from '../../src/simulator/prng.js';
import { contentHash } from '../../src/sync/content-hash.js';
import crypto from 'node:crypto';
import { recordJson, withMember } from '../../src/util/record-json.js';
import { fixture } from '../helpers/records.js';

const stringify = JSON.stringify;

/**
 * The content hash as earlier releases computed it, over zod's output of the element (declared
 * fields first): state databases hold these, and a load read by reference (zod) must hash alike.
 */
const zodOrderHash = (elementText: string, extra?: Record<string, unknown>) =>
  crypto.createHash('sha1').update(`upsert\u0000${stringify({ ...loadSchema.parse(JSON.parse(elementText)), ...extra })}`).digest('base64url');

/** A list page holding these element texts, large enough to be parsed piecewise. */
function pageOf(elements: readonly string[]): Buffer {
  return Buffer.from(`{"_object":"list","pad":"${'x'.repeat(70_000)}","data":[${elements.join(',')}],"count":null}`, 'utf8');
}

/** The validated records of a page, as the API client gives them to the engine. */
function recordsOf(bytes: Buffer): Record<string, unknown>[] {
  const parsed = parseJsonBody(bytes);
  if (!parsed.ok) throw new Error(parsed.reason);
  const { items, rejected } = partitionItems((parsed.value as { data: unknown[] }).data, loadSchema);
  expect(rejected).toEqual([]);
  return items as Record<string, unknown>[];
}

/** Each record's JSON as recordJson gives it, and how many of them were serialised by JSON.stringify. */
function jsonOf(records: readonly Record<string, unknown>[]): { texts: string[]; serialised: number } {
  const spy = vi.spyOn(JSON, 'stringify');
  try {
    const texts = records.map((record) => recordJson(record));
    return { texts, serialised: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

const TEXTS = ['plain', 'say "hi"', 'back\\slash', 'a/b', 'é日本🚚', '\u2028', '\ufeff', '\n\t\r\b\f', '\u0001\u001f\u007f', 'Ünïcödé', ''];
const NUMBERS = [0, 1, -1, 7, 1668, 27772, 1.5, -81.0912, 32.0809, -74.16239999999999, 29.770400000000002, 0.1 + 0.2, 1e21, 1e-7, 0.000001, 1.5e-7, 123456789012345, 1234567890123456, 2 ** 53, -0.5, 5e-324, 1.7976931348623157e308];
const KEYS = ['status', 'type_of_load', 'caller', 'a', 'k"q', 'x\\y', 'é', '0', '12', '1a', '', 'data', 'reference_number', '__proto__'];

/** Makers of a random JSON value by kind: scalars, texts (twice as likely), arrays, objects. */
const MAKERS: ((prng: Prng, depth: number) => unknown)[] = [
  (prng) => prng.pick([null, true, false]),
  (prng) => prng.pick(NUMBERS),
  (prng) => Array.from({ length: prng.int(3) + 1 }, () => prng.pick(TEXTS)).join(''),
  (prng) => prng.pick(TEXTS),
  (prng, depth) => Array.from({ length: prng.int(4) }, () => randomValue(prng, depth + 1)),
  (prng, depth) => Object.fromEntries(Array.from({ length: prng.int(5) }, () => [prng.pick(KEYS.slice(0, -1)), randomValue(prng, depth + 1)])),
  (prng, depth) => Object.fromEntries(Array.from({ length: prng.int(3) }, () => [prng.pick(KEYS.slice(0, -1)), randomValue(prng, depth + 1)])),
];

/** Deeper than 3, scalars and texts only. */
const randomValue = (prng: Prng, depth: number): unknown => MAKERS[prng.int(depth > 3 ? 4 : MAKERS.length)]!(prng, depth);

/** A load: the fixture's fields in a random order (declared ones too), some changed or added (when `vary`). */
function randomLoad(prng: Prng, base: Record<string, unknown>, index: number, vary = true): Record<string, unknown> {
  const entries = Object.entries({ ...base, reference_number: `M${index}` });
  for (let i = entries.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const load: Record<string, unknown> = {};
  // The fields the schema declares stay valid (a rejected element never reaches the engine).
  for (const [key, value] of entries) load[key] = vary && prng.chance(0.1) && !(key in loadSchema.shape) ? randomValue(prng, 1) : value;
  for (let i = vary ? prng.int(3) : 0; i > 0; i--) load[`extra${prng.int(5)}`] = randomValue(prng, 1);
  if (!vary) load.note = `${index} ${TEXTS.join(' ')} ${NUMBERS.join(' ')}`;
  return load;
}

/**
 * JSON text of `value` as another writer might put it: each token, with a small chance, in another
 * form that means the same (whitespace, other escapes, other spellings of a number, a key given
 * twice). With `odds` 0 it is JSON.stringify's text.
 */
function writeJson(prng: Prng, value: unknown, odds: number): string {
  const maybe = (): boolean => odds > 0 && prng.chance(odds);
  const space = (): string => (maybe() ? prng.pick([' ', '\n', '\t', '\r\n  ']) : '');
  const writeString = (text: string): string => {
    let out = '"';
    for (const char of text) {
      const code = char.charCodeAt(0);
      if (maybe()) {
        const escaped = char.length === 1 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u${code.toString(16)}\\u${char.charCodeAt(1).toString(16)}`;
        out += prng.chance(0.5) ? escaped : escaped.toUpperCase().replaceAll('\\U', '\\u');
      } else if (char === '/' && maybe()) out += '\\/';
      else out += stringify(char).slice(1, -1);
    }
    return `${out}"`;
  };
  const writeNumber = (n: number): string => {
    const text = stringify(n);
    if (!maybe()) return text;
    return prng.pick([`${text}${text.includes('.') || text.includes('e') ? '' : '.0'}`, `${text.includes('e') ? text : `${text}e0`}`, n === 0 ? '-0' : text.replace('e', 'E'), n.toPrecision(17), `${text}${text.includes('.') && !text.includes('e') ? '0' : ''}`]);
  };
  const write = (item: unknown): string => {
    if (item === null || typeof item === 'boolean') return String(item);
    if (typeof item === 'number') return writeNumber(item);
    if (typeof item === 'string') return writeString(item);
    if (Array.isArray(item)) return `[${space()}${item.map((x) => `${write(x)}${space()}`).join(`,${space()}`)}]`;
    const members = Object.entries(item as Record<string, unknown>).map(([key, x]) => `${space()}${writeString(key)}${space()}:${space()}${write(x)}`);
    // A key given twice: JSON.parse keeps the last value, at the first one's place.
    // Given first here, so the real value (the last) is the one kept.
    if (members.length > 0 && maybe()) members.unshift(`${writeString(prng.pick(Object.keys(item as object)))}:${write(randomValue(prng, 3))}`);
    return `{${members.join(',')}${space()}}`;
  };
  return write(value);
}

afterEach(() => vi.restoreAllMocks());

describe('a record\'s JSON cut from the response text', () => {
  it('a page written by JSON.stringify: no record is serialised again, and each JSON is exactly JSON.stringify of the validated record', () => {
    const prng = new Prng(7);
    const bases = [fixture('load-main'), fixture('load-brokerage')];
    const loads = Array.from({ length: 50 }, (_, i) => ({ ...randomLoad(prng, bases[i % 2]!, i, false), numbers: NUMBERS, texts: TEXTS }));
    const records = recordsOf(pageOf(loads.map((load) => stringify(load))));
    const { texts, serialised } = jsonOf(records);
    expect(serialised).toBe(0);
    texts.forEach((text, i) => expect(text).toBe(stringify(records[i])));
    // Each record is the element as sent (its members in the page's order), and its `_raw` the
    // element's text; its content hash covers zod's order, as in earlier releases.
    records.forEach((record, i) => {
      expect(Object.keys(record)).toEqual(Object.keys(loads[i]!));
      expect(recordJson(record)).toBe(stringify(loads[i]));
      expect(contentHash('upsert', record)).toBe(zodOrderHash(stringify(loads[i])));
    });
    // The declared fields are not first in these texts: the two orders differ.
    expect(Object.keys(records[0]!)).not.toEqual(Object.keys(loadSchema.parse(loads[0])));
  });

  it('a copy with a member more (the echo mark) hashes as the copy of zod\'s output did', () => {
    const prng = new Prng(8);
    const loads = Array.from({ length: 5 }, (_, i) => randomLoad(prng, fixture('load-main'), i, false));
    const records = recordsOf(pageOf(loads.map((load) => stringify(load))));
    const mark = { origin: 'freight-sync', outboxId: 7, erpKey: 'E1', kind: 'update', pushedAt: null, note: 'say "hi" é' };
    records.forEach((record, i) => {
      const marked = withMember(record, '_freightSync', mark);
      expect(contentHash('upsert', marked)).toBe(zodOrderHash(stringify(loads[i]), { _freightSync: mark }));
      expect(recordJson(marked)).toBe(stringify({ ...loads[i], _freightSync: mark }));
      // Twice (sub-customer invoices marked after an echo): both members at the end.
      const twice = withMember(marked, 'second', [1, 'two']);
      expect(contentHash('upsert', twice)).toBe(zodOrderHash(stringify(loads[i]), { _freightSync: mark, second: [1, 'two'] }));
      // A member the record has already keeps its place, in zod's order too; one left out of JSON is left out.
      const replaced = withMember(record, 'status', 'X');
      expect(contentHash('upsert', replaced)).toBe(zodOrderHash(stringify(loads[i]), { status: 'X' }));
      expect(recordJson(replaced)).toBe(stringify({ ...loads[i], status: 'X' }));
      const unset = withMember(marked, 'status', undefined);
      expect(contentHash('upsert', unset)).toBe(zodOrderHash(stringify(loads[i]), { _freightSync: mark, status: undefined }));
    });
  });

  it('text in other forms (whitespace, escapes, number spellings, keys given twice, digit keys): the same JSON as JSON.stringify, over random pages', () => {
    const prng = new Prng(14);
    const bases = [fixture('load-main'), fixture('load-brokerage')];
    let cut = 0;
    let serialisedAgain = 0;
    for (let round = 0; round < 60; round++) {
      const odds = prng.pick([0, 0.002, 0.01, 0.05]);
      const loads = Array.from({ length: 20 }, (_, i) => randomLoad(prng, bases[i % 2]!, i));
      const elements = loads.map((load) => writeJson(prng, load, odds));
      const records = recordsOf(pageOf(elements));
      const { texts, serialised } = jsonOf(records);
      texts.forEach((text, i) => expect(text).toBe(stringify(records[i])));
      // Whichever way a record went (handed on as sent, or a copy in zod's order), the hash is zod's.
      records.forEach((record, i) => expect(contentHash('upsert', record)).toBe(zodOrderHash(elements[i]!)));
      cut += records.length - serialised;
      serialisedAgain += serialised;
    }
    // Both ways are taken.
    expect(cut).toBeGreaterThan(200);
    expect(serialisedAgain).toBeGreaterThan(100);
  });

  it('numbers: only the spelling JavaScript prints is taken as is', () => {
    const prng = new Prng(3);
    const spellings = new Set<string>(['0', '-0', '0.0', '1.0', '1e2', '1E2', '1e+2', '100', '0.1', '0.10', '5e1', '0.000001', '0.0000001', '1e-7', '0.00000015', '1.5e-7', '1e21', '1e+21', '100000000000000000000', '1000000000000000000000', '123456789012345', '1234567890123456', '12345678901234567', '9007199254740993', '0.30000000000000004', '0.30000000000000003', '0.10000000000000001', '-74.16239999999999', '-74.1624', '5e-324', '4.9e-324', '1.7976931348623157e308', '-0.0', '-0.5', '2.50', '25e-1']);
    for (let i = 0; i < 400; i++) {
      const digits = Array.from({ length: prng.int(19) + 1 }, () => String(prng.int(10))).join('');
      const point = prng.int(digits.length + 1);
      const text = `${prng.chance(0.3) ? '-' : ''}${digits.slice(0, point) || '0'}${point < digits.length ? `.${digits.slice(point)}` : ''}${prng.chance(0.2) ? `e${prng.int(40) - 20}` : ''}`;
      spellings.add(text.replace(/^(-?)0+(\d)/, '$1$2'));
    }
    const base = fixture('load-main');
    const elements = [...spellings].map((text, i) => `{"_id":"id${i}","reference_number":"M${i}","n":${text},"nested":{"m":[${text}]},"status":"x"}`);
    const records = recordsOf(pageOf([...elements, stringify(base)]));
    const { texts } = jsonOf(records);
    texts.forEach((text, i) => expect(text, [...spellings][i]).toBe(stringify(records[i])));
  });

  it('non-ASCII text, 4-byte characters and bytes that are not UTF-8: the same JSON as JSON.stringify', () => {
    const elements = [
      `{"_id":"a","reference_number":"M1","name":"Café Zürich 日本 🚚🚚","status":"é"}`,
      `{"name":"🚚","_id":"b","reference_number":"M2","x":{"é":"🚚","y":[1,"日"]}}`,
      `{"bad":"@","_id":"c","reference_number":"M3","status":"s"}`,
    ];
    // The third element's "@" becomes bytes that are not UTF-8 (decoded as replacement characters).
    const page = pageOf(elements);
    const at = page.lastIndexOf('"@"') + 1;
    const bytes = Buffer.concat([page.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff, 0xf0, 0x9f]), page.subarray(at + 1)]);
    const records = recordsOf(bytes);
    expect(records).toHaveLength(3);
    const { texts } = jsonOf(records);
    texts.forEach((text, i) => expect(text).toBe(stringify(records[i])));
  });
});

describe('every resource schema with a fast path: the content hash is that of zod\'s output', () => {
  const schemas = (Object.entries(resources) as [string, unknown][]).filter(
    (entry): entry is [string, z.ZodType] => typeof entry[1] === 'object' && entry[1] !== null && 'safeParse' in entry[1] && fastObjectParser(entry[1] as z.ZodType) !== undefined,
  );

  it('over random pages, for elements kept as sent and elements copied', () => {
    const prng = new Prng(21);
    const bases = [fixture('load-main'), fixture('load-brokerage')];
    expect(schemas.length).toBeGreaterThan(3);
    for (const [name, schema] of schemas) {
      let keptAsSent = 0;
      let copied = 0;
      for (let round = 0; round < 4; round++) {
        const loads = Array.from({ length: 20 }, (_, i) => randomLoad(prng, bases[i % 2]!, i, false));
        // Every fifth element is written with whitespace: not its JSON, so it is copied in zod's order.
        const elements = loads.map((load, i) => (i % 5 === 0 ? JSON.stringify(load, null, 1) : stringify(load)));
        const parsed = parseJsonBody(pageOf(elements));
        if (!parsed.ok) throw new Error(parsed.reason);
        const data = [...(parsed.value as { data: unknown[] }).data];
        const { items, rejected } = partitionItems(data, schema);
        expect(rejected, name).toEqual([]);
        items.forEach((item, i) => {
          const record = item as Record<string, unknown>;
          const zodOutput = schema.parse(JSON.parse(elements[i]!));
          expect(contentHash('upsert', record), name).toBe(crypto.createHash('sha1').update(`upsert\u0000${stringify(zodOutput)}`).digest('base64url'));
          expect(record, name).toEqual(zodOutput);
          // Kept as sent: the parsed element itself, in the page's order.
          if (record === data[i]) {
            keptAsSent += 1;
            expect(Object.keys(record), name).toEqual(Object.keys(loads[i]!));
          } else copied += 1;
        });
      }
      expect(keptAsSent, name).toBeGreaterThan(40);
      expect(copied, name).toBeGreaterThan(10);
    }
  });
});

describe('each form JSON.stringify does not write is serialised again', () => {
  it('one odd token per element, the members in another order than the output: the same JSON as JSON.stringify', () => {
    // The declared keys come last here, so the output's order differs from the text's: a text
    // wrongly taken would show in the result.
    const tail = '"status":"s","_id":"i","reference_number":"M"';
    const odd = [
      '"x":{"a":1,"0":2}',
      '"x":{"a":1,"12":2}',
      '"x":[{"b":1,"b":2}]',
      '"x":{"a":{"c":1},"a":{"c":2}}',
      '"x":1,"x":2',
      '"x":"\\u001F"',
      '"x":"\\u0041"',
      '"x":"\\u00e9"',
      '"x":"a\\/b"',
      '"x":"\\u000a"',
      '"x":"\\u0008"',
      '"x":"\\u000c"',
      '"x":"\\ud83d\\ude9a"',
      '"x": 1',
      '"x":[1, 2]',
      '"x":{"y" :1}',
      '"x":{"y":1 }',
      '"x":\n1',
      '"x":1.50',
      '"x":-0',
    ];
    const canonical = ['"x":"\\u001f"', '"x":"\\u0007\\u000b\\u000e"', '"x":"\\n\\t\\"\\\\"', '"x":{"a":1,"b":{"a":2}}', '"x":[{"b":1},{"b":2}]', '"x":-0.5'];
    const elements = [...odd, ...canonical].map((member) => `{${member},${tail}}`);
    const records = recordsOf(pageOf(elements));
    const { texts, serialised } = jsonOf(records);
    texts.forEach((text, i) => expect(text, elements[i]).toBe(stringify(records[i])));
    expect(serialised).toBe(odd.length);
  });
});
