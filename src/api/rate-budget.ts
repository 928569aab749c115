import pLimit, { type LimitFunction } from 'p-limit';
import { sleep } from '../util/abort.js';

export interface RateBudgetOptions {
  /** Ceiling of requests started per second. */
  requestsPerSecond: number;
  /** Requests in flight at once. */
  maxInFlight: number;
  /** Lower the rate when the server answers 429 and recover slowly afterwards. */
  adaptive: boolean;
  now?: () => number;
}

export interface RateBudgetSnapshot {
  currentRate: number;
  ceilingRate: number;
  inFlight: number;
  queued: number;
  waitedMs: number;
}

/**
 * The client-side request budget shared by everything that talks to the API (pull streams,
 * outbound dispatcher, webhook refreshes): a token bucket for requests per second (burst 1, so
 * requests are spaced evenly instead of bunched) and a p-limit cap on requests in flight.
 *
 * Adaptation: a 429 means the real limit is below the current rate. The rate drops to 70 % of
 * it, the estimated server ceiling is remembered as 95 % of the rate that failed, and the rate
 * climbs back linearly towards that ceiling over ~30 s, then creeps above it very slowly
 * (1 % per 10 s) in case the limit was raised. A long run therefore rides just under the limit.
 * A `Retry-After` pauses every caller until it has passed.
 */
export class RateBudget {
  private readonly limit: LimitFunction;
  private readonly now: () => number;
  private readonly configuredRate: number;
  private rate: number;
  private ceiling: number;
  private nextSlotAt = 0;
  private pausedUntil = 0;
  private lastAdjustAt: number;
  private waitedTotalMs = 0;

  constructor(private readonly options: RateBudgetOptions) {
    if (!(options.requestsPerSecond > 0)) throw new RangeError('requestsPerSecond must be > 0');
    this.limit = pLimit(Math.max(1, Math.floor(options.maxInFlight)));
    this.now = options.now ?? Date.now;
    this.configuredRate = options.requestsPerSecond;
    this.rate = options.requestsPerSecond;
    this.ceiling = options.requestsPerSecond;
    this.lastAdjustAt = this.now();
  }

  /** Runs `task` once a slot is free and the rate allows; the task is one HTTP attempt. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.limit(async () => {
      await this.awaitTurn(signal);
      return task();
    });
  }

  /** The server said 429; `retryAfterMs` pauses everyone when given. */
  onRateLimited(retryAfterMs: number | undefined): void {
    const now = this.now();
    if (retryAfterMs !== undefined && retryAfterMs > 0) {
      this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
    }
    if (!this.options.adaptive) return;
    this.recover(now);
    this.ceiling = Math.max(0.1, this.rate * 0.95);
    this.rate = Math.max(0.1, this.rate * 0.7);
    this.lastAdjustAt = now;
  }

  /** A request completed without 429: let the rate climb back. */
  onSuccess(): void {
    if (!this.options.adaptive) return;
    this.recover(this.now());
  }

  snapshot(): RateBudgetSnapshot {
    return {
      currentRate: this.rate,
      ceilingRate: this.ceiling,
      inFlight: this.limit.activeCount,
      queued: this.limit.pendingCount,
      waitedMs: this.waitedTotalMs,
    };
  }

  private recover(now: number): void {
    const elapsedS = (now - this.lastAdjustAt) / 1000;
    if (elapsedS <= 0) return;
    this.lastAdjustAt = now;
    if (this.rate < this.ceiling) {
      // 1 % of the ceiling per second: from 70 % back to the ceiling in about 30 s.
      this.rate = Math.min(this.ceiling, this.rate + this.ceiling * 0.01 * elapsedS);
    } else if (this.rate < this.configuredRate) {
      // Above the last known ceiling, probe very gently: 1 % per 10 s.
      this.rate = Math.min(this.configuredRate, this.rate * (1 + 0.001 * elapsedS));
      this.ceiling = this.rate;
    }
  }

  private async awaitTurn(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now();
      const interval = 1000 / this.rate;
      const startAt = Math.max(this.nextSlotAt, this.pausedUntil, now);
      if (startAt <= now) {
        // GCRA: the slot after this one is one interval later. A waiter woken a little late by
        // the timer does not push the schedule back (no drift), and idle time banks at most a
        // tenth of an interval (no bursts after a pause).
        this.nextSlotAt = Math.max(this.nextSlotAt, now - interval * 0.1) + interval;
        return;
      }
      const wait = startAt - now;
      this.waitedTotalMs += wait;
      await sleep(wait, signal);
    }
  }
}
