import { describe, expect, it } from 'vitest';
import { incrementalPlan, effectiveSafetyLagMs, lateWriteCoverShown, resolveStreams } from '../../src/app/stream-settings.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

/**
 * lateWriteCover (docs/configuration.md): `auto` moves the loads stream's lookback into its
 * safety lag when webhooks are on — load events bring its changes in seconds, so the lookback's
 * second read of every change buys nothing a user sees (issue 14) — and keeps the lookback for
 * every stream that polling alone serves.
 */
function streamsOf(options: { webhooks: boolean; loads?: Record<string, unknown>; defaults?: Record<string, unknown> }) {
  const raw = minimalRaw();
  raw.sync = {
    defaults: { lookback: 'PT10M', safetyLag: 'PT30S', ...(options.defaults ?? {}) },
    streams: { loads: { sinks: ['erp_csv'], ...(options.loads ?? {}) }, customers: { sinks: ['erp_csv'] }, bills: { sinks: ['erp_csv'] } },
  };
  if (options.webhooks) raw.webhooks = { enabled: true, secret: 'webhook-secret-1' };
  const config = parseConfig(raw, { source: 'test', baseDir: '/tmp' });
  return Object.fromEntries(resolveStreams(config).map((s) => [s.definition.name, s]));
}

const covers = (streams: ReturnType<typeof streamsOf>) => Object.fromEntries(Object.entries(streams).map(([name, s]) => [name, s.lagCover]));

describe('lateWriteCover', () => {
  it('auto: the lag covers loads when webhooks are on, the lookback everything else', () => {
    const streams = streamsOf({ webhooks: true });
    expect(covers(streams)).toEqual({ loads: true, customers: false, bills: false });
    expect(incrementalPlan(streams.loads!)).toMatchObject({ lookbackMs: 600_000, safetyLagMs: 30_000, lagCover: true });
    // What reconcile treats as not yet expected from polling.
    expect(effectiveSafetyLagMs(streams.loads!)).toBe(630_000);
    expect(effectiveSafetyLagMs(streams.customers!)).toBe(30_000);
  });

  it('auto without webhooks keeps the lookback everywhere (polling is the only path)', () => {
    expect(covers(streamsOf({ webhooks: false }))).toEqual({ loads: false, customers: false, bills: false });
  });

  it('an explicit setting wins, per stream or for all', () => {
    expect(covers(streamsOf({ webhooks: true, loads: { lateWriteCover: 'lookback' } }))).toEqual({ loads: false, customers: false, bills: false });
    expect(covers(streamsOf({ webhooks: false, defaults: { lateWriteCover: 'lag' } }))).toEqual({ loads: true, customers: true, bills: true });
  });

  it('status shows the cover where it applies, and none for logs, snapshots, push and invoices', () => {
    const streams = streamsOf({ webhooks: true });
    const lag = { ...streams.customers!.settings, lateWriteCover: 'lag' as const };
    expect(lateWriteCoverShown('loads', streams.loads!.settings, true)).toBe('lag');
    expect(lateWriteCoverShown('loads', streams.loads!.settings, false)).toBe('lookback');
    expect(lateWriteCoverShown('customers', streams.customers!.settings, true)).toBe('lookback');
    expect(lateWriteCoverShown('bills', lag, false)).toBe('lag');
    // Set to `lag` or not, these read no range twice in either case: nothing to show.
    for (const name of ['loadAudits', 'webhookEvents', 'chargeCodes', 'invoices', 'events'] as const) {
      expect(lateWriteCoverShown(name, lag, true), name).toBeNull();
    }
  });

  it('refuses another value, naming the key', () => {
    expect(() => streamsOf({ webhooks: false, loads: { lateWriteCover: 'never' } })).toThrow(/sync\.streams\.loads\.lateWriteCover/);
  });
});
