import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ReconcileReport } from '../../src/reconcile/report.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/** `freight-sync reconcile` as a user runs it: a real process against the simulator and a CSV drop. */
let sim: SimulatorHandle;
let dir: string;
let configFile: string;

beforeAll(async () => {
  sim = await startSim({ variant: 'main', loads: 200, bills: 40 });
  dir = tempDir('cli-reconcile');
  configFile = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(
    configFile,
    stringify({
      api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: '${SIM_SECRET}' }, rateLimit: { requestsPerSecond: 500 } },
      state: { path: './state.sqlite' },
      log: { level: 'warn', pretty: false },
      sync: {
        defaults: { safetyLag: 'PT2S', initialFrom: sim.options.dataStart, maxWindow: 'P30D', minWindow: 'PT1S' },
        streams: { loads: { enabled: true, sinks: ['drop'] }, bills: { enabled: true, sinks: ['drop'] } },
      },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
});
afterAll(async () => {
  await sim.close();
});

async function cli(args: string[]) {
  const run = runCli([...args, '-c', configFile], { cwd: dir, env: { SIM_SECRET: sim.options.clientSecret } });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('freight-sync reconcile (CLI)', () => {
  it('read-only by default, exit 1 naming a lost row, --repair re-delivers it, exit 0 when the sink matches', async () => {
    expect((await cli(['sync'])).code).toBe(0);
    const period = ['--from', sim.options.dataStart, '--max-requests', '60'];

    const clean = await cli(['reconcile', ...period, '--json', '--report', 'clean.csv']);
    expect(clean.code, clean.stderr).toBe(0);
    const report = JSON.parse(clean.stdout) as ReconcileReport;
    expect(report.results.map((r) => [r.stream, r.sink, r.differences.length, r.unchecked.length])).toEqual([
      ['loads', 'drop', 0, 0],
      ['bills', 'drop', 0, 0],
    ]);
    expect(report.requests).toBeLessThanOrEqual(60);
    const csv = parse(fs.readFileSync(path.join(dir, 'clean.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
    expect(csv.filter((r) => r.section === 'coverage').map((r) => r.kind)).toEqual(['complete', 'complete']);
    expect(csv.filter((r) => r.section === 'status' && r.stream === 'loads').every((r) => r.api_count === r.sink_count)).toBe(true);

    // The ERP team "cleans up" a load row in the drop.
    const out = path.join(dir, 'out');
    const file = fs.readdirSync(out).find((n) => /^\d{8}T\d{6}Z-\d{6}-loads\.csv$/.test(n))!;
    const lines = fs.readFileSync(path.join(out, file), 'utf8').split('\r\n');
    const lost = (parse(lines[1]!, { columns: lines[0]!.split(',') }) as Record<string, string>[])[0]!.record_key!;
    fs.writeFileSync(path.join(out, file), [lines[0], ...lines.slice(2)].join('\r\n'));

    const before = fs.readdirSync(out).sort();
    const found = await cli(['reconcile', ...period]);
    expect(found.code).toBe(1);
    expect(found.stdout).toMatch(new RegExp(`missing\\s+loads\\s+drop\\s+${lost}\\s+not in the sink`));
    // Read-only without --repair: the drop is exactly as it was.
    expect(fs.readdirSync(out).sort()).toEqual(before);

    const repaired = await cli(['reconcile', ...period, '--repair']);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    const after = await cli(['reconcile', ...period]);
    expect(after.code, after.stdout).toBe(0);
  });

  it('a stream reconcile cannot check, and a bad budget, are usage errors (exit 2)', async () => {
    const help = await cli(['reconcile', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--max-requests');
    const stream = await cli(['reconcile', '--stream', 'customers']);
    expect(stream.code).toBe(2);
    expect(stream.stderr).toMatch(/reconcile checks loads, invoices, bills/);
    expect((await cli(['reconcile', '--max-requests', '0'])).code).toBe(2);
  });
});
