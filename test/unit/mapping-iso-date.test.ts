import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { applyTransforms } from '../../src/mapping/transforms.js';
import { transformSchema } from '../../src/mapping/mapping-schema.js';
import type { CompiledTransform } from '../../src/mapping/compile-mapping.js';
import { parseIsoFast } from '../../src/mapping/iso-date.js';

/** The `date` transform as it was before the fast path: luxon for everything. The reference. */
function luxonReference(value: string, format: string, timeZone: string): string | number {
  const text = value.trim();
  let parsed = DateTime.fromISO(text, { zone: 'utc', setZone: true });
  if (!parsed.isValid) parsed = DateTime.fromRFC2822(text, { zone: 'utc', setZone: true });
  if (!parsed.isValid) parsed = DateTime.fromHTTP(text, { zone: 'utc', setZone: true });
  if (!parsed.isValid) parsed = DateTime.fromSQL(text, { zone: 'utc', setZone: true });
  if (!parsed.isValid) throw new Error('invalid');
  const zoned = parsed.setZone(timeZone);
  if (format === 'iso') return zoned.toISO({ suppressMilliseconds: false }) ?? '';
  if (format === 'isoDate') return zoned.toISODate() ?? '';
  if (format === 'epochMillis') return zoned.toMillis();
  return zoned.toFormat(format);
}

const outcome = (run: () => unknown): unknown => {
  try {
    return run();
  } catch {
    return 'invalid';
  }
};

/** Deterministic pseudo-random numbers (mulberry32), so a failure names a reproducible input. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** ISO-looking texts: mostly valid API shapes, plus every edge the fast path must hand to luxon or get right. */
function generateInputs(count: number): string[] {
  const next = random(14);
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const inputs: string[] = [];
  for (let i = 0; i < count; i++) {
    if (next() < 0.6) {
      // The API's own shapes with random valid fields.
      const y = int(1000, 9999);
      const mo = int(1, 12);
      const d = int(1, 31);
      const clock = `${pad(int(0, 23))}:${pad(int(0, 59))}:${pad(int(0, 59))}`;
      const frac = pick(['', `.${pad(int(0, 999), 3)}`, `.${int(0, 9)}`, `.${int(0, 999_999_999)}`]);
      const zone = pick(['Z', '', `+${pad(int(0, 14))}:${pick(['00', '30', '45'])}`, `-${pad(int(0, 12))}:${pick(['00', '30'])}`]);
      inputs.push(pick([`${pad(y, 4)}-${pad(mo)}-${pad(d)}`, `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${clock}${frac}${zone}`]));
      continue;
    }
    const year = pick([int(1970, 2040), int(1000, 9999), int(0, 999), 9999, 1000]);
    const month = pick([int(1, 12), int(1, 12), 0, 13]);
    const day = pick([int(1, 28), int(29, 31), 0, 32]);
    const date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
    const hour = pick([int(0, 23), int(0, 23), 24]);
    const minute = pick([int(0, 59), int(0, 59), 60]);
    const second = pick([int(0, 59), int(0, 59), 60]);
    const fraction = pick(['', `.${pad(int(0, 999), 3)}`, `.${int(0, 9)}`, `.${int(0, 99)}`, `.${int(0, 999_999_999)}`, `,${int(0, 999)}`, '.999999', '.0005']);
    const offset = pick(['Z', 'Z', '', `+${pad(int(0, 14))}:${pick(['00', '30', '45'])}`, `-${pad(int(0, 12))}:${pick(['00', '30'])}`, '-00:00', '+0530', '+05', 'z', '+24:00', '+23:59', '-99:99', '+05:60']);
    const time = pick([`T${pad(hour)}:${pad(minute)}:${pad(second)}${fraction}`, `T${pad(hour)}:${pad(minute)}`, `t${pad(hour)}:${pad(minute)}:${pad(second)}`, `T${pad(hour)}`, 'T24:00:00']);
    const shape = int(0, 9);
    if (shape === 0) inputs.push(date);
    else if (shape === 1) inputs.push(`${pad(year, 4)}${pad(month)}${pad(day)}T${pad(hour)}${pad(minute)}${pad(second)}Z`);
    else if (shape === 2) inputs.push(` ${date}${time}${offset} `);
    else inputs.push(`${date}${time}${offset}`);
  }
  return inputs.concat([
    '2024-02-29T12:00:00Z', '2023-02-29T12:00:00Z', '1900-02-29', '2000-02-29', '9999-12-31T23:59:59.999Z', '9999-12-31T23:00:00-05:00',
    '1000-01-01T00:30:00+01:00', '2024-05-01', '2024-05', '2024', '2024-W05-3', '2024-123', '2024-05-01T13:45:10.123456789+02:00',
    '2024-05-01T13:45:10.123Z[Europe/Paris]', '2024-05-01 13:45:10', 'Tue, 12 Mar 2024 15:04:05 GMT', 'yesterday', '', '+002024-05-01T00:00:00Z',
    // The canonical 24-character form, read by character codes: every field out of range or not digits.
    ...CANONICAL_EDGES,
  ]);
}

