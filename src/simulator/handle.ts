import type { PricingAction, PricingList } from './pricing-book.js';
import type { ConfigurePatch, SimulatorOptions } from './options.js';
import type { SimulatorStats } from './stats.js';
import type { TruthResource } from './truth.js';
import type { DocumentTruth } from './documents.js';
import type { EventTiming } from './events.js';

export interface SimulatorHandle {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseUrl: string;
  /** e.g. http://127.0.0.1:PORT/__admin */
  readonly adminUrl: string;
  readonly options: SimulatorOptions;
  /** Server clock (real time + clockOffsetMs + every advance so far). */
  now(): Date;
  /**
   * Moves the server clock `ms` forward (whole ms ≥ 0) and returns the new server time. What was
   * stamped before looks `ms` older: use it instead of sleeping out a client's safety lag.
   * Local timers (mutator ticks, webhook retries, the rate limiter) are not affected.
   */
  advance(ms: number): Date;
  /** Resolves once the webhook sender has nothing queued or in flight (delivered or given up). */
  webhooksIdle(): Promise<void>;
  stats(): SimulatorStats;
  resetStats(): void;
  /** Change knobs at run time. */
  configure(patch: ConfigurePatch): void;
  /** Runs `count` mutator steps now (deterministic tests). */
  mutate(count: number): Promise<void>;
  /**
   * A load update that becomes visible `lateMs` after the updatedAt it carries (a long transaction
   * committing late, a read replica lagging): its updatedAt is the server time `lateMs` ago, so a
   * client that already read past that instant finds it only by reading back (its `lookback`).
   * Never stamped before the load's previous updatedAt.
   * Emits the update's events like any other change. Returns the load as stored.
   */
  updateLoadLate(referenceNumber: string, changes: Record<string, unknown>, lateMs: number): Record<string, unknown>;
  /**
   * One edit of the reference data (customer discounts, rates, dynamic rules): adds an entry, or
   * changes or removes the entry at `index` (default 0). Returns the `_id` it touched.
   */
  editPricing(list: PricingList, action: PricingAction, index?: number): string | undefined;
  /**
   * Simulator-only timing of every event so far, by event `_id` (as in `truth('webhookEvents')`):
   * when its change happened and when its delivery was sent and answered 200. Not part of the API.
   */
  eventTimings(): Array<{ _id: number } & EventTiming>;
  /** Every current record, incl. deleted loads, streamed. */
  truth(resource: TruthResource): AsyncIterable<Record<string, unknown>>;
  /** Origin of the document storage (`http://127.0.0.1:PORT`): document URLs point there, not at the API. */
  readonly documentsOrigin: string;
  /**
   * A TMS user adds a document to a live load: `documents` gains `{ type, url }`, the file is
   * served at `url` (deterministic bytes, `bytes` long), and the document's event is sent
   * (`Proof of Delivery` → `document#pod_added`, `Bill of Lading` → `document#bo_added`).
   */
  addDocument(referenceNumber: string, type: string, options?: { bytes?: number; fileName?: string }): DocumentTruth;
  /** A TMS user removes a document: it leaves the load's `documents` (updatedAt moves) and its URL answers 404. */
  removeDocument(referenceNumber: string, url: string): void;
  /** The next `count` document downloads answer 503. */
  failDocumentDownloads(count: number): void;
  /** Every document ever added, with the sha256 of its bytes (removed ones flagged). */
  documents(): DocumentTruth[];
  /** Simulates a refresh token revoked out of band. */
  revokeRefreshTokens(): void;
  close(): Promise<void>;
}
