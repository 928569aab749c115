import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { collectTruth } from '../helpers/pull-harness.js';

/**
 * The mutator's late writes (option `mutator.lateWrites`): a share of load updates carry an
 * updatedAt before the server's now — what a pull's lookback must catch — but never before the
 * load's previous updatedAt; without the option every update is stamped now.
 */
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function updatedAtByRef(handle: SimulatorHandle): Promise<Map<string, number>> {
  return new Map((await collectTruth(handle, 'loads')).map((r) => [String(r.reference_number), Date.parse(String(r.updatedAt))]));
}

async function changedAfterSteps(lateWrites?: { share: number; maxLateMs: number }) {
  sim = await startSimulator({ variant: 'main', seed: 5, loads: 400, mutator: { enabled: false, intervalMs: 1_000, perTick: 1, ...(lateWrites ? { lateWrites } : {}) } });
  const before = await updatedAtByRef(sim);
  const startedAt = sim.now().getTime();
  await sim.mutate(200);
  const endedAt = sim.now().getTime();
  const after = await updatedAtByRef(sim);
  const changed = [...after].filter(([ref, t]) => before.has(ref) && before.get(ref) !== t).map(([ref, t]) => ({ ref, previous: before.get(ref)!, t }));
  return { changed, startedAt, endedAt };
}

describe('simulator: writes that become visible late', () => {
  it('stamps the configured share of load updates up to maxLateMs before now, never before the previous updatedAt', async () => {
    const { changed, startedAt, endedAt } = await changedAfterSteps({ share: 1, maxLateMs: 60_000 });
    expect(changed.length).toBeGreaterThan(20);
    for (const c of changed) {
      expect(c.t).toBeGreaterThan(c.previous);
      expect(c.t).toBeLessThanOrEqual(endedAt);
      expect(c.t).toBeGreaterThanOrEqual(startedAt - 60_001);
    }
    expect(sim!.stats().lateWrites).toBeGreaterThanOrEqual(changed.filter((c) => c.t < startedAt).length);
    // Most are late by seconds (the dataset's updatedAts lie far enough in the past not to cap them).
    expect(changed.filter((c) => c.t < startedAt - 1_000).length).toBeGreaterThan(changed.length / 2);
  });

  it('without the option every update is stamped now', async () => {
    const { changed, startedAt, endedAt } = await changedAfterSteps();
    expect(sim!.stats().lateWrites).toBe(0);
    expect(changed.length).toBeGreaterThan(20);
    for (const c of changed) {
      expect(c.t).toBeGreaterThanOrEqual(startedAt);
      expect(c.t).toBeLessThanOrEqual(endedAt);
    }
  });
});
