import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli, type CliRun } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * `run` says when it is ready (issue 13): one log line, once every service is up, naming the
 * addresses it listens on (the real bound port), when the first pass runs and the streams.
 */
describe('freight-sync run: the ready line', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ variant: 'main', loads: 30, customers: 5 });
  });
  afterAll(async () => sim?.close());

  function start(name: string, args: string[]): CliRun {
    const dir = tempDir(`run-ready-${name}`);
    const file = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      file,
      stringify({
        api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: '${READY_TEST_SECRET}' }, rateLimit: { requestsPerSecond: 500 } },
        state: { path: './state.sqlite' },
        log: { level: 'info', pretty: false },
        http: { enabled: true, listen: '127.0.0.1:0' },
        sync: {
          defaults: { schedule: '*/5 * * * *', safetyLag: 'PT2S', initialFrom: sim.options.dataStart },
          streams: { loads: { sinks: ['drop'] }, customers: { sinks: ['drop'], schedule: '0 3 * * *' }, events: { sinks: ['drop'] } },
        },
        connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    return runCli(['run', '-c', file, ...args], { cwd: dir, env: { READY_TEST_SECRET: sim.options.clientSecret } });
  }

  async function readyLines(run: CliRun): Promise<string[]> {
    const deadline = Date.now() + 30_000;
    while (!/daemon running/.test(run.stderr()) && Date.now() < deadline && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    return run
      .stderr()
      .split('\n')
      .filter((line) => line.includes('daemon running'))
      .map((line) => (JSON.parse(line) as { msg: string; level: number }))
      .map((entry) => {
        expect(entry.level).toBe(30); // info
        return entry.msg;
      });
  }

  async function stop(run: CliRun): Promise<void> {
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(exit.code, run.stderr().slice(-2000)).toBe(0);
  }

  it('names the bound address, "first pass now" and every stream, once', async () => {
    const run = start('initial', []);
    try {
      const lines = await readyLines(run);
      expect(lines, run.stderr().slice(-2000)).toHaveLength(1);
      const line = lines[0]!;
      expect(line).toMatch(/^daemon running: 3 streams \(loads, customers, events \(webhook push\)\); first pass now; listening on http:\/\/127\.0\.0\.1:\d+ \(\/healthz \/readyz \/metrics\)$/);
      // The port in the line is the one actually bound (the config said 0).
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!;
      expect(url).not.toMatch(/:0$/);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await stop(run);
    }
  }, 60_000);

  it('with --no-initial-sync names the first cron tick', async () => {
    const run = start('no-initial', ['--no-initial-sync']);
    try {
      const [line] = await readyLines(run);
      const match = /first pass at (\S+) \(loads\);/.exec(line ?? '');
      expect(match, line).not.toBeNull();
      // `*/5 * * * *`: the next multiple of five minutes, UTC, within five minutes from now.
      const at = new Date(match![1]!);
      expect(at.getUTCMinutes() % 5).toBe(0);
      expect(at.getUTCSeconds()).toBe(0);
      expect(at.getTime() - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    } finally {
      await stop(run);
    }
  }, 60_000);
});
