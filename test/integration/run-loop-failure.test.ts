import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { killIfRunning, runCli, waitFor, type CliRun } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;
let run: CliRun | undefined;
afterEach(async () => {
  // Only when a failed assertion left it running: the process this test started, by its handle.
  await killIfRunning(run);
  run = undefined;
  await sim?.close();
  sim = undefined;
});

function writeConfig(dir: string, handle: SimulatorHandle): string {
  const file = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(
    file,
    stringify({
      api: {
        variant: handle.options.variant,
        baseUrl: handle.baseUrl,
        auth: { clientId: handle.options.clientId, clientSecret: handle.options.clientSecret },
        rateLimit: { requestsPerSecond: 500 },
      },
      state: { path: './state.sqlite' },
      log: { level: 'info', pretty: false },
      http: { enabled: false },
      // No pull during the test (no initial sync, a yearly schedule): the outbound side is alone.
      sync: { defaults: { schedule: '0 0 1 1 *', initialFrom: handle.options.dataStart }, streams: { loads: { enabled: true, sinks: ['drop'] } } },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      outbound: { enabled: true, sources: [], pollInterval: 'PT0.2S' },
      supervision: { maxConsecutiveFailures: 3, pause: 'PT0.01S', maxPause: 'PT0.05S' },
    }),
  );
  return file;
}

/**
 * The acceptance of the runner refactor, end to end: a service loop that keeps failing (here the
 * state table the dispatcher reads is gone) makes `freight-sync run` stop and exit 1 with the
 * service and the error named, instead of retrying in silence while the process looks alive.
 */
describe('freight-sync run: a dying service loop', () => {
  it('the outbox table disappears under a running daemon: run exits 1 naming the outbound service and the error', async () => {
    sim = await startSim({ variant: 'main', loads: 10 });
    const dir = tempDir('run-loop-failure');
    const config = writeConfig(dir, sim);
    const stateFile = path.join(dir, 'state.sqlite');
    const cli = runCli(['run', '-c', config, '--no-initial-sync'], { cwd: dir });
    run = cli;
    const exitedEarly = () => cli.child.exitCode !== null || cli.child.signalCode !== null;
    await waitFor(() => /daemon running/.test(cli.stderr()) || exitedEarly(), 30_000, '"daemon running" on stderr');
    expect(exitedEarly(), cli.stderr().slice(-2000)).toBe(false);
    expect(cli.stderr()).toMatch(/"service":"outbound".*service started/);

    // Break the state database under the daemon: the dispatcher's due query reads `outbox`.
    const db = new Database(stateFile, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 10000');
      db.pragma('foreign_keys = OFF');
      db.exec('DROP TABLE outbox');
    } finally {
      db.close();
    }

    const exit = await Promise.race([
      cli.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000).unref()),
    ]);
    expect(exit, cli.stderr().slice(-3000)).not.toBe('timeout');
    expect(exit).toEqual({ code: 1, signal: null });
    const stderr = cli.stderr();
    // The CLI's own last word names the service, the loop and the SQLite error.
    expect(stderr).toMatch(/^freight-sync: service outbound failed: outbound dispatcher stopped after 3 failures in a row: no such table: outbox$/m);
    // And the log says the account's work stopped because of it, then the daemon (the other
    // services were stopped first).
    expect(stderr).toMatch(/service outbound failed: stopping the work of account /);
    expect(stderr).toMatch(/"msg":"stopping the daemon"/);
  }, 90_000);
});
