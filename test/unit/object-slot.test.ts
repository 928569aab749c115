import { describe, expect, it } from 'vitest';
import { ObjectSlot } from '../../src/util/object-slot.js';

describe('ObjectSlot', () => {
  it('keeps a value per object without changing what the object shows', () => {
    const slot = new ObjectSlot<string>('test');
    const record = JSON.parse('{"a":1,"b":{"c":"x"}}') as Record<string, unknown>;
    const text = JSON.stringify(record);
    slot.set(record, 'kept');
    expect(slot.get(record)).toBe('kept');
    expect(JSON.stringify(record)).toBe(text);
    expect(Object.keys(record)).toEqual(['a', 'b']);
    const forIn: string[] = [];
    for (const key in record) forIn.push(key);
    expect(forIn).toEqual(['a', 'b']);
    expect(record).toEqual({ a: 1, b: { c: 'x' } });
  });

  it('is not carried to copies: a copy may differ from the object the value describes', () => {
    const slot = new ObjectSlot<string>('test');
    const record: Record<string, unknown> = { a: 1 };
    slot.set(record, 'kept');
    expect(slot.get({ ...record })).toBeUndefined();
    expect(slot.get(Object.assign({}, record))).toBeUndefined();
    expect(slot.get(structuredClone(record))).toBeUndefined();
    expect(slot.get(JSON.parse(JSON.stringify(record)) as object)).toBeUndefined();
  });

  it('replaces a value, and keeps slots of different instances apart', () => {
    const first = new ObjectSlot<number>('test');
    const second = new ObjectSlot<number>('test');
    const record = {};
    first.set(record, 1);
    first.set(record, 2);
    second.set(record, 3);
    expect(first.get(record)).toBe(2);
    expect(second.get(record)).toBe(3);
    expect(first.get({})).toBeUndefined();
  });

  it('keeps values for objects that cannot take a property (frozen, sealed, not extensible)', () => {
    const slot = new ObjectSlot<string>('test');
    const frozen = Object.freeze({ a: 1 });
    const sealed = Object.seal({ b: 2 });
    const closed = Object.preventExtensions({ c: 3 });
    slot.set(frozen, 'f');
    slot.set(sealed, 's');
    slot.set(closed, 'c');
    expect([slot.get(frozen), slot.get(sealed), slot.get(closed)]).toEqual(['f', 's', 'c']);
    expect(slot.get({ a: 1 })).toBeUndefined();
  });

  it('gives the latest value of an object frozen after its slot was set', () => {
    const slot = new ObjectSlot<string>('test');
    const record = { a: 1 };
    slot.set(record, 'before');
    Object.freeze(record);
    slot.set(record, 'after');
    expect(slot.get(record)).toBe('after');
    const other = { b: 2 };
    slot.set(other, 'own');
    expect(slot.get(other)).toBe('own');
  });
});
