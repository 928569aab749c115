import { describe, expect, it } from 'vitest';
import { getPath, parsePath, PathSyntaxError } from '../../src/mapping/path.js';

const data = {
  a: { b: { c: 1 } },
  driverOrder: [{ city: 'Long Beach' }, { city: 'Ontario' }],
  referenceFields: { 'odd.key': 'dotted', 'with space': 'spaced', Voayge: 'V1' },
  list: [[1, 2], [3]],
};

describe('field paths', () => {
  it('reads nested keys, array indexes and negative indexes', () => {
    expect(getPath(data, 'a.b.c')).toBe(1);
    expect(getPath(data, 'driverOrder[0].city')).toBe('Long Beach');
    expect(getPath(data, 'driverOrder[-1].city')).toBe('Ontario');
    expect(getPath(data, 'list[1][0]')).toBe(3);
  });

  it('reads quoted keys with dots and spaces', () => {
    expect(getPath(data, 'referenceFields["odd.key"]')).toBe('dotted');
    expect(getPath(data, "referenceFields['with space']")).toBe('spaced');
    expect(getPath({ 'x.y': { z: 2 } }, '"x.y".z')).toBe(2);
  });

  it('gives undefined for missing parts and wrong shapes, never the prototype', () => {
    expect(getPath(data, 'a.x.c')).toBeUndefined();
    expect(getPath(data, 'driverOrder[5].city')).toBeUndefined();
    expect(getPath(data, 'a[0]')).toBeUndefined();
    expect(getPath(data, 'a.constructor')).toBeUndefined();
    expect(getPath(data, 'a.__proto__')).toBeUndefined();
  });

  it('parses special roots', () => {
    expect(parsePath('$index').scope).toBe('index');
    expect(parsePath('$key').scope).toBe('key');
    expect(parsePath('$parent.$parent.x')).toMatchObject({ scope: 'parent', depth: 2 });
    expect(parsePath('$root.reference_number')).toMatchObject({ scope: 'root' });
  });

  it.each(['', 'a..b', 'a.', 'a[x]', 'a["open', 'a[1', 'a.$index', 'a b'])('rejects %j', (text) => {
    expect(() => parsePath(text)).toThrow(PathSyntaxError);
  });
});
