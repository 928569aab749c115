import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { partitionItems } from '../../src/api/paging.js';
import { fastObjectParser } from '../../src/api/schemas/fast-object.js';
import { identifier, optionalBoolean, optionalDate, optionalNumber, optionalString, requiredString } from '../../src/api/schemas/common.js';
import * as resources from '../../src/api/schemas/resources.js';
import { Prng } from '../../src/simulator/prng.js';
import { contentHash } from '../../src/sync/content-hash.js';
import { fixture } from '../helpers/records.js';

const VALUES: unknown[] = [
  'text', '', ' ', 'M000123', '2024-05-01T13:45:10.123Z', '2024-05-01', 'not a date', 'Tue, 12 Mar 2024 15:04:05 GMT', '12.50',
  0, -1, 1.5, 1e21, 123, true, false, null, undefined, {}, { _id: 'x' }, [], ['a'], Number.NaN, Number.POSITIVE_INFINITY,
];
const KEYS = ['_id', 'reference_number', 'status', 'type_of_load', 'isDeleted', 'createdAt', 'updatedAt', 'secondaryReferenceNo', 'containerNo', 'billId', 'totalAmount', 'tokenType', 'extra', 'constructor', 'toString'];

/** A record with its keys in random order, fields changed to random values, some removed, some added, sometimes an own `__proto__`. */
function randomRecord(prng: Prng, base: Record<string, unknown>): unknown {
  const entries = Object.entries(base);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const record: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    if (prng.chance(0.05)) continue;
    record[key] = prng.chance(0.08) ? prng.pick(VALUES) : value;
  }
  for (let i = prng.int(3); i > 0; i--) record[prng.pick(KEYS)] = prng.pick(VALUES);
  if (prng.chance(0.05)) return JSON.parse(`{"__proto__":{"polluted":1},${JSON.stringify(record).slice(1)}`) as unknown;
  return prng.chance(0.02) ? prng.pick([null, 'text', 3, [record]]) : record;
}

const schemas = (Object.entries(resources) as [string, unknown][]).filter((entry): entry is [string, z.ZodType] => typeof entry[1] === 'object' && entry[1] !== null && 'safeParse' in entry[1]);

