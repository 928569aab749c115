import { describe, expect, it } from 'vitest';
import { arrayElementType } from '../../connectors/sql/unnest-statement.js';
import type { ColumnPlan } from '../../connectors/sql/table-plan.js';

/**
 * The PostgreSQL array form casts each column's array to the column's type WITHOUT its size: an
 * explicit cast to `varchar(10)` would cut a long value silently where the assignment into the
 * column refuses it. Types an array cannot carry as plain scalars keep the VALUES form.
 */
const column = (sqlType: string): ColumnPlan => ({ name: 'c', kind: { type: 'custom', sqlType }, sqlType, length: undefined, key: false });

describe('arrayElementType', () => {
  it('drops the size of sized types and keeps plain scalars', () => {
    expect(arrayElementType(column('varchar(10)'))).toBe('varchar');
    expect(arrayElementType(column('numeric(30, 4)'))).toBe('numeric');
    expect(arrayElementType(column('timestamp(3) with time zone'))).toBe('timestamp with time zone');
    expect(arrayElementType(column('double precision'))).toBe('double precision');
    expect(arrayElementType(column('TEXT'))).toBe('text');
  });

  it('reads char(n) as the unsized blank-padded type, not as one character', () => {
    expect(arrayElementType(column('char(2)'))).toBe('bpchar');
    expect(arrayElementType(column('character(12)'))).toBe('bpchar');
  });

  it('refuses arrays, user types and anything else', () => {
    expect(arrayElementType(column('text[]'))).toBeUndefined();
    expect(arrayElementType(column('my_enum'))).toBeUndefined();
    expect(arrayElementType(column('geometry(Point, 4326)'))).toBeUndefined();
  });
});
