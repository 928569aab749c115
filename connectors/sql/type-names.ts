import type { SqlDialectName } from './options.js';

/**
 * One spelling per column type and dialect, so the type a table has (as the database reports it)
 * and the type the mapping wants (as this connector or a `sqlType` writes it) compare as equal
 * when they are the same type: `decimal(30, 2)` and PostgreSQL's `numeric(30,2)`, MariaDB's
 * `bigint(20)` and `bigint`, `timestamptz` and `timestamp with time zone`. A spelling not listed
 * here compares as written (lower case, single spaces), so an exotic `sqlType` can at worst cause
 * a warning about a change that is none, never hide a real one.
 */

/** The columns of `information_schema.columns` that describe a type. */
export interface InformationSchemaType {
  readonly data_type: string;
  readonly length?: number | string | null;
  readonly numeric_precision?: number | string | null;
  readonly numeric_scale?: number | string | null;
  readonly datetime_precision?: number | string | null;
}

const ALIASES: Record<SqlDialectName, Record<string, string>> = {
  postgres: {
    'character varying': 'varchar',
    character: 'char',
    decimal: 'numeric',
    int8: 'bigint',
    int: 'integer',
    int4: 'integer',
    int2: 'smallint',
    float8: 'double precision',
    float: 'double precision',
    float4: 'real',
    bool: 'boolean',
    'timestamp with time zone': 'timestamptz',
    'timestamp without time zone': 'timestamp',
  },
  mysql: { integer: 'int', numeric: 'decimal', 'double precision': 'double', real: 'double', boolean: 'tinyint(1)', bool: 'tinyint(1)' },
  mssql: { numeric: 'decimal', 'double precision': 'float', 'float(53)': 'float', integer: 'int', datetimeoffset: 'datetimeoffset(7)' },
  sqlite: {},
};

/** Integer types whose `(n)` is a display width, not a size (MySQL/MariaDB report `bigint(20)`). */
const DISPLAY_WIDTH = /^(bigint|int|mediumint|smallint)\(\d+\)( unsigned)?$/;

export function canonicalType(dialect: SqlDialectName, declared: string): string {
  let type = declared.trim().toLowerCase().replace(/\s+/g, ' ').replace(/\s*\(\s*/g, '(').replace(/\s*,\s*/g, ',').replace(/\s*\)/g, ')');
  if (dialect === 'mysql') type = type.replace(DISPLAY_WIDTH, '$1$2');
  const size = /^([a-z ]+?)(\(.*\))?$/.exec(type);
  if (!size) return type;
  const whole = ALIASES[dialect][type];
  if (whole) return whole;
  const alias = ALIASES[dialect][size[1]!];
  // An alias that carries its own size (`datetimeoffset(7)`) only stands for the unsized name.
  const base = alias && !(size[2] && alias.includes('(')) ? alias : size[1]!;
  let sized = `${base}${size[2] ?? ''}`;
  // PostgreSQL's default timestamp precision is 6, so `timestamptz(6)` is `timestamptz`.
  if (dialect === 'postgres') sized = sized.replace(/^(timestamptz|timestamp)\(6\)$/, '$1');
  return sized;
}

const num = (value: number | string | null | undefined): number | undefined => (value === null || value === undefined ? undefined : Number(value));

export function describePostgresType(row: InformationSchemaType): string {
  const type = canonicalType('postgres', row.data_type);
  const length = num(row.length);
  if ((type === 'varchar' || type === 'char') && length !== undefined) return `${type}(${length})`;
  if (type === 'numeric' && num(row.numeric_precision) !== undefined) return `numeric(${num(row.numeric_precision)},${num(row.numeric_scale) ?? 0})`;
  if ((type === 'timestamptz' || type === 'timestamp') && num(row.datetime_precision) !== undefined && num(row.datetime_precision) !== 6) {
    return `${type}(${num(row.datetime_precision)})`;
  }
  return type;
}

export function describeMssqlType(row: InformationSchemaType): string {
  // The bare name: `datetimeoffset` alone would read as its default precision.
  const type = row.data_type.trim().toLowerCase();
  const length = num(row.length);
  if (['nvarchar', 'varchar', 'nchar', 'char', 'varbinary'].includes(type) && length !== undefined) return `${type}(${length === -1 ? 'max' : length})`;
  if (type === 'decimal' || type === 'numeric') return `decimal(${num(row.numeric_precision)},${num(row.numeric_scale) ?? 0})`;
  if (['datetimeoffset', 'datetime2', 'time'].includes(type)) return `${type}(${num(row.datetime_precision) ?? 7})`;
  return canonicalType('mssql', type);
}

/**
 * Whether a column of type `current` already is `wanted`. MariaDB's JSON is an alias of LONGTEXT
 * (reported as `longtext`), so there the two are one type.
 */
export function sameType(dialect: SqlDialectName, current: string, wanted: string, mariadb: boolean): boolean {
  const want = canonicalType(dialect, wanted);
  if (current === want) return true;
  return dialect === 'mysql' && mariadb && [current, want].every((t) => t === 'json' || t === 'longtext');
}

/** Text types: a value moved out of one may be an empty string that no other type takes. */
export function isTextType(type: string): boolean {
  return /^(text|longtext|mediumtext|tinytext|n?varchar|n?char|character varying|character|clob)\b/.test(type);
}
