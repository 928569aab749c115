import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reconcileApp } from '../../src/app/reconcile.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir, withPullApp } from '../helpers/pull-harness.js';

/**
 * What the `lookback` is for (README, Sync correctness: request cost of a pass): a write whose
 * updatedAt lands behind the checkpoint — visible only after the pass that covered its instant had
 * read past it (a long transaction, a lagging read replica). The simulator makes such a write with
 * `updateLoadLate`. Within the lookback the next pass reads it; with no lookback it is lost to
 * incremental passes; later than the lookback it is lost too — `reconcile` finds it and `--repair`
 * re-delivers it — which is why the lookback is sized to the lateness the API shows, and why it is
 * not traded for request count.
 */
let sim: SimulatorHandle | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const MIN = 60_000;

async function lateWriteAfterFirstPass(lookback: string, lateMs: number, variant: 'main' | 'brokerage' = 'main', safetyLagMs?: number) {
  sim = await startSim({ variant, loads: 300, seed: 41 });
  const dir = tempDir('late-write');
  dirs.push(dir);
  const config = pullConfig({ sim, dir, streams: ['loads'], streamSettings: { lookback, ...(safetyLagMs === undefined ? {} : { safetyLag: `PT${safetyLagMs / 1000}S` }) } });
  const first = await syncOnce(config, dir);
  expect(first[0]).toMatchObject({ status: 'ok' });
  const live = (await collectTruth(sim, 'loads')).filter((r) => r.isDeleted !== true);
  const ref = String(live[Math.floor(live.length / 2)]!.reference_number);
  // The first pass read up to (server now − safety lag); this write's updatedAt is `lateMs` before now.
  const written = sim.updateLoadLate(ref, { driverNote: `entered ${lateMs} ms late` }, lateMs);
  ageChangesPastSafetyLag(sim, safetyLagMs);
  const second = await syncOnce(config, dir);
  expect(second[0]).toMatchObject({ status: 'ok' });
  const truth = await collectTruth(sim, 'loads');
  const comparison = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
  return { ref, written, comparison, delivered: second[0]!.delivered, config, dir };
}

describe('lookback: writes that become visible late', () => {
  it('the next pass reads a write whose updatedAt is behind the checkpoint by less than the lookback', async () => {
    const { comparison, delivered } = await lateWriteAfterFirstPass('PT2M', 1 * MIN);
    expect(comparison).toMatchObject({ missing: [], stale: [], phantom: [] });
    expect(delivered).toBe(1);
  });

  it('brokerage (day-granular filters): the next pass reads it too', async () => {
    const { ref, written, comparison, delivered } = await lateWriteAfterFirstPass('PT2M', 1 * MIN, 'brokerage');
    expect(Date.parse(String(written.updatedAt))).toBeLessThan(sim!.now().getTime() - 30_000);
    expect(comparison.stale).not.toContain(ref);
    expect(comparison).toMatchObject({ missing: [], stale: [], phantom: [] });
    expect(delivered).toBeGreaterThanOrEqual(1);
  });

  it('without a lookback the same write is never read by an incremental pass (what the lookback prevents)', async () => {
    const { ref, comparison, delivered } = await lateWriteAfterFirstPass('PT0S', 1 * MIN);
    expect(comparison.stale).toEqual([ref]);
    expect(delivered).toBe(0);
  });

  it('a safety lag as long as the lateness catches the write with no lookback: each record read once, delivered that much later', async () => {
    // The first pass read up to (now − 2 min): a write stamped 1 min before now lies after its
    // checkpoint, so the next pass (once it is 2 min old) reads it — with no second read of anything.
    // (It also delivers the records changed in the 2 minutes before the first pass: the lag held them back.)
    const { comparison } = await lateWriteAfterFirstPass('PT0S', 1 * MIN, 'main', 2 * MIN);
    expect(comparison).toMatchObject({ missing: [], stale: [], phantom: [] });
  });

  it('a write later than the lookback is missed as well (size the lookback to the lateness the API shows); reconcile finds it and --repair fixes it', async () => {
    const { ref, written, comparison, config, dir } = await lateWriteAfterFirstPass('PT2M', 3 * MIN);
    expect(Date.parse(String(written.updatedAt))).toBeLessThan(sim!.now().getTime() - 2 * MIN);
    expect(comparison.stale).toEqual([ref]);
    const report = await withPullApp(config, dir, (app) => reconcileApp(app, { streams: ['loads'], days: 1, repair: true, signal: new AbortController().signal }));
    expect(report.results.flatMap((r) => r.differences.map((d) => `${d.kind} ${d.key}`))).toEqual([`stale ${ref}`]);
    const truth = await collectTruth(sim!, 'loads');
    expect(compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number))).toMatchObject({ missing: [], stale: [], phantom: [] });
  });
});
