import { backoffDelay } from '../util/backoff.js';
import { ApiError, ApiNetworkError, ApiResponseError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Give up when the next wait would end after this much time since the first attempt. */
  maxElapsedMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 8,
  maxElapsedMs: 10 * 60_000,
  baseDelayMs: 500,
  maxDelayMs: 60_000,
};

/** HTTP statuses that mean "try again later" (spec §7). */
const RETRYABLE_STATUSES = new Set([500, 502, 503, 504]);

export type RetryDecision = { retry: false } | { retry: true; delayMs: number; reason: string };

/**
 * Decides whether a failed attempt is retried and after how long.
 * - 429: always retryable (the request was refused, not processed); waits `Retry-After` when
 *   given, else the backoff.
 * - 500/502/503/504, resets, drops, timeouts, truncated or non-JSON bodies: retryable only when
 *   the request is idempotent; full-jitter exponential backoff.
 * - A non-idempotent request (POST /loads) is retried only when it certainly did not reach the
 *   server (connection refused) or was refused with 429: anything else is ambiguous and goes
 *   back to the caller, which reconciles (outbound looks the load up before re-sending).
 */
export function decideRetry(
  error: unknown,
  attempt: number,
  idempotent: boolean,
  options: RetryOptions,
  random: () => number = Math.random,
): RetryDecision {
  // `attempt` counts from 1 here, so the first retry waits at most baseDelayMs.
  const backoff = () => backoffDelay({ attempt: attempt - 1, baseMs: options.baseDelayMs, maxMs: options.maxDelayMs, random });
  if (error instanceof ApiError) {
    if (error.status === 429) {
      const delayMs = error.retryAfterMs !== undefined ? Math.min(error.retryAfterMs, options.maxDelayMs * 2) : backoff();
      return { retry: true, delayMs, reason: 'HTTP 429' };
    }
    if (RETRYABLE_STATUSES.has(error.status) && idempotent) {
      return { retry: true, delayMs: backoff(), reason: `HTTP ${error.status}` };
    }
    return { retry: false };
  }
  if (error instanceof ApiNetworkError) {
    if (idempotent || !error.mayHaveBeenProcessed) {
      return { retry: true, delayMs: backoff(), reason: error.networkCode ?? 'network error' };
    }
    return { retry: false };
  }
  if (error instanceof ApiResponseError) {
    if (error.retryable && idempotent) return { retry: true, delayMs: backoff(), reason: 'unusable response body' };
    return { retry: false };
  }
  return { retry: false };
}

/** `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined | null, serverNowMs: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - serverNowMs);
}
