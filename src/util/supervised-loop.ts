import { isAbortError, sleep } from './abort.js';
import { backoffCeiling } from './backoff.js';
import { FreightSyncError, describeError } from './errors.js';
import type { Logger } from './logger.js';

/** A service loop failed too often in a row: the runner stops the daemon and `run` exits 1. */
export class LoopDiedError extends FreightSyncError {
  readonly loop: string;
  constructor(loop: string, failures: number, cause: unknown) {
    super('LOOP_DIED', `${loop} stopped after ${failures} failures in a row: ${describeError(cause)}`, { cause });
    this.loop = loop;
  }
}

export function isLoopDiedError(error: unknown): error is LoopDiedError {
  return error instanceof LoopDiedError;
}

/**
 * Counts consecutive failures of one loop (pg-boss style: a loop survives an error, logs it with
 * context and goes on after a pause) and decides when surviving is no longer safe: after
 * `maxConsecutive` failures in a row the loop must end with `LoopDiedError`, so the runner notices
 * instead of the loop retrying a broken state database forever in silence.
 */
export class FailureBudget {
  private failures = 0;
  private lastError: unknown;

  constructor(
    readonly loop: string,
    private readonly options: { maxConsecutive: number; baseDelayMs: number; maxDelayMs: number },
  ) {}

  succeeded(): void {
    this.failures = 0;
  }

  /** Records a failure; throws `LoopDiedError` when the budget is spent, else returns the pause before the next try. */
  failed(error: unknown): number {
    this.failures += 1;
    this.lastError = error;
    if (this.failures >= this.options.maxConsecutive) throw new LoopDiedError(this.loop, this.failures, error);
    // Deterministic (no jitter): one loop pausing, not many clients competing for a server.
    return backoffCeiling({ attempt: this.failures - 1, baseMs: this.options.baseDelayMs, maxMs: this.options.maxDelayMs });
  }

  get consecutive(): number {
    return this.failures;
  }

  get exhausted(): LoopDiedError | undefined {
    return this.failures >= this.options.maxConsecutive ? new LoopDiedError(this.loop, this.failures, this.lastError) : undefined;
  }
}

export interface SupervisedLoopOptions {
  /** Named in logs and in the error when the loop dies (`outbound poll`, `webhook processor`). */
  name: string;
  logger: Logger;
  /** Ends the loop between iterations (and interrupts its pauses). */
  signal: AbortSignal;
  /** Failures in a row before the loop gives up (default 8, about 4 minutes with the default pauses). */
  maxConsecutiveFailures?: number;
  /** Pause after the first failure, doubling up to `maxDelayMs` (defaults 1 s and 60 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `iteration` until `signal` aborts. An iteration that throws is logged and retried after a
 * growing pause; too many failures in a row reject the returned promise with `LoopDiedError`.
 * An abort error while the signal is aborted ends the loop normally.
 */
export async function runSupervisedLoop(options: SupervisedLoopOptions, iteration: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const budget = new FailureBudget(options.name, {
    maxConsecutive: options.maxConsecutiveFailures ?? 8,
    baseDelayMs: options.baseDelayMs ?? 1_000,
    maxDelayMs: options.maxDelayMs ?? 60_000,
  });
  while (!options.signal.aborted) {
    try {
      await iteration(options.signal);
      budget.succeeded();
    } catch (error) {
      if (options.signal.aborted && isAbortError(error)) return;
      const pause = budget.failed(error);
      options.logger.error({ err: error, loop: options.name, failures: budget.consecutive }, `${options.name} failed; trying again in ${pause} ms`);
      await sleep(pause, options.signal).catch(() => undefined);
    }
  }
}