describe('fast parse of list elements', () => {
  it('gives exactly zod\'s output (keys, order, values, transforms) for every element it accepts, over random records and every resource schema', () => {
    const prng = new Prng(14);
    const bases = [fixture('load-main'), fixture('load-brokerage'), { ...fixture('load-main'), _id: 42 }] as Record<string, unknown>[];
    const used: string[] = [];
    for (const [name, schema] of schemas) {
      const fast = fastObjectParser(schema);
      if (!fast) continue;
      used.push(name);
      let accepted = 0;
      for (let round = 0; round < 1500; round++) {
        const input = randomRecord(prng, prng.pick(bases));
        const quick = fast(input);
        const parsed = schema.safeParse(input);
        if (quick === undefined) continue;
        accepted += 1;
        expect(parsed.success, name).toBe(true);
        expect(Object.keys(quick), name).toEqual(Object.keys(parsed.data as object));
        expect(JSON.stringify(quick), name).toBe(JSON.stringify(parsed.data));
        expect(quick, name).toEqual(parsed.data);
        // An own `__proto__` of the input must never become the output's prototype.
        expect(Object.getPrototypeOf(quick), name).toBe(Object.getPrototypeOf(parsed.data));
      }
      expect(accepted, name).toBeGreaterThan(200);
    }
    expect(used).toContain('loadSchema');
  });

  it('gives zod\'s output for elements sharing a key order too (after the first, outputs are copies of one shape)', () => {
    const prng = new Prng(15);
    const bases = [fixture('load-main'), fixture('load-brokerage'), { ...fixture('load-main'), _id: 42 }] as Record<string, unknown>[];
    const schema = resources.loadSchema as z.ZodType;
    const fast = fastObjectParser(schema)!;
    let compared = 0;
    for (let round = 0; round < 300; round++) {
      const first = randomRecord(prng, prng.pick(bases));
      if (first === null || typeof first !== 'object' || Array.isArray(first)) continue;
      // Same keys in the same order (an own `__proto__` too), other values.
      const entries = Object.entries(first);
      const sameKeys = () => JSON.parse(JSON.stringify(Object.fromEntries(entries.map(([k, v]) => [k, prng.chance(0.3) ? (prng.pick(VALUES) ?? null) : v])))) as unknown;
      for (const input of [first, sameKeys(), sameKeys(), first]) {
        const quick = fast(input);
        const parsed = schema.safeParse(input);
        if (quick === undefined) continue;
        compared += 1;
        expect(parsed.success).toBe(true);
        expect(Object.keys(quick)).toEqual(Object.keys(parsed.data as object));
        expect(JSON.stringify(quick)).toBe(JSON.stringify(parsed.data));
        expect(quick).toEqual(parsed.data);
        expect(Object.getPrototypeOf(quick)).toBe(Object.getPrototypeOf(parsed.data));
        // Outputs are separate objects.
        expect(quick).not.toBe(fast(input));
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('an enumerable key on Object.prototype (for…in lists it, Object.values does not): zod\'s output all the same', () => {
    const schema = resources.loadSchema as z.ZodType;
    const fast = fastObjectParser(schema)!;
    const inputs = [0, 1, 2].map((i) => JSON.parse(JSON.stringify({ ...fixture('load-main'), reference_number: `M${i}` })) as unknown);
    Object.defineProperty(Object.prototype, 'zz_inherited', { value: 'inherited', enumerable: true, configurable: true, writable: true });
    try {
      // The same key order three times: the later ones are built as copies of one shape.
      for (const input of inputs) {
        const parsed = schema.safeParse(input);
        expect(parsed.success).toBe(true);
        expect(JSON.stringify(fast(input))).toBe(JSON.stringify(parsed.data));
      }
    } finally {
      delete (Object.prototype as Record<string, unknown>).zz_inherited;
    }
  });

  it('leaves what zod rejects to zod: the same rejections and problems', () => {
    const prng = new Prng(7);
    const items = Array.from({ length: 2000 }, () => randomRecord(prng, fixture('load-main') as Record<string, unknown>));
    const viaZod = { items: [] as unknown[], rejected: [] as unknown[] };
    items.forEach((raw, index) => {
      const parsed = resources.loadSchema.safeParse(raw);
      if (parsed.success) viaZod.items.push(parsed.data);
      else viaZod.rejected.push({ index, raw, problem: `${parsed.error.issues[0]!.path.join('.') || '(record)'}: ${parsed.error.issues[0]!.message}` });
    });
    const page = partitionItems(items, resources.loadSchema);
    expect(viaZod.rejected.length).toBeGreaterThan(50);
    expect(page.rejected).toEqual(viaZod.rejected);
    // zod's values, handed on in the API's member order (api-order.ts), hashed as zod's output.
    expect(page.items).toEqual(viaZod.items);
    const rejectedAt = new Set(page.rejected.map((r) => r.index));
    const accepted = items.filter((_, index) => !rejectedAt.has(index)) as Record<string, unknown>[];
    let reordered = 0;
    page.items.forEach((item, i) => {
      const zodOutput = viaZod.items[i] as Record<string, unknown>;
      const inputOrder = Object.keys(accepted[i]!).filter((key) => Object.prototype.hasOwnProperty.call(zodOutput, key));
      expect(Object.keys(item as object)).toEqual(inputOrder);
      if (JSON.stringify(Object.keys(zodOutput)) !== JSON.stringify(inputOrder)) reordered += 1;
      expect(contentHash('upsert', item)).toBe(crypto.createHash('sha1').update(`upsert\u0000${JSON.stringify(zodOutput)}`).digest('base64url'));
    });
    expect(reordered).toBeGreaterThan(100);
  });

  it('every known field type accepts exactly what zod accepts, and outputs what zod outputs', () => {
    const types = { identifier, optionalBoolean, optionalDate, optionalNumber, optionalString, requiredString };
    for (const [name, type] of Object.entries(types)) {
      const schema = z.looseObject({ field: type, other: optionalString });
      const fast = fastObjectParser(schema)!;
      expect(fast, name).toBeDefined();
      for (const value of VALUES) {
        for (const input of [{ field: value, x: 1 }, { x: 1, other: null, field: value }, {}]) {
          const parsed = schema.safeParse(input);
          const quick = fast(input);
          expect(quick !== undefined, `${name} ${String(value)}`).toBe(parsed.success);
          if (quick !== undefined) expect(JSON.stringify(quick)).toBe(JSON.stringify(parsed.data));
        }
      }
    }
  });

  it('no fast path for a schema with a field type it does not know', () => {
    expect(fastObjectParser(resources.invoiceSchema)).toBeUndefined();
  });
});
