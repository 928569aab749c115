import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay } from '../../src/util/backoff.js';

describe('backoff', () => {
  const bounds = { baseMs: 100, maxMs: 1000 };

  it('doubles the ceiling per attempt from baseMs at attempt 0, capped at maxMs', () => {
    expect(backoffCeiling({ ...bounds, attempt: 0 })).toBe(100);
    expect(backoffCeiling({ ...bounds, attempt: 3 })).toBe(800);
    expect(backoffCeiling({ ...bounds, attempt: 4 })).toBe(1000);
    expect(backoffCeiling({ ...bounds, attempt: 5000 })).toBe(1000);
    expect(backoffCeiling({ ...bounds, attempt: -1 })).toBe(100);
  });

  it('full jitter spans [0, ceiling] with the injected randomness', () => {
    expect(backoffDelay({ ...bounds, attempt: 3, random: () => 0 })).toBe(0);
    expect(backoffDelay({ ...bounds, attempt: 3, random: () => 0.5 })).toBe(400);
    expect(backoffDelay({ ...bounds, attempt: 3, random: () => 1 })).toBe(800);
    expect(backoffDelay({ ...bounds, attempt: 50, random: () => 1 })).toBe(1000);
  });

  it('stays within the ceiling with real randomness', () => {
    for (let i = 0; i < 200; i += 1) {
      const delay = backoffDelay({ ...bounds, attempt: 2 });
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(400);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });
});
