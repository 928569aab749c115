import type { ColumnKind } from './column-kinds.js';
import type { SqlDialectName } from './options.js';

/** Decimal columns hold amounts and rates: 30 digits leave room for any amount the API sends. */
const DECIMAL_PRECISION = 30;
/** A decimal without a scale keeps its own digits: PostgreSQL's `numeric` does; elsewhere this many fraction digits. */
const UNSCALED_FRACTION = 10;
/** The widest DECIMAL SQL Server takes (MySQL: 65): an unscaled decimal gets it. */
const MAX_PRECISION = 38;

/**
 * The column type of a kind in one dialect. The result only ever contains constants, integers and
 * a `sqlType` that the mapping schema restricted to a type name with a size, so it is safe to
 * hand to Kysely as raw type text.
 *
 * Plain text: PostgreSQL and SQLite need no length (`text`); MySQL and SQL Server need a length
 * for columns that are keys or indexed, so they get `varchar(textLength)`; JSON, joined lists and
 * `_raw` are long text everywhere.
 */
export function sqlTypeOf(kind: ColumnKind, dialect: SqlDialectName, textLength: number): string {
  switch (kind.type) {
    case 'custom':
      return kind.sqlType;
    case 'text':
      return { sqlite: 'text', postgres: 'text', mysql: `varchar(${textLength})`, mssql: `nvarchar(${textLength})` }[dialect];
    case 'longText':
      return { sqlite: 'text', postgres: 'text', mysql: 'longtext', mssql: 'nvarchar(max)' }[dialect];
    case 'integer':
      return { sqlite: 'integer', postgres: 'bigint', mysql: 'bigint', mssql: 'bigint' }[dialect];
    case 'double':
      return { sqlite: 'real', postgres: 'double precision', mysql: 'double', mssql: 'float' }[dialect];
    case 'decimal':
      return decimalType(kind.scale, kind.precision, dialect);
    case 'json':
      return { sqlite: 'text', postgres: 'jsonb', mysql: 'json', mssql: 'nvarchar(max)' }[dialect];
    case 'boolean':
      return { sqlite: 'integer', postgres: 'boolean', mysql: 'boolean', mssql: 'bit' }[dialect];
    case 'timestamp':
      // MySQL DATETIME has no zone: the connection runs in UTC and values are written as UTC.
      return { sqlite: 'text', postgres: 'timestamptz', mysql: 'datetime(3)', mssql: 'datetimeoffset(3)' }[dialect];
    case 'date':
      return dialect === 'sqlite' ? 'text' : 'date';
  }
}

/**
 * SQLite has no exact decimal: a NUMERIC column turns "0.10" into the double 0.1, so decimals are
 * TEXT there and hold exactly the digits the mapping produced (`CAST(x AS DECIMAL)` is not
 * available either; compare them as text or with `CAST(x AS REAL)` when a float is good enough).
 */
function decimalType(scale: number | undefined, precision: number | undefined, dialect: SqlDialectName): string {
  if (dialect === 'sqlite') return 'text';
  if (scale === undefined) {
    if (dialect === 'postgres') return precision === undefined ? 'numeric' : `numeric(${precision}, ${Math.min(UNSCALED_FRACTION, precision - 1)})`;
    const p = precision ?? MAX_PRECISION;
    return `decimal(${p}, ${Math.min(UNSCALED_FRACTION, p - 1)})`;
  }
  const p = precision ?? Math.max(DECIMAL_PRECISION, scale + 1);
  return dialect === 'postgres' ? `numeric(${p}, ${scale})` : `decimal(${p}, ${scale})`;
}

/** Declared character length of a type (`varchar(40)` → 40), for naming the column of a "too long" error. */
export function declaredLength(sqlType: string): number | undefined {
  const match = /^(?:n?varchar|character varying|n?char|character)\s*\(\s*(\d+)\s*\)$/i.exec(sqlType.trim());
  return match ? Number(match[1]) : undefined;
}
