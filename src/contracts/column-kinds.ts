import type { CompiledColumn } from './mapping.js';

/**
 * What a column holds, derived from its mapping (the transforms say what comes out of them).
 * A typed sink turns a kind into its own type (the SQL connector: `connectors/sql/sql-types.ts`,
 * per dialect); a mapping can override the type with a per-column `sqlType`. In the contracts so
 * plug-in sinks and `freight-sync discover` derive the same kinds as the built-in SQL sink.
 */
export type ColumnKind =
  | { readonly type: 'text' }
  | { readonly type: 'longText' }
  | { readonly type: 'integer' }
  | { readonly type: 'double' }
  | { readonly type: 'decimal'; readonly scale: number | undefined; readonly precision?: number | undefined }
  /** JSON documents (`_raw`): a JSON type where the database has one. */
  | { readonly type: 'json' }
  | { readonly type: 'boolean' }
  | { readonly type: 'timestamp' }
  | { readonly type: 'date' }
  | { readonly type: 'custom'; readonly sqlType: string };

export const TEXT: ColumnKind = { type: 'text' };
export const LONG_TEXT: ColumnKind = { type: 'longText' };
export const JSON_DOCUMENT: ColumnKind = { type: 'json' };
export const INTEGER: ColumnKind = { type: 'integer' };
export const BOOLEAN: ColumnKind = { type: 'boolean' };
export const TIMESTAMP: ColumnKind = { type: 'timestamp' };

function kindOfValue(value: unknown): ColumnKind | undefined {
  if (typeof value === 'boolean') return BOOLEAN;
  if (typeof value === 'number') return { type: 'double' };
  if (typeof value === 'string') return TEXT;
  return undefined;
}

/**
 * The kind of a mapped column. Without a transform the value is whatever the API sent (text,
 * numbers, objects as JSON), so it is text: a number stored as text loses nothing, a string in a
 * numeric column would be rejected.
 */
export function columnKind(column: CompiledColumn & { readonly sqlType?: string | undefined }): ColumnKind {
  if (column.sqlType) return { type: 'custom', sqlType: column.sqlType };
  let kind: ColumnKind | undefined;
  if (column.path?.scope === 'index' && column.transforms.length === 0) return INTEGER;
  for (const transform of column.transforms) {
    switch (transform.type) {
      case 'date':
        kind = transform.format === 'iso' ? TIMESTAMP : transform.format === 'isoDate' ? { type: 'date' } : transform.format === 'epochMillis' ? INTEGER : TEXT;
        break;
      case 'number':
        kind = transform.decimals === undefined ? { type: 'double' } : { type: 'decimal', scale: transform.decimals };
        break;
      case 'decimal':
        kind = { type: 'decimal', scale: transform.scale, precision: transform.precision };
        break;
      case 'integer':
        kind = INTEGER;
        break;
      case 'boolean': {
        const whenTrue = kindOfValue(transform.true);
        const whenFalse = kindOfValue(transform.false);
        kind = whenTrue && whenFalse && whenTrue.type === whenFalse.type ? whenTrue : TEXT;
        break;
      }
      case 'join':
      case 'json':
        kind = LONG_TEXT;
        break;
      case 'string':
      case 'ref':
      // An exact decimal string: text keeps every digit; follow with `number` for a numeric column.
      case 'sum':
        kind = TEXT;
        break;
      case 'same':
        // Passes one of the elements' values through: the kind of what comes next decides.
        break;
      case 'constant':
        kind = kindOfValue(transform.value) ?? TEXT;
        break;
      case 'default':
        // A fallback value keeps the kind of what came before it.
        kind ??= kindOfValue(transform.value) ?? TEXT;
        break;
    }
  }
  return kind ?? TEXT;
}
