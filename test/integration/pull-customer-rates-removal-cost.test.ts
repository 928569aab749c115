import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { collectTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

/**
 * The customer rates list (no `count`, offset pages) read whole each pass (issue 14, deliverable
 * 6): a pass in which a rate was removed costs the pages of one read — the read proves itself by
 * overlapping its pages by one entry (src/sync/strategies/overlapped-list.ts) — and still delivers
 * the tombstone. Before, a read that missed a known rate was read again whole to confirm the
 * removal: 6 requests for ~120 rates where 3 do. Counted by the simulator.
 */
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const rateRequests = (handle: SimulatorHandle) => Object.values(handle.stats().byRoute['GET /customer-rates'] ?? {}).reduce((a, b) => a + b, 0);

describe.each(['main', 'brokerage'] as const)('pull: customerRates removal cost (%s)', (variant) => {
  it('a pass that removes a rate costs one read of the list and delivers its tombstone', async () => {
    sim = await startSim({ variant, loads: 200, seed: 44 });
    const dir = tempDir(`customer-rates-removal-${variant}`);
    const config = pullConfig({ sim, dir, streams: ['customerRates'] });
    await syncOnce(config, dir);

    const removed = sim.editPricing('rates', 'remove', 7);
    expect(removed).toBeDefined();
    const live = (await collectTruth(sim, 'customerRates')).filter((r) => r.isDeleted !== true).length;
    expect(live).toBeGreaterThan(50);
    sim.resetStats();
    const [run] = await syncOnce(config, dir);
    expect(run!.status, run!.error ?? '').toBe('ok');
    // The pages of one read of `live` rates, 50 a page: a short page ends the list.
    expect(rateRequests(sim)).toBe(Math.floor(live / 50) + 1);

    const rows = latestByKey(readCsvRows(path.join(dir, 'out'), 'customer_rates'));
    expect(rows.get(removed!)?._op).toBe('delete');
    expect([...rows.values()].filter((r) => r._op !== 'delete')).toHaveLength(live);
  }, 60_000);
});
