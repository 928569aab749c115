import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

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
});
