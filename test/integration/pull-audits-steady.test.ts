import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

/**
 * Steady state of the audit logs (issue 14, deliverable 6), main: with the mutator changing the
 * account over five-minute intervals of server time, each incremental pass of `loadAudits` and
 * `customerAudits` costs at most the minimum, ceil(new audit records / 50) + 1 requests to its
 * endpoint. Before, every pass re-read the lookback (PT10M) — the previous two intervals' records
 * again — so a busy pass cost about twice its minimum. Counted by the simulator per route; the
 * logs end up complete in the sink.
 */
const PAGE = 50;
const STREAMS = [
  { stream: 'loadAudits', resource: 'loadAudits', route: '/audit/load', table: 'load_audits' },
  { stream: 'customerAudits', resource: 'customerAudits', route: '/audit/customer', table: 'customer_audits' },
] as const;

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function routeRequests(handle: SimulatorHandle, route: string): number {
  return Object.values(handle.stats().byRoute[`GET ${route}`] ?? {}).reduce((a, b) => a + b, 0);
}

describe('pull: audit logs steady state (main)', () => {
  it('an incremental pass costs at most ceil(new records / 50) + 1 requests per audit endpoint', async () => {
    sim = await startSim({ variant: 'main', loads: 2_000, seed: 43 });
    const dir = tempDir('audits-steady');
    // The product's defaults for the window settings (the harness shortens them for other tests).
    const config = pullConfig({ sim, dir, streams: STREAMS.map((s) => s.stream), streamSettings: { lookback: 'PT10M', maxWindow: 'P7D', minWindow: 'PT1M' } });
    await syncOnce(config, dir);
    ageChangesPastSafetyLag(sim);
    await syncOnce(config, dir);

    const known = new Map<string, Set<string>>();
    for (const { resource } of STREAMS) known.set(resource, new Set((await collectTruth(sim, resource)).map((r) => String(r._id))));
    const exceeded: string[] = [];
    let busiest = 0;
    for (let interval = 0; interval < 3; interval += 1) {
      // 60 mutator steps over five minutes of server time (a schedule interval).
      for (let tick = 0; tick < 20; tick += 1) {
        await sim.mutate(3);
        sim.advance(15_000);
      }
      ageChangesPastSafetyLag(sim);
      const fresh = new Map<string, number>();
      for (const { resource } of STREAMS) {
        const ids = (await collectTruth(sim, resource)).map((r) => String(r._id));
        fresh.set(resource, ids.filter((id) => !known.get(resource)!.has(id)).length);
        known.set(resource, new Set(ids));
      }
      sim.resetStats();
      const runs = await syncOnce(config, dir);
      for (const run of runs) expect(run.status, run.error ?? '').toBe('ok');
      for (const { resource, route } of STREAMS) {
        const requests = routeRequests(sim, route);
        const minimum = Math.ceil(fresh.get(resource)! / PAGE) + 1;
        busiest = Math.max(busiest, fresh.get(resource)!);
        console.info(`[${resource}] interval ${interval + 1}: ${fresh.get(resource)} new records, ${requests} requests, minimum ${minimum}`);
        if (requests > minimum) exceeded.push(`${resource} interval ${interval + 1}: ${requests} requests > minimum ${minimum}`);
      }
    }
    // The scenario must be busy enough for a lookback re-read to cost a page.
    expect(busiest).toBeGreaterThan(PAGE);
    expect(exceeded).toEqual([]);

    for (const { resource, table } of STREAMS) {
      const truth = await collectTruth(sim, resource);
      const latest = latestByKey(readCsvRows(path.join(dir, 'out'), table));
      const result = compareWithTruth(truth, latest, (r) => String(r._id), () => false);
      expect({ resource, missing: result.missing.slice(0, 5), phantom: result.phantom.slice(0, 5) }).toEqual({ resource, missing: [], phantom: [] });
    }
  }, 120_000);
});
