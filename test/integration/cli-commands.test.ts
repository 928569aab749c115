import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { spawnSync } from 'node:child_process';
import { CLI_BIN, runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/** The CLI as a user runs it: real processes, real exit codes, a real simulator. */
let sim: SimulatorHandle;
let dir: string;
let configFile: string;
const env = () => ({ SIM_SECRET: sim.options.clientSecret });

beforeAll(async () => {
  sim = await startSim({ variant: 'main', loads: 600, customers: 40, consignees: 40, bills: 60, supportMoves: 40 });
  dir = tempDir('cli');
  configFile = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(
    configFile,
    stringify({
      api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: '${SIM_SECRET}' }, rateLimit: { requestsPerSecond: 500 } },
      state: { path: './state.sqlite' },
      log: { level: 'warn', pretty: false },
      sync: {
        defaults: { safetyLag: 'PT2S', initialFrom: sim.options.dataStart, maxWindow: 'P30D', minWindow: 'PT1S' },
        streams: {
          loads: { enabled: true, sinks: ['drop'] },
          customers: { enabled: true, sinks: ['drop'] },
          bills: { enabled: true, sinks: ['drop'] },
          chargeCodes: { enabled: true, sinks: ['drop'] },
        },
      },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
});
afterAll(async () => {
  await sim.close();
});

async function cli(args: string[], extraEnv: Record<string, string> = {}) {
  const run = runCli(args, { cwd: dir, env: { ...env(), ...extraEnv } });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('freight-sync CLI', () => {
  it('--help lists every command, and each command has its own --help (exit 0)', async () => {
    const root = await cli(['--help']);
    expect(root.code).toBe(0);
    const commands = ['run', 'sync', 'backfill', 'status', 'reset', 'validate-config', 'check', 'schema', 'simulate', 'demo'];
    for (const command of commands) expect(root.stdout).toContain(command);
    expect(root.stdout).toMatch(/Exit codes: 0 success, 1 the work failed, 2 bad usage or bad configuration/);
    for (const command of commands) {
      const help = await cli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`Usage: freight-sync ${command}`);
    }
  });

  it('a reader that closes the pipe early (| head) ends the CLI quietly, not with an EPIPE stack trace', () => {
    // The JSON Schema is larger than a pipe's buffer, so the writes after `head` exits meet a closed pipe.
    const result = spawnSync('sh', ['-c', `"${process.execPath}" "${CLI_BIN}" schema | head -c 100 >/dev/null`], { encoding: 'utf8', cwd: dir });
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled/);
  });

  it('bad usage exits 2', async () => {
    expect((await cli(['no-such-command'])).code).toBe(2);
    expect((await cli(['backfill', '--from', 'yesterday', '--to', '2026-01-01', '-c', configFile])).code).toBe(2);
    const reset = await cli(['reset', '--stream', 'lods', '--to', '2026-01-01', '-c', configFile]);
    expect(reset.code).toBe(2);
    expect(reset.stderr).toMatch(/unknown stream "lods"/);
  });

  it('backfill: --to defaults to now, --json prints the summary; an empty range says so and where the loads are', async () => {
    const open = await cli(['backfill', '--from', sim.options.dataStart, '--stream', 'bills', '--json', '-c', configFile]);
    expect(open.code, open.stderr).toBe(0);
    const summaries = JSON.parse(open.stdout) as Array<{ stream: string; status: string; delivered: number }>;
    expect(summaries).toEqual([expect.objectContaining({ stream: 'bills', status: 'ok', delivered: 60 })]);
    expect(open.stderr).toMatch(/--to now\); to resume after a stop, rerun with --to \d{4}-/);

    const empty = await cli(['backfill', '--from', '2001-01-01', '--to', '2001-02-01', '--stream', 'loads', '-c', configFile]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toMatch(/No records between 2001-01-01T00:00:00.000Z and 2001-02-01T00:00:00.000Z in any selected stream\. The account's loads have updatedAt from \d{4}-\S+ to \d{4}-\S+\./);
  });

  it('a broken config exits 2 and names the path of every problem', async () => {
    const broken = path.join(dir, 'broken.yaml');
    fs.writeFileSync(
      broken,
      stringify({
        api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: 'x', clientSecret: '${NOT_SET_ANYWHERE}' }, rateLimit: { requestsPerSecond: 'ten' } },
        sync: { defaults: { lookback: '1 day' }, streams: { loads: { enabled: true, sinks: ['drop'], lookbak: 'PT1M' } } },
        connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    const result = await cli(['sync', '-c', broken]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('api.auth.clientSecret: environment variable NOT_SET_ANYWHERE is not set');
    expect(result.stderr).toMatch(/api\.rateLimit\.requestsPerSecond: expected a number/);
    expect(result.stderr).toMatch(/sync\.defaults\.lookback: expected an ISO 8601 duration, got "1 day"/);
    expect(result.stderr).toMatch(/sync\.streams\.loads\.lookbak: unknown key \(did you mean "lookback"\?\)/);
  });

  it('a page size over the endpoint maximum is a config error naming the stream', async () => {
    const tooBig = path.join(dir, 'too-big.yaml');
    const text = fs.readFileSync(configFile, 'utf8').replace("safetyLag: PT2S", 'safetyLag: PT2S\n    pageSize: 100');
    fs.writeFileSync(tooBig, text);
    const result = await cli(['sync', '-c', tooBig]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/sync\.streams\.loads\.pageSize: 100 is over the maximum page size 50/);
  });

  it('sync prints a summary and exits 0; status shows the checkpoints; reset moves one', async () => {
    const sync = await cli(['sync', '-c', configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/loads\s+ok\s+600/);
    expect(sync.stdout).toMatch(/customers\s+ok\s+40/);
    expect(sync.stdout).toMatch(/chargeCodes\s+ok/);

    const status = await cli(['status', '--json', '-c', configFile]);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { clock: string; streams: Array<{ stream: string; checkpoint: string | null; recordsKnown: number; lastRun: { status: string } | null }> };
    expect(report.clock).toBe('server');
    const loads = report.streams.find((s) => s.stream === 'loads')!;
    expect(loads.recordsKnown).toBe(600);
    expect(loads.lastRun?.status).toBe('ok');
    // Webhooks off: the lookback covers late writes (lateWriteCover auto); reference data needs none.
    expect(loads).toMatchObject({ lateWriteCover: 'lookback' });
    expect(report.streams.find((s) => s.stream === 'chargeCodes')).toMatchObject({ lateWriteCover: null });
    expect(Date.parse(loads.checkpoint!)).toBeGreaterThan(Date.parse(sim.options.dataStart));

    const table = await cli(['status', '-c', configFile]);
    expect(table.stdout).toMatch(/loads\s+yes\s+\S+\s+idle\s+\S+\s+lookback\s/);

    const reset = await cli(['reset', '--stream', 'loads', '--to', '2020-01-01', '-c', configFile]);
    expect(reset.code, reset.stderr).toBe(0);
    const after = JSON.parse((await cli(['status', '--json', '--offline', '-c', configFile])).stdout) as typeof report;
    expect(after.streams.find((s) => s.stream === 'loads')!.checkpoint).toBe('2020-01-01T00:00:00.000Z');

    // The next sync re-reads from 2020 but delivers nothing unchanged.
    const again = await cli(['sync', '--stream', 'loads', '--json', '-c', configFile]);
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as Array<{ stream: string; delivered: number; unchanged: number }>;
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ stream: 'loads', delivered: 0, unchanged: 600 });
  });

  it('sync exits 1 when a stream fails (API unreachable) and still names it', async () => {
    const dead = path.join(dir, 'dead.yaml');
    fs.writeFileSync(
      dead,
      stringify({
        api: {
          variant: 'main',
          baseUrl: 'http://127.0.0.1:9/v1',
          auth: { clientId: 'x', clientSecret: 'y-secret' },
          retry: { maxAttempts: 2, baseDelay: 'PT0.01S', maxDelay: 'PT0.02S' },
        },
        state: { path: './dead.sqlite' },
        log: { level: 'silent' },
        sync: { streams: { loads: { enabled: true, sinks: ['drop'] } } },
        connectors: { drop: { type: 'csv', options: { directory: './out-dead' } } },
      }),
    );
    const result = await cli(['sync', '--stream', 'loads', '-c', dead]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/loads\s+failed/);
  });
});
