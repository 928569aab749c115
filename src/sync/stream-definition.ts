import type { z } from 'zod';
import type { ApiClient } from '../api/api-client.js';
import type { PagedEndpoint } from '../api/page-size.js';
import type { RejectedItem } from '../api/paging.js';
import type { ApiVariant } from '../api/variant.js';
import type { Logger } from '../util/logger.js';
import type { FileStore, RecordOp } from '../contracts/index.js';
import type { SyncSideStore } from '../state/stores/sync-side-store.js';
import type { ConsumerDemand } from './read-ahead.js';

import type { StreamName } from '../config/stream-names.js';
export type { StreamName } from '../config/stream-names.js';

/** What a run of a stream covers. */
export interface RunPlan {
  /** `incremental` follows the stream's checkpoint; `backfill` covers [from, to] under its own cursor. */
  mode: 'incremental' | 'backfill';
  /** Backfill bounds (ISO). */
  from?: string;
  to?: string;
  lookbackMs: number;
  safetyLagMs: number;
  /**
   * Late writes are covered by the safety lag instead of the lookback (`lateWriteCover`): ranges
   * end `lookbackMs` earlier and start at the checkpoint, so each record is read once, later
   * (window-plan.ts, runRange).
   */
  lagCover?: boolean;
  /** Where a stream with no checkpoint starts (ISO). */
  initialFrom: string;
  maxWindowMs: number;
  minWindowMs: number;
}

/** Everything a stream needs to read from the API. */
export interface StreamEnv<TOptions = Record<string, unknown>> {
  client: ApiClient;
  variant: ApiVariant;
  pageSize: number;
  options: TOptions;
  logger: Logger;
  /** State beyond the cursor (open invoices, invoice candidates); owned by the engine. */
  side: SyncSideStore;
  /** Where the stream stores files (documentFiles: the connector named by `options.filesTo`). */
  files?: FileStore;
  /**
   * Whether the engine waits for the reader's next chunk right now (absent: it does whenever the
   * reader runs). Readers ask for pages ahead only while it waits (keyset paging).
   */
  demand?: ConsumerDemand;
}

/** A raw record as read, before it becomes a `SyncRecord`. */
export type RawRecord = Record<string, unknown>;

/**
 * One unit of progress: records to deliver, and the cursor to commit once every sink has
 * acknowledged them. `batchId` is deterministic for the position the chunk was read from.
 */
export interface Chunk<TCursor> {
  records: RawRecord[];
  cursor: TCursor;
  batchId: string;
  /** API pages this chunk cost. */
  pages: number;
  rejected: RejectedItem[];
  /** Work to do in the same transaction as the checkpoint (e.g. invoice bookkeeping). */
  afterCommit?: Array<(side: SyncSideStore) => Promise<void>>;
  /**
   * `records` is this chunk's own array, read by nothing once the chunk is delivered: the engine
   * empties it then, so the records go even where a suspended generator still holds a stale
   * reference to the chunk (sync/read-ahead.ts, ConsumerDemand). Unset where a reader yields an
   * array again (closed-window.ts delivers a page's items twice when it splits a window).
   */
  recordsReleasable?: true;
}

export interface StreamDefinition<TCursor = unknown, TOptions = Record<string, unknown>> {
  readonly name: StreamName;
  readonly description: string;
  readonly variants: readonly ApiVariant[];
  /** Endpoint whose page-size bound applies to `pageSize` (null: the stream does not page). */
  readonly pagedEndpoint: PagedEndpoint | null;
  readonly optionsSchema: z.ZodType<TOptions>;
  readonly cursorSchema: z.ZodType<TCursor>;
  /** How the stream moves forward, for docs and `status`. */
  readonly cursorKind: 'updatedAt keyset' | 'updatedAt keyset (main), day windows (brokerage)' | 'updatedAt closed windows' | 'createdAt windows' | 'billing-date windows + change feed' | 'snapshot' | 'webhook push';
  /** Fed only by the webhook receiver (src/webhooks): the scheduler and sync passes skip it. */
  readonly pushOnly?: boolean;
  /** What `key` reads, in words (`reference_number`), for docs and `discover`. */
  readonly keyDescription: string;
  key(record: RawRecord): string;
  op(record: RawRecord): RecordOp;
  updatedAt(record: RawRecord): string | null;
  read(env: StreamEnv<TOptions>, cursor: TCursor | undefined, plan: RunPlan, signal: AbortSignal): AsyncIterable<Chunk<TCursor>>;
  /**
   * True when producing a chunk reads state that the previous chunk's commit writes (invoices:
   * the change feed reads the invoice index the billing windows fill). Such a stream is not read
   * ahead; every other stream fetches its next page while the current one is being delivered.
   */
  readonly dependsOnCommits?: boolean;
  /** The cursor that makes the next run start at `at` (minus the lookback); null: no position (snapshots). */
  resetCursor(variant: ApiVariant, at: string): TCursor | null;
}

export type AnyStreamDefinition = StreamDefinition<any, any>;
