import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { hasEnded, killIfRunning, runCli, waitFor, type CliRun } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;
const daemons: CliRun[] = [];
afterEach(async () => {
  // Only the processes this test started, by their handles, when an assertion left them running.
  for (const run of daemons.splice(0)) await killIfRunning(run);
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
      },
      state: { path: './state.sqlite' },
      log: { level: 'info', pretty: false },
      http: { enabled: false },
      // No pull while the test runs: the daemon only owns the state.
      sync: { defaults: { schedule: '0 0 1 1 *', initialFrom: handle.options.dataStart }, streams: { loads: { enabled: true, sinks: ['drop'] } } },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
  return file;
}

async function startRun(config: string, dir: string): Promise<CliRun> {
  const run = runCli(['run', '-c', config, '--no-initial-sync'], { cwd: dir });
  daemons.push(run);
  await waitFor(() => /daemon running/.test(run.stderr()) || hasEnded(run), 30_000, '"daemon running" on stderr');
  expect(hasEnded(run), run.stderr().slice(-2000)).toBe(false);
  return run;
}

async function cli(args: string[], dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = runCli(args, { cwd: dir });
  const { code } = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('reset while a daemon owns the state store', () => {
  it('refuses naming host, pid and start; a SIGKILLed daemon does not block it; --force overrides; a second run refuses', async () => {
    sim = await startSim({ loads: 5 });
    const dir = tempDir('reset-owner');
    const config = writeConfig(dir, sim);
    const reset = ['reset', '-c', config, '--stream', 'loads', '--to', '2025-01-01'];

    const first = await startRun(config, dir);
    const refused = await cli(reset, dir);
    console.log('REFUSED', refused.stderr);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`a freight-sync daemon owns ${path.join(dir, 'state.sqlite')} (host ${os.hostname()}, pid ${first.child.pid}, running since 20`);
    expect(refused.stderr).toContain('or pass --force');
    expect(refused.stdout).not.toContain('next run starts');

    // Killed without a chance to release: the pid is gone, so reset goes ahead at once.
    first.child.kill('SIGKILL');
    await first.exited;
    const afterKill = await cli(reset, dir);
    expect(afterKill.code, afterKill.stderr).toBe(0);
    expect(afterKill.stdout).toContain('loads: next run starts at 2025-01-01T00:00:00.000Z');

    const second = await startRun(config, dir);
    const another = runCli(['run', '-c', config, '--no-initial-sync'], { cwd: dir });
    daemons.push(another);
    const anotherExit = await another.exited;
    console.log('ANOTHER', anotherExit, another.stderr());
    expect(anotherExit.code, another.stderr()).not.toBe(0);
    expect(another.stderr()).toContain(`pid ${second.child.pid}`);

    const forced = await cli([...reset, '--force'], dir);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('loads: next run starts at');

    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
