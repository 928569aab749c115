import { describe, expect, it } from 'vitest';
import { applyTransforms, toCell, TransformError } from '../../src/mapping/transforms.js';
import { transformSchema } from '../../src/mapping/mapping-schema.js';
import type { CompiledTransform } from '../../src/mapping/compile-mapping.js';
import { parsePath } from '../../src/mapping/path.js';

const t = (input: unknown): CompiledTransform => {
  const parsed = transformSchema.parse(input) as CompiledTransform;
  return parsed.type === 'join' && parsed.path ? { ...parsed, elementPath: parsePath(parsed.path).segments } : parsed;
};
const run = (value: unknown, ...transforms: unknown[]) => applyTransforms(value, transforms.map(t));

describe('transforms', () => {
  it('date: ISO in, ISO / tokens / time zone out', () => {
    expect(run('2024-03-12T15:04:05Z', 'date')).toBe('2024-03-12T15:04:05.000Z');
    expect(run('2024-03-12T15:04:05Z', { type: 'date', format: 'yyyy-MM-dd HH:mm', timeZone: 'America/Los_Angeles' })).toBe('2024-03-12 08:04');
    expect(run('2024-03-12T23:30:00Z', { type: 'date', format: 'isoDate', timeZone: 'Asia/Tokyo' })).toBe('2024-03-13');
    expect(run('Tue, 12 Mar 2024 15:04:05 GMT', { type: 'date', format: 'epochMillis' })).toBe(Date.UTC(2024, 2, 12, 15, 4, 5));
    expect(run(null, 'date')).toBeNull();
  });

  it('date: invalid input is an error naming the value', () => {
    expect(() => run('yesterday', 'date')).toThrow('cannot parse date "yesterday"');
    expect(() => run('2024-13-45', 'date')).toThrow(TransformError);
    expect(() => transformSchema.parse({ type: 'date', timeZone: 'Mars/Olympus' })).toThrow(/time zone/);
  });

  it('number: numbers and decimal strings, rounding, fixed output', () => {
    expect(run('1000.50', 'number')).toBe(1000.5);
    expect(run(' -3 ', 'number')).toBe(-3);
    expect(run('', 'number')).toBeNull();
    expect(run('1.005', { type: 'number', decimals: 2 })).toBe(1.01);
    expect(run('-2.5', { type: 'number', decimals: 0 })).toBe(-3);
    expect(run(12.5, { type: 'number', decimals: 2, fixed: true })).toBe('12.50');
    expect(() => run('12,50', 'number')).toThrow('cannot parse number "12,50"');
    expect(() => run(true, 'number')).toThrow(TransformError);
  });

  it('decimal: every digit of a decimal string, never through a float', () => {
    const money = { type: 'decimal', scale: 2 };
    expect(run('1234567.89', money)).toBe('1234567.89');
    expect(run('0.10', money)).toBe('0.10');
    expect(run('0.1', money)).toBe('0.10');
    expect(run(' +0012.5 ', money)).toBe('12.50');
    expect(run('-49065.80', money)).toBe('-49065.80');
    expect(run('-0.00', money)).toBe('0.00');
    // 2^53 + 1 and 30 digits: a double would change both.
    expect(run('9007199254740993.01', money)).toBe('9007199254740993.01');
    expect(run('123456789012345678901234567.89', 'decimal')).toBe('123456789012345678901234567.89');
    expect(run('1e3', money)).toBe('1000.00');
    expect(run('', money)).toBeNull();
    expect(run(null, money)).toBeNull();
  });

  it('decimal: a JSON number is read from its shortest round-trip text', () => {
    expect(run(0.1, { type: 'decimal', scale: 2 })).toBe('0.10');
    expect(run(1234567.89, { type: 'decimal', scale: 2 })).toBe('1234567.89');
    // 0.1 + 0.2 is the double 0.30000000000000004: the transform sees what JSON.parse produced.
    expect(run(0.1 + 0.2, 'decimal')).toBe('0.30000000000000004');
    expect(run(0.1 + 0.2, { type: 'decimal', scale: 2 })).toBe('0.30');
    expect(run(-250, { type: 'decimal', scale: 2 })).toBe('-250.00');
  });

  it('decimal: rounding to the scale, or refusing to; precision and bad input are errors naming the value', () => {
    expect(run('2.345', { type: 'decimal', scale: 2 })).toBe('2.35');
    expect(run('-2.345', { type: 'decimal', scale: 2 })).toBe('-2.35');
    expect(run('2.345', { type: 'decimal', scale: 2, round: 'half-even' })).toBe('2.34');
    expect(() => run('2.345', { type: 'decimal', scale: 2, round: 'error' })).toThrow('decimal "2.345" has more than 2 fraction digit(s)');
    expect(run('2.340', { type: 'decimal', scale: 2, round: 'error' })).toBe('2.34');
    expect(() => run('123456.7', { type: 'decimal', scale: 2, precision: 6 })).toThrow('decimal "123456.7" does not fit 6 digits with 2 after the point');
    expect(run('9999.99', { type: 'decimal', scale: 2, precision: 6 })).toBe('9999.99');
    expect(() => run('12,50', 'decimal')).toThrow('cannot parse decimal "12,50"');
    expect(() => run('$5', 'decimal')).toThrow(TransformError);
    expect(() => run(true, 'decimal')).toThrow('cannot parse decimal boolean true');
    expect(() => run(Number.NaN, 'decimal')).toThrow(TransformError);
    expect(() => transformSchema.parse({ type: 'decimal', scale: 4, precision: 2 })).toThrow(/scale must not be larger than precision/);
    expect(() => transformSchema.parse({ type: 'decimal', places: 2 })).toThrow();
  });

  it('integer: whole numbers only, exact beyond 2^53', () => {
    expect(run(3, 'integer')).toBe(3);
    expect(run('42', 'integer')).toBe(42);
    expect(run('3.00', 'integer')).toBe(3);
    expect(run('-7', 'integer')).toBe(-7);
    expect(run('9007199254740993', 'integer')).toBe('9007199254740993');
    expect(run('', 'integer')).toBeNull();
    expect(() => run('1.5', 'integer')).toThrow('"1.5" is not a whole number');
    expect(() => run(2.5, 'integer')).toThrow('number 2.5 is not a whole number');
    expect(() => run('ten', 'integer')).toThrow('cannot parse decimal "ten"');
  });

  it('boolean: configurable outputs, strict inputs', () => {
    expect(run(true, { type: 'boolean', true: 'Y', false: 'N' })).toBe('Y');
    expect(run('false', { type: 'boolean', true: 'Y', false: 'N' })).toBe('N');
    expect(run(1, 'boolean')).toBe(true);
    expect(run('', 'boolean')).toBeNull();
    expect(() => run('maybe', 'boolean')).toThrow('cannot parse boolean "maybe"');
  });

  it('join: arrays with separator and element path, holes kept', () => {
    expect(run(['a', 'b', 'c'], { type: 'join', separator: '|' })).toBe('a|b|c');
    expect(run([{ url: 'u1' }, {}, { url: 'u3' }], { type: 'join', path: 'url', separator: ' ' })).toBe('u1  u3');
    expect(run('solo', 'join')).toBe('solo');
    expect(run(null, 'join')).toBeNull();
  });

  it('constant, default, string, json and chaining', () => {
    expect(run('anything', { type: 'constant', value: 'ERP1' })).toBe('ERP1');
    expect(run(undefined, { type: 'default', value: 'n/a' })).toBe('n/a');
    expect(run('x', { type: 'default', value: 'n/a' })).toBe('x');
    expect(run(42, 'string')).toBe('42');
    expect(run('  pad ', { type: 'string', trim: true })).toBe('pad');
    expect(run({ a: [1] }, 'json')).toBe('{"a":[1]}');
    expect(run(undefined, { type: 'default', value: '7.5' }, { type: 'number', decimals: 0 })).toBe(8);
  });

  it('toCell keeps objects as JSON and rejects non-finite numbers', () => {
    expect(toCell({ a: 1 })).toBe('{"a":1}');
    expect(toCell(undefined)).toBeNull();
    expect(() => toCell(Number.NaN)).toThrow(TransformError);
  });

  it('rejects unknown transform types with the path of the type', () => {
    const result = transformSchema.safeParse({ type: 'uppercase' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['type']);
  });
});
