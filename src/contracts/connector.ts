import type { z } from 'zod';
import type { ContractLogger } from './logger.js';
import type { RecordMappingError, StreamMapper, StreamMapping } from './mapping.js';
import type { RecordBatch } from './records.js';

/**
 * The connector plug-in contract. Like a Kysely `Dialect`: a small factory with a zod config
 * schema that creates the instance; optional members are optional capabilities (a connector may
 * be a sink, a source of outbound commands, or both).
 */
export interface ConnectorFactory<TConfig = unknown> {
  /** Registry name used as `type:` in the config (`csv`, `sftp`, `sql`, …). */
  readonly name: string;
  /** Validates the connector's own config block; unknown keys must be rejected (`.strict()`). */
  readonly configSchema: z.ZodType<TConfig>;
  create(config: TConfig, context: ConnectorContext): ConnectorInstance | Promise<ConnectorInstance>;
  /**
   * Optional: problems the parsed options and the resolved mappings cause together (a table name
   * too long for the database, …), found without any I/O. `validate-config` and every command
   * call it before anything is created; `path` is relative to `connectors.<name>`.
   */
  check?(config: TConfig, context: ConnectorCheckContext): readonly ConnectorIssue[];
  /**
   * Optional: whether an instance created from `config` will have a sink and/or a source, so a
   * stream or `outbound.sources` naming a connector that cannot serve it is a config error
   * before anything is created. Without it, that is only found when the app is opened.
   */
  capabilities?(config: TConfig): ConnectorCapabilities;
}

export interface ConnectorCapabilities {
  readonly sink: boolean;
  readonly source: boolean;
}

export interface ConnectorCheckContext {
  readonly baseDir: string;
  /** The compiled mapping of each stream this connector receives (as in `ConnectorContext`). */
  readonly mappings: ReadonlyMap<string, StreamMapping>;
}

/** One problem, at `connectors.<name>.<path…>`. */
export interface ConnectorIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export interface ConnectorContext {
  /** The connector's name in the config (`connectors.<name>`). */
  readonly instanceName: string;
  readonly logger: ContractLogger;
  /** Directory relative paths in the connector config resolve against (the config file's folder). */
  readonly baseDir: string;
  /**
   * The mapping of each stream this connector receives, resolved from the config or the default
   * mapping of the stream (API variant applied) and compiled: a sink never loads mappings itself.
   */
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  /**
   * The account lease this process writes under right now (undefined between tenures, and for
   * commands that hold none). A writer lock of a shared target (a file drop's) can carry it: a
   * holder of a later epoch of the same lease takes such a lock over at once, since the earlier
   * holder's lease — and with it its right to write — has ended.
   */
  readonly writerFence?: () => WriterFence | undefined;
}

/** A writer's lease, as a connector may record and compare it (see ConnectorContext.writerFence). */
export interface WriterFence {
  /** What the lease is of (the account's lease key): epochs compare only within one scope. */
  readonly scope: string;
  /** Grows with every claim of the lease: a later holder has a larger one. */
  readonly epoch: number;
  /**
   * False once the lease may be another process's: it passed its deadline on this process's
   * clock, was lost, or its tenure ended (released). While true, no later epoch can exist.
   */
  held(): boolean;
}

export interface ConnectorInstance {
  /** Opens connections, creates folders or tables. Called once before any write. */
  init?(signal: AbortSignal): Promise<void>;
  /** Present when the connector can receive records. */
  readonly sink?: RecordSink;
  /** Present when the connector can yield outbound commands (ERP → API). */
  readonly source?: CommandSource;
  /** Present when the connector can store files (document files: the `documentFiles` stream's `filesTo`). */
  readonly files?: FileStore;
  /** Present when the sink can read back what it holds (`freight-sync reconcile`). Read-only. */
  readonly reader?: SinkReader;
  /** Cheap readiness probe for /readyz; throws when the connector cannot work. */
  check?(signal: AbortSignal): Promise<void>;
  /**
   * Optional (SQL sinks): the column type changes its existing tables need, each table with the
   * statements that make them, run when `apply` is true (`freight-sync sink migrate`). Called
   * after `init`; new columns and indexes are added by `init` itself, type changes never are.
   */
  migrate?(options: { readonly apply: boolean }, signal: AbortSignal): Promise<readonly TableMigration[]>;
  /** Releases every resource. Called once, in reverse order of creation. */
  close(): Promise<void>;
}

