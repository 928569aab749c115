import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function loadsDelivered(stateFile: string): number {
  if (!fs.existsSync(stateFile)) return 0;
  try {
    const db = new Database(stateFile, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare("select count(*) as n from seen_records where stream = 'loads'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

function writeConfig(dir: string, handle: SimulatorHandle): string {
  const file = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(
    file,
    stringify({
      api: { variant: 'main', baseUrl: handle.baseUrl, auth: { clientId: handle.options.clientId, clientSecret: handle.options.clientSecret }, rateLimit: { requestsPerSecond: 500 } },
      state: { path: './state.sqlite' },
      log: { level: 'info', pretty: false },
      http: { enabled: false },
      sync: { defaults: { schedule: '*/5 * * * *', safetyLag: 'PT2S', initialFrom: handle.options.dataStart }, streams: { loads: { enabled: true, sinks: ['drop'] } } },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
  return file;
}

/**
 * `run`: the first SIGTERM finishes the current batch, commits its checkpoint and exits 0 within
 * 10 s; a second SIGTERM aborts at once. Either way the next start continues where it stopped.
 */
describe('freight-sync run: shutdown', () => {
  it('first SIGTERM drains and exits 0 within 10 s; the checkpoint holds what was delivered', async () => {
    sim = await startSim({ variant: 'main', loads: 20_000, pageDelayMs: 40 });
    const dir = tempDir('run-sigterm');
    const config = writeConfig(dir, sim);
    const stateFile = path.join(dir, 'state.sqlite');
    const run = runCli(['run', '-c', config], { cwd: dir });
    const deadline = Date.now() + 60_000;
    while (loadsDelivered(stateFile) < 500 && Date.now() < deadline && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    expect(run.child.exitCode, run.stderr()).toBeNull();
    const signalledAt = Date.now();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    const tookMs = Date.now() - signalledAt;
    expect(exit.code, run.stderr().slice(-2000)).toBe(0);
    expect(tookMs).toBeLessThan(10_000);
    expect(run.stderr()).toMatch(/draining/);
    // The start-up log names the memory settings a process takes only at start, and how it got them.
    expect(run.stderr()).toMatch(/start-up settings: MALLOC_ARENA_MAX=\S+ MALLOC_MMAP_THRESHOLD_=\S+ MALLOC_TRIM_THRESHOLD_=\S+ --max-semi-space-size=\S+ (--no-maglev|maglev=on|maglev=not built in); (re-executed with them|not re-executed: .+|as started)"/);

    // Everything delivered before the stop is committed: a new run continues from there.
    const committed = loadsDelivered(stateFile);
    expect(committed).toBeGreaterThanOrEqual(500);
    expect(committed).toBeLessThan(20_000);
    const db = new Database(stateFile, { readonly: true });
    const lastRun = db.prepare("select status from runs where stream = 'loads' order by id desc limit 1").get() as { status: string };
    const cursor = JSON.parse((db.prepare("select cursor from checkpoints where stream = 'loads'").get() as { cursor: string }).cursor) as { window: unknown };
    db.close();
    expect(lastRun.status).toBe('aborted');
    expect(cursor.window).not.toBeNull();
  }, 90_000);

  it('a second SIGTERM aborts at once', async () => {
    sim = await startSim({ variant: 'main', loads: 20_000, pageDelayMs: 3000 });
    const dir = tempDir('run-sigterm-twice');
    const config = writeConfig(dir, sim);
    const run = runCli(['run', '-c', config], { cwd: dir });
    // Wait until the daemon is up and stuck in a slow request: one has reached the simulator,
    // which holds every answer for 3 s.
    const handle = sim;
    const deadline = Date.now() + 30_000;
    while (!(/daemon running/.test(run.stderr()) && handle.stats().requests > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(run.stderr()).toMatch(/daemon running/);
    expect(handle.stats().requests).toBeGreaterThan(0);
    const signalledAt = Date.now();
    run.child.kill('SIGTERM');
    // The second signal only once the first was handled (it logs "draining"): then "aborting" can
    // only come from the second one (the grace period is 8 s).
    while (!/draining/.test(run.stderr()) && Date.now() - signalledAt < 3000) await new Promise((r) => setTimeout(r, 20));
    expect(run.stderr()).toMatch(/draining/);
    run.child.kill('SIGTERM');
    await run.exited;
    expect(Date.now() - signalledAt).toBeLessThan(3000);
    expect(run.stderr()).toMatch(/aborting/);
  }, 60_000);
});
