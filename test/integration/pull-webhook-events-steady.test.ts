import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

/**
 * Steady state of the `webhookEvents` stream (issue 14, deliverable 6), both variants: with the
 * mutator changing loads between passes, each incremental pass costs at most the minimum
 * (Σ ceil(new events / 50) + 1) plus one request — the +1 being the clock read of a fresh process.
 * Before the fix a pass re-read the lookback and split or re-read dense windows: 50–90 requests
 * where 1–12 would do. A count bound, not a timing one; the log ends up complete in the sink.
 */
const PAGE = 50;

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe.each(['main', 'brokerage'] as const)('pull: webhookEvents steady state (%s)', (variant) => {
  it('an incremental pass costs at most the minimum plus one request', async () => {
    sim = await startSim({ variant, loads: 2_000, seed: variant === 'main' ? 41 : 42 });
    const dir = tempDir(`webhook-events-steady-${variant}`);
    // The product's defaults for the window settings (the harness shortens them for other tests).
    const config = pullConfig({ sim, dir, streams: ['webhookEvents'], streamSettings: { lookback: 'PT10M', maxWindow: 'P7D', minWindow: 'PT1M' } });

    // A busy start: the timer mutator writes bursts while the first pass reads.
    sim.configure({ mutator: { enabled: true, intervalMs: 20, perTick: 10 } });
    await syncOnce(config, dir);
    sim.configure({ mutator: { enabled: false, intervalMs: 20, perTick: 10 } });
    ageChangesPastSafetyLag(sim);
    await syncOnce(config, dir);

    let known = new Set((await collectTruth(sim, 'webhookEvents')).map((e) => String(e._id)));
    for (const perTick of [0, 1, 3, 8]) {
      // Activity spread over a minute of server time, as in a working day.
      for (let tick = 0; tick < 20; tick += 1) {
        if (perTick > 0) await sim.mutate(perTick);
        sim.advance(3_000);
      }
      ageChangesPastSafetyLag(sim);
      const events = await collectTruth(sim, 'webhookEvents');
      const fresh = events.filter((e) => !known.has(String(e._id))).length;
      known = new Set(events.map((e) => String(e._id)));
      const minimum = Math.ceil(fresh / PAGE) + 1;
      sim.resetStats();
      const [run] = await syncOnce(config, dir);
      expect(run!.status, run!.error ?? '').toBe('ok');
      const routes = sim.stats().byRoute;
      console.info(`[webhookEvents ${variant}] ${fresh} new events: ${run!.requests} requests (${JSON.stringify(routes)}), minimum ${minimum}`);
      expect(run!.requests).toBeLessThanOrEqual(minimum + 1);
    }

    const truth = await collectTruth(sim, 'webhookEvents');
    const latest = latestByKey(readCsvRows(path.join(dir, 'out'), 'webhook_events'));
    const result = compareWithTruth(truth, latest, (e) => String(e._id), () => false);
    expect({ missing: result.missing.slice(0, 5), stale: result.stale.slice(0, 5), phantom: result.phantom.slice(0, 5) }).toEqual({ missing: [], stale: [], phantom: [] });
  }, 120_000);
});