const CANONICAL_EDGES = [
  '2024-13-01T00:00:00.000Z', '2024-00-10T00:00:00.000Z', '2024-04-31T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2024-02-29T23:59:59.999Z',
  '0999-05-01T13:45:10.123Z', '2024-05-01T24:00:00.000Z', '2024-05-01T13:60:10.123Z', '2024-05-01T13:45:60.123Z', '2024-05-01T13:45:1a.123Z',
  '2024-05-01T13:45:10.12aZ', '2024-05-01T-1:45:10.123Z', '2024-05-01T13:45:10.123z', '2024-05-01t13:45:10.123Z', '2024/05/01T13:45:10.123Z',
  '+024-05-01T13:45:10.123Z', '2024-05-01T13:45:10,123Z', '9999-12-31T23:59:59.999Z', '1000-01-01T00:00:00.000Z', '2024-05-01T13:45:10.001Z',
];

const FORMATS = ['iso', 'isoDate', 'epochMillis', 'yyyy-MM-dd HH:mm:ss.SSS ZZ'];
const ZONES = ['UTC', 'Etc/UTC', 'America/Los_Angeles', 'Asia/Kolkata'];

describe('date transform: ISO 8601 fast path', () => {
  it('gives exactly what luxon gives, for every format and zone, over thousands of inputs', () => {
    const inputs = generateInputs(1500);
    let fast = 0;
    const differences: string[] = [];
    for (const input of inputs) {
      if (parseIsoFast(input.trim()) !== undefined) fast++;
      for (const format of FORMATS) {
        for (const timeZone of ZONES) {
          const transform = transformSchema.parse({ type: 'date', format, timeZone }) as CompiledTransform;
          const actual = outcome(() => applyTransforms(input, [transform]));
          const expected = outcome(() => luxonReference(input, format, timeZone));
          if (actual !== expected) differences.push(`${JSON.stringify(input)} ${format} ${timeZone}: ${String(actual)} ≠ luxon ${String(expected)}`);
        }
      }
    }
    expect(differences.slice(0, 10)).toEqual([]);
    // The comparison is only worth something if the fast path took a good share of the inputs.
    expect(fast).toBeGreaterThan(inputs.length / 3);
  });

  it('takes the API shapes and hands the rest to luxon', () => {
    expect(parseIsoFast('2024-05-01T13:45:10.123Z')).toBe(Date.UTC(2024, 4, 1, 13, 45, 10, 123));
    expect(parseIsoFast('2024-05-01T13:45:10.1239+02:00')).toBe(Date.UTC(2024, 4, 1, 11, 45, 10, 123));
    expect(parseIsoFast('2024-05-01')).toBe(Date.UTC(2024, 4, 1));
    // No offset means UTC (luxon's zone option), never the machine's local time as Date.parse would.
    expect(parseIsoFast('2024-05-01T13:45')).toBe(Date.UTC(2024, 4, 1, 13, 45));
    expect(parseIsoFast('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    for (const other of ['2024-13-01T00:00:00.000Z', '2024-05-01T-1:45:10.123Z', '2024-05-01T13:45:10.12aZ', '0999-05-01T13:45:10.123Z', '2024-05-01T24:00:00Z', '20240501T134510Z', '2024-05-01T13:45:10,5Z', '0999-01-01', '2023-02-29', '2024-05-01T13:45:10Z[Europe/Paris]']) {
      expect(parseIsoFast(other), other).toBeUndefined();
    }
  });
});
