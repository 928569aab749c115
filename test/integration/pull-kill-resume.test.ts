import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { collectTruth, compareWithTruth, latestByKey, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function backfillProgress(stateFile: string): number {
  if (!fs.existsSync(stateFile)) return 0;
  try {
    const db = new Database(stateFile, { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare("select count(*) as n from seen_records where stream = 'loads'").get() as { n: number } | undefined;
      return row?.n ?? 0;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/**
 * `kill -9` during a backfill, then the same command again: the result equals an uninterrupted
 * run (the server's truth), and the rerun continues instead of starting over — on brokerage from
 * inside the day window it was reading (offset and anchor in the checkpoint).
 */
describe('backfill killed with SIGKILL, then rerun', () => {
  it.each(['main', 'brokerage'] as const)('%s: resumes and ends equal to the truth', async (variant) => {
    const LOADS = 12_000;
    sim = await startSim({ variant, loads: LOADS, seed: 21, pageDelayMs: 5 });
    const dir = tempDir('kill-resume');
    const stateFile = path.join(dir, 'state.sqlite');
    const configFile = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      configFile,
      stringify({
        api: {
          variant,
          baseUrl: sim.baseUrl,
          auth: { clientId: '${SIM_CLIENT_ID}', clientSecret: '${SIM_CLIENT_SECRET}' },
          rateLimit: { requestsPerSecond: 500, maxInFlight: 2 },
        },
        state: { path: stateFile },
        log: { level: 'warn', pretty: false },
        sync: { defaults: { safetyLag: 'PT2S', initialFrom: sim.options.dataStart }, streams: { loads: { enabled: true, sinks: ['drop'] } } },
        connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    const env = { SIM_CLIENT_ID: sim.options.clientId, SIM_CLIENT_SECRET: sim.options.clientSecret };
    const from = sim.options.dataStart;
    const to = new Date(sim.now().getTime() - 5000).toISOString();
    const args = ['backfill', '--from', from, '--to', to, '-c', configFile];

    let kills = 0;
    for (const threshold of [2000, 6000]) {
      const run = runCli(args, { env });
      const deadline = Date.now() + 60_000;
      while (backfillProgress(stateFile) < threshold && Date.now() < deadline) {
        if (run.child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        kills += 1;
      }
      const exit = await run.exited;
      expect(exit.signal ?? 'exited', run.stderr()).toBe('SIGKILL');
    }
    expect(kills).toBe(2);
    const progressBeforeRerun = backfillProgress(stateFile);
    expect(progressBeforeRerun).toBeGreaterThanOrEqual(6000);
    expect(progressBeforeRerun).toBeLessThan(LOADS);

    const final = runCli(args, { env });
    const exit = await final.exited;
    expect(exit.code, final.stderr()).toBe(0);
    expect(final.stdout()).toMatch(/loads\s+ok/);

    const truth = await collectTruth(sim, 'loads');
    const rows = readCsvRows(path.join(dir, 'out'), 'loads');
    const cmp = compareWithTruth(truth, latestByKey(rows), (r) => String(r.reference_number));
    expect({ missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length, phantom: cmp.phantom.length }).toEqual({
      missing: 0,
      stale: 0,
      wrongOp: 0,
      phantom: 0,
    });
    // Resumed, not restarted: at most the killed batches were written twice.
    expect(rows.length).toBeLessThanOrEqual(LOADS + 2 * 50);
  }, 180_000);
});
