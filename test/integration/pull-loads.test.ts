import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';
import { stagedPageCount } from '../helpers/staged-pages.js';

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('pull: loads into CSV', () => {
  it('a quiet backfill then sync delivers every load exactly as the server has it', async () => {
    sim = await startSim({ variant: 'main', loads: 1500, seed: 7 });
    const dir = tempDir('pull-quiet');
    const config = pullConfig({ sim, dir, streams: ['loads'] });
    const first = await syncOnce(config, dir);
    expect(first[0]).toMatchObject({ stream: 'loads', status: 'ok' });
    const truth = await collectTruth(sim, 'loads');
    const latest = latestByKey(readCsvRows(path.join(dir, 'out'), 'loads'));
    const cmp = compareWithTruth(truth, latest, (r) => String(r.reference_number));
    expect(cmp).toMatchObject({ missing: [], stale: [], wrongOp: [], phantom: [] });
    expect(first[0]!.delivered).toBe(truth.length);

    // A second pass re-reads only the lookback overlap and delivers nothing unchanged.
    const second = await syncOnce(config, dir);
    expect(second[0]).toMatchObject({ status: 'ok', delivered: 0 });
  });

  it('a run interrupted mid-range is finished AND caught up to now by the next single run', async () => {
    sim = await startSim({ variant: 'main', loads: 4000, seed: 8, pageDelayMs: 5 });
    const dir = tempDir('pull-interrupted');
    const config = pullConfig({ sim, dir, streams: ['loads'] });
    const controller = new AbortController();
    let counting = false;
    const watcher = setInterval(() => {
      if (counting) return;
      counting = true;
      // Acknowledged pages wait in the staging folder until the run ends (published at the next start).
      void stagedPageCount(path.join(dir, 'out', '.staging')).then((pages) => {
        counting = false;
        if (pages >= 20) controller.abort(new Error('interrupted by the test'));
      });
    }, 20);
    const interrupted = await syncOnce(config, dir, { signal: controller.signal }).finally(() => clearInterval(watcher));
    expect(interrupted[0]!.status).toBe('stopped');

    // Changes after the interrupted range started: they are beyond its end.
    await sim.mutate(200);
    ageChangesPastSafetyLag(sim);
    const next = await syncOnce(config, dir);
    expect(next[0]!.status, next[0]!.error ?? '').toBe('ok');
    const truth = await collectTruth(sim, 'loads');
    const cmp = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length }).toEqual({ missing: 0, stale: 0, wrongOp: 0 });
  });
});
