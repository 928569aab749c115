import { describe, expect, it } from 'vitest';
import { canonicalType, describePostgresType, sameType } from '../../connectors/sql/type-names.js';

/** The comparison behind "a type change is never silent": equal types in other spellings are no change, real ones are. */
describe('SQL type names', () => {
  it('treats spellings of one type as the same type', () => {
    expect(sameType('postgres', describePostgresType({ data_type: 'numeric', numeric_precision: 30, numeric_scale: 2 }), 'numeric(30, 2)', false)).toBe(true);
    expect(sameType('postgres', describePostgresType({ data_type: 'numeric', numeric_precision: 30, numeric_scale: 2 }), 'decimal(30,2)', false)).toBe(true);
    expect(sameType('postgres', describePostgresType({ data_type: 'timestamp with time zone', datetime_precision: 6 }), 'timestamptz', false)).toBe(true);
    expect(sameType('postgres', describePostgresType({ data_type: 'character varying', length: 40 }), 'varchar(40)', false)).toBe(true);
    expect(sameType('postgres', describePostgresType({ data_type: 'numeric' }), 'numeric', false)).toBe(true);
    expect(sameType('mysql', canonicalType('mysql', 'bigint(20)'), 'bigint', false)).toBe(true);
    expect(sameType('mysql', canonicalType('mysql', 'tinyint(1)'), 'boolean', false)).toBe(true);
    expect(sameType('mysql', canonicalType('mysql', 'longtext'), 'json', true)).toBe(true);
    expect(sameType('sqlite', canonicalType('sqlite', 'TEXT'), 'text', false)).toBe(true);
  });

  it('reports what really differs', () => {
    expect(sameType('postgres', 'double precision', 'numeric(30, 2)', false)).toBe(false);
    expect(sameType('postgres', describePostgresType({ data_type: 'numeric', numeric_precision: 30, numeric_scale: 4 }), 'numeric(30, 2)', false)).toBe(false);
    expect(sameType('postgres', 'text', 'jsonb', false)).toBe(false);
    expect(sameType('postgres', describePostgresType({ data_type: 'timestamp with time zone', datetime_precision: 3 }), 'timestamptz', false)).toBe(false);
    // On MySQL proper JSON is its own type, not LONGTEXT.
    expect(sameType('mysql', 'longtext', 'json', false)).toBe(false);
    expect(sameType('mysql', 'double', 'decimal(30, 2)', false)).toBe(false);
    expect(sameType('sqlite', 'numeric', 'text', false)).toBe(false);
  });
});
