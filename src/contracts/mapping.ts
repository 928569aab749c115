import type { RecordBatch, SyncRecord } from './records.js';

/**
 * The typed mapping a sink receives. Decision: sinks receive a compiled mapping together with the
 * function that applies it (`StreamMapper`), not pre-mapped rows: a sink decides what a mapping
 * error means for its target (fail the batch, or skip the record and name it in the SinkAck) and may add its
 * own checks on text cells (a latin1 CSV rejects what it cannot encode), and an SQL sink reads
 * the column shapes to create its tables before the first batch. The composition root resolves
 * every stream's mapping (config or default, API variant applied) and compiles it once; a sink
 * never reads mapping files itself. These types describe the compiled form; the mapping engine
 * (`src/mapping`) produces it.
 */

/** Meta columns every mapped row carries; mapped columns may not use these names. */
export const META_COLUMNS = ['_op', '_updated_at', '_synced_at', '_run_id'] as const;
/** The column holding the record's raw JSON when the mapping has `includeRaw`. */
export const RAW_COLUMN = '_raw';

/** A value in a mapped row. */
export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

export type PathSegment = { readonly kind: 'key'; readonly name: string } | { readonly kind: 'index'; readonly index: number };

/** `element`: a plain path; `parent`/`root`: `$parent.…`/`$root.…`; `index`: `$index`; `key`: `$key`. */
export type PathScope = 'element' | 'parent' | 'root' | 'index' | 'key';

export interface CompiledPath {
  readonly text: string;
  readonly scope: PathScope;
  /** For `parent`: how many levels up (1 = `$parent`, 2 = `$parent.$parent`). */
  readonly depth: number;
  readonly segments: readonly PathSegment[];
}

/** The value transforms of the mapping format (docs/mappings.md), with their defaults applied. */
export type MappingTransform =
  | { readonly type: 'date'; readonly format: string; readonly timeZone: string }
  | { readonly type: 'number'; readonly decimals?: number | undefined; readonly fixed: boolean }
  | {
      readonly type: 'decimal';
      readonly scale?: number | undefined;
      readonly precision?: number | undefined;
      readonly round: 'half-up' | 'half-even' | 'error';
    }
  | { readonly type: 'integer' }
  | { readonly type: 'boolean'; readonly true: Cell; readonly false: Cell }
  | { readonly type: 'join'; readonly separator: string; readonly path?: string | undefined }
  | { readonly type: 'constant'; readonly value: Cell }
  | { readonly type: 'default'; readonly value: Cell }
  | { readonly type: 'string'; readonly trim: boolean }
  | { readonly type: 'json' }
  | { readonly type: 'sum'; readonly path?: string | undefined }
  | { readonly type: 'same'; readonly path?: string | undefined }
  | { readonly type: 'ref'; readonly field: string; readonly separator: string };

export type CompiledTransform = MappingTransform & { readonly elementPath?: readonly PathSegment[] };

/** An alternative source of a column (`fallback` in the mapping format). */
export interface CompiledFallback {
  readonly path: CompiledPath;
  readonly transforms: readonly CompiledTransform[];
}

export interface CompiledColumn {
  readonly name: string;
  readonly path: CompiledPath | undefined;
  readonly transforms: readonly CompiledTransform[];
  /** Tried in order when `path` yields nothing; absent when the column has none. */
  readonly fallback?: readonly CompiledFallback[] | undefined;
  readonly default: Cell | undefined;
  /** Type hint for SQL sinks; undefined when the sink derives the type from the transforms. */
  readonly sqlType?: string | undefined;
}

export interface CompiledParentKey {
  readonly name: string;
  /** Copy this column of the parent row... */
  readonly fromColumn: string | undefined;
  /** ...or read this path relative to the parent element. */
  readonly path: CompiledPath | undefined;
}

export interface CompiledTable {
  readonly table: string;
  readonly key: readonly string[];
  readonly columns: readonly CompiledColumn[];
  readonly includeRaw: boolean;
  /** Paths left out of `_raw`. */
  readonly rawOmit: readonly (readonly PathSegment[])[];
  /** Every output column in order: parent key columns, mapped columns, `_raw`, meta columns. */
  readonly outputColumns: readonly string[];
  readonly children: readonly CompiledChild[];
}

export interface CompiledChild extends CompiledTable {
  readonly path: CompiledPath;
  readonly parentTable: string;
  readonly parentKey: readonly CompiledParentKey[];
}

/** A validated, compiled mapping of one stream. */
export interface StreamMapping {
  readonly stream: string;
  readonly variant: string | undefined;
  readonly root: CompiledTable;
  /** Every table, parents before their children (the order sinks should write in). */
  readonly tables: readonly CompiledTable[];
}

export interface MappedTable {
  readonly table: string;
  readonly key: readonly string[];
  /** Every column in a stable order, whether or not rows hold a value for it. */
  readonly columns: readonly string[];
  readonly rows: Row[];
  readonly parent?: { readonly table: string; readonly parentKeyColumns: readonly string[] };
}

export interface MappedBatch {
  readonly stream: string;
  readonly batchId: string;
  /** Every table of the mapping (parents first), including tables with no rows in this batch. */
  readonly tables: readonly MappedTable[];
}

/** One cell that could not be mapped; the message names stream, key, column and value. */
export interface MappingProblem extends Error {
  readonly stream: string;
  readonly key: string;
  readonly table: string;
  readonly column: string;
  /** Where in the record a child row came from (`invoice[1].pricing[0]`); empty for the main table. */
  readonly element: string;
  readonly reason: string;
}

/** A record left out of a mapped batch, with every problem found in it. `errors` is never empty. */
export interface RecordMappingError {
  readonly record: SyncRecord;
  readonly errors: readonly [MappingProblem, ...MappingProblem[]];
}

export interface MapOptions {
  /**
   * Extra check on every text cell (for example "encodable in latin1"); returns a reason to reject
   * the record, or undefined. Runs inside mapping so a failure is a normal record error.
   */
  readonly checkText?: (text: string) => string | undefined;
}

export interface MapResult {
  readonly batch: MappedBatch;
  /** Records left out of `batch`, each with every problem found; the sink decides what to do. */
  readonly errors: RecordMappingError[];
}

/** A stream's compiled mapping and the engine that applies it: what a sink gets per stream. */
export interface StreamMapper {
  readonly mapping: StreamMapping;
  /** Maps a batch record by record; a record is all-or-nothing (see `MapResult.errors`). */
  map(batch: RecordBatch, options?: MapOptions): MapResult;
  /** The record's raw JSON without the mapping's `rawOmit` paths (for error reports). */
  rawOf(record: SyncRecord): Record<string, unknown>;
}
