import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/sync/content-hash.js';

describe('contentHash', () => {
  it('is equal for equal content serialized alike', () => {
    const a = { x: 1, y: { b: [1, { d: 2 }], a: null } };
    const b = JSON.parse(JSON.stringify(a)) as unknown;
    expect(contentHash('upsert', a)).toBe(contentHash('upsert', b));
  });

  it('changes with any value, with array order and with the op', () => {
    const base = { id: 'A', items: [1, 2], n: 1 };
    const h = contentHash('upsert', base);
    expect(contentHash('upsert', { ...base, n: 2 })).not.toBe(h);
    expect(contentHash('upsert', { ...base, items: [2, 1] })).not.toBe(h);
    expect(contentHash('delete', base)).not.toBe(h);
    expect(contentHash('upsert', { ...base, n: '1' })).not.toBe(h);
  });
});
