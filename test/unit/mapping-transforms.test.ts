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
