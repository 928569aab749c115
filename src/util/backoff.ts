/**
 * The one exponential backoff of the project (API retries, outbox retries, webhook inbox retries,
 * invoice gap-fill postponement, SFTP reconnects). Each caller keeps its own bounds; only the
 * formula lives here, so a fix to it (overflow, rounding, jitter) reaches every retry loop.
 */
export interface BackoffBounds {
  /**
   * Failures already waited for, counting from 0: the wait before the first retry is attempt 0
   * and its ceiling is `baseMs`. Callers that count attempts from 1 pass `attempts - 1`.
   */
  attempt: number;
  baseMs: number;
  /** Cap on the ceiling, whatever the attempt. */
  maxMs: number;
}

export interface BackoffOptions extends BackoffBounds {
  /** Uniform in [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
}

/** The deterministic bound: min(maxMs, baseMs · 2^attempt). For waits that need no jitter. */
export function backoffCeiling({ attempt, baseMs, maxMs }: BackoffBounds): number {
  // 2 ** 1100 is Infinity, and Math.min takes care of it; a negative attempt is the first one.
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt));
}

/**
 * AWS "full jitter": uniform in [0, ceiling]. Spreading the whole range (not just a band near the
 * ceiling) keeps many processes that failed together (a server restart, a 503 burst) from
 * retrying in lockstep.
 */
export function backoffDelay({ random = Math.random, ...bounds }: BackoffOptions): number {
  return Math.round(random() * backoffCeiling(bounds));
}
