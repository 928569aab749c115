import type { z } from 'zod';
import type { Logger } from '../util/logger.js';
import type { RecordBatch } from '../sync/record.js';

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
}

export interface ConnectorContext {
  /** The connector's name in the config (`connectors.<name>`). */
  readonly instanceName: string;
  readonly logger: Logger;
  /** Directory relative paths in the connector config resolve against (the config file's folder). */
  readonly baseDir: string;
  /** Mapping of each stream this connector receives (already resolved from config and defaults). */
  readonly mappings: ReadonlyMap<string, unknown>;
}

export interface ConnectorInstance {
  /** Opens connections, creates folders or tables. Called once before any write. */
  init?(signal: AbortSignal): Promise<void>;
  /** Present when the connector can receive records. */
  readonly sink?: RecordSink;
  /** Present when the connector can yield outbound commands (ERP → API). */
  readonly source?: unknown;
  /** Cheap readiness probe for /readyz; throws when the connector cannot work. */
  check?(signal: AbortSignal): Promise<void>;
  /** Releases every resource. Called once, in reverse order of creation. */
  close(): Promise<void>;
}

export interface RecordSink {
  /**
   * Writes the whole batch durably and idempotently (upsert by key; deterministic file names),
   * then resolves. Resolving is the acknowledgement after which the stream's checkpoint may
   * advance, so it must not resolve before the data is committed.
   */
  write(batch: RecordBatch, signal: AbortSignal): Promise<void>;
}
