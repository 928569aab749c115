import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPass } from '../../src/app/sync-pass.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, tempDir, withPullApp } from '../helpers/pull-harness.js';

/**
 * Keyset paging asks for the next page from the bytes of the one being parsed (page-speculation.ts),
 * through the real API client and HTTP against the simulator: every guess is used, no request is
 * made that paging without it would not make, and the CSV equals the server's loads, also while
 * the mutator changes loads during the backfill.
 */
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const listRequests = (handle: SimulatorHandle): number => Object.values(handle.stats().byRoute['GET /loads'] ?? {}).reduce((n, c) => n + c, 0);

function askedAhead(lines: string[]): { used: number; wasted: number } {
  const line = lines.map((l) => JSON.parse(l) as { msg?: string; stream?: string; used?: number; wasted?: number }).find((l) => l.msg === 'keyset pages asked for ahead' && l.stream === 'loads');
  return { used: line?.used ?? 0, wasted: line?.wasted ?? 0 };
}

describe('keyset: the next page is asked for while a page is parsed', () => {
  it('a backfill uses every page asked for ahead and makes exactly the requests it delivers pages for', async () => {
    sim = await startSim({ variant: 'main', loads: 1500, seed: 11, pageDelayMs: 5 });
    const dir = tempDir('ask-ahead');
    const capture = capturingLogger('debug');
    const summaries = await withPullApp(
      pullConfig({ sim, dir, streams: ['loads'] }),
      dir,
      (app) => runPass(app, { command: 'sync', signal: new AbortController().signal }),
      capture.logger,
    );
    const loads = summaries.find((s) => s.stream === 'loads')!;
    expect(loads).toMatchObject({ status: 'ok' });
    const truth = await collectTruth(sim, 'loads');
    expect(compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number))).toMatchObject({ missing: [], stale: [], phantom: [] });
    const { used, wasted } = askedAhead(capture.lines);
    // 1,500 loads are 30 full pages and a short one: each full page's answer (but the pages whose
    // answer was in before the reader asked for them) started the next request.
    expect(used).toBeGreaterThanOrEqual(10);
    expect(wasted).toBe(0);
    expect(listRequests(sim)).toBe(loads.pages);
  });

  it('loses nothing while the mutator updates loads during the backfill (guesses that no longer hold are dropped)', async () => {
    sim = await startSim({ variant: 'main', loads: 3000, seed: 12, pageDelayMs: 2 });
    const dir = tempDir('ask-ahead-mutating');
    const capture = capturingLogger('debug');
    const stepping = setInterval(() => sim?.mutate(25), 5);
    let summaries;
    try {
      summaries = await withPullApp(
        pullConfig({ sim, dir, streams: ['loads'] }),
        dir,
        (app) => runPass(app, { command: 'sync', signal: new AbortController().signal }),
        capture.logger,
      );
    } finally {
      clearInterval(stepping);
    }
    expect(summaries.find((s) => s.stream === 'loads')).toMatchObject({ status: 'ok' });
    expect(askedAhead(capture.lines).used).toBeGreaterThan(0);
    // Requests asked for ahead in vain are counted in the pass's pages too.
    expect(listRequests(sim)).toBe(summaries.find((s) => s.stream === 'loads')!.pages);
    ageChangesPastSafetyLag(sim);
    // What changed after the range's end is read by the next pass; after it, the CSV equals the server.
    const after = await withPullApp(pullConfig({ sim, dir, streams: ['loads'] }), dir, (app) => runPass(app, { command: 'sync', signal: new AbortController().signal }));
    expect(after.find((s) => s.stream === 'loads')).toMatchObject({ status: 'ok' });
    const truth = await collectTruth(sim, 'loads');
    expect(compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number))).toMatchObject({ missing: [], stale: [], phantom: [] });
  });
});
