import { describe, expect, it } from 'vitest';
import { backfillBound } from '../../src/cli/commands/backfill.js';
import { createProgressReporter, formatEta } from '../../src/cli/progress.js';
import { capturingLogger } from '../helpers/log-capture.js';

describe('backfill bounds and progress', () => {
  it('accepts dates, datetimes and "now"; refuses anything else naming the flag', () => {
    expect(backfillBound('--from', '2025-01-02')).toBe('2025-01-02T00:00:00.000Z');
    expect(backfillBound('--to', 'NOW', () => new Date('2026-03-04T05:06:07Z'))).toBe('2026-03-04T05:06:07.000Z');
    expect(() => backfillBound('--to', 'tomorrow')).toThrow(/--to: expected an ISO 8601 date or datetime \(or "now"\), got "tomorrow"/);
  });

  it('formats an ETA', () => {
    expect(formatEta(45_000)).toBe('45s');
    expect(formatEta(750_000)).toBe('12m 30s');
    expect(formatEta(7_500_000)).toBe('2h 05m');
  });

  it('measures the share of the range against the server clock when --to is in the future, with a rate, and ends at 100%', async () => {
    const capture = capturingLogger('info');
    const progress = createProgressReporter(
      { from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z' },
      capture.logger,
      { everyMs: 0, now: () => new Date('2026-01-11T00:00:00Z') },
    );
    progress.onProgress({ stream: 'loads', records: 500, pages: 10, position: '2026-01-06T00:00:00Z' });
    progress.finish([{ stream: 'loads', status: 'ok', delivered: 900, upserts: 900, deletes: 0, unchanged: 0, rejected: 0, pages: 18, requests: 19, durationMs: 1, error: null }]);
    // The capture stream takes each line after the previous one's callback (next tick).
    await new Promise((resolve) => setImmediate(resolve));
    const text = capture.text();
    // Half of [Jan 1, server now = Jan 11], not 1.4% of [Jan 1, Dec 31].
    expect(text).toMatch(/"percent":50/);
    expect(text).toMatch(/"recordsPerSecond":\d+/);
    expect(text).toMatch(/"eta":"/);
    expect(text).toMatch(/backfill of stream finished/);
    expect(text).toMatch(/"percent":100/);
  });
});