/**
 * A file to store under its content-addressed name `<sha256 hex><extension>`. The bytes arrive as
 * a stream (a 50 MB document is never held in memory); `open` may be called again when a try
 * fails midway (a broken SFTP connection), and must then yield the same bytes.
 */
export interface FileToStore {
  /** Folder relative to the connector's own directory (`documents`); POSIX separators, no `..`. */
  readonly folder: string;
  /** `.pdf`, or '' when unknown; lower case letters and digits after the dot. */
  readonly extension: string;
  open(signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
}

export interface StoredFile {
  /** `<sha256><extension>`. */
  readonly name: string;
  readonly sha256: string;
  readonly bytes: number;
  /** Where the ERP finds it: an absolute path, or `sftp://user@host:port/dir/name`. */
  readonly location: string;
}

/**
 * Capability of a connector that keeps files (the `csv` connector's folder, the `sftp` connector's
 * `remoteDir`). Writes atomically (temp name, then rename): the name never shows partial content,
 * and storing the same bytes again replaces the file with an identical one, so a repeat after a
 * crash is harmless. Metadata about the files travels separately, as records through `RecordSink`.
 */
export interface FileStore {
  put(file: FileToStore, signal: AbortSignal): Promise<StoredFile>;
}

/** One record of a batch the sink refused (the ERP table's constraint, a mapping that failed). */
export interface SinkRejection {
  /** The `SyncRecord.key` of the refused record (a key of the batch). */
  key: string;
  /** Why, naming what refused it: `table erp_loads, column container_no: value too long`. */
  reason: string;
}

/** What a sink acknowledges for one batch: every record of the batch except `rejected` is committed. */
export interface SinkAck {
  rejected: readonly SinkRejection[];
}

/** A column whose type in the target differs from the type the mapping asks for. */
export interface ColumnTypeChange {
  readonly column: string;
  /** As the database reports it. */
  readonly current: string;
  readonly wanted: string;
}

export interface TableMigration {
  readonly table: string;
  readonly changes: readonly ColumnTypeChange[];
  /** The statements that make the changes, in order (as run by `apply`). */
  readonly statements: readonly string[];
}

export interface RecordSink {
  /**
   * Writes the batch durably and idempotently (upsert by key; deterministic file names), then
   * resolves. Resolving is the acknowledgement after which the stream's checkpoint may advance,
   * so it must not resolve before the data is committed.
   *
   * A sink that refuses single records but commits the rest resolves with their keys in
   * `rejected`: the engine does not remember them as delivered, keeps them in its quarantine and
   * re-delivers them to this sink later (`freight-sync rejected`). Resolving with nothing
   * (`void`) means every record was accepted. Throwing means nothing of the batch counts: the
   * whole batch is delivered again.
   */
  write(batch: RecordBatch, signal: AbortSignal): Promise<SinkAck | void>;
  /**
   * Optional: makes what earlier writes made durable visible to the ERP (a file drop publishes
   * the batch files it staged, with their manifest). The engine calls it at the end of every
   * stream run and after every targeted delivery (webhook refresh, reconcile repair), also when
   * the run failed or was stopped; the connector's `close` should do the same. It never changes
   * what was acknowledged: `write` already made the data durable, so a crash before `flush` loses
   * nothing (the sink publishes it at its next start). Throwing is reported, never retried here.
   */
  flush?(signal: AbortSignal): Promise<void>;
}

/**
 * The rejections of records a `StreamMapper` could not map (`mapper.map(batch).errors`): one per
 * record, every problem in its reason. For sinks that skip such records and write the rest.
 */
export function mappingRejections(errors: readonly RecordMappingError[]): SinkRejection[] {
  return errors.map(({ record, errors: problems }) => ({ key: record.key, reason: problems.map((p) => p.message).join('; ') }));
}

/** One row of a stream's root (parent) table as a sink holds it: every column as text, null when empty. */
export type SinkRow = Readonly<Record<string, string | null>>;

/**
 * Read-back capability of a sink, used by `freight-sync reconcile` to prove what the ERP holds.
 * Never writes. Values are text in one canonical form (`cellText` in src/util/cell-text.ts):
 * booleans `true`/`false`, timestamps ISO 8601 UTC, numbers and decimals with the digits the
 * sink stored, JSON as JSON text.
 */
export interface SinkReader {
  /**
   * The rows of the stream's root table, one per key: for an append-only drop the version the
   * ERP keeps (the same "newer-or-equal `_updated_at` wins" rule an SQL sink applies, in delivery
   * order). Rows include the meta columns `_op` (`delete` marks a tombstone), `_updated_at` and
   * `_synced_at`; `columns` narrows the rest (unknown names are ignored). Yields pages, so a large
   * table is never held twice.
   */
  readRows(stream: string, options: SinkReadOptions, signal: AbortSignal): AsyncIterable<readonly SinkRow[]>;
}

export interface SinkReadOptions {
  /** Columns wanted besides the key and meta columns; all when absent. */
  readonly columns?: readonly string[];
}

/**
 * One request the ERP put somewhere (a row of a CSV/JSON inbox file, a staging-table row). The
 * outbound side validates `fields` per command kind; the source only reads and reports.
 */
export interface InboundRequest {
  /** Position in its unit, unique within it: the row number in a file, the staging row id. */
  ref: string;
  /** Fields as the ERP wrote them (strings from CSV, typed values from JSON or SQL). */
  fields: Record<string, unknown>;
  /** The source could not read this request (malformed CSV line, bad JSON element): written back as its error. */
  problem?: string;
}

/** A unit of inbound work: one inbox file, or one claim of staging rows. */
export interface InboundUnit {
  /** Stable id of the unit in its source (file name, `claim-<id>`); deterministic for the same input. */
  id: string;
  /** Human-readable location for messages (path of the file, table name). */
  location: string;
  requests: InboundRequest[];
}

/** The final outcome of one request, written back to where it came from. */
export interface InboundResult {
  ref: string;
  status: 'done' | 'failed';
  /** For load creates and updates: the load's reference number and id. */
  referenceNumber?: string | null;
  loadId?: string | null;
  /** Precise error naming the field and value, when failed. */
  error?: string | null;
  /** Outbox id of the command, so the ERP can correlate with echo markers on pulled records. */
  outboxId?: number | null;
  finishedAt: string;
}

/**
 * Capability of a connector that yields outbound commands (ERP → API). The outbound side calls
 * `take` to read new units, stores every request durably in its outbox, then calls `accepted` so
 * the source marks the unit as taken (moves the file to `processing/`, sets staging rows to
 * `queued`) — a unit taken twice (crash between the two) yields no second command, because the
 * outbox is keyed by ERP key. When every request of a unit has a final outcome, `writeBack` puts
 * the results where they came from (a result CSV beside the processed file, the staging row's
 * columns) and retires the unit (`processed/` or `failed/`).
 */
export interface CommandSource {
  take(signal: AbortSignal): Promise<InboundUnit[]>;
  accepted(unit: InboundUnit, signal: AbortSignal): Promise<void>;
  writeBack(unitId: string, results: readonly InboundResult[], signal: AbortSignal): Promise<void>;
  /**
   * Optional (`push --dry-run`): every unit `take` would hand over now, read WITHOUT taking it —
   * no file moved, no row claimed, nothing marked. Unit ids are the ones `take` would give, so a
   * unit already stored (taken before a crash) is recognised. A source without `peek` cannot be
   * dry-run; the dry run says so for it.
   */
  peek?(signal: AbortSignal): Promise<InboundUnit[]>;
  /**
   * Optional: puts a dry run's outcomes where the ERP can see them without retiring the unit
   * (the file inbox writes `<file>.dry-run.result.csv` beside the file). Without it the dry run
   * only reports.
   */
  writeDryRun?(unitId: string, results: readonly DryRunResult[], signal: AbortSignal): Promise<void>;
}

/** What a real push would do with one request, found by `push --dry-run` (nothing was sent). */
export interface DryRunResult {
  ref: string;
  /** `ok`: the request would be accepted and `outcome` says what would be sent; `failed`: it would be rejected with `error`. */
  status: 'ok' | 'failed';
  /** `would create load`, `would update load 1000123`, `already done (outbox #41)`, `error`, … */
  outcome: string;
  /** The precise error a real push would write back (field and value), when failed. */
  error?: string | null;
  /** The load the request acts on, when already known (a reference number). */
  referenceNumber?: string | null;
  /** The outbox command the request duplicates, when one is already stored. */
  outboxId?: number | null;
  checkedAt: string;
}

/**
 * Identity helper for plug-in authors: `export default defineConnector({ … })` type-checks the
 * factory (in TypeScript, or in JavaScript with `// @ts-check`) without any other import.
 */
export function defineConnector<TConfig>(factory: ConnectorFactory<TConfig>): ConnectorFactory<TConfig> {
  return factory;
}
