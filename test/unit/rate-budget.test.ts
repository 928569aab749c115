import { describe, expect, it } from 'vitest';
import { RateBudget } from '../../src/api/rate-budget.js';
import { parseRetryAfter, decideRetry } from '../../src/api/retry-policy.js';
import { ApiError } from '../../src/api/errors.js';

describe('RateBudget', () => {
  it('spaces requests at the configured rate without bursting', async () => {
    const budget = new RateBudget({ requestsPerSecond: 40, maxInFlight: 8, adaptive: false });
    const starts: number[] = [];
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 21 }, () => budget.run(async () => void starts.push(Date.now() - t0))));
    // 21 requests at 40/s: the last starts ~500 ms after the first.
    expect(starts.at(-1)!).toBeGreaterThanOrEqual(450);
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(15);
  });

  it('caps requests in flight', async () => {
    const budget = new RateBudget({ requestsPerSecond: 10_000, maxInFlight: 3, adaptive: false });
    let inFlight = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        budget.run(async () => {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setTimeout(r, 10));
          inFlight -= 1;
        }),
      ),
    );
    expect(peak).toBe(3);
  });

  it('drops the rate on 429 and climbs back slowly towards the learned ceiling', () => {
    let now = 0;
    const budget = new RateBudget({ requestsPerSecond: 20, maxInFlight: 4, adaptive: true, now: () => now });
    budget.onRateLimited(undefined);
    const after429 = budget.snapshot();
    expect(after429.currentRate).toBeCloseTo(14, 5);
    expect(after429.ceilingRate).toBeCloseTo(19, 5);
    now += 15_000;
    budget.onSuccess();
    expect(budget.snapshot().currentRate).toBeGreaterThan(14);
    expect(budget.snapshot().currentRate).toBeLessThan(19);
    now += 60_000;
    budget.onSuccess();
    expect(budget.snapshot().currentRate).toBeCloseTo(19, 0);
  });

  it('pauses every caller for Retry-After', async () => {
    const budget = new RateBudget({ requestsPerSecond: 1000, maxInFlight: 4, adaptive: false });
    budget.onRateLimited(300);
    const t0 = Date.now();
    await budget.run(async () => undefined);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
  });
});

describe('retry policy', () => {
  it('parses Retry-After as seconds or an HTTP date relative to the server clock', () => {
    const serverNow = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', serverNow)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', serverNow)).toBe(5000);
    expect(parseRetryAfter('garbage', serverNow)).toBeUndefined();
    expect(parseRetryAfter(undefined, serverNow)).toBeUndefined();
  });

  it('full jitter stays within [0, min(cap, base·2^(n-1))]', () => {
    const options = { maxAttempts: 5, maxElapsedMs: 1000, baseDelayMs: 100, maxDelayMs: 1000 };
    const error = new ApiError({ status: 503, endpoint: { method: 'GET', route: '/loads' }, serverMessage: 'busy' });
    const delay = (attempt: number, random: () => number) => decideRetry(error, attempt, true, options, random);
    expect(delay(1, () => 1)).toEqual({ retry: true, delayMs: 100, reason: 'HTTP 503' });
    expect(delay(4, () => 1)).toMatchObject({ delayMs: 800 });
    expect(delay(10, () => 1)).toMatchObject({ delayMs: 1000 });
    expect(delay(3, () => 0)).toMatchObject({ delayMs: 0 });
  });

  it('does not retry 4xx other than 429', () => {
    const options = { maxAttempts: 5, maxElapsedMs: 1000, baseDelayMs: 100, maxDelayMs: 1000 };
    const error = new ApiError({ status: 400, endpoint: { method: 'GET', route: '/loads' }, serverMessage: 'limit must be <= 50' });
    expect(decideRetry(error, 1, true, options)).toEqual({ retry: false });
    const throttled = new ApiError({ status: 429, endpoint: { method: 'POST', route: '/loads' }, serverMessage: 'x', retryAfterMs: 2000 });
    expect(decideRetry(throttled, 1, false, options)).toMatchObject({ retry: true, delayMs: 2000 });
  });
});
