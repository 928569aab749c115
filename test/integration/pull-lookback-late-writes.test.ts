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

describe('lateWriteCover: lag — the lookback moved into the safety lag', () => {
  async function setUp(cover: 'lag' | 'lookback') {
    sim = await startSim({ variant: 'main', loads: 300, seed: 43 });
    const dir = tempDir('late-cover');
    dirs.push(dir);
    const live = (await collectTruth(sim, 'loads')).filter((r) => r.isDeleted !== true);
    const refs = live.map((r) => String(r.reference_number));
    const config = (lateWriteCover: 'lag' | 'lookback') => pullConfig({ sim: sim!, dir, streams: ['loads'], streamSettings: { lookback: 'PT2M', lateWriteCover } });
    return { dir, refs, config, first: await syncOnce(config(cover), dir) };
  }
  const truthMatches = async (dir: string) =>
    compareWithTruth(await collectTruth(sim!, 'loads'), latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));

  it('catches a write up to the lookback late and reads each change once, where the lookback reads it again', async () => {
    const reads: Record<string, { unchanged: number; delivered: number }> = {};
    for (const cover of ['lookback', 'lag'] as const) {
      const { dir, refs, config } = await setUp(cover);
      // Twenty plain changes, a minute apart in two groups of ten. The lookback delivers both in
      // the next pass; the lag holds the later group back for the pass after (and delivers the
      // records of the first pass's last 2 minutes, which it held back then).
      for (const ref of refs.slice(0, 10)) sim!.updateLoadLate(ref, { driverNote: `changed under ${cover}` }, 0);
      sim!.advance(61_000);
      for (const ref of refs.slice(10, 20)) sim!.updateLoadLate(ref, { driverNote: `changed under ${cover}` }, 0);
      sim!.advance(62_000);
      expect((await syncOnce(config(cover), dir))[0]!.status).toBe('ok');
      // …and a write stamped 1 min before now, behind the lookback-mode checkpoint.
      const lateRef = refs[150]!;
      sim!.updateLoadLate(lateRef, { driverNote: `entered late under ${cover}` }, 1 * MIN);
      sim!.advance(2 * MIN + 3_000);
      const third = (await syncOnce(config(cover), dir))[0]!;
      expect(third.status).toBe('ok');
      expect(await truthMatches(dir)).toMatchObject({ missing: [], stale: [], phantom: [] });
      reads[cover] = { unchanged: third.unchanged, delivered: third.delivered };
      await sim!.close();
      sim = undefined;
    }
    // The lookback read the later ten changes a second time (dropped by content hash); the lag
    // read them once, in this pass, with the late write.
    expect(reads.lookback).toEqual({ unchanged: 10, delivered: 1 });
    expect(reads.lag).toEqual({ unchanged: 0, delivered: 11 });
  });

  it('switching from the lookback to the lag re-reads the old lookback once: a late write behind the old checkpoint is not lost', async () => {
    const { dir, refs, config } = await setUp('lookback');
    // The lookback-mode pass read up to now − 2 s. A write stamped 30 s behind that checkpoint
    // becomes visible after it; the setting changes to the lag before the next pass.
    sim!.advance(30_000);
    const lateRef = refs[100]!;
    sim!.updateLoadLate(lateRef, { driverNote: 'behind the old checkpoint' }, 30_000 + 30_000 + 2_000);
    sim!.advance(2 * MIN + 3_000);
    // The first lag-mode range ends past the old checkpoint: it must start a lookback before it
    // (a range starting at the checkpoint, as a lag-reached one may, would miss the write).
    const second = (await syncOnce(config('lag'), dir))[0]!;
    expect(second.status).toBe('ok');
    expect(await truthMatches(dir)).toMatchObject({ missing: [], stale: [], phantom: [] });
    expect(second.delivered).toBe(1);
    // From then on each range starts at the checkpoint: the same late write is not read again.
    sim!.advance(2 * MIN + 3_000);
    expect((await syncOnce(config('lag'), dir))[0]).toMatchObject({ status: 'ok', delivered: 0, unchanged: 0 });
  });

  it('every windowing strategy records the cover and keeps it through a range: keyset, closed and day windows', async () => {
    const covers = async (variant: 'main' | 'brokerage', streams: string[]) => {
      sim = await startSim({ variant, loads: 200, seed: 44 });
      const dir = tempDir('late-cover-kinds');
      dirs.push(dir);
      const config = pullConfig({ sim, dir, streams, streamSettings: { lookback: 'PT2M', lateWriteCover: 'lag' } });
      const marks: Array<Record<string, unknown>> = [];
      for (let pass = 0; pass < 2; pass++) {
        for (const summary of await syncOnce(config, dir)) expect(summary.status, summary.stream).toBe('ok');
        const entries = await withPullApp(config, dir, (app) => app.stores.checkpoints.list());
        marks.push(Object.fromEntries(entries.filter((e) => streams.includes(e.stream)).map((e) => [e.stream, (e.cursor as { lagCover?: boolean }).lagCover])));
        sim.advance(3 * MIN);
      }
      await sim.close();
      sim = undefined;
      return marks;
    };
    const every = (streams: string[], mark: true | undefined) => Object.fromEntries(streams.map((s) => [s, mark]));
    // A first run reads up to the safety lag alone and records no cover; the next, 3 minutes later,
    // ends past that checkpoint (re-reading its lookback) and records it.
    // loads: keyset on main, day windows on brokerage; bills and support moves: closed windows.
    const main = ['loads', 'bills', 'supportMoves'];
    expect(await covers('main', main)).toEqual([every(main, undefined), every(main, true)]);
    expect(await covers('brokerage', ['loads'])).toEqual([every(['loads'], undefined), every(['loads'], true)]);
  });
});
