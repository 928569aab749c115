import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { SimOptions } from '../helpers/pull-harness.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

/**
 * The acceptance scenario of the pull engine: the simulator's mutator changes records every
 * 100 ms while a backfill pages through 20,000 loads; after it stops, one `sync`. The CSV drop,
 * read as latest-version-per-key, must equal the server's truth: 0 missing, 0 stale, deletes as
 * tombstones — also with clock skew, faults and short-lived tokens, and on brokerage.
 */
const LOADS = Number(process.env.PULL_SCENARIO_LOADS ?? 20_000);

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function scenario(options: SimOptions) {
  sim = await startSim({ loads: LOADS, seed: 11, mutator: { enabled: true, intervalMs: 100, perTick: 5 }, ...options });
  const dir = tempDir(`pull-${options.variant}`);
  const config = pullConfig({ sim, dir, streams: ['loads'] });
  // `backfill` over the whole history while the mutator runs, then one incremental `sync`.
  const backfill = await syncOnce(config, dir, { backfill: { from: sim.options.dataStart, to: new Date(sim.now().getTime() + 60_000).toISOString() } });
  expect(backfill[0]!.status, backfill[0]!.error ?? '').toBe('ok');
  sim.configure({ mutator: { enabled: false, intervalMs: 100, perTick: 5 } });
  // The last changes must fall behind the final pass's window end (server clock − safety lag,
  // read from a Date header of 1 s resolution): move the server clock instead of sleeping.
  ageChangesPastSafetyLag(sim);
  const final = await syncOnce(config, dir);
  expect(final[0]!.status, final[0]!.error ?? '').toBe('ok');
  const truth = await collectTruth(sim, 'loads');
  const latest = latestByKey(readCsvRows(path.join(dir, 'out'), 'loads'));
  const cmp = compareWithTruth(truth, latest, (r) => String(r.reference_number));
  const deleted = truth.filter((r) => r.isDeleted === true).length;
  return { cmp, deleted, stats: sim.stats(), first: backfill[0]!, final: final[0]! };
}

describe('pull: 20,000 loads while the server mutates them', () => {
  it('main: equals the truth (0 missing, 0 stale, tombstones)', async () => {
    const { cmp, deleted } = await scenario({ variant: 'main' });
    expect(deleted).toBeGreaterThan(0);
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length, phantom: cmp.phantom.length }).toEqual({
      missing: 0,
      stale: 0,
      wrongOp: 0,
      phantom: 0,
    });
  });

  it('main with the clock +2 min, 10% faults and 3-second tokens', async () => {
    const { cmp, stats } = await scenario({
      variant: 'main',
      clockOffsetMs: 120_000,
      faults: { rate: 0.1, kinds: ['500', '502', '503', 'html', 'drop', 'truncated'], slowMs: 100 },
      accessTokenTtlMs: 3000,
    });
    expect(stats.tokensIssued).toBeGreaterThan(1);
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length }).toEqual({ missing: 0, stale: 0, wrongOp: 0 });
  });

  it('main with the clock -2 min', async () => {
    const { cmp } = await scenario({ variant: 'main', clockOffsetMs: -120_000 });
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length }).toEqual({ missing: 0, stale: 0, wrongOp: 0 });
  });

  it('brokerage (day windows, rotating refresh tokens) with faults', async () => {
    const { cmp } = await scenario({
      variant: 'brokerage',
      faults: { rate: 0.1, kinds: ['500', '502', '503', 'html', 'drop', 'truncated'], slowMs: 100 },
      accessTokenTtlMs: 3000,
    });
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length }).toEqual({ missing: 0, stale: 0, wrongOp: 0 });
  });
});
