import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPass } from '../../src/app/sync-pass.js';
import { collectStatus } from '../../src/app/stream-status.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { startDaemon } from '../helpers/daemon-harness.js';
import { csvKey, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { loadsByErpKey, outboundConfig, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { ageChangesPastSafetyLag, latestByKey, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';

async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('outbound inside `run`, and echo marking on the pull side', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ loads: 100, customers: 10, consignees: 5, ambiguousCreateRate: 0.2 });
  });
  afterAll(async () => sim.close());

  it('polls the inbox, dispatches, writes back, stops cleanly; pulled loads carry the echo mark', async () => {
    const dir = tempDir('outbound-daemon');
    const config = outboundConfig({
      sim,
      dir,
      connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } } },
      outbound: { sources: ['erp_inbox'], pollInterval: 'PT0.2S' },
    });
    await syncDirectory(config, dir);
    const daemon = await startDaemon(config, dir);
    writeCreatesCsv(path.join(dir, 'inbox', 'orders.csv'), 50);
    const resultFile = path.join(dir, 'inbox', 'processed', 'orders.csv.result.csv');
    await waitFor(() => fs.existsSync(resultFile), 30_000);
    await daemon.stop();

    const truth = await loadsByErpKey(sim, Array.from({ length: 50 }, (_, i) => csvKey(i + 1)));
    expect(truth.size).toBe(50);
    expect([...truth.values()].every((loads) => loads.length === 1)).toBe(true);

    // Pull the loads: the ones this daemon created carry origin_outbox_id / origin_erp_key.
    // The pull window ends at the server clock minus the safety lag (2 s in the test config): move
    // the server clock past it instead of sleeping, so the loads just created are in the window.
    ageChangesPastSafetyLag(sim);
    await withApp(config, dir, async (app) => {
      await runPass({ ...app, streams: app.streams.filter((s) => s.definition.name === 'loads') }, { command: 'sync', signal: new AbortController().signal });
      const status = await collectStatus(app);
      expect(status.outbound.counts).toEqual({ done: 50 + 5 + 2 });
      expect(status.outbound.deadLetters).toEqual([]);
    });
    const rows = latestByKey(readCsvRows(path.join(dir, 'out'), 'loads'));
    const marked = [...rows.values()].filter((r) => String(r['origin_erp_key'] ?? '').startsWith('CSV-'));
    expect(marked.length).toBeGreaterThan(0);
    for (const row of marked) {
      const key = String(row['origin_erp_key']);
      expect(row['reference_number']).toBe(truth.get(key)![0]!['reference_number']);
      expect(Number(row['origin_outbox_id'])).toBeGreaterThan(0);
    }
    // Loads nobody pushed carry no mark.
    expect([...rows.values()].some((r) => !r['origin_erp_key'])).toBe(true);
  });
});
