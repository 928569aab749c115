import type {
  Cell,
  CompiledChild,
  CompiledColumn,
  CompiledFallback,
  CompiledParentKey,
  CompiledTable,
  CompiledTransform,
  MappingTransform,
  StreamMapping as ContractStreamMapping,
} from '../contracts/mapping.js';
import { parsePath, PathSyntaxError, type CompiledPath } from './path.js';
import type { ChildConfig, ColumnConfig, MappingBaseConfig, MappingConfig, Transform } from './mapping-schema.js';

// The schema's output must stay assignable to the transform type of the plug-in contract.
type TransformMatchesContract = Transform extends MappingTransform ? true : never;
export const TRANSFORM_TYPE_CHECK: TransformMatchesContract = true;

import { META_COLUMNS, RAW_COLUMN } from '../contracts/mapping.js';

export { META_COLUMNS, RAW_COLUMN } from '../contracts/mapping.js';
const RESERVED = new Set<string>([...META_COLUMNS, RAW_COLUMN]);

const TABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type { Cell, CompiledChild, CompiledColumn, CompiledParentKey, CompiledTable, CompiledTransform } from '../contracts/mapping.js';

const STREAM_MAPPING = Symbol.for('freight-sync.stream-mapping');

/** A validated, compiled mapping of one stream (branded: produced by `compileMapping` only). */
export interface StreamMapping extends ContractStreamMapping {
  readonly [STREAM_MAPPING]: true;
}

export function isStreamMapping(value: unknown): value is StreamMapping {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[STREAM_MAPPING] === true;
}

