/** One record as it travels from a stream to the sinks. */
export type RecordOp = 'upsert' | 'delete';

export interface SyncRecord {
  /** Stream name, e.g. `loads`, `invoices`. */
  stream: string;
  /** The record's key within the stream (e.g. a load's `reference_number`). Never empty. */
  key: string;
  /** `delete` is a tombstone: the record was deleted upstream; `data` holds its last known state. */
  op: RecordOp;
  /** The record's own updatedAt (or createdAt for append-only streams), ISO 8601 UTC; null if it has none. */
  updatedAt: string | null;
  /** The full raw JSON of the resource as the API returned it. */
  data: Record<string, unknown>;
  /** When this daemon fetched it, ISO 8601 UTC. */
  syncedAt: string;
}

/**
 * A batch handed to every sink of a stream. `batchId` is deterministic for the position in the
 * stream the batch was read from (stream + window + cursor), so a batch repeated after a crash
 * carries the same id and a file sink replaces its earlier file instead of adding a duplicate.
 */
export interface RecordBatch {
  stream: string;
  batchId: string;
  records: SyncRecord[];
  /**
   * The run that delivers the batch (the run history id of a polled run; the delivery's position
   * id, e.g. `webhook_12-15`, for targeted deliveries). Sinks store it as `_run_id`; optional so
   * hand-built batches and older plug-ins keep working.
   */
  runId?: string;
}
