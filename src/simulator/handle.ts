import type { PricingAction, PricingList } from './pricing-book.js';
import type { ConfigurePatch, SimulatorOptions } from './options.js';
import type { SimulatorStats } from './stats.js';
import type { TruthResource } from './truth.js';

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
   * One edit of the reference data (customer discounts, rates, dynamic rules): adds an entry, or
   * changes or removes the entry at `index` (default 0). Returns the `_id` it touched.
   */
  editPricing(list: PricingList, action: PricingAction, index?: number): string | undefined;
  /** Every current record, incl. deleted loads, streamed. */
  truth(resource: TruthResource): AsyncIterable<Record<string, unknown>>;
  /** Simulates a refresh token revoked out of band. */
  revokeRefreshTokens(): void;
  close(): Promise<void>;
}
