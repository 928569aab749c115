import { API_VARIANTS, type ApiVariant } from '../api/variant.js';
import { columnKind, JSON_DOCUMENT, RAW_COLUMN, TEXT, type ColumnKind, type CompiledChild, type CompiledColumn } from '../contracts/index.js';
import { isStreamName, STREAM_NAMES, type StreamName } from '../config/stream-names.js';
import { loadMapping } from '../mapping/load-mapping.js';
import type { StreamMapping } from '../mapping/compile-mapping.js';
import { findPackageRoot } from '../mapping/default-mappings.js';
import type { AnyStreamDefinition } from '../sync/stream-definition.js';
import { streamByName, streamsForVariant } from '../sync/streams/index.js';
import { UsageError } from '../util/errors.js';

/** One column of a mapped table, as `freight-sync discover` shows it. */
export interface DiscoveredColumn {
  name: string;
  /** What the column holds (the kind the SQL sink derives its type from): text, integer, decimal(2), timestamp, … */
  type: string;
  /** Where the value comes from: the record path (with fallbacks), the parent's column, or a constant. */
  source: string;
  key: boolean;
}

export interface DiscoveredTable {
  table: string;
  /** The parent table of a child table (one row per element of `path` in the parent's record). */
  parent: string | null;
  /** The record path a child table's rows come from; null for the stream's main table. */
  path: string | null;
  key: string[];
  columns: DiscoveredColumn[];
}

export interface DiscoveredStream {
  stream: StreamName;
  variant: ApiVariant;
  description: string;
  /** The record field(s) the key is made of. */
  key: string;
  /** How the stream moves forward on this variant. */
  cursor: string;
  /** Fed only by the webhook receiver (nothing is polled). */
  pushOnly: boolean;
  /** The tables of the default mapping (config/mappings/<stream>.yaml with the variant applied). */
  tables: DiscoveredTable[];
}

/** Meta columns every mapped table carries besides its own (docs/mappings.md). */
export const META_COLUMN_NOTE = 'every table also has _op, _updated_at, _synced_at, _run_id (and SQL root tables _deleted)';

/**
 * The streams of each variant with their key, cursor and default mapping, from the stream
 * definitions and `config/mappings` (no config, no API call): what `freight-sync discover` lists.
 */
export async function discoverStreams(options: { variants?: readonly ApiVariant[]; streams?: readonly string[] } = {}): Promise<DiscoveredStream[]> {
  const variants = options.variants ?? API_VARIANTS;
  // A typo must be an error naming it, not an empty list.
  for (const name of options.streams ?? []) if (!isStreamName(name)) throw new UsageError(`--stream ${name}: unknown stream (streams: ${STREAM_NAMES.join(', ')})`);
  const out: DiscoveredStream[] = [];
  for (const variant of variants) {
    for (const definition of streamsForVariant(variant)) {
      if (options.streams && !options.streams.includes(definition.name)) continue;
      out.push(describeStream(definition, variant, await defaultMapping(definition.name, variant)));
    }
  }
  return out;
}

/** The built-in mapping of a stream on a variant (what a sink without `mappings.<stream>` uses). */
export function defaultMapping(stream: StreamName, variant: ApiVariant): Promise<StreamMapping> {
  return loadMapping(stream, undefined, { baseDir: findPackageRoot(), variant });
}

export function describeStream(definition: AnyStreamDefinition, variant: ApiVariant, mapping: StreamMapping): DiscoveredStream {
  return {
    stream: definition.name,
    variant,
    description: definition.description,
    key: definition.keyDescription,
    cursor: cursorOn(definition.cursorKind, variant),
    pushOnly: definition.pushOnly === true,
    tables: describeTables(mapping),
  };
}

/** `updatedAt keyset (main), day windows (brokerage)` → the part of one variant. */
export function cursorOn(kind: string, variant: ApiVariant): string {
  const part = kind.split(', ').find((p) => p.endsWith(`(${variant})`));
  return part ? part.slice(0, -`(${variant})`.length).trim() : kind;
}

export function describeTables(mapping: StreamMapping): DiscoveredTable[] {
  const kinds = new Map<string, Map<string, ColumnKind>>();
  return mapping.tables.map((table) => {
    const child = table as CompiledChild;
    const parent = child.parentTable ? child.parentTable : null;
    const own = new Map<string, ColumnKind>();
    const columns: DiscoveredColumn[] = [];
    const add = (name: string, kind: ColumnKind, source: string) => {
      own.set(name, kind);
      columns.push({ name, type: kindName(kind), source, key: table.key.includes(name) });
    };
    for (const parentKey of parent ? child.parentKey : []) {
      if (parentKey.fromColumn !== undefined) add(parentKey.name, kinds.get(parent!)?.get(parentKey.fromColumn) ?? TEXT, `${parent}.${parentKey.fromColumn}`);
      else add(parentKey.name, TEXT, parentKey.path?.text ?? '');
    }
    for (const column of table.columns) add(column.name, columnKind(column), sourceOf(column));
    if (table.includeRaw) add(RAW_COLUMN, JSON_DOCUMENT, 'the whole record (JSON)');
    kinds.set(table.table, own);
    return { table: table.table, parent, path: parent ? child.path.text : null, key: [...table.key], columns };
  });
}

function sourceOf(column: CompiledColumn): string {
  if (!column.path) {
    const constant = column.transforms.find((t) => t.type === 'constant' || t.type === 'default');
    return constant && 'value' in constant ? `constant ${JSON.stringify(constant.value)}` : `default ${JSON.stringify(column.default ?? null)}`;
  }
  const fallbacks = column.fallback?.map((f) => f.path.text) ?? [];
  return fallbacks.length > 0 ? `${column.path.text} (else ${fallbacks.join(', ')})` : column.path.text;
}

/** The kind in words; SQL sinks turn it into each dialect's type (docs/connectors.md, Tables and types). */
export function kindName(kind: ColumnKind): string {
  switch (kind.type) {
    case 'longText':
      return 'long text';
    case 'decimal':
      if (kind.precision !== undefined && kind.scale !== undefined) return `decimal(${kind.precision}, ${kind.scale})`;
      if (kind.scale !== undefined) return `decimal, ${kind.scale} decimals`;
      return kind.precision !== undefined ? `decimal, ${kind.precision} digits` : 'decimal';
    case 'custom':
      return kind.sqlType;
    default:
      return kind.type;
  }
}

/** A stream name given on the command line, checked against the variant. */
export function streamOfVariant(name: string, variant: ApiVariant): AnyStreamDefinition {
  if (!isStreamName(name)) throw new UsageError(`--stream ${name}: unknown stream (streams: ${STREAM_NAMES.join(', ')})`);
  const definition = streamByName(name);
  if (!definition.variants.includes(variant)) throw new UsageError(`--stream ${name}: not available on the ${variant} variant (only ${definition.variants.join(', ')})`);
  return definition;
}