export interface MappingIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export class MappingCompileError extends Error {
  readonly issues: readonly MappingIssue[];
  constructor(issues: readonly MappingIssue[]) {
    super(issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    this.name = 'MappingCompileError';
    this.issues = issues;
  }
}

/** Applies `variants.<variant>` (each key given replaces the top-level key) and drops `variants`. */
export function applyVariant(config: MappingConfig, variant: string | undefined): MappingBaseConfig {
  const { variants, ...base } = config;
  const override = variant ? variants?.[variant] : undefined;
  if (!override) return base;
  const merged: MappingBaseConfig = { ...base };
  for (const [name, value] of Object.entries(override)) {
    if (value !== undefined) (merged as Record<string, unknown>)[name] = value;
  }
  return merged;
}

/** Checks what the schema cannot (names, keys, paths) and compiles paths once. */
export function compileMapping(stream: string, config: MappingBaseConfig, variant?: string): StreamMapping {
  const issues: MappingIssue[] = [];
  const tableNames = new Set<string>();
  const tables: CompiledTable[] = [];

  const root = compileTable(config, [], 0, undefined);
  if (issues.length > 0) throw new MappingCompileError(issues);
  return Object.freeze({ [STREAM_MAPPING]: true as const, stream, variant, root, tables });

  function parse(text: string, at: (string | number)[], depth: number, allowSpecial: boolean): CompiledPath | undefined {
    try {
      const compiled = parsePath(text);
      if (!allowSpecial && compiled.scope !== 'element') {
        issues.push({ path: at, message: `"${text}" must be a plain path (no $parent, $root, $index or $key)` });
        return undefined;
      }
      if (depth === 0 && (compiled.scope === 'parent' || compiled.scope === 'index')) {
        issues.push({ path: at, message: `"${text}": $parent and $index exist only in child tables` });
        return undefined;
      }
      if (compiled.scope === 'parent' && compiled.depth > depth) {
        issues.push({ path: at, message: `"${text}" goes up ${compiled.depth} levels but the table is ${depth} deep` });
        return undefined;
      }
      return compiled;
    } catch (error) {
      issues.push({ path: at, message: error instanceof PathSyntaxError ? error.message : String(error) });
      return undefined;
    }
  }

  function compileColumns(columns: readonly ColumnConfig[], at: (string | number)[], depth: number, taken: Set<string>): CompiledColumn[] {
    return columns.map((column, index) => {
      const here = [...at, 'columns', index];
      if (!COLUMN_NAME.test(column.name)) issues.push({ path: [...here, 'name'], message: `"${column.name}" is not a valid column name (letters, digits, _)` });
      else if (RESERVED.has(column.name)) issues.push({ path: [...here, 'name'], message: `"${column.name}" is reserved for meta columns` });
      else if (taken.has(column.name)) issues.push({ path: [...here, 'name'], message: `duplicate column "${column.name}"` });
      taken.add(column.name);
      const transforms = compileTransforms(column.transform, here, depth);
      const hasConstant = transforms.some((t) => t.type === 'constant' || t.type === 'default');
      if (!column.path && !hasConstant && column.default === undefined) {
        issues.push({ path: here, message: 'needs a path, a constant/default transform or a default' });
      }
      if (column.fallback && !column.path) issues.push({ path: [...here, 'fallback'], message: 'fallback needs a path to fall back from' });
      const path = column.path ? parse(column.path, [...here, 'path'], depth, true) : undefined;
      const fallback = column.fallback?.map((alternative, f): CompiledFallback => {
        const at = [...here, 'fallback', f];
        return { path: parse(alternative.path, [...at, 'path'], depth, true) ?? parsePath('$key'), transforms: compileTransforms(alternative.transform, at, depth) };
      });
      return {
        name: column.name,
        path,
        transforms,
        ...(fallback ? { fallback } : {}),
        default: column.default,
        ...(column.sqlType !== undefined ? { sqlType: column.sqlType } : {}),
      };
    });
  }

  /** Transforms that read inside array elements (`join`, `sum`, `same` with `path`) get that path compiled. */
  function compileTransforms(list: readonly Transform[] | undefined, at: (string | number)[], depth: number): CompiledTransform[] {
    return (list ?? []).map((transform, t): CompiledTransform => {
      if (!('path' in transform) || !transform.path) return transform;
      const path = parse(transform.path, [...at, 'transform', t, 'path'], depth, false);
      return { ...transform, elementPath: path?.segments ?? [] };
    });
  }

  function compileTable(
    node: MappingBaseConfig | ChildConfig,
    at: (string | number)[],
    depth: number,
    parent: { table: string; columns: ReadonlySet<string> } | undefined,
  ): CompiledChild {
    if (!TABLE_NAME.test(node.table)) issues.push({ path: [...at, 'table'], message: `"${node.table}" is not a valid table name (letter first, then letters, digits, _)` });
    else if (node.table.includes('__')) issues.push({ path: [...at, 'table'], message: `"${node.table}" must not contain "__" (it separates table and batch in file names)` });
    else if (tableNames.has(node.table)) issues.push({ path: [...at, 'table'], message: `table "${node.table}" is used twice in this mapping` });
    tableNames.add(node.table);

    const taken = new Set<string>();
    const parentKey: CompiledParentKey[] = [];
    if (parent && 'parentKey' in node) {
      const entries = Object.entries(node.parentKey);
      if (entries.length === 0) issues.push({ path: [...at, 'parentKey'], message: 'a child table needs at least one parent key column' });
      for (const [name, ref] of entries) {
        if (!COLUMN_NAME.test(name) || RESERVED.has(name)) issues.push({ path: [...at, 'parentKey', name], message: `"${name}" is not a usable column name` });
        taken.add(name);
        if (parent.columns.has(ref)) parentKey.push({ name, fromColumn: ref, path: undefined });
        else parentKey.push({ name, fromColumn: undefined, path: parse(ref, [...at, 'parentKey', name], depth - 1, true) });
      }
    }
    const columns = compileColumns(node.columns, at, depth, taken);
    for (const [i, keyColumn] of node.key.entries()) {
      if (!taken.has(keyColumn)) issues.push({ path: [...at, 'key', i], message: `key column "${keyColumn}" is not a column of table ${node.table}` });
    }
    const includeRaw = node.includeRaw ?? false;
    const rawOmit = ('rawOmit' in node ? (node.rawOmit ?? []) : []).map((text, i) => parse(text, [...at, 'rawOmit', i], depth, false)?.segments ?? []);
    const outputColumns = [...parentKey.map((k) => k.name), ...columns.map((c) => c.name), ...(includeRaw ? [RAW_COLUMN] : []), ...META_COLUMNS];

    const table: CompiledChild = {
      table: node.table,
      key: [...node.key],
      columns,
      includeRaw,
      rawOmit,
      outputColumns,
      children: [],
      path: 'path' in node && parent ? (parse(node.path, [...at, 'path'], depth - 1, false) ?? parsePath('x')) : parsePath('$key'),
      parentTable: parent?.table ?? '',
      parentKey,
    };
    tables.push(table);
    const children = (node.children ?? []).map((child, i) => compileTable(child, [...at, 'children', i], depth + 1, { table: node.table, columns: taken }));
    (table as { children: readonly CompiledChild[] }).children = children;
    return table;
  }
}
